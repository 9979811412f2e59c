/* cuda_api.c: finds libcuda and libnvrtc at run time and resolves their entry points.
 *
 * Requires nothing at build time. Produces the rt_cu_api / rt_nvrtc_api tables
 * (loaded once, never unloaded) and rt_nvrtc_compile. A missing library or
 * symbol is reported through *why, never fatal: kern then has no CUDA devices.
 */
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "emit.h"

typedef struct Sym {
  const char *name;
  size_t offset;
  bool required;
} Sym;

#define CU(field, sym, req)                                                                        \
  { sym, offsetof(rt_cu_api, field), req }
static const Sym cu_syms[] = {
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
    CU(MemsetD8Async, "cuMemsetD8Async", true),
    CU(MemsetD32Async, "cuMemsetD32Async", true),
    CU(PointerGetAttribute, "cuPointerGetAttribute", true),
    CU(ModuleLoadData, "cuModuleLoadData", true),
    CU(ModuleUnload, "cuModuleUnload", true),
    CU(ModuleGetFunction, "cuModuleGetFunction", true),
    CU(LaunchKernel, "cuLaunchKernel", true),
    CU(OccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize", true),
    CU(StreamBeginCapture, "cuStreamBeginCapture_v2", false),
    CU(StreamEndCapture, "cuStreamEndCapture", false),
    CU(StreamIsCapturing, "cuStreamIsCapturing", false),
    CU(GraphInstantiate, "cuGraphInstantiateWithFlags", false),
    CU(GraphLaunch, "cuGraphLaunch", false),
    CU(GraphExecDestroy, "cuGraphExecDestroy", false),
    CU(GraphDestroy, "cuGraphDestroy", false),
    CU(MemPoolSetAccess, "cuMemPoolSetAccess", false),
    CU(PointerGetAttributes, "cuPointerGetAttributes", false),
    CU(IpcGetMemHandle, "cuIpcGetMemHandle", false),
};

#define NV(field, sym, req)                                                                        \
  { sym, offsetof(rt_nvrtc_api, field), req }
static const Sym nvrtc_syms[] = {
    NV(Version, "nvrtcVersion", true),
    NV(GetErrorString, "nvrtcGetErrorString", true),
    NV(CreateProgram, "nvrtcCreateProgram", true),
    NV(DestroyProgram, "nvrtcDestroyProgram", true),
    NV(CompileProgram, "nvrtcCompileProgram", true),
    NV(GetProgramLogSize, "nvrtcGetProgramLogSize", true),
    NV(GetProgramLog, "nvrtcGetProgramLog", true),
    NV(GetPTXSize, "nvrtcGetPTXSize", true),
    NV(GetPTX, "nvrtcGetPTX", true),
    NV(GetCUBINSize, "nvrtcGetCUBINSize", false),
    NV(GetCUBIN, "nvrtcGetCUBIN", false),
    NV(GetNumSupportedArchs, "nvrtcGetNumSupportedArchs", false),
    NV(GetSupportedArchs, "nvrtcGetSupportedArchs", false),
};

/* Resolves every symbol into the table; returns the first missing required one. */
static const char *resolve(void *lib, void *table, const Sym *syms, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *f = dlsym(lib, syms[i].name);
    if (!f && syms[i].required) return syms[i].name;
    memcpy((char *)table + syms[i].offset, &f, sizeof f);
  }
  return NULL;
}

static rt_cu_api cu;
static const char *cu_why;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* $KERN_CUDA_LIB (a path; "" hides the driver), else libcuda.so.1 on the loader's path. */
static void *open_driver(void) {
  const char *env = getenv("KERN_CUDA_LIB");
  if (!env) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) cu_why = "the CUDA driver (libcuda.so.1) is not installed";
    return lib;
  }
  void *lib = *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
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
  const char *missing = resolve(cu.lib, &cu, cu_syms, sizeof cu_syms / sizeof cu_syms[0]);
  if (missing) {
    static char msg[160];
    snprintf(msg, sizeof msg, "the CUDA driver is too old: it lacks %s", missing);
    cu_why = msg;
    dlclose(cu.lib);
    cu.lib = NULL;
  }
}

const rt_cu_api *rt_cu_load(const char **why) {
  pthread_once(&cu_once, cu_load_once);
  if (why) *why = cu_why;
  return cu.lib ? &cu : NULL;
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

static rt_nvrtc_api nv;
static const char *nv_why;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

bool rt_cuda_toolkit_path(int i, const char *rel, char *out, size_t n) {
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"),
#ifdef KERN_CUDA_HOME
                         KERN_CUDA_HOME,
#endif
                         "/usr/local/cuda"};
  for (size_t k = 0; k < sizeof homes / sizeof homes[0]; k++) {
    if (!homes[k] || !*homes[k] || strlen(homes[k]) + strlen(rel) + 2 > n) continue;
    if (i-- == 0) {
      snprintf(out, n, "%s/%s", homes[k], rel);
      return true;
    }
  }
  return false;
}

