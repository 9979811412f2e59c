/* backend.h: the contract between the runtime's core and its device
 * backends (runtime/cpu/, runtime/cuda/).
 *
 * A backend is an rt_device_ops table. The core reaches it only through the
 * table (and init.c, which runs each backend's probe); a backend includes
 * this header, never core.h, and calls only what is declared here and in
 * base.h: the device table it registers into and the memory-kind and capture
 * rules (device.c), and compile-and-cache (compile.c), which turns a module
 * into the code a backend loads: a shared object or kernc build's entry
 * points for the CPU, a CUBIN or PTX image for a GPU.
 */
#ifndef KERN_RT_BACKEND_H
#define KERN_RT_BACKEND_H

#include <string.h>

#include "base.h"

struct Program;
struct Decl;

enum { RT_MAX_DEVICES = 32 };

typedef enum { RT_DEV_CPU, RT_DEV_CUDA } rt_device_kind;

typedef struct rt_code rt_code; /* a module compiled for one device: each backend
                                   casts its own type to and from it */
/* Where a module's code came from: the log's "(compiled)", "(cached)", "(kernc build)". */
typedef enum { RT_ORIGIN_COMPILED, RT_ORIGIN_CACHED, RT_ORIGIN_EMBEDDED } rt_origin;
typedef struct rt_launch rt_launch;
typedef struct rt_graph_ops rt_graph_ops;

/* ---- copies ------------------------------------------------------------------------------ */

/* A copy between two layouts of the same elements, as the core plans it
 * (exec.c): `blocks` blocks, each `height` rows of `width` contiguous bytes,
 * row r of a block at dst + r * dpitch and src + r * spitch (pitches >= 0, and
 * 0 when height is 1). The blocks' first rows are reached by up to three
 * loops, outermost first: n[k] steps of dstep[k] and sstep[k] bytes. A dense
 * copy is one block of one row. */
typedef struct rt_copy {
  char *dst;
  const char *src;
  bool dst_host, src_host;              /* which sides are host memory */
  const kern_device *dst_dev, *src_dev; /* the devices of the two arrays */
  size_t width, height;
  int64_t dpitch, spitch;
  int nouter;
  int64_t n[3], dstep[3], sstep[3];
} rt_copy;

static inline int64_t rt_copy_blocks(const rt_copy *c) {
  int64_t b = 1;
  for (int k = 0; k < c->nouter; k++) b *= c->n[k];
  return b;
}

/* Where block i (0 <= i < rt_copy_blocks) starts on each side. */
static inline void rt_copy_block(const rt_copy *c, int64_t i, char **dst, const char **src) {
  int64_t doff = 0, soff = 0;
  for (int k = c->nouter - 1; k >= 0; k--) {
    int64_t j = i % c->n[k];
    i /= c->n[k];
    doff += j * c->dstep[k];
    soff += j * c->sstep[k];
  }
  *dst = c->dst + doff;
  *src = c->src + soff;
}

/* Runs a copy whose two sides the calling thread may touch, row by row
 * (memmove: a one-row copy may overlap). */
static inline void rt_copy_host(const rt_copy *c) {
  int64_t nb = rt_copy_blocks(c);
  for (int64_t b = 0; b < nb; b++) {
    char *d;
    const char *s;
    rt_copy_block(c, b, &d, &s);
    for (size_t r = 0; r < c->height; r++)
      memmove(d + (int64_t)r * c->dpitch, s + (int64_t)r * c->spitch, c->width);
  }
}

/* ---- the ops table --------------------------------------------------------------------- */

/* What a backend provides. NULL entries mean "not supported" where that makes
 * sense (peer access on the CPU). Every function sets the error on failure. */
