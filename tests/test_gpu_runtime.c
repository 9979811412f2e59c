/* test_gpu_runtime.c: the CUDA device through the public API: info, memory and
 * copies in every direction, streams, atomics under heavy contention, debug
 * bounds errors, launch errors. Each test pays one CUDA context; without a
 * GPU every test skips with the reason. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"
#include "strided_check.h"

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU suite skipped", kern_last_error());
  return gpu;
}

static kern_kernel *kernel_of(const char *src, const char *name) {
  kern_module *m = kern_module_from_source("gpu_runtime.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

Test(gpu_runtime, device_names_and_info) {
  kern_device *gpu = gpu_or_skip();
  cr_expect(kern_device_is_cuda(gpu));
  cr_expect_eq(kern_device_get("cuda"), gpu);
  cr_expect_str_eq(kern_device_name(gpu), "cuda:0");
  cr_expect_null(kern_device_get("cuda:7"));
  cr_expect(strstr(kern_last_error(), "cuda:7"), "%s", kern_last_error());
  cr_expect_null(kern_device_get("cuda:-1"));
  kern_device_info info;
  cr_assert_eq(kern_device_info_get(gpu, &info), KERN_OK);
  cr_expect_eq(info.ordinal, 0);
  cr_expect_geq(info.sm_major, 7);
  cr_expect_gt(info.total_memory, (size_t)1 << 30);
  cr_expect(info.is_uva, "every 64-bit Linux CUDA device has unified addressing");
  cr_log_info("cuda:0 sm_%d%d: uva %d managed %d concurrent managed %d pageable %d host-managed %d "
              "host atomics %d pools %d",
              info.sm_major, info.sm_minor, info.is_uva, info.is_managed_memory_supported,
              info.is_concurrent_managed_access_supported,
              info.is_cpu_memory_access_from_gpu_supported,
              info.is_gpu_memory_access_from_cpu_supported, info.is_cpu_gpu_atomic_supported,
              info.is_mempool_supported);
  kern_device_info cpu;
  cr_assert_eq(kern_device_info_get(kern_device_get("cpu"), &cpu), KERN_OK);
  cr_expect(!cpu.is_uva && !cpu.is_mempool_supported && !cpu.is_managed_memory_supported);
}

/* cpu -> gpu (write), gpu -> gpu (copy), gpu -> cpu array (copy), cpu array -> gpu
 * (copy), gpu -> host (read), fill on the device, a strided view across devices. */
Test(gpu_runtime, copies_in_every_direction) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  int64_t n = 1 << 20;
  int32_t *h = malloc(n * sizeof *h), *back = malloc(n * sizeof *back);
  for (int64_t i = 0; i < n; i++) h[i] = (int32_t)(i * 7 - 3);
  kern_array *g1 = kern_array_empty(gpu, KERN_INT32, 1, &n),
             *g2 = kern_array_new(gpu, KERN_INT32, 1, &n);
  kern_array *c1 = kern_array_new(cpu, KERN_INT32, 1, &n),
             *c2 = kern_array_new(cpu, KERN_INT32, 1, &n);
  cr_assert(g1 && g2 && c1 && c2, "%s", kern_last_error());
  cr_expect_eq(kern_array_memory_kind(g1), KERN_MEM_CUDA_DEVICE);
  cr_assert_eq(kern_array_write(g1, h, n * sizeof *h), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_copy(g2, g1), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_copy(c1, g2), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(c1, back, n * sizeof *back), KERN_OK);
  cr_expect_arr_eq(back, h, n * sizeof *h, "gpu -> gpu -> cpu array");
  for (int64_t i = 0; i < n; i++) h[i] = (int32_t)(i ^ 0x5a5a);
  cr_assert_eq(kern_array_write(c2, h, n * sizeof *h), KERN_OK);
  cr_assert_eq(kern_array_copy(g1, c2), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(g1, back, n * sizeof *back), KERN_OK);
  cr_expect_arr_eq(back, h, n * sizeof *h, "cpu array -> gpu -> host");
  int32_t v = 42;
  cr_assert_eq(kern_array_fill(g2, &v), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(g2, back, n * sizeof *back), KERN_OK);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += back[i] != 42;
  cr_expect_eq(bad, 0, "fill on the device");
  int64_t off = 10, len = 100;
  kern_array *view = kern_array_view(g1, 1, &off, &len),
             *small = kern_array_new(cpu, KERN_INT32, 1, &len);
  cr_assert(view && small, "%s", kern_last_error());
  cr_expect_eq(kern_array_memory_kind(view), KERN_MEM_CUDA_DEVICE);
  cr_assert_eq(kern_array_copy(small, view), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(small, back, len * sizeof *back), KERN_OK);
  cr_expect_arr_eq(back, h + off, len * sizeof *h, "view of a device array copied to the cpu");
  kern_array_free(view);
  kern_array_free(small);
  kern_array_free(g1);
  kern_array_free(g2);
  kern_array_free(c1);
  kern_array_free(c2);
  free(h);
  free(back);
}

