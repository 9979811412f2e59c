/* token.h: the kern language's tokens and how each is spelled.
 *
 * One list per family makes the TokKind enum and both tables, so the lexer's
 * token names, the checker's messages and the C operators the emitter writes
 * cannot disagree: tok_spelling ("+=", "while") and tok_kind_name ("'+='",
 * "keyword 'while'"). The lexer's patterns (frontend/lexer.re) are the one
 * other place a spelling appears, because re2c needs literal patterns.
 */
#ifndef KERN_TOKEN_H
#define KERN_TOKEN_H

/* Keywords: kind, spelling. */
#define TOK_KEYWORDS(X)                                                                            \
  X(TK_KERNEL, "kernel")                                                                           \
  X(TK_STRUCT, "struct")                                                                           \
  X(TK_ENUM, "enum")                                                                               \
  X(TK_CONST, "const")                                                                             \
  X(TK_IMPORT, "import")                                                                           \
  X(TK_AUTO, "auto")                                                                               \
  X(TK_VOID, "void")                                                                               \
  X(TK_IF, "if")                                                                                   \
  X(TK_ELSE, "else")                                                                               \
  X(TK_FOR, "for")                                                                                 \
  X(TK_WHILE, "while")                                                                             \
  X(TK_DO, "do")                                                                                   \
  X(TK_BREAK, "break")                                                                             \
  X(TK_CONTINUE, "continue")                                                                       \
  X(TK_RETURN, "return")                                                                           \
  X(TK_STATIC, "static")                                                                           \
  X(TK_TRUE, "true")                                                                               \
  X(TK_FALSE, "false")

/* Punctuation and operators: kind, spelling. */
#define TOK_PUNCTUATION(X)                                                                         \
  X(TK_LPAREN, "(")                                                                                \
  X(TK_RPAREN, ")")                                                                                \
  X(TK_LBRACE, "{")                                                                                \
  X(TK_RBRACE, "}")                                                                                \
  X(TK_LBRACKET, "[")                                                                              \
  X(TK_RBRACKET, "]")                                                                              \
  X(TK_SEMI, ";")                                                                                  \
  X(TK_COMMA, ",")                                                                                 \
  X(TK_DOT, ".")                                                                                   \
  X(TK_QUESTION, "?")                                                                              \
  X(TK_COLON, ":")                                                                                 \
  X(TK_PLUS, "+")                                                                                  \
  X(TK_MINUS, "-")                                                                                 \
  X(TK_STAR, "*")                                                                                  \
  X(TK_SLASH, "/")                                                                                 \
  X(TK_PERCENT, "%")                                                                               \
  X(TK_AMP, "&")                                                                                   \
  X(TK_PIPE, "|")                                                                                  \
  X(TK_CARET, "^")                                                                                 \
  X(TK_TILDE, "~")                                                                                 \
  X(TK_BANG, "!")                                                                                  \
  X(TK_SHL, "<<")                                                                                  \
  X(TK_SHR, ">>")                                                                                  \
  X(TK_LT, "<")                                                                                    \
  X(TK_GT, ">")                                                                                    \
  X(TK_LE, "<=")                                                                                   \
  X(TK_GE, ">=")                                                                                   \
  X(TK_EQEQ, "==")                                                                                 \
  X(TK_NE, "!=")                                                                                   \
  X(TK_ANDAND, "&&")                                                                               \
  X(TK_OROR, "||")                                                                                 \
  X(TK_ASSIGN, "=")                                                                                \
  X(TK_PLUSEQ, "+=")                                                                               \
  X(TK_MINUSEQ, "-=")                                                                              \
  X(TK_STAREQ, "*=")                                                                               \
  X(TK_SLASHEQ, "/=")                                                                              \
  X(TK_PERCENTEQ, "%=")                                                                            \
  X(TK_AMPEQ, "&=")                                                                                \
  X(TK_PIPEEQ, "|=")                                                                               \
  X(TK_CARETEQ, "^=")                                                                              \
  X(TK_SHLEQ, "<<=")                                                                               \
  X(TK_SHREQ, ">>=")                                                                               \
  X(TK_INC, "++")                                                                                  \
  X(TK_DEC, "--")

#define TOK_ENUM_(kind, spelling) kind,
// clang-format off
typedef enum {
  TK_EOF,
  TK_ERROR,  /* the lexer already reported it; the parser skips it */
  TK_IDENT,
  TK_INT,    /* ival, suffix */
  TK_FLOAT,  /* fval, suffix */
  TK_STRING, /* str/len: the bytes between the quotes, escapes decoded */
  TOK_KEYWORDS(TOK_ENUM_)
  TK_TYPENAME, /* a builtin type name: bool int float vec3 mat33 ...; `ty` says which */
  TOK_PUNCTUATION(TOK_ENUM_)
  TK__COUNT
} TokKind;
// clang-format on
#undef TOK_ENUM_

/* How the token is written: "+=", "while"; "?" for tokens with no fixed
 * spelling (identifiers, literals, type names). */
const char *tok_spelling(TokKind);
/* The token for messages: "identifier", "'+='", "keyword 'while'". */
const char *tok_kind_name(TokKind);
/* The binary operator of a compound assignment (TK_PLUSEQ -> TK_PLUS); TK_EOF
 * for anything else. */
TokKind tok_compound_op(TokKind);

#endif
