/* test_lexer.c: the lexer (lexer.re) and what it stands on: arena, diagnostics, types.
 *
 * Every expectation is written out by hand here (kinds, values, line:col,
 * messages); nothing is compared with the code's own earlier output.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ast.h"

static Arena *arena;
static Diags diags;
static TokenList tl;

static void setup(void) {
  arena = arena_new();
  diags_init(&diags);
}

static void teardown(void) {
  diags_free(&diags);
  arena_free(arena);
}

static TokenList lexn(const char *src, size_t len) {
  tl = lex_source(arena, &diags, "t.kern", src, len);
  return tl;
}

static TokenList lex(const char *src) { return lexn(src, strlen(src)); }

/* The n-th diagnostic (0-based). */
static Diag *diag_n(int n) {
  Diag *d = diags.head;
  while (d && n-- > 0) d = d->next;
  return d;
}

static int ndiags(void) {
  int n = 0;
  for (Diag *d = diags.head; d; d = d->next) n++;
  return n;
}

static void expect_error(int n, int line, int col, const char *msg) {
  Diag *d = diag_n(n);
  cr_assert(d, "no diagnostic #%d", n);
  cr_expect_eq(d->level, DIAG_ERROR);
  cr_expect_str_eq(d->msg, msg);
  cr_expect_eq(d->loc.line, line, "line %d, expected %d (%s)", d->loc.line, line, msg);
  cr_expect_eq(d->loc.col, col, "col %d, expected %d (%s)", d->loc.col, col, msg);
}

/* Kinds of all tokens but the final EOF, which must be there. */
static void expect_kinds(const TokKind *kinds, int n) {
  cr_assert_eq(tl.n, n + 1, "got %d tokens, expected %d", tl.n - 1, n);
  for (int i = 0; i < n; i++)
    cr_expect_eq(tl.toks[i].kind, kinds[i], "token %d: %s, expected %s", i,
                 tok_kind_name(tl.toks[i].kind), tok_kind_name(kinds[i]));
  cr_expect_eq(tl.toks[n].kind, TK_EOF);
}

TestSuite(lexer, .init = setup, .fini = teardown);

/* ---- token kinds ------------------------------------------------------------ */

Test(lexer, empty_file_is_just_eof) {
  lex("");
  cr_assert_eq(tl.n, 1);
  cr_expect_eq(tl.toks[0].kind, TK_EOF);
  cr_expect_eq(tl.toks[0].loc.line, 1);
  cr_expect_eq(tl.toks[0].loc.col, 1);
  cr_expect_eq(diag_errors(&diags), 0);
}

Test(lexer, blanks_and_comments_only) {
  lex("  \t\r\n// line\n/* block\n */ \v\f\n");
  cr_assert_eq(tl.n, 1);
  cr_expect_eq(tl.toks[0].loc.line, 5);
  cr_expect_eq(diag_errors(&diags), 0);
}

Test(lexer, keywords) {
  lex("kernel struct enum const import auto void if else for while do break continue return static "
      "true false");
  static const TokKind k[] = {TK_KERNEL, TK_STRUCT,   TK_ENUM,   TK_CONST,  TK_IMPORT, TK_AUTO,
                              TK_VOID,   TK_IF,       TK_ELSE,   TK_FOR,    TK_WHILE,  TK_DO,
                              TK_BREAK,  TK_CONTINUE, TK_RETURN, TK_STATIC, TK_TRUE,   TK_FALSE};
  expect_kinds(k, 18);
}

Test(lexer, identifiers_that_look_like_keywords) {
  lex("iff kernels _while while_ For x1 _ __a9 float32x vec5 mat23 int128");
  for (int i = 0; i < 12; i++) cr_expect_eq(tl.toks[i].kind, TK_IDENT, "token %d", i);
  cr_expect_eq(tl.toks[12].kind, TK_EOF);
  cr_expect_eq(diag_errors(&diags), 0);
}

Test(lexer, punctuation) {
  lex("( ) { } [ ] ; , . ? : + - * / % & | ^ ~ ! << >> < > <= >= == != && || = += -= *= /= %= "
      "&= |= ^= <<= >>= ++ --");
  static const TokKind k[] = {
      TK_LPAREN,  TK_RPAREN,    TK_LBRACE,   TK_RBRACE, TK_LBRACKET, TK_RBRACKET, TK_SEMI,
      TK_COMMA,   TK_DOT,       TK_QUESTION, TK_COLON,  TK_PLUS,     TK_MINUS,    TK_STAR,
      TK_SLASH,   TK_PERCENT,   TK_AMP,      TK_PIPE,   TK_CARET,    TK_TILDE,    TK_BANG,
      TK_SHL,     TK_SHR,       TK_LT,       TK_GT,     TK_LE,       TK_GE,       TK_EQEQ,
      TK_NE,      TK_ANDAND,    TK_OROR,     TK_ASSIGN, TK_PLUSEQ,   TK_MINUSEQ,  TK_STAREQ,
      TK_SLASHEQ, TK_PERCENTEQ, TK_AMPEQ,    TK_PIPEEQ, TK_CARETEQ,  TK_SHLEQ,    TK_SHREQ,
      TK_INC,     TK_DEC};
  expect_kinds(k, (int)(sizeof k / sizeof k[0]));
}

