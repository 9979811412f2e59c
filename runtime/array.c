/* array.c: arrays: creation, views, wrapping, accessors, and the public
 * transfers, copies and fills.
 *
 * Requires: storage.c (the memory), rt_submit (every operation that touches
 * memory: allocation checks, zeroing, copies, fills, host transfers go there,
 * and so past the recorder while a capture is open), registry.c.
 * Produces: the kern_array_* API.
 * Breaks: byte sizes are checked for overflow before anything is allocated.
 * A wrapped pointer's memory kind comes from the registry (kern's own base
 * pointers, no driver call), else from the driver's host services, else
 * UNKNOWN.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* ---- shapes ------------------------------------------------------------------- */

static kern_status check_shape(const char *fn, int ndim, const int64_t *shape, size_t elem,
                               size_t *nbytes) {
  if (ndim < 1 || ndim > 4)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: ndim must be 1 to 4, got %d", fn, ndim);
  if (!shape) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: shape is NULL", fn);
  /* The product of the nonzero dims must fit even for an empty array
   * (NumPy's rule): its dense strides are still computed and handed out
   * (DLPack, views), and every one of them must be a valid int64. */
  uint64_t total = elem;
  bool overflow = false, empty = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: shape[%d] is negative (%lld)", fn, d,
                     (long long)shape[d]);
    if (shape[d] == 0)
      empty = true;
    else if (total > (uint64_t)PTRDIFF_MAX / (uint64_t)shape[d])
      overflow = true;
    else
      total *= (uint64_t)shape[d];
  }
  if (overflow)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: the array's size in bytes overflows%s", fn,
                   empty ? " (an empty array's nonzero dims, whose strides must fit in int64)"
                         : "");
  *nbytes = empty ? 0 : (size_t)total;
  return KERN_OK;
}

/* C-order strides. check_shape made every partial product fit; the
 * checked multiply keeps a shape that bypassed it from overflowing. */
static void set_dense_strides(kern_array *a) {
  int64_t s = (int64_t)a->elem_size;
  for (int d = a->ndim - 1; d >= 0; d--) {
    a->strides[d] = s;
    if (__builtin_mul_overflow(s, a->shape[d], &s)) s = INT64_MAX;
  }
}

static kern_array *array_alloc(kern_device *dev, kern_dtype dt, int ndim, const int64_t *shape) {
  kern_array *a = calloc(1, sizeof *a);
  if (!a) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory allocating an array handle");
    return NULL;
  }
  a->device = dev;
  a->dtype = dt;
  a->ndim = ndim;
  a->elem_size = kern_dtype_size(dt);
  for (int d = 0; d < 4; d++) {
    a->shape[d] = d < ndim ? shape[d] : 1;
    a->strides[d] = 0;
  }
  return a;
}

static kern_status check_common(const char *fn, kern_device *dev, kern_dtype dt) {
  if (rt_ensure_init() != KERN_OK) return KERN_ERR_INVALID_ARGUMENT;
  if (!dev) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: device is NULL", fn);
  if (!rt_dtype_valid(dt))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", fn, (int)dt);
  return KERN_OK;
}

/* ---- owned arrays ----------------------------------------------------------------- */

static kern_array *array_create(const char *fn, kern_device *dev, kern_dtype dt, int ndim,
                                const int64_t *shape, bool zero, kern_allocator al) {
  size_t nbytes;
  if (check_common(fn, dev, dt) || check_shape(fn, ndim, shape, kern_dtype_size(dt), &nbytes))
    return NULL;
  kern_array *a = array_alloc(dev, dt, ndim, shape);
  if (!a) return NULL;
  a->nbytes = nbytes;
  set_dense_strides(a);
  void *base = NULL;
  if (rt_submit(&(rt_op){.kind = RT_OP_ALLOC, .device = dev, .allocator = al}) ||
      !(a->storage = rt_storage_new(dev, al, nbytes, zero, &base, &a->kind))) {
    free(a);
    return NULL;
  }
  a->data = base;
  if (zero) rt_submit(&(rt_op){.kind = RT_OP_ZEROED, .dst = a});
  return a;
}

