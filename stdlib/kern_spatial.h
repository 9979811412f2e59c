/* kern_spatial.h: quaternion functions of generated kernel code.
 *
 * Requires kern_builtins.h and kern_math.h before it (pasted in that order by
 * cmake/embed_stdlib.cmake; a host C file may include this header alone).
 * Compiled by the host C compiler and by NVRTC under the rules of
 * kern_builtins.h. Produces the kn_ functions frontend/builtins.c names for
 * quaternions beyond the product and rotation: dot length normalize inverse
 * conjugate lerp quat_slerp, q / s, quat_rotate_inv, quat_to_matrix
 * quat_from_matrix, quat_from_axis_angle quat_to_axis_angle quat_rpy
 * quat_twist quat_identity, most of them through KN__QUAT_FNS, the one body
 * kern_quatn.h instantiates for float64 too. The formulas are Warp's (warp/native/quat.h), so
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

/* The quaternion functions of one float type, written once: float32 (kn_quat,
 * here) and float64 (kn_quatd, kern_quatn.h) run the same operations in the
 * same order. QT/QC: the quat type and its code; V3/V3C and V4/V4C: its
 * 3- and 4-vectors; S/SC: the scalar. Constants are written (S)c: each is
 * exact in both types, so (float)2.0 is 2.0f and the float32 code is what it
 * always was. */
