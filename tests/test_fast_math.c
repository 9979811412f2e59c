/* test_fast_math.c: kern_module_set_fast_math, a module's opt-out of the
 * same-bits promise: a*b+c fused on the CPU (-ffp-contract=fast) and through
 * NVRTC (--use_fast_math), KN_FAST_MATH defined, cached apart from the exact
 * build, refused once the module is compiled. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "front.h"
#include "kern.h"
#include "nvrtc.h"
#include "toolchain.h"

static const char src[] = "kernel void fma3(float[] a, float[] b, float[] c, float[] out) {\n"
                          "  int i = tid();\n"
                          "  out[i] = a[i] * b[i] + c[i];\n"
                          "}\n";

/* a*b = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 (a tie, to even): unfused,
 * a*b + c is 0; fused, 2^-24. */
static float run(bool fast) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_device *cpu = kern_device_get("cpu");
  kern_module *m = kern_module_from_source("fma3.kern", src);
  cr_assert(m, "%s", kern_last_error());
  cr_assert_eq(kern_module_set_fast_math(m, fast), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_module_fast_math(m), fast);
  int64_t n = 1;
  float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f), out = -1;
  kern_array *aa = kern_array_wrap(&a, cpu, KERN_FLOAT32, 1, &n, NULL),
             *ac = kern_array_wrap(&c, cpu, KERN_FLOAT32, 1, &n, NULL),
             *ao = kern_array_wrap(&out, cpu, KERN_FLOAT32, 1, &n, NULL);
  kern_arg args[] = {kern_arg_array(aa), kern_arg_array(aa), kern_arg_array(ac),
                     kern_arg_array(ao)};
  cr_assert_eq(kern_launch(kern_module_kernel(m, "fma3"), cpu, KERN_DIM1(1), 4, args), KERN_OK,
               "%s", kern_last_error());
  /* compiled now: switching is refused, setting the same value is not */
  cr_expect_eq(kern_module_set_fast_math(m, !fast), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "before its first launch"), "%s", kern_last_error());
  cr_expect_eq(kern_module_set_fast_math(m, fast), KERN_OK);
  kern_array_free(aa), kern_array_free(ac), kern_array_free(ao);
  kern_module_free(m);
  return out;
}

Test(fast_math, cpu_exact_by_default_fused_when_asked) {
  cr_expect_eq(run(false), 0.0f, "the exact build rounds a*b before adding");
  float fast = run(true);
  /* every x86-64 CPU kern targets with -march=native here has FMA; one without
   * rounds twice even under -ffp-contract=fast */
  if (fast == 0.0f) cr_skip_test("this CPU has no FMA instruction: contraction not visible");
  cr_expect_eq(fast, 0x1p-24f, "the fast-math build fuses a*b+c");
  cr_expect_eq(run(false), 0.0f, "the exact build again: its own cache entry");
}

Test(fast_math, null_module) {
  cr_expect_eq(kern_module_set_fast_math(NULL, true), KERN_ERR_INVALID_ARGUMENT);
  cr_expect_not(kern_module_fast_math(NULL));
}

Test(fast_math, emit_defines_kn_fast_math_and_nvrtc_fuses) {
  FrontResult r = front_compile("fma3.kern", src, sizeof src - 1);
  cr_assert(r.ok);
  EmitOptions exact = {.line_directives = false}, fast = {.fast_math = true};
  char *c0 = emit_program(r.prog, EMIT_CUDA, &exact), *c1 = emit_program(r.prog, EMIT_CUDA, &fast);
  cr_expect_null(strstr(c0, "#define KN_FAST_MATH"));
  char *def = strstr(c1, "#define KN_FAST_MATH 1");
  cr_expect(def && def < strstr(c1, "kern_builtins.h"), "defined before the stdlib");
  const char *why;
  if (tc_nvrtc_load(&why)) {
    char *p0 = NULL, *p1 = NULL;
    size_t len;
    bool ptx;
    cr_assert_eq(tc_nvrtc_compile(c0, "fma3.kern", 90, false, 0, &p0, &len, &ptx), KERN_OK);
    cr_assert_eq(tc_nvrtc_compile(c1, "fma3.kern", 90, false, TC_NVRTC_FAST_MATH, &p1, &len, &ptx),
                 KERN_OK);
    cr_expect_null(strstr(p0, "fma.rn"), "the exact build keeps a*b+c unfused");
    cr_expect(strstr(p1, "fma.rn.ftz.f32"), "the fast-math build fuses it (and flushes denormals)");
    free(p0), free(p1);
  } else {
    cr_log_warn("NVRTC not available (%s): its half of the check skipped", why);
  }
  free(c0), free(c1);
  front_free(r.prog);
}
