/* kern_quatn.h: quat<T>, quaternions of float16, bfloat16 and float64 components.
 *
 * Requires kern_vecn.h and the parts before it (cmake/embed_stdlib.cmake
 * pastes the parts in order; its kn__sc_ scalar conversions). Compiled by the
 * host C compiler and by NVRTC under the rules of kern_builtins.h. Produces
 * the types kn_quath (float16), kn_quatbf (bfloat16) and kn_quatd (float64)
 * with what the emitter calls for any quat (kn_make_, kn_zero_, kn_splat_,
 * kn_identity_, kn_get_, kn_getp_ and the conversions kn_cvt_<from>_<to>
 * between the four quat types); every quaternion builtin over kn_quatd,
 * kn_dvec3, kn_dvec4 and double: kern_spatial.h's float32 formulas (Warp's)
 * computed in float64; and the macros the emitter (emit_vecn.c) instantiates
 * for the rows frontend/check_quatn.c makes over types only a module names:
 * KN_QUATN_W<n> and KN_QUATN_B<n>, a float16 or bfloat16 row as its float32
 * twin (the arguments widened exactly, the float32 builtin, each result
 * component rounded once to T), and KN_QUATD_TO_MATRIX and
 * KN_QUATD_FROM_MATRIX for mat<float64, 3 or 4, 3 or 4>.
 */
#ifndef KN_QUATN_H
#define KN_QUATN_H
#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

typedef struct kn_quath {
  kn_f16 x, y, z, w;
} kn_quath;
typedef struct kn_quatbf {
  kn_bf16 x, y, z, w;
} kn_quatbf;
typedef struct kn_quatd {
  double x, y, z, w;
} kn_quatd; /* w is the real part, as kn_quat's */
KN_STATIC_ASSERT(sizeof(kn_quath) == 8 && sizeof(kn_quatbf) == 8 && sizeof(kn_quatd) == 32,
                 "quat<T> layout");

/* ---- the half quats: construction and components -------------------------- */

#define KN__QHALF(QT, QC, ET, EC)                                                                  \
  KN_FN QT kn_make_##QC(ET x, ET y, ET z, ET w) {                                                  \
    QT r;                                                                                          \
    r.x = x;                                                                                       \
    r.y = y;                                                                                       \
    r.z = z;                                                                                       \
    r.w = w;                                                                                       \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN QT kn_splat_##QC(ET s) { return kn_make_##QC(s, s, s, s); }                                \
  KN_FN QT kn_zero_##QC(void) { return kn_splat_##QC(kn_cvt_f32_##EC(0.0f)); }                     \
  KN_FN QT kn_identity_##QC(void) {                                                                \
    ET z = kn_cvt_f32_##EC(0.0f);                                                                  \
    return kn_make_##QC(z, z, z, kn_cvt_f32_##EC(1.0f));                                           \
  }                                                                                                \
  KN_FN ET *kn_getp_##QC(QT *q, int64_t k) { return KN__PICK4(q, k); }                             \
  KN_FN ET kn_get_##QC(QT q, int64_t k) { return *kn_getp_##QC(&q, k); }
KN__QHALF(kn_quath, qh, kn_f16, f16)
KN__QHALF(kn_quatbf, qbf, kn_bf16, bf16)

/* ---- float64: every builtin, the float32 formulas in double ---------------- */

