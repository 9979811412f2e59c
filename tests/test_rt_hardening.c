/* test_rt_hardening.c: what a hostile user tries against the runtime rather
 * than the compiler: fork() while other threads use kern, loops that never
 * end at any optimisation level, type punning the C compiler must not
 * exploit, shapes whose strides would overflow, and
 * yes/no environment variables spelled every usual way.
 *
 * Requires: a C compiler for CPU launches (clang, and gcc when present, for
 * the loop checks); kernc and NVRTC for the PTX check (without NVRTC it says
 * so in the log and checks the rest). Children of fork() are always waited
 * for with a deadline and killed when they pass it, so a deadlock fails the
 * test instead of hanging it.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "env.h"
#include "harness.h"
#include "kern.h"
#include "nvrtc.h"
#include "proc.h"
#include "toolchain.h"

static const char *add_src = "kernel void add(int[] x, int v) {\n"
                             "    int i = tid();\n"
                             "    x[i] = x[i] + v;\n"
                             "}\n";

static void setup(void) {
  th_default_cache_dir("rt-hardening");
  cr_assert_eq(kern_init(), KERN_OK);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + (double)t.tv_nsec / 1e6;
}

/* Waits for pid up to ms; -1 when it is still running then (it is killed
 * and reaped), else its exit status (128 + signal when killed by one). */
static int wait_deadline(pid_t pid, double ms) {
  double end = now_ms() + ms;
  int status;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0 && errno != EINTR) return -2;
    if (now_ms() > end) break;
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

/* ---- fork ---------------------------------------------------------------------------- */

typedef struct busy {
  _Atomic bool stop;
  long rounds, failures;
} busy;

/* Loads, launches (on one thread and on the pool), allocates and frees, as
 * fast as it can, so that fork() lands inside every kind of call. */
static void *keep_busy(void *p) {
  busy *b = p;
  int64_t small = 64, big = 100000;
  while (!atomic_load(&b->stop)) {
    kern_module *m = kern_module_from_source("busy.kern", add_src);
    kern_kernel *k = m ? kern_module_kernel(m, "add") : NULL;
    kern_array *x = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &small);
    kern_array *y = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &big);
    if (!k || !x || !y || KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(small), x, 1) ||
        KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(big), y, 1))
      b->failures++;
    kern_array_free(x);
    kern_array_free(y);
    kern_module_free(m);
    b->rounds++;
  }
  return NULL;
}

/* What each child does: a module of its own, an array, a launch on the pool,
 * the result read back. Exit status 0 when all went right. */
static int child_work(kern_kernel *parents) {
  kern_device *cpu = kern_device_get("cpu");
  int64_t n = 100000;
  kern_array *x = kern_array_new(cpu, KERN_INT32, 1, &n);
  kern_module *m = kern_module_from_source("child.kern", add_src);
  kern_kernel *k = m ? kern_module_kernel(m, "add") : NULL;
  if (!x || !k) return 1;
  if (KERN_LAUNCH(parents, cpu, KERN_DIM1(n), x, 2) || KERN_LAUNCH(k, cpu, KERN_DIM1(n), x, 3))
    return 2;
  int32_t *h = malloc((size_t)n * sizeof *h);
  if (!h || kern_array_read(x, h, (size_t)n * sizeof *h)) return 3;
  for (int64_t i = 0; i < n; i++)
    if (h[i] != 5) return 4;
  return 0;
}

/* AddressSanitizer's own allocator and symbolizer locks are not fork-safe in a
 * process whose other threads allocate: under it a child can hang inside the
 * sanitizer, not kern, so the stress runs in the normal and TSan builds. */
#if defined(__SANITIZE_ADDRESS__)
#define FORK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORK_UNDER_ASAN 1
#endif
#endif

