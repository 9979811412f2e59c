/* bench_cpu: kern's CPU backend against the same work hand-written in C.
 *
 * Requires: bench/workloads.kern (KERN_BENCH_DIR), the C baselines below compiled
 * -O3 -march=native (CMakeLists.txt). Produces: a Markdown table on stdout
 * and, with `--csv FILE`, the same numbers as CSV. Breaks: nothing; exits 1
 * when kern's result differs from the C result, before anything is timed.
 *
 * Each workload runs as a kern launch, as the same algorithm in C split over
 * one pthread per core (persistent threads released by a barrier, so thread
 * creation is not counted against the baseline, taking chunks of the work from
 * a shared counter, so uneven work such as mandelbrot's stays balanced) and
 * as the C loop on one thread. All three are checked against each other
 * first. Runs are interleaved (drift hits every variant alike) and medians
 * are reported with the ratios kern / pthreads and kern / 1 thread (lower is
 * better; 1.00 = the same speed). BENCH_SCALE=s (default 1) makes every
 * problem about s times more work, for machines with many cores.
 * A second table times kern_array_matmul (EXACT float32, 512^3 and 1024^3,
 * checked against the fma chain) against the naive matmul kernel and, when
 * Debian's libopenblas.so.0 can be opened, OpenBLAS's cblas_sgemm on all
 * cores (BENCH_ONLY=gemm runs only that table). A third times
 * kern_array_sort of 16M uint32 keys, alone and with uint32 values, against
 * a plain C LSD radix sort (8-bit digits, 4 passes) on one thread, checked
 * against it first (BENCH_ONLY=sort runs only that table). A fourth
 * (bench_libm.h, BENCH_ONLY=libm) times kern's own exp, sin, log and pow
 * against the platform's libm in a fast-math module, 4M elements a launch.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_libm.h"
#include "kern.h"

enum { REPS = 21, SINGLE_REPS = 5, TINY_LAUNCHES = 1000, TINY_N = 64, CHUNK = 256, NBINS = 1024 };

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (!p) {
    fprintf(stderr, "bench_cpu: out of memory\n");
    exit(1);
  }
  return p;
}

static kern_array *array(kern_device *cpu, kern_dtype t, int ndim, int64_t a, int64_t b) {
  int64_t shape[2] = {a, b};
  kern_array *r = kern_array_new(cpu, t, ndim, shape);
  if (!r) {
    fprintf(stderr, "bench_cpu: %s\n", kern_last_error());
    exit(1);
  }
  return r;
}

/* A small deterministic generator for inputs (not kern's rand: the inputs must
 * not depend on what is being measured). */
static uint32_t hash32(uint32_t x) {
  x ^= x >> 16, x *= 0x7feb352dU, x ^= x >> 15, x *= 0x846ca68bU, x ^= x >> 16;
  return x;
}

static float unit(uint32_t i) { return (float)(hash32(i) >> 8) * (1.0f / 16777216.0f); }

/* ---- the persistent pthread pool of the baseline ------------------------------------ */

typedef void (*range_fn)(const void *ctx, int64_t begin, int64_t end);

static struct {
  int nthreads;
  pthread_t *threads;
  pthread_barrier_t start, done;
  range_fn fn;
  const void *ctx;
  int64_t n, chunk;
  _Atomic int64_t next;
  int quit;
} pool;

static void run_chunks(void) {
  for (;;) {
    int64_t b = atomic_fetch_add(&pool.next, pool.chunk);
    if (b >= pool.n) return;
    pool.fn(pool.ctx, b, b + pool.chunk < pool.n ? b + pool.chunk : pool.n);
  }
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_barrier_wait(&pool.start);
    if (pool.quit) return NULL;
    run_chunks();
    pthread_barrier_wait(&pool.done);
  }
}

static void pool_start(int n) {
  pool.nthreads = n;
  pool.threads = xcalloc((size_t)n, sizeof *pool.threads);
  pthread_barrier_init(&pool.start, NULL, (unsigned)n);
  pthread_barrier_init(&pool.done, NULL, (unsigned)n);
  for (int t = 1; t < n; t++) pthread_create(&pool.threads[t], NULL, worker, NULL);
}

/* n items in chunks of at least `grain` items, about 16 chunks per thread. */
static void pool_run(range_fn fn, const void *ctx, int64_t n, int64_t grain) {
  int64_t chunk = n / (pool.nthreads * 16) + 1;
  pool.fn = fn, pool.ctx = ctx, pool.n = n, pool.chunk = chunk < grain ? grain : chunk;
  atomic_store(&pool.next, 0);
  pthread_barrier_wait(&pool.start);
  run_chunks();
  pthread_barrier_wait(&pool.done);
}

static void pool_stop(void) {
  pool.quit = 1;
  pthread_barrier_wait(&pool.start);
  for (int t = 1; t < pool.nthreads; t++) pthread_join(pool.threads[t], NULL);
  free(pool.threads);
}

/* ---- the measuring harness ------------------------------------------------------------- */

/* One workload: a kern launch and the C range function over the same data. */
typedef struct Case {
  const char *name, *kind;
  char size[48];
  kern_kernel *k;
  kern_device *cpu;
  kern_dims dims;
  int nargs;
  kern_arg args[6];
  range_fn fn;
  const void *ctx;
  int64_t n, grain; /* C items (rows, chunks ...) and the smallest chunk */
  int launches;     /* > 1: the time of this many launches in a row */
  /* a host primitive instead of a launch: prim(pin, pout) (no fast-math form) */
  kern_status (*prim)(const kern_array *, kern_array *);
  kern_array *pin, *pout;
} Case;

