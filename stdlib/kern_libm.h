/* kern_libm.h: kern's own transcendental functions, the same bits on every
 * device.
 *
 * Requires kern_builtins.h before it (cmake/embed_stdlib.cmake pastes the
 * parts in order: kern_abi.h, kern_builtins.h, this file, kern_math.h ...; a
 * host C file may include this header alone). Compiled by the host C compiler
 * and by NVRTC from the same text, under the stdlib's rules: no FMA contraction
 * (-ffp-contract=off, --fmad=false), and no platform math function but the
 * exact or correctly rounded ones (floor, sqrt). Produces kn_<f>_f32 and
 * kn_<f>_f64 for exp exp2 log log2 log10 sin cos tan asin acos atan sinh cosh
 * tanh cbrt, kn_pow_* and kn_atan2_* on two arguments, their componentwise
 * forms on float vectors, and the float64 kernels kn__lm_* that kern_math.h
 * and kern_spatial.h build on.
 *
 * Method. Everything is computed in float64 with + - * / and sqrt, carrying a
 * second double where one rounding would lose accuracy (double-double: Dekker's
 * exact product through Veltkamp's split, Knuth's exact sum), so each float64
 * result is the double-double rounded once: within 1 ulp, almost always
 * correctly rounded (the maxima measured by tests/test_libm.c are in
 * docs/language.md). A float32 function is its float64 function rounded to
 * float32. exp: x = k ln2 + r, e^r by its Taylor series; log: x = 2^e m,
 * ln m = 2 atanh((m - 1) / (m + 1)); sin, cos, tan: x = q pi/2 + r, by
 * Cody-Waite with pi/2 in four pieces for |x| < 2^20, beyond that by Payne and
 * Hanek's reduction on 256 bits of 2/pi in integer arithmetic, then Taylor
 * series on |r| <= pi/4; atan, atan2, asin, acos: one arctangent of a
 * double-double ratio, reduced around 0, 1/4, 1/2, 3/4, 1 (and 1/z beyond 1);
 * sinh, cosh, tanh from e^x and e^x - 1; cbrt by Newton's method and a last
 * double-double step; pow as e^(y ln x) with ln x in double-double. Special
 * values follow C99 Annex F; a NaN argument is returned as it is (its bits),
 * and a NaN made here (log(-1), sin(inf), pow(-2, 0.5)) is the default quiet
 * NaN, 0x7ff8000000000000 (0x7fc00000 in float32), on every device.
 * The constants come from scripts/libm_constants.py.
 *
 * A fast-math module (KN_FAST_MATH defined) gets the platform's functions
 * instead: libm on the CPU, CUDA's (approximate under --use_fast_math) on a GPU.
 */
#ifndef KN_LIBM_H
#define KN_LIBM_H

#ifndef KN_BUILTINS_H
#include "kern_builtins.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#define KN__LM static __device__
#else
#define KN__LM static inline __attribute__((unused))
#endif

#define KN__LN2C_HI    0.6931471803691238 /* 32 bits: k * KN__LN2C_HI is exact */
#define KN__LN2C_LO    1.9082149292705877e-10
#define KN__LN2_HI     0.6931471805599453
#define KN__LN2_LO     2.3190468138462996e-17
#define KN__INVLN2_HI  1.4426950408889634
#define KN__INVLN2_LO  2.0355273740931033e-17
#define KN__INVLN10_HI 0.4342944819032518
#define KN__INVLN10_LO 1.098319650216765e-17
#define KN__PIO2_HI    1.5707963267948966
#define KN__PIO2_LO    6.123233995736766e-17
#define KN__PI_HI      3.141592653589793
#define KN__PI_LO      1.2246467991473532e-16
#define KN__THIRD_HI   0.3333333333333333
#define KN__THIRD_LO   1.850371707708594e-17
#define KN__PIO2_1     1.5707963267341256 /* 33 bits each: k * piece is exact for k < 2^20 */
#define KN__PIO2_2     6.077100506303966e-11
#define KN__PIO2_3     2.0222662487111665e-21
#define KN__PIO2_4     8.4784276603689e-32
#define KN__SQRT2      1.4142135623730951
#define KN__NAN64      kn__bits_f64(0x7ff8000000000000ull)
#define KN__INF64      kn__bits_f64(0x7ff0000000000000ull)

/* ===== bits and scaling =================================================== */

/* 2^k for k in -1022..1023, from its bits. */
KN_FN double kn__pow2_d(int k) { return kn__bits_f64((uint64_t)(k + 1023) << 52); }

/* x * 2^k (|k| <= 2044) in two exact steps, so a subnormal result is rounded once. */
KN_FN double kn__scale_d(double x, int k) {
  int k1 = k / 2;
  return x * kn__pow2_d(k1) * kn__pow2_d(k - k1);
}

