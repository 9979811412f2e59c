/* test_stdlib_linalg.c: stdlib/kern_linalg.h (svd3, svd2, qr3, eig3), and
 * the determinant, inverse and trace of mat<T, N, N> (stdlib/kern_vecn.h),
 * against independent references.
 *
 * Requires the stdlib headers on the include path (compiled here as C, the
 * same text NVRTC compiles: tests/test_stdlib_table.c compiles every table entry
 * for both). References: the identities a decomposition must satisfy,
 * checked in double (U diag(sigma) V^T == A, Q R == A, Q diag(d) Q^T == A,
 * orthogonality, the determinants of the rotations), and eigenvalues and
 * singular values from the closed-form roots of the characteristic
 * polynomial (Smith's trigonometric formula) in long double. Matrices:
 * random, of rank 2, 1 and 0, with repeated and nearly equal values,
 * negative determinants, and scaled by 1e-30 and 1e30. mat<T, N, N> for
 * float16, bfloat16 and float64, N = 2, 3, 4: determinants against the
 * Leibniz sum in long double, inverses against Gauss-Jordan elimination in
 * long double, each within the rounding of T plus the error of the
 * arithmetic kern computes in (float32 for the 16-bit types, float64).
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

static uint64_t lcg = 0x853c49e6748fea9bull;
static double urand(double lo, double hi) {
  lcg ^= lcg << 13, lcg ^= lcg >> 7, lcg ^= lcg << 17;
  return lo + (hi - lo) * (double)(lcg >> 11) / 9007199254740992.0;
}

/* ===== references ============================================================ */

/* The eigenvalues of the symmetric s, ascending (Smith 1961, in long double). */
static void sym_eigs(const long double s[3][3], long double e[3]) {
  long double p1 = s[0][1] * s[0][1] + s[0][2] * s[0][2] + s[1][2] * s[1][2];
  long double q = (s[0][0] + s[1][1] + s[2][2]) / 3;
  long double p2 = (s[0][0] - q) * (s[0][0] - q) + (s[1][1] - q) * (s[1][1] - q) +
                   (s[2][2] - q) * (s[2][2] - q) + 2 * p1;
  long double p = sqrtl(p2 / 6);
  if (p == 0) {
    e[0] = e[1] = e[2] = q;
    return;
  }
  long double b[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) b[i][j] = (s[i][j] - (i == j ? q : 0)) / p;
  long double r = (b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
                   b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
                   b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0])) /
                  2;
  long double phi = r <= -1 ? acosl(-1.0L) / 3 : r >= 1 ? 0 : acosl(r) / 3;
  e[2] = q + 2 * p * cosl(phi);
  e[0] = q + 2 * p * cosl(phi + 2 * acosl(-1.0L) / 3);
  e[1] = 3 * q - e[0] - e[2];
}

/* The singular values of a, descending: square roots of A^T A's eigenvalues
 * (so at a repeated root only about sqrt(eps) of A's scale accurate). */
static void sing_values(const kn_mat33 *a, long double sv[3]) {
  long double s[3][3], e[3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      s[i][j] = 0;
      for (int k = 0; k < 3; k++) s[i][j] += (long double)a->m[k][i] * a->m[k][j];
    }
  sym_eigs(s, e);
  for (int i = 0; i < 3; i++) sv[i] = sqrtl(e[2 - i] > 0 ? e[2 - i] : 0);
}

static double det3(const kn_mat33 *m) {
  const float(*a)[3] = m->m;
  return (double)a[0][0] * ((double)a[1][1] * a[2][2] - (double)a[1][2] * a[2][1]) -
         (double)a[0][1] * ((double)a[1][0] * a[2][2] - (double)a[1][2] * a[2][0]) +
         (double)a[0][2] * ((double)a[1][0] * a[2][1] - (double)a[1][1] * a[2][0]);
}

static double max_abs(const kn_mat33 *m) {
  double r = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r = fmax(r, fabs(m->m[i][j]));
  return r;
}

