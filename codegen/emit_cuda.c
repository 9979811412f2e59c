/* emit_cuda.c: the CUDA target: CUDA C++ for NVRTC.
 *
 * Adds the C++ spellings of the core's qualifier macros and, per kernel, two
 * __global__ entries (strided and dense arrays). A kernel that uses only tid()
 * walks the launch's linear index space with a grid-stride loop; one that uses
 * tid(d) runs on a CUDA grid shaped like the launch (x along the last launch
 * dimension, y the one before, z the rest), so no thread divides to find its
 * indices, with a grid-stride loop per axis so any grid covers any launch.
 * runtime/cuda/cuda_backend.c sizes the grids (rt_cuda_linear_shape,
 * rt_cuda_grid_shape). Counters are 32-bit: a launch is below 2^31 indices.
 *
 * Beside the dense entry of a kernel that runs one index per thread and step
 * (tid() only, with a loop or a call) or that uses tid(d) of a rank of 1 to 3
 * (emit_kernel_tid_rank), a plain kernel kk_K_cuda_dense_one for a launch on
 * a grid with a thread for every index (elems of them in a row along x): no
 * loop around the body, and a tid(d) kernel's tids read straight off x, y and
 * z (the launch has the kernel's rank). The runtime launches it whenever its
 * grid is such (always, but past the 1D grid's cap or the grid's y and z
 * limits). Why apart: in one function with the loops, NVVM kept registers for
 * the next turn and re-loaded array bases from the parameter bank inside the
 * body's own loops (nbody), the rank-generic tids cost a chain of selects per
 * thread (mandelbrot), and the loops' registers lowered the fast path's
 * occupancy (stencil: 43 registers, 32 alone). The strided entries keep only
 * their loops: each _one entry is one more copy of the body for NVRTC.
 */
#include "emit_internal.h"

#include <stdio.h>

static void cuda_prologue(Emitter *e) {
  buf_puts(&e->out, "#define KN_FUNC static __device__ inline\n"
                    "#define KN_ZERO {}\n"
                    "#define KN_RESTRICT __restrict__\n"
                    "#define KN_SASSERT(c, m) static_assert(c, m)\n"
                    "/* where a debug access past the bounds goes instead: one global slot (a\n"
                    " * local one lets NVVM drop the in-bounds store too) */\n"
                    "#define KNE_SCRATCH_GLOBAL static __device__ kne_scratch kne_scratch_g;\n"
                    "#define KNE_SCRATCH_LOCAL\n"
                    "#define KNE_SCRATCH (&kne_scratch_g)\n");
}

/* The launch on the CUDA grid: the extent along x (the last launch dimension),
 * y (the one before) and z (the rest), and a point's tid(0..3). ndim is the
 * same in every thread: the compiler splits the loops by it. */
static const char *const grid_helpers =
    "typedef struct kne_grid { uint32_t x, y, z; } kne_grid;\n"
    "KN_FN kne_grid kne_grid_of(const kn_ctx *c) {\n"
    "  int nd = c->ndim;\n"
    "  kne_grid g;\n"
    "  g.x = (uint32_t)(nd == 1 ? c->dim[0] : nd == 2 ? c->dim[1] : nd == 3 ? c->dim[2] : c->dim[3]);\n"
    "  g.y = (uint32_t)(nd == 1 ? 1 : nd == 2 ? c->dim[0] : nd == 3 ? c->dim[1] : c->dim[2]);\n"
    "  g.z = (uint32_t)(nd <= 2 ? 1 : nd == 3 ? c->dim[0] : c->dim[0] * c->dim[1]);\n"
    "  return g;\n"
    "}\n"
    "KN_FN void kne_grid_tids(const kn_ctx *c, int32_t x, uint32_t y, uint32_t z, int32_t t[4]) {\n"
    "  int nd = c->ndim;\n"
    "  uint32_t z0 = z, z1 = 0;\n"
    "  if (nd == 4) z0 = z / (uint32_t)c->dim[1], z1 = z % (uint32_t)c->dim[1];\n"
    "  t[0] = (int32_t)(nd == 1 ? x : nd == 2 ? y : z0);\n"
    "  t[1] = (int32_t)(nd == 1 ? 0 : nd == 2 ? x : nd == 3 ? y : z1);\n"
    "  t[2] = (int32_t)(nd <= 2 ? 0 : nd == 3 ? x : y);\n"
    "  t[3] = (int32_t)(nd <= 3 ? 0 : x);\n"
    "}\n";

