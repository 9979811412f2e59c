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
 * computed in float64, most of them its KN__QUAT_FNS instantiated for double;
 * and the macros the emitter (emit_vecn.c) instantiates
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

KN__QUAT_FNS(kn_quatd, qd, kn_dvec3, dv3, kn_dvec4, dv4, double, f64)

/* The rotation matrix's rows (its columns are the rotated basis vectors). */
KN_FN void kn__quat_to_rows_qd(kn_quatd q, double *m) {
  kn_dvec3 c0 = kn_quat_rotate_qd_dv3(q, kn_make_dv3(1.0, 0.0, 0.0));
  kn_dvec3 c1 = kn_quat_rotate_qd_dv3(q, kn_make_dv3(0.0, 1.0, 0.0));
  kn_dvec3 c2 = kn_quat_rotate_qd_dv3(q, kn_make_dv3(0.0, 0.0, 1.0));
  double r[9] = {c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z};
  for (int i = 0; i < 9; i++) m[i] = r[i];
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
