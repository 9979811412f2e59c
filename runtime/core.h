/* core.h: what the device-independent core shares (never installed; kern.h
 * is the API; never included by a backend).
 *
 * The runtime's layers, bottom up; a file calls only its own layer and the
 * layers below (tests/layers.py fails on any cycle but the two pairs below):
 *
 *   support/       errors, buffers, files, processes, the toolchain
 *   base.h         config.c registry.c dtype.c sha256.c cache.c
 *   backend.h      device.c (the device table, memory kinds, capture state),
 *                  compile.c (compile-and-cache)
 *   backends       runtime/cpu/, runtime/cuda/: rt_device_ops tables. One
 *                  pair: cuda_backend.c <-> cuda_capture.c share a device's
 *                  context and streams (the capture records on them, the
 *                  launches write its debug slots)
 *   init.c         kern_init/kern_shutdown: the configuration, each backend's
 *                  probe, and the entry points that start the library
 *                  lazily (device lookups, the debug flag, the cache dir)
 *   modpath.c      where a module's file is (the search path)
 *   module.c       modules, kernel descriptions, debug-error wording
 *   exec.c         running an operation now; rt_submit (below) is the one
 *                  path every operation takes: to exec.c, or to the recorder
 *                  while a capture is open
 *   storage.c <-> capture.c   the memory behind arrays, and the recorder.
 *                  The other pair: a free that an open capture cannot record
 *                  waits in the recorder, which finishes it
 *                  (rt_storage_destroy) when the capture ends
 *   array.c launch.c      the array and launch API
 *   embedded.c dlpack.c   kernc build's modules; DLPack
 *
 * Public entry points call rt_ensure_init, which is why init.c sits below
 * every file that has one and above the backends it probes; state above it
 * that kern_shutdown frees registers with rt_at_shutdown. The core reaches a
 * backend only through its ops table (init.c alone names their probes).
 */
#ifndef KERN_RT_CORE_H
#define KERN_RT_CORE_H

#include <string.h>

#include "backend.h"

struct FrontResult;

/* ---- init.c --------------------------------------------------------------------------- */

/* kern_init() unless done; returns its status. Cheap when initialized. */
kern_status rt_ensure_init(void);
/* Runs fn at every kern_shutdown from now on (once per fn, however often
 * registered); for state above init.c that the library frees. */
void rt_at_shutdown(void (*fn)(void));

/* ---- modpath.c ----------------------------------------------------------------------------- */

/* The text of the module file path names (malloc'd; *file: the path it was
 * read from, malloc'd, which names the module): as given, else found on the
 * search path. NULL with KERN_ERR_IO and a message that says where it
 * looked. */
char *rt_module_read(const char *path, char **file, size_t *len);

/* ---- module.c ------------------------------------------------------------------------------ */

/* The module compiled for the device (compiling on first use, once). */
kern_status rt_module_code(kern_module *, kern_device *, rt_code **out);
/* A module file's path by its index in Program.modules (debug messages). */
const char *rt_module_file(const kern_module *, int index);
/* The module of a front-end result (taking it over), as kern_module_load makes
 * it; NULL with the error set. */
kern_module *rt_module_create(const char *name, struct FrontResult);
/* Frees any module, embedded ones included (kern_module_free skips those). */
void rt_module_destroy(kern_module *);
/* Turns a debug error record of a launch of k into the KERN_ERR_BOUNDS message. */
kern_status rt_debug_error(const kern_kernel *k, const kn_error *);

/* ---- storage.c: the memory behind arrays ----------------------------------------------------------- */

/* New memory on the device with the allocator; NULL with the error set. */
struct rt_storage *rt_storage_new(kern_device *, kern_allocator, size_t nbytes, bool zero,
                                  void **base, kern_memory_kind *kind);
/* Gives a wrapped array (no storage yet) an owner: release(ctx) runs once the
 * array and all its views are freed; kind replaces the wrap's classification.
 * On failure (out of memory) nothing changes and release is not called. */
kern_status rt_array_adopt(kern_array *, kern_memory_kind, void (*release)(void *), void *ctx);
/* A counted reference to the array's memory (NULL for wrapped arrays, which
 * kern does not own); rt_storage_release drops it. */
struct rt_storage *rt_array_retain(const kern_array *);
/* The same for a graph: NULL also for memory the capture `capture_id` itself
 * allocated, which the graph allocates. */
struct rt_storage *rt_array_hold(const kern_array *, uint64_t capture_id);
void rt_storage_release(struct rt_storage *);
/* Frees a storage whose references are gone (the recorder, after a capture). */
void rt_storage_destroy(struct rt_storage *);
/* What kernel IPC needs: the allocation's base, false for external memory. */
bool rt_storage_owned(const struct rt_storage *, void **base);

