/* test_libm.c: kern's own transcendental functions (stdlib/kern_libm.h),
 * through kern kernels launched on the "cpu" device.
 *
 * Requires the stdlib headers on the include path (for the same code compiled
 * into this file, to pick inputs where the host's libm differs) and NVRTC for
 * the PTX check (skipped, saying so, without it). Every function of
 * tests/support/libm_cases.h runs on special values, a sweep over the bit
 * patterns, its main range and magnitudes 2^-40..2^40; each result is
 * measured in ulps of its type against the long double libm. The maxima are
 * the ones docs/language.md documents: float64 within 1 ulp, float32 within
 * 1 ulp (the float64 result rounded once). Also: C99 Annex F's special
 * values and kern's NaN bits, the componentwise vector forms, the platform's
 * functions in a fast-math module, and the GPU code free of fused
 * multiply-adds and approximate instructions.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "emit.h"
#include "front.h"
#include "kern.h"
#include "nvrtc.h"
#include "toolchain.h"

#include "kern_builtins.h"
#include "kern_libm.h"

#include "libm_cases.h"

#define LM_N (1 << 16)

/* |got - want| in ulps of the result type (float32 when f32); an infinite
 * or NaN result must match exactly (1e9 otherwise). */
static double lm_ulps(double got, long double want, int f32) {
  if (want != want) return got != got ? 0.0 : 1e9;
  if (got != got) return 1e9;
  double w = f32 ? (double)(float)want : (double)want;
  if (isinf(w) || isinf(got)) return w == got ? 0.0 : 1e9;
  double u = f32 ? (double)(nextafterf(fabsf((float)w), INFINITY) - fabsf((float)w))
                 : nextafter(fabs(w), INFINITY) - fabs(w);
  if (isinf(u)) u = f32 ? 0x1p104 : 0x1p971;
  return (double)(fabsl((long double)got - want) / (long double)u);
}

static long double lm_ref(const lm_fn *f, double x, double y) {
  return f->ref2 ? f->ref2((long double)x, (long double)y) : f->ref1((long double)x);
}

/* The worst ulps of function f in one type over LM_N inputs; *at the input. */
static double lm_worst(kern_module *m, kern_device *cpu, const lm_fn *f, int f32, double *at) {
  double *x = malloc(LM_N * 8), *y = malloc(LM_N * 8), *out = malloc(LM_N * 8), worst = 0;
  float *xf = malloc(LM_N * 4), *yf = malloc(LM_N * 4), *of = malloc(LM_N * 4);
  char name[32];
  lm_inputs(f, f32, x, y, LM_N);
  snprintf(name, sizeof name, "%c_%s", f32 ? 'f' : 'd', f->name);
  if (f32) {
    for (int i = 0; i < LM_N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i];
    lm_run(m, cpu, name, KERN_FLOAT32, LM_N, xf, yf, of);
    for (int i = 0; i < LM_N; i++) out[i] = of[i];
  } else {
    lm_run(m, cpu, name, KERN_FLOAT64, LM_N, x, y, out);
  }
  for (int i = 0; i < LM_N; i++) {
    double e = lm_ulps(out[i], lm_ref(f, x[i], y[i]), f32);
    if (e > worst) worst = e, *at = x[i];
  }
  free(x), free(y), free(out), free(xf), free(yf), free(of);
  return worst;
}

static kern_module *lm_cpu_module(kern_device **cpu) {
  cr_assert_eq(kern_init(), KERN_OK);
  *cpu = kern_device_get("cpu");
  kern_module *m = lm_module();
  cr_assert(m, "%s", kern_last_error());
  return m;
}

static void lm_sweep(int f32, double bound) {
  kern_device *cpu;
  kern_module *m = lm_cpu_module(&cpu);
  double all = 0;
  for (int i = 0; i < LM_NFNS; i++) {
    double at = 0, w = lm_worst(m, cpu, &lm_fns[i], f32, &at);
    fprintf(stderr, "%s %-5s worst %.3f ulp (at %a)\n", f32 ? "float32" : "float64", lm_fns[i].name,
            w, at);
    cr_expect(w <= bound, "%s %s: %.3f ulp at %a", f32 ? "float32" : "float64", lm_fns[i].name, w,
              at);
    all = fmax(all, w);
  }
  fprintf(stderr, "%s: worst of all %.3f ulp\n", f32 ? "float32" : "float64", all);
  kern_module_free(m);
}

Test(libm, float64_within_1_ulp, .timeout = 300) { lm_sweep(0, 1.0); }
Test(libm, float32_within_1_ulp, .timeout = 300) { lm_sweep(1, 1.0); }

/* ---- special values -------------------------------------------------------------- */

