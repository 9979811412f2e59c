/* test_memory.c: memory kinds, allocators, the access table and the launch
 * access modes, on the CPU (runs without a GPU).
 *
 * GPU rows of the access table are exercised with stand-in CUDA devices:
 * backends whose memory is ordinary host memory but which report CUDA memory
 * kinds and chosen capabilities, record peer and pool access switches like
 * the real backend, and count launches instead of running them. So every
 * decision of device.c and launch.c is checked here against the table of the
 * memory-access contract, and the expected answers are written out by hand,
 * never computed by the code under test. The real CUDA side is
 * test_gpu_memory.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kern.h"
#include "core.h"
#include "fake_gpu.h"
#include "strided_check.h"

static void setup(void) {
  th_default_cache_dir("memory");
  cr_assert_eq(kern_init(), KERN_OK);
}

TestSuite(kinds, .init = setup);
TestSuite(allocators, .init = setup);
TestSuite(access, .init = setup);
TestSuite(modes, .init = setup, .timeout = 300);
TestSuite(ipc, .init = setup);
TestSuite(strided, .init = setup);
TestSuite(capture_copies, .init = setup);

static kern_device *cpu(void) { return kern_device_get("cpu"); }

static kern_array *new1(kern_device *d, kern_dtype dt, int64_t n) {
  kern_array *a = kern_array_new(d, dt, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  return a;
}

/* An array of d allocated with allocator al (d's allocator is restored). */
static kern_array *alloc_with(kern_device *d, kern_allocator al, int64_t n) {
  kern_allocator before = kern_device_set_allocator(d, al);
  cr_assert_eq(kern_device_get_allocator(d), al, "%s", kern_last_error());
  kern_array *a = new1(d, KERN_INT32, n);
  kern_device_set_allocator(d, before);
  return a;
}

static const char *kind_str(kern_memory_kind k) {
  static const char *const n[] = {"HOST",         "PINNED_HOST",  "CUDA_DEVICE",
                                  "CUDA_MEMPOOL", "CUDA_MANAGED", "UNKNOWN"};
  return (unsigned)k <= KERN_MEM_UNKNOWN ? n[k] : "?";
}

#define expect_kind(a, k)                                                                          \
  cr_assert_eq(kern_array_memory_kind(a), (k), "kind %s, expected %s",                             \
               kind_str(kern_array_memory_kind(a)), kind_str(k))

/* ---- a driver stand-in for pointer classification and pinned memory ------------------- */

static int hook_calls;
static const void *hook_ptr; /* the one pointer the stand-in driver knows */
static kern_memory_kind hook_kind;
static int hook_ordinal;

static bool fake_pointer_kind(const void *p, kern_memory_kind *kind, int *ordinal) {
  hook_calls++;
  if (p != hook_ptr) return false;
  *kind = hook_kind;
  *ordinal = hook_ordinal;
  return true;
}

static int pinned_allocs, pinned_frees;
static void *fake_pinned_alloc(size_t n) {
  pinned_allocs++;
  void *p = NULL;
  return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}
static void fake_pinned_free(void *p) {
  pinned_frees++;
  free(p);
}

/* ---- memory kinds ------------------------------------------------------------------- */

Test(kinds, cpu_arrays_are_host_and_views_report_the_owners_kind) {
  int64_t shape[2] = {4, 6}, off[2] = {1, 2}, sub[2] = {2, 3}, off2[2] = {1, 1}, sub2[2] = {1, 2};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 2, shape);
  kern_array *e = kern_array_empty(cpu(), KERN_FLOAT64, 2, shape);
  expect_kind(a, KERN_MEM_HOST);
  expect_kind(e, KERN_MEM_HOST);
  cr_assert_eq((uintptr_t)kern_array_data(a) % 64, 0, "HOST arrays are 64-byte aligned");
  cr_assert_eq((uintptr_t)kern_array_data(e) % 64, 0);
  kern_array *v = kern_array_view(a, 2, off, sub);
  kern_array *vv = kern_array_view(v, 2, off2, sub2);
  expect_kind(v, KERN_MEM_HOST);
  expect_kind(vv, KERN_MEM_HOST);
  cr_assert_eq(kern_array_memory_kind(NULL), KERN_MEM_UNKNOWN);
  kern_array_free(vv), kern_array_free(v), kern_array_free(a), kern_array_free(e);
}

Test(kinds, gpu_allocators_give_their_kinds_and_views_keep_them) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  kern_allocator als[3] = {KERN_ALLOC_CUDA_DEVICE, KERN_ALLOC_CUDA_MEMPOOL,
                           KERN_ALLOC_CUDA_MANAGED};
  kern_memory_kind kinds[3] = {KERN_MEM_CUDA_DEVICE, KERN_MEM_CUDA_MEMPOOL, KERN_MEM_CUDA_MANAGED};
  for (int i = 0; i < 3; i++) {
    kern_array *a = alloc_with(g, als[i], 16);
    int64_t off = 3, n = 5;
    kern_array *v = kern_array_view(a, 1, &off, &n);
    expect_kind(a, kinds[i]);
    expect_kind(v, kinds[i]);
    kern_array_free(a);
    expect_kind(v, kinds[i]); /* the view outlives its owner and still reports its kind */
    kern_array_free(v);
  }
}

Test(kinds, a_foreign_host_pointer_is_unknown) {
  /* Pageable memory kern did not allocate: neither the registry nor a driver
   * can say what it is (with a driver it reads as unregistered). */
  static float buf[32];
  int64_t n = 32;
  kern_array *w = kern_array_wrap(buf, cpu(), KERN_FLOAT32, 1, &n, NULL);
  cr_assert_not_null(w, "%s", kern_last_error());
  expect_kind(w, KERN_MEM_UNKNOWN);
  kern_array_free(w);
  void *heap = malloc(256);
  n = 64;
  w = kern_array_wrap(heap, cpu(), KERN_INT32, 1, &n, NULL);
  expect_kind(w, KERN_MEM_UNKNOWN);
  kern_array_free(w);
  free(heap);
}

