/* test_runtime.c: the runtime core without kernels: errors, dtypes, devices,
 * arrays (every operation, views, wrapping, strides, fills, failures), the
 * allocation registry, SHA-256 and the thread pool.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kern.h"
#include "core.h"
#include "cpu/cpu_backend.h"

static kern_device *cpu(void) {
  kern_device *d = kern_device_get("cpu");
  cr_assert_not_null(d, "%s", kern_last_error());
  return d;
}

/* ---- core -------------------------------------------------------------------- */

Test(core, version_matches_header) {
  cr_assert_eq(kern_version(),
               KERN_VERSION_MAJOR * 10000 + KERN_VERSION_MINOR * 100 + KERN_VERSION_PATCH);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", KERN_VERSION_MAJOR, KERN_VERSION_MINOR,
           KERN_VERSION_PATCH);
  cr_assert_str_eq(kern_version_string(), want);
}

Test(core, status_names) {
  cr_assert_str_eq(kern_status_name(KERN_OK), "KERN_OK");
  cr_assert_str_eq(kern_status_name(KERN_ERR_INVALID_ARGUMENT), "KERN_ERR_INVALID_ARGUMENT");
  cr_assert_str_eq(kern_status_name(KERN_ERR_COMPILE), "KERN_ERR_COMPILE");
  cr_assert_str_eq(kern_status_name(KERN_ERR_BOUNDS), "KERN_ERR_BOUNDS");
  cr_assert_str_eq(kern_status_name(KERN_ERR_IO), "KERN_ERR_IO");
  cr_assert_str_eq(kern_status_name((kern_status)99), "KERN_ERR_?");
  cr_assert_str_eq(kern_status_name((kern_status)-1), "KERN_ERR_?");
}

Test(core, last_error_starts_empty_and_is_set) {
  cr_assert_str_eq(kern_last_error(), "");
  cr_assert_eq(kern_init(), KERN_OK);
  cr_assert_str_eq(kern_last_error(), "");
  cr_assert_null(kern_device_get("gpu"));
  cr_assert(strstr(kern_last_error(), "gpu") != NULL, "%s", kern_last_error());
  cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  kern_clear_error();
  cr_assert_str_eq(kern_last_error(), "");
  cr_assert_eq(kern_last_status(), KERN_OK);
}

static void *error_in_thread(void *arg) {
  (void)arg;
  /* Another thread's failure is not visible here. */
  return (void *)(strcmp(kern_last_error(), "") == 0 ? "empty" : "set");
}

Test(core, last_error_is_thread_local) {
  cr_assert_null(kern_device_get("nonsense"));
  cr_assert_str_neq(kern_last_error(), "");
  pthread_t t;
  void *r;
  pthread_create(&t, NULL, error_in_thread, NULL);
  pthread_join(t, &r);
  cr_assert_str_eq((char *)r, "empty");
  cr_assert(strstr(kern_last_error(), "nonsense"));
}

Test(core, long_error_messages_survive) {
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  cr_assert_eq(err_set(KERN_ERR_IO, "start %s end", big), KERN_ERR_IO);
  cr_assert_eq(strlen(kern_last_error()), strlen(big) + 10);
  cr_assert(strncmp(kern_last_error(), "start xxx", 9) == 0);
  cr_assert(strcmp(kern_last_error() + strlen(kern_last_error()) - 4, " end") == 0);
}

static void *init_many(void *arg) {
  (void)arg;
  return (void *)(intptr_t)kern_init();
}

Test(core, init_is_idempotent_and_thread_safe) {
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, init_many, NULL);
  for (int i = 0; i < 8; i++) {
    void *r;
    pthread_join(t[i], &r);
    cr_assert_eq((intptr_t)r, KERN_OK);
  }
  cr_assert_eq(kern_init(), KERN_OK);
  cr_assert_geq(kern_device_count(), 1);
}

Test(core, shutdown_and_reinit) {
  kern_device *d = cpu();
  int64_t shape[1] = {100000};
  kern_array *a = kern_array_new(d, KERN_INT32, 1, shape);
  kern_array_free(a);
  kern_shutdown();
  kern_shutdown(); /* twice is harmless */
  cr_assert_eq(kern_init(), KERN_OK);
  cr_assert_eq(kern_device_get("cpu"), d, "device handles stay valid");
  a = kern_array_new(d, KERN_INT32, 1, shape);
  cr_assert_not_null(a);
  kern_array_free(a);
}

Test(core, debug_flag) {
  kern_set_debug(true);
  cr_assert(kern_get_debug());
  kern_set_debug(false);
  cr_assert_not(kern_get_debug());
}

Test(core, debug_from_environment) {
  setenv("KERN_DEBUG", "1", 1);
  cr_assert_eq(kern_init(), KERN_OK);
  cr_assert(kern_get_debug());
}

Test(core, num_threads_from_environment) {
  setenv("KERN_NUM_THREADS", "3", 1);
  kern_init();
  cr_assert_eq(rt_config_get()->num_threads, 3);
}

Test(core, bad_num_threads_falls_back) {
  setenv("KERN_NUM_THREADS", "banana", 1);
  kern_init();
  cr_assert_geq(rt_config_get()->num_threads, 1);
}

/* Each Criterion test runs in its own process: the environment set here is
 * read by this test's kern_init only. */
Test(core, config_reports_compiler_nvrtc_cache_threads) {
  char dir[] = "/tmp/kern-config-XXXXXX";
  cr_assert(mkdtemp(dir));
  setenv("KERN_CACHE_DIR", dir, 1);
  setenv("KERN_CC", "cc", 1);
  setenv("KERN_NUM_THREADS", "3", 1);
  setenv("KERN_NVRTC", "", 1); /* hidden */
  kern_config c;
  cr_assert_eq(kern_config_get(&c), KERN_OK, "%s", kern_last_error());
  cr_expect_str_eq(c.version, kern_version_string());
  cr_assert_not_null(c.cc);
  cr_expect(c.cc[0] == '/' && strstr(c.cc, "/cc"), "%s", c.cc);
  cr_expect(*c.cc_version, "cc --version said something");
  cr_expect_null(c.nvrtc);
  cr_expect_eq(c.nvrtc_version, 0);
  cr_expect(strstr(c.nvrtc_error, "KERN_NVRTC"), "%s", c.nvrtc_error);
  cr_assert_not_null(c.cache_dir);
  cr_expect_str_eq(c.cache_dir, dir);
  cr_expect_eq(c.num_threads, 3);
  cr_expect(!c.debug);
  cr_expect_eq(kern_config_get(NULL), KERN_ERR_INVALID_ARGUMENT);
  kern_shutdown();
  setenv("KERN_CC", "/nonexistent/cc", 1);
  cr_assert_eq(kern_config_get(&c), KERN_OK);
  cr_expect_null(c.cc, "no compiler: %s", c.cc);
  cr_expect_str_eq(c.cc_version, "");
  rmdir(dir);
}