KN_FN double kn__abs_d(double x) { return kn__bits_f64(kn__f64_bits(x) & 0x7fffffffffffffffull); }

/* ===== double-double arithmetic ============================================ */

/* h + l with |l| <= ulp(h) / 2 (or a pair on its way there). */
typedef struct kn__dd {
  double h, l;
} kn__dd;

KN_FN kn__dd kn__dd_of(double h, double l) {
  kn__dd r;
  r.h = h;
  r.l = l;
  return r;
}
/* a + b exactly (Knuth). */
KN_FN kn__dd kn__two_sum(double a, double b) {
  double s = a + b, bb = s - a;
  return kn__dd_of(s, (a - (s - bb)) + (b - bb));
}
/* a + b exactly when |a| >= |b| (Dekker). */
KN_FN kn__dd kn__fast_two_sum(double a, double b) {
  double s = a + b;
  return kn__dd_of(s, b - (s - a));
}
/* a * b exactly (Dekker, with Veltkamp's split; |a|, |b| < 2^995). */
KN_FN kn__dd kn__two_prod(double a, double b) {
  double ca = 134217729.0 * a, cb = 134217729.0 * b;
  double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh, p = a * b;
  return kn__dd_of(p, ((ah * bh - p) + ah * bl + al * bh) + al * bl);
}
KN_FN kn__dd kn__dd_neg(kn__dd a) { return kn__dd_of(-a.h, -a.l); }
KN_FN kn__dd kn__dd_add(kn__dd a, kn__dd b) {
  kn__dd s = kn__two_sum(a.h, b.h), t = kn__two_sum(a.l, b.l);
  s = kn__fast_two_sum(s.h, s.l + t.h);
  return kn__fast_two_sum(s.h, s.l + t.l);
}
KN_FN kn__dd kn__dd_add_d(kn__dd a, double b) {
  kn__dd s = kn__two_sum(a.h, b);
  return kn__fast_two_sum(s.h, s.l + a.l);
}
KN_FN kn__dd kn__dd_mul(kn__dd a, kn__dd b) {
  kn__dd p = kn__two_prod(a.h, b.h);
  return kn__fast_two_sum(p.h, p.l + (a.h * b.l + a.l * b.h));
}
KN_FN kn__dd kn__dd_mul_d(kn__dd a, double b) {
  kn__dd p = kn__two_prod(a.h, b);
  return kn__fast_two_sum(p.h, p.l + a.l * b);
}
/* a / b: a first quotient, then the quotient of the exact remainder. */
KN_FN kn__dd kn__dd_div(kn__dd a, kn__dd b) {
  double q = a.h / b.h;
  kn__dd r = kn__dd_add(a, kn__dd_neg(kn__dd_mul_d(b, q)));
  return kn__fast_two_sum(q, r.h / b.h);
}
/* sqrt(a) for a > 0: one Newton step on the correctly rounded root. */
KN_FN kn__dd kn__dd_sqrt(kn__dd a) {
  double s = sqrt(a.h);
  kn__dd p = kn__two_prod(s, s);
  return kn__fast_two_sum(s, (((a.h - p.h) - p.l) + a.l) / (2.0 * s));
}
/* a * 2^k, exactly while the result stays normal. */
KN_FN kn__dd kn__dd_ldexp(kn__dd a, int k) {
  double s = kn__pow2_d(k);
  return kn__dd_of(a.h * s, a.l * s);
}

/* ===== exp ================================================================ */

/* e^(rh + rl) for |rh| <= 0.36, |rl| <= 2^-40: 1 + r + r^2/2 exactly as far as
 * it matters, the rest of the Taylor series (to r^15/15!) in double. */
KN__LM kn__dd kn__exp_r(double rh, double rl) {
  kn__dd s = kn__two_prod(rh, rh);
  double p = 1.0 / 1307674368000.0; /* 1/15!, then Horner down to 1/3! */
  p = p * rh + 1.0 / 87178291200.0;
  p = p * rh + 1.0 / 6227020800.0;
  p = p * rh + 1.0 / 479001600.0;
  p = p * rh + 1.0 / 39916800.0;
  p = p * rh + 1.0 / 3628800.0;
  p = p * rh + 1.0 / 362880.0;
  p = p * rh + 1.0 / 40320.0;
  p = p * rh + 1.0 / 5040.0;
  p = p * rh + 1.0 / 720.0;
  p = p * rh + 1.0 / 120.0;
  p = p * rh + 1.0 / 24.0;
  p = p * rh + 1.0 / 6.0;
  kn__dd a = kn__two_sum(1.0, rh), b = kn__two_sum(a.h, 0.5 * s.h);
  double lo = a.l + b.l + (0.5 * s.l + (rh * s.h) * p) + (rl + rl * rh);
  return kn__fast_two_sum(b.h, lo);
}

