/* test_kernc.c: the kernc command line: exit codes, stages, targets. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* verify_fp's atomics take the element's address computed for the check
 * (kn_p, kn_p<N> inside an expression): the index is evaluated once. */
Test(kernc, emit_verify_fp_atomics_use_the_checked_address) {
  char *out;
  cr_expect_eq(
      kernc("emit --target=c --verify-fp --no-line " FIX("run/verify_fp_atomics.kern"), &out), 0);
  cr_expect(strstr(out, "kn_atomic_max_f32(kn_p, "), "statement form: %.2000s", out);
  cr_expect(strstr(out, "kn_atomic_add_v2(kn_p, "), "a vector's statement form");
  bool numbered = false; /* kn_p<N>: the atomic whose old value is used */
  for (const char *p = out; (p = strstr(p, "kn_atomic_add_f32(kn_p")) != NULL; p++)
    numbered |= isdigit((unsigned char)p[22]) != 0;
  cr_expect(numbered, "the old value used");
  cr_expect(!strstr(out, "kn_atomic_max_f32(&"), "an atomic recomputes the element's address");
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

Test(kernc, every_command_takes_help) {
  const char *cmds[] = {"check", "emit", "build", "embed", "run", "info"};
  const char *option[] = {"--dump=STAGES",  "--target=T", "--depfile=FILE",
                          "--depfile=FILE", "--release",  "info"};
  char *out, args[64];
  for (int i = 0; i < 6; i++) {
    snprintf(args, sizeof args, "%s --help", cmds[i]);
    cr_expect_eq(kernc(args, &out), 0, "%s: %s", args, out);
    char want[64];
    snprintf(want, sizeof want, "usage: kernc %s", cmds[i]);
    cr_expect(strstr(out, want) && strstr(out, option[i]), "%s: %s", args, out);
    cr_expect(strstr(out, "man kernc"), "%s: no pointer to the manual: %s", args, out);
    free(out);
    snprintf(args, sizeof args, "help %s", cmds[i]);
    cr_expect_eq(kernc(args, &out), 0, "%s: %s", args, out);
    cr_expect(strstr(out, want), "%s: %s", args, out);
    free(out);
  }
  /* Anywhere after the command, with other arguments; only that command's text. */
  cr_expect_eq(kernc("run x.kern k --arg a=1 -h", &out), 0, "%s", out);
  cr_expect(strstr(out, "--release") && !strstr(out, "--depfile"), "%s", out);
  free(out);
  cr_expect_eq(kernc("--help", &out), 0);
  cr_expect(strstr(out, "info") && strstr(out, "man kernc") && strstr(out, "share/doc/kern"), "%s",
            out);
  free(out);
  cr_expect_eq(kernc("frobnicate --help", &out), 2, "%s", out);
  free(out);
}

Test(kernc, emit_defaults_to_c) {
  char *dflt, *c;
  cr_expect_eq(kernc("emit " FIX("run/saxpy.kern"), &dflt), 0, "%s", dflt);
  cr_expect_eq(kernc("emit --target=c " FIX("run/saxpy.kern"), &c), 0);
  cr_expect(strstr(dflt, "void kk_saxpy_range("), "%s", dflt);
  cr_expect_str_eq(dflt, c);
  free(dflt);
  free(c);
}

Test(kernc, dump_after_a_command_and_empty_dump) {
  char *out;
  cr_expect_eq(kernc("check --dump=tokens " FIX("run/saxpy.kern"), &out), 0, "%s", out);
  cr_expect(strstr(out, "'saxpy'"), "tokens printed: %s", out);
  free(out);
  cr_expect_eq(kernc("emit --target=cuda --dump=ast " FIX("run/saxpy.kern"), &out), 0, "%s", out);
  const char *ast = strstr(out, "kernel saxpy"), *cuda = strstr(out, "kk_saxpy_cuda");
  cr_expect(ast && cuda && ast < cuda, "the stages, then the target: %s", out);
  free(out);
  const char *bad[] = {"--dump= " FIX("run/saxpy.kern"),
                       "check --dump= " FIX("run/saxpy.kern"),
                       "emit --dump= " FIX("run/saxpy.kern"),
                       "check --dump " FIX("run/saxpy.kern"),
                       "check --dump=ast,nope " FIX("run/saxpy.kern"),
                       "build --dump=ast " FIX("run/saxpy.kern") " -o never-written",
                       "info --dump=ast"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(kernc(bad[i], &out), 2, "%s: %s", bad[i], out);
    free(out);
  }
}

static void write_bytes(const char *path, size_t n) {
  FILE *f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  for (size_t i = 0; i < n; i++) fputc('k', f);
  fclose(f);
}

Test(kernc, info_names_devices_compiler_nvrtc_and_cache) {
  char dir[] = "/tmp/kernc-info-XXXXXX", path[64], cmd[256], *out;
  cr_assert(mkdtemp(dir));
  chmod(dir, 0700);
  snprintf(path, sizeof path, "%s/a", dir);
  write_bytes(path, 1 << 20);
  snprintf(path, sizeof path, "%s/b", dir);
  write_bytes(path, 1 << 19);
  snprintf(cmd, sizeof cmd, "env KERN_CACHE_DIR=%s KERN_CC=cc %s info", dir, KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(strstr(out, "devices:\n  cpu ") && strstr(out, " threads, "), "%s", out);
  cr_expect(strstr(out, "C compiler: /") && strstr(out, "/cc ("), "the path and version: %s", out);
  cr_expect(strstr(out, "NVRTC:      "), "%s", out);
  char want[128];
  snprintf(want, sizeof want, "cache:      %s: 1.5 MiB in 2 files", dir);
  cr_expect(strstr(out, want), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "env KERN_CACHE_DIR=%s KERN_CC=/nonexistent/cc KERN_NVRTC= %s info",
           dir, KERNC_PATH);
  cr_expect_eq(th_run(cmd, &out), 0, "%s", out);
  cr_expect(strstr(out, "C compiler: none found"), "%s", out);
  cr_expect(strstr(out, "NVRTC:      none (") && strstr(out, "KERN_NVRTC"), "%s", out);
  free(out);
  cr_expect_eq(kernc("info extra.kern", &out), 2, "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  th_run(cmd, NULL);
}
