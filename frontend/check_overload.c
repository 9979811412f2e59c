/* check_overload.c: implicit conversions and overload resolution.
 *
 * Requires: check_const.c (constants converted in place), check_expr.c.
 * Produces: ck_convert and the expect helpers every context uses, and the
 * candidates, costs and choice of an overloaded call (ck_candidates,
 * ck_resolve, ck_apply_cand). Breaks: conversions rewrite the tree in place
 * (ND_CONV nodes, refolded constants); the cost model is check.c's overview's.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- implicit conversions ------------------------------------------------- */

static int log2i(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    r++;
  }
  return r;
}

/* Widening within a family: signed, unsigned or float, to a larger size. */
bool ck_widens(const Type *from, const Type *to) {
  if (!type_is_numeric(from) || !type_is_numeric(to) || to->size <= from->size) return false;
  if (type_is_float(from) || type_is_float(to)) return type_is_float(from) && type_is_float(to);
  return type_is_signed(from) == type_is_signed(to);
}

/* The cost of passing v where t is expected, for overload resolution; -1
 * when it does not convert implicitly. An integer constant prefers int32,
 * then any integer type it fits, then float32; a float constant prefers
 * float32 (bfloat16 comes last of the floats); a widening costs more the further it widens. */
static int conv_cost(const Val *v, Type *t) {
  Type *f = v->ty;
  int bf = t->kind == TY_BF16; /* after float16, so adding it broke no call */
  if (ck_is_err(f) || ck_is_err(t) || type_equal(f, t)) return 0;
  if (f->kind == TY_UNTYPED_INT) {
    if (type_is_int(t)) return ck_int_fits(v->i, t) ? (t->kind == TY_I32 ? 1 : 2) : -1;
    if (type_is_float(t)) return t->kind == TY_F32 ? 3 : t->kind == TY_F64 ? 4 : 5 + bf;
    return -1;
  }
  if (f->kind == TY_UNTYPED_FLOAT) {
    if (type_is_float(t)) return t->kind == TY_F32 ? 1 : t->kind == TY_F64 ? 2 : 3 + bf;
    if (type_is_int(t)) return ck_float_integral(v->f) && ck_int_fits((i128)v->f, t) ? 5 : -1;
    return -1;
  }
  if (ck_widens(f, t)) return 2 + log2i(t->size / f->size);
  return -1;
}

static void suggest_cast(Check *c, SrcLoc loc, const Type *from, const Type *to) {
  if (type_is_scalar(from) && type_is_scalar(to))
    diag_note(c->diags, loc, "convert explicitly with a cast: %s(...)", ck_tname(to));
  else if (from->kind == TY_VEC && to->kind == TY_VEC && from->n == to->n)
    diag_note(c->diags, loc, "convert explicitly with a cast: %s(...)", ck_tname(to));
  else if (to->kind == TY_PTR && type_equal(to->elem, from))
    diag_note(c->diags, loc, "the call writes its result there: pass &v of a local variable v");
}

/* Converts n (whose value is *v) implicitly to t, in place: an untyped
 * constant takes the type (range-checked), a typed constant is refolded, any
 * other widening gets an ND_CONV. Reports and returns false otherwise. */
bool ck_convert(Check *c, Node *n, Val *v, Type *t, Ctx x) {
  if (ck_is_err(v->ty) || ck_is_err(t) || type_equal(v->ty, t)) return true;
  bool untyped = ck_is_untyped(v->ty);
  if (untyped && type_is_numeric(t)) {
    if (!ck_const_convert(c, n->loc, v, t)) {
      *v = ck_val_err();
      n->ty = &ty_error;
      return false;
    }
    ck_set_const(n, *v);
    return true;
  }
  if (ck_widens(v->ty, t)) {
    if (v->is_const && ck_const_convert(c, n->loc, v, t))
      ck_set_const(n, *v);
    else
      ck_wrap_conv(c, n, t);
    v->ty = t;
    return true;
  }
  if (untyped)
    diag_error(c->diags, n->loc, "cannot use constant %s as %s in %s", ck_val_text(c, v),
               ck_tname(t), ck_ctx_text(c, x));
  else
    diag_error(c->diags, n->loc, "cannot convert %s to %s in %s", ck_tname(v->ty), ck_tname(t),
               ck_ctx_text(c, x));
  suggest_cast(c, n->loc, v->ty, t);
  *v = ck_val_err();
  return false;
}

