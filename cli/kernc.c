/* kernc: the command-line compiler.
 *
 *   kernc check FILE...                  type-check; diagnostics on stderr
 *   kernc emit [--target=c|cuda|ptx|ast] FILE   print a stage's output (default c)
 *   kernc --dump=tokens,ast,types,c,cuda FILE   (also after check or emit)
 *   kernc build FILE -o PREFIX           ahead-of-time module (build.c)
 *   kernc embed FILE -o PREFIX           the module's source as C data (embed.c)
 *   kernc run FILE KERNEL --arg ...      one launch from the shell (run.c)
 *   kernc info                           devices, compilers, cache (info.c)
 *   kernc cache info|clear               the compiled-code cache (info.c)
 *   kernc COMMAND --help                 one command's options
 *
 * The only place that maps statuses to exit codes: 0 ok, 1 user error
 * (diagnostics printed), 2 bad usage, 3 internal error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "emit.h"
#include "front.h"
#include "kern.h"
#include "toolchain.h"

static const char usage_check[] =
    "  check FILE...                 type-check; diagnostics to stderr\n"
    "       [--dump=STAGES]          also print stages of the one FILE (see --dump below)\n";
static const char usage_emit[] =
    "  emit [--target=T] FILE        print generated code; T is c (default), cuda, ptx or ast\n"
    "       [--arch=sm_90]           the GPU arch for ptx (default sm_90)\n"
    "       [--debug]                with bounds checks and assert\n"
    "       [--fast-math]            FMA and approximate math (not the same bits on every device)\n"
    "       [--verify-fp]            stores of NaN or infinity to arrays fail the launch\n"
    "       [--no-line]              without #line directives\n"
    "       [--dump=STAGES]          print these stages first (see --dump below)\n";
static const char usage_build[] =
    "  build FILE -o PREFIX          compile ahead of time: PREFIX.h (typed launch functions)\n"
    "                                and PREFIX.o (CPU code + CUBINs + PTX); see docs/aot.md\n"
    "       [--arch=sm_80,sm_90]     GPU archs for CUBINs, PTX for the newest (default sm_75,sm_80,sm_90)\n"
    "       [--no-cuda]              CPU code only (also --cpu)\n"
    "       [--cpu-flags=FLAGS]      extra C compiler flags, e.g. -march=x86-64-v3\n"
    "       [--cc=CC]                the C compiler (default $KERN_CC, else clang, else cc)\n"
    "       [--compile-timeout=S]    stop the C compiler after S seconds (default\n"
    "                                $KERN_COMPILE_TIMEOUT, else 300; 0: no limit)\n"
    "       [--name=ID]              the C name prefix (default: the base name of PREFIX)\n"
    "       [--depfile=FILE]         write make-style dependencies\n"
    "       [--debug]                with bounds checks and assert\n"
    "       [--fast-math]            FMA and approximate math (not the same bits on every device)\n"
    "       [--verify-fp]            stores of NaN or infinity to arrays fail the launch\n";
static const char usage_embed[] =
    "  embed FILE -o PREFIX          the module's source (and its imports') as C data:\n"
    "                                PREFIX.h and PREFIX.c with PREFIX_load(), which compiles\n"
    "                                it at run time from memory; see docs/aot.md\n"
    "       [--name=ID]              the C name prefix (default: the base name of PREFIX)\n"
    "       [--depfile=FILE]         write make-style dependencies\n";
static const char usage_run[] =
    "  run FILE KERNEL               launch one kernel and print its arrays\n"
    "       --arg NAME=VALUE ...     arrays: zeros:N[,M..], ones:SHAPE, range:SHAPE, file:PATH.npy;\n"
    "                                values: 1, 2.5, true, 1,2,3 (vectors, matrices)\n"
    "       [--device=cpu|cuda:N]    default cpu\n"
    "       [--dim=N[,M..]]          launch dims (default: the first array's shape)\n"
    "       [--out=DIR]              write every array argument to DIR/NAME.npy\n"
    "       [--release]              launch unchecked: by default run checks every index\n"
    "                                (debug mode) and refuses dims larger than the arrays\n";
static const char usage_info[] =
    "  info                          the devices and their capabilities, the C compiler and\n"
    "                                NVRTC in use, the cache directory and its size\n";
static const char usage_cache[] =
    "  cache info                    the cache directory, its entries and bytes, and its bound\n"
    "  cache clear                   remove every compiled module from the cache\n";
static const char usage_common[] =
    "  --color / --no-color          colour diagnostics (default: when stderr is a terminal)\n"
    "  -h, --help                    this text (after a command: that command's)\n";
static const char usage_tail[] =
    "\n"
    "exit status: 0 ok, 1 errors in the input, 2 bad usage, 3 internal error\n"
    "manual: man kernc; docs/aot.md, docs/language.md, docs/runtime.md\n"
    "        (installed under share/doc/kern/docs)\n";

static const struct {
  const char *name, *synopsis, *text;
} usages[] = {{"check", "check [--dump=STAGES] FILE...", usage_check},
              {"emit", "emit [--target=T] [options] FILE", usage_emit},
              {"build", "build FILE -o PREFIX [options]", usage_build},
              {"embed", "embed FILE -o PREFIX [options]", usage_embed},
              {"run", "run FILE KERNEL --arg NAME=VALUE... [options]", usage_run},
              {"info", "info", usage_info},
              {"cache", "cache info|clear", usage_cache}};

/* Every command (command NULL), or one. */
static void print_usage(FILE *f, const char *command) {
  if (!command) fputs("usage: kernc <command> [options] FILE...\n\ncommands:\n", f);
  for (size_t i = 0; i < sizeof usages / sizeof *usages; i++)
    if (!command)
      fputs(usages[i].text, f);
    else if (!strcmp(command, usages[i].name))
      fprintf(f, "usage: kernc %s\n\n%s", usages[i].synopsis, usages[i].text);
  fputs("\noptions:\n", f);
  if (!command) fputs("  --dump=STAGES FILE            print stages: tokens,ast,types,c,cuda\n", f);
  fputs(usage_common, f);
  if (!command) fputs("  --version                     print the version\n", f);
  fputs(usage_tail, f);
}

