/* kern_linalg.h: small matrix decompositions of generated kernel code.
 *
 * Requires kern_spatial_algebra.h before it (cmake/embed_stdlib.cmake pastes
 * the parts in order; a host C file may include this header alone). Compiled
 * by the host C compiler and by NVRTC under the rules of kern_builtins.h.
 * Produces the kn_ functions frontend/builtins.c names for Warp's svd3, svd2,
 * qr3 and eig3. Each writes its results through pointers (kern's &U
 * outputs), all of them at the end, in parameter order.
 *
 * Computed in float64 with + - * / and sqrt only, and rounded once to
 * float32, so the bits are the same on every device:
 *  - eig3: cyclic Jacobi on the symmetric matrix (its lower triangle),
 *    rotations by tan = sign(tau) / (|tau| + sqrt(1 + tau^2)); an
 *    off-diagonal element is dropped once it no longer changes either
 *    diagonal element it meets (Rutishauser's test), at most 16 sweeps.
 *  - svd3, svd2: one-sided Jacobi (Hestenes) on the columns of A until they
 *    are orthogonal, |a.b| <= 1e-15 |a| |b| (at most 16 sweeps), the columns
 *    sorted by decreasing
 *    norm, then Givens QR of them: U = Q, sigma = diag(R), V the product of
 *    the rotations. Relative accuracy of each singular value, not only of
 *    the largest.
 *  - qr3: three Givens rotations, (1,0), (2,0), (2,1).
 * Conventions (Warp's where it has one): every U, V and Q of svd3, qr3 and
 * eig3 is a rotation (determinant +1); svd3's sigma is sorted by magnitude,
 * sigma[0] >= sigma[1] >= |sigma[2]|, sigma[2] with the sign of det(A);
 * svd2's sigma is non-negative and sorted, V a rotation, U a reflection when
 * det(A) < 0; qr3's R[0][0] and R[1][1] are >= 0, R[2][2] has the sign of
 * det(A), the entries below the diagonal are exactly 0; eig3's eigenvalues
 * are in ascending order. A NaN anywhere in the input gives NaNs, never a
 * hang (every loop is bounded).
 */
#ifndef KN_LINALG_H
#define KN_LINALG_H

#ifndef KN_SPATIAL_ALGEBRA_H
#include "kern_spatial_algebra.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

enum { KN__JACOBI_SWEEPS = 16 };

/* A Givens rotation (c, s) with c*a + s*b = sqrt(a^2 + b^2) >= 0 and
 * -s*a + c*b = 0; the identity when a and b are both 0. */
KN_FN void kn__givens(double a, double b, double *c, double *s) {
  double r = sqrt(a * a + b * b);
  *c = r > 0.0 ? a / r : 1.0;
  *s = r > 0.0 ? b / r : 0.0;
}

/* tan of the Jacobi angle that zeroes the (p, q) element: tau = (aqq - app) /
 * (2 apq), t = sign(tau) / (|tau| + sqrt(1 + tau^2)), the smaller root. */
KN_FN double kn__jacobi_tan(double app, double aqq, double apq) {
  double tau = (aqq - app) / (2.0 * apq);
  double t = 1.0 / (fabs(tau) + sqrt(1.0 + tau * tau));
  return tau < 0.0 ? -t : t;
}

/* Is apq too small to change app or aqq (Rutishauser's test)? */
KN_FN bool kn__negligible(double app, double aqq, double apq) {
  double g = 100.0 * fabs(apq);
  return fabs(app) + g == fabs(app) && fabs(aqq) + g == fabs(aqq);
}

/* Cyclic Jacobi on the symmetric a (its upper triangle is kept in step):
 * a becomes diagonal, v collects the rotations (its columns eigenvectors). */
