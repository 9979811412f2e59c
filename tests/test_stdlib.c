/* test_stdlib.c: the values of stdlib/kern_builtins.h's functions (the builtin
 * table itself: test_stdlib_table.c).
 *
 * Requires KERN_SOURCE_DIR (the header texts, pasted into generated test
 * translation units), a C compiler on PATH, and libnvrtc for the NVRTC checks
 * (skipped with a message when it cannot be loaded). Results are compared with
 * independent references: long double libm, hand-computed values, brute-force
 * float16 rounding, double-precision linear algebra written here. With a CUDA
 * GPU, stdlib/gpu_crosscheck.c also runs the header there and compares.
 */
#include <criterion/criterion.h>

#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins.h"
#include "harness.h"
#include "kern_builtins.h"
#include "kern_math.h"
#include "kern_spatial.h"
#include "kern_transform.h"
#include "kern_spatial_algebra.h"
#include "kern_linalg.h"
#include "kern_noise.h"

#include "stdlib/crosscheck_rows.h"
#include "stdlib/gpu_crosscheck.c"

/* ===== helpers =========================================================== */

static bool near(long double got, long double want, long double rel, long double abs_tol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabsl(got - want) <= abs_tol + rel * fabsl(want);
}

#define F32_REL 6e-7L  /* about 5 float ulp */
#define F64_REL 2e-15L /* about 9 double ulp */

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static float bits_f32(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* A small deterministic generator for test inputs (not the one under test). */
static uint64_t lcg_state = 88172645463325252ull;
static double urand(double lo, double hi) {
  lcg_state ^= lcg_state << 13, lcg_state ^= lcg_state >> 7, lcg_state ^= lcg_state << 17;
  return lo + (hi - lo) * (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* ===== scalar and componentwise math ===================================== */

static long double rsqrt_ref(long double x) { return 1.0L / sqrtl(x); }

/* Checks stem on f32, f64 and each float vector type against ref on [lo, hi]. */
#define CHECK_UNARY(stem, ref, lo, hi, abs_tol)                                                    \
  for (int i = 0; i < 200; i++) {                                                                  \
    double x = urand(lo, hi), y = urand(lo, hi), z = urand(lo, hi), w = urand(lo, hi);             \
    float xf = (float)x, yf = (float)y, zf = (float)z, wf = (float)w;                              \
    cr_assert(near(kn_##stem##_f32(xf), ref(xf), F32_REL, abs_tol), #stem "(%g)", x);              \
    cr_assert(near(kn_##stem##_f64(x), ref(x), F64_REL, abs_tol * 1e-9), #stem "(%g)", x);         \
    kn_vec2 v2 = kn_##stem##_v2((kn_vec2){xf, yf});                                                \
    kn_vec3 v3 = kn_##stem##_v3((kn_vec3){xf, yf, zf});                                            \
    kn_vec4 v4 = kn_##stem##_v4((kn_vec4){xf, yf, zf, wf});                                        \
    kn_dvec2 d2 = kn_##stem##_dv2((kn_dvec2){x, y});                                               \
    kn_dvec3 d3 = kn_##stem##_dv3((kn_dvec3){x, y, z});                                            \
    kn_dvec4 d4 = kn_##stem##_dv4((kn_dvec4){x, y, z, w});                                         \
    cr_assert(near(v2.x, ref(xf), F32_REL, abs_tol) && near(v2.y, ref(yf), F32_REL, abs_tol));     \
    cr_assert(near(v3.y, ref(yf), F32_REL, abs_tol) && near(v3.z, ref(zf), F32_REL, abs_tol));     \
    cr_assert(near(v4.x, ref(xf), F32_REL, abs_tol) && near(v4.w, ref(wf), F32_REL, abs_tol));     \
    cr_assert(near(d2.y, ref(y), F64_REL, abs_tol * 1e-9));                                        \
    cr_assert(near(d3.z, ref(z), F64_REL, abs_tol * 1e-9));                                        \
    cr_assert(near(d4.w, ref(w), F64_REL, abs_tol * 1e-9) &&                                       \
              near(d4.x, ref(x), F64_REL, abs_tol * 1e-9));                                        \
  }

Test(math, unary_functions) {
  CHECK_UNARY(sqrt, sqrtl, 0.0, 1e6, 0.0L);
  CHECK_UNARY(rsqrt, rsqrt_ref, 1e-3, 1e6, 0.0L);
  CHECK_UNARY(cbrt, cbrtl, -1e6, 1e6, 0.0L);
  CHECK_UNARY(exp, expl, -80.0, 80.0, 0.0L);
  CHECK_UNARY(exp2, exp2l, -120.0, 120.0, 0.0L);
  CHECK_UNARY(log, logl, 1e-30, 1e30, 1e-6L);
  CHECK_UNARY(log2, log2l, 1e-30, 1e30, 1e-6L);
  CHECK_UNARY(log10, log10l, 1e-30, 1e30, 1e-6L);
  CHECK_UNARY(sin, sinl, -10.0, 10.0, 1e-7L);
  CHECK_UNARY(cos, cosl, -10.0, 10.0, 1e-7L);
  CHECK_UNARY(tan, tanl, -1.5, 1.5, 1e-7L);
  CHECK_UNARY(asin, asinl, -1.0, 1.0, 1e-7L);
  CHECK_UNARY(acos, acosl, -1.0, 1.0, 1e-7L);
  CHECK_UNARY(atan, atanl, -100.0, 100.0, 1e-7L);
  CHECK_UNARY(sinh, sinhl, -20.0, 20.0, 1e-7L);
  CHECK_UNARY(cosh, coshl, -20.0, 20.0, 0.0L);
  CHECK_UNARY(tanh, tanhl, -10.0, 10.0, 1e-7L);
  CHECK_UNARY(floor, floorl, -1e5, 1e5, 0.0L);
  CHECK_UNARY(ceil, ceill, -1e5, 1e5, 0.0L);
  CHECK_UNARY(round, roundl, -1e5, 1e5, 0.0L);
  CHECK_UNARY(trunc, truncl, -1e5, 1e5, 0.0L);
  CHECK_UNARY(abs, fabsl, -1e5, 1e5, 0.0L);
}

Test(math, rounding_halfway_and_specials) {
  cr_assert_eq(kn_round_f32(2.5f), 3.0f);
  cr_assert_eq(kn_round_f32(-2.5f), -3.0f);
  cr_assert_eq(kn_round_f64(0.5), 1.0);
  cr_assert_eq(kn_trunc_f32(-2.7f), -2.0f);
  cr_assert_eq(kn_floor_f32(-2.5f), -3.0f);
  cr_assert_eq(kn_ceil_f64(-2.5), -2.0);
  cr_assert(isnan(kn_sqrt_f32(-1.0f)));
  cr_assert(isinf(kn_rsqrt_f32(0.0f)));
  cr_assert_eq(kn_rsqrt_f32(4.0f), 0.5f);
  cr_assert_eq(kn_abs_f32(-0.0f), 0.0f);
  cr_assert(!signbit(kn_abs_f32(-0.0f)));
}

/* Binary functions: pow on positive bases, atan2 everywhere, fmod exact. */
Test(math, binary_functions) {
  for (int i = 0; i < 500; i++) {
    float a = (float)urand(0.01, 10.0), b = (float)urand(-5.0, 5.0);
    double c = urand(-100.0, 100.0), d = urand(-100.0, 100.0);
    cr_assert(near(kn_pow_f32_f32(a, b), powl(a, b), F32_REL, 0.0L));
    cr_assert(near(kn_pow_f64_f64(a, b), powl(a, b), F64_REL, 0.0L));
    cr_assert(
        near(kn_atan2_f32_f32((float)c, (float)d), atan2l((float)c, (float)d), F32_REL, 1e-7L));
    cr_assert(near(kn_atan2_f64_f64(c, d), atan2l(c, d), F64_REL, 1e-15L));
    cr_assert_eq(kn_fmod_f64_f64(c, d), (double)fmodl(c, d));
    cr_assert_eq(kn_fmod_f32_f32((float)c, (float)d), (float)fmodl((float)c, (float)d));
    kn_vec3 p = kn_pow_v3_v3((kn_vec3){a, 2.0f, 9.0f}, (kn_vec3){b, 10.0f, 0.5f});
    cr_assert(near(p.x, powl(a, b), F32_REL, 0.0L) && p.y == 1024.0f && p.z == 3.0f);
    kn_dvec2 q = kn_atan2_dv2_dv2((kn_dvec2){c, 1.0}, (kn_dvec2){d, 0.0});
    cr_assert(near(q.x, atan2l(c, d), F64_REL, 1e-15L) && near(q.y, acosl(0.0L), F64_REL, 0.0L));
    kn_vec4 m =
        kn_fmod_v4_v4((kn_vec4){7.5f, -7.5f, 1.0f, 5.0f}, (kn_vec4){2.0f, 2.0f, 3.0f, 5.0f});
    cr_assert(m.x == 1.5f && m.y == -1.5f && m.z == 1.0f && m.w == 0.0f);
  }
}

Test(math, abs_sign_int_and_float) {
  cr_assert_eq(kn_abs_i32(-5), 5);
  cr_assert_eq(kn_abs_i32(INT32_MIN), INT32_MIN);
  cr_assert_eq(kn_abs_i64(-((int64_t)1 << 40)), (int64_t)1 << 40);
  cr_assert_eq(kn_abs_i64(INT64_MIN), INT64_MIN);
  cr_assert_eq(kn_sign_i32(-7), -1);
  cr_assert_eq(kn_sign_i32(0), 0);
  cr_assert_eq(kn_sign_i64(INT64_MAX), 1);
  cr_assert_eq(kn_sign_f32(-3.5f), -1.0f);
  cr_assert_eq(kn_sign_f64(1e-300), 1.0);
  cr_assert(signbit(kn_sign_f32(-0.0f)) && kn_sign_f32(-0.0f) == 0.0f);
  cr_assert(isnan(kn_sign_f64(NAN)));
  kn_ivec3 a = kn_abs_iv3((kn_ivec3){-1, 2, INT32_MIN});
  cr_assert(a.x == 1 && a.y == 2 && a.z == INT32_MIN);
  kn_ivec4 s = kn_sign_iv4((kn_ivec4){-9, 0, 9, INT32_MIN});
  cr_assert(s.x == -1 && s.y == 0 && s.z == 1 && s.w == -1);
  kn_dvec3 d = kn_sign_dv3((kn_dvec3){-2.0, 0.0, 0.25});
  cr_assert(d.x == -1.0 && d.y == 0.0 && d.z == 1.0);
  kn_vec2 f = kn_abs_v2((kn_vec2){-1.5f, 2.5f});
  cr_assert(f.x == 1.5f && f.y == 2.5f);
}

Test(math, min_max_clamp) {
  cr_assert_eq(kn_min_i32_i32(-3, 2), -3);
  cr_assert_eq(kn_max_i64_i64(INT64_MIN, -1), -1);
  cr_assert_eq(kn_min_u32_u32(0xffffffffu, 1u), 1u);
  cr_assert_eq(kn_max_u64_u64(1u, UINT64_MAX), UINT64_MAX);
  cr_assert_eq(kn_min_f32_f32(NAN, 1.0f), 1.0f);
  cr_assert_eq(kn_max_f64_f64(2.0, NAN), 2.0);
  cr_assert(isnan(kn_min_f32_f32(NAN, NAN)));
  cr_assert(signbit(kn_min_f32_f32(0.0f, -0.0f)) && signbit(kn_min_f32_f32(-0.0f, 0.0f)));
  cr_assert(!signbit(kn_max_f32_f32(0.0f, -0.0f)) && !signbit(kn_max_f32_f32(-0.0f, 0.0f)));
  cr_assert(signbit(kn_min_f64_f64(0.0, -0.0)) && !signbit(kn_max_f64_f64(-0.0, 0.0)));
  cr_assert_eq(kn_min_f64_f64(-INFINITY, 3.0), -INFINITY);
  cr_assert_eq(kn_max_f32_f32(-1.0f, -2.0f), -1.0f);
  cr_assert_eq(kn_clamp_i32_i32_i32(50, 0, 10), 10);
  cr_assert_eq(kn_clamp_u32_u32_u32(0u, 3u, 10u), 3u);
  cr_assert_eq(kn_clamp_i64_i64_i64(-50, -10, 10), -10);
  cr_assert_eq(kn_clamp_u64_u64_u64(7u, 3u, 10u), 7u);
  cr_assert_eq(kn_clamp_f32_f32_f32(1.5f, 0.0f, 1.0f), 1.0f);
  cr_assert_eq(kn_clamp_f64_f64_f64(-1.5, 0.0, 1.0), 0.0);
  cr_assert_eq(kn_clamp_f32_f32_f32(NAN, -1.0f, 1.0f), -1.0f);
  kn_vec3 a = kn_min_v3_v3((kn_vec3){1, 5, -2}, (kn_vec3){3, 4, -1});
  cr_assert(a.x == 1 && a.y == 4 && a.z == -2);
  kn_ivec2 b = kn_max_iv2_iv2((kn_ivec2){1, -5}, (kn_ivec2){-3, 4});
  cr_assert(b.x == 1 && b.y == 4);
  kn_dvec4 c = kn_clamp_dv4_dv4_dv4((kn_dvec4){-1, 0.5, 2, 9}, (kn_dvec4){0, 0, 0, 10},
                                    (kn_dvec4){1, 1, 1, 11});
  cr_assert(c.x == 0 && c.y == 0.5 && c.z == 1 && c.w == 10);
  kn_vec4 d = kn_clamp_v4_f32_f32((kn_vec4){-1, 0.5f, 2, 9}, 0.0f, 1.0f);
  cr_assert(d.x == 0 && d.y == 0.5f && d.z == 1 && d.w == 1);
  kn_ivec3 e = kn_clamp_iv3_i32_i32((kn_ivec3){-100, 5, 100}, -10, 10);
  cr_assert(e.x == -10 && e.y == 5 && e.z == 10);
}

Test(math, lerp_step_smoothstep) {
  cr_assert_eq(kn_lerp_f32_f32_f32(2.0f, 6.0f, 0.25f), 3.0f);
  cr_assert_eq(kn_lerp_f64_f64_f64(-1.0, 1.0, 1.0), 1.0);
  cr_assert_eq(kn_step_f32_f32(1.0f, 0.5f), 0.0f);
  cr_assert_eq(kn_step_f32_f32(1.0f, 1.0f), 1.0f);
  cr_assert_eq(kn_step_f64_f64(-1.0, 3.0), 1.0);
  for (int i = 0; i <= 100; i++) {
    double x = -0.5 + 2.0 * i / 100.0, t = x < 0 ? 0 : x > 1 ? 1 : x;
    double want = t * t * (3 - 2 * t);
    cr_assert(near(kn_smoothstep_f64_f64_f64(0.0, 1.0, x), want, 1e-15L, 1e-15L));
    cr_assert(
        near(kn_smoothstep_f32_f32_f32(10.0f, 20.0f, (float)(10 + 10 * x)), want, 1e-6L, 1e-6L));
  }
  kn_vec3 l = kn_lerp_v3_v3_f32((kn_vec3){0, 10, 20}, (kn_vec3){10, 20, 40}, 0.5f);
  cr_assert(l.x == 5 && l.y == 15 && l.z == 30);
  kn_dvec2 lv = kn_lerp_dv2_dv2_dv2((kn_dvec2){0, 0}, (kn_dvec2){8, 8}, (kn_dvec2){0.25, 0.75});
  cr_assert(lv.x == 2 && lv.y == 6);
  kn_vec4 s = kn_step_f32_v4(0.5f, (kn_vec4){0, 0.5f, 1, -1});
  cr_assert(s.x == 0 && s.y == 1 && s.z == 1 && s.w == 0);
  kn_vec2 s2 = kn_step_v2_v2((kn_vec2){1, 1}, (kn_vec2){0, 2});
  cr_assert(s2.x == 0 && s2.y == 1);
  kn_dvec3 ss = kn_smoothstep_f64_f64_dv3(0.0, 2.0, (kn_dvec3){-1, 1, 3});
  cr_assert(ss.x == 0 && ss.y == 0.5 && ss.z == 1);
  kn_vec2 sv = kn_smoothstep_v2_v2_v2((kn_vec2){0, 0}, (kn_vec2){1, 4}, (kn_vec2){0.5f, 1});
  cr_assert(sv.x == 0.5f && near(sv.y, 0.15625L, 1e-7L, 0));
}

Test(math, classification) {
  float fs[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MIN / 4, FLT_MAX, 1.0f};
  for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
    cr_assert_eq(kn_isnan_f32(fs[i]), isnan(fs[i]) != 0);
    cr_assert_eq(kn_isinf_f32(fs[i]), isinf(fs[i]) != 0);
    cr_assert_eq(kn_isfinite_f32(fs[i]), isfinite(fs[i]) != 0);
    double d = fs[i];
    cr_assert_eq(kn_isnan_f64(d), isnan(d) != 0);
    cr_assert_eq(kn_isinf_f64(d), isinf(d) != 0);
    cr_assert_eq(kn_isfinite_f64(d), isfinite(d) != 0);
  }
  cr_assert(kn_isnan_f32(bits_f32(0x7f800001u)) && kn_isnan_f32(bits_f32(0xffc00000u)));
  cr_assert(kn_isfinite_f64(DBL_MAX) && !kn_isfinite_f64(-INFINITY));
}

/* ===== integer semantics ================================================= */

Test(ints, division_and_remainder) {
  cr_assert_eq(kn_div_i32(7, 0), 0);
  cr_assert_eq(kn_mod_i32(7, 0), 7);
  cr_assert_eq(kn_div_i32(INT32_MIN, -1), INT32_MIN);
  cr_assert_eq(kn_mod_i32(INT32_MIN, -1), 0);
  cr_assert_eq(kn_div_i32(-7, 2), -3);
  cr_assert_eq(kn_mod_i32(-7, 2), -1);
  cr_assert_eq(kn_mod_i32(7, -2), 1);
  cr_assert_eq(kn_div_i32(5, -1), -5);
  cr_assert_eq(kn_div_i8(-128, -1), -128);
  cr_assert_eq(kn_mod_i8(-128, -1), 0);
  cr_assert_eq(kn_div_i8(-128, 0), 0);
  cr_assert_eq(kn_mod_i8(-100, 7), -2);
  cr_assert_eq(kn_div_i16(INT16_MIN, -1), INT16_MIN);
  cr_assert_eq(kn_div_i16(-300, 7), -42);
  cr_assert_eq(kn_div_i64(INT64_MIN, -1), INT64_MIN);
  cr_assert_eq(kn_mod_i64(INT64_MIN, -1), 0);
  cr_assert_eq(kn_div_i64(INT64_MAX, 0), 0);
  cr_assert_eq(kn_mod_i64(-9, 0), -9);
  cr_assert_eq(kn_div_u8(200, 3), 66);
  cr_assert_eq(kn_mod_u8(200, 0), 200);
  cr_assert_eq(kn_div_u16(65535, 0), 0);
  cr_assert_eq(kn_div_u32(7u, 0u), 0u);
  cr_assert_eq(kn_mod_u32(7u, 0u), 7u);
  cr_assert_eq(kn_div_u32(0xffffffffu, 2u), 0x7fffffffu);
  cr_assert_eq(kn_mod_u64(UINT64_MAX, 10u), 5u);
  cr_assert_eq(kn_div_u64(UINT64_MAX, 0u), 0u);
}

Test(ints, shifts) {
  cr_assert_eq(kn_shl_i32(1, 32), 1);
  cr_assert_eq(kn_shl_i32(1, 33), 2);
  cr_assert_eq(kn_shl_i32(1, -1), INT32_MIN);
  cr_assert_eq(kn_shl_i32(0x40000000, 1), INT32_MIN);
  cr_assert_eq(kn_shl_i32(-1, 31), INT32_MIN);
  cr_assert_eq(kn_shr_i32(-8, 1), -4);
  cr_assert_eq(kn_shr_i32(-1, 100), -1);
  cr_assert_eq(kn_shr_i32(INT32_MIN, 31), -1);
  cr_assert_eq(kn_shr_i32(256, 36), 16);
  cr_assert_eq(kn_shr_u32(0x80000000u, 31), 1u);
  cr_assert_eq(kn_shr_u32(0x80000000u, 32), 0x80000000u);
  cr_assert_eq(kn_shl_u32(3u, 31), 0x80000000u);
  cr_assert_eq(kn_shl_i8(1, 7), -128);
  cr_assert_eq(kn_shl_i8(1, 8), 1);
  cr_assert_eq(kn_shl_i8(3, 7), -128);
  cr_assert_eq(kn_shr_i8(-128, 7), -1);
  cr_assert_eq(kn_shr_i8(-128, 9), -64);
  cr_assert_eq(kn_shl_u8(0xff, 4), 0xf0);
  cr_assert_eq(kn_shr_u8(0x80, 15), 1);
  cr_assert_eq(kn_shl_i16(0x4000, 1), INT16_MIN);
  cr_assert_eq(kn_shr_i16(INT16_MIN, 16), INT16_MIN);
  cr_assert_eq(kn_shl_u16(0xffff, 15), 0x8000);
  cr_assert_eq(kn_shl_i64(1, 63), INT64_MIN);
  cr_assert_eq(kn_shl_i64(1, 64), 1);
  cr_assert_eq(kn_shl_i64(5, -64), 5);
  cr_assert_eq(kn_shr_i64(INT64_MIN, 63), -1);
  cr_assert_eq(kn_shr_u64(UINT64_MAX, 63), 1u);
  cr_assert_eq(kn_shl_u64(1u, 127), (uint64_t)1 << 63);
}

Test(ints, float_to_int_saturation) {
  cr_assert_eq(kn_cvt_f32_i32(NAN), 0);
  cr_assert_eq(kn_cvt_f32_i32(INFINITY), INT32_MAX);
  cr_assert_eq(kn_cvt_f32_i32(-INFINITY), INT32_MIN);
  cr_assert_eq(kn_cvt_f32_i32(1e10f), INT32_MAX);
  cr_assert_eq(kn_cvt_f32_i32(-1e10f), INT32_MIN);
  cr_assert_eq(kn_cvt_f32_i32(2147483520.0f), 2147483520);
  cr_assert_eq(kn_cvt_f32_i32(2147483648.0f), INT32_MAX);
  cr_assert_eq(kn_cvt_f32_i32(-2147483648.0f), INT32_MIN);
  cr_assert_eq(kn_cvt_f32_i32(-2.7f), -2);
  cr_assert_eq(kn_cvt_f32_i32(2.7f), 2);
  cr_assert_eq(kn_cvt_f64_i32(2147483647.9), INT32_MAX);
  cr_assert_eq(kn_cvt_f64_i32(-2147483648.9), INT32_MIN);
  cr_assert_eq(kn_cvt_f64_i32(-2147483647.5), -2147483647);
  cr_assert_eq(kn_cvt_f64_i8(127.9), 127);
  cr_assert_eq(kn_cvt_f64_i8(128.0), 127);
  cr_assert_eq(kn_cvt_f64_i8(-128.9), -128);
  cr_assert_eq(kn_cvt_f32_i8(-1000.0f), -128);
  cr_assert_eq(kn_cvt_f32_i16(40000.0f), INT16_MAX);
  cr_assert_eq(kn_cvt_f32_i16(-32768.5f), INT16_MIN);
  cr_assert_eq(kn_cvt_f32_u8(255.9f), 255);
  cr_assert_eq(kn_cvt_f32_u8(256.0f), 255);
  cr_assert_eq(kn_cvt_f32_u8(-0.5f), 0);
  cr_assert_eq(kn_cvt_f32_u8(-1.0f), 0);
  cr_assert_eq(kn_cvt_f32_u8(NAN), 0);
  cr_assert_eq(kn_cvt_f64_u16(65535.99), 65535);
  cr_assert_eq(kn_cvt_f64_u32(-INFINITY), 0u);
  cr_assert_eq(kn_cvt_f64_u32(4294967295.5), 4294967295u);
  cr_assert_eq(kn_cvt_f64_u32(5e9), 4294967295u);
  cr_assert_eq(kn_cvt_f32_u64(INFINITY), UINT64_MAX);
  cr_assert_eq(kn_cvt_f32_u64(1.8446744e19f), UINT64_MAX);
  cr_assert_eq(kn_cvt_f64_u64(18446744073709549568.0), 18446744073709549568ull);
  cr_assert_eq(kn_cvt_f64_u64(NAN), 0u);
  cr_assert_eq(kn_cvt_f64_i64(9.3e18), INT64_MAX);
  cr_assert_eq(kn_cvt_f64_i64(-9.3e18), INT64_MIN);
  cr_assert_eq(kn_cvt_f64_i64(-9223372036854775808.0), INT64_MIN);
  cr_assert_eq(kn_cvt_f64_i64(9223372036854774784.0), 9223372036854774784ll);
  cr_assert_eq(kn_cvt_f32_i64(NAN), 0);
  kn_f16 h300 = {0x5cb0}, hninf = {0xfc00}, hnan = {0x7e00},
         hm2 = {0xc100}; /* 300, -inf, NaN, -2.5 */
  cr_assert_eq(kn_cvt_f16_i8(h300), 127);
  cr_assert_eq(kn_cvt_f16_u8(h300), 255);
  cr_assert_eq(kn_cvt_f16_i32(h300), 300);
  cr_assert_eq(kn_cvt_f16_i64(hninf), INT64_MIN);
  cr_assert_eq(kn_cvt_f16_u32(hninf), 0u);
  cr_assert_eq(kn_cvt_f16_i16(hnan), 0);
  cr_assert_eq(kn_cvt_f16_i16(hm2), -2);
  cr_assert_eq(kn_cvt_f16_u64(hm2), 0u);
  cr_assert_eq(kn_cvt_i32_f16(300).bits, 0x5cb0);
  cr_assert_eq(kn_cvt_i64_f16(100000).bits, 0x7c00);
  cr_assert_eq(kn_cvt_u16_f16(65535).bits, 0x7c00);
  cr_assert_eq(kn_cvt_i8_f16(-128).bits, 0xd800);
}

/* ===== float16 =========================================================== */

/* Decodes binary16 from its definition, independently of the header. */
static double f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double mag = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -mag : mag;
}

/* Nearest binary16 by search over every finite value; ties to the even pattern. */
static uint16_t f16_nearest(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (isnan(x)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  int lo = 0, hi = 0x7bff; /* positive patterns are monotonic in value */
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (f16_value((uint16_t)mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0x7bff) return sign | 0x7bff;
  double d0 = a - f16_value((uint16_t)lo), d1 = f16_value((uint16_t)(lo + 1)) - a;
  int pick = d0 < d1 ? lo : d1 < d0 ? lo + 1 : (lo & 1 ? lo + 1 : lo);
  return sign | (uint16_t)pick;
}

Test(f16, known_patterns) {
  struct {
    float f;
    uint16_t h;
  } cases[] = {{1.0f, 0x3c00},
               {-2.0f, 0xc000},
               {65504.0f, 0x7bff},
               {65519.99f, 0x7bff},
               {65520.0f, 0x7c00},
               {1e9f, 0x7c00},
               {INFINITY, 0x7c00},
               {-INFINITY, 0xfc00},
               {0.0f, 0x0000},
               {-0.0f, 0x8000},
               {0x1p-24f, 0x0001},
               {0x1p-25f, 0x0000},
               {-0x1p-25f, 0x8000},
               {0x1.000002p-25f, 0x0001},
               {0x3p-25f, 0x0002},
               {0x1p-14f, 0x0400},
               {0x1.ffcp-15f, 0x0400},
               {0x1.ff4p-15f, 0x03fe},
               {1.0f + 0x1p-11f, 0x3c00},
               {1.0f + 0x3p-11f, 0x3c02},
               {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},
               {0.1f, 0x2e66},
               {1e-10f, 0x0000},
               {FLT_MIN, 0x0000}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cr_assert_eq(kn_cvt_f32_f16(cases[i].f).bits, cases[i].h, "%a -> %04x", cases[i].f,
                 kn_cvt_f32_f16(cases[i].f).bits);
    cr_assert_eq(kn_cvt_f64_f16(cases[i].f).bits, cases[i].h, "%a (double)", cases[i].f);
  }
  /* NaNs stay NaNs, quiet, with the sign and the top payload bits. */
  cr_assert_eq(kn_cvt_f32_f16(bits_f32(0x7fc00000u)).bits, 0x7e00);
  cr_assert_eq(kn_cvt_f32_f16(bits_f32(0xff800001u)).bits, 0xfe00);
  cr_assert_eq(kn_cvt_f32_f16(bits_f32(0x7fa02000u)).bits, 0x7f01);
  cr_assert_eq(kn_cvt_f64_f16(-NAN).bits & 0xfe00, 0xfe00);
}

Test(f16, decode_every_pattern_and_round_trip) {
  for (int h = 0; h < 0x10000; h++) {
    kn_f16 x = {(uint16_t)h};
    double want = f16_value((uint16_t)h);
    float f = kn_cvt_f16_f32(x);
    double d = kn_cvt_f16_f64(x);
    if (isnan(want)) {
      cr_assert(isnan(f) && isnan(d) && !!signbit(f) == !!(h & 0x8000));
      cr_assert_eq(kn_cvt_f32_f16(f).bits, h | 0x200, "NaN %04x", h); /* quieted */
      cr_assert_eq(kn_cvt_f64_f16(d).bits, h | 0x200);
      continue;
    }
    cr_assert(f == want && d == want && !!signbit(f) == !!signbit(want), "decode %04x", h);
    cr_assert_eq(kn_cvt_f32_f16(f).bits, h, "round trip %04x", h);
    cr_assert_eq(kn_cvt_f64_f16(d).bits, h, "round trip %04x (double)", h);
  }
}

/* Every midpoint between neighbours (a tie), and a hair on either side. */
Test(f16, ties_and_neighbours_against_brute_force) {
  for (int h = 0; h < 0x7bff; h++) {
    double a = f16_value((uint16_t)h), b = f16_value((uint16_t)(h + 1)), mid = (a + b) / 2;
    float fm = (float)mid;
    cr_assert_eq((double)fm, mid);
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
    cr_assert_eq(kn_cvt_f32_f16(fm).bits, even, "tie after %04x", h);
    cr_assert_eq(kn_cvt_f64_f16(-mid).bits, 0x8000 | even);
    cr_assert_eq(kn_cvt_f32_f16(nextafterf(fm, 0)).bits, h);
    cr_assert_eq(kn_cvt_f32_f16(nextafterf(fm, INFINITY)).bits, h + 1);
    /* just above a tie in double: a float conversion first would round to the tie */
    cr_assert_eq(kn_cvt_f64_f16(nextafter(mid, INFINITY)).bits, h + 1, "double above tie %04x", h);
    cr_assert_eq(kn_cvt_f64_f16(nextafter(mid, 0)).bits, h);
  }
  for (int i = 0; i < 200000; i++) {
    double x = ldexp(urand(-1.0, 1.0), (int)urand(-28, 18));
    cr_assert_eq(kn_cvt_f64_f16(x).bits, f16_nearest(x), "%a", x);
    cr_assert_eq(kn_cvt_f32_f16((float)x).bits, f16_nearest((float)x), "%a", (float)x);
  }
}

/* ===== vectors =========================================================== */

Test(vectors, constructors_and_access) {
  kn_vec3 v = kn_make_v3(1, 2, 3);
  cr_assert(v.x == 1 && v.y == 2 && v.z == 3);
  kn_dvec4 d = kn_splat_dv4(2.5);
  cr_assert(d.x == 2.5 && d.y == 2.5 && d.z == 2.5 && d.w == 2.5);
  kn_ivec2 z = kn_zero_iv2();
  cr_assert(z.x == 0 && z.y == 0);
  kn_ivec4 iv = kn_make_iv4(4, 5, 6, 7);
  cr_assert_eq(kn_get_iv4(iv, 0), 4);
  cr_assert_eq(kn_get_iv4(iv, 3), 7);
  cr_assert_eq(kn_get_iv4(iv, 9), 7); /* clamped */
  cr_assert_eq(kn_get_iv4(iv, -2), 4);
  cr_assert_eq(kn_get_v3(v, 1), 2.0f);
  *kn_getp_v3(&v, 2) = 9.0f;
  cr_assert_eq(v.z, 9.0f);
  kn_dvec2 d2 = kn_make_dv2(1, 2);
  *kn_getp_dv2(&d2, 1) += 1.0;
  cr_assert_eq(d2.y, 3.0);
  cr_assert_eq(sizeof(kn_vec3), 12u);
  cr_assert_eq(sizeof(kn_dvec3), 24u);
  cr_assert_eq(sizeof(kn_mat33), 36u);
  cr_assert_eq(_Alignof(kn_vec3), 4u);
  cr_assert_eq(_Alignof(kn_dvec2), 8u);
  kn_ivec3 c = kn_cvt_v3_iv3((kn_vec3){-2.7f, 1e20f, NAN});
  cr_assert(c.x == -2 && c.y == INT32_MAX && c.z == 0);
  kn_dvec3 e = kn_cvt_iv3_dv3((kn_ivec3){-1, 2, 3});
  cr_assert(e.x == -1.0 && e.y == 2.0 && e.z == 3.0);
  kn_vec2 f = kn_cvt_dv2_v2((kn_dvec2){0.1, 1e300});
  cr_assert(f.x == 0.1f && isinf(f.y));
}

Test(vectors, arithmetic_operators) {
  kn_vec3 a = {1, 2, 3}, b = {4, 6, 8};
  kn_vec3 r = kn_add_v3_v3(a, b);
  cr_assert(r.x == 5 && r.y == 8 && r.z == 11);
  r = kn_sub_v3_v3(a, b);
  cr_assert(r.x == -3 && r.y == -4 && r.z == -5);
  r = kn_mul_v3_v3(a, b);
  cr_assert(r.x == 4 && r.y == 12 && r.z == 24);
  r = kn_div_v3_v3(b, a);
  cr_assert(r.x == 4 && r.y == 3 && near(r.z, 8.0L / 3, F32_REL, 0));
  r = kn_mul_v3_f32(a, 2);
  cr_assert(r.x == 2 && r.y == 4 && r.z == 6);
  r = kn_mul_f32_v3(-1, a);
  cr_assert(r.x == -1 && r.y == -2 && r.z == -3);
  r = kn_div_v3_f32(b, 2);
  cr_assert(r.x == 2 && r.y == 3 && r.z == 4);
  r = kn_neg_v3(a);
  cr_assert(r.x == -1 && r.y == -2 && r.z == -3);
  kn_dvec4 d = kn_add_dv4_dv4((kn_dvec4){1, 2, 3, 4}, (kn_dvec4){0.5, 0.5, 0.5, 0.5});
  cr_assert(d.x == 1.5 && d.w == 4.5);
  d = kn_div_dv4_f64(d, 0.5);
  cr_assert(d.x == 3 && d.w == 9);
  kn_vec2 v2 = kn_mul_f32_v2(3, kn_sub_v2_v2((kn_vec2){1, 1}, (kn_vec2){2, 0}));
  cr_assert(v2.x == -3 && v2.y == 3);
  kn_vec4 v4 = kn_div_v4_v4((kn_vec4){1, -1, 0, 1}, (kn_vec4){0, 0, 0, 4});
  cr_assert(isinf(v4.x) && v4.x > 0 && isinf(v4.y) && v4.y < 0 && isnan(v4.z) && v4.w == 0.25f);
}

Test(vectors, integer_vector_semantics) {
  kn_ivec3 a = {INT32_MAX, INT32_MIN, 7}, b = {1, -1, 0};
  kn_ivec3 r = kn_add_iv3_iv3(a, b);
  cr_assert(r.x == INT32_MIN && r.y == INT32_MAX && r.z == 7);
  r = kn_div_iv3_iv3(a, b);
  cr_assert(r.x == INT32_MAX && r.y == INT32_MIN && r.z == 0);
  r = kn_div_iv3_i32((kn_ivec3){7, -7, 0}, 2);
  cr_assert(r.x == 3 && r.y == -3 && r.z == 0);
  r = kn_div_iv3_i32(a, 0);
  cr_assert(r.x == 0 && r.y == 0 && r.z == 0);
  r = kn_neg_iv3(a);
  cr_assert(r.x == -INT32_MAX && r.y == INT32_MIN && r.z == -7);
  r = kn_mul_iv3_i32(a, 2);
  cr_assert(r.x == -2 && r.y == 0 && r.z == 14);
  r = kn_mul_i32_iv3(3, (kn_ivec3){1, 2, 3});
  cr_assert(r.x == 3 && r.y == 6 && r.z == 9);
  kn_ivec2 s = kn_sub_iv2_iv2((kn_ivec2){INT32_MIN, 0}, (kn_ivec2){1, 1});
  cr_assert(s.x == INT32_MAX && s.y == -1);
  kn_ivec4 m = kn_mul_iv4_iv4((kn_ivec4){65536, 3, -4, 5}, (kn_ivec4){65536, 3, 4, -5});
  cr_assert(m.x == 0 && m.y == 9 && m.z == -16 && m.w == -25);
}

Test(vectors, equality) {
  cr_assert(kn_eq_v3_v3((kn_vec3){0.0f, 1, 2}, (kn_vec3){-0.0f, 1, 2}));
  cr_assert(!kn_eq_v3_v3((kn_vec3){NAN, 1, 2}, (kn_vec3){NAN, 1, 2}));
  cr_assert(kn_ne_v3_v3((kn_vec3){1, 2, 3}, (kn_vec3){1, 2, 4}));
  cr_assert(!kn_ne_dv2_dv2((kn_dvec2){1, 2}, (kn_dvec2){1, 2}));
  cr_assert(kn_eq_iv4_iv4((kn_ivec4){1, 2, 3, 4}, (kn_ivec4){1, 2, 3, 4}));
  cr_assert(!kn_eq_iv4_iv4((kn_ivec4){1, 2, 3, 4}, (kn_ivec4){1, 2, 3, 5}));
  cr_assert(kn_ne_v2_v2((kn_vec2){1, 2}, (kn_vec2){0, 2}));
  cr_assert(kn_eq_m22_m22(kn_make_m22(1, 2, 3, 4), kn_make_m22(1, 2, 3, 4)));
  cr_assert(kn_ne_m33_m33(kn_identity_m33(), kn_zero_m33()));
  kn_mat44 m = kn_identity_m44();
  cr_assert(kn_eq_m44_m44(m, kn_diag_m44(1)));
  m.m[3][2] = 0.5f;
  cr_assert(kn_ne_m44_m44(m, kn_identity_m44()));
  cr_assert(kn_eq_q_q(kn_make_q(1, 2, 3, 4), kn_make_q(1, 2, 3, 4)));
  cr_assert(kn_ne_q_q(kn_make_q(1, 2, 3, 4), kn_make_q(1, 2, 3, 5)));
}

Test(geometry, dot_cross_length) {
  cr_assert_eq(kn_dot_v3_v3((kn_vec3){1, 2, 3}, (kn_vec3){4, 5, 6}), 32.0f);
  cr_assert_eq(kn_dot_v2_v2((kn_vec2){1, 2}, (kn_vec2){3, -4}), -5.0f);
  cr_assert_eq(kn_dot_v4_v4((kn_vec4){1, 1, 1, 1}, (kn_vec4){1, 2, 3, 4}), 10.0f);
  cr_assert_eq(kn_dot_dv3_dv3((kn_dvec3){0.5, 0.25, 2}, (kn_dvec3){2, 4, 0.5}), 3.0);
  cr_assert_eq(kn_dot_dv2_dv2((kn_dvec2){1, 2}, (kn_dvec2){3, 4}), 11.0);
  cr_assert_eq(kn_dot_dv4_dv4((kn_dvec4){1, 2, 3, 4}, (kn_dvec4){1, 1, 1, -1}), 2.0);
  cr_assert_eq(kn_dot_iv3_iv3((kn_ivec3){INT32_MAX, 1, 0}, (kn_ivec3){2, 0, 5}), -2);
  cr_assert_eq(kn_dot_iv2_iv2((kn_ivec2){3, 4}, (kn_ivec2){-1, 2}), 5);
  cr_assert_eq(kn_dot_iv4_iv4((kn_ivec4){1, 2, 3, 4}, (kn_ivec4){4, 3, 2, 1}), 20);
  kn_vec3 c = kn_cross_v3_v3((kn_vec3){1, 2, 3}, (kn_vec3){4, 5, 6});
  cr_assert(c.x == -3 && c.y == 6 && c.z == -3);
  c = kn_cross_v3_v3((kn_vec3){1, 0, 0}, (kn_vec3){0, 1, 0});
  cr_assert(c.x == 0 && c.y == 0 && c.z == 1);
  kn_dvec3 cd = kn_cross_dv3_dv3((kn_dvec3){0, 1, 0}, (kn_dvec3){1, 0, 0});
  cr_assert(cd.x == 0 && cd.y == 0 && cd.z == -1);
  kn_ivec3 ci = kn_cross_iv3_iv3((kn_ivec3){1, 2, 3}, (kn_ivec3){4, 5, 6});
  cr_assert(ci.x == -3 && ci.y == 6 && ci.z == -3);
  cr_assert_eq(kn_length_v2((kn_vec2){3, 4}), 5.0f);
  cr_assert_eq(kn_length_sq_v3((kn_vec3){1, 2, 2}), 9.0f);
  cr_assert_eq(kn_length_dv4((kn_dvec4){1, 1, 1, 1}), 2.0);
  cr_assert_eq(kn_length_sq_dv2((kn_dvec2){3, 4}), 25.0);
  cr_assert_eq(kn_distance_v2_v2((kn_vec2){1, 1}, (kn_vec2){4, 5}), 5.0f);
  cr_assert_eq(kn_distance_dv3_dv3((kn_dvec3){1, 2, 3}, (kn_dvec3){1, 2, 3}), 0.0);
  kn_vec2 n = kn_normalize_v2((kn_vec2){3, 4});
  cr_assert(near(n.x, 0.6L, F32_REL, 0) && near(n.y, 0.8L, F32_REL, 0));
  kn_vec3 z = kn_normalize_v3((kn_vec3){0, 0, 0});
  cr_assert(z.x == 0 && z.y == 0 && z.z == 0);
  kn_dvec4 z4 = kn_normalize_dv4((kn_dvec4){0, 0, 0, 0});
  cr_assert(z4.x == 0 && z4.w == 0);
  for (int i = 0; i < 100; i++) {
    kn_dvec3 v = {urand(-5, 5), urand(-5, 5), urand(-5, 5)};
    long double len =
        sqrtl((long double)v.x * v.x + (long double)v.y * v.y + (long double)v.z * v.z);
    cr_assert(near(kn_length_dv3(v), len, F64_REL, 0));
    kn_dvec3 u = kn_normalize_dv3(v);
    cr_assert(near(u.x, v.x / len, F64_REL, 1e-16L) && near(u.z, v.z / len, F64_REL, 1e-16L));
    kn_vec4 f = {(float)v.x, (float)v.y, (float)v.z, 1.0f};
    long double lf =
        sqrtl((long double)f.x * f.x + (long double)f.y * f.y + (long double)f.z * f.z + 1);
    cr_assert(near(kn_length_v4(f), lf, F32_REL, 0));
  }
}

/* ===== matrices ========================================================== */

/* Reference linear algebra in double on row-major n x n arrays. */
static void ref_matmul(int n, const double *a, const double *b, double *out) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      out[i * n + j] = s;
    }
}

/* Gauss-Jordan with partial pivoting; returns the determinant. */
static double ref_inverse(int n, const double *a, double *inv) {
  double m[4][8], det = 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n; j++) m[i][j] = j < n ? a[i * n + j] : (j - n == i);
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(m[r][c]) > fabs(m[p][c])) p = r;
    if (p != c) {
      det = -det;
      for (int j = 0; j < 2 * n; j++) {
        double t = m[c][j];
        m[c][j] = m[p][j];
        m[p][j] = t;
      }
    }
    det *= m[c][c];
    if (m[c][c] == 0) return 0;
    double d = m[c][c];
    for (int j = 0; j < 2 * n; j++) m[c][j] /= d;
    for (int r = 0; r < n; r++) {
      if (r == c) continue;
      double f = m[r][c];
      for (int j = 0; j < 2 * n; j++) m[r][j] -= f * m[c][j];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) inv[i * n + j] = m[i][n + j];
  return det;
}

static void to_double(int n, const float *m, double *out) {
  for (int i = 0; i < n * n; i++) out[i] = m[i];
}

Test(matrices, construct_and_access) {
  kn_mat33 m = kn_make_m33(1, 2, 3, 4, 5, 6, 7, 8, 9);
  cr_assert(m.m[0][2] == 3 && m.m[1][0] == 4 && m.m[2][1] == 8);
  kn_mat33 r = kn_make_m33_rows((kn_vec3){1, 2, 3}, (kn_vec3){4, 5, 6}, (kn_vec3){7, 8, 9});
  cr_assert(kn_eq_m33_m33(m, r));
  kn_vec3 row = kn_get_m33_row(m, 1);
  cr_assert(row.x == 4 && row.y == 5 && row.z == 6);
  row = kn_get_m33_row(m, 7);
  cr_assert(row.x == 7 && row.z == 9);
  cr_assert_eq(kn_get_m33(m, 2, 0), 7.0f);
  *kn_getp_m33(&m, 0, 0) = -1;
  cr_assert_eq(m.m[0][0], -1.0f);
  kn_set_m33_row(&m, 2, (kn_vec3){0, 0, 1});
  cr_assert(m.m[2][0] == 0 && m.m[2][2] == 1);
  kn_mat22 d = kn_diag_m22(3);
  cr_assert(d.m[0][0] == 3 && d.m[0][1] == 0 && d.m[1][0] == 0 && d.m[1][1] == 3);
  kn_mat44 id = kn_identity_m44();
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) cr_assert_eq(id.m[i][j], i == j ? 1.0f : 0.0f);
  kn_mat44 rows = kn_make_m44_rows((kn_vec4){1, 2, 3, 4}, (kn_vec4){5, 6, 7, 8},
                                   (kn_vec4){9, 10, 11, 12}, (kn_vec4){13, 14, 15, 16});
  cr_assert(rows.m[0][3] == 4 && rows.m[3][0] == 13 && rows.m[2][1] == 10);
  kn_vec4 r4 = kn_get_m44_row(rows, 3);
  cr_assert(r4.x == 13 && r4.w == 16);
  kn_mat22 mr = kn_make_m22_rows((kn_vec2){1, 2}, (kn_vec2){3, 4});
  cr_assert(kn_eq_m22_m22(mr, kn_make_m22(1, 2, 3, 4)));
  kn_mat33 z = kn_zero_m33();
  for (int i = 0; i < 9; i++) cr_assert_eq((&z.m[0][0])[i], 0.0f);
}

Test(matrices, products_against_reference) {
  kn_mat22 p = kn_mul_m22_m22(kn_make_m22(1, 2, 3, 4), kn_make_m22(5, 6, 7, 8));
  cr_assert(p.m[0][0] == 19 && p.m[0][1] == 22 && p.m[1][0] == 43 && p.m[1][1] == 50);
  kn_vec2 v = kn_mul_m22_v2(kn_make_m22(1, 2, 3, 4), (kn_vec2){5, 6});
  cr_assert(v.x == 17 && v.y == 39);
  for (int t = 0; t < 50; t++) {
    kn_mat33 a, b;
    kn_mat44 c, d;
    for (int i = 0; i < 9; i++)
      (&a.m[0][0])[i] = (float)(int)urand(-9, 9), (&b.m[0][0])[i] = (float)(int)urand(-9, 9);
    for (int i = 0; i < 16; i++)
      (&c.m[0][0])[i] = (float)(int)urand(-9, 9), (&d.m[0][0])[i] = (float)(int)urand(-9, 9);
    double ad[9], bd[9], cd[16], dd[16], o3[9], o4[16];
    to_double(3, &a.m[0][0], ad), to_double(3, &b.m[0][0], bd);
    to_double(4, &c.m[0][0], cd), to_double(4, &d.m[0][0], dd);
    ref_matmul(3, ad, bd, o3), ref_matmul(4, cd, dd, o4);
    kn_mat33 ab = kn_mul_m33_m33(a, b);
    kn_mat44 cdm = kn_mul_m44_m44(c, d);
    for (int i = 0; i < 9; i++) cr_assert_eq((&ab.m[0][0])[i], o3[i]);
    for (int i = 0; i < 16; i++) cr_assert_eq((&cdm.m[0][0])[i], o4[i]);
    kn_vec3 x = {1, -2, 3};
    kn_vec3 y = kn_mul_m33_v3(a, x);
    cr_assert(y.x == ad[0] - 2 * ad[1] + 3 * ad[2] && y.z == ad[6] - 2 * ad[7] + 3 * ad[8]);
    kn_vec4 x4 = {1, 2, 3, 4};
    kn_vec4 y4 = kn_mul_m44_v4(c, x4);
    cr_assert(y4.y == cd[4] + 2 * cd[5] + 3 * cd[6] + 4 * cd[7]);
    cr_assert(y4.w == cd[12] + 2 * cd[13] + 3 * cd[14] + 4 * cd[15]);
    kn_mat33 tr = kn_transpose_m33(a);
    kn_mat44 tr4 = kn_transpose_m44(c);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) cr_assert_eq(tr.m[i][j], a.m[j][i]);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) cr_assert_eq(tr4.m[i][j], c.m[j][i]);
  }
  kn_mat22 t2 = kn_transpose_m22(kn_make_m22(1, 2, 3, 4));
  cr_assert(kn_eq_m22_m22(t2, kn_make_m22(1, 3, 2, 4)));
}

