/* test_exec.c: what kern kernels compute, checked against C references.
 *
 * Requires the CPU device and a C compiler for its kernels; KERN_EXEC_DEVICE
 * (e.g. cuda:0) runs the same checks on another device. Produces the Criterion
 * tests that are awkward as run fixtures: every scalar math builtin swept over
 * 10,000 float32 and float64 inputs (edge cases included) against the C library
 * in long double; integer operators on every integer type at their edges
 * against the rules of stdlib/kern_builtins.h; float -> integer casts against
 * the documented saturating rule; float16 rounding; arrays of structs, struct
 * and float16 arguments; strided arrays; every launch index running once;
 * printf's output. Breaks nothing: each test compiles its own modules.
 *
 * References never run kern code: they are written from the documented rules
 * with C arithmetic (volatile temporaries where a fused multiply-add would
 * change the result of the documented formula).
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kern.h"

/* ---- helpers ------------------------------------------------------------------ */

/* The device under test: the CPU, or KERN_EXEC_DEVICE (e.g. cuda:0) to run
 * the same checks elsewhere. */
static kern_device *dev(void) {
  const char *name = getenv("KERN_EXEC_DEVICE");
  kern_device *d = kern_device_get(name && *name ? name : "cpu");
  cr_assert_not_null(d, "%s", kern_last_error());
  return d;
}

static kern_module *compile(const char *name, const char *src) {
  kern_module *m = kern_module_from_source(name, src);
  cr_assert_not_null(m, "%s does not compile:\n%s", name, kern_last_error());
  return m;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "no kernel %s: %s", name, kern_last_error());
  return k;
}

/* A 1D array of n elements holding data (NULL: zeros). */
static kern_array *array1(kern_dtype dt, int64_t n, const void *data) {
  kern_array *a = kern_array_new(dev(), dt, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  if (data)
    cr_assert_eq(kern_array_write(a, data, kern_array_nbytes(a)), KERN_OK, "%s", kern_last_error());
  return a;
}

static void read_back(const kern_array *a, void *dst) {
  cr_assert_eq(kern_array_read(a, dst, kern_array_nbytes(a)), KERN_OK, "%s", kern_last_error());
}

static void launch(kern_kernel *k, int64_t n, int nargs, kern_array **arrs) {
  kern_arg args[16];
  for (int i = 0; i < nargs; i++) args[i] = kern_arg_array(arrs[i]);
  kern_status s = kern_launch(k, dev(), KERN_DIM1(n), nargs, args);
  cr_assert_eq(s, KERN_OK, "launch of %s: %s", kern_kernel_name(k), kern_last_error());
}

/* A deterministic generator for test inputs (splitmix64). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double uniform(double lo, double hi) {
  return lo + (hi - lo) * (double)(rng() >> 11) * 0x1p-53;
}

static float bits_f32(uint32_t b) {
  float x;
  memcpy(&x, &b, 4);
  return x;
}
static double bits_f64(uint64_t b) {
  double x;
  memcpy(&x, &b, 8);
  return x;
}
static uint32_t f32_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  return b;
}
static uint64_t f64_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return b;
}

/* Position on the number line of floats: adjacent floats differ by 1, -0 == +0. */
static int64_t ord32(float x) {
  int32_t b = (int32_t)f32_bits(x);
  return b < 0 ? (int64_t)INT32_MIN - b : b;
}
static int64_t ord64(double x) {
  int64_t b = (int64_t)f64_bits(x);
  return b < 0 ? INT64_MIN - b : b;
}

/* ---- scalar math: the sweep ---------------------------------------------------------- */

/* Transcendental functions come from each platform's math library and may
 * differ by a few ulp (kern_builtins.h): the bounds cover glibc and CUDA's
 * documented maximum errors, plus half an ulp for rounding the reference. */
typedef enum {
  CMP_ULP,   /* within `ulps` of the correctly rounded long double reference */
  CMP_BITS,  /* bit-identical (NaN: any NaN) */
  CMP_VALUE, /* equal values (+0 == -0; NaN: any NaN) */
  CMP_SPAN,  /* |got - ref| <= ulps * ulp(the largest magnitude involved) */
  CMP_BOOL
} Cmp;

typedef long double (*Ref)(long double, long double, long double);

typedef struct MathFn {
  const char *name;
  int arity;
  Cmp cmp;
  int ulps;
  Ref ref;    /* long double reference of the documented function */
  int domain; /* inputs: 0 all, 1 [-1, 1] mostly, 2 interpolation parameters */
} MathFn;

#define L1(fn)                                                                                     \
  static long double r_##fn(long double x, long double y, long double z) { return fn##l(x); }
#define L2(fn)                                                                                     \
  static long double r_##fn(long double x, long double y, long double z) { return fn##l(x, y); }
L1(sqrt)
L1(cbrt)
L1(exp)
L1(exp2)
L1(log)
L1(log2)
L1(log10)
L1(sin)
L1(cos)
L1(tan)
L1(asin)
L1(acos)
L1(atan)
L1(sinh)
L1(cosh)
L1(tanh)
L1(floor)
L1(ceil)
L1(round)
L1(trunc)
L1(fabs)
L2(pow)
L2(atan2)
L2(fmod)

static long double r_rsqrt(long double x, long double y, long double z) { return 1.0L / sqrtl(x); }
/* sign: -1, 0 or 1, and a zero or NaN argument comes back as it is. */
static long double r_sign(long double x, long double y, long double z) {
  return x > 0 ? 1 : x < 0 ? -1 : x;
}
/* min and max ignore a NaN operand and order -0 below +0; clamp(x, lo, hi)
 * is min(max(x, lo), hi). */
static long double r_min(long double a, long double b, long double z) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  return a < b || (a == b && signbit(a)) ? a : b;
}
static long double r_max(long double a, long double b, long double z) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  return a > b || (a == b && !signbit(a)) ? a : b;
}
static long double r_clamp(long double x, long double lo, long double hi) {
  return r_min(r_max(x, lo, 0), hi, 0);
}
static long double r_step(long double e, long double x, long double z) { return x < e ? 0 : 1; }
static long double r_isnan(long double x, long double y, long double z) { return isnan(x); }
static long double r_isinf(long double x, long double y, long double z) { return isinf(x) != 0; }
static long double r_isfinite(long double x, long double y, long double z) { return isfinite(x); }

/* lerp and smoothstep follow their documented formulas in the argument's own
 * precision, one rounding per operation (no fused multiply-add). */
static float lerp32(float a, float b, float t) {
  volatile float d = b - a, m = d * t;
  return a + m;
}
static double lerp64(double a, double b, double t) {
  volatile double d = b - a, m = d * t;
  return a + m;
}
static float smooth32(float e0, float e1, float x) {
  volatile float n = x - e0, w = e1 - e0, q = n / w;
  float t = fminf(fmaxf(q, 0.0f), 1.0f);
  volatile float tt = t * t, two_t = 2.0f * t, k = 3.0f - two_t;
  return tt * k;
}
static double smooth64(double e0, double e1, double x) {
  volatile double n = x - e0, w = e1 - e0, q = n / w;
  double t = fmin(fmax(q, 0.0), 1.0);
  volatile double tt = t * t, two_t = 2.0 * t, k = 3.0 - two_t;
  return tt * k;
}