Test(lexer, maximal_munch_without_spaces) {
  lex("a<<=b>>c<=d&&e||f+++g---h");
  static const TokKind k[] = {TK_IDENT, TK_SHLEQ,  TK_IDENT, TK_SHR,   TK_IDENT, TK_LE,
                              TK_IDENT, TK_ANDAND, TK_IDENT, TK_OROR,  TK_IDENT, TK_INC,
                              TK_PLUS,  TK_IDENT,  TK_DEC,   TK_MINUS, TK_IDENT};
  expect_kinds(k, (int)(sizeof k / sizeof k[0]));
}

Test(lexer, type_names_with_aliases) {
  static const struct {
    const char *name;
    Type *ty;
  } names[] = {
      {"bool", &ty_bool},   {"int8", &ty_i8},       {"int16", &ty_i16},   {"int32", &ty_i32},
      {"int64", &ty_i64},   {"uint8", &ty_u8},      {"uint16", &ty_u16},  {"uint32", &ty_u32},
      {"uint64", &ty_u64},  {"float16", &ty_f16},   {"float32", &ty_f32}, {"float64", &ty_f64},
      {"int", &ty_i32},     {"uint", &ty_u32},      {"float", &ty_f32},   {"double", &ty_f64},
      {"vec2", &ty_vec2},   {"vec3", &ty_vec3},     {"vec4", &ty_vec4},   {"dvec2", &ty_dvec2},
      {"dvec3", &ty_dvec3}, {"dvec4", &ty_dvec4},   {"ivec2", &ty_ivec2}, {"ivec3", &ty_ivec3},
      {"ivec4", &ty_ivec4}, {"mat22", &ty_mat22},   {"mat33", &ty_mat33}, {"mat44", &ty_mat44},
      {"quat", &ty_quat},   {"bfloat16", &ty_bf16},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    lex(names[i].name);
    cr_assert_eq(tl.n, 2);
    cr_expect_eq(tl.toks[0].kind, TK_TYPENAME, "%s", names[i].name);
    cr_expect_eq(tl.toks[0].ty, names[i].ty, "%s", names[i].name);
    cr_expect_eq(tl.toks[0].loc.len, strlen(names[i].name));
  }
}

/* ---- literals --------------------------------------------------------------- */

Test(lexer, integer_literals) {
  static const struct {
    const char *text;
    uint64_t value;
    LitSuffix suffix;
  } cases[] = {
      {"0", 0, SUF_NONE},
      {"42", 42, SUF_NONE},
      {"1_000_000", 1000000, SUF_NONE},
      {"0x1F", 31, SUF_NONE},
      {"0XfF", 255, SUF_NONE},
      {"0xdead_BEEF", 0xdeadbeefu, SUF_NONE},
      {"0b1010", 10, SUF_NONE},
      {"0B1111_0000", 240, SUF_NONE},
      {"7u", 7, SUF_U},
      {"7U", 7, SUF_U},
      {"7l", 7, SUF_L},
      {"7L", 7, SUF_L},
      {"7ul", 7, SUF_UL},
      {"7UL", 7, SUF_UL},
      {"7lu", 7, SUF_UL},
      {"7LU", 7, SUF_UL},
      {"0xFFu", 255, SUF_U},
      {"0b1L", 1, SUF_L},
      {"18446744073709551615", UINT64_MAX, SUF_NONE},
      {"0xFFFFFFFFFFFFFFFF", UINT64_MAX, SUF_NONE},
      {"9223372036854775808", 9223372036854775808u, SUF_NONE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lex(cases[i].text);
    cr_assert_eq(tl.n, 2, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].kind, TK_INT, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].ival, cases[i].value, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].suffix, cases[i].suffix, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].loc.len, strlen(cases[i].text), "%s", cases[i].text);
  }
  cr_expect_eq(diag_errors(&diags), 0);
}

