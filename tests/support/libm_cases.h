/* libm_cases.h: the transcendental builtins as kern kernels, with their
 * inputs, for test_libm.c (ulps against long double on the CPU) and
 * test_gpu_libm.c (cuda:0 against the CPU, bit for bit).
 *
 * Requires kern.h and Criterion before it. Produces lm_fns (every function,
 * its long double reference and its main range), lm_module() (one kernel per
 * function and type: f_<name> on float32, d_<name> on float64, and v_<name>
 * on vec4 for the componentwise forms), lm_inputs() (special values, a sweep
 * over every bit pattern, the main range, and magnitudes 2^-40..2^40) and
 * lm_run() (a launch on any device, through device arrays).
 */
#ifndef KT_LIBM_CASES_H
#define KT_LIBM_CASES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lm_fn {
  const char *name;
  long double (*ref1)(long double);
  long double (*ref2)(long double, long double);
  double lo, hi; /* the main range of the (first) argument */
} lm_fn;

static const lm_fn lm_fns[] = {
    {"exp", expl, NULL, -750.0, 750.0},     {"exp2", exp2l, NULL, -1080.0, 1030.0},
    {"log", logl, NULL, 0.0, 100.0},        {"log2", log2l, NULL, 0.0, 100.0},
    {"log10", log10l, NULL, 0.0, 100.0},    {"sin", sinl, NULL, -100.0, 100.0},
    {"cos", cosl, NULL, -100.0, 100.0},     {"tan", tanl, NULL, -100.0, 100.0},
    {"asin", asinl, NULL, -1.0, 1.0},       {"acos", acosl, NULL, -1.0, 1.0},
    {"atan", atanl, NULL, -50.0, 50.0},     {"sinh", sinhl, NULL, -30.0, 30.0},
    {"cosh", coshl, NULL, -30.0, 30.0},     {"tanh", tanhl, NULL, -10.0, 10.0},
    {"cbrt", cbrtl, NULL, -1000.0, 1000.0}, {"pow", NULL, powl, 0.0, 10.0},
    {"atan2", NULL, atan2l, -10.0, 10.0},
};
#define LM_NFNS ((int)(sizeof lm_fns / sizeof lm_fns[0]))

/* The module: f_<name>(float[] x, float[] y, float[] out) and d_<name> on
 * float64 (y unused by the one-argument functions), v_<name> on vec4. */
static kern_module *lm_module(void) {
  size_t cap = 64 * 1024, len = 0;
  char *src = malloc(cap);
  for (int i = 0; i < LM_NFNS; i++) {
    const char *f = lm_fns[i].name, *args = lm_fns[i].ref2 ? "x[i], y[i]" : "x[i]";
    len += (size_t)snprintf(src + len, cap - len,
                            "kernel void f_%s(float[] x, float[] y, float[] out) {\n"
                            "  int i = tid();\n  out[i] = %s(%s);\n}\n"
                            "kernel void d_%s(float64[] x, float64[] y, float64[] out) {\n"
                            "  int i = tid();\n  out[i] = %s(%s);\n}\n"
                            "kernel void v_%s(vec4[] x, vec4[] y, vec4[] out) {\n"
                            "  int i = tid();\n  out[i] = %s(%s);\n}\n",
                            f, f, args, f, f, args, f, f, args);
  }
  kern_module *m = kern_module_from_source("libm_cases.kern", src);
  free(src);
  return m;
}

static uint64_t lm_rng = 0x243f6a8885a308d3ull;
static uint64_t lm_next(void) { /* xorshift64 */
  lm_rng ^= lm_rng << 13, lm_rng ^= lm_rng >> 7, lm_rng ^= lm_rng << 17;
  return lm_rng;
}
static double lm_unit(void) { return (double)(lm_next() >> 11) * 0x1p-53; }

