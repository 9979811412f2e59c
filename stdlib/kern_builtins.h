/* kern_builtins.h: the runtime library of generated kernel code.
 *
 * Requires kern_abi.h (pasted before this text by the code generators, or
 * included below). Compiled two ways: by the host C compiler (C11, gcc or
 * clang) as part of every CPU module, and by NVRTC (CUDA C++, __CUDACC_RTC__,
 * no system headers). Produces the kn_ value types, every function that
 * frontend/builtins.c names (kn_<stem>_<code>[_<code>...], one type code per
 * parameter) and the helpers the emitter calls for special forms (atomics,
 * random numbers, printf, debug checks). Breaks every compiled module's cache
 * key when edited (the text is hashed with the generated code). Names starting
 * with kn__ are internal.
 *
 * ---- Semantics (the same on the CPU and on CUDA) -------------------------
 * Integers. kn_div_<c> / kn_mod_<c>, every integer type: x / 0 == 0 and
 * x % 0 == x; MIN / -1 == MIN and MIN % -1 == 0; otherwise C's truncating
 * division (the remainder takes the sign of x). kn_shl_<c>(x, n) and
 * kn_shr_<c>(x, n): the count is masked to the width, n & (bits - 1), as x86
 * and CUDA do for 32-bit shifts (a count of -1 shifts by bits - 1); left shifts
 * wrap, right shifts are arithmetic for signed types, logical for unsigned.
 * Integer vector arithmetic wraps (two's complement); ivec division applies
 * the scalar rules per component. abs(MIN) == MIN.
 * Float to integer, kn_cvt_<f16|bf16|f32|f64>_<int>: truncates toward zero and
 * saturates at the target's range (+inf -> MAX, -inf -> MIN, and 0 for an
 * unsigned target, as for any value <= -1); NaN -> 0.
 * Float16 (kn_f16: IEEE binary16 bits) is converted in software with integer
 * operations: to float16 rounds to nearest, ties to even (float64 is rounded
 * once, not through float32); magnitudes >= 65520 become infinity; small
 * values become subnormals or a zero of the same sign; a NaN stays a NaN with
 * its sign and top payload bits, made quiet. Float16 to float32/float64 is
 * exact. Float16 arithmetic is done in float32 (kn_cvt_f16_f32 first).
 * Bfloat16 (kn_bf16: the top 16 bits of a float32) likewise: every conversion
 * to it rounds once to nearest, ties to even, with integer operations (from
 * float64 and from 32- and 64-bit integers directly, not through float32,
 * which would round twice); values from the largest finite bfloat16 plus half
 * an ulp (0x1.ffp127) up become infinity; float32's subnormals round to
 * bfloat16's; a NaN keeps its sign and top payload bits, made quiet.
 * Bfloat16 to float32/float64 is exact; arithmetic is done in float32.
 * Bit-identical results. Everything here gives the same bits on both devices
 * (checked on an H100 by tests/stdlib/gpu_crosscheck.c), and so do the
 * transcendental functions (exp ... pow, kern's own in kern_libm.h, the next
 * part) and what uses them (randn, the quaternion helpers, the samplers),
 * except in a fast-math module (KN_FAST_MATH: the platform's functions); and
 * except:
 *  - a NaN made by arithmetic (0/0, sqrt(-1)) is 0xffc00000 on x86 and
 *    0x7fffffff on CUDA (NaNs that are only copied or converted keep their bits);
 *  - the GPU compile must keep a*b+c unfused (NVRTC --fmad=false); with
 *    fusion, dot products, lerp, matrix products ... differ in the last bits.
 * sqrt and / are correctly rounded on both (NVRTC's default -prec-sqrt and
 * -prec-div); rsqrt(x) is 1 / sqrt(x), not the approximate instruction.
 * Math. min/max/clamp on floats ignore a NaN operand like fmin/fmax
 * (clamp(NaN, lo, hi) == lo) and order -0 below +0 (libm and CUDA disagree
 * there otherwise). abs and sign exist for floats and signed integers; sign
 * gives -1, 0 or 1 of the argument's type (of a float zero or NaN: the
 * argument). round() rounds halfway cases away from zero. normalize of a zero
 * vector is the zero vector; inverse of a singular matrix (determinant exactly
 * 0) is the zero matrix; quat_rotate assumes a unit quaternion and
 * quat_from_axis_angle normalizes its axis. ==/!= on vectors, matrices and
 * quats compare every component with the scalar == (-0 == +0; a NaN component
 * makes them unequal). kn_get_<v>(v, k) and friends clamp k into range.
 * Atomics (kn_atomic_<op>_<c>) return the old value and are relaxed: they
 * prevent lost updates but order nothing else, on the CPU (__atomic builtins,
 * __ATOMIC_RELAXED) as on CUDA (atomicAdd ...). Float min/max everywhere, and
 * float add/sub on the CPU, are compare-and-swap loops on the bit pattern;
 * float CAS compares bit patterns (-0 does not match +0; a NaN matches itself).
 * Vector atomics are one atomic per component, not one for the whole vector.
 * Random numbers are counter based: the state is one uint32; rand_init hashes
 * (seed, offset) with the PCG output permutation; each draw advances the state
 * by the PCG LCG step and returns the permutation of the new state. randf
 * takes its top 24 bits, in [0, 1); randf(lo, hi) is lo + (hi - lo) * randf;
 * randn (kern_math.h) is Box-Muller on two draws.
 * printf on the CPU formats into a 1024-byte buffer (longer output is cut)
 * and writes it with one locked fwrite and fflush on stdout, so lines from
 * concurrent threads never interleave; on CUDA it is the device printf.
 */
#ifndef KN_BUILTINS_H
#define KN_BUILTINS_H

#ifndef KN_ABI_H
#include "kern_abi.h"
#endif

#ifdef __CUDACC_RTC__
/* Most of these functions go unused in any one module: NVRTC would say so. */
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#define KN_STATIC_ASSERT(c, m) static_assert(c, m)
#define KN_COLD                static __device__ __noinline__
#else
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#define KN_STATIC_ASSERT(c, m) _Static_assert(c, m)
#define KN_COLD                static __attribute__((noinline, cold, unused))
#endif

/* ===== types ============================================================== */

typedef struct kn_f16 {
  uint16_t bits;
} kn_f16;
typedef struct kn_bf16 {
  uint16_t bits;
} kn_bf16;
typedef struct kn_vec2 {
  float x, y;
} kn_vec2;
typedef struct kn_vec3 {
  float x, y, z;
} kn_vec3;
typedef struct kn_vec4 {
  float x, y, z, w;
} kn_vec4;
typedef struct kn_dvec2 {
  double x, y;
} kn_dvec2;
typedef struct kn_dvec3 {
  double x, y, z;
} kn_dvec3;
typedef struct kn_dvec4 {
  double x, y, z, w;
} kn_dvec4;
typedef struct kn_ivec2 {
  int32_t x, y;
} kn_ivec2;
typedef struct kn_ivec3 {
  int32_t x, y, z;
} kn_ivec3;
typedef struct kn_ivec4 {
  int32_t x, y, z, w;
} kn_ivec4;
typedef struct kn_mat22 {
  float m[2][2];
} kn_mat22; /* m[row][col] */
typedef struct kn_mat33 {
  float m[3][3];
} kn_mat33;
typedef struct kn_mat44 {
  float m[4][4];
} kn_mat44;
typedef struct kn_quat {
  float x, y, z, w;
} kn_quat; /* w is the real part */

KN_STATIC_ASSERT(sizeof(kn_f16) == 2 && sizeof(kn_bf16) == 2, "kn_f16 layout");
KN_STATIC_ASSERT(sizeof(kn_vec2) == 8 && sizeof(kn_vec3) == 12 && sizeof(kn_vec4) == 16,
                 "vec layout");
KN_STATIC_ASSERT(sizeof(kn_dvec2) == 16 && sizeof(kn_dvec3) == 24 && sizeof(kn_dvec4) == 32,
                 "dvec layout");
KN_STATIC_ASSERT(sizeof(kn_ivec2) == 8 && sizeof(kn_ivec3) == 12 && sizeof(kn_ivec4) == 16,
                 "ivec layout");
KN_STATIC_ASSERT(sizeof(kn_mat22) == 16 && sizeof(kn_mat33) == 36 && sizeof(kn_mat44) == 64,
                 "mat layout");
KN_STATIC_ASSERT(sizeof(kn_quat) == 16, "quat layout");

/* ===== bit casts ========================================================== */

#ifdef __CUDACC_RTC__
KN_FN uint32_t kn__f32_bits(float x) { return __float_as_uint(x); }
KN_FN float kn__bits_f32(uint32_t b) { return __uint_as_float(b); }
KN_FN uint64_t kn__f64_bits(double x) { return (uint64_t)__double_as_longlong(x); }
KN_FN double kn__bits_f64(uint64_t b) { return __longlong_as_double((long long)b); }
#else
KN_FN uint32_t kn__f32_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  return b;
}
KN_FN float kn__bits_f32(uint32_t b) {
  float x;
  memcpy(&x, &b, 4);
  return x;
}
KN_FN uint64_t kn__f64_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return b;
}
KN_FN double kn__bits_f64(uint64_t b) {
  double x;
  memcpy(&x, &b, 8);
  return x;
}
#endif

/* ===== integer semantics ================================================== */

/* T: the type, UT: its unsigned twin, PT: UT after promotion, W: bits. */
#define KN__INT_SIGNED(T, UT, PT, C, W)                                                            \
  KN_FN T kn_div_##C(T a, T b) {                                                                   \
    if (b == 0) return 0;                                                                          \
    if (b == -1) return (T)(UT)((PT)0 - (PT)(UT)a);                                                \
    return (T)(a / b);                                                                             \
  }                                                                                                \
  KN_FN T kn_mod_##C(T a, T b) {                                                                   \
    if (b == 0) return a;                                                                          \
    if (b == -1) return 0;                                                                         \
    return (T)(a % b);                                                                             \
  }                                                                                                \
  KN_FN T kn_shl_##C(T a, int64_t n) { return (T)(UT)((PT)(UT)a << (n & (W - 1))); }               \
  KN_FN T kn_shr_##C(T a, int64_t n) { return (T)(a >> (n & (W - 1))); }

