/* test_parser.c: parser.c and ast_dump.c.
 *
 * Trees are checked through ast_dump_module's S-expressions, written out by
 * hand below; errors by their message, line and column.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

static Arena *arena;
static Diags diags;
static Module *mod;
static char *dump;

static void setup(void) {
  arena = arena_new();
  diags_init(&diags);
  mod = NULL;
  dump = NULL;
}

static void teardown(void) {
  free(dump);
  diags_free(&diags);
  arena_free(arena);
}

TestSuite(parser, .init = setup, .fini = teardown);

static const char *parse(const char *src) {
  mod = parse_module(arena, &diags, "t.kern", src, strlen(src));
  cr_assert(mod);
  free(dump);
  dump = ast_dump_module(mod, false);
  cr_assert(dump);
  return dump;
}

/* Parses src, which must be error-free, and compares the whole dump. */
static void expect_dump(const char *src, const char *want) {
  parse(src);
  if (diag_errors(&diags)) {
    char *text = diag_render(&diags, false);
    cr_expect_fail("unexpected errors for %s:\n%s", src, text);
    free(text);
  }
  cr_expect_str_eq(dump, want);
}

/* The body of `kernel void k() { <stmts> }` as a dump. */
static void expect_body(const char *stmts, const char *want_block) {
  char src[4096], want[4096];
  snprintf(src, sizeof src, "kernel void k() { %s }", stmts);
  snprintf(want, sizeof want, "(kernel k (params) %s)\n", want_block);
  expect_dump(src, want);
}

/* `kernel void k() { auto x = <expr>; }` and the dump of the expression. */
static void expect_expr(const char *expr, const char *want_expr) {
  char src[4096], want[4096];
  snprintf(src, sizeof src, "kernel void k() { auto x = %s; }", expr);
  snprintf(want, sizeof want, "(kernel k (params) (block (var x auto %s)))\n", want_expr);
  expect_dump(src, want);
}

static Diag *diag_n(int n) {
  Diag *d = diags.head;
  while (d && n-- > 0) d = d->next;
  return d;
}

static void expect_error(int n, int line, int col, const char *msg) {
  Diag *d = diag_n(n);
  if (!d) {
    char *text = diag_render(&diags, false);
    cr_expect_fail("no diagnostic #%d (%s); got:\n%s", n, msg, text);
    free(text);
    return;
  }
  cr_expect_eq(d->level, DIAG_ERROR);
  cr_expect_str_eq(d->msg, msg);
  cr_expect_eq(d->loc.line, line, "line %d, expected %d (%s)", d->loc.line, line, msg);
  cr_expect_eq(d->loc.col, col, "col %d, expected %d (%s)", d->loc.col, col, msg);
}

static void expect_nerrors(int n) {
  if (diag_errors(&diags) != n) {
    char *text = diag_render(&diags, false);
    cr_expect_fail("%d errors, expected %d:\n%s", diag_errors(&diags), n, text);
    free(text);
  }
}

/* ---- module items --------------------------------------------------------------- */

Test(parser, empty_module) {
  expect_dump("", "");
  cr_expect_null(mod->decls);
  expect_dump("  // nothing\n", "");
}

Test(parser, import_and_const) {
  expect_dump("import \"common.kern\";\nconst float SCALE = 2.0;\nconst int N = 1 << 4;",
              "(import \"common.kern\")\n"
              "(const SCALE float32 (float 2))\n"
              "(const N int32 (binary << (int 1) (int 4)))\n");
  cr_expect_str_eq(mod->decls->path, "common.kern");
  cr_expect_eq(mod->decls->path_len, 11);
  cr_expect_eq(mod->decls->kind, DECL_IMPORT);
  cr_expect_eq(mod->decls->next->kind, DECL_CONST);
  cr_expect_str_eq(mod->decls->next->name, "SCALE");
}

Test(parser, import_path_keeps_its_length) {
  parse("import \"a\\0b.kern\";\nimport 42;\n");
  expect_error(0, 2, 8, "expected a file name string after 'import', found integer literal '42'");
  expect_nerrors(1);
  cr_assert(mod->decls);
  cr_expect_eq(mod->decls->path_len, 8);
  cr_expect_eq(memcmp(mod->decls->path, "a\0b.kern", 8), 0);
  cr_expect_null(mod->decls->next);
}