/* ---- dtypes ------------------------------------------------------------------------ */

Test(dtype, builtin_sizes_alignments_and_names) {
  static const struct {
    kern_dtype dt;
    size_t size, align;
    const char *name;
  } want[] = {
      {KERN_BOOL, 1, 1, "bool"},
      {KERN_INT8, 1, 1, "int8"},
      {KERN_INT16, 2, 2, "int16"},
      {KERN_INT32, 4, 4, "int32"},
      {KERN_INT64, 8, 8, "int64"},
      {KERN_UINT8, 1, 1, "uint8"},
      {KERN_UINT16, 2, 2, "uint16"},
      {KERN_UINT32, 4, 4, "uint32"},
      {KERN_UINT64, 8, 8, "uint64"},
      {KERN_FLOAT16, 2, 2, "float16"},
      {KERN_FLOAT32, 4, 4, "float32"},
      {KERN_FLOAT64, 8, 8, "float64"},
      {KERN_VEC2, 8, 4, "vec2"},
      {KERN_VEC3, 12, 4, "vec3"},
      {KERN_VEC4, 16, 4, "vec4"},
      {KERN_DVEC2, 16, 8, "dvec2"},
      {KERN_DVEC3, 24, 8, "dvec3"},
      {KERN_DVEC4, 32, 8, "dvec4"},
      {KERN_IVEC2, 8, 4, "ivec2"},
      {KERN_IVEC3, 12, 4, "ivec3"},
      {KERN_IVEC4, 16, 4, "ivec4"},
      {KERN_MAT22, 16, 4, "mat22"},
      {KERN_MAT33, 36, 4, "mat33"},
      {KERN_MAT44, 64, 4, "mat44"},
      {KERN_QUAT, 16, 4, "quat"},
      {KERN_TRANSFORM, 28, 4, "transform"},
      {KERN_SPATIAL_VECTOR, 24, 4, "spatial_vector"},
      {KERN_SPATIAL_MATRIX, 144, 4, "spatial_matrix"},
      {KERN_BFLOAT16, 2, 2, "bfloat16"},
      {KERN_QUATH, 8, 2, "quath"},
      {KERN_QUATBF16, 8, 2, "quat<bfloat16>"},
      {KERN_QUATD, 32, 8, "quatd"},
  };
  size_t n = sizeof want / sizeof want[0];
  cr_assert_eq(n, (size_t)(KERN_DTYPE_BUILTIN_END - 1), "every builtin dtype is listed");
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(kern_dtype_size(want[i].dt), want[i].size, "%s", want[i].name);
    cr_assert_eq(kern_dtype_align(want[i].dt), want[i].align, "%s", want[i].name);
    cr_assert_str_eq(kern_dtype_name(want[i].dt), want[i].name);
  }
}

Test(dtype, invalid_dtypes) {
  kern_dtype bad[] = {KERN_DTYPE_INVALID, -1, KERN_DTYPE_BUILTIN_END, 200,
                      KERN_DTYPE_FIRST_STRUCT + 100000};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(kern_dtype_size(bad[i]), 0);
    cr_assert_str_eq(kern_dtype_name(bad[i]), "<invalid dtype>");
  }
}

Test(dtype, struct_registry_dedups_by_layout) {
  kern_dtype a = rt_dtype_register_struct("P", "P{16,4;x:float32@0}", 16, 4);
  kern_dtype b = rt_dtype_register_struct("P", "P{16,4;x:float32@0}", 16, 4);
  kern_dtype c = rt_dtype_register_struct("P", "P{16,4;y:float32@0}", 16, 4);
  cr_assert_geq(a, KERN_DTYPE_FIRST_STRUCT);
  cr_assert_eq(a, b);
  cr_assert_neq(a, c);
  cr_assert_eq(kern_dtype_size(a), 16);
  cr_assert_eq(kern_dtype_align(a), 4);
  cr_assert_str_eq(kern_dtype_name(c), "P");
  int64_t shape[1] = {3};
  kern_array *arr = kern_array_new(cpu(), a, 1, shape);
  cr_assert_eq(kern_array_nbytes(arr), 48);
  kern_array_free(arr);
}

/* vec<T, N> and mat<T, M, N>: the short names' builtin dtypes, else one
 * registered id per type, its name and packed layout; a kernel's parameter agrees. */
Test(dtype, quat_dtypes_of_each_float_element) {
  cr_assert_eq(kern_dtype_quat(KERN_FLOAT32), KERN_QUAT);
  cr_assert_eq(kern_dtype_quat(KERN_FLOAT16), KERN_QUATH);
  cr_assert_eq(kern_dtype_quat(KERN_BFLOAT16), KERN_QUATBF16);
  cr_assert_eq(kern_dtype_quat(KERN_FLOAT64), KERN_QUATD);
  kern_dtype elems[] = {KERN_FLOAT16, KERN_BFLOAT16, KERN_FLOAT32, KERN_FLOAT64};
  for (int i = 0; i < 4; i++) {
    kern_dtype q = kern_dtype_quat(elems[i]);
    cr_assert_eq(kern_dtype_size(q), 4 * kern_dtype_size(elems[i]));
    cr_assert_eq(kern_dtype_align(q), kern_dtype_align(elems[i]));
  }
  cr_assert_eq(sizeof(kern_quath), 8);
  cr_assert_eq(sizeof(kern_quatbf16), 8);
  cr_assert_eq(sizeof(kern_quatd), 32);
  kern_dtype bad[] = {KERN_INT32, KERN_BOOL, KERN_VEC4, KERN_QUAT, KERN_DTYPE_INVALID, -1, 999};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq(kern_dtype_quat(bad[i]), KERN_DTYPE_INVALID, "elem %d", (int)bad[i]);
}

