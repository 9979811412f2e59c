/* test_run.c: every run fixture (the .kern files of tests/kern/run) on the CPU device,
 * checked against the expected values written in the fixture. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"

Test(run, every_fixture_on_cpu, .timeout = 600) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *cpu = kern_device_get("cpu");
  char **files;
  int n = th_list(KERN_TESTS_DIR "/kern/run", ".kern", &files), failed = 0;
  cr_assert_gt(n, 0, "no run fixtures found");
  for (int i = 0; i < n; i++) {
    long double *res[FX_MAX_ARGS] = {0};
    char *report = fx_run_report(files[i], cpu, res);
    if (report) {
      failed++;
      cr_log_error("%s", report);
    }
    for (int j = 0; j < FX_MAX_ARGS; j++) free(res[j]);
    free(report);
    free(files[i]);
  }
  free(files);
  cr_log_info("%d run fixtures on cpu, %d failed", n, failed);
  cr_expect_eq(failed, 0, "%d of %d run fixtures failed on cpu", failed, n);
}