/* e^(xh + xl) = 2^k (h + l), for |xh| <= 746 (|xl| <= ulp(xh)). */
KN__LM kn__dd kn__exp_dd(double xh, double xl, int *k) {
  double kd = floor(xh * KN__INVLN2_HI + 0.5);
  kn__dd r = kn__two_sum(xh - kd * KN__LN2C_HI, xl - kd * KN__LN2C_LO);
  *k = (int)kd;
  return kn__exp_r(r.h, r.l);
}

/* 2^k (h + l) rounded once (twice only when the result is subnormal). */
KN_FN double kn__lm_scale(kn__dd e, int k) { return kn__scale_d(e.h + e.l, k); }

KN__LM double kn__lm_exp(double x) {
  if (x != x) return x;
  if (x > 709.8) return KN__INF64;
  if (x < -745.2) return 0.0;
  int k;
  kn__dd e = kn__exp_dd(x, 0.0, &k);
  return kn__lm_scale(e, k);
}

KN__LM double kn__lm_exp2(double x) {
  if (x != x) return x;
  if (x >= 1024.0) return KN__INF64;
  if (x <= -1075.0) return 0.0;
  double k = floor(x + 0.5), r = x - k; /* exact */
  kn__dd t = kn__two_prod(r, KN__LN2_HI);
  t = kn__fast_two_sum(t.h, t.l + r * KN__LN2_LO);
  return kn__lm_scale(kn__exp_r(t.h, t.l), (int)k);
}

/* e^x - 1 for |x| <= 44, in double-double: exact where e^x is near 1, because
 * there k = 0 and every error term of kn__exp_r is of the order of x^2. */
KN__LM kn__dd kn__expm1_dd(double x) {
  int k;
  kn__dd e = kn__exp_dd(x, 0.0, &k);
  return kn__dd_add_d(kn__dd_ldexp(e, k), -1.0);
}

/* ===== log ================================================================ */

/* ln x for finite x > 0 as e ln2 + ln m (x = 2^e m, m in [sqrt(1/2), sqrt(2))),
 * ln m = 2s + 2s^3 (1/3 + s^2/5 + ...), s = (m - 1) / (m + 1), |s| < 0.172;
 * e ln2 and ln m apart in *lm for log2 and log10. Relative error ~2^-100 when
 * `precise` (pow), else ~2^-60 (the s^3 term in double: enough for one rounding). */
KN__LM kn__dd kn__log_dd(double x, int precise, int *ep, kn__dd *lm) {
  int e = 0;
  if (x < 2.2250738585072014e-308) x *= 18014398509481984.0, e = -54; /* 2^54 */
  uint64_t b = kn__f64_bits(x);
  e += (int)(b >> 52) - 1023;
  double m = kn__bits_f64((b & 0xfffffffffffffull) | 0x3ff0000000000000ull);
  if (m > KN__SQRT2) m *= 0.5, e++;
  kn__dd s = kn__dd_div(kn__dd_of(m - 1.0, 0.0), kn__two_sum(m, 1.0));
  double z = s.h * s.h, w = 1.0 / 25.0;
  w = w * z + 1.0 / 23.0;
  w = w * z + 1.0 / 21.0;
  w = w * z + 1.0 / 19.0;
  w = w * z + 1.0 / 17.0;
  w = w * z + 1.0 / 15.0;
  w = w * z + 1.0 / 13.0;
  w = w * z + 1.0 / 11.0;
  w = w * z + 1.0 / 9.0;
  w = w * z + 1.0 / 7.0;
  w = w * z + 1.0 / 5.0;
  kn__dd t = kn__dd_of((s.h * z) * (KN__THIRD_HI + w * z), 0.0); /* ~2^-60 relative */
  if (precise) {
    kn__dd s2 = kn__dd_mul(s, s), c = kn__dd_add_d(kn__dd_of(KN__THIRD_HI, KN__THIRD_LO), w * z);
    t = kn__dd_mul(kn__dd_mul(s2, c), s);
  }
  *lm = kn__dd_ldexp(kn__dd_add(s, t), 1);
  *ep = e;
  return kn__dd_add(kn__two_sum((double)e * KN__LN2C_HI, (double)e * KN__LN2C_LO), *lm);
}

/* NaN, negative, zero and infinite arguments of the logarithms; 0 if none. */
KN_FN int kn__log_special(double x, double *r) {
  if (x != x) return *r = x, 1;
  if (x < 0.0) return *r = KN__NAN64, 1;
  if (x == 0.0) return *r = -KN__INF64, 1;
  if (x > 1.7976931348623157e308) return *r = x, 1;
  return 0;
}

