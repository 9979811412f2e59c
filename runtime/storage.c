/* storage.c: the memory behind arrays: allocated through a device, shared
 * by an array and its views, and released by whoever lets go last.
 *
 * Requires: a device's ops (alloc, free), registry.c, and capture.c for
 * frees an open capture cannot record. Produces: rt_storage_new,
 * rt_array_retain/hold/adopt, rt_storage_release/destroy.
 * Breaks: a storage is refcounted, so an array and its views may be freed in
 * any order; wrapped memory has no storage and is never freed by kern;
 * external memory adopted from DLPack has a storage whose last release calls
 * its owner back. A free that an open capture cannot record waits in the
 * recorder until the capture ends (rt_capture_defer_free).
 */
#include <stdlib.h>

#include "core.h"

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

rt_storage *rt_storage_new(kern_device *dev, kern_allocator al, size_t nbytes, bool zero,
                           void **base, kern_memory_kind *kind) {
  rt_storage *s = calloc(1, sizeof *s);
  if (!s) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory allocating an array handle");
    return NULL;
  }
  /* Never 0 bytes: every array gets a real, aligned address. */
  s->bytes = nbytes < 64 ? 64 : (nbytes + 63) & ~(size_t)63;
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
  *base = s->base;
  *kind = s->kind;
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
void rt_storage_release(rt_storage *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  if (rt_capture_defer_free(s, s->device, s->capture, s->kind)) return;
  rt_storage_destroy(s);
}

rt_storage *rt_array_retain(const kern_array *a) {
  if (a && a->storage) atomic_fetch_add(&a->storage->refs, 1);
  return a ? a->storage : NULL;
}

rt_storage *rt_array_hold(const kern_array *a, uint64_t capture_id) {
  if (!a->storage || (capture_id && a->storage->capture == capture_id)) return NULL;
  return rt_array_retain(a);
}

bool rt_storage_owned(const rt_storage *s, void **base) {
  if (!s || s->release) return false;
  *base = s->base;
  return true;
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
