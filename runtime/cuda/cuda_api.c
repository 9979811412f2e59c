/* cuda_api.c: finds libcuda at run time and resolves its entry points.
 *
 * Requires nothing at build time (support/dl.c resolves the table). Produces
 * the rt_cu_api table (loaded once, never unloaded) and rt_cu_error_text. A
 * missing library or symbol is reported through *why, never fatal: kern then
 * has no CUDA devices. NVRTC is the toolchain's (support/nvrtc.c).
 */
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl.h"

#define CU(field, sym, req)                                                                        \
  { sym, offsetof(rt_cu_api, field), req }
static const DlSym cu_syms[] = {
    CU(Init, "cuInit", true),
    CU(DriverGetVersion, "cuDriverGetVersion", true),
    CU(GetErrorName, "cuGetErrorName", true),
    CU(GetErrorString, "cuGetErrorString", true),
    CU(DeviceGetCount, "cuDeviceGetCount", true),
    CU(DeviceGet, "cuDeviceGet", true),
    CU(DeviceGetName, "cuDeviceGetName", true),
    CU(DeviceGetAttribute, "cuDeviceGetAttribute", true),
    CU(DeviceTotalMem, "cuDeviceTotalMem_v2", true),
    CU(DeviceCanAccessPeer, "cuDeviceCanAccessPeer", true),
    CU(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", true),
    CU(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", true),
    CU(DevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState", false),
    CU(DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", false),
    CU(CtxSetCurrent, "cuCtxSetCurrent", true),
    CU(CtxGetCurrent, "cuCtxGetCurrent", true),
    CU(CtxSynchronize, "cuCtxSynchronize", true),
    CU(CtxEnablePeerAccess, "cuCtxEnablePeerAccess", true),
    CU(CtxDisablePeerAccess, "cuCtxDisablePeerAccess", true),
    CU(StreamCreate, "cuStreamCreate", true),
    CU(StreamDestroy, "cuStreamDestroy_v2", true),
    CU(StreamSynchronize, "cuStreamSynchronize", true),
    CU(StreamQuery, "cuStreamQuery", true),
    CU(MemAlloc, "cuMemAlloc_v2", true),
    CU(MemFree, "cuMemFree_v2", true),
    CU(MemAllocManaged, "cuMemAllocManaged", true),
    CU(MemAllocHost, "cuMemAllocHost_v2", true),
    CU(MemFreeHost, "cuMemFreeHost", true),
    CU(MemAllocAsync, "cuMemAllocAsync", false),
    CU(MemFreeAsync, "cuMemFreeAsync", false),
    CU(MemcpyAsync, "cuMemcpyAsync", true),
    CU(Memcpy2DAsync, "cuMemcpy2DAsync_v2", true),
    CU(EventCreate, "cuEventCreate", true),
    CU(EventRecord, "cuEventRecord", true),
    CU(StreamWaitEvent, "cuStreamWaitEvent", true),
    CU(EventDestroy, "cuEventDestroy_v2", true),
    CU(MemsetD8Async, "cuMemsetD8Async", true),
    CU(MemsetD32Async, "cuMemsetD32Async", true),
    CU(PointerGetAttribute, "cuPointerGetAttribute", true),
    CU(ModuleLoadData, "cuModuleLoadData", true),
    CU(ModuleUnload, "cuModuleUnload", true),
    CU(ModuleGetFunction, "cuModuleGetFunction", true),
    CU(LaunchKernel, "cuLaunchKernel", true),
    CU(OccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize", true),
    CU(FuncSetAttribute, "cuFuncSetAttribute", false),
    CU(FuncGetAttribute, "cuFuncGetAttribute", false),
    CU(StreamBeginCapture, "cuStreamBeginCapture_v2", false),
    CU(StreamEndCapture, "cuStreamEndCapture", false),
    CU(StreamIsCapturing, "cuStreamIsCapturing", false),
    CU(GraphInstantiate, "cuGraphInstantiateWithFlags", false),
    CU(GraphLaunch, "cuGraphLaunch", false),
    CU(GraphExecDestroy, "cuGraphExecDestroy", false),
    CU(GraphDestroy, "cuGraphDestroy", false),
    CU(MemPoolSetAccess, "cuMemPoolSetAccess", false),
    CU(MemPoolGetAttribute, "cuMemPoolGetAttribute", false),
    CU(MemPoolSetAttribute, "cuMemPoolSetAttribute", false),
    CU(PointerGetAttributes, "cuPointerGetAttributes", false),
    CU(IpcGetMemHandle, "cuIpcGetMemHandle", false),
};

static rt_cu_api cu;
static const char *cu_why;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* $KERN_CUDA_LIB (a path; "" hides the driver), else libcuda.so.1 on the loader's path. */
static void *open_driver(void) {
  const char *env = getenv("KERN_CUDA_LIB");
  if (!env) {
    void *lib = dl_open("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dl_open("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) cu_why = "the CUDA driver (libcuda.so.1) is not installed";
    return lib;
  }
  void *lib = *env ? dl_open(env, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!lib) {
    static char msg[600];
    const char *why = *env ? dlerror() : NULL;
    snprintf(msg, sizeof msg, "the CUDA driver KERN_CUDA_LIB='%.300s' %s%.200s", env,
             *env ? "could not be loaded: " : "is hidden (the variable is empty)", why ? why : "");
    cu_why = msg;
  }
  return lib;
}

static void cu_load_once(void) {
  cu.lib = open_driver();
  if (!cu.lib) return;
  const char *missing = dl_resolve(cu.lib, &cu, cu_syms, sizeof cu_syms / sizeof cu_syms[0]);
  if (missing) {
    static char msg[160];
    snprintf(msg, sizeof msg, "the CUDA driver is too old: it lacks %s", missing);
    cu_why = msg;
    dl_close(cu.lib);
    cu.lib = NULL;
  }
}

const rt_cu_api *rt_cu_load(const char **why) {
  pthread_once(&cu_once, cu_load_once);
  if (why) *why = cu_why;
  return cu.lib ? &cu : NULL;
}

bool rt_cu_in_process(void) {
  const char *env = getenv("KERN_CUDA_LIB");
  const char *const names[] = {env ? env : "libcuda.so.1", env ? NULL : "libcuda.so", NULL};
  for (int i = 0; names[i] && *names[i]; i++) {
    void *lib = dl_open(names[i], RTLD_NOW | RTLD_NOLOAD);
    if (lib) {
      dl_close(lib);
      return true;
    }
  }
  return false;
}

const char *rt_cu_error_text(CUresult r) {
  static _Thread_local char text[256];
  const char *name = NULL, *str = NULL;
  if (cu.lib) {
    cu.GetErrorName(r, &name);
    cu.GetErrorString(r, &str);
  }
  snprintf(text, sizeof text, "%s: %s (CUresult %d)", name ? name : "CUDA error",
           str ? str : "unknown error", r);
  return text;
}