Test(lexer, float_literals) {
  static const struct {
    const char *text;
    double value;
    LitSuffix suffix;
  } cases[] = {
      {"1.0", 1.0, SUF_NONE},   {"1.", 1.0, SUF_NONE},         {".5", 0.5, SUF_NONE},
      {"1e-3", 1e-3, SUF_NONE}, {"1.5E+2", 150.0, SUF_NONE},   {"2e10", 2e10, SUF_NONE},
      {"1.5f", 1.5, SUF_F},     {"1.5F", 1.5, SUF_F},          {"2.0d", 2.0, SUF_D},
      {"2.0D", 2.0, SUF_D},     {"1.f", 1.0, SUF_F},           {".25e1f", 2.5, SUF_F},
      {"3e2d", 300.0, SUF_D},   {"1_000.5", 1000.5, SUF_NONE}, {"0.1", 0.1, SUF_NONE},
      {"007.5", 7.5, SUF_NONE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lex(cases[i].text);
    cr_assert_eq(tl.n, 2, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].kind, TK_FLOAT, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].fval, cases[i].value, "%s", cases[i].text);
    cr_expect_eq(tl.toks[0].suffix, cases[i].suffix, "%s", cases[i].text);
  }
  cr_expect_eq(diag_errors(&diags), 0);
}

Test(lexer, literal_then_member_and_operators) {
  lex("a[1].x 1-2 1.5-.5");
  static const TokKind k[] = {TK_IDENT, TK_LBRACKET, TK_INT, TK_RBRACKET, TK_DOT,   TK_IDENT,
                              TK_INT,   TK_MINUS,    TK_INT, TK_FLOAT,    TK_MINUS, TK_FLOAT};
  expect_kinds(k, (int)(sizeof k / sizeof k[0]));
}

Test(lexer, string_escapes_decoded) {
  lex("\"a\\n\\t\\r\\\\\\\"\\'\\x41\\x7e\"");
  cr_assert_eq(tl.toks[0].kind, TK_STRING);
  cr_expect_eq(tl.toks[0].str_len, 9);
  cr_expect_str_eq(tl.toks[0].str, "a\n\t\r\\\"'A~");
  cr_expect_eq(tl.toks[0].loc.len, 23);
}

Test(lexer, string_with_nul_escape_and_utf8) {
  lex("\"x\\0y \xc3\xa9\xe2\x82\xac\"");
  cr_assert_eq(tl.toks[0].kind, TK_STRING);
  cr_expect_eq(tl.toks[0].str_len, 9);
  cr_expect_eq(memcmp(tl.toks[0].str, "x\0y \xc3\xa9\xe2\x82\xac", 9), 0);
  cr_expect_eq(diag_errors(&diags), 0);
}

Test(lexer, empty_string) {
  lex("\"\"");
  cr_assert_eq(tl.toks[0].kind, TK_STRING);
  cr_expect_eq(tl.toks[0].str_len, 0);
  cr_expect_str_eq(tl.toks[0].str, "");
}

/* ---- positions -------------------------------------------------------------- */

Test(lexer, positions_line_col_len) {
  lex("int x = 10;\n  float yy=2.5 ;");
  static const struct {
    int line, col;
    unsigned len, offset;
  } want[] = {{1, 1, 3, 0},   {1, 5, 1, 4},   {1, 7, 1, 6},  {1, 9, 2, 8},
              {1, 11, 1, 10}, {2, 3, 5, 14},  {2, 9, 2, 20}, {2, 11, 1, 22},
              {2, 12, 3, 23}, {2, 16, 1, 27}, {2, 17, 1, 28}};
  cr_assert_eq(tl.n, 11);
  for (int i = 0; i < 11; i++) {
    SrcLoc l = tl.toks[i].loc;
    cr_expect_eq(l.line, want[i].line, "token %d line", i);
    cr_expect_eq(l.col, want[i].col, "token %d col", i);
    cr_expect_eq(l.len, want[i].len, "token %d len", i);
    cr_expect_eq(l.offset, want[i].offset, "token %d offset", i);
    cr_expect_str_eq(l.file, "t.kern");
    cr_expect_eq(tl.toks[i].text, l.src + l.offset);
  }
}

Test(lexer, positions_after_multiline_comment) {
  lex("a /* one\ntwo\n three */ b\n// c\n\tc");
  cr_assert_eq(tl.n, 4);
  cr_expect_eq(tl.toks[0].loc.line, 1);
  cr_expect_eq(tl.toks[1].loc.line, 3);
  cr_expect_eq(tl.toks[1].loc.col, 11);
  cr_expect_eq(tl.toks[2].loc.line, 5);
  cr_expect_eq(tl.toks[2].loc.col, 2); /* a tab is one byte */
  cr_expect_eq(tl.toks[3].loc.line, 5);
  cr_expect_eq(tl.toks[3].loc.col, 3);
}

Test(lexer, positions_crlf_and_utf8_columns_in_bytes) {
  lex("a\r\n/* \xc3\xa9 */ b");
  cr_assert_eq(tl.n, 3);
  cr_expect_eq(tl.toks[1].loc.line, 2);
  cr_expect_eq(tl.toks[1].loc.col, 10);
}

/* ---- errors ------------------------------------------------------------------- */

