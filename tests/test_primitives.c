/* test_primitives.c: kern_array_sum, _min, _max and _scan on the CPU, bit for
 * bit against plain-C references of the documented orders.
 *
 * The references work on the whole array, never in chunks: a sum is the
 * pairwise tree over [0, 2^K) computed bottom-up (a node whose right half is
 * absent is its left half); a scan's exclusive prefix of i is the left fold of
 * the tree nodes of the blocks i's binary digits name, largest first. Float
 * inputs span many magnitudes, so other orders give other bits (checked).
 * Sizes 0, 1, 7, 1000, 4097, 16385 and 2^20 + 3 cross the primitives' chunk
 * sizes (16384 elements for a reduction of 4-byte elements into their own
 * dtype, 4096 or 2048 for the other reductions, 2048 or 1024 for scans) and
 * need one, two and three passes. Also: integers exactly, the accumulator
 * dtypes, NaN and -0 in min/max, argument errors, a CPU graph capture, the
 * same bits on 1 and 3 threads, and that every module's CUDA compiles through
 * NVRTC and fits a GPU block (no GPU needed).
 * kern_array_sort against a stable reference written from the contract (a
 * sort on (the key's order, its input place), the order read off the key's
 * value or IEEE total order): every key dtype, sizes around the sort's chunk
 * of 8192, keys that differ in every digit, in few values, or in two digits
 * only (the passes between are skipped), with and without values; values of
 * 1 to 64 bytes and a 3-byte struct; the float order written out; stability
 * without the reference; strided views and unaligned values; argument
 * errors; a CPU capture; and its modules through NVRTC. Each through the
 * CPU's own passes and through the tiled passes GPUs run
 * (rt_sort_tiles_on_cpu).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "cpu/cpu_backend.h"
#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"
#include "nvrtc.h"
#include "prims.h"
#include "toolchain.h"

static const int64_t sizes[] = {1, 7, 1000, 4097, 16385, (1 << 20) + 3};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static float input(int64_t i) {
  static const float scale[4] = {0.001f, 0.37f, 13.1f, 1009.0f};
  return (float)((i * 7919) % 1013 - 506) * scale[i % 4] + 0.1f;
}

static kern_device *cpu(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *d = kern_device_get("cpu");
  cr_assert(d);
  return d;
}

static kern_array *array_of(kern_dtype t, int64_t n, const void *data) {
  kern_array *a = kern_array_new(cpu(), t, 1, &n);
  cr_assert(a, "%s", kern_last_error());
  if (data && n) cr_assert_eq(kern_array_write(a, data, (size_t)n * kern_dtype_size(t)), KERN_OK);
  return a;
}

static float *floats(int64_t n) {
  float *x = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) x[i] = input(i);
  return x;
}

/* ---- references -------------------------------------------------------------------------- */

#define TREE(T, NAME, OP)                                                                          \
  static T NAME(const T *x, int64_t n) {                                                           \
    T *v = malloc(sizeof(T) * (size_t)n);                                                          \
    memcpy(v, x, sizeof(T) * (size_t)n);                                                           \
    for (int64_t s = 1; s < n; s *= 2)                                                             \
      for (int64_t i = 0; i + s < n; i += 2 * s) v[i] = OP(v[i], v[i + s]);                        \
    T r = v[0];                                                                                    \
    free(v);                                                                                       \
    return r;                                                                                      \
  }
#define ADD(a, b) ((a) + (b))
/* The min builtin: a NaN operand is ignored, -0 < +0. */
static float fmin_ref(float a, float b) {
  if (a != a) return b;
  if (b != b || a < b) return a;
  return a == b && signbit(a) ? a : b;
}
static float fmax_ref(float a, float b) {
  if (a != a) return b;
  if (b != b || a > b) return a;
  return a == b && !signbit(a) ? a : b;
}
TREE(float, tree_f32, ADD)
TREE(double, tree_f64, ADD)
TREE(float, tree_min_f32, fmin_ref)
TREE(float, tree_max_f32, fmax_ref)

/* The scan order over the whole array, from the tree's levels:
 * lv[j][k] is the node [k 2^j, (k+1) 2^j). */
#define SCAN_REF(T, NAME)                                                                          \
  static void NAME(const T *x, int64_t n, bool inclusive, T *out) {                                \
    T *lv[64];                                                                                     \
    int levels = 1;                                                                                \
    lv[0] = malloc(sizeof(T) * (size_t)n);                                                         \
    memcpy(lv[0], x, sizeof(T) * (size_t)n);                                                       \
    for (int64_t m = n; m >= 2; m /= 2, levels++) {                                                \
      lv[levels] = malloc(sizeof(T) * (size_t)(m / 2));                                            \
      for (int64_t k = 0; k < m / 2; k++)                                                          \
        lv[levels][k] = lv[levels - 1][2 * k] + lv[levels - 1][2 * k + 1];                         \
    }                                                                                              \
    for (int64_t i = 0; i < n; i++) {                                                              \
      bool have = false;                                                                           \
      T acc = 0;                                                                                   \
      for (int j = levels - 1; j >= 0; j--)                                                        \
        if (i >> j & 1) {                                                                          \
          T node = lv[j][(i >> j) - 1];                                                            \
          acc = have ? acc + node : node;                                                          \
          have = true;                                                                             \
        }                                                                                          \
      out[i] = inclusive ? (have ? acc + x[i] : x[i]) : (have ? acc : 0);                          \
    }                                                                                              \
    for (int j = 0; j < levels; j++) free(lv[j]);                                                  \
  }
SCAN_REF(float, scan_ref_f32)
SCAN_REF(double, scan_ref_f64)
SCAN_REF(int32_t, scan_ref_i32)

static float seq_f32(const float *x, int64_t n) {
  float s = x[0];
  for (int64_t i = 1; i < n; i++) s += x[i];
  return s;
}

/* ---- helpers ------------------------------------------------------------------------------- */

typedef kern_status (*reduce_fn)(const kern_array *, kern_array *);

static void run_reduce(reduce_fn f, kern_array *in, kern_dtype acc, void *result) {
  kern_array *out = array_of(acc, 1, NULL);
  cr_assert_eq(f(in, out), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(out, result, kern_dtype_size(acc)), KERN_OK);
  kern_array_free(out);
}

static void expect_same(const void *got, const void *want, size_t size, const char *what, int64_t n,
                        int64_t i) {
  if (memcmp(got, want, size) == 0) return;
  double g = size == 4 ? (double)*(const float *)got : *(const double *)got;
  double w = size == 4 ? (double)*(const float *)want : *(const double *)want;
  cr_expect(false, "n=%lld %s[%lld]: got %.17g, the documented order gives %.17g", (long long)n,
            what, (long long)i, g, w);
}

