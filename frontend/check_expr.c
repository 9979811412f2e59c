/* check_expr.c: expressions: operators, names, literals, indexing, members,
 * casts, constructors, calls.
 *
 * Requires: check_overload.c (conversions, overloads), check_const.c
 * (folding), check_special.c (special forms). Produces: ck_expr, which types
 * an expression and rewrites it (folded constants, casts, constructors), and
 * ck_operate for compound assignments. Breaks: nesting deeper than MAX_NEST
 * is refused once, rather than risking the C stack.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- operators ------------------------------------------------------------------ */

static Type *op_mismatch(Check *c, SrcLoc loc, const char *opname, const Type *a, const Type *b) {
  diag_error(c->diags, loc, "mismatched types %s and %s in '%s'", ck_tname(a), ck_tname(b), opname);
  const Type *to = type_is_float(b) && !type_is_float(a) ? b : a;
  if (type_is_numeric(a) && type_is_numeric(b))
    diag_note(c->diags, loc, "convert one operand explicitly, e.g. %s(...)", ck_tname(to));
  return &ty_error;
}

/* A float constant as an integer operand: `i / 2.0` would be an integer
 * division, which no C programmer means (C divides as doubles), so it is an
 * error even when the value is integral; `i * 0.5` already is one (truncated).
 * Stored values (`int x = 2.0;`) and arguments still convert. */
static bool float_as_int_operand(Check *c, const char *opname, const Node *kn, const Val *k,
                                 const Type *t, const Node *other) {
  const Type *e = t->kind == TY_VEC && t->elem ? t->elem : t;
  if (k->ty->kind != TY_UNTYPED_FLOAT || !type_is_int(e) || !ck_float_integral(k->f)) return false;
  const char *num = arena_printf(c->arena, "%.17g", k->f);
  bool div = !strcmp(opname, "/") || !strcmp(opname, "/=");
  diag_error(c->diags, kn->loc, "float constant %s%s used as an %s operand of '%s'%s", num,
             strpbrk(num, ".e") ? "" : ".0", ck_tname(t), opname,
             div ? " (an integer division)" : "");
  const char *name = other && other->kind == ND_IDENT ? other->name : "...";
  diag_note(c->diags, kn->loc,
            "kern does not convert integers to floats implicitly: write %s(%s) to compute in "
            "floating point, or the integer constant %s",
            type_is_int(t) ? "float" : arena_printf(c->arena, "vec%d", t->n), name, num);
  return true;
}

/* Brings both operands to one type: untyped constants take the other side's
 * type, and the narrower side of a family widens. fixed: a is an assignment
 * target and must not change. Returns the common type, or ty_error. */
static Type *unify(Check *c, SrcLoc loc, const char *opname, Node *ln, Val *a, Node *rn, Val *b,
                   bool fixed) {
  Type *ta = a->ty, *tb = b->ty;
  if (ck_is_untyped(ta) && ck_is_untyped(tb)) {
    if (ta->kind != tb->kind) {
      *a = ck_as_untyped_float(*a);
      *b = ck_as_untyped_float(*b);
    }
    return a->ty;
  }
  if (type_equal(ta, tb)) return ta;
  if (float_as_int_operand(c, opname, rn, b, ta, ln) ||
      float_as_int_operand(c, opname, ln, a, tb, rn))
    return &ty_error;
  if (ck_is_untyped(tb) && type_is_numeric(ta))
    return ck_convert(c, rn, b, ta, (Ctx){"this operation", NULL, 0}) ? ta : &ty_error;
  if (ck_is_untyped(ta) && type_is_numeric(tb) && !fixed)
    return ck_convert(c, ln, a, tb, (Ctx){"this operation", NULL, 0}) ? tb : &ty_error;
  if (ck_widens(tb, ta)) {
    ck_convert(c, rn, b, ta, (Ctx){"this operation", NULL, 0});
    return ta;
  }
  if (ck_widens(ta, tb) && !fixed) {
    ck_convert(c, ln, a, tb, (Ctx){"this operation", NULL, 0});
    return tb;
  }
  return op_mismatch(c, loc, opname, ta, tb);
}

/* An operator on vectors, matrices or quats: a call of the table's "op*". */
static Type *op_call(Check *c, Node *n, const char *bname, const char *sym, Node **args, Val *vals,
                     int nargs) {
  Cand *cs;
  int nc = bname ? ck_candidates(c, bname, &cs) : 0;
  nc = ck_vecn_cands(c, bname, vals, nargs, &cs, nc);
  nc = ck_quatn_cands(c, bname, vals, nargs, &cs, nc);
  if (nc == 0) {
    ck_report_no_match(c, sym, sym, n->loc, NULL, 0, vals, nargs);
    return &ty_error;
  }
  int k = ck_resolve(c, bname, sym, n->loc, cs, nc, vals, nargs);
  if (k < 0) return &ty_error;
  Type *t = ck_apply_cand(c, n, bname, &cs[k], args, vals);
  return t;
}