int cli_bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "kernc: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(run 'kernc --help' for usage)\n");
  return EXIT_USAGE;
}

int cli_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("kernc: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return EXIT_USER;
}

int cli_report(const Program *p, bool color) {
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
    if (cli_report(r.prog, o->color) != EXIT_OK) rc = EXIT_USER;
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
  EmitOptions eo = {.debug = o->debug,
                    .line_directives = !o->no_line,
                    .fast_math = o->fast_math,
                    .verify_fp = o->verify_fp};
  char *code = emit_program(p, t, &eo);
  if (!code) return EXIT_INTERNAL;
  fputs(code, stdout);
  free(code);
  return EXIT_OK;
}

/* PTX through NVRTC: needs no GPU, only the CUDA toolkit's NVRTC. */
static int print_ptx(const Program *p, const Options *o) {
  int arch = 90;
  if (o->arch) {
    const char *v = o->arch + (strncmp(o->arch, "sm_", 3) == 0 ? 3 : 0);
    char *end;
    long a = strtol(v, &end, 10);
    if (!*v || *end || a < 30 || a > 200)
      return cli_bad_usage("bad --arch '%s' (expected e.g. sm_90)", o->arch);
    arch = (int)a;
  }
  EmitOptions eo = {.debug = o->debug,
                    .line_directives = !o->no_line,
                    .fast_math = o->fast_math,
                    .verify_fp = o->verify_fp};
  char *code = emit_program(p, EMIT_CUDA, &eo), *ptx = NULL;
  if (!code) return EXIT_INTERNAL;
  size_t len;
  bool is_ptx;
  unsigned flags = (o->debug ? TC_NVRTC_DEBUG : 0) | (o->fast_math ? TC_NVRTC_FAST_MATH : 0);
  kern_status s = tc_nvrtc_compile(code, p->root->path, arch, false, flags, &ptx, &len, &is_ptx);
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

/* A --dump list: known stages, separated by commas, at least one. */
static int check_stages(const char *stages) {
  const char *known[] = {"tokens", "ast", "types", "c", "cuda"};
  if (!*stages) return cli_bad_usage("%s", "--dump= needs stages: tokens,ast,types,c,cuda");
  for (const char *p = stages; *p;) {
    size_t n = strcspn(p, ",");
    bool ok = false;
    for (size_t i = 0; i < 5; i++) ok |= strlen(known[i]) == n && strncmp(p, known[i], n) == 0;
    if (!ok)
      return cli_bad_usage("unknown stage in --dump: '%s' (stages: tokens,ast,types,c,cuda)", p);
    p += n + (p[n] == ',');
  }
  return EXIT_OK;
}

static int print_target(const Program *p, const char *t, const Options *o) {
  if (strcmp(t, "ast") == 0) return print_ast(p, true);
  if (strcmp(t, "ptx") == 0) return print_ptx(p, o);
  return print_code(p, strcmp(t, "cuda") == 0 ? EMIT_CUDA : EMIT_C, o);
}

/* Compiles the one FILE and reports its diagnostics, then prints the stages
 * of `stages` (--dump; may be NULL) and the emitted `target` (may be NULL). */
static int compile_and_print(const Options *o, const char *stages, const char *target) {
  int rc = stages ? check_stages(stages) : EXIT_OK;
  if (rc != EXIT_OK) return rc;
  if (o->nfiles != 1)
    return cli_bad_usage("%s",
                         stages ? "--dump needs exactly one FILE" : "emit needs exactly one FILE");
  if (stages && wants(stages, "tokens")) dump_tokens(o->files[0]);
  FrontResult r = front_compile(o->files[0], NULL, 0);
  if (!r.prog) return EXIT_INTERNAL;
  rc = cli_report(r.prog, o->color);
  if (stages && wants(stages, "ast") && r.prog->root) print_ast(r.prog, false);
  if (rc == EXIT_OK && stages && wants(stages, "types")) print_ast(r.prog, true);
  if (rc == EXIT_OK && stages && wants(stages, "c")) rc = print_code(r.prog, EMIT_C, o);
  if (rc == EXIT_OK && stages && wants(stages, "cuda")) rc = print_code(r.prog, EMIT_CUDA, o);
  if (rc == EXIT_OK && target) rc = print_target(r.prog, target, o);
  front_free(r.prog);
  return rc;
}

static int cmd_check(const Options *o) {
  if (o->dump) return compile_and_print(o, o->dump, NULL);
  return o->nfiles ? check_files(o) : cli_bad_usage("%s", "check needs at least one FILE");
}

static int cmd_emit(const Options *o) {
  const char *t = o->target ? o->target : "c";
  if (strcmp(t, "c") && strcmp(t, "cuda") && strcmp(t, "ptx") && strcmp(t, "ast"))
    return cli_bad_usage("unknown target '%s' (targets: c, cuda, ptx, ast)", t);
  return compile_and_print(o, o->dump, t);
}

/* An option's value slot; --arg and --cpu-flags collect into lists. */
static const char **value_slot(Options *o, const char *name) {
  static const char *list_item;
  if (!strcmp(name, "--target")) return &o->target;
  if (!strcmp(name, "--arch")) return &o->arch;
  if (!strcmp(name, "-o") || !strcmp(name, "--output")) return &o->output;
  if (!strcmp(name, "--name")) return &o->name;
  if (!strcmp(name, "--cc")) return &o->cc;
  if (!strcmp(name, "--compile-timeout")) return &o->compile_timeout;
  if (!strcmp(name, "--depfile")) return &o->depfile;
  if (!strcmp(name, "--device")) return &o->device;
  if (!strcmp(name, "--dim")) return &o->dim;
  if (!strcmp(name, "--out")) return &o->out_dir;
  if (!strcmp(name, "--arg") || !strcmp(name, "--cpu-flags")) return &list_item;
  return NULL;
}

static bool set_flag(Options *o, const char *a) {
  bool *f = !strcmp(a, "--debug")                               ? &o->debug
            : !strcmp(a, "--fast-math")                         ? &o->fast_math
            : !strcmp(a, "--verify-fp")                         ? &o->verify_fp
            : !strcmp(a, "--no-line")                           ? &o->no_line
            : !strcmp(a, "--no-cuda") || !strcmp(a, "--cpu")    ? &o->no_cuda
            : !strcmp(a, "--quiet")                             ? &o->quiet
            : !strcmp(a, "--release")                           ? &o->release
            : !strcmp(a, "--color") || !strcmp(a, "--no-color") ? &o->color
                                                                : NULL;
  if (f) *f = strcmp(a, "--no-color") != 0;
  return f != NULL;
}

/* --name=VALUE or --name VALUE (-o VALUE); returns the index of the last argv
 * used, or -1 after reporting a missing value. */
static int take_value(Options *o, int argc, char **argv, int i) {
  const char *a = argv[i], *eq = strchr(a, '=');
  char name[32];
  snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
  const char **slot = value_slot(o, name);
  const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
  if (!v) return cli_bad_usage("option '%s' needs a value", name), -1;
  *slot = v;
  if (!strcmp(name, "--arg")) o->args[o->nargs++] = v;
  if (!strcmp(name, "--cpu-flags")) o->cpu_flags[o->ncpu_flags++] = v;
  return i;
}

static bool takes_value(Options *o, const char *a) {
  const char *eq = strchr(a, '=');
  char name[32];
  snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
  return value_slot(o, name) != NULL;
}

/* Parses options; returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, Options *o) {
  o->color = isatty(2);
  o->files = calloc((size_t)argc, sizeof *o->files);
  o->args = calloc((size_t)argc, sizeof *o->args);
  o->cpu_flags = calloc((size_t)argc, sizeof *o->cpu_flags);
  if (!o->files || !o->args || !o->cpu_flags) return EXIT_INTERNAL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--dump=", 7) == 0 || strcmp(a, "--dump") == 0) {
      if (a[6] != '=') return cli_bad_usage("%s", "--dump needs stages: --dump=ast,types");
      o->dump = a + 7;
    } else if (set_flag(o, a))
      continue;
    else if (a[0] == '-' && takes_value(o, a)) {
      if ((i = take_value(o, argc, argv, i)) < 0) return EXIT_USAGE;
    } else if (a[0] == '-' && a[1])
      return cli_bad_usage("unknown option '%s'", a);
    else
      o->files[o->nfiles++] = a;
  }
  return -1;
}

static void free_options(Options *o) {
  free(o->files);
  free(o->args);
  free(o->cpu_flags);
}

typedef struct Command {
  const char *name;
  int (*run)(const Options *);
} Command;

static const Command commands[] = {{"check", cmd_check}, {"emit", cmd_emit}, {"build", cli_build},
                                   {"embed", cli_embed}, {"run", cli_run},   {"info", cli_info},
                                   {"cache", cli_cache}};

static const Command *find_command(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(commands[i].name, name)) return &commands[i];
  return NULL;
}

static bool is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

/* `kernc CMD ... --help` and `kernc help [CMD]`: the usage, exit 0. */
static int help(int argc, char **argv) {
  const char *cmd = argv[1];
  if (!strcmp(cmd, "help") || is_help(cmd))
    cmd = argc > 2 && !is_help(argv[2]) ? argv[2] : NULL;
  else if (cmd[0] == '-')
    cmd = NULL; /* kernc --dump=ast --help */
  if (cmd && !find_command(cmd)) return cli_bad_usage("unknown command '%s'", cmd);
  print_usage(stdout, cmd);
  return EXIT_OK;
}

static int dispatch(const char *cmd, Options *o) {
  if (!strncmp(cmd, "--dump", 6)) {
    if (cmd[6] != '=') return cli_bad_usage("%s", "--dump needs stages: --dump=ast,types");
    if (o->dump) return cli_bad_usage("%s", "--dump given twice");
    return compile_and_print(o, cmd + 7, NULL);
  }
  const Command *c = find_command(cmd);
  if (!c) return cli_bad_usage("unknown command '%s'", cmd);
  if (o->dump && c->run != cmd_check && c->run != cmd_emit)
    return cli_bad_usage("--dump goes with check or emit (or alone), not with %s", cmd);
  return c->run(o);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_usage(stderr, NULL);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("kernc %s\n", KERN_VERSION_STRING);
    return EXIT_OK;
  }
  bool want_help = !strcmp(argv[1], "help");
  for (int i = 1; i < argc; i++) want_help |= is_help(argv[i]);
  if (want_help) return help(argc, argv);
  Options o = {0};
  int rc = parse_args(argc, argv, &o);
  if (rc < 0) rc = dispatch(argv[1], &o);
  free_options(&o);
  return rc;
}