/* max |Q^T Q - I| */
static double orth_err(const kn_mat33 *q) {
  double e = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++) s += (double)q->m[k][i] * q->m[k][j];
      e = fmax(e, fabs(s - (i == j)));
    }
  return e;
}

/* max |L diag(d) R^T - A| (R^T: transpose = true) or |L R - A| (d NULL). */
static double recon_err(const kn_mat33 *l, const double *d, const kn_mat33 *r, bool transpose,
                        const kn_mat33 *a) {
  double e = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++)
        s += (double)l->m[i][k] * (d ? d[k] : 1) * (transpose ? r->m[j][k] : r->m[k][j]);
      e = fmax(e, fabs(s - a->m[i][j]));
    }
  return e;
}

/* A rotation from a random unit quaternion, in double. */
static void random_rotation(double r[3][3]) {
  double q[4], n = 0;
  for (int k = 0; k < 4; k++) q[k] = urand(-1, 1), n += q[k] * q[k];
  for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
  double x = q[0], y = q[1], z = q[2], w = q[3];
  double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                    {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                    {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
  memcpy(r, m, sizeof m);
}

/* R1 diag(s) R2^T rounded to float32 (s may repeat, be 0 or negative). */
static kn_mat33 with_values(double s0, double s1, double s2) {
  double a[3][3], b[3][3], s[3] = {s0, s1, s2};
  random_rotation(a);
  random_rotation(b);
  kn_mat33 m;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0;
      for (int k = 0; k < 3; k++) v += a[i][k] * s[k] * b[j][k];
      m.m[i][j] = (float)v;
    }
  return m;
}

/* Test case k of the matrix families. */
static kn_mat33 family(int k) {
  double sc = k % 7 == 5 ? 1e-30 : k % 7 == 6 ? 1e30 : 1;
  kn_mat33 m;
  double x = urand(0, 3), y = urand(0, 3), z = urand(0, 3); /* in this order on every compiler */
  switch (k % 9) {
    case 0: return with_values(x * sc, y * sc, -z * sc);
    case 1: return with_values(2 * sc, 2 * sc, 2 * sc); /* a multiple of a rotation */
    case 2: return with_values(3 * sc, 1 * sc, 0);      /* rank 2 */
    case 3: return with_values(sc, 0, 0);               /* rank 1 */
    case 4: return with_values(1, 1e-3, 1e-6);          /* badly conditioned */
    case 5: return with_values(1, 1 + 1e-6, 0.5);       /* nearly equal values */
    case 6: memset(&m, 0, sizeof m); return m;          /* zero */
    default:
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m.m[i][j] = (float)(urand(-4, 4) * sc);
      return m;
  }
}

/* gcc 12 at -O2, having vectorized the float32 rounding of the results
 * (tree-slp-vectorize), folds a later (double)(float)x of them back to the
 * unrounded x, a compiler bug: the tests that widen results read them
 * through a call it cannot see into. */
__attribute__((noinline)) static kn_vec3 opaque_v3(kn_vec3 v) {
  __asm__ volatile("" : : "r"(&v) : "memory");
  return v;
}
__attribute__((noinline)) static kn_vec2 opaque_v2(kn_vec2 v) {
  __asm__ volatile("" : : "r"(&v) : "memory");
  return v;
}

/* ===== svd3 ================================================================= */

Test(linalg, svd3_reconstructs_with_rotations_and_sorted_values) {
  for (int k = 0; k < 20000; k++) {
    kn_mat33 a = family(k), u, v;
    kn_vec3 sg;
    kn_svd3_m33_pm33_pv3_pm33(a, &u, &sg, &v);
    sg = opaque_v3(sg);
    double s[3] = {sg.x, sg.y, sg.z}, big = max_abs(&a);
    cr_assert(s[0] >= s[1] && s[1] >= fabs(s[2]) && s[1] >= 0, "case %d: %.9g %.9g %.9g", k, s[0],
              s[1], s[2]);
    cr_assert_lt(orth_err(&u), 1e-6, "case %d: U orthogonal", k);
    cr_assert_lt(orth_err(&v), 1e-6, "case %d: V orthogonal", k);
    cr_assert_lt(fabs(det3(&u) - 1), 1e-6, "case %d: det U = 1", k);
    cr_assert_lt(fabs(det3(&v) - 1), 1e-6, "case %d: det V = 1", k);
    cr_assert_leq(recon_err(&u, s, &v, true, &a), 2e-6 * big, "case %d: U S V^T == A", k);
    /* sigma^2 against A^T A's eigenvalues (compared squared: the closed form
     * is only sqrt(eps) accurate at a repeated root), and |det A| */
    long double ref[3], b2 = (long double)big * big;
    sing_values(&a, ref);
    for (int i = 0; i < 3; i++)
      cr_assert_leq(fabsl((long double)s[i] * s[i] - ref[i] * ref[i]), 1e-6L * b2,
                    "case %d sigma %d: %g vs %Lg", k, i, s[i], ref[i]);
    double d = det3(&a);
    cr_assert_leq(fabsl(fabsl((long double)s[0] * s[1] * s[2]) - fabsl(d)), 1e-6L * b2 * big,
                  "case %d: sigma0 sigma1 sigma2 == |det A|", k);
    if (fabs(d) > 1e-6 * big * big * big)
      cr_assert((s[2] < 0) == (d < 0), "case %d: sigma[2] has det's sign", k);
  }
}

/* Small singular values keep their own relative accuracy (one-sided Jacobi). */
Test(linalg, svd3_small_values_are_relatively_accurate) {
  for (int k = 0; k < 2000; k++) {
    double s[3][3], r1[3][3], r2[3][3];
    random_rotation(r1);
    random_rotation(r2);
    kn_mat33 a; /* r1 diag(1, 1e-3, 1e-6) r2^T, rounded to float32 */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        s[i][j] = r1[i][0] * r2[j][0] + r1[i][1] * 1e-3 * r2[j][1] + r1[i][2] * 1e-6 * r2[j][2];
        a.m[i][j] = (float)s[i][j];
      }
    kn_mat33 u, v;
    kn_vec3 sg;
    kn_svd3_m33_pm33_pv3_pm33(a, &u, &sg, &v);
    sg = opaque_v3(sg);
    /* the float32 matrix's smallest value: |det A| / (sigma0 sigma1), det in long double */
    const float(*m)[3] = a.m;
    long double det =
        (long double)m[0][0] * ((long double)m[1][1] * m[2][2] - (long double)m[1][2] * m[2][1]) -
        (long double)m[0][1] * ((long double)m[1][0] * m[2][2] - (long double)m[1][2] * m[2][0]) +
        (long double)m[0][2] * ((long double)m[1][0] * m[2][1] - (long double)m[1][1] * m[2][0]);
    long double want = fabsl(det) / ((long double)sg.x * sg.y);
    cr_assert_leq(fabsl(fabsl(sg.z) - want), 1e-4L * want, "case %d: %g vs %Lg", k, sg.z, want);
  }
}

