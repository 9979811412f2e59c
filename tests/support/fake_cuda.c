/* fake_cuda.c: a stand-in CUDA driver library, loaded by kern through
 * KERN_CUDA_LIB, for suites that check how kern uses the driver without a
 * GPU (test_startup.c: when CUDA starts, what a device's first use does).
 *
 * Requires: nothing (a shared library of its own, libfake_cuda.so).
 * Produces: every driver entry point kern requires (runtime/cuda/cuda_api.c),
 * cuDevicePrimaryCtxGetState and cuPointerGetAttributes (and memory pools with
 * FAKE_CUDA_POOLS set), for FAKE_CUDA_DEVICES GPUs (default 1) of
 * compute capability 8.0 whose "device memory" is host memory (copies, 2-D ones
 * included, are done at once; events only count; peers reach each other
 * unless FAKE_CUDA_NO_PEER is set); launches do
 * nothing. fake_cuda_calls(name) counts the calls of an entry point (by its
 * exported name) and fake_cuda_fail(name, result) makes it return result
 * from then on (0: succeed again); fake_cuda_last_launch tells the name of
 * the function the last launch ran and its grid and block. A test reaches
 * them with dlopen of the same path, which returns this already loaded
 * library.
 * Breaks: like the real driver, every call but cuDriverGetVersion,
 * cuGetError* and cuInit fails with CUDA_ERROR_NOT_INITIALIZED before cuInit,
 * and memory calls need a current context; nothing checks more than that.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int CUresult;
enum {
  OK = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  INVALID_CONTEXT = 201,
  MAX_DEVICES = 8,
  MAX_CALLS = 64
};

/* ---- counting and faults ------------------------------------------------------------ */

static struct {
  const char *name;
  _Atomic int calls;
  _Atomic int fail;
} table[MAX_CALLS];
static _Atomic int ncalls;
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static int slot(const char *name) {
  pthread_mutex_lock(&table_mu);
  int n = atomic_load(&ncalls), i = 0;
  while (i < n && strcmp(table[i].name, name) != 0) i++;
  if (i == n && n < MAX_CALLS) table[atomic_fetch_add(&ncalls, 1)].name = name;
  pthread_mutex_unlock(&table_mu);
  return i < MAX_CALLS ? i : MAX_CALLS - 1;
}

API int fake_cuda_calls(const char *name) { return atomic_load(&table[slot(name)].calls); }
API void fake_cuda_fail(const char *name, int result) {
  atomic_store(&table[slot(name)].fail, result);
}

static _Atomic bool initialized;

/* Counts the call; its injected fault, else NOT_INITIALIZED before cuInit, else 0. */
static CUresult enter(const char *name, bool needs_init) {
  int i = slot(name);
  atomic_fetch_add(&table[i].calls, 1);
  int fail = atomic_load(&table[i].fail);
  if (fail) return fail;
  return needs_init && !atomic_load(&initialized) ? NOT_INITIALIZED : OK;
}
#define ENTER(needs_init)                                                                          \
  do {                                                                                             \
    CUresult r_ = enter(__func__, needs_init);                                                     \
    if (r_) return r_;                                                                             \
  } while (0)

/* ---- devices and contexts -------------------------------------------------------------- */

typedef struct Ctx {
  int ordinal;
  _Atomic int refs;
} Ctx;
static Ctx ctxs[MAX_DEVICES];
static _Thread_local Ctx *current;

