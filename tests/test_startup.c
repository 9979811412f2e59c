/* test_startup.c: what a program pays, hears and finds when it starts: CUDA
 * started only when needed (checked against a stand-in driver that counts
 * calls), the log (its handler, KERN_LOG, module warnings, kernc run), and
 * where kern_module_load finds a module (KERN_PATH, the API, $ORIGIN).
 *
 * Requires: a C compiler for CPU kernels, the stand-in driver
 * tests/support/fake_cuda.c built as a library (FAKE_CUDA_LIB, loaded through
 * KERN_CUDA_LIB, so every test behaves the same with and without a GPU), and
 * kernc (KERNC_PATH). Produces: temporary directories under TMPDIR, removed at
 * the end of each test. Each Criterion test is its own process, so each
 * starts kern (and loads the driver) afresh.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kern.h"

/* ---- temporary directories -------------------------------------------------------- */

static char tmp_root[512];

static const char *make_tmp(void) {
  if (tmp_root[0]) return tmp_root;
  const char *t = getenv("TMPDIR");
  snprintf(tmp_root, sizeof tmp_root, "%s/kern-startup-XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(tmp_root));
  return tmp_root;
}

static void remove_tmp(void) {
  if (!tmp_root[0]) return;
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
  th_run(cmd, NULL);
  tmp_root[0] = 0;
}

/* root/name, a path (static storage, one at a time per call site). */
static const char *tmp_path(const char *name, char *out, size_t cap) {
  snprintf(out, cap, "%s/%s", make_tmp(), name);
  return out;
}

/* An empty cache, so the next compile is a real one (set before kern_init). */
static void fresh_cache(void) {
  char dir[700];
  setenv("KERN_CACHE_DIR", tmp_path("cache", dir, sizeof dir), 1);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static kern_device *cpu(void) { return kern_device_get("cpu"); }

static const char *fill_src = "kernel void fill(int[] a, int v) { a[tid()] = v + tid(); }\n";

/* A launch on dev of fill over 4 elements, checked. */
static void launch_fill(kern_module *m, kern_device *dev) {
  int64_t n = 4;
  kern_array *a = kern_array_new(dev, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "fill");
  cr_assert_not_null(k, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(k, dev, KERN_DIM1(n), a, 7), KERN_OK, "%s", kern_last_error());
  int out[4];
  cr_assert_eq(kern_array_read(a, out, sizeof out), KERN_OK, "%s", kern_last_error());
  for (int i = 0; i < 4; i++) cr_assert_eq(out[i], 7 + i);
  kern_array_free(a);
}

/* ---- the stand-in driver ---------------------------------------------------------------- */

static int (*calls_of)(const char *);
static void (*fail_with)(const char *, int);
static long long (*pool_threshold)(int, long long);

/* KERN_CUDA_LIB names the stand-in; kern loads it when it needs CUDA. */
static void use_fake_driver(int gpus) {
  char n[8];
  snprintf(n, sizeof n, "%d", gpus);
  setenv("FAKE_CUDA_DEVICES", n, 1);
  setenv("KERN_CUDA_LIB", FAKE_CUDA_LIB, 1);
}

/* Whether kern loaded the driver (asked without loading it). */
static bool driver_loaded(void) {
  void *lib = dlopen(FAKE_CUDA_LIB, RTLD_NOW | RTLD_NOLOAD);
  if (lib) dlclose(lib);
  return lib != NULL;
}

/* The stand-in's counters (dlopen of the same path: the library kern loaded, or
 * loads later). */
static void open_fake(void) {
  void *lib = dlopen(FAKE_CUDA_LIB, RTLD_NOW);
  cr_assert_not_null(lib, "%s", dlerror());
  calls_of = (int (*)(const char *))dlsym(lib, "fake_cuda_calls");
  fail_with = (void (*)(const char *, int))dlsym(lib, "fake_cuda_fail");
  pool_threshold = (long long (*)(int, long long))dlsym(lib, "fake_cuda_pool_threshold");
  cr_assert(calls_of && fail_with && pool_threshold);
}

static int calls(const char *name) {
  if (!calls_of) open_fake();
  return calls_of(name);
}

/* From now on the driver's entry point `name` returns result (0: works again). */
static void fake_fault(const char *name, int result) {
  if (!fail_with) open_fake();
  fail_with(name, result);
}

static kern_device *gpu(const char *name) {
  kern_device *d = kern_device_get(name);
  cr_assert_not_null(d, "%s", kern_last_error());
  return d;
}

TestSuite(lazy_cuda, .fini = remove_tmp);

/* A CPU-only program with a driver present: kern_init, a compile and a launch
 * on "cpu", arrays made and wrapped: the driver is not even loaded. */
Test(lazy_cuda, cpu_only_program_never_loads_the_driver) {
  use_fake_driver(1);
  fresh_cache();
  cr_assert_eq(kern_init(), KERN_OK);
  kern_module *m = kern_module_from_source("fill.kern", fill_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  launch_fill(m, cpu());
  int host[4] = {0};
  int64_t n = 4;
  kern_array *w = kern_array_wrap(host, cpu(), KERN_INT32, 1, &n, NULL);
  cr_assert_not_null(w, "%s", kern_last_error());
  cr_expect_eq(kern_array_memory_kind(w), KERN_MEM_UNKNOWN);
  cr_expect_eq(kern_device_at(0), cpu());
  cr_expect_eq(kern_device_get_allocator(cpu()), KERN_ALLOC_DEFAULT);
  kern_array_free(w);
  kern_module_free(m);
  cr_assert_not(driver_loaded(), "the CUDA driver was loaded by a CPU-only program");
  cr_assert_eq(calls("cuInit"), 0);
}

/* Asking for the device list starts the driver (cuInit, counting) but makes
 * no context: a GPU's context, stream and buffers come with its first use. */
Test(lazy_cuda, device_list_starts_the_driver_first_use_the_context) {
  use_fake_driver(2);
  cr_assert_eq(kern_init(), KERN_OK);
  cr_assert_not(driver_loaded());
  cr_assert_eq(kern_device_count(), 3, "cpu, cuda:0, cuda:1: %s", kern_last_error());
  cr_expect_eq(calls("cuInit"), 1);
  kern_device *g0 = gpu("cuda:0"), *g1 = gpu("cuda:1");
  cr_expect_eq(kern_device_at(1), g0);
  kern_device_info info;
  cr_assert_eq(kern_device_info_get(g0, &info), KERN_OK);
  cr_expect(info.sm_major == 8 && info.sm_minor == 0 && info.is_uva, "read at the probe");
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 0, "no context before a first use");
  cr_expect_eq(calls("cuStreamCreate"), 0);
  cr_expect_eq(kern_device_synchronize(g0), KERN_OK, "nothing queued: nothing to start");
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 0);

  int64_t n = 4;
  kern_array *a = kern_array_new(g0, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 1, "cuda:0 started");
  cr_expect_eq(calls("cuStreamCreate"), 1);
  int out[4] = {1, 1, 1, 1};
  cr_assert_eq(kern_array_read(a, out, sizeof out), KERN_OK, "%s", kern_last_error());
  cr_expect(out[0] == 0 && out[3] == 0, "zeroed");
  kern_array *b = kern_array_new(g0, KERN_INT32, 1, &n);
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 1, "started once");
  cr_assert_not_null(kern_device_get_stream(g1), "%s", kern_last_error());
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 2, "cuda:1 started by asking for its stream");
  cr_expect_eq(calls("cuInit"), 1, "the driver starts once");
  kern_array_free(a), kern_array_free(b);
}

