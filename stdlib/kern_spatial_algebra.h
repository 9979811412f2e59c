/* kern_spatial_algebra.h: spatial vectors and matrices of generated kernel code.
 *
 * Requires kern_transform.h before it (cmake/embed_stdlib.cmake pastes the
 * parts in order; a host C file may include this header alone). Compiled by
 * the host C compiler and by NVRTC under the rules of kern_builtins.h.
 * Produces kn_spatial_vector (the kern type spatial_vector: 6 floats, the
 * angular part w then the linear part v, Featherstone's motion and force
 * vectors) and kn_spatial_matrix (spatial_matrix, 6x6 row-major), with
 * what the emitter calls for any vector or matrix (make, splat, zero, get,
 * getp, the row access, atomics per component) and the kn_ functions
 * frontend/builtins.c names: + - * / == !=, dot length length_sq normalize,
 * spatial_dot spatial_cross spatial_cross_dual spatial_top spatial_bottom,
 * outer transpose spatial_adjoint, isnan/isinf/isfinite, and Warp's
 * transform_twist transform_wrench velocity_at_point (warp.math). Sums run
 * over the components in ascending order, unfused: the same bits on every
 * device.
 */
#ifndef KN_SPATIAL_ALGEBRA_H
#define KN_SPATIAL_ALGEBRA_H

#ifndef KN_TRANSFORM_H
#include "kern_transform.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

typedef struct kn_spatial_vector {
  float v[6]; /* w (angular) in 0..2, v (linear) in 3..5 */
} kn_spatial_vector;
typedef struct kn_spatial_matrix {
  float m[6][6]; /* m[row][col] */
} kn_spatial_matrix;
KN_STATIC_ASSERT(sizeof(kn_spatial_vector) == 24 && sizeof(kn_spatial_matrix) == 144,
                 "spatial layout");
KN__FATOMIC(kn_spatial_matrix, m66, 36)

/* ===== spatial vectors ===================================================== */

KN_FN int64_t kn__clamp6(int64_t k) { return k < 0 ? 0 : k > 5 ? 5 : k; }

KN_FN kn_spatial_vector kn_make_sv(float a, float b, float c, float d, float e, float f) {
  kn_spatial_vector r;
  r.v[0] = a, r.v[1] = b, r.v[2] = c, r.v[3] = d, r.v[4] = e, r.v[5] = f;
  return r;
}
/* spatial_vector(w, v): the angular part, then the linear part. */
KN_FN kn_spatial_vector kn_make_sv_wv(kn_vec3 w, kn_vec3 v) {
  return kn_make_sv(w.x, w.y, w.z, v.x, v.y, v.z);
}
KN_FN kn_spatial_vector kn_splat_sv(float s) { return kn_make_sv(s, s, s, s, s, s); }
KN_FN kn_spatial_vector kn_zero_sv(void) { return kn_splat_sv(0.0f); }
KN_FN float *kn_getp_sv(kn_spatial_vector *a, int64_t k) { return &a->v[kn__clamp6(k)]; }
KN_FN float kn_get_sv(kn_spatial_vector a, int64_t k) { return a.v[kn__clamp6(k)]; }

KN_FN kn_vec3 kn_spatial_top_sv(kn_spatial_vector a) { return kn_make_v3(a.v[0], a.v[1], a.v[2]); }
KN_FN kn_vec3 kn_spatial_bottom_sv(kn_spatial_vector a) {
  return kn_make_v3(a.v[3], a.v[4], a.v[5]);
}

/* A comma inside one macro argument (a parameter list). */
#define KN__COMMA ,

/* r[k] = EXPR for the six components; B is the parameter list. */
#define KN__SV2(stem, C2, B, EXPR)                                                                 \
  KN_FN kn_spatial_vector kn_##stem##_##C2(B) {                                                    \
    kn_spatial_vector r;                                                                           \
    for (int k = 0; k < 6; k++) r.v[k] = EXPR;                                                     \
    return r;                                                                                      \
  }
