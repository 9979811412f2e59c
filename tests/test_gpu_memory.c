/* test_gpu_memory.c: memory kinds, allocators, the access table, launch access
 * modes, IPC and DLPack on a real CUDA device.
 *
 * Each expectation of the access table is written here from the device's
 * reported capabilities by the contract's table (not by asking kern), so the
 * tests hold on any GPU; the comments say what the lent H100 reports (UVA 1,
 * managed 1, concurrent managed 1, pageable access 0, host native atomics 0,
 * pools 1) and so which branch runs there. Without a GPU every test skips
 * with the reason.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

#include "rt_dlpack.h"

static const char *src =
    "kernel void iota(int[] a) { int i = tid(); a[i] = i; }\n"
    "kernel void add1(int[] a) { int i = tid(); a[i] = a[i] + 1; }\n"
    "kernel void dbl(int[] a) { int i = tid(); a[i] = a[i] * 2; }\n"
    "kernel void count(int[] c) { atomic_add(&c[0], 1); }\n"
    "kernel void copy(int[] dst, int[] src) { int i = tid(); dst[i] = src[i]; }\n";

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU memory suite skipped", kern_last_error());
  return gpu;
}

static kern_device *cpu(void) { return kern_device_get("cpu"); }

static kern_device_info info_of(kern_device *d) {
  kern_device_info i;
  cr_assert_eq(kern_device_info_get(d, &i), KERN_OK);
  return i;
}

static kern_module *mod;
static kern_kernel *kernel(const char *name) {
  if (!mod) mod = kern_module_from_source("gpu_memory.kern", src);
  cr_assert_not_null(mod, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(mod, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static kern_array *alloc_with(kern_device *d, kern_allocator al, int64_t n) {
  kern_allocator before = kern_device_set_allocator(d, al);
  cr_assert_eq(kern_device_get_allocator(d), al, "%s cannot use allocator %d: %s",
               kern_device_name(d), (int)al, kern_last_error());
  kern_array *a = kern_array_new(d, KERN_INT32, 1, &n);
  kern_device_set_allocator(d, before);
  cr_assert_not_null(a, "allocation of %lld int32 on %s with allocator %d failed: %s", (long long)n,
                     kern_device_name(d), (int)al, kern_last_error());
  return a;
}

static void expect_ok(kern_status st, const char *what) {
  cr_assert_eq(st, KERN_OK, "%s: %s: %s", what, kern_status_name(st), kern_last_error());
}

static void sync_ok(kern_device *g) {
  expect_ok(kern_device_synchronize(g), "kern_device_synchronize");
}

static const char *kind_str(kern_memory_kind k) {
  static const char *const n[] = {"HOST",         "PINNED_HOST",  "CUDA_DEVICE",
                                  "CUDA_MEMPOOL", "CUDA_MANAGED", "UNKNOWN"};
  return (unsigned)k <= KERN_MEM_UNKNOWN ? n[k] : "?";
}

#define expect_kind(a, k, what)                                                                    \
  cr_assert_eq(kern_array_memory_kind(a), (k), "%s: memory kind %s, expected %s", what,            \
               kind_str(kern_array_memory_kind(a)), kind_str(k))

/* ---- kinds and allocators --------------------------------------------------------------- */

Test(gpu_memory, capabilities_are_reported) {
  kern_device *g = gpu_or_skip();
  kern_device_info i = info_of(g);
  cr_log_info(
      "cuda:0: uva %d managed %d concurrent managed %d pageable %d direct managed from host %d "
      "host native atomics %d pools %d",
      i.is_uva, i.is_managed_memory_supported, i.is_concurrent_managed_access_supported,
      i.is_cpu_memory_access_from_gpu_supported, i.is_gpu_memory_access_from_cpu_supported,
      i.is_cpu_gpu_atomic_supported, i.is_mempool_supported);
  cr_assert(i.is_uva, "64-bit Linux CUDA devices have unified addressing");
}