/* kk_K_body[_dense](&a, &c, LIN, TIDS[, restrict arrays]); aligned: the
 * restrict arrays' pointers marked 16-byte aligned. */
static void body_call(Emitter *e, const Decl *k, bool dense, bool aligned, const char *lin,
                      const char *tids) {
  buf_printf(&e->out, "kk_%s_body%s(&a, &c, %s, %s", k->name, dense ? "_dense" : "", lin, tids);
  if (dense) emit_restrict_args(e, k, aligned);
  buf_puts(&e->out, ");\n");
}

static void linear_entry(Emitter *e, const Decl *k, bool dense) {
  buf_puts(&e->out, "  const uint32_t n = (uint32_t)c.n, step = blockDim.x * gridDim.x;\n"
                    "  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i >= n) return;\n"
                    "  /* counted, so the compiler can unroll it (i += step alone might wrap) */\n"
                    "  for (uint32_t left = (n - 1 - i) / step + 1; left > 0; left--, i += step)\n"
                    "    ");
  body_call(e, k, dense, false, "(int32_t)i", "0, 0, 0, 0");
}

/* Four consecutive indices per thread and step (emit_kernel_elems), as an
 * unrolled loop so the compiler addresses the four elements of an array from
 * one base (i + j cannot overflow: i + 3 < n < 2^31) and, the arrays being
 * 16-byte aligned, merges them into vector loads and stores. u + step stays
 * below 2^32: the launch keeps the grid to at most 32 blocks per SM. */
static void linear_entry4(Emitter *e, const Decl *k) {
  buf_puts(&e->out, "  const uint32_t n = (uint32_t)c.n, step = 4 * blockDim.x * gridDim.x;\n"
                    "  uint32_t u = 4 * (blockIdx.x * blockDim.x + threadIdx.x);\n"
                    "#pragma unroll 1\n"
                    "  for (; u + 3 < n; u += step) {\n"
                    "    const int32_t i = (int32_t)u;\n"
                    "#pragma unroll\n"
                    "    for (int32_t j = 0; j < 4; j++)\n"
                    "      ");
  body_call(e, k, true, true, "i + j", "0, 0, 0, 0");
  buf_puts(&e->out, "  }\n  for (; u < n; u++) ");
  body_call(e, k, true, true, "(int32_t)u", "0, 0, 0, 0");
}

/* One point (x, y, z) of the grid: its tids, its linear index, the body. */
static void grid_point(Emitter *e, const Decl *k, bool dense, const char *x, const char *pad) {
  buf_printf(&e->out,
             "%s{\n"
             "%s  int32_t t[4];\n"
             "%s  kne_grid_tids(&c, %s, y, z, t);\n"
             "%s  ",
             pad, pad, pad, x, pad);
  char lin[64];
  snprintf(lin, sizeof lin, "(int32_t)((z * g.y + y) * g.x) + %s", x);
  body_call(e, k, dense, false, lin, "t[0], t[1], t[2], t[3]");
  buf_printf(&e->out, "%s}\n", pad);
}

