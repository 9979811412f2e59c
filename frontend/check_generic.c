/* check_generic.c: generic functions, `static if`, `static for` and the
 * compile-time type queries (sizeof, is_same, is_float, is_int).
 *
 * Requires: check_clone.c (each instance and each unrolled iteration is a copy
 * of the unchecked tree), check_overload.c (an instance is one more overload
 * candidate of its call), check_decl.c (signatures and bodies). Produces: the
 * instances of generic functions as ordinary DECL_FUNCs at the end of
 * Program.funcs, and trees with no static statement and no type query left:
 * a `static if` becomes the block of its chosen branch, a `static for` a
 * block of one block per iteration, a type query its constant. Breaks: a
 * generic function itself is never checked, only its instances (as C++
 * templates): an error in one is reported at its line, with notes naming the
 * instance and the call that asked for it. Instances are made per distinct
 * list of types, once each; the body of an instance is checked after the
 * function that first called it.
 */

#include <stdio.h>
#include <string.h>

#include "check_internal.h"

enum { MAX_INST_DEPTH = 64, MAX_UNROLL = 1024 };

/* ---- declarations ----------------------------------------------------------------- */

void ck_generic_decl(Check *c, Decl *d) {
  if (d->kind == DECL_KERNEL) {
    diag_error(c->diags, d->name_loc,
               "kernel '%s' cannot be generic; call a generic function "
               "from it",
               d->name);
    d->ntparams = 0;
    return;
  }
  for (int i = 0; i < d->ntparams; i++) {
    for (int j = 0; j < i; j++)
      if (strcmp(d->tparams[i], d->tparams[j]) == 0)
        diag_error(c->diags, d->tparam_locs[i], "type variable '%s' of '%s' is repeated",
                   d->tparams[i], d->name);
    Sym *s = ck_global(c, d->tparams[i]);
    if (s && (s->decl->kind == DECL_STRUCT || s->decl->kind == DECL_ENUM)) {
      diag_error(c->diags, d->tparam_locs[i], "type variable '%s' of '%s' has the name of a type",
                 d->tparams[i], d->name);
      diag_note(c->diags, s->decl->name_loc, "'%s' is declared here", d->tparams[i]);
    }
  }
}

bool ck_is_generic(Check *c, const char *name) {
  Sym *s = ck_global(c, name);
  return s && s->decl->kind == DECL_FUNC && s->ngens > 0;
}

/* ---- notes: which instance a diagnostic was found in ------------------------------ */

static void inst_notes(void *ud) {
  Check *c = ud;
  for (Decl *d = c->inst; d; d = d->inst_parent)
    diag_note(c->diags, d->inst_loc, "in instantiation of '%s' requested here", d->inst_name);
}

static Decl *set_inst(Check *c, Decl *inst) {
  Decl *old = c->inst;
  c->inst = inst;
  c->diags->context = inst ? inst_notes : NULL;
  c->diags->context_ud = c;
  return old;
}

void ck_check_fn(Check *c, Decl *d) {
  Decl *old = set_inst(c, d->generic ? d : NULL);
  ck_check_body(c, d);
  set_inst(c, old);
}

/* ---- inference ---------------------------------------------------------------------- */

/* Types a type variable may stand for: values (not arrays, tiles, void). */
static bool bindable(const Type *t) {
  return t && (type_is_scalar(t) || ck_is_vmq(t) || t->kind == TY_STRUCT);
}

static int tparam_index(const Decl *g, const char *name) {
  for (int i = 0; name && i < g->ntparams; i++)
    if (strcmp(g->tparams[i], name) == 0) return i;
  return -1;
}

typedef struct Infer {
  Type **bind;
  int *from;       /* the argument (1-based) that fixed each, 0: explicit */
  Type **untyped;  /* an untyped constant's default, where no typed argument fixed it */
  const char *why; /* why it failed */
  SrcLoc where;
} Infer;

