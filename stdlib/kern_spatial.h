/* kern_spatial.h: quaternion functions of generated kernel code.
 *
 * Requires kern_builtins.h and kern_math.h before it (pasted in that order by
 * cmake/embed_stdlib.cmake; a host C file may include this header alone).
 * Compiled by the host C compiler and by NVRTC under the rules of
 * kern_builtins.h. Produces the kn_ functions frontend/builtins.c names for
 * quaternions beyond the product and rotation: dot length normalize inverse
 * conjugate lerp quat_slerp, q / s, quat_rotate_inv, quat_to_matrix
 * quat_from_matrix, quat_from_axis_angle quat_to_axis_angle quat_rpy
 * quat_twist quat_identity. The formulas are Warp's (warp/native/quat.h), so
 * results match it up to rounding; sin, cos and atan2 are kern_libm.h's, so
 * every result is the same bits on every device (but in a fast-math module).
 */
#ifndef KN_SPATIAL_H
#define KN_SPATIAL_H

#ifndef KN_MATH_H
#include "kern_math.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

/* ===== quaternions ======================================================== */

KN_FN kn_vec3 kn__q_xyz(kn_quat q) { return kn_make_v3(q.x, q.y, q.z); }

KN_FN float kn_dot_q_q(kn_quat a, kn_quat b) { return kn_dot_v4_v4(kn__q_v4(a), kn__q_v4(b)); }
KN_FN float kn_length_sq_q(kn_quat q) { return kn_dot_q_q(q, q); }
KN_FN float kn_length_q(kn_quat q) { return kn_sqrt_f32(kn_dot_q_q(q, q)); }
/* A zero quaternion normalizes to the identity (Warp's rule). */
KN_FN kn_quat kn_normalize_q(kn_quat q) {
  float l = kn_length_q(q);
  return l > 0.0f ? kn__v4_q(kn_div_v4_f32(kn__q_v4(q), l)) : kn_identity_q();
}
KN_FN kn_quat kn_conjugate_q(kn_quat q) { return kn_make_q(-q.x, -q.y, -q.z, q.w); }
/* Warp's quat_inverse: the conjugate, the inverse of a unit quaternion. */
KN_FN kn_quat kn_quat_inverse_q(kn_quat q) { return kn_conjugate_q(q); }
/* The inverse of any quaternion, conjugate / |q|^2; zero stays zero. */
KN_FN kn_quat kn_inverse_q(kn_quat q) {
  float d = kn_dot_q_q(q, q);
  return d != 0.0f ? kn__v4_q(kn_div_v4_f32(kn__q_v4(kn_conjugate_q(q)), d)) : kn_zero_q();
}
KN_FN kn_quat kn_div_q_f32(kn_quat q, float s) { return kn__v4_q(kn_div_v4_f32(kn__q_v4(q), s)); }
KN_FN kn_quat kn_lerp_q_q_f32(kn_quat a, kn_quat b, float t) {
  return kn__v4_q(kn_lerp_v4_v4_f32(kn__q_v4(a), kn__q_v4(b), t));
}
KN_FN kn_quat kn_quat_identity(void) { return kn_identity_q(); }

/* Warp: x (2w^2 - 1) - 2w (u x x) + 2u (u . x), u = q.xyz. */
KN_FN kn_vec3 kn_quat_rotate_inv_q_v3(kn_quat q, kn_vec3 x) {
  kn_vec3 u = kn__q_xyz(q);
  kn_vec3 a = kn_mul_v3_f32(x, 2.0f * q.w * q.w - 1.0f);
  kn_vec3 b = kn_mul_v3_f32(kn_mul_v3_f32(kn_cross_v3_v3(u, x), q.w), 2.0f);
  kn_vec3 c = kn_mul_v3_f32(kn_mul_v3_f32(u, kn_dot_v3_v3(u, x)), 2.0f);
  return kn_add_v3_v3(kn_sub_v3_v3(a, b), c);
}

/* The rotation matrix: its columns are the rotated basis vectors. */
KN_FN kn_mat33 kn_quat_to_matrix_q(kn_quat q) {
  kn_vec3 c0 = kn_quat_rotate_q_v3(q, kn_make_v3(1.0f, 0.0f, 0.0f));
  kn_vec3 c1 = kn_quat_rotate_q_v3(q, kn_make_v3(0.0f, 1.0f, 0.0f));
  kn_vec3 c2 = kn_quat_rotate_q_v3(q, kn_make_v3(0.0f, 0.0f, 1.0f));
  return kn_make_m33(c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z);
}

/* Warp's quat_from_matrix (Shepperd's method on the largest diagonal term),
 * on the top-left 3x3 block m. */
