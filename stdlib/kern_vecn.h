/* kern_vecn.h: vec<T, N>, the vectors of any scalar type and 1 to 16 components.
 *
 * Requires kern_noise.h before it (cmake/embed_stdlib.cmake pastes the parts
 * in order). Compiled by the host C compiler and by NVRTC under the rules of
 * kern_builtins.h. Produces per-element helpers for the twelve scalar types
 * (kn__v<op>_<code>), every scalar conversion kn__sc_<from>_<to> with the
 * language's rules, and the macros the emitter instantiates once per vector
 * type a module uses: KN_VECN (the type and its functions, the names
 * frontend/check_vecn.c gives the rows it makes), KN_VECN_FLOAT (the float
 * functions) and KN_VECN_CVT (a conversion between two vector types of one
 * length; also between two matrix types of one shape). For mat<T, M, N>:
 * KN_MATN (the type and its elementwise functions), KN_MATN_SQ (trace and
 * diagonal of a square one), KN_MATN_DETINV (determinant and inverse, 2 x 2
 * to 4 x 4 floats), and the functions over two types KN_MATN_MUL,
 * KN_MATN_MULV, KN_MATN_T, KN_MATN_DIAG and KN_MATN_OUTER. Generated code
 * spells the short-named vectors (vec3, ivec2 ...)
 * with their own types: the macros reach components through a pointer to the
 * first, which both layouts allow (packed components, no padding).
 *
 * float16 and bfloat16 components compute in float32 and round once per
 * result, as their scalars do: a + b is round(float(a) + float(b)). dot,
 * length, length_sq and distance accumulate in float32 in component order and
 * round the final value once; normalize divides each float32 component by
 * the float32 length and rounds once. Integer components wrap (two's
 * complement) and divide with kn_div_<code> (x / 0 == 0). min, max and clamp
 * order floats as kern_builtins.h does (NaN ignored, -0 below +0).
 */
#ifndef KN_VECN_H
#define KN_VECN_H
#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

/* ---- per-element helpers ------------------------------------------------- */

/* Integers: T, its unsigned twin UT, UT after promotion PT; NEG(a): a < 0. */
#define KN__VINT(T, UT, PT, C, NEG)                                                                \
  typedef T kn__acc_##C;                                                                           \
  KN_FN T kn__up_##C(T a) { return a; }                                                            \
  KN_FN T kn__dn_##C(T a) { return a; }                                                            \
  KN_FN T kn__va_##C(T a, T b) { return (T)(UT)((PT)(UT)a + (PT)(UT)b); }                          \
  KN_FN T kn__vs_##C(T a, T b) { return (T)(UT)((PT)(UT)a - (PT)(UT)b); }                          \
  KN_FN T kn__vm_##C(T a, T b) { return (T)(UT)((PT)(UT)a * (PT)(UT)b); }                          \
  KN_FN T kn__vd_##C(T a, T b) { return kn_div_##C(a, b); }                                        \
  KN_FN T kn__vr_##C(T a, T b) { return kn_mod_##C(a, b); }                                        \
  KN_FN T kn__vn_##C(T a) { return (T)(UT)((PT)0 - (PT)(UT)a); }                                   \
  KN_FN bool kn__veq_##C(T a, T b) { return a == b; }                                              \
  KN_FN bool kn__vlt_##C(T a, T b) { return a < b; }                                               \
  KN_FN T kn__vabs_##C(T a) { return NEG(a) ? kn__vn_##C(a) : a; }                                 \
  KN_FN T kn__vsign_##C(T a) { return (T)(NEG(a) ? -1 : a > 0); }                                  \
  KN_FN bool kn__vnan_##C(T a) { return (void)a, false; }                                          \
  KN_FN T kn__aa_##C(T a, T b) { return kn__va_##C(a, b); }                                        \
  KN_FN T kn__as_##C(T a, T b) { return kn__vs_##C(a, b); }                                        \
  KN_FN T kn__am_##C(T a, T b) { return kn__vm_##C(a, b); }
#define KN__NEG(a)    ((a) < 0)
#define KN__NONNEG(a) 0
KN__VINT(int8_t, uint8_t, uint32_t, i8, KN__NEG)
KN__VINT(int16_t, uint16_t, uint32_t, i16, KN__NEG)
KN__VINT(int32_t, uint32_t, uint32_t, i32, KN__NEG)
KN__VINT(int64_t, uint64_t, uint64_t, i64, KN__NEG)
KN__VINT(uint8_t, uint8_t, uint32_t, u8, KN__NONNEG)
KN__VINT(uint16_t, uint16_t, uint32_t, u16, KN__NONNEG)
KN__VINT(uint32_t, uint32_t, uint32_t, u32, KN__NONNEG)
KN__VINT(uint64_t, uint64_t, uint64_t, u64, KN__NONNEG)