Test(parser, struct_fields_sharing_a_type) {
  expect_dump("struct P { vec3 pos, vel; float mass; };\nstruct Q { P p; int[] bad; }",
              "(struct P (pos vec3) (vel vec3) (mass float32))\n"
              "(struct Q (p P) (bad int32[]))\n");
  Decl *p = mod->decls;
  cr_assert_eq(p->nfields, 3);
  cr_expect_str_eq(p->fields[1].name, "vel");
  cr_expect_eq(p->fields[1].texpr->builtin, &ty_vec3);
  cr_expect_eq(p->fields[1].loc.col, 22);
}

Test(parser, functions_and_kernels) {
  expect_dump(
      "float sq(float x) { return x * x; }\n"
      "void nothing() { return; }\n"
      "P make(const int k, P[,] ps) { return ps[k, 0]; }\n"
      "kernel void saxpy(float[] x, float[] y, float a) { y[tid()] += a * x[tid()]; }\n"
      "kernel int bad() { return 1; }\n",
      "(func sq float32 (params (x float32)) (block (return (binary * (ident x) (ident x)))))\n"
      "(func nothing void (params) (block (return)))\n"
      "(func make P (params (k const int32) (ps P[,])) (block (return (index (ident ps) "
      "(ident k) (int 0)))))\n"
      "(kernel saxpy (params (x float32[]) (y float32[]) (a float32)) (block (assign += "
      "(index (ident y) (call tid)) (binary * (ident a) (index (ident x) (call tid))))))\n"
      "(kernel bad int32 (params) (block (return (int 1))))\n");
  Decl *k = mod->decls->next->next->next;
  cr_expect_eq(k->kind, DECL_KERNEL);
  cr_expect_eq(k->texpr->builtin, &ty_void);
  cr_assert_eq(k->nparams, 3);
  cr_expect(k->params[0]->is_param);
  cr_expect_eq(k->params[0]->texpr->ndim, 1);
  cr_expect_eq(k->params[0]->texpr->builtin, &ty_f32);
  Decl *make = mod->decls->next->next;
  cr_expect(make->params[0]->is_const);
  cr_expect_str_eq(make->params[1]->texpr->name, "P");
  cr_expect_eq(make->params[1]->texpr->ndim, 2);
  cr_expect_eq(mod->decls->next->next->next->next->texpr->builtin, &ty_i32);
}

Test(parser, array_dimensions_up_to_four) {
  expect_dump("kernel void k(float[,,,] a) { }", "(kernel k (params (a float32[,,,])) (block))\n");
}

Test(parser, reference_parameters) {
  expect_dump("void f(float &x, const int y, P &p, vec3 v) { }",
              "(func f void (params (x float32&) (y const int32) (p P&) (v vec3)) (block))\n");
}

Test(parser, references_only_as_parameters) {
  parse("float &f() { return 1.0; }\nkernel void k() {\n  int &r = x;\n  P &q = p;\n}");
  expect_nerrors(3);
  expect_error(0, 1, 7, "a function cannot return a reference");
  expect_error(1, 3, 7,
               "a local variable cannot be a reference; only function parameters can ('T &name')");
  expect_error(2, 4, 5,
               "a local variable cannot be a reference; only function parameters can ('T &name')");
}

Test(parser, local_arrays) {
  expect_body("float buf[16]; const int g[2, N] = {1, x, 3,}; P ps[4] = {};",
              "(block (var buf float32[(int 16)] (list)) "
              "(var g const int32[(int 2) (ident N)] (list (int 1) (ident x) (int 3))) "
              "(var ps P[(int 4)] (list)))");
  expect_dump("void f(const float b[4], int m[2, 3]) { }",
              "(func f void (params (b const float32[(int 4)]) (m int32[(int 2) (int 3)])) "
              "(block))\n");
}