Test(matrices, elementwise_and_scalar) {
  kn_mat22 a = kn_make_m22(1, 2, 3, 4), b = kn_make_m22(10, 20, 30, 40);
  cr_assert(kn_eq_m22_m22(kn_add_m22_m22(a, b), kn_make_m22(11, 22, 33, 44)));
  cr_assert(kn_eq_m22_m22(kn_sub_m22_m22(a, b), kn_make_m22(-9, -18, -27, -36)));
  cr_assert(kn_eq_m22_m22(kn_mul_m22_f32(a, 2), kn_make_m22(2, 4, 6, 8)));
  cr_assert(kn_eq_m22_m22(kn_mul_f32_m22(-1, a), kn_make_m22(-1, -2, -3, -4)));
  cr_assert(kn_eq_m22_m22(kn_div_m22_f32(b, 10), kn_make_m22(1, 2, 3, 4)));
  cr_assert(kn_eq_m22_m22(kn_neg_m22(a), kn_make_m22(-1, -2, -3, -4)));
  kn_mat33 m = kn_add_m33_m33(kn_identity_m33(), kn_diag_m33(2));
  cr_assert(m.m[1][1] == 3 && m.m[0][1] == 0);
  m = kn_mul_m33_f32(kn_sub_m33_m33(m, kn_identity_m33()), 0.5f);
  cr_assert(kn_eq_m33_m33(m, kn_identity_m33()));
  kn_mat44 q = kn_neg_m44(kn_mul_f32_m44(2, kn_identity_m44()));
  cr_assert(q.m[2][2] == -2 && q.m[2][3] == 0);
  q = kn_div_m44_f32(kn_add_m44_m44(q, kn_sub_m44_m44(q, q)), -2);
  cr_assert(kn_eq_m44_m44(q, kn_identity_m44()));
  kn_mat33 n = kn_neg_m33(kn_div_m33_f32(kn_mul_f32_m33(3, kn_identity_m33()), 3));
  cr_assert(n.m[0][0] == -1 && n.m[2][2] == -1);
  kn_mat33 o = kn_outer_v3_v3((kn_vec3){1, 2, 3}, (kn_vec3){4, 5, 6});
  cr_assert(kn_eq_m33_m33(o, kn_make_m33(4, 5, 6, 8, 10, 12, 12, 15, 18)));
  kn_mat22 o2 = kn_outer_v2_v2((kn_vec2){1, -1}, (kn_vec2){2, 3});
  cr_assert(kn_eq_m22_m22(o2, kn_make_m22(2, 3, -2, -3)));
  kn_mat44 o4 = kn_outer_v4_v4((kn_vec4){1, 2, 3, 4}, (kn_vec4){1, 0, 0, 2});
  cr_assert(o4.m[3][3] == 8 && o4.m[2][0] == 3 && o4.m[1][1] == 0);
}

