/* cpu_compile.c: C source -> shared object -> dlopen handle, through the cache.
 *
 * Requires: cache.c, sha256.c, the configuration (KERN_CC, cache dir), KERN_CPU_OPT.
 * Produces: rt_cpu_compile.
 * Breaks: the cache key covers everything that changes the object code: the
 * source (which embeds the stdlib text), the compiler's path and version line,
 * the flags (-O0 to -O3 by KERN_CPU_OPT), KN_ABI_VERSION, kern's version and
 * the CPU (for -march=native).
 * The compiler runs through posix_spawn with an argument vector (no shell), in
 * a private build directory, so concurrent builds never share a file; a
 * failed build leaves nothing behind. Warm loads, direct or through the
 * alias, go through cache.c's checks; the alias leads only to an entry whose
 * meta names the same source.
 */
#include "rt.h"
#include "emit.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { MAX_LOG = 1 << 20 };

/* The flags at each optimisation level. */
#define CPU_FLAGS(opt)                                                                             \
  {                                                                                                \
    "-std=c11", opt, "-march=native", "-fPIC", "-shared", "-fwrapv", "-fno-math-errno",            \
        "-ffp-contract=off", "-w", NULL                                                            \
  }
static const char *const level_flags[4][10] = {CPU_FLAGS("-O0"), CPU_FLAGS("-O1"), CPU_FLAGS("-O2"),
                                               CPU_FLAGS("-O3")};

/* When libkern itself is built with AddressSanitizer (make test-asan), the
 * kernels it compiles and loads are instrumented too, so an out-of-bounds
 * access in a release-mode kernel is reported like one in the library (the
 * process has the ASan runtime; clang's and gcc's instrumentation both use
 * it). kernc build's objects are not: they go into other programs.
 * Vectorisation is off there: with -march=native on AVX-512 machines clang
 * turns a guarded store into a masked scatter, which ASan does not check, so
 * the out-of-bounds write went unreported; scalar code is checked access by
 * access, with either compiler. */
#if defined(__SANITIZE_ADDRESS__)
#define RT_KERNEL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RT_KERNEL_ASAN 1
#endif
#endif
static const char *const kernel_sanitize[] = {
#ifdef RT_KERNEL_ASAN
    "-fsanitize=address", "-fno-omit-frame-pointer", "-fno-tree-vectorize",
    "-fno-tree-slp-vectorize",
#endif
    NULL};

/* KERN_CPU_OPT, 0 to 3, picks the level, read at every compile (so a process
 * may build one module at -O0 and the next at -O3); another value means 3. */
const char *const *rt_cpu_compile_flags(void) {
  const char *s = getenv("KERN_CPU_OPT");
  return level_flags[s && s[0] >= '0' && s[0] <= '3' && !s[1] ? s[0] - '0' : 3];
}

/* ---- finding the compiler ------------------------------------------------------ */

static bool is_exec(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The absolute or relative path of an executable: as given if it has a slash,
 * else searched on PATH. malloc'd; NULL if not found. */
static char *find_program(const char *name) {
  if (strchr(name, '/')) return is_exec(name) ? rt_strdup(name) : NULL;
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p;) {
    size_t n = strcspn(p, ":");
    char *cand = rt_printf("%.*s/%s", (int)n, n ? p : ".", name);
    if (cand && is_exec(cand)) return cand;
    free(cand);
    p += n;
    if (*p == ':') p++;
  }
  return NULL;
}

static kern_status find_compiler(char **out) {
  const char *cc = rt_config_get()->cc;
  *out = cc ? find_program(cc) : NULL;
  if (!cc && !*out) *out = find_program("clang");
  if (!cc && !*out) *out = find_program("cc");
  if (*out) return KERN_OK;
  if (cc)
    return rt_error(KERN_ERR_COMPILE,
                    "the C compiler KERN_CC='%s' was not found or is not executable", cc);
  return rt_error(KERN_ERR_COMPILE,
                  "no C compiler found for CPU kernels: install clang or cc, or set KERN_CC");
}

/* ---- running it ------------------------------------------------------------------------ */

static void read_all(int fd, rt_buf *out) {
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (out->len < MAX_LOG) rt_buf_add(out, buf, (size_t)n);
  }
}

