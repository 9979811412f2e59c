/* emit_cuda.c: the CUDA target: CUDA C++ for NVRTC.
 *
 * Adds the C++ spellings of the core's qualifier macros and, per kernel, two
 * __global__ entries (strided and dense arrays) that walk the launch's linear
 * index space with a 64-bit grid-stride loop, so any grid size covers any n.
 */
#include "emit_internal.h"

static void cuda_prologue(Emitter *e) {
  buf_puts(&e->out, "#define KN_FUNC static __device__ inline\n"
                    "#define KN_ZERO {}\n"
                    "#define KN_SASSERT(c, m) static_assert(c, m)\n"
                    "/* where a debug access past the bounds goes instead: one global slot (a\n"
                    " * local one lets NVVM drop the in-bounds store too) */\n"
                    "#define KNE_SCRATCH_GLOBAL static __device__ kne_scratch kne_scratch_g;\n"
                    "#define KNE_SCRATCH_LOCAL\n"
                    "#define KNE_SCRATCH (&kne_scratch_g)\n");
}

static void cuda_entries(Emitter *e, const Decl *k) {
  bool dims = emit_kernel_uses_tid_dims(k);
  for (int dense = 0; dense < 2; dense++) {
    const char *variant = dense ? "_dense" : "";
    buf_printf(
        &e->out,
        "extern \"C\" __global__ void kk_%s_cuda%s(kk_%s_args a, kn_ctx c) {\n"
        "  const int64_t step = (int64_t)blockDim.x * gridDim.x;\n"
        "  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n; i += step) {\n",
        k->name, variant, k->name);
    if (dims)
      buf_printf(&e->out,
                 "    int32_t t[4];\n"
                 "    kne_unlinear(&c, i, t);\n"
                 "    kk_%s_body%s(&a, &c, i, t[0], t[1], t[2], t[3]);\n",
                 k->name, variant);
    else
      buf_printf(&e->out, "    kk_%s_body%s(&a, &c, i, 0, 0, 0, 0);\n", k->name, variant);
    buf_puts(&e->out, "  }\n}\n");
  }
}

const EmitTargetOps emit_target_cuda = {cuda_prologue, cuda_entries};
