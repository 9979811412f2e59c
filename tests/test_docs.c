/* test_docs.c: the user documentation stays true.
 *
 * Requires: docs/language.md and docs/runtime.md (under KERN_SOURCE_DIR), the
 * front end and runtime of kern_static, the C compiler libkern was built with
 * (KERN_TEST_CC, else `cc` on PATH) and its -fsanitize= value when it was
 * sanitized (KERN_TEST_SANITIZE), and the static library next to this test's
 * build directory (<directory of the test binary>/../libkern.a).
 * Produces: checks, each naming the document line of what broke:
 *  - every ```kern block compiles with no error, and reports exactly the
 *    warnings its `// warning: TEXT` comments announce, on their lines;
 *  - every ```kern-error block fails, carries at least one `// error: TEXT`
 *    comment, and reports exactly the errors (and warnings) its comments
 *    announce, each on its line;
 *  - a block whose info string says `file=NAME` is also written to NAME in the
 *    directory the document's blocks are checked in, so later blocks can
 *    import it;
 *  - runtime.md's "A complete program" section: its first ```c block builds
 *    with that compiler and -Wall -Wextra -Werror against include/ and
 *    libkern.a, runs, and exits 0; the ```kern block after it is the kernel
 *    the program embeds, line for line;
 *  - every builtin and special form is named in language.md, every public
 *    function, macro and status of kern.h and every environment variable the
 *    runtime reads is named in runtime.md, every kern_ / KERN_ name either
 *    document uses exists in kern.h (or is such a variable), and the
 *    size/alignment tables of both documents agree with the library's dtypes.
 * Breaks: on purpose, adding a builtin, a public function or a getenv() of
 * the runtime without documenting it fails this suite. Temporary files go to
 * a fresh directory that is removed.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins.h"
#include "front.h"
#include "harness.h"
#include "kern.h"

#define DOC(name) KERN_SOURCE_DIR "/docs/" name

#ifndef KERN_TEST_SANITIZE
#define KERN_TEST_SANITIZE ""
#endif
#ifndef KERN_TEST_CC
#define KERN_TEST_CC "cc"
#endif
/* A program linked with a sanitized libkern.a needs the same runtime. */
#define SANITIZE_FLAGS (*KERN_TEST_SANITIZE ? "-fsanitize=" KERN_TEST_SANITIZE : "")

/* ---- fenced blocks ---------------------------------------------------------------- */

typedef struct Block {
  char lang[32];     /* first word of the info string: "kern", "kern-error", "c" ... */
  char file[128];    /* file=NAME from the info string, or "" */
  char heading[256]; /* the last heading above the block */
  char *text;        /* the lines between the fences (malloc'd) */
  int line;          /* document line of the opening fence */
  bool closed;
} Block;

typedef struct Blocks {
  Block *v;
  int n, cap;
} Blocks;

static const char *line_end(const char *p) {
  const char *e = strchr(p, '\n');
  return e ? e : p + strlen(p);
}

/* Backticks opening a fence on this line (0: not a fence); up to 3 spaces may precede. */
static int fence_ticks(const char *p, const char **after) {
  int sp = 0;
  while (*p == ' ' && sp < 4) p++, sp++;
  int n = 0;
  while (p[n] == '`') n++;
  if (sp > 3 || n < 3) return 0;
  *after = p + n;
  return n;
}

/* file=NAME anywhere in the info string. */
static void info_file(const char *info, const char *end, char *out, size_t cap) {
  out[0] = 0;
  for (const char *p = info; p + 5 <= end; p++) {
    if (strncmp(p, "file=", 5) != 0 || (p > info && !isspace((unsigned char)p[-1]))) continue;
    size_t n = strcspn(p + 5, " \t\n");
    if (n >= cap) n = cap - 1;
    memcpy(out, p + 5, n);
    out[n] = 0;
    return;
  }
}

static void parse_info(Block *b, const char *info, const char *end) {
  while (info < end && isspace((unsigned char)*info)) info++;
  size_t n = strcspn(info, " \t\n");
  if (n > (size_t)(end - info)) n = (size_t)(end - info);
  if (n >= sizeof b->lang) n = sizeof b->lang - 1;
  memcpy(b->lang, info, n);
  b->lang[n] = 0;
  info_file(info, end, b->file, sizeof b->file);
}

/* Is the line at p a closing fence for an opening of `ticks` backticks? */
static bool closes(const char *p, int ticks) {
  const char *after;
  int n = fence_ticks(p, &after);
  if (n < ticks) return false;
  for (const char *e = line_end(p); after < e; after++)
    if (!isspace((unsigned char)*after)) return false;
  return true;
}

