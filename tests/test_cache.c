/* test_cache.c: compiling CPU code and the on-disk cache, with hand-written C
 * that follows stdlib/kern_abi.h: cold builds, warm hits that run no
 * compiler, corrupt entries, racing processes and threads, unwritable cache
 * directories and compiler failures; and trust: private modes for what kern
 * creates, directories others may write (not used at all), planted, symlinked
 * or writable entries and aliases (never loaded), verified GPU images.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kern.h"
#include "core.h"
#include "cpu/cpu_backend.h"

static const char *answer_src = "int kk_answer(void) { return 42; }\n";

static char tmp_root[512];

/* A fresh temp dir for this test; KERN_CACHE_DIR points below it (not yet
 * existing, so kern creates it). */
static const char *fresh_cache(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tmp_root, sizeof tmp_root, "%s/kern-cache-test-XXXXXX", t && *t ? t : "/tmp");
  cr_assert_not_null(mkdtemp(tmp_root));
  static char dir[600];
  snprintf(dir, sizeof dir, "%s/cache/nested", tmp_root);
  setenv("KERN_CACHE_DIR", dir, 1);
  unsetenv("KERN_CC");
  kern_init();
  rt_config_reload();
  return dir;
}

static void cleanup(void) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", tmp_root, tmp_root);
  th_run(cmd, NULL);
}

static int call_answer(const rt_cpu_lib *lib) {
  void *p = rt_cpu_lib_sym(lib, "kk_answer");
  cr_assert_not_null(p);
  int (*fn)(void);
  memcpy(&fn, &p, sizeof fn);
  return fn();
}

static bool exists(const char *dir, const char *key, const char *ext) {
  char path[800];
  snprintf(path, sizeof path, "%s/%s%s", dir, key, ext);
  return access(path, F_OK) == 0;
}

/* Names in dir other than "." and "..", excluding the entry's two files and
 * the compiler-independent aliases (<key>.latest). */
static int stray_files(const char *dir, const char *key) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  char so[80], meta[80];
  snprintf(so, sizeof so, "%s.so", key);
  snprintf(meta, sizeof meta, "%s.meta", key);
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, so) &&
        strcmp(e->d_name, meta) && !strstr(e->d_name, ".latest")) {
      fprintf(stderr, "stray: %s\n", e->d_name);
      n++;
    }
  closedir(d);
  return n;
}

Test(cache, cold_build_then_warm_hit) {
  const char *dir = fresh_cache();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  cr_assert_not(lib.from_cache);
  cr_assert(lib.cached);
  cr_assert_eq(strlen(lib.key), 32);
  cr_assert_eq(call_answer(&lib), 42);
  cr_assert(exists(dir, lib.key, ".so"));
  cr_assert(exists(dir, lib.key, ".meta"));
  cr_assert_eq(stray_files(dir, lib.key), 0, "no temp files left");
  struct stat st;
  cr_assert_eq(stat(dir, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0700, "mode %o", st.st_mode & 0777);
  rt_cpu_lib again;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &again), KERN_OK);
  cr_assert(again.from_cache);
  cr_assert_str_eq(again.key, lib.key);
  cr_assert_eq(call_answer(&again), 42);
  rt_cpu_lib_close(&again);
  rt_cpu_lib_close(&lib);
  cleanup();
}

Test(cache, meta_records_the_objects_sha256) {
  const char *dir = fresh_cache();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK);
  char cmd[900], *out = NULL, *meta;
  snprintf(cmd, sizeof cmd, "sha256sum '%s/%s.so'", dir, lib.key);
  cr_assert_eq(th_run(cmd, &out), 0);
  snprintf(cmd, sizeof cmd, "%s/%s.meta", dir, lib.key);
  meta = th_read_file(cmd, NULL);
  cr_assert_not_null(meta);
  char want[80];
  snprintf(want, sizeof want, "sha256 %.64s\n", out);
  cr_assert(strncmp(meta, "kern-cache 1\n", 13) == 0, "%s", meta);
  cr_assert(strstr(meta, want), "meta %s vs sha256sum %s", meta, out);
  free(out);
  free(meta);
  rt_cpu_lib_close(&lib);
  cleanup();
}

