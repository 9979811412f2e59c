/* test_tiles.c: tiles on the CPU, bit for bit against plain-C references of
 * the documented orders (docs/language.md, "Tiles").
 *
 * Reductions: the pairwise tree over [0, 2^K) (a node whose right half is
 * absent is its left half). Scans: element i's exclusive prefix is the
 * left-to-right fold of the tree nodes of the aligned blocks that the binary
 * digits of i name, largest first; inclusive = that op x[i]. The references
 * below compute each block's node by the tree itself (recursively, not by the
 * emitter's levels), with an order-sensitive combine (a * 0.5 + b) and float
 * inputs whose sums depend on the order, for sizes 1, 7, 256, 300 and 1000,
 * and along both axes of a 2-D tile. Also: the tile fixtures of
 * tests/kern/run on the CPU, tile_sort against a stable sort in IEEE total
 * order (ties, signed zeros, infinities, NaNs; sizes not powers of two), and the
 * shared-memory limit a GPU compile applies (checked with no GPU through the
 * kernel's tile size).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"
#include "kern.h"

static float lin(float a, float b) { return a * 0.5f + b; }
static float add(float a, float b) { return a + b; }

/* The tree over x[0..n): bottom-up, as the language documents it. */
static float tree(const float *x, int n, float (*op)(float, float)) {
  float *v = malloc(sizeof(float) * (size_t)n);
  memcpy(v, x, sizeof(float) * (size_t)n);
  for (int s = 1; s < n; s *= 2)
    for (int i = 0; i + s < n; i += 2 * s) v[i] = op(v[i], v[i + s]);
  float r = v[0];
  free(v);
  return r;
}

/* The scan order: blocks of the binary digits of i, largest first. */
static void scan_ref(const float *x, int n, float (*op)(float, float), bool inclusive,
                     const float *init, float *out) {
  for (int i = 0; i < n; i++) {
    bool have = init != NULL;
    float acc = init ? *init : 0.0f;
    int start = 0;
    for (int j = 30; j >= 0; j--)
      if (i >> j & 1) {
        float node = tree(x + start, 1 << j, op);
        acc = have ? op(acc, node) : node;
        have = true;
        start += 1 << j;
      }
    if (inclusive)
      out[i] = have ? op(acc, x[i]) : x[i];
    else
      out[i] = have ? acc : 0.0f;
  }
}

static int arg_ref(const float *x, int n, bool less) {
  float *v = malloc(sizeof(float) * (size_t)n);
  int *ix = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) v[i] = x[i], ix[i] = i;
  for (int s = 1; s < n; s *= 2)
    for (int i = 0; i + s < n; i += 2 * s)
      if (less ? v[i + s] < v[i] : v[i + s] > v[i]) v[i] = v[i + s], ix[i] = ix[i + s];
  int r = ix[0];
  free(v);
  free(ix);
  return r;
}

static float input(int i) {
  static const float scale[4] = {0.001f, 0.37f, 13.1f, 1009.0f};
  return (float)((i * 7919) % 1013 - 506) * scale[i % 4] + 0.1f;
}

static kern_array *array_of(kern_device *d, kern_dtype t, int64_t n, const void *data) {
  kern_array *a = kern_array_new(d, t, 1, &n);
  cr_assert(a, "%s", kern_last_error());
  if (data) cr_assert_eq(kern_array_write(a, data, (size_t)n * 4), KERN_OK);
  return a;
}

static const char *const reduce_src =
    "float lin(float a, float b) { return a * 0.5f + b; }\n"
    "kernel void r(float[] x, float[] sc, int[] ix, float[] inc, float[] exc, float[] finc,\n"
    "              float[] fexc) {\n"
    "  tile<float, N> t = tile_load<N>(x, 0);\n"
    "  sc[0] = tile_sum(t);\n"
    "  sc[1] = tile_min(t);\n"
    "  sc[2] = tile_max(t);\n"
    "  sc[3] = tile_reduce(lin, t);\n"
    "  ix[0] = tile_argmin(t);\n"
    "  ix[1] = tile_argmax(t);\n"
    "  tile_store(inc, 0, tile_scan_inclusive(t));\n"
    "  tile_store(exc, 0, tile_scan_exclusive(t));\n"
    "  tile_store(finc, 0, tile_scan_inclusive(lin, t));\n"
    "  tile_store(fexc, 0, tile_scan_exclusive(lin, t, 0.25f));\n"
    "}\n";

