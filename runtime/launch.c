/* launch.c: launch arguments, validation, access checks, the args block.
 *
 * Requires: module.c (kernel descriptions, per-device code), device.c (the
 * access rules), rt_submit (which runs each validated launch, or hands it to
 * the recorder while a capture is open). Produces: kern_arg_* constructors,
 * kern_launch, the access-mode setting.
 * Breaks: every check happens before anything runs, so a rejected launch has
 * no effect. The args block follows emit_args_layout: arrays as kn_array
 * (unused dims shape 1, stride 0), values as their bytes; padding is zeroed
 * so identical launches produce identical blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "fork.h"

/* ---- arguments ------------------------------------------------------------------ */

static kern_arg value_arg(kern_dtype dt, const void *p, size_t n) {
  kern_arg a;
  memset(&a, 0, sizeof a);
  a.kind = KERN_ARG_VALUE;
  a.dtype = dt;
  memcpy(a.value.bytes, p, n);
  return a;
}

kern_arg kern_arg_array(kern_array *arr) {
  kern_arg a;
  memset(&a, 0, sizeof a);
  a.kind = KERN_ARG_ARRAY;
  a.array = arr;
  return a;
}

kern_arg kern_arg_bool(bool v) {
  unsigned char b = v ? 1 : 0;
  return value_arg(KERN_BOOL, &b, 1);
}
kern_arg kern_arg_i8(int8_t v) { return value_arg(KERN_INT8, &v, sizeof v); }
kern_arg kern_arg_i16(int16_t v) { return value_arg(KERN_INT16, &v, sizeof v); }
kern_arg kern_arg_i32(int32_t v) { return value_arg(KERN_INT32, &v, sizeof v); }
kern_arg kern_arg_i64(int64_t v) { return value_arg(KERN_INT64, &v, sizeof v); }
kern_arg kern_arg_u8(uint8_t v) { return value_arg(KERN_UINT8, &v, sizeof v); }
kern_arg kern_arg_u16(uint16_t v) { return value_arg(KERN_UINT16, &v, sizeof v); }
kern_arg kern_arg_u32(uint32_t v) { return value_arg(KERN_UINT32, &v, sizeof v); }
kern_arg kern_arg_u64(uint64_t v) { return value_arg(KERN_UINT64, &v, sizeof v); }
kern_arg kern_arg_f32(float v) { return value_arg(KERN_FLOAT32, &v, sizeof v); }
kern_arg kern_arg_f64(double v) { return value_arg(KERN_FLOAT64, &v, sizeof v); }

kern_arg kern_arg_vec2(float x, float y) {
  float v[2] = {x, y};
  return value_arg(KERN_VEC2, v, sizeof v);
}

kern_arg kern_arg_vec3(float x, float y, float z) {
  float v[3] = {x, y, z};
  return value_arg(KERN_VEC3, v, sizeof v);
}

kern_arg kern_arg_vec4(float x, float y, float z, float w) {
  float v[4] = {x, y, z, w};
  return value_arg(KERN_VEC4, v, sizeof v);
}

kern_arg kern_arg_bytes(kern_dtype dt, const void *p) {
  size_t n = kern_dtype_size(dt);
  kern_arg a = value_arg(dt, "", 0);
  if (p && n <= KERN_ARG_INLINE_BYTES)
    memcpy(a.value.bytes, p, n);
  else
    a.ptr = p; /* big, or NULL: the launch copies it, or rejects it */
  return a;
}

kern_arg kern_arg_pass(kern_arg a) { return a; }

/* ---- access mode and warnings ------------------------------------------------------------ */

static _Atomic int access_mode = KERN_ACCESS_RELAXED;

kern_access_mode kern_set_launch_access_mode(kern_access_mode m) {
  if ((unsigned)m > KERN_ACCESS_CHECKED) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_set_launch_access_mode: unknown mode %d", (int)m);
    return kern_get_launch_access_mode();
  }
  return (kern_access_mode)atomic_exchange(&access_mode, (int)m);
}

kern_access_mode kern_get_launch_access_mode(void) {
  return (kern_access_mode)atomic_load(&access_mode);
}