/* kern_device_get of a "cuda" name is what most programs call first. */
Test(lazy_cuda, asking_for_a_gpu_by_name_probes) {
  use_fake_driver(1);
  cr_assert_not_null(kern_device_get("cpu"));
  cr_assert_not(driver_loaded(), "\"cpu\" needs no CUDA");
  cr_assert_null(kern_device_get("cuda:3"));
  cr_assert(strstr(kern_last_error(), "no such device (CUDA devices are cuda:0 to cuda:0)"), "%s",
            kern_last_error());
  cr_expect_eq(calls("cuInit"), 1);
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 0);
}

static kern_device *racing_gpu;
static pthread_barrier_t start_line;

static void *allocate_on_gpu(void *arg) {
  (void)arg;
  int64_t n = 16;
  pthread_barrier_wait(&start_line);
  return kern_array_new(racing_gpu, KERN_FLOAT32, 1, &n);
}

/* Eight threads whose first call uses the GPU at once: one context, one stream. */
Test(lazy_cuda, first_use_from_many_threads_starts_once) {
  use_fake_driver(1);
  racing_gpu = gpu("cuda");
  enum { N = 8 };
  pthread_t t[N];
  pthread_barrier_init(&start_line, NULL, N);
  for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, allocate_on_gpu, NULL);
  for (int i = 0; i < N; i++) {
    void *a;
    pthread_join(t[i], &a);
    cr_assert_not_null(a, "thread %d", i);
    kern_array_free(a);
  }
  pthread_barrier_destroy(&start_line);
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 1);
  cr_expect_eq(calls("cuStreamCreate"), 1);
}