Test(dtype, vec_and_mat_dtypes_of_any_element_and_shape) {
  cr_assert_eq(kern_dtype_vec(KERN_FLOAT32, 3), KERN_VEC3);
  cr_assert_eq(kern_dtype_vec(KERN_FLOAT64, 2), KERN_DVEC2);
  cr_assert_eq(kern_dtype_vec(KERN_INT32, 4), KERN_IVEC4);
  kern_dtype h = kern_dtype_vec(KERN_FLOAT16, 5), f6 = kern_dtype_vec(KERN_FLOAT32, 6);
  cr_assert_geq(h, KERN_DTYPE_FIRST_STRUCT);
  cr_assert_eq(kern_dtype_vec(KERN_FLOAT16, 5), h);
  cr_assert_neq(f6, KERN_SPATIAL_VECTOR);
  cr_assert_str_eq(kern_dtype_name(h), "vec<float16, 5>");
  cr_assert_eq(kern_dtype_size(h), 10);
  cr_assert_eq(kern_dtype_align(h), 2);
  cr_assert_eq(kern_dtype_size(kern_dtype_vec(KERN_UINT8, 16)), 16);
  cr_assert_eq(kern_dtype_size(kern_dtype_vec(KERN_INT64, 1)), 8);
  kern_dtype bad[] = {kern_dtype_vec(KERN_BOOL, 2),          kern_dtype_vec(KERN_FLOAT32, 0),
                      kern_dtype_vec(KERN_FLOAT32, 17),      kern_dtype_vec(KERN_VEC3, 2),
                      kern_dtype_vec(KERN_DTYPE_INVALID, 2), kern_dtype_vec(h, 2)};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq(bad[i], KERN_DTYPE_INVALID, "case %zu", i);
  cr_assert_eq(kern_dtype_mat(KERN_FLOAT32, 3, 3), KERN_MAT33);
  kern_dtype m23 = kern_dtype_mat(KERN_FLOAT64, 2, 3);
  cr_assert_geq(m23, KERN_DTYPE_FIRST_STRUCT);
  cr_assert_neq(m23, kern_dtype_vec(KERN_FLOAT64, 6));
  cr_assert_str_eq(kern_dtype_name(m23), "mat<float64, 2, 3>");
  cr_assert_eq(kern_dtype_size(m23), 48);
  cr_assert_eq(kern_dtype_mat(KERN_FLOAT32, 0, 3), KERN_DTYPE_INVALID);
  cr_assert_eq(kern_dtype_mat(KERN_BOOL, 2, 2), KERN_DTYPE_INVALID);
  kern_module *m = kern_module_from_source(
      "v.kern",
      "kernel void k(vec<float16, 5>[] a, vec<float32, 3> b) { a[tid()][0] = float16(b.x); }");
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "k");
  cr_assert_eq(kern_kernel_param_dtype(k, 0), h);
  cr_assert_eq(kern_kernel_param_dtype(k, 1), KERN_VEC3);
  kern_module_free(m);
}

/* ---- devices --------------------------------------------------------------------------- */

Test(device, cpu_device) {
  kern_device *d = cpu();
  cr_assert_eq(kern_device_at(0), d);
  cr_assert_str_eq(kern_device_name(d), "cpu");
  cr_assert_not(kern_device_is_cuda(d));
  cr_assert_eq(kern_device_synchronize(d), KERN_OK);
  kern_device_info info;
  memset(&info, 0xff, sizeof info);
  cr_assert_eq(kern_device_info_get(d, &info), KERN_OK);
  cr_assert_eq(info.ordinal, -1);
  cr_assert(!info.is_uva && !info.is_mempool_supported && !info.is_managed_memory_supported &&
            !info.is_concurrent_managed_access_supported &&
            !info.is_cpu_memory_access_from_gpu_supported &&
            !info.is_gpu_memory_access_from_cpu_supported && !info.is_cpu_gpu_atomic_supported);
  cr_assert_gt(info.total_memory, 0);
  cr_assert(kern_device_can_access(d, d));
}

Test(device, indices) {
  int n = kern_device_count();
  cr_assert_geq(n, 1);
  for (int i = 0; i < n; i++) cr_assert_not_null(kern_device_at(i));
  cr_assert_null(kern_device_at(-1));
  cr_assert_null(kern_device_at(n));
  cr_assert(strstr(kern_last_error(), "index"));
  for (int i = 1; i < n; i++) cr_assert(kern_device_is_cuda(kern_device_at(i)));
}

static int cuda_count(void) {
  int n = 0;
  for (int i = 0; i < kern_device_count(); i++) n += kern_device_is_cuda(kern_device_at(i));
  return n;
}

Test(device, bad_names) {
  const char *bad[] = {
      "gpu", "", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:+1", "cuda:1x", "cuda:99999999999",
      "cpu0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    kern_clear_error();
    cr_assert_null(kern_device_get(bad[i]), "'%s'", bad[i]);
    cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(kern_last_error(), "bad device name"), "'%s': %s", bad[i], kern_last_error());
  }
  cr_assert_null(kern_device_get(NULL));
  cr_assert(strstr(kern_last_error(), "NULL"));
}

Test(device, absent_cuda_ordinals) {
  char name[32];
  snprintf(name, sizeof name, "cuda:%d", cuda_count() + 7);
  cr_assert_null(kern_device_get(name));
  cr_assert_eq(kern_last_status(), KERN_ERR_NOT_FOUND);
  cr_assert(strstr(kern_last_error(), name), "%s", kern_last_error());
  if (cuda_count() == 0) {
    cr_assert(strstr(kern_last_error(), "no CUDA device present"), "%s", kern_last_error());
    cr_assert_null(kern_device_get("cuda"));
    cr_assert_null(kern_device_get("cuda:0"));
  } else {
    cr_assert(strstr(kern_last_error(), "no such device"), "%s", kern_last_error());
  }
}

Test(device, allocators_on_cpu) {
  kern_device *d = cpu();
  cr_assert_eq(kern_device_get_allocator(d), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_device_set_allocator(d, KERN_ALLOC_CUDA_DEVICE), KERN_ALLOC_DEFAULT);
  cr_assert(strstr(kern_last_error(), "cpu"));
  cr_assert_eq(kern_device_set_allocator(d, KERN_ALLOC_CUDA_MANAGED), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_device_set_allocator(d, (kern_allocator)77), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_device_get_allocator(d), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_device_set_allocator(d, KERN_ALLOC_DEFAULT), KERN_ALLOC_DEFAULT);
}

