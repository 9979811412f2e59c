/* builtins.h: the one table of builtin function overloads.
 *
 * Used by check.c for overload resolution and by both code generators, which
 * emit `cname` as a plain function call; stdlib/kern_builtins.h defines every
 * cname for the CPU compiler and for NVRTC. Operators on non-scalar operands
 * (vectors, matrices, quats) are entries too, named "op+", "op-", "op*", "op/",
 * "neg", "op==", "op!=". Special forms (tid, len, printf, atomics, rand, ...)
 * are not in this table: check.c and the emitter know them by SpecialKind.
 *
 * C names follow one rule: kn_<stem>_<code>[_<code>...], one type code per
 * parameter: b i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 v2 v3 v4 dv2 dv3 dv4
 * iv2 iv3 iv4 m22 m33 m44 q tf, and V<code>x<n> for vec<T, n> (Vf16x5; see builtin_type_code). Examples: kn_sqrt_f32,
 * kn_dot_v3_v3, kn_mul_m33_v3, kn_add_v3_v3, kn_neg_v3, kn_lerp_v3_v3_f32.
 *
 * Outputs: a parameter of pointer type (TY_PTR, code "p" + the pointee's, a
 * C pointer) is written by the function; the call passes &v of a local
 * variable (check_expr.c), as Warp's output parameters. Such builtins return
 * void, so they are statements and never an operand whose order matters.
 * Example: transform_set_translation(&t, p) is kn_transform_set_translation_ptf_v3.
 */
#ifndef KERN_BUILTINS_H
#define KERN_BUILTINS_H

#include "ast.h"

#define BUILTIN_MAX_PARAMS 6

typedef struct Builtin {
  const char *name;  /* as written in kern ("sqrt", "op+") */
  const char *cname; /* the stdlib function ("kn_sqrt_f32") */
  Type *ret;
  int nparams;
  Type *params[BUILTIN_MAX_PARAMS];
} Builtin;

/* The table is built once (thread-safe) and never freed. */
int builtin_count(void);
const Builtin *builtin_get(int index);
/* Overloads of `name` are contiguous: returns how many, and the first index. */
int builtin_overloads(const char *name, int *first);
/* The row of a builtin over vec<T, N> types (made on demand, not in the
 * table's name index: the checker asks for the rows its arguments need):
 * its index for builtin_get, the same for the same row every time, valid for
 * the process; -1 when out of memory. Thread-safe. */
int builtin_intern(const char *name, const char *stem, Type *ret, int n, Type *const *ps);
/* "f32", "v3", "m33", "q", "tf", "ptf" ... for scalar, vector, matrix, quat,
 * transform and output (pointer) types; NULL otherwise. */
const char *builtin_type_code(const Type *);
/* The C type the stdlib uses for a builtin scalar/vector/matrix/quat/transform
 * or output type: "float", "int32_t", "bool", "kn_f16", "kn_vec3", "kn_mat33",
 * "kn_quat", "kn_transform", "kn_transform *"; NULL otherwise (void too). */
const char *builtin_ctype(const Type *);

#endif
