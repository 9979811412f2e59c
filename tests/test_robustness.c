/* test_robustness.c: the must-survive checklist (docs/robustness.md) where the
 * other suites leave a gap, through the public API with exact statuses and
 * messages, each followed by proof that the CPU device still launches a kernel.
 *
 * Requires: a C compiler for CPU kernels (clang or cc) and a writable TMPDIR;
 * NVRTC only for the NVRTC-log test (it skips without one). No GPU: the CUDA
 * driver is hidden or replaced through KERN_CUDA_LIB, so every test behaves
 * the same on machines with and without GPUs (tests/test_gpu_faults.c has the
 * GPU-only faults). Produces: temporary directories under TMPDIR, removed at
 * the end of each test.
 *
 * Faults are injected honestly: a missing, failing or hidden library or
 * compiler through the environment; the operating system's file size limit
 * (RLIMIT_FSIZE) for a full disk and its address-space limit (RLIMIT_AS) for
 * an allocation the system refuses, both in a forked child; big and deeply
 * nested inputs are also compiled in a forked child, which reports its peak
 * resident memory and must not die of a signal (a stack overflow would).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvrtc.h"
#include "toolchain.h"
#include "harness.h"
#include "kern.h"
#include "core.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KERN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KERN_TEST_SANITIZED 1
#endif
#endif

/* Peak resident memory allowed to a child: 1 GiB (sanitizers double or triple it). */
#ifdef KERN_TEST_SANITIZED
enum { RSS_LIMIT_KB = 4 << 20 };
#else
enum { RSS_LIMIT_KB = 1 << 20 };
#endif

/* ---- temporary directories and the cache ------------------------------------------ */

static char tmp_root[512];

static const char *make_tmp(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tmp_root, sizeof tmp_root, "%s/kern-robust-XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(tmp_root));
  return tmp_root;
}

static void remove_tmp(void) {
  if (!tmp_root[0]) return;
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", tmp_root, tmp_root);
  th_run(cmd, NULL);
  tmp_root[0] = 0;
}

/* A fresh, empty cache directory below a fresh temp dir; the default compiler. */
static const char *fresh_cache(void) {
  static char dir[700];
  snprintf(dir, sizeof dir, "%s/cache", make_tmp());
  setenv("KERN_CACHE_DIR", dir, 1);
  unsetenv("KERN_CC");
  cr_assert_eq(kern_init(), KERN_OK);
  rt_config_reload();
  return dir;
}

/* Files in dir other than "." and "..". */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  if (d) closedir(d);
  return n;
}

/* ---- expectations ---------------------------------------------------------------- */

static kern_device *cpu(void) { return kern_device_get("cpu"); }

static void expect_error(kern_status got, kern_status want, const char *needle) {
  cr_assert_eq(got, want, "got %s, want %s: %s", kern_status_name(got), kern_status_name(want),
               kern_last_error());
  cr_assert(strstr(kern_last_error(), needle), "message lacks \"%s\":\n%s", needle,
            kern_last_error());
}

/* A call that returned NULL: the thread's status and message say why. */
static void expect_null(const void *p, kern_status want, const char *needle) {
  cr_assert_null(p, "expected a failure with %s", kern_status_name(want));
  expect_error(kern_last_status(), want, needle);
}

static kern_module *load(const char *name, const char *src) {
  kern_module *m = kern_module_from_source(name, src);
  cr_assert_not_null(m, "%s", kern_last_error());
  return m;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static const char *still_src = "kernel void still(int[] a, int v) { a[tid()] = v + tid(); }\n";

/* The CPU device compiles (or finds in the cache) and runs a kernel correctly. */
static void cpu_still_works(void) {
  kern_module *m = load("still.kern", still_src);
  int64_t n = 1000;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kernel(m, "still"), cpu(), KERN_DIM1(n), a, 7), KERN_OK, "%s",
               kern_last_error());
  int32_t v[1000];
  cr_assert_eq(kern_array_read(a, v, sizeof v), KERN_OK, "%s", kern_last_error());
  for (int i = 0; i < 1000; i++) cr_assert_eq(v[i], 7 + i, "a[%d] = %d", i, v[i]);
  kern_array_free(a);
  kern_module_free(m);
}

/* ---- forked children: crashes, peak memory ---------------------------------------- */

typedef struct ChildResult {
  bool done; /* the child reached the end of its work */
  kern_status status;
  char message[4096];
  int64_t value; /* whatever the work computed */
  long max_rss_kb;
} ChildResult;

typedef void (*child_fn)(ChildResult *, const void *);

/* Runs fn in a forked child (a fresh library state, its own limits). The
 * child must exit normally: a signal (a stack overflow, a crash) fails. */
static ChildResult run_child(child_fn fn, const void *arg) {
  ChildResult *shared =
      mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(shared, MAP_FAILED);
  memset(shared, 0, sizeof *shared);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    fn(shared, arg);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    shared->max_rss_kb = ru.ru_maxrss;
    shared->done = true;
    _exit(0);
  }
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  ChildResult r = *shared;
  munmap(shared, sizeof *shared);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child died: %s %d",
            WIFSIGNALED(st) ? "signal" : "exit status",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  cr_assert(r.done);
  return r;
}

static void record(ChildResult *r, kern_status st) {
  r->status = st;
  snprintf(r->message, sizeof r->message, "%s", st ? kern_last_error() : "");
}

