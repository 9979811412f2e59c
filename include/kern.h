/* kern.h: the public C API of libkern, the kern kernel-launch runtime.
 *
 * kern compiles kernels written in the kern language (.kern files) and runs them
 * on the CPU (a thread pool over code compiled by the system C compiler) or on
 * NVIDIA GPUs. This header is the whole interface; everything else is private.
 *
 * Conventions
 * - Every function that can fail returns a kern_status (or NULL, or an invalid
 *   value where it says so) and leaves a message for kern_last_error() in the
 *   calling thread. The library never prints, exits or aborts on a user error
 *   (exceptions: CHECKED-mode warnings go to a handler that defaults to
 *   stderr, see kern_set_warning_handler; and the log prints on stderr when
 *   the environment variable KERN_LOG asks for it, see kern_set_log_handler).
 * - Ownership: an object returned by a function named *_new, *_empty, *_wrap,
 *   *_view, *_load, *_from_source belongs to the caller, who releases it with
 *   the matching *_free. Devices and kernels are owned by the library (devices
 *   live as long as the process, kernels as long as their module).
 * - Threads: unless a function says otherwise it may be called from any thread.
 *   Arrays are not locked: two threads may read one array at once, but writing
 *   an array while another call reads or writes it is a data race, as in C.
 * - kern_init() is optional: the first call into the library initializes it.
 */
#ifndef KERN_H
#define KERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KERN_VERSION_MAJOR 0
#define KERN_VERSION_MINOR 1
#define KERN_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH: compare with kern_version() to detect a
 * header/library mismatch at run time. */
#define KERN_VERSION_NUM                                                                           \
  (KERN_VERSION_MAJOR * 10000 + KERN_VERSION_MINOR * 100 + KERN_VERSION_PATCH)

/* KERN_API marks what libkern exports: libkern.so is built with hidden
 * visibility, so these functions are its whole dynamic interface. */
#if defined(__GNUC__) || defined(__clang__)
#define KERN_API __attribute__((visibility("default")))
#else
#define KERN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- core ------------------------------------------------------------------ */

typedef enum {
  KERN_OK = 0,
  KERN_ERR_INVALID_ARGUMENT, /* a bad argument: NULL, wrong type, shape, size ... */
  KERN_ERR_COMPILE,          /* kern source, or the generated code, failed to compile */
  KERN_ERR_NOT_FOUND,        /* a named kernel, struct or device is absent (a missing
                                file is KERN_ERR_IO) */
  KERN_ERR_OUT_OF_MEMORY,    /* an allocation failed */
  KERN_ERR_ACCESS,           /* an array is not accessible from the launch device */
  KERN_ERR_BOUNDS,           /* debug mode: an index was out of bounds, or an assert failed;
                                verify_fp: a NaN or an infinity was stored */
  KERN_ERR_CAPTURE,          /* not allowed during graph capture, or a capture misuse */
  KERN_ERR_CUDA,             /* the CUDA driver or NVRTC failed */
  KERN_ERR_UNSUPPORTED,      /* not available on this device or in this build */
  KERN_ERR_IO                /* a file could not be read or written, or does not exist */
} kern_status;

/* The library's version as KERN_VERSION_NUM computes it. */
KERN_API int kern_version(void);
/* "0.1.0". Static storage. */
KERN_API const char *kern_version_string(void);

/* The message of the last failed call in this thread; "" when none. The text
 * stays valid until the next failing call in the same thread. Successful calls
 * do not clear it. */
KERN_API const char *kern_last_error(void);
/* The status of the last failed call in this thread (KERN_OK when none): how
 * functions that return NULL say which error it was. */
KERN_API kern_status kern_last_status(void);
/* Clears this thread's message and status. */
KERN_API void kern_clear_error(void);
/* "KERN_OK", "KERN_ERR_COMPILE" ...; static storage; "KERN_ERR_?" for unknown values. */
KERN_API const char *kern_status_name(kern_status);

/* Initializes the library: registers the CPU device and reads the environment:
 *   KERN_NUM_THREADS  CPU worker threads (default: the online cores)
 *   KERN_DEBUG=1      like kern_set_debug(true)
 *   KERN_VERIFY_FP=1  modules start with kern_module_set_verify_fp(m, true)
 *   KERN_CACHE_DIR    compiled-code cache (default $XDG_CACHE_HOME/kern, else ~/.cache/kern)
 *   KERN_CC           the C compiler for CPU kernels (default clang, else cc, on PATH)
 *   KERN_COMPILE_TIMEOUT  seconds one C compile may take (default 300; 0: no limit)
 *   KERN_CACHE_MAX_BYTES  the cache's size bound (default 1G; K, M, G suffixes; 0: none)
 *   KERN_LOG=1        log lines on stderr (see kern_set_log_handler)
 *   KERN_PATH         directories searched for relative module paths (kern_module_load)
 * It does not touch CUDA: the driver is loaded and the GPUs counted when a
 * call first needs the device list (kern_device_count, kern_device_at,
 * kern_device_get of a "cuda" name, KERN_ALLOC_PINNED, DLPack of CUDA memory),
 * and a GPU's CUDA context is created on its first use; so a program that
 * only uses "cpu" pays nothing for CUDA. Idempotent and thread-safe; every
 * other function calls it when needed. */
KERN_API kern_status kern_init(void);
/* Stops the CPU worker threads and releases the library's global state. Free
 * your arrays and modules first. kern_init() may be called again afterwards;
 * device handles stay valid. Not to be called while other threads use kern. */
KERN_API void kern_shutdown(void);

/* The compiled-code cache directory in use (created with mode 0700 when
 * missing). NULL when there is none: unset, not creatable, or not trusted
 * because another user owns it or its group or others may write it; then
 * kern_last_error() says why and code is compiled without caching. Valid
 * until kern_shutdown. */
KERN_API const char *kern_cache_dir(void);

/* What the cache holds (`kernc cache info` prints it). */
typedef struct {
  const char *dir;   /* kern_cache_dir() */
  int64_t entries;   /* compiled modules: a CPU build or a GPU image each */
  int64_t bytes;     /* the sizes of all files in the directory */
  int64_t max_bytes; /* the bound (KERN_CACHE_MAX_BYTES, default 1 GiB); 0: none */
} kern_cache_info;
/* Fills *out (dir valid as kern_cache_dir's). KERN_ERR_INVALID_ARGUMENT for
 * NULL; kern_cache_dir's status and reason when there is no cache. */
KERN_API kern_status kern_cache_info_get(kern_cache_info *out);
/* Removes every entry from the cache, and what killed processes left there;
 * builds in progress in other processes keep their directories, and modules
 * already loaded keep running. Other processes may use the cache meanwhile: an
 * entry removed under them is a miss and compiles again. KERN_ERR_IO when
 * something could not be removed; kern_cache_dir's status when there is no
 * cache. */
KERN_API kern_status kern_cache_clear(void);

/* What the library uses, for tools and bug reports (`kernc info` prints it).
 * The strings belong to the library and stay valid until the next call or
 * kern_shutdown. */
typedef struct {
  const char *version;     /* kern_version_string() */
  const char *cc;          /* the C compiler for CPU kernels (KERN_CC, else clang, else
                              cc, on PATH) as a path; NULL when none is found */
  const char *cc_version;  /* the first line of its --version; "" when unknown */
  const char *nvrtc;       /* the NVRTC library in use (a path); NULL when absent */
  int nvrtc_version;       /* major * 1000 + minor * 10 (12.4: 12040); 0 when absent */
  const char *nvrtc_error; /* why NVRTC is absent; "" when it is loaded */
  const char *cache_dir;   /* kern_cache_dir(); NULL when there is no cache */
  int num_threads;         /* CPU worker threads (KERN_NUM_THREADS) */
  bool debug;              /* kern_get_debug() */
  double compile_timeout;  /* seconds a C compile may run before it is stopped and the
                              launch fails with KERN_ERR_COMPILE (KERN_COMPILE_TIMEOUT,
                              default 300); 0: no limit */
  int64_t cache_max_bytes; /* the cache's size bound (KERN_CACHE_MAX_BYTES, default
                              1 GiB): least recently used entries go first; 0: none */
} kern_config;
/* Fills *out. Finds the C compiler and loads NVRTC unless done already (what
 * a first compile does), so the first call may take milliseconds.
 * KERN_ERR_INVALID_ARGUMENT for NULL. */
KERN_API kern_status kern_config_get(kern_config *out);