/* ---- operations: rt_submit, exec.c, capture.c ------------------------------------------------------ */

typedef enum {
  RT_OP_LAUNCH, /* launch, with its arguments (for the arrays they name) */
  RT_OP_COPY,   /* dst <- src, same dtype and shape */
  RT_OP_FILL,   /* every element of dst <- value */
  RT_OP_ZEROED, /* dst was just allocated zeroed (a replay zeroes it again) */
  RT_OP_ALLOC,  /* may device allocate with allocator now? */
  RT_OP_READ,   /* bytes of src -> out (host) */
  RT_OP_WRITE   /* bytes of value (host) -> dst */
} rt_op_kind;

typedef struct rt_op {
  rt_op_kind kind;
  const rt_launch *launch; /* LAUNCH */
  int nargs;
  const kern_arg *args;
  kern_array *dst;          /* COPY, FILL, ZEROED, WRITE */
  const kern_array *src;    /* COPY, READ */
  const void *value;        /* FILL: one element; WRITE: the host bytes */
  void *out;                /* READ: the host bytes */
  size_t bytes;             /* READ, WRITE */
  kern_device *device;      /* ALLOC; COPY: the device that performs it (NULL: exec.c picks) */
  kern_allocator allocator; /* ALLOC */
} rt_op;

/* exec.c: runs the operation now. */
kern_status rt_exec(const rt_op *);
/* A launch now: the device's launch, then any debug error record worded.
 * Inline, like rt_submit: it is the whole of a launch's way to its device. */
static inline kern_status rt_exec_launch(const rt_launch *L) {
  if (L->ctx.err) memset(L->ctx.err, 0, sizeof *L->ctx.err);
  kern_status st = L->device->ops->launch(L);
  if (!st && L->ctx.err && L->ctx.err->flag) st = rt_debug_error(L->kernel, L->ctx.err);
  return st;
}
/* Elements stored contiguously in C order (shape-1 dims ignored). */
bool rt_array_dense(const kern_array *);
/* primitives.c, for tests: the kern text of a primitive's module (0..3: sum,
 * min, max, scan; malloc'd), and one of its kernels (made on first use). */
char *rt_prims_source(int prim, kern_dtype in, kern_dtype acc);
kern_kernel *rt_prims_kernel(int prim, kern_dtype in, kern_dtype acc, const char *name);
/* A dense 1-D temporary of n elements, stream-ordered on a GPU (array.c). */
kern_array *rt_array_scratch(kern_device *, kern_dtype, int64_t n);
/* A view of a's memory from its first element as another dtype and shape
 * (strides in bytes, NULL for dense C order), holding a reference like
 * kern_array_view; the caller keeps it inside a's elements (array.c). */
kern_array *rt_array_as(kern_array *a, kern_dtype, int ndim, const int64_t *shape,
                        const int64_t *strides);
/* Memory the calling thread may touch directly. */
bool rt_array_host_ok(const kern_array *);
/* The byte ranges of two arrays' elements intersect. */
bool rt_array_overlap(const kern_array *, const kern_array *);

/* capture.c: the recorder. The number of open captures, which rt_submit reads
 * to keep operations off the recorder when there are none. */
extern _Atomic int rt_captures_open;
kern_status rt_capture_submit(const rt_op *);
/* The one path every operation on arrays and devices takes: while no capture
 * is open anywhere, straight to exec.c (one atomic load, no recorder code, no
 * lock); while one is open, to the recorder, which records the operation (a
 * CPU graph), lets it run into the capturing stream (CUDA), refuses it, or
 * runs it when it does not touch a capturing device. Inline: it is on every
 * launch. */
static inline kern_status rt_submit(const rt_op *op) {
  if (atomic_load(&rt_captures_open) != 0) return rt_capture_submit(op);
  return op->kind == RT_OP_LAUNCH ? rt_exec_launch(op->launch) : rt_exec(op);
}
/* rt_submit of a launch, the operation built only when the recorder needs it. */
static inline kern_status rt_submit_launch(const rt_launch *L, int nargs, const kern_arg *args) {
  if (atomic_load(&rt_captures_open) == 0) return rt_exec_launch(L);
  return rt_capture_submit(
      &(rt_op){.kind = RT_OP_LAUNCH, .launch = L, .nargs = nargs, .args = args});
}
/* storage.c asks before freeing memory: true when the open capture keeps
 * the storage to free it (rt_storage_destroy) after the capture ends,
 * because freeing now cannot be recorded. */
bool rt_capture_defer_free(struct rt_storage *, kern_device *, uint64_t alloc_capture,
                           kern_memory_kind);

#endif
