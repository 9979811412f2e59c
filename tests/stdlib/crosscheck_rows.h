/* crosscheck_rows.h: computations that gpu_crosscheck.c runs on both devices.
 *
 * Requires the stdlib parts (tests/stdlib/parts.h) before it. Compiled as C into the test and
 * pasted as text into the NVRTC source, so the CPU and the GPU evaluate the
 * very same expressions. Every output must agree bit for bit: kc_exact's,
 * kc_transc's (the transcendental functions and what uses them) and
 * kc_random's. C/C++ common subset only: no compound literals.
 */
#define KC_EXACT  252
#define KC_TRANSC 112
#define KC_RANDOM 24

/* Cells the atomics kernel updates from every thread (see gpu_crosscheck.c). */
typedef struct kc_cells {
  int32_t i32_add, i32_min, i32_max, i32_cas, i32_xor, i32_exch;
  uint32_t u32_sub, u32_or, u32_and, u32_min, u32_max;
  int64_t i64_add, i64_min, i64_max, i64_exch, i64_or, i64_cas;
  uint64_t u64_add, u64_max, u64_min, u64_cas, u64_and, u64_xor;
  float f32_add, f32_sub, f32_min, f32_max, f32_cas, f32_exch;
  double f64_add, f64_sub, f64_min, f64_max, f64_cas, f64_exch;
  kn_vec3 v3_add;
  kn_ivec4 iv4_max;
  kn_dvec2 dv2_min;
} kc_cells;

/* Columns of the atomics kernel's `olds` output, one int64 per thread each. */
enum {
  KC_OLD_I32_ADD,
  KC_OLD_U32_SUB,
  KC_OLD_I64_EXCH,
  KC_OLD_F64_EXCH,
  KC_OLD_I32_EXCH,
  KC_OLD_F32_EXCH,
  KC_OLD_F32_ADD,
  KC_OLDS
};

/* A bijection of [0, n) for n a power of two. */
KN_FN int64_t kc_perm(int64_t i, int64_t n) { return (i * 7919) & (n - 1); }