Test(matrices, determinant_and_inverse) {
  cr_assert_eq(kn_determinant_m22(kn_make_m22(4, 7, 2, 6)), 10.0f);
  cr_assert_eq(kn_determinant_m33(kn_make_m33(2, -3, 1, 2, 0, -1, 1, 4, 5)), 49.0f);
  cr_assert_eq(kn_determinant_m44(kn_make_m44(1, 0, 2, -1, 3, 0, 0, 5, 2, 1, 4, -3, 1, 0, 5, 0)),
               30.0f);
  kn_mat22 i2 = kn_inverse_m22(kn_make_m22(4, 7, 2, 6));
  cr_assert(near(i2.m[0][0], 0.6L, F32_REL, 0) && near(i2.m[0][1], -0.7L, F32_REL, 0));
  cr_assert(near(i2.m[1][0], -0.2L, F32_REL, 0) && near(i2.m[1][1], 0.4L, F32_REL, 0));
  cr_assert(kn_eq_m22_m22(kn_inverse_m22(kn_make_m22(1, 2, 2, 4)), kn_zero_m22()));
  cr_assert(kn_eq_m33_m33(kn_inverse_m33(kn_make_m33(1, 2, 3, 4, 5, 6, 7, 8, 9)), kn_zero_m33()));
  cr_assert(kn_eq_m44_m44(kn_inverse_m44(kn_zero_m44()), kn_zero_m44()));
  cr_assert(kn_eq_m33_m33(kn_inverse_m33(kn_diag_m33(2)), kn_diag_m33(0.5f)));
  for (int t = 0; t < 200; t++) {
    kn_mat33 a;
    kn_mat44 b;
    for (int i = 0; i < 9; i++) (&a.m[0][0])[i] = (float)urand(-2, 2) + (i % 4 == 0 ? 4.0f : 0.0f);
    for (int i = 0; i < 16; i++) (&b.m[0][0])[i] = (float)urand(-2, 2) + (i % 5 == 0 ? 5.0f : 0.0f);
    double ad[9], bd[16], ai[9], bi[16];
    to_double(3, &a.m[0][0], ad), to_double(4, &b.m[0][0], bd);
    double da = ref_inverse(3, ad, ai), db = ref_inverse(4, bd, bi);
    cr_assert(near(kn_determinant_m33(a), da, 1e-5L, 1e-5L));
    cr_assert(near(kn_determinant_m44(b), db, 1e-5L, 1e-4L));
    kn_mat33 ia = kn_inverse_m33(a);
    kn_mat44 ib = kn_inverse_m44(b);
    for (int i = 0; i < 9; i++) cr_assert(near((&ia.m[0][0])[i], ai[i], 1e-5L, 1e-5L), "m33 %d", i);
    for (int i = 0; i < 16; i++)
      cr_assert(near((&ib.m[0][0])[i], bi[i], 1e-5L, 1e-5L), "m44 %d", i);
  }
}