typedef struct rt_device_ops {
  /* Allocates bytes (> 0) with the allocator; *kind gets the memory kind. */
  void *(*alloc)(kern_device *, size_t bytes, kern_allocator, bool zero, kern_memory_kind *kind);
  void (*free)(kern_device *, void *ptr, size_t bytes, kern_memory_kind);
  /* A copy (rt_copy below) where one side is on this device, or both are.
   * The device queues it after the pending work of both arrays' devices and
   * orders later work of both after it; it returns once host memory in the
   * copy may be used again. */
  kern_status (*copy)(kern_device *, const rt_copy *);
  kern_status (*synchronize)(kern_device *);
  kern_status (*info)(const kern_device *, kern_device_info *);
  /* Allocators this device accepts. */
  bool (*allocator_ok)(const kern_device *, kern_allocator);
  /* Peer / pool access state (owner's memory usable from launch). */
  bool (*peer_enabled)(const kern_device *owner, const kern_device *launch);
  bool (*pool_access_enabled)(const kern_device *owner, const kern_device *launch);
  kern_status (*set_peer)(kern_device *target, kern_device *peer, bool on);
  kern_status (*set_pool_access)(kern_device *target, kern_device *peer, bool on);
  /* Makes a module's code for this device (with rt_module_binary), and says
   * where it came from (rt_binary.origin, for the log); code_free releases it. */
  kern_status (*compile)(kern_module *, kern_device *, rt_code **out, rt_origin *origin);
  void (*code_free)(rt_code *);
  /* Runs (or queues) one validated launch. A debug launch that finds an
   * error fills *L->ctx.err (cleared by the core before) and returns
   * KERN_OK: the core words the error (rt_debug_error). */
  kern_status (*launch)(const rt_launch *);
  /* Graph capture; NULL: the core records and replays in software (the CPU). */
  const rt_graph_ops *graph;
} rt_device_ops;

/* A backend's graph capture, which capture.c drives. `cap` is the backend's
 * open capture, `exec` its executable graph. */
struct rt_graph_ops {
  kern_status (*begin)(kern_device *, kern_capture_mode, void **cap);
  /* Ends the capture into a new executable (*exec); or, with *exec set,
   * updates it (*updated) or rebuilds it in place. The capture is gone
   * afterwards whatever the result. */
  kern_status (*end)(kern_device *, void *cap, void **exec, bool *updated);
  void (*abort)(kern_device *, void *cap);
  /* Replays the graph. A debug kernel that found an error sets *failed (its
   * kernel) and *rec and returns KERN_OK: the core words the error. */
  kern_status (*launch)(kern_device *, void *exec, const kern_kernel **failed, kn_error *rec);
  void (*exec_free)(kern_device *, void *exec);
  kern_status (*cond_begin)(kern_device *, void *cap, bool is_while, kern_array *flag);
  kern_status (*cond_end)(kern_device *, void *cap, bool is_while);
  /* Records a fill of a dense array of this device (host staging cannot be captured). */
  kern_status (*fill)(kern_device *, void *cap, kern_array *, const void *value);
};

/* ---- devices (device.c) ------------------------------------------------------------------ */

struct kern_device {
  rt_device_kind kind;
  int index;   /* in the device table */
  int ordinal; /* CUDA ordinal; -1 for the CPU */
  char name[16];
  const rt_device_ops *ops;
  _Atomic int allocator;           /* kern_allocator */
  _Atomic uint64_t capture;        /* the open graph capture's id, 0: none (capture.c writes it) */
  _Atomic uintptr_t capture_owner; /* its owner's rt_thread_token (set before capture) */
  _Atomic int capture_mode;        /* its kern_capture_mode (set before capture) */
  void *impl;                      /* the backend's state */
};

/* Registers a device found by a backend's probe (kern_init's, or a test's):
 * the CPU device with ordinal -1 is the one at index 0; kern_shutdown +
 * kern_init hands back the existing device of the same kind and ordinal.
 * NULL when the table is full or out of memory. */
kern_device *rt_device_add(rt_device_kind, int ordinal, const rt_device_ops *, void *impl);
/* The GPU backends' probe, which kern_init registers and rt_devices_probe_gpus
 * runs once per process; driver_loaded says whether the GPU driver is
 * already in the process (then a foreign pointer may be GPU memory). */
void rt_device_set_gpu_probe(void (*probe)(void), bool (*driver_loaded)(void));
/* Probes the GPUs unless done (thread-safe; logs how long it took); with
 * only_if_driver_loaded, only when the driver is already in the process.
 * True once probed: only then may the caller read what the probe set (the
 * device table's GPUs, rt_host). */
bool rt_devices_probe_gpus(bool only_if_driver_loaded);
/* The device table, as registered so far (GPUs once probed; see init.c). */
int rt_device_count(void);
kern_device *rt_device_at(int index); /* NULL outside the table */
/* The device named "cpu", "cuda" or "cuda:N"; NULL with the error set. */
kern_device *rt_device_find(const char *name);
kern_device *rt_cpu_device(void);
/* Why there are no CUDA devices (for messages); set by the GPU probe. */
const char *rt_cuda_absent_reason(void);
void rt_set_cuda_absent_reason(const char *why);
bool rt_device_is_host_kind(kern_memory_kind);

