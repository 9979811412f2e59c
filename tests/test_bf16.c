/* test_bf16.c: bfloat16, the scalar type and the dtype.
 *
 * The stdlib's conversions (stdlib/kern_builtins.h) against a reference
 * written here from the definition (sign, 8 exponent bits, 7 fraction bits)
 * that finds the nearest value by searching every bfloat16, ties to the even
 * pattern: all 65536 patterns decoded and round-tripped, a dense float32
 * sweep, float64 ties and neighbours, and every integer type. Then the API:
 * the dtype's size and name, arrays made, filled and copied, launches with
 * bfloat16 arrays and by-value arguments (kern_arg_of_bfloat16, KERN_LAUNCH),
 * and the dtype checks of a launch. Run fixtures (tests/kern/run/bfloat16.kern)
 * cover the language on both devices; tests/stdlib/crosscheck_rows.h runs the
 * conversions on a GPU.
 */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kern.h"
#include "kern_builtins.h"
#include "kern_math.h"

/* ===== the reference ====================================================== */

/* The value of a bfloat16 pattern, from the format's definition. */
static long double ref_value(uint16_t h) {
  int e = (h >> 7) & 0xff, m = h & 0x7f;
  long double mag = e == 0     ? ldexpl(m, -133)
                    : e == 255 ? (m ? NAN : INFINITY)
                               : ldexpl(128 + m, e - 134);
  return h & 0x8000 ? -mag : mag;
}

/* The nearest bfloat16 to x (exact in a long double) by binary search over
 * the positive finite patterns, which grow with their value; ties to the even
 * pattern; from (2 - 2^-8) * 2^127 up, infinity. */
static uint16_t ref_nearest(long double x) {
  if (isnan(x)) return 0x7fc0;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  long double a = fabsl(x);
  if (a >= ldexpl(2.0L - ldexpl(1, -8), 127)) return sign | 0x7f80;
  int lo = 0, hi = 0x7f7f;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (ref_value((uint16_t)mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0x7f7f) return sign | 0x7f7f;
  long double d0 = a - ref_value((uint16_t)lo), d1 = ref_value((uint16_t)(lo + 1)) - a;
  int pick = d0 < d1 ? lo : d1 < d0 ? lo + 1 : (lo & 1 ? lo + 1 : lo);
  return sign | (uint16_t)pick;
}

static float f32_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void) { /* xorshift64, not the generator under test */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* ===== stdlib conversions ================================================= */

Test(bf16, every_pattern_decodes_and_round_trips) {
  for (int h = 0; h < 0x10000; h++) {
    kn_bf16 x = {(uint16_t)h};
    long double want = ref_value((uint16_t)h);
    float f = kn_cvt_bf16_f32(x);
    double d = kn_cvt_bf16_f64(x);
    if (isnan(want)) {
      cr_assert(isnan(f) && isnan(d) && !!signbit(f) == !!(h & 0x8000) &&
                    !!signbit(d) == !!(h & 0x8000),
                "NaN %04x", h);
      uint64_t db;
      memcpy(&db, &d, 8);
      cr_assert_eq(db >> 45 & 0x7f, (uint64_t)(h & 0x7f), "NaN %04x keeps its payload", h);
      cr_assert_eq(kn_cvt_f32_bf16(f).bits, h | 0x40, "NaN %04x made quiet", h);
      cr_assert_eq(kn_cvt_f64_bf16(d).bits, h | 0x40, "NaN %04x (double)", h);
      continue;
    }
    cr_assert(f == want && d == want && !!signbit(f) == !!signbit(want), "decode %04x", h);
    cr_assert_eq(kn_cvt_f32_bf16(f).bits, h, "round trip %04x", h);
    cr_assert_eq(kn_cvt_f64_bf16(d).bits, h, "round trip %04x (double)", h);
  }
}

/* Every float32 pattern at a stride of 251 (both signs, every exponent,
 * subnormals, infinities and NaNs), and around every bfloat16: the pattern
 * itself, just below and above half a unit, the tie. */
Test(bf16, float32_sweep_against_the_reference) {
  long n = 0;
  for (uint64_t b = 0; b <= 0xffffffffu; b += 251, n++) {
    float f = f32_of((uint32_t)b);
    uint16_t got = kn_cvt_f32_bf16(f).bits;
    uint16_t want =
        isnan(f) ? (uint16_t)((b >> 16 & 0x8000) | 0x7fc0 | (b >> 16 & 0x7f)) : ref_nearest(f);
    cr_assert_eq(got, want, "%08llx -> %04x, want %04x", (unsigned long long)b, got, want);
  }
  static const uint32_t around[] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff};
  for (uint32_t h = 0; h < 0x7f80; h++)
    for (int s = 0; s < 2; s++)
      for (int k = 0; k < 6; k++, n++) {
        uint32_t b = (s ? 0x80000000u : 0) | h << 16 | around[k];
        float f = f32_of(b);
        cr_assert_eq(kn_cvt_f32_bf16(f).bits, ref_nearest(f), "%08x", b);
      }
  cr_assert_gt(n, 17000000);
}