static void expect_bits(const float *got, const float *want, int n, const char *what, int size) {
  for (int i = 0; i < n; i++)
    if (memcmp(&got[i], &want[i], 4)) {
      cr_expect(false, "n=%d %s[%d]: got %.9g, the documented order gives %.9g", size, what, i,
                (double)got[i], (double)want[i]);
      return;
    }
}

static void check_size(int n) {
  char src[2048];
  const char *p = strstr(reduce_src, "tile<float, N>");
  snprintf(src, sizeof src, "const int N = %d;\n%s", n, reduce_src);
  (void)p;
  kern_module *m = kern_module_from_source("tiles_reduce", src);
  cr_assert(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "r");
  cr_assert(k && kern_kernel_is_tiled(k));
  kern_device *cpu = kern_device_get("cpu");
  float *x = malloc(4 * (size_t)n), *want = malloc(4 * (size_t)n), *got = malloc(4 * (size_t)n);
  for (int i = 0; i < n; i++) x[i] = input(i);
  kern_array *ax = array_of(cpu, KERN_FLOAT32, n, x), *sc = array_of(cpu, KERN_FLOAT32, 4, NULL),
             *ix = array_of(cpu, KERN_INT32, 2, NULL);
  kern_array *out[4];
  for (int i = 0; i < 4; i++) out[i] = array_of(cpu, KERN_FLOAT32, n, NULL);
  kern_arg args[7] = {kern_arg_array(ax),     kern_arg_array(sc),     kern_arg_array(ix),
                      kern_arg_array(out[0]), kern_arg_array(out[1]), kern_arg_array(out[2]),
                      kern_arg_array(out[3])};
  kern_dims one = {.ndim = 1, .shape = {1}};
  cr_assert_eq(kern_launch(k, cpu, one, 7, args), KERN_OK, "%s", kern_last_error());
  float s[4], sw[4] = {tree(x, n, add), x[0], x[0], tree(x, n, lin)};
  for (int i = 1; i < n; i++) sw[1] = fminf(sw[1], x[i]), sw[2] = fmaxf(sw[2], x[i]);
  int is[2];
  cr_assert_eq(kern_array_read(sc, s, sizeof s), KERN_OK);
  cr_assert_eq(kern_array_read(ix, is, sizeof is), KERN_OK);
  expect_bits(s, sw, 4, "sum, min, max, reduce(lin)", n);
  cr_expect_eq(is[0], arg_ref(x, n, true), "n=%d argmin", n);
  cr_expect_eq(is[1], arg_ref(x, n, false), "n=%d argmax", n);
  const float init = 0.25f;
  for (int v = 0; v < 4; v++) {
    cr_assert_eq(kern_array_read(out[v], got, 4 * (size_t)n), KERN_OK);
    scan_ref(x, n, v < 2 ? add : lin, v % 2 == 0, v == 3 ? &init : NULL, want);
    static const char *const names[4] = {"scan_inclusive", "scan_exclusive", "scan_inclusive(lin)",
                                         "scan_exclusive(lin, 0.25)"};
    expect_bits(got, want, n, names[v], n);
  }
  if (n > 2) {
    float plain = 0;
    for (int i = 0; i < n; i++) plain += x[i];
    cr_log_info("n=%d: tree sum %.9g, left-to-right %.9g", n, (double)sw[0], (double)plain);
  }
  for (int i = 0; i < 4; i++) kern_array_free(out[i]);
  kern_array_free(ax);
  kern_array_free(sc);
  kern_array_free(ix);
  kern_module_free(m);
  free(x);
  free(want);
  free(got);
}

Test(tiles, reductions_and_scans_follow_the_documented_order, .timeout = TH_TIMEOUT(300)) {
  cr_assert_eq(kern_init(), KERN_OK);
  static const int sizes[] = {1, 7, 256, 300, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) check_size(sizes[i]);
}