KN_FN void kn__jacobi3(double a[3][3], double v[3][3]) {
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < KN__JACOBI_SWEEPS; sweep++) {
    bool rotated = false;
    for (int k = 0; k < 3; k++) {
      int p = pairs[k][0], q = pairs[k][1];
      double apq = a[p][q];
      if (apq == 0.0) continue;
      if (kn__negligible(a[p][p], a[q][q], apq)) {
        a[p][q] = a[q][p] = 0.0;
        continue;
      }
      double t = kn__jacobi_tan(a[p][p], a[q][q], apq);
      double c = 1.0 / sqrt(1.0 + t * t), s = t * c;
      for (int r = 0; r < 3; r++) { /* columns p and q of a, then rows */
        double x = a[r][p], y = a[r][q];
        a[r][p] = c * x - s * y;
        a[r][q] = s * x + c * y;
      }
      for (int r = 0; r < 3; r++) {
        double x = a[p][r], y = a[q][r];
        a[p][r] = c * x - s * y;
        a[q][r] = s * x + c * y;
      }
      a[p][q] = a[q][p] = 0.0;
      for (int r = 0; r < 3; r++) {
        double x = v[r][p], y = v[r][q];
        v[r][p] = c * x - s * y;
        v[r][q] = s * x + c * y;
      }
      rotated = true;
    }
    if (!rotated) break;
  }
}

/* Swaps columns i and j of the n-column m (row stride 3), negating the one
 * that moves to i, so a rotation stays a rotation. */
KN_FN void kn__col_negswap(double m[3][3], int n, int i, int j) {
  for (int r = 0; r < n; r++) {
    double t = m[r][i];
    m[r][i] = -m[r][j];
    m[r][j] = t;
  }
}

KN_FN kn_mat33 kn__m33_of(double m[3][3]) {
  kn_mat33 r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r.m[i][j] = (float)m[i][j];
  return r;
}

/* Symmetric A (its lower triangle) = Q diag(d) Q^T, d ascending. */
KN_FN void kn_eig3_m33_pm33_pv3(kn_mat33 m, kn_mat33 *q, kn_vec3 *d) {
  double a[3][3], v[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j <= i; j++) a[i][j] = a[j][i] = (double)m.m[i][j];
  kn__jacobi3(a, v);
  double e[3] = {a[0][0], a[1][1], a[2][2]};
  for (int i = 0; i < 2; i++) /* a sorting network on three: (0,1) (1,2) (0,1) */
    for (int j = 0; j < 2 - i; j++)
      if (e[j + 1] < e[j]) {
        double t = e[j];
        e[j] = e[j + 1];
        e[j + 1] = t;
        kn__col_negswap(v, 3, j, j + 1);
      }
  kn_mat33 rq = kn__m33_of(v);
  kn_vec3 rd = kn_make_v3((float)e[0], (float)e[1], (float)e[2]);
  *q = rq;
  *d = rd;
}

/* Givens QR of the n x n b (n = 2 or 3, row stride 3): b becomes R (its
 * lower part exactly 0), qt the product of the rotations (Q^T). */
KN_FN void kn__givens_qr(double b[3][3], double qt[3][3], int n) {
  static const int steps[3][2] = {{0, 1}, {0, 2}, {1, 2}}; /* pivot row, zeroed row */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) qt[i][j] = i == j ? 1.0 : 0.0;
  for (int k = 0; k < (n == 3 ? 3 : 1); k++) {
    int i = steps[k][0], j = steps[k][1];
    double c, s;
    kn__givens(b[i][i], b[j][i], &c, &s);
    for (int col = 0; col < n; col++) {
      double x = b[i][col], y = b[j][col];
      b[i][col] = c * x + s * y;
      b[j][col] = -s * x + c * y;
      x = qt[i][col], y = qt[j][col];
      qt[i][col] = c * x + s * y;
      qt[j][col] = -s * x + c * y;
    }
    b[j][i] = 0.0;
  }
}

KN_FN void kn_qr3_m33_pm33_pm33(kn_mat33 m, kn_mat33 *q, kn_mat33 *r) {
  double b[3][3], qt[3][3], qq[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) b[i][j] = (double)m.m[i][j];
  kn__givens_qr(b, qt, 3);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) qq[i][j] = qt[j][i];
  kn_mat33 rq = kn__m33_of(qq), rr = kn__m33_of(b);
  *q = rq;
  *r = rr;
}

/* One-sided Jacobi on the n columns of w (row stride 3): rotations from the
 * right until the columns are orthogonal; v collects them. */
