/* test_gpu_libm.c: the transcendental builtins give the CPU's bits on cuda:0.
 *
 * Every function of tests/support/libm_cases.h, in float32, float64 and on
 * vec4, runs as a kern kernel on the "cpu" device and on cuda:0 over 2^18
 * inputs (special values, a sweep over the bit patterns, the main range,
 * magnitudes 2^-40..2^40, and so huge arguments of sin, cos and tan); every
 * output must be the same bits, NaNs included. test_libm.c measures the CPU's
 * results against long double. Skips, saying so, without a GPU.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

#include "libm_cases.h"

#define LM_N (1 << 18)

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU libm suite skipped", kern_last_error());
  return gpu;
}

/* Runs `name` on both devices; returns the number of differing outputs and
 * reports the first. */
static int64_t lm_compare(kern_module *m, kern_device *cpu, kern_device *gpu, const char *name,
                          kern_dtype t, int64_t n, const void *x, const void *y) {
  size_t es = t == KERN_FLOAT32 ? 4 : t == KERN_FLOAT64 ? 8 : 16;
  char *a = malloc((size_t)n * es), *b = malloc((size_t)n * es);
  lm_run(m, cpu, name, t, n, x, y, a);
  lm_run(m, gpu, name, t, n, x, y, b);
  int64_t diff = 0;
  size_t w = t == KERN_FLOAT64 ? 8 : 4;
  for (size_t i = 0; i < (size_t)n * es / w; i++) {
    if (!memcmp(a + i * w, b + i * w, w)) continue;
    if (!diff++) {
      uint64_t ca = 0, cb = 0, in = 0;
      memcpy(&ca, a + i * w, w), memcpy(&cb, b + i * w, w), memcpy(&in, (const char *)x + i * w, w);
      cr_log_error("%s: element %zu (input %016llx): cpu %016llx, gpu %016llx", name, i,
                   (unsigned long long)in, (unsigned long long)ca, (unsigned long long)cb);
    }
  }
  free(a), free(b);
  return diff;
}

static void lm_check_type(int f32) {
  kern_device *gpu = gpu_or_skip(), *cpu = kern_device_get("cpu");
  kern_module *m = lm_module();
  cr_assert(m, "%s", kern_last_error());
  double *x = malloc(LM_N * 8), *y = malloc(LM_N * 8);
  float *xf = malloc(LM_N * 4), *yf = malloc(LM_N * 4);
  for (int i = 0; i < LM_NFNS; i++) {
    char name[32];
    lm_inputs(&lm_fns[i], f32, x, y, LM_N);
    for (int j = 0; j < LM_N; j++) xf[j] = (float)x[j], yf[j] = (float)y[j];
    snprintf(name, sizeof name, "%c_%s", f32 ? 'f' : 'd', lm_fns[i].name);
    int64_t d = f32 ? lm_compare(m, cpu, gpu, name, KERN_FLOAT32, LM_N, xf, yf)
                    : lm_compare(m, cpu, gpu, name, KERN_FLOAT64, LM_N, x, y);
    cr_expect_eq(d, 0, "%s: %lld of %d outputs differ between the CPU and cuda:0", name,
                 (long long)d, LM_N);
    if (f32) {
      snprintf(name, sizeof name, "v_%s", lm_fns[i].name);
      d = lm_compare(m, cpu, gpu, name, KERN_VEC4, LM_N / 4, xf, yf);
      cr_expect_eq(d, 0, "%s: %lld outputs differ between the CPU and cuda:0", name, (long long)d);
    }
  }
  free(x), free(y), free(xf), free(yf);
  kern_module_free(m);
}

Test(gpu_libm, float32_same_bits_as_cpu, .timeout = 600) { lm_check_type(1); }
Test(gpu_libm, float64_same_bits_as_cpu, .timeout = 600) { lm_check_type(0); }
