/* bench_cpu: kern's CPU backend against the same work hand-written in C.
 *
 * Each workload is validated against the C result, then timed: kern launch vs
 * a C loop split over one pthread per core (persistent threads released by a
 * barrier, so thread creation is not counted against the baseline, taking
 * chunks of the index range from a shared counter, so uneven work such as
 * mandelbrot's stays balanced) and a single-threaded C loop. Runs are interleaved and the median is reported, with
 * the ratio kern / pthreads (lower is better; 1.00 = the same speed).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kern.h"

enum { REPS = 15 };

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

/* ---- the C baselines ----------------------------------------------------------- */

typedef struct Work {
  void (*fn)(struct Work *, int64_t begin, int64_t end);
  float *x, *y, a;
  int32_t *out;
  int64_t n, rows, cols;
  int maxit;
} Work;

static void saxpy_c(Work *w, int64_t b, int64_t e) {
  float *restrict x = w->x, *restrict y = w->y, a = w->a;
  for (int64_t i = b; i < e; i++) y[i] = a * x[i] + y[i];
}

static void mandel_c(Work *w, int64_t b, int64_t e) {
  for (int64_t k = b; k < e; k++) {
    int64_t i = k / w->cols, j = k % w->cols;
    float x0 = -2.0f + 3.0f * (float)j / (float)w->cols, y0 = -1.5f + 3.0f * (float)i / (float)w->rows;
    float x = 0, y = 0;
    int it = 0;
    while (x * x + y * y <= 4.0f && it < w->maxit) {
      float xt = x * x - y * y + x0;
      y = 2.0f * x * y + y0;
      x = xt;
      it++;
    }
    w->out[k] = it;
  }
}

/* A persistent pool: thread t runs its slice between two barrier waits. */
typedef struct Pool {
  int nthreads;
  pthread_t *threads;
  pthread_barrier_t start, done;
  Work *work;
  int quit;
} Pool;

static Pool pool;

static _Atomic int64_t next_chunk;

static void run_slice(int t) {
  (void)t;
  Work *w = pool.work;
  int64_t chunk = w->n / (pool.nthreads * 16) + 1;
  if (chunk < 1024) chunk = 1024;
  for (;;) {
    int64_t b = atomic_fetch_add(&next_chunk, chunk);
    if (b >= w->n) return;
    w->fn(w, b, b + chunk < w->n ? b + chunk : w->n);
  }
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (;;) {
    pthread_barrier_wait(&pool.start);
    if (pool.quit) return NULL;
    run_slice(t);
    pthread_barrier_wait(&pool.done);
  }
}

static void pool_start(int n) {
  pool.nthreads = n;
  pool.threads = calloc((size_t)n, sizeof *pool.threads);
  pthread_barrier_init(&pool.start, NULL, (unsigned)n);
  pthread_barrier_init(&pool.done, NULL, (unsigned)n);
  for (int t = 1; t < n; t++) pthread_create(&pool.threads[t], NULL, worker, (void *)(intptr_t)t);
}

static void pool_run(Work *w) {
  pool.work = w;
  atomic_store(&next_chunk, 0);
  pthread_barrier_wait(&pool.start);
  run_slice(0);
  pthread_barrier_wait(&pool.done);
}

static void pool_stop(void) {
  pool.quit = 1;
  pthread_barrier_wait(&pool.start);
  for (int t = 1; t < pool.nthreads; t++) pthread_join(pool.threads[t], NULL);
}

/* ---- workloads --------------------------------------------------------------------- */

typedef struct Result {
  const char *name;
  double kern, threads, single;
} Result;