static void add_block(Blocks *bs, const Block *b) {
  if (bs->n == bs->cap) {
    bs->cap = bs->cap ? bs->cap * 2 : 32;
    bs->v = realloc(bs->v, (size_t)bs->cap * sizeof *bs->v);
  }
  bs->v[bs->n++] = *b;
}

static void set_heading(char *heading, const char *p, const char *e) {
  while (p < e && (*p == '#' || *p == ' ')) p++;
  size_t n = (size_t)(e - p) < 255 ? (size_t)(e - p) : 255;
  memcpy(heading, p, n);
  heading[n] = 0;
}

/* Reads one fenced block whose opening line starts at *pp; moves *pp past it. */
static void read_block(Blocks *bs, const char **pp, int *line, int ticks, const char *info,
                       const char *heading) {
  Block b;
  memset(&b, 0, sizeof b);
  b.line = *line;
  parse_info(&b, info, line_end(info));
  strcpy(b.heading, heading);
  const char *p = *line_end(*pp) ? line_end(*pp) + 1 : line_end(*pp);
  const char *start = p;
  (*line)++;
  while (*p && !closes(p, ticks)) {
    p = *line_end(p) ? line_end(p) + 1 : line_end(p);
    (*line)++;
  }
  b.closed = *p != 0;
  b.text = strndup(start, (size_t)(p - start));
  add_block(bs, &b);
  *pp = *p ? (*line_end(p) ? line_end(p) + 1 : line_end(p)) : p;
  (*line)++;
}

/* Every fenced block of a Markdown text, with the heading it sits under. */
static Blocks extract(const char *md) {
  Blocks bs = {0};
  char heading[256] = "";
  int line = 1;
  const char *p = md;
  while (*p) {
    const char *info;
    int ticks = fence_ticks(p, &info);
    if (ticks) {
      read_block(&bs, &p, &line, ticks, info, heading);
      continue;
    }
    if (*p == '#') set_heading(heading, p, line_end(p));
    p = *line_end(p) ? line_end(p) + 1 : line_end(p);
    line++;
  }
  return bs;
}

static void blocks_free(Blocks *bs) {
  for (int i = 0; i < bs->n; i++) free(bs->v[i].text);
  free(bs->v);
  memset(bs, 0, sizeof *bs);
}

static int count_lang(const Blocks *bs, const char *lang) {
  int n = 0;
  for (int i = 0; i < bs->n; i++) n += strcmp(bs->v[i].lang, lang) == 0;
  return n;
}

/* ---- files --------------------------------------------------------------------- */

static char *temp_dir(void) {
  const char *t = getenv("TMPDIR");
  char *d = malloc(PATH_MAX);
  snprintf(d, PATH_MAX, "%s/kern-docs-XXXXXX", t && *t ? t : "/tmp");
  cr_assert(mkdtemp(d), "cannot create a temporary directory");
  return d;
}

static void remove_dir(const char *d) {
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
  th_run(cmd, NULL);
}

static bool write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

static char *read_doc(const char *path) {
  char *s = th_read_file(path, NULL);
  cr_assert(s, "cannot read %s", path);
  return s;
}

/* ---- expectations in example blocks --------------------------------------------- */

typedef struct Expect {
  DiagLevel level;
  int line; /* within the block, 1-based */
  char text[256];
  bool seen;
} Expect;

/* `// error: TEXT` and `// warning: TEXT` comments of a block. */
static int expectations(const char *text, Expect *out, int cap) {
  int n = 0, line = 1;
  for (const char *p = text; *p && n < cap; line++) {
    const char *e = line_end(p);
    static const struct {
      const char *tag;
      DiagLevel level;
    } tags[] = {{"// error: ", DIAG_ERROR}, {"// warning: ", DIAG_WARNING}};
    for (int t = 0; t < 2; t++) {
      const char *m = strstr(p, tags[t].tag);
      if (!m || m >= e) continue;
      m += strlen(tags[t].tag);
      size_t len = (size_t)(e - m) < 255 ? (size_t)(e - m) : 255;
      while (len && isspace((unsigned char)m[len - 1])) len--;
      out[n] = (Expect){.level = tags[t].level, .line = line};
      memcpy(out[n].text, m, len);
      out[n].text[len] = 0;
      n++;
    }
    p = *e ? e + 1 : e;
  }
  return n;
}

/* Marks the expectation a diagnostic fulfils; false when none does. */
static bool match(const Diag *d, Expect *ex, int nex) {
  for (int i = 0; i < nex; i++)
    if (ex[i].level == d->level && ex[i].line == d->loc.line && strstr(d->msg, ex[i].text)) {
      ex[i].seen = true;
      return true;
    }
  return false;
}

