/* core.c: library state: init/shutdown, the thread-local error message,
 * configuration from the environment, warnings, small string helpers.
 *
 * Requires: device.c (rt_devices_init), pool.c (rt_pool_shutdown); for
 * kern_config_get, cpu_compile.c (the compiler) and cuda_api.c (NVRTC).
 * Produces: kern_init, kern_last_error, rt_error and friends, kern_config_get.
 * Breaks: every message the user sees goes through rt_error; nothing here may
 * print except the default warning handler.
 */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"

/* ---- errors ------------------------------------------------------------------ */

/* The buffer is per thread; a pthread key frees it when the thread exits. */
static _Thread_local char *err_msg;
static _Thread_local size_t err_cap;
static _Thread_local kern_status err_status;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void err_free(void *p) { free(p); }
static void err_key_init(void) { pthread_key_create(&err_key, err_free); }

static void err_set(const char *prefix, const char *text) {
  size_t a = strlen(prefix), b = strlen(text), need = a + b + 1;
  pthread_once(&err_once, err_key_init);
  if (need > err_cap) {
    char *p = realloc(err_msg, need);
    if (!p) {
      /* Keep what fits: a truncated message beats none. */
      if (err_cap == 0) return;
      need = err_cap;
      if (a >= need) a = need - 1;
      b = need - 1 - a;
    } else {
      err_msg = p;
      err_cap = need;
      pthread_setspecific(err_key, p);
    }
  }
  memcpy(err_msg, prefix, a);
  memcpy(err_msg + a, text, b);
  err_msg[a + b] = 0;
}

kern_status rt_verror(kern_status st, const char *fmt, va_list ap) {
  char small[1024];
  err_status = st;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small) {
    char *big = malloc((size_t)n + 1);
    if (big) {
      vsnprintf(big, (size_t)n + 1, fmt, ap2);
      err_set("", big);
      free(big);
      va_end(ap2);
      return st;
    }
  }
  va_end(ap2);
  err_set("", n < 0 ? "(unformattable message)" : small);
  return st;
}

kern_status rt_error(kern_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rt_verror(st, fmt, ap);
  va_end(ap);
  return st;
}

kern_status rt_error_text(kern_status st, const char *prefix, const char *text) {
  err_status = st;
  err_set(prefix ? prefix : "", text ? text : "");
  return st;
}

const char *kern_last_error(void) { return err_msg ? err_msg : ""; }

kern_status kern_last_status(void) { return err_status; }

void kern_clear_error(void) {
  if (err_msg) err_msg[0] = 0;
  err_status = KERN_OK;
}

const char *kern_status_name(kern_status st) {
  static const char *const names[] = {"KERN_OK",
                                      "KERN_ERR_INVALID_ARGUMENT",
                                      "KERN_ERR_COMPILE",
                                      "KERN_ERR_NOT_FOUND",
                                      "KERN_ERR_OUT_OF_MEMORY",
                                      "KERN_ERR_ACCESS",
                                      "KERN_ERR_BOUNDS",
                                      "KERN_ERR_CAPTURE",
                                      "KERN_ERR_CUDA",
                                      "KERN_ERR_UNSUPPORTED",
                                      "KERN_ERR_IO"};
  if ((unsigned)st >= sizeof names / sizeof names[0]) return "KERN_ERR_?";
  return names[st];
}

int kern_version(void) { return KERN_VERSION_NUM; }

const char *kern_version_string(void) {
#ifdef KERN_VERSION_STRING
  return KERN_VERSION_STRING;
#else
  return "0.1.0";
#endif
}

/* ---- strings ---------------------------------------------------------------------- */

char *rt_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

