/* test_hardening_env.c: a hostile or broken environment around kern, each
 * case with the behaviour docs/robustness.md and docs/security.md promise:
 * C compilers that never exit or leave children behind, compilers named by
 * relative paths, FIFOs where sources should be, compilers that exit 0 but
 * write nothing, kernc killed by signals mid-build, a cache that killed
 * processes left build directories in and that grows past its bound, .npy
 * headers with an empty dtype, a TMPDIR that does not exist.
 *
 * Requires: a C compiler (clang or cc) and /bin/sh; kernc (KERNC_PATH).
 * Each test works in a fresh directory under $TMPDIR (else /tmp) and removes
 * it; fake compilers are shell scripts there. Tests that would hang without
 * their fix run under a time guard (Criterion's .timeout, alarm() in a forked
 * child, timeout(1) around kernc), so a regression fails instead of hanging.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "cpu/cpu_backend.h"
#include "harness.h"
#include "kern.h"
#include "toolchain.h"

#if defined(__SANITIZE_ADDRESS__)
#define ENV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENV_ASAN 1
#endif
#endif
#ifndef ENV_ASAN
#define ENV_ASAN 0
#endif

/* ---- helpers ----------------------------------------------------------------------- */

static char root[512];

/* A fresh directory for this test (its path); the cache goes below it. */
static const char *fresh_root(void) {
  const char *t = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/kern-env-test-XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(root));
  return root;
}

static void remove_root(void) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", root, root);
  th_run(cmd, NULL);
}

/* Paths the helpers below made stay reachable from here, so a test that uses
 * one in passing (exists(at("x"))) leaks nothing LeakSanitizer reports; the
 * tests free the ones they keep, and nothing here is freed or read again. */
static char *made[512];
static int nmade;

static char *keep(char *p) {
  if (nmade < (int)(sizeof made / sizeof *made)) made[nmade++] = p;
  return p;
}

/* root/name (static buffer per call site is not enough: malloc'd). */
static char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *at(const char *fmt, ...) {
  char rel[1024], *p = NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rel, sizeof rel, fmt, ap);
  va_end(ap);
  cr_assert(asprintf(&p, "%s/%s", root, rel) > 0);
  return keep(p);
}

static void write_file(const char *path, const char *text, mode_t mode) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
  chmod(path, mode);
}

/* The compiler kern would pick by default (absolute; malloc'd). */
static char *real_cc(void) {
  char *cc = tc_cc_find(NULL, NULL);
  cr_assert_not_null(cc, "no C compiler");
  return cc;
}

/* Runs kernc with the shell command line args (after "kernc "), in dir when
 * not NULL; its exit status (128 + N when killed by signal N) and output. */
static int kernc(char **out, const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kernc(char **out, const char *dir, const char *fmt, ...) {
  char args[4096], cmd[6000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "%s%s%s%s %s", dir ? "cd '" : "", dir ? dir : "", dir ? "' && " : "",
           KERNC_PATH, args);
  return th_run(cmd, out);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Names in dir containing needle. */
static int count_names(const char *dir, const char *needle) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, needle)) n++;
  if (d) closedir(d);
  return n;
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* A private cache under root, a private TMPDIR, the environment reread. */
static char *use_cache(void) {
  char *cache = at("cache"), *tmp = at("tmp");
  mkdir(tmp, 0700);
  setenv("KERN_CACHE_DIR", cache, 1);
  setenv("TMPDIR", tmp, 1);
  unsetenv("KERN_CC");
  unsetenv("KERN_COMPILE_TIMEOUT");
  unsetenv("KERN_CACHE_MAX_BYTES");
  kern_init();
  rt_config_reload();
  free(tmp);
  return cache;
}

static kern_device *cpu(void) { return kern_device_get("cpu"); }

/* Loads src (made unique by tag, so no cache has it) and launches its kernel
 * on the CPU: the status of the launch (the compile happens there). */