/* ---- reductions ------------------------------------------------------------------------------ */

Test(primitives, float_sums_follow_the_tree_bit_for_bit, .timeout = 300) {
  for (int s = 0; s < NSIZES; s++) {
    int64_t n = sizes[s];
    float *x = floats(n);
    double *xd = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) xd[i] = (double)x[i];
    kern_array *in = array_of(KERN_FLOAT32, n, x);
    float got, want = tree_f32(x, n);
    double gotd, wantd = tree_f64(xd, n);
    run_reduce(kern_array_sum, in, KERN_FLOAT32, &got);
    run_reduce(kern_array_sum, in, KERN_FLOAT64, &gotd);
    expect_same(&got, &want, 4, "sum", n, 0);
    expect_same(&gotd, &wantd, 8, "sum as float64", n, 0);
    kern_array *ind = array_of(KERN_FLOAT64, n, xd);
    run_reduce(kern_array_sum, ind, KERN_FLOAT64, &gotd);
    expect_same(&gotd, &wantd, 8, "float64 sum", n, 0);
    kern_array_free(ind);
    kern_array_free(in);
    free(xd);
    free(x);
  }
}

Test(primitives, the_inputs_tell_the_orders_apart, .timeout = 60) {
  int64_t n = sizes[NSIZES - 1];
  float *x = floats(n);
  float a = tree_f32(x, n), b = seq_f32(x, n);
  cr_expect(memcmp(&a, &b, 4) != 0, "a left-to-right sum gives the tree's bits");
  free(x);
}

Test(primitives, a_negative_zero_sum_stays_negative_zero) {
  float x[5] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
  kern_array *in = array_of(KERN_FLOAT32, 5, x);
  float got;
  run_reduce(kern_array_sum, in, KERN_FLOAT32, &got);
  cr_expect(got == 0.0f && signbit(got), "the sum of -0s is %g (signbit %d)", (double)got,
            signbit(got) != 0);
  kern_array_free(in);
}

Test(primitives, min_and_max_follow_the_min_builtin, .timeout = 300) {
  for (int s = 0; s < NSIZES; s++) {
    int64_t n = sizes[s];
    float *x = floats(n);
    if (n > 3) x[n / 3] = NAN, x[n - 1] = -0.0f, x[1] = 0.0f;
    kern_array *in = array_of(KERN_FLOAT32, n, x);
    float got, want = tree_min_f32(x, n);
    run_reduce(kern_array_min, in, KERN_FLOAT32, &got);
    expect_same(&got, &want, 4, "min", n, 0);
    want = tree_max_f32(x, n);
    run_reduce(kern_array_max, in, KERN_FLOAT32, &got);
    expect_same(&got, &want, 4, "max", n, 0);
    double gd, wd = (double)tree_max_f32(x, n);
    run_reduce(kern_array_max, in, KERN_FLOAT64, &gd);
    expect_same(&gd, &wd, 8, "max as float64", n, 0);
    kern_array_free(in);
    free(x);
  }
  float nans[3] = {NAN, NAN, NAN}, z[2] = {0.0f, -0.0f}, got;
  kern_array *in = array_of(KERN_FLOAT32, 3, nans);
  run_reduce(kern_array_min, in, KERN_FLOAT32, &got);
  cr_expect(isnan(got), "the min of NaNs is %g", (double)got);
  kern_array_free(in);
  in = array_of(KERN_FLOAT32, 2, z);
  run_reduce(kern_array_min, in, KERN_FLOAT32, &got);
  cr_expect(got == 0.0f && signbit(got), "min(+0, -0) is not -0");
  run_reduce(kern_array_max, in, KERN_FLOAT32, &got);
  cr_expect(got == 0.0f && !signbit(got), "max(+0, -0) is not +0");
  kern_array_free(in);
}

Test(primitives, integers_are_exact, .timeout = 300) {
  for (int s = 0; s < NSIZES; s++) {
    int64_t n = sizes[s];
    int32_t *x = malloc(sizeof(int32_t) * (size_t)n);
    int64_t wide = 0;
    uint32_t narrow = 0;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (int64_t i = 0; i < n; i++) {
      x[i] = (int32_t)((i * 2654435761u) % 2000000001u) - 1000000000;
      wide += x[i], narrow += (uint32_t)x[i];
      lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
    }
    kern_array *in = array_of(KERN_INT32, n, x);
    int64_t g64;
    int32_t g32;
    run_reduce(kern_array_sum, in, KERN_INT64, &g64);
    cr_expect_eq(g64, wide, "n=%lld: int64 sum %lld, want %lld", (long long)n, (long long)g64,
                 (long long)wide);
    run_reduce(kern_array_sum, in, KERN_INT32, &g32);
    cr_expect_eq(g32, (int32_t)narrow, "n=%lld: int32 sum (wrapping)", (long long)n);
    run_reduce(kern_array_min, in, KERN_INT32, &g32);
    cr_expect_eq(g32, lo, "n=%lld: min %d, want %d", (long long)n, g32, lo);
    run_reduce(kern_array_max, in, KERN_INT64, &g64);
    cr_expect_eq(g64, hi, "n=%lld: max %lld, want %d", (long long)n, (long long)g64, hi);
    kern_array_free(in);
    free(x);
  }
  uint8_t u[300];
  uint64_t want = 0, got;
  for (int i = 0; i < 300; i++) u[i] = (uint8_t)(i * 37 + 11), want += u[i];
  kern_array *in = array_of(KERN_UINT8, 300, u);
  run_reduce(kern_array_sum, in, KERN_UINT64, &got);
  cr_expect_eq(got, want, "uint8 -> uint64 sum %llu, want %llu", (unsigned long long)got,
               (unsigned long long)want);
  uint8_t m;
  run_reduce(kern_array_max, in, KERN_UINT8, &m);
  cr_expect_eq(m, 255);
  kern_array_free(in);
}

Test(primitives, empty_arrays) {
  kern_array *in = array_of(KERN_FLOAT32, 0, NULL);
  kern_array *out = array_of(KERN_FLOAT32, 1, (float[]){5.0f});
  cr_expect_eq(kern_array_sum(in, out), KERN_OK, "%s", kern_last_error());
  float got = 1;
  cr_assert_eq(kern_array_read(out, &got, 4), KERN_OK);
  cr_expect(got == 0.0f && !signbit(got), "the sum of nothing is %g", (double)got);
  cr_expect_eq(kern_array_min(in, out), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "empty"), "%s", kern_last_error());
  cr_expect_eq(kern_array_max(in, out), KERN_ERR_INVALID_ARGUMENT);
  cr_expect_eq(kern_array_scan(in, in, true), KERN_OK, "%s", kern_last_error());
  kern_array_free(in);
  kern_array_free(out);
}