static int ndevices(void) {
  const char *s = getenv("FAKE_CUDA_DEVICES");
  int n = s ? atoi(s) : 1;
  return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

static CUresult need_ctx(void) { return current ? OK : INVALID_CONTEXT; }

API CUresult cuInit(unsigned flags) {
  ENTER(false);
  atomic_store(&initialized, flags == 0);
  return flags == 0 ? OK : INVALID_VALUE;
}
API CUresult cuDriverGetVersion(int *v) {
  ENTER(false);
  *v = 12040;
  return OK;
}
API CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_FAKE";
  return OK;
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == OUT_OF_MEMORY ? "out of memory" : "an error the fake driver was told to return";
  return OK;
}
API CUresult cuDeviceGetCount(int *n) {
  ENTER(true);
  *n = ndevices();
  return OK;
}
API CUresult cuDeviceGet(int *d, int ordinal) {
  ENTER(true);
  if (ordinal < 0 || ordinal >= ndevices()) return INVALID_VALUE;
  *d = ordinal;
  return OK;
}
API CUresult cuDeviceGetName(char *name, int len, int d) {
  ENTER(true);
  snprintf(name, (size_t)len, "Fake GPU %d", d);
  return OK;
}
/* Compute capability 8.0, 4 SMs, unified addressing, managed memory; memory
 * pools only with FAKE_CUDA_POOLS set. */
API CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  ENTER(true);
  (void)d;
  switch (attr) {
    case 1: *v = 1024; break;                                /* max threads per block */
    case 16: *v = 4; break;                                  /* multiprocessors */
    case 75: *v = 8; break;                                  /* compute capability 8.0 */
    case 41:                                                 /* unified addressing */
    case 83: *v = 1; break;                                  /* managed memory */
    case 115: *v = getenv("FAKE_CUDA_POOLS") != NULL; break; /* memory pools */
    default: *v = 0;
  }
  return OK;
}
API CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) {
  ENTER(true);
  (void)d;
  *bytes = (size_t)1 << 30;
  return OK;
}
/* Every pair of GPUs can reach each other, unless FAKE_CUDA_NO_PEER is set. */
API CUresult cuDeviceCanAccessPeer(int *can, int a, int b) {
  ENTER(true);
  *can = a != b && !getenv("FAKE_CUDA_NO_PEER");
  return OK;
}
API CUresult cuDevicePrimaryCtxRetain(Ctx **c, int d) {
  ENTER(true);
  ctxs[d].ordinal = d;
  atomic_fetch_add(&ctxs[d].refs, 1);
  *c = &ctxs[d];
  return OK;
}
API CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  ENTER(true);
  atomic_fetch_sub(&ctxs[d].refs, 1);
  return OK;
}
API CUresult cuDevicePrimaryCtxGetState(int d, unsigned *flags, int *active) {
  ENTER(true);
  *flags = 0;
  *active = atomic_load(&ctxs[d].refs) > 0;
  return OK;
}
API CUresult cuCtxSetCurrent(Ctx *c) {
  ENTER(true);
  current = c;
  return OK;
}
API CUresult cuCtxGetCurrent(Ctx **c) {
  ENTER(true);
  *c = current;
  return OK;
}
API CUresult cuCtxSynchronize(void) {
  ENTER(true);
  return need_ctx();
}
API CUresult cuCtxEnablePeerAccess(Ctx *c, unsigned flags) {
  ENTER(true);
  (void)c, (void)flags;
  return OK;
}
API CUresult cuCtxDisablePeerAccess(Ctx *c) {
  ENTER(true);
  (void)c;
  return OK;
}

/* ---- streams and memory: host memory, copies done at once ----------------------------------- */

API CUresult cuStreamCreate(void **s, unsigned flags) {
  ENTER(true);
  (void)flags;
  *s = malloc(1);
  return need_ctx();
}
API CUresult cuStreamDestroy_v2(void *s) {
  ENTER(true);
  free(s);
  return OK;
}
API CUresult cuStreamSynchronize(void *s) {
  ENTER(true);
  (void)s;
  return need_ctx();
}
API CUresult cuStreamQuery(void *s) {
  ENTER(true);
  (void)s;
  return OK;
}
/* Live "device" allocations stay listed, like memory a real driver owns: kern
 * abandons a poisoned device's memory, and a leak checker must not call that
 * a leak of the test. */
static void *live[1024];
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;

static void track(void *m, void *replace) {
  pthread_mutex_lock(&live_mu);
  for (int i = 0; i < 1024; i++)
    if (live[i] == replace) {
      live[i] = m;
      break;
    }
  pthread_mutex_unlock(&live_mu);
}

API CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  ENTER(true);
  if (need_ctx()) return INVALID_CONTEXT;
  void *m = calloc(1, n ? n : 1);
  if (m) track(m, NULL);
  *p = (unsigned long long)(size_t)m;
  return m ? OK : OUT_OF_MEMORY;
}
API CUresult cuMemFree_v2(unsigned long long p) {
  ENTER(true);
  track(NULL, (void *)(size_t)p);
  free((void *)(size_t)p);
  return OK;
}
/* Stream-ordered memory: at once, as cuMemAlloc; each device's default pool
 * keeps only its release threshold, which fake_cuda_pool_threshold reads and,
 * given a value >= 0, sets (as a program would before kern's first use). */
API CUresult cuMemAllocAsync(unsigned long long *p, size_t n, void *s) {
  (void)s;
  return cuMemAlloc_v2(p, n);
}
API CUresult cuMemFreeAsync(unsigned long long p, void *s) {
  (void)s;
  return cuMemFree_v2(p);
}
typedef struct Pool {
  _Atomic unsigned long long release_threshold;
} Pool;
static Pool pools[MAX_DEVICES];
API CUresult cuDeviceGetDefaultMemPool(Pool **pool, int d) {
  ENTER(true);
  if (d < 0 || d >= ndevices()) return INVALID_VALUE;
  *pool = &pools[d];
  return OK;
}
API CUresult cuMemPoolGetAttribute(Pool *pool, int attr, void *value) {
  ENTER(true);
  if (attr != 4) return INVALID_VALUE; /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD only */
  *(unsigned long long *)value = atomic_load(&pool->release_threshold);
  return OK;
}
API CUresult cuMemPoolSetAttribute(Pool *pool, int attr, void *value) {
  ENTER(true);
  if (attr != 4) return INVALID_VALUE;
  atomic_store(&pool->release_threshold, *(unsigned long long *)value);
  return OK;
}
API long long fake_cuda_pool_threshold(int d, long long set) {
  if (set >= 0) atomic_store(&pools[d].release_threshold, (unsigned long long)set);
  return (long long)atomic_load(&pools[d].release_threshold);
}
API CUresult cuMemAllocManaged(unsigned long long *p, size_t n, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(p, n);
}
API CUresult cuMemAllocHost_v2(void **p, size_t n) {
  ENTER(true);
  if (need_ctx()) return INVALID_CONTEXT;
  *p = calloc(1, n ? n : 1);
  return *p ? OK : OUT_OF_MEMORY;
}
API CUresult cuMemFreeHost(void *p) {
  ENTER(true);
  free(p);
  return OK;
}
API CUresult cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t n, void *s) {
  ENTER(true);
  (void)s;
  memmove((void *)(size_t)dst, (const void *)(size_t)src, n);
  return need_ctx();
}
/* CUDA_MEMCPY2D (cuda.h); host, device and unified pointers are all host memory here. */
typedef struct Memcpy2D {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  unsigned long long srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  unsigned long long dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} Memcpy2D;
API CUresult cuMemcpy2DAsync_v2(const Memcpy2D *p, void *s) {
  ENTER(true);
  (void)s;
  if (p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes) return INVALID_VALUE;
  const char *src = p->srcMemoryType == 1 ? p->srcHost : (const char *)(size_t)p->srcDevice;
  char *dst = p->dstMemoryType == 1 ? p->dstHost : (char *)(size_t)p->dstDevice;
  for (size_t r = 0; r < p->Height; r++)
    memmove(dst + r * p->dstPitch, src + r * p->srcPitch, p->WidthInBytes);
  return need_ctx();
}
/* Events: work is done at once, so they only count. */
static int event_token;
API CUresult cuEventCreate(void **e, unsigned flags) {
  ENTER(true);
  (void)flags;
  *e = &event_token;
  return need_ctx();
}
API CUresult cuEventRecord(void *e, void *s) {
  ENTER(true);
  (void)e, (void)s;
  return need_ctx();
}
API CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
  ENTER(true);
  (void)s, (void)e, (void)flags;
  return need_ctx();
}
API CUresult cuEventDestroy_v2(void *e) {
  ENTER(true);
  (void)e;
  return OK;
}
API CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *s) {
  ENTER(true);
  (void)s;
  memset((void *)(size_t)p, v, n);
  return need_ctx();
}
API CUresult cuMemsetD32Async(unsigned long long p, unsigned v, size_t n, void *s) {
  ENTER(true);
  (void)s;
  for (size_t i = 0; i < n; i++) memcpy((char *)(size_t)p + 4 * i, &v, 4);
  return need_ctx();
}
API CUresult cuPointerGetAttribute(void *out, int attr, unsigned long long p) {
  ENTER(true);
  (void)out, (void)attr, (void)p;
  return INVALID_VALUE; /* not memory this driver knows */
}
/* Every pointer is memory this driver does not know (type 0), asked in a context. */
API CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data, unsigned long long p) {
  ENTER(true);
  (void)attrs, (void)data, (void)p, (void)n;
  return need_ctx();
}

