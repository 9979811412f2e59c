/* cli.h: what kernc's command files share: options, exit codes, messages.
 *
 * kernc.c parses the command line into Options and dispatches; build.c
 * (`kernc build`), embed.c (`kernc embed`), run.c (`kernc run`), info.c
 * (`kernc info`, `kernc cache`) and npy.c (NumPy files for run) do the work; output.c
 * writes the generators' files. Only kernc.c's main maps results to the
 * process exit status.
 */
#ifndef KERN_CLI_H
#define KERN_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"

enum { EXIT_OK = 0, EXIT_USER = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

typedef struct Options {
  const char *target; /* emit --target */
  const char *arch;   /* --arch: one for emit, a list for build */
  const char *dump;
  const char *output;          /* build -o PREFIX */
  const char *name;            /* build --name: the C identifier prefix */
  const char *cc;              /* build --cc */
  const char *compile_timeout; /* build --compile-timeout (seconds) */
  const char **cpu_flags;      /* build --cpu-flags (each split at spaces later) */
  int ncpu_flags;
  const char *depfile; /* build --depfile */
  const char *device;  /* run --device */
  const char *dim;     /* run --dim */
  const char *out_dir; /* run --out */
  const char **args;   /* run --arg NAME=VALUE */
  int nargs;
  bool debug, no_line, color, no_cuda, quiet;
  bool fast_math;     /* emit, build --fast-math: kern_module_set_fast_math's code */
  bool verify_fp;     /* emit --verify-fp: kern_module_set_verify_fp's code */
  bool release;       /* run --release: no debug mode, no dims check */
  const char **files; /* positional arguments */
  int nfiles;
} Options;

/* "kernc: <message>" and the help hint on stderr; returns EXIT_USAGE. */
int cli_bad_usage(const char *fmt, const char *arg);
/* Prints a program's diagnostics; returns EXIT_USER if it has errors. */
int cli_report(const Program *, bool color);
/* "kernc: <message>" on stderr; returns EXIT_USER. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- output.c: writing generated files ---------------------------------------------------- */

struct Buf;
/* -o may name the outputs' stem or one of them (.o, .h, .c): the stem (malloc'd). */
char *cli_output_prefix(const char *out);
bool cli_is_ident_char(char c);
/* The C name prefix: name (--name), else the base name of prefix, made an
 * identifier (malloc'd). */
char *cli_ident(const char *name, const char *prefix);
/* s as a C string literal. */
void cli_c_literal(struct Buf *, const char *s);
/* `static const unsigned char name[n + 1]`: the n bytes and a NUL. */
void cli_c_bytes(struct Buf *, const char *name, const unsigned char *p, size_t n);
/* A new empty file "<path>.tmp-XXXXXX" beside path (malloc'd name); NULL
 * (errno) if the directory is not writable. */
char *cli_temp_beside(const char *path);
/* Renames *tmp to dst (nothing when *tmp is NULL) and forgets it; a message
 * and EXIT_USER on failure. */
int cli_commit_temp(char **tmp, const char *dst);
/* Removes *tmp (a file, or an empty directory when dir), frees it, NULLs it. */
void cli_temp_remove(char **tmp, bool dir);
/* The paths a fatal signal removes (cli_temp_beside's are added, and
 * forgotten when committed or removed); path must stay valid until
 * forgotten. At most 16. */
void cli_cleanup_add(char *path, bool dir);
void cli_cleanup_forget(const char *path);
/* Installs the handler that removes them on SIGINT, SIGTERM, SIGHUP, SIGQUIT
 * and crashes, then lets the signal take its previous course. */
void cli_cleanup_on_signals(void);
/* The process group of the compiler kernc build runs (0 when none): the
 * handler stops it too. */
extern _Atomic int cli_child_group;
/* "targets: the module's files" (root first), paths made canonical and
 * escaped for make and CMake's DEPFILE. */
void cli_dep_rule(struct Buf *, const char *targets, const Program *);

int cli_build(const Options *);
int cli_embed(const Options *);
int cli_run(const Options *);
int cli_info(const Options *);
int cli_cache(const Options *);

#endif
