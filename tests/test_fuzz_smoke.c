/* test_fuzz_smoke.c: a deterministic mutation smoke test of the front end and
 * the C emitter, and the source items (1-9) of the robustness checklist with
 * the exact diagnostics each must produce.
 *
 * Mutations stand in for the libFuzzer targets (tests/fuzz/, `make fuzz`) on
 * every build, gcc included: each fixture of tests/kern and examples/ gets 200
 * seeded mutants (bit flips, troublesome bytes, deleted ranges, duplicated and
 * deleted lines, tokens of the same file spliced in or swapped) and one
 * truncation at every 7th byte. Each goes through front_compile and must not
 * crash, must give a reason when it fails, and must point its diagnostics at
 * the right line and column of its own text. A mutant that checks is emitted
 * for the CPU and CUDA, and (150 compiles in all, spread over the fixtures,
 * identical outputs compiled once) its C goes through `cc -fsyntax-only`: a
 * checked program whose C does not compile is a bug in the checker or the
 * emitter. A failure prints the mutant C-escaped, ready to paste into a
 * fixture; a crash prints it from the signal handler before dying.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"

enum { MUTANTS_PER_FIXTURE = 200, TRUNCATE_STEP = 7, PRINT_MAX = 3000 };

/* ---- small tools -------------------------------------------------------------- */

typedef struct Rng {
  uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

static size_t rng_below(Rng *r, size_t n) { return n ? (size_t)(rng_next(r) % n) : 0; }

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
  return h;
}

/* A growable byte string, always NUL-terminated (the lexer wants that). */
typedef struct Text {
  char *s;
  size_t len, cap;
} Text;

static void text_put(Text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->s = realloc(t->s, t->cap);
    cr_assert(t->s, "out of memory");
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = 0;
}