static kern_status launch_fresh(const char *tag) {
  char src[512];
  snprintf(src, sizeof src, "kernel void k(int[] a) { a[tid()] = tid() + %d; } // %s %ld %.6f\n",
           (int)strlen(tag), tag, (long)getpid(), now_s());
  kern_module *m = kern_module_from_source("env.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "k");
  cr_assert_not_null(k, "%s", kern_last_error());
  int64_t n = 4;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  kern_status st = KERN_LAUNCH(k, cpu(), KERN_DIM1(n), a);
  char message[4096];
  snprintf(message, sizeof message, "%s", kern_last_error());
  if (st == KERN_OK) {
    int32_t v[4];
    cr_assert_eq(kern_array_read(a, v, sizeof v), KERN_OK);
    for (int i = 0; i < 4; i++) cr_assert_eq(v[i], i + (int)strlen(tag));
  }
  kern_array_free(a);
  kern_module_free(m);
  err_set(st, "%s", message); /* the launch's message, for the caller */
  return st;
}

static const char *simple_kern = "kernel void k(float[] x) { x[tid()] = 2.0 * x[tid()]; }\n";

/* ---- compilers that never exit, or leave children behind ------------------------------ */

/* Answers --version at once; any compile sleeps for a minute, its shell's pid
 * in root/sleeper.pid. */
static char *make_sleeper(void) {
  char *path = at("sleeper.sh"), *pidfile = at("sleeper.pid"), text[2048];
  snprintf(text, sizeof text,
           "#!/bin/sh\n"
           "if [ \"$1\" = --version ]; then echo 'sleeper 1.0'; exit 0; fi\n"
           "echo $$ > '%s'\n"
           "sleep 60\n",
           pidfile);
  write_file(path, text, 0755);
  free(pidfile);
  return path;
}

/* The process of the pid in file has ended (it is not running, or a zombie
 * only until its parent reaps it: then kill says ESRCH soon). */
static bool ended(const char *file) {
  char *text = th_read_file(file, NULL);
  cr_assert_not_null(text, "the fake compiler never ran (%s)", file);
  pid_t pid = (pid_t)atol(text);
  free(text);
  for (int i = 0; i < 200; i++) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    char stat_path[64], *st;
    snprintf(stat_path, sizeof stat_path, "/proc/%ld/stat", (long)pid);
    st = th_read_file(stat_path, NULL);
    bool zombie = st && strstr(st, ") Z ");
    free(st);
    if (zombie) return true;
    usleep(10000);
  }
  return false;
}

Test(compiler, a_compiler_that_never_exits_fails_the_launch_in_time, .timeout = 60) {
  fresh_root();
  use_cache();
  char *cc = make_sleeper(), *pidfile = at("sleeper.pid");
  setenv("KERN_CC", cc, 1);
  setenv("KERN_COMPILE_TIMEOUT", "1", 1);
  rt_config_reload();
  double t0 = now_s();
  kern_status st = launch_fresh("sleeper");
  double took = now_s() - t0;
  cr_assert_eq(st, KERN_ERR_COMPILE, "%s: %s", kern_status_name(st), kern_last_error());
  cr_expect(strstr(kern_last_error(), cc), "names the compiler: %s", kern_last_error());
  cr_expect(strstr(kern_last_error(), "did not finish within 1 s") &&
                strstr(kern_last_error(), "KERN_COMPILE_TIMEOUT"),
            "names the limit: %s", kern_last_error());
  cr_expect_lt(took, 10.0, "took %.1f s with a 1 s limit", took);
  cr_expect(ended(pidfile), "the compiler and its children were stopped");
  free(cc), free(pidfile);
  remove_root();
}

/* A wrapper that starts a background job holding its stdout and stderr, then
 * becomes the real compiler; the job's pid goes to root/job.pid. */
static char *make_wrapper_with_a_job(void) {
  char *path = at("wrapper.sh"), *pidfile = at("job.pid"), *cc = real_cc(), text[2048];
  snprintf(text, sizeof text,
           "#!/bin/sh\n"
           "sleep 30 &\n"
           "echo $! > '%s'\n"
           "exec '%s' \"$@\"\n",
           pidfile, cc);
  write_file(path, text, 0755);
  free(pidfile), free(cc);
  return path;
}

static void stop_job(void) {
  char *file = at("job.pid"), *text = th_read_file(file, NULL);
  if (text && atol(text) > 0) kill((pid_t)atol(text), SIGKILL); /* the sleep this test started */
  free(text), free(file);
}

Test(compiler, a_background_child_of_the_compiler_does_not_delay_the_launch, .timeout = 120) {
  fresh_root();
  use_cache();
  char *cc = make_wrapper_with_a_job();
  setenv("KERN_CC", cc, 1);
  rt_config_reload();
  double t0 = now_s();
  kern_status st = launch_fresh("wrapper");
  double took = now_s() - t0;
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_expect_lt(took, 15.0, "the launch waited %.1f s for the compiler's background job", took);
  stop_job();
  free(cc);
  remove_root();
}