Test(gpu_memory, default_allocator_is_cuda_device_and_others_give_their_kinds) {
  kern_device *g = gpu_or_skip();
  kern_device_info info = info_of(g);
  cr_assert_eq(kern_device_get_allocator(g), KERN_ALLOC_DEFAULT);
  int64_t n = 1000;
  kern_array *d = kern_array_new(g, KERN_INT32, 1, &n);
  cr_assert_not_null(d, "%s", kern_last_error());
  expect_kind(d, KERN_MEM_CUDA_DEVICE,
              "KERN_ALLOC_DEFAULT on a CUDA device (documented: cuMemAlloc)");
  kern_array *e = alloc_with(g, KERN_ALLOC_CUDA_DEVICE, n);
  expect_kind(e, KERN_MEM_CUDA_DEVICE, "KERN_ALLOC_CUDA_DEVICE");
  if (info.is_mempool_supported) {
    kern_array *p = alloc_with(g, KERN_ALLOC_CUDA_MEMPOOL, n);
    expect_kind(p, KERN_MEM_CUDA_MEMPOOL, "KERN_ALLOC_CUDA_MEMPOOL");
    int64_t off = 10, len = 5;
    kern_array *v = kern_array_view(p, 1, &off, &len);
    expect_kind(v, KERN_MEM_CUDA_MEMPOOL, "a view of a pool array");
    kern_array_free(v), kern_array_free(p);
  }
  if (info.is_managed_memory_supported) {
    kern_array *m = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, n);
    expect_kind(m, KERN_MEM_CUDA_MANAGED, "KERN_ALLOC_CUDA_MANAGED");
    kern_array_free(m);
  }
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_PINNED), KERN_ALLOC_DEFAULT);
  cr_assert(strstr(kern_last_error(), "KERN_ALLOC_PINNED"), "%s", kern_last_error());
  cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED), KERN_ALLOC_DEFAULT,
               "PINNED on the CPU with a driver present: %s", kern_last_error());
  kern_array *pin = kern_array_new(cpu(), KERN_INT32, 1, &n);
  cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_DEFAULT), KERN_ALLOC_PINNED);
  cr_assert_not_null(pin, "%s", kern_last_error());
  expect_kind(pin, KERN_MEM_PINNED_HOST, "KERN_ALLOC_PINNED on the CPU");
  kern_array_free(pin), kern_array_free(d), kern_array_free(e);
}

Test(gpu_memory, wrapped_pointers_are_classified_by_the_driver) {
  kern_device *g = gpu_or_skip();
  kern_device_info info = info_of(g);
  int64_t n = 64, m = 16;
  /* Interior pointers are not in kern's registry: the driver answers. */
  kern_array *d = alloc_with(g, KERN_ALLOC_CUDA_DEVICE, n);
  kern_array *w = kern_array_wrap((int32_t *)kern_array_data(d) + 8, g, KERN_INT32, 1, &m, NULL);
  cr_assert_not_null(w, "%s", kern_last_error());
  expect_kind(w, KERN_MEM_CUDA_DEVICE, "an interior pointer of cuMemAlloc memory");
  kern_array_free(w);
  cr_assert_null(kern_array_wrap((int32_t *)kern_array_data(d) + 8, cpu(), KERN_INT32, 1, &m, NULL),
                 "device memory declared on the CPU must be refused");
  cr_assert(strstr(kern_last_error(), "CUDA device memory of cuda:0, not of cpu"), "%s",
            kern_last_error());
  /* Base pointers: the registry answers. */
  w = kern_array_wrap(kern_array_data(d), g, KERN_INT32, 1, &n, NULL);
  expect_kind(w, KERN_MEM_CUDA_DEVICE, "kern's own device allocation");
  kern_array_free(w);
  kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED);
  kern_array *p = kern_array_new(cpu(), KERN_INT32, 1, &n);
  kern_device_set_allocator(cpu(), KERN_ALLOC_DEFAULT);
  w = kern_array_wrap((int32_t *)kern_array_data(p) + 8, cpu(), KERN_INT32, 1, &m, NULL);
  expect_kind(w, KERN_MEM_PINNED_HOST, "an interior pointer of cuMemAllocHost memory");
  kern_array_free(w);
  w = kern_array_wrap((int32_t *)kern_array_data(p) + 8, g, KERN_INT32, 1, &m, NULL);
  expect_kind(w, KERN_MEM_PINNED_HOST, "pinned memory declared on the GPU");
  kern_array_free(w);
  if (info.is_managed_memory_supported) {
    kern_array *man = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, n);
    w = kern_array_wrap((int32_t *)kern_array_data(man) + 8, g, KERN_INT32, 1, &m, NULL);
    expect_kind(w, KERN_MEM_CUDA_MANAGED, "an interior pointer of cuMemAllocManaged memory");
    kern_array_free(w), kern_array_free(man);
  }
  if (info.is_mempool_supported) {
    kern_array *pool = alloc_with(g, KERN_ALLOC_CUDA_MEMPOOL, n);
    w = kern_array_wrap((int32_t *)kern_array_data(pool) + 8, g, KERN_INT32, 1, &m, NULL);
    expect_kind(w, KERN_MEM_CUDA_MEMPOOL,
                "an interior pointer of a pool allocation (MEMPOOL_HANDLE)");
    kern_array_free(w), kern_array_free(pool);
  }
  /* Pageable memory the driver does not know. */
  int32_t *heap = malloc(64 * sizeof *heap);
  w = kern_array_wrap(heap, cpu(), KERN_INT32, 1, &n, NULL);
  expect_kind(w, KERN_MEM_UNKNOWN, "malloc'd memory");
  kern_array_free(w);
  free(heap);
  kern_array_free(d), kern_array_free(p);
}

