/* test_gpu_tiles.c: tiled kernels on cuda:0 give the CPU's bits, whatever
 * the block size.
 *
 * Each kernel below reduces and scans float inputs whose results depend on
 * the order (sizes 1, 7, 256, 300, 1000, 2048, and a 2-D tile along both
 * axes; a scan in place and one into a new variable, both written straight
 * into it) and sorts keys with duplicates and -0.0; it runs on the CPU once
 * and on cuda:0 with 32, 96, 128, 256 and 1024 threads per instance (every
 * form of the GPU's scans: in registers with 1 to 16 elements a thread, and
 * level by level; kern_launch_tile_block)
 * and with the kernel's default, and every output must be bit-identical. Also:
 * a kernel past the default 48 KiB of shared memory runs (opting in), and one
 * past the device's limit is refused at its first GPU launch, naming the
 * kernel, its tiles and the limit. Skips, saying why, without a GPU.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU tile suite skipped", kern_last_error());
  return gpu;
}

enum { NOUT = 8 };

static const char *const src_fmt =
    "const int N = %d;\n"
    "float lin(float a, float b) { return a * 0.5f + b; }\n"
    "kernel void r(float[] x, float[] sc, int[] ix, float[] inc, float[] exc, float[] finc,\n"
    "              float[] fexc, float[] srt) {\n"
    "  int i = tid();\n"
    "  tile<float, N> t = tile_load<N>(x, i * N);\n"
    "  sc[4 * i] = tile_sum(t);\n"
    "  sc[4 * i + 1] = tile_min(t);\n"
    "  sc[4 * i + 2] = tile_max(t);\n"
    "  sc[4 * i + 3] = tile_reduce(lin, t);\n"
    "  ix[2 * i] = tile_argmin(t);\n"
    "  ix[2 * i + 1] = tile_argmax(t);\n"
    "  tile_store(inc, i * N, tile_scan_inclusive(t));\n"
    "  tile_store(exc, i * N, tile_scan_exclusive(t));\n"
    "  tile<float, N> q = t;\n"
    "  q = tile_scan_inclusive(lin, q);\n"
    "  tile_store(finc, i * N, q);\n"
    "  tile<float, N> e = tile_scan_exclusive(lin, t, 0.25f);\n"
    "  tile_store(fexc, i * N, e);\n"
    "  tile<float, N> k = tile_where(tile_arange<int, N>() %% 5 == 0, -0.0f, t * 0.0f + 2.0f);\n"
    "  tile<int, N> v = tile_arange<int, N>();\n"
    "  tile_sort(k, v);\n"
    "  tile_store(srt, i * N, k + float(v));\n"
    "}\n"
    "kernel void ax(float[,] x, float[] r0, float[] r1) {\n"
    "  tile<float, 5, N> t = tile_load<5, N>(x, 0, 0);\n"
    "  tile_store(r0, 0, tile_sum(t, 0));\n"
    "  tile_store(r1, 0, tile_reduce(lin, t, 1));\n"
    "}\n";

static float input(int i) {
  static const float scale[4] = {0.001f, 0.37f, 13.1f, 1009.0f};
  return (float)((i * 7919) % 1013 - 506) * scale[i % 4] + 0.1f;
}

typedef struct Run {
  void *out[NOUT];
  size_t bytes[NOUT];
} Run;

/* Runs kernel r (3 instances) and ax on device d; threads 0: the kernel's default. */
static void run(kern_module *m, kern_device *d, int n, int threads, Run *res) {
  const int inst = 3;
  int64_t len = (int64_t)n * inst;
  float *x = malloc(sizeof(float) * (size_t)len * 5);
  for (int64_t i = 0; i < len * 5; i++) x[i] = input((int)i);
  int64_t sizes[NOUT] = {4 * inst, 2 * inst, len, len, len, len, len, 0};
  kern_array *in = kern_array_new(d, KERN_FLOAT32, 1, &len), *a[NOUT];
  cr_assert(in, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(in, x, sizeof(float) * (size_t)len), KERN_OK);
  kern_arg args[NOUT + 1];
  args[0] = kern_arg_array(in);
  for (int i = 0; i < 7; i++) {
    a[i] = kern_array_new(d, i == 1 ? KERN_INT32 : KERN_FLOAT32, 1, &sizes[i]);
    cr_assert(a[i], "%s", kern_last_error());
    args[i + 1] = kern_arg_array(a[i]);
  }
  kern_dims dims = {.ndim = 1, .shape = {inst}};
  kern_kernel *k = kern_module_kernel(m, "r");
  kern_status st = threads ? kern_launch_tile_block(k, d, dims, threads, 8, args)
                           : kern_launch(k, d, dims, 8, args);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  int64_t shape2[2] = {5, n}, one = 1, nn = n, five = 5;
  kern_array *g = kern_array_new(d, KERN_FLOAT32, 2, shape2);
  cr_assert_eq(kern_array_write(g, x, sizeof(float) * 5 * (size_t)n), KERN_OK);
  kern_array *r0 = kern_array_new(d, KERN_FLOAT32, 1, &nn),
             *r1 = kern_array_new(d, KERN_FLOAT32, 1, &five);
  kern_arg a2[3] = {kern_arg_array(g), kern_arg_array(r0), kern_arg_array(r1)};
  kern_dims single = {.ndim = 1, .shape = {one}};
  kern_kernel *kx = kern_module_kernel(m, "ax");
  st = threads ? kern_launch_tile_block(kx, d, single, threads, 3, a2)
               : kern_launch(kx, d, single, 3, a2);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  for (int i = 0; i < 7; i++) {
    res->bytes[i] = (size_t)sizes[i] * 4;
    res->out[i] = malloc(res->bytes[i]);
    cr_assert_eq(kern_array_read(a[i], res->out[i], res->bytes[i]), KERN_OK);
    kern_array_free(a[i]);
  }
  res->bytes[7] = (size_t)(n + 5) * 4;
  res->out[7] = malloc(res->bytes[7]);
  cr_assert_eq(kern_array_read(r0, res->out[7], (size_t)n * 4), KERN_OK);
  cr_assert_eq(kern_array_read(r1, (char *)res->out[7] + (size_t)n * 4, 20), KERN_OK);
  kern_array_free(in);
  kern_array_free(g);
  kern_array_free(r0);
  kern_array_free(r1);
  free(x);
}