KN__LM double kn__lm_log(double x) {
  double r;
  if (kn__log_special(x, &r)) return r;
  int e;
  kn__dd lm;
  return kn__log_dd(x, 0, &e, &lm).h;
}

KN__LM double kn__lm_log2(double x) {
  double r;
  if (kn__log_special(x, &r)) return r;
  int e;
  kn__dd lm;
  kn__log_dd(x, 0, &e, &lm);
  return kn__dd_add_d(kn__dd_mul(lm, kn__dd_of(KN__INVLN2_HI, KN__INVLN2_LO)), (double)e).h;
}

KN__LM double kn__lm_log10(double x) {
  double r;
  if (kn__log_special(x, &r)) return r;
  int e;
  kn__dd lm;
  return kn__dd_mul(kn__log_dd(x, 0, &e, &lm), kn__dd_of(KN__INVLN10_HI, KN__INVLN10_LO)).h;
}

/* ===== sin, cos, tan ====================================================== */

/* The 32-bit chunk of a little-endian array of 32-bit limbs at bit `pos`. */
KN_FN uint32_t kn__limbs_at(const uint32_t *s, int pos) {
  uint64_t v = (uint64_t)s[pos / 32] | ((uint64_t)s[pos / 32 + 1] << 32);
  return (uint32_t)(v >> (pos % 32));
}

/* The bits of x (2/pi) mod 4 from the point on: S = M * (8 words of 2/pi
 * starting at word i0), as 32-bit limbs; the binary point is at bit 224 - e1. */
KN_FN void kn__pio2_product(uint64_t mant, int i0, uint32_t *s) {
  const uint32_t w[40] = {
      0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
      0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
      0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
      0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
      0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
      0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du};
  uint64_t acc[11] = {0}, ml = mant & 0xffffffffu, mh = mant >> 32;
  for (int j = 0; j < 8; j++) {
    uint64_t lo = ml * w[i0 + j], hi = mh * w[i0 + j];
    int p = 7 - j;
    acc[p] += lo & 0xffffffffu, acc[p + 1] += (lo >> 32) + (hi & 0xffffffffu),
        acc[p + 2] += hi >> 32;
  }
  for (int i = 0; i < 10; i++) acc[i + 1] += acc[i] >> 32, s[i] = (uint32_t)acc[i];
  s[10] = (uint32_t)acc[10];
}

/* Payne-Hanek: |x| >= 2^20 as q pi/2 + r, |r| <= pi/4, r in double-double;
 * returns q mod 4. x = M 2^E; the words of 2/pi whose products with M are
 * multiples of 4 are skipped, the next 256 bits kept. */
KN_COLD int kn__rem_pio2_large(double x, kn__dd *r) {
  uint64_t b = kn__f64_bits(x);
  int e = (int)((b >> 52) & 0x7ff) - 1075, i0 = e >= 2 ? (e - 2) / 32 : 0, e1 = e - 32 * (i0 + 1);
  uint32_t s[11], c[5];
  kn__pio2_product((b & 0xfffffffffffffull) | 0x10000000000000ull, i0, s);
  int point = 224 - e1, q = (int)(kn__limbs_at(s, point) & 3u), neg = 0;
  for (int k = 0; k < 5; k++) c[k] = kn__limbs_at(s, point - 32 * (k + 1));
  if (c[0] >> 31) { /* fraction >= 1/2: take 1 - fraction and one more quadrant */
    uint64_t carry = 1;
    for (int k = 4; k >= 0; k--) {
      uint64_t v = (uint64_t)(uint32_t)~c[k] + carry;
      c[k] = (uint32_t)v, carry = v >> 32;
    }
    q++, neg = 1;
  }
  kn__dd f = kn__dd_of((double)c[4] * 0x1p-160, 0.0);
  for (int k = 3; k >= 0; k--) f = kn__dd_add_d(f, (double)c[k] * kn__pow2_d(-32 * (k + 1)));
  f = kn__dd_mul(f, kn__dd_of(KN__PIO2_HI, KN__PIO2_LO));
  if (neg != (x < 0.0)) f = kn__dd_neg(f);
  *r = f;
  return (x < 0.0 ? -q : q) & 3;
}

/* x = q pi/2 + r, |r| <= pi/4 (a hair more), r in double-double; q mod 4. */
KN__LM int kn__rem_pio2(double x, kn__dd *r) {
  if (!(x > -1048576.0 && x < 1048576.0)) return kn__rem_pio2_large(x, r);
  double k = floor(x * 0.63661977236758134308 + 0.5);
  kn__dd a = kn__two_sum(x - k * KN__PIO2_1, -k * KN__PIO2_2); /* x - k p1 is exact */
  a = kn__dd_add_d(a, -k * KN__PIO2_3);
  *r = kn__fast_two_sum(a.h, a.l - k * KN__PIO2_4);
  return (int)(k - 4.0 * floor(k * 0.25));
}

