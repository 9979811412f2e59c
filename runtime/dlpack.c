/* dlpack.c: DLPack exchange, zero-copy both ways (the DLManagedTensor C ABI
 * of dlpack.h, unchanged from v0.6 to v1.x's "legacy" tensor).
 *
 * Requires: array.c (kern_array_wrap), storage.c (rt_array_adopt, rt_array_retain), the
 * device table, the driver's pointer classification when present.
 * Produces: kern_array_from_dlpack and kern_array_to_dlpack.
 * Breaks: a tensor handed to kern_array_from_dlpack belongs to kern once the
 * call succeeds: its deleter runs exactly once, when the array and all its
 * views are freed. A refused tensor stays the caller's (kern never calls its
 * deleter). An exported tensor holds a counted reference to the array's
 * memory, so the memory outlives the array handle until the consumer calls
 * the deleter. Neither direction synchronizes streams: order CUDA work first.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_dlpack.h"

static const char *dl_device_name(int t) {
  static const char *const n[] = {
      NULL,        "kDLCPU",         "kDLCUDA",   "kDLCUDAHost", "kDLOpenCL", NULL,
      NULL,        "kDLVulkan",      "kDLMetal",  "kDLVPI",      "kDLROCM",   "kDLROCMHost",
      "kDLExtDev", "kDLCUDAManaged", "kDLOneAPI", "kDLWebGPU",   "kDLHexagon"};
  return t >= 0 && t < (int)(sizeof n / sizeof n[0]) && n[t] ? n[t] : "an unknown device type";
}

static const char *dl_code_name(int code) {
  static const char *const n[] = {"int",    "uint",    "float", "opaque handle",
                                  "bfloat", "complex", "bool"};
  return code >= 0 && code < 7 ? n[code] : "unknown";
}

/* ---- import ------------------------------------------------------------------------------ */

static kern_dtype dtype_from(DLDataType t) {
  static const kern_dtype ints[] = {KERN_INT8, KERN_INT16, KERN_INT32, KERN_INT64};
  static const kern_dtype uints[] = {KERN_UINT8, KERN_UINT16, KERN_UINT32, KERN_UINT64};
  static const kern_dtype floats[] = {KERN_DTYPE_INVALID, KERN_FLOAT16, KERN_FLOAT32, KERN_FLOAT64};
  int log = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
  if (t.lanes != 1 || log < 0) return KERN_DTYPE_INVALID;
  switch (t.code) {
    case kDLInt: return ints[log];
    case kDLUInt: return uints[log];
    case kDLFloat: return floats[log];
    case kDLBfloat: return t.bits == 16 ? KERN_BFLOAT16 : KERN_DTYPE_INVALID;
    case DL_BOOL: return log == 0 ? KERN_BOOL : KERN_DTYPE_INVALID;
    default: return KERN_DTYPE_INVALID;
  }
}

static kern_device *cuda_device(int ordinal) {
  for (int i = 1; ordinal >= 0 && i < kern_device_count(); i++) {
    kern_device *d = kern_device_at(i);
    if (d->kind == RT_DEV_CUDA && d->ordinal == ordinal) return d;
  }
  return NULL;
}

/* The kern device a DLPack device names, and the memory kind it implies
 * (used when neither kern's registry nor the driver knows the pointer). */
