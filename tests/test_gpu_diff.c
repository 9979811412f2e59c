/* test_gpu_diff.c: the random programs of test_diff on cuda:0 against the CPU.
 *
 * Requires: tests/diff (progen, diffrun), a CUDA device (skipped, saying so,
 * without one). Produces: for diff_count() seeds (DIFF_BATCH programs to a
 * module), the programs run on cuda:0 and on the CPU (-O3) with the same
 * inputs; results must have the same bits (NaNs compare as NaNs: their bits
 * are not defined across devices). A failure prints the seed, the program and
 * the first differences; `progen SEED` prints the program again.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "diff_suite.h"

enum { MAX_REPORTS = 3 };

TestSuite(gpu_diff, .init = diff_setup, .fini = diff_teardown, .timeout = 900);

static void report(int *failed, uint64_t seed, const char *what, const char *detail) {
  if ((*failed)++ >= MAX_REPORTS) {
    cr_log_error("seed %llu: %s (program not shown)\n%s", (unsigned long long)seed, what, detail);
    return;
  }
  char *src = diff_program(seed);
  cr_log_error("seed %llu: %s\n%s\nreproduce with: progen %llu > case.kern\n%s",
               (unsigned long long)seed, what, detail, (unsigned long long)seed, src ? src : "");
  free(src);
}

/* Programs seeds[0 .. n) on both devices; returns how many failed. */
static int check(const uint64_t *seeds, int n, kern_device *gpu, kern_device *cpu) {
  char err[8192] = "", why[4096];
  DiffResult g = {0}, c = {0};
  int failed = 0;
  if (!diff_run(seeds, n, gpu, &g, err, sizeof err) ||
      !diff_run(seeds, n, cpu, &c, err, sizeof err)) {
    for (int j = 0; n > 1 && j < n; j++)
      failed += check(&seeds[j], 1, gpu, cpu); /* which program? */
    if (!failed)
      report(&failed, seeds[0], n > 1 ? "its batch of programs does not run" : "does not run", err);
  }
  for (int j = 0; !err[0] && j < n; j++)
    if (!diff_same(&g, &c, j, why, sizeof why))
      report(&failed, seeds[j], "cuda:0 and cpu differ", why);
  diff_free(&g);
  diff_free(&c);
  return failed;
}

Test(gpu_diff, cuda_matches_cpu) {
  kern_device *gpu = kern_device_get("cuda:0"), *cpu = kern_device_get("cpu");
  if (!gpu) {
    diff_cache_remove(); /* a skipped test does not reach .fini */
    cr_skip_test("no CUDA device (%s): GPU differential test skipped", kern_last_error());
  }
  int count = diff_count(), failed = 0;
  for (int k = 0; k < count; k += DIFF_BATCH) {
    uint64_t seeds[DIFF_BATCH];
    int n = 0;
    for (; n < DIFF_BATCH && k + n < count; n++) seeds[n] = diff_seed(k + n);
    failed += check(seeds, n, gpu, cpu);
  }
  cr_log_info("%d programs on cuda:0 and cpu, %d failed", count, failed);
  cr_expect_eq(failed, 0, "%d of %d programs fail on cuda:0 or differ from cpu", failed, count);
}