Test(compiler, kern_config_reports_the_compile_timeout) {
  fresh_root();
  use_cache();
  kern_config c;
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_eq(c.compile_timeout, 300.0, "default %g", c.compile_timeout);
  cr_expect_eq(c.cache_max_bytes, (int64_t)1 << 30, "default bound %lld",
               (long long)c.cache_max_bytes);
  setenv("KERN_COMPILE_TIMEOUT", "2.5", 1);
  setenv("KERN_CACHE_MAX_BYTES", "64M", 1);
  rt_config_reload();
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_eq(c.compile_timeout, 2.5, "%g", c.compile_timeout);
  cr_expect_eq(c.cache_max_bytes, (int64_t)64 << 20);
  setenv("KERN_COMPILE_TIMEOUT", "soon", 1);
  setenv("KERN_CACHE_MAX_BYTES", "-5", 1);
  rt_config_reload();
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_eq(c.compile_timeout, 300.0, "a bad value keeps the default: %g", c.compile_timeout);
  cr_expect_eq(c.cache_max_bytes, (int64_t)1 << 30);
  setenv("KERN_COMPILE_TIMEOUT", "0", 1);
  rt_config_reload();
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_eq(c.compile_timeout, 0.0, "0 is no limit");
  cr_expect_eq(tc_cc_timeout_ms("1.5"), 1500);
  cr_expect_eq(tc_cc_timeout_ms(NULL), TC_CC_TIMEOUT_DEFAULT_MS);
  cr_expect_eq(tc_cc_timeout_ms("-1"), -1);
  cr_expect_eq(tc_cc_timeout_ms("nan"), -1);
  cr_expect_eq(tc_cc_timeout_ms("5s"), -1);
  remove_root();
}

Test(compiler, kernc_build_stops_a_compiler_that_never_exits, .timeout = 60) {
  fresh_root();
  char *cc = make_sleeper(), *src = at("m.kern"), *out = NULL;
  write_file(src, simple_kern, 0644);
  double t0 = now_s();
  int rc = kernc(&out, root, "build m.kern -o out --no-cuda --cc='%s' --compile-timeout=1", cc);
  double took = now_s() - t0;
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "the C compiler '") && strstr(out, "sleeper.sh' did not finish building") &&
                strstr(out, "within 1 s"),
            "%s", out);
  cr_expect_lt(took, 10.0, "took %.1f s", took);
  cr_expect_eq(count_names(root, "tmp-"), 0, "no temporaries left");
  cr_expect_not(exists(at("out.o")));
  free(out);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --compile-timeout=soon"), 2, "%s", out);
  cr_expect(strstr(out, "bad --compile-timeout 'soon'"), "%s", out);
  free(out);
  free(cc), free(src);
  remove_root();
}

Test(compiler, kernc_build_waits_for_the_compiler_not_its_background_child, .timeout = 120) {
  fresh_root();
  char *cc = make_wrapper_with_a_job(), *src = at("m.kern"), *out = NULL;
  write_file(src, simple_kern, 0644);
  double t0 = now_s();
  int rc = kernc(&out, root, "build m.kern -o out --no-cuda --cc='%s'", cc);
  double took = now_s() - t0;
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect_lt(took, 15.0, "kernc build waited %.1f s for the compiler's background job", took);
  char *obj = at("out.o");
  cr_expect(exists(obj));
  stop_job();
  free(cc), free(src), free(obj), free(out);
  remove_root();
}

/* ---- compilers named by relative paths ------------------------------------------------- */

/* root/ccs/cc.sh: logs each run to root/cc.log, then runs the real compiler. */
static void make_relative_cc(void) {
  char *dir = at("ccs"), *path = at("ccs/cc.sh"), *log = at("cc.log"), *cc = real_cc();
  char text[2048];
  mkdir(dir, 0755);
  snprintf(text, sizeof text, "#!/bin/sh\necho \"$*\" >> '%s'\nexec '%s' \"$@\"\n", log, cc);
  write_file(path, text, 0755);
  free(dir), free(path), free(log), free(cc);
}

static int compiles_logged(void) {
  char *log = at("cc.log"), *text = th_read_file(log, NULL);
  int n = 0;
  for (char *p = text; p && (p = strstr(p, " -o ")); p++) n++;
  free(text), free(log);
  return n;
}