/* A GPU whose context cannot be made fails its first use with the driver's
 * reason, the CPU goes on, and a later use tries again. */
Test(lazy_cuda, a_gpu_that_cannot_start_says_why_and_retries) {
  use_fake_driver(1);
  fresh_cache();
  kern_device *g = gpu("cuda:0");
  fake_fault("cuDevicePrimaryCtxRetain", 2);
  int64_t n = 4;
  cr_assert_null(kern_array_new(g, KERN_INT32, 1, &n));
  cr_expect_eq(kern_last_status(), KERN_ERR_OUT_OF_MEMORY, "%s",
               kern_status_name(kern_last_status()));
  cr_expect(strstr(kern_last_error(), "cuda:0 (Fake GPU 0) could not be started: "
                                      "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY"),
            "%s", kern_last_error());
  cr_expect_null(kern_device_get_stream(g));
  kern_module *m = kern_module_from_source("fill.kern", fill_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  launch_fill(m, cpu());
  fake_fault("cuDevicePrimaryCtxRetain", 0);
  kern_array *a = kern_array_new(g, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "the next use starts it: %s", kern_last_error());
  kern_array_free(a);
  kern_module_free(m);
}

/* A sticky fault after a lazy start poisons the device as before: every later
 * call repeats the first fault, the CPU still works. */
Test(lazy_cuda, a_fault_still_poisons_the_device) {
  use_fake_driver(1);
  fresh_cache();
  kern_device *g = gpu("cuda:0");
  int64_t n = 4;
  kern_array *a = kern_array_new(g, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  fake_fault("cuMemcpyAsync", 700);
  int out[4];
  cr_assert_eq(kern_array_read(a, out, sizeof out), KERN_ERR_CUDA);
  const char *want = "cuda:0 is unusable after a fault in";
  cr_expect(strstr(kern_last_error(), want), "%s", kern_last_error());
  fake_fault("cuMemcpyAsync", 0);
  cr_assert_null(kern_array_new(g, KERN_INT32, 1, &n));
  cr_expect(strstr(kern_last_error(), want), "still poisoned: %s", kern_last_error());
  kern_array_free(a);
  kern_module *m = kern_module_from_source("fill.kern", fill_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  launch_fill(m, cpu());
  kern_module_free(m);
}

/* The CUDA backend's copies through the stand-in driver with two GPUs: a
 * window of cuda:1 copied into a window of cuda:0 is one 2-D driver copy,
 * queued after cuda:1's stream (an event cuda:0 waits on) and before
 * cuda:1's later work (an event the other way); the bytes are right. */
Test(lazy_cuda, copies_between_two_gpus_are_2d_and_ordered_both_ways) {
  use_fake_driver(2);
  kern_device *g0 = gpu("cuda:0"), *g1 = gpu("cuda:1");
  int64_t shape[2] = {4, 4}, w[2] = {2, 3};
  int32_t h[16], got[16];
  for (int i = 0; i < 16; i++) h[i] = 100 + i;
  kern_array *a = kern_array_new(g0, KERN_INT32, 2, shape),
             *b = kern_array_new(g1, KERN_INT32, 2, shape);
  cr_assert(a && b, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(b, h, sizeof h), KERN_OK, "%s", kern_last_error());
  kern_array *va = kern_array_view(a, 2, (int64_t[]){2, 0}, w),
             *vb = kern_array_view(b, 2, (int64_t[]){1, 1}, w);
  int rec = calls("cuEventRecord"), wait = calls("cuStreamWaitEvent"),
      two = calls("cuMemcpy2DAsync_v2");
  cr_assert_eq(kern_array_copy(va, vb), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(calls("cuMemcpy2DAsync_v2") - two, 1, "one 2-D copy for a 2-D window");
  cr_expect_eq(calls("cuEventRecord") - rec, 2, "an event on each GPU's stream");
  cr_expect_eq(calls("cuStreamWaitEvent") - wait, 2, "each stream waits for the other");
  cr_assert_eq(kern_array_read(a, got, sizeof got), KERN_OK);
  for (int i = 0; i < 16; i++) {
    int r = i / 4, c = i % 4;
    int32_t want = r >= 2 && c < 3 ? h[(r - 1) * 4 + c + 1] : 0;
    cr_expect_eq(got[i], want, "a[%d,%d] = %d, expected %d", r, c, got[i], want);
  }
  rec = calls("cuEventRecord");
  int32_t seven = 7;
  cr_assert_eq(kern_array_fill(va, &seven), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(calls("cuEventRecord"), rec, "one GPU's own copy joins no other stream");
  kern_array_free(va), kern_array_free(vb), kern_array_free(a), kern_array_free(b);
}

/* Where the driver says one GPU cannot reach another (cuDeviceCanAccessPeer),
 * enabling peer or pool access fails with that reason before any other call. */
Test(lazy_cuda, peer_access_the_driver_rules_out_is_refused) {
  use_fake_driver(2);
  setenv("FAKE_CUDA_NO_PEER", "1", 1);
  kern_device *g0 = gpu("cuda:0"), *g1 = gpu("cuda:1");
  cr_assert_eq(kern_device_enable_peer_access(g0, g1, true), KERN_ERR_UNSUPPORTED);
  cr_expect(strstr(kern_last_error(), "cuda:1 cannot access the memory of cuda:0 directly"), "%s",
            kern_last_error());
  cr_expect(strstr(kern_last_error(), "cuDeviceCanAccessPeer"), "%s", kern_last_error());
  cr_expect_eq(calls("cuCtxEnablePeerAccess"), 0);
  cr_assert_eq(kern_device_enable_mempool_access(g1, g0, true), KERN_ERR_UNSUPPORTED);
  cr_expect(strstr(kern_last_error(), "cuda:0 cannot access the memory of cuda:1"), "%s",
            kern_last_error());
  int64_t n = 4;
  kern_array *a = kern_array_new(g0, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_expect_not(kern_can_access(g1, a), "still not accessible");
  cr_expect_eq(kern_device_enable_peer_access(g0, g1, false), KERN_OK, "turning off needs no path");
  kern_array_free(a);
  unsetenv("FAKE_CUDA_NO_PEER");
}

/* Pinned memory needs the driver: asking for it probes, and the allocation
 * makes cuda:0's context (the driver allocates in one). */
Test(lazy_cuda, pinned_memory_probes_and_makes_a_context) {
  use_fake_driver(1);
  cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED), KERN_ALLOC_DEFAULT, "%s",
               kern_last_error());
  cr_expect_eq(calls("cuInit"), 1);
  int64_t n = 8;
  kern_array *p = kern_array_new(cpu(), KERN_INT32, 1, &n);
  cr_assert_not_null(p, "%s", kern_last_error());
  cr_expect_eq(kern_array_memory_kind(p), KERN_MEM_PINNED_HOST);
  cr_expect_eq(calls("cuMemAllocHost_v2"), 1);
  kern_array_free(p);
}

/* A GPU's first use has its default memory pool keep up to 64 MiB of freed
 * memory (the driver's default, 0, gives it back at every synchronize and
 * the next stream-ordered allocation maps pages again); a larger threshold
 * the program set before is left as it was. */
Test(lazy_cuda, first_use_keeps_freed_pool_memory) {
  setenv("FAKE_CUDA_POOLS", "1", 1);
  use_fake_driver(2);
  open_fake();
  pool_threshold(1, 1ll << 30);
  cr_assert_eq(kern_init(), KERN_OK);
  int64_t n = 8;
  for (int d = 0; d < 2; d++) {
    kern_array *a = kern_array_new(gpu(d ? "cuda:1" : "cuda:0"), KERN_INT32, 1, &n);
    cr_assert_not_null(a, "%s", kern_last_error());
    kern_array_free(a);
  }
  cr_expect_eq(pool_threshold(0, -1), 64ll << 20, "cuda:0's pool keeps %lld bytes",
               pool_threshold(0, -1));
  cr_expect_eq(pool_threshold(1, -1), 1ll << 30, "cuda:1's pool keeps %lld bytes",
               pool_threshold(1, -1));
  cr_expect_geq(calls("cuMemPoolSetAttribute"), 1);
  unsetenv("FAKE_CUDA_POOLS");
}

/* Once the driver is in the process, a foreign pointer is asked about only
 * in a context that exists: wrapping host memory makes none. */
Test(lazy_cuda, wrapping_host_memory_makes_no_context) {
  use_fake_driver(1);
  cr_assert_eq(kern_device_count(), 2);
  int host[4] = {0};
  int64_t n = 4;
  kern_array *w = kern_array_wrap(host, cpu(), KERN_INT32, 1, &n, NULL);
  cr_assert_not_null(w, "%s", kern_last_error());
  cr_expect_eq(kern_array_memory_kind(w), KERN_MEM_UNKNOWN);
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 0);
  cr_expect_eq(calls("cuPointerGetAttributes"), 0, "no context, so no CUDA memory to ask about");
  kern_array_free(w);
  kern_array *a = kern_array_new(gpu("cuda:0"), KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  w = kern_array_wrap(host, cpu(), KERN_INT32, 1, &n, NULL);
  cr_assert_not_null(w, "%s", kern_last_error());
  cr_expect_geq(calls("cuPointerGetAttributes"), 1, "with a context, the driver is asked");
  cr_expect_eq(calls("cuDevicePrimaryCtxRetain"), 1);
  kern_array_free(w), kern_array_free(a);
}

/* ---- the log ----------------------------------------------------------------------------- */

/* What a handler heard, in order. */
typedef struct Heard {
  pthread_mutex_t mu;
  int n;
  kern_log_level level[32];
  char *msg[32];
} Heard;
static Heard heard = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void hear(kern_log_level level, const char *msg, void *ud) {
  Heard *h = ud;
  pthread_mutex_lock(&h->mu);
  if (h->n < 32) h->level[h->n] = level, h->msg[h->n++] = strdup(msg);
  pthread_mutex_unlock(&h->mu);
}

/* The index of the first message from `from` that contains needle; -1 if none. */
static int find_heard(int from, const char *needle) {
  for (int i = from; i < heard.n; i++)
    if (strstr(heard.msg[i], needle)) return i;
  return -1;
}

static void dump_heard(void) {
  for (int i = 0; i < heard.n; i++)
    fprintf(stderr, "heard %d: [%d] %s\n", i, heard.level[i], heard.msg[i]);
}

static const char *warn_src = "kernel void fill(int[] a, int v) {\n"
                              "    a[tid()] + 1;\n"
                              "    a[tid()] = v + tid();\n"
                              "}\n";

TestSuite(log, .fini = remove_tmp);

/* One line per module made ready for a device: compiled, then from the cache. */
Test(log, handler_hears_compiled_then_cached) {
  fresh_cache();
  kern_set_log_handler(hear, &heard, KERN_LOG_INFO);
  cr_assert_eq(kern_get_log_level(), KERN_LOG_INFO);
  for (int round = 0; round < 2; round++) {
    kern_module *m = kern_module_from_source("log_fill.kern", fill_src);
    cr_assert_not_null(m, "%s", kern_last_error());
    launch_fill(m, cpu());
    launch_fill(m, cpu()); /* ready already: no second line */
    kern_module_free(m);
  }
  int a = find_heard(0, "module 'log_fill.kern' loaded on cpu in ");
  cr_assert_geq(a, 0, "no line for the compile");
  cr_expect(strstr(heard.msg[a], " ms (compiled)"), "%s", heard.msg[a]);
  cr_expect_eq(heard.level[a], KERN_LOG_INFO);
  double ms = -1;
  cr_expect_eq(sscanf(heard.msg[a], "module 'log_fill.kern' loaded on cpu in %lf ms", &ms), 1);
  cr_expect(ms > 0, "%s", heard.msg[a]);
  int b = find_heard(a + 1, "module 'log_fill.kern' loaded on cpu in ");
  cr_assert_gt(b, a, "no line for the cached load");
  cr_expect(strstr(heard.msg[b], " ms (cached)"), "%s", heard.msg[b]);
  cr_expect_eq(find_heard(b + 1, "module 'log_fill.kern'"), -1, "one line per module and device");
  if (heard.n != 2) dump_heard();
  cr_expect_eq(heard.n, 2, "nothing else was said");
}

/* A module's warnings arrive when it loads, as its diagnostics render them;
 * a handler at WARNING hears them but not the module lines; OFF, nothing. */
Test(log, warnings_arrive_at_their_level) {
  fresh_cache();
  kern_set_log_handler(hear, &heard, KERN_LOG_WARNING);
  kern_module *m = kern_module_from_source("warned.kern", warn_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_assert_eq(heard.n, 1, "the warning, when the module loads");
  cr_expect_eq(heard.level[0], KERN_LOG_WARNING);
  cr_expect(strstr(heard.msg[0], "warned.kern:2:5: warning: expression result unused"), "%s",
            heard.msg[0]);
  size_t len = strlen(heard.msg[0]);
  cr_expect(len && heard.msg[0][len - 1] != '\n', "no trailing newline");
  cr_expect(!strncmp(heard.msg[0], kern_module_diagnostics(m), len), "the diagnostics' text");
  launch_fill(m, cpu());
  cr_expect_eq(heard.n, 1, "no INFO line at WARNING level");
  kern_module_free(m);
  kern_set_log_handler(hear, &heard, KERN_LOG_OFF);
  m = kern_module_from_source("warned.kern", warn_src);
  cr_assert_not_null(m);
  cr_expect_eq(heard.n, 1, "nothing at OFF");
  kern_module_free(m);
}

/* CHECKED-mode warnings join the log when no warning handler is set. */
Test(log, checked_mode_warnings_reach_the_log_handler) {
  fresh_cache();
  kern_set_log_handler(hear, &heard, KERN_LOG_WARNING);
  kern_module *m = kern_module_from_source("fill.kern", fill_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  int host[4];
  int64_t n = 4;
  kern_array *w = kern_array_wrap(host, cpu(), KERN_INT32, 1, &n, NULL);
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "fill"), cpu(), KERN_DIM1(n), w, 1), KERN_OK, "%s",
               kern_last_error());
  cr_assert_eq(heard.n, 1);
  cr_expect_eq(heard.level[0], KERN_LOG_WARNING);
  cr_expect(strstr(heard.msg[0], "fill"), "%s", heard.msg[0]);
  kern_array_free(w);
  kern_module_free(m);
}

/* The GPU probe and a GPU's start are logged, with how long they took. */
Test(log, the_gpu_probe_and_start_are_logged) {
  use_fake_driver(1);
  kern_set_log_handler(hear, &heard, KERN_LOG_INFO);
  cr_assert_eq(kern_device_count(), 2);
  int p = find_heard(0, "GPUs probed in ");
  cr_assert_geq(p, 0);
  cr_expect(strstr(heard.msg[p], "ms: cuda:0 ("), "%s", heard.msg[p]);
  int64_t n = 4;
  kern_array *a = kern_array_new(gpu("cuda:0"), KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  int s = find_heard(p + 1, "cuda:0 (Fake GPU 0) started in ");
  cr_assert_gt(s, p);
  cr_expect(strstr(heard.msg[s], "ms (CUDA context and stream)"), "%s", heard.msg[s]);
  kern_array_free(a);
}

/* KERN_LOG in a new process: lines on stderr, prefixed "kern: "; unset,
 * nothing at all (the library never prints unless asked). Returns stderr. */
static char *child_stderr(const char *kern_log) {
  char path[700];
  tmp_path(kern_log ? "with-log.txt" : "without-log.txt", path, sizeof path);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(3);
    if (kern_log)
      setenv("KERN_LOG", kern_log, 1);
    else
      unsetenv("KERN_LOG");
    for (int round = 0; round < 2; round++) {
      kern_module *m = kern_module_from_source("child.kern", warn_src);
      int64_t n = 4;
      kern_array *a = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &n);
      kern_kernel *k = m ? kern_module_kernel(m, "fill") : NULL;
      if (!k || !a || KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(n), a, 1)) _exit(4);
      kern_array_free(a);
      kern_module_free(m);
    }
    _exit(0);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed: %d", status);
  char *text = th_read_file(path, NULL);
  cr_assert_not_null(text);
  return text;
}

Test(log, kern_log_prints_on_stderr_and_unset_prints_nothing) {
  fresh_cache();
  char *err = child_stderr("1");
  const char *warn = strstr(err, "kern: child.kern:2:5: warning: expression result unused\n");
  const char *compiled = strstr(err, "kern: module 'child.kern' loaded on cpu in ");
  cr_assert(warn && compiled, "stderr:\n%s", err);
  cr_expect(strstr(compiled, " ms (compiled)\n"), "stderr:\n%s", err);
  const char *cached = strstr(compiled + 1, "kern: module 'child.kern' loaded on cpu in ");
  cr_assert(cached, "stderr:\n%s", err);
  cr_expect(strstr(cached, " ms (cached)\n"), "stderr:\n%s", err);
  free(err);
  err = child_stderr(NULL);
  cr_expect_str_eq(err, "", "the library printed without being asked:\n%s", err);
  free(err);
  err = child_stderr("warning");
  cr_expect(strstr(err, "warning: expression result unused"), "stderr:\n%s", err);
  cr_expect_null(strstr(err, "loaded on cpu"), "stderr:\n%s", err);
  free(err);
}

/* kernc run shows a module's warnings; KERN_LOG=1 adds the module lines. */
Test(log, kernc_run_prints_warnings) {
  fresh_cache();
  char file[700], cmd[2000], *out;
  write_text(tmp_path("warned.kern", file, sizeof file), warn_src);
  snprintf(cmd, sizeof cmd, "%s run '%s' fill --arg a=zeros:4 --arg v=1", KERNC_PATH, file);
  cr_assert_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(strstr(out, "warned.kern:2:5: warning: expression result unused"), "%s", out);
  cr_expect_null(strstr(out, "loaded on cpu"), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "KERN_LOG=1 %s run '%s' fill --arg a=zeros:4 --arg v=1", KERNC_PATH,
           file);
  cr_assert_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(strstr(out, "warning: expression result unused"), "%s", out);
  cr_expect(strstr(out, "kern: module '"), "%s", out);
  cr_expect(strstr(out, "warned.kern' loaded on cpu in "), "%s", out);
  free(out);
}

/* ---- where modules are found ------------------------------------------------------------------ */

static const char *const_src(int v) {
  static char text[128];
  snprintf(text, sizeof text, "kernel void fill(int[] a, int v) { a[tid()] = v + tid() + %d; }\n",
           v);
  return text;
}

/* A directory under the test's temp dir holding name with fill adding v. */
static const char *dir_with(const char *dir, const char *name, int v) {
  static char path[3][700];
  static int next;
  char *d = path[next++ % 3], file[1400];
  tmp_path(dir, d, 700);
  mkdir(d, 0700);
  snprintf(file, sizeof file, "%s/%s", d, name);
  write_text(file, const_src(v));
  return d;
}

/* The value fill adds, read back from one launch on the CPU. */
static int offset_of(kern_module *m) {
  int64_t n = 1;
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, &n);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "fill"), cpu(), KERN_DIM1(n), a, 0), KERN_OK, "%s",
               kern_last_error());
  int v;
  kern_array_read(a, &v, sizeof v);
  kern_array_free(a);
  return v;
}

