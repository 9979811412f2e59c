/* test_aot.c: kernc build: the header and object it writes, linked into C and
 * C++ programs that run with no C compiler, no NVRTC and no cache; the
 * embedded GPU images; the runtime's checks of embedded tables (ABI version,
 * image choice); and failures that must leave no partial output.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvrtc.h"
#include "toolchain.h"
#include "harness.h"
#include "core.h"

#define AOT_DIR KERN_TESTS_DIR "/aot"

#ifndef KERN_TEST_SANITIZE
#define KERN_TEST_SANITIZE ""
#endif
#ifndef KERN_TEST_CC
#define KERN_TEST_CC "cc"
#endif
/* Flags every program linked with libkern.a needs when it was sanitized. */
#define SANITIZE_FLAGS (*KERN_TEST_SANITIZE ? "-fsanitize=" KERN_TEST_SANITIZE : "")

/* ---- helpers ------------------------------------------------------------------- */

static char *tmp_dir(void) {
  char *d = strdup("/tmp/kern-aot-XXXXXX");
  cr_assert(mkdtemp(d), "mkdtemp");
  return d;
}

static void rm_rf(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
  th_run(cmd, NULL);
}

/* Runs a printf-formatted shell command; its status, output in *out. */
static int sh(char **out, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  char *o = NULL;
  int rc = th_run(cmd, &o);
  if (out)
    *out = o;
  else
    free(o);
  return rc;
}

/* The entries of a directory, sorted, space-separated ("" when empty). */
static char *listing(const char *dir) {
  char *out;
  sh(&out, "ls -A '%s' | tr '\\n' ' '", dir);
  return out;
}

static bool exists(const char *dir, const char *name) {
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return access(p, F_OK) == 0;
}

/* libkern.a beside the test binaries: <dir of this executable>/../libkern.a */
static const char *libkern(void) {
  static char path[4200];
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cr_assert(n > 0);
  exe[n] = 0;
  *strrchr(exe, '/') = 0;
  snprintf(path, sizeof path, "%s/../libkern.a", exe);
  cr_assert(access(path, R_OK) == 0, "no %s", path);
  return path;
}

/* The first CUDA device's arch (e.g. 90), or 0 without one. */
static int cuda_arch(void) {
  kern_device *d = kern_device_get("cuda:0");
  kern_device_info info;
  kern_clear_error();
  if (!d || kern_device_info_get(d, &info)) return 0;
  return info.sm_major * 10 + info.sm_minor;
}

/* kernc build of tests/aot/NAME.kern into dir/NAME.{h,o}: GPU code for the
 * local GPU when there is one, else CPU code only (faster). */
static void build(const char *dir, const char *name) {
  char *out, gpu[64] = "--no-cuda";
  int arch = cuda_arch();
  if (arch) snprintf(gpu, sizeof gpu, "--arch=sm_%d", arch);
  int rc = sh(&out, "%s build %s/%s.kern -o %s/%s %s", KERNC_PATH, AOT_DIR, name, dir, name, gpu);
  cr_assert_eq(rc, 0, "kernc build %s: %s", name, out);
  cr_assert(exists(dir, "aot_main.h") || strcmp(name, "aot_main"));
  free(out);
}

/* The C compiler libkern was built with, or its C++ sibling. */
static const char *compiler(bool cxx) {
  if (!cxx) return KERN_TEST_CC;
  return strstr(KERN_TEST_CC, "clang") ? "clang++" : "c++";
}

static void compile_host(const char *dir, bool cxx, const char *exe) {
  char *out;
  int rc = sh(
      &out,
      "%s %s -Wall -Wextra -Werror %s -I%s/include -I%s %s %s/host.c %s %s/aot_main.o %s/aot_other.o %s "
      "-lpthread -ldl -lm -o %s/%s",
      compiler(cxx), cxx ? "-std=c++17" : "-std=c11", SANITIZE_FLAGS, KERN_SOURCE_DIR, dir,
      cxx ? "-x c++" : "", AOT_DIR, cxx ? "-x none" : "", dir, dir, libkern(), dir, exe);
  cr_assert_eq(rc, 0, "%s failed on host.c with the generated headers:\n%s", compiler(cxx), out);
  free(out);
}