typedef struct Result {
  const char *name, *kind;
  char size[48];
  double kern, threads, single, fast;
} Result;

/* The same workloads with kern_module_set_fast_math: what giving up the
 * same-bits promise buys (timed only; its results are not compared). */
static kern_module *fast_module;

static void launch_n(const Case *c, kern_kernel *k) {
  for (int i = 0; i < c->launches; i++)
    BENCH_CHECK(c->prim ? c->prim(c->pin, c->pout)
                        : kern_launch(k, c->cpu, c->dims, c->nargs, c->args));
}

static void run_kern(const Case *c) { launch_n(c, c->k); }

static void run_threads(const Case *c) {
  for (int i = 0; i < c->launches; i++) pool_run(c->fn, c->ctx, c->n, c->grain);
}

static void run_single(const Case *c) {
  for (int i = 0; i < c->launches; i++) c->fn(c->ctx, 0, c->n);
}

/* Interleaved runs; the single thread only in the first SINGLE_REPS. */
static Result measure(const Case *c) {
  double tk[REPS], tt[REPS], ts[SINGLE_REPS], tf[REPS];
  kern_kernel *kf = c->prim ? NULL : kern_module_kernel(fast_module, kern_kernel_name(c->k));
  if (!kf && !c->prim) {
    fprintf(stderr, "bench_cpu: %s\n", kern_last_error());
    exit(1);
  }
  run_kern(c);
  run_threads(c);
  launch_n(c, kf);
  for (int r = 0; r < REPS; r++) {
    double t0 = bench_now();
    run_kern(c);
    double t1 = bench_now();
    run_threads(c);
    double t2 = bench_now();
    if (r < SINGLE_REPS) run_single(c);
    double t3 = bench_now();
    launch_n(c, kf);
    tk[r] = t1 - t0, tt[r] = t2 - t1, tf[r] = bench_now() - t3;
    if (r < SINGLE_REPS) ts[r] = t3 - t2;
  }
  Result res = {c->name,
                c->kind,
                "",
                bench_median(tk, REPS),
                bench_median(tt, REPS),
                bench_median(ts, SINGLE_REPS),
                bench_median(tf, REPS)};
  memcpy(res.size, c->size, sizeof res.size);
  fprintf(stderr, "  %-12s %s done\n", c->name, c->size);
  return res;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  if (!k) {
    fprintf(stderr, "bench_cpu: %s\n", kern_last_error());
    exit(1);
  }
  return k;
}

static void fail(const char *what, int64_t at, double got, double want) {
  fprintf(stderr, "bench_cpu: %s: kern and C differ at %lld: %.9g vs %.9g\n", what, (long long)at,
          got, want);
  exit(1);
}

/* |got - want| <= tol * max(1, |want|) everywhere. */
static void same_f32(const char *what, const float *got, const float *want, int64_t n, double tol) {
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i], scale = fabs(w) > 1 ? fabs(w) : 1;
    if (!(fabs(g - w) <= tol * scale)) fail(what, i, g, w);
  }
}

static void same_i32(const char *what, const int32_t *got, const int32_t *want, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want[i]) fail(what, i, got[i], want[i]);
}

/* ---- saxpy: bandwidth ---------------------------------------------------------------------- */

typedef struct {
  float *x, *y, a;
} Saxpy;

static void saxpy_c(const void *ctx, int64_t b, int64_t e) {
  const Saxpy *s = ctx;
  float *restrict x = s->x, *restrict y = s->y, a = s->a;
  for (int64_t i = b; i < e; i++) y[i] = a * x[i] + y[i];
}

static Result bench_saxpy(kern_module *m, kern_device *cpu, int scale) {
  int64_t n = (int64_t)scale << 24;
  kern_array *ax = array(cpu, KERN_FLOAT32, 1, n, 0), *ay = array(cpu, KERN_FLOAT32, 1, n, 0);
  float *x = kern_array_data(ax), *y = kern_array_data(ay);
  Saxpy s = {xcalloc((size_t)n, 4), xcalloc((size_t)n, 4), 2.0f};
  float *want = xcalloc((size_t)n, 4);
  for (int64_t i = 0; i < n; i++)
    x[i] = s.x[i] = (float)(i % 100), y[i] = s.y[i] = 1.0f, want[i] = 2.0f * x[i] + 1.0f;
  Case c = {
      "saxpy", "bandwidth",  "",   kernel(m, "saxpy"),
      cpu,     KERN_DIM1(n), 3,    {kern_arg_array(ax), kern_arg_array(ay), kern_arg_f32(2.0f)},
      saxpy_c, &s,           n,    4096,
      1,       NULL,         NULL, NULL};
  snprintf(c.size, sizeof c.size, "%lldM floats", (long long)(n >> 20));
  run_kern(&c);
  same_f32("saxpy", y, want, n, 0);
  run_threads(&c);
  same_f32("saxpy (pthreads)", s.y, want, n, 0);
  Result r = measure(&c);
  kern_array_free(ax), kern_array_free(ay), free(s.x), free(s.y), free(want);
  return r;
}

/* ---- stencil: 2D 5-point, bandwidth with neighbours ----------------------------------------- */

typedef struct {
  const float *src;
  float *dst;
  int64_t cols;
} Stencil;

/* Interior rows b+1 .. e (items are interior rows). */
static void stencil_c(const void *ctx, int64_t b, int64_t e) {
  const Stencil *s = ctx;
  int64_t n = s->cols;
  for (int64_t i = b + 1; i <= e; i++) {
    const float *restrict up = s->src + (i - 1) * n, *restrict mid = up + n,
                          *restrict down = mid + n;
    float *restrict out = s->dst + i * n;
    for (int64_t j = 1; j < n - 1; j++)
      out[j] = 0.2f * (mid[j] + up[j] + down[j] + mid[j - 1] + mid[j + 1]);
  }
}