static Type *shift_types(Check *c, Node *n, Node *ln, Val *a, Node *rn, Val *b) {
  if (!ck_is_intlike(a->ty) || !ck_is_intlike(b->ty)) {
    diag_error(c->diags, n->loc, "'%s' needs integer operands, not %s and %s", tok_spelling(n->op),
               ck_tname(a->ty), ck_tname(b->ty));
    return &ty_error;
  }
  if (ck_is_untyped(a->ty) && !b->is_const) ck_default_type(c, ln, a);
  if (ck_is_untyped(b->ty) && !ck_is_untyped(a->ty)) ck_default_type(c, rn, b);
  if (!a->is_const && b->is_const && !ck_is_err(b->ty) && !ck_is_err(a->ty) &&
      (b->i < 0 || b->i >= a->ty->size * 8)) {
    char buf[64];
    ck_fmt_i128(buf, sizeof buf, b->i);
    diag_warning(c->diags, rn->loc, "shift count %s is out of range for %s", buf, ck_tname(a->ty));
  }
  return ck_is_err(b->ty) ? &ty_error : a->ty;
}

static bool operand_ok(const Type *t) { return type_is_scalar(t) || ck_is_untyped(t); }

/* Checks lv op rv (also for compound assignments, where fixed is true),
 * converting operands in place; returns the result type or ty_error. */
Type *ck_operate(Check *c, Node *n, int op, Node *ln, Val *a, Node *rn, Val *b, bool fixed) {
  if ((a->ty && a->ty->kind == TY_TILE) || (b->ty && b->ty->kind == TY_TILE))
    return ck_tile_operate(c, n, op, ln, a, rn, b, fixed);
  if (ck_is_vmq(a->ty) || ck_is_vmq(b->ty)) {
    if (float_as_int_operand(c, tok_spelling(n->op), rn, b, a->ty, ln) ||
        float_as_int_operand(c, tok_spelling(n->op), ln, a, b->ty, rn))
      return &ty_error;
    Node *args[2] = {ln, rn};
    Val vals[2] = {*a, *b};
    Type *t = op_call(c, n, ck_op_builtin_name(op), tok_spelling(n->op), args, vals, 2);
    *a = vals[0];
    *b = vals[1];
    return t;
  }
  if (!operand_ok(a->ty) || !operand_ok(b->ty)) {
    diag_error(c->diags, n->loc, "invalid operands to '%s': %s and %s", tok_spelling(n->op),
               ck_tname(a->ty), ck_tname(b->ty));
    return &ty_error;
  }
  if (ck_is_shift(op)) return shift_types(c, n, ln, a, rn, b);
  Type *t = unify(c, n->loc, tok_spelling(n->op), ln, a, rn, b, fixed);
  if (ck_is_err(t)) return t;
  bool ok;
  const char *need;
  if (op == TK_PERCENT || ck_is_bitwise(op)) {
    ok = ck_is_intlike(t);
    need = "integer";
  } else if (op == TK_EQEQ || op == TK_NE) {
    ok = true;
    need = "";
  } else {
    ok = ck_is_numlike(t);
    need = "numeric";
  }
  if (!ok) {
    diag_error(c->diags, n->loc, "'%s' needs %s operands, not %s", tok_spelling(n->op), need,
               ck_tname(t));
    if (op == TK_PERCENT && (type_is_float(t) || t->kind == TY_UNTYPED_FLOAT))
      diag_note(c->diags, n->loc, "use fmod(a, b) for floating-point remainders");
    return &ty_error;
  }
  return ck_is_compare(op) ? &ty_bool : t;
}

/* An operand of ! && ||: bool, or a tile of bool. */
static Val logic_operand(Check *c, Node *n, const char *what) {
  Val v = ck_expr(c, n);
  if (ck_is_err(v.ty) || v.ty->kind == TY_BOOL ||
      (v.ty->kind == TY_TILE && v.ty->elem->kind == TY_BOOL))
    return v;
  diag_error(c->diags, n->loc, "%s must be bool, not %s", what, ck_tname(v.ty));
  if (ck_is_numlike(v.ty))
    diag_note(c->diags, n->loc, "bool is not an integer: compare explicitly, e.g. 'x != 0'");
  return ck_val_err();
}