/* The parameter's type as written with its type variable, for messages. */
static const char *vecn_spelling(Check *c, const TypeExpr *te) {
  if (te->vecn_kind == 'q') return arena_printf(c->arena, "quat<%s>", te->vecn_elem);
  if (te->vecn_kind == 'm')
    return arena_printf(c->arena, "mat<%s, %d, %d>", te->vecn_elem, te->vecn_rows, te->vecn_cols);
  return arena_printf(c->arena, "vec<%s, %d>", te->vecn_elem, te->vecn_rows);
}

/* An argument of type *got for a vec<T, N>, mat<T, M, N> or quat<T> parameter:
 * its element is what it says about T. */
static bool vecn_arg(Check *c, const TypeExpr *te, int arg, Type **got, Infer *in, SrcLoc at) {
  Type *t = *got;
  bool shaped = t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT;
  if (shaped && type_equal(ck_vecn_of(te, t->elem), t)) {
    *got = t->elem;
    return true;
  }
  in->why =
      arena_printf(c->arena, "argument %d is %s, not a %s", arg, ck_tname(t), vecn_spelling(c, te));
  in->where = at;
  return false;
}

/* What argument `a` (type t) says about parameter p's type variable. */
static bool infer_arg(Check *c, Decl *g, Var *p, int arg, Type *t, Infer *in, SrcLoc at) {
  TypeExpr *te = p->texpr;
  const char *tv = te && !te->builtin ? (te->vecn_elem ? te->vecn_elem : te->name) : NULL;
  int v = tparam_index(g, tv);
  if (v < 0 || ck_is_err(t)) return true;
  Type *got = t;
  if (te->ndim || te->nfixed) { /* T[], T[,] ...; T name[n]: the element */
    bool ok = te->ndim ? t->kind == TY_ARRAY && t->ndim == te->ndim
                       : t->kind == TY_FIXED && t->ndim == te->nfixed;
    if (!ok) {
      in->why = arena_printf(c->arena, "argument %d is %s, not an array of %d dimension%s", arg,
                             ck_tname(t), te->ndim ? te->ndim : te->nfixed,
                             (te->ndim ? te->ndim : te->nfixed) == 1 ? "" : "s");
      in->where = at;
      return false;
    }
    got = t->elem;
  }
  if (te->vecn_elem && !vecn_arg(c, te, arg, &got, in, at)) return false;
  if (ck_is_untyped(got)) {
    /* an untyped float outranks an untyped int: f(1, 2.5) is float32 */
    if (!in->untyped[v] || got->kind == TY_UNTYPED_FLOAT)
      in->untyped[v] = got->kind == TY_UNTYPED_FLOAT ? &ty_f32 : &ty_i32;
    return true;
  }
  if (!bindable(got)) {
    in->why = arena_printf(c->arena, "type variable '%s' cannot stand for %s (argument %d)",
                           g->tparams[v], ck_tname(got), arg);
    in->where = at;
    return false;
  }
  if (!in->bind[v]) {
    in->bind[v] = got;
    in->from[v] = arg;
  } else if (!type_equal(in->bind[v], got)) {
    /* a vector's element type: say which vector it is of */
    const char *of = te->vecn_elem ? arena_printf(c->arena, ", of a %s", ck_tname(t)) : "";
    if (in->from[v])
      in->why = arena_printf(c->arena,
                             "conflicting types for type variable '%s' of '%s': %s (argument "
                             "%d) and %s (argument %d%s)",
                             g->tparams[v], g->name, ck_tname(in->bind[v]), in->from[v],
                             ck_tname(got), arg, of);
    else
      in->why = arena_printf(c->arena,
                             "argument %d is %s%s, but type variable '%s' of '%s' is %s as given",
                             arg, ck_tname(got), of, g->tparams[v], g->name, ck_tname(in->bind[v]));
    in->where = at;
    return false;
  }
  return true;
}