static kern_status device_from(const DLTensor *t, kern_device **dev, kern_memory_kind *kind) {
  const char *fn = "kern_array_from_dlpack";
  int type = (int)t->device.device_type, ord = t->device.device_id;
  kern_memory_kind k;
  if (type == kDLCUDA || type == kDLCUDAManaged) rt_devices_probe_gpus(false);
  switch (type) {
    case kDLCPU: *dev = rt_cpu_device(), *kind = KERN_MEM_HOST; return KERN_OK;
    case kDLCUDAHost: *dev = rt_cpu_device(), *kind = KERN_MEM_PINNED_HOST; return KERN_OK;
    case kDLCUDA: *kind = KERN_MEM_CUDA_DEVICE; break;
    case kDLCUDAManaged:
      /* DLPack sets device_id 0 for managed memory: the driver knows the owner. */
      *kind = KERN_MEM_CUDA_MANAGED;
      if (rt_host.pointer_kind && rt_host.pointer_kind(t->data, &k, &ord) &&
          k == KERN_MEM_CUDA_MANAGED)
        break;
      ord = t->device.device_id;
      break;
    default:
      return err_set(
          KERN_ERR_UNSUPPORTED,
          "%s: the tensor is on %s (device type %d), which kern cannot use; it takes kDLCPU, "
          "kDLCUDA, kDLCUDAHost and kDLCUDAManaged tensors",
          fn, dl_device_name(type), type);
  }
  if ((*dev = cuda_device(ord))) return KERN_OK;
  return err_set(KERN_ERR_UNSUPPORTED,
                 "%s: the tensor is on %s device %d, but kern has no device cuda:%d (%s)", fn,
                 dl_device_name(type), t->device.device_id, ord,
                 kern_device_count() > 1 ? "no such ordinal" : rt_cuda_absent_reason());
}

static kern_status check_tensor(const DLTensor *t, kern_dtype *dt) {
  const char *fn = "kern_array_from_dlpack";
  if (t->ndim < 1 || t->ndim > 4)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "%s: the tensor has %d dimensions; kern arrays have 1 to 4", fn, t->ndim);
  if (!t->shape) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: the tensor's shape is NULL", fn);
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0)
      return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: the tensor's shape[%d] is negative (%lld)", fn,
                     d, (long long)t->shape[d]);
  if ((*dt = dtype_from(t->dtype)) == KERN_DTYPE_INVALID)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "%s: the tensor's dtype (%s, %d bits, %d lanes) is not supported; kern takes bool, "
        "int8-64, uint8-64, float16/32/64 and bfloat16 with 1 lane",
        fn, dl_code_name(t->dtype.code), t->dtype.bits, t->dtype.lanes);
  return KERN_OK;
}

/* Element strides -> byte strides. Negative strides are refused (kern's
 * arrays and copies assume addresses grow with indices); the stride of a dim
 * that cannot step (size 0 or 1) does not matter and becomes 0. */
static kern_status byte_strides(const DLTensor *t, size_t elem, int64_t *out) {
  bool empty = false;
  for (int d = 0; d < t->ndim; d++) empty = empty || t->shape[d] == 0;
  for (int d = 0; d < t->ndim; d++) {
    int64_t s = t->strides[d];
    if (empty || t->shape[d] <= 1) s = s < 0 ? 0 : s;
    if (s < 0)
      return err_set(
          KERN_ERR_UNSUPPORTED,
          "kern_array_from_dlpack: the tensor's stride %lld along dim %d is negative; kern arrays "
          "need non-negative strides (copy the tensor first)",
          (long long)s, d);
    if (s > INT64_MAX / (int64_t)elem)
      return err_set(KERN_ERR_INVALID_ARGUMENT,
                     "kern_array_from_dlpack: stride %lld along dim %d overflows", (long long)s, d);
    out[d] = s * (int64_t)elem;
  }
  return KERN_OK;
}

static void release_tensor(void *ctx) {
  DLManagedTensor *t = ctx;
  if (t->deleter) t->deleter(t);
}

/* The kind kern's registry or the driver reports wins; the DLPack device
 * type only fills in what they cannot tell. */
static kern_array *wrap_tensor(DLManagedTensor *m, kern_device *dev, kern_dtype dt,
                               const int64_t *strides) {
  const DLTensor *t = &m->dl_tensor;
  char *data = (char *)t->data + t->byte_offset;
  kern_array *a = kern_array_wrap(data, dev, dt, t->ndim, t->shape, strides);
  if (!a) {
    char why[512];
    snprintf(why, sizeof why, "%s", kern_last_error());
    err_set(kern_last_status(), "kern_array_from_dlpack: cannot use the tensor's memory: %s", why);
  }
  return a;
}