Test(lexer, malformed_numbers_are_one_error_each) {
  lex("1.2.3 1e 0x 12abc 1__0 1_ 0b2 1f 1e+");
  expect_error(0, 1, 1, "malformed number literal");
  expect_error(1, 1, 7, "malformed number literal");
  expect_error(2, 1, 10, "malformed number literal");
  expect_error(3, 1, 13, "malformed number literal");
  expect_error(4, 1, 19, "malformed number literal");
  expect_error(5, 1, 24, "malformed number literal");
  expect_error(6, 1, 27, "malformed number literal");
  expect_error(7, 1, 31, "malformed number literal");
  expect_error(8, 1, 34, "malformed number literal");
  cr_expect_eq(diag_errors(&diags), 9);
  cr_expect_eq(diag_n(0)->loc.len, 5);
  cr_expect_eq(diag_n(3)->loc.len, 5);
  /* 1e+ is one bad literal, sign included: no stray `+` for the parser */
  cr_expect_eq(diag_n(8)->loc.len, 3);
  cr_assert_eq(tl.n, 10);
  for (int i = 0; i < 9; i++) cr_expect_eq(tl.toks[i].kind, TK_ERROR, "token %d", i);
}

Test(lexer, dangling_exponent_sign_only_on_decimals) {
  lex("0x1e+5 1e-3 .5e+2 2e- 3.E+");
  static const TokKind k[] = {TK_INT, TK_PLUS, TK_INT, TK_FLOAT, TK_FLOAT, TK_ERROR, TK_ERROR};
  expect_kinds(k, 7);
  expect_error(0, 1, 19, "malformed number literal");
  expect_error(1, 1, 23, "malformed number literal");
  cr_expect_eq(diag_n(1)->loc.len, 4);
  cr_expect_eq(diag_errors(&diags), 2);
}

Test(lexer, integer_overflow) {
  lex("x = 18446744073709551616;\n0x1_0000_0000_0000_0000 0b" /* 65 ones */
      "11111111111111111111111111111111111111111111111111111111111111111");
  expect_error(0, 1, 5, "integer literal does not fit in 64 bits");
  expect_error(1, 2, 1, "integer literal does not fit in 64 bits");
  expect_error(2, 2, 25, "integer literal does not fit in 64 bits");
  cr_expect_eq(diag_errors(&diags), 3);
  cr_expect_eq(diag_n(0)->loc.len, 20);
}

Test(lexer, float_out_of_range) {
  lex("1e999");
  expect_error(0, 1, 1, "floating-point literal is out of range");
}

Test(lexer, leading_zero_decimal_is_an_error) {
  lex("010 0 0.5 00");
  expect_error(0, 1, 1, "leading zero in decimal literal '010' (kern has no octal literals)");
  expect_error(1, 1, 11, "leading zero in decimal literal '00' (kern has no octal literals)");
  cr_expect_eq(diag_errors(&diags), 2);
  cr_expect_eq(tl.toks[1].kind, TK_INT);
  cr_expect_eq(tl.toks[2].kind, TK_FLOAT);
}

Test(lexer, unterminated_string_at_newline_and_eof) {
  lex("s = \"abc\nt = \"xyz");
  expect_error(0, 1, 5, "unterminated string literal");
  expect_error(1, 2, 5, "unterminated string literal");
  cr_expect_eq(diag_errors(&diags), 2);
  static const TokKind k[] = {TK_IDENT, TK_ASSIGN, TK_ERROR, TK_IDENT, TK_ASSIGN, TK_ERROR};
  expect_kinds(k, 6);
}

Test(lexer, bad_escape) {
  lex("\"ok\\q\" \"\\x4\" \"\\u1234\" x");
  expect_error(0, 1, 4, "invalid escape sequence '\\q' in string literal");
  expect_error(1, 1, 9, "invalid escape sequence '\\x' in string literal");
  expect_error(2, 1, 15, "invalid escape sequence '\\u' in string literal");
  cr_expect_eq(diag_errors(&diags), 3);
  static const TokKind k[] = {TK_ERROR, TK_ERROR, TK_ERROR, TK_IDENT};
  expect_kinds(k, 4);
}

Test(lexer, unterminated_block_comment_reported_at_start) {
  lex("a\n  /* never\nclosed\n");
  expect_error(0, 2, 3, "unterminated comment");
  cr_expect_eq(diag_errors(&diags), 1);
  cr_expect_eq(tl.n, 2);
}

Test(lexer, stray_characters) {
  lex("a @ b $ c ` d # e \\ \x01");
  expect_error(0, 1, 3, "unexpected character '@'");
  expect_error(1, 1, 7, "unexpected character '$'");
  expect_error(2, 1, 11, "unexpected character '`'");
  expect_error(3, 1, 15, "unexpected character '#'");
  expect_error(4, 1, 19, "unexpected character '\\'");
  expect_error(5, 1, 21, "unexpected character '\\x01'");
  cr_expect_eq(diag_errors(&diags), 6);
  static const TokKind k[] = {TK_IDENT, TK_ERROR, TK_IDENT, TK_ERROR, TK_IDENT, TK_ERROR,
                              TK_IDENT, TK_ERROR, TK_IDENT, TK_ERROR, TK_ERROR};
  expect_kinds(k, 11);
}