/* Runs argv (argv[0] a path) in cwd with stdout+stderr captured. Returns the
 * wait status, or -1 with errno when it could not start. */
static int run_capture(char *const argv[], const char *cwd, rt_buf *out) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
  pid_t pid;
  int err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (err) {
    close(fds[0]);
    errno = err;
    return -1;
  }
  read_all(fds[0], out);
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

/* ---- identities (once per process) ----------------------------------------------------------- */

typedef struct ident {
  char *path, *line;
  struct ident *next;
} ident;
static pthread_mutex_t ident_mu = PTHREAD_MUTEX_INITIALIZER;
static ident *idents;
static char *cpu_id;

static char *first_line(const char *s) {
  size_t n = s ? strcspn(s, "\n") : 0;
  return rt_printf("%.*s", (int)n, s ? s : "");
}

/* The first line of `cc --version`; "" when it prints nothing or fails (then
 * the compiler cannot be identified: `false --version` prints a version but
 * exits 1). */
static const char *compiler_identity(const char *cc) {
  pthread_mutex_lock(&ident_mu);
  ident *e = idents;
  while (e && strcmp(e->path, cc) != 0) e = e->next;
  pthread_mutex_unlock(&ident_mu);
  if (e) return e->line;
  char *argv[] = {(char *)cc, "--version", NULL};
  rt_buf out = {0};
  int status = run_capture(argv, NULL, &out);
  bool answered = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  ident *n = calloc(1, sizeof *n);
  char *line = first_line(answered ? out.s : NULL), *path = rt_strdup(cc);
  rt_buf_free(&out);
  if (!n || !line || !path) {
    free(n), free(line), free(path);
    return "";
  }
  n->path = path;
  n->line = line;
  pthread_mutex_lock(&ident_mu);
  n->next = idents;
  idents = n;
  pthread_mutex_unlock(&ident_mu);
  return n->line;
}

/* The first processor's model name and flags: -march=native code for one
 * CPU may not run on another. */
static const char *cpu_identity(void) {
  pthread_mutex_lock(&ident_mu);
  if (!cpu_id) {
    rt_buf b = {0};
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
      if (line[0] == '\n') break; /* end of the first processor */
      if (!strncmp(line, "model name", 10) || !strncmp(line, "flags", 5) ||
          !strncmp(line, "vendor_id", 9) || !strncmp(line, "Features", 8) ||
          !strncmp(line, "CPU part", 8))
        rt_buf_add(&b, line, strlen(line));
    }
    if (f) fclose(f);
    cpu_id = b.s ? b.s : rt_strdup("unknown cpu");
  }
  pthread_mutex_unlock(&ident_mu);
  return cpu_id ? cpu_id : "";
}

/* ---- the key ---------------------------------------------------------------------------------- */

static void hash_str(rt_sha256 *s, const char *str) { rt_sha256_add(s, str, strlen(str) + 1); }

/* The key of everything but the compiler: the source, flags, ABI and CPU. */
static void hash_common(rt_sha256 *s, const char *src, size_t len, bool debug) {
  char abi[64];
  snprintf(abi, sizeof abi, "kern-cpu abi=%d version=%s", KN_ABI_VERSION, kern_version_string());
  hash_str(s, abi);
  for (const char *const *f = rt_cpu_compile_flags(); *f; f++) hash_str(s, *f);
  for (const char *const *f = kernel_sanitize; *f; f++) hash_str(s, *f);
  hash_str(s, debug ? "-g" : "");
  hash_str(s, cpu_identity());
  rt_sha256_add(s, src, len);
}

/* The compiler binary as the file system sees it (symlinks followed): the
 * same path, inode, size and time mean the same compiler, and a stat costs
 * microseconds where `cc --version` costs milliseconds on every start. */