#define KN__INT_UNSIGNED(T, PT, C, W)                                                              \
  KN_FN T kn_div_##C(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }                              \
  KN_FN T kn_mod_##C(T a, T b) { return b == 0 ? a : (T)(a % b); }                                 \
  KN_FN T kn_shl_##C(T a, int64_t n) { return (T)((PT)a << (n & (W - 1))); }                       \
  KN_FN T kn_shr_##C(T a, int64_t n) { return (T)((PT)a >> (n & (W - 1))); }

KN__INT_SIGNED(int8_t, uint8_t, uint32_t, i8, 8)
KN__INT_SIGNED(int16_t, uint16_t, uint32_t, i16, 16)
KN__INT_SIGNED(int32_t, uint32_t, uint32_t, i32, 32)
KN__INT_SIGNED(int64_t, uint64_t, uint64_t, i64, 64)
KN__INT_UNSIGNED(uint8_t, uint32_t, u8, 8)
KN__INT_UNSIGNED(uint16_t, uint32_t, u16, 16)
KN__INT_UNSIGNED(uint32_t, uint32_t, u32, 32)
KN__INT_UNSIGNED(uint64_t, uint64_t, u64, 64)

/* Wrapping int32 arithmetic for integer vectors (no signed overflow). */
KN_FN int32_t kn__add_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
KN_FN int32_t kn__sub_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
KN_FN int32_t kn__mul_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
KN_FN int32_t kn__div_i32(int32_t a, int32_t b) { return kn_div_i32(a, b); }
KN_FN int32_t kn__neg_i32(int32_t a) { return (int32_t)(0u - (uint32_t)a); }

#define KN__FLOAT_OPS(T, C)                                                                        \
  KN_FN T kn__add_##C(T a, T b) { return a + b; }                                                  \
  KN_FN T kn__sub_##C(T a, T b) { return a - b; }                                                  \
  KN_FN T kn__mul_##C(T a, T b) { return a * b; }                                                  \
  KN_FN T kn__div_##C(T a, T b) { return a / b; }                                                  \
  KN_FN T kn__neg_##C(T a) { return -a; }
KN__FLOAT_OPS(float, f32)
KN__FLOAT_OPS(double, f64)

/* ===== float16 ============================================================ */

/* Rounds the magnitude `r` (already shifted) to nearest even, given the
 * dropped bits `rem` and the value of half a unit in `half`. */
#define KN__RNE(r, rem, half) ((r) + (((rem) > (half)) || ((rem) == (half) && ((r)&1u))))

KN_FN kn_f16 kn__f16(uint32_t bits) {
  kn_f16 h;
  h.bits = (uint16_t)bits;
  return h;
}

KN_FN kn_f16 kn_cvt_f32_f16(float f) {
  uint32_t x = kn__f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return kn__f16(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return kn__f16(sign | 0x7c00u); /* >= 65520 */
  if (ax >= 0x38800000u) {                               /* normal half */
    uint32_t r = (ax >> 13) - (112u << 10);
    return kn__f16(sign | KN__RNE(r, ax & 0x1fffu, 0x1000u));
  }
  int shift = 126 - (int)(ax >> 23); /* 14 .. */
  if (shift > 24) return kn__f16(sign);
  uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
  uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1u);
  return kn__f16(sign | KN__RNE(r, rem, 1u << (shift - 1)));
}

KN_FN kn_f16 kn_cvt_f64_f16(double d) {
  uint64_t x = kn__f64_bits(d), ax = x & 0x7fffffffffffffffull;
  uint32_t sign = (uint32_t)(x >> 48) & 0x8000u;
  if (ax > 0x7ff0000000000000ull) return kn__f16(sign | 0x7e00u | (uint32_t)((ax >> 42) & 0x3ffu));
  if (ax >= 0x40effe0000000000ull) return kn__f16(sign | 0x7c00u); /* >= 65520 */
  if (ax >= 0x3f10000000000000ull) {                               /* >= 2^-14 */
    uint64_t r = (ax >> 42) - (1008ull << 10), rem = ax & ((1ull << 42) - 1u);
    return kn__f16(sign | (uint32_t)KN__RNE(r, rem, 1ull << 41));
  }
  int shift = 1051 - (int)(ax >> 52); /* 43 .. */
  if (shift > 53) return kn__f16(sign);
  uint64_t mant = (ax & 0xfffffffffffffull) | (1ull << 52);
  uint64_t r = mant >> shift, rem = mant & ((1ull << shift) - 1u);
  return kn__f16(sign | (uint32_t)KN__RNE(r, rem, 1ull << (shift - 1)));
}

KN_FN float kn_cvt_f16_f32(kn_f16 h) {
  uint32_t sign = ((uint32_t)h.bits & 0x8000u) << 16, e = (h.bits >> 10) & 0x1fu;
  uint32_t m = h.bits & 0x3ffu;
  if (e == 31) return kn__bits_f32(sign | 0x7f800000u | (m << 13));
  if (e != 0) return kn__bits_f32(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return kn__bits_f32(sign);
  e = 113; /* subnormal: normalize */
  while (!(m & 0x400u)) {
    m <<= 1;
    e--;
  }
  return kn__bits_f32(sign | (e << 23) | ((m & 0x3ffu) << 13));
}

KN_FN double kn_cvt_f16_f64(kn_f16 h) {
  uint64_t sign = ((uint64_t)h.bits & 0x8000u) << 48, e = (h.bits >> 10) & 0x1fu;
  uint64_t m = h.bits & 0x3ffu;
  if (e == 31) return kn__bits_f64(sign | 0x7ff0000000000000ull | (m << 42));
  if (e != 0) return kn__bits_f64(sign | ((e + 1008u) << 52) | (m << 42));
  if (m == 0) return kn__bits_f64(sign);
  e = 1009;
  while (!(m & 0x400u)) {
    m <<= 1;
    e--;
  }
  return kn__bits_f64(sign | (e << 52) | ((m & 0x3ffu) << 42));
}

/* ===== bfloat16 =========================================================== */

KN_FN kn_bf16 kn__bf16(uint32_t bits) {
  kn_bf16 h;
  h.bits = (uint16_t)bits;
  return h;
}

/* float32 and bfloat16 share the exponent field, so one shift serves normal
 * and subnormal values alike, and a carry out of the fraction lands in the
 * exponent: the largest values round up to infinity by themselves. */
KN_FN kn_bf16 kn_cvt_f32_bf16(float f) {
  uint32_t x = kn__f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return kn__bf16(sign | 0x7fc0u | ((ax >> 16) & 0x7fu));
  return kn__bf16(sign | KN__RNE(ax >> 16, ax & 0xffffu, 0x8000u));
}

KN_FN kn_bf16 kn_cvt_f64_bf16(double d) {
  uint64_t x = kn__f64_bits(d), ax = x & 0x7fffffffffffffffull;
  uint32_t sign = (uint32_t)(x >> 48) & 0x8000u;
  if (ax > 0x7ff0000000000000ull) return kn__bf16(sign | 0x7fc0u | (uint32_t)((ax >> 45) & 0x7fu));
  if (ax >= 0x47eff00000000000ull) return kn__bf16(sign | 0x7f80u); /* >= 0x1.ffp127 */
  if (ax >= 0x3810000000000000ull) {                                /* >= 2^-126 */
    uint64_t r = (ax >> 45) - (896ull << 7), rem = ax & ((1ull << 45) - 1u);
    return kn__bf16(sign | (uint32_t)KN__RNE(r, rem, 1ull << 44));
  }
  int shift = 942 - (int)(ax >> 52); /* 46 .. ; the unit is 2^-133 */
  if (shift > 53) return kn__bf16(sign);
  uint64_t mant = (ax & 0xfffffffffffffull) | (1ull << 52);
  uint64_t r = mant >> shift, rem = mant & ((1ull << shift) - 1u);
  return kn__bf16(sign | (uint32_t)KN__RNE(r, rem, 1ull << (shift - 1)));
}

/* An integer's magnitude m, rounded once to 8 significant bits. */
KN_FN kn_bf16 kn__u64_bf16(uint64_t m, uint32_t sign) {
  if (m < 256u) return kn_cvt_f32_bf16(sign ? -(float)m : (float)m); /* exact */
  int s = 0;
  while ((m >> s) >= 256u) s++;
  uint64_t r = KN__RNE(m >> s, m & ((1ull << s) - 1u), 1ull << (s - 1));
  /* r in [128, 256]: the exponent of 2^(s + 7), a carry to 256 adds one */
  return kn__bf16(sign | (((uint32_t)(s + 127 + 7) << 7) + (uint32_t)(r - 128u)));
}

KN_FN float kn_cvt_bf16_f32(kn_bf16 h) { return kn__bits_f32((uint32_t)h.bits << 16); }

/* Exact, with integer operations so a NaN keeps its bits (a float32 to
 * float64 conversion may quiet a signaling one). */
KN_FN double kn_cvt_bf16_f64(kn_bf16 h) {
  uint64_t sign = ((uint64_t)h.bits & 0x8000u) << 48, e = (h.bits >> 7) & 0xffu;
  uint64_t m = h.bits & 0x7fu;
  if (e == 255) return kn__bits_f64(sign | 0x7ff0000000000000ull | (m << 45));
  if (e != 0) return kn__bits_f64(sign | ((e + 896u) << 52) | (m << 45));
  if (m == 0) return kn__bits_f64(sign);
  e = 897; /* subnormal: normalize */
  while (!(m & 0x80u)) {
    m <<= 1;
    e--;
  }
  return kn__bits_f64(sign | (e << 52) | ((m & 0x7fu) << 45));
}

/* ===== float to integer =================================================== */

/* lo/hi: the first values below/above the range that saturate. */
#define KN__CVT_S(F, FC, T, C, LO, HI, MINV, MAXV)                                                 \
  KN_FN T kn_cvt_##FC##_##C(F x) {                                                                 \
    if (x != x) return 0;                                                                          \
    if (x <= (F)(LO)) return MINV;                                                                 \
    if (x >= (F)(HI)) return MAXV;                                                                 \
    return (T)x;                                                                                   \
  }
#define KN__CVT_U(F, FC, T, C, HI, MAXV)                                                           \
  KN_FN T kn_cvt_##FC##_##C(F x) {                                                                 \
    if (!(x > (F)-1.0)) return 0;                                                                  \
    if (x >= (F)(HI)) return MAXV;                                                                 \
    return (T)x;                                                                                   \
  }