static Val binary(Check *c, Node *n) {
  int op = n->op;
  bool logic = op == TK_ANDAND || op == TK_OROR;
  const char *what = op == TK_ANDAND ? "the operand of '&&'" : "the operand of '||'";
  Val a = logic ? logic_operand(c, n->lhs, what) : ck_expr(c, n->lhs);
  Val b = logic ? logic_operand(c, n->rhs, what) : ck_expr(c, n->rhs);
  if (ck_is_err(a.ty) || ck_is_err(b.ty)) return ck_val_err();
  bool tiles = a.ty->kind == TY_TILE || b.ty->kind == TY_TILE;
  Type *t = logic && !tiles ? &ty_bool : ck_operate(c, n, op, n->lhs, &a, n->rhs, &b, false);
  if (ck_is_err(t)) return ck_val_err();
  n->ty = t;
  if (!a.is_const || !b.is_const || n->call_kind == CALL_BUILTIN) return ck_val_of(t);
  if (!ck_fold_binary(c, n->loc, op, &a, &b)) return ck_val_err();
  a.is_const = true;
  ck_set_const(n, a);
  return a;
}

static Val unary(Check *c, Node *n) {
  int op = n->op;
  Val v = op == TK_BANG ? logic_operand(c, n->lhs, "the operand of '!'") : ck_expr(c, n->lhs);
  if (ck_is_err(v.ty)) return ck_val_err();
  if (v.ty->kind == TY_TILE) return ck_tile_unary(c, n, v);
  if (op == TK_MINUS && ck_is_vmq(v.ty)) {
    Node *args[1] = {n->lhs};
    Type *t = op_call(c, n, "neg", "-", args, &v, 1);
    n->ty = t;
    return ck_is_err(t) ? ck_val_err() : ck_val_of(t);
  }
  bool ok = op == TK_BANG || (op == TK_TILDE ? ck_is_intlike(v.ty) : ck_is_numlike(v.ty));
  if (!ok) {
    diag_error(c->diags, n->loc, "invalid operand to unary '%s': %s",
               op == TK_PLUS    ? "+"
               : op == TK_MINUS ? "-"
                                : tok_spelling(op),
               ck_tname(v.ty));
    return ck_val_err();
  }
  n->ty = v.ty;
  if (!v.is_const) return v;
  if (!ck_fold_unary(c, n->loc, op, &v)) return ck_val_err();
  ck_set_const(n, v);
  return v;
}

static Val cond_expr(Check *c, Node *n) {
  Val cv = ck_expect_bool(c, n->cond, "the condition of '?:'");
  Val a = ck_expr(c, n->then), b = ck_expr(c, n->els);
  if (ck_is_err(cv.ty) || ck_is_err(a.ty) || ck_is_err(b.ty)) return ck_val_err();
  if (a.ty->kind == TY_TILE || b.ty->kind == TY_TILE) {
    diag_error(c->diags, n->loc, "'?:' chooses between scalars; for tiles use tile_where(c, a, b)");
    return ck_val_err();
  }
  if (a.ty->kind == TY_FIXED || b.ty->kind == TY_FIXED) {
    diag_error(c->diags, n->loc, "'?:' cannot choose between local arrays; index them instead");
    return ck_val_err();
  }
  Type *t;
  if (operand_ok(a.ty) && operand_ok(b.ty))
    t = unify(c, n->loc, "?:", n->then, &a, n->els, &b, false);
  else if (type_equal(a.ty, b.ty))
    t = a.ty;
  else
    t = op_mismatch(c, n->loc, "?:", a.ty, b.ty);
  if (ck_is_err(t)) return ck_val_err();
  if (cv.is_const && a.is_const && b.is_const) {
    Val r = cv.i ? a : b;
    ck_set_const(n, r);
    return r;
  }
  if (ck_is_untyped(t)) {
    ck_default_type(c, n->then, &a);
    ck_default_type(c, n->els, &b);
    t = a.ty;
  }
  n->ty = t;
  return ck_val_of(t);
}

/* ---- names, literals, members ------------------------------------------------------ */

static Val const_ref(Check *c, Decl *d, SrcLoc loc) {
  Info *in = ck_info(c, d);
  if (in->state == 1) {
    diag_error(c->diags, loc, "%s '%s' is defined in terms of itself",
               d->of_enum ? "enumerator" : "constant", d->name);
    diag_note(c->diags, d->name_loc, "'%s' is declared here", d->name);
    return ck_val_err();
  }
  if (in->state == 0) ck_eval_const(c, d);
  return in->cval;
}

static const char *decl_what(const Decl *d) {
  switch (d->kind) {
    case DECL_STRUCT: return "a struct type";
    case DECL_ENUM: return "an enum type";
    case DECL_FUNC: return "a function";
    case DECL_KERNEL: return "a kernel";
    default: return "a constant";
  }
}

