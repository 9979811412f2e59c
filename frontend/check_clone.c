/* check_clone.c: copies of unchecked syntax trees, with type variables
 * replaced: a generic function's instances and the iterations of a
 * `static for` are each checked on a copy of their own.
 *
 * Requires: a tree the checker has not touched (the checker rewrites trees in
 * place, so a checked one cannot be copied back to its source form). Produces:
 * ck_clone_stmt, ck_clone_texpr and ck_clone_var, whose copies share nothing
 * writable with the original but names and source locations. Breaks: a name
 * that is a type variable of the substitution becomes that type wherever it
 * is written: in a type (`T x`, `T[] a`), a call (`T(0)`: a cast or a
 * constructor) and a value (`sizeof(T)`: an ND_IDENT with targs[0]).
 * Expression trees are at most AST_MAX_DEPTH deep, so this recurses on them;
 * lists and else-if chains are walked in loops.
 */

#include <string.h>

#include "check_internal.h"

static Type *subst_of(const CkSubst *s, const char *name) {
  for (int i = 0; s && name && i < s->n; i++)
    if (strcmp(s->names[i], name) == 0) return s->types[i];
  return NULL;
}

static TypeExpr *builtin_texpr(Check *c, Type *t, SrcLoc loc) {
  TypeExpr *te = ck_alloc(c, sizeof *te);
  te->loc = loc;
  te->builtin = t;
  return te;
}

static Node *clone_list(Check *c, const Node *n, const CkSubst *s) {
  Node head = {0}, *cur = &head;
  for (; n; n = n->next) cur = cur->next = ck_clone_stmt(c, n, s);
  return head.next;
}

TypeExpr *ck_clone_texpr(Check *c, const TypeExpr *te, const CkSubst *s) {
  if (!te) return NULL;
  TypeExpr *t = ck_alloc(c, sizeof *t);
  *t = *te;
  Type *b = t->builtin ? NULL : subst_of(s, t->name);
  if (b) {
    t->builtin = b;
    t->name = NULL;
  }
  Type *e = t->vecn_elem ? subst_of(s, t->vecn_elem) : NULL;
  if (e) { /* vec<T, N> ...: the vector of what T stands for, if there is one */
    t->vecn_bound = e;
    t->builtin = ck_vecn_of(t, e);
  }
  for (int i = 0; i < te->tile_rank && i < 2; i++)
    t->tile_shape[i] = ck_clone_stmt(c, te->tile_shape[i], s);
  for (int i = 0; i < te->nfixed && i < 4; i++) t->fixed[i] = ck_clone_stmt(c, te->fixed[i], s);
  return t;
}

Var *ck_clone_var(Check *c, const Var *v, const CkSubst *s) {
  if (!v) return NULL;
  Var *w = ck_alloc(c, sizeof *w);
  *w = *v;
  w->texpr = ck_clone_texpr(c, v->texpr, s);
  w->init = ck_clone_stmt(c, v->init, s);
  w->ty = NULL;
  return w;
}

/* A name written where a value or a callee goes that names a type variable. */
static void subst_name(Check *c, Node *n, const CkSubst *s) {
  Type *t = n->ntargs || n->texpr ? NULL : subst_of(s, n->name);
  if (!t) return;
  if (n->kind == ND_IDENT) {
    n->targs = ck_alloc(c, sizeof *n->targs);
    n->targs[0] = builtin_texpr(c, t, n->loc);
    n->ntargs = 1;
  } else if (t->kind == TY_STRUCT) { /* T(...) of a struct: its constructor */
    n->name = t->sdecl->name;
  } else { /* T(...) of a builtin type: a cast or a constructor */
    n->texpr = builtin_texpr(c, t, n->name_loc);
  }
}

static Node *clone_one(Check *c, const Node *n, const CkSubst *s) {
  Node *m = ck_alloc(c, sizeof *m);
  *m = *n;
  m->next = NULL;
  m->lhs = ck_clone_stmt(c, n->lhs, s);
  m->rhs = ck_clone_stmt(c, n->rhs, s);
  m->cond = ck_clone_stmt(c, n->cond, s);
  m->then = ck_clone_stmt(c, n->then, s);
  m->init = ck_clone_stmt(c, n->init, s);
  m->inc = ck_clone_stmt(c, n->inc, s);
  m->body = clone_list(c, n->body, s);
  m->args = clone_list(c, n->args, s);
  m->tshape = clone_list(c, n->tshape, s);
  m->texpr = ck_clone_texpr(c, n->texpr, s);
  m->targ = ck_clone_texpr(c, n->targ, s);
  if (n->ntargs) {
    m->targs = ck_alloc(c, (size_t)n->ntargs * sizeof *m->targs);
    for (int i = 0; i < n->ntargs; i++) m->targs[i] = ck_clone_texpr(c, n->targs[i], s);
  }
  if (n->kind == ND_VARDECL) m->var = ck_clone_var(c, n->var, s);
  if (n->kind == ND_IDENT || n->kind == ND_CALL) subst_name(c, m, s);
  m->els = NULL;
  return m;
}

Node *ck_clone_stmt(Check *c, const Node *n, const CkSubst *s) {
  if (!n) return NULL;
  Node *first = clone_one(c, n, s), *m = first;
  /* an else-if chain is a loop, not nesting */
  for (; n->kind == ND_IF && n->els && n->els->kind == ND_IF; n = n->els, m = m->els)
    m->els = clone_one(c, n->els, s);
  m->els = ck_clone_stmt(c, n->els, s);
  return first;
}
