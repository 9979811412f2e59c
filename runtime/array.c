/* array.c: arrays: creation, views, wrapping, host transfers, copies, fills.
 *
 * Requires: a device's ops for allocation and non-host copies; registry.c.
 * Produces: the kern_array_* API.
 * Breaks: memory belongs to a refcounted rt_storage shared by an array and its
 * views, so they may be freed in any order; wrapped memory has no storage and
 * is never freed by kern; external memory adopted from DLPack has a storage
 * whose last release calls its owner back. Byte sizes are checked for
 * overflow before anything is allocated. A wrapped pointer's memory kind comes
 * from the registry (kern's own base pointers, no driver call), else from the
 * driver hook, else UNKNOWN. During a graph capture, allocations, copies,
 * fills and host transfers ask capture.c first (recorded, refused, or let
 * through to the stream), and a free the capture cannot record waits for it
 * to end.
 */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

typedef struct rt_storage {
  _Atomic int refs;
  kern_device *device;
  void *base;
  size_t bytes; /* as allocated (>= 64); 0 for external memory */
  kern_memory_kind kind;
  void (*release)(void *ctx); /* external memory (DLPack): its owner's release */
  void *ctx;
  uint64_t capture; /* the graph capture that allocated it (0: none) */
} rt_storage;

/* ---- shapes ------------------------------------------------------------------- */

static kern_status check_shape(const char *fn, int ndim, const int64_t *shape, size_t elem,
                               size_t *nbytes) {
  if (ndim < 1 || ndim > 4)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: ndim must be 1 to 4, got %d", fn, ndim);
  if (!shape) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: shape is NULL", fn);
  uint64_t total = elem;
  bool overflow = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: shape[%d] is negative (%lld)", fn, d,
                     (long long)shape[d]);
    if (shape[d] != 0 && total > (uint64_t)INT64_MAX / (uint64_t)shape[d])
      overflow = true;
    else
      total *= (uint64_t)shape[d];
  }
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) overflow = false, total = 0;
  if (overflow || total > (uint64_t)PTRDIFF_MAX)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: the array's size in bytes overflows", fn);
  *nbytes = (size_t)total;
  return KERN_OK;
}

