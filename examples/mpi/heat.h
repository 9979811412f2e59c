/* heat.h: what the two distributed heat solvers share. heat.c runs the solver
 * over MPI ranks, heat_nccl.c over the GPUs of one process with NCCL; both
 * include this file for the problem itself: its options, the initial
 * temperatures, how the rows are split, the grids a part of the domain lives
 * in, the serial C reference every run can be checked against, and the line
 * of results that must be the same bits for every split.
 *
 * A program including it defines heat_abort(), which ends the run (all ranks
 * of it) after a CHECK of example.h printed why. */
#ifndef HEAT_H
#define HEAT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

static void heat_abort(void);
#define EXAMPLE_FAIL() heat_abort()
#include "../example.h" /* CHECK, CHECK_PTR */

/* ---- options ------------------------------------------------------------------------------ */

typedef struct {
  int64_t rows, cols;    /* the global grid */
  int64_t rows_per_rank; /* > 0: weak scaling, rows = rows_per_rank * ranks */
  int steps;             /* at most this many Jacobi steps */
  int check_every;       /* the residual is computed every check_every steps, and after the last */
  double tol;            /* stop once the residual is below tol (0: run every step) */
  const char *device;    /* "auto", "cpu", "cuda:N" */
  const char *halo; /* heat.c: "auto", "direct" (MPI on the arrays), "staged" (via host rows) */
  int gpus;         /* heat_nccl.c: how many GPUs (0: all) */
  const char *out;  /* write the final grid here: raw float32, row-major */
  bool verify;      /* compare with the serial C reference, bit for bit */
} heat_options;

static const char heat_usage[] =
    "options: --rows M | --rows-per-rank R, --cols N, --steps S, --check-every K, --tol T,\n"
    "         --device auto|cpu|cuda:N, --halo auto|direct|staged, --gpus G, --out FILE, --verify\n";

/* Parses --name value pairs; false (and a message) on anything else. */
static bool heat_parse(int argc, char **argv, heat_options *o) {
  *o = (heat_options){.rows = 1024,
                      .cols = 1024,
                      .steps = 1000,
                      .check_every = 10,
                      .device = "auto",
                      .halo = "auto"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verify")) {
      o->verify = true;
      continue;
    }
    if (!v || strncmp(a, "--", 2) != 0) {
      fprintf(stderr, "bad argument '%s'\n%s", a, heat_usage);
      return false;
    }
    i++;
    if (!strcmp(a, "--rows"))
      o->rows = strtoll(v, NULL, 10);
    else if (!strcmp(a, "--rows-per-rank"))
      o->rows_per_rank = strtoll(v, NULL, 10);
    else if (!strcmp(a, "--cols"))
      o->cols = strtoll(v, NULL, 10);
    else if (!strcmp(a, "--steps"))
      o->steps = atoi(v);
    else if (!strcmp(a, "--check-every"))
      o->check_every = atoi(v);
    else if (!strcmp(a, "--tol"))
      o->tol = atof(v);
    else if (!strcmp(a, "--device"))
      o->device = v;
    else if (!strcmp(a, "--halo"))
      o->halo = v;
    else if (!strcmp(a, "--gpus"))
      o->gpus = atoi(v);
    else if (!strcmp(a, "--out"))
      o->out = v;
    else {
      fprintf(stderr, "unknown option '%s'\n%s", a, heat_usage);
      return false;
    }
  }
  if (o->cols < 3 || o->steps < 1 || o->check_every < 1) {
    fprintf(stderr, "need --cols >= 3, --steps >= 1, --check-every >= 1\n");
    return false;
  }
  return true;
}

/* Once the number of ranks is known: the global row count, which every rank
 * must have at least one of. */
static bool heat_set_ranks(heat_options *o, int ranks) {
  if (o->rows_per_rank > 0) o->rows = o->rows_per_rank * ranks;
  if (o->rows < 3 || o->rows < ranks || o->rows > INT32_MAX) {
    fprintf(stderr, "need 3 <= --rows < 2^31, and a row per rank at least (%d ranks)\n", ranks);
    return false;
  }
  return true;
}

