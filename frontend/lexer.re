/* lexer.re: source bytes -> tokens (re2c; CMake generates build/gen/lexer.c).
 *
 * Requires: a NUL-terminated source buffer (src[len] == 0) and types.c for the
 * builtin type names. Produces: tokens on demand (lex_open / lex_token, what
 * the parser uses: a parse that stops early never lexes, or stores, the rest
 * of the file) or all at once (lex_source: a TokenList in the arena), always
 * ending in TK_EOF, with a precise SrcLoc on every token. Lexical errors are
 * reported through diag_at, as the scan reaches them, and become TK_ERROR
 * tokens. Breaks: nothing in the parser may assume a TK_ERROR token is absent.
 *
 * Tokens are stored in blocks that never move, so a Token pointer stays valid
 * while later tokens are made (the parser holds some across a whole block).
 * A UTF-8 byte order mark at the very start of the file is skipped, as C
 * compilers do; anywhere else it is an unexpected character.
 *
 * Like Ninja's lexer, the scanner needs no bounds checks: the terminating NUL
 * is the sentinel, no pattern contains a NUL, so no match can run past it.
 * A NUL before src + len is an "embedded NUL" error, not the end.
 *
 * Choices the spec leaves open:
 *  - `_` separators sit between two digits only: `1_000` is fine, `1__0`,
 *    `1_` and `0x_1` are malformed number literals.
 *  - A decimal integer with a leading zero (`010`) is an error: C would read
 *    octal, kern has none, so guessing either way would surprise someone.
 *  - `1f` is malformed (as in C); write `1.0f` or `1.f`.
 *  - UTF-8 is validated everywhere (overlong forms and surrogates are invalid).
 */
#include "ast.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEX_MAX_IDENT = AST_MAX_IDENT, LEX_BLOCK = 1024 };

typedef unsigned char uchar;

struct Lexer {
  Arena *arena;
  Diags *diags;
  const char *path;
  const uchar *src, *end;   /* end = src + len, where the sentinel NUL is */
  const uchar *cur;
  const uchar *line_start;
  int line;
  Token **blocks;           /* LEX_BLOCK tokens each; token i is blocks[i / LEX_BLOCK][i % LEX_BLOCK] */
  int n, nblocks, cap_blocks;
  bool done;                /* the TK_EOF token is made */
  bool oom, oom_said;
  char *buf;                /* scratch for decoding string literals */
  size_t buf_len, buf_cap;
};

/* ---- locations and errors ------------------------------------------------ */

static SrcLoc loc_at(const Lexer *lx, const uchar *start, const uchar *stop) {
  SrcLoc l;
  l.file = lx->path;
  l.src = (const char *)lx->src;
  l.line = lx->line;
  l.col = (int)(start - lx->line_start) + 1;
  l.offset = (unsigned)(start - lx->src);
  l.len = stop > start ? (unsigned)(stop - start) : 1;
  return l;
}

static void newline(Lexer *lx, const uchar *after) {
  lx->line++;
  lx->line_start = after;
}

static Token *slot(Lexer *lx, int i) { return &lx->blocks[i / LEX_BLOCK][i % LEX_BLOCK]; }

/* Room for one more token: a new block when the last one is full. */
static bool room(Lexer *lx) {
  if (lx->n < lx->nblocks * LEX_BLOCK)
    return true;
  if (lx->nblocks == lx->cap_blocks) {
    int cap = lx->cap_blocks ? lx->cap_blocks * 2 : 16;
    Token **b = cap > 0 ? realloc(lx->blocks, (size_t)cap * sizeof *b) : NULL;
    if (!b)
      return false;
    lx->blocks = b;
    lx->cap_blocks = cap;
  }
  Token *block = malloc(LEX_BLOCK * sizeof *block);
  if (!block)
    return false;
  lx->blocks[lx->nblocks++] = block;
  return true;
}

static Token *emit(Lexer *lx, TokKind k, const uchar *start) {
  if (lx->oom || !room(lx)) {
    lx->oom = true;
    return NULL;
  }
  Token *t = slot(lx, lx->n++);
  *t = (Token){0};
  t->kind = k;
  t->loc = loc_at(lx, start, lx->cur);
  t->text = (const char *)start;
  return t;
}

