/* bench_gpu: kern on cuda:0 against hand-written CUDA and the hardware limit.
 *
 * Requires: bench/workloads.kern (the same kernels bench_cpu runs on the CPU)
 * and bench/baseline.cu (the same algorithms hand-written in CUDA), a CUBIN of
 * it from nvcc as argv[1] or else compiled here with NVRTC. Produces: a
 * Markdown table on stdout and, with `--csv FILE`, the same numbers as CSV
 * (bench/peers.py reads it to put CuPy and Triton beside kern). Breaks:
 * nothing; exits 1 when kern's result differs from the baseline's, before
 * anything is timed; without a GPU it says why and exits 0.
 *
 * Every workload runs as a kern launch and as the hand-written kernel through
 * raw cuLaunchKernel on the same stream and the same device memory; the
 * bandwidth-bound ones also time a device-to-device copy of their output (the
 * bandwidth limit). Runs are interleaved, each timed from the first launch to
 * the end of a synchronize; medians are reported. The tiny-launch workload is
 * 1000 launches in a row: its ratio is the launch cost against raw
 * cuLaunchKernel. A second table times kern_array_matmul at 2048^3 and 4096^3
 * (EXACT float32, FAST through TF32 and from float16 and bfloat16), each
 * checked on 64 sampled elements first (EXACT bit for bit against the fma
 * chain, FAST within its documented bound); its rows go to the CSV, where
 * bench/peers.py sets cuBLAS and Triton's tl.dot beside them. A third times
 * kern_array_sort of 64M uint32 keys, alone and with uint32 values, each run
 * on a fresh copy of the input, checked
 * first (keys ascending, values the keys' input places, equal keys in input
 * order); its rows go to the CSV too, where bench/peers.py sets CUB's radix
 * sort (through CuPy and PyTorch) beside them. A fourth (bench_libm.h,
 * BENCH_ONLY=libm runs only it) times kern's own exp, sin, log and pow against
 * CUDA's in a fast-math module (--use_fast_math), 64M elements a launch.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_libm.h"
#include "cuda_api.h"
#include "nvrtc.h"
#include "toolchain.h"
#include "front.h"
#include "core.h"
#include "kern.h"

enum { REPS = 15, TINY = 1000, TINY_N = 64, CHUNK = 256, NBINS = 1024, BLOCK = 256, TILE = 16 };

#define CU(x)                                                                                      \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_) {                                                                                      \
      fprintf(stderr, "%s: %s\n", #x, rt_cu_error_text(r_));                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static const rt_cu_api *cu;
static kern_device *gpu;
static CUstream st;
static CUmodule bmod;

/* ---- one workload ------------------------------------------------------------------------ */

typedef struct Case {
  const char *name, *kind;
  char size[48];
  kern_kernel *k;
  kern_dims dims;
  int nargs;
  kern_arg args[6];
  CUfunction f; /* the hand-written kernel and its launch */
  unsigned grid[2], block[2];
  void *params[8];
  CUdeviceptr ptr[6]; /* what params point at */
  long long ll;
  int i32[3];
  float f32;
  int launches;        /* > 1: the time of this many launches in a row */
  double bytes;        /* bytes one run must move; 0: not bandwidth-bound */
  kern_array *out;     /* what is compared */
  kern_array *limit;   /* bandwidth-bound: the array copied for the limit */
  kern_array *init[3]; /* restored from init_data before a checked run */
  const void *init_data[3];
  kern_array *zero[2]; /* zeroed before a checked run */
  double tol;          /* relative tolerance of the comparison; 0: exact */
} Case;

typedef struct Result {
  const char *name, *kind;
  char size[48];
  double kern, base, copy, bytes, copy_bytes;
  int launches;
  double fast; /* kern with kern_module_set_fast_math */
} Result;

/* The same module with fast math: what giving up the same-bits promise buys
 * (timed only; its results are not compared). */
static kern_module *fast_module;

static kern_array *dev(kern_dtype t, int ndim, int64_t a, int64_t b) {
  int64_t shape[2] = {a, b};
  kern_array *r = kern_array_new(gpu, t, ndim, shape);
  if (!r) {
    fprintf(stderr, "bench_gpu: %s\n", kern_last_error());
    exit(1);
  }
  return r;
}

static CUdeviceptr dptr(kern_array *a) { return (CUdeviceptr)(uintptr_t)kern_array_data(a); }

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "bench_gpu: out of memory\n");
    exit(1);
  }
  return p;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  if (!k) {
    fprintf(stderr, "bench_gpu: %s\n", kern_last_error());
    exit(1);
  }
  return k;
}

/* The hand-written kernel `name` over a 1D grid of n threads or a 2D one of rows x cols. */
static void base_launch(Case *c, const char *name, int64_t rows, int64_t cols) {
  CU(cu->ModuleGetFunction(&c->f, bmod, name));
  bool two = cols > 0;
  c->block[0] = two ? TILE : BLOCK, c->block[1] = two ? TILE : 1;
  c->grid[0] = (unsigned)(((two ? cols : rows) + c->block[0] - 1) / c->block[0]);
  c->grid[1] = two ? (unsigned)((rows + TILE - 1) / TILE) : 1;
}

static void launch_n(const Case *c, kern_kernel *k) {
  for (int i = 0; i < c->launches; i++)
    BENCH_CHECK(kern_launch(k, gpu, c->dims, c->nargs, c->args));
  BENCH_CHECK(kern_device_synchronize(gpu));
}

static void run_kern(const Case *c) { launch_n(c, c->k); }