static const MathFn math_fns[] = {
    {"sqrt", 1, CMP_ULP, 1, r_sqrt, 0},
    {"rsqrt", 1, CMP_ULP, 2, r_rsqrt, 0},
    {"cbrt", 1, CMP_ULP, 4, r_cbrt, 0},
    {"exp", 1, CMP_ULP, 3, r_exp, 0},
    {"exp2", 1, CMP_ULP, 3, r_exp2, 0},
    {"log", 1, CMP_ULP, 3, r_log, 0},
    {"log2", 1, CMP_ULP, 3, r_log2, 0},
    {"log10", 1, CMP_ULP, 3, r_log10, 0},
    {"pow", 2, CMP_ULP, 5, r_pow, 0},
    {"sin", 1, CMP_ULP, 3, r_sin, 0},
    {"cos", 1, CMP_ULP, 3, r_cos, 0},
    {"tan", 1, CMP_ULP, 5, r_tan, 0},
    {"asin", 1, CMP_ULP, 3, r_asin, 1},
    {"acos", 1, CMP_ULP, 3, r_acos, 1},
    {"atan", 1, CMP_ULP, 3, r_atan, 0},
    {"atan2", 2, CMP_ULP, 4, r_atan2, 0},
    {"sinh", 1, CMP_ULP, 4, r_sinh, 0},
    {"cosh", 1, CMP_ULP, 3, r_cosh, 0},
    {"tanh", 1, CMP_ULP, 3, r_tanh, 0},
    {"floor", 1, CMP_BITS, 0, r_floor, 0},
    {"ceil", 1, CMP_BITS, 0, r_ceil, 0},
    {"round", 1, CMP_BITS, 0, r_round, 0},
    {"trunc", 1, CMP_BITS, 0, r_trunc, 0},
    {"fmod", 2, CMP_BITS, 0, r_fmod, 0},
    {"abs", 1, CMP_BITS, 0, r_fabs, 0},
    {"sign", 1, CMP_BITS, 0, r_sign, 0},
    {"min", 2, CMP_BITS, 0, r_min, 0},
    {"max", 2, CMP_BITS, 0, r_max, 0},
    {"clamp", 3, CMP_BITS, 0, r_clamp, 0},
    {"lerp", 3, CMP_SPAN, 2, NULL, 2},
    {"step", 2, CMP_VALUE, 0, r_step, 0},
    {"smoothstep", 3, CMP_SPAN, 4, NULL, 2},
    {"isnan", 1, CMP_BOOL, 0, r_isnan, 0},
    {"isinf", 1, CMP_BOOL, 0, r_isinf, 0},
    {"isfinite", 1, CMP_BOOL, 0, r_isfinite, 0},
};
enum { NMATH = sizeof math_fns / sizeof math_fns[0], NSWEEP = 10000 };

/* One kernel per builtin, all with the parameters (x, y, z, r). */
static char *math_module_source(const char *t) {
  size_t cap = 16384, len = 0;
  char *s = malloc(cap);
  for (int i = 0; i < NMATH; i++) {
    const MathFn *f = &math_fns[i];
    const char *args = f->arity == 1 ? "x[i]" : f->arity == 2 ? "x[i], y[i]" : "x[i], y[i], z[i]";
    len += (size_t)snprintf(
        s + len, cap - len,
        "kernel void m_%s(%s[] x, %s[] y, %s[] z, %s[] r) { int i = tid(); r[i] = %s(%s); }\n",
        f->name, t, t, t, f->cmp == CMP_BOOL ? "bool" : t, f->name, args);
    cr_assert_lt(len, cap);
  }
  return s;
}

/* Inputs: every pairing of the special values first, then random bit patterns
 * (every exponent, subnormals included) and random values of ordinary size. */
static void sweep_inputs(bool f64, int domain, double *x, double *y, double *z) {
  static const double specials64[] = {
      0.0,          -0.0,    1.0,        -1.0,     0.5,       -0.5,     1.5,      2.5,
      -2.5,         3.0,     0.49999997, M_PI,     -M_PI,     M_PI / 2, 1e-30,    1e30,
      100.0,        -150.0,  88.7,       710.0,    1e300,     DBL_MIN,  -DBL_MIN, DBL_MIN / 4,
      DBL_TRUE_MIN, DBL_MAX, -DBL_MAX,   INFINITY, -INFINITY, NAN};
  static const double specials32[] = {
      0.0,          -0.0,    1.0,        -1.0,     0.5,       -0.5,     1.5,      2.5,
      -2.5,         3.0,     0.49999997, M_PI,     -M_PI,     M_PI / 2, 1e-30,    1e30,
      100.0,        -150.0,  88.7,       127.9,    1e10,      FLT_MIN,  -FLT_MIN, FLT_MIN / 4,
      FLT_TRUE_MIN, FLT_MAX, -FLT_MAX,   INFINITY, -INFINITY, NAN};
  const double *sp = f64 ? specials64 : specials32;
  int ns = (int)(sizeof specials64 / sizeof specials64[0]), i = 0;
  for (int a = 0; a < ns; a++)
    for (int b = 0; b < ns; b++, i++) x[i] = sp[a], y[i] = sp[b], z[i] = sp[(a + b) % ns];
  for (; i < NSWEEP; i++) {
    double r[3];
    for (int k = 0; k < 3; k++) {
      int kind = (int)(rng() % 4);
      if (kind == 0)
        r[k] = f64 ? bits_f64(rng()) : bits_f32((uint32_t)rng());
      else if (kind == 1 || domain == 1)
        r[k] = uniform(-1.0, 1.0);
      else if (kind == 2)
        r[k] = uniform(-10.0, 10.0);
      else
        r[k] = uniform(-100.0, 100.0);
    }
    if (domain == 2 && rng() % 2) r[2] = uniform(-0.5, 1.5);
    x[i] = r[0], y[i] = r[1], z[i] = r[2];
  }
  if (f64) return;
  for (i = 0; i < NSWEEP; i++) x[i] = (float)x[i], y[i] = (float)y[i], z[i] = (float)z[i];
}

/* The largest magnitude among finite values, for CMP_SPAN. */
static double span_of(double a, double b, double c, double d) {
  double m = 0;
  double v[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++)
    if (isfinite(v[i]) && fabs(v[i]) > m) m = fabs(v[i]);
  return m;
}