/* Reports at [start, cur) and leaves a TK_ERROR token there for the parser. */
static void lex_error(Lexer *lx, const uchar *start, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void lex_error(Lexer *lx, const uchar *start, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(lx->diags, loc_at(lx, start, lx->cur), "%s", msg);
  emit(lx, TK_ERROR, start);
}

/* ---- literal values ------------------------------------------------------ */

static int digit_value(uchar c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return 99;
}

/* Digits of [p, e) in base; false when the value needs more than 64 bits. */
static bool parse_uint(const uchar *p, const uchar *e, unsigned base, uint64_t *out) {
  uint64_t v = 0;
  for (; p < e; p++) {
    unsigned d = (unsigned)digit_value(*p);
    if (*p == '_')
      continue;
    if (d >= base)
      break;  /* the suffix */
    if (v > (UINT64_MAX - d) / base)
      return false;
    v = v * base + d;
  }
  *out = v;
  return true;
}

static LitSuffix int_suffix(const uchar *s, const uchar *e) {
  bool u = false, l = false;
  for (const uchar *p = s; p < e; p++) {
    u |= *p == 'u' || *p == 'U';
    l |= *p == 'l' || *p == 'L';
  }
  return u && l ? SUF_UL : u ? SUF_U : l ? SUF_L : SUF_NONE;
}

static void lex_int(Lexer *lx, const uchar *s, unsigned base) {
  const uchar *digits = base == 10 ? s : s + 2;
  uint64_t v;
  if (base == 10 && s[0] == '0' && lx->cur - s > 1 && s[1] >= '0' && s[1] <= '9') {
    int n = lx->cur - s > 40 ? 40 : (int)(lx->cur - s);
    lex_error(lx, s, "leading zero in decimal literal '%.*s%s' (kern has no octal literals)", n,
              (const char *)s, n < lx->cur - s ? "..." : "");
    return;
  }
  if (!parse_uint(digits, lx->cur, base, &v)) {
    lex_error(lx, s, "integer literal does not fit in 64 bits");
    return;
  }
  Token *t = emit(lx, TK_INT, s);
  if (t) {
    t->ival = v;
    t->suffix = int_suffix(digits, lx->cur);
  }
}

/* strtod follows the host program's LC_NUMERIC (a ',' decimal point would
 * change what a kernel means), and localeconv isn't thread-safe, so floats
 * are read with strtod_l in a "C" locale made once. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void) {
  c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static double to_double(const uchar *s, const uchar *e, bool *range) {
  char buf[512];
  size_t n = 0;
  for (const uchar *p = s; p < e && n + 1 < sizeof buf; p++)
    if (*p != '_' && *p != 'f' && *p != 'F' && *p != 'd' && *p != 'D')
      buf[n++] = (char)*p;
  buf[n] = 0;
  pthread_once(&c_locale_once, make_c_locale);
  double v = c_locale ? strtod_l(buf, NULL, c_locale) : strtod(buf, NULL);
  *range = isinf(v);
  return v;
}

static void lex_float(Lexer *lx, const uchar *s) {
  if (lx->cur - s > 400) {
    lex_error(lx, s, "floating-point literal is too long");
    return;
  }
  bool range;
  double v = to_double(s, lx->cur, &range);
  if (range) {
    lex_error(lx, s, "floating-point literal is out of range");
    return;
  }
  Token *t = emit(lx, TK_FLOAT, s);
  if (!t)
    return;
  t->fval = v;
  uchar last = lx->cur[-1];
  t->suffix = last == 'f' || last == 'F' ? SUF_F : last == 'd' || last == 'D' ? SUF_D : SUF_NONE;
}

/* ---- identifiers, characters --------------------------------------------- */

static void lex_ident(Lexer *lx, const uchar *s) {
  size_t n = (size_t)(lx->cur - s);
  if (n > LEX_MAX_IDENT) {
    /* Point at the first bytes only: the caret line stays readable. */
    diag_error(lx->diags, loc_at(lx, s, s + 16),
               "identifier is too long (%zu bytes; the limit is %d)", n, LEX_MAX_IDENT);
    emit(lx, TK_ERROR, s);
    return;
  }
  emit(lx, TK_IDENT, s);
}

static void lex_typename(Lexer *lx, const uchar *s) {
  Token *t = emit(lx, TK_TYPENAME, s);
  if (t)
    t->ty = type_builtin_by_name((const char *)s, (size_t)(lx->cur - s));
}

/* s..cur is one valid UTF-8 sequence (the scanner matched it). */
static unsigned decode_utf8(const uchar *s, const uchar *e) {
  size_t n = (size_t)(e - s);
  if (n == 1)
    return s[0];
  unsigned cp = s[0] & (0x7F >> n);
  for (size_t i = 1; i < n; i++)
    cp = (cp << 6) | (s[i] & 0x3F);
  return cp;
}

static void lex_stray(Lexer *lx, const uchar *s) {
  if (*s >= 0x80) {
    /* One report for a run of non-ASCII bytes, not one per byte. */
    while (*lx->cur >= 0x80)
      lx->cur++;
    lex_error(lx, s, "invalid UTF-8");
  } else if (*s >= 0x21 && *s < 0x7F) {
    lex_error(lx, s, "unexpected character '%c'", *s);
  } else {
    lex_error(lx, s, "unexpected character '\\x%02X'", *s);
  }
}

/* ---- strings and comments ------------------------------------------------ */

static void buf_add(Lexer *lx, const void *p, size_t n) {
  if (lx->buf_len + n > lx->buf_cap) {
    size_t cap = lx->buf_cap ? lx->buf_cap : 256;
    while (cap < lx->buf_len + n)
      cap *= 2;
    char *b = realloc(lx->buf, cap);
    if (!b) {
      lx->oom = true;
      return;
    }
    lx->buf = b;
    lx->buf_cap = cap;
  }
  memcpy(lx->buf + lx->buf_len, p, n);
  lx->buf_len += n;
}

static void buf_byte(Lexer *lx, int c) {
  char ch = (char)c;
  buf_add(lx, &ch, 1);
}

/*!re2c
  re2c:define:YYCTYPE = "uchar";
  re2c:yyfill:enable = 0;

  nul      = "\x00";
  cp       = [\x01-\uD7FF\uE000-\U0010FFFF];
  nonascii = [\x80-\uD7FF\uE000-\U0010FFFF];
  hex      = [0-9a-fA-F];
*/

/* The end of a run of NUL bytes starting at m (a run is one mistake, one
 * error); never past the sentinel. */
static const uchar *nul_run(const Lexer *lx, const uchar *m) {
  while (m < lx->end && *m == 0)
    m++;
  return m;
}

static void escape_error(Lexer *lx, const uchar *bs, const uchar *stop, bool *bad) {
  /* A backslash ending the line or the file leaves the string unterminated,
   * which is the error to report (a NUL gets its own). */
  if (*stop == '\n' || *stop == '\r' || *stop == 0)
    return;
  diag_error(lx->diags, loc_at(lx, bs, stop), "invalid escape sequence '%.*s' in string literal",
             (int)(stop - bs), (const char *)bs);
  *bad = true;
}

static void string_unterminated(Lexer *lx, const uchar *s, const uchar *m) {
  lx->cur = m;
  diag_error(lx->diags, loc_at(lx, s, m), "unterminated string literal");
  emit(lx, TK_ERROR, s);
}

/* Grammar: '"' (char | escape)* '"'; the opening quote is already consumed. */
static void lex_string(Lexer *lx, const uchar *s) {
  const uchar *p = lx->cur, *q;
  bool bad = false, bad_utf8 = false;
  lx->buf_len = 0;
  for (;;) {
    const uchar *m = p;
    /*!re2c
      re2c:define:YYCURSOR = p;
      re2c:define:YYMARKER = q;

      ["]           { break; }
      "\\n"         { buf_byte(lx, '\n'); continue; }
      "\\t"         { buf_byte(lx, '\t'); continue; }
      "\\r"         { buf_byte(lx, '\r'); continue; }
      "\\0"         { buf_byte(lx, 0); continue; }
      "\\" [\\"']   { buf_byte(lx, m[1]); continue; }
      "\\x" hex hex { buf_byte(lx, digit_value(m[2]) * 16 + digit_value(m[3])); continue; }
      "\\" [\x20-\x7E] { escape_error(lx, m, p, &bad); continue; }
      "\\"          { escape_error(lx, m, p, &bad); continue; }
      nul {
        if (m == lx->end) {
          string_unterminated(lx, s, m);
          return;
        }
        p = nul_run(lx, m);
        diag_error(lx->diags, loc_at(lx, m, p), "embedded NUL byte in source");
        bad = true;
        continue;
      }
      [\n] { string_unterminated(lx, s, m); return; }
      (cp \ [\n"\\])+ { buf_add(lx, m, (size_t)(p - m)); continue; }
      * {
        if (!bad_utf8)
          diag_error(lx->diags, loc_at(lx, m, p), "invalid UTF-8 in string literal");
        bad = bad_utf8 = true;
        continue;
      }
    */
  }
  lx->cur = p;
  if (bad) {
    emit(lx, TK_ERROR, s);
    return;
  }
  Token *t = emit(lx, TK_STRING, s);
  if (t) {
    t->str = arena_strndup(lx->arena, lx->buf ? lx->buf : "", lx->buf_len);
    t->str_len = lx->buf_len;
    lx->oom |= t->str == NULL;
  }
}

static void comment_bad_utf8(Lexer *lx, const uchar *m, const uchar **p) {
  while (**p >= 0x80)
    (*p)++;
  diag_error(lx->diags, loc_at(lx, m, *p), "invalid UTF-8 in comment");
}

/* Grammar: '//' (any but newline)*; leaves the newline to the main scanner. */
static void lex_line_comment(Lexer *lx) {
  const uchar *p = lx->cur, *q;
  for (;;) {
    const uchar *m = p;
    /*!re2c
      re2c:define:YYCURSOR = p;
      re2c:define:YYMARKER = q;

      [\n] | nul     { p = m; break; }
      (cp \ [\n])+   { continue; }
      *              { comment_bad_utf8(lx, m, &p); continue; }
    */
  }
  lx->cur = p;
}

/* Grammar: '/' '*' any* '*' '/'; s is the comment's first byte. */
static void lex_block_comment(Lexer *lx, const uchar *s) {
  const uchar *p = lx->cur, *q;
  int line = lx->line;
  const uchar *line_start = lx->line_start;
  for (;;) {
    const uchar *m = p;
    /*!re2c
      re2c:define:YYCURSOR = p;
      re2c:define:YYMARKER = q;

      "*" "/"        { break; }
      [\n]           { newline(lx, p); continue; }
      nul {
        if (m < lx->end) {
          p = nul_run(lx, m);
          diag_error(lx->diags, loc_at(lx, m, p), "embedded NUL byte in source");
          continue;
        }
        p = m;
        /* Report at the comment's start: that is what needs closing. */
        int end_line = lx->line;
        const uchar *end_start = lx->line_start;
        lx->line = line;
        lx->line_start = line_start;
        diag_error(lx->diags, loc_at(lx, s, s + 2), "unterminated comment");
        lx->line = end_line;
        lx->line_start = end_start;
        break;
      }
      (cp \ [\n*])+ | "*" { continue; }
      *              { comment_bad_utf8(lx, m, &p); continue; }
    */
  }
  lx->cur = p;
}

