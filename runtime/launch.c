/* launch.c: launch arguments, validation, access checks, the args block.
 *
 * Requires: module.c (kernel descriptions, per-device code), a device's ops.
 * Produces: kern_arg_* constructors, kern_launch, the access-mode setting,
 * rt_debug_error.
 * Breaks: every check happens before anything runs, so a rejected launch has
 * no effect. The args block follows emit_args_layout: arrays as kn_array
 * (unused dims shape 1, stride 0), values as their bytes; padding is zeroed
 * so identical launches produce identical blocks.
 */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* emit.c: maps the program-wide array parameter number of a debug record back. */
const Var *emit_array_param(const Program *, int id, const Decl **owner);

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
  if (p && n <= KERN_ARG_INLINE_BYTES) memcpy(a.value.bytes, p, n);
  else a.ptr = p;  /* big, or NULL: the launch copies it, or rejects it */
  return a;
}

kern_arg kern_arg_pass(kern_arg a) { return a; }

/* ---- access mode and warnings ------------------------------------------------------------ */

static _Atomic int access_mode = KERN_ACCESS_RELAXED;

kern_access_mode kern_set_launch_access_mode(kern_access_mode m) {
  if ((unsigned)m > KERN_ACCESS_CHECKED) {
    rt_error(KERN_ERR_INVALID_ARGUMENT, "kern_set_launch_access_mode: unknown mode %d", (int)m);
    return kern_get_launch_access_mode();
  }
  return (kern_access_mode)atomic_exchange(&access_mode, (int)m);
}

kern_access_mode kern_get_launch_access_mode(void) { return (kern_access_mode)atomic_load(&access_mode); }

static const char *kind_name(kern_memory_kind k) {
  static const char *const n[] = {"HOST", "PINNED_HOST", "CUDA_DEVICE", "CUDA_MEMPOOL", "CUDA_MANAGED", "UNKNOWN"};
  return (unsigned)k <= KERN_MEM_UNKNOWN ? n[k] : "UNKNOWN";
}

/* (module, kernel, parameter, source device, launch device) already warned. */
typedef struct warned { uint64_t module; int kernel, param, src, dst; } warned;
static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;
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
  return rt_error(st, "kernel '%s' parameter '%s' (#%d) %s", k->name, k->params[i].name, i + 1, rest);
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

static const char *ptype(const rt_param *p) { return type_name(p->ty); }

static kern_status check_array_arg(const kern_kernel *k, int i, const kern_array *a) {
  const rt_param *p = &k->params[i];
  if (!p->is_array)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects a value of type %s but got an array (use %s)",
                       ptype(p), ctor_hint(p->dtype));
  if (!a) return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but got a NULL array", ptype(p));
  if (a->dtype != p->dtype)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but got an array of %s", ptype(p),
                       kern_dtype_name(a->dtype));
  if (a->ndim != p->ndim)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s (%d dim%s) but got an array with %d dim%s",
                       ptype(p), p->ndim, p->ndim == 1 ? "" : "s", a->ndim, a->ndim == 1 ? "" : "s");
  return KERN_OK;
}

static kern_status check_value_arg(const kern_kernel *k, int i, const kern_arg *a) {
  const rt_param *p = &k->params[i];
  if (p->is_array)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s (an array) but got a value of type %s",
                       ptype(p), kern_dtype_name(a->dtype));
  if (a->dtype != p->dtype)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but got a value of type %s (use %s)",
                       ptype(p), kern_dtype_name(a->dtype), ctor_hint(p->dtype));
  if (p->size > KERN_ARG_INLINE_BYTES && !a->ptr)
    return param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but the value's pointer is NULL", ptype(p));
  return KERN_OK;
}

static kern_status check_args(const kern_kernel *k, int nargs, const kern_arg *args) {
  if (nargs != k->nparams)
    return rt_error(KERN_ERR_INVALID_ARGUMENT, "kernel '%s' expects %d argument%s, got %d", k->name, k->nparams,
                    k->nparams == 1 ? "" : "s", nargs);
  if (nargs > 0 && !args)
    return rt_error(KERN_ERR_INVALID_ARGUMENT, "kernel '%s': the argument list is NULL", k->name);
  for (int i = 0; i < nargs; i++) {
    kern_status st;
    if (args[i].kind == KERN_ARG_ARRAY) st = check_array_arg(k, i, args[i].array);
    else if (args[i].kind == KERN_ARG_VALUE) st = check_value_arg(k, i, &args[i]);
    else st = param_error(KERN_ERR_INVALID_ARGUMENT, k, i, "expects %s but got an uninitialized kern_arg",
                          ptype(&k->params[i]));
    if (st) return st;
  }
  return KERN_OK;
}

