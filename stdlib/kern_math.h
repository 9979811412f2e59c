/* kern_math.h: the wider math library of generated kernel code.
 *
 * Requires kern_builtins.h and kern_libm.h before it (cmake/embed_stdlib.cmake
 * pastes the stdlib parts in order: kern_abi.h, kern_builtins.h, kern_libm.h,
 * this file, so generated
 * code still needs no include path; a host C file may include this header
 * alone). Compiled by the host C compiler and by NVRTC like kern_builtins.h,
 * under the same rules: no FMA contraction, no platform math function whose
 * result could differ between devices (only floor, trunc, sqrt and fabs,
 * which are exact or correctly rounded everywhere). Produces the kn_ functions
 * frontend/builtins.c names for: erf erfc erfinv, degrees radians rint frac
 * copysign floordiv nonzero, the vector norms and reductions (min max argmin
 * argmax over a vector), trace diag get_diag ddot skew cw_mul cw_div,
 * isnan/isinf/isfinite of vectors, matrices and quats, the bit casts, integer vector %,
 * scalar / vector and scalar / matrix, lower_bound on a sorted array, and
 * the random helpers (randu, randi with a range, sample_*, poisson).
 *
 * ---- erf, erfc, erfinv --------------------------------------------------
 * Computed in float64 with + - * / only (plus floor and sqrt), so the bits
 * are the same on every device; float32 results are the float64 result
 * rounded once. Measured against long double references (tests/
 * test_stdlib_math.c): float64 erf within 2 ulp, erfc within 6 ulp, erfinv
 * within 4 ulp; float32 within 1 ulp (almost always correctly rounded). Methods:
 * erf(x) for |x| < 0.75 from its Maclaurin series; erfc(x) for x >= 0.75
 * from the even part
 * of Laplace's continued fraction, evaluated from its tail with a term count
 * fixed by x; the other cases by 1 - the other function. erfinv: an initial
 * guess from Giles' approximation, then Newton's method on erf (for
 * |y| >= 0.5 on ln erfc, which converges in the tails). e^x and log x are
 * kern_libm.h's.
 */
#ifndef KN_MATH_H
#define KN_MATH_H

#ifndef KN_LIBM_H
#include "kern_libm.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

/* ===== float64 kernels: erf ============================================== */

#define KN__2_SQRTPI 1.12837916709551257390 /* 2 / sqrt(pi) */

/* kern_libm.h's e^x and ln x (kern's own even in a fast-math module). */
#define kn__exp_d kn__lm_exp
#define kn__log_d kn__lm_log

/* e^(-x*x) without the rounding of x*x: x = hi + lo with hi a float32, so
 * hi*hi and 2*hi*lo are exact (valid for |x| < 2^60). */
KN_FN double kn__exp_negsq_d(double x) {
  double hi = (double)(float)x, lo = x - hi;
  return kn__exp_d(-(hi * hi)) * kn__exp_d(-(2.0 * hi * lo + lo * lo));
}

/* erf on |x| < 0.75: its Maclaurin series, 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)). */
KN_FN double kn__erf_series_d(double x) {
  double x2 = x * x, p = x, s = 0.0;
  for (int n = 1; n < 40; n++) {
    p = -p * x2 / (double)n;
    s += p / (double)(2 * n + 1);
  }
  return KN__2_SQRTPI * (x + s);
}

/* erfc on x >= 0.75: the even part of the continued fraction
 * 1 / (x^2 + 1/2 - (1*2/4) / (x^2 + 5/2 - (3*4/4) / (x^2 + 9/2 - ...))),
 * with a term count that reaches float64 precision at x (fixed by x alone). */
KN_FN double kn__erfc_cf_d(double x) {
  if (x > 27.3) return 0.0;
  double z2 = x * x, t = 0.0;
  int n = x < 1.0 ? 220 : x < 1.5 ? 110 : x < 2.0 ? 50 : x < 3.0 ? 32 : x < 4.0 ? 18 : 10;
  for (; n >= 1; n--) t = -((double)n * (double)(2 * n - 1) * 0.5) / ((z2 + 2.0 * n + 0.5) + t);
  return 0.5 * KN__2_SQRTPI * x * kn__exp_negsq_d(x) / ((z2 + 0.5) + t);
}