/* The order matters for these inputs: a test that summed left to right would fail. */
Test(tiles, the_inputs_tell_the_orders_apart) {
  float x[300];
  for (int i = 0; i < 300; i++) x[i] = input(i);
  float plain = 0;
  for (int i = 0; i < 300; i++) plain += x[i];
  cr_expect_neq(plain, tree(x, 300, add));
  cr_expect_neq(tree(x, 300, lin), tree(x, 256, lin));
}

Test(tiles, axis_reductions_follow_the_tree_along_the_axis, .timeout = TH_TIMEOUT(120)) {
  cr_assert_eq(kern_init(), KERN_OK);
  const char *src = "float lin(float a, float b) { return a * 0.5f + b; }\n"
                    "kernel void ax(float[,] x, float[] r0, float[] r1) {\n"
                    "  tile<float, 5, 300> t = tile_load<5, 300>(x, 0, 0);\n"
                    "  tile_store(r0, 0, tile_sum(t, 0));\n"
                    "  tile_store(r1, 0, tile_reduce(lin, t, 1));\n"
                    "}\n";
  kern_module *m = kern_module_from_source("tiles_axis", src);
  cr_assert(m, "%s", kern_last_error());
  kern_device *cpu = kern_device_get("cpu");
  static float x[5 * 300], r0[300], r1[5], w0[300], w1[5], col[5];
  for (int i = 0; i < 5 * 300; i++) x[i] = input(i);
  int64_t shape[2] = {5, 300};
  kern_array *ax = kern_array_new(cpu, KERN_FLOAT32, 2, shape);
  cr_assert_eq(kern_array_write(ax, x, sizeof x), KERN_OK);
  kern_array *a0 = array_of(cpu, KERN_FLOAT32, 300, NULL),
             *a1 = array_of(cpu, KERN_FLOAT32, 5, NULL);
  kern_arg args[3] = {kern_arg_array(ax), kern_arg_array(a0), kern_arg_array(a1)};
  kern_dims one = {.ndim = 1, .shape = {1}};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "ax"), cpu, one, 3, args), KERN_OK, "%s",
               kern_last_error());
  cr_assert_eq(kern_array_read(a0, r0, sizeof r0), KERN_OK);
  cr_assert_eq(kern_array_read(a1, r1, sizeof r1), KERN_OK);
  for (int c = 0; c < 300; c++) {
    for (int r = 0; r < 5; r++) col[r] = x[r * 300 + c];
    w0[c] = tree(col, 5, add);
  }
  for (int r = 0; r < 5; r++) w1[r] = tree(x + r * 300, 300, lin);
  expect_bits(r0, w0, 300, "sum along axis 0", 5);
  expect_bits(r1, w1, 5, "reduce(lin) along axis 1", 300);
  kern_array_free(ax);
  kern_array_free(a0);
  kern_array_free(a1);
  kern_module_free(m);
}

Test(tiles, fixtures_on_cpu, .timeout = TH_TIMEOUT(300)) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *cpu = kern_device_get("cpu");
  char **files;
  int n = th_list(KERN_TESTS_DIR "/kern/run", ".kern", &files), ran = 0;
  for (int i = 0; i < n; i++) {
    if (strstr(files[i], "/tiles_")) {
      long double *res[FX_MAX_ARGS] = {0};
      char *report = fx_run_report(files[i], cpu, res);
      cr_expect(report == NULL, "%s", report ? report : "");
      for (int j = 0; j < FX_MAX_ARGS; j++) free(res[j]);
      free(report);
      ran++;
    }
    free(files[i]);
  }
  free(files);
  cr_expect_geq(ran, 3, "the tile fixtures are missing");
}

/* ---- tile_sort: the stable sort in IEEE total order ------------------------------------------- */

static const char sort_src[] = "const int N = %d;\n"
                               "kernel void s(float[] k, int[] v) {\n"
                               "  tile<float, N> t = tile_load<N>(k, 0);\n"
                               "  tile<int, N> i = tile_arange<int, N>();\n"
                               "  tile_sort(t, i);\n"
                               "  tile_store(k, 0, t);\n"
                               "  tile_store(v, 0, i);\n"
                               "}\n";

static uint32_t total_key(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u >> 31 ? ~u : u | 0x80000000u;
}

static const float *sort_keys;

static int by_key_then_place(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  uint32_t x = total_key(sort_keys[i]), y = total_key(sort_keys[j]);
  return x < y ? -1 : x > y ? 1 : i - j;
}