#define KN__SV_SV kn_spatial_vector a, kn_spatial_vector b
KN__SV2(add, sv_sv, KN__SV_SV, a.v[k] + b.v[k])
KN__SV2(sub, sv_sv, KN__SV_SV, a.v[k] - b.v[k])
KN__SV2(mul, sv_sv, KN__SV_SV, a.v[k] * b.v[k])
KN__SV2(div, sv_sv, KN__SV_SV, a.v[k] / b.v[k])
KN__SV2(mul, sv_f32, kn_spatial_vector a KN__COMMA float s, a.v[k] * s)
KN__SV2(mul, f32_sv, float s KN__COMMA kn_spatial_vector a, s *a.v[k])
KN__SV2(div, sv_f32, kn_spatial_vector a KN__COMMA float s, a.v[k] / s)
KN__SV2(neg, sv, kn_spatial_vector a, -a.v[k])

KN_FN bool kn_eq_sv_sv(kn_spatial_vector a, kn_spatial_vector b) {
  bool r = true;
  for (int k = 0; k < 6; k++) r = r && a.v[k] == b.v[k];
  return r;
}
KN_FN bool kn_ne_sv_sv(kn_spatial_vector a, kn_spatial_vector b) { return !kn_eq_sv_sv(a, b); }
KN_FN float kn_dot_sv_sv(kn_spatial_vector a, kn_spatial_vector b) {
  float s = a.v[0] * b.v[0];
  for (int k = 1; k < 6; k++) s += a.v[k] * b.v[k];
  return s;
}
KN_FN float kn_spatial_dot_sv_sv(kn_spatial_vector a, kn_spatial_vector b) {
  return kn_dot_sv_sv(a, b);
}
KN_FN float kn_length_sq_sv(kn_spatial_vector a) { return kn_dot_sv_sv(a, a); }
KN_FN float kn_length_sv(kn_spatial_vector a) { return kn_sqrt_f32(kn_dot_sv_sv(a, a)); }
/* The zero vector stays zero, as for the other vectors. */
KN_FN kn_spatial_vector kn_normalize_sv(kn_spatial_vector a) {
  float l = kn_length_sv(a);
  return l > 0.0f ? kn_div_sv_f32(a, l) : kn_zero_sv();
}
KN_FN bool kn_isnan_sv(kn_spatial_vector a) {
  bool r = false;
  for (int k = 0; k < 6; k++) r = r || kn_isnan_f32(a.v[k]);
  return r;
}
KN_FN bool kn_isinf_sv(kn_spatial_vector a) {
  bool r = false;
  for (int k = 0; k < 6; k++) r = r || kn_isinf_f32(a.v[k]);
  return r;
}
KN_FN bool kn_isfinite_sv(kn_spatial_vector a) { return !kn_isnan_sv(a) && !kn_isinf_sv(a); }

/* The motion cross product a x b: (wa x wb, va x wb + wa x vb). */
KN_FN kn_spatial_vector kn_spatial_cross_sv_sv(kn_spatial_vector a, kn_spatial_vector b) {
  kn_vec3 wa = kn_spatial_top_sv(a), va = kn_spatial_bottom_sv(a);
  kn_vec3 wb = kn_spatial_top_sv(b), vb = kn_spatial_bottom_sv(b);
  return kn_make_sv_wv(kn_cross_v3_v3(wa, wb),
                       kn_add_v3_v3(kn_cross_v3_v3(va, wb), kn_cross_v3_v3(wa, vb)));
}
/* The force cross product a x* b: (wa x wb + va x vb, wa x vb). */
KN_FN kn_spatial_vector kn_spatial_cross_dual_sv_sv(kn_spatial_vector a, kn_spatial_vector b) {
  kn_vec3 wa = kn_spatial_top_sv(a), va = kn_spatial_bottom_sv(a);
  kn_vec3 wb = kn_spatial_top_sv(b), vb = kn_spatial_bottom_sv(b);
  return kn_make_sv_wv(kn_add_v3_v3(kn_cross_v3_v3(wa, wb), kn_cross_v3_v3(va, vb)),
                       kn_cross_v3_v3(wa, vb));
}

