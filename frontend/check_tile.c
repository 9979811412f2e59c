/* check_tile.c: tiles: the tile<T, shape> type, the tile_* operations, the
 * operators, element reads and math builtins on tiles, and what a tiled
 * function must respect.
 *
 * Requires: check_overload.c (conversions, overloads), check_expr.c (ck_expr).
 * Produces: ck_tile_type (a tile type as written), ck_tile_call (a tile_*
 * call), ck_tile_operate, ck_tile_unary, ck_tile_index, ck_tile_builtin,
 * ck_tile_cast (the operators, reads, math and conversions on tiles), and
 * ck_tile_program, which after the bodies marks tiled functions (Decl.tiled),
 * functions with side effects (Decl.effects), applies the rules of tiled code
 * and counts the tile storage each function and kernel needs
 * (tile_temp_bytes, shared with the emitter, says what one node needs).
 * Breaks: nothing outside tiles; a tile is never an array element, a struct
 * field, a constant or a kernel parameter.
 */

#include <stdio.h>
#include <string.h>

#include "check_internal.h"

enum { TILE_MAX_ELEMS = 1 << 20 };
/* tile_map(f, t, ...): f takes at most this many arguments. */
enum { TILE_MAP_MAX_ARGS = 4 };

static const struct {
  const char *name;
  TileOp op;
} tile_ops[] = {
    {"tile_zeros", TOP_ZEROS},
    {"tile_ones", TOP_ONES},
    {"tile_full", TOP_FULL},
    {"tile_arange", TOP_ARANGE},
    {"tile_load", TOP_LOAD},
    {"tile_store", TOP_STORE},
    {"tile_atomic_add", TOP_ATOMIC_ADD},
    {"tile_map", TOP_MAP},
    {"tile_where", TOP_WHERE},
    {"tile_sum", TOP_SUM},
    {"tile_min", TOP_MIN},
    {"tile_max", TOP_MAX},
    {"tile_argmin", TOP_ARGMIN},
    {"tile_argmax", TOP_ARGMAX},
    {"tile_reduce", TOP_REDUCE},
    {"tile_scan_inclusive", TOP_SCAN_INC},
    {"tile_scan_exclusive", TOP_SCAN_EXC},
    {"tile_transpose", TOP_TRANSPOSE},
    {"tile_broadcast", TOP_BROADCAST},
    {"tile_reshape", TOP_RESHAPE},
    {"tile_sort", TOP_SORT},
    {"tile_matmul", TOP_MATMUL},
    {"tile_matmul_fast", TOP_MATMUL_FAST},
};

TileOp ck_tile_op(const char *name) {
  for (size_t i = 0; name && i < sizeof tile_ops / sizeof tile_ops[0]; i++)
    if (strcmp(tile_ops[i].name, name) == 0) return tile_ops[i].op;
  return TOP_NONE;
}

static bool is_tile(const Type *t) { return t && t->kind == TY_TILE; }

/* ---- types ------------------------------------------------------------------------------ */

static Type *make_tile(Check *c, SrcLoc loc, Type *elem, int rank, const int *dims) {
  if (ck_is_err(elem)) return &ty_error;
  if (!type_is_scalar(elem)) {
    diag_error(c->diags, loc, "a tile's elements are scalars, not %s", ck_tname(elem));
    return &ty_error;
  }
  int64_t count = (int64_t)dims[0] * (rank == 2 ? dims[1] : 1);
  if (count > TILE_MAX_ELEMS) {
    diag_error(c->diags, loc, "a tile of %lld elements is too big (the limit is %d)",
               (long long)count, TILE_MAX_ELEMS);
    return &ty_error;
  }
  Type *t = type_tile(c->arena, elem, rank, dims);
  if (!t) longjmp(c->oom, 1);
  return t;
}

static bool extent(Check *c, Node *d, int *out) {
  Val v = ck_expr(c, d);
  if (ck_is_err(v.ty)) return false;
  if (!v.is_const || !ck_is_intlike(v.ty)) {
    diag_error(c->diags, d->loc, "a tile's shape must be an integer constant expression");
    return false;
  }
  if (v.i < 1 || v.i > TILE_MAX_ELEMS) {
    diag_error(c->diags, d->loc, "tile extent %s is out of range (1 to %d)", ck_val_text(c, &v),
               TILE_MAX_ELEMS);
    return false;
  }
  *out = (int)v.i;
  return true;
}

Type *ck_tile_type(Check *c, TypeExpr *te, const char *what) {
  int dims[2] = {1, 1};
  bool ok = true;
  for (int i = 0; i < te->tile_rank; i++) ok = extent(c, te->tile_shape[i], &dims[i]) && ok;
  if (what && strcmp(what, "a local variable") && strcmp(what, "a return type")) {
    diag_error(c->diags, te->loc, "%s cannot be a tile", what);
    diag_note(c->diags, te->loc,
              "tiles are values of local variables, parameters and return values only");
    return &ty_error;
  }
  return ok ? make_tile(c, te->loc, te->builtin, te->tile_rank, dims) : &ty_error;
}

