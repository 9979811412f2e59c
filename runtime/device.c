/* device.c: the device table, device names and properties, the
 * memory-access rules, and the capture state every device carries.
 *
 * Requires: nothing above backend.h: a device's own ops for its properties.
 * Produces: rt_device_add (for the backends' probes), rt_device_find and the
 * table (init.c wraps them in the public lookups, which start the library),
 * rt_devices_probe_gpus (the GPU probe init.c registers, run on first need),
 * kern_device_* properties, kern_can_access, rt_host (a GPU driver's host
 * memory services) and rt_capture_refuse.
 * Breaks: device index 0 is always "cpu" (its ops come with the CPU probe);
 * device objects are never freed, so handles stay valid across
 * kern_shutdown/kern_init. GPUs are probed once per process, when something
 * first needs them (starting CUDA costs tens of milliseconds or more, which a
 * CPU-only program must not pay); the probe is registered here rather than
 * called, so this file never calls up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "proc.h"
#include "fork.h"

static kern_device cpu = {.kind = RT_DEV_CPU, .index = 0, .ordinal = -1, .name = "cpu"};
static kern_device *devices[RT_MAX_DEVICES] = {&cpu};
static int ndevices = 1;
static int ncuda;
static const char *cuda_absent = "no CUDA device present";

rt_host_services rt_host;

kern_device *rt_cpu_device(void) { return &cpu; }

kern_device *rt_device_add(rt_device_kind kind, int ordinal, const rt_device_ops *ops, void *impl) {
  if (kind == RT_DEV_CPU && ordinal == -1) {
    cpu.ops = ops;
    cpu.impl = impl;
    return &cpu;
  }
  /* kern_shutdown + kern_init probes again: hand back the existing device. */
  for (int i = 1; i < ndevices; i++)
    if (devices[i]->kind == kind && devices[i]->ordinal == ordinal) {
      devices[i]->impl = impl;
      return devices[i];
    }
  if (ndevices == RT_MAX_DEVICES) return NULL;
  kern_device *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->kind = kind;
  d->index = ndevices;
  d->ordinal = ordinal;
  snprintf(d->name, sizeof d->name, "cuda:%d", ordinal);
  d->ops = ops;
  d->impl = impl;
  devices[ndevices++] = d;
  if (kind == RT_DEV_CUDA) ncuda++;
  return d;
}

int rt_device_count(void) { return ndevices; }

kern_device *rt_device_at(int index) {
  return index >= 0 && index < ndevices ? devices[index] : NULL;
}

const char *rt_cuda_absent_reason(void) { return cuda_absent; }

/* ---- the GPUs, probed on first need ----------------------------------------------------- */

static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&probe_mu, NULL, FORK_RANK_PROBE)
static void (*gpu_probe)(void);
static bool (*gpu_driver_loaded)(void);
static _Atomic bool gpus_probed;

void rt_device_set_gpu_probe(void (*probe)(void), bool (*driver_loaded)(void)) {
  pthread_mutex_lock(&probe_mu);
  gpu_probe = probe;
  gpu_driver_loaded = driver_loaded;
  pthread_mutex_unlock(&probe_mu);
}

/* After the probe, outside its lock (a log handler may ask for devices). */
static void log_probe(double ms) {
  if (!err_log_on(KERN_LOG_INFO)) return;
  if (ncuda == 0) {
    err_log(KERN_LOG_INFO, "GPUs probed in %.2f ms: none (%s)", ms, cuda_absent);
    return;
  }
  Buf b = {0};
  for (int i = 1; i < ndevices; i++)
    if (devices[i]->kind == RT_DEV_CUDA) buf_printf(&b, "%s%s", b.s ? ", " : "", devices[i]->name);
  err_log(KERN_LOG_INFO, "GPUs probed in %.2f ms: %s (CUDA driver started; contexts on first use)",
          ms, b.s ? b.s : "?");
  buf_free(&b);
}

bool rt_devices_probe_gpus(bool only_if_driver_loaded) {
  if (atomic_load_explicit(&gpus_probed, memory_order_acquire)) return true;
  double t0 = proc_now_ms();
  bool ran = false;
  pthread_mutex_lock(&probe_mu);
  bool wanted = !only_if_driver_loaded || (gpu_driver_loaded && gpu_driver_loaded());
  if (!atomic_load(&gpus_probed) && gpu_probe && wanted) {
    gpu_probe();
    ran = true;
    atomic_store_explicit(&gpus_probed, true, memory_order_release);
  }
  bool probed = atomic_load(&gpus_probed);
  pthread_mutex_unlock(&probe_mu);
  if (ran) log_probe(proc_now_ms() - t0);
  return probed;
}

void rt_set_cuda_absent_reason(const char *why) { cuda_absent = why; }

/* Parses the N of "cuda:N": digits only, no sign, no overflow. */
static bool parse_ordinal(const char *s, int *out) {
  if (!*s) return false;
  long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    v = v * 10 + (*s - '0');
    if (v > 1000000) return false;
  }
  *out = (int)v;
  return true;
}