/* sin r for |r| <= 0.786, Taylor to r^19 / 19!. */
KN__LM kn__dd kn__sin_r(kn__dd r) {
  double x = r.h, z = x * x;
  double p = -1.0 / 121645100408832000.0;
  p = p * z + 1.0 / 355687428096000.0;
  p = p * z - 1.0 / 1307674368000.0;
  p = p * z + 1.0 / 6227020800.0;
  p = p * z - 1.0 / 39916800.0;
  p = p * z + 1.0 / 362880.0;
  p = p * z - 1.0 / 5040.0;
  p = p * z + 1.0 / 120.0;
  p = p * z - 1.0 / 6.0;
  return kn__fast_two_sum(x, (x * z) * p + r.l * (1.0 - 0.5 * z));
}

/* cos r for |r| <= 0.786: 1 - r^2/2 exactly as far as it matters, then Taylor
 * to r^20 / 20!. */
KN__LM kn__dd kn__cos_r(kn__dd r) {
  double x = r.h;
  kn__dd s = kn__two_prod(x, x);
  double z = s.h, p = 1.0 / 2432902008176640000.0;
  p = p * z - 1.0 / 6402373705728000.0;
  p = p * z + 1.0 / 20922789888000.0;
  p = p * z - 1.0 / 87178291200.0;
  p = p * z + 1.0 / 479001600.0;
  p = p * z - 1.0 / 3628800.0;
  p = p * z + 1.0 / 40320.0;
  p = p * z - 1.0 / 720.0;
  p = p * z + 1.0 / 24.0;
  kn__dd a = kn__two_sum(1.0, -0.5 * s.h);
  return kn__fast_two_sum(a.h, a.l + ((z * z) * p - 0.5 * s.l - r.l * x));
}

/* sin (cos when `cosine`) of x in quadrant q + r. */
KN__LM kn__dd kn__sincos_dd(double x, int cosine) {
  kn__dd r;
  int q = (kn__rem_pio2(x, &r) + cosine) & 3;
  kn__dd v = q & 1 ? kn__cos_r(r) : kn__sin_r(r);
  return q & 2 ? kn__dd_neg(v) : v;
}

KN__LM double kn__lm_sin(double x) {
  if (x != x) return x;
  if (x - x != 0.0) return KN__NAN64;                                    /* infinite */
  if (x > -7.450580596923828e-09 && x < 7.450580596923828e-09) return x; /* |x| < 2^-27 */
  return kn__sincos_dd(x, 0).h;
}

KN__LM double kn__lm_cos(double x) {
  if (x != x) return x;
  if (x - x != 0.0) return KN__NAN64;
  if (x > -7.450580596923828e-09 && x < 7.450580596923828e-09) return 1.0;
  return kn__sincos_dd(x, 1).h;
}

KN__LM double kn__lm_tan(double x) {
  if (x != x) return x;
  if (x - x != 0.0) return KN__NAN64;
  if (x > -7.450580596923828e-09 && x < 7.450580596923828e-09) return x;
  kn__dd r;
  int q = kn__rem_pio2(x, &r);
  kn__dd s = kn__sin_r(r), c = kn__cos_r(r);
  return q & 1 ? -kn__dd_div(c, s).h : kn__dd_div(s, c).h;
}

/* ===== atan, atan2, asin, acos ============================================ */

/* atan z for 0 <= z <= 1: atan c + atan((z - c) / (1 + z c)), c the nearest
 * of 0, 1/4, 1/2, 3/4, 1, and a Taylor series to t^21 on |t| <= 1/8. */
KN__LM kn__dd kn__atan_unit(kn__dd z) {
  int j = (int)floor(z.h * 4.0 + 0.5);
  double c = 0.25 * (double)j;
  kn__dd base = kn__dd_of(0.0, 0.0), t = z;
  if (j) {
    base = j == 1   ? kn__dd_of(0.24497866312686414, 1.0698755618734451e-17)
           : j == 2 ? kn__dd_of(0.4636476090008061, 2.2698777452961687e-17)
           : j == 3 ? kn__dd_of(0.6435011087932844, 1.5834785051444286e-17)
                    : kn__dd_of(0.5 * KN__PIO2_HI, 0.5 * KN__PIO2_LO);
    t = kn__dd_div(kn__dd_add_d(z, -c), kn__dd_add_d(kn__dd_mul_d(z, c), 1.0));
  }
  double x = t.h, w = x * x, p = 1.0 / 21.0;
  p = p * w - 1.0 / 19.0;
  p = p * w + 1.0 / 17.0;
  p = p * w - 1.0 / 15.0;
  p = p * w + 1.0 / 13.0;
  p = p * w - 1.0 / 11.0;
  p = p * w + 1.0 / 9.0;
  p = p * w - 1.0 / 7.0;
  p = p * w + 1.0 / 5.0;
  p = p * w - 1.0 / 3.0;
  return kn__dd_add(base, kn__fast_two_sum(x, (x * w) * p + t.l * (1.0 - w)));
}

