/* parser.c: tokens -> one Module's syntax tree (recursive descent).
 *
 * Requires: lexer.re (lex_open: tokens on demand), the arena, and parse_type.c
 * (the type grammar; parse_internal.h is what the two share). Produces: a Module whose
 * declarations, statements and expressions carry their full source range;
 * imports are recorded, not followed (front.c does that). Breaks: nothing
 * downstream may assume the tree is complete after a syntax error: a missing
 * or malformed expression becomes a placeholder ND_INT node whose `ty` is
 * already &ty_error: the error was reported, and the checker should take a
 * preset ty_error as "say nothing more about this".
 *
 * Error recovery is panic mode: the first syntax error of a statement is
 * reported, later ones are suppressed until the parser resynchronises at a
 * `;` or `}` of the same nesting (or at a module keyword at top level). A
 * missing `;` before a token on a new line is reported and then assumed, which
 * keeps one forgotten semicolon from swallowing the next statement. Nesting
 * deeper than PARSE_MAX_DEPTH is reported once and stops the parse: the rest
 * of the file reads as end of input, so there is no deep recursion at all.
 * A chain of binary operators is a loop here, but it nests in the tree (the
 * left operand holds the chain so far), so a chain longer than AST_MAX_DEPTH,
 * which the checker would refuse, stops the parse the same way: tokens are
 * lexed as the parse asks for them, so an endless `x + x + ...` costs memory
 * for the first AST_MAX_DEPTH terms only. An `else if` chain is a loop too,
 * and not nesting: its ifs hang off each other's else, at one depth.
 * Lexer errors are TK_ERROR tokens: skipped, and a syntax error right after
 * one is not reported (the lexer already said what is wrong there).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

/* ---- tokens ---------------------------------------------------------------- */

static void skip_error_tokens(Parser *p) {
  p->after_err = false;
  while (tok_at(p, p->pos)->kind == TK_ERROR) {
    p->pos++;
    p->after_err = true;
  }
}

Token *ps_advance(Parser *p) {
  Token *t = tok(p);
  if (p->abort || t->kind == TK_EOF) return t;
  p->prev = p->pos;
  p->pos++;
  skip_error_tokens(p);
  /* Having consumed a `;` or `}` the parser is back in step with the text. */
  if (t->kind == TK_SEMI || t->kind == TK_RBRACE) p->panic = false;
  return t;
}

bool ps_accept(Parser *p, TokKind k) {
  if (!at(p, k)) return false;
  ps_advance(p);
  return true;
}

/* Nesting too deep or out of memory: the rest of the file reads as end of
 * input (and is never lexed). */
static void stop(Parser *p) {
  if (p->abort) return;
  p->eof = (Token){.kind = TK_EOF, .loc = tok_at(p, p->pos)->loc};
  p->abort = true;
}

/* ---- diagnostics ----------------------------------------------------------- */

/* "identifier 'foo'", "keyword 'while'", "type name 'float'", "';'" ... */
const char *ps_tok_desc(Parser *p, const Token *t) {
  switch (t->kind) {
    case TK_IDENT:
    case TK_INT:
    case TK_FLOAT:
    case TK_TYPENAME: {
      int n = t->loc.len > 40 ? 40 : (int)t->loc.len;
      const char *s = arena_printf(p->arena, "%s '%.*s'%s", tok_kind_name(t->kind), n, t->text,
                                   n < (int)t->loc.len ? "..." : "");
      return s ? s : tok_kind_name(t->kind);
    }
    default: return tok_kind_name(t->kind);
  }
}

static void vreport(Parser *p, SrcLoc loc, const char *fmt, va_list ap) {
  char msg[2 * AST_MAX_IDENT + 512]; /* room for two names at the limit */
  vsnprintf(msg, sizeof msg, fmt, ap);
  diag_error(p->diags, loc, "%s", msg);
}

/* A recoverable error: reported unless the parser is already in panic. */
void ps_report(Parser *p, SrcLoc loc, const char *fmt, ...) {
  if (p->panic || p->abort) return;
  va_list ap;
  va_start(ap, fmt);
  vreport(p, loc, fmt, ap);
  va_end(ap);
}

/* An error at the current token after which the parser must resynchronise.
 * Returns whether it was reported (a note may then follow it). */
bool ps_syntax_error(Parser *p, const char *fmt, ...) {
  bool said = !p->panic && !p->abort && !p->after_err;
  if (said) {
    va_list ap;
    va_start(ap, fmt);
    vreport(p, tok(p)->loc, fmt, ap);
    va_end(ap);
  }
  p->panic = true;
  return said;
}

bool ps_expect(Parser *p, TokKind k, const char *where) {
  if (ps_accept(p, k)) return true;
  ps_syntax_error(p, "expected %s %s, found %s", tok_kind_name(k), where, ps_tok_desc(p, tok(p)));
  return false;
}

/* A missing `;` is reported just after the previous token, where it belongs
 * (like clang); before a token on a later line it is then assumed, so one
 * forgotten semicolon doesn't swallow the next statement. */
static void expect_semi(Parser *p, const char *where) {
  if (ps_accept(p, TK_SEMI)) return;
  bool quiet = p->panic || p->abort || p->after_err;
  p->panic = true;
  if (quiet) return;
  SrcLoc at_end = prev_loc(p);
  at_end.offset += at_end.len;
  at_end.col += (int)at_end.len;
  at_end.len = 1;
  diag_error(p->diags, at_end, "expected ';' %s, found %s", where, ps_tok_desc(p, tok(p)));
  if (tok(p)->loc.line > prev_loc(p).line) p->panic = false;
}

/* Counts one level of nesting; false (reported once) past the limit. */
static bool enter(Parser *p) {
  if (p->abort) return false;
  if (++p->depth <= PARSE_MAX_DEPTH) return true;
  if (!p->after_err)
    diag_error(p->diags, tok(p)->loc, "nesting is too deep (limit %d)", PARSE_MAX_DEPTH);
  stop(p);
  return false;
}

static void leave(Parser *p) { p->depth--; }

/* Skips to the end of the broken statement: past a `;`, or up to a `}`, of
 * the current nesting; a whole `{...}` group met on the way is skipped. */
static void sync_stmt(Parser *p) {
  int nest = 0;
  while (!at(p, TK_EOF)) {
    TokKind k = kind(p);
    if (nest == 0 && k == TK_RBRACE) break;
    /* A declaration keyword can't be inside a statement: braces are missing.
     * Stay in panic so every enclosing block closes quietly. */
    if (k == TK_KERNEL || k == TK_STRUCT || k == TK_ENUM || k == TK_IMPORT) return;
    ps_advance(p);
    if (k == TK_LBRACE || k == TK_LPAREN || k == TK_LBRACKET)
      nest++;
    else if ((k == TK_RBRACE || k == TK_RPAREN || k == TK_RBRACKET) && nest > 0)
      nest--;
    if (nest == 0 && (k == TK_SEMI || k == TK_RBRACE)) break;
  }
  /* Run into the end of the file, every enclosing block is unclosed too:
   * staying in panic lets one error say so, not one per level. */
  if (!at(p, TK_EOF)) p->panic = false;
}

static bool starts_module_item(TokKind k) {
  return k == TK_KERNEL || k == TK_STRUCT || k == TK_ENUM || k == TK_IMPORT || k == TK_CONST;
}

/* Skips to the next module item: past a `;` or a closing `}` at the top, or up
 * to a keyword that starts a declaration. */
