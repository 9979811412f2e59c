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
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
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
 * nearest, ties away from zero; infinities and NaNs cut to their top 10
 * fraction bits, so a NaN with only low ones becomes an infinity). */
static inline float th_mm_tf32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = ((u & 0x7f800000u) == 0x7f800000u ? u : u + 0x1000u) & 0xffffe000u;
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

/* c = x * I (x m x k) or I * x (x k x m) in FAST mode on d, I the k x k
 * identity: each element of x rounded, when it and its row (column) are
 * finite. */
static inline void th_mm_times_identity(kern_device *d, const float *x, int m, int k, bool x_is_b,
                                        float *c) {
  float *id = calloc((size_t)k * k, 4);
  for (int i = 0; i < k; i++) id[i * k + i] = 1.0f;
  kern_array *ax = x_is_b ? th_mm_array(d, KERN_FLOAT32, k, m, x)
                          : th_mm_array(d, KERN_FLOAT32, m, k, x),
             *ai = th_mm_array(d, KERN_FLOAT32, k, k, id),
             *ac = x_is_b ? th_mm_array(d, KERN_FLOAT32, k, m, NULL)
                          : th_mm_array(d, KERN_FLOAT32, m, k, NULL);
  kern_status st = x_is_b ? kern_array_matmul(ai, ax, ac, KERN_MATMUL_FAST)
                          : kern_array_matmul(ax, ai, ac, KERN_MATMUL_FAST);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(ac, c, 4 * (size_t)m * k), KERN_OK, "%s", kern_last_error());
  kern_array_free(ax), kern_array_free(ai), kern_array_free(ac);
  free(id);
}

/* c = x * I or I * x on d (x m x k or k x m of TF32 ties and values just
 * off them; I the identity) gives each element of x rounded to nearest,
 * ties away from zero. */
static inline void th_mm_tf32_ties(kern_device *d, int m, int k, bool x_is_b) {
  float *x = malloc(4 * m * k), *c = malloc(4 * m * k);
  for (int i = 0; i < m * k; i++) x[i] = th_mm_tf32_tie(i);
  th_mm_times_identity(d, x, m, k, x_is_b, c);
  for (int i = 0; i < m * k; i++) {
    float want = th_mm_tf32(x[i]);
    if (memcmp(&c[i], &want, 4)) {
      cr_expect(false, "%s %dx%d element %d: %a rounded to %a on %s, want %a", x_is_b ? "b" : "a",
                m, k, i, (double)x[i], (double)c[i], kern_device_name(d), (double)want);
      break;
    }
  }
  free(x), free(c);
}

/* The bits of a special float32 input: NaNs (CUDA's own, 0x7fffffff, ones
 * whose rounding could carry into the sign, and 0x7f800001, which TF32 cuts
 * to an infinity), infinities, the largest finite values (TF32 rounds them
 * to infinity), subnormals. */
static const uint32_t th_mm_specials[] = {0x7fffffffu, 0xffffffffu, 0x7ffff000u, 0x7fc00000u,
                                          0x7f800001u, 0x7f800000u, 0xff800000u, 0x7f7fffffu,
                                          0xff7fffffu, 0x00000001u, 0x80001000u, 0x00001fffu};

static inline float th_mm_bits_f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* What a row of a (or a column of b) holding special s at place p gives
 * times the identity, at place q: s rounded at p; at every other place
 * s rounded times 0 added to x[q] rounded: NaN when that is not finite. */
static inline float th_mm_special_want(float s, float x, bool same) {
  float r = th_mm_tf32(s);
  if (same) return r;
  return isfinite(r) ? th_mm_tf32(x) : NAN;
}

/* x * I and I * x with one special per row of a (column of b): NaN where
 * float arithmetic on the rounded inputs gives NaN, the same bits elsewhere. */
static inline void th_mm_tf32_specials(kern_device *d, bool x_is_b) {
  enum { M = 48, K = 32, NS = sizeof th_mm_specials / sizeof th_mm_specials[0] };
  float *x = malloc(4 * M * K), *c = malloc(4 * M * K);
  for (int i = 0; i < M * K; i++) x[i] = th_mm_tf32_tie(i);
  for (int r = 0; r < M; r++)
    x[x_is_b ? (r % K) * M + r : r * K + r % K] = th_mm_bits_f(th_mm_specials[r % NS]);
  th_mm_times_identity(d, x, M, K, x_is_b, c);
  for (int r = 0; r < M; r++)
    for (int q = 0; q < K; q++) {
      int at = x_is_b ? q * M + r : r * K + q;
      float s = th_mm_bits_f(th_mm_specials[r % NS]),
            want = th_mm_special_want(s, x[at], q == r % K);
      bool ok = isnan(want) ? isnan(c[at]) : !memcmp(&c[at], &want, 4);
      cr_expect(ok, "%s: special %08x, place %d: %a on %s, want %a", x_is_b ? "b" : "a",
                th_mm_specials[r % NS], q, (double)c[at], kern_device_name(d), (double)want);
      if (!ok) break; /* the next row's special */
    }
  free(x), free(c);
}

#endif