KN_FN double kn_erf_f64(double x) {
  if (x != x) return x;
  double a = x < 0.0 ? -x : x;
  if (a == 0.0) return x; /* keeps the sign of zero */
  double r = a < 0.75 ? kn__erf_series_d(a) : 1.0 - kn__erfc_cf_d(a);
  return x < 0.0 ? -r : r;
}

KN_FN double kn_erfc_f64(double x) {
  if (x != x) return x;
  if (x < 0.75) return 1.0 - kn_erf_f64(x);
  return kn__erfc_cf_d(x);
}

/* Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011):
 * single-precision coefficients, a starting point for Newton's method. */
KN_FN double kn__erfinv_guess(double y) {
  double w = -kn__log_d((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * y;
}

KN_FN double kn_erfinv_f64(double y) {
  if (y != y || y < -1.0 || y > 1.0) return 0.0 / 0.0;
  double a = y < 0.0 ? -y : y;
  if (a == 1.0) return y * (1.0 / 0.0);
  if (a == 0.0) return y;
  double x = kn__erfinv_guess(a);
  if (a < 0.5) {
    for (int i = 0; i < 3; i++) x += (a - kn_erf_f64(x)) / (KN__2_SQRTPI * kn__exp_negsq_d(x));
  } else { /* Newton on ln erfc(x) = ln(1 - a), nearly linear in the tail */
    double lq = kn__log_d(1.0 - a); /* 1 - a is exact here */
    for (int i = 0; i < 4; i++) {
      double c = kn_erfc_f64(x);
      x += (kn__log_d(c) - lq) * c / (KN__2_SQRTPI * kn__exp_negsq_d(x));
    }
  }
  return y < 0.0 ? -x : x;
}

KN_FN float kn_erf_f32(float x) { return (float)kn_erf_f64((double)x); }
KN_FN float kn_erfc_f32(float x) { return (float)kn_erfc_f64((double)x); }
KN_FN float kn_erfinv_f32(float x) { return (float)kn_erfinv_f64((double)x); }
KN__FVECS(KN__MATH1, erf)
KN__FVECS(KN__MATH1, erfc)
KN__FVECS(KN__MATH1, erfinv)

/* ===== small scalar functions ============================================= */

/* rint: halfway cases to even, from floor (exact on every device); the sign
 * of a zero result is x's. */
#define KN__RINT(T, C, FLOOR)                                                                      \
  KN_FN T kn_rint_##C(T x) {                                                                       \
    T r = FLOOR(x), d = x - r, h = r * (T)0.5;                                                     \
    if (d > (T)0.5 || (d == (T)0.5 && h != FLOOR(h))) r += (T)1;                                   \
    return r == (T)0 ? kn_copysign_##C##_##C(r, x) : r;                                            \
  }
#define KN__SMALL_FLOAT(T, C, SIGN, FLOOR, TRUNC, RAD)                                             \
  KN_FN T kn_copysign_##C##_##C(T x, T y) {                                                        \
    return kn__bits_##C((kn__##C##_bits(x) & ~SIGN) | (kn__##C##_bits(y) & SIGN));                 \
  }                                                                                                \
  KN__RINT(T, C, FLOOR)                                                                            \
  KN_FN T kn_frac_##C(T x) { return x - TRUNC(x); }                                                \
  KN_FN T kn_degrees_##C(T x) { return x * (T)(180.0 / RAD); }                                     \
  KN_FN T kn_radians_##C(T x) { return x * (T)(RAD / 180.0); }                                     \
  KN_FN T kn_floordiv_##C##_##C(T a, T b) { return FLOOR(a / b); }                                 \
  KN_FN T kn_nonzero_##C(T x) { return x != (T)0 ? (T)1 : (T)0; }
#define KN__PI 3.14159265358979323846
KN__SMALL_FLOAT(float, f32, 0x80000000u, floorf, truncf, KN__PI)
KN__SMALL_FLOAT(double, f64, 0x8000000000000000ull, floor, trunc, KN__PI)

/* floordiv on integers rounds the quotient toward -infinity; x / 0 == 0 and
 * MIN / -1 == MIN like kern's / (kern_builtins.h). */
