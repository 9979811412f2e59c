/* cuda_capture.c: graph capture on CUDA devices: stream capture, executable
 * graphs, in-place update, conditional nodes, captured fills.
 *
 * Requires: the driver table (cuda_api.c) plus optional graph entry points
 * resolved here, each checked at run time (a missing one makes its feature
 * KERN_ERR_UNSUPPORTED, never a load failure); cuda_backend.c's context and
 * stream helpers; NVRTC and libcudadevrt.a for the conditional-flag kernel.
 * Produces: rt_cuda_graph_ops, which capture.c drives, and the debug record
 * slots that launches inside a capture write.
 * Breaks: a capture records on the device's current stream at begin. A
 * conditional block captures its body on a second stream into the body graph
 * of a conditional node, and the device's work goes there until the block
 * ends. A small kernel copies the flag into the node's condition handle
 * before the node (and, for while, at the end of each body). Executables are
 * instantiated with auto-free-on-launch, so a graph whose pool allocations
 * outlive it can be replayed. Debug kernels inside a capture each get a
 * record slot; a replay of such a graph waits and reports the first failure.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_backend.h"
#include "nvrtc.h"
#include "toolchain.h"

typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUlinkState_st *CUlinkState;
typedef unsigned long long CUgraphConditionalHandle;

enum {
  NODE_CONDITIONAL = 13, /* CU_GRAPH_NODE_TYPE_CONDITIONAL */
  COND_IF = 0,
  COND_WHILE = 1,          /* CUgraphConditionalNodeType */
  SET_DEPENDENCIES = 1,    /* CU_STREAM_SET_CAPTURE_DEPENDENCIES */
  MODE_RELAXED = 2,        /* CU_STREAM_CAPTURE_MODE_RELAXED */
  AUTO_FREE_ON_LAUNCH = 1, /* CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH */
  JIT_CUBIN = 0,
  JIT_PTX = 1,
  JIT_LIBRARY = 4,
  NOT_SUPPORTED = 801, /* CUDA_ERROR_NOT_SUPPORTED */
  NSLOTS = 64,         /* debug records per capture */
  MAX_FRAMES = 8,
};

/* CUDA_CONDITIONAL_NODE_PARAMS and CUgraphNodeParams (cuda.h, 12.3+). */
typedef struct cond_params {
  CUgraphConditionalHandle handle;
  int type;
  unsigned size;
  CUgraph *phGraph_out;
  CUcontext ctx;
} cond_params;
typedef struct node_params {
  int type;
  int reserved0[3];
  union {
    long long reserved1[29];
    cond_params conditional;
  } u;
  long long reserved2;
} node_params;
typedef struct update_info {
  int result;
  CUgraphNode error_node, error_from;
} update_info;

/* Entry points beyond cuda_api.c's table, all optional. */
static struct {
  CUresult (*GetCaptureInfo3)(CUstream, int *, unsigned long long *, CUgraph *,
                              const CUgraphNode **, const void **, size_t *);
  CUresult (*GetCaptureInfo2)(CUstream, int *, unsigned long long *, CUgraph *,
                              const CUgraphNode **, size_t *);
  CUresult (*UpdateDeps2)(CUstream, CUgraphNode *, const void *, size_t, unsigned);
  CUresult (*UpdateDeps1)(CUstream, CUgraphNode *, size_t, unsigned);
  CUresult (*AddNode2)(CUgraphNode *, CUgraph, const CUgraphNode *, const void *, size_t,
                       node_params *);
  CUresult (*AddNode1)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, node_params *);
  CUresult (*CondHandleCreate)(CUgraphConditionalHandle *, CUgraph, CUcontext, unsigned, unsigned);
  CUresult (*BeginCaptureToGraph)(CUstream, CUgraph, const CUgraphNode *, const void *, size_t,
                                  int);
  CUresult (*ExecUpdate)(CUgraphExec, CUgraph, update_info *);
  CUresult (*ExchangeMode)(int *);
  CUresult (*LinkCreate)(unsigned, int *, void **, CUlinkState *);
  CUresult (*LinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned, int *, void **);
  CUresult (*LinkAddFile)(CUlinkState, int, const char *, unsigned, int *, void **);
  CUresult (*LinkComplete)(CUlinkState, void **, size_t *);
  CUresult (*LinkDestroy)(CUlinkState);
  CUresult (*MemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*MemsetD2D8Async)(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream);
  CUresult (*MemsetD2D16Async)(CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream);
  CUresult (*MemsetD2D32Async)(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream);
} x;

