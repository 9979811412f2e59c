/* core.c: library state: init/shutdown, configuration from the environment.
 *
 * Requires: device.c (rt_devices_init), pool.c (rt_pool_shutdown).
 * Produces: kern_init, kern_shutdown, the configuration, the version.
 * Breaks: nothing here prints; errors and warnings go through support/error.c.
 */
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kern_version(void) { return KERN_VERSION_NUM; }

const char *kern_version_string(void) {
#ifdef KERN_VERSION_STRING
  return KERN_VERSION_STRING;
#else
  return "0.1.0";
#endif
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
  if (s && *s) return str_dup(s);
  s = getenv("XDG_CACHE_HOME");
  if (s && *s == '/') return str_printf("%s/kern", s);
  s = getenv("HOME");
  if (s && *s) return str_printf("%s/.cache/kern", s);
  return NULL;
}

static void config_read(void) {
  free(config.cache_dir);
  free(config.cc);
  config.num_threads = env_threads();
  config.cache_dir = env_cache_dir();
  const char *cc = getenv("KERN_CC");
  config.cc = cc && *cc ? str_dup(cc) : NULL;
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
    atomic_store(&initialized, false);
  }
  pthread_mutex_unlock(&init_mu);
}
