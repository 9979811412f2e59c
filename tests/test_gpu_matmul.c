/* test_gpu_matmul.c: matrix products on cuda:0.
 *
 * EXACT: tile_matmul in a kernel (odd tile shapes, float32 and float64, both
 * forms) launched with 32, 96, 256 and 1024 threads per instance and the
 * default, and kern_array_matmul on shapes that are and are not multiples of
 * its blocks, must give the CPU's bits. FAST: kern_array_matmul through TF32
 * and float16 (tensor cores on sm_80 and newer) within the documented bound
 * of a float64 reference: |c - ab| <= (2u + (K + 2) 2^-22) sum |a||b|, u =
 * 2^-11 for TF32 and 0 for float16; a product with the identity gives
 * each TF32-rounded element back with the CPU's bits, ties, NaNs and
 * infinities included. A k loop of the form a GPU runs whole
 * (stdlib/kern_mmloop.h), with every edge and fill, gives the bits of the
 * loop as written. Arrays on different devices are refused.
 * Skips, saying why, without a GPU.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"
#include "matmul_inputs.h"

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU matmul suite skipped", kern_last_error());
  return gpu;
}

static void fill(void *p, int n, size_t es, int seed) {
  for (int i = 0; i < n; i++)
    if (es == 8)
      ((double *)p)[i] = th_mm_input(i + seed);
    else
      ((float *)p)[i] = (float)th_mm_input(i + seed);
}

static bool same(const void *x, const void *y, int n, size_t es, const char *what) {
  for (int i = 0; i < n; i++)
    if (memcmp((const char *)x + i * es, (const char *)y + i * es, es)) {
      double gx = es == 4 ? ((const float *)x)[i] : ((const double *)x)[i];
      double gy = es == 4 ? ((const float *)y)[i] : ((const double *)y)[i];
      cr_expect(false, "%s: element %d: cuda:0 %.17g, cpu %.17g", what, i, gx, gy);
      return false;
    }
  return true;
}

/* ---- tile_matmul, every block size --------------------------------------------------------- */

static const char *const tile_src = "const int M = %d;\nconst int K = %d;\nconst int N = %d;\n"
                                    "kernel void mm(%s[,] a, %s[,] b, %s[,] p, %s[,] q) {\n"
                                    "  int i = tid();\n"
                                    "  tile<%s, M, K> ta = tile_load<M, K>(a, i * M, 0);\n"
                                    "  tile<%s, K, N> tb = tile_load<K, N>(b, 0, 0);\n"
                                    "  tile_store(p, i * M, 0, tile_matmul(ta, tb));\n"
                                    "  tile<%s, M, N> acc = tile_load<M, N>(p, i * M, 0);\n"
                                    "  acc = tile_matmul(ta, tb, acc);\n"
                                    "  tile_store(q, i * M, 0, acc);\n"
                                    "}\n";

/* Runs mm over `inst` instances on d with `threads` per instance (0: the default). */
static void run_tile(kern_device *d, kern_kernel *k, int threads, int m, int kk, int n, int inst,
                     bool dbl, const void *a, const void *b, void *p, void *q) {
  kern_dtype t = dbl ? KERN_FLOAT64 : KERN_FLOAT32;
  size_t es = dbl ? 8 : 4;
  kern_array *aa = th_mm_array(d, t, (int64_t)m * inst, kk, a), *ab = th_mm_array(d, t, kk, n, b),
             *ap = th_mm_array(d, t, (int64_t)m * inst, n, NULL),
             *aq = th_mm_array(d, t, (int64_t)m * inst, n, NULL);
  kern_arg args[4] = {kern_arg_array(aa), kern_arg_array(ab), kern_arg_array(ap),
                      kern_arg_array(aq)};
  kern_dims dims = {1, {inst}};
  kern_status st = threads ? kern_launch_tile_block(k, d, dims, threads, 4, args)
                           : kern_launch(k, d, dims, 4, args);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ap, p, es * m * inst * n), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(aq, q, es * m * inst * n), KERN_OK, "%s", kern_last_error());
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ap), kern_array_free(aq);
}