static void expect_child(const ChildResult *r, kern_status want, const char *needle) {
  cr_expect_eq(r->status, want, "got %s, want %s: %s", kern_status_name(r->status),
               kern_status_name(want), r->message);
  cr_expect(strstr(r->message, needle), "message lacks \"%s\":\n%.1000s", needle, r->message);
  cr_expect_lt(r->max_rss_kb, RSS_LIMIT_KB, "peak resident memory %ld MiB", r->max_rss_kb >> 10);
}

/* Source made of head, n times unit, mid, n times unit2, tail (malloc'd). */
static char *repeat(const char *head, const char *unit, size_t n, const char *mid,
                    const char *unit2, const char *tail) {
  size_t lu = strlen(unit), lu2 = strlen(unit2);
  char *s = malloc(strlen(head) + n * (lu + lu2) + strlen(mid) + strlen(tail) + 1), *p = s;
  cr_assert_not_null(s);
  p += sprintf(p, "%s", head);
  for (size_t i = 0; i < n; i++, p += lu) memcpy(p, unit, lu);
  p += sprintf(p, "%s", mid);
  for (size_t i = 0; i < n; i++, p += lu2) memcpy(p, unit2, lu2);
  sprintf(p, "%s", tail);
  return s;
}

/* ---- source and types (items 7-14) ------------------------------------------------- */

TestSuite(source, .fini = remove_tmp);
TestSuite(types, .fini = remove_tmp);
TestSuite(launch, .fini = remove_tmp);
TestSuite(faults, .fini = remove_tmp);
TestSuite(threads, .fini = remove_tmp, .timeout = 300);
TestSuite(limits, .fini = remove_tmp, .timeout = 600);

static void load_identifier(ChildResult *r, const void *arg) {
  (void)arg;
  size_t n = (size_t)1 << 20;
  char *big = malloc(n + 1);
  memset(big, 'x', n);
  big[n] = 0;
  char *src = repeat("kernel void k(int[] a) {\n  int ", big, 1, " = 1;\n", "", "}\n");
  kern_module *m = kern_module_from_source("ident.kern", src);
  record(r, m ? KERN_OK : kern_last_status());
  r->value = (int64_t)strlen(kern_last_error());
  kern_module_free(m);
  free(src);
  free(big);
}

/* 7. */
Test(source, one_megabyte_identifier_through_the_api) {
  fresh_cache();
  ChildResult r = run_child(load_identifier, NULL);
  expect_child(&r, KERN_ERR_COMPILE,
               "ident.kern:2:7: error: identifier is too long (1048576 bytes; the limit is 1024)");
  cr_expect_lt(r.value, 4096, "the message is %lld bytes", (long long)r.value);
  cpu_still_works();
}