/* Host-side memory services of a GPU driver, installed by the CUDA backend
 * when a driver and a GPU are present (tests install stand-ins); NULL
 * entries: not available. */
typedef struct rt_host_services {
  void *(*pinned_alloc)(size_t bytes); /* KERN_ALLOC_PINNED on the CPU device */
  void (*pinned_free)(void *ptr);
  /* Classifies a pointer kern did not allocate (wrap); false if it cannot.
   * *ordinal gets the CUDA device of device, pool and managed memory (else -1). */
  bool (*pointer_kind)(const void *ptr, kern_memory_kind *kind, int *ordinal);
  /* Writes the 64-byte cuIpcMemHandle of a CUDA_DEVICE allocation's base. */
  kern_status (*ipc_handle)(int ordinal, const void *base, void *out);
} rt_host_services;
extern rt_host_services rt_host;

/* True while a graph capture is open on the device (begun by any thread). */
static inline bool rt_capture_active(const kern_device *d) {
  return d && atomic_load(&((kern_device *)d)->capture) != 0;
}
/* The calling thread, as a capture remembers its owner (device.c). */
uintptr_t rt_thread_token(void);
/* True while a capture on d records the calling thread's work. A backend
 * capture (CUDA) records the device's current stream, which every thread
 * shares; a software capture (the CPU, whose threads are its streams)
 * records only the thread that began it: another thread's work runs at once. */
static inline bool rt_capture_records(const kern_device *d) {
  if (!rt_capture_active(d)) return false;
  kern_device *m = (kern_device *)d;
  return d->ops->graph || atomic_load(&m->capture_owner) == rt_thread_token();
}
/* True while the calling thread must not do on d what a capture cannot
 * record (synchronize, host reads and writes, allocations): the recorded
 * threads always; every thread while a KERN_CAPTURE_GLOBAL capture is open
 * (CUDA's rule for calls that are unsafe during capture). */
static inline bool rt_capture_restricts(const kern_device *d) {
  return rt_capture_records(d) ||
         (rt_capture_active(d) &&
          atomic_load(&((kern_device *)d)->capture_mode) == KERN_CAPTURE_GLOBAL);
}
/* The open capture's id on the device (unique in the process), 0 when none. */
static inline uint64_t rt_capture_id(const kern_device *d) {
  return atomic_load(&((kern_device *)d)->capture);
}
/* KERN_ERR_CAPTURE naming the operation `what` refused on the capturing
 * device (worded for the recorded thread, or for another thread refused by
 * a KERN_CAPTURE_GLOBAL capture). */
kern_status rt_capture_refuse(const kern_device *, const char *what);

/* ---- arrays, modules, launches: what a backend reads --------------------------------------- */

struct kern_array {
  kern_device *device;
  kern_dtype dtype;
  int ndim;
  size_t elem_size;
  int64_t shape[4];   /* unused dims: 1 */
  int64_t strides[4]; /* bytes; unused dims: 0 */
  char *data;         /* element [0,...] */
  size_t nbytes;      /* elements * elem_size */
  kern_memory_kind kind;
  struct rt_storage *storage; /* refcounted owner of the memory; NULL for wrapped */
  bool is_view;
};

typedef struct rt_param {
  const char *name;
  const char *type; /* its kern type, for messages: "float32[]" */
  bool is_array;
  bool atomics;     /* arrays: atomics apply to it (the checker's finding) */
  int ndim;         /* arrays */
  kern_dtype dtype; /* value dtype, or element dtype for arrays */
  size_t size;      /* bytes in the args block */
  size_t offset;
} rt_param;

struct kern_kernel {
  kern_module *module;
  const struct Decl *decl;
  const char *name;
  int index; /* in the module's kernel list */
  int nparams;
  rt_param *params;
  size_t args_size, args_align;
  _Atomic uint32_t cpu_cost; /* measured CPU time per index in 1/16 ns (pool.c); 0 = unknown */
  bool grid;                 /* uses tid(d): CUDA runs it on a grid shaped like the launch */
  int elems;                 /* indices one thread of the CUDA dense entry runs per step */
  /* tiled kernels (docs/language.md, Tiles): each launch index is an instance */
  bool tiled;
  int64_t tile_bytes;     /* the tile storage an instance needs (a GPU block's shared memory) */
  char *tile_text;        /* its tiles, for messages (malloc'd; NULL when not tiled) */
  _Atomic int tile_block; /* kern_kernel_set_tile_block: threads per instance, 0 = default */
  int rank;               /* the launch rank its tid(d)s name (emit_kernel_tid_rank) */
};

