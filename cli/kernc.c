/* kernc: the command-line compiler.
 *
 *   kernc check FILE...                  type-check; diagnostics on stderr
 *   kernc emit --target=c|cuda|ast FILE  print a stage's output
 *   kernc --dump=tokens,ast,types,c,cuda FILE
 *
 * The only place that maps statuses to exit codes: 0 ok, 1 user error
 * (diagnostics printed), 2 bad usage, 3 internal error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"
#include "emit.h"
#include "front.h"
#include "kern.h"

enum { EXIT_OK = 0, EXIT_USER = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

static const char usage[] =
    "usage: kernc <command> [options] FILE...\n"
    "\n"
    "commands:\n"
    "  check FILE...                 type-check; diagnostics to stderr\n"
    "  emit --target=T FILE          print generated code; T is c, cuda, ptx or ast\n"
    "       [--arch=sm_90]           the GPU arch for ptx (default sm_90)\n"
    "       [--debug]                with bounds checks and assert\n"
    "       [--no-line]              without #line directives\n"
    "\n"
    "options:\n"
    "  --dump=STAGES FILE            print stages: tokens,ast,types,c,cuda\n"
    "  --color / --no-color          colour diagnostics (default: when stderr is a terminal)\n"
    "  -h, --help                    this text\n"
    "  --version                     print the version\n"
    "\n"
    "exit status: 0 ok, 1 errors in the input, 2 bad usage, 3 internal error\n";

typedef struct Options {
  const char *target;
  int arch;            /* sm_XY as XY */
  const char *dump;
  bool debug, no_line, color;
  const char **files;
  int nfiles;
} Options;

static int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "kernc: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(run 'kernc --help' for usage)\n");
  return EXIT_USAGE;
}

/* Prints the diagnostics; returns the exit code they imply. */
static int report(const Program *p, bool color) {
  char *text = diag_render(p->diags, color);
  if (text) fputs(text, stderr);
  free(text);
  return diag_errors(p->diags) ? EXIT_USER : EXIT_OK;
}

static int check_files(const Options *o) {
  int rc = EXIT_OK;
  for (int i = 0; i < o->nfiles; i++) {
    FrontResult r = front_compile(o->files[i], NULL, 0);
    if (!r.prog) return EXIT_INTERNAL;
    if (report(r.prog, o->color) != EXIT_OK) rc = EXIT_USER;
    front_free(r.prog);
  }
  return rc;
}

static void dump_tokens(const char *path) {
  size_t len;
  char *src = front_read_file(path, &len);
  if (!src) return;
  Arena *a = arena_new();
  Diags d;
  diags_init(&d);
  TokenList tl = lex_source(a, &d, path, src, len);
  for (int i = 0; i < tl.n; i++) {
    const Token *t = &tl.toks[i];
    printf("%d:%d %s '%.*s'\n", t->loc.line, t->loc.col, tok_kind_name(t->kind), (int)t->loc.len,
           t->text ? t->text : "");
  }
  diags_free(&d);
  arena_free(a);
  free(src);
}