static kern_device *cuda_by_ordinal(int ord, const char *name) {
  for (int i = 1; i < ndevices; i++)
    if (devices[i]->kind == RT_DEV_CUDA && devices[i]->ordinal == ord) return devices[i];
  const char *why = rt_cuda_absent_reason();
  if (ncuda == 0 && (!why || strstr(why, "no CUDA device present")))
    err_set(KERN_ERR_NOT_FOUND,
            "device '%s': no CUDA device present; the CPU device \"cpu\" is available", name);
  else if (ncuda == 0)
    err_set(KERN_ERR_NOT_FOUND,
            "device '%s': no CUDA device present (%s); the CPU device \"cpu\" is available", name,
            why);
  else
    err_set(KERN_ERR_NOT_FOUND, "device '%s': no such device (CUDA devices are cuda:0 to cuda:%d)",
            name, ncuda - 1);
  return NULL;
}

kern_device *rt_device_find(const char *name) {
  if (!name) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "device name is NULL");
    return NULL;
  }
  if (strcmp(name, "cpu") == 0) return &cpu;
  if (strcmp(name, "cuda") == 0) return cuda_by_ordinal(0, name);
  if (strncmp(name, "cuda:", 5) == 0) {
    int ord;
    if (parse_ordinal(name + 5, &ord)) return cuda_by_ordinal(ord, name);
    err_set(KERN_ERR_INVALID_ARGUMENT,
            "bad device name '%s': the ordinal after \"cuda:\" must be a non-negative integer",
            name);
    return NULL;
  }
  err_set(KERN_ERR_INVALID_ARGUMENT,
          "bad device name '%s': expected \"cpu\", \"cuda\" or \"cuda:N\"", name);
  return NULL;
}

const char *kern_device_name(const kern_device *d) { return d ? d->name : ""; }

bool kern_device_is_cuda(const kern_device *d) { return d && d->kind == RT_DEV_CUDA; }

uintptr_t rt_thread_token(void) {
  static _Thread_local char me; /* one address per live thread */
  return (uintptr_t)&me;
}

kern_status rt_capture_refuse(const kern_device *d, const char *what) {
  if (!rt_capture_records(d))
    return err_set(KERN_ERR_CAPTURE,
                   "%s is not allowed while another thread captures a graph on %s in "
                   "KERN_CAPTURE_GLOBAL mode, which refuses it in every thread (CUDA's rule for "
                   "calls that are unsafe during capture); call it before kern_capture_begin or "
                   "after kern_capture_end, or begin that capture with KERN_CAPTURE_THREAD_LOCAL "
                   "or KERN_CAPTURE_RELAXED",
                   what, d->name);
  return err_set(
      KERN_ERR_CAPTURE,
      "%s is not allowed while %s is capturing a graph: it cannot be recorded; call it before "
      "kern_capture_begin or after kern_capture_end (the capture is still open and usable)",
      what, d->name);
}

kern_status kern_device_synchronize(kern_device *d) {
  if (!d) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_device_synchronize: device is NULL");
  if (rt_capture_restricts(d))
    return rt_capture_refuse(d, "kern_device_synchronize"); /* CUDA's rule, on every device */
  return d->ops->synchronize ? d->ops->synchronize(d) : KERN_OK;
}

kern_status kern_device_info_get(const kern_device *d, kern_device_info *out) {
  if (!d || !out)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_device_info_get: %s is NULL",
                   d ? "out" : "device");
  memset(out, 0, sizeof *out);
  return d->ops->info(d, out);
}

static kern_device_info info_of(const kern_device *d) {
  kern_device_info i;
  if (kern_device_info_get(d, &i) != KERN_OK) memset(&i, 0, sizeof i);
  return i;
}

kern_status kern_device_enable_peer_access(kern_device *target, kern_device *peer, bool on) {
  if (!target || !peer)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_device_enable_peer_access: a device is NULL");
  if (target->kind != RT_DEV_CUDA || peer->kind != RT_DEV_CUDA || !target->ops->set_peer)
    return err_set(KERN_ERR_UNSUPPORTED, "peer access is between two CUDA devices, not %s and %s",
                   target->name, peer->name);
  return target->ops->set_peer(target, peer, on);
}

kern_status kern_device_enable_mempool_access(kern_device *target, kern_device *peer, bool on) {
  if (!target || !peer)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_device_enable_mempool_access: a device is NULL");
  if (target->kind != RT_DEV_CUDA || peer->kind != RT_DEV_CUDA || !target->ops->set_pool_access)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "memory pool access is between two CUDA devices, not %s and %s", target->name,
                   peer->name);
  return target->ops->set_pool_access(target, peer, on);
}

kern_allocator kern_device_get_allocator(const kern_device *d) {
  return d ? (kern_allocator)atomic_load(&((kern_device *)d)->allocator) : KERN_ALLOC_DEFAULT;
}