Test(device, peer_access_needs_cuda) {
  kern_device *d = cpu();
  cr_assert_eq(kern_device_enable_peer_access(d, d, true), KERN_ERR_UNSUPPORTED);
  cr_assert_eq(kern_device_enable_mempool_access(d, d, true), KERN_ERR_UNSUPPORTED);
  cr_assert_eq(kern_device_enable_peer_access(NULL, d, true), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_device_synchronize(NULL), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_device_info_get(NULL, NULL), KERN_ERR_INVALID_ARGUMENT);
}

Test(device, streams_need_cuda) {
  cr_assert_null(kern_stream_new(cpu()));
  cr_assert_str_neq(kern_last_error(), "");
}

/* ---- arrays: creation ------------------------------------------------------------------------ */

Test(array, new_is_zeroed_aligned_and_described) {
  int64_t shape[3] = {3, 4, 5};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT64, 3, shape);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_assert_eq(kern_array_ndim(a), 3);
  cr_assert_eq(kern_array_shape(a, 0), 3);
  cr_assert_eq(kern_array_shape(a, 2), 5);
  cr_assert_eq(kern_array_shape(a, 3), 0);
  cr_assert_eq(kern_array_shape(a, -1), 0);
  cr_assert_eq(kern_array_stride(a, 0), 160);
  cr_assert_eq(kern_array_stride(a, 1), 40);
  cr_assert_eq(kern_array_stride(a, 2), 8);
  cr_assert_eq(kern_array_size(a), 60);
  cr_assert_eq(kern_array_nbytes(a), 480);
  cr_assert_eq(kern_array_dtype(a), KERN_FLOAT64);
  cr_assert_eq(kern_array_device(a), cpu());
  cr_assert_eq(kern_array_memory_kind(a), KERN_MEM_HOST);
  cr_assert(kern_array_is_contiguous(a));
  cr_assert(kern_can_access(cpu(), a));
  cr_assert_eq((uintptr_t)kern_array_data(a) % 64, 0);
  const unsigned char *p = kern_array_data(a);
  for (int i = 0; i < 480; i++) cr_assert_eq(p[i], 0);
  kern_array_free(a);
}

Test(array, large_new_is_zeroed) {
  int64_t shape[1] = {3 << 20};
  kern_array *a = kern_array_new(cpu(), KERN_UINT8, 1, shape);
  cr_assert_not_null(a);
  const unsigned char *p = kern_array_data(a);
  for (int64_t i = 0; i < shape[0]; i += 4093) cr_assert_eq(p[i], 0);
  cr_assert_eq(p[shape[0] - 1], 0);
  cr_assert_eq((uintptr_t)p % 64, 0);
  kern_array_free(a);
}

Test(array, empty_roundtrip) {
  int64_t shape[2] = {7, 9};
  kern_array *a = kern_array_empty(cpu(), KERN_INT32, 2, shape);
  cr_assert_not_null(a);
  int32_t src[63], dst[63];
  for (int i = 0; i < 63; i++) src[i] = i * i - 17;
  cr_assert_eq(kern_array_write(a, src, sizeof src), KERN_OK);
  memset(dst, 0, sizeof dst);
  cr_assert_eq(kern_array_read(a, dst, sizeof dst), KERN_OK);
  cr_assert_arr_eq(src, dst, sizeof src);
  kern_array_free(a);
}

Test(array, bad_creation_arguments) {
  kern_device *d = cpu();
  int64_t ok[4] = {2, 2, 2, 2}, neg[2] = {4, -1}, five[5] = {1, 1, 1, 1, 1};
  cr_assert_null(kern_array_new(NULL, KERN_FLOAT32, 1, ok));
  cr_assert(strstr(kern_last_error(), "device is NULL"));
  cr_assert_null(kern_array_new(d, KERN_DTYPE_INVALID, 1, ok));
  cr_assert(strstr(kern_last_error(), "dtype"));
  cr_assert_null(kern_array_new(d, 9999, 1, ok));
  cr_assert_null(kern_array_new(d, KERN_FLOAT32, 0, ok));
  cr_assert(strstr(kern_last_error(), "ndim"));
  cr_assert_null(kern_array_new(d, KERN_FLOAT32, 5, five));
  cr_assert_null(kern_array_new(d, KERN_FLOAT32, -1, ok));
  cr_assert_null(kern_array_new(d, KERN_FLOAT32, 2, NULL));
  cr_assert_null(kern_array_new(d, KERN_FLOAT32, 2, neg));
  cr_assert(strstr(kern_last_error(), "negative"), "%s", kern_last_error());
  cr_assert_null(kern_array_empty(d, KERN_FLOAT32, 2, neg));
}

Test(array, overflowing_sizes_are_invalid) {
  kern_device *d = cpu();
  int64_t s1[1] = {INT64_MAX}, s2[2] = {INT64_MAX / 2, 3},
          s3[4] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
  int64_t s4[1] = {INT64_MAX / 8 + 1};
  cr_assert_null(kern_array_new(d, KERN_FLOAT32, 1, s1));
  cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(kern_last_error(), "overflow"), "%s", kern_last_error());
  cr_assert_null(kern_array_new(d, KERN_UINT8, 2, s2));
  cr_assert(strstr(kern_last_error(), "overflow"));
  cr_assert_null(kern_array_new(d, KERN_UINT8, 4, s3));
  cr_assert_null(kern_array_new(d, KERN_FLOAT64, 1, s4));
  cr_assert(strstr(kern_last_error(), "overflow"));
}

Test(array, terabyte_allocation_fails_cleanly) {
  int64_t shape[1] = {(int64_t)1 << 40};
  size_t before = rt_registry_count();
  kern_clear_error();
  cr_assert_null(kern_array_new(cpu(), KERN_UINT8, 1, shape));
  cr_assert_eq(kern_last_status(), KERN_ERR_OUT_OF_MEMORY);
  cr_assert(strstr(kern_last_error(), "out of memory"), "%s", kern_last_error());
  cr_assert_null(kern_array_empty(cpu(), KERN_FLOAT32, 1, shape));
  cr_assert_eq(rt_registry_count(), before);
  /* The device still works. */
  int64_t small[1] = {10};
  kern_array *a = kern_array_new(cpu(), KERN_UINT8, 1, small);
  cr_assert_not_null(a);
  kern_array_free(a);
}

