/* check_record.c: what the stages after the checker need, recorded once so
 * they never walk the tree for it: every array parameter's and local array's
 * program-wide number (debug error records name arrays by it), the messages
 * of asserts (by number, too) and which arrays atomics reach.
 *
 * Requires: a checked Program without errors (so calls never recurse).
 * Produces: ck_record_params (Var.array_id, Var.atomics,
 * Program.array_params, Program.assert_msgs and the asserts' numbers in
 * their ival). Breaks: nothing.
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

/* Marks the arrays an atomic applies to at n, or that n passes to a function
 * parameter already marked; *changed when it marked one. */
static bool mark_at(const Node *n, void *changed) {
  if (n->kind != ND_CALL) return false;
  if (is_atomic(n)) *(bool *)changed |= mark(atomic_array(n));
  if (n->call_kind == CALL_TILE && n->tile_op == TOP_ATOMIC_ADD && n->args->kind == ND_IDENT)
    *(bool *)changed |= mark(n->args->var);
  const Decl *fn = n->call_kind == CALL_FUNC ? n->fn : NULL;
  int j = 0;
  for (const Node *a = fn ? n->args : NULL; a; a = a->next, j++)
    if (a->kind == ND_IDENT && j < fn->nparams && fn->params[j]->atomics)
      *(bool *)changed |= mark(a->var);
  return false;
}

/* Marks the arrays atomics reach under n (ast_walk: an else-if chain can be
 * longer than any recursion should go). True when it marked one. */
static bool mark_atomics(Check *c, const Node *n) {
  bool changed = false;
  if (ast_walk(n, mark_at, &changed) < 0) longjmp(c->oom, 1);
  return changed;
}

static bool is_array(const Var *v) {
  return v->ty && (v->ty->kind == TY_ARRAY || v->ty->kind == TY_FIXED);
}

/* Counts (numbers, when rec->array_params is set) the local arrays of a body. */
typedef struct Locals {
  Program *p;
  const Decl *owner;
  int n;
} Locals;

static bool local_array(const Node *n, void *ud) {
  Locals *L = ud;
  if (n->kind != ND_VARDECL || !n->var || !is_array(n->var)) return false;
  if (L->p->array_params) {
    n->var->array_id = L->p->narray_params;
    L->p->array_params[L->p->narray_params++] = (ArrayParam){n->var, L->owner};
  }
  L->n++;
  return false;
}

/* Numbers (when msgs is set) the messages of the asserts of a body. */
typedef struct Asserts {
  const char **msgs;
  int n;
} Asserts;

static bool assert_msg(const Node *n, void *ud) {
  Asserts *A = ud;
  if (n->kind != ND_CALL || n->call_kind != CALL_SPECIAL || n->special != SP_ASSERT || !n->args ||
      !n->args->next || n->args->next->kind != ND_STRING)
    return false;
  if (A->msgs) {
    A->msgs[A->n] = n->args->next->str ? n->args->next->str : "";
    ((Node *)n)->ival = (uint64_t)A->n + 1; /* the emitter's record names it by number */
  }
  A->n++;
  return false;
}

/* Numbers the messages of asserts for the debug records (a failed assert's
 * record carries the number; the runtime words the message). */
static void record_asserts(Check *c, Program *p) {
  Asserts A = {NULL, 0};
  for (int round = 0; round < 2; round++) {
    if (round) {
      p->assert_msgs = A.n ? ck_alloc(c, (size_t)A.n * sizeof *p->assert_msgs) : NULL;
      p->nassert_msgs = A.n;
      A = (Asserts){p->assert_msgs, 0};
      if (!A.msgs) return;
    }
    for (int i = 0; i < p->nfuncs + p->nkernels; i++) {
      const Decl *d = i < p->nfuncs ? p->funcs[i] : p->kernels[i - p->nfuncs];
      if (ast_walk(d->body, assert_msg, &A) < 0) longjmp(c->oom, 1);
    }
  }
}

/* Numbers every array a debug record may name: the array parameters and the
 * local arrays (functions, then kernels), and finds the arrays atomics reach,
 * through calls. */
void ck_record_params(Check *c, Program *p) {
  int n = 0;
  p->array_params = NULL;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < (pass ? p->nkernels : p->nfuncs); i++) {
      Decl *d = pass ? p->kernels[i] : p->funcs[i];
      for (int j = 0; j < d->nparams; j++) n += is_array(d->params[j]);
      Locals L = {p, d, 0};
      if (ast_walk(d->body, local_array, &L) < 0) longjmp(c->oom, 1);
      n += L.n;
    }
  p->array_params = n ? ck_alloc(c, (size_t)n * sizeof *p->array_params) : NULL;
  p->narray_params = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < (pass ? p->nkernels : p->nfuncs); i++) {
      Decl *d = pass ? p->kernels[i] : p->funcs[i];
      for (int j = 0; j < d->nparams; j++) {
        Var *v = d->params[j];
        v->array_id = -1;
        if (!is_array(v)) continue;
        v->array_id = p->narray_params;
        p->array_params[p->narray_params++] = (ArrayParam){v, d};
      }
      Locals L = {p, d, 0};
      if (ast_walk(d->body, local_array, &L) < 0) longjmp(c->oom, 1);
    }
  record_asserts(c, p);
  /* Callees first, each function once (a fixed point over all of them took a
   * round per level of a call chain: 20,000 rounds for a chain that long). */
  AstCallGraph g;
  if (!ast_call_graph(p, &g)) longjmp(c->oom, 1);
  for (int k = 0; k < p->nfuncs; k++) mark_atomics(c, p->funcs[g.order[k]]->body);
  ast_call_graph_free(&g);
  for (int i = 0; i < p->nkernels; i++) mark_atomics(c, p->kernels[i]->body);
}
