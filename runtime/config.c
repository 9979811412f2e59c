/* config.c: the library's configuration from the environment, the debug
 * flag, and its version.
 *
 * Requires: nothing but the environment. Produces: rt_config_get and
 * friends, kern_version, kern_version_string.
 * Breaks: the environment is read when kern_init (or rt_config_reload) says
 * so, not on every use: KERN_NUM_THREADS, KERN_CACHE_DIR (else
 * $XDG_CACHE_HOME/kern, else ~/.cache/kern), KERN_CC, KERN_DEBUG, KERN_PATH,
 * KERN_CUDA_BLOCK2D, KERN_COMPILE_TIMEOUT, KERN_CACHE_MAX_BYTES and KERN_LOG
 * (which support/error.c keeps). A bad thread count, block shape, time limit
 * or size falls back to the default; yes/no variables (KERN_DEBUG) are
 * read by support/env.c's one rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "env.h"
#include "toolchain.h"

int kern_version(void) { return KERN_VERSION_NUM; }

const char *kern_version_string(void) {
#ifdef KERN_VERSION_STRING
  return KERN_VERSION_STRING;
#else
  return "0.1.0";
#endif
}

static rt_config config;
static _Atomic bool debug_flag;

static int env_threads(void) {
  const char *s = getenv("KERN_NUM_THREADS");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  if (s && *s) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    /* A bad value falls back to the default: a typo must not break launches. */
    if (!errno && *end == 0 && v >= 1 && v <= 1024) return (int)v;
  }
  return cores > 1024 ? 1024 : (int)cores;
}

static char *env_cache_dir(void) {
  const char *s = getenv("KERN_CACHE_DIR");
  if (s && *s) return str_dup(s);
  s = getenv("XDG_CACHE_HOME");
  if (s && *s == '/') return str_printf("%s/kern", s);
  s = getenv("HOME");
  if (s && *s) return str_printf("%s/.cache/kern", s);
  return NULL;
}

/* KERN_CUDA_BLOCK2D=WxH, powers of two with W * H in 32..1024; else 32x8: a
 * warp along the row (full 128-byte lines), eight rows. */
static void env_block2d(int b[2]) {
  const char *s = getenv("KERN_CUDA_BLOCK2D");
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  b[0] = 32, b[1] = 8;
  if (!s || sscanf(s, "%u%c%u%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X')) return;
  bool pow2 = w && h && !(w & (w - 1)) && !(h & (h - 1));
  if (pow2 && w * h >= 32 && w * h <= 1024) b[0] = (int)w, b[1] = (int)h;
}

/* KERN_CACHE_MAX_BYTES: bytes, or with a K, M or G suffix (powers of 1024);
 * 0 for no bound; else 1 GiB. */
static int64_t env_cache_max(void) {
  const int64_t fallback = (int64_t)1 << 30;
  const char *s = getenv("KERN_CACHE_MAX_BYTES");
  if (!s || !*s) return fallback;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  int shift = *end == 'K' || *end == 'k'   ? 10
              : *end == 'M' || *end == 'm' ? 20
              : *end == 'G' || *end == 'g' ? 30
                                           : 0;
  if (shift) end++;
  if (errno || end == s || *end || s[0] == '-' || v > (unsigned long long)INT64_MAX >> shift)
    return fallback;
  return (int64_t)(v << shift);
}

void rt_config_reload(void) {
  free(config.cache_dir);
  free(config.cc);
  free(config.path);
  config.num_threads = env_threads();
  config.cache_dir = env_cache_dir();
  const char *cc = getenv("KERN_CC");
  config.cc = cc && *cc ? str_dup(cc) : NULL;
  const char *path = getenv("KERN_PATH");
  config.path = path && *path ? str_dup(path) : NULL;
  env_block2d(config.block2d);
  int ms = tc_cc_timeout_ms(getenv("KERN_COMPILE_TIMEOUT"));
  config.compile_timeout_ms = ms < 0 ? TC_CC_TIMEOUT_DEFAULT_MS : ms;
  config.cache_max_bytes = env_cache_max();
  if (env_bool("KERN_DEBUG", false)) atomic_store(&debug_flag, true); /* no: kern_set_debug's */
  config.debug = atomic_load(&debug_flag);
  config.verify_fp = env_bool("KERN_VERIFY_FP", false);
  err_log_read_env();
}

const rt_config *rt_config_get(void) { return &config; }

void rt_config_clear(void) {
  free(config.cache_dir);
  free(config.cc);
  free(config.path);
  config = (rt_config){0};
}

bool rt_debug(void) { return atomic_load(&debug_flag); }

void rt_set_debug(bool on) { atomic_store(&debug_flag, on); }