#define KN__QUAT_FNS(QT, QC, V3, V3C, V4, V4C, S, SC)                                              \
  KN_FN V3 kn__##QC##_xyz(QT q) { return kn_make_##V3C(q.x, q.y, q.z); }                           \
  KN_FN S kn_dot_##QC##_##QC(QT a, QT b) {                                                         \
    return kn_dot_##V4C##_##V4C(kn__##QC##_##V4C(a), kn__##QC##_##V4C(b));                         \
  }                                                                                                \
  KN_FN S kn_length_sq_##QC(QT q) { return kn_dot_##QC##_##QC(q, q); }                             \
  KN_FN S kn_length_##QC(QT q) { return kn_sqrt_##SC(kn_dot_##QC##_##QC(q, q)); }                  \
  /* A zero quaternion normalizes to the identity (Warp's rule). */                                \
  KN_FN QT kn_normalize_##QC(QT q) {                                                               \
    S l = kn_length_##QC(q);                                                                       \
    return l > (S)0.0 ? kn__##V4C##_##QC(kn_div_##V4C##_##SC(kn__##QC##_##V4C(q), l))              \
                      : kn_identity_##QC();                                                        \
  }                                                                                                \
  KN_FN QT kn_conjugate_##QC(QT q) { return kn_make_##QC(-q.x, -q.y, -q.z, q.w); }                 \
  /* Warp's quat_inverse: the conjugate, the inverse of a unit quaternion. */                      \
  KN_FN QT kn_quat_inverse_##QC(QT q) { return kn_conjugate_##QC(q); }                             \
  /* The inverse of any quaternion, conjugate / |q|^2; zero stays zero. */                         \
  KN_FN QT kn_inverse_##QC(QT q) {                                                                 \
    S d = kn_dot_##QC##_##QC(q, q);                                                                \
    return d != (S)0.0                                                                             \
               ? kn__##V4C##_##QC(kn_div_##V4C##_##SC(kn__##QC##_##V4C(kn_conjugate_##QC(q)), d))  \
               : kn_zero_##QC();                                                                   \
  }                                                                                                \
  KN_FN QT kn_div_##QC##_##SC(QT q, S s) {                                                         \
    return kn__##V4C##_##QC(kn_div_##V4C##_##SC(kn__##QC##_##V4C(q), s));                          \
  }                                                                                                \
  KN_FN QT kn_lerp_##QC##_##QC##_##SC(QT a, QT b, S t) {                                           \
    return kn__##V4C##_##QC(                                                                       \
        kn_lerp_##V4C##_##V4C##_##SC(kn__##QC##_##V4C(a), kn__##QC##_##V4C(b), t));                \
  }                                                                                                \
  /* Warp: x (2w^2 - 1) - 2w (u x x) + 2u (u . x), u = q.xyz. */                                   \
  KN_FN V3 kn_quat_rotate_inv_##QC##_##V3C(QT q, V3 x) {                                           \
    V3 u = kn__##QC##_xyz(q);                                                                      \
    V3 a = kn_mul_##V3C##_##SC(x, (S)2.0 * q.w * q.w - (S)1.0);                                    \
    V3 b = kn_mul_##V3C##_##SC(kn_mul_##V3C##_##SC(kn_cross_##V3C##_##V3C(u, x), q.w), (S)2.0);    \
    V3 c = kn_mul_##V3C##_##SC(kn_mul_##V3C##_##SC(u, kn_dot_##V3C##_##V3C(u, x)), (S)2.0);        \
    return kn_add_##V3C##_##V3C(kn_sub_##V3C##_##V3C(a, b), c);                                    \
  }                                                                                                \
  /* Warp's quat_from_matrix (Shepperd's method on the largest diagonal term), \
   * on the top-left 3x3 block m. */                   \
  KN_FN QT kn__quat_from_rows_##QC(S m[3][4]) {                                                    \
    S tr = m[0][0] + m[1][1] + m[2][2], x, y, z, w, h;                                             \
    if (tr >= (S)0.0) {                                                                            \
      h = kn_sqrt_##SC(tr + (S)1.0);                                                               \
      w = (S)0.5 * h;                                                                              \
      h = (S)0.5 / h;                                                                              \
      x = (m[2][1] - m[1][2]) * h;                                                                 \
      y = (m[0][2] - m[2][0]) * h;                                                                 \
      z = (m[1][0] - m[0][1]) * h;                                                                 \
    } else {                                                                                       \
      int d = m[1][1] > m[0][0] ? 1 : 0;                                                           \
      if (m[2][2] > m[d][d]) d = 2;                                                                \
      if (d == 0) {                                                                                \
        h = kn_sqrt_##SC((m[0][0] - (m[1][1] + m[2][2])) + (S)1.0);                                \
        x = (S)0.5 * h;                                                                            \
        h = (S)0.5 / h;                                                                            \
        y = (m[0][1] + m[1][0]) * h;                                                               \
        z = (m[2][0] + m[0][2]) * h;                                                               \
        w = (m[2][1] - m[1][2]) * h;                                                               \
      } else if (d == 1) {                                                                         \
        h = kn_sqrt_##SC((m[1][1] - (m[2][2] + m[0][0])) + (S)1.0);                                \
        y = (S)0.5 * h;                                                                            \
        h = (S)0.5 / h;                                                                            \
        z = (m[1][2] + m[2][1]) * h;                                                               \
        x = (m[0][1] + m[1][0]) * h;                                                               \
        w = (m[0][2] - m[2][0]) * h;                                                               \
      } else {                                                                                     \
        h = kn_sqrt_##SC((m[2][2] - (m[0][0] + m[1][1])) + (S)1.0);                                \
        z = (S)0.5 * h;                                                                            \
        h = (S)0.5 / h;                                                                            \
        x = (m[2][0] + m[0][2]) * h;                                                               \
        y = (m[1][2] + m[2][1]) * h;                                                               \
        w = (m[1][0] - m[0][1]) * h;                                                               \
      }                                                                                            \
    }                                                                                              \
    return kn_normalize_##QC(kn_make_##QC(x, y, z, w));                                            \
  }                                                                                                \
  /* (axis, angle) as a 4-vector: the unit axis in xyz, the angle in [0, pi] in \
   * w (Warp's quat_to_axis_angle returns them through out parameters). */                  \
  KN_FN V4 kn_quat_to_axis_angle_##QC(QT q) {                                                      \
    V3 v = kn__##QC##_xyz(q), n = kn_normalize_##V3C(v);                                           \
    if (q.w < (S)0.0) n = kn_neg_##V3C(n);                                                         \
    S angle = (S)2.0 * kn_atan2_##SC##_##SC(kn_length_##V3C(v), kn_abs_##SC(q.w));                 \
    return kn_make_##V4C(n.x, n.y, n.z, angle);                                                    \
  }                                                                                                \
  /* Warp's quat_slerp: q0 * from_axis_angle(axis, t * angle) of q0^-1 q1. */                      \
  KN_FN QT kn_quat_slerp_##QC##_##QC##_##SC(QT q0, QT q1, S t) {                                   \
    V4 aa = kn_quat_to_axis_angle_##QC(kn_quat_mul_##QC##_##QC(kn_quat_inverse_##QC(q0), q1));     \
    V3 axis = kn_make_##V3C(aa.x, aa.y, aa.z);                                                     \
    S half = t * aa.w * (S)0.5, s = kn_sin_##SC(half);                                             \
    QT r = kn_make_##QC(axis.x * s, axis.y * s, axis.z * s, kn_cos_##SC(half));                    \
    return kn_quat_mul_##QC##_##QC(q0, r);                                                         \
  }                                                                                                \
  KN_FN QT kn_quat_from_axis_angle_##V3C##_##SC(V3 axis, S angle) {                                \
    V3 n = kn_normalize_##V3C(axis);                                                               \
    S s = kn_sin_##SC((S)0.5 * angle);                                                             \
    return kn_make_##QC(n.x * s, n.y * s, n.z * s, kn_cos_##SC((S)0.5 * angle));                   \
  }                                                                                                \
  /* Roll about x, pitch about y, yaw about z (radians), Warp's formula. */                        \
  KN_FN QT kn_quat_rpy_##SC##_##SC##_##SC(S roll, S pitch, S yaw) {                                \
    S cy = kn_cos_##SC(yaw * (S)0.5), sy = kn_sin_##SC(yaw * (S)0.5);                              \
    S cr = kn_cos_##SC(roll * (S)0.5), sr = kn_sin_##SC(roll * (S)0.5);                            \
    S cp = kn_cos_##SC(pitch * (S)0.5), sp = kn_sin_##SC(pitch * (S)0.5);                          \
    S w = cy * cr * cp + sy * sr * sp;                                                             \
    S x = cy * sr * cp - sy * cr * sp;                                                             \
    S y = cy * cr * sp + sy * sr * cp;                                                             \
    S z = sy * cr * cp - cy * sr * sp;                                                             \
    return kn_make_##QC(x, y, z, w);                                                               \
  }                                                                                                \
  /* The twist of q about the unit axis: q's vector part projected on the axis. */                 \
  KN_FN QT kn_quat_twist_##V3C##_##QC(V3 axis, QT q) {                                             \
    V3 p = kn_mul_##V3C##_##SC(axis, kn_dot_##V3C##_##V3C(kn__##QC##_xyz(q), axis));               \
    return kn_normalize_##QC(kn_make_##QC(p.x, p.y, p.z, q.w));                                    \
  }

KN__QUAT_FNS(kn_quat, q, kn_vec3, v3, kn_vec4, v4, float, f32)
KN_FN kn_quat kn_quat_identity(void) { return kn_identity_q(); }

/* The rotation matrix: its columns are the rotated basis vectors. */
KN_FN kn_mat33 kn_quat_to_matrix_q(kn_quat q) {
  kn_vec3 c0 = kn_quat_rotate_q_v3(q, kn_make_v3(1.0f, 0.0f, 0.0f));
  kn_vec3 c1 = kn_quat_rotate_q_v3(q, kn_make_v3(0.0f, 1.0f, 0.0f));
  kn_vec3 c2 = kn_quat_rotate_q_v3(q, kn_make_v3(0.0f, 0.0f, 1.0f));
  return kn_make_m33(c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z);
}
KN_FN kn_quat kn_quat_from_matrix_m33(kn_mat33 a) {
  float m[3][4];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) m[i][j] = a.m[i][j];
  return kn__quat_from_rows_q(m);
}
KN_FN kn_quat kn_quat_from_matrix_m44(kn_mat44 a) {
  float m[3][4];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) m[i][j] = a.m[i][j];
  return kn__quat_from_rows_q(m);
}

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