/* Fills ctx's dims and launch size (0 when a dim is 0). */
static kern_status check_dims(const kern_kernel *k, kern_dims dims, kn_ctx *ctx) {
  if (dims.ndim < 1 || dims.ndim > 4)
    return rt_error(KERN_ERR_INVALID_ARGUMENT, "launch of kernel '%s': dims must have 1 to 4 dimensions, got %d",
                    k->name, dims.ndim);
  uint64_t n = 1;
  bool huge = false;  /* the product does not even fit 63 bits */
  for (int d = 0; d < dims.ndim; d++) {
    if (dims.shape[d] < 0)
      return rt_error(KERN_ERR_INVALID_ARGUMENT, "launch of kernel '%s': dim %d is negative (%lld)", k->name, d,
                      (long long)dims.shape[d]);
    uint64_t s = (uint64_t)dims.shape[d];
    if (s && n > (uint64_t)INT64_MAX / s) huge = true;
    else n *= s;
  }
  for (int d = 0; d < dims.ndim; d++)
    if (dims.shape[d] == 0) huge = false, n = 0;
  if (huge)
    return rt_error(KERN_ERR_INVALID_ARGUMENT, "launch of kernel '%s': launch size overflows 64 bits and exceeds 2^31-1",
                    k->name);
  if (n > INT32_MAX)
    return rt_error(KERN_ERR_INVALID_ARGUMENT, "launch of kernel '%s': launch size %llu exceeds 2^31-1", k->name,
                    (unsigned long long)n);
  for (int d = 0; d < 4; d++) ctx->dim[d] = d < dims.ndim ? dims.shape[d] : 1;
  ctx->n = (int64_t)n;
  ctx->ndim = dims.ndim;
  return KERN_OK;
}

static kern_status access_error(const kern_kernel *k, int i, const kern_array *a, const kern_device *dev,
                                const char *why) {
  return param_error(KERN_ERR_ACCESS, k, i, "gets an array on %s (%s memory) that %s launch on %s%s",
                     a->device->name, kind_name(a->kind), why, dev->name,
                     kern_get_launch_access_mode() == KERN_ACCESS_STRICT ? " (STRICT access mode)" : "");
}