Test(linalg, svd3_writes_its_outputs_in_order) {
  kn_mat33 a = family(0), u, v, w;
  kn_vec3 s;
  kn_svd3_m33_pm33_pv3_pm33(a, &u, &s, &v);
  kn_svd3_m33_pm33_pv3_pm33(a, &w, &s, &w); /* U and V in one variable: V wins */
  cr_assert(memcmp(&w, &v, sizeof v) == 0);
  kn_mat33 nan = a;
  nan.m[1][2] = NAN;
  kn_svd3_m33_pm33_pv3_pm33(nan, &u, &s, &v); /* returns (with NaNs) */
  cr_assert(kn_isnan_v3(s) || kn_isnan_m33(u) || kn_isnan_m33(v));
}

/* ===== svd2 ================================================================= */

Test(linalg, svd2_reconstructs_with_nonnegative_values) {
  for (int k = 0; k < 20000; k++) {
    double sc = k % 5 == 3 ? 1e-30 : k % 5 == 4 ? 1e30 : 1;
    kn_mat22 a = kn_make_m22((float)(urand(-3, 3) * sc), (float)(urand(-3, 3) * sc),
                             (float)(urand(-3, 3) * sc), (float)(urand(-3, 3) * sc));
    if (k % 11 == 0) a.m[1][0] = a.m[0][0] * 2, a.m[1][1] = a.m[0][1] * 2; /* rank 1 */
    if (k % 13 == 0) memset(&a, 0, sizeof a);
    kn_mat22 u, v;
    kn_vec2 s;
    kn_svd2_m22_pm22_pv2_pm22(a, &u, &s, &v);
    s = opaque_v2(s);
    double big =
        fmax(fmax(fabs(a.m[0][0]), fabs(a.m[0][1])), fmax(fabs(a.m[1][0]), fabs(a.m[1][1])));
    cr_assert(s.x >= s.y && s.y >= 0, "case %d: %g %g", k, s.x, s.y);
    double du = (double)u.m[0][0] * u.m[1][1] - (double)u.m[0][1] * u.m[1][0];
    double dv = (double)v.m[0][0] * v.m[1][1] - (double)v.m[0][1] * v.m[1][0];
    double da = (double)a.m[0][0] * a.m[1][1] - (double)a.m[0][1] * a.m[1][0];
    cr_assert_lt(fabs(dv - 1), 1e-6, "case %d: V a rotation", k);
    cr_assert_lt(fabs(fabs(du) - 1), 1e-6, "case %d: U orthogonal", k);
    if (fabs(da) > 1e-6 * big * big) cr_assert((du < 0) == (da < 0), "case %d: det U", k);
    double sv[2] = {s.x, s.y};
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) {
        double r = 0;
        for (int m = 0; m < 2; m++) r += (double)u.m[i][m] * sv[m] * v.m[j][m];
        cr_assert_leq(fabs(r - a.m[i][j]), 2e-6 * big, "case %d: U S V^T == A", k);
      }
    /* sigma^2: the eigenvalues of A^T A, (t +- sqrt(t^2 - 4 det^2)) / 2, in long double */
    long double t = 0, dd = (long double)a.m[0][0] * a.m[1][1] - (long double)a.m[0][1] * a.m[1][0];
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) t += (long double)a.m[i][j] * a.m[i][j];
    long double root = sqrtl(fmaxl(t * t - 4 * dd * dd, 0));
    long double s0 = sqrtl((t + root) / 2), s1 = fabsl(dd) / (s0 > 0 ? s0 : 1);
    cr_assert_leq(fabsl(s.x - s0), 1e-6L * big, "case %d sigma 0", k);
    cr_assert_leq(fabsl(s.y - s1), 1e-6L * big, "case %d sigma 1", k);
  }
}