/* Debug mode for modules loaded afterwards (also KERN_DEBUG=1): kernels get
 * bounds checks and assert(); a failing launch returns KERN_ERR_BOUNDS with a
 * message naming kernel, file:line, index and shape, and the process goes on. */
KERN_API void kern_set_debug(bool on);
KERN_API bool kern_get_debug(void);

/* ---- the log ------------------------------------------------------------------ */

/* What kern tells about its work while a program waits on it. Nothing is
 * produced unless asked: a handler installed, or KERN_LOG set. */
typedef enum {
  KERN_LOG_OFF = 0,
  KERN_LOG_WARNING = 1, /* a module's warnings, rendered like compiler diagnostics
                           (file:line:col: warning: ..., the source line, a caret),
                           when kern_module_load or kern_module_from_source
                           loads it; and CHECKED-mode warnings when no warning
                           handler is set (kern_set_warning_handler) */
  KERN_LOG_INFO = 2     /* also one line per module made ready for a device:
                           "module 'saxpy.kern' loaded on cpu in 231.4 ms (compiled)",
                           or (cached), or (kernc build); one when the GPUs are
                           probed and one when a GPU starts (its CUDA context) */
} kern_log_level;
/* msg: one message without a trailing newline (a warning may span lines). */
typedef void (*kern_log_fn)(kern_log_level level, const char *msg, void *ud);
/* Sends messages of `level` and more severe (WARNING before INFO) to fn, from
 * the thread doing the work, with no kern lock held (fn may call kern).
 * fn == NULL restores the default: KERN_LOG's level (read at kern_init: 1 or
 * info: INFO; warning: WARNING; unset, 0 or off: nothing), printed on stderr
 * as "kern: MSG" lines. */
KERN_API void kern_set_log_handler(kern_log_fn fn, void *ud, kern_log_level level);
/* The level messages are produced at: the handler's, else KERN_LOG's. */
KERN_API kern_log_level kern_get_log_level(void);

/* ---- opaque handles --------------------------------------------------------- */

typedef struct kern_device kern_device; /* owned by the library, valid for the process */
typedef struct kern_array kern_array;   /* kern_array_free */
typedef struct kern_module kern_module; /* kern_module_free */
typedef struct kern_kernel kern_kernel; /* owned by its module */
typedef struct kern_stream kern_stream; /* kern_stream_free */
typedef struct kern_graph kern_graph;   /* kern_graph_free */
struct DLManagedTensor;                 /* dlpack.h */

/* ---- dtypes ------------------------------------------------------------------ */

/* An element type. Builtin dtypes are the constants below; struct dtypes come
 * from kern_module_dtype() and have ids >= KERN_DTYPE_FIRST_STRUCT. A struct
 * dtype id stays valid for the whole process, even after its module is freed;
 * structs with the same name and layout share one id across modules. */
typedef int32_t kern_dtype;
enum {
  KERN_DTYPE_INVALID = 0,
  KERN_BOOL,
  KERN_INT8,
  KERN_INT16,
  KERN_INT32,
  KERN_INT64,
  KERN_UINT8,
  KERN_UINT16,
  KERN_UINT32,
  KERN_UINT64,
  KERN_FLOAT16, /* IEEE binary16 (kern_float16); bfloat16 is KERN_BFLOAT16, below */
  KERN_FLOAT32,
  KERN_FLOAT64,
  KERN_VEC2,
  KERN_VEC3,
  KERN_VEC4, /* float32 x 2..4 */
  KERN_DVEC2,
  KERN_DVEC3,
  KERN_DVEC4, /* float64 x 2..4 */
  KERN_IVEC2,
  KERN_IVEC3,
  KERN_IVEC4, /* int32 x 2..4 */
  KERN_MAT22,
  KERN_MAT33,
  KERN_MAT44,          /* float32, row-major */
  KERN_QUAT,           /* float32 x, y, z, w */
  KERN_TRANSFORM,      /* float32 p (x, y, z) then q (x, y, z, w): kern_transform */
  KERN_SPATIAL_VECTOR, /* float32 x 6: angular then linear (kern_spatial_vector) */
  KERN_SPATIAL_MATRIX, /* float32 6 x 6, row-major (kern_spatial_matrix) */
  KERN_BFLOAT16,       /* the top 16 bits of a float32 (kern_bfloat16); numbered last so that the
                  * dtypes before it keep their numbers */
  KERN_QUATH,          /* quat<float16> x, y, z, w (kern_quath); numbered after the others too */
  KERN_QUATBF16,       /* quat<bfloat16> (kern_quatbf16) */
  KERN_QUATD,          /* quat<float64> (kern_quatd) */
  KERN_DTYPE_BUILTIN_END,
  KERN_DTYPE_FIRST_STRUCT = 256
};
/* The dtype of vec<T, n> (elem: T's dtype, any integer or float dtype, not
 * bool; n from 1 to 16), for arrays of them and kernels' vec<T, N>
 * parameters: the builtin dtype where the type has a short name
 * (kern_dtype_vec(KERN_FLOAT32, 3) == KERN_VEC3, KERN_FLOAT64 x 2..4 are
 * KERN_DVEC2.., KERN_INT32 x 2..4 KERN_IVEC2..), else an id from
 * KERN_DTYPE_FIRST_STRUCT up, the same for the same (elem, n) for the whole
 * process; its name is "vec<float16, 5>", its size n * kern_dtype_size(elem),
 * its alignment elem's. Nothing to free. KERN_DTYPE_INVALID (no error
 * message) for any other elem or n. DLPack refuses these ids, as it does
 * structs. */
KERN_API kern_dtype kern_dtype_vec(kern_dtype elem, int n);
/* Likewise the dtype of mat<T, rows, cols> (rows and cols from 1 to 16):
 * KERN_MAT22..KERN_MAT44 for KERN_FLOAT32 2x2..4x4, else an id named
 * "mat<float64, 2, 3>", rows * cols * kern_dtype_size(elem) bytes, row-major. */
KERN_API kern_dtype kern_dtype_mat(kern_dtype elem, int rows, int cols);
/* The dtype of quat<T> (elem: KERN_FLOAT16, KERN_BFLOAT16, KERN_FLOAT32 or
 * KERN_FLOAT64): KERN_QUATH, KERN_QUATBF16, KERN_QUAT or KERN_QUATD (named
 * "quath", "quat<bfloat16>", "quat", "quatd"; 4 * kern_dtype_size(elem) bytes,
 * elem's alignment). KERN_DTYPE_INVALID (no error message) for any other elem. */
KERN_API kern_dtype kern_dtype_quat(kern_dtype elem);
/* Bytes per element (vec3: 12, mat33: 36, structs: their C layout); 0 if invalid. */
KERN_API size_t kern_dtype_size(kern_dtype);
/* Alignment in bytes; 0 if invalid. */
KERN_API size_t kern_dtype_align(kern_dtype);
/* "float32", "vec3", a struct's name ...; "<invalid dtype>" if invalid. Static
 * storage (struct names live as long as the process). */
KERN_API const char *kern_dtype_name(kern_dtype);

/* ---- devices ------------------------------------------------------------------ */

/* Devices: index 0 is "cpu", then "cuda:0", "cuda:1" ... */
KERN_API int kern_device_count(void);
/* "cpu", "cuda" (the first CUDA device) or "cuda:N". NULL (and a message that
 * says why: bad name, no CUDA device present, no such ordinal) if absent. */
KERN_API kern_device *kern_device_get(const char *name);
/* NULL if index is outside [0, kern_device_count()). */
KERN_API kern_device *kern_device_at(int index);
/* "cpu", "cuda:0" ...; "" for NULL. Static storage. */
KERN_API const char *kern_device_name(const kern_device *);
KERN_API bool kern_device_is_cuda(const kern_device *);
/* Waits for the device's pending work. CPU launches are synchronous, so on the
 * CPU this returns KERN_OK at once. Call it before code that is not ordered on
 * the device's stream (the host, MPI) reads or writes arrays kern's queued
 * work uses (docs/distributed.md). */
KERN_API kern_status kern_device_synchronize(kern_device *);
/* Coarse device-level rule of the memory-access guide: can kernels launched on
 * `launch` use memory allocated by `owner` with the owner's current allocator? */
KERN_API bool kern_device_can_access(const kern_device *launch, const kern_device *owner);