/* Runs the host program with no compiler, no NVRTC and an empty, read-only cache. */
static void run_host(const char *dir, const char *exe, const char *device) {
  char cache[4200], *out;
  snprintf(cache, sizeof cache, "%s/cache-%s-%s", dir, exe, device); /* one per run */
  cr_assert_eq(mkdir(cache, 0500), 0);
  int rc =
      sh(&out, "KERN_CC=false KERN_NVRTC= KERN_CACHE_DIR=%s %s/%s %s", cache, dir, exe, device);
  char want[64];
  snprintf(want, sizeof want, "aot ok on %s", device);
  cr_expect_eq(rc, 0, "%s on %s: %s", exe, device, out);
  cr_expect(strstr(out, want), "%s", out);
  free(out);
  char *ls = listing(cache);
  cr_expect_str_empty(ls, "the cache was written: %s", ls);
  free(ls);
}

/* ---- programs linked with AOT modules ---------------------------------------------------- */

Test(aot, host_program_in_c_and_cxx_runs_without_compiler_nvrtc_or_cache, .timeout = 300) {
  char *dir = tmp_dir();
  build(dir, "aot_main");
  build(dir, "aot_other");
  compile_host(dir, false, "host_c");
  compile_host(dir, true, "host_cxx");
  run_host(dir, "host_c", "cpu");
  run_host(dir, "host_cxx", "cpu");
  if (cuda_arch()) {
    run_host(dir, "host_c", "cuda:0");
    run_host(dir, "host_cxx", "cuda:0");
  }
  rm_rf(dir);
  free(dir);
}

/* aot_fp built into dir/SUB with FLAGS, linked with host_fp.c, run on every
 * device here with the expectation MODE ("checked" or "unchecked"). */
static void fp_build_and_run(const char *dir, const char *sub, const char *flags,
                             const char *mode) {
  char *out, gpu[64] = "--no-cuda";
  if (cuda_arch()) snprintf(gpu, sizeof gpu, "--arch=sm_%d", cuda_arch());
  int rc = sh(&out, "mkdir -p %s/%s && %s build %s/aot_fp.kern -o %s/%s/aot_fp %s %s", dir, sub,
              KERNC_PATH, AOT_DIR, dir, sub, gpu, flags);
  cr_assert_eq(rc, 0, "kernc build %s: %s", flags, out);
  free(out);
  rc = sh(&out,
          "%s -std=c11 -Wall -Wextra -Werror %s -I%s/include -I%s/%s %s/host_fp.c %s/%s/aot_fp.o "
          "%s -lpthread -ldl -lm -o %s/%s/host",
          KERN_TEST_CC, SANITIZE_FLAGS, KERN_SOURCE_DIR, dir, sub, AOT_DIR, dir, sub, libkern(),
          dir, sub);
  cr_assert_eq(rc, 0, "host_fp.c: %s", out);
  free(out);
  const char *devices[] = {"cpu", cuda_arch() ? "cuda:0" : NULL};
  for (int i = 0; i < 2 && devices[i]; i++) {
    rc = sh(&out, "KERN_CC=false KERN_NVRTC= %s/%s/host %s %s", dir, sub, devices[i], mode);
    cr_expect_eq(rc, 0, "%s build on %s: %s", mode, devices[i], out);
    cr_expect(strstr(out, "fp ok on"), "%s", out);
    free(out);
  }
}

/* --verify-fp is written into the object: its module checks float stores,
 * where the same source built without it stores the infinity. */
Test(aot, verify_fp_is_built_in, .timeout = 300) {
  char *dir = tmp_dir();
  fp_build_and_run(dir, "checked", "--verify-fp", "checked");
  fp_build_and_run(dir, "unchecked", "", "unchecked");
  rm_rf(dir);
  free(dir);
}