/* atan(y / x) in [0, pi/2] for y >= 0, x >= 0, not both 0, both within a
 * factor 2^900 of 1. */
KN__LM kn__dd kn__atan_ratio(kn__dd y, kn__dd x) {
  if (y.h <= x.h) return kn__atan_unit(kn__dd_div(y, x));
  return kn__dd_add(kn__dd_of(KN__PIO2_HI, KN__PIO2_LO),
                    kn__dd_neg(kn__atan_unit(kn__dd_div(x, y))));
}

KN_FN double kn__copysign_d(double x, double s) {
  return kn__bits_f64((kn__f64_bits(x) & 0x7fffffffffffffffull) |
                      (kn__f64_bits(s) & 0x8000000000000000ull));
}

KN__LM double kn__lm_atan(double x) {
  if (x != x) return x;
  double a = kn__abs_d(x);
  if (a < 7.450580596923828e-09) return x;
  if (a > 1152921504606846976.0) return kn__copysign_d(KN__PIO2_HI, x); /* 2^60 */
  return kn__copysign_d(kn__atan_ratio(kn__dd_of(a, 0.0), kn__dd_of(1.0, 0.0)).h, x);
}

/* The binary exponent of finite x != 0 (subnormals too). */
KN_FN int kn__ilogb_d(double x) {
  int e = (int)((kn__f64_bits(x) >> 52) & 0x7ff);
  if (e) return e - 1023;
  return (int)((kn__f64_bits(x * 18014398509481984.0) >> 52) & 0x7ff) - 1077;
}

/* atan2 of finite y != 0, x != 0: both scaled by 2^-ilogb(x) when their
 * exponents are within 60 of each other; else the limit. */
KN__LM double kn__atan2_finite(double y, double x) {
  double ay = kn__abs_d(y), ax = kn__abs_d(x);
  int ey = kn__ilogb_d(ay), ex = kn__ilogb_d(ax);
  double a;
  if (ey - ex > 60)
    a = KN__PIO2_HI;
  else if (ex - ey > 60)
    a = x > 0.0 ? ay / ax : KN__PI_HI;
  else {
    kn__dd t =
        kn__atan_ratio(kn__dd_of(kn__scale_d(ay, -ex), 0.0), kn__dd_of(kn__scale_d(ax, -ex), 0.0));
    if (x < 0.0) t = kn__dd_add(kn__dd_of(KN__PI_HI, KN__PI_LO), kn__dd_neg(t));
    a = t.h;
  }
  return kn__copysign_d(a, y);
}

KN__LM double kn__lm_atan2(double y, double x) {
  if (y != y) return y;
  if (x != x) return x;
  int xneg = (kn__f64_bits(x) >> 63) != 0, yinf = y - y != 0.0, xinf = x - x != 0.0;
  if (y == 0.0) return kn__copysign_d(xneg ? KN__PI_HI : 0.0, y);
  if (x == 0.0) return kn__copysign_d(KN__PIO2_HI, y);
  if (yinf)
    return kn__copysign_d(xinf ? (xneg ? 2.356194490192345 : 0.7853981633974483) : KN__PIO2_HI, y);
  if (xinf) return kn__copysign_d(xneg ? KN__PI_HI : 0.0, y);
  return kn__atan2_finite(y, x);
}

/* sqrt(1 - a^2) for 0 <= a < 1, as (1 - a)(1 + a) in double-double. */
KN_FN kn__dd kn__sqrt_1m2(double a) {
  return kn__dd_sqrt(kn__dd_mul(kn__two_sum(1.0, -a), kn__two_sum(1.0, a)));
}

KN__LM double kn__lm_asin(double x) {
  if (x != x) return x;
  double a = kn__abs_d(x);
  if (a > 1.0) return KN__NAN64;
  if (a == 1.0) return kn__copysign_d(KN__PIO2_HI, x);
  if (a < 7.450580596923828e-09) return x;
  return kn__copysign_d(kn__atan_ratio(kn__dd_of(a, 0.0), kn__sqrt_1m2(a)).h, x);
}