static void run_base(const Case *c) {
  for (int i = 0; i < c->launches; i++)
    CU(cu->LaunchKernel(c->f, c->grid[0], c->grid[1], 1, c->block[0], c->block[1], 1, 0, st,
                        (void **)c->params, NULL));
  CU(cu->StreamSynchronize(st));
}

/* ---- checking: kern and the baseline from the same inputs --------------------------------- */

static void prepare(const Case *c) {
  for (int i = 0; i < 3 && c->init[i]; i++)
    BENCH_CHECK(
        kern_array_write(c->init[i], c->init_data[i], (size_t)kern_array_nbytes(c->init[i])));
  static const double zero[8];
  for (int i = 0; i < 2 && c->zero[i]; i++) BENCH_CHECK(kern_array_fill(c->zero[i], zero));
}

static double value(kern_dtype t, const void *p, int64_t i) {
  if (t == KERN_INT32) return ((const int32_t *)p)[i];
  if (t == KERN_FLOAT64) return ((const double *)p)[i];
  return ((const float *)p)[i];
}

/* |kern - base| <= tol * max(1, |base|) everywhere (floats compared as floats). */
static void compare(const Case *c, const void *got, const void *want, int64_t n) {
  kern_dtype t = kern_array_dtype(c->out); /* vec3: its floats */
  for (int64_t i = 0; i < n; i++) {
    double g = value(t, got, i), w = value(t, want, i), scale = fabs(w) > 1 ? fabs(w) : 1;
    if (!(fabs(g - w) <= c->tol * scale)) {
      fprintf(stderr, "bench_gpu: %s: kern and CUDA differ at %lld: %.9g vs %.9g\n", c->name,
              (long long)i, g, w);
      exit(1);
    }
  }
}

static void check(const Case *c) {
  size_t bytes = (size_t)kern_array_nbytes(c->out);
  void *got = xmalloc(bytes), *want = xmalloc(bytes);
  prepare(c), run_kern(c);
  BENCH_CHECK(kern_array_read(c->out, got, bytes));
  prepare(c), run_base(c);
  BENCH_CHECK(kern_array_read(c->out, want, bytes));
  compare(c, got, want, (int64_t)(bytes / (kern_array_dtype(c->out) == KERN_FLOAT64 ? 8 : 4)));
  free(got), free(want);
}

/* ---- measuring ------------------------------------------------------------------------------ */

static double copy_once(CUdeviceptr to, const Case *c) {
  double t0 = bench_now();
  CU(cu->MemcpyAsync(to, dptr(c->limit), (size_t)kern_array_nbytes(c->limit), st));
  CU(cu->StreamSynchronize(st));
  return bench_now() - t0;
}

/* Checked, warmed up, then REPS interleaved runs of kern, the baseline and
 * (bandwidth-bound workloads) the copy. */
static Result measure(const Case *c) {
  check(c);
  double tk[REPS], tb[REPS], tc[REPS], tf[REPS];
  kern_array *scratch =
      c->limit ? dev(kern_array_dtype(c->limit), 1, kern_array_size(c->limit), 0) : NULL;
  kern_kernel *kf = kernel(fast_module, kern_kernel_name(c->k));
  run_kern(c), run_base(c), launch_n(c, kf);
  for (int r = 0; r < REPS; r++) {
    double t0 = bench_now();
    run_kern(c);
    double t1 = bench_now();
    run_base(c);
    tk[r] = t1 - t0, tb[r] = bench_now() - t1;
    tc[r] = scratch ? copy_once(dptr(scratch), c) : 0;
    double t2 = bench_now();
    launch_n(c, kf);
    tf[r] = bench_now() - t2;
  }
  kern_array_free(scratch);
  Result res = {c->name,
                c->kind,
                "",
                bench_median(tk, REPS),
                bench_median(tb, REPS),
                bench_median(tc, REPS),
                c->bytes,
                c->limit ? 2.0 * (double)kern_array_nbytes(c->limit) : 0,
                c->launches,
                bench_median(tf, REPS)};
  memcpy(res.size, c->size, sizeof res.size);
  fprintf(stderr, "  %-12s %s done\n", c->name, c->size);
  return res;
}

/* ---- the workloads: same kernels, same sizes as bench/peers.py ------------------------------- */

static uint32_t hash32(uint32_t x) {
  x ^= x >> 16, x *= 0x7feb352dU, x ^= x >> 15, x *= 0x846ca68bU, x ^= x >> 16;
  return x;
}

static float unit(uint32_t x) { return (float)(hash32(x) >> 8) * (1.0f / 16777216.0f); }

static float *randoms(int64_t n, uint32_t seed, float lo) {
  float *v = xmalloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) v[i] = lo + unit((uint32_t)i + seed);
  return v;
}

static Result bench_saxpy(kern_module *m) {
  int64_t n = 1LL << 28;
  kern_array *x = dev(KERN_FLOAT32, 1, n, 0), *y = dev(KERN_FLOAT32, 1, n, 0);
  float *hx = randoms(n, 0, 0), *hy = randoms(n, 1u << 30, 0);
  Case c = {.name = "saxpy",
            .kind = "bandwidth",
            .k = kernel(m, "saxpy"),
            .dims = KERN_DIM1(n),
            .nargs = 3,
            .args = {kern_arg_array(x), kern_arg_array(y), kern_arg_f32(2.0f)},
            .launches = 1,
            .bytes = 12.0 * n,
            .out = y,
            .limit = y,
            .init = {x, y},
            .init_data = {hx, hy},
            .ll = n,
            .f32 = 2.0f,
            .ptr = {dptr(x), dptr(y)}};
  snprintf(c.size, sizeof c.size, "%lldM floats", (long long)(n >> 20));
  c.params[0] = &c.ptr[0], c.params[1] = &c.ptr[1], c.params[2] = &c.f32, c.params[3] = &c.ll;
  base_launch(&c, "saxpy", n, 0);
  Result r = measure(&c);
  kern_array_free(x), kern_array_free(y), free(hx), free(hy);
  return r;
}