#define KN__CVT_ALL(F, FC)                                                                         \
  KN__CVT_S(F, FC, int8_t, i8, -128.0, 128.0, -128, 127)                                           \
  KN__CVT_S(F, FC, int16_t, i16, -32768.0, 32768.0, -32768, 32767)                                 \
  KN__CVT_S(F, FC, int32_t, i32, -2147483648.0, 2147483648.0, (-2147483647 - 1), 2147483647)       \
  KN__CVT_S(F, FC, int64_t, i64, -9223372036854775808.0, 9223372036854775808.0,                    \
            (-9223372036854775807LL - 1), 9223372036854775807LL)                                   \
  KN__CVT_U(F, FC, uint8_t, u8, 256.0, 255u)                                                       \
  KN__CVT_U(F, FC, uint16_t, u16, 65536.0, 65535u)                                                 \
  KN__CVT_U(F, FC, uint32_t, u32, 4294967296.0, 4294967295u)                                       \
  KN__CVT_U(F, FC, uint64_t, u64, 18446744073709551616.0, 18446744073709551615ull)
KN__CVT_ALL(float, f32)
KN__CVT_ALL(double, f64)

#define KN__CVT_F16(T, C)                                                                          \
  KN_FN T kn_cvt_f16_##C(kn_f16 h) { return kn_cvt_f32_##C(kn_cvt_f16_f32(h)); }                   \
  KN_FN kn_f16 kn_cvt_##C##_f16(T x) { return kn_cvt_f32_f16((float)x); }
KN__CVT_F16(int8_t, i8)
KN__CVT_F16(int16_t, i16)
KN__CVT_F16(int32_t, i32)
KN__CVT_F16(int64_t, i64)
KN__CVT_F16(uint8_t, u8)
KN__CVT_F16(uint16_t, u16)
KN__CVT_F16(uint32_t, u32)
KN__CVT_F16(uint64_t, u64)

/* Narrow integers are exact in float32; wider ones round from the integer. */
#define KN__CVT_BF16(T, C, TO_BF16)                                                                \
  KN_FN T kn_cvt_bf16_##C(kn_bf16 h) { return kn_cvt_f32_##C(kn_cvt_bf16_f32(h)); }                \
  KN_FN kn_bf16 kn_cvt_##C##_bf16(T x) { return TO_BF16; }
#define KN__BF16_S(x)                                                                              \
  kn__u64_bf16((x) < 0 ? 0u - (uint64_t)(x) : (uint64_t)(x), (x) < 0 ? 0x8000u : 0u)
KN__CVT_BF16(int8_t, i8, kn_cvt_f32_bf16((float)x))
KN__CVT_BF16(int16_t, i16, kn_cvt_f32_bf16((float)x))
KN__CVT_BF16(int32_t, i32, KN__BF16_S(x))
KN__CVT_BF16(int64_t, i64, KN__BF16_S(x))
KN__CVT_BF16(uint8_t, u8, kn_cvt_f32_bf16((float)x))
KN__CVT_BF16(uint16_t, u16, kn_cvt_f32_bf16((float)x))
KN__CVT_BF16(uint32_t, u32, kn__u64_bf16(x, 0u))
KN__CVT_BF16(uint64_t, u64, kn__u64_bf16(x, 0u))

/* ===== scalar math ======================================================== */

#define KN__F1(stem, f32fn, f64fn)                                                                 \
  KN_FN float kn_##stem##_f32(float x) { return f32fn(x); }                                        \
  KN_FN double kn_##stem##_f64(double x) { return f64fn(x); }
#define KN__F2(stem, f32fn, f64fn)                                                                 \
  KN_FN float kn_##stem##_f32_f32(float x, float y) { return f32fn(x, y); }                        \
  KN_FN double kn_##stem##_f64_f64(double x, double y) { return f64fn(x, y); }

KN_FN float kn__rsqrtf(float x) { return 1.0f / sqrtf(x); }
KN_FN double kn__rsqrt(double x) { return 1.0 / sqrt(x); }

KN__F1(sqrt, sqrtf, sqrt)
KN__F1(rsqrt, kn__rsqrtf, kn__rsqrt)
KN__F1(floor, floorf, floor)
KN__F1(ceil, ceilf, ceil)
KN__F1(round, roundf, round)
KN__F1(trunc, truncf, trunc)
KN__F1(abs, fabsf, fabs)
KN__F2(fmod, fmodf, fmod)

/* fmin/fmax, but with -0 < +0 spelled out: libm and CUDA disagree on the sign
 * of min(+0, -0), and results must not depend on the device. */
#define KN__FMINMAX(T, C, SIGN)                                                                    \
  KN_FN T kn_min_##C##_##C(T a, T b) {                                                             \
    if (a != a) return b;                                                                          \
    if (b != b || a < b) return a;                                                                 \
    return a == b && (kn__##C##_bits(a) & SIGN) ? a : b;                                           \
  }                                                                                                \
  KN_FN T kn_max_##C##_##C(T a, T b) {                                                             \
    if (a != a) return b;                                                                          \
    if (b != b || a > b) return a;                                                                 \
    return a == b && !(kn__##C##_bits(a) & SIGN) ? a : b;                                          \
  }
KN__FMINMAX(float, f32, 0x80000000u)
KN__FMINMAX(double, f64, 0x8000000000000000ull)

/* Per-type scalar helpers whose body is the same C for every type. */
#define KN__SCALAR_COMMON(T, C)                                                                    \
  KN_FN T kn_clamp_##C##_##C##_##C(T x, T lo, T hi) {                                              \
    return kn_min_##C##_##C(kn_max_##C##_##C(x, lo), hi);                                          \
  }
#define KN__FLOAT_EXTRA(T, C, ABSMASK, EXPMASK)                                                    \
  KN__SCALAR_COMMON(T, C)                                                                          \
  KN_FN T kn_sign_##C(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; }                            \
  KN_FN T kn_lerp_##C##_##C##_##C(T a, T b, T t) { return a + (b - a) * t; }                       \
  KN_FN T kn_step_##C##_##C(T edge, T x) { return x < edge ? (T)0 : (T)1; }                        \
  KN_FN T kn_smoothstep_##C##_##C##_##C(T e0, T e1, T x) {                                         \
    T t = kn_clamp_##C##_##C##_##C((x - e0) / (e1 - e0), (T)0, (T)1);                              \
    return t * t * ((T)3 - (T)2 * t);                                                              \
  }                                                                                                \
  KN_FN bool kn_isnan_##C(T x) { return (kn__##C##_bits(x) & ABSMASK) > EXPMASK; }                 \
  KN_FN bool kn_isinf_##C(T x) { return (kn__##C##_bits(x) & ABSMASK) == EXPMASK; }                \
  KN_FN bool kn_isfinite_##C(T x) { return (kn__##C##_bits(x) & ABSMASK) < EXPMASK; }
KN__FLOAT_EXTRA(float, f32, 0x7fffffffu, 0x7f800000u)
KN__FLOAT_EXTRA(double, f64, 0x7fffffffffffffffull, 0x7ff0000000000000ull)

#define KN__INT_MINMAX(T, C)                                                                       \
  KN_FN T kn_min_##C##_##C(T a, T b) { return a < b ? a : b; }                                     \
  KN_FN T kn_max_##C##_##C(T a, T b) { return a > b ? a : b; }                                     \
  KN__SCALAR_COMMON(T, C)
KN__INT_MINMAX(int32_t, i32)
KN__INT_MINMAX(int64_t, i64)
KN__INT_MINMAX(uint32_t, u32)
KN__INT_MINMAX(uint64_t, u64)
KN_FN int32_t kn_abs_i32(int32_t x) { return x < 0 ? kn__neg_i32(x) : x; }
KN_FN int64_t kn_abs_i64(int64_t x) { return x < 0 ? (int64_t)(0u - (uint64_t)x) : x; }
KN_FN int32_t kn_sign_i32(int32_t x) { return (x > 0) - (x < 0); }
KN_FN int64_t kn_sign_i64(int64_t x) { return (x > 0) - (x < 0); }

/* ===== vectors ============================================================ */

/* Applies M(type, n, code, elem type, elem code, ...) to each vector type. */
#define KN__FVECS(M, ...)                                                                          \
  M(kn_vec2, 2, v2, float, f32, __VA_ARGS__)                                                       \
  M(kn_vec3, 3, v3, float, f32, __VA_ARGS__)                                                       \
  M(kn_vec4, 4, v4, float, f32, __VA_ARGS__)                                                       \
  M(kn_dvec2, 2, dv2, double, f64, __VA_ARGS__)                                                    \
  M(kn_dvec3, 3, dv3, double, f64, __VA_ARGS__)                                                    \
  M(kn_dvec4, 4, dv4, double, f64, __VA_ARGS__)
#define KN__IVECS(M, ...)                                                                          \
  M(kn_ivec2, 2, iv2, int32_t, i32, __VA_ARGS__)                                                   \
  M(kn_ivec3, 3, iv3, int32_t, i32, __VA_ARGS__)                                                   \
  M(kn_ivec4, 4, iv4, int32_t, i32, __VA_ARGS__)
#define KN__VECS(M, ...)                                                                           \
  KN__FVECS(M, __VA_ARGS__)                                                                        \
  KN__IVECS(M, __VA_ARGS__)

/* S(component, f) for each component of an n-vector. */
#define KN__EACH2(S, f) S(x, f) S(y, f)
#define KN__EACH3(S, f) S(x, f) S(y, f) S(z, f)
#define KN__EACH4(S, f) S(x, f) S(y, f) S(z, f) S(w, f)

/* Per-component statements; the names a, b, t, s are the parameters below. */
#define KN__S_V(c, f)   r.c = f(a.c);
#define KN__S_VV(c, f)  r.c = f(a.c, b.c);
#define KN__S_VS(c, f)  r.c = f(a.c, s);
#define KN__S_SV(c, f)  r.c = f(s, a.c);
#define KN__S_VVV(c, f) r.c = f(a.c, b.c, t.c);
#define KN__S_VVS(c, f) r.c = f(a.c, b.c, t);
#define KN__S_VSS(c, f) r.c = f(a.c, b, t);
#define KN__S_SSV(c, f) r.c = f(a, b, t.c);

/* Function shapes: stem is the C stem, f the per-component function. */
#define KN__DEF_V(T, N, C, E, EC, stem, f)                                                         \
  KN_FN T kn_##stem##_##C(T a) {                                                                   \
    T r;                                                                                           \
    KN__EACH##N(KN__S_V, f) return r;                                                              \
  }
