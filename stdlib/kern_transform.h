/* kern_transform.h: rigid transforms of generated kernel code.
 *
 * Requires kern_spatial.h before it (cmake/embed_stdlib.cmake pastes the
 * parts in order; a host C file may include this header alone). Compiled by
 * the host C compiler and by NVRTC under the rules of kern_builtins.h.
 * Produces kn_transform (the kern type transform: a translation p, then a
 * rotation q, 7 packed floats) and the kn_ functions frontend/builtins.c
 * names for it: the constructors and component access the emitter calls
 * (kn_make_tf_pq, kn_make_tf, kn_get_tf, kn_getp_tf), transform_identity,
 * transform_get_/set_translation and _rotation, transform_multiply (and *),
 * transform_inverse, transform_point, transform_vector (of a transform or a
 * mat44), transform_from_matrix, transform_to_matrix, transform_compose,
 * lerp, + - == != and scaling, isnan/isinf/isfinite. The formulas are Warp's
 * (warp/native/spatial.h, warp.math): they use + - * / and sqrt only
 * (quat_from_matrix's), so results are the same bits on every device.
 */
#ifndef KN_TRANSFORM_H
#define KN_TRANSFORM_H

#ifndef KN_SPATIAL_H
#include "kern_spatial.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

/* x' = q x q* + p: rotate by the unit quaternion q, then translate by p. */
typedef struct kn_transform {
  kn_vec3 p;
  kn_quat q;
} kn_transform;
KN_STATIC_ASSERT(sizeof(kn_transform) == 28, "transform layout");

KN_FN kn_transform kn_make_tf_pq(kn_vec3 p, kn_quat q) {
  kn_transform t;
  t.p = p;
  t.q = q;
  return t;
}
KN_FN kn_transform kn_make_tf(float px, float py, float pz, float qx, float qy, float qz,
                              float qw) {
  return kn_make_tf_pq(kn_make_v3(px, py, pz), kn_make_q(qx, qy, qz, qw));
}
KN_FN kn_transform kn_zero_tf(void) { return kn_make_tf_pq(kn_zero_v3(), kn_zero_q()); }
/* Component k of the 7 (p.x p.y p.z q.x q.y q.z q.w), clamped like a vector's. */
KN_FN float *kn_getp_tf(kn_transform *t, int64_t k) {
  return k < 3 ? kn_getp_v3(&t->p, k) : kn_getp_q(&t->q, k - 3);
}
KN_FN float kn_get_tf(kn_transform t, int64_t k) { return *kn_getp_tf(&t, k); }

KN_FN kn_transform kn_transform_identity(void) {
  return kn_make_tf_pq(kn_zero_v3(), kn_identity_q());
}
KN_FN kn_vec3 kn_transform_get_translation_tf(kn_transform t) { return t.p; }
KN_FN kn_quat kn_transform_get_rotation_tf(kn_transform t) { return t.q; }
KN_FN void kn_transform_set_translation_ptf_v3(kn_transform *t, kn_vec3 p) { t->p = p; }
KN_FN void kn_transform_set_rotation_ptf_q(kn_transform *t, kn_quat q) { t->q = q; }

/* a after b: rotate b's translation by a, then add a's. */
KN_FN kn_transform kn_transform_multiply_tf_tf(kn_transform a, kn_transform b) {
  return kn_make_tf_pq(kn_add_v3_v3(kn_quat_rotate_q_v3(a.q, b.p), a.p), kn_quat_mul_q_q(a.q, b.q));
}
KN_FN kn_transform kn_mul_tf_tf(kn_transform a, kn_transform b) {
  return kn_transform_multiply_tf_tf(a, b);
}
/* The inverse of a rigid transform: (-(q* p q), q*) for a unit q. */
KN_FN kn_transform kn_transform_inverse_tf(kn_transform t) {
  kn_quat qi = kn_quat_inverse_q(t.q);
  return kn_make_tf_pq(kn_neg_v3(kn_quat_rotate_q_v3(qi, t.p)), qi);
}
KN_FN kn_vec3 kn_transform_point_tf_v3(kn_transform t, kn_vec3 x) {
  return kn_add_v3_v3(t.p, kn_quat_rotate_q_v3(t.q, x));
}
KN_FN kn_vec3 kn_transform_vector_tf_v3(kn_transform t, kn_vec3 x) {
  return kn_quat_rotate_q_v3(t.q, x);
}
/* m * (x, w) without a perspective divide: w = 1 for a point, 0 for a vector. */
KN_FN kn_vec3 kn__m44_apply(kn_mat44 m, kn_vec3 x, float w) {
  kn_vec4 r = kn_mul_m44_v4(m, kn_make_v4(x.x, x.y, x.z, w));
  return kn_make_v3(r.x, r.y, r.z);
}
KN_FN kn_vec3 kn_transform_point_m44_v3(kn_mat44 m, kn_vec3 x) { return kn__m44_apply(m, x, 1.0f); }
KN_FN kn_vec3 kn_transform_vector_m44_v3(kn_mat44 m, kn_vec3 x) {
  return kn__m44_apply(m, x, 0.0f);
}