static Result bench_stencil(kern_module *m) {
  int64_t rows = 8192, cols = 8192;
  kern_array *src = dev(KERN_FLOAT32, 2, rows, cols), *dst = dev(KERN_FLOAT32, 2, rows, cols);
  float *hs = randoms(rows * cols, 7, 0);
  Case c = {.name = "stencil",
            .kind = "bandwidth, 2D neighbours",
            .k = kernel(m, "stencil"),
            .dims = KERN_DIM2(rows - 2, cols - 2),
            .nargs = 2,
            .args = {kern_arg_array(src), kern_arg_array(dst)},
            .launches = 1,
            .bytes = 8.0 * rows * cols,
            .out = dst,
            .limit = dst,
            .init = {src},
            .init_data = {hs},
            .zero = {dst},
            .i32 = {(int)rows, (int)cols},
            .ptr = {dptr(src), dptr(dst)}};
  snprintf(c.size, sizeof c.size, "%lldx%lld", (long long)rows, (long long)cols);
  c.params[0] = &c.ptr[0], c.params[1] = &c.ptr[1], c.params[2] = &c.i32[0],
  c.params[3] = &c.i32[1];
  base_launch(&c, "stencil", rows - 2, cols - 2);
  Result r = measure(&c);
  kern_array_free(src), kern_array_free(dst), free(hs);
  return r;
}

static Result bench_histogram(kern_module *m) {
  int64_t n = 1LL << 26;
  kern_array *v = dev(KERN_INT32, 1, n, 0), *bins = dev(KERN_INT32, 1, NBINS, 0);
  int32_t *hv = xmalloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) hv[i] = (int32_t)(unit((uint32_t)i) * 1000003.0f);
  Case c = {.name = "histogram",
            .kind = "atomics, 1024 bins",
            .k = kernel(m, "histogram"),
            .dims = KERN_DIM1(n),
            .nargs = 2,
            .args = {kern_arg_array(v), kern_arg_array(bins)},
            .launches = 1,
            .out = bins,
            .init = {v},
            .init_data = {hv},
            .zero = {bins},
            .i32 = {NBINS},
            .ll = n,
            .ptr = {dptr(v), dptr(bins)}};
  snprintf(c.size, sizeof c.size, "%lldM values", (long long)(n >> 20));
  c.params[0] = &c.ptr[0], c.params[1] = &c.ptr[1], c.params[2] = &c.i32[0], c.params[3] = &c.ll;
  base_launch(&c, "histogram", n, 0);
  Result r = measure(&c);
  kern_array_free(v), kern_array_free(bins), free(hv);
  return r;
}

static Result bench_matmul(kern_module *m) {
  int64_t n = 2048;
  kern_array *a = dev(KERN_FLOAT32, 2, n, n), *b = dev(KERN_FLOAT32, 2, n, n),
             *o = dev(KERN_FLOAT32, 2, n, n);
  float *ha = randoms(n * n, 3, -0.5f), *hb = randoms(n * n, 5u << 24, -0.5f);
  Case c = {.name = "matmul",
            .kind = "compute, naive",
            .k = kernel(m, "matmul"),
            .dims = KERN_DIM2(n, n),
            .nargs = 3,
            .args = {kern_arg_array(a), kern_arg_array(b), kern_arg_array(o)},
            .launches = 1,
            .out = o,
            .tol = 1e-5,
            .init = {a, b},
            .init_data = {ha, hb},
            .zero = {o},
            .i32 = {(int)n},
            .ptr = {dptr(a), dptr(b), dptr(o)}};
  snprintf(c.size, sizeof c.size, "%lldx%lld", (long long)n, (long long)n);
  c.params[0] = &c.ptr[0], c.params[1] = &c.ptr[1], c.params[2] = &c.ptr[2],
  c.params[3] = &c.i32[0];
  base_launch(&c, "matmul", n, n);
  Result r = measure(&c);
  kern_array_free(a), kern_array_free(b), kern_array_free(o), free(ha), free(hb);
  return r;
}

static Result bench_nbody(kern_module *m) {
  int64_t n = 32768;
  kern_array *pos = dev(KERN_VEC3, 1, n, 0), *vel = dev(KERN_VEC3, 1, n, 0),
             *mass = dev(KERN_FLOAT32, 1, n, 0);
  kern_array *po = dev(KERN_VEC3, 1, n, 0), *vo = dev(KERN_VEC3, 1, n, 0);
  float *hp = randoms(3 * n, 11, -0.5f), *hv = randoms(3 * n, 13u << 20, -0.5f),
        *hm = randoms(n, 17u << 22, 0.5f);
  Case c = {.name = "nbody",
            .kind = "compute, vec3",
            .k = kernel(m, "nbody"),
            .dims = KERN_DIM1(n),
            .nargs = 6,
            .args = {kern_arg_array(pos), kern_arg_array(vel), kern_arg_array(mass),
                     kern_arg_array(po), kern_arg_array(vo), kern_arg_f32(0.01f)},
            .launches = 1,
            .out = vo,
            .tol = 1e-5,
            .init = {pos, vel, mass},
            .init_data = {hp, hv, hm},
            .zero = {po, vo},
            .f32 = 0.01f,
            .i32 = {(int)n},
            .ptr = {dptr(pos), dptr(vel), dptr(mass), dptr(po), dptr(vo)}};
  snprintf(c.size, sizeof c.size, "%lldK bodies", (long long)(n >> 10));
  for (int i = 0; i < 5; i++) c.params[i] = &c.ptr[i];
  c.params[5] = &c.f32, c.params[6] = &c.i32[0];
  base_launch(&c, "nbody", n, 0);
  Result r = measure(&c);
  kern_array_free(pos), kern_array_free(vel), kern_array_free(mass), kern_array_free(po),
      kern_array_free(vo);
  free(hp), free(hv), free(hm);
  return r;
}