/* The bytes as a C string literal body, cut at PRINT_MAX. malloc'd. */
static char *c_escape(const char *s, size_t n) {
  size_t m = n > PRINT_MAX ? PRINT_MAX : n;
  char *out = malloc(m * 4 + 32), *o = out;
  for (size_t i = 0; i < m; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n')
      o += sprintf(o, "\\n\n");
    else if (c == '\\' || c == '"')
      o += sprintf(o, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      o += sprintf(o, "\\x%02x", c);
    else
      *o++ = (char)c;
  }
  sprintf(o, "%s", n > m ? "...(cut)" : "");
  return out;
}

/* ---- reporting a crash ----------------------------------------------------------- */

/* What is being compiled now, for the signal handler. */
static const char *volatile crash_fixture;
static const char *volatile crash_kind;
static const Text *volatile crash_text;
static struct sigaction old_actions[NSIG];

static void say(const char *s) {
  if (write(2, s, strlen(s)) < 0) return;
}

static void on_crash(int sig, siginfo_t *info, void *uctx) {
  if (crash_fixture && crash_text) {
    say("\n*** test_fuzz_smoke: crashed on a mutant of ");
    say(crash_fixture);
    say(" (");
    say(crash_kind ? crash_kind : "?");
    say("), raw bytes follow:\n");
    size_t n = crash_text->len > PRINT_MAX ? PRINT_MAX : crash_text->len;
    if (write(2, crash_text->s, n) < 0) return;
    say("\n*** end of mutant\n");
  }
  struct sigaction *old = &old_actions[sig];
  /* Chain to a sanitizer's handler, which prints the stack. */
  if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction)
    old->sa_sigaction(sig, info, uctx);
  else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
    old->sa_handler(sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_crash_report(void) {
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction(sigs[i], &sa, &old_actions[sigs[i]]);
}

/* ---- fixtures ------------------------------------------------------------------- */

typedef struct Span {
  size_t off, len;
} Span;

typedef struct Fixture {
  char *path; /* real path: imports resolve next to it */
  char *src;
  size_t len;
  Span *toks; /* the original's tokens */
  int ntoks;
  Span *lines; /* with their newline */
  int nlines;
} Fixture;

static void find_tokens(Fixture *f) {
  Arena *a = arena_new();
  Diags d;
  diags_init(&d);
  TokenList tl = lex_source(a, &d, f->path, f->src, f->len);
  f->toks = malloc(sizeof *f->toks * (size_t)(tl.n + 1));
  f->ntoks = 0;
  for (int i = 0; i < tl.n; i++)
    if (tl.toks[i].kind != TK_EOF)
      f->toks[f->ntoks++] = (Span){tl.toks[i].loc.offset, tl.toks[i].loc.len};
  diags_free(&d);
  arena_free(a);
}

static void find_lines(Fixture *f) {
  f->lines = malloc(sizeof *f->lines * (f->len + 1));
  f->nlines = 0;
  for (size_t start = 0, i = 0; i <= f->len; i++)
    if (i == f->len || f->src[i] == '\n') {
      size_t end = i < f->len ? i + 1 : i;
      if (end > start) f->lines[f->nlines++] = (Span){start, end - start};
      start = end;
    }
}

static bool fixture_load(Fixture *f, const char *path) {
  memset(f, 0, sizeof *f);
  f->path = strdup(path);
  f->src = th_read_file(path, &f->len);
  if (!f->src) return false;
  find_tokens(f);
  find_lines(f);
  return true;
}

static void fixture_free(Fixture *f) {
  free(f->path);
  free(f->src);
  free(f->toks);
  free(f->lines);
}

/* ---- mutations ------------------------------------------------------------------- */

typedef enum {
  M_FLIP,
  M_BYTE,
  M_DELETE,
  M_DUP_LINE,
  M_DEL_LINE,
  M_SPLICE,
  M_SWAP,
  M__COUNT
} MutKind;

static const char *const mut_names[] = {"bit flip",        "byte set",     "range deleted",
                                        "line duplicated", "line deleted", "token spliced",
                                        "token replaced"};

/* Bytes that start or end constructs, or are not text at all. */
static const char troublemakers[] = {0,   '\xff', '\x80', '\xc3', '{', '}', '(',  ')',
                                     '[', ']',    '"',    '/',    '*', ';', '\n', ',',
                                     '.', '9',    'e',    '\\',   '_', 'x'};

static void put_range(Text *t, const Fixture *f, size_t from, size_t to) {
  text_put(t, f->src + from, to - from);
}

static void mutate_bytes(const Fixture *f, Rng *r, MutKind k, Text *t) {
  if (f->len == 0) {
    text_put(t, &troublemakers[rng_below(r, sizeof troublemakers)], 1);
    return;
  }
  size_t pos = rng_below(r, f->len);
  if (k == M_DELETE) {
    size_t end = pos + 1 + rng_below(r, 16);
    put_range(t, f, 0, pos);
    put_range(t, f, end < f->len ? end : f->len, f->len);
    return;
  }
  put_range(t, f, 0, f->len);
  if (k == M_FLIP)
    t->s[pos] ^= (char)(1u << rng_below(r, 8));
  else
    t->s[pos] = troublemakers[rng_below(r, sizeof troublemakers)];
}

static void mutate_lines(const Fixture *f, Rng *r, MutKind k, Text *t) {
  Span l = f->lines[rng_below(r, (size_t)f->nlines)];
  put_range(t, f, 0, l.off + l.len);
  if (k == M_DUP_LINE)
    put_range(t, f, l.off, l.off + l.len);
  else
    t->len = l.off, t->s[l.off] = 0;
  put_range(t, f, l.off + l.len, f->len);
}

/* Another token of the same file inserted at, or put in place of, a token. */
static void mutate_tokens(const Fixture *f, Rng *r, MutKind k, Text *t) {
  Span from = f->toks[rng_below(r, (size_t)f->ntoks)];
  Span at = f->toks[rng_below(r, (size_t)f->ntoks)];
  bool pad = rng_below(r, 2);
  put_range(t, f, 0, at.off);
  if (pad) text_put(t, " ", 1);
  put_range(t, f, from.off, from.off + from.len);
  if (pad) text_put(t, " ", 1);
  put_range(t, f, k == M_SWAP ? at.off + at.len : at.off, f->len);
}

static void mutate(const Fixture *f, Rng *r, MutKind k, Text *t) {
  t->len = 0;
  text_put(t, "", 0);
  if ((k == M_SPLICE || k == M_SWAP) && f->ntoks)
    mutate_tokens(f, r, k, t);
  else if ((k == M_DUP_LINE || k == M_DEL_LINE) && f->nlines)
    mutate_lines(f, r, k, t);
  else
    mutate_bytes(f, r, k, t);
}

/* ---- checking one mutant ------------------------------------------------------------- */

typedef struct Run {
  int budget;      /* C compiles left for this group */
  int per_fixture; /* at most this many per fixture */
  int fixture_compiles;
  uint64_t seen[512]; /* hashes of C already compiled */
  int nseen;
  int mutants, checked_ok, compiles, failures;
} Run;

static void report(Run *run, const Fixture *f, const char *kind, const Text *t, const char *why,
                   const char *detail) {
  char *esc = c_escape(t->s, t->len);
  cr_log_error("mutant of %s (%s): %s\n%s%s--- mutant (C-escaped) ---\n\"%s\"\n--- end ---",
               f->path, kind, why, detail ? detail : "", detail ? "\n" : "", esc);
  free(esc);
  run->failures++;
}

static bool path_safe(const Decl *imp) {
  static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-";
  const char *s = imp->path;
  return s && strlen(s) == imp->path_len && s[0] != '/' && !strstr(s, "..") &&
         strspn(s, plain) == imp->path_len;
}

/* A mutated import must not reach /dev/zero or a FIFO: only plain relative
 * paths below the fixture's directory are compiled. */
static bool imports_safe(const Text *t) {
  Arena *a = arena_new();
  Diags d;
  diags_init(&d);
  Module *m = parse_module(a, &d, "m.kern", t->s, t->len);
  bool ok = m != NULL;
  for (Decl *dc = m ? m->decls : NULL; dc; dc = dc->next)
    if (dc->kind == DECL_IMPORT) ok &= path_safe(dc);
  diags_free(&d);
  arena_free(a);
  return ok;
}

/* NULL if the diagnostic points where it says it does, else what is wrong. */
static const char *loc_problem(const Program *p, SrcLoc loc) {
  const Module *m = p->modules;
  while (m && m->src != loc.src) m = m->next;
  if (!loc.src || !m) return NULL;
  if (loc.offset > m->src_len || loc.offset + (size_t)loc.len > m->src_len + 1)
    return "a diagnostic points past the end of its file";
  int line = 1;
  size_t bol = 0;
  for (size_t i = 0; i < loc.offset; i++)
    if (m->src[i] == '\n') line++, bol = i + 1;
  if (loc.line != line || loc.col != (int)(loc.offset - bol) + 1)
    return "a diagnostic's line:col does not match its offset";
  return NULL;
}

static const char *front_problem(FrontResult r) {
  if (!r.prog || !r.prog->root) return "front_compile lost the program (not out of memory here)";
  if (r.ok != (diag_errors(r.prog->diags) == 0)) return "ok disagrees with the error count";
  char *text = diag_render(r.prog->diags, false);
  bool said = text && (r.ok || strstr(text, "error: "));
  free(text);
  if (!said) return "a failed compilation rendered no error";
  for (const Diag *g = r.prog->diags->head; g; g = g->next) {
    const char *why = loc_problem(r.prog, g->loc);
    if (why) return why;
  }
  return NULL;
}

/* Writes the C to a temporary file and asks cc whether it is valid C11. */
static bool c_compiles(const char *c, char **log) {
  const char *tmp = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/kern_smoke_XXXXXX.c", tmp && tmp[0] ? tmp : "/tmp");
  int fd = mkstemps(path, 2);
  cr_assert_geq(fd, 0, "cannot create %s", path);
  size_t n = strlen(c);
  bool wrote = write(fd, c, n) == (ssize_t)n;
  close(fd);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "cc -std=c11 -fsyntax-only -w '%s'", path);
  int rc = wrote ? th_run(cmd, log) : -1;
  unlink(path);
  return rc == 0;
}

static bool seen_before(Run *run, uint64_t h) {
  for (int i = 0; i < run->nseen; i++)
    if (run->seen[i] == h) return true;
  if (run->nseen < (int)(sizeof run->seen / sizeof run->seen[0])) run->seen[run->nseen++] = h;
  return false;
}

static void maybe_compile(Run *run, const Fixture *f, const char *kind, const Text *t,
                          const char *c) {
  if (run->budget <= 0 || run->fixture_compiles >= run->per_fixture ||
      seen_before(run, fnv1a(c, strlen(c))))
    return;
  run->budget--;
  run->fixture_compiles++;
  run->compiles++;
  char *log = NULL;
  if (!c_compiles(c, &log)) {
    char detail[2100];
    snprintf(detail, sizeof detail, "--- cc says ---\n%.2000s", log ? log : "(no output)");
    report(run, f, kind, t, "the checker accepted it but its C does not compile", detail);
  }
  free(log);
}

static void emit_and_compile(Run *run, const Fixture *f, const char *kind, const Text *t,
                             const Program *p) {
  EmitOptions o = {.debug = run->mutants % 2 == 1, .line_directives = true};
  char *c = emit_program(p, EMIT_C, &o);
  char *cuda = emit_program(p, EMIT_CUDA, &o);
  if (!c || !cuda)
    report(run, f, kind, t, "emit_program returned NULL for a checked program", NULL);
  else
    maybe_compile(run, f, kind, t, c);
  free(c);
  free(cuda);
}

static void try_mutant(Run *run, const Fixture *f, const char *kind, const Text *t) {
  if (!imports_safe(t)) return;
  crash_fixture = f->path;
  crash_kind = kind;
  crash_text = t;
  run->mutants++;
  FrontResult r = front_compile(f->path, t->s, t->len);
  const char *why = front_problem(r);
  if (why)
    report(run, f, kind, t, why, NULL);
  else if (r.ok) {
    run->checked_ok++;
    emit_and_compile(run, f, kind, t, r.prog);
  }
  front_free(r.prog);
  crash_text = NULL;
}

/* The emitted C of the fixture itself is no news: marked seen, not compiled. */
static void note_original(Run *run, const Fixture *f) {
  FrontResult r = front_compile(f->path, f->src, f->len);
  for (int debug = 0; r.ok && debug < 2; debug++) {
    EmitOptions o = {.debug = debug, .line_directives = true};
    char *c = emit_program(r.prog, EMIT_C, &o);
    if (c) seen_before(run, fnv1a(c, strlen(c)));
    free(c);
  }
  front_free(r.prog);
}

static void mutate_fixture(Run *run, const Fixture *f) {
  Rng rng = {fnv1a(f->path, strlen(f->path)) | 1};
  Text t = {0};
  char kind[64];
  run->fixture_compiles = 0;
  note_original(run, f);
  for (int i = 0; i < MUTANTS_PER_FIXTURE; i++) {
    MutKind k = (MutKind)rng_below(&rng, M__COUNT);
    mutate(f, &rng, k, &t);
    snprintf(kind, sizeof kind, "%s, mutant %d", mut_names[k], i);
    try_mutant(run, f, kind, &t);
  }
  for (size_t cut = 0; cut < f->len; cut += TRUNCATE_STEP) {
    t.len = 0;
    text_put(&t, f->src, cut);
    snprintf(kind, sizeof kind, "truncated to %zu bytes", cut);
    try_mutant(run, f, kind, &t);
  }
  free(t.s);
}

static int list_dir(const char *dir, char ***all, int n) {
  char **names;
  int k = th_list(dir, ".kern", &names);
  *all = realloc(*all, sizeof **all * (size_t)(n + k + 1));
  for (int i = 0; i < k; i++) (*all)[n + i] = names[i];
  free(names);
  return n + k;
}

/* Mutates every fixture of the directories; budget: C compiles allowed. */
static void run_group(const char *const *dirs, int ndirs, int budget) {
  install_crash_report();
  char **paths = NULL;
  int n = 0;
  for (int i = 0; i < ndirs; i++) n = list_dir(dirs[i], &paths, n);
  cr_assert_gt(n, 0, "no fixtures found in %s", dirs[0]);
  Run *run = calloc(1, sizeof *run);
  run->budget = budget;
  run->per_fixture = (budget + n - 1) / n;
  for (int i = 0; i < n; i++) {
    Fixture f;
    cr_assert(fixture_load(&f, paths[i]), "cannot read %s", paths[i]);
    mutate_fixture(run, &f);
    fixture_free(&f);
    free(paths[i]);
  }
  free(paths);
  cr_log_info("%d fixtures, %d mutants, %d checked ok, %d C compiles, %d failures", n, run->mutants,
              run->checked_ok, run->compiles, run->failures);
  cr_expect_geq(run->mutants, n * MUTANTS_PER_FIXTURE / 2, "too few mutants ran");
  cr_expect_eq(run->failures, 0, "%d mutants broke an invariant (see the log)", run->failures);
  free(run);
}

/* The compile check must be able to fail, or every "compiles" means nothing. */
Test(mutate, c_compile_check_can_fail) {
  char *log = NULL;
  cr_expect(c_compiles("int f(void) { return 0; }\n", &log), "cc is missing or broken: %s", log);
  free(log);
  log = NULL;
  cr_expect_not(c_compiles("int f(void) { return undeclared; }\n", &log));
  free(log);
}

Test(mutate, ok_fixtures, .timeout = 600) {
  const char *dirs[] = {KERN_TESTS_DIR "/kern/ok", KERN_TESTS_DIR "/kern/ok/lib"};
  run_group(dirs, 2, 60);
}

Test(mutate, run_fixtures, .timeout = 600) {
  const char *dirs[] = {KERN_TESTS_DIR "/kern/run"};
  run_group(dirs, 1, 40);
}

Test(mutate, examples, .timeout = 600) {
  const char *dirs[] = {KERN_SOURCE_DIR "/examples"};
  run_group(dirs, 1, 30);
}

Test(mutate, bad_fixtures, .timeout = 600) {
  const char *dirs[] = {KERN_TESTS_DIR "/kern/bad", KERN_TESTS_DIR "/kern/bad/lib"};
  run_group(dirs, 2, 20);
}

/* ---- the robustness checklist, source items ------------------------------------------ */

static FrontResult R;

static void drop(void) {
  front_free(R.prog);
  R.prog = NULL;
}

static void compile_n(const char *src, size_t len) {
  drop();
  R = front_compile("t.kern", src, len);
  cr_assert(R.prog, "out of memory");
}

static void compile(const char *src) { compile_n(src, strlen(src)); }

typedef struct Want {
  DiagLevel level;
  int line, col;
  const char *msg;
} Want;

#define E(l, c, m)                                                                                 \
  { DIAG_ERROR, l, c, m }
#define N(l, c, m)                                                                                 \
  { DIAG_NOTE, l, c, m }

/* Every diagnostic, notes included, exactly as listed, in order. */
static void expect_diags(const Want *w, int n) {
  const Diag *g = R.prog->diags->head;
  int i = 0;
  for (; g && i < n; g = g->next, i++) {
    cr_expect_eq(g->level, w[i].level, "diagnostic %d (%s): level", i, g->msg);
    cr_expect_str_eq(g->msg, w[i].msg, "diagnostic %d", i);
    cr_expect_eq(g->loc.line, w[i].line, "diagnostic %d (%s): line %d, expected %d", i, g->msg,
                 g->loc.line, w[i].line);
    cr_expect_eq(g->loc.col, w[i].col, "diagnostic %d (%s): col %d, expected %d", i, g->msg,
                 g->loc.col, w[i].col);
  }
  cr_expect_null(g, "unexpected extra diagnostic: %d:%d: %s", g ? g->loc.line : 0,
                 g ? g->loc.col : 0, g ? g->msg : "");
  cr_expect_eq(i, n, "only %d of %d diagnostics reported", i, n);
  cr_expect_not(R.ok);
}

#define EXPECT(...)                                                                                \
  do {                                                                                             \
    static const Want w_[] = {__VA_ARGS__};                                                        \
    expect_diags(w_, (int)(sizeof w_ / sizeof w_[0]));                                             \
  } while (0)

/* The library's view of the same source: NULL, KERN_ERR_COMPILE and a message
 * holding the rendered first error. The source goes through a file so that
 * NUL bytes survive. */
static void expect_module_error(const char *src, size_t len, const char *where_and_what) {
  const char *tmp = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/kern_robust_XXXXXX.kern", tmp && tmp[0] ? tmp : "/tmp");
  int fd = mkstemps(path, 5);
  cr_assert_geq(fd, 0);
  cr_assert_eq(write(fd, src, len), (ssize_t)len);
  close(fd);
  kern_clear_error();
  kern_module *m = kern_module_load(path);
  cr_expect_null(m);
  cr_expect_eq(kern_last_status(), KERN_ERR_COMPILE, "%s", kern_status_name(kern_last_status()));
  /* ":L:C: error: ..." follows the file name; anything else is looked for alone. */
  char want[600];
  snprintf(want, sizeof want, "%s%s", where_and_what[0] == ':' ? path : "", where_and_what);
  cr_expect(strstr(kern_last_error(), want), "message lacks '%s':\n%s", want, kern_last_error());
  kern_module_free(m);
  unlink(path);
  /* The library is still usable afterwards. */
  m = kern_module_from_source("fine.kern", "kernel void k(int[] a) { a[0] = 1; }");
  cr_expect_not_null(m, "%s", kern_last_error());
  kern_module_free(m);
}

TestSuite(robust, .fini = drop);

/* 1. */
Test(robust, empty_file) {
  static const char *const empties[] = {"", "   \n\t\n", "// nothing\n", "/* nothing */", "\n\n\n"};
  for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
    compile(empties[i]);
    cr_expect(R.ok, "'%s'", empties[i]);
    cr_expect_null(R.prog->diags->head, "'%s'", empties[i]);
    cr_expect_eq(R.prog->nkernels, 0);
  }
  char *c = emit_program(R.prog, EMIT_C, &(EmitOptions){0});
  cr_assert_not_null(c);
  char *log = NULL;
  cr_expect(c_compiles(c, &log), "the empty program's C: %s", log);
  free(log);
  free(c);
  kern_module *m = kern_module_from_source("empty.kern", "");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_null(kern_module_kernel(m, "k"));
  cr_expect_eq(kern_last_status(), KERN_ERR_NOT_FOUND);
  cr_expect_str_eq(kern_last_error(), "module 'empty.kern' has no kernel 'k' (it has no kernels)");
  kern_module_free(m);
}