Test(relative_compiler, kern_cc_as_a_relative_path_through_a_launch) {
  fresh_root();
  use_cache();
  make_relative_cc();
  cr_assert_eq(chdir(root), 0);
  setenv("KERN_CC", "./ccs/cc.sh", 1);
  rt_config_reload();
  kern_status st = launch_fresh("relative");
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_expect_eq(compiles_logged(), 1, "the relative compiler compiled");
  cr_assert_eq(chdir("/"), 0);
  remove_root();
}

Test(relative_compiler, a_relative_path_entry_finds_the_compiler) {
  fresh_root();
  use_cache();
  make_relative_cc();
  cr_assert_eq(chdir(root), 0);
  char path[8192];
  snprintf(path, sizeof path, "ccs:%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
  setenv("PATH", path, 1);
  setenv("KERN_CC", "cc.sh", 1);
  rt_config_reload();
  kern_status st = launch_fresh("path-entry");
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_expect_eq(compiles_logged(), 1, "the compiler found through the relative entry compiled");
  cr_assert_eq(chdir("/"), 0);
  remove_root();
}

Test(relative_compiler, kernc_build_with_a_relative_cc) {
  fresh_root();
  make_relative_cc();
  char *src = at("m.kern"), *obj = at("out.o"), *out = NULL;
  write_file(src, simple_kern, 0644);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --no-cuda --cc=./ccs/cc.sh"), 0, "%s", out);
  cr_expect(exists(obj));
  cr_expect_eq(compiles_logged(), 1);
  free(out);
  unlink(obj);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --no-cuda --cc=cc.sh"), 1, "not on PATH: %s",
               out);
  free(out);
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && PATH=\"ccs:$PATH\" %s build m.kern -o out --no-cuda --cc=cc.sh", root,
           KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(exists(obj));
  cr_expect_eq(compiles_logged(), 2);
  free(out), free(src), free(obj);
  remove_root();
}

/* ---- FIFOs and other files that are not regular ------------------------------------------ */

/* In a forked child with a 10 s alarm: loading path fails with KERN_ERR_IO
 * naming it as not a regular file (a hang ends the child by SIGALRM). */
static void expect_load_refused(const char *path) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    alarm(10);
    kern_module *m = kern_module_load(path);
    bool ok = !m && kern_last_status() == KERN_ERR_IO &&
              strstr(kern_last_error(), "not a regular file") && strstr(kern_last_error(), path);
    if (!ok) fprintf(stderr, "load of %s: %s\n", path, m ? "loaded" : kern_last_error());
    _exit(ok ? 0 : 1);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(WIFEXITED(status), "loading %s hung or crashed (signal %d)", path,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "loading %s was not refused", path);
}

Test(fifo, loading_a_fifo_device_or_directory_fails_instead_of_blocking, .timeout = 60) {
  fresh_root();
  char *fifo = at("f.kern"), *dir = at("d.kern");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  mkdir(dir, 0700);
  expect_load_refused(fifo);
  expect_load_refused("/dev/zero");
  expect_load_refused(dir);
  /* Found through the search path too. */
  setenv("KERN_PATH", root, 1);
  kern_init();
  rt_config_reload();
  char *rel = "f.kern";
  cr_assert_eq(chdir("/"), 0);
  expect_load_refused(rel);
  free(fifo), free(dir);
  remove_root();
}

Test(fifo, kernc_check_of_a_fifo_fails_instead_of_blocking, .timeout = 60) {
  fresh_root();
  char *fifo = at("f.kern"), *out = NULL, cmd[2048];
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *commands[] = {"check", "emit", "build -o out", "--dump=tokens"};
  for (int i = 0; i < 4; i++) {
    snprintf(cmd, sizeof cmd, "cd '%s' && timeout 10 %s %s f.kern", root, KERNC_PATH, commands[i]);
    int rc = th_run(cmd, &out);
    cr_expect_eq(rc, 1, "kernc %s: exit %d (124: it hung): %s", commands[i], rc, out);
    cr_expect(strstr(out, "not a regular file"), "kernc %s: %s", commands[i], out);
    free(out);
  }
  free(fifo);
  remove_root();
}

/* ---- kernc build: outputs verified, temporaries removed on signals -------------------------- */