kern_array *kern_array_new(kern_device *dev, kern_dtype dt, int ndim, const int64_t *shape) {
  return array_create("kern_array_new", dev, dt, ndim, shape, true,
                      dev ? kern_device_get_allocator(dev) : KERN_ALLOC_DEFAULT);
}

kern_array *kern_array_empty(kern_device *dev, kern_dtype dt, int ndim, const int64_t *shape) {
  return array_create("kern_array_empty", dev, dt, ndim, shape, false,
                      dev ? kern_device_get_allocator(dev) : KERN_ALLOC_DEFAULT);
}

/* Stream-ordered on a GPU (a memory-pool allocation, which a graph capture
 * records), whatever the device's allocator: the primitives' temporaries. */
kern_array *rt_array_scratch(kern_device *dev, kern_dtype dt, int64_t n) {
  kern_allocator al = dev->kind == RT_DEV_CUDA ? KERN_ALLOC_CUDA_MEMPOOL : KERN_ALLOC_DEFAULT;
  return array_create("scratch", dev, dt, 1, &n, false, al);
}

/* ---- wrapped arrays ------------------------------------------------------------------ */

/* The farthest byte any element reaches must be addressable. */
static kern_status check_strides(int ndim, const int64_t *shape, const int64_t *strides,
                                 size_t elem, size_t nbytes) {
  if (nbytes == 0) return KERN_OK;
  uint64_t reach = elem;
  for (int d = 0; d < ndim; d++) {
    if (strides[d] < 0)
      return err_set(
          KERN_ERR_INVALID_ARGUMENT,
          "kern_array_wrap: strides[%d] is negative (%lld); negative strides are not supported", d,
          (long long)strides[d]);
    uint64_t step = (uint64_t)strides[d], n = (uint64_t)shape[d] - 1;
    if (step && n > ((uint64_t)PTRDIFF_MAX - reach) / step)
      return err_set(KERN_ERR_INVALID_ARGUMENT,
                     "kern_array_wrap: the strides overflow the address space");
    reach += n * step;
  }
  return KERN_OK;
}

/* kern's own allocations answer from the registry (no driver call); others
 * ask the driver, if it is in the process at all (GPUs probed now if need be:
 * without it no pointer is CUDA memory, and a CPU-only program never starts
 * CUDA to find that out). *owner: the device the memory belongs to, when known. */
static kern_memory_kind classify(const void *ptr, const kern_device **owner) {
  rt_alloc_info info;
  kern_memory_kind k;
  int ord = -1;
  *owner = NULL;
  if (rt_registry_find(ptr, &info)) {
    *owner = info.device;
    return info.kind;
  }
  if (!rt_devices_probe_gpus(true) || !rt_host.pointer_kind || !rt_host.pointer_kind(ptr, &k, &ord))
    return KERN_MEM_UNKNOWN;
  for (int i = 1; ord >= 0 && i < rt_device_count(); i++) {
    kern_device *d = rt_device_at(i);
    if (d->kind == RT_DEV_CUDA && d->ordinal == ord) *owner = d;
  }
  return k;
}

/* GPU memory declared on another device would send CPU threads (copies,
 * launches) or the wrong GPU to an address they cannot use. */
static kern_status check_owner(kern_device *dev, kern_memory_kind kind, const kern_device *owner) {
  if (rt_device_is_host_kind(kind) || kind == KERN_MEM_UNKNOWN || !owner || owner == dev)
    return KERN_OK;
  static const char *const names[] = {"", "", "CUDA device", "CUDA memory-pool", "CUDA managed"};
  return err_set(KERN_ERR_INVALID_ARGUMENT,
                 "kern_array_wrap: ptr is %s memory of %s, not of %s; wrap it with device %s",
                 names[kind], owner->name, dev->name, owner->name);
}