/* ===== quaternions ======================================================= */

/* Rodrigues' rotation in double: v rotated by angle about the unit axis k. */
static void ref_rotate(const double k[3], double angle, const double v[3], double out[3]) {
  double c = cos(angle), s = sin(angle), d = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
  double x[3] = {k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]};
  for (int i = 0; i < 3; i++) out[i] = v[i] * c + x[i] * s + k[i] * d * (1 - c);
}

Test(quats, hamilton_product) {
  kn_quat i = kn_make_q(1, 0, 0, 0), j = kn_make_q(0, 1, 0, 0), k = kn_make_q(0, 0, 1, 0);
  cr_assert(kn_eq_q_q(kn_quat_mul_q_q(i, j), k));
  cr_assert(kn_eq_q_q(kn_quat_mul_q_q(j, i), kn_neg_q(k)));
  cr_assert(kn_eq_q_q(kn_quat_mul_q_q(k, k), kn_make_q(0, 0, 0, -1)));
  cr_assert(
      kn_eq_q_q(kn_quat_mul_q_q(kn_identity_q(), kn_make_q(1, 2, 3, 4)), kn_make_q(1, 2, 3, 4)));
  /* (1 + 2i + 3j + 4k)(5 + 6i + 7j + 8k) = -60 + 12i + 30j + 24k */
  kn_quat p = kn_quat_mul_q_q(kn_make_q(2, 3, 4, 1), kn_make_q(6, 7, 8, 5));
  cr_assert(kn_eq_q_q(p, kn_make_q(12, 30, 24, -60)));
  cr_assert(kn_eq_q_q(kn_add_q_q(i, j), kn_make_q(1, 1, 0, 0)));
  cr_assert(kn_eq_q_q(kn_sub_q_q(i, j), kn_make_q(1, -1, 0, 0)));
  cr_assert(kn_eq_q_q(kn_mul_q_f32(p, 0.5f), kn_make_q(6, 15, 12, -30)));
  cr_assert(kn_eq_q_q(kn_mul_f32_q(2, i), kn_make_q(2, 0, 0, 0)));
  cr_assert(kn_eq_q_q(kn_zero_q(), kn_make_q(0, 0, 0, 0)));
  cr_assert_eq(kn_get_q(p, 3), -60.0f);
  *kn_getp_q(&p, 0) = 1;
  cr_assert_eq(p.x, 1.0f);
}