Test(fork, children_of_a_busy_process_never_deadlock, .init = setup, .timeout = 240) {
#ifdef FORK_UNDER_ASAN
  cr_skip_test("an AddressSanitizer build: its allocator is not fork-safe under other threads");
#endif
  kern_module *m = kern_module_from_source("parent.kern", add_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "add");
  int64_t one = 1;
  kern_array *warm = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &one);
  cr_assert_eq(KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(1), warm, 1), KERN_OK, "%s",
               kern_last_error()); /* compiled (and cached) before the forks */
  busy b = {.stop = false};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, keep_busy, &b), 0);
  enum { CHILDREN = 200, MAX_HUNG = 3 };
  int hung = 0, failed = 0, first_bad = 0, n = 0;
  for (; n < CHILDREN && hung < MAX_HUNG; n++) {
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) _exit(child_work(k));
    int st = wait_deadline(pid, 20000);
    if (st == -1) hung++;
    if (st > 0 && !failed++) first_bad = st;
  }
  atomic_store(&b.stop, true);
  pthread_join(t, NULL);
  cr_expect_eq(hung, 0, "%d of %d children were still running after 20 s (deadlocked)", hung, n);
  cr_expect_eq(failed, 0, "%d children failed (the first with status %d)", failed, first_bad);
  cr_expect_eq(b.failures, 0, "the busy thread's calls");
  cr_log_info("%d children; the busy thread ran %ld rounds meanwhile", n, b.rounds);
  kern_array_free(warm);
  kern_module_free(m);
}

typedef struct first_launch {
  kern_kernel *k;
  _Atomic bool started;
  kern_status st;
  char msg[512];
} first_launch;

static void *launch_first(void *p) {
  first_launch *f = p;
  int64_t n = 8;
  kern_array *x = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &n);
  atomic_store(&f->started, true);
  f->st = KERN_LAUNCH(f->k, kern_device_get("cpu"), KERN_DIM1(n), x, 1);
  snprintf(f->msg, sizeof f->msg, "%s", kern_last_error());
  kern_array_free(x);
  return NULL;
}

/* A module whose first compile another thread has under way at the fork
 * cannot be finished in the child (that thread is not there): its launch
 * there is an error at once, never a wait for ever. */
Test(fork, a_module_compiling_at_the_fork_is_an_error_in_the_child, .init = setup, .timeout = 120) {
  char *clang = proc_find("clang"), *cc = clang ? clang : proc_find("cc");
  cr_assert_not_null(cc, "no C compiler");
  const char *tmp = getenv("TMPDIR");
  char dir[512], path[600], cmd[700];
  snprintf(dir, sizeof dir, "%s/kern-slowcc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/slow-cc.sh", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  /* Slow only when compiling: `--version` (the compiler's identity) is quick. */
  fprintf(f,
          "#!/bin/sh\ncase \"$1\" in --version) exec '%s' \"$@\";; esac\nsleep 2\nexec '%s' "
          "\"$@\"\n",
          cc, cc);
  fclose(f);
  cr_assert_eq(chmod(path, 0755), 0);
  setenv("KERN_CC", path, 1);
  rt_config_reload();
  char src[256]; /* never compiled before: the compile is not a cache hit */
  snprintf(src, sizeof src, "kernel void add(int[] x, int v) { x[tid()] = x[tid()] + v + %ld; }\n",
           ((long)getpid() * 7919L + (long)now_ms()) % 1000000000L);
  kern_module *m = kern_module_from_source("slow.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  first_launch fl = {.k = kern_module_kernel(m, "add"), .started = false};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, launch_first, &fl), 0);
  while (!atomic_load(&fl.started)) sched_yield();
  struct timespec nap = {0, 500000000}; /* well inside the compiler's 2 s */
  nanosleep(&nap, NULL);
  double t0 = now_ms();
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    int64_t n = 8;
    kern_array *x = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &n);
    kern_status st = KERN_LAUNCH(fl.k, kern_device_get("cpu"), KERN_DIM1(n), x, 1);
    _exit(st == KERN_ERR_UNSUPPORTED && strstr(kern_last_error(), "forked") ? 0 : 1);
  }
  int st = wait_deadline(pid, 20000);
  double took = now_ms() - t0;
  pthread_join(t, NULL);
  unsetenv("KERN_CC");
  rt_config_reload();
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  th_run(cmd, NULL);
  free(clang);
  if (cc != clang) free(cc);
  cr_expect_neq(st, -1, "the child waited for a compile that cannot finish there");
  cr_expect_eq(st, 0, "the child's launch: want KERN_ERR_UNSUPPORTED naming the fork (status %d)",
               st);
  cr_expect_lt(took, 1500, "the child answered at once, not after the parent's compile");
  cr_expect_eq(fl.st, KERN_OK, "the parent's own compile finished: %s", fl.msg);
  kern_module_free(m);
}