static Result bench_stencil(kern_module *m, kern_device *cpu, int scale) {
  int64_t rows = 2048 * (int64_t)scale, cols = 2048, n = rows * cols;
  kern_array *as = array(cpu, KERN_FLOAT32, 2, rows, cols),
             *ad = array(cpu, KERN_FLOAT32, 2, rows, cols);
  float *src = kern_array_data(as), *dst = kern_array_data(ad);
  Stencil s = {src, xcalloc((size_t)n, 4), cols};
  for (int64_t i = 0; i < n; i++) src[i] = unit((uint32_t)i);
  Case c = {"stencil", "bandwidth, 2D neighbours",
            "",        kernel(m, "stencil"),
            cpu,       KERN_DIM2(rows - 2, cols - 2),
            2,         {kern_arg_array(as), kern_arg_array(ad)},
            stencil_c, &s,
            rows - 2,  4,
            1,         NULL,
            NULL,      NULL};
  snprintf(c.size, sizeof c.size, "%lldx%lld", (long long)rows, (long long)cols);
  run_kern(&c);
  run_single(&c);
  same_f32("stencil", dst, s.dst, n, 0);
  memset(s.dst, 0, (size_t)n * 4);
  run_threads(&c);
  same_f32("stencil (pthreads)", dst, s.dst, n, 0);
  Result r = measure(&c);
  kern_array_free(as), kern_array_free(ad), free(s.dst);
  return r;
}

/* ---- histogram: contended integer atomics --------------------------------------------------- */

typedef struct {
  const int32_t *values;
  int32_t *bins;
  int64_t nbins;
} Histogram;

static void histogram_c(const void *ctx, int64_t b, int64_t e) {
  const Histogram *h = ctx;
  for (int64_t i = b; i < e; i++)
    __atomic_fetch_add(&h->bins[h->values[i] % h->nbins], 1, __ATOMIC_RELAXED);
}

static Result bench_histogram(kern_module *m, kern_device *cpu, int scale) {
  int64_t n = (int64_t)scale << 22;
  kern_array *av = array(cpu, KERN_INT32, 1, n, 0), *ab = array(cpu, KERN_INT32, 1, NBINS, 0);
  int32_t *values = kern_array_data(av), *bins = kern_array_data(ab), want[NBINS] = {0};
  Histogram h = {values, xcalloc(NBINS, 4), NBINS};
  for (int64_t i = 0; i < n; i++)
    values[i] = (int32_t)(hash32((uint32_t)i) % 1000003), want[values[i] % NBINS]++;
  Case c = {"histogram", "atomics, 1024 bins",
            "",          kernel(m, "histogram"),
            cpu,         KERN_DIM1(n),
            2,           {kern_arg_array(av), kern_arg_array(ab)},
            histogram_c, &h,
            n,           4096,
            1,           NULL,
            NULL,        NULL};
  snprintf(c.size, sizeof c.size, "%lldM values", (long long)(n >> 20));
  run_kern(&c);
  same_i32("histogram", bins, want, NBINS);
  run_threads(&c);
  same_i32("histogram (pthreads)", h.bins, want, NBINS);
  Result r = measure(&c);
  kern_array_free(av), kern_array_free(ab), free(h.bins);
  return r;
}

/* ---- matmul: naive, compute with strided loads ------------------------------------------------ */

typedef struct {
  const float *a, *b;
  float *c;
  int64_t n;
} Matmul;

/* Rows b .. e-1 of c. */
static void matmul_c(const void *ctx, int64_t b, int64_t e) {
  const Matmul *mm = ctx;
  int64_t n = mm->n;
  for (int64_t i = b; i < e; i++)
    for (int64_t j = 0; j < n; j++) {
      float s = 0.0f;
      for (int64_t k = 0; k < n; k++) s += mm->a[i * n + k] * mm->b[k * n + j];
      mm->c[i * n + j] = s;
    }
}

static Result bench_matmul(kern_module *m, kern_device *cpu, int scale) {
  int64_t n = (int64_t)(512 * cbrt((double)scale)) / 64 * 64;
  kern_array *aa = array(cpu, KERN_FLOAT32, 2, n, n), *ab = array(cpu, KERN_FLOAT32, 2, n, n);
  kern_array *ac = array(cpu, KERN_FLOAT32, 2, n, n);
  float *a = kern_array_data(aa), *b = kern_array_data(ab), *c = kern_array_data(ac);
  for (int64_t i = 0; i < n * n; i++)
    a[i] = unit((uint32_t)i) - 0.5f, b[i] = unit((uint32_t)(i + n * n)) - 0.5f;
  Matmul mm = {a, b, xcalloc((size_t)(n * n), 4), n};
  Case cs = {"matmul", "compute, naive",
             "",       kernel(m, "matmul"),
             cpu,      KERN_DIM2(n, n),
             3,        {kern_arg_array(aa), kern_arg_array(ab), kern_arg_array(ac)},
             matmul_c, &mm,
             n,        1,
             1,        NULL,
             NULL,     NULL};
  snprintf(cs.size, sizeof cs.size, "%lldx%lld", (long long)n, (long long)n);
  run_kern(&cs);
  run_single(&cs);
  same_f32("matmul", c, mm.c, n * n, 1e-5);
  memset(mm.c, 0, (size_t)(n * n) * 4);
  run_threads(&cs);
  same_f32("matmul (pthreads)", c, mm.c, n * n, 1e-5);
  Result r = measure(&cs);
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac), free(mm.c);
  return r;
}