static const rt_cu_api *cu;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void sym(void *field, const char *name) {
  void *f = dlsym(cu->lib, name);
  memcpy(field, &f, sizeof f);
}

static void load_once(void) {
  cu = rt_cu_load(NULL);
  if (!cu) return;
  sym(&x.GetCaptureInfo3, "cuStreamGetCaptureInfo_v3");
  sym(&x.GetCaptureInfo2, "cuStreamGetCaptureInfo_v2");
  sym(&x.UpdateDeps2, "cuStreamUpdateCaptureDependencies_v2");
  sym(&x.UpdateDeps1, "cuStreamUpdateCaptureDependencies");
  sym(&x.AddNode2, "cuGraphAddNode_v2");
  sym(&x.AddNode1, "cuGraphAddNode");
  sym(&x.CondHandleCreate, "cuGraphConditionalHandleCreate");
  sym(&x.BeginCaptureToGraph, "cuStreamBeginCaptureToGraph");
  sym(&x.ExecUpdate, "cuGraphExecUpdate_v2");
  sym(&x.ExchangeMode, "cuThreadExchangeStreamCaptureMode");
  sym(&x.LinkCreate, "cuLinkCreate_v2");
  sym(&x.LinkAddData, "cuLinkAddData_v2");
  sym(&x.LinkAddFile, "cuLinkAddFile_v2");
  sym(&x.LinkComplete, "cuLinkComplete");
  sym(&x.LinkDestroy, "cuLinkDestroy");
  sym(&x.MemsetD16Async, "cuMemsetD16Async");
  sym(&x.MemsetD2D8Async, "cuMemsetD2D8Async");
  sym(&x.MemsetD2D16Async, "cuMemsetD2D16Async");
  sym(&x.MemsetD2D32Async, "cuMemsetD2D32Async");
}

static bool load(void) {
  pthread_once(&once, load_once);
  return cu && cu->StreamBeginCapture && cu->StreamEndCapture && cu->GraphInstantiate &&
         cu->GraphLaunch && cu->GraphExecDestroy && cu->GraphDestroy;
}

/* The first conditional-node entry point this driver lacks, or NULL. */
static const char *missing_conditional(void) {
  if (!x.GetCaptureInfo3 && !x.GetCaptureInfo2) return "cuStreamGetCaptureInfo_v2";
  if (!x.UpdateDeps2 && !x.UpdateDeps1) return "cuStreamUpdateCaptureDependencies";
  if (!x.AddNode2 && !x.AddNode1) return "cuGraphAddNode";
  if (!x.CondHandleCreate) return "cuGraphConditionalHandleCreate";
  if (!x.BeginCaptureToGraph) return "cuStreamBeginCaptureToGraph";
  if (!x.LinkCreate || !x.LinkAddData || !x.LinkAddFile || !x.LinkComplete || !x.LinkDestroy)
    return "cuLinkCreate_v2";
  return NULL;
}

static CUresult capture_info(CUstream s, CUgraph *g, const CUgraphNode **deps, size_t *n) {
  int status = 0;
  unsigned long long id = 0;
  if (x.GetCaptureInfo3) return x.GetCaptureInfo3(s, &status, &id, g, deps, NULL, n);
  return x.GetCaptureInfo2(s, &status, &id, g, deps, n);
}

static CUresult set_deps(CUstream s, CUgraphNode *nodes, size_t n) {
  if (x.UpdateDeps2) return x.UpdateDeps2(s, nodes, NULL, n, SET_DEPENDENCIES);
  return x.UpdateDeps1(s, nodes, n, SET_DEPENDENCIES);
}