static bool infer(Check *c, Decl *g, Node *n, Type **targs, const Val *vals, int na, Infer *in) {
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  if (n->ntargs > g->ntparams) {
    in->why = arena_printf(c->arena, "'%s' has %d type variable%s, but %d type%s given", g->name,
                           g->ntparams, g->ntparams == 1 ? "" : "s", n->ntargs,
                           n->ntargs == 1 ? " is" : "s are");
    in->where = at;
    return false;
  }
  for (int i = 0; i < n->ntargs; i++) in->bind[i] = targs[i];
  Node *a = n->args;
  for (int j = 0; j < na; j++, a = a ? a->next : NULL)
    if (!infer_arg(c, g, g->params[j], j + 1, vals[j].ty, in, a ? a->loc : at)) return false;
  for (int i = 0; i < g->ntparams; i++) {
    if (!in->bind[i]) in->bind[i] = in->untyped[i];
    if (in->bind[i]) continue;
    in->why = arena_printf(c->arena,
                           "cannot infer type variable '%s' of '%s' from the arguments; give it "
                           "explicitly: %s<...>(...)",
                           g->tparams[i], g->name, g->name);
    in->where = at;
    return false;
  }
  return true;
}

/* ---- instances ---------------------------------------------------------------------- */

static const char *inst_name(Check *c, Decl *g, Type **bind) {
  const char *s = arena_printf(c->arena, "%s<", g->name);
  for (int i = 0; i < g->ntparams; i++)
    s = arena_printf(c->arena, "%s%s%s", s, i ? ", " : "", ck_tname(bind[i]));
  return arena_printf(c->arena, "%s>", s);
}

static Decl *find_instance(Check *c, Decl *g, Type **bind) {
  Info *gi = ck_info(c, g);
  for (int k = 0; k < gi->ninsts; k++) {
    Decl *d = gi->insts[k];
    bool same = true;
    for (int i = 0; i < g->ntparams && same; i++) same = type_equal(d->tbind[i], bind[i]);
    if (same) return d;
  }
  return NULL;
}

/* The instance of g for bind: made (a copy, its signature checked) on first use. */
static Decl *instance(Check *c, Decl *g, Type **bind, SrcLoc at) {
  Decl *d = find_instance(c, g, bind);
  if (d) return d;
  Decl *parent = c->fn && c->fn->generic ? c->fn : NULL;
  int depth = parent ? parent->inst_depth + 1 : 1;
  const char *name = inst_name(c, g, bind);
  if (depth > MAX_INST_DEPTH) {
    diag_error(c->diags, at, "instantiation of '%s' is nested more than %d deep", name,
               MAX_INST_DEPTH);
    return NULL;
  }
  CkSubst s = {g->tparams, bind, g->ntparams};
  d = ck_alloc(c, sizeof *d);
  *d = *g;
  d->next = NULL;
  d->tparams = NULL;
  d->tparam_locs = NULL;
  d->ntparams = 0;
  d->generic = g;
  d->tbind = ck_alloc(c, (size_t)g->ntparams * sizeof *d->tbind);
  memcpy(d->tbind, bind, (size_t)g->ntparams * sizeof *bind);
  d->inst_name = name;
  d->inst_loc = at;
  d->inst_parent = parent;
  d->inst_depth = depth;
  d->texpr = ck_clone_texpr(c, g->texpr, &s);
  d->params = ck_alloc(c, (size_t)(g->nparams + 1) * sizeof *d->params);
  for (int i = 0; i < g->nparams; i++) d->params[i] = ck_clone_var(c, g->params[i], &s);
  d->body = ck_clone_stmt(c, g->body, &s);
  Info *gi = ck_info(c, g);
  gi->insts = ck_grow(c, gi->insts, gi->ninsts, &gi->capinsts, sizeof *gi->insts);
  gi->insts[gi->ninsts++] = d;
  Decl *old = set_inst(c, d);
  ck_signature(c, d);
  set_inst(c, old);
  return d;
}

