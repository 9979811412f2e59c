/* test_gpu_faults.c: the GPU side of the must-survive checklist
 * (docs/robustness.md): a kernel that destroys the CUDA context poisons the
 * device (every later call on it repeats the first error, the CPU keeps
 * working), debug bounds errors, absurd launch sizes, sixteen host threads
 * launching and compiling at once, and a missing NVRTC.
 *
 * Requires: a CUDA device and NVRTC; without a device every test prints one
 * "skipped" line to stderr and passes. Each test pays one CUDA context, so
 * the checks are grouped. Produces: temporary cache directories under TMPDIR,
 * removed at the end of each test.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "expect.h"
#include "kern.h"

static char tmp_root[512];

/* A fresh, empty cache: first launches really compile. */
static const char *fresh_cache(void) {
  static char dir[700];
  const char *t = getenv("TMPDIR");
  snprintf(tmp_root, sizeof tmp_root, "%s/kern-gpu-faults-XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(tmp_root));
  snprintf(dir, sizeof dir, "%s/cache", tmp_root);
  setenv("KERN_CACHE_DIR", dir, 1);
  return dir;
}

static void remove_tmp(void) {
  if (!tmp_root[0]) return;
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
  th_run(cmd, NULL);
  tmp_root[0] = 0;
}

TestSuite(gpu_faults, .fini = remove_tmp, .timeout = 300);

static kern_device *gpu_or_skip(const char *test) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) {
    fprintf(stderr, "test_gpu_faults: %s skipped: no CUDA device (%s)\n", test, kern_last_error());
    cr_skip_test("no CUDA device (%s)", kern_last_error());
  }
  return gpu;
}

static kern_kernel *kernel_of(const char *src, const char *name) {
  kern_module *m = kern_module_from_source("gpu_faults.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static const char *fill_src = "kernel void fill(int[] a, int v) { a[tid()] = v + tid(); }\n";

/* dev launches fill correctly. */
static void device_works(kern_device *dev) {
  kern_kernel *k = kernel_of(fill_src, "fill");
  int64_t n = 1000;
  kern_array *a = kern_array_new(dev, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(k, dev, KERN_DIM1(n), a, 3), KERN_OK, "%s: %s", kern_device_name(dev),
               kern_last_error());
  int32_t v[1000];
  cr_assert_eq(kern_array_read(a, v, sizeof v), KERN_OK, "%s", kern_last_error());
  for (int i = 0; i < 1000; i++)
    cr_assert_eq(v[i], 3 + i, "%s: a[%d] = %d", kern_device_name(dev), i, v[i]);
  kern_array_free(a);
}

/* ---- a fault poisons the device ------------------------------------------------------------ */

/* Every later call on the poisoned device fails with exactly the first message. */
static void expect_poisoned(kern_device *gpu, kern_kernel *compiled, const char *first) {
  int64_t n = 4;
  int32_t h[4] = {1, 2, 3, 4};
  kern_array *c = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &n);
  kern_array *g = kern_array_new(gpu, KERN_INT32, 1, &n);
  cr_expect_null(g, "no allocation on a poisoned device");
  th_expect_error(kern_last_status(), KERN_ERR_CUDA, first);
  th_expect_error(kern_device_synchronize(gpu), KERN_ERR_CUDA, first);
  th_expect_error(KERN_LAUNCH(compiled, gpu, KERN_DIM1(1), (kern_array *)NULL, 1),
                  KERN_ERR_INVALID_ARGUMENT, "NULL array");
  th_expect_error(kern_stream_new(gpu) ? KERN_OK : kern_last_status(), KERN_ERR_CUDA, first);
  th_expect_error(kern_capture_begin(gpu), KERN_ERR_CUDA, first);
  kern_device_info info;
  cr_expect_eq(kern_device_info_get(gpu, &info), KERN_OK, "the device is still described");
  cr_expect_eq(kern_device_get("cuda:0"), gpu, "and still named");
  cr_expect_eq(kern_array_write(c, h, sizeof h), KERN_OK, "%s", kern_last_error());
  kern_array_free(c);
}

/* Calls on arrays that were allocated before the fault. */
static void expect_poisoned_arrays(kern_device *gpu, kern_kernel *compiled, kern_kernel *uncompiled,
                                   kern_array *g, const char *first) {
  int64_t n = 4;
  int32_t h[4] = {0}, v = 9;
  kern_array *c = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &n);
  th_expect_error(KERN_LAUNCH(compiled, gpu, KERN_DIM1(n), g, 1), KERN_ERR_CUDA, first);
  th_expect_error(KERN_LAUNCH(uncompiled, gpu, KERN_DIM1(n), g), KERN_ERR_CUDA, first);
  th_expect_error(kern_array_read(g, h, sizeof h), KERN_ERR_CUDA, first);
  th_expect_error(kern_array_write(g, h, sizeof h), KERN_ERR_CUDA, first);
  th_expect_error(kern_array_fill(g, &v), KERN_ERR_CUDA, first);
  th_expect_error(kern_array_copy(g, c), KERN_ERR_CUDA, first);
  th_expect_error(kern_array_copy(c, g), KERN_ERR_CUDA, first);
  kern_array_free(c);
}

