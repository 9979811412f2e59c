/* test_check.c: the type checker (check.c), through the whole front end.
 *
 * Fixtures, clang -verify style: every tests/kern/ok/NAME.kern must compile with
 * no diagnostic at all, and its typed tree must keep the promises of ast.h
 * (checked by an independent walker below). Every tests/kern/bad/NAME.kern
 * carries comments naming the diagnostics it must produce:
 *     // expect-error: text           this line, the message contains text
 *     // expect-error@L: text         line L of this file
 *     // expect-error@L:C: text       ... and at column C
 *     // expect-error@+N: text        N lines below the comment (-N: above)
 *     // expect-error@lib/x.kern:L: text   in an imported file
 *     // expect-warning@... / expect-note@...
 * Every expected error and warning must be reported and every reported error
 * and warning must be expected (notes are only checked when expected), so a
 * crash, a missing diagnostic or an extra cascade fails, naming the fixture.
 * The unit tests at the end check results the fixtures cannot show (layout,
 * folded values, chosen overloads, inserted conversions) against values worked
 * out by hand, and the rules for import paths (NUL bytes, "..", absolute
 * paths, files that are not regular), also through kern_module_from_source.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "builtins.h"
#include "front.h"
#include "harness.h"
#include "kern.h"

/* ---- expectations ----------------------------------------------------------- */

typedef struct Expect {
  DiagLevel level;
  char file[256]; /* "" = the fixture itself */
  int line, col;  /* col 0 = any */
  char text[512];
  bool seen;
} Expect;

typedef struct Expects {
  Expect *v;
  int n, cap;
} Expects;

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static bool parse_int(const char **p, int *out) {
  if (**p < '0' || **p > '9') return false;
  *out = (int)strtol(*p, (char **)p, 10);
  return true;
}

/* One "expect-LEVEL[@SPEC]: text" on source line `line`; false if malformed. */
static bool parse_expect(const char *p, const char *eol, int line, Expect *e) {
  memset(e, 0, sizeof *e);
  static const struct {
    const char *word;
    DiagLevel level;
  } kinds[] = {
      {"expect-error", DIAG_ERROR}, {"expect-warning", DIAG_WARNING}, {"expect-note", DIAG_NOTE}};
  size_t k = 0;
  while (strncmp(p, kinds[k].word, strlen(kinds[k].word)) != 0)
    if (++k == 3) return false;
  e->level = kinds[k].level;
  p += strlen(kinds[k].word);
  if (*p == ':') { /* no @SPEC: this very line */
    e->line = line;
    goto text;
  }
  if (*p++ != '@') return false;
  if (*p != '+' && *p != '-' && (*p < '0' || *p > '9')) {
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (!colon || colon - p >= (long)sizeof e->file) return false;
    memcpy(e->file, p, (size_t)(colon - p));
    p = colon + 1;
  }
  int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0;
  p += sign != 0;
  if (!parse_int(&p, &e->line) || *p++ != ':') return false;
  if (sign) e->line = line + sign * e->line;
  const char *q = p;
  if (parse_int(&q, &e->col) && *q == ':')
    p = q + 1;
  else
    e->col = 0;
  p--;
text:
  if (*p++ != ':') return false;
  while (p < eol && *p == ' ') p++;
  const char *end = eol;
  while (end > p && (end[-1] == ' ' || end[-1] == '\r')) end--;
  if (end - p >= (long)sizeof e->text || end == p) return false;
  memcpy(e->text, p, (size_t)(end - p));
  return true;
}

/* Collects the expectations of a fixture's text; bad ones are test failures. */
static Expects read_expects(const char *name, const char *src) {
  Expects ex = {0};
  int line = 1;
  for (const char *p = src; *p; line++) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    for (const char *q = p; q < eol; q++) {
      if (strncmp(q, "expect-", 7) != 0) continue;
      if (ex.n == ex.cap)
        ex.v = realloc(ex.v, (size_t)(ex.cap = ex.cap ? 2 * ex.cap : 16) * sizeof *ex.v);
      if (parse_expect(q, eol, line, &ex.v[ex.n]))
        ex.n++;
      else
        cr_expect(0, "%s:%d: malformed expectation", name, line);
      break;
    }
    p = *eol ? eol + 1 : eol;
  }
  return ex;
}

static bool file_matches(const Expect *e, const char *diag_file, const char *fixture) {
  if (!diag_file) return e->line == 0;
  if (!e->file[0]) return strcmp(diag_file, fixture) == 0;
  size_t lf = strlen(diag_file), le = strlen(e->file);
  return lf >= le && strcmp(diag_file + lf - le, e->file) == 0 &&
         (lf == le || diag_file[lf - le - 1] == '/');
}

static Expect *match(Expects *ex, const Diag *d, const char *fixture) {
  for (int i = 0; i < ex->n; i++) {
    Expect *e = &ex->v[i];
    if (e->seen || e->level != d->level || !file_matches(e, d->loc.file, fixture)) continue;
    if (d->loc.file && (e->line != d->loc.line || (e->col && e->col != d->loc.col))) continue;
    if (d->msg && strstr(d->msg, e->text)) return e;
  }
  return NULL;
}