/* printf into a malloc'd string (never NULL: a failure says so). */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s;
  int n = vasprintf(&s, f, ap);
  va_end(ap);
  return n < 0 ? strdup("(out of memory)") : s;
}

static const char *level_name(DiagLevel l) { return l == DIAG_ERROR ? "error" : "warning"; }

/* The first mismatch between a compilation's diagnostics and a block's
 * expectations, or NULL. */
static char *mismatch(const FrontResult *r, const char *path, Expect *ex, int nex,
                      bool want_error) {
  int nerr = 0;
  for (const Diag *d = r->prog->diags->head; d; d = d->next) {
    bool mine = d->loc.file && strcmp(d->loc.file, path) == 0;
    nerr += d->level == DIAG_ERROR;
    if (d->level != DIAG_NOTE && !(mine && match(d, ex, nex)))
      return fmt("an unannounced %s at line %d: %s", level_name(d->level), d->loc.line, d->msg);
  }
  for (int i = 0; i < nex; i++)
    if (!ex[i].seen)
      return fmt("no %s '%s' on its line %d", level_name(ex[i].level), ex[i].text, ex[i].line);
  if (want_error && (nerr == 0 || r->ok))
    return strdup("it compiles, but a kern-error block must fail");
  if (want_error && nex == 0) return strdup("a kern-error block needs a '// error: TEXT' comment");
  if (!want_error && !r->ok) return strdup("it does not compile");
  return NULL;
}

/* Checks one example block in dir; returns NULL or what is wrong (malloc'd). */
static char *check_example(const char *dir, const Block *b, bool want_error) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, b->file[0] ? b->file : "example.kern");
  Expect ex[64];
  int nex = expectations(b->text, ex, 64);
  FrontResult r = front_compile(path, b->text, strlen(b->text));
  if (!r.prog) return strdup("out of memory");
  char *why = mismatch(&r, path, ex, nex, want_error);
  if (why) {
    char *diags = diag_render(r.prog->diags, false);
    char *msg = fmt("%s; diagnostics:\n%s", why, diags ? diags : "");
    free(diags);
    free(why);
    why = msg;
  }
  front_free(r.prog);
  return why;
}

/* Checks every kern and kern-error block of a document; returns the failures. */
static int check_examples(const char *doc, int *nchecked) {
  char *md = read_doc(doc);
  Blocks bs = extract(md);
  char *dir = temp_dir();
  int bad = 0;
  *nchecked = 0;
  for (int i = 0; i < bs.n; i++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, bs.v[i].file);
    if (bs.v[i].file[0]) cr_assert(write_text(path, bs.v[i].text), "cannot write %s", path);
  }
  for (int i = 0; i < bs.n; i++) {
    const Block *b = &bs.v[i];
    bool is_err = strcmp(b->lang, "kern-error") == 0;
    if (!is_err && strcmp(b->lang, "kern") != 0) continue;
    (*nchecked)++;
    char *why = b->closed ? check_example(dir, b, is_err) : strdup("the block is never closed");
    if (why) {
      cr_log_error("%s:%d: %s block: %s", doc, b->line, b->lang, why);
      bad++;
    }
    free(why);
  }
  remove_dir(dir);
  free(dir);
  blocks_free(&bs);
  free(md);
  return bad;
}

/* ---- word search ---------------------------------------------------------------- */

static bool is_ident(int c) { return isalnum(c) || c == '_'; }

/* Does text contain word with no identifier character on either side? */
static bool has_word(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
    if ((p == text || !is_ident((unsigned char)p[-1])) && !is_ident((unsigned char)p[n]))
      return true;
  return false;
}

/* ---- the tests -------------------------------------------------------------------- */

Test(docs, extractor_reads_fences_info_strings_and_headings) {
  const char *md = "# Title\ntext\n```kern file=lib/a.kern\nconst int A = 1;\n```\n"
                   "## A complete program\n````c\nint x;\n```\nstill c\n````\n"
                   "  ```kern-error\nbad\n";
  Blocks bs = extract(md);
  cr_assert_eq(bs.n, 3);
  cr_expect_str_eq(bs.v[0].lang, "kern");
  cr_expect_str_eq(bs.v[0].file, "lib/a.kern");
  cr_expect_str_eq(bs.v[0].text, "const int A = 1;\n");
  cr_expect_str_eq(bs.v[0].heading, "Title");
  cr_expect_eq(bs.v[0].line, 3);
  cr_expect_str_eq(bs.v[1].lang, "c");
  cr_expect_str_eq(bs.v[1].heading, "A complete program");
  cr_expect_str_eq(bs.v[1].text, "int x;\n```\nstill c\n", "a shorter fence does not close");
  cr_expect(bs.v[1].closed);
  cr_expect_str_eq(bs.v[2].lang, "kern-error");
  cr_expect(!bs.v[2].closed, "an unclosed block is reported as such");
  blocks_free(&bs);
}