/* 2. */
Test(robust, nul_bytes) {
  static const char src[] = "kernel void k(int[] a) {\n  a[0] = 1;\0\0\0\0 a[1] = 2;\n}\n";
  compile_n(src, sizeof src - 1);
  EXPECT(E(2, 12, "embedded NUL byte in source"));
  cr_expect_eq(R.prog->diags->head->loc.len, 4, "the run of NULs is one error");
  static const char in_string[] = "kernel void k(int[] a) {\n  printf(\"a\0b\");\n}\n";
  compile_n(in_string, sizeof in_string - 1);
  EXPECT(E(2, 12, "embedded NUL byte in source"));
  static const char only[] = "\0";
  compile_n(only, 1);
  EXPECT(E(1, 1, "embedded NUL byte in source"));
  expect_module_error(src, sizeof src - 1, ":2:12: error: embedded NUL byte in source");
}

Test(robust, invalid_utf8) {
  compile("kernel void k(int[] a) {\n  a[0] = 1; \xff\xfe\n}\n");
  EXPECT(E(2, 13, "invalid UTF-8"));
  /* Overlong '/', a surrogate, a sequence cut short: each one error. */
  compile("kernel void k(int[] a) { a[0] = 1; }\n\xc0\xaf \xed\xa0\x80 \xe2\x82");
  EXPECT(E(2, 1, "invalid UTF-8"), E(2, 4, "invalid UTF-8"), E(2, 8, "invalid UTF-8"));
  compile("// caf\xe9\nkernel void k(int[] a) {\n  printf(\"\xff\");\n}\n");
  EXPECT(E(1, 7, "invalid UTF-8 in comment"), E(3, 11, "invalid UTF-8 in string literal"));
  static const char src[] = "kernel void k(int[] a) { a[0] = 1; } \xff";
  expect_module_error(src, sizeof src - 1, ":1:38: error: invalid UTF-8");
}