/* ---- n-body: one all-pairs step, compute on vec3 ------------------------------------------------ */

typedef struct {
  float x, y, z;
} V3;
typedef struct {
  const V3 *pos, *vel;
  const float *mass;
  V3 *pos_out, *vel_out;
  int64_t n;
  float dt;
} Nbody;

static void nbody_c(const void *ctx, int64_t b, int64_t e) {
  const Nbody *s = ctx;
  for (int64_t i = b; i < e; i++) {
    V3 p = s->pos[i], acc = {0, 0, 0};
    for (int64_t j = 0; j < s->n; j++) {
      V3 d = {s->pos[j].x - p.x, s->pos[j].y - p.y, s->pos[j].z - p.z};
      float inv = 1.0f / sqrtf(d.x * d.x + d.y * d.y + d.z * d.z + 0.01f);
      float f = s->mass[j] * inv * inv * inv;
      acc.x += d.x * f, acc.y += d.y * f, acc.z += d.z * f;
    }
    V3 v = {s->vel[i].x + acc.x * s->dt, s->vel[i].y + acc.y * s->dt, s->vel[i].z + acc.z * s->dt};
    s->vel_out[i] = v;
    s->pos_out[i] = (V3){p.x + v.x * s->dt, p.y + v.y * s->dt, p.z + v.z * s->dt};
  }
}

static Result bench_nbody(kern_module *m, kern_device *cpu, int scale) {
  int64_t n = (int64_t)(4096 * sqrt((double)scale));
  kern_array *ap = array(cpu, KERN_VEC3, 1, n, 0), *av = array(cpu, KERN_VEC3, 1, n, 0);
  kern_array *am = array(cpu, KERN_FLOAT32, 1, n, 0);
  kern_array *apo = array(cpu, KERN_VEC3, 1, n, 0), *avo = array(cpu, KERN_VEC3, 1, n, 0);
  V3 *pos = kern_array_data(ap), *vel = kern_array_data(av);
  float *mass = kern_array_data(am);
  for (int64_t i = 0; i < n; i++) {
    uint32_t h = (uint32_t)(4 * i);
    pos[i] = (V3){unit(h) * 2 - 1, unit(h + 1) * 2 - 1, unit(h + 2) * 2 - 1};
    vel[i] = (V3){0, 0, 0};
    mass[i] = (0.5f + unit(h + 3)) / (float)n;
  }
  Nbody s = {pos, vel,  mass, xcalloc((size_t)n, sizeof(V3)), xcalloc((size_t)n, sizeof(V3)),
             n,   0.01f};
  Case c = {"nbody",
            "compute, vec3",
            "",
            kernel(m, "nbody"),
            cpu,
            KERN_DIM1(n),
            6,
            {kern_arg_array(ap), kern_arg_array(av), kern_arg_array(am), kern_arg_array(apo),
             kern_arg_array(avo), kern_arg_f32(0.01f)},
            nbody_c,
            &s,
            n,
            1,
            1,
            NULL,
            NULL,
            NULL};
  snprintf(c.size, sizeof c.size, "%lld bodies", (long long)n);
  run_kern(&c);
  run_single(&c);
  same_f32("nbody (pos)", kern_array_data(apo), (const float *)s.pos_out, 3 * n, 1e-5);
  same_f32("nbody (vel)", kern_array_data(avo), (const float *)s.vel_out, 3 * n, 1e-5);
  memset(s.vel_out, 0, (size_t)n * sizeof(V3));
  run_threads(&c);
  same_f32("nbody (pthreads)", kern_array_data(avo), (const float *)s.vel_out, 3 * n, 1e-5);
  Result r = measure(&c);
  kern_array_free(ap), kern_array_free(av), kern_array_free(am), kern_array_free(apo),
      kern_array_free(avo);
  free(s.pos_out), free(s.vel_out);
  return r;
}

/* ---- mandelbrot: pure compute, uneven ------------------------------------------------------------ */

typedef struct {
  int32_t *out;
  int64_t rows, cols;
  int maxit;
} Mandel;

/* Rows b .. e-1. */
static void mandel_c(const void *ctx, int64_t b, int64_t e) {
  const Mandel *w = ctx;
  for (int64_t i = b; i < e; i++)
    for (int64_t j = 0; j < w->cols; j++) {
      float x0 = -2.0f + 3.0f * (float)j / (float)w->cols,
            y0 = -1.5f + 3.0f * (float)i / (float)w->rows;
      float x = 0, y = 0;
      int it = 0;
      while (x * x + y * y <= 4.0f && it < w->maxit) {
        float xt = x * x - y * y + x0;
        y = 2.0f * x * y + y0;
        x = xt;
        it++;
      }
      w->out[i * w->cols + j] = it;
    }
}

static Result bench_mandel(kern_module *m, kern_device *cpu, int scale) {
  int64_t rows = 768 * (int64_t)scale, cols = 1024, n = rows * cols;
  kern_array *ao = array(cpu, KERN_INT32, 2, rows, cols);
  int32_t *out = kern_array_data(ao);
  Mandel w = {xcalloc((size_t)n, 4), rows, cols, 256};
  Case c = {"mandelbrot",
            "compute, uneven",
            "",
            kernel(m, "mandelbrot"),
            cpu,
            KERN_DIM2(rows, cols),
            2,
            {kern_arg_array(ao), kern_arg_i32(256)},
            mandel_c,
            &w,
            rows,
            1,
            1,
            NULL,
            NULL,
            NULL};
  snprintf(c.size, sizeof c.size, "%lldx%lld, 256 it", (long long)cols, (long long)rows);
  run_kern(&c);
  run_single(&c);
  same_i32("mandelbrot", out, w.out, n);
  memset(w.out, 0, (size_t)n * 4);
  run_threads(&c);
  same_i32("mandelbrot (pthreads)", out, w.out, n);
  Result r = measure(&c);
  kern_array_free(ao), free(w.out);
  return r;
}