Test(docs, expectation_comments_are_matched_by_line_and_level) {
  char *dir = temp_dir();
  Block b = {.lang = "kern-error", .closed = true};
  b.text = "kernel void k(int[] a) {\n    a[0] = 1.5;  // error: truncated to int32\n}\n";
  cr_expect_null(check_example(dir, &b, true));
  b.text = "kernel void k(int[] a) {\n    a[0] = 1.5;\n    // error: truncated to int32\n}\n";
  char *why = check_example(dir, &b, true);
  cr_expect_not_null(why, "an error comment on the wrong line must not match");
  free(why);
  b.text = "kernel void k(int[] a) {\n    a[0] + 1;\n}\n";
  why = check_example(dir, &b, false);
  cr_expect_not_null(why, "an unannounced warning fails a kern block");
  free(why);
  b.text = "kernel void k(int[] a) {\n    a[0] + 1;  // warning: result unused\n}\n";
  cr_expect_null(check_example(dir, &b, false));
  b.text = "kernel void k(int[] a) {\n    a[0] = 1;\n}\n";
  why = check_example(dir, &b, true);
  cr_expect_not_null(why, "a kern-error block that compiles fails");
  free(why);
  remove_dir(dir);
  free(dir);
}

Test(docs, language_examples_check) {
  int n, bad = check_examples(DOC("language.md"), &n);
  cr_expect_eq(bad, 0, "%d of %d examples in language.md are wrong (see the log)", bad, n);
  char *md = read_doc(DOC("language.md"));
  Blocks bs = extract(md);
  cr_expect_geq(count_lang(&bs, "kern"), 20, "language.md lost its examples");
  cr_expect_geq(count_lang(&bs, "kern-error"), 12, "language.md lost its error examples");
  blocks_free(&bs);
  free(md);
}

Test(docs, runtime_examples_check) {
  int n, bad = check_examples(DOC("runtime.md"), &n);
  cr_expect_eq(bad, 0, "%d of %d kern examples in runtime.md are wrong (see the log)", bad, n);
  cr_expect_geq(n, 2);
}

/* The complete program and the kernel block shown after it. */
static void complete_program(const Blocks *bs, const Block **prog, const Block **kern) {
  *prog = *kern = NULL;
  for (int i = 0; i < bs->n && !*kern; i++) {
    const Block *b = &bs->v[i];
    if (!strstr(b->heading, "A complete program")) continue;
    if (!*prog && strcmp(b->lang, "c") == 0)
      *prog = b;
    else if (*prog && strcmp(b->lang, "kern") == 0)
      *kern = b;
  }
}

/* The last 8 KiB of a command's output, for failure messages: Criterion cannot
 * pass a message over 1 MiB to its runner, and the test hangs instead of
 * failing (a link against a sanitized libkern.a without -fsanitize printed
 * 1.7 MB of undefined references). */
static const char *tail(const char *out) {
  size_t n = strlen(out);
  return n > 8192 ? out + n - 8192 : out;
}

static char *library_path(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cr_assert(n > 0, "cannot read /proc/self/exe");
  exe[n] = 0;
  *strrchr(exe, '/') = 0;
  char *lib = malloc(PATH_MAX);
  snprintf(lib, PATH_MAX, "%s/../libkern.a", exe);
  cr_assert(access(lib, R_OK) == 0, "the static library is not at %s", lib);
  return lib;
}