static const char *kind_name(kern_memory_kind k) {
  static const char *const n[] = {"HOST",         "PINNED_HOST",  "CUDA_DEVICE",
                                  "CUDA_MEMPOOL", "CUDA_MANAGED", "UNKNOWN"};
  return (unsigned)k <= KERN_MEM_UNKNOWN ? n[k] : "UNKNOWN";
}

/* (module, kernel, parameter, source device, launch device, what) already
 * warned; no padding, so memcmp compares keys. */
enum { WARN_UNKNOWN, WARN_ATOMICS };
typedef struct warned {
  uint64_t module;
  int kernel, param, src, dst, what;
} warned;
static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&warn_mu, NULL, FORK_RANK_LAUNCH_WARN)
static warned *warned_list;
static size_t nwarned, capwarned;

static bool first_warning(warned w) {
  bool first = true;
  pthread_mutex_lock(&warn_mu);
  for (size_t i = 0; i < nwarned && first; i++) first = memcmp(&warned_list[i], &w, sizeof w) != 0;
  if (first && nwarned == capwarned) {
    size_t cap = capwarned ? capwarned * 2 : 16;
    warned *p = realloc(warned_list, cap * sizeof *p);
    if (p) warned_list = p, capwarned = cap;
  }
  if (first && nwarned < capwarned) warned_list[nwarned++] = w;
  pthread_mutex_unlock(&warn_mu);
  return first;
}

/* ---- validation ------------------------------------------------------------------------ */

/* "kernel 'saxpy' parameter 'x' (#1) expects float32[] but got ..." */
static kern_status param_error(kern_status st, const kern_kernel *k, int i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static kern_status param_error(kern_status st, const kern_kernel *k, int i, const char *fmt, ...) {
  char rest[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rest, sizeof rest, fmt, ap);
  va_end(ap);
  return err_set(st, "kernel '%s' parameter '%s' (#%d) %s", k->name, k->params[i].name, i + 1,
                 rest);
}

/* How to build an argument of dtype dt, for messages. */
static const char *ctor_hint(kern_dtype dt) {
  switch (dt) {
    case KERN_BOOL: return "kern_arg_bool";
    case KERN_INT8: return "kern_arg_i8";
    case KERN_INT16: return "kern_arg_i16";
    case KERN_INT32: return "kern_arg_i32";
    case KERN_INT64: return "kern_arg_i64";
    case KERN_UINT8: return "kern_arg_u8";
    case KERN_UINT16: return "kern_arg_u16";
    case KERN_UINT32: return "kern_arg_u32";
    case KERN_UINT64: return "kern_arg_u64";
    case KERN_FLOAT32: return "kern_arg_f32";
    case KERN_FLOAT64: return "kern_arg_f64";
    case KERN_VEC2: return "kern_arg_vec2";
    case KERN_VEC3: return "kern_arg_vec3";
    case KERN_VEC4: return "kern_arg_vec4";
    default: return "kern_arg_bytes";
  }
}

static const char *ptype(const rt_param *p) { return p->type; }

static kern_status check_array_arg(const kern_kernel *k, int i, const kern_array *a) {
  const rt_param *p = &k->params[i];
  if (!p->is_array)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i,
                       "expects a value of type %s but got an array (use %s)", ptype(p),
                       ctor_hint(p->dtype));
  if (!a)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but got a NULL array",
                       ptype(p));
  if (a->dtype != p->dtype)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but got an array of %s",
                       ptype(p), kern_dtype_name(a->dtype));
  if (a->ndim != p->ndim)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i,
                       "expects %s (%d dim%s) but got an array with %d dim%s", ptype(p), p->ndim,
                       p->ndim == 1 ? "" : "s", a->ndim, a->ndim == 1 ? "" : "s");
  return KERN_OK;
}

static kern_status check_value_arg(const kern_kernel *k, int i, const kern_arg *a) {
  const rt_param *p = &k->params[i];
  if (p->is_array)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i,
                       "expects %s (an array) but got a value of type %s", ptype(p),
                       kern_dtype_name(a->dtype));
  if (a->dtype != p->dtype)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i,
                       "expects %s but got a value of type %s (use %s)", ptype(p),
                       kern_dtype_name(a->dtype), ctor_hint(p->dtype));
  if (p->size > KERN_ARG_INLINE_BYTES && !a->ptr)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i,
                       "expects %s but the value's pointer is NULL", ptype(p));
  return KERN_OK;
}