/* Floats: E the stored type, A the type computed in, UP/DN the conversions. */
#define KN__VFLT(E, A, C, AC, UP, DN)                                                              \
  typedef A kn__acc_##C;                                                                           \
  KN_FN A kn__up_##C(E a) { return UP(a); }                                                        \
  KN_FN E kn__dn_##C(A a) { return DN(a); }                                                        \
  KN_FN E kn__va_##C(E a, E b) { return DN(UP(a) + UP(b)); }                                       \
  KN_FN E kn__vs_##C(E a, E b) { return DN(UP(a) - UP(b)); }                                       \
  KN_FN E kn__vm_##C(E a, E b) { return DN(UP(a) * UP(b)); }                                       \
  KN_FN E kn__vd_##C(E a, E b) { return DN(UP(a) / UP(b)); }                                       \
  KN_FN E kn__vn_##C(E a) { return DN(-UP(a)); }                                                   \
  KN_FN bool kn__veq_##C(E a, E b) { return UP(a) == UP(b); }                                      \
  /* a strictly before b in min's order: NaN last, -0 before +0 */                                 \
  KN_FN bool kn__vlt_##C(E a, E b) {                                                               \
    A x = UP(a), y = UP(b);                                                                        \
    if (x != x) return false;                                                                      \
    if (y != y || x < y) return true;                                                              \
    return x == y && kn__##AC##_bits(x) > kn__##AC##_bits(y);                                      \
  }                                                                                                \
  KN_FN bool kn__vnan_##C(E a) { return UP(a) != UP(a); }                                          \
  KN_FN A kn__aa_##C(A a, A b) { return a + b; }                                                   \
  KN_FN A kn__as_##C(A a, A b) { return a - b; }                                                   \
  KN_FN A kn__am_##C(A a, A b) { return a * b; }                                                   \
  KN_FN E kn__vabs_##C(E a) { return DN(kn_abs_##AC(UP(a))); }                                     \
  KN_FN E kn__vsign_##C(E a) { return DN(kn_sign_##AC(UP(a))); }                                   \
  KN_FN A kn__vsqrt_##C(A a) { return kn_sqrt_##AC(a); }                                           \
  KN_FN E kn__vfloor_##C(E a) { return DN(kn_floor_##AC(UP(a))); }                                 \
  KN_FN E kn__vceil_##C(E a) { return DN(kn_ceil_##AC(UP(a))); }                                   \
  KN_FN E kn__vround_##C(E a) { return DN(kn_round_##AC(UP(a))); }                                 \
  KN_FN E kn__vtrunc_##C(E a) { return DN(kn_trunc_##AC(UP(a))); }                                 \
  KN_FN bool kn__visnan_##C(E a) { return kn_isnan_##AC(UP(a)); }                                  \
  KN_FN bool kn__visinf_##C(E a) { return kn_isinf_##AC(UP(a)); }
#define KN__ID(x) (x)
KN__VFLT(float, float, f32, f32, KN__ID, KN__ID)
KN__VFLT(double, double, f64, f64, KN__ID, KN__ID)
KN__VFLT(kn_f16, float, f16, f32, kn_cvt_f16_f32, kn_cvt_f32_f16)
KN__VFLT(kn_bf16, float, bf16, f32, kn_cvt_bf16_f32, kn_cvt_f32_bf16)

/* min and max of two components: a NaN is ignored, -0 is below +0 */
#define KN__VMINMAX(E, C)                                                                          \
  KN_FN E kn__vmin_##C(E a, E b) { return kn__vnan_##C(a) || kn__vlt_##C(b, a) ? b : a; }          \
  KN_FN E kn__vmax_##C(E a, E b) { return kn__vnan_##C(a) || kn__vlt_##C(a, b) ? b : a; }
KN__VMINMAX(int8_t, i8)
KN__VMINMAX(int16_t, i16)
KN__VMINMAX(int32_t, i32)
KN__VMINMAX(int64_t, i64)
KN__VMINMAX(uint8_t, u8)
KN__VMINMAX(uint16_t, u16)
KN__VMINMAX(uint32_t, u32)
KN__VMINMAX(uint64_t, u64)
KN__VMINMAX(float, f32)
KN__VMINMAX(double, f64)
KN__VMINMAX(kn_f16, f16)
KN__VMINMAX(kn_bf16, bf16)

/* ---- scalar conversions: kn__sc_<from>_<to>, the rules of a cast --------- */

#define KN__SC_CAST(FT, FC, TT, TC)                                                                \
  KN_FN TT kn__sc_##FC##_##TC(FT x) { return (TT)x; }
#define KN__SC_CVT(FT, FC, TT, TC)                                                                 \
  KN_FN TT kn__sc_##FC##_##TC(FT x) { return kn_cvt_##FC##_##TC(x); }
#define KN__SC_VIA(FT, FC, TT, TC)                                                                 \
  KN_FN TT kn__sc_##FC##_##TC(FT x) { return kn_cvt_f32_##TC(kn_cvt_##FC##_f32(x)); }
#define KN__SC_SAME(FT, FC, TT, TC)                                                                \
  KN_FN TT kn__sc_##FC##_##TC(FT x) { return x; }
