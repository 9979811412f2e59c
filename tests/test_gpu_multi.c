/* test_gpu_multi.c: two real GPUs: kern's access answers against the
 * driver's own (cuDeviceCanAccessPeer, the pool attributes, cuMemPoolGetAccess),
 * CHECKED launches of one GPU's arrays on the other in both directions with
 * peer access and pool access kept apart, copies between the GPUs (every
 * dtype, strided views, ordered after the source GPU's pending work and
 * before its later work), and graphs captured on cuda:0 that read, copy from
 * and write to cuda:1's memory.
 *
 * Needs cuda:0 and cuda:1; with fewer GPUs every test skips with a line that
 * says so. Where the driver says the two GPUs can reach each other, failing
 * to enable access fails the test; where it says they cannot, the test
 * checks kern refuses with the driver's reason and skips what needs access.
 * Expected values are computed here, never by kern.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_api.h"
#include "kern.h"
#include "strided_check.h"

static const char *src =
    "kernel void put(int[] a, int base) { int i = tid(); a[i] = base + 3 * i; }\n"
    "kernel void add1(int[] a) { int i = tid(); a[i] = a[i] + 1; }\n"
    "kernel void copy(int[] dst, int[] src) { int i = tid(); dst[i] = src[i]; }\n"
    "kernel void slow(int[] a, int reps) {\n"
    "  int i = tid(); int v = i % 1000;\n"
    "  for (int k = 0; k < reps; k++) { v = (v * 7 + k) % 1000003; }\n"
    "  a[i] = v;\n"
    "}\n";

static kern_device *g0, *g1;
static const rt_cu_api *cu;

static void two_gpus_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  g0 = kern_device_get("cuda:0");
  if (!g0) cr_skip_test("no CUDA device (%s): 2-GPU suite skipped", kern_last_error());
  g1 = kern_device_get("cuda:1");
  if (!g1)
    cr_skip_test("one GPU only (%s): the 2-GPU suite needs cuda:0 and cuda:1; skipped",
                 kern_last_error());
  cu = rt_cu_load(NULL);
  cr_assert_not_null(cu, "kern found GPUs, so the driver loads");
}

static int ordinal(kern_device *d) {
  kern_device_info i;
  cr_assert_eq(kern_device_info_get(d, &i), KERN_OK);
  return i.ordinal;
}

static CUdevice cu_dev(kern_device *d) {
  CUdevice dev;
  cr_assert_eq(cu->DeviceGet(&dev, ordinal(d)), CUDA_SUCCESS);
  return dev;
}

/* The driver: can kernels on `launch` reach memory of `owner`? */
static bool driver_peer(kern_device *launch, kern_device *owner) {
  int can = -1;
  cr_assert_eq(cu->DeviceCanAccessPeer(&can, cu_dev(launch), cu_dev(owner)), CUDA_SUCCESS);
  return can == 1;
}

static bool driver_pools(kern_device *d) {
  int v = 0;
  cr_assert_eq(cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, cu_dev(d)),
               CUDA_SUCCESS);
  return v != 0;
}

/* The driver's access flags of `launch` on `owner`'s default pool (3: read-write). */
static int driver_pool_access(kern_device *owner, kern_device *launch) {
  typedef CUresult (*get_access)(int *, CUmemoryPool, const int *);
  get_access fn = (get_access)dlsym(cu->lib, "cuMemPoolGetAccess");
  cr_assert_not_null(fn, "the driver has cuMemPoolGetAccess");
  CUmemoryPool pool;
  cr_assert_eq(cu->DeviceGetDefaultMemPool(&pool, cu_dev(owner)), CUDA_SUCCESS);
  int flags = -1, location[2] = {1 /* CU_MEM_LOCATION_TYPE_DEVICE */, ordinal(launch)};
  cr_assert_eq(fn(&flags, pool, location), CUDA_SUCCESS);
  return flags;
}

