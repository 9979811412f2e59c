/* check_vecn.c: the builtins of vec<T, N> and mat<T, M, N>, slices and indices from the end.
 *
 * Requires check_overload.c (candidates, resolution) and builtins.c's
 * builtin_intern. Produces the builtin rows a call over vec<T, N> arguments
 * or mat<T, M, N> arguments can take (made for the argument types met, not
 * listed in the table: there are thousands of such types; diag and outer
 * also over short-named vectors, where the matrix they make has no short
 * name), the diagnostic for determinant and inverse of a matrix they do not
 * take, the check of a slice v[lo:hi] of a vector, quat or matrix (rows
 * lo .. hi - 1) (rewritten into a call of the row "[:]", kn_slice<lo>_<len>_<code>, which
 * emit_vecn.c defines) and of a negative constant index (rewritten to count
 * from the start). Breaks: every cname here must match a function
 * stdlib/kern_vecn.h's macros define for the type.
 */
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* What a template row applies to. */
enum { ANY = 0, FLT = 1, SGN = 2, INT = 4, N3 = 8, SQ = 16, DI = 32 };

/* determinant and inverse of mat<T, N, N>: the sizes Warp has. */
enum { DI_MIN = 2, DI_MAX = 4 };

/* ret and params: V the vector, E its element type, B bool, I int32. */
typedef struct Tmpl {
  const char *name, *stem;
  char ret;
  const char *params;
  int only;
} Tmpl;

static const Tmpl tmpls[] = {
    {"op+", "add", 'V', "VV", ANY},
    {"op-", "sub", 'V', "VV", ANY},
    {"neg", "neg", 'V', "V", ANY},
    {"op==", "eq", 'B', "VV", ANY},
    {"op!=", "ne", 'B', "VV", ANY},
    {"op*", "mul", 'V', "VV", ANY},
    {"op*", "mul", 'V', "VE", ANY},
    {"op*", "mul", 'V', "EV", ANY},
    {"op/", "div", 'V', "VV", ANY},
    {"op/", "div", 'V', "VE", ANY},
    {"op/", "div", 'V', "EV", ANY},
    {"op%", "mod", 'V', "VV", INT},
    {"op%", "mod", 'V', "VE", INT},
    {"dot", "dot", 'E', "VV", ANY},
    {"min", "min", 'V', "VV", ANY},
    {"max", "max", 'V', "VV", ANY},
    {"min", "min", 'E', "V", ANY},
    {"max", "max", 'E', "V", ANY},
    {"clamp", "clamp", 'V', "VVV", ANY},
    {"clamp", "clamp", 'V', "VEE", ANY},
    {"argmin", "argmin", 'I', "V", ANY},
    {"argmax", "argmax", 'I', "V", ANY},
    {"cw_mul", "cw_mul", 'V', "VV", ANY},
    {"cw_div", "cw_div", 'V', "VV", ANY},
    {"abs", "abs", 'V', "V", SGN},
    {"sign", "sign", 'V', "V", SGN},
    {"cross", "cross", 'V', "VV", N3},
    {"length", "length", 'E', "V", FLT},
    {"length_sq", "length_sq", 'E', "V", FLT},
    {"distance", "distance", 'E', "VV", FLT},
    {"normalize", "normalize", 'V', "V", FLT},
    {"lerp", "lerp", 'V', "VVE", FLT},
    {"lerp", "lerp", 'V', "VVV", FLT},
    {"sqrt", "sqrt", 'V', "V", FLT},
    {"floor", "floor", 'V', "V", FLT},
    {"ceil", "ceil", 'V', "V", FLT},
    {"round", "round", 'V', "V", FLT},
    {"trunc", "trunc", 'V', "V", FLT},
    {"isnan", "isnan", 'B', "V", FLT},
    {"isinf", "isinf", 'B', "V", FLT},
    {"isfinite", "isfinite", 'B', "V", FLT},
};

