/* check_quatn.c: the builtins of quat<T> for T = float16, bfloat16 and float64.
 *
 * Requires check_overload.c (candidates) and builtins.c's builtin_intern.
 * Produces the builtin rows a call can take over quath, quat<bfloat16> and
 * quatd arguments, made for the element types met (as check_vecn.c makes the
 * rows of vec<T, N>): every row the table has for quat, with vec<T, 3>,
 * vec<T, 4>, mat<T, 3, 3>, mat<T, 4, 4> and T where quat's take vec3, vec4,
 * mat33, mat44 and float32. The float32 rows stay in the table. Breaks: the
 * emitter (codegen/emit_quatn.c) defines each float16 and bfloat16 row from
 * its float32 twin, and stdlib/kern_quatn.h each float64 one (the emitter
 * those over mat<float64, ...>): a template here needs its float32 twin in
 * frontend/builtins.c (add_quats, add_operators) and its float64 function.
 */
#include <string.h>

#include "check_internal.h"

/* ret and params: Q the quat, E its element type, V vec<E, 3>, F vec<E, 4>,
 * M mat<E, 3, 3>, N mat<E, 4, 4>, B bool. */
typedef struct QTmpl {
  const char *name, *stem;
  char ret;
  const char *params;
} QTmpl;

static const QTmpl tmpls[] = {
    {"op+", "add", 'Q', "QQ"},
    {"op-", "sub", 'Q', "QQ"},
    {"neg", "neg", 'Q', "Q"},
    {"op==", "eq", 'B', "QQ"},
    {"op!=", "ne", 'B', "QQ"},
    {"op*", "mul", 'Q', "QE"},
    {"op*", "mul", 'Q', "EQ"},
    {"op/", "div", 'Q', "QE"},
    {"dot", "dot", 'E', "QQ"},
    {"length", "length", 'E', "Q"},
    {"length_sq", "length_sq", 'E', "Q"},
    {"normalize", "normalize", 'Q', "Q"},
    {"inverse", "inverse", 'Q', "Q"},
    {"conjugate", "conjugate", 'Q', "Q"},
    {"quat_inverse", "quat_inverse", 'Q', "Q"},
    {"lerp", "lerp", 'Q', "QQE"},
    {"quat_slerp", "quat_slerp", 'Q', "QQE"},
    {"quat_mul", "quat_mul", 'Q', "QQ"},
    {"quat_rotate", "quat_rotate", 'V', "QV"},
    {"quat_rotate_inv", "quat_rotate_inv", 'V', "QV"},
    {"quat_to_matrix", "quat_to_matrix", 'M', "Q"},
    {"quat_from_matrix", "quat_from_matrix", 'Q', "M"},
    {"quat_from_matrix", "quat_from_matrix", 'Q', "N"},
    {"quat_to_axis_angle", "quat_to_axis_angle", 'F', "Q"},
    {"quat_from_axis_angle", "quat_from_axis_angle", 'Q', "VE"},
    {"quat_rpy", "quat_rpy", 'Q', "EEE"},
    {"quat_twist", "quat_twist", 'Q', "VQ"},
    {"isnan", "isnan", 'B', "Q"},
    {"isinf", "isinf", 'B', "Q"},
    {"isfinite", "isfinite", 'B', "Q"},
};

static Type *tmpl_type(char k, Type *e) {
  switch (k) {
    case 'Q': return type_quatn(e);
    case 'E': return e;
    case 'V': return type_vecn(e, 3);
    case 'F': return type_vecn(e, 4);
    case 'M': return type_matn(e, 3, 3);
    case 'N': return type_matn(e, 4, 4);
    default: return &ty_bool;
  }
}

/* The element type whose rows an argument of type t calls for, or NULL: a
 * quat<T> always; for the builtins that make a quat from other values, a
 * vec<T, 3>, mat<T, 3 or 4, 3 or 4> or T itself. */
static Type *row_elem(const char *name, Type *t) {
  if (!t) return NULL;
  if (t->kind == TY_QUAT) return t->elem->kind == TY_F32 ? NULL : t->elem;
  if (strncmp(name, "quat_from_", 10) != 0 && strcmp(name, "quat_rpy") != 0) return NULL;
  Type *e = type_is_float(t) ? t : (t->kind == TY_VEC || t->kind == TY_MAT) ? t->elem : NULL;
  return e && e->kind != TY_F32 && type_quatn(e) ? e : NULL;
}

static int add_rows(Check *c, const char *name, Type *e, Cand *cs, int nc) {
  for (size_t i = 0; i < sizeof tmpls / sizeof tmpls[0]; i++) {
    const QTmpl *t = &tmpls[i];
    if (strcmp(t->name, name) != 0) continue;
    Type *ps[BUILTIN_MAX_PARAMS];
    int np = (int)strlen(t->params);
    for (int k = 0; k < np; k++) ps[k] = tmpl_type(t->params[k], e);
    int index = builtin_intern(t->name, t->stem, tmpl_type(t->ret, e), np, ps);
    if (index < 0) longjmp(c->oom, 1);
    const Builtin *b = builtin_get(index);
    cs[nc++] = (Cand){NULL, index, b->nparams, b->params, b->ret};
  }
  return nc;
}

int ck_quatn_cands(Check *c, const char *name, const Val *vals, int na, Cand **cs, int nc) {
  enum { PER = 3 }; /* the most templates one name has */
  if (!name) return nc;
  Cand *out = NULL;
  Type *done[BUILTIN_MAX_PARAMS] = {0};
  int ndone = 0;
  for (int i = 0; i < na; i++) {
    Type *e = row_elem(name, vals[i].ty);
    bool seen = !e;
    for (int k = 0; k < ndone && !seen; k++) seen = done[k] == e;
    if (seen || ndone == BUILTIN_MAX_PARAMS) continue;
    done[ndone++] = e;
    if (!out) {
      out = ck_alloc(c, (size_t)(nc + PER * na + 1) * sizeof *out);
      if (nc) memcpy(out, *cs, (size_t)nc * sizeof *out);
    }
    nc = add_rows(c, name, e, out, nc);
  }
  if (out) *cs = out;
  return nc;
}