/* 3. */
Test(robust, unterminated_comment_or_string_at_eof) {
  compile("kernel void k(int[] a) {\n  a[0] = 1;\n}\n/* a comment\n that never ends");
  EXPECT(E(4, 1, "unterminated comment"));
  compile("kernel void k(int[] a) {\n  printf(\"abc");
  EXPECT(E(2, 10, "unterminated string literal"));
  compile("kernel void k(int[] a) {\n  printf(\"%d\\");
  EXPECT(E(2, 10, "unterminated string literal"));
  static const char src[] = "kernel void k(int[] a) { a[0] = 1; }\n/*";
  expect_module_error(src, sizeof src - 1, ":2:1: error: unterminated comment");
}

/* 4. */
Test(robust, truncated_mid_token) {
  compile("kernel void k(int[] a) {\n  a[0] = 0x");
  EXPECT(E(2, 10, "malformed number literal"));
  compile("kernel void k(int[] a) {\n  a[0] = 1.5e+");
  EXPECT(E(2, 10, "malformed number literal"));
  compile("kernel void k(int[] a) {\n  a[0] = 1;\n}\nkern");
  EXPECT(E(4, 5, "expected a function name, found end of file"));
  compile("kernel void k(int[] a) {\n  a[0] = a[0] +");
  EXPECT(E(2, 16, "expected an expression, found end of file"));
  compile("kernel void k(int[] a) {\n  a[0] = 1;");
  EXPECT(E(2, 12, "expected '}' to close the block, found end of file"),
         N(1, 24, "the block opened here"));
}