typedef struct {
  int ordinal, sm_major, sm_minor; /* the CPU: ordinal -1, sm 0.0 */
  size_t total_memory;             /* bytes; the CPU: physical memory */
  bool is_uva, is_mempool_supported, is_managed_memory_supported,
      is_concurrent_managed_access_supported,
      is_cpu_memory_access_from_gpu_supported, /* pageable host memory */
      is_gpu_memory_access_from_cpu_supported, /* managed memory, direct from host */
      is_cpu_gpu_atomic_supported;             /* host-native atomics */
} kern_device_info;
/* Every capability is false on the CPU. */
KERN_API kern_status kern_device_info_get(const kern_device *, kern_device_info *out);
/* CUDA only: let kernels on `peer` access `target`'s device memory (peer
 * access) or `target`'s memory pool (pool access). Where the driver says
 * `peer` cannot reach `target` at all (cuDeviceCanAccessPeer), switching on
 * fails with KERN_ERR_UNSUPPORTED and changes nothing; switching off always
 * works. */
KERN_API kern_status kern_device_enable_peer_access(kern_device *target, kern_device *peer,
                                                    bool on);
KERN_API kern_status kern_device_enable_mempool_access(kern_device *target, kern_device *peer,
                                                       bool on);

/* ---- arrays and memory ----------------------------------------------------------- */

typedef enum {
  KERN_MEM_HOST,        /* pageable host memory (kern's CPU arrays: 64-byte aligned) */
  KERN_MEM_PINNED_HOST, /* page-locked host memory */
  KERN_MEM_CUDA_DEVICE,
  KERN_MEM_CUDA_MEMPOOL,
  KERN_MEM_CUDA_MANAGED,
  KERN_MEM_UNKNOWN /* a wrapped pointer kern cannot classify */
} kern_memory_kind;

typedef enum {
  KERN_ALLOC_DEFAULT,      /* CPU: HOST; CUDA: CUDA_DEVICE (cuMemAlloc), pools or not */
  KERN_ALLOC_PINNED,       /* CPU only: page-locked (cuMemAllocHost); needs the CUDA
                              driver and a GPU, else KERN_ERR_UNSUPPORTED */
  KERN_ALLOC_CUDA_DEVICE,  /* cuMemAlloc */
  KERN_ALLOC_CUDA_MEMPOOL, /* the device's memory pool, stream-ordered (cuMemAllocAsync) */
  KERN_ALLOC_CUDA_MANAGED  /* cuMemAllocManaged (attach global); never during a graph
                              capture: KERN_ERR_CAPTURE, allocate before the capture */
} kern_allocator;

/* Shapes have 1 to 4 dims, each >= 0 (a dim of 0 makes an empty array). A byte
 * size that overflows is KERN_ERR_INVALID_ARGUMENT; an allocation the system
 * refuses is KERN_ERR_OUT_OF_MEMORY. Arrays are C-ordered (row-major). */

/* A new array filled with zero bytes, allocated with the device's allocator. */
KERN_API kern_array *kern_array_new(kern_device *, kern_dtype, int ndim, const int64_t *shape);
/* Like kern_array_new, contents unspecified. */
KERN_API kern_array *kern_array_empty(kern_device *, kern_dtype, int ndim, const int64_t *shape);
/* An array over memory kern does not own (kern_array_free leaves it alone; it
 * must outlive the array). strides: bytes per step along each dim, NULL for
 * dense C order; negative strides are rejected. The memory kind is the one kern
 * recorded when ptr is the start of one of its own allocations (no driver
 * call), else what the CUDA driver reports (registered or page-locked host
 * memory: PINNED_HOST; device, memory-pool or managed memory), else
 * KERN_MEM_UNKNOWN (so pageable memory kern did not allocate is UNKNOWN). GPU
 * memory must be wrapped with the device it belongs to: anything else is
 * KERN_ERR_INVALID_ARGUMENT. */
KERN_API kern_array *kern_array_wrap(void *ptr, kern_device *, kern_dtype, int ndim,
                                     const int64_t *shape, const int64_t *strides);
/* A window [offset, offset + shape) of an array, sharing its memory and
 * strides; ndim must equal the array's. The view holds a reference: the memory
 * stays allocated until the array and all its views are freed, in any order. */
KERN_API kern_array *kern_array_view(kern_array *, int ndim, const int64_t *offset,
                                     const int64_t *shape);
/* Releases the handle (and the memory once no view uses it). NULL is ignored. */
KERN_API void kern_array_free(kern_array *);

/* Host memory <-> array; bytes must equal kern_array_nbytes(). Host data is
 * dense C order; strided arrays are gathered/scattered. */
KERN_API kern_status kern_array_write(kern_array *, const void *src, size_t bytes);
KERN_API kern_status kern_array_read(const kern_array *, void *dst, size_t bytes);
/* dst <- src: same dtype and shape, any devices and strides; overlapping views
 * are handled. Between two GPUs it runs after the source GPU's queued work,
 * and the source GPU's later work waits for it (docs/memory.md). */
KERN_API kern_status kern_array_copy(kern_array *dst, const kern_array *src);
/* Sets every element to *value (kern_dtype_size(dtype) bytes). */
KERN_API kern_status kern_array_fill(kern_array *, const void *value);

/* The address of element [0,0,...]: host memory, or on a CUDA device a device
 * pointer (CUdeviceptr) of the device's primary context, which the CUDA
 * runtime, NCCL and CUDA-aware MPI take as it is. Stable for the array's life.
 * Work kern has queued on the array may still be running: see
 * kern_device_synchronize and kern_stream_cuda_handle. */
KERN_API void *kern_array_data(kern_array *);
KERN_API kern_device *kern_array_device(const kern_array *);
KERN_API kern_memory_kind kern_array_memory_kind(const kern_array *); /* views: the owner's */
KERN_API int kern_array_ndim(const kern_array *);                     /* 0 for NULL */
KERN_API int64_t kern_array_shape(const kern_array *, int dim);       /* 0 outside [0, ndim) */
KERN_API int64_t kern_array_stride(const kern_array *, int dim); /* bytes; 0 outside [0, ndim) */
KERN_API kern_dtype kern_array_dtype(const kern_array *);
KERN_API int64_t kern_array_size(const kern_array *);       /* elements */
KERN_API size_t kern_array_nbytes(const kern_array *);      /* size * dtype size */
KERN_API bool kern_array_is_contiguous(const kern_array *); /* dense C order */

/* Can kernels launched on `launch` use this array (the memory-access table)?
 * false means "not verified accessible". */
KERN_API bool kern_can_access(const kern_device *launch, const kern_array *);
/* Sets the allocator for the device's later allocations and returns the
 * previous one. An allocator the device cannot use (a CUDA allocator on the
 * CPU, PINNED on a GPU) is refused: nothing changes, the message says why, and
 * the current allocator is returned. */
KERN_API kern_allocator kern_device_set_allocator(kern_device *, kern_allocator);
KERN_API kern_allocator kern_device_get_allocator(const kern_device *);
/* CUDA device memory only (a cuIpcMemHandle, 64 bytes, into handle_out) of an
 * array that owns its allocation; managed, memory-pool, host, external
 * (wrapped or from DLPack) and view arrays: KERN_ERR_UNSUPPORTED saying why. */
KERN_API kern_status kern_array_ipc_handle(const kern_array *, void *handle_out);
/* DLPack both ways, zero-copy (the DLManagedTensor of dlpack.h; docs/memory.md).
 * from_dlpack: kDLCPU, kDLCUDA (device_id N -> "cuda:N"), kDLCUDAHost (pinned,
 * on "cpu") and kDLCUDAManaged tensors of bool, int/uint 8-64 and float
 * 16/32/64 with one lane, 1 to 4 dims, byte_offset and element strides (NULL:
 * dense; negative: refused). On success the array owns the tensor: its deleter
 * runs once, when the array and all its views are freed. On failure
 * (KERN_ERR_UNSUPPORTED for what kern cannot represent, INVALID_ARGUMENT for a
 * malformed tensor) the tensor stays the caller's and its deleter is not called.
 * to_dlpack: a new tensor whose deleter the consumer must call; it holds a
 * reference to the array's memory, which stays allocated until then even if
 * the array is freed first (wrapped memory must outlive the tensor). Vector,
 * matrix and quat dtypes become trailing dims of their component type; struct
 * dtypes are KERN_ERR_UNSUPPORTED. Neither direction synchronizes: finish or
 * order pending CUDA work before handing memory over. */
