/* test_nvrtc.c: every kernel of the test suite compiles through NVRTC.
 *
 * Runs on machines without a GPU (CI has the CUDA toolkit): each fixture of
 * tests/kern/ok and tests/kern/run is emitted as CUDA and compiled to PTX for
 * sm_90, in release mode and in debug mode with verify_fp. Also: tiled kernels that need exactly a
 * GPU block's shared memory by the checker's count (frontend/check_tile_rules.c)
 * compile to sm_90 machine code, whose assembler refuses a kernel with more
 * static shared memory than that. Without NVRTC it skips, saying so. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc.h"
#include "backend.h"
#include "toolchain.h"
#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"

static int compile_dir(const char *dir, bool debug, int *count) {
  char **files;
  int n = th_list(dir, ".kern", &files), failed = 0;
  for (int i = 0; i < n; i++) {
    FrontResult r = front_compile(files[i], NULL, 0);
    cr_expect(r.ok, "%s does not check", files[i]);
    EmitOptions o = {.debug = debug, .line_directives = true, .verify_fp = debug};
    char *src = r.ok ? emit_program(r.prog, EMIT_CUDA, &o) : NULL, *out = NULL;
    size_t len;
    bool is_ptx;
    if (src && tc_nvrtc_compile(src, files[i], 90, false, debug, &out, &len, &is_ptx) != KERN_OK) {
      failed++;
      cr_log_error("%s (debug=%d): %s", files[i], debug, kern_last_error());
    }
    if (out) cr_expect(is_ptx && strstr(out, ".entry"), "%s: no PTX entry", files[i]);
    free(out);
    free(src);
    front_free(r.prog);
    free(files[i]);
  }
  free(files);
  *count += n;
  return failed;
}

Test(nvrtc, every_fixture_compiles_to_ptx, .timeout = 900) {
  const char *why;
  if (!tc_nvrtc_load(&why))
    cr_skip_test("NVRTC not available (%s): CUDA compile checks skipped", why);
  int count = 0, failed = 0;
  for (int debug = 0; debug < 2; debug++) {
    failed += compile_dir(KERN_TESTS_DIR "/kern/ok", debug, &count);
    failed += compile_dir(KERN_TESTS_DIR "/kern/run", debug, &count);
  }
  cr_log_info("NVRTC %d: %d compiles, %d failed", tc_nvrtc_version(), count, failed);
  cr_expect_eq(failed, 0, "%d of %d NVRTC compiles failed", failed, count);
  cr_expect_gt(count, 0);
}

/* ---- the checker's count of tile storage against the GPU's ------------------------------ */

/* Kernels of tiles of n floats; each op needs scratch of its own. */
static const char *const at_limit_ops[] = {
    "tile_store(o, 0, tile_scan_inclusive(t));",
    "tile_store(o, 0, tile_scan_exclusive(add, t, 0.5f));",
    "o[0] = tile_sum(t * 2.0f);",
    "o[0] = float(tile_argmin(t));",
    "tile_store(o, 0, tile_max(tile_reshape<1, N>(t), 0));",
    "tile<float, N> v = t * 2.0f; tile_sort(t, v); tile_store(o, 0, t + v);",
    "tile_store(o, 0, twice(t));",
};
enum { AT_LIMIT_OPS = sizeof at_limit_ops / sizeof at_limit_ops[0] };

/* A module of one kernel per op over tiles of n floats, kernel k padded with a tile of
 * pad[k] int8 elements (none when 0). */
static char *at_limit_module(int n, const int64_t *pad) {
  size_t cap = 8192, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len,
                          "const int N = %d;\n"
                          "float add(float a, float b) { return a + b; }\n"
                          "tile<float, N> twice(tile<float, N> a) { return a * 2.0f; }\n",
                          n);
  for (int k = 0; k < AT_LIMIT_OPS; k++) {
    len += (size_t)snprintf(s + len, cap - len,
                            "kernel void k%d(const float[] x, float[] o, int8[] y) {\n"
                            "  tile<float, N> t = tile_load<N>(x, 0);\n  %s\n",
                            k, at_limit_ops[k]);
    if (pad[k] > 0)
      len += (size_t)snprintf(s + len, cap - len,
                              "  tile<int8, %lld> pad = tile_load<%lld>(y, 0);\n"
                              "  tile_store(y, 0, pad);\n",
                              (long long)pad[k], (long long)pad[k]);
    len += (size_t)snprintf(s + len, cap - len, "}\n");
  }
  return s;
}

/* Each kernel's tile storage by the checker's count (-1: the module does not check). */
static void counted(const char *src, int64_t *total) {
  FrontResult r = front_compile("at_limit.kern", src, strlen(src));
  for (int k = 0; k < AT_LIMIT_OPS; k++) total[k] = -1;
  for (int k = 0; r.ok && k < r.prog->nkernels; k++)
    total[atoi(r.prog->kernels[k]->name + 1)] = r.prog->kernels[k]->tile_total;
  front_free(r.prog);
}