static CUresult add_node(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t n,
                         node_params *p) {
  if (x.AddNode2) return x.AddNode2(node, g, deps, NULL, n, p);
  return x.AddNode1(node, g, deps, n, p);
}

/* ---- per-device state -------------------------------------------------------------- */

typedef struct frame {
  CUgraphNode node;
  CUstream body;
  CUgraphConditionalHandle handle;
  CUdeviceptr flag;
} frame;

typedef struct cu_cap {
  kern_device *dev;
  CUstream stream; /* the captured stream */
  int mode;        /* CU_STREAM_CAPTURE_MODE_* */
  frame frames[MAX_FRAMES];
  int depth;
  CUstream spare[MAX_FRAMES]; /* body streams, reused; destroyed at the end */
  int nspare;
  const kern_kernel *debug[NSLOTS]; /* the kernel of each debug record slot */
  int ndebug;
} cu_cap;

typedef struct cu_exec {
  CUgraphExec exec;
  const kern_kernel *debug[NSLOTS];
  int ndebug;
} cu_exec;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;        /* open[], slots[], setcond */
static pthread_mutex_t replay_mu = PTHREAD_MUTEX_INITIALIZER; /* debug replays share slots */
static cu_cap *open_caps[RT_MAX_DEVICES];
static kn_error *slots[RT_MAX_DEVICES]; /* device memory, NSLOTS records */
static CUmodule setcond_mod[RT_MAX_DEVICES];
static CUfunction setcond_fn[RT_MAX_DEVICES];

kn_error *rt_cuda_capture_debug_slot(kern_device *d, const kern_kernel *k) {
  kn_error *rec = NULL;
  pthread_mutex_lock(&mu);
  cu_cap *c = open_caps[d->index];
  if (c && slots[d->index]) {
    int i = c->ndebug < NSLOTS ? c->ndebug++
                               : NSLOTS - 1; /* past the last: shared, the first kernel named */
    if (!c->debug[i]) c->debug[i] = k;
    rec = &slots[d->index][i];
  }
  pthread_mutex_unlock(&mu);
  return rec;
}

/* ---- begin / end -------------------------------------------------------------------- */

static kern_status cu_begin(kern_device *d, kern_capture_mode mode, void **out) {
  if (!load())
    return err_set(KERN_ERR_UNSUPPORTED,
                   "graph capture on %s needs a CUDA driver with stream capture "
                   "(cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags)",
                   d->name);
  kern_status st = rt_cuda_enter(d);
  if (st) return st;
  CUdeviceptr p;
  /* Before the capture: cuMemAlloc is not allowed inside one. */
  if (!slots[d->index] && cu->MemAlloc(&p, NSLOTS * sizeof(kn_error)) == CUDA_SUCCESS)
    slots[d->index] = (kn_error *)(uintptr_t)p;
  cu_cap *c = calloc(1, sizeof *c);
  if (!c) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory starting a capture");
  c->dev = d;
  c->stream = rt_cuda_stream(d);
  c->mode = mode == KERN_CAPTURE_RELAXED        ? MODE_RELAXED
            : mode == KERN_CAPTURE_THREAD_LOCAL ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                                                : CU_STREAM_CAPTURE_MODE_GLOBAL;
  CUresult r = cu->StreamBeginCapture(c->stream, c->mode);
  if (r) {
    free(c);
    return rt_cuda_fail(d, r, "cuStreamBeginCapture on the device's current stream");
  }
  pthread_mutex_lock(&mu);
  open_caps[d->index] = c;
  pthread_mutex_unlock(&mu);
  *out = c;
  return KERN_OK;
}

