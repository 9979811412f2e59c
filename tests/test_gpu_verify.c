/* test_gpu_verify.c: on cuda:0, verify_fp reports a non-finite store as on the
 * CPU, and atomics on 8- and 16-bit elements (CAS loops on the 32-bit word
 * that holds them) lose no update when a million threads hit the four bytes
 * of one word. Run it on a GPU machine: ctest -R test_gpu_verify. Skips, saying why, without a GPU. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "kern.h"

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu)
    cr_skip_test("no CUDA device (%s): GPU verify_fp and atomics skipped", kern_last_error());
  return gpu;
}

static const char *const store_src = "kernel void scale(float[] x, double[] y) {\n"
                                     "    int i = tid();\n"
                                     "    y[i] = double(x[i]) / double(x[i] - 3.0);\n"
                                     "}\n";

static kern_status store(kern_device *dev, bool verify, const float *x, int64_t n) {
  kern_module *m = kern_module_from_source("scale.kern", store_src);
  cr_assert(m, "%s", kern_last_error());
  cr_assert_eq(kern_module_set_verify_fp(m, verify), KERN_OK);
  kern_array *a = kern_array_new(dev, KERN_FLOAT32, 1, &n);
  kern_array *b = kern_array_new(dev, KERN_FLOAT64, 1, &n);
  cr_assert(a && b, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(a, x, (size_t)n * sizeof *x), KERN_OK);
  kern_arg args[2] = {kern_arg_array(a), kern_arg_array(b)};
  kern_status st = kern_launch(kern_module_kernel(m, "scale"), dev, KERN_DIM1(n), 2, args);
  if (!st) st = kern_device_synchronize(dev);
  kern_array_free(a);
  kern_array_free(b);
  kern_module_free(m);
  return st;
}

Test(gpu_verify, a_nonfinite_store_fails_the_launch_as_on_the_cpu) {
  kern_device *gpu = gpu_or_skip();
  float x[8] = {0, 1, 2, 4, 5, 6, 7, 3}; /* x[7] - 3 = 0: 3/0 is +inf */
  cr_expect_eq(store(gpu, false, x, 8), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(store(gpu, true, x, 8), KERN_ERR_BOUNDS);
  cr_expect(strstr(kern_last_error(), "non-finite value stored in kernel 'scale' at scale.kern:3: "
                                      "+inf at index [7] (parameter 'y', thread 7)"),
            "%s", kern_last_error());
  x[7] = 8;
  cr_expect_eq(store(gpu, true, x, 8), KERN_OK, "%s", kern_last_error());
  /* the device goes on working after a failed check */
  cr_expect_eq(kern_device_synchronize(gpu), KERN_OK, "%s", kern_last_error());
}

static const char *const atomic_src =
    "kernel void hit(int8[] b, uint16[] w, float16[] h, bfloat16[] g) {\n"
    "    int t = tid();\n"
    "    atomic_add(&b[t & 3], 1);\n"
    "    atomic_add(&w[t & 1], 1);\n"
    "    if (t < 2048) { atomic_add(&h[t & 1], 1.0); }\n"
    "    if (t < 512) { atomic_add(&g[t & 1], 1.0); }\n"
    "    atomic_max(&h[2], float16(float(t & 1023)));\n"
    "    atomic_min(&g[2], bfloat16(-float(t & 127)));\n"
    "}\n";

Test(gpu_verify, small_type_atomics_lose_no_update) {
  kern_device *gpu = gpu_or_skip();
  kern_module *m = kern_module_from_source("hit.kern", atomic_src);
  cr_assert(m, "%s", kern_last_error());
  int64_t n4 = 4, n2 = 2, n3 = 3, threads = (1 << 20) + 148;
  kern_array *b = kern_array_new(gpu, KERN_INT8, 1, &n4);
  kern_array *w = kern_array_new(gpu, KERN_UINT16, 1, &n2);
  kern_array *h = kern_array_new(gpu, KERN_FLOAT16, 1, &n3);
  kern_array *g = kern_array_new(gpu, KERN_BFLOAT16, 1, &n3);
  cr_assert(b && w && h && g, "%s", kern_last_error());
  kern_arg args[4] = {kern_arg_array(b), kern_arg_array(w), kern_arg_array(h), kern_arg_array(g)};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "hit"), gpu, KERN_DIM1(threads), 4, args), KERN_OK,
               "%s", kern_last_error());
  int8_t bv[4];
  uint16_t wv[2], hv[3], gv[3];
  cr_assert_eq(kern_array_read(b, bv, sizeof bv), KERN_OK);
  cr_assert_eq(kern_array_read(w, wv, sizeof wv), KERN_OK);
  cr_assert_eq(kern_array_read(h, hv, sizeof hv), KERN_OK);
  cr_assert_eq(kern_array_read(g, gv, sizeof gv), KERN_OK);
  for (int k = 0; k < 4; k++)
    cr_expect_eq(bv[k], 37, "b[%d] = %d: 2^18 + 37 adds wrap to 37", k, bv[k]);
  for (int k = 0; k < 2; k++)
    cr_expect_eq(wv[k], 74, "w[%d] = %u: 2^19 + 74 adds wrap to 74", k, wv[k]);
  cr_expect_eq(hv[0], 0x6400, "h[0] = 0x%04x, not 1024", hv[0]);
  cr_expect_eq(hv[1], 0x6400, "h[1] = 0x%04x, not 1024", hv[1]);
  cr_expect_eq(hv[2], 0x63fe, "h[2] = 0x%04x, not 1023", hv[2]);
  cr_expect_eq(gv[0], 0x4380, "g[0] = 0x%04x, not 256", gv[0]);
  cr_expect_eq(gv[1], 0x4380, "g[1] = 0x%04x, not 256", gv[1]);
  cr_expect_eq(gv[2], 0xc2fe, "g[2] = 0x%04x, not -127", gv[2]);
  kern_array_free(b);
  kern_array_free(w);
  kern_array_free(h);
  kern_array_free(g);
  kern_module_free(m);
}