/* ---- loops that never end ------------------------------------------------------------ */

static const char *spin_src = "kernel void spin(int[] flag, int[] out) {\n"
                              "    int n = 0;\n"
                              "    while (flag[0] == 0) { n = n + 1; }\n"
                              "    out[0] = 7;\n"
                              "}\n";

/* A loop with no side effects whose flag is 0 never ends; C11 lets a
 * compiler assume it does and delete it. With the flag set it ends at once
 * (that first launch also compiles the module); a child then launches it
 * with the flag clear and must still be spinning a second later. */
static void expect_spins_for_ever(const char *cc) {
  setenv("KERN_CC", cc, 1);
  setenv("KERN_CPU_OPT", "3", 1);
  rt_config_reload();
  kern_module *m = kern_module_from_source("spin.kern", spin_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "spin");
  kern_device *cpu = kern_device_get("cpu");
  int64_t one = 1;
  kern_array *flag = kern_array_new(cpu, KERN_INT32, 1, &one),
             *out = kern_array_new(cpu, KERN_INT32, 1, &one);
  int32_t v = 1;
  cr_assert_eq(kern_array_write(flag, &v, sizeof v), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(k, cpu, KERN_DIM1(1), flag, out), KERN_OK, "%s: %s", cc,
               kern_last_error());
  cr_assert_eq(kern_array_read(out, &v, sizeof v), KERN_OK);
  cr_assert_eq(v, 7, "%s: the loop ends when the flag is set", cc);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    int32_t zero = 0;
    kern_array_write(flag, &zero, sizeof zero);
    kern_array_write(out, &zero, sizeof zero);
    KERN_LAUNCH(k, cpu, KERN_DIM1(1), flag, out);
    int32_t got = -1;
    kern_array_read(out, &got, sizeof got);
    _exit(got == 7 ? 3 : 4);
  }
  int st = wait_deadline(pid, 1000);
  cr_expect_eq(st, -1,
               "%s at -O3: the endless loop returned (exit status %d; 3: it wrote its result): "
               "the optimiser deleted it",
               cc, st);
  kern_array_free(flag);
  kern_array_free(out);
  kern_module_free(m);
  unsetenv("KERN_CC");
  unsetenv("KERN_CPU_OPT");
  rt_config_reload();
}

Test(loops, an_endless_loop_stays_endless_at_O3_with_clang_and_gcc, .init = setup, .timeout = 120) {
  const char *const compilers[] = {"clang", "gcc"};
  int tried = 0;
  for (int i = 0; i < 2; i++) {
    char *path = proc_find(compilers[i]);
    if (!path) {
      cr_log_warn("%s is not installed: its loop check is skipped", compilers[i]);
      continue;
    }
    expect_spins_for_ever(path);
    free(path);
    tried++;
  }
  cr_assert_gt(tried, 0, "neither clang nor gcc is installed");
}

/* Both the JIT and kernc build compile generated C with the flag. */
Test(loops, every_c_compile_passes_no_finite_loops) {
  const TcOutput outs[] = {TC_SHARED_NATIVE, TC_OBJECT_PORTABLE};
  const char *const levels[] = {"0", "1", "2", "3"};
  for (int l = 0; l < 4; l++) {
    setenv("KERN_CPU_OPT", levels[l], 1);
    for (int o = 0; o < 2; o++) {
      bool found = false;
      for (const char *const *f = tc_cc_flags(outs[o], "cc"); *f; f++)
        found |= !strcmp(*f, "-fno-finite-loops");
      cr_expect(found, "KERN_CPU_OPT=%s, output %d", levels[l], o);
    }
  }
  unsetenv("KERN_CPU_OPT");
}

/* ---- type punning in generated code ------------------------------------------------------- */

/* A matrix's row is read through a pointer to its vector type: without
 * -fno-strict-aliasing, gcc at -O2 moved those reads before the parameter's
 * copy and read garbage. */
static const char *rows_src = "void put33(float[] r, mat33 m) {\n"
                              "    for (int i = 0; i < 3; i++) {\n"
                              "        vec3 row = m[i];\n"
                              "        r[3 * i] = row.x;\n"
                              "        r[3 * i + 1] = row.y;\n"
                              "        r[3 * i + 2] = row.z;\n"
                              "    }\n"
                              "}\n"
                              "kernel void k(mat33 m, float[] r) {\n"
                              "    put33(r, m * diag(vec3(1, 2, 3)) * transpose(m));\n"
                              "}\n";