static const char *level_name(DiagLevel l) {
  return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

/* ---- the typed tree's promises (ast.h) ------------------------------------------ */

typedef struct Walk {
  const char *fixture;
  const Decl *fn;
  bool *ids; /* Var ids seen in fn */
  int problems;
} Walk;

static void problem(Walk *w, const Node *n, const char *what) {
  if (w->problems++ < 10)
    cr_expect(0, "%s:%d:%d: typed tree: %s", w->fixture, n->loc.line, n->loc.col, what);
}

static bool concrete(const Type *t) {
  return t && t->kind != TY_UNTYPED_INT && t->kind != TY_UNTYPED_FLOAT && t->kind != TY_ERROR;
}

static bool vmq(const Type *t) {
  return t && (t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT);
}

static void walk_expr(Walk *w, const Node *n);

static void walk_args_match(Walk *w, const Node *n, Type *const *params, int np) {
  int i = 0;
  for (const Node *a = n->args; a; a = a->next, i++)
    if (i >= np || !type_equal(a->ty, params[i]))
      problem(w, a, "call argument does not have its parameter's exact type");
  if (i != np) problem(w, n, "call has the wrong number of arguments");
}

static void walk_call(Walk *w, const Node *n) {
  switch (n->call_kind) {
    case CALL_FUNC: {
      if (!n->fn || !type_equal(n->ty, n->fn->ret)) {
        problem(w, n, "CALL_FUNC without its function or with another type");
        break;
      }
      Type *ps[64];
      for (int i = 0; i < n->fn->nparams && i < 64; i++) ps[i] = n->fn->params[i]->ty;
      /* a reference parameter's argument is &lvalue of its exact type */
      int i = 0;
      for (const Node *a = n->args; a && i < 64; a = a->next, i++)
        if (i < n->fn->nparams && n->fn->params[i]->is_ref) {
          if (a->kind != ND_ADDR || !a->lhs || !type_equal(a->lhs->ty, ps[i]))
            problem(w, a, "reference argument is not & of an lvalue of the parameter's type");
          else
            ps[i] = a->ty;
        }
      walk_args_match(w, n, ps, n->fn->nparams);
      break;
    }
    case CALL_BUILTIN: {
      /* the table's rows, or one made for vec<T, N> (builtin_intern) */
      const Builtin *b = builtin_get(n->builtin);
      if (!b || strcmp(b->name, n->name) != 0 || !type_equal(b->ret, n->ty))
        problem(w, n, "CALL_BUILTIN names another builtin");
      else
        walk_args_match(w, n, b->params, b->nparams);
      break;
    }
    case CALL_SPECIAL:
      if (n->special == SP_NONE) problem(w, n, "CALL_SPECIAL without a special kind");
      break;
    case CALL_CTOR:
      if (!vmq(n->ty) && n->ty->kind != TY_STRUCT)
        problem(w, n, "CALL_CTOR of a type that has no constructor");
      break;
    default: problem(w, n, "unresolved call");
  }
}

/* Operators on vectors/matrices/quats are builtin calls; scalar ones have
 * operands of one type (shifts and logic aside), with conversions explicit. */
static void walk_operator(Walk *w, const Node *n) {
  const Node *l = n->lhs, *r = n->kind == ND_BINARY ? n->rhs : NULL;
  if (vmq(l->ty) || (r && vmq(r->ty))) {
    const Builtin *b = n->call_kind == CALL_BUILTIN ? builtin_get(n->builtin) : NULL;
    if (!b || !type_equal(b->ret, n->ty) || !type_equal(b->params[0], l->ty) ||
        (r && !type_equal(b->params[1], r->ty)))
      problem(w, n, "vector operator without a matching builtin");
    return;
  }
  if (n->call_kind != CALL_UNRESOLVED) problem(w, n, "scalar operator marked as a call");
  bool shift = n->op == TK_SHL || n->op == TK_SHR;
  if (r && !shift && !type_equal(l->ty, r->ty)) problem(w, n, "binary operands of different types");
  bool cmp = n->op == TK_LT || n->op == TK_GT || n->op == TK_LE || n->op == TK_GE ||
             n->op == TK_EQEQ || n->op == TK_NE || n->op == TK_ANDAND || n->op == TK_OROR ||
             n->op == TK_BANG;
  if (!type_equal(n->ty, cmp ? &ty_bool : l->ty))
    problem(w, n, "operator result of the wrong type");
}

static void walk_expr(Walk *w, const Node *n) {
  if (!n) return;
  if (!concrete(n->ty)) {
    problem(w, n, "expression without a concrete type");
    return;
  }
  switch (n->kind) {
    case ND_INT:
    case ND_FLOAT:
    case ND_BOOL:
      if (n->kind == ND_FLOAT ? !type_is_float(n->ty)
          : n->kind == ND_INT ? !type_is_int(n->ty)
                              : n->ty->kind != TY_BOOL)
        problem(w, n, "literal of the wrong kind for its type");
      break;
    case ND_IDENT:
      if (!n->var && !n->cdecl) problem(w, n, "identifier without its declaration");
      if (n->var && !type_equal(n->var->ty, n->ty))
        problem(w, n, "identifier typed differently from its variable");
      break;
    case ND_UNARY:
    case ND_BINARY: walk_operator(w, n); break;
    case ND_CALL: walk_call(w, n); break;
    case ND_CONV:
      if (!n->lhs || type_equal(n->lhs->ty, n->ty)) problem(w, n, "ND_CONV that converts nothing");
      break;
    case ND_COND:
      if (!type_equal(n->then->ty, n->ty) || !type_equal(n->els->ty, n->ty) ||
          n->cond->ty->kind != TY_BOOL)
        problem(w, n, "?: with mismatched types");
      break;
    case ND_ADDR:
      if (n->ty->kind != TY_PTR) problem(w, n, "& without a pointer type");
      break;
    case ND_INDEX:
      for (const Node *a = n->args; a; a = a->next)
        if (!type_is_int(a->ty)) problem(w, a, "index is not an integer");
      break;
    default: break;
  }
  walk_expr(w, n->lhs);
  walk_expr(w, n->rhs);
  walk_expr(w, n->cond);
  walk_expr(w, n->then);
  walk_expr(w, n->els);
  for (const Node *a = n->args; a; a = a->next) walk_expr(w, a);
}

static void walk_var(Walk *w, const Var *v, const Node *at) {
  if (!concrete(v->ty) || v->id < 0 || v->id >= w->fn->nvars || w->ids[v->id])
    problem(w, at, "variable without a type or a unique id");
  else
    w->ids[v->id] = true;
}

static void walk_stmt(Walk *w, const Node *n) {
  for (; n; n = n->next) {
    switch (n->kind) {
      case ND_VARDECL:
        walk_var(w, n->var, n);
        walk_expr(w, n->var->init);
        if (!type_equal(n->var->init->ty, n->var->ty))
          problem(w, n, "initializer not converted to the variable's type");
        break;
      case ND_ASSIGN:
        walk_expr(w, n->lhs);
        walk_expr(w, n->rhs);
        if (n->op == TK_ASSIGN && !type_equal(n->lhs->ty, n->rhs->ty))
          problem(w, n, "assigned value not converted to the target's type");
        break;
      case ND_INCDEC:
      case ND_EXPR_STMT: walk_expr(w, n->lhs); break;
      case ND_RETURN:
        walk_expr(w, n->lhs);
        if (n->lhs && !type_equal(n->lhs->ty, w->fn->ret))
          problem(w, n, "return value not converted to the return type");
        break;
      case ND_BLOCK: walk_stmt(w, n->body); break;
      case ND_IF:
      case ND_WHILE:
      case ND_DO:
      case ND_FOR:
        walk_expr(w, n->cond);
        if (n->cond && n->cond->ty->kind != TY_BOOL) problem(w, n, "condition is not bool");
        if (n->kind == ND_FOR) {
          Node *init = n->init, *inc = n->inc;
          if (init) {
            Node *save = init->next;
            init->next = NULL;
            walk_stmt(w, init);
            init->next = save;
          }
          if (inc) {
            Node *save = inc->next;
            inc->next = NULL;
            walk_stmt(w, inc);
            inc->next = save;
          }
        }
        {
          Node *parts[3] = {n->then, n->els, n->body};
          for (int i = 0; i < 3; i++) {
            if (!parts[i]) continue;
            Node *save = parts[i]->next;
            parts[i]->next = NULL;
            walk_stmt(w, parts[i]);
            parts[i]->next = save;
          }
        }
        break;
      default: break;
    }
  }
}

static void walk_program(const char *fixture, const Program *p) {
  Walk w = {.fixture = fixture};
  for (int k = 0; k < 2; k++) {
    Decl **ds = k ? p->kernels : p->funcs;
    int n = k ? p->nkernels : p->nfuncs;
    for (int i = 0; i < n; i++) {
      w.fn = ds[i];
      w.ids = calloc((size_t)ds[i]->nvars + 1, 1);
      for (int j = 0; j < ds[i]->nparams; j++) walk_var(&w, ds[i]->params[j], ds[i]->body);
      walk_stmt(&w, ds[i]->body);
      free(w.ids);
      if (k == 1 && !ds[i]->used)
        cr_expect(0, "%s: kernel '%s' not marked used", fixture, ds[i]->name);
    }
  }
  for (int i = 0; i < p->nconsts; i++) {
    const Node *v = p->consts[i]->init;
    if (!v || !v->is_const || !concrete(v->ty) ||
        (v->kind != ND_INT && v->kind != ND_FLOAT && v->kind != ND_BOOL))
      cr_expect(0, "%s: const '%s' not folded to a typed literal", fixture, p->consts[i]->name);
  }
  for (int i = 0; i < p->nstructs; i++) {
    const Decl *s = p->structs[i];
    if (!s->sty || s->sty->size <= 0 || s->sty->size % s->sty->align)
      cr_expect(0, "%s: struct '%s' without a layout", fixture, s->name);
    for (int f = 0; f < s->nfields; f++) {
      const Type *ft = s->fields[f].ty;
      if (ft->kind == TY_STRUCT) {
        bool before = false;
        for (int j = 0; j < i; j++) before |= p->structs[j] == ft->sdecl;
        if (!before)
          cr_expect(0, "%s: struct '%s' listed before '%s', which it contains", fixture, s->name,
                    ft->sdecl->name);
      }
    }
  }
}

/* ---- running fixtures ----------------------------------------------------------- */

static void run_fixture(const char *path, bool ok) {
  const char *name = base_name(path);
  char *src = th_read_file(path, NULL);
  cr_assert(src, "%s: cannot read the fixture", path);
  Expects ex = read_expects(name, src);
  FrontResult r = front_compile(path, NULL, 0);
  cr_assert(r.prog, "%s: out of memory", name);
  Diags *d = r.prog->diags;
  if (ok) {
    cr_expect(r.ok && d->nerrors == 0 && d->nwarnings == 0 && ex.n == 0,
              "%s: expected a clean compile, got %d errors and %d warnings", name, d->nerrors,
              d->nwarnings);
  } else {
    cr_expect(!r.ok || d->nwarnings > 0, "%s: compiled without a diagnostic", name);
  }
  cr_expect(!d->truncated, "%s: too many errors", name);
  /* Expectations written in imported files, each file read once. */
  const char *loaded[64];
  int nloaded = 0;
  for (const Diag *g = d->head; g; g = g->next) {
    if (!g->loc.file || strcmp(g->loc.file, path) == 0) continue;
    bool seen = false;
    for (int i = 0; i < nloaded; i++) seen |= strcmp(loaded[i], g->loc.file) == 0;
    if (seen || nloaded == 64) continue;
    loaded[nloaded++] = g->loc.file;
    char *other = th_read_file(g->loc.file, NULL);
    Expects more = other ? read_expects(g->loc.file, other) : (Expects){0};
    for (int i = 0; i < more.n; i++) {
      if (more.v[i].file[0]) continue;
      snprintf(more.v[i].file, sizeof more.v[i].file, "%s", g->loc.file);
      if (ex.n == ex.cap)
        ex.v = realloc(ex.v, (size_t)(ex.cap = ex.cap ? 2 * ex.cap : 16) * sizeof *ex.v);
      ex.v[ex.n++] = more.v[i];
    }
    free(more.v);
    free(other);
  }
  if (!ok) cr_expect(ex.n > 0, "%s: a bad fixture without expectations", name);
  for (const Diag *g = d->head; g; g = g->next) {
    Expect *e = match(&ex, g, path);
    if (e)
      e->seen = true;
    else if (g->level != DIAG_NOTE)
      cr_expect(0, "%s: unexpected %s at %s:%d:%d: %s", name, level_name(g->level),
                g->loc.file ? base_name(g->loc.file) : "-", g->loc.line, g->loc.col, g->msg);
  }
  for (int i = 0; i < ex.n; i++)
    if (!ex.v[i].seen)
      cr_expect(0, "%s: expected %s at %s%sline %d%s was not reported: %s", name,
                level_name(ex.v[i].level), ex.v[i].file, ex.v[i].file[0] ? " " : "", ex.v[i].line,
                ex.v[i].col ? " (with its column)" : "", ex.v[i].text);
  if (ok && r.ok) walk_program(name, r.prog);
  free(ex.v);
  free(src);
  front_free(r.prog);
}

typedef struct FixturePath {
  char path[1024];
} FixturePath;

static void free_fixtures(struct criterion_test_params *crp) { cr_free(crp->params); }

static struct criterion_test_params fixtures(const char *sub) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/kern/%s", KERN_TESTS_DIR, sub);
  char **names;
  int n = th_list(dir, ".kern", &names);
  FixturePath *fx = cr_malloc(sizeof *fx * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    snprintf(fx[i].path, sizeof fx[i].path, "%s", names[i]);
    free(names[i]);
  }
  free(names);
  fprintf(stderr, "test_check: %d fixtures in tests/kern/%s\n", n, sub);
  return cr_make_param_array(FixturePath, fx, (size_t)n, free_fixtures);
}

