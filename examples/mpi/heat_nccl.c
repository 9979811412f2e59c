/* heat_nccl: the heat solver of heat.c on the GPUs of one process, with NCCL
 * between them instead of MPI.
 *
 *   ./heat_nccl --rows 8192 --cols 8192 --steps 1000          # every GPU
 *   ./heat_nccl --gpus 1 --rows 1027 --cols 515 --verify       # one GPU, checked
 *
 * One process drives G GPUs; GPU g owns the g-th band of rows, as rank g of
 * heat.c would. A communicator of G ranks (ncclCommInitAll: one rank per
 * GPU, no MPI needed; with one GPU it has one rank) carries the halo rows
 * (ncclSend/ncclRecv) and the residual (ncclAllReduce with ncclMax).
 *
 * The point of NCCL: its calls are queued on a CUDA stream like kern's
 * launches. Each GPU's NCCL work goes to kern's current stream of that device
 * (kern_device_get_stream + kern_stream_cuda_handle), on device pointers
 * (kern_array_data), so a launch, the exchange after it and the launch after
 * that run in order on the GPU without the host waiting for anything: the
 * host only waits when it reads the residual. The same calls could be
 * recorded into a kern graph (docs/distributed.md).
 *
 * The result is the same bits as heat.c's on any number of ranks or GPUs.
 * Without a GPU it prints why and exits with 77 (the usual "skipped"). */
#include <nccl.h>
#include <time.h>

#include "heat.h"

static void heat_abort(void) { exit(1); }

#define NCCL_CHECK(call)                                                                           \
  do {                                                                                             \
    ncclResult_t r_ = (call);                                                                      \
    if (r_ != ncclSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                         \
              ncclGetErrorString(r_));                                                             \
      heat_abort();                                                                                \
    }                                                                                              \
  } while (0)

/* One GPU's part of the domain: what a rank of heat.c holds. */
typedef struct {
  kern_device *dev;
  cudaStream_t stream; /* kern's current stream of dev: kern's and NCCL's work, in order */
  ncclComm_t comm;     /* this GPU's rank in the communicator */
  int64_t first, rows; /* its band of rows */
  heat_grid g[2];
  kern_array *change, *max_change; /* [1]: this band's residual, the global one */
} part;

/* The GPUs to use: the first `want` (0: all); the count, 0 when there is none. */
static int find_gpus(int want, part *parts, int max) {
  int have = kern_device_count() - 1; /* device 0 is the CPU */
  if (have == 0) return 0;
  if (want > have || want > max) {
    fprintf(stderr, "--gpus %d: this machine has %d GPUs (this program drives %d at most)\n", want,
            have, max);
    exit(2);
  }
  int n = want > 0 ? want : have < max ? have : max;
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "cuda:%d", i);
    parts[i].dev = kern_device_get(name);
    CHECK_PTR(parts[i].dev);
  }
  return n;
}

/* The communicator: rank i on GPU i, all in this process. */
static void init_nccl(part *p, int n) {
  ncclComm_t comms[64];
  int ordinals[64];
  for (int i = 0; i < n; i++) {
    kern_device_info info;
    CHECK(kern_device_info_get(p[i].dev, &info));
    ordinals[i] = info.ordinal; /* cuda:N is CUDA's device N, as NCCL counts them */
  }
  NCCL_CHECK(ncclCommInitAll(comms, n, ordinals));
  for (int i = 0; i < n; i++) {
    p[i].comm = comms[i];
    p[i].stream = (cudaStream_t)kern_stream_cuda_handle(kern_device_get_stream(p[i].dev));
  }
}

/* Each band's halo rows from its neighbours, queued on the streams: one NCCL
 * group, so the sends and receives of all GPUs pair up without deadlock.
 * Rank i sends its first row up and its last row down, and receives its
 * halos from the same neighbours. */
static void exchange_halos(part *p, int n, int cur, int64_t cols) {
  NCCL_CHECK(ncclGroupStart());
  for (int i = 0; i < n; i++) {
    heat_grid *g = &p[i].g[cur];
    if (i > 0) {
      NCCL_CHECK(ncclSend(kern_array_data(g->first), (size_t)cols, ncclFloat, i - 1, p[i].comm,
                          p[i].stream));
      NCCL_CHECK(ncclRecv(kern_array_data(g->halo_top), (size_t)cols, ncclFloat, i - 1, p[i].comm,
                          p[i].stream));
    }
    if (i < n - 1) {
      NCCL_CHECK(ncclSend(kern_array_data(g->last), (size_t)cols, ncclFloat, i + 1, p[i].comm,
                          p[i].stream));
      NCCL_CHECK(ncclRecv(kern_array_data(g->halo_down), (size_t)cols, ncclFloat, i + 1, p[i].comm,
                          p[i].stream));
    }
  }
  NCCL_CHECK(ncclGroupEnd());
}

/* max |after - before| over the grid: a residual launch per GPU, then an
 * all-reduce of the one-element kern arrays on kern's streams. Reading the
 * result waits for GPU 0's stream, which is the only wait of a step. */