static void expect_rows(const char *cc, const char *level) {
  setenv("KERN_CC", cc, 1);
  setenv("KERN_CPU_OPT", level, 1);
  rt_config_reload();
  kern_module *m = kern_module_from_source("rows.kern", rows_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_device *cpu = kern_device_get("cpu");
  int64_t nine = 9;
  kern_array *r = kern_array_new(cpu, KERN_FLOAT32, 1, &nine);
  kern_mat33 a = {{{1, 2, 0}, {0.5f, -1, 3}, {2, 0.25f, -1}}};
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "k"), cpu, KERN_DIM1(1), a, r), KERN_OK, "%s: %s",
               cc, kern_last_error());
  float got[9], want[9];
  cr_assert_eq(kern_array_read(r, got, sizeof got), KERN_OK);
  for (int i = 0; i < 3; i++) /* a diag(1, 2, 3) a^T, small integers and quarters: exact */
    for (int j = 0; j < 3; j++) {
      want[3 * i + j] = 0;
      for (int k = 0; k < 3; k++) want[3 * i + j] += a.m[i][k] * (float)(k + 1) * a.m[j][k];
    }
  for (int i = 0; i < 9; i++)
    cr_expect_eq(got[i], want[i], "%s -O%s: element %d is %g, want %g", cc, level, i, got[i],
                 want[i]);
  kern_array_free(r);
  kern_module_free(m);
  unsetenv("KERN_CC");
  unsetenv("KERN_CPU_OPT");
  rt_config_reload();
}

Test(aliasing, matrix_rows_of_a_parameter_with_clang_and_gcc, .init = setup, .timeout = 120) {
  const char *const compilers[] = {"clang", "gcc"}, *const levels[] = {"2", "3"};
  int tried = 0;
  for (int i = 0; i < 2; i++) {
    char *path = proc_find(compilers[i]);
    if (!path) {
      cr_log_warn("%s is not installed: its aliasing check is skipped", compilers[i]);
      continue;
    }
    for (int l = 0; l < 2; l++) expect_rows(path, levels[l]);
    free(path);
    tried++;
  }
  cr_assert_gt(tried, 0, "neither clang nor gcc is installed");
}

Test(aliasing, every_c_compile_passes_no_strict_aliasing) {
  const TcOutput outs[] = {TC_SHARED_NATIVE, TC_OBJECT_PORTABLE};
  const char *const levels[] = {"0", "1", "2", "3"};
  for (int l = 0; l < 4; l++) {
    setenv("KERN_CPU_OPT", levels[l], 1);
    for (int o = 0; o < 2; o++) {
      bool found = false;
      for (const char *const *f = tc_cc_flags(outs[o], "cc"); *f; f++)
        found |= !strcmp(*f, "-fno-strict-aliasing");
      cr_expect(found, "KERN_CPU_OPT=%s, output %d", levels[l], o);
    }
  }
  unsetenv("KERN_CPU_OPT");
}

/* NVRTC compiles CUDA C++, whose forward-progress rule would allow the same
 * deletion; its PTX must still hold the endless branch to itself. */
Test(loops, nvrtc_keeps_an_endless_loop) {
  const char *why = NULL;
  if (!tc_nvrtc_load(&why)) {
    cr_log_warn("NVRTC is not available (%s): the PTX check is skipped", why ? why : "?");
    return;
  }
  char dir[512], path[600], cmd[1400];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/kern-spin-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/spin.kern", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(spin_src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' emit --target=ptx '%s'", KERNC_PATH, path);
  char *ptx = NULL;
  int rc = th_run(cmd, &ptx);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  th_run(cmd, NULL);
  cr_assert_eq(rc, 0, "%s", ptx ? ptx : "");
  /* A label whose next instruction branches to it: `$L: bra.uni $L;`. */
  int self_loops = 0;
  for (const char *p = strstr(ptx, "$L__"); p; p = strstr(p + 1, "$L__")) {
    size_t n = strcspn(p, ":;, \t\n");
    if (p[n] != ':') continue;
    const char *next = p + n + 1;
    next += strspn(next, " \t\n");
    if (strncmp(next, "bra", 3) != 0) continue;
    next += strcspn(next, " \t");
    next += strspn(next, " \t");
    self_loops += !strncmp(next, p, n) && next[n] == ';';
  }
  cr_expect_gt(self_loops, 0, "no endless loop left in the PTX:\n%s", ptx);
  free(ptx);
}