static const char *allocator_name(kern_allocator a) {
  static const char *const n[] = {"KERN_ALLOC_DEFAULT", "KERN_ALLOC_PINNED",
                                  "KERN_ALLOC_CUDA_DEVICE", "KERN_ALLOC_CUDA_MEMPOOL",
                                  "KERN_ALLOC_CUDA_MANAGED"};
  return (unsigned)a < 5 ? n[a] : "an unknown allocator";
}

/* Why a known allocator is refused, for the message. */
static const char *allocator_hint(const kern_device *d, kern_allocator a) {
  if (d->kind == RT_DEV_CPU && a >= KERN_ALLOC_CUDA_DEVICE && a <= KERN_ALLOC_CUDA_MANAGED)
    return ": CUDA allocators belong to CUDA devices (use KERN_ALLOC_PINNED for page-locked host memory)";
  if (d->kind == RT_DEV_CUDA && a == KERN_ALLOC_PINNED)
    return ": pinned host memory is allocated on the CPU device (set KERN_ALLOC_PINNED on \"cpu\")";
  if (a == KERN_ALLOC_CUDA_MEMPOOL) return ": the device does not support memory pools";
  if (a == KERN_ALLOC_CUDA_MANAGED) return ": the device does not support managed memory";
  return "";
}

kern_allocator kern_device_set_allocator(kern_device *d, kern_allocator a) {
  if (!d) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_device_set_allocator: device is NULL");
    return KERN_ALLOC_DEFAULT;
  }
  if (d->kind == RT_DEV_CPU && a == KERN_ALLOC_PINNED) rt_devices_probe_gpus(false);
  if ((unsigned)a > KERN_ALLOC_CUDA_MANAGED || !d->ops->allocator_ok(d, a)) {
    if (d->kind == RT_DEV_CPU && a == KERN_ALLOC_PINNED)
      err_set(
          KERN_ERR_UNSUPPORTED,
          "device cpu cannot allocate with KERN_ALLOC_PINNED: pinned host memory needs the CUDA driver "
          "and a GPU (%s)",
          rt_cuda_absent_reason() ? rt_cuda_absent_reason() : "none found");
    else
      err_set(KERN_ERR_UNSUPPORTED, "device %s cannot allocate with %s%s", d->name,
              allocator_name(a), allocator_hint(d, a));
    return kern_device_get_allocator(d);
  }
  return (kern_allocator)atomic_exchange(&d->allocator, (int)a);
}

/* ---- access rules (the memory-access guide's table) ------------------------------- */

bool rt_device_is_host_kind(kern_memory_kind k) {
  return k == KERN_MEM_HOST || k == KERN_MEM_PINNED_HOST;
}

/* Memory of `kind` owned by `owner`, used by a launch on `launch`. */
static bool access_ok(const kern_device *launch, const kern_device *owner, kern_memory_kind kind) {
  bool on_cpu = launch->kind == RT_DEV_CPU;
  switch (kind) {
    case KERN_MEM_HOST: return on_cpu || info_of(launch).is_cpu_memory_access_from_gpu_supported;
    case KERN_MEM_PINNED_HOST: return on_cpu || info_of(launch).is_uva;
    case KERN_MEM_CUDA_DEVICE:
      return !on_cpu && (owner == launch ||
                         (owner->ops->peer_enabled && owner->ops->peer_enabled(owner, launch)));
    case KERN_MEM_CUDA_MEMPOOL:
      return !on_cpu && (owner == launch || (owner->ops->pool_access_enabled &&
                                             owner->ops->pool_access_enabled(owner, launch)));
    case KERN_MEM_CUDA_MANAGED: {
      kern_device_info o = info_of(owner);
      if (on_cpu)
        return o.is_concurrent_managed_access_supported ||
               o.is_gpu_memory_access_from_cpu_supported;
      kern_device_info l = info_of(launch);
      return l.is_managed_memory_supported &&
             (owner == launch || l.is_concurrent_managed_access_supported);
    }
    default: return false;
  }
}

bool kern_can_access(const kern_device *launch, const kern_array *a) {
  if (!launch || !a) return false;
  return access_ok(launch, a->device, a->kind);
}

bool kern_device_can_access(const kern_device *launch, const kern_device *owner) {
  if (!launch || !owner) return false;
  if (owner->kind == RT_DEV_CPU)
    return launch->kind == RT_DEV_CPU || info_of(launch).is_cpu_memory_access_from_gpu_supported;
  if (launch->kind == RT_DEV_CPU) return false;
  if (owner == launch) return true;
  if (kern_device_get_allocator(owner) == KERN_ALLOC_CUDA_MEMPOOL)
    return owner->ops->pool_access_enabled && owner->ops->pool_access_enabled(owner, launch);
  return owner->ops->peer_enabled && owner->ops->peer_enabled(owner, launch);
}