static void tile_case(kern_device *gpu, int m, int kk, int n, bool dbl) {
  const char *tn = dbl ? "double" : "float";
  char src[1400];
  snprintf(src, sizeof src, tile_src, m, kk, n, tn, tn, tn, tn, tn, tn, tn);
  kern_module *mod = kern_module_from_source("gpu_tile_matmul", src);
  cr_assert(mod, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(mod, "mm");
  size_t es = dbl ? 8 : 4;
  int inst = 3, cells = m * inst * n;
  void *a = malloc(es * m * inst * kk), *b = malloc(es * kk * n);
  void *p0 = malloc(es * cells), *q0 = malloc(es * cells), *p = malloc(es * cells),
       *q = malloc(es * cells);
  fill(a, m * inst * kk, es, 1);
  fill(b, kk * n, es, 29);
  run_tile(kern_device_get("cpu"), k, 0, m, kk, n, inst, dbl, a, b, p0, q0);
  static const int threads[] = {0, 32, 96, 256, 1024};
  char what[96];
  for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
    run_tile(gpu, k, threads[i], m, kk, n, inst, dbl, a, b, p, q);
    snprintf(what, sizeof what, "tile_matmul %dx%dx%d %s, %d threads", m, kk, n, tn, threads[i]);
    same(p, p0, cells, es, what);
    same(q, q0, cells, es, what);
  }
  kern_module_free(mod);
  free(a), free(b), free(p0), free(q0), free(p), free(q);
}

Test(gpu_matmul, tile_matmul_same_bits_as_the_cpu_for_every_block_size, .timeout = 600) {
  kern_device *gpu = gpu_or_skip();
  tile_case(gpu, 7, 13, 5, false);
  tile_case(gpu, 32, 16, 32, false);
  tile_case(gpu, 33, 40, 17, false);
  tile_case(gpu, 7, 13, 5, true);
  tile_case(gpu, 16, 24, 16, true);
}

/* ---- kern_array_matmul ------------------------------------------------------------------------ */

static void array_exact(kern_device *gpu, int m, int kk, int n, bool dbl) {
  kern_device *cpu = kern_device_get("cpu");
  kern_dtype t = dbl ? KERN_FLOAT64 : KERN_FLOAT32;
  size_t es = dbl ? 8 : 4;
  void *a = malloc(es * m * kk), *b = malloc(es * kk * n), *c0 = malloc(es * m * n),
       *c1 = malloc(es * m * n);
  fill(a, m * kk, es, 3);
  fill(b, kk * n, es, 41);
  kern_device *devs[2] = {cpu, gpu};
  void *outs[2] = {c0, c1};
  for (int i = 0; i < 2; i++) {
    kern_array *aa = th_mm_array(devs[i], t, m, kk, a), *ab = th_mm_array(devs[i], t, kk, n, b),
               *ac = th_mm_array(devs[i], t, m, n, NULL);
    cr_assert_eq(kern_array_matmul(aa, ab, ac, KERN_MATMUL_EXACT), KERN_OK, "%s",
                 kern_last_error());
    cr_assert_eq(kern_array_read(ac, outs[i], es * m * n), KERN_OK, "%s", kern_last_error());
    kern_array_free(aa), kern_array_free(ab), kern_array_free(ac);
  }
  char what[80];
  snprintf(what, sizeof what, "kern_array_matmul EXACT %dx%dx%d %s", m, kk, n,
           dbl ? "float64" : "float32");
  same(c1, c0, m * n, es, what);
  free(a), free(b), free(c0), free(c1);
}

Test(gpu_matmul, array_exact_same_bits_as_the_cpu, .timeout = 600) {
  kern_device *gpu = gpu_or_skip();
  int s[][3] = {{1, 1, 1},      {7, 13, 5},     {64, 64, 64},
                {100, 37, 300}, {300, 100, 37}, {256, 512, 192}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
    array_exact(gpu, s[i][0], s[i][1], s[i][2], false);
    array_exact(gpu, s[i][0], s[i][1], s[i][2], true);
  }
}