/* Gives an untyped constant its default type: int32 or float32. */
void ck_default_type(Check *c, Node *n, Val *v) {
  if (!ck_is_untyped(v->ty)) return;
  Type *t = v->ty->kind == TY_UNTYPED_INT ? &ty_i32 : &ty_f32;
  ck_convert(c, n, v, t, (Ctx){"this expression", NULL, 0});
}

/* expr() then default_type(): for places with no expected type. */
Val ck_rvalue(Check *c, Node *n) {
  Val v = ck_expr(c, n);
  ck_default_type(c, n, &v);
  return v;
}

Val ck_expect(Check *c, Node *n, Type *t, Ctx x) {
  Val v = ck_expr(c, n);
  ck_convert(c, n, &v, t, x);
  return v;
}

/* Conditions of if/while/for/?:, and operands of ! && ||. */
Val ck_expect_bool(Check *c, Node *n, const char *what) {
  Val v = ck_expr(c, n);
  if (ck_is_err(v.ty) || v.ty->kind == TY_BOOL) return v;
  diag_error(c->diags, n->loc, "%s must be bool, not %s", what, ck_tname(v.ty));
  if (ck_is_numlike(v.ty))
    diag_note(c->diags, n->loc, "bool is not an integer: compare explicitly, e.g. 'x != 0'");
  return ck_val_err();
}

/* ---- overload resolution ------------------------------------------------------- */

Type **ck_param_types(Check *c, Decl *d) {
  Type **ts = ck_alloc(c, (size_t)(d->nparams + 1) * sizeof *ts);
  for (int i = 0; i < d->nparams; i++) ts[i] = d->params[i]->ty ? d->params[i]->ty : &ty_error;
  return ts;
}

/* User overloads of name (declaration order), then builtin ones. */
int ck_candidates(Check *c, const char *name, Cand **out) {
  Sym *s = ck_global(c, name);
  int nu = s && s->decl->kind == DECL_FUNC ? s->nfns : 0;
  int first = 0, nb = builtin_overloads(name, &first);
  Cand *cs = ck_alloc(c, (size_t)(nu + nb + 1) * sizeof *cs);
  for (int i = 0; i < nu; i++) {
    Decl *d = s->fns[i];
    cs[i] = (Cand){d, -1, d->nparams, ck_param_types(c, d), d->ret ? d->ret : &ty_error};
  }
  for (int j = 0; j < nb; j++) {
    const Builtin *b = builtin_get(first + j);
    cs[nu + j] = (Cand){NULL, first + j, b->nparams, b->params, b->ret};
  }
  *out = cs;
  return nu + nb;
}

static int cand_cost(const Cand *k, const Val *vals, int nargs) {
  if (k->nparams != nargs) return -1;
  int total = 0;
  for (int j = 0; j < nargs; j++) {
    /* a reference refers to a variable of its own type: nothing converts */
    bool ref = k->fn && k->fn->params[j]->is_ref;
    int cost = ref ? (type_equal(vals[j].ty, k->params[j]) || ck_is_err(vals[j].ty) ? 0 : -1)
                   : conv_cost(&vals[j], k->params[j]);
    if (cost < 0) return -1;
    total += cost;
  }
  /* at equal cost a plain function beats an instance of a generic one */
  return total * 2 + (k->fn && k->fn->generic);
}

static void cand_note(Check *c, const char *name, const Cand *k) {
  if (k->fn && k->fn->generic) name = k->fn->inst_name;
  const char *sig = ck_sig_text(c, name, k->params, k->nparams);
  if (k->fn) { /* "f(float32 &, int32)": a reference shows its '&' */
    Type **ts = ck_alloc(c, (size_t)(k->nparams + 1) * sizeof *ts);
    for (int i = 0; i < k->nparams; i++) {
      ts[i] = k->params[i];
      if (k->fn->params[i]->is_ref) {
        ts[i] = ck_alloc(c, sizeof *ts[i]);
        *ts[i] = *k->params[i];
        ts[i]->name = arena_printf(c->arena, "%s &", ck_tname(k->params[i]));
      }
    }
    sig = ck_sig_text(c, name, ts, k->nparams);
  }
  if (k->fn)
    diag_note(c->diags, k->fn->name_loc, "candidate: %s", sig);
  else
    diag_note(c->diags, (SrcLoc){0}, "candidate: %s (builtin)", sig);
}