Test(cache, key_covers_source_and_debug) {
  fresh_cache();
  rt_cpu_lib a, b, c, d;
  const char *other = "int kk_answer(void) { return 43; }\n";
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &a), KERN_OK);
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), true, &b), KERN_OK);
  cr_assert_eq(rt_cpu_compile(other, strlen(other), false, &c), KERN_OK);
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), true, &d), KERN_OK);
  cr_assert_str_neq(a.key, b.key);
  cr_assert_str_neq(a.key, c.key);
  cr_assert_str_eq(b.key, d.key);
  cr_assert_not(b.from_cache);
  cr_assert(d.from_cache);
  cr_assert_eq(call_answer(&c), 43);
  rt_cpu_lib_close(&a), rt_cpu_lib_close(&b), rt_cpu_lib_close(&c), rt_cpu_lib_close(&d);
  cleanup();
}

/* A compiler that logs its arguments, answers --version like the real one,
 * and refuses to compile while KERN_TEST_CC_FAIL is set. */
static char *make_wrapper(char **log_path) {
  static char path[700], log[700];
  char *real = NULL;
  cr_assert_eq(th_run("command -v clang || command -v cc", &real), 0);
  real[strcspn(real, "\n")] = 0;
  snprintf(path, sizeof path, "%s/fakecc", tmp_root);
  snprintf(log, sizeof log, "%s/fakecc.log", tmp_root);
  FILE *f = fopen(path, "w");
  fprintf(f,
          "#!/bin/sh\n"
          "echo \"$*\" >> '%s'\n"
          "if [ \"$1\" = --version ]; then exec '%s' --version; fi\n"
          "if [ -n \"$KERN_TEST_CC_FAIL\" ]; then echo 'the compiler ran' >&2; exit 1; fi\n"
          "exec '%s' \"$@\"\n",
          log, real, real);
  fclose(f);
  chmod(path, 0755);
  free(real);
  *log_path = log;
  return path;
}

static int count_lines(const char *path, const char *needle) {
  char *text = th_read_file(path, NULL);
  int n = 0;
  for (char *p = text; p && (p = strstr(p, needle)); p++) n++;
  free(text);
  return n;
}

Test(cache, warm_hit_runs_no_compiler) {
  fresh_cache();
  char *log;
  setenv("KERN_CC", make_wrapper(&log), 1);
  unsetenv("KERN_TEST_CC_FAIL");
  rt_config_reload();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  cr_assert_eq(count_lines(log, "kernel.c"), 1, "one real compile");
  rt_cpu_lib_close(&lib);
  /* Now any compile fails: a warm hit must not need one. */
  setenv("KERN_TEST_CC_FAIL", "1", 1);
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  cr_assert(lib.from_cache);
  cr_assert_eq(call_answer(&lib), 42);
  cr_assert_eq(count_lines(log, "kernel.c"), 1, "the compiler did not run again");
  rt_cpu_lib_close(&lib);
  /* And the failing compiler really fails on a miss. */
  const char *other = "int kk_answer(void) { return 7; }\n";
  cr_assert_eq(rt_cpu_compile(other, strlen(other), false, &lib), KERN_ERR_COMPILE);
  cr_assert(strstr(kern_last_error(), "the compiler ran"), "%s", kern_last_error());
  unsetenv("KERN_TEST_CC_FAIL");
  cleanup();
}