Test(aot, header_declares_typed_launchers_and_checked_structs) {
  char *dir = tmp_dir(), path[4200];
  build(dir, "aot_main");
  snprintf(path, sizeof path, "%s/aot_main.h", dir);
  char *h = th_read_file(path, NULL);
  cr_assert(h);
  cr_expect(strstr(h, "kern_status aot_main_saxpy_launch(kern_device *device, kern_dims dims,\n"
                      "    kern_array *x, kern_array *y, float a)"),
            "%s", h);
  cr_expect(strstr(h, "aot_main_move_launch(kern_device *device, kern_dims dims,\n"
                      "    kern_array *ps, kern_vec3 delta, aot_main_Wrapped w)"),
            "%s", h);
  cr_expect(strstr(h, "int64_t base, uint8_t step,\n    bool neg)"), "%s", h);
  cr_expect(strstr(h, "kern_mat33 m, kern_float16 h)"), "%s", h);
  cr_expect(strstr(h, "aot_main_nothing_launch(kern_device *device, kern_dims dims)"), "%s", h);
  cr_expect(strstr(h, "kern_module *aot_main_module(void);"), "%s", h);
  cr_expect(strstr(h, "sizeof(aot_main_Wrapped) == 32 && KERN_AOT_ALIGNOF_(aot_main_Wrapped) == 8"),
            "%s", h);
  cr_expect(strstr(h, "offsetof(aot_main_Wrapped, w) == 24"), "%s", h);
  /* Particle (from the import) is defined before Wrapped, which contains it. */
  cr_expect(strstr(h, "typedef struct aot_main_Particle") <
            strstr(h, "typedef struct aot_main_Wrapped"));
  free(h);
  rm_rf(dir);
  free(dir);
}

/* Kern names that are C or C++ keywords, or names the header itself uses. */
static const char keywords_kern[] =
    "struct module { int class; float new; };\n"
    "kernel void k(float[] template, module this, int device, float dims, float kern_args_) {\n"
    "    template[tid()] = float(this.class) + this.new + float(device) + dims + kern_args_;\n}\n";
static const char keywords_main[] =
    "#include \"kw.h\"\n"
    "int main(void) {\n"
    "  kern_device *d = kern_device_get(\"cpu\");\n"
    "  int64_t n = 4;\n"
    "  kern_array *a = kern_array_new(d, KERN_FLOAT32, 1, &n);\n"
    "  kw_module_ m = {1, 2.0f};\n"
    "  float out[4];\n"
    "  int bad = kw_k_launch(d, KERN_DIM1(4), a, m, 3, 4.0f, 5.0f) || kern_array_read(a, out, sizeof out);\n"
    "  kern_array_free(a);\n"
    "  return !bad && out[3] == 15.0f && kw_module() != NULL ? 0 : 1;\n}\n";