/* ---- reduction: chunk sums, then one float64 atomic per chunk ------------------------------------ */

typedef struct {
  const float *x;
  double *total;
} Reduce;

static void atomic_add_f64(double *p, double v) {
  double old, sum;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  do sum = old + v;
  while (!__atomic_compare_exchange(p, &old, &sum, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* Chunks b .. e-1 of CHUNK elements. */
static void reduce_c(const void *ctx, int64_t b, int64_t e) {
  const Reduce *r = ctx;
  for (int64_t c = b; c < e; c++) {
    float s = 0.0f;
    for (int64_t k = c * CHUNK; k < (c + 1) * CHUNK; k++) s += r->x[k];
    atomic_add_f64(r->total, (double)s);
  }
}

/* The chunk sums are the same floats; only the order of the atomic adds differs. */
static void same_total(const char *what, double got, double want) {
  if (!(fabs(got - want) <= 1e-9 * fabs(want))) fail(what, 0, got, want);
}

static Result bench_reduce(kern_module *m, kern_device *cpu, int scale) {
  int64_t n = (int64_t)scale << 24, chunks = n / CHUNK;
  kern_array *ax = array(cpu, KERN_FLOAT32, 1, n, 0), *at = array(cpu, KERN_FLOAT64, 1, 1, 0);
  float *x = kern_array_data(ax);
  double *total = kern_array_data(at), ctotal = 0, exact = 0;
  for (int64_t i = 0; i < n; i++) x[i] = unit((uint32_t)i), exact += x[i];
  Reduce s = {x, &ctotal};
  Case c = {"reduce", "sum, float64 atomics",
            "",       kernel(m, "reduce_sum"),
            cpu,      KERN_DIM1(chunks),
            2,        {kern_arg_array(ax), kern_arg_array(at)},
            reduce_c, &s,
            chunks,   64,
            1,        NULL,
            NULL,     NULL};
  snprintf(c.size, sizeof c.size, "%lldM floats", (long long)(n >> 20));
  run_kern(&c);
  run_single(&c);
  same_total("reduce", *total, ctotal);
  /* float chunk sums: off the float64 sum by their rounding only */
  if (!(fabs(*total - exact) <= 1e-5 * exact)) fail("reduce (vs a float64 sum)", 0, *total, exact);
  ctotal = 0;
  run_threads(&c);
  same_total("reduce (pthreads)", ctotal, *total);
  Result r = measure(&c);
  kern_array_free(ax), kern_array_free(at);
  return r;
}

/* ---- kern_array_sum: the pairwise tree in tiles, against the same C reduction ----------------- */

static Result bench_array_sum(kern_module *m, kern_device *cpu, int scale) {
  (void)m;
  int64_t n = (int64_t)scale << 24, chunks = n / CHUNK;
  kern_array *ax = array(cpu, KERN_FLOAT32, 1, n, 0), *at = array(cpu, KERN_FLOAT32, 1, 1, 0);
  float *x = kern_array_data(ax), *total = kern_array_data(at);
  double ctotal = 0, exact = 0;
  for (int64_t i = 0; i < n; i++) x[i] = unit((uint32_t)i), exact += x[i];
  Reduce s = {x, &ctotal};
  Case c = {.name = "array_sum",
            .kind = "kern_array_sum vs C chunk sums",
            .cpu = cpu,
            .fn = reduce_c,
            .ctx = &s,
            .n = chunks,
            .grain = 64,
            .launches = 1,
            .prim = kern_array_sum,
            .pin = ax,
            .pout = at};
  snprintf(c.size, sizeof c.size, "%lldM floats", (long long)(n >> 20));
  run_kern(&c);
  /* the tree's float sum: off the float64 sum by its rounding only */
  if (!(fabs(*total - exact) <= 1e-5 * exact))
    fail("array_sum (vs a float64 sum)", 0, *total, exact);
  Result r = measure(&c);
  kern_array_free(ax), kern_array_free(at);
  return r;
}

/* ---- tiny launches: launch overhead --------------------------------------------------------------- */

static void tiny_c(const void *ctx, int64_t b, int64_t e) {
  float *x = (float *)ctx;
  for (int64_t i = b; i < e; i++) x[i] = x[i] + 1.0f;
}

static Result bench_tiny(kern_module *m, kern_device *cpu, int scale) {
  (void)scale;
  kern_array *ax = array(cpu, KERN_FLOAT32, 1, TINY_N, 0);
  float *x = kern_array_data(ax), cx[TINY_N] = {0}, want[TINY_N];
  for (int i = 0; i < TINY_N; i++) want[i] = TINY_LAUNCHES;
  Case c = {"tiny launches",
            "launch overhead",
            "",
            kernel(m, "tiny"),
            cpu,
            KERN_DIM1(TINY_N),
            1,
            {kern_arg_array(ax)},
            tiny_c,
            cx,
            TINY_N,
            TINY_N,
            TINY_LAUNCHES,
            NULL,
            NULL,
            NULL};
  snprintf(c.size, sizeof c.size, "%d x %d floats", TINY_LAUNCHES, TINY_N);
  run_kern(&c);
  same_f32("tiny launches", x, want, TINY_N, 0);
  run_threads(&c);
  same_f32("tiny launches (pthreads)", cx, want, TINY_N, 0);
  Result r = measure(&c);
  kern_array_free(ax);
  return r;
}

/* ---- a tiled histogram: all cores against one ------------------------------------------------- */

/* docs/language.md's tiled histogram: each instance counts its 1024 values
 * into a tile of 64 bins and adds the tile once (64 atomics, not 1024), with
 * `base` added to tid() so that instances can be launched one at a time. */
static const char tiled_hist_src[] =
    "kernel void histogram(int[] v, int[] bins, int base) {\n"
    "  int b = base + tid();\n"
    "  tile<int, 1024> x = tile_load<1024>(v, b * 1024, -1);\n"
    "  tile<int, 64> h = tile_zeros<int, 64>();\n"
    "  for (int k = 0; k < 64; k++) {\n"
    "    h = h + tile_where(tile_arange<int, 64>() == k, tile_sum(tile_where(x == k, 1, 0)), 0);\n"
    "  }\n"
    "  tile_atomic_add(bins, 0, h);\n"
    "}\n";

/* Seconds of one histogram of the nb instances: one launch over all of them
 * (the pool's threads), or one launch per instance (each runs on the
 * calling thread: one core); bins checked against want. */
static double tiled_hist(kern_kernel *k, kern_device *cpu, kern_array *v, kern_array *bins,
                         int64_t nb, bool one_core, const int *want) {
  int zero = 0;
  BENCH_CHECK(kern_array_fill(bins, &zero));
  double t0 = bench_now();
  for (int64_t b = 0; b < (one_core ? nb : 1); b++) {
    kern_arg args[] = {kern_arg_array(v), kern_arg_array(bins), kern_arg_i32((int32_t)b)};
    BENCH_CHECK(kern_launch(k, cpu, KERN_DIM1(one_core ? 1 : nb), 3, args));
  }
  double t = bench_now() - t0;
  if (memcmp(kern_array_data(bins), want, 64 * sizeof(int))) {
    fprintf(stderr, "bench_cpu: the tiled histogram's bins differ (%s)\n",
            one_core ? "one core" : "all cores");
    exit(1);
  }
  return t;
}

static void bench_tiled_hist(kern_device *cpu, int scale, int ncores) {
  int64_t nb = (int64_t)scale << 12, n = nb * 1024;
  kern_module *m = kern_module_from_source("tiled_hist.kern", tiled_hist_src);
  if (!m) {
    fprintf(stderr, "bench_cpu: %s\n", kern_last_error());
    exit(1);
  }
  kern_kernel *k = kernel(m, "histogram");
  kern_array *v = array(cpu, KERN_INT32, 1, n, 0), *bins = array(cpu, KERN_INT32, 1, 64, 0);
  int *x = kern_array_data(v), want[64] = {0};
  for (int64_t i = 0; i < n; i++) x[i] = (int)(hash32((uint32_t)i) % 64), want[x[i]]++;
  double all[SINGLE_REPS], one[SINGLE_REPS];
  for (int r = 0; r < SINGLE_REPS; r++) {
    all[r] = tiled_hist(k, cpu, v, bins, nb, false, want);
    one[r] = tiled_hist(k, cpu, v, bins, nb, true, want);
  }
  double ta = bench_median(all, SINGLE_REPS), t1 = bench_median(one, SINGLE_REPS);
  printf(
      "\n| tiled histogram (64 bins, a tile an instance) | values | all %d cores (ms) | one core: "
      "an instance a launch (ms) | speed-up on all cores |\n|---|---:|---:|---:|---:|\n",
      ncores);
  printf("| docs/language.md's kernel | %lldM | %.2f | %.2f | %.2f |\n", (long long)(n >> 20),
         1e3 * ta, 1e3 * t1, t1 / ta);
  kern_array_free(v), kern_array_free(bins);
  kern_module_free(m);
}

/* ---- kern_array_matmul: EXACT float32 against the naive kernel and OpenBLAS --------------- */

/* OpenBLAS's cblas_sgemm through dlopen of Debian's libopenblas.so.0 (no
 * build-time dependency); its column is "-" when the library is absent. */
typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, MM_REPS = 7 };

static sgemm_fn openblas(int ncores) {
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) return NULL;
  void (*threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
  if (threads) threads(ncores);
  return (sgemm_fn)dlsym(h, "cblas_sgemm");
}

typedef struct MatmulRow {
  int64_t n;
  double exact, naive, blas; /* seconds; blas < 0: absent */
} MatmulRow;

/* Every element of c against the fma chain over k ascending (EXACT's definition). */
static void check_exact(const float *a, const float *b, const float *c, int64_t n) {
  for (int64_t i = 0; i < n; i += 37)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < n; k++) acc = fmaf(a[i * n + k], b[k * n + j], acc);
      if (memcmp(&acc, &c[i * n + j], 4)) {
        fprintf(stderr, "bench_cpu: kern_array_matmul c[%lld,%lld] = %.9g, the fma chain %.9g\n",
                (long long)i, (long long)j, (double)c[i * n + j], (double)acc);
        exit(1);
      }
    }
}

