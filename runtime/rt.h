/* rt.h: what the runtime's files share (never installed; kern.h is the API).
 *
 * The runtime is layered: core.c (init, errors, config) < dtype.c, device.c,
 * registry.c < array.c < pool.c, sha256.c, cpu_compile.c (+ cache) < module.c <
 * launch.c, with capture.c beside array.c and launch.c (they hand it every
 * operation while a graph capture is open). A device backend (the CPU in device.c, CUDA in cuda*.c) is an
 * rt_device_ops table; code above it calls through the table and never checks
 * the device kind for anything but messages.
 */
#ifndef KERN_RT_H
#define KERN_RT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern.h"
#include "kern_abi.h"

struct Program;
struct Decl;
struct Type;

/* ---- core.c: errors, configuration ------------------------------------------- */

/* Sets this thread's kern_last_error() message and returns status. */
kern_status rt_error(kern_status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
kern_status rt_verror(kern_status, const char *fmt, va_list);
/* Sets the message to the text as is (it may be long: compiler logs). */
kern_status rt_error_text(kern_status, const char *prefix, const char *text);
/* kern_init() unless done; returns its status. Cheap when initialized. */
kern_status rt_ensure_init(void);
/* Sends a warning to the user's handler (default: stderr). */
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

typedef struct rt_config {
  int num_threads; /* >= 1 */
  bool debug;      /* KERN_DEBUG at init (kern_get_debug() has the current flag) */
  char *cache_dir; /* KERN_CACHE_DIR, or the XDG default; NULL when no home */
  char *cc;        /* KERN_CC, or NULL: search clang, cc */
} rt_config;
/* The configuration read by kern_init (read-only afterwards, except debug). */
const rt_config *rt_config_get(void);
/* Rereads the environment (tests change KERN_CC / KERN_CACHE_DIR between
 * compiles). Not thread-safe with respect to compiles in flight. */
void rt_config_reload(void);

/* malloc/strdup/printf that never return NULL silently: NULL means OOM, and
 * the caller reports it. */
char *rt_strdup(const char *);
char *rt_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable string for messages and logs. */
typedef struct rt_buf {
  char *s;
  size_t len, cap;
  bool oom;
} rt_buf;
void rt_buf_add(rt_buf *, const char *s, size_t n);
void rt_buf_printf(rt_buf *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_buf_free(rt_buf *);

/* ---- dtype.c ---------------------------------------------------------------------- */

bool rt_dtype_valid(kern_dtype);
/* The dtype of a checked type (scalar, vector, matrix, quat, struct); for
 * structs this registers it. KERN_DTYPE_INVALID for anything else or on OOM. */
kern_dtype rt_dtype_of_type(const struct Type *);
/* Registers (or finds) a struct dtype by name and layout signature. */
kern_dtype rt_dtype_register_struct(const char *name, const char *signature, size_t size,
                                    size_t align);

/* ---- device.c: devices and backends ---------------------------------------------- */

typedef enum { RT_DEV_CPU, RT_DEV_CUDA } rt_device_kind;
enum { RT_MAX_DEVICES = 32 };

typedef struct rt_code rt_code; /* a module compiled for one device: each backend
                                           casts its own type to and from it */
typedef struct rt_launch rt_launch;

/* What a backend provides. NULL entries mean "not supported" where that makes
 * sense (peer access on the CPU). Every function sets the error on failure. */
typedef struct rt_device_ops {
  /* Allocates bytes (> 0) with the allocator; *kind gets the memory kind. */
  void *(*alloc)(kern_device *, size_t bytes, kern_allocator, bool zero, kern_memory_kind *kind);
  void (*free)(kern_device *, void *ptr, size_t bytes, kern_memory_kind);
  /* Contiguous copies where one side is on this device (or both are);
   * to_host/from_host say which side is host memory. */
  kern_status (*copy)(kern_device *, void *dst, const void *src, size_t bytes, bool dst_host,
                      bool src_host);
  kern_status (*synchronize)(kern_device *);
  kern_status (*info)(const kern_device *, kern_device_info *);
  /* Allocators this device accepts. */
  bool (*allocator_ok)(const kern_device *, kern_allocator);
  /* Peer / pool access state (owner's memory usable from launch). */
  bool (*peer_enabled)(const kern_device *owner, const kern_device *launch);
  bool (*pool_access_enabled)(const kern_device *owner, const kern_device *launch);
  kern_status (*set_peer)(kern_device *target, kern_device *peer, bool on);
  kern_status (*set_pool_access)(kern_device *target, kern_device *peer, bool on);
  /* Compiles a module for this device into backend-defined code; code_free
   * releases it. */
  kern_status (*compile)(kern_module *, kern_device *, rt_code **out);
  void (*code_free)(rt_code *);
  /* Runs (or queues) one validated launch. */
  kern_status (*launch)(const rt_launch *);
  /* Graph capture (capture.c); NULL: recorded and replayed by capture.c. */
  const struct rt_graph_ops *graph;
} rt_device_ops;

struct kern_device {
  rt_device_kind kind;
  int index;   /* in the device table */
  int ordinal; /* CUDA ordinal; -1 for the CPU */
  char name[16];
  const rt_device_ops *ops;
  _Atomic int allocator; /* kern_allocator */
  void *impl;            /* the backend's state */
};

kern_device *rt_cpu_device(void);
/* Set by the CUDA backend when a driver is present; NULL otherwise. */
extern void *(*rt_pinned_alloc_hook)(size_t bytes);
extern void (*rt_pinned_free_hook)(void *ptr);
/* Classifies a pointer kern did not allocate (wrap); false if it cannot.
 * *ordinal gets the CUDA device of device, pool and managed memory (else -1). */
extern bool (*rt_pointer_kind_hook)(const void *ptr, kern_memory_kind *kind, int *ordinal);
/* Writes the 64-byte cuIpcMemHandle of a CUDA_DEVICE allocation's base. */
extern kern_status (*rt_ipc_handle_hook)(int ordinal, const void *base, void *out);
bool rt_device_is_host_kind(kern_memory_kind);
/* Registers a device found by a backend probe (from kern_init only). */
kern_device *rt_device_add(rt_device_kind, int ordinal, const rt_device_ops *, void *impl);
/* cuda_backend.c: called by kern_init, adds the CUDA devices it finds (none
 * without a driver, never an error); the reason there are none, for messages. */
kern_status rt_cuda_probe(void);
const char *rt_cuda_absent_reason(void);
/* Initializes the device table (the CPU) and probes backends. */
kern_status rt_devices_init(void);

/* ---- registry.c: kern's own allocations ------------------------------------------------ */

typedef struct rt_alloc_info {
  kern_device *device;
  kern_memory_kind kind;
  size_t bytes;
} rt_alloc_info;
bool rt_registry_add(void *base, const rt_alloc_info *);
void rt_registry_remove(void *base);
bool rt_registry_find(const void *base, rt_alloc_info *out);
size_t rt_registry_count(void);

/* ---- array.c --------------------------------------------------------------------------- */

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
/* Elements stored contiguously in C order (shape-1 dims ignored). */
bool rt_array_dense(const kern_array *);
/* Gives a wrapped array (no storage yet) an owner: release(ctx) runs once the
 * array and all its views are freed; kind replaces the wrap's classification.
 * On failure (out of memory) nothing changes and release is not called. */
kern_status rt_array_adopt(kern_array *, kern_memory_kind, void (*release)(void *), void *ctx);
/* A counted reference to the array's memory (NULL for wrapped arrays, which
 * kern does not own); rt_storage_release drops it. */
struct rt_storage *rt_array_retain(const kern_array *);
void rt_storage_release(struct rt_storage *);

/* ---- pool.c: the CPU thread pool --------------------------------------------------------- */

typedef void (*rt_range_fn)(const void *args, const kn_ctx *ctx, int64_t begin, int64_t end);
/* Runs fn over [0, n) in chunks on the workers and the calling thread; returns
 * when all are done. Many threads may call it at once. cost (or NULL) is the
 * kernel's measured time per index, read to decide whether splitting pays and
 * updated from this run. */
void rt_pool_run(rt_range_fn, const void *args, const kn_ctx *, int64_t n, _Atomic uint32_t *cost);
/* Workers currently started (0 before the first parallel launch). */
int rt_pool_workers(void);
void rt_pool_shutdown(void);

/* ---- sha256.c ----------------------------------------------------------------------------- */

typedef struct rt_sha256 {
  uint32_t h[8];
  uint64_t len;
  unsigned char buf[64];
  size_t nbuf;
} rt_sha256;
void rt_sha256_init(rt_sha256 *);
void rt_sha256_add(rt_sha256 *, const void *, size_t);
void rt_sha256_done(rt_sha256 *, unsigned char out[32]);
/* Lowercase hex of the first nbytes of a digest into out (2*nbytes+1 chars). */
void rt_hex(const unsigned char *digest, size_t nbytes, char *out);

/* ---- cpu_compile.c + cache.c: C source -> loaded shared object ------------------------------ */

typedef struct rt_cpu_lib {
  void *handle;    /* dlopen handle */
  char key[33];    /* cache key (hex) */
  char source[33]; /* the compiler-independent key (the <source>.latest alias) */
  bool from_cache; /* a warm hit: no compiler ran */
  bool cached;     /* the result was stored in the cache */
} rt_cpu_lib;
/* Compiles (or finds in the cache) C source and loads it. On failure returns
 * KERN_ERR_COMPILE with the compiler's log (nothing cached). */
kern_status rt_cpu_compile(const char *source, size_t len, bool debug, rt_cpu_lib *out);
/* The flags rt_cpu_compile passes the compiler (NULL-terminated; the meaning
 * of generated code depends on some, e.g. -fwrapv), for kernc build. */
const char *const *rt_cpu_compile_flags(void);
/* The compiler rt_cpu_compile would use (malloc'd path; NULL when there is
 * none, without a message) and the first line of its --version into
 * *identity ("" when unknown; static storage). For kern_config_get. */
char *rt_cpu_compiler(const char **identity);
/* Whether the compiler cc (a path, or a name searched on PATH) resolves to
 * clang, which then needs -fbracket-depth=4096 for deeply nested code. */
bool rt_cc_is_clang(const char *cc);
void rt_cpu_lib_close(rt_cpu_lib *);
void *rt_cpu_lib_sym(const rt_cpu_lib *, const char *name);

/* cache.c */
/* The cache directory for this process (created 0700), or NULL if there is
 * none, it cannot be created, or others may write it (kern_cache_dir says why). */
const char *rt_cache_dir(void);
/* st unchanged when there is a cache directory; otherwise st with the reason
 * there is none appended to the current message. */
kern_status rt_cache_explain(kern_status st);
/* Loads <dir>/<key>.so if its bytes match its meta, which must name key
 * (and source, unless NULL); true on a hit. */
bool rt_cache_load(const char *dir, const char *key, const char *source, void **handle);
/* Moves a built shared object into the cache (0600, temp + fsync + rename,
 * meta last); source is the compiler-independent key of what it was built from. */
bool rt_cache_store(const char *dir, const char *key, const char *source, const char *built_so);
/* <dir>/<key>.gpu when its bytes match <key>.gpu.sha: malloc'd, NUL-terminated, *len bytes. */
char *rt_cache_blob_read(const char *dir, const char *key, size_t *len);
/* Stores a GPU image as <key>.gpu and <key>.gpu.sha (temp + rename, hash last). */
void rt_cache_blob_write(const char *dir, const char *key, const void *data, size_t len);
/* A name unique across processes and threads: "<pid>-<tid>-<counter>". */
void rt_unique_suffix(char *out, size_t n);
/* Removes a directory tree created for a build (files one level deep). */
void rt_remove_tree(const char *dir);

/* ---- module.c -------------------------------------------------------------------------------- */

typedef struct rt_param {
  const char *name;
  const struct Type *ty;
  bool is_array;
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
};

typedef struct rt_slot {
  pthread_mutex_t mu;
  _Atomic(rt_code *) code; /* set once, under mu, by the device's compile */
} rt_slot;

struct kern_module {
  uint64_t id; /* unique in the process (addresses get reused) */
  char *name;
  struct Program *prog;
  char *diagnostics; /* rendered warnings */
  bool debug;        /* compiled with bounds checks */
  char *c_source;    /* generated C (lazily), for the CPU backend */
  pthread_mutex_t source_mu;
  int nkernels;
  kern_kernel *kernels;
  rt_slot slots[RT_MAX_DEVICES];
  const kern_embedded *embedded; /* built by kernc build: code comes from the table */
};

/* The module compiled for the device (compiling on first use, once). */
kern_status rt_module_code(kern_module *, kern_device *, rt_code **out);
/* The generated C source for the CPU (cached in the module). */
kern_status rt_module_c_source(kern_module *, const char **out);
/* A module file's path by its index in Program.modules (debug messages). */
const char *rt_module_file(const kern_module *, int index);
/* The module of a front-end result (taking it over), as kern_module_load makes
 * it; NULL with the error set. */
struct FrontResult;
kern_module *rt_module_create(const char *name, struct FrontResult);
/* Frees any module, embedded ones included (kern_module_free skips those). */
void rt_module_destroy(kern_module *);

/* ---- embedded.c: modules compiled ahead of time (kernc build) ------------------------------------ */

/* The CPU entry points of kernel i of an embedded module. */
kern_status rt_embedded_cpu(const kern_module *, int kernel, rt_range_fn *range,
                            rt_range_fn *dense);
/* A copy (malloc'd) of the module's GPU image for sm_<arch>: the CUBIN of the
 * same major arch with the highest minor <= arch's, else the PTX when its arch
 * is <= arch. KERN_ERR_UNSUPPORTED naming what the module has otherwise. */
kern_status rt_embedded_gpu_image(const kern_module *, int arch, char **image, size_t *len);
/* Frees the embedded modules (kern_shutdown). */
void rt_embedded_shutdown(void);

/* ---- launch.c ---------------------------------------------------------------------------------- */

struct rt_launch {
  kern_kernel *kernel;
  kern_device *device;
  rt_code *code;    /* rt_module_code's result for the device */
  const void *args; /* the marshalled args block */
  size_t args_size;
  kn_ctx ctx;
  bool dense; /* every array is C-contiguous */
};
/* Turns a debug error record into the KERN_ERR_BOUNDS message. */
kern_status rt_debug_error(const kern_kernel *, const kn_error *);

/* ---- capture.c: graph capture ------------------------------------------------------------------ */

/* True while a graph capture is open on the device (begun by any thread):
 * operations that cannot be captured refuse with KERN_ERR_CAPTURE. */
bool rt_capture_active(const kern_device *);
/* Any capture open on a CUDA device (pinned host allocations are unsafe then). */
bool rt_capture_any_cuda(void);
/* The open capture's id on the device (unique in the process), 0 when none. */
uint64_t rt_capture_id(const kern_device *);
/* KERN_ERR_CAPTURE naming the operation `what` refused on the capturing device. */
kern_status rt_capture_refuse(const kern_device *, const char *what);
/* launch.c hands every validated launch here: recorded (CPU capture), run
 * through the device with its arrays kept alive (CUDA capture), refused when
 * it touches a capturing device's arrays from outside, else run. */
kern_status rt_capture_launch(const rt_launch *, int nargs, const kern_arg *args);
/* array.c hooks. check_alloc: KERN_OK when an allocation with the allocator may
 * happen now. new_array: a zeroed array was just made (the CPU records the
 * zeroing so each replay repeats it, as CUDA's memset node does). copy/fill:
 * true when the capture took the operation (recorded, or refused), with its
 * status in *st; false: run it as usual. host_access: KERN_OK unless the host
 * may not touch the array now. */
kern_status rt_capture_check_alloc(kern_device *, kern_allocator);
void rt_capture_new_array(kern_array *);
bool rt_capture_copy(kern_array *dst, const kern_array *src, kern_status *st);
bool rt_capture_fill(kern_array *, const void *value, kern_status *st);
kern_status rt_capture_host_access(const kern_array *, const char *fn);
/* storage_release asks before freeing memory: true when the open capture
 * keeps the storage to free it (rt_storage_destroy) after the capture ends,
 * because freeing now cannot be recorded. */
bool rt_capture_defer_free(struct rt_storage *, kern_device *, uint64_t alloc_capture,
                           kern_memory_kind);

/* array.c, for capture.c: a reference to an array's memory for a graph (NULL
 * for wrapped memory, and for memory allocated by the capture `capture_id`
 * itself, which the graph allocates), dropped with rt_storage_release;
 * destroy frees a storage whose references are gone. The
 * _now functions run a copy or fill on arrays without asking the capture. */
struct rt_storage *rt_array_hold(const kern_array *, uint64_t capture_id);
void rt_storage_destroy(struct rt_storage *);
kern_status rt_array_copy_now(kern_array *dst, const kern_array *src);
kern_status rt_array_fill_now(kern_array *, const void *value);

/* A backend's graph capture; NULL in rt_device_ops means capture.c records and
 * replays in software (the CPU). `cap` is the backend's open capture, `exec`
 * its executable graph. */
typedef struct rt_graph_ops {
  kern_status (*begin)(kern_device *, kern_capture_mode, void **cap);
  /* Ends the capture into a new executable (*exec); or, with *exec set,
   * updates it (*updated) or rebuilds it in place. The capture is gone
   * afterwards whatever the result. */
  kern_status (*end)(kern_device *, void *cap, void **exec, bool *updated);
  void (*abort)(kern_device *, void *cap);
  kern_status (*launch)(kern_device *, void *exec);
  void (*exec_free)(kern_device *, void *exec);
  kern_status (*cond_begin)(kern_device *, void *cap, bool is_while, kern_array *flag);
  kern_status (*cond_end)(kern_device *, void *cap, bool is_while);
  /* Records a fill of a dense array of this device (host staging cannot be captured). */
  kern_status (*fill)(kern_device *, void *cap, kern_array *, const void *value);
} rt_graph_ops;

/* cuda_backend.c <-> cuda_capture.c (stream capture on a CUDA device). */
struct CUstream_st;
struct CUctx_st;
kern_status rt_cuda_enter(kern_device *); /* context current; fails when poisoned */
kern_status rt_cuda_fail(kern_device *, int cu_result, const char *what);
struct CUstream_st *rt_cuda_stream(kern_device *); /* where the device's work goes now */
struct CUctx_st *rt_cuda_context(const kern_device *);
int rt_cuda_arch(const kern_device *); /* sm_major * 10 + sm_minor */
/* Sends the device's work to s while a conditional body is captured (NULL: back). */
void rt_cuda_set_capture_stream(kern_device *, struct CUstream_st *s);
/* The error record a debug launch inside the open capture writes (NULL: none). */
kn_error *rt_cuda_capture_debug_slot(kern_device *, const kern_kernel *);
extern const rt_graph_ops rt_cuda_graph_ops;

/* ---- cpu backend (cpu_backend.c) ----------------------------------------------------------------- */

extern const rt_device_ops rt_cpu_ops;

#endif