/* Does kern's result `got` pass for input (x, y, z)? Writes why not. */
static bool math_ok(const MathFn *f, bool f64, double x, double y, double z, double got, char *why,
                    size_t n) {
  double ref;
  if (f->cmp == CMP_SPAN) {
    bool lerp = f->name[0] == 'l';
    ref = f64 ? (lerp ? lerp64(x, y, z) : smooth64(x, y, z))
              : (lerp ? lerp32((float)x, (float)y, (float)z)
                      : smooth32((float)x, (float)y, (float)z));
  } else {
    long double r = f->ref(x, y, z);
    ref = f64 ? (double)r : (double)(float)r;
  }
  snprintf(why, n, "%s(%.17g, %.17g, %.17g) = %.17g, expected %.17g", f->name, x, y, z, got, ref);
  if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
  switch (f->cmp) {
    case CMP_ULP: {
      int64_t d = f64 ? ord64(got) - ord64(ref) : ord32((float)got) - ord32((float)ref);
      return llabs(d) <= f->ulps;
    }
    case CMP_BITS:
      return f64 ? f64_bits(got) == f64_bits(ref) : f32_bits((float)got) == f32_bits((float)ref);
    case CMP_SPAN: {
      if (isinf(ref) || isinf(got)) return got == ref;
      double m = span_of(x, y, (y - x) * z, ref), ulp = f64 ? DBL_EPSILON : FLT_EPSILON;
      if (f->name[0] == 's') m = 1.0;
      return fabs(got - ref) <= f->ulps * ulp * m;
    }
    default: return got == ref;
  }
}

/* Runs builtin f over the inputs; returns how many results are wrong. */
static int sweep_one(kern_module *m, const MathFn *f, bool f64, const double *in[3], void *buf) {
  kern_dtype dt = f64 ? KERN_FLOAT64 : KERN_FLOAT32;
  kern_array *a[4];
  for (int k = 0; k < 3; k++) {
    if (!f64)
      for (int i = 0; i < NSWEEP; i++) ((float *)buf)[i] = (float)in[k][i];
    a[k] = array1(dt, NSWEEP, f64 ? (const void *)in[k] : buf);
  }
  a[3] = array1(f->cmp == CMP_BOOL ? KERN_BOOL : dt, NSWEEP, NULL);
  char kname[64];
  snprintf(kname, sizeof kname, "m_%s", f->name);
  launch(kernel(m, kname), NSWEEP, 4, a);
  read_back(a[3], buf);
  int bad = 0;
  for (int i = 0; i < NSWEEP; i++) {
    double got = f->cmp == CMP_BOOL ? ((const bool *)buf)[i]
                 : f64              ? ((const double *)buf)[i]
                                    : ((const float *)buf)[i];
    char why[256];
    if (!math_ok(f, f64, in[0][i], in[1][i], in[2][i], got, why, sizeof why) && bad++ < 3)
      cr_log_error("%s: %s", f64 ? "float64" : "float32", why);
  }
  for (int k = 0; k < 4; k++) kern_array_free(a[k]);
  return bad;
}

static void sweep_type(bool f64) {
  const char *t = f64 ? "float64" : "float32";
  char *src = math_module_source(t);
  kern_module *m = compile(f64 ? "math_f64.kern" : "math_f32.kern", src);
  free(src);
  double *x = malloc(NSWEEP * sizeof *x), *y = malloc(NSWEEP * sizeof *y),
         *z = malloc(NSWEEP * sizeof *z);
  const double *in[3] = {x, y, z};
  void *buf = malloc(NSWEEP * 8);
  int failures = 0;
  for (int fi = 0; fi < NMATH; fi++) {
    sweep_inputs(f64, math_fns[fi].domain, x, y, z);
    int bad = sweep_one(m, &math_fns[fi], f64, in, buf);
    if (bad) cr_log_error("%s %s: %d of %d inputs wrong", t, math_fns[fi].name, bad, NSWEEP);
    failures += bad > 0;
  }
  free(x), free(y), free(z), free(buf);
  kern_module_free(m);
  cr_expect_eq(failures, 0, "%d of %d %s math builtins failed the sweep", failures, NMATH, t);
}

Test(exec_math, every_builtin_float32, .timeout = 120) { sweep_type(false); }
Test(exec_math, every_builtin_float64, .timeout = 120) { sweep_type(true); }

/* min, max and clamp ignore a NaN operand (kern_builtins.h), a signaling NaN
 * too: C's fmin returns NaN for one in some C libraries (IEEE 754-2008
 * minNum), so the rule must not depend on the host compiler or libm. The
 * inputs are written as bits, so nothing quiets the signaling NaNs. */
Test(exec_math, min_max_clamp_ignore_signaling_nans) {
  kern_module *m = compile(
      "snan.kern",
      "kernel void f(float[] x, float[] r) {\n"
      "    int i = tid();\n"
      "    r[6 * i] = min(x[i], 1.0);\n    r[6 * i + 1] = max(2.0, x[i]);\n"
      "    r[6 * i + 2] = clamp(x[i], -1.0, 3.0);\n    r[6 * i + 3] = clamp(0.5, x[i], 3.0);\n"
      "    r[6 * i + 4] = min(vec2(x[i]), vec2(4.0)).y;\n    r[6 * i + 5] = clamp(0.5, -1.0, x[i]);\n"
      "}\n"
      "kernel void d(double[] x, double[] r) {\n"
      "    int i = tid();\n"
      "    r[6 * i] = min(x[i], 1.0);\n    r[6 * i + 1] = max(2.0, x[i]);\n"
      "    r[6 * i + 2] = clamp(x[i], -1.0, 3.0);\n    r[6 * i + 3] = clamp(0.5, x[i], 3.0);\n"
      "    r[6 * i + 4] = min(dvec2(x[i]), dvec2(4.0)).y;\n    r[6 * i + 5] = clamp(0.5, -1.0, x[i]);\n"
      "}\n");
  static const double want[6] = {1.0, 2.0, -1.0, 0.5, 4.0, 0.5};
  uint32_t fb[4] = {0x7f800001u, 0xff800001u, 0x7fa00000u,
                    0x7fc00000u}; /* signaling, and one quiet */
  uint64_t db[4] = {0x7ff0000000000001ull, 0xfff0000000000001ull, 0x7ff4000000000000ull,
                    0x7ff8000000000000ull};
  float fr[24];
  double dr[24];
  kern_array *a[4] = {array1(KERN_FLOAT32, 4, fb), array1(KERN_FLOAT32, 24, NULL),
                      array1(KERN_FLOAT64, 4, db), array1(KERN_FLOAT64, 24, NULL)};
  launch(kernel(m, "f"), 4, 2, a);
  launch(kernel(m, "d"), 4, 2, a + 2);
  read_back(a[1], fr), read_back(a[3], dr);
  for (int i = 0; i < 24; i++) {
    cr_expect_eq(fr[i], want[i % 6], "float32 #%d with NaN bits 0x%08x: %g, expected %g", i % 6,
                 fb[i / 6], fr[i], want[i % 6]);
    cr_expect_eq(dr[i], want[i % 6], "float64 #%d with NaN bits 0x%016llx: %g, expected %g", i % 6,
                 (unsigned long long)db[i / 6], dr[i], want[i % 6]);
  }
  for (int k = 0; k < 4; k++) kern_array_free(a[k]);
  kern_module_free(m);
}

/* ---- integers at their edges --------------------------------------------------------- */

typedef struct IntType {
  const char *name;
  kern_dtype dtype;
  int bits;
  bool is_signed;
} IntType;

static const IntType int_types[] = {
    {"int8", KERN_INT8, 8, true},       {"int16", KERN_INT16, 16, true},
    {"int32", KERN_INT32, 32, true},    {"int64", KERN_INT64, 64, true},
    {"uint8", KERN_UINT8, 8, false},    {"uint16", KERN_UINT16, 16, false},
    {"uint32", KERN_UINT32, 32, false}, {"uint64", KERN_UINT64, 64, false},
};
enum { NINT_TYPES = sizeof int_types / sizeof int_types[0] };