static float global_residual(kern_kernel *residual, part *p, int n, int cur, int64_t cols) {
  float zero = 0.0f, global;
  for (int i = 0; i < n; i++) {
    CHECK(kern_array_fill(p[i].change, &zero));
    CHECK(KERN_LAUNCH(residual, p[i].dev, KERN_DIM2(p[i].rows, cols), p[i].g[1 - cur].all,
                      p[i].g[cur].all, p[i].change));
  }
  NCCL_CHECK(ncclGroupStart());
  for (int i = 0; i < n; i++)
    NCCL_CHECK(ncclAllReduce(kern_array_data(p[i].change), kern_array_data(p[i].max_change), 1,
                             ncclFloat, ncclMax, p[i].comm, p[i].stream));
  NCCL_CHECK(ncclGroupEnd());
  CHECK(kern_array_read(p[0].max_change, &global, sizeof global));
  return global;
}

int main(int argc, char **argv) {
  heat_options o;
  if (!heat_parse(argc, argv, &o)) return 2;
  CHECK(kern_init());
  part p[64] = {0};
  int n = find_gpus(o.gpus, p, 64);
  if (n == 0) {
    kern_device_get("cuda"); /* fails, with the reason */
    printf("heat_nccl: skipped: no GPU: %s\n", kern_last_error());
    return 77;
  }
  if (!heat_set_ranks(&o, n)) return 2;
  kern_module *mod = heat_module();
  kern_kernel *jacobi = kern_module_kernel(mod, "jacobi");
  kern_kernel *residual = kern_module_kernel(mod, "residual");
  CHECK_PTR(jacobi);
  CHECK_PTR(residual);

  for (int i = 0; i < n; i++) {
    heat_band(o.rows, n, i, &p[i].first, &p[i].rows);
    p[i].g[0] = heat_grid_new(p[i].dev, p[i].rows, o.cols);
    p[i].g[1] = heat_grid_new(p[i].dev, p[i].rows, o.cols);
    heat_grid_init(&p[i].g[0], p[i].first, p[i].rows, &o);
    p[i].change = kern_array_new(p[i].dev, KERN_FLOAT32, 1, (int64_t[]){1});
    p[i].max_change = kern_array_new(p[i].dev, KERN_FLOAT32, 1, (int64_t[]){1});
    CHECK_PTR(p[i].change);
    CHECK_PTR(p[i].max_change);
  }
  init_nccl(p, n);
  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));

  /* Before the clock starts: compile the module on each GPU (the first launch
   * on a device does it) and let NCCL connect the GPUs (its first exchange
   * and all-reduce do). Both only repeat what the first step does: the
   * halos get the same rows, g[1] is overwritten. */
  exchange_halos(p, n, 0, o.cols);
  for (int i = 0; i < n; i++)
    CHECK(KERN_LAUNCH(jacobi, p[i].dev, KERN_DIM2(p[i].rows, o.cols), p[i].g[0].all, p[i].g[1].all,
                      (int)p[i].first, (int)o.rows));
  global_residual(residual, p, n, 1, o.cols);

  /* The iterations: everything below is queued, nothing waits but the residual. */
  for (int i = 0; i < n; i++) CHECK(kern_device_synchronize(p[i].dev));
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int cur = 0, done = 0;
  float res = 0.0f;
  while (done < o.steps) {
    exchange_halos(p, n, cur, o.cols);
    for (int i = 0; i < n; i++)
      CHECK(KERN_LAUNCH(jacobi, p[i].dev, KERN_DIM2(p[i].rows, o.cols), p[i].g[cur].all,
                        p[i].g[1 - cur].all, (int)p[i].first, (int)o.rows));
    cur = 1 - cur;
    done++;
    if (heat_check_now(&o, done)) {
      res = global_residual(residual, p, n, cur, o.cols);
      if (res < o.tol) break;
    }
  }
  for (int i = 0; i < n; i++) CHECK(kern_device_synchronize(p[i].dev));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double elapsed = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

  /* The result: each band read back into its place in the grid. */
  float *grid = malloc((size_t)(o.rows * o.cols) * sizeof *grid);
  CHECK_PTR(grid);
  for (int i = 0; i < n; i++)
    CHECK(kern_array_read(p[i].g[cur].own, grid + p[i].first * o.cols,
                          (size_t)(p[i].rows * o.cols) * sizeof *grid));
  printf("heat_nccl: %d GPU%s (%s%s), NCCL %d, %" PRId64 " x %" PRId64 " grid\n", n,
         n > 1 ? "s" : "", kern_device_name(p[0].dev), n > 1 ? "..." : "", version, o.rows, o.cols);
  heat_print_result(done, res, grid, &o);
  printf("time: %.3f s, %.3f ms per step, %.1f Mcells/s\n", elapsed, 1e3 * elapsed / done,
         (double)o.rows * o.cols * done / elapsed / 1e6);
  int status = 0;
  if (o.out && !heat_write(o.out, grid, &o)) status = 1;
  if (o.verify && !heat_verify(grid, done, res, &o)) status = 1;

  free(grid);
  for (int i = 0; i < n; i++) {
    NCCL_CHECK(ncclCommDestroy(p[i].comm));
    heat_grid_free(&p[i].g[0]);
    heat_grid_free(&p[i].g[1]);
    kern_array_free(p[i].change);
    kern_array_free(p[i].max_change);
  }
  kern_module_free(mod);
  kern_shutdown();
  return status;
}