KERN_API kern_array *kern_array_from_dlpack(struct DLManagedTensor *);
KERN_API struct DLManagedTensor *kern_array_to_dlpack(kern_array *);

/* ---- modules and kernels ------------------------------------------------------------ */

/* Compiles a .kern file (and its imports): NULL with KERN_ERR_COMPILE and the
 * rendered diagnostics as the message when it has errors (a missing import
 * included), KERN_ERR_IO when the file cannot be read: missing, unreadable,
 * or not a regular file (a directory, a FIFO or a device, which could block
 * the call forever, is not read). Code for a device is generated on the first launch there.
 * A relative path is looked for in the working directory first, then (unless
 * it starts with ./ or ../) in each directory of KERN_PATH (':'-separated,
 * read at kern_init) and of kern_module_search_path_add, in order; the
 * module is named by the path it was found at, and a missing file's message
 * names the directories tried. */
KERN_API kern_module *kern_module_load(const char *path);
/* Adds a directory to search for relative module paths, after the working
 * directory and KERN_PATH's. "$ORIGIN" at its start is the directory of the
 * running program, so "$ORIGIN/../share/app/kernels" finds modules installed
 * beside it. Process-wide, for the life of the process.
 * KERN_ERR_INVALID_ARGUMENT for NULL or "". */
KERN_API kern_status kern_module_search_path_add(const char *dir);
/* The same from text; name is used in diagnostics and to resolve imports. */
KERN_API kern_module *kern_module_from_source(const char *name, const char *src);
/* One source file held in memory: the path it is known by (diagnostics,
 * imports) and its text. `kernc embed` writes a table of them. */
typedef struct kern_source {
  const char *path;
  const char *text;
} kern_source;
/* A module from files in memory, none read from disk: files[0] is the root;
 * an import is joined to the importing file's path as kern_module_load would
 * and looked up among the paths of files[] (entries with the same text
 * pointer are one file under several spellings). NULL with KERN_ERR_COMPILE
 * when it has errors (an import not in files[] is one),
 * KERN_ERR_INVALID_ARGUMENT for nfiles < 1 or a NULL path or text. */
KERN_API kern_module *kern_module_from_sources(int nfiles, const kern_source *files);
/* Frees the module, its kernels and its compiled code. Its kernels must not be
 * used afterwards, nor while a launch of them is running. NULL is ignored.
 * Struct dtypes it registered stay valid. */
KERN_API void kern_module_free(kern_module *);
/* NULL (KERN_ERR_NOT_FOUND, the message lists the kernels there are) if absent. */
KERN_API kern_kernel *kern_module_kernel(kern_module *, const char *name);
/* A struct of the module as an array dtype; KERN_DTYPE_INVALID if absent. */
KERN_API kern_dtype kern_module_dtype(kern_module *, const char *struct_name);
/* The rendered warnings of a module that compiled; "" when none. Owned by the module. */
KERN_API const char *kern_module_diagnostics(const kern_module *);
/* The module's name or path. */
KERN_API const char *kern_module_name(const kern_module *);
/* Fast math for this module (default off), before its first launch: on the
 * GPU NVRTC's --use_fast_math (a*b+c fused, approximate division, sqrt,
 * rsqrt and transcendentals, denormals flushed to zero), on the CPU
 * -ffp-contract=fast with reassociation and reciprocals; KN_FAST_MATH is
 * defined for its code. This BREAKS the same-bits promise for the module:
 * CPU and GPU results, and results against an IEEE reference, may differ in
 * the last bits or more. Its code is cached under its own key.
 * KERN_ERR_INVALID_ARGUMENT once the module has been compiled for a device;
 * KERN_ERR_UNSUPPORTED for a module built by kernc build. */
KERN_API kern_status kern_module_set_fast_math(kern_module *, bool on);
KERN_API bool kern_module_fast_math(const kern_module *);
/* verify_fp for this module (default off; KERN_VERIFY_FP=1 at kern_init turns
 * it on for every module loaded afterwards), before its first launch: a
 * kernel that stores a NaN or an infinity to an array element (=, a compound
 * assignment, ++/--, of a float, or of a vector, matrix or struct holding
 * floats, and an atomic on such an element, its old value used or not)
 * fails the launch with KERN_ERR_BOUNDS and a message naming the
 * kernel, file:line, the value and the index: "non-finite value stored in
 * kernel 'k' at k.kern:4: NaN at index [3] (parameter 'y', thread 3)". The
 * first failing store of a launch is reported; the store itself happens,
 * and the other threads go on. An element passed to a reference parameter
 * by a call statement is tested when the call returns; tile_store's elements
 * are tested too. Local arrays are not checked. Its code is cached under its
 * own key.
 * KERN_ERR_INVALID_ARGUMENT for NULL or once the module has been compiled for
 * a device; KERN_ERR_UNSUPPORTED for a module built by kernc build. */
KERN_API kern_status kern_module_set_verify_fp(kern_module *, bool on);
KERN_API bool kern_module_verify_fp(const kern_module *);

/* Kernel introspection (for generic launchers such as `kernc run`). */
KERN_API const char *kern_kernel_name(const kern_kernel *);
KERN_API int kern_kernel_num_params(const kern_kernel *);
KERN_API const char *kern_kernel_param_name(const kern_kernel *, int i);
/* The dtype of a scalar parameter, or the element dtype of an array parameter. */
KERN_API kern_dtype kern_kernel_param_dtype(const kern_kernel *, int i);
/* 0 for a by-value parameter, else the array's ndim. -1 if i is out of range. */
KERN_API int kern_kernel_param_ndim(const kern_kernel *, int i);
/* Whether the kernel is tiled (uses tiles, docs/language.md "Tiles"): each
 * launch index is then an instance, run by one pool thread on the CPU and by
 * one thread block on a GPU. false for NULL. */
KERN_API bool kern_kernel_is_tiled(const kern_kernel *);
/* The threads per instance a GPU runs this tiled kernel with, from the next
 * launch on: a multiple of 32 from 32 to 1024, or 0 for the default (256;
 * 128 for a kernel whose whole-loop matrix products are all FAST).
 * A performance setting only: results are the same bits whatever it is.
 * Thread-safe (launches already in flight keep theirs); the CPU ignores it.
 * KERN_ERR_INVALID_ARGUMENT for NULL or another count. */
KERN_API kern_status kern_kernel_set_tile_block(kern_kernel *, int threads);

/* ---- launches ------------------------------------------------------------------ */

typedef struct {
  int ndim;
  int64_t shape[4];
} kern_dims;

#ifdef __cplusplus
static inline kern_dims kern_dim1(int64_t a) {
  kern_dims d = {1, {a, 1, 1, 1}};
  return d;
}
static inline kern_dims kern_dim2(int64_t a, int64_t b) {
  kern_dims d = {2, {a, b, 1, 1}};
  return d;
}
static inline kern_dims kern_dim3(int64_t a, int64_t b, int64_t c) {
  kern_dims d = {3, {a, b, c, 1}};
  return d;
}
static inline kern_dims kern_dim4(int64_t a, int64_t b, int64_t c, int64_t e) {
  kern_dims d = {4, {a, b, c, e}};
  return d;
}
#define KERN_DIM1(a)          kern_dim1(a)
#define KERN_DIM2(a, b)       kern_dim2(a, b)
#define KERN_DIM3(a, b, c)    kern_dim3(a, b, c)
#define KERN_DIM4(a, b, c, d) kern_dim4(a, b, c, d)
#else
#define KERN_DIM1(a)          ((kern_dims){1, {(a), 1, 1, 1}})
#define KERN_DIM2(a, b)       ((kern_dims){2, {(a), (b), 1, 1}})
#define KERN_DIM3(a, b, c)    ((kern_dims){3, {(a), (b), (c), 1}})
#define KERN_DIM4(a, b, c, d) ((kern_dims){4, {(a), (b), (c), (d)}})
#endif

/* One launch argument: an array, or a value of some dtype (scalar, vector,
 * matrix, struct). Build it with the constructors below; values are copied
 * into the argument (up to KERN_ARG_INLINE_BYTES) or, for bigger structs,
 * referenced: then the bytes must stay valid until kern_launch returns, which
 * copies them. */