#define KN__FLOORDIV_S(T, C)                                                                       \
  KN_FN T kn_floordiv_##C##_##C(T a, T b) {                                                        \
    T q = kn_div_##C(a, b);                                                                        \
    return b != 0 && kn_mod_##C(a, b) != 0 && ((a < 0) != (b < 0)) ? (T)(q - 1) : q;               \
  }                                                                                                \
  KN_FN T kn_nonzero_##C(T x) { return x != 0 ? (T)1 : (T)0; }
#define KN__FLOORDIV_U(T, C)                                                                       \
  KN_FN T kn_floordiv_##C##_##C(T a, T b) { return kn_div_##C(a, b); }                             \
  KN_FN T kn_nonzero_##C(T x) { return x != 0 ? (T)1 : (T)0; }
KN__FLOORDIV_S(int32_t, i32)
KN__FLOORDIV_S(int64_t, i64)
KN__FLOORDIV_U(uint32_t, u32)
KN__FLOORDIV_U(uint64_t, u64)

KN__FVECS(KN__MATH1, rint)
KN__FVECS(KN__MATH1, frac)
KN__FVECS(KN__MATH1, degrees)
KN__FVECS(KN__MATH1, radians)
KN__FVECS(KN__MATH2, copysign)

/* ===== vectors: reductions, norms, componentwise ========================== */

/* Does a come strictly before b in min's order (NaN last, -0 before +0)? */
#define KN__ORDER_F(T, C, SIGN)                                                                    \
  KN_FN bool kn__before_##C(T a, T b) {                                                            \
    if (a != a) return false;                                                                      \
    if (b != b) return true;                                                                       \
    return a < b || (a == b && (kn__##C##_bits(a) & SIGN) && !(kn__##C##_bits(b) & SIGN));         \
  }                                                                                                \
  KN_FN bool kn__after_##C(T a, T b) {                                                             \
    if (a != a) return false;                                                                      \
    if (b != b) return true;                                                                       \
    return a > b || (a == b && !(kn__##C##_bits(a) & SIGN) && (kn__##C##_bits(b) & SIGN));         \
  }
KN__ORDER_F(float, f32, 0x80000000u)
KN__ORDER_F(double, f64, 0x8000000000000000ull)
KN_FN bool kn__before_i32(int32_t a, int32_t b) { return a < b; }
KN_FN bool kn__after_i32(int32_t a, int32_t b) { return a > b; }

#define KN__S_FOLD(c, f)   r = f(r, a.c);
#define KN__S_ANY(c, f)    r = r || f(a.c);
#define KN__S_ABSSUM(c, f) r = r + f(a.c);
#define KN__S_ALL(c, f)    r = r && f(a.c);
#define KN__VEC_REDUCTIONS(T, N, C, E, EC, unused)                                                 \
  KN_FN E kn_min_##C(T a) {                                                                        \
    E r = a.x;                                                                                     \
    KN__EACH##N(KN__S_FOLD, kn_min_##EC##_##EC) return r;                                          \
  }                                                                                                \
  KN_FN E kn_max_##C(T a) {                                                                        \
    E r = a.x;                                                                                     \
    KN__EACH##N(KN__S_FOLD, kn_max_##EC##_##EC) return r;                                          \
  }                                                                                                \
  KN_FN int32_t kn_argmin_##C(T a) {                                                               \
    int32_t k = 0;                                                                                 \
    for (int32_t i = 1; i < N; i++)                                                                \
      if (kn__before_##EC(kn_get_##C(a, i), kn_get_##C(a, k))) k = i;                              \
    return k;                                                                                      \
  }                                                                                                \
  KN_FN int32_t kn_argmax_##C(T a) {                                                               \
    int32_t k = 0;                                                                                 \
    for (int32_t i = 1; i < N; i++)                                                                \
      if (kn__after_##EC(kn_get_##C(a, i), kn_get_##C(a, k))) k = i;                               \
    return k;                                                                                      \
  }                                                                                                \
  KN__DEF_VV(T, N, C, E, EC, cw_mul, kn__mul_##EC)                                                 \
  KN__DEF_VV(T, N, C, E, EC, cw_div, kn__div_##EC)                                                 \
  KN__DEF_SV(T, N, C, E, EC, div, kn__div_##EC)
KN__VECS(KN__VEC_REDUCTIONS, 0)

#define KN__FVEC_EXTRA(T, N, C, E, EC, unused)                                                     \
  KN_FN E kn_norm_l1_##C(T a) {                                                                    \
    E r = (E)0;                                                                                    \
    KN__EACH##N(KN__S_ABSSUM, kn_abs_##EC) return r;                                               \
  }                                                                                                \
  KN_FN E kn_norm_l2_##C(T a) { return kn_length_##C(a); }                                         \
  KN_FN E kn_norm_huber_##C##_##EC(T v, E delta) {                                                 \
    E a = kn_dot_##C##_##C(v, v);                                                                  \
    if (a <= delta * delta) return (E)0.5 * a;                                                     \
    return delta * (kn_sqrt_##EC(a) - (E)0.5 * delta);                                             \
  }                                                                                                \
  KN_FN E kn_norm_huber_##C(T v) { return kn_norm_huber_##C##_##EC(v, (E)1); }                     \
  KN_FN E kn_norm_pseudo_huber_##C##_##EC(T v, E delta) {                                          \
    E a = kn_dot_##C##_##C(v, v);                                                                  \
    return delta * kn_sqrt_##EC(a / (delta * delta) + (E)1);                                       \
  }                                                                                                \
  KN_FN E kn_norm_pseudo_huber_##C(T v) { return kn_norm_pseudo_huber_##C##_##EC(v, (E)1); }       \
  KN_FN T kn_smooth_normalize_##C##_##EC(T v, E delta) {                                           \
    return kn_div_##C##_##EC(v, kn_norm_pseudo_huber_##C##_##EC(v, delta));                        \
  }                                                                                                \
  KN_FN T kn_smooth_normalize_##C(T v) { return kn_smooth_normalize_##C##_##EC(v, (E)1); }         \
  KN_FN bool kn_isnan_##C(T a) {                                                                   \
    bool r = false;                                                                                \
    KN__EACH##N(KN__S_ANY, kn_isnan_##EC) return r;                                                \
  }                                                                                                \
  KN_FN bool kn_isinf_##C(T a) {                                                                   \
    bool r = false;                                                                                \
    KN__EACH##N(KN__S_ANY, kn_isinf_##EC) return r;                                                \
  }                                                                                                \
  KN_FN bool kn_isfinite_##C(T a) {                                                                \
    bool r = true;                                                                                 \
    KN__EACH##N(KN__S_ALL, kn_isfinite_##EC) return r;                                             \
  }