typedef struct lm_case {
  const char *fn;
  double x, y, want; /* want compared bit for bit (NaN: the default quiet NaN) */
} lm_case;

#define INF  INFINITY
#define DNAN NAN
static const lm_case lm_cases[] = {
    {"exp", 0.0, 0, 1.0},
    {"exp", -0.0, 0, 1.0},
    {"exp", INF, 0, INF},
    {"exp", -INF, 0, 0.0},
    {"exp", 710.0, 0, INF},
    {"exp", -746.0, 0, 0.0},
    {"exp", 1.0, 0, M_E},
    {"exp2", 10.0, 0, 1024.0},
    {"exp2", -1074.0, 0, 0x1p-1074},
    {"exp2", 1024.0, 0, INF},
    {"exp2", -INF, 0, 0.0},
    {"exp2", -1075.0, 0, 0.0},
    {"log", 1.0, 0, 0.0},
    {"log", 0.0, 0, -INF},
    {"log", -0.0, 0, -INF},
    {"log", INF, 0, INF},
    {"log", -1.0, 0, DNAN},
    {"log", -INF, 0, DNAN},
    {"log2", 0x1p-1074, 0, -1074.0},
    {"log2", 1024.0, 0, 10.0},
    {"log10", 1000.0, 0, 3.0},
    {"log10", 1e-300, 0, -300.0},
    {"log2", -0.5, 0, DNAN},
    {"sin", -0.0, 0, -0.0},
    {"sin", 0x1p-1074, 0, 0x1p-1074},
    {"sin", INF, 0, DNAN},
    {"cos", -INF, 0, DNAN},
    {"cos", 0.0, 0, 1.0},
    {"tan", -0.0, 0, -0.0},
    {"tan", INF, 0, DNAN},
    {"asin", 1.0, 0, M_PI_2},
    {"asin", -0.0, 0, -0.0},
    {"asin", 1.5, 0, DNAN},
    {"acos", 1.0, 0, 0.0},
    {"acos", -1.0, 0, M_PI},
    {"acos", -1.0000001, 0, DNAN},
    {"atan", INF, 0, M_PI_2},
    {"atan", -INF, 0, -M_PI_2},
    {"atan", -0.0, 0, -0.0},
    {"sinh", -0.0, 0, -0.0},
    {"sinh", -INF, 0, -INF},
    {"sinh", 711.0, 0, INF},
    {"cosh", -INF, 0, INF},
    {"cosh", 0.0, 0, 1.0},
    {"tanh", -INF, 0, -1.0},
    {"tanh", -0.0, 0, -0.0},
    {"cbrt", -27.0, 0, -3.0},
    {"cbrt", -0.0, 0, -0.0},
    {"cbrt", -INF, 0, -INF},
    {"cbrt", 0x1p-1074, 0, 0x1p-358},
    {"pow", DNAN, 0.0, 1.0},
    {"pow", 1.0, DNAN, 1.0},
    {"pow", -1.0, INF, 1.0},
    {"pow", -1.0, -INF, 1.0},
    {"pow", 0.5, INF, 0.0},
    {"pow", 0.5, -INF, INF},
    {"pow", 2.0, INF, INF},
    {"pow", 2.0, -INF, 0.0},
    {"pow", -0.0, -3.0, -INF},
    {"pow", -0.0, -2.0, INF},
    {"pow", 0.0, -0.5, INF},
    {"pow", -0.0, 3.0, -0.0},
    {"pow", -0.0, 2.0, 0.0},
    {"pow", -INF, -3.0, -0.0},
    {"pow", -INF, -2.0, 0.0},
    {"pow", -INF, 3.0, -INF},
    {"pow", -INF, 2.5, INF},
    {"pow", INF, -1.0, 0.0},
    {"pow", INF, 0.1, INF},
    {"pow", -2.0, 0.5, DNAN},
    {"pow", -2.0, 3.0, -8.0},
    {"pow", -2.0, -1075.0, -0.0},
    {"pow", 2.0, -1074.0, 0x1p-1074},
    {"pow", 10.0, 308.5, INF},
    {"pow", -8.0, 1e300, INF},
    {"pow", 0.5, 1e300, 0.0},
    {"pow", -1.0, 1e300, 1.0},
    {"pow", -1.0, -3.0, -1.0},
    {"pow", -1.0, 0.5, DNAN},
    {"pow", 3.0, 4.0, 81.0},
    {"atan2", 0.0, -0.0, M_PI},
    {"atan2", -0.0, -0.0, -M_PI},
    {"atan2", 0.0, 0.0, 0.0},
    {"atan2", -0.0, 1.0, -0.0},
    {"atan2", 1.0, 0.0, M_PI_2},
    {"atan2", -1.0, -0.0, -M_PI_2},
    {"atan2", INF, INF, M_PI_4},
    {"atan2", -INF, -INF, -3 * M_PI_4},
    {"atan2", INF, 5.0, M_PI_2},
    {"atan2", 5.0, -INF, M_PI},
    {"atan2", -5.0, INF, -0.0},
    {"atan2", 1e-300, -1e300, M_PI},
    {"atan2", 1e300, 1e-300, M_PI_2},
    {"atan2", 1e-320, 1e10, 0.0},
};