/* ---- the access table, row by row (expectations from the reported capabilities) ------------- */

Test(gpu_memory, access_table_rows) {
  kern_device *g = gpu_or_skip();
  kern_device_info i = info_of(g);
  int64_t n = 16;
  kern_array *host = kern_array_new(cpu(), KERN_INT32, 1, &n);
  cr_assert(kern_can_access(cpu(), host), "HOST on the CPU");
  cr_assert_eq(kern_can_access(g, host), i.is_cpu_memory_access_from_gpu_supported,
               "HOST on the GPU follows pageable access (H100: not accessible)");
  kern_array *pin = alloc_with(cpu(), KERN_ALLOC_PINNED, n);
  cr_assert(kern_can_access(cpu(), pin), "PINNED_HOST on the CPU");
  cr_assert_eq(kern_can_access(g, pin), i.is_uva,
               "PINNED_HOST on the GPU follows UVA (H100: accessible)");
  kern_array *dev = kern_array_new(g, KERN_INT32, 1, &n);
  cr_assert_not(kern_can_access(cpu(), dev), "CUDA_DEVICE on the CPU: never");
  cr_assert(kern_can_access(g, dev), "CUDA_DEVICE on its own device");
  if (i.is_mempool_supported) {
    kern_array *pool = alloc_with(g, KERN_ALLOC_CUDA_MEMPOOL, n);
    cr_assert_not(kern_can_access(cpu(), pool), "CUDA_MEMPOOL on the CPU: never");
    cr_assert(kern_can_access(g, pool), "CUDA_MEMPOOL on its own device");
    kern_array_free(pool);
  }
  if (i.is_managed_memory_supported) {
    kern_array *man = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, n);
    cr_assert_eq(kern_can_access(cpu(), man),
                 i.is_concurrent_managed_access_supported ||
                     i.is_gpu_memory_access_from_cpu_supported,
                 "CUDA_MANAGED on the CPU (H100: accessible, concurrent managed access)");
    cr_assert(kern_can_access(g, man), "CUDA_MANAGED on its own device");
    kern_array_free(man);
  }
  int32_t *heap = calloc(16, sizeof *heap);
  kern_array *unk = kern_array_wrap(heap, cpu(), KERN_INT32, 1, &n, NULL);
  cr_assert_not(kern_can_access(cpu(), unk), "UNKNOWN: not verified");
  cr_assert_not(kern_can_access(g, unk), "UNKNOWN: not verified");
  cr_assert_eq(kern_device_can_access(g, cpu()), i.is_cpu_memory_access_from_gpu_supported);
  cr_assert_not(kern_device_can_access(cpu(), g));
  cr_assert(kern_device_can_access(g, g));
  kern_array_free(unk), free(heap);
  kern_array_free(host), kern_array_free(pin), kern_array_free(dev);
}