#define KN__SC_INTS(M, FT, FC)                                                                     \
  M(FT, FC, int8_t, i8)                                                                            \
  M(FT, FC, int16_t, i16)                                                                          \
  M(FT, FC, int32_t, i32)                                                                          \
  M(FT, FC, int64_t, i64)                                                                          \
  M(FT, FC, uint8_t, u8)                                                                           \
  M(FT, FC, uint16_t, u16)                                                                         \
  M(FT, FC, uint32_t, u32)                                                                         \
  M(FT, FC, uint64_t, u64)
/* from an integer: casts, but to a half type the stdlib's single rounding */
#define KN__SC_FROM_INT(FT, FC)                                                                    \
  KN__SC_INTS(KN__SC_CAST, FT, FC)                                                                 \
  KN__SC_CAST(FT, FC, float, f32)                                                                  \
  KN__SC_CAST(FT, FC, double, f64)                                                                 \
  KN__SC_CVT(FT, FC, kn_f16, f16)                                                                  \
  KN__SC_CVT(FT, FC, kn_bf16, bf16)
KN__SC_FROM_INT(int8_t, i8)
KN__SC_FROM_INT(int16_t, i16)
KN__SC_FROM_INT(int32_t, i32)
KN__SC_FROM_INT(int64_t, i64)
KN__SC_FROM_INT(uint8_t, u8)
KN__SC_FROM_INT(uint16_t, u16)
KN__SC_FROM_INT(uint32_t, u32)
KN__SC_FROM_INT(uint64_t, u64)
/* from a float: to integers saturating (kn_cvt_*), between floats rounding once */
#define KN__SC_FROM_FLOAT(FT, FC, F32, F64, F16, BF16)                                             \
  KN__SC_INTS(KN__SC_CVT, FT, FC)                                                                  \
  F32(FT, FC, float, f32)                                                                          \
  F64(FT, FC, double, f64)                                                                         \
  F16(FT, FC, kn_f16, f16)                                                                         \
  BF16(FT, FC, kn_bf16, bf16)
KN__SC_FROM_FLOAT(float, f32, KN__SC_SAME, KN__SC_CAST, KN__SC_CVT, KN__SC_CVT)
KN__SC_FROM_FLOAT(double, f64, KN__SC_CAST, KN__SC_SAME, KN__SC_CVT, KN__SC_CVT)
KN__SC_FROM_FLOAT(kn_f16, f16, KN__SC_CVT, KN__SC_CVT, KN__SC_SAME, KN__SC_VIA)
KN__SC_FROM_FLOAT(kn_bf16, bf16, KN__SC_CVT, KN__SC_CVT, KN__SC_VIA, KN__SC_SAME)

/* ---- the instantiations ---------------------------------------------------- */

/* Component i of vector value a whose components are E (either layout). */
#define KN__VC(E, a, i) (((E *)&(a))[i])
#define KN__VFOR(N)     for (int kn_i = 0; kn_i < (N); kn_i++)

/* r = f(a[i] ...) for each component; the shapes of kern_builtins.h. */
#define KN__VDEF_V(T, E, N, name, f)                                                               \
  KN_FN T name(T a) {                                                                              \
    T r;                                                                                           \
    KN__VFOR(N) KN__VC(E, r, kn_i) = f(KN__VC(E, a, kn_i));                                        \
    return r;                                                                                      \
  }
#define KN__VDEF_VV(T, E, N, name, f)                                                              \
  KN_FN T name(T a, T b) {                                                                         \
    T r;                                                                                           \
    KN__VFOR(N) KN__VC(E, r, kn_i) = f(KN__VC(E, a, kn_i), KN__VC(E, b, kn_i));                    \
    return r;                                                                                      \
  }
#define KN__VDEF_VS(T, E, N, name, f)                                                              \
  KN_FN T name(T a, E s) {                                                                         \
    T r;                                                                                           \
    KN__VFOR(N) KN__VC(E, r, kn_i) = f(KN__VC(E, a, kn_i), s);                                     \
    return r;                                                                                      \
  }
#define KN__VDEF_SV(T, E, N, name, f)                                                              \
  KN_FN T name(E s, T a) {                                                                         \
    T r;                                                                                           \
    KN__VFOR(N) KN__VC(E, r, kn_i) = f(s, KN__VC(E, a, kn_i));                                     \
    return r;                                                                                      \
  }

KN_FN int64_t kn__vclamp(int64_t k, int n) { return k < 0 ? 0 : k >= n ? n - 1 : k; }

/* The type T (code C, E components of code EC, N of them): what every vector
 * has. kn_make_C (N parameters) is the emitter's. */
#define KN_VECN(T, E, EC, N, C)                                                                    \
  typedef struct T {                                                                               \
    E v[N];                                                                                        \
  } T;                                                                                             \
  KN_FN T kn_splat_##C(E s) {                                                                      \
    T r;                                                                                           \
    KN__VFOR(N) r.v[kn_i] = s;                                                                     \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN T kn_zero_##C(void) { return kn_splat_##C(kn__sc_i32_##EC(0)); }                           \
  KN_FN E *kn_getp_##C(T *a, int64_t k) { return &a->v[kn__vclamp(k, N)]; }                        \
  KN_FN E kn_get_##C(T a, int64_t k) { return a.v[kn__vclamp(k, N)]; }                             \
  KN_VECN_OPS(T, E, EC, N, C, C)