/* Is the residual computed after `done` steps? */
static bool heat_check_now(const heat_options *o, int done) {
  return done % o->check_every == 0 || done == o->steps;
}

/* ---- the problem -------------------------------------------------------------------------- */

/* The temperature at the start: a hot top edge, a warm left edge, cold right
 * and bottom edges (the edges stay fixed), and a deterministic pseudo-random
 * field inside, so that every cell takes part from the first step. */
static float heat_initial(int64_t row, int64_t col, int64_t rows, int64_t cols) {
  if (row == 0) return 100.0f;
  if (col == 0) return 25.0f;
  if (row == rows - 1 || col == cols - 1) return 0.0f;
  uint32_t h = (uint32_t)row * 73856093u ^ (uint32_t)col * 19349663u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)(h % 1000) / 100.0f;
}

/* Rank r of n owns rows [*first, *first + *count): as even as can be, the
 * first rows % n ranks one row more. */
static void heat_band(int64_t rows, int n, int r, int64_t *first, int64_t *count) {
  int64_t base = rows / n, extra = rows % n;
  *count = base + (r < extra);
  *first = r * base + (r < extra ? r : extra);
}

/* heat.kern: where the build saw it, else examples/mpi/heat.kern under the
 * current directory (a build directory taken to another machine, run from the
 * source tree's root). */
static kern_module *heat_module(void) {
  const char *path = access(HEAT_KERN_PATH, R_OK) == 0 ? HEAT_KERN_PATH : "examples/mpi/heat.kern";
  kern_module *m = kern_module_load(path);
  CHECK_PTR(m);
  return m;
}

/* ---- a band of the grid in kern arrays ---------------------------------------------------- */

/* One of the two grids a part of the domain swaps between: its band of rows
 * with a halo row above and below, and views of the rows the halo exchange
 * reads and writes (views share the grid's memory). */
typedef struct {
  kern_array *all;       /* [rows + 2, cols]: halo, the band, halo */
  kern_array *own;       /* rows 1 .. rows: the band itself */
  kern_array *halo_top;  /* row 0: a copy of the last row of the band above */
  kern_array *first;     /* row 1: what the band above needs */
  kern_array *last;      /* row rows: what the band below needs */
  kern_array *halo_down; /* row rows + 1: a copy of the first row of the band below */
} heat_grid;

static kern_array *heat_rows(kern_array *all, int64_t row, int64_t count, int64_t cols) {
  kern_array *v = kern_array_view(all, 2, (int64_t[]){row, 0}, (int64_t[]){count, cols});
  CHECK_PTR(v);
  return v;
}

/* A zeroed grid for `rows` rows of the band on dev. */
static heat_grid heat_grid_new(kern_device *dev, int64_t rows, int64_t cols) {
  heat_grid g;
  g.all = kern_array_new(dev, KERN_FLOAT32, 2, (int64_t[]){rows + 2, cols});
  CHECK_PTR(g.all);
  g.own = heat_rows(g.all, 1, rows, cols);
  g.halo_top = heat_rows(g.all, 0, 1, cols);
  g.first = heat_rows(g.all, 1, 1, cols);
  g.last = heat_rows(g.all, rows, 1, cols);
  g.halo_down = heat_rows(g.all, rows + 1, 1, cols);
  return g;
}

static void heat_grid_free(heat_grid *g) {
  kern_array *parts[] = {g->own, g->halo_top, g->first, g->last, g->halo_down, g->all};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) kern_array_free(parts[i]);
}

/* Writes the initial temperatures of rows [first, first + rows) into the band. */
static void heat_grid_init(heat_grid *g, int64_t first, int64_t rows, const heat_options *o) {
  float *band = malloc((size_t)(rows * o->cols) * sizeof *band);
  CHECK_PTR(band);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < o->cols; j++)
      band[i * o->cols + j] = heat_initial(first + i, j, o->rows, o->cols);
  CHECK(kern_array_write(g->own, band, (size_t)(rows * o->cols) * sizeof *band));
  free(band);
}