/* Every prefix of a real program: no crash, and never more than two errors. */
Test(robust, every_prefix_of_a_program) {
  size_t len;
  char *src = th_read_file(KERN_TESTS_DIR "/kern/ok/spec_example.kern", &len);
  cr_assert(src);
  int worst = 0;
  size_t worst_at = 0;
  for (size_t n = 0; n <= len; n++) {
    char saved = src[n];
    src[n] = 0;
    compile_n(src, n);
    if (diag_errors(R.prog->diags) > worst) worst = diag_errors(R.prog->diags), worst_at = n;
    src[n] = saved;
  }
  cr_expect_leq(worst, 2, "%d errors for the first %zu bytes", worst, worst_at);
  free(src);
}

/* 5. */
Test(robust, literal_overflow_and_malformed_float) {
  compile("kernel void k(uint64[] a) {\n  a[0] = 18446744073709551616;\n"
          "  a[1] = 0x1FFFFFFFFFFFFFFFF;\n}\n");
  EXPECT(E(2, 10, "integer literal does not fit in 64 bits"),
         E(3, 10, "integer literal does not fit in 64 bits"));
  compile("kernel void k(float[] a) {\n  a[0] = 1.2.3;\n  a[1] = 1e+;\n  a[2] = 1e999;\n}\n");
  EXPECT(E(2, 10, "malformed number literal"), E(3, 10, "malformed number literal"),
         E(4, 10, "floating-point literal is out of range"));
  compile(
      "kernel void k(uint64[] a, double[] d) { a[0] = 18446744073709551615ul; d[0] = 1.5e308; }");
  cr_expect(R.ok, "the largest literals are fine");
  static const char src[] = "kernel void k(float[] a) {\n  a[0] = 1.2.3;\n}\n";
  expect_module_error(src, sizeof src - 1, ":2:10: error: malformed number literal");
}

