/* test_cuda_launch.c: which CUDA entry a launch runs, and on what grid, read
 * off a stand-in driver (tests/support/fake_cuda.c, through KERN_CUDA_LIB), so
 * it needs no GPU (NVRTC compiles the module; skipped without it).
 *
 * A launch runs a kernel's kk_K_cuda_dense_one entry (no loops; a tid(d)
 * kernel's tids straight off the grid) when the kernel has one for the
 * launch and the runtime's grid has a thread for every index; else the entry
 * with the grid-stride loops (codegen/emit_cuda.c). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kern.h"

static const char source[] = "kernel void rank2(int[,] out, int maxit) {\n"
                             "  int it = 0;\n"
                             "  while (it < maxit) { it++; }\n"
                             "  out[tid(0), tid(1)] = it;\n"
                             "}\n"
                             "kernel void rank3(int[,,] out) { out[tid(0), tid(1), tid(2)] = 1; }\n"
                             "kernel void rank4(int[] out) { out[tid()] = tid(3); }\n"
                             "kernel void loop1(float[] x) {\n"
                             "  float s = 0.0;\n"
                             "  for (int j = 0; j < 4; j++) { s += x[j]; }\n"
                             "  x[tid()] = s;\n"
                             "}\n"
                             "kernel void four1(float[] x) { x[tid()] = x[tid()] * 2.0; }\n";

static bool (*last_launch)(char *, size_t, unsigned[6]);
static kern_module *mod;
static kern_device *gpu;
static char cache[256];

static void setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(cache, sizeof cache, "%s/kern-cl-XXXXXX", t && *t ? t : "/tmp");
  cr_assert(mkdtemp(cache));
  setenv("KERN_CACHE_DIR", cache, 1);
  setenv("FAKE_CUDA_DEVICES", "1", 1);
  setenv("KERN_CUDA_LIB", FAKE_CUDA_LIB, 1);
  cr_assert_eq(kern_init(), KERN_OK, "%s", kern_last_error());
  gpu = kern_device_get("cuda:0");
  cr_assert_not_null(gpu, "%s", kern_last_error());
  void *lib = dlopen(FAKE_CUDA_LIB, RTLD_NOW);
  cr_assert_not_null(lib, "%s", dlerror());
  last_launch = (bool (*)(char *, size_t, unsigned[6]))dlsym(lib, "fake_cuda_last_launch");
  cr_assert_not_null(last_launch);
  mod = kern_module_from_source("launch.kern", source);
  cr_assert_not_null(mod, "%s", kern_last_error());
}

static void teardown(void) {
  kern_module_free(mod);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
  cr_expect_eq(system(cmd), 0);
}

/* Launches kernel over dims (its array: the launch's shape folded to the
 * kernel's rank) and checks the entry it ran; one: the _one entry is
 * expected, with a thread for every index. */
static void expect_entry(const char *kernel, int nd, const int64_t *dims, bool one) {
  int64_t n = 1, shape[4];
  for (int d = 0; d < nd; d++) n *= dims[d];
  int and = !strcmp(kernel, "rank2") ? 2 : !strcmp(kernel, "rank3") ? 3 : 1;
  if (and == nd)
    memcpy(shape, dims, sizeof(int64_t) * (size_t)nd);
  else if (and == 1)
    shape[0] = n;
  else
    shape[0] = n / dims[nd - 1], shape[1] = dims[nd - 1];
  kern_dtype t = kernel[0] == 'r' ? KERN_INT32 : KERN_FLOAT32;
  kern_array *a = kern_array_new(gpu, t, and, shape);
  cr_assert_not_null(a, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(mod, kernel);
  cr_assert_not_null(k, "%s", kern_last_error());
  kern_dims launch = {.ndim = nd};
  for (int d = 0; d < 4; d++) launch.shape[d] = d < nd ? dims[d] : 1;
  kern_status s =
      !strcmp(kernel, "rank2") ? KERN_LAUNCH(k, gpu, launch, a, 3) : KERN_LAUNCH(k, gpu, launch, a);
  if (s == KERN_ERR_UNSUPPORTED) cr_skip_test("%s", kern_last_error()); /* no NVRTC */
  cr_assert_eq(s, KERN_OK, "%s", kern_last_error());
  char name[1100], want[128];
  unsigned g[6];
  cr_assert(last_launch(name, sizeof name, g));
  snprintf(want, sizeof want, "kk_%s_cuda_dense%s", kernel, one ? "_one" : "");
  cr_expect_str_eq(name, want, "%s over %d dims ran %s", kernel, nd, name);
  if (one) {
    bool grid = kernel[0] == 'r';
    int64_t x = grid ? dims[nd - 1] : n, y = grid && nd >= 2 ? dims[nd - 2] : 1;
    int elems = !strcmp(kernel, "rank3") ? 2 : 1;
    cr_expect_geq((int64_t)g[0] * g[3] * elems, x, "%s: a thread per index along x", kernel);
    cr_expect_geq((int64_t)g[1] * g[4], y, "%s: along y", kernel);
    cr_expect_geq((int64_t)g[2] * g[5], n / (x * y), "%s: along z", kernel);
  }
  kern_array_free(a);
}

TestSuite(cuda_launch, .init = setup, .fini = teardown);

Test(cuda_launch, a_launch_of_the_kernels_rank_runs_its_one_entry) {
  expect_entry("rank2", 2, (int64_t[]){300, 700}, true);
  expect_entry("rank3", 3, (int64_t[]){5, 6, 70}, true);
  expect_entry("loop1", 1, (int64_t[]){10000}, true);
}

Test(cuda_launch, other_launches_run_the_loops) {
  /* a rank-2 kernel launched over 3 dimensions; z past the grid's 65535 */
  expect_entry("rank2", 3, (int64_t[]){2, 30, 70}, false);
  expect_entry("rank3", 3, (int64_t[]){70000, 1, 2}, false);
  /* no _one entry: tid(3) (rank 4), four indices per thread (no loop) */
  expect_entry("rank4", 4, (int64_t[]){2, 3, 4, 5}, false);
  expect_entry("four1", 1, (int64_t[]){100000}, false);
  /* past the 1D grid's cap: 32 blocks of 256 per SM, the stand-in has 4 */
  expect_entry("loop1", 1, (int64_t[]){4 * 32 * 256 + 1}, false);
}