Test(kinds, kerns_own_pointers_answer_from_the_registry_without_the_driver) {
  kern_device_count(); /* the GPUs probed (as th_fake_gpu_new does): the driver's turn */
  rt_host.pointer_kind = fake_pointer_kind;
  hook_ptr = NULL;
  kern_array *a = new1(cpu(), KERN_INT32, 100);
  int64_t n = 100, n2 = 10;
  kern_array *w = kern_array_wrap(kern_array_data(a), cpu(), KERN_INT32, 1, &n, NULL);
  expect_kind(w, KERN_MEM_HOST);
  cr_assert_eq(hook_calls, 0, "a base pointer kern allocated must not reach the driver");
  /* An interior pointer is not in the registry: the driver is asked. */
  kern_array *inner =
      kern_array_wrap((int32_t *)kern_array_data(a) + 10, cpu(), KERN_INT32, 1, &n2, NULL);
  cr_assert_eq(hook_calls, 1);
  expect_kind(inner, KERN_MEM_UNKNOWN);
  /* Wrapping kern's own managed allocation of a GPU keeps its kind. */
  kern_device *g = th_fake_gpu_new(TH_H100);
  kern_array *m = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, 8);
  int64_t n8 = 8;
  kern_array *wm = kern_array_wrap(kern_array_data(m), g, KERN_INT32, 1, &n8, NULL);
  expect_kind(wm, KERN_MEM_CUDA_MANAGED);
  cr_assert_eq(hook_calls, 1);
  rt_host.pointer_kind = NULL;
  kern_array_free(wm), kern_array_free(m), kern_array_free(inner), kern_array_free(w),
      kern_array_free(a);
}

Test(kinds, the_driver_classifies_foreign_pointers) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  rt_host.pointer_kind = fake_pointer_kind;
  static char buf[1024];
  int64_t n = 16;
  struct {
    kern_memory_kind kind;
    int ord;
    kern_device *dev;
  } cases[] = {
      {KERN_MEM_PINNED_HOST, -1, cpu()},
      {KERN_MEM_PINNED_HOST, -1, g}, /* pinned host memory may be declared on a GPU */
      {KERN_MEM_CUDA_DEVICE, g->ordinal, g},
      {KERN_MEM_CUDA_MEMPOOL, g->ordinal, g},
      {KERN_MEM_CUDA_MANAGED, g->ordinal, g},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hook_ptr = buf, hook_kind = cases[i].kind, hook_ordinal = cases[i].ord;
    kern_array *w = kern_array_wrap(buf, cases[i].dev, KERN_INT32, 1, &n, NULL);
    cr_assert_not_null(w, "case %zu: %s", i, kern_last_error());
    expect_kind(w, cases[i].kind);
    kern_array_free(w);
  }
  rt_host.pointer_kind = NULL;
}

Test(kinds, gpu_memory_declared_on_another_device_is_refused) {
  kern_device *g = th_fake_gpu_new(TH_H100), *h = th_fake_gpu_new(TH_H100);
  rt_host.pointer_kind = fake_pointer_kind;
  static char buf[256];
  int64_t n = 16;
  hook_ptr = buf, hook_ordinal = g->ordinal;
  kern_memory_kind gpu_kinds[3] = {KERN_MEM_CUDA_DEVICE, KERN_MEM_CUDA_MEMPOOL,
                                   KERN_MEM_CUDA_MANAGED};
  for (int i = 0; i < 3; i++) {
    hook_kind = gpu_kinds[i];
    cr_assert_null(kern_array_wrap(buf, cpu(), KERN_INT32, 1, &n, NULL), "%s on cpu",
                   kind_str(hook_kind));
    cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(kern_last_error(), g->name) && strstr(kern_last_error(), "not of cpu"), "%s",
              kern_last_error());
    cr_assert_null(kern_array_wrap(buf, h, KERN_INT32, 1, &n, NULL));
    cr_assert(strstr(kern_last_error(), h->name), "%s", kern_last_error());
  }
  /* kern's own device allocation too (the registry knows its device). */
  rt_host.pointer_kind = NULL;
  kern_array *d = new1(g, KERN_INT32, 16);
  cr_assert_null(kern_array_wrap(kern_array_data(d), cpu(), KERN_INT32, 1, &n, NULL));
  cr_assert(strstr(kern_last_error(), "CUDA device memory of"), "%s", kern_last_error());
  kern_array_free(d);
}

Test(kinds, every_capability_is_false_on_the_cpu) {
  kern_device_info i;
  memset(&i, 0xff, sizeof i);
  cr_assert_eq(kern_device_info_get(cpu(), &i), KERN_OK);
  cr_assert_not(i.is_uva || i.is_mempool_supported || i.is_managed_memory_supported ||
                i.is_concurrent_managed_access_supported ||
                i.is_cpu_memory_access_from_gpu_supported ||
                i.is_gpu_memory_access_from_cpu_supported || i.is_cpu_gpu_atomic_supported);
}

/* ---- allocators ----------------------------------------------------------------------- */

Test(allocators, set_returns_the_previous_one_and_refusals_change_nothing) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  cr_assert_eq(kern_device_get_allocator(g), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_CUDA_MANAGED), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_CUDA_MEMPOOL), KERN_ALLOC_CUDA_MANAGED);
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_CUDA_DEVICE), KERN_ALLOC_CUDA_MEMPOOL);
  /* PINNED belongs to the CPU device. */
  kern_clear_error();
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_PINNED), KERN_ALLOC_CUDA_DEVICE);
  cr_assert_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "KERN_ALLOC_PINNED") &&
                strstr(kern_last_error(), "CPU device"),
            "%s", kern_last_error());
  cr_assert_eq(kern_device_get_allocator(g), KERN_ALLOC_CUDA_DEVICE);
  cr_assert_eq(kern_device_set_allocator(g, (kern_allocator)42), KERN_ALLOC_CUDA_DEVICE);
  cr_assert_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
  cr_assert_eq(kern_device_set_allocator(NULL, KERN_ALLOC_DEFAULT), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  /* The CPU refuses CUDA allocators and says why. */
  for (int a = KERN_ALLOC_CUDA_DEVICE; a <= KERN_ALLOC_CUDA_MANAGED; a++) {
    kern_clear_error();
    cr_assert_eq(kern_device_set_allocator(cpu(), (kern_allocator)a), KERN_ALLOC_DEFAULT);
    cr_assert_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
    cr_assert(strstr(kern_last_error(), "CUDA allocators belong to CUDA devices"), "%s",
              kern_last_error());
  }
  cr_assert_eq(kern_device_get_allocator(cpu()), KERN_ALLOC_DEFAULT);
}

Test(allocators, capabilities_decide_what_a_gpu_accepts) {
  kern_device_info caps = {.is_uva = true};
  kern_device *g = th_fake_gpu_new(caps);
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_CUDA_MEMPOOL), KERN_ALLOC_DEFAULT);
  cr_assert(strstr(kern_last_error(), "memory pools"), "%s", kern_last_error());
  cr_assert_eq(kern_device_set_allocator(g, KERN_ALLOC_CUDA_MANAGED), KERN_ALLOC_DEFAULT);
  cr_assert(strstr(kern_last_error(), "managed memory"), "%s", kern_last_error());
  cr_assert_eq(kern_device_get_allocator(g), KERN_ALLOC_DEFAULT);
}