/* ---- modules and launches: accepted, and nothing runs -------------------------------------------- */

static int module_token;

/* Every function name asked for is in the module; a CUfunction is its slot. */
enum { MAX_FUNCTIONS = 256, NAME_MAX_LEN = 1100 };
static char functions[MAX_FUNCTIONS][NAME_MAX_LEN];
static int nfunctions = 0, last_function = -1;
static unsigned last_dims[6];
static pthread_mutex_t functions_mu = PTHREAD_MUTEX_INITIALIZER;

API CUresult cuModuleLoadData(void **m, const void *image) {
  ENTER(true);
  (void)image;
  *m = &module_token;
  return need_ctx();
}
API CUresult cuModuleUnload(void *m) {
  ENTER(true);
  (void)m;
  return OK;
}
API CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  ENTER(true);
  (void)m;
  pthread_mutex_lock(&functions_mu);
  int i = 0;
  while (i < nfunctions && strcmp(functions[i], name) != 0) i++;
  if (i == nfunctions && i < MAX_FUNCTIONS)
    snprintf(functions[nfunctions++], NAME_MAX_LEN, "%s", name);
  pthread_mutex_unlock(&functions_mu);
  if (i == MAX_FUNCTIONS) return OUT_OF_MEMORY;
  *f = functions[i];
  return OK;
}
API CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, void *s, void **params,
                            void **extra) {
  ENTER(true);
  (void)shared, (void)s, (void)params, (void)extra;
  pthread_mutex_lock(&functions_mu);
  last_function = (int)(((char(*)[NAME_MAX_LEN])f) - functions);
  unsigned d[6] = {gx, gy, gz, bx, by, bz};
  memcpy(last_dims, d, sizeof d);
  pthread_mutex_unlock(&functions_mu);
  return need_ctx();
}
/* The last launch's function name (into name, cap bytes) and grid and block
 * (dims[0..2], dims[3..5]); false before any launch. */
API bool fake_cuda_last_launch(char *name, size_t cap, unsigned dims[6]) {
  pthread_mutex_lock(&functions_mu);
  bool any = last_function >= 0 && last_function < nfunctions;
  if (any) {
    snprintf(name, cap, "%s", functions[last_function]);
    memcpy(dims, last_dims, sizeof last_dims);
  }
  pthread_mutex_unlock(&functions_mu);
  return any;
}
API CUresult cuFuncSetAttribute(void *f, int attribute, int value) {
  ENTER(true);
  (void)f, (void)attribute, (void)value;
  return OK;
}
API CUresult cuOccupancyMaxPotentialBlockSize(int *grid, int *block, void *f, size_t (*fn)(int),
                                              size_t shared, int limit) {
  ENTER(true);
  (void)f, (void)fn, (void)shared, (void)limit;
  *grid = 4, *block = 256;
  return OK;
}
