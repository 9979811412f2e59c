/* test_matmul.c: tile_matmul and kern_array_matmul on the CPU.
 *
 * EXACT is checked bit for bit against a plain C reference: each c[i,j] is
 * fma(a[i,k], b[k,j], acc) for k ascending from acc = +0.0 (or c's element in
 * the accumulating form). The inputs mix magnitudes (1e-3 to 1e3, both
 * signs), so another order or an unfused step changes bits. Shapes: 1x1x1,
 * 7x13x5, 64x64x64, 100x37x300 and 300x100x37 (M x K x N, none a multiple of
 * the kernels' blocks but 64), float32 and float64, a view inside a larger
 * array and a transpose through strides; the zero padding past the edges
 * keeps a -0.0 result (an underflowing product). FAST: on the CPU the same
 * chain on inputs rounded to TF32 (to nearest, ties away from zero) or from float16, bit for
 * bit, and within the documented error bound of a float64 reference.
 * Bad arguments give KERN_ERR_INVALID_ARGUMENT with a message. The library's
 * matmul kernels compile through NVRTC (no GPU needed): for sm_90 with the
 * tensor-core instructions, for sm_75 without them.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "front.h"
#include "kern.h"
#include "matmul_inputs.h"
#include "nvrtc.h"
#include "toolchain.h"

static kern_device *cpu(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *d = kern_device_get("cpu");
  cr_assert(d);
  return d;
}

/* The reference: row-major a (m x k), b (k x n); c0 may be NULL (+0.0). */
static void ref_f32(const float *a, const float *b, const float *c0, float *c, int m, int k,
                    int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float acc = c0 ? c0[i * n + j] : 0.0f;
      for (int p = 0; p < k; p++) acc = fmaf(a[i * k + p], b[p * n + j], acc);
      c[i * n + j] = acc;
    }
}
static void ref_f64(const double *a, const double *b, const double *c0, double *c, int m, int k,
                    int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double acc = c0 ? c0[i * n + j] : 0.0;
      for (int p = 0; p < k; p++) acc = fma(a[i * k + p], b[p * n + j], acc);
      c[i * n + j] = acc;
    }
}

static void expect_same(const void *got, const void *want, int n, size_t es, const char *what) {
  for (int i = 0; i < n; i++)
    if (memcmp((const char *)got + i * es, (const char *)want + i * es, es)) {
      double g = es == 4 ? ((const float *)got)[i] : ((const double *)got)[i];
      double w = es == 4 ? ((const float *)want)[i] : ((const double *)want)[i];
      cr_expect(false, "%s: element %d (row %d): got %.17g, the fma chain gives %.17g", what, i, i,
                g, w);
      return;
    }
}

/* ---- tile_matmul in a kernel --------------------------------------------------------------- */

static const char *const tile_src =
    "const int M = %d;\nconst int K = %d;\nconst int N = %d;\n"
    "kernel void mm(%s[,] a, %s[,] b, %s[,] c0, %s[,] p, %s[,] q) {\n"
    "  tile<%s, M, K> ta = tile_load<M, K>(a, 0, 0);\n"
    "  tile<%s, K, N> tb = tile_load<K, N>(b, 0, 0);\n"
    "  tile_store(p, 0, 0, tile_matmul(ta, tb));\n"
    "  tile<%s, M, N> acc = tile_load<M, N>(c0, 0, 0);\n"
    "  acc = tile_matmul(ta, tb, acc);\n"
    "  tile_store(q, 0, 0, acc);\n"
    "}\n";

