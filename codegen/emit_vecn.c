/* emit_vecn.c: the definitions of the vec<T, N> and mat<T, M, N> types a module uses.
 *
 * Requires the typed tree and stdlib/kern_vecn.h (its KN_VECN* macros, pasted
 * with the stdlib). Produces, after the stdlib and before the module's
 * structs, each vec<T, N> and mat<T, M, N> the program names (its type, its
 * functions, its kn_make_; a square one's trace, diagonal, and for 2 x 2 ..
 * 4 x 4 float ones determinant and inverse), each product, transpose, outer
 * product and diag(v) that makes or takes a mat<T, M, N>,
 * each vector conversion that involves a vec<T, N> and each matrix
 * conversion that involves a mat<T, M, N> (module constants' values
 * included: they are inlined where named), each slice
 * function (kn_slice<lo>_<len>_<code>, rows check_vecn.c made), and each
 * quat<T> row check_quatn.c made that the stdlib does not define
 * (emit_quatn.c). Only what is
 * used is written: a module that names no vec<T, N> gets nothing here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "emit_internal.h"

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

typedef struct Pair {
  const Type *from, *to;
} Pair;

typedef struct Used {
  bool types[VECN_COUNT];
  bool mats[MATN_COUNT];
  int *multi; /* builtin indices: products and transposes over mat<T, M, N> */
  int nmulti, cap_multi;
  Pair *pairs;
  int npairs, cap_pairs;
  int *slices; /* builtin indices */
  int nslices, cap_slices;
  int *quats; /* builtin indices: quat<T> rows (emit_quatn.c) */
  int nquats, cap_quats;
  bool oom;
} Used;

static void note_type(Used *u, const Type *t) {
  while (t &&
         (t->kind == TY_ARRAY || t->kind == TY_FIXED || t->kind == TY_PTR || t->kind == TY_TILE))
    t = t->elem;
  int i = type_vecn_index(t), m = type_matn_index(t);
  if (i >= 0) u->types[i] = true;
  if (m >= 0) {
    u->mats[m] = true;
    note_type(u, type_mat_row(t));
  }
}

static void *grow(Used *u, void *v, int n, int *cap, size_t size) {
  if (n < *cap) return v;
  int c = *cap ? *cap * 2 : 16;
  void *w = realloc(v, (size_t)c * size);
  if (!w) {
    u->oom = true;
    return v;
  }
  *cap = c;
  return w;
}

static void note_pair(Used *u, const Type *from, const Type *to) {
  if (!from || !to || (from->kind != TY_VEC && from->kind != TY_MAT) || to->kind != from->kind ||
      type_equal(from, to))
    return;
  if (!from->generic && !to->generic && from != &ty_svec && to != &ty_svec) return;
  for (int i = 0; i < u->npairs; i++)
    if (u->pairs[i].from == from && u->pairs[i].to == to) return;
  u->pairs = grow(u, u->pairs, u->npairs, &u->cap_pairs, sizeof *u->pairs);
  if (!u->oom) u->pairs[u->npairs++] = (Pair){from, to};
}

static void note_index(Used *u, int **v, int *n, int *cap, int index) {
  for (int i = 0; i < *n; i++)
    if ((*v)[i] == index) return;
  *v = grow(u, *v, *n, cap, sizeof **v);
  if (!u->oom) (*v)[(*n)++] = index;
}

/* A row over two types, or a transpose, outer product or diag(v): not in any
 * one type's macro. */
static bool multi_type(const Builtin *b) {
  if (strcmp(b->name, "transpose") == 0 || strcmp(b->name, "outer") == 0) return true;
  if (strcmp(b->name, "diag") == 0 && b->nparams == 1 && b->params[0]->kind == TY_VEC) return true;
  return strcmp(b->name, "op*") == 0 && b->nparams == 2 && b->params[0]->kind == TY_MAT &&
         (b->params[1]->kind == TY_MAT || b->params[1]->kind == TY_VEC);
}

static void note_builtin(Used *u, int index) {
  const Builtin *b = builtin_get(index);
  if (!b) return;
  note_type(u, b->ret);
  for (int i = 0; i < b->nparams; i++) note_type(u, b->params[i]);
  if (index < builtin_count()) return;
  if (multi_type(b)) note_index(u, &u->multi, &u->nmulti, &u->cap_multi, index);
  if (emit_quatn_wants(b)) note_index(u, &u->quats, &u->nquats, &u->cap_quats, index);
  if (strcmp(b->name, "[:]") != 0) return;
  note_index(u, &u->slices, &u->nslices, &u->cap_slices, index);
}

static bool visit(const Node *n, void *ud) {
  Used *u = ud;
  note_type(u, n->ty);
  if (n->kind == ND_VARDECL && n->var) note_type(u, n->var->ty);
  if ((n->kind == ND_CONV || n->kind == ND_CAST) && n->lhs) note_pair(u, n->lhs->ty, n->ty);
  if (n->call_kind == CALL_BUILTIN) note_builtin(u, n->builtin); /* calls and operators */
  if (n->kind == ND_CALL && n->call_kind == CALL_CTOR && n->nargs == 1 && n->args)
    note_pair(u, n->args->ty, n->ty);
  return false;
}

