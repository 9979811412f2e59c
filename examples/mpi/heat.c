/* heat: 2-D heat diffusion (Jacobi iterations) on a grid split over MPI ranks.
 *
 *   mpirun -np 4 ./heat --rows 4096 --cols 4096 --steps 1000 --verify
 *
 * kern runs the kernels inside each rank; MPI moves data between ranks. What
 * main() does, in order (docs/distributed.md walks through it):
 *   1. one device per rank: the k-th rank on a node takes cuda:<k % GPUs>, or
 *      the CPU when the node has no GPU;
 *   2. each rank owns a band of rows, plus a halo row above and below;
 *   3. every step: exchange halo rows with the neighbour ranks (MPI_Sendrecv
 *      of the arrays' memory), then one launch of heat.kern's jacobi;
 *   4. every few steps: the residual (the largest change of a cell), a kern
 *      launch per rank, then MPI_Allreduce over the ranks;
 *   5. at the end rank 0 gathers the grid and prints its hash; --verify
 *      compares it with a serial C solve bit for bit.
 * Every cell is computed with the same operations in the same order whatever
 * the number of ranks, and the residual is a maximum (exact in any order), so
 * the result is the same bits on 1 rank or 1000.
 *
 * On GPUs the halo rows travel straight from device memory when the MPI
 * library is CUDA-aware (asked at run time), else through pinned host
 * arrays (--halo direct|staged chooses; staged works on the CPU too). */
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* Open MPI's extensions: MPIX_Query_cuda_support */
#endif
#include <sched.h>
#include <unistd.h>

#include "heat.h"

static void heat_abort(void) { MPI_Abort(MPI_COMM_WORLD, 1); }

/* ---- 1. one device per rank --------------------------------------------------------------- */

/* This rank's index among the ranks on its node, and how many there are:
 * MPI_COMM_TYPE_SHARED groups the ranks that share memory, whatever the
 * launcher (mpirun, srun). */
static int node_rank(int *node_size) {
  MPI_Comm node;
  int rank;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, node_size);
  MPI_Comm_free(&node);
  return rank;
}

/* CPU ranks on one node share its cores. Unless KERN_NUM_THREADS says how
 * many, each rank's thread pool gets the cores the launcher bound it to, or,
 * when it did not bind it, its share of the node's cores. Must run before
 * kern_init, which reads the variable. */
static void share_cores(int node_size) {
  if (getenv("KERN_NUM_THREADS")) return;
  cpu_set_t set;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  long mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : online;
  long threads = mine < online ? mine : online / node_size;
  char text[32];
  snprintf(text, sizeof text, "%ld", threads > 0 ? threads : 1);
  setenv("KERN_NUM_THREADS", text, 1);
}

/* --device auto: cuda:<node rank % GPUs on the node>, else the CPU. */
static kern_device *pick_device(const char *name, int node_rank) {
  char auto_name[32] = "cpu";
  int gpus = kern_device_count() - 1; /* device 0 is the CPU */
  if (gpus > 0) snprintf(auto_name, sizeof auto_name, "cuda:%d", node_rank % gpus);
  kern_device *dev = kern_device_get(strcmp(name, "auto") ? name : auto_name);
  CHECK_PTR(dev);
  return dev;
}

/* ---- 3. the halo exchange ----------------------------------------------------------------- */

/* How halo rows reach MPI. Direct: MPI reads and writes the arrays' memory
 * (kern_array_data): host memory on the CPU, device memory on a GPU, which
 * takes a CUDA-aware MPI. Staged: through rows of host memory, pinned where
 * the CUDA driver allows, copied from and to the grid with kern. --halo auto
 * picks direct on the CPU and with a CUDA-aware MPI, else staged. */
typedef struct {
  bool staged;
  int up, down; /* the neighbour ranks; MPI_PROC_NULL at the top and bottom edges */
  kern_array *send_up, *send_down, *recv_up, *recv_down; /* staged: host rows */
} exchange;

/* Does this MPI library take device pointers? Asked at run time: the same
 * binary may meet a CUDA-aware build of the library on another machine. */
static bool cuda_aware_mpi(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) /* Open MPI */
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA) /* MPICH 4 */
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes;
#else
  return false; /* no way to ask: assume not (--halo direct overrides) */
#endif
}

/* A [1, cols] row of page-locked host memory, which a GPU copies to and from
 * by DMA; pageable memory where there is no GPU (kern refuses the pinned
 * allocator and keeps the default). */
static kern_array *host_row(int64_t cols) {
  kern_device *cpu = kern_device_get("cpu");
  kern_allocator before = kern_device_set_allocator(cpu, KERN_ALLOC_PINNED);
  kern_array *row = kern_array_new(cpu, KERN_FLOAT32, 2, (int64_t[]){1, cols});
  kern_device_set_allocator(cpu, before);
  CHECK_PTR(row);
  return row;
}

