/* test_gpu_diff.c: the random programs of test_diff on cuda:0 against the CPU.
 *
 * Requires: tests/diff (progen, diffrun), a CUDA device (skipped, saying so,
 * without one). Produces: for diff_count() seeds (DIFF_BATCH programs to a
 * module, DIFF_TILED_BATCH tiled ones), the plain programs run on cuda:0 and
 * on the CPU (at the default level) with the same inputs, and the tiled ones
 * on the CPU and on cuda:0 with 32, 256 and 1024 threads per instance
 * (kern_kernel_set_tile_block); results must have the same bits (NaNs
 * compare as NaNs: their bits are not defined across devices), and every
 * check of a tiled program (a reduction or scan against its documented
 * order) must pass on both devices. A failure prints the seed, the program and the first
 * differences; `progen SEED` (`progen --tiled SEED`) prints the program again.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_suite.h"

enum { MAX_REPORTS = 3 };

TestSuite(gpu_diff, .init = diff_setup, .fini = diff_teardown, .timeout = 900);

static void report(int *failed, uint64_t seed, ProgenKind kind, const char *what,
                   const char *detail) {
  const char *cmd = diff_progen_args(kind);
  if ((*failed)++ >= MAX_REPORTS) {
    cr_log_error("%s %llu: %s (program not shown)\n%s", cmd, (unsigned long long)seed, what,
                 detail);
    return;
  }
  char *src = diff_program(seed, kind);
  cr_log_error("seed %llu: %s\n%s\nreproduce with: %s %llu > case.kern\n%s",
               (unsigned long long)seed, what, detail, cmd, (unsigned long long)seed,
               src ? src : "");
  free(src);
}

/* The programs of b on the CPU, then on cuda:0 with each of blocks[0 .. nb) threads per
 * instance (0: the kernels' default); returns how many failed. */
static int check(const DiffBatch *b, const int *blocks, int nb, kern_device *gpu,
                 kern_device *cpu) {
  char err[8192] = "", why[4096], what[96];
  DiffResult c = {0};
  int failed = 0;
  bool ok = diff_run(b, cpu, NULL, &c, err, sizeof err);
  for (int k = 0; ok && k < nb; k++) {
    DiffResult g = {0};
    DiffOptions o = {.tile_block = blocks[k]};
    ok = diff_run(b, gpu, &o, &g, err, sizeof err);
    if (!ok && blocks[k]) { /* say which block size */
      char at[8192];
      snprintf(at, sizeof at, "cuda:0 with %d threads per instance: %s", blocks[k], err);
      snprintf(err, sizeof err, "%s", at);
    }
    if (blocks[k])
      snprintf(what, sizeof what, "cuda:0 (%d threads per instance) and cpu differ", blocks[k]);
    else
      snprintf(what, sizeof what, "cuda:0 and cpu differ");
    for (int j = 0; ok && j < b->n; j++)
      if (!diff_same(&g, &c, j, why, sizeof why)) report(&failed, b->seeds[j], b->kind, what, why);
    diff_free(&g);
  }
  diff_free(&c);
  if (ok) return failed;
  for (int j = 0; b->n > 1 && j < b->n; j++) { /* which program does not run? */
    DiffBatch one = diff_one(b, j);
    failed += check(&one, blocks, nb, gpu, cpu);
  }
  if (!failed)
    report(&failed, b->seeds[0], b->kind,
           b->n > 1 ? "its batch of programs does not run" : "does not run", err);
  return failed;
}

static kern_device *gpu_or_skip(void) {
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) {
    diff_cache_remove(); /* a skipped test does not reach .fini */
    cr_skip_test("no CUDA device (%s): GPU differential test skipped", kern_last_error());
  }
  return gpu;
}

Test(gpu_diff, cuda_matches_cpu) {
  static const int deflt[] = {0};
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  int count = diff_count(PROGEN_PLAIN), failed = 0;
  for (int b = 0; b < diff_nbatches(PROGEN_PLAIN); b++) {
    DiffBatch bt = diff_batch(PROGEN_PLAIN, b);
    failed += check(&bt, deflt, 1, gpu, cpu);
  }
  cr_log_info("%d programs on cuda:0 and cpu, %d failed", count, failed);
  cr_expect_eq(failed, 0, "%d of %d programs fail on cuda:0 or differ from cpu", failed, count);
}

/* Tiled programs: the same bits on the CPU and on the GPU whatever the block size (each
 * module compiled once for each device). */
Test(gpu_diff, tiled_cuda_matches_cpu_over_block_sizes) {
  static const int blocks[] = {32, 256, 1024};
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  int count = diff_count(PROGEN_TILED), failed = 0;
  for (int b = 0; b < diff_nbatches(PROGEN_TILED); b++) {
    DiffBatch bt = diff_batch(PROGEN_TILED, b);
    failed += check(&bt, blocks, 3, gpu, cpu);
  }
  cr_log_info("%d tiled programs on cuda:0 (32, 256 and 1024 threads per instance) and cpu, %d "
              "failed",
              count, failed);
  cr_expect_eq(failed, 0, "%d of %d tiled programs fail on cuda:0 or differ from cpu", failed,
               count);
}
