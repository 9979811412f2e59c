/* rt.h: what the runtime's files share (never installed; kern.h is the API).
 *
 * The runtime is layered: core.c (init, errors, config) < dtype.c, device.c,
 * registry.c < array.c < pool.c, sha256.c, cpu_compile.c (+ cache) < module.c <
 * launch.c. A device backend (the CPU in device.c, CUDA in cuda*.c) is an
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
  int num_threads;        /* >= 1 */
  bool debug;             /* KERN_DEBUG at init (kern_get_debug() has the current flag) */
  char *cache_dir;        /* KERN_CACHE_DIR, or the XDG default; NULL when no home */
  char *cc;               /* KERN_CC, or NULL: search clang, cc */
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
typedef struct rt_buf { char *s; size_t len, cap; bool oom; } rt_buf;
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

typedef struct rt_code rt_code;         /* a module compiled for one device: each backend
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
  kern_status (*copy)(kern_device *, void *dst, const void *src, size_t bytes,
                      bool dst_host, bool src_host);
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
} rt_device_ops;

struct kern_device {
  rt_device_kind kind;
  int index;              /* in the device table */
  int ordinal;            /* CUDA ordinal; -1 for the CPU */
  char name[16];
  const rt_device_ops *ops;
  _Atomic int allocator;  /* kern_allocator */
  void *impl;             /* the backend's state */
};

kern_device *rt_cpu_device(void);
/* Set by the CUDA backend when a driver is present; NULL otherwise. */
extern void *(*rt_pinned_alloc_hook)(size_t bytes);
extern void (*rt_pinned_free_hook)(void *ptr);
/* Classifies a pointer kern did not allocate (wrap); false if it cannot. */
extern bool (*rt_pointer_kind_hook)(const void *ptr, kern_memory_kind *kind);
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
  int64_t shape[4];       /* unused dims: 1 */
  int64_t strides[4];     /* bytes; unused dims: 0 */
  char *data;             /* element [0,...] */
  size_t nbytes;          /* elements * elem_size */
  kern_memory_kind kind;
  struct rt_storage *storage; /* refcounted owner of the memory; NULL for wrapped */
  bool is_view;
};
/* Elements stored contiguously in C order (shape-1 dims ignored). */
bool rt_array_dense(const kern_array *);

/* ---- pool.c: the CPU thread pool --------------------------------------------------------- */

typedef void (*rt_range_fn)(const void *args, const kn_ctx *ctx, int64_t begin, int64_t end);
/* Runs fn over [0, n) in chunks on the workers and the calling thread; returns
 * when all are done. Many threads may call it at once. */
void rt_pool_run(rt_range_fn, const void *args, const kn_ctx *, int64_t n);
/* Workers currently started (0 before the first parallel launch). */
int rt_pool_workers(void);
void rt_pool_shutdown(void);

/* ---- sha256.c ----------------------------------------------------------------------------- */

typedef struct rt_sha256 { uint32_t h[8]; uint64_t len; unsigned char buf[64]; size_t nbuf; } rt_sha256;
void rt_sha256_init(rt_sha256 *);
void rt_sha256_add(rt_sha256 *, const void *, size_t);
void rt_sha256_done(rt_sha256 *, unsigned char out[32]);
/* Lowercase hex of the first nbytes of a digest into out (2*nbytes+1 chars). */
void rt_hex(const unsigned char *digest, size_t nbytes, char *out);

/* ---- cpu_compile.c + cache.c: C source -> loaded shared object ------------------------------ */

typedef struct rt_cpu_lib {
  void *handle;           /* dlopen handle */
  char key[33];           /* cache key (hex) */
  bool from_cache;        /* a warm hit: no compiler ran */
  bool cached;            /* the result was stored in the cache */
} rt_cpu_lib;
/* Compiles (or finds in the cache) C source and loads it. On failure returns
 * KERN_ERR_COMPILE with the compiler's log (nothing cached). */
kern_status rt_cpu_compile(const char *source, size_t len, bool debug, rt_cpu_lib *out);
void rt_cpu_lib_close(rt_cpu_lib *);
void *rt_cpu_lib_sym(const rt_cpu_lib *, const char *name);

/* cache.c */
/* The cache directory for this process (created 0700), or NULL if unusable. */
const char *rt_cache_dir(void);
/* Loads <dir>/<key>.so if it and its meta agree; true on a hit. */
bool rt_cache_load(const char *dir, const char *key, void **handle);
/* Moves a built shared object into the cache (temp + fsync + rename, meta last). */
bool rt_cache_store(const char *dir, const char *key, const char *built_so);
/* The hex SHA-256 of a file's bytes; false if unreadable. */
bool rt_file_sha256(const char *path, char hex[65]);
/* A name unique across processes and threads: "<pid>-<tid>-<counter>". */
void rt_unique_suffix(char *out, size_t n);
/* Removes a directory tree created for a build (files one level deep). */
void rt_remove_tree(const char *dir);

/* ---- module.c -------------------------------------------------------------------------------- */

typedef struct rt_param {
  const char *name;
  const struct Type *ty;
  bool is_array;
  int ndim;               /* arrays */
  kern_dtype dtype;       /* value dtype, or element dtype for arrays */
  size_t size;            /* bytes in the args block */
  size_t offset;
} rt_param;

struct kern_kernel {
  kern_module *module;
  const struct Decl *decl;
  const char *name;
  int index;              /* in the module's kernel list */
  int nparams;
  rt_param *params;
  size_t args_size, args_align;
};

typedef struct rt_slot {
  pthread_mutex_t mu;
  _Atomic(rt_code *) code; /* set once, under mu, by the device's compile */
} rt_slot;

struct kern_module {
  uint64_t id;            /* unique in the process (addresses get reused) */
  char *name;
  struct Program *prog;
  char *diagnostics;      /* rendered warnings */
  bool debug;             /* compiled with bounds checks */
  char *c_source;         /* generated C (lazily), for the CPU backend */
  pthread_mutex_t source_mu;
  int nkernels;
  kern_kernel *kernels;
  rt_slot slots[RT_MAX_DEVICES];
};

/* The module compiled for the device (compiling on first use, once). */
kern_status rt_module_code(kern_module *, kern_device *, rt_code **out);
/* The generated C source for the CPU (cached in the module). */
kern_status rt_module_c_source(kern_module *, const char **out);
/* A module file's path by its index in Program.modules (debug messages). */
const char *rt_module_file(const kern_module *, int index);

/* ---- launch.c ---------------------------------------------------------------------------------- */

struct rt_launch {
  kern_kernel *kernel;
  kern_device *device;
  rt_code *code;          /* rt_module_code's result for the device */
  const void *args;       /* the marshalled args block */
  size_t args_size;
  kn_ctx ctx;
  bool dense;             /* every array is C-contiguous */
};
/* Turns a debug error record into the KERN_ERR_BOUNDS message. */
kern_status rt_debug_error(const kern_kernel *, const kn_error *);

/* ---- cpu backend (cpu_backend.c) ----------------------------------------------------------------- */

extern const rt_device_ops rt_cpu_ops;

#endif
