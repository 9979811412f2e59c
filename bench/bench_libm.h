/* bench_libm.h: the transcendental-function table of bench_cpu and bench_gpu.
 *
 * Requires: bench.h and the tr_* kernels of bench/workloads.kern, loaded once
 * as a default module (kern's own functions, the same bits on every device)
 * and once as a fast-math module (the platform's: libm on the CPU, CUDA's
 * approximate instructions on a GPU). Produces bench_libm(): a Markdown table
 * on stdout of exp, sin, log and pow, float32 and float64, one call per
 * element, median of interleaved runs, and the ratio own / platform. Breaks:
 * nothing; exits 1 when the two differ by more than 1e-4 (float32) or 1e-10
 * (float64) times max(|result|, 1), before the row is printed.
 */
#ifndef KERN_BENCH_LIBM_H
#define KERN_BENCH_LIBM_H

#include <math.h>
#include <string.h>

#include "bench.h"

/* x in the function's usual range: exp [-20, 20], sin [-100, 100], log and
 * pow (0, 1000] and (0, 5] (pow's exponent is 2.5 - x). */
static double bench_libm_input(int f, int64_t i, int64_t n) {
  double u = ((double)((uint64_t)i * 2654435761u % (uint64_t)n) + 0.5) / (double)n;
  return f == 0 ? -20.0 + 40.0 * u : f == 1 ? -100.0 + 200.0 * u : f == 2 ? 1000.0 * u : 5.0 * u;
}

static double bench_libm_time(kern_kernel *k, kern_device *d, int64_t n, kern_arg *args) {
  double t0 = bench_now();
  BENCH_CHECK(kern_launch(k, d, KERN_DIM1(n), 2, args));
  BENCH_CHECK(kern_device_synchronize(d));
  return bench_now() - t0;
}

/* Runs one row; out_own/out_fast are read back to compare the two first. */
static void bench_libm_row(kern_module *own, kern_module *fast, kern_device *d, int f, int f64,
                           int64_t n, int reps) {
  static const char *names[] = {"exp", "sin", "log", "pow"};
  char name[32];
  snprintf(name, sizeof name, "tr_%s%s", names[f], f64 ? "64" : "");
  kern_dtype t = f64 ? KERN_FLOAT64 : KERN_FLOAT32;
  size_t es = f64 ? 8 : 4;
  kern_array *x = kern_array_new(d, t, 1, &n), *o = kern_array_new(d, t, 1, &n);
  char *h = malloc((size_t)n * es), *h2 = malloc((size_t)n * es);
  if (!x || !o || !h || !h2) BENCH_CHECK(KERN_ERR_OUT_OF_MEMORY);
  for (int64_t i = 0; i < n; i++) {
    double v = bench_libm_input(f, i, n);
    float vf = (float)v;
    memcpy(h + (size_t)i * es, f64 ? (void *)&v : (void *)&vf, es);
  }
  BENCH_CHECK(kern_array_write(x, h, (size_t)n * es));
  kern_arg args[] = {kern_arg_array(x), kern_arg_array(o)};
  kern_kernel *ko = kern_module_kernel(own, name), *kf = kern_module_kernel(fast, name);
  if (!ko || !kf) BENCH_CHECK(KERN_ERR_NOT_FOUND);
  bench_libm_time(ko, d, n, args);
  BENCH_CHECK(kern_array_read(o, h, (size_t)n * es));
  bench_libm_time(kf, d, n, args);
  BENCH_CHECK(kern_array_read(o, h2, (size_t)n * es));
  for (int64_t i = 0; i < n; i++) {
    double a = f64 ? ((double *)h)[i] : ((float *)h)[i],
           b = f64 ? ((double *)h2)[i] : ((float *)h2)[i];
    if (fabs(a - b) > (f64 ? 1e-10 : 1e-4) * fmax(fabs(b), 1.0)) {
      fprintf(stderr, "bench_libm: %s(%g): own %.17g, platform %.17g\n", name,
              bench_libm_input(f, i, n), a, b);
      exit(1);
    }
  }
  double to[64], tf[64];
  for (int r = 0; r < reps && r < 64; r++)
    to[r] = bench_libm_time(ko, d, n, args), tf[r] = bench_libm_time(kf, d, n, args);
  double mo = bench_median(to, reps), mf = bench_median(tf, reps);
  printf("| %s | %s | %lldM | %.3f | %.3f | %.2f |\n", names[f], f64 ? "float64" : "float32",
         (long long)(n >> 20), 1e3 * mo, 1e3 * mf, mo / mf);
  kern_array_free(x), kern_array_free(o);
  free(h), free(h2);
}

static void bench_libm(kern_module *own, kern_module *fast, kern_device *d, int64_t n, int reps) {
  printf("\n| function | type | elements | kern's own (ms) | platform, fast-math (ms) | own / "
         "platform |\n|---|---|---:|---:|---:|---:|\n");
  for (int f = 0; f < 4; f++)
    for (int f64 = 0; f64 < 2; f64++) bench_libm_row(own, fast, d, f, f64, n, reps);
}

#endif