static void tile_case(int m, int k, int n, bool dbl) {
  const char *t_name = dbl ? "double" : "float";
  char full[1200];
  snprintf(full, sizeof full, tile_src, m, k, n, t_name, t_name, t_name, t_name, t_name, t_name,
           t_name, t_name);
  kern_module *mod = kern_module_from_source("tile_matmul", full);
  cr_assert(mod, "%s", kern_last_error());
  kern_kernel *kk = kern_module_kernel(mod, "mm");
  cr_assert(kk);
  kern_device *d = cpu();
  size_t es = dbl ? 8 : 4;
  kern_dtype t = dbl ? KERN_FLOAT64 : KERN_FLOAT32;
  void *a = malloc(es * m * k), *b = malloc(es * k * n), *c0 = malloc(es * m * n);
  void *want = malloc(es * m * n), *got = malloc(es * m * n);
  for (int i = 0; i < m * k; i++)
    dbl ? (((double *)a)[i] = th_mm_input(i)) : (((float *)a)[i] = (float)th_mm_input(i));
  for (int i = 0; i < k * n; i++)
    dbl ? (((double *)b)[i] = th_mm_input(i + 17)) : (((float *)b)[i] = (float)th_mm_input(i + 17));
  for (int i = 0; i < m * n; i++)
    dbl ? (((double *)c0)[i] = th_mm_input(i + 5)) : (((float *)c0)[i] = (float)th_mm_input(i + 5));
  kern_array *aa = th_mm_array(d, t, m, k, a), *ab = th_mm_array(d, t, k, n, b),
             *ac = th_mm_array(d, t, m, n, c0), *ap = th_mm_array(d, t, m, n, NULL),
             *aq = th_mm_array(d, t, m, n, NULL);
  kern_dims one = {1, {1}};
  cr_assert_eq(KERN_LAUNCH(kk, d, one, aa, ab, ac, ap, aq), KERN_OK, "%s", kern_last_error());
  char what[64];
  for (int acc = 0; acc < 2; acc++) {
    if (dbl)
      ref_f64(a, b, acc ? c0 : NULL, want, m, k, n);
    else
      ref_f32(a, b, acc ? c0 : NULL, want, m, k, n);
    cr_assert_eq(kern_array_read(acc ? aq : ap, got, es * m * n), KERN_OK);
    snprintf(what, sizeof what, "tile_matmul %dx%dx%d %s%s", m, k, n, dbl ? "f64" : "f32",
             acc ? " accumulating" : "");
    expect_same(got, want, m * n, es, what);
  }
  kern_array *all[] = {aa, ab, ac, ap, aq};
  for (int i = 0; i < 5; i++) kern_array_free(all[i]);
  kern_module_free(mod);
  free(a), free(b), free(c0), free(want), free(got);
}

Test(tile_matmul, fma_chain_bits) {
  tile_case(1, 1, 1, false);
  tile_case(7, 13, 5, false);
  tile_case(16, 16, 16, false);
  tile_case(9, 33, 20, false); /* register blocks and their edges */
  tile_case(7, 13, 5, true);
  tile_case(12, 9, 17, true);
}

/* ---- kern_array_matmul ---------------------------------------------------------------------- */

static void array_case(int m, int k, int n, bool dbl) {
  kern_device *d = cpu();
  size_t es = dbl ? 8 : 4;
  kern_dtype t = dbl ? KERN_FLOAT64 : KERN_FLOAT32;
  void *a = malloc(es * m * k), *b = malloc(es * k * n), *want = malloc(es * m * n),
       *got = malloc(es * m * n);
  for (int i = 0; i < m * k; i++)
    dbl ? (((double *)a)[i] = th_mm_input(i)) : (((float *)a)[i] = (float)th_mm_input(i));
  for (int i = 0; i < k * n; i++)
    dbl ? (((double *)b)[i] = th_mm_input(i + 3)) : (((float *)b)[i] = (float)th_mm_input(i + 3));
  kern_array *aa = th_mm_array(d, t, m, k, a), *ab = th_mm_array(d, t, k, n, b),
             *ac = th_mm_array(d, t, m, n, NULL);
  cr_assert_eq(kern_array_matmul(aa, ab, ac, KERN_MATMUL_EXACT), KERN_OK, "%s", kern_last_error());
  if (dbl)
    ref_f64(a, b, NULL, want, m, k, n);
  else
    ref_f32(a, b, NULL, want, m, k, n);
  cr_assert_eq(kern_array_read(ac, got, es * m * n), KERN_OK);
  char what[64];
  snprintf(what, sizeof what, "kern_array_matmul %dx%dx%d %s", m, k, n, dbl ? "f64" : "f32");
  expect_same(got, want, m * n, es, what);
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac);
  free(a), free(b), free(want), free(got);
}

Test(array_matmul, exact_shapes_f32, .timeout = 600) {
  int s[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {100, 37, 300}, {300, 100, 37}, {65, 17, 129}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) array_case(s[i][0], s[i][1], s[i][2], false);
}

Test(array_matmul, exact_shapes_f64, .timeout = 600) {
  int s[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {100, 37, 300}, {33, 17, 31}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) array_case(s[i][0], s[i][1], s[i][2], true);
}

/* -1e-30 * 1e-30 underflows to -0.0; the 15 padded steps of the block of k
 * must leave it -0.0 (a padding of +0.0 * +0.0 would make it +0.0). */
