/* emit_quatn.c: the definitions of the quat<T> rows a module calls that the stdlib cannot hold.
 *
 * Requires the rows frontend/check_quatn.c makes and stdlib/kern_quatn.h
 * (its KN_QUATN_* and KN_QUATD_* macros, pasted with the stdlib). Produces,
 * for emit_vecn.c (after the vec<T, N> and mat<T, M, N> types the rows
 * name), one macro line per row: a float16 or bfloat16 row as its float32
 * twin (every type with float32 for T: the table's row of the same stem),
 * and the float64 rows over mat<float64, ...>, which the module defines.
 * The other float64 rows are the stdlib's own functions: nothing here.
 */
#include <stdio.h>
#include <string.h>

#include "builtins.h"
#include "emit_internal.h"

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

/* The element type of the quat a row takes or returns; NULL for none. */
static const Type *row_elem(const Builtin *b) {
  if (b->ret && b->ret->kind == TY_QUAT) return b->ret->elem;
  for (int i = 0; i < b->nparams; i++)
    if (b->params[i]->kind == TY_QUAT) return b->params[i]->elem;
  return NULL;
}

bool emit_quatn_wants(const Builtin *b) {
  const Type *e = row_elem(b);
  if (!e || e->kind == TY_F32) return false;
  if (e->kind != TY_F64) return true;
  return strncmp(b->name, "quat_to_matrix", 14) == 0 ||
         strncmp(b->name, "quat_from_matrix", 16) == 0;
}

/* t with float32 for its element type (a float16 row's twin). */
static const Type *twin(const Type *t) {
  switch (t->kind) {
    case TY_QUAT: return &ty_quat;
    case TY_VEC: return type_vecn(&ty_f32, t->n);
    case TY_MAT: return type_matn(&ty_f32, t->n, type_mat_cols(t));
    default: return type_is_float(t) ? &ty_f32 : t;
  }
}

static void half_row(Emitter *e, const Builtin *b, const Type *et) {
  bool flag = b->ret == &ty_bool;
  OUT(e, "KN_QUATN_%c%d(%s, ", flag ? 'B' : 'W', b->nparams, b->cname);
  if (!flag) OUT(e, "%s, %s, ", builtin_ctype(b->ret), builtin_ctype(twin(b->ret)));
  /* the twin's C name: the row's with the twins' type codes (kn_<stem>_<codes>) */
  size_t stem = strlen(b->cname);
  for (int i = 0; i < b->nparams; i++) stem -= strlen(builtin_type_code(b->params[i])) + 1;
  OUT(e, "%.*s", (int)stem, b->cname);
  for (int i = 0; i < b->nparams; i++) OUT(e, "_%s", builtin_type_code(twin(b->params[i])));
  for (int i = 0; i < b->nparams; i++)
    OUT(e, ", %s, %s", builtin_ctype(b->params[i]), builtin_ctype(twin(b->params[i])));
  OUT(e, ", %s, %s)\n", builtin_ctype(et), builtin_type_code(et));
}

void emit_quatn_row(Emitter *e, int index) {
  const Builtin *b = builtin_get(index);
  const Type *et = b ? row_elem(b) : NULL;
  if (!et) return;
  if (et->kind != TY_F64)
    half_row(e, b, et);
  else if (b->ret->kind == TY_MAT)
    OUT(e, "KN_QUATD_TO_MATRIX(%s, %s)\n", b->cname, builtin_ctype(b->ret));
  else
    OUT(e, "KN_QUATD_FROM_MATRIX(%s, %s, %d)\n", b->cname, builtin_ctype(b->params[0]),
        type_mat_cols(b->params[0]));
}