/* ---- shapes --------------------------------------------------------------------------- */

/* An empty array still has dense strides, which DLPack and views hand out:
 * the product of its nonzero dims must fit (NumPy's rule). */
Test(arrays, an_empty_array_whose_strides_would_overflow_is_refused, .init = setup) {
  kern_device *cpu = kern_device_get("cpu");
  const int64_t bad[2] = {0, INT64_MAX}, bad3[3] = {INT64_MAX / 2, 0, 3};
  cr_expect_null(kern_array_new(cpu, KERN_FLOAT32, 2, bad));
  cr_expect_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "overflows"), "%s", kern_last_error());
  cr_expect_null(kern_array_empty(cpu, KERN_FLOAT32, 3, bad3));
  cr_expect_null(kern_array_wrap(NULL, cpu, KERN_FLOAT32, 2, bad, NULL));
  const int64_t ok[2] = {0, INT64_MAX / 8};
  kern_array *a = kern_array_new(cpu, KERN_FLOAT32, 2, ok);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_expect_eq(kern_array_size(a), 0);
  cr_expect_eq(kern_array_stride(a, 1), 4);
  cr_expect_eq(kern_array_stride(a, 0), 4 * (INT64_MAX / 8));
  kern_array_free(a);
}

/* ---- yes/no environment variables ------------------------------------------------------ */

static char warned[1024];
static void catch_warning(const char *msg, void *ud) {
  (void)ud;
  snprintf(warned, sizeof warned, "%s", msg);
}

static bool debug_after(const char *value) {
  kern_set_debug(false);
  setenv("KERN_DEBUG", value, 1);
  rt_config_reload();
  bool on = kern_get_debug();
  unsetenv("KERN_DEBUG");
  kern_set_debug(false);
  return on;
}

Test(env, kern_debug_takes_every_usual_spelling, .init = setup) {
  const char *const no[] = {"0", "false", "no", "off", "FALSE", "No", "OFF", ""};
  const char *const yes[] = {"1", "true", "yes", "on", "TRUE", "Yes", "On"};
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    cr_expect_not(debug_after(no[i]), "KERN_DEBUG=%s turned debug mode on", no[i]);
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    cr_expect(debug_after(yes[i]), "KERN_DEBUG=%s left debug mode off", yes[i]);
}

Test(env, an_unknown_value_warns_and_keeps_the_default, .init = setup) {
  kern_set_warning_handler(catch_warning, NULL);
  warned[0] = 0;
  cr_expect_not(debug_after("maybe"), "KERN_DEBUG=maybe is not a yes");
  cr_expect(strstr(warned, "KERN_DEBUG=maybe") && strstr(warned, "false"), "warning: '%s'", warned);
  warned[0] = 0;
  cr_expect_not(debug_after("0"));
  cr_expect_str_eq(warned, "", "a known value gives no warning");
  kern_set_warning_handler(NULL, NULL);
  cr_expect_eq(env_bool_parse(" 1"), ENV_BAD, "nothing around the word");
  cr_expect_eq(env_bool_parse(NULL), ENV_UNSET);
}

Test(env, kern_log_no_is_off, .init = setup) {
  const char *const no[] = {"0", "false", "no", "off", "OFF", "none"};
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
    setenv("KERN_LOG", no[i], 1);
    rt_config_reload();
    cr_expect_eq(kern_get_log_level(), KERN_LOG_OFF, "KERN_LOG=%s", no[i]);
  }
  setenv("KERN_LOG", "yes", 1);
  rt_config_reload();
  cr_expect_eq(kern_get_log_level(), KERN_LOG_INFO, "KERN_LOG=yes");
  setenv("KERN_LOG", "Warning", 1);
  rt_config_reload();
  cr_expect_eq(kern_get_log_level(), KERN_LOG_WARNING, "KERN_LOG=Warning");
  unsetenv("KERN_LOG");
  rt_config_reload();
}