kern_array *kern_array_from_dlpack(struct DLManagedTensor *m) {
  if (rt_ensure_init() != KERN_OK) return NULL;
  if (!m) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_from_dlpack: tensor is NULL");
    return NULL;
  }
  const DLTensor *t = &m->dl_tensor;
  kern_dtype dt;
  kern_device *dev = NULL;
  kern_memory_kind declared = KERN_MEM_UNKNOWN;
  int64_t strides[4];
  if (check_tensor(t, &dt) || device_from(t, &dev, &declared)) return NULL;
  if (t->strides && byte_strides(t, kern_dtype_size(dt), strides)) return NULL;
  kern_array *a = wrap_tensor(m, dev, dt, t->strides ? strides : NULL);
  if (!a) return NULL;
  kern_memory_kind kind =
      kern_array_memory_kind(a) == KERN_MEM_UNKNOWN ? declared : kern_array_memory_kind(a);
  if (rt_array_adopt(a, kind, release_tensor, m)) {
    kern_array_free(a);
    return NULL;
  }
  return a;
}

/* ---- export ------------------------------------------------------------------------------- */

/* A kern dtype as DLPack scalars: vectors, matrices and quats gain trailing
 * dims ([n], [rows, cols]) of their component type. */
typedef struct dl_elem {
  DLDataType t;
  int nextra;
  int64_t extra[2];
} dl_elem;

static bool elem_of(kern_dtype dt, dl_elem *e) {
  static const struct {
    kern_dtype dt;
    uint8_t code, bits;
    int n, rows;
  } map[] = {
      {KERN_BOOL, DL_BOOL, 8, 0, 0},
      {KERN_INT8, kDLInt, 8, 0, 0},
      {KERN_INT16, kDLInt, 16, 0, 0},
      {KERN_INT32, kDLInt, 32, 0, 0},
      {KERN_INT64, kDLInt, 64, 0, 0},
      {KERN_UINT8, kDLUInt, 8, 0, 0},
      {KERN_UINT16, kDLUInt, 16, 0, 0},
      {KERN_UINT32, kDLUInt, 32, 0, 0},
      {KERN_UINT64, kDLUInt, 64, 0, 0},
      {KERN_FLOAT16, kDLFloat, 16, 0, 0},
      {KERN_FLOAT32, kDLFloat, 32, 0, 0},
      {KERN_FLOAT64, kDLFloat, 64, 0, 0},
      {KERN_BFLOAT16, kDLBfloat, 16, 0, 0},
      {KERN_VEC2, kDLFloat, 32, 2, 0},
      {KERN_VEC3, kDLFloat, 32, 3, 0},
      {KERN_VEC4, kDLFloat, 32, 4, 0},
      {KERN_DVEC2, kDLFloat, 64, 2, 0},
      {KERN_DVEC3, kDLFloat, 64, 3, 0},
      {KERN_DVEC4, kDLFloat, 64, 4, 0},
      {KERN_IVEC2, kDLInt, 32, 2, 0},
      {KERN_IVEC3, kDLInt, 32, 3, 0},
      {KERN_IVEC4, kDLInt, 32, 4, 0},
      {KERN_MAT22, kDLFloat, 32, 2, 2},
      {KERN_MAT33, kDLFloat, 32, 3, 3},
      {KERN_MAT44, kDLFloat, 32, 4, 4},
      {KERN_QUAT, kDLFloat, 32, 4, 0},
      {KERN_QUATH, kDLFloat, 16, 4, 0},
      {KERN_QUATBF16, kDLBfloat, 16, 4, 0},
      {KERN_QUATD, kDLFloat, 64, 4, 0},
      {KERN_TRANSFORM, kDLFloat, 32, 7, 0},
      {KERN_SPATIAL_VECTOR, kDLFloat, 32, 6, 0},
      {KERN_SPATIAL_MATRIX, kDLFloat, 32, 6, 6},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    if (map[i].dt != dt) continue;
    e->t = (DLDataType){map[i].code, map[i].bits, 1};
    e->nextra = map[i].rows ? 2 : map[i].n ? 1 : 0;
    e->extra[0] = map[i].rows ? map[i].rows : map[i].n;
    e->extra[1] = map[i].n;
    return true;
  }
  return false;
}