static uint64_t lm_bits(double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  return v != v ? 0x7ff8000000000000ull : b;
}

/* One float64 launch of function `fn` on (x, y). */
static double lm_one(kern_module *m, kern_device *cpu, const char *fn, double x, double y) {
  char name[32];
  double out;
  snprintf(name, sizeof name, "d_%s", fn);
  lm_run(m, cpu, name, KERN_FLOAT64, 1, &x, &y, &out);
  return out;
}

Test(libm, annex_f_special_values) {
  kern_device *cpu;
  kern_module *m = lm_cpu_module(&cpu);
  for (size_t i = 0; i < sizeof lm_cases / sizeof lm_cases[0]; i++) {
    const lm_case *c = &lm_cases[i];
    double got = lm_one(m, cpu, c->fn, c->x, c->y);
    uint64_t g;
    memcpy(&g, &got, 8);
    cr_expect_eq(g, lm_bits(c->want), "%s(%a, %a): %a (%016llx), want %a", c->fn, c->x, c->y, got,
                 (unsigned long long)g, c->want);
  }
  kern_module_free(m);
}

/* A NaN argument comes back with its bits; a NaN made by the function is
 * the default quiet NaN, in float32 too. */
Test(libm, nan_bits) {
  kern_device *cpu;
  kern_module *m = lm_cpu_module(&cpu);
  uint64_t pb = 0xfff4000000000123ull;
  double payload, got;
  memcpy(&payload, &pb, 8);
  for (int i = 0; i < LM_NFNS; i++) {
    uint64_t g;
    got = lm_one(m, cpu, lm_fns[i].name, payload, 2.0);
    memcpy(&g, &got, 8);
    if (strcmp(lm_fns[i].name, "pow")) /* pow(x, 2) of a NaN x: x */
      cr_expect_eq(g, pb, "%s kept the NaN's bits: %016llx", lm_fns[i].name, (unsigned long long)g);
  }
  float fx[2] = {-2.0f, 0.0f}, fy[2] = {0.5f, 0.5f}, fo[2];
  uint32_t nb = 0x7fa00001u;
  memcpy(&fx[1], &nb, 4);
  lm_run(m, cpu, "f_pow", KERN_FLOAT32, 2, fx, fy, fo);
  uint32_t o0, o1;
  memcpy(&o0, &fo[0], 4), memcpy(&o1, &fo[1], 4);
  cr_expect_eq(o0, 0x7fc00000u, "pow(-2, 0.5) is the default NaN: %08x", o0);
  cr_expect_eq(o1, nb, "pow(NaN, 0.5) keeps the NaN's bits: %08x", o1);
  kern_module_free(m);
}

Test(libm, huge_arguments_of_sin_cos_tan) {
  kern_device *cpu;
  kern_module *m = lm_cpu_module(&cpu);
  /* near multiples of pi/2 (the closest doubles known), and the largest */
  const double xs[] = {0x1.6ac5b262ca1ffp+849,
                       6381956970095103.0 * 0x1p797,
                       0x1.fffffffffffffp+1023,
                       0x1p20,
                       0x1p20 - 0x1p-32,
                       1e22,
                       -1e22,
                       1.7e308};
  const char *fns[] = {"sin", "cos", "tan"};
  long double (*refs[])(long double) = {sinl, cosl, tanl};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
    for (int f = 0; f < 3; f++) {
      double got = lm_one(m, cpu, fns[f], xs[i], 0.0);
      double e = lm_ulps(got, refs[f]((long double)xs[i]), 0);
      cr_expect(e <= 1.0, "%s(%a) = %a: %.3f ulp", fns[f], xs[i], got, e);
    }
  kern_module_free(m);
}

/* vec4 forms are the scalar function on each component. */
Test(libm, vector_forms_are_componentwise) {
  kern_device *cpu;
  kern_module *m = lm_cpu_module(&cpu);
  enum { N = 64 };
  float x[4 * N], y[4 * N], v[4 * N], s[4 * N];
  for (int i = 0; i < 4 * N; i++) x[i] = (float)(i - 2 * N) * 0.173f, y[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < LM_NFNS; i++) {
    char vn[32], sn[32];
    snprintf(vn, sizeof vn, "v_%s", lm_fns[i].name),
        snprintf(sn, sizeof sn, "f_%s", lm_fns[i].name);
    lm_run(m, cpu, vn, KERN_VEC4, N, x, y, v);
    lm_run(m, cpu, sn, KERN_FLOAT32, 4 * N, x, y, s);
    cr_expect_eq(memcmp(v, s, sizeof v), 0, "%s on vec4 differs from the scalar", lm_fns[i].name);
  }
  kern_module_free(m);
}