static void cand_notes(Check *c, const char *name, const Cand *cs, int nc, int only_cost,
                       const Val *vals, int nargs) {
  int shown = 0, more = 0;
  for (int i = 0; i < nc; i++) {
    if (only_cost >= 0 && cand_cost(&cs[i], vals, nargs) != only_cost) continue;
    if (shown < MAX_CAND_NOTES) {
      cand_note(c, name, &cs[i]);
      shown++;
    } else {
      more++;
    }
  }
  if (more) diag_note(c->diags, (SrcLoc){0}, "and %d more candidate%s", more, more == 1 ? "" : "s");
}

void ck_report_no_match(Check *c, const char *name, const char *opsym, SrcLoc loc, const Cand *cs,
                        int nc, const Val *vals, int nargs) {
  if (!name) name = "?";
  Type **ts = ck_alloc(c, (size_t)(nargs + 1) * sizeof *ts);
  for (int i = 0; i < nargs; i++) ts[i] = vals[i].ty;
  if (opsym) {
    if (nargs == 2)
      diag_error(c->diags, loc, "invalid operands to '%s': %s and %s", opsym, ck_tname(ts[0]),
                 ck_tname(ts[1]));
    else
      diag_error(c->diags, loc, "invalid operand to unary '%s': %s", opsym, ck_tname(ts[0]));
    return;
  }
  int arity = -1;
  bool one_arity = true, any = false;
  for (int i = 0; i < nc; i++) {
    any |= cs[i].nparams == nargs;
    one_arity &= arity < 0 || cs[i].nparams == arity;
    arity = cs[i].nparams;
  }
  if (nc > 0 && !any && one_arity) {
    diag_error(c->diags, loc, "'%s' expects %d argument%s, got %d", name, arity,
               arity == 1 ? "" : "s", nargs);
    if (nc == 1) cand_note(c, name, &cs[0]);
    return;
  }
  if (!any)
    diag_error(c->diags, loc, "no overload of '%s' takes %d argument%s", name, nargs,
               nargs == 1 ? "" : "s");
  else
    diag_error(c->diags, loc, "no matching overload for call to %s",
               ck_sig_text(c, name, ts, nargs));
  cand_notes(c, name, cs, nc, -1, vals, nargs);
}

/* Picks the single cheapest viable candidate; reports and returns -1 when
 * there is none or several. Arguments of error type stay silent. */
int ck_resolve(Check *c, const char *name, const char *opsym, SrcLoc loc, const Cand *cs, int nc,
               const Val *vals, int nargs) {
  bool any_err = false;
  for (int j = 0; j < nargs; j++) any_err |= ck_is_err(vals[j].ty);
  int best = -1, best_cost = INT_MAX, ties = 0, narity = 0, arity_idx = -1;
  for (int i = 0; i < nc; i++) {
    if (cs[i].nparams == nargs) {
      narity++;
      arity_idx = i;
    }
    int cost = cand_cost(&cs[i], vals, nargs);
    if (cost < 0) continue;
    if (cost < best_cost) {
      best = i;
      best_cost = cost;
      ties = 1;
    } else if (cost == best_cost) {
      ties++;
    }
  }
  if (best >= 0 && ties == 1) return best;
  /* One candidate of the right arity: its argument conversions say best
   * what is wrong ("constant 200 overflows int8"). */
  if ((any_err || best < 0) && narity == 1 && !opsym) return arity_idx;
  if (any_err) return -1;
  if (best >= 0) {
    if (opsym)
      diag_error(c->diags, loc, "ambiguous operands to '%s'", opsym);
    else
      diag_error(c->diags, loc, "ambiguous call to '%s'", name);
    cand_notes(c, name, cs, nc, best_cost, vals, nargs);
    return -1;
  }
  ck_report_no_match(c, name, opsym, loc, cs, nc, vals, nargs);
  return -1;
}

static void record_call(Check *c, Decl *callee, SrcLoc loc) {
  Info *in = c->fninfo;
  if (!in) return;
  in->edges = ck_grow(c, in->edges, in->nedges, &in->cap, sizeof *in->edges);
  in->edges[in->nedges++] = (Edge){callee, loc};
}