static const char atomics_src[] =
    "kernel void hammer(int[] i32, uint[] u32, int64[] i64, float[] f32, double[] f64, int[] lo, int[] hi) {\n"
    "    int t = tid();\n"
    "    atomic_add(&i32[0], 1);\n"
    "    atomic_sub(&u32[0], uint(1));\n"
    "    atomic_add(&i64[0], int64(t));\n"
    "    atomic_add(&f32[t % 4], 1.0);\n"
    "    atomic_add(&f64[0], 0.5d);\n"
    "    atomic_min(&lo[0], t);\n"
    "    atomic_max(&hi[0], t);\n"
    "}\n";

/* 16M threads on a handful of elements: every update lands, on both devices. */
Test(gpu_runtime, atomics_under_contention, .timeout = 120) {
  kern_device *gpu = gpu_or_skip();
  kern_kernel *k = kernel_of(atomics_src, "hammer");
  int64_t one = 1, four = 4, n = 1 << 24;
  kern_array *i32 = kern_array_new(gpu, KERN_INT32, 1, &one),
             *u32 = kern_array_new(gpu, KERN_UINT32, 1, &one);
  kern_array *i64 = kern_array_new(gpu, KERN_INT64, 1, &one),
             *f32 = kern_array_new(gpu, KERN_FLOAT32, 1, &four);
  kern_array *f64 = kern_array_new(gpu, KERN_FLOAT64, 1, &one),
             *lo = kern_array_new(gpu, KERN_INT32, 1, &one);
  kern_array *hi = kern_array_new(gpu, KERN_INT32, 1, &one);
  int32_t big = 1 << 30;
  cr_assert_eq(kern_array_fill(lo, &big), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(n), i32, u32, i64, f32, f64, lo, hi), KERN_OK, "%s",
               kern_last_error());
  int32_t vi, vlo, vhi;
  uint32_t vu;
  int64_t vl;
  float vf[4];
  double vd;
  cr_assert_eq(kern_array_read(i32, &vi, 4), KERN_OK);
  kern_array_read(u32, &vu, 4);
  kern_array_read(i64, &vl, 8);
  kern_array_read(f32, vf, 16);
  kern_array_read(f64, &vd, 8);
  kern_array_read(lo, &vlo, 4);
  kern_array_read(hi, &vhi, 4);
  cr_expect_eq(vi, n);
  cr_expect_eq(vu, (uint32_t)(0u - (uint32_t)n));
  cr_expect_eq(vl, n * (n - 1) / 2);
  for (int j = 0; j < 4; j++) cr_expect_eq(vf[j], (float)(n / 4), "f32[%d] = %g", j, vf[j]);
  cr_expect_eq(vd, 0.5 * (double)n);
  cr_expect_eq(vlo, 0);
  cr_expect_eq(vhi, n - 1);
}

