/* matmul_inputs.h: what test_matmul and test_gpu_matmul both build their
 * cases from (Criterion suites only: th_mm_array asserts).
 *
 * th_mm_input: values of widely different magnitudes, so the order of an
 * accumulation shows in the result; th_mm_array: a 2-D array of r x c on d
 * (written from data when not NULL); th_mm_to_f16: float16 bits of x, exact
 * for 0 and for multiples of 1/64 below 2^15, the values the FAST cases use;
 * th_mm_fast_*: the FAST cases' input kinds, their values and 16-bit bits.
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

/* The FAST mode's inputs: float32 (rounded to TF32), float16 or bfloat16. */
typedef enum { TH_MM_TF32, TH_MM_F16, TH_MM_BF16 } th_mm_fast;

static inline const char *th_mm_fast_name(th_mm_fast f) {
  return f == TH_MM_TF32 ? "TF32" : f == TH_MM_F16 ? "float16" : "bfloat16";
}

static inline kern_dtype th_mm_fast_dtype(th_mm_fast f) {
  return f == TH_MM_TF32 ? KERN_FLOAT32 : f == TH_MM_F16 ? KERN_FLOAT16 : KERN_BFLOAT16;
}

/* Element i of a (b: is_b): for the 16-bit kinds, multiples of 1/64 (1/32)
 * of at most 7 significant bits, exact in float16 and bfloat16 alike. */
static inline float th_mm_fast_value(th_mm_fast f, int i, bool is_b) {
  if (f == TH_MM_TF32)
    return is_b ? (float)th_mm_input(i + 7) * 0.9999f : (float)th_mm_input(i) * 1.0001f;
  return is_b ? (float)((i * 53) % 127 - 63) / 32.0f : (float)((i * 37) % 129 - 64) / 64.0f;
}

/* float32 rounded to TF32 as the FAST mode rounds (10 fraction bits, to
 * nearest, ties away from zero; infinities and NaNs are not inputs here). */
static inline float th_mm_tf32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = (u + 0x1000u) & 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

/* Element i of an input made of TF32 ties (halfway between two TF32 values),
 * of both signs and several binades, and of values just off a tie. */
static inline float th_mm_tf32_tie(int i) {
  float m = 1.0f + (float)(2 * (i % 1000) + 1) * 0x1p-11f;  /* a tie */
  if (i % 5 == 3) m += (i % 2 ? 1 : -1) * 0x1p-23f;         /* just off one */
  return (i % 3 ? m : -m) * (float)(1 << (i % 7)) * 0.125f; /* exact scaling */
}

/* The 16-bit bits of such a value (0 for TF32, which stores the float). */
static inline uint16_t th_mm_fast_bits(th_mm_fast f, float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return f == TH_MM_F16 ? th_mm_to_f16(x) : f == TH_MM_BF16 ? (uint16_t)(u >> 16) : 0;
}

#endif