Test(docs, complete_program_builds_runs_and_exits_0, .timeout = 300) {
  char *md = read_doc(DOC("runtime.md"));
  Blocks bs = extract(md);
  const Block *prog, *kern;
  complete_program(&bs, &prog, &kern);
  cr_assert(prog, "runtime.md has no ```c block under a heading 'A complete program'");
  char *dir = temp_dir(), *lib = library_path(), src[PATH_MAX], exe[PATH_MAX], cmd[4 * PATH_MAX];
  snprintf(src, sizeof src, "%s/program.c", dir);
  snprintf(exe, sizeof exe, "%s/program", dir);
  cr_assert(write_text(src, prog->text));
  snprintf(
      cmd, sizeof cmd,
      "%s -std=c11 -Wall -Wextra -Werror %s -I'%s/include' '%s' '%s' -lpthread -ldl -lm -o '%s'",
      KERN_TEST_CC, SANITIZE_FLAGS, KERN_SOURCE_DIR, src, lib, exe);
  char *out;
  int rc = th_run(cmd, &out);
  cr_expect_eq(rc, 0, "runtime.md:%d: the complete program does not build:\n%s", prog->line,
               tail(out));
  free(out);
  if (rc == 0) {
    snprintf(cmd, sizeof cmd, "'%s'", exe);
    rc = th_run(cmd, &out);
    cr_expect_eq(rc, 0, "runtime.md:%d: the complete program exits %d:\n%s", prog->line, rc,
                 tail(out));
    free(out);
  }
  remove_dir(dir);
  free(dir);
  free(lib);
  blocks_free(&bs);
  free(md);
}

/* The lines of the C string literals that end in \n, in order: the kernel a
 * program embeds, one literal per line. */
static char *embedded_source(const char *c) {
  size_t cap = strlen(c) + 1, n = 0;
  char *out = malloc(cap);
  for (const char *p = c; *p;) {
    const char *e = line_end(p), *q = p;
    while (q < e && isspace((unsigned char)*q)) q++;
    const char *close = e;
    while (close > q && (isspace((unsigned char)close[-1]) || close[-1] == ';')) close--;
    if (*q == '"' && close - q >= 4 && strncmp(close - 3, "\\n\"", 3) == 0) {
      memcpy(out + n, q + 1, (size_t)(close - 3 - (q + 1)));
      n += (size_t)(close - 3 - (q + 1));
      out[n++] = '\n';
    }
    p = *e ? e + 1 : e;
  }
  out[n] = 0;
  return out;
}

Test(docs, complete_program_shows_the_kernel_it_embeds) {
  char *md = read_doc(DOC("runtime.md"));
  Blocks bs = extract(md);
  const Block *prog, *kern;
  complete_program(&bs, &prog, &kern);
  cr_assert(prog && kern,
            "runtime.md: 'A complete program' needs a ```c block, then a ```kern block");
  char *embedded = embedded_source(prog->text);
  cr_expect_str_eq(embedded, kern->text,
                   "runtime.md:%d: the kernel shown differs from the one in the program",
                   kern->line);
  free(embedded);
  blocks_free(&bs);
  free(md);
}

Test(docs, language_names_every_builtin_and_special_form) {
  static const char *const specials[] = {"tid",
                                         "dim",
                                         "len",
                                         "shape",
                                         "size",
                                         "printf",
                                         "assert",
                                         "atomic_add",
                                         "atomic_sub",
                                         "atomic_min",
                                         "atomic_max",
                                         "atomic_exch",
                                         "atomic_and",
                                         "atomic_or",
                                         "atomic_xor",
                                         "atomic_cas",
                                         "rand_init",
                                         "randf",
                                         "randi",
                                         "randn",
                                         "identity",
                                         "lower_bound",
                                         "randu",
                                         "poisson",
                                         "sample_triangle",
                                         "sample_unit_ring",
                                         "sample_unit_disk",
                                         "sample_unit_square",
                                         "sample_unit_sphere_surface",
                                         "sample_unit_sphere",
                                         "sample_unit_hemisphere_surface",
                                         "sample_unit_hemisphere",
                                         "sample_unit_cube",
                                         "sample_unit_hypercube",
                                         "sample_cdf"};
  char *md = read_doc(DOC("language.md"));
  for (int i = 0; i < builtin_count(); i++) {
    const char *name = builtin_get(i)->name;
    if (strncmp(name, "op", 2) != 0 && strcmp(name, "neg") != 0)
      cr_expect(has_word(md, name), "language.md does not mention the builtin '%s'", name);
  }
  for (size_t i = 0; i < sizeof specials / sizeof *specials; i++)
    cr_expect(has_word(md, specials[i]), "language.md does not mention '%s'", specials[i]);
  free(md);
}

/* kern_xxx( on a declaration line of kern.h (not comments, macros or inline helpers). */
static int public_functions(const char *h, char names[][64], int cap) {
  int n = 0;
  for (const char *p = h; *p;) {
    const char *e = line_end(p), *q = p;
    while (q < e && *q == ' ') q++;
    bool skip = *q == '/' || *q == '*' || *q == '#' || strncmp(q, "static inline", 13) == 0;
    for (const char *s = q; !skip && s < e && n < cap; s++) {
      if (strncmp(s, "kern_", 5) != 0 || (s > p && is_ident((unsigned char)s[-1]))) continue;
      size_t len = 0;
      while (is_ident((unsigned char)s[len])) len++;
      if (s[len] == '(' && s[len - 1] != '_' && len < 64) {
        memcpy(names[n], s, len);
        names[n++][len] = 0;
      }
      s += len;
    }
    p = *e ? e + 1 : e;
  }
  return n;
}

