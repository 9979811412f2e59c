/* bench_gpu: kern on cuda:0 against hand-written CUDA and the hardware limit.
 *
 * - saxpy on 256M floats: kern vs the same kernel hand-written in CUDA
 *   (bench/baseline.cu, a CUBIN from nvcc passed as argv[1], else compiled here
 *   with NVRTC) vs a device-to-device copy of the same bytes (the bandwidth limit:
 *   saxpy moves 3 floats per element, a copy 2);
 * - launch cost: 1000 one-thread launches through kern vs raw cuLaunchKernel.
 * Runs are interleaved; medians are reported with the ratios. Skips (exit 0)
 * without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"
#include "front.h"
#include "kern.h"

enum { REPS = 21, TINY = 1000 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

#define CK(x)                                                                     \
  do {                                                                            \
    if ((x) != KERN_OK) {                                                         \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, kern_last_error()); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)
#define CU(x)                                                                     \
  do {                                                                            \
    CUresult r_ = (x);                                                            \
    if (r_) { fprintf(stderr, "%s: %s\n", #x, rt_cu_error_text(r_)); exit(1); }    \
  } while (0)

/* The baseline module: nvcc's CUBIN when given, else NVRTC's. */
static CUmodule baseline(const rt_cu_api *cu, const char *cubin_path, const char **how) {
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
    kern_device_info_get(kern_device_get("cuda:0"), &info);
    CK(rt_nvrtc_compile(src, "baseline.cu", info.sm_major * 10 + info.sm_minor, true, false, &bin, &len, &is_ptx));
    free(src);
    *how = "NVRTC (no nvcc CUBIN given)";
  }
  CU(cu->ModuleLoadData(&mod, bin));
  free(bin);
  return mod;
}

int main(int argc, char **argv) {
  CK(kern_init());
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) { printf("bench_gpu: no GPU (%s): skipped\n", kern_last_error()); return 0; }
  const rt_cu_api *cu = rt_cu_load(NULL);
  char path[4096];
  snprintf(path, sizeof path, "%s/gpu.kern", KERN_BENCH_DIR);
  kern_module *m = kern_module_load(path);
  if (!m) { fprintf(stderr, "%s", kern_last_error()); return 1; }
  kern_kernel *ksaxpy = kern_module_kernel(m, "saxpy"), *ktiny = kern_module_kernel(m, "tiny");
  const char *how;
  CUmodule bmod = baseline(cu, argc > 1 ? argv[1] : NULL, &how);
  CUfunction fsaxpy, ftiny;
  CU(cu->ModuleGetFunction(&fsaxpy, bmod, "saxpy"));
  CU(cu->ModuleGetFunction(&ftiny, bmod, "tiny"));
  CUstream st = (CUstream)kern_stream_cuda_handle(kern_device_get_stream(gpu));

  long long n = 1LL << 28;
  int64_t shape = n, one = 1;
  kern_array *x = kern_array_new(gpu, KERN_FLOAT32, 1, &shape), *y = kern_array_new(gpu, KERN_FLOAT32, 1, &shape);
  kern_array *z = kern_array_new(gpu, KERN_FLOAT32, 1, &shape), *t = kern_array_new(gpu, KERN_INT32, 1, &one);
  if (!x || !y || !z || !t) { fprintf(stderr, "%s\n", kern_last_error()); return 1; }
  CUdeviceptr dx = (CUdeviceptr)(uintptr_t)kern_array_data(x), dy = (CUdeviceptr)(uintptr_t)kern_array_data(y);
  CUdeviceptr dz = (CUdeviceptr)(uintptr_t)kern_array_data(z), dt = (CUdeviceptr)(uintptr_t)kern_array_data(t);
  float a = 2.0f;
  long long tn = 1;
  void *sp[] = {&dx, &dy, &a, &n}, *tp[] = {&dt, &tn};
  CK(KERN_LAUNCH(ksaxpy, gpu, KERN_DIM1(n), x, y, a)); /* compile + warm up */
  CK(KERN_LAUNCH(ktiny, gpu, KERN_DIM1(1), t));
  CK(kern_device_synchronize(gpu));

  double tk[REPS], tb[REPS], tc[REPS], lk[REPS], lr[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    CK(KERN_LAUNCH(ksaxpy, gpu, KERN_DIM1(n), x, y, a));
    CK(kern_device_synchronize(gpu));
    double t1 = now();
    CU(cu->LaunchKernel(fsaxpy, 132 * 32, 1, 1, 256, 1, 1, 0, st, sp, NULL));
    CU(cu->StreamSynchronize(st));
    double t2 = now();
    CU(cu->MemcpyAsync(dz, dy, (size_t)n * 4, st));
    CU(cu->StreamSynchronize(st));
    double t3 = now();
    for (int i = 0; i < TINY; i++) CK(KERN_LAUNCH(ktiny, gpu, KERN_DIM1(1), t));
    CK(kern_device_synchronize(gpu));
    double t4 = now();
    for (int i = 0; i < TINY; i++) CU(cu->LaunchKernel(ftiny, 1, 1, 1, 32, 1, 1, 0, st, tp, NULL));
    CU(cu->StreamSynchronize(st));
    double t5 = now();
    tk[r] = t1 - t0, tb[r] = t2 - t1, tc[r] = t3 - t2, lk[r] = (t4 - t3) / TINY, lr[r] = (t5 - t4) / TINY;
  }
  double k = median(tk, REPS), b = median(tb, REPS), c = median(tc, REPS);
  double gbk = 12.0 * n / k / 1e9, gbb = 12.0 * n / b / 1e9, gbc = 8.0 * n / c / 1e9;
  kern_device_info info;
  kern_device_info_get(gpu, &info);
  printf("GPU: cuda:0 (sm_%d%d), baseline compiled by %s\n\n", info.sm_major, info.sm_minor, how);
  printf("| workload | kern | baseline | ratio (target) |\n|---|---:|---:|---:|\n");
  printf("| saxpy 256M, time (ms) | %.3f | %.3f (hand-written CUDA) | %.2f of its speed (>= 0.95) |\n", 1e3 * k,
         1e3 * b, b / k);
  printf("| saxpy 256M, GB/s moved | %.0f | %.0f (device-to-device copy) | %.2f of copy bandwidth (>= 0.90) |\n", gbk,
         gbc, gbk / gbc);
  printf("| launch cost (us/launch, 1000 queued) | %.2f | %.2f (raw cuLaunchKernel) | %.2fx (<= 1.15x) |\n",
         1e6 * median(lk, REPS), 1e6 * median(lr, REPS), median(lk, REPS) / median(lr, REPS));
  (void)gbb;
  kern_array_free(x);
  kern_array_free(y);
  kern_array_free(z);
  kern_array_free(t);
  kern_module_free(m);
  return 0;
}
