/* test_launch.c: modules and launches on the CPU with real .kern source:
 * loading errors, kernels and struct dtypes, every class of bad launch,
 * results checked against values computed here, the thread pool under
 * concurrent launches and first-time compiles, access modes, debug mode.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "kern.h"
#include "core.h"
#include "fake_gpu.h"

static const char *saxpy_src = "kernel void saxpy(float[] x, float[] y, float a) {\n"
                               "    int i = tid();\n"
                               "    y[i] = a * x[i] + y[i];\n"
                               "}\n"
                               "kernel void fill(int64[] out) {\n"
                               "    int i = tid();\n"
                               "    out[i] = out[i] + int64(i) * 3 + 1;\n"
                               "}\n"
                               "kernel void grid(int[,] out) {\n"
                               "    int i = tid(0);\n"
                               "    int j = tid(1);\n"
                               "    out[i, j] = i * 1000 + j;\n"
                               "}\n"
                               "kernel void total(int64[] sum) {\n"
                               "    int64 v = tid();\n"
                               "    atomic_add(&sum[0], v);\n"
                               "}\n"
                               "kernel void scale64(double[] x, int64 k, bool neg) {\n"
                               "    int i = tid();\n"
                               "    double f = double(k);\n"
                               "    x[i] = neg ? -f * x[i] : f * x[i];\n"
                               "}\n"
                               "kernel void nothing() {\n"
                               "}\n";

static const char *struct_src = "struct Particle { vec3 pos; vec3 vel; float mass; };\n"
                                "struct Params { vec3 offset; float scale; int count; };\n"
                                "struct Big { mat44 m; float extra; };\n"
                                "kernel void move(Particle[] ps, float dt) {\n"
                                "    int i = tid();\n"
                                "    ps[i].pos = ps[i].pos + ps[i].vel * dt;\n"
                                "}\n"
                                "kernel void apply(vec3[] pts, Params p) {\n"
                                "    int i = tid();\n"
                                "    pts[i] = p.scale * pts[i] + p.offset;\n"
                                "}\n"
                                "kernel void shift(vec3[] pts, vec3 d) {\n"
                                "    int i = tid();\n"
                                "    pts[i] = pts[i] + d;\n"
                                "}\n"
                                "kernel void big(float[] out, Big b) {\n"
                                "    int i = tid();\n"
                                "    vec4 r = b.m * vec4(1.0, 0.0, 0.0, 0.0);\n"
                                "    out[i] = r.x + r.y + b.extra;\n"
                                "}\n";

/* Each test process compiles into the shared test cache (CTest sets
 * KERN_CACHE_DIR) or a temp one. */
static void setup(void) {
  th_default_cache_dir("launch");
  cr_assert_eq(kern_init(), KERN_OK);
}

TestSuite(module, .init = setup);
TestSuite(validate, .init = setup);
TestSuite(launch, .init = setup, .timeout = 300);
TestSuite(debug, .init = setup, .timeout = 300);

static kern_device *cpu(void) { return kern_device_get("cpu"); }

static kern_module *load(const char *name, const char *src) {
  kern_module *m = kern_module_from_source(name, src);
  cr_assert_not_null(m, "%s", kern_last_error());
  return m;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static kern_array *arr1(kern_dtype dt, int64_t n) {
  kern_array *a = kern_array_new(cpu(), dt, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  return a;
}

/* ---- modules ----------------------------------------------------------------- */

Test(module, syntax_errors_become_the_message) {
  kern_clear_error();
  kern_module *m =
      kern_module_from_source("broken.kern", "kernel void k(float[] a) {\n  a[0] = ;\n}\n");
  cr_assert_null(m);
  const char *msg = kern_last_error();
  cr_assert(strstr(msg, "broken.kern:2:"), "%s", msg);
  cr_assert(strstr(msg, "error"), "%s", msg);
  cr_assert_null(strstr(msg, "\x1b["), "no colour codes");
}

Test(module, type_errors_become_the_message) {
  cr_assert_null(kern_module_from_source(
      "types.kern", "kernel void k(int[] a) {\n  a[0] = undefined_thing;\n}\n"));
  cr_assert(strstr(kern_last_error(), "types.kern:2:"), "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "undefined_thing"), "%s", kern_last_error());
}

/* `float(a[i] / 2.0)` would be an integer division (0, 0, 1, 1 for 0..3): it is
 * a compile error whose message says what to write instead. */
Test(module, float_constant_as_integer_operand_is_an_error) {
  cr_assert_null(kern_module_from_source(
      "half.kern", "kernel void half(int[] a, float[] f) {\n  int i = tid();\n"
                   "  f[i] = float(a[i] / 2.0);\n}\n"));
  const char *msg = kern_last_error();
  cr_assert_eq(kern_last_status(), KERN_ERR_COMPILE);
  cr_assert(strstr(msg, "half.kern:3:23: error: float constant 2.0 used as an int32 operand of "
                        "'/' (an integer division)"),
            "%s", msg);
  cr_assert(strstr(msg, "note: ") && strstr(msg, "float(...) to compute in floating point"), "%s",
            msg);
  kern_module *m = load("half_ok.kern", "kernel void half(int[] a, float[] f) {\n"
                                        "  int i = tid();\n  f[i] = float(a[i]) / 2.0;\n}\n");
  kern_array *a = arr1(KERN_INT32, 4), *f = arr1(KERN_FLOAT32, 4);
  int32_t in[4] = {0, 1, 2, 3};
  float out[4];
  cr_assert_eq(kern_array_write(a, in, sizeof in), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "half"), cpu(), KERN_DIM1(4), a, f), KERN_OK, "%s",
               kern_last_error());
  cr_assert_eq(kern_array_read(f, out, sizeof out), KERN_OK);
  for (int i = 0; i < 4; i++) cr_expect_eq(out[i], 0.5f * (float)i, "f[%d] = %g", i, out[i]);
  kern_array_free(a);
  kern_array_free(f);
  kern_module_free(m);
}

Test(module, warnings_of_a_good_module) {
  kern_module *m =
      load("warn.kern", "kernel void k(int[] a) {\n  int i = tid();\n  a[i] + 1;\n}\n");
  const char *d = kern_module_diagnostics(m);
  cr_assert(strstr(d, "warn.kern:3:"), "%s", d);
  cr_assert(strstr(d, "warning"), "%s", d);
  cr_assert(strstr(d, "unused"), "%s", d);
  kern_module_free(m);
  cr_assert_str_eq(kern_module_diagnostics(NULL), "");
}

Test(module, load_errors) {
  cr_assert_null(kern_module_load("/nonexistent/dir/x.kern"));
  cr_assert(strstr(kern_last_error(), "/nonexistent/dir/x.kern"), "%s", kern_last_error());
  cr_assert_null(kern_module_load(NULL));
  cr_assert_null(kern_module_from_source("x", NULL));
  kern_module_free(NULL);
}

Test(module, load_from_file) {
  kern_module *m = kern_module_load(KERN_TESTS_DIR "/kern/ok/spec_example.kern");
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_assert_not_null(kern_module_kernel(m, "saxpy"));
  cr_assert_not_null(kern_module_kernel(m, "blur"));
  cr_assert_str_eq(kern_module_name(m), KERN_TESTS_DIR "/kern/ok/spec_example.kern");
  kern_module_free(m);
}

Test(module, missing_kernel_lists_the_others) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  cr_assert_null(kern_module_kernel(m, "saxpi"));
  const char *msg = kern_last_error();
  cr_assert(strstr(msg, "saxpi") && strstr(msg, "'saxpy'") && strstr(msg, "'grid'"), "%s", msg);
  cr_assert_null(kern_module_kernel(m, NULL));
  cr_assert_null(kern_module_kernel(NULL, "saxpy"));
  cr_assert_str_eq(kern_module_diagnostics(m), "");
  kern_module_free(m);
}