Test(aot, names_that_are_keywords_get_an_underscore_in_c_and_cxx) {
  char *dir = tmp_dir(), *out;
  char p[4200];
  snprintf(p, sizeof p, "%s/kw.kern", dir);
  FILE *f = fopen(p, "w");
  fputs(keywords_kern, f);
  fclose(f);
  snprintf(p, sizeof p, "%s/main.c", dir);
  f = fopen(p, "w");
  fputs(keywords_main, f);
  fclose(f);
  int rc = sh(&out, "%s build %s/kw.kern -o %s/kw --no-cuda", KERNC_PATH, dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  for (int cxx = 0; cxx < 2; cxx++) {
    rc = sh(
        &out,
        "%s %s -Wall -Wextra -Werror %s -I%s/include %s %s/main.c %s %s/kw.o %s -lpthread -ldl -lm "
        "-o %s/kw && KERN_CC=false %s/kw",
        compiler(cxx), cxx ? "-std=c++17" : "-std=c11", SANITIZE_FLAGS, KERN_SOURCE_DIR,
        cxx ? "-x c++" : "", dir, cxx ? "-x none" : "", dir, libkern(), dir, dir);
    cr_expect_eq(rc, 0, "%s: %s", cxx ? "C++" : "C", out);
    free(out);
  }
  rm_rf(dir);
  free(dir);
}

/* vec<T, N> and mat<T, M, N> without short names: structs the header defines. */
static const char vecn_kern[] =
    "struct S { mat<float64, 2, 3> m; int k; };\n"
    "kernel void k(float[] out, vec<int16, 3> v, S s) {\n"
    "    out[tid()] = float(v[-1]) + float(s.m[1][2]) + float(s.k);\n}\n";
static const char vecn_main[] =
    "#include \"vn.h\"\n"
    "int main(void) {\n"
    "  kern_device *d = kern_device_get(\"cpu\");\n"
    "  int64_t n = 2;\n"
    "  kern_array *a = kern_array_new(d, KERN_FLOAT32, 1, &n);\n"
    "  vn_Vi16x3 v = {{1, 2, 30}};\n"
    "  vn_S s = {{{{0, 0, 0}, {0, 0, 400}}}, 5};\n"
    "  float out[2];\n"
    "  int bad = vn_k_launch(d, KERN_DIM1(2), a, v, s) || kern_array_read(a, out, sizeof out);\n"
    "  kern_array_free(a);\n"
    "  return !bad && out[1] == 435.0f ? 0 : 1;\n}\n";

Test(aot, vec_and_mat_of_any_type_are_header_structs_in_c_and_cxx) {
  char *dir = tmp_dir(), *out;
  char p[4200];
  snprintf(p, sizeof p, "%s/vn.kern", dir);
  FILE *f = fopen(p, "w");
  fputs(vecn_kern, f);
  fclose(f);
  snprintf(p, sizeof p, "%s/main.c", dir);
  f = fopen(p, "w");
  fputs(vecn_main, f);
  fclose(f);
  int rc = sh(&out, "%s build %s/vn.kern -o %s/vn --no-cuda", KERNC_PATH, dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  for (int cxx = 0; cxx < 2; cxx++) {
    rc = sh(
        &out,
        "%s %s -Wall -Wextra -Werror %s -I%s/include %s %s/main.c %s %s/vn.o %s -lpthread -ldl -lm "
        "-o %s/vn && KERN_CC=false %s/vn",
        compiler(cxx), cxx ? "-std=c++17" : "-std=c11", SANITIZE_FLAGS, KERN_SOURCE_DIR,
        cxx ? "-x c++" : "", dir, cxx ? "-x none" : "", dir, libkern(), dir, dir);
    cr_expect_eq(rc, 0, "%s: %s", cxx ? "C++" : "C", out);
    free(out);
  }
  rm_rf(dir);
  free(dir);
}

/* A program that prints the table kernc build wrote, through kern_abi.h. */
static const char inspect_c[] =
    "#include <stdio.h>\n#include \"kern_abi.h\"\n"
    "extern const struct kern_embedded aot_other_embedded;\n"
    "int main(void) {\n"
    "  const struct kern_embedded *e = &aot_other_embedded;\n"
    "  printf(\"abi %u kernels %d files %d\\n\", e->abi_version, e->nkernels, e->nfiles);\n"
    "  for (int i = 0; i < e->nimages; i++)\n"
    "    printf(\"image %s_%d %.8s\\n\", e->images[i].is_ptx ? \"ptx\" : \"cubin\", e->images[i].arch,\n"
    "           e->images[i].is_ptx ? (const char *)e->images[i].data + 0 : (const char *)e->images[i].data + 1);\n"
    "  return 0;\n}\n";

Test(aot, object_embeds_cubins_for_each_arch_and_ptx_for_the_newest, .timeout = 120) {
  if (!tc_nvrtc_load(NULL)) cr_skip_test("NVRTC is not available");
  char *dir = tmp_dir(), path[4200], *out;
  int rc = sh(&out, "%s build %s/aot_other.kern -o %s/aot_other --arch=sm_90,sm_80", KERNC_PATH,
              AOT_DIR, dir);
  cr_assert_eq(rc, 0, "%s", out);
  cr_expect_str_empty(out, "no note when NVRTC is there: %s", out);
  free(out);
  snprintf(path, sizeof path, "%s/inspect.c", dir);
  FILE *f = fopen(path, "w");
  fputs(inspect_c, f);
  fclose(f);
  rc = sh(
      &out,
      "%s -std=c11 %s -I%s/stdlib %s/inspect.c %s/aot_other.o %s -lpthread -ldl -lm -o %s/inspect && %s/inspect",
      compiler(false), SANITIZE_FLAGS, KERN_SOURCE_DIR, dir, dir, libkern(), dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  /* CUBINs are ELF ("\x7f" "ELF", printed from byte 1); PTX starts with its header comment. */
  char head[64];
  snprintf(head, sizeof head, "abi %d kernels 1 files 1\n", KN_ABI_VERSION);
  cr_expect(strstr(out, head), "%s", out);
  cr_expect(strstr(out, "image cubin_90 ELF"), "%s", out);
  cr_expect(strstr(out, "image cubin_80 ELF"), "%s", out);
  cr_expect(strstr(out, "image ptx_90 //\n"), "%s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

Test(aot, without_nvrtc_the_object_has_cpu_code_and_a_note) {
  char *dir = tmp_dir(), *out;
  int rc =
      sh(&out, "KERN_NVRTC= %s build %s/aot_other.kern -o %s/aot_other", KERNC_PATH, AOT_DIR, dir);
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, "note:") && strstr(out, "CPU code only"), "%s", out);
  free(out);
  rc = sh(&out, "%s build %s/aot_other.kern -o %s/aot_other --no-cuda", KERNC_PATH, AOT_DIR, dir);
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect_str_empty(out, "--no-cuda is silent: %s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

/* ---- the runtime's checks of a table --------------------------------------------------------- */

static _Atomic int64_t ran;
static void count_range(const void *args, const kn_ctx *ctx, int64_t begin, int64_t end) {
  (void)args, (void)ctx;
  atomic_fetch_add(&ran, end - begin);
}

static const char crafted_src[] = "kernel void k(float[] x) {\n    x[tid()] = 1.0;\n}\n";
static const kn_embed_file crafted_files[] = {
    {"crafted.kern", crafted_src, sizeof crafted_src - 1}};
static const kn_embed_kernel crafted_kernels[] = {
    {"k", count_range, count_range, sizeof(kn_array)}};
static const unsigned char cubin80[] = "cubin-80", cubin86[] = "cubin-86", cubin90[] = "cubin-90",
                           ptx90[] = "ptx-compute-90";
static const kn_embed_image crafted_images[] = {{80, 0, cubin80, sizeof cubin80 - 1},
                                                {86, 0, cubin86, sizeof cubin86 - 1},
                                                {90, 0, cubin90, sizeof cubin90 - 1},
                                                {90, 1, ptx90, sizeof ptx90 - 1}};

#define CRAFTED(abi, nimages)                                                                      \
  {                                                                                                \
    KN_EMBED_MAGIC, (abi), KN_EMBED_LAYOUT, 0, "9.9.9", "crafted.kern", 1, 0, 1, (nimages),        \
        crafted_files, NULL, crafted_kernels, crafted_images                                       \
  }

static const kern_embedded crafted_ok = CRAFTED(KN_ABI_VERSION, 4);
static const kern_embedded crafted_new_abi = CRAFTED(KN_ABI_VERSION + 1, 4);
static const kern_embedded crafted_cpu_only = CRAFTED(KN_ABI_VERSION, 0);

Test(aot, runtime_refuses_a_table_built_for_another_abi_version) {
  cr_assert_null(kern_module_embedded(&crafted_new_abi));
  cr_expect_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
  const char *msg = kern_last_error();
  char want[128];
  snprintf(want, sizeof want, "for kern ABI version %d, but this libkern", KN_ABI_VERSION + 1);
  cr_expect(strstr(msg, want) && strstr(msg, "kernc 9.9.9") && strstr(msg, "crafted.kern") &&
                strstr(msg, "rebuild"),
            "%s", msg);
  /* The generated launchers report it too, and the right table still works. */
  cr_expect_eq(
      kern_launch_embedded(&crafted_new_abi, 0, kern_device_get("cpu"), KERN_DIM1(1), 0, NULL),
      KERN_ERR_UNSUPPORTED);
  cr_expect_not_null(kern_module_embedded(&crafted_ok), "%s", kern_last_error());
}

Test(aot, runtime_refuses_a_table_with_a_bad_magic) {
  kern_embedded bad = crafted_ok;
  bad.magic = 0x12345678;
  cr_expect_null(kern_module_embedded(&bad));
  cr_expect_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "not a module table written by kernc build"), "%s",
            kern_last_error());
}

Test(aot, cpu_launch_calls_the_embedded_entry_point) {
  kern_module *m = kern_module_embedded(&crafted_ok);
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_expect_eq(kern_module_embedded(&crafted_ok), m, "made once");
  int64_t n = 777;
  kern_array *x = kern_array_new(kern_device_get("cpu"), KERN_FLOAT32, 1, &n);
  atomic_store(&ran, 0);
  const void *args[] = {&x};
  cr_expect_eq(kern_launch_embedded(&crafted_ok, 0, kern_device_get("cpu"), KERN_DIM1(n), 1, args),
               KERN_OK, "%s", kern_last_error());
  cr_expect_eq(atomic_load(&ran), n);
  /* Misuse is reported, not crashed on. */
  cr_expect_eq(kern_launch_embedded(&crafted_ok, 1, kern_device_get("cpu"), KERN_DIM1(n), 1, args),
               KERN_ERR_INVALID_ARGUMENT);
  cr_expect_eq(kern_launch_embedded(&crafted_ok, 0, kern_device_get("cpu"), KERN_DIM1(n), 2, args),
               KERN_ERR_INVALID_ARGUMENT);
  const void *null_arg[] = {NULL};
  cr_expect_eq(
      kern_launch_embedded(&crafted_ok, 0, kern_device_get("cpu"), KERN_DIM1(n), 1, null_arg),
      KERN_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(kern_last_error(), "parameter 'x'"), "%s", kern_last_error());
  kern_array_free(x);
}

static char *image_for(const kern_embedded *e, int arch) {
  char *img = NULL;
  size_t len = 0;
  kern_status st = rt_embedded_gpu_image(kern_module_embedded(e), arch, &img, &len);
  if (st) return NULL;
  cr_expect_eq(strlen(img), len);
  return img;
}

Test(aot, gpu_image_is_the_matching_cubin_else_the_ptx) {
  cr_assert_not_null(kern_module_embedded(&crafted_ok), "%s", kern_last_error());
  struct {
    int arch;
    const char *want;
  } cases[] = {{80, "cubin-80"}, {86, "cubin-86"},        {89, "cubin-86"},       {87, "cubin-86"},
               {90, "cubin-90"}, {100, "ptx-compute-90"}, {120, "ptx-compute-90"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *img = image_for(&crafted_ok, cases[i].arch);
    cr_expect(img && !strcmp(img, cases[i].want), "sm_%d got %s", cases[i].arch,
              img ? img : kern_last_error());
    free(img);
  }
  cr_expect_null(image_for(&crafted_ok, 75));
  cr_expect_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
  cr_expect(strstr(kern_last_error(), "no GPU code that runs on sm_75") &&
                strstr(kern_last_error(), "sm_80, sm_86, sm_90, PTX compute_90") &&
                strstr(kern_last_error(), "--arch=sm_75"),
            "%s", kern_last_error());
  cr_expect_null(image_for(&crafted_cpu_only, 90));
  cr_expect(strstr(kern_last_error(), "has no GPU code"), "%s", kern_last_error());
}

/* ---- failures leave nothing behind ---------------------------------------------------------------- */

static void write_text(const char *dir, const char *name, const char *text) {
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  cr_assert(f);
  fputs(text, f);
  fclose(f);
}

static void expect_listing(const char *dir, const char *want) {
  char *ls = listing(dir);
  cr_expect_str_eq(ls, want, "directory holds: '%s'", ls);
  free(ls);
}

Test(aot, bad_input_exits_1_with_diagnostics_and_writes_nothing) {
  char *dir = tmp_dir(), *out;
  write_text(dir, "bad.kern", "kernel void k(float[] x) {\n    x[tid()] = nope;\n}\n");
  int rc = sh(&out, "%s build %s/bad.kern -o %s/bad --no-color", KERNC_PATH, dir, dir);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "bad.kern:2:16: error:"), "%s", out);
  free(out);
  rc = sh(&out, "%s build %s/missing.kern -o %s/missing", KERNC_PATH, dir, dir);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "cannot read"), "%s", out);
  free(out);
  expect_listing(dir, "bad.kern ");
  rm_rf(dir);
  free(dir);
}