/* ---- the main scanner ---------------------------------------------------- */

/* Scans one token (or skips blanks/comments); false at the end of input. */
static bool lex_next(Lexer *lx) {
  const uchar *p = lx->cur, *q;
  const uchar *s = p;
#define TOK(k) do { lx->cur = p; emit(lx, k, s); return true; } while (0)
  /*!re2c
    re2c:define:YYCURSOR = p;
    re2c:define:YYMARKER = q;

    ident    = [A-Za-z_][A-Za-z0-9_]*;
    dec      = [0-9] ("_"? [0-9])*;
    hexnum   = "0" [xX] hex ("_"? hex)*;
    binnum   = "0" [bB] [01] ("_"? [01])*;
    isuffix  = [uU] | [lL] | [uU][lL] | [lL][uU];
    exponent = [eE] [+-]? dec;
    float    = (dec "." dec? exponent? | "." dec exponent? | dec exponent) [fFdD]?;
    junk     = ([0-9] | "." [0-9]) [0-9A-Za-z_.]*;
    /* `1e+` with no digits: the sign belongs to the bad literal, or the
     * parser would go on to complain about a stray `+`. */
    badexp   = (dec "." dec? | "." dec | dec) [eE] [+-];
    typename = "bool" | "int" ("8" | "16" | "32" | "64")? | "uint" ("8" | "16" | "32" | "64")?
             | "float" ("16" | "32" | "64")? | "bfloat16" | "double" | [di]? "vec" [234]
             | "mat" ("22" | "33" | "44") | "quat" [hd]? | "transform"
             | "spatial_vector" | "spatial_matrix";

    nul {
      if (s == lx->end)
        return false;
      lx->cur = nul_run(lx, s);
      lex_error(lx, s, "embedded NUL byte in source");
      return true;
    }
    [ \t\r\v\f]+  { lx->cur = p; return true; }
    [\n]          { lx->cur = p; newline(lx, p); return true; }
    "//"          { lx->cur = p; lex_line_comment(lx); return true; }
    "/*"          { lx->cur = p; lex_block_comment(lx, s); return true; }

    "kernel"   { TOK(TK_KERNEL); }
    "struct"   { TOK(TK_STRUCT); }
    "enum"     { TOK(TK_ENUM); }
    "const"    { TOK(TK_CONST); }
    "import"   { TOK(TK_IMPORT); }
    "auto"     { TOK(TK_AUTO); }
    "void"     { TOK(TK_VOID); }
    "if"       { TOK(TK_IF); }
    "else"     { TOK(TK_ELSE); }
    "for"      { TOK(TK_FOR); }
    "while"    { TOK(TK_WHILE); }
    "do"       { TOK(TK_DO); }
    "break"    { TOK(TK_BREAK); }
    "continue" { TOK(TK_CONTINUE); }
    "return"   { TOK(TK_RETURN); }
    "static"   { TOK(TK_STATIC); }
    "true"     { TOK(TK_TRUE); }
    "false"    { TOK(TK_FALSE); }
    typename   { lx->cur = p; lex_typename(lx, s); return true; }
    ident      { lx->cur = p; lex_ident(lx, s); return true; }

    dec isuffix?    { lx->cur = p; lex_int(lx, s, 10); return true; }
    hexnum isuffix? { lx->cur = p; lex_int(lx, s, 16); return true; }
    binnum isuffix? { lx->cur = p; lex_int(lx, s, 2); return true; }
    float           { lx->cur = p; lex_float(lx, s); return true; }
    junk | badexp   { lx->cur = p; lex_error(lx, s, "malformed number literal"); return true; }
    ["]             { lx->cur = p; lex_string(lx, s); return true; }

    "("   { TOK(TK_LPAREN); }
    ")"   { TOK(TK_RPAREN); }
    "{"   { TOK(TK_LBRACE); }
    "}"   { TOK(TK_RBRACE); }
    "["   { TOK(TK_LBRACKET); }
    "]"   { TOK(TK_RBRACKET); }
    ";"   { TOK(TK_SEMI); }
    ","   { TOK(TK_COMMA); }
    "."   { TOK(TK_DOT); }
    "?"   { TOK(TK_QUESTION); }
    ":"   { TOK(TK_COLON); }
    "+"   { TOK(TK_PLUS); }
    "-"   { TOK(TK_MINUS); }
    "*"   { TOK(TK_STAR); }
    "/"   { TOK(TK_SLASH); }
    "%"   { TOK(TK_PERCENT); }
    "&"   { TOK(TK_AMP); }
    "|"   { TOK(TK_PIPE); }
    "^"   { TOK(TK_CARET); }
    "~"   { TOK(TK_TILDE); }
    "!"   { TOK(TK_BANG); }
    "<<"  { TOK(TK_SHL); }
    ">>"  { TOK(TK_SHR); }
    "<"   { TOK(TK_LT); }
    ">"   { TOK(TK_GT); }
    "<="  { TOK(TK_LE); }
    ">="  { TOK(TK_GE); }
    "=="  { TOK(TK_EQEQ); }
    "!="  { TOK(TK_NE); }
    "&&"  { TOK(TK_ANDAND); }
    "||"  { TOK(TK_OROR); }
    "="   { TOK(TK_ASSIGN); }
    "+="  { TOK(TK_PLUSEQ); }
    "-="  { TOK(TK_MINUSEQ); }
    "*="  { TOK(TK_STAREQ); }
    "/="  { TOK(TK_SLASHEQ); }
    "%="  { TOK(TK_PERCENTEQ); }
    "&="  { TOK(TK_AMPEQ); }
    "|="  { TOK(TK_PIPEEQ); }
    "^="  { TOK(TK_CARETEQ); }
    "<<=" { TOK(TK_SHLEQ); }
    ">>=" { TOK(TK_SHREQ); }
    "++"  { TOK(TK_INC); }
    "--"  { TOK(TK_DEC); }

    nonascii {
      lx->cur = p;
      lex_error(lx, s, "unexpected character U+%04X", decode_utf8(s, p));
      return true;
    }
    * { lx->cur = p; lex_stray(lx, s); return true; }
  */
#undef TOK
}

Lexer *lex_open(Arena *a, Diags *d, const char *path, const char *src, size_t len) {
  Lexer *lx = calloc(1, sizeof *lx);
  if (!lx)
    return NULL;
  lx->arena = a;
  lx->diags = d;
  lx->path = path;
  lx->src = lx->cur = lx->line_start = (const uchar *)src;
  lx->end = lx->src + len;
  lx->line = 1;
  if (len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0)
    lx->cur = lx->src + 3; /* columns count bytes, the mark's too */
  return lx;
}

/* Out of memory: reported once; from then on every token is end of file (a
 * lone EOF that is never written, so threads can share it). */
static Token *out_of_memory(Lexer *lx) {
  static Token eof = {.kind = TK_EOF};
  if (!lx->oom_said)
    diag_error(lx->diags, (SrcLoc){0}, "out of memory while reading %s",
               lx->path ? lx->path : "<input>");
  lx->oom_said = true;
  return &eof;
}

Token *lex_token(Lexer *lx, int i) {
  while (i >= lx->n && !lx->done && !lx->oom) {
    if (!lex_next(lx)) {
      lx->cur = lx->end;
      lx->done = emit(lx, TK_EOF, lx->end) != NULL;
    }
  }
  if (lx->oom)
    return out_of_memory(lx);
  return slot(lx, i < lx->n ? i : lx->n - 1);
}

void lex_close(Lexer *lx) {
  if (!lx)
    return;
  for (int i = 0; i < lx->nblocks; i++)
    free(lx->blocks[i]);
  free(lx->blocks);
  free(lx->buf);
  free(lx);
}

TokenList lex_source(Arena *a, Diags *d, const char *path, const char *src, size_t len) {
  static Token eof = {.kind = TK_EOF};
  TokenList tl = {.toks = &eof, .n = 1};
  Lexer *lx = lex_open(a, d, path, src, len);
  if (!lx) {
    diag_error(d, (SrcLoc){0}, "out of memory while reading %s", path ? path : "<input>");
    return tl;
  }
  for (int i = 0; lex_token(lx, i)->kind != TK_EOF; i++)
    ;
  Token *all = lx->oom ? NULL : arena_alloc(a, (size_t)lx->n * sizeof *all);
  if (all) {
    for (int i = 0; i < lx->n; i++)
      all[i] = *slot(lx, i);
    tl.toks = all;
    tl.n = lx->n;
  } else {
    out_of_memory(lx);
  }
  lex_close(lx);
  return tl;
}
