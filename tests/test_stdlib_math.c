/* test_stdlib_math.c: stdlib/kern_math.h against independent references.
 *
 * Requires the stdlib headers on the include path (compiled here as C, the
 * same text NVRTC compiles: tests/test_stdlib_table.c compiles every table entry
 * for both). References: long double libm (erfl, erfcl, expl, logl), erfinv
 * refined by Newton's method in long double, and straightforward double
 * formulas written here for the rest. Error bounds are in ulps of the
 * float64 result, as documented in kern_math.h and docs/language.md.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kern_builtins.h"
#include "kern_libm.h"
#include "kern_math.h"
#include "kern_spatial.h"
#include "kern_transform.h"
#include "kern_spatial_algebra.h"
#include "kern_linalg.h"
#include "kern_noise.h"

#include "harness.h"
#include "stdlib/crosscheck_rows.h"
#include "stdlib/parts.h"

extern const char rt_stdlib_abi_h[], rt_stdlib_builtins_h[];

static uint64_t lcg = 0x9e3779b97f4a7c15ull;
static double urand(double lo, double hi) {
  lcg ^= lcg << 13, lcg ^= lcg >> 7, lcg ^= lcg << 17;
  return lo + (hi - lo) * (double)(lcg >> 11) / 9007199254740992.0;
}

/* |got - want| in ulps of want (as a double). */
static double ulps(double got, long double want) {
  double w = (double)want, u = nextafter(fabs(w), INFINITY) - fabs(w);
  if (w == 0.0) u = 4.9406564584124654e-324;
  return (double)(fabsl((long double)got - want) / u);
}

static double ulps_f(float got, long double want) {
  float w = (float)want, u = nextafterf(fabsf(w), INFINITY) - fabsf(w);
  return (double)(fabsl((long double)got - want) / u);
}

static long double erfinv_ref(double y) {
  long double x = (long double)kn_erfinv_f64(y); /* any start near the root */
  for (int k = 0; k < 6; k++)
    x -= (erfl(x) - y) / (1.12837916709551257389615890312154517L * expl(-x * x));
  return x;
}

Test(special, erf_erfc_within_documented_ulps) {
  double worst_erf = 0, worst_erfc = 0, worst_f = 0;
  for (int i = 0; i < 200000; i++) {
    double x = i < 100000 ? urand(-6.0, 6.0) : urand(-27.0, 27.0);
    long double e = erfl(x), c = erfcl(x);
    worst_erf = fmax(worst_erf, ulps(kn_erf_f64(x), e));
    if (c > 1e-300L) worst_erfc = fmax(worst_erfc, ulps(kn_erfc_f64(x), c));
    float xf = (float)x;
    worst_f = fmax(worst_f, ulps_f(kn_erf_f32(xf), erfl(xf)));
    if (erfcl(xf) > 1e-37L) worst_f = fmax(worst_f, ulps_f(kn_erfc_f32(xf), erfcl(xf)));
  }
  cr_expect(worst_erf <= 2.0, "erf: %g ulp", worst_erf);
  cr_expect(worst_erfc <= 6.0, "erfc: %g ulp", worst_erfc);
  cr_expect(worst_f <= 1.0, "float32 erf/erfc: %g ulp", worst_f);
}

Test(special, erfinv_inverts_erf) {
  double worst = 0, worst_f = 0;
  for (int i = 0; i < 100000; i++) {
    double y =
        i % 2 ? urand(-1.0, 1.0) : (i % 4 ? 1.0 : -1.0) * (1.0 - pow(10.0, urand(-15.5, -0.3)));
    worst = fmax(worst, ulps(kn_erfinv_f64(y), erfinv_ref(y)));
    float yf = (float)y;
    if (fabsf(yf) < 1.0f) worst_f = fmax(worst_f, ulps_f(kn_erfinv_f32(yf), erfinv_ref(yf)));
  }
  cr_expect(worst <= 4.0, "erfinv: %g ulp", worst);
  cr_expect(worst_f <= 1.0, "float32 erfinv: %g ulp", worst_f);
}