Test(parser, local_array_mistakes) {
  parse("struct S { float w[4]; };\nconst int T[2] = {1, 2};\nkernel void k() {\n"
        "  float b[];\n  float m[2, 2] = {{1, 2}, {3, 4}};\n  float f[1, 1, 1, 1, 1];\n}");
  expect_nerrors(5);
  expect_error(0, 1, 19,
               "a struct field cannot be an array; local arrays are variables of functions and "
               "kernels");
  expect_error(
      1, 2, 12,
      "a module constant cannot be an array; declare a const local array where it is used");
  expect_error(2, 4, 11, "a local array needs its size, like 'float buf[16]'");
  expect_error(3, 5, 20,
               "a local array's initializer is one flat list of its elements, in row-major "
               "order; it has no nested '{...}'");
  expect_error(4, 6, 23, "a local array has at most 4 dimensions");
}

Test(parser, enums) {
  expect_dump("enum Color { RED, GREEN = 5, BLUE, };\nenum { A };",
              "(enum Color 3)\n(const RED int32 (int 0))\n(const GREEN int32 (int 5))\n"
              "(const BLUE int32 (binary + (ident GREEN) (int 1)))\n(enum _ 1)\n"
              "(const A int32 (int 0))\n");
}

Test(parser, enum_mistakes) {
  parse("enum E { A B };\nkernel void k() {\n  enum L { X };\n}\nenum F { 1 };\nenum G { C };");
  expect_nerrors(3);
  expect_error(0, 1, 12, "expected ',' or '}' in enum 'E', found identifier 'B'");
  cr_expect_eq(diag_n(1)->level, DIAG_NOTE); /* the enum opened here */
  expect_error(2, 3, 3, "an enum is declared at module level, not inside a function");
  expect_error(3, 5, 10, "expected an enumerator name, found integer literal '1'");
  cr_expect(strstr(dump, "(enum G 1)\n(const C int32 (int 0))\n"), "%s", dump);
}

/* ---- statements ---------------------------------------------------------------- */

Test(parser, declarations) {
  expect_body("int i = 0; const float f = 1.5f; auto a = i; const auto b = 2u; P p = make(); "
              "P[] q = r; uint64 big = 1ul;",
              "(block (var i int32 (int 0)) (var f const float32 (float 1.5 f)) "
              "(var a auto (ident i)) (var b const auto (int 2 u)) (var p P (call make)) "
              "(var q P[] (ident r)) (var big uint64 (int 1 ul)))");
}

Test(parser, assignments_and_incdec) {
  expect_body("a = 1; a += 1; a -= 1; a *= 1; a /= 1; a %= 1; a &= 1; a |= 1; a ^= 1; "
              "a <<= 1; a >>= 1; x++; ++x; x--; --x; v.x = 2; m[1, 2] = 3;",
              "(block (assign = (ident a) (int 1)) (assign += (ident a) (int 1)) "
              "(assign -= (ident a) (int 1)) (assign *= (ident a) (int 1)) "
              "(assign /= (ident a) (int 1)) (assign %= (ident a) (int 1)) "
              "(assign &= (ident a) (int 1)) (assign |= (ident a) (int 1)) "
              "(assign ^= (ident a) (int 1)) (assign <<= (ident a) (int 1)) "
              "(assign >>= (ident a) (int 1)) (incdec ++ (ident x)) (incdec ++ (ident x)) "
              "(incdec -- (ident x)) (incdec -- (ident x)) (assign = (member (ident v) x) (int 2)) "
              "(assign = (index (ident m) (int 1) (int 2)) (int 3)))");
  Node *s = mod->decls->body->body;
  cr_expect_eq(s->kind, ND_ASSIGN);
  cr_expect_eq(s->op, TK_ASSIGN);
  cr_expect_eq(s->next->op, TK_PLUSEQ);
}

Test(parser, control_flow) {
  expect_body("if (a) b(); if (a) { } else if (c) ; else { d(); } "
              "while (i < n) i++; do { i--; } while (i > 0); "
              "for (int i = 0; i < 10; i++) { continue; } for (;;) break; "
              "for (i = 0; ; i += 2) ; return;",
              "(block (if (ident a) (expr (call b))) "
              "(if (ident a) (block) (if (ident c) (empty) (block (expr (call d))))) "
              "(while (binary < (ident i) (ident n)) (incdec ++ (ident i))) "
              "(do (block (incdec -- (ident i))) (binary > (ident i) (int 0))) "
              "(for (var i int32 (int 0)) (binary < (ident i) (int 10)) (incdec ++ (ident i)) "
              "(block (continue))) "
              "(for _ _ _ (break)) "
              "(for (assign = (ident i) (int 0)) _ (assign += (ident i) (int 2)) (empty)) "
              "(return))");
}