Test(quats, rotation_against_rodrigues) {
  kn_quat q = kn_quat_from_axis_angle_v3_f32((kn_vec3){0, 0, 2}, (float)(M_PI / 2));
  cr_assert(near(q.z, sqrt(0.5), 1e-6L, 1e-7L) && near(q.w, sqrt(0.5), 1e-6L, 1e-7L) && q.x == 0);
  kn_vec3 r = kn_quat_rotate_q_v3(q, (kn_vec3){1, 0, 0});
  cr_assert(near(r.x, 0, 0, 1e-6L) && near(r.y, 1, 0, 1e-6L) && near(r.z, 0, 0, 1e-6L));
  for (int t = 0; t < 200; t++) {
    double k[3] = {urand(-1, 1), urand(-1, 1), urand(-1, 1)},
           v[3] = {urand(-3, 3), urand(-3, 3), urand(-3, 3)};
    double n = sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]), ang = urand(-7, 7), want[3], want2[3];
    kn_quat a = kn_quat_from_axis_angle_v3_f32((kn_vec3){(float)k[0], (float)k[1], (float)k[2]},
                                               (float)ang);
    for (int i = 0; i < 3; i++) k[i] = (float)k[i] / n;
    ref_rotate(k, (float)ang, (double[]){(float)v[0], (float)v[1], (float)v[2]}, want);
    kn_vec3 got = kn_quat_rotate_q_v3(a, (kn_vec3){(float)v[0], (float)v[1], (float)v[2]});
    cr_assert(near(got.x, want[0], 0, 2e-5L) && near(got.y, want[1], 0, 2e-5L) &&
              near(got.z, want[2], 0, 2e-5L));
    /* composition: (b a) rotates by a then b; b is about the x axis */
    kn_quat b = kn_quat_from_axis_angle_v3_f32((kn_vec3){1, 0, 0}, 0.75f);
    ref_rotate((double[]){1, 0, 0}, 0.75f, want, want2);
    kn_vec3 got2 = kn_quat_rotate_q_v3(kn_quat_mul_q_q(b, a),
                                       (kn_vec3){(float)v[0], (float)v[1], (float)v[2]});
    cr_assert(near(got2.x, want2[0], 0, 5e-5L) && near(got2.y, want2[1], 0, 5e-5L) &&
              near(got2.z, want2[2], 0, 5e-5L));
  }
}