#define KERN_ARG_INLINE_BYTES 64
enum { KERN_ARG_NONE = 0, KERN_ARG_ARRAY = 1, KERN_ARG_VALUE = 2 };
typedef struct kern_arg {
  int32_t kind;      /* KERN_ARG_* */
  kern_dtype dtype;  /* VALUE: its dtype */
  kern_array *array; /* ARRAY */
  const void *ptr;   /* VALUE bigger than the inline storage: the caller's bytes */
  union {
    unsigned char bytes[KERN_ARG_INLINE_BYTES];
    int64_t i64;
    double f64;
  } value;
} kern_arg;

KERN_API kern_arg kern_arg_array(kern_array *);
KERN_API kern_arg kern_arg_bool(bool);
KERN_API kern_arg kern_arg_i8(int8_t);
KERN_API kern_arg kern_arg_i16(int16_t);
KERN_API kern_arg kern_arg_i32(int32_t);
KERN_API kern_arg kern_arg_i64(int64_t);
KERN_API kern_arg kern_arg_u8(uint8_t);
KERN_API kern_arg kern_arg_u16(uint16_t);
KERN_API kern_arg kern_arg_u32(uint32_t);
KERN_API kern_arg kern_arg_u64(uint64_t);
KERN_API kern_arg kern_arg_f32(float);
KERN_API kern_arg kern_arg_f64(double);
KERN_API kern_arg kern_arg_vec2(float, float);
KERN_API kern_arg kern_arg_vec3(float, float, float);
KERN_API kern_arg kern_arg_vec4(float, float, float, float);
/* Any by-value dtype (float16 or bfloat16 bits, dvec3, mat33, a struct ...) from its bytes
 * in the dtype's layout; see kern_arg for how long they must live. */
KERN_API kern_arg kern_arg_bytes(kern_dtype, const void *);
/* Returns its argument: lets KERN_LAUNCH take prebuilt kern_args. */
KERN_API kern_arg kern_arg_pass(kern_arg);

/* Runs `kernel` once per index of dims on `device`. Checks, with
 * KERN_ERR_INVALID_ARGUMENT and a message naming the kernel, the parameter and
 * what was expected: the argument count, array vs value, dtype, ndim, NULL
 * arrays, dims (1..4 dims, each >= 0, total below 2^31); and, by the access
 * mode, that arrays are usable on the device (KERN_ERR_ACCESS). A dim of 0
 * launches nothing. The first launch of a module on a device compiles it
 * (KERN_ERR_COMPILE on failure). On the CPU the call returns when the kernel
 * has finished; on CUDA it is queued on the device's stream. Any number of
 * threads may launch at once. */
KERN_API kern_status kern_launch(kern_kernel *, kern_device *, kern_dims, int nargs,
                                 const kern_arg *args);

/* kern_launch with this launch's threads per instance for a tiled kernel
 * (a multiple of 32 from 32 to 1024; it overrides kern_kernel_set_tile_block
 * for this launch only). Any other kernel launches as with kern_launch.
 * KERN_ERR_INVALID_ARGUMENT for another count. */
KERN_API kern_status kern_launch_tile_block(kern_kernel *, kern_device *, kern_dims, int threads,
                                            int nargs, const kern_arg *args);

/* KERN_LAUNCH(kernel, device, dims, args...): kern_launch with 1 to 16
 * arguments converted by type: kern_array* -> array; int -> int32; long, long
 * long -> int64; unsigned -> uint32; unsigned long (long) -> uint64; float;
 * double; bool; signed char/short -> int8/int16; unsigned char/short ->
 * uint8/uint16; the value types declared below (kern_vec2/3/4, kern_dvec2/3/4,
 * kern_ivec2/3/4, kern_mat22/33/44, kern_quat, kern_quath, kern_quatbf16,
 * kern_quatd, kern_transform, kern_spatial_vector, kern_float16,
 * kern_bfloat16) -> their dtype;
 * kern_arg as is. Other types do not compile: wrap them with a constructor
 * (kern_arg_bytes for structs). A compound literal's commas split macro
 * arguments: write ((kern_vec3){1, 2, 3}) in parentheses, or use a variable.
 * In C, `true` and `false` are ints: write (bool)true or kern_arg_bool(true).
 * Use kern_launch directly for kernels without parameters. */
#define KERN_LAUNCH(kernel, device, dims, ...)                                                     \
  KERN_LAUNCH_IMPL_((kernel), (device), (dims), __VA_ARGS__)

/* ---- ahead-of-time modules (kernc build, docs/aot.md) ----------------------------- */

/* The C layouts of kern's by-value types (the headers kernc build writes use
 * them; kern_arg_bytes takes them): components tightly packed, matrices
 * row-major m[row][col], quaternions x, y, z then the real part w. */
typedef struct kern_float16 {
  uint16_t bits;
} kern_float16; /* IEEE binary16 bits */
typedef struct kern_bfloat16 {
  uint16_t bits;
} kern_bfloat16; /* bfloat16 bits: a float32's top 16 (sign, 8 exponent, 7 fraction bits) */
typedef struct kern_vec2 {
  float x, y;
} kern_vec2;
typedef struct kern_vec3 {
  float x, y, z;
} kern_vec3;
typedef struct kern_vec4 {
  float x, y, z, w;
} kern_vec4;
typedef struct kern_dvec2 {
  double x, y;
} kern_dvec2;
typedef struct kern_dvec3 {
  double x, y, z;
} kern_dvec3;
typedef struct kern_dvec4 {
  double x, y, z, w;
} kern_dvec4;
typedef struct kern_ivec2 {
  int32_t x, y;
} kern_ivec2;
typedef struct kern_ivec3 {
  int32_t x, y, z;
} kern_ivec3;
typedef struct kern_ivec4 {
  int32_t x, y, z, w;
} kern_ivec4;
typedef struct kern_mat22 {
  float m[2][2];
} kern_mat22;
typedef struct kern_mat33 {
  float m[3][3];
} kern_mat33;
typedef struct kern_mat44 {
  float m[4][4];
} kern_mat44;
typedef struct kern_quat {
  float x, y, z, w;
} kern_quat;
/* quat<T> of the other float types (KERN_QUATH, KERN_QUATBF16, KERN_QUATD). */
typedef struct kern_quath {
  kern_float16 x, y, z, w;
} kern_quath;
typedef struct kern_quatbf16 {
  kern_bfloat16 x, y, z, w;
} kern_quatbf16;
typedef struct kern_quatd {
  double x, y, z, w;
} kern_quatd;
/* A rigid transform: x -> q x q* + p (q a unit quaternion); 28 bytes. */
typedef struct kern_transform {
  kern_vec3 p;
  kern_quat q;
} kern_transform;
/* Spatial (6D) vectors: the angular part v[0..2], then the linear part v[3..5]. */
typedef struct kern_spatial_vector {
  float v[6];
} kern_spatial_vector;
/* 144 bytes: more than a kern_arg holds, so a by-value spatial_matrix argument
 * is kern_arg_bytes(KERN_SPATIAL_MATRIX, &m), m living until the launch
 * returns (KERN_LAUNCH does not take one). */
typedef struct kern_spatial_matrix {
  float m[6][6];
} kern_spatial_matrix;

/* These values as launch arguments of their dtype (copied: every one fits
 * KERN_ARG_INLINE_BYTES). KERN_LAUNCH applies them by type, so a kern_vec3
 * variable is passed as is. */