#define KN__DEF_VV(T, N, C, E, EC, stem, f)                                                        \
  KN_FN T kn_##stem##_##C##_##C(T a, T b) {                                                        \
    T r;                                                                                           \
    KN__EACH##N(KN__S_VV, f) return r;                                                             \
  }
#define KN__DEF_VS(T, N, C, E, EC, stem, f)                                                        \
  KN_FN T kn_##stem##_##C##_##EC(T a, E s) {                                                       \
    T r;                                                                                           \
    KN__EACH##N(KN__S_VS, f) return r;                                                             \
  }
#define KN__DEF_SV(T, N, C, E, EC, stem, f)                                                        \
  KN_FN T kn_##stem##_##EC##_##C(E s, T a) {                                                       \
    T r;                                                                                           \
    KN__EACH##N(KN__S_SV, f) return r;                                                             \
  }
#define KN__DEF_VVV(T, N, C, E, EC, stem, f)                                                       \
  KN_FN T kn_##stem##_##C##_##C##_##C(T a, T b, T t) {                                             \
    T r;                                                                                           \
    KN__EACH##N(KN__S_VVV, f) return r;                                                            \
  }
#define KN__DEF_VVS(T, N, C, E, EC, stem, f)                                                       \
  KN_FN T kn_##stem##_##C##_##C##_##EC(T a, T b, E t) {                                            \
    T r;                                                                                           \
    KN__EACH##N(KN__S_VVS, f) return r;                                                            \
  }
#define KN__DEF_VSS(T, N, C, E, EC, stem, f)                                                       \
  KN_FN T kn_##stem##_##C##_##EC##_##EC(T a, E b, E t) {                                           \
    T r;                                                                                           \
    KN__EACH##N(KN__S_VSS, f) return r;                                                            \
  }
#define KN__DEF_SSV(T, N, C, E, EC, stem, f)                                                       \
  KN_FN T kn_##stem##_##EC##_##EC##_##C(E a, E b, T t) {                                           \
    T r;                                                                                           \
    KN__EACH##N(KN__S_SSV, f) return r;                                                            \
  }

/* Elementwise math: the scalar builtin of the element type per component. */
#define KN__MATH1(T, N, C, E, EC, stem) KN__DEF_V(T, N, C, E, EC, stem, kn_##stem##_##EC)
#define KN__MATH2(T, N, C, E, EC, stem) KN__DEF_VV(T, N, C, E, EC, stem, kn_##stem##_##EC##_##EC)
#define KN__MATH3(T, N, C, E, EC, stem)                                                            \
  KN__DEF_VVV(T, N, C, E, EC, stem, kn_##stem##_##EC##_##EC##_##EC)

/* constructors, zero, splat, dynamic access (k clamped to the components) */
#define KN__PICK2(v, k) ((k) <= 0 ? &(v)->x : &(v)->y)
#define KN__PICK3(v, k) ((k) <= 0 ? &(v)->x : (k) == 1 ? &(v)->y : &(v)->z)
#define KN__PICK4(v, k) ((k) <= 0 ? &(v)->x : (k) == 1 ? &(v)->y : (k) == 2 ? &(v)->z : &(v)->w)
#define KN__S_SET(c, f) r.c = f;
#define KN__VEC_BASICS(T, N, C, E, EC, unused)                                                     \
  KN_FN T kn_splat_##C(E s) {                                                                      \
    T r;                                                                                           \
    KN__EACH##N(KN__S_SET, s) return r;                                                            \
  }                                                                                                \
  KN_FN T kn_zero_##C(void) { return kn_splat_##C((E)0); }                                         \
  KN_FN E *kn_getp_##C(T *v, int64_t k) { return KN__PICK##N(v, k); }                              \
  KN_FN E kn_get_##C(T v, int64_t k) { return *kn_getp_##C(&v, k); }

#define KN__MAKE2(T, C, E)                                                                         \
  KN_FN T kn_make_##C(E x, E y) {                                                                  \
    T r;                                                                                           \
    r.x = x;                                                                                       \
    r.y = y;                                                                                       \
    return r;                                                                                      \
  }
#define KN__MAKE3(T, C, E)                                                                         \
  KN_FN T kn_make_##C(E x, E y, E z) {                                                             \
    T r;                                                                                           \
    r.x = x;                                                                                       \
    r.y = y;                                                                                       \
    r.z = z;                                                                                       \
    return r;                                                                                      \
  }
#define KN__MAKE4(T, C, E)                                                                         \
  KN_FN T kn_make_##C(E x, E y, E z, E w) {                                                        \
    T r;                                                                                           \
    r.x = x;                                                                                       \
    r.y = y;                                                                                       \
    r.z = z;                                                                                       \
    r.w = w;                                                                                       \
    return r;                                                                                      \
  }
KN__MAKE2(kn_vec2, v2, float)
KN__MAKE3(kn_vec3, v3, float) KN__MAKE4(kn_vec4, v4, float)
KN__MAKE2(kn_dvec2, dv2, double)
KN__MAKE3(kn_dvec3, dv3, double)
KN__MAKE4(kn_dvec4, dv4, double)
KN__MAKE2(kn_ivec2, iv2, int32_t)
KN__MAKE3(kn_ivec3, iv3, int32_t)
KN__MAKE4(kn_ivec4, iv4, int32_t)
KN__VECS(KN__VEC_BASICS, 0)

/* conversions between vector families: kn_cvt_<from>_<to> */
#define KN__FCVT(x) ((float)(x))
#define KN__DCVT(x) ((double)(x))
#define KN__VCVT(N, FT, FC, TT, TC, f)                                                             \
  KN_FN TT kn_cvt_##FC##_##TC(FT a) {                                                              \
    TT r;                                                                                          \
    KN__EACH##N(KN__S_V, f) return r;                                                              \
  }