KN__LM double kn__lm_acos(double x) {
  if (x != x) return x;
  double a = kn__abs_d(x);
  if (a > 1.0) return KN__NAN64;
  if (a == 1.0) return x > 0.0 ? 0.0 : KN__PI_HI;
  kn__dd t = kn__atan_ratio(kn__sqrt_1m2(a), kn__dd_of(a, 0.0));
  if (x < 0.0) t = kn__dd_add(kn__dd_of(KN__PI_HI, KN__PI_LO), kn__dd_neg(t));
  return t.h;
}

/* ===== sinh, cosh, tanh =================================================== */

/* (e^a + s e^-a) / 2 for a >= 0 (s = -1: sinh, 1: cosh), from e^a = 2^k m;
 * beyond k = 40 the second term is below the last bit. */
KN__LM double kn__cosh_sinh(double a, double s) {
  int k;
  kn__dd m = kn__exp_dd(a, 0.0, &k);
  if (k > 40) return kn__lm_scale(m, k - 1);
  kn__dd inv = kn__dd_ldexp(kn__dd_div(kn__dd_of(1.0, 0.0), m), -k - 1);
  return kn__dd_add(kn__dd_ldexp(m, k - 1), s < 0.0 ? kn__dd_neg(inv) : inv).h;
}

KN__LM double kn__lm_sinh(double x) {
  if (x != x) return x;
  double a = kn__abs_d(x);
  if (a < 7.450580596923828e-09) return x;
  if (a > 710.5) return kn__copysign_d(KN__INF64, x);
  if (a > 22.0) return kn__copysign_d(kn__cosh_sinh(a, -1.0), x);
  /* (t + t / (t + 1)) / 2 with t = e^a - 1: no cancellation near 0 */
  kn__dd t = kn__expm1_dd(a);
  kn__dd v = kn__dd_add(t, kn__dd_div(t, kn__dd_add_d(t, 1.0)));
  return kn__copysign_d(0.5 * v.h, x);
}

KN__LM double kn__lm_cosh(double x) {
  if (x != x) return x;
  double a = kn__abs_d(x);
  if (a < 7.450580596923828e-09) return 1.0;
  if (a > 710.5) return KN__INF64;
  return kn__cosh_sinh(a, 1.0);
}

KN__LM double kn__lm_tanh(double x) {
  if (x != x) return x;
  double a = kn__abs_d(x);
  if (a < 7.450580596923828e-09) return x;
  if (a > 22.0) return kn__copysign_d(1.0, x);
  kn__dd t = kn__expm1_dd(2.0 * a); /* tanh a = t / (t + 2) */
  return kn__copysign_d(kn__dd_div(t, kn__dd_add_d(t, 2.0)).h, x);
}

/* ===== cbrt =============================================================== */

/* x = 2^(3q) a, a in [1, 8); four Newton steps from a linear guess, then one
 * in double-double, whose residual y^3 - a is exact. */
KN__LM double kn__lm_cbrt(double x) {
  if (x != x || x == 0.0 || x - x != 0.0) return x;
  double ax = kn__abs_d(x);
  int e = kn__ilogb_d(ax), rem = ((e % 3) + 3) % 3, q = (e - rem) / 3;
  double a = kn__scale_d(ax, -3 * q), y = 1.0 + (a - 1.0) / 7.0;
  for (int i = 0; i < 4; i++) y = (2.0 * y + a / (y * y)) / 3.0;
  kn__dd r = kn__dd_add_d(kn__dd_mul_d(kn__two_prod(y, y), y), -a);
  y += -r.h / (3.0 * y * y);
  return kn__copysign_d(y * kn__pow2_d(q), x);
}

/* ===== pow ================================================================ */

/* 1 when y is an odd integer, 0 when an even one, -1 when not an integer
 * (finite y). */
KN_FN int kn__int_kind(double y) {
  if (floor(y) != y) return -1;
  double h = 0.5 * y;
  return floor(h) != h;
}

/* pow for x or y zero, infinite or NaN, x == 1 or y == 0; 0 if none. */
KN__LM int kn__pow_special(double x, double y, double *r) {
  double ax = kn__abs_d(x);
  int odd = y - y == 0.0 && kn__int_kind(y) == 1;
  if (y == 0.0 || x == 1.0) return *r = 1.0, 1;
  if (x != x) return *r = x, 1;
  if (y != y) return *r = y, 1;
  if (y - y != 0.0) /* y = +-inf */
    return *r = ax == 1.0 ? 1.0 : (ax < 1.0) == (y > 0.0) ? 0.0 : KN__INF64, 1;
  if (x == 0.0) return *r = y < 0.0 ? (odd ? 1.0 / x : KN__INF64) : (odd ? x : 0.0), 1;
  if (x - x != 0.0) /* x = +-inf */
    return *r = y < 0.0 ? (odd ? 1.0 / x : 0.0) : (odd ? x : KN__INF64), 1;
  if (x < 0.0 && kn__int_kind(y) < 0) return *r = KN__NAN64, 1;
  return 0;
}