/* Operators and the componentwise builtins over T; also for the short-named
 * vector types (their functions exist already: never instantiated there). */
#define KN_VECN_OPS(T, E, EC, N, C, unused)                                                        \
  KN__VDEF_VV(T, E, N, kn_add_##C##_##C, kn__va_##EC)                                              \
  KN__VDEF_VV(T, E, N, kn_sub_##C##_##C, kn__vs_##EC)                                              \
  KN__VDEF_VV(T, E, N, kn_mul_##C##_##C, kn__vm_##EC)                                              \
  KN__VDEF_VV(T, E, N, kn_div_##C##_##C, kn__vd_##EC)                                              \
  KN__VDEF_VS(T, E, N, kn_mul_##C##_##EC, kn__vm_##EC)                                             \
  KN__VDEF_SV(T, E, N, kn_mul_##EC##_##C, kn__vm_##EC)                                             \
  KN__VDEF_VS(T, E, N, kn_div_##C##_##EC, kn__vd_##EC)                                             \
  KN__VDEF_SV(T, E, N, kn_div_##EC##_##C, kn__vd_##EC)                                             \
  KN__VDEF_V(T, E, N, kn_neg_##C, kn__vn_##EC)                                                     \
  KN__VDEF_VV(T, E, N, kn_cw_mul_##C##_##C, kn__vm_##EC)                                           \
  KN__VDEF_VV(T, E, N, kn_cw_div_##C##_##C, kn__vd_##EC)                                           \
  KN__VDEF_VV(T, E, N, kn_min_##C##_##C, kn__vmin_##EC)                                            \
  KN__VDEF_VV(T, E, N, kn_max_##C##_##C, kn__vmax_##EC)                                            \
  KN_FN bool kn_eq_##C##_##C(T a, T b) {                                                           \
    bool r = true;                                                                                 \
    KN__VFOR(N) r = r && kn__veq_##EC(KN__VC(E, a, kn_i), KN__VC(E, b, kn_i));                     \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_ne_##C##_##C(T a, T b) { return !kn_eq_##C##_##C(a, b); }                          \
  KN_FN T kn_clamp_##C##_##C##_##C(T x, T lo, T hi) {                                              \
    return kn_min_##C##_##C(kn_max_##C##_##C(x, lo), hi);                                          \
  }                                                                                                \
  KN_FN T kn_clamp_##C##_##EC##_##EC(T x, E lo, E hi) {                                            \
    return kn_clamp_##C##_##C##_##C(x, kn_splat_##C(lo), kn_splat_##C(hi));                        \
  }                                                                                                \
  KN_FN kn__acc_##EC kn__dot_##C(T a, T b) {                                                       \
    kn__acc_##EC s = kn__am_##EC(kn__up_##EC(KN__VC(E, a, 0)), kn__up_##EC(KN__VC(E, b, 0)));      \
    for (int kn_i = 1; kn_i < N; kn_i++)                                                           \
      s = kn__aa_##EC(                                                                             \
          s, kn__am_##EC(kn__up_##EC(KN__VC(E, a, kn_i)), kn__up_##EC(KN__VC(E, b, kn_i))));       \
    return s;                                                                                      \
  }                                                                                                \
  KN_FN E kn_dot_##C##_##C(T a, T b) { return kn__dn_##EC(kn__dot_##C(a, b)); }                    \
  KN_FN int32_t kn_argmin_##C(T a) {                                                               \
    int32_t k = 0;                                                                                 \
    for (int kn_i = 1; kn_i < N; kn_i++)                                                           \
      if (kn__vlt_##EC(KN__VC(E, a, kn_i), KN__VC(E, a, k))) k = kn_i;                             \
    return k;                                                                                      \
  }                                                                                                \
  KN_FN int32_t kn_argmax_##C(T a) {                                                               \
    int32_t k = 0;                                                                                 \
    for (int kn_i = 1; kn_i < N; kn_i++)                                                           \
      if (kn__vlt_##EC(KN__VC(E, a, k), KN__VC(E, a, kn_i))) k = kn_i;                             \
    return k;                                                                                      \
  }                                                                                                \
  KN_FN E kn_min_##C(T a) { return KN__VC(E, a, kn_argmin_##C(a)); }                               \
  KN_FN E kn_max_##C(T a) { return KN__VC(E, a, kn_argmax_##C(a)); }

/* Signed integers and floats: abs and sign. */
#define KN_VECN_SIGNED(T, E, EC, N, C)                                                             \
  KN__VDEF_V(T, E, N, kn_abs_##C, kn__vabs_##EC)                                                   \
  KN__VDEF_V(T, E, N, kn_sign_##C, kn__vsign_##EC)

/* Integers: the remainder. */
#define KN_VECN_INT(T, E, EC, N, C)                                                                \
  KN__VDEF_VV(T, E, N, kn_mod_##C##_##C, kn__vr_##EC)                                              \
  KN__VDEF_VS(T, E, N, kn_mod_##C##_##EC, kn__vr_##EC)

/* Three components: the cross product, in E's arithmetic. */
#define KN_VECN_CROSS(T, E, EC, C)                                                                 \
  KN_FN T kn_cross_##C##_##C(T a, T b) {                                                           \
    T r;                                                                                           \
    for (int kn_i = 0; kn_i < 3; kn_i++) {                                                         \
      int j = (kn_i + 1) % 3, k = (kn_i + 2) % 3;                                                  \
      kn__acc_##EC p = kn__am_##EC(kn__up_##EC(KN__VC(E, a, j)), kn__up_##EC(KN__VC(E, b, k)));    \
      kn__acc_##EC q = kn__am_##EC(kn__up_##EC(KN__VC(E, a, k)), kn__up_##EC(KN__VC(E, b, j)));    \
      KN__VC(E, r, kn_i) = kn__dn_##EC(kn__as_##EC(p, q));                                         \
    }                                                                                              \
    return r;                                                                                      \
  }

/* Floats: geometry, rounding, classification, interpolation. */
#define KN_VECN_FLOAT(T, E, EC, N, C)                                                              \
  KN_VECN_SIGNED(T, E, EC, N, C)                                                                   \
  KN_FN E kn_length_sq_##C(T a) { return kn__dn_##EC(kn__dot_##C(a, a)); }                         \
  KN_FN E kn_length_##C(T a) { return kn__dn_##EC(kn__vsqrt_##EC(kn__dot_##C(a, a))); }            \
  KN_FN E kn_distance_##C##_##C(T a, T b) { return kn_length_##C(kn_sub_##C##_##C(a, b)); }        \
  KN_FN T kn_normalize_##C(T a) {                                                                  \
    kn__acc_##EC len = kn__vsqrt_##EC(kn__dot_##C(a, a));                                          \
    T r = a;                                                                                       \
    if (!(len > (kn__acc_##EC)0)) return kn_zero_##C();                                            \
    KN__VFOR(N) KN__VC(E, r, kn_i) = kn__dn_##EC(kn__up_##EC(KN__VC(E, a, kn_i)) / len);           \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN T kn_lerp_##C##_##C##_##C(T a, T b, T t) {                                                 \
    T r;                                                                                           \
    KN__VFOR(N) {                                                                                  \
      kn__acc_##EC x = kn__up_##EC(KN__VC(E, a, kn_i)), y = kn__up_##EC(KN__VC(E, b, kn_i));       \
      KN__VC(E, r, kn_i) = kn__dn_##EC(x + (y - x) * kn__up_##EC(KN__VC(E, t, kn_i)));             \
    }                                                                                              \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN T kn_lerp_##C##_##C##_##EC(T a, T b, E t) {                                                \
    return kn_lerp_##C##_##C##_##C(a, b, kn_splat_##C(t));                                         \
  }                                                                                                \
  KN__VDEF_V(T, E, N, kn_floor_##C, kn__vfloor_##EC)                                               \
  KN__VDEF_V(T, E, N, kn_ceil_##C, kn__vceil_##EC)                                                 \
  KN__VDEF_V(T, E, N, kn_round_##C, kn__vround_##EC)                                               \
  KN__VDEF_V(T, E, N, kn_trunc_##C, kn__vtrunc_##EC)                                               \
  KN_FN T kn_sqrt_##C(T a) {                                                                       \
    T r;                                                                                           \
    KN__VFOR(N) KN__VC(E, r, kn_i) = kn__dn_##EC(kn__vsqrt_##EC(kn__up_##EC(KN__VC(E, a, kn_i)))); \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_isnan_##C(T a) {                                                                   \
    bool r = false;                                                                                \
    KN__VFOR(N) r = r || kn__visnan_##EC(KN__VC(E, a, kn_i));                                      \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_isinf_##C(T a) {                                                                   \
    bool r = false;                                                                                \
    KN__VFOR(N) r = r || kn__visinf_##EC(KN__VC(E, a, kn_i));                                      \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_isfinite_##C(T a) {                                                                \
    bool r = true;                                                                                 \
    KN__VFOR(N)                                                                                    \
    r = r && !kn__visnan_##EC(KN__VC(E, a, kn_i)) && !kn__visinf_##EC(KN__VC(E, a, kn_i));         \
    return r;                                                                                      \
  }

/* kn_cvt_<FC>_<TC>: each component converted as a cast converts it. */
#define KN_VECN_CVT(FT, FE, FEC, FC, TT, TE, TEC, TC, N)                                           \
  KN_FN TT kn_cvt_##FC##_##TC(FT a) {                                                              \
    TT r;                                                                                          \
    KN__VFOR(N) KN__VC(TE, r, kn_i) = kn__sc_##FEC##_##TEC(KN__VC(FE, a, kn_i));                   \
    return r;                                                                                      \
  }

/* ---- mat<T, M, N> ------------------------------------------------------------ */

/* Element (i, j) of matrix value a of C columns (either layout: rows of packed E). */
#define KN__MC(E, a, i, j, C) (((E *)&(a))[(i) * (C) + (j)])
#define KN__MFOR(R, C)                                                                             \
  for (int kn_i = 0; kn_i < (R); kn_i++)                                                           \
    for (int kn_j = 0; kn_j < (C); kn_j++)

/* The type T (code CD) of R x C elements E (code EC), row-major, RT its row
 * vector type: what every matrix has; elementwise functions treat it as a
 * vector of R * C. kn_make_CD and kn_make_CD_rows are the emitter's. */
#define KN_MATN(T, E, EC, R, C, CD, RT)                                                            \
  typedef struct T {                                                                               \
    E m[R][C];                                                                                     \
  } T;                                                                                             \
  KN_FN T kn_zero_##CD(void) {                                                                     \
    T r;                                                                                           \
    KN__MFOR(R, C) r.m[kn_i][kn_j] = kn__sc_i32_##EC(0);                                           \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN T kn_diag_##CD(E s) {                                                                      \
    T r = kn_zero_##CD();                                                                          \
    for (int kn_i = 0; kn_i < (R) && kn_i < (C); kn_i++) r.m[kn_i][kn_i] = s;                      \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN RT kn_get_##CD##_row(T a, int64_t i) {                                                     \
    RT r;                                                                                          \
    KN__VFOR(C) KN__VC(E, r, kn_i) = a.m[kn__vclamp(i, R)][kn_i];                                  \
    return r;                                                                                      \
  }                                                                                                \
  KN__VDEF_VV(T, E, (R) * (C), kn_add_##CD##_##CD, kn__va_##EC)                                    \
  KN__VDEF_VV(T, E, (R) * (C), kn_sub_##CD##_##CD, kn__vs_##EC)                                    \
  KN__VDEF_VV(T, E, (R) * (C), kn_cw_mul_##CD##_##CD, kn__vm_##EC)                                 \
  KN__VDEF_VV(T, E, (R) * (C), kn_cw_div_##CD##_##CD, kn__vd_##EC)                                 \
  KN__VDEF_VS(T, E, (R) * (C), kn_mul_##CD##_##EC, kn__vm_##EC)                                    \
  KN__VDEF_SV(T, E, (R) * (C), kn_mul_##EC##_##CD, kn__vm_##EC)                                    \
  KN__VDEF_VS(T, E, (R) * (C), kn_div_##CD##_##EC, kn__vd_##EC)                                    \
  KN__VDEF_V(T, E, (R) * (C), kn_neg_##CD, kn__vn_##EC)                                            \
  KN_FN bool kn_eq_##CD##_##CD(T a, T b) {                                                         \
    bool r = true;                                                                                 \
    KN__VFOR((R) * (C)) r = r && kn__veq_##EC(KN__VC(E, a, kn_i), KN__VC(E, b, kn_i));             \
    return r;                                                                                      \
  }                                                                                                \
  KN_FN bool kn_ne_##CD##_##CD(T a, T b) { return !kn_eq_##CD##_##CD(a, b); }

/* Element (i, j) of the product of a (M x K) and b (K x N) in E's arithmetic:
 * float16 and bfloat16 sum in float32 over k ascending and round once. */
#define KN__MDOT(E, EC, a, b, i, j, K, N)                                                          \
  kn__acc_##EC s =                                                                                 \
      kn__am_##EC(kn__up_##EC(KN__MC(E, a, i, 0, K)), kn__up_##EC(KN__MC(E, b, 0, j, N)));         \
  for (int kn_k = 1; kn_k < (K); kn_k++)                                                           \
    s = kn__aa_##EC(s, kn__am_##EC(kn__up_##EC(KN__MC(E, a, i, kn_k, K)),                          \
                                   kn__up_##EC(KN__MC(E, b, kn_k, j, N))));

/* NAME(a, b): the product of A (M x K) and B (K x N), an RT (M x N). */
#define KN_MATN_MUL(A, B, RT, E, EC, M, K, N, NAME)                                                \
  KN_FN RT NAME(A a, B b) {                                                                        \
    RT r;                                                                                          \
    KN__MFOR(M, N) {                                                                               \
      KN__MDOT(E, EC, a, b, kn_i, kn_j, K, N)                                                      \
      KN__MC(E, r, kn_i, kn_j, N) = kn__dn_##EC(s);                                                \
    }                                                                                              \
    return r;                                                                                      \
  }

/* NAME(a, v): A (M x K) times the column vector V (K), an RV (M). */
#define KN_MATN_MULV(A, V, RV, E, EC, M, K, NAME)                                                  \
  KN_FN RV NAME(A a, V v) {                                                                        \
    RV r;                                                                                          \
    for (int kn_i = 0; kn_i < (M); kn_i++) {                                                       \
      KN__MDOT(E, EC, a, v, kn_i, 0, K, 1)                                                         \
      KN__VC(E, r, kn_i) = kn__dn_##EC(s);                                                         \
    }                                                                                              \
    return r;                                                                                      \
  }

/* NAME(a): the transpose of A (M x N), a TT (N x M). */
#define KN_MATN_T(A, TT, E, M, N, NAME)                                                            \
  KN_FN TT NAME(A a) {                                                                             \
    TT r;                                                                                          \
    KN__MFOR(M, N) KN__MC(E, r, kn_j, kn_i, M) = KN__MC(E, a, kn_i, kn_j, N);                      \
    return r;                                                                                      \
  }

/* Square matrices (N x N, RT the diagonal's vector type): the trace, summed
 * in T's accumulator over the diagonal in order and rounded once (integers
 * wrap), and the diagonal. */
#define KN_MATN_SQ(T, E, EC, N, CD, RT)                                                            \
  KN_FN E kn_trace_##CD(T a) {                                                                     \
    kn__acc_##EC s = kn__up_##EC(a.m[0][0]);                                                       \
    for (int kn_i = 1; kn_i < (N); kn_i++) s = kn__aa_##EC(s, kn__up_##EC(a.m[kn_i][kn_i]));       \
    return kn__dn_##EC(s);                                                                         \
  }                                                                                                \
  KN_FN RT kn_get_diag_##CD(T a) {                                                                 \
    RT r;                                                                                          \
    KN__VFOR(N) KN__VC(E, r, kn_i) = a.m[kn_i][kn_i];                                              \
    return r;                                                                                      \
  }

/* Determinants and adjugates of n x n matrices, n = 2, 3, 4, held in the
 * top-left of a 4 x 4 array, in A's arithmetic (float for float16 and
 * bfloat16, whose products are exact there; double for float64): the
 * formulas of the float32 matrices in kern_builtins.h (cofactors taken
 * cyclically for 3 x 3, Laplace expansion in 2 x 2 minors for 4 x 4). */
#define KN__MDETADJ(A, AC)                                                                         \
  KN_FN A kn__d2_##AC(A a, A b, A c, A d) { return a * d - b * c; }                                \
  KN_FN A kn__cof3_##AC(A(*m)[4], int i, int j) {                                                  \
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;                    \
    return kn__d2_##AC(m[i1][j1], m[i1][j2], m[i2][j1], m[i2][j2]);                                \
  }                                                                                                \
  /* s: the 2 x 2 minors of rows 0, 1, c: of rows 2, 3, over the column pairs */                   \
  /* (0 1) (0 2) (0 3) (1 2) (1 3) (2 3) */                                                        \
  KN_FN void kn__minors4_##AC(A(*m)[4], A *s, A *c) {                                              \
    int k = 0;                                                                                     \
    for (int x = 0; x < 3; x++)                                                                    \
      for (int y = x + 1; y < 4; y++, k++) {                                                       \
        s[k] = kn__d2_##AC(m[0][x], m[0][y], m[1][x], m[1][y]);                                    \
        c[k] = kn__d2_##AC(m[2][x], m[2][y], m[3][x], m[3][y]);                                    \
      }                                                                                            \
  }                                                                                                \
  KN_FN A kn__det4_##AC(const A *s, const A *c) {                                                  \
    return s[0] * c[5] - s[1] * c[4] + s[2] * c[3] + s[3] * c[2] - s[4] * c[1] + s[5] * c[0];      \
  }                                                                                                \
  KN_FN A kn__mdet_##AC(A(*m)[4], int n) {                                                         \
    A s[6], c[6];                                                                                  \
    if (n == 2) return kn__d2_##AC(m[0][0], m[0][1], m[1][0], m[1][1]);                            \
    if (n == 3)                                                                                    \
      return m[0][0] * kn__cof3_##AC(m, 0, 0) + m[0][1] * kn__cof3_##AC(m, 0, 1) +                 \
             m[0][2] * kn__cof3_##AC(m, 0, 2);                                                     \
    kn__minors4_##AC(m, s, c);                                                                     \
    return kn__det4_##AC(s, c);                                                                    \
  }                                                                                                \
  /* r: the adjugate of the 4 x 4 m (the inverse times the determinant) */                         \
  KN_FN void kn__adj4_##AC(A(*m)[4], A(*r)[4]) {                                                   \
    A s[6], c[6];                                                                                  \
    kn__minors4_##AC(m, s, c);                                                                     \
    r[0][0] = m[1][1] * c[5] - m[1][2] * c[4] + m[1][3] * c[3];                                    \
    r[0][1] = -m[0][1] * c[5] + m[0][2] * c[4] - m[0][3] * c[3];                                   \
    r[0][2] = m[3][1] * s[5] - m[3][2] * s[4] + m[3][3] * s[3];                                    \
    r[0][3] = -m[2][1] * s[5] + m[2][2] * s[4] - m[2][3] * s[3];                                   \
    r[1][0] = -m[1][0] * c[5] + m[1][2] * c[2] - m[1][3] * c[1];                                   \
    r[1][1] = m[0][0] * c[5] - m[0][2] * c[2] + m[0][3] * c[1];                                    \
    r[1][2] = -m[3][0] * s[5] + m[3][2] * s[2] - m[3][3] * s[1];                                   \
    r[1][3] = m[2][0] * s[5] - m[2][2] * s[2] + m[2][3] * s[1];                                    \
    r[2][0] = m[1][0] * c[4] - m[1][1] * c[2] + m[1][3] * c[0];                                    \
    r[2][1] = -m[0][0] * c[4] + m[0][1] * c[2] - m[0][3] * c[0];                                   \
    r[2][2] = m[3][0] * s[4] - m[3][1] * s[2] + m[3][3] * s[0];                                    \
    r[2][3] = -m[2][0] * s[4] + m[2][1] * s[2] - m[2][3] * s[0];                                   \
    r[3][0] = -m[1][0] * c[3] + m[1][1] * c[1] - m[1][2] * c[0];                                   \
    r[3][1] = m[0][0] * c[3] - m[0][1] * c[1] + m[0][2] * c[0];                                    \
    r[3][2] = -m[3][0] * s[3] + m[3][1] * s[1] - m[3][2] * s[0];                                   \
    r[3][3] = m[2][0] * s[3] - m[2][1] * s[1] + m[2][2] * s[0];                                    \
  }                                                                                                \
  KN_FN void kn__madj_##AC(A(*m)[4], int n, A(*r)[4]) {                                            \
    if (n == 2) {                                                                                  \
      r[0][0] = m[1][1], r[0][1] = -m[0][1], r[1][0] = -m[1][0], r[1][1] = m[0][0];                \
    } else if (n == 3) {                                                                           \
      for (int i = 0; i < 3; i++)                                                                  \
        for (int j = 0; j < 3; j++) r[i][j] = kn__cof3_##AC(m, j, i);                              \
    } else {                                                                                       \
      kn__adj4_##AC(m, r);                                                                         \
    }                                                                                              \
  }
KN__MDETADJ(float, f32)
KN__MDETADJ(double, f64)

/* determinant and inverse of T (N x N, N = 2, 3, 4, float elements E), in
 * the arithmetic of AC (f32 or f64), each result rounded once to E. The
 * inverse of a singular matrix (determinant exactly 0 in AC) is zero. */
#define KN_MATN_DETINV(T, E, EC, N, CD, AC)                                                        \
  KN_FN void kn__mload_##CD(T a, kn__acc_##AC(*m)[4]) {                                            \
    KN__MFOR(N, N) m[kn_i][kn_j] = (kn__acc_##AC)kn__up_##EC(a.m[kn_i][kn_j]);                     \
  }                                                                                                \
  KN_FN E kn_determinant_##CD(T a) {                                                               \
    kn__acc_##AC m[4][4];                                                                          \
    kn__mload_##CD(a, m);                                                                          \
    return kn__dn_##EC(kn__mdet_##AC(m, N));                                                       \
  }                                                                                                \
  KN_FN T kn_inverse_##CD(T a) {                                                                   \
    kn__acc_##AC m[4][4], adj[4][4];                                                               \
    T r;                                                                                           \
    kn__mload_##CD(a, m);                                                                          \
    kn__acc_##AC d = kn__mdet_##AC(m, N);                                                          \
    if (d == (kn__acc_##AC)0) return kn_zero_##CD();                                               \
    kn__madj_##AC(m, N, adj);                                                                      \
    KN__MFOR(N, N) r.m[kn_i][kn_j] = kn__dn_##EC(adj[kn_i][kn_j] / d);                             \
    return r;                                                                                      \
  }

/* NAME(v): the N x N matrix RT (elements E) with the vector V on its diagonal. */
#define KN_MATN_DIAG(V, RT, E, EC, N, NAME)                                                        \
  KN_FN RT NAME(V v) {                                                                             \
    RT r;                                                                                          \
    KN__MFOR(N, N) KN__MC(E, r, kn_i, kn_j, N) = kn__sc_i32_##EC(0);                               \
    KN__VFOR(N) KN__MC(E, r, kn_i, kn_i, N) = KN__VC(E, v, kn_i);                                  \
    return r;                                                                                      \
  }

/* NAME(a, b): the outer product of A (M) and B (N), an RT (M x N): a[i] * b[j]
 * in E's arithmetic, rounded once. */
#define KN_MATN_OUTER(A, B, RT, E, EC, M, N, NAME)                                                 \
  KN_FN RT NAME(A a, B b) {                                                                        \
    RT r;                                                                                          \
    KN__MFOR(M, N)                                                                                 \
    KN__MC(E, r, kn_i, kn_j, N) = kn__vm_##EC(KN__VC(E, a, kn_i), KN__VC(E, b, kn_j));             \
    return r;                                                                                      \
  }

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif
#endif