static kern_status check_args(const kern_kernel *k, int nargs, const kern_arg *args) {
  if (nargs != k->nparams)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kernel '%s' expects %d argument%s, got %d", k->name,
                   k->nparams, k->nparams == 1 ? "" : "s", nargs);
  if (nargs > 0 && !args)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kernel '%s': the argument list is NULL", k->name);
  for (int i = 0; i < nargs; i++) {
    kern_status st;
    if (args[i].kind == KERN_ARG_ARRAY)
      st = check_array_arg(k, i, args[i].array);
    else if (args[i].kind == KERN_ARG_VALUE)
      st = check_value_arg(k, i, &args[i]);
    else
      st = param_error(KERN_ERR_INVALID_ARGUMENT, k, i,
                       "expects %s but got an uninitialized kern_arg", ptype(&k->params[i]));
    if (st) return st;
  }
  return KERN_OK;
}

/* Fills ctx's dims and launch size (0 when a dim is 0). */
static kern_status check_dims(const kern_kernel *k, kern_dims dims, kn_ctx *ctx) {
  if (dims.ndim < 1 || dims.ndim > 4)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "launch of kernel '%s': dims must have 1 to 4 dimensions, got %d", k->name,
                   dims.ndim);
  uint64_t n = 1;
  bool huge = false; /* the product does not even fit 63 bits */
  for (int d = 0; d < dims.ndim; d++) {
    if (dims.shape[d] < 0)
      return err_set(KERN_ERR_INVALID_ARGUMENT, "launch of kernel '%s': dim %d is negative (%lld)",
                     k->name, d, (long long)dims.shape[d]);
    uint64_t s = (uint64_t)dims.shape[d];
    if (s && n > (uint64_t)INT64_MAX / s)
      huge = true;
    else
      n *= s;
  }
  for (int d = 0; d < dims.ndim; d++)
    if (dims.shape[d] == 0) huge = false, n = 0;
  if (huge)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "launch of kernel '%s': launch size overflows 64 bits and exceeds 2^31-1",
                   k->name);
  if (n > INT32_MAX)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "launch of kernel '%s': launch size %llu exceeds 2^31-1", k->name,
                   (unsigned long long)n);
  for (int d = 0; d < 4; d++) ctx->dim[d] = d < dims.ndim ? dims.shape[d] : 1;
  ctx->n = (int64_t)n;
  ctx->ndim = dims.ndim;
  return KERN_OK;
}

/* ---- access checks ------------------------------------------------------------------------ */

/* What would make the array usable from the launch device, for messages. */
static const char *access_hint(const kern_device *dev, const kern_array *a) {
  bool on_cpu = dev->kind == RT_DEV_CPU;
  switch (a->kind) {
    case KERN_MEM_HOST:
      return ": the device does not report pageable memory access (is_cpu_memory_access_from_gpu_supported); "
             "allocate it with KERN_ALLOC_PINNED on the CPU, or copy it to the device";
    case KERN_MEM_PINNED_HOST: return ": the device does not report unified addressing (is_uva)";
    case KERN_MEM_CUDA_DEVICE:
      return on_cpu ? ": CPU code cannot use CUDA device memory; copy it to a CPU array first"
                    : ": enable peer access (kern_device_enable_peer_access) or copy it";
    case KERN_MEM_CUDA_MEMPOOL:
      return on_cpu ? ": CPU code cannot use CUDA memory-pool memory; copy it to a CPU array first"
                    : ": enable memory pool access (kern_device_enable_mempool_access) or copy it";
    case KERN_MEM_CUDA_MANAGED:
      return on_cpu
                 ? ": its device reports neither concurrent managed access nor direct managed access "
                   "from the host"
                 : ": the launch device lacks managed memory support, or concurrent managed access for "
                   "another device's managed memory";
    default: return "";
  }
}