/* 8 and 9: the errors reach kern_last_error with KERN_ERR_COMPILE. */
Test(source, unbalanced_braces_duplicates_and_keywords_through_the_api) {
  fresh_cache();
  static const char *const cases[][2] = {
      {"kernel void k(int[] a) {\n  a[0] = 1;\n",
       "b.kern:3:1: error: expected '}' to close the block, found end of file"},
      {"kernel void k(int[] a) { a[0] = 1; }\n}\n", "b.kern:2:1: error: expected a declaration"},
      {"kernel void k(int[] a) { }\nkernel void k(int[] b) { }\n",
       "b.kern:2:13: error: redefinition of 'k'"},
      {"kernel void k(int[] a) {\n  int while = 3;\n}\n",
       "b.kern:2:7: error: expected a variable name, found keyword 'while'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_null(kern_module_from_source("b.kern", cases[i][0]), KERN_ERR_COMPILE, cases[i][1]);
  cpu_still_works();
}

/* 10-14: type errors are KERN_ERR_COMPILE with the checker's message. */
Test(types, type_errors_through_the_api) {
  fresh_cache();
  static const char *const cases[][2] = {
      {"kernel void k(int[] a) { a[0] = nope; }", "error: unknown name 'nope'"},
      {"float f(float x, float y) { return x + y; }\nkernel void k(float[] a) { a[0] = f(1.0, 2.0, 3.0); }",
       "error: 'f' expects 2 arguments, got 3"},
      {"kernel void k(float[] f, int[] i) { f[0] = f[0] + i[0]; }",
       "error: mismatched types float32 and int32 in '+'"},
      {"kernel void k(float[,] a) { a[0] = 1.0; }",
       "error: array 'a' has 2 dimensions but 1 index was given"},
      {"kernel void k(float[] a) { a[a[0]] = 0.0; }",
       "error: index must be an integer, not float32"},
      {"kernel void k(bool[] b) { atomic_add(&b[0], true); }",
       "error: 'atomic_add' does not support bool elements"},
      {"kernel void k(int[] a) { int x = 0; atomic_add(&x, 1); }",
       "error: 'atomic_add' works on array elements only, not on a local variable"},
      {"kernel void k(int[] a) { return a[0]; }",
       "error: kernel 'k' cannot return a value (kernels are void)"},
      {"int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }\nkernel void k(int[] a) { a[0] = fact(3); }",
       "error: recursion is not allowed: fact -> fact"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_null(kern_module_from_source("t.kern", cases[i][0]), KERN_ERR_COMPILE, cases[i][1]);
  cpu_still_works();
}

/* ---- launches (items 18, 21) ------------------------------------------------------- */

static const char *put_src = "kernel void put(int[] a, int v) { a[tid()] = v; }\n";

/* 21: 2^40 threads, negative dims, INT64_MIN, ndim 0 and 5. */
Test(launch, absurd_dims) {
  fresh_cache();
  kern_module *m = load("dims.kern", put_src);
  kern_kernel *k = kernel(m, "put");
  int64_t n = 8;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  expect_error(KERN_LAUNCH(k, cpu(), KERN_DIM1((int64_t)1 << 40), a, 1), KERN_ERR_INVALID_ARGUMENT,
               "launch of kernel 'put': launch size 1099511627776 exceeds 2^31-1");
  expect_error(KERN_LAUNCH(k, cpu(), KERN_DIM3(1 << 20, 1 << 20, 1 << 20), a, 1),
               KERN_ERR_INVALID_ARGUMENT, "exceeds 2^31-1");
  expect_error(KERN_LAUNCH(k, cpu(), KERN_DIM1(-1), a, 1), KERN_ERR_INVALID_ARGUMENT,
               "launch of kernel 'put': dim 0 is negative (-1)");
  expect_error(KERN_LAUNCH(k, cpu(), KERN_DIM2(4, INT64_MIN), a, 1), KERN_ERR_INVALID_ARGUMENT,
               "dim 1 is negative");
  kern_dims none = {0, {8, 1, 1, 1}}, five = {5, {1, 1, 1, 1}}, wild = {-3, {1, 1, 1, 1}};
  expect_error(KERN_LAUNCH(k, cpu(), none, a, 1), KERN_ERR_INVALID_ARGUMENT,
               "dims must have 1 to 4 dimensions, got 0");
  expect_error(KERN_LAUNCH(k, cpu(), five, a, 1), KERN_ERR_INVALID_ARGUMENT, "got 5");
  expect_error(KERN_LAUNCH(k, cpu(), wild, a, 1), KERN_ERR_INVALID_ARGUMENT, "got -3");
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(n), a, 9), KERN_OK, "%s", kern_last_error());
  int32_t v[8];
  kern_array_read(a, v, sizeof v);
  cr_expect_eq(v[7], 9, "the kernel still runs after the refusals");
  kern_array_free(a);
  kern_module_free(m);
}

/* 18: a zero-size array launches nothing with dim 0, and debug mode catches
 * any index into it. */
Test(launch, zero_size_arrays) {
  fresh_cache();
  kern_set_debug(true);
  kern_module *m = load("zero.kern", put_src);
  kern_set_debug(false);
  int64_t zero = 0;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &zero);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_expect_eq(KERN_LAUNCH(kernel(m, "put"), cpu(), KERN_DIM1(0), a, 1), KERN_OK, "%s",
               kern_last_error());
  expect_error(
      KERN_LAUNCH(kernel(m, "put"), cpu(), KERN_DIM1(1), a, 1), KERN_ERR_BOUNDS,
      "out-of-bounds access in kernel 'put' at zero.kern:1: index [0] is outside shape [0]");
  kern_array_free(a);
  kern_module_free(m);
  cpu_still_works();
}

/* ---- the CUDA driver and NVRTC (items 20, 25, 26) ---------------------------------- */

/* With the driver at `lib`, only the CPU exists and asking for a GPU says why. */
static void expect_no_gpu(const char *lib, const char *why) {
  setenv("KERN_CUDA_LIB", lib, 1);
  fresh_cache();
  cr_expect_eq(kern_device_count(), 1);
  cr_expect_not(kern_device_is_cuda(kern_device_at(1)));
  expect_null(kern_device_get("cuda:0"), KERN_ERR_NOT_FOUND,
              "device 'cuda:0': no CUDA device present (");
  cr_assert(strstr(kern_last_error(), why), "message lacks \"%s\": %s", why, kern_last_error());
  cr_assert(strstr(kern_last_error(), "the CPU device \"cpu\" is available"), "%s",
            kern_last_error());
  expect_null(kern_device_get("cuda"), KERN_ERR_NOT_FOUND, why);
  expect_null(kern_device_get("cuda:7"), KERN_ERR_NOT_FOUND,
              "device 'cuda:7': no CUDA device present");
  expect_null(kern_device_get("cuda:-1"), KERN_ERR_INVALID_ARGUMENT, "bad device name 'cuda:-1'");
  kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED);
  cr_expect_eq(kern_last_status(), KERN_ERR_UNSUPPORTED, "pinned memory needs the driver: %s",
               kern_last_error());
  cpu_still_works();
}

/* 25. */
Test(faults, no_cuda_driver) {
  expect_no_gpu("/nonexistent/libcuda.so.1",
                "the CUDA driver KERN_CUDA_LIB='/nonexistent/libcuda.so.1' could not be loaded: ");
}

/* 25: a library without the entry points kern needs stands for a driver that is too old. */
Test(faults, cuda_driver_too_old) {
  expect_no_gpu("libm.so.6", "the CUDA driver is too old: it lacks cuInit");
}

Test(faults, cuda_driver_hidden) { expect_no_gpu("", "is hidden (the variable is empty)"); }

static int nvrtc_compile(const char *src, char **out) {
  size_t len = 0;
  bool ptx = false;
  *out = NULL;
  return tc_nvrtc_compile(src, "gen.cu", 80, false, false, out, &len, &ptx);
}

/* 26: no NVRTC is KERN_ERR_UNSUPPORTED naming what could not be loaded. */
Test(faults, nvrtc_missing) {
  setenv("KERN_NVRTC", "/nonexistent/libnvrtc.so", 1);
  fresh_cache();
  char *out;
  expect_error(nvrtc_compile("extern \"C\" __global__ void f() {}", &out), KERN_ERR_UNSUPPORTED,
               "NVRTC KERN_NVRTC='/nonexistent/libnvrtc.so' could not be loaded: ");
  cr_expect_null(out);
  cpu_still_works();
}