static Type *tile_like(Check *c, SrcLoc loc, const Type *shape, Type *elem) {
  return make_tile(c, loc, elem, shape->ndim, shape->dims);
}

static bool same_shape(const Type *a, const Type *b) {
  return a->ndim == b->ndim && a->dims[0] == b->dims[0] && a->dims[1] == b->dims[1];
}

static void shape_error(Check *c, SrcLoc loc, const char *what, const Type *a, const Type *b) {
  diag_error(c->diags, loc, "tile shapes differ in %s: %s and %s", what, ck_tname(a), ck_tname(b));
}

/* ---- operators, reads, math ------------------------------------------------------------- */

/* The scalar side of a tile operation takes the tile's element type. */
static bool scalar_to_elem(Check *c, Node *n, Val *v, Type *elem, const char *what) {
  if (ck_is_err(v->ty)) return false;
  if (!type_is_scalar(v->ty) && !ck_is_untyped(v->ty)) {
    diag_error(c->diags, n->loc, "%s needs a scalar or a tile, not %s", what, ck_tname(v->ty));
    return false;
  }
  return ck_convert(c, n, v, elem, (Ctx){"this operation", NULL, 0});
}

static bool op_elem_ok(Check *c, SrcLoc loc, int op, const Type *elem) {
  bool logic = op == TK_ANDAND || op == TK_OROR;
  bool ok = logic                                                      ? elem->kind == TY_BOOL
            : op == TK_PERCENT || ck_is_bitwise(op) || ck_is_shift(op) ? type_is_int(elem)
            : op == TK_EQEQ || op == TK_NE                             ? true
                                                                       : type_is_numeric(elem);
  if (!ok)
    diag_error(c->diags, loc, "'%s' cannot apply to tiles of %s", tok_spelling(op), ck_tname(elem));
  return ok;
}

Type *ck_tile_operate(Check *c, Node *n, int op, Node *ln, Val *a, Node *rn, Val *b, bool fixed) {
  if (ck_is_err(a->ty) || ck_is_err(b->ty)) return &ty_error;
  Type *t = is_tile(a->ty) ? a->ty : b->ty;
  if (fixed && !is_tile(a->ty)) {
    diag_error(c->diags, n->loc, "cannot assign a tile to %s", ck_tname(a->ty));
    return &ty_error;
  }
  if (is_tile(a->ty) && is_tile(b->ty)) {
    if (!same_shape(a->ty, b->ty)) {
      shape_error(c, n->loc, arena_printf(c->arena, "'%s'", tok_spelling(op)), a->ty, b->ty);
      return &ty_error;
    }
    if (!type_equal(a->ty->elem, b->ty->elem)) {
      diag_error(c->diags, n->loc, "mismatched element types %s and %s in '%s'",
                 ck_tname(a->ty->elem), ck_tname(b->ty->elem), tok_spelling(op));
      diag_note(c->diags, n->loc, "convert one tile explicitly, e.g. %s(t)", ck_tname(a->ty->elem));
      return &ty_error;
    }
  } else if (is_tile(a->ty)) {
    if (!scalar_to_elem(c, rn, b, a->ty->elem, "a tile operator")) return &ty_error;
  } else if (!scalar_to_elem(c, ln, a, b->ty->elem, "a tile operator"))
    return &ty_error;
  if (!op_elem_ok(c, n->loc, op, t->elem)) return &ty_error;
  bool to_bool = ck_is_compare(op);
  return to_bool ? tile_like(c, n->loc, t, &ty_bool) : t;
}

Val ck_tile_unary(Check *c, Node *n, Val v) {
  int op = n->op;
  Type *e = v.ty->elem;
  bool ok = op == TK_BANG    ? e->kind == TY_BOOL
            : op == TK_TILDE ? type_is_int(e)
                             : type_is_numeric(e);
  if (!ok) {
    diag_error(c->diags, n->loc, "invalid operand to unary '%s': %s",
               op == TK_MINUS  ? "-"
               : op == TK_PLUS ? "+"
                               : tok_spelling(op),
               ck_tname(v.ty));
    return ck_val_err();
  }
  n->ty = v.ty;
  return ck_val_of(v.ty);
}