void ck_instance_use(Check *c, Decl *inst) {
  Info *in = ck_info(c, inst);
  if (in->listed) return;
  in->listed = true;
  Sym *s = ck_global(c, inst->name);
  inst->overload = s->nfns + s->ninsts++; /* after the plain overloads: C names differ */
  Lists *L = c->lists;
  L->funcs = ck_grow(c, L->funcs, L->nfuncs, &L->cfuncs, sizeof *L->funcs);
  L->funcs[L->nfuncs++] = inst;
}

/* The explicit type arguments of n, resolved; NULL when one is wrong (reported). */
static Type **explicit_types(Check *c, Node *n) {
  Type **ts = ck_alloc(c, (size_t)(n->ntargs + 1) * sizeof *ts);
  bool ok = true;
  for (int i = 0; i < n->ntargs; i++) {
    ts[i] = ck_resolve_type(c, n->targs[i], "a type argument");
    if (!ts[i]) {
      diag_error(c->diags, n->targs[i]->loc, "a type argument cannot be auto");
      ts[i] = &ty_error;
    }
    if (ck_is_err(ts[i])) {
      ok = false;
    } else if (!bindable(ts[i])) {
      diag_error(c->diags, n->targs[i]->loc, "a type variable cannot stand for %s",
                 ck_tname(ts[i]));
      ok = false;
    }
  }
  return ok ? ts : NULL;
}

int ck_generic_cands(Check *c, Sym *s, Node *n, const Val *vals, int na, Cand **cs, int nc) {
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  int ngens = s && s->decl->kind == DECL_FUNC ? s->ngens : 0;
  Type **targs = n->ntargs ? explicit_types(c, n) : NULL;
  if (n->ntargs && !targs) return -1;
  if (n->ntargs) nc = 0; /* f<T>(...) names a generic function */
  Cand *out = ck_alloc(c, (size_t)(nc + ngens + 1) * sizeof *out);
  memcpy(out, *cs, (size_t)nc * sizeof *out);
  Infer failed = {0};
  Decl *failed_gen = NULL;
  int arity = 0;
  for (int i = 0; i < nc; i++) arity += out[i].nparams == na;
  for (int i = 0; i < ngens; i++) {
    Decl *g = s->gens[i];
    if (g->nparams != na) continue;
    int k = g->ntparams + 1;
    Infer in = {ck_alloc(c, (size_t)k * sizeof(Type *)), ck_alloc(c, (size_t)k * sizeof(int)),
                ck_alloc(c, (size_t)k * sizeof(Type *)), NULL, at};
    if (!infer(c, g, n, targs, vals, na, &in)) {
      if (!failed_gen) failed = in, failed_gen = g;
      continue;
    }
    Decl *d = instance(c, g, in.bind, at);
    if (!d) return -1;
    out[nc++] = (Cand){d, -1, d->nparams, ck_param_types(c, d), d->ret ? d->ret : &ty_error};
    arity++;
  }
  if (ngens && !failed_gen && arity == 0) {
    diag_error(c->diags, at, "no overload of '%s' takes %d argument%s", n->name, na,
               na == 1 ? "" : "s");
    for (int i = 0; i < ngens; i++)
      diag_note(c->diags, s->gens[i]->name_loc, "candidate: generic '%s' with %d parameter%s",
                n->name, s->gens[i]->nparams, s->gens[i]->nparams == 1 ? "" : "s");
    return -1;
  }
  if (failed_gen && arity == 0) {
    diag_error(c->diags, failed.where, "%s", failed.why);
    diag_note(c->diags, failed_gen->name_loc, "'%s' is declared here", failed_gen->name);
    return -1;
  }
  *cs = out;
  return nc;
}

/* ---- static if ------------------------------------------------------------------------ */

/* The value of a static statement's condition: -1 when it is not a constant
 * bool (reported), else 0 or 1. */
static int static_cond(Check *c, Node *cond, const char *what) {
  int errors = diag_errors(c->diags);
  Val v = ck_expect_bool(c, cond, what);
  if (ck_is_err(v.ty)) return -1;
  if (!v.is_const) {
    if (diag_errors(c->diags) != errors) return -1;
    diag_error(c->diags, cond->loc, "%s must be a constant expression", what);
    diag_note(c->diags, cond->loc,
              "it is decided while compiling: use constants, sizeof, is_same, is_float, is_int and "
              "the variables of 'static for'");
    return -1;
  }
  return v.i != 0;
}