static void sync_top(Parser *p) {
  int nest = 0;
  while (!at(p, TK_EOF)) {
    TokKind k = kind(p);
    if (nest == 0 && starts_module_item(k)) break;
    ps_advance(p);
    if (k == TK_LBRACE || k == TK_LPAREN || k == TK_LBRACKET)
      nest++;
    else if ((k == TK_RBRACE || k == TK_RPAREN || k == TK_RBRACKET) && nest > 0)
      nest--;
    if (nest == 0 && (k == TK_SEMI || k == TK_RBRACE)) break;
  }
  p->panic = false;
}

/* ---- nodes ----------------------------------------------------------------- */

void *ps_alloc(Parser *p, size_t size) {
  void *x = arena_alloc(p->arena, size);
  if (!x) {
    /* Out of memory: report once, then read the rest as end of input. */
    if (!p->abort) diag_error(p->diags, tok(p)->loc, "out of memory while parsing");
    stop(p);
    return memset(&p->junk, 0, size < sizeof p->junk ? size : sizeof p->junk);
  }
  return x;
}

static Node *new_node(Parser *p, NodeKind k, SrcLoc loc) {
  Node *n = ps_alloc(p, sizeof *n);
  n->kind = k;
  n->loc = loc;
  return n;
}

/* Stands in for a missing expression; its error is already reported. */
Node *ps_error_node(Parser *p, SrcLoc loc) {
  Node *n = new_node(p, ND_INT, loc);
  n->ty = &ty_error;
  return n;
}

static Node *new_binary(Parser *p, NodeKind k, int op, Node *lhs, Node *rhs) {
  Node *n = new_node(p, k, loc_span(lhs->loc, rhs->loc));
  n->op = op;
  n->lhs = lhs;
  n->rhs = rhs;
  return n;
}

const char *ps_tok_text(Parser *p, const Token *t) {
  const char *s = arena_strndup(p->arena, t->text, t->loc.len);
  return s ? s : "";
}

/* Grows an arena array by doubling; the old copy stays until arena_free. */
static void *grow(Parser *p, void *old, int n, int *cap, size_t elem) {
  if (n < *cap) return old;
  int cap2 = *cap ? *cap * 2 : 8;
  char *x = ps_alloc(p, (size_t)cap2 * elem);
  if (p->abort) return old;
  if (n) memcpy(x, old, (size_t)n * elem);
  *cap = cap2;
  return x;
}

/* Names a declared thing; keywords and type names get a pointed message. */
static const char *parse_name(Parser *p, SrcLoc *loc, const char *what) {
  Token *t = tok(p);
  *loc = t->loc;
  if (t->kind == TK_IDENT) {
    ps_advance(p);
    return ps_tok_text(p, t);
  }
  /* A keyword or type name where the name goes is a name badly chosen: say so
   * once and read on, so `struct kernel { ... }` is one error, not a cascade. */
  if (t->kind == TK_TYPENAME || (t->kind >= TK_KERNEL && t->kind <= TK_FALSE)) {
    ps_report(p, t->loc, "expected %s, found %s", what, ps_tok_desc(p, t));
    ps_advance(p);
  } else {
    ps_syntax_error(p, "expected %s, found %s", what, ps_tok_desc(p, t));
  }
  return "<error>";
}

/* ---- expressions --------------------------------------------------------- */

static Node *parse_cond(Parser *p);
static Node *parse_unary(Parser *p);

static bool is_assign_op(TokKind k) { return k == TK_ASSIGN || (k >= TK_PLUSEQ && k <= TK_SHREQ); }

/* args = expr (',' expr)* ; ends before `close`, which the caller expects. */
static Node *parse_args(Parser *p, TokKind close, int *nargs) {
  Node head = {0}, *cur = &head;
  *nargs = 0;
  if (at(p, close)) return NULL;
  do {
    cur = cur->next = ps_parse_expr(p);
    ++*nargs;
  } while (!p->panic && ps_accept(p, TK_COMMA));
  return head.next;
}

/* Is this `IDENT '<' types '>' '('`, an explicit instantiation? A type is
 * (TYPENAME | IDENT) ('[' ','* ']')?. No comparison reads like it: `a < b > (c)`
 * would compare a bool with '>', which kern refuses. */
static bool at_generic_call(Parser *p) {
  if (tok(p)->kind != TK_IDENT || peek(p, 1)->kind != TK_LT) return false;
  int k = 2;
  for (;;) {
    TokKind t = peek(p, k)->kind;
    if (t != TK_TYPENAME && t != TK_IDENT) return false;
    k++;
    if (peek(p, k)->kind == TK_LBRACKET) {
      while (++k < PARSE_LOOKAHEAD && peek(p, k)->kind == TK_COMMA)
        ;
      if (peek(p, k++)->kind != TK_RBRACKET) return false;
    }
    if (k >= PARSE_LOOKAHEAD) return false;
    if (peek(p, k)->kind == TK_GT) return peek(p, k + 1)->kind == TK_LPAREN;
    if (peek(p, k++)->kind != TK_COMMA) return false;
  }
}

static void push_targ(Parser *p, Node *n, TypeExpr *te, int *cap) {
  n->targs = grow(p, n->targs, n->ntargs, cap, sizeof *n->targs);
  if (!p->abort) n->targs[n->ntargs++] = te;
}

