/* test_gpu_primitives.c: kern_array_sum, _min, _max and _scan on cuda:0 give
 * the CPU's bits, whatever the tile block size.
 *
 * For float32 (as itself and as float64), int32 and float64 inputs of sizes
 * that are and are not powers of two or multiples of the chunk (up to 2^24 + 5
 * elements, three passes), each primitive runs on the CPU and on cuda:0 with
 * the primitives' kernels set to 32, 256 and 1024 threads per instance
 * (kern_kernel_set_tile_block); every GPU result must equal the CPU's bit for
 * bit, where a NaN equals any NaN (the CPU's own results are checked against plain-C references of the
 * order in test_primitives). Also: a sum and a scan inside a CUDA graph
 * capture. Skips, saying so, without a GPU.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "kern.h"

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU primitives suite skipped", kern_last_error());
  return gpu;
}

static float input(int64_t i) {
  static const float scale[4] = {0.001f, 0.37f, 13.1f, 1009.0f};
  return (float)((i * 7919) % 1013 - 506) * scale[i % 4] + 0.1f;
}

static const int64_t sizes[] = {1, 7, 1000, 2048, 4097, (1 << 20) + 3, (1 << 24) + 5};
static const int blocks[] = {32, 256, 1024};

/* Every kernel of the primitives for (in, acc) runs with `threads` per instance. */
static void set_block(kern_dtype in, kern_dtype acc, int threads) {
  for (int p = 0; p < 3; p++) {
    kern_kernel *k = rt_prims_kernel(p, in, acc, "reduce");
    cr_assert(k, "%s", kern_last_error());
    cr_assert_eq(kern_kernel_set_tile_block(k, threads), KERN_OK);
    if (acc != in)
      cr_assert_eq(kern_kernel_set_tile_block(rt_prims_kernel(p, acc, acc, "reduce"), threads),
                   KERN_OK);
  }
  const char *scans[] = {"sums", "down"};
  for (int s = 0; s < 2; s++) {
    cr_assert_eq(kern_kernel_set_tile_block(rt_prims_kernel(3, in, acc, scans[s]), threads),
                 KERN_OK);
    cr_assert_eq(kern_kernel_set_tile_block(rt_prims_kernel(3, acc, acc, scans[s]), threads),
                 KERN_OK);
  }
}

/* The four primitives of x (n elements of dtype in, results as acc) on d:
 * sum, min, max (acc each), then the inclusive and exclusive scans. */
static void *run_all(kern_device *d, kern_dtype in, kern_dtype acc, const void *x, int64_t n) {
  size_t ai = kern_dtype_size(in), aa = kern_dtype_size(acc);
  unsigned char *res = calloc(1, 3 * aa + 2 * (size_t)n * aa);
  int64_t one = 1;
  kern_array *a = kern_array_new(d, in, 1, &n), *o = kern_array_new(d, acc, 1, &one);
  kern_array *s = kern_array_new(d, acc, 1, &n);
  cr_assert(a && o && s, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(a, x, (size_t)n * ai), KERN_OK);
  kern_status (*red[3])(const kern_array *, kern_array *) = {kern_array_sum, kern_array_min,
                                                             kern_array_max};
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(red[r](a, o), KERN_OK, "%s", kern_last_error());
    cr_assert_eq(kern_array_read(o, res + (size_t)r * aa, aa), KERN_OK);
  }
  for (int inc = 0; inc < 2; inc++) {
    cr_assert_eq(kern_array_scan(a, s, inc), KERN_OK, "%s", kern_last_error());
    cr_assert_eq(kern_array_read(s, res + 3 * aa + (size_t)inc * (size_t)n * aa, (size_t)n * aa),
                 KERN_OK);
  }
  kern_array_free(a), kern_array_free(o), kern_array_free(s);
  return res;
}

/* Whether elements a and b of dtype t are the same: the same bits, or both
 * NaN (a NaN made by arithmetic has no defined bits across devices). */
static bool same(kern_dtype t, const unsigned char *a, const unsigned char *b) {
  if (t == KERN_FLOAT32) {
    float x, y;
    memcpy(&x, a, 4), memcpy(&y, b, 4);
    if (x != x && y != y) return true;
  } else if (t == KERN_FLOAT64) {
    double x, y;
    memcpy(&x, a, 8), memcpy(&y, b, 8);
    if (x != x && y != y) return true;
  }
  return memcmp(a, b, kern_dtype_size(t)) == 0;
}