/* Stops capturing on c's streams; the captured graph (or NULL) and the result. */
static CUresult stop(cu_cap *c, CUgraph *g) {
  pthread_mutex_lock(&mu);
  open_caps[c->dev->index] = NULL;
  pthread_mutex_unlock(&mu);
  rt_cuda_enter(c->dev);
  for (; c->depth > 0; c->depth--) {
    CUgraph body = NULL;
    cu->StreamEndCapture(c->frames[c->depth - 1].body, &body); /* owned by its node */
    c->spare[c->nspare++] = c->frames[c->depth - 1].body;
  }
  rt_cuda_set_capture_stream(c->dev, NULL);
  *g = NULL;
  CUresult r = cu->StreamEndCapture(c->stream, g);
  for (int i = 0; i < c->nspare; i++) cu->StreamDestroy(c->spare[i]);
  return r;
}

static void cu_abort(kern_device *d, void *cap) {
  (void)d;
  CUgraph g;
  stop(cap, &g);
  if (g) cu->GraphDestroy(g);
  free(cap);
}

static kern_status instantiate(kern_device *d, CUgraph g, CUgraphExec *out) {
  CUresult r = cu->GraphInstantiate(out, g, AUTO_FREE_ON_LAUNCH);
  return r ? rt_cuda_fail(d, r, "cuGraphInstantiateWithFlags") : KERN_OK;
}

/* Into a new executable, or (with *exec set) updating it, else rebuilding it. */
static kern_status finish(kern_device *d, cu_cap *c, CUgraph g, void **exec, bool *updated) {
  cu_exec *e = *exec;
  update_info info;
  if (e && x.ExecUpdate && x.ExecUpdate(e->exec, g, &info) == CUDA_SUCCESS) {
    if (updated) *updated = true;
  } else {
    CUgraphExec fresh;
    kern_status st = instantiate(d, g, &fresh);
    if (st) return st;
    if (!e && !(e = calloc(1, sizeof *e))) {
      cu->GraphExecDestroy(fresh);
      return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory finishing a capture");
    }
    if (e->exec)
      cu->GraphExecDestroy(e->exec); /* replays in flight finish first (the driver's rule) */
    e->exec = fresh;
  }
  memcpy(e->debug, c->debug, sizeof e->debug);
  e->ndebug = c->ndebug;
  *exec = e;
  return KERN_OK;
}

static kern_status cu_end(kern_device *d, void *cap, void **exec, bool *updated) {
  cu_cap *c = cap;
  CUgraph g;
  CUresult r = stop(c, &g);
  kern_status st = KERN_OK;
  if (r || !g)
    st = err_set(KERN_ERR_CAPTURE,
                 "the capture on %s was invalidated by an operation inside it that CUDA could "
                 "not record (%s); it is discarded and the device's stream is usable again",
                 d->name, rt_cu_error_text(r));
  else
    st = finish(d, c, g, exec, updated);
  if (g) cu->GraphDestroy(g); /* the executable keeps its own copy */
  free(c);
  return st;
}

/* ---- replay ---------------------------------------------------------------------------- */

/* Debug graphs: clear the records, replay, wait, hand the first failure in
 * capture order to the core. */
static kern_status launch_debug(kern_device *d, cu_exec *e, CUstream s, const kern_kernel **failed,
                                kn_error *rec) {
  kn_error recs[NSLOTS];
  int n = e->ndebug;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)slots[d->index];
  pthread_mutex_lock(&replay_mu);
  CUresult r = cu->MemsetD8Async(p, 0, (size_t)n * sizeof(kn_error), s);
  if (!r) r = cu->GraphLaunch(e->exec, s);
  if (!r) r = cu->MemcpyAsync((CUdeviceptr)(uintptr_t)recs, p, (size_t)n * sizeof(kn_error), s);
  if (!r) r = cu->StreamSynchronize(s);
  pthread_mutex_unlock(&replay_mu);
  if (r) return rt_cuda_fail(d, r, "cuGraphLaunch");
  for (int i = 0; i < n; i++)
    if (recs[i].flag) {
      *failed = e->debug[i];
      *rec = recs[i];
      return KERN_OK;
    }
  return KERN_OK;
}

