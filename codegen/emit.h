/* emit.h: typed AST -> C source (CPU) or CUDA C++ source (NVRTC).
 *
 * One emitter core (emit.c) walks the typed tree; the targets (emit_c.c,
 * emit_cuda.c) add only their prologue and kernel entry points. The output is
 * self-contained: it starts with the text of stdlib/kern_abi.h and
 * stdlib/kern_builtins.h, so it can be hashed and compiled with no include path.
 *
 * Symbols in the output, for a kernel K (see stdlib/kern_abi.h for the ABI):
 *   CPU:  void kk_K_range(const kk_K_args *, const kn_ctx *, int64_t begin, int64_t end)
 *         void kk_K_range_dense(...)   the same, assuming every array is dense
 *                                       (C-contiguous), so indexing needs no strides
 *         const uint32_t kk_K_args_size = sizeof(kk_K_args);
 *   CUDA: extern "C" __global__ void kk_K_cuda(kk_K_args, kn_ctx)
 *         extern "C" __global__ void kk_K_cuda_dense(kk_K_args, kn_ctx)
 */
#ifndef KERN_EMIT_H
#define KERN_EMIT_H

#include "ast.h"

typedef enum { EMIT_C, EMIT_CUDA } EmitTarget;

typedef struct EmitOptions {
  bool debug;           /* bounds checks and assert, errors recorded in kn_ctx.err */
  bool line_directives; /* #line directives pointing at the .kern source (default on) */
  bool fast_math;       /* #define KN_FAST_MATH 1 first (kern_module_set_fast_math) */
  bool verify_fp;       /* stores to array elements check for NaN and infinity
                         * (kern_module_set_verify_fp), errors in kn_ctx.err */
} EmitOptions;

/* Returns the whole translation unit (malloc'd; caller frees), or NULL on OOM. */
char *emit_program(const Program *, EmitTarget, const EmitOptions *);

/* The args block of a kernel: byte offset of each parameter, and total size,
 * with the C layout rules the emitted struct follows. offsets has nparams slots. */
size_t emit_args_layout(const Decl *kernel, size_t *offsets, size_t *align);
/* The bytes a parameter of this type takes in the args block (arrays: kn_array). */
size_t emit_param_size(const Type *, size_t *align);

/* Does the kernel use tid(d) (so launches must decompose the linear index)?
 * On CUDA such a kernel runs on a grid shaped like the launch (x along the last
 * launch dimension, y the one before, z the rest); any other on a 1D grid. */
bool emit_kernel_uses_tid_dims(const Decl *kernel);
/* How many consecutive indices (along x) one thread of the CUDA dense entry
 * runs per step: 4 for a body with no loop and no function call (short and
 * even, so four in a row share their loads' latency and, 16-byte aligned,
 * become vector loads), else 1. The launch sizes its grid by it. */
int emit_kernel_elems(const Decl *kernel);
/* The launch rank the kernel's tid(d)s name: 1 + the largest d, 0 without
 * tid(d) (or out of memory). The CUDA target gives a kernel of rank 1 to 3,
 * and a tid()-only one that runs one index per thread, an entry
 * kk_K_cuda_dense_one for a launch (of that rank) on a grid with a thread for
 * every index (emit_cuda.c); the launch picks it when it can. */
int emit_kernel_tid_rank(const Decl *kernel);

#endif