static void fast_case(kern_device *gpu, int m, int kk, int n, th_mm_fast f) {
  bool half = f != TH_MM_TF32;
  float *a = malloc(4 * m * kk), *b = malloc(4 * kk * n), *c = malloc(4 * m * n);
  uint16_t *ha = malloc(2 * m * kk), *hb = malloc(2 * kk * n);
  for (int i = 0; i < m * kk; i++) {
    a[i] = th_mm_fast_value(f, i, false);
    ha[i] = th_mm_fast_bits(f, a[i]);
  }
  for (int i = 0; i < kk * n; i++) {
    b[i] = th_mm_fast_value(f, i, true);
    hb[i] = th_mm_fast_bits(f, b[i]);
  }
  kern_dtype t = th_mm_fast_dtype(f);
  kern_array *aa = th_mm_array(gpu, t, m, kk, half ? (void *)ha : a),
             *ab = th_mm_array(gpu, t, kk, n, half ? (void *)hb : b),
             *ac = th_mm_array(gpu, KERN_FLOAT32, m, n, NULL);
  cr_assert_eq(kern_array_matmul(aa, ab, ac, KERN_MATMUL_FAST), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ac, c, 4 * m * n), KERN_OK, "%s", kern_last_error());
  double u = half ? 0 : ldexp(1, -11), worst = 0;
  int bad = 0;
  for (int i = 0; i < m && bad < 5; i++)
    for (int j = 0; j < n && bad < 5; j++) {
      double exact = 0, mag = 0;
      for (int p = 0; p < kk; p++) {
        exact += (double)a[i * kk + p] * b[p * n + j];
        mag += fabs((double)a[i * kk + p] * b[p * n + j]);
      }
      double err = fabs(c[i * n + j] - exact), bound = (2 * u + (kk + 2) * ldexp(1, -22)) * mag;
      if (mag > 0 && err / mag > worst) worst = err / mag;
      if (err > bound) {
        bad++;
        cr_expect(false,
                  "FAST %s %dx%dx%d c[%d,%d] = %.9g, exact %.17g: error %g over the bound %g",
                  th_mm_fast_name(f), m, kk, n, i, j, (double)c[i * n + j], exact, err, bound);
      }
    }
  cr_log_info("FAST %s %dx%dx%d on cuda:0: worst error %.3g of sum |a||b|", th_mm_fast_name(f), m,
              kk, n, worst);
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac);
  free(a), free(b), free(c), free(ha), free(hb);
}

Test(gpu_matmul, array_fast_within_the_bound, .timeout = 600) {
  kern_device *gpu = gpu_or_skip();
  int s[][3] = {{7, 13, 5}, {128, 256, 192}, {100, 37, 130}, {512, 1024, 512}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
    for (th_mm_fast f = TH_MM_TF32; f <= TH_MM_BF16; f++)
      fast_case(gpu, s[i][0], s[i][1], s[i][2], f);
}

/* The tensor cores' fragments of a and of b round TF32 ties (and values
 * just off them) as the CPU's kn_tf32 does. */
Test(gpu_matmul, fast_tf32_rounds_as_the_cpu, .timeout = 300) {
  kern_device *gpu = gpu_or_skip();
  for (int b = 0; b < 2; b++) {
    th_mm_tf32_ties(gpu, 128, 128, b);
    th_mm_tf32_ties(gpu, 256, 384, b);
    th_mm_tf32_ties(gpu, 37, 64, b);
  }
}

Test(gpu_matmul, fast_tf32_nans_and_infinities_as_the_cpu, .timeout = 300) {
  kern_device *gpu = gpu_or_skip();
  th_mm_tf32_specials(gpu, false);
  th_mm_tf32_specials(gpu, true);
}

/* ---- a k loop the GPU runs whole (stdlib/kern_mmloop.h) ------------------------------------ */

/* The loop's form; instances start 3 rows above their block and k runs from
 * -5 past K, so every edge reads the fills. At 256 threads a GPU runs the
 * loop whole with acc in registers; at other sizes, as written. */
static const char *const loop_src =
    "kernel void mm(%s[,] a, %s[,] b, %s[,] c, int64 k0, int64 k1) {\n"
    "  int64 i0 = int64(tid(0)) * %d - 3;\n"
    "  int64 j0 = int64(tid(1)) * %d;\n"
    "  tile<%s, %d, %d> acc = tile_load<%d, %d>(c, i0, j0);\n"
    "  for (int64 k = k0; k < k1; k += %d) {\n"
    "    tile<%s, %d, %d> ta = tile_load<%d, %d>(a, i0, k);\n"
    "    tile<%s, %d, %d> tb = tile_load<%d, %d>(b, k, j0, %s(-0.0));\n"
    "    acc = %s(ta, tb, acc);\n"
    "  }\n"
    "  tile_store(c, i0, j0, acc);\n"
    "}\n";

typedef struct LoopCase {
  const char *in, *acc, *mm;
  kern_dtype tin, tacc;
  int m, n, kt;
} LoopCase;

/* c (m x n of lc->tacc, its initial values in c0) after mm on d with `threads`. */
static void run_loop(kern_device *d, kern_kernel *k, const LoopCase *lc, int threads, int m, int kk,
                     int n, const void *a, const void *b, const void *c0, void *c) {
  kern_array *aa = th_mm_array(d, lc->tin, m, kk, a), *ab = th_mm_array(d, lc->tin, kk, n, b),
             *ac = th_mm_array(d, lc->tacc, m, n, c0);
  kern_arg args[5] = {kern_arg_array(aa), kern_arg_array(ab), kern_arg_array(ac), kern_arg_i64(-5),
                      kern_arg_i64(kk + 7)};
  kern_dims dims = {2, {(m + 3 + lc->m - 1) / lc->m, (n + lc->n - 1) / lc->n}};
  kern_status st = threads ? kern_launch_tile_block(k, d, dims, threads, 5, args)
                           : kern_launch(k, d, dims, 5, args);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ac, c, kern_array_nbytes(ac)), KERN_OK, "%s", kern_last_error());
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac);
}