/* 26: NVRTC's log is the message. */
Test(faults, nvrtc_failure_shows_its_log) {
  fresh_cache();
  const char *why = NULL;
  if (!tc_nvrtc_load(&why)) cr_skip_test("NVRTC is not available (%s)", why);
  char *out;
  expect_error(nvrtc_compile("extern \"C\" __global__ void f() { undefined_thing_xyz(); }", &out),
               KERN_ERR_COMPILE,
               "NVRTC failed to compile the generated CUDA (this is a bug in kern: please report "
               "it, with the .kern source):\n");
  cr_expect(strstr(kern_last_error(), "undefined_thing_xyz"), "the log names the culprit: %s",
            kern_last_error());
  cr_expect_null(out);
  cr_assert_eq(nvrtc_compile("extern \"C\" __global__ void f() {}", &out), KERN_OK, "%s",
               kern_last_error());
  cr_expect(out && strstr(out, ".entry f"), "PTX for f");
  free(out);
  cpu_still_works();
}

/* ---- the C compiler (item 26) ------------------------------------------------------------ */

/* A launch that must compile fails with want and needle and caches nothing. */
static void expect_compile_failure(const char *cache, const char *needle) {
  kern_module *m = load("cc.kern", "kernel void cc_only(int[] a) { a[tid()] = 31; }\n");
  int64_t n = 4;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  expect_error(KERN_LAUNCH(kernel(m, "cc_only"), cpu(), KERN_DIM1(n), a), KERN_ERR_COMPILE, needle);
  cr_expect_eq(entries(cache), 0, "nothing cached and no build directory left");
  kern_array_free(a);
  kern_module_free(m);
}

static void restore_compiler(void) {
  unsetenv("KERN_CC");
  rt_config_reload();
}

Test(faults, compiler_missing) {
  const char *cache = fresh_cache();
  setenv("KERN_CC", "/nonexistent/cc", 1);
  rt_config_reload();
  expect_compile_failure(
      cache, "the C compiler KERN_CC='/nonexistent/cc' was not found or is not executable");
  restore_compiler();
  cpu_still_works();
}

Test(faults, compiler_fails) {
  const char *cache = fresh_cache();
  setenv("KERN_CC", "false", 1);
  rt_config_reload();
  expect_compile_failure(cache, "false' failed (exit status 1) on generated code:\n(no output)");
  restore_compiler();
  cpu_still_works();
}

/* The compiler's own output is the message. */
Test(faults, compiler_log_is_the_message) {
  const char *cache = fresh_cache();
  char script[700];
  snprintf(script, sizeof script, "%s/cc", tmp_root);
  FILE *f = fopen(script, "w");
  cr_assert_not_null(f);
  fprintf(f, "#!/bin/sh\necho 'kernel.c:1:1: error: the disk is on fire' >&2\nexit 3\n");
  fclose(f);
  chmod(script, 0755);
  setenv("KERN_CC", script, 1);
  rt_config_reload();
  expect_compile_failure(
      cache, "failed (exit status 3) on generated code:\nkernel.c:1:1: error: the disk is on fire");
  restore_compiler();
  cpu_still_works();
}

/* ---- the cache (item 27): a full disk ----------------------------------------------------- */

static void launch_in_child(ChildResult *r, const void *arg) {
  kern_init();
  kern_module *m = kern_module_from_source("full.kern", arg);
  int64_t n = 4;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  kern_status st = m && a ? KERN_LAUNCH(kern_module_kernel(m, "full"), cpu(), KERN_DIM1(n), a)
                          : kern_last_status();
  int32_t v[4] = {0};
  if (!st) kern_array_read(a, v, sizeof v);
  record(r, st);
  r->value = v[3];
  kern_array_free(a);
  kern_module_free(m);
}

/* No file may grow past 16 KiB: every write fails with EFBIG, as on a full disk. */
static void launch_on_a_full_disk(ChildResult *r, const void *arg) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {16 << 10, RLIM_INFINITY};
  setrlimit(RLIMIT_FSIZE, &rl);
  launch_in_child(r, arg);
}

static const char *full_src = "kernel void full(int[] a) { a[tid()] = 40 + tid(); }\n";

Test(faults, full_disk_fails_cleanly_and_cached_code_still_loads) {
  const char *cache = fresh_cache();
  ChildResult r = run_child(launch_on_a_full_disk, full_src);
  expect_child(&r, KERN_ERR_IO, "cannot write generated code to ");
  cr_expect(strstr(r.message, "File too large"), "%s", r.message);
  cr_expect_eq(entries(cache), 0, "no partial entry, no build directory left");
  r = run_child(launch_in_child, full_src);
  expect_child(&r, KERN_OK, "");
  cr_expect_eq(r.value, 43, "with space again the module builds and runs");
  cr_expect_gt(entries(cache), 0, "and is cached");
  r = run_child(launch_on_a_full_disk, full_src);
  expect_child(&r, KERN_OK, "");
  cr_expect_eq(r.value, 43, "a full disk does not stop a cached module");
  cpu_still_works();
}

/* The cache directory on a 64 KiB file system of its own, filled up, in a
 * private mount namespace; value -2: this machine does not allow the mount. */