Test(gpu_runtime, streams) {
  kern_device *gpu = gpu_or_skip();
  kern_kernel *k = kernel_of("kernel void inc(int[] a) { a[tid()] += 1; }\n", "inc");
  kern_stream *s = kern_stream_new(gpu);
  cr_assert_not_null(s, "%s", kern_last_error());
  cr_assert_eq(kern_device_set_stream(gpu, s), KERN_OK);
  int64_t n = 1 << 16;
  kern_array *a = kern_array_new(gpu, KERN_INT32, 1, &n);
  for (int r = 0; r < 10; r++)
    cr_assert_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(n), a), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_device_synchronize(gpu), KERN_OK);
  int32_t *h = malloc(n * sizeof *h);
  cr_assert_eq(kern_array_read(a, h, n * sizeof *h), KERN_OK);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += h[i] != 10;
  cr_expect_eq(bad, 0, "10 ordered launches on one stream");
  kern_stream *w = kern_stream_wrap_cuda(gpu, kern_stream_cuda_handle(s));
  cr_assert_not_null(w);
  cr_expect_eq(kern_device_set_stream(gpu, w), KERN_OK);
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(n), a), KERN_OK);
  cr_expect_eq(kern_device_set_stream(gpu, NULL), KERN_OK, "back to the default stream");
  cr_expect_eq(kern_device_synchronize(gpu), KERN_OK);
  kern_array_read(a, h, n * sizeof *h);
  cr_expect_eq(h[n - 1], 11);
  cr_expect_null(kern_stream_new(kern_device_get("cpu")));
  kern_stream_free(w);
  kern_stream_free(s);
  kern_array_free(a);
  free(h);
}

/* Debug mode on the GPU: the first out-of-bounds index is reported with the
 * same message as on the CPU, the device stays usable. */
Test(gpu_runtime, debug_bounds_error_then_success) {
  kern_device *gpu = gpu_or_skip();
  kern_set_debug(true);
  kern_kernel *k =
      kernel_of("kernel void k(float[,] a) {\n    a[tid(0), tid(1) + 1] = 1.0;\n}\n", "k");
  kern_set_debug(false);
  int64_t shape[2] = {4, 8};
  kern_array *a = kern_array_new(gpu, KERN_FLOAT32, 2, shape);
  kern_status s = KERN_LAUNCH(k, gpu, KERN_DIM2(4, 8), a);
  if (s == KERN_OK) s = kern_device_synchronize(gpu);
  cr_expect_eq(s, KERN_ERR_BOUNDS, "%s", kern_status_name(s));
  cr_expect(strstr(kern_last_error(), "gpu_runtime.kern:2") &&
                strstr(kern_last_error(), "shape [4, 8]"),
            "%s", kern_last_error());
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM2(4, 7), a), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_device_synchronize(gpu), KERN_OK);
}

Test(gpu_runtime, launch_validation_on_gpu) {
  kern_device *gpu = gpu_or_skip();
  kern_kernel *k = kernel_of("kernel void k(float[] a, float s) { a[tid()] = s; }\n", "k");
  int64_t n = 8;
  kern_array *a = kern_array_new(gpu, KERN_FLOAT32, 1, &n),
             *b = kern_array_new(gpu, KERN_INT32, 1, &n);
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(n), a), KERN_ERR_INVALID_ARGUMENT);
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(n), b, 1.0f), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "'k'") && strstr(kern_last_error(), "'a'"), "%s",
            kern_last_error());
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1((int64_t)1 << 40), a, 1.0f),
               KERN_ERR_INVALID_ARGUMENT);
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(0), a, 1.0f), KERN_OK, "dim 0 launches nothing");
  cr_expect_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(n), a, 2.5f), KERN_OK);
  float h[8];
  cr_assert_eq(kern_array_read(a, h, sizeof h), KERN_OK);
  cr_expect_eq(h[7], 2.5f);
}