static Result bench_mandelbrot(kern_module *m) {
  int64_t rows = 4096, cols = 4096;
  int maxit = 256;
  kern_array *o = dev(KERN_INT32, 2, rows, cols);
  Case c = {.name = "mandelbrot",
            .kind = "compute, uneven",
            .k = kernel(m, "mandelbrot"),
            .dims = KERN_DIM2(rows, cols),
            .nargs = 2,
            .args = {kern_arg_array(o), kern_arg_i32(maxit)},
            .launches = 1,
            .out = o,
            .zero = {o},
            .i32 = {(int)rows, (int)cols, maxit},
            .ptr = {dptr(o)}};
  snprintf(c.size, sizeof c.size, "%lldx%lld, %d it", (long long)rows, (long long)cols, maxit);
  c.params[0] = &c.ptr[0], c.params[1] = &c.i32[0], c.params[2] = &c.i32[1],
  c.params[3] = &c.i32[2];
  base_launch(&c, "mandelbrot", rows, cols);
  Result r = measure(&c);
  kern_array_free(o);
  return r;
}

static Result bench_reduce(kern_module *m) {
  int64_t n = 1LL << 28, chunks = n / CHUNK;
  kern_array *x = dev(KERN_FLOAT32, 1, n, 0), *total = dev(KERN_FLOAT64, 1, 1, 0);
  float *hx = randoms(n, 19, 0);
  Case c = {.name = "reduce",
            .kind = "sum, float64 atomics",
            .k = kernel(m, "reduce_sum"),
            .dims = KERN_DIM1(chunks),
            .nargs = 2,
            .args = {kern_arg_array(x), kern_arg_array(total)},
            .launches = 1,
            .bytes = 4.0 * n,
            .out = total,
            .limit = x,
            .init = {x},
            .init_data = {hx},
            .zero = {total},
            .tol = 1e-9,
            .ll = chunks,
            .ptr = {dptr(x), dptr(total)}};
  snprintf(c.size, sizeof c.size, "%lldM floats", (long long)(n >> 20));
  c.params[0] = &c.ptr[0], c.params[1] = &c.ptr[1], c.params[2] = &c.ll;
  base_launch(&c, "reduce_sum", chunks, 0);
  Result r = measure(&c);
  kern_array_free(x), kern_array_free(total), free(hx);
  return r;
}

static Result bench_tiny(kern_module *m) {
  kern_array *x = dev(KERN_FLOAT32, 1, TINY_N, 0);
  Case c = {.name = "tiny",
            .kind = "launch overhead",
            .k = kernel(m, "tiny"),
            .dims = KERN_DIM1(TINY_N),
            .nargs = 1,
            .args = {kern_arg_array(x)},
            .launches = TINY,
            .out = x,
            .zero = {x},
            .ll = TINY_N,
            .ptr = {dptr(x)}};
  snprintf(c.size, sizeof c.size, "%d x %d floats", TINY, TINY_N);
  c.params[0] = &c.ptr[0], c.params[1] = &c.ll;
  base_launch(&c, "tiny", TINY_N, 0);
  Result r = measure(&c);
  kern_array_free(x);
  return r;
}

/* ---- the baseline module and the report -------------------------------------------------------- */

/* nvcc's CUBIN when given, else NVRTC's (with kern's --fmad=false). */
static CUmodule baseline(const char *cubin_path, const char **how) {
  CUmodule mod;
  size_t len;
  char *bin = cubin_path ? front_read_file(cubin_path, &len) : NULL;
  *how = "nvcc";
  if (!bin) {
    char path[4096], *src;
    bool is_ptx;
    snprintf(path, sizeof path, "%s/baseline.cu", KERN_BENCH_DIR);
    src = front_read_file(path, &len);
    kern_device_info info;
    BENCH_CHECK(kern_device_info_get(gpu, &info));
    BENCH_CHECK(tc_nvrtc_compile(src, "baseline.cu", info.sm_major * 10 + info.sm_minor, true,
                                 false, &bin, &len, &is_ptx));
    free(src);
    *how = "NVRTC (no nvcc CUBIN given)";
  }
  CU(cu->ModuleLoadData(&mod, bin));
  free(bin);
  return mod;
}