Test(lexer, non_ascii_outside_strings) {
  lex("x = \xe2\x82\xac + \xc3\xa9;");
  expect_error(0, 1, 5, "unexpected character U+20AC");
  expect_error(1, 1, 11, "unexpected character U+00E9");
  cr_expect_eq(diag_n(0)->loc.len, 3);
}

Test(lexer, invalid_utf8_everywhere) {
  /* raw 0xFF in code; overlong C0 AF in a comment; lone continuation byte in a string;
   * a surrogate (ED A0 80) in a block comment */
  lex("a \xff b // \xc0\xaf\n\"x\x80y\" /* \xed\xa0\x80 */ c");
  expect_error(0, 1, 3, "invalid UTF-8");
  expect_error(1, 1, 10, "invalid UTF-8 in comment");
  expect_error(2, 2, 3, "invalid UTF-8 in string literal");
  expect_error(3, 2, 10, "invalid UTF-8 in comment");
  cr_expect_eq(diag_errors(&diags), 4);
  static const TokKind k[] = {TK_IDENT, TK_ERROR, TK_IDENT, TK_ERROR, TK_IDENT};
  expect_kinds(k, 5);
}

Test(lexer, valid_utf8_in_comments_and_strings) {
  lex("// caf\xc3\xa9 \xf0\x9f\x98\x80\n/* \xe4\xb8\xad */ \"\xe2\x82\xac\"");
  cr_expect_eq(diag_errors(&diags), 0);
  cr_assert_eq(tl.n, 2);
  cr_expect_eq(tl.toks[0].kind, TK_STRING);
}

Test(lexer, embedded_nul) {
  static const char src[] = "a \0 b";
  lexn(src, sizeof src - 1);
  expect_error(0, 1, 3, "embedded NUL byte in source");
  cr_expect_eq(diag_errors(&diags), 1);
  static const TokKind k[] = {TK_IDENT, TK_ERROR, TK_IDENT};
  expect_kinds(k, 3);
}

Test(lexer, embedded_nul_in_comment_and_string) {
  static const char src[] = "/* \0 */ \"a\0b\" c";
  lexn(src, sizeof src - 1);
  expect_error(0, 1, 4, "embedded NUL byte in source");
  /* The NUL spoils the string but does not end it: no cascade after it. */
  expect_error(1, 1, 11, "embedded NUL byte in source");
  cr_expect_eq(diag_errors(&diags), 2);
  static const TokKind k[] = {TK_ERROR, TK_IDENT};
  expect_kinds(k, 2);
}

Test(lexer, nul_runs_are_one_error) {
  static const char src[] = "a \0\0\0\0 b /* \0\0 */ \"\0\0\"";
  lexn(src, sizeof src - 1);
  expect_error(0, 1, 3, "embedded NUL byte in source");
  cr_expect_eq(diag_n(0)->loc.len, 4);
  expect_error(1, 1, 13, "embedded NUL byte in source");
  expect_error(2, 1, 20, "embedded NUL byte in source");
  cr_expect_eq(diag_errors(&diags), 3);
  static const TokKind k[] = {TK_IDENT, TK_ERROR, TK_IDENT, TK_ERROR};
  expect_kinds(k, 4);
}

Test(lexer, backslash_at_end_of_string_is_only_unterminated) {
  lex("x = \"ab\\\ny = \"cd\\");
  expect_error(0, 1, 5, "unterminated string literal");
  expect_error(1, 2, 5, "unterminated string literal");
  cr_expect_eq(diag_errors(&diags), 2);
}

Test(lexer, identifier_length_limit) {
  char *src = malloc(1026);
  memset(src, 'a', 1024);
  src[1024] = 0;
  lex(src);
  cr_expect_eq(tl.toks[0].kind, TK_IDENT);
  cr_expect_eq(diag_errors(&diags), 0);
  src[1024] = 'b';
  src[1025] = 0;
  lex(src);
  cr_expect_eq(tl.toks[0].kind, TK_ERROR);
  expect_error(0, 1, 1, "identifier is too long (1025 bytes; the limit is 1024)");
  free(src);
}