Test(docs, runtime_names_every_public_function_status_and_macro) {
  char *h = read_doc(KERN_SOURCE_DIR "/include/kern.h"), *md = read_doc(DOC("runtime.md"));
  static char names[256][64];
  int n = public_functions(h, names, 256);
  cr_expect_geq(n, 80, "kern.h parsing found only %d functions", n);
  for (int i = 0; i < n; i++)
    cr_expect(has_word(md, names[i]), "runtime.md does not mention %s()", names[i]);
  for (int st = KERN_OK; st <= KERN_ERR_IO; st++)
    cr_expect(has_word(md, kern_status_name((kern_status)st)), "runtime.md does not mention %s",
              kern_status_name((kern_status)st));
  static const char *const macros[] = {"KERN_LAUNCH",     "KERN_DIM1", "KERN_DIM2",
                                       "KERN_DIM3",       "KERN_DIM4", "KERN_ARG_INLINE_BYTES",
                                       "KERN_VERSION_NUM"};
  for (size_t i = 0; i < sizeof macros / sizeof *macros; i++)
    cr_expect(has_word(md, macros[i]), "runtime.md does not mention %s", macros[i]);
  free(h);
  free(md);
}

/* Adds the getenv("NAME") names of one source file to names. */
static int env_names(const char *src, char names[][64], int n, int cap) {
  for (const char *p = strstr(src, "getenv(\""); p && n < cap; p = strstr(p + 1, "getenv(\"")) {
    const char *s = p + 8;
    size_t len = strcspn(s, "\"");
    bool dup = false;
    for (int i = 0; i < n; i++) dup |= strlen(names[i]) == len && strncmp(names[i], s, len) == 0;
    if (dup || len >= 64) continue;
    memcpy(names[n], s, len);
    names[n++][len] = 0;
  }
  return n;
}

/* Every variable the runtime's sources read with getenv. */
/* The library's sources: the runtime, its backends and the support layer. */
static int runtime_env_names(char names[][64], int cap) {
  static const char *const dirs[] = {KERN_SOURCE_DIR "/runtime", KERN_SOURCE_DIR "/runtime/cpu",
                                     KERN_SOURCE_DIR "/runtime/cuda", KERN_SOURCE_DIR "/support"};
  int n = 0;
  for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
    char **files;
    int nf = th_list(dirs[d], ".c", &files);
    for (int i = 0; i < nf; i++) {
      char *src = th_read_file(files[i], NULL);
      n = src ? env_names(src, names, n, cap) : n;
      free(src);
      free(files[i]);
    }
    free(files);
  }
  return n;
}

Test(docs, runtime_names_every_environment_variable_the_runtime_reads) {
  char *md = read_doc(DOC("runtime.md"));
  static char names[64][64];
  int n = runtime_env_names(names, 64);
  cr_expect_geq(n, 4, "found only %d getenv() calls in the library", n);
  for (int i = 0; i < n; i++)
    cr_expect(has_word(md, names[i]), "runtime.md does not mention the environment variable %s",
              names[i]);
  free(md);
}

/* Counts the kern_xxx / KERN_XXX words of a document that kern.h does not
 * declare and that are not environment variables the runtime reads. */
static int unknown_api_words(const char *doc, const char *md, const char *h, char env[][64],
                             int nenv) {
  int bad = 0;
  for (const char *p = md; *p; p++) {
    bool lower = strncmp(p, "kern_", 5) == 0, upper = strncmp(p, "KERN_", 5) == 0;
    if ((!lower && !upper) || (p > md && (is_ident((unsigned char)p[-1]) || p[-1] == ':')))
      continue;
    char word[64];
    size_t len = 0;
    while (is_ident((unsigned char)p[len]) && len < sizeof word - 1) word[len] = p[len], len++;
    word[len] = 0;
    bool known = has_word(h, word) || strcmp(word, "kern_add_kernels") == 0 ||
                 strcmp(word, "kern_embed_sources") == 0; /* CMake's */
    for (int i = 0; i < nenv && !known; i++) known = strcmp(env[i], word) == 0;
    if (!known) {
      cr_log_error("%s mentions %s, which kern.h does not declare", doc, word);
      bad++;
    }
    p += len - 1;
  }
  return bad;
}