static kern_status cu_launch(kern_device *d, void *exec, const kern_kernel **failed,
                             kn_error *rec) {
  cu_exec *e = exec;
  kern_status st = rt_cuda_enter(d);
  if (st) return st;
  CUstream s = rt_cuda_stream(d);
  if (e->ndebug && slots[d->index]) return launch_debug(d, e, s, failed, rec);
  CUresult r = cu->GraphLaunch(e->exec, s);
  return r ? rt_cuda_fail(d, r, "cuGraphLaunch") : KERN_OK;
}

static void cu_exec_free(kern_device *d, void *exec) {
  cu_exec *e = exec;
  if (rt_cuda_enter(d) == KERN_OK) cu->GraphExecDestroy(e->exec);
  free(e);
}

/* ---- fills ------------------------------------------------------------------------------ */

/* The value is its first u bytes repeated. */
static bool repeats(const unsigned char *v, size_t n, size_t u) {
  for (size_t i = u; i < n; i++)
    if (v[i] != v[i % u]) return false;
  return true;
}

static unsigned unit_value(const unsigned char *v, size_t u) {
  if (u == 1) return v[0];
  if (u == 2) {
    uint16_t h;
    memcpy(&h, v, 2);
    return h;
  }
  uint32_t w;
  memcpy(&w, v, 4);
  return w;
}

static CUresult memset_1d(CUdeviceptr p, size_t u, unsigned v, size_t count, CUstream s) {
  if (u == 1) return cu->MemsetD8Async(p, (unsigned char)v, count, s);
  if (u == 2)
    return x.MemsetD16Async ? x.MemsetD16Async(p, (unsigned short)v, count, s) : NOT_SUPPORTED;
  return cu->MemsetD32Async(p, v, count, s);
}

/* Column k of the element (u bytes) down all elements: a 2D memset of width 1. */
static CUresult memset_column(CUdeviceptr p, size_t pitch, size_t u, unsigned v, size_t n,
                              CUstream s) {
  if (u == 1)
    return x.MemsetD2D8Async ? x.MemsetD2D8Async(p, pitch, (unsigned char)v, 1, n, s)
                             : NOT_SUPPORTED;
  if (u == 2)
    return x.MemsetD2D16Async ? x.MemsetD2D16Async(p, pitch, (unsigned short)v, 1, n, s)
                              : NOT_SUPPORTED;
  return x.MemsetD2D32Async ? x.MemsetD2D32Async(p, pitch, v, 1, n, s) : NOT_SUPPORTED;
}

/* Memset nodes of 1, 2 or 4 bytes: one for a value that repeats its first
 * unit (zero, most scalars), else one 2D memset per unit of the element. */
static kern_status cu_fill(kern_device *d, void *cap, kern_array *a, const void *value) {
  (void)cap;
  const unsigned char *v = value;
  size_t es = a->elem_size, n = a->nbytes / es;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)a->data;
  CUstream s = rt_cuda_stream(d);
  kern_status st = rt_cuda_enter(d);
  if (st) return st;
  for (size_t u = 1; u <= 4; u *= 2)
    if (es % u == 0 && p % u == 0 && repeats(v, es, u)) {
      CUresult r = memset_1d(p, u, unit_value(v, u), a->nbytes / u, s);
      return r ? rt_cuda_fail(d, r, "recording a fill (cuMemsetAsync)") : KERN_OK;
    }
  size_t u = es % 4 == 0 && p % 4 == 0 ? 4 : es % 2 == 0 && p % 2 == 0 ? 2 : 1;
  for (size_t k = 0; k < es; k += u) {
    CUresult r = memset_column(p + k, es, u, unit_value(v + k, u), n, s);
    if (r) return rt_cuda_fail(d, r, "recording a fill (cuMemsetD2DAsync)");
  }
  return KERN_OK;
}

/* ---- the conditional-flag kernel ---------------------------------------------------------- */

/* cudaGraphSetConditional lives in the device runtime (libcudadevrt.a), so
 * the kernel is compiled relocatable and linked by the driver's linker. */