Test(kernc_build, a_compiler_that_writes_nothing_publishes_nothing) {
  fresh_root();
  char *src = at("m.kern"), *out = NULL, *obj = at("out.o"), *hdr = at("out.h");
  write_file(src, simple_kern, 0644);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --no-cuda --cc=/bin/true"), 1, "%s", out);
  cr_expect(strstr(out, "the C compiler '/bin/true' exited 0 but wrote nothing to out.o"), "%s",
            out);
  cr_expect_not(exists(obj));
  cr_expect_not(exists(hdr));
  free(out);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --no-cuda --cpu-flags=-fsyntax-only"), 1,
               "%s", out);
  cr_expect(strstr(out, "exited 0 but wrote nothing"), "%s", out);
  cr_expect_not(exists(obj));
  free(out);
  /* Something that is not an object file. */
  char *liar = at("liar.sh");
  write_file(
      liar,
      "#!/bin/sh\nwhile [ $# -gt 1 ]; do [ \"$1\" = -o ] && echo text > \"$2\"; shift; done\n",
      0755);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --no-cuda --cc='%s'", liar), 1, "%s", out);
  cr_expect(strstr(out, "is not an object file"), "%s", out);
  cr_expect_not(exists(obj));
  cr_expect_eq(count_names(root, "tmp-"), 0, "no temporaries left");
  free(out);
  cr_expect_eq(kernc(&out, root, "build m.kern -o out --no-cuda"), 0, "%s", out);
  cr_expect(exists(obj) && exists(hdr), "a real compiler still builds");
  free(out), free(src), free(obj), free(hdr), free(liar);
  remove_root();
}

/* A compiler that sends kernc (its parent) sig, then waits to be stopped. */
static char *make_killer(int sig) {
  char *path = at("killer-%d.sh", sig), text[256];
  snprintf(text, sizeof text, "#!/bin/sh\nkill -%d $PPID\nsleep 20\n", sig);
  write_file(path, text, 0755);
  return path;
}

Test(kernc_build, a_signal_or_crash_mid_build_leaves_no_temporaries, .timeout = 120) {
  fresh_root();
  char *src = at("m.kern"), *tmp = at("tmp"), *obj = at("out.o"), *out = NULL;
  write_file(src, simple_kern, 0644);
  mkdir(tmp, 0700);
  cr_assert_eq(kernc(&out, root, "build m.kern -o out --no-cuda"), 0, "%s", out);
  free(out);
  struct stat before;
  cr_assert_eq(stat(obj, &before), 0);
  const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV};
  for (int i = 0; i < 4; i++) {
    char *cc = make_killer(sigs[i]);
    double t0 = now_s();
    char cmd[2048];
    snprintf(
        cmd, sizeof cmd,
        "cd '%s' && ulimit -c 0 && TMPDIR='%s' %s build m.kern -o out --no-cuda --cc='%s' 2>&1; "
        "echo \"exit=$?\"",
        root, tmp, KERNC_PATH, cc);
    th_run(cmd, &out);
    char want[32];
    /* Under AddressSanitizer the fault goes on to its handler, which reports
     * it and exits 1: the previous action, as it should. The report is part of
     * the captured output (2>&1), not the suite's, whose sanitizer reports
     * fail the run. */
    snprintf(want, sizeof want, "exit=%d\n", ENV_ASAN && sigs[i] == SIGSEGV ? 1 : 128 + sigs[i]);
    cr_expect(strstr(out, want), "kernc ended by signal %d: %s", sigs[i], out);
    cr_expect_lt(now_s() - t0, 15.0, "it did not wait for the compiler");
    cr_expect_eq(count_names(root, "tmp-"), 0, "signal %d: no PREFIX.*.tmp-* left", sigs[i]);
    cr_expect_eq(count_names(tmp, "kernc-build-"), 0, "signal %d: no kernc-build-* left", sigs[i]);
    struct stat after;
    cr_expect(stat(obj, &after) == 0 && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec &&
                  after.st_mtim.tv_sec == before.st_mtim.tv_sec,
              "signal %d: the previous out.o is kept", sigs[i]);
    free(out), free(cc);
  }
  free(src), free(tmp), free(obj);
  remove_root();
}

/* ---- the cache: build directories of killed processes, the size bound ------------------------ */

static const char *answer_src = "int kk_answer(void) { return %d; }\n";