#define KN__VCVT_N(N)                                                                              \
  KN__VCVT(N, kn_vec##N, v##N, kn_dvec##N, dv##N, KN__DCVT)                                        \
  KN__VCVT(N, kn_dvec##N, dv##N, kn_vec##N, v##N, KN__FCVT)                                        \
  KN__VCVT(N, kn_ivec##N, iv##N, kn_vec##N, v##N, KN__FCVT)                                        \
  KN__VCVT(N, kn_ivec##N, iv##N, kn_dvec##N, dv##N, KN__DCVT)                                      \
  KN__VCVT(N, kn_vec##N, v##N, kn_ivec##N, iv##N, kn_cvt_f32_i32)                                  \
  KN__VCVT(N, kn_dvec##N, dv##N, kn_ivec##N, iv##N, kn_cvt_f64_i32)
KN__VCVT_N(2)
KN__VCVT_N(3)
KN__VCVT_N(4)

/* componentwise math on float vectors */
KN__FVECS(KN__MATH1, sqrt)
KN__FVECS(KN__MATH1, rsqrt)
KN__FVECS(KN__MATH1, floor)
KN__FVECS(KN__MATH1, ceil)
KN__FVECS(KN__MATH1, round)
KN__FVECS(KN__MATH1, trunc)
KN__FVECS(KN__MATH2, fmod)
KN__FVECS(KN__MATH2, step)
KN__FVECS(KN__MATH3, lerp)
KN__FVECS(KN__MATH3, smoothstep)
KN__VECS(KN__MATH1, abs)
KN__VECS(KN__MATH1, sign)
KN__VECS(KN__MATH2, min)
KN__VECS(KN__MATH2, max)
KN__VECS(KN__MATH3, clamp)

/* mixed vector/scalar forms of clamp, lerp, step, smoothstep */
#define KN__MIXED(T, N, C, E, EC, unused)                                                          \
  KN__DEF_VSS(T, N, C, E, EC, clamp, kn_clamp_##EC##_##EC##_##EC)
#define KN__MIXED_F(T, N, C, E, EC, unused)                                                        \
  KN__DEF_VVS(T, N, C, E, EC, lerp, kn_lerp_##EC##_##EC##_##EC)                                    \
  KN__DEF_SV(T, N, C, E, EC, step, kn_step_##EC##_##EC)                                            \
  KN__DEF_SSV(T, N, C, E, EC, smoothstep, kn_smoothstep_##EC##_##EC##_##EC)
KN__VECS(KN__MIXED, 0)
KN__FVECS(KN__MIXED_F, 0)

/* operators: + - * / componentwise, vector (op) scalar, scalar * vector, neg */
#define KN__VEC_OPS(T, N, C, E, EC, unused)                                                        \
  KN__DEF_VV(T, N, C, E, EC, add, kn__add_##EC)                                                    \
  KN__DEF_VV(T, N, C, E, EC, sub, kn__sub_##EC)                                                    \
  KN__DEF_VV(T, N, C, E, EC, mul, kn__mul_##EC)                                                    \
  KN__DEF_VV(T, N, C, E, EC, div, kn__div_##EC)                                                    \
  KN__DEF_VS(T, N, C, E, EC, mul, kn__mul_##EC)                                                    \
  KN__DEF_SV(T, N, C, E, EC, mul, kn__mul_##EC)                                                    \
  KN__DEF_VS(T, N, C, E, EC, div, kn__div_##EC)                                                    \
  KN__DEF_V(T, N, C, E, EC, neg, kn__neg_##EC)
KN__VECS(KN__VEC_OPS, 0)

/* equality, dot */
#define KN__S_EQ(c, f) r = r && (a.c == b.c);
#define KN__VEC_REDUCE(T, N, C, E, EC, unused)                                                     \
  KN_FN bool kn_eq_##C##_##C(T a, T b) {                                                           \
    bool r = true;                                                                                 \
    KN__EACH##N(KN__S_EQ, 0) return r;                                                             \
  }                                                                                                \
  KN_FN bool kn_ne_##C##_##C(T a, T b) { return !kn_eq_##C##_##C(a, b); }
KN__VECS(KN__VEC_REDUCE, 0)

KN_FN float kn_dot_v2_v2(kn_vec2 a, kn_vec2 b) { return a.x * b.x + a.y * b.y; }
KN_FN float kn_dot_v3_v3(kn_vec3 a, kn_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
KN_FN float kn_dot_v4_v4(kn_vec4 a, kn_vec4 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
KN_FN double kn_dot_dv2_dv2(kn_dvec2 a, kn_dvec2 b) { return a.x * b.x + a.y * b.y; }
KN_FN double kn_dot_dv3_dv3(kn_dvec3 a, kn_dvec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
KN_FN double kn_dot_dv4_dv4(kn_dvec4 a, kn_dvec4 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
KN_FN int32_t kn_dot_iv2_iv2(kn_ivec2 a, kn_ivec2 b) {
  return kn__add_i32(kn__mul_i32(a.x, b.x), kn__mul_i32(a.y, b.y));
}
KN_FN int32_t kn_dot_iv3_iv3(kn_ivec3 a, kn_ivec3 b) {
  return kn__add_i32(kn_dot_iv2_iv2(kn_make_iv2(a.x, a.y), kn_make_iv2(b.x, b.y)),
                     kn__mul_i32(a.z, b.z));
}
KN_FN int32_t kn_dot_iv4_iv4(kn_ivec4 a, kn_ivec4 b) {
  return kn__add_i32(kn_dot_iv3_iv3(kn_make_iv3(a.x, a.y, a.z), kn_make_iv3(b.x, b.y, b.z)),
                     kn__mul_i32(a.w, b.w));
}

/* length, normalize, distance (float vectors) */
#define KN__GEOM(T, N, C, E, EC, unused)                                                           \
  KN_FN E kn_length_sq_##C(T a) { return kn_dot_##C##_##C(a, a); }                                 \
  KN_FN E kn_length_##C(T a) { return kn_sqrt_##EC(kn_dot_##C##_##C(a, a)); }                      \
  KN_FN E kn_distance_##C##_##C(T a, T b) { return kn_length_##C(kn_sub_##C##_##C(a, b)); }        \
  KN_FN T kn_normalize_##C(T a) {                                                                  \
    E len = kn_length_##C(a);                                                                      \
    return len > (E)0 ? kn_div_##C##_##EC(a, len) : kn_zero_##C();                                 \
  }
KN__FVECS(KN__GEOM, 0)

#define KN__CROSS(T, C, f)                                                                         \
  KN_FN T kn_cross_##C##_##C(T a, T b) {                                                           \
    T r;                                                                                           \
    r.x = kn__sub_##f(kn__mul_##f(a.y, b.z), kn__mul_##f(a.z, b.y));                               \
    r.y = kn__sub_##f(kn__mul_##f(a.z, b.x), kn__mul_##f(a.x, b.z));                               \
    r.z = kn__sub_##f(kn__mul_##f(a.x, b.y), kn__mul_##f(a.y, b.x));                               \
    return r;                                                                                      \
  }
KN__CROSS(kn_vec3, v3, f32)
KN__CROSS(kn_dvec3, dv3, f64)
KN__CROSS(kn_ivec3, iv3, i32)

/* ===== matrices =========================================================== */

/* Rows as vectors; vectors as float[4] for loops (unused slots are 0). */
KN_FN void kn__arr_v2(kn_vec2 v, float o[4]) {
  o[0] = v.x;
  o[1] = v.y;
  o[2] = o[3] = 0;
}
KN_FN void kn__arr_v3(kn_vec3 v, float o[4]) {
  o[0] = v.x;
  o[1] = v.y;
  o[2] = v.z;
  o[3] = 0;
}
KN_FN void kn__arr_v4(kn_vec4 v, float o[4]) {
  o[0] = v.x;
  o[1] = v.y;
  o[2] = v.z;
  o[3] = v.w;
}
KN_FN kn_vec2 kn__v2_arr(const float o[4]) { return kn_make_v2(o[0], o[1]); }
KN_FN kn_vec3 kn__v3_arr(const float o[4]) { return kn_make_v3(o[0], o[1], o[2]); }
KN_FN kn_vec4 kn__v4_arr(const float o[4]) { return kn_make_v4(o[0], o[1], o[2], o[3]); }

#define KN__MAT(N, M, V)                                                                           \
  KN_FN kn_mat##M kn_zero_m##M(void) {                                                             \
    kn_mat##M r;                                                                                   \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) r.m[i][j] = 0.0f;                                                \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_diag_m##M(float s) {                                                          \
    kn_mat##M r = kn_zero_m##M();                                                                  \
    for (int i = 0; i < N; i++) r.m[i][i] = s;                                                     \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_identity_m##M(void) { return kn_diag_m##M(1.0f); }                            \
  KN_FN int64_t kn__clampi_##M(int64_t i) { return i < 0 ? 0 : i > N - 1 ? N - 1 : i; }            \
  KN_FN float *kn_getp_m##M(kn_mat##M *a, int64_t i, int64_t j) {                                  \
    return &a->m[kn__clampi_##M(i)][kn__clampi_##M(j)];                                            \
  }                                                                                                \
  KN_FN float kn_get_m##M(kn_mat##M a, int64_t i, int64_t j) { return *kn_getp_m##M(&a, i, j); }   \
  KN_FN V kn_get_m##M##_row(kn_mat##M a, int64_t i) {                                              \
    float o[4] = {0, 0, 0, 0};                                                                     \
    for (int j = 0; j < N; j++) o[j] = a.m[kn__clampi_##M(i)][j];                                  \
    return kn__v##N##_arr(o);                                                                      \
  }                                                                                                \
  KN_FN void kn_set_m##M##_row(kn_mat##M *a, int64_t i, V r) {                                     \
    float o[4];                                                                                    \
    kn__arr_v##N(r, o);                                                                            \
    for (int j = 0; j < N; j++) a->m[kn__clampi_##M(i)][j] = o[j];                                 \
  }                                                                                                \
  KN_FN kn_mat##M kn_add_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                   \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] += b.m[i][j];                                          \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_sub_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                   \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] -= b.m[i][j];                                          \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_mul_m##M##_f32(kn_mat##M a, float s) {                                        \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] *= s;                                                  \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_mul_f32_m##M(float s, kn_mat##M a) {                                          \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] = s * a.m[i][j];                                       \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_div_m##M##_f32(kn_mat##M a, float s) {                                        \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] /= s;                                                  \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_neg_m##M(kn_mat##M a) {                                                       \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) a.m[i][j] = -a.m[i][j];                                          \
    return a;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_mul_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                   \
    kn_mat##M r;                                                                                   \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) {                                                                \
        float s = a.m[i][0] * b.m[0][j];                                                           \
        for (int k = 1; k < N; k++) s += a.m[i][k] * b.m[k][j];                                    \
        r.m[i][j] = s;                                                                             \
      }                                                                                            \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN V kn_mul_m##M##_v##N(kn_mat##M a, V v) {                                                   \
    float x[4], o[4] = {0, 0, 0, 0};                                                               \
    kn__arr_v##N(v, x);                                                                            \
    for (int i = 0; i < N; i++) {                                                                  \
      float s = a.m[i][0] * x[0];                                                                  \
      for (int k = 1; k < N; k++) s += a.m[i][k] * x[k];                                           \
      o[i] = s;                                                                                    \
    }                                                                                              \
    return kn__v##N##_arr(o);                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_transpose_m##M(kn_mat##M a) {                                                 \
    kn_mat##M r;                                                                                   \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) r.m[i][j] = a.m[j][i];                                           \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN kn_mat##M kn_outer_v##N##_v##N(V a, V b) {                                                 \
    float x[4], y[4];                                                                              \
    kn_mat##M r;                                                                                   \
    kn__arr_v##N(a, x);                                                                            \
    kn__arr_v##N(b, y);                                                                            \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) r.m[i][j] = x[i] * y[j];                                         \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_eq_m##M##_m##M(kn_mat##M a, kn_mat##M b) {                                         \
    bool r = true;                                                                                 \
    for (int i = 0; i < N; i++)                                                                    \
      for (int j = 0; j < N; j++) r = r && a.m[i][j] == b.m[i][j];                                 \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_ne_m##M##_m##M(kn_mat##M a, kn_mat##M b) { return !kn_eq_m##M##_m##M(a, b); }
KN__MAT(2, 22, kn_vec2)
KN__MAT(3, 33, kn_vec3)
KN__MAT(4, 44, kn_vec4)

KN_FN kn_mat22 kn_make_m22(float a, float b, float c, float d) {
  kn_mat22 r;
  r.m[0][0] = a;
  r.m[0][1] = b;
  r.m[1][0] = c;
  r.m[1][1] = d;
  return r;
}
KN_FN kn_mat33 kn_make_m33(float a, float b, float c, float d, float e, float f, float g, float h,
                           float i) {
  kn_mat33 r;
  r.m[0][0] = a;
  r.m[0][1] = b;
  r.m[0][2] = c;
  r.m[1][0] = d;
  r.m[1][1] = e;
  r.m[1][2] = f;
  r.m[2][0] = g;
  r.m[2][1] = h;
  r.m[2][2] = i;
  return r;
}
KN_FN kn_mat44 kn_make_m44(float a, float b, float c, float d, float e, float f, float g, float h,
                           float i, float j, float k, float l, float m, float n, float o, float p) {
  kn_mat44 r;
  r.m[0][0] = a;
  r.m[0][1] = b;
  r.m[0][2] = c;
  r.m[0][3] = d;
  r.m[1][0] = e;
  r.m[1][1] = f;
  r.m[1][2] = g;
  r.m[1][3] = h;
  r.m[2][0] = i;
  r.m[2][1] = j;
  r.m[2][2] = k;
  r.m[2][3] = l;
  r.m[3][0] = m;
  r.m[3][1] = n;
  r.m[3][2] = o;
  r.m[3][3] = p;
  return r;
}
KN_FN kn_mat22 kn_make_m22_rows(kn_vec2 a, kn_vec2 b) { return kn_make_m22(a.x, a.y, b.x, b.y); }
KN_FN kn_mat33 kn_make_m33_rows(kn_vec3 a, kn_vec3 b, kn_vec3 c) {
  return kn_make_m33(a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z);
}
KN_FN kn_mat44 kn_make_m44_rows(kn_vec4 a, kn_vec4 b, kn_vec4 c, kn_vec4 d) {
  return kn_make_m44(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w, d.x, d.y, d.z,
                     d.w);
}

/* Determinants and inverses work in float64 and round once at the end: a
 * product of two float32s is exact there, so cofactors lose almost nothing to
 * cancellation and the result is close to the correctly rounded one even for
 * badly conditioned matrices. The same bits on every device: float64 + - * /
 * are correctly rounded on both, in the order written, with no FMA contraction
 * (-ffp-contract=off, NVRTC --fmad=false). The inverse of a singular matrix
 * (float64 determinant exactly 0) is the zero matrix. */
KN_FN double kn__det22(double a, double b, double c, double d) { return a * d - b * c; }
KN_FN float kn_determinant_m22(kn_mat22 a) {
  return (float)kn__det22(a.m[0][0], a.m[0][1], a.m[1][0], a.m[1][1]);
}
/* Cofactor C[i][j] of a 3x3 matrix (rows/cols taken cyclically, so the sign is built in). */
KN_FN double kn__cof33(const kn_mat33 *a, int i, int j) {
  int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
  return kn__det22(a->m[i1][j1], a->m[i1][j2], a->m[i2][j1], a->m[i2][j2]);
}
KN_FN double kn__det33(const kn_mat33 *a) {
  return a->m[0][0] * kn__cof33(a, 0, 0) + a->m[0][1] * kn__cof33(a, 0, 1) +
         a->m[0][2] * kn__cof33(a, 0, 2);
}
KN_FN float kn_determinant_m33(kn_mat33 a) { return (float)kn__det33(&a); }
/* 2x2 minors of rows (0,1) and (2,3) of a 4x4 matrix, for Laplace expansion. */
typedef struct kn__minors44 {
  double s[6], c[6];
} kn__minors44;
KN_FN kn__minors44 kn__minors(const kn_mat44 *a) {
  const float(*m)[4] = a->m;
  kn__minors44 r;
  r.s[0] = kn__det22(m[0][0], m[0][1], m[1][0], m[1][1]);
  r.s[1] = kn__det22(m[0][0], m[0][2], m[1][0], m[1][2]);
  r.s[2] = kn__det22(m[0][0], m[0][3], m[1][0], m[1][3]);
  r.s[3] = kn__det22(m[0][1], m[0][2], m[1][1], m[1][2]);
  r.s[4] = kn__det22(m[0][1], m[0][3], m[1][1], m[1][3]);
  r.s[5] = kn__det22(m[0][2], m[0][3], m[1][2], m[1][3]);
  r.c[5] = kn__det22(m[2][2], m[2][3], m[3][2], m[3][3]);
  r.c[4] = kn__det22(m[2][1], m[2][3], m[3][1], m[3][3]);
  r.c[3] = kn__det22(m[2][1], m[2][2], m[3][1], m[3][2]);
  r.c[2] = kn__det22(m[2][0], m[2][3], m[3][0], m[3][3]);
  r.c[1] = kn__det22(m[2][0], m[2][2], m[3][0], m[3][2]);
  r.c[0] = kn__det22(m[2][0], m[2][1], m[3][0], m[3][1]);
  return r;
}
KN_FN double kn__det44(const kn__minors44 *k) {
  return k->s[0] * k->c[5] - k->s[1] * k->c[4] + k->s[2] * k->c[3] + k->s[3] * k->c[2] -
         k->s[4] * k->c[1] + k->s[5] * k->c[0];
}
KN_FN float kn_determinant_m44(kn_mat44 a) {
  kn__minors44 k = kn__minors(&a);
  return (float)kn__det44(&k);
}

KN_FN kn_mat22 kn_inverse_m22(kn_mat22 a) {
  double d = kn__det22(a.m[0][0], a.m[0][1], a.m[1][0], a.m[1][1]);
  if (d == 0.0) return kn_zero_m22();
  return kn_make_m22((float)(a.m[1][1] / d), (float)(-a.m[0][1] / d), (float)(-a.m[1][0] / d),
                     (float)(a.m[0][0] / d));
}
KN_FN kn_mat33 kn_inverse_m33(kn_mat33 a) {
  double d = kn__det33(&a);
  kn_mat33 r;
  if (d == 0.0) return kn_zero_m33();
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r.m[i][j] = (float)(kn__cof33(&a, j, i) / d);
  return r;
}
KN_FN kn_mat44 kn_inverse_m44(kn_mat44 a) {
  float(*m)[4] = a.m;
  kn__minors44 k = kn__minors(&a);
  const double *s = k.s, *c = k.c;
  double d = kn__det44(&k);
  if (d == 0.0) return kn_zero_m44();
  return kn_make_m44((float)((m[1][1] * c[5] - m[1][2] * c[4] + m[1][3] * c[3]) / d),
                     (float)((-m[0][1] * c[5] + m[0][2] * c[4] - m[0][3] * c[3]) / d),
                     (float)((m[3][1] * s[5] - m[3][2] * s[4] + m[3][3] * s[3]) / d),
                     (float)((-m[2][1] * s[5] + m[2][2] * s[4] - m[2][3] * s[3]) / d),
                     (float)((-m[1][0] * c[5] + m[1][2] * c[2] - m[1][3] * c[1]) / d),
                     (float)((m[0][0] * c[5] - m[0][2] * c[2] + m[0][3] * c[1]) / d),
                     (float)((-m[3][0] * s[5] + m[3][2] * s[2] - m[3][3] * s[1]) / d),
                     (float)((m[2][0] * s[5] - m[2][2] * s[2] + m[2][3] * s[1]) / d),
                     (float)((m[1][0] * c[4] - m[1][1] * c[2] + m[1][3] * c[0]) / d),
                     (float)((-m[0][0] * c[4] + m[0][1] * c[2] - m[0][3] * c[0]) / d),
                     (float)((m[3][0] * s[4] - m[3][1] * s[2] + m[3][3] * s[0]) / d),
                     (float)((-m[2][0] * s[4] + m[2][1] * s[2] - m[2][3] * s[0]) / d),
                     (float)((-m[1][0] * c[3] + m[1][1] * c[1] - m[1][2] * c[0]) / d),
                     (float)((m[0][0] * c[3] - m[0][1] * c[1] + m[0][2] * c[0]) / d),
                     (float)((-m[3][0] * s[3] + m[3][1] * s[1] - m[3][2] * s[0]) / d),
                     (float)((m[2][0] * s[3] - m[2][1] * s[1] + m[2][2] * s[0]) / d));
}

/* ===== quaternions ======================================================== */

KN_FN kn_quat kn_make_q(float x, float y, float z, float w) {
  kn_quat r;
  r.x = x;
  r.y = y;
  r.z = z;
  r.w = w;
  return r;
}
KN_FN kn_quat kn_zero_q(void) { return kn_make_q(0.0f, 0.0f, 0.0f, 0.0f); }
KN_FN kn_quat kn_splat_q(float s) { return kn_make_q(s, s, s, s); } /* quat(s) */
KN_FN kn_quat kn_identity_q(void) { return kn_make_q(0.0f, 0.0f, 0.0f, 1.0f); }
KN_FN float *kn_getp_q(kn_quat *q, int64_t k) { return KN__PICK4(q, k); }
KN_FN float kn_get_q(kn_quat q, int64_t k) { return *kn_getp_q(&q, k); }
KN_FN kn_vec4 kn__q_v4(kn_quat q) { return kn_make_v4(q.x, q.y, q.z, q.w); }
KN_FN kn_quat kn__v4_q(kn_vec4 v) { return kn_make_q(v.x, v.y, v.z, v.w); }
KN_FN kn_quat kn_add_q_q(kn_quat a, kn_quat b) {
  return kn__v4_q(kn_add_v4_v4(kn__q_v4(a), kn__q_v4(b)));
}
KN_FN kn_quat kn_sub_q_q(kn_quat a, kn_quat b) {
  return kn__v4_q(kn_sub_v4_v4(kn__q_v4(a), kn__q_v4(b)));
}
KN_FN kn_quat kn_mul_q_f32(kn_quat a, float s) { return kn__v4_q(kn_mul_v4_f32(kn__q_v4(a), s)); }
KN_FN kn_quat kn_mul_f32_q(float s, kn_quat a) { return kn__v4_q(kn_mul_f32_v4(s, kn__q_v4(a))); }
KN_FN kn_quat kn_neg_q(kn_quat a) { return kn__v4_q(kn_neg_v4(kn__q_v4(a))); }
KN_FN bool kn_eq_q_q(kn_quat a, kn_quat b) { return kn_eq_v4_v4(kn__q_v4(a), kn__q_v4(b)); }
KN_FN bool kn_ne_q_q(kn_quat a, kn_quat b) { return !kn_eq_q_q(a, b); }

KN_FN kn_quat kn_quat_mul_q_q(kn_quat a, kn_quat b) {
  return kn_make_q(
      a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
/* v + 2w (u x v) + 2 u x (u x v), u = q.xyz: q v q* for a unit q. */
KN_FN kn_vec3 kn_quat_rotate_q_v3(kn_quat q, kn_vec3 v) {
  kn_vec3 u = kn_make_v3(q.x, q.y, q.z);
  kn_vec3 t = kn_mul_f32_v3(2.0f, kn_cross_v3_v3(u, v));
  return kn_add_v3_v3(kn_add_v3_v3(v, kn_mul_f32_v3(q.w, t)), kn_cross_v3_v3(u, t));
}

/* ===== atomics ============================================================ */

#ifdef __CUDACC_RTC__

typedef unsigned long long kn__ull;
#define KN__CU_INT(T, C, CT)                                                                       \
  KN_FN T kn_atomic_add_##C(T *p, T v) { return (T)atomicAdd((CT *)p, (CT)v); }                    \
  KN_FN T kn_atomic_sub_##C(T *p, T v) { return (T)atomicAdd((CT *)p, (CT)0 - (CT)v); }            \
  KN_FN T kn_atomic_exch_##C(T *p, T v) { return (T)atomicExch((CT *)p, (CT)v); }                  \
  KN_FN T kn_atomic_and_##C(T *p, T v) { return (T)atomicAnd((CT *)p, (CT)v); }                    \
  KN_FN T kn_atomic_or_##C(T *p, T v) { return (T)atomicOr((CT *)p, (CT)v); }                      \
  KN_FN T kn_atomic_xor_##C(T *p, T v) { return (T)atomicXor((CT *)p, (CT)v); }                    \
  KN_FN T kn_atomic_min_##C(T *p, T v) { return atomicMin(p, v); }                                 \
  KN_FN T kn_atomic_max_##C(T *p, T v) { return atomicMax(p, v); }                                 \
  KN_FN T kn_atomic_cas_##C(T *p, T e, T d) { return (T)atomicCAS((CT *)p, (CT)e, (CT)d); }
KN__CU_INT(int32_t, i32, unsigned int)
KN__CU_INT(uint32_t, u32, unsigned int)
KN__CU_INT(int64_t, i64, kn__ull)
KN__CU_INT(uint64_t, u64, kn__ull)

/* Float CAS loop on the bit pattern: new = op(old, v). */
#define KN__CU_FLOOP(T, C, BT, TOB, FROMB, stem, op)                                               \
  KN_FN T kn_atomic_##stem##_##C(T *p, T v) {                                                      \
    BT *a = (BT *)p, old = *a, seen;                                                               \
    do {                                                                                           \
      seen = old;                                                                                  \
      old = atomicCAS(a, seen, TOB(op(FROMB(seen), v)));                                           \
    } while (old != seen);                                                                         \
    return FROMB(old);                                                                             \
  }
#define KN__CU_FLOAT(T, C, BT, TOB, FROMB)                                                         \
  KN_FN T kn_atomic_add_##C(T *p, T v) { return atomicAdd(p, v); }                                 \
  KN_FN T kn_atomic_sub_##C(T *p, T v) { return atomicAdd(p, -v); }                                \
  KN__CU_FLOOP(T, C, BT, TOB, FROMB, min, kn_min_##C##_##C)                                        \
  KN__CU_FLOOP(T, C, BT, TOB, FROMB, max, kn_max_##C##_##C)                                        \
  KN_FN T kn_atomic_exch_##C(T *p, T v) { return FROMB(atomicExch((BT *)p, TOB(v))); }             \
  KN_FN T kn_atomic_cas_##C(T *p, T e, T d) { return FROMB(atomicCAS((BT *)p, TOB(e), TOB(d))); }
KN__CU_FLOAT(float, f32, unsigned int, __float_as_uint, __uint_as_float)
KN__CU_FLOAT(double, f64, kn__ull, kn__f64_bits, kn__bits_f64)

/* 8- and 16-bit elements have no atomics of their own on a GPU: a CAS loop on
 * the aligned 32-bit word that holds the element rewrites only its bytes. */
KN_FN unsigned int *kn__sw_word(const void *p, unsigned int *shift) {
  *shift = (unsigned int)((size_t)p & 3u) * 8u;
  return (unsigned int *)((size_t)p & ~(size_t)3);
}
#define KN__CU_SW(T, C, BITS, GET, PUT)                                                            \
  KN_FN T kn__swget_##C(unsigned int w, unsigned int sh) { return GET((w >> sh) & BITS); }         \
  KN_FN unsigned int kn__swput_##C(unsigned int w, unsigned int sh, T v) {                         \
    return (w & ~(BITS << sh)) | (((unsigned int)(PUT(v)) & BITS) << sh);                          \
  }                                                                                                \
  KN_FN T kn__swloop_##C(T *p, T v, T (*op)(T, T)) {                                               \
    unsigned int sh, *w = kn__sw_word(p, &sh), old = *w, seen;                                     \
    do {                                                                                           \
      seen = old;                                                                                  \
      old = atomicCAS(w, seen, kn__swput_##C(seen, sh, op(kn__swget_##C(seen, sh), v)));           \
    } while (old != seen);                                                                         \
    return kn__swget_##C(old, sh);                                                                 \
  }                                                                                                \
  KN_FN T kn_atomic_cas_##C(T *p, T e, T d) {                                                      \
    unsigned int sh, *w = kn__sw_word(p, &sh), old = *w, seen;                                     \
    do {                                                                                           \
      seen = old;                                                                                  \
      if ((((unsigned int)(PUT(e)) ^ (seen >> sh)) & BITS) != 0u) break;                           \
      old = atomicCAS(w, seen, kn__swput_##C(seen, sh, d));                                        \
    } while (old != seen);                                                                         \
    return kn__swget_##C(seen, sh);                                                                \
  }
#define KN__CU_SWARITH(T, C)                                                                       \
  KN_FN T kn_atomic_add_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swadd_##C); }             \
  KN_FN T kn_atomic_sub_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swsub_##C); }             \
  KN_FN T kn_atomic_min_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swmin_##C); }             \
  KN_FN T kn_atomic_max_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swmax_##C); }             \
  KN_FN T kn_atomic_exch_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swexch_##C); }
#define KN__CU_SWBITS(T, C)                                                                        \
  KN_FN T kn_atomic_and_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swand_##C); }             \
  KN_FN T kn_atomic_or_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swor_##C); }               \
  KN_FN T kn_atomic_xor_##C(T *p, T v) { return kn__swloop_##C(p, v, kn__swxor_##C); }
#endif

/* The operations of the small types, as the CAS loops above and below apply them. */
#define KN__SW_OPS(T, C, UT)                                                                       \
  KN_FN T kn__swadd_##C(T a, T b) { return (T)(UT)((UT)a + (UT)b); }                               \
  KN_FN T kn__swsub_##C(T a, T b) { return (T)(UT)((UT)a - (UT)b); }                               \
  KN_FN T kn__swmin_##C(T a, T b) { return a < b ? a : b; }                                        \
  KN_FN T kn__swmax_##C(T a, T b) { return a > b ? a : b; }                                        \
  KN_FN T kn__swexch_##C(T a, T b) { return (void)a, b; }                                          \
  KN_FN T kn__swand_##C(T a, T b) { return (T)(a & b); }                                           \
  KN_FN T kn__swor_##C(T a, T b) { return (T)(a | b); }                                            \
  KN_FN T kn__swxor_##C(T a, T b) { return (T)(a ^ b); }
#define KN__HALF_OPS(T, C)                                                                         \
  KN_FN T kn__swadd_##C(T a, T b) {                                                                \
    return kn_cvt_f32_##C(kn_cvt_##C##_f32(a) + kn_cvt_##C##_f32(b));                              \
  }                                                                                                \
  KN_FN T kn__swsub_##C(T a, T b) {                                                                \
    return kn_cvt_f32_##C(kn_cvt_##C##_f32(a) - kn_cvt_##C##_f32(b));                              \
  }                                                                                                \
  KN_FN T kn__swmin_##C(T a, T b) {                                                                \
    return kn_cvt_f32_##C(kn_min_f32_f32(kn_cvt_##C##_f32(a), kn_cvt_##C##_f32(b)));               \
  }                                                                                                \
  KN_FN T kn__swmax_##C(T a, T b) {                                                                \
    return kn_cvt_f32_##C(kn_max_f32_f32(kn_cvt_##C##_f32(a), kn_cvt_##C##_f32(b)));               \
  }                                                                                                \
  KN_FN T kn__swexch_##C(T a, T b) { return (void)a, b; }
KN__SW_OPS(int8_t, i8, uint8_t)
KN__SW_OPS(uint8_t, u8, uint8_t)
KN__SW_OPS(int16_t, i16, uint16_t)
KN__SW_OPS(uint16_t, u16, uint16_t)
KN__HALF_OPS(kn_f16, f16)
KN__HALF_OPS(kn_bf16, bf16)

#ifdef __CUDACC_RTC__
#define KN__SW_GETI8(x)  ((int8_t)(uint8_t)(x))
#define KN__SW_GETU8(x)  ((uint8_t)(x))
#define KN__SW_GETI16(x) ((int16_t)(uint16_t)(x))
#define KN__SW_GETU16(x) ((uint16_t)(x))
#define KN__SW_PUTI(x)   (x)
#define KN__SW_PUTH(x)   ((x).bits)
#define KN__CU_SWINT(T, C, BITS, GET)                                                              \
  KN__CU_SW(T, C, BITS, GET, KN__SW_PUTI)                                                          \
  KN__CU_SWARITH(T, C)                                                                             \
  KN__CU_SWBITS(T, C)
KN__CU_SWINT(int8_t, i8, 0xffu, KN__SW_GETI8)
KN__CU_SWINT(uint8_t, u8, 0xffu, KN__SW_GETU8)
KN__CU_SWINT(int16_t, i16, 0xffffu, KN__SW_GETI16)
KN__CU_SWINT(uint16_t, u16, 0xffffu, KN__SW_GETU16)
#define KN__CU_SWHALF(T, C, MAKE)                                                                  \
  KN__CU_SW(T, C, 0xffffu, MAKE, KN__SW_PUTH)                                                      \
  KN__CU_SWARITH(T, C)
KN__CU_SWHALF(kn_f16, f16, kn__f16)
KN__CU_SWHALF(kn_bf16, bf16, kn__bf16)

#else /* host C: GCC/clang __atomic builtins */

#define KN__MO __ATOMIC_RELAXED
#define KN__C_INT(T, C)                                                                            \
  KN_FN T kn_atomic_add_##C(T *p, T v) { return __atomic_fetch_add(p, v, KN__MO); }                \
  KN_FN T kn_atomic_sub_##C(T *p, T v) { return __atomic_fetch_sub(p, v, KN__MO); }                \
  KN_FN T kn_atomic_exch_##C(T *p, T v) { return __atomic_exchange_n(p, v, KN__MO); }              \
  KN_FN T kn_atomic_and_##C(T *p, T v) { return __atomic_fetch_and(p, v, KN__MO); }                \
  KN_FN T kn_atomic_or_##C(T *p, T v) { return __atomic_fetch_or(p, v, KN__MO); }                  \
  KN_FN T kn_atomic_xor_##C(T *p, T v) { return __atomic_fetch_xor(p, v, KN__MO); }                \
  KN_FN T kn_atomic_min_##C(T *p, T v) {                                                           \
    T old = __atomic_load_n(p, KN__MO);                                                            \
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, KN__MO, KN__MO)) {            \
    }                                                                                              \
    return old;                                                                                    \
  }                                                                                                \
  KN_FN T kn_atomic_max_##C(T *p, T v) {                                                           \
    T old = __atomic_load_n(p, KN__MO);                                                            \
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, KN__MO, KN__MO)) {            \
    }                                                                                              \
    return old;                                                                                    \
  }                                                                                                \
  KN_FN T kn_atomic_cas_##C(T *p, T e, T d) {                                                      \
    __atomic_compare_exchange_n(p, &e, d, false, KN__MO, KN__MO);                                  \
    return e;                                                                                      \
  }
KN__C_INT(int32_t, i32)
KN__C_INT(uint32_t, u32)
KN__C_INT(int64_t, i64)
KN__C_INT(uint64_t, u64)

/* The generic __atomic_compare_exchange compares the bytes of the float. */
#define KN__C_FLOOP(T, C, stem, op)                                                                \
  KN_FN T kn_atomic_##stem##_##C(T *p, T v) {                                                      \
    T old, nw;                                                                                     \
    __atomic_load(p, &old, KN__MO);                                                                \
    do {                                                                                           \
      nw = op(old, v);                                                                             \
    } while (!__atomic_compare_exchange(p, &old, &nw, true, KN__MO, KN__MO));                      \
    return old;                                                                                    \
  }
#define KN__C_FLOAT(T, C)                                                                          \
  KN__C_FLOOP(T, C, add, kn__add_##C)                                                              \
  KN__C_FLOOP(T, C, sub, kn__sub_##C)                                                              \
  KN__C_FLOOP(T, C, min, kn_min_##C##_##C)                                                         \
  KN__C_FLOOP(T, C, max, kn_max_##C##_##C)                                                         \
  KN_FN T kn_atomic_exch_##C(T *p, T v) {                                                          \
    T old;                                                                                         \
    __atomic_exchange(p, &v, &old, KN__MO);                                                        \
    return old;                                                                                    \
  }                                                                                                \
  KN_FN T kn_atomic_cas_##C(T *p, T e, T d) {                                                      \
    __atomic_compare_exchange(p, &e, &d, false, KN__MO, KN__MO);                                   \
    return e;                                                                                      \
  }
KN__C_FLOAT(float, f32)
KN__C_FLOAT(double, f64)
KN__C_INT(int8_t, i8)
KN__C_INT(uint8_t, u8)
KN__C_INT(int16_t, i16)
KN__C_INT(uint16_t, u16)

/* float16 and bfloat16: a CAS loop on the 2-byte element (bits compared). */
#define KN__C_HALF(T, C)                                                                           \
  KN__C_FLOOP(T, C, add, kn__swadd_##C)                                                            \
  KN__C_FLOOP(T, C, sub, kn__swsub_##C)                                                            \
  KN__C_FLOOP(T, C, min, kn__swmin_##C)                                                            \
  KN__C_FLOOP(T, C, max, kn__swmax_##C)                                                            \
  KN_FN T kn_atomic_exch_##C(T *p, T v) {                                                          \
    T old;                                                                                         \
    __atomic_exchange(p, &v, &old, KN__MO);                                                        \
    return old;                                                                                    \
  }                                                                                                \
  KN_FN T kn_atomic_cas_##C(T *p, T e, T d) {                                                      \
    __atomic_compare_exchange(p, &e, &d, false, KN__MO, KN__MO);                                   \
    return e;                                                                                      \
  }
KN__C_HALF(kn_f16, f16)
KN__C_HALF(kn_bf16, bf16)

#endif

/* atomic_load: a relaxed read of the whole element, never torn. A GPU reads
 * through volatile, so from the L2 every block sees, not from a copy an
 * earlier read left in L1 or a register: a loop waiting for another block's
 * atomic_exch sees it arrive. */
#ifdef __CUDACC_RTC__
#define KN__CU_LOAD(T, C, BT, FROMB)                                                               \
  KN_FN T kn_atomic_load_##C(const T *p) { return FROMB(*(const volatile BT *)p); }
#define KN__LOAD_AS(x) (x)
KN__CU_LOAD(int8_t, i8, int8_t, KN__LOAD_AS)
KN__CU_LOAD(uint8_t, u8, uint8_t, KN__LOAD_AS)
KN__CU_LOAD(int16_t, i16, int16_t, KN__LOAD_AS)
KN__CU_LOAD(uint16_t, u16, uint16_t, KN__LOAD_AS)
KN__CU_LOAD(int32_t, i32, int32_t, KN__LOAD_AS)
KN__CU_LOAD(uint32_t, u32, uint32_t, KN__LOAD_AS)
KN__CU_LOAD(int64_t, i64, int64_t, KN__LOAD_AS)
KN__CU_LOAD(uint64_t, u64, uint64_t, KN__LOAD_AS)
KN__CU_LOAD(float, f32, unsigned int, __uint_as_float)
KN__CU_LOAD(double, f64, kn__ull, kn__bits_f64)
KN__CU_LOAD(kn_f16, f16, uint16_t, kn__f16)
KN__CU_LOAD(kn_bf16, bf16, uint16_t, kn__bf16)
#else
#define KN__C_LOAD(T, C)                                                                           \
  KN_FN T kn_atomic_load_##C(const T *p) {                                                         \
    T v;                                                                                           \
    __atomic_load(p, &v, KN__MO);                                                                  \
    return v;                                                                                      \
  }
KN__C_LOAD(int8_t, i8)
KN__C_LOAD(uint8_t, u8)
KN__C_LOAD(int16_t, i16)
KN__C_LOAD(uint16_t, u16)
KN__C_LOAD(int32_t, i32)
KN__C_LOAD(uint32_t, u32)
KN__C_LOAD(int64_t, i64)
KN__C_LOAD(uint64_t, u64)
KN__C_LOAD(float, f32)
KN__C_LOAD(double, f64)
KN__C_LOAD(kn_f16, f16)
KN__C_LOAD(kn_bf16, bf16)
#endif

/* Vector atomics: one atomic per component; returns the old components. */
#define KN__S_AT(c, f) r.c = f(&p->c, v.c);
#define KN__VAT(T, N, C, EC, op)                                                                   \
  KN_FN T kn_atomic_##op##_##C(T *p, T v) {                                                        \
    T r;                                                                                           \
    KN__EACH##N(KN__S_AT, kn_atomic_##op##_##EC) return r;                                         \
  }
#define KN__VATOMIC(T, N, C, E, EC, unused)                                                        \
  KN__VAT(T, N, C, EC, add)                                                                        \
  KN__VAT(T, N, C, EC, sub) KN__VAT(T, N, C, EC, min) KN__VAT(T, N, C, EC, max)
KN__VECS(KN__VATOMIC, 0)
#define KN__IVATOMIC(T, N, C, E, EC, unused)                                                       \
  KN__VAT(T, N, C, EC, and) KN__VAT(T, N, C, EC, or) KN__VAT(T, N, C, EC, xor)
KN__IVECS(KN__IVATOMIC, 0)

/* Atomics on the n float32 components of a matrix (or spatial type), each on its own. */
#define KN__FSTEM(T, C, n, stem)                                                                   \
  KN_FN T kn_atomic_##stem##_##C(T *p, T v) {                                                      \
    T r;                                                                                           \
    for (int i = 0; i < (n); i++)                                                                  \
      ((float *)&r)[i] = kn_atomic_##stem##_f32((float *)p + i, ((const float *)&v)[i]);           \
    return r;                                                                                      \
  }
#define KN__FATOMIC(T, C, n)                                                                       \
  KN__FSTEM(T, C, n, add) KN__FSTEM(T, C, n, sub) KN__FSTEM(T, C, n, min) KN__FSTEM(T, C, n, max)
KN__FATOMIC(kn_mat22, m22, 4)
KN__FATOMIC(kn_mat33, m33, 9)
KN__FATOMIC(kn_mat44, m44, 16)

/* ===== random numbers ===================================================== */

/* The PCG-RXS-M-XS output permutation of a 32-bit state. */
KN_FN uint32_t kn__pcg_out(uint32_t s) {
  uint32_t w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
  return (w >> 22u) ^ w;
}
KN_FN uint32_t kn__pcg_step(uint32_t s) { return s * 747796405u + 2891336453u; }
KN_FN uint32_t kn__pcg_hash(uint32_t x) { return kn__pcg_out(kn__pcg_step(x)); }

KN_FN uint32_t kn_rand_init(uint32_t seed, uint32_t offset) {
  return kn__pcg_hash(seed + kn__pcg_hash(offset));
}
KN_FN uint32_t kn_randi(uint32_t *s) {
  *s = kn__pcg_step(*s);
  return kn__pcg_out(*s);
}
KN_FN float kn_randf(uint32_t *s) { return (float)(kn_randi(s) >> 8) * (1.0f / 16777216.0f); }
KN_FN float kn_randf_range(uint32_t *s, float lo, float hi) { return lo + (hi - lo) * kn_randf(s); }

/* ===== printf ============================================================= */

#ifdef __CUDACC_RTC__
#define kn_printf printf
#else
void flockfile(FILE *);
void funlockfile(FILE *);
/* Not KN_FN: variadic functions cannot be forced inline. */
static inline __attribute__((unused)) void kn_printf(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
  flockfile(stdout);
  fwrite(buf, 1, (size_t)n, stdout);
  fflush(stdout);
  funlockfile(stdout);
}
#endif

/* ===== debug checks ======================================================= */

/* The first failing thread of a launch claims c->err; later ones only fail. */
KN_FN kn_error *kn__err_claim(const kn_ctx *c) {
  kn_error *e = c->err;
  if (!e) return 0;
#ifdef __CUDACC_RTC__
  return atomicCAS(&e->flag, 0, 1) == 0 ? e : 0;
#else
  int32_t zero = 0;
  return __atomic_compare_exchange_n(&e->flag, &zero, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)
             ? e
             : 0;
#endif
}

KN_COLD void kn__bounds_fail(const kn_ctx *c, int32_t file, int32_t line, int32_t param,
                             int32_t ndim, const int64_t idx[4], const int64_t shape[4],
                             int64_t tid) {
  kn_error *e = kn__err_claim(c);
  if (!e) return;
  e->kind = KN_ERR_BOUNDS;
  e->file = file;
  e->line = line;
  e->param = param;
  e->ndim = ndim;
  e->tid = tid;
  for (int k = 0; k < 4; k++) {
    e->index[k] = k < ndim ? idx[k] : 0;
    e->shape[k] = k < ndim ? shape[k] : 1;
  }
}

KN_FN bool kn_bounds_ok(const kn_ctx *c, int32_t file, int32_t line, int32_t param, int32_t ndim,
                        const int64_t idx[4], const int64_t shape[4], int64_t tid) {
  bool ok = true;
  for (int k = 0; k < ndim && k < 4; k++) ok = ok && idx[k] >= 0 && idx[k] < shape[k];
  if (!ok) kn__bounds_fail(c, file, line, param, ndim, idx, shape, tid);
  return ok;
}

/* A failed assert(cond, "message"): msg numbers the message (the module's
 * checker keeps the text), -1 for an assert without one. */
KN_COLD void kn_assert_fail_msg(const kn_ctx *c, int32_t file, int32_t line, int32_t msg,
                                int64_t tid) {
  kn_error *e = kn__err_claim(c);
  if (!e) return;
  e->kind = KN_ERR_ASSERT;
  e->file = file;
  e->line = line;
  e->param = msg;
  e->ndim = 0;
  e->tid = tid;
  for (int k = 0; k < 4; k++) e->index[k] = 0, e->shape[k] = 1;
}

KN_COLD void kn_assert_fail(const kn_ctx *c, int32_t file, int32_t line, int64_t tid) {
  kn_assert_fail_msg(c, file, line, -1, tid);
}

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
