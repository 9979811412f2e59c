/* token.c: the spelling and message-name tables of token.h's lists.
 *
 * Requires: nothing. Produces: tok_spelling, tok_kind_name, tok_compound_op.
 */
#include "token.h"

#define SPELLING_(kind, s) [kind] = s,
static const char *const spellings[TK__COUNT] = {TOK_KEYWORDS(SPELLING_)
                                                     TOK_PUNCTUATION(SPELLING_)};
#undef SPELLING_

#define KEYWORD_NAME_(kind, s) [kind] = "keyword '" s "'",
#define PUNCT_NAME_(kind, s)   [kind] = "'" s "'",
static const char *const names[TK__COUNT] = {[TK_EOF] = "end of file",
                                             [TK_ERROR] = "invalid token",
                                             [TK_IDENT] = "identifier",
                                             [TK_INT] = "integer literal",
                                             [TK_FLOAT] = "floating-point literal",
                                             [TK_STRING] = "string literal",
                                             [TK_TYPENAME] = "type name",
                                             TOK_KEYWORDS(KEYWORD_NAME_)
                                                 TOK_PUNCTUATION(PUNCT_NAME_)};
#undef KEYWORD_NAME_
#undef PUNCT_NAME_

const char *tok_spelling(TokKind k) {
  return (unsigned)k < TK__COUNT && spellings[k] ? spellings[k] : "?";
}

const char *tok_kind_name(TokKind k) {
  return (unsigned)k < TK__COUNT && names[k] ? names[k] : "token";
}

TokKind tok_compound_op(TokKind k) {
  switch (k) {
    case TK_PLUSEQ: return TK_PLUS;
    case TK_MINUSEQ: return TK_MINUS;
    case TK_STAREQ: return TK_STAR;
    case TK_SLASHEQ: return TK_SLASH;
    case TK_PERCENTEQ: return TK_PERCENT;
    case TK_AMPEQ: return TK_AMP;
    case TK_PIPEEQ: return TK_PIPE;
    case TK_CARETEQ: return TK_CARET;
    case TK_SHLEQ: return TK_SHL;
    case TK_SHREQ: return TK_SHR;
    default: return TK_EOF;
  }
}