static Val ident(Check *c, Node *n) {
  if (n->ntargs) { /* a type where a value goes: `T` of a generic, or sizeof's `float` */
    Type *t = ck_resolve_type(c, n->targs[0], NULL);
    diag_error(c->diags, n->loc, "type %s is not a value", ck_tname(t ? t : &ty_error));
    return ck_val_err();
  }
  Bind *b = n->name ? ck_map_get(&c->locals, n->name) : NULL;
  Val sv;
  if (b && ck_static_ident(c, n, b->var, &sv)) return sv;
  if (b) {
    n->var = b->var;
    n->ty = b->var->ty ? b->var->ty : &ty_error;
    return ck_val_of(n->ty);
  }
  Sym *s = ck_global(c, n->name);
  if (s && s->decl->kind == DECL_CONST) {
    Val v = const_ref(c, s->decl, n->loc);
    n->cdecl = s->decl;
    n->ty = v.ty;
    n->is_const = v.is_const;
    return v;
  }
  if (s) {
    diag_error(c->diags, n->loc, "'%s' is %s, not a value", n->name, decl_what(s->decl));
    return ck_val_err();
  }
  if (ck_named_float(n)) return ck_val_of(n->ty);
  diag_error(c->diags, n->loc, "unknown name '%s'", n->name ? n->name : "?");
  const char *near = n->name ? ck_suggest(c, n->name, false) : NULL;
  if (near) diag_note(c->diags, n->loc, "did you mean '%s'?", near);
  return ck_val_err();
}

static Val int_literal(Check *c, Node *n) {
  static Type *const by_suffix[] = {
      [SUF_NONE] = &ty_untyped_int, [SUF_U] = &ty_u32, [SUF_L] = &ty_i64, [SUF_UL] = &ty_u64};
  Type *t = n->suffix <= SUF_UL ? by_suffix[n->suffix] : &ty_untyped_int;
  Val v = {.ty = t, .is_const = true, .i = (i128)n->ival};
  if (!ck_int_fits(v.i, t)) {
    ck_report_overflow(c, n->loc, &(Val){.ty = &ty_untyped_int, .i = v.i}, t);
    return ck_val_err();
  }
  n->ty = t;
  n->is_const = true;
  return v;
}

static Val float_literal(Check *c, Node *n) {
  Type *t = n->suffix == SUF_F ? &ty_f32 : n->suffix == SUF_D ? &ty_f64 : &ty_untyped_float;
  Val v = {.ty = t, .is_const = true, .f = n->fval};
  if (t == &ty_f32 && !ck_check_float(c, n->loc, &v, t)) return ck_val_err();
  n->ty = t;
  n->fval = v.f;
  n->is_const = true;
  return v;
}

/* An index of an array, vector, matrix or quat: any integer type. */
static Val index_val(Check *c, Node *idx, bool from_end) {
  Val v = ck_expr(c, idx);
  if (ck_is_err(v.ty)) return v;
  if (!ck_is_intlike(v.ty)) {
    diag_error(c->diags, idx->loc, "index must be an integer, not %s", ck_tname(v.ty));
    return ck_val_err();
  }
  if (ck_is_untyped(v.ty))
    ck_convert(c, idx, &v, ck_int_fits(v.i, &ty_i32) ? &ty_i32 : &ty_i64, (Ctx){"index", NULL, 0});
  if (v.is_const && v.i < 0 && !from_end) {
    diag_error(c->diags, idx->loc, "index %s is negative", ck_val_text(c, &v));
    return ck_val_err();
  }
  return v;
}

int ck_count_list(const Node *n) {
  int k = 0;
  for (; n; n = n->next) k++;
  return k;
}

/* base[i, ...] of a local array: one index per dimension, a constant one
 * within its extent. */
static Val fixed_index(Check *c, Node *n, Type *t, int nidx) {
  const char *name = n->lhs->kind == ND_IDENT && n->lhs->name ? n->lhs->name : "?";
  if (nidx != t->ndim) {
    diag_error(c->diags, n->loc, "local array '%s' has %d dimension%s but %d ind%s given", name,
               t->ndim, t->ndim == 1 ? "" : "s", nidx, nidx == 1 ? "ex was" : "ices were");
    return ck_val_err();
  }
  int d = 0;
  for (Node *a = n->args; a; a = a->next, d++) {
    if (!a->is_const || ck_is_err(a->ty) || !type_is_int(a->ty)) continue;
    bool big = !type_is_signed(a->ty) && a->ty->size == 8 && (int64_t)a->ival < 0;
    if (big || (int64_t)a->ival >= t->dims[d]) {
      diag_error(c->diags, a->loc, "index %llu is out of range for %s (%s0..%d)",
                 (unsigned long long)a->ival, ck_tname(t),
                 t->ndim > 1 ? arena_printf(c->arena, "dimension %d is ", d) : "", t->dims[d] - 1);
      return ck_val_err();
    }
  }
  n->ty = t->elem;
  return ck_val_of(t->elem);
}