/* Compiles C that returns v: the library (closed) and its key. */
static rt_cpu_lib compile_answer(int v) {
  char src[128];
  snprintf(src, sizeof src, answer_src, v);
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(src, strlen(src), 0, &lib), KERN_OK, "%s", kern_last_error());
  rt_cpu_lib_close(&lib);
  return lib;
}

static void host(char out[65]) {
  cr_assert_eq(gethostname(out, 65), 0);
  out[64] = 0;
  for (char *p = out; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '.' || *p == '_'))
      *p = '_';
}

/* dir/name as a build directory holding a file, its time hours_ago. */
static char *plant_dir(const char *dir, const char *name, int hours_ago) {
  char *path = NULL, *file = NULL;
  cr_assert(asprintf(&path, "%s/%s", dir, name) > 0 && asprintf(&file, "%s/kernel.c", path) > 0);
  cr_assert_eq(mkdir(path, 0700), 0, "%s: %s", path, strerror(errno));
  write_file(file, "int x;\n", 0600);
  struct timeval t[2];
  gettimeofday(&t[0], NULL);
  t[0].tv_sec -= hours_ago * 3600;
  t[1] = t[0];
  utimes(path, t);
  free(file);
  return keep(path);
}

static char *plant_file(const char *dir, const char *name, int hours_ago) {
  char *path = NULL;
  cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
  write_file(path, "x", 0600);
  struct timeval t[2];
  gettimeofday(&t[0], NULL);
  t[0].tv_sec -= hours_ago * 3600;
  t[1] = t[0];
  utimes(path, t);
  return keep(path);
}

/* A pid no process has now: a child that has exited and been reaped. */
static pid_t dead_pid(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, NULL, 0);
  return pid;
}

/* What killed processes left, and what must stay; the process's first store
 * (or rt_cache_tidy) removes the former. */
static void check_tidy(bool direct) {
  fresh_root();
  char *cache = use_cache(), h[65], name[256];
  cr_assert_eq(mkdir(cache, 0700), 0);
  host(h);
  snprintf(name, sizeof name, ".build-%ld-%s-aaaaaa", (long)dead_pid(), h);
  char *dead = plant_dir(cache, name, 0);
  snprintf(name, sizeof name, ".build-%ld-%s-bbbbbb", (long)getpid(), h);
  char *old = plant_dir(cache, name, 2);
  snprintf(name, sizeof name, ".build-%ld-%s-cccccc", (long)getpid(), h);
  char *live = plant_dir(cache, name, 0);
  snprintf(name, sizeof name, ".build-%ld-elsewhere-dddddd", (long)dead_pid());
  char *other_host = plant_dir(cache, name, 0);
  char *old_style = plant_dir(cache, ".build-1-1-0", 3);
  char *old_temp = plant_file(cache, "0123.meta.tmp-1-1-1", 2);
  char *new_temp = plant_file(cache, "4567.meta.tmp-1-1-1", 0);
  char *old_alias = plant_file(cache, ".alias-1-1-1", 2);
  if (direct)
    rt_cache_tidy(cache);
  else
    compile_answer(1);
  cr_expect_not(exists(dead), "the build directory of a process that is gone");
  cr_expect_not(exists(old), "a build directory older than an hour");
  cr_expect_not(exists(old_style), "an old one of the earlier naming");
  cr_expect_not(exists(old_temp), "a temporary file older than an hour");
  cr_expect_not(exists(old_alias));
  cr_expect(exists(live), "a build in progress stays");
  cr_expect(exists(other_host), "another host's build may be in progress");
  cr_expect(exists(new_temp), "a recent temporary file may be in use");
  free(cache), free(dead), free(old), free(live), free(other_host), free(old_style);
  free(old_temp), free(new_temp), free(old_alias);
  remove_root();
}

Test(cache_housekeeping, build_directories_of_killed_processes_are_removed) { check_tidy(true); }

Test(cache_housekeeping, the_first_store_of_a_process_removes_them) { check_tidy(false); }