Test(allocators, pinned_on_the_cpu_needs_the_driver) {
  if (rt_host.pinned_alloc) {
    /* A driver with a GPU is present: PINNED works for real. */
    cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED), KERN_ALLOC_DEFAULT, "%s",
                 kern_last_error());
    kern_array *p = new1(cpu(), KERN_INT32, 1000);
    expect_kind(p, KERN_MEM_PINNED_HOST);
    kern_array_free(p);
    kern_device_set_allocator(cpu(), KERN_ALLOC_DEFAULT);
    return;
  }
  kern_clear_error();
  cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED), KERN_ALLOC_DEFAULT);
  cr_assert_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "pinned host memory needs the CUDA driver and a GPU"), "%s",
            kern_last_error());
  cr_assert_eq(kern_device_get_allocator(cpu()), KERN_ALLOC_DEFAULT);
  kern_array *a = new1(cpu(), KERN_INT32, 10);
  expect_kind(a, KERN_MEM_HOST);
  kern_array_free(a);
}

Test(allocators, pinned_arrays_go_through_the_drivers_allocator) {
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = fake_pinned_free;
  cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED), KERN_ALLOC_DEFAULT, "%s",
               kern_last_error());
  int64_t n = 300;
  kern_array *p = kern_array_new(cpu(), KERN_INT32, 1, &n);
  cr_assert_not_null(p, "%s", kern_last_error());
  expect_kind(p, KERN_MEM_PINNED_HOST);
  cr_assert_eq(pinned_allocs, 1);
  int32_t zeros[300] = {0}, got[300], vals[300];
  cr_assert_eq(kern_array_read(p, got, sizeof got), KERN_OK);
  cr_assert_arr_eq(got, zeros, sizeof got, "kern_array_new zeroes pinned memory");
  for (int i = 0; i < 300; i++) vals[i] = i * i;
  cr_assert_eq(kern_array_write(p, vals, sizeof vals), KERN_OK);
  cr_assert_eq(((int32_t *)kern_array_data(p))[17], 289);
  int64_t off = 5, m = 10;
  kern_array *v = kern_array_view(p, 1, &off, &m);
  expect_kind(v, KERN_MEM_PINNED_HOST);
  kern_array_free(p);
  cr_assert_eq(pinned_frees, 0, "the view keeps the memory");
  kern_array_free(v);
  cr_assert_eq(pinned_frees, 1);
  cr_assert_eq(kern_device_set_allocator(cpu(), KERN_ALLOC_DEFAULT), KERN_ALLOC_PINNED);
  kern_array *h = new1(cpu(), KERN_INT32, 4);
  expect_kind(h, KERN_MEM_HOST);
  cr_assert_eq(pinned_allocs, 1);
  kern_array_free(h);
}

/* ---- the access table ------------------------------------------------------------------ */

Test(access, host_row) {
  kern_device_info hmm = TH_H100;
  hmm.is_cpu_memory_access_from_gpu_supported = true;
  kern_device *g = th_fake_gpu_new(TH_H100), *h = th_fake_gpu_new(hmm);
  kern_array *a = new1(cpu(), KERN_INT32, 8);
  cr_assert(kern_can_access(cpu(), a));
  cr_assert_not(kern_can_access(g, a),
                "pageable memory needs is_cpu_memory_access_from_gpu_supported");
  cr_assert(kern_can_access(h, a));
  kern_array_free(a);
}

Test(access, pinned_row) {
  kern_device_info no_uva = TH_H100;
  no_uva.is_uva = false;
  kern_device *g = th_fake_gpu_new(TH_H100), *n = th_fake_gpu_new(no_uva);
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = fake_pinned_free;
  kern_array *p = alloc_with(cpu(), KERN_ALLOC_PINNED, 8);
  expect_kind(p, KERN_MEM_PINNED_HOST);
  cr_assert(kern_can_access(cpu(), p));
  cr_assert(kern_can_access(g, p), "pinned memory is usable with unified addressing");
  cr_assert_not(kern_can_access(n, p), "pinned memory without unified addressing is not verified");
  kern_array_free(p);
}

Test(access, device_row_follows_peer_access) {
  kern_device *o = th_fake_gpu_new(TH_H100), *d = th_fake_gpu_new(TH_H100);
  kern_array *a = new1(o, KERN_INT32, 8);
  expect_kind(a, KERN_MEM_CUDA_DEVICE);
  cr_assert_not(kern_can_access(cpu(), a));
  cr_assert(kern_can_access(o, a));
  cr_assert_not(kern_can_access(d, a));
  cr_assert_eq(kern_device_enable_peer_access(o, d, true), KERN_OK);
  cr_assert(kern_can_access(d, a));
  cr_assert_not(kern_can_access(cpu(), a));
  /* Peer access is one-way: o's launches still cannot use d's memory. */
  kern_array *b = new1(d, KERN_INT32, 8);
  cr_assert_not(kern_can_access(o, b));
  /* Pool access does not open device memory. */
  cr_assert_eq(kern_device_enable_peer_access(o, d, false), KERN_OK);
  cr_assert_eq(kern_device_enable_mempool_access(o, d, true), KERN_OK);
  cr_assert_not(kern_can_access(d, a));
  kern_array_free(a), kern_array_free(b);
}

Test(access, mempool_row_follows_pool_access) {
  kern_device *o = th_fake_gpu_new(TH_H100), *d = th_fake_gpu_new(TH_H100);
  kern_array *a = alloc_with(o, KERN_ALLOC_CUDA_MEMPOOL, 8);
  expect_kind(a, KERN_MEM_CUDA_MEMPOOL);
  cr_assert_not(kern_can_access(cpu(), a));
  cr_assert(kern_can_access(o, a));
  cr_assert_not(kern_can_access(d, a));
  cr_assert_eq(kern_device_enable_peer_access(o, d, true), KERN_OK);
  cr_assert_not(kern_can_access(d, a), "peer access does not open pool memory");
  cr_assert_eq(kern_device_enable_mempool_access(o, d, true), KERN_OK);
  cr_assert(kern_can_access(d, a));
  cr_assert_eq(kern_device_enable_mempool_access(o, d, false), KERN_OK);
  cr_assert_not(kern_can_access(d, a));
  kern_array_free(a);
}