Test(special, edge_values) {
  cr_expect_eq(kn_erf_f64(0.0), 0.0);
  cr_expect(signbit(kn_erf_f64(-0.0)));
  cr_expect_eq(kn_erf_f64(INFINITY), 1.0);
  cr_expect_eq(kn_erf_f32(-INFINITY), -1.0f);
  cr_expect_eq(kn_erfc_f64(-INFINITY), 2.0);
  cr_expect_eq(kn_erfc_f64(INFINITY), 0.0);
  cr_expect(isnan(kn_erf_f64(NAN)) && isnan(kn_erfc_f32(NAN)) && isnan(kn_erfinv_f64(NAN)));
  cr_expect_eq(kn_erfinv_f64(1.0), INFINITY);
  cr_expect_eq(kn_erfinv_f32(-1.0f), -INFINITY);
  cr_expect(isnan(kn_erfinv_f64(1.5)));
  cr_expect(signbit(kn_erfinv_f64(-0.0)));
}

Test(special, exp_and_log_kernels) {
  double worst = 0;
  for (int i = 0; i < 100000; i++) {
    double x = urand(-740.0, 709.0), y = exp(urand(-700.0, 700.0));
    worst = fmax(worst, ulps(kn__exp_d(x), expl(x)));
    worst = fmax(worst, ulps(kn__log_d(y), logl(y)));
  }
  cr_expect(worst <= 1.5, "exp/log: %g ulp", worst);
  cr_expect(ulps(kn__log_d(4.9406564584124654e-324), logl(4.9406564584124654e-324L)) <= 1.0);
  cr_expect_eq(kn__exp_d(0.0), 1.0);
  cr_expect_eq(kn__log_d(1.0), 0.0);
}

/* ===== rounding and small scalar functions ================================ */

Test(scalar, rint_frac_copysign_degrees) {
  static const double xs[] = {
      0.5,   1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.3, 3.7, -3.7, 4503599627370497.0,
      1e300, -0.0};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    double x = xs[i];
    cr_expect_eq(kn_rint_f64(x), nearbyint(x), "rint(%.17g)", x);
    cr_expect_eq(signbit(kn_rint_f64(x)), signbit(nearbyint(x)), "sign of rint(%.17g)", x);
    cr_expect_eq(kn_rint_f32((float)x), nearbyintf((float)x), "rintf(%.9g)", x);
    cr_expect_eq(kn_frac_f64(x), x - trunc(x));
  }
  for (int i = 0; i < 10000; i++) {
    float x = (float)urand(-1e7, 1e7);
    cr_assert_eq(kn_rint_f32(x), nearbyintf(x), "rintf(%.9g)", (double)x);
  }
  cr_expect(isnan(kn_rint_f32(NAN)) && kn_rint_f64(-INFINITY) == -INFINITY);
  cr_expect_eq(kn_copysign_f32_f32(3.0f, -0.0f), -3.0f);
  cr_expect_eq(kn_copysign_f64_f64(-2.0, 1.0), 2.0);
  cr_expect_eq(kn_degrees_f64(M_PI), 180.0);
  cr_expect_eq(kn_radians_f32(180.0f), (float)M_PI);
  kn_vec3 r = kn_rint_v3((kn_vec3){0.5f, 1.5f, -2.5f});
  cr_expect(r.x == 0.0f && r.y == 2.0f && r.z == -2.0f);
}

Test(scalar, floordiv_and_nonzero) {
  for (int a = -9; a <= 9; a++)
    for (int b = -4; b <= 4; b++) {
      int32_t want = b == 0 ? 0 : (int32_t)floor((double)a / b);
      cr_expect_eq(kn_floordiv_i32_i32(a, b), want, "floordiv(%d, %d)", a, b);
      cr_expect_eq(kn_floordiv_i64_i64(a, b), want);
      float fw = floorf((float)a / (float)b), fg = kn_floordiv_f32_f32((float)a, (float)b);
      cr_expect(fg == fw || (isnan(fg) && isnan(fw)), "floordiv(%d.0, %d.0)", a, b);
    }
  cr_expect_eq(kn_floordiv_i32_i32(INT32_MIN, -1), INT32_MIN);
  cr_expect_eq(kn_floordiv_u32_u32(7u, 2u), 3u);
  cr_expect_eq(kn_nonzero_f32(-0.0f), 0.0f);
  cr_expect_eq(kn_nonzero_f64(NAN), 1.0);
  cr_expect_eq(kn_nonzero_i64(-5), 1);
}

/* ===== vectors and matrices ============================================== */