static char *repeat(const char *head, const char *unit, size_t n, const char *mid,
                    const char *unit2, const char *tail) {
  size_t lu = strlen(unit), lu2 = strlen(unit2);
  char *s = malloc(strlen(head) + n * (lu + lu2) + strlen(mid) + strlen(tail) + 1), *p = s;
  p += sprintf(p, "%s", head);
  for (size_t i = 0; i < n; i++, p += lu) memcpy(p, unit, lu);
  p += sprintf(p, "%s", mid);
  for (size_t i = 0; i < n; i++, p += lu2) memcpy(p, unit2, lu2);
  sprintf(p, "%s", tail);
  return s;
}

/* 6. Statements and expressions count against one limit of 256 levels: the
 * statement and the right-hand side take two, so parenthesis 255 is too many. */
Test(robust, hundred_thousand_nested_parentheses) {
  char *src = repeat("kernel void k(int[] a) {\n  a[0] = ", "(", 100000, "1", ")", ";\n}\n");
  compile(src);
  EXPECT(E(2, 10 + 255, "nesting is too deep (limit 256)"));
  expect_module_error(src, strlen(src), ":2:265: error: nesting is too deep (limit 256)");
  free(src);
}

/* 7. */
Test(robust, one_megabyte_identifier) {
  size_t n = 1u << 20;
  char *src = malloc(n + 64);
  strcpy(src, "kernel void k(int[] a) {\n  int ");
  size_t at = strlen(src);
  memset(src + at, 'x', n);
  strcpy(src + at + n, " = 1;\n}\n");
  compile(src);
  EXPECT(E(2, 7, "identifier is too long (1048576 bytes; the limit is 1024)"));
  cr_expect_lt(R.prog->arena->total, (size_t)64 << 20, "arena holds %zu bytes",
               R.prog->arena->total);
  char *text = diag_render(R.prog->diags, false);
  cr_assert(text);
  cr_expect_lt(strlen(text), 4096, "the rendered message is %zu bytes", strlen(text));
  free(text);
  free(src);
}