static bool wants(const char *list, const char *stage) {
  size_t n = strlen(stage);
  for (const char *p = list; (p = strstr(p, stage)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return true;
  return false;
}

static int print_code(const Program *p, EmitTarget t, const Options *o) {
  EmitOptions eo = {.debug = o->debug, .line_directives = !o->no_line};
  char *code = emit_program(p, t, &eo);
  if (!code) return EXIT_INTERNAL;
  fputs(code, stdout);
  free(code);
  return EXIT_OK;
}

/* PTX through NVRTC: needs no GPU, only the CUDA toolkit's NVRTC. */
static int print_ptx(const Program *p, const Options *o) {
  EmitOptions eo = {.debug = o->debug, .line_directives = !o->no_line};
  char *code = emit_program(p, EMIT_CUDA, &eo), *ptx = NULL;
  if (!code) return EXIT_INTERNAL;
  size_t len;
  bool is_ptx;
  kern_status s = rt_nvrtc_compile(code, p->root->path, o->arch, false, o->debug, &ptx, &len, &is_ptx);
  free(code);
  if (s != KERN_OK) {
    fprintf(stderr, "kernc: %s\n", kern_last_error());
    return s == KERN_ERR_COMPILE ? EXIT_INTERNAL : EXIT_USER;
  }
  fputs(ptx, stdout);
  free(ptx);
  return EXIT_OK;
}

static int print_ast(const Program *p, bool typed) {
  for (const Module *m = p->modules; m; m = m->next) {
    char *s = ast_dump_module(m, typed);
    if (!s) return EXIT_INTERNAL;
    fputs(s, stdout);
    free(s);
  }
  return EXIT_OK;
}

static int dump_stages(const Options *o, const char *stages) {
  const char *known[] = {"tokens", "ast", "types", "c", "cuda"};
  for (const char *p = stages; *p;) {
    size_t n = strcspn(p, ",");
    bool ok = false;
    for (size_t i = 0; i < 5; i++) ok |= strlen(known[i]) == n && strncmp(p, known[i], n) == 0;
    if (!ok) return bad_usage("unknown stage in --dump: '%s' (stages: tokens,ast,types,c,cuda)", p);
    p += n + (p[n] == ',');
  }
  if (o->nfiles != 1) return bad_usage("%s", "--dump needs exactly one FILE");
  if (wants(stages, "tokens")) dump_tokens(o->files[0]);
  FrontResult r = front_compile(o->files[0], NULL, 0);
  if (!r.prog) return EXIT_INTERNAL;
  int rc = report(r.prog, o->color);
  if (wants(stages, "ast") && r.prog->root) print_ast(r.prog, false);
  if (rc == EXIT_OK && wants(stages, "types")) print_ast(r.prog, true);
  if (rc == EXIT_OK && wants(stages, "c")) rc = print_code(r.prog, EMIT_C, o);
  if (rc == EXIT_OK && wants(stages, "cuda")) rc = print_code(r.prog, EMIT_CUDA, o);
  front_free(r.prog);
  return rc;
}

static int emit_file(const Options *o) {
  if (!o->target) return bad_usage("%s", "emit needs --target=c|cuda|ast");
  const char *t = o->target;
  if (strcmp(t, "c") && strcmp(t, "cuda") && strcmp(t, "ptx") && strcmp(t, "ast"))
    return bad_usage("unknown target '%s' (targets: c, cuda, ptx, ast)", t);
  if (o->nfiles != 1) return bad_usage("%s", "emit needs exactly one FILE");
  FrontResult r = front_compile(o->files[0], NULL, 0);
  if (!r.prog) return EXIT_INTERNAL;
  int rc = report(r.prog, o->color);
  if (rc == EXIT_OK) {
    if (strcmp(t, "ast") == 0) rc = print_ast(r.prog, true);
    else if (strcmp(t, "ptx") == 0) rc = print_ptx(r.prog, o);
    else rc = print_code(r.prog, strcmp(t, "cuda") == 0 ? EMIT_CUDA : EMIT_C, o);
  }
  front_free(r.prog);
  return rc;
}

/* Parses options; returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, Options *o) {
  o->color = isatty(2);
  o->arch = 90;
  o->files = calloc((size_t)argc, sizeof *o->files);
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--target=", 9) == 0) o->target = a + 9;
    else if (strncmp(a, "--dump=", 7) == 0) o->dump = a + 7;
    else if (strncmp(a, "--arch=", 7) == 0) {
      const char *v = a + 7 + (strncmp(a + 7, "sm_", 3) == 0 ? 3 : 0);
      char *end;
      long arch = strtol(v, &end, 10);
      if (*end || arch < 30 || arch > 200) return bad_usage("bad --arch '%s' (expected e.g. sm_90)", a + 7);
      o->arch = (int)arch;
    }
    else if (strcmp(a, "--debug") == 0) o->debug = true;
    else if (strcmp(a, "--no-line") == 0) o->no_line = true;
    else if (strcmp(a, "--color") == 0) o->color = true;
    else if (strcmp(a, "--no-color") == 0) o->color = false;
    else if (a[0] == '-' && a[1]) return bad_usage("unknown option '%s'", a);
    else o->files[o->nfiles++] = a;
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 2) { fputs(usage, stderr); return EXIT_USAGE; }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) { fputs(usage, stdout); return EXIT_OK; }
  if (!strcmp(cmd, "--version")) { printf("kernc %s\n", KERN_VERSION_STRING); return EXIT_OK; }
  Options o = {0};
  bool dump = strncmp(cmd, "--dump=", 7) == 0;
  int rc = parse_args(argc, argv, &o);
  if (rc < 0) {
    if (dump) rc = dump_stages(&o, cmd + 7);
    else if (!strcmp(cmd, "check")) rc = o.nfiles ? check_files(&o) : bad_usage("%s", "check needs at least one FILE");
    else if (!strcmp(cmd, "emit")) rc = emit_file(&o);
    else rc = bad_usage("unknown command '%s'", cmd);
  }
  free(o.files);
  return rc;
}
