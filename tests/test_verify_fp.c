/* test_verify_fp.c: kern_module_set_verify_fp on the CPU: off by default, the
 * call order it enforces, KERN_VERIFY_FP, and what a checked launch reports
 * (a struct's double field, a float16, a matrix), next to the same launch
 * unchecked, which stores the non-finite value and succeeds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

static const char *const src =
    "struct Body { int id; vec3 vel; double mass; };\n"
    "kernel void weigh(Body[] b, float16[] h, mat22[] m, float s, int mode) {\n"
    "    int i = tid();\n"
    "    b[i].id = i;\n"
    "    b[i].mass = mode == 1 && i == 2 ? double(s) / 0.0 : 1.0;\n"
    "    h[i] = float16(mode == 2 ? s * 1e6 : 1.0);\n"
    "    m[i] = mat22(1.0, 2.0, 3.0, mode == 3 ? s * 1e38 * 1e38 : 4.0);\n"
    "}\n";

typedef struct Launch {
  kern_module *m;
  kern_array *b, *h, *mat;
} Launch;

static kern_status run(Launch *L, bool verify, float s, int mode) {
  kern_device *cpu = kern_device_get("cpu");
  L->m = kern_module_from_source("weigh.kern", src);
  cr_assert(L->m, "%s", kern_last_error());
  if (verify) cr_assert_eq(kern_module_set_verify_fp(L->m, true), KERN_OK);
  int64_t n = 4;
  L->b = kern_array_new(cpu, kern_module_dtype(L->m, "Body"), 1, &n);
  L->h = kern_array_new(cpu, KERN_FLOAT16, 1, &n);
  L->mat = kern_array_new(cpu, KERN_MAT22, 1, &n);
  cr_assert(L->b && L->h && L->mat, "%s", kern_last_error());
  kern_arg args[5] = {kern_arg_array(L->b), kern_arg_array(L->h), kern_arg_array(L->mat),
                      kern_arg_f32(s), kern_arg_i32(mode)};
  return kern_launch(kern_module_kernel(L->m, "weigh"), cpu, KERN_DIM1(n), 5, args);
}

static void done(Launch *L) {
  kern_array_free(L->b);
  kern_array_free(L->h);
  kern_array_free(L->mat);
  kern_module_free(L->m);
}

Test(verify_fp, off_by_default_and_set_before_the_first_launch) {
  cr_assert_eq(kern_init(), KERN_OK);
  kern_module *m = kern_module_from_source("weigh.kern", src);
  cr_assert(m, "%s", kern_last_error());
  cr_expect_not(kern_module_verify_fp(m));
  cr_expect_eq(kern_module_set_verify_fp(NULL, true), KERN_ERR_INVALID_ARGUMENT);
  cr_expect_not(kern_module_verify_fp(NULL));
  cr_expect_eq(kern_module_set_verify_fp(m, true), KERN_OK);
  cr_expect(kern_module_verify_fp(m));
  cr_expect_eq(kern_module_set_verify_fp(m, false), KERN_OK);
  cr_expect_not(kern_module_verify_fp(m));
  kern_module_free(m);
  Launch L;
  cr_expect_eq(run(&L, true, 1.0f, 0), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_module_set_verify_fp(L.m, false), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "already compiled"), "%s", kern_last_error());
  cr_expect_eq(kern_module_set_verify_fp(L.m, true), KERN_OK, "the same value is fine");
  done(&L);
}

Test(verify_fp, a_nan_in_a_struct_field_names_the_index) {
  cr_assert_eq(kern_init(), KERN_OK);
  Launch L;
  /* b[2].mass = 0/0 (NaN), every other store finite */
  kern_status st = run(&L, true, 0.0f, 1);
  cr_expect_eq(st, KERN_ERR_BOUNDS, "%s", kern_status_name(st));
  cr_expect(strstr(kern_last_error(), "non-finite value stored in kernel 'weigh' at weigh.kern:5: "
                                      "NaN at index [2] (parameter 'b', thread 2)"),
            "%s", kern_last_error());
  done(&L);
  /* unchecked, the same launch succeeds and the NaN is in memory */
  cr_expect_eq(run(&L, false, 0.0f, 1), KERN_OK, "%s", kern_last_error());
  double all[4 * 3]; /* Body: id at 0, vel at 4, mass at 16; 24 bytes */
  cr_assert_eq(kern_array_read(L.b, all, sizeof all), KERN_OK, "%s", kern_last_error());
  cr_expect(isnan(all[2 * 3 + 2]));
  cr_expect_eq(all[1 * 3 + 2], 1.0);
  done(&L);
}

Test(verify_fp, float16_and_matrix_overflows) {
  cr_assert_eq(kern_init(), KERN_OK);
  Launch L;
  /* float16(1e6) is +inf in every thread; thread order decides which reports */
  cr_expect_eq(run(&L, true, 1.0f, 2), KERN_ERR_BOUNDS);
  cr_expect(strstr(kern_last_error(), "weigh.kern:6: +inf at index ["), "%s", kern_last_error());
  cr_expect(strstr(kern_last_error(), "(parameter 'h', thread "), "%s", kern_last_error());
  done(&L);
  /* the matrix's last component is -1e76 in float32: -inf */
  cr_expect_eq(run(&L, true, -1.0f, 3), KERN_ERR_BOUNDS);
  cr_expect(strstr(kern_last_error(), "weigh.kern:7: -inf at index ["), "%s", kern_last_error());
  cr_expect(strstr(kern_last_error(), "(parameter 'm', thread "), "%s", kern_last_error());
  done(&L);
}

Test(verify_fp, the_environment_turns_it_on_for_new_modules) {
  setenv("KERN_VERIFY_FP", "1", 1);
  kern_shutdown();
  cr_assert_eq(kern_init(), KERN_OK);
  kern_module *m = kern_module_from_source("weigh.kern", src);
  cr_assert(m, "%s", kern_last_error());
  cr_expect(kern_module_verify_fp(m));
  kern_module_free(m);
  unsetenv("KERN_VERIFY_FP");
  kern_shutdown();
  cr_assert_eq(kern_init(), KERN_OK);
  m = kern_module_from_source("weigh.kern", src);
  cr_expect_not(kern_module_verify_fp(m));
  kern_module_free(m);
}
