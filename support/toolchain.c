/* toolchain.c: the system C compiler: which one, its flags, who it is, running it.
 *
 * Requires: proc.c (finding and running programs). Produces: tc_cc_find,
 * tc_cc_is_clang, tc_cc_flags, tc_cc_identity, tc_cc_run.
 * Breaks: nothing is cached but the identity lines (one `cc --version` per
 * compiler path and process); KERN_CPU_OPT is read at every tc_cc_flags, so a
 * process may build one module at -O0 and the next at -O3. The default is
 * -O2 for clang and -O3 for gcc: on a 2-core AMD EPYC, clang 14's SLP
 * vectoriser at -O3 packed the mandelbrot workload's x and y into one
 * register (1.67 of the C baseline's time, 1.10 at -O2) and nothing in
 * `make bench` ran faster at -O3, while gcc 12 at -O2 (its cheapest
 * vectoriser cost model) left saxpy and nbody scalar, 2.9x and 2x slower
 * than at -O3 (docs/performance.md).
 */
#include "toolchain.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"
#include "str.h"

/* ---- which compiler ------------------------------------------------------------------ */

char *tc_cc_find(const char *requested, const char **name) {
  const char *const defaults[] = {"clang", "cc"};
  bool asked = requested && *requested;
  for (int i = 0; i < (asked ? 1 : 2); i++) {
    const char *want = asked ? requested : defaults[i];
    if (name) *name = want;
    char *path = proc_find(want);
    if (path || asked) return path;
  }
  return NULL;
}

/* clang stops at 256 nested brackets, and programs within the parser's
 * limits nest deeper than that in the generated C (a right-nested sum of 200
 * terms); gcc has no such limit and no such flag. */
bool tc_cc_is_clang(const char *cc) {
  char *found = proc_find(cc), *real = found ? realpath(found, NULL) : NULL;
  free(found);
  const char *path = real ? real : cc, *base = strrchr(path, '/');
  bool clang = strstr(base ? base + 1 : path, "clang") != NULL;
  free(real);
  return clang;
}

/* ---- flags ------------------------------------------------------------------------------- */

/* The flags at each optimisation level; -fwrapv, -fno-math-errno,
 * -ffp-contract=off, -fno-strict-aliasing and -fno-finite-loops are part of
 * what generated code means. Generated code reads a matrix's row through a
 * pointer to the row's vector type (codegen/emit.c), which type-based alias
 * analysis may order before the matrix's store: gcc at -O2 did, and read
 * garbage. The last keeps endless loops endless at every level: C11
 * lets a compiler assume that a loop without side effects and with a
 * non-constant condition terminates, and clang (12 and newer) at -O1 and up
 * deletes such a loop, so `while (flag[0] == 0) {}` would hang at -O0 and
 * return at -O3. gcc assumes it only for C++ (the flag is accepted by gcc 10
 * and newer, and states the rule for every compiler). */
#define SHARED_FLAGS(opt)                                                                          \
  {                                                                                                \
    "-std=c11", opt, "-march=native", "-fPIC", "-shared", "-fwrapv", "-fno-math-errno",            \
        "-ffp-contract=off", "-fno-strict-aliasing", "-fno-finite-loops", "-w", NULL               \
  }
#define OBJECT_FLAGS(opt)                                                                          \
  {                                                                                                \
    "-std=c11", opt, "-fPIC", "-fwrapv", "-fno-math-errno", "-ffp-contract=off",                   \
        "-fno-strict-aliasing", "-fno-finite-loops", "-w", NULL                                    \
  }
static const char *const shared_flags[4][12] = {SHARED_FLAGS("-O0"), SHARED_FLAGS("-O1"),
                                                SHARED_FLAGS("-O2"), SHARED_FLAGS("-O3")};
static const char *const object_flags[4][10] = {OBJECT_FLAGS("-O0"), OBJECT_FLAGS("-O1"),
                                                OBJECT_FLAGS("-O2"), OBJECT_FLAGS("-O3")};