Test(access, managed_row) {
  kern_device_info plain = {.is_uva = true,
                            .is_managed_memory_supported = true}; /* no concurrent access */
  kern_device_info direct = plain;
  direct.is_gpu_memory_access_from_cpu_supported = true;
  kern_device_info none = {.is_uva = true};
  kern_device *h = th_fake_gpu_new(TH_H100), *h2 = th_fake_gpu_new(TH_H100),
              *p = th_fake_gpu_new(plain), *dr = th_fake_gpu_new(direct),
              *n = th_fake_gpu_new(none);
  kern_array *mh = alloc_with(h, KERN_ALLOC_CUDA_MANAGED, 8);
  kern_array *mp = alloc_with(p, KERN_ALLOC_CUDA_MANAGED, 8);
  kern_array *md = alloc_with(dr, KERN_ALLOC_CUDA_MANAGED, 8);
  /* CPU launches: the owner's concurrent access or direct host access. */
  cr_assert(kern_can_access(cpu(), mh));
  cr_assert_not(kern_can_access(cpu(), mp));
  cr_assert(kern_can_access(cpu(), md));
  /* GPU launches: managed support, and the owner itself or concurrent access. */
  cr_assert(kern_can_access(h, mh));
  cr_assert(kern_can_access(h2, mh),
            "concurrent managed access reaches another device's managed memory");
  cr_assert(kern_can_access(p, mp), "its own managed memory");
  cr_assert_not(kern_can_access(p, mh), "another device's managed memory needs concurrent access");
  cr_assert_not(kern_can_access(n, mh), "no managed memory support");
  cr_assert(kern_can_access(h, mp));
  kern_array_free(mh), kern_array_free(mp), kern_array_free(md);
}

Test(access, unknown_row_is_never_verified) {
  kern_device_info all = TH_H100;
  all.is_cpu_memory_access_from_gpu_supported = all.is_gpu_memory_access_from_cpu_supported = true;
  kern_device *g = th_fake_gpu_new(all);
  static int buf[8];
  int64_t n = 8;
  kern_array *w = kern_array_wrap(buf, cpu(), KERN_INT32, 1, &n, NULL);
  kern_array *wg = kern_array_wrap(buf, g, KERN_INT32, 1, &n, NULL);
  expect_kind(w, KERN_MEM_UNKNOWN);
  cr_assert_not(kern_can_access(cpu(), w), "UNKNOWN means not verified, even on its own device");
  cr_assert_not(kern_can_access(g, w));
  cr_assert_not(kern_can_access(g, wg));
  cr_assert_not(kern_can_access(cpu(), wg));
  cr_assert_not(kern_can_access(NULL, w));
  kern_array_free(w), kern_array_free(wg);
}

Test(access, views_decide_like_their_owner) {
  kern_device *o = th_fake_gpu_new(TH_H100), *d = th_fake_gpu_new(TH_H100);
  kern_array *a = new1(o, KERN_INT32, 8), *m = alloc_with(o, KERN_ALLOC_CUDA_MANAGED, 8);
  int64_t off = 2, n = 3;
  kern_array *va = kern_array_view(a, 1, &off, &n), *vm = kern_array_view(m, 1, &off, &n);
  cr_assert_not(kern_can_access(d, va));
  cr_assert(kern_can_access(cpu(), vm));
  kern_device_enable_peer_access(o, d, true);
  cr_assert(kern_can_access(d, va));
  kern_array_free(va), kern_array_free(vm), kern_array_free(a), kern_array_free(m);
}

Test(access, device_level_rule) {
  kern_device_info hmm = TH_H100;
  hmm.is_cpu_memory_access_from_gpu_supported = true;
  kern_device *o = th_fake_gpu_new(TH_H100), *d = th_fake_gpu_new(TH_H100),
              *h = th_fake_gpu_new(hmm);
  cr_assert(kern_device_can_access(cpu(), cpu()));
  cr_assert_not(kern_device_can_access(o, cpu()), "CPU memory from a GPU: pageable access");
  cr_assert(kern_device_can_access(h, cpu()));
  cr_assert_not(kern_device_can_access(cpu(), o), "CPU on a GPU's memory: false");
  kern_device_set_allocator(o, KERN_ALLOC_CUDA_MANAGED);
  cr_assert_not(kern_device_can_access(cpu(), o),
                "still false with the managed allocator (the coarse rule)");
  kern_device_set_allocator(o, KERN_ALLOC_DEFAULT);
  cr_assert(kern_device_can_access(o, o));
  /* GPU on GPU follows the owner's current allocator. */
  cr_assert_not(kern_device_can_access(d, o));
  kern_device_enable_peer_access(o, d, true);
  cr_assert(kern_device_can_access(d, o), "default allocator: peer access");
  kern_device_set_allocator(o, KERN_ALLOC_CUDA_MEMPOOL);
  cr_assert_not(kern_device_can_access(d, o), "pool allocator: pool access, which is off");
  kern_device_enable_mempool_access(o, d, true);
  cr_assert(kern_device_can_access(d, o));
  kern_device_enable_peer_access(o, d, false);
  cr_assert(kern_device_can_access(d, o));
  cr_assert_not(kern_device_can_access(NULL, o));
}

Test(access, switches_are_for_cuda_devices_only) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  cr_assert_eq(kern_device_enable_peer_access(cpu(), g, true), KERN_ERR_UNSUPPORTED);
  cr_assert_eq(kern_device_enable_mempool_access(g, cpu(), true), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "cpu"), "%s", kern_last_error());
}

/* ---- launch access modes ------------------------------------------------------------------- */

static const char *mode_src = "kernel void add(int[] dst, int[] src) {\n"
                              "    int i = tid();\n"
                              "    dst[i] = dst[i] + src[i];\n"
                              "}\n"
                              "kernel void count(int[] c, int[] plain) {\n"
                              "    atomic_add(&c[0], 1);\n"
                              "    plain[tid()] = 7;\n"
                              "}\n"
                              "void bump(int[] a, int k) {\n"
                              "    atomic_add(&a[k], 1);\n"
                              "}\n"
                              "kernel void via_helper(int[] c) {\n"
                              "    bump(c, 0);\n"
                              "}\n";

static kern_module *mode_module(void) {
  kern_module *m = kern_module_from_source("modes.kern", mode_src);
  cr_assert_not_null(m, "%s", kern_last_error());
  return m;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static int warnings;
static char last_warning[2048];
static void on_warning(const char *msg, void *ud) {
  (void)ud;
  warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", msg);
}

static void expect_access(kern_status st, const char *needle) {
  cr_assert_eq(st, KERN_ERR_ACCESS, "got %s: %s", kern_status_name(st), kern_last_error());
  cr_assert(strstr(kern_last_error(), needle), "'%s' lacks '%s'", kern_last_error(), needle);
}

static void expect_ok(kern_status st) {
  cr_assert_eq(st, KERN_OK, "%s: %s", kern_status_name(st), kern_last_error());
}

static void set_mode(kern_access_mode m) { kern_set_launch_access_mode(m); }

Test(modes, setting_the_mode) {
  cr_assert_eq(kern_get_launch_access_mode(), KERN_ACCESS_RELAXED, "RELAXED is the default");
  cr_assert_eq(kern_set_launch_access_mode(KERN_ACCESS_CHECKED), KERN_ACCESS_RELAXED);
  cr_assert_eq(kern_set_launch_access_mode(KERN_ACCESS_STRICT), KERN_ACCESS_CHECKED);
  cr_assert_eq(kern_set_launch_access_mode((kern_access_mode)9), KERN_ACCESS_STRICT);
  cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_get_launch_access_mode(), KERN_ACCESS_STRICT);
}