Test(array, zero_size_arrays) {
  int64_t s1[1] = {0}, s2[2] = {3, 0};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 1, s1);
  kern_array *b = kern_array_empty(cpu(), KERN_VEC3, 2, s2);
  cr_assert_not_null(a);
  cr_assert_not_null(b);
  cr_assert_eq(kern_array_nbytes(a), 0);
  cr_assert_eq(kern_array_size(b), 0);
  cr_assert_not_null(kern_array_data(a), "zero-size arrays still get an address");
  cr_assert_eq(kern_array_write(a, NULL, 0), KERN_OK);
  cr_assert_eq(kern_array_read(b, NULL, 0), KERN_OK);
  float v[3] = {1, 2, 3};
  cr_assert_eq(kern_array_fill(b, v), KERN_OK);
  kern_array *c = kern_array_new(cpu(), KERN_VEC3, 2, s2);
  cr_assert_eq(kern_array_copy(c, b), KERN_OK);
  cr_assert_eq(kern_array_write(a, v, 4), KERN_ERR_INVALID_ARGUMENT);
  kern_array_free(a);
  kern_array_free(b);
  kern_array_free(c);
}

Test(array, free_null_and_null_accessors) {
  kern_array_free(NULL);
  cr_assert_null(kern_array_data(NULL));
  cr_assert_null(kern_array_device(NULL));
  cr_assert_eq(kern_array_ndim(NULL), 0);
  cr_assert_eq(kern_array_size(NULL), 0);
  cr_assert_eq(kern_array_nbytes(NULL), 0);
  cr_assert_eq(kern_array_dtype(NULL), KERN_DTYPE_INVALID);
  cr_assert_eq(kern_array_memory_kind(NULL), KERN_MEM_UNKNOWN);
  cr_assert_not(kern_can_access(cpu(), NULL));
}

/* ---- arrays: transfers ---------------------------------------------------------------------- */

Test(array, read_write_size_and_null_checks) {
  int64_t shape[1] = {8};
  kern_array *a = kern_array_new(cpu(), KERN_INT64, 1, shape);
  int64_t buf[8] = {0};
  cr_assert_eq(kern_array_write(a, buf, 63), KERN_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(kern_last_error(), "64"), "%s", kern_last_error());
  cr_assert_eq(kern_array_write(a, buf, 65), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_read(a, buf, 8), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_write(a, NULL, 64), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_read(a, NULL, 64), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_write(NULL, buf, 64), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_read(NULL, buf, 64), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_fill(a, NULL), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_fill(NULL, buf), KERN_ERR_INVALID_ARGUMENT);
  kern_array_free(a);
}

/* Bytes of element i: each byte distinct, so any misplaced byte shows. */
static void pattern(unsigned char *p, size_t elem, int64_t i) {
  for (size_t b = 0; b < elem; b++) p[b] = (unsigned char)(i * 31 + (int64_t)b * 7 + 1);
}

Test(array, fill_every_builtin_dtype) {
  for (kern_dtype dt = KERN_BOOL; dt < KERN_DTYPE_BUILTIN_END; dt++) {
    size_t es = kern_dtype_size(dt);
    int64_t shape[2] = {7, 3};
    kern_array *a = kern_array_new(cpu(), dt, 2, shape);
    unsigned char value[256], *out = malloc(21 * es);
    pattern(value, es, dt);
    cr_assert_eq(kern_array_fill(a, value), KERN_OK, "%s", kern_dtype_name(dt));
    cr_assert_eq(kern_array_read(a, out, 21 * es), KERN_OK);
    for (int i = 0; i < 21; i++)
      cr_assert_arr_eq(out + (size_t)i * es, value, es, "%s element %d", kern_dtype_name(dt), i);
    free(out);
    kern_array_free(a);
  }
}

Test(array, fill_long_array) {
  int64_t shape[1] = {1000003};
  kern_array *a = kern_array_empty(cpu(), KERN_VEC3, 1, shape);
  float v[3] = {1.5f, -2.0f, 3.25f};
  cr_assert_eq(kern_array_fill(a, v), KERN_OK);
  const float *p = kern_array_data(a);
  for (int64_t i = 0; i < shape[0]; i++)
    if (p[3 * i] != 1.5f || p[3 * i + 1] != -2.0f || p[3 * i + 2] != 3.25f)
      cr_assert_fail("element %lld", (long long)i);
  kern_array_free(a);
}

/* A 4x5 int32 array holding 10*i + j. */
static kern_array *grid45(void) {
  int64_t shape[2] = {4, 5};
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 2, shape);
  int32_t v[20];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) v[i * 5 + j] = 10 * i + j;
  cr_assert_eq(kern_array_write(a, v, sizeof v), KERN_OK);
  return a;
}

Test(view, read_write_through_a_window) {
  kern_array *a = grid45();
  int64_t off[2] = {1, 2}, shape[2] = {2, 3};
  kern_array *v = kern_array_view(a, 2, off, shape);
  cr_assert_not_null(v, "%s", kern_last_error());
  cr_assert_eq(kern_array_size(v), 6);
  cr_assert_eq(kern_array_nbytes(v), 24);
  cr_assert_not(kern_array_is_contiguous(v));
  cr_assert_eq(kern_array_memory_kind(v), KERN_MEM_HOST);
  cr_assert_eq(kern_array_stride(v, 0), 20);
  int32_t got[6], want[6] = {12, 13, 14, 22, 23, 24};
  cr_assert_eq(kern_array_read(v, got, sizeof got), KERN_OK);
  cr_assert_arr_eq(got, want, sizeof got);
  int32_t neg[6] = {-1, -2, -3, -4, -5, -6};
  cr_assert_eq(kern_array_write(v, neg, sizeof neg), KERN_OK);
  int32_t all[20];
  kern_array_read(a, all, sizeof all);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) {
      int32_t w = 10 * i + j;
      if (i >= 1 && i < 3 && j >= 2 && j < 5) w = -(1 + (i - 1) * 3 + (j - 2));
      cr_assert_eq(all[i * 5 + j], w, "[%d,%d]", i, j);
    }
  int32_t seven = 7;
  cr_assert_eq(kern_array_fill(v, &seven), KERN_OK);
  kern_array_read(a, all, sizeof all);
  cr_assert_eq(all[1 * 5 + 1], 11);
  cr_assert_eq(all[1 * 5 + 2], 7);
  cr_assert_eq(all[2 * 5 + 4], 7);
  cr_assert_eq(all[3 * 5 + 2], 32);
  kern_array_free(v);
  kern_array_free(a);
}