Test(array_matmul, padding_keeps_negative_zero) {
  kern_device *d = cpu();
  float a[2] = {-1e-30f, 2.0f}, b[2] = {1e-30f, -0.0f}, c[4];
  kern_array *aa = th_mm_array(d, KERN_FLOAT32, 2, 1, a),
             *ab = th_mm_array(d, KERN_FLOAT32, 1, 2, b),
             *ac = th_mm_array(d, KERN_FLOAT32, 2, 2, NULL);
  cr_assert_eq(kern_array_matmul(aa, ab, ac, KERN_MATMUL_EXACT), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ac, c, sizeof c), KERN_OK);
  float want[4];
  ref_f32(a, b, NULL, want, 2, 1, 2);
  cr_expect(signbit(want[0]) && want[0] == 0.0f, "the reference's c[0,0] is -0.0");
  expect_same(c, want, 4, 4, "1x1 blocks with -0.0 results");
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac);
}

/* a: a 37x20 window of a 50x40 array; b: a transpose through strides. */
Test(array_matmul, views_and_transposes) {
  kern_device *d = cpu();
  enum { M = 37, K = 20, N = 23 };
  float big[50 * 40], bt[N * K], a[M * K], b[K * N], want[M * N], got[M * N];
  for (int i = 0; i < 50 * 40; i++) big[i] = (float)th_mm_input(i);
  for (int i = 0; i < N * K; i++) bt[i] = (float)th_mm_input(i + 11);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < K; j++) a[i * K + j] = big[(i + 5) * 40 + j + 3];
  for (int i = 0; i < K; i++)
    for (int j = 0; j < N; j++) b[i * N + j] = bt[j * K + i];
  kern_array *whole = th_mm_array(d, KERN_FLOAT32, 50, 40, big);
  int64_t off[2] = {5, 3}, shape[2] = {M, K};
  kern_array *av = kern_array_view(whole, 2, off, shape);
  int64_t bshape[2] = {K, N}, bstrides[2] = {4, 4 * K};
  kern_array *bv = kern_array_wrap(bt, d, KERN_FLOAT32, 2, bshape, bstrides);
  cr_assert(av && bv, "%s", kern_last_error());
  /* c: a window of a larger array too */
  kern_array *cbig = th_mm_array(d, KERN_FLOAT32, M + 2, N + 4, NULL);
  int64_t coff[2] = {1, 2}, cshape[2] = {M, N};
  kern_array *cv = kern_array_view(cbig, 2, coff, cshape);
  cr_assert_eq(kern_array_matmul(av, bv, cv, KERN_MATMUL_EXACT), KERN_OK, "%s", kern_last_error());
  ref_f32(a, b, NULL, want, M, K, N);
  cr_assert_eq(kern_array_read(cv, got, sizeof got), KERN_OK);
  expect_same(got, want, M * N, 4, "a view times a transpose into a view");
  float *cb = calloc((M + 2) * (N + 4), 4);
  cr_assert_eq(kern_array_read(cbig, cb, 4 * (M + 2) * (N + 4)), KERN_OK);
  for (int j = 0; j < N + 4; j++) cr_expect_eq(cb[j], 0.0f, "the row above c's view was written");
  free(cb);
  kern_array *all[] = {whole, av, bv, cbig, cv};
  for (int i = 0; i < 5; i++) kern_array_free(all[i]);
}

/* ---- FAST ------------------------------------------------------------------------------------ */

/* The documented bound: |fast - exact| <= (2 u_in + (K + 2) 2^-22) sum_k |a||b|,
 * u_in = 2^-11 for TF32 inputs and 0 for float16 ones. */
