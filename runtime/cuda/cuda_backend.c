/* cuda_backend.c: CUDA devices: probe, memory, loading modules, launches, streams.
 *
 * Requires the driver through cuda_api.c (dlopen'd; absent driver = no CUDA
 * devices, never an error at init), and compile.c for a module's CUBIN or
 * PTX (NVRTC and the disk cache). Produces rt_cuda_probe, the rt_cuda_ops
 * backend table, the public stream functions, and the context and stream
 * helpers cuda_capture.c records with (a conditional body's stream replaces
 * the current one while it is captured). The probe starts the driver and
 * reads each GPU's attributes, nothing more: a device's primary context, its
 * stream, memory pool and debug buffer are made on its first use (start,
 * under the device's mutex, once; a failure is reported and the next use
 * tries again), because creating a context costs about a hundred
 * milliseconds per GPU. From then on each device makes its primary context
 * current on the calling thread before every driver call. A device whose
 * context hit a sticky fault (illegal address, trap) is marked poisoned:
 * every later call on it fails with the original error, the CPU device keeps
 * working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_backend.h"
#include "proc.h"

struct kern_stream {
  kern_device *device;
  CUstream s;
  bool owned; /* created by kern (destroyed by kern_stream_free) */
};

typedef struct cuda_dev {
  CUdevice dev;
  char gpu[96];         /* the driver's name for it, for the log */
  _Atomic bool started; /* the members below are made (start) */
  CUcontext ctx;        /* the primary context, retained at start */
  kern_stream default_stream;
  _Atomic(kern_stream *) stream; /* where launches go */
  _Atomic(CUstream) body;        /* during capture: a conditional body's stream, else NULL */
  kern_device_info info;
  int arch; /* sm_major * 10 + sm_minor */
  int num_sms;
  int smem_optin; /* the most shared memory a block may opt in to */
  CUmemoryPool pool;
  bool peer[RT_MAX_DEVICES]; /* peer access from launch device index enabled */
  bool pool_access[RT_MAX_DEVICES];
  kn_error *err_buf;    /* device memory for debug error records */
  pthread_mutex_t mu;   /* start, and the first poisoning */
  _Atomic int poisoned; /* a kern_status, stored once after poison_msg is written */
  char poison_msg[512];
} cuda_dev;

typedef struct cuda_code {
  CUmodule mod;
  int nkernels;
  CUfunction *fn; /* [fn_index(k, dense, one)]; a _one entry may be NULL */
  int *block;     /* block size per function, from the occupancy API */
} cuda_code;

static const rt_cu_api *cu;
static const char *absent_why = "no CUDA device present";

const char *rt_cuda_probe_reason(void) { return absent_why; }

static cuda_dev *impl(const kern_device *d) { return (cuda_dev *)d->impl; }

/* ---- errors and poisoning ------------------------------------------------------ */

/* Faults after which the context is unusable (illegal address, launch
 * timeout, device assert, stack error, illegal instruction, misaligned
 * address, invalid address space, invalid PC, launch failed). */
static bool is_sticky(CUresult r) {
  return r == 700 || r == 702 || r == 710 || (r >= 714 && r <= 719);
}

static kern_status cu_fail(kern_device *d, CUresult r, const char *what) {
  cuda_dev *c = impl(d);
  if (is_sticky(r) && !c->poisoned) {
    pthread_mutex_lock(&c->mu);
    if (!c->poisoned) { /* the first fault is the one every later call repeats */
      snprintf(c->poison_msg, sizeof c->poison_msg,
               "%s is unusable after a fault in %s: %s; restart the process to use it again "
               "(the CPU device still works)",
               d->name, what, rt_cu_error_text(r));
      c->poisoned = KERN_ERR_CUDA;
    }
    pthread_mutex_unlock(&c->mu);
  }
  if (c->poisoned) return err_set(KERN_ERR_CUDA, "%s", c->poison_msg);
  return err_set(r == 2 ? KERN_ERR_OUT_OF_MEMORY : KERN_ERR_CUDA, "%s on %s: %s", what, d->name,
                 rt_cu_error_text(r));
}

/* ---- first use -------------------------------------------------------------------- */

/* How much freed memory the device's default pool keeps for the next
 * stream-ordered allocation. The driver's default, 0, hands it back at every
 * synchronize, so the next cuMemAllocAsync maps pages again: on an H200
 * kern_array_sum of 1 GiB took 0.44 ms a call that way against 0.27 ms with
 * its scratch arrays kept. A larger threshold set before (by the program or
 * another library) stays. */
enum { POOL_KEEP_BYTES = 64 << 20 };