Test(parser, generic_functions) {
  expect_dump("T lerp<T>(T a, T[] b, const U c) { }",
              "(func lerp<T> T (params (a T) (b T[]) (c const U)) (block))\n");
  expect_dump("Pair mk<A, B>(A &a, B b) { }",
              "(func mk<A, B> Pair (params (a A&) (b B)) (block))\n");
}

/* A type variable as the element of vec<T, N>, mat<T, M, N> and quat<T>: kept
 * by name (the return type is read before the type variables), and in the
 * body too; `vec < x` of a name that is not a type variable is a comparison. */
Test(parser, generic_vectors_of_a_type_variable) {
  expect_dump("mat<T, 2, 3> f<T>(vec<T, 3> v, quat<T> q) { vec<T, 2> w = vec<T, 2>(v[0], T(q.w)); "
              "x = (vec<T, 3>)v; b = vec < y; }",
              "(func f<T> mat<T, 2, 3> (params (v vec<T, 3>) (q quat<T>)) (block (var w vec<T, 2> "
              "(call vec (index (ident v) (int 0)) (call T (member (ident q) w)))) "
              "(assign = (ident x) (cast vec<T, 3> (ident v))) "
              "(assign = (ident b) (binary < (ident vec) (ident y)))))\n");
}

Test(parser, explicit_instantiation_and_type_queries) {
  expect_expr("f<float, P[,]>(1) + g<T>()",
              "(binary + (call f<float32, P[,]> (int 1)) (call g<T>))");
  expect_expr("sizeof(float) + sizeof(T) + sizeof(x + 1)",
              "(binary + (binary + (call sizeof (type float32)) (call sizeof (ident T))) "
              "(call sizeof (binary + (ident x) (int 1))))");
  expect_expr("is_same(T, vec3) && is_float(double(x))",
              "(binary && (call is_same (ident T) (type vec3)) "
              "(call is_float (call double (ident x))))");
  /* a comparison chain is not an instantiation: no '(' after the '>' */
  expect_expr("a < b > c", "(binary > (binary < (ident a) (ident b)) (ident c))");
}

Test(parser, static_if_and_for) {
  expect_body("static if (A) x(); else if (B) ; else static if (C) { } else y(); "
              "static for (int k = 0; k < 4; k++) { }",
              "(block (static-if (ident A) (expr (call x)) (static-if (ident B) (empty) "
              "(static-if (ident C) (block) (expr (call y))))) "
              "(static-for (var k int32 (int 0)) (binary < (ident k) (int 4)) "
              "(incdec ++ (ident k)) (block)))");
}

Test(parser, generic_mistakes) {
  parse("T f<float>(T x) { }\nkernel void k() {\n  static while (1) { }\n}");
  expect_nerrors(2);
  expect_error(0, 1, 5, "expected a type variable name, found type name 'float'");
  expect_error(1, 3, 10, "expected 'if' or 'for' after 'static', found keyword 'while'");
}

Test(parser, dangling_else_binds_to_nearest_if) {
  expect_body("if (a) if (b) x(); else y();",
              "(block (if (ident a) (if (ident b) (expr (call x)) (expr (call y)))))");
}

Test(parser, expression_statements_and_constructor_calls) {
  expect_body("printf(\"%d\\n\", i); atomic_add(&a[i], 1); vec3(1, 2, 3); float(x);",
              "(block (expr (call printf (string \"%d\\n\") (ident i))) "
              "(expr (call atomic_add (addr (index (ident a) (ident i))) (int 1))) "
              "(expr (call vec3 (int 1) (int 2) (int 3))) (expr (call float (ident x))))");
}

Test(parser, nested_blocks) {
  expect_body("{ { int x = 1; } { } }", "(block (block (block (var x int32 (int 1))) (block)))");
}

/* ---- expressions -------------------------------------------------------------- */