static Val index_expr(Check *c, Node *n) {
  Val base = ck_expr(c, n->lhs);
  Type *t = base.ty;
  if (n->op == TK_COLON) return ck_is_err(t) ? ck_val_err() : ck_slice(c, n, t);
  int nidx = ck_count_list(n->args);
  Val last = ck_val_err();
  bool bad = false, vmq = ck_is_vmq(t);
  for (Node *a = n->args; a; a = a->next) bad |= ck_is_err((last = index_val(c, a, vmq)).ty);
  if (ck_is_err(t)) return ck_val_err();
  if (t->kind == TY_TILE) return ck_is_err(last.ty) ? ck_val_err() : ck_tile_index(c, n, t, nidx);
  if (t->kind == TY_FIXED) return bad ? ck_val_err() : fixed_index(c, n, t, nidx);
  if (t->kind == TY_ARRAY) {
    if (nidx != t->ndim) {
      const char *name = n->lhs->kind == ND_IDENT && n->lhs->name ? n->lhs->name : "?";
      diag_error(c->diags, n->loc, "array '%s' has %d dimension%s but %d ind%s given", name,
                 t->ndim, t->ndim == 1 ? "" : "s", nidx, nidx == 1 ? "ex was" : "ices were");
      return ck_val_err();
    }
    n->ty = t->elem;
    return ck_val_of(t->elem);
  }
  if (!ck_is_vmq(t)) {
    diag_error(c->diags, n->loc, "cannot index a value of type %s", ck_tname(t));
    return ck_val_err();
  }
  if (nidx != 1) {
    diag_error(c->diags, n->loc, "%s takes 1 index, but %d were given", ck_tname(t), nidx);
    return ck_val_err();
  }
  if (!ck_index_from_end(c, n->args, &last, t)) return ck_val_err();
  if (last.is_const && !ck_is_err(last.ty) && last.i >= t->n) {
    diag_error(c->diags, n->args->loc, "index %s is out of range for %s (0..%d)",
               ck_val_text(c, &last), ck_tname(t), t->n - 1);
    return ck_val_err();
  }
  n->ty = t->kind == TY_MAT ? type_mat_row(t) : t->elem;
  return ck_val_of(n->ty);
}

static int component(const char *name) {
  if (!name || !name[0] || name[1]) return -1;
  const char *p = strchr("xyzw", name[0]);
  return p ? (int)(p - "xyzw") : -1;
}

static Val struct_member(Check *c, Node *n, Decl *s, const char *name) {
  for (int i = 0; i < s->nfields; i++) {
    if (s->fields[i].name && strcmp(s->fields[i].name, name) == 0) {
      n->member = i;
      n->ty = s->fields[i].ty ? s->fields[i].ty : &ty_error;
      return ck_val_of(n->ty);
    }
  }
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  diag_error(c->diags, at, "struct '%s' has no field '%s'", s->name, name);
  const char *best = ck_suggest_field(s, name);
  if (best) diag_note(c->diags, at, "did you mean '%s'?", best);
  return ck_val_err();
}

/* .x .y .z .w of a vector or quat (no swizzles). */
static Val component_member(Check *c, Node *n, Type *t, const char *name) {
  int k = component(name);
  if (t->n > 4) { /* a spatial_vector: components by index only, as in Warp */
    SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
    diag_error(c->diags, at, "%s has no component '%s'", ck_tname(t), name);
    diag_note(c->diags, at, "index it: v[0] .. v[%d]%s", t->n - 1,
              t == &ty_svec ? ", or spatial_top(v) and spatial_bottom(v)" : "");
    return ck_val_err();
  }
  if (k >= 0 && k < t->n) {
    n->member = k;
    n->ty = t->elem;
    return ck_val_of(t->elem);
  }
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  diag_error(c->diags, at, "%s has no component '%s'", ck_tname(t), name);
  size_t len = strlen(name);
  if (len > 1 && len <= 4 && strspn(name, "xyzw") == len)
    diag_note(c->diags, at, "swizzles are not supported; use a constructor such as %s(...)",
              ck_tname(type_vecn(t->elem, (int)len)));
  return ck_val_err();
}

/* .p (the translation, a vec3) and .q (the rotation, a quat) of a transform. */
static Val transform_member(Check *c, Node *n, const char *name) {
  int k = strcmp(name, "p") == 0 ? 0 : strcmp(name, "q") == 0 ? 1 : -1;
  if (k < 0) {
    SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
    diag_error(c->diags, at, "transform has no member '%s'", name);
    diag_note(c->diags, at, "a transform has .p (the translation) and .q (the rotation)");
    return ck_val_err();
  }
  n->member = k;
  n->ty = k == 0 ? &ty_vec3 : &ty_quat;
  return ck_val_of(n->ty);
}

static Val member(Check *c, Node *n) {
  Val b = ck_expr(c, n->lhs);
  Type *t = b.ty;
  if (ck_is_err(t)) return ck_val_err();
  const char *name = n->name ? n->name : "?";
  if (t->kind == TY_STRUCT) return struct_member(c, n, t->sdecl, name);
  if (t->kind == TY_TRANSFORM) return transform_member(c, n, name);
  if (t->kind == TY_VEC || t->kind == TY_QUAT) return component_member(c, n, t, name);
  diag_error(c->diags, n->loc, "cannot access member '%s' of a value of type %s", name,
             ck_tname(t));
  return ck_val_err();
}