/* 8. */
Test(robust, unbalanced_braces) {
  compile("kernel void k(int[] a) {\n  if (a[0] > 0) {\n    a[0] = 1;\n  }\n  }\n  a[1] = 2;\n}\n"
          "\nkernel void j(int[] a) {\n  a[0] = 3;\n");
  EXPECT(E(6, 3,
           "expected a declaration (import, const, struct, enum, function or kernel), found a "
           "statement; does an extra '}' above end the function early?"),
         E(11, 1, "expected '}' to close the block, found end of file"),
         N(9, 24, "the block opened here"));
  compile("kernel void k(int[] a) {\n  a[0] = 1;\n\nkernel void j(int[] a) {\n  a[0] = 3;\n}\n");
  EXPECT(E(4, 1, "expected '}' to close the block, found keyword 'kernel'"),
         N(1, 24, "the block opened here"));
  compile("kernel void k(int[] a) { { { { { a[0] = 1; }");
  EXPECT(E(1, 45, "expected '}' to close the block, found end of file"),
         N(1, 30, "the block opened here"));
}

Test(robust, unbalanced_braces_cascade_is_bounded) {
  char *src = repeat("", "}", 100000, "\nkernel void k(int[] a) { a[0] = 1; }\n", "", "");
  compile(src);
  EXPECT(E(1, 1,
           "expected a declaration (import, const, struct, enum, function or kernel), found '}'"));
  cr_expect_eq(R.prog->nkernels, 0, "check does not run after syntax errors");
  free(src);
  src = repeat("kernel void k(int[] a) {\n", "  }\n  a[0] = 1;\n  {\n", 1000, "}\n", "", "");
  compile(src);
  cr_expect_eq(diag_errors(R.prog->diags), 1, "1000 stray blocks gave %d errors",
               diag_errors(R.prog->diags));
  free(src);
  /* Ten functions with an extra '}' each are ten mistakes: one error each. */
  src = repeat("", "kernel void k(int[] a) {\n  if (a[0] > 0) { a[0] = 1; } }\n  a[1] = 2;\n}\n",
               10, "", "", "");
  compile(src);
  cr_expect_eq(diag_errors(R.prog->diags), 10);
  free(src);
}

/* 9. */
Test(robust, duplicate_names) {
  compile("const int N = 1;\nconst float N = 2.0;\nkernel void k(int[] a) { }\n"
          "kernel void k(int[] b) { }\n");
  EXPECT(E(2, 13, "redefinition of 'N'"), N(1, 11, "'N' was first declared here"),
         E(4, 13, "redefinition of 'k'"), N(3, 13, "'k' was first declared here"));
  compile("struct S { int a; int a; };\nkernel void k(int[] a, int a) {\n  int x = 1;\n"
          "  int x = 2;\n}\n");
  EXPECT(E(1, 23, "duplicate field 'a' in struct 'S'"), N(1, 16, "'a' was first declared here"),
         E(2, 28, "redeclaration of 'a'"), N(2, 21, "'a' was declared here"),
         E(4, 7, "redeclaration of 'x'"), N(3, 7, "'x' was declared here"));
}