#define CHECK(x)                                                               \
  do {                                                                         \
    if ((x) != KERN_OK) {                                                      \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, kern_last_error()); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static Result bench_saxpy(kern_module *m, kern_device *cpu) {
  int64_t n = 1 << 24;
  kern_kernel *k = kern_module_kernel(m, "saxpy");
  kern_array *ax = kern_array_empty(cpu, KERN_FLOAT32, 1, &n), *ay = kern_array_empty(cpu, KERN_FLOAT32, 1, &n);
  float *x = kern_array_data(ax), *y = kern_array_data(ay), *cy = malloc(n * sizeof *cy), *cx = malloc(n * sizeof *cx);
  for (int64_t i = 0; i < n; i++) x[i] = cx[i] = (float)(i % 100), y[i] = cy[i] = 1.0f;
  Work w = {.fn = saxpy_c, .x = cx, .y = cy, .a = 2.0f, .n = n};
  CHECK(KERN_LAUNCH(k, cpu, KERN_DIM1(n), ax, ay, 2.0f));
  saxpy_c(&w, 0, n);
  if (memcmp(y, cy, n * sizeof *y) != 0) { fprintf(stderr, "saxpy: kern and C differ\n"); exit(1); }
  double tk[REPS], tt[REPS], ts[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    CHECK(KERN_LAUNCH(k, cpu, KERN_DIM1(n), ax, ay, 2.0f));
    double t1 = now();
    pool_run(&w);
    double t2 = now();
    saxpy_c(&w, 0, n);
    double t3 = now();
    tk[r] = t1 - t0, tt[r] = t2 - t1, ts[r] = t3 - t2;
  }
  kern_array_free(ax);
  kern_array_free(ay);
  free(cx);
  free(cy);
  return (Result){"saxpy 16M (bandwidth)", median(tk, REPS), median(tt, REPS), median(ts, REPS)};
}

static Result bench_mandel(kern_module *m, kern_device *cpu) {
  int64_t rows = 768, cols = 1024, shape[2] = {rows, cols};
  kern_kernel *k = kern_module_kernel(m, "mandelbrot");
  kern_array *ao = kern_array_new(cpu, KERN_INT32, 2, shape);
  int32_t *out = kern_array_data(ao), *cout = calloc((size_t)(rows * cols), sizeof *cout);
  Work w = {.fn = mandel_c, .out = cout, .n = rows * cols, .rows = rows, .cols = cols, .maxit = 256};
  CHECK(KERN_LAUNCH(k, cpu, KERN_DIM2(rows, cols), ao, 256));
  mandel_c(&w, 0, w.n);
  int64_t differ = 0;
  for (int64_t i = 0; i < w.n; i++) differ += out[i] != cout[i];
  /* chaotic at the set's edge: FMA contraction may differ between the compilers */
  if (differ > w.n / 100) { fprintf(stderr, "mandelbrot: %lld pixels differ\n", (long long)differ); exit(1); }
  double tk[REPS], tt[REPS], ts[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    CHECK(KERN_LAUNCH(k, cpu, KERN_DIM2(rows, cols), ao, 256));
    double t1 = now();
    pool_run(&w);
    double t2 = now();
    if (r < 3) mandel_c(&w, 0, w.n);
    double t3 = now();
    tk[r] = t1 - t0, tt[r] = t2 - t1, ts[r] = r < 3 ? t3 - t2 : ts[r % 3];
  }
  kern_array_free(ao);
  free(cout);
  return (Result){"mandelbrot 1024x768, 256 it (compute)", median(tk, REPS), median(tt, REPS), median(ts, REPS)};
}

int main(void) {
  CHECK(kern_init());
  kern_device *cpu = kern_device_get("cpu");
  char path[4096];
  snprintf(path, sizeof path, "%s/cpu.kern", KERN_BENCH_DIR);
  kern_module *m = kern_module_load(path);
  if (!m) { fprintf(stderr, "%s\n", kern_last_error()); return 1; }
  int ncores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  pool_start(ncores);
  Result r[] = {bench_saxpy(m, cpu), bench_mandel(m, cpu)};
  pool_stop();
  printf("| workload | kern (ms) | C, %d pthreads (ms) | C, 1 thread (ms) | kern / pthreads |\n", ncores);
  printf("|---|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
    printf("| %s | %.3f | %.3f | %.3f | %.2f |\n", r[i].name, 1e3 * r[i].kern, 1e3 * r[i].threads,
           1e3 * r[i].single, r[i].kern / r[i].threads);
  kern_module_free(m);
  kern_shutdown();
  return 0;
}
