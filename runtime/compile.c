/* compile.c: compile-and-cache: a module's code for the CPU or a GPU, from
 * kernc build's table or generated and compiled through the disk cache.
 *
 * Requires: the emitter (C and CUDA source), cache.c, sha256.c, the
 * configuration (KERN_CC, cache dir), the toolchain (support/toolchain.h:
 * which C compiler, its flags, running it; NVRTC). Produces:
 * rt_module_binary, which both backends call from their compile op, and
 * rt_cpu_compile (C source -> loaded shared object) under it.
 * Breaks: both kinds take the same steps: a key that covers everything that
 * changes the output, a look in the cache, on a miss the toolchain, then the
 * cache again (C is built in a directory and loaded with dlopen, CUDA is
 * compiled in memory and the bytes cached). The CPU key covers the source (which embeds the stdlib text),
 * the compiler's path and version line, the flags (-O0 to -O3 by
 * KERN_CPU_OPT), KN_ABI_VERSION, kern's version and the CPU (for
 * -march=native); the GPU key the source, NVRTC's version, the arch, the
 * options, the ABI and kern's version. Code from kernc build's table needs
 * neither compiler nor cache.
 * The compiler runs with an argument vector (no shell), by its absolute path, in
 * a private build directory, so concurrent builds never share a file; a
 * failed build leaves nothing behind. Warm loads, direct or through the
 * alias, go through cache.c's checks; the alias leads only to an entry whose
 * meta names the same source.
 */
#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"
#include "file.h"
#include "toolchain.h"
#include "fork.h"
#include "dl.h"

/* When libkern itself is built with AddressSanitizer (make test-asan), the
 * kernels it compiles and loads are instrumented too, so an out-of-bounds
 * access in a release-mode kernel is reported like one in the library (the
 * process has the ASan runtime; clang's and gcc's instrumentation both use
 * it). kernc build's objects are not: they go into other programs.
 * Vectorisation is off there: with -march=native on AVX-512 machines clang
 * turns a guarded store into a masked scatter, which ASan does not check, so
 * the out-of-bounds write went unreported; scalar code is checked access by
 * access, with either compiler. Nor above -O1 (asan_opt_cap): instrumenting
 * clang's -O3 code of the matmul module took 114 s against 3.5 s at -O1
 * (22 s uninstrumented), and a loaded two-core machine ran past the compile
 * timeout; ASan checks the same accesses at either level, and the results
 * are the same bits (no level changes floating-point semantics). */
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

/* "-O1" where cc's level is higher in an ASan build, else NULL (the level
 * is in the cache key through tc_cc_flags). */
static const char *asan_opt_cap(const char *cc) {
#ifdef RT_KERNEL_ASAN
  for (const char *const *f = tc_cc_flags(TC_SHARED_NATIVE, cc); *f; f++)
    if (!strcmp(*f, "-O2") || !strcmp(*f, "-O3")) return "-O1";
#else
  (void)cc;
#endif
  return NULL;
}

/* ---- finding the compiler ------------------------------------------------------ */

static kern_status find_compiler(char **out) {
  const char *cc = rt_config_get()->cc;
  *out = tc_cc_find(cc, NULL);
  if (*out) return KERN_OK;
  if (cc)
    return err_set(KERN_ERR_COMPILE,
                   "the C compiler KERN_CC='%s' was not found or is not executable", cc);
  return err_set(KERN_ERR_COMPILE,
                 "no C compiler found for CPU kernels: install clang or cc, or set KERN_CC");
}

/* ---- identities (once per process) ----------------------------------------------------------- */

static pthread_mutex_t ident_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&ident_mu, NULL, FORK_RANK_CPU_ID)
static char *cpu_id;

/* The first processor's model name and flags: -march=native code for one
 * CPU may not run on another. */