Test(module, kernel_introspection) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  kern_kernel *k = kernel(m, "saxpy");
  cr_assert_str_eq(kern_kernel_name(k), "saxpy");
  cr_assert_eq(kern_kernel_num_params(k), 3);
  cr_assert_str_eq(kern_kernel_param_name(k, 0), "x");
  cr_assert_str_eq(kern_kernel_param_name(k, 2), "a");
  cr_assert_eq(kern_kernel_param_dtype(k, 1), KERN_FLOAT32);
  cr_assert_eq(kern_kernel_param_ndim(k, 1), 1);
  cr_assert_eq(kern_kernel_param_ndim(k, 2), 0);
  cr_assert_eq(kern_kernel_param_ndim(k, 3), -1);
  cr_assert_null(kern_kernel_param_name(k, -1));
  cr_assert_eq(kern_kernel_param_ndim(kernel(m, "grid"), 0), 2);
  cr_assert_eq(kern_kernel_num_params(kernel(m, "nothing")), 0);
  kern_module_free(m);
}

Test(module, struct_dtypes) {
  kern_module *m = load("structs.kern", struct_src);
  kern_dtype p = kern_module_dtype(m, "Particle");
  cr_assert_geq(p, KERN_DTYPE_FIRST_STRUCT, "%s", kern_last_error());
  cr_assert_eq(kern_dtype_size(p), 28);
  cr_assert_eq(kern_dtype_align(p), 4);
  cr_assert_str_eq(kern_dtype_name(p), "Particle");
  kern_dtype big = kern_module_dtype(m, "Big");
  cr_assert_eq(kern_dtype_size(big), 68);
  cr_assert_eq(kern_module_dtype(m, "Nope"), KERN_DTYPE_INVALID);
  cr_assert(strstr(kern_last_error(), "Nope"));
  /* Another module with the same struct shares the id; the id outlives both. */
  kern_module *m2 = load("other.kern", struct_src);
  cr_assert_eq(kern_module_dtype(m2, "Particle"), p);
  kern_module_free(m);
  kern_module_free(m2);
  cr_assert_eq(kern_dtype_size(p), 28);
  cr_assert_str_eq(kern_dtype_name(p), "Particle");
}

/* The runtime checks the compiled code against its own view of the ABI: fed
 * hand-written code in place of the generated C, a launch must refuse it. */
static kern_status launch_with_c(const char *c_src) {
  kern_module *m =
      load("abi.kern", "kernel void k(float[] a, float b) {\n  int i = tid();\n  a[i] = b;\n}\n");
  cr_assert_null(m->c_source, "generated lazily");
  m->c_source = str_dup(c_src);
  kern_array *a = arr1(KERN_FLOAT32, 4);
  kern_status st = KERN_LAUNCH(kern_module_kernel(m, "k"), cpu(), KERN_DIM1(4), a, 1.0f);
  kern_array_free(a);
  kern_module_free(m);
  return st;
}

Test(module, abi_size_mismatch_is_a_compile_error) {
  kern_status st = launch_with_c(
      "#include <stdint.h>\nvoid kk_k_range(void) {}\nvoid kk_k_range_dense(void) {}\n"
      "const uint32_t kk_k_args_size = 12;\n");
  cr_assert_eq(st, KERN_ERR_COMPILE, "%s", kern_status_name(st));
  cr_assert(strstr(kern_last_error(), "ABI mismatch in kernel 'k'"), "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "12 bytes"), "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "80"), "72-byte kn_array + float, padded: %s",
            kern_last_error());
}

Test(module, missing_entry_point_is_a_compile_error) {
  kern_status st = launch_with_c(
      "#include <stdint.h>\nvoid kk_k_range(void) {}\nconst uint32_t kk_k_args_size = 80;\n");
  cr_assert_eq(st, KERN_ERR_COMPILE);
  cr_assert(strstr(kern_last_error(), "ABI mismatch"), "%s", kern_last_error());
  cr_assert(strstr(kern_last_error(), "'k'"), "%s", kern_last_error());
}

/* ---- validation: every bad class is INVALID_ARGUMENT naming kernel, parameter, expectation ---- */

static kern_module *vm;
static kern_kernel *vk;
static kern_array *vx, *vy, *vi, *v2;

static void vsetup(void) {
  setup();
  vm = load("saxpy.kern", saxpy_src);
  vk = kernel(vm, "saxpy");
  vx = arr1(KERN_FLOAT32, 16);
  vy = arr1(KERN_FLOAT32, 16);
  vi = arr1(KERN_INT32, 16);
  int64_t s2[2] = {4, 4};
  v2 = kern_array_new(cpu(), KERN_FLOAT32, 2, s2);
}

static void expect_invalid(kern_status st, const char *needle) {
  cr_assert_eq(st, KERN_ERR_INVALID_ARGUMENT, "got %s: %s", kern_status_name(st),
               kern_last_error());
  cr_assert(strstr(kern_last_error(), needle), "message '%s' lacks '%s'", kern_last_error(),
            needle);
}

Test(validate, argument_count, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, vy),
                 "kernel 'saxpy' expects 3 arguments, got 2");
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, vy, 1.0f, 2.0f),
                 "expects 3 arguments, got 4");
  expect_invalid(kern_launch(vk, cpu(), KERN_DIM1(16), 0, NULL), "got 0");
  expect_invalid(kern_launch(vk, cpu(), KERN_DIM1(16), 3, NULL), "NULL");
}