static void corrupt_and_rebuild(const char *how) {
  const char *dir = fresh_cache();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK);
  rt_cpu_lib_close(&lib);
  char so[800], meta[800], cmd[1800];
  snprintf(so, sizeof so, "%s/%s.so", dir, lib.key);
  snprintf(meta, sizeof meta, "%s/%s.meta", dir, lib.key);
  if (!strcmp(how, "garbage"))
    snprintf(cmd, sizeof cmd, "printf 'not an elf file' > '%s'", so);
  else if (!strcmp(how, "truncated"))
    snprintf(cmd, sizeof cmd, "truncate -s 1000 '%s'", so);
  else if (!strcmp(how, "empty"))
    snprintf(cmd, sizeof cmd, ": > '%s'", so);
  else if (!strcmp(how, "flipped"))
    snprintf(cmd, sizeof cmd, "printf 'X' | dd of='%s' bs=1 seek=2000 conv=notrunc 2>/dev/null",
             so);
  else if (!strcmp(how, "no-meta"))
    snprintf(cmd, sizeof cmd, "rm '%s'", meta);
  else if (!strcmp(how, "bad-meta"))
    snprintf(cmd, sizeof cmd, "printf 'kern-cache 1\\nsha256 1234\\n' > '%s'", meta);
  else
    snprintf(cmd, sizeof cmd, "rm '%s'", so);
  cr_assert_eq(th_run(cmd, NULL), 0, "%s", cmd);
  rt_cpu_lib again;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &again), KERN_OK, "%s: %s",
               how, kern_last_error());
  cr_assert_not(again.from_cache, "%s: a damaged entry is a miss", how);
  cr_assert(again.cached, "%s: and gets replaced", how);
  cr_assert_eq(call_answer(&again), 42);
  rt_cpu_lib third;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &third), KERN_OK);
  cr_assert(third.from_cache, "%s: the rebuilt entry is used", how);
  cr_assert_eq(stray_files(dir, lib.key), 0);
  rt_cpu_lib_close(&again);
  rt_cpu_lib_close(&third);
  cleanup();
}

Test(cache, garbage_object_is_rebuilt) { corrupt_and_rebuild("garbage"); }
Test(cache, truncated_object_is_rebuilt) { corrupt_and_rebuild("truncated"); }
Test(cache, empty_object_is_rebuilt) { corrupt_and_rebuild("empty"); }
Test(cache, flipped_byte_is_rebuilt) { corrupt_and_rebuild("flipped"); }
Test(cache, missing_meta_is_rebuilt) { corrupt_and_rebuild("no-meta"); }
Test(cache, bad_meta_is_rebuilt) { corrupt_and_rebuild("bad-meta"); }
Test(cache, missing_object_is_rebuilt) { corrupt_and_rebuild("no-so"); }

Test(cache, racing_processes_all_succeed) {
  const char *dir = fresh_cache();
  enum { N = 6 };
  int gate[2];
  cr_assert_eq(pipe(gate), 0);
  pid_t pids[N];
  for (int i = 0; i < N; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      char c;
      close(gate[1]);
      if (read(gate[0], &c, 1) != 0) _exit(3); /* wait until the parent opens the gate */
      rt_cpu_lib lib;
      if (rt_cpu_compile(answer_src, strlen(answer_src), false, &lib) != KERN_OK) _exit(1);
      void *p = rt_cpu_lib_sym(&lib, "kk_answer");
      int (*fn)(void);
      memcpy(&fn, &p, sizeof fn);
      _exit(p && fn() == 42 ? 0 : 2);
    }
  }
  close(gate[0]);
  close(gate[1]); /* everyone starts at once */
  for (int i = 0; i < N; i++) {
    int st;
    waitpid(pids[i], &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d: status %d", i, st);
  }
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK);
  cr_assert(lib.from_cache, "the entry the racers left is valid");
  cr_assert_eq(stray_files(dir, lib.key), 0);
  rt_cpu_lib_close(&lib);
  cleanup();
}

static void *compile_in_thread(void *arg) {
  (void)arg;
  rt_cpu_lib lib;
  if (rt_cpu_compile(answer_src, strlen(answer_src), false, &lib) != KERN_OK) return "failed";
  void *p = rt_cpu_lib_sym(&lib, "kk_answer");
  int (*fn)(void);
  memcpy(&fn, &p, sizeof fn);
  const char *r = p && fn() == 42 ? NULL : "wrong";
  rt_cpu_lib_close(&lib);
  return (void *)r;
}

Test(cache, racing_threads_all_succeed) {
  const char *dir = fresh_cache();
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, compile_in_thread, NULL);
  for (int i = 0; i < 8; i++) {
    void *r;
    pthread_join(t[i], &r);
    cr_assert_null(r, "thread %d: %s", i, (char *)r);
  }
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK);
  cr_assert(lib.from_cache);
  cr_assert_eq(stray_files(dir, lib.key), 0);
  rt_cpu_lib_close(&lib);
  cleanup();
}