static double gbs(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

static void print_row(const Result *r, FILE *csv) {
  double k = r->kern / r->launches, b = r->base / r->launches, unit = r->launches > 1 ? 1e6 : 1e3;
  double kg = gbs(r->bytes, r->kern), cg = gbs(r->copy_bytes, r->copy);
  printf("| %s (%s) | %s | %.3f | %.3f | %.2f |", r->name, r->kind, r->size, unit * k, unit * b,
         b / k);
  if (r->bytes > 0)
    printf(" %.0f | %.0f | %.2f |", kg, cg, kg / cg);
  else
    printf(" | | |");
  printf(" %.3f | %.2f |\n", unit * r->fast / r->launches, r->kern / r->fast);
  if (csv)
    fprintf(csv, "%s,\"%s\",%.6f,%.6f,%.4f,%.1f,%.1f,%d,%.6f\n", r->name, r->size, 1e3 * r->kern,
            1e3 * r->base, b / k, kg, cg, r->launches, 1e3 * r->fast);
}

/* csv_path opened afresh with its header (NULL without a path); exits when it cannot be. */
static FILE *csv_start(const char *csv_path) {
  FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
  if (csv_path && !csv) {
    perror(csv_path);
    exit(1);
  }
  if (csv)
    fprintf(
        csv,
        "workload,size,kern_ms,cuda_ms,speed_vs_cuda,kern_gbs,copy_gbs,launches,fast_math_ms\n");
  return csv;
}

static void report(const Result *res, int n, const kern_device_info *info, const char *how,
                   const char *csv_path) {
  FILE *csv = csv_start(csv_path);
  printf("GPU: cuda:0 (sm_%d%d); the CUDA baselines compiled by %s\n\n", info->sm_major,
         info->sm_minor, how);
  printf(
      "Times in ms per run (tiny: us per launch); speed vs CUDA = CUDA time / kern time (higher is\n"
      "better); GB/s = the bytes the kernel must move / its time; copy = a device-to-device copy of\n"
      "the same array, the bandwidth limit.\n\n");
  printf("| workload | size | kern | CUDA | speed vs CUDA | kern GB/s | copy GB/s | of copy | kern "
         "fast-math | fast-math speed-up |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < n; i++) print_row(&res[i], csv);
  printf(
      "\nTargets: compute (matmul, nbody, mandelbrot) >= 0.97 of CUDA's speed; saxpy >= 0.97 of\n"
      "copy bandwidth; stencil at least Triton's speed (bench/peers.py); launch cost (tiny) <= 1.10x\n"
      "raw cuLaunchKernel, i.e. speed >= 0.91.\n");
  if (csv) fclose(csv);
}

/* ---- the primitives: kern_array_sum and kern_array_scan against copy bandwidth ------------------ */

/* 256M float32: the sum reads 1 GiB, the scan reads and writes it; copy = a
 * device-to-device copy of the same array (reads and writes). "of copy" is
 * kern's GB/s over the copy's, both counting the bytes each must move. */
/* The float32 primitives' kernels with `threads` per instance (0: the default). */
static void prims_block(int threads) {
  BENCH_CHECK(kern_kernel_set_tile_block(rt_prims_kernel(0, KERN_FLOAT32, KERN_FLOAT32, "reduce"),
                                         threads));
  BENCH_CHECK(
      kern_kernel_set_tile_block(rt_prims_kernel(3, KERN_FLOAT32, KERN_FLOAT32, "sums"), threads));
  BENCH_CHECK(
      kern_kernel_set_tile_block(rt_prims_kernel(3, KERN_FLOAT32, KERN_FLOAT32, "down"), threads));
}

/* Seconds of one kern_array_sum of x into out and one inclusive scan of x into y. */
static void time_sum_scan(kern_array *x, kern_array *y, kern_array *out, double *sum,
                          double *scan) {
  double t0 = bench_now();
  BENCH_CHECK(kern_array_sum(x, out));
  BENCH_CHECK(kern_device_synchronize(gpu));
  double t1 = bench_now();
  BENCH_CHECK(kern_array_scan(x, y, true));
  BENCH_CHECK(kern_device_synchronize(gpu));
  *sum = t1 - t0, *scan = bench_now() - t1;
}

/* Median seconds of a sum and of an inclusive scan of x into y, for each
 * tile block size (the table below uses the default). */
static void prims_sweep(kern_array *x, kern_array *y, kern_array *out) {
  static const int sizes[] = {64, 128, 256, 512, 1024};
  printf("\nprimitives by threads per instance (ms, median of %d):", REPS);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    prims_block(sizes[i]);
    double ts[REPS], tq[REPS];
    for (int r = 0; r < REPS; r++) time_sum_scan(x, y, out, &ts[r], &tq[r]);
    printf(" %d: sum %.3f scan %.3f;", sizes[i], 1e3 * bench_median(ts, REPS),
           1e3 * bench_median(tq, REPS));
  }
  printf("\n");
  prims_block(0);
}

/* A user's own tiled sum, as docs/language.md writes one: each instance sums
 * 16384 elements (the pairwise tree, like kern_array_sum's first pass), then
 * kern_array_sum adds the partial sums. Seconds of one, with the synchronize. */
static const char user_sum_src[] = "kernel void block_sum(float[] x, float[] s) {\n"
                                   "  int b = tid();\n"
                                   "  s[b] = tile_sum(tile_load<16384>(x, int64(b) * 16384));\n"
                                   "}\n";

static double time_user_sum(kern_kernel *k, kern_array *x, kern_array *part, kern_array *out) {
  int64_t nb = kern_array_size(part);
  kern_arg args[] = {kern_arg_array(x), kern_arg_array(part)};
  double t0 = bench_now();
  BENCH_CHECK(kern_launch(k, gpu, (kern_dims){1, {nb, 1, 1, 1}}, 2, args));
  BENCH_CHECK(kern_array_sum(part, out));
  BENCH_CHECK(kern_device_synchronize(gpu));
  return bench_now() - t0;
}

/* The median seconds of the user's sum of x, after checking it gives
 * kern_array_sum's bits (the same tree). */
static double user_sum(kern_array *x, kern_array *out) {
  kern_module *m = kern_module_from_source("user_sum.kern", user_sum_src);
  if (!m) {
    fprintf(stderr, "bench_gpu: %s\n", kern_last_error());
    exit(1);
  }
  kern_kernel *k = kernel(m, "block_sum");
  kern_array *part = dev(KERN_FLOAT32, 1, (kern_array_size(x) + 16383) / 16384, 0);
  float want, got;
  BENCH_CHECK(kern_array_sum(x, out));
  BENCH_CHECK(kern_array_read(out, &want, sizeof want));
  double t[REPS];
  for (int r = 0; r < REPS; r++) t[r] = time_user_sum(k, x, part, out);
  BENCH_CHECK(kern_array_read(out, &got, sizeof got));
  if (memcmp(&want, &got, sizeof got)) {
    fprintf(stderr, "bench_gpu: the tiled user sum %.9g differs from kern_array_sum's %.9g\n", got,
            want);
    exit(1);
  }
  kern_array_free(part);
  kern_module_free(m);
  return bench_median(t, REPS);
}

static void bench_primitives(const char *csv_path) {
  int64_t n = 1LL << 28;
  kern_array *x = dev(KERN_FLOAT32, 1, n, 0), *y = dev(KERN_FLOAT32, 1, n, 0);
  kern_array *out = dev(KERN_FLOAT32, 1, 1, 0);
  float *hx = randoms(n, 23, 0);
  BENCH_CHECK(kern_array_write(x, hx, (size_t)n * 4));
  double ts[REPS], tq[REPS], tc[REPS];
  BENCH_CHECK(kern_array_sum(x, out));
  BENCH_CHECK(kern_array_scan(x, y, true));
  BENCH_CHECK(kern_device_synchronize(gpu));
  for (int r = 0; r < REPS; r++) {
    time_sum_scan(x, y, out, &ts[r], &tq[r]);
    double t2 = bench_now();
    CU(cu->MemcpyAsync(dptr(y), dptr(x), (size_t)n * 4, st));
    CU(cu->StreamSynchronize(st));
    tc[r] = bench_now() - t2;
  }
  double s = bench_median(ts, REPS), q = bench_median(tq, REPS), c = bench_median(tc, REPS);
  double cg = gbs(8.0 * n, c), sg = gbs(4.0 * n, s), qg = gbs(8.0 * n, q);
  printf("\n| primitive | size | kern (ms) | kern GB/s | copy GB/s | of copy | target |\n");
  printf("|---|---|---:|---:|---:|---:|---:|\n");
  printf("| kern_array_sum | 256M float32 | %.3f | %.0f | %.0f | %.2f | >= 0.95 |\n", 1e3 * s, sg,
         cg, sg / cg);
  printf("| kern_array_scan (inclusive) | 256M float32 | %.3f | %.0f | %.0f | %.2f | >= 0.75 |\n",
         1e3 * q, qg, cg, qg / cg);
  double u = user_sum(x, out), ug = gbs(4.0 * n, u);
  printf("| a user's tiled sum (tile_sum of 16384 a block, then kern_array_sum) | 256M float32 | "
         "%.3f | %.0f | %.0f | %.2f | its speed >= 0.95 of kern_array_sum's: %.2f |\n",
         1e3 * u, ug, cg, ug / cg, s / u);
  FILE *csv = csv_path ? fopen(csv_path, "a") : NULL;
  if (csv) { /* bench/peers.py sets CuPy's, PyTorch's and Warp's sum and scan beside these */
    fprintf(csv, "array_sum,\"256M float32\",%.6f,,,,,1,\n", 1e3 * s);
    fprintf(csv, "array_scan,\"256M float32 inclusive\",%.6f,,,,,1,\n", 1e3 * q);
    fclose(csv);
  }
  if (getenv("BENCH_ONLY")) prims_sweep(x, y, out);
  kern_array_free(x), kern_array_free(y), kern_array_free(out), free(hx);
}

/* ---- kern_array_matmul at 2048^3 and 4096^3: EXACT float32, FAST TF32, float16, bfloat16 - */

static uint16_t half_bits(float x) { /* exact for the inputs below: multiples of 1/64 in [-1, 1] */
  uint32_t u;
  memcpy(&u, &x, 4);
  if (x == 0) return (uint16_t)(u >> 16);
  return (uint16_t)((u >> 31) << 15 | (((u >> 23) & 0xff) - 127 + 15) << 10 | ((u >> 13) & 0x3ff));
}

/* 64 sampled elements: EXACT's against the fma chain bit for bit, FAST's within
 * the documented bound (docs/runtime.md). */
static void check_sampled(const float *a, const float *b, const float *c, int64_t n, bool fast,
                          bool half) {
  for (int s = 0; s < 64; s++) {
    int64_t i = (s * 977) % n, j = (s * 1553) % n;
    float acc = 0.0f;
    double exact = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) {
      acc = fmaf(a[i * n + k], b[k * n + j], acc);
      exact += (double)a[i * n + k] * b[k * n + j],
          mag += fabs((double)a[i * n + k] * b[k * n + j]);
    }
    double bound = ((half ? 0 : 2 * ldexp(1, -11)) + (double)(n + 2) * ldexp(1, -22)) * mag;
    bool ok = fast ? fabs(c[i * n + j] - exact) <= bound : !memcmp(&acc, &c[i * n + j], 4);
    if (!ok) {
      fprintf(stderr, "bench_gpu: kern_array_matmul %s c[%lld,%lld] = %.9g (fma chain %.9g)\n",
              fast ? "FAST" : "EXACT", (long long)i, (long long)j, (double)c[i * n + j],
              (double)acc);
      exit(1);
    }
  }
}