static void keep_freed_memory(CUmemoryPool pool) {
  uint64_t now = 0, keep = POOL_KEEP_BYTES;
  if (!pool || !cu->MemPoolGetAttribute || !cu->MemPoolSetAttribute) return;
  if (cu->MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &now) == CUDA_SUCCESS &&
      now < keep)
    cu->MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
}

/* The context, its stream, the pool and the debug buffer; undone on failure
 * (*what names the call that failed). */
static CUresult open_context(cuda_dev *c, const char **what) {
  CUresult r = cu->DevicePrimaryCtxRetain(&c->ctx, c->dev);
  if (r) return *what = "cuDevicePrimaryCtxRetain", r;
  if ((r = cu->CtxSetCurrent(c->ctx)))
    *what = "cuCtxSetCurrent";
  else if ((r = cu->StreamCreate(&c->default_stream.s, CU_STREAM_NON_BLOCKING)))
    *what = "cuStreamCreate";
  if (r) {
    cu->DevicePrimaryCtxRelease(c->dev);
    c->ctx = NULL;
    return r;
  }
  if (c->info.is_mempool_supported && cu->DeviceGetDefaultMemPool &&
      cu->DeviceGetDefaultMemPool(&c->pool, c->dev) == CUDA_SUCCESS)
    keep_freed_memory(c->pool);
  CUdeviceptr eb;
  if (cu->MemAlloc(&eb, sizeof(kn_error)) == 0) c->err_buf = (kn_error *)(uintptr_t)eb;
  return CUDA_SUCCESS;
}

/* The device's first use, once however many threads arrive together; the
 * log line after the lock (its handler may call kern). */
static kern_status start(kern_device *d) {
  cuda_dev *c = impl(d);
  double t0 = proc_now_ms();
  const char *what = "";
  CUresult r = CUDA_SUCCESS;
  bool ran = false;
  pthread_mutex_lock(&c->mu);
  if (!atomic_load(&c->started)) {
    ran = true;
    if ((r = open_context(c, &what)) == CUDA_SUCCESS)
      atomic_store_explicit(&c->started, true, memory_order_release);
  }
  pthread_mutex_unlock(&c->mu);
  if (r)
    return err_set(r == 2 ? KERN_ERR_OUT_OF_MEMORY : KERN_ERR_CUDA,
                   "%s (%s) could not be started: %s failed: %s", d->name, c->gpu, what,
                   rt_cu_error_text(r));
  if (ran)
    err_log(KERN_LOG_INFO, "%s (%s) started in %.2f ms (CUDA context and stream)", d->name, c->gpu,
            proc_now_ms() - t0);
  return KERN_OK;
}

static kern_status ensure_started(kern_device *d) {
  return atomic_load_explicit(&impl(d)->started, memory_order_acquire) ? KERN_OK : start(d);
}

/* Makes the device's context current (starting the device on its first use);
 * fails if the device is poisoned. */
static kern_status enter(kern_device *d) {
  cuda_dev *c = impl(d);
  kern_status p = ensure_started(d);
  if (p) return p;
  p = (kern_status)c->poisoned;
  if (p) return err_set(p, "%s", c->poison_msg);
  CUresult r = cu->CtxSetCurrent(c->ctx);
  return r ? cu_fail(d, r, "cuCtxSetCurrent") : KERN_OK;
}