static kern_status check_access(const kern_kernel *k, kern_device *dev, int i, const kern_array *a) {
  kern_access_mode mode = kern_get_launch_access_mode();
  bool host_side = rt_device_is_host_kind(a->kind) || (a->kind == KERN_MEM_UNKNOWN && a->device->kind == RT_DEV_CPU);
  /* A CPU thread touching device memory crashes the process: refuse in every mode. */
  if (dev->kind == RT_DEV_CPU && !host_side && !kern_can_access(dev, a))
    return access_error(k, i, a, dev, "is not accessible from a");
  if (mode == KERN_ACCESS_STRICT && a->device != dev)
    return access_error(k, i, a, dev, "does not live on the device of a");
  if (mode != KERN_ACCESS_CHECKED) return KERN_OK;
  if (a->kind == KERN_MEM_UNKNOWN) {
    warned w = {k->module->id, k->index, i, a->device->index, dev->index};
    if (first_warning(w))
      rt_warn("kernel '%s' parameter '%s' (#%d): cannot verify that an array of unknown provenance on %s is "
              "accessible from a launch on %s; launching anyway",
              k->name, k->params[i].name, i + 1, a->device->name, dev->name);
    return KERN_OK;
  }
  if (!kern_can_access(dev, a)) return access_error(k, i, a, dev, "is not accessible from a");
  return KERN_OK;
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

/* Returns true when every array is dense. */
static bool marshal(const kern_kernel *k, const kern_arg *args, unsigned char *block) {
  bool dense = true;
  memset(block, 0, k->args_size);
  for (int i = 0; i < k->nparams; i++) {
    const rt_param *p = &k->params[i];
    unsigned char *dst = block + p->offset;
    if (p->is_array) {
      put_array(dst, args[i].array);
      dense = dense && rt_array_dense(args[i].array);
    } else {
      memcpy(dst, p->size > KERN_ARG_INLINE_BYTES ? args[i].ptr : args[i].value.bytes, p->size);
    }
  }
  return dense;
}

/* ---- launch -------------------------------------------------------------------------------- */

static kern_status validate(kern_kernel *k, kern_device *dev, kern_dims dims, int nargs, const kern_arg *args,
                            kn_ctx *ctx) {
  if (!k || !dev)
    return rt_error(KERN_ERR_INVALID_ARGUMENT, "kern_launch: %s is NULL", k ? "device" : "kernel");
  kern_status st = check_args(k, nargs, args);
  if (!st) st = check_dims(k, dims, ctx);
  for (int i = 0; !st && i < nargs; i++)
    if (args[i].kind == KERN_ARG_ARRAY) st = check_access(k, dev, i, args[i].array);
  return st;
}

kern_status kern_launch(kern_kernel *k, kern_device *dev, kern_dims dims, int nargs, const kern_arg *args) {
  rt_launch L;
  memset(&L, 0, sizeof L);
  kern_status st = validate(k, dev, dims, nargs, args, &L.ctx);
  if (st || L.ctx.n == 0) return st;
  if ((st = rt_module_code(k->module, dev, &L.code))) return st;
  _Alignas(16) unsigned char small[1024];
  unsigned char *block = small;
  if (k->args_size > sizeof small && !(block = aligned_alloc(16, (k->args_size + 15) & ~(size_t)15)))
    return rt_error(KERN_ERR_OUT_OF_MEMORY, "out of memory for the arguments of kernel '%s'", k->name);
  L.kernel = k;
  L.device = dev;
  L.args = block;
  L.args_size = k->args_size;
  L.dense = marshal(k, args, block);
  kn_error rec;
  if (k->module->debug) L.ctx.err = &rec;
  st = dev->ops->launch(&L);
  if (block != small) free(block);
  return st;
}

/* ---- debug errors ----------------------------------------------------------------------------- */

static void list_i64(rt_buf *b, const int64_t *v, int n) {
  rt_buf_add(b, "[", 1);
  for (int i = 0; i < n; i++) rt_buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  rt_buf_add(b, "]", 1);
}

/* The array a bounds record names: a kernel parameter, or a function's. */
static void describe_param(rt_buf *b, const kern_kernel *k, int id) {
  const Decl *owner = NULL;
  const Var *v = id >= 0 ? emit_array_param(k->module->prog, id, &owner) : NULL;
  if (!v) rt_buf_printf(b, "an array");
  else if (owner == k->decl) rt_buf_printf(b, "parameter '%s'", v->name);
  else rt_buf_printf(b, "parameter '%s' of function '%s'", v->name, owner && owner->name ? owner->name : "?");
}

kern_status rt_debug_error(const kern_kernel *k, const kn_error *e) {
  const char *file = rt_module_file(k->module, e->file);
  if (e->kind == KN_ERR_ASSERT)
    return rt_error(KERN_ERR_BOUNDS, "assertion failed in kernel '%s' at %s:%d (thread %lld)", k->name, file,
                    e->line, (long long)e->tid);
  int nd = e->ndim < 1 ? 1 : e->ndim > 4 ? 4 : e->ndim;
  rt_buf b = {0};
  rt_buf_printf(&b, "out-of-bounds access in kernel '%s' at %s:%d: index ", k->name, file, e->line);
  list_i64(&b, e->index, nd);
  rt_buf_add(&b, " is outside shape ", 18);
  list_i64(&b, e->shape, nd);
  rt_buf_add(&b, " (", 2);
  describe_param(&b, k, e->param);
  rt_buf_printf(&b, ", thread %lld)", (long long)e->tid);
  kern_status st = rt_error_text(KERN_ERR_BOUNDS, "", b.s ? b.s : "out-of-bounds access");
  rt_buf_free(&b);
  return st;
}