static void launch_with_a_full_cache(ChildResult *r, const void *arg) {
  const char *cache = getenv("KERN_CACHE_DIR");
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      (mkdir(cache, 0700) != 0 && errno != EEXIST) ||
      mount("kern-full", cache, "tmpfs", 0, "size=64k,mode=0700") != 0) {
    snprintf(r->message, sizeof r->message, "%s", strerror(errno));
    r->value = -2;
    r->done = true;
    return;
  }
  char path[800], block[4096] = {0};
  snprintf(path, sizeof path, "%s/filler", cache);
  FILE *f = fopen(path, "w");
  while (f && fwrite(block, 1, sizeof block, f) == sizeof block && fflush(f) == 0) continue;
  if (f) fclose(f);
  launch_in_child(r, arg);
}

Test(faults, full_cache_file_system_builds_in_a_temp_dir) {
  fresh_cache();
  ChildResult r = run_child(launch_with_a_full_cache, full_src);
  if (r.value == -2)
    cr_skip_test("cannot mount a small file system here (%s): full-cache test skipped", r.message);
  expect_child(&r, KERN_OK, "");
  cr_expect_eq(r.value, 43, "the module builds outside the full cache and runs");
  cpu_still_works();
}

/* ---- out of bounds under AddressSanitizer (item 22) -------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
#define KERN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KERN_TEST_ASAN 1
#endif
#endif

#ifdef KERN_TEST_ASAN
/* Release-mode CPU kernels writing one element past the end of a 16-int
 * array: from one guarded index, and as the last index of a loop the
 * compiler would vectorise. In ASan builds kern instruments the kernels it
 * compiles (scalar code, so every access is checked), so ASan stops the
 * process with its report, which goes to the file `report`. */
typedef struct {
  const char *cc, *src;
} oob_case;

static void write_past_the_end(const char *report, const oob_case *c) {
  int fd = open(report, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || dup2(fd, 2) < 0) _exit(3);
  setenv("KERN_CC", c->cc, 1);
  kern_init();
  rt_config_reload();
  kern_module *m = kern_module_from_source("oob.kern", c->src);
  int64_t n = 16;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  if (!m || !a) _exit(4);
  KERN_LAUNCH(kern_module_kernel(m, "oob"), cpu(), KERN_DIM1(n), a);
  _exit(0); /* not reached when ASan caught the write */
}

static void expect_asan_report(const oob_case *c) {
  char report[700];
  snprintf(report, sizeof report, "%s/asan-report.txt", make_tmp());
  fresh_cache();
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) write_past_the_end(report, c);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(!(WIFEXITED(st) && WEXITSTATUS(st) == 0),
            "%s: the write past the end went unnoticed (%s)", c->cc, c->src);
  cr_assert(!(WIFEXITED(st) && (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 4)),
            "%s: the child could not start", c->cc);
  char *text = th_read_file(report, NULL);
  cr_assert_not_null(text);
  cr_expect(strstr(text, "AddressSanitizer: heap-buffer-overflow"), "%s: %.2000s", c->cc, text);
  cr_expect(strstr(text, "WRITE of size 4"), "%s: %.2000s", c->cc, text);
  free(text);
  remove_tmp();
}
#endif

/* Both compilers kern supports for CPU kernels (make test installs both). */
Test(faults, out_of_bounds_kernel_is_caught_by_asan) {
#ifndef KERN_TEST_ASAN
  cr_skip_test("not an AddressSanitizer build (make test-asan runs this)");
#else
  static const char *const srcs[] = {
      "kernel void oob(int[] a) { if (tid() == 3) { a[len(a)] = 7; } }\n",
      "kernel void oob(int[] a) { a[tid() + 1] = 7; }\n",
  };
  static const char *const ccs[] = {"clang", "gcc"};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) expect_asan_report(&(oob_case){ccs[i], srcs[j]});
  fresh_cache();
  cpu_still_works();
#endif
}

/* ---- allocation (item 24): the system refuses ------------------------------------------------ */

static long vm_bytes(void) {
  long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f && fscanf(f, "%ld", &pages) != 1) pages = 0;
  if (f) fclose(f);
  return pages * sysconf(_SC_PAGESIZE);
}

/* With the address space capped 256 MiB above what is mapped, a 1 GiB array
 * is refused; small arrays and launches go on working. */
static void allocate_under_a_cap(ChildResult *r, const void *arg) {
  (void)arg;
  kern_init();
  kern_module *m = kern_module_from_source("cap.kern", put_src);
  int64_t n = 64, big = (int64_t)1 << 28;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  KERN_LAUNCH(kern_module_kernel(m, "put"), cpu(), KERN_DIM1(n), a,
              1); /* compiled and pool started */
  size_t before = rt_registry_count();
  struct rlimit rl = {(rlim_t)vm_bytes() + (256 << 20), RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &rl);
  kern_array *huge = kern_array_new(cpu(), KERN_FLOAT32, 1, &big);
  record(r, huge ? KERN_OK : kern_last_status());
  kern_status again = KERN_LAUNCH(kern_module_kernel(m, "put"), cpu(), KERN_DIM1(n), a, 5);
  int32_t v[64] = {0};
  kern_array_read(a, v, sizeof v);
  r->value = again == KERN_OK && rt_registry_count() == before ? v[63] : -1;
  kern_array_free(huge);
  kern_array_free(a);
  kern_module_free(m);
}