Test(gpu_memory, peer_and_pool_access_between_two_gpus) {
  kern_device *g0 = gpu_or_skip(), *g1 = kern_device_get("cuda:1");
  if (!g1) cr_skip_test("one GPU only: peer and pool access rows need cuda:1");
  int64_t n = 256;
  kern_array *d0 = kern_array_new(g0, KERN_INT32, 1, &n),
             *d1 = kern_array_new(g1, KERN_INT32, 1, &n);
  cr_assert_not(kern_can_access(g1, d0), "peer access starts off");
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  cr_assert_eq(KERN_LAUNCH(kernel("copy"), g1, KERN_DIM1(n), d1, d0), KERN_ERR_ACCESS);
  kern_status st = kern_device_enable_peer_access(g0, g1, true);
  if (st != KERN_OK) cr_skip_test("these GPUs cannot reach each other: %s", kern_last_error());
  cr_assert(kern_can_access(g1, d0));
  expect_ok(KERN_LAUNCH(kernel("iota"), g0, KERN_DIM1(n), d0), "iota on cuda:0");
  sync_ok(g0);
  expect_ok(KERN_LAUNCH(kernel("copy"), g1, KERN_DIM1(n), d1, d0),
            "cuda:1 reading cuda:0 with peer access");
  sync_ok(g1);
  int32_t got[256];
  expect_ok(kern_array_read(d1, got, sizeof got), "read");
  for (int i = 0; i < 256; i++) cr_assert_eq(got[i], i, "peer copy: [%d] = %d", i, got[i]);
  kern_device_enable_peer_access(g0, g1, false);
  cr_assert_not(kern_can_access(g1, d0));
  if (info_of(g0).is_mempool_supported) {
    kern_array *p0 = alloc_with(g0, KERN_ALLOC_CUDA_MEMPOOL, n);
    cr_assert_not(kern_can_access(g1, p0));
    expect_ok(kern_device_enable_mempool_access(g0, g1, true), "pool access");
    cr_assert(kern_can_access(g1, p0));
    expect_ok(KERN_LAUNCH(kernel("copy"), g1, KERN_DIM1(n), d1, p0),
              "cuda:1 reading cuda:0's pool");
    sync_ok(g1);
    kern_array_free(p0);
  }
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_array_free(d0), kern_array_free(d1);
}

/* ---- mixed CPU/GPU use ----------------------------------------------------------------------- */

Test(gpu_memory, managed_arrays_in_cpu_and_gpu_launches) {
  kern_device *g = gpu_or_skip();
  kern_device_info i = info_of(g);
  if (!i.is_managed_memory_supported) cr_skip_test("cuda:0 has no managed memory");
  int64_t n = 1 << 16;
  kern_array *m = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, n);
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  if (!(i.is_concurrent_managed_access_supported || i.is_gpu_memory_access_from_cpu_supported)) {
    cr_assert_eq(KERN_LAUNCH(kernel("iota"), cpu(), KERN_DIM1(n), m), KERN_ERR_ACCESS);
    cr_skip_test(
        "cuda:0 cannot share managed memory with CPU launches; CHECKED refused it as it should");
  }
  expect_ok(KERN_LAUNCH(kernel("iota"), cpu(), KERN_DIM1(n), m), "CPU iota on managed memory");
  expect_ok(KERN_LAUNCH(kernel("add1"), g, KERN_DIM1(n), m), "GPU add1 on managed memory");
  sync_ok(g);
  expect_ok(KERN_LAUNCH(kernel("dbl"), cpu(), KERN_DIM1(n), m), "CPU dbl on managed memory");
  const int32_t *p = kern_array_data(m);
  for (int64_t k = 0; k < n; k++)
    cr_assert_eq(p[k], (int32_t)(2 * (k + 1)),
                 "managed a[%lld] after CPU iota, GPU add1, CPU dbl: %d, expected %d", (long long)k,
                 p[k], (int)(2 * (k + 1)));
  expect_ok(KERN_LAUNCH(kernel("add1"), g, KERN_DIM1(n), m), "GPU add1 again");
  sync_ok(g);
  int32_t last;
  int64_t off = n - 1, one = 1;
  kern_array *v = kern_array_view(m, 1, &off, &one);
  expect_ok(kern_array_read(v, &last, sizeof last), "read a managed view");
  cr_assert_eq(last, (int32_t)(2 * n + 1));
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_array_free(v), kern_array_free(m);
}