KN__FVECS(KN__FVEC_EXTRA, 0)

/* integer vector %: the scalar rules per component (x % 0 == x) */
#define KN__IVEC_MOD(T, N, C, E, EC, unused)                                                       \
  KN__DEF_VV(T, N, C, E, EC, mod, kn_mod_i32)                                                      \
  KN__DEF_VS(T, N, C, E, EC, mod, kn_mod_i32)
KN__IVECS(KN__IVEC_MOD, 0)

/* ===== matrices =========================================================== */

#define KN__MAT_EXTRA(N, M, V)                                                                     \
  KN_FN float kn_trace_m##M(kn_mat##M a) {                                                         \
    float s = a.m[0][0];                                                                           \
    for (int i = 1; i < N; i++) s += a.m[i][i];                                                    \
    return s;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_diag_v##N(V v) {                                                              \
    float o[4];                                                                                    \
    kn_mat##M r = kn_zero_m##M();                                                                  \
    kn__arr_v##N(v, o);                                                                            \
    for (int i = 0; i < N; i++) r.m[i][i] = o[i];                                                  \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN V kn_get_diag_m##M(kn_mat##M a) {                                                          \
    float o[4] = {0, 0, 0, 0};                                                                     \
    for (int i = 0; i < N; i++) o[i] = a.m[i][i];                                                  \
    return kn__v##N##_arr(o);                                                                      \
  }                                                                                                \
  KN_FN float kn_ddot_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                      \
    float s = a.m[0][0] * b.m[0][0];                                                               \
    for (int k = 1; k < N * N; k++) s += a.m[k / N][k % N] * b.m[k / N][k % N];                    \
    return s;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_cw_mul_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] *= b.m[i][j];                                          \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_cw_div_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] /= b.m[i][j];                                          \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_div_f32_m##M(float s, kn_mat##M a) {                                          \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] = s / a.m[i][j];                                       \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_isnan_m##M(kn_mat##M a) {                                                          \
    bool r = false;                                                                                \
    for (int k = 0; k < N * N; k++) r = r || kn_isnan_f32(a.m[k / N][k % N]);                      \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_isinf_m##M(kn_mat##M a) {                                                          \
    bool r = false;                                                                                \
    for (int k = 0; k < N * N; k++) r = r || kn_isinf_f32(a.m[k / N][k % N]);                      \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_isfinite_m##M(kn_mat##M a) {                                                       \
    bool r = true;                                                                                 \
    for (int k = 0; k < N * N; k++) r = r && kn_isfinite_f32(a.m[k / N][k % N]);                   \
    return r;                                                                                      \
  }