/* Warp's warp.math: a twist (w, v) and a wrench (tau, f) seen from frame t. */
KN_FN kn_spatial_vector kn_transform_twist_tf_sv(kn_transform t, kn_spatial_vector x) {
  kn_vec3 w = kn_quat_rotate_q_v3(t.q, kn_spatial_top_sv(x));
  kn_vec3 v =
      kn_add_v3_v3(kn_quat_rotate_q_v3(t.q, kn_spatial_bottom_sv(x)), kn_cross_v3_v3(t.p, w));
  return kn_make_sv_wv(w, v);
}
KN_FN kn_spatial_vector kn_transform_wrench_tf_sv(kn_transform t, kn_spatial_vector x) {
  kn_vec3 f = kn_quat_rotate_q_v3(t.q, kn_spatial_bottom_sv(x));
  kn_vec3 tau =
      kn_add_v3_v3(kn_quat_rotate_q_v3(t.q, kn_spatial_top_sv(x)), kn_cross_v3_v3(t.p, f));
  return kn_make_sv_wv(tau, f);
}
/* The linear velocity of the point r of a body moving with the twist qd. */
KN_FN kn_vec3 kn_velocity_at_point_sv_v3(kn_spatial_vector qd, kn_vec3 r) {
  return kn_add_v3_v3(kn_spatial_bottom_sv(qd), kn_cross_v3_v3(kn_spatial_top_sv(qd), r));
}

/* One atomic per component, as for the other vectors; returns the old value. */
#define KN__SV_ATOMIC(op)                                                                          \
  KN_FN kn_spatial_vector kn_atomic_##op##_sv(kn_spatial_vector *p, kn_spatial_vector x) {         \
    kn_spatial_vector r;                                                                           \
    for (int k = 0; k < 6; k++) r.v[k] = kn_atomic_##op##_f32(&p->v[k], x.v[k]);                   \
    return r;                                                                                      \
  }
KN__SV_ATOMIC(add)
KN__SV_ATOMIC(sub)
KN__SV_ATOMIC(min)
KN__SV_ATOMIC(max)

/* ===== spatial matrices ==================================================== */

KN_FN kn_spatial_matrix kn_diag_m66(float s) {
  kn_spatial_matrix r;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) r.m[i][j] = i == j ? s : 0.0f;
  return r;
}
KN_FN kn_spatial_matrix kn_zero_m66(void) { return kn_diag_m66(0.0f); }
KN_FN kn_spatial_matrix kn_identity_m66(void) { return kn_diag_m66(1.0f); }
KN_FN kn_spatial_matrix kn_make_m66_rows(kn_spatial_vector r0, kn_spatial_vector r1,
                                         kn_spatial_vector r2, kn_spatial_vector r3,
                                         kn_spatial_vector r4, kn_spatial_vector r5) {
  kn_spatial_vector rows[6] = {r0, r1, r2, r3, r4, r5};
  kn_spatial_matrix r;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) r.m[i][j] = rows[i].v[j];
  return r;
}
/* From 36 scalars, row by row. */
#define KN__F6(p) float p##0, float p##1, float p##2, float p##3, float p##4, float p##5
KN_FN kn_spatial_matrix kn_make_m66(KN__F6(a), KN__F6(b), KN__F6(c), KN__F6(d), KN__F6(e),
                                    KN__F6(f)) {
  return kn_make_m66_rows(kn_make_sv(a0, a1, a2, a3, a4, a5), kn_make_sv(b0, b1, b2, b3, b4, b5),
                          kn_make_sv(c0, c1, c2, c3, c4, c5), kn_make_sv(d0, d1, d2, d3, d4, d5),
                          kn_make_sv(e0, e1, e2, e3, e4, e5), kn_make_sv(f0, f1, f2, f3, f4, f5));
}
KN_FN float *kn_getp_m66(kn_spatial_matrix *a, int64_t i, int64_t j) {
  return &a->m[kn__clamp6(i)][kn__clamp6(j)];
}
KN_FN float kn_get_m66(kn_spatial_matrix a, int64_t i, int64_t j) {
  return a.m[kn__clamp6(i)][kn__clamp6(j)];
}
KN_FN kn_spatial_vector kn_get_m66_row(kn_spatial_matrix a, int64_t i) {
  kn_spatial_vector r;
  for (int j = 0; j < 6; j++) r.v[j] = a.m[kn__clamp6(i)][j];
  return r;
}
KN_FN void kn_set_m66_row(kn_spatial_matrix *a, int64_t i, kn_spatial_vector r) {
  for (int j = 0; j < 6; j++) a->m[kn__clamp6(i)][j] = r.v[j];
}