static void collect_decl(Used *u, const Decl *d) {
  for (int i = 0; i < d->nparams; i++) note_type(u, d->params[i]->ty);
  note_type(u, d->ret);
  if (d->body && ast_walk(d->body, visit, u) < 0) u->oom = true;
}

static void collect(const Program *p, Used *u) {
  for (int i = 0; i < p->nstructs; i++)
    for (int k = 0; k < p->structs[i]->nfields; k++) note_type(u, p->structs[i]->fields[k].ty);
  /* a constant is inlined where it is named: what its value calls is used */
  for (int i = 0; i < p->nconsts; i++)
    if (p->consts[i]->init && ast_walk(p->consts[i]->init, visit, u) < 0) u->oom = true;
  for (int i = 0; i < p->nfuncs; i++) collect_decl(u, p->funcs[i]);
  for (int i = 0; i < p->nkernels; i++) collect_decl(u, p->kernels[i]);
}

/* kn_make_<code>(c0, ..., cN-1): the one function whose arity the macros cannot write. */
static void make_fn(Emitter *e, const Type *t) {
  const char *ct = builtin_ctype(t), *et = builtin_ctype(t->elem);
  OUT(e, "KN_FN %s kn_make_%s(", ct, builtin_type_code(t));
  for (int i = 0; i < t->n; i++) OUT(e, "%s%s c%d", i ? ", " : "", et, i);
  OUT(e, ") {\n  %s r;\n", ct);
  for (int i = 0; i < t->n; i++) OUT(e, "  r.v[%d] = c%d;\n", i, i);
  OUT(e, "  return r;\n}\n");
}

static void type_defs(Emitter *e, const Type *t) {
  const char *ct = builtin_ctype(t), *code = builtin_type_code(t);
  const char *et = builtin_ctype(t->elem), *ec = builtin_type_code(t->elem);
  OUT(e, "KN_VECN(%s, %s, %s, %d, %s)\n", ct, et, ec, t->n, code);
  make_fn(e, t);
  const char *more = type_is_float(t->elem)    ? "KN_VECN_FLOAT"
                     : type_is_signed(t->elem) ? "KN_VECN_SIGNED"
                                               : NULL;
  if (more) OUT(e, "%s(%s, %s, %s, %d, %s)\n", more, ct, et, ec, t->n, code);
  if (type_is_int(t->elem)) OUT(e, "KN_VECN_INT(%s, %s, %s, %d, %s)\n", ct, et, ec, t->n, code);
  if (t->n == 3) OUT(e, "KN_VECN_CROSS(%s, %s, %s, %s)\n", ct, et, ec, code);
}

/* kn_make_<code> from the elements row by row, and kn_make_<code>_rows from the rows. */
static void mat_makes(Emitter *e, const Type *t) {
  const char *ct = builtin_ctype(t), *et = builtin_ctype(t->elem), *code = builtin_type_code(t);
  const char *rt = builtin_ctype(type_mat_row(t));
  int r = t->n, c = type_mat_cols(t);
  OUT(e, "KN_FN %s kn_make_%s(", ct, code);
  for (int i = 0; i < r * c; i++) OUT(e, "%s%s c%d", i ? ", " : "", et, i);
  OUT(e, ") {\n  %s r;\n", ct);
  for (int i = 0; i < r * c; i++) OUT(e, "  r.m[%d][%d] = c%d;\n", i / c, i % c, i);
  OUT(e, "  return r;\n}\nKN_FN %s kn_make_%s_rows(", ct, code);
  for (int i = 0; i < r; i++) OUT(e, "%s%s r%d", i ? ", " : "", rt, i);
  OUT(e, ") {\n  %s r;\n", ct);
  for (int i = 0; i < r; i++)
    OUT(e, "  for (int j = 0; j < %d; j++) r.m[%d][j] = ((%s *)&r%d)[j];\n", c, i, et, i);
  OUT(e, "  return r;\n}\n");
}

static void mat_defs(Emitter *e, const Type *t) {
  const char *ct = builtin_ctype(t), *et = builtin_ctype(t->elem), *code = builtin_type_code(t);
  const char *ec = builtin_type_code(t->elem), *rt = builtin_ctype(type_mat_row(t));
  int n = t->n;
  OUT(e, "KN_MATN(%s, %s, %s, %d, %d, %s, %s)\n", ct, et, ec, n, type_mat_cols(t), code, rt);
  mat_makes(e, t);
  if (type_mat_cols(t) != n) return;
  OUT(e, "KN_MATN_SQ(%s, %s, %s, %d, %s, %s)\n", ct, et, ec, n, code, rt);
  /* float16 and bfloat16 in float32, float64 (and float32) in float64 */
  if (type_is_float(t->elem) && n >= 2 && n <= 4)
    OUT(e, "KN_MATN_DETINV(%s, %s, %s, %d, %s, %s)\n", ct, et, ec, n, code,
        type_is_half(t->elem) ? "f32" : "f64");
}