Test(faults, allocation_refused_by_the_system) {
#ifdef KERN_TEST_SANITIZED
  cr_skip_test(
      "sanitizers reserve the address space an RLIMIT_AS test needs (test_rt_oom injects failures)");
#endif
  fresh_cache();
  ChildResult r = run_child(allocate_under_a_cap, NULL);
  expect_child(&r, KERN_ERR_OUT_OF_MEMORY, "out of memory");
  cr_expect_eq(r.value, 5,
               "after the refusal a launch still runs and nothing leaked into the registry");
  cpu_still_works();
}

/* ---- threads (item 28) ------------------------------------------------------------------------------ */

typedef struct Job {
  kern_module *shared; /* NULL: the thread loads its own module */
  int id;
  const char *failure;
} Job;

static const char *thread_src =
    "kernel void tri(int64[] a, int64 k) { int64 i = tid(); a[i] = k * i + 1; }\n";

static const char *run_job(Job *j) {
  kern_module *m = j->shared ? j->shared : kern_module_from_source("threads.kern", thread_src);
  if (!m) return "load failed";
  int64_t n = 5000 + 977 * j->id;
  kern_array *a = kern_array_new(cpu(), KERN_INT64, 1, &n);
  kern_status st =
      KERN_LAUNCH(kern_module_kernel(m, "tri"), cpu(), KERN_DIM1(n), a, (int64_t)j->id);
  const int64_t *p = kern_array_data(a);
  const char *bad = st ? "launch failed" : NULL;
  for (int64_t i = 0; !bad && i < n; i++)
    if (p[i] != j->id * i + 1) bad = "wrong value";
  kern_array_free(a);
  if (!j->shared) kern_module_free(m);
  return bad;
}

static void *job_thread(void *arg) {
  Job *j = arg;
  j->failure = run_job(j);
  return NULL;
}

static void sixteen_threads(kern_module *shared) {
  pthread_t t[16];
  Job jobs[16];
  for (int i = 0; i < 16; i++) {
    jobs[i] = (Job){shared, i, NULL};
    cr_assert_eq(pthread_create(&t[i], NULL, job_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 16; i++) cr_expect_null(jobs[i].failure, "thread %d: %s", i, jobs[i].failure);
}

/* Sixteen threads load the same source and launch it at once, in an empty cache. */
Test(threads, sixteen_first_compiles_of_the_same_source) {
  const char *cache = fresh_cache();
  sixteen_threads(NULL);
  cr_expect_gt(entries(cache), 0, "the module was cached");
  cpu_still_works();
}

/* Sixteen threads make the first launch of one module at once, then launch again. */
Test(threads, sixteen_first_launches_of_one_module) {
  fresh_cache();
  kern_module *m = load("threads.kern", thread_src);
  sixteen_threads(m);
  sixteen_threads(m);
  kern_module_free(m);
  cpu_still_works();
}

/* ---- input limits ---------------------------------------------------------------------------- */

typedef struct Nest {
  const char *what, *head, *unit, *mid, *unit2, *tail, *message;
} Nest;

static const Nest nests[] = {
    {"parentheses", "kernel void k(int[] a) {\n  a[0] = ", "(", "1", ")", ";\n}\n",
     "nesting is too deep (limit 256)"},
    {"blocks", "kernel void k(int[] a) ", "{", "a[0] = 1;", "}", "\n",
     "nesting is too deep (limit 256)"},
    {"ifs", "kernel void k(int[] a) {\n", "if (a[0] > 0) { ", "a[0] = 1;", " }", "\n}\n",
     "nesting is too deep (limit 256)"},
    {"loops", "kernel void k(int[] a) {\n", "for (int i = 0; i < 2; i++) { ", "a[0] = 1;", " }",
     "\n}\n", "nesting is too deep (limit 256)"},
    {"unary minus", "kernel void k(int[] a) {\n  a[0] = ", "- ", "1", "", ";\n}\n",
     "nesting is too deep (limit 256)"},
    {"negation", "kernel void k(int[] a) {\n  a[0] = ", "!", "true", "", " ? 1 : 0;\n}\n",
     "nesting is too deep (limit 256)"},
    {"conditionals", "kernel void k(int[] a) {\n  a[0] = ", "a[1] > 5 ? 1 : ", "2", "", ";\n}\n",
     "nesting is too deep (limit 256)"},
    {"indices", "kernel void k(int[] a) {\n  a[0] = ", "a[", "0", "]", ";\n}\n",
     "nesting is too deep (limit 256)"},
    {"calls", "kernel void k(int[] a) {\n  a[0] = ", "abs(", "0", ")", ";\n}\n",
     "nesting is too deep (limit 256)"},
    {"a sum", "kernel void k(int[] a) {\n  a[0] = a[1]", " + a[1]", "", "", ";\n}\n",
     "nested too deeply (the limit is 2000 levels)"},
    {"a conjunction", "kernel void k(bool[] a) {\n  a[0] = a[1]", " && a[1]", "", "", ";\n}\n",
     "nested too deeply (the limit is 2000 levels)"},
};

static void load_nested(ChildResult *r, const void *arg) {
  const Nest *c = arg;
  char *src = repeat(c->head, c->unit, 10000, c->mid, c->unit2, c->tail);
  kern_init();
  kern_module *m = kern_module_from_source("deep.kern", src);
  record(r, m ? KERN_OK : kern_last_status());
  kern_module_free(m);
  free(src);
}

/* Nesting 10,000 deep, every way the grammar allows: a clear error, bounded memory, no stack overflow. */
Test(limits, ten_thousand_deep_nesting_of_every_kind) {
  fresh_cache();
  for (size_t i = 0; i < sizeof nests / sizeof nests[0]; i++) {
    ChildResult r = run_child(load_nested, &nests[i]);
    cr_log_info("%s: %.*s", nests[i].what, (int)strcspn(r.message, "\n"), r.message);
    expect_child(&r, KERN_ERR_COMPILE, nests[i].message);
  }
  cpu_still_works();
}

/* Long left-nested chains within the limits compile (the generated C nests
 * no brackets for them) and compute exactly. */
Test(limits, long_chains_compile_and_run) {
  fresh_cache();
  char *isum = repeat("kernel void isum(int[] a) {\n  int x = a[1];\n  a[0] = 1", " + x - 2 + x",
                      600, "", "", ";\n}\n");
  char *fsum = repeat("kernel void fsum(float[] a) {\n  float x = a[1];\n  a[0] = 0.0",
                      " + x * 0.5", 1500, "", "", ";\n}\n");
  char *bsum = repeat("kernel void bsum(int8[] a) {\n  int8 x = a[1];\n  a[0] = x", " * x + x", 999,
                      "", "", ";\n}\n");
  char *all = repeat(isum, fsum, 1, bsum, "", "");
  kern_module *m = load("chains.kern", all);
  int64_t n = 2;
  kern_array *i = kern_array_new(cpu(), KERN_INT32, 1, &n),
             *f = kern_array_new(cpu(), KERN_FLOAT32, 1, &n);
  kern_array *b = kern_array_new(cpu(), KERN_INT8, 1, &n);
  int32_t iv[2] = {0, 3};
  float fv[2] = {0, 2};
  int8_t bv[2] = {0, 3};
  kern_array_write(i, iv, sizeof iv), kern_array_write(f, fv, sizeof fv),
      kern_array_write(b, bv, sizeof bv);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "isum"), cpu(), KERN_DIM1(1), i), KERN_OK, "%.2000s",
               kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kernel(m, "fsum"), cpu(), KERN_DIM1(1), f), KERN_OK, "%.2000s",
               kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kernel(m, "bsum"), cpu(), KERN_DIM1(1), b), KERN_OK, "%.2000s",
               kern_last_error());
  kern_array_read(i, iv, sizeof iv), kern_array_read(f, fv, sizeof fv),
      kern_array_read(b, bv, sizeof bv);
  cr_expect_eq(iv[0], 1 + 600 * (3 - 2 + 3));
  cr_expect_eq(fv[0], 1500.0f);
  cr_expect_eq(bv[0], (int8_t)(999 * 3 * 3 + 3), "x * x + ... + x * x + x wraps in int8: %d",
               bv[0]);
  kern_array_free(i), kern_array_free(f), kern_array_free(b);
  kern_module_free(m);
  free(isum), free(fsum), free(bsum), free(all);
}