/* n (keeping its place in its list) becomes the block of `body`. */
static void become_block(Node *n, Node *body) {
  Node *next = n->next;
  SrcLoc loc = n->loc;
  memset(n, 0, sizeof *n);
  n->kind = ND_BLOCK;
  n->loc = loc;
  n->next = next;
  n->body = body;
}

void ck_static_if(Check *c, Node *n) {
  Node *chosen = NULL;
  for (Node *i = n; i; i = i->els) {
    int v = static_cond(c, i->cond, "the condition of 'static if'");
    if (v < 0) break; /* neither branch is checked */
    if (v) {
      chosen = i->then;
      break;
    }
    if (!i->els || i->els->kind != ND_IF) {
      chosen = i->els;
      break;
    }
  }
  if (chosen) chosen->next = NULL;
  become_block(n, chosen);
  ck_stmt(c, n);
}

/* ---- static for ------------------------------------------------------------------------- */

/* The value of a clone of e, with the loop variable bound: a constant of type t. */
static bool static_value(Check *c, Node *e, Type *t, const char *what, Val *out) {
  int errors = diag_errors(c->diags);
  Val v = ck_expect(c, e, t, (Ctx){what, NULL, 0});
  if (ck_is_err(v.ty)) return false;
  if (!v.is_const) {
    if (diag_errors(c->diags) == errors)
      diag_error(c->diags, e->loc, "%s must be a constant expression", what);
    return false;
  }
  *out = v;
  return true;
}

/* The loop variable's next value, from a clone of the step. */
static bool static_step(Check *c, Node *inc, Var *k, Val *cur) {
  const char *what = "the step of 'static for'";
  Node *lhs = inc ? (inc->kind == ND_INCDEC || inc->kind == ND_ASSIGN ? inc->lhs : NULL) : NULL;
  if (!lhs || lhs->kind != ND_IDENT || strcmp(lhs->name, k->name) != 0) {
    diag_error(c->diags, inc ? inc->loc : k->loc,
               "%s must change '%s': '%s++', '%s--', '%s += N', '%s = ...'", what, k->name, k->name,
               k->name, k->name, k->name);
    return false;
  }
  Val step = {.ty = k->ty, .is_const = true, .i = 1};
  int op = inc->kind == ND_INCDEC ? (inc->op == TK_INC ? TK_PLUS : TK_MINUS)
           : inc->op == TK_ASSIGN ? TK_ASSIGN
                                  : (int)tok_compound_op(inc->op);
  if (inc->kind == ND_ASSIGN && !static_value(c, inc->rhs, k->ty, what, &step)) return false;
  if (op == TK_ASSIGN) {
    *cur = step;
    return true;
  }
  return ck_fold_binary(c, inc->loc, op, cur, &step);
}

/* The loop variable: an integer, its start a constant. */
static Var *static_var(Check *c, Node *n, Val *start) {
  Node *init = n->init;
  if (!init || init->kind != ND_VARDECL || !n->cond) {
    diag_error(c->diags, n->loc,
               "'static for' declares its variable and has a condition: 'static for (int k = 0; "
               "k < N; k++)'");
    return NULL;
  }
  Var *k = init->var;
  Type *t = ck_resolve_type(c, k->texpr, "a local variable");
  if (!t) t = &ty_i32;
  if (ck_is_err(t)) return NULL;
  if (!type_is_int(t) || k->texpr->nfixed) {
    diag_error(c->diags, k->texpr->loc, "the variable of 'static for' must be an integer, not %s",
               ck_tname(t));
    return NULL;
  }
  k->ty = t;
  k->is_const = true;
  return static_value(c, k->init, t, "the start of 'static for'", start) ? k : NULL;
}