/* ---- casts and constructors ----------------------------------------------------------- */

/* (T)x with x already checked (value v). */
static Val cast_checked(Check *c, Node *n, Type *t, Val v) {
  if (ck_is_err(t) || ck_is_err(v.ty)) return ck_val_err();
  bool ok = (type_is_scalar(t) && operand_ok(v.ty)) ||
            (t->kind == TY_VEC && v.ty->kind == TY_VEC && t->n == v.ty->n) ||
            (t->kind == TY_MAT && v.ty->kind == TY_MAT && t->n == v.ty->n &&
             type_mat_cols(t) == type_mat_cols(v.ty)) || /* spatial_matrix: mat<T, 6, 6> */
            (t->kind == TY_QUAT && v.ty->kind == TY_QUAT) ||
            type_equal(t, v.ty);
  if (!ok) {
    diag_error(c->diags, n->loc, "cannot cast %s to %s", ck_tname(v.ty), ck_tname(t));
    if (t->kind == TY_VEC && v.ty->kind == TY_VEC)
      diag_note(c->diags, n->loc,
                "a vector converts to one of the same length, per component: %d is not %d", v.ty->n,
                t->n);
    else if (t->kind == TY_MAT && v.ty->kind == TY_MAT)
      diag_note(c->diags, n->loc,
                "a matrix converts to one of the same shape, per component: %d x %d is not %d x "
                "%d",
                v.ty->n, type_mat_cols(v.ty), t->n, type_mat_cols(t));
    return ck_val_err();
  }
  if (v.is_const && type_is_scalar(t)) {
    if (!ck_const_cast(c, n->loc, &v, t)) return ck_val_err();
    v.is_const = true;
    ck_set_const(n, v);
    return v;
  }
  n->ty = t;
  return ck_val_of(t);
}

static Val cast(Check *c, Node *n) {
  Type *t = ck_resolve_type(c, n->texpr, "a cast's type");
  Val v = ck_expr(c, n->lhs);
  if (!t) {
    diag_error(c->diags, n->loc, "cannot cast to auto");
    return ck_val_err();
  }
  return cast_checked(c, n, t, v);
}

/* Turns the call T(x) into the cast (T)x. */
static void call_to_cast(Node *n) {
  Node *arg = n->args;
  n->kind = ND_CAST;
  n->lhs = arg;
  arg->next = NULL;
  n->args = NULL;
  n->nargs = 0;
}

/* Does some builtin overload of name take a pointer (&v, an output)? */
static bool writes_through(const char *name) {
  int first, nb = name ? builtin_overloads(name, &first) : 0;
  for (int i = 0; i < nb; i++) {
    const Builtin *b = builtin_get(first + i);
    for (int k = 0; k < b->nparams; k++)
      if (b->params[k]->kind == TY_PTR) return true;
  }
  return false;
}

/* Checks every argument of n; returns their count, nodes and values. &v
 * arguments are outputs when outs (see ck_out_arg), else an error. */
static int check_args(Check *c, Node *n, Node ***nodes, Val **vals, bool outs) {
  int na = ck_count_list(n->args);
  *nodes = ck_alloc(c, (size_t)(na + 1) * sizeof **nodes);
  *vals = ck_alloc(c, (size_t)(na + 1) * sizeof **vals);
  int i = 0;
  for (Node *a = n->args; a; a = a->next, i++) {
    (*nodes)[i] = a;
    (*vals)[i] = outs && a->kind == ND_ADDR ? ck_out_arg(c, a) : ck_expr(c, a);
  }
  return na;
}

static bool any_err(const Val *vals, int n) {
  for (int i = 0; i < n; i++)
    if (ck_is_err(vals[i].ty)) return true;
  return false;
}

static Val ctor_done(Node *n, Type *t) {
  n->call_kind = CALL_CTOR;
  n->ty = t;
  return ck_val_of(t);
}

static void convert_all(Check *c, Node **args, Val *vals, int na, Type *t, const char *name) {
  for (int i = 0; i < na; i++) ck_convert(c, args[i], &vals[i], t, (Ctx){"argument", name, i + 1});
}

/* vecN / quat / matN from scalars, rows or a splat, or from nothing: the
 * zero vector or matrix, the identity quat (Warp's) (see the top comment). */