Test(primitives, arguments_are_checked) {
  kern_array *in = array_of(KERN_FLOAT32, 10, NULL), *o32 = array_of(KERN_FLOAT32, 1, NULL);
  kern_array *oi = array_of(KERN_INT32, 1, NULL), *o2 = array_of(KERN_FLOAT32, 2, NULL);
  int64_t sh[2] = {2, 5};
  kern_array *in2 = kern_array_new(cpu(), KERN_FLOAT32, 2, sh);
  kern_array *v = kern_array_new(cpu(), KERN_VEC3, 1, sh);
  struct {
    kern_status st;
    const char *msg;
  } cases[] = {
      {kern_array_sum(NULL, o32), "in is NULL"},
      {kern_array_sum(in, NULL), "out is NULL"},
      {kern_array_sum(in, oi), "expected in's dtype float32 or float64"},
      {kern_array_min(in, o2), "1 element"},
      {kern_array_max(in2, o32), "1-D"},
      {kern_array_sum(v, o32), "dtype vec3"},
      {kern_array_scan(in, o32, true), "10 elements"},
      {kern_array_scan(in, oi, false), "dtype int32"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cr_expect_eq(cases[i].st, KERN_ERR_INVALID_ARGUMENT, "case %zu", i);
    (void)cases[i].msg;
  }
  cr_expect_eq(kern_array_sum(in, oi), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "kern_array_sum: out has dtype int32"), "%s",
            kern_last_error());
  cr_expect_eq(kern_array_scan(in, o32, true), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "10 elements"), "%s", kern_last_error());
  int64_t off = 1, len = 9;
  kern_array *shifted = kern_array_view(in, 1, &off, &len),
             *head = kern_array_view(in, 1, (int64_t[]){0}, &len);
  cr_expect_eq(kern_array_scan(head, shifted, true), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "overlaps"), "%s", kern_last_error());
  kern_array *in64 =
      kern_array_wrap(kern_array_data(in), cpu(), KERN_FLOAT64, 1, (int64_t[]){5}, NULL);
  kern_array *v5 = kern_array_view(in, 1, (int64_t[]){0}, (int64_t[]){5});
  cr_expect_eq(kern_array_scan(v5, in64, true), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "another dtype"), "%s", kern_last_error());
  kern_array *all[] = {in, o32, oi, o2, in2, v, shifted, head, in64, v5};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) kern_array_free(all[i]);
}

/* ---- scans ------------------------------------------------------------------------------------ */

Test(primitives, float_scans_follow_the_documented_order, .timeout = 300) {
  for (int s = 0; s < NSIZES; s++) {
    int64_t n = sizes[s];
    float *x = floats(n), *want = malloc(4 * (size_t)n), *got = malloc(4 * (size_t)n);
    double *xd = malloc(8 * (size_t)n), *wantd = malloc(8 * (size_t)n),
           *gotd = malloc(8 * (size_t)n);
    for (int64_t i = 0; i < n; i++) xd[i] = (double)x[i];
    kern_array *in = array_of(KERN_FLOAT32, n, x), *out = array_of(KERN_FLOAT32, n, NULL);
    kern_array *outd = array_of(KERN_FLOAT64, n, NULL);
    for (int inc = 0; inc < 2; inc++) {
      scan_ref_f32(x, n, inc, want);
      cr_assert_eq(kern_array_scan(in, out, inc), KERN_OK, "%s", kern_last_error());
      cr_assert_eq(kern_array_read(out, got, 4 * (size_t)n), KERN_OK);
      for (int64_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], 4)) {
          expect_same(&got[i], &want[i], 4, inc ? "inclusive" : "exclusive", n, i);
          break;
        }
      scan_ref_f64(xd, n, inc, wantd);
      cr_assert_eq(kern_array_scan(in, outd, inc), KERN_OK, "%s", kern_last_error());
      cr_assert_eq(kern_array_read(outd, gotd, 8 * (size_t)n), KERN_OK);
      for (int64_t i = 0; i < n; i++)
        if (memcmp(&gotd[i], &wantd[i], 8)) {
          expect_same(&gotd[i], &wantd[i], 8, inc ? "inclusive f64" : "exclusive f64", n, i);
          break;
        }
    }
    /* In place. */
    scan_ref_f32(x, n, true, want);
    cr_assert_eq(kern_array_scan(in, in, true), KERN_OK, "%s", kern_last_error());
    cr_assert_eq(kern_array_read(in, got, 4 * (size_t)n), KERN_OK);
    cr_expect(memcmp(got, want, 4 * (size_t)n) == 0, "n=%lld: the in-place scan differs",
              (long long)n);
    kern_array_free(in);
    kern_array_free(out);
    kern_array_free(outd);
    free(x), free(want), free(got), free(xd), free(wantd), free(gotd);
  }
}