static void check_uncached_build(const char *private_tmp) {
  rt_cpu_lib lib;
  for (int rep = 0; rep < 2; rep++) {
    cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
                 kern_last_error());
    cr_assert_not(lib.cached);
    cr_assert_not(lib.from_cache);
    cr_assert_eq(call_answer(&lib), 42);
    rt_cpu_lib_close(&lib);
  }
  DIR *d = opendir(private_tmp);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) n += e->d_name[0] != '.';
  if (d) closedir(d);
  cr_assert_eq(n, 0, "private build directories are removed");
}

Test(cache, impossible_cache_dir_still_compiles) {
  fresh_cache();
  char file[700], dir[800], priv[700];
  snprintf(file, sizeof file, "%s/a-file", tmp_root);
  fclose(fopen(file, "w"));
  snprintf(dir, sizeof dir, "%s/cache", file); /* under a regular file: never creatable */
  snprintf(priv, sizeof priv, "%s/private", tmp_root);
  mkdir(priv, 0700);
  setenv("KERN_CACHE_DIR", dir, 1);
  setenv("TMPDIR", priv, 1);
  rt_config_reload();
  check_uncached_build(priv);
  cleanup();
}

Test(cache, read_only_cache_dir_still_compiles) {
  if (geteuid() == 0) {
    cr_log_info("running as root: permissions do not stop root, skipping");
    return;
  }
  const char *dir = fresh_cache();
  char priv[700];
  cr_assert_eq(th_run("true", NULL), 0);
  char cmd[900];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && chmod 0500 '%s'", dir, dir);
  cr_assert_eq(th_run(cmd, NULL), 0);
  snprintf(priv, sizeof priv, "%s/private", tmp_root);
  mkdir(priv, 0700);
  setenv("TMPDIR", priv, 1);
  check_uncached_build(priv);
  cleanup();
}

static int cache_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  if (d) closedir(d);
  return n;
}

Test(cache, compiler_error_is_reported_and_nothing_cached) {
  const char *dir = fresh_cache();
  const char *bad = "int kk_answer(void) { return undefined_name_xyz; }\n";
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(bad, strlen(bad), false, &lib), KERN_ERR_COMPILE);
  const char *msg = kern_last_error();
  cr_assert(strstr(msg, "failed"), "%s", msg);
  cr_assert(strstr(msg, "undefined_name_xyz"), "the compiler's log is in the message: %s", msg);
  cr_assert_eq(cache_entries(dir), 0, "nothing cached, no temp files");
  cr_assert_null(lib.handle);
  cleanup();
}

Test(cache, failing_compiler_caches_nothing) {
  const char *dir = fresh_cache();
  setenv("KERN_CC", "false", 1);
  rt_config_reload();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_ERR_COMPILE);
  cr_assert(strstr(kern_last_error(), "exit status 1"), "%s", kern_last_error());
  cr_assert_eq(cache_entries(dir), 0);
  cleanup();
}

Test(cache, missing_compiler) {
  fresh_cache();
  setenv("KERN_CC", "/nonexistent/kern-cc", 1);
  rt_config_reload();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_ERR_COMPILE);
  cr_assert(strstr(kern_last_error(), "KERN_CC"), "%s", kern_last_error());
  cleanup();
}

Test(cache, default_directories) {
  unsetenv("KERN_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/some/xdg", 1);
  kern_init();
  rt_config_reload();
  cr_assert_str_eq(rt_config_get()->cache_dir, "/some/xdg/kern");
  setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  setenv("HOME", "/some/home", 1);
  rt_config_reload();
  cr_assert_str_eq(rt_config_get()->cache_dir, "/some/home/.cache/kern");
  unsetenv("XDG_CACHE_HOME");
  setenv("KERN_CACHE_DIR", "/explicit", 1);
  rt_config_reload();
  cr_assert_str_eq(rt_config_get()->cache_dir, "/explicit");
}

/* ---- a hand-written kernel through the pool ------------------------------------------------ */