Test(vectors, reductions_and_norms) {
  kn_vec4 v = {3.0f, -7.0f, 2.5f, -7.0f};
  cr_expect_eq(kn_min_v4(v), -7.0f);
  cr_expect_eq(kn_max_v4(v), 3.0f);
  cr_expect_eq(kn_argmin_v4(v), 1, "the first of equal minima");
  cr_expect_eq(kn_argmax_v4(v), 0);
  kn_vec3 z = {0.0f, -0.0f, NAN};
  cr_expect_eq(kn_argmin_v3(z), 1, "-0 before +0, NaN ignored");
  cr_expect_eq(kn_argmax_v3((kn_vec3){NAN, 1.0f, 2.0f}), 2);
  cr_expect_eq(kn_argmax_iv3((kn_ivec3){4, 9, 9}), 1);
  cr_expect_eq(kn_min_iv2((kn_ivec2){4, -9}), -9);
  cr_expect_eq(kn_norm_l1_v4(v), 19.5f);
  cr_expect_eq(kn_norm_l2_v3((kn_vec3){3, 4, 12}), 13.0f);
  for (int i = 0; i < 1000; i++) {
    double x = urand(-3, 3), y = urand(-3, 3), d = urand(0.1, 4);
    double a = x * x + y * y;
    double hub = a <= d * d ? 0.5 * a : d * (sqrt(a) - 0.5 * d);
    double ph = d * sqrt(a / (d * d) + 1.0);
    cr_assert(fabs(kn_norm_huber_dv2_f64((kn_dvec2){x, y}, d) - hub) <= 1e-14 * fmax(1, hub));
    cr_assert(fabs(kn_norm_pseudo_huber_dv2_f64((kn_dvec2){x, y}, d) - ph) <= 1e-14 * ph);
    kn_dvec2 s = kn_smooth_normalize_dv2_f64((kn_dvec2){x, y}, d);
    cr_assert(fabs(s.x - x / ph) <= 1e-15 && fabs(s.y - y / ph) <= 1e-15);
  }
  cr_expect_eq(kn_norm_huber_v2((kn_vec2){0.6f, 0.8f}), 0.5f * (0.6f * 0.6f + 0.8f * 0.8f));
  cr_expect(kn_isnan_v3(z) && !kn_isnan_v4(v) && kn_isfinite_v4(v));
  cr_expect(kn_isinf_dv2((kn_dvec2){1.0, -INFINITY}) && !kn_isfinite_dv2((kn_dvec2){1.0, NAN}));
}

Test(vectors, componentwise_mod_and_scalar_division) {
  kn_ivec3 m = kn_mod_iv3_iv3((kn_ivec3){7, -7, 5}, (kn_ivec3){3, 3, 0});
  cr_expect(m.x == 1 && m.y == -1 && m.z == 5, "C's remainder, x %% 0 == x");
  kn_ivec2 k = kn_mod_iv2_i32((kn_ivec2){INT32_MIN, 9}, -1);
  cr_expect(k.x == 0 && k.y == 0);
  kn_vec3 d = kn_div_f32_v3(1.0f, (kn_vec3){2.0f, -4.0f, 0.0f});
  cr_expect(d.x == 0.5f && d.y == -0.25f && isinf(d.z));
  kn_ivec2 q = kn_div_i32_iv2(7, (kn_ivec2){2, 0});
  cr_expect(q.x == 3 && q.y == 0);
  kn_vec2 c = kn_cw_mul_v2_v2((kn_vec2){2, 3}, (kn_vec2){4, 5});
  kn_dvec2 e = kn_cw_div_dv2_dv2((kn_dvec2){1, 3}, (kn_dvec2){4, 2});
  cr_expect(c.x == 8 && c.y == 15 && e.x == 0.25 && e.y == 1.5);
}