Test(primitives, integer_scans_are_exact, .timeout = 300) {
  int64_t n = sizes[NSIZES - 1];
  int32_t *x = malloc(4 * (size_t)n), *want = malloc(4 * (size_t)n), *got = malloc(4 * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = (int32_t)(i % 201) - 100;
  kern_array *in = array_of(KERN_INT32, n, x), *out = array_of(KERN_INT32, n, NULL);
  for (int inc = 0; inc < 2; inc++) {
    scan_ref_i32(x, n, inc, want);
    int32_t s = 0;
    for (int64_t i = 0; i < n; i++) {
      if (inc) s += x[i];
      cr_assert_eq(want[i], s, "the reference is wrong at %lld", (long long)i);
      if (!inc) s += x[i];
    }
    cr_assert_eq(kern_array_scan(in, out, inc), KERN_OK, "%s", kern_last_error());
    cr_assert_eq(kern_array_read(out, got, 4 * (size_t)n), KERN_OK);
    cr_expect(memcmp(got, want, 4 * (size_t)n) == 0, "the %s int32 scan differs",
              inc ? "inclusive" : "exclusive");
  }
  kern_array_free(in);
  kern_array_free(out);
  free(x), free(want), free(got);
}

/* uint32 sums wrap modulo 2^32. */
Test(primitives, uint32_scans_wrap, .timeout = 120) {
  int64_t n = 3 * 2048 + 5;
  uint32_t *x = malloc(4 * (size_t)n), *got = malloc(4 * (size_t)n), s = 0;
  for (int64_t i = 0; i < n; i++) x[i] = 0xfff00000u + (uint32_t)i * 2654435761u;
  kern_array *in = array_of(KERN_UINT32, n, x);
  cr_assert_eq(kern_array_scan(in, in, true), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(in, got, 4 * (size_t)n), KERN_OK);
  for (int64_t i = 0; i < n; i++) {
    s += x[i];
    if (got[i] != s) {
      cr_expect_eq(got[i], s, "uint32 scan at %lld", (long long)i);
      break;
    }
  }
  kern_array_free(in);
  free(x), free(got);
}

/* ---- capture, threads, GPU code -------------------------------------------------------------- */

Test(primitives, run_inside_a_cpu_capture, .timeout = 120) {
  kern_device *d = cpu();
  int64_t n = 5000;
  float *x = floats(n), *y = malloc(4 * (size_t)n);
  kern_array *in = array_of(KERN_FLOAT32, n, x), *out = array_of(KERN_FLOAT32, 1, NULL);
  kern_array *sc = array_of(KERN_FLOAT32, n, NULL);
  cr_assert_eq(kern_capture_begin(d), KERN_OK);
  cr_expect_eq(kern_array_sum(in, out), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_array_scan(in, sc, false), KERN_OK, "%s", kern_last_error());
  kern_graph *g = NULL;
  cr_assert_eq(kern_capture_end(d, &g), KERN_OK, "%s", kern_last_error());
  float got = 0;
  cr_assert_eq(kern_array_read(out, &got, 4), KERN_OK);
  cr_expect(got == 0.0f, "the capture ran the sum");
  for (int64_t i = 0; i < n; i++) x[i] *= 3.0f;
  cr_assert_eq(kern_array_write(in, x, 4 * (size_t)n), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  float want = tree_f32(x, n), *sw = malloc(4 * (size_t)n);
  cr_assert_eq(kern_array_read(out, &got, 4), KERN_OK);
  expect_same(&got, &want, 4, "captured sum", n, 0);
  scan_ref_f32(x, n, false, sw);
  cr_assert_eq(kern_array_read(sc, y, 4 * (size_t)n), KERN_OK);
  cr_expect(memcmp(y, sw, 4 * (size_t)n) == 0, "the captured scan differs");
  kern_graph_free(g);
  kern_array_free(in), kern_array_free(out), kern_array_free(sc);
  free(x), free(y), free(sw);
}

/* A GPU runs a scan's kernels with 128 threads an instance (16 or 8
 * elements a thread in registers) unless told otherwise; the reductions keep
 * the default. */
Test(primitives, scans_run_128_threads_an_instance) {
  static const kern_dtype types[] = {KERN_FLOAT32, KERN_FLOAT64, KERN_INT32};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    kern_kernel *s = rt_prims_kernel(3, types[i], types[i], "sums");
    kern_kernel *d = rt_prims_kernel(3, types[i], types[i], "down");
    kern_kernel *r = rt_prims_kernel(0, types[i], types[i], "reduce");
    cr_assert(s && d && r, "%s", kern_last_error());
    cr_expect_eq(atomic_load(&s->tile_block), 128, "%s", kern_dtype_name(types[i]));
    cr_expect_eq(atomic_load(&d->tile_block), 128, "%s", kern_dtype_name(types[i]));
    cr_expect_eq(atomic_load(&r->tile_block), 0, "%s", kern_dtype_name(types[i]));
  }
}

static void sum_and_scan(float *sum, float *scan, int64_t n) {
  float *x = floats(n);
  kern_array *in = array_of(KERN_FLOAT32, n, x), *out = array_of(KERN_FLOAT32, 1, NULL);
  cr_assert_eq(kern_array_sum(in, out), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(out, sum, 4), KERN_OK);
  cr_assert_eq(kern_array_scan(in, in, true), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(in, scan, 4 * (size_t)n), KERN_OK);
  kern_array_free(in), kern_array_free(out);
  free(x);
}

Test(primitives, the_thread_count_changes_no_bit, .timeout = 300) {
  int64_t n = sizes[NSIZES - 1];
  float s1, s3, *a1 = malloc(4 * (size_t)n), *a3 = malloc(4 * (size_t)n);
  kern_config c;
  kern_shutdown();
  setenv("KERN_NUM_THREADS", "1", 1);
  sum_and_scan(&s1, a1, n);
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_eq(c.num_threads, 1);
  kern_shutdown();
  setenv("KERN_NUM_THREADS", "3", 1);
  sum_and_scan(&s3, a3, n);
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_eq(c.num_threads, 3);
  unsetenv("KERN_NUM_THREADS");
  cr_expect(memcmp(&s1, &s3, 4) == 0, "sum: %g on 1 thread, %g on 3", (double)s1, (double)s3);
  cr_expect(memcmp(a1, a3, 4 * (size_t)n) == 0, "the scans differ between 1 and 3 threads");
  free(a1), free(a3);
}

static const kern_dtype cuda_cases[][3] = {
    {0, KERN_FLOAT32, KERN_FLOAT32}, {0, KERN_FLOAT32, KERN_FLOAT64},
    {1, KERN_FLOAT64, KERN_FLOAT64}, {2, KERN_INT8, KERN_INT64},
    {0, KERN_UINT64, KERN_UINT64},   {3, KERN_FLOAT32, KERN_FLOAT32},
    {3, KERN_FLOAT32, KERN_FLOAT64}, {3, KERN_INT32, KERN_INT32},
    {3, KERN_UINT16, KERN_UINT64},   {3, KERN_FLOAT64, KERN_FLOAT64}};

Test(primitives, every_module_fits_a_gpu_block_and_compiles_through_nvrtc, .timeout = 600) {
  const char *why = NULL;
  bool nvrtc = tc_nvrtc_load(&why);
  if (!nvrtc)
    cr_log_warn("NVRTC is not available (%s): checking the shared-memory sizes only", why);
  for (size_t i = 0; i < sizeof cuda_cases / sizeof cuda_cases[0]; i++) {
    char *src = rt_prims_source(cuda_cases[i][0], cuda_cases[i][1], cuda_cases[i][2]);
    cr_assert(src);
    kern_module *m = kern_module_from_source("prims_check", src);
    cr_assert(m, "%s\n%s", kern_last_error(), src);
    for (int k = 0; k < m->nkernels; k++)
      cr_expect_leq(m->kernels[k].tile_bytes, RT_TILE_SHARED_LIMIT,
                    "case %zu kernel %s: %lld bytes", i, m->kernels[k].name,
                    (long long)m->kernels[k].tile_bytes);
    kern_module_free(m);
    if (nvrtc) {
      FrontResult r = front_compile("prims.kern", src, strlen(src));
      cr_assert(r.ok);
      EmitOptions o = {.line_directives = true};
      char *cu = emit_program(r.prog, EMIT_CUDA, &o), *out = NULL;
      size_t len;
      bool is_ptx;
      cr_expect_eq(tc_nvrtc_compile(cu, "prims.kern", 90, false, false, &out, &len, &is_ptx),
                   KERN_OK, "case %zu: %s", i, kern_last_error());
      free(out);
      free(cu);
      front_free(r.prog);
    }
    free(src);
  }
}

/* ---- sort ---------------------------------------------------------------------------------------- */

static const kern_dtype sort_keys[] = {KERN_INT32, KERN_UINT32, KERN_INT64, KERN_UINT64,
                                       KERN_FLOAT32};
enum { NSORT_KEYS = sizeof sort_keys / sizeof sort_keys[0] };

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

/* The order kern_array_sort promises, as an unsigned number per key: signed
 * integers by value, float32 in IEEE total order (-NaN < -inf < ... < -0 <
 * +0 < ... < +inf < NaN), read off the bits as IEEE 754-2008 totalOrder
 * defines it (negative numbers reversed). */
static uint64_t order_of(kern_dtype t, const unsigned char *p) {
  uint32_t u32;
  uint64_t u64 = 0;
  memcpy(&u32, p, 4);
  memcpy(&u64, p, 8 <= kern_dtype_size(t) ? 8 : 4);
  switch (t) {
    case KERN_UINT32: return u32;
    case KERN_INT32: return (uint64_t)((int64_t)(int32_t)u32 - INT32_MIN);
    case KERN_UINT64: return u64;
    case KERN_INT64: return (uint64_t)((int64_t)u64 < 0 ? u64 - (1ull << 63) : u64 + (1ull << 63));
    default: return u32 >> 31 ? (uint64_t)(0xffffffffu - u32) : (uint64_t)u32 + 0x80000000u;
  }
}

typedef struct {
  uint64_t key;
  int64_t at;
} sort_ref_item;

static int sort_ref_cmp(const void *a, const void *b) {
  const sort_ref_item *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* The stable order of n keys of dtype t: perm[i] is the input place of the
 * i-th smallest (equal keys by their place), from a sort on (key, place). */
static int64_t *sort_ref(kern_dtype t, const void *keys, int64_t n) {
  size_t ks = kern_dtype_size(t);
  sort_ref_item *it = malloc(sizeof *it * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    it[i] = (sort_ref_item){order_of(t, (const unsigned char *)keys + (size_t)i * ks), i};
  qsort(it, (size_t)n, sizeof *it, sort_ref_cmp);
  int64_t *perm = malloc(sizeof *perm * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) perm[i] = it[i].at;
  free(it);
  return perm;
}

/* n keys of dtype t: full-range bits (dist 0), 13 distinct values (1), or
 * values that differ only in bits 8..11 and 28..31 (2: the other digits are
 * the same in every key). float32 keys get the special values too. */
static void *sort_input(kern_dtype t, int64_t n, int dist, uint64_t seed) {
  size_t ks = kern_dtype_size(t);
  unsigned char *k = malloc(ks * (size_t)(n ? n : 1));
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rng(&s);
    if (dist == 1) r = (r % 13) * 0x0123456789abcdefull;
    if (dist == 2) r = 0x5a5a05a5a5a5a0a5ull | ((r & 0xf) << 8) | ((r >> 4 & 0xf) << 28);
    memcpy(k + (size_t)i * ks, &r, ks);
  }
  if (t == KERN_FLOAT32 && n > 20) {
    static const uint32_t special[] = {0x80000000u, 0x00000000u, 0x7f800000u, 0xff800000u,
                                       0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,
                                       0x00000001u, 0x80000001u};
    for (int j = 0; j < 10; j++) memcpy(k + (size_t)(j * n / 10) * 4, &special[j], 4);
  }
  return k;
}

/* Sorts keys (and values when vt is valid) on d; the results in host memory. */
static void sort_on(kern_device *d, kern_dtype kt, void *keys, kern_dtype vt, void *values,
                    int64_t n) {
  size_t ks = kern_dtype_size(kt), vs = vt ? kern_dtype_size(vt) : 0;
  kern_array *k = kern_array_new(d, kt, 1, &n), *v = vt ? kern_array_new(d, vt, 1, &n) : NULL;
  cr_assert(k && (!vt || v), "%s", kern_last_error());
  if (n) cr_assert_eq(kern_array_write(k, keys, ks * (size_t)n), KERN_OK);
  if (n && v) cr_assert_eq(kern_array_write(v, values, vs * (size_t)n), KERN_OK);
  cr_assert_eq(kern_array_sort(k, v), KERN_OK, "%s", kern_last_error());
  if (n) cr_assert_eq(kern_array_read(k, keys, ks * (size_t)n), KERN_OK);
  if (n && v) cr_assert_eq(kern_array_read(v, values, vs * (size_t)n), KERN_OK);
  kern_array_free(k);
  kern_array_free(v);
}

/* Which passes CPU sorts run: the CPU's own, or the tiled ones GPUs run. */
static bool tiled;
static const char *passes(void) { return tiled ? "tiled passes" : "CPU passes"; }
static void use_tiles(bool on) {
  tiled = on;
  rt_sort_tiles_on_cpu(on);
}

/* got (n elements of `size` bytes) is in[perm[i]] for every i; reports the first miss. */
static bool permuted(const void *got, const void *in, const int64_t *perm, int64_t n, size_t size,
                     const char *what, kern_dtype t, int64_t total) {
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)got + (size_t)i * size, (const char *)in + (size_t)perm[i] * size,
               size)) {
      cr_expect(false, "%s, %s, n=%lld: %s[%lld] is not input[%lld] (the stable order)", passes(),
                kern_dtype_name(t), (long long)total, what, (long long)i, (long long)perm[i]);
      return false;
    }
  return true;
}