KN_FN kn_quatd kn_make_qd(double x, double y, double z, double w) {
  kn_quatd r;
  r.x = x;
  r.y = y;
  r.z = z;
  r.w = w;
  return r;
}
KN_FN kn_quatd kn_zero_qd(void) { return kn_make_qd(0.0, 0.0, 0.0, 0.0); }
KN_FN kn_quatd kn_splat_qd(double s) { return kn_make_qd(s, s, s, s); } /* quat(s) */
KN_FN kn_quatd kn_identity_qd(void) { return kn_make_qd(0.0, 0.0, 0.0, 1.0); }
KN_FN double *kn_getp_qd(kn_quatd *q, int64_t k) { return KN__PICK4(q, k); }
KN_FN double kn_get_qd(kn_quatd q, int64_t k) { return *kn_getp_qd(&q, k); }
KN_FN kn_dvec4 kn__qd_dv4(kn_quatd q) { return kn_make_dv4(q.x, q.y, q.z, q.w); }
KN_FN kn_quatd kn__dv4_qd(kn_dvec4 v) { return kn_make_qd(v.x, v.y, v.z, v.w); }
KN_FN kn_quatd kn_add_qd_qd(kn_quatd a, kn_quatd b) {
  return kn__dv4_qd(kn_add_dv4_dv4(kn__qd_dv4(a), kn__qd_dv4(b)));
}
KN_FN kn_quatd kn_sub_qd_qd(kn_quatd a, kn_quatd b) {
  return kn__dv4_qd(kn_sub_dv4_dv4(kn__qd_dv4(a), kn__qd_dv4(b)));
}
KN_FN kn_quatd kn_mul_qd_f64(kn_quatd a, double s) {
  return kn__dv4_qd(kn_mul_dv4_f64(kn__qd_dv4(a), s));
}
KN_FN kn_quatd kn_mul_f64_qd(double s, kn_quatd a) {
  return kn__dv4_qd(kn_mul_f64_dv4(s, kn__qd_dv4(a)));
}
KN_FN kn_quatd kn_neg_qd(kn_quatd a) { return kn__dv4_qd(kn_neg_dv4(kn__qd_dv4(a))); }
KN_FN bool kn_eq_qd_qd(kn_quatd a, kn_quatd b) {
  return kn_eq_dv4_dv4(kn__qd_dv4(a), kn__qd_dv4(b));
}
KN_FN bool kn_ne_qd_qd(kn_quatd a, kn_quatd b) { return !kn_eq_qd_qd(a, b); }