static void hash_binary(rt_sha256 *s, const char *cc) {
  struct stat st;
  char id[160] = "unreadable";
  if (stat(cc, &st) == 0)
    snprintf(id, sizeof id, "dev=%llu ino=%llu size=%lld mtime=%lld.%09ld",
             (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
  hash_str(s, id);
}

/* cc == NULL: the compiler-independent key of the "latest build" alias. */
static void make_key(const char *src, size_t len, const char *cc, bool debug, char key[33]) {
  rt_sha256 s;
  rt_sha256_init(&s);
  hash_common(&s, src, len, debug);
  hash_str(&s, cc ? cc : "any compiler");
  if (cc) hash_binary(&s, cc);
  unsigned char d[32];
  rt_sha256_done(&s, d);
  rt_hex(d, 16, key);
}

/* <cache>/<any>.latest names the entry last built from this source by any
 * compiler, so a process with no usable compiler (KERN_CC=false, a deployed
 * machine without one) still finds it. Written temp + rename. */
static void alias_write(const char *cache, const char *any, const char *key) {
  char suffix[64];
  rt_unique_suffix(suffix, sizeof suffix);
  char *tmp = rt_printf("%s/.alias-%s", cache, suffix),
       *dst = rt_printf("%s/%s.latest", cache, any);
  if (tmp && dst) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, key, 32) == 32;
    if (fd >= 0) ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, dst) != 0) unlink(tmp);
  }
  free(tmp);
  free(dst);
}