Test(lexer, one_megabyte_identifier) {
  size_t n = 1 << 20;
  char *src = malloc(n + 16);
  memcpy(src, "int ", 4);
  memset(src + 4, 'x', n);
  strcpy(src + 4 + n, " = 1;");
  lex(src);
  cr_expect_eq(diag_errors(&diags), 1);
  expect_error(0, 1, 5, "identifier is too long (1048576 bytes; the limit is 1024)");
  static const TokKind k[] = {TK_TYPENAME, TK_ERROR, TK_ASSIGN, TK_INT, TK_SEMI};
  expect_kinds(k, 5);
  /* The rendered message stays small: the long line is shown as a window. */
  char *text = diag_render(&diags, false);
  cr_assert(text);
  cr_expect_lt(strlen(text), 2000);
  cr_expect(strstr(text, "t.kern:1:5: error: identifier is too long"));
  free(text);
  free(src);
}

Test(lexer, lexing_continues_after_errors) {
  lex("@ int x = 1.2.3 + \"\\q\";\n$ y");
  static const TokKind k[] = {TK_ERROR, TK_TYPENAME, TK_IDENT, TK_ASSIGN, TK_ERROR,
                              TK_PLUS,  TK_ERROR,    TK_SEMI,  TK_ERROR,  TK_IDENT};
  expect_kinds(k, 10);
  cr_expect_eq(tl.toks[9].loc.line, 2);
  cr_expect_eq(tl.toks[9].loc.col, 3);
  cr_expect_eq(diag_errors(&diags), 4);
}

Test(lexer, truncated_mid_token) {
  static const char *cases[] = {"x = 0x",   "x = 1e",    "x = \"ab",
                                "x = /* a", "x = 1.5e+", "x = \"a\\"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    teardown();
    setup();
    lex(cases[i]);
    cr_expect_geq(diag_errors(&diags), 1, "%s", cases[i]);
    cr_expect_eq(tl.toks[tl.n - 1].kind, TK_EOF);
  }
}

Test(lexer, tok_kind_names) {
  cr_expect_str_eq(tok_kind_name(TK_IDENT), "identifier");
  cr_expect_str_eq(tok_kind_name(TK_PLUSEQ), "'+='");
  cr_expect_str_eq(tok_kind_name(TK_WHILE), "keyword 'while'");
  cr_expect_str_eq(tok_kind_name(TK_EOF), "end of file");
  cr_expect_str_eq(tok_kind_name(TK_SEMI), "';'");
  cr_expect_str_eq(tok_kind_name(TK_SHREQ), "'>>='");
  for (int k = 0; k < TK__COUNT; k++)
    cr_expect_neq(strcmp(tok_kind_name((TokKind)k), "token"), 0, "kind %d has no name", k);
}

Test(lexer, ten_megabytes_linear, .timeout = 60) {
  static const char line[] =
      "kernel void k(float[] x) { int i = tid(); x[i] = x[i] * 2.5f + 0x1F; }"
      " // note\n";
  size_t reps = (10u << 20) / (sizeof line - 1);
  char *src = malloc(reps * (sizeof line - 1) + 1);
  for (size_t i = 0; i < reps; i++) memcpy(src + i * (sizeof line - 1), line, sizeof line - 1);
  src[reps * (sizeof line - 1)] = 0;
  clock_t t0 = clock();
  lexn(src, reps * (sizeof line - 1));
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  cr_expect_eq(tl.n, (int)(reps * 32 + 1));
  cr_expect_eq(diag_errors(&diags), 0);
  cr_expect_eq(tl.toks[tl.n - 2].loc.line, (int)reps);
  cr_expect_lt(secs, 20.0, "lexing 10 MB took %.2f s", secs);
  free(src);
}

/* ---- diagnostics -------------------------------------------------------------- */

TestSuite(diag, .init = setup, .fini = teardown);

static SrcLoc mkloc(const char *src, unsigned offset, unsigned len, int line, int col) {
  SrcLoc l = {"f.kern", src, line, col, offset, len};
  return l;
}

Test(diag, render_error_with_caret_and_range) {
  const char *src = "int x = 1;\n\tfoo bar;\n";
  diag_error(&diags, mkloc(src, 16, 3, 2, 6), "unknown name '%s'", "bar");
  char *text = diag_render(&diags, false);
  cr_expect_str_eq(text, "f.kern:2:6: error: unknown name 'bar'\n"
                         "\tfoo bar;\n"
                         "\t    ^~~\n");
  free(text);
  cr_expect_eq(diag_errors(&diags), 1);
}

Test(diag, warnings_and_notes) {
  const char *src = "a b\n";
  diag_warning(&diags, mkloc(src, 2, 1, 1, 3), "w %d", 1);
  diag_note(&diags, mkloc(src, 0, 1, 1, 1), "n");
  char *text = diag_render(&diags, false);
  cr_expect_str_eq(text, "f.kern:1:3: warning: w 1\na b\n  ^\nf.kern:1:1: note: n\na b\n^\n");
  free(text);
  cr_expect_eq(diag_errors(&diags), 0);
  cr_expect_eq(diags.nwarnings, 1);
}