Val ck_tile_index(Check *c, Node *n, Type *t, int nidx) {
  if (nidx != t->ndim) {
    diag_error(c->diags, n->loc, "%s has %d dimension%s but %d ind%s given", ck_tname(t), t->ndim,
               t->ndim == 1 ? "" : "s", nidx, nidx == 1 ? "ex was" : "ices were");
    return ck_val_err();
  }
  int d = 0;
  for (Node *a = n->args; a; a = a->next, d++)
    if (a->is_const && !ck_is_err(a->ty) && (int64_t)a->ival >= t->dims[d]) {
      diag_error(c->diags, a->loc, "index %lld is out of range for %s (0..%d)", (long long)a->ival,
                 ck_tname(t), t->dims[d] - 1);
      return ck_val_err();
    }
  n->ty = t->elem;
  return ck_val_of(t->elem);
}

/* sqrt(t), max(t, 0.0f), pow(t, u): a builtin on the elements. */
Val ck_tile_builtin(Check *c, Node *n, const char *name, Node **args, Val *vals, int na) {
  Type *shape = NULL;
  Val *ev = ck_alloc(c, (size_t)(na + 1) * sizeof *ev);
  for (int i = 0; i < na; i++) {
    ev[i] = vals[i];
    if (!is_tile(vals[i].ty)) continue;
    if (shape && !same_shape(shape, vals[i].ty)) {
      shape_error(c, n->loc, arena_printf(c->arena, "'%s'", name), shape, vals[i].ty);
      return ck_val_err();
    }
    shape = vals[i].ty;
    ev[i] = ck_val_of(vals[i].ty->elem);
  }
  int first = 0, nb = builtin_overloads(name, &first);
  Cand *cs;
  int nc = ck_candidates(c, name, &cs);
  if (nb == 0 || nc != nb) {
    diag_error(c->diags, n->loc, "'%s' cannot apply to tiles; use tile_map with a function", name);
    return ck_val_err();
  }
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  int k = ck_resolve(c, name, NULL, at, cs, nc, ev, na);
  if (k < 0) return ck_val_err();
  for (int i = 0; i < na; i++) {
    Type *p = cs[k].params[i];
    if (!type_is_scalar(p)) {
      diag_error(c->diags, args[i]->loc, "'%s' on tiles takes scalar elements", name);
      return ck_val_err();
    }
    if (!is_tile(vals[i].ty)) {
      if (!ck_convert(c, args[i], &vals[i], p, (Ctx){"argument", name, i + 1})) return ck_val_err();
    } else if (!type_equal(vals[i].ty->elem, p)) {
      diag_error(c->diags, args[i]->loc, "argument %d of '%s' is a tile of %s, not of %s", i + 1,
                 name, ck_tname(vals[i].ty->elem), ck_tname(p));
      diag_note(c->diags, args[i]->loc, "convert the tile explicitly, e.g. %s(t)", ck_tname(p));
      return ck_val_err();
    }
  }
  if (!type_is_scalar(cs[k].ret)) return ck_val_err();
  n->call_kind = CALL_BUILTIN;
  n->builtin = cs[k].builtin;
  n->ty = tile_like(c, n->loc, shape, cs[k].ret);
  return ck_val_of(n->ty);
}

/* float32(t): each element converted as the scalar cast converts it. */
Val ck_tile_cast(Check *c, Node *n, Type *t, Val v) {
  if (!type_is_scalar(t)) {
    diag_error(c->diags, n->loc, "cannot cast %s to %s", ck_tname(v.ty), ck_tname(t));
    return ck_val_err();
  }
  n->ty = tile_like(c, n->loc, v.ty, t);
  return ck_val_of(n->ty);
}

/* ---- the tile_* calls ------------------------------------------------------------------- */

typedef struct TCall {
  Node *n;
  const char *name;
  Node **a; /* arguments */
  Val *v;   /* their values (a function argument: untouched) */
  int na;
} TCall;

static Val done(Node *n, TileOp op, Type *t) {
  n->call_kind = CALL_TILE;
  n->tile_op = op;
  n->ty = t;
  return ck_is_err(t) ? ck_val_err() : ck_val_of(t);
}

static bool nargs_ok(Check *c, TCall *k, int lo, int hi) {
  if (k->na >= lo && k->na <= hi) return true;
  if (lo == hi)
    diag_error(c->diags, k->n->loc, "'%s' expects %d argument%s, got %d", k->name, lo,
               lo == 1 ? "" : "s", k->na);
  else
    diag_error(c->diags, k->n->loc, "'%s' expects %d to %d arguments, got %d", k->name, lo, hi,
               k->na);
  return false;
}

/* The shape among <...>: `want` extents (0: 1 or 2). */
static bool written_shape(Check *c, TCall *k, int *rank, int *dims, bool type_ok) {
  Node *n = k->n;
  if (n->targ && !type_ok) {
    diag_error(c->diags, n->targ->loc, "'%s' takes no element type among <...>", k->name);
    return false;
  }
  if (n->ntshape < 1 || n->ntshape > 2) {
    diag_error(c->diags, n->loc, "'%s' needs the tile's shape (1 or 2 extents) among <...>",
               k->name);
    return false;
  }
  *rank = n->ntshape;
  int i = 0;
  bool ok = true;
  for (Node *d = n->tshape; d; d = d->next, i++) ok = extent(c, d, &dims[i]) && ok;
  return ok;
}