static MatmulRow bench_matmul_exact(kern_module *m, kern_device *cpu, int64_t n, sgemm_fn sgemm) {
  kern_array *aa = array(cpu, KERN_FLOAT32, 2, n, n), *ab = array(cpu, KERN_FLOAT32, 2, n, n);
  kern_array *ac = array(cpu, KERN_FLOAT32, 2, n, n), *an = array(cpu, KERN_FLOAT32, 2, n, n);
  float *a = kern_array_data(aa), *b = kern_array_data(ab), *c = kern_array_data(ac);
  float *cb = xcalloc((size_t)(n * n), 4);
  for (int64_t i = 0; i < n * n; i++)
    a[i] = unit((uint32_t)i) - 0.5f, b[i] = unit((uint32_t)(i + n * n)) - 0.5f;
  kern_kernel *naive = kernel(m, "matmul");
  kern_arg args[3] = {kern_arg_array(aa), kern_arg_array(ab), kern_arg_array(an)};
  BENCH_CHECK(kern_array_matmul(aa, ab, ac, KERN_MATMUL_EXACT));
  check_exact(a, b, c, n);
  BENCH_CHECK(kern_launch(naive, cpu, KERN_DIM2(n, n), 3, args));
  same_f32("matmul naive vs kern_array_matmul", kern_array_data(an), c, n * n, 1e-4);
  if (sgemm) {
    sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)n, (int)n, (int)n, 1.0f, a, (int)n,
          b, (int)n, 0.0f, cb, (int)n);
    same_f32("OpenBLAS sgemm vs kern_array_matmul", cb, c, n * n, 1e-4);
  }
  double te[MM_REPS], tn[MM_REPS], tb[MM_REPS];
  for (int r = 0; r < MM_REPS; r++) {
    double t0 = bench_now();
    BENCH_CHECK(kern_array_matmul(aa, ab, ac, KERN_MATMUL_EXACT));
    double t1 = bench_now();
    BENCH_CHECK(kern_launch(naive, cpu, KERN_DIM2(n, n), 3, args));
    double t2 = bench_now();
    if (sgemm)
      sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)n, (int)n, (int)n, 1.0f, a,
            (int)n, b, (int)n, 0.0f, cb, (int)n);
    tb[r] = bench_now() - t2, te[r] = t1 - t0, tn[r] = t2 - t1;
  }
  MatmulRow row = {n, bench_median(te, MM_REPS), bench_median(tn, MM_REPS),
                   sgemm ? bench_median(tb, MM_REPS) : -1};
  kern_array_free(aa), kern_array_free(ab), kern_array_free(ac), kern_array_free(an), free(cb);
  fprintf(stderr, "  %-12s %lld^3 done\n", "matmul EXACT", (long long)n);
  return row;
}