/* ===== qr3 =================================================================== */

Test(linalg, qr3_is_a_rotation_times_upper_triangular) {
  for (int k = 0; k < 20000; k++) {
    kn_mat33 a = family(k), q, r;
    kn_qr3_m33_pm33_pm33(a, &q, &r);
    double big = max_abs(&a), d = det3(&a);
    cr_assert(r.m[1][0] == 0 && r.m[2][0] == 0 && r.m[2][1] == 0, "case %d: R upper", k);
    cr_assert(r.m[0][0] >= 0 && r.m[1][1] >= 0, "case %d: R's first pivots >= 0", k);
    cr_assert_lt(orth_err(&q), 1e-6, "case %d: Q orthogonal", k);
    cr_assert_lt(fabs(det3(&q) - 1), 1e-6, "case %d: det Q = 1", k);
    cr_assert_leq(recon_err(&q, NULL, &r, false, &a), 2e-6 * big, "case %d: Q R == A", k);
    if (fabs(d) > 1e-6 * big * big * big)
      cr_assert((r.m[2][2] < 0) == (d < 0), "case %d: R[2][2] has det's sign", k);
  }
}

/* ===== eig3 ================================================================== */

Test(linalg, eig3_diagonalizes_symmetric_matrices) {
  for (int k = 0; k < 20000; k++) {
    kn_mat33 b = family(k), a;
    for (int i = 0; i < 3; i++) /* symmetric: B + B^T, or B^T B for the positive ones */
      for (int j = 0; j < 3; j++)
        a.m[i][j] = k % 2 || k % 7 == 6
                        ? b.m[i][j] + b.m[j][i] /* (B^T B of 1e30 overflows) */
                        : b.m[0][i] * b.m[0][j] + b.m[1][i] * b.m[1][j] + b.m[2][i] * b.m[2][j];
    for (int i = 0; i < 3; i++) /* make it exactly symmetric after rounding */
      for (int j = 0; j < i; j++) a.m[j][i] = a.m[i][j];
    kn_mat33 q;
    kn_vec3 dv;
    kn_eig3_m33_pm33_pv3(a, &q, &dv);
    dv = opaque_v3(dv);
    double d[3] = {dv.x, dv.y, dv.z}, big = max_abs(&a);
    cr_assert(d[0] <= d[1] && d[1] <= d[2], "case %d: ascending", k);
    cr_assert_lt(orth_err(&q), 1e-6, "case %d: Q orthogonal", k);
    cr_assert_lt(fabs(det3(&q) - 1), 1e-6, "case %d: det Q = 1", k);
    cr_assert_leq(recon_err(&q, d, &q, true, &a), 2e-6 * big, "case %d: Q D Q^T == A", k);
    long double s[3][3], e[3];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) s[i][j] = a.m[i][j];
    sym_eigs(s, e);
    for (int i = 0; i < 3; i++)
      cr_assert_leq(fabsl(d[i] - e[i]), 1e-6L * (long double)big, "case %d eigenvalue %d", k, i);
  }
}