KN__MAT_EXTRA(2, 22, kn_vec2)
KN__MAT_EXTRA(3, 33, kn_vec3)
KN__MAT_EXTRA(4, 44, kn_vec4)

/* skew(v) * u == cross(v, u) */
KN_FN kn_mat33 kn_skew_v3(kn_vec3 v) {
  return kn_make_m33(0.0f, -v.z, v.y, v.z, 0.0f, -v.x, -v.y, v.x, 0.0f);
}

KN_FN bool kn_isnan_q(kn_quat q) { return kn_isnan_v4(kn__q_v4(q)); }
KN_FN bool kn_isinf_q(kn_quat q) { return kn_isinf_v4(kn__q_v4(q)); }
KN_FN bool kn_isfinite_q(kn_quat q) { return kn_isfinite_v4(kn__q_v4(q)); }

/* ===== bit casts ========================================================= */

#define KN__BITCAST(TO, TN, FROM, FC, EXPR)                                                        \
  KN_FN TO kn_bitcast_##TN##_##FC(FROM x) { return EXPR; }
KN_FN kn_f16 kn__f16_of(uint16_t b) {
  kn_f16 h;
  h.bits = b;
  return h;
}
KN__BITCAST(kn_f16, float16, int16_t, i16, kn__f16_of((uint16_t)x))
KN__BITCAST(kn_f16, float16, uint16_t, u16, kn__f16_of(x))
KN__BITCAST(int16_t, int16, kn_f16, f16, (int16_t)x.bits)
KN__BITCAST(uint16_t, uint16, kn_f16, f16, x.bits)
KN_FN kn_bf16 kn__bf16_of(uint16_t b) {
  kn_bf16 h;
  h.bits = b;
  return h;
}
KN__BITCAST(kn_bf16, bfloat16, int16_t, i16, kn__bf16_of((uint16_t)x))
KN__BITCAST(kn_bf16, bfloat16, uint16_t, u16, kn__bf16_of(x))
KN__BITCAST(int16_t, int16, kn_bf16, bf16, (int16_t)x.bits)
KN__BITCAST(uint16_t, uint16, kn_bf16, bf16, x.bits)
KN__BITCAST(float, float32, int32_t, i32, kn__bits_f32((uint32_t)x))
KN__BITCAST(float, float32, uint32_t, u32, kn__bits_f32(x))
KN__BITCAST(int32_t, int32, float, f32, (int32_t)kn__f32_bits(x))
KN__BITCAST(uint32_t, uint32, float, f32, kn__f32_bits(x))
KN__BITCAST(double, float64, int64_t, i64, kn__bits_f64((uint64_t)x))
KN__BITCAST(double, float64, uint64_t, u64, kn__bits_f64(x))
KN__BITCAST(int64_t, int64, double, f64, (int64_t)kn__f64_bits(x))
KN__BITCAST(uint64_t, uint64, double, f64, kn__f64_bits(x))

/* ===== lower_bound ======================================================== */

/* The first index i in [lo, hi) of the sorted 1-D array a with a[i] >= v
 * (hi when there is none); the range is clamped to the array. */
#define KN__LOWER_BOUND(T, C)                                                                      \
  KN_FN int32_t kn_lower_bound_##C(kn_array a, int64_t lo, int64_t hi, T v) {                      \
    if (lo < 0) lo = 0;                                                                            \
    if (hi > a.shape[0]) hi = a.shape[0];                                                          \
    while (lo < hi) {                                                                              \
      int64_t mid = lo + (hi - lo) / 2;                                                            \
      if (*(const T *)(a.data + mid * a.strides[0]) < v)                                           \
        lo = mid + 1;                                                                              \
      else                                                                                         \
        hi = mid;                                                                                  \
    }                                                                                              \
    return (int32_t)lo;                                                                            \
  }