Test(diag, range_clipped_at_line_end_and_no_location) {
  const char *src = "abc\ndef";
  diag_error(&diags, mkloc(src, 1, 10, 1, 2), "long");
  diag_error(&diags, (SrcLoc){0}, "no place");
  char *text = diag_render(&diags, false);
  cr_expect_str_eq(text, "f.kern:1:2: error: long\nabc\n ^~\nkern: error: no place\n");
  free(text);
}

Test(diag, caret_at_end_of_file) {
  const char *src = "x = ";
  diag_error(&diags, mkloc(src, 4, 1, 1, 5), "expected an expression");
  char *text = diag_render(&diags, false);
  cr_expect_str_eq(text, "f.kern:1:5: error: expected an expression\nx = \n    ^\n");
  free(text);
}

Test(diag, max_errors_bounds_the_cascade) {
  diags.max_errors = 3;
  const char *src = "x";
  for (int i = 0; i < 10; i++) diag_error(&diags, mkloc(src, 0, 1, 1, 1), "e%d", i);
  cr_expect_eq(ndiags(), 3);
  cr_expect(diags.truncated);
  cr_expect_eq(diag_errors(&diags), 10);
  char *text = diag_render(&diags, false);
  const char *last = strstr(text, "error: too many errors; stopping after 3\n");
  cr_assert(last);
  cr_expect_eq(last[strlen("error: too many errors; stopping after 3\n")], 0);
  free(text);
}

Test(diag, default_limit_is_100) {
  for (int i = 0; i < 150; i++) diag_error(&diags, (SrcLoc){0}, "e");
  cr_expect_eq(ndiags(), 100);
  cr_expect(diags.truncated);
}

Test(diag, color_uses_ansi) {
  const char *src = "x";
  diag_error(&diags, mkloc(src, 0, 1, 1, 1), "bad");
  char *text = diag_render(&diags, true);
  cr_expect(strstr(text, "\033[1;31merror: "));
  cr_expect(strstr(text, "bad"));
  free(text);
}

Test(diag, loc_span_covers_both) {
  const char *src = "abc + defg";
  SrcLoc a = mkloc(src, 0, 3, 1, 1), b = mkloc(src, 6, 4, 1, 7);
  SrcLoc s = loc_span(a, b);
  cr_expect_eq(s.offset, 0);
  cr_expect_eq(s.len, 10);
  cr_expect_eq(s.col, 1);
  SrcLoc none = {0};
  cr_expect_eq(loc_span(none, b).offset, 6);
  cr_expect_eq(loc_span(a, none).len, 3);
}

/* ---- types and arena ------------------------------------------------------------ */

