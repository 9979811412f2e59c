/* test_support.c: the support layer under everything: the string buffer,
 * formatted strings, whole-file reads, the token tables, the process runner
 * (output, status, working directory, time limits, path resolution) and the
 * toolchain's rule for the C compiler.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "file.h"
#include "proc.h"
#include "str.h"
#include "token.h"
#include "toolchain.h"

static char *tmp_dir(void) {
  char *d = str_printf("%s/kern-support-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(d));
  return d;
}

static void write_script(const char *path, const char *text) {
  cr_assert(file_write(path, O_CREAT | O_TRUNC, text, strlen(text)));
  cr_assert_eq(chmod(path, 0700), 0);
}

/* ---- buffers and strings -------------------------------------------------------- */

Test(buf, appends_format_and_insert) {
  Buf b = {0};
  cr_assert_null(b.s);
  buf_puts(&b, "ab");
  buf_printf(&b, "-%d-", 42);
  buf_add(&b, "xyz", 2);
  cr_assert_str_eq(b.s, "ab-42-xy");
  buf_insert(&b, 2, "[]");
  cr_assert_str_eq(b.s, "ab[]-42-xy");
  cr_assert_eq(b.len, strlen(b.s));
  buf_free(&b);
  cr_assert_null(b.s);
  cr_assert_eq(b.len, 0);
}

Test(buf, long_formats_grow_the_buffer) {
  Buf b = {0};
  char big[5000];
  memset(big, 'q', sizeof big - 1);
  big[sizeof big - 1] = 0;
  for (int i = 0; i < 3; i++) buf_printf(&b, "%s|%d", big, i);
  cr_assert_eq(b.len, 3 * (sizeof big - 1 + 2));
  cr_assert_eq(b.s[sizeof big - 1], '|');
  cr_assert_str_eq(b.s + b.len - 2, "|2");
  cr_assert_not(b.oom);
  buf_free(&b);
}

Test(str, printf_and_dup) {
  char *s = str_printf("%s=%05.1f", "x", 2.5);
  cr_assert_str_eq(s, "x=002.5");
  char *d = str_dup(s);
  cr_assert_str_eq(d, s);
  cr_assert_neq(d, s);
  free(s);
  free(d);
}

/* ---- files -------------------------------------------------------------------------- */

Test(file, reads_whole_files_up_to_a_limit) {
  char *dir = tmp_dir(), *path = str_printf("%s/f", dir);
  char data[200000];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (char)('a' + i % 26);
  cr_assert(file_write(path, O_CREAT | O_EXCL, data, sizeof data));
  size_t len = 0;
  char *got = file_read(path, sizeof data, &len);
  cr_assert_not_null(got);
  cr_assert_eq(len, sizeof data);
  cr_assert_eq(memcmp(got, data, len), 0);
  cr_assert_eq(got[len], 0, "NUL-terminated");
  free(got);
  errno = 0;
  cr_assert_null(file_read(path, sizeof data - 1, &len));
  cr_assert_eq(errno, EFBIG);
  cr_assert_not(file_write(path, O_CREAT | O_EXCL, "x", 1), "O_EXCL refuses an existing file");
  unlink(path);
  cr_assert_null(file_read(path, 100, &len));
  cr_assert_eq(errno, ENOENT);
  rmdir(dir);
  free(path);
  free(dir);
}

/* ---- tokens ----------------------------------------------------------------------------- */

Test(token, one_table_for_spellings_and_names) {
  cr_assert_str_eq(tok_spelling(TK_SHLEQ), "<<=");
  cr_assert_str_eq(tok_kind_name(TK_SHLEQ), "'<<='");
  cr_assert_str_eq(tok_spelling(TK_WHILE), "while");
  cr_assert_str_eq(tok_kind_name(TK_WHILE), "keyword 'while'");
  cr_assert_str_eq(tok_spelling(TK_IDENT), "?");
  cr_assert_str_eq(tok_kind_name(TK_TYPENAME), "type name");
  cr_assert_eq(tok_compound_op(TK_CARETEQ), TK_CARET);
  cr_assert_eq(tok_compound_op(TK_ASSIGN), TK_EOF);
  for (int k = 0; k < TK__COUNT; k++) {
    const char *s = tok_spelling((TokKind)k), *n = tok_kind_name((TokKind)k);
    cr_assert(strcmp(n, "token") != 0, "token %d has a name", k);
    if (strcmp(s, "?") != 0) cr_assert(strstr(n, s), "%s names %s", n, s);
  }
}

/* ---- the process runner ----------------------------------------------------------------------- */

Test(proc, captures_output_and_status) {
  const char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
  Buf out = {0};
  ProcResult r;
  cr_assert_not(proc_run(&(ProcSpec){.argv = argv, .output = &out}, &r));
  cr_assert(r.started);
  cr_assert_eq(r.status, 3);
  cr_assert_eq(r.signal, 0);
  cr_assert_not(r.timed_out);
  cr_assert_str_eq(out.s, "out\nerr\n");
  buf_free(&out);
}

Test(proc, caps_captured_output) {
  const char *argv[] = {"sh", "-c", "yes | head -c 100000", NULL};
  Buf out = {0};
  ProcResult r;
  cr_assert(proc_run(&(ProcSpec){.argv = argv, .output = &out, .max_output = 5000}, &r));
  cr_assert_geq(out.len, 5000);
  cr_assert_lt(out.len, 100000, "reading stops keeping past the cap");
  buf_free(&out);
}