KN__LOWER_BOUND(int32_t, i32)
KN__LOWER_BOUND(int64_t, i64)
KN__LOWER_BOUND(uint32_t, u32)
KN__LOWER_BOUND(uint64_t, u64)
KN__LOWER_BOUND(float, f32)
KN__LOWER_BOUND(double, f64)

/* ===== random helpers ===================================================== */

/* Warp's formulas (warp/native/rand.h) on kern's generator (kern_builtins.h):
 * kn_rand_<name>_<argument count>, the state first. The integer ranges use
 * kern's % (a span of 0 leaves the draw unchanged); poisson uses the exp and
 * log written above, so its integers are the same on every device. */
KN_FN uint32_t kn_rand_rand_init_1(uint32_t seed) { return kn__pcg_hash(seed); }
KN_FN uint32_t kn_rand_randu_1(uint32_t *s) { return kn_randi(s); }
KN_FN uint32_t kn_rand_randu_3(uint32_t *s, uint32_t lo, uint32_t hi) {
  return kn_mod_u32(kn_randi(s), hi - lo) + lo;
}
KN_FN int32_t kn_rand_randi_3(uint32_t *s, int32_t lo, int32_t hi) {
  return (int32_t)(kn_mod_u32(kn_randi(s), (uint32_t)hi - (uint32_t)lo) + (uint32_t)lo);
}
#define KN__2PI 6.28318530717958647692f
/* Box-Muller on two draws. */
KN_FN float kn_randn(uint32_t *s) {
  float u1 = kn_randf(s), u2 = kn_randf(s);
  float r = kn_sqrt_f32(-2.0f * kn_log_f32(1.0f - u1)); /* 1 - u1 is in (0, 1] */
  return r * kn_cos_f32(6.28318530717958647692f * u2);
}
KN_FN kn_vec2 kn_rand_sample_triangle_1(uint32_t *s) {
  float r = kn_sqrt_f32(kn_randf(s));
  return kn_make_v2(1.0f - r, kn_randf(s) * r);
}
KN_FN kn_vec2 kn_rand_sample_unit_ring_1(uint32_t *s) {
  float t = kn_randf_range(s, 0.0f, KN__2PI);
  return kn_make_v2(kn_cos_f32(t), kn_sin_f32(t));
}
KN_FN kn_vec2 kn_rand_sample_unit_disk_1(uint32_t *s) {
  float r = kn_sqrt_f32(kn_randf(s)), t = kn_randf_range(s, 0.0f, KN__2PI);
  return kn_make_v2(r * kn_cos_f32(t), r * kn_sin_f32(t));
}
/* phi from acos(1 - k * u) (k = 2: sphere, 1: upper hemisphere), radius r. */
KN_FN kn_vec3 kn__sample_sphere(uint32_t *s, float k, bool ball) {
  float phi = kn_acos_f32(1.0f - k * kn_randf(s)), t = kn_randf_range(s, 0.0f, KN__2PI);
  float r = ball ? kn_pow_f32_f32(kn_randf(s), 1.0f / 3.0f) : 1.0f, sp = kn_sin_f32(phi);
  return kn_make_v3(r * kn_cos_f32(t) * sp, r * kn_sin_f32(t) * sp, r * kn_cos_f32(phi));
}
KN_FN kn_vec3 kn_rand_sample_unit_sphere_surface_1(uint32_t *s) {
  return kn__sample_sphere(s, 2.0f, false);
}
KN_FN kn_vec3 kn_rand_sample_unit_sphere_1(uint32_t *s) { return kn__sample_sphere(s, 2.0f, true); }
KN_FN kn_vec3 kn_rand_sample_unit_hemisphere_surface_1(uint32_t *s) {
  return kn__sample_sphere(s, 1.0f, false);
}
KN_FN kn_vec3 kn_rand_sample_unit_hemisphere_1(uint32_t *s) {
  return kn__sample_sphere(s, 1.0f, true);
}
/* Warp's sample_cdf: the first index whose cumulative weight reaches one
 * uniform draw (lower_bound of randf in the sorted table). */