Test(docs, every_api_name_the_docs_mention_exists) {
  char *h = read_doc(KERN_SOURCE_DIR "/include/kern.h");
  static char env[64][64];
  int nenv = runtime_env_names(env, 64);
  static const char *const docs[] = {DOC("language.md"), DOC("runtime.md")};
  for (int i = 0; i < 2; i++) {
    char *md = read_doc(docs[i]);
    int bad = unknown_api_words(docs[i], md, h, env, nenv);
    cr_expect_eq(bad, 0, "%s names %d things kern.h lacks (see the log)", docs[i], bad);
    free(md);
  }
  free(h);
}

/* GitHub's anchor of a heading: lower case, blanks to '-', other punctuation dropped. */
static void slug(const char *p, const char *e, char *out, size_t cap) {
  size_t n = 0;
  while (p < e && (*p == '#' || *p == ' ')) p++;
  for (; p < e && n + 1 < cap; p++) {
    unsigned char c = (unsigned char)*p;
    if (isalnum(c) || c == '-' || c == '_')
      out[n++] = (char)tolower(c);
    else if (c == ' ')
      out[n++] = '-';
  }
  out[n] = 0;
}

/* Does the Markdown text have a heading whose anchor is `anchor`? */
static bool has_anchor(const char *md, const char *anchor) {
  bool fenced = false;
  for (const char *p = md; *p;) {
    const char *e = line_end(p), *info;
    fenced ^= fence_ticks(p, &info) > 0;
    char s[256];
    if (*p == '#' && !fenced) {
      slug(p, e, s, sizeof s);
      if (strcmp(s, anchor) == 0) return true;
    }
    p = *e ? e + 1 : e;
  }
  return false;
}

/* Checks every [text](file.md#anchor) and [text](#anchor) link of DIR/NAME
 * (DIR: "docs" or "." for README.md). */
static int broken_links(const char *dir, const char *name) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s/%s", KERN_SOURCE_DIR, dir, name);
  char *md = read_doc(path);
  int bad = 0;
  for (const char *p = strstr(md, "]("); p; p = strstr(p + 1, "](")) {
    char target[256], file[256], *hash;
    size_t len = strcspn(p + 2, ")\n");
    if (len >= sizeof target || strncmp(p + 2, "http", 4) == 0) continue;
    memcpy(target, p + 2, len);
    target[len] = 0;
    hash = strchr(target, '#');
    if (hash) *hash++ = 0;
    snprintf(file, sizeof file, "%s/%s/%s", KERN_SOURCE_DIR, dir, target[0] ? target : name);
    char *other = th_read_file(file, NULL);
    bool ok = other && (!hash || has_anchor(other, hash));
    if (!ok)
      cr_log_error("%s: the link (%s%s%s) leads nowhere", name, target, hash ? "#" : "",
                   hash ? hash : "");
    bad += !ok;
    free(other);
  }
  free(md);
  return bad;
}

/* Every page, as they are installed together (share/doc/kern/README.md and docs/). */
Test(docs, links_and_anchors_resolve) {
  static const char *const pages[] = {"language.md",    "runtime.md",     "cuda.md",
                                      "memory.md",      "capture.md",     "aot.md",
                                      "performance.md", "robustness.md",  "testing.md",
                                      "security.md",    "distributed.md", "architecture.md"};
  for (size_t i = 0; i < sizeof pages / sizeof *pages; i++)
    cr_expect_eq(broken_links("docs", pages[i]), 0, "%s has broken links (see the log)", pages[i]);
  cr_expect_eq(broken_links(".", "README.md"), 0, "README.md has broken links (see the log)");
}

/* The text of the section under `heading` (up to the next heading of its level). */
static char *section(const char *md, const char *heading) {
  const char *p = strstr(md, heading);
  cr_assert(p, "no '%s'", heading);
  const char *e = strstr(p + strlen(heading), "\n## ");
  return strndup(p, e ? (size_t)(e - p) : strlen(p));
}