/* ===== atomics =========================================================== */

#define NT     8
#define NI     100000
#define ROUNDS 3

static int64_t ticket; /* min/max workers draw their values from here */

typedef struct Job {
  void *cell;
  int t;
  void *out;
  int bad;
  void *(*fn)(void *);
  int *arrived;
} Job;

/* All threads start together (none begins before every one is running), so
 * their updates really overlap even when the test machine has few cores. */
static void *start_together(void *a) {
  Job *j = a;
  __atomic_add_fetch(j->arrived, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(j->arrived, __ATOMIC_SEQ_CST) < NT) sched_yield();
  return j->fn(j);
}

/* Runs fn on NT threads sharing cell; returns the sum of their `bad` counts. */
static int spawn(void *(*fn)(void *), void *cell, void *out) {
  pthread_t th[NT];
  Job jobs[NT];
  int bad = 0, arrived = 0;
  for (int t = 0; t < NT; t++) {
    jobs[t] = (Job){cell, t, out, 0, fn, &arrived};
    cr_assert_eq(pthread_create(&th[t], NULL, start_together, &jobs[t]), 0);
  }
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL), bad += jobs[t].bad;
  return bad;
}

/* Every value in [0, n) seen exactly once. */
static bool is_permutation(const int64_t *v, int64_t n) {
  unsigned char *seen = calloc((size_t)n, 1);
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++) {
    ok = v[i] >= 0 && v[i] < n && !seen[v[i]];
    if (ok) seen[v[i]] = 1;
  }
  free(seen);
  return ok;
}