KN_FN kn_quatd kn_quat_mul_qd_qd(kn_quatd a, kn_quatd b) {
  return kn_make_qd(
      a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
/* v + 2w (u x v) + 2 u x (u x v), u = q.xyz: q v q* for a unit q. */
KN_FN kn_dvec3 kn_quat_rotate_qd_dv3(kn_quatd q, kn_dvec3 v) {
  kn_dvec3 u = kn_make_dv3(q.x, q.y, q.z);
  kn_dvec3 t = kn_mul_f64_dv3(2.0, kn_cross_dv3_dv3(u, v));
  return kn_add_dv3_dv3(kn_add_dv3_dv3(v, kn_mul_f64_dv3(q.w, t)), kn_cross_dv3_dv3(u, t));
}

KN_FN kn_dvec3 kn__qd_xyz(kn_quatd q) { return kn_make_dv3(q.x, q.y, q.z); }

KN_FN double kn_dot_qd_qd(kn_quatd a, kn_quatd b) {
  return kn_dot_dv4_dv4(kn__qd_dv4(a), kn__qd_dv4(b));
}
KN_FN double kn_length_sq_qd(kn_quatd q) { return kn_dot_qd_qd(q, q); }
KN_FN double kn_length_qd(kn_quatd q) { return kn_sqrt_f64(kn_dot_qd_qd(q, q)); }
/* A zero quaternion normalizes to the identity (Warp's rule). */
KN_FN kn_quatd kn_normalize_qd(kn_quatd q) {
  double l = kn_length_qd(q);
  return l > 0.0 ? kn__dv4_qd(kn_div_dv4_f64(kn__qd_dv4(q), l)) : kn_identity_qd();
}
KN_FN kn_quatd kn_conjugate_qd(kn_quatd q) { return kn_make_qd(-q.x, -q.y, -q.z, q.w); }
/* Warp's quat_inverse: the conjugate, the inverse of a unit quaternion. */
KN_FN kn_quatd kn_quat_inverse_qd(kn_quatd q) { return kn_conjugate_qd(q); }
/* The inverse of any quaternion, conjugate / |q|^2; zero stays zero. */
KN_FN kn_quatd kn_inverse_qd(kn_quatd q) {
  double d = kn_dot_qd_qd(q, q);
  return d != 0.0 ? kn__dv4_qd(kn_div_dv4_f64(kn__qd_dv4(kn_conjugate_qd(q)), d)) : kn_zero_qd();
}
KN_FN kn_quatd kn_div_qd_f64(kn_quatd q, double s) {
  return kn__dv4_qd(kn_div_dv4_f64(kn__qd_dv4(q), s));
}
KN_FN kn_quatd kn_lerp_qd_qd_f64(kn_quatd a, kn_quatd b, double t) {
  return kn__dv4_qd(kn_lerp_dv4_dv4_f64(kn__qd_dv4(a), kn__qd_dv4(b), t));
}

/* Warp: x (2w^2 - 1) - 2w (u x x) + 2u (u . x), u = q.xyz. */
KN_FN kn_dvec3 kn_quat_rotate_inv_qd_dv3(kn_quatd q, kn_dvec3 x) {
  kn_dvec3 u = kn__qd_xyz(q);
  kn_dvec3 a = kn_mul_dv3_f64(x, 2.0 * q.w * q.w - 1.0);
  kn_dvec3 b = kn_mul_dv3_f64(kn_mul_dv3_f64(kn_cross_dv3_dv3(u, x), q.w), 2.0);
  kn_dvec3 c = kn_mul_dv3_f64(kn_mul_dv3_f64(u, kn_dot_dv3_dv3(u, x)), 2.0);
  return kn_add_dv3_dv3(kn_sub_dv3_dv3(a, b), c);
}

/* The rotation matrix's rows (its columns are the rotated basis vectors). */
KN_FN void kn__quat_to_rows_qd(kn_quatd q, double *m) {
  kn_dvec3 c0 = kn_quat_rotate_qd_dv3(q, kn_make_dv3(1.0, 0.0, 0.0));
  kn_dvec3 c1 = kn_quat_rotate_qd_dv3(q, kn_make_dv3(0.0, 1.0, 0.0));
  kn_dvec3 c2 = kn_quat_rotate_qd_dv3(q, kn_make_dv3(0.0, 0.0, 1.0));
  double r[9] = {c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z};
  for (int i = 0; i < 9; i++) m[i] = r[i];
}

/* Warp's quat_from_matrix (Shepperd's method on the largest diagonal term),
 * on the top-left 3x3 block m. */
KN_FN kn_quatd kn__quat_from_rows_qd(double m[3][4]) {
  double tr = m[0][0] + m[1][1] + m[2][2], x, y, z, w, h;
  if (tr >= 0.0) {
    h = kn_sqrt_f64(tr + 1.0);
    w = 0.5 * h;
    h = 0.5 / h;
    x = (m[2][1] - m[1][2]) * h;
    y = (m[0][2] - m[2][0]) * h;
    z = (m[1][0] - m[0][1]) * h;
  } else {
    int d = m[1][1] > m[0][0] ? 1 : 0;
    if (m[2][2] > m[d][d]) d = 2;
    if (d == 0) {
      h = kn_sqrt_f64((m[0][0] - (m[1][1] + m[2][2])) + 1.0);
      x = 0.5 * h;
      h = 0.5 / h;
      y = (m[0][1] + m[1][0]) * h;
      z = (m[2][0] + m[0][2]) * h;
      w = (m[2][1] - m[1][2]) * h;
    } else if (d == 1) {
      h = kn_sqrt_f64((m[1][1] - (m[2][2] + m[0][0])) + 1.0);
      y = 0.5 * h;
      h = 0.5 / h;
      z = (m[1][2] + m[2][1]) * h;
      x = (m[0][1] + m[1][0]) * h;
      w = (m[0][2] - m[2][0]) * h;
    } else {
      h = kn_sqrt_f64((m[2][2] - (m[0][0] + m[1][1])) + 1.0);
      z = 0.5 * h;
      h = 0.5 / h;
      x = (m[2][0] + m[0][2]) * h;
      y = (m[1][2] + m[2][1]) * h;
      w = (m[1][0] - m[0][1]) * h;
    }
  }
  return kn_normalize_qd(kn_make_qd(x, y, z, w));
}
/* (axis, angle) as a dvec4: the unit axis in xyz, the angle in [0, pi] in w
 * (Warp's quat_to_axis_angle returns them through out parameters). */
KN_FN kn_dvec4 kn_quat_to_axis_angle_qd(kn_quatd q) {
  kn_dvec3 v = kn__qd_xyz(q), n = kn_normalize_dv3(v);
  if (q.w < 0.0) n = kn_neg_dv3(n);
  double angle = 2.0 * kn_atan2_f64_f64(kn_length_dv3(v), kn_abs_f64(q.w));
  return kn_make_dv4(n.x, n.y, n.z, angle);
}

/* Warp's quat_slerp: q0 * from_axis_angle(axis, t * angle) of q0^-1 q1. */
KN_FN kn_quatd kn_quat_slerp_qd_qd_f64(kn_quatd q0, kn_quatd q1, double t) {
  kn_dvec4 aa = kn_quat_to_axis_angle_qd(kn_quat_mul_qd_qd(kn_quat_inverse_qd(q0), q1));
  kn_dvec3 axis = kn_make_dv3(aa.x, aa.y, aa.z);
  double half = t * aa.w * 0.5, s = kn_sin_f64(half);
  kn_quatd r = kn_make_qd(axis.x * s, axis.y * s, axis.z * s, kn_cos_f64(half));
  return kn_quat_mul_qd_qd(q0, r);
}

KN_FN kn_quatd kn_quat_from_axis_angle_dv3_f64(kn_dvec3 axis, double angle) {
  kn_dvec3 n = kn_normalize_dv3(axis);
  double s = kn_sin_f64(0.5 * angle);
  return kn_make_qd(n.x * s, n.y * s, n.z * s, kn_cos_f64(0.5 * angle));
}

/* Roll about x, pitch about y, yaw about z (radians), Warp's formula. */
KN_FN kn_quatd kn_quat_rpy_f64_f64_f64(double roll, double pitch, double yaw) {
  double cy = kn_cos_f64(yaw * 0.5), sy = kn_sin_f64(yaw * 0.5);
  double cr = kn_cos_f64(roll * 0.5), sr = kn_sin_f64(roll * 0.5);
  double cp = kn_cos_f64(pitch * 0.5), sp = kn_sin_f64(pitch * 0.5);
  double w = cy * cr * cp + sy * sr * sp;
  double x = cy * sr * cp - sy * cr * sp;
  double y = cy * cr * sp + sy * sr * cp;
  double z = sy * cr * cp - cy * sr * sp;
  return kn_make_qd(x, y, z, w);
}

/* The twist of q about the unit axis: q's vector part projected on the axis. */
KN_FN kn_quatd kn_quat_twist_dv3_qd(kn_dvec3 axis, kn_quatd q) {
  kn_dvec3 p = kn_mul_dv3_f64(axis, kn_dot_dv3_dv3(kn__qd_xyz(q), axis));
  return kn_normalize_qd(kn_make_qd(p.x, p.y, p.z, q.w));
}

KN_FN bool kn_isnan_qd(kn_quatd q) { return kn_isnan_dv4(kn__qd_dv4(q)); }
KN_FN bool kn_isinf_qd(kn_quatd q) { return kn_isinf_dv4(kn__qd_dv4(q)); }
KN_FN bool kn_isfinite_qd(kn_quatd q) { return kn_isfinite_dv4(kn__qd_dv4(q)); }

/* mat<float64, 3, 3> and mat<float64, 4, 4> are defined by the module that
 * names them (emit_vecn.c), so these rows are too; MT's elements are packed
 * doubles, row-major. */
#define KN_QUATD_TO_MATRIX(cname, MT)                                                              \
  KN_FN MT cname(kn_quatd q) {                                                                     \
    MT r;                                                                                          \
    kn__quat_to_rows_qd(q, (double *)&r);                                                          \
    return r;                                                                                      \
  }
#define KN_QUATD_FROM_MATRIX(cname, MT, N)                                                         \
  KN_FN kn_quatd cname(MT a) {                                                                     \
    double m[3][4];                                                                                \
    for (int i = 0; i < 3; i++)                                                                    \
      for (int j = 0; j < 3; j++) m[i][j] = ((const double *)&a)[i * (N) + j];                     \
    return kn__quat_from_rows_qd(m);                                                               \
  }

/* ---- conversions between the quat types: per component, a cast's rules ---- */

#define KN__QCVT(FT, FC, FEC, TT, TC, TEC)                                                         \
  KN_FN TT kn_cvt_##FC##_##TC(FT a) {                                                              \
    TT r;                                                                                          \
    r.x = kn__sc_##FEC##_##TEC(a.x);                                                               \
    r.y = kn__sc_##FEC##_##TEC(a.y);                                                               \
    r.z = kn__sc_##FEC##_##TEC(a.z);                                                               \
    r.w = kn__sc_##FEC##_##TEC(a.w);                                                               \
    return r;                                                                                      \
  }

KN__QCVT(kn_quat, q, f32, kn_quath, qh, f16)
KN__QCVT(kn_quat, q, f32, kn_quatbf, qbf, bf16)
KN__QCVT(kn_quat, q, f32, kn_quatd, qd, f64)
KN__QCVT(kn_quath, qh, f16, kn_quat, q, f32)
KN__QCVT(kn_quath, qh, f16, kn_quatbf, qbf, bf16)
KN__QCVT(kn_quath, qh, f16, kn_quatd, qd, f64)
KN__QCVT(kn_quatbf, qbf, bf16, kn_quat, q, f32)
KN__QCVT(kn_quatbf, qbf, bf16, kn_quath, qh, f16)
KN__QCVT(kn_quatbf, qbf, bf16, kn_quatd, qd, f64)
KN__QCVT(kn_quatd, qd, f64, kn_quat, q, f32)
KN__QCVT(kn_quatd, qd, f64, kn_quath, qh, f16)
KN__QCVT(kn_quatd, qd, f64, kn_quatbf, qbf, bf16)

/* ---- float16 and bfloat16 rows: their float32 twins, rounded once ---------- */

/* Widens n components of a half type to float (exact), and rounds back. */
#define KN__QHALF_WIDEN(ET, EC)                                                                    \
  KN_FN void kn__qn_up_##EC(const ET *s, float *d, int n) {                                        \
    for (int i = 0; i < n; i++) d[i] = kn_cvt_##EC##_f32(s[i]);                                    \
  }                                                                                                \
  KN_FN void kn__qn_dn_##EC(const float *s, ET *d, int n) {                                        \
    for (int i = 0; i < n; i++) d[i] = kn_cvt_f32_##EC(s[i]);                                      \
  }