static bool no_template(Check *c, TCall *k) {
  if (!k->n->targ && !k->n->ntshape) return true;
  diag_error(c->diags, k->n->loc, "'%s' takes no <...>; its types come from its arguments",
             k->name);
  return false;
}

static Val tile_arg(Check *c, TCall *k, int i) {
  Val v = k->v[i];
  if (ck_is_err(v.ty)) return v;
  if (!is_tile(v.ty)) {
    diag_error(c->diags, k->a[i]->loc, "argument %d of '%s' must be a tile, not %s", i + 1, k->name,
               ck_tname(v.ty));
    return ck_val_err();
  }
  return v;
}

static Val make_op(Check *c, TCall *k, TileOp op) {
  int rank = 0, dims[2] = {1, 1};
  if (!written_shape(c, k, &rank, dims, true)) return ck_val_err();
  Type *elem = k->n->targ ? k->n->targ->builtin : NULL;
  if (op == TOP_FULL) {
    if (!nargs_ok(c, k, 1, 1)) return ck_val_err();
    if (!elem) {
      ck_default_type(c, k->a[0], &k->v[0]);
      elem = k->v[0].ty;
    }
    if (!scalar_to_elem(c, k->a[0], &k->v[0], elem, "tile_full")) return ck_val_err();
  } else if (!nargs_ok(c, k, 0, 0))
    return ck_val_err();
  if (!elem) {
    diag_error(c->diags, k->n->loc, "'%s' needs its element type among <...>, e.g. %s<float, 256>",
               k->name, k->name);
    return ck_val_err();
  }
  if (op == TOP_ARANGE && !type_is_numeric(elem)) {
    diag_error(c->diags, k->n->loc, "tile_arange makes numbers, not %s", ck_tname(elem));
    return ck_val_err();
  }
  return done(k->n, op, make_tile(c, k->n->loc, elem, rank, dims));
}

static bool array_arg(Check *c, TCall *k, int rank) {
  Val v = k->v[0];
  if (ck_is_err(v.ty)) return false;
  if (v.ty->kind != TY_ARRAY || !type_is_scalar(v.ty->elem)) {
    diag_error(c->diags, k->a[0]->loc, "'%s' needs an array of scalars first, not %s", k->name,
               ck_tname(v.ty));
    return false;
  }
  if (v.ty->ndim != rank) {
    diag_error(c->diags, k->a[0]->loc, "'%s' of a %d-D tile needs a %d-D array, not %s", k->name,
               rank, rank, ck_tname(v.ty));
    return false;
  }
  return true;
}

static bool offsets(Check *c, TCall *k, int from, int count) {
  bool ok = true;
  for (int i = from; i < from + count; i++) {
    if (ck_is_err(k->v[i].ty)) {
      ok = false;
      continue;
    }
    if (!ck_is_intlike(k->v[i].ty)) {
      diag_error(c->diags, k->a[i]->loc, "an offset of '%s' must be an integer, not %s", k->name,
                 ck_tname(k->v[i].ty));
      ok = false;
      continue;
    }
    if (ck_is_untyped(k->v[i].ty) || k->v[i].ty->kind != TY_I64)
      ok = ck_convert(c, k->a[i], &k->v[i], &ty_i64, (Ctx){"offset", k->name, i + 1}) && ok;
  }
  return ok;
}

static Val load_op(Check *c, TCall *k) {
  int rank = 0, dims[2] = {1, 1};
  if (!written_shape(c, k, &rank, dims, false)) return ck_val_err();
  if (!nargs_ok(c, k, 1 + rank, 2 + rank) || !array_arg(c, k, rank) || !offsets(c, k, 1, rank))
    return ck_val_err();
  Type *elem = k->v[0].ty->elem;
  if (k->na == 2 + rank && !scalar_to_elem(c, k->a[1 + rank], &k->v[1 + rank], elem, "the fill"))
    return ck_val_err();
  return done(k->n, TOP_LOAD, make_tile(c, k->n->loc, elem, rank, dims));
}

