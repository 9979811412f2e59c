/* parse_type.c: the type grammar of the parser.
 *
 * Requires: parse_internal.h (the Parser, its tokens and diagnostics, and
 * ps_parse_binary/ps_parse_expr for the expressions a type holds: a tile's
 * extents, a local array's sizes). Produces: TypeExprs for type names,
 * `vec<T, N>`, `mat<T, M, N>`, `quat<T>`, `tile<T, ...>`, array dimensions `[,,]` and a
 * local array's fixed extents; vec, mat and quat types are resolved here (their
 * lengths are literals) unless their element is a name (a generic function's
 * type variable, TypeExpr.vecn_elem); named types are left to the checker.
 */
#include <stdbool.h>
#include <string.h>

#include "parse_internal.h"

bool ps_at_type_start(Parser *p) {
  return at(p, TK_TYPENAME) || at(p, TK_IDENT) || at(p, TK_AUTO) || at(p, TK_VOID);
}

/* dims = '[' ','* ']' */
void ps_parse_dims(Parser *p, TypeExpr *te) {
  if (!ps_accept(p, TK_LBRACKET)) return;
  int ndim = 1;
  while (ps_accept(p, TK_COMMA)) ndim++;
  if (ps_expect(p, TK_RBRACKET, "to close the array type") && ndim > PARSE_MAX_DIMS)
    ps_report(p, loc_span(te->loc, prev_loc(p)), "arrays have at most %d dimensions, not %d",
              PARSE_MAX_DIMS, ndim);
  /* Later passes may size tables by ndim: never hand them more than 4. */
  te->ndim = ndim > PARSE_MAX_DIMS ? PARSE_MAX_DIMS : ndim;
  te->loc = loc_span(te->loc, prev_loc(p));
}

/* Is this `tile <`, the start of a tile type? */
bool ps_at_tile_type(Parser *p, int k) {
  Token *t = peek(p, k);
  return t->kind == TK_IDENT && t->loc.len == 4 && memcmp(t->text, "tile", 4) == 0 &&
         peek(p, k + 1)->kind == TK_LT;
}

/* Does token t name a type variable of the generic function being read? */
static bool is_tparam(Parser *p, const Token *t) {
  for (int i = 0; p->fn && t->kind == TK_IDENT && i < p->fn->ntparams; i++)
    if (strlen(p->fn->tparams[i]) == t->loc.len &&
        memcmp(p->fn->tparams[i], t->text, t->loc.len) == 0)
      return true;
  return false;
}

/* Is token k `vec <`, `mat <` or `quat <`? */
static bool at_vecn_head(Parser *p, int k) {
  Token *t = peek(p, k);
  bool head = (t->kind == TK_IDENT && t->loc.len == 3 &&
               (memcmp(t->text, "vec", 3) == 0 || memcmp(t->text, "mat", 3) == 0)) ||
              (t->kind == TK_TYPENAME && t->ty == &ty_quat && t->loc.len == 4);
  return head && peek(p, k + 1)->kind == TK_LT;
}

/* Is this `vec < TYPENAME`, `mat < TYPENAME` or `quat < TYPENAME`, the start
 * of vec<T, N>, mat<T, M, N> or quat<T>? (quat alone is a type name.) The
 * element may also be a type variable of the generic function being read. */
bool ps_at_vecn_type(Parser *p, int k) {
  Token *e = peek(p, k + 2);
  return at_vecn_head(p, k) && (e->kind == TK_TYPENAME || is_tparam(p, e));
}

/* A vec<T, N>, mat<T, M, N> or quat<T> whose element T is a name: left to the
 * checker, which resolves it in each instance of the generic function. */
static void defer_vecn(Parser *p, TypeExpr *te, const Token *et, char kind, int rows, int cols) {
  te->builtin = NULL;
  te->vecn_elem = ps_tok_text(p, et);
  te->vecn_kind = kind;
  te->vecn_rows = rows;
  te->vecn_cols = cols;
}

/* quat_type = 'quat' '<' (TYPENAME | IDENT) '>': float16, bfloat16, float32 or float64 */
static void parse_quat_type(Parser *p, TypeExpr *te) {
  ps_advance(p); /* quat */
  ps_advance(p); /* < */
  Token *et = ps_advance(p);
  ps_expect(p, TK_GT, "to close 'quat<...>'");
  te->loc = loc_span(te->loc, prev_loc(p));
  if (et->kind == TK_IDENT) {
    defer_vecn(p, te, et, 'q', 4, 1);
    return;
  }
  te->builtin = type_quatn(et->ty);
  if (!te->builtin) {
    ps_report(p, et->loc, "a quat<T> holds float16, bfloat16, float32 or float64, not %s",
              type_name(et->ty));
    te->builtin = &ty_error;
  }
}

/* A length among vec<...> or mat<...>: an integer literal 1..VECN_MAX, else 0 (reported). */
static int parse_vecn_length(Parser *p, bool mat) {
  const char *what = mat ? "mat<T, M, N>" : "vec<T, N>";
  Token *nt = tok(p);
  int n = 0;
  if (nt->kind == TK_INT && nt->ival >= 1 && nt->ival <= VECN_MAX)
    n = (int)nt->ival;
  else if (nt->kind == TK_INT)
    ps_report(p, nt->loc, "a %s has 1 to %d %s, not %.*s", what, VECN_MAX,
              mat ? "rows and columns" : "components", (int)nt->loc.len, nt->text);
  else
    ps_report(p, nt->loc, "the %s of %s is an integer literal from 1 to %d",
              mat ? "shape" : "length", what, VECN_MAX);
  if (nt->kind != TK_GT) ps_advance(p);
  return n;
}