Test(aot, unwritable_output_exits_1_and_writes_nothing) {
  char *dir = tmp_dir(), *out;
  write_text(dir, "file", "not a directory\n");
  int rc = sh(&out, "%s build %s/aot_other.kern -o %s/file/x --no-cuda", KERNC_PATH, AOT_DIR, dir);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "cannot write") && strstr(out, "file/x.h"), "%s", out);
  free(out);
  rc = sh(&out, "%s build %s/aot_other.kern -o %s/no/such/dir/x --no-cuda", KERNC_PATH, AOT_DIR,
          dir);
  cr_expect_eq(rc, 1, "%s", out);
  free(out);
  expect_listing(dir, "file ");
  rm_rf(dir);
  free(dir);
}

Test(aot, bad_usage_exits_2_and_writes_nothing) {
  char *dir = tmp_dir(), *out;
  const char *bad[] = {"-o %s/x --bogus",   "-o %s/x --arch=sm_9x", "-o %s/x --arch=",
                       "-o %s/x --name=1x", "-o %s/x --name=a-b",   "--no-cuda -o"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[4200];
    snprintf(args, sizeof args, bad[i], dir);
    int rc = sh(&out, "%s build %s/aot_other.kern %s", KERNC_PATH, AOT_DIR, args);
    cr_expect_eq(rc, 2, "%s: %s", args, out);
    free(out);
  }
  cr_expect_eq(sh(&out, "%s build %s/aot_other.kern", KERNC_PATH, AOT_DIR), 2, "no -o: %s", out);
  cr_expect(strstr(out, "-o PREFIX"), "%s", out);
  free(out);
  cr_expect_eq(sh(&out, "%s build -o %s/x", KERNC_PATH, dir), 2, "no file: %s", out);
  free(out);
  expect_listing(dir, "");
  rm_rf(dir);
  free(dir);
}