static inline kern_arg kern_arg_of_float16(kern_float16 v) {
  return kern_arg_bytes(KERN_FLOAT16, &v);
}
static inline kern_arg kern_arg_of_bfloat16(kern_bfloat16 v) {
  return kern_arg_bytes(KERN_BFLOAT16, &v);
}
static inline kern_arg kern_arg_of_vec2(kern_vec2 v) { return kern_arg_bytes(KERN_VEC2, &v); }
static inline kern_arg kern_arg_of_vec3(kern_vec3 v) { return kern_arg_bytes(KERN_VEC3, &v); }
static inline kern_arg kern_arg_of_vec4(kern_vec4 v) { return kern_arg_bytes(KERN_VEC4, &v); }
static inline kern_arg kern_arg_of_dvec2(kern_dvec2 v) { return kern_arg_bytes(KERN_DVEC2, &v); }
static inline kern_arg kern_arg_of_dvec3(kern_dvec3 v) { return kern_arg_bytes(KERN_DVEC3, &v); }
static inline kern_arg kern_arg_of_dvec4(kern_dvec4 v) { return kern_arg_bytes(KERN_DVEC4, &v); }
static inline kern_arg kern_arg_of_ivec2(kern_ivec2 v) { return kern_arg_bytes(KERN_IVEC2, &v); }
static inline kern_arg kern_arg_of_ivec3(kern_ivec3 v) { return kern_arg_bytes(KERN_IVEC3, &v); }
static inline kern_arg kern_arg_of_ivec4(kern_ivec4 v) { return kern_arg_bytes(KERN_IVEC4, &v); }
static inline kern_arg kern_arg_of_mat22(kern_mat22 v) { return kern_arg_bytes(KERN_MAT22, &v); }
static inline kern_arg kern_arg_of_mat33(kern_mat33 v) { return kern_arg_bytes(KERN_MAT33, &v); }
static inline kern_arg kern_arg_of_mat44(kern_mat44 v) { return kern_arg_bytes(KERN_MAT44, &v); }
static inline kern_arg kern_arg_of_quat(kern_quat v) { return kern_arg_bytes(KERN_QUAT, &v); }
static inline kern_arg kern_arg_of_quath(kern_quath v) { return kern_arg_bytes(KERN_QUATH, &v); }
static inline kern_arg kern_arg_of_quatbf16(kern_quatbf16 v) {
  return kern_arg_bytes(KERN_QUATBF16, &v);
}
static inline kern_arg kern_arg_of_quatd(kern_quatd v) { return kern_arg_bytes(KERN_QUATD, &v); }
static inline kern_arg kern_arg_of_transform(kern_transform v) {
  return kern_arg_bytes(KERN_TRANSFORM, &v);
}
static inline kern_arg kern_arg_of_spatial_vector(kern_spatial_vector v) {
  return kern_arg_bytes(KERN_SPATIAL_VECTOR, &v);
}

/* A module compiled by `kernc build` into PREFIX.o: its kernels' code for the
 * CPU and the GPU archs it was built for, and its source. */
typedef struct kern_embedded kern_embedded;
/* The module of an embedded table, made on the first call (thread-safe; needs
 * no C compiler, no NVRTC and no cache). The library owns it until
 * kern_shutdown (kern_module_free ignores it); later calls return the same
 * module. NULL with KERN_ERR_UNSUPPORTED for a table built for another kern
 * ABI version. */
KERN_API kern_module *kern_module_embedded(const kern_embedded *);
/* Launches the embedded module's kernel number `kernel` (declaration order)
 * with args[i] pointing at argument i: a kern_array * for an array parameter,
 * else the value in its C layout. The PREFIX_KERNEL_launch functions call it. */
KERN_API kern_status kern_launch_embedded(const kern_embedded *, int kernel, kern_device *,
                                          kern_dims, int nargs, const void *const *args);

/* ---- primitives (kernels kern ships, written in kern) ------------------------------ */

/* The two precisions of kern_array_matmul and tile_matmul (docs/language.md). */
typedef enum { KERN_MATMUL_EXACT, KERN_MATMUL_FAST } kern_matmul_mode;
/* c = a x b for 2-D arrays a (M x K), b (K x N) and c (M x N); any strides
 * (views, transposes through kern_array_wrap's strides). c must not overlap a
 * or b. KERN_MATMUL_EXACT (a, b and c all float32, or all float64): each
 * c[i,j] = fma(a[i,k], b[k,j], acc) for k ascending from 0, acc starting at
 * +0.0: one fused multiply-add per step, correctly rounded on both devices, so
 * the same bits everywhere (K = 0 gives +0.0). KERN_MATMUL_FAST: a and b
 * float16, bfloat16 or float32, c float32; float32 inputs are rounded to TF32
 * (10 fraction bits, to nearest, ties away from zero; a NaN with payload only
 * in the 13 dropped bits becomes an infinity, as on the GPU), float16 and bfloat16
 * ones are exact; on GPUs of sm_80 and newer tensor cores sum the products,
 * elsewhere the same fma chain runs on the rounded inputs (docs/runtime.md
 * gives the error bound). Runs on the
 * arrays' device, on its current stream (inside a graph capture it is
 * captured like a launch); the first call on a device compiles kern's matmul
 * module (then cached like any module). KERN_ERR_INVALID_ARGUMENT with a
 * message for a NULL array, a rank other than 2, mismatched dimensions,
 * dtypes the mode does not take, arrays on different devices or an unknown
 * mode; launch errors as kern_launch's. */
KERN_API kern_status kern_array_matmul(const kern_array *a, const kern_array *b, kern_array *c,
                                       kern_matmul_mode mode);

/* ---- access checks --------------------------------------------------------------- */

/* In every mode, CPU launches refuse CUDA device, pool and (where the table
 * says so) managed memory with KERN_ERR_ACCESS: a CPU thread touching it would
 * kill the process. CHECKED also explains, once per (kernel, parameter, array
 * device, launch device) through the warning handler, a kernel that applies
 * atomics to memory the CPU and a GPU share (host or managed memory on a GPU
 * launch, managed memory on a CPU launch) when that GPU does not report
 * is_cpu_gpu_atomic_supported; the launch goes ahead. docs/memory.md has the
 * rules. */
typedef enum {
  KERN_ACCESS_RELAXED, /* type, dtype and ndim only (default) */
  KERN_ACCESS_STRICT,  /* every array on the launch device */
  KERN_ACCESS_CHECKED  /* memory-access table (KERN_ERR_ACCESS naming kernel,
                          parameter, array device, memory kind, launch device);
                          unknown provenance warns once and launches */
} kern_access_mode;
/* Process-wide; returns the previous mode. */
KERN_API kern_access_mode kern_set_launch_access_mode(kern_access_mode);
KERN_API kern_access_mode kern_get_launch_access_mode(void);
/* Where CHECKED-mode warnings go (default: a line on stderr). fn == NULL
 * restores the default. fn may be called from any launching thread. */
KERN_API void kern_set_warning_handler(void (*fn)(const char *msg, void *ud), void *ud);

/* ---- primitives ------------------------------------------------------------------ */

/* Reductions and scans over a 1-D array (any strides) of an integer dtype or
 * float32/float64, written in kern with tiles and shipped inside the library
 * (docs/runtime.md, "Primitives"). Each runs on the arrays' device, queued on
 * its current stream like a launch (on the CPU it returns when done), and is
 * recorded by a graph capture like a launch; temporaries of more than one
 * pass are memory-pool allocations on a GPU, so they may not be called
 * inside kern_capture_if/while blocks for inputs longer than one chunk. The
 * first call for a dtype makes a module, and the first call on a device
 * compiles it (KERN_ERR_COMPILE on failure), then both are kept until
 * kern_shutdown. Thread-safe. Argument errors (NULL, not 1-D, an
 * unsupported dtype, arrays on different devices, out of the wrong dtype or
 * shape) are KERN_ERR_INVALID_ARGUMENT with a message, and nothing runs.
 *
 * out's dtype is the accumulator: in's own, or the wider one of the same kind
 * (int64 for signed, uint64 for unsigned integers, float64 for floats), each
 * element converted on its own before it is combined. Results follow the
 * pairwise tree of docs/language.md ("The order of reductions and scans")
 * over the whole array: the same bits on every device, block size and thread
 * count. Integer sums wrap around (modulo 2^bits); float min and max ignore
 * NaN elements as the min builtin does (NaN only when every element is NaN)
 * and order -0 below +0. */
/* out: 1 element. The sum of an empty array is 0. */
KERN_API kern_status kern_array_sum(const kern_array *in, kern_array *out);
/* out: 1 element. An empty in is KERN_ERR_INVALID_ARGUMENT. */
KERN_API kern_status kern_array_min(const kern_array *in, kern_array *out);
KERN_API kern_status kern_array_max(const kern_array *in, kern_array *out);
/* Prefix sums: out (in's length) gets in[0] + ... + in[i] (inclusive) or the
 * sum of the elements before i (exclusive; out[0] = 0), in the documented scan
 * order extended over the whole array. out may be in itself (same dtype,
 * the same elements), but no other overlap. */