static void free_run(Run *r) {
  for (int i = 0; i < NOUT; i++) free(r->out[i]);
}

Test(gpu_tiles, same_bits_as_the_cpu_for_every_block_size, .timeout = 900) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  static const int sizes[] = {1, 7, 256, 300, 1000, 2048};
  static const int threads[] = {0, 32, 96, 128, 256, 1024};
  static const char *const names[NOUT] = {
      "sum/min/max/reduce",  "argmin/argmax",       "scan_inclusive", "scan_exclusive",
      "scan_inclusive(lin)", "scan_exclusive(lin)", "sort",           "axis reductions"};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    char src[4096];
    snprintf(src, sizeof src, src_fmt, sizes[s]);
    kern_module *m = kern_module_from_source("gpu_tiles", src);
    cr_assert(m, "%s", kern_last_error());
    Run want = {0};
    run(m, cpu, sizes[s], 0, &want);
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
      Run got = {0};
      run(m, gpu, sizes[s], threads[t], &got);
      for (int i = 0; i < NOUT; i++)
        cr_expect(memcmp(got.out[i], want.out[i], want.bytes[i]) == 0,
                  "n=%d, %d threads per instance: %s differs from the cpu", sizes[s], threads[t],
                  names[i]);
      free_run(&got);
    }
    free_run(&want);
    kern_module_free(m);
  }
}

/* A kernel past the default 48 KiB of shared memory (a 64 KiB tile and its
 * reduction's 64 KiB of scratch) runs, with the CPU's bits; one past the
 * device's opt-in limit (four such tiles) is refused at its first launch, naming the kernel,
 * its tiles and the limit. */
static const char big_src[] = "kernel void big(float[] x, float[] s) {\n"
                              "  tile<float, 16384> t = tile_load<16384>(x, 0);\n"
                              "  s[0] = tile_sum(t);\n"
                              "}\n"
                              "kernel void huge(float[] x, float[] s) {\n"
                              "  tile<float, 16384> t = tile_load<16384>(x, 0);\n"
                              "  tile<float, 16384> u = tile_load<16384>(x, 16384);\n"
                              "  tile<float, 16384> v = tile_load<16384>(x, 32768);\n"
                              "  tile<float, 16384> w = tile_load<16384>(x, 49152);\n"
                              "  s[0] = tile_sum(t + u + v + w);\n"
                              "}\n";

static float big_sum(kern_module *m, kern_device *d, const float *in, int64_t n) {
  int64_t one = 1;
  kern_array *x = kern_array_new(d, KERN_FLOAT32, 1, &n),
             *s = kern_array_new(d, KERN_FLOAT32, 1, &one);
  cr_assert(x && s, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(x, in, 4 * (size_t)n), KERN_OK);
  kern_arg a[] = {kern_arg_array(x), kern_arg_array(s)};
  kern_dims dims = {.ndim = 1, .shape = {1}};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "big"), d, dims, 2, a), KERN_OK, "%s",
               kern_last_error());
  float got = 0;
  cr_assert_eq(kern_array_read(s, &got, 4), KERN_OK, "%s", kern_last_error());
  kern_array_free(x), kern_array_free(s);
  return got;
}

Test(gpu_tiles, past_48_kib_runs_and_past_the_device_limit_is_refused, .timeout = 120) {
  kern_device *gpu = gpu_or_skip();
  kern_module *m = kern_module_from_source("gpu_tiles_big", big_src);
  cr_assert(m, "%s", kern_last_error());
  int64_t n = 65536;
  float *in = malloc(4 * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    in[i] = (float)((i * 7919) % 1013 - 506) * (i % 3 ? 0.01f : 97.5f);
  float want = big_sum(m, kern_device_get("cpu"), in, 16384), got = big_sum(m, gpu, in, 16384);
  cr_expect(memcmp(&want, &got, 4) == 0, "a 64 KiB tile's sum: %a on cuda:0, %a on the cpu",
            (double)got, (double)want);
  kern_array *x = kern_array_new(gpu, KERN_FLOAT32, 1, &n);
  kern_arg a[] = {kern_arg_array(x), kern_arg_array(x)};
  kern_dims one = {.ndim = 1, .shape = {1}};
  cr_expect_eq(kern_launch(kern_module_kernel(m, "huge"), gpu, one, 2, a), KERN_ERR_COMPILE);
  const char *msg = kern_last_error();
  cr_expect(strstr(msg, "'huge'") && strstr(msg, "w: tile<float32, 16384>") &&
                strstr(msg, "bytes a block has on cuda:0"),
            "%s", msg);
  kern_array_free(x);
  kern_module_free(m);
  free(in);
}