kern_array *kern_array_wrap(void *ptr, kern_device *dev, kern_dtype dt, int ndim,
                            const int64_t *shape, const int64_t *strides) {
  const char *fn = "kern_array_wrap";
  size_t nbytes;
  if (check_common(fn, dev, dt) || check_shape(fn, ndim, shape, kern_dtype_size(dt), &nbytes))
    return NULL;
  if (!ptr && nbytes) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_wrap: ptr is NULL");
    return NULL;
  }
  if (strides && check_strides(ndim, shape, strides, kern_dtype_size(dt), nbytes)) return NULL;
  const kern_device *owner;
  kern_memory_kind kind = classify(ptr, &owner);
  if (check_owner(dev, kind, owner)) return NULL;
  kern_array *a = array_alloc(dev, dt, ndim, shape);
  if (!a) return NULL;
  a->nbytes = nbytes;
  a->data = ptr;
  if (strides)
    memcpy(a->strides, strides, (size_t)ndim * sizeof *strides);
  else
    set_dense_strides(a);
  a->kind = kind;
  return a;
}

/* ---- views ------------------------------------------------------------------------------ */

static kern_status check_window(const kern_array *a, int ndim, const int64_t *off,
                                const int64_t *shape) {
  const char *fn = "kern_array_view";
  if (!a) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: array is NULL", fn);
  if (ndim != a->ndim)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: ndim %d does not match the array's %d", fn, ndim,
                   a->ndim);
  if (!off || !shape)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, off ? "shape" : "offset");
  for (int d = 0; d < ndim; d++)
    if (off[d] < 0 || shape[d] < 0 || off[d] > a->shape[d] || shape[d] > a->shape[d] - off[d])
      return err_set(KERN_ERR_INVALID_ARGUMENT,
                     "%s: dim %d: offset %lld + shape %lld is outside the array's shape %lld", fn,
                     d, (long long)off[d], (long long)shape[d], (long long)a->shape[d]);
  return KERN_OK;
}

kern_array *kern_array_view(kern_array *a, int ndim, const int64_t *off, const int64_t *shape) {
  if (check_window(a, ndim, off, shape)) return NULL;
  kern_array *v = array_alloc(a->device, a->dtype, ndim, shape);
  if (!v) return NULL;
  int64_t byte_off = 0;
  size_t n = v->elem_size;
  for (int d = 0; d < ndim; d++) {
    byte_off += off[d] * a->strides[d];
    v->strides[d] = a->strides[d];
    n *= (size_t)shape[d];
  }
  v->nbytes = n;
  v->data = a->data + byte_off;
  v->kind = a->kind;
  v->is_view = true;
  v->storage = rt_array_retain(a);
  return v;
}

kern_array *rt_array_as(kern_array *a, kern_dtype dt, int ndim, const int64_t *shape,
                        const int64_t *strides) {
  kern_array *v = array_alloc(a->device, dt, ndim, shape);
  if (!v) return NULL;
  size_t n = v->elem_size;
  for (int d = 0; d < ndim; d++) {
    v->strides[d] = strides ? strides[d] : 0;
    n *= (size_t)shape[d];
  }
  if (!strides) set_dense_strides(v);
  v->nbytes = n;
  v->data = a->data;
  v->kind = a->kind;
  v->is_view = true;
  v->storage = rt_array_retain(a);
  return v;
}

void kern_array_free(kern_array *a) {
  if (!a) return;
  rt_storage_release(a->storage);
  free(a);
}

/* ---- accessors ---------------------------------------------------------------------------- */

void *kern_array_data(kern_array *a) { return a ? a->data : NULL; }
kern_device *kern_array_device(const kern_array *a) { return a ? a->device : NULL; }
kern_memory_kind kern_array_memory_kind(const kern_array *a) {
  return a ? a->kind : KERN_MEM_UNKNOWN;
}
int kern_array_ndim(const kern_array *a) { return a ? a->ndim : 0; }
kern_dtype kern_array_dtype(const kern_array *a) { return a ? a->dtype : KERN_DTYPE_INVALID; }
size_t kern_array_nbytes(const kern_array *a) { return a ? a->nbytes : 0; }

int64_t kern_array_shape(const kern_array *a, int d) {
  return a && d >= 0 && d < a->ndim ? a->shape[d] : 0;
}

int64_t kern_array_stride(const kern_array *a, int d) {
  return a && d >= 0 && d < a->ndim ? a->strides[d] : 0;
}