/* Keys from a few values (so many ties), zeros of both signs, infinities and NaNs. */
static float sort_key(int i) {
  static const uint32_t specials[] = {0x80000000u, 0x00000000u, 0x7f800000u,
                                      0xff800000u, 0x7fc00000u, 0xffc00001u};
  float f;
  if (i % 11 == 3) {
    memcpy(&f, &specials[(i / 11) % 6], 4);
    return f;
  }
  return (float)((i * 37) % 23 - 11) * 0.5f;
}

static void sort_case(int n) {
  char src[512];
  snprintf(src, sizeof src, sort_src, n);
  kern_module *m = kern_module_from_source("tiles_sort", src);
  cr_assert(m, "%s", kern_last_error());
  kern_device *cpu = kern_device_get("cpu");
  float *k = malloc(4 * (size_t)n), *got = malloc(4 * (size_t)n);
  int *place = malloc(sizeof(int) * (size_t)n), *gv = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) k[i] = sort_key(i), place[i] = i;
  sort_keys = k;
  qsort(place, (size_t)n, sizeof *place, by_key_then_place);
  kern_array *ak = array_of(cpu, KERN_FLOAT32, n, k), *av = array_of(cpu, KERN_INT32, n, NULL);
  kern_arg args[2] = {kern_arg_array(ak), kern_arg_array(av)};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "s"), cpu, (kern_dims){1, {1}}, 2, args), KERN_OK,
               "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ak, got, 4 * (size_t)n), KERN_OK);
  cr_assert_eq(kern_array_read(av, gv, sizeof(int) * (size_t)n), KERN_OK);
  for (int i = 0; i < n; i++)
    if (gv[i] != place[i] || memcmp(&got[i], &k[place[i]], 4)) {
      cr_expect(false, "n=%d place %d: key %a from %d, the stable sort puts %a from %d there", n, i,
                (double)got[i], gv[i], (double)k[place[i]], place[i]);
      break;
    }
  kern_array_free(ak), kern_array_free(av), kern_module_free(m);
  free(k), free(got), free(place), free(gv);
}

Test(tiles, tile_sort_is_the_stable_sort_in_total_order, .timeout = TH_TIMEOUT(300)) {
  cr_assert_eq(kern_init(), KERN_OK);
  static const int sizes[] = {2, 3, 7, 64, 100, 1000, 1025, 4096};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) sort_case(sizes[i]);
}

Test(tiles, the_block_size_api_checks_its_arguments) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_module *m = kern_module_from_source(
      "tiles_block", "kernel void k(float[] x) { tile_store(x, 0, tile_ones<float, 4>()); }\n");
  cr_assert(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "k");
  cr_expect(kern_kernel_is_tiled(k));
  cr_expect_eq(kern_kernel_set_tile_block(k, 128), KERN_OK);
  cr_expect_eq(kern_kernel_set_tile_block(k, 0), KERN_OK);
  cr_expect_eq(kern_kernel_set_tile_block(k, 100), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "multiple of 32"));
  cr_expect_eq(kern_kernel_set_tile_block(NULL, 64), KERN_ERR_INVALID_ARGUMENT);
  kern_device *cpu = kern_device_get("cpu");
  kern_array *x = array_of(cpu, KERN_FLOAT32, 4, NULL);
  kern_arg a = kern_arg_array(x);
  kern_dims one = {.ndim = 1, .shape = {1}};
  cr_expect_eq(kern_launch_tile_block(k, cpu, one, 2048, 1, &a), KERN_ERR_INVALID_ARGUMENT);
  cr_expect_eq(kern_launch_tile_block(k, cpu, one, 64, 1, &a), KERN_OK, "%s", kern_last_error());
  float got[4];
  cr_assert_eq(kern_array_read(x, got, sizeof got), KERN_OK);
  cr_expect(got[0] == 1.0f && got[3] == 1.0f);
  kern_module *plain =
      kern_module_from_source("tiles_plain", "kernel void p(float[] x) { x[tid()] = 1.0f; }\n");
  cr_expect(!kern_kernel_is_tiled(kern_module_kernel(plain, "p")));
  kern_array_free(x);
  kern_module_free(plain);
  kern_module_free(m);
}