/* The shared memory a GPU block has without opting in; a tiled kernel that
 * needs more opts in, up to the device's own limit (the H100's is 227 KiB). */
enum { RT_TILE_SHARED_LIMIT = 48 << 10, RT_TILE_BLOCK_DEFAULT = 256 };

typedef struct rt_slot {
  int busy;                /* the pid of the process compiling it, 0: none (module.c's lock) */
  _Atomic(rt_code *) code; /* set once, by the thread that claimed the slot */
} rt_slot;

struct kern_module {
  uint64_t id; /* unique in the process (addresses get reused) */
  char *name;
  struct Program *prog;
  char *diagnostics; /* rendered warnings */
  bool debug;        /* compiled with bounds checks */
  bool fast_math;    /* kern_module_set_fast_math: FMA and approximate math, not the same bits */
  bool verify_fp;    /* kern_module_set_verify_fp: stores of NaN or infinity fail the launch */
  char *c_source;    /* generated C (lazily, compile.c), for the CPU */
  pthread_mutex_t source_mu;
  int nkernels;
  kern_kernel *kernels;
  rt_slot slots[RT_MAX_DEVICES];
  const kern_embedded *embedded; /* built by kernc build: code comes from the table */
};

struct rt_launch {
  kern_kernel *kernel;
  kern_device *device;
  rt_code *code;    /* the module's code for the device */
  const void *args; /* the marshalled args block */
  size_t args_size;
  kn_ctx ctx;
  bool dense;     /* every array is C-contiguous and 16-byte aligned, and no two overlap */
  int tile_block; /* tiled kernels: threads per instance on a GPU (0: the kernel's default) */
};

/* ---- compile.c: compile-and-cache ---------------------------------------------------------- */

/* A loaded shared object of generated C. */
typedef struct rt_cpu_lib {
  void *handle;    /* dlopen handle */
  char key[33];    /* cache key (hex) */
  char source[33]; /* the compiler-independent key (the <source>.latest alias) */
  bool from_cache; /* a warm hit: no compiler ran */
  bool cached;     /* the result was stored in the cache */
} rt_cpu_lib;
/* Compiles (or finds in the cache) C source and loads it. On failure returns
 * KERN_ERR_COMPILE with the compiler's log (nothing cached). */
enum { RT_CC_DEBUG = 1, RT_CC_FAST_MATH = 2 }; /* rt_cpu_compile's mode: -g, fast math */
kern_status rt_cpu_compile(const char *source, size_t len, unsigned mode, rt_cpu_lib *out);
void rt_cpu_lib_close(rt_cpu_lib *);
void *rt_cpu_lib_sym(const rt_cpu_lib *, const char *name);

typedef enum { RT_CODE_CPU, RT_CODE_GPU } rt_code_kind;
/* A module's code, ready to load. */
typedef struct rt_binary {
  rt_cpu_lib lib;             /* CPU: the compiled module, loaded (handle NULL with aot) */
  const kn_embed_kernel *aot; /* CPU: kernc build's entry points, one per kernel */
  char *image;                /* GPU: CUBIN, or NUL-terminated PTX (malloc'd) */
  size_t len;
  rt_origin origin; /* compiled now, found in the disk cache, or kernc build's */
} rt_binary;
/* The module's code of that kind (GPU: for sm_<arch>): from kernc build's
 * table, else generated and compiled through the cache (C by the C compiler,
 * CUDA by NVRTC). The caller owns what it gets (rt_cpu_lib_close, free). */
kern_status rt_module_binary(kern_module *, rt_code_kind, int arch, rt_binary *out);
/* A copy (malloc'd) of an embedded module's GPU image for sm_<arch>: the
 * CUBIN of the same major arch with the highest minor <= arch's, else the
 * PTX when its arch is <= arch. KERN_ERR_UNSUPPORTED naming what it has otherwise. */
kern_status rt_embedded_gpu_image(const kern_module *, int arch, char **image, size_t *len);

#endif