static void enter_tmp(void) { cr_assert_eq(chdir(make_tmp()), 0); }

TestSuite(module_path, .fini = remove_tmp);

/* A relative path that is nowhere says which directory it was resolved against. */
Test(module_path, a_missing_relative_path_names_the_working_directory) {
  enter_tmp();
  char cwd[700];
  cr_assert(getcwd(cwd, sizeof cwd));
  cr_assert_null(kern_module_load("nowhere.kern"));
  cr_expect_eq(kern_last_status(), KERN_ERR_IO);
  char want[1200];
  snprintf(
      want, sizeof want,
      "cannot read 'nowhere.kern': No such file or directory (relative to the working "
      "directory, %s; KERN_PATH or kern_module_search_path_add name more directories to search)",
      cwd);
  cr_expect_str_eq(kern_last_error(), want);
  cr_assert_null(kern_module_load("./sub/nowhere.kern"));
  snprintf(want, sizeof want,
           "cannot read './sub/nowhere.kern': No such file or directory (relative to the working "
           "directory, %s)",
           cwd);
  cr_expect_str_eq(kern_last_error(), want);
  cr_assert_null(kern_module_load("/nonexistent/nowhere.kern"));
  cr_expect_str_eq(kern_last_error(),
                   "cannot read '/nonexistent/nowhere.kern': No such file or directory");
}