/* Element i of an input of dtype t, as its bytes into p. */
static void put_input(void *p, kern_dtype t, int i, int seed) {
  double v = th_mm_input(i + seed);
  if (t == KERN_FLOAT64) ((double *)p)[i] = v;
  if (t == KERN_FLOAT32) ((float *)p)[i] = (float)v;
  if (t == KERN_FLOAT16 || t == KERN_BFLOAT16) {
    th_mm_fast f = t == KERN_FLOAT16 ? TH_MM_F16 : TH_MM_BF16;
    ((uint16_t *)p)[i] = th_mm_fast_bits(f, th_mm_fast_value(f, i + seed, seed > 10));
  }
}

/* EXACT: every block size gives the CPU's bits. FAST: the loop run whole
 * (256 threads) gives the bits of the loop as written (128 and 1024). */
static void loop_case(kern_device *gpu, const LoopCase *lc) {
  const int m = 300, kk = 100, n = 200;
  char src[1600];
  snprintf(src, sizeof src, loop_src, lc->in, lc->in, lc->acc, lc->m, lc->n, lc->acc, lc->m, lc->n,
           lc->m, lc->n, lc->kt, lc->in, lc->m, lc->kt, lc->m, lc->kt, lc->in, lc->kt, lc->n,
           lc->kt, lc->n, lc->in, lc->mm);
  kern_module *mod = kern_module_from_source("gpu_k_loop", src);
  cr_assert(mod, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(mod, "mm");
  size_t ei = kern_dtype_size(lc->tin), ea = kern_dtype_size(lc->tacc);
  char *a = malloc(ei * m * kk), *b = malloc(ei * kk * n), *c0 = malloc(ea * m * n),
       *want = malloc(ea * m * n), *got = malloc(ea * m * n);
  for (int i = 0; i < m * kk; i++) put_input(a, lc->tin, i, 5);
  for (int i = 0; i < kk * n; i++) put_input(b, lc->tin, i, 17);
  for (int i = 0; i < m * n; i++) put_input(c0, lc->tacc, i, 99);
  bool fast = lc->tin != lc->tacc || !strcmp(lc->mm, "tile_matmul_fast");
  if (fast)
    run_loop(gpu, k, lc, 128, m, kk, n, a, b, c0, want);
  else
    run_loop(kern_device_get("cpu"), k, lc, 0, m, kk, n, a, b, c0, want);
  static const int threads[] = {0, 128, 256, 1024};
  for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
    run_loop(gpu, k, lc, threads[i], m, kk, n, a, b, c0, got);
    char what[96];
    snprintf(what, sizeof what, "%s k loop of %s, %d threads", lc->mm, lc->in, threads[i]);
    same(got, want, m * n, ea, what);
  }
  kern_module_free(mod);
  free(a), free(b), free(c0), free(want), free(got);
}

Test(gpu_matmul, k_loop_run_whole_gives_the_loops_bits, .timeout = 600) {
  kern_device *gpu = gpu_or_skip();
  static const LoopCase cases[] = {
      {"float", "float", "tile_matmul", KERN_FLOAT32, KERN_FLOAT32, 128, 128, 32},
      {"double", "double", "tile_matmul", KERN_FLOAT64, KERN_FLOAT64, 64, 64, 32},
      {"float", "float", "tile_matmul_fast", KERN_FLOAT32, KERN_FLOAT32, 128, 128, 32},
      {"float16", "float", "tile_matmul_fast", KERN_FLOAT16, KERN_FLOAT32, 128, 128, 64},
      {"bfloat16", "float", "tile_matmul_fast", KERN_BFLOAT16, KERN_FLOAT32, 128, 128, 64}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) loop_case(gpu, &cases[i]);
}

Test(gpu_matmul, arrays_on_different_devices_are_refused) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  kern_array *a = th_mm_array(cpu, KERN_FLOAT32, 4, 4, NULL),
             *b = th_mm_array(gpu, KERN_FLOAT32, 4, 4, NULL),
             *c = th_mm_array(gpu, KERN_FLOAT32, 4, 4, NULL);
  cr_expect_eq(kern_array_matmul(a, b, c, KERN_MATMUL_EXACT), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "different devices"), "%s", kern_last_error());
  kern_array_free(a), kern_array_free(b), kern_array_free(c);
}
