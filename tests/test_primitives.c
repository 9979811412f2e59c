/* test_primitives.c: kern_array_sum, _min, _max and _scan on the CPU, bit for
 * bit against plain-C references of the documented orders.
 *
 * The references work on the whole array, never in chunks: a sum is the
 * pairwise tree over [0, 2^K) computed bottom-up (a node whose right half is
 * absent is its left half); a scan's exclusive prefix of i is the left fold of
 * the tree nodes of the blocks i's binary digits name, largest first. Float
 * inputs span many magnitudes, so other orders give other bits (checked).
 * Sizes 0, 1, 7, 1000, 4097 and 2^20 + 3 cross the primitives' chunk sizes and
 * need one, two and three passes. Also: integers exactly, the accumulator
 * dtypes, NaN and -0 in min/max, argument errors, a CPU graph capture, the
 * same bits on 1 and 3 threads, and that every module's CUDA compiles through
 * NVRTC and fits a GPU block (no GPU needed).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"
#include "nvrtc.h"
#include "toolchain.h"

static const int64_t sizes[] = {1, 7, 1000, 4097, (1 << 20) + 3};
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