KN_FN int32_t kn_rand_sample_cdf_2(uint32_t *s, kn_array cdf) {
  return kn_lower_bound_f32(cdf, 0, (int64_t)9223372036854775807LL, kn_randf(s));
}
KN_FN kn_vec2 kn_rand_sample_unit_square_1(uint32_t *s) {
  float x = kn_randf(s) - 0.5f;
  return kn_make_v2(x, kn_randf(s) - 0.5f);
}
KN_FN kn_vec3 kn_rand_sample_unit_cube_1(uint32_t *s) {
  float x = kn_randf(s) - 0.5f, y = kn_randf(s) - 0.5f;
  return kn_make_v3(x, y, kn_randf(s) - 0.5f);
}
KN_FN kn_vec4 kn_rand_sample_unit_hypercube_1(uint32_t *s) {
  float x = kn_randf(s) - 0.5f, y = kn_randf(s) - 0.5f, z = kn_randf(s) - 0.5f;
  return kn_make_v4(x, y, z, kn_randf(s) - 0.5f);
}

KN_FN float kn__expf(float x) { return (float)kn__exp_d((double)x); }
KN_FN float kn__logf(float x) { return (float)kn__log_d((double)x); }

/* log Gamma(x) for x >= 1 (Zhang and Jin, via NumPy and Warp). */
KN_FN float kn__loggam(float x) {
  if (x == 1.0f || x == 2.0f) return 0.0f;
  uint32_t n = x < 7.0f ? (uint32_t)(7.0f - x) : 0u;
  float x0 = x + (float)n, x2 = (1.0f / x0) * (1.0f / x0), g = -1.39243221690590e+00f;
  g = g * x2 + 1.796443723688307e-01f;
  g = g * x2 - 2.955065359477124e-02f;
  g = g * x2 + 6.410256410256410e-03f;
  g = g * x2 - 1.917526917526918e-03f;
  g = g * x2 + 8.417508417508418e-04f;
  g = g * x2 - 5.952380952380952e-04f;
  g = g * x2 + 7.936507936507937e-04f;
  g = g * x2 - 2.777777777777778e-03f;
  g = g * x2 + 8.333333333333333e-02f;
  float gl = g / x0 + 0.5f * 1.8378770664093453f + (x0 - 0.5f) * kn__logf(x0) - x0;
  for (uint32_t k = 1; k <= n; k++) {
    gl -= kn__logf(x0 - 1.0f);
    x0 -= 1.0f;
  }
  return gl;
}

/* Poisson by multiplying uniforms (small lambda). */
KN_FN uint32_t kn__poisson_mult(uint32_t *s, float lam) {
  float enlam = kn__expf(-lam), prod = 1.0f;
  uint32_t x = 0;
  for (;;) {
    prod *= kn_randf(s);
    if (prod <= enlam) return x;
    x++;
  }
}

/* Hoermann's transformed rejection (PTRS), for lambda >= 10. */
KN_FN uint32_t kn__poisson_ptrs(uint32_t *s, float lam) {
  float slam = kn_sqrt_f32(lam), loglam = kn__logf(lam);
  float b = 0.931f + 2.53f * slam, a = -0.059f + 0.02483f * b;
  float invalpha = 1.1239f + 1.1328f / (b - 3.4f), vr = 0.9277f - 3.6224f / (b - 2.0f);
  for (;;) {
    float u = kn_randf(s) - 0.5f, v = kn_randf(s), us = 0.5f - kn_abs_f32(u);
    float kf = kn_floor_f32((2.0f * a / us + b) * u + lam + 0.43f);
    uint32_t k = kn_cvt_f32_u32(kf);
    if (us >= 0.07f && v <= vr) return k;
    if (kf < 0.0f || (us < 0.013f && v > us)) continue;
    if (kn__logf(v) + kn__logf(invalpha) - kn__logf(a / (us * us) + b) <=
        -lam + kf * loglam - kn__loggam(kf + 1.0f))
      return k;
  }
}

KN_FN uint32_t kn_rand_poisson_2(uint32_t *s, float lam) {
  if (!(lam > 0.0f)) return 0u; /* also NaN */
  return lam >= 10.0f ? kn__poisson_ptrs(s, lam) : kn__poisson_mult(s, lam);
}

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