static void set_dense_strides(kern_array *a) {
  int64_t s = (int64_t)a->elem_size;
  for (int d = a->ndim - 1; d >= 0; d--) {
    a->strides[d] = s;
    s *= a->shape[d];
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

static rt_storage *storage_new(kern_device *dev, size_t nbytes, bool zero) {
  rt_storage *s = calloc(1, sizeof *s);
  if (!s) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory allocating an array handle");
    return NULL;
  }
  /* Never 0 bytes: every array gets a real, aligned address. */
  s->bytes = nbytes < 64 ? 64 : (nbytes + 63) & ~(size_t)63;
  kern_allocator al = kern_device_get_allocator(dev);
  /* cuMemAllocManaged is not stream-ordered: a graph cannot record it. */
  if (al == KERN_ALLOC_CUDA_MANAGED && rt_capture_active(dev)) {
    free(s);
    err_set(
        KERN_ERR_CAPTURE,
        "cannot allocate CUDA managed memory on %s during graph capture: allocate managed arrays "
        "before kern_capture_begin",
        dev->name);
    return NULL;
  }
  if (rt_capture_check_alloc(dev, al)) {
    free(s);
    return NULL;
  }
  s->capture = rt_capture_id(dev);
  s->base = dev->ops->alloc(dev, s->bytes, al, zero, &s->kind);
  rt_alloc_info info = {.device = dev, .kind = s->kind, .bytes = s->bytes};
  if (s->base && !rt_registry_add(s->base, &info)) {
    dev->ops->free(dev, s->base, s->bytes, s->kind);
    s->base = NULL;
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory recording an allocation");
  }
  if (!s->base) {
    free(s);
    return NULL;
  }
  s->device = dev;
  atomic_init(&s->refs, 1);
  return s;
}

void rt_storage_destroy(rt_storage *s) {
  if (s->release) {
    s->release(s->ctx);
  } else {
    rt_registry_remove(s->base);
    s->device->ops->free(s->device, s->base, s->bytes, s->kind);
  }
  free(s);
}

/* A capture that cannot record the free keeps the storage until it ends. */
static void storage_release(rt_storage *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  if (rt_capture_defer_free(s, s->device, s->capture, s->kind)) return;
  rt_storage_destroy(s);
}

void rt_storage_release(rt_storage *s) { storage_release(s); }

rt_storage *rt_array_retain(const kern_array *a) {
  if (a && a->storage) atomic_fetch_add(&a->storage->refs, 1);
  return a ? a->storage : NULL;
}

rt_storage *rt_array_hold(const kern_array *a, uint64_t capture_id) {
  if (!a->storage || (capture_id && a->storage->capture == capture_id)) return NULL;
  return rt_array_retain(a);
}

kern_status rt_array_adopt(kern_array *a, kern_memory_kind kind, void (*release)(void *),
                           void *ctx) {
  rt_storage *s = calloc(1, sizeof *s);
  if (!s) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory allocating an array handle");
  atomic_init(&s->refs, 1);
  s->device = a->device;
  s->base = a->data;
  s->kind = kind;
  s->release = release;
  s->ctx = ctx;
  a->storage = s;
  a->kind = kind;
  return KERN_OK;
}

static kern_array *array_create(const char *fn, kern_device *dev, kern_dtype dt, int ndim,
                                const int64_t *shape, bool zero) {
  size_t nbytes;
  if (check_common(fn, dev, dt) || check_shape(fn, ndim, shape, kern_dtype_size(dt), &nbytes))
    return NULL;
  kern_array *a = array_alloc(dev, dt, ndim, shape);
  if (!a) return NULL;
  a->nbytes = nbytes;
  set_dense_strides(a);
  a->storage = storage_new(dev, nbytes, zero);
  if (!a->storage) {
    free(a);
    return NULL;
  }
  a->data = a->storage->base;
  a->kind = a->storage->kind;
  if (zero) rt_capture_new_array(a);
  return a;
}

kern_array *kern_array_new(kern_device *dev, kern_dtype dt, int ndim, const int64_t *shape) {
  return array_create("kern_array_new", dev, dt, ndim, shape, true);
}

kern_array *kern_array_empty(kern_device *dev, kern_dtype dt, int ndim, const int64_t *shape) {
  return array_create("kern_array_empty", dev, dt, ndim, shape, false);
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

bool (*rt_pointer_kind_hook)(const void *ptr, kern_memory_kind *kind, int *ordinal);

/* kern's own allocations answer from the registry (no driver call); others
 * ask the driver. *owner: the device the memory belongs to, when known. */
static kern_memory_kind classify(const void *ptr, const kern_device **owner) {
  rt_alloc_info info;
  kern_memory_kind k;
  int ord = -1;
  *owner = NULL;
  if (rt_registry_find(ptr, &info)) {
    *owner = info.device;
    return info.kind;
  }
  if (!rt_pointer_kind_hook || !rt_pointer_kind_hook(ptr, &k, &ord)) return KERN_MEM_UNKNOWN;
  for (int i = 1; ord >= 0 && i < kern_device_count(); i++) {
    kern_device *d = kern_device_at(i);
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
  v->storage = a->storage;
  if (v->storage) atomic_fetch_add(&v->storage->refs, 1);
  return v;
}

void kern_array_free(kern_array *a) {
  if (!a) return;
  storage_release(a->storage);
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

bool rt_array_dense(const kern_array *a) {
  int64_t s = (int64_t)a->elem_size;
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] != 1 && a->strides[d] != s) return false;
    s *= a->shape[d];
  }
  return true;
}

bool kern_array_is_contiguous(const kern_array *a) { return a && rt_array_dense(a); }

/* ---- element walks ------------------------------------------------------------------------------ */

/* Visits the array as maximal contiguous runs, in C order. */
typedef void (*run_fn)(char *p, size_t bytes, void *ud);

static void for_each_run(const kern_array *a, run_fn fn, void *ud) {
  if (a->nbytes == 0) return;
  /* Dims k..ndim-1 form one dense block of `run` bytes. */
  int k = a->ndim;
  int64_t run = (int64_t)a->elem_size;
  while (k > 0 && (a->shape[k - 1] == 1 || a->strides[k - 1] == run)) run *= a->shape[--k];
  int64_t idx[4] = {0, 0, 0, 0};
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d < k; d++) off += idx[d] * a->strides[d];
    fn(a->data + off, (size_t)run, ud);
    int d = k - 1;
    while (d >= 0 && ++idx[d] == a->shape[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

typedef struct cursor {
  char *p;
} cursor;
static void scatter(char *p, size_t n, void *ud) {
  cursor *c = ud;
  memcpy(p, c->p, n);
  c->p += n;
}
static void gather(char *p, size_t n, void *ud) {
  cursor *c = ud;
  memcpy(c->p, p, n);
  c->p += n;
}

/* Memory the calling thread may touch directly. */
static bool host_ok(const kern_array *a) {
  return rt_device_is_host_kind(a->kind) ||
         (a->kind == KERN_MEM_UNKNOWN && a->device->kind == RT_DEV_CPU);
}

static kern_status device_copy(kern_device *dev, void *dst, const void *src, size_t n, bool dh,
                               bool sh) {
  if (!dev->ops->copy)
    return err_set(KERN_ERR_UNSUPPORTED, "device %s cannot copy memory", dev->name);
  return dev->ops->copy(dev, dst, src, n, dh, sh);
}

static kern_status write_now(kern_array *a, const void *src, size_t bytes) {
  if (host_ok(a)) {
    cursor c = {(char *)src};
    for_each_run(a, scatter, &c);
    return KERN_OK;
  }
  if (rt_array_dense(a)) return device_copy(a->device, a->data, src, bytes, false, true);
  return err_set(KERN_ERR_UNSUPPORTED, "kern_array_write: strided arrays on %s are not supported",
                 a->device->name);
}

static kern_status read_now(const kern_array *a, void *dst, size_t bytes) {
  if (host_ok(a)) {
    cursor c = {dst};
    for_each_run(a, gather, &c);
    return KERN_OK;
  }
  if (rt_array_dense(a)) return device_copy(a->device, dst, a->data, bytes, true, false);
  return err_set(KERN_ERR_UNSUPPORTED, "kern_array_read: strided arrays on %s are not supported",
                 a->device->name);
}

/* During a capture the host must not touch the device's arrays: refused. */
kern_status kern_array_write(kern_array *a, const void *src, size_t bytes) {
  if (!a || (!src && bytes))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_write: %s is NULL", a ? "src" : "array");
  if (bytes != a->nbytes)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_write: %zu bytes given, the array holds %zu", bytes, a->nbytes);
  if (bytes == 0) return KERN_OK;
  kern_status st = rt_capture_host_access(a, "kern_array_write");
  return st ? st : write_now(a, src, bytes);
}

kern_status kern_array_read(const kern_array *a, void *dst, size_t bytes) {
  if (!a || (!dst && bytes))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_read: %s is NULL", a ? "dst" : "array");
  if (bytes != a->nbytes)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_read: %zu bytes given, the array holds %zu", bytes, a->nbytes);
  if (bytes == 0) return KERN_OK;
  kern_status st = rt_capture_host_access(a, "kern_array_read");
  return st ? st : read_now(a, dst, bytes);
}

/* ---- copy ------------------------------------------------------------------------------------- */

static void byte_range(const kern_array *a, uintptr_t *lo, uintptr_t *hi) {
  uintptr_t end = (uintptr_t)a->data + a->elem_size;
  for (int d = 0; d < a->ndim; d++) end += (uintptr_t)((a->shape[d] - 1) * a->strides[d]);
  *lo = (uintptr_t)a->data;
  *hi = end;
}

static bool overlap(const kern_array *a, const kern_array *b) {
  uintptr_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
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

/* Through a dense host buffer: strided device arrays, and overlapping views. */
static kern_status copy_staged(kern_array *dst, const kern_array *src) {
  void *tmp = malloc(src->nbytes);
  if (!tmp)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "kern_array_copy: out of memory for a staging buffer");
  kern_status st = read_now(src, tmp, src->nbytes);
  if (st == KERN_OK) st = write_now(dst, tmp, dst->nbytes);
  free(tmp);
  return st;
}

/* A capture records the copy (CPU), refuses it, or lets it reach the stream. */
kern_status kern_array_copy(kern_array *dst, const kern_array *src) {
  kern_status st = check_same(dst, src);
  if (st || dst->nbytes == 0) return st;
  if (rt_capture_copy(dst, src, &st)) return st;
  return rt_array_copy_now(dst, src);
}

kern_status rt_array_copy_now(kern_array *dst, const kern_array *src) {
  if (dst->data == src->data && memcmp(dst->strides, src->strides, sizeof dst->strides) == 0)
    return KERN_OK;
  bool dh = host_ok(dst), sh = host_ok(src);
  bool dd = rt_array_dense(dst), sd = rt_array_dense(src);
  if (dh && sh) {
    if (dd && sd) {
      memmove(dst->data, src->data, dst->nbytes);
      return KERN_OK;
    }
    if (overlap(dst, src)) return copy_staged(dst, src);
    if (dd) return read_now(src, dst->data, dst->nbytes);
    if (sd) return write_now(dst, src->data, src->nbytes);
    return copy_staged(dst, src);
  }
  if (dd && sd) {
    kern_device *dev = dh ? src->device : dst->device;
    return device_copy(dev, dst->data, src->data, dst->nbytes, dh, sh);
  }
  return copy_staged(dst, src);
}

/* ---- fill ------------------------------------------------------------------------------------- */

typedef struct pattern {
  const char *bytes;
  size_t n;
} pattern;

/* Doubling memcpy: the pattern is already at p[0..n); runs are element multiples. */
static void fill_run(char *p, size_t bytes, void *ud) {
  const pattern *pt = ud;
  memcpy(p, pt->bytes, pt->n);
  size_t have = pt->n;
  while (have < bytes) {
    size_t k = have < bytes - have ? have : bytes - have;
    memcpy(p + have, p, k);
    have += k;
  }
}

kern_status kern_array_fill(kern_array *a, const void *value) {
  if (!a || !value)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_fill: %s is NULL", a ? "value" : "array");
  if (a->nbytes == 0) return KERN_OK;
  kern_status st;
  if (rt_capture_fill(a, value, &st)) return st;
  return rt_array_fill_now(a, value);
}

kern_status rt_array_fill_now(kern_array *a, const void *value) {
  pattern pt = {value, a->elem_size};
  if (host_ok(a)) {
    for_each_run(a, fill_run, &pt);
    return KERN_OK;
  }
  char *tmp = malloc(a->nbytes);
  if (!tmp)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "kern_array_fill: out of memory for a staging buffer");
  fill_run(tmp, a->nbytes, &pt);
  kern_status st = write_now(a, tmp, a->nbytes);
  free(tmp);
  return st;
}

/* ---- IPC (CUDA device memory only; cuda_memory.c asks the driver) ------------------------------ */

kern_status (*rt_ipc_handle_hook)(int ordinal, const void *base, void *out);

kern_status kern_array_ipc_handle(const kern_array *a, void *handle_out) {
  if (!a || !handle_out)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_ipc_handle: %s is NULL",
                   a ? "handle_out" : "array");
  if (a->is_view)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_array_ipc_handle: a view has no IPC handle; use its owner");
  if (!a->storage || a->storage->release)
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
  if (!rt_ipc_handle_hook)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "kern_array_ipc_handle: the CUDA driver lacks cuIpcGetMemHandle");
  return rt_ipc_handle_hook(a->device->ordinal, a->storage->base, handle_out);
}