static kern_module *mod;
static kern_kernel *K(const char *name) {
  if (!mod) mod = kern_module_from_source("gpu_multi.kern", src);
  cr_assert_not_null(mod, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(mod, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static void ok(kern_status st, const char *what) {
  cr_assert_eq(st, KERN_OK, "%s: %s: %s", what, kern_status_name(st), kern_last_error());
}

static kern_array *ints(kern_device *d, kern_allocator al, int64_t n) {
  kern_allocator before = kern_device_set_allocator(d, al);
  cr_assert_eq(kern_device_get_allocator(d), al, "%s: %s", kern_device_name(d), kern_last_error());
  kern_array *a = kern_array_new(d, KERN_INT32, 1, &n);
  kern_device_set_allocator(d, before);
  cr_assert_not_null(a, "%s", kern_last_error());
  return a;
}

/* a[i] == base + 3 * i for all i (after the device's work). */
static void expect_put(kern_array *a, int32_t base, const char *what) {
  int64_t n = kern_array_size(a);
  int32_t *h = malloc((size_t)n * sizeof *h);
  ok(kern_array_read(a, h, (size_t)n * sizeof *h), "kern_array_read");
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(h[i], base + 3 * (int32_t)i, "%s: [%lld] = %d, expected %d", what, (long long)i,
                 h[i], base + 3 * (int32_t)i);
  free(h);
}

/* Enabling access where the driver allows it must work; where it does not,
 * kern refuses with the driver's reason. Returns whether access is on. */
static bool enable(kern_status (*fn)(kern_device *, kern_device *, bool), kern_device *owner,
                   kern_device *launch, const char *what) {
  bool can = driver_peer(launch, owner);
  kern_status st = fn(owner, launch, true);
  if (can)
    cr_assert_eq(st, KERN_OK, "%s(%s, %s): the driver says %s can reach %s, yet: %s", what,
                 kern_device_name(owner), kern_device_name(launch), kern_device_name(launch),
                 kern_device_name(owner), kern_last_error());
  else {
    cr_assert_eq(st, KERN_ERR_UNSUPPORTED, "%s without a peer path: %s", what, kern_last_error());
    cr_assert(strstr(kern_last_error(), "cuDeviceCanAccessPeer"), "%s", kern_last_error());
  }
  return can;
}

static const char *const not_accessible =
    "kernel 'copy' parameter 'src' (#2) gets an array on %s (%s memory) that is not accessible "
    "from a launch on %s: %s";

static void expect_refused(kern_device *launch, kern_array *dst, kern_array *srca, bool pool) {
  int64_t n = kern_array_size(dst);
  kern_status st = KERN_LAUNCH(K("copy"), launch, KERN_DIM1(n), dst, srca);
  cr_assert_eq(st, KERN_ERR_ACCESS, "CHECKED launch on %s of %s's %s array: %s: %s",
               kern_device_name(launch), kern_device_name(kern_array_device(srca)),
               pool ? "pool" : "device", kern_status_name(st), kern_last_error());
  char want[512];
  snprintf(want, sizeof want, not_accessible, kern_device_name(kern_array_device(srca)),
           pool ? "CUDA_MEMPOOL" : "CUDA_DEVICE", kern_device_name(launch),
           pool ? "enable memory pool access (kern_device_enable_mempool_access) or copy it"
                : "enable peer access (kern_device_enable_peer_access) or copy it");
  cr_assert_str_eq(kern_last_error(), want);
}

/* ---- what kern answers, against the driver ---------------------------------------------------- */

Test(gpu_multi, access_answers_follow_the_drivers_peer_and_pool_attributes) {
  two_gpus_or_skip();
  kern_device *pair[2][2] = {{g0, g1}, {g1, g0}};
  for (int k = 0; k < 2; k++) {
    kern_device *launch = pair[k][0], *owner = pair[k][1];
    kern_device_info oi;
    ok(kern_device_info_get(owner, &oi), "info");
    cr_assert_eq(oi.is_mempool_supported, driver_pools(owner), "pools of %s",
                 kern_device_name(owner));
    kern_array *d = ints(owner, KERN_ALLOC_DEFAULT, 64);
    kern_array *p = oi.is_mempool_supported ? ints(owner, KERN_ALLOC_CUDA_MEMPOOL, 64) : NULL;
    cr_assert_not(kern_device_can_access(launch, owner), "peer access starts off");
    cr_assert_not(kern_can_access(launch, d));
    bool can = enable(kern_device_enable_peer_access, owner, launch, "peer access");
    cr_log_info("%s -> %s: the driver says peer access %s", kern_device_name(launch),
                kern_device_name(owner), can ? "is possible" : "is impossible");
    cr_assert_eq(kern_can_access(launch, d), can, "device memory follows peer access");
    cr_assert_eq(kern_device_can_access(launch, owner), can, "the default allocator: peer access");
    if (p) {
      cr_assert_not(kern_can_access(launch, p), "peer access does not open the pool");
      cr_assert_eq(driver_pool_access(owner, launch), 0, "the driver agrees: no pool access");
      kern_allocator before = kern_device_set_allocator(owner, KERN_ALLOC_CUDA_MEMPOOL);
      cr_assert_not(kern_device_can_access(launch, owner), "the pool allocator: pool access");
      bool pool_on = enable(kern_device_enable_mempool_access, owner, launch, "pool access");
      cr_assert_eq(kern_can_access(launch, p), pool_on);
      cr_assert_eq(kern_device_can_access(launch, owner), pool_on);
      cr_assert_eq(driver_pool_access(owner, launch), pool_on ? 3 : 0,
                   "the driver's pool access flags match kern's answer");
      kern_device_set_allocator(owner, before);
    }
    ok(kern_device_enable_peer_access(owner, launch, false), "disabling peer access");
    cr_assert_not(kern_can_access(launch, d));
    if (p) {
      cr_assert_eq(kern_can_access(launch, p), can, "pool access does not follow peer access");
      ok(kern_device_enable_mempool_access(owner, launch, false), "disabling pool access");
      cr_assert_not(kern_can_access(launch, p));
      cr_assert_eq(driver_pool_access(owner, launch), 0, "the driver's flags are off again");
      kern_array_free(p);
    }
    kern_array_free(d);
  }
}

/* ---- CHECKED launches across the GPUs ---------------------------------------------------------- */

/* launch reads owner's arrays: refused while the matching access is off,
 * right values once it is on; the other kind of access never stands in. */
static void cross_launches(kern_device *launch, kern_device *owner) {
  int64_t n = 4096;
  kern_device_info oi;
  ok(kern_device_info_get(owner, &oi), "info");
  kern_array *d = ints(owner, KERN_ALLOC_DEFAULT, n), *out = ints(launch, KERN_ALLOC_DEFAULT, n);
  kern_array *p = oi.is_mempool_supported ? ints(owner, KERN_ALLOC_CUDA_MEMPOOL, n) : NULL;
  ok(KERN_LAUNCH(K("put"), owner, KERN_DIM1(n), d, 7), "put on the owner");
  if (p) ok(KERN_LAUNCH(K("put"), owner, KERN_DIM1(n), p, 1000), "put on the owner's pool array");
  ok(kern_device_synchronize(owner), "synchronize");
  expect_refused(launch, out, d, false);
  if (p) expect_refused(launch, out, p, true);
  if (!enable(kern_device_enable_peer_access, owner, launch, "peer access")) {
    kern_array_free(d), kern_array_free(out), kern_array_free(p);
    cr_skip_test("the driver says %s cannot reach %s: refusals checked, launches skipped",
                 kern_device_name(launch), kern_device_name(owner));
  }
  ok(KERN_LAUNCH(K("copy"), launch, KERN_DIM1(n), out, d), "reading the other GPU's memory");
  ok(KERN_LAUNCH(K("add1"), launch, KERN_DIM1(n), d), "writing the other GPU's memory");
  ok(kern_device_synchronize(launch), "synchronize");
  expect_put(out, 7, "read through peer access");
  expect_put(d, 8, "written through peer access (put 7, +1)");
  if (p) {
    expect_refused(launch, out, p, true); /* peer access does not open the pool */
    ok(kern_device_enable_peer_access(owner, launch, false), "peer access off");
    enable(kern_device_enable_mempool_access, owner, launch, "pool access");
    ok(KERN_LAUNCH(K("copy"), launch, KERN_DIM1(n), out, p), "reading the other GPU's pool");
    ok(kern_device_synchronize(launch), "synchronize");
    expect_put(out, 1000, "read through pool access");
    expect_refused(launch, out, d, false); /* pool access does not open device memory */
    kern_device_enable_mempool_access(owner, launch, false);
    expect_refused(launch, out, p, true);
    kern_array_free(p);
  }
  kern_array_free(d), kern_array_free(out);
}

Test(gpu_multi, checked_launches_from_cuda0_on_cuda1s_arrays) {
  two_gpus_or_skip();
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  cross_launches(g0, g1);
}

Test(gpu_multi, checked_launches_from_cuda1_on_cuda0s_arrays) {
  two_gpus_or_skip();
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  cross_launches(g1, g0);
}

/* ---- copies between the GPUs ----------------------------------------------------------------- */

/* Strided views on both GPUs, both ways, every dtype: the CPU's bytes; with
 * peer access off (the driver stages) and on (direct). */
Test(gpu_multi, copies_between_gpus_with_views_every_dtype, .timeout = 300) {
  two_gpus_or_skip();
  for (kern_dtype dt = KERN_BOOL; dt < KERN_DTYPE_BUILTIN_END; dt++) {
    th_strided_matches_cpu(g0, g1, dt);
    th_strided_matches_cpu(g1, g0, dt);
  }
  if (!enable(kern_device_enable_peer_access, g1, g0, "peer access") ||
      !enable(kern_device_enable_peer_access, g0, g1, "peer access"))
    cr_skip_test("no peer path between the GPUs: copies checked without peer access only");
  kern_dtype some[] = {KERN_BOOL, KERN_FLOAT16, KERN_FLOAT32, KERN_VEC3, KERN_DVEC4, KERN_MAT44};
  for (size_t i = 0; i < sizeof some / sizeof *some; i++) {
    th_strided_matches_cpu(g0, g1, some[i]);
    th_strided_matches_cpu(g1, g0, some[i]);
  }
}

/* The value `slow` leaves at index i. */
static int32_t slow_value(int64_t i, int reps) {
  int64_t v = i % 1000;
  for (int k = 0; k < reps; k++) v = (v * 7 + k) % 1000003;
  return (int32_t)v;
}

/* A copy queued on cuda:0 right after a long kernel on cuda:1 wrote its
 * source sees the kernel's result (it waits for cuda:1's stream); a kernel
 * queued on cuda:1 right after a copy that reads its memory does not change
 * what the copy read (cuda:1's later work waits for the copy). No
 * synchronize in between: the order is the library's. */
Test(gpu_multi, copies_are_ordered_with_both_gpus_streams, .timeout = 120) {
  two_gpus_or_skip();
  const int64_t n = 1 << 22;
  const int reps = 3000;
  kern_array *x = ints(g1, KERN_ALLOC_DEFAULT, n), *y = ints(g0, KERN_ALLOC_DEFAULT, n),
             *z = ints(g0, KERN_ALLOC_DEFAULT, n);
  ok(KERN_LAUNCH(K("slow"), g1, KERN_DIM1(n), x, reps), "slow on cuda:1");
  ok(kern_array_copy(y, x), "copy cuda:1 -> cuda:0 right after");
  int32_t *h = malloc((size_t)n * sizeof *h);
  ok(kern_array_read(y, h, (size_t)n * sizeof *h), "read");
  for (int64_t i = 0; i < n; i += 4099)
    cr_assert_eq(h[i], slow_value(i, reps),
                 "y[%lld] = %d: the copy ran before cuda:1's kernel finished (expected %d)",
                 (long long)i, h[i], slow_value(i, reps));
  cr_assert_eq(h[n - 1], slow_value(n - 1, reps));
  ok(kern_array_copy(z, x), "copy cuda:1 -> cuda:0");
  ok(KERN_LAUNCH(K("put"), g1, KERN_DIM1(n), x, -5), "overwrite the source on cuda:1 at once");
  ok(kern_array_read(z, h, (size_t)n * sizeof *h), "read");
  for (int64_t i = 0; i < n; i += 4099)
    cr_assert_eq(h[i], slow_value(i, reps),
                 "z[%lld] = %d: cuda:1's next kernel overwrote the source before the copy read it",
                 (long long)i, h[i]);
  ok(kern_device_synchronize(g1), "synchronize");
  expect_put(x, -5, "the overwrite ran after the copy");
  free(h);
  kern_array_free(x), kern_array_free(y), kern_array_free(z);
}

/* ---- graphs across the GPUs ------------------------------------------------------------------- */

/* Access enabled before the capture: a graph on cuda:0 reads cuda:1's memory
 * in a CHECKED launch, copies windows from and to it, and replays see the
 * contents at replay time. Without access the same capture refuses the copy
 * (KERN_ERR_CAPTURE) and the launch (KERN_ERR_ACCESS) and stays usable. */
Test(gpu_multi, graph_on_cuda0_reads_and_writes_cuda1) {
  two_gpus_or_skip();
  const int64_t n = 1024, w = 100;
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  kern_array *far = ints(g1, KERN_ALLOC_DEFAULT, n), *far2 = ints(g1, KERN_ALLOC_DEFAULT, n),
             *out = ints(g0, KERN_ALLOC_DEFAULT, n), *out2 = ints(g0, KERN_ALLOC_DEFAULT, n);
  kern_array *fw = kern_array_view(far, 1, (int64_t[]){10}, &w),
             *ow = kern_array_view(out2, 1, (int64_t[]){500}, &w),
             *f2w = kern_array_view(far2, 1, (int64_t[]){900}, &w);
  cr_assert(fw && ow && f2w, "%s", kern_last_error());

  kern_status st = kern_capture_begin(g0);
  if (st == KERN_ERR_UNSUPPORTED) cr_skip_test("graph capture unavailable: %s", kern_last_error());
  ok(st, "kern_capture_begin");
  expect_refused(g0, out, far, false);
  st = kern_array_copy(ow, fw);
  cr_assert_eq(st, KERN_ERR_CAPTURE, "a copy from cuda:1 without access: %s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "kern_device_enable_peer_access(cuda:1, cuda:0, true)"), "%s",
            kern_last_error());
  kern_graph *g = NULL;
  ok(kern_capture_end(g0, &g), "the capture stays usable after refusals");
  kern_graph_free(g);

  if (!enable(kern_device_enable_peer_access, g1, g0, "peer access"))
    cr_skip_test("the driver says cuda:0 cannot reach cuda:1: refusals checked, graphs skipped");
  ok(kern_capture_begin(g0), "kern_capture_begin");
  ok(KERN_LAUNCH(K("copy"), g0, KERN_DIM1(n), out, far), "a launch reading cuda:1");
  ok(kern_array_copy(ow, fw), "a window from cuda:1");
  ok(kern_array_copy(f2w, ow), "a window into cuda:1");
  ok(kern_capture_end(g0, &g), "kern_capture_end");
  ok(KERN_LAUNCH(K("put"), g1, KERN_DIM1(n), far, 11), "contents after the capture");
  ok(kern_device_synchronize(g1), "synchronize cuda:1 (a graph orders only what it recorded)");
  ok(kern_graph_launch(g), "replay");
  ok(kern_device_synchronize(g0), "synchronize");
  expect_put(out, 11, "the replay read cuda:1's memory as it was at replay");
  int32_t h[100];
  ok(kern_array_read(ow, h, sizeof h), "read");
  for (int i = 0; i < 100; i++) cr_assert_eq(h[i], 11 + 3 * (10 + i), "out2 window [%d]", i);
  ok(kern_array_read(f2w, h, sizeof h), "read");
  for (int i = 0; i < 100; i++) cr_assert_eq(h[i], 11 + 3 * (10 + i), "far2 window [%d]", i);
  ok(KERN_LAUNCH(K("put"), g1, KERN_DIM1(n), far, 50), "new contents");
  ok(kern_device_synchronize(g1), "synchronize");
  ok(kern_graph_launch(g), "second replay");
  ok(kern_device_synchronize(g0), "synchronize");
  expect_put(out, 50, "the second replay");
  kern_graph_free(g);
  kern_array *v[] = {fw, ow, f2w, far, far2, out, out2};
  for (int i = 0; i < 7; i++) kern_array_free(v[i]);
}

/* The same with cuda:1's pool memory and pool access (peer access off). */
Test(gpu_multi, graph_on_cuda0_copies_cuda1s_pool_memory) {
  two_gpus_or_skip();
  kern_device_info i1;
  ok(kern_device_info_get(g1, &i1), "info");
  if (!i1.is_mempool_supported) cr_skip_test("cuda:1 has no memory pools");
  const int64_t n = 2048;
  kern_array *p = ints(g1, KERN_ALLOC_CUDA_MEMPOOL, n), *out = ints(g0, KERN_ALLOC_DEFAULT, n);
  ok(kern_capture_begin(g0), "kern_capture_begin");
  cr_assert_eq(kern_array_copy(out, p), KERN_ERR_CAPTURE, "no pool access yet");
  cr_assert(strstr(kern_last_error(), "kern_device_enable_mempool_access(cuda:1, cuda:0, true)"),
            "%s", kern_last_error());
  kern_graph *g = NULL;
  ok(kern_capture_end(g0, &g), "end");
  kern_graph_free(g);
  if (!enable(kern_device_enable_mempool_access, g1, g0, "pool access"))
    cr_skip_test("the driver says cuda:0 cannot reach cuda:1: refusal checked, graph skipped");
  ok(kern_capture_begin(g0), "kern_capture_begin");
  ok(kern_array_copy(out, p), "a copy from cuda:1's pool");
  ok(kern_capture_end(g0, &g), "end");
  ok(KERN_LAUNCH(K("put"), g1, KERN_DIM1(n), p, 3), "contents");
  ok(kern_device_synchronize(g1), "synchronize");
  ok(kern_graph_launch(g), "replay");
  ok(kern_device_synchronize(g0), "synchronize");
  expect_put(out, 3, "copied from the pool by the replay");
  kern_graph_free(g);
  kern_array_free(p), kern_array_free(out);
}