Test(modes, relaxed_checks_only_types_but_never_lets_the_cpu_touch_gpu_memory) {
  kern_module *m = mode_module();
  kern_kernel *add = kernel(m, "add");
  kern_device *g = th_fake_gpu_new(TH_H100);
  kern_array *h = new1(cpu(), KERN_INT32, 4), *dev = new1(g, KERN_INT32, 4);
  kern_array *man = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, 4);
  int32_t ones[4] = {1, 1, 1, 1}, got[4];
  kern_array_write(man, ones, sizeof ones);
  set_mode(KERN_ACCESS_RELAXED);
  /* A GPU launch on pageable host memory the GPU cannot reach: RELAXED does
   * not look (the hardware decides); the stand-in just counts it. */
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), h, h));
  cr_assert_eq(th_fake_of(g)->launches, 1);
  /* Managed memory on the CPU: runs (and really adds). */
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, man));
  kern_array_read(h, got, sizeof got);
  cr_assert_arr_eq(got, ones, sizeof got);
  /* Device memory on a CPU launch would crash the process: refused even here. */
  expect_access(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, dev),
                "parameter 'src' (#2) gets an array on");
  cr_assert(
      strstr(kern_last_error(), "(CUDA_DEVICE memory) that is not accessible from a launch on cpu"),
      "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "copy it to a CPU array first"), "%s", kern_last_error());
  /* Type checks still apply. */
  kern_array *f = new1(cpu(), KERN_FLOAT32, 4);
  cr_assert_eq(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, f), KERN_ERR_INVALID_ARGUMENT);
  kern_array_free(f), kern_array_free(h), kern_array_free(dev), kern_array_free(man);
  kern_module_free(m);
}

Test(modes, strict_wants_every_array_on_the_launch_device) {
  kern_module *m = mode_module();
  kern_kernel *add = kernel(m, "add");
  kern_device *g = th_fake_gpu_new(TH_H100);
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = fake_pinned_free;
  kern_array *h = new1(cpu(), KERN_INT32, 4), *pin = alloc_with(cpu(), KERN_ALLOC_PINNED, 4);
  kern_array *dev = new1(g, KERN_INT32, 4), *dev2 = new1(g, KERN_INT32, 4);
  kern_array *man = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, 4);
  set_mode(KERN_ACCESS_STRICT);
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, pin));
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), dev, dev2));
  cr_assert_eq(th_fake_of(g)->launches, 1);
  /* Accessible by the table, but not on the launch device. */
  expect_access(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, man), "STRICT");
  cr_assert(strstr(kern_last_error(), "does not live on the device of a launch on cpu"), "%s",
            kern_last_error());
  expect_access(KERN_LAUNCH(add, g, KERN_DIM1(4), dev, pin),
                "parameter 'src' (#2) gets an array on cpu (PINNED_HOST memory)");
  expect_access(KERN_LAUNCH(add, g, KERN_DIM1(4), h, dev), "parameter 'dst' (#1)");
  cr_assert_eq(th_fake_of(g)->launches, 1, "refused launches never reach the device");
  kern_array_free(h), kern_array_free(pin), kern_array_free(dev), kern_array_free(dev2),
      kern_array_free(man);
  kern_module_free(m);
}

Test(modes, checked_follows_the_table_and_refuses_before_launching) {
  kern_module *m = mode_module();
  kern_kernel *add = kernel(m, "add");
  kern_device *g = th_fake_gpu_new(TH_H100), *o = th_fake_gpu_new(TH_H100);
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = fake_pinned_free;
  kern_array *h = new1(cpu(), KERN_INT32, 4), *pin = alloc_with(cpu(), KERN_ALLOC_PINNED, 4);
  kern_array *dg = new1(g, KERN_INT32, 4), *dO = new1(o, KERN_INT32, 4);
  kern_array *pool = alloc_with(o, KERN_ALLOC_CUDA_MEMPOOL, 4),
             *man = alloc_with(o, KERN_ALLOC_CUDA_MANAGED, 4);
  kern_set_warning_handler(on_warning, NULL);
  set_mode(KERN_ACCESS_CHECKED);
  /* Unpinned host memory on the TH_H100: refused with every part of the message. */
  char want[256];
  snprintf(
      want, sizeof want,
      "kernel 'add' parameter 'src' (#2) gets an array on cpu (HOST memory) that is not accessible from a "
      "launch on %s",
      g->name);
  expect_access(KERN_LAUNCH(add, g, KERN_DIM1(4), dg, h), want);
  cr_assert(strstr(kern_last_error(), "KERN_ALLOC_PINNED"), "%s", kern_last_error());
  cr_assert_eq(th_fake_of(g)->launches, 0, "the GPU never saw the launch");
  /* Pinned memory is fine with unified addressing; so is managed memory. */
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), dg, pin));
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), dg, man));
  cr_assert_eq(th_fake_of(g)->launches, 2);
  /* Another GPU's device memory: refused until peer access is on. */
  snprintf(want, sizeof want,
           "gets an array on %s (CUDA_DEVICE memory) that is not accessible from a launch on %s",
           o->name, g->name);
  expect_access(KERN_LAUNCH(add, g, KERN_DIM1(4), dg, dO), want);
  cr_assert(strstr(kern_last_error(), "kern_device_enable_peer_access"), "%s", kern_last_error());
  kern_device_enable_peer_access(o, g, true);
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), dg, dO));
  /* Pool memory: refused until pool access is on (peer access does not count). */
  expect_access(KERN_LAUNCH(add, g, KERN_DIM1(4), pool, dg), "(CUDA_MEMPOOL memory)");
  cr_assert(strstr(kern_last_error(), "kern_device_enable_mempool_access"), "%s",
            kern_last_error());
  kern_device_enable_mempool_access(o, g, true);
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), pool, dg));
  cr_assert_eq(th_fake_of(g)->launches, 4);
  /* The CPU: managed memory of a device with concurrent access runs, device memory does not. */
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, man));
  expect_access(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, pool), "(CUDA_MEMPOOL memory)");
  cr_assert_eq(warnings, 0, "known kinds never warn");
  set_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  kern_array_free(h), kern_array_free(pin), kern_array_free(dg), kern_array_free(dO);
  kern_array_free(pool), kern_array_free(man);
  kern_module_free(m);
}