/* A release-mode kernel (RELAXED access checks, the default) writes far
 * outside its array: an illegal address, which destroys the context. */
Test(gpu_faults, a_fault_poisons_every_later_call_but_not_the_cpu) {
  kern_device *gpu = gpu_or_skip("a_fault_poisons_every_later_call_but_not_the_cpu");
  kern_kernel *fill = kernel_of(fill_src, "fill");
  kern_kernel *later = kernel_of("kernel void later(int[] a) { a[tid()] = 5; }\n", "later");
  kern_kernel *wild =
      kernel_of("kernel void wild(int[] a) { a[tid() * 1000000000] = 1; }\n", "wild");
  int64_t n = 4;
  kern_array *g = kern_array_new(gpu, KERN_INT32, 1, &n);
  cr_assert_eq(KERN_LAUNCH(fill, gpu, KERN_DIM1(n), g, 1), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(wild, gpu, KERN_DIM1(1), g), KERN_OK, "compiled before the fault: %s",
               kern_last_error());
  kern_status s = KERN_LAUNCH(wild, gpu, KERN_DIM1(1 << 20), g);
  if (s == KERN_OK) s = kern_device_synchronize(gpu);
  cr_assert_eq(s, KERN_ERR_CUDA, "%s: %s", kern_status_name(s), kern_last_error());
  char first[1024];
  snprintf(first, sizeof first, "%s", kern_last_error());
  cr_expect(strstr(first, "cuda:0 is unusable after a fault in ") && strstr(first, "CUDA_ERROR_") &&
                strstr(first, "(the CPU device still works)"),
            "%s", first);
  expect_poisoned_arrays(gpu, fill, later, g, first);
  expect_poisoned(gpu, fill, first);
  kern_array_free(g);
  device_works(kern_device_get("cpu"));
}

/* ---- debug mode ------------------------------------------------------------------------ */

Test(gpu_faults, debug_bounds_error_names_kernel_line_index_and_shape) {
  kern_device *gpu = gpu_or_skip("debug_bounds_error_names_kernel_line_index_and_shape");
  kern_set_debug(true);
  kern_kernel *k = kernel_of("kernel void cube(float[,,] a) {\n"
                             "    a[tid(0), tid(1), tid(2) + 1] = 1.0;\n}\n",
                             "cube");
  kern_set_debug(false);
  int64_t shape[3] = {2, 3, 4};
  kern_array *a = kern_array_new(gpu, KERN_FLOAT32, 3, shape);
  kern_status s = KERN_LAUNCH(k, gpu, KERN_DIM3(2, 3, 4), a);
  if (s == KERN_OK) s = kern_device_synchronize(gpu);
  th_expect_error(s, KERN_ERR_BOUNDS,
                  "out-of-bounds access in kernel 'cube' at gpu_faults.kern:2: index [");
  cr_expect(strstr(kern_last_error(), ", 4] is outside shape [2, 3, 4] (parameter 'a', thread "),
            "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(k, gpu, KERN_DIM3(2, 3, 3), a), KERN_OK, "the device stays usable: %s",
               kern_last_error());
  float h[24];
  cr_assert_eq(kern_array_read(a, h, sizeof h), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(h[0], 0.0f);
  cr_expect_eq(h[23], 1.0f);
  kern_array_free(a);
  device_works(gpu);
}

/* ---- launch sizes and threads ------------------------------------------------------------- */

static void absurd_dims(kern_device *gpu) {
  kern_kernel *k = kernel_of(fill_src, "fill");
  int64_t n = 8;
  kern_array *a = kern_array_new(gpu, KERN_INT32, 1, &n);
  th_expect_error(KERN_LAUNCH(k, gpu, KERN_DIM1((int64_t)1 << 40), a, 1), KERN_ERR_INVALID_ARGUMENT,
                  "launch size 1099511627776 exceeds 2^31-1");
  th_expect_error(KERN_LAUNCH(k, gpu, KERN_DIM1(-1), a, 1), KERN_ERR_INVALID_ARGUMENT,
                  "dim 0 is negative (-1)");
  th_expect_error(KERN_LAUNCH(k, gpu, KERN_DIM2(2, INT64_MIN), a, 1), KERN_ERR_INVALID_ARGUMENT,
                  "dim 1 is negative");
  kern_dims none = {0, {8, 1, 1, 1}};
  th_expect_error(KERN_LAUNCH(k, gpu, none, a, 1), KERN_ERR_INVALID_ARGUMENT,
                  "1 to 4 dimensions, got 0");
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(0), a, 1), KERN_OK, "dim 0 launches nothing");
  kern_array_free(a);
}