static const uint64_t lm_special64[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
    0x7ff8000000000000ull, 0x7ff4000000000123ull, 0xfff8000000000001ull, 0x0000000000000001ull,
    0x800fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull,
    0x3ff0000000000000ull, 0xbff0000000000000ull, 0x3fe0000000000000ull, 0x4000000000000000ull,
    0x3ff0000000000001ull, 0x3fefffffffffffffull, 0x40862e42fefa39efull, 0xc0874910d52d3051ull,
    0x4090000000000000ull, 0xc090c80000000000ull, 0x3e40000000000000ull, 0x3c90000000000000ull,
    0x4130000000000000ull, 0x412fffffffffffffull, 0x7e56ac5b262ca1ffull, 0x5fd66bf2de8ff1f1ull,
    0x400921fb54442d18ull, 0x3ff921fb54442d18ull, 0x4012d97c7f3321d2ull, 0x43e0000000000000ull,
};
#define LM_NSPECIAL ((int)(sizeof lm_special64 / sizeof lm_special64[0]))

/* n inputs of function f as float64 (float32 when f32: then every value is a
 * float): the special values, a sweep over the bit patterns, the main range,
 * magnitudes 2^-40..2^40 of either sign. y likewise for two arguments. */
static void lm_inputs(const lm_fn *f, int f32, double *x, double *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double v, w;
    int64_t part = i * 4 / n;
    if (i < LM_NSPECIAL * LM_NSPECIAL && f->ref2) {
      memcpy(&v, &lm_special64[i % LM_NSPECIAL], 8), memcpy(&w, &lm_special64[i / LM_NSPECIAL], 8);
    } else if (i < LM_NSPECIAL) {
      memcpy(&v, &lm_special64[i], 8);
      w = 2.5;
    } else if (part == 0) { /* every (n/4)th bit pattern, then a random step */
      uint64_t b = f32 ? (uint64_t)(((uint64_t)i << 32) / (uint64_t)(n / 4)) + (lm_next() & 0xff)
                       : (uint64_t)i * (UINT64_MAX / (uint64_t)(n / 4)) + (lm_next() & 0xffffff);
      if (f32) {
        float h;
        uint32_t b32 = (uint32_t)b;
        memcpy(&h, &b32, 4);
        v = h;
      } else {
        memcpy(&v, &b, 8);
      }
      w = f->lo + (f->hi - f->lo) * lm_unit();
    } else if (part == 3) {
      v = ldexp(1.0 + lm_unit(), (int)(lm_next() % 81) - 40) * (lm_next() & 1 ? -1.0 : 1.0);
      w = (lm_unit() - 0.5) * 60.0;
    } else {
      v = f->lo + (f->hi - f->lo) * lm_unit();
      w = (lm_unit() - 0.5) * (f->ref1 == NULL && f->lo == 0.0 ? 60.0 : 20.0);
    }
    x[i] = f32 ? (double)(float)v : v;
    y[i] = f32 ? (double)(float)w : w;
  }
}

/* Runs kernel `name` on dev over n elements of dtype t (float32, float64, vec4). */
static void lm_run(kern_module *m, kern_device *dev, const char *name, kern_dtype t, int64_t n,
                   const void *x, const void *y, void *out) {
  size_t bytes = (size_t)n * (t == KERN_FLOAT64 ? 8 : t == KERN_FLOAT32 ? 4 : 16);
  kern_array *ax = kern_array_new(dev, t, 1, &n), *ay = kern_array_new(dev, t, 1, &n),
             *ao = kern_array_new(dev, t, 1, &n);
  cr_assert(ax && ay && ao, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(ax, x, bytes), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(ay, y, bytes), KERN_OK, "%s", kern_last_error());
  kern_arg args[] = {kern_arg_array(ax), kern_arg_array(ay), kern_arg_array(ao)};
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert(k, "%s: %s", name, kern_last_error());
  cr_assert_eq(kern_launch(k, dev, KERN_DIM1(n), 3, args), KERN_OK, "%s: %s", name,
               kern_last_error());
  cr_assert_eq(kern_array_read(ao, out, bytes), KERN_OK, "%s", kern_last_error());
  kern_array_free(ax), kern_array_free(ay), kern_array_free(ao);
}

#endif