typedef enum {
  I_ADD,
  I_SUB,
  I_MUL,
  I_DIV,
  I_MOD,
  I_SHL,
  I_SHR,
  I_NEG,
  I_NOT,
  I_AND,
  I_OR,
  I_XOR
} IntOp;

/* Each operator as an expression and, where it has one, as a compound
 * assignment (a separate code path in the emitter); s is an int32 count. */
static const struct {
  const char *text;
  IntOp op;
} int_ops[] = {
    {"x + y", I_ADD},         {"x - y", I_SUB},        {"x * y", I_MUL},
    {"x / y", I_DIV},         {"x % y", I_MOD},        {"x << s", I_SHL},
    {"x >> s", I_SHR},        {"-x", I_NEG},           {"~x", I_NOT},
    {"x & y", I_AND},         {"x | y", I_OR},         {"x ^ y", I_XOR},
    {"x << int64(s)", I_SHL}, {"x >> int8(s)", I_SHR}, {"q += y", I_ADD},
    {"q -= y", I_SUB},        {"q *= y", I_MUL},       {"q /= y", I_DIV},
    {"q %= y", I_MOD},        {"q <<= s", I_SHL},      {"q >>= s", I_SHR},
    {"q &= y", I_AND},        {"q |= y", I_OR},        {"q ^= y", I_XOR},
};
enum { NIOPS = sizeof int_ops / sizeof int_ops[0] };

/* The low `bits` bits of v, sign-extended for signed types, as an int64 bit pattern. */
static uint64_t wrap(const IntType *t, uint64_t v) {
  if (t->bits == 64) return v;
  uint64_t m = (1ull << t->bits) - 1;
  v &= m;
  if (t->is_signed && (v >> (t->bits - 1))) v |= ~m;
  return v;
}

static uint64_t type_min(const IntType *t) {
  return t->is_signed ? wrap(t, 1ull << (t->bits - 1)) : 0;
}
static uint64_t type_max(const IntType *t) { return wrap(t, type_min(t) - 1); }

/* The documented rules (stdlib/kern_builtins.h): x / 0 == 0, x % 0 == x,
 * MIN / -1 == MIN, MIN % -1 == 0, else C's truncating division; shift
 * counts taken modulo the width; + - * ~ and unary minus wrap. */
static uint64_t int_ref(const IntType *t, IntOp op, uint64_t x, uint64_t y, int32_t s) {
  bool sg = t->is_signed;
  int c = (int)((uint32_t)s & (uint32_t)(t->bits - 1));
  switch (op) {
    case I_ADD: return wrap(t, x + y);
    case I_SUB: return wrap(t, x - y);
    case I_MUL: return wrap(t, x * y);
    case I_DIV:
      if (y == 0) return 0;
      if (sg && (int64_t)y == -1) return wrap(t, 0 - x);
      return sg ? wrap(t, (uint64_t)((int64_t)x / (int64_t)y)) : x / y;
    case I_MOD:
      if (y == 0) return x;
      if (sg && (int64_t)y == -1) return 0;
      return sg ? wrap(t, (uint64_t)((int64_t)x % (int64_t)y)) : x % y;
    case I_SHL: return wrap(t, x << c);
    case I_SHR: /* arithmetic for signed: floor(x / 2^c) */
      if (sg && (int64_t)x < 0) return wrap(t, ~(~x >> c));
      return wrap(t, x >> c);
    case I_NEG: return wrap(t, 0 - x);
    case I_NOT: return wrap(t, ~x);
    case I_AND: return x & y;
    case I_OR: return x | y;
    default: return x ^ y;
  }
}

/* One kernel per type: r[NIOPS * i + k] = the k-th operation on (x, y, s). */
static char *int_module_source(void) {
  size_t cap = 65536, len = 0;
  char *s = malloc(cap);
  for (int i = 0; i < NINT_TYPES; i++) {
    const char *t = int_types[i].name;
    len += (size_t)snprintf(
        s + len, cap - len,
        "kernel void i_%s(%s[] a, %s[] b, int[] n, %s[] r) {\n"
        "    int i = tid();\n    %s x = a[i];\n    %s y = b[i];\n    int s = n[i];\n"
        "    %s q = x;\n",
        t, t, t, t, t, t, t);
    for (int k = 0; k < NIOPS; k++) {
      const char *e = int_ops[k].text;
      if (e[0] == 'q')
        len += (size_t)snprintf(s + len, cap - len,
                                "    q = x;\n    %s;\n    r[%d * i + %d] = q;\n", e, (int)NIOPS, k);
      else
        len += (size_t)snprintf(s + len, cap - len, "    r[%d * i + %d] = %s;\n", (int)NIOPS, k, e);
    }
    len += (size_t)snprintf(s + len, cap - len, "}\n");
    cr_assert_lt(len, cap);
  }
  return s;
}

static void store_int(const IntType *t, void *buf, int64_t i, uint64_t v) {
  memcpy((char *)buf + i * (t->bits / 8), &v, (size_t)(t->bits / 8)); /* little-endian low bytes */
}
static uint64_t load_int(const IntType *t, const void *buf, int64_t i) {
  uint64_t v = 0;
  memcpy(&v, (const char *)buf + i * (t->bits / 8), (size_t)(t->bits / 8));
  return wrap(t, v);
}

/* Edge operands: MIN, MIN+1, -2, -1, 0, 1, 2, 3, 7, MAX-1, MAX and two random values. */
static int int_edges(const IntType *t, uint64_t *v) {
  uint64_t mn = type_min(t), mx = type_max(t);
  uint64_t e[] = {mn, mn + 1, (uint64_t)-2, (uint64_t)-1, 0, 1, 2, 3, 7, mx - 1, mx, rng(), rng()};
  int n = (int)(sizeof e / sizeof e[0]);
  for (int i = 0; i < n; i++) v[i] = wrap(t, e[i]);
  return n;
}

static const int32_t shift_counts[] = {0,  1,  3,  7,  8,   9,  15, 16, 17,  31, 32,
                                       33, 63, 64, 65, 100, -1, -7, -8, -33, -64};
enum { NSHIFTS = sizeof shift_counts / sizeof shift_counts[0] };

static int int_type_check(kern_module *m, const IntType *t) {
  uint64_t e[16];
  int ne = int_edges(t, e), n = ne * ne * NSHIFTS, bad = 0;
  void *a = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *r = malloc((size_t)n * NIOPS * 8);
  int32_t *s = malloc((size_t)n * sizeof *s);
  for (int i = 0; i < n; i++) {
    store_int(t, a, i, e[i / (ne * NSHIFTS)]);
    store_int(t, b, i, e[i / NSHIFTS % ne]);
    s[i] = shift_counts[i % NSHIFTS];
  }
  kern_array *arr[4] = {array1(t->dtype, n, a), array1(t->dtype, n, b), array1(KERN_INT32, n, s),
                        array1(t->dtype, (int64_t)n * NIOPS, NULL)};
  char kname[32];
  snprintf(kname, sizeof kname, "i_%s", t->name);
  launch(kernel(m, kname), n, 4, arr);
  read_back(arr[3], r);
  for (int i = 0; i < n; i++)
    for (int op = 0; op < NIOPS; op++) {
      uint64_t x = load_int(t, a, i), y = load_int(t, b, i);
      uint64_t got = load_int(t, r, (int64_t)i * NIOPS + op),
               want = int_ref(t, int_ops[op].op, x, y, s[i]);
      if (got == want || bad++ >= 4) continue;
      cr_log_error("%s: x = %lld, y = %lld, s = %d: %s = %lld, expected %lld", t->name,
                   (long long)x, (long long)y, s[i], int_ops[op].text, (long long)got,
                   (long long)want);
    }
  for (int k = 0; k < 4; k++) kern_array_free(arr[k]);
  free(a), free(b), free(r), free(s);
  return bad;
}