static Val store_op(Check *c, TCall *k, TileOp op) {
  if (!no_template(c, k) || !nargs_ok(c, k, 3, 4)) return ck_val_err();
  Val t = tile_arg(c, k, k->na - 1);
  if (ck_is_err(t.ty)) return ck_val_err();
  int rank = t.ty->ndim;
  if (!nargs_ok(c, k, rank + 2, rank + 2) || !array_arg(c, k, rank) || !offsets(c, k, 1, rank))
    return ck_val_err();
  Type *ae = k->v[0].ty->elem;
  if (!type_equal(ae, t.ty->elem)) {
    diag_error(c->diags, k->a[k->na - 1]->loc, "'%s' of a tile of %s into an array of %s", k->name,
               ck_tname(t.ty->elem), ck_tname(ae));
    return ck_val_err();
  }
  TypeKind ek = ae->kind;
  if (op == TOP_ATOMIC_ADD && ek != TY_I32 && ek != TY_U32 && ek != TY_I64 && ek != TY_U64 &&
      ek != TY_F32 && ek != TY_F64) {
    diag_error(c->diags, k->n->loc, "tile_atomic_add needs 32- or 64-bit elements, not %s",
               ck_tname(ae));
    return ck_val_err();
  }
  return done(k->n, op, &ty_void);
}

/* f in tile_map(f, ...), tile_reduce(f, ...): a user function, or min / max.
 * A generic f is instantiated as a call with the elements' types would be. */
static bool fn_arg(Check *c, TCall *k, Type *const *params, int np, Type **ret) {
  Node *f = k->a[0];
  f->ty = &ty_void;
  if (f->kind != ND_IDENT || !f->name) {
    diag_error(c->diags, f->loc, "'%s' needs a function's name first", k->name);
    return false;
  }
  Cand *cs;
  int nc = ck_candidates(c, f->name, &cs);
  Sym *s = ck_global(c, f->name);
  bool fn = s ? s->decl->kind == DECL_FUNC : nc > 0;
  if (!fn || ck_map_get(&c->locals, f->name)) {
    diag_error(c->diags, f->loc, "'%s' is not a function", f->name);
    return false;
  }
  Val *vals = ck_alloc(c, (size_t)(np + 1) * sizeof *vals);
  for (int i = 0; i < np; i++) vals[i] = ck_val_of(params[i]);
  nc = ck_generic_cands(c, s, f, vals, np, &cs, nc);
  if (nc <= 0) {
    if (nc == 0) diag_error(c->diags, f->loc, "'%s' is not a function", f->name);
    return false;
  }
  int j = ck_resolve(c, f->name, NULL, f->loc, cs, nc, vals, np);
  if (j < 0) return false;
  for (int i = 0; i < np; i++)
    if (!type_equal(cs[j].params[i], params[i])) {
      diag_error(c->diags, f->loc, "'%s' takes %s as parameter %d, but the elements are %s",
                 f->name, ck_tname(cs[j].params[i]), i + 1, ck_tname(params[i]));
      return false;
    }
  if (!type_is_scalar(cs[j].ret)) {
    diag_error(c->diags, f->loc, "'%s' must return a scalar, not %s", f->name, ck_tname(cs[j].ret));
    return false;
  }
  for (int i = 0; cs[j].fn && i < np; i++)
    if (cs[j].fn->params[i]->is_ref) {
      diag_error(c->diags, f->loc, "'%s' takes parameter %d by reference; '%s' passes values",
                 f->name, i + 1, k->name);
      return false;
    }
  if (cs[j].fn && cs[j].fn->generic) ck_instance_use(c, cs[j].fn);
  k->n->tfn = cs[j].fn;
  k->n->tbuiltin = cs[j].fn ? -1 : cs[j].builtin;
  *ret = cs[j].ret;
  return true;
}

static Val map_op(Check *c, TCall *k) {
  if (!no_template(c, k) || !nargs_ok(c, k, 2, 1 + TILE_MAP_MAX_ARGS)) return ck_val_err();
  Type *shape = NULL;
  Type *params[TILE_MAP_MAX_ARGS];
  for (int i = 1; i < k->na; i++) {
    if (ck_is_err(k->v[i].ty)) return ck_val_err();
    if (is_tile(k->v[i].ty)) {
      if (shape && !same_shape(shape, k->v[i].ty)) {
        shape_error(c, k->n->loc, "tile_map", shape, k->v[i].ty);
        return ck_val_err();
      }
      shape = k->v[i].ty;
      params[i - 1] = k->v[i].ty->elem;
    } else {
      ck_default_type(c, k->a[i], &k->v[i]);
      params[i - 1] = k->v[i].ty;
    }
  }
  if (!shape) {
    diag_error(c->diags, k->n->loc, "tile_map needs at least one tile argument");
    return ck_val_err();
  }
  Type *ret;
  if (!fn_arg(c, k, params, k->na - 1, &ret)) return ck_val_err();
  return done(k->n, TOP_MAP, tile_like(c, k->n->loc, shape, ret));
}