Test(validate, wrong_array_dtype, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vi, vy, 1.0f),
                 "kernel 'saxpy' parameter 'x' (#1) expects float32[] but got an array of int32");
}

Test(validate, wrong_ndim, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, v2, 1.0f),
                 "parameter 'y' (#2) expects float32[]");
  cr_assert(strstr(kern_last_error(), "2 dims"), "%s", kern_last_error());
}

Test(validate, scalar_and_array_swapped, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, vy, vx),
                 "parameter 'a' (#3) expects a value of type float32 but got an array");
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), 1.0f, vy, 1.0f),
                 "parameter 'x' (#1) expects float32[] (an array) but got a value");
}

Test(validate, scalar_dtype_is_strict, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, vy, 1.0),
                 "parameter 'a' (#3) expects float32 but got a value of type float64");
  cr_assert(strstr(kern_last_error(), "kern_arg_f32"), "hint: %s", kern_last_error());
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, vy, 1),
                 "expects float32 but got a value of type int32");
  kern_kernel *s = kernel(vm, "scale64");
  kern_array *d = arr1(KERN_FLOAT64, 4);
  expect_invalid(KERN_LAUNCH(s, cpu(), KERN_DIM1(4), d, 3, (bool)true),
                 "parameter 'k' (#2) expects int64 but got a value of type int32");
  cr_assert(strstr(kern_last_error(), "kern_arg_i64"));
  expect_invalid(KERN_LAUNCH(s, cpu(), KERN_DIM1(4), d, (int64_t)3, 1),
                 "parameter 'neg' (#3) expects bool");
  kern_array_free(d);
}

Test(validate, null_array, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, (kern_array *)NULL, 1.0f),
                 "kernel 'saxpy' parameter 'y' (#2) expects float32[] but got a NULL array");
}

Test(validate, uninitialized_argument, .init = vsetup) {
  kern_arg args[3];
  memset(args, 0, sizeof args);
  args[0] = kern_arg_array(vx);
  args[2] = kern_arg_f32(1);
  expect_invalid(kern_launch(vk, cpu(), KERN_DIM1(16), 3, args), "parameter 'y' (#2)");
}

Test(validate, null_kernel_or_device, .init = vsetup) {
  expect_invalid(KERN_LAUNCH((kern_kernel *)NULL, cpu(), KERN_DIM1(16), vx, vy, 1.0f),
                 "kernel is NULL");
  expect_invalid(KERN_LAUNCH(vk, (kern_device *)NULL, KERN_DIM1(16), vx, vy, 1.0f),
                 "device is NULL");
}

Test(validate, bad_dims, .init = vsetup) {
  kern_dims none = {0, {16, 1, 1, 1}}, five = {5, {1, 1, 1, 1}};
  expect_invalid(KERN_LAUNCH(vk, cpu(), none, vx, vy, 1.0f), "1 to 4 dimensions");
  expect_invalid(KERN_LAUNCH(vk, cpu(), five, vx, vy, 1.0f), "1 to 4 dimensions");
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM2(4, -4), vx, vy, 1.0f), "negative");
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM2(65536, 32768), vx, vy, 1.0f), "exceeds 2^31-1");
  cr_assert(strstr(kern_last_error(), "2147483648"), "%s", kern_last_error());
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1((int64_t)1 << 31), vx, vy, 1.0f),
                 "exceeds 2^31-1");
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM3(INT64_MAX, 4, 4), vx, vy, 1.0f),
                 "exceeds 2^31-1");
  expect_invalid(
      KERN_LAUNCH(vk, cpu(), KERN_DIM4(1 << 16, 1 << 16, 1 << 16, 1 << 16), vx, vy, 1.0f),
      "exceeds 2^31-1");
}

Test(validate, zero_dim_launches_nothing, .init = vsetup) {
  float two = 2;
  kern_array_fill(vy, &two);
  cr_assert_eq(KERN_LAUNCH(vk, cpu(), KERN_DIM1(0), vx, vy, 1.0f), KERN_OK, "%s",
               kern_last_error());
  cr_assert_eq(KERN_LAUNCH(vk, cpu(), KERN_DIM2(16, 0), vx, vy, 1.0f), KERN_OK);
  float out[16];
  kern_array_read(vy, out, sizeof out);
  for (int i = 0; i < 16; i++) cr_assert_eq(out[i], 2);
  /* A zero dim still validates the arguments. */
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(0), vi, vy, 1.0f), "array of int32");
}

Test(validate, rejected_launch_leaves_the_kernel_usable, .init = vsetup) {
  expect_invalid(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vi, vy, 1.0f), "int32");
  float one = 1;
  kern_array_fill(vx, &one);
  cr_assert_eq(KERN_LAUNCH(vk, cpu(), KERN_DIM1(16), vx, vy, 5.0f), KERN_OK, "%s",
               kern_last_error());
  float out[16];
  kern_array_read(vy, out, sizeof out);
  cr_assert_eq(out[15], 5);
}

/* ---- launches with results ----------------------------------------------------------------------- */

Test(launch, saxpy_exact) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  int64_t n = 100003;
  kern_array *x = arr1(KERN_FLOAT32, n), *y = arr1(KERN_FLOAT32, n);
  float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *out = malloc(n * sizeof *out);
  for (int64_t i = 0; i < n; i++) hx[i] = (float)i * 0.5f, hy[i] = (float)(i % 7);
  kern_array_write(x, hx, n * sizeof *hx);
  kern_array_write(y, hy, n * sizeof *hy);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "saxpy"), cpu(), KERN_DIM1(n), x, y, 2.0f), KERN_OK, "%s",
               kern_last_error());
  kern_array_read(y, out, n * sizeof *out);
  for (int64_t i = 0; i < n; i++) {
    float want = 2.0f * hx[i] + hy[i];
    if (out[i] != want) cr_assert_fail("y[%lld] = %g, want %g", (long long)i, out[i], want);
  }
  free(hx), free(hy), free(out);
  kern_array_free(x), kern_array_free(y);
  kern_module_free(m);
}

static void fill_and_check(kern_kernel *k, int64_t n) {
  kern_array *a = arr1(KERN_INT64, n);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(n), a), KERN_OK, "n=%lld: %s", (long long)n,
               kern_last_error());
  const int64_t *p = kern_array_data(a);
  for (int64_t i = 0; i < n; i++)
    if (p[i] != 3 * i + 1)
      cr_assert_fail("n=%lld: out[%lld] = %lld", (long long)n, (long long)i, (long long)p[i]);
  kern_array_free(a);
}

