/* prims.h: what the primitives written in kern share (never installed):
 * primitives.c (kern_array_sum, _min, _max, _scan) and sort.c
 * (kern_array_sort) make their modules from kern templates the same way.
 *
 * A template is kern text with placeholders ("@U@") that one instantiation
 * replaces; the module of an instantiation lives in a slot of its file, is
 * made on first use under the primitives' lock (held across fork) and found
 * afterwards without it, and is freed at kern_shutdown.
 */
#ifndef KERN_RT_PRIMS_H
#define KERN_RT_PRIMS_H

#include <stdatomic.h>

#include "core.h"

/* tmpl with each of the n keys replaced by its value (malloc'd); NULL with
 * KERN_ERR_OUT_OF_MEMORY. */
char *rt_prims_instantiate(const char *tmpl, int n, const char *const *keys,
                           const char *const *vals);

/* The module in *slot, made on first use from the text src(ctx) returns
 * (malloc'd; named `name`) and then given to setup (if not NULL) before any
 * other thread sees it; release, which frees the caller's slots, runs at
 * every kern_shutdown from then on. NULL with the error set. */
kern_module *rt_prims_module(_Atomic(kern_module *) *slot, const char *name,
                             char *(*src)(const void *ctx), const void *ctx,
                             void (*setup)(kern_module *), void (*release)(void));

/* kern_launch of k over n instances (one launch dimension). */
kern_status rt_prims_launch(kern_kernel *k, kern_device *d, int64_t n, int nargs,
                            const kern_arg *args);

/* sort.c, for tests: the kern text of the sort's module for key words of
 * key_bytes (4 or 8) and value words of word_bytes (1, 2, 4 or 8; malloc'd),
 * and one of its kernels (made on first use). */
char *rt_sort_source(int key_bytes, int word_bytes);
kern_kernel *rt_sort_kernel(int key_bytes, int word_bytes, const char *name);
/* On: CPU sorts run the tiled passes GPUs run (off: the CPU's own passes). */
void rt_sort_tiles_on_cpu(bool on);

#endif
