/* test_hardening.c: inputs a hostile user would try against the compiler and
 * the standard library, each with the limit or behaviour docs/robustness.md
 * promises: huge parameter lists, long call and else-if chains, huge struct
 * values, bool bytes other than 0 and 1, names that collide or run long,
 * matrix inverses, struct dtypes nested into exponential sizes, million-term
 * expressions, printf widths, a byte order mark, recursion cycles of 100,000
 * functions.
 *
 * Requires: a C compiler for CPU launches; NVRTC for the CUDA compile checks
 * (without it they say so in the log and check the rest). Sources are made
 * here, in C. Big inputs are compiled in a forked child (fresh library state,
 * peak memory measured there) or on a thread with a 2 MiB stack.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"
#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HARDEN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HARDEN_SANITIZED 1
#endif
#endif

#ifdef HARDEN_SANITIZED
enum { SMALL_STACK = 8 << 20, SLOW = 4 }; /* sanitizers make every frame bigger and slower */
#else
enum { SMALL_STACK = 2 << 20, SLOW = 1 };
#endif

/* ---- text ---------------------------------------------------------------------------- */

typedef struct Str {
  char *s;
  size_t len, cap;
} Str;

static void sadd(Str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sadd(Str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->s = realloc(b->s, b->cap);
    cr_assert_not_null(b->s);
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* ---- forked children with their peak memory ---------------------------------------- */

typedef struct Child {
  bool done;
  kern_status status;
  char message[4096];
  double seconds;
  long rss_before_kb, peak_kb; /* VmRSS before the work, VmHWM after */
  int64_t value;
} Child;

static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
  if (f) fclose(f);
  return v;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs fn in a forked child that must exit normally; the peak resident memory
 * is measured from a reset high-water mark (clear_refs 5), so what the parent
 * had does not count. */
static Child run_child(void (*fn)(Child *, const void *), const void *arg) {
  Child *shared =
      mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(shared, MAP_FAILED);
  memset(shared, 0, sizeof *shared);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) fputs("5", f), fclose(f);
    shared->rss_before_kb = status_kb("VmRSS");
    double t0 = now();
    fn(shared, arg);
    shared->seconds = now() - t0;
    shared->peak_kb = status_kb("VmHWM");
    shared->done = true;
    _exit(0);
  }
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  Child r = *shared;
  munmap(shared, sizeof *shared);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child died: %s %d",
            WIFSIGNALED(st) ? "signal" : "exit status",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  cr_assert(r.done);
  return r;
}

static void record(Child *c, kern_status st) {
  c->status = st;
  snprintf(c->message, sizeof c->message, "%s", st ? kern_last_error() : "");
}

/* ---- struct dtypes nested into exponential sizes ----------------------------------- */

/* struct A0 { int8 x; }; struct A{j} { A{j-1} a; A{j-1} b; } up to A{n}: 2^n bytes. */
static void sdag(Str *b, int n) {
  sadd(b, "struct A0 { int8 x; };\n");
  for (int j = 1; j <= n; j++) sadd(b, "struct A%d { A%d a; A%d b; };\n", j, j - 1, j - 1);
}

static void load_sdag(Child *c, const void *arg) {
  const char *src = arg;
  kern_init();
  kern_module *m = kern_module_from_source("sdag.kern", src);
  kern_kernel *k = m ? kern_module_kernel(m, "k") : NULL;
  kern_dtype dt = m ? kern_module_dtype(m, "A30") : KERN_DTYPE_INVALID;
  record(c, k && dt != KERN_DTYPE_INVALID ? KERN_OK : kern_last_status());
  c->value = (int64_t)kern_dtype_size(dt);
  kern_module_free(m);
}

/* struct A30 is 2^30 bytes made of 31 declarations: loading it (its kernel's
 * parameter dtypes) costs what 31 declarations cost, not what 2^30 leaves do. */
Test(structs, thirty_levels_of_doubling_structs_load_fast_in_little_memory) {
  Str b = {0};
  sdag(&b, 30);
  sadd(&b, "kernel void k(float[] x, A30[] p) { x[tid()] = 1.0; }\n");
  Child c = run_child(load_sdag, b.s);
  cr_expect_eq(c.status, KERN_OK, "%s", c.message);
  cr_expect_eq(c.value, (int64_t)1 << 30);
  long grew = c.peak_kb - c.rss_before_kb;
  cr_log_info("sdag 30: %.3f s, peak resident memory +%ld KiB", c.seconds, grew);
  cr_expect_lt(c.seconds, 1.0 * SLOW, "%.2f s", c.seconds);
  cr_expect_lt(grew, 64 << 10, "peak resident memory grew by %ld KiB", grew);
  free(b.s);
}