ParameterizedTestParameters(fixture, ok) { return fixtures("ok"); }

ParameterizedTest(FixturePath *f, fixture, ok) { run_fixture(f->path, true); }

ParameterizedTestParameters(fixture, bad) { return fixtures("bad"); }

ParameterizedTest(FixturePath *f, fixture, bad) { run_fixture(f->path, false); }

/* The suites above must not pass by finding nothing. */
Test(fixture, counts) {
  char dir[1024], **names;
  snprintf(dir, sizeof dir, "%s/kern/ok", KERN_TESTS_DIR);
  int nok = th_list(dir, ".kern", &names);
  for (int i = 0; i < nok; i++) free(names[i]);
  free(names);
  snprintf(dir, sizeof dir, "%s/kern/bad", KERN_TESTS_DIR);
  int nbad = th_list(dir, ".kern", &names);
  for (int i = 0; i < nbad; i++) free(names[i]);
  free(names);
  cr_expect_geq(nok, 20, "only %d ok fixtures", nok);
  cr_expect_geq(nbad, 45, "only %d bad fixtures", nbad);
}

/* ---- unit tests: results worked out by hand --------------------------------------- */

static FrontResult compiled;

static void drop(void) {
  front_free(compiled.prog);
  compiled.prog = NULL;
}