/* r[i][j] = EXPR for every element. */
#define KN__M66(stem, C2, B, EXPR)                                                                 \
  KN_FN kn_spatial_matrix kn_##stem##_##C2(B) {                                                    \
    kn_spatial_matrix r;                                                                           \
    for (int i = 0; i < 6; i++)                                                                    \
      for (int j = 0; j < 6; j++) r.m[i][j] = EXPR;                                                \
    return r;                                                                                      \
  }
#define KN__M_M kn_spatial_matrix a, kn_spatial_matrix b
KN__M66(add, m66_m66, KN__M_M, a.m[i][j] + b.m[i][j])
KN__M66(sub, m66_m66, KN__M_M, a.m[i][j] - b.m[i][j])
KN__M66(mul, m66_f32, kn_spatial_matrix a KN__COMMA float s, a.m[i][j] * s)
KN__M66(mul, f32_m66, float s KN__COMMA kn_spatial_matrix a, s *a.m[i][j])
KN__M66(div, m66_f32, kn_spatial_matrix a KN__COMMA float s, a.m[i][j] / s)
KN__M66(neg, m66, kn_spatial_matrix a, -a.m[i][j])
KN__M66(transpose, m66, kn_spatial_matrix a, a.m[j][i])
KN__M66(outer, sv_sv, kn_spatial_vector a KN__COMMA kn_spatial_vector b, a.v[i] * b.v[j])

KN_FN kn_spatial_matrix kn_mul_m66_m66(kn_spatial_matrix a, kn_spatial_matrix b) {
  kn_spatial_matrix r;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      float s = a.m[i][0] * b.m[0][j];
      for (int k = 1; k < 6; k++) s += a.m[i][k] * b.m[k][j];
      r.m[i][j] = s;
    }
  return r;
}
KN_FN kn_spatial_vector kn_mul_m66_sv(kn_spatial_matrix a, kn_spatial_vector x) {
  kn_spatial_vector r;
  for (int i = 0; i < 6; i++) {
    float s = a.m[i][0] * x.v[0];
    for (int k = 1; k < 6; k++) s += a.m[i][k] * x.v[k];
    r.v[i] = s;
  }
  return r;
}
KN_FN bool kn_eq_m66_m66(kn_spatial_matrix a, kn_spatial_matrix b) {
  bool r = true;
  for (int i = 0; i < 6; i++) r = r && kn_eq_sv_sv(kn_get_m66_row(a, i), kn_get_m66_row(b, i));
  return r;
}
KN_FN bool kn_ne_m66_m66(kn_spatial_matrix a, kn_spatial_matrix b) { return !kn_eq_m66_m66(a, b); }
KN_FN bool kn_isnan_m66(kn_spatial_matrix a) {
  bool r = false;
  for (int i = 0; i < 6; i++) r = r || kn_isnan_sv(kn_get_m66_row(a, i));
  return r;
}
KN_FN bool kn_isinf_m66(kn_spatial_matrix a) {
  bool r = false;
  for (int i = 0; i < 6; i++) r = r || kn_isinf_sv(kn_get_m66_row(a, i));
  return r;
}
KN_FN bool kn_isfinite_m66(kn_spatial_matrix a) { return !kn_isnan_m66(a) && !kn_isinf_m66(a); }

/* [R 0; S R]: Warp's spatial_adjoint (for a frame change, S = skew(p) R). */
KN_FN kn_spatial_matrix kn_spatial_adjoint_m33_m33(kn_mat33 r, kn_mat33 s) {
  kn_spatial_matrix a = kn_zero_m66();
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      a.m[i][j] = r.m[i][j];
      a.m[i + 3][j + 3] = r.m[i][j];
      a.m[i + 3][j] = s.m[i][j];
    }
  return a;
}

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