#define CU_TRY(d, call)                                                                            \
  do {                                                                                             \
    CUresult r_ = (call);                                                                          \
    if (r_) return cu_fail((d), r_, #call);                                                        \
  } while (0)

static CUstream cur_stream(kern_device *d) {
  CUstream body = atomic_load(&impl(d)->body);
  return body ? body : atomic_load(&impl(d)->stream)->s;
}

/* ---- for cuda_capture.c ---------------------------------------------------------- */

kern_status rt_cuda_enter(kern_device *d) { return enter(d); }
kern_status rt_cuda_fail(kern_device *d, int r, const char *what) { return cu_fail(d, r, what); }
CUstream rt_cuda_stream(kern_device *d) { return cur_stream(d); }
CUcontext rt_cuda_context(const kern_device *d) { return impl(d)->ctx; }
int rt_cuda_arch(const kern_device *d) { return impl(d)->arch; }
void rt_cuda_set_capture_stream(kern_device *d, CUstream s) { atomic_store(&impl(d)->body, s); }

/* ---- probe ------------------------------------------------------------------------ */

static int attr(CUdevice dev, int a) {
  int v = 0;
  cu->DeviceGetAttribute(&v, a, dev);
  return v;
}

static void read_info(cuda_dev *c, int ordinal) {
  kern_device_info *i = &c->info;
  i->ordinal = ordinal;
  i->sm_major = attr(c->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  i->sm_minor = attr(c->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  cu->DeviceTotalMem(&i->total_memory, c->dev);
  i->is_uva = attr(c->dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
  i->is_mempool_supported =
      attr(c->dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) && cu->MemAllocAsync;
  i->is_managed_memory_supported = attr(c->dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  i->is_concurrent_managed_access_supported =
      attr(c->dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
  i->is_cpu_memory_access_from_gpu_supported =
      attr(c->dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
  i->is_gpu_memory_access_from_cpu_supported =
      attr(c->dev, CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
  i->is_cpu_gpu_atomic_supported = attr(c->dev, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
  c->arch = i->sm_major * 10 + i->sm_minor;
  c->num_sms = attr(c->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  c->smem_optin = attr(c->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (c->smem_optin < RT_TILE_SHARED_LIMIT) c->smem_optin = RT_TILE_SHARED_LIMIT;
}

extern const rt_device_ops rt_cuda_ops;

/* A device as the probe leaves it: attributes read, no context yet. */
static cuda_dev *new_device(int ordinal) {
  cuda_dev *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (cu->DeviceGet(&c->dev, ordinal)) {
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->mu, NULL);
  read_info(c, ordinal);
  if (cu->DeviceGetName(c->gpu, (int)sizeof c->gpu, c->dev)) snprintf(c->gpu, sizeof c->gpu, "?");
  atomic_store(&c->stream, &c->default_stream);
  return c;
}

bool rt_cuda_driver_loaded(void) { return rt_cu_in_process(); }

kern_status rt_cuda_probe(void) {
  if (cu) return KERN_OK; /* once per process */
  cu = rt_cu_load(&absent_why);
  if (!cu) return KERN_OK;
  CUresult r = cu->Init(0);
  int n = 0;
  if (r == 0) r = cu->DeviceGetCount(&n);
  if (r) {
    static char why[300];
    snprintf(why, sizeof why, "the CUDA driver failed to start: %s", rt_cu_error_text(r));
    absent_why = why;
    return KERN_OK;
  }
  if (n == 0) absent_why = "the CUDA driver reports no GPU";
  for (int i = 0; i < n; i++) {
    cuda_dev *c = new_device(i);
    kern_device *d = c ? rt_device_add(RT_DEV_CUDA, i, &rt_cuda_ops, c) : NULL;
    if (d) c->default_stream.device = d;
  }
  rt_cuda_memory_init(cu);
  return KERN_OK;
}

/* ---- memory ------------------------------------------------------------------------- */

static void *cuda_alloc(kern_device *d, size_t bytes, kern_allocator al, bool zero,
                        kern_memory_kind *kind) {
  if (enter(d)) return NULL;
  CUdeviceptr p = 0;
  CUresult r;
  if (al == KERN_ALLOC_CUDA_MANAGED) {
    *kind = KERN_MEM_CUDA_MANAGED;
    r = cu->MemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
  } else if (al == KERN_ALLOC_CUDA_MEMPOOL) {
    *kind = KERN_MEM_CUDA_MEMPOOL;
    r = cu->MemAllocAsync(&p, bytes, cur_stream(d));
  } else {
    *kind = KERN_MEM_CUDA_DEVICE;
    r = cu->MemAlloc(&p, bytes);
  }
  if (r) {
    cu_fail(d, r, "allocating device memory");
    return NULL;
  }
  if (zero) r = cu->MemsetD8Async(p, 0, bytes, cur_stream(d));
  if (!r && (zero && al == KERN_ALLOC_CUDA_MANAGED)) r = cu->StreamSynchronize(cur_stream(d));
  if (r) {
    cu_fail(d, r, "clearing device memory");
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

static void cuda_free(kern_device *d, void *ptr, size_t bytes, kern_memory_kind kind) {
  if (impl(d)->poisoned || cu->CtxSetCurrent(impl(d)->ctx)) return;
  if (kind == KERN_MEM_CUDA_MEMPOOL)
    cu->MemFreeAsync((CUdeviceptr)(uintptr_t)ptr, cur_stream(d));
  else
    cu->MemFree((CUdeviceptr)(uintptr_t)ptr);
}

/* ---- copies ------------------------------------------------------------------------------ */

/* Work queued on `to`'s stream from now on waits for what `from`'s stream
 * holds now (an event may be waited on by another device's stream). */
static kern_status join(kern_device *from, kern_device *to) {
  kern_status s = enter(from);
  if (s) return s;
  CUevent ev;
  CU_TRY(from, cu->EventCreate(&ev, CU_EVENT_DISABLE_TIMING));
  CUresult r = cu->EventRecord(ev, cur_stream(from));
  if (!r && !(s = enter(to))) r = cu->StreamWaitEvent(cur_stream(to), ev, 0);
  cu->EventDestroy(ev); /* released once it completes */
  if (s) return s;
  return r ? cu_fail(from, r, "ordering a copy between two GPUs' streams (cuStreamWaitEvent)")
           : KERN_OK;
}

/* The other GPU whose memory a copy on d touches, or NULL. */
static kern_device *other_gpu(const kern_device *d, const rt_copy *c) {
  const kern_device *o = !c->dst_host && c->dst_dev != d   ? c->dst_dev
                         : !c->src_host && c->src_dev != d ? c->src_dev
                                                           : NULL;
  return o && o->kind == RT_DEV_CUDA ? (kern_device *)o : NULL;
}

/* One block: one copy per row, or one 2-D copy when the rows do not overlap
 * on either side; a pitch the driver refuses (over its maximum) falls back to
 * rows. Device memory is addressed through unified addressing, so either
 * side may be another GPU's. */
static CUresult copy_block(const rt_copy *c, char *dst, const char *src, CUstream st) {
  size_t w = c->width;
  if (c->height == 1)
    return cu->MemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, w, st);
  if ((size_t)c->dpitch >= w && (size_t)c->spitch >= w) {
    CUDA_MEMCPY2D p = {.srcMemoryType = c->src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED,
                       .srcHost = src,
                       .srcDevice = (CUdeviceptr)(uintptr_t)src,
                       .srcPitch = (size_t)c->spitch,
                       .dstMemoryType = c->dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED,
                       .dstHost = dst,
                       .dstDevice = (CUdeviceptr)(uintptr_t)dst,
                       .dstPitch = (size_t)c->dpitch,
                       .WidthInBytes = w,
                       .Height = c->height};
    CUresult r = cu->Memcpy2DAsync(&p, st);
    if (r != CUDA_ERROR_INVALID_VALUE) return r;
  }
  for (size_t i = 0; i < c->height; i++) {
    CUresult r = cu->MemcpyAsync((CUdeviceptr)(uintptr_t)(dst + (int64_t)i * c->dpitch),
                                 (CUdeviceptr)(uintptr_t)(src + (int64_t)i * c->spitch), w, st);
    if (r) return r;
  }
  return CUDA_SUCCESS;
}

/* Queued on d's current stream, after the other GPU's pending work and
 * before its later work (outside a capture: a graph orders only what it
 * recorded); a copy that touches host memory waits, so the host may reuse
 * or read the buffer. */
static kern_status cuda_copy(kern_device *d, const rt_copy *c) {
  kern_device *o = rt_capture_active(d) ? NULL : other_gpu(d, c);
  kern_status s = o ? join(o, d) : enter(d);
  if (s) return s;
  CUstream st = cur_stream(d);
  for (int64_t b = 0, nb = rt_copy_blocks(c); b < nb; b++) {
    char *dst;
    const char *src;
    rt_copy_block(c, b, &dst, &src);
    CUresult r = copy_block(c, dst, src, st);
    if (r) return cu_fail(d, r, c->height > 1 ? "cuMemcpy2DAsync" : "cuMemcpyAsync");
  }
  if (o && (s = join(d, o))) return s;
  if (o) s = enter(d);
  if (!s && (c->dst_host || c->src_host)) CU_TRY(d, cu->StreamSynchronize(st));
  return s;
}

static kern_status cuda_sync(kern_device *d) {
  if (rt_capture_active(d)) return rt_capture_refuse(d, "kern_device_synchronize");
  if (!atomic_load(&impl(d)->started)) return KERN_OK; /* never used: nothing queued */
  kern_status s = enter(d);
  if (s) return s;
  CU_TRY(d, cu->CtxSynchronize());
  return KERN_OK;
}

static kern_status cuda_info(const kern_device *d, kern_device_info *out) {
  *out = impl(d)->info;
  return KERN_OK;
}

static bool cuda_allocator_ok(const kern_device *d, kern_allocator a) {
  const kern_device_info *i = &impl(d)->info;
  return a == KERN_ALLOC_DEFAULT || a == KERN_ALLOC_CUDA_DEVICE ||
         (a == KERN_ALLOC_CUDA_MEMPOOL && i->is_mempool_supported) ||
         (a == KERN_ALLOC_CUDA_MANAGED && i->is_managed_memory_supported);
}

static bool cuda_peer_enabled(const kern_device *owner, const kern_device *launch) {
  return impl(owner)->peer[launch->index];
}

static bool cuda_pool_access_enabled(const kern_device *owner, const kern_device *launch) {
  return impl(owner)->pool_access[launch->index];
}

/* Whether the driver lets `peer` reach `target`'s memory at all
 * (cuDeviceCanAccessPeer): KERN_ERR_UNSUPPORTED saying so when not. */
static kern_status peer_possible(kern_device *target, kern_device *peer, const char *what) {
  int can = 0;
  CUresult r = cu->DeviceCanAccessPeer(&can, impl(peer)->dev, impl(target)->dev);
  if (r) return cu_fail(peer, r, "cuDeviceCanAccessPeer");
  if (can) return KERN_OK;
  return err_set(KERN_ERR_UNSUPPORTED,
                 "%s: %s cannot access the memory of %s directly (the driver's "
                 "cuDeviceCanAccessPeer says no: there is no peer path between these GPUs); "
                 "copy the arrays with kern_array_copy instead",
                 what, peer->name, target->name);
}

/* Lets `peer` launch on memory of `target` (cuCtxEnablePeerAccess from the peer). */
static kern_status cuda_set_peer(kern_device *target, kern_device *peer, bool on) {
  if (target == peer) return KERN_OK;
  kern_status s = on ? peer_possible(target, peer, "kern_device_enable_peer_access") : KERN_OK;
  if (!s) s = ensure_started(target); /* its context is the argument */
  if (!s) s = enter(peer);
  if (s) return s;
  CUresult r = on ? cu->CtxEnablePeerAccess(impl(target)->ctx, 0)
                  : cu->CtxDisablePeerAccess(impl(target)->ctx);
  if (r && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED && r != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
    return cu_fail(peer, r, on ? "enabling peer access" : "disabling peer access");
  impl(target)->peer[peer->index] = on;
  return KERN_OK;
}

/* CUmemAccessDesc: {CUmemLocation {type, id}, flags}. */
typedef struct {
  int type, id;
  int flags;
} mem_access_desc;

static kern_status cuda_set_pool_access(kern_device *target, kern_device *peer, bool on) {
  cuda_dev *t = impl(target);
  if (target == peer) return KERN_OK;
  kern_status s = on ? peer_possible(target, peer, "kern_device_enable_mempool_access") : KERN_OK;
  if (!s) s = enter(target); /* the pool is found at start */
  if (s) return s;
  if (!t->pool || !cu->MemPoolSetAccess)
    return err_set(KERN_ERR_UNSUPPORTED, "%s has no memory pool", target->name);
  mem_access_desc desc = {1 /* DEVICE */, impl(peer)->info.ordinal, on ? 3 /* READWRITE */ : 0};
  CU_TRY(target, cu->MemPoolSetAccess(t->pool, &desc, 1));
  t->pool_access[peer->index] = on;
  return KERN_OK;
}

/* ---- compile: the module's image (compile.c), loaded --------------------------------- */

/* The slot of kernel k's entry kk_K_cuda[_dense][_one] in cuda_code (the
 * strided _one slot stays NULL); a tiled kernel's `one` slots hold its
 * entries kk_K_cuda[_dense]_mm where it has them (matrix-product loops run
 * whole), with the threads of the block they are compiled for in cc->block. */
static int fn_index(int k, bool dense, bool one) { return 4 * k + 2 * dense + one; }

/* Whether tiled kernel k needs more shared memory than a block of d can have:
 * then it, and only it, fails its launches there (tile_fits). */
static bool too_big(kern_device *d, const kern_kernel *k) {
  return k->tiled && k->tile_bytes > impl(d)->smem_optin;
}

static kern_status tile_fits(kern_device *d, const kern_kernel *k) {
  if (!too_big(d, k)) return KERN_OK;
  return err_set(KERN_ERR_COMPILE,
                 "kernel '%s' needs %lld bytes of shared memory for its tiles (%s), more than "
                 "the %d bytes a block has on %s",
                 k->name, (long long)k->tile_bytes, k->tile_text ? k->tile_text : "?",
                 impl(d)->smem_optin, d->name);
}

static kern_status load_functions(kern_device *d, kern_module *m, cuda_code *cc) {
  for (int k = 0; k < m->nkernels; k++)
    for (int v = 0; v < 4; v++) {
      bool dense = v & 1, one = v >> 1;
      int grid = 0, *block = &cc->block[fn_index(k, dense, one)];
      CUfunction *f = &cc->fn[fn_index(k, dense, one)];
      const kern_kernel *kk = &m->kernels[k];
      /* only dense entries have one (codegen/emit_cuda.c) */
      if (one && !dense && !kk->tiled) continue;
      /* kernel names are up to 1024 bytes */
      char *name = str_printf("kk_%s_cuda%s%s", kk->name, dense ? "_dense" : "",
                              !one        ? ""
                              : kk->tiled ? "_mm"
                                          : "_one");
      if (!name)
        return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading module '%s'", m->name);
      CUresult r = cu->ModuleGetFunction(f, cc->mod, name);
      free(name);
      /* a kernel without a _one entry (or an image from before them) runs its loops */
      if (r && one) {
        *f = NULL;
        continue;
      }
      if (r) return cu_fail(d, r, "cu->ModuleGetFunction(f, cc->mod, name)");
      /* past the default 48 KiB, a block's dynamic shared memory is opted in to */
      if (kk->tiled && kk->tile_bytes > RT_TILE_SHARED_LIMIT && !too_big(d, kk) &&
          (r = cu->FuncSetAttribute
                   ? cu->FuncSetAttribute(*f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          (int)kk->tile_bytes)
                   : CUDA_ERROR_NOT_SUPPORTED))
        return cu_fail(d, r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
      if (one && kk->tiled) { /* its __launch_bounds__ (256 where the driver cannot say) */
        if (!cu->FuncGetAttribute ||
            cu->FuncGetAttribute(block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, *f))
          *block = 256;
      } else if (cu->OccupancyMaxPotentialBlockSize(&grid, block, *f, NULL, 0, 0) || *block <= 0)
        *block = 256;
    }
  return KERN_OK;
}

static void cuda_code_free(rt_code *code) {
  cuda_code *cc = (cuda_code *)code;
  if (!cc) return;
  if (cc->mod) cu->ModuleUnload(cc->mod);
  free(cc->fn);
  free(cc->block);
  free(cc);
}

static kern_status cuda_compile(kern_module *m, kern_device *d, rt_code **out, rt_origin *origin) {
  kern_status s = enter(d);
  if (s) return s;
  rt_binary b;
  if ((s = rt_module_binary(m, RT_CODE_GPU, impl(d)->arch, &b))) return s;
  *origin = b.origin;
  char *bin = b.image;
  cuda_code *cc = calloc(1, sizeof *cc);
  if (cc) {
    cc->nkernels = m->nkernels;
    cc->fn = calloc(4 * (size_t)m->nkernels + 1, sizeof *cc->fn);
    cc->block = calloc(4 * (size_t)m->nkernels + 1, sizeof *cc->block);
  }
  if (!cc || !cc->fn || !cc->block)
    s = err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading a module");
  CUresult r = s ? 0 : cu->ModuleLoadData(&cc->mod, bin);
  free(bin);
  if (!s && r) s = cu_fail(d, r, "cuModuleLoadData");
  if (!s) s = load_functions(d, m, cc);
  if (s) {
    cuda_code_free((rt_code *)cc);
    return s;
  }
  *out = (rt_code *)cc;
  return KERN_OK;
}

/* ---- launch ---------------------------------------------------------------------------- */

/* Debug launches wait and hand the device's error record to the core. */
static kern_status debug_finish(kern_device *d, const rt_launch *L, CUstream st) {
  kn_error rec;
  CU_TRY(d, cu->MemcpyAsync((CUdeviceptr)(uintptr_t)&rec, (CUdeviceptr)(uintptr_t)impl(d)->err_buf,
                            sizeof rec, st));
  CU_TRY(d, cu->StreamSynchronize(st));
  if (rec.flag) *L->ctx.err = rec; /* the core words it */
  return KERN_OK;
}

/* The grid of a kernel that uses only tid(): n / elems threads (the entry
 * runs elems consecutive indices per thread and step) in the occupancy API's
 * block, halved (not below 128) while the grid would leave SMs idle (32768
 * indices in blocks of 1024 would use 32 of 132 SMs). Large launches stay
 * capped at 32 blocks per SM, each thread looping: that also keeps the
 * entry's 32-bit index steps from wrapping (codegen/emit_cuda.c). */
void rt_cuda_linear_shape(int num_sms, int64_t n, int64_t block, int elems, unsigned g[3],
                          unsigned b[3]) {
  int64_t threads = (n + elems - 1) / elems, max_grid = (int64_t)num_sms * 32;
  while (block > 128 && (threads + block - 1) / block < 4 * (int64_t)num_sms) block /= 2;
  int64_t grid = (threads + block - 1) / block;
  if (grid > max_grid) grid = max_grid;
  g[0] = grid < 1 ? 1 : (unsigned)grid, g[1] = g[2] = 1;
  b[0] = (unsigned)block, b[1] = b[2] = 1;
}

static int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v && p < 1024) p *= 2;
  return p;
}

/* The grid of a kernel that uses tid(d), as its entry walks it: x along the
 * last launch dimension (elems consecutive indices per thread), y the one
 * before, z the rest; one thread per point where the grid's limits allow (y
 * and z at most 65535 blocks; the entry loops past them). Blocks are
 * KERN_CUDA_BLOCK2D (32x8: a warp along the row), narrowed to a short row or
 * a launch of few rows, within the occupancy API's block. */
void rt_cuda_grid_shape(const kn_ctx *ctx, int64_t block, int elems, unsigned g[3], unsigned b[3]) {
  int nd = ctx->ndim;
  int64_t x = (ctx->dim[nd - 1] + elems - 1) / elems, y = nd >= 2 ? ctx->dim[nd - 2] : 1;
  int64_t z = ctx->n / (ctx->dim[nd - 1] * y);
  const int *pref = rt_config_get()->block2d;
  int64_t px = pow2_at_least(x), py = pow2_at_least(y);
  int64_t bx = px < pref[0] ? px : pref[0], by = py < pref[1] ? py : pref[1];
  while (bx * by < pref[0] * pref[1] && bx < px) bx *= 2;
  while (bx * by < pref[0] * pref[1] && by < py) by *= 2;
  while (bx * by > block && by > 1) by /= 2;
  while (bx * by > block) bx /= 2;
  int64_t gy = (y + by - 1) / by;
  g[0] = (unsigned)((x + bx - 1) / bx);
  g[1] = (unsigned)(gy > 65535 ? 65535 : gy);
  g[2] = (unsigned)(z > 65535 ? 65535 : z);
  b[0] = (unsigned)bx, b[1] = (unsigned)by, b[2] = 1;
}

bool rt_cuda_grid_covers(const kn_ctx *ctx, bool grid, int elems, const unsigned g[3],
                         const unsigned b[3]) {
  int nd = ctx->ndim;
  int64_t x = grid ? ctx->dim[nd - 1] : ctx->n, y = grid && nd >= 2 ? ctx->dim[nd - 2] : 1;
  int64_t z = x * y > 0 ? ctx->n / (x * y) : 1;
  return (int64_t)g[0] * b[0] * elems >= x && (int64_t)g[1] * b[1] >= y &&
         (int64_t)g[2] * b[2] >= z;
}

/* The entry a launch runs and its grid: the kernel's _one entry where it has
 * one for this launch (a tid(d) kernel launched with the rank of its tid(d)s)
 * and the grid the runtime picks has a thread for every index; else the entry
 * with the grid-stride loops. */
static CUfunction launch_shape(const cuda_dev *c, const cuda_code *cc, const rt_launch *L,
                               const kn_ctx *ctx, unsigned g[3], unsigned b[3]) {
  const kern_kernel *k = L->kernel;
  int elems = L->dense ? k->elems : 1;
  int fi = fn_index(k->index, L->dense, false), one = fn_index(k->index, L->dense, true);
  /* as codegen/emit_cuda.c has them: ranks 1 to 3, tid()-only one index a thread */
  bool try_one = cc->fn[one] && (k->grid ? ctx->ndim == k->rank && k->rank <= 3 : elems == 1);
  for (int pass = try_one ? 0 : 1; pass < 2; pass++) {
    int f = pass ? fi : one;
    if (k->grid)
      rt_cuda_grid_shape(ctx, cc->block[f], elems, g, b);
    else
      rt_cuda_linear_shape(c->num_sms, ctx->n, cc->block[f], elems, g, b);
    if (pass || rt_cuda_grid_covers(ctx, k->grid, elems, g, b)) return cc->fn[f];
  }
  return cc->fn[fi]; /* not reached */
}

static kern_status cuda_launch(const rt_launch *L) {
  kern_device *d = L->device;
  cuda_dev *c = impl(d);
  kern_status s = enter(d);
  if (!s) s = tile_fits(d, L->kernel);
  if (s) return s;
  cuda_code *cc = (cuda_code *)L->code;
  CUstream st = cur_stream(d);
  kn_ctx ctx = L->ctx;
  bool debug = ctx.err != NULL && c->err_buf;
  /* Inside a capture the graph's replay checks the record (no synchronize here). */
  bool captured = debug && rt_capture_active(d);
  if (captured) {
    ctx.err = rt_cuda_capture_debug_slot(d, L->kernel);
  } else if (debug) {
    ctx.err = c->err_buf;
    CU_TRY(d, cu->MemsetD8Async((CUdeviceptr)(uintptr_t)c->err_buf, 0, sizeof(kn_error), st));
  }
  static const char empty[16];
  void *params[2] = {(void *)(L->args_size ? L->args : empty), &ctx};
  unsigned g[3], b[3];
  CUfunction fn;
  if (L->kernel->tiled) {
    /* one block per instance; the entry loops past the grid */
    int64_t grid = (int64_t)c->num_sms * 32;
    g[0] = (unsigned)(ctx.n < grid ? ctx.n : grid), g[1] = g[2] = 1;
    /* by default, the block of the kernel's _mm entries where it has them */
    int mm = fn_index(L->kernel->index, L->dense, true);
    int threads = L->tile_block > 0 ? L->tile_block
                  : cc->fn[mm]      ? cc->block[mm]
                                    : RT_TILE_BLOCK_DEFAULT;
    b[0] = (unsigned)threads, b[1] = b[2] = 1;
    fn = cc->fn[fn_index(L->kernel->index, L->dense, false)];
    if (cc->fn[mm] && threads == cc->block[mm]) fn = cc->fn[mm];
  } else
    fn = launch_shape(c, cc, L, &ctx, g, b);
  unsigned smem = L->kernel->tiled ? (unsigned)L->kernel->tile_bytes : 0;
  CU_TRY(d, cu->LaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], smem, st, params, NULL));
  return debug && !captured ? debug_finish(d, L, st) : KERN_OK;
}

const rt_device_ops rt_cuda_ops = {
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .synchronize = cuda_sync,
    .info = cuda_info,
    .allocator_ok = cuda_allocator_ok,
    .peer_enabled = cuda_peer_enabled,
    .pool_access_enabled = cuda_pool_access_enabled,
    .set_peer = cuda_set_peer,
    .set_pool_access = cuda_set_pool_access,
    .compile = cuda_compile,
    .code_free = cuda_code_free,
    .launch = cuda_launch,
    .graph = &rt_cuda_graph_ops,
};

/* ---- streams ------------------------------------------------------------------------------ */

kern_stream *kern_stream_new(kern_device *d) {
  if (!d || d->kind != RT_DEV_CUDA) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_stream_new: streams belong to CUDA devices, not %s",
            d ? d->name : "NULL");
    return NULL;
  }
  if (enter(d)) return NULL;
  kern_stream *s = calloc(1, sizeof *s);
  if (!s) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  CUresult r = cu->StreamCreate(&s->s, CU_STREAM_NON_BLOCKING);
  if (r) {
    free(s);
    cu_fail(d, r, "cuStreamCreate");
    return NULL;
  }
  s->device = d;
  s->owned = true;
  return s;
}

kern_stream *kern_stream_wrap_cuda(kern_device *d, void *cu_stream) {
  if (!d || d->kind != RT_DEV_CUDA) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_stream_wrap_cuda: %s is not a CUDA device",
            d ? d->name : "NULL");
    return NULL;
  }
  kern_stream *s = calloc(1, sizeof *s);
  if (!s) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  s->device = d;
  s->s = (CUstream)cu_stream;
  return s;
}

void kern_stream_free(kern_stream *s) {
  if (!s || s == &impl(s->device)->default_stream) return;
  cuda_dev *c = impl(s->device);
  if (rt_capture_active(s->device) && atomic_load(&c->stream) == s) {
    rt_capture_refuse(s->device, "kern_stream_free of the stream being captured");
    return; /* the stream stays valid: free it after kern_capture_end */
  }
  kern_stream *expected = s;
  atomic_compare_exchange_strong(&c->stream, &expected, &c->default_stream);
  if (s->owned && !c->poisoned && cu->CtxSetCurrent(c->ctx) == 0) {
    cu->StreamSynchronize(s->s);
    cu->StreamDestroy(s->s);
  }
  free(s);
}

kern_status kern_device_set_stream(kern_device *d, kern_stream *s) {
  if (!d || d->kind != RT_DEV_CUDA)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_device_set_stream: %s is not a CUDA device",
                   d ? d->name : "NULL");
  if (s && s->device != d)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_device_set_stream: the stream belongs to %s, not %s", s->device->name,
                   d->name);
  if (rt_capture_active(d)) return rt_capture_refuse(d, "kern_device_set_stream");
  atomic_store(&impl(d)->stream, s ? s : &impl(d)->default_stream);
  return KERN_OK;
}

/* The default stream is made at the device's first use: this may be it. */
kern_stream *kern_device_get_stream(kern_device *d) {
  if (!d || d->kind != RT_DEV_CUDA || ensure_started(d)) return NULL;
  return atomic_load(&impl(d)->stream);
}

void *kern_stream_cuda_handle(const kern_stream *s) { return s ? (void *)s->s : NULL; }