static const char *cpu_identity(void) {
  pthread_mutex_lock(&ident_mu);
  if (!cpu_id) {
    Buf b = {0};
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
      if (line[0] == '\n') break; /* end of the first processor */
      if (!strncmp(line, "model name", 10) || !strncmp(line, "flags", 5) ||
          !strncmp(line, "vendor_id", 9) || !strncmp(line, "Features", 8) ||
          !strncmp(line, "CPU part", 8))
        buf_add(&b, line, strlen(line));
    }
    if (f) fclose(f);
    cpu_id = b.s ? b.s : str_dup("unknown cpu");
  }
  pthread_mutex_unlock(&ident_mu);
  return cpu_id ? cpu_id : "";
}

/* ---- the key ---------------------------------------------------------------------------------- */

static void hash_str(rt_sha256 *s, const char *str) { rt_sha256_add(s, str, strlen(str) + 1); }

/* The key of everything but the compiler: the source, cc's flags, ABI and CPU. */
static void hash_common(rt_sha256 *s, const char *src, size_t len, const char *cc, unsigned mode) {
  char abi[64];
  snprintf(abi, sizeof abi, "kern-cpu abi=%d version=%s", KN_ABI_VERSION, kern_version_string());
  hash_str(s, abi);
  for (const char *const *f = tc_cc_flags(TC_SHARED_NATIVE, cc); *f; f++) hash_str(s, *f);
  for (const char *const *f = kernel_sanitize; *f; f++) hash_str(s, *f);
  hash_str(s, mode & RT_CC_DEBUG ? "-g" : "");
  for (const char *const *f = mode & RT_CC_FAST_MATH ? tc_fast_math_flags() : NULL; f && *f; f++)
    hash_str(s, *f);
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
static void make_key(const char *src, size_t len, const char *cc, unsigned mode, char key[33]) {
  rt_sha256 s;
  rt_sha256_init(&s);
  hash_common(&s, src, len, cc, mode);
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
  char *tmp = str_printf("%s/.alias-%s", cache, suffix),
       *dst = str_printf("%s/%s.latest", cache, any);
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
  char *path = str_printf("%s/%s.latest", cache, any), key[33] = {0};
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
  bool ok = fd >= 0 && read(fd, key, 32) == 32;
  if (ok) futimens(fd, NULL); /* used now, like the entry it leads to */
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

/* Where private build directories go: $TMPDIR, else /tmp. */
static const char *temp_root(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

/* A fresh directory for one build: in the cache dir when writable, else a
 * private temp dir. malloc'd; NULL (errno) on failure. */
static char *make_build_dir(const char *cache, bool *in_cache) {
  *in_cache = false;
  if (cache && access(cache, W_OK | X_OK) == 0) {
    char *d = rt_cache_build_dir(cache);
    if (d) {
      *in_cache = true;
      return d;
    }
  }
  char *d = str_printf("%s/kern-build-XXXXXX", temp_root());
  if (!d) errno = ENOMEM;
  if (d && mkdtemp(d)) return d;
  free(d);
  return NULL;
}

static kern_status compile_failed(const char *cc, const ProcResult *r, Buf *log) {
  char head[512];
  if (!r->started)
    snprintf(head, sizeof head, "could not run the C compiler '%s': %s\n", cc, strerror(r->err));
  else if (r->timed_out)
    snprintf(head, sizeof head,
             "the C compiler '%s' did not finish within %g s and was stopped (KERN_COMPILE_TIMEOUT "
             "sets the limit in seconds, 0 for none); its output:\n",
             cc, rt_config_get()->compile_timeout_ms / 1000.0);
  else if (r->signal)
    snprintf(head, sizeof head, "the C compiler '%s' was killed by signal %d on generated code:\n",
             cc, r->signal);
  else
    snprintf(head, sizeof head, "the C compiler '%s' failed (exit status %d) on generated code:\n",
             cc, r->status);
  if (r->started && !r->timed_out) { /* the checker accepted the source: bad C is kern's bug */
    if (!log->len) buf_add(log, "(no output)", 11);
    buf_printf(log, "\n(if '%s' builds other C code, %s)", cc, ERR_BUG_REPORT);
  }
  return err_text(KERN_ERR_COMPILE, head, log->s && !log->oom ? log->s : "(no output)");
}

/* Compiles kernel.c in dir into kernel.so; *timed_out when the compiler ran
 * past the time limit. */
static kern_status run_compiler(const char *cc, const char *dir, unsigned mode, bool *timed_out) {
  bool debug = mode & RT_CC_DEBUG;
  char *map = str_printf("-fdebug-prefix-map=%s=.", dir);
  const char *flags[16];
  int n = 0;
  for (const char *const *f = kernel_sanitize; *f; f++) flags[n++] = *f;
  const char *cap = asan_opt_cap(cc);
  if (cap) flags[n++] = cap;
  for (const char *const *f = mode & RT_CC_FAST_MATH ? tc_fast_math_flags() : NULL; f && *f; f++)
    flags[n++] = *f;
  if (debug && map) flags[n++] = map;
  flags[n] = NULL;
  const char *inputs[] = {"-o", "kernel.so", "kernel.c", "-lm", NULL};
  Buf log = {0};
  ProcResult r;
  TcCompile job = {.cc = cc,
                   .output = TC_SHARED_NATIVE,
                   .debug = debug,
                   .flags = flags,
                   .inputs = inputs,
                   .cwd = dir,
                   .log = &log,
                   .timeout_ms = rt_config_get()->compile_timeout_ms};
  kern_status st = tc_cc_run(&job, &r) ? KERN_OK : compile_failed(cc, &r, &log);
  *timed_out = r.timed_out;
  buf_free(&log);
  free(map);
  return st;
}

static kern_status build_in(const char *src, size_t len, const char *cc, unsigned mode,
                            const char *cache, rt_cpu_lib *out, bool *in_cache_out,
                            bool *timed_out) {
  bool in_cache;
  char *dir = make_build_dir(cache, &in_cache);
  *in_cache_out = in_cache;
  *timed_out = false;
  if (!dir)
    return err_set(KERN_ERR_IO,
                   "cannot create a build directory for CPU kernels in '%s' (TMPDIR): %s",
                   temp_root(), strerror(errno));
  char *c_path = str_printf("%s/kernel.c", dir), *so_path = str_printf("%s/kernel.so", dir);
  kern_status st = KERN_OK;
  if (!c_path || !so_path)
    st = err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory");
  else if (!file_write(c_path, O_CREAT | O_TRUNC, src, len))
    st = err_set(KERN_ERR_IO, "cannot write generated code to %s: %s", c_path, strerror(errno));
  else
    st = run_compiler(cc, dir, mode, timed_out);
  if (st == KERN_OK && !(out->handle = dl_open(so_path, RTLD_NOW | RTLD_LOCAL))) {
    const char *why = dlerror();
    st = err_set(KERN_ERR_COMPILE, "cannot load the compiled kernels: %s",
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
 * uncached, and that attempt's error is the one reported. A compiler that ran
 * out of time is not given a second wait. */
static kern_status build(const char *src, size_t len, const char *cc, unsigned mode,
                         const char *cache, rt_cpu_lib *out) {
  bool in_cache, timed_out;
  kern_status st = build_in(src, len, cc, mode, cache, out, &in_cache, &timed_out);
  if (st != KERN_OK && st != KERN_ERR_OUT_OF_MEMORY && in_cache && !timed_out) {
    if (out->handle) dl_close(out->handle);
    out->handle = NULL;
    st = build_in(src, len, cc, mode, NULL, out, &in_cache, &timed_out);
  }
  return st;
}

kern_status rt_cpu_compile(const char *src, size_t len, unsigned mode, rt_cpu_lib *out) {
  memset(out, 0, sizeof *out);
  if (!src) return err_set(KERN_ERR_INVALID_ARGUMENT, "rt_cpu_compile: source is NULL");
  const char *cache = rt_cache_dir();
  char *any = out->source, *cc;
  kern_status st = find_compiler(&cc);
  if (st == KERN_OK) {
    make_key(src, len, cc, mode, out->key);
    if (cache && rt_cache_load(cache, out->key, NULL, &out->handle)) {
      out->from_cache = true;
      free(cc);
      return KERN_OK;
    }
  }
  /* A miss with no compiler, or one that cannot say what it is: any cached
   * build of this source will do. */
  make_key(src, len, NULL, mode, any);
  if ((st || !*tc_cc_identity(cc, rt_config_get()->compile_timeout_ms)) && cache &&
      alias_load(cache, any, out)) {
    free(cc);
    return KERN_OK;
  }
  if (st) return cache ? st : rt_cache_explain(st);
  st = build(src, len, cc, mode, cache, out);
  if (st == KERN_OK && out->cached) alias_write(cache, any, out->key);
  free(cc);
  return st;
}

void rt_cpu_lib_close(rt_cpu_lib *lib) {
  if (lib && lib->handle) dl_close(lib->handle);
  if (lib) lib->handle = NULL;
}

void *rt_cpu_lib_sym(const rt_cpu_lib *lib, const char *name) {
  return lib && lib->handle ? dlsym(lib->handle, name) : NULL;
}

/* ---- GPU images ---------------------------------------------------------------------------- */

/* Cache key: the source, NVRTC's version, the arch and the options. */
static void gpu_key(const char *src, int arch, unsigned flags, char hex[65]) {
  rt_sha256 h;
  unsigned char dig[32];
  char extra[128];
  snprintf(extra, sizeof extra, "|nvrtc=%d|sm_%d|debug=%d|fast=%d|abi=%d|kern=%s",
           tc_nvrtc_version(), arch, (flags & TC_NVRTC_DEBUG) != 0,
           (flags & TC_NVRTC_FAST_MATH) != 0, KN_ABI_VERSION, kern_version_string());
  rt_sha256_init(&h);
  rt_sha256_add(&h, src, strlen(src));
  rt_sha256_add(&h, extra, strlen(extra));
  rt_sha256_done(&h, dig);
  rt_hex(dig, 32, hex);
}

/* CUDA source -> CUBIN (or PTX), from the cache when possible. */
static kern_status gpu_compile(const char *src, const char *name, int arch, unsigned flags,
                               char **bin, size_t *len, rt_origin *origin) {
  char key[65];
  gpu_key(src, arch, flags, key);
  const char *dir = rt_cache_dir();
  *bin = dir ? rt_cache_blob_read(dir, key, len) : NULL;
  *origin = *bin ? RT_ORIGIN_CACHED : RT_ORIGIN_COMPILED;
  kern_status s = KERN_OK;
  if (!*bin) {
    bool is_ptx;
    s = tc_nvrtc_compile(src, name, arch, true, flags, bin, len, &is_ptx);
    if (s == KERN_OK && dir) rt_cache_blob_write(dir, key, *bin, *len + (is_ptx ? 1 : 0));
  }
  return s;
}

/* ---- kernc build's table ---------------------------------------------------------------------- */

/* The best image for sm_<arch>: a CUBIN of the same major arch and the highest
 * minor not above the device's (binary compatible), else the newest PTX not
 * above it (the driver compiles it). NULL if none fits. */
static const kn_embed_image *pick_image(const kern_embedded *e, int arch) {
  const kn_embed_image *best = NULL;
  for (int i = 0; i < e->nimages; i++) {
    const kn_embed_image *im = &e->images[i];
    if (!im->is_ptx && im->arch / 10 == arch / 10 && im->arch <= arch &&
        (!best || im->arch > best->arch))
      best = im;
  }
  for (int i = 0; !best && i < e->nimages; i++) {
    const kn_embed_image *im = &e->images[i];
    if (im->is_ptx && im->arch <= arch && (!best || im->arch > best->arch)) best = im;
  }
  return best;
}

static kern_status no_image(const kern_embedded *e, int arch) {
  if (e->nimages == 0)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "module '%s' has no GPU code (kernc build ran with --no-cuda or without NVRTC): rebuild it "
        "with --arch=sm_%d to run it on this GPU (sm_%d)",
        e->name, arch, arch);
  Buf b = {0};
  for (int i = 0; i < e->nimages; i++)
    buf_printf(&b, "%s%s_%d", i ? ", " : "", e->images[i].is_ptx ? "PTX compute" : "sm",
               (int)e->images[i].arch);
  kern_status st =
      err_set(KERN_ERR_UNSUPPORTED,
              "module '%s' has no GPU code that runs on sm_%d (it has %s): rebuild it with "
              "kernc build --arch=sm_%d",
              e->name, arch, b.s ? b.s : "?", arch);
  buf_free(&b);
  return st;
}

kern_status rt_embedded_gpu_image(const kern_module *m, int arch, char **image, size_t *len) {
  const kn_embed_image *im = pick_image(m->embedded, arch);
  if (!im) return no_image(m->embedded, arch);
  *image = malloc((size_t)im->size + 1);
  if (!*image) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading module '%s'", m->name);
  memcpy(*image, im->data, (size_t)im->size);
  (*image)[im->size] = 0; /* PTX is text; the driver wants it terminated */
  *len = (size_t)im->size;
  return KERN_OK;
}

/* ---- a module's code --------------------------------------------------------------------------- */

/* The generated C, made once per module (a module is compiled once per
 * device, and kept for the module's life). */
static kern_status c_source(kern_module *m, const char **out) {
  pthread_mutex_lock(&m->source_mu);
  if (!m->c_source) {
    EmitOptions o = {.debug = m->debug,
                     .line_directives = true,
                     .fast_math = m->fast_math,
                     .verify_fp = m->verify_fp};
    m->c_source = emit_program(m->prog, EMIT_C, &o);
  }
  *out = m->c_source;
  pthread_mutex_unlock(&m->source_mu);
  if (!*out)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory generating code for module '%s'",
                   m->name);
  return KERN_OK;
}

static kern_status cpu_binary(kern_module *m, rt_binary *out) {
  if (m->embedded) { /* kernc build: its entry points, no compiler */
    out->aot = m->embedded->kernels;
    out->origin = RT_ORIGIN_EMBEDDED;
    return KERN_OK;
  }
  const char *src;
  kern_status st = c_source(m, &src);
  unsigned mode = (m->debug ? RT_CC_DEBUG : 0) | (m->fast_math ? RT_CC_FAST_MATH : 0);
  if (!st) st = rt_cpu_compile(src, strlen(src), mode, &out->lib);
  out->origin = out->lib.from_cache ? RT_ORIGIN_CACHED : RT_ORIGIN_COMPILED;
  return st;
}

static kern_status gpu_binary(kern_module *m, int arch, rt_binary *out) {
  if (m->embedded) {
    out->origin = RT_ORIGIN_EMBEDDED;
    return rt_embedded_gpu_image(m, arch, &out->image, &out->len);
  }
  EmitOptions o = {.debug = m->debug,
                   .line_directives = true,
                   .fast_math = m->fast_math,
                   .verify_fp = m->verify_fp};
  char *src = emit_program(m->prog, EMIT_CUDA, &o);
  if (!src) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory generating CUDA source");
  unsigned flags = (m->debug ? TC_NVRTC_DEBUG : 0) | (m->fast_math ? TC_NVRTC_FAST_MATH : 0);
  kern_status st = gpu_compile(src, m->name, arch, flags, &out->image, &out->len, &out->origin);
  free(src);
  return st;
}

kern_status rt_module_binary(kern_module *m, rt_code_kind kind, int arch, rt_binary *out) {
  memset(out, 0, sizeof *out);
  return kind == RT_CODE_CPU ? cpu_binary(m, out) : gpu_binary(m, arch, out);
}