/* Every thread i of n applies one update of each kind. */
KN_FN void kc_atomics(kc_cells *c, int64_t *olds, int64_t i, int64_t n) {
  int64_t p = kc_perm(i, n);
  int64_t *o = olds + i * KC_OLDS;
  o[KC_OLD_I32_ADD] = kn_atomic_add_i32(&c->i32_add, 1);
  kn_atomic_min_i32(&c->i32_min, (int32_t)p - 5);
  kn_atomic_max_i32(&c->i32_max, (int32_t)p - 5);
  kn_atomic_xor_i32(&c->i32_xor, (int32_t)(1u << (i & 31)));
  o[KC_OLD_I32_EXCH] = kn_atomic_exch_i32(&c->i32_exch, (int32_t)i + 1);
  o[KC_OLD_U32_SUB] = kn_atomic_sub_u32(&c->u32_sub, 1u);
  kn_atomic_or_u32(&c->u32_or, 1u << (i & 31));
  kn_atomic_and_u32(&c->u32_and, ~(1u << (i & 31)));
  kn_atomic_min_u32(&c->u32_min, (uint32_t)p + 0x80000000u);
  kn_atomic_max_u32(&c->u32_max, (uint32_t)p + 0x80000000u);
  kn_atomic_add_i64(&c->i64_add, (int64_t)1 << 33);
  kn_atomic_min_i64(&c->i64_min, -p * ((int64_t)1 << 40));
  kn_atomic_max_i64(&c->i64_max, -p * ((int64_t)1 << 40));
  o[KC_OLD_I64_EXCH] = kn_atomic_exch_i64(&c->i64_exch, i + 1);
  kn_atomic_or_i64(&c->i64_or, (int64_t)((uint64_t)1 << (i & 63)));
  kn_atomic_add_u64(&c->u64_add, 1u);
  kn_atomic_max_u64(&c->u64_max, (uint64_t)p << 40);
  kn_atomic_min_u64(&c->u64_min, ((uint64_t)p << 40) + 1u);
  kn_atomic_and_u64(&c->u64_and, ~((uint64_t)1 << (i & 63)));
  kn_atomic_xor_u64(&c->u64_xor, (uint64_t)1 << (i & 63));
  o[KC_OLD_F32_ADD] = (int64_t)kn_atomic_add_f32(&c->f32_add, 1.0f);
  kn_atomic_sub_f32(&c->f32_sub, 2.0f);
  kn_atomic_min_f32(&c->f32_min, (float)p - 0.5f);
  kn_atomic_max_f32(&c->f32_max, (float)p - 0.5f);
  o[KC_OLD_F32_EXCH] = (int64_t)kn_atomic_exch_f32(&c->f32_exch, (float)(i + 1));
  kn_atomic_add_f64(&c->f64_add, 0.25);
  kn_atomic_sub_f64(&c->f64_sub, 1.0);
  kn_atomic_min_f64(&c->f64_min, -(double)p);
  kn_atomic_max_f64(&c->f64_max, -(double)p);
  o[KC_OLD_F64_EXCH] = (int64_t)kn_atomic_exch_f64(&c->f64_exch, (double)(i + 1));
  kn_atomic_add_v3(&c->v3_add, kn_make_v3(1.0f, 2.0f, 3.0f));
  kn_atomic_max_iv4(&c->iv4_max, kn_make_iv4((int32_t)p, (int32_t)-p, (int32_t)(p / 2), 7));
  kn_atomic_min_dv2(&c->dv2_min, kn_make_dv2((double)p, -(double)p));
  /* increments through compare-and-swap (first reads through an atomic too) */
  int32_t a = kn_atomic_add_i32(&c->i32_cas, 0), sa;
  while ((sa = kn_atomic_cas_i32(&c->i32_cas, a, a + 1)) != a) a = sa;
  int64_t b = kn_atomic_add_i64(&c->i64_cas, 0), sb;
  while ((sb = kn_atomic_cas_i64(&c->i64_cas, b, b + 1)) != b) b = sb;
  uint64_t d = kn_atomic_add_u64(&c->u64_cas, 0u), sd;
  while ((sd = kn_atomic_cas_u64(&c->u64_cas, d, d + 1u)) != d) d = sd;
  float e = kn_atomic_add_f32(&c->f32_cas, 0.0f), se;
  while (kn__f32_bits(se = kn_atomic_cas_f32(&c->f32_cas, e, e + 1.0f)) != kn__f32_bits(e)) e = se;
  double f = kn_atomic_add_f64(&c->f64_cas, 0.0), sf;
  while (kn__f64_bits(sf = kn_atomic_cas_f64(&c->f64_cas, f, f + 1.0)) != kn__f64_bits(f)) f = sf;
}

/* A finite "nice" float in [-8, 8) derived from x and k (exact on both devices). */
KN_FN float kc_nice(uint64_t x, uint32_t k) {
  return (float)(int32_t)kn__pcg_hash((uint32_t)x + 0x9e3779b9u * k) * (1.0f / 268435456.0f);
}

KN_FN kn_vec3 kc_v3(uint64_t x, uint32_t k) {
  return kn_make_v3(kc_nice(x, k), kc_nice(x, k + 1), kc_nice(x, k + 2));
}

/* A NaN made by arithmetic has a different sign and payload on each device
 * (x86: 0xffc00000, CUDA: 0x7fffffff), so float outputs are compared with
 * every NaN folded into one pattern. */
KN_FN uint64_t kc_f32_out(float v) { return v != v ? 0x7fc00000u : kn__f32_bits(v); }
KN_FN uint64_t kc_f64_out(double v) { return v != v ? 0x7ff8000000000000ull : kn__f64_bits(v); }

#define KC_PUT(v)  (o[n++] = (uint64_t)(v))
#define KC_PUTF(v) (o[n++] = kc_f32_out(v))
#define KC_PUTD(v) (o[n++] = kc_f64_out(v))
/* Raw bits, NaNs included: kern_libm.h's NaNs are the same on both devices. */
#define KC_PUTFB(v) (o[n++] = kn__f32_bits(v))
#define KC_PUTDB(v) (o[n++] = kn__f64_bits(v))

