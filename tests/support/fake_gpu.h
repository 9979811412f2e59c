/* fake_gpu.h: stand-in CUDA devices for suites that check memory kinds,
 * access rules and DLPack without a GPU (test_memory.c, test_launch.c,
 * test_dlpack.c).
 *
 * Requires: core.h (the device table and rt_device_ops), Criterion.
 * Produces: th_fake_gpu_new(caps), a CUDA device at the next free ordinal
 * (real GPUs stay untouched) whose memory is host memory reporting CUDA
 * kinds, whose capabilities are caps (th_fake_of(d)->info may change them
 * later), whose peer and pool switches are recorded, and whose launches only
 * count, and whose copies run on the host and are counted;
 * th_fake_gpu_with_graphs(caps) adds a graph capture that records nothing
 * (capture.c's decisions, no replay). Breaks: nothing; a fake lives until the
 * process ends.
 */
#ifndef KERN_TEST_FAKE_GPU_H
#define KERN_TEST_FAKE_GPU_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"
#include "core.h"

typedef struct th_fake_gpu {
  kern_device_info info;
  bool peer[RT_MAX_DEVICES], pool[RT_MAX_DEVICES]; /* by launch device index */
  int launches;
  int copies;   /* copy ops this device performed */
  int64_t rows; /* the rows they moved */
} th_fake_gpu;

static inline th_fake_gpu *th_fake_of(const kern_device *d) { return (th_fake_gpu *)d->impl; }

static inline void *th_fake_alloc(kern_device *d, size_t n, kern_allocator al, bool zero,
                                  kern_memory_kind *kind) {
  (void)d;
  *kind = al == KERN_ALLOC_CUDA_MANAGED   ? KERN_MEM_CUDA_MANAGED
          : al == KERN_ALLOC_CUDA_MEMPOOL ? KERN_MEM_CUDA_MEMPOOL
                                          : KERN_MEM_CUDA_DEVICE;
  return zero ? calloc(1, n) : malloc(n);
}
static inline void th_fake_free(kern_device *d, void *p, size_t n, kern_memory_kind k) {
  (void)d, (void)n, (void)k;
  free(p);
}
/* Fake device memory is host memory: the plan runs on the host, and the
 * copies and the rows they moved are counted. */
static inline kern_status th_fake_copy(kern_device *d, const rt_copy *c) {
  th_fake_of(d)->copies++;
  th_fake_of(d)->rows += rt_copy_blocks(c) * (int64_t)c->height;
  rt_copy_host(c);
  return KERN_OK;
}
static inline kern_status th_fake_info(const kern_device *d, kern_device_info *i) {
  *i = th_fake_of(d)->info;
  i->ordinal = d->ordinal;
  return KERN_OK;
}
static inline bool th_fake_allocator_ok(const kern_device *d, kern_allocator a) {
  const kern_device_info *i = &th_fake_of(d)->info;
  return a == KERN_ALLOC_DEFAULT || a == KERN_ALLOC_CUDA_DEVICE ||
         (a == KERN_ALLOC_CUDA_MEMPOOL && i->is_mempool_supported) ||
         (a == KERN_ALLOC_CUDA_MANAGED && i->is_managed_memory_supported);
}
static inline bool th_fake_peer_enabled(const kern_device *owner, const kern_device *launch) {
  return th_fake_of(owner)->peer[launch->index];
}
static inline bool th_fake_pool_enabled(const kern_device *owner, const kern_device *launch) {
  return th_fake_of(owner)->pool[launch->index];
}
static inline kern_status th_fake_set_peer(kern_device *target, kern_device *peer, bool on) {
  th_fake_of(target)->peer[peer->index] = on;
  return KERN_OK;
}
static inline kern_status th_fake_set_pool(kern_device *target, kern_device *peer, bool on) {
  th_fake_of(target)->pool[peer->index] = on;
  return KERN_OK;
}
static inline kern_status th_fake_compile(kern_module *m, kern_device *d, rt_code **out,
                                          rt_origin *origin) {
  static int code;
  (void)m, (void)d, (void)origin;
  *out = (rt_code *)&code;
  return KERN_OK;
}
static inline void th_fake_code_free(rt_code *c) { (void)c; }
static inline kern_status th_fake_launch(const rt_launch *L) {
  th_fake_of(L->device)->launches++;
  return KERN_OK;
}

static const rt_device_ops th_fake_ops = {
    .alloc = th_fake_alloc,
    .free = th_fake_free,
    .copy = th_fake_copy,
    .info = th_fake_info,
    .allocator_ok = th_fake_allocator_ok,
    .peer_enabled = th_fake_peer_enabled,
    .pool_access_enabled = th_fake_pool_enabled,
    .set_peer = th_fake_set_peer,
    .set_pool_access = th_fake_set_pool,
    .compile = th_fake_compile,
    .code_free = th_fake_code_free,
    .launch = th_fake_launch,
};

/* What the lent H100 reports (memory-access contract). */
static const kern_device_info TH_H100 = {.is_uva = true,
                                         .is_managed_memory_supported = true,
                                         .is_concurrent_managed_access_supported = true,
                                         .is_mempool_supported = true};

/* Graph capture that records nothing: enough for capture.c's decisions
 * (what a CUDA-like capture refuses, and which device performs a copy). */
static int th_fake_exec_token;
static inline kern_status th_fake_begin(kern_device *d, kern_capture_mode m, void **cap) {
  (void)d, (void)m;
  *cap = NULL;
  return KERN_OK;
}
static inline kern_status th_fake_end(kern_device *d, void *cap, void **exec, bool *updated) {
  (void)d, (void)cap;
  if (updated) *updated = *exec != NULL;
  *exec = &th_fake_exec_token;
  return KERN_OK;
}
static inline void th_fake_abort(kern_device *d, void *cap) { (void)d, (void)cap; }
static inline kern_status th_fake_replay(kern_device *d, void *exec, const kern_kernel **failed,
                                         kn_error *rec) {
  (void)d, (void)exec, (void)failed, (void)rec;
  return KERN_OK;
}
static inline void th_fake_exec_free(kern_device *d, void *exec) { (void)d, (void)exec; }
static const rt_graph_ops th_fake_graph_ops = {.begin = th_fake_begin,
                                               .end = th_fake_end,
                                               .abort = th_fake_abort,
                                               .launch = th_fake_replay,
                                               .exec_free = th_fake_exec_free};

static inline kern_device *th_fake_add(kern_device_info caps, const rt_device_ops *ops) {
  th_fake_gpu *f = calloc(1, sizeof *f);
  cr_assert_not_null(f);
  f->info = caps;
  kern_device *d = rt_device_add(RT_DEV_CUDA, kern_device_count() - 1, ops, f);
  cr_assert_not_null(d);
  return d;
}

static inline kern_device *th_fake_gpu_new(kern_device_info caps) {
  return th_fake_add(caps, &th_fake_ops);
}

/* The same with stream-capture-like graphs (th_fake_graph_ops). */
static inline kern_device *th_fake_gpu_with_graphs(kern_device_info caps) {
  static rt_device_ops ops;
  ops = th_fake_ops;
  ops.graph = &th_fake_graph_ops;
  return th_fake_add(caps, &ops);
}

#endif