/* A release-mode kernel that writes far outside its array destroys the CUDA
 * context: kern reports it, marks the device unusable with the original
 * error, and the CPU device keeps working. */
Test(gpu_runtime, fault_poisons_the_device_but_not_the_cpu) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  kern_kernel *k = kernel_of("kernel void wild(int[] a) { a[tid() * 1000000000] = 1; }\n", "wild");
  int64_t n = 4;
  kern_array *a = kern_array_new(gpu, KERN_INT32, 1, &n);
  kern_status s = KERN_LAUNCH(k, gpu, KERN_DIM1(1 << 20), a);
  if (s == KERN_OK) s = kern_device_synchronize(gpu);
  cr_assert_eq(s, KERN_ERR_CUDA, "%s: %s", kern_status_name(s), kern_last_error());
  char first[512];
  snprintf(first, sizeof first, "%s", kern_last_error());
  cr_expect(strstr(first, "cuda:0") && strstr(first, "CUDA_ERROR"), "%s", first);
  cr_expect_eq(kern_device_synchronize(gpu), KERN_ERR_CUDA);
  cr_expect(strstr(kern_last_error(), "unusable"), "later calls repeat why: %s", kern_last_error());
  cr_expect_null(kern_array_new(gpu, KERN_INT32, 1, &n), "allocation on a poisoned device fails");
  kern_kernel *ok = kernel_of("kernel void fill(int[] a) { a[tid()] = 7; }\n", "fill");
  kern_array *c = kern_array_new(cpu, KERN_INT32, 1, &n);
  cr_expect_eq(KERN_LAUNCH(ok, cpu, KERN_DIM1(n), c), KERN_OK, "%s", kern_last_error());
  int32_t v[4];
  cr_expect_eq(kern_array_read(c, v, sizeof v), KERN_OK);
  cr_expect_eq(v[3], 7, "the CPU device still works");
}

/* The largest argument block the checker accepts (an array and 982 floats,
 * 4000 bytes: CUDA passes at most 4 KiB, with kern's launch context) and a
 * kernel name of 1024 bytes, the longest there is, launch on the GPU. */
Test(gpu_runtime, largest_argument_block_and_longest_kernel_name) {
  kern_device *gpu = gpu_or_skip();
  enum { N = 982, NAME = 1024 };
  char *src = malloc(64 * N + 2 * NAME + 256), *name = malloc(NAME + 1), *p = src;
  cr_assert(src && name);
  memset(name, 'k', NAME);
  name[NAME] = 0;
  p += sprintf(p, "kernel void %s(float[] out", name);
  for (int i = 0; i < N; i++) p += sprintf(p, ", float s%d", i);
  p += sprintf(p, ") {\n  float t = 0.0;\n");
  for (int i = 0; i < N; i++) p += sprintf(p, "  t += s%d;\n", i);
  sprintf(p, "  out[tid()] = t;\n}\n");
  kern_kernel *k = kernel_of(src, name);
  int64_t n = 2;
  kern_array *out = kern_array_new(gpu, KERN_FLOAT32, 1, &n);
  cr_assert_not_null(out, "%s", kern_last_error());
  kern_arg *args = malloc((N + 1) * sizeof *args);
  args[0] = kern_arg_array(out);
  for (int i = 0; i < N; i++) args[i + 1] = kern_arg_f32((float)(i % 7));
  cr_assert_eq(kern_launch(k, gpu, KERN_DIM1(2), N + 1, args), KERN_OK, "%s", kern_last_error());
  float v[2], want = 0;
  for (int i = 0; i < N; i++) want += (float)(i % 7);
  cr_assert_eq(kern_array_read(out, v, sizeof v), KERN_OK, "%s", kern_last_error());
  cr_expect(v[0] == want && v[1] == want, "%g %g, want %g", v[0], v[1], want);
  kern_array_free(out);
  free(args), free(name), free(src);
}