KERN_API kern_status kern_array_scan(const kern_array *in, kern_array *out, bool inclusive);
/* Sorts keys in place, ascending and stable (equal keys keep their order),
 * and permutes values (may be NULL) alongside: after the call keys[i] and
 * values[i] are the key and value that were at the i-th place of the sorted
 * order. keys: 1-D (any strides) of int32, uint32, int64, uint64 or float32;
 * float32 keys sort in IEEE total order by their bits: -NaN < -inf < ... <
 * -0 < +0 < ... < +inf < NaN (NaNs by their payload bits, negative ones
 * reversed). values: 1-D of any dtype (structs included), keys' length, on
 * keys' device, not overlapping keys. A radix sort: a pass per digit on
 * which the keys differ (4-bit digits on a GPU, 8-bit ones on the CPU), each
 * reading and writing every key and value; temporaries: a copy of keys and
 * of values (on a GPU 2 bytes per key more; values wider than 8 bytes: 8
 * more), memory-pool allocations on a GPU. Only bits move: the same result
 * on every device, block size and thread count. keys and values stay the
 * caller's (the call keeps no reference to them once its work is done).
 * Queued and captured like the primitives above (not inside
 * kern_capture_if/while blocks); thread-safe. Arrays of fewer than 2
 * elements are left as they are. KERN_ERR_INVALID_ARGUMENT with a message
 * for a NULL or non-1-D keys, an unsupported key dtype, values not 1-D, on
 * another device, of another length or overlapping keys, and more than
 * 16 (2^31 - 1) keys; nothing runs then. Out of memory and compile errors
 * come before anything moves; a later launch error leaves keys and values
 * in an unspecified order. */
KERN_API kern_status kern_array_sort(kern_array *keys, kern_array *values);

/* ---- streams and graph capture ----------------------------------------------------- */

/* Streams order CUDA work. A device starts with its own default stream;
 * kern_device_set_stream(d, s) sends d's later launches and copies to s (NULL:
 * back to the default). The CPU has no streams. */
/* A new stream on a CUDA device; kern_stream_free destroys it. */
KERN_API kern_stream *kern_stream_new(kern_device *);
/* Wraps a CUstream the caller created and keeps owning (never destroyed by kern). */
KERN_API kern_stream *kern_stream_wrap_cuda(kern_device *, void *cu_stream);
/* Frees a stream (after its work finished); if it was a device's current
 * stream the device goes back to its default. NULL is ignored. */
KERN_API void kern_stream_free(kern_stream *);
KERN_API kern_status kern_device_set_stream(kern_device *, kern_stream *);
/* The device's current stream; owned by kern or the caller as made. NULL on
 * the CPU, or when the GPU cannot start (its first use: the message says why). */
KERN_API kern_stream *kern_device_get_stream(kern_device *);
/* The CUstream (the CUDA runtime's cudaStream_t) behind a stream, for interop:
 * work other libraries queue on it (NCCL, cuBLAS) runs in order with kern's,
 * and is recorded by a capture open on the device. Valid until the stream is
 * freed (a device's default stream lives as long as the process). */
KERN_API void *kern_stream_cuda_handle(const kern_stream *);

/* Graph capture (docs/capture.md). Between begin and end on a device, kern
 * operations on that device are recorded instead of run: on CUDA every
 * thread's (they go to the device's current stream, which CUDA records); on
 * the CPU only the capturing thread's (the CPU's threads are its streams:
 * other threads' work runs at once, and in KERN_CAPTURE_GLOBAL mode their
 * allocations, host reads and writes and synchronize on the device fail with
 * KERN_ERR_CAPTURE). What is recorded:
 * launches (argument values as they were at the call, arrays by address, so
 * their contents may change between replays), device-side copies and fills,
 * and on CUDA memory-pool allocations and frees. CUDA records with stream
 * capture on the device's current stream; the CPU records a list that
 * kern_graph_launch replays in order on the thread pool, with the same rules.
 *
 * Operations that cannot be recorded fail with KERN_ERR_CAPTURE, a message
 * naming the operation, and no effect; the capture stays open and valid, so
 * it can go on or be ended or aborted: kern_device_synchronize, kern_array_read
 * and kern_array_write of the capturing device's arrays, copies between its
 * memory and another device's, non-pool CUDA allocations (KERN_ALLOC_CUDA_DEVICE,
 * MANAGED; use KERN_ALLOC_CUDA_MEMPOOL inside a capture), kern_device_set_stream,
 * and any operation on another device that touches the capturing device's
 * arrays. Misuse (begin twice, end without begin or from another thread than
 * begin, a graph of another device) is KERN_ERR_CAPTURE and changes nothing.
 *
 * A graph holds references to the memory of the arrays it uses: freeing such
 * an array after capture is safe (its memory lives until kern_graph_free);
 * wrapped memory (kern_array_wrap) must outlive the graph, and so must the
 * modules of its kernels. */
typedef enum {
  KERN_CAPTURE_GLOBAL,       /* default (CUDA's global mode): while the capture is
                                open, calls that are unsafe during capture fail in
                                every thread (on the CPU: another thread's
                                allocations, host reads and writes and
                                synchronize on the device, KERN_ERR_CAPTURE) */
  KERN_CAPTURE_THREAD_LOCAL, /* CUDA's thread-local mode: only the capturing thread
                                is restricted */
  KERN_CAPTURE_RELAXED       /* CUDA's relaxed mode: the driver restricts no thread;
                                kern still refuses, in the capturing thread, what it
                                cannot record (on the CPU: as THREAD_LOCAL) */
} kern_capture_mode;

/* Starts a capture on the device: kern_capture_begin_mode(d, KERN_CAPTURE_GLOBAL). */
KERN_API kern_status kern_capture_begin(kern_device *);
KERN_API kern_status kern_capture_begin_mode(kern_device *, kern_capture_mode);
/* Ends the capture (on the thread that began it) and makes it an executable
 * graph in *out (free with kern_graph_free). When the capture was broken by a
 * driver failure inside it, returns that failure as KERN_ERR_CAPTURE, discards
 * the capture, and the device's stream is usable again. */
KERN_API kern_status kern_capture_end(kern_device *, kern_graph **out);
/* Ends the capture into an existing graph of the same device, replacing what
 * it runs. When the new capture has the same shape (the same operations in
 * the same order; arguments, dims and addresses may differ) the executable is
 * updated in place (CUDA: cuGraphExecUpdate), which is much cheaper than
 * instantiating; otherwise it is rebuilt. *updated (may be NULL) says which.
 * Replays already queued on CUDA run the old contents. On failure the graph
 * keeps its old contents. */
KERN_API kern_status kern_capture_end_update(kern_device *, kern_graph *, bool *updated);
/* Ends and discards the capture (on the thread that began it): nothing is run;
 * pool memory allocated inside it must not be used afterwards. */
KERN_API kern_status kern_capture_abort(kern_device *);
/* A capture is open on the device (begun by any thread). */
KERN_API bool kern_capture_is_active(const kern_device *);

/* Conditional blocks inside a capture, on a device flag: `flag` is an int32
 * array with one element, on the capturing device. At replay, the operations
 * recorded between kern_capture_if and kern_capture_end_if run when
 * flag[0] != 0 at that point of the replay; those between kern_capture_while and
 * kern_capture_end_while run again and again while flag[0] != 0, tested before
 * each iteration (so kernels inside the block update the flag). Blocks nest
 * (up to 8 deep). Inside a block, allocations are refused. CUDA uses
 * conditional graph nodes (driver 12.4 or newer, else KERN_ERR_UNSUPPORTED); the
 * CPU evaluates the flag in the replay. */
KERN_API kern_status kern_capture_if(kern_device *, kern_array *flag);
KERN_API kern_status kern_capture_end_if(kern_device *);
KERN_API kern_status kern_capture_while(kern_device *, kern_array *flag);
KERN_API kern_status kern_capture_end_while(kern_device *);

/* Replays a graph on the device it was captured on (CUDA: queued on the
 * device's current stream; the CPU: returns when done). A graph with debug
 * kernels replays synchronously and reports KERN_ERR_BOUNDS like a launch.
 * Replaying during a capture on the same device is KERN_ERR_CAPTURE. Several
 * threads may replay one graph at once, but not while it is being updated. */
KERN_API kern_status kern_graph_launch(kern_graph *);
KERN_API kern_device *kern_graph_device(const kern_graph *);
/* Releases the graph and its references to array memory. NULL is ignored. */
KERN_API void kern_graph_free(kern_graph *);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- KERN_LAUNCH machinery (not API) ------------------------------------------------ */

#define KERN_NARGS_(...)                                                                           \
  KERN_NARGS_N_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define KERN_NARGS_N_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n,    \
                      ...)                                                                         \
  n