KN_FN kn_quat kn__quat_from_rows(float m[3][4]) {
  float tr = m[0][0] + m[1][1] + m[2][2], x, y, z, w, h;
  if (tr >= 0.0f) {
    h = kn_sqrt_f32(tr + 1.0f);
    w = 0.5f * h;
    h = 0.5f / h;
    x = (m[2][1] - m[1][2]) * h;
    y = (m[0][2] - m[2][0]) * h;
    z = (m[1][0] - m[0][1]) * h;
  } else {
    int d = m[1][1] > m[0][0] ? 1 : 0;
    if (m[2][2] > m[d][d]) d = 2;
    if (d == 0) {
      h = kn_sqrt_f32((m[0][0] - (m[1][1] + m[2][2])) + 1.0f);
      x = 0.5f * h;
      h = 0.5f / h;
      y = (m[0][1] + m[1][0]) * h;
      z = (m[2][0] + m[0][2]) * h;
      w = (m[2][1] - m[1][2]) * h;
    } else if (d == 1) {
      h = kn_sqrt_f32((m[1][1] - (m[2][2] + m[0][0])) + 1.0f);
      y = 0.5f * h;
      h = 0.5f / h;
      z = (m[1][2] + m[2][1]) * h;
      x = (m[0][1] + m[1][0]) * h;
      w = (m[0][2] - m[2][0]) * h;
    } else {
      h = kn_sqrt_f32((m[2][2] - (m[0][0] + m[1][1])) + 1.0f);
      z = 0.5f * h;
      h = 0.5f / h;
      x = (m[2][0] + m[0][2]) * h;
      y = (m[1][2] + m[2][1]) * h;
      w = (m[1][0] - m[0][1]) * h;
    }
  }
  return kn_normalize_q(kn_make_q(x, y, z, w));
}
KN_FN kn_quat kn_quat_from_matrix_m33(kn_mat33 a) {
  float m[3][4];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) m[i][j] = a.m[i][j];
  return kn__quat_from_rows(m);
}
KN_FN kn_quat kn_quat_from_matrix_m44(kn_mat44 a) {
  float m[3][4];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) m[i][j] = a.m[i][j];
  return kn__quat_from_rows(m);
}

/* (axis, angle) as a vec4: the unit axis in xyz, the angle in [0, pi] in w
 * (Warp's quat_to_axis_angle returns them through out parameters). */
KN_FN kn_vec4 kn_quat_to_axis_angle_q(kn_quat q) {
  kn_vec3 v = kn__q_xyz(q), n = kn_normalize_v3(v);
  if (q.w < 0.0f) n = kn_neg_v3(n);
  float angle = 2.0f * kn_atan2_f32_f32(kn_length_v3(v), kn_abs_f32(q.w));
  return kn_make_v4(n.x, n.y, n.z, angle);
}

/* Warp's quat_slerp: q0 * from_axis_angle(axis, t * angle) of q0^-1 q1. */
KN_FN kn_quat kn_quat_slerp_q_q_f32(kn_quat q0, kn_quat q1, float t) {
  kn_vec4 aa = kn_quat_to_axis_angle_q(kn_quat_mul_q_q(kn_quat_inverse_q(q0), q1));
  kn_vec3 axis = kn_make_v3(aa.x, aa.y, aa.z);
  float half = t * aa.w * 0.5f, s = kn_sin_f32(half);
  kn_quat r = kn_make_q(axis.x * s, axis.y * s, axis.z * s, kn_cos_f32(half));
  return kn_quat_mul_q_q(q0, r);
}

KN_FN kn_quat kn_quat_from_axis_angle_v3_f32(kn_vec3 axis, float angle) {
  kn_vec3 n = kn_normalize_v3(axis);
  float s = kn_sin_f32(0.5f * angle);
  return kn_make_q(n.x * s, n.y * s, n.z * s, kn_cos_f32(0.5f * angle));
}

/* Roll about x, pitch about y, yaw about z (radians), Warp's formula. */
KN_FN kn_quat kn_quat_rpy_f32_f32_f32(float roll, float pitch, float yaw) {
  float cy = kn_cos_f32(yaw * 0.5f), sy = kn_sin_f32(yaw * 0.5f);
  float cr = kn_cos_f32(roll * 0.5f), sr = kn_sin_f32(roll * 0.5f);
  float cp = kn_cos_f32(pitch * 0.5f), sp = kn_sin_f32(pitch * 0.5f);
  float w = cy * cr * cp + sy * sr * sp;
  float x = cy * sr * cp - sy * cr * sp;
  float y = cy * cr * sp + sy * sr * cp;
  float z = sy * cr * cp - cy * sr * sp;
  return kn_make_q(x, y, z, w);
}

/* The twist of q about the unit axis: q's vector part projected on the axis. */
KN_FN kn_quat kn_quat_twist_v3_q(kn_vec3 axis, kn_quat q) {
  kn_vec3 p = kn_mul_v3_f32(axis, kn_dot_v3_v3(kn__q_xyz(q), axis));
  return kn_normalize_q(kn_make_q(p.x, p.y, p.z, q.w));
}

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