static exchange exchange_new(kern_device *dev, const char *halo, int rank, int ranks,
                             int64_t cols) {
  exchange ex = {.up = rank > 0 ? rank - 1 : MPI_PROC_NULL,
                 .down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL};
  if (!strcmp(halo, "auto"))
    ex.staged = kern_device_is_cuda(dev) && !cuda_aware_mpi();
  else if (!strcmp(halo, "staged") || !strcmp(halo, "direct"))
    ex.staged = !strcmp(halo, "staged");
  else {
    fprintf(stderr, "--halo %s: expected auto, direct or staged\n", halo);
    heat_abort();
  }
  if (ex.staged) {
    ex.send_up = host_row(cols);
    ex.send_down = host_row(cols);
    ex.recv_up = host_row(cols);
    ex.recv_down = host_row(cols);
  }
  return ex;
}

/* How the halo rows travel, for the report. */
static const char *exchange_name(const exchange *ex, kern_device *dev) {
  if (ex->staged)
    return kern_array_memory_kind(ex->send_up) == KERN_MEM_PINNED_HOST
               ? "staged through pinned host rows"
               : "staged through pageable host rows";
  return kern_device_is_cuda(dev) ? "direct from device memory (CUDA-aware MPI)"
                                  : "direct from host memory";
}

static void exchange_free(exchange *ex) {
  kern_array_free(ex->send_up);
  kern_array_free(ex->send_down);
  kern_array_free(ex->recv_up);
  kern_array_free(ex->recv_down);
}

/* Sends one row to rank `to` while receiving one from rank `from`, straight
 * from and into the arrays' memory. */