Test(view, view_of_view_and_row_views_are_dense) {
  kern_array *a = grid45();
  int64_t off[2] = {1, 0}, shape[2] = {3, 5};
  kern_array *rows = kern_array_view(a, 2, off, shape);
  cr_assert(kern_array_is_contiguous(rows));
  int64_t off2[2] = {2, 3}, shape2[2] = {1, 2};
  kern_array *vv = kern_array_view(rows, 2, off2, shape2);
  int32_t got[2];
  cr_assert_eq(kern_array_read(vv, got, sizeof got), KERN_OK);
  cr_assert_eq(got[0], 33);
  cr_assert_eq(got[1], 34);
  kern_array_free(vv);
  kern_array_free(rows);
  kern_array_free(a);
}

Test(view, outlives_its_parent) {
  kern_array *a = grid45();
  size_t before = rt_registry_count();
  int64_t off[2] = {3, 0}, shape[2] = {1, 5};
  kern_array *v = kern_array_view(a, 2, off, shape);
  kern_array_free(a);
  cr_assert_eq(rt_registry_count(), before, "the memory stays while a view uses it");
  int32_t got[5], want[5] = {30, 31, 32, 33, 34};
  cr_assert_eq(kern_array_read(v, got, sizeof got), KERN_OK);
  cr_assert_arr_eq(got, want, sizeof got);
  kern_array_free(v);
  cr_assert_eq(rt_registry_count(), before - 1);
}

Test(view, bad_windows) {
  kern_array *a = grid45();
  int64_t off[2] = {0, 0}, big[2] = {5, 1}, neg[2] = {-1, 0}, over[2] = {3, 4}, shp[2] = {2, 2},
          zero[2] = {4, 0};
  cr_assert_null(kern_array_view(a, 2, off, big));
  cr_assert(strstr(kern_last_error(), "outside"), "%s", kern_last_error());
  cr_assert_null(kern_array_view(a, 2, neg, shp));
  cr_assert_null(kern_array_view(a, 2, over, shp));
  cr_assert_null(kern_array_view(a, 1, off, shp));
  cr_assert(strstr(kern_last_error(), "ndim"));
  cr_assert_null(kern_array_view(NULL, 2, off, shp));
  cr_assert_null(kern_array_view(a, 2, NULL, shp));
  kern_array *e = kern_array_view(a, 2, zero, off); /* empty window at the end: fine */
  cr_assert_not_null(e, "%s", kern_last_error());
  cr_assert_eq(kern_array_size(e), 0);
  kern_array_free(e);
  kern_array_free(a);
}

/* ---- wrap --------------------------------------------------------------------------------------------- */

Test(wrap, dense_host_memory_is_unknown_kind) {
  float buf[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  kern_array *a = kern_array_wrap(buf, cpu(), KERN_FLOAT32, 2, shape, NULL);
  cr_assert_not_null(a);
  cr_assert_eq(kern_array_data(a), buf);
  cr_assert_eq(kern_array_memory_kind(a), KERN_MEM_UNKNOWN);
  cr_assert(kern_array_is_contiguous(a));
  float out[6];
  cr_assert_eq(kern_array_read(a, out, sizeof out), KERN_OK);
  cr_assert_arr_eq(out, buf, sizeof out);
  float nine = 9;
  kern_array_fill(a, &nine);
  cr_assert_eq(buf[5], 9);
  kern_array_free(a);
  cr_assert_eq(buf[0], 9, "wrapped memory is not freed");
}

Test(wrap, strided_column_read_write) {
  double m[4][3];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) m[i][j] = i * 3 + j;
  int64_t shape[1] = {4}, strides[1] = {3 * sizeof(double)};
  kern_array *col = kern_array_wrap(&m[0][1], cpu(), KERN_FLOAT64, 1, shape, strides);
  cr_assert_not_null(col);
  cr_assert_not(kern_array_is_contiguous(col));
  double got[4];
  cr_assert_eq(kern_array_read(col, got, sizeof got), KERN_OK);
  for (int i = 0; i < 4; i++) cr_assert_eq(got[i], i * 3 + 1);
  double put[4] = {-1, -2, -3, -4};
  cr_assert_eq(kern_array_write(col, put, sizeof put), KERN_OK);
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(m[i][1], -(i + 1));
    cr_assert_eq(m[i][0], i * 3);
    cr_assert_eq(m[i][2], i * 3 + 2);
  }
  kern_array_free(col);
}

Test(wrap, transposed_2d) {
  int16_t m[3][5];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) m[i][j] = (int16_t)(100 * i + j);
  int64_t shape[2] = {5, 3}, strides[2] = {sizeof(int16_t), 5 * sizeof(int16_t)};
  kern_array *t = kern_array_wrap(m, cpu(), KERN_INT16, 2, shape, strides);
  int16_t got[15];
  cr_assert_eq(kern_array_read(t, got, sizeof got), KERN_OK);
  for (int j = 0; j < 5; j++)
    for (int i = 0; i < 3; i++) cr_assert_eq(got[j * 3 + i], 100 * i + j);
  kern_array_free(t);
}

Test(wrap, bad_arguments) {
  float buf[4];
  int64_t shape[1] = {4}, neg[1] = {-4}, negstride[1] = {-4}, huge[1] = {INT64_MAX / 2};
  int64_t two[2] = {1 << 20, 1 << 20}, hugestride[2] = {INT64_MAX / 4, 4};
  cr_assert_null(kern_array_wrap(NULL, cpu(), KERN_FLOAT32, 1, shape, NULL));
  cr_assert(strstr(kern_last_error(), "NULL"));
  cr_assert_null(kern_array_wrap(buf, cpu(), KERN_FLOAT32, 1, neg, NULL));
  cr_assert_null(kern_array_wrap(buf, cpu(), KERN_FLOAT32, 1, shape, negstride));
  cr_assert(strstr(kern_last_error(), "negative"));
  cr_assert_null(kern_array_wrap(buf, cpu(), KERN_FLOAT32, 1, huge, NULL));
  cr_assert_null(kern_array_wrap(buf, cpu(), KERN_FLOAT32, 2, two, hugestride));
  cr_assert(strstr(kern_last_error(), "overflow"), "%s", kern_last_error());
  cr_assert_null(kern_array_wrap(buf, NULL, KERN_FLOAT32, 1, shape, NULL));
  int64_t zero[1] = {0};
  kern_array *e = kern_array_wrap(NULL, cpu(), KERN_FLOAT32, 1, zero, NULL);
  cr_assert_not_null(e, "an empty array may wrap NULL");
  kern_array_free(e);
}