/* Warp reads the lower triangle: the upper one does not matter. */
Test(linalg, eig3_reads_the_lower_triangle) {
  kn_mat33 a = kn_make_m33(2, 99, -7, 1, 3, 42, 0.5f, -1, 4), s = a, q1, q2;
  s.m[0][1] = 1, s.m[0][2] = 0.5f, s.m[1][2] = -1;
  kn_vec3 d1, d2;
  kn_eig3_m33_pm33_pv3(a, &q1, &d1);
  kn_eig3_m33_pm33_pv3(s, &q2, &d2);
  cr_assert(memcmp(&q1, &q2, sizeof q1) == 0 && kn_eq_v3_v3(d1, d2));
  /* a diagonal matrix: its diagonal, sorted, with a permutation for Q */
  kn_eig3_m33_pm33_pv3(kn_make_m33(3, 0, 0, 0, -1, 0, 0, 0, 2), &q1, &d1);
  cr_assert(kn_eq_v3_v3(d1, kn_make_v3(-1, 2, 3)));
  cr_assert(fabs(fabs(q1.m[1][0]) - 1) == 0 && fabs(fabs(q1.m[2][1]) - 1) == 0 &&
            fabs(fabs(q1.m[0][2]) - 1) == 0);
}

/* ===== mat<T, N, N>: determinant, inverse, trace ============================== */

/* The stdlib's matrices as generated code instantiates them: run_<EC><N>
 * loads a (n * n doubles, exact in E), and stores the determinant and inverse
 * converted exactly back to double. */