/* generic_call = IDENT '<' type (',' type)* '>' '(' args? ')' */
static Node *parse_generic_call(Parser *p) {
  Token *name = ps_advance(p);
  Node *n = new_node(p, ND_CALL, name->loc);
  n->name = ps_tok_text(p, name);
  n->name_loc = name->loc;
  ps_advance(p); /* '<' */
  int cap = 0;
  do push_targ(p, n, ps_parse_type(p), &cap);
  while (!p->panic && ps_accept(p, TK_COMMA));
  ps_expect(p, TK_GT, "to close the type arguments");
  if (ps_expect(p, TK_LPAREN, "after the type arguments")) {
    n->args = parse_args(p, TK_RPAREN, &n->nargs);
    ps_expect(p, TK_RPAREN, "after the call's arguments");
  }
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* The compile-time type queries take a type or a value: sizeof(float),
 * is_same(T, vec3), sizeof(x). */
static bool takes_types(const Token *t) {
  static const char *const names[] = {"sizeof", "is_same", "is_float", "is_int"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (t->loc.len == strlen(names[i]) && memcmp(t->text, names[i], t->loc.len) == 0) return true;
  return false;
}

/* A builtin type name as an argument of a type query: an ND_IDENT whose
 * targs[0] is the type. */
static Node *parse_type_arg(Parser *p) {
  if (!at(p, TK_TYPENAME) || peek(p, 1)->kind == TK_LPAREN) return ps_parse_expr(p);
  Node *n = new_node(p, ND_IDENT, tok(p)->loc);
  n->name = ps_tok_text(p, tok(p));
  n->name_loc = tok(p)->loc;
  int cap = 0;
  push_targ(p, n, ps_parse_type(p), &cap);
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

static Node *parse_type_args(Parser *p, int *nargs) {
  Node head = {0}, *cur = &head;
  *nargs = 0;
  if (at(p, TK_RPAREN)) return NULL;
  do {
    cur = cur->next = parse_type_arg(p);
    ++*nargs;
  } while (!p->panic && ps_accept(p, TK_COMMA));
  return head.next;
}

/* call = (IDENT | TYPENAME) '(' args? ')' */
static Node *parse_call(Parser *p) {
  Token *name = ps_advance(p);
  Node *n = new_node(p, ND_CALL, name->loc);
  n->name = ps_tok_text(p, name);
  n->name_loc = name->loc;
  if (name->kind == TK_TYPENAME) {
    n->texpr = ps_alloc(p, sizeof *n->texpr);
    n->texpr->loc = name->loc;
    n->texpr->builtin = name->ty;
  }
  ps_advance(p); /* '(' */
  n->args = takes_types(name) ? parse_type_args(p, &n->nargs) : parse_args(p, TK_RPAREN, &n->nargs);
  ps_expect(p, TK_RPAREN, "after the call's arguments");
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* vec<T, N>(args): a constructor, a call whose texpr is the type. */
static Node *parse_vecn_ctor(Parser *p) {
  Node *n = new_node(p, ND_CALL, tok(p)->loc);
  n->texpr = ps_alloc(p, sizeof *n->texpr);
  n->texpr->loc = tok(p)->loc;
  n->name_loc = tok(p)->loc;
  Token *head = tok(p);
  ps_parse_vecn_type(p, n->texpr);
  /* vec<T, N>(...) of a type variable T: "vec" until an instance binds T */
  n->name = n->texpr->builtin ? type_name(n->texpr->builtin) : ps_tok_text(p, head);
  if (ps_expect(p, TK_LPAREN,
                "after 'vec<...>': a type is not a value; construct one with (...)")) {
    n->args = parse_args(p, TK_RPAREN, &n->nargs);
    ps_expect(p, TK_RPAREN, "after the call's arguments");
  }
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* Is this `tile_<name> <`, a tile operation with arguments among <...>? */
static bool at_tile_call(Parser *p) {
  Token *t = tok(p);
  return t->kind == TK_IDENT && t->loc.len > 5 && memcmp(t->text, "tile_", 5) == 0 &&
         peek(p, 1)->kind == TK_LT;
}

/* tile_call = IDENT '<' (TYPENAME | shape) (',' shape)* '>' '(' args? ')' */
static Node *parse_tile_call(Parser *p) {
  Token *name = ps_advance(p);
  Node *n = new_node(p, ND_CALL, name->loc);
  n->name = ps_tok_text(p, name);
  n->name_loc = name->loc;
  ps_advance(p); /* '<' */
  Node head = {0}, *cur = &head;
  do {
    if (at(p, TK_TYPENAME) && !n->targ && n->ntshape == 0) {
      n->targ = ps_alloc(p, sizeof *n->targ);
      n->targ->loc = tok(p)->loc;
      n->targ->builtin = ps_advance(p)->ty;
    } else {
      cur = cur->next = ps_parse_shape_expr(p);
      n->ntshape++;
    }
  } while (!p->panic && ps_accept(p, TK_COMMA));
  n->tshape = head.next;
  ps_expect(p, TK_GT, "to close the tile operation's '<...>'");
  if (ps_expect(p, TK_LPAREN, "after the tile operation's '<...>'")) {
    n->args = parse_args(p, TK_RPAREN, &n->nargs);
    ps_expect(p, TK_RPAREN, "after the call's arguments");
  }
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

static Node *parse_literal(Parser *p, NodeKind k) {
  Token *t = ps_advance(p);
  Node *n = new_node(p, k, t->loc);
  n->ival = t->ival;
  n->fval = t->fval;
  n->suffix = t->suffix;
  n->str = t->str;
  n->str_len = t->str_len;
  if (k == ND_BOOL) n->ival = t->kind == TK_TRUE;
  return n;
}

/* primary = call | IDENT | INT | FLOAT | STRING | 'true' | 'false' | '(' expr ')' */
static Node *parse_primary(Parser *p) {
  Token *t = tok(p);
  switch (t->kind) {
    case TK_IDENT: {
      if (peek(p, 1)->kind == TK_LPAREN) return parse_call(p);
      if (ps_at_vecn_type(p, 0)) return parse_vecn_ctor(p);
      if (at_tile_call(p)) return parse_tile_call(p);
      if (at_generic_call(p)) return parse_generic_call(p);
      ps_advance(p);
      Node *n = new_node(p, ND_IDENT, t->loc);
      n->name = ps_tok_text(p, t);
      n->name_loc = t->loc;
      return n;
    }
    case TK_TYPENAME:
      if (peek(p, 1)->kind == TK_LPAREN) return parse_call(p);
      if (ps_at_vecn_type(p, 0)) return parse_vecn_ctor(p); /* quat<T>(...) */
      ps_syntax_error(p, "type name '%.*s' is not a value; did you mean '%.*s(...)'?",
                      (int)t->loc.len, t->text, (int)t->loc.len, t->text);
      return ps_error_node(p, t->loc);
    case TK_INT: return parse_literal(p, ND_INT);
    case TK_FLOAT: return parse_literal(p, ND_FLOAT);
    case TK_STRING: return parse_literal(p, ND_STRING);
    case TK_TRUE:
    case TK_FALSE: return parse_literal(p, ND_BOOL);
    case TK_LPAREN: {
      ps_advance(p);
      Node *e = ps_parse_expr(p);
      ps_expect(p, TK_RPAREN, "to close the parenthesis");
      e->loc = loc_span(t->loc, prev_loc(p));
      return e;
    }
    default:
      ps_syntax_error(p, "expected an expression, found %s", ps_tok_desc(p, t));
      return ps_error_node(p, t->loc);
  }
}

/* index = args | expr? ':' expr? (a slice: op TK_COLON, ival bit 0 when the
 * start is written, bit 1 when the end is; args holds those written) */
static void parse_index(Parser *p, Node *ix) {
  if (at(p, TK_RBRACKET)) {
    ps_syntax_error(p, "expected an index, found %s", ps_tok_desc(p, tok(p)));
    return;
  }
  Node *first = at(p, TK_COLON) ? NULL : ps_parse_expr(p);
  if (!ps_accept(p, TK_COLON)) {
    ix->args = first;
    ix->nargs = 1;
    for (Node *cur = first; !p->panic && ps_accept(p, TK_COMMA); ix->nargs++)
      cur = cur->next = ps_parse_expr(p);
    return;
  }
  ix->op = TK_COLON;
  Node *last = at(p, TK_RBRACKET) ? NULL : ps_parse_expr(p);
  ix->ival = (first ? 1u : 0u) | (last ? 2u : 0u);
  ix->args = first ? first : last;
  if (first) first->next = last;
  ix->nargs = (first != NULL) + (last != NULL);
}

/* postfix = primary ('[' index ']' | '.' IDENT | '(' -> error)* */
static Node *parse_postfix(Parser *p) {
  Node *n = parse_primary(p);
  for (;;) {
    if (ps_accept(p, TK_LBRACKET)) {
      Node *ix = new_node(p, ND_INDEX, n->loc);
      ix->lhs = n;
      parse_index(p, ix);
      ps_expect(p, TK_RBRACKET, "after the index");
      ix->loc = loc_span(n->loc, prev_loc(p));
      n = ix;
    } else if (ps_accept(p, TK_DOT)) {
      Node *m = new_node(p, ND_MEMBER, n->loc);
      m->lhs = n;
      m->name = parse_name(p, &m->name_loc, "a member name after '.'");
      m->loc = loc_span(n->loc, m->name_loc);
      n = m;
    } else if (at(p, TK_LPAREN) && !p->panic) {
      ps_syntax_error(p, "only a named function or a type can be called");
      return n;
    } else {
      return n;
    }
  }
}

/* Is this `( vec<...> )`, `( mat<...> )` or `( quat<...> )`? (Not `(vec<...>(x))`,
 * a constructor in a parenthesis.) */
static bool at_vecn_cast(Parser *p) {
  if (!at(p, TK_LPAREN) || !ps_at_vecn_type(p, 1)) return false;
  for (int k = 4; k < PARSE_LOOKAHEAD - 1; k++)
    if (peek(p, k)->kind == TK_GT) return peek(p, k + 1)->kind == TK_RPAREN;
  return false;
}

/* A cast is `(` TYPENAME `)` or `(` vecn_type `)` (no arrays); `(float(x))` is a
 * parenthesis. */
static bool at_cast(Parser *p) {
  return (at(p, TK_LPAREN) && peek(p, 1)->kind == TK_TYPENAME && peek(p, 2)->kind == TK_RPAREN) ||
         at_vecn_cast(p);
}

/* cast = '(' (TYPENAME | vecn_type) ')' unary: `(vec<U, N>)v` is `vec<U, N>(v)` */
static Node *parse_cast(Parser *p) {
  SrcLoc start = ps_advance(p)->loc;
  Node *n = new_node(p, ND_CAST, start);
  n->texpr = ps_alloc(p, sizeof *n->texpr);
  n->texpr->loc = tok(p)->loc;
  if (ps_at_vecn_type(p, 0)) {
    ps_parse_vecn_type(p, n->texpr);
  } else {
    n->texpr->builtin = ps_advance(p)->ty;
  }
  ps_expect(p, TK_RPAREN, "to close the cast's type");
  n->lhs = parse_unary(p);
  n->loc = loc_span(start, n->lhs->loc);
  return n;
}

/* unary = ('-' | '+' | '!' | '~' | '&') unary | cast | postfix
 *       | ('++' | '--') unary  -> error: a statement, not an expression */
static Node *parse_unary(Parser *p) {
  Token *t = tok(p);
  TokKind k = t->kind;
  bool prefix = k == TK_MINUS || k == TK_PLUS || k == TK_BANG || k == TK_TILDE || k == TK_AMP ||
                k == TK_INC || k == TK_DEC;
  if (!prefix && !at_cast(p)) return parse_postfix(p);
  if (!enter(p)) return ps_error_node(p, t->loc);
  Node *n;
  if (!prefix) {
    n = parse_cast(p);
  } else {
    if (k == TK_INC || k == TK_DEC) /* panic: `------x` gives one error */
      ps_syntax_error(p, "'%s' is a statement in kern, not an expression",
                      k == TK_INC ? "++" : "--");
    ps_advance(p);
    Node *operand = parse_unary(p);
    if (k == TK_INC || k == TK_DEC) {
      n = operand;
    } else {
      n = new_node(p, k == TK_AMP ? ND_ADDR : ND_UNARY, loc_span(t->loc, operand->loc));
      n->op = k;
      n->lhs = operand;
    }
  }
  leave(p);
  return n;
}

/* Binding strength of a binary operator; 0 if the token is not one. */
static int binary_prec(TokKind k) {
  switch (k) {
    case TK_OROR: return 1;
    case TK_ANDAND: return 2;
    case TK_PIPE: return 3;
    case TK_CARET: return 4;
    case TK_AMP: return 5;
    case TK_EQEQ:
    case TK_NE: return 6;
    case TK_LT:
    case TK_LE:
    case TK_GT:
    case TK_GE: return 7;
    case TK_SHL:
    case TK_SHR: return 8;
    case TK_PLUS:
    case TK_MINUS: return 9;
    case TK_STAR:
    case TK_SLASH:
    case TK_PERCENT: return 10;
    default: return 0;
  }
}

/* binary(k) = unary (op binary(prec(op) + 1))*   for ops with prec >= k:
 *   || < && < | < ^ < & < (== !=) < (< <= > >=) < (<< >>) < (+ -) < (* / %),
 *   all left-associative as in C. */
Node *ps_parse_binary(Parser *p, int min_prec) {
  Node *lhs = parse_unary(p);
  for (int n = 0;; n++) {
    int prec = binary_prec(kind(p));
    if (prec == 0 || prec < min_prec) return lhs;
    if (n == AST_MAX_DEPTH) { /* the tree is already that deep: the checker's error, now */
      if (!p->after_err)
        diag_error(p->diags, tok(p)->loc, "nested too deeply (the limit is %d levels)",
                   AST_MAX_DEPTH);
      stop(p);
      return lhs;
    }
    int op = ps_advance(p)->kind;
    Node *rhs = ps_parse_binary(p, prec + 1);
    lhs = new_binary(p, ND_BINARY, op, lhs, rhs);
  }
}

/* cond = binary(1) ('?' expr ':' cond)?   (right-associative) */
static Node *parse_cond(Parser *p) {
  Node *c = ps_parse_binary(p, 1);
  if (!at(p, TK_QUESTION)) return c;
  ps_advance(p);
  if (!enter(p)) return c;
  Node *n = new_node(p, ND_COND, c->loc);
  n->cond = c;
  n->then = ps_parse_expr(p);
  ps_expect(p, TK_COLON, "in the conditional expression");
  n->els = parse_cond(p);
  n->loc = loc_span(c->loc, n->els->loc);
  leave(p);
  return n;
}

/* expr = cond; an `=`, `+=` ... `++` or `--` after it is an error here:
 * assignments are statements in kern. The operand is parsed and dropped so
 * the rest of the expression still reads well. */
Node *ps_parse_expr(Parser *p) {
  if (!enter(p)) return ps_error_node(p, tok(p)->loc);
  Node *n = parse_cond(p);
  Token *t = tok(p);
  if (is_assign_op(t->kind)) {
    ps_report(p, t->loc, "assignment is a statement in kern, not an expression");
    ps_advance(p);
    ps_parse_expr(p);
  } else if (t->kind == TK_INC || t->kind == TK_DEC) {
    ps_report(p, t->loc, "'%s' is a statement in kern, not an expression",
              t->kind == TK_INC ? "++" : "--");
    ps_advance(p);
  }
  leave(p);
  return n;
}

/* ---- statements ------------------------------------------------------------ */

static Node *parse_stmt(Parser *p);
static Decl *parse_enum(Parser *p);

/* Does a '(' follow the closing '>' of the vec<...> here (a constructor)? */
static bool vecn_ctor_follows(Parser *p) {
  for (int k = 3; k < PARSE_LOOKAHEAD - 1; k++)
    if (peek(p, k)->kind == TK_GT) return peek(p, k + 1)->kind == TK_LPAREN;
  return false;
}

/* After IDENT at a statement's start: is this `Name x`, `Name[,] x` (or
 * `Name &x = `, a mistaken reference local)? */
static bool ident_starts_decl(Parser *p) {
  if (ps_at_tile_type(p, 0)) return true;
  if (ps_at_vecn_type(p, 0)) return !vecn_ctor_follows(p);
  if (peek(p, 1)->kind == TK_AMP && peek(p, 2)->kind == TK_IDENT && peek(p, 3)->kind == TK_ASSIGN)
    return true;
  int k = 1;
  if (peek(p, k)->kind == TK_LBRACKET) {
    k++;
    while (k < PARSE_LOOKAHEAD && peek(p, k)->kind == TK_COMMA) k++;
    if (peek(p, k)->kind != TK_RBRACKET) return false;
    k++;
  }
  return peek(p, k)->kind == TK_IDENT;
}

static bool at_decl(Parser *p) {
  switch (kind(p)) {
    case TK_CONST:
    case TK_AUTO: return true;
    case TK_TYPENAME:
      if (ps_at_vecn_type(p, 0)) return !vecn_ctor_follows(p);
      return peek(p, 1)->kind != TK_LPAREN;
    case TK_IDENT: return ident_starts_decl(p);
    default: return false;
  }
}

/* init_list = '{' (expr (',' expr)* ','?)? '}': a local array's elements, in
 * row-major order (one flat list). */
static Node *parse_init_list(Parser *p) {
  Token *open = ps_advance(p);
  Node *n = new_node(p, ND_INIT_LIST, open->loc);
  Node head = {0}, *cur = &head;
  while (!at(p, TK_RBRACE) && !p->panic) {
    if (at(p, TK_LBRACE)) { /* reported once; the rest of the list is skipped */
      ps_report(p, tok(p)->loc,
                "a local array's initializer is one flat list of its elements, in row-major order; "
                "it has no nested '{...}'");
      for (int depth = 1; depth > 0 && !at(p, TK_EOF) && !at(p, TK_SEMI);) {
        TokKind k = ps_advance(p)->kind;
        depth += k == TK_LBRACE ? 1 : k == TK_RBRACE ? -1 : 0;
      }
      n->loc = loc_span(open->loc, prev_loc(p));
      return n;
    }
    cur = cur->next = ps_parse_expr(p);
    n->nargs++;
    if (!ps_accept(p, TK_COMMA)) break;
  }
  n->args = head.next;
  ps_expect(p, TK_RBRACE, "to close the initializer list");
  n->loc = loc_span(open->loc, prev_loc(p));
  return n;
}

/* vardecl = 'const'? type IDENT fixed? ('=' (expr | init_list))?
 * (no ';': for-init uses it too; only a local array may leave out '=') */
static Node *parse_vardecl(Parser *p) {
  SrcLoc start = tok(p)->loc;
  Var *v = ps_alloc(p, sizeof *v);
  v->is_const = ps_accept(p, TK_CONST);
  v->texpr = ps_parse_type(p);
  if (at(p, TK_AMP)) /* read on as a plain variable: one error */
    ps_report(p, ps_advance(p)->loc,
              "a local variable cannot be a reference; only function parameters can ('T &name')");
  v->name = parse_name(p, &v->loc, "a variable name");
  if (at(p, TK_LBRACKET)) ps_parse_fixed_dims(p, v->texpr);
  Node *n = new_node(p, ND_VARDECL, start);
  n->var = v;
  if (ps_accept(p, TK_ASSIGN)) {
    v->init = at(p, TK_LBRACE) ? parse_init_list(p) : ps_parse_expr(p);
  } else if (v->texpr->nfixed) { /* all zeros */
    v->init = new_node(p, ND_INIT_LIST, v->loc);
  } else {
    if (!at(p, TK_COMMA)) ps_report(p, v->loc, "variable '%s' needs an initializer", v->name);
    v->init = ps_error_node(p, v->loc);
  }
  if (at(p, TK_COMMA))
    ps_syntax_error(p, "declare one variable per statement ('%s' is followed by ',')", v->name);
  n->loc = loc_span(start, prev_loc(p));
  return n;
}

/* simple = unary_or_expr (assign_op expr | '++' | '--')? | ('++' | '--') unary
 * (no ';': for-init and for-increment use it too) */
static Node *parse_simple(Parser *p) {
  Token *t = tok(p);
  if (t->kind == TK_INC || t->kind == TK_DEC) {
    ps_advance(p);
    Node *n = new_node(p, ND_INCDEC, t->loc);
    n->op = t->kind;
    n->lhs = parse_unary(p);
    n->loc = loc_span(t->loc, n->lhs->loc);
    return n;
  }
  Node *e = parse_cond(p);
  Token *op = tok(p);
  if (is_assign_op(op->kind)) {
    ps_advance(p);
    return new_binary(p, ND_ASSIGN, op->kind, e, ps_parse_expr(p));
  }
  if (op->kind == TK_INC || op->kind == TK_DEC) {
    ps_advance(p);
    Node *n = new_node(p, ND_INCDEC, loc_span(e->loc, op->loc));
    n->op = op->kind;
    n->lhs = e;
    return n;
  }
  Node *n = new_node(p, ND_EXPR_STMT, e->loc);
  n->lhs = e;
  return n;
}

/* block = '{' stmt* '}' */
static Node *parse_block(Parser *p) {
  Token *open = tok(p);
  Node *blk = new_node(p, ND_BLOCK, open->loc);
  if (!ps_expect(p, TK_LBRACE, "to start a block")) return blk;
  Node head = {0}, *cur = &head;
  /* `kernel`, `struct` or `import` inside a block means a `}` is missing:
   * stop here so the next declaration parses normally. */
  while (!at(p, TK_RBRACE) && !at(p, TK_EOF) && !at(p, TK_KERNEL) && !at(p, TK_STRUCT) &&
         !at(p, TK_IMPORT)) {
    int before = p->pos;
    Node *s = parse_stmt(p);
    if (p->panic) sync_stmt(p);
    if (p->pos == before && !at(p, TK_RBRACE)) ps_advance(p); /* never loop without consuming */
    cur = cur->next = s;
  }
  if (!ps_accept(p, TK_RBRACE) &&
      ps_syntax_error(p, "expected '}' to close the block, found %s", ps_tok_desc(p, tok(p))))
    diag_note(p->diags, open->loc, "the block opened here");
  blk->body = head.next;
  blk->loc = loc_span(open->loc, prev_loc(p));
  return blk;
}

/* '(' expr ')' for if/while/do conditions */
static Node *parse_paren_cond(Parser *p, const char *stmt) {
  char where[48];
  snprintf(where, sizeof where, "after '%s'", stmt);
  ps_expect(p, TK_LPAREN, where);
  Node *c = ps_parse_expr(p);
  snprintf(where, sizeof where, "after the '%s' condition", stmt);
  ps_expect(p, TK_RPAREN, where);
  return c;
}

/* if = 'if' '(' expr ')' stmt ('else' 'if' '(' expr ')' stmt)* ('else' stmt)?
 * Each `else if` is the else of the if before it, at the same depth: a chain
 * of any length is a loop, not nesting. After `static`, every if of the
 * chain is static (`else static if` says the same). */
static Node *parse_if(Parser *p, bool is_static, SrcLoc start) {
  Node *first = NULL, **link = &first;
  for (;;) {
    Token *kw = ps_advance(p);
    Node *n = *link = new_node(p, ND_IF, link == &first ? loc_span(start, kw->loc) : kw->loc);
    n->is_static = is_static;
    n->cond = parse_paren_cond(p, is_static ? "static if" : "if");
    n->then = parse_stmt(p);
    if (!ps_accept(p, TK_ELSE)) break;
    /* `else static if` reads as the `else if` of a static chain */
    if (is_static && at(p, TK_STATIC) && peek(p, 1)->kind == TK_IF) ps_advance(p);
    if (!at(p, TK_IF)) {
      n->els = parse_stmt(p);
      break;
    }
    link = &n->els;
  }
  /* (After an allocation failure every node is the same scratch object.) */
  for (Node *n = first; !p->abort && n && n->kind == ND_IF; n = n->els)
    n->loc = loc_span(n->loc, prev_loc(p));
  return first;
}

/* while = 'while' '(' expr ')' stmt */
static Node *parse_while(Parser *p) {
  Node *n = new_node(p, ND_WHILE, ps_advance(p)->loc);
  n->cond = parse_paren_cond(p, "while");
  n->body = parse_stmt(p);
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* do = 'do' stmt 'while' '(' expr ')' ';' */
static Node *parse_do(Parser *p) {
  Node *n = new_node(p, ND_DO, ps_advance(p)->loc);
  n->body = parse_stmt(p);
  if (p->panic) sync_stmt(p);
  ps_expect(p, TK_WHILE, "after the body of 'do'");
  n->cond = parse_paren_cond(p, "while");
  expect_semi(p, "after 'do ... while (...)'");
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* for = 'for' '(' (vardecl | simple)? ';' expr? ';' simple? ')' stmt */
static Node *parse_for(Parser *p, bool is_static, SrcLoc start) {
  Node *n = new_node(p, ND_FOR, loc_span(start, ps_advance(p)->loc));
  n->is_static = is_static;
  ps_expect(p, TK_LPAREN, "after 'for'");
  if (!at(p, TK_SEMI)) n->init = at_decl(p) ? parse_vardecl(p) : parse_simple(p);
  ps_expect(p, TK_SEMI, "after the loop initializer");
  if (!at(p, TK_SEMI)) n->cond = ps_parse_expr(p);
  ps_expect(p, TK_SEMI, "after the loop condition");
  if (!at(p, TK_RPAREN)) n->inc = parse_simple(p);
  ps_expect(p, TK_RPAREN, "after the loop increment");
  n->body = parse_stmt(p);
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* static = 'static' (if | for): evaluated while checking (check_generic.c) */
static Node *parse_static(Parser *p) {
  Token *kw = ps_advance(p);
  if (at(p, TK_IF)) return parse_if(p, true, kw->loc);
  if (at(p, TK_FOR)) return parse_for(p, true, kw->loc);
  ps_syntax_error(p, "expected 'if' or 'for' after 'static', found %s", ps_tok_desc(p, tok(p)));
  return new_node(p, ND_EMPTY, kw->loc);
}

/* return = 'return' expr? ';' */
static Node *parse_return(Parser *p) {
  Node *n = new_node(p, ND_RETURN, ps_advance(p)->loc);
  if (!at(p, TK_SEMI)) n->lhs = ps_parse_expr(p);
  expect_semi(p, "after 'return'");
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

/* A keyword-led or simple statement with its `;`. */
static Node *parse_stmt_semi(Parser *p, NodeKind k, const char *what) {
  Node *n = k == ND_VARDECL ? parse_vardecl(p) : parse_simple(p);
  expect_semi(p, what);
  n->loc = loc_span(n->loc, prev_loc(p));
  return n;
}

static Node *parse_jump(Parser *p, NodeKind k) {
  Token *t = ps_advance(p);
  Node *n = new_node(p, k, t->loc);
  expect_semi(p, k == ND_BREAK ? "after 'break'" : "after 'continue'");
  n->loc = loc_span(t->loc, prev_loc(p));
  return n;
}

/* stmt = block | if | while | do | for | static | return | 'break' ';' | 'continue' ';'
 *      | ';' | vardecl ';' | simple ';' */
static Node *parse_stmt(Parser *p) {
  Token *t = tok(p);
  if (!enter(p)) return new_node(p, ND_EMPTY, t->loc);
  Node *n;
  switch (t->kind) {
    case TK_LBRACE: n = parse_block(p); break;
    case TK_IF: n = parse_if(p, false, t->loc); break;
    case TK_WHILE: n = parse_while(p); break;
    case TK_DO: n = parse_do(p); break;
    case TK_FOR: n = parse_for(p, false, t->loc); break;
    case TK_STATIC: n = parse_static(p); break;
    case TK_RETURN: n = parse_return(p); break;
    case TK_BREAK: n = parse_jump(p, ND_BREAK); break;
    case TK_CONTINUE: n = parse_jump(p, ND_CONTINUE); break;
    case TK_SEMI: n = new_node(p, ND_EMPTY, ps_advance(p)->loc); break;
    case TK_ENUM: /* read and dropped: one error */
      ps_report(p, t->loc, "an enum is declared at module level, not inside a function");
      parse_enum(p);
      n = new_node(p, ND_EMPTY, t->loc);
      break;
    case TK_ELSE:
    case TK_KERNEL:
    case TK_STRUCT:
    case TK_IMPORT:
    case TK_VOID:
    case TK_RBRACE:
    case TK_EOF:
      ps_syntax_error(p, "expected a statement, found %s", ps_tok_desc(p, t));
      n = new_node(p, ND_EMPTY, t->loc);
      break;
    default:
      if (at_decl(p))
        n = parse_stmt_semi(p, ND_VARDECL, "after the declaration");
      else
        n = parse_stmt_semi(p, ND_EXPR_STMT, "after the statement");
  }
  leave(p);
  return n;
}

/* ---- declarations ---------------------------------------------------------- */

static Decl *new_decl(Parser *p, DeclKind k, SrcLoc loc) {
  Decl *d = ps_alloc(p, sizeof *d);
  d->kind = k;
  d->loc = loc;
  return d;
}

/* import = 'import' STRING ';' */
static Decl *parse_import(Parser *p) {
  Decl *d = new_decl(p, DECL_IMPORT, ps_advance(p)->loc);
  Token *t = tok(p);
  if (t->kind == TK_STRING) {
    ps_advance(p);
    d->path = t->str;
    d->path_len = t->str_len;
    d->name_loc = t->loc;
  } else {
    /* Dropped: front.c would only add an error about its missing path. */
    ps_syntax_error(p, "expected a file name string after 'import', found %s", ps_tok_desc(p, t));
    return NULL;
  }
  expect_semi(p, "after the import");
  d->loc = loc_span(d->loc, prev_loc(p));
  return d;
}

/* const = 'const' type IDENT '=' expr ';' */
static Decl *parse_const(Parser *p) {
  Decl *d = new_decl(p, DECL_CONST, ps_advance(p)->loc);
  d->texpr = ps_parse_type(p);
  d->name = parse_name(p, &d->name_loc, "a constant name");
  if (at(p, TK_LBRACKET)) {
    SrcLoc where = tok(p)->loc;
    TypeExpr dropped = {0};
    ps_parse_fixed_dims(p, &dropped);
    ps_report(p, loc_span(where, prev_loc(p)),
              "a module constant cannot be an array; declare a const local array where it is used");
    if (ps_accept(p, TK_ASSIGN) && at(p, TK_LBRACE)) parse_init_list(p);
    d->init = ps_error_node(p, d->name_loc);
  } else if (ps_accept(p, TK_ASSIGN))
    d->init = ps_parse_expr(p);
  else if (!p->panic)
    ps_syntax_error(p, "constant '%s' needs a value ('= ...'), found %s", d->name,
                    ps_tok_desc(p, tok(p)));
  if (!d->init) d->init = ps_error_node(p, d->name_loc);
  expect_semi(p, "after the constant");
  d->loc = loc_span(d->loc, prev_loc(p));
  return d;
}

/* fields = (type IDENT (',' IDENT)* ';')*   up to the closing '}' */
static void parse_fields(Parser *p, Decl *d) {
  int cap = 0;
  while (!at(p, TK_RBRACE) && !at(p, TK_EOF)) {
    int before = p->pos;
    TypeExpr *te = ps_parse_type(p);
    do {
      d->fields = grow(p, d->fields, d->nfields, &cap, sizeof(Field));
      if (p->abort) return;
      Field *f = &d->fields[d->nfields++];
      f->texpr = te;
      f->name = parse_name(p, &f->loc, "a field name");
      if (at(p, TK_LBRACKET)) {
        SrcLoc where = tok(p)->loc;
        TypeExpr dropped = {0};
        ps_parse_fixed_dims(p, &dropped);
        ps_report(p, loc_span(where, prev_loc(p)),
                  "a struct field cannot be an array; local arrays are variables of functions and "
                  "kernels");
      }
    } while (!p->panic && ps_accept(p, TK_COMMA));
    expect_semi(p, "after the field");
    if (p->panic) sync_stmt(p);
    if (p->pos == before && !at(p, TK_RBRACE)) ps_advance(p);
  }
}

/* struct = 'struct' IDENT '{' fields '}' ';'? */
static Decl *parse_struct(Parser *p) {
  Decl *d = new_decl(p, DECL_STRUCT, ps_advance(p)->loc);
  d->name = parse_name(p, &d->name_loc, "a struct name");
  Token *open = tok(p);
  if (ps_expect(p, TK_LBRACE, "to start the struct's fields")) {
    parse_fields(p, d);
    if (!ps_accept(p, TK_RBRACE) &&
        ps_syntax_error(p, "expected '}' to close struct '%s', found %s", d->name,
                        ps_tok_desc(p, tok(p))))
      diag_note(p->diags, open->loc, "the struct opened here");
    ps_accept(p, TK_SEMI);
  }
  d->loc = loc_span(d->loc, prev_loc(p));
  return d;
}

/* The value of an enumerator written without one: 0 first, else the one
 * before it plus 1 (an int32 sum, so the checker reports an overflow). */
static Node *next_enum_value(Parser *p, const Decl *prev, SrcLoc at) {
  Node *one = new_node(p, ND_INT, at);
  one->ival = prev ? 1 : 0;
  if (!prev) return one;
  Node *before = new_node(p, ND_IDENT, at);
  before->name = prev->name;
  before->name_loc = at;
  return new_binary(p, ND_BINARY, TK_PLUS, before, one);
}

/* enumerator = IDENT ('=' expr)? : a DECL_CONST of type int32 */
static Decl *parse_enumerator(Parser *p, Decl *e, const Decl *prev) {
  Decl *d = new_decl(p, DECL_CONST, tok(p)->loc);
  d->of_enum = e;
  d->name = parse_name(p, &d->name_loc, "an enumerator name");
  d->texpr = ps_alloc(p, sizeof *d->texpr);
  d->texpr->loc = d->name_loc;
  d->texpr->builtin = &ty_i32;
  d->init = ps_accept(p, TK_ASSIGN) ? ps_parse_expr(p) : next_enum_value(p, prev, d->name_loc);
  d->loc = loc_span(d->loc, prev_loc(p));
  return d;
}

/* Past the `}` that closes a broken enum (or up to a module keyword). */
static void skip_enum_rest(Parser *p) {
  while (!at(p, TK_EOF) && !starts_module_item(kind(p)))
    if (ps_advance(p)->kind == TK_RBRACE) break;
}

/* enum = 'enum' IDENT? '{' (enumerator (',' enumerator)* ','?)? '}' ';'?
 * Returns the DECL_ENUM with its enumerators linked after it (next). An
 * enum without a name (C's `enum { A, B };`) only declares the constants. */
static Decl *parse_enum(Parser *p) {
  Decl *e = new_decl(p, DECL_ENUM, ps_advance(p)->loc), *last = e;
  if (!at(p, TK_LBRACE)) e->name = parse_name(p, &e->name_loc, "an enum name");
  Token *open = tok(p);
  if (ps_expect(p, TK_LBRACE, "to start the enum's enumerators")) {
    while (!at(p, TK_RBRACE) && !at(p, TK_EOF) && !p->panic) {
      Decl *d = parse_enumerator(p, e, last == e ? NULL : last);
      if (p->abort) break;
      last = last->next = d;
      e->nmembers++;
      if (!ps_accept(p, TK_COMMA)) break;
    }
    if (!ps_accept(p, TK_RBRACE)) {
      if (ps_syntax_error(p, "expected ',' or '}' in enum%s%s%s, found %s", e->name ? " '" : "",
                          e->name ? e->name : "", e->name ? "'" : "", ps_tok_desc(p, tok(p))))
        diag_note(p->diags, open->loc, "the enum opened here");
      skip_enum_rest(p);
    }
    ps_accept(p, TK_SEMI);
  }
  e->loc = loc_span(e->loc, prev_loc(p));
  return e;
}

/* param = 'const'? type '&'? IDENT fixed?   (`&`: a reference parameter;
 * fixed: a local array of the caller's) */
static Var *parse_param(Parser *p) {
  Var *v = ps_alloc(p, sizeof *v);
  v->is_param = true;
  v->is_const = ps_accept(p, TK_CONST);
  v->texpr = ps_parse_type(p);
  if (at(p, TK_AMP)) {
    v->is_ref = true;
    v->ref_loc = ps_advance(p)->loc;
  }
  v->name = parse_name(p, &v->loc, "a parameter name");
  if (at(p, TK_LBRACKET)) ps_parse_fixed_dims(p, v->texpr);
  return v;
}

/* params = '(' (param (',' param)*)? ')' */
static void parse_params(Parser *p, Decl *d) {
  int cap = 0;
  ps_advance(p); /* '(' */
  if (!at(p, TK_RPAREN)) {
    do {
      d->params = grow(p, d->params, d->nparams, &cap, sizeof(Var *));
      if (p->abort) return;
      d->params[d->nparams++] = parse_param(p);
    } while (!p->panic && ps_accept(p, TK_COMMA));
  }
  if (p->panic) {
    /* Skip the rest of the list so the body still gets parsed. */
    while (!at(p, TK_RPAREN) && !at(p, TK_LBRACE) && !at(p, TK_SEMI) && !at(p, TK_EOF))
      ps_advance(p);
    p->panic = false;
    ps_accept(p, TK_RPAREN);
    return;
  }
  ps_expect(p, TK_RPAREN, "after the parameters");
}

/* tparams = '<' IDENT (',' IDENT)* '>': a generic function's type variables */
static void parse_tparams(Parser *p, Decl *d) {
  ps_advance(p); /* '<' */
  int cap = 0, lcap = 0;
  do {
    SrcLoc loc;
    const char *name = parse_name(p, &loc, "a type variable name");
    int n = d->ntparams;
    d->tparams = grow(p, d->tparams, n, &cap, sizeof *d->tparams);
    d->tparam_locs = grow(p, d->tparam_locs, n, &lcap, sizeof *d->tparam_locs);
    if (p->abort) return;
    d->tparams[n] = name;
    d->tparam_locs[n] = loc;
    d->ntparams++;
  } while (!p->panic && ps_accept(p, TK_COMMA));
  ps_expect(p, TK_GT, "to close the type variables");
}

/* func = 'kernel'? type IDENT tparams? params block
 * A declaration whose name or parameter list can't be read is dropped, not
 * kept half-made: later passes would only add noise about it. */
static Decl *parse_func(Parser *p) {
  SrcLoc start = tok(p)->loc;
  Decl *d = new_decl(p, ps_accept(p, TK_KERNEL) ? DECL_KERNEL : DECL_FUNC, start);
  d->texpr = ps_parse_type(p);
  if (at(p, TK_AMP)) /* read on as a function returning a value: one error */
    ps_report(p, ps_advance(p)->loc, "a function cannot return a reference");
  d->name =
      parse_name(p, &d->name_loc, d->kind == DECL_KERNEL ? "a kernel name" : "a function name");
  if (p->panic) return NULL;
  if (at(p, TK_ASSIGN) || at(p, TK_SEMI)) {
    ps_syntax_error(p, "module-level variables are not supported; use 'const %s = ...;'", d->name);
    return NULL;
  }
  if (at(p, TK_LT)) {
    parse_tparams(p, d);
    if (p->panic) return NULL;
  }
  if (!at(p, TK_LPAREN)) {
    ps_syntax_error(p, "expected '(' after the function name, found %s", ps_tok_desc(p, tok(p)));
    return NULL;
  }
  p->fn = d->ntparams ? d : NULL;
  parse_params(p, d);
  d->body = p->panic ? new_node(p, ND_BLOCK, d->name_loc) : parse_block(p);
  p->fn = NULL;
  d->loc = loc_span(start, prev_loc(p));
  return d;
}

/* `T name (` or `T[,] name (`: a function's head, so a place to resume. */
static bool at_func_head(Parser *p) {
  if (!ps_at_type_start(p) || at(p, TK_AUTO)) return false;
  int i = 1;
  if (peek(p, i)->kind == TK_LBRACKET) {
    while (i < PARSE_LOOKAHEAD && peek(p, ++i)->kind == TK_COMMA)
      ;
    if (peek(p, i++)->kind != TK_RBRACKET) return false;
  }
  TokKind after = peek(p, i + 1)->kind;
  return peek(p, i)->kind == TK_IDENT && (after == TK_LPAREN || after == TK_LT);
}

/* A statement at module level: what follows an extra `}` that closed its
 * function early. */
static bool at_stray_stmt(Parser *p) {
  switch (kind(p)) {
    case TK_IF:
    case TK_FOR:
    case TK_WHILE:
    case TK_DO:
    case TK_RETURN:
    case TK_BREAK:
    case TK_CONTINUE: return true;
    case TK_IDENT: {
      TokKind k = peek(p, 1)->kind;
      if (k == TK_LBRACKET) {
        TokKind k2 = peek(p, 2)->kind;
        return k2 != TK_COMMA && k2 != TK_RBRACKET;
      }
      return k == TK_LPAREN || k == TK_DOT || k == TK_INC || k == TK_DEC || is_assign_op(k);
    }
    default: return false;
  }
}

/* Skips the rest of the function an extra `}` cut short: its statements and
 * its real closing `}`, quietly, up to the next declaration. */
static void skip_stray_stmts(Parser *p) {
  int nest = 0;
  while (!at(p, TK_EOF)) {
    TokKind k = kind(p);
    if (k == TK_KERNEL || k == TK_STRUCT || k == TK_ENUM || k == TK_IMPORT) break;
    if (nest == 0 && (k == TK_CONST || at_func_head(p))) break;
    ps_advance(p);
    if (k == TK_LBRACE || k == TK_LPAREN || k == TK_LBRACKET)
      nest++;
    else if ((k == TK_RBRACE || k == TK_RPAREN || k == TK_RBRACKET) && nest > 0)
      nest--;
  }
  p->panic = false;
}

/* item = import | const | struct | func */
static Decl *parse_item(Parser *p) {
  switch (kind(p)) {
    case TK_IMPORT: return parse_import(p);
    case TK_CONST: return parse_const(p);
    case TK_STRUCT: return parse_struct(p);
    case TK_ENUM: return parse_enum(p);
    case TK_KERNEL: return parse_func(p);
    default:
      if (at_stray_stmt(p)) {
        ps_syntax_error(
            p, "expected a declaration (import, const, struct, enum, function or kernel), found a "
               "statement; does an extra '}' above end the function early?");
        skip_stray_stmts(p);
        return NULL;
      }
      if (ps_at_type_start(p) && !at(p, TK_AUTO)) return parse_func(p);
      ps_syntax_error(
          p, "expected a declaration (import, const, struct, enum, function or kernel), found %s",
          ps_tok_desc(p, tok(p)));
      while (at(p, TK_RBRACE)) /* a run of stray `}` is one mistake */
        ps_advance(p);
      return NULL;
  }
}

/* The lexer runs ahead of the parser (peek looks up to PARSE_LOOKAHEAD
 * tokens on), so this file's diagnostics arrive a little out of order; a
 * stable sort by position (each error keeps its notes) makes them read top
 * to bottom. Diagnostics from earlier files stay in front. */
typedef struct {
  Diag *head;
  int index;
} DiagGroup;

static int diag_group_cmp(const void *a, const void *b) {
  const DiagGroup *x = a, *y = b;
  unsigned kx = x->head->loc.file ? x->head->loc.offset : UINT32_MAX;
  unsigned ky = y->head->loc.file ? y->head->loc.offset : UINT32_MAX;
  if (kx != ky) return kx < ky ? -1 : 1;
  return x->index - y->index; /* qsort is not stable by itself */
}

static void sort_diags(Diags *d, Diag *before) {
  Diag *first = before ? before->next : d->head;
  int n = 0;
  for (Diag *g = first; g; g = g->next) n += g->level != DIAG_NOTE || g == first;
  if (n < 2) return;
  DiagGroup *groups = malloc((size_t)n * sizeof *groups);
  if (!groups) return;
  int i = 0;
  for (Diag *g = first; g; g = g->next)
    if (g->level != DIAG_NOTE || g == first) {
      groups[i].head = g;
      groups[i].index = i;
      i++;
    }
  qsort(groups, (size_t)n, sizeof *groups, diag_group_cmp);
  /* Relink: each group runs from its head up to the next head in old order. */
  Diag **link = before ? &before->next : &d->head, *last = before;
  for (i = 0; i < n; i++) {
    *link = groups[i].head;
    for (last = groups[i].head; last->next && last->next->level == DIAG_NOTE; last = last->next)
      ;
    link = &last->next;
  }
  *link = NULL;
  d->tail = last;
  free(groups);
}
/* module = item* EOF */
Module *parse_module(Arena *a, Diags *diags, const char *path, const char *src, size_t len) {
  Module *m = arena_alloc(a, sizeof *m);
  if (!m) return NULL;
  m->path = path;
  m->src = src;
  m->src_len = len;
  Diag *before = diags->tail;
  Lexer *lx = lex_open(a, diags, path, src, len);
  if (!lx) {
    diag_error(diags, (SrcLoc){0}, "out of memory while reading %s", path ? path : "<input>");
    return m;
  }
  Parser p = {.arena = a, .diags = diags, .lx = lx};
  skip_error_tokens(&p);
  Decl head = {0}, *cur = &head;
  while (!at(&p, TK_EOF)) {
    int before = p.pos;
    Decl *d = parse_item(&p);
    if (d && !p.abort) /* an enum is a chain: its enumerators follow it */
      for (cur->next = d; cur->next; cur = cur->next)
        ;
    if (p.panic) sync_top(&p);
    if (p.pos == before) ps_advance(&p);
  }
  m->decls = head.next;
  sort_diags(diags, before);
  /* The tree keeps no token: on a big file they are a third of the memory. */
  lex_close(lx);
  return m;
}