static bool alias_load(const char *cache, const char *any, rt_cpu_lib *out) {
  char *path = rt_printf("%s/%s.latest", cache, any), key[33] = {0};
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
  bool ok = fd >= 0 && read(fd, key, 32) == 32;
  if (fd >= 0) close(fd);
  free(path);
  for (int i = 0; ok && i < 32; i++)
    ok = (key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f');
  if (!ok || !rt_cache_load(cache, key, any, &out->handle)) return false;
  memcpy(out->key, key, sizeof key);
  out->from_cache = true;
  return true;
}

/* ---- building ---------------------------------------------------------------------------------- */

/* A fresh directory for one build: in the cache dir when writable, else a
 * private temp dir. malloc'd; NULL on failure. */
static char *make_build_dir(const char *cache, bool *in_cache) {
  *in_cache = false;
  if (cache && access(cache, W_OK | X_OK) == 0) {
    char suffix[64];
    rt_unique_suffix(suffix, sizeof suffix);
    char *d = rt_printf("%s/.build-%s", cache, suffix);
    if (d && mkdir(d, 0700) == 0) {
      *in_cache = true;
      return d;
    }
    free(d);
  }
  const char *tmp = getenv("TMPDIR");
  char *d = rt_printf("%s/kern-build-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (d && mkdtemp(d)) return d;
  free(d);
  return NULL;
}

static bool write_file(const char *path, const char *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, data + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  return close(fd) == 0 && done == len;
}

static kern_status compile_failed(const char *cc, int status, rt_buf *log) {
  char head[512];
  if (status == -1)
    snprintf(head, sizeof head, "could not run the C compiler '%s': %s\n", cc, strerror(errno));
  else if (WIFSIGNALED(status))
    snprintf(head, sizeof head, "the C compiler '%s' was killed by signal %d on generated code:\n",
             cc, WTERMSIG(status));
  else
    snprintf(head, sizeof head, "the C compiler '%s' failed (exit status %d) on generated code:\n",
             cc, WEXITSTATUS(status));
  if (status != -1) { /* the checker accepted the source: bad C is kern's bug */
    if (!log->len) rt_buf_add(log, "(no output)", 11);
    rt_buf_printf(log, "\n(if '%s' builds other C code, %s)", cc, EMIT_BUG_REPORT);
  }
  return rt_error_text(KERN_ERR_COMPILE, head, log->s && !log->oom ? log->s : "(no output)");
}

/* clang stops at 256 nested brackets, and programs within the parser's
 * limits nest deeper than that in the generated C (a right-nested sum of 200
 * terms); gcc has no such limit and no such flag. */
bool rt_cc_is_clang(const char *cc) {
  char *found = find_program(cc), *real = found ? realpath(found, NULL) : NULL;
  free(found);
  const char *path = real ? real : cc, *base = strrchr(path, '/');
  bool clang = strstr(base ? base + 1 : path, "clang") != NULL;
  free(real);
  return clang;
}

/* Compiles kernel.c in dir into kernel.so. */
static kern_status run_compiler(const char *cc, const char *dir, bool debug) {
  char *map = rt_printf("-fdebug-prefix-map=%s=.", dir);
  const char *argv[24];
  int n = 0;
  argv[n++] = cc;
  for (const char *const *f = rt_cpu_compile_flags(); *f; f++) argv[n++] = *f;
  for (const char *const *f = kernel_sanitize; *f; f++) argv[n++] = *f;
  if (rt_cc_is_clang(cc)) argv[n++] = "-fbracket-depth=4096";
  if (debug) argv[n++] = "-g";
  if (debug && map) argv[n++] = map;
  argv[n++] = "-o";
  argv[n++] = "kernel.so";
  argv[n++] = "kernel.c";
  argv[n++] = "-lm";
  argv[n] = NULL;
  rt_buf log = {0};
  int status = run_capture((char *const *)argv, dir, &log);
  kern_status st = KERN_OK;
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    st = compile_failed(cc, status, &log);
  rt_buf_free(&log);
  free(map);
  return st;
}

static kern_status build_in(const char *src, size_t len, const char *cc, bool debug,
                            const char *cache, rt_cpu_lib *out, bool *in_cache_out) {
  bool in_cache;
  char *dir = make_build_dir(cache, &in_cache);
  *in_cache_out = in_cache;
  if (!dir)
    return rt_error(KERN_ERR_IO, "cannot create a build directory for CPU kernels: %s",
                    strerror(errno));
  char *c_path = rt_printf("%s/kernel.c", dir), *so_path = rt_printf("%s/kernel.so", dir);
  kern_status st = KERN_OK;
  if (!c_path || !so_path)
    st = rt_error(KERN_ERR_OUT_OF_MEMORY, "out of memory");
  else if (!write_file(c_path, src, len))
    st = rt_error(KERN_ERR_IO, "cannot write generated code to %s: %s", c_path, strerror(errno));
  else
    st = run_compiler(cc, dir, debug);
  if (st == KERN_OK && !(out->handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL))) {
    const char *why = dlerror();
    st = rt_error(KERN_ERR_COMPILE, "cannot load the compiled kernels: %s",
                  why ? why : "unknown error");
  }
  /* The loaded mapping survives the rename into the cache and the cleanup. */
  if (st == KERN_OK && in_cache)
    out->cached = rt_cache_store(cache, out->key, out->source, so_path);
  rt_remove_tree(dir);
  free(c_path);
  free(so_path);
  free(dir);
  return st;
}

/* Builds in the cache directory when it is writable; a build that fails there
 * (a full or failing file system) is tried once more in a private temp dir,
 * uncached, and that attempt's error is the one reported. */
static kern_status build(const char *src, size_t len, const char *cc, bool debug, const char *cache,
                         rt_cpu_lib *out) {
  bool in_cache;
  kern_status st = build_in(src, len, cc, debug, cache, out, &in_cache);
  if (st != KERN_OK && st != KERN_ERR_OUT_OF_MEMORY && in_cache) {
    if (out->handle) dlclose(out->handle);
    out->handle = NULL;
    st = build_in(src, len, cc, debug, NULL, out, &in_cache);
  }
  return st;
}

kern_status rt_cpu_compile(const char *src, size_t len, bool debug, rt_cpu_lib *out) {
  memset(out, 0, sizeof *out);
  if (!src) return rt_error(KERN_ERR_INVALID_ARGUMENT, "rt_cpu_compile: source is NULL");
  const char *cache = rt_cache_dir();
  char *any = out->source, *cc;
  kern_status st = find_compiler(&cc);
  if (st == KERN_OK) {
    make_key(src, len, cc, debug, out->key);
    if (cache && rt_cache_load(cache, out->key, NULL, &out->handle)) {
      out->from_cache = true;
      free(cc);
      return KERN_OK;
    }
  }
  /* A miss with no compiler, or one that cannot say what it is: any cached
   * build of this source will do. */
  make_key(src, len, NULL, debug, any);
  if ((st || !*compiler_identity(cc)) && cache && alias_load(cache, any, out)) {
    free(cc);
    return KERN_OK;
  }
  if (st) return cache ? st : rt_cache_explain(st);
  st = build(src, len, cc, debug, cache, out);
  if (st == KERN_OK && out->cached) alias_write(cache, any, out->key);
  free(cc);
  return st;
}

void rt_cpu_lib_close(rt_cpu_lib *lib) {
  if (lib && lib->handle) dlclose(lib->handle);
  if (lib) lib->handle = NULL;
}

void *rt_cpu_lib_sym(const rt_cpu_lib *lib, const char *name) {
  return lib && lib->handle ? dlsym(lib->handle, name) : NULL;
}