#define KT_MATN(E, EC, N, AC)                                                                      \
  KN_VECN(kt_v##EC##N, E, EC, N, kv##EC##N)                                                        \
  KN_MATN(kt_m##EC##N, E, EC, N, N, km##EC##N, kt_v##EC##N)                                        \
  KN_MATN_SQ(kt_m##EC##N, E, EC, N, km##EC##N, kt_v##EC##N)                                        \
  KN_MATN_DETINV(kt_m##EC##N, E, EC, N, km##EC##N, AC)                                             \
  static void run_##EC##N(const double *a, double *det, double *inv) {                             \
    kt_m##EC##N m;                                                                                 \
    for (int i = 0; i < (N) * (N); i++) m.m[i / (N)][i % (N)] = kn__sc_f64_##EC(a[i]);             \
    *det = kn__sc_##EC##_f64(kn_determinant_km##EC##N(m));                                         \
    kt_m##EC##N r = kn_inverse_km##EC##N(m);                                                       \
    for (int i = 0; i < (N) * (N); i++) inv[i] = kn__sc_##EC##_f64(r.m[i / (N)][i % (N)]);         \
  }
KT_MATN(kn_f16, f16, 2, f32)
KT_MATN(kn_f16, f16, 3, f32)
KT_MATN(kn_f16, f16, 4, f32)
KT_MATN(kn_bf16, bf16, 2, f32)
KT_MATN(kn_bf16, bf16, 3, f32)
KT_MATN(kn_bf16, bf16, 4, f32)
KT_MATN(double, f64, 2, f64)
KT_MATN(double, f64, 3, f64)
KT_MATN(double, f64, 4, f64)
KN_VECN(kt_vf1616, kn_f16, f16, 16, kvf1616)
KN_MATN(kt_mf1616, kn_f16, f16, 16, 16, kmf1616, kt_vf1616)
KN_MATN_SQ(kt_mf1616, kn_f16, f16, 16, kmf1616, kt_vf1616)

typedef struct MatKind {
  const char *name;
  int bits;       /* significand bits of T, the implicit one included */
  double acc_eps; /* unit roundoff of the arithmetic kern computes in */
  void (*run[3])(const double *, double *, double *);
  double (*round)(double);
} MatKind;

static double round_f16(double x) { return kn__sc_f16_f64(kn__sc_f64_f16(x)); }
static double round_bf16(double x) { return kn__sc_bf16_f64(kn__sc_f64_bf16(x)); }
static double round_f64(double x) { return x; }

static const MatKind kinds[] = {
    {"float16", 11, 0x1p-24, {run_f162, run_f163, run_f164}, round_f16},
    {"bfloat16", 8, 0x1p-24, {run_bf162, run_bf163, run_bf164}, round_bf16},
    {"float64", 53, 0x1p-53, {run_f642, run_f643, run_f644}, round_f64},
};

/* The determinant of the n x n a by Leibniz's sum over permutations, in long
 * double, and the same sum of the products' magnitudes (the permanent of
 * |a|), which bounds the cancellation any evaluation order suffers. */
static long double leibniz(const double *a, int n, long double *perm) {
  int p[4] = {0, 1, 2, 3}, c[4] = {0}, sign = 1;
  long double det = 0, abs_sum = 0;
  for (int k = 0;;) { /* Heap's algorithm: every permutation, each by one swap */
    long double t = 1;
    for (int i = 0; i < n; i++) t *= a[i * n + p[i]];
    det += sign * t;
    abs_sum += fabsl(t);
    while (k < n && c[k] >= k) c[k++] = 0;
    if (k == n) break;
    int j = k % 2 ? c[k] : 0, x = p[j];
    p[j] = p[k], p[k] = x;
    sign = -sign;
    c[k]++;
    k = 0;
  }
  *perm = abs_sum;
  return det;
}

/* The inverse of a by Gauss-Jordan elimination with partial pivoting. */
static void gauss_inverse(const double *a, int n, long double *inv) {
  long double w[4][8];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n; j++) w[i][j] = j < n ? a[i * n + j] : (j - n == i);
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabsl(w[r][c]) > fabsl(w[p][c])) p = r;
    for (int j = 0; j < 2 * n; j++) {
      long double x = w[c][j];
      w[c][j] = w[p][j], w[p][j] = x;
    }
    long double d = w[c][c];
    for (int j = 0; j < 2 * n; j++) w[c][j] /= d;
    for (int r = 0; r < n; r++) {
      long double f = w[r][c];
      if (r != c)
        for (int j = 0; j < 2 * n; j++) w[r][j] -= f * w[c][j];
    }
  }
  for (int i = 0; i < n * n; i++) inv[i] = w[i / n][n + i % n];
}