static const char setcond_src[] =
    "typedef unsigned long long cudaGraphConditionalHandle;\n"
    "extern \"C\" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle h, unsigned int v);\n"
    "extern \"C\" __global__ void kern_set_conditional(cudaGraphConditionalHandle h, const int *flag) {\n"
    "  cudaGraphSetConditional(h, *flag != 0 ? 1u : 0u);\n"
    "}\n";

static bool devrt_path(char *out, size_t n) {
  for (int i = 0; tc_cuda_toolkit_path(i, "lib64/libcudadevrt.a", out, n); i++) {
    FILE *f = fopen(out, "rb");
    if (f) {
      fclose(f);
      return true;
    }
  }
  return false;
}

/* NVRTC, relocatable: CUBIN for sm_<arch> (cubin) or PTX. */
static char *compile_setcond(int arch, bool cubin, size_t *len) {
  const tc_nvrtc_api *nv = tc_nvrtc_load(NULL);
  if (!nv || (cubin && !nv->GetCUBIN)) return NULL;
  char opt[64];
  snprintf(opt, sizeof opt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", arch);
  const char *opts[] = {opt, "--relocatable-device-code=true", "-w"};
  nvrtcProgram prog;
  if (nv->CreateProgram(&prog, setcond_src, "kern_set_conditional.cu", 0, NULL, NULL)) return NULL;
  char *out = NULL;
  size_t n = 0;
  if (nv->CompileProgram(prog, 3, opts) == 0 &&
      (cubin ? nv->GetCUBINSize(prog, &n) : nv->GetPTXSize(prog, &n)) == 0 && n &&
      (out = malloc(n + 1))) {
    if ((cubin ? nv->GetCUBIN(prog, out) : nv->GetPTX(prog, out)) != 0) free(out), out = NULL;
  }
  nv->DestroyProgram(&prog);
  *len = n;
  return out;
}

static CUresult link_setcond(const char *image, size_t len, int type, const char *devrt,
                             CUmodule *mod) {
  CUlinkState ls;
  CUresult r = x.LinkCreate(0, NULL, NULL, &ls);
  if (r) return r;
  void *bin;
  size_t binlen;
  r = x.LinkAddData(ls, type, (void *)image, len, "kern_set_conditional", 0, NULL, NULL);
  if (!r) r = x.LinkAddFile(ls, JIT_LIBRARY, devrt, 0, NULL, NULL);
  if (!r) r = x.LinkComplete(ls, &bin, &binlen);
  if (!r) r = cu->ModuleLoadData(mod, bin);
  x.LinkDestroy(ls);
  return r;
}

static kern_status build_setcond(kern_device *d) {
  char devrt[4096];
  if (!devrt_path(devrt, sizeof devrt))
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_capture_if/while on %s need the CUDA device runtime "
                   "(lib64/libcudadevrt.a under CUDA_HOME); it was not found",
                   d->name);
  CUresult r = 1;
  for (int cubin = 1; cubin >= 0 && r; cubin--) {
    size_t len;
    char *image = compile_setcond(rt_cuda_arch(d), cubin, &len);
    if (image)
      r = link_setcond(image, len, cubin ? JIT_CUBIN : JIT_PTX, devrt, &setcond_mod[d->index]);
    free(image);
  }
  if (r)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_capture_if/while on %s: cannot build the kernel that sets "
                   "a conditional node's flag (NVRTC + libcudadevrt.a + the driver's linker): %s",
                   d->name, rt_cu_error_text(r));
  r = cu->ModuleGetFunction(&setcond_fn[d->index], setcond_mod[d->index], "kern_set_conditional");
  return r ? rt_cuda_fail(d, r, "cuModuleGetFunction") : KERN_OK;
}

/* Loads it once per device; module loading is not a capturable call, so the
 * thread relaxes its capture mode meanwhile. */
static kern_status setcond(kern_device *d, CUfunction *fn) {
  pthread_mutex_lock(&mu);
  kern_status st = KERN_OK;
  if (!setcond_fn[d->index]) {
    int mode = MODE_RELAXED;
    if (x.ExchangeMode) x.ExchangeMode(&mode);
    st = build_setcond(d);
    if (x.ExchangeMode) x.ExchangeMode(&mode);
  }
  *fn = setcond_fn[d->index];
  pthread_mutex_unlock(&mu);
  return st;
}