/* KERN_LAUNCH takes kern.h's value types as they are: each kernel copies its
 * by-value parameters into one-element arrays, which must hold the same bytes. */
static const char *values_src =
    "kernel void f(vec2[] o0, vec3[] o1, vec4[] o2, mat22[] o3, mat33[] o4, mat44[] o5,\n"
    "              quat[] o6, vec2 a, vec3 b, vec4 c, mat22 d, mat33 e, mat44 f, quat g) {\n"
    "    o0[0] = a; o1[0] = b; o2[0] = c; o3[0] = d; o4[0] = e; o5[0] = f; o6[0] = g;\n"
    "}\n"
    "kernel void g(dvec2[] o0, dvec3[] o1, dvec4[] o2, ivec2[] o3, ivec3[] o4, ivec4[] o5,\n"
    "              float16[] o6, dvec2 a, dvec3 b, dvec4 c, ivec2 d, ivec3 e, ivec4 f,\n"
    "              float16 h) {\n"
    "    o0[0] = a; o1[0] = b; o2[0] = c; o3[0] = d; o4[0] = e; o5[0] = f; o6[0] = h;\n"
    "}\n";

static void fill_bytes(void *p, size_t n, int seed) {
  float *f = p; /* every type here is made of 4-byte words or doubles: use floats */
  for (size_t i = 0; i < n / sizeof *f; i++) f[i] = (float)seed + 0.25f * (float)i;
}

static void expect_value(kern_array *a, const void *want, size_t n) {
  unsigned char got[64];
  cr_assert_eq(kern_array_nbytes(a), n, "%s", kern_dtype_name(kern_array_dtype(a)));
  cr_assert_eq(kern_array_read(a, got, n), KERN_OK);
  cr_expect(memcmp(got, want, n) == 0, "%s argument arrived changed",
            kern_dtype_name(kern_array_dtype(a)));
  kern_array_free(a);
}

/* Seven one-element arrays of these dtypes. */
static void outputs(const kern_dtype dt[7], kern_array *o[7]) {
  for (int i = 0; i < 7; i++) o[i] = arr1(dt[i], 1);
}

/* Each array holds its value's bytes (sizes from the dtypes); frees the arrays. */
static void expect_values(kern_array *o[7], const void *const want[7]) {
  for (int i = 0; i < 7; i++) expect_value(o[i], want[i], kern_dtype_size(kern_array_dtype(o[i])));
}

static const kern_dtype float_types[7] = {KERN_VEC2,  KERN_VEC3,  KERN_VEC4, KERN_MAT22,
                                          KERN_MAT33, KERN_MAT44, KERN_QUAT};

Test(launch, value_types_of_the_header_pass_directly) {
  kern_module *m = load("values.kern", values_src);
  kern_vec2 a;
  kern_vec3 b;
  kern_vec4 c;
  kern_mat22 d;
  kern_mat33 e;
  kern_mat44 f;
  kern_quat g;
  fill_bytes(&a, sizeof a, 1), fill_bytes(&b, sizeof b, 2), fill_bytes(&c, sizeof c, 3);
  fill_bytes(&d, sizeof d, 4), fill_bytes(&e, sizeof e, 5), fill_bytes(&f, sizeof f, 6);
  fill_bytes(&g, sizeof g, 7);
  kern_array *o[7];
  outputs(float_types, o);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), o[0], o[1], o[2], o[3], o[4], o[5],
                           o[6], a, b, c, d, e, f, g),
               KERN_OK, "%s", kern_last_error());
  expect_values(o, (const void *const[7]){&a, &b, &c, &d, &e, &f, &g});

  kern_dvec2 da = {1.5, -2.5};
  kern_dvec3 db = {1e300, 3.25, -0.0};
  kern_dvec4 dc = {1, 2, 3, 4.125};
  kern_ivec2 ia = {-1, 2147483647};
  kern_ivec3 ib = {7, 8, -9};
  kern_ivec4 ic = {1, 2, 3, -2147483647 - 1};
  kern_float16 h = {0x3c00}; /* 1.0 */
  outputs((const kern_dtype[7]){KERN_DVEC2, KERN_DVEC3, KERN_DVEC4, KERN_IVEC2, KERN_IVEC3,
                                KERN_IVEC4, KERN_FLOAT16},
          o);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "g"), cpu(), KERN_DIM1(1), o[0], o[1], o[2], o[3], o[4], o[5],
                           o[6], da, db, dc, ia, ib, ic, h),
               KERN_OK, "%s", kern_last_error());
  expect_values(o, (const void *const[7]){&da, &db, &dc, &ia, &ib, &ic, &h});
  /* A compound literal in parentheses, and the constructor by name. */
  outputs(float_types, o);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), o[0], o[1], o[2], o[3], o[4], o[5],
                           o[6], kern_arg_of_vec2(a), ((kern_vec3){1, 2, 3}), c, d, e, f, g),
               KERN_OK, "%s", kern_last_error());
  expect_values(o, (const void *const[7]){&a, &(kern_vec3){1, 2, 3}, &c, &d, &e, &f, &g});
  /* The dtype travels with the value: a vec4 is not a quat. */
  outputs(float_types, o);
  cr_expect_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), o[0], o[1], o[2], o[3], o[4], o[5],
                           o[6], a, b, c, d, e, f, c),
               KERN_ERR_INVALID_ARGUMENT);
  for (int i = 0; i < 7; i++) kern_array_free(o[i]);
  kern_module_free(m);
}

/* Quaternions of every element type pass by type (quat, quath, quat<bfloat16>,
 * quatd), each reaching the kernel as its bytes and computed with there. */