static double time_matmul(kern_array *a, kern_array *b, kern_array *c, kern_matmul_mode mode) {
  double t[REPS];
  BENCH_CHECK(kern_array_matmul(a, b, c, mode));
  BENCH_CHECK(kern_device_synchronize(gpu));
  for (int r = 0; r < REPS; r++) {
    double t0 = bench_now();
    BENCH_CHECK(kern_array_matmul(a, b, c, mode));
    BENCH_CHECK(kern_device_synchronize(gpu));
    t[r] = bench_now() - t0;
  }
  return bench_median(t, REPS);
}

/* One size: the four modes' times, printed as rows of the table and, as
 * gemm_<mode>_<n>, to the CSV for bench/peers.py's cuBLAS and Triton. */
static void array_matmul_size(int64_t n, FILE *csv) {
  float *ha = xmalloc((size_t)(n * n) * 4), *hb = xmalloc((size_t)(n * n) * 4),
        *hc = xmalloc((size_t)(n * n) * 4);
  uint16_t *h16a = xmalloc((size_t)(n * n) * 2), *h16b = xmalloc((size_t)(n * n) * 2);
  uint16_t *hbfa = xmalloc((size_t)(n * n) * 2), *hbfb = xmalloc((size_t)(n * n) * 2);
  for (int64_t i = 0; i < n * n; i++) {
    ha[i] = (float)((i * 37) % 129 - 64) / 64.0f, hb[i] = (float)((i * 53) % 127 - 63) / 64.0f;
    h16a[i] = half_bits(ha[i]), h16b[i] = half_bits(hb[i]);
    uint32_t ua, ub; /* bfloat16: float32's top half, exact for these values */
    memcpy(&ua, &ha[i], 4), memcpy(&ub, &hb[i], 4);
    hbfa[i] = (uint16_t)(ua >> 16), hbfb[i] = (uint16_t)(ub >> 16);
  }
  kern_array *a = dev(KERN_FLOAT32, 2, n, n), *b = dev(KERN_FLOAT32, 2, n, n),
             *c = dev(KERN_FLOAT32, 2, n, n), *a16 = dev(KERN_FLOAT16, 2, n, n),
             *b16 = dev(KERN_FLOAT16, 2, n, n), *abf = dev(KERN_BFLOAT16, 2, n, n),
             *bbf = dev(KERN_BFLOAT16, 2, n, n);
  BENCH_CHECK(kern_array_write(a, ha, (size_t)(n * n) * 4));
  BENCH_CHECK(kern_array_write(b, hb, (size_t)(n * n) * 4));
  BENCH_CHECK(kern_array_write(a16, h16a, (size_t)(n * n) * 2));
  BENCH_CHECK(kern_array_write(b16, h16b, (size_t)(n * n) * 2));
  BENCH_CHECK(kern_array_write(abf, hbfa, (size_t)(n * n) * 2));
  BENCH_CHECK(kern_array_write(bbf, hbfb, (size_t)(n * n) * 2));
  static const char *const names[4] = {"EXACT float32", "FAST TF32 (float32 in)",
                                       "FAST float16 (float32 out)", "FAST bfloat16 (float32 out)"};
  static const char *const stems[4] = {"gemm_f32", "gemm_tf32", "gemm_f16", "gemm_bf16"};
  for (int v = 0; v < 4; v++) {
    kern_array *x = v == 2 ? a16 : v == 3 ? abf : a, *y = v == 2 ? b16 : v == 3 ? bbf : b;
    kern_matmul_mode mode = v ? KERN_MATMUL_FAST : KERN_MATMUL_EXACT;
    double t = time_matmul(x, y, c, mode);
    BENCH_CHECK(kern_array_read(c, hc, (size_t)(n * n) * 4));
    check_sampled(ha, hb, hc, n, v > 0, v >= 2);
    double tflops = 2.0 * (double)(n * n) * (double)n / t * 1e-12;
    printf("| %s | %lld | %.3f | %.1f |\n", names[v], (long long)n, 1e3 * t, tflops);
    if (csv)
      fprintf(csv, "%s_%lld,\"%lld^3\",%.6f,,,,,1,\n", stems[v], (long long)n, (long long)n,
              1e3 * t);
  }
  kern_array_free(a), kern_array_free(b), kern_array_free(c), kern_array_free(a16),
      kern_array_free(b16), kern_array_free(abf), kern_array_free(bbf);
  free(ha), free(hb), free(hc), free(h16a), free(h16b), free(hbfa), free(hbfb);
}