Test(wrap, kerns_own_allocation_keeps_its_kind) {
  int64_t shape[1] = {16};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 1, shape);
  kern_array *w = kern_array_wrap(kern_array_data(a), cpu(), KERN_FLOAT32, 1, shape, NULL);
  cr_assert_eq(kern_array_memory_kind(w), KERN_MEM_HOST);
  kern_array *inner =
      kern_array_wrap((float *)kern_array_data(a) + 1, cpu(), KERN_FLOAT32, 1, shape, NULL);
  cr_assert_eq(kern_array_memory_kind(inner), KERN_MEM_UNKNOWN,
               "interior pointers are not recorded");
  kern_array_free(inner);
  kern_array_free(w);
  kern_array_free(a);
}

Test(wrap, ipc_refuses_host_external_and_views) {
  int64_t shape[1] = {16}, off[1] = {0};
  char handle[64];
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 1, shape);
  cr_assert_eq(kern_array_ipc_handle(a, handle), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "host"), "%s", kern_last_error());
  kern_array *v = kern_array_view(a, 1, off, shape);
  cr_assert_eq(kern_array_ipc_handle(v, handle), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "view"));
  float buf[16];
  kern_array *w = kern_array_wrap(buf, cpu(), KERN_FLOAT32, 1, shape, NULL);
  cr_assert_eq(kern_array_ipc_handle(w, handle), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "external"));
  kern_array_free(w);
  kern_array_free(v);
  kern_array_free(a);
}

/* ---- copy ---------------------------------------------------------------------------------------------- */

Test(copy, dense_and_strided_both_ways) {
  kern_array *a = grid45();
  int64_t shape[2] = {4, 5};
  kern_array *b = kern_array_new(cpu(), KERN_INT32, 2, shape);
  cr_assert_eq(kern_array_copy(b, a), KERN_OK);
  int32_t x[20], y[20];
  kern_array_read(a, x, sizeof x);
  kern_array_read(b, y, sizeof y);
  cr_assert_arr_eq(x, y, sizeof x);
  /* strided -> dense and dense -> strided */
  int64_t off[2] = {0, 1}, win[2] = {4, 2}, dshape[2] = {4, 2};
  kern_array *v = kern_array_view(a, 2, off, win);
  kern_array *d = kern_array_new(cpu(), KERN_INT32, 2, dshape);
  cr_assert_eq(kern_array_copy(d, v), KERN_OK);
  int32_t got[8];
  kern_array_read(d, got, sizeof got);
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(got[2 * i], 10 * i + 1);
    cr_assert_eq(got[2 * i + 1], 10 * i + 2);
  }
  int32_t minus[8];
  for (int i = 0; i < 8; i++) minus[i] = -i;
  kern_array_write(d, minus, sizeof minus);
  int64_t off2[2] = {0, 3};
  kern_array *v2 = kern_array_view(b, 2, off2, win);
  cr_assert_eq(kern_array_copy(v2, d), KERN_OK);
  kern_array_read(b, y, sizeof y);
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(y[5 * i + 2], 10 * i + 2);
    cr_assert_eq(y[5 * i + 3], -(2 * i));
    cr_assert_eq(y[5 * i + 4], -(2 * i + 1));
  }
  /* strided -> strided */
  cr_assert_eq(kern_array_copy(v2, v), KERN_OK);
  kern_array_read(b, y, sizeof y);
  for (int i = 0; i < 4; i++) cr_assert_eq(y[5 * i + 3], 10 * i + 1);
  kern_array_free(v2);
  kern_array_free(d);
  kern_array_free(v);
  kern_array_free(b);
  kern_array_free(a);
}

Test(copy, overlapping_views_behave_like_memmove) {
  int64_t shape[1] = {10}, n[1] = {8}, o1[1] = {0}, o2[1] = {2};
  int32_t init[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, want[10], got[10];
  for (int dir = 0; dir < 2; dir++) {
    kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, shape);
    kern_array_write(a, init, sizeof init);
    kern_array *lo = kern_array_view(a, 1, o1, n), *hi = kern_array_view(a, 1, o2, n);
    memcpy(want, init, sizeof want);
    if (dir)
      memmove(want + 2, want, 8 * sizeof *want);
    else
      memmove(want, want + 2, 8 * sizeof *want);
    cr_assert_eq(kern_array_copy(dir ? hi : lo, dir ? lo : hi), KERN_OK);
    kern_array_read(a, got, sizeof got);
    cr_assert_arr_eq(got, want, sizeof got, "direction %d", dir);
    kern_array_free(lo);
    kern_array_free(hi);
    kern_array_free(a);
  }
}

Test(copy, overlapping_strided_views) {
  /* Row 0..2 of a 4x4 matrix copied onto its transpose-like window: staged. */
  int32_t init[16], want[16], got[16];
  for (int i = 0; i < 16; i++) init[i] = i;
  int64_t shape[2] = {4, 4};
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 2, shape);
  kern_array_write(a, init, sizeof init);
  int64_t win[2] = {3, 2}, o1[2] = {0, 0}, o2[2] = {1, 1};
  kern_array *src = kern_array_view(a, 2, o1, win), *dst = kern_array_view(a, 2, o2, win);
  memcpy(want, init, sizeof want);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) want[(i + 1) * 4 + j + 1] = init[i * 4 + j];
  cr_assert_eq(kern_array_copy(dst, src), KERN_OK);
  kern_array_read(a, got, sizeof got);
  cr_assert_arr_eq(got, want, sizeof got);
  kern_array_free(src);
  kern_array_free(dst);
  kern_array_free(a);
}

Test(copy, mismatches) {
  int64_t s1[1] = {4}, s2[1] = {5}, s3[2] = {2, 2};
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 1, s1),
             *b = kern_array_new(cpu(), KERN_INT32, 1, s2);
  kern_array *c = kern_array_new(cpu(), KERN_FLOAT32, 1, s1),
             *d = kern_array_new(cpu(), KERN_INT32, 2, s3);
  cr_assert_eq(kern_array_copy(a, b), KERN_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(kern_last_error(), "shape"));
  cr_assert_eq(kern_array_copy(a, c), KERN_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(kern_last_error(), "float32"), "%s", kern_last_error());
  cr_assert_eq(kern_array_copy(a, d), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_copy(a, NULL), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_copy(NULL, a), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_copy(a, a), KERN_OK);
  kern_array_free(a);
  kern_array_free(b);
  kern_array_free(c);
  kern_array_free(d);
}

/* ---- registry ------------------------------------------------------------------------------------------ */