Test(launch, quaternions_of_every_element_type_pass_directly) {
  kern_module *m =
      load("quats.kern", "kernel void f(quat[] oq, quatd[] od, quath[] oh,\n"
                         "              quat<bfloat16>[] ob, float64[] x,\n"
                         "              quat q, quatd d, quath h, quat<bfloat16> b) {\n"
                         "    oq[0] = q; od[0] = d; oh[0] = h; ob[0] = b;\n"
                         "    x[0] = length(q); x[1] = dot(d, d);\n"
                         "    x[2] = float64(h.w) * 2.0; x[3] = float64(b.x + b.y);\n"
                         "}\n");
  kern_quat q = {0.0f, 3.0f, 0.0f, 4.0f};
  kern_quatd d = {1e-3, -2.5, 0.5, 1.0};
  kern_quath h = {{0x3c00}, {0x0000}, {0xbc00}, {0x3800}};    /* 1, 0, -1, 0.5 */
  kern_quatbf16 b = {{0x3fc0}, {0x4020}, {0x0000}, {0x3f80}}; /* 1.5, 2.5, 0, 1 */
  kern_array *oq = arr1(KERN_QUAT, 1), *od = arr1(KERN_QUATD, 1), *oh = arr1(KERN_QUATH, 1);
  kern_array *ob = arr1(KERN_QUATBF16, 1), *x = arr1(KERN_FLOAT64, 4);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), oq, od, oh, ob, x, q, d, h, b),
               KERN_OK, "%s", kern_last_error());
  double got[4];
  cr_assert_eq(kern_array_read(x, got, sizeof got), KERN_OK);
  double want[4] = {5.0, 1e-3 * 1e-3 + 2.5 * 2.5 + 0.5 * 0.5 + 1.0, 1.0, 4.0};
  for (int i = 0; i < 4; i++) cr_expect_eq(got[i], want[i], "x[%d] = %.17g", i, got[i]);
  expect_value(oq, &q, sizeof q);
  expect_value(od, &d, sizeof d);
  expect_value(oh, &h, sizeof h);
  expect_value(ob, &b, sizeof b);
  kern_array_free(x);
  /* The dtype travels with the value: a quatd is not a quat. */
  oq = arr1(KERN_QUAT, 1), od = arr1(KERN_QUATD, 1), oh = arr1(KERN_QUATH, 1);
  ob = arr1(KERN_QUATBF16, 1), x = arr1(KERN_FLOAT64, 4);
  cr_expect_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), oq, od, oh, ob, x, d, d, h, b),
               KERN_ERR_INVALID_ARGUMENT);
  kern_array *all[5] = {oq, od, oh, ob, x};
  for (int i = 0; i < 5; i++) kern_array_free(all[i]);
  kern_module_free(m);
}

/* kern_transform passes by type too, and reaches the kernel as its 28 bytes. */
Test(launch, transform_values_pass_directly) {
  kern_module *m = load("xf.kern", "kernel void f(transform[] o, transform t) { o[0] = t; }\n");
  kern_transform t = {{1.5f, -2.0f, 3.25f}, {0.0f, 0.6f, 0.0f, 0.8f}};
  kern_array *o = arr1(KERN_TRANSFORM, 1);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), o, t), KERN_OK, "%s",
               kern_last_error());
  expect_value(o, &t, sizeof t);
  o = arr1(KERN_TRANSFORM, 1);
  kern_quat q = {0, 0, 0, 1};
  cr_expect_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), o, q), KERN_ERR_INVALID_ARGUMENT);
  kern_array_free(o);
  kern_module_free(m);
}

/* A spatial_vector by type; a spatial_matrix (bigger than a kern_arg holds)
 * by kern_arg_bytes, which keeps the caller's pointer. */
Test(launch, spatial_values_pass_by_type_and_by_bytes) {
  kern_module *m = load("sp.kern", "kernel void f(spatial_vector[] o, spatial_matrix[] p,\n"
                                   "              spatial_vector v, spatial_matrix a) {\n"
                                   "    o[0] = v; p[0] = a;\n}\n");
  kern_spatial_vector v = {{1, -2, 3.5f, 4, 5, -6.25f}};
  kern_spatial_matrix a;
  fill_bytes(&a, sizeof a, 9);
  kern_array *o = arr1(KERN_SPATIAL_VECTOR, 1), *p = arr1(KERN_SPATIAL_MATRIX, 1);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "f"), cpu(), KERN_DIM1(1), o, p, v,
                           kern_arg_bytes(KERN_SPATIAL_MATRIX, &a)),
               KERN_OK, "%s", kern_last_error());
  expect_value(o, &v, sizeof v);
  kern_spatial_matrix got;
  cr_assert_eq(kern_array_read(p, &got, sizeof got), KERN_OK);
  cr_expect(memcmp(&got, &a, sizeof a) == 0, "spatial_matrix argument arrived changed");
  kern_array_free(p);
  kern_module_free(m);
}

Test(launch, every_index_exactly_once_over_many_sizes) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  kern_kernel *k = kernel(m, "fill");
  int64_t sizes[] = {1,     2,     31,    4095,  4096,    4097,
                     32767, 32768, 32769, 65537, 1000003, (1 << 22) + 7};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) fill_and_check(k, sizes[i]);
  kern_module_free(m);
}

Test(launch, atomic_sum_is_exact) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  int64_t sizes[] = {1, 1000, 40000, 3000001};
  for (size_t s = 0; s < 4; s++) {
    kern_array *sum = arr1(KERN_INT64, 1);
    int64_t n = sizes[s];
    cr_assert_eq(KERN_LAUNCH(kernel(m, "total"), cpu(), KERN_DIM1(n), sum), KERN_OK, "%s",
                 kern_last_error());
    int64_t got;
    kern_array_read(sum, &got, sizeof got);
    cr_assert_eq(got, n * (n - 1) / 2, "n=%lld", (long long)n);
    kern_array_free(sum);
  }
  kern_module_free(m);
}

Test(launch, two_dimensional) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  int64_t shapes[][2] = {{3, 5}, {1000, 77}, {300, 301}, {1, 100000}};
  for (int s = 0; s < 4; s++) {
    kern_array *a = kern_array_new(cpu(), KERN_INT32, 2, shapes[s]);
    cr_assert_eq(KERN_LAUNCH(kernel(m, "grid"), cpu(), KERN_DIM2(shapes[s][0], shapes[s][1]), a),
                 KERN_OK, "%s", kern_last_error());
    const int32_t *p = kern_array_data(a);
    for (int64_t i = 0; i < shapes[s][0]; i++)
      for (int64_t j = 0; j < shapes[s][1]; j++)
        if (p[i * shapes[s][1] + j] != i * 1000 + j)
          cr_assert_fail("[%lld,%lld]", (long long)i, (long long)j);
    kern_array_free(a);
  }
  kern_module_free(m);
}