Test(proc, a_missing_program_does_not_start) {
  const char *argv[] = {"kern-no-such-program-anywhere", NULL};
  ProcResult r;
  cr_assert_not(proc_run(&(ProcSpec){.argv = argv}, &r));
  cr_assert_not(r.started);
  cr_assert_eq(r.err, ENOENT);
}

Test(proc, a_time_limit_kills_the_program_and_what_it_started) {
  const char *argv[] = {"sh", "-c", "sleep 30 & sleep 30; echo never", NULL};
  Buf out = {0};
  ProcResult r;
  time_t t0 = time(NULL);
  cr_assert_not(proc_run(&(ProcSpec){.argv = argv, .output = &out, .timeout_ms = 300}, &r));
  cr_assert(r.started);
  cr_assert(r.timed_out);
  cr_assert_eq(r.signal, 9);
  cr_assert_leq(time(NULL) - t0, 10, "the background child must not hold the pipe open");
  cr_assert_null(out.s);
  buf_free(&out);
}

Test(proc, a_time_limit_without_captured_output) {
  const char *argv[] = {"sleep", "30", NULL};
  ProcResult r;
  cr_assert_not(proc_run(&(ProcSpec){.argv = argv, .timeout_ms = 200}, &r));
  cr_assert(r.timed_out);
  const char *quick[] = {"true", NULL};
  cr_assert(proc_run(&(ProcSpec){.argv = quick, .timeout_ms = 20000}, &r));
  cr_assert_not(r.timed_out);
}

/* A relative program path means the caller's directory even when the
 * program runs in another one. */
Test(proc, relative_paths_are_resolved_before_changing_directory) {
  char *dir = tmp_dir(), *sub = str_printf("%s/sub", dir), *tool = str_printf("%s/tool", dir);
  cr_assert_eq(mkdir(sub, 0700), 0);
  write_script(tool, "#!/bin/sh\npwd\n");
  char cwd[4096];
  cr_assert_not_null(getcwd(cwd, sizeof cwd));
  cr_assert_eq(chdir(dir), 0);
  const char *argv[] = {"./tool", NULL};
  Buf out = {0};
  ProcResult r;
  bool ok = proc_run(&(ProcSpec){.argv = argv, .cwd = "sub", .output = &out}, &r);
  char *found = proc_find("./tool");
  cr_assert_eq(chdir(cwd), 0);
  cr_assert(ok, "started %d err %d", r.started, r.err);
  char *want = str_printf("%s\n", sub);
  cr_assert_str_eq(out.s, want);
  cr_assert_str_eq(found, tool);
  unlink(tool);
  rmdir(sub);
  rmdir(dir);
  free(want), free(found), free(tool), free(sub), free(dir);
  buf_free(&out);
}

/* ---- the toolchain ------------------------------------------------------------------------------ */

Test(toolchain, one_rule_for_the_c_compiler) {
  const char *name;
  char *cc = tc_cc_find("sh", &name);
  cr_assert_not_null(cc);
  cr_assert_eq(cc[0], '/', "an absolute path: %s", cc);
  cr_assert_str_eq(name, "sh");
  free(cc);
  errno = 0;
  cr_assert_null(tc_cc_find("/no/such/compiler", &name), "what was asked for, or nothing");
  cr_assert_eq(errno, ENOENT);
  cr_assert_str_eq(name, "/no/such/compiler");
  char *dflt = tc_cc_find(NULL, &name), *clang = proc_find("clang"), *ccp = proc_find("cc");
  if (clang)
    cr_assert_str_eq(dflt, clang, "clang first");
  else if (ccp)
    cr_assert_str_eq(dflt, ccp, "then cc");
  cr_assert_str_eq(name, clang ? "clang" : "cc");
  free(dflt), free(clang), free(ccp);
}

Test(toolchain, flags_for_the_jit_and_for_portable_objects) {
  const char *const *shared = tc_cc_flags(TC_SHARED_NATIVE, "cc"), *const *object = tc_cc_flags(
                                                                       TC_OBJECT_PORTABLE, "cc");
  bool native = false, shared_flag = false;
  int n = 0;
  for (const char *const *f = shared; *f; f++, n++) {
    native |= !strcmp(*f, "-march=native");
    shared_flag |= !strcmp(*f, "-shared");
  }
  cr_assert(native && shared_flag);
  /* The portable object's flags are the JIT's without those two, in order. */
  const char *const *o = object;
  for (const char *const *f = shared; *f; f++) {
    if (!strcmp(*f, "-march=native") || !strcmp(*f, "-shared")) continue;
    cr_assert_not_null(*o);
    cr_assert_str_eq(*o, *f);
    o++;
  }
  cr_assert_null(*o);
  cr_assert_geq(n, 8);
}

/* The -O flag among cc's flags for the JIT ("" when there is none). */
static const char *opt_level(const char *cc) {
  for (const char *const *f = tc_cc_flags(TC_SHARED_NATIVE, cc); *f; f++)
    if (!strncmp(*f, "-O", 2)) return *f;
  return "";
}

/* clang at -O2 and gcc at -O3 unless KERN_CPU_OPT says otherwise (why:
 * toolchain.c). */
Test(toolchain, the_default_level_depends_on_the_compiler) {
  unsetenv("KERN_CPU_OPT");
  cr_expect_str_eq(opt_level("clang"), "-O2");
  cr_expect_str_eq(opt_level("gcc"), "-O3");
  cr_expect_str_eq(opt_level(NULL), "-O3");
  setenv("KERN_CPU_OPT", "1", 1);
  cr_expect_str_eq(opt_level("clang"), "-O1");
  cr_expect_str_eq(opt_level("gcc"), "-O1");
  unsetenv("KERN_CPU_OPT");
}