Test(modes, checked_managed_memory_without_concurrent_access) {
  kern_device_info plain = {.is_uva = true, .is_managed_memory_supported = true};
  kern_module *m = mode_module();
  kern_kernel *add = kernel(m, "add");
  kern_device *p = th_fake_gpu_new(plain);
  kern_array *h = new1(cpu(), KERN_INT32, 4), *man = alloc_with(p, KERN_ALLOC_CUDA_MANAGED, 4);
  set_mode(KERN_ACCESS_CHECKED);
  expect_access(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), h, man), "(CUDA_MANAGED memory)");
  cr_assert(
      strstr(kern_last_error(), "neither concurrent managed access nor direct managed access"),
      "%s", kern_last_error());
  set_mode(KERN_ACCESS_RELAXED);
  kern_array_free(h), kern_array_free(man);
  kern_module_free(m);
}

Test(modes, checked_warns_once_per_kernel_parameter_and_device_pair_for_unknown_memory) {
  kern_module *m = mode_module(), *m2 = mode_module();
  kern_kernel *add = kernel(m, "add"), *add2 = kernel(m2, "add");
  kern_device *g = th_fake_gpu_new(TH_H100);
  int32_t b1[4] = {1, 2, 3, 4}, b2[4] = {10, 20, 30, 40};
  int64_t n = 4;
  kern_array *u1 = kern_array_wrap(b1, cpu(), KERN_INT32, 1, &n, NULL);
  kern_array *u2 = kern_array_wrap(b2, cpu(), KERN_INT32, 1, &n, NULL);
  kern_array *ug = kern_array_wrap(b2, g, KERN_INT32, 1, &n, NULL);
  kern_array *dg = new1(g, KERN_INT32, 4);
  expect_kind(u1, KERN_MEM_UNKNOWN);
  kern_set_warning_handler(on_warning, NULL);
  /* RELAXED and STRICT never warn. */
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, u2));
  set_mode(KERN_ACCESS_STRICT);
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, u2));
  cr_assert_eq(warnings, 0);
  set_mode(KERN_ACCESS_CHECKED);
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, u2));
  cr_assert_eq(warnings, 2, "one per parameter");
  for (int i = 0; i < 5; i++) expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, u2));
  cr_assert_eq(warnings, 2, "once per (kernel, parameter, source device, launch device)");
  /* The launches ran: b1 = b1 + 3 * b2 (RELAXED, STRICT) + 6 * b2 (CHECKED). */
  cr_assert_eq(b1[0], 1 + 8 * 10);
  cr_assert_eq(b1[3], 4 + 8 * 40);
  cr_assert(strstr(last_warning, "kernel 'add' parameter 'src' (#2)") &&
                strstr(last_warning, "unknown provenance") && strstr(last_warning, "on cpu") &&
                strstr(last_warning, "launch on cpu"),
            "%s", last_warning);
  /* Another kernel (same name, another module): warns again. */
  expect_ok(KERN_LAUNCH(add2, cpu(), KERN_DIM1(4), u1, u2));
  cr_assert_eq(warnings, 4);
  /* Another launch device: warns again, and the launch goes ahead. */
  expect_ok(KERN_LAUNCH(add, g, KERN_DIM1(4), dg, u2));
  cr_assert_eq(warnings, 5);
  cr_assert(strstr(last_warning, "launch on cuda:"), "%s", last_warning);
  cr_assert_eq(th_fake_of(g)->launches, 1);
  /* Another source device (the pointer declared on the GPU), on the CPU: warns again. */
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, ug));
  cr_assert_eq(warnings, 6);
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, ug));
  cr_assert_eq(warnings, 6);
  set_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  kern_array_free(u1), kern_array_free(u2), kern_array_free(ug), kern_array_free(dg);
  kern_module_free(m), kern_module_free(m2);
}

/* CHECKED and CPU/GPU atomics: a kernel that applies atomics to memory both
 * sides can use, on a GPU without host-native atomics, is explained once per
 * (kernel, parameter, devices) and still launched. */
Test(modes, checked_explains_cpu_gpu_atomics_without_host_native_atomics) {
  kern_device_info atomic = TH_H100;
  atomic.is_cpu_gpu_atomic_supported = true;
  kern_module *m = mode_module();
  kern_kernel *count = kernel(m, "count"), *helper = kernel(m, "via_helper"),
              *add = kernel(m, "add");
  kern_device *g = th_fake_gpu_new(TH_H100), *a = th_fake_gpu_new(atomic);
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = fake_pinned_free;
  kern_array *man = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, 64),
             *mana = alloc_with(a, KERN_ALLOC_CUDA_MANAGED, 64);
  kern_array *plain = new1(cpu(), KERN_INT32, 64), *pin = alloc_with(cpu(), KERN_ALLOC_PINNED, 64);
  kern_array *dev = new1(g, KERN_INT32, 64), *dev2 = new1(g, KERN_INT32, 64);
  kern_set_warning_handler(on_warning, NULL);
  set_mode(KERN_ACCESS_RELAXED);
  expect_ok(KERN_LAUNCH(count, cpu(), KERN_DIM1(50), man, plain));
  cr_assert_eq(warnings, 0, "only CHECKED explains");
  set_mode(KERN_ACCESS_CHECKED);
  /* CPU atomics on managed memory of a GPU without host-native atomics. */
  expect_ok(KERN_LAUNCH(count, cpu(), KERN_DIM1(50), man, plain));
  cr_assert_eq(warnings, 1);
  cr_assert(strstr(last_warning, "kernel 'count' parameter 'c' (#1)") &&
                strstr(last_warning, "CUDA_MANAGED") &&
                strstr(last_warning, "is_cpu_gpu_atomic_supported") &&
                strstr(last_warning, "must not overlap"),
            "%s", last_warning);
  expect_ok(KERN_LAUNCH(count, cpu(), KERN_DIM1(50), man, plain));
  cr_assert_eq(warnings, 1, "once");
  int32_t c;
  kern_array *first = NULL;
  int64_t z = 0, one = 1;
  first = kern_array_view(man, 1, &z, &one);
  kern_array_read(first, &c, sizeof c);
  cr_assert_eq(c, 150, "the launches ran and their atomics counted");
  /* Atomics through a helper function count too. */
  expect_ok(KERN_LAUNCH(helper, cpu(), KERN_DIM1(10), man));
  cr_assert_eq(warnings, 2);
  cr_assert(strstr(last_warning, "via_helper"), "%s", last_warning);
  /* A parameter without atomics, or a kernel without them, says nothing. */
  expect_ok(KERN_LAUNCH(count, cpu(), KERN_DIM1(50), plain, man));
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(50), plain, man));
  cr_assert_eq(warnings, 2);
  /* A device with host-native atomics: nothing to explain. */
  expect_ok(KERN_LAUNCH(count, cpu(), KERN_DIM1(50), mana, plain));
  expect_ok(KERN_LAUNCH(count, a, KERN_DIM1(50), mana, mana));
  cr_assert_eq(warnings, 2);
  /* GPU atomics on pinned host memory and on managed memory: explained. */
  expect_ok(KERN_LAUNCH(count, g, KERN_DIM1(50), pin, dev));
  cr_assert_eq(warnings, 3);
  cr_assert(strstr(last_warning, "PINNED_HOST"), "%s", last_warning);
  expect_ok(KERN_LAUNCH(count, g, KERN_DIM1(50), man, dev));
  cr_assert_eq(warnings, 4);
  /* GPU atomics on its own device memory: only the GPU can use it. */
  expect_ok(KERN_LAUNCH(count, g, KERN_DIM1(50), dev2, dev));
  cr_assert_eq(warnings, 4);
  cr_assert_eq(th_fake_of(g)->launches, 3);
  set_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  kern_array_free(first), kern_array_free(man), kern_array_free(mana), kern_array_free(plain);
  kern_array_free(pin), kern_array_free(dev), kern_array_free(dev2);
  kern_module_free(m);
}