Test(matrices, trace_diag_ddot_skew) {
  kn_mat33 a = kn_make_m33(1, 2, 3, 4, 5, 6, 7, 8, 10), b = kn_make_m33(2, 0, 1, -1, 3, 0, 0, 1, 1);
  cr_expect_eq(kn_trace_m33(a), 16.0f);
  kn_vec3 g = kn_get_diag_m33(a);
  cr_expect(g.x == 1 && g.y == 5 && g.z == 10);
  kn_mat44 d = kn_diag_v4((kn_vec4){1, 2, 3, 4});
  cr_expect(d.m[2][2] == 3 && d.m[3][3] == 4 && d.m[0][1] == 0 && d.m[3][0] == 0);
  double want = 0;
  for (int i = 0; i < 9; i++) want += (double)a.m[i / 3][i % 3] * b.m[i / 3][i % 3];
  cr_expect_eq(kn_ddot_m33_m33(a, b), (float)want);
  kn_vec3 v = {1.5f, -2.0f, 0.25f}, u = {0.5f, 3.0f, -1.0f};
  kn_vec3 s = kn_mul_m33_v3(kn_skew_v3(v), u), c = kn_cross_v3_v3(v, u);
  cr_expect(s.x == c.x && s.y == c.y && s.z == c.z, "skew(v) * u == cross(v, u)");
  kn_mat22 w = kn_cw_div_m22_m22(kn_make_m22(1, 2, 3, 4), kn_make_m22(2, 4, 6, 8));
  cr_expect(w.m[0][0] == 0.5f && w.m[1][1] == 0.5f);
  kn_mat22 r = kn_div_f32_m22(2.0f, kn_make_m22(1, 2, 4, -8));
  cr_expect(r.m[0][0] == 2 && r.m[0][1] == 1 && r.m[1][0] == 0.5f && r.m[1][1] == -0.25f);
  a.m[1][2] = INFINITY;
  cr_expect(kn_isinf_m33(a) && !kn_isnan_m33(a) && !kn_isfinite_m33(a));
  cr_expect(kn_isnan_q((kn_quat){0, NAN, 0, 1}) && kn_isfinite_q((kn_quat){0, 0, 0, 1}));
}

Test(arrays, lower_bound_on_sorted_arrays) {
  float data[] = {-1.0f, 0.0f, 0.0f, 2.5f, 7.0f};
  kn_array a = {(char *)data, {5, 1, 1, 1}, {4, 0, 0, 0}};
  cr_expect_eq(kn_lower_bound_f32(a, 0, INT64_MAX, -5.0f), 0);
  cr_expect_eq(kn_lower_bound_f32(a, 0, INT64_MAX, 0.0f), 1, "the first of equal elements");
  cr_expect_eq(kn_lower_bound_f32(a, 0, INT64_MAX, 3.0f), 4);
  cr_expect_eq(kn_lower_bound_f32(a, 0, INT64_MAX, 9.0f), 5, "past the end");
  cr_expect_eq(kn_lower_bound_f32(a, 2, 4, -5.0f), 2, "within [lo, hi)");
  cr_expect_eq(kn_lower_bound_f32(a, -3, 99, 2.0f), 3, "range clamped to the array");
  int64_t big[] = {10, 20, 30, 40};
  kn_array b = {(char *)big, {2, 1, 1, 1}, {16, 0, 0, 0}}; /* every other element */
  cr_expect_eq(kn_lower_bound_i64(b, 0, INT64_MAX, 25), 1);
  cr_expect_eq(kn_lower_bound_i64(b, 0, INT64_MAX, 31), 2);
}

Test(crosscheck, rows_fit_their_columns) {
  uint64_t o[KC_EXACT + 64];
  for (uint64_t i = 0; i < 64; i++) {
    int n = kc_exact(i * 0x9e3779b97f4a7c15ull, ~i * 12345, o);
    cr_assert(n <= KC_EXACT, "kc_exact wrote %d outputs, KC_EXACT is %d", n, KC_EXACT);
    n = kc_transc(i * 0x9e3779b97f4a7c15ull, ~i * 12345, o);
    cr_assert(n <= KC_TRANSC, "kc_transc wrote %d outputs, KC_TRANSC is %d", n, KC_TRANSC);
    n = kc_random((uint32_t)i, 3u, o);
    cr_assert(n <= KC_RANDOM, "kc_random wrote %d outputs, KC_RANDOM is %d", n, KC_RANDOM);
  }
}

/* Generated code pastes the embedded text; the tests that compile the stdlib
 * themselves read tests/stdlib/parts.h's list: they must be the same text. */
