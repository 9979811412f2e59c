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
 * out by hand.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "front.h"
#include "harness.h"

/* ---- expectations ----------------------------------------------------------- */

typedef struct Expect {
  DiagLevel level;
  char file[256];      /* "" = the fixture itself */
  int line, col;       /* col 0 = any */
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
  if (**p < '0' || **p > '9')
    return false;
  *out = (int)strtol(*p, (char **)p, 10);
  return true;
}

/* One "expect-LEVEL[@SPEC]: text" on source line `line`; false if malformed. */
static bool parse_expect(const char *p, const char *eol, int line, Expect *e) {
  memset(e, 0, sizeof *e);
  static const struct { const char *word; DiagLevel level; } kinds[] = {
      {"expect-error", DIAG_ERROR}, {"expect-warning", DIAG_WARNING}, {"expect-note", DIAG_NOTE}};
  size_t k = 0;
  while (strncmp(p, kinds[k].word, strlen(kinds[k].word)) != 0)
    if (++k == 3)
      return false;
  e->level = kinds[k].level;
  p += strlen(kinds[k].word);
  if (*p == ':') {   /* no @SPEC: this very line */
    e->line = line;
    goto text;
  }
  if (*p++ != '@')
    return false;
  if (*p != '+' && *p != '-' && (*p < '0' || *p > '9')) {
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (!colon || colon - p >= (long)sizeof e->file)
      return false;
    memcpy(e->file, p, (size_t)(colon - p));
    p = colon + 1;
  }
  int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0;
  p += sign != 0;
  if (!parse_int(&p, &e->line) || *p++ != ':')
    return false;
  if (sign)
    e->line = line + sign * e->line;
  const char *q = p;
  if (parse_int(&q, &e->col) && *q == ':')
    p = q + 1;
  else
    e->col = 0;
  p--;
text:
  if (*p++ != ':')
    return false;
  while (p < eol && *p == ' ')
    p++;
  const char *end = eol;
  while (end > p && (end[-1] == ' ' || end[-1] == '\r'))
    end--;
  if (end - p >= (long)sizeof e->text || end == p)
    return false;
  memcpy(e->text, p, (size_t)(end - p));
  return true;
}