Test(exec_int, operators_at_the_edges_of_every_integer_type, .timeout = 120) {
  char *src = int_module_source();
  kern_module *m = compile("int_edges.kern", src);
  free(src);
  int failed = 0;
  for (int i = 0; i < NINT_TYPES; i++) {
    int bad = int_type_check(m, &int_types[i]);
    if (bad) cr_log_error("%s: %d wrong results", int_types[i].name, bad);
    failed += bad > 0;
  }
  kern_module_free(m);
  cr_expect_eq(failed, 0, "%d of %d integer types have wrong results", failed, NINT_TYPES);
}

/* ---- float -> integer casts ------------------------------------------------------------- */

/* The documented rule: truncate toward zero, saturate at the target's range
 * (+-inf included), NaN -> 0; unsigned targets give 0 for anything <= -1. */
static uint64_t cvt_ref(const IntType *t, long double x) {
  if (isnan(x)) return 0;
  long double lo = t->is_signed ? -ldexpl(1.0L, t->bits - 1) : 0.0L;
  long double hi = t->is_signed ? ldexpl(1.0L, t->bits - 1) - 1 : ldexpl(1.0L, t->bits) - 1;
  long double v = truncl(x);
  if (v <= lo) return type_min(t);
  if (v >= hi) return type_max(t);
  return t->is_signed ? wrap(t, (uint64_t)(int64_t)v) : (uint64_t)v;
}

/* IEEE binary16 bits -> value, by the definition (independent of kern's code). */
static double f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

static char *cvt_module_source(void) {
  static const char *const from[] = {"float16", "float32", "float64"};
  size_t cap = 8192, len = 0;
  char *s = malloc(cap);
  for (int f = 0; f < 3; f++) {
    len += (size_t)snprintf(s + len, cap - len, "kernel void c_%s(%s[] x", from[f], from[f]);
    for (int i = 0; i < NINT_TYPES; i++)
      len += (size_t)snprintf(s + len, cap - len, ", %s[] o%d", int_types[i].name, i);
    len += (size_t)snprintf(s + len, cap - len, ") {\n    int i = tid();\n    %s v = x[i];\n",
                            from[f]);
    for (int i = 0; i < NINT_TYPES; i++)
      len += (size_t)snprintf(s + len, cap - len,
                              i % 2 ? "    o%d[i] = (%s)v;\n" : "    o%d[i] = %s(v);\n", i,
                              int_types[i].name);
    len += (size_t)snprintf(s + len, cap - len, "}\n");
    cr_assert_lt(len, cap);
  }
  return s;
}

/* Values around every saturation limit, specials, random bit patterns. */
static int cvt_inputs(double *x, int cap) {
  static const double limits[] = {0.0,
                                  1.0,
                                  128.0,
                                  256.0,
                                  32768.0,
                                  65536.0,
                                  2147483648.0,
                                  4294967296.0,
                                  9223372036854775808.0,
                                  18446744073709551616.0};
  int n = 0;
  for (int i = 0; i < 10; i++)
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double l = sgn * limits[i];
      double near[] = {l,
                       nextafter(l, -INFINITY),
                       nextafter(l, INFINITY),
                       nextafterf((float)l, -INFINITY),
                       nextafterf((float)l, INFINITY),
                       l - 1,
                       l + 1,
                       l - 0.5,
                       l + 0.5,
                       l - 1.5};
      for (int k = 0; k < 10; k++) x[n++] = near[k];
    }
  double sp[] = {INFINITY, -INFINITY, NAN,          -NAN, 1e30,  -1e30,
                 DBL_MAX,  -DBL_MAX,  FLT_TRUE_MIN, -0.0, 0.999, -0.999};
  for (int k = 0; k < 12; k++) x[n++] = sp[k];
  while (n < cap) {
    uint64_t r = rng();
    x[n++] = r % 3 == 0   ? bits_f64(r)
             : r % 3 == 1 ? (double)bits_f32((uint32_t)(r >> 7))
                          : uniform(-1e20, 1e20);
  }
  return n;
}

static int cvt_check(kern_module *m, int from, int n, const double *x) {
  static const char *const names[] = {"float16", "float32", "float64"};
  static const kern_dtype dts[] = {KERN_FLOAT16, KERN_FLOAT32, KERN_FLOAT64};
  void *in = malloc((size_t)n * 8), *out = malloc((size_t)n * 8);
  for (int i = 0; i < n; i++) {
    if (from == 0)
      ((uint16_t *)in)[i] = (uint16_t)i; /* every float16 bit pattern */
    else if (from == 1)
      ((float *)in)[i] = (float)x[i];
    else
      ((double *)in)[i] = x[i];
  }
  kern_array *arr[1 + NINT_TYPES];
  arr[0] = array1(dts[from], n, in);
  for (int i = 0; i < NINT_TYPES; i++) arr[1 + i] = array1(int_types[i].dtype, n, NULL);
  char kname[32];
  snprintf(kname, sizeof kname, "c_%s", names[from]);
  launch(kernel(m, kname), n, 1 + NINT_TYPES, arr);
  int bad = 0;
  for (int t = 0; t < NINT_TYPES; t++) {
    read_back(arr[1 + t], out);
    for (int i = 0; i < n; i++) {
      long double v = from == 0   ? f16_value((uint16_t)i)
                      : from == 1 ? ((float *)in)[i]
                                  : ((double *)in)[i];
      uint64_t got = load_int(&int_types[t], out, i), want = cvt_ref(&int_types[t], v);
      if (got == want || bad++ >= 4) continue;
      cr_log_error("%s(%s %.21Lg) = %llu, expected %llu", int_types[t].name, names[from], v,
                   (unsigned long long)got, (unsigned long long)want);
    }
  }
  for (int i = 0; i <= NINT_TYPES; i++) kern_array_free(arr[i]);
  free(in), free(out);
  return bad;
}

Test(exec_cast, float_to_every_integer_type_saturates, .timeout = 120) {
  char *src = cvt_module_source();
  kern_module *m = compile("casts.kern", src);
  free(src);
  enum { N = 65536 };
  double *x = malloc(N * sizeof *x);
  cvt_inputs(x, N);
  int bad = 0;
  for (int from = 0; from < 3; from++) bad += cvt_check(m, from, N, x);
  free(x);
  kern_module_free(m);
  cr_expect_eq(bad, 0, "%d wrong conversions", bad);
}