static void compare(kern_dtype in, kern_dtype acc, const void *x, int64_t n, kern_device *gpu) {
  kern_device *cpu = kern_device_get("cpu");
  unsigned char *want = run_all(cpu, in, acc, x, n);
  size_t size = kern_dtype_size(acc), count = 3 + 2 * (size_t)n;
  for (int b = 0; b < 3; b++) {
    set_block(in, acc, blocks[b]);
    unsigned char *got = run_all(gpu, in, acc, x, n);
    size_t at = 0;
    while (at < count && same(acc, got + at * size, want + at * size)) at++;
    cr_expect(at == count,
              "%s -> %s, n=%lld, %d threads: result element %zu (sum, min, max, then the "
              "scans) differs from the CPU's",
              kern_dtype_name(in), kern_dtype_name(acc), (long long)n, blocks[b], at);
    free(got);
  }
  set_block(in, acc, 0);
  free(want);
}

Test(gpu_primitives, the_same_bits_as_the_cpu_for_every_block_size, .timeout = 1200) {
  kern_device *gpu = gpu_or_skip();
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    float *f = malloc(4 * (size_t)n);
    double *g = malloc(8 * (size_t)n);
    int32_t *k = malloc(4 * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      f[i] = input(i), g[i] = (double)f[i] * 1.1;
      k[i] = (int32_t)((i * 2654435761u) % 2000001u) - 1000000;
    }
    if (n > 5) f[n / 2] = -0.0f, f[n / 3] = __builtin_nanf("");
    compare(KERN_FLOAT32, KERN_FLOAT32, f, n, gpu);
    compare(KERN_FLOAT32, KERN_FLOAT64, f, n, gpu);
    compare(KERN_FLOAT64, KERN_FLOAT64, g, n, gpu);
    compare(KERN_INT32, KERN_INT32, k, n, gpu);
    compare(KERN_INT32, KERN_INT64, k, n, gpu);
    free(f), free(g), free(k);
  }
}

Test(gpu_primitives, run_inside_a_cuda_capture, .timeout = 300) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  int64_t n = (1 << 20) + 3, one = 1;
  float *x = malloc(4 * (size_t)n), *want = malloc(4 * (size_t)n), *got = malloc(4 * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = input(i);
  kern_array *a = kern_array_new(gpu, KERN_FLOAT32, 1, &n),
             *o = kern_array_new(gpu, KERN_FLOAT32, 1, &one);
  kern_array *s = kern_array_new(gpu, KERN_FLOAT32, 1, &n);
  cr_assert(a && o && s, "%s", kern_last_error());
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_array_sum(a, o), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_array_scan(a, s, true), KERN_OK, "%s", kern_last_error());
  kern_graph *g = NULL;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(a, x, 4 * (size_t)n), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  float sum_gpu, sum_cpu;
  cr_assert_eq(kern_array_read(o, &sum_gpu, 4), KERN_OK);
  cr_assert_eq(kern_array_read(s, got, 4 * (size_t)n), KERN_OK);
  kern_array *ca = kern_array_new(cpu, KERN_FLOAT32, 1, &n),
             *co = kern_array_new(cpu, KERN_FLOAT32, 1, &one);
  cr_assert_eq(kern_array_write(ca, x, 4 * (size_t)n), KERN_OK);
  cr_assert_eq(kern_array_sum(ca, co), KERN_OK);
  cr_assert_eq(kern_array_read(co, &sum_cpu, 4), KERN_OK);
  cr_assert_eq(kern_array_scan(ca, ca, true), KERN_OK);
  cr_assert_eq(kern_array_read(ca, want, 4 * (size_t)n), KERN_OK);
  cr_expect(memcmp(&sum_gpu, &sum_cpu, 4) == 0, "captured sum %g, the CPU's %g", (double)sum_gpu,
            (double)sum_cpu);
  cr_expect(memcmp(got, want, 4 * (size_t)n) == 0, "the captured scan differs from the CPU's");
  kern_graph_free(g);
  kern_array_free(a), kern_array_free(o), kern_array_free(s), kern_array_free(ca),
      kern_array_free(co);
  free(x), free(want), free(got);
}