/* ---- fast math and the GPU code ------------------------------------------------- */

static const char cbrt_src[] = "kernel void k(float64[] x, float64[] out) {\n"
                               "  int i = tid();\n  out[i] = cbrt(x[i]);\n}\n";

static double cbrt_on_cpu(bool fast, double x) {
  kern_device *cpu = kern_device_get("cpu");
  kern_module *m = kern_module_from_source("cbrt.kern", cbrt_src);
  cr_assert(m, "%s", kern_last_error());
  cr_assert_eq(kern_module_set_fast_math(m, fast), KERN_OK, "%s", kern_last_error());
  int64_t n = 1;
  double out = 0;
  kern_array *ax = kern_array_wrap(&x, cpu, KERN_FLOAT64, 1, &n, NULL),
             *ao = kern_array_wrap(&out, cpu, KERN_FLOAT64, 1, &n, NULL);
  kern_arg args[] = {kern_arg_array(ax), kern_arg_array(ao)};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "k"), cpu, KERN_DIM1(1), 2, args), KERN_OK, "%s",
               kern_last_error());
  kern_array_free(ax), kern_array_free(ao);
  kern_module_free(m);
  return out;
}

/* A fast-math module calls the platform's cbrt; a default one kern's, which
 * differs from this libm's on some input found here. */
Test(libm, fast_math_uses_the_platform_functions) {
  cr_assert_eq(kern_init(), KERN_OK);
  double x = 0;
  for (int i = 2; i < 100000 && x == 0; i++)
    if (cbrt((double)i) != kn_cbrt_f64((double)i)) x = i;
  if (x == 0) cr_skip_test("this libm's cbrt agrees with kern's on 2..99999");
  cr_expect_eq(cbrt_on_cpu(true, x), cbrt(x), "fast math: the platform's cbrt(%g)", x);
  cr_expect_eq(cbrt_on_cpu(false, x), kn_cbrt_f64(x), "default: kern's cbrt(%g)", x);
  cr_expect(lm_ulps(kn_cbrt_f64(x), cbrtl(x), 0) <= 0.5, "kern's is the correctly rounded one");
}

/* The GPU build of every function: NVRTC compiles it, with no fused
 * multiply-add and no approximate instruction (sin.approx, ex2.approx ...). */
Test(libm, nvrtc_compiles_exact_gpu_code) {
  const char *why;
  if (!tc_nvrtc_load(&why)) cr_skip_test("no NVRTC (%s): the GPU compile is not checked", why);
  cr_assert_eq(kern_init(), KERN_OK);
  size_t cap = 64 * 1024, len = 0;
  char *src = malloc(cap);
  for (int i = 0; i < LM_NFNS; i++)
    len += (size_t)snprintf(src + len, cap - len,
                            "kernel void f_%s(float[] x, float[] y, float[] o) {\n"
                            "  int i = tid();\n  o[i] = %s(x[i]%s);\n}\n"
                            "kernel void d_%s(float64[] x, float64[] y, float64[] o) {\n"
                            "  int i = tid();\n  o[i] = %s(x[i]%s);\n}\n",
                            lm_fns[i].name, lm_fns[i].name, lm_fns[i].ref2 ? ", y[i]" : "",
                            lm_fns[i].name, lm_fns[i].name, lm_fns[i].ref2 ? ", y[i]" : "");
  FrontResult r = front_compile("libm.kern", src, len);
  cr_assert(r.ok);
  EmitOptions o = {.line_directives = false};
  char *cuda = emit_program(r.prog, EMIT_CUDA, &o), *ptx = NULL;
  size_t plen;
  bool is_ptx;
  cr_assert_eq(tc_nvrtc_compile(cuda, "libm.kern", 90, false, 0, &ptx, &plen, &is_ptx), KERN_OK,
               "%s", kern_last_error());
  cr_expect(is_ptx);
  cr_expect_null(strstr(ptx, "fma.rn"), "no fused multiply-add");
  cr_expect_null(strstr(ptx, ".approx"), "no approximate instruction");
  cr_expect(strstr(ptx, ".entry f_sin") || strstr(ptx, "f_sin"), "the kernels are there");
  free(ptx), free(cuda), free(src);
  front_free(r.prog);
}
