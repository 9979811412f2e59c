/* test_kernc.c: the kernc command line: exit codes, stages, targets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Runs kernc with args; returns its exit status and output. */
static int kernc(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s %s", KERNC_PATH, args);
  return th_run(cmd, out);
}

#define FIX(p) KERN_TESTS_DIR "/kern/" p

Test(kernc, check_clean_file_exits_0) {
  char *out;
  cr_expect_eq(kernc("check " FIX("run/saxpy.kern"), &out), 0, "%s", out);
  cr_expect_str_empty(out);
  free(out);
}

Test(kernc, check_errors_exit_1_with_location_line_and_caret) {
  char path[] = "/tmp/kernc-test-XXXXXX.kern", *out;
  int fd = mkstemps(path, 5);
  const char src[] = "kernel void k(int[] a) {\n    a[0] = nope;\n    a[1] = 1.5;\n}\n";
  cr_assert(fd >= 0 && write(fd, src, sizeof src - 1) == (ssize_t)(sizeof src - 1));
  close(fd);
  char args[256];
  snprintf(args, sizeof args, "check --no-color %s", path);
  cr_expect_eq(kernc(args, &out), 1, "%s", out);
  cr_expect(strstr(out, ":2:12: error: ") && strstr(out, "nope"), "first error at 2:12: %s", out);
  cr_expect(strstr(out, ":3:12: error: "), "second error reported too: %s", out);
  cr_expect(strstr(out, "    a[0] = nope;\n           ^~~~"), "source line and caret: %s", out);
  free(out);
  unlink(path);
}

Test(kernc, check_reports_a_float_constant_as_an_integer_operand) {
  char *out;
  cr_expect_eq(
      kernc("check --no-color " KERN_TESTS_DIR "/kern/bad/float_constant_int_operand.kern", &out),
      1, "%s", out);
  cr_expect(strstr(out, ":6:25: error: float constant 2.0 used as an int32 operand of '/' (an "
                        "integer division)\n    a[i] = float(b[i] / 2.0);"),
            "%s", out);
  cr_expect(strstr(out, "note: kern does not convert integers to floats implicitly"), "%s", out);
  free(out);
}

Test(kernc, bad_usage_exits_2) {
  char *out;
  cr_expect_eq(kernc("", &out), 2);
  free(out);
  cr_expect_eq(kernc("frobnicate x.kern", &out), 2);
  cr_expect(strstr(out, "unknown command"), "%s", out);
  free(out);
  cr_expect_eq(kernc("check --bogus " FIX("run/saxpy.kern"), &out), 2);
  cr_expect(strstr(out, "unknown option '--bogus'"), "%s", out);
  free(out);
  cr_expect_eq(kernc("emit --target=fortran " FIX("run/saxpy.kern"), &out), 2);
  free(out);
  cr_expect_eq(kernc("check", &out), 2);
  free(out);
}

Test(kernc, missing_file_is_a_user_error) {
  char *out;
  cr_expect_eq(kernc("check /nonexistent/x.kern", &out), 1);
  cr_expect(strstr(out, "cannot read"), "%s", out);
  free(out);
}

Test(kernc, help_and_version) {
  char *out;
  cr_expect_eq(kernc("--help", &out), 0);
  cr_expect(strstr(out, "usage: kernc"), "%s", out);
  free(out);
  cr_expect_eq(kernc("--version", &out), 0);
  cr_expect(strncmp(out, "kernc ", 6) == 0, "%s", out);
  free(out);
}

Test(kernc, emit_c_has_entries_and_line_directives) {
  char *out;
  cr_expect_eq(kernc("emit --target=c " FIX("run/saxpy.kern"), &out), 0);
  cr_expect(strstr(out, "void kk_saxpy_range(") && strstr(out, "void kk_saxpy_range_dense("),
            "entries");
  cr_expect(strstr(out, "#line 9 \"") != NULL, "no #line for the kernel body");
  free(out);
}

Test(kernc, emit_cuda_has_global_entries) {
  char *out;
  cr_expect_eq(kernc("emit --target=cuda " FIX("run/saxpy.kern"), &out), 0);
  cr_expect(strstr(out, "extern \"C\" __global__ void kk_saxpy_cuda("), "cuda entry");
  free(out);
}

Test(kernc, emit_ast_is_typed) {
  char *out;
  cr_expect_eq(kernc("emit --target=ast " FIX("run/saxpy.kern"), &out), 0);
  cr_expect(strstr(out, "kernel saxpy") && strstr(out, "float32"), "%s", out);
  free(out);
}

Test(kernc, dump_every_stage) {
  char *out;
  cr_expect_eq(kernc("--dump=tokens,ast,types,c,cuda " FIX("run/saxpy.kern"), &out), 0);
  cr_expect(strstr(out, "keyword 'kernel'") || strstr(out, "kernel"), "tokens");
  cr_expect(strstr(out, "kk_saxpy_range") && strstr(out, "kk_saxpy_cuda"), "c and cuda");
  free(out);
  cr_expect_eq(kernc("--dump=tokens,bogus " FIX("run/saxpy.kern"), &out), 2);
  free(out);
}

Test(kernc, emit_ptx_for_an_arch) {
  char *out;
  int rc = kernc("emit --target=ptx --arch=sm_80 " FIX("run/saxpy.kern"), &out);
  if (rc != 0 && strstr(out, "NVRTC")) cr_skip_test("NVRTC not available: %s", out);
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, ".target sm_80") && strstr(out, ".entry kk_saxpy_cuda"), "ptx");
  free(out);
  cr_expect_eq(kernc("emit --target=ptx --arch=sm_9 " FIX("run/saxpy.kern"), &out), 2);
  free(out);
}
