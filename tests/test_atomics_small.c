/* test_atomics_small.c: atomics on 8- and 16-bit integers, float16 and
 * bfloat16 on the CPU with 8 worker threads (more than the cores, so threads
 * are preempted mid-update) and a million launch indices hitting the four bytes
 * of one 32-bit word: no update is lost and no neighbour is clobbered.
 * tests/test_gpu_verify.c runs the same kernel on a GPU. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "kern.h"

static const char *const src =
    "kernel void hit(int8[] b, uint16[] w, float16[] h, bfloat16[] g, ivec2[] iv) {\n"
    "    int t = tid();\n"
    "    atomic_add(&b[t & 3], 1);\n"
    "    atomic_add(&w[t & 1], 1);\n"
    "    if (t < 2048) { atomic_add(&h[t & 1], 1.0); }\n"
    "    if (t < 512) { atomic_add(&g[t & 1], 1.0); }\n"
    "    atomic_max(&h[2], float16(float(t & 1023)));\n"
    "    atomic_min(&g[2], bfloat16(-float(t & 127)));\n"
    "    atomic_or(&iv[0], ivec2(1 << (t & 31), 1 << (t % 7)));\n"
    "}\n";

Test(atomics_small, a_million_updates_of_one_word_on_eight_threads, .timeout = 120) {
  setenv("KERN_NUM_THREADS", "8", 1);
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *cpu = kern_device_get("cpu");
  kern_module *m = kern_module_from_source("hit.kern", src);
  cr_assert(m, "%s", kern_last_error());
  int64_t n4 = 4, n2 = 2, n3 = 3, n1 = 1, threads = (1 << 20) + 148;
  kern_array *b = kern_array_new(cpu, KERN_INT8, 1, &n4);
  kern_array *w = kern_array_new(cpu, KERN_UINT16, 1, &n2);
  kern_array *h = kern_array_new(cpu, KERN_FLOAT16, 1, &n3);
  kern_array *g = kern_array_new(cpu, KERN_BFLOAT16, 1, &n3);
  kern_array *iv = kern_array_new(cpu, KERN_IVEC2, 1, &n1);
  cr_assert(b && w && h && g && iv, "%s", kern_last_error());
  kern_arg args[5] = {kern_arg_array(b), kern_arg_array(w), kern_arg_array(h), kern_arg_array(g),
                      kern_arg_array(iv)};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "hit"), cpu, KERN_DIM1(threads), 5, args), KERN_OK,
               "%s", kern_last_error());
  int8_t bv[4];
  uint16_t wv[2], hv[3], gv[3];
  int32_t ivv[2];
  cr_assert_eq(kern_array_read(b, bv, sizeof bv), KERN_OK);
  cr_assert_eq(kern_array_read(w, wv, sizeof wv), KERN_OK);
  cr_assert_eq(kern_array_read(h, hv, sizeof hv), KERN_OK);
  cr_assert_eq(kern_array_read(g, gv, sizeof gv), KERN_OK);
  cr_assert_eq(kern_array_read(iv, ivv, sizeof ivv), KERN_OK);
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
  cr_expect_eq(ivv[0], -1, "iv.x = %d: every bit set", ivv[0]);
  cr_expect_eq(ivv[1], 127, "iv.y = %d", ivv[1]);
  kern_array_free(b);
  kern_array_free(w);
  kern_array_free(h);
  kern_array_free(g);
  kern_array_free(iv);
  kern_module_free(m);
}