/* KERN_PATH's directories, in order, after the working directory; the module
 * is named by where it was found, and its imports resolve from there. */
Test(module_path, kern_path_is_searched_after_the_working_directory) {
  fresh_cache();
  const char *a = dir_with("a", "m.kern", 10), *b = dir_with("b", "m.kern", 20);
  dir_with("b", "only_b.kern", 30);
  char env[2000], file[1400];
  snprintf(env, sizeof env, "/nonexistent::%s:%s", a, b);
  setenv("KERN_PATH", env, 1);
  enter_tmp();
  kern_module *m = kern_module_load("m.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  snprintf(file, sizeof file, "%s/m.kern", a);
  cr_expect_str_eq(kern_module_name(m), file);
  cr_expect_eq(offset_of(m), 10, "the first directory that has it");
  kern_module_free(m);
  m = kern_module_load("only_b.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_eq(offset_of(m), 30);
  kern_module_free(m);
  /* An import of a module found on the path is relative to it. */
  snprintf(file, sizeof file, "%s/imp.kern", b);
  write_text(file, "import \"only_b.kern\";\n");
  m = kern_module_load("imp.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_eq(offset_of(m), 30);
  kern_module_free(m);
  /* The working directory comes first. */
  write_text("m.kern", const_src(40));
  m = kern_module_load("m.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_str_eq(kern_module_name(m), "m.kern");
  cr_expect_eq(offset_of(m), 40);
  kern_module_free(m);
  /* ./ and ../ mean the working directory only. */
  cr_assert_null(kern_module_load("./only_b.kern"));
  cr_assert_null(kern_module_load("missing.kern"));
  char want[3000];
  char cwd[700];
  cr_assert(getcwd(cwd, sizeof cwd));
  snprintf(want, sizeof want,
           "cannot read 'missing.kern': No such file or directory (looked in the working "
           "directory, %s, then in /nonexistent, %s, %s)",
           cwd, a, b);
  cr_expect_str_eq(kern_last_error(), want);
}

static char origin_file[1024];

static void remove_origin_file(void) {
  if (origin_file[0]) unlink(origin_file);
  remove_tmp();
}

/* The API's directories come after KERN_PATH's; $ORIGIN is the program's directory. */
Test(module_path, search_path_add_and_origin, .fini = remove_origin_file) {
  fresh_cache();
  const char *a = dir_with("a", "m.kern", 10), *b = dir_with("b", "m.kern", 20);
  dir_with("b", "b_only.kern", 21);
  cr_expect_eq(kern_module_search_path_add(NULL), KERN_ERR_INVALID_ARGUMENT);
  cr_expect_eq(kern_module_search_path_add(""), KERN_ERR_INVALID_ARGUMENT);
  setenv("KERN_PATH", a, 1);
  cr_assert_eq(kern_module_search_path_add(b), KERN_OK);
  enter_tmp();
  kern_module *m = kern_module_load("m.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_eq(offset_of(m), 10, "KERN_PATH before the program's directories");
  kern_module_free(m);
  m = kern_module_load("b_only.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_eq(offset_of(m), 21);
  kern_module_free(m);
  /* $ORIGIN: this test program's directory (a file put there for the test). */
  char exe[900];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cr_assert_gt(n, 0);
  exe[n] = 0;
  *strrchr(exe, '/') = 0;
  snprintf(origin_file, sizeof origin_file, "%s/origin-%d.kern", exe, (int)getpid());
  write_text(origin_file, const_src(50));
  cr_assert_eq(kern_module_search_path_add("$ORIGIN"), KERN_OK);
  char name[64];
  snprintf(name, sizeof name, "origin-%d.kern", (int)getpid());
  m = kern_module_load(name);
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_str_eq(kern_module_name(m), origin_file);
  cr_expect_eq(offset_of(m), 50);
  kern_module_free(m);
}

/* kernc run finds its FILE the same way. */
Test(module_path, kernc_run_uses_the_search_path) {
  fresh_cache();
  const char *a = dir_with("a", "on_path.kern", 3);
  char cmd[2000], *out;
  snprintf(cmd, sizeof cmd,
           "cd / && KERN_PATH='%s' %s run on_path.kern fill --arg a=zeros:2 --arg v=1", a,
           KERNC_PATH);
  cr_assert_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(strstr(out, "[4, 5]"), "%s", out);
  free(out);
}

/* kern_module_from_sources: imports come from the table, never the disk; two
 * spellings of a file with one text are one file. */
Test(module_path, sources_in_memory_resolve_imports_among_themselves) {
  fresh_cache();
  enter_tmp();
  static const char lib[] = "int twice(int x) { return 2 * x; }\n";
  const kern_source files[] = {
      {"k/main.kern", "import \"lib.kern\";\nimport \"../k/lib.kern\";\n"
                      "kernel void fill(int[] a, int v) { a[tid()] = twice(v) + tid(); }\n"},
      {"k/lib.kern", lib},
      {"k/../k/lib.kern", lib}};
  kern_module *m = kern_module_from_sources(3, files);
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_str_eq(kern_module_name(m), "k/main.kern");
  cr_expect_eq(offset_of(m), 0);
  kern_module_free(m);
  /* Not in the table: an error, even when the file exists on disk. */
  mkdir("k", 0700);
  write_text("k/other.kern", lib);
  const kern_source missing[] = {{"k/main.kern", "import \"other.kern\";\n"}};
  cr_assert_null(kern_module_from_sources(1, missing));
  cr_expect_eq(kern_last_status(), KERN_ERR_COMPILE);
  cr_expect(strstr(kern_last_error(), "cannot read imported file 'k/other.kern'"), "%s",
            kern_last_error());
  cr_expect_null(kern_module_from_sources(0, files));
  cr_expect_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  const kern_source no_text[] = {{"a.kern", NULL}};
  cr_expect_null(kern_module_from_sources(1, no_text));
  cr_expect_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
}