char *rt_printf(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = n < 0 ? NULL : malloc((size_t)n + 1);
  if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void rt_buf_add(rt_buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void rt_buf_printf(rt_buf *b, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n < (int)sizeof small) {
    rt_buf_add(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  rt_buf_add(b, big, (size_t)n);
  free(big);
}

void rt_buf_free(rt_buf *b) {
  free(b->s);
  *b = (rt_buf){0};
}

/* ---- configuration ---------------------------------------------------------------- */

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
  if (s && *s) return rt_strdup(s);
  s = getenv("XDG_CACHE_HOME");
  if (s && *s == '/') return rt_printf("%s/kern", s);
  s = getenv("HOME");
  if (s && *s) return rt_printf("%s/.cache/kern", s);
  return NULL;
}

static void config_read(void) {
  free(config.cache_dir);
  free(config.cc);
  config.num_threads = env_threads();
  config.cache_dir = env_cache_dir();
  const char *cc = getenv("KERN_CC");
  config.cc = cc && *cc ? rt_strdup(cc) : NULL;
  const char *dbg = getenv("KERN_DEBUG");
  if (dbg && *dbg && strcmp(dbg, "0") != 0) atomic_store(&debug_flag, true);
  config.debug = atomic_load(&debug_flag);
}

const rt_config *rt_config_get(void) { return &config; }

void rt_config_reload(void) { config_read(); }

void kern_set_debug(bool on) {
  rt_ensure_init();
  atomic_store(&debug_flag, on);
}

bool kern_get_debug(void) {
  rt_ensure_init();
  return atomic_load(&debug_flag);
}

/* ---- kern_config_get ------------------------------------------------------------------- */

/* The compiler's path, kept until kern_shutdown (kern_config's strings). */
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static char *report_cc;

/* The file NVRTC was loaded from, through one of its functions. */
static const char *nvrtc_file(const rt_nvrtc_api *nv) {
  Dl_info info;
  return nv && dladdr((void *)nv->Version, &info) && info.dli_fname ? info.dli_fname : NULL;
}

kern_status kern_config_get(kern_config *out) {
  if (!out) return rt_error(KERN_ERR_INVALID_ARGUMENT, "kern_config_get: out is NULL");
  rt_ensure_init();
  const char *ident = "", *why = "";
  char *cc = rt_cpu_compiler(&ident);
  const rt_nvrtc_api *nv = rt_nvrtc_load(&why);
  pthread_mutex_lock(&report_mu);
  if (cc && (!report_cc || strcmp(cc, report_cc) != 0)) {
    free(report_cc);
    report_cc = cc;
    cc = NULL;
  }
  *out = (kern_config){.version = kern_version_string(),
                       .cc = report_cc,
                       .cc_version = report_cc ? ident : "",
                       .nvrtc = nvrtc_file(nv),
                       .nvrtc_version = nv ? rt_nvrtc_version() : 0,
                       .nvrtc_error = nv    ? ""
                                      : why ? why
                                            : "",
                       .cache_dir = kern_cache_dir(),
                       .num_threads = config.num_threads,
                       .debug = kern_get_debug()};
  pthread_mutex_unlock(&report_mu);
  free(cc);
  return KERN_OK;
}

/* ---- init / shutdown ----------------------------------------------------------------- */

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool initialized;
static kern_status init_status;

kern_status kern_init(void) {
  if (atomic_load_explicit(&initialized, memory_order_acquire)) return init_status;
  pthread_mutex_lock(&init_mu);
  if (!atomic_load(&initialized)) {
    config_read();
    init_status = rt_devices_init();
    atomic_store_explicit(&initialized, true, memory_order_release);
  }
  pthread_mutex_unlock(&init_mu);
  return init_status;
}

kern_status rt_ensure_init(void) {
  if (atomic_load_explicit(&initialized, memory_order_acquire)) return init_status;
  return kern_init();
}

void kern_shutdown(void) {
  pthread_mutex_lock(&init_mu);
  if (atomic_load(&initialized)) {
    rt_embedded_shutdown();
    rt_pool_shutdown();
    free(config.cache_dir);
    free(config.cc);
    config = (rt_config){0};
    pthread_mutex_lock(&report_mu);
    free(report_cc);
    report_cc = NULL;
    pthread_mutex_unlock(&report_mu);
    atomic_store(&initialized, false);
  }
  pthread_mutex_unlock(&init_mu);
}

/* ---- warnings --------------------------------------------------------------------------- */

static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;
static void (*warn_fn)(const char *, void *);
static void *warn_ud;

void kern_set_warning_handler(void (*fn)(const char *msg, void *ud), void *ud) {
  pthread_mutex_lock(&warn_mu);
  warn_fn = fn;
  warn_ud = ud;
  pthread_mutex_unlock(&warn_mu);
}

void rt_warn(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&warn_mu);
  void (*fn)(const char *, void *) = warn_fn;
  void *ud = warn_ud;
  pthread_mutex_unlock(&warn_mu);
  if (fn)
    fn(msg, ud);
  else
    fprintf(stderr, "kern: warning: %s\n", msg);
}