KN__QHALF_WIDEN(kn_f16, f16)
KN__QHALF_WIDEN(kn_bf16, bf16)

/* An argument a of type A as its float32 twin w of type W. */
#define KN__QN_IN(A, W, a, w, ET, EC)                                                              \
  W w;                                                                                             \
  kn__qn_up_##EC((const ET *)&a, (float *)&w, (int)(sizeof(W) / sizeof(float)));
/* The float32 result rw of type RW as R, each component rounded once. */
#define KN__QN_OUT(R, RW, rw, ET, EC)                                                              \
  R r;                                                                                             \
  kn__qn_dn_##EC((const float *)&rw, (ET *)&r, (int)(sizeof(R) / sizeof(ET)));                     \
  return r;
/* cname(A0 a0, ...) -> R by core(W0 w0, ...) -> RW; B<n>: a bool result. */
#define KN_QUATN_W1(cname, R, RW, core, A0, W0, ET, EC)                                            \
  KN_FN R cname(A0 a0) {                                                                           \
    KN__QN_IN(A0, W0, a0, w0, ET, EC)                                                              \
    RW rw = core(w0);                                                                              \
    KN__QN_OUT(R, RW, rw, ET, EC)                                                                  \
  }
#define KN_QUATN_W2(cname, R, RW, core, A0, W0, A1, W1, ET, EC)                                    \
  KN_FN R cname(A0 a0, A1 a1) {                                                                    \
    KN__QN_IN(A0, W0, a0, w0, ET, EC)                                                              \
    KN__QN_IN(A1, W1, a1, w1, ET, EC)                                                              \
    RW rw = core(w0, w1);                                                                          \
    KN__QN_OUT(R, RW, rw, ET, EC)                                                                  \
  }