/* float64 rounds once: just above a tie goes up (through float32 it would
 * become the tie, and go to even). */
Test(bf16, float64_ties_neighbours_and_random_values) {
  for (int h = 0; h < 0x7f7f; h++) {
    double a = (double)ref_value((uint16_t)h), b = (double)ref_value((uint16_t)(h + 1));
    double mid = (a + b) / 2;
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
    cr_assert_eq(kn_cvt_f64_bf16(mid).bits, even, "tie after %04x", h);
    cr_assert_eq(kn_cvt_f64_bf16(-mid).bits, 0x8000 | even);
    cr_assert_eq(kn_cvt_f64_bf16(nextafter(mid, INFINITY)).bits, h + 1, "above tie %04x", h);
    cr_assert_eq(kn_cvt_f64_bf16(nextafter(mid, 0)).bits, h, "below tie %04x", h);
  }
  for (int i = 0; i < 300000; i++) {
    double x = ldexp((double)(int64_t)next64() / 0x1p63, (int)(next64() % 300) - 150);
    cr_assert_eq(kn_cvt_f64_bf16(x).bits, ref_nearest(x), "%a", x);
  }
  double big[] = {0x1.ffp127, 0x1.fefffffffffffp127,  1e300,     DBL_MAX, INFINITY,
                  0x1p-134,   0x1.0000000000001p-134, 0x1p-1074, 1e-50};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
    cr_assert_eq(kn_cvt_f64_bf16(big[i]).bits, ref_nearest(big[i]), "%a", big[i]);
    cr_assert_eq(kn_cvt_f64_bf16(-big[i]).bits, ref_nearest(-big[i]), "-%a", big[i]);
  }
  cr_assert_eq(kn_cvt_f64_bf16(-NAN).bits & 0xffc0, 0xffc0);
}

/* Integers round once from the integer; bfloat16 to an integer truncates and
 * saturates, NaN gives 0. */