typedef struct Job {
  kern_device *gpu;
  kern_kernel *shared; /* NULL: the thread loads its own module */
  int id;
  const char *failure;
} Job;

static const char *tri_src =
    "kernel void tri(int64[] a, int64 k) { int64 i = tid(); a[i] = k * i + 1; }\n";

static const char *run_job(Job *j) {
  kern_module *m = j->shared ? NULL : kern_module_from_source("threads.kern", tri_src);
  kern_kernel *k = j->shared ? j->shared : kern_module_kernel(m, "tri");
  if (!k) return "load failed";
  int64_t n = 100000 + 4099 * j->id;
  kern_array *a = kern_array_new(j->gpu, KERN_INT64, 1, &n);
  int64_t *h = malloc((size_t)n * sizeof *h);
  kern_status st =
      a && h ? KERN_LAUNCH(k, j->gpu, KERN_DIM1(n), a, (int64_t)j->id) : KERN_ERR_OUT_OF_MEMORY;
  if (!st) st = kern_array_read(a, h, (size_t)n * sizeof *h);
  const char *bad = st ? "launch or read failed" : NULL;
  for (int64_t i = 0; !bad && i < n; i++)
    if (h[i] != j->id * i + 1) bad = "wrong value";
  free(h);
  kern_array_free(a);
  kern_module_free(m);
  return bad;
}

static void *job_thread(void *arg) {
  Job *j = arg;
  j->failure = run_job(j);
  return NULL;
}

static void sixteen_threads(kern_device *gpu, kern_kernel *shared) {
  pthread_t t[16];
  Job jobs[16];
  for (int i = 0; i < 16; i++) {
    jobs[i] = (Job){gpu, shared, i, NULL};
    cr_assert_eq(pthread_create(&t[i], NULL, job_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 16; i++) cr_expect_null(jobs[i].failure, "thread %d: %s", i, jobs[i].failure);
}

/* Absurd sizes are refused before anything is queued; then sixteen threads
 * compile the same source for the first time (an empty cache) and launch at
 * once, then share one module's first launch. */
Test(gpu_faults, absurd_dims_and_sixteen_threads) {
  fresh_cache();
  kern_device *gpu = gpu_or_skip("absurd_dims_and_sixteen_threads");
  absurd_dims(gpu);
  sixteen_threads(gpu, NULL);
  kern_module *m = kern_module_from_source("shared.kern", tri_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  sixteen_threads(gpu, kern_module_kernel(m, "tri"));
  kern_module_free(m);
  device_works(gpu);
  device_works(kern_device_get("cpu"));
}

/* ---- no NVRTC -------------------------------------------------------------------------------- */

static int gpu_cache_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) n += strstr(e->d_name, ".gpu") != NULL;
  if (d) closedir(d);
  return n;
}

/* The driver works but NVRTC cannot be loaded: GPU launches fail with
 * KERN_ERR_UNSUPPORTED naming it, nothing is cached, GPU memory and the CPU
 * keep working. */
Test(gpu_faults, missing_nvrtc) {
  setenv("KERN_NVRTC", "/nonexistent/libnvrtc.so", 1);
  const char *cache = fresh_cache();
  kern_device *gpu = gpu_or_skip("missing_nvrtc");
  kern_kernel *k = kernel_of(fill_src, "fill");
  int64_t n = 4;
  int32_t h[4] = {4, 3, 2, 1}, back[4];
  kern_array *a = kern_array_new(gpu, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  for (int rep = 0; rep < 2; rep++)
    th_expect_error(KERN_LAUNCH(k, gpu, KERN_DIM1(n), a, 1), KERN_ERR_UNSUPPORTED,
                    "NVRTC KERN_NVRTC='/nonexistent/libnvrtc.so' could not be loaded: ");
  cr_expect_eq(gpu_cache_entries(cache), 0, "nothing cached for the GPU");
  cr_assert_eq(kern_array_write(a, h, sizeof h), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(a, back, sizeof back), KERN_OK, "%s", kern_last_error());
  cr_expect_arr_eq(back, h, sizeof h, "GPU memory still works");
  kern_array_free(a);
  device_works(kern_device_get("cpu"));
}