#define KN_QUATN_W3(cname, R, RW, core, A0, W0, A1, W1, A2, W2, ET, EC)                            \
  KN_FN R cname(A0 a0, A1 a1, A2 a2) {                                                             \
    KN__QN_IN(A0, W0, a0, w0, ET, EC)                                                              \
    KN__QN_IN(A1, W1, a1, w1, ET, EC)                                                              \
    KN__QN_IN(A2, W2, a2, w2, ET, EC)                                                              \
    RW rw = core(w0, w1, w2);                                                                      \
    KN__QN_OUT(R, RW, rw, ET, EC)                                                                  \
  }
#define KN_QUATN_B1(cname, core, A0, W0, ET, EC)                                                   \
  KN_FN bool cname(A0 a0) {                                                                        \
    KN__QN_IN(A0, W0, a0, w0, ET, EC)                                                              \
    return core(w0);                                                                               \
  }
#define KN_QUATN_B2(cname, core, A0, W0, A1, W1, ET, EC)                                           \
  KN_FN bool cname(A0 a0, A1 a1) {                                                                 \
    KN__QN_IN(A0, W0, a0, w0, ET, EC)                                                              \
    KN__QN_IN(A1, W1, a1, w1, ET, EC)                                                              \
    return core(w0, w1);                                                                           \
  }

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif
#endif
