/* test_cuda_entries.c: the CUDA target's entry points visit every index of a
 * launch exactly once with the right tid(d), on any grid. Needs no GPU.
 *
 * The generated CUDA C++ of a small module is compiled for the host by the C++
 * compiler (c++, clang++ or g++) with a prelude that stands in for the CUDA
 * built-ins (blockIdx, threadIdx, blockDim, gridDim, the atomics), then each
 * entry runs thread by thread over a grid: the one the runtime picks for the
 * launch (rt_cuda_grid_shape, rt_cuda_linear_shape) and smaller ones that
 * make the grid-stride loops turn. Kernels: with and without tid(d), with and
 * without a loop (a loop-free dense entry runs four indices per thread), both
 * the strided and the dense entry, and the dense _one entry (no loops; tids
 * off the grid for a launch of the kernel's rank) on the runtime's grids
 * where they have a thread for every index, as the runtime launches it.
 * Without a C++ compiler it skips, saying so. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_backend.h"
#include "emit.h"
#include "front.h"
#include "harness.h"
#include "proc.h"
#include "kern.h"
#include "kern_abi.h"

static const char module[] =
    "kernel void grid4(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  int i = tid();\n"
    "  t0[i] = tid(0); t1[i] = tid(1); t2[i] = tid(2); t3[i] = tid(3);\n"
    "  atomic_add(&hits[i], 1);\n"
    "}\n"
    "kernel void grid1(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  int i = tid();\n"
    "  for (int k = 0; k < 1; k++) { t0[i] = tid(0); t1[i] = tid(1); }\n"
    "  t2[i] = tid(2); t3[i] = tid(3);\n"
    "  atomic_add(&hits[i], 1);\n"
    "}\n"
    "kernel void lin4(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  atomic_add(&hits[tid()], 1);\n"
    "}\n"
    "kernel void lin1(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  int i = 0;\n"
    "  while (i < 1) { atomic_add(&hits[tid()], 1); i++; }\n"
    "}\n"
    "kernel void rank1(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  int i = tid();\n"
    "  t0[i] = tid(0);\n"
    "  atomic_add(&hits[i], 1);\n"
    "}\n"
    "kernel void rank2(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  int i = tid();\n"
    "  t0[i] = tid(0); t1[i] = tid(1);\n"
    "  atomic_add(&hits[i], 1);\n"
    "}\n"
    "kernel void rank3(int[] t0, int[] t1, int[] t2, int[] t3, int[] hits) {\n"
    "  int i = tid();\n"
    "  for (int k = 0; k < 1; k++) { t0[i] = tid(0); t1[i] = tid(1); }\n"
    "  t2[i] = tid(2);\n"
    "  atomic_add(&hits[i], 1);\n"
    "}\n";
/* Each kernel: its name, the tids it writes (t0..t[tids - 1]; 0: a tid()-only
 * kernel), the indices its dense entry runs per thread and step. */
static const struct {
  const char *name;
  int tids, elems;
} kernels[] = {{"grid4", 4, 2}, {"grid1", 4, 1}, {"lin4", 0, 4}, {"lin1", 0, 1},
               {"rank1", 1, 2}, {"rank2", 2, 2}, {"rank3", 3, 1}};
enum { NKERNELS = sizeof kernels / sizeof *kernels };
static bool has_one[NKERNELS];

/* What the generated code needs of CUDA, on the host; one thread at a time. */
static const char prelude[] =
    "#define __CUDACC_RTC__ 1\n"
    "#include <math.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "/* kern_abi.h's NVRTC typedefs: long long, where the host's are long */\n"
    "#define int64_t kn_emul_int64\n"
    "#define uint64_t kn_emul_uint64\n"
    "#define __global__\n"
    "#define __device__\n"
    "#define __forceinline__ inline\n"
    "#define __noinline__ __attribute__((noinline))\n"
    "#define __restrict__ __restrict\n"
    "#define __shared__\n"
    "#define __align__(n) __attribute__((aligned(n)))\n"
    "struct uint4 { unsigned x, y, z, w; };\n"
    "struct kn_emul_dim { unsigned x, y, z; };\n"
    "static kn_emul_dim threadIdx, blockIdx, blockDim, gridDim;\n"
    "static void __syncthreads(void) {} /* one thread at a time: nothing to wait for */\n"
    "static void __syncwarp(void) {}\n"
    "extern \"C\" void kn_emul_set(const unsigned v[12]) {\n"
    "  threadIdx = {v[0], v[1], v[2]}, blockIdx = {v[3], v[4], v[5]};\n"
    "  blockDim = {v[6], v[7], v[8]}, gridDim = {v[9], v[10], v[11]};\n"
    "}\n"
    "template <class T> static T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }\n"
    "template <class T> static T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }\n"
    "template <class T> static T atomicAnd(T *p, T v) { T o = *p; *p = o & v; return o; }\n"
    "template <class T> static T atomicOr(T *p, T v) { T o = *p; *p = o | v; return o; }\n"
    "template <class T> static T atomicXor(T *p, T v) { T o = *p; *p = o ^ v; return o; }\n"
    "template <class T> static T atomicMin(T *p, T v) { T o = *p; if (v < o) *p = v; return o; }\n"
    "template <class T> static T atomicMax(T *p, T v) { T o = *p; if (v > o) *p = v; return o; }\n"
    "template <class T> static T atomicCAS(T *p, T e, T d) { T o = *p; if (o == e) *p = d; return o; }\n"
    "static unsigned __float_as_uint(float x) { unsigned u; memcpy(&u, &x, 4); return u; }\n"
    "static float __uint_as_float(unsigned u) { float x; memcpy(&x, &u, 4); return x; }\n"
    "static long long __double_as_longlong(double x) { long long u; memcpy(&u, &x, 8); return u; }\n"
    "static double __longlong_as_double(long long u) { double x; memcpy(&x, &u, 8); return x; }\n";