Test(parser, precedence_table) {
  expect_expr("a + b * c << d < e == f & g ^ h | i && j || k ? l : m",
              "(cond (binary || (binary && (binary | (binary ^ (binary & (binary == (binary < "
              "(binary << (binary + (ident a) (binary * (ident b) (ident c))) (ident d)) "
              "(ident e)) (ident f)) (ident g)) (ident h)) (ident i)) (ident j)) (ident k)) "
              "(ident l) (ident m))");
  expect_expr("a || b && c | d ^ e & f != g >= h >> i - j % k",
              "(binary || (ident a) (binary && (ident b) (binary | (ident c) (binary ^ (ident d) "
              "(binary & (ident e) (binary != (ident f) (binary >= (ident g) (binary >> (ident h) "
              "(binary - (ident i) (binary % (ident j) (ident k)))))))))))");
}

Test(parser, left_associativity) {
  expect_expr("a - b - c", "(binary - (binary - (ident a) (ident b)) (ident c))");
  expect_expr("a / b * c % d",
              "(binary % (binary * (binary / (ident a) (ident b)) (ident c)) (ident d))");
  expect_expr("a << b >> c", "(binary >> (binary << (ident a) (ident b)) (ident c))");
  expect_expr("a < b > c", "(binary > (binary < (ident a) (ident b)) (ident c))");
}

Test(parser, conditional_is_right_associative) {
  expect_expr("a ? b : c ? d : e",
              "(cond (ident a) (ident b) (cond (ident c) (ident d) (ident e)))");
  expect_expr("a ? b ? c : d : e",
              "(cond (ident a) (cond (ident b) (ident c) (ident d)) (ident e))");
}

Test(parser, unary_and_casts) {
  expect_expr("-a * !b + ~c - +d",
              "(binary - (binary + (binary * (unary - (ident a)) (unary ! (ident b))) "
              "(unary ~ (ident c))) (unary + (ident d)))");
  expect_expr("(float)i / 2", "(binary / (cast float32 (ident i)) (int 2))");
  expect_expr("(double)-x", "(cast float64 (unary - (ident x)))");
  expect_expr("(a) + (b * c)", "(binary + (ident a) (binary * (ident b) (ident c)))");
  expect_expr("- - x", "(unary - (unary - (ident x)))");
  expect_expr("&a[i]", "(addr (index (ident a) (ident i)))");
}

Test(parser, postfix_chains) {
  expect_expr("p.vel.x", "(member (member (ident p) vel) x)");
  expect_expr("a[i][j].y", "(member (index (index (ident a) (ident i)) (ident j)) y)");
  expect_expr("vec3(1, 2, 3).z", "(member (call vec3 (int 1) (int 2) (int 3)) z)");
  expect_expr("f()[0]", "(index (call f) (int 0))");
  expect_expr("src[i, max(j - 1, 0)]",
              "(index (ident src) (ident i) (call max (binary - (ident j) (int 1)) (int 0)))");
}

Test(parser, literals) {
  expect_expr("1", "(int 1)");
  expect_expr("0xFFu", "(int 255 u)");
  expect_expr("5L", "(int 5 l)");
  expect_expr("0.25", "(float 0.25)");
  expect_expr("1e3d", "(float 1000 d)");
  expect_expr("true", "(bool true)");
  expect_expr("false", "(bool false)");
  expect_expr("\"tab\\there\"", "(string \"tab\\there\")");
}

Test(parser, call_node_fields) {
  parse("kernel void k() { auto v = vec3(1, 2, 3); auto f = foo(a, b); }");
  expect_nerrors(0);
  Node *ctor = mod->decls->body->body->var->init;
  cr_assert_eq(ctor->kind, ND_CALL);
  cr_expect_str_eq(ctor->name, "vec3");
  cr_expect_eq(ctor->nargs, 3);
  cr_assert(ctor->texpr);
  cr_expect_eq(ctor->texpr->builtin, &ty_vec3);
  Node *call = mod->decls->body->body->next->var->init;
  cr_expect_null(call->texpr);
  cr_expect_eq(call->nargs, 2);
  cr_expect_eq(call->name_loc.col, 52);
}

/* ---- source ranges ------------------------------------------------------------- */