/* kern_array_fill, _write, _read and _copy on strided views of cuda:0's
 * arrays (2x2 windows of 4x4 arrays, 3-D windows, columns, overlapping
 * windows, CPU windows), every dtype: the same bytes as on the CPU. */
Test(gpu_runtime, strided_views_every_dtype, .timeout = 120) {
  kern_device *gpu = gpu_or_skip();
  for (kern_dtype dt = KERN_BOOL; dt < KERN_DTYPE_BUILTIN_END; dt++)
    th_strided_matches_cpu(gpu, gpu, dt);
}

/* Quaternions of every element type by value through KERN_LAUNCH on the GPU:
 * each arrives as its bytes and computes as on the CPU. */
Test(gpu_runtime, quaternion_values_by_type) {
  kern_device *gpu = gpu_or_skip();
  kern_kernel *k = kernel_of("kernel void f(quat[] oq, quatd[] od, quath[] oh,\n"
                             "              quat<bfloat16>[] ob, float64[] x,\n"
                             "              quat q, quatd d, quath h, quat<bfloat16> b) {\n"
                             "    oq[0] = q; od[0] = d; oh[0] = h; ob[0] = b;\n"
                             "    x[0] = length(q); x[1] = dot(d, d);\n"
                             "    x[2] = float64(h.w) * 2.0; x[3] = float64(b.x + b.y);\n"
                             "}\n",
                             "f");
  kern_quat q = {0.0f, 3.0f, 0.0f, 4.0f};
  kern_quatd d = {1e-3, -2.5, 0.5, 1.0};
  kern_quath h = {{0x3c00}, {0x0000}, {0xbc00}, {0x3800}};    /* 1, 0, -1, 0.5 */
  kern_quatbf16 b = {{0x3fc0}, {0x4020}, {0x0000}, {0x3f80}}; /* 1.5, 2.5, 0, 1 */
  int64_t one = 1, four = 4;
  kern_array *oq = kern_array_new(gpu, KERN_QUAT, 1, &one);
  kern_array *od = kern_array_new(gpu, KERN_QUATD, 1, &one);
  kern_array *oh = kern_array_new(gpu, KERN_QUATH, 1, &one);
  kern_array *ob = kern_array_new(gpu, KERN_QUATBF16, 1, &one);
  kern_array *x = kern_array_new(gpu, KERN_FLOAT64, 1, &four);
  cr_assert_eq(KERN_LAUNCH(k, gpu, KERN_DIM1(1), oq, od, oh, ob, x, q, d, h, b), KERN_OK, "%s",
               kern_last_error());
  double got[4], want[4] = {5.0, 1e-3 * 1e-3 + 2.5 * 2.5 + 0.5 * 0.5 + 1.0, 1.0, 4.0};
  kern_quat gq;
  kern_quatd gd;
  kern_quath gh;
  kern_quatbf16 gb;
  cr_assert_eq(kern_array_read(x, got, sizeof got), KERN_OK);
  cr_assert_eq(kern_array_read(oq, &gq, sizeof gq), KERN_OK);
  cr_assert_eq(kern_array_read(od, &gd, sizeof gd), KERN_OK);
  cr_assert_eq(kern_array_read(oh, &gh, sizeof gh), KERN_OK);
  cr_assert_eq(kern_array_read(ob, &gb, sizeof gb), KERN_OK);
  for (int i = 0; i < 4; i++) cr_expect_eq(got[i], want[i], "x[%d] = %.17g", i, got[i]);
  cr_expect(memcmp(&gq, &q, sizeof q) == 0 && memcmp(&gd, &d, sizeof d) == 0, "quat, quatd");
  cr_expect(memcmp(&gh, &h, sizeof h) == 0 && memcmp(&gb, &b, sizeof b) == 0,
            "quath, quat<bfloat16>");
  kern_array *all[5] = {oq, od, oh, ob, x};
  for (int i = 0; i < 5; i++) kern_array_free(all[i]);
}