typedef void (*entry_fn)(const void *args, const kn_ctx *c);
typedef void (*set_fn)(const unsigned v[12]);

static void *lib;
static set_fn emul_set;
static char dir[512];

/* Compiles the module's CUDA for the host, with a C-callable wrapper per entry. */
static bool build(void) {
  const char *cxx = NULL;
  static const char *const names[] = {"c++", "clang++", "g++"};
  for (size_t i = 0; i < 3 && !cxx; i++) {
    char *p = proc_find(names[i]);
    if (p) cxx = names[i];
    free(p);
  }
  if (!cxx) return false;
  FrontResult r = front_compile("entries.kern", module, sizeof module - 1);
  cr_assert(r.ok, "the test module does not check");
  EmitOptions o = {.line_directives = false};
  char *src = emit_program(r.prog, EMIT_CUDA, &o);
  cr_assert(src);
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/kern-emul-XXXXXX", t && *t ? t : "/tmp");
  cr_assert(mkdtemp(dir));
  char path[256], so[256], cmd[1024];
  snprintf(path, sizeof path, "%s/k.cpp", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs(prelude, f);
  fputs(src, f);
  for (size_t i = 0; i < NKERNELS; i++)
    for (int v = 0; v < 3; v++) {
      const char *sfx = v == 0 ? "" : v == 1 ? "_dense" : "_dense_one", *k = kernels[i].name;
      char entry[64];
      snprintf(entry, sizeof entry, "void kk_%s_cuda%s(", k, sfx);
      if (v == 2 && !(has_one[i] = strstr(src, entry) != NULL)) continue;
      fprintf(f,
              "extern \"C\" void emul_%s%s(const void *a, const kn_ctx *c) {\n"
              "  kk_%s_cuda%s(*(const kk_%s_args *)a, *c);\n}\n",
              k, sfx, k, sfx, k);
    }
  fclose(f);
  free(src);
  front_free(r.prog);
  snprintf(cmd, sizeof cmd, "%s -std=c++17 -O1 -w -shared -fPIC -o %s %s 2>&1", cxx, so, path);
  char *out = NULL;
  int st = th_run(cmd, &out);
  cr_assert_eq(st, 0, "%s failed:\n%s", cmd, out ? out : "");
  free(out);
  lib = dlopen(so, RTLD_NOW);
  cr_assert(lib, "%s", dlerror());
  emul_set = (set_fn)dlsym(lib, "kn_emul_set");
  return true;
}

static void cleanup(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (dir[0] && dir[strlen(dir) - 1] != 'X') cr_expect_eq(system(cmd), 0);
}

enum { MAXN = 300000 };
static int32_t out[5][MAXN];

static kn_ctx ctx_of(int nd, const int64_t *dims) {
  kn_ctx c;
  memset(&c, 0, sizeof c);
  c.ndim = nd;
  c.n = 1;
  for (int d = 0; d < 4; d++) {
    c.dim[d] = d < nd ? dims[d] : 1;
    c.n *= c.dim[d];
  }
  return c;
}

/* Runs every thread of grid g x block b on one entry, then checks that each
 * index ran once and saw its row-major tids. */
static void run_check(int kernel, const char *variant, const kn_ctx *c, const unsigned g[3],
                      const unsigned b[3]) {
  char name[64];
  snprintf(name, sizeof name, "emul_%s%s", kernels[kernel].name, variant);
  entry_fn fn = (entry_fn)dlsym(lib, name);
  cr_assert(fn, "%s", name);
  cr_assert(c->n <= MAXN);
  memset(out, 0, sizeof out);
  kn_array a[5];
  for (int k = 0; k < 5; k++) {
    memset(&a[k], 0, sizeof a[k]);
    a[k].data = (char *)out[k];
    a[k].shape[0] = c->n, a[k].shape[1] = a[k].shape[2] = a[k].shape[3] = 1;
    a[k].strides[0] = 4;
  }
  unsigned v[12] = {0, 0, 0, 0, 0, 0, b[0], b[1], b[2], g[0], g[1], g[2]};
  for (v[5] = 0; v[5] < g[2]; v[5]++)
    for (v[4] = 0; v[4] < g[1]; v[4]++)
      for (v[3] = 0; v[3] < g[0]; v[3]++)
        for (v[2] = 0; v[2] < b[2]; v[2]++)
          for (v[1] = 0; v[1] < b[1]; v[1]++)
            for (v[0] = 0; v[0] < b[0]; v[0]++) {
              emul_set(v);
              fn(a, c);
            }
  int tids = kernels[kernel].tids;
  for (int64_t i = 0; i < c->n; i++) {
    if (out[4][i] != 1)
      cr_assert_fail("%s, %d dims of %lld: index %lld ran %d times (grid %ux%ux%u, block %ux%ux%u)",
                     name, c->ndim, (long long)c->n, (long long)i, out[4][i], g[0], g[1], g[2],
                     b[0], b[1], b[2]);
    int64_t rest = i;
    for (int d = 3; d >= 0; d--) {
      int64_t want = d < c->ndim ? rest % c->dim[d] : 0;
      if (d < c->ndim) rest /= c->dim[d];
      if (d < tids && out[d][i] != want)
        cr_assert_fail("%s, %d dims: index %lld has tid(%d) %d, not %lld", name, c->ndim,
                       (long long)i, d, out[d][i], (long long)want);
    }
  }
}

static const int64_t shapes[][5] = {
    /* ndim, dims */
    {1, 1000},     {1, 3},         {2, 3, 77},       {2, 77, 3},      {2, 70000, 3},
    {3, 5, 4, 33}, {3, 2, 1, 130}, {4, 2, 3, 4, 35}, {4, 3, 5, 2, 7}, {2, 1, 1}};

/* Small odd grids: every loop of the entries turns. */
static const unsigned small[][6] = {
    {1, 1, 1, 1, 1, 1}, {3, 2, 1, 4, 2, 1}, {2, 3, 2, 8, 1, 1}, {1, 1, 3, 32, 4, 1}};

Test(cuda_entries, every_index_once_with_its_tids, .timeout = 300) {
  cr_assert_eq(kern_init(), KERN_OK); /* the configuration: KERN_CUDA_BLOCK2D */
  if (!build()) cr_skip_test("no C++ compiler (c++, clang++, g++): CUDA entry emulation skipped");
  int runs = 0, ones = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    kn_ctx c = ctx_of((int)shapes[s][0], &shapes[s][1]);
    for (int k = 0; k < NKERNELS; k++)
      for (int dense = 0; dense < 2; dense++) {
        const char *variant = dense ? "_dense" : "";
        bool grid = kernels[k].tids > 0;
        int elems = dense ? kernels[k].elems : 1;
        unsigned g[3], b[3];
        for (int block = 128; block <= 1024; block *= 8) {
          if (grid)
            rt_cuda_grid_shape(&c, block, elems, g, b);
          else
            rt_cuda_linear_shape(132, c.n, block, elems, g, b);
          run_check(k, variant, &c, g, b), runs++;
          /* the _one entry where the runtime would launch it */
          bool rank = !grid || (kernels[k].tids < 4 && c.ndim == kernels[k].tids);
          if (dense && has_one[k] && rank && rt_cuda_grid_covers(&c, grid, elems, g, b))
            run_check(k, "_dense_one", &c, g, b), ones++;
        }
        for (size_t m = 0; m < sizeof small / sizeof *small && c.n < 20000; m++) {
          unsigned sg[3] = {small[m][0], grid ? small[m][1] : 1, grid ? small[m][2] : 1};
          unsigned sb[3] = {small[m][3], grid ? small[m][4] : 1, 1};
          run_check(k, variant, &c, sg, sb), runs++;
        }
      }
  }
  /* every rank and the tid()-only loop kernel have one; a rank-4 or loop-free
   * tid()-only kernel has none */
  for (int k = 0; k < NKERNELS; k++)
    cr_expect_eq(has_one[k], kernels[k].tids == 0 ? kernels[k].elems == 1 : kernels[k].tids < 4,
                 "%s: a _one entry or not", kernels[k].name);
  cr_expect_gt(ones, 0, "no _one entry ran");
  cr_log_info("%d emulated launches, %d of them _one entries", runs + ones, ones);
  cleanup();
}

Test(cuda_entries, the_runtime_grid_covers_the_launch) {
  /* one thread per point (bx*gx >= x, by*gy >= y) and blocks within the occupancy limit */
  cr_assert_eq(kern_init(), KERN_OK);
  const int64_t dims[][3] = {{2, 4096, 4096}, {2, 8190, 8190}, {1, 1 << 20, 0}, {2, 3, 1 << 20}};
  for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
    kn_ctx c = ctx_of((int)dims[i][0], &dims[i][1]);
    unsigned g[3], b[3];
    rt_cuda_grid_shape(&c, 256, 1, g, b);
    int64_t x = c.dim[c.ndim - 1], y = c.ndim == 2 ? c.dim[0] : 1;
    cr_expect_leq((int64_t)b[0] * b[1], 256);
    cr_expect_geq((int64_t)g[0] * b[0], x);
    cr_expect_geq((int64_t)g[1] * b[1], y);
    if (x >= 32) cr_expect_geq(b[0], 32, "at least a warp along the row");
    if (x >= 32 && y >= 8) cr_expect_eq(b[0] * 100 + b[1], 3208, "32 x 8 blocks");
  }
}