void ck_static_for(Check *c, Node *n) {
  Val cur;
  ck_scope_open(c);
  Var *k = static_var(c, n, &cur);
  Node head = {0}, *tail = &head;
  for (int iter = 0; k; iter++) {
    Var *kv = ck_clone_var(c, k, NULL);
    kv->ty = k->ty;
    Val *slot = ck_alloc(c, sizeof *slot);
    *slot = cur;
    ck_map_put(c, &c->statics, kv, slot);
    ck_scope_open(c);
    ck_declare(c, kv);
    int go = static_cond(c, ck_clone_stmt(c, n->cond, NULL), "the condition of 'static for'");
    if (go > 0 && iter == MAX_UNROLL) {
      diag_error(c->diags, n->loc, "'static for' unrolls more than %d times", MAX_UNROLL);
      go = -1;
    }
    if (go > 0) {
      int errors = diag_errors(c->diags), at = c->unroll_at;
      Node *blk = ck_alloc(c, sizeof *blk);
      become_block(blk, ck_clone_stmt(c, n->body, NULL));
      blk->loc = n->body->loc;
      c->unroll_at = c->loops;
      ck_stmt(c, blk);
      c->unroll_at = at;
      tail = tail->next = blk;
      /* one report of an error, not one per iteration */
      if (diag_errors(c->diags) != errors ||
          !static_step(c, ck_clone_stmt(c, n->inc, NULL), kv, &cur))
        go = -1;
    }
    ck_scope_close(c);
    if (go <= 0) break;
  }
  ck_scope_close(c);
  become_block(n, head.next);
}

bool ck_static_ident(Check *c, Node *n, Var *v, Val *out) {
  Val *val = ck_map_get(&c->statics, v);
  if (!val) return false;
  *out = *val;
  ck_set_const(n, *val);
  return true;
}

/* ---- type queries ---------------------------------------------------------------------- */

/* A query's argument: a type (builtin, struct, enum, type variable) or a value. */
static Type *query_arg(Check *c, Node *a, const char *fname) {
  if (a->kind == ND_IDENT && a->ntargs) return ck_resolve_type(c, a->targs[0], "a type query");
  if (a->kind == ND_IDENT && !ck_map_get(&c->locals, a->name)) {
    Sym *s = ck_global(c, a->name);
    if (s && (s->decl->kind == DECL_STRUCT || s->decl->kind == DECL_ENUM))
      return s->decl->kind == DECL_ENUM ? &ty_i32 : s->decl->sty;
  }
  int errors = diag_errors(c->diags);
  Type *t = ck_rvalue(c, a).ty;
  if (ck_is_err(t) || (t->kind != TY_ARRAY && t->kind != TY_TILE && t->kind != TY_STRING)) return t;
  if (diag_errors(c->diags) == errors)
    diag_error(c->diags, a->loc, "'%s' takes a type or a value, not %s", fname, ck_tname(t));
  return &ty_error;
}

Val ck_type_query(Check *c, Node *n, SpecialKind sp) {
  const char *name = n->name;
  int want = sp == SP_IS_SAME ? 2 : 1, na = ck_count_list(n->args);
  if (na != want) {
    diag_error(c->diags, n->loc, "'%s' takes %d argument%s, got %d", name, want,
               want == 1 ? "" : "s", na);
    return ck_val_err();
  }
  Type *t = query_arg(c, n->args, name);
  Type *u = want == 2 ? query_arg(c, n->args->next, name) : NULL;
  if (ck_is_err(t) || (u && ck_is_err(u))) return ck_val_err();
  Val v = {.ty = &ty_bool, .is_const = true};
  switch (sp) {
    case SP_SIZEOF: v = (Val){.ty = &ty_untyped_int, .is_const = true, .i = t->size}; break;
    case SP_IS_SAME: v.i = type_equal(t, u); break;
    case SP_IS_FLOAT: v.i = type_is_float(t); break;
    default: v.i = type_is_int(t); break;
  }
  ck_set_const(n, v);
  return v;
}