/* Compiles src, which must have no diagnostics at all. */
static Program *compile_ok(const char *src) {
  compiled = front_compile("unit.kern", src, strlen(src));
  cr_assert(compiled.prog);
  char *text = diag_render(compiled.prog->diags, false);
  cr_assert(compiled.ok && compiled.prog->diags->nwarnings == 0, "unexpected diagnostics:\n%s",
            text);
  free(text);
  return compiled.prog;
}

static Decl *decl_named(Program *p, const char *name) {
  for (Module *m = p->modules; m; m = m->next)
    for (Decl *d = m->decls; d; d = d->next)
      if (d->name && strcmp(d->name, name) == 0) return d;
  cr_assert(0, "no declaration '%s'", name);
  return NULL;
}

/* The n-th node (pre-order, 0-based) of a kind in a function body. */
typedef struct Find {
  NodeKind kind;
  int want, seen;
  Node *found;
} Find;

static void find_in(Find *f, Node *n) {
  for (; n && !f->found; n = n->next) {
    if (n->kind == f->kind && f->seen++ == f->want) {
      f->found = n;
      return;
    }
    if (n->kind == ND_VARDECL) find_in(f, n->var->init);
    Node *kids[] = {n->lhs, n->rhs, n->cond, n->then, n->els, n->init, n->inc, n->body, n->args};
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++) {
      if (!kids[i]) continue;
      /* Lists hang off body and args only; other children are single nodes. */
      Node *save = kids[i]->next;
      if (kids[i] != n->body && kids[i] != n->args) kids[i]->next = NULL;
      find_in(f, kids[i]);
      kids[i]->next = save;
    }
  }
}

static Node *nth(Program *p, const char *fn, NodeKind kind, int n) {
  Find f = {kind, n, 0, NULL};
  find_in(&f, decl_named(p, fn)->body);
  cr_assert(f.found, "no node #%d of kind %d in '%s'", n, kind, fn);
  return f.found;
}

static int64_t const_int(Program *p, const char *name, Type *ty) {
  Node *v = decl_named(p, name)->init;
  cr_assert_eq(v->kind, ND_INT, "%s is not a folded integer", name);
  cr_assert(type_equal(v->ty, ty), "%s has type %s, expected %s", name, type_name(v->ty),
            type_name(ty));
  return (int64_t)v->ival;
}

static double const_float(Program *p, const char *name, Type *ty) {
  Node *v = decl_named(p, name)->init;
  cr_assert_eq(v->kind, ND_FLOAT, "%s is not a folded float", name);
  cr_assert(type_equal(v->ty, ty), "%s has type %s, expected %s", name, type_name(v->ty),
            type_name(ty));
  return v->fval;
}

Test(check, struct_layout_follows_c, .fini = drop) {
  Program *p = compile_ok("struct B { A a; bool f; };\n"
                          "struct A { int8 a; float64 b; vec3 c; };\n"
                          "struct V { vec3 p; float m; int8 t; };\n"
                          "struct M { bool b; mat33 m; };\n"
                          "struct H { float16 h; int8 c; float16 g; };\n"
                          "kernel void k(B[] bs, V[] vs, M[] ms, H[] hs) { }\n");
  Decl *a = decl_named(p, "A"), *b = decl_named(p, "B");
  cr_expect_eq(a->fields[0].offset, 0);
  cr_expect_eq(a->fields[1].offset, 8);
  cr_expect_eq(a->fields[2].offset, 16);
  cr_expect_eq(a->sty->size, 32);
  cr_expect_eq(a->sty->align, 8);
  cr_expect_eq(b->fields[1].offset, 32);
  cr_expect_eq(b->sty->size, 40);
  Decl *v = decl_named(p, "V"), *m = decl_named(p, "M"), *h = decl_named(p, "H");
  cr_expect_eq(v->fields[2].offset, 16);
  cr_expect_eq(v->sty->size, 20);
  cr_expect_eq(v->sty->align, 4);
  cr_expect_eq(m->fields[1].offset, 4);
  cr_expect_eq(m->sty->size, 40);
  cr_expect_eq(h->fields[2].offset, 4);
  cr_expect_eq(h->sty->size, 6);
  cr_expect_eq(h->sty->align, 2);
  /* Dependencies first: A before B, whatever the source order. */
  cr_assert_eq(p->nstructs, 5);
  int ia = -1, ib = -1;
  for (int i = 0; i < p->nstructs; i++) {
    if (p->structs[i] == a) ia = i;
    if (p->structs[i] == b) ib = i;
  }
  cr_expect(ia >= 0 && ia < ib);
  cr_expect(type_equal(b->fields[0].ty, a->sty));
}

