/* exec.c: running an operation now: a launch through its device, and the
 * copies, fills and host transfers of arrays.
 *
 * Requires: a device's ops (launch, copy), module.c (the wording of a debug
 * error record). Produces: rt_exec for rt_submit and for the recorder's
 * replays and let-through operations, and the layout rules
 * copies follow (rt_array_dense, rt_array_host_ok).
 * Breaks: nothing here asks about captures (rt_submit and capture.c decide
 * before). Every read, write and copy is one plan (rt_copy, backend.h) of
 * rows, 2-D blocks and loops over blocks, whatever the strides: host memory
 * runs it here, and a copy that touches device memory is the device's to
 * run (CUDA: one 2-D copy per block). Overlapping views go through a dense
 * host buffer; fills of device memory copy a filled dense host buffer.
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

/* ---- copy plans ---------------------------------------------------------------------------- */

/* How elements move between two layouts of the same shape: the trailing dims
 * dense in both make one row, the dim before them the rows of a block (one
 * 2-D copy on a GPU: a window of a 2-D array moves in one driver call), the
 * dims before that the loops over blocks. */
static rt_copy plan(kern_array *dst, const kern_array *src) {
  rt_copy c = {.dst = dst->data,
               .src = src->data,
               .dst_host = rt_array_host_ok(dst),
               .src_host = rt_array_host_ok(src),
               .dst_dev = dst->device,
               .src_dev = src->device,
               .height = 1};
  int k = dst->ndim;
  int64_t run = (int64_t)dst->elem_size;
  while (k > 0 &&
         (dst->shape[k - 1] == 1 || (dst->strides[k - 1] == run && src->strides[k - 1] == run)))
    run *= dst->shape[--k];
  c.width = (size_t)run;
  if (k > 0 && dst->shape[--k] > 1) {
    c.height = (size_t)dst->shape[k];
    c.dpitch = dst->strides[k], c.spitch = src->strides[k];
  }
  for (int d = 0; d < k; d++)
    if (dst->shape[d] != 1) {
      c.n[c.nouter] = dst->shape[d];
      c.dstep[c.nouter] = dst->strides[d], c.sstep[c.nouter] = src->strides[d];
      c.nouter++;
    }
  return c;
}

/* The dense host buffer of a read or write, with a's shape. */
static kern_array host_twin(const kern_array *a, const void *p) {
  kern_array h = *a;
  h.device = rt_cpu_device();
  h.kind = KERN_MEM_HOST;
  h.data = (char *)p;
  h.storage = NULL;
  int64_t s = (int64_t)a->elem_size;
  for (int d = a->ndim - 1; d >= 0; d--) {
    h.strides[d] = s;
    s *= a->shape[d];
  }
  return h;
}

/* The one way elements move. `via`: the device that performs a copy
 * involving device memory (a capture's); NULL: the destination's device, or
 * the source's when the destination is host memory. */
static kern_status move(kern_array *dst, const kern_array *src, kern_device *via) {
  if (dst->nbytes == 0) return KERN_OK;
  rt_copy c = plan(dst, src);
  if (c.dst_host && c.src_host) {
    rt_copy_host(&c);
    return KERN_OK;
  }
  kern_device *dev = via ? via : !c.dst_host ? dst->device : (kern_device *)src->device;
  if (!dev->ops->copy)
    return err_set(KERN_ERR_UNSUPPORTED, "device %s cannot copy memory", dev->name);
  return dev->ops->copy(dev, &c);
}

static kern_status write_now(kern_array *a, const void *src) {
  kern_array h = host_twin(a, src);
  return move(a, &h, NULL);
}

static kern_status read_now(const kern_array *a, void *dst) {
  kern_array h = host_twin(a, dst);
  return move(&h, a, NULL);
}

/* ---- copy ------------------------------------------------------------------------------------- */

static void byte_range(const kern_array *a, uintptr_t *lo, uintptr_t *hi) {
  uintptr_t end = (uintptr_t)a->data + a->elem_size;
  for (int d = 0; d < a->ndim; d++) end += (uintptr_t)((a->shape[d] - 1) * a->strides[d]);
  *lo = (uintptr_t)a->data;
  *hi = end;
}

bool rt_array_overlap(const kern_array *a, const kern_array *b) {
  if (a->nbytes == 0 || b->nbytes == 0) return false;
  uintptr_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

/* Through a dense host buffer: overlapping views. */
static kern_status copy_staged(kern_array *dst, const kern_array *src) {
  void *tmp = malloc(src->nbytes);
  if (!tmp)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "kern_array_copy: out of memory for a staging buffer");
  kern_status st = read_now(src, tmp);
  if (st == KERN_OK) st = write_now(dst, tmp);
  free(tmp);
  return st;
}

/* Overlapping views move through the host, except a one-row host copy
 * (memmove); the same elements need no copy. */
static kern_status copy_now(kern_array *dst, const kern_array *src, kern_device *via) {
  if (dst->data == src->data && memcmp(dst->strides, src->strides, sizeof dst->strides) == 0)
    return KERN_OK;
  if (rt_array_overlap(dst, src)) {
    rt_copy c = plan(dst, src);
    bool one_row = c.nouter == 0 && c.height == 1;
    if (!(one_row && c.dst_host && c.src_host)) return copy_staged(dst, src);
  }
  return move(dst, src, via);
}

/* ---- fill ------------------------------------------------------------------------------------- */

/* Doubling memcpy: the pattern is already at p[0..n); runs are element multiples. */
static void fill_run(char *p, size_t bytes, const char *value, size_t n) {
  memcpy(p, value, n);
  size_t have = n;
  while (have < bytes) {
    size_t k = have < bytes - have ? have : bytes - have;
    memcpy(p + have, p, k);
    have += k;
  }
}

/* Host memory row by row; device memory from a filled dense host buffer,
 * through the same copies as a write (so strided views fill on every device). */
static kern_status fill_now(kern_array *a, const void *value) {
  if (rt_array_host_ok(a)) {
    rt_copy c = plan(a, a);
    for (int64_t b = 0, nb = rt_copy_blocks(&c); b < nb; b++) {
      char *p;
      const char *unused;
      rt_copy_block(&c, b, &p, &unused);
      for (size_t r = 0; r < c.height; r++)
        fill_run(p + (int64_t)r * c.dpitch, c.width, value, a->elem_size);
    }
    return KERN_OK;
  }
  char *tmp = malloc(a->nbytes);
  if (!tmp)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "kern_array_fill: out of memory for a staging buffer");
  fill_run(tmp, a->nbytes, value, a->elem_size);
  kern_status st = write_now(a, tmp);
  free(tmp);
  return st;
}

/* ---- the dispatch (launches: rt_exec_launch, core.h) ---------------------------------------------------------------------- */

kern_status rt_exec(const rt_op *op) {
  switch (op->kind) {
    case RT_OP_LAUNCH: return rt_exec_launch(op->launch);
    case RT_OP_COPY: return copy_now(op->dst, op->src, op->device);
    case RT_OP_FILL: return fill_now(op->dst, op->value);
    case RT_OP_READ: return read_now(op->src, op->out);
    case RT_OP_WRITE: return write_now(op->dst, op->value);
    case RT_OP_ZEROED: /* the allocation zeroed it */
    case RT_OP_ALLOC: return KERN_OK;
  }
  return KERN_OK;
}
