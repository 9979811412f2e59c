/* check_record.c: what the stages after the checker need, recorded once so
 * they never walk the tree for it: every array parameter's program-wide number
 * (debug error records name arrays by it) and which arrays atomics reach.
 *
 * Requires: a checked Program without errors. Produces: ck_record_params
 * (Var.array_id, Var.atomics, Program.array_params). Breaks: nothing.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

static bool is_atomic(const Node *n) {
  return n->kind == ND_CALL && n->call_kind == CALL_SPECIAL && n->special >= SP_ATOMIC_ADD &&
         n->special <= SP_ATOMIC_CAS;
}

/* The array an atomic's &a[i...] names (arrays are always parameters). */
static Var *atomic_array(const Node *call) {
  const Node *e = call->args && call->args->kind == ND_ADDR ? call->args->lhs : NULL;
  while (e && (e->kind == ND_INDEX || e->kind == ND_MEMBER)) e = e->lhs;
  return e && e->kind == ND_IDENT ? e->var : NULL;
}

static bool mark(Var *v) {
  if (!v || v->atomics) return false;
  v->atomics = true;
  return true;
}

/* Marks the arrays atomics reach under n: applied to directly, or passed to
 * a function parameter already marked. True when it marked one. */
static bool mark_atomics(const Node *n) {
  bool changed = false;
  for (; n; n = n->next) {
    if (n->kind == ND_CALL && is_atomic(n)) changed |= mark(atomic_array(n));
    const Decl *fn = n->kind == ND_CALL && n->call_kind == CALL_FUNC ? n->fn : NULL;
    int j = 0;
    for (const Node *a = fn ? n->args : NULL; a; a = a->next, j++)
      if (a->kind == ND_IDENT && j < fn->nparams && fn->params[j]->atomics) changed |= mark(a->var);
    if (n->kind == ND_VARDECL && n->var) changed |= mark_atomics(n->var->init);
    const Node *kids[] = {n->lhs,  n->rhs, n->cond, n->then, n->els,
                          n->init, n->inc, n->body, n->args};
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++) changed |= mark_atomics(kids[i]);
  }
  return changed;
}

/* Numbers the array parameters (functions, then kernels) for debug records,
 * and finds the ones atomics reach, through calls to a fixed point (calls
 * never recurse, so it comes after at most one round per call level). */
void ck_record_params(Check *c, Program *p) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < (pass ? p->nkernels : p->nfuncs); i++) {
      const Decl *d = pass ? p->kernels[i] : p->funcs[i];
      for (int j = 0; j < d->nparams; j++) n += d->params[j]->ty->kind == TY_ARRAY;
    }
  p->array_params = n ? ck_alloc(c, (size_t)n * sizeof *p->array_params) : NULL;
  p->narray_params = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < (pass ? p->nkernels : p->nfuncs); i++) {
      Decl *d = pass ? p->kernels[i] : p->funcs[i];
      for (int j = 0; j < d->nparams; j++) {
        Var *v = d->params[j];
        v->array_id = -1;
        if (v->ty->kind != TY_ARRAY) continue;
        v->array_id = p->narray_params;
        p->array_params[p->narray_params++] = (ArrayParam){v, d};
      }
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < p->nfuncs; i++) changed |= mark_atomics(p->funcs[i]->body);
    for (int i = 0; i < p->nkernels; i++) changed |= mark_atomics(p->kernels[i]->body);
  }
}