/* What codegen emits, by hand: an args struct and a range entry. */
static const char *kernel_src =
    "#include <stdint.h>\n"
    "typedef struct { char *data; int64_t shape[4]; int64_t strides[4]; } kn_array;\n"
    "typedef struct { int64_t dim[4]; int64_t n; int32_t ndim; int32_t pad_; void *err; } kn_ctx;\n"
    "typedef struct { kn_array out; int64_t scale; } kk_k_args;\n"
    "void kk_k_range(const kk_k_args *a, const kn_ctx *c, int64_t b, int64_t e) {\n"
    "  (void)c;\n"
    "  for (int64_t i = b; i < e; i++)\n"
    "    *(int64_t *)(a->out.data + i * a->out.strides[0]) = a->scale * i;\n"
    "}\n"
    "const uint32_t kk_k_args_size = sizeof(kk_k_args);\n";

Test(cache, compiled_kernel_runs_on_the_pool) {
  fresh_cache();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(kernel_src, strlen(kernel_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  const uint32_t *size = rt_cpu_lib_sym(&lib, "kk_k_args_size");
  cr_assert_eq(*size, sizeof(kn_array) + 8);
  void *p = rt_cpu_lib_sym(&lib, "kk_k_range");
  rt_range_fn fn;
  memcpy(&fn, &p, sizeof fn);
  int64_t n = 1000001;
  int64_t *out = malloc((size_t)n * 8);
  struct {
    kn_array out;
    int64_t scale;
  } args = {{(char *)out, {n, 1, 1, 1}, {8, 0, 0, 0}}, 5};
  kn_ctx ctx = {.dim = {n, 1, 1, 1}, .n = n, .ndim = 1};
  rt_pool_run(fn, &args, &ctx, n, NULL);
  for (int64_t i = 0; i < n; i++)
    if (out[i] != 5 * i) cr_assert_fail("index %lld", (long long)i);
  free(out);
  rt_cpu_lib_close(&lib);
  cleanup();
}

/* The proof of a warm hit: once a module is cached, KERN_CC=false (a
 * "compiler" that fails and cannot say what it is) still loads and runs it,
 * and so does a KERN_CC that does not exist; a source never built still fails. */
Test(cache, warm_hit_with_kern_cc_false) {
  fresh_cache();
  const char *src = "kernel void put(int[] a) { a[tid()] = 40 + tid(); }\n";
  kern_module *m = kern_module_from_source("warm.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  int64_t n = 4;
  kern_array *a = kern_array_new(kern_device_get("cpu"), KERN_INT32, 1, &n);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "put"), kern_device_get("cpu"), KERN_DIM1(n), a),
               KERN_OK, "%s", kern_last_error());
  kern_module_free(m);
  const char *ccs[] = {"false", "/nonexistent/cc"};
  for (int i = 0; i < 2; i++) {
    setenv("KERN_CC", ccs[i], 1);
    rt_config_reload();
    m = kern_module_from_source("warm.kern", src);
    cr_assert_not_null(m);
    int32_t v[4] = {0};
    cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "put"), kern_device_get("cpu"), KERN_DIM1(n), a),
                 KERN_OK, "KERN_CC=%s: %s", ccs[i], kern_last_error());
    cr_assert_eq(kern_array_read(a, v, sizeof v), KERN_OK);
    cr_expect_eq(v[3], 43);
    kern_module_free(m);
    m = kern_module_from_source("cold.kern", "kernel void other(int[] a) { a[tid()] = 1; }\n");
    cr_expect_eq(
        KERN_LAUNCH(kern_module_kernel(m, "other"), kern_device_get("cpu"), KERN_DIM1(n), a),
        KERN_ERR_COMPILE, "KERN_CC=%s and no cached build must fail", ccs[i]);
    kern_module_free(m);
  }
  kern_array_free(a);
  unsetenv("KERN_CC");
  rt_config_reload();
  cleanup();
}

/* ---- trusting the cache ------------------------------------------------------------------ */

static mode_t mode_of(const char *path) {
  struct stat st;
  cr_assert_eq(lstat(path, &st), 0, "%s", path);
  return st.st_mode & 07777;
}