Test(parser, node_ranges) {
  const char *src = "kernel void k(float[] y) {\n  y[i] = a + b * (c - d);\n}\n";
  parse(src);
  expect_nerrors(0);
  Decl *k = mod->decls;
  cr_expect_eq(k->loc.offset, 0);
  cr_expect_eq(k->loc.len, strlen(src) - 1);
  cr_expect_eq(k->name_loc.col, 13);
  cr_expect_eq(k->params[0]->loc.col, 23);
  cr_expect_eq(k->params[0]->texpr->loc.col, 15);
  cr_expect_eq(k->params[0]->texpr->loc.len, 7);
  Node *as = k->body->body;
  cr_expect_eq(as->loc.line, 2);
  cr_expect_eq(as->loc.col, 3);
  cr_expect_eq(as->loc.len, 23); /* with its `;` */
  Node *lhs = as->lhs, *rhs = as->rhs;
  cr_expect_eq(lhs->loc.col, 3);
  cr_expect_eq(lhs->loc.len, 4);
  cr_expect_eq(rhs->loc.col, 10);
  cr_expect_eq(rhs->loc.len, 15);
  cr_expect_eq(rhs->rhs->loc.col, 14); /* b * (c - d) */
  cr_expect_eq(rhs->rhs->loc.len, 11);
  cr_expect_eq(rhs->rhs->rhs->loc.col, 18); /* (c - d), parentheses included */
  cr_expect_eq(rhs->rhs->rhs->loc.len, 7);
}

/* ---- errors ------------------------------------------------------------------ */

Test(parser, three_independent_errors_all_reported) {
  parse("kernel void k() {\n"
        "  int a = ;\n"
        "  int b = 2;\n"
        "  b = (b + 1;\n"
        "  b += 1;\n"
        "  foo(1 2);\n"
        "  b = 3;\n"
        "}\n");
  expect_error(0, 2, 11, "expected an expression, found ';'");
  expect_error(1, 4, 13, "expected ')' to close the parenthesis, found ';'");
  expect_error(2, 6, 9, "expected ')' after the call's arguments, found integer literal '2'");
  expect_nerrors(3);
  /* the statements between the errors are still there */
  cr_expect(strstr(dump, "(var b int32 (int 2))"));
  cr_expect(strstr(dump, "(assign += (ident b) (int 1))"));
  cr_expect(strstr(dump, "(assign = (ident b) (int 3))"));
}

Test(parser, errors_in_several_declarations) {
  parse("struct S { int a }\n"
        "float f(float x) { return x + ; }\n"
        "kernel void k() { int 3 = 1; }\n"
        "kernel void ok() { }\n");
  expect_error(0, 1, 17, "expected ';' after the field, found '}'");
  expect_error(1, 2, 31, "expected an expression, found ';'");
  expect_error(2, 3, 23, "expected a variable name, found integer literal '3'");
  expect_nerrors(3);
  cr_expect(strstr(dump, "(kernel ok (params) (block))\n"));
}

Test(parser, missing_semicolon_reported_after_previous_token) {
  parse("kernel void k() {\n  int x = 1\n  int y = 2;\n  x = y\n}\n");
  expect_error(0, 2, 12, "expected ';' after the declaration, found type name 'int'");
  expect_error(1, 4, 8, "expected ';' after the statement, found '}'");
  expect_nerrors(2);
  cr_expect(strstr(dump, "(var y int32 (int 2))"));
}

Test(parser, assignment_is_not_an_expression) {
  parse("kernel void k() {\n"
        "  a = b = c;\n"
        "  f(x = 1);\n"
        "  y[i++] = 2;\n"
        "  if (x = 1) { }\n"
        "  z = ++w;\n"
        "  q = r += 1;\n"
        "}\n");
  expect_error(0, 2, 9, "assignment is a statement in kern, not an expression");
  expect_error(1, 3, 7, "assignment is a statement in kern, not an expression");
  expect_error(2, 4, 6, "'++' is a statement in kern, not an expression");
  expect_error(3, 5, 9, "assignment is a statement in kern, not an expression");
  expect_error(4, 6, 7, "'++' is a statement in kern, not an expression");
  expect_error(5, 7, 9, "assignment is a statement in kern, not an expression");
  expect_nerrors(6);
}