static void random_matrix(const MatKind *k, int n, bool dominant, double *a) {
  for (int i = 0; i < n * n; i++) a[i] = k->round(urand(-4, 4));
  if (dominant) /* |a[i][i]| above its row's other elements: well conditioned */
    for (int i = 0; i < n; i++) a[i * n + i] = k->round((a[i * n + i] < 0 ? -1 : 1) * 4.0 * n);
}

Test(matn, determinant_matches_a_long_double_reference) {
  for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++)
    for (int n = 2; n <= 4; n++)
      for (int trial = 0; trial < 500; trial++) {
        const MatKind *k = &kinds[t];
        double a[16], det, inv[16];
        random_matrix(k, n, false, a);
        k->run[n - 2](a, &det, inv);
        long double perm, ref = leibniz(a, n, &perm);
        /* rounded once to T (half an ulp), after the arithmetic's own error */
        long double bound = ldexpl(fabsl(ref), -k->bits) + 8 * n * k->acc_eps * perm;
        cr_assert(fabsl(det - ref) <= bound,
                  "%s %dx%d determinant %.17g, reference %.17Lg (bound %.3Lg)", k->name, n, n, det,
                  ref, bound);
      }
}

Test(matn, inverse_matches_a_long_double_reference) {
  for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++)
    for (int n = 2; n <= 4; n++)
      for (int trial = 0; trial < 500; trial++) {
        const MatKind *k = &kinds[t];
        double a[16], det, inv[16];
        long double ref[16], big = 0;
        random_matrix(k, n, true, a);
        k->run[n - 2](a, &det, inv);
        gauss_inverse(a, n, ref);
        for (int i = 0; i < n * n; i++) big = fmaxl(big, fabsl(ref[i]));
        for (int i = 0; i < n * n; i++) {
          /* half an ulp of T, and the adjugate's error in the computing type */
          long double bound = ldexpl(fabsl(ref[i]), -k->bits) + 64 * n * k->acc_eps * big;
          cr_assert(fabsl(inv[i] - ref[i]) <= bound,
                    "%s %dx%d inverse[%d][%d] %.17g, reference %.17Lg (bound %.3Lg)", k->name, n, n,
                    i / n, i % n, inv[i], ref[i], bound);
        }
      }
}

Test(matn, a_singular_matrix_inverts_to_zero) {
  /* rows 0 and 2 equal: the determinant is exactly 0 in any order */
  const double a[16] = {1, 2, 3, 4, 0, 1, -2, 5, 1, 2, 3, 4, 7, 1, 0, 2};
  for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++)
    for (int n = 3; n <= 4; n++) {
      double b[16], det, inv[16];
      for (int i = 0; i < n * n; i++) b[i] = a[(i / n) * 4 + i % n];
      kinds[t].run[n - 2](b, &det, inv);
      cr_assert_eq(det, 0.0, "%s %dx%d", kinds[t].name, n, n);
      for (int i = 0; i < n * n; i++) cr_assert_eq(inv[i], 0.0, "%s %dx%d", kinds[t].name, n, n);
    }
}

Test(matn, float16_trace_is_the_exact_sum_rounded_once) {
  for (int trial = 0; trial < 200; trial++) {
    kt_mf1616 m = kn_zero_kmf1616();
    double exact = 0;
    for (int i = 0; i < 16; i++) {
      /* multiples of 1/16 below 64: float16 values whose sum float32 holds
       * exactly, but float16 often not */
      double x = round(urand(-64, 64) * 16) / 16;
      m.m[i][i] = kn__sc_f64_f16(x);
      exact += x;
    }
    double got = kn__sc_f16_f64(kn_trace_kmf1616(m));
    cr_assert_eq(got, round_f16(exact), "trace %.17g, reference %.17g", got, round_f16(exact));
  }
}