static void grid_entry(Emitter *e, const Decl *k, bool dense, int elems) {
  buf_printf(&e->out,
             "  const kne_grid g = kne_grid_of(&c);\n"
             "  for (uint32_t z = blockIdx.z; z < g.z; z += gridDim.z)\n"
             "    for (uint32_t y = blockIdx.y * blockDim.y + threadIdx.y; y < g.y;\n"
             "         y += gridDim.y * blockDim.y)\n"
             "#pragma unroll 1\n"
             "      for (uint32_t x0 = %d * (blockIdx.x * blockDim.x + threadIdx.x); x0 < g.x;\n"
             "           x0 += %d * gridDim.x * blockDim.x) {\n"
             "        const int32_t x = (int32_t)x0;\n",
             elems, elems);
  if (elems == 1) {
    grid_point(e, k, dense, "x", "        ");
  } else {
    /* elems in a row (x + elems - 1 < g.x < 2^31: signed sums that cannot
     * overflow), else the row's last few one by one. Calls rather than an unrolled
     * loop: NVVM keeps each inlined call's restrict scopes, so read-only
     * arrays stay non-coherent loads that the assembler hoists above the
     * stores. */
    buf_printf(&e->out, "        if (x0 + %d < g.x) {\n", elems - 1);
    for (int j = 0; j < elems; j++) {
      char xs[16];
      snprintf(xs, sizeof xs, j ? "x + %d" : "x", j);
      grid_point(e, k, dense, xs, "          ");
    }
    buf_puts(&e->out, "        } else {\n"
                      "          for (int32_t xt = x; xt < (int32_t)g.x; xt++)\n");
    grid_point(e, k, dense, "xt", "          ");
    buf_puts(&e->out, "        }\n");
  }
  buf_puts(&e->out, "      }\n");
}

/* A tiled kernel: one block per instance (a grid-stride loop over blocks, so
 * any grid covers any launch); every thread of the block runs the body. Its
 * entries are bounded to 1024 threads (__launch_bounds__), so the compiler keeps
 * registers within what a block of any allowed size may use: the block size is
 * a performance setting, and a large one must never fail to launch. A kernel
 * with a k loop of stdlib/kern_mmloop.h also gets entries kk_K_cuda[_dense]_mm
 * for the block the loop runs whole with, two to an SM: 256 threads (EXACT)
 * with up to 128 registers a thread, or 128 (FAST) with up to 255, which the
 * loop's block of acc needs; the runtime launches them at that block, its
 * default for the kernel. */
static void tiled_entry(Emitter *e, const Decl *k, bool dense) {
  buf_puts(&e->out, "  const uint32_t n = (uint32_t)c.n;\n"
                    "  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x) {\n"
                    "    int32_t t[4];\n"
                    "    kne_unlinear(&c, i, t);\n"
                    "    ");
  body_call(e, k, dense, false, "(int32_t)i", "t[0], t[1], t[2], t[3]");
  buf_puts(&e->out, "    __syncthreads(); /* the next instance reuses the shared tiles */\n"
                    "  }\n");
}

/* The launch extents along x, y and z for a launch of rank 1..3, which are
 * also its tids: tid(rank - 1) is x, tid(rank - 2) y, tid(rank - 3) z. */
static const char *const rank_extents[4] = {
    "", "(uint32_t)c.dim[0], gy = 1, gz = 1", "(uint32_t)c.dim[1], gy = (uint32_t)c.dim[0], gz = 1",
    "(uint32_t)c.dim[2], gy = (uint32_t)c.dim[1], gz = (uint32_t)c.dim[0]"};

/* One point of a _one entry of the given rank at column x: the body. */
static void rank_point(Emitter *e, const Decl *k, bool dense, const char *x, const char *pad,
                       int rank) {
  char lin[96], tids[96];
  snprintf(lin, sizeof lin, "(int32_t)((z * gy + y) * gx) + %s", x);
  if (rank == 1)
    snprintf(tids, sizeof tids, "%s, 0, 0, 0", x);
  else if (rank == 2)
    snprintf(tids, sizeof tids, "(int32_t)y, %s, 0, 0", x);
  else
    snprintf(tids, sizeof tids, "(int32_t)z, (int32_t)y, %s, 0", x);
  buf_puts(&e->out, pad);
  body_call(e, k, dense, false, lin, tids);
}

/* kk_K_cuda[_dense]_one of a tid(d) kernel: a launch of the kernel's rank on
 * a grid with a thread for every point (elems of them in a row). */
