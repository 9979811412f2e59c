/* kern_abi.h: what generated kernel code and the runtime agree on.
 *
 * Included first by kern_builtins.h; compiled by the host C compiler (the
 * runtime, the CPU modules) and by NVRTC (__CUDACC_RTC__). Changing any layout
 * here changes KN_ABI_VERSION.
 *
 * A kernel K's parameters are packed into `struct K_args` in declaration order
 * with C layout rules: an array parameter is a kn_array (72 bytes, align 8),
 * anything else its own type (scalars, kn_vec3, kn_mat33, user structs).
 * CPU entry:  void K_range(const K_args *a, const kn_ctx *c, int64_t begin, int64_t end)
 *             runs linear indices [begin, end).
 * CUDA entry: extern "C" __global__ void K_cuda(K_args a, kn_ctx c)
 *             a kernel that uses only tid(): a 1D grid, grid-stride over
 *             [0, c.n); one that uses tid(d): a grid shaped like the launch
 *             (x the last launch dimension, y the one before, z the rest),
 *             grid-stride along each (codegen/emit_cuda.c).
 * The _dense entries run when every array is C-contiguous, its data 16-byte
 * aligned, and no two arrays overlap (restrict pointers, vector loads).
 * Version 2: the CUDA grid shapes and the dense variant's conditions.
 */
#ifndef KN_ABI_H
#define KN_ABI_H

#define KN_ABI_VERSION 2

#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define KN_FN static __device__ __forceinline__
#else
#include <stdint.h>
#include <stdbool.h>
#define KN_FN static inline __attribute__((always_inline, unused))
#endif

/* An array argument: data pointer, shape, byte strides. Unused dims are 1/0. */
typedef struct kn_array {
  char *data;
  int64_t shape[4];
  int64_t strides[4];
} kn_array;

/* What went wrong in a debug launch: the first failing thread records it. */
/* KN_ERR_FP (verify_fp): a NaN or infinity stored; shape[0] says which (1 +inf,
 * 2 -inf, 3 NaN), index[] where. */
enum { KN_ERR_NONE = 0, KN_ERR_BOUNDS = 1, KN_ERR_ASSERT = 2, KN_ERR_FP = 3 };
typedef struct kn_error {
  int32_t flag; /* 0 until a thread claims it (atomic CAS 0 -> 1) */
  int32_t kind; /* KN_ERR_* */
  int32_t file; /* index into the module's file table */
  int32_t line;
  int32_t param; /* bounds: which array; assert: which message (-1: none) */
  int32_t ndim;  /* bounds: indices used (bits 0-7); bit 8 + k: index k is unsigned */
  int64_t tid;   /* linear index of the failing thread */
  int64_t index[4];
  int64_t shape[4];
} kn_error;

/* Launch context: the launch dims and where debug errors go. */
typedef struct kn_ctx {
  int64_t dim[4]; /* unused dims are 1 */
  int64_t n;      /* product of dims (< 2^31) */
  int32_t ndim;
  int32_t pad_;
  kn_error *err; /* debug and verify_fp builds only; NULL otherwise */
} kn_ctx;

#ifndef __CUDACC_RTC__
/* A module compiled ahead of time by `kernc build`: the object it writes holds
 * one `struct kern_embedded` (the include/kern.h handle kern_embedded) that
 * lists the module's source files (the runtime re-checks them for kernel
 * signatures), the CPU entry points and the GPU images. The fields from
 * magic to name never move, so every runtime can read them and refuse a table
 * built for another ABI, naming the kern version that built it. */
#define KN_EMBED_MAGIC  0x6e72656bu /* "kern" in little-endian bytes */
#define KN_EMBED_LAYOUT 1           /* the layout of everything after abi_version */
typedef void (*kn_range_fn)(const void *args, const kn_ctx *ctx, int64_t begin, int64_t end);
typedef struct kn_embed_file {
  const char *path, *text;
  uint64_t len;
} kn_embed_file;
/* An import's path as front.c spells it (joined to the importer's directory) -> files[file]. */
typedef struct kn_embed_alias {
  const char *path;
  int32_t file;
} kn_embed_alias;
typedef struct kn_embed_kernel {
  const char *name;
  kn_range_fn range, range_dense;
  uint64_t args_size;
} kn_embed_kernel;
/* A CUBIN for sm_<arch>, or (is_ptx) NUL-terminated PTX for compute_<arch>. */
typedef struct kn_embed_image {
  int32_t arch, is_ptx;
  const unsigned char *data;
  uint64_t size;
} kn_embed_image;
/* kern_embedded.debug's bits: built with --debug, with --fast-math */
#define KN_EMBED_DEBUG     1u
#define KN_EMBED_FAST_MATH 2u
#define KN_EMBED_VERIFY_FP 4u
struct kern_embedded {
  uint32_t magic, abi_version, layout, debug;
  const char *kern_version; /* of the kernc that built it */
  const char *name;         /* the root file as given to kernc build */
  int32_t nfiles, naliases, nkernels, nimages;
  const kn_embed_file *files; /* files[0] is the root */
  const kn_embed_alias *aliases;
  const kn_embed_kernel *kernels; /* in the order of Program.kernels */
  const kn_embed_image *images;
};
#endif

#endif