static const int64_t sort_sizes[] = {
    0, 1, 2, 7, 1000, 8191, 8192, 8193, 3 * 8192 + 17, (1 << 20) + 3};
enum { NSORT_SIZES = sizeof sort_sizes / sizeof sort_sizes[0] };

static void match_the_reference(void) {
  kern_device *d = cpu();
  for (int t = 0; t < NSORT_KEYS; t++)
    for (int s = 0; s < NSORT_SIZES; s++)
      for (int dist = 0; dist < 3; dist++) {
        kern_dtype kt = sort_keys[t];
        int64_t n = sort_sizes[s];
        size_t ks = kern_dtype_size(kt);
        unsigned char *in = sort_input(kt, n, dist, (uint64_t)(t * 100 + s * 3 + dist));
        unsigned char *k = malloc(ks * (size_t)(n ? n : 1));
        uint32_t *places = malloc(4 * (size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++) places[i] = (uint32_t)i;
        int64_t *perm = sort_ref(kt, in, n);
        memcpy(k, in, ks * (size_t)n);
        sort_on(d, kt, k, 0, NULL, n);
        bool ok = permuted(k, in, perm, n, ks, "keys (alone)", kt, n);
        memcpy(k, in, ks * (size_t)n);
        sort_on(d, kt, k, KERN_UINT32, places, n);
        ok = ok && permuted(k, in, perm, n, ks, "keys", kt, n);
        uint32_t *want = malloc(4 * (size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++) want[i] = (uint32_t)perm[i];
        for (int64_t i = 0; ok && i < n; i++)
          if (places[i] != want[i]) {
            cr_expect(false, "%s, %s, n=%lld, dist %d: values[%lld] is %u, the stable order's %u",
                      passes(), kern_dtype_name(kt), (long long)n, dist, (long long)i, places[i],
                      want[i]);
            ok = false;
          }
        free(in), free(k), free(places), free(perm), free(want);
        if (!ok) return;
      }
}

Test(primitives, sort_matches_a_stable_reference_for_every_key_dtype, .timeout = 1200) {
  match_the_reference();
}

/* The passes GPUs run (tiled, 4-bit digits), run on the CPU. */
Test(primitives, sort_matches_it_through_the_tiled_passes, .timeout = 1200) {
  use_tiles(true);
  match_the_reference();
}

/* Values of 1 to 64 bytes (moved with the keys in every pass up to 8 bytes,
 * permuted once at the end through the keys' places beyond), and a struct
 * of 3 bytes (moved as bytes). */
Test(primitives, sort_moves_values_of_every_dtype, .timeout = 900) {
  kern_device *d = cpu();
  kern_module *m = kern_module_from_source("rgb.kern", "struct RGB { uint8 r, g, b; };\n");
  cr_assert(m, "%s", kern_last_error());
  kern_dtype rgb = kern_module_dtype(m, "RGB");
  cr_assert_eq(kern_dtype_size(rgb), 3);
  const kern_dtype vts[] = {KERN_UINT8, KERN_INT16, KERN_FLOAT32, KERN_FLOAT64, KERN_BOOL,
                            KERN_VEC3,  KERN_DVEC3, KERN_MAT44,   KERN_FLOAT16, rgb};
  const int64_t ns[] = {2, 1000, 3 * 8192 + 5};
  for (size_t s = 0; s < 2 * sizeof ns / sizeof ns[0]; s++) {
    use_tiles(s % 2);
    int64_t n = ns[s / 2];
    int32_t *in = sort_input(KERN_INT32, n, 1, (uint64_t)s + 7), *k = malloc(4 * (size_t)n);
    int64_t *perm = sort_ref(KERN_INT32, in, n);
    for (size_t j = 0; j < sizeof vts / sizeof vts[0]; j++) {
      size_t vs = kern_dtype_size(vts[j]);
      unsigned char *v = malloc(vs * (size_t)n), *v0 = malloc(vs * (size_t)n);
      uint64_t r = j + 1;
      for (size_t b = 0; b < vs * (size_t)n; b++) v0[b] = (unsigned char)rng(&r);
      if (vts[j] == KERN_BOOL)
        for (int64_t i = 0; i < n; i++) v0[i] &= 1;
      memcpy(v, v0, vs * (size_t)n);
      memcpy(k, in, 4 * (size_t)n);
      sort_on(d, KERN_INT32, k, vts[j], v, n);
      permuted(k, in, perm, n, 4, "keys", KERN_INT32, n);
      if (!permuted(v, v0, perm, n, vs, kern_dtype_name(vts[j]), KERN_INT32, n))
        cr_log_error("values of dtype %s, %s", kern_dtype_name(vts[j]), passes());
      free(v), free(v0);
    }
    free(in), free(k), free(perm);
  }
  kern_module_free(m);
}

/* The order of float keys, written out: IEEE total order by the bits. */
Test(primitives, sort_orders_floats_by_their_bits, .timeout = 300) {
  static const uint32_t want[] = {
      0xffc00001u, 0xffc00000u, 0xff800001u, /* -NaNs, the larger payload first */
      0xff800000u,                           /* -inf */
      0xff7fffffu, 0xbf800000u, 0x80800000u, /* -FLT_MAX, -1, -FLT_MIN */
      0x80000001u, 0x80000000u,              /* the least negative subnormal, -0 */
      0x00000000u, 0x00000001u,              /* +0, the least subnormal */
      0x3f800000u, 0x7f7fffffu, 0x7f800000u, /* 1, FLT_MAX, +inf */
      0x7f800001u, 0x7fc00000u, 0x7fffffffu  /* NaNs, the smaller payload first */
  };
  enum { W = sizeof want / sizeof want[0], N = 4 * W };
  uint32_t keys[N];
  int32_t vals[N];
  uint64_t r = 99;
  for (int i = 0; i < N; i++) keys[i] = want[i % W];
  for (int i = N - 1; i > 0; i--) { /* shuffle: Fisher-Yates */
    int j = (int)(rng(&r) % (uint64_t)(i + 1));
    uint32_t t = keys[i];
    keys[i] = keys[j], keys[j] = t;
  }
  for (int tiles = 0; tiles < 2; tiles++) {
    uint32_t k[N];
    memcpy(k, keys, sizeof k);
    for (int i = 0; i < N; i++) vals[i] = i; /* the input places */
    use_tiles(tiles);
    sort_on(cpu(), KERN_FLOAT32, k, KERN_INT32, vals, N);
    for (int i = 0; i < N; i++) {
      cr_expect_eq(k[i], want[i / 4], "%s: place %d holds 0x%08x, want 0x%08x", passes(), i, k[i],
                   want[i / 4]);
      if (i % 4) /* four copies of each key keep their input order */
        cr_expect_lt(vals[i - 1], vals[i], "%s: equal keys 0x%08x swapped", passes(), k[i]);
    }
  }
}

/* Equal keys keep their input order, checked without the reference: the
 * values are the input places, so they increase along every run of equal
 * keys. */
Test(primitives, sort_is_stable, .timeout = 600) {
  int64_t n = (1 << 18) + 11;
  int64_t *k = malloc(8 * (size_t)n);
  uint64_t *v = malloc(8 * (size_t)n);
  for (int tiles = 0; tiles < 2; tiles++) {
    for (int64_t i = 0; i < n; i++) k[i] = (i * 7919) % 5 - 2 + ((i % 3) << 40), v[i] = (uint64_t)i;
    use_tiles(tiles);
    sort_on(cpu(), KERN_INT64, k, KERN_UINT64, v, n);
    int64_t runs = 0;
    for (int64_t i = 1; i < n; i++) {
      cr_assert_leq(k[i - 1], k[i], "%s: keys[%lld] > keys[%lld]", passes(), (long long)i - 1,
                    (long long)i);
      if (k[i - 1] == k[i])
        cr_assert_lt(v[i - 1], v[i], "%s: equal keys at %lld and %lld out of input order", passes(),
                     (long long)i - 1, (long long)i);
      else
        runs++;
    }
    cr_expect_eq(runs, 14, "15 distinct keys, %lld boundaries", (long long)runs);
  }
  free(k), free(v);
}

/* Digits every key shares are skipped: keys that differ in one digit (one
 * pass, an odd count: the keys come back from the scratch copy), in two, and
 * not at all (no pass: values stay, wide ones included). */
Test(primitives, sort_skips_digits_every_key_shares, .timeout = 600) {
  kern_device *d = cpu();
  int64_t n = 20000;
  static const uint32_t masks[] = {0xf0000000u, 0x0000f00fu, 0x00ff0000u, 0u};
  for (int m = 0; m < 8; m++) {
    use_tiles(m >= 4);
    uint32_t *in = malloc(4 * (size_t)n), *k = malloc(4 * (size_t)n);
    uint64_t r = 5;
    for (int64_t i = 0; i < n; i++) in[i] = 0x12345678u ^ ((uint32_t)rng(&r) & masks[m % 4]);
    int64_t *perm = sort_ref(KERN_UINT32, in, n);
    kern_dtype vts[] = {KERN_INT32, KERN_VEC3};
    for (int j = 0; j < 2; j++) {
      size_t vs = kern_dtype_size(vts[j]);
      unsigned char *v = malloc(vs * (size_t)n), *v0 = malloc(vs * (size_t)n);
      for (size_t b = 0; b < vs * (size_t)n; b++) v0[b] = (unsigned char)rng(&r);
      memcpy(v, v0, vs * (size_t)n);
      memcpy(k, in, 4 * (size_t)n);
      sort_on(d, KERN_UINT32, k, vts[j], v, n);
      permuted(k, in, perm, n, 4, "keys", KERN_UINT32, n);
      permuted(v, v0, perm, n, vs, kern_dtype_name(vts[j]), KERN_UINT32, n);
      free(v), free(v0);
    }
    memcpy(k, in, 4 * (size_t)n);
    sort_on(d, KERN_UINT32, k, 0, NULL, n);
    permuted(k, in, perm, n, 4, "keys (alone)", KERN_UINT32, n);
    free(in), free(k), free(perm);
  }
}

/* Strided views: every third element of a buffer as keys, every second of
 * another as values (and values wrapped at an odd address, which move as
 * bytes); the elements between are not touched. */
static void strided_views(void) {
  kern_device *d = cpu();
  int64_t n = 9000, nk = 3 * n, nv = 2 * n;
  int32_t *kb = malloc(4 * (size_t)nk), *vb = malloc(4 * (size_t)nv);
  uint64_t r = 11;
  for (int64_t i = 0; i < nk; i++) kb[i] = (int32_t)(rng(&r) % 1000) - 500;
  for (int64_t i = 0; i < nv; i++) vb[i] = (int32_t)i;
  kern_array *ka = kern_array_wrap(kb, d, KERN_INT32, 1, &n, (int64_t[]){12});
  kern_array *va = kern_array_wrap(vb, d, KERN_INT32, 1, &n, (int64_t[]){8});
  cr_assert(ka && va, "%s", kern_last_error());
  int32_t *in = malloc(4 * (size_t)n), *vin = malloc(4 * (size_t)n);
  for (int64_t i = 0; i < n; i++) in[i] = kb[3 * i], vin[i] = vb[2 * i];
  int64_t *perm = sort_ref(KERN_INT32, in, n);
  cr_assert_eq(kern_array_sort(ka, va), KERN_OK, "%s", kern_last_error());
  r = 11;
  for (int64_t i = 0; i < nk; i++) {
    int32_t was = (int32_t)(rng(&r) % 1000) - 500;
    if (i % 3 == 0)
      cr_assert_eq(kb[i], in[perm[i / 3]], "%s: keys[%lld]", passes(), (long long)i / 3);
    else
      cr_assert_eq(kb[i], was, "%s: the element between keys at %lld changed", passes(),
                   (long long)i);
  }
  for (int64_t i = 0; i < nv; i++)
    cr_assert_eq(vb[i], i % 2 ? (int32_t)i : vin[perm[i / 2]], "%s: value buffer[%lld]", passes(),
                 (long long)i);
  kern_array_free(ka), kern_array_free(va);
  /* uint32 values at an odd address: moved as bytes, at the end */
  unsigned char *raw = malloc(4 * (size_t)n + 1), *raw0 = malloc(4 * (size_t)n);
  for (int64_t i = 0; i < 4 * n; i++) raw0[i] = (unsigned char)rng(&r);
  memcpy(raw + 1, raw0, 4 * (size_t)n);
  for (int64_t i = 0; i < n; i++) kb[i] = in[i];
  ka = kern_array_wrap(kb, d, KERN_INT32, 1, &n, NULL);
  va = kern_array_wrap(raw + 1, d, KERN_UINT32, 1, &n, NULL);
  cr_assert(ka && va, "%s", kern_last_error());
  cr_assert_eq(kern_array_sort(ka, va), KERN_OK, "%s", kern_last_error());
  permuted(kb, in, perm, n, 4, "keys", KERN_INT32, n);
  permuted(raw + 1, raw0, perm, n, 4, "unaligned uint32 values", KERN_INT32, n);
  kern_array_free(ka), kern_array_free(va);
  free(kb), free(vb), free(in), free(vin), free(perm), free(raw), free(raw0);
}

Test(primitives, sort_works_on_strided_views, .timeout = 600) {
  strided_views();
  use_tiles(true);
  strided_views();
}

static void sort_refused(kern_array *k, kern_array *v, const char *msg) {
  cr_expect_eq(kern_array_sort(k, v), KERN_ERR_INVALID_ARGUMENT, "not refused: %s", msg);
  cr_expect(strstr(kern_last_error(), msg), "'%s' does not say '%s'", kern_last_error(), msg);
}

Test(primitives, sort_arguments_are_checked) {
  kern_device *d = cpu();
  int64_t n = 10, sh[2] = {2, 5};
  kern_array *k = array_of(KERN_INT32, n, (int32_t[]){9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  kern_array *v = array_of(KERN_INT32, n, NULL), *v9 = array_of(KERN_INT32, 9, NULL);
  kern_array *k2 = kern_array_new(d, KERN_INT32, 2, sh), *kd = array_of(KERN_FLOAT64, n, NULL);
  kern_array *k16 = array_of(KERN_INT16, n, NULL);
  kern_array *head = kern_array_view(k, 1, (int64_t[]){0}, (int64_t[]){5});
  kern_array *tail = kern_array_view(k, 1, (int64_t[]){5}, (int64_t[]){5});
  kern_array *mid = kern_array_view(k, 1, (int64_t[]){3}, (int64_t[]){5});
  kern_device *d2 = rt_device_add(RT_DEV_CPU, 7, &rt_cpu_ops, NULL);
  cr_assert(d2);
  snprintf(d2->name, sizeof d2->name, "cpu2");
  kern_array *vo = kern_array_new(d2, KERN_INT32, 1, &n);
  int32_t one = 0;
  int64_t huge = 16 * (int64_t)INT32_MAX + 1;
  kern_array *big = kern_array_wrap(&one, d, KERN_UINT32, 1, &huge, (int64_t[]){0});
  cr_assert(big && vo && k2, "%s", kern_last_error());
  sort_refused(NULL, v, "kern_array_sort: keys is NULL");
  sort_refused(k2, NULL, "kern_array_sort: keys must be 1-D, got 2 dims");
  sort_refused(kd, NULL,
               "keys has dtype float64; expected int32, uint32, int64, uint64 or float32");
  sort_refused(k16, v, "keys has dtype int16");
  sort_refused(k, k2, "values must be 1-D, got 2 dims");
  sort_refused(k, v9, "values has 9 elements but keys has 10");
  sort_refused(k, vo, "values is on cpu2 but keys is on cpu");
  sort_refused(k, k, "values overlaps keys");
  sort_refused(head, mid, "values overlaps keys");
  sort_refused(big, NULL, "keys has 34359738353 elements; at most 34359738352 can be sorted");
  /* nothing ran: the keys are as written */
  int32_t got[10];
  cr_assert_eq(kern_array_read(k, got, sizeof got), KERN_OK);
  for (int i = 0; i < 10; i++) cr_expect_eq(got[i], 9 - i, "keys[%d] changed to %d", i, got[i]);
  /* halves of one array do not overlap: the head sorts, the tail moves alongside */
  cr_expect_eq(kern_array_sort(head, tail), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(k, got, sizeof got), KERN_OK);
  for (int i = 0; i < 10; i++)
    cr_expect_eq(got[i], i < 5 ? 5 + i : i - 5, "keys[%d] is %d after sorting the head", i, got[i]);
  kern_array *all[] = {k, v, v9, k2, kd, k16, head, tail, mid, vo, big};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) kern_array_free(all[i]);
}

static void sort_in_a_capture(void) {
  kern_device *d = cpu();
  int64_t n = 50000;
  kern_array *k = array_of(KERN_FLOAT32, n, NULL), *v = array_of(KERN_INT32, n, NULL);
  cr_assert_eq(kern_capture_begin(d), KERN_OK);
  cr_expect_eq(kern_array_sort(k, v), KERN_OK, "%s", kern_last_error());
  kern_graph *g = NULL;
  cr_assert_eq(kern_capture_end(d, &g), KERN_OK, "%s", kern_last_error());
  for (int round = 0; round < 2; round++) {
    float *in = sort_input(KERN_FLOAT32, n, round, (uint64_t)round + 3),
          *got = malloc(4 * (size_t)n);
    int32_t *places = malloc(4 * (size_t)n);
    for (int64_t i = 0; i < n; i++) places[i] = (int32_t)i;
    cr_assert_eq(kern_array_write(k, in, 4 * (size_t)n), KERN_OK);
    cr_assert_eq(kern_array_write(v, places, 4 * (size_t)n), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
    int64_t *perm = sort_ref(KERN_FLOAT32, in, n);
    cr_assert_eq(kern_array_read(k, got, 4 * (size_t)n), KERN_OK);
    cr_assert_eq(kern_array_read(v, places, 4 * (size_t)n), KERN_OK);
    permuted(got, in, perm, n, 4, "captured keys", KERN_FLOAT32, n);
    for (int64_t i = 0; i < n; i++)
      if (places[i] != (int32_t)perm[i]) {
        cr_expect(false, "%s, replay %d: values[%lld] is %d, want %lld", passes(), round,
                  (long long)i, places[i], (long long)perm[i]);
        break;
      }
    free(in), free(got), free(places), free(perm);
  }
  kern_graph_free(g);
  kern_array_free(k), kern_array_free(v);
}

Test(primitives, sort_inside_a_cpu_capture, .timeout = 600) {
  sort_in_a_capture();
  use_tiles(true);
  sort_in_a_capture();
}

Test(primitives, every_sort_module_fits_a_gpu_block_and_compiles_through_nvrtc, .timeout = 600) {
  const char *why = NULL;
  bool nvrtc = tc_nvrtc_load(&why);
  if (!nvrtc)
    cr_log_warn("NVRTC is not available (%s): checking the shared-memory sizes only", why);
  for (int kb = 4; kb <= 8; kb += 4)
    for (int wb = 1; wb <= 8; wb *= 2) {
      char *src = rt_sort_source(kb, wb);
      cr_assert(src);
      kern_module *m = kern_module_from_source("sort_check", src);
      cr_assert(m, "%s\n%s", kern_last_error(), src);
      for (int k = 0; k < m->nkernels; k++)
        cr_expect_leq(m->kernels[k].tile_bytes, RT_TILE_SHARED_LIMIT,
                      "keys of %d bytes, words of %d: kernel %s needs %lld bytes", kb, wb,
                      m->kernels[k].name, (long long)m->kernels[k].tile_bytes);
      kern_module_free(m);
      if (nvrtc) {
        FrontResult r = front_compile("sort.kern", src, strlen(src));
        cr_assert(r.ok);
        EmitOptions o = {.line_directives = true};
        char *cu = emit_program(r.prog, EMIT_CUDA, &o), *out = NULL;
        size_t len;
        bool is_ptx;
        cr_expect_eq(tc_nvrtc_compile(cu, "sort.kern", 90, false, false, &out, &len, &is_ptx),
                     KERN_OK, "keys of %d bytes, words of %d: %s", kb, wb, kern_last_error());
        free(out);
        free(cu);
        front_free(r.prog);
      }
      free(src);
    }
}
