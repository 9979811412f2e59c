/* bench_graph: the cost of many tiny launches on cuda:0, four ways.
 *
 * N tiny kernels (one block incrementing a small array) run as: kern launches
 * on the stream, one kern graph replay, raw driver launches (cuLaunchKernel on
 * a stream) and one raw driver graph (stream capture + cuGraphLaunch) of the
 * same kind of kernel compiled with NVRTC. Each is timed from the first call
 * to the end of a stream synchronize, repeated, and the median per kernel is
 * reported. Then the cost of re-capturing the N launches each iteration:
 * kern_capture_end (instantiate) vs kern_capture_end_update (in place). The
 * results are checked (every increment counted) before anything is printed.
 * Without a GPU it says why and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"
#include "nvrtc.h"
#include "toolchain.h"
#include "bench.h"
#include "kern.h"
#include "core.h"

enum { N = 1000, REPS = 21, ELEMS = 32 };

#define CU_CHECK(x)                                                                                \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_) {                                                                                      \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, rt_cu_error_text(r_));            \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* ---- kern ------------------------------------------------------------------------------------ */

static const char *kern_src = "kernel void inc(int[] x) {\n"
                              "    int i = tid();\n"
                              "    x[i] = x[i] + 1;\n"
                              "}\n";

typedef struct Kern {
  kern_device *gpu;
  kern_kernel *inc;
  kern_array *x;
  long expected;
} Kern;

static void kern_launches(Kern *k) {
  for (int i = 0; i < N; i++) BENCH_CHECK(KERN_LAUNCH(k->inc, k->gpu, KERN_DIM1(ELEMS), k->x));
  k->expected += N;
}

static kern_graph *kern_capture(Kern *k) {
  kern_graph *g;
  BENCH_CHECK(kern_capture_begin(k->gpu));
  kern_launches(k);
  k->expected -= N; /* recorded, not run */
  BENCH_CHECK(kern_capture_end(k->gpu, &g));
  return g;
}

static double time_kern_stream(Kern *k) {
  double t = bench_now();
  kern_launches(k);
  BENCH_CHECK(kern_device_synchronize(k->gpu));
  return bench_now() - t;
}

static double time_kern_graph(Kern *k, kern_graph *g) {
  double t = bench_now();
  BENCH_CHECK(kern_graph_launch(g));
  BENCH_CHECK(kern_device_synchronize(k->gpu));
  k->expected += N;
  return bench_now() - t;
}

/* Re-capturing every iteration: a new executable, or the same one updated. */
static double time_recapture(Kern *k, kern_graph *g, bool update) {
  double t = bench_now();
  BENCH_CHECK(kern_capture_begin(k->gpu));
  for (int i = 0; i < N; i++) BENCH_CHECK(KERN_LAUNCH(k->inc, k->gpu, KERN_DIM1(ELEMS), k->x));
  if (update) {
    bool up = false;
    BENCH_CHECK(kern_capture_end_update(k->gpu, g, &up));
    if (!up) {
      fprintf(stderr, "bench_graph: the re-capture was not updated in place\n");
      exit(1);
    }
  } else {
    kern_graph *fresh;
    BENCH_CHECK(kern_capture_end(k->gpu, &fresh));
    kern_graph_free(fresh);
  }
  return bench_now() - t;
}

static void check_kern(Kern *k) {
  int32_t h[ELEMS];
  BENCH_CHECK(kern_array_read(k->x, h, sizeof h));
  for (int i = 0; i < ELEMS; i++)
    if (h[i] != (int32_t)k->expected) {
      fprintf(stderr, "bench_graph: kern counted %d, expected %ld\n", h[i], k->expected);
      exit(1);
    }
}

/* ---- the raw driver ----------------------------------------------------------------------------- */

static const char *raw_src = "extern \"C\" __global__ void inc(int *x, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) x[i] += 1;\n"
                             "}\n";

typedef struct Raw {
  const rt_cu_api *cu;
  CUfunction fn;
  CUstream s;
  CUdeviceptr x;
  int n;
  long expected;
} Raw;

static void raw_launches(Raw *r) {
  void *params[] = {&r->x, &r->n};
  for (int i = 0; i < N; i++)
    CU_CHECK(r->cu->LaunchKernel(r->fn, 1, 1, 1, ELEMS, 1, 1, 0, r->s, params, NULL));
}

static double time_raw_stream(Raw *r) {
  double t = bench_now();
  raw_launches(r);
  CU_CHECK(r->cu->StreamSynchronize(r->s));
  r->expected += N;
  return bench_now() - t;
}