Test(parser, keyword_as_identifier) {
  parse("kernel void k() { int while = 1; }\nstruct if { int a; }\nfloat return() { }\n"
        "kernel void f(int for) { }\n");
  expect_error(0, 1, 23, "expected a variable name, found keyword 'while'");
  expect_error(1, 2, 8, "expected a struct name, found keyword 'if'");
  expect_error(2, 3, 7, "expected a function name, found keyword 'return'");
  expect_error(3, 4, 19, "expected a parameter name, found keyword 'for'");
  expect_nerrors(4);
}

Test(parser, type_name_as_identifier) {
  parse("kernel void k() { int float = 1; }");
  expect_error(0, 1, 23, "expected a variable name, found type name 'float'");
  expect_nerrors(1);
}

Test(parser, initializer_required) {
  parse("kernel void k() {\n  int x;\n  auto y;\n}\n");
  expect_error(0, 2, 7, "variable 'x' needs an initializer");
  expect_error(1, 3, 8, "variable 'y' needs an initializer");
  expect_nerrors(2);
}

Test(parser, one_declarator_per_declaration) {
  parse("kernel void k() {\n  int a = 1, b = 2;\n  int c, d;\n  int e = 3;\n}\n");
  expect_error(0, 2, 12, "declare one variable per statement ('a' is followed by ',')");
  expect_error(1, 3, 8, "declare one variable per statement ('c' is followed by ',')");
  expect_nerrors(2);
  cr_expect(strstr(dump, "(var e int32 (int 3))"));
}

Test(parser, too_many_array_dimensions) {
  parse("kernel void k(float[,,,,] a) { }");
  expect_error(0, 1, 15, "arrays have at most 4 dimensions, not 5");
  expect_nerrors(1);
}

Test(parser, lexer_errors_do_not_cascade) {
  parse("kernel void k() {\n  int x = 12abc;\n  float y = 1.2.3 + 1;\n  int z = @;\n}\n");
  expect_error(0, 2, 11, "malformed number literal");
  expect_error(1, 3, 13, "malformed number literal");
  expect_error(2, 4, 11, "unexpected character '@'");
  expect_nerrors(3);
}

Test(parser, diagnostics_sorted_by_position) {
  parse("kernel void k() {\n  x = ;\n  y = $;\n}\n");
  expect_error(0, 2, 7, "expected an expression, found ';'");
  expect_error(1, 3, 7, "unexpected character '$'");
  expect_nerrors(2);
}

Test(parser, module_level_garbage) {
  parse("int global = 3;\nx y z;\n}}}\nkernel void ok() { }\n");
  expect_error(0, 1, 12, "module-level variables are not supported; use 'const global = ...;'");
  expect_error(1, 2, 5, "expected '(' after the function name, found identifier 'z'");
  expect_error(
      2, 3, 1,
      "expected a declaration (import, const, struct, enum, function or kernel), found '}'");
  expect_nerrors(3);
  cr_expect(strstr(dump, "(kernel ok (params) (block))\n"));
}

Test(parser, missing_closing_brace_before_next_kernel) {
  parse("kernel void a() {\n  if (x) {\n    y();\n}\nkernel void b() { z(); }\n");
  expect_error(0, 5, 1, "expected '}' to close the block, found keyword 'kernel'");
  cr_assert(diag_n(1));
  cr_expect_eq(diag_n(1)->level, DIAG_NOTE);
  cr_expect_eq(diag_n(1)->loc.line, 1);
  cr_expect_eq(diag_n(1)->loc.col, 17);
  expect_nerrors(1);
  cr_expect(strstr(dump, "(kernel b (params) (block (expr (call z))))\n"));
}

Test(parser, unbalanced_braces_bounded) {
  size_t n = 100000;
  char *src = malloc(2 * n + 64);
  strcpy(src, "kernel void k() ");
  size_t len = strlen(src);
  memset(src + len, '{', n);
  src[len + n] = 0;
  parse(src);
  expect_nerrors(1);
  cr_expect_str_eq(diag_n(0)->msg, "nesting is too deep (limit 256)");
  memset(src, '}', n);
  src[n] = 0;
  teardown();
  setup();
  parse(src);
  cr_expect_leq(diag_errors(&diags), 2);
  free(src);
}

Test(parser, call_on_non_name) {
  parse("kernel void k() { x = (a)(b); }");
  expect_error(0, 1, 26, "only a named function or a type can be called");
  expect_nerrors(1);
}