static void bench_array_matmul(const char *csv_path) {
  FILE *csv = csv_path ? fopen(csv_path, "a") : NULL;
  printf("\n| kern_array_matmul | n (n^3) | ms | TFLOP/s |\n|---|---:|---:|---:|\n");
  array_matmul_size(2048, csv);
  array_matmul_size(4096, csv);
  if (csv) fclose(csv);
}

/* ---- kern_array_sort: 64M uint32 keys (hash32(i + 29), as bench/peers.py's) ---------------- */

/* keys ascending, values their input places, equal keys in input order. */
static void check_sort(const uint32_t *in, const uint32_t *k, const uint32_t *v, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    bool ok = v[i] < n && k[i] == in[v[i]];
    if (ok && i > 0) ok = k[i - 1] < k[i] || (k[i - 1] == k[i] && v[i - 1] < v[i]);
    if (!ok) {
      fprintf(stderr, "bench_gpu: kern_array_sort: place %lld holds key %u, value %u\n",
              (long long)i, k[i], v[i]);
      exit(1);
    }
  }
}

/* The median of REPS sorts, each of a fresh copy of the input (untimed). */
static double time_sort(kern_array *k, kern_array *v, kern_array *k0, kern_array *v0) {
  double t[REPS + 1];
  for (int r = 0; r <= REPS; r++) {
    CU(cu->MemcpyAsync(dptr(k), dptr(k0), (size_t)kern_array_nbytes(k), st));
    if (v) CU(cu->MemcpyAsync(dptr(v), dptr(v0), (size_t)kern_array_nbytes(v), st));
    CU(cu->StreamSynchronize(st));
    double t0 = bench_now();
    BENCH_CHECK(kern_array_sort(k, v));
    BENCH_CHECK(kern_device_synchronize(gpu));
    t[r] = bench_now() - t0;
  }
  return bench_median(t + 1, REPS); /* the first run warms up */
}