Test(check, constants_fold_exactly, .fini = drop) {
  Program *p = compile_ok("const int A = 7 / 2;\n"
                          "const int B = -7 / 2;\n"
                          "const int C = -7 % 3;\n"
                          "const uint32 M = ~0u;\n"
                          "const int64 BIG = 1 << 40;\n"
                          "const float Q = 1 / 4.0;\n"
                          "const double THIRD = 1.0 / 3.0;\n"
                          "const float FTHIRD = 1.0 / 3.0;\n"
                          "const int K = A * 2 + 1;\n"
                          "const bool T = 3 > 2 && !false;\n"
                          "const uint8 W = (uint8)300;\n"
                          "const int TR = (int)-2.7;\n"
                          "const int8 N8 = -128;\n"
                          "const float16 H = 0.1;\n"
                          "const uint64 U = 18446744073709551615;\n"
                          "const int SH = -16 >> 2;\n"
                          "const int64 WIDE = (1 << 62) * 2 - 1 + (1 << 62) * -2;\n"
                          "const uint32 HEX = 0xDEAD_BEEF;\n"
                          "const int NEG = -2147483648;\n"
                          "const float ONE = 1;\n"
                          "const int16 S16 = (int16)40000;\n"
                          "const int AUTO = SH;\n"
                          "const int64 ZS = 0 << 127;\n"
                          "kernel void k(int[] a) { a[0] = A + B + C + K + TR + SH + AUTO; }\n");
  cr_expect_eq(const_int(p, "A", &ty_i32), 3);
  cr_expect_eq(const_int(p, "B", &ty_i32), -3);
  cr_expect_eq(const_int(p, "C", &ty_i32), -1);
  cr_expect_eq(const_int(p, "M", &ty_u32), 4294967295);
  cr_expect_eq(const_int(p, "BIG", &ty_i64), 1099511627776);
  cr_expect_eq(const_float(p, "Q", &ty_f32), 0.25);
  cr_expect_eq(const_float(p, "THIRD", &ty_f64), 1.0 / 3.0);
  cr_expect_eq(const_float(p, "FTHIRD", &ty_f32), (double)(1.0f / 3.0f));
  cr_expect_eq(const_int(p, "K", &ty_i32), 7);
  cr_expect_eq(decl_named(p, "T")->init->kind, ND_BOOL);
  cr_expect_eq(decl_named(p, "T")->init->ival, 1);
  cr_expect_eq(const_int(p, "W", &ty_u8), 44);
  cr_expect_eq(const_int(p, "TR", &ty_i32), -2);
  cr_expect_eq(const_int(p, "N8", &ty_i8), -128);
  cr_expect_eq(const_float(p, "H", &ty_f16), 0.0999755859375); /* nearest float16 to 0.1 */
  cr_expect_eq((uint64_t)const_int(p, "U", &ty_u64), UINT64_MAX);
  cr_expect_eq(const_int(p, "SH", &ty_i32), -4);
  cr_expect_eq(const_int(p, "WIDE", &ty_i64), -1);
  cr_expect_eq(const_int(p, "HEX", &ty_u32), 3735928559);
  cr_expect_eq(const_int(p, "NEG", &ty_i32), INT32_MIN);
  cr_expect_eq(const_float(p, "ONE", &ty_f32), 1.0);
  cr_expect_eq(const_int(p, "S16", &ty_i16), -25536);
  cr_expect_eq(const_int(p, "AUTO", &ty_i32), -4);
  cr_expect_eq(const_int(p, "ZS", &ty_i64), 0);
  cr_expect_eq(p->nconsts, 23);
}

/* bfloat16 constants round once to 8 significant bits, ties to even: integers
 * from the integer (through a double 2^60 + 2^52 + 1 would first become the
 * tie 2^60 + 2^52, then 2^60), into the subnormals (2^-133 steps); float32's
 * integer constants take the same single rounding. */
Test(check, bfloat16_constants_round_once, .fini = drop) {
  Program *p = compile_ok("const bfloat16 B1 = 0.1;\n"
                          "const bfloat16 BI = 16842753;\n"
                          "const bfloat16 BT = 16842752;\n"
                          "const bfloat16 BL = 1157425104234217473;\n"
                          "const bfloat16 BC = bfloat16(1157425104234217473);\n"
                          "const bfloat16 BS = 1.3775324423698682e-40;\n" /* 1.5 * 2^-133 */
                          "const bfloat16 BZ = 4.591774807899561e-41;\n"  /* 2^-134 */
                          "const bfloat16 BMAX = 3.3895313892515355e38;\n"
                          "const bfloat16 BSUM = B1 + bfloat16(0.2);\n"
                          "const float FL = 1152921573326323713;\n"
                          "kernel void k(float[] a) { a[0] = B1 + BI + BT + BL + BSUM + FL; }\n");
  cr_expect_eq(const_float(p, "B1", &ty_bf16), 0.10009765625);
  cr_expect_eq(const_float(p, "BI", &ty_bf16), 16908288.0); /* 2^24 + 2^17 */
  cr_expect_eq(const_float(p, "BT", &ty_bf16), 16777216.0); /* the tie, to even */
  cr_expect_eq(const_float(p, "BL", &ty_bf16), 0x1.02p60);  /* 2^60 + 2^53 */
  cr_expect_eq(const_float(p, "BC", &ty_bf16), 0x1.02p60);
  cr_expect_eq(const_float(p, "BS", &ty_bf16), 0x1p-132); /* 1.5 steps: to 2 */
  cr_expect_eq(const_float(p, "BZ", &ty_bf16), 0.0);      /* half a step: to 0 */
  cr_expect_eq(const_float(p, "BMAX", &ty_bf16), 0x1.fep127);
  cr_expect_eq(const_float(p, "BSUM", &ty_bf16),
               0.30078125); /* 0.10009765625 + 0.2001953125, rounded */
  /* 2^60 + 2^36 + 1: above float32's tie 2^60 + 2^36, so up to 2^60 + 2^37 */
  cr_expect_eq(const_float(p, "FL", &ty_f32), 0x1.000002p60);
}

Test(check, overloads_pick_the_cheapest, .fini = drop) {
  Program *p = compile_ok("float f(float x) { return x; }\n"
                          "double f(double x) { return x; }\n"
                          "int f(int x) { return x; }\n"
                          "int64 f(int64 x) { return x; }\n"
                          "kernel void k(float[] o, double[] d, int[] i, int64[] l, int8[] s) {\n"
                          "  o[0] = f(1.5);\n"
                          "  d[0] = f(1.5d);\n"
                          "  i[0] = f(7);\n"
                          "  l[0] = f(5000000000);\n"
                          "  i[1] = f(s[0]);\n"
                          "  d[1] = f(o[0]);\n"
                          "  o[1] = max(o[0], 0);\n"
                          "}\n");
  int want[] = {0, 1, 2, 3, 2, 0};
  for (int i = 0; i < 6; i++) {
    Node *call = nth(p, "k", ND_CALL, i);
    cr_expect_eq(call->call_kind, CALL_FUNC);
    cr_expect_eq(call->fn->overload, want[i], "call #%d chose overload %d", i, call->fn->overload);
  }
  /* int8 -> int32 is an explicit ND_CONV; f(float) returns float32, widened to float64. */
  Node *widened = nth(p, "k", ND_CALL, 4)->args;
  cr_expect_eq(widened->kind, ND_CONV);
  cr_expect(type_equal(widened->ty, &ty_i32) && type_equal(widened->lhs->ty, &ty_i8));
  Node *assign = nth(p, "k", ND_ASSIGN, 5);
  cr_expect_eq(assign->rhs->kind, ND_CONV);
  cr_expect(type_equal(assign->rhs->ty, &ty_f64));
  Node *mx = nth(p, "k", ND_CALL, 6);
  cr_expect_eq(mx->call_kind, CALL_BUILTIN);
  const Builtin *b = builtin_get(mx->builtin);
  cr_expect_str_eq(b->name, "max");
  cr_expect(type_equal(b->params[0], &ty_f32) && type_equal(b->params[1], &ty_f32));
  cr_expect_eq(mx->args->next->kind, ND_FLOAT); /* 0 became the float32 constant 0.0 */
  cr_expect(type_equal(mx->args->next->ty, &ty_f32));
}

