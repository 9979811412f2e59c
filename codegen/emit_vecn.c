/* emit_vecn.c: the definitions of the vec<T, N> types a module uses.
 *
 * Requires the typed tree and stdlib/kern_vecn.h (its KN_VECN* macros, pasted
 * with the stdlib). Produces, after the stdlib and before the module's
 * structs, each vec<T, N> the program names (its type, its functions, its
 * kn_make_), each vector conversion that involves one, and each slice
 * function (kn_slice<lo>_<len>_<code>, rows check_vecn.c made). Only what is
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
  Pair *pairs;
  int npairs, cap_pairs;
  int *slices; /* builtin indices */
  int nslices, cap_slices;
  bool oom;
} Used;

static void note_type(Used *u, const Type *t) {
  while (t &&
         (t->kind == TY_ARRAY || t->kind == TY_FIXED || t->kind == TY_PTR || t->kind == TY_TILE))
    t = t->elem;
  int i = type_vecn_index(t);
  if (i >= 0) u->types[i] = true;
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
  if (!from || !to || from->kind != TY_VEC || to->kind != TY_VEC || type_equal(from, to)) return;
  if (!from->generic && !to->generic && from != &ty_svec && to != &ty_svec) return;
  for (int i = 0; i < u->npairs; i++)
    if (u->pairs[i].from == from && u->pairs[i].to == to) return;
  u->pairs = grow(u, u->pairs, u->npairs, &u->cap_pairs, sizeof *u->pairs);
  if (!u->oom) u->pairs[u->npairs++] = (Pair){from, to};
}

static void note_builtin(Used *u, int index) {
  const Builtin *b = builtin_get(index);
  if (!b) return;
  note_type(u, b->ret);
  for (int i = 0; i < b->nparams; i++) note_type(u, b->params[i]);
  if (index < builtin_count() || strcmp(b->name, "[:]") != 0) return;
  for (int i = 0; i < u->nslices; i++)
    if (u->slices[i] == index) return;
  u->slices = grow(u, u->slices, u->nslices, &u->cap_slices, sizeof *u->slices);
  if (!u->oom) u->slices[u->nslices++] = index;
}

static bool visit(const Node *n, void *ud) {
  Used *u = ud;
  note_type(u, n->ty);
  if (n->kind == ND_VARDECL && n->var) note_type(u, n->var->ty);
  if ((n->kind == ND_CONV || n->kind == ND_CAST) && n->lhs) note_pair(u, n->lhs->ty, n->ty);
  if (n->kind == ND_CALL && n->call_kind == CALL_BUILTIN) note_builtin(u, n->builtin);
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

static void pair_def(Emitter *e, const Pair *p) {
  OUT(e, "KN_VECN_CVT(%s, %s, %s, %s, %s, %s, %s, %s, %d)\n", builtin_ctype(p->from),
      builtin_ctype(p->from->elem), builtin_type_code(p->from->elem), builtin_type_code(p->from),
      builtin_ctype(p->to), builtin_ctype(p->to->elem), builtin_type_code(p->to->elem),
      builtin_type_code(p->to), p->from->n);
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
  bool any = u.npairs || u.nslices;
  for (int i = 0; i < VECN_COUNT; i++) any |= u.types[i];
  if (any)
    OUT(e, "\n/* ---- vec<T, N> ---- */\n#ifdef __CUDACC_RTC__\n"
           "#pragma nv_diagnostic push\n#pragma nv_diag_suppress 177\n#endif\n");
  for (int i = 0; i < VECN_COUNT; i++)
    if (u.types[i]) type_defs(e, type_vecn_at(i));
  for (int i = 0; i < u.npairs; i++) pair_def(e, &u.pairs[i]);
  for (int i = 0; i < u.nslices; i++) slice_def(e, u.slices[i]);
  if (any) OUT(e, "#ifdef __CUDACC_RTC__\n#pragma nv_diagnostic pop\n#endif\n");
  free(u.pairs);
  free(u.slices);
}