Test(launch, strided_view_arguments) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  int64_t shape[2] = {50, 40}, off[2] = {5, 10}, win[2] = {30, 20};
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 2, shape);
  int32_t minus = -1;
  kern_array_fill(a, &minus);
  kern_array *v = kern_array_view(a, 2, off, win);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "grid"), cpu(), KERN_DIM2(30, 20), v), KERN_OK, "%s",
               kern_last_error());
  const int32_t *p = kern_array_data(a);
  for (int i = 0; i < 50; i++)
    for (int j = 0; j < 40; j++) {
      bool in = i >= 5 && i < 35 && j >= 10 && j < 30;
      int32_t want = in ? (i - 5) * 1000 + (j - 10) : -1;
      cr_assert_eq(p[i * 40 + j], want, "[%d,%d]", i, j);
    }
  /* A strided 1-D column (wrapped) through saxpy. */
  float mat[8][3] = {{0}};
  for (int i = 0; i < 8; i++) mat[i][1] = (float)i;
  int64_t n = 8, stride = 3 * sizeof(float);
  kern_array *col = kern_array_wrap(&mat[0][1], cpu(), KERN_FLOAT32, 1, &n, &stride);
  kern_array *x = arr1(KERN_FLOAT32, 8);
  float one = 1;
  kern_array_fill(x, &one);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "saxpy"), cpu(), KERN_DIM1(8), x, col, 10.0f), KERN_OK, "%s",
               kern_last_error());
  for (int i = 0; i < 8; i++) {
    cr_assert_eq(mat[i][1], 10.0f + i);
    cr_assert_eq(mat[i][0], 0);
    cr_assert_eq(mat[i][2], 0);
  }
  kern_array_free(col), kern_array_free(x), kern_array_free(v), kern_array_free(a);
  kern_module_free(m);
}

Test(launch, scalar_kinds) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  kern_array *d = arr1(KERN_FLOAT64, 5);
  double v[5] = {1, 2, 3, 4, 5}, out[5];
  kern_array_write(d, v, sizeof v);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "scale64"), cpu(), KERN_DIM1(5), d, (int64_t)3, (bool)true),
               KERN_OK, "%s", kern_last_error());
  kern_array_read(d, out, sizeof out);
  for (int i = 0; i < 5; i++) cr_assert_eq(out[i], -3.0 * v[i]);
  kern_arg args[3] = {kern_arg_array(d), kern_arg_i64(2), kern_arg_bool(false)};
  cr_assert_eq(kern_launch(kernel(m, "scale64"), cpu(), KERN_DIM1(5), 3, args), KERN_OK);
  kern_array_read(d, out, sizeof out);
  for (int i = 0; i < 5; i++) cr_assert_eq(out[i], -6.0 * v[i]);
  cr_assert_eq(kern_launch(kernel(m, "nothing"), cpu(), KERN_DIM1(100000), 0, NULL), KERN_OK, "%s",
               kern_last_error());
  kern_array_free(d);
  kern_module_free(m);
}

Test(launch, structs_vectors_and_big_values) {
  kern_module *m = load("structs.kern", struct_src);
  kern_dtype pt = kern_module_dtype(m, "Particle");
  struct {
    float pos[3], vel[3], mass;
  } ps[100];
  cr_assert_eq(sizeof ps[0], kern_dtype_size(pt));
  for (int i = 0; i < 100; i++)
    for (int c = 0; c < 3; c++)
      ps[i].pos[c] = (float)(i + c), ps[i].vel[c] = (float)c, ps[i].mass = 1;
  kern_array *a = arr1(pt, 100);
  kern_array_write(a, ps, sizeof ps);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "move"), cpu(), KERN_DIM1(100), a, 0.5f), KERN_OK, "%s",
               kern_last_error());
  kern_array_read(a, ps, sizeof ps);
  for (int i = 0; i < 100; i++)
    for (int c = 0; c < 3; c++) cr_assert_eq(ps[i].pos[c], (float)(i + c) + 0.5f * c);

  struct {
    float offset[3], scale;
    int32_t count;
  } prm = {{1, 2, 3}, 2, 7};
  kern_dtype pd = kern_module_dtype(m, "Params");
  cr_assert_eq(kern_dtype_size(pd), sizeof prm);
  kern_array *pts = arr1(KERN_VEC3, 10);
  float one[3] = {1, 1, 1}, got[30];
  kern_array_fill(pts, one);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "apply"), cpu(), KERN_DIM1(10), pts, kern_arg_bytes(pd, &prm)),
               KERN_OK, "%s", kern_last_error());
  cr_assert_eq(
      KERN_LAUNCH(kernel(m, "shift"), cpu(), KERN_DIM1(10), pts, kern_arg_vec3(10, 20, 30)),
      KERN_OK);
  kern_array_read(pts, got, sizeof got);
  for (int i = 0; i < 10; i++) {
    cr_assert_eq(got[3 * i], 13);
    cr_assert_eq(got[3 * i + 1], 24);
    cr_assert_eq(got[3 * i + 2], 35);
  }

  /* 68 bytes: passed by pointer, copied at launch. */
  struct {
    float m[16];
    float extra;
  } b;
  memset(&b, 0, sizeof b);
  b.m[0] = 2; /* row 0, col 0 */
  b.m[4] = 3; /* row 1, col 0 */
  b.extra = 0.25f;
  kern_dtype bd = kern_module_dtype(m, "Big");
  cr_assert_eq(kern_dtype_size(bd), sizeof b);
  kern_array *out = arr1(KERN_FLOAT32, 4);
  kern_arg barg = kern_arg_bytes(bd, &b);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "big"), cpu(), KERN_DIM1(4), out, barg), KERN_OK, "%s",
               kern_last_error());
  float o[4];
  kern_array_read(out, o, sizeof o);
  for (int i = 0; i < 4; i++) cr_assert_eq(o[i], 5.25f);
  expect_invalid(KERN_LAUNCH(kernel(m, "big"), cpu(), KERN_DIM1(4), out, kern_arg_bytes(bd, NULL)),
                 "NULL");
  expect_invalid(KERN_LAUNCH(kernel(m, "apply"), cpu(), KERN_DIM1(4), pts, kern_arg_bytes(bd, &b)),
                 "parameter 'p' (#2) expects Params but got a value of type Big");
  kern_array_free(a), kern_array_free(pts), kern_array_free(out);
  kern_module_free(m);
}

/* ---- concurrency ------------------------------------------------------------------------------------ */

typedef struct {
  kern_kernel *k;
  int id;
} job;

static void *launch_many(void *arg) {
  job *j = arg;
  int64_t n = 20000 + j->id * 9973;
  for (int rep = 0; rep < 10; rep++) {
    kern_array *a = kern_array_new(kern_device_get("cpu"), KERN_INT64, 1, &n);
    if (KERN_LAUNCH(j->k, kern_device_get("cpu"), KERN_DIM1(n), a) != KERN_OK)
      return "launch failed";
    const int64_t *p = kern_array_data(a);
    for (int64_t i = 0; i < n; i++)
      if (p[i] != 3 * i + 1) return "wrong value";
    kern_array_free(a);
  }
  return NULL;
}

