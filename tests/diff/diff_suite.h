/* diff_suite.h: the fixture of both differential suites (test_diff.c on the
 * CPU, test_gpu_diff.c on cuda:0): a private cache directory made before
 * kern_init and removed after kern_shutdown.
 *
 * Requires: Criterion and diffrun.c. Produces: diff_setup and diff_teardown
 * for TestSuite(.init, .fini). Breaks: a setup that cannot make the cache
 * directory fails the test instead of touching the user's cache.
 */
#ifndef KERN_DIFF_SUITE_H
#define KERN_DIFF_SUITE_H

#include <criterion/criterion.h>

#include "diffrun.h"

static void diff_setup(void) {
  cr_assert_not_null(diff_cache_make(), "cannot create a private cache directory");
  cr_assert_eq(kern_init(), KERN_OK);
}

static void diff_teardown(void) {
  kern_shutdown();
  diff_cache_remove();
}

#endif