Test(cache_housekeeping, a_leftover_of_the_same_name_does_not_force_uncached_builds) {
  fresh_root();
  char *cache = use_cache();
  mkdir(cache, 0700);
  /* What a process with this pid and thread id, killed during its first
   * compiles, left behind under the earlier naming (<pid>-<tid>-<counter>). */
  for (int i = 0; i < 64; i++) {
    char name[128];
    snprintf(name, sizeof name, ".build-%ld-%ld-%d", (long)getpid(), (long)syscall(SYS_gettid), i);
    free(plant_dir(cache, name, 0));
  }
  for (int v = 10; v < 13; v++) {
    rt_cpu_lib lib = compile_answer(v);
    cr_expect(lib.cached, "build %d went to the cache", v);
  }
  rt_cpu_lib again;
  char src[128];
  snprintf(src, sizeof src, answer_src, 10);
  cr_assert_eq(rt_cpu_compile(src, strlen(src), 0, &again), KERN_OK);
  cr_expect(again.from_cache, "and is found there");
  rt_cpu_lib_close(&again);
  free(cache);
  remove_root();
}

static bool has_entry(const char *cache, const rt_cpu_lib *lib) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.so", cache, lib->key);
  return exists(path);
}

Test(cache_housekeeping, the_bound_evicts_least_recently_used_entries) {
  fresh_root();
  char *cache = use_cache();
  rt_cpu_lib a = compile_answer(21);
  int64_t entries, one;
  rt_cache_measure(cache, &entries, &one);
  cr_assert_eq(entries, 1);
  char bound[64];
  int64_t max = one * 3 + one / 2;
  snprintf(bound, sizeof bound, "%lld", (long long)max);
  setenv("KERN_CACHE_MAX_BYTES", bound, 1);
  rt_config_reload();
  usleep(20000);
  rt_cpu_lib b = compile_answer(22);
  usleep(20000);
  rt_cpu_lib c = compile_answer(23);
  usleep(20000);
  rt_cpu_lib again; /* a is used: now b is the least recently used */
  char src[128];
  snprintf(src, sizeof src, answer_src, 21);
  cr_assert_eq(rt_cpu_compile(src, strlen(src), 0, &again), KERN_OK);
  cr_assert(again.from_cache);
  rt_cpu_lib_close(&again);
  usleep(20000);
  rt_cpu_lib d = compile_answer(24);
  int64_t bytes;
  rt_cache_measure(cache, &entries, &bytes);
  cr_expect_leq(bytes, max, "%lld bytes in the cache, bound %lld", (long long)bytes,
                (long long)max);
  cr_expect(has_entry(cache, &a), "a was used last but one");
  cr_expect_not(has_entry(cache, &b), "b was the least recently used");
  cr_expect(has_entry(cache, &c));
  cr_expect(has_entry(cache, &d));
  cr_expect_eq(entries, 3);
  /* No bound: nothing is evicted. */
  setenv("KERN_CACHE_MAX_BYTES", "0", 1);
  rt_config_reload();
  for (int v = 30; v < 33; v++) compile_answer(v);
  rt_cache_measure(cache, &entries, &bytes);
  cr_expect_eq(entries, 6);
  free(cache);
  remove_root();
}

Test(cache_housekeeping, kern_cache_info_and_clear) {
  fresh_root();
  char *cache = use_cache(), h[65], name[256];
  compile_answer(41);
  compile_answer(42);
  kern_cache_info in;
  cr_assert_eq(kern_cache_info_get(&in), KERN_OK, "%s", kern_last_error());
  cr_expect_str_eq(in.dir, cache);
  cr_expect_eq(in.entries, 2);
  cr_expect_gt(in.bytes, 1000);
  cr_expect_eq(in.max_bytes, (int64_t)1 << 30);
  host(h);
  snprintf(name, sizeof name, ".build-%ld-%s-ffffff", (long)getpid(), h);
  char *live = plant_dir(cache, name, 0);
  cr_assert_eq(kern_cache_clear(), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_cache_info_get(&in), KERN_OK);
  cr_expect_eq(in.entries, 0);
  cr_expect_eq(count_names(cache, ".so"), 0);
  cr_expect_eq(count_names(cache, ".latest"), 0);
  cr_expect(exists(live), "a build in progress keeps its directory");
  cr_expect_eq(kern_cache_info_get(NULL), KERN_ERR_INVALID_ARGUMENT);
  setenv("KERN_CACHE_DIR", "/dev/null/cache", 1);
  rt_config_reload();
  cr_expect_eq(kern_cache_info_get(&in), KERN_ERR_IO, "no cache: %s", kern_last_error());
  cr_expect_eq(kern_cache_clear(), KERN_ERR_IO);
  free(cache), free(live);
  remove_root();
}