Test(launch, sixteen_threads_launch_at_once) {
  setenv("KERN_NUM_THREADS", "4", 1);
  rt_config_reload();
  kern_module *m = load("saxpy.kern", saxpy_src);
  kern_kernel *k = kernel(m, "fill");
  kern_array *warm = arr1(KERN_INT64, 1);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(1), warm), KERN_OK, "%s", kern_last_error());
  kern_array_free(warm);
  pthread_t t[16];
  job jobs[16];
  for (int i = 0; i < 16; i++) {
    jobs[i] = (job){k, i};
    pthread_create(&t[i], NULL, launch_many, &jobs[i]);
  }
  for (int i = 0; i < 16; i++) {
    void *r;
    pthread_join(t[i], &r);
    cr_assert_null(r, "thread %d: %s", i, (char *)r);
  }
  kern_module_free(m);
}

static void *first_launch(void *arg) { return launch_many(arg); }

Test(launch, first_compile_from_many_threads_compiles_once) {
  /* A private cache and a compiler that logs every run. */
  char dir[] = "/tmp/kern-first-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char *real = NULL, script[300], log[300];
  cr_assert_eq(th_run("command -v clang || command -v cc", &real), 0);
  real[strcspn(real, "\n")] = 0;
  snprintf(script, sizeof script, "%s/cc", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  FILE *f = fopen(script, "w");
  fprintf(f, "#!/bin/sh\n[ \"$1\" = --version ] || echo run >> '%s'\nexec '%s' \"$@\"\n", log,
          real);
  fclose(f);
  chmod(script, 0755);
  char cache[300];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("KERN_CACHE_DIR", cache, 1);
  setenv("KERN_CC", script, 1);
  rt_config_reload();
  kern_module *m = load("saxpy.kern", saxpy_src);
  pthread_t t[8];
  job jobs[8];
  for (int i = 0; i < 8; i++) {
    jobs[i] = (job){kernel(m, "fill"), i};
    pthread_create(&t[i], NULL, first_launch, &jobs[i]);
  }
  for (int i = 0; i < 8; i++) {
    void *r;
    pthread_join(t[i], &r);
    cr_assert_null(r, "thread %d: %s", i, (char *)r);
  }
  char *text = th_read_file(log, NULL);
  cr_assert_str_eq(text, "run\n", "exactly one compile");
  free(text);
  /* A second module with the same name and source hits the cache (the
   * name is part of the generated code's #line directives). */
  kern_module *m2 = load("saxpy.kern", saxpy_src);
  fill_and_check(kernel(m2, "fill"), 1000);
  text = th_read_file(log, NULL);
  cr_assert_str_eq(text, "run\n", "warm hit: no compile");
  free(text);
  free(real);
  kern_module_free(m);
  kern_module_free(m2);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  th_run(cmd, NULL);
}

/* ---- access modes ------------------------------------------------------------------------------------- */

static int warnings;
static char last_warning[1024];
static void on_warning(const char *msg, void *ud) {
  (void)ud;
  warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", msg);
}

Test(launch, access_modes_on_the_cpu) {
  kern_module *m = load("saxpy.kern", saxpy_src);
  kern_kernel *k = kernel(m, "saxpy");
  float hx[8] = {1, 1, 1, 1, 1, 1, 1, 1}, hy[8] = {0};
  int64_t n = 8;
  kern_array *x = kern_array_wrap(hx, cpu(), KERN_FLOAT32, 1, &n, NULL);
  kern_array *y = arr1(KERN_FLOAT32, 8);
  kern_set_warning_handler(on_warning, NULL);
  cr_assert_eq(kern_get_launch_access_mode(), KERN_ACCESS_RELAXED);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, y, 1.0f), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(warnings, 0);
  cr_assert_eq(kern_set_launch_access_mode(KERN_ACCESS_STRICT), KERN_ACCESS_RELAXED);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, y, 1.0f), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_set_launch_access_mode(KERN_ACCESS_CHECKED), KERN_ACCESS_STRICT);
  for (int i = 0; i < 3; i++)
    cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, y, 1.0f), KERN_OK);
  cr_assert_eq(warnings, 1, "once per (kernel, parameter, devices)");
  cr_assert(strstr(last_warning, "saxpy") && strstr(last_warning, "'x'"), "%s", last_warning);
  kern_array *y2 = kern_array_wrap(hy, cpu(), KERN_FLOAT32, 1, &n, NULL);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, y2, 1.0f), KERN_OK);
  cr_assert_eq(warnings, 2, "another parameter warns again");
  cr_assert_eq(hy[0], 1);
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  kern_array_free(x), kern_array_free(y), kern_array_free(y2);
  kern_module_free(m);
}

static void expect_access(kern_status st, const char *needle) {
  cr_assert_eq(st, KERN_ERR_ACCESS, "got %s: %s", kern_status_name(st), kern_last_error());
  cr_assert(strstr(kern_last_error(), needle), "'%s' lacks '%s'", kern_last_error(), needle);
}

/* A stand-in CUDA device (host memory that reports device kinds, at the next
 * free ordinal), to check the access rules of CPU launches without a GPU. */