static void bench_sort(const char *csv_path) {
  const int64_t n = 1LL << 26;
  uint32_t *hk = xmalloc((size_t)n * 4), *hv = xmalloc((size_t)n * 4), *gk = xmalloc((size_t)n * 4),
           *gv = xmalloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) hk[i] = hash32((uint32_t)i + 29), hv[i] = (uint32_t)i;
  kern_array *k0 = dev(KERN_UINT32, 1, n, 0), *v0 = dev(KERN_UINT32, 1, n, 0);
  kern_array *k = dev(KERN_UINT32, 1, n, 0), *v = dev(KERN_UINT32, 1, n, 0);
  BENCH_CHECK(kern_array_write(k0, hk, (size_t)n * 4));
  BENCH_CHECK(kern_array_write(v0, hv, (size_t)n * 4));
  BENCH_CHECK(kern_array_copy(k, k0));
  BENCH_CHECK(kern_array_copy(v, v0));
  BENCH_CHECK(kern_array_sort(k, v));
  BENCH_CHECK(kern_array_read(k, gk, (size_t)n * 4));
  BENCH_CHECK(kern_array_read(v, gv, (size_t)n * 4));
  check_sort(hk, gk, gv, n);
  double tk = time_sort(k, NULL, k0, NULL), tp = time_sort(k, v, k0, v0);
  printf("\n| kern_array_sort | size | kern (ms) | Gkeys/s | target |\n|---|---|---:|---:|---|\n");
  printf("| uint32 keys | 64M | %.3f | %.2f | >= 0.5 of CUB's speed (bench/peers.py) |\n", 1e3 * tk,
         (double)n / tk * 1e-9);
  printf("| uint32 keys, uint32 values | 64M | %.3f | %.2f | >= 0.5 of CUB's speed |\n", 1e3 * tp,
         (double)n / tp * 1e-9);
  FILE *csv = csv_path ? fopen(csv_path, "a") : NULL;
  if (csv) {
    fprintf(csv, "sort,\"64M uint32 keys\",%.6f,,,,,1,\n", 1e3 * tk);
    fprintf(csv, "sort_pairs,\"64M uint32 keys + uint32 values\",%.6f,,,,,1,\n", 1e3 * tp);
    fclose(csv);
  }
  kern_array_free(k0), kern_array_free(v0), kern_array_free(k), kern_array_free(v);
  free(hk), free(hv), free(gk), free(gv);
}

/* The workloads (only those `only` names, when it is set) against the
 * baselines; without `only`, every other table after them. */
static void bench_all(kern_module *m, const char *cubin, const char *csv_path, const char *only) {
  static const struct {
    const char *name;
    Result (*run)(kern_module *);
  } all[] = {{"saxpy", bench_saxpy},   {"stencil", bench_stencil}, {"histogram", bench_histogram},
             {"matmul", bench_matmul}, {"nbody", bench_nbody},     {"mandelbrot", bench_mandelbrot},
             {"reduce", bench_reduce}, {"tiny", bench_tiny}};
  enum { NB = sizeof all / sizeof *all };
  const char *how;
  bmod = baseline(cubin, &how);
  Result res[NB];
  int nres = 0;
  for (int i = 0; i < NB; i++)
    if (!only || strstr(only, all[i].name)) res[nres++] = all[i].run(m);
  kern_device_info info;
  BENCH_CHECK(kern_device_info_get(gpu, &info));
  report(res, nres, &info, how, csv_path);
  if (only) return;
  bench_primitives(csv_path);
  bench_array_matmul(csv_path);
  bench_sort(csv_path);
  bench_libm(m, fast_module, gpu, 1LL << 26, REPS);
}

int main(int argc, char **argv) {
  const char *csv_path = NULL, *cubin = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--csv") && i + 1 < argc)
      csv_path = argv[++i];
    else
      cubin = argv[i];
  }
  BENCH_CHECK(kern_init());
  gpu = kern_device_get("cuda:0");
  if (!gpu) {
    printf("bench_gpu: no GPU (%s): skipped\n", kern_last_error());
    return 0;
  }
  cu = rt_cu_load(NULL);
  st = (CUstream)kern_stream_cuda_handle(kern_device_get_stream(gpu));
  char path[4096];
  snprintf(path, sizeof path, "%s/workloads.kern", KERN_BENCH_DIR);
  kern_module *m = kern_module_load(path);
  if (!m) {
    fprintf(stderr, "%s", kern_last_error());
    return 1;
  }
  fast_module = kern_module_load(path);
  if (!fast_module || kern_module_set_fast_math(fast_module, true)) {
    fprintf(stderr, "%s", kern_last_error());
    return 1;
  }
  /* BENCH_ONLY=primitives, =matmul, =sort or =libm: only that table (profiling
   * one); any other value: only the first table's workloads it names (comma-separated) */
  const char *only = getenv("BENCH_ONLY");
  bool prims = only && !strcmp(only, "primitives"), mm = only && !strcmp(only, "matmul");
  bool sorts = only && !strcmp(only, "sort");
  if (prims || mm || sorts) { /* the CSV holds only that table's rows, after its header */
    FILE *csv = csv_start(csv_path);
    if (csv) fclose(csv);
    if (prims)
      bench_primitives(csv_path);
    else if (mm)
      bench_array_matmul(csv_path);
    else
      bench_sort(csv_path);
  } else if (only && !strcmp(only, "libm"))
    bench_libm(m, fast_module, gpu, 1LL << 26, REPS);
  else
    bench_all(m, cubin, csv_path, only);
  kern_module_free(m);
  kern_module_free(fast_module);
  return 0;
}