Test(cache, created_directories_and_entries_are_private) {
  const char *dir = fresh_cache();
  mode_t old = umask(0); /* even a permissive umask gives 0700 */
  const char *used = kern_cache_dir();
  umask(old);
  cr_assert_not_null(used, "%s", kern_last_error());
  cr_expect_str_eq(used, dir);
  char parent[700];
  snprintf(parent, sizeof parent, "%s/cache", tmp_root);
  cr_expect_eq(mode_of(dir), 0700, "mode %o", mode_of(dir));
  cr_expect_eq(mode_of(parent), 0700, "a created parent: mode %o", mode_of(parent));
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  char so[800], meta[800];
  snprintf(so, sizeof so, "%s/%s.so", dir, lib.key);
  snprintf(meta, sizeof meta, "%s/%s.meta", dir, lib.key);
  cr_expect_eq(mode_of(so), 0600, "object: mode %o", mode_of(so));
  cr_expect_eq(mode_of(meta), 0600, "meta: mode %o", mode_of(meta));
  rt_cpu_lib_close(&lib);
  cleanup();
}

/* A cache entry for answer_src whose object returns 43 and whose meta
 * matches that object: what someone who can write the directory could leave. */
static void plant_valid_entry(const char *dir, const char *key) {
  const char *other = "int kk_answer(void) { return 43; }\n";
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(other, strlen(other), false, &lib), KERN_OK, "%s", kern_last_error());
  char cmd[2400];
  snprintf(
      cmd, sizeof cmd,
      "cd '%s' && cp %s.so %s.so && sed 's/^key .*/key %s/' %s.meta > %s.meta.new && mv %s.meta.new %s.meta",
      dir, lib.key, key, key, lib.key, key, key, key);
  cr_assert_eq(th_run(cmd, NULL), 0, "%s", cmd);
  rt_cpu_lib_close(&lib);
}

static void expect_untrusted(const char *dir, const char *how) {
  cr_expect_null(kern_cache_dir(), "%s", how);
  cr_expect_eq(kern_last_status(), KERN_ERR_IO, "%s", how);
  cr_expect(strstr(kern_last_error(), "is not trusted") && strstr(kern_last_error(), dir), "%s: %s",
            how, kern_last_error());
}

/* An entry is built while the directory is private; then the directory is
 * opened up (chmod mode, or given to another owner) and a valid entry of other
 * code planted under the same key. kern must neither load nor write there. */
static void check_not_trusted(mode_t mode, uid_t owner, const char *how) {
  const char *dir = fresh_cache();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  rt_cpu_lib_close(&lib);
  plant_valid_entry(dir, lib.key);
  cr_assert_eq(chmod(dir, mode), 0);
  if (owner != (uid_t)-1) cr_assert_eq(chown(dir, owner, (gid_t)-1), 0);
  expect_untrusted(dir, how);
  int before = cache_entries(dir);
  for (int rep = 0; rep < 2; rep++) {
    cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
                 kern_last_error());
    cr_expect_not(lib.from_cache, "%s: nothing is loaded from it", how);
    cr_expect_not(lib.cached, "%s: nothing is stored in it", how);
    cr_expect_eq(call_answer(&lib), 42, "%s: the planted code did not run", how);
    rt_cpu_lib_close(&lib);
  }
  cr_expect_eq(cache_entries(dir), before, "%s: nothing was written there", how);
  /* Without a compiler the error says why the cache did not help. */
  setenv("KERN_CC", "/nonexistent/kern-cc", 1);
  rt_config_reload();
  cr_expect_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_ERR_COMPILE);
  cr_expect(strstr(kern_last_error(), "KERN_CC") && strstr(kern_last_error(), "is not trusted"),
            "%s: %s", how, kern_last_error());
  unsetenv("KERN_CC");
  rt_config_reload();
  if (owner != (uid_t)-1) cr_assert_eq(chown(dir, geteuid(), (gid_t)-1), 0);
  /* The plant was a valid entry, refused only because of the directory:
   * private again, the directory is trusted and so is what it holds. */
  cr_assert_eq(chmod(dir, 0700), 0);
  cr_expect_str_eq(kern_cache_dir(), dir);
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK);
  cr_expect(lib.from_cache);
  cr_expect_eq(call_answer(&lib), 43, "%s: the directory, not the entry, is what kern trusts", how);
  rt_cpu_lib_close(&lib);
  cleanup();
}

