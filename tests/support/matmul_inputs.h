/* matmul_inputs.h: what test_matmul and test_gpu_matmul both build their
 * cases from (Criterion suites only: th_mm_array asserts).
 *
 * th_mm_input: values of widely different magnitudes, so the order of an
 * accumulation shows in the result; th_mm_array: a 2-D array of r x c on d
 * (written from data when not NULL); th_mm_to_f16: float16 bits of x, exact
 * for 0 and for multiples of 1/64 below 2^15, the values the FAST cases use.
 */
#ifndef KERN_TEST_MATMUL_INPUTS_H
#define KERN_TEST_MATMUL_INPUTS_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "kern.h"

static inline double th_mm_input(int i) {
  static const double scale[4] = {0.001, 0.37, 13.1, 1009.0};
  return (double)((i * 7919) % 1013 - 506) * scale[i % 4] + 0.1;
}

static inline kern_array *th_mm_array(kern_device *d, kern_dtype t, int64_t r, int64_t c,
                                      const void *data) {
  int64_t shape[2] = {r, c};
  kern_array *a = kern_array_new(d, t, 2, shape);
  cr_assert(a, "%s", kern_last_error());
  if (data) cr_assert_eq(kern_array_write(a, data, kern_array_nbytes(a)), KERN_OK);
  return a;
}

static inline uint16_t th_mm_to_f16(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if (x == 0) return (uint16_t)(u >> 16);
  return (uint16_t)((u >> 31) << 15 | (((u >> 23) & 0xff) - 127 + 15) << 10 | ((u >> 13) & 0x3ff));
}

#endif