static DLDevice device_of(const kern_array *a) {
  const kern_device *d = kern_array_device(a);
  int ord = d->kind == RT_DEV_CUDA ? d->ordinal : 0;
  switch (kern_array_memory_kind(a)) {
    case KERN_MEM_HOST: return (DLDevice){kDLCPU, 0};
    case KERN_MEM_PINNED_HOST: return (DLDevice){kDLCUDAHost, 0};
    case KERN_MEM_CUDA_MANAGED: return (DLDevice){kDLCUDAManaged, 0};
    case KERN_MEM_CUDA_DEVICE:
    case KERN_MEM_CUDA_MEMPOOL: return (DLDevice){kDLCUDA, ord};
    default: return d->kind == RT_DEV_CUDA ? (DLDevice){kDLCUDA, ord} : (DLDevice){kDLCPU, 0};
  }
}

typedef struct export_ctx {
  DLManagedTensor m;
  struct rt_storage *storage; /* NULL for wrapped arrays */
  int64_t shape[6], strides[6];
} export_ctx;

static void export_deleter(DLManagedTensor *m) {
  export_ctx *c = m ? m->manager_ctx : NULL;
  if (!c) return;
  rt_storage_release(c->storage);
  free(c);
}

/* Byte strides -> element strides of the component type (must divide). */
static kern_status fill_layout(const kern_array *a, const dl_elem *e, export_ctx *c) {
  int nd = kern_array_ndim(a), comp = e->t.bits / 8;
  for (int d = 0; d < nd; d++) {
    int64_t s = kern_array_stride(a, d);
    if (s % comp)
      return err_set(
          KERN_ERR_UNSUPPORTED,
          "kern_array_to_dlpack: stride %lld bytes along dim %d is not a multiple of the %d-byte "
          "element, which DLPack cannot describe",
          (long long)s, d, comp);
    c->shape[d] = kern_array_shape(a, d);
    c->strides[d] = s / comp;
  }
  for (int x = 0; x < e->nextra; x++) c->shape[nd + x] = e->extra[x];
  if (e->nextra == 1) c->strides[nd] = 1;
  if (e->nextra == 2) c->strides[nd] = e->extra[1], c->strides[nd + 1] = 1;
  return KERN_OK;
}

struct DLManagedTensor *kern_array_to_dlpack(kern_array *a) {
  dl_elem e;
  if (!a) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_to_dlpack: array is NULL");
    return NULL;
  }
  if (!elem_of(kern_array_dtype(a), &e)) {
    err_set(KERN_ERR_UNSUPPORTED,
            "kern_array_to_dlpack: dtype %s has no DLPack equivalent (struct dtypes "
            "are not exported)",
            kern_dtype_name(kern_array_dtype(a)));
    return NULL;
  }
  export_ctx *c = calloc(1, sizeof *c);
  if (!c) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "kern_array_to_dlpack: out of memory");
    return NULL;
  }
  if (fill_layout(a, &e, c)) {
    free(c);
    return NULL;
  }
  DLTensor *t = &c->m.dl_tensor;
  t->data = kern_array_data(a);
  t->device = device_of(a);
  t->ndim = kern_array_ndim(a) + e.nextra;
  t->dtype = e.t;
  t->shape = c->shape;
  t->strides = c->strides;
  c->m.manager_ctx = c;
  c->m.deleter = export_deleter;
  c->storage = rt_array_retain(a);
  return &c->m;
}
