/* cuda_memory.c: host-side memory services of the CUDA driver: pinned host
 * allocations, the memory kind of a foreign pointer, CUDA IPC handles.
 *
 * Requires: the driver table (cuda_api.c), started by rt_cuda_probe, which
 * calls rt_cuda_memory_init. Produces: the host services of backend.h
 * (rt_host): pinned_alloc and pinned_free (KERN_ALLOC_PINNED on the CPU
 * device), pointer_kind (kern_array_wrap of a pointer kern did not allocate)
 * and ipc_handle (kern_array_ipc_handle).
 * Breaks: without a GPU nothing is installed (the driver needs a context for
 * all of it), so the CPU-only behaviour is the same as without a driver. Calls
 * run in a device's primary context; one is made current on the calling
 * thread only when the thread has none, because the CUDA backend sets its own
 * before each of its calls anyway. Contexts are retained when first needed:
 * a pinned allocation makes cuda:0's if none exists, but classifying a
 * pointer never makes one (with no context in the process, no pointer can be
 * CUDA memory), so wrapping host memory costs no context.
 */
#include <pthread.h>

#include "cuda_api.h"
#include "cuda_backend.h"

static const rt_cu_api *cu;
static _Atomic(CUcontext) ctxs[RT_MAX_DEVICES]; /* primary context by ordinal, once retained */
static int nctx;
static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;

/* Whether the device's primary context exists (made by kern's backend or by
 * the CUDA runtime); a driver that cannot say is taken as yes. */
static bool primary_active(CUdevice dev) {
  unsigned flags = 0;
  int active = 0;
  if (!cu->DevicePrimaryCtxGetState) return true;
  return cu->DevicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS && active;
}

/* The primary context of a device, retained once; with create false, only
 * when it exists already. */
static CUcontext ctx_of(int ordinal, bool create) {
  if (ordinal < 0 || ordinal >= nctx) return NULL;
  CUcontext c = atomic_load(&ctxs[ordinal]);
  if (c) return c;
  pthread_mutex_lock(&ctx_mu);
  CUdevice dev;
  if (!(c = atomic_load(&ctxs[ordinal])) && cu->DeviceGet(&dev, ordinal) == CUDA_SUCCESS &&
      (create || primary_active(dev))) {
    if (cu->DevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS) c = NULL;
    atomic_store(&ctxs[ordinal], c);
  }
  pthread_mutex_unlock(&ctx_mu);
  return c;
}

static bool use_ctx(int ordinal, bool create) {
  CUcontext c = ctx_of(ordinal, create);
  return c && cu->CtxSetCurrent(c) == CUDA_SUCCESS;
}

/* Host allocations and pointer queries work from any context under unified
 * addressing; keep the caller's if it has one, else take any that exists,
 * else (create) cuda:0's. */
static bool any_ctx(bool create) {
  CUcontext cur = NULL;
  if (cu->CtxGetCurrent(&cur) == CUDA_SUCCESS && cur) return true;
  for (int i = 0; i < nctx; i++)
    if (use_ctx(i, false)) return true;
  return create && use_ctx(0, true);
}

/* ---- pinned host memory ------------------------------------------------------------ */

/* cuMemAllocHost memory is page-locked and, with unified addressing, usable
 * by every device at the same address. */
static void *pinned_alloc(size_t bytes) {
  void *p = NULL;
  if (!any_ctx(true) || cu->MemAllocHost(&p, bytes) != CUDA_SUCCESS) return NULL;
  return p;
}

static void pinned_free(void *p) {
  if (any_ctx(true)) cu->MemFreeHost(p);
}

/* ---- pointer classification ---------------------------------------------------------- */

/* Asks for the attributes at once; an old driver without the pool attribute
 * (CUDA < 11.3) rejects the whole query, so retry without it. */
static bool query(const void *ptr, uint64_t *type, uint64_t *managed, int *ordinal, void **pool) {
  int attrs[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
  void *data[4] = {type, managed, ordinal, pool};
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;
  if (cu->PointerGetAttributes(4, attrs, data, p) == CUDA_SUCCESS) return true;
  *type = *managed = 0, *ordinal = -1, *pool = NULL;
  return cu->PointerGetAttributes(3, attrs, data, p) == CUDA_SUCCESS;
}

/* Pageable memory the driver does not know reads as type 0: not classified. */
static bool pointer_kind(const void *ptr, kern_memory_kind *kind, int *ordinal) {
  /* Zeroed wider than the driver writes (bool or 32-bit values). */
  uint64_t type = 0, managed = 0;
  void *pool = NULL;
  *ordinal = -1;
  if (!ptr || !any_ctx(false) || !query(ptr, &type, &managed, ordinal, &pool)) return false;
  if (managed && type)
    *kind = KERN_MEM_CUDA_MANAGED;
  else if (type == CU_MEMORYTYPE_HOST)
    *kind = KERN_MEM_PINNED_HOST;
  else if ((type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) && pool)
    *kind = KERN_MEM_CUDA_MEMPOOL;
  else if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED)
    *kind = KERN_MEM_CUDA_DEVICE;
  else
    return false;
  if (*kind == KERN_MEM_PINNED_HOST) *ordinal = -1;
  return true;
}

/* ---- IPC ------------------------------------------------------------------------------- */

static kern_status ipc_handle(int ordinal, const void *base, void *out) {
  if (!use_ctx(ordinal, true))
    return err_set(KERN_ERR_CUDA, "kern_array_ipc_handle: cannot enter the context of cuda:%d",
                   ordinal);
  CUresult r = cu->IpcGetMemHandle(out, (CUdeviceptr)(uintptr_t)base);
  if (r)
    return err_set(KERN_ERR_CUDA, "kern_array_ipc_handle: cuIpcGetMemHandle on cuda:%d failed: %s",
                   ordinal, rt_cu_error_text(r));
  return KERN_OK;
}

/* ---- setup ------------------------------------------------------------------------------ */

void rt_cuda_memory_init(const rt_cu_api *api) {
  int n = 0;
  cu = api;
  if (!cu || cu->DeviceGetCount(&n) != CUDA_SUCCESS || n <= 0) return;
  nctx = n > RT_MAX_DEVICES ? RT_MAX_DEVICES : n;
  rt_host.pinned_alloc = pinned_alloc;
  rt_host.pinned_free = pinned_free;
  if (cu->PointerGetAttributes) rt_host.pointer_kind = pointer_kind;
  if (cu->IpcGetMemHandle) rt_host.ipc_handle = ipc_handle;
}