Test(check, conversions_are_explicit_nodes, .fini = drop) {
  Program *p = compile_ok("double g(float x, int8 y) { int32 z = y; int64 w = z + y; return x; }\n"
                          "float h() { return 1; }\n"
                          "double e() { return 0.1; }\n"
                          "kernel void k(float[] a) { a[0] = float(g(1.0, 2) + h() + e()); }\n");
  Node *z = nth(p, "g", ND_VARDECL, 0)->var->init;
  cr_expect_eq(z->kind, ND_CONV);
  cr_expect(type_equal(z->ty, &ty_i32) && z->lhs->kind == ND_IDENT);
  Node *sum = nth(p, "g", ND_VARDECL, 1)->var->init; /* (int64)(z + (int32)y) */
  cr_expect_eq(sum->kind, ND_CONV);
  cr_expect_eq(sum->lhs->kind, ND_BINARY);
  cr_expect_eq(sum->lhs->rhs->kind, ND_CONV);
  Node *ret = nth(p, "g", ND_RETURN, 0)->lhs;
  cr_expect_eq(ret->kind, ND_CONV);
  cr_expect(type_equal(ret->ty, &ty_f64) && type_equal(ret->lhs->ty, &ty_f32));
  Node *one = nth(p, "h", ND_RETURN, 0)->lhs;
  cr_expect_eq(one->kind, ND_FLOAT);
  cr_expect(type_equal(one->ty, &ty_f32) && one->fval == 1.0 && one->is_const);
  Node *tenth = nth(p, "e", ND_RETURN, 0)->lhs;
  cr_expect(tenth->kind == ND_FLOAT && tenth->fval == 0.1 && type_equal(tenth->ty, &ty_f64));
}

/* What later stages read instead of walking the tree: every array parameter's
 * program-wide number, and which arrays atomics reach (through calls too). */
Test(check, records_array_numbers_and_atomics_for_later_stages, .fini = drop) {
  Program *p = compile_ok("void bump(int[] a, int k) { atomic_add(&a[k], 1); }\n"
                          "void relay(int[] b, float[] f) { bump(b, 0); f[0] = 1.0; }\n"
                          "kernel void k(int[] x, int[] y, float[] z, int n) {\n"
                          "    relay(x, z);\n"
                          "    y[0] = n;\n"
                          "}\n");
  cr_assert_eq(p->narray_params, 6);
  bool seen[6] = {false};
  const char *fns[] = {"bump", "relay", "k"};
  for (int f = 0; f < 3; f++) {
    Decl *d = decl_named(p, fns[f]);
    for (int j = 0; j < d->nparams; j++) {
      Var *v = d->params[j];
      if (v->ty->kind != TY_ARRAY) {
        cr_expect_eq(v->array_id, -1, "%s is no array", v->name);
        continue;
      }
      cr_assert(v->array_id >= 0 && v->array_id < 6, "%s: %d", v->name, v->array_id);
      cr_expect_not(seen[v->array_id], "numbers are distinct");
      seen[v->array_id] = true;
      cr_expect_eq(p->array_params[v->array_id].param, v);
      cr_expect_eq(p->array_params[v->array_id].owner, d);
    }
  }
  struct {
    const char *fn;
    int param;
    bool atomics;
  } want[] = {{"bump", 0, true}, {"relay", 0, true}, {"relay", 1, false},
              {"k", 0, true},    {"k", 1, false},    {"k", 2, false}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const Var *v = decl_named(p, want[i].fn)->params[want[i].param];
    cr_expect_eq(v->atomics, want[i].atomics, "%s.%s", want[i].fn, v->name);
  }
}

Test(check, calls_casts_and_operators, .fini = drop) {
  Program *p = compile_ok("struct S { int a; float b; };\n"
                          "kernel void k(int[] i, vec3[] v, ivec3[] iv, S[] s) {\n"
                          "  float f = float(i[0]);\n"
                          "  vec3 a = vec3(1, 2, 3);\n"
                          "  vec3 b = vec3(iv[0]);\n"
                          "  vec3 c = a * 2.0;\n"
                          "  vec3 d = -a;\n"
                          "  s[0] = S(1, 2.0);\n"
                          "  a += b;\n"
                          "  int t = tid();\n"
                          "  int64 n = size(i);\n"
                          "  int old = atomic_add(&i[0], 1);\n"
                          "}\n");
  Node *cast = nth(p, "k", ND_VARDECL, 0)->var->init;
  cr_expect_eq(cast->kind, ND_CAST);
  cr_expect(type_equal(cast->ty, &ty_f32) && type_equal(cast->lhs->ty, &ty_i32));
  Node *ctor = nth(p, "k", ND_VARDECL, 1)->var->init;
  cr_expect(ctor->kind == ND_CALL && ctor->call_kind == CALL_CTOR &&
            type_equal(ctor->ty, &ty_vec3));
  for (Node *arg = ctor->args; arg; arg = arg->next)
    cr_expect(arg->kind == ND_FLOAT && type_equal(arg->ty, &ty_f32));
  Node *vcast = nth(p, "k", ND_VARDECL, 2)->var->init;
  cr_expect(vcast->kind == ND_CAST && type_equal(vcast->ty, &ty_vec3) &&
            type_equal(vcast->lhs->ty, &ty_ivec3));
  Node *mul = nth(p, "k", ND_VARDECL, 3)->var->init;
  cr_expect(mul->kind == ND_BINARY && mul->call_kind == CALL_BUILTIN);
  cr_expect_str_eq(builtin_get(mul->builtin)->name, "op*");
  cr_expect(type_equal(mul->rhs->ty, &ty_f32));
  Node *neg = nth(p, "k", ND_VARDECL, 4)->var->init;
  cr_expect(neg->kind == ND_UNARY && neg->call_kind == CALL_BUILTIN);
  cr_expect_str_eq(builtin_get(neg->builtin)->name, "neg");
  Node *sc = nth(p, "k", ND_ASSIGN, 0)->rhs;
  cr_expect(sc->call_kind == CALL_CTOR && type_equal(sc->ty, decl_named(p, "S")->sty));
  cr_expect(sc->args->kind == ND_INT && type_equal(sc->args->ty, &ty_i32));
  Node *plus = nth(p, "k", ND_ASSIGN, 1);
  cr_expect(plus->op == TK_PLUSEQ && plus->call_kind == CALL_BUILTIN);
  cr_expect_str_eq(builtin_get(plus->builtin)->name, "op+");
  Node *tid = nth(p, "k", ND_VARDECL, 5)->var->init;
  cr_expect(tid->call_kind == CALL_SPECIAL && tid->special == SP_TID &&
            type_equal(tid->ty, &ty_i32));
  Node *size = nth(p, "k", ND_VARDECL, 6)->var->init;
  cr_expect(size->special == SP_SIZE && type_equal(size->ty, &ty_i64));
  Node *atomic = nth(p, "k", ND_VARDECL, 7)->var->init;
  cr_expect(atomic->special == SP_ATOMIC_ADD && type_equal(atomic->ty, &ty_i32));
  cr_expect(atomic->args->kind == ND_ADDR && atomic->args->ty->kind == TY_PTR &&
            type_equal(atomic->args->ty->elem, &ty_i32));
}