static kern_status access_error(const kern_kernel *k, int i, const kern_array *a,
                                const kern_device *dev, bool strict) {
  if (strict)
    return param_error(
        KERN_ERR_ACCESS, k, i,
        "gets an array on %s (%s memory) that does not live on the device of a launch on %s "
        "(STRICT access mode)",
        a->device->name, kind_name(a->kind), dev->name);
  return param_error(KERN_ERR_ACCESS, k, i,
                     "gets an array on %s (%s memory) that is not accessible from a launch on %s%s",
                     a->device->name, kind_name(a->kind), dev->name, access_hint(dev, a));
}

/* The GPU whose atomics could meet CPU atomics on the array's memory in this
 * launch: the launch device for host and managed memory on a GPU launch, the
 * owner for managed memory on a CPU launch; NULL when the memory is one side's. */
static const kern_device *shared_gpu(const kern_device *dev, const kern_array *a) {
  if (dev->kind == RT_DEV_CPU)
    return a->kind == KERN_MEM_CUDA_MANAGED && a->device->kind == RT_DEV_CUDA ? a->device : NULL;
  bool shared = a->kind == KERN_MEM_HOST || a->kind == KERN_MEM_PINNED_HOST ||
                a->kind == KERN_MEM_CUDA_MANAGED;
  return shared ? dev : NULL;
}

/* CHECKED: atomics on CPU/GPU-shared memory without host-native atomics are
 * atomic only among one side's threads. kern cannot see whether the other
 * side runs at the same time, so it explains once instead of failing. */
static void check_shared_atomics(const kern_kernel *k, const kern_device *dev, int i,
                                 const kern_array *a) {
  const kern_device *gpu = shared_gpu(dev, a);
  kern_device_info info;
  if (!gpu || kern_device_info_get(gpu, &info) != KERN_OK || info.is_cpu_gpu_atomic_supported)
    return;
  if (!k->params[i].atomics) return; /* the checker found no atomic on it */
  warned w = {k->module->id, k->index, i, a->device->index, dev->index, WARN_ATOMICS};
  if (first_warning(w))
    err_warn(
        "kernel '%s' parameter '%s' (#%d) applies atomics to %s memory of %s that both the CPU and %s can "
        "use, but %s does not report CPU/GPU atomic support (is_cpu_gpu_atomic_supported): its atomics "
        "are atomic only against other atomics of the same side, so CPU and GPU atomics on this array "
        "must not overlap in time; launching anyway",
        k->name, k->params[i].name, i + 1, kind_name(a->kind), a->device->name, gpu->name,
        gpu->name);
}

static kern_status check_checked(const kern_kernel *k, kern_device *dev, int i,
                                 const kern_array *a) {
  if (a->kind == KERN_MEM_UNKNOWN) {
    warned w = {k->module->id, k->index, i, a->device->index, dev->index, WARN_UNKNOWN};
    if (first_warning(w))
      err_warn(
          "kernel '%s' parameter '%s' (#%d): cannot verify that an array of unknown provenance on %s is "
          "accessible from a launch on %s; launching anyway",
          k->name, k->params[i].name, i + 1, a->device->name, dev->name);
    return KERN_OK;
  }
  if (!kern_can_access(dev, a)) return access_error(k, i, a, dev, false);
  check_shared_atomics(k, dev, i, a);
  return KERN_OK;
}

static kern_status check_access(const kern_kernel *k, kern_device *dev, int i,
                                const kern_array *a) {
  kern_access_mode mode = kern_get_launch_access_mode();
  /* A CPU thread touching GPU memory kills the process: refused in every
   * mode. UNKNOWN passes: with a driver, GPU memory is always classified. */
  bool host_side = rt_device_is_host_kind(a->kind) || a->kind == KERN_MEM_UNKNOWN;
  if (dev->kind == RT_DEV_CPU && !host_side && !kern_can_access(dev, a))
    return access_error(k, i, a, dev, false);
  if (mode == KERN_ACCESS_RELAXED) return KERN_OK;
  if (mode == KERN_ACCESS_STRICT)
    return a->device != dev ? access_error(k, i, a, dev, true) : KERN_OK;
  return check_checked(k, dev, i, a);
}

/* ---- the args block ---------------------------------------------------------------------- */