/* Matrices: M the matrix, R its row vector, C its column vector (a square
 * matrix's diagonal too), T its transpose. */
static const Tmpl mtmpls[] = {
    {"op+", "add", 'M', "MM", ANY},
    {"op-", "sub", 'M', "MM", ANY},
    {"neg", "neg", 'M', "M", ANY},
    {"op==", "eq", 'B', "MM", ANY},
    {"op!=", "ne", 'B', "MM", ANY},
    {"op*", "mul", 'M', "ME", ANY},
    {"op*", "mul", 'M', "EM", ANY},
    {"op/", "div", 'M', "ME", ANY},
    {"op*", "mul", 'C', "MR", ANY},
    {"cw_mul", "cw_mul", 'M', "MM", ANY},
    {"cw_div", "cw_div", 'M', "MM", ANY},
    {"transpose", "transpose", 'T', "M", ANY},
    {"trace", "trace", 'E', "M", SQ},
    {"get_diag", "get_diag", 'C', "M", SQ},
    {"determinant", "determinant", 'E', "M", FLT | SQ | DI},
    {"inverse", "inverse", 'M', "M", FLT | SQ | DI},
};

static Type *tmpl_type(char k, Type *v) {
  switch (k) {
    case 'V':
    case 'M': return v;
    case 'E': return v->elem;
    case 'B': return &ty_bool;
    case 'R': return type_mat_row(v);
    case 'C': return type_vecn(v->elem, v->n);
    case 'T': return type_matn(v->elem, type_mat_cols(v), v->n);
    default: return &ty_i32;
  }
}

static bool applies(const Tmpl *t, const Type *v) {
  if ((t->only & FLT) && !type_is_float(v->elem)) return false;
  if ((t->only & SGN) && !type_is_float(v->elem) && !type_is_signed(v->elem)) return false;
  if ((t->only & INT) && !type_is_int(v->elem)) return false;
  if ((t->only & SQ) && (v->kind != TY_MAT || type_mat_cols(v) != v->n)) return false;
  if ((t->only & DI) && (v->n < DI_MIN || v->n > DI_MAX)) return false;
  return !(t->only & N3) || v->n == 3;
}

static int add_cand(Check *c, const char *name, const char *stem, Type *ret, int np, Type **ps,
                    Cand *cs, int nc) {
  int index = builtin_intern(name, stem, ret, np, ps);
  if (index < 0) longjmp(c->oom, 1);
  const Builtin *b = builtin_get(index);
  cs[nc] = (Cand){NULL, index, b->nparams, b->params, b->ret};
  return nc + 1;
}

/* Appends the rows named `name` over vector or matrix v to cs; returns the new count. */
static int add_rows(Check *c, const char *name, Type *v, Cand *cs, int nc) {
  bool mat = v->kind == TY_MAT;
  const Tmpl *ts = mat ? mtmpls : tmpls;
  size_t nt = mat ? sizeof mtmpls / sizeof mtmpls[0] : sizeof tmpls / sizeof tmpls[0];
  for (size_t i = 0; i < nt; i++) {
    const Tmpl *t = &ts[i];
    if (strcmp(t->name, name) != 0 || !applies(t, v)) continue;
    Type *ps[BUILTIN_MAX_PARAMS];
    int np = (int)strlen(t->params);
    for (int k = 0; k < np; k++) ps[k] = tmpl_type(t->params[k], v);
    nc = add_cand(c, t->name, t->stem, tmpl_type(t->ret, v), np, ps, cs, nc);
  }
  return nc;
}

/* a * b of two matrices, one of them a mat<T, M, N>: the product where the
 * shapes chain (a's columns are b's rows) and the element types agree. */