/* ---- the serial reference in plain C ---------------------------------------------------------- */

/* The whole solve on one grid, in C, with the operations of heat.kern in the
 * same order: *grid (rows * cols, allocated here) and the last residual. */
static int heat_reference(const heat_options *o, float **grid, float *residual) {
  int64_t m = o->rows, n = o->cols;
  float *a = malloc((size_t)(m * n) * sizeof *a), *b = malloc((size_t)(m * n) * sizeof *b);
  if (!a || !b) return free(a), free(b), -1;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) a[i * n + j] = heat_initial(i, j, m, n);
  int done = 0;
  while (done < o->steps) {
    float change = 0.0f;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        const float *c = &a[i * n + j];
        float v = (i == 0 || i == m - 1 || j == 0 || j == n - 1)
                      ? c[0]
                      : 0.25f * (c[-n] + c[n] + c[-1] + c[1]);
        b[i * n + j] = v;
        float d = v > c[0] ? v - c[0] : c[0] - v;
        change = d > change ? d : change;
      }
    float *t = a;
    a = b;
    b = t;
    done++;
    if (heat_check_now(o, done)) {
      *residual = change;
      if (change < o->tol) break;
    }
  }
  free(b);
  *grid = a;
  return done;
}

/* ---- results ---------------------------------------------------------------------------- */

/* FNV-1a, 64 bits, of the grid's bytes: equal grids, equal hashes. */
static uint64_t heat_hash(const float *grid, size_t count) {
  const unsigned char *p = (const unsigned char *)grid;
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < count * sizeof *grid; i++) h = (h ^ p[i]) * 0x100000001b3u;
  return h;
}

/* The line that must not change with the number of ranks or the device: the
 * residual in hexadecimal (every bit of it) and the grid's hash. */
static void heat_print_result(int done, float residual, const float *grid, const heat_options *o) {
  printf("result: %d steps, residual %a (%.9g), grid %" PRId64 " x %" PRId64 " fnv1a %016" PRIx64
         "\n",
         done, residual, residual, o->rows, o->cols, heat_hash(grid, (size_t)(o->rows * o->cols)));
}

/* The final grid, as raw float32 in row-major order; false on an error. */
static bool heat_write(const char *path, const float *grid, const heat_options *o) {
  FILE *f = fopen(path, "wb");
  size_t count = (size_t)(o->rows * o->cols);
  bool ok = f && fwrite(grid, sizeof *grid, count, f) == count;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "cannot write %s\n", path);
  return ok;
}

/* --verify: the run's grid and residual against the serial C solve; true
 * when every bit is equal (and says so), else the first difference. */
static bool heat_verify(const float *grid, int done, float residual, const heat_options *o) {
  float *ref, ref_residual = 0.0f;
  int ref_done = heat_reference(o, &ref, &ref_residual);
  if (ref_done < 0) {
    fprintf(stderr, "verify: out of memory\n");
    return false;
  }
  bool ok = ref_done == done && memcmp(&ref_residual, &residual, sizeof residual) == 0;
  int64_t n = o->rows * o->cols, k = 0;
  while (k < n && memcmp(&ref[k], &grid[k], sizeof *grid) == 0) k++;
  if (ok && k == n)
    printf("verify: bit-identical to the serial C reference\n");
  else if (k < n)
    printf("verify: FAILED: cell (%" PRId64 ", %" PRId64 ") is %a, the reference %a\n", k / o->cols,
           k % o->cols, grid[k], ref[k]);
  else
    printf("verify: FAILED: %d steps, residual %a; the reference %d steps, residual %a\n", done,
           residual, ref_done, ref_residual);
  free(ref);
  return ok && k == n;
}

#endif