Test(cache, world_writable_directory_is_not_trusted) {
  check_not_trusted(0777, (uid_t)-1, "mode 0777");
}
Test(cache, sticky_world_writable_directory_is_not_trusted) {
  check_not_trusted(01777, (uid_t)-1, "mode 1777");
}
Test(cache, group_writable_directory_is_not_trusted) {
  check_not_trusted(0770, (uid_t)-1, "mode 0770");
}

Test(cache, directory_of_another_user_is_not_trusted) {
  if (geteuid() != 0) {
    cr_log_info("only root can give a directory to another user, skipping");
    return;
  }
  check_not_trusted(0755, 65534, "owned by uid 65534");
}

Test(cache, readable_directory_of_this_user_is_trusted) {
  const char *dir = fresh_cache();
  cr_assert_not_null(kern_cache_dir());
  cr_assert_eq(chmod(dir, 0755), 0);
  cr_expect_str_eq(kern_cache_dir(), dir, "%s", kern_last_error());
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK);
  cr_expect(lib.cached);
  rt_cpu_lib_close(&lib);
  cleanup();
}

Test(cache, no_cache_directory_is_explained) {
  fresh_cache();
  char file[700];
  snprintf(file, sizeof file, "%s/a-file", tmp_root);
  fclose(fopen(file, "w"));
  setenv("KERN_CACHE_DIR", file, 1);
  rt_config_reload();
  cr_expect_null(kern_cache_dir());
  cr_expect_eq(kern_last_status(), KERN_ERR_IO);
  cr_expect(strstr(kern_last_error(), "cannot create the cache directory"), "%s",
            kern_last_error());
  cleanup();
}

/* The entry of answer_src is replaced, in place, by other valid code: each
 * way must be a miss that rebuilds the right code. */
static void check_planted(const char *how) {
  const char *dir = fresh_cache();
  rt_cpu_lib lib;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  rt_cpu_lib_close(&lib);
  const char *other = "int kk_answer(void) { return 43; }\n";
  rt_cpu_lib o;
  cr_assert_eq(rt_cpu_compile(other, strlen(other), false, &o), KERN_OK);
  rt_cpu_lib_close(&o);
  char cmd[2400];
  if (!strcmp(how, "object")) /* the other object under the name, the meta left alone */
    snprintf(cmd, sizeof cmd, "cd '%s' && cp %s.so %s.so", dir, o.key, lib.key);
  else if (!strcmp(how, "object+meta")) /* both files copied: the meta names the other key */
    snprintf(cmd, sizeof cmd, "cd '%s' && cp %s.so %s.so && cp %s.meta %s.meta", dir, o.key,
             lib.key, o.key, lib.key);
  else if (!strcmp(how, "symlink")) /* a symlink to a matching object */
    snprintf(cmd, sizeof cmd, "cd '%s' && cp %s.so keep.so && rm %s.so && ln -s keep.so %s.so", dir,
             lib.key, lib.key, lib.key);
  else /* the right bytes, but others may write the file */
    snprintf(cmd, sizeof cmd, "chmod 0666 '%s/%s.so'", dir, lib.key);
  cr_assert_eq(th_run(cmd, NULL), 0, "%s", cmd);
  rt_cpu_lib again, third;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &again), KERN_OK, "%s",
               kern_last_error());
  cr_expect_eq(call_answer(&again), 42, "%s: the planted code ran", how);
  cr_expect_not(again.from_cache, "%s: a miss", how);
  cr_expect(again.cached, "%s: rebuilt", how);
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &third), KERN_OK);
  cr_expect(third.from_cache, "%s: the rebuilt entry is used", how);
  cr_expect_eq(call_answer(&third), 42);
  char so[800];
  snprintf(so, sizeof so, "%s/%s.so", dir, lib.key);
  cr_expect_eq(mode_of(so), 0600, "%s: the rebuilt entry is a private regular file: %o", how,
               mode_of(so));
  rt_cpu_lib_close(&again);
  rt_cpu_lib_close(&third);
  cleanup();
}

Test(cache, planted_object_is_not_loaded) { check_planted("object"); }
Test(cache, planted_object_with_its_meta_is_not_loaded) { check_planted("object+meta"); }
Test(cache, symlinked_object_is_not_loaded) { check_planted("symlink"); }
Test(cache, writable_object_is_not_loaded) { check_planted("writable"); }