/* Workers for scalar type T (code C): each returns via Job.out / Job.bad. */
#define ATOMIC_WORKERS(T, C)                                                                       \
  static void *C##_add(void *a) {                                                                  \
    Job *j = a;                                                                                    \
    int64_t *o = (int64_t *)j->out + (int64_t)j->t * NI;                                           \
    for (int i = 0; i < NI; i++) o[i] = (int64_t)kn_atomic_add_##C((T *)j->cell, (T)1);            \
    return NULL;                                                                                   \
  }                                                                                                \
  static void *C##_sub(void *a) {                                                                  \
    Job *j = a;                                                                                    \
    int64_t *o = (int64_t *)j->out + (int64_t)j->t * NI;                                           \
    for (int i = 0; i < NI; i++) o[i] = (int64_t)kn_atomic_sub_##C((T *)j->cell, (T)1) - 1;        \
    return NULL;                                                                                   \
  }                                                                                                \
  static void *C##_exch(void *a) {                                                                 \
    Job *j = a;                                                                                    \
    int64_t *o = (int64_t *)j->out + (int64_t)j->t * NI;                                           \
    for (int i = 0; i < NI; i++)                                                                   \
      o[i] = (int64_t)kn_atomic_exch_##C((T *)j->cell, (T)((int64_t)j->t * NI + i + 1));           \
    return NULL;                                                                                   \
  }                                                                                                \
  /* Values come from a shared counter, so nearly every call lowers (raises) the \
   * cell. After min(p, v) returned old, p stays <= min(old, v) for good: a     \
   * later call by the same thread must not see more than that. */                 \
  static void *C##_min(void *a) {                                                                  \
    Job *j = a;                                                                                    \
    T bound = (T)1e9;                                                                              \
    for (int i = 0; i < NI; i++) {                                                                 \
      T v = (T)__atomic_sub_fetch(&ticket, 1, __ATOMIC_RELAXED);                                   \
      T old = kn_atomic_min_##C((T *)j->cell, v);                                                  \
      j->bad += old > bound;                                                                       \
      bound = old < v ? old : v;                                                                   \
    }                                                                                              \
    return NULL;                                                                                   \
  }                                                                                                \
  static void *C##_max(void *a) {                                                                  \
    Job *j = a;                                                                                    \
    T bound = (T)0;                                                                                \
    for (int i = 0; i < NI; i++) {                                                                 \
      T v = (T)__atomic_add_fetch(&ticket, 1, __ATOMIC_RELAXED);                                   \
      T old = kn_atomic_max_##C((T *)j->cell, v);                                                  \
      j->bad += old < bound;                                                                       \
      bound = old > v ? old : v;                                                                   \
    }                                                                                              \
    return NULL;                                                                                   \
  }                                                                                                \
  /* increments through compare-and-swap */                                                        \
  static void *C##_cas(void *a) {                                                                  \
    Job *j = a;                                                                                    \
    T *p = (T *)j->cell;                                                                           \
    for (int i = 0; i < NI; i++) {                                                                 \
      T old, seen;                                                                                 \
      __atomic_load(p, &old, __ATOMIC_RELAXED); /* a plain read would race with the CASes */       \
      while ((seen = kn_atomic_cas_##C(p, old, (T)(old + 1))) != old) old = seen;                  \
    }                                                                                              \
    return NULL;                                                                                   \
  }

/* Runs every worker of C on a fresh cell and checks the exact totals. Races
 * show only when threads really overlap, so the checks run several rounds. */
#define ATOMIC_CHECKS(T, C)                                                                        \
  for (int round = 0; round < ROUNDS; round++) {                                                   \
    int64_t *olds = malloc(sizeof(int64_t) * (NT * NI + 1));                                       \
    T cell = 0;                                                                                    \
    cr_assert_eq(spawn(C##_add, &cell, olds), 0);                                                  \
    cr_assert(cell == (T)(NT * NI), #C " add total");                                              \
    cr_assert(is_permutation(olds, NT *NI), #C " add olds");                                       \
    cr_assert_eq(spawn(C##_sub, &cell, olds), 0);                                                  \
    cr_assert(cell == 0, #C " sub total");                                                         \
    cr_assert(is_permutation(olds, NT *NI), #C " sub olds");                                       \
    cr_assert_eq(spawn(C##_exch, &cell, olds), 0);                                                 \
    olds[NT * NI] = (int64_t)cell;                                                                 \
    cr_assert(is_permutation(olds, NT *NI + 1), #C " exch values");                                \
    free(olds);                                                                                    \
    ticket = 1000 + NT * NI, cell = (T)1e9;                                                        \
    cr_assert_eq(spawn(C##_min, &cell, NULL), 0, #C " min order");                                 \
    cr_assert(cell == (T)1000, #C " min");                                                         \
    ticket = 1000, cell = 0;                                                                       \
    cr_assert_eq(spawn(C##_max, &cell, NULL), 0, #C " max order");                                 \
    cr_assert(cell == (T)(1000 + NT * NI), #C " max");                                             \
    cell = 0;                                                                                      \
    cr_assert_eq(spawn(C##_cas, &cell, NULL), 0);                                                  \
    cr_assert(cell == (T)(NT * NI), #C " cas total");                                              \
  }

/* and/or/xor: thread t owns bits t and W-1-t; the olds show what it set. */
#define ATOMIC_BIT_WORKERS(T, C)                                                                   \
  static void *C##_bits(void *a) {                                                                 \
    Job *j = a;                                                                                    \
    T *p = (T *)j->cell;                                                                           \
    T mine = (T)((uint64_t)1 << j->t | (uint64_t)1 << (sizeof(T) * 8 - 1 - j->t));                 \
    for (int i = 0; i < NI / 2; i++) {                                                             \
      j->bad += (kn_atomic_or_##C(p, mine) & mine) != 0;                                           \
      j->bad += (kn_atomic_and_##C(p, (T)~mine) & mine) != mine;                                   \
      j->bad += (kn_atomic_xor_##C(p, mine) & mine) != 0;                                          \
      j->bad += (kn_atomic_xor_##C(p, mine) & mine) != mine;                                       \
    }                                                                                              \
    return NULL;                                                                                   \
  }

ATOMIC_WORKERS(int32_t, i32)
ATOMIC_WORKERS(uint32_t, u32)
ATOMIC_WORKERS(int64_t, i64)
ATOMIC_WORKERS(uint64_t, u64)
ATOMIC_WORKERS(float, f32)
ATOMIC_WORKERS(double, f64)
ATOMIC_BIT_WORKERS(int32_t, i32)
ATOMIC_BIT_WORKERS(uint32_t, u32)
ATOMIC_BIT_WORKERS(int64_t, i64)
ATOMIC_BIT_WORKERS(uint64_t, u64)

Test(atomics, i32) {
  ATOMIC_CHECKS(int32_t, i32);
  int32_t c = 0;
  for (int r = 0; r < ROUNDS; r++) cr_assert_eq(spawn(i32_bits, &c, NULL), 0);
  cr_assert_eq(c, 0);
  c = -5;
  cr_assert_eq(kn_atomic_min_i32(&c, -7), -5);
  cr_assert_eq(kn_atomic_max_i32(&c, INT32_MIN), -7);
  cr_assert_eq(c, -7);
  cr_assert_eq(kn_atomic_cas_i32(&c, 3, 4), -7);
  cr_assert_eq(c, -7);
}
Test(atomics, u32) {
  ATOMIC_CHECKS(uint32_t, u32);
  uint32_t c = 0;
  for (int r = 0; r < ROUNDS; r++) cr_assert_eq(spawn(u32_bits, &c, NULL), 0);
  cr_assert_eq(c, 0u);
  c = 0x80000000u;
  cr_assert_eq(kn_atomic_max_u32(&c, 5u), 0x80000000u);
  cr_assert_eq(c, 0x80000000u);
  cr_assert_eq(kn_atomic_sub_u32(&c, 0x80000001u), 0x80000000u);
  cr_assert_eq(c, 0xffffffffu);
}
Test(atomics, i64) {
  ATOMIC_CHECKS(int64_t, i64);
  int64_t c = 0;
  for (int r = 0; r < ROUNDS; r++) cr_assert_eq(spawn(i64_bits, &c, NULL), 0);
  cr_assert_eq(c, 0);
  c = (int64_t)1 << 40;
  cr_assert_eq(kn_atomic_add_i64(&c, (int64_t)1 << 40), (int64_t)1 << 40);
  cr_assert_eq(kn_atomic_min_i64(&c, -((int64_t)1 << 50)), (int64_t)1 << 41);
  cr_assert_eq(c, -((int64_t)1 << 50));
  cr_assert_eq(kn_atomic_exch_i64(&c, INT64_MAX), -((int64_t)1 << 50));
  cr_assert_eq(kn_atomic_cas_i64(&c, INT64_MAX, 1), INT64_MAX);
  cr_assert_eq(c, 1);
}
Test(atomics, u64) {
  ATOMIC_CHECKS(uint64_t, u64);
  uint64_t c = 0;
  for (int r = 0; r < ROUNDS; r++) cr_assert_eq(spawn(u64_bits, &c, NULL), 0);
  cr_assert_eq(c, 0u);
  c = UINT64_MAX;
  cr_assert_eq(kn_atomic_max_u64(&c, 1u), UINT64_MAX);
  cr_assert_eq(kn_atomic_min_u64(&c, (uint64_t)1 << 63), UINT64_MAX);
  cr_assert_eq(c, (uint64_t)1 << 63);
}
Test(atomics, f32) {
  ATOMIC_CHECKS(float, f32);
  float c = -0.0f;
  cr_assert(signbit(kn_atomic_cas_f32(&c, 0.0f, 1.0f))); /* bits differ: no swap */
  cr_assert(signbit(c) && c == 0.0f);
  c = bits_f32(0x7fc00001u);
  cr_assert(isnan(kn_atomic_cas_f32(&c, bits_f32(0x7fc00001u), 2.0f)));
  cr_assert_eq(c, 2.0f);
  cr_assert_eq(kn_atomic_min_f32(&c, NAN), 2.0f);
  cr_assert_eq(c, 2.0f);
  cr_assert_eq(kn_atomic_max_f32(&c, 3.5f), 2.0f);
  cr_assert_eq(kn_atomic_sub_f32(&c, 0.5f), 3.5f);
  cr_assert_eq(c, 3.0f);
  cr_assert_eq(f32_bits(kn_atomic_exch_f32(&c, -1.0f)), f32_bits(3.0f));
}
Test(atomics, f64) {
  ATOMIC_CHECKS(double, f64);
  double c = 0.5;
  cr_assert_eq(kn_atomic_add_f64(&c, 0.25), 0.5);
  cr_assert_eq(kn_atomic_cas_f64(&c, 0.75, -3.0), 0.75);
  cr_assert_eq(kn_atomic_min_f64(&c, -2.0), -3.0);
  cr_assert_eq(kn_atomic_max_f64(&c, -2.0), -3.0);
  cr_assert_eq(c, -2.0);
}

/* Vector atomics: every component gets its own exact total. */
#define VEC_ATOMIC_TEST(T, C, E, N)                                                                \
  static void *C##_vadd(void *a) {                                                                 \
    Job *j = a;                                                                                    \
    T one;                                                                                         \
    E *o = (E *)&one;                                                                              \
    for (int k = 0; k < N; k++) o[k] = (E)(k + 1);                                                 \
    for (int i = 0; i < NI; i++) kn_atomic_add_##C((T *)j->cell, one);                             \
    return NULL;                                                                                   \
  }                                                                                                \
  static void *C##_vsub(void *a) {                                                                 \
    Job *j = a;                                                                                    \
    T one;                                                                                         \
    E *o = (E *)&one;                                                                              \
    for (int k = 0; k < N; k++) o[k] = (E)(k + 1);                                                 \
    for (int i = 0; i < NI; i++) kn_atomic_sub_##C((T *)j->cell, one);                             \
    return NULL;                                                                                   \
  }                                                                                                \
  static void *C##_vminmax(void *a) {                                                              \
    Job *j = a;                                                                                    \
    T v;                                                                                           \
    E *o = (E *)&v;                                                                                \
    T *cells = j->cell;                                                                            \
    for (int i = 0; i < NI; i++) {                                                                 \
      for (int k = 0; k < N; k++) o[k] = (E)((NI - i) * NT + j->t + k);                            \
      kn_atomic_min_##C(&cells[0], v);                                                             \
      for (int k = 0; k < N; k++) o[k] = (E)(i * NT + j->t - k);                                   \
      kn_atomic_max_##C(&cells[1], v);                                                             \
    }                                                                                              \
    return NULL;                                                                                   \
  }                                                                                                \
  Test(atomics, vec_##C) {                                                                         \
    T cells[2];                                                                                    \
    memset(cells, 0, sizeof cells);                                                                \
    E *c = (E *)&cells[0];                                                                         \
    spawn(C##_vadd, &cells[0], NULL);                                                              \
    for (int k = 0; k < N; k++) cr_assert(c[k] == (E)((k + 1) * NT * NI), #C " add %d", k);        \
    spawn(C##_vsub, &cells[0], NULL);                                                              \
    for (int k = 0; k < N; k++) cr_assert(c[k] == 0, #C " sub %d", k);                             \
    E *lo = (E *)&cells[0], *hi = (E *)&cells[1];                                                  \
    for (int k = 0; k < N; k++) lo[k] = (E)1e9, hi[k] = (E)-1e9;                                   \
    spawn(C##_vminmax, cells, NULL);                                                               \
    for (int k = 0; k < N; k++) {                                                                  \
      cr_assert(lo[k] == (E)(NT + k), #C " min %d", k);                                            \
      cr_assert(hi[k] == (E)((NI - 1) * NT + NT - 1 - k), #C " max %d", k);                        \
    }                                                                                              \
    T prev = cells[0], add;                                                                        \
    memset(&add, 0, sizeof add);                                                                   \
    T old = kn_atomic_add_##C(&cells[0], add);                                                     \
    cr_assert(memcmp(&old, &prev, sizeof old) == 0, #C " returns old");                            \
  }
VEC_ATOMIC_TEST(kn_vec2, v2, float, 2)
VEC_ATOMIC_TEST(kn_vec3, v3, float, 3)
VEC_ATOMIC_TEST(kn_vec4, v4, float, 4)
VEC_ATOMIC_TEST(kn_dvec2, dv2, double, 2)
VEC_ATOMIC_TEST(kn_dvec3, dv3, double, 3)
VEC_ATOMIC_TEST(kn_dvec4, dv4, double, 4)
VEC_ATOMIC_TEST(kn_ivec2, iv2, int32_t, 2)
VEC_ATOMIC_TEST(kn_ivec3, iv3, int32_t, 3)
VEC_ATOMIC_TEST(kn_ivec4, iv4, int32_t, 4)

/* ===== random numbers ==================================================== */

Test(random, uniform_statistics) {
  uint32_t s = kn_rand_init(42u, 7u);
  double sum = 0, sum2 = 0;
  int buckets[100] = {0};
  const int n = 1000000;
  for (int i = 0; i < n; i++) {
    float u = kn_randf(&s);
    cr_assert(u >= 0.0f && u < 1.0f);
    sum += u, sum2 += (double)u * u;
    buckets[(int)(u * 100)]++;
  }
  double mean = sum / n, var = sum2 / n - mean * mean;
  cr_assert(fabs(mean - 0.5) < 0.002, "mean %f", mean);
  cr_assert(fabs(var - 1.0 / 12) < 0.002, "variance %f", var);
  for (int b = 0; b < 100; b++)
    cr_assert(abs(buckets[b] - n / 100) < 500, "bucket %d: %d", b, buckets[b]);
}

Test(random, integer_bits_balanced) {
  uint32_t s = kn_rand_init(1u, 0u);
  int ones[32] = {0};
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    uint32_t r = kn_randi(&s);
    for (int b = 0; b < 32; b++) ones[b] += (r >> b) & 1;
  }
  for (int b = 0; b < 32; b++) cr_assert(abs(ones[b] - n / 2) < 1500, "bit %d: %d", b, ones[b]);
}

Test(random, range_and_normal) {
  uint32_t s = kn_rand_init(3u, 99u);
  for (int i = 0; i < 100000; i++) {
    float r = kn_randf_range(&s, -2.0f, 6.0f);
    cr_assert(r >= -2.0f && r < 6.0f);
  }
  double sum = 0, sum2 = 0, sum4 = 0;
  const int n = 1000000;
  int within1 = 0;
  for (int i = 0; i < n; i++) {
    double z = kn_randn(&s);
    cr_assert(isfinite(z));
    sum += z, sum2 += z * z, sum4 += z * z * z * z, within1 += fabs(z) < 1;
  }
  double mean = sum / n, var = sum2 / n - mean * mean;
  cr_assert(fabs(mean) < 0.005, "mean %f", mean);
  cr_assert(fabs(var - 1) < 0.01, "variance %f", var);
  cr_assert(fabs(sum4 / n - 3) < 0.05, "kurtosis %f", sum4 / n);
  cr_assert(fabs((double)within1 / n - 0.682689) < 0.003);
}

Test(random, streams_deterministic_and_distinct) {
  uint32_t a = kn_rand_init(123u, 5u), b = kn_rand_init(123u, 5u);
  for (int i = 0; i < 1000; i++) cr_assert_eq(kn_randi(&a), kn_randi(&b));
  cr_assert_eq(a, b);
  /* first draws of neighbouring offsets and seeds are all different */
  enum { M = 20000 };
  uint32_t *v = malloc(sizeof(uint32_t) * M * 2);
  for (int i = 0; i < M; i++) {
    uint32_t s = kn_rand_init(7u, (uint32_t)i), t = kn_rand_init((uint32_t)i, 7u);
    v[i] = kn_randi(&s), v[M + i] = kn_randi(&t) ^ 0x5bd1e995u;
  }
  int dup = 0;
  for (int i = 0; i < M; i++)
    for (int j = i + 1; j < M; j++) dup += v[i] == v[j] || v[M + i] == v[M + j];
  cr_assert(dup <= 1, "%d duplicates", dup);
  free(v);
  /* neighbouring offsets are uncorrelated: their first uniforms average 0.5 */
  double sum = 0, prod = 0;
  for (uint32_t i = 0; i < 100000; i++) {
    uint32_t s0 = kn_rand_init(9u, i), s1 = kn_rand_init(9u, i + 1);
    float u0 = kn_randf(&s0), u1 = kn_randf(&s1);
    sum += u0, prod += (u0 - 0.5) * (u1 - 0.5);
  }
  cr_assert(fabs(sum / 100000 - 0.5) < 0.005);
  cr_assert(fabs(prod / 100000) < 0.002, "correlation %f", prod / 100000);
  /* randf is the top 24 bits of the same draw randi would make */
  uint32_t c = kn_rand_init(5u, 5u), d = c;
  for (int i = 0; i < 1000; i++)
    cr_assert_eq(kn_randf(&c), (float)(kn_randi(&d) >> 8) / 16777216.0f);
}

/* ===== printf ============================================================ */

static void *print_lines(void *a) {
  Job *j = a;
  char pad[301];
  memset(pad, 'a' + j->t, 300);
  pad[300] = 0;
  for (int i = 0; i < 2000; i++) kn_printf("T%d L%d %s E\n", j->t, i, pad);
  return NULL;
}

static char *capture_stdout(void (*fn)(void)) {
  char *path;
  int fd = th_make_temp("kn_stdlib", "", &path);
  cr_assert(fd >= 0, "cannot create %s", path);
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  fn();
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  char *text = th_read_file(path, NULL);
  unlink(path);
  free(path);
  return text;
}

static void many_threads(void) { spawn(print_lines, NULL, NULL); }
static void long_line(void) {
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  kn_printf("%s|%d %u %ld %f %g %e %x %%", big, -1, 2u, 3l, 1.5, 0.25, 100.0, 255u);
  kn_printf("\n%d %u %ld %.2f %g %e %s %x %%\n", -1, 2u, (long)-3, 1.5, 0.25, 100.0, "str", 255u);
}

Test(printf, lines_never_interleave) {
  char *out = capture_stdout(many_threads);
  int count[NT] = {0};
  char *save = NULL;
  for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    int t = -1, i = -1, n = 0;
    cr_assert_eq(sscanf(line, "T%d L%d %n", &t, &i, &n), 2, "bad line: %.60s", line);
    cr_assert(t >= 0 && t < NT && i == count[t], "order of thread %d", t);
    for (int k = 0; k < 300; k++) cr_assert_eq(line[n + k], 'a' + t, "mixed line");
    cr_assert_str_eq(line + n + 300, " E");
    count[t]++;
  }
  for (int t = 0; t < NT; t++) cr_assert_eq(count[t], 2000);
  free(out);
}

Test(printf, truncates_and_formats) {
  char *out = capture_stdout(long_line);
  char *nl = strchr(out, '\n');
  cr_assert(nl != NULL);
  cr_assert_eq(nl - out, 1023); /* the first call was cut at 1023 bytes */
  for (int i = 0; i < 1023; i++) cr_assert_eq(out[i], 'x');
  cr_assert_str_eq(nl + 1, "-1 2 -3 1.50 0.25 1.000000e+02 str ff %\n");
  free(out);
}

/* ===== debug checks ====================================================== */

Test(debug, bounds_and_assert_record_first_error) {
  kn_error err;
  memset(&err, 0, sizeof err);
  kn_ctx c = {{10, 1, 1, 1}, 10, 1, 0, &err};
  int64_t idx[4] = {3, 4, 0, 0}, shape[4] = {5, 5, 1, 1};
  cr_assert(kn_bounds_ok(&c, 1, 2, 0, 2, idx, shape, 7));
  cr_assert_eq(err.flag, 0);
  idx[1] = 5;
  cr_assert(!kn_bounds_ok(&c, 3, 44, 2, 2, idx, shape, 9));
  cr_assert(err.flag == 1 && err.kind == KN_ERR_BOUNDS && err.file == 3 && err.line == 44);
  cr_assert(err.param == 2 && err.ndim == 2 && err.tid == 9);
  cr_assert(err.index[0] == 3 && err.index[1] == 5 && err.shape[0] == 5 && err.shape[1] == 5);
  idx[0] = -1;
  cr_assert(!kn_bounds_ok(&c, 8, 88, 1, 1, idx, shape, 1));
  cr_assert(err.line == 44 && err.tid == 9); /* the first error stays */
  kn_assert_fail(&c, 5, 6, 7);
  cr_assert(err.kind == KN_ERR_BOUNDS);
  memset(&err, 0, sizeof err);
  kn_assert_fail(&c, 5, 6, 7);
  cr_assert(err.flag == 1 && err.kind == KN_ERR_ASSERT && err.file == 5 && err.line == 6 &&
            err.tid == 7 && err.param == -1);
  memset(&err, 0, sizeof err);
  kn_assert_fail_msg(&c, 5, 6, 3, 8); /* the message's number rides in param */
  cr_assert(err.flag == 1 && err.kind == KN_ERR_ASSERT && err.param == 3 && err.tid == 8);
  kn_ctx none = {{1, 1, 1, 1}, 1, 1, 0, NULL};
  cr_assert(!kn_bounds_ok(&none, 0, 0, 0, 1, idx, shape, 0));
  kn_assert_fail(&none, 0, 0, 0);
  int64_t big[4] = {0, 0, 0, 5}, four[4] = {1, 1, 1, 5};
  cr_assert(!kn_bounds_ok(&none, 0, 0, 0, 4, big, four, 0));
}

static void *fail_bounds(void *a) {
  Job *j = a;
  for (int i = 0; i < 1000; i++) {
    int64_t idx[4] = {j->t * 1000 + i, 0, 0, 0}, shape[4] = {0, 1, 1, 1};
    j->bad += kn_bounds_ok(j->cell, j->t, i, j->t, 1, idx, shape, j->t * 1000 + i);
  }
  return NULL;
}

Test(debug, concurrent_failures_record_one_consistent_error) {
  kn_error err;
  memset(&err, 0, sizeof err);
  kn_ctx c = {{1, 1, 1, 1}, 1, 1, 0, &err};
  cr_assert_eq(spawn(fail_bounds, &c, NULL), 0);
  cr_assert_eq(err.flag, 1);
  cr_assert(err.tid == err.index[0] && err.file == err.param &&
            err.tid == err.file * 1000 + err.line);
}

/* ===== the GPU against the CPU ============================================ */

static void *mixed_atomics(void *a) {
  Job *j = a;
  int64_t per = KC_THREADS / NT;
  for (int64_t i = j->t * per; i < (j->t + 1) * per; i++)
    kc_atomics(j->cell, j->out, i, KC_THREADS);
  return NULL;
}

/* The kernel the GPU check runs, here on CPU threads, with the same verdict. */
Test(atomics, crosscheck_kernel_on_cpu_threads) {
  kc_cells cells;
  int64_t *olds = malloc(sizeof(int64_t) * KC_OLDS * KC_THREADS);
  char msg[512] = "";
  kc_init_cells(&cells, KC_THREADS);
  spawn(mixed_atomics, &cells, olds);
  cr_assert_eq(kc_verify_atomics(&cells, olds, KC_THREADS, "CPU atomics", msg, sizeof msg), 1, "%s",
               msg);
  free(olds);
}

/* The cross-check's NVRTC program (every row, noise included) compiles for
 * sm_75 with NVRTC alone, so a GPU machine finds no compile error first. */
Test(crosscheck, program_compiles_with_nvrtc, .timeout = 300) {
  KcCuda k;
  char msg[4096] = "";
  memset(&k, 0, sizeof k);
  if (!kc_load_nvrtc(&k, msg, sizeof msg)) cr_skip_test("%s: skipping", msg);
  k.cc_major = 7, k.cc_minor = 5;
  /* libnvrtc stays loaded, as kern keeps it: unloaded, the C++ runtime's
   * allocations inside it would read as leaks of an unknown module. */
  int ok = kc_build(&k, KERN_SOURCE_DIR, false, msg, sizeof msg);
  cr_assert_eq(ok, 1, "%s", msg);
}

Test(gpu, stdlib_matches_cpu_bit_for_bit, .timeout = 600) {
  char msg[4096] = "";
  int r = kc_gpu_crosscheck(KERN_SOURCE_DIR, msg, sizeof msg, stderr);
  if (r < 0) cr_skip_test("%s: skipping the GPU cross-check", msg);
  cr_assert_eq(r, 1, "%s", msg);
}