Test(gpu_memory, pinned_arrays_written_by_the_gpu_and_read_on_the_cpu) {
  kern_device *g = gpu_or_skip();
  if (!info_of(g).is_uva) cr_skip_test("cuda:0 has no unified addressing");
  int64_t n = 1 << 16;
  kern_array *p = alloc_with(cpu(), KERN_ALLOC_PINNED, n);
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  expect_ok(KERN_LAUNCH(kernel("iota"), g, KERN_DIM1(n), p), "GPU iota on pinned host memory");
  expect_ok(KERN_LAUNCH(kernel("add1"), g, KERN_DIM1(n), p), "GPU add1 on pinned host memory");
  sync_ok(g);
  const int32_t *h = kern_array_data(p);
  for (int64_t k = 0; k < n; k++)
    cr_assert_eq(h[k], (int32_t)(k + 1), "pinned a[%lld] read by the CPU: %d, expected %lld",
                 (long long)k, h[k], (long long)(k + 1));
  expect_ok(KERN_LAUNCH(kernel("dbl"), cpu(), KERN_DIM1(n), p), "CPU dbl on the same pinned array");
  cr_assert_eq(h[100], 202);
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_array_free(p);
}

/* An unpinned host array on the H100 would fault the GPU: CHECKED must refuse
 * before anything runs, and the device must still work afterwards. */
Test(gpu_memory, checked_refuses_unpinned_host_arrays_before_launching) {
  kern_device *g = gpu_or_skip();
  if (info_of(g).is_cpu_memory_access_from_gpu_supported)
    cr_skip_test(
        "cuda:0 reports pageable memory access (HMM/ATS): host arrays are accessible there");
  int64_t n = 1024;
  kern_array *h = kern_array_new(cpu(), KERN_INT32, 1, &n),
             *d = kern_array_new(g, KERN_INT32, 1, &n);
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  kern_status st = KERN_LAUNCH(kernel("copy"), g, KERN_DIM1(n), d, h);
  cr_assert_eq(st, KERN_ERR_ACCESS, "a HOST array on a GPU launch: %s: %s", kern_status_name(st),
               kern_last_error());
  const char *msg = kern_last_error();
  cr_assert(
      strstr(msg,
             "kernel 'copy' parameter 'src' (#2) gets an array on cpu (HOST memory) that is not "
             "accessible from a launch on cuda:0"),
      "message: %s", msg);
  cr_assert(strstr(msg, "KERN_ALLOC_PINNED"), "the message suggests pinned memory: %s", msg);
  /* Nothing ran: the device is healthy and the next launch works. */
  expect_ok(KERN_LAUNCH(kernel("iota"), g, KERN_DIM1(n), d), "the next launch");
  sync_ok(g);
  int32_t got[1024];
  expect_ok(kern_array_read(d, got, sizeof got), "read");
  cr_assert_eq(got[1023], 1023);
  kern_set_launch_access_mode(KERN_ACCESS_STRICT);
  cr_assert_eq(KERN_LAUNCH(kernel("copy"), g, KERN_DIM1(n), d, h), KERN_ERR_ACCESS);
  cr_assert(strstr(kern_last_error(), "STRICT"), "%s", kern_last_error());
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_array_free(h), kern_array_free(d);
}