static void print_matmul(const MatmulRow *r, int n, int ncores) {
  printf("\n| kern_array_matmul EXACT float32 | kern (ms) | GFLOP/s | naive kernel (ms) | "
         "OpenBLAS sgemm, %d threads (ms) | kern / naive speed-up | kern speed / OpenBLAS |\n",
         ncores);
  printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < n; i++) {
    double gf = 2.0 * (double)r[i].n * (double)r[i].n * (double)r[i].n / r[i].exact * 1e-9;
    printf("| %lld^3 | %.2f | %.1f | %.2f | ", (long long)r[i].n, 1e3 * r[i].exact, gf,
           1e3 * r[i].naive);
    if (r[i].blas >= 0)
      printf("%.2f | %.1fx | %.2f |\n", 1e3 * r[i].blas, r[i].naive / r[i].exact,
             r[i].blas / r[i].exact);
    else
      printf("- | %.1fx | - |\n", r[i].naive / r[i].exact);
  }
}

/* ---- kern_array_sort against an LSD radix sort in C on one thread ------------------------------ */

/* Stable: 4 passes of 8-bit digits, ping-ponging between (k, v) and (tk, tv). */
static void radix_c(uint32_t *k, uint32_t *v, uint32_t *tk, uint32_t *tv, int64_t n) {
  for (int sh = 0; sh < 32; sh += 8) {
    int64_t at[256] = {0}, sum = 0;
    for (int64_t i = 0; i < n; i++) at[(k[i] >> sh) & 255]++;
    for (int d = 0; d < 256; d++) {
      int64_t c = at[d];
      at[d] = sum, sum += c;
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t to = at[(k[i] >> sh) & 255]++;
      tk[to] = k[i];
      if (v) tv[to] = v[i];
    }
    uint32_t *x = k;
    k = tk, tk = x;
    if (v) x = v, v = tv, tv = x;
  }
}

typedef struct {
  double kern, c;
} SortRow;