#define KERN_CAT_(a, b)        KERN_CAT2_(a, b)
#define KERN_CAT2_(a, b)       a##b
#define KERN_MAP_(f, ...)      KERN_CAT_(KERN_MAP_, KERN_NARGS_(__VA_ARGS__))(f, __VA_ARGS__)
#define KERN_MAP_1(f, a)       f(a)
#define KERN_MAP_2(f, a, ...)  f(a), KERN_MAP_1(f, __VA_ARGS__)
#define KERN_MAP_3(f, a, ...)  f(a), KERN_MAP_2(f, __VA_ARGS__)
#define KERN_MAP_4(f, a, ...)  f(a), KERN_MAP_3(f, __VA_ARGS__)
#define KERN_MAP_5(f, a, ...)  f(a), KERN_MAP_4(f, __VA_ARGS__)
#define KERN_MAP_6(f, a, ...)  f(a), KERN_MAP_5(f, __VA_ARGS__)
#define KERN_MAP_7(f, a, ...)  f(a), KERN_MAP_6(f, __VA_ARGS__)
#define KERN_MAP_8(f, a, ...)  f(a), KERN_MAP_7(f, __VA_ARGS__)
#define KERN_MAP_9(f, a, ...)  f(a), KERN_MAP_8(f, __VA_ARGS__)
#define KERN_MAP_10(f, a, ...) f(a), KERN_MAP_9(f, __VA_ARGS__)
#define KERN_MAP_11(f, a, ...) f(a), KERN_MAP_10(f, __VA_ARGS__)
#define KERN_MAP_12(f, a, ...) f(a), KERN_MAP_11(f, __VA_ARGS__)
#define KERN_MAP_13(f, a, ...) f(a), KERN_MAP_12(f, __VA_ARGS__)
#define KERN_MAP_14(f, a, ...) f(a), KERN_MAP_13(f, __VA_ARGS__)
#define KERN_MAP_15(f, a, ...) f(a), KERN_MAP_14(f, __VA_ARGS__)
#define KERN_MAP_16(f, a, ...) f(a), KERN_MAP_15(f, __VA_ARGS__)

#ifdef __cplusplus
static inline kern_arg kern_to_arg_(kern_array *a) { return kern_arg_array(a); }
static inline kern_arg kern_to_arg_(bool v) { return kern_arg_bool(v); }
static inline kern_arg kern_to_arg_(signed char v) { return kern_arg_i8(v); }
static inline kern_arg kern_to_arg_(short v) { return kern_arg_i16(v); }
static inline kern_arg kern_to_arg_(int v) { return kern_arg_i32(v); }
static inline kern_arg kern_to_arg_(long v) { return kern_arg_i64(v); }
static inline kern_arg kern_to_arg_(long long v) { return kern_arg_i64(v); }
static inline kern_arg kern_to_arg_(unsigned char v) { return kern_arg_u8(v); }
static inline kern_arg kern_to_arg_(unsigned short v) { return kern_arg_u16(v); }
static inline kern_arg kern_to_arg_(unsigned v) { return kern_arg_u32(v); }
static inline kern_arg kern_to_arg_(unsigned long v) { return kern_arg_u64(v); }
static inline kern_arg kern_to_arg_(unsigned long long v) { return kern_arg_u64(v); }
static inline kern_arg kern_to_arg_(float v) { return kern_arg_f32(v); }
static inline kern_arg kern_to_arg_(double v) { return kern_arg_f64(v); }
static inline kern_arg kern_to_arg_(kern_arg v) { return v; }
static inline kern_arg kern_to_arg_(kern_float16 v) { return kern_arg_of_float16(v); }
static inline kern_arg kern_to_arg_(kern_bfloat16 v) { return kern_arg_of_bfloat16(v); }
static inline kern_arg kern_to_arg_(kern_vec2 v) { return kern_arg_of_vec2(v); }
static inline kern_arg kern_to_arg_(kern_vec3 v) { return kern_arg_of_vec3(v); }
static inline kern_arg kern_to_arg_(kern_vec4 v) { return kern_arg_of_vec4(v); }
static inline kern_arg kern_to_arg_(kern_dvec2 v) { return kern_arg_of_dvec2(v); }
static inline kern_arg kern_to_arg_(kern_dvec3 v) { return kern_arg_of_dvec3(v); }
static inline kern_arg kern_to_arg_(kern_dvec4 v) { return kern_arg_of_dvec4(v); }
static inline kern_arg kern_to_arg_(kern_ivec2 v) { return kern_arg_of_ivec2(v); }
static inline kern_arg kern_to_arg_(kern_ivec3 v) { return kern_arg_of_ivec3(v); }
static inline kern_arg kern_to_arg_(kern_ivec4 v) { return kern_arg_of_ivec4(v); }
static inline kern_arg kern_to_arg_(kern_mat22 v) { return kern_arg_of_mat22(v); }
static inline kern_arg kern_to_arg_(kern_mat33 v) { return kern_arg_of_mat33(v); }
static inline kern_arg kern_to_arg_(kern_mat44 v) { return kern_arg_of_mat44(v); }
static inline kern_arg kern_to_arg_(kern_quat v) { return kern_arg_of_quat(v); }
static inline kern_arg kern_to_arg_(kern_quath v) { return kern_arg_of_quath(v); }
static inline kern_arg kern_to_arg_(kern_quatbf16 v) { return kern_arg_of_quatbf16(v); }
static inline kern_arg kern_to_arg_(kern_quatd v) { return kern_arg_of_quatd(v); }
static inline kern_arg kern_to_arg_(kern_transform v) { return kern_arg_of_transform(v); }
static inline kern_arg kern_to_arg_(kern_spatial_vector v) { return kern_arg_of_spatial_vector(v); }
#define KERN_LAUNCH_IMPL_(k, d, dims, ...)                                                         \
  ([&]() -> kern_status {                                                                          \
    const kern_arg kern_args_[] = {KERN_MAP_(kern_to_arg_, __VA_ARGS__)};                          \
    return kern_launch(k, d, dims, (int)(sizeof kern_args_ / sizeof kern_args_[0]), kern_args_);   \
  }())
#else
#define KERN_TO_ARG_(x)                                                                            \
  _Generic((x), kern_array *                                                                       \
           : kern_arg_array, _Bool                                                                 \
           : kern_arg_bool, signed char                                                            \
           : kern_arg_i8, short                                                                    \
           : kern_arg_i16, int                                                                     \
           : kern_arg_i32, long                                                                    \
           : kern_arg_i64, long long                                                               \
           : kern_arg_i64, unsigned char                                                           \
           : kern_arg_u8, unsigned short                                                           \
           : kern_arg_u16, unsigned int                                                            \
           : kern_arg_u32, unsigned long                                                           \
           : kern_arg_u64, unsigned long long                                                      \
           : kern_arg_u64, float                                                                   \
           : kern_arg_f32, double                                                                  \
           : kern_arg_f64, kern_arg                                                                \
           : kern_arg_pass, kern_float16                                                           \
           : kern_arg_of_float16, kern_bfloat16                                                    \
           : kern_arg_of_bfloat16, kern_vec2                                                       \
           : kern_arg_of_vec2, kern_vec3                                                           \
           : kern_arg_of_vec3, kern_vec4                                                           \
           : kern_arg_of_vec4, kern_dvec2                                                          \
           : kern_arg_of_dvec2, kern_dvec3                                                         \
           : kern_arg_of_dvec3, kern_dvec4                                                         \
           : kern_arg_of_dvec4, kern_ivec2                                                         \
           : kern_arg_of_ivec2, kern_ivec3                                                         \
           : kern_arg_of_ivec3, kern_ivec4                                                         \
           : kern_arg_of_ivec4, kern_mat22                                                         \
           : kern_arg_of_mat22, kern_mat33                                                         \
           : kern_arg_of_mat33, kern_mat44                                                         \
           : kern_arg_of_mat44, kern_quat                                                          \
           : kern_arg_of_quat, kern_quath                                                          \
           : kern_arg_of_quath, kern_quatbf16                                                      \
           : kern_arg_of_quatbf16, kern_quatd                                                      \
           : kern_arg_of_quatd, kern_transform                                                     \
           : kern_arg_of_transform, kern_spatial_vector                                            \
           : kern_arg_of_spatial_vector)(x)
#define KERN_LAUNCH_IMPL_(k, d, dims, ...)                                                         \
  kern_launch(k, d, dims, KERN_NARGS_(__VA_ARGS__),                                                \
              (const kern_arg[]){KERN_MAP_(KERN_TO_ARG_, __VA_ARGS__)})
#endif

#endif /* KERN_H */