/* Products (matrix by matrix or vector), transposes, outer products and
 * diag(v), by their rows. */
static void multi_def(Emitter *e, int index) {
  const Builtin *b = builtin_get(index);
  const Type *a = b->params[0], *r = b->ret;
  const char *et = builtin_ctype(a->elem), *ec = builtin_type_code(a->elem);
  if (a->kind == TY_VEC && b->nparams == 1) {
    OUT(e, "KN_MATN_DIAG(%s, %s, %s, %s, %d, %s)\n", builtin_ctype(a), builtin_ctype(r), et, ec,
        a->n, b->cname);
    return;
  }
  if (a->kind == TY_VEC) {
    OUT(e, "KN_MATN_OUTER(%s, %s, %s, %s, %s, %d, %d, %s)\n", builtin_ctype(a),
        builtin_ctype(b->params[1]), builtin_ctype(r), et, ec, a->n, b->params[1]->n, b->cname);
    return;
  }
  int m = a->n, k = type_mat_cols(a);
  if (b->nparams == 1)
    OUT(e, "KN_MATN_T(%s, %s, %s, %d, %d, %s)\n", builtin_ctype(a), builtin_ctype(r), et, m, k,
        b->cname);
  else if (b->params[1]->kind == TY_MAT)
    OUT(e, "KN_MATN_MUL(%s, %s, %s, %s, %s, %d, %d, %d, %s)\n", builtin_ctype(a),
        builtin_ctype(b->params[1]), builtin_ctype(r), et, ec, m, k, type_mat_cols(r), b->cname);
  else
    OUT(e, "KN_MATN_MULV(%s, %s, %s, %s, %s, %d, %d, %s)\n", builtin_ctype(a),
        builtin_ctype(b->params[1]), builtin_ctype(r), et, ec, m, k, b->cname);
}

static void pair_def(Emitter *e, const Pair *p) {
  OUT(e, "KN_VECN_CVT(%s, %s, %s, %s, %s, %s, %s, %s, %d)\n", builtin_ctype(p->from),
      builtin_ctype(p->from->elem), builtin_type_code(p->from->elem), builtin_type_code(p->from),
      builtin_ctype(p->to), builtin_ctype(p->to->elem), builtin_type_code(p->to->elem),
      builtin_type_code(p->to),
      p->from->n * (p->from->kind == TY_MAT ? type_mat_cols(p->from) : 1));
}

/* cname kn_slice<lo>_<len>_<code>: components lo .. lo + len - 1 of its argument. */
static void slice_def(Emitter *e, int index) {
  const Builtin *b = builtin_get(index);
  int lo = 0, len = 0;
  if (sscanf(b->cname, "kn_slice%d_%d_", &lo, &len) != 2) return;
  const Type *a = b->params[0], *r = b->ret;
  const char *rt = builtin_ctype(r), *et = builtin_ctype(r->elem);
  OUT(e, "KN_FN %s %s(%s a) {\n  %s r;\n", rt, b->cname, builtin_ctype(a), rt);
  OUT(e, "  for (int i = 0; i < %d; i++) ((%s *)&r)[i] = ((const %s *)&a)[%d + i];\n", len, et, et,
      lo);
  OUT(e, "  return r;\n}\n");
}

void emit_vecn_defs(Emitter *e) {
  Used u = {0};
  collect(e->prog, &u);
  if (u.oom) e->out.oom = true;
  bool any = u.npairs || u.nslices || u.nmulti || u.nquats;
  for (int i = 0; i < VECN_COUNT; i++) any |= u.types[i];
  for (int i = 0; i < MATN_COUNT; i++) any |= u.mats[i];
  if (any)
    OUT(e, "\n/* ---- vec<T, N> ---- */\n#ifdef __CUDACC_RTC__\n"
           "#pragma nv_diagnostic push\n#pragma nv_diag_suppress 177\n#endif\n");
  for (int i = 0; i < VECN_COUNT; i++)
    if (u.types[i]) type_defs(e, type_vecn_at(i));
  for (int i = 0; i < MATN_COUNT; i++)
    if (u.mats[i]) mat_defs(e, type_matn_at(i));
  for (int i = 0; i < u.nmulti; i++) multi_def(e, u.multi[i]);
  for (int i = 0; i < u.npairs; i++) pair_def(e, &u.pairs[i]);
  for (int i = 0; i < u.nslices; i++) slice_def(e, u.slices[i]);
  for (int i = 0; i < u.nquats; i++) emit_quatn_row(e, u.quats[i]);
  if (any) OUT(e, "#ifdef __CUDACC_RTC__\n#pragma nv_diagnostic pop\n#endif\n");
  free(u.pairs);
  free(u.slices);
  free(u.multi);
  free(u.quats);
}
