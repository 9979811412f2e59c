/* nvrtc.c: NVRTC, found at run time: loading it, its version, compiling CUDA
 * source to CUBIN or PTX, and the places of the CUDA toolkit.
 *
 * Requires: dl.c; nothing at build time (the toolkit kern was built with, if
 * any, is one more place to look). Produces: tc_nvrtc_load,
 * tc_nvrtc_available, tc_nvrtc_file, tc_nvrtc_version, tc_nvrtc_compile,
 * tc_cuda_toolkit_path. Breaks: NVRTC is loaded once and never unloaded; a
 * missing library or symbol is reported through *why, never fatal.
 */
#include "nvrtc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl.h"
#include "error.h"
#include "toolchain.h"

#define NV(field, sym, req)                                                                        \
  { sym, offsetof(tc_nvrtc_api, field), req }
static const DlSym nvrtc_syms[] = {
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

static tc_nvrtc_api nv;
static const char *nv_why;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

bool tc_cuda_toolkit_path(int i, const char *rel, char *out, size_t n) {
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
    void *lib = *env ? dl_open(env, RTLD_NOW | RTLD_LOCAL) : NULL; /* "" hides NVRTC */
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
  for (int i = 0; tc_cuda_toolkit_path(i, "lib64/libnvrtc.so", path, sizeof path); i++) {
    void *lib = dl_open(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  const char *names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dl_open(names[i], RTLD_NOW | RTLD_LOCAL);
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
  const char *missing =
      dl_resolve(nv.lib, &nv, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0]);
  if (missing) {
    static char msg[160];
    snprintf(msg, sizeof msg, "NVRTC is too old: it lacks %s", missing);
    nv_why = msg;
    dl_close(nv.lib);
    nv.lib = NULL;
  }
}

const tc_nvrtc_api *tc_nvrtc_load(const char **why) {
  pthread_once(&nv_once, nv_load_once);
  if (why) *why = nv_why;
  return nv.lib ? &nv : NULL;
}

bool tc_nvrtc_available(const char **why) { return tc_nvrtc_load(why) != NULL; }

/* Through one of its functions: dladdr names the library it lives in. */
const char *tc_nvrtc_file(void) {
  Dl_info info;
  const tc_nvrtc_api *nv = tc_nvrtc_load(NULL);
  return nv && dladdr((void *)nv->Version, &info) && info.dli_fname ? info.dli_fname : NULL;
}

int tc_nvrtc_version(void) {
  int major = 0, minor = 0;
  if (!tc_nvrtc_load(NULL) || nv.Version(&major, &minor) != 0) return 0;
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
  if (r != 0) return err_set(KERN_ERR_COMPILE, "NVRTC: %s", nv.GetErrorString(r));
  *out = malloc(n + 1);
  if (!*out) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory for NVRTC output");
  r = cubin ? nv.GetCUBIN(prog, *out) : nv.GetPTX(prog, *out);
  (*out)[n] = 0;
  *len = n;
  if (r == 0) return KERN_OK;
  free(*out);
  *out = NULL;
  return err_set(KERN_ERR_COMPILE, "NVRTC: %s", nv.GetErrorString(r));
}

int tc_nvrtc_compile(const char *source, const char *name, int arch, bool want_cubin,
                     unsigned flags, char **out, size_t *out_len, bool *is_ptx) {
  const char *why;
  if (!tc_nvrtc_load(&why)) return err_set(KERN_ERR_UNSUPPORTED, "%s", why);
  bool exact;
  int use = pick_arch(arch, &exact);
  if (!use)
    return err_set(KERN_ERR_UNSUPPORTED, "NVRTC cannot compile for sm_%d or any older arch", arch);
  bool cubin = want_cubin && exact && nv.GetCUBIN;
  char archopt[64];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", use);
  /* --fmad=false: a*b+c rounds twice, as on the CPU (-ffp-contract=off), so
   * both devices give the same bits; a fast-math module gives that up. */
  const char *opts[] = {archopt,
                        "-default-device",
                        "--std=c++17",
                        "-w",
                        flags & TC_NVRTC_FAST_MATH ? "--use_fast_math" : "--fmad=false",
                        "-lineinfo"};
  int nopts = flags & TC_NVRTC_DEBUG ? 6 : 5;
  nvrtcProgram prog;
  nvrtcResult r = nv.CreateProgram(&prog, source, name, 0, NULL, NULL);
  if (r != 0) return err_set(KERN_ERR_COMPILE, "NVRTC: %s", nv.GetErrorString(r));
  r = nv.CompileProgram(prog, nopts, opts);
  int status;
  if (r != 0) {
    char *log = program_log(prog);
    status = err_text(KERN_ERR_COMPILE,
                      "NVRTC failed to compile the generated CUDA (" ERR_BUG_REPORT "):\n",
                      log ? log : "");
    free(log);
  } else {
    status = fetch_output(prog, cubin, out, out_len);
    *is_ptx = !cubin;
  }
  nv.DestroyProgram(&prog);
  return status;
}