static void rank_one(Emitter *e, const Decl *k, bool dense, int elems, int rank) {
  buf_printf(&e->out,
             "  const uint32_t gx = %s;\n"
             "  const uint32_t x0 = %d * (blockIdx.x * blockDim.x + threadIdx.x);\n"
             "  const uint32_t y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;\n"
             "  if (x0 >= gx || y >= gy || z >= gz) return;\n"
             "  const int32_t x = (int32_t)x0;\n",
             rank_extents[rank], elems);
  if (elems == 1) {
    rank_point(e, k, dense, "x", "  ", rank);
    return;
  }
  /* as grid_entry's: elems calls, the row's last few one by one */
  buf_printf(&e->out, "  if (x0 + %d < gx) {\n", elems - 1);
  for (int j = 0; j < elems; j++) {
    char xs[16];
    snprintf(xs, sizeof xs, j ? "x + %d" : "x", j);
    rank_point(e, k, dense, xs, "    ", rank);
  }
  buf_puts(&e->out, "  } else {\n"
                    "    for (int32_t xt = x; xt < (int32_t)gx; xt++)\n");
  rank_point(e, k, dense, "xt", "      ", rank);
  buf_puts(&e->out, "  }\n");
}

/* kk_K_cuda[_dense]_one of a tid()-only kernel: a thread per index. */
static void linear_one(Emitter *e, const Decl *k, bool dense) {
  buf_puts(&e->out, "  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < (uint32_t)c.n) ");
  body_call(e, k, dense, false, "(int32_t)i", "0, 0, 0, 0");
}

/* ast_walk visitor: the largest d of a tid(d) (a constant) plus one, in *ud. */
static bool note_tid_rank(const Node *n, void *ud) {
  int *rank = ud;
  if (n->kind == ND_CALL && n->call_kind == CALL_SPECIAL && n->special == SP_TID && n->args &&
      (int)(n->args->ival & 3) + 1 > *rank)
    *rank = (int)(n->args->ival & 3) + 1;
  return false;
}

int emit_kernel_tid_rank(const Decl *k) {
  int rank = 0;
  return ast_walk(k->body, note_tid_rank, &rank) ? 0 : rank;
}

/* Whether a variant running elems indices per thread and step has a _one entry. */
static bool has_one(bool dims, int rank, int elems) {
  return dims ? rank >= 1 && rank <= 3 : elems == 1;
}

static void cuda_entries(Emitter *e, const Decl *k) {
  if (k->tiled) {
    int mm = emit_mmloop_threads(e, k);
    for (int v = 0; v < (mm ? 4 : 2); v++) {
      bool dense = v & 1, entry_mm = v >> 1;
      buf_printf(&e->out,
                 "extern \"C\" __global__ void __launch_bounds__(%d%s) kk_%s_cuda%s%s(kk_%s_args "
                 "a, kn_ctx c) {\n",
                 entry_mm ? mm : 1024, entry_mm ? ", 2" : "", k->name, dense ? "_dense" : "",
                 entry_mm ? "_mm" : "", k->name);
      tiled_entry(e, k, dense);
      buf_puts(&e->out, "}\n");
    }
    return;
  }
  bool dims = emit_kernel_uses_tid_dims(k);
  int elems = emit_kernel_elems(k), rank = dims ? emit_kernel_tid_rank(k) : 0;
  for (int dense = 0; dense < 2; dense++) {
    int el = dense ? elems : 1;
    if (dense && has_one(dims, rank, el)) {
      buf_printf(&e->out,
                 "extern \"C\" __global__ void kk_%s_cuda%s_one(kk_%s_args a, kn_ctx c) {\n",
                 k->name, dense ? "_dense" : "", k->name);
      if (dims)
        rank_one(e, k, dense, el, rank);
      else
        linear_one(e, k, dense);
      buf_puts(&e->out, "}\n");
    }
    buf_printf(&e->out, "extern \"C\" __global__ void kk_%s_cuda%s(kk_%s_args a, kn_ctx c) {\n",
               k->name, dense ? "_dense" : "", k->name);
    if (dims)
      grid_entry(e, k, dense, dense ? elems : 1);
    else if (dense && elems == 4)
      linear_entry4(e, k);
    else
      linear_entry(e, k, dense);
    buf_puts(&e->out, "}\n");
  }
}

const EmitTargetOps emit_target_cuda = {cuda_prologue, cuda_entries, grid_helpers};