static int add_product(Check *c, const Val *vals, int na, Cand *cs, int nc) {
  Type *a = na == 2 ? vals[0].ty : NULL, *b = na == 2 ? vals[1].ty : NULL;
  if (!a || !b || a->kind != TY_MAT || b->kind != TY_MAT || (!a->generic && !b->generic) ||
      a->elem != b->elem || type_mat_cols(a) != b->n)
    return nc;
  Type *ps[2] = {a, b}, *r = type_matn(a->elem, a->n, type_mat_cols(b));
  return r ? add_cand(c, "op*", "mul", r, 2, ps, cs, nc) : nc;
}

/* A vector of any length and numeric type (named or not; not spatial_vector). */
static bool plain_vec(const Type *v) {
  return v && v->kind == TY_VEC && v != &ty_svec && type_vecn(v->elem, v->n) == v;
}

/* diag(v) and outer(a, b) whose matrix has no short name (the named ones are
 * the table's): diag of a vec<T, N> is a mat<T, N, N>, outer of a vec<T, M>
 * and a vec<T, N> a mat<T, M, N>, whether the vectors have short names or not. */
static int add_vec_mats(Check *c, const char *name, const Val *vals, int na, Cand *cs, int nc) {
  Type *a = na >= 1 ? vals[0].ty : NULL, *b = na == 2 ? vals[1].ty : NULL;
  bool diag = na == 1 && strcmp(name, "diag") == 0;
  bool outer = na == 2 && strcmp(name, "outer") == 0;
  if ((!diag && !outer) || !plain_vec(a) || (outer && (!plain_vec(b) || a->elem != b->elem)))
    return nc;
  Type *ps[2] = {a, b}, *r = type_matn(a->elem, a->n, outer ? b->n : a->n);
  if (!r || !r->generic) return nc;
  return add_cand(c, name, name, r, na, ps, cs, nc);
}

int ck_vecn_cands(Check *c, const char *name, const Val *vals, int na, Cand **cs, int nc) {
  const int per = (int)(sizeof tmpls / sizeof tmpls[0]) + 1;
  if (!name) return nc;
  bool need = strcmp(name, "diag") == 0 || strcmp(name, "outer") == 0;
  for (int i = 0; i < na && !need; i++)
    need = type_vecn_index(vals[i].ty) >= 0 || type_matn_index(vals[i].ty) >= 0;
  if (!need) return nc;
  Cand *out = ck_alloc(c, (size_t)(nc + per * na + 2) * sizeof *out);
  if (nc) memcpy(out, *cs, (size_t)nc * sizeof *out);
  int nc0 = nc;
  for (int i = 0; i < na; i++) {
    Type *v = vals[i].ty;
    bool seen = type_vecn_index(v) < 0 && type_matn_index(v) < 0;
    for (int k = 0; k < i && !seen; k++) seen = vals[k].ty == v;
    if (!seen) nc = add_rows(c, name, v, out, nc);
  }
  if (strcmp(name, "op*") == 0) nc = add_product(c, vals, na, out, nc);
  nc = add_vec_mats(c, name, vals, na, out, nc);
  if (nc != nc0) *cs = out;
  return nc;
}

bool ck_vecn_unsupported(Check *c, SrcLoc at, const char *name, const Val *vals, int na) {
  if (!name || na != 1 || (strcmp(name, "determinant") != 0 && strcmp(name, "inverse") != 0))
    return false;
  const Type *m = vals[0].ty;
  if (type_matn_index(m) < 0) return false;
  if (!type_is_float(m->elem)) {
    diag_error(c->diags, at, "'%s' takes a float matrix, not %s", name, ck_tname(m));
    diag_note(c->diags, at, "convert it first, e.g. mat<float64, %d, %d>(m)", m->n,
              type_mat_cols(m));
    return true;
  }
  if (type_mat_cols(m) != m->n) {
    diag_error(c->diags, at, "'%s' takes a square matrix, not %s", name, ck_tname(m));
    return true;
  }
  if (m->n >= DI_MIN && m->n <= DI_MAX) return false;
  diag_error(c->diags, at, "'%s' takes a matrix of 2, 3 or 4 rows and columns, not %s", name,
             ck_tname(m));
  return true;
}