Test(crosscheck, parts_list_matches_the_embedded_stdlib) {
  size_t at = 0, nb = strlen(rt_stdlib_builtins_h);
  for (int i = 0; i < KT_STDLIB_NPARTS; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KERN_SOURCE_DIR, kt_stdlib_parts[i]);
    char *text = th_read_file(path, NULL);
    cr_assert(text, "cannot read %s", path);
    size_t n = strlen(text);
    if (i == 0) {
      cr_expect(strncmp(rt_stdlib_abi_h, text, n) == 0, "%s is embedded first", path);
    } else {
      cr_expect(at + n <= nb && strncmp(rt_stdlib_builtins_h + at, text, n) == 0,
                "%s is embedded in this order", path);
      at += n + 1; /* each part is followed by a newline */
    }
    free(text);
  }
  cr_expect_eq(at, nb, "the embedded stdlib has parts the list lacks");
}

/* ===== quaternions (stdlib/kern_spatial.h) ================================ */

/* Hamilton product and rotation in double precision, written here. */
static void dq_mul(const double a[4], const double b[4], double r[4]) {
  r[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
  r[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
  r[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
  r[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}
static void dq_rotate(const double q[4], const double v[3], double out[3]) {
  double p[4] = {v[0], v[1], v[2], 0}, c[4] = {-q[0], -q[1], -q[2], q[3]}, t[4], r[4];
  dq_mul(q, p, t);
  dq_mul(t, c, r);
  out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

static kn_quat random_unit_quat(double *d) {
  double n = 0;
  for (int k = 0; k < 4; k++) d[k] = urand(-1, 1), n += d[k] * d[k];
  for (int k = 0; k < 4; k++) d[k] /= sqrt(n);
  return (kn_quat){(float)d[0], (float)d[1], (float)d[2], (float)d[3]};
}

#define QTOL 2e-6

Test(quats, algebra_against_double_reference) {
  for (int i = 0; i < 2000; i++) {
    double d[4], e[4], v[3] = {urand(-2, 2), urand(-2, 2), urand(-2, 2)}, r[3];
    kn_quat q = random_unit_quat(d), p = random_unit_quat(e);
    for (int k = 0; k < 4; k++) d[k] = kn_get_q(q, k), e[k] = kn_get_q(p, k);
    kn_vec3 x = {(float)v[0], (float)v[1], (float)v[2]};
    double dot = d[0] * e[0] + d[1] * e[1] + d[2] * e[2] + d[3] * e[3];
    cr_assert(fabs(kn_dot_q_q(q, p) - dot) < QTOL);
    cr_assert(fabs(kn_length_q(kn_mul_q_f32(q, 3.0f)) - 3.0) < 4 * QTOL);
    kn_quat n = kn_normalize_q(kn_mul_q_f32(q, 0.25f));
    cr_assert(fabs(n.x - d[0]) < QTOL && fabs(n.w - d[3]) < QTOL);
    /* inverse(q) * q == identity for any nonzero q */
    kn_quat s = kn_mul_q_f32(q, 2.5f), one = kn_quat_mul_q_q(kn_inverse_q(s), s);
    cr_assert(fabs(one.w - 1) < QTOL && fabs(one.x) < QTOL && fabs(one.y) < QTOL);
    /* rotate_inv undoes rotate */
    double c[4] = {-d[0], -d[1], -d[2], d[3]};
    dq_rotate(c, v, r);
    kn_vec3 ri = kn_quat_rotate_inv_q_v3(q, x);
    cr_assert(fabs(ri.x - r[0]) < 4 * QTOL && fabs(ri.y - r[1]) < 4 * QTOL &&
                  fabs(ri.z - r[2]) < 4 * QTOL,
              "rotate_inv");
    /* the matrix rotates like the quaternion */
    dq_rotate(d, v, r);
    kn_vec3 mv = kn_mul_m33_v3(kn_quat_to_matrix_q(q), x);
    cr_assert(fabs(mv.x - r[0]) < 4 * QTOL && fabs(mv.z - r[2]) < 4 * QTOL, "to_matrix");
    /* from_matrix gives q or -q */
    kn_quat b = kn_quat_from_matrix_m33(kn_quat_to_matrix_q(q));
    double sg = b.w * d[3] + b.x * d[0] + b.y * d[1] + b.z * d[2] < 0 ? -1 : 1;
    cr_assert(fabs(sg * b.x - d[0]) < 8 * QTOL && fabs(sg * b.w - d[3]) < 8 * QTOL, "from_matrix");
    /* axis-angle round trip */
    kn_vec4 aa = kn_quat_to_axis_angle_q(q);
    double ang = 2 * atan2(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), fabs(d[3]));
    cr_assert(fabs(aa.w - ang) < 8 * QTOL, "angle");
    kn_quat back = kn_quat_from_axis_angle_v3_f32(kn_make_v3(aa.x, aa.y, aa.z), aa.w);
    cr_assert(fabs(fabs(kn_dot_q_q(back, q)) - 1) < 8 * QTOL, "axis-angle round trip");
    /* slerp: endpoints, and the midpoint is the normalized sum when dot >= 0 */
    if (dot < 0) {
      p = kn_neg_q(p);
      for (int k = 0; k < 4; k++) e[k] = -e[k];
    }
    kn_quat s0 = kn_quat_slerp_q_q_f32(q, p, 0.0f), s1 = kn_quat_slerp_q_q_f32(q, p, 1.0f);
    kn_quat sh = kn_quat_slerp_q_q_f32(q, p, 0.5f);
    double m[4], mn = 0;
    for (int k = 0; k < 4; k++) m[k] = d[k] + e[k], mn += m[k] * m[k];
    cr_assert(fabs(s0.x - d[0]) < 8 * QTOL && fabs(s1.y - e[1]) < 16 * QTOL, "slerp ends");
    cr_assert(fabs(sh.z - m[2] / sqrt(mn)) < 16 * QTOL && fabs(sh.w - m[3] / sqrt(mn)) < 16 * QTOL,
              "slerp midpoint");
  }
}

Test(quats, rpy_twist_identity_and_edges) {
  /* rpy: yaw about z after pitch about y after roll about x */
  for (int i = 0; i < 500; i++) {
    float r = (float)urand(-3, 3), p = (float)urand(-3, 3), y = (float)urand(-3, 3);
    kn_quat qx = kn_quat_from_axis_angle_v3_f32(kn_make_v3(1, 0, 0), r);
    kn_quat qy = kn_quat_from_axis_angle_v3_f32(kn_make_v3(0, 1, 0), p);
    kn_quat qz = kn_quat_from_axis_angle_v3_f32(kn_make_v3(0, 0, 1), y);
    kn_quat want = kn_quat_mul_q_q(qz, kn_quat_mul_q_q(qy, qx));
    kn_quat got = kn_quat_rpy_f32_f32_f32(r, p, y);
    cr_assert(fabs(got.x - want.x) < 4 * QTOL && fabs(got.y - want.y) < 4 * QTOL &&
                  fabs(got.z - want.z) < 4 * QTOL && fabs(got.w - want.w) < 4 * QTOL,
              "rpy");
  }
  /* the twist about z of (rotation about z) * (rotation about x) is the z rotation */
  kn_quat tz = kn_quat_from_axis_angle_v3_f32(kn_make_v3(0, 0, 1), 0.8f);
  kn_quat sx = kn_quat_from_axis_angle_v3_f32(kn_make_v3(1, 0, 0), 0.3f);
  kn_quat tw = kn_quat_twist_v3_q(kn_make_v3(0, 0, 1), kn_quat_mul_q_q(tz, sx));
  cr_expect(fabs(tw.z - tz.z) < QTOL && fabs(tw.w - tz.w) < QTOL && tw.x == 0 && tw.y == 0);
  kn_quat id = kn_quat_identity();
  cr_expect(id.x == 0 && id.y == 0 && id.z == 0 && id.w == 1);
  kn_quat z = kn_normalize_q(kn_zero_q());
  cr_expect(z.w == 1 && z.x == 0, "a zero quat normalizes to the identity");
  kn_quat zi = kn_inverse_q(kn_zero_q());
  cr_expect(zi.w == 0 && zi.x == 0, "the inverse of zero is zero");
  kn_quat c = kn_quat_inverse_q((kn_quat){1, 2, 3, 4});
  kn_quat cj = kn_conjugate_q((kn_quat){1, 2, 3, 4});
  cr_expect(c.x == -1 && c.y == -2 && c.z == -3 && c.w == 4 && cj.x == -1 && cj.w == 4);
  kn_quat h = kn_div_q_f32((kn_quat){1, 2, 3, 4}, 2.0f);
  kn_quat l = kn_lerp_q_q_f32((kn_quat){0, 0, 0, 1}, (kn_quat){1, 0, 0, 0}, 0.25f);
  cr_expect(h.y == 1 && h.w == 2 && l.x == 0.25f && l.w == 0.75f);
  cr_expect_eq(kn_length_sq_q((kn_quat){1, 2, 3, 4}), 30.0f);
  /* from_matrix of a 4x4 uses its rotation block; each of Shepperd's branches */
  kn_quat qs[] = {{0, 0, 0, 1}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  for (int i = 0; i < 4; i++) {
    kn_mat33 r = kn_quat_to_matrix_q(qs[i]);
    kn_mat44 m = kn_identity_m44();
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) m.m[a][b] = r.m[a][b];
    kn_quat back = kn_quat_from_matrix_m44(m);
    cr_expect(fabs(fabs(kn_dot_q_q(back, qs[i])) - 1) < QTOL, "branch %d", i);
  }
}

/* ===== random helpers (Warp's formulas on kern's generator) =============== */

/* PCG-RXS-M-XS of one LCG step, written out independently (Warp's rand_pcg). */
static uint32_t pcg_ref(uint32_t x) {
  uint32_t b = x * 747796405u + 2891336453u;
  uint32_t c = ((b >> ((b >> 28u) + 4u)) ^ b) * 277803737u;
  return (c >> 22u) ^ c;
}

Test(random, init_randu_and_integer_ranges) {
  for (uint32_t seed = 0; seed < 1000; seed++) {
    cr_assert_eq(kn_rand_rand_init_1(seed * 7919u), pcg_ref(seed * 7919u));
    uint32_t s = kn_rand_rand_init_1(seed), t = s;
    cr_assert_eq(kn_rand_randu_1(&s), kn_randi(&t), "randu is the next draw");
    cr_assert_eq(s, t);
  }
  uint32_t s = kn_rand_rand_init_1(42u);
  int seen_u[10] = {0}, seen_i[10] = {0};
  for (int i = 0; i < 100000; i++) {
    uint32_t t = s, d = kn_randi(&t);
    uint32_t u = kn_rand_randu_3(&s, 10u, 20u);
    cr_assert_eq(u, d % 10u + 10u, "Warp's formula: state %% (max - min) + min");
    int32_t k = kn_rand_randi_3(&s, -5, 5);
    cr_assert(u >= 10u && u < 20u && k >= -5 && k < 5);
    seen_u[u - 10]++, seen_i[k + 5]++;
  }
  for (int i = 0; i < 10; i++)
    cr_expect(seen_u[i] > 9500 && seen_u[i] < 10500 && seen_i[i] > 9500 && seen_i[i] < 10500);
  uint32_t t = s, d = kn_randi(&t);
  cr_expect_eq(kn_rand_randu_3(&s, 7u, 7u), d + 7u, "an empty range leaves the draw (x %% 0 == x)");
}

Test(random, samples_follow_warps_formulas) {
  const double tau = 6.283185307179586;
  uint32_t s = kn_rand_rand_init_1(2024u);
  for (int i = 0; i < 20000; i++) {
    uint32_t t = s;
    /* disk: r = sqrt(u1), theta = 2 pi u2 */
    double r = sqrt((double)kn_randf(&t)), th = tau * kn_randf(&t);
    kn_vec2 d = kn_rand_sample_unit_disk_1(&s);
    cr_assert(fabs(d.x - r * cos(th)) < 2e-6 && fabs(d.y - r * sin(th)) < 2e-6, "disk");
    cr_assert(d.x * d.x + d.y * d.y <= 1.0f + 1e-6f);
    /* sphere: phi = acos(1 - 2 u1), theta = 2 pi u2, r = u3^(1/3) */
    t = s;
    double ph = acos(1.0 - 2.0 * kn_randf(&t)), th2 = tau * kn_randf(&t), rr = cbrt(kn_randf(&t));
    kn_vec3 b = kn_rand_sample_unit_sphere_1(&s);
    cr_assert(fabs(b.x - rr * cos(th2) * sin(ph)) < 4e-6 && fabs(b.z - rr * cos(ph)) < 4e-6,
              "ball");
    kn_vec3 u = kn_rand_sample_unit_sphere_surface_1(&s);
    cr_assert(fabs(kn_length_v3(u) - 1.0f) < 4e-6f, "sphere surface");
    kn_vec3 h = kn_rand_sample_unit_hemisphere_surface_1(&s);
    kn_vec3 hb = kn_rand_sample_unit_hemisphere_1(&s);
    cr_assert(h.z >= 0.0f && hb.z >= 0.0f && fabs(kn_length_v3(h) - 1.0f) < 4e-6f &&
                  kn_length_v3(hb) <= 1.0f + 4e-6f,
              "hemispheres");
    kn_vec2 g = kn_rand_sample_unit_ring_1(&s);
    cr_assert(fabs(kn_length_v2(g) - 1.0f) < 4e-6f, "ring");
    t = s;
    float sq = sqrtf(kn_randf(&t)), v = kn_randf(&t) * sq;
    kn_vec2 tri = kn_rand_sample_triangle_1(&s);
    cr_assert(tri.x == 1.0f - sq && tri.y == v && tri.x + tri.y <= 1.0f, "triangle");
    t = s;
    float c0 = kn_randf(&t) - 0.5f, c1 = kn_randf(&t) - 0.5f, c2 = kn_randf(&t) - 0.5f;
    kn_vec3 c = kn_rand_sample_unit_cube_1(&s);
    cr_assert(c.x == c0 && c.y == c1 && c.z == c2 && c.x >= -0.5f && c.x < 0.5f, "cube");
    kn_vec2 q = kn_rand_sample_unit_square_1(&s);
    kn_vec4 hc = kn_rand_sample_unit_hypercube_1(&s);
    cr_assert(q.y >= -0.5f && q.y < 0.5f && hc.w >= -0.5f && hc.w < 0.5f);
  }
}

Test(random, poisson_moments) {
  static const float lams[] = {0.5f, 3.5f, 9.9f, 10.0f, 40.0f, 1000.0f};
  for (int l = 0; l < 6; l++) {
    uint32_t s = kn_rand_init(7u, (uint32_t)l);
    double sum = 0, sq = 0, n = 200000;
    for (int i = 0; i < n; i++) {
      double k = kn_rand_poisson_2(&s, lams[l]);
      sum += k, sq += k * k;
    }
    double mean = sum / n, var = sq / n - mean * mean, lam = lams[l];
    /* the mean's standard error is sqrt(lam / n); allow 5 of them */
    cr_expect(fabs(mean - lam) < 5 * sqrt(lam / n), "poisson(%g): mean %g", lam, mean);
    cr_expect(fabs(var / lam - 1) < 0.03, "poisson(%g): variance %g", lam, var);
  }
  uint32_t s = 1u;
  cr_expect_eq(kn_rand_poisson_2(&s, 0.0f), 0u);
  cr_expect_eq(kn_rand_poisson_2(&s, NAN), 0u);
  cr_expect_eq(s, 1u, "no draw for lambda 0");
}

/* ===== bit casts ========================================================== */

Test(bits, bitcasts_against_memcpy) {
  for (int i = 0; i < 10000; i++) {
    uint64_t b = (uint64_t)(urand(0, 1) * 18446744073709551615.0) ^ (uint64_t)i;
    uint32_t w = (uint32_t)b;
    float f;
    double d;
    memcpy(&f, &w, 4);
    memcpy(&d, &b, 8);
    cr_assert_eq(kn_bitcast_uint32_f32(kn_bitcast_float32_u32(w)), w);
    cr_assert_eq(kn_bitcast_int32_f32(f), (int32_t)w);
    cr_assert_eq(kn_bitcast_uint64_f64(d), b);
    cr_assert_eq(kn_bitcast_int64_f64(kn_bitcast_float64_i64((int64_t)b)), (int64_t)b);
    cr_assert_eq(kn_bitcast_uint16_f16(kn_bitcast_float16_u16((uint16_t)b)), (uint16_t)b);
    cr_assert_eq(kn_bitcast_int16_f16(kn_bitcast_float16_i16((int16_t)b)), (int16_t)b);
  }
  cr_expect_eq(kn_bitcast_float32_u32(0x3f800000u), 1.0f);
  cr_expect_eq(kn_bitcast_float64_u64(0xc000000000000000ull), -2.0);
  cr_expect_eq(kn_cvt_f16_f32(kn_bitcast_float16_u16(0x3c00u)), 1.0f);
}
