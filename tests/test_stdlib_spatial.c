/* test_stdlib_spatial.c: stdlib/kern_transform.h and kern_spatial_algebra.h
 * against independent references.
 *
 * Requires the stdlib headers on the include path (compiled here as C, the
 * same text NVRTC compiles: tests/test_stdlib_table.c compiles every table entry
 * for both). References: the quaternion algebra written out here in double
 * precision (a rigid transform is x -> q x q* + p), and identities that must
 * hold whatever the rounding: a transform's inverse undoes it, the matrix
 * form acts like the transform, composition is application in turn. Spatial
 * algebra against Featherstone's cross-product matrices built here, and the
 * invariance of power (twist . wrench) under a change of frame. float64
 * quaternions (kern_quatn.h) against the same double algebra.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kern_builtins.h"
#include "kern_math.h"
#include "kern_spatial.h"
#include "kern_transform.h"
#include "kern_spatial_algebra.h"
#include "kern_linalg.h"
#include "kern_noise.h"
#include "kern_vecn.h"
#include "kern_quatn.h"

static uint64_t lcg = 0x2545f4914f6cdd1dull;
static double urand(double lo, double hi) {
  lcg ^= lcg << 13, lcg ^= lcg >> 7, lcg ^= lcg << 17;
  return lo + (hi - lo) * (double)(lcg >> 11) / 9007199254740992.0;
}

/* ===== a double-precision reference ========================================== */

typedef struct DXf {
  double p[3], q[4];
} DXf;