static CUresult set_flag(CUfunction fn, CUgraphConditionalHandle h, CUdeviceptr flag, CUstream s) {
  void *params[] = {&h, &flag};
  return cu->LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

/* ---- conditional blocks ------------------------------------------------------------------ */

static CUstream top_stream(const cu_cap *c) {
  return c->depth ? c->frames[c->depth - 1].body : c->stream;
}

/* Handle, flag kernel, then the conditional node after it; its body graph
 * is captured from a second stream until the block ends. */
static kern_status cu_cond_begin(kern_device *d, void *cap, bool is_while, kern_array *flag) {
  cu_cap *c = cap;
  const char *miss = missing_conditional();
  if (miss)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_capture_%s on %s needs CUDA conditional graph nodes (driver "
                   "12.4 or newer); this driver lacks %s",
                   is_while ? "while" : "if", d->name, miss);
  CUfunction fn;
  kern_status st = rt_cuda_enter(d);
  if (!st) st = setcond(d, &fn);
  if (st) return st;
  frame f = {.flag = (CUdeviceptr)(uintptr_t)flag->data};
  CUstream s = top_stream(c);
  CUgraph g, body;
  const CUgraphNode *deps;
  size_t n;
  CUresult r = capture_info(s, &g, &deps, &n);
  if (!r) r = x.CondHandleCreate(&f.handle, g, rt_cuda_context(d), 0, 0);
  if (!r) r = set_flag(fn, f.handle, f.flag, s);
  if (!r) r = capture_info(s, &g, &deps, &n);
  node_params p = {.type = NODE_CONDITIONAL};
  p.u.conditional =
      (cond_params){f.handle, is_while ? COND_WHILE : COND_IF, 1, NULL, rt_cuda_context(d)};
  if (!r) r = add_node(&f.node, g, deps, n, &p);
  if (r) return rt_cuda_fail(d, r, "adding a conditional node to the capture");
  body = p.u.conditional.phGraph_out[0];
  if (c->nspare)
    f.body = c->spare[--c->nspare];
  else if ((r = cu->StreamCreate(&f.body, CU_STREAM_NON_BLOCKING)))
    return rt_cuda_fail(d, r, "cuStreamCreate");
  r = x.BeginCaptureToGraph(f.body, body, NULL, NULL, 0, c->mode);
  if (r) {
    c->spare[c->nspare++] = f.body;
    return rt_cuda_fail(d, r, "cuStreamBeginCaptureToGraph (a conditional body)");
  }
  c->frames[c->depth++] = f;
  rt_cuda_set_capture_stream(d, f.body);
  return KERN_OK;
}

/* Always closes the block (capture.c counts it closed); a failure here
 * leaves a capture that kern_capture_end reports as invalidated. */
static kern_status cu_cond_end(kern_device *d, void *cap, bool is_while) {
  cu_cap *c = cap;
  frame f = c->frames[--c->depth];
  kern_status st = rt_cuda_enter(d);
  CUresult r = is_while ? set_flag(setcond_fn[d->index], f.handle, f.flag, f.body) : CUDA_SUCCESS;
  CUgraph body = NULL;
  CUresult r2 = cu->StreamEndCapture(f.body, &body); /* the body belongs to its node */
  c->spare[c->nspare++] = f.body;
  rt_cuda_set_capture_stream(d, c->depth ? top_stream(c) : NULL);
  if (!r) r = r2;
  if (!r) r = set_deps(top_stream(c), &f.node, 1);
  if (st) return st;
  return r ? rt_cuda_fail(d, r, "closing a conditional body") : KERN_OK;
}

const rt_graph_ops rt_cuda_graph_ops = {
    .begin = cu_begin,
    .end = cu_end,
    .abort = cu_abort,
    .launch = cu_launch,
    .exec_free = cu_exec_free,
    .cond_begin = cu_cond_begin,
    .cond_end = cu_cond_end,
    .fill = cu_fill,
};
