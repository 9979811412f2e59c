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
 * kern_array_sort likewise: every key dtype, keys that differ in every digit
 * or in few values, alone and with values of 1, 4, 8 and 12 bytes (the last
 * permuted at the end through the keys' places), sizes up to 2^24 + 5, with
 * the sort's tiled kernels at 32, 256 and 1024 threads per instance: keys and
 * values must be the CPU's bytes (which test_primitives checks against a
 * stable reference); and a sort inside a CUDA capture, replayed twice.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "kern.h"
#include "prims.h"

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

static const int64_t sizes[] = {1, 7, 1000, 2048, 4097, 16385, (1 << 20) + 3, (1 << 24) + 5};
/* 128 is the scan's own default (runtime/primitives.c), 256 the others'. */
static const int blocks[] = {32, 128, 256, 1024};
#define NBLOCKS (int)(sizeof blocks / sizeof blocks[0])

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
  for (int b = 0; b < NBLOCKS; b++) {
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

/* ---- sort ------------------------------------------------------------------------------------ */

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

/* n random elements of `size` bytes; dist 1: keys of 13 distinct values. */
static void *random_bytes(size_t size, int64_t n, int dist, uint64_t seed) {
  unsigned char *p = malloc(size * (size_t)(n ? n : 1));
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rng(&s);
    if (dist == 1) r = (r % 13) * 0x0123456789abcdefull;
    for (size_t b = 0; b < size; b++) p[(size_t)i * size + b] = (unsigned char)(r >> (8 * (b % 8)));
  }
  return p;
}

/* keys (and values, vt != 0) sorted on d; the bytes of both (malloc'd). */
static unsigned char *sorted_on(kern_device *d, kern_dtype kt, const void *keys, kern_dtype vt,
                                const void *values, int64_t n) {
  size_t ks = kern_dtype_size(kt), vs = vt ? kern_dtype_size(vt) : 0;
  unsigned char *out = malloc((ks + vs) * (size_t)n);
  kern_array *k = kern_array_new(d, kt, 1, &n), *v = vt ? kern_array_new(d, vt, 1, &n) : NULL;
  cr_assert(k && (!vt || v), "%s", kern_last_error());
  cr_assert_eq(kern_array_write(k, keys, ks * (size_t)n), KERN_OK);
  if (v) cr_assert_eq(kern_array_write(v, values, vs * (size_t)n), KERN_OK);
  cr_assert_eq(kern_array_sort(k, v), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(k, out, ks * (size_t)n), KERN_OK, "%s", kern_last_error());
  if (v) cr_assert_eq(kern_array_read(v, out + ks * (size_t)n, vs * (size_t)n), KERN_OK);
  kern_array_free(k), kern_array_free(v);
  return out;
}

/* The sort's tiled kernels for keys of kb bytes and value words of wb run
 * with `threads` per instance (0: the default). */
static void set_sort_block(int kb, int wb, int threads) {
  const char *tiled[] = {"bits", "rank"};
  for (int i = 0; i < 2; i++) {
    kern_kernel *k = rt_sort_kernel(kb, wb, tiled[i]);
    cr_assert(k, "%s", kern_last_error());
    cr_assert(kern_kernel_is_tiled(k), "%s is not tiled", tiled[i]);
    cr_assert_eq(kern_kernel_set_tile_block(k, threads), KERN_OK);
  }
}

static void compare_sort(kern_device *gpu, kern_dtype kt, kern_dtype vt, int64_t n, int dist) {
  size_t ks = kern_dtype_size(kt), vs = vt ? kern_dtype_size(vt) : 0, bytes = (ks + vs) * (size_t)n;
  void *keys = random_bytes(ks, n, dist, (uint64_t)n + (uint64_t)kt);
  void *values = vt ? random_bytes(vs, n, 0, (uint64_t)n * 3 + (uint64_t)vt) : NULL;
  unsigned char *want = sorted_on(kern_device_get("cpu"), kt, keys, vt, values, n);
  /* the passes' module: keys' word, and the values' word (their places' for 12 bytes) */
  int kb = (int)ks, wb = !vt || vs == 12 ? 4 : (int)vs;
  for (int b = 0; b < NBLOCKS; b++) {
    set_sort_block(kb, wb, blocks[b]);
    unsigned char *got = sorted_on(gpu, kt, keys, vt, values, n);
    size_t at = 0;
    while (at < bytes && got[at] == want[at]) at++;
    cr_expect(at == bytes,
              "%s keys, %s values, n=%lld, dist %d, %d threads: byte %zu (of %zu) differs from "
              "the CPU's",
              kern_dtype_name(kt), vt ? kern_dtype_name(vt) : "no", (long long)n, dist, blocks[b],
              at, bytes);
    free(got);
  }
  set_sort_block(kb, wb, 0);
  free(keys), free(values), free(want);
}

Test(gpu_primitives, sort_gives_the_cpus_bytes_for_every_block_size, .timeout = 1800) {
  kern_device *gpu = gpu_or_skip();
  static const kern_dtype kts[] = {KERN_INT32, KERN_UINT32, KERN_INT64, KERN_UINT64, KERN_FLOAT32};
  static const int64_t ns[] = {2, 7, 1000, 8192, 8193, (1 << 20) + 3, (1 << 24) + 5};
  for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
    for (size_t t = 0; t < sizeof kts / sizeof kts[0]; t++)
      for (int dist = 0; dist < 2; dist++) {
        compare_sort(gpu, kts[t], 0, ns[s], dist);
        compare_sort(gpu, kts[t], KERN_UINT32, ns[s], dist);
      }
  static const kern_dtype vts[] = {KERN_UINT8, KERN_FLOAT64, KERN_VEC3};
  for (size_t v = 0; v < sizeof vts / sizeof vts[0]; v++) {
    compare_sort(gpu, KERN_UINT32, vts[v], (1 << 20) + 3, 1);
    compare_sort(gpu, KERN_INT64, vts[v], 100003, 0);
  }
}

Test(gpu_primitives, sort_inside_a_cuda_capture, .timeout = 600) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  int64_t n = (1 << 20) + 3;
  kern_array *k = kern_array_new(gpu, KERN_FLOAT32, 1, &n),
             *v = kern_array_new(gpu, KERN_INT32, 1, &n);
  cr_assert(k && v, "%s", kern_last_error());
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_array_sort(k, v), KERN_OK, "%s", kern_last_error());
  kern_graph *g = NULL;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  for (int round = 0; round < 2; round++) {
    void *keys = random_bytes(4, n, round, (uint64_t)round + 40), *vals = random_bytes(4, n, 0, 41);
    unsigned char *want = sorted_on(cpu, KERN_FLOAT32, keys, KERN_INT32, vals, n);
    unsigned char *got = malloc(8 * (size_t)n);
    cr_assert_eq(kern_array_write(k, keys, 4 * (size_t)n), KERN_OK);
    cr_assert_eq(kern_array_write(v, vals, 4 * (size_t)n), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
    cr_assert_eq(kern_array_read(k, got, 4 * (size_t)n), KERN_OK, "%s", kern_last_error());
    cr_assert_eq(kern_array_read(v, got + 4 * (size_t)n, 4 * (size_t)n), KERN_OK);
    cr_expect(memcmp(got, want, 8 * (size_t)n) == 0,
              "replay %d: the captured sort differs from the CPU's", round);
    free(keys), free(vals), free(want), free(got);
  }
  kern_graph_free(g);
  kern_array_free(k), kern_array_free(v);
}