/* ---- float16 rounding and integer -> float ---------------------------------------------- */

/* Round to the nearest binary16, ties to even, by scaling (not bit tricks):
 * magnitudes >= 65520 overflow to infinity. */
static double f16_round(double x) {
  if (isnan(x)) return x;
  double ax = fabs(x);
  if (ax >= 65520.0) return copysign(INFINITY, x);
  int e = ax == 0 ? -14 : ilogb(ax);
  if (e < -14) e = -14;
  double q = ldexp(1.0, e - 10);
  return copysign(nearbyint(ax / q) * q, x);
}

/* Float inputs for float16 rounding: every magnitude from below the
 * subnormals to past the overflow point, many exactly at ties; the float64
 * ones carry extra bits below float32 precision (one rounding, not two). */
static void f16_inputs(float *x, double *d, int n) {
  static const double first[] = {65504, 65519.99, 65520, 1e-8, 2.98e-8, -0.0, INFINITY, NAN};
  for (int i = 0; i < n; i++) {
    uint64_t r = rng();
    double v = ldexp((double)(r & 0xfff) / 4096.0 + 1.0, (int)((r >> 12) % 48) - 30);
    if (r & (1ull << 40)) v = ldexp((double)((r >> 20) & 0x7ff) + 0.5, (int)((r >> 32) % 40) - 34);
    if (r & (1ull << 41)) v = -v;
    d[i] = i < 8 ? first[i] : v;
    x[i] = (float)d[i];
    if (i % 2) d[i] = bits_f64(f64_bits(d[i]) | (rng() & 0xfffff));
  }
}

Test(exec_cast, float16_rounding) {
  kern_module *m = compile(
      "f16.kern", "kernel void h(float[] x, double[] d, float[] hx, float[] hd, float64[] back) {\n"
                  "    int i = tid();\n"
                  "    hx[i] = float(float16(x[i]));\n"
                  "    hd[i] = float(float16(d[i]));\n"
                  "    float16 a = float16(x[i]);\n"
                  "    back[i] = a;\n"
                  "}\n");
  enum { N = 40000 };
  float *x = malloc(N * sizeof *x), *hx = malloc(N * sizeof *hx), *hd = malloc(N * sizeof *hd);
  double *d = malloc(N * sizeof *d), *back = malloc(N * sizeof *back);
  f16_inputs(x, d, N);
  kern_array *a[5] = {array1(KERN_FLOAT32, N, x), array1(KERN_FLOAT64, N, d),
                      array1(KERN_FLOAT32, N, NULL), array1(KERN_FLOAT32, N, NULL),
                      array1(KERN_FLOAT64, N, NULL)};
  launch(kernel(m, "h"), N, 5, a);
  read_back(a[2], hx), read_back(a[3], hd), read_back(a[4], back);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double wx = f16_round(x[i]), wd = f16_round(d[i]);
    bool ok = (isnan(wx) ? isnan(hx[i]) : f32_bits(hx[i]) == f32_bits((float)wx)) &&
              (isnan(wd) ? isnan(hd[i]) : f32_bits(hd[i]) == f32_bits((float)wd)) &&
              (isnan(wx) ? isnan(back[i]) : back[i] == wx);
    if (ok || bad++ >= 4) continue;
    cr_log_error("float16(%.17g) = %.17g, expected %.17g; float16(%.17g) = %.17g, expected %.17g",
                 x[i], hx[i], wx, d[i], hd[i], wd);
  }
  for (int k = 0; k < 5; k++) kern_array_free(a[k]);
  free(x), free(hx), free(hd), free(d), free(back);
  kern_module_free(m);
  cr_expect_eq(bad, 0, "%d wrong float16 conversions", bad);
}

/* Integers to floats round to nearest even, as C's conversions do. */
Test(exec_cast, integers_to_float) {
  kern_module *m = compile(
      "i2f.kern",
      "kernel void i2f(int64[] a, uint64[] b, int[] c, float[] f, double[] g) {\n"
      "    int i = tid();\n"
      "    f[3 * i] = float(a[i]);\n    f[3 * i + 1] = float(b[i]);\n    f[3 * i + 2] = float(c[i]);\n"
      "    g[3 * i] = double(a[i]);\n    g[3 * i + 1] = double(b[i]);\n    g[3 * i + 2] = double(c[i]);\n"
      "}\n");
  enum { N = 40000 };
  int64_t *ia = malloc(N * 8);
  uint64_t *ub = malloc(N * 8);
  int32_t *ic = malloc(N * 4);
  float *f = malloc(3 * N * sizeof *f);
  double *g = malloc(3 * N * sizeof *g);
  for (int i = 0; i < N; i++) { /* every magnitude */
    int sh = (int)(rng() % 64);
    ia[i] = (int64_t)(rng() >> sh) * (i % 2 ? -1 : 1), ub[i] = rng() >> sh;
    ic[i] = (int32_t)(uint32_t)(rng() >> (32 + sh % 32));
  }
  ia[0] = INT64_MIN, ia[1] = INT64_MAX, ub[0] = UINT64_MAX, ic[0] = INT32_MIN, ic[1] = INT32_MAX;
  kern_array *b[5] = {array1(KERN_INT64, N, ia), array1(KERN_UINT64, N, ub),
                      array1(KERN_INT32, N, ic), array1(KERN_FLOAT32, 3 * N, NULL),
                      array1(KERN_FLOAT64, 3 * N, NULL)};
  launch(kernel(m, "i2f"), N, 5, b);
  read_back(b[3], f), read_back(b[4], g);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float wf[3] = {(float)ia[i], (float)ub[i], (float)ic[i]};
    double wg[3] = {(double)ia[i], (double)ub[i], (double)ic[i]};
    for (int k = 0; k < 3; k++)
      if ((f[3 * i + k] != wf[k] || g[3 * i + k] != wg[k]) && bad++ < 4)
        cr_log_error("int -> float #%d of (%lld, %llu, %d): %.9g / %.17g, expected %.9g / %.17g", k,
                     (long long)ia[i], (unsigned long long)ub[i], ic[i], f[3 * i + k], g[3 * i + k],
                     wf[k], wg[k]);
  }
  for (int k = 0; k < 5; k++) kern_array_free(b[k]);
  free(ia), free(ub), free(ic), free(f), free(g);
  kern_module_free(m);
  cr_expect_eq(bad, 0, "%d wrong integer to float conversions", bad);
}

/* ---- structs, float16 arrays and by-value arguments ----------------------------------------- */

/* The C layout of the kern structs below (C's rules: kern promises the same). */
typedef struct {
  float pos[3];
  float w;
  int8_t tag;
  double m;
} CParticle;
typedef struct {
  CParticle a;
  int32_t cell[2];
  bool live;
} CBox;

