/* cpu_backend.h: the CPU backend's own interface: its ops table and probe
 * (for init.c) and the thread pool that runs its launches.
 *
 * Only runtime/cpu/ and init.c include it.
 */
#ifndef KERN_CPU_BACKEND_H
#define KERN_CPU_BACKEND_H

#include "backend.h"

extern const rt_device_ops rt_cpu_ops;
/* Registers the "cpu" device (index 0); never fails. */
kern_status rt_cpu_probe(void);

/* ---- pool.c: the CPU thread pool ---------------------------------------------------------- */

typedef void (*rt_range_fn)(const void *args, const kn_ctx *ctx, int64_t begin, int64_t end);
/* Runs fn over [0, n) in chunks on the workers and the calling thread; returns
 * when all are done. Many threads may call it at once. cost (or NULL) is the
 * kernel's measured time per index, read to decide whether splitting pays and
 * updated from this run. */
void rt_pool_run(rt_range_fn, const void *args, const kn_ctx *, int64_t n, _Atomic uint32_t *cost);
/* Workers currently started (0 before the first parallel launch). */
int rt_pool_workers(void);
void rt_pool_shutdown(void);

#endif