/* Integer semantics of one type on (a, b) and the conversions into it. */
#define KC_INT(T, C)                                                                               \
  KC_PUT((int64_t)kn_div_##C((T)a, (T)b));                                                         \
  KC_PUT((int64_t)kn_mod_##C((T)a, (T)b));                                                         \
  KC_PUT((int64_t)kn_shl_##C((T)a, (int64_t)b));                                                   \
  KC_PUT((int64_t)kn_shr_##C((T)a, (int64_t)b));                                                   \
  KC_PUT((int64_t)kn_cvt_f32_##C(fa));                                                             \
  KC_PUT((int64_t)kn_cvt_f64_##C(da));                                                             \
  KC_PUT((int64_t)kn_cvt_f16_##C(ha));                                                             \
  KC_PUT(kn_cvt_##C##_f16((T)b).bits);                                                             \
  KC_PUT((int64_t)kn_cvt_bf16_##C(ba));                                                            \
  KC_PUT(kn_cvt_##C##_bf16((T)b).bits);

KN_FN int kc_scalar(uint64_t a, uint64_t b, uint64_t *o) {
  int n = 0;
  float fa = kn__bits_f32((uint32_t)a), fb = kn__bits_f32((uint32_t)b);
  double da = kn__bits_f64(a), db = kn__bits_f64(b);
  kn_f16 ha;
  kn_bf16 ba;
  ha.bits = (uint16_t)a;
  ba.bits = (uint16_t)(a >> 16);
  KC_PUT(kn_cvt_f32_f16(fa).bits);
  KC_PUT(kn_cvt_f64_f16(da).bits);
  KC_PUT(kn_cvt_f64_f16((double)fb).bits);
  KC_PUTF(kn_cvt_f16_f32(ha));
  KC_PUTD(kn_cvt_f16_f64(ha));
  KC_PUT(kn_cvt_f32_bf16(fa).bits);
  KC_PUT(kn_cvt_f64_bf16(da).bits);
  KC_PUT(kn_cvt_f64_bf16((double)fb).bits);
  KC_PUT(kn__f32_bits(kn_cvt_bf16_f32(ba)));
  KC_PUT(kn__f64_bits(kn_cvt_bf16_f64(ba)));
  KC_INT(int8_t, i8)
  KC_INT(int16_t, i16)
  KC_INT(int32_t, i32)
  KC_INT(int64_t, i64)
  KC_INT(uint8_t, u8)
  KC_INT(uint16_t, u16)
  KC_INT(uint32_t, u32)
  KC_INT(uint64_t, u64)
  KC_PUTF(kn_sqrt_f32(fa));
  KC_PUTF(kn_rsqrt_f32(fb));
  KC_PUTD(kn_sqrt_f64(da));
  KC_PUTD(kn_rsqrt_f64(db));
  KC_PUTF(kn_div_v2_v2(kn_make_v2(fa, fb), kn_make_v2(fb, fa)).x);
  KC_PUTD(kn_div_dv2_f64(kn_make_dv2(da, db), db).x);
  KC_PUTF(kn_min_f32_f32(fa, fb));
  KC_PUTF(kn_max_f32_f32(fa, fb));
  KC_PUTD(kn_min_f64_f64(da, db));
  KC_PUTD(kn_max_f64_f64(da, db));
  KC_PUTF(kn_clamp_f32_f32_f32(fa, -1.0f, fb));
  KC_PUTF(kn_floor_f32(fa));
  KC_PUTF(kn_ceil_f32(fa));
  KC_PUTF(kn_round_f32(fa));
  KC_PUTF(kn_trunc_f32(fa));
  KC_PUTD(kn_floor_f64(da));
  KC_PUTD(kn_round_f64(da));
  KC_PUTD(kn_trunc_f64(db));
  KC_PUTD(kn_ceil_f64(db));
  KC_PUTF(kn_fmod_f32_f32(fa, fb));
  KC_PUTD(kn_fmod_f64_f64(da, db));
  KC_PUTF(kn_abs_f32(fa));
  KC_PUTF(kn_sign_f32(fb));
  KC_PUTD(kn_sign_f64(da));
  KC_PUT(kn_isnan_f32(fa) + 2 * kn_isinf_f32(fa) + 4 * kn_isfinite_f32(fa));
  KC_PUT(kn_isnan_f64(db) + 2 * kn_isinf_f64(db) + 4 * kn_isfinite_f64(db));
  KC_PUT((int64_t)kn_abs_i32((int32_t)a));
  KC_PUT((int64_t)kn_sign_i64((int64_t)b));
  KC_PUT((int64_t)kn_min_i64_i64((int64_t)a, (int64_t)b));
  KC_PUT(kn_max_u64_u64(a, b));
  KC_PUT((int64_t)kn_clamp_i32_i32_i32((int32_t)a, -1000, (int32_t)(b & 0xffff)));
  return n;
}

/* Geometry and linear algebra on nice inputs: only + - * / sqrt, so exact. */
KN_FN int kc_geometry(uint64_t a, uint64_t *o) {
  int n = 0;
  kn_vec3 u = kc_v3(a, 0), v = kc_v3(a, 3), w;
  kn_mat33 m = kn_make_m33_rows(u, v, kc_v3(a, 6));
  kn_mat44 q = kn_make_m44(kc_nice(a, 10), kc_nice(a, 11), kc_nice(a, 12), kc_nice(a, 13),
                           kc_nice(a, 14), kc_nice(a, 15), kc_nice(a, 16), kc_nice(a, 17),
                           kc_nice(a, 18), kc_nice(a, 19), kc_nice(a, 20), kc_nice(a, 21),
                           kc_nice(a, 22), kc_nice(a, 23), kc_nice(a, 24), kc_nice(a, 25));
  kn_quat p = kn_make_q(u.x, u.y, u.z, v.x), r = kn_make_q(v.y, v.z, u.x, 0.5f);
  KC_PUTF(kn_dot_v3_v3(u, v));
  w = kn_cross_v3_v3(u, v);
  KC_PUTF(w.x);
  KC_PUTF(w.y);
  KC_PUTF(w.z);
  KC_PUTF(kn_length_v3(u));
  KC_PUTF(kn_distance_v3_v3(u, v));
  w = kn_normalize_v3(v);
  KC_PUTF(w.x);
  KC_PUTF(w.y);
  KC_PUTF(w.z);
  w = kn_mul_m33_v3(m, v);
  KC_PUTF(w.x);
  KC_PUTF(w.z);
  KC_PUTF(kn_determinant_m33(m));
  KC_PUTF(kn_determinant_m44(q));
  kn_mat33 mi = kn_inverse_m33(m);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) KC_PUTF(mi.m[i][j]);
  kn_mat44 qi = kn_inverse_m44(q), qq = kn_mul_m44_m44(q, qi);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) KC_PUTF(qi.m[i][j]);
  KC_PUTF(qq.m[0][0]);
  KC_PUTF(qq.m[2][3]);
  kn_quat pr = kn_quat_mul_q_q(p, r);
  KC_PUTF(pr.x);
  KC_PUTF(pr.w);
  kn_vec4 pn = kn_normalize_v4(kn_make_v4(p.x, p.y, p.z, p.w));
  w = kn_quat_rotate_q_v3(kn_make_q(pn.x, pn.y, pn.z, pn.w), u);
  KC_PUTF(w.x);
  KC_PUTF(w.y);
  kn_dvec3 du = kn_cvt_v3_dv3(u), dv = kn_cvt_v3_dv3(v);
  KC_PUTD(kn_dot_dv3_dv3(du, dv));
  KC_PUTD(kn_length_dv3(kn_cross_dv3_dv3(du, dv)));
  KC_PUTF(kn_smoothstep_f32_f32_f32(-1.0f, 2.0f, u.x));
  KC_PUTF(kn_lerp_f32_f32_f32(u.x, v.x, w.x));
  KC_PUT((int64_t)kn_dot_iv3_iv3(kn_cvt_v3_iv3(kn_mul_v3_f32(u, 1e9f)), kn_make_iv3(7, -9, 11)));
  return n;
}

/* stdlib/kern_math.h and kern_spatial.h: erf and friends are plain
 * arithmetic, so exact too. */
KN_FN int kc_math(uint64_t a, uint64_t b, uint64_t *o) {
  int n = 0;
  float x = kc_nice(a, 30), y = kc_nice(b, 31), fa = kn__bits_f32((uint32_t)a);
  double dx = (double)x * 0.37 + (double)y * 1e-9, da = kn__bits_f64(b);
  KC_PUTF(kn_erf_f32(x * 0.5f));
  KC_PUTF(kn_erfc_f32(x));
  KC_PUTF(kn_erfinv_f32(y * 0.124f));
  KC_PUTF(kn_erf_f32(fa));
  KC_PUTD(kn_erf_f64(dx));
  KC_PUTD(kn_erfc_f64(dx));
  KC_PUTD(kn_erfinv_f64(dx * 0.33));
  KC_PUTD(kn_erfc_f64(da));
  KC_PUTD(kn__exp_d(dx * 80.0));
  KC_PUTD(kn__log_d(kn_abs_f64(da)));
  KC_PUTF(kn_rint_f32(x * 4.0f));
  KC_PUTD(kn_rint_f64(da));
  KC_PUTF(kn_frac_f32(fa));
  KC_PUTF(kn_degrees_f32(x));
  KC_PUTD(kn_radians_f64(dx));
  KC_PUTF(kn_copysign_f32_f32(x, fa));
  KC_PUTF(kn_floordiv_f32_f32(x, y));
  KC_PUT((int64_t)kn_floordiv_i32_i32((int32_t)a, (int32_t)(b & 0xff) - 128));
  kn_vec3 u = kc_v3(a, 40), v = kc_v3(b, 43);
  kn_mat33 m = kn_make_m33_rows(u, v, kc_v3(a ^ b, 46));
  KC_PUTF(kn_norm_l1_v3(u));
  KC_PUTF(kn_norm_huber_v3_f32(u, y));
  KC_PUTF(kn_smooth_normalize_v3_f32(u, 0.5f).y);
  KC_PUTF(kn_min_v3(u));
  KC_PUT(kn_argmax_v3(v));
  KC_PUTF(kn_trace_m33(m));
  KC_PUTF(kn_ddot_m33_m33(m, kn_skew_v3(v)));
  KC_PUTF(kn_div_f32_m33(y, m).m[1][2]);
  KC_PUTF(kn_div_f32_v3(x, v).z);
  kn_quat q = kn_normalize_q(kn_make_q(u.x, u.y, v.x, v.y));
  kn_vec3 w = kn_quat_rotate_inv_q_v3(q, v);
  KC_PUTF(w.x);
  KC_PUTF(w.z);
  kn_quat back = kn_quat_from_matrix_m33(kn_quat_to_matrix_q(q));
  KC_PUTF(back.y);
  KC_PUTF(back.w);
  KC_PUTF(kn_inverse_q(q).x);
  KC_PUTF(kn_quat_twist_v3_q(kn_normalize_v3(u), q).z);
  return n;
}

/* stdlib/kern_transform.h and kern_spatial_algebra.h: + - * / and sqrt only, so exact. */
KN_FN int kc_spatial(uint64_t a, uint64_t b, uint64_t *o) {
  int n = 0;
  kn_vec3 u = kc_v3(a, 50), v = kc_v3(b, 53);
  kn_quat q = kn_normalize_q(kn_make_q(u.x, v.y, u.z, v.x));
  kn_transform t = kn_make_tf_pq(u, q), s = kn_make_tf_pq(v, kn_conjugate_q(q));
  kn_transform ts = kn_transform_multiply_tf_tf(t, s), ti = kn_transform_inverse_tf(ts);
  kn_vec3 p = kn_transform_point_tf_v3(ti, v);
  KC_PUTF(ts.p.x);
  KC_PUTF(ts.q.y);
  KC_PUTF(ti.p.z);
  KC_PUTF(p.x);
  KC_PUTF(p.y);
  KC_PUTF(kn_transform_vector_tf_v3(t, v).z);
  kn_mat44 m = kn_transform_to_matrix_tf(ts);
  KC_PUTF(m.m[1][2]);
  KC_PUTF(kn_transform_point_m44_v3(m, u).x);
  KC_PUTF(kn_transform_from_matrix_m44(m).q.w);
  KC_PUTF(kn_transform_compose_v3_q_v3(u, q, v).m[2][0]);
  kn_spatial_vector x = kn_make_sv_wv(u, v), y = kn_make_sv_wv(p, kn_cross_v3_v3(u, v));
  KC_PUTF(kn_spatial_dot_sv_sv(x, y));
  KC_PUTF(kn_spatial_cross_sv_sv(x, y).v[4]);
  KC_PUTF(kn_spatial_cross_dual_sv_sv(x, y).v[1]);
  KC_PUTF(kn_transform_twist_tf_sv(t, x).v[5]);
  KC_PUTF(kn_transform_wrench_tf_sv(ts, y).v[0]);
  kn_spatial_matrix sm = kn_outer_sv_sv(x, y);
  sm = kn_add_m66_m66(kn_mul_m66_m66(sm, kn_transpose_m66(sm)), kn_identity_m66());
  KC_PUTF(kn_mul_m66_sv(sm, x).v[3]);
  KC_PUTF(kn_normalize_sv(y).v[2]);
  return n;
}

/* stdlib/kern_linalg.h: float64 + - * / and sqrt, so exact. */
KN_FN int kc_linalg(uint64_t a, uint64_t b, uint64_t *o) {
  int n = 0;
  kn_vec3 u = kc_v3(a, 60), v = kc_v3(b, 63), w = kc_v3(a ^ b, 66);
  kn_mat33 m = kn_make_m33_rows(u, v, w), q, r, vv;
  kn_vec3 s;
  kn_svd3_m33_pm33_pv3_pm33(m, &q, &s, &vv);
  KC_PUTF(s.x);
  KC_PUTF(s.z);
  KC_PUTF(q.m[1][2]);
  KC_PUTF(vv.m[2][0]);
  kn_qr3_m33_pm33_pm33(m, &q, &r);
  KC_PUTF(q.m[0][1]);
  KC_PUTF(r.m[2][2]);
  kn_eig3_m33_pm33_pv3(kn_add_m33_m33(m, kn_transpose_m33(m)), &q, &s);
  KC_PUTF(s.y);
  KC_PUTF(q.m[2][1]);
  kn_mat22 m2 = kn_make_m22(u.x, u.y, v.x, v.y), u2, v2;
  kn_vec2 s2;
  kn_svd2_m22_pm22_pv2_pm22(m2, &u2, &s2, &v2);
  KC_PUTF(s2.y);
  KC_PUTF(u2.m[1][0]);
  return n;
}

/* stdlib/kern_noise.h: integer hashing, + - * /, floor and sqrt, so exact. */
KN_FN int kc_noise(uint64_t a, uint64_t b, uint64_t *o) {
  int n = 0;
  uint32_t s = kn_rand_init((uint32_t)a, (uint32_t)b);
  kn_vec3 u = kc_v3(a, 70), v = kc_v3(b, 73);
  kn_vec4 q = kn_make_v4(u.x, u.y, u.z, v.x);
  kn_vec2 c2 = kn_curlnoise_u32_v2_u32_f32_f32(s, kn_make_v2(v.y, v.z), 3u, 2.0f, 0.5f);
  kn_vec3 c3 = kn_curlnoise_u32_v3_u32_f32_f32(s, u, 2u, 1.9f, 0.6f);
  kn_vec3 c4 = kn_curlnoise_u32_v4(s, q);
  KC_PUTF(kn_noise_u32_f32(s, u.x));
  KC_PUTF(kn_noise_u32_v2(s, kn_make_v2(u.x, v.y)));
  KC_PUTF(kn_noise_u32_v3(s, u));
  KC_PUTF(kn_noise_u32_v4(s, q));
  KC_PUTF(kn_pnoise_u32_f32_i32(s, v.x, 5));
  KC_PUTF(kn_pnoise_u32_v2_i32_i32(s, kn_make_v2(v.x, u.z), 3, 7));
  KC_PUTF(kn_pnoise_u32_v3_i32_i32_i32(s, v, 4, 2, 9));
  KC_PUTF(kn_pnoise_u32_v4_i32_i32_i32_i32(s, q, 6, 1, 3, 8));
  KC_PUTF(c2.y);
  KC_PUTF(c3.x);
  KC_PUTF(c3.z);
  KC_PUTF(c4.y);
  return n;
}

KN_FN int kc_exact(uint64_t a, uint64_t b, uint64_t *o) {
  int n = kc_scalar(a, b, o);
  n += kc_geometry(a ^ b, o + n);
  n += kc_math(a, b, o + n);
  n += kc_spatial(a, b, o + n);
  n += kc_linalg(a, b, o + n);
  return n + kc_noise(a, b, o + n);
}

/* The same stream on both devices, randn and the samplers included. */
KN_FN int kc_random(uint32_t seed, uint32_t offset, uint64_t *o) {
  int n = 0;
  uint32_t s = kn_rand_init(seed, offset);
  KC_PUT(s);
  KC_PUT(kn_randi(&s));
  KC_PUTF(kn_randf(&s));
  KC_PUTF(kn_randf_range(&s, -3.0f, 5.0f));
  KC_PUT(kn_randi(&s));
  KC_PUTFB(kn_randn(&s));
  KC_PUT(kn_randi(&s));
  KC_PUT(kn_rand_poisson_2(&s, 4.5f));
  KC_PUT(kn_rand_poisson_2(&s, 33.0f));
  KC_PUT(kn_rand_randi_3(&s, -7, 1000));
  KC_PUTF(kn_rand_sample_unit_cube_1(&s).z);
  kn_vec2 ring = kn_rand_sample_unit_ring_1(&s), disk = kn_rand_sample_unit_disk_1(&s);
  kn_vec3 sph = kn_rand_sample_unit_sphere_1(&s),
          hemi = kn_rand_sample_unit_hemisphere_surface_1(&s);
  KC_PUTFB(ring.x);
  KC_PUTFB(ring.y);
  KC_PUTFB(disk.x);
  KC_PUTFB(disk.y);
  KC_PUTFB(sph.x);
  KC_PUTFB(sph.y);
  KC_PUTFB(sph.z);
  KC_PUTFB(hemi.x);
  KC_PUTFB(hemi.z);
  return n;
}

/* One function on a "nice" float, a's bits as a float, the nice value in
 * float64, a's bits as a float64 and a's float as a float64 (up to 3e38:
 * huge arguments of sin, cos, tan). */
#define KC_TR1(F)                                                                                  \
  KC_PUTFB(kn_##F##_f32(x));                                                                       \
  KC_PUTFB(kn_##F##_f32(xr));                                                                      \
  KC_PUTDB(kn_##F##_f64(dx));                                                                      \
  KC_PUTDB(kn_##F##_f64(dr));                                                                      \
  KC_PUTDB(kn_##F##_f64((double)xr))
#define KC_TR2(F)                                                                                  \
  KC_PUTFB(kn_##F##_f32_f32(p, y));                                                                \
  KC_PUTFB(kn_##F##_f32_f32(xr, yr));                                                              \
  KC_PUTDB(kn_##F##_f64_f64(dp, (double)y));                                                       \
  KC_PUTDB(kn_##F##_f64_f64(dr, kn__bits_f64(b)));                                                 \
  KC_PUTDB(kn_##F##_f64_f64((double)xr, (double)yr))

/* The transcendental functions (kern_libm.h) and what uses them: the same
 * bits on both devices, NaNs too. */
KN_FN int kc_transc(uint64_t a, uint64_t b, uint64_t *o) {
  int n = 0;
  float x = kc_nice(a, 1), y = kc_nice(a, 2), p = kn_abs_f32(x) + 0.01f;
  float xr = kn__bits_f32((uint32_t)a), yr = kn__bits_f32((uint32_t)b);
  double dx = x, dp = p, dr = kn__bits_f64(a);
  KC_TR1(sin);
  KC_TR1(cos);
  KC_TR1(tan);
  KC_TR1(exp);
  KC_TR1(exp2);
  KC_TR1(log);
  KC_TR1(log2);
  KC_TR1(log10);
  KC_TR1(asin);
  KC_TR1(acos);
  KC_TR1(atan);
  KC_TR1(sinh);
  KC_TR1(cosh);
  KC_TR1(tanh);
  KC_TR1(cbrt);
  KC_TR2(pow);
  KC_TR2(atan2);
  kn_vec3 v = kn_sin_v3(kc_v3(a, 3));
  KC_PUTFB(v.x);
  KC_PUTFB(v.z);
  kn_quat q0 = kn_quat_from_axis_angle_v3_f32(kc_v3(a, 6), kc_nice(a, 9));
  kn_quat q1 = kn_quat_rpy_f32_f32_f32(kc_nice(b, 10), kc_nice(b, 11), kc_nice(b, 12));
  kn_quat qs = kn_quat_slerp_q_q_f32(q0, q1, 0.3f);
  kn_vec4 aa = kn_quat_to_axis_angle_q(q1);
  KC_PUTFB(q0.x);
  KC_PUTFB(q0.w);
  KC_PUTFB(q1.y);
  KC_PUTFB(q1.w);
  KC_PUTFB(qs.x);
  KC_PUTFB(qs.z);
  KC_PUTFB(qs.w);
  KC_PUTFB(aa.x);
  KC_PUTFB(aa.w);
  return n;
}
