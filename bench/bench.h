/* bench.h: what every benchmark of bench/ shares: a monotonic clock, the
 * median of a sample, and the exit-on-error check of kern calls.
 *
 * Requires: kern.h. Produces: static inline helpers (each benchmark is one
 * translation unit, so nothing here is linked twice). Breaks: a failed kern
 * call ends the benchmark with its message, before anything is printed as a
 * result; a benchmark never reports numbers from a run that went wrong.
 */
#ifndef KERN_BENCH_H
#define KERN_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kern.h"

static inline double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v in place. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp);
  return v[n / 2];
}

#define BENCH_CHECK(x)                                                                             \
  do {                                                                                             \
    if ((x) != KERN_OK) {                                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, kern_last_error());               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#endif