Test(launch, access_rules_for_device_memory) {
  int before = kern_device_count(), ord = before - 1;
  kern_device *gpu =
      th_fake_gpu_new((kern_device_info){.is_uva = true,
                                         .is_managed_memory_supported = true,
                                         .is_concurrent_managed_access_supported = true});
  cr_assert_not_null(gpu);
  cr_assert_eq(kern_device_count(), before + 1);
  char name[32], gname[32];
  snprintf(name, sizeof name, "cuda:%d", ord);
  snprintf(gname, sizeof gname, "cuda:%d", ord + 1);
  cr_assert_eq(kern_device_get(name), gpu);
  cr_assert_null(kern_device_get(gname));
  cr_assert(strstr(kern_last_error(), "no such device"), "%s", kern_last_error());
  char expect[160];
  snprintf(expect, sizeof expect,
           "kernel 'saxpy' parameter 'y' (#2) gets an array on %s (CUDA_DEVICE memory)", name);
  kern_module *m = load("saxpy.kern", saxpy_src);
  kern_kernel *k = kernel(m, "saxpy");
  kern_array *x = arr1(KERN_FLOAT32, 8);
  int64_t n = 8;
  kern_array *dev = kern_array_new(gpu, KERN_FLOAT32, 1, &n);
  cr_assert_eq(kern_array_memory_kind(dev), KERN_MEM_CUDA_DEVICE);
  cr_assert_not(kern_can_access(cpu(), dev));
  cr_assert(kern_can_access(gpu, dev));
  cr_assert_not(kern_device_can_access(cpu(), gpu));
  cr_assert_not(kern_device_can_access(gpu, cpu()), "pageable host memory: not from this GPU");
  /* Device memory on a CPU launch: refused in every mode, nothing runs. */
  for (int mode = KERN_ACCESS_RELAXED; mode <= KERN_ACCESS_CHECKED; mode++) {
    kern_set_launch_access_mode((kern_access_mode)mode);
    expect_access(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, dev, 1.0f), expect);
    cr_assert(strstr(kern_last_error(), "launch on cpu"), "%s", kern_last_error());
  }
  /* Managed memory: usable from the CPU when the owner has concurrent access. */
  kern_device_set_allocator(gpu, KERN_ALLOC_CUDA_MANAGED);
  kern_array *man = kern_array_new(gpu, KERN_FLOAT32, 1, &n);
  cr_assert_eq(kern_array_memory_kind(man), KERN_MEM_CUDA_MANAGED);
  cr_assert(kern_can_access(cpu(), man));
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, man, 1.0f), KERN_OK, "%s", kern_last_error());
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, man, 1.0f), KERN_OK, "%s", kern_last_error());
  kern_set_launch_access_mode(KERN_ACCESS_STRICT);
  expect_access(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, man, 1.0f), "does not live on the device");
  cr_assert(strstr(kern_last_error(), "STRICT"), "%s", kern_last_error());
  th_fake_of(gpu)->info.is_concurrent_managed_access_supported = false;
  cr_assert_not(kern_can_access(cpu(), man));
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  expect_access(KERN_LAUNCH(k, cpu(), KERN_DIM1(8), x, man, 1.0f), "CUDA_MANAGED");
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  /* Copies between the two devices go through the device's copy. */
  float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, got[8];
  cr_assert_eq(kern_array_write(dev, ones, sizeof ones), KERN_OK);
  cr_assert_eq(kern_array_copy(x, dev), KERN_OK);
  cr_assert_eq(kern_array_read(x, got, sizeof got), KERN_OK);
  cr_assert_arr_eq(got, ones, sizeof got);
  kern_array_free(man), kern_array_free(dev), kern_array_free(x);
  kern_module_free(m);
}

/* ---- debug mode ----------------------------------------------------------------------------------------- */

static const char *oob_src = "kernel void shift(float[] a) {\n"
                             "    int i = tid();\n"
                             "    a[i + 1] = 1.0;\n"
                             "}\n"
                             "kernel void check(int[] a) {\n"
                             "    int i = tid();\n"
                             "    assert(a[i] < 5);\n"
                             "}\n"
                             "kernel void two(float[,] m) {\n"
                             "    int i = tid(0);\n"
                             "    int j = tid(1);\n"
                             "    m[i, j + 2] = 0.0;\n"
                             "}\n";

Test(debug, out_of_bounds_then_a_good_launch) {
  kern_set_debug(true);
  kern_module *m = load("oob.kern", oob_src);
  kern_array *a = arr1(KERN_FLOAT32, 10);
  kern_kernel *k = kernel(m, "shift");
  kern_status st = KERN_LAUNCH(k, cpu(), KERN_DIM1(10), a);
  cr_assert_eq(st, KERN_ERR_BOUNDS, "%s: %s", kern_status_name(st), kern_last_error());
  cr_assert_str_eq(
      kern_last_error(),
      "out-of-bounds access in kernel 'shift' at oob.kern:3: index [10] is outside shape [10] "
      "(parameter 'a', thread 9)");
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM1(9), a), KERN_OK, "%s", kern_last_error());
  float out[10];
  kern_array_read(a, out, sizeof out);
  cr_assert_eq(out[0], 0);
  for (int i = 1; i < 10; i++) cr_assert_eq(out[i], 1);
  kern_array_free(a);
  kern_module_free(m);
}

Test(debug, two_dimensional_index_and_shape) {
  kern_set_debug(true);
  kern_module *m = load("oob.kern", oob_src);
  int64_t s[2] = {3, 4};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 2, s);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "two"), cpu(), KERN_DIM2(3, 4), a), KERN_ERR_BOUNDS);
  cr_assert(strstr(kern_last_error(), "oob.kern:12: index [0, 4] is outside shape [3, 4]"), "%s",
            kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kernel(m, "two"), cpu(), KERN_DIM2(3, 2), a), KERN_OK, "%s",
               kern_last_error());
  kern_array_free(a);
  kern_module_free(m);
}

Test(debug, assertion) {
  kern_set_debug(true);
  kern_module *m = load("oob.kern", oob_src);
  kern_array *a = arr1(KERN_INT32, 10);
  int32_t v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  kern_array_write(a, v, sizeof v);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "check"), cpu(), KERN_DIM1(10), a), KERN_ERR_BOUNDS);
  cr_assert_str_eq(kern_last_error(),
                   "assertion failed in kernel 'check' at oob.kern:7 (thread 5)");
  cr_assert_eq(KERN_LAUNCH(kernel(m, "check"), cpu(), KERN_DIM1(5), a), KERN_OK, "%s",
               kern_last_error());
  kern_array_free(a);
  kern_module_free(m);
}

Test(debug, parallel_out_of_bounds_reports_one) {
  kern_set_debug(true);
  setenv("KERN_NUM_THREADS", "4", 1);
  rt_config_reload();
  kern_module *m = load("oob.kern", oob_src);
  int64_t n = 1 << 20;
  kern_array *a = arr1(KERN_FLOAT32, n);
  int64_t half = n / 2;
  kern_array *v = kern_array_view(a, 1, &half, &half);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "shift"), cpu(), KERN_DIM1(half), v), KERN_ERR_BOUNDS);
  char want[128];
  snprintf(want, sizeof want, "index [%lld] is outside shape [%lld]", (long long)half,
           (long long)half);
  cr_assert(strstr(kern_last_error(), want), "%s", kern_last_error());
  kern_array_free(v), kern_array_free(a);
  kern_module_free(m);
}

Test(debug, release_modules_have_no_checks) {
  kern_set_debug(false);
  kern_module *m = load("oob.kern", oob_src);
  int64_t n = 10, big = 11;
  kern_array *a = arr1(KERN_FLOAT32, big);
  kern_array *v = kern_array_view(a, 1, (int64_t[]){0}, &n);
  /* Writes a[10], which exists in the parent: no check, no crash. */
  cr_assert_eq(KERN_LAUNCH(kernel(m, "shift"), cpu(), KERN_DIM1(10), v), KERN_OK, "%s",
               kern_last_error());
  kern_array_free(v), kern_array_free(a);
  kern_module_free(m);
}