const char *const *tc_cc_flags(TcOutput out, const char *cc) {
  const char *s = getenv("KERN_CPU_OPT");
  int level = s && s[0] >= '0' && s[0] <= '3' && !s[1] ? s[0] - '0'
              : cc && tc_cc_is_clang(cc)               ? 2
                                                       : 3;
  return out == TC_SHARED_NATIVE ? shared_flags[level] : object_flags[level];
}

const char *const *tc_fast_math_flags(void) {
  /* not -ffast-math: its -ffinite-math-only would make isnan() false */
  static const char *const flags[] = {"-ffp-contract=fast", "-fno-signed-zeros",
                                      "-fno-trapping-math", "-fassociative-math",
                                      "-freciprocal-math",  NULL};
  return flags;
}

/* ---- identity ------------------------------------------------------------------------------ */

typedef struct ident {
  char *path, *line;
  struct ident *next;
} ident;
static pthread_mutex_t ident_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&ident_mu, NULL, FORK_RANK_CC_ID)
static ident *idents;

static char *first_line(const char *s) {
  size_t n = s ? strcspn(s, "\n") : 0;
  return str_printf("%.*s", (int)n, s ? s : "");
}

/* `false --version` prints a version but exits 1: only a clean exit counts. */
const char *tc_cc_identity(const char *cc, int timeout_ms) {
  pthread_mutex_lock(&ident_mu);
  ident *e = idents;
  while (e && strcmp(e->path, cc) != 0) e = e->next;
  pthread_mutex_unlock(&ident_mu);
  if (e) return e->line;
  const char *argv[] = {cc, "--version", NULL};
  Buf out = {0};
  ProcResult r;
  bool answered = proc_run(&(ProcSpec){.argv = argv, .output = &out, .timeout_ms = timeout_ms}, &r);
  ident *n = calloc(1, sizeof *n);
  char *line = first_line(answered ? out.s : NULL), *path = str_dup(cc);
  buf_free(&out);
  if (!n || !line || !path) {
    free(n), free(line), free(path);
    return "";
  }
  n->path = path;
  n->line = line;
  pthread_mutex_lock(&ident_mu);
  n->next = idents;
  idents = n;
  pthread_mutex_unlock(&ident_mu);
  return n->line;
}

int tc_cc_timeout_ms(const char *seconds) {
  if (!seconds || !*seconds) return TC_CC_TIMEOUT_DEFAULT_MS;
  char *end;
  errno = 0;
  double v = strtod(seconds, &end);
  if (errno || *end || end == seconds || !(v >= 0) || v > 1e12) return -1;
  double ms = v * 1000.0;
  return ms >= (double)INT_MAX ? INT_MAX : v > 0 && ms < 1 ? 1 : (int)ms;
}

/* ---- running --------------------------------------------------------------------------------- */

static size_t count(const char *const *v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

bool tc_cc_run(const TcCompile *c, ProcResult *r) {
  const char *const *kern = tc_cc_flags(c->output, c->cc);
  size_t room = 4 + count(kern) + count(c->flags) + count(c->inputs);
  const char **argv = calloc(room, sizeof *argv);
  if (!argv) {
    *r = (ProcResult){.err = ENOMEM};
    return false;
  }
  size_t n = 0;
  argv[n++] = c->cc;
  for (const char *const *f = kern; *f; f++) argv[n++] = *f;
  if (tc_cc_is_clang(c->cc)) argv[n++] = "-fbracket-depth=4096";
  if (c->debug) argv[n++] = "-g";
  for (size_t i = 0; i < count(c->flags); i++) argv[n++] = c->flags[i];
  for (size_t i = 0; i < count(c->inputs); i++) argv[n++] = c->inputs[i];
  argv[n] = NULL;
  ProcSpec spec = {.argv = argv,
                   .cwd = c->cwd,
                   .timeout_ms = c->timeout_ms,
                   .output = c->log,
                   .max_output = 1 << 20,
                   .group = c->group};
  bool ok = proc_run(&spec, r);
  free(argv);
  return ok;
}