static const char struct_src[] =
    "struct Particle { vec3 pos; float w; int8 tag; double m; };\n"
    "struct Box { Particle a; ivec2 cell; bool live; };\n"
    "double mass(Particle[] ps) {\n"
    "    double s = 0.0;\n"
    "    for (int i = 0; i < len(ps); i++) s += ps[i].m;\n"
    "    return s;\n"
    "}\n"
    "kernel void advance(Particle[] ps, Box[,] boxes, double[] total, Particle p0, float dt) {\n"
    "    int i = tid();\n"
    "    if (i == 0) total[0] = mass(ps);\n"
    "    Particle p = ps[i];\n"
    "    p.pos = p.pos + vec3(1.0, 2.0, 3.0) * dt;\n"
    "    p.tag = int8(-p.tag);\n"
    "    ps[i] = p;\n"
    "    ps[i].w += 0.5;\n"
    "    ps[i].pos.y -= 1.0;\n"
    "    boxes[i / 2, i % 2].a = p0;\n"
    "    boxes[i / 2, i % 2].a.m = double(i);\n"
    "    boxes[i / 2, i % 2].cell = ivec2(i, -i);\n"
    "    boxes[i / 2, i % 2].live = p.tag < 0;\n"
    "}\n";

Test(exec_struct, arrays_of_structs_and_struct_arguments) {
  kern_module *m = compile("structs.kern", struct_src);
  kern_dtype pd = kern_module_dtype(m, "Particle"), bd = kern_module_dtype(m, "Box");
  cr_assert_eq(kern_dtype_size(pd), sizeof(CParticle));
  cr_assert_eq(kern_dtype_size(bd), sizeof(CBox));
  enum { N = 6 };
  CParticle ps[N], p0 = {{7, 8, 9}, 10, 11, 12.5};
  memset(ps, 0, sizeof ps);
  for (int i = 0; i < N; i++)
    ps[i] = (CParticle){{(float)i, 0, -(float)i}, 1.0f, (int8_t)(i + 1), 0.25 * i};
  int64_t bshape[2] = {N / 2, 2};
  kern_array *pa = array1(pd, N, ps), *ta = array1(KERN_FLOAT64, 1, NULL);
  kern_array *ba = kern_array_new(dev(), bd, 2, bshape);
  cr_assert_not_null(ba);
  kern_arg args[5] = {kern_arg_array(pa), kern_arg_array(ba), kern_arg_array(ta),
                      kern_arg_bytes(pd, &p0), kern_arg_f32(0.5f)};
  cr_assert_eq(kern_launch(kernel(m, "advance"), dev(), KERN_DIM1(N), 5, args), KERN_OK, "%s",
               kern_last_error());
  CParticle out[N];
  CBox boxes[N];
  double total;
  read_back(pa, out), read_back(ba, boxes), read_back(ta, &total);
  cr_expect_eq(total, 0.25 * (0 + 1 + 2 + 3 + 4 + 5));
  for (int i = 0; i < N; i++) {
    cr_expect(out[i].pos[0] == i + 0.5f && out[i].pos[1] == 0.0f && out[i].pos[2] == -i + 1.5f,
              "particle %d pos", i);
    cr_expect(out[i].w == 1.5f && out[i].tag == -(i + 1) && out[i].m == 0.25 * i,
              "particle %d fields", i);
    const CBox *b = &boxes[i];
    cr_expect(b->a.pos[0] == 7 && b->a.pos[1] == 8 && b->a.pos[2] == 9 && b->a.w == 10 &&
                  b->a.tag == 11,
              "box %d: struct argument", i);
    cr_expect(b->a.m == i && b->cell[0] == i && b->cell[1] == -i && b->live, "box %d fields", i);
  }
  kern_array_free(pa), kern_array_free(ba), kern_array_free(ta);
  kern_module_free(m);
}

Test(exec_struct, float16_arrays_in_and_out) {
  kern_module *m = compile("f16arr.kern", "kernel void k(float16[] a, float16[,] b, float16 s) {\n"
                                          "    int i = tid();\n"
                                          "    b[i, 0] = a[i] * s;\n"
                                          "    b[i, 1] = a[i] + float16(0.125);\n"
                                          "    b[i, 2] = -a[i];\n"
                                          "}\n");
  enum { N = 5 };
  uint16_t a[N] = {0x3c00, 0x4000, 0x3555, 0x7bff, 0x0001}; /* 1, 2, 0.333..., 65504, 2^-24 */
  uint16_t s = 0x4200, b[N][3];                             /* 3 */
  int64_t shape[2] = {N, 3};
  kern_array *aa = array1(KERN_FLOAT16, N, a), *ba = kern_array_new(dev(), KERN_FLOAT16, 2, shape);
  kern_arg args[3] = {kern_arg_array(aa), kern_arg_array(ba), kern_arg_bytes(KERN_FLOAT16, &s)};
  cr_assert_eq(kern_launch(kernel(m, "k"), dev(), KERN_DIM1(N), 3, args), KERN_OK, "%s",
               kern_last_error());
  read_back(ba, b);
  for (int i = 0; i < N; i++) {
    double x = f16_value(a[i]);
    double want[3] = {f16_round(x * 3.0), f16_round(x + 0.125), -x};
    for (int k = 0; k < 3; k++)
      cr_expect_eq(f16_value(b[i][k]), want[k], "b[%d, %d] = %g (0x%04x), expected %g", i, k,
                   f16_value(b[i][k]), b[i][k], want[k]);
  }
  kern_array_free(aa), kern_array_free(ba);
  kern_module_free(m);
}

/* ---- printf ---------------------------------------------------------------------------------- */

/* Runs the kernel with stdout sent to a file; returns what it printed (malloc'd). */
static char *capture_stdout(kern_kernel *k, int64_t n) {
  char path[] = "/tmp/kern_exec_printf_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  kern_status s = kern_launch(k, dev(), KERN_DIM1(n), 0, NULL);
  if (s == KERN_OK) s = kern_device_synchronize(dev()); /* CUDA prints at synchronization */
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  cr_assert_eq(s, KERN_OK, "%s", kern_last_error());
  off_t len = lseek(fd, 0, SEEK_END);
  char *text = calloc(1, (size_t)len + 1);
  cr_assert_eq(pread(fd, text, (size_t)len, 0), len);
  close(fd);
  unlink(path);
  return text;
}

Test(exec_printf, conversions_and_whole_lines) {
  kern_module *m = compile(
      "printf.kern",
      "kernel void one() {\n"
      "    printf(\"v: %d %u %ld %f %g %e %x %s %%\\n\", -7, 7u, 5000000000l, 1.5, 0.25, 1e10, 255, \"str\");\n"
      "}\n"
      "kernel void many() { printf(\"line %d of %d\\n\", tid(), dim(0)); }\n");
  char *text = capture_stdout(kernel(m, "one"), 1);
  cr_expect_str_eq(text, "v: -7 7 5000000000 1.500000 0.25 1.000000e+10 ff str %\n");
  free(text);
  enum { N = 2000 };
  text = capture_stdout(kernel(m, "many"), N);
  static char seen[N];
  int lines = 0;
  for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"), lines++) {
    int i, n;
    if (sscanf(l, "line %d of %d", &i, &n) == 2 && n == N && i >= 0 && i < N)
      seen[i]++;
    else
      cr_log_error("mangled line: '%s'", l);
  }
  cr_expect_eq(lines, N);
  for (int i = 0; i < N; i++) cr_expect_eq(seen[i], 1, "line %d printed %d times", i, seen[i]);
  free(text);
  kern_module_free(m);
}

