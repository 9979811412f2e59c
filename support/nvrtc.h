/* nvrtc.h: the NVRTC entry points kern uses, loaded with dlopen.
 *
 * libkern never links against CUDA: these declarations mirror nvrtc.h's ABI
 * for the few types used, and the functions are resolved at run time (a
 * missing library or symbol: NVRTC is absent, and *why says why). For the
 * toolchain (nvrtc.c) and the CUDA backend's own small programs
 * (runtime/cuda/capture.c); everything else uses toolchain.h.
 */
#ifndef KERN_NVRTC_H
#define KERN_NVRTC_H

#include <stddef.h>

typedef int nvrtcResult; /* NVRTC_SUCCESS = 0 */
typedef struct _nvrtcProgram *nvrtcProgram;

typedef struct tc_nvrtc_api {
  void *lib;
  nvrtcResult (*Version)(int *, int *);
  const char *(*GetErrorString)(nvrtcResult);
  nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                               const char *const *);
  nvrtcResult (*DestroyProgram)(nvrtcProgram *);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetPTX)(nvrtcProgram, char *);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*GetNumSupportedArchs)(int *);
  nvrtcResult (*GetSupportedArchs)(int *);
} tc_nvrtc_api;

/* Loads NVRTC once (thread-safe): $KERN_NVRTC (a path; empty hides NVRTC),
 * $CUDA_HOME/lib64, the toolkit found at build time, /usr/local/cuda/lib64,
 * then the loader's path. NULL when absent; *why says why. */
const tc_nvrtc_api *tc_nvrtc_load(const char **why);

#endif