KN__LM double kn__lm_pow(double x, double y) {
  double r;
  if (kn__pow_special(x, y, &r)) return r;
  double sign = x < 0.0 && kn__int_kind(y) == 1 ? -1.0 : 1.0;
  int e, k;
  kn__dd lm, l = kn__log_dd(kn__abs_d(x), 1, &e, &lm);
  if (l.h == 0.0) return sign;              /* x = -1 */
  if (kn__abs_d(y) > 1.8446744073709552e19) /* 2^64: |y ln x| > 2^10, |ln x| >= 2^-54 */
    return (l.h > 0.0) == (y > 0.0) ? sign * KN__INF64 : sign * 0.0;
  kn__dd p = kn__two_prod(y, l.h);
  p = kn__fast_two_sum(p.h, p.l + y * l.l);
  if (p.h > 709.8) return sign * KN__INF64;
  if (p.h < -745.2) return sign * 0.0;
  kn__dd m = kn__exp_dd(p.h, p.l, &k);
  return sign * kn__lm_scale(m, k);
}

/* ===== the builtins ======================================================= */

/* A float32 result from the float64 one: a NaN argument comes back as it is,
 * a NaN made here as the default quiet NaN. */
KN_FN float kn__lm_f32(double r, float x, float y) {
  if (r == r) return (float)r;
  return x != x ? x : y != y ? y : kn__bits_f32(0x7fc00000u);
}

#ifdef KN_FAST_MATH
#define KN__LM1(stem, f32fn, f64fn)                                                                \
  KN_FN float kn_##stem##_f32(float x) { return f32fn(x); }                                        \
  KN_FN double kn_##stem##_f64(double x) { return f64fn(x); }
#define KN__LM2(stem, f32fn, f64fn)                                                                \
  KN_FN float kn_##stem##_f32_f32(float x, float y) { return f32fn(x, y); }                        \
  KN_FN double kn_##stem##_f64_f64(double x, double y) { return f64fn(x, y); }
#else
#define KN__LM1(stem, f32fn, f64fn)                                                                \
  KN_FN float kn_##stem##_f32(float x) { return kn__lm_f32(kn__lm_##stem((double)x), x, x); }      \
  KN_FN double kn_##stem##_f64(double x) { return kn__lm_##stem(x); }
#define KN__LM2(stem, f32fn, f64fn)                                                                \
  KN_FN float kn_##stem##_f32_f32(float x, float y) {                                              \
    return kn__lm_f32(kn__lm_##stem((double)x, (double)y), x, y);                                  \
  }                                                                                                \
  KN_FN double kn_##stem##_f64_f64(double x, double y) { return kn__lm_##stem(x, y); }
#endif

KN__LM1(cbrt, cbrtf, cbrt)
KN__LM1(exp, expf, exp)
KN__LM1(exp2, exp2f, exp2)
KN__LM1(log, logf, log)
KN__LM1(log2, log2f, log2)
KN__LM1(log10, log10f, log10)
KN__LM1(sin, sinf, sin)
KN__LM1(cos, cosf, cos)
KN__LM1(tan, tanf, tan)
KN__LM1(asin, asinf, asin)
KN__LM1(acos, acosf, acos)
KN__LM1(atan, atanf, atan)
KN__LM1(sinh, sinhf, sinh)
KN__LM1(cosh, coshf, cosh)
KN__LM1(tanh, tanhf, tanh)
KN__LM2(pow, powf, pow)
KN__LM2(atan2, atan2f, atan2)

/* componentwise on float vectors */
KN__FVECS(KN__MATH1, cbrt)
KN__FVECS(KN__MATH1, exp)
KN__FVECS(KN__MATH1, exp2)
KN__FVECS(KN__MATH1, log)
KN__FVECS(KN__MATH1, log2)
KN__FVECS(KN__MATH1, log10)
KN__FVECS(KN__MATH1, sin)
KN__FVECS(KN__MATH1, cos)
KN__FVECS(KN__MATH1, tan)
KN__FVECS(KN__MATH1, asin)
KN__FVECS(KN__MATH1, acos)
KN__FVECS(KN__MATH1, atan)
KN__FVECS(KN__MATH1, sinh)
KN__FVECS(KN__MATH1, cosh)
KN__FVECS(KN__MATH1, tanh)
KN__FVECS(KN__MATH2, pow)
KN__FVECS(KN__MATH2, atan2)

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