static void fast_case(int m, int k, int n, th_mm_fast f) {
  kern_device *d = cpu();
  bool half = f != TH_MM_TF32;
  float *a = malloc(4 * m * k), *b = malloc(4 * k * n), *ra = malloc(4 * m * k),
        *rb = malloc(4 * k * n), *want = malloc(4 * m * n), *got = malloc(4 * m * n);
  uint16_t *ha = malloc(2 * m * k), *hb = malloc(2 * k * n);
  for (int i = 0; i < m * k; i++) {
    a[i] = th_mm_fast_value(f, i, false);
    ha[i] = th_mm_fast_bits(f, a[i]);
    ra[i] = half ? a[i] : th_mm_tf32(a[i]);
  }
  for (int i = 0; i < k * n; i++) {
    b[i] = th_mm_fast_value(f, i, true);
    hb[i] = th_mm_fast_bits(f, b[i]);
    rb[i] = half ? b[i] : th_mm_tf32(b[i]);
  }
  kern_dtype t = th_mm_fast_dtype(f);
  kern_array *aa = th_mm_array(d, t, m, k, half ? (void *)ha : a),
             *ab = th_mm_array(d, t, k, n, half ? (void *)hb : b),
             *ac = th_mm_array(d, KERN_FLOAT32, m, n, NULL);
  cr_assert_eq(kern_array_matmul(aa, ab, ac, KERN_MATMUL_FAST), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ac, got, 4 * m * n), KERN_OK);
  ref_f32(ra, rb, NULL, want, m, k, n);
  char what[64];
  snprintf(what, sizeof what, "FAST %s %dx%dx%d on the CPU", th_mm_fast_name(f), m, k, n);
  expect_same(got, want, m * n, 4, what);
  double u_in = half ? 0 : ldexp(1, -11), worst = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double exact = 0, mag = 0;
      for (int p = 0; p < k; p++) {
        exact += (double)a[i * k + p] * b[p * n + j];
        mag += fabs((double)a[i * k + p] * b[p * n + j]);
      }
      double bound = (2 * u_in + (k + 2) * ldexp(1, -22)) * mag;
      double err = fabs(got[i * n + j] - exact);
      if (mag > 0 && err / mag > worst) worst = err / mag;
      cr_expect(err <= bound, "%s c[%d,%d]: error %g over the bound %g", what, i, j, err, bound);
      if (err > bound) goto out;
    }
out:
  cr_log_info("%s: worst error %.3g of sum |a||b|", what, worst);
  /* TF32 rounding really happened: an exact float32 product differs somewhere */
  if (!half) {
    float *exact32 = malloc(4 * m * n);
    ref_f32(a, b, NULL, exact32, m, k, n);
    cr_expect(memcmp(exact32, got, 4 * m * n) != 0, "FAST float32 gave EXACT's bits");
    free(exact32);
  }
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac);
  free(a), free(b), free(ra), free(rb), free(want), free(got), free(ha), free(hb);
}

Test(array_matmul, fast_tf32_f16_and_bf16, .timeout = 600) {
  for (th_mm_fast f = TH_MM_TF32; f <= TH_MM_BF16; f++) {
    fast_case(7, 13, 5, f);
    fast_case(f == TH_MM_TF32 ? 100 : 96, f == TH_MM_TF32 ? 37 : 40, f == TH_MM_TF32 ? 130 : 70, f);
  }
}

/* A product with the identity gives each rounded element of a back exactly:
 * the CPU rounds ties as the reference (and cvt.rna on a GPU) does. */
Test(array_matmul, fast_tf32_rounds_ties_away_from_zero, .timeout = 120) {
  th_mm_tf32_ties(cpu(), 37, 64, false);
  th_mm_tf32_ties(cpu(), 37, 64, true);
}

/* NaNs, infinities and the values TF32 rounds to one, in a and in b, give
 * what float arithmetic gives on the rounded inputs; a NaN with only low
 * payload bits becomes an infinity, as on a GPU. */
Test(array_matmul, fast_tf32_nans_and_infinities, .timeout = 120) {
  th_mm_tf32_specials(cpu(), false);
  th_mm_tf32_specials(cpu(), true);
}

/* The reference's rounding. */
Test(tf32, rounding_to_nearest_ties_away_from_zero) {
  cr_expect_eq(th_mm_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f, "a tie rounds away from zero (up)");
  cr_expect_eq(th_mm_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f, "a tie rounds away from zero (up)");
  cr_expect_eq(th_mm_tf32(-1.0f - 0x1p-11f), -1.0f - 0x1p-10f, "a negative tie rounds away (down)");
  cr_expect_eq(th_mm_tf32(1.0f + 0x1p-11f - 0x1p-23f), 1.0f, "below a tie rounds down");
  cr_expect_eq(th_mm_tf32(1.0f + 0x1p-11f + 0x1p-23f), 1.0f + 0x1p-10f, "above a tie rounds up");
  cr_expect(isinf(th_mm_tf32(0x1.fffffep127f)), "the largest float rounds to infinity");
  cr_expect(isinf(th_mm_tf32(th_mm_bits_f(0x7f800001u))), "a NaN of low payload is cut to inf");
  cr_expect(isnan(th_mm_tf32(th_mm_bits_f(0x7fffffffu))), "a NaN of full payload stays a NaN");
  cr_expect(isnan(th_mm_tf32(th_mm_bits_f(0xffc00000u))), "a quiet NaN stays a NaN");
}

/* ---- bad arguments ---------------------------------------------------------------------------- */

static void expect_bad(const kern_array *a, const kern_array *b, kern_array *c, kern_matmul_mode m,
                       const char *needle) {
  cr_expect_eq(kern_array_matmul(a, b, c, m), KERN_ERR_INVALID_ARGUMENT, "expected a refusal (%s)",
               needle);
  cr_expect(strstr(kern_last_error(), needle), "message '%s' lacks '%s'", kern_last_error(),
            needle);
}