static void dq_mul(const double a[4], const double b[4], double r[4]) {
  double t[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                 a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                 a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                 a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
  memcpy(r, t, sizeof t);
}

/* q v q* as two Hamilton products. */
static void dq_rotate(const double q[4], const double v[3], double out[3]) {
  double p[4] = {v[0], v[1], v[2], 0}, c[4] = {-q[0], -q[1], -q[2], q[3]}, t[4], r[4];
  dq_mul(q, p, t);
  dq_mul(t, c, r);
  out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

static void dxf_point(const DXf *t, const double x[3], double out[3]) {
  dq_rotate(t->q, x, out);
  for (int k = 0; k < 3; k++) out[k] += t->p[k];
}

/* A random transform with a unit rotation, as float32 and as its exact double. */
static kn_transform random_xf(DXf *d) {
  double n = 0;
  for (int k = 0; k < 4; k++) d->q[k] = urand(-1, 1), n += d->q[k] * d->q[k];
  for (int k = 0; k < 4; k++) d->q[k] /= sqrt(n);
  for (int k = 0; k < 3; k++) d->p[k] = urand(-5, 5);
  kn_transform t = kn_make_tf((float)d->p[0], (float)d->p[1], (float)d->p[2], (float)d->q[0],
                              (float)d->q[1], (float)d->q[2], (float)d->q[3]);
  for (int k = 0; k < 7; k++) (k < 3 ? d->p : d->q - 3)[k] = kn_get_tf(t, k);
  return t;
}

static double dist3(kn_vec3 a, const double b[3]) {
  return fmax(fabs(a.x - b[0]), fmax(fabs(a.y - b[1]), fabs(a.z - b[2])));
}

#define TOL 2e-5 /* coordinates up to ~10: a few float32 ulps */

/* ===== transforms ============================================================ */

Test(transforms, point_vector_and_inverse_against_double_reference) {
  for (int i = 0; i < 5000; i++) {
    DXf d;
    kn_transform t = random_xf(&d);
    double v[3] = {urand(-3, 3), urand(-3, 3), urand(-3, 3)}, want[3], rot[3];
    kn_vec3 x = kn_make_v3((float)v[0], (float)v[1], (float)v[2]);
    for (int k = 0; k < 3; k++) v[k] = kn_get_v3(x, k);
    dxf_point(&d, v, want);
    dq_rotate(d.q, v, rot);
    cr_assert_lt(dist3(kn_transform_point_tf_v3(t, x), want), TOL, "transform_point");
    cr_assert_lt(dist3(kn_transform_vector_tf_v3(t, x), rot), TOL, "transform_vector");
    /* the inverse undoes the transform, in both orders */
    kn_transform inv = kn_transform_inverse_tf(t);
    kn_vec3 back = kn_transform_point_tf_v3(inv, kn_transform_point_tf_v3(t, x));
    cr_assert_lt(dist3(back, v), 2 * TOL, "inverse(t)(t(x)) == x");
    kn_transform one = kn_transform_multiply_tf_tf(t, inv);
    cr_assert(fabs(one.q.w - 1) < 1e-6 && fabs(one.p.x) < TOL && fabs(one.p.z) < TOL, "t * inv(t)");
    /* the matrix acts like the transform; from_matrix gives it back (q or -q) */
    kn_mat44 m = kn_transform_to_matrix_tf(t);
    cr_assert_lt(dist3(kn_transform_point_m44_v3(m, x), want), TOL, "matrix point");
    cr_assert_lt(dist3(kn_transform_vector_m44_v3(m, x), rot), TOL, "matrix vector");
    cr_assert(m.m[3][0] == 0 && m.m[3][1] == 0 && m.m[3][2] == 0 && m.m[3][3] == 1);
    kn_transform b = kn_transform_from_matrix_m44(m);
    double sg = kn_dot_q_q(b.q, t.q) < 0 ? -1 : 1;
    for (int k = 0; k < 7; k++)
      cr_assert_lt(fabs((k < 3 ? 1 : sg) * kn_get_tf(b, k) - kn_get_tf(t, k)), 1e-5,
                   "from_matrix component %d", k);
    /* compose with unit scale is to_matrix; a scale scales R's columns */
    kn_mat44 c1 = kn_transform_compose_v3_q_v3(t.p, t.q, kn_splat_v3(1.0f));
    cr_assert(memcmp(&c1, &m, sizeof m) == 0, "compose(p, q, 1) == to_matrix");
    kn_mat44 c2 = kn_transform_compose_v3_q_v3(t.p, t.q, kn_make_v3(2, 3, 4));
    for (int r = 0; r < 3; r++)
      cr_assert(c2.m[r][0] == 2 * m.m[r][0] && c2.m[r][2] == 4 * m.m[r][2], "scaled column");
  }
}

Test(transforms, multiply_is_application_in_turn) {
  for (int i = 0; i < 5000; i++) {
    DXf da, db, dab;
    kn_transform a = random_xf(&da), b = random_xf(&db);
    double v[3] = {urand(-3, 3), urand(-3, 3), urand(-3, 3)}, vb[3], want[3];
    kn_vec3 x = kn_make_v3((float)v[0], (float)v[1], (float)v[2]);
    for (int k = 0; k < 3; k++) v[k] = kn_get_v3(x, k);
    dxf_point(&db, v, vb);
    dxf_point(&da, vb, want);
    kn_transform ab = kn_mul_tf_tf(a, b);
    cr_assert(memcmp(&ab,
                     &(kn_transform){kn_transform_multiply_tf_tf(a, b).p,
                                     kn_transform_multiply_tf_tf(a, b).q},
                     sizeof ab) == 0);
    cr_assert_lt(dist3(kn_transform_point_tf_v3(ab, x), want), 4 * TOL, "(a * b)(x) == a(b(x))");
    /* the product's rotation is the Hamilton product (double reference) */
    dq_mul(da.q, db.q, dab.q);
    for (int k = 0; k < 4; k++) cr_assert_lt(fabs(kn_get_q(ab.q, k) - dab.q[k]), 1e-6);
  }
}

Test(transforms, componentwise_operators_and_access) {
  kn_transform a = kn_make_tf(1, 2, 3, 0, 0.6f, 0, 0.8f), b = kn_make_tf(-1, 0.5f, 4, 1, 0, 0, 0);
  kn_transform s = kn_add_tf_tf(a, b), d = kn_sub_tf_tf(a, b), n = kn_neg_tf(a);
  kn_transform m = kn_mul_tf_f32(a, 2.0f), m2 = kn_mul_f32_tf(2.0f, a);
  kn_transform l = kn_lerp_tf_tf_f32(a, b, 0.25f);
  for (int k = 0; k < 7; k++) {
    float x = kn_get_tf(a, k), y = kn_get_tf(b, k);
    cr_assert_eq(kn_get_tf(s, k), x + y);
    cr_assert_eq(kn_get_tf(d, k), x - y);
    cr_assert_eq(kn_get_tf(n, k), -x);
    cr_assert(kn_get_tf(m, k) == 2 * x && kn_get_tf(m2, k) == 2 * x);
    cr_assert_eq(kn_get_tf(l, k), x + (y - x) * 0.25f);
  }
  /* indices clamp like a vector's; the 7 floats are contiguous */
  cr_assert(kn_get_tf(a, -4) == 1 && kn_get_tf(a, 99) == 0.8f && kn_get_tf(a, 4) == 0.6f);
  *kn_getp_tf(&a, 5) = 9;
  cr_assert_eq(((float *)&a)[5], 9);
  cr_assert_eq(a.q.z, 9);
  kn_transform t = kn_transform_identity();
  kn_transform_set_translation_ptf_v3(&t, kn_make_v3(4, 5, 6));
  kn_transform_set_rotation_ptf_q(&t, b.q);
  cr_assert(kn_eq_v3_v3(kn_transform_get_translation_tf(t), kn_make_v3(4, 5, 6)));
  cr_assert(kn_eq_q_q(kn_transform_get_rotation_tf(t), b.q));
  cr_assert(kn_eq_tf_tf(t, kn_make_tf_pq(kn_make_v3(4, 5, 6), b.q)) && !kn_ne_tf_tf(t, t));
  cr_assert(kn_ne_tf_tf(t, kn_zero_tf()));
  /* -0 == +0; a NaN makes them unequal and is found */
  cr_assert(kn_eq_tf_tf(kn_zero_tf(), kn_neg_tf(kn_zero_tf())));
  kn_transform bad = t;
  bad.q.x = NAN;
  cr_assert(!kn_eq_tf_tf(bad, bad) && kn_isnan_tf(bad) && !kn_isfinite_tf(bad));
  bad.q.x = 0, bad.p.y = INFINITY;
  cr_assert(kn_isinf_tf(bad) && !kn_isnan_tf(bad) && kn_isfinite_tf(t));
}

/* ===== spatial vectors and matrices ========================================== */

static kn_spatial_vector random_sv(double d[6]) {
  kn_spatial_vector s;
  for (int k = 0; k < 6; k++) s.v[k] = (float)urand(-2, 2), d[k] = s.v[k];
  return s;
}

/* Featherstone's motion cross-product matrix of a = (w, v): [w x, 0; v x, w x]. */
static void crm(const double a[6], double m[6][6]) {
  double w[3] = {a[0], a[1], a[2]}, v[3] = {a[3], a[4], a[5]};
  double sw[3][3] = {{0, -w[2], w[1]}, {w[2], 0, -w[0]}, {-w[1], w[0], 0}};
  double sv[3][3] = {{0, -v[2], v[1]}, {v[2], 0, -v[0]}, {-v[1], v[0], 0}};
  memset(m, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      m[i][j] = m[i + 3][j + 3] = sw[i][j];
      m[i + 3][j] = sv[i][j];
    }
}

static double dot6(const double *a, const double *b) {
  double s = 0;
  for (int k = 0; k < 6; k++) s += a[k] * b[k];
  return s;
}

Test(spatial, cross_products_are_featherstones_matrices) {
  for (int i = 0; i < 5000; i++) {
    double a[6], b[6], m[6][6];
    kn_spatial_vector sa = random_sv(a), sb = random_sv(b);
    crm(a, m);
    kn_spatial_vector c = kn_spatial_cross_sv_sv(sa, sb), d = kn_spatial_cross_dual_sv_sv(sa, sb);
    for (int r = 0; r < 6; r++) {
      double want_c = 0, want_d = 0;
      for (int k = 0; k < 6; k++) want_c += m[r][k] * b[k], want_d -= m[k][r] * b[k];
      cr_assert_lt(fabs(c.v[r] - want_c), 1e-5, "spatial_cross row %d", r);
      cr_assert_lt(fabs(d.v[r] - want_d), 1e-5, "spatial_cross_dual row %d: crf = -crm^T", r);
    }
    cr_assert_lt(fabs(kn_spatial_dot_sv_sv(sa, sb) - dot6(a, b)), 1e-5);
    cr_assert(kn_eq_v3_v3(kn_spatial_top_sv(sa), kn_make_v3(sa.v[0], sa.v[1], sa.v[2])));
    cr_assert(kn_eq_v3_v3(kn_spatial_bottom_sv(sa), kn_make_v3(sa.v[3], sa.v[4], sa.v[5])));
    kn_spatial_vector cc = kn_spatial_cross_sv_sv(sa, sa);
    cr_assert_lt(kn_length_sv(cc), 1e-5, "a x a == 0");
  }
}

Test(spatial, matrices_against_double_reference) {
  for (int i = 0; i < 500; i++) {
    double a[6], b[6], ma[6][6], mb[6][6];
    kn_spatial_vector sa = random_sv(a), sb = random_sv(b);
    kn_spatial_matrix A, B;
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 6; c++) {
        A.m[r][c] = (float)urand(-1, 1), ma[r][c] = A.m[r][c];
        B.m[r][c] = (float)urand(-1, 1), mb[r][c] = B.m[r][c];
      }
    kn_spatial_matrix ab = kn_mul_m66_m66(A, B), t = kn_transpose_m66(A),
                      o = kn_outer_sv_sv(sa, sb);
    kn_spatial_vector av = kn_mul_m66_sv(A, sa);
    for (int r = 0; r < 6; r++) {
      double want_v = 0;
      for (int k = 0; k < 6; k++) want_v += ma[r][k] * a[k];
      cr_assert_lt(fabs(av.v[r] - want_v), 1e-5, "m * v");
      for (int c = 0; c < 6; c++) {
        double want = 0;
        for (int k = 0; k < 6; k++) want += ma[r][k] * mb[k][c];
        cr_assert_lt(fabs(ab.m[r][c] - want), 1e-5, "m * m");
        cr_assert_eq(t.m[r][c], A.m[c][r]);
        cr_assert_eq(o.m[r][c], sa.v[r] * sb.v[c]);
      }
    }
    kn_spatial_matrix s = kn_sub_m66_m66(kn_add_m66_m66(A, B), B);
    cr_assert(kn_eq_m66_m66(kn_mul_m66_m66(A, kn_identity_m66()), A) && kn_isfinite_m66(s));
    cr_assert(kn_eq_m66_m66(kn_diag_m66(3), kn_mul_f32_m66(3, kn_identity_m66())));
  }
}

/* A change of frame maps twists and wrenches so that their power, dot(twist,
 * wrench), is unchanged; the adjoint matrix does what transform_twist does. */
Test(spatial, twists_and_wrenches_change_frames) {
  for (int i = 0; i < 5000; i++) {
    DXf d;
    double a[6], b[6];
    kn_transform t = random_xf(&d);
    kn_spatial_vector v = random_sv(a), f = random_sv(b);
    kn_spatial_vector tv = kn_transform_twist_tf_sv(t, v), tf = kn_transform_wrench_tf_sv(t, f);
    cr_assert_lt(fabs(kn_dot_sv_sv(tv, tf) - dot6(a, b)), 2e-4, "power is invariant");
    kn_mat33 r = kn_quat_to_matrix_q(t.q);
    kn_spatial_matrix x = kn_spatial_adjoint_m33_m33(r, kn_mul_m33_m33(kn_skew_v3(t.p), r));
    kn_spatial_vector xv = kn_mul_m66_sv(x, v);
    for (int k = 0; k < 6; k++) cr_assert_lt(fabs(xv.v[k] - tv.v[k]), 1e-4, "adjoint row %d", k);
    kn_spatial_vector back = kn_transform_twist_tf_sv(kn_transform_inverse_tf(t), tv);
    for (int k = 0; k < 6; k++) cr_assert_lt(fabs(back.v[k] - a[k]), 1e-4, "inverse twist");
    /* the linear velocity at the origin of t's frame, seen from outside */
    double w[3] = {tv.v[0], tv.v[1], tv.v[2]}, p[3] = {t.p.x, t.p.y, t.p.z};
    kn_vec3 at = kn_velocity_at_point_sv_v3(tv, t.p);
    double want[3] = {tv.v[3] + w[1] * p[2] - w[2] * p[1], tv.v[4] + w[2] * p[0] - w[0] * p[2],
                      tv.v[5] + w[0] * p[1] - w[1] * p[0]};
    cr_assert_lt(dist3(at, want), 1e-4, "velocity_at_point");
  }
}

Test(spatial, componentwise_and_access) {
  double a[6], b[6];
  kn_spatial_vector x = random_sv(a), y = random_sv(b);
  kn_spatial_vector s = kn_add_sv_sv(x, y), m = kn_mul_sv_f32(x, 2), q = kn_div_sv_sv(x, y);
  for (int k = 0; k < 6; k++) {
    cr_assert(s.v[k] == x.v[k] + y.v[k] && m.v[k] == x.v[k] * 2 && q.v[k] == x.v[k] / y.v[k]);
    cr_assert(kn_get_sv(x, k) == x.v[k] && kn_neg_sv(x).v[k] == -x.v[k]);
  }
  cr_assert(kn_get_sv(x, -3) == x.v[0] && kn_get_sv(x, 40) == x.v[5], "indices clamp");
  kn_spatial_vector n = kn_normalize_sv(x);
  cr_assert_lt(fabs(kn_length_sv(n) - 1), 1e-6);
  cr_assert(kn_eq_sv_sv(kn_normalize_sv(kn_zero_sv()), kn_zero_sv()), "zero stays zero");
  kn_spatial_vector w = kn_make_sv_wv(kn_make_v3(1, 2, 3), kn_make_v3(4, 5, 6));
  cr_assert(kn_eq_sv_sv(w, kn_make_sv(1, 2, 3, 4, 5, 6)) && kn_ne_sv_sv(w, x));
  w.v[4] = NAN;
  cr_assert(kn_isnan_sv(w) && !kn_isfinite_sv(w) && !kn_eq_sv_sv(w, w));
  kn_spatial_matrix mm = kn_make_m66_rows(x, y, x, y, x, y);
  cr_assert(kn_eq_sv_sv(kn_get_m66_row(mm, 3), y) && kn_get_m66(mm, 9, -1) == y.v[0]);
}

/* ===== float64 quaternions (kern_quatn.h) ===================================== */

static kn_quatd qd_of(const double q[4]) { return kn_make_qd(q[0], q[1], q[2], q[3]); }

/* A random unit quaternion, its components in double. */
static void random_unit(double q[4]) {
  double n = 0;
  for (int k = 0; k < 4; k++) q[k] = urand(-1, 1), n += q[k] * q[k];
  for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
}

static void expect_q(kn_quatd got, const double want[4], double tol, const char *what) {
  const double g[4] = {got.x, got.y, got.z, got.w};
  for (int k = 0; k < 4; k++)
    cr_expect(fabs(g[k] - want[k]) <= tol, "%s[%d]: %.17g, want %.17g", what, k, g[k], want[k]);
}

Test(quatd, products_and_rotations_against_double_reference) {
  for (int it = 0; it < 200; it++) {
    double a[4], b[4], ab[4], v[3], r[3], ri[3], c[4];
    random_unit(a);
    random_unit(b);
    for (int k = 0; k < 3; k++) v[k] = urand(-10, 10);
    dq_mul(a, b, ab);
    expect_q(kn_quat_mul_qd_qd(qd_of(a), qd_of(b)), ab, 1e-15, "quat_mul");
    dq_rotate(a, v, r);
    kn_dvec3 got = kn_quat_rotate_qd_dv3(qd_of(a), kn_make_dv3(v[0], v[1], v[2]));
    const double gv[3] = {got.x, got.y, got.z};
    for (int k = 0; k < 3; k++) cr_expect(fabs(gv[k] - r[k]) <= 1e-13, "rotate[%d]", k);
    c[0] = -a[0], c[1] = -a[1], c[2] = -a[2], c[3] = a[3];
    dq_rotate(c, v, ri);
    got = kn_quat_rotate_inv_qd_dv3(qd_of(a), kn_make_dv3(v[0], v[1], v[2]));
    const double gi[3] = {got.x, got.y, got.z};
    for (int k = 0; k < 3; k++) cr_expect(fabs(gi[k] - ri[k]) <= 1e-13, "rotate_inv[%d]", k);
    expect_q(kn_conjugate_qd(qd_of(a)), c, 0, "conjugate");
    /* inverse(q) * q is the identity for any q, unit or not */
    double s[4] = {3 * a[0], 3 * a[1], 3 * a[2], 3 * a[3]}, one[4] = {0, 0, 0, 1};
    expect_q(kn_quat_mul_qd_qd(kn_inverse_qd(qd_of(s)), qd_of(s)), one, 1e-15, "inverse");
    cr_expect(fabs(kn_length_qd(qd_of(s)) - 3) <= 1e-15);
    expect_q(kn_normalize_qd(qd_of(s)), a, 1e-15, "normalize");
  }
}

Test(quatd, axis_angle_rpy_and_matrices_against_double_reference) {
  for (int it = 0; it < 200; it++) {
    double axis[3], n = 0, angle = urand(-3, 3);
    for (int k = 0; k < 3; k++) axis[k] = urand(-1, 1), n += axis[k] * axis[k];
    n = sqrt(n);
    double want[4] = {axis[0] / n * sin(angle / 2), axis[1] / n * sin(angle / 2),
                      axis[2] / n * sin(angle / 2), cos(angle / 2)};
    kn_quatd q = kn_quat_from_axis_angle_dv3_f64(kn_make_dv3(axis[0], axis[1], axis[2]), angle);
    expect_q(q, want, 1e-15, "from_axis_angle");
    kn_dvec4 aa = kn_quat_to_axis_angle_qd(q);
    cr_expect(fabs(aa.w - fabs(angle)) <= 1e-14, "angle %.17g, want %.17g", aa.w, fabs(angle));
    /* rpy is roll about x, then pitch about y, then yaw about z */
    double r = urand(-3, 3), p = urand(-1.5, 1.5), y = urand(-3, 3), t[4], rpy[4];
    double qr[4] = {sin(r / 2), 0, 0, cos(r / 2)}, qp[4] = {0, sin(p / 2), 0, cos(p / 2)},
           qy[4] = {0, 0, sin(y / 2), cos(y / 2)};
    dq_mul(qy, qp, t);
    dq_mul(t, qr, rpy);
    expect_q(kn_quat_rpy_f64_f64_f64(r, p, y), rpy, 1e-15, "rpy");
    /* the matrix's columns are the rotated basis; back to q (or -q) */
    double m[9], back[3][4];
    kn__quat_to_rows_qd(q, m);
    for (int col = 0; col < 3; col++) {
      double e[3] = {col == 0, col == 1, col == 2}, c[3];
      dq_rotate(want, e, c);
      for (int row = 0; row < 3; row++)
        cr_expect(fabs(m[row * 3 + col] - c[row]) <= 1e-15, "matrix[%d][%d]", row, col);
    }
    for (int i = 0; i < 9; i++) back[i / 3][i % 3] = m[i];
    kn_quatd b = kn__quat_from_rows_qd(back);
    double sign = b.w * want[3] + b.x * want[0] + b.y * want[1] + b.z * want[2] < 0 ? -1 : 1;
    double wb[4] = {sign * want[0], sign * want[1], sign * want[2], sign * want[3]};
    expect_q(b, wb, 1e-14, "from_matrix");
  }
}

Test(quatd, slerp_ends_and_conversions) {
  double a[4], b[4];
  random_unit(a);
  random_unit(b);
  expect_q(kn_quat_slerp_qd_qd_f64(qd_of(a), qd_of(b), 0), a, 1e-15, "slerp at 0");
  kn_quatd e = kn_quat_slerp_qd_qd_f64(qd_of(a), qd_of(b), 1);
  double sign = e.x * b[0] + e.y * b[1] + e.z * b[2] + e.w * b[3] < 0 ? -1 : 1;
  double wb[4] = {sign * b[0], sign * b[1], sign * b[2], sign * b[3]};
  expect_q(e, wb, 1e-14, "slerp at 1");
  /* float32 -> float64 is exact; float64 -> float32 rounds each component once */
  kn_quatd w = kn_cvt_q_qd(kn_make_q(0.1f, -2.5f, 3.0f, 1e-3f));
  double want[4] = {(double)0.1f, -2.5, 3.0, (double)1e-3f};
  expect_q(w, want, 0, "float32 to float64");
  kn_quat f = kn_cvt_qd_q(kn_make_qd(0.1, 1.0 / 3.0, -1e30, 2.0));
  cr_expect(f.x == 0.1f && f.y == (float)(1.0 / 3.0) && f.z == (float)-1e30 && f.w == 2.0f);
}