int64_t kern_array_size(const kern_array *a) {
  return a && a->elem_size ? (int64_t)(a->nbytes / a->elem_size) : 0;
}

bool kern_array_is_contiguous(const kern_array *a) { return a && rt_array_dense(a); }

/* ---- transfers, copies, fills ---------------------------------------------------------- */

/* During a capture the host must not touch the device's arrays: refused. */
kern_status kern_array_write(kern_array *a, const void *src, size_t bytes) {
  if (!a || (!src && bytes))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_write: %s is NULL", a ? "src" : "array");
  if (bytes != a->nbytes)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_write: %zu bytes given, the array holds %zu", bytes, a->nbytes);
  if (bytes == 0) return KERN_OK;
  return rt_submit(&(rt_op){.kind = RT_OP_WRITE, .dst = a, .value = src, .bytes = bytes});
}

kern_status kern_array_read(const kern_array *a, void *dst, size_t bytes) {
  if (!a || (!dst && bytes))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_read: %s is NULL", a ? "dst" : "array");
  if (bytes != a->nbytes)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_read: %zu bytes given, the array holds %zu", bytes, a->nbytes);
  if (bytes == 0) return KERN_OK;
  return rt_submit(&(rt_op){.kind = RT_OP_READ, .src = a, .out = dst, .bytes = bytes});
}

static kern_status check_same(const kern_array *dst, const kern_array *src) {
  const char *fn = "kern_array_copy";
  if (!dst || !src)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, dst ? "src" : "dst");
  if (dst->dtype != src->dtype)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: dtypes differ (dst %s, src %s)", fn,
                   kern_dtype_name(dst->dtype), kern_dtype_name(src->dtype));
  bool same = dst->ndim == src->ndim;
  for (int d = 0; same && d < dst->ndim; d++) same = dst->shape[d] == src->shape[d];
  if (!same) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: shapes differ", fn);
  return KERN_OK;
}

/* A capture records the copy (CPU), refuses it, or lets it reach the stream. */
kern_status kern_array_copy(kern_array *dst, const kern_array *src) {
  kern_status st = check_same(dst, src);
  if (st || dst->nbytes == 0) return st;
  return rt_submit(&(rt_op){.kind = RT_OP_COPY, .dst = dst, .src = src});
}

kern_status kern_array_fill(kern_array *a, const void *value) {
  if (!a || !value)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_fill: %s is NULL", a ? "value" : "array");
  if (a->nbytes == 0) return KERN_OK;
  return rt_submit(&(rt_op){.kind = RT_OP_FILL, .dst = a, .value = value});
}

/* ---- IPC (CUDA device memory only; the driver's host services answer) ------------------------------ */

kern_status kern_array_ipc_handle(const kern_array *a, void *handle_out) {
  if (!a || !handle_out)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_ipc_handle: %s is NULL",
                   a ? "handle_out" : "array");
  if (a->is_view)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_array_ipc_handle: a view has no IPC handle; use its owner");
  void *base;
  if (!rt_storage_owned(a->storage, &base))
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "kern_array_ipc_handle: the array uses external memory (wrapped or from DLPack), which "
        "kern did not allocate and cannot export; export it from its owner");
  if (a->kind == KERN_MEM_CUDA_MANAGED)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "kern_array_ipc_handle: the array is CUDA managed memory, which "
        "CUDA IPC cannot share; use KERN_ALLOC_CUDA_DEVICE for arrays shared between processes");
  if (a->kind == KERN_MEM_CUDA_MEMPOOL)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "kern_array_ipc_handle: the array comes from %s's memory pool, "
        "which is not exportable; use KERN_ALLOC_CUDA_DEVICE for arrays shared between processes",
        a->device->name);
  if (a->kind != KERN_MEM_CUDA_DEVICE)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "kern_array_ipc_handle: IPC handles exist for CUDA device memory only, and this array "
        "is %s host memory",
        a->kind == KERN_MEM_PINNED_HOST ? "pinned" : "pageable");
  if (!rt_host.ipc_handle)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_array_ipc_handle: the CUDA driver lacks cuIpcGetMemHandle");
  return rt_host.ipc_handle(a->device->ordinal, base, handle_out);
}