static Val where_op(Check *c, TCall *k) {
  if (!no_template(c, k) || !nargs_ok(c, k, 3, 3)) return ck_val_err();
  Val cv = tile_arg(c, k, 0);
  if (ck_is_err(cv.ty) || ck_is_err(k->v[1].ty) || ck_is_err(k->v[2].ty)) return ck_val_err();
  if (cv.ty->elem->kind != TY_BOOL) {
    diag_error(c->diags, k->a[0]->loc, "tile_where's condition must be a tile of bool, not %s",
               ck_tname(cv.ty));
    return ck_val_err();
  }
  Type *elem = NULL;
  for (int i = 1; i < 3 && !elem; i++)
    if (is_tile(k->v[i].ty)) elem = k->v[i].ty->elem;
  if (!elem) {
    ck_default_type(c, k->a[1], &k->v[1]);
    elem = k->v[1].ty;
  }
  for (int i = 1; i < 3; i++) {
    if (is_tile(k->v[i].ty)) {
      if (!same_shape(cv.ty, k->v[i].ty)) {
        shape_error(c, k->n->loc, "tile_where", cv.ty, k->v[i].ty);
        return ck_val_err();
      }
      if (!type_equal(k->v[i].ty->elem, elem)) {
        diag_error(c->diags, k->a[i]->loc, "tile_where's values differ in element type");
        return ck_val_err();
      }
    } else if (!scalar_to_elem(c, k->a[i], &k->v[i], elem, "tile_where"))
      return ck_val_err();
  }
  return done(k->n, TOP_WHERE, tile_like(c, k->n->loc, cv.ty, elem));
}

/* The axis argument at index i (a constant 0 or 1 of a 2-D tile), or -1 when absent. */
static bool axis_arg(Check *c, TCall *k, int i, const Type *t, int *axis) {
  *axis = -1;
  if (i >= k->na) return true;
  Val v = k->v[i];
  if (ck_is_err(v.ty)) return false;
  if (!v.is_const || !ck_is_intlike(v.ty) || v.i < 0 || v.i > 1) {
    diag_error(c->diags, k->a[i]->loc, "the axis of '%s' must be the constant 0 or 1", k->name);
    return false;
  }
  if (t->ndim != 2) {
    diag_error(c->diags, k->a[i]->loc, "'%s' along an axis needs a 2-D tile, not %s", k->name,
               ck_tname(t));
    return false;
  }
  ck_convert(c, k->a[i], &k->v[i], &ty_i32, (Ctx){"axis", k->name, i + 1});
  *axis = (int)v.i;
  return true;
}

static Type *reduced(Check *c, TCall *k, Type *t, int axis, Type *elem) {
  if (axis < 0) return elem;
  int d = t->dims[axis == 0 ? 1 : 0];
  return make_tile(c, k->n->loc, elem, 1, &d);
}

static Val reduce_op(Check *c, TCall *k, TileOp op) {
  bool fn = op == TOP_REDUCE;
  if (!no_template(c, k) || !nargs_ok(c, k, 1 + fn, 2 + fn)) return ck_val_err();
  Val t = tile_arg(c, k, fn);
  if (ck_is_err(t.ty)) return ck_val_err();
  Type *elem = t.ty->elem;
  int axis;
  if (!axis_arg(c, k, 1 + fn, t.ty, &axis)) return ck_val_err();
  k->n->axis = axis;
  if (fn) {
    Type *ps[2] = {elem, elem}, *ret;
    if (!fn_arg(c, k, ps, 2, &ret)) return ck_val_err();
    if (!type_equal(ret, elem)) {
      diag_error(c->diags, k->a[0]->loc, "tile_reduce's function must return %s, not %s",
                 ck_tname(elem), ck_tname(ret));
      return ck_val_err();
    }
    return done(k->n, op, reduced(c, k, t.ty, axis, elem));
  }
  if (!type_is_numeric(elem)) {
    diag_error(c->diags, k->a[0]->loc, "'%s' needs numbers, not %s", k->name, ck_tname(t.ty));
    return ck_val_err();
  }
  bool arg = op == TOP_ARGMIN || op == TOP_ARGMAX;
  if (op == TOP_MIN || op == TOP_MAX || arg) {
    /* min and max combine as the builtins do (a NaN operand: see docs) */
    int first = 0,
        nb = builtin_overloads(op == TOP_MIN || op == TOP_ARGMIN ? "min" : "max", &first);
    k->n->tbuiltin = -1;
    for (int i = first; i < first + nb; i++)
      if (builtin_get(i)->nparams == 2 && type_equal(builtin_get(i)->params[0], elem))
        k->n->tbuiltin = i;
  }
  return done(k->n, op, reduced(c, k, t.ty, axis, arg ? &ty_i32 : elem));
}