/* Median times of REPS runs each, the inputs restored (untimed) before each. */
static SortRow bench_sort_one(kern_device *cpu, int64_t n, bool pairs) {
  kern_array *ak = array(cpu, KERN_UINT32, 1, n, 0), *av = array(cpu, KERN_UINT32, 1, n, 0);
  uint32_t *k0 = xcalloc((size_t)n, 4), *k = kern_array_data(ak), *v = kern_array_data(av);
  uint32_t *ck = xcalloc((size_t)n, 4), *cv = xcalloc((size_t)n, 4), *tk = xcalloc((size_t)n, 4),
           *tv = xcalloc((size_t)n, 4);
  for (int64_t i = 0; i < n; i++) k0[i] = hash32((uint32_t)i + 29);
  double tkern[REPS], tc[REPS];
  for (int r = -1; r < REPS; r++) {
    memcpy(k, k0, 4 * (size_t)n), memcpy(ck, k0, 4 * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = cv[i] = (uint32_t)i;
    double t0 = bench_now();
    BENCH_CHECK(kern_array_sort(ak, pairs ? av : NULL));
    double t1 = bench_now();
    radix_c(ck, pairs ? cv : NULL, tk, tv, n);
    double t2 = bench_now();
    if (r < 0) { /* the first run: checked, not timed */
      same_i32("sort keys", (const int32_t *)k, (const int32_t *)ck, n);
      if (pairs) same_i32("sort values", (const int32_t *)v, (const int32_t *)cv, n);
    } else {
      tkern[r] = t1 - t0, tc[r] = t2 - t1;
    }
  }
  kern_array_free(ak), kern_array_free(av);
  free(k0), free(ck), free(cv), free(tk), free(tv);
  fprintf(stderr, "  sort %s done\n", pairs ? "pairs" : "keys");
  return (SortRow){bench_median(tkern, REPS), bench_median(tc, REPS)};
}

static void bench_array_sort(kern_device *cpu, int scale) {
  int64_t n = (int64_t)scale << 24;
  SortRow keys = bench_sort_one(cpu, n, false), pairs = bench_sort_one(cpu, n, true);
  printf("\n| kern_array_sort | size | kern (ms) | C LSD radix, 1 thread (ms) | kern / C |\n");
  printf("|---|---|---:|---:|---:|\n");
  printf("| uint32 keys | %lldM | %.3f | %.3f | %.2f |\n", (long long)(n >> 20), 1e3 * keys.kern,
         1e3 * keys.c, keys.kern / keys.c);
  printf("| uint32 keys, uint32 values | %lldM | %.3f | %.3f | %.2f |\n", (long long)(n >> 20),
         1e3 * pairs.kern, 1e3 * pairs.c, pairs.kern / pairs.c);
}

/* ---- output ------------------------------------------------------------------------------------- */

static void print_table(const Result *r, int n, int ncores) {
  printf(
      "| workload | size | kern (ms) | C, %d pthreads (ms) | C, 1 thread (ms) | kern / pthreads | kern / 1 thread | kern fast-math (ms) | fast / kern |\n",
      ncores);
  printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < n; i++) {
    double rt = r[i].kern / r[i].threads, rs = r[i].kern / r[i].single;
    printf("| %s (%s) | %s | %.3f | %.3f | %.3f | %.*f | %.*f | %.3f | %.2f |\n", r[i].name,
           r[i].kind, r[i].size, 1e3 * r[i].kern, 1e3 * r[i].threads, 1e3 * r[i].single,
           rt < 0.1 ? 4 : 2, rt, rs < 0.1 ? 4 : 2, rs, 1e3 * r[i].fast, r[i].fast / r[i].kern);
  }
}

static int write_csv(const char *path, const Result *r, int n, int ncores) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(
      f,
      "workload,kind,size,threads,kern_ms,pthreads_ms,single_ms,kern_over_pthreads,kern_over_single,"
      "fast_math_ms\n");
  for (int i = 0; i < n; i++)
    fprintf(f, "%s,\"%s\",\"%s\",%d,%.4f,%.4f,%.4f,%.4g,%.4g,%.4f\n", r[i].name, r[i].kind,
            r[i].size, ncores, 1e3 * r[i].kern, 1e3 * r[i].threads, 1e3 * r[i].single,
            r[i].kern / r[i].threads, r[i].kern / r[i].single, 1e3 * r[i].fast);
  return fclose(f) != 0;
}

static int env_scale(void) {
  const char *s = getenv("BENCH_SCALE");
  int v = s ? atoi(s) : 1;
  return v >= 1 && v <= 4096 ? v : 1;
}

int main(int argc, char **argv) {
  const char *csv = argc == 3 && !strcmp(argv[1], "--csv") ? argv[2] : NULL;
  if (argc != 1 && !csv) {
    fprintf(stderr, "usage: bench_cpu [--csv FILE]\n");
    return 2;
  }
  BENCH_CHECK(kern_init());
  kern_device *cpu = kern_device_get("cpu");
  char path[4096];
  snprintf(path, sizeof path, "%s/workloads.kern", KERN_BENCH_DIR);
  kern_module *m = kern_module_load(path);
  fast_module = kern_module_load(path);
  if (!m || !fast_module || kern_module_set_fast_math(fast_module, true)) {
    fprintf(stderr, "%s\n", kern_last_error());
    return 1;
  }
  int ncores = (int)sysconf(_SC_NPROCESSORS_ONLN), scale = env_scale();
  static const struct {
    const char *name;
    Result (*run)(kern_module *, kern_device *, int);
  } all[] = {
      {"saxpy", bench_saxpy},   {"stencil", bench_stencil},     {"histogram", bench_histogram},
      {"matmul", bench_matmul}, {"nbody", bench_nbody},         {"mandelbrot", bench_mandel},
      {"reduce", bench_reduce}, {"array_sum", bench_array_sum}, {"tiny", bench_tiny}};
  /* BENCH_ONLY=name[,name...]: only those workloads (profiling one) */
  const char *only = getenv("BENCH_ONLY");
  Result r[sizeof all / sizeof *all];
  int n = 0;
  pool_start(ncores);
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (!only || !*only || strstr(only, all[i].name)) r[n++] = all[i].run(m, cpu, scale);
  pool_stop();
  if (n) print_table(r, n, ncores);
  if (!only || !*only || strstr(only, "gemm")) {
    sgemm_fn sgemm = openblas(ncores);
    if (!sgemm) fprintf(stderr, "bench_cpu: no libopenblas.so.0: the OpenBLAS column is empty\n");
    MatmulRow mr[2] = {bench_matmul_exact(m, cpu, 512, sgemm),
                       bench_matmul_exact(m, cpu, 1024, sgemm)};
    print_matmul(mr, 2, ncores);
  }
  if (!only || !*only || strstr(only, "sort")) bench_array_sort(cpu, scale);
  if (!only || !*only || strstr(only, "tiled_hist")) bench_tiled_hist(cpu, scale, ncores);
  if (!only || !*only || strstr(only, "libm"))
    bench_libm(m, fast_module, cpu, (int64_t)scale << 22, REPS);
  kern_module_free(m);
  kern_module_free(fast_module);
  kern_shutdown();
  return csv ? write_csv(csv, r, n, ncores) : 0;
}