Test(nvrtc, tiled_kernels_the_checker_fits_fit_a_gpu_block, .timeout = 600) {
  const char *why;
  if (!tc_nvrtc_load(&why))
    cr_skip_test("NVRTC not available (%s): CUDA compile checks skipped", why);
  static const int sizes[] = {1025, 3071};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    int64_t pad[AT_LIMIT_OPS] = {0}, total[AT_LIMIT_OPS];
    char *src = at_limit_module(sizes[i], pad);
    counted(src, total);
    free(src);
    for (int k = 0; k < AT_LIMIT_OPS; k++) {
      cr_assert_geq(total[k], 0, "n = %d: the module does not check", sizes[i]);
      cr_assert_leq(total[k], RT_TILE_SHARED_LIMIT, "n = %d, k%d: %lld bytes", sizes[i], k,
                    (long long)total[k]);
      pad[k] = RT_TILE_SHARED_LIMIT - total[k]; /* an int8 tile fills the rest */
    }
    src = at_limit_module(sizes[i], pad);
    counted(src, total);
    for (int k = 0; k < AT_LIMIT_OPS; k++)
      cr_expect_eq(total[k], RT_TILE_SHARED_LIMIT, "n = %d, k%d: %lld bytes", sizes[i], k,
                   (long long)total[k]);
    FrontResult r = front_compile("at_limit.kern", src, strlen(src));
    cr_assert(r.ok, "n = %d: the padded module does not check", sizes[i]);
    EmitOptions o = {.debug = false, .line_directives = true};
    char *cuda = emit_program(r.prog, EMIT_CUDA, &o), *out = NULL;
    size_t len;
    bool is_ptx;
    cr_assert_not_null(cuda);
    int st = tc_nvrtc_compile(cuda, "at_limit.kern", 90, true, false, &out, &len, &is_ptx);
    cr_expect_eq(st, KERN_OK, "n = %d: %s", sizes[i], st == KERN_OK ? "" : kern_last_error());
    cr_expect(st != KERN_OK || !is_ptx, "NVRTC gave PTX, not sm_90 code: nothing was checked");
    free(out);
    free(cuda);
    front_free(r.prog);
    free(src);
  }
}

/* ---- a k loop handed whole to the GPU (codegen/emit_mmloop.c) ------------------------------- */

static const char *const k_loop = "kernel void mm(float[,] a, float[,] b, float[,] c) {\n"
                                  "  int64 i0 = int64(tid(0)) * 128;\n"
                                  "  tile<float, 128, 128> acc = tile_zeros<float, 128, 128>();\n"
                                  "  for (int64 k = 0; k < shape(a, 1); k += 32) {\n"
                                  "    tile<float, 128, 32> ta = tile_load<128, 32>(a, i0, k);\n"
                                  "    tile<float, 32, 128> tb = tile_load<32, 128>(b, k, 0);\n"
                                  "%s"
                                  "    acc = %s(ta, tb, acc);\n"
                                  "  }\n"
                                  "  tile_store(c, i0, 0, acc);\n"
                                  "}\n";

/* The CUDA text of k_loop with `extra` in its body and `product` its product. */
static char *k_loop_cuda(const char *extra, const char *product) {
  char src[1024];
  snprintf(src, sizeof src, k_loop, extra, product);
  FrontResult r = front_compile("k_loop.kern", src, strlen(src));
  cr_assert(r.ok, "k_loop.kern does not check");
  EmitOptions o = {.line_directives = true};
  char *cuda = emit_program(r.prog, EMIT_CUDA, &o);
  front_free(r.prog);
  cr_assert_not_null(cuda);
  return cuda;
}

Test(nvrtc, a_matmul_k_loop_gets_the_gpu_routine_and_its_block_s_entries, .timeout = 300) {
  char *cuda = k_loop_cuda("", "tile_matmul");
  cr_expect(strstr(cuda, "if (KN_MMLOOP(exact_f32, 128, 128, 32, "), "no KN_MMLOOP guard");
  cr_expect(strstr(cuda, "__launch_bounds__(256, 2) kk_mm_cuda_dense_mm("), "no 256 entry");
  cr_expect(strstr(cuda, "__launch_bounds__(1024) kk_mm_cuda_dense("), "no 1024 entry");
  const char *why;
  if (tc_nvrtc_load(&why)) {
    char *out = NULL;
    size_t len;
    bool is_ptx;
    int st = tc_nvrtc_compile(cuda, "k_loop.kern", 90, true, false, &out, &len, &is_ptx);
    cr_expect_eq(st, KERN_OK, "%s", st == KERN_OK ? "" : kern_last_error());
    free(out);
  } else
    cr_log_warn("NVRTC not available (%s): the k loop's CUDA was not compiled", why);
  free(cuda);
  /* FAST: warps of 64 x 64, so blocks of 128 threads with up to 255 registers */
  cuda = k_loop_cuda("", "tile_matmul_fast");
  cr_expect(strstr(cuda, "if (KN_MMLOOP(fast_f32, 128, 128, 32, "), "no FAST KN_MMLOOP guard");
  cr_expect(strstr(cuda, "__launch_bounds__(128, 2) kk_mm_cuda_dense_mm("), "no 128 entry");
  free(cuda);
  /* a loop that does anything else runs as written, with no _mm entries */
  cuda = k_loop_cuda("    ta = ta * 2.0f;\n", "tile_matmul");
  cr_expect(!strstr(cuda, "KN_MMLOOP(exact"), "a loop with another statement was taken");
  cr_expect(!strstr(cuda, "_mm("), "_mm entries without a loop to run");
  free(cuda);
}