static CUgraphExec raw_capture(Raw *r) {
  CUgraph g;
  CUgraphExec e;
  CU_CHECK(r->cu->StreamBeginCapture(r->s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  raw_launches(r);
  CU_CHECK(r->cu->StreamEndCapture(r->s, &g));
  CU_CHECK(r->cu->GraphInstantiate(&e, g, 0));
  CU_CHECK(r->cu->GraphDestroy(g));
  return e;
}

static double time_raw_graph(Raw *r, CUgraphExec e) {
  double t = bench_now();
  CU_CHECK(r->cu->GraphLaunch(e, r->s));
  CU_CHECK(r->cu->StreamSynchronize(r->s));
  r->expected += N;
  return bench_now() - t;
}

static void raw_setup(Raw *r, kern_device *gpu) {
  kern_device_info info;
  BENCH_CHECK(kern_device_info_get(gpu, &info));
  const char *why;
  r->cu = rt_cu_load(&why);
  if (!r->cu) {
    fprintf(stderr, "bench_graph: %s\n", why);
    exit(1);
  }
  CUdevice dev;
  CUcontext ctx;
  CU_CHECK(r->cu->DeviceGet(&dev, info.ordinal));
  CU_CHECK(r->cu->DevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(r->cu->CtxSetCurrent(ctx));
  char *bin;
  size_t len;
  bool is_ptx;
  BENCH_CHECK(tc_nvrtc_compile(raw_src, "raw_inc.cu", info.sm_major * 10 + info.sm_minor, true,
                               false, &bin, &len, &is_ptx));
  CUmodule m;
  CU_CHECK(r->cu->ModuleLoadData(&m, bin));
  free(bin);
  CU_CHECK(r->cu->ModuleGetFunction(&r->fn, m, "inc"));
  CU_CHECK(r->cu->StreamCreate(&r->s, CU_STREAM_NON_BLOCKING));
  CU_CHECK(r->cu->MemAlloc(&r->x, ELEMS * sizeof(int32_t)));
  CU_CHECK(r->cu->MemsetD8Async(r->x, 0, ELEMS * sizeof(int32_t), r->s));
  r->n = ELEMS;
}

static void check_raw(Raw *r) {
  int32_t h[ELEMS];
  CU_CHECK(r->cu->MemcpyAsync((CUdeviceptr)(uintptr_t)h, r->x, sizeof h, r->s));
  CU_CHECK(r->cu->StreamSynchronize(r->s));
  for (int i = 0; i < ELEMS; i++)
    if (h[i] != (int32_t)r->expected) {
      fprintf(stderr, "bench_graph: the raw driver counted %d, expected %ld\n", h[i], r->expected);
      exit(1);
    }
}

/* ---- main ---------------------------------------------------------------------------------------- */

int main(void) {
  BENCH_CHECK(kern_init());
  Kern k = {.gpu = kern_device_get("cuda:0")};
  if (!k.gpu) {
    printf("bench_graph: skipped: %s\n", kern_last_error());
    return 0;
  }
  kern_module *m = kern_module_from_source("bench_graph.kern", kern_src);
  if (!m) {
    fprintf(stderr, "%s\n", kern_last_error());
    return 1;
  }
  k.inc = kern_module_kernel(m, "inc");
  int64_t n = ELEMS;
  k.x = kern_array_new(k.gpu, KERN_INT32, 1, &n);
  if (!k.inc || !k.x) {
    fprintf(stderr, "%s\n", kern_last_error());
    return 1;
  }
  Raw r = {0};
  raw_setup(&r, k.gpu);

  time_kern_stream(&k); /* warm up: compile, first launches */
  double t0 = bench_now();
  kern_graph *g = kern_capture(&k);
  double kern_build = bench_now() - t0;
  t0 = bench_now();
  CUgraphExec e = raw_capture(&r);
  double raw_build = bench_now() - t0;
  time_kern_graph(&k, g);
  time_raw_stream(&r);
  time_raw_graph(&r, e);

  double ks[REPS], kg[REPS], rs[REPS], rg[REPS], rc[REPS], ru[REPS];
  for (int i = 0; i < REPS; i++) { /* interleaved, so drift hits every variant alike */
    ks[i] = time_kern_stream(&k);
    kg[i] = time_kern_graph(&k, g);
    rs[i] = time_raw_stream(&r);
    rg[i] = time_raw_graph(&r, e);
  }
  check_kern(&k);
  check_raw(&r);
  for (int i = 0; i < REPS; i++) {
    rc[i] = time_recapture(&k, g, false);
    ru[i] = time_recapture(&k, g, true);
  }
  BENCH_CHECK(kern_graph_launch(g));
  k.expected += N;
  check_kern(&k);

  double us = 1e6 / N;
  printf("%d launches of a %d-thread kernel on %s, median of %d runs, microseconds per kernel:\n\n",
         N, ELEMS, kern_device_name(k.gpu), REPS);
  printf(
      "| way | kern (us/kernel) | raw driver (us/kernel) | kern / raw |\n|---|---:|---:|---:|\n");
  double a = bench_median(ks, REPS), b = bench_median(rs, REPS);
  printf("| launches on a stream | %.3f | %.3f | %.2f |\n", a * us, b * us, a / b);
  a = bench_median(kg, REPS), b = bench_median(rg, REPS);
  printf("| one graph replay | %.3f | %.3f | %.2f |\n", a * us, b * us, a / b);
  printf("| capture + instantiate (once) | %.3f | %.3f | %.2f |\n", kern_build * us, raw_build * us,
         kern_build / raw_build);
  printf("\nre-capturing the %d launches each iteration (us/kernel): kern_capture_end %.3f, "
         "kern_capture_end_update %.3f\n",
         N, bench_median(rc, REPS) * us, bench_median(ru, REPS) * us);

  kern_graph_free(g);
  r.cu->GraphExecDestroy(e);
  kern_array_free(k.x);
  kern_module_free(m);
  return 0;
}