/* tile_scan_inclusive(t), (f, t); tile_scan_exclusive(t), (f, t, init). */
static Val scan_op(Check *c, TCall *k, TileOp op) {
  if (!no_template(c, k)) return ck_val_err();
  bool fn = k->na >= 2;
  int want = fn ? (op == TOP_SCAN_EXC ? 3 : 2) : 1;
  if (!nargs_ok(c, k, want, want)) return ck_val_err();
  Val t = tile_arg(c, k, fn);
  if (ck_is_err(t.ty)) return ck_val_err();
  if (t.ty->ndim != 1) {
    diag_error(c->diags, k->a[fn]->loc, "'%s' scans a 1-D tile, not %s", k->name, ck_tname(t.ty));
    return ck_val_err();
  }
  Type *elem = t.ty->elem;
  k->n->axis = -1;
  if (!fn) {
    if (!type_is_numeric(elem)) {
      diag_error(c->diags, k->a[0]->loc, "'%s' sums numbers, not %s", k->name, ck_tname(t.ty));
      return ck_val_err();
    }
    return done(k->n, op, t.ty);
  }
  Type *ps[2] = {elem, elem}, *ret;
  if (!fn_arg(c, k, ps, 2, &ret)) return ck_val_err();
  if (!type_equal(ret, elem)) {
    diag_error(c->diags, k->a[0]->loc, "the function of '%s' must return %s, not %s", k->name,
               ck_tname(elem), ck_tname(ret));
    return ck_val_err();
  }
  if (op == TOP_SCAN_EXC && !scalar_to_elem(c, k->a[2], &k->v[2], elem, "the initial value"))
    return ck_val_err();
  return done(k->n, op, t.ty);
}

static Val shape_op(Check *c, TCall *k, TileOp op) {
  if (op == TOP_TRANSPOSE) {
    if (!no_template(c, k) || !nargs_ok(c, k, 1, 1)) return ck_val_err();
    Val t = tile_arg(c, k, 0);
    if (ck_is_err(t.ty)) return ck_val_err();
    if (t.ty->ndim != 2) {
      diag_error(c->diags, k->a[0]->loc, "tile_transpose needs a 2-D tile, not %s", ck_tname(t.ty));
      return ck_val_err();
    }
    int d[2] = {t.ty->dims[1], t.ty->dims[0]};
    return done(k->n, op, make_tile(c, k->n->loc, t.ty->elem, 2, d));
  }
  int rank = 0, dims[2] = {1, 1};
  if (!written_shape(c, k, &rank, dims, false) || !nargs_ok(c, k, 1, 1)) return ck_val_err();
  Val t = tile_arg(c, k, 0);
  if (ck_is_err(t.ty)) return ck_val_err();
  Type *r = make_tile(c, k->n->loc, t.ty->elem, rank, dims);
  if (ck_is_err(r)) return ck_val_err();
  if (op == TOP_RESHAPE && type_tile_count(r) != type_tile_count(t.ty)) {
    diag_error(c->diags, k->n->loc, "tile_reshape keeps the element count: %s has %lld, %s %lld",
               ck_tname(t.ty), (long long)type_tile_count(t.ty), ck_tname(r),
               (long long)type_tile_count(r));
    return ck_val_err();
  }
  if (op == TOP_BROADCAST) {
    /* numpy's rule: extents aligned from the right, each 1 or equal */
    for (int i = 0; i < t.ty->ndim; i++) {
      int s = t.ty->dims[t.ty->ndim - 1 - i], d = dims[rank - 1 - i];
      if (i >= rank || (s != 1 && s != d)) {
        diag_error(c->diags, k->n->loc, "cannot broadcast %s to %s", ck_tname(t.ty), ck_tname(r));
        return ck_val_err();
      }
    }
  }
  return done(k->n, op, r);
}

static Val sort_op(Check *c, TCall *k) {
  if (!no_template(c, k) || !nargs_ok(c, k, 1, 2)) return ck_val_err();
  for (int i = 0; i < k->na; i++) {
    Val t = tile_arg(c, k, i);
    if (ck_is_err(t.ty)) return ck_val_err();
    Node *a = k->a[i];
    if (a->kind != ND_IDENT || !a->var || a->var->is_const) {
      diag_error(c->diags, a->loc,
                 "tile_sort sorts tile variables in place; argument %d is not one", i + 1);
      return ck_val_err();
    }
    if (t.ty->ndim != 1 || (i && !same_shape(t.ty, k->v[0].ty))) {
      diag_error(c->diags, a->loc, "tile_sort needs 1-D tiles of one length");
      return ck_val_err();
    }
  }
  if (!type_is_numeric(k->v[0].ty->elem)) {
    diag_error(c->diags, k->a[0]->loc, "tile_sort's keys must be numbers, not %s",
               ck_tname(k->v[0].ty));
    return ck_val_err();
  }
  if (k->na == 2 && k->a[0]->var == k->a[1]->var) {
    diag_error(c->diags, k->a[1]->loc, "tile_sort's keys and values must be two variables");
    return ck_val_err();
  }
  return done(k->n, TOP_SORT, &ty_void);
}