/* ---- indices from the end and slices ------------------------------------------------ */

bool ck_index_from_end(Check *c, Node *idx, const Val *k, const Type *t) {
  if (!k->is_const || ck_is_err(k->ty) || k->i >= 0) return true;
  if (k->i < -(i128)t->n) {
    diag_error(c->diags, idx->loc,
               "index %s is out of range for %s (-%d..-1 count from the end, 0..%d from the start)",
               ck_val_text(c, k), ck_tname(t), t->n, t->n - 1);
    return false;
  }
  Val v = *k;
  v.i += t->n;
  ck_set_const(idx, v);
  return true;
}

/* A slice bound: a constant integer in -n..n, negative counting from the end. */
static bool slice_bound(Check *c, Node *a, const Type *t, int *out) {
  Val v = ck_expr(c, a);
  if (ck_is_err(v.ty)) return false;
  if (!ck_is_intlike(v.ty)) {
    diag_error(c->diags, a->loc, "a slice bound must be an integer, not %s", ck_tname(v.ty));
    return false;
  }
  if (!v.is_const) {
    diag_error(c->diags, a->loc, "a slice bound must be a constant");
    diag_note(c->diags, a->loc,
              "the length of a slice is part of its type; index with [k] instead");
    return false;
  }
  i128 x = v.i < 0 ? v.i + t->n : v.i;
  if (x < 0 || x > t->n) {
    diag_error(c->diags, a->loc, "slice bound %s is out of range for %s (-%d..%d)",
               ck_val_text(c, &v), ck_tname(t), t->n, t->n);
    return false;
  }
  if (ck_is_untyped(v.ty)) ck_convert(c, a, &v, &ty_i32, (Ctx){"slice bound", NULL, 0});
  *out = (int)x;
  return true;
}

/* The slice's node becomes a call of its row, with the sliced value as
 * argument: components (a matrix's rows are runs of its elements) lo * w ..,
 * (hi - lo) * w of them, w the width of a row (1 for a vector). */
static Val slice_call(Check *c, Node *n, Type *t, int lo, int hi) {
  bool mat = t->kind == TY_MAT;
  int w = mat ? type_mat_cols(t) : 1;
  Type *r = mat ? type_matn(t->elem, hi - lo, w) : type_vecn(t->elem, hi - lo);
  char stem[32];
  snprintf(stem, sizeof stem, "slice%d_%d", lo * w, (hi - lo) * w);
  int index = builtin_intern("[:]", stem, r, 1, &t);
  if (index < 0) longjmp(c->oom, 1);
  Node *base = n->lhs;
  base->next = NULL;
  n->kind = ND_CALL;
  n->call_kind = CALL_BUILTIN;
  n->builtin = index;
  n->name = "[:]";
  n->args = base;
  n->nargs = 1;
  n->lhs = NULL;
  n->op = 0;
  n->ival = 0;
  n->ty = r;
  return ck_val_of(r);
}

Val ck_slice(Check *c, Node *n, Type *t) {
  if (t->kind != TY_VEC && t->kind != TY_QUAT && t->kind != TY_MAT) {
    diag_error(c->diags, n->loc, "cannot slice a value of type %s", ck_tname(t));
    diag_note(c->diags, n->loc, "vectors, quats and matrices have slices, v[a:b]");
    return ck_val_err();
  }
  int b[2] = {0, t->n};
  Node *a = n->args;
  for (int k = 0; k < 2; k++) {
    if (!(n->ival & (1u << k))) continue;
    if (!slice_bound(c, a, t, &b[k])) return ck_val_err();
    a = a->next;
  }
  if (b[1] <= b[0]) {
    diag_error(c->diags, n->loc, "slice [%d:%d] of %s is empty", b[0], b[1], ck_tname(t));
    diag_note(c->diags, n->loc, "a slice has at least one component: its end is past its start");
    return ck_val_err();
  }
  return slice_call(c, n, t, b[0], b[1]);
}
