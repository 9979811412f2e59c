/* test_gpu.c: the GPU suite. Every run fixture on cuda:0, checked against its
 * expected values and against the CPU backend on the same inputs (integers
 * exactly, floats within a few ulps). Skips, saying why, without a GPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU suite skipped", kern_last_error());
  return gpu;
}

Test(gpu, fixtures_match_expectations_and_cpu, .timeout = 900) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  char **files;
  int n = th_list(KERN_TESTS_DIR "/kern/run", ".kern", &files), failed = 0;
  for (int i = 0; i < n; i++) {
    long double *g[FX_MAX_ARGS] = {0}, *c[FX_MAX_ARGS] = {0};
    char *report = fx_run_report(files[i], gpu, g), diff[8192] = "";
    char *creport = fx_run_report(files[i], cpu, c);
    Fixture f;
    bool same = fx_parse(&f, files[i]) && fx_compare(&f, g, c, 4 * 1.2e-7, diff, sizeof diff);
    fx_free(&f);
    if (report || !same) {
      failed++;
      cr_log_error("%s%s%s", report ? report : "", same ? "" : "cuda:0 differs from cpu:\n", diff);
    }
    for (int j = 0; j < FX_MAX_ARGS; j++) {
      free(g[j]);
      free(c[j]);
    }
    free(report);
    free(creport);
    free(files[i]);
  }
  free(files);
  cr_log_info("%d run fixtures on cuda:0, %d failed", n, failed);
  cr_expect_eq(failed, 0, "%d of %d fixtures failed on cuda:0", failed, n);
}