Test(registry, many_adds_and_removes) {
  enum { N = 20000 };
  static char pool[N];
  size_t base = rt_registry_count();
  for (int i = 0; i < N; i++) {
    rt_alloc_info info = {.device = NULL, .kind = (kern_memory_kind)(i % 6), .bytes = (size_t)i};
    cr_assert(rt_registry_add(&pool[i], &info));
  }
  cr_assert_eq(rt_registry_count(), base + N);
  for (int i = 0; i < N; i += 2) rt_registry_remove(&pool[i]);
  cr_assert_eq(rt_registry_count(), base + N / 2);
  for (int i = 0; i < N; i++) {
    rt_alloc_info info;
    bool found = rt_registry_find(&pool[i], &info);
    cr_assert_eq(found, i % 2 == 1, "entry %d", i);
    if (found) {
      cr_assert_eq(info.bytes, (size_t)i);
      cr_assert_eq(info.kind, (kern_memory_kind)(i % 6));
    }
  }
  for (int i = 1; i < N; i += 2) rt_registry_remove(&pool[i]);
  cr_assert_eq(rt_registry_count(), base);
  rt_registry_remove(&pool[0]); /* absent: no effect */
  cr_assert_eq(rt_registry_count(), base);
}

Test(registry, tracks_arrays) {
  size_t before = rt_registry_count();
  int64_t shape[1] = {100};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 1, shape);
  rt_alloc_info info;
  cr_assert(rt_registry_find(kern_array_data(a), &info));
  cr_assert_eq(info.kind, KERN_MEM_HOST);
  cr_assert_eq(info.device, cpu());
  cr_assert_geq(info.bytes, 400);
  cr_assert_eq(rt_registry_count(), before + 1);
  kern_array_free(a);
  cr_assert_eq(rt_registry_count(), before);
}

/* ---- SHA-256 (FIPS 180-4 test vectors) -------------------------------------------------------------------- */

static void sha_hex(const void *data, size_t n, char out[65]) {
  rt_sha256 s;
  unsigned char d[32];
  rt_sha256_init(&s);
  rt_sha256_add(&s, data, n);
  rt_sha256_done(&s, d);
  rt_hex(d, 32, out);
}

Test(sha256, known_vectors) {
  char h[65];
  sha_hex("", 0, h);
  cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  sha_hex("abc", 3, h);
  cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  sha_hex(m, strlen(m), h);
  cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, million_a_in_odd_pieces) {
  static char a[1000000];
  memset(a, 'a', sizeof a);
  rt_sha256 s;
  unsigned char d[32];
  char h[65];
  rt_sha256_init(&s);
  size_t done = 0, step = 1;
  while (done < sizeof a) {
    size_t k = step < sizeof a - done ? step : sizeof a - done;
    rt_sha256_add(&s, a + done, k);
    done += k;
    step = step * 3 % 1000 + 1;
  }
  rt_sha256_done(&s, d);
  rt_hex(d, 32, h);
  cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* ---- thread pool ------------------------------------------------------------------------------------------ */

typedef struct fill_args {
  int64_t *out;
  _Atomic int64_t *calls;
} fill_args;

/* Each index writes a value only it would write; duplicates or gaps show. */
static void fill_range(const void *args, const kn_ctx *ctx, int64_t b, int64_t e) {
  const fill_args *a = args;
  (void)ctx;
  for (int64_t i = b; i < e; i++) a->out[i] += 3 * i + 1;
  atomic_fetch_add(a->calls, 1);
}

static void run_and_check(int64_t n) {
  int64_t *out = calloc((size_t)n + 1, sizeof *out);
  _Atomic int64_t calls = 0;
  fill_args a = {out, &calls};
  kn_ctx ctx = {.dim = {n, 1, 1, 1}, .n = n, .ndim = 1};
  rt_pool_run(fill_range, &a, &ctx, n, NULL);
  int64_t sum = 0, want = 0;
  for (int64_t i = 0; i < n; i++) {
    if (out[i] != 3 * i + 1)
      cr_assert_fail("n=%lld: index %lld holds %lld", (long long)n, (long long)i,
                     (long long)out[i]);
    sum += out[i];
    want += 3 * i + 1;
  }
  cr_assert_eq(sum, want);
  cr_assert_eq(out[n], 0, "nothing past the end");
  cr_assert(n == 0 || calls >= 1);
  free(out);
}

Test(pool, exact_over_many_sizes) {
  setenv("KERN_NUM_THREADS", "4", 1);
  kern_init();
  int64_t sizes[] = {0,     1,     2,     3,     4095,   4096,    4097,
                     32767, 32768, 32769, 65536, 100000, 1000003, (1 << 22) + 7};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) run_and_check(sizes[i]);
  cr_assert_eq(rt_pool_workers(), 3, "threads - 1 workers, the caller is the last one");
}

Test(pool, single_thread_runs_inline) {
  setenv("KERN_NUM_THREADS", "1", 1);
  kern_init();
  run_and_check(1 << 20);
  cr_assert_eq(rt_pool_workers(), 0);
}

static void *launcher(void *arg) {
  int64_t n = (int64_t)(intptr_t)arg;
  for (int rep = 0; rep < 5; rep++) run_and_check(n + rep * 1001);
  return NULL;
}

Test(pool, concurrent_launches_from_16_threads) {
  setenv("KERN_NUM_THREADS", "4", 1);
  kern_init();
  pthread_t t[16];
  for (int i = 0; i < 16; i++)
    pthread_create(&t[i], NULL, launcher, (void *)(intptr_t)(50000 + i * 37000));
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
}

Test(pool, restarts_after_shutdown_and_fork) {
  setenv("KERN_NUM_THREADS", "3", 1);
  kern_init();
  run_and_check(200000);
  kern_shutdown();
  cr_assert_eq(rt_pool_workers(), 0);
  kern_init();
  run_and_check(200000);
  pid_t pid = fork();
  if (pid == 0) {
    /* The child has no workers but must still finish launches. */
    int64_t n = 300000;
    int64_t *out = calloc((size_t)n, sizeof *out);
    _Atomic int64_t calls = 0;
    fill_args a = {out, &calls};
    kn_ctx ctx = {.dim = {n, 1, 1, 1}, .n = n, .ndim = 1};
    rt_pool_run(fill_range, &a, &ctx, n, NULL);
    for (int64_t i = 0; i < n; i++)
      if (out[i] != 3 * i + 1) _exit(1);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