Test(cache_housekeeping, kernc_cache_info_and_clear) {
  fresh_root();
  char *cache = use_cache(), *out = NULL, want[1200];
  compile_answer(51);
  compile_answer(52);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "KERN_CACHE_DIR='%s' KERN_CACHE_MAX_BYTES=10M %s cache info", cache,
           KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 0, "%s", out);
  snprintf(want, sizeof want, "directory: %s\nentries:   2\nbytes:     ", cache);
  cr_expect(strstr(out, want), "%s", out);
  cr_expect(strstr(out, "bound:     10485760 bytes (10.0 MiB; KERN_CACHE_MAX_BYTES)"), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "KERN_CACHE_DIR='%s' %s cache clear", cache, KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 0, "%s", out);
  snprintf(want, sizeof want, "removed 2 entries (");
  cr_expect(strstr(out, want) && strstr(out, cache), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "KERN_CACHE_DIR='%s' %s cache info", cache, KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(strstr(out, "entries:   0\n"), "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, NULL, "cache"), 2, "%s", out);
  cr_expect(strstr(out, "cache needs one of 'info' or 'clear'"), "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, NULL, "cache shrink"), 2, "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, NULL, "cache --help"), 0, "%s", out);
  cr_expect(strstr(out, "cache clear"), "%s", out);
  free(out);
  free(cache);
  remove_root();
}

/* ---- .npy headers ------------------------------------------------------------------------------- */

static void save_npy(const char *path, const char *descr) {
  char header[256], h[128];
  snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (4,), }",
           descr);
  size_t hl = strlen(header) + 1, padded = (10 + hl + 63) / 64 * 64 - 10;
  cr_assert_lt(padded, sizeof h);
  memset(h, ' ', sizeof h);
  memcpy(h, header, strlen(header));
  h[padded - 1] = '\n';
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)padded, 0};
  fwrite(magic, 1, 10, f);
  fwrite(h, 1, padded, f);
  float data[4] = {1, 2, 3, 4};
  fwrite(data, 1, sizeof data, f);
  fclose(f);
}

/* In ASan builds (make test-asan) an over-read of the descr string fails
 * this test: kernc then dies with ASan's report instead of exit status 1. */
Test(npy, a_dtype_without_a_type_is_refused) {
  fresh_root();
  char *src = at("m.kern"), *out = NULL;
  write_file(src, simple_kern, 0644);
  const char *descrs[] = {"", "<", "=", ">", "|", "<f", "f"};
  for (int i = 0; i < 7; i++) {
    char *npy = at("x%d.npy", i);
    save_npy(npy, descrs[i]);
    int rc = kernc(&out, root, "run m.kern k --arg x=file:x%d.npy", i);
    cr_expect_eq(rc, 1, "descr '%s': exit %d: %s", descrs[i], rc, out);
    cr_expect(strstr(out, "unsupported dtype"), "descr '%s': %s", descrs[i], out);
    free(out), free(npy);
  }
  free(src);
  remove_root();
}

/* ---- a TMPDIR that does not exist ---------------------------------------------------------------- */

Test(tmpdir, a_bad_tmpdir_is_named_when_there_is_no_cache) {
  fresh_root();
  use_cache();
  char *file = at("not-a-dir"), *cache = at("not-a-dir/cache");
  write_file(file, "x", 0600);
  setenv("KERN_CACHE_DIR", cache, 1);
  setenv("TMPDIR", "/nonexistent/kern-tmp", 1);
  rt_config_reload();
  kern_status st = launch_fresh("tmpdir");
  cr_assert_eq(st, KERN_ERR_IO, "%s: %s", kern_status_name(st), kern_last_error());
  cr_expect(strstr(kern_last_error(), "cannot create a build directory for CPU kernels in "
                                      "'/nonexistent/kern-tmp' (TMPDIR): No such file"),
            "%s", kern_last_error());
  free(file), free(cache);
  remove_root();
}

Test(tmpdir, kernc_build_names_a_bad_tmpdir) {
  fresh_root();
  char *src = at("m.kern"), *out = NULL, cmd[2048];
  write_file(src, simple_kern, 0644);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && TMPDIR=/nonexistent/kern-tmp %s build m.kern -o out --no-cuda", root,
           KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 1, "%s", out);
  cr_expect(strstr(out, "cannot create a temporary directory in '/nonexistent/kern-tmp' (TMPDIR): "
                        "No such file or directory"),
            "%s", out);
  cr_expect_eq(count_names(root, "tmp-"), 0);
  free(out), free(src);
  remove_root();
}