Test(docs, readme_lists_every_kernc_command_and_target) {
  char *md = read_doc(KERN_SOURCE_DIR "/README.md"), *s = section(md, "\n## kernc\n");
  const char *words[] = {"kernc check", "kernc emit", "--dump=", "kernc build", "kernc run",
                         "kernc info",  "--help",     "cuda",    "ptx",         "ast"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    cr_expect(strstr(s, words[i]), "README.md's kernc section lacks %s", words[i]);
  free(s);
  free(md);
}

Test(docs, readme_and_runtime_say_how_to_use_the_installed_package) {
  char *md = read_doc(KERN_SOURCE_DIR "/README.md");
  char *use = section(md, "\n## Use kern in your project\n");
  char *rt = read_doc(DOC("runtime.md"));
  const char *words[] = {"pkg-config --cflags --libs kern",
                         "PKG_CONFIG_PATH",
                         "find_package(kern",
                         "kern::kern)",
                         "kern_add_kernels",
                         "kernc build",
                         "aot.md"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    cr_expect(strstr(use, words[i]), "README.md's 'Use kern in your project' lacks %s", words[i]);
  const char *rwords[] = {"`kern::kern`", "kern::kernc", "kern_add_kernels", "PKG_CONFIG_PATH"};
  for (size_t i = 0; i < sizeof rwords / sizeof *rwords; i++)
    cr_expect(strstr(rt, rwords[i]), "runtime.md lacks %s", rwords[i]);
  free(use);
  free(md);
  free(rt);
}

/* A missing .kern file: what kern_module_load returns, and both documents say so. */
Test(docs, the_status_of_a_missing_file_is_documented_alike) {
  cr_assert_null(kern_module_load("/nonexistent/missing.kern"));
  kern_status st = kern_last_status();
  cr_expect_eq(st, KERN_ERR_IO, "%s", kern_status_name(st));
  char *h = read_doc(KERN_SOURCE_DIR "/include/kern.h"), *rt = read_doc(DOC("runtime.md"));
  const char *decl = strstr(h, "kern_module *kern_module_load(");
  cr_assert(decl);
  const char *comment = decl;
  while (comment > h && strncmp(comment, "/*", 2) != 0) comment--;
  char *c = strndup(comment, (size_t)(decl - comment));
  cr_expect(strstr(c, kern_status_name(st)) && strstr(c, "missing"),
            "kern.h's kern_module_load comment does not say a missing file is %s: %s",
            kern_status_name(st), c);
  char *mods = section(rt, "\n## Modules and kernels\n");
  cr_expect(strstr(mods, kern_status_name(st)) && strstr(mods, "missing"),
            "runtime.md's modules section does not say a missing file is %s", kern_status_name(st));
  free(mods);
  free(c);
  free(h);
  free(rt);
}

/* The cells of a Markdown table row, backticks and blanks trimmed; returns the count. */
static int row_cells(const char *p, const char *e, char cells[][64], int cap) {
  int n = 0;
  if (*p != '|') return 0;
  for (p++; p < e && n < cap;) {
    const char *bar = memchr(p, '|', (size_t)(e - p));
    if (!bar) break;
    const char *a = p, *b = bar;
    while (a < b && (isspace((unsigned char)*a) || *a == '`')) a++;
    while (b > a && (isspace((unsigned char)b[-1]) || b[-1] == '`')) b--;
    size_t len = (size_t)(b - a) < 63 ? (size_t)(b - a) : 63;
    memcpy(cells[n], a, len);
    cells[n++][len] = 0;
    p = bar + 1;
  }
  return n;
}

/* Finds the table row whose cell `col` is name; checks its size and align
 * cells against the library's dtype table. Returns false when absent. */
static bool check_layout_row(const char *md, const char *doc, kern_dtype dt, int col, int size_col,
                             int align_col) {
  const char *name = kern_dtype_name(dt);
  for (const char *p = md; *p;) {
    const char *e = line_end(p);
    char cells[8][64];
    int n = row_cells(p, e, cells, 8);
    if (n > size_col && n > align_col && n > col && strcmp(cells[col], name) == 0 &&
        isdigit((unsigned char)cells[size_col][0])) {
      cr_expect_eq(strtoul(cells[size_col], NULL, 10), kern_dtype_size(dt), "%s: size of %s", doc,
                   name);
      cr_expect_eq(strtoul(cells[align_col], NULL, 10), kern_dtype_align(dt), "%s: alignment of %s",
                   doc, name);
      return true;
    }
    p = *e ? e + 1 : e;
  }
  return false;
}

Test(docs, layout_tables_match_the_library) {
  char *lang = read_doc(DOC("language.md")), *rt = read_doc(DOC("runtime.md"));
  for (kern_dtype dt = KERN_BOOL; dt < KERN_DTYPE_BUILTIN_END; dt++) {
    /* language.md: | type | aliases | size | align | ...
     * runtime.md:  | KERN_X | type | C type | size | align | */
    cr_expect(check_layout_row(lang, "language.md", dt, 0, 2, 3),
              "language.md's layout table lacks %s", kern_dtype_name(dt));
    cr_expect(check_layout_row(rt, "runtime.md", dt, 1, 3, 4), "runtime.md's dtype table lacks %s",
              kern_dtype_name(dt));
  }
  free(lang);
  free(rt);
}