/* Collects the expectations of a fixture's text; bad ones are test failures. */
static Expects read_expects(const char *name, const char *src) {
  Expects ex = {0};
  int line = 1;
  for (const char *p = src; *p; line++) {
    const char *eol = strchr(p, '\n');
    if (!eol)
      eol = p + strlen(p);
    for (const char *q = p; q < eol; q++) {
      if (strncmp(q, "expect-", 7) != 0)
        continue;
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
  if (!diag_file)
    return e->line == 0;
  if (!e->file[0])
    return strcmp(diag_file, fixture) == 0;
  size_t lf = strlen(diag_file), le = strlen(e->file);
  return lf >= le && strcmp(diag_file + lf - le, e->file) == 0 &&
         (lf == le || diag_file[lf - le - 1] == '/');
}

static Expect *match(Expects *ex, const Diag *d, const char *fixture) {
  for (int i = 0; i < ex->n; i++) {
    Expect *e = &ex->v[i];
    if (e->seen || e->level != d->level || !file_matches(e, d->loc.file, fixture))
      continue;
    if (d->loc.file && (e->line != d->loc.line || (e->col && e->col != d->loc.col)))
      continue;
    if (d->msg && strstr(d->msg, e->text))
      return e;
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
  bool *ids;           /* Var ids seen in fn */
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
  if (i != np)
    problem(w, n, "call has the wrong number of arguments");
}

static void walk_call(Walk *w, const Node *n) {
  switch (n->call_kind) {
  case CALL_FUNC: {
    if (!n->fn || !type_equal(n->ty, n->fn->ret)) {
      problem(w, n, "CALL_FUNC without its function or with another type");
      break;
    }
    Type *ps[64];
    for (int i = 0; i < n->fn->nparams && i < 64; i++)
      ps[i] = n->fn->params[i]->ty;
    walk_args_match(w, n, ps, n->fn->nparams);
    break;
  }
  case CALL_BUILTIN: {
    const Builtin *b = n->builtin >= 0 && n->builtin < builtin_count() ? builtin_get(n->builtin) : NULL;
    if (!b || strcmp(b->name, n->name) != 0 || !type_equal(b->ret, n->ty))
      problem(w, n, "CALL_BUILTIN names another builtin");
    else
      walk_args_match(w, n, b->params, b->nparams);
    break;
  }
  case CALL_SPECIAL:
    if (n->special == SP_NONE)
      problem(w, n, "CALL_SPECIAL without a special kind");
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
  if (n->call_kind != CALL_UNRESOLVED)
    problem(w, n, "scalar operator marked as a call");
  bool shift = n->op == TK_SHL || n->op == TK_SHR;
  if (r && !shift && !type_equal(l->ty, r->ty))
    problem(w, n, "binary operands of different types");
  bool cmp = n->op == TK_LT || n->op == TK_GT || n->op == TK_LE || n->op == TK_GE ||
             n->op == TK_EQEQ || n->op == TK_NE || n->op == TK_ANDAND || n->op == TK_OROR ||
             n->op == TK_BANG;
  if (!type_equal(n->ty, cmp ? &ty_bool : l->ty))
    problem(w, n, "operator result of the wrong type");
}

static void walk_expr(Walk *w, const Node *n) {
  if (!n)
    return;
  if (!concrete(n->ty)) {
    problem(w, n, "expression without a concrete type");
    return;
  }
  switch (n->kind) {
  case ND_INT: case ND_FLOAT: case ND_BOOL:
    if (n->kind == ND_FLOAT ? !type_is_float(n->ty) : n->kind == ND_INT ? !type_is_int(n->ty)
                                                                      : n->ty->kind != TY_BOOL)
      problem(w, n, "literal of the wrong kind for its type");
    break;
  case ND_IDENT:
    if (!n->var && !n->cdecl)
      problem(w, n, "identifier without its declaration");
    if (n->var && !type_equal(n->var->ty, n->ty))
      problem(w, n, "identifier typed differently from its variable");
    break;
  case ND_UNARY: case ND_BINARY: walk_operator(w, n); break;
  case ND_CALL: walk_call(w, n); break;
  case ND_CONV:
    if (!n->lhs || type_equal(n->lhs->ty, n->ty))
      problem(w, n, "ND_CONV that converts nothing");
    break;
  case ND_COND:
    if (!type_equal(n->then->ty, n->ty) || !type_equal(n->els->ty, n->ty) ||
        n->cond->ty->kind != TY_BOOL)
      problem(w, n, "?: with mismatched types");
    break;
  case ND_ADDR:
    if (n->ty->kind != TY_PTR)
      problem(w, n, "& without a pointer type");
    break;
  case ND_INDEX:
    for (const Node *a = n->args; a; a = a->next)
      if (!type_is_int(a->ty))
        problem(w, a, "index is not an integer");
    break;
  default: break;
  }
  walk_expr(w, n->lhs);
  walk_expr(w, n->rhs);
  walk_expr(w, n->cond);
  walk_expr(w, n->then);
  walk_expr(w, n->els);
  for (const Node *a = n->args; a; a = a->next)
    walk_expr(w, a);
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
    case ND_INCDEC: case ND_EXPR_STMT: walk_expr(w, n->lhs); break;
    case ND_RETURN:
      walk_expr(w, n->lhs);
      if (n->lhs && !type_equal(n->lhs->ty, w->fn->ret))
        problem(w, n, "return value not converted to the return type");
      break;
    case ND_BLOCK: walk_stmt(w, n->body); break;
    case ND_IF: case ND_WHILE: case ND_DO: case ND_FOR:
      walk_expr(w, n->cond);
      if (n->cond && n->cond->ty->kind != TY_BOOL)
        problem(w, n, "condition is not bool");
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
          if (!parts[i])
            continue;
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
      for (int j = 0; j < ds[i]->nparams; j++)
        walk_var(&w, ds[i]->params[j], ds[i]->body);
      walk_stmt(&w, ds[i]->body);
      free(w.ids);
      if (k == 1 && !ds[i]->used)
        cr_expect(0, "%s: kernel '%s' not marked used", fixture, ds[i]->name);
    }
  }
  for (int i = 0; i < p->nconsts; i++) {
    const Node *v = p->consts[i]->init;
    if (!v || !v->is_const || !concrete(v->ty) || (v->kind != ND_INT && v->kind != ND_FLOAT && v->kind != ND_BOOL))
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
        for (int j = 0; j < i; j++)
          before |= p->structs[j] == ft->sdecl;
        if (!before)
          cr_expect(0, "%s: struct '%s' listed before '%s', which it contains", fixture,
                    s->name, ft->sdecl->name);
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
    if (!g->loc.file || strcmp(g->loc.file, path) == 0)
      continue;
    bool seen = false;
    for (int i = 0; i < nloaded; i++)
      seen |= strcmp(loaded[i], g->loc.file) == 0;
    if (seen || nloaded == 64)
      continue;
    loaded[nloaded++] = g->loc.file;
    char *other = th_read_file(g->loc.file, NULL);
    Expects more = other ? read_expects(g->loc.file, other) : (Expects){0};
    for (int i = 0; i < more.n; i++) {
      if (more.v[i].file[0])
        continue;
      snprintf(more.v[i].file, sizeof more.v[i].file, "%s", g->loc.file);
      if (ex.n == ex.cap)
        ex.v = realloc(ex.v, (size_t)(ex.cap = ex.cap ? 2 * ex.cap : 16) * sizeof *ex.v);
      ex.v[ex.n++] = more.v[i];
    }
    free(more.v);
    free(other);
  }
  if (!ok)
    cr_expect(ex.n > 0, "%s: a bad fixture without expectations", name);
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
                level_name(ex.v[i].level), ex.v[i].file, ex.v[i].file[0] ? " " : "",
                ex.v[i].line, ex.v[i].col ? " (with its column)" : "", ex.v[i].text);
  if (ok && r.ok)
    walk_program(name, r.prog);
  free(ex.v);
  free(src);
  front_free(r.prog);
}

typedef struct FixturePath {
  char path[1024];
} FixturePath;

static void free_fixtures(struct criterion_test_params *crp) {
  cr_free(crp->params);
}

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

ParameterizedTestParameters(fixture, ok) {
  return fixtures("ok");
}

ParameterizedTest(FixturePath *f, fixture, ok) {
  run_fixture(f->path, true);
}

ParameterizedTestParameters(fixture, bad) {
  return fixtures("bad");
}

ParameterizedTest(FixturePath *f, fixture, bad) {
  run_fixture(f->path, false);
}

/* The suites above must not pass by finding nothing. */
Test(fixture, counts) {
  char dir[1024], **names;
  snprintf(dir, sizeof dir, "%s/kern/ok", KERN_TESTS_DIR);
  int nok = th_list(dir, ".kern", &names);
  for (int i = 0; i < nok; i++)
    free(names[i]);
  free(names);
  snprintf(dir, sizeof dir, "%s/kern/bad", KERN_TESTS_DIR);
  int nbad = th_list(dir, ".kern", &names);
  for (int i = 0; i < nbad; i++)
    free(names[i]);
  free(names);
  cr_expect_geq(nok, 20, "only %d ok fixtures", nok);
  cr_expect_geq(nbad, 45, "only %d bad fixtures", nbad);
}