/* tile_matmul(a, b[, c]): a tile<T, M, K>, b tile<T, K, N>, c and the result tile<R, M, N>;
 * EXACT: T = R, float32 or float64; FAST: T float16, bfloat16 or float32 (through TF32), R
 * float32. */
static Val matmul_op(Check *c, TCall *k, TileOp op) {
  if (!no_template(c, k) || !nargs_ok(c, k, 2, 3)) return ck_val_err();
  Type *t[3] = {NULL, NULL, NULL};
  for (int i = 0; i < k->na; i++) {
    t[i] = tile_arg(c, k, i).ty;
    if (ck_is_err(t[i])) return ck_val_err();
    if (t[i]->ndim != 2) {
      diag_error(c->diags, k->a[i]->loc, "argument %d of '%s' must be a 2-D tile, not %s", i + 1,
                 k->name, ck_tname(t[i]));
      return ck_val_err();
    }
  }
  Type *in = t[0]->elem;
  bool fast = op == TOP_MATMUL_FAST;
  bool in_ok = fast ? in->kind == TY_F16 || in->kind == TY_BF16 || in->kind == TY_F32
                    : in->kind == TY_F32 || in->kind == TY_F64;
  if (!in_ok) {
    diag_error(c->diags, k->a[0]->loc, "'%s' multiplies tiles of %s, not of %s", k->name,
               fast ? "float16, bfloat16 or float32" : "float32 or float64", ck_tname(in));
    if (!fast && (in->kind == TY_F16 || in->kind == TY_BF16))
      diag_note(c->diags, k->a[0]->loc,
                "tile_matmul_fast takes float16 and bfloat16 (float32 accumulate)");
    return ck_val_err();
  }
  if (!type_equal(t[1]->elem, in)) {
    diag_error(c->diags, k->a[1]->loc, "'%s' of tiles of %s and %s: the element types must match",
               k->name, ck_tname(in), ck_tname(t[1]->elem));
    return ck_val_err();
  }
  if (t[0]->dims[1] != t[1]->dims[0]) {
    diag_error(c->diags, k->n->loc,
               "'%s' of %s and %s: the inner extents differ (%d columns, %d rows)", k->name,
               ck_tname(t[0]), ck_tname(t[1]), t[0]->dims[1], t[1]->dims[0]);
    return ck_val_err();
  }
  Type *out = fast ? &ty_f32 : in;
  int dims[2] = {t[0]->dims[0], t[1]->dims[1]};
  Type *r = make_tile(c, k->n->loc, out, 2, dims);
  if (ck_is_err(r)) return ck_val_err();
  if (t[2] && (!same_shape(t[2], r) || !type_equal(t[2]->elem, out))) {
    diag_error(c->diags, k->a[2]->loc, "the accumulator of '%s' must be %s, not %s", k->name,
               ck_tname(r), ck_tname(t[2]));
    return ck_val_err();
  }
  return done(k->n, op, r);
}

Val ck_tile_call(Check *c, Node *n, TileOp op) {
  TCall k = {.n = n, .name = n->name, .na = ck_count_list(n->args)};
  k.a = ck_alloc(c, (size_t)(k.na + 1) * sizeof *k.a);
  k.v = ck_alloc(c, (size_t)(k.na + 1) * sizeof *k.v);
  bool fn = op == TOP_MAP || op == TOP_REDUCE ||
            ((op == TOP_SCAN_INC || op == TOP_SCAN_EXC) && k.na >= 2);
  int i = 0;
  for (Node *a = n->args; a; a = a->next, i++) {
    k.a[i] = a;
    k.v[i] = fn && i == 0 ? ck_val_of(&ty_void) : ck_expr(c, a);
  }
  n->axis = -1;
  n->tbuiltin = -1;
  switch (op) {
    case TOP_ZEROS:
    case TOP_ONES:
    case TOP_FULL:
    case TOP_ARANGE: return make_op(c, &k, op);
    case TOP_LOAD: return load_op(c, &k);
    case TOP_STORE:
    case TOP_ATOMIC_ADD: return store_op(c, &k, op);
    case TOP_MAP: return map_op(c, &k);
    case TOP_WHERE: return where_op(c, &k);
    case TOP_SCAN_INC:
    case TOP_SCAN_EXC: return scan_op(c, &k, op);
    case TOP_TRANSPOSE:
    case TOP_BROADCAST:
    case TOP_RESHAPE: return shape_op(c, &k, op);
    case TOP_SORT: return sort_op(c, &k);
    case TOP_MATMUL:
    case TOP_MATMUL_FAST: return matmul_op(c, &k, op);
    default: return reduce_op(c, &k, op);
  }
}