static void put_array(unsigned char *dst, const kern_array *a) {
  kn_array ka;
  memset(&ka, 0, sizeof ka);
  ka.data = a->data;
  for (int d = 0; d < 4; d++) {
    ka.shape[d] = d < a->ndim ? a->shape[d] : 1;
    ka.strides[d] = d < a->ndim ? a->strides[d] : 0;
  }
  memcpy(dst, &ka, sizeof ka);
}

/* Can the launch take the dense variant: is array a (argument i) dense and
 * 16-byte aligned, and apart from every array before it? The dense body
 * reaches its arrays through restrict pointers, and CUDA's through vector
 * loads (stdlib/kern_abi.h). */
static bool dense_arg(const kern_arg *args, int i) {
  const kern_array *a = args[i].array;
  if (!rt_array_dense(a) || ((uintptr_t)a->data & 15)) return false;
  for (int j = 0; j < i; j++) {
    const kern_array *b = args[j].kind == KERN_ARG_ARRAY ? args[j].array : NULL;
    if (b && a->data < b->data + b->nbytes && b->data < a->data + a->nbytes) return false;
  }
  return true;
}

/* Returns true when the launch can take the dense variant (dense_arg). */
static bool marshal(const kern_kernel *k, const kern_arg *args, unsigned char *block) {
  bool dense = true;
  memset(block, 0, k->args_size);
  for (int i = 0; i < k->nparams; i++) {
    const rt_param *p = &k->params[i];
    unsigned char *dst = block + p->offset;
    if (p->is_array) {
      put_array(dst, args[i].array);
      dense = dense && dense_arg(args, i);
    } else {
      memcpy(dst, p->size > KERN_ARG_INLINE_BYTES ? args[i].ptr : args[i].value.bytes, p->size);
    }
  }
  return dense;
}

/* ---- launch -------------------------------------------------------------------------------- */

static kern_status validate(kern_kernel *k, kern_device *dev, kern_dims dims, int nargs,
                            const kern_arg *args, kn_ctx *ctx) {
  if (!k || !dev)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_launch: %s is NULL", k ? "device" : "kernel");
  kern_status st = check_args(k, nargs, args);
  if (!st) st = check_dims(k, dims, ctx);
  for (int i = 0; !st && i < nargs; i++)
    if (args[i].kind == KERN_ARG_ARRAY) st = check_access(k, dev, i, args[i].array);
  return st;
}

/* threads: a tiled kernel's threads per instance for this launch, 0 for the kernel's. */
static kern_status launch(kern_kernel *k, kern_device *dev, kern_dims dims, int threads, int nargs,
                          const kern_arg *args) {
  rt_launch L;
  memset(&L, 0, sizeof L);
  kern_status st = validate(k, dev, dims, nargs, args, &L.ctx);
  if (st || L.ctx.n == 0) return st;
  int set = atomic_load(&k->tile_block);
  L.tile_block = threads ? threads : set; /* 0: the backend's default for k */
  if ((st = rt_module_code(k->module, dev, &L.code))) return st;
  _Alignas(16) unsigned char small[1024];
  unsigned char *block = small;
  if (k->args_size > sizeof small &&
      !(block = aligned_alloc(16, (k->args_size + 15) & ~(size_t)15)))
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory for the arguments of kernel '%s'",
                   k->name);
  L.kernel = k;
  L.device = dev;
  L.args = block;
  L.args_size = k->args_size;
  L.dense = marshal(k, args, block);
  kn_error rec;
  if (k->module->debug || k->module->verify_fp) L.ctx.err = &rec;
  /* The device's launch, unless a capture takes it. */
  st = rt_submit_launch(&L, nargs, args);
  if (block != small) free(block);
  return st;
}

kern_status kern_launch(kern_kernel *k, kern_device *dev, kern_dims dims, int nargs,
                        const kern_arg *args) {
  return launch(k, dev, dims, 0, nargs, args);
}

kern_status kern_launch_tile_block(kern_kernel *k, kern_device *dev, kern_dims dims, int threads,
                                   int nargs, const kern_arg *args) {
  if (threads < 32 || threads > 1024 || threads % 32)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_launch_tile_block: %d threads; use a multiple of 32 from 32 to 1024",
                   threads);
  return launch(k, dev, dims, threads, nargs, args);
}