/* The translation from the last column, the rotation from the top-left 3x3. */
KN_FN kn_transform kn_transform_from_matrix_m44(kn_mat44 m) {
  return kn_make_tf_pq(kn_make_v3(m.m[0][3], m.m[1][3], m.m[2][3]), kn_quat_from_matrix_m44(m));
}
/* [s_x R0 s_y R1 s_z R2 p; 0 0 0 1]: R's columns scaled, then translated. */
KN_FN kn_mat44 kn_transform_compose_v3_q_v3(kn_vec3 p, kn_quat q, kn_vec3 s) {
  kn_mat33 r = kn_quat_to_matrix_q(q);
  kn_mat44 m;
  float sc[3] = {s.x, s.y, s.z}, pc[3] = {p.x, p.y, p.z};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) m.m[i][j] = sc[j] * r.m[i][j];
    m.m[i][3] = pc[i];
    m.m[3][i] = 0.0f;
  }
  m.m[3][3] = 1.0f;
  return m;
}
KN_FN kn_mat44 kn_transform_to_matrix_tf(kn_transform t) {
  kn_mat33 r = kn_quat_to_matrix_q(t.q);
  kn_mat44 m;
  float pc[3] = {t.p.x, t.p.y, t.p.z};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) m.m[i][j] = r.m[i][j];
    m.m[i][3] = pc[i];
    m.m[3][i] = 0.0f;
  }
  m.m[3][3] = 1.0f;
  return m;
}

/* Componentwise, on all 7 floats (the rotation is not renormalized). */
KN_FN kn_transform kn_add_tf_tf(kn_transform a, kn_transform b) {
  return kn_make_tf_pq(kn_add_v3_v3(a.p, b.p), kn_add_q_q(a.q, b.q));
}
KN_FN kn_transform kn_sub_tf_tf(kn_transform a, kn_transform b) {
  return kn_make_tf_pq(kn_sub_v3_v3(a.p, b.p), kn_sub_q_q(a.q, b.q));
}
KN_FN kn_transform kn_neg_tf(kn_transform a) {
  return kn_make_tf_pq(kn_neg_v3(a.p), kn_neg_q(a.q));
}
KN_FN kn_transform kn_mul_tf_f32(kn_transform a, float s) {
  return kn_make_tf_pq(kn_mul_v3_f32(a.p, s), kn_mul_q_f32(a.q, s));
}
KN_FN kn_transform kn_mul_f32_tf(float s, kn_transform a) {
  return kn_make_tf_pq(kn_mul_f32_v3(s, a.p), kn_mul_f32_q(s, a.q));
}
KN_FN kn_transform kn_lerp_tf_tf_f32(kn_transform a, kn_transform b, float t) {
  return kn_make_tf_pq(kn_lerp_v3_v3_f32(a.p, b.p, t), kn_lerp_q_q_f32(a.q, b.q, t));
}
KN_FN bool kn_eq_tf_tf(kn_transform a, kn_transform b) {
  return kn_eq_v3_v3(a.p, b.p) && kn_eq_q_q(a.q, b.q);
}
KN_FN bool kn_ne_tf_tf(kn_transform a, kn_transform b) { return !kn_eq_tf_tf(a, b); }
KN_FN bool kn_isnan_tf(kn_transform t) { return kn_isnan_v3(t.p) || kn_isnan_q(t.q); }
KN_FN bool kn_isinf_tf(kn_transform t) { return kn_isinf_v3(t.p) || kn_isinf_q(t.q); }
KN_FN bool kn_isfinite_tf(kn_transform t) { return kn_isfinite_v3(t.p) && kn_isfinite_q(t.q); }

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