Test(array_matmul, bad_arguments) {
  kern_device *d = cpu();
  kern_array *a = th_mm_array(d, KERN_FLOAT32, 3, 4, NULL),
             *b = th_mm_array(d, KERN_FLOAT32, 5, 2, NULL),
             *b2 = th_mm_array(d, KERN_FLOAT32, 4, 2, NULL),
             *c = th_mm_array(d, KERN_FLOAT32, 3, 2, NULL),
             *c33 = th_mm_array(d, KERN_FLOAT32, 3, 3, NULL),
             *ai = th_mm_array(d, KERN_INT32, 3, 4, NULL),
             *bi = th_mm_array(d, KERN_INT32, 4, 2, NULL),
             *ah = th_mm_array(d, KERN_FLOAT16, 3, 4, NULL),
             *bh = th_mm_array(d, KERN_FLOAT16, 4, 2, NULL),
             *ch = th_mm_array(d, KERN_FLOAT16, 3, 2, NULL),
             *ad = th_mm_array(d, KERN_FLOAT64, 3, 4, NULL),
             *bd = th_mm_array(d, KERN_FLOAT64, 4, 2, NULL);
  int64_t n = 8;
  kern_array *v = kern_array_new(d, KERN_FLOAT32, 1, &n);
  expect_bad(a, b, c, KERN_MATMUL_EXACT, "inner dimensions differ");
  expect_bad(a, b2, c33, KERN_MATMUL_EXACT, "c is 3 x 3 but a x b is 3 x 2");
  expect_bad(ai, bi, c, KERN_MATMUL_EXACT, "float32 or float64");
  expect_bad(ah, bh, c, KERN_MATMUL_EXACT, "not float16 into float32");
  expect_bad(ad, bd, c, KERN_MATMUL_FAST, "not float64 into float32");
  expect_bad(ah, bh, ch, KERN_MATMUL_FAST, "not float16 into float16");
  expect_bad(a, bd, c, KERN_MATMUL_EXACT, "must be of one dtype");
  expect_bad(v, b2, c, KERN_MATMUL_EXACT, "must be 2-D");
  expect_bad(NULL, b2, c, KERN_MATMUL_EXACT, "array a is NULL");
  expect_bad(a, b2, c, (kern_matmul_mode)7, "mode 7");
  kern_array *all[] = {a, b, b2, c, c33, ai, bi, ah, bh, ch, ad, bd, v};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) kern_array_free(all[i]);
}

/* ---- the generated CUDA --------------------------------------------------------------------- */

static char *ptx_of(const char *path, int arch, bool debug) {
  FrontResult r = front_compile(path, NULL, 0);
  cr_assert(r.ok, "%s does not check", path);
  EmitOptions o = {.debug = debug, .line_directives = true};
  char *src = emit_program(r.prog, EMIT_CUDA, &o), *out = NULL;
  size_t len;
  bool is_ptx;
  cr_assert(src);
  cr_assert_eq(tc_nvrtc_compile(src, path, arch, false, debug, &out, &len, &is_ptx), KERN_OK,
               "sm_%d debug=%d: %s", arch, debug, kern_last_error());
  free(src);
  front_free(r.prog);
  return out;
}

Test(nvrtc, matmul_kernels_compile_with_tensor_cores_on_sm_80_and_newer, .timeout = 600) {
  const char *why;
  if (!tc_nvrtc_load(&why))
    cr_skip_test("NVRTC not available (%s): CUDA compile checks skipped", why);
  const char *path = KERN_TESTS_DIR "/../runtime/kern/matmul.kern";
  char *p90 = ptx_of(path, 90, false), *p75 = ptx_of(path, 75, false),
       *d90 = ptx_of(path, 90, true);
  cr_expect(strstr(p90, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
            "no TF32 mma.sync in the sm_90 PTX");
  cr_expect(strstr(p90, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
            "no float16 mma.sync in the sm_90 PTX");
  cr_expect(strstr(p90, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
            "no bfloat16 mma.sync in the sm_90 PTX");
  cr_expect(strstr(p90, "fma.rn.f32") && strstr(p90, "fma.rn.f64"), "EXACT without fma.rn");
  cr_expect(!strstr(p75, "mma.sync"), "sm_75 PTX uses mma.sync");
  cr_expect(strstr(d90, ".entry"), "debug PTX without an entry");
  free(p90), free(p75), free(d90);
}
