/* pool.c: the CPU thread pool that runs kernel launches.
 *
 * Requires: core.c for the thread count. Produces: rt_pool_run.
 * Breaks: nothing outside; kernels never launch kernels, so a job never waits
 * on another job.
 *
 * Workers start on the first parallel launch and persist. A launch is a job in
 * a FIFO queue; workers claim chunks of the head job with an atomic counter
 * and the launching thread works on its own job too, so a job always finishes
 * even if every worker is busy elsewhere (or, after fork(), absent). A job
 * lives on its launcher's stack: the launcher waits until no worker still
 * references it before returning.
 */
#include "cpu_backend.h"

#include <stdlib.h>
#include <time.h>

/* A launch runs inline on the calling thread when splitting it would cost more
 * than it saves: below ALWAYS_INLINE indices, or when the kernel's measured
 * time per index says the whole launch takes under PARALLEL_MIN_NS; a kernel
 * not measured yet goes by its size (INLINE_BELOW). */
enum {
  ALWAYS_INLINE = 256,
  INLINE_BELOW = 32768,
  PARALLEL_MIN_NS = 40000,
  MIN_CHUNK = 64,
  MAX_WORKERS = 1024
};

typedef struct job {
  rt_range_fn fn;
  const void *args;
  const kn_ctx *ctx;
  int64_t n, chunk;
  _Atomic int64_t next; /* the next unclaimed index */
  int users;            /* workers holding a pointer to it (under mu) */
  bool queued;          /* still in the queue (under mu) */
  struct job *link;
} job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* a job was queued, or stop */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* a job lost its last user */
static job *head, *tail;
static pthread_t threads[MAX_WORKERS];
static int nworkers;
static bool stopping;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* Runs chunks of j until none are left. */
static void drain(job *j) {
  for (;;) {
    int64_t b = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
    if (b >= j->n) return;
    int64_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
    j->fn(j->args, j->ctx, b, e);
  }
}

static void unqueue(job *j) {
  if (!j->queued) return;
  job **pp = &head;
  job *prev = NULL;
  while (*pp != j) prev = *pp, pp = &(*pp)->link;
  *pp = j->link;
  if (tail == j) tail = prev;
  j->queued = false;
}

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (!head && !stopping) pthread_cond_wait(&work_cv, &mu);
    if (stopping) break;
    job *j = head;
    j->users++;
    pthread_mutex_unlock(&mu);
    drain(j);
    pthread_mutex_lock(&mu);
    unqueue(j); /* exhausted: nobody else should pick it up */
    if (--j->users == 0) pthread_cond_broadcast(&done_cv);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* After fork() only the forking thread exists: forget the workers. The child
 * starts new ones on its next parallel launch. */
static void after_fork_child(void) {
  pthread_mutex_init(&mu, NULL);
  pthread_cond_init(&work_cv, NULL);
  pthread_cond_init(&done_cv, NULL);
  head = tail = NULL;
  nworkers = 0;
  stopping = false;
}
static void before_fork(void) { pthread_mutex_lock(&mu); }
static void after_fork_parent(void) { pthread_mutex_unlock(&mu); }
static void fork_init(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

/* Starts the workers (the caller is one of the config's threads). Under mu. */
static void start_workers(void) {
  int want = rt_config_get()->num_threads - 1;
  if (want > MAX_WORKERS) want = MAX_WORKERS;
  while (nworkers < want && pthread_create(&threads[nworkers], NULL, worker, NULL) == 0) nworkers++;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

/* Folds one measurement (CPU ns per index) into the kernel's running estimate. */
static void learn(_Atomic uint32_t *cost, double ns_per_index) {
  double fixed = ns_per_index * 16 + 1;
  uint32_t sample = fixed > 4e9 ? 4000000000u : (uint32_t)fixed,
           old = atomic_load_explicit(cost, memory_order_relaxed);
  atomic_store_explicit(cost, old ? (uint32_t)(((uint64_t)old * 3 + sample) / 4) : sample,
                        memory_order_relaxed);
}

static bool run_inline(int64_t n, int threads, const _Atomic uint32_t *cost) {
  if (n < ALWAYS_INLINE || threads <= 1) return true;
  uint32_t c = cost ? atomic_load_explicit(cost, memory_order_relaxed) : 0;
  return c ? (double)n * c / 16 < PARALLEL_MIN_NS : n < INLINE_BELOW;
}

static void run_parallel(rt_range_fn fn, const void *args, const kn_ctx *ctx, int64_t n,
                         int threads) {
  pthread_once(&fork_once, fork_init);
  int64_t chunk = n / ((int64_t)threads * 4);
  job j = {
      .fn = fn, .args = args, .ctx = ctx, .n = n, .chunk = chunk < MIN_CHUNK ? MIN_CHUNK : chunk};
  atomic_init(&j.next, 0);
  pthread_mutex_lock(&mu);
  if (nworkers == 0) start_workers();
  j.queued = true;
  if (tail)
    tail->link = &j;
  else
    head = &j;
  tail = &j;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&mu);
  drain(&j);
  pthread_mutex_lock(&mu);
  unqueue(&j);
  while (j.users > 0) pthread_cond_wait(&done_cv, &mu);
  pthread_mutex_unlock(&mu);
}

void rt_pool_run(rt_range_fn fn, const void *args, const kn_ctx *ctx, int64_t n,
                 _Atomic uint32_t *cost) {
  int threads = rt_config_get()->num_threads;
  if (n <= 0) return;
  if (n < ALWAYS_INLINE || !cost) {
    if (run_inline(n, threads, cost))
      fn(args, ctx, 0, n);
    else
      run_parallel(fn, args, ctx, n, threads);
    return;
  }
  bool alone = run_inline(n, threads, cost);
  double t0 = now_ns();
  if (alone)
    fn(args, ctx, 0, n);
  else
    run_parallel(fn, args, ctx, n, threads);
  double spent = now_ns() - t0;
  learn(cost, spent * (alone ? 1 : threads) / (double)n);
}

int rt_pool_workers(void) {
  pthread_mutex_lock(&mu);
  int n = nworkers;
  pthread_mutex_unlock(&mu);
  return n;
}

void rt_pool_shutdown(void) {
  pthread_mutex_lock(&mu);
  stopping = true;
  pthread_cond_broadcast(&work_cv);
  int n = nworkers;
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
  pthread_mutex_lock(&mu);
  nworkers = 0;
  stopping = false;
  pthread_mutex_unlock(&mu);
}