Test(modes, managed_allocation_during_capture_fails) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  kern_status st = kern_capture_begin(g);
  if (st == KERN_ERR_UNSUPPORTED)
    cr_skip_test("graph capture is not available: %s", kern_last_error());
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_assert(rt_capture_active(g));
  kern_device_set_allocator(g, KERN_ALLOC_CUDA_MANAGED);
  int64_t n = 16;
  cr_assert_null(kern_array_new(g, KERN_INT32, 1, &n));
  cr_assert_eq(kern_last_status(), KERN_ERR_CAPTURE);
  cr_assert(strstr(kern_last_error(), "before kern_capture_begin"), "%s", kern_last_error());
  kern_graph *graph = NULL;
  kern_capture_end(g, &graph);
  kern_graph_free(graph);
  kern_array *a = kern_array_new(g, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "after the capture managed allocation works again: %s", kern_last_error());
  expect_kind(a, KERN_MEM_CUDA_MANAGED);
  kern_array_free(a);
}

/* ---- IPC ------------------------------------------------------------------------------- */

static int ipc_calls, ipc_ordinal;
static const void *ipc_base;
static kern_status fake_ipc(int ordinal, const void *base, void *out) {
  ipc_calls++;
  ipc_ordinal = ordinal, ipc_base = base;
  memset(out, 0xab, 64);
  return KERN_OK;
}

static void expect_unsupported(const kern_array *a, const char *needle) {
  unsigned char h[64];
  cr_assert_eq(kern_array_ipc_handle(a, h), KERN_ERR_UNSUPPORTED, "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), needle), "'%s' lacks '%s'", kern_last_error(), needle);
}

Test(ipc, only_cuda_device_owner_arrays_have_handles) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  rt_host.ipc_handle = fake_ipc;
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = fake_pinned_free;
  kern_array *dev = new1(g, KERN_INT32, 16), *man = alloc_with(g, KERN_ALLOC_CUDA_MANAGED, 16);
  kern_array *pool = alloc_with(g, KERN_ALLOC_CUDA_MEMPOOL, 16),
             *host = new1(cpu(), KERN_INT32, 16);
  kern_array *pin = alloc_with(cpu(), KERN_ALLOC_PINNED, 16);
  int64_t off = 1, n = 4;
  kern_array *view = kern_array_view(dev, 1, &off, &n);
  kern_array *wrapped = kern_array_wrap(kern_array_data(dev), g, KERN_INT32, 1, &n, NULL);
  expect_kind(wrapped, KERN_MEM_CUDA_DEVICE);
  unsigned char h[64] = {0}, want[64];
  memset(want, 0xab, sizeof want);
  cr_assert_eq(kern_array_ipc_handle(dev, h), KERN_OK, "%s", kern_last_error());
  cr_assert_arr_eq(h, want, 64);
  cr_assert_eq(ipc_base, kern_array_data(dev), "the allocation's base");
  cr_assert_eq(ipc_ordinal, g->ordinal);
  expect_unsupported(man, "managed");
  expect_unsupported(pool, "memory pool");
  expect_unsupported(host, "pageable");
  expect_unsupported(pin, "pinned");
  expect_unsupported(view, "view");
  expect_unsupported(wrapped, "external memory");
  cr_assert_eq(ipc_calls, 1, "refusals never reach the driver");
  cr_assert_eq(kern_array_ipc_handle(NULL, h), KERN_ERR_INVALID_ARGUMENT);
  cr_assert_eq(kern_array_ipc_handle(dev, NULL), KERN_ERR_INVALID_ARGUMENT);
  rt_host.ipc_handle = NULL;
  expect_unsupported(dev, "cuIpcGetMemHandle");
  kern_array_free(view), kern_array_free(wrapped), kern_array_free(dev), kern_array_free(man);
  kern_array_free(pool), kern_array_free(host), kern_array_free(pin);
}

/* The modes apply while a capture records: the check runs once, when the
 * launch is recorded, and a refused launch leaves the capture usable. */
Test(modes, checks_run_when_a_launch_is_recorded) {
  kern_module *m = mode_module();
  kern_kernel *add = kernel(m, "add");
  kern_device *g = th_fake_gpu_new(TH_H100);
  int32_t b1[4] = {1, 2, 3, 4}, b2[4] = {10, 20, 30, 40};
  int64_t n = 4;
  kern_array *u1 = kern_array_wrap(b1, cpu(), KERN_INT32, 1, &n, NULL);
  kern_array *u2 = kern_array_wrap(b2, cpu(), KERN_INT32, 1, &n, NULL);
  kern_array *dev = new1(g, KERN_INT32, 4);
  kern_set_warning_handler(on_warning, NULL);
  set_mode(KERN_ACCESS_CHECKED);
  kern_status st = kern_capture_begin(cpu());
  if (st == KERN_ERR_UNSUPPORTED)
    cr_skip_test("graph capture is not available: %s", kern_last_error());
  expect_ok(st);
  expect_access(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, dev), "(CUDA_DEVICE memory)");
  expect_ok(KERN_LAUNCH(add, cpu(), KERN_DIM1(4), u1, u2));
  cr_assert_eq(warnings, 2, "the UNKNOWN arrays warned when the launch was recorded");
  cr_assert_eq(b1[0], 1, "recorded, not run");
  kern_graph *graph = NULL;
  expect_ok(kern_capture_end(cpu(), &graph));
  expect_ok(kern_graph_launch(graph));
  expect_ok(kern_graph_launch(graph));
  cr_assert_eq(b1[0], 21, "two replays of the one recorded launch");
  cr_assert_eq(warnings, 2, "replays do not check again");
  kern_graph_free(graph);
  set_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  kern_array_free(u1), kern_array_free(u2), kern_array_free(dev);
  kern_module_free(m);
}

/* ---- strided views on GPUs: the core's copy plans -------------------------------------------- */