/* A const array passed on as a writable parameter would lose its const. */
static void check_const_arg(Check *c, Node *arg, Var *param, const char *fname) {
  Var *v = arg->kind == ND_IDENT ? arg->var : NULL;
  if (v && v->is_const && v->ty && (v->ty->kind == TY_ARRAY || v->ty->kind == TY_FIXED) &&
      !param->is_const) {
    diag_error(c->diags, arg->loc,
               "const array '%s' passed to parameter '%s' of '%s', which is not const", v->name,
               param->name, fname);
    diag_note(c->diags, param->loc, "declare the parameter 'const %s' if '%s' does not write to it",
              ck_tname(param->ty), fname);
  }
}

/* What n is when a reference cannot refer to it ("const 'c'", "a value that
 * is not a variable" ...), or NULL when it can: a variable that is not
 * const, an element of an array that is not const, a field or a component
 * of one. Tile elements are read-only. */
static const char *unreferable(Check *c, const Node *n) {
  switch (n->kind) {
    case ND_IDENT:
      if (n->cdecl) return arena_printf(c->arena, "constant '%s'", n->name);
      if (!n->var) break;
      return n->var->is_const ? arena_printf(c->arena, "const '%s'", n->name) : NULL;
    case ND_INDEX:
      if (n->lhs->ty && n->lhs->ty->kind == TY_TILE) return "an element of a tile (read-only)";
      if (n->lhs->ty && (n->lhs->ty->kind == TY_ARRAY || n->lhs->ty->kind == TY_FIXED)) {
        const Var *v = n->lhs->kind == ND_IDENT ? n->lhs->var : NULL;
        return v && v->is_const ? arena_printf(c->arena, "an element of const array '%s'", v->name)
                                : NULL;
      }
      return unreferable(c, n->lhs);
    case ND_MEMBER: return unreferable(c, n->lhs);
    default: break;
  }
  return n->is_const ? "a constant" : "a value that is not a variable";
}

static void ref_note(Check *c, const Var *p) {
  diag_note(c->diags, p->ref_loc, "'%s' is declared here as '%s &%s'", p->name, ck_tname(p->ty),
            p->name);
}

/* The argument of reference parameter p: an lvalue of p's type exactly,
 * which becomes &arg (an ND_ADDR of TY_PTR). */
static void ref_arg(Check *c, Node *arg, const Val *v, Var *p, const char *fname) {
  if (ck_is_err(v->ty) || ck_is_err(p->ty)) return;
  const char *what = unreferable(c, arg);
  if (what) {
    diag_error(c->diags, arg->loc, "cannot pass %s to reference parameter '%s' of '%s'", what,
               p->name, fname);
    diag_note(c->diags, arg->loc,
              "a reference needs a variable, an array element, a field or a component that is "
              "not const");
    ref_note(c, p);
    return;
  }
  if (!type_equal(v->ty, p->ty)) {
    diag_error(c->diags, arg->loc,
               "cannot pass %s to reference parameter '%s' of '%s', which is %s: a reference "
               "refers to a variable of its own type",
               ck_tname(v->ty), p->name, fname, ck_tname(p->ty));
    ref_note(c, p);
    return;
  }
  Node *inner = ck_alloc(c, sizeof *inner);
  *inner = *arg;
  inner->next = NULL;
  Node *next = arg->next;
  memset(arg, 0, sizeof *arg);
  arg->kind = ND_ADDR;
  arg->loc = inner->loc;
  arg->next = next;
  arg->lhs = inner;
  arg->ty = ck_ptr_to(c, p->ty);
}

/* Converts the arguments to the chosen candidate's parameters and marks n. */
Type *ck_apply_cand(Check *c, Node *n, const char *name, const Cand *k, Node **args, Val *vals) {
  for (int j = 0; j < k->nparams; j++) {
    if (k->fn && k->fn->params[j]->is_ref) {
      ref_arg(c, args[j], &vals[j], k->fn->params[j], name);
      continue;
    }
    ck_convert(c, args[j], &vals[j], k->params[j], (Ctx){"argument", name, j + 1});
    if (k->fn) check_const_arg(c, args[j], k->fn->params[j], name);
  }
  if (k->fn) {
    if (k->fn->generic) ck_instance_use(c, k->fn);
    n->call_kind = CALL_FUNC;
    n->fn = k->fn;
    record_call(c, k->fn, n->name_loc.file ? n->name_loc : n->loc);
  } else {
    n->call_kind = CALL_BUILTIN;
    n->builtin = k->builtin;
  }
  return k->ret;
}