Test(gpu_memory, strict_refuses_what_checked_allows) {
  kern_device *g = gpu_or_skip();
  int64_t n = 256;
  kern_array *p = alloc_with(cpu(), KERN_ALLOC_PINNED, n),
             *d = kern_array_new(g, KERN_INT32, 1, &n);
  kern_set_launch_access_mode(KERN_ACCESS_STRICT);
  cr_assert_eq(KERN_LAUNCH(kernel("copy"), g, KERN_DIM1(n), d, p), KERN_ERR_ACCESS);
  cr_assert(strstr(kern_last_error(),
                   "(PINNED_HOST memory) that does not live on the device of a launch on cuda:0"),
            "%s", kern_last_error());
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  expect_ok(KERN_LAUNCH(kernel("copy"), g, KERN_DIM1(n), d, p),
            "CHECKED: pinned memory on the GPU");
  sync_ok(g);
  for (int mode = KERN_ACCESS_RELAXED; mode <= KERN_ACCESS_CHECKED; mode++) {
    kern_set_launch_access_mode((kern_access_mode)mode);
    cr_assert_eq(KERN_LAUNCH(kernel("copy"), cpu(), KERN_DIM1(n), p, d), KERN_ERR_ACCESS,
                 "device memory on a CPU launch must be refused in mode %d", mode);
  }
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_array_free(p), kern_array_free(d);
}

static int warnings;
static char last_warning[2048];
static void on_warning(const char *msg, void *ud) {
  (void)ud;
  warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", msg);
}

/* CPU and GPU atomics on one managed allocation. With host-native atomics they
 * may overlap; without (the H100), CHECKED explains once and the two sides
 * take turns. */
Test(gpu_memory, cpu_and_gpu_atomics_on_one_allocation) {
  kern_device *g = gpu_or_skip();
  kern_device_info i = info_of(g);
  if (!i.is_managed_memory_supported || !i.is_concurrent_managed_access_supported)
    cr_skip_test("cuda:0 cannot share managed memory with the CPU");
  kern_array *c = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, 1);
  kern_set_warning_handler(on_warning, NULL);
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  const int64_t ngpu = 1 << 20, ncpu = 100000;
  expect_ok(KERN_LAUNCH(kernel("count"), g, KERN_DIM1(ngpu), c), "GPU atomics");
  if (!i.is_cpu_gpu_atomic_supported) {
    cr_assert_eq(warnings, 1,
                 "CHECKED explains GPU atomics on CPU-shared memory without host-native atomics");
    cr_assert(strstr(last_warning, "is_cpu_gpu_atomic_supported"), "%s", last_warning);
    sync_ok(g); /* take turns */
  }
  expect_ok(KERN_LAUNCH(kernel("count"), cpu(), KERN_DIM1(ncpu), c), "CPU atomics");
  sync_ok(g);
  cr_assert_eq(warnings, i.is_cpu_gpu_atomic_supported ? 0 : 2,
               "one explanation per (kernel, parameter, devices)");
  int32_t total = *(int32_t *)kern_array_data(c);
  cr_assert_eq(total, (int32_t)(ngpu + ncpu), "no lost updates: %d, expected %lld", total,
               (long long)(ngpu + ncpu));
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  kern_array_free(c);
}

/* ---- capture, IPC, DLPack ---------------------------------------------------------------------- */

Test(gpu_memory, managed_allocation_during_capture_fails) {
  kern_device *g = gpu_or_skip();
  if (!info_of(g).is_managed_memory_supported) cr_skip_test("cuda:0 has no managed memory");
  kern_allocator before = kern_device_set_allocator(g, KERN_ALLOC_CUDA_MANAGED);
  kern_status st = kern_capture_begin(g);
  if (st == KERN_ERR_UNSUPPORTED) cr_skip_test("graph capture unavailable: %s", kern_last_error());
  expect_ok(st, "kern_capture_begin");
  int64_t n = 64;
  cr_assert_null(kern_array_new(g, KERN_INT32, 1, &n),
                 "managed allocation during capture must fail");
  cr_assert_eq(kern_last_status(), KERN_ERR_CAPTURE, "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "allocate managed arrays before kern_capture_begin"), "%s",
            kern_last_error());
  kern_graph *graph = NULL;
  expect_ok(kern_capture_end(g, &graph), "the capture is still usable after the refusal");
  kern_graph_free(graph);
  kern_array *a = kern_array_new(g, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "after capture: %s", kern_last_error());
  expect_kind(a, KERN_MEM_CUDA_MANAGED, "managed allocation after the capture");
  kern_device_set_allocator(g, before);
  kern_array_free(a);
}