KN_FN void kn__hestenes(double w[3][3], double v[3][3], int n) {
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < KN__JACOBI_SWEEPS; sweep++) {
    bool rotated = false;
    for (int k = 0; k < (n == 3 ? 3 : 1); k++) {
      int p = pairs[k][0], q = pairs[k][1];
      double al = 0.0, be = 0.0, ga = 0.0;
      for (int r = 0; r < n; r++) {
        al += w[r][p] * w[r][p];
        be += w[r][q] * w[r][q];
        ga += w[r][p] * w[r][q];
      }
      if (!(fabs(ga) > 1e-15 * sqrt(al * be))) continue; /* orthogonal enough (or NaN) */
      double t = kn__jacobi_tan(al, be, ga);
      if (t == 0.0) continue;
      double c = 1.0 / sqrt(1.0 + t * t), s = t * c;
      for (int r = 0; r < n; r++) {
        double x = w[r][p], y = w[r][q];
        w[r][p] = c * x - s * y;
        w[r][q] = s * x + c * y;
        x = v[r][p], y = v[r][q];
        v[r][p] = c * x - s * y;
        v[r][q] = s * x + c * y;
      }
      rotated = true;
    }
    if (!rotated) break;
  }
}

/* The n x n SVD: w = A's columns made orthogonal, sorted by decreasing norm,
 * then QR: A = U R V^T with U = Q and R (nearly) diagonal. */
KN_FN void kn__svd(double w[3][3], int n, double u[3][3], double s[3], double v[3][3]) {
  double qt[3][3], nrm[3];
  kn__hestenes(w, v, n);
  for (int j = 0; j < n; j++) {
    nrm[j] = 0.0;
    for (int r = 0; r < n; r++) nrm[j] += w[r][j] * w[r][j];
  }
  for (int i = 0; i < n - 1; i++)
    for (int j = 0; j < n - 1 - i; j++)
      if (nrm[j] < nrm[j + 1]) {
        double t = nrm[j];
        nrm[j] = nrm[j + 1];
        nrm[j + 1] = t;
        kn__col_negswap(w, n, j, j + 1);
        kn__col_negswap(v, n, j, j + 1);
      }
  kn__givens_qr(w, qt, n);
  for (int i = 0; i < n; i++) {
    s[i] = w[i][i];
    for (int j = 0; j < n; j++) u[i][j] = qt[j][i];
  }
  /* Nearly equal values can leave R's diagonal out of order by an ulp:
   * sort it by magnitude (moving U's and V's columns alike), then give the
   * sign, if any, to the last value (negating two columns of U). */
  for (int i = 0; i < n - 1; i++)
    for (int j = 0; j < n - 1 - i; j++)
      if (fabs(s[j]) < fabs(s[j + 1])) {
        double t = s[j];
        s[j] = s[j + 1];
        s[j + 1] = t;
        kn__col_negswap(u, n, j, j + 1);
        kn__col_negswap(v, n, j, j + 1);
      }
  for (int i = 0; i < n - 1; i++)
    if (s[i] < 0.0) {
      s[i] = -s[i];
      s[n - 1] = -s[n - 1];
      for (int r = 0; r < n; r++) u[r][i] = -u[r][i], u[r][n - 1] = -u[r][n - 1];
    }
}

KN_FN void kn_svd3_m33_pm33_pv3_pm33(kn_mat33 m, kn_mat33 *pu, kn_vec3 *ps, kn_mat33 *pv) {
  double w[3][3], u[3][3], s[3], v[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) w[i][j] = (double)m.m[i][j];
  kn__svd(w, 3, u, s, v);
  kn_mat33 ru = kn__m33_of(u), rv = kn__m33_of(v);
  kn_vec3 rs = kn_make_v3((float)s[0], (float)s[1], (float)s[2]);
  *pu = ru;
  *ps = rs;
  *pv = rv;
}

/* Warp's svd2 keeps both singular values >= 0: a negative determinant turns
 * U's second column instead. */
KN_FN void kn_svd2_m22_pm22_pv2_pm22(kn_mat22 m, kn_mat22 *pu, kn_vec2 *ps, kn_mat22 *pv) {
  double w[3][3], u[3][3], s[3], v[3][3];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) w[i][j] = (double)m.m[i][j];
  kn__svd(w, 2, u, s, v);
  if (s[1] < 0.0) {
    s[1] = -s[1];
    u[0][1] = -u[0][1];
    u[1][1] = -u[1][1];
  }
  kn_mat22 ru = kn_make_m22((float)u[0][0], (float)u[0][1], (float)u[1][0], (float)u[1][1]);
  kn_mat22 rv = kn_make_m22((float)v[0][0], (float)v[0][1], (float)v[1][0], (float)v[1][1]);
  kn_vec2 rs = kn_make_v2((float)s[0], (float)s[1]);
  *pu = ru;
  *ps = rs;
  *pv = rv;
}

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