Test(parser, type_name_is_not_a_value) {
  parse("kernel void k() { auto x = float; }");
  expect_error(0, 1, 28, "type name 'float' is not a value; did you mean 'float(...)'?");
  expect_nerrors(1);
}

Test(parser, statement_keyword_misplaced) {
  parse("kernel void k() {\n  else x = 1;\n}\n");
  expect_error(0, 2, 3, "expected a statement, found keyword 'else'");
  expect_nerrors(1);
}

Test(parser, truncated_files) {
  static const char *cases[] = {"kernel",
                                "kernel void",
                                "kernel void k(",
                                "kernel void k(int",
                                "kernel void k() {",
                                "kernel void k() { int x =",
                                "kernel void k() { x = (1 +",
                                "struct S {",
                                "import",
                                "const int N = "};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    teardown();
    setup();
    parse(cases[i]);
    cr_expect_geq(diag_errors(&diags), 1, "%s", cases[i]);
    cr_expect_leq(diag_errors(&diags), 2, "%s", cases[i]);
  }
}

/* ---- depth limit --------------------------------------------------------------- */

static char *nested(const char *prefix, const char *open, const char *mid, const char *close,
                    const char *suffix, size_t n) {
  size_t lo = strlen(open), lc = strlen(close);
  char *s = malloc(strlen(prefix) + n * (lo + lc) + strlen(mid) + strlen(suffix) + 1);
  char *p = s;
  p += sprintf(p, "%s", prefix);
  for (size_t i = 0; i < n; i++, p += lo) memcpy(p, open, lo);
  p += sprintf(p, "%s", mid);
  for (size_t i = 0; i < n; i++, p += lc) memcpy(p, close, lc);
  sprintf(p, "%s", suffix);
  return s;
}

Test(parser, depth_limit_parentheses) {
  char *src = nested("kernel void k() { auto x = ", "(", "1", ")", "; }", 100000);
  parse(src);
  expect_nerrors(1);
  expect_error(0, 1, 283, "nesting is too deep (limit 256)");
  free(src);
}

Test(parser, depth_limit_blocks) {
  char *src = nested("kernel void k() ", "{", "", "}", "", 10000);
  parse(src);
  expect_nerrors(1);
  cr_expect_str_eq(diag_n(0)->msg, "nesting is too deep (limit 256)");
  free(src);
}

Test(parser, depth_limit_mixed_and_unary) {
  char *src = nested("kernel void k() { auto x = ", "!", "y", "", "; }", 100000);
  parse(src);
  expect_nerrors(1);
  cr_expect_str_eq(diag_n(0)->msg, "nesting is too deep (limit 256)");
  free(src);
  teardown();
  setup();
  src = nested("kernel void k() ", "{ if (a) ", "", "}", "", 5000);
  parse(src);
  expect_nerrors(1);
  free(src);
  teardown();
  setup();
  src = nested("kernel void k() { auto x = ", "a ? b : ", "c", "", "; }", 50000);
  parse(src);
  expect_nerrors(1);
  free(src);
}

Test(parser, moderate_nesting_is_fine) {
  char *src = nested("kernel void k() { auto x = ", "(", "1", ")", "; }", 200);
  parse(src);
  expect_nerrors(0);
  cr_expect_str_eq(dump, "(kernel k (params) (block (var x auto (int 1))))\n");
  free(src);
  teardown();
  setup();
  src = nested("kernel void k() ", "{", "", "}", "", 200);
  parse(src);
  expect_nerrors(0);
  free(src);
}

/* ---- typed dump ------------------------------------------------------------------ */

Test(parser, typed_dump_shows_types_that_are_set) {
  parse("kernel void k() { auto x = a + 1; }");
  Node *add = mod->decls->body->body->var->init;
  add->ty = &ty_i32;
  add->lhs->ty = &ty_i32;
  char *typed = ast_dump_module(mod, true);
  cr_expect_str_eq(typed, "(kernel k (params) (block (var x auto (binary + (ident a):int32 "
                          "(int 1)):int32)))\n");
  free(typed);
}

Test(parser, string_escapes_in_dump) {
  expect_expr("\"q\\\"b\\\\s\\x01\"", "(string \"q\\\"b\\\\s\\x01\")");
}