static void sendrecv_row(kern_array *send, int to, kern_array *recv, int from, int tag) {
  int cols = (int)kern_array_shape(send, 1);
  MPI_Sendrecv(kern_array_data(send), cols, MPI_FLOAT, to, tag, kern_array_data(recv), cols,
               MPI_FLOAT, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Fills g's halo rows with the neighbours' edge rows: my first row goes up
 * while the row below's first row comes into my bottom halo, then the same
 * downwards. At the domain's edges MPI_PROC_NULL makes a transfer a no-op.
 * MPI reads and writes the memory behind kern's back, so kern's work on it
 * must be done: the caller has called kern_device_synchronize. */
static void exchange_halos(exchange *ex, heat_grid *g) {
  if (!ex->staged) {
    sendrecv_row(g->first, ex->up, g->halo_down, ex->down, 0);
    sendrecv_row(g->last, ex->down, g->halo_top, ex->up, 1);
    return;
  }
  /* Between device and host memory: these copies return when the data is there. */
  CHECK(kern_array_copy(ex->send_up, g->first));
  CHECK(kern_array_copy(ex->send_down, g->last));
  sendrecv_row(ex->send_up, ex->up, ex->recv_down, ex->down, 0);
  sendrecv_row(ex->send_down, ex->down, ex->recv_up, ex->up, 1);
  if (ex->up != MPI_PROC_NULL) CHECK(kern_array_copy(g->halo_top, ex->recv_up));
  if (ex->down != MPI_PROC_NULL) CHECK(kern_array_copy(g->halo_down, ex->recv_down));
}

/* ---- 4. the global residual --------------------------------------------------------------- */

/* max |after - before| over the whole grid: each rank's maximum from a kern
 * launch, then the maximum over the ranks. */
static float global_residual(kern_kernel *residual, kern_device *dev, heat_grid *before,
                             heat_grid *after, kern_array *change, int64_t rows, int64_t cols) {
  float local = 0.0f, global;
  CHECK(kern_array_fill(change, &local));
  CHECK(KERN_LAUNCH(residual, dev, KERN_DIM2(rows, cols), before->all, after->all, change));
  CHECK(kern_array_read(change, &local, sizeof local)); /* waits for the launch */
  MPI_Allreduce(&local, &global, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

/* ---- 5. the result ------------------------------------------------------------------------ */

/* The whole grid on rank 0 (NULL elsewhere): each rank's band, in rank order.
 * Counts are in rows, so grids of more than 2^31 cells gather too. */
static float *gather_grid(heat_grid *g, int64_t rows, const heat_options *o, int rank, int ranks) {
  size_t bytes = (size_t)(rows * o->cols) * sizeof(float);
  float *band = malloc(bytes), *grid = NULL;
  CHECK_PTR(band);
  CHECK(kern_array_read(g->own, band, bytes));
  int *counts = NULL, *starts = NULL;
  if (rank == 0) {
    grid = malloc((size_t)(o->rows * o->cols) * sizeof *grid);
    counts = malloc((size_t)ranks * sizeof *counts);
    starts = malloc((size_t)ranks * sizeof *starts);
    CHECK_PTR(grid);
    CHECK_PTR(counts);
    CHECK_PTR(starts);
    for (int r = 0; r < ranks; r++) {
      int64_t first, count;
      heat_band(o->rows, ranks, r, &first, &count);
      counts[r] = (int)count;
      starts[r] = (int)first;
    }
  }
  MPI_Datatype row;
  MPI_Type_contiguous((int)o->cols, MPI_FLOAT, &row);
  MPI_Type_commit(&row);
  MPI_Gatherv(band, (int)rows, row, grid, counts, starts, row, 0, MPI_COMM_WORLD);
  MPI_Type_free(&row);
  free(band);
  free(counts);
  free(starts);
  return grid;
}

/* ---- the solver ------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks, node_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int on_node = node_rank(&node_size);
  heat_options o;
  if (!heat_parse(argc, argv, &o) || !heat_set_ranks(&o, ranks)) {
    MPI_Finalize(); /* every rank saw the same arguments and stops here */
    return 2;
  }

  /* 1. kern inside the rank: its device, its kernels. */
  share_cores(node_size);
  CHECK(kern_init());
  kern_device *dev = pick_device(o.device, on_node);
  kern_module *mod = heat_module();
  kern_kernel *jacobi = kern_module_kernel(mod, "jacobi");
  kern_kernel *residual = kern_module_kernel(mod, "residual");
  CHECK_PTR(jacobi);
  CHECK_PTR(residual);

  /* 2. this rank's band: two grids to swap between, the first one initialized. */
  int64_t first, rows;
  heat_band(o.rows, ranks, rank, &first, &rows);
  heat_grid g[2] = {heat_grid_new(dev, rows, o.cols), heat_grid_new(dev, rows, o.cols)};
  heat_grid_init(&g[0], first, rows, &o);
  kern_array *change = kern_array_new(dev, KERN_FLOAT32, 1, (int64_t[]){1});
  CHECK_PTR(change);
  exchange ex = exchange_new(dev, o.halo, rank, ranks, o.cols);

  /* Before the clock starts: compile the module (the first launch on a
   * device does it) and let MPI connect the ranks. Both only repeat what the
   * first step does: the halos get the same rows, g[1] is overwritten. */
  exchange_halos(&ex, &g[0]);
  CHECK(KERN_LAUNCH(jacobi, dev, KERN_DIM2(rows, o.cols), g[0].all, g[1].all, (int)first,
                    (int)o.rows));
  global_residual(residual, dev, &g[0], &g[1], change, rows, o.cols);

  /* 3 and 4: the iterations. */
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime(), in_exchange = 0.0;
  int cur = 0, done = 0;
  float res = 0.0f;
  while (done < o.steps) {
    CHECK(kern_device_synchronize(dev)); /* the last step is done (the CPU: at once) */
    double t = MPI_Wtime();
    exchange_halos(&ex, &g[cur]);
    in_exchange += MPI_Wtime() - t;
    CHECK(KERN_LAUNCH(jacobi, dev, KERN_DIM2(rows, o.cols), g[cur].all, g[1 - cur].all, (int)first,
                      (int)o.rows));
    cur = 1 - cur;
    done++;
    if (heat_check_now(&o, done)) {
      res = global_residual(residual, dev, &g[1 - cur], &g[cur], change, rows, o.cols);
      if (res < o.tol) break; /* every rank has the same residual: all stop together */
    }
  }
  CHECK(kern_device_synchronize(dev));
  double elapsed = MPI_Wtime() - start, slowest_exchange;
  MPI_Reduce(&in_exchange, &slowest_exchange, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  /* 5. the result, on rank 0. */
  float *grid = gather_grid(&g[cur], rows, &o, rank, ranks);
  int status = 0;
  if (rank == 0) {
    printf("heat: %d rank%s, rank 0 on %s, %" PRId64 " x %" PRId64 " grid, halo rows %s\n", ranks,
           ranks > 1 ? "s" : "", kern_device_name(dev), o.rows, o.cols, exchange_name(&ex, dev));
    heat_print_result(done, res, grid, &o);
    printf("time: %.3f s, %.3f ms per step, %.1f Mcells/s, halo exchange %.0f%% (slowest rank)\n",
           elapsed, 1e3 * elapsed / done, (double)o.rows * o.cols * done / elapsed / 1e6,
           100.0 * slowest_exchange / elapsed);
    if (o.out && !heat_write(o.out, grid, &o)) status = 1;
    if (o.verify && !heat_verify(grid, done, res, &o)) status = 1;
  }
  free(grid);
  exchange_free(&ex);
  kern_array_free(change);
  heat_grid_free(&g[0]);
  heat_grid_free(&g[1]);
  kern_module_free(mod);
  kern_shutdown();
  MPI_Finalize();
  return status;
}