static void *open_nvrtc(void) {
  const char *env = getenv("KERN_NVRTC");
  if (env) {
    void *lib = *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL; /* "" hides NVRTC */
    if (!lib) {
      static char msg[600];
      const char *why = *env ? dlerror() : NULL;
      snprintf(msg, sizeof msg, "NVRTC KERN_NVRTC='%.300s' %s%.200s", env,
               *env ? "could not be loaded: " : "is hidden (the variable is empty)",
               why ? why : "");
      nv_why = msg;
    }
    return lib;
  }
  char path[4096];
  for (int i = 0; rt_cuda_toolkit_path(i, "lib64/libnvrtc.so", path, sizeof path); i++) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  const char *names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  return NULL;
}

static void nv_load_once(void) {
  nv.lib = open_nvrtc();
  if (!nv.lib) {
    if (!nv_why) nv_why = "NVRTC (libnvrtc.so) was not found: set KERN_NVRTC or CUDA_HOME";
    return;
  }
  const char *missing = resolve(nv.lib, &nv, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0]);
  if (missing) {
    static char msg[160];
    snprintf(msg, sizeof msg, "NVRTC is too old: it lacks %s", missing);
    nv_why = msg;
    dlclose(nv.lib);
    nv.lib = NULL;
  }
}

const rt_nvrtc_api *rt_nvrtc_load(const char **why) {
  pthread_once(&nv_once, nv_load_once);
  if (why) *why = nv_why;
  return nv.lib ? &nv : NULL;
}

int rt_nvrtc_version(void) {
  int major = 0, minor = 0;
  if (!rt_nvrtc_load(NULL) || nv.Version(&major, &minor) != 0) return 0;
  return major * 1000 + minor * 10;
}

/* The arch to compile for: exact (CUBIN) when NVRTC knows it, else the newest
 * known arch below it (PTX, which the driver JIT-compiles). 0 if none. */
static int pick_arch(int arch, bool *exact) {
  int n = 0, archs[128];
  *exact = false;
  if (!nv.GetNumSupportedArchs || nv.GetNumSupportedArchs(&n) != 0 || n <= 0 || n > 128)
    return arch; /* old NVRTC: assume it knows the arch */
  nv.GetSupportedArchs(archs);
  int best = 0;
  for (int i = 0; i < n; i++) {
    if (archs[i] == arch) *exact = true;
    if (archs[i] <= arch && archs[i] > best) best = archs[i];
  }
  return *exact ? arch : best;
}

static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (nv.GetProgramLogSize(prog, &n) != 0) return NULL;
  char *log = malloc(n + 1);
  if (log && nv.GetProgramLog(prog, log) != 0) log[0] = 0;
  if (log) log[n] = 0;
  return log;
}

static int fetch_output(nvrtcProgram prog, bool cubin, char **out, size_t *len) {
  size_t n = 0;
  nvrtcResult r = cubin ? nv.GetCUBINSize(prog, &n) : nv.GetPTXSize(prog, &n);
  if (r != 0) return rt_error(KERN_ERR_COMPILE, "NVRTC: %s", nv.GetErrorString(r));
  *out = malloc(n + 1);
  if (!*out) return rt_error(KERN_ERR_OUT_OF_MEMORY, "out of memory for NVRTC output");
  r = cubin ? nv.GetCUBIN(prog, *out) : nv.GetPTX(prog, *out);
  (*out)[n] = 0;
  *len = n;
  if (r == 0) return KERN_OK;
  free(*out);
  *out = NULL;
  return rt_error(KERN_ERR_COMPILE, "NVRTC: %s", nv.GetErrorString(r));
}

int rt_nvrtc_compile(const char *source, const char *name, int arch, bool want_cubin, bool debug,
                     char **out, size_t *out_len, bool *is_ptx) {
  const char *why;
  if (!rt_nvrtc_load(&why)) return rt_error(KERN_ERR_UNSUPPORTED, "%s", why);
  bool exact;
  int use = pick_arch(arch, &exact);
  if (!use)
    return rt_error(KERN_ERR_UNSUPPORTED, "NVRTC cannot compile for sm_%d or any older arch", arch);
  bool cubin = want_cubin && exact && nv.GetCUBIN;
  char archopt[64];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", use);
  /* --fmad=false: a*b+c rounds twice, as on the CPU (-ffp-contract=off), so
   * both devices give the same bits. */
  const char *opts[] = {archopt, "-default-device", "--std=c++17",
                        "-w",    "--fmad=false",    "-lineinfo"};
  int nopts = debug ? 6 : 5;
  nvrtcProgram prog;
  nvrtcResult r = nv.CreateProgram(&prog, source, name, 0, NULL, NULL);
  if (r != 0) return rt_error(KERN_ERR_COMPILE, "NVRTC: %s", nv.GetErrorString(r));
  r = nv.CompileProgram(prog, nopts, opts);
  int status;
  if (r != 0) {
    char *log = program_log(prog);
    status = rt_error_text(KERN_ERR_COMPILE,
                           "NVRTC failed to compile the generated CUDA (" EMIT_BUG_REPORT "):\n",
                           log ? log : "");
    free(log);
  } else {
    status = fetch_output(prog, cubin, out, out_len);
    *is_ptx = !cubin;
  }
  nv.DestroyProgram(&prog);
  return status;
}