/* %v spells out any value and %s prints a bool; a composite argument is
 * evaluated once (the draws below happen as often as written: the second
 * kernel draws the same three by hand). */
Test(exec_printf, values_structs_and_bools) {
  kern_module *m = compile(
      "printf_values.kern",
      "struct Body { vec3 pos; int steps; bool live; };\n"
      "kernel void one() {\n"
      "    Body b = Body(vec3(1.5, -2, 3), 7, true);\n"
      "    mat22 m = mat22(1, 2, 3, 4.125);\n"
      "    printf(\"%v %.2v %v\\n\", b, m, quat(0, 0, 0, 1));\n"
      "    printf(\"%s %d %s %v %v %v %v\\n\", 1 > 2, 2 > 1, true, -3, 5000000000ul, 0.5, false);\n"
      "    printf(\"%v|%v|%v\\n\", ivec2(-1, 2), transform(vec3(1, 2, 3), quat(0, 0, 0, 1)), dvec2(0.1, 2));\n"
      "    printf(\"%v %v %v\\n\", vec<float16, 3>(1.5), mat<double, 2, 3>(1, 2, 3, 4, 5, 6), vec<uint8, 2>(200, 1));\n"
      "}\n"
      "kernel void draws() {\n"
      "    uint32 s = rand_init(7);\n"
      "    printf(\"%v %u\\n\", vec2(float(randi(&s) % 100u), float(randi(&s) % 100u)), randi(&s));\n"
      "    uint32 t = rand_init(7);\n"
      "    uint32 a = randi(&t) % 100u;\n"
      "    uint32 c = randi(&t) % 100u;\n"
      "    printf(\"[%u, %u] %u\\n\", a, c, randi(&t));\n"
      "}\n");
  char *text = capture_stdout(kernel(m, "one"), 1);
  cr_expect_str_eq(text,
                   "{pos: [1.5, -2, 3], steps: 7, live: true} [[1, 2], [3, 4.1]] [0, 0, 0, 1]\n"
                   "false 1 true -3 5000000000 0.5 false\n"
                   "[-1, 2]|[1, 2, 3, 0, 0, 0, 1]|[0.1, 2]\n"
                   "[1.5, 1.5, 1.5] [[1, 2, 3], [4, 5, 6]] [200, 1]\n");
  free(text);
  text = capture_stdout(kernel(m, "draws"), 1);
  char *nl = strchr(text, '\n');
  cr_assert(nl, "%s", text);
  *nl = 0;
  cr_expect_str_eq(text, strtok(nl + 1, "\n"),
                   "%%v drew other numbers than the same draws by hand");
  free(text);
  kern_module_free(m);
}

/* ---- strided arrays ---------------------------------------------------------------------------- */

/* Kernels index views and wrapped memory with arbitrary strides: a window of
 * a vec3 array, and an int array wrapped column-major (a transposed layout). */
Test(exec_strided, views_and_wrapped_strides) {
  if (kern_device_is_cuda(dev())) cr_skip_test("wraps host memory: CPU only");
  kern_module *m =
      compile("strided.kern", "kernel void k(vec3[,] a, int[,] b) {\n"
                              "    int i = tid(0);\n    int j = tid(1);\n"
                              "    a[i, j].y += float(10 * i + j);\n    a[i, j][2] = -1.0;\n"
                              "    b[i, j] = 1000 * shape(b, 0) + 100 * shape(b, 1) + 10 * i + j;\n"
                              "}\n");
  int64_t shape[2] = {4, 5}, off[2] = {1, 2}, win[2] = {2, 3};
  kern_array *a = kern_array_new(dev(), KERN_VEC3, 2, shape);
  kern_array *va = kern_array_view(a, 2, off, win);
  int32_t mem[3 * 2] = {0}; /* b[i, j] lives at mem[i + 2 * j] */
  int64_t bshape[2] = {2, 3}, bstrides[2] = {4, 8};
  kern_array *wb = kern_array_wrap(mem, dev(), KERN_INT32, 2, bshape, bstrides);
  cr_assert(a && va && wb, "%s", kern_last_error());
  kern_arg args[2] = {kern_arg_array(va), kern_arg_array(wb)};
  cr_assert_eq(kern_launch(kernel(m, "k"), dev(), KERN_DIM2(2, 3), 2, args), KERN_OK, "%s",
               kern_last_error());
  float out[4][5][3];
  read_back(a, out);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) {
      bool in = i >= 1 && i < 3 && j >= 2 && j < 5;
      float wy = in ? (float)(10 * (i - 1) + (j - 2)) : 0.0f, wz = in ? -1.0f : 0.0f;
      cr_expect(out[i][j][0] == 0 && out[i][j][1] == wy && out[i][j][2] == wz,
                "a[%d, %d] = (%g, %g, %g)", i, j, out[i][j][0], out[i][j][1], out[i][j][2]);
    }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) cr_expect_eq(mem[i + 2 * j], 2300 + 10 * i + j, "b[%d, %d]", i, j);
  kern_array_free(va), kern_array_free(a), kern_array_free(wb);
  kern_module_free(m);
}

/* ---- launches ------------------------------------------------------------------------------------ */

/* Every index of 1D..4D launches runs exactly once, for sizes that do not
 * divide evenly among the worker threads, and tid() is the row-major linear
 * index of (tid(0), ..., tid(3)). */
Test(exec_launch, every_index_runs_exactly_once) {
  kern_module *m = compile(
      "launch.kern",
      "kernel void mark(int[] hits, int[] bad) {\n"
      "    int64 lin = ((int64(tid(0)) * dim(1) + tid(1)) * dim(2) + tid(2)) * dim(3) + tid(3);\n"
      "    if (lin != int64(tid())) atomic_add(&bad[0], 1);\n"
      "    atomic_add(&hits[tid()], 1);\n"
      "}\n");
  static const kern_dims shapes[] = {{1, {1000003, 1, 1, 1}}, {2, {1001, 999, 1, 1}},
                                     {3, {97, 1, 1031, 1}},   {4, {3, 17, 19, 23}},
                                     {1, {1, 1, 1, 1}},       {4, {1, 1, 1, 7}}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t n = 1;
    for (int d = 0; d < shapes[s].ndim; d++) n *= shapes[s].shape[d];
    kern_array *hits = array1(KERN_INT32, n, NULL), *bad = array1(KERN_INT32, 1, NULL);
    kern_arg args[2] = {kern_arg_array(hits), kern_arg_array(bad)};
    cr_assert_eq(kern_launch(kernel(m, "mark"), dev(), shapes[s], 2, args), KERN_OK, "%s",
                 kern_last_error());
    int32_t *h = malloc((size_t)n * sizeof *h), nbad;
    read_back(hits, h), read_back(bad, &nbad);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++) wrong += h[i] != 1;
    cr_expect_eq(wrong, 0, "launch #%zu: %lld of %lld indices did not run exactly once", s,
                 (long long)wrong, (long long)n);
    cr_expect_eq(nbad, 0, "launch #%zu: tid() differs from the linear index of tid(d) %d times", s,
                 nbad);
    free(h);
    kern_array_free(hits), kern_array_free(bad);
  }
  kern_module_free(m);
}