/* Every dtype, on one stand-in GPU and across two: the same bytes as the CPU
 * (before the plans, a strided device array failed with KERN_ERR_UNSUPPORTED). */
Test(strided, views_on_gpus_give_the_cpus_bytes_for_every_dtype) {
  kern_device *g = th_fake_gpu_new(TH_H100), *h = th_fake_gpu_new(TH_H100);
  for (kern_dtype dt = KERN_BOOL; dt < KERN_DTYPE_BUILTIN_END; dt++) {
    th_strided_matches_cpu(g, g, dt);
    th_strided_matches_cpu(g, h, dt);
    th_strided_matches_cpu(h, g, dt);
  }
  cr_assert_gt(th_fake_of(g)->copies, 0, "the GPU's own copy op moved the elements");
  cr_assert_gt(th_fake_of(h)->copies, 0);
}

/* A window of a 2-D array is one block (one 2-D driver copy); a 3-D window
 * one block per outer index; a one-element-wide column rows of one element. */
Test(strided, a_window_moves_as_one_2d_copy_per_block) {
  kern_device *g = th_fake_gpu_new(TH_H100);
  int64_t s2[2] = {4, 4}, s3[3] = {3, 4, 5};
  kern_array *a = kern_array_new(g, KERN_FLOAT32, 2, s2),
             *b = kern_array_new(g, KERN_FLOAT32, 3, s3);
  cr_assert(a && b, "%s", kern_last_error());
  kern_array *w = kern_array_view(a, 2, (int64_t[]){1, 1}, (int64_t[]){2, 2});
  kern_array *w3 = kern_array_view(b, 3, (int64_t[]){1, 1, 1}, (int64_t[]){2, 2, 3});
  kern_array *col = kern_array_view(a, 2, (int64_t[]){0, 3}, (int64_t[]){4, 1});
  th_fake_gpu *f = th_fake_of(g);
  float v = 2.5f, got[16];
  int c0 = f->copies;
  int64_t r0 = f->rows;
  cr_assert_eq(kern_array_fill(w, &v), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(f->copies - c0, 1, "one copy op");
  cr_assert_eq(f->rows - r0, 2, "two rows of two floats");
  c0 = f->copies, r0 = f->rows;
  cr_assert_eq(kern_array_fill(w3, &v), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(f->copies - c0, 1);
  cr_assert_eq(f->rows - r0, 4, "2 blocks of 2 rows of 3 floats");
  float four[4] = {1, 2, 3, 4};
  cr_assert_eq(kern_array_write(col, four, sizeof four), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(a, got, sizeof got), KERN_OK);
  float want[16] = {0, 0, 0, 1, 0, 2.5f, 2.5f, 2, 0, 2.5f, 2.5f, 3, 0, 0, 0, 4};
  for (int i = 0; i < 16; i++) cr_assert_eq(got[i], want[i], "a[%d] = %g", i, (double)got[i]);
  kern_array_free(w), kern_array_free(w3), kern_array_free(col);
  kern_array_free(a), kern_array_free(b);
}

/* ---- copies inside a CUDA-like capture -------------------------------------------------------- */

/* A copy between two GPUs inside a capture on g runs on g (its stream records
 * it) when g can reach the other GPU's memory, whichever side g holds; without
 * that access, with a host side, between overlapping views, or when the other
 * GPU captures too, it is refused and the capture stays usable. */
Test(capture_copies, cross_gpu_copies_follow_access_and_run_on_the_capturing_gpu) {
  kern_device *g = th_fake_gpu_with_graphs(TH_H100), *h = th_fake_gpu_with_graphs(TH_H100);
  kern_array *x = new1(g, KERN_INT32, 64), *y = new1(h, KERN_INT32, 64),
             *c = new1(cpu(), KERN_INT32, 64);
  kern_array *p = alloc_with(h, KERN_ALLOC_CUDA_MEMPOOL, 64);
  cr_assert_eq(kern_capture_begin(g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_copy(x, y), KERN_ERR_CAPTURE, "no peer access yet");
  cr_assert(strstr(kern_last_error(), "kern_device_enable_peer_access("), "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), kern_device_name(h)), "%s", kern_last_error());
  cr_assert_eq(kern_device_enable_peer_access(h, g, true), KERN_OK);
  int gc = th_fake_of(g)->copies, hc = th_fake_of(h)->copies;
  cr_assert_eq(kern_array_copy(x, y), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_copy(y, x), KERN_OK, "into the other GPU: %s", kern_last_error());
  cr_assert_eq(th_fake_of(g)->copies - gc, 2, "both copies ran on the capturing GPU");
  cr_assert_eq(th_fake_of(h)->copies, hc, "none on the other");
  kern_array *wx = kern_array_view(x, 1, (int64_t[]){0}, (int64_t[]){8});
  kern_array *wy = kern_array_view(y, 1, (int64_t[]){8}, (int64_t[]){8});
  cr_assert_eq(kern_array_copy(wx, wy), KERN_OK, "views: %s", kern_last_error());
  cr_assert_eq(kern_array_copy(x, p), KERN_ERR_CAPTURE, "peer access does not open the pool");
  cr_assert(strstr(kern_last_error(), "kern_device_enable_mempool_access("), "%s",
            kern_last_error());
  cr_assert_eq(kern_device_enable_mempool_access(h, g, true), KERN_OK);
  cr_assert_eq(kern_array_copy(x, p), KERN_OK, "pool access: %s", kern_last_error());
  cr_assert_eq(kern_array_copy(x, c), KERN_ERR_CAPTURE, "a host side");
  kern_array *lo = kern_array_view(x, 1, (int64_t[]){0}, (int64_t[]){32}),
             *hi = kern_array_view(x, 1, (int64_t[]){16}, (int64_t[]){32});
  cr_assert_eq(kern_array_copy(lo, hi), KERN_ERR_CAPTURE, "overlapping views");
  cr_assert(strstr(kern_last_error(), "overlapping"), "%s", kern_last_error());
  cr_assert_eq(kern_capture_begin(h), KERN_OK);
  cr_assert_eq(kern_array_copy(x, y), KERN_ERR_CAPTURE, "two captures");
  kern_graph *gh = NULL, *gg = NULL;
  cr_assert_eq(kern_capture_end(h, &gh), KERN_OK);
  cr_assert_eq(kern_capture_end(g, &gg), KERN_OK, "the refusals left it usable: %s",
               kern_last_error());
  kern_graph_free(gh), kern_graph_free(gg);
  kern_device_enable_peer_access(h, g, false);
  kern_device_enable_mempool_access(h, g, false);
  kern_array *v[] = {wx, wy, lo, hi, x, y, c, p};
  for (int i = 0; i < 8; i++) kern_array_free(v[i]);
}