Test(types, sizes_and_alignments) {
  static const struct {
    Type *t;
    int size, align;
    const char *name;
  } want[] = {
      {&ty_bool, 1, 1, "bool"},    {&ty_i8, 1, 1, "int8"},       {&ty_i16, 2, 2, "int16"},
      {&ty_i32, 4, 4, "int32"},    {&ty_i64, 8, 8, "int64"},     {&ty_u8, 1, 1, "uint8"},
      {&ty_u16, 2, 2, "uint16"},   {&ty_u32, 4, 4, "uint32"},    {&ty_u64, 8, 8, "uint64"},
      {&ty_f16, 2, 2, "float16"},  {&ty_f32, 4, 4, "float32"},   {&ty_f64, 8, 8, "float64"},
      {&ty_vec2, 8, 4, "vec2"},    {&ty_vec3, 12, 4, "vec3"},    {&ty_vec4, 16, 4, "vec4"},
      {&ty_dvec2, 16, 8, "dvec2"}, {&ty_dvec3, 24, 8, "dvec3"},  {&ty_dvec4, 32, 8, "dvec4"},
      {&ty_ivec2, 8, 4, "ivec2"},  {&ty_ivec3, 12, 4, "ivec3"},  {&ty_ivec4, 16, 4, "ivec4"},
      {&ty_mat22, 16, 4, "mat22"}, {&ty_mat33, 36, 4, "mat33"},  {&ty_mat44, 64, 4, "mat44"},
      {&ty_quat, 16, 4, "quat"},   {&ty_bf16, 2, 2, "bfloat16"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cr_expect_eq(want[i].t->size, want[i].size, "%s size", want[i].name);
    cr_expect_eq(want[i].t->align, want[i].align, "%s align", want[i].name);
    cr_expect_str_eq(type_name(want[i].t), want[i].name);
  }
  cr_expect_str_eq(type_name(&ty_untyped_int), "untyped int");
  cr_expect_str_eq(type_name(&ty_untyped_float), "untyped float");
  cr_expect_str_eq(type_name(&ty_string), "string");
  cr_expect_str_eq(type_name(&ty_error), "<error>");
  cr_expect_str_eq(type_name(&ty_void), "void");
  cr_expect_eq(ty_vec3.elem, &ty_f32);
  cr_expect_eq(ty_dvec2.elem, &ty_f64);
  cr_expect_eq(ty_ivec4.elem, &ty_i32);
  cr_expect_eq(ty_mat33.n, 3);
}

Test(types, builtin_by_name) {
  cr_expect_eq(type_builtin_by_name("int", 3), &ty_i32);
  cr_expect_eq(type_builtin_by_name("uint", 4), &ty_u32);
  cr_expect_eq(type_builtin_by_name("float", 5), &ty_f32);
  cr_expect_eq(type_builtin_by_name("double", 6), &ty_f64);
  cr_expect_eq(type_builtin_by_name("float16", 7), &ty_f16);
  cr_expect_eq(type_builtin_by_name("bfloat16", 8), &ty_bf16);
  cr_expect_eq(type_builtin_by_name("mat44", 5), &ty_mat44);
  cr_expect_eq(type_builtin_by_name("int32xyz", 5), &ty_i32); /* length decides */
  cr_expect_null(type_builtin_by_name("void", 4));
  cr_expect_null(type_builtin_by_name("vec5", 4));
  cr_expect_null(type_builtin_by_name("in", 2));
}

Test(types, predicates_and_vec) {
  cr_expect(type_is_int(&ty_u8));
  cr_expect_not(type_is_int(&ty_bool));
  cr_expect_not(type_is_int(&ty_f32));
  cr_expect(type_is_signed(&ty_i64));
  cr_expect_not(type_is_signed(&ty_u64));
  cr_expect(type_is_float(&ty_f16));
  cr_expect(type_is_float(&ty_bf16));
  cr_expect(type_is_half(&ty_bf16) && type_is_half(&ty_f16) && !type_is_half(&ty_f32));
  cr_expect_not(type_is_float(&ty_vec3));
  cr_expect(type_is_scalar(&ty_bool));
  cr_expect_not(type_is_scalar(&ty_vec2));
  cr_expect(type_is_numeric(&ty_f64));
  cr_expect_not(type_is_numeric(&ty_bool));
  cr_expect_eq(type_vec(&ty_f32, 3), &ty_vec3);
  cr_expect_eq(type_vec(&ty_f64, 2), &ty_dvec2);
  cr_expect_eq(type_vec(&ty_i32, 4), &ty_ivec4);
  cr_expect_null(type_vec(&ty_u32, 3));
  cr_expect_null(type_vec(&ty_f32, 5));
}

Test(types, arrays_and_pointers) {
  Arena *a = arena_new();
  Type *t1 = type_array(a, &ty_f32, 2), *t2 = type_array(a, &ty_f32, 2);
  Type *t3 = type_array(a, &ty_f32, 1), *t4 = type_array(a, &ty_i32, 2);
  cr_expect_str_eq(t1->name, "float32[,]");
  cr_expect_str_eq(t3->name, "float32[]");
  cr_expect_str_eq(type_array(a, &ty_vec3, 4)->name, "vec3[,,,]");
  cr_expect(type_equal(t1, t2));
  cr_expect_not(type_equal(t1, t3));
  cr_expect_not(type_equal(t1, t4));
  Type *p1 = type_ptr(a, &ty_u32), *p2 = type_ptr(a, &ty_u32);
  cr_expect_str_eq(p1->name, "&uint32");
  cr_expect(type_equal(p1, p2));
  cr_expect_not(type_equal(p1, type_ptr(a, &ty_i32)));
  cr_expect(type_equal(&ty_vec3, &ty_vec3));
  cr_expect_not(type_equal(&ty_vec3, &ty_ivec3));
  cr_expect_not(type_equal(&ty_i32, &ty_u32));
  arena_free(a);
}

Test(arena, alignment_zeroing_and_big_blocks) {
  Arena *a = arena_new();
  cr_assert(a);
  for (int i = 1; i < 5000; i++) {
    unsigned char *p = arena_alloc(a, (size_t)i % 300 + 1);
    cr_assert(p);
    cr_expect_eq((uintptr_t)p % 16, 0);
    for (int j = 0; j < i % 300 + 1; j++) cr_assert_eq(p[j], 0);
    memset(p, 0xAB, (size_t)i % 300 + 1);
  }
  unsigned char *big = arena_alloc(a, 1 << 20);
  cr_assert(big);
  cr_expect_eq(big[0], 0);
  cr_expect_eq(big[(1 << 20) - 1], 0);
  cr_expect_str_eq(arena_strndup(a, "hello world", 5), "hello");
  cr_expect_str_eq(arena_printf(a, "%d-%s", 42, "x"), "42-x");
  cr_expect_null(arena_alloc(a, SIZE_MAX - 4));
  void *owned = malloc(100);
  cr_expect_eq(arena_adopt(a, owned), owned);
  arena_free(a); /* LeakSanitizer checks that `owned` went too */
}