/* The key <any>.latest names. */
static void read_alias(const char *dir, char key[33]) {
  char **names = NULL;
  int n = th_list(dir, ".latest", &names);
  cr_assert_eq(n, 1, "one alias");
  char *text = th_read_file(names[0], NULL);
  cr_assert_not_null(text);
  snprintf(key, 33, "%.32s", text);
  free(text);
  free(names[0]);
  free(names);
}

/* The compiler-independent alias leads only to an entry built from the same
 * source: pointing it at other valid code does not load that code. */
Test(cache, alias_to_other_code_is_not_followed) {
  const char *dir = fresh_cache();
  rt_cpu_lib lib, o;
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  rt_cpu_lib_close(&lib);
  char alias[33];
  read_alias(dir, alias);
  cr_assert_str_eq(alias, lib.key);
  const char *other = "int kk_answer(void) { return 43; }\n";
  cr_assert_eq(rt_cpu_compile(other, strlen(other), false, &o), KERN_OK);
  rt_cpu_lib_close(&o);
  setenv("KERN_CC", "false", 1);
  rt_config_reload();
  cr_assert_eq(rt_cpu_compile(answer_src, strlen(answer_src), false, &lib), KERN_OK, "%s",
               kern_last_error());
  cr_expect(lib.from_cache, "the honest alias works");
  cr_expect_eq(call_answer(&lib), 42);
  rt_cpu_lib_close(&lib);
  char cmd[1600];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && for f in *.latest; do if grep -q %s $f; then printf %s > $f; fi; done", dir,
           lib.key, o.key);
  cr_assert_eq(th_run(cmd, NULL), 0, "%s", cmd);
  kern_status st = rt_cpu_compile(answer_src, strlen(answer_src), false, &lib);
  cr_expect_eq(st, KERN_ERR_COMPILE,
               "no compiler and no build of this source: the other code must not load");
  if (st == KERN_OK) rt_cpu_lib_close(&lib);
  unsetenv("KERN_CC");
  rt_config_reload();
  cleanup();
}

/* GPU images: the bytes handed back are the bytes that were hashed. */
Test(cache, gpu_entries_are_verified) {
  const char *dir = fresh_cache();
  cr_assert_not_null(kern_cache_dir());
  const char key[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  const char image[] = "fake cubin bytes\0with a NUL";
  rt_cache_blob_write(dir, key, image, sizeof image);
  size_t len = 0;
  char *got = rt_cache_blob_read(dir, key, &len);
  cr_assert_not_null(got);
  cr_expect_eq(len, sizeof image);
  cr_expect_eq(memcmp(got, image, sizeof image), 0);
  free(got);
  char path[800], cmd[1800];
  snprintf(path, sizeof path, "%s/%s.gpu", dir, key);
  cr_expect_eq(mode_of(path), 0600);
  snprintf(cmd, sizeof cmd, "printf 'planted cubin bytes' > '%s'", path);
  cr_assert_eq(th_run(cmd, NULL), 0);
  cr_expect_null(rt_cache_blob_read(dir, key, &len), "a planted image is a miss");
  rt_cache_blob_write(dir, key, image, sizeof image);
  cr_assert_eq(chmod(path, 0666), 0);
  cr_expect_null(rt_cache_blob_read(dir, key, &len), "an image others may write is a miss");
  cleanup();
}

/* The message shows every mode bit: a sticky world-writable directory (the
 * /tmp pattern) is 1777, not 777, so the user sees what they have to change. */
Test(cache, the_untrusted_message_shows_every_mode_bit) {
  const char *dir = fresh_cache();
  cr_assert_not_null(kern_cache_dir(), "%s", kern_last_error());
  cr_assert_eq(chmod(dir, 01777), 0);
  expect_untrusted(dir, "mode 1777");
  cr_expect(strstr(kern_last_error(), "mode 1777"), "%s", kern_last_error());
  cr_assert_eq(chmod(dir, 02777), 0);
  expect_untrusted(dir, "mode 2777");
  cr_expect(strstr(kern_last_error(), "mode 2777"), "%s", kern_last_error());
  cr_assert_eq(chmod(dir, 0700), 0);
  cleanup();
}