Test(gpu_memory, ipc_handles) {
  kern_device *g = gpu_or_skip();
  kern_device_info i = info_of(g);
  int64_t n = 4096, off = 1, len = 8;
  kern_array *d = kern_array_new(g, KERN_INT32, 1, &n), *d2 = kern_array_new(g, KERN_INT32, 1, &n);
  unsigned char h[64], h_again[64], h2[64], zero[64] = {0};
  expect_ok(kern_array_ipc_handle(d, h), "cuIpcGetMemHandle of a CUDA_DEVICE array");
  expect_ok(kern_array_ipc_handle(d, h_again), "a second handle");
  expect_ok(kern_array_ipc_handle(d2, h2), "another array's handle");
  cr_assert(memcmp(h, zero, 64) != 0, "the handle is not empty");
  cr_assert(memcmp(h, h_again, 64) == 0, "one allocation, one handle");
  cr_assert(memcmp(h, h2, 64) != 0, "two allocations, two handles");
  typedef struct refusal {
    kern_array *a;
    const char *why;
  } refusal;
  refusal refused[5];
  int nr = 0;
  refused[nr++] = (refusal){kern_array_view(d, 1, &off, &len), "view"};
  refused[nr++] =
      (refusal){kern_array_wrap(kern_array_data(d), g, KERN_INT32, 1, &n, NULL), "external"};
  refused[nr++] = (refusal){alloc_with(cpu(), KERN_ALLOC_PINNED, n), "pinned"};
  if (i.is_managed_memory_supported)
    refused[nr++] = (refusal){alloc_with(g, KERN_ALLOC_CUDA_MANAGED, n), "managed"};
  if (i.is_mempool_supported)
    refused[nr++] = (refusal){alloc_with(g, KERN_ALLOC_CUDA_MEMPOOL, n), "memory pool"};
  for (int k = 0; k < nr; k++) {
    cr_assert_eq(kern_array_ipc_handle(refused[k].a, h), KERN_ERR_UNSUPPORTED, "%s array: %s",
                 refused[k].why, kern_last_error());
    cr_assert(strstr(kern_last_error(), refused[k].why), "'%s' lacks '%s'", kern_last_error(),
              refused[k].why);
    kern_array_free(refused[k].a);
  }
  kern_array_free(d), kern_array_free(d2);
}

Test(gpu_memory, dlpack_with_cuda_memory) {
  kern_device *g = gpu_or_skip();
  int64_t n = 1000;
  kern_array *d = kern_array_new(g, KERN_INT32, 1, &n);
  expect_ok(KERN_LAUNCH(kernel("iota"), g, KERN_DIM1(n), d), "iota");
  sync_ok(g);
  DLManagedTensor *t = kern_array_to_dlpack(d);
  cr_assert_not_null(t, "%s", kern_last_error());
  cr_assert_eq(t->dl_tensor.device.device_type, kDLCUDA);
  cr_assert_eq(t->dl_tensor.device.device_id, 0);
  cr_assert_eq(t->dl_tensor.data, kern_array_data(d));
  kern_array_free(d);
  kern_array *b = kern_array_from_dlpack(t);
  cr_assert_not_null(b, "%s", kern_last_error());
  cr_assert_eq(kern_array_device(b), g);
  expect_kind(b, KERN_MEM_CUDA_DEVICE, "a kDLCUDA tensor of kern's memory");
  expect_ok(KERN_LAUNCH(kernel("add1"), g, KERN_DIM1(n), b), "a launch on the imported tensor");
  int32_t got[1000];
  expect_ok(kern_array_read(b, got, sizeof got), "read");
  cr_assert_eq(got[999], 1000);
  kern_array_free(b);
  if (info_of(g).is_managed_memory_supported) {
    kern_array *m = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, n);
    t = kern_array_to_dlpack(m);
    cr_assert_eq(t->dl_tensor.device.device_type, kDLCUDAManaged);
    kern_array *mb = kern_array_from_dlpack(t);
    expect_kind(mb, KERN_MEM_CUDA_MANAGED, "a kDLCUDAManaged tensor");
    cr_assert_eq(kern_array_device(mb), g);
    kern_array_free(m), kern_array_free(mb);
  }
}