Test(aot, a_failing_compiler_keeps_the_old_outputs_and_leaves_no_temporaries) {
  char *dir = tmp_dir(), *out;
  write_text(dir, "m.h", "old header\n");
  write_text(dir, "m.o", "old object\n");
  int rc =
      sh(&out, "%s build %s/aot_other.kern -o %s/m --no-cuda --cc=false", KERNC_PATH, AOT_DIR, dir);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "the C compiler 'false' failed"), "%s", out);
  free(out);
  rc = sh(&out, "%s build %s/aot_other.kern -o %s/m --no-cuda --cpu-flags=-fno-such-flag-at-all",
          KERNC_PATH, AOT_DIR, dir);
  cr_expect_eq(rc, 1, "%s", out);
  free(out);
  rc = sh(&out, "%s build %s/aot_other.kern -o %s/m --no-cuda --cc=/no/such/cc", KERNC_PATH,
          AOT_DIR, dir);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "cannot run the C compiler"), "%s", out);
  free(out);
  expect_listing(dir, "m.h m.o ");
  char p[4200];
  snprintf(p, sizeof p, "%s/m.h", dir);
  char *h = th_read_file(p, NULL);
  cr_expect_str_eq(h, "old header\n");
  free(h);
  rm_rf(dir);
  free(dir);
}

