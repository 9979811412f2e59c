/* output.c: what kernc's generators (build.c, embed.c) share to write their
 * files: C identifiers and data, outputs that appear whole, make rules.
 *
 * Requires: the support layer (Buf, files). Produces: cli_output_prefix,
 * cli_ident, cli_c_literal, cli_c_bytes, cli_temp_beside, cli_commit_temp,
 * cli_temp_remove, the cleanup list (cli_cleanup_*), cli_dep_rule.
 * Breaks: outputs are written to temporary names beside their final ones and
 * renamed at the end, so a failure never leaves a partial file. Temporary
 * paths are on a list that a handler of SIGINT, SIGTERM, SIGHUP, SIGQUIT and
 * the crash signals empties (unlink, rmdir: async-signal-safe calls only)
 * before the signal goes on to its previous action, so an interrupted or
 * crashed kernc leaves nothing behind either.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"

char *cli_output_prefix(const char *out) {
  size_t n = strlen(out);
  if (n > 2 && out[n - 2] == '.' && strchr("ohc", out[n - 1])) n -= 2;
  char *p = malloc(n + 1);
  if (p) memcpy(p, out, n), p[n] = 0;
  return p;
}

bool cli_is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char *cli_ident(const char *name, const char *prefix) {
  const char *base = name ? name : strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
  char *id = malloc(strlen(base) + 3);
  if (!id) return NULL;
  size_t n = 0;
  if (base[0] >= '0' && base[0] <= '9') id[n++] = 'm', id[n++] = '_';
  for (const char *p = base; *p; p++) id[n++] = cli_is_ident_char(*p) ? *p : '_';
  id[n] = 0;
  return id;
}

/* Escapes quotes, backslashes, '?' (trigraphs) and every byte outside
 * printable ASCII. */
void cli_c_literal(Buf *out, const char *s) {
  buf_add(out, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '?')
      buf_printf(out, "\\%c", *p);
    else if (*p < 32 || *p > 126)
      buf_printf(out, "\\%03o", *p);
    else
      buf_add(out, (const char *)p, 1);
  }
  buf_add(out, "\"", 1);
}

void cli_c_bytes(Buf *out, const char *name, const unsigned char *p, size_t n) {
  buf_printf(out, "static const unsigned char %s[%zu] __attribute__((aligned(16))) = {\n", name,
             n + 1);
  char line[32 * 4 + 8];
  for (size_t i = 0; i <= n;) {
    size_t k = 0;
    for (int j = 0; j < 32 && i <= n; j++, i++) {
      unsigned v = i < n ? p[i] : 0;
      if (v >= 100) line[k++] = (char)('0' + v / 100);
      if (v >= 10) line[k++] = (char)('0' + v / 10 % 10);
      line[k++] = (char)('0' + v % 10);
      line[k++] = ',';
    }
    line[k++] = '\n';
    buf_add(out, line, k);
  }
  buf_add(out, "};\n", 3);
}

/* ---- cleaning up on signals ---------------------------------------------------------------- */

enum { MAX_CLEANUP = 16 };
static char *_Atomic cleanup_path[MAX_CLEANUP];
static _Atomic bool cleanup_dir[MAX_CLEANUP];
_Atomic int cli_child_group;

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV,
                                      SIGBUS, SIGILL,  SIGFPE, SIGABRT};
enum { NSIGNALS = sizeof cleanup_signals / sizeof *cleanup_signals };
static struct sigaction previous[NSIGNALS];

void cli_cleanup_add(char *path, bool dir) {
  for (int i = 0; path && i < MAX_CLEANUP; i++)
    if (!atomic_load(&cleanup_path[i])) { /* kernc has one thread: no one takes it meanwhile */
      atomic_store(&cleanup_dir[i], dir);
      atomic_store(&cleanup_path[i], path);
      return;
    }
}

void cli_cleanup_forget(const char *path) {
  for (int i = 0; path && i < MAX_CLEANUP; i++)
    if (atomic_load(&cleanup_path[i]) == path) atomic_store(&cleanup_path[i], NULL);
}

/* Files first, then the directories that held them. */
static void cleanup_now(void) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < MAX_CLEANUP; i++) {
      char *p = atomic_load(&cleanup_path[i]);
      if (!p || atomic_load(&cleanup_dir[i]) != (pass == 1)) continue;
      if (pass == 1)
        rmdir(p);
      else
        unlink(p);
    }
}

/* A fault the processor raised (not a kill(1)) happens again when the handler
 * returns, now under the previous action (the default, or a sanitizer's
 * report); anything else is raised again. */
static void on_signal(int sig, siginfo_t *info, void *context) {
  (void)context;
  int group = atomic_load(&cli_child_group);
  if (group > 0) kill(-group, SIGTERM); /* the compiler, which removes its own temporaries */
  cleanup_now();
  for (int i = 0; i < NSIGNALS; i++)
    if (cleanup_signals[i] == sig) sigaction(sig, &previous[i], NULL);
  bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
  if (!fault || info->si_code <= 0) raise(sig);
}

void cli_cleanup_on_signals(void) {
  struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NSIGNALS; i++) {
    sigaction(cleanup_signals[i], NULL, &previous[i]);
    if (previous[i].sa_handler != SIG_IGN) /* nohup's SIGHUP stays ignored */
      sigaction(cleanup_signals[i], &sa, NULL);
  }
}

/* ---- temporary outputs ------------------------------------------------------------------------ */

char *cli_temp_beside(const char *path) {
  size_t n = strlen(path) + 16;
  char *t = malloc(n);
  if (!t) return NULL;
  snprintf(t, n, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(t);
  if (fd < 0) {
    free(t);
    return NULL;
  }
  cli_cleanup_add(t, false);
  fchmod(fd, 0644);
  close(fd);
  return t;
}

int cli_commit_temp(char **tmp, const char *dst) {
  if (!*tmp) return EXIT_OK;
  if (rename(*tmp, dst) != 0) return cli_fail("cannot write '%s': %s", dst, strerror(errno));
  cli_cleanup_forget(*tmp);
  free(*tmp);
  *tmp = NULL;
  return EXIT_OK;
}

void cli_temp_remove(char **tmp, bool dir) {
  if (!*tmp) return;
  cli_cleanup_forget(*tmp);
  if (dir)
    rmdir(*tmp);
  else
    unlink(*tmp);
  free(*tmp);
  *tmp = NULL;
}

/* Spaces and '#' escaped, '$' doubled, for make and CMake's DEPFILE. */
static void put_dep(Buf *out, const char *path) {
  char canon[PATH_MAX];
  const char *p = realpath(path, canon) ? canon : path;
  buf_add(out, " ", 1);
  for (; *p; p++) {
    if (*p == ' ' || *p == '#') buf_add(out, "\\", 1);
    if (*p == '$') buf_add(out, "$", 1);
    buf_add(out, p, 1);
  }
}

void cli_dep_rule(Buf *out, const char *targets, const Program *p) {
  buf_printf(out, "%s:", targets);
  put_dep(out, p->root->path);
  for (const Module *m = p->modules; m; m = m->next)
    if (m != p->root) put_dep(out, m->path);
  buf_add(out, "\n", 1);
}