Test(check, printf_arguments_become_what_c_reads, .fini = drop) {
  Program *p = compile_ok("kernel void k(float[] f, int8[] b, uint8[] u, int[] i) {\n"
                          "  printf(\"%f %d %u %x %ld %s\\n\", f[0], b[0], u[0], i[0], 7, \"x\");\n"
                          "}\n");
  Node *a = nth(p, "k", ND_CALL, 0)->args;
  cr_expect_eq(a->kind, ND_STRING);
  Type *want[] = {&ty_f64, &ty_i32, &ty_u32, &ty_u32, &ty_i64, &ty_string};
  int i = 0;
  for (a = a->next; a; a = a->next, i++)
    cr_expect(type_equal(a->ty, want[i]), "printf argument %d is %s, expected %s", i + 1,
              type_name(a->ty), type_name(want[i]));
  cr_expect_eq(i, 6);
}

Test(check, used_flags_ids_and_tables, .fini = drop) {
  Program *p = compile_ok("void a() { }\n"
                          "void b() { a(); }\n"
                          "void c() { }\n"
                          "const float K = 1.0;\n"
                          "kernel void k(int[] x, float y) { int i = 0; { int j = i; } b(); }\n");
  cr_expect(decl_named(p, "a")->used);
  cr_expect(decl_named(p, "b")->used);
  cr_expect(!decl_named(p, "c")->used);
  Decl *k = decl_named(p, "k");
  cr_expect(k->used);
  cr_expect_eq(k->nvars, 4);
  bool seen[4] = {0};
  int ids[] = {k->params[0]->id, k->params[1]->id, nth(p, "k", ND_VARDECL, 0)->var->id,
               nth(p, "k", ND_VARDECL, 1)->var->id};
  for (int i = 0; i < 4; i++) {
    cr_assert(ids[i] >= 0 && ids[i] < 4 && !seen[ids[i]]);
    seen[ids[i]] = true;
  }
  cr_expect_eq(p->nfuncs, 3);
  cr_expect_eq(p->nkernels, 1);
  cr_expect_eq(p->nconsts, 1);
  cr_expect_eq(p->funcs[0], decl_named(p, "a"));
  cr_expect_eq(p->funcs[2], decl_named(p, "c"));
}

Test(check, imports_list_every_module, .fini = drop) {
  char path[1024];
  snprintf(path, sizeof path, "%s/kern/ok/import_main.kern", KERN_TESTS_DIR);
  compiled = front_compile(path, NULL, 0);
  cr_assert(compiled.ok);
  Program *p = compiled.prog;
  cr_expect_eq(p->nstructs, 1);
  cr_expect_eq(p->nconsts, 1);
  cr_expect_eq(p->nfuncs, 2);
  cr_expect_eq(p->nkernels, 1);
  cr_expect(decl_named(p, "scale")->used && decl_named(p, "at")->used);
}

Test(check, errors_have_precise_locations, .fini = drop) {
  const char *src = "kernel void k(uint8[] a) {\n  uint8 x = 300;\n  a[0] = x + 1.5;\n}\n";
  compiled = front_compile("unit.kern", src, strlen(src));
  Diags *d = compiled.prog->diags;
  cr_assert_eq(d->nerrors, 2);
  cr_expect_str_eq(d->head->msg, "constant 300 overflows uint8");
  cr_expect_eq(d->head->loc.line, 2);
  cr_expect_eq(d->head->loc.col, 13);
  cr_expect_eq(d->head->loc.len, 3);
  Diag *e = d->head->next;
  while (e && e->level != DIAG_ERROR) e = e->next;
  cr_assert(e);
  cr_expect_str_eq(e->msg, "constant 1.5 truncated to uint8");
  cr_expect_eq(e->loc.line, 3);
  cr_expect_eq(e->loc.col, 14);
}

/* The checker never reads past the tree it is given: deep operator chains
 * are refused with an error, not a stack overflow. */
Test(check, long_operator_chain_is_bounded, .fini = drop) {
  size_t n = 200000;
  char *src = malloc(n * 4 + 100);
  char *q = src + sprintf(src, "kernel void k(int[] a) { a[0] = 1");
  for (size_t i = 0; i < n; i++) q += sprintf(q, "+1");
  strcpy(q, "; }\n");
  compiled = front_compile("unit.kern", src, strlen(src));
  free(src);
  cr_assert(compiled.prog);
  cr_expect(!compiled.ok);
  cr_expect(strstr(compiled.prog->diags->head->msg, "nested too deeply"));
}

/* ---- import paths ------------------------------------------------------------------- */

/* The first error of compiling src as the file `name`; "" when it compiles. */
static const char *first_error(const char *name, const char *src, size_t len) {
  drop();
  compiled = front_compile(name, src, len);
  cr_assert(compiled.prog);
  for (Diag *d = compiled.prog->diags->head; d; d = d->next)
    if (d->level == DIAG_ERROR) return d->msg;
  return "";
}