/* vecn_type = ('vec' '<' TYPENAME ',' INT | 'mat' '<' TYPENAME ',' INT ',' INT) '>':
 * the lengths are literals, 1 to 16 */
void ps_parse_vecn_type(Parser *p, TypeExpr *te) {
  if (tok(p)->kind == TK_TYPENAME) {
    parse_quat_type(p, te);
    return;
  }
  bool mat = ps_advance(p)->text[0] == 'm';
  ps_advance(p); /* < */
  Token *et = ps_advance(p);
  te->builtin = &ty_error;
  int n = 0, cols = 1;
  if (ps_expect(p, TK_COMMA, "after the element type")) {
    n = parse_vecn_length(p, mat);
    if (mat && ps_expect(p, TK_COMMA, "after the rows of 'mat<...>'"))
      cols = parse_vecn_length(p, mat);
  }
  ps_expect(p, TK_GT, mat ? "to close 'mat<...>'" : "to close 'vec<...>'");
  te->loc = loc_span(te->loc, prev_loc(p));
  if (n && cols && et->kind == TK_IDENT)
    defer_vecn(p, te, et, mat ? 'm' : 'v', n, cols);
  else if (n && cols && !type_is_numeric(et->ty))
    ps_report(p, et->loc, "a %s holds numbers, not %s", mat ? "mat<T, M, N>" : "vec<T, N>",
              type_name(et->ty));
  else if (n && cols)
    te->builtin = mat ? type_matn(et->ty, n, cols) : type_vecn(et->ty, n);
}

/* A shape extent among <...>: an expression above the comparisons, so the
 * closing '>' ends it (`tile<int, N * 2>`). */
Node *ps_parse_shape_expr(Parser *p) { return ps_parse_binary(p, 8); }

/* tile_type = 'tile' '<' TYPENAME (',' shape){1,2} '>' */
static void parse_tile_type(Parser *p, TypeExpr *te) {
  ps_advance(p); /* tile */
  ps_advance(p); /* < */
  Token *et = tok(p);
  if (et->kind == TK_TYPENAME) {
    te->builtin = et->ty;
    ps_advance(p);
  } else {
    ps_syntax_error(p, "expected an element type in 'tile<...>', found %s", ps_tok_desc(p, et));
    te->builtin = &ty_error;
  }
  while (!p->panic && ps_accept(p, TK_COMMA)) {
    Node *d = ps_parse_shape_expr(p);
    if (te->tile_rank < 2)
      te->tile_shape[te->tile_rank] = d;
    else
      ps_report(p, d->loc, "a tile has 1 or 2 dimensions");
    te->tile_rank++;
  }
  if (te->tile_rank == 0 && !p->panic)
    ps_syntax_error(p, "expected ',' and the tile's shape, found %s", ps_tok_desc(p, tok(p)));
  if (te->tile_rank > 2) te->tile_rank = 2;
  ps_expect(p, TK_GT, "to close 'tile<...>'");
  te->loc = loc_span(te->loc, prev_loc(p));
  if (at(p, TK_LBRACKET)) {
    ps_report(p, tok(p)->loc, "tiles cannot be array elements");
    ps_parse_dims(p, te);
    te->ndim = 0;
  }
}

/* type = (TYPENAME | IDENT | 'auto' | 'void') dims? | tile_type */
TypeExpr *ps_parse_type(Parser *p) {
  TypeExpr *te = ps_alloc(p, sizeof *te);
  Token *t = tok(p);
  te->loc = t->loc;
  if (ps_at_tile_type(p, 0)) {
    parse_tile_type(p, te);
    return te;
  }
  /* where a type must be, `vec<T, ...>` is one whatever T is (a return type
   * is read before its function's type variables) */
  TokKind ek = peek(p, 2)->kind;
  if (at_vecn_head(p, 0) && (ek == TK_TYPENAME || ek == TK_IDENT)) {
    ps_parse_vecn_type(p, te);
    ps_parse_dims(p, te);
    return te;
  }
  switch (t->kind) {
    case TK_TYPENAME: te->builtin = t->ty; break;
    case TK_VOID: te->builtin = &ty_void; break;
    case TK_IDENT: te->name = ps_tok_text(p, t); break;
    case TK_AUTO: te->is_auto = true; break;
    default:
      ps_syntax_error(p, "expected a type, found %s", ps_tok_desc(p, t));
      te->builtin = &ty_error;
      return te;
  }
  ps_advance(p);
  if (!te->is_auto) ps_parse_dims(p, te);
  return te;
}

/* fixed = '[' expr (',' expr)* ']' after the name of a local or a
 * parameter: a local array's extents (constant expressions, checked later). */
void ps_parse_fixed_dims(Parser *p, TypeExpr *te) {
  ps_advance(p); /* '[' */
  if (at(p, TK_RBRACKET)) {
    ps_report(p, tok(p)->loc, "a local array needs its size, like 'float buf[16]'");
    te->fixed[te->nfixed++] = ps_error_node(p, tok(p)->loc);
    ps_advance(p);
    return;
  }
  do {
    Node *d = ps_parse_expr(p);
    if (te->nfixed < PARSE_MAX_DIMS)
      te->fixed[te->nfixed++] = d;
    else
      ps_report(p, d->loc, "a local array has at most %d dimensions", PARSE_MAX_DIMS);
  } while (!p->panic && ps_accept(p, TK_COMMA));
  ps_expect(p, TK_RBRACKET, "to close the array's size");
}