static Val vector_ctor(Check *c, Node *n, Type *t, Node **args, Val *vals, int na) {
  const char *name = ck_tname(t);
  int n1 = t->n, n2 = t->kind == TY_MAT ? t->n * type_mat_cols(t) : t->n;
  if (na == 0) {
    /* nothing to convert */
  } else if (na == 1 || na == n2) {
    convert_all(c, args, vals, na, t->elem, name);
  } else if (t == &ty_svec && na == 2) { /* spatial_vector(w, v) */
    convert_all(c, args, vals, na, &ty_vec3, name);
  } else if (t->kind == TY_MAT && na == n1) {
    convert_all(c, args, vals, na, type_mat_row(t), name);
  } else {
    if (t->kind == TY_MAT)
      diag_error(c->diags, n->loc, "%s takes 0, 1, %d or %d arguments, got %d", name, n1, n2, na);
    else if (t == &ty_svec)
      diag_error(c->diags, n->loc, "%s takes 0, 1, 2 (two vec3) or %d arguments, got %d", name, n2,
                 na);
    else
      diag_error(c->diags, n->loc, "%s takes 0, 1 or %d arguments, got %d", name, n2, na);
    return ck_val_err();
  }
  return any_err(vals, na) ? ck_val_err() : ctor_done(n, t);
}

/* transform(p, q) from a vec3 and a quat, or transform(7 scalars): p then q;
 * transform() is the identity, as quat() is. */
static Val transform_ctor(Check *c, Node *n, Node **args, Val *vals, int na) {
  if (na == 0) {
  } else if (na == 2) {
    ck_convert(c, args[0], &vals[0], &ty_vec3, (Ctx){"argument", "transform", 1});
    ck_convert(c, args[1], &vals[1], &ty_quat, (Ctx){"argument", "transform", 2});
  } else if (na == 7) {
    convert_all(c, args, vals, na, &ty_f32, "transform");
  } else {
    diag_error(c->diags, n->loc, "transform takes no arguments, 2 (a vec3 and a quat) or 7, got %d",
               na);
    return ck_val_err();
  }
  return any_err(vals, na) ? ck_val_err() : ctor_done(n, &ty_transform);
}

/* A call whose callee is a builtin type name: a cast or a constructor. */
static Val type_call(Check *c, Node *n, Type *t) {
  int na = ck_count_list(n->args);
  if (type_is_scalar(t)) {
    if (na != 1) {
      diag_error(c->diags, n->loc, "a cast to %s takes 1 argument, got %d", ck_tname(t), na);
      for (Node *a = n->args; a; a = a->next) ck_expr(c, a);
      return ck_val_err();
    }
    call_to_cast(n);
    Val v = ck_expr(c, n->lhs);
    if (v.ty && v.ty->kind == TY_TILE) return ck_tile_cast(c, n, t, v);
    return cast_checked(c, n, t, v);
  }
  Node **args;
  Val *vals;
  na = check_args(c, n, &args, &vals, false);
  if (na == 1 && (t->kind == TY_VEC || t->kind == TY_MAT) && vals[0].ty->kind == t->kind) {
    call_to_cast(n);
    return cast_checked(c, n, t, vals[0]);
  }
  if (na == 1 && t->kind == TY_QUAT && vals[0].ty->kind == TY_QUAT) { /* quat<U>(quat<T>) */
    call_to_cast(n);
    return cast_checked(c, n, t, vals[0]);
  }
  if (na == 1 && t->kind == TY_TRANSFORM && type_equal(t, vals[0].ty)) {
    call_to_cast(n);
    return cast_checked(c, n, t, vals[0]);
  }
  if (t->kind == TY_TRANSFORM) return transform_ctor(c, n, args, vals, na);
  if (ck_is_vmq(t)) return vector_ctor(c, n, t, args, vals, na);
  diag_error(c->diags, n->loc, "cannot construct a value of type %s", ck_tname(t));
  return ck_val_err();
}

static Val struct_ctor(Check *c, Node *n, Decl *s) {
  Node **args;
  Val *vals;
  int na = check_args(c, n, &args, &vals, false);
  if (na != 0 && na != s->nfields) {
    diag_error(c->diags, n->loc,
               "'%s' has %d field%s: its constructor takes 0 or %d arguments, got %d", s->name,
               s->nfields, s->nfields == 1 ? "" : "s", s->nfields, na);
    diag_note(c->diags, s->name_loc, "'%s' is declared here", s->name);
    return ck_val_err();
  }
  for (int i = 0; i < na; i++)
    ck_convert(c, args[i], &vals[i], s->fields[i].ty, (Ctx){"argument", s->name, i + 1});
  return ctor_done(n, s->sty ? s->sty : &ty_error);
}

/* ---- calls ------------------------------------------------------------------------------ */

