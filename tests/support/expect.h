/* expect.h: Criterion helpers for suites that check int32 arrays and error
 * statuses (test_capture.c, test_gpu_capture.c, test_gpu_faults.c).
 *
 * Requires: Criterion and kern.h. Produces: static helpers (each suite is one
 * translation unit). Breaks: a failed allocation or read fails the test at
 * once; a wrong value or status is reported and the test goes on.
 */
#ifndef KERN_TEST_EXPECT_H
#define KERN_TEST_EXPECT_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

/* n int32 elements on d, each v (0: left as allocated, zeroed). */
static inline kern_array *th_ints(kern_device *d, int64_t n, int32_t v) {
  kern_array *a = kern_array_new(d, KERN_INT32, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  if (v) cr_assert_eq(kern_array_fill(a, &v), KERN_OK, "%s", kern_last_error());
  return a;
}

/* The whole array in host memory (malloc'd). */
static inline int32_t *th_read_ints(const kern_array *a) {
  int64_t n = kern_array_size(a);
  int32_t *h = malloc((size_t)n * sizeof *h);
  cr_assert_not_null(h);
  cr_assert_eq(kern_array_read(a, h, (size_t)n * sizeof *h), KERN_OK, "%s", kern_last_error());
  return h;
}

static inline int32_t th_at(const kern_array *a, int64_t i) {
  int32_t *h = th_read_ints(a), v = h[i];
  free(h);
  return v;
}

/* Every element equals want. */
static inline void th_expect_all(const kern_array *a, int32_t want, const char *what) {
  int64_t n = kern_array_size(a), bad = 0;
  int32_t *h = th_read_ints(a);
  for (int64_t i = 0; i < n; i++) bad += h[i] != want;
  cr_expect_eq(bad, 0, "%s: %lld of %lld elements differ from %d (first is %d)", what,
               (long long)bad, (long long)n, want, h[0]);
  free(h);
}

/* st is want and the thread's message contains needle. */
static inline void th_expect_error(kern_status st, kern_status want, const char *needle) {
  cr_expect_eq(st, want, "got %s, want %s: %s", kern_status_name(st), kern_status_name(want),
               kern_last_error());
  cr_expect(strstr(kern_last_error(), needle), "message lacks \"%s\":\n%s", needle,
            kern_last_error());
}

#endif
