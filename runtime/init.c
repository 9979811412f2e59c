/* init.c: kern_init and kern_shutdown: the configuration, the backends'
 * probes, and the public entry points that start the library lazily.
 *
 * Requires: config.c, device.c (the table the probes fill), the backends'
 * probes (runtime/cpu/, runtime/cuda/: the only core file that names them)
 * and the CPU pool's shutdown. Produces: kern_init, kern_shutdown,
 * rt_ensure_init, rt_at_shutdown, kern_device_count/at/get, kern_set_debug,
 * kern_get_debug, kern_cache_dir, kern_config_get.
 * Breaks: init never fails (a missing or broken CUDA driver leaves the CPU
 * usable) and never touches CUDA: it registers the CPU and hands the GPU
 * probe to device.c, which runs it the first time a caller needs the device
 * list (the lookups here, a pinned allocation, a foreign pointer while the
 * driver is in the process); a GPU's context waits for its first use
 * (runtime/cuda/). Device objects are never freed, so handles stay valid
 * across kern_shutdown/kern_init. State above this file that the library
 * frees at shutdown registers with rt_at_shutdown (modules of kernc build),
 * so this file never calls up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <string.h>

#include "core.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "toolchain.h"
#include "fork.h"

enum { MAX_AT_SHUTDOWN = 8 };

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&init_mu, NULL, FORK_RANK_INIT)
static _Atomic bool initialized;
static kern_status init_status;
/* The shutdown list has a lock of its own: it is registered under others' locks. */
static pthread_mutex_t at_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&at_mu, NULL, FORK_RANK_AT_SHUTDOWN)
static void (*at_shutdown[MAX_AT_SHUTDOWN])(void);
static int nat_shutdown;
/* kern_config_get's compiler path, kept until kern_shutdown (kern_config's strings). */
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&report_mu, NULL, FORK_RANK_REPORT)
static char *report_cc;

/* CUDA devices: only with a driver and a GPU; once per process, on first need. */
static void probe_gpus(void) {
  rt_cuda_probe();
  rt_set_cuda_absent_reason(rt_cuda_probe_reason());
}

/* The CPU is always there, at once; the GPUs when asked for. */
static kern_status probe(void) {
  rt_cpu_probe();
  rt_device_set_gpu_probe(probe_gpus, rt_cuda_driver_loaded);
  return KERN_OK;
}

kern_status kern_init(void) {
  if (atomic_load_explicit(&initialized, memory_order_acquire)) return init_status;
  pthread_mutex_lock(&init_mu);
  if (!atomic_load(&initialized)) {
    rt_config_reload();
    init_status = probe();
    atomic_store_explicit(&initialized, true, memory_order_release);
  }
  pthread_mutex_unlock(&init_mu);
  return init_status;
}

kern_status rt_ensure_init(void) {
  if (atomic_load_explicit(&initialized, memory_order_acquire)) return init_status;
  return kern_init();
}

void rt_at_shutdown(void (*fn)(void)) {
  pthread_mutex_lock(&at_mu);
  bool known = false;
  for (int i = 0; i < nat_shutdown; i++) known |= at_shutdown[i] == fn;
  if (!known && nat_shutdown < MAX_AT_SHUTDOWN) at_shutdown[nat_shutdown++] = fn;
  pthread_mutex_unlock(&at_mu);
}

static void run_at_shutdown(void) {
  pthread_mutex_lock(&at_mu);
  int n = nat_shutdown;
  void (*fns[MAX_AT_SHUTDOWN])(void);
  for (int i = 0; i < n; i++) fns[i] = at_shutdown[i];
  pthread_mutex_unlock(&at_mu);
  for (int i = 0; i < n; i++) fns[i]();
}

void kern_shutdown(void) {
  pthread_mutex_lock(&init_mu);
  if (atomic_load(&initialized)) {
    run_at_shutdown();
    rt_pool_shutdown();
    rt_config_clear();
    pthread_mutex_lock(&report_mu);
    free(report_cc);
    report_cc = NULL;
    pthread_mutex_unlock(&report_mu);
    atomic_store(&initialized, false);
  }
  pthread_mutex_unlock(&init_mu);
}

/* ---- entry points that start the library ------------------------------------------------ */

void kern_set_debug(bool on) {
  rt_ensure_init();
  rt_set_debug(on);
}

bool kern_get_debug(void) {
  rt_ensure_init();
  return rt_debug();
}

int kern_device_count(void) {
  rt_ensure_init();
  rt_devices_probe_gpus(false);
  return rt_device_count();
}

kern_device *kern_device_at(int index) {
  rt_ensure_init();
  if (index != 0) rt_devices_probe_gpus(false); /* index 0 is the CPU */
  kern_device *d = rt_device_at(index);
  if (!d)
    err_set(KERN_ERR_NOT_FOUND, "no device at index %d (there are %d devices)", index,
            rt_device_count());
  return d;
}

kern_device *kern_device_get(const char *name) {
  rt_ensure_init();
  if (name && strncmp(name, "cuda", 4) == 0) rt_devices_probe_gpus(false);
  return rt_device_find(name);
}

const char *kern_cache_dir(void) {
  if (rt_ensure_init()) return NULL;
  return rt_cache_dir_or_error();
}

kern_status kern_cache_info_get(kern_cache_info *out) {
  if (!out) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_cache_info_get: out is NULL");
  *out = (kern_cache_info){.dir = kern_cache_dir()};
  if (!out->dir) return kern_last_status();
  out->max_bytes = rt_config_get()->cache_max_bytes;
  rt_cache_measure(out->dir, &out->entries, &out->bytes);
  return KERN_OK;
}

kern_status kern_cache_clear(void) {
  const char *dir = kern_cache_dir();
  if (!dir) return kern_last_status();
  if (!rt_cache_clear(dir))
    return err_set(KERN_ERR_IO, "cannot clear the cache directory '%s': %s", dir, strerror(errno));
  return KERN_OK;
}

/* The compiler the JIT would use (the toolchain's rule) and NVRTC, found now
 * if no compile has yet. */
kern_status kern_config_get(kern_config *out) {
  if (!out) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_config_get: out is NULL");
  rt_ensure_init();
  const char *why = "";
  char *cc = tc_cc_find(rt_config_get()->cc, NULL);
  const char *ident = cc ? tc_cc_identity(cc, rt_config_get()->compile_timeout_ms) : "";
  bool nvrtc = tc_nvrtc_available(&why);
  pthread_mutex_lock(&report_mu);
  if (cc && (!report_cc || strcmp(cc, report_cc) != 0)) {
    free(report_cc);
    report_cc = cc;
    cc = NULL;
  }
  *out = (kern_config){.version = kern_version_string(),
                       .cc = report_cc,
                       .cc_version = report_cc ? ident : "",
                       .nvrtc = tc_nvrtc_file(),
                       .nvrtc_version = nvrtc ? tc_nvrtc_version() : 0,
                       .nvrtc_error = nvrtc ? ""
                                      : why ? why
                                            : "",
                       .cache_dir = kern_cache_dir(),
                       .num_threads = rt_config_get()->num_threads,
                       .debug = kern_get_debug(),
                       .compile_timeout = rt_config_get()->compile_timeout_ms / 1000.0,
                       .cache_max_bytes = rt_config_get()->cache_max_bytes};
  pthread_mutex_unlock(&report_mu);
  free(cc);
  return KERN_OK;
}