Test(robust, keyword_as_identifier) {
  compile("kernel void for(int[] a) { a[0] = 1; }\nkernel void k(int[] return) { }\n"
          "struct kernel { int if; };\nkernel void j(int[] a) {\n  int while = 3;\n"
          "  int float = 1;\n  a[0] = 1\n}\n");
  EXPECT(E(1, 13, "expected a kernel name, found keyword 'for'"),
         E(2, 21, "expected a parameter name, found keyword 'return'"),
         E(3, 8, "expected a struct name, found keyword 'kernel'"),
         E(3, 21, "expected a field name, found keyword 'if'"),
         E(5, 7, "expected a variable name, found keyword 'while'"),
         E(6, 7, "expected a variable name, found type name 'float'"),
         /* the parse reads on: a later, unrelated mistake is still found */
         E(7, 11, "expected ';' after the statement, found '}'"));
}

/* ---- scale ------------------------------------------------------------------------------ */

static double seconds_since(struct timespec t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* n kernels, each with a comment block as real files have; malloc'd. */
static char *many_kernels(int n, size_t *len) {
  static const char doc[] =
      "// Scales x by a and adds a per-kernel constant: one of many generated\n"
      "// kernels. The comment is here because real files carry prose too, and\n"
      "// a file of ten megabytes is mostly text, not tokens.\n";
  size_t cap = (size_t)n * 400 + 1;
  char *s = malloc(cap);
  size_t at = 0;
  for (int i = 0; i < n; i++)
    at += (size_t)snprintf(s + at, cap - at,
                           "%skernel void k%d(float[] x, float a) {\n  int i = tid();\n"
                           "  if (i < len(x)) { x[i] = a * x[i] + %d.0f; }\n}\n",
                           doc, i, i % 1000);
  *len = at;
  return s;
}

Test(scale, ten_megabytes_check_in_bounded_time, .timeout = 600) {
  size_t len;
  int n = 36000;
  char *src = many_kernels(n, &len);
  cr_assert_geq(len, (size_t)10 << 20, "only %zu bytes", len);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  compile_n(src, len);
  double secs = seconds_since(t0);
  cr_expect(R.ok);
  cr_expect_eq(R.prog->nkernels, n);
  cr_expect_lt(secs, 60.0, "checking %zu bytes took %.1f s", len, secs);
  cr_log_info("%zu bytes, %d kernels: checked in %.2f s, arena %zu MB", len, n, secs,
              R.prog->arena->total >> 20);
  free(src);
}

Test(scale, ten_thousand_kernels_check_and_emit, .timeout = 600) {
  size_t len;
  char *src = many_kernels(10000, &len);
  compile_n(src, len);
  cr_assert(R.ok);
  cr_expect_eq(R.prog->nkernels, 10000);
  EmitOptions o = {.line_directives = true};
  char *c = emit_program(R.prog, EMIT_C, &o);
  char *cuda = emit_program(R.prog, EMIT_CUDA, &o);
  cr_assert(c && cuda);
  cr_expect(strstr(c, "kk_k0_range") && strstr(c, "kk_k9999_range"));
  cr_expect(strstr(cuda, "kk_k0_cuda") && strstr(cuda, "kk_k9999_cuda"));
  free(c);
  free(cuda);
  kern_module *m = kern_module_from_source("many.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_not_null(kern_module_kernel(m, "k9999"));
  cr_expect_null(kern_module_kernel(m, "k10000"));
  cr_expect_eq(kern_last_status(), KERN_ERR_NOT_FOUND);
  kern_module_free(m);
  free(src);
}

Test(scale, ten_thousand_deep_nesting) {
  /* The body is not a statement: nested block 257 is the first too many. */
  char *src = repeat("kernel void k(int[] a) ", "{", 10000, "", "}", "\n");
  compile(src);
  EXPECT(E(1, 24 + 257, "nesting is too deep (limit 256)"));
  free(src);
  src = repeat("kernel void k(int[] a) {\n", "if (a[0] > 0) { ", 10000, "a[0] = 1;", " }", "\n}\n");
  compile(src);
  cr_expect_eq(diag_errors(R.prog->diags), 1);
  cr_expect_str_eq(R.prog->diags->head->msg, "nesting is too deep (limit 256)");
  expect_module_error(src, strlen(src), "error: nesting is too deep (limit 256)");
  free(src);
}