#define INT_CASE(T, C, LO, HI)                                                                     \
  do {                                                                                             \
    T x = (T)next64();                                                                             \
    if (i % 3 == 0) x = (T)(x >> (next64() % (8 * sizeof(T))));                                    \
    cr_assert_eq(kn_cvt_##C##_bf16(x).bits, ref_nearest((long double)x), #C " %lld",               \
                 (long long)x);                                                                    \
    kn_bf16 h = {(uint16_t)next64()};                                                              \
    long double v = ref_value(h.bits), t = truncl(v);                                              \
    long double want = isnan(v) ? 0 : t < (LO) ? (LO) : t > (HI) ? (HI) : t;                       \
    cr_assert_eq((long double)kn_cvt_bf16_##C(h), want, "%04x -> " #C, h.bits);                    \
  } while (0)

Test(bf16, integers_both_ways) {
  for (int i = 0; i < 200000; i++) {
    INT_CASE(int8_t, i8, INT8_MIN, INT8_MAX);
    INT_CASE(int16_t, i16, INT16_MIN, INT16_MAX);
    INT_CASE(int32_t, i32, INT32_MIN, INT32_MAX);
    INT_CASE(int64_t, i64, (long double)INT64_MIN, (long double)INT64_MAX);
    INT_CASE(uint8_t, u8, 0, UINT8_MAX);
    INT_CASE(uint16_t, u16, 0, UINT16_MAX);
    INT_CASE(uint32_t, u32, 0, UINT32_MAX);
    INT_CASE(uint64_t, u64, 0, (long double)UINT64_MAX);
  }
  /* above a tie that float32 (or float64) would make: 2^24 + 2^16 + 1, 2^60 + 2^52 + 1 */
  cr_assert_eq(kn_cvt_i32_bf16(16842753).bits, 0x4b81);
  cr_assert_eq(kn_cvt_i32_bf16(16842752).bits, 0x4b80);
  cr_assert_eq(kn_cvt_i64_bf16(1157425104234217473ll).bits, 0x5d81);
  cr_assert_eq(kn_cvt_u64_bf16(UINT64_MAX).bits, 0x5f80);
  cr_assert_eq(kn_cvt_i64_bf16(INT64_MIN).bits, 0xdf00);
  cr_assert_eq(kn_cvt_i8_bf16(-128).bits, 0xc300);
}

Test(bf16, bit_casts) {
  cr_assert_eq(kn_bitcast_bfloat16_u16(0x3f80).bits, 0x3f80);
  cr_assert_eq(kn_bitcast_bfloat16_i16(-1).bits, 0xffff);
  kn_bf16 h = {0xc020};
  cr_assert_eq(kn_bitcast_uint16_bf16(h), 0xc020);
  cr_assert_eq(kn_bitcast_int16_bf16(h), (int16_t)0xc020);
}

/* ===== the dtype and the API ============================================== */

static void setup(void) {
  th_default_cache_dir("bf16");
  cr_assert_eq(kern_init(), KERN_OK);
}
TestSuite(bf16_api, .init = setup, .timeout = 300);

Test(bf16_api, dtype_size_align_name) {
  cr_assert_eq(kern_dtype_size(KERN_BFLOAT16), 2);
  cr_assert_eq(kern_dtype_align(KERN_BFLOAT16), 2);
  cr_assert_str_eq(kern_dtype_name(KERN_BFLOAT16), "bfloat16");
  cr_assert_neq(KERN_BFLOAT16, KERN_FLOAT16);
  cr_assert_eq(sizeof(kern_bfloat16), 2);
}

Test(bf16_api, arrays_fill_copy_and_read) {
  kern_device *cpu = kern_device_get("cpu");
  int64_t shape[2] = {3, 4};
  kern_array *a = kern_array_new(cpu, KERN_BFLOAT16, 2, shape);
  kern_array *b = kern_array_empty(cpu, KERN_BFLOAT16, 2, shape);
  cr_assert(a && b, "%s", kern_last_error());
  cr_assert_eq(kern_array_dtype(a), KERN_BFLOAT16);
  cr_assert_eq(kern_array_nbytes(a), 24);
  cr_assert_eq(kern_array_stride(a, 0), 8);
  kern_bfloat16 one = {0x3f80}, got[12];
  cr_assert_eq(kern_array_fill(a, &one), KERN_OK);
  cr_assert_eq(kern_array_copy(b, a), KERN_OK);
  cr_assert_eq(kern_array_read(b, got, sizeof got), KERN_OK);
  for (int i = 0; i < 12; i++) cr_assert_eq(got[i].bits, 0x3f80);
  int64_t one_dim = 12;
  kern_array *f16 = kern_array_new(cpu, KERN_FLOAT16, 1, &one_dim);
  kern_array *b1 = kern_array_new(cpu, KERN_BFLOAT16, 1, &one_dim);
  cr_assert_eq(kern_array_copy(f16, b1), KERN_ERR_INVALID_ARGUMENT, "float16 <- bfloat16");
  kern_array_free(f16);
  kern_array_free(b1);
  kern_array_free(a);
  kern_array_free(b);
}

static const char *src = "kernel void axpb(bfloat16[] x, bfloat16 a, float b, float[] out) {\n"
                         "    int i = tid();\n"
                         "    x[i] = a * x[i] + bfloat16(b);\n"
                         "    out[i] = x[i];\n"
                         "}\n"
                         "kernel void half(float16[] h) { }\n";

Test(bf16_api, launch_with_arrays_and_values) {
  kern_module *m = kern_module_from_source("bf16", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "axpb"), *h = kern_module_kernel(m, "half");
  kern_device *cpu = kern_device_get("cpu");
  int64_t n = 3;
  kern_array *x = kern_array_new(cpu, KERN_BFLOAT16, 1, &n);
  kern_array *out = kern_array_new(cpu, KERN_FLOAT32, 1, &n);
  kern_bfloat16 in[3] = {{0x3f80}, {0x4040}, {0xbf80}}; /* 1, 3, -1 */
  cr_assert_eq(kern_array_write(x, in, sizeof in), KERN_OK);
  kern_bfloat16 two = {0x4000};
  /* 2x + 0.1: 0.1 becomes 0.10009765625, each result rounds to bfloat16 */
  cr_assert_eq(KERN_LAUNCH(k, cpu, KERN_DIM1(3), x, two, 0.1f, out), KERN_OK, "%s",
               kern_last_error());
  kern_bfloat16 got[3];
  float f[3];
  kern_array_read(x, got, sizeof got);
  kern_array_read(out, f, sizeof f);
  uint16_t want[3] = {0x4006, 0x40c3, 0xbff3}; /* 2.09375, 6.09375, -1.8984375 */
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(got[i].bits, want[i], "x[%d] = %04x", i, got[i].bits);
    cr_assert_eq(f[i], (float)ref_value(want[i]));
  }
  kern_arg args[4] = {kern_arg_array(x), kern_arg_of_bfloat16(two), kern_arg_f32(0.0f),
                      kern_arg_array(out)};
  cr_assert_eq(kern_launch(k, cpu, KERN_DIM1(3), 4, args), KERN_OK, "%s", kern_last_error());
  /* the dtype must match: float16 for bfloat16 is refused, both ways */
  kern_array *f16 = kern_array_new(cpu, KERN_FLOAT16, 1, &n);
  args[0] = kern_arg_array(f16);
  cr_assert_eq(kern_launch(k, cpu, KERN_DIM1(3), 4, args), KERN_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(kern_last_error(), "bfloat16"), "%s", kern_last_error());
  args[0] = kern_arg_array(x);
  args[1] = kern_arg_of_float16((kern_float16){0x4000});
  cr_assert_eq(kern_launch(k, cpu, KERN_DIM1(3), 4, args), KERN_ERR_INVALID_ARGUMENT);
  kern_arg ha = kern_arg_array(x);
  cr_assert_eq(kern_launch(h, cpu, KERN_DIM1(1), 1, &ha), KERN_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(kern_last_error(), "float16"), "%s", kern_last_error());
  kern_array_free(f16);
  kern_array_free(x);
  kern_array_free(out);
  kern_module_free(m);
}