/* Right-nested expressions within the parser's limits nest deeper than
 * clang's default bracket limit in the generated C: they compile and run. */
Test(limits, deep_right_nesting_compiles_and_runs) {
  fresh_cache();
  char *rsum =
      repeat("kernel void rsum(int[] a) {\n  a[0] = ", "a[1] + (", 200, "a[1]", ")", ";\n}\n");
  char *rdiv = repeat("kernel void rdiv(int[] a) {\n  a[2] = a[1]", " / 1", 400, "", "", ";\n}\n");
  char *all = repeat(rsum, rdiv, 1, "", "", "");
  kern_module *m = load("right.kern", all);
  int64_t n = 3;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  int32_t v[3] = {0, 3, 0};
  kern_array_write(a, v, sizeof v);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "rsum"), cpu(), KERN_DIM1(1), a), KERN_OK, "%.2000s",
               kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kernel(m, "rdiv"), cpu(), KERN_DIM1(1), a), KERN_OK, "%.2000s",
               kern_last_error());
  kern_array_read(a, v, sizeof v);
  cr_expect_eq(v[0], 201 * 3);
  cr_expect_eq(v[2], 3);
  kern_array_free(a);
  kern_module_free(m);
  free(rsum), free(rdiv), free(all);
}

/* The deepest programs the limits accept: a sum of 1990 terms, a conjunction
 * of 1990 terms, 253 parentheses around an array element. */
static void *compile_deepest(void *arg) {
  char *sum =
      repeat("kernel void sum(int[] a) {\n  a[0] = a[1]", " + a[1]", 1989, "", "", ";\n}\n");
  char *all =
      repeat("kernel void all(bool[] b) {\n  b[0] = b[1]", " && b[1]", 1989, "", "", ";\n}\n");
  char *par = repeat("kernel void par(int[] a) {\n  a[2] = ", "(", 253, "a[1]", ")", ";\n}\n");
  char *src = repeat(sum, all, 1, par, "", "");
  kern_module *m = kern_module_from_source("deepest.kern", src);
  int64_t n = 3;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n),
             *b = kern_array_new(cpu(), KERN_BOOL, 1, &n);
  int32_t av[3] = {0, 2, 0};
  bool bv[3] = {false, true, false};
  kern_array_write(a, av, sizeof av), kern_array_write(b, bv, sizeof bv);
  kern_status st =
      m ? KERN_LAUNCH(kern_module_kernel(m, "sum"), cpu(), KERN_DIM1(1), a) : kern_last_status();
  if (!st) st = KERN_LAUNCH(kern_module_kernel(m, "all"), cpu(), KERN_DIM1(1), b);
  if (!st) st = KERN_LAUNCH(kern_module_kernel(m, "par"), cpu(), KERN_DIM1(1), a);
  kern_array_read(a, av, sizeof av), kern_array_read(b, bv, sizeof bv);
  ChildResult *r = arg;
  record(r, st);
  r->value = st ? -1 : av[0] * 1000 + av[2] * 10 + bv[0];
  kern_array_free(a), kern_array_free(b);
  kern_module_free(m);
  free(sum), free(all), free(par), free(src);
  return NULL;
}