static Val call(Check *c, Node *n) {
  if (n->texpr && n->texpr->builtin && n->texpr->ndim == 0)
    return type_call(c, n, n->texpr->builtin);
  if (n->texpr && n->texpr->vecn_elem) { /* vec<T, N>(...) with no vector for T */
    ck_resolve_type(c, n->texpr, NULL);
    for (Node *a = n->args; a; a = a->next) ck_expr(c, a);
    return ck_val_err();
  }
  const char *name = n->name ? n->name : n->texpr ? n->texpr->name : NULL;
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  if (n->ntargs && name && !strcmp(name, "bitcast") && !ck_is_generic(c, name))
    return ck_bitcast(c, n);
  if (n->ntargs && !ck_is_generic(c, name)) {
    diag_error(c->diags, at, "'%s' is not a generic function; only those take <types>", name);
    for (Node *a = n->args; a; a = a->next) ck_expr(c, a);
    return ck_val_err();
  }
  SpecialKind sp = ck_special_kind(name);
  if (sp != SP_NONE) return ck_special(c, n, sp);
  TileOp top = ck_tile_op(name);
  if (top != TOP_NONE) return ck_tile_call(c, n, top);
  if (n->targ || n->ntshape) {
    diag_error(c->diags, at, "'%s' is not a tile operation; only those take <...>", name);
    return ck_val_err();
  }
  Sym *s = ck_global(c, name);
  if (s && s->decl->kind == DECL_STRUCT) return struct_ctor(c, n, s->decl);
  if (s && s->decl->kind == DECL_ENUM) { /* Color(x): a cast to int32, the enum's type */
    n->texpr = ck_alloc(c, sizeof *n->texpr);
    n->texpr->loc = n->name_loc;
    n->texpr->builtin = &ty_i32;
    return type_call(c, n, &ty_i32);
  }
  Node **args;
  Val *vals;
  int na = check_args(c, n, &args, &vals, writes_through(name));
  if (s && s->decl->kind == DECL_KERNEL) {
    diag_error(c->diags, at, "kernel '%s' cannot be called; kernels are launched from the host",
               name);
    return ck_val_err();
  }
  for (int i = 0; i < na; i++)
    if (vals[i].ty && vals[i].ty->kind == TY_TILE && !(s && s->decl->kind == DECL_FUNC))
      return ck_tile_builtin(c, n, name, args, vals, na);
  Cand *cs;
  int nc = ck_candidates(c, name ? name : "", &cs);
  if (!s && ck_vecn_unsupported(c, at, name, vals, na)) return ck_val_err();
  nc = ck_vecn_cands(c, name, vals, na, &cs, nc);
  nc = ck_quatn_cands(c, name, vals, na, &cs, nc);
  nc = ck_generic_cands(c, s, n, vals, na, &cs, nc);
  if (nc < 0) return ck_val_err();
  if (nc == 0) {
    if (name && (ck_map_get(&c->locals, name) || s))
      diag_error(c->diags, at, "'%s' is not a function", name);
    else
      diag_error(c->diags, at, "unknown function '%s'", name ? name : "?");
    const char *near = name ? ck_suggest(c, name, true) : NULL;
    if (near) diag_note(c->diags, at, "did you mean '%s'?", near);
    return ck_val_err();
  }
  int k = ck_resolve(c, name, NULL, at, cs, nc, vals, na);
  if (k < 0) return ck_val_err();
  Type *t = ck_apply_cand(c, n, name, &cs[k], args, vals);
  n->ty = t;
  return ck_val_of(t);
}

static Val expr_kind(Check *c, Node *n) {
  if (n->ty && ck_is_err(n->ty))
    return ck_val_err(); /* the parser's placeholder for a malformed expression */
  switch (n->kind) {
    case ND_INT: return int_literal(c, n);
    case ND_FLOAT: return float_literal(c, n);
    case ND_BOOL:
      n->ty = &ty_bool;
      n->is_const = true;
      return (Val){.ty = &ty_bool, .is_const = true, .i = n->ival != 0};
    case ND_STRING:
      diag_error(c->diags, n->loc,
                 "string literals are only allowed in printf and as the message of assert");
      return ck_val_err();
    case ND_IDENT: return ident(c, n);
    case ND_UNARY: return unary(c, n);
    case ND_ADDR:
      diag_error(c->diags, n->loc,
                 "'&' is only allowed on an argument of an atomic, a random function or a "
                 "builtin that writes to it (svd3, transform_set_translation ...)");
      ck_expr(c, n->lhs);
      return ck_val_err();
    case ND_BINARY: return binary(c, n);
    case ND_COND: return cond_expr(c, n);
    case ND_CALL: return call(c, n);
    case ND_CAST: return cast(c, n);
    case ND_INDEX: return index_expr(c, n);
    case ND_MEMBER: return member(c, n);
    case ND_CONV: return ck_val_of(n->ty);
    default: diag_error(c->diags, n->loc, "expected an expression"); return ck_val_err();
  }
}

Val ck_expr(Check *c, Node *n) {
  if (!n) return ck_val_err();
  if (!ck_nest_enter(c, n->loc)) {
    c->nest--;
    n->ty = &ty_error;
    return ck_val_err();
  }
  Val v = expr_kind(c, n);
  c->nest--;
  if (ck_is_err(v.ty) || !n->ty) n->ty = v.ty;
  return v;
}
