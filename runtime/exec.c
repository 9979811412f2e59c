/* exec.c: running an operation now: a launch through its device, and the
 * copies, fills and host transfers of arrays.
 *
 * Requires: a device's ops (launch, copy), module.c (the wording of a debug
 * error record). Produces: rt_exec for rt_submit and for the recorder's
 * replays and let-through operations, and the layout rules
 * copies follow (rt_array_dense, rt_array_host_ok).
 * Breaks: nothing here asks about captures (rt_submit and capture.c decide
 * before). Host-side arrays are walked as maximal contiguous runs in C order;
 * device memory moves in one contiguous copy, and strided device arrays or
 * overlapping views go through a dense host buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* ---- layout ------------------------------------------------------------------------- */

bool rt_array_dense(const kern_array *a) {
  int64_t s = (int64_t)a->elem_size;
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] != 1 && a->strides[d] != s) return false;
    s *= a->shape[d];
  }
  return true;
}

bool rt_array_host_ok(const kern_array *a) {
  return rt_device_is_host_kind(a->kind) ||
         (a->kind == KERN_MEM_UNKNOWN && a->device->kind == RT_DEV_CPU);
}

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

static kern_status device_copy(kern_device *dev, void *dst, const void *src, size_t n, bool dh,
                               bool sh) {
  if (!dev->ops->copy)
    return err_set(KERN_ERR_UNSUPPORTED, "device %s cannot copy memory", dev->name);
  return dev->ops->copy(dev, dst, src, n, dh, sh);
}

static kern_status write_now(kern_array *a, const void *src, size_t bytes) {
  if (rt_array_host_ok(a)) {
    cursor c = {(char *)src};
    for_each_run(a, scatter, &c);
    return KERN_OK;
  }
  if (rt_array_dense(a)) return device_copy(a->device, a->data, src, bytes, false, true);
  return err_set(KERN_ERR_UNSUPPORTED, "kern_array_write: strided arrays on %s are not supported",
                 a->device->name);
}

static kern_status read_now(const kern_array *a, void *dst, size_t bytes) {
  if (rt_array_host_ok(a)) {
    cursor c = {dst};
    for_each_run(a, gather, &c);
    return KERN_OK;
  }
  if (rt_array_dense(a)) return device_copy(a->device, dst, a->data, bytes, true, false);
  return err_set(KERN_ERR_UNSUPPORTED, "kern_array_read: strided arrays on %s are not supported",
                 a->device->name);
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

static kern_status copy_now(kern_array *dst, const kern_array *src) {
  if (dst->data == src->data && memcmp(dst->strides, src->strides, sizeof dst->strides) == 0)
    return KERN_OK;
  bool dh = rt_array_host_ok(dst), sh = rt_array_host_ok(src);
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

static kern_status fill_now(kern_array *a, const void *value) {
  pattern pt = {value, a->elem_size};
  if (rt_array_host_ok(a)) {
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

/* ---- the dispatch (launches: rt_exec_launch, core.h) ---------------------------------------------------------------------- */

kern_status rt_exec(const rt_op *op) {
  switch (op->kind) {
    case RT_OP_LAUNCH: return rt_exec_launch(op->launch);
    case RT_OP_COPY: return copy_now(op->dst, op->src);
    case RT_OP_FILL: return fill_now(op->dst, op->value);
    case RT_OP_READ: return read_now(op->src, op->out, op->bytes);
    case RT_OP_WRITE: return write_now(op->dst, op->value, op->bytes);
    case RT_OP_ZEROED: /* the allocation zeroed it */
    case RT_OP_ALLOC: return KERN_OK;
  }
  return KERN_OK;
}