#ifdef KERN_TEST_SANITIZED
enum { DEEP_STACK = 8 << 20 }; /* sanitizers make every frame bigger */
#else
enum { DEEP_STACK = 2 << 20 };
#endif

/* Compiling them needs about 1 MiB of stack (docs/robustness.md): they
 * compile and run on a thread with DEEP_STACK bytes of it. */
Test(limits, deepest_accepted_programs_on_a_small_stack) {
  fresh_cache();
  ChildResult r = {0};
  pthread_attr_t attr;
  pthread_t t;
  cr_assert_eq(pthread_attr_init(&attr), 0);
  cr_assert_eq(pthread_attr_setstacksize(&attr, DEEP_STACK), 0);
  cr_assert_eq(pthread_create(&t, &attr, compile_deepest, &r), 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  cr_assert_eq(r.status, KERN_OK, "%.2000s", r.message);
  cr_expect_eq(r.value, 1990 * 2 * 1000 + 2 * 10 + 1, "sum %lld", (long long)r.value);
}

/* n kernels with prose around them, as in generated files (malloc'd). */
static char *many_kernels(int n, size_t *len) {
  size_t cap = (size_t)n * 400 + 1, at = 0;
  char *s = malloc(cap);
  cr_assert_not_null(s);
  for (int i = 0; i < n; i++)
    at += (size_t)snprintf(
        s + at, cap - at,
        "// Scales x by a and adds a constant: one of many generated kernels, with\n"
        "// the comment block that real files carry, so the file is mostly text.\n"
        "kernel void k%d(float[] x, float a) {\n  int i = tid();\n"
        "  if (i < len(x)) { x[i] = a * x[i] + %d.0f; }\n}\n",
        i, i % 1000);
  *len = at;
  return s;
}

static void write_file(const char *path, const char *s, size_t len) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(s, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
}

typedef struct Load {
  const char *path, *last; /* the file; the name of its last kernel */
} Load;

static void load_file(ChildResult *r, const void *arg) {
  const Load *l = arg;
  kern_init();
  kern_module *m = kern_module_load(l->path);
  kern_status st = m ? KERN_OK : kern_last_status();
  if (m && (!kern_module_kernel(m, "k0") || !kern_module_kernel(m, l->last)))
    st = kern_last_status();
  record(r, st);
  kern_module_free(m);
}

static void load_many(int n, size_t min_bytes) {
  fresh_cache();
  size_t len;
  char *src = many_kernels(n, &len), path[700], last[32];
  cr_assert_geq(len, min_bytes, "only %zu bytes", len);
  snprintf(path, sizeof path, "%s/many.kern", tmp_root);
  snprintf(last, sizeof last, "k%d", n - 1);
  write_file(path, src, len);
  free(src);
  Load l = {path, last};
  ChildResult r = run_child(load_file, &l);
  expect_child(&r, KERN_OK, "");
  cr_log_info("%d kernels, %zu bytes: peak resident memory %ld MiB", n, len, r.max_rss_kb >> 10);
}

Test(limits, ten_megabyte_file_loads_in_bounded_memory) { load_many(42000, (size_t)10 << 20); }

Test(limits, ten_thousand_kernels_load_in_bounded_memory) { load_many(10000, 0); }

/* Compiling 10,000 kernels for the CPU takes minutes and a gigabyte in the C
 * compiler: opt in with KERN_TEST_LONG=1. */
Test(limits, ten_thousand_kernels_launch, .timeout = 1800) {
  if (!getenv("KERN_TEST_LONG"))
    cr_skip_test("set KERN_TEST_LONG=1 to compile 10,000 kernels for the CPU");
  fresh_cache();
  size_t len;
  char *src = many_kernels(10000, &len);
  kern_module *m = load("many.kern", src);
  int64_t n = 4;
  kern_array *x = kern_array_new(cpu(), KERN_FLOAT32, 1, &n);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "k9999"), cpu(), KERN_DIM1(n), x, 2.0f), KERN_OK, "%.2000s",
               kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kernel(m, "k0"), cpu(), KERN_DIM1(n), x, 2.0f), KERN_OK, "%s",
               kern_last_error());
  float v[4];
  kern_array_read(x, v, sizeof v);
  cr_expect_eq(v[0], 2.0f * 999.0f, "k9999 adds 999, then k0 doubles");
  kern_array_free(x);
  kern_module_free(m);
  free(src);
}

/* A file over the 256 MiB source limit (sparse: no disk space used). */
Test(limits, file_over_the_source_limit) {
  fresh_cache();
  char path[700];
  snprintf(path, sizeof path, "%s/huge.kern", tmp_root);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  cr_assert_eq(ftruncate(fileno(f), (off_t)300 << 20), 0);
  fclose(f);
  Load l = {path, "k0"};
  ChildResult r = run_child(load_file, &l);
  expect_child(&r, KERN_ERR_IO, "File too large");
  cr_expect(strstr(r.message, "huge.kern"), "%s", r.message);
  cpu_still_works();
}
