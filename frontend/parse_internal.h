/* parse_internal.h: what the parser's files share (frontend/parser.c, parse_type.c).
 *
 * Requires: ast.h (tokens, the lexer, the tree). Produces: the Parser state,
 * its token accessors (inline), and the ps_-prefixed functions one file of
 * the parser calls in another: parser.c owns tokens, diagnostics, nodes,
 * expressions, statements and declarations; parse_type.c owns the type
 * grammar. Everything else in either file is static.
 */
#ifndef KERN_PARSE_INTERNAL_H
#define KERN_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"

/* PARSE_LOOKAHEAD bounds the commas of `T[,,]` that a guess looks through:
 * peek() is linear in its distance, so unbounded looks go quadratic. */
enum { PARSE_MAX_DEPTH = 256, PARSE_MAX_DIMS = 4, PARSE_LOOKAHEAD = 64 };

typedef struct Parser {
  Arena *arena;
  Diags *diags;
  Lexer *lx;
  Token eof;      /* what every token reads as after an abort */
  int pos;        /* current token, never a TK_ERROR one */
  int prev;       /* the last consumed token */
  bool after_err; /* a lexer error token sits right before the current one */
  bool panic;     /* an error was reported; quiet until resynchronised */
  bool abort;     /* nesting too deep or out of memory: the rest reads as EOF */
  int depth;
  const Decl *fn; /* the generic function being read: its type variables may be a
                   * vec<T, N>'s element */
  /* After an allocation failure every node is this scratch object: the parse
   * winds down without NULL checks and its declaration is dropped. */
  union {
    Node n;
    Var v;
    TypeExpr t;
    Decl d;
    Field f;
  } junk;
} Parser;

static inline Token *tok_at(Parser *p, int i) { return lex_token(p->lx, i); }

static inline Token *tok(Parser *p) { return p->abort ? &p->eof : tok_at(p, p->pos); }

static inline TokKind kind(Parser *p) { return tok(p)->kind; }

static inline bool at(Parser *p, TokKind k) { return kind(p) == k; }

/* The k-th token after the current one, lexer errors skipped. */
static inline Token *peek(Parser *p, int k) {
  if (p->abort) return &p->eof;
  int i = p->pos;
  while (k > 0 && tok_at(p, i)->kind != TK_EOF) {
    i++;
    if (tok_at(p, i)->kind != TK_ERROR) k--;
  }
  return tok_at(p, i);
}

static inline SrcLoc prev_loc(Parser *p) { return tok_at(p, p->prev)->loc; }

/* ---- parser.c ---------------------------------------------------------------- */

Token *ps_advance(Parser *p);
bool ps_accept(Parser *p, TokKind k);
bool ps_expect(Parser *p, TokKind k, const char *where);
/* "identifier 'foo'", "keyword 'while'", ... (arena text). */
const char *ps_tok_desc(Parser *p, const Token *t);
/* A recoverable error: reported unless the parser is already in panic. */
void ps_report(Parser *p, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error at the current token after which the parser must resynchronise. */
bool ps_syntax_error(Parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Never NULL: out of memory stops the parse and hands back scratch memory. */
void *ps_alloc(Parser *p, size_t size);
Node *ps_error_node(Parser *p, SrcLoc loc);
const char *ps_tok_text(Parser *p, const Token *t);
Node *ps_parse_binary(Parser *p, int min_prec);
Node *ps_parse_expr(Parser *p);

/* ---- parse_type.c ------------------------------------------------------------ */

bool ps_at_type_start(Parser *p);
/* Is token k (from the current one) `tile <` / `vec < TYPENAME` / `mat < TYPENAME`? */
bool ps_at_tile_type(Parser *p, int k);
bool ps_at_vecn_type(Parser *p, int k);
void ps_parse_dims(Parser *p, TypeExpr *te);
/* At ps_at_vecn_type: reads vec<...> or mat<...> into te (ty_error if malformed). */
void ps_parse_vecn_type(Parser *p, TypeExpr *te);
/* A tile's extent: an expression above the comparisons, so '>' ends it. */
Node *ps_parse_shape_expr(Parser *p);
TypeExpr *ps_parse_type(Parser *p);
void ps_parse_fixed_dims(Parser *p, TypeExpr *te);

#endif