Test(aot, cpu_flags_name_and_depfile) {
  char *dir = tmp_dir(), *out, p[4200];
#if defined(__x86_64__)
  const char *flags = "--cpu-flags='-march=x86-64-v2 -O2'";
#else
  const char *flags = "--cpu-flags=-O2";
#endif
  int rc = sh(&out, "%s build %s/aot_main.kern -o %s/3d-kernels --no-cuda %s --depfile=%s/deps.d",
              KERNC_PATH, AOT_DIR, dir, flags, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  expect_listing(dir, "3d-kernels.h 3d-kernels.o deps.d ");
  snprintf(p, sizeof p, "%s/3d-kernels.h", dir);
  char *h = th_read_file(p, NULL);
  cr_expect(strstr(h, "kern_module *m_3d_kernels_module(void);"), "the name is made an identifier");
  free(h);
  snprintf(p, sizeof p, "%s/deps.d", dir);
  char *d = th_read_file(p, NULL);
  cr_expect(d && strstr(d, "3d-kernels.o ") && strstr(d, "3d-kernels.h:") &&
                strstr(d, "/aot/aot_main.kern") && strstr(d, "/aot/aot_lib.kern"),
            "%s", d ? d : "(none)");
  free(d);
  rc =
      sh(&out, "%s build %s/aot_other.kern -o %s/other.o --name=renamed --no-cuda && nm %s/other.o",
         KERNC_PATH, AOT_DIR, dir, dir);
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, " renamed_module") && strstr(out, " renamed_embedded") &&
                strstr(out, "renamed_kk_scale_range"),
            "%s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

/* A right-nested sum 200 deep nests past clang's default 256 brackets in the
 * generated C; kernc build gives clang the room the runtime does. */
Test(aot, deeply_nested_expressions_build_with_clang) {
  char *dir = tmp_dir(), *out, p[4200];
  if (sh(NULL, "command -v clang >/dev/null") != 0) cr_skip_test("no clang on PATH: skipped");
  snprintf(p, sizeof p, "%s/deep.kern", dir);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fputs("kernel void deep(int[] a) {\n  a[0] = ", f);
  for (int i = 0; i < 200; i++) fputs("a[1] + (", f);
  fputs("a[1]", f);
  for (int i = 0; i < 200; i++) fputc(')', f);
  fputs(";\n}\n", f);
  fclose(f);
  int rc = sh(&out, "%s build %s -o %s/deep --no-cuda --cc=clang 2>&1", KERNC_PATH, p, dir);
  cr_expect_eq(rc, 0, "%.2000s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

/* ---- kernc embed: the source in the program, compiled at run time ------------------------- */

static const char embed_host[] =
    "#include <stdio.h>\n"
    "#include \"src.h\"\n"
    "int main(void) {\n"
    "  kern_module *m = src_load();\n"
    "  if (!m) { fprintf(stderr, \"%s\\n\", kern_last_error()); return 1; }\n"
    "  kern_device *d = kern_device_get(\"cpu\");\n"
    "  int64_t n = 4;\n"
    "  float x[4] = {1, 1, 1, 1};\n"
    "  kern_array *a = kern_array_new(d, KERN_FLOAT32, 1, &n);\n"
    "  if (!a || kern_array_write(a, x, sizeof x) ||\n"
    "      KERN_LAUNCH(kern_module_kernel(m, \"scale\"), d, KERN_DIM1(n), a, 3.0f) ||\n"
    "      kern_array_read(a, x, sizeof x)) {\n"
    "    fprintf(stderr, \"%s\\n\", kern_last_error());\n"
    "    return 1;\n"
    "  }\n"
    "  printf(\"embed ok: %s %d files %g\\n\", kern_module_name(m), src_nsources, x[3]);\n"
    "  kern_array_free(a);\n"
    "  kern_module_free(m);\n"
    "  return 0;\n"
    "}\n";

/* The module and its import travel inside the program: it runs where no
 * .kern file is, compiling them for this machine; names stay as given. */
Test(aot, embed_writes_the_sources_a_program_compiles_at_run_time, .timeout = 300) {
  char *dir = tmp_dir(), *out, p[4200];
  int rc = sh(&out, "cd %s && %s embed aot_main.kern -o %s/src --depfile=%s/src.d", AOT_DIR,
              KERNC_PATH, dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  char *ls = listing(dir);
  cr_expect_str_eq(ls, "src.c src.d src.h ", "%s", ls);
  free(ls);
  snprintf(p, sizeof p, "%s/src.d", dir);
  char *dep = th_read_file(p, NULL);
  cr_assert(dep);
  cr_expect(strstr(dep, "/src.c ") && strstr(dep, "/aot_main.kern") && strstr(dep, "/aot_lib.kern"),
            "%s", dep);
  free(dep);
  snprintf(p, sizeof p, "%s/host.c", dir);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fputs(embed_host, f);
  fclose(f);
  rc = sh(&out,
          "%s -std=c11 -Wall -Wextra -Werror %s -I%s/include -I%s %s/host.c %s/src.c %s "
          "-lpthread -ldl -lm -o %s/host",
          compiler(false), SANITIZE_FLAGS, KERN_SOURCE_DIR, dir, dir, dir, libkern(), dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  rc = sh(&out, "cd %s && mkdir cache && KERN_CACHE_DIR=%s/cache ./host", dir, dir);
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, "embed ok: aot_main.kern 2 files 6"), "%s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

Test(aot, embed_refuses_bad_usage_and_bad_source) {
  char *dir = tmp_dir(), *out, p[4200];
  cr_expect_eq(sh(&out, "%s embed %s/aot_main.kern 2>&1", KERNC_PATH, AOT_DIR), 2, "no -o: %s",
               out);
  free(out);
  cr_expect_eq(sh(&out, "%s embed -o %s/x 2>&1", KERNC_PATH, dir), 2, "no FILE: %s", out);
  free(out);
  snprintf(p, sizeof p, "%s/bad.kern", dir);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fputs("kernel void k(int[] a) { a[tid()] = nope; }\n", f);
  fclose(f);
  cr_expect_eq(sh(&out, "%s embed %s -o %s/bad 2>&1", KERNC_PATH, p, dir), 1, "%s", out);
  cr_expect(strstr(out, "bad.kern:1:"), "%s", out);
  free(out);
  char *ls = listing(dir);
  cr_expect_str_eq(ls, "bad.kern ", "nothing written: %s", ls);
  free(ls);
  rm_rf(dir);
  free(dir);
}