/* The library reports the same through kern_last_error(). */
static void expect_module_error(const char *name, const char *src, const char *text) {
  kern_module *m = kern_module_from_source(name, src);
  cr_expect_null(m, "%s", src);
  cr_expect_eq(kern_last_status(), KERN_ERR_COMPILE);
  cr_expect(strstr(kern_last_error(), text), "'%s' not in:\n%s", text, kern_last_error());
  kern_module_free(m);
}

Test(check, import_path_with_a_nul_byte_is_rejected, .fini = drop) {
  static const char escaped[] = "import \"lib\\0.kern\";\nkernel void k(int[] a) { a[0] = 1; }\n";
  cr_expect_str_eq(first_error("unit.kern", escaped, sizeof escaped - 1),
                   "import path contains a NUL byte");
  cr_expect_eq(compiled.prog->diags->head->loc.line, 1);
  expect_module_error("unit.kern", escaped,
                      "unit.kern:1:1: error: import path contains a NUL byte");
  /* A raw NUL in the file: the lexer reports it, and nothing is imported
   * (the truncated path "lib" is never opened). */
  static const char raw[] = "import \"lib\0.kern\";\nkernel void k(int[] a) { a[0] = 1; }\n";
  cr_expect_str_eq(first_error("unit.kern", raw, sizeof raw - 1), "embedded NUL byte in source");
  cr_expect_eq(compiled.prog->diags->nerrors, 1);
  cr_expect_eq(compiled.prog->modules, compiled.prog->root, "no module but the root");
  cr_expect_null(compiled.prog->root->next);
  static const char empty[] = "import \"\";\n";
  cr_expect_str_eq(first_error("unit.kern", empty, sizeof empty - 1), "import path is empty");
}

/* Relative paths start at the importing file's directory, ".." and absolute
 * paths are followed; only regular files are read. */
Test(check, import_paths_resolve_like_include, .fini = drop, .timeout = 60) {
  const char *t = getenv("TMPDIR");
  char root[512], path[700], src[1600];
  snprintf(root, sizeof root, "%s/kern-import-XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(root));
  snprintf(path, sizeof path, "%s/sub", root);
  cr_assert_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/lib.kern", root);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("int twice(int x) { return 2 * x; }\n", f);
  fclose(f);
  char main_name[700];
  snprintf(main_name, sizeof main_name, "%s/sub/main.kern", root);
  const char *use = "kernel void k(int[] a) { a[0] = twice(1); }\n";
  snprintf(src, sizeof src, "import \"../lib.kern\";\n%s", use);
  cr_expect_str_eq(first_error(main_name, src, strlen(src)), "", "'..' is followed");
  snprintf(src, sizeof src, "import \"%s\";\n%s", path, use);
  cr_expect_str_eq(first_error("elsewhere/main.kern", src, strlen(src)), "",
                   "an absolute path is used as is");
  snprintf(path, sizeof path, "%s/fifo.kern", root);
  cr_assert_eq(mkfifo(path, 0600), 0);
  const char *not_regular[] = {"/dev/null", "/dev/zero", root, path};
  for (int i = 0; i < 4; i++) {
    snprintf(src, sizeof src, "import \"%s\";\n%s", not_regular[i], use);
    const char *e = first_error("unit.kern", src, strlen(src));
    cr_expect(strstr(e, "is not a regular file"), "%s: %s", not_regular[i], e);
  }
  expect_module_error("unit.kern", src, "is not a regular file");
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  th_run(cmd, NULL);
}

/* A tiled kernel's block: its tile variables, then the most temporaries one
 * statement needs (a statement's are taken back when it ends), then each
 * tiled function it calls; every piece in whole 16-byte units. */
Test(check, tile_storage_counts_the_statement_that_needs_most, .fini = drop) {
  Program *p = compile_ok("tile<float, 10> twice(tile<float, 10> t) { return t * 2.0; }\n"
                          "kernel void k(float[] x, float[] s) {\n"
                          "  int i = tid();\n"
                          "  tile<float, 100> t = tile_load<100>(x, i * 100);\n"
                          "  s[i] = tile_sum(t);\n"
                          "  tile_store(x, i * 100, tile_scan_inclusive(t));\n"
                          "  s[i] = s[i] + tile_max(twice(tile_load<10>(x, 0)));\n"
                          "}\n");
  Decl *k = decl_named(p, "k"), *f = decl_named(p, "twice");
  /* t: 400 bytes; the scan: its result (400) and its levels (100 + 50 + 25 +
   * 13 + 7 + 4 + 2 + 1 = 202 elements, 808 bytes, 816 in whole units); the
   * sum: on a GPU the two nodes its tree keeps (16), on the CPU a copy (400);
   * the last statement: a load and the call's result (48 each), and the max's
   * scratch (16; the CPU: a copy, 48) */
  cr_expect_eq(k->tile_vars, 400);
  cr_expect_eq(k->tile_storage, 400 + 400 + 816);
  cr_expect_eq(f->tile_vars, 48); /* the copy of its parameter */
  cr_expect_eq(f->tile_storage, 48);
  cr_expect_eq(k->tile_total, k->tile_storage + f->tile_storage);
  cr_expect_eq(k->tile_temps, 400 + 400 + 816 + 3 * 48, "the CPU's count: every temporary");
}

/* A whole sum of a 1-D tile_load: a GPU reads the leaves from the array, so
 * the load takes no shared memory there and the tree's scratch is the nodes
 * of its rounds (4096 elements: 32, then 1); the CPU's stack holds both. */
Test(check, a_gpu_sum_of_a_load_takes_only_its_trees_nodes, .fini = drop) {
  Program *p = compile_ok("kernel void f(float[] x, float[] s) {\n"
                          "  int i = tid();\n"
                          "  s[i] = tile_sum(tile_load<4096>(x, i * 4096));\n"
                          "}\n"
                          "kernel void h(int16[] x, int16[] s) {\n"
                          "  int i = tid();\n"
                          "  s[i] = tile_max(tile_load<4096>(x, i * 4096));\n"
                          "}\n");
  Decl *f = decl_named(p, "f"), *h = decl_named(p, "h");
  /* float: 33 nodes, 132 bytes, 144 in whole units; int16 (read from
   * storage): the load (8192) and 33 nodes (66 bytes, 80) */
  cr_expect_eq(f->tile_storage, 144, "got %lld", (long long)f->tile_storage);
  cr_expect_eq(h->tile_storage, 8192 + 80, "got %lld", (long long)h->tile_storage);
  /* the CPU's stack: each load and its copy */
  cr_expect_eq(f->tile_temps, 2 * 16384, "got %lld", (long long)f->tile_temps);
  cr_expect_eq(h->tile_temps, 2 * 8192, "got %lld", (long long)h->tile_temps);
}
