/* cuda_backend.h: the CUDA backend's own interface: its probe (for init.c)
 * and what cuda_backend.c and cuda_capture.c share (stream capture on a
 * CUDA device). The driver's entry points are in cuda_api.h.
 *
 * Only runtime/cuda/ and init.c include it. cuda_backend.c and
 * cuda_capture.c call each other (the runtime's one other pair of files that
 * do, see core.h): the capture records on the device's context and streams,
 * and a debug launch inside a capture writes one of the capture's records.
 */
#ifndef KERN_CUDA_BACKEND_H
#define KERN_CUDA_BACKEND_H

#include "backend.h"

/* The GPU probe (init.c registers it, device.c runs it on first need):
 * loads the driver, starts it and adds the CUDA devices it finds (none
 * without a driver, never an error) without creating their contexts, which
 * wait for each device's first use; rt_cuda_probe_reason says why there are
 * none. Once per process. */
kern_status rt_cuda_probe(void);
const char *rt_cuda_probe_reason(void);
/* The CUDA driver is already loaded in the process (by kern or anyone):
 * only then can a pointer kern did not allocate be CUDA memory. */
bool rt_cuda_driver_loaded(void);

/* cuda_backend.c <-> cuda_capture.c (stream capture on a CUDA device). */
struct CUstream_st;
struct CUctx_st;
kern_status rt_cuda_enter(kern_device *); /* context current; fails when poisoned */
kern_status rt_cuda_fail(kern_device *, int cu_result, const char *what);
struct CUstream_st *rt_cuda_stream(kern_device *); /* where the device's work goes now */
struct CUctx_st *rt_cuda_context(const kern_device *);
int rt_cuda_arch(const kern_device *); /* sm_major * 10 + sm_minor */
/* Sends the device's work to s while a conditional body is captured (NULL: back). */
void rt_cuda_set_capture_stream(kern_device *, struct CUstream_st *s);
/* The error record a debug launch inside the open capture writes (NULL: none). */
kn_error *rt_cuda_capture_debug_slot(kern_device *, const kern_kernel *);
extern const rt_graph_ops rt_cuda_graph_ops;

/* The grid g and block b of a launch, as codegen/emit_cuda.c's entries walk
 * them: of a kernel that uses only tid() (n indices, elems per thread and
 * step), and of one that uses tid(d). block is the occupancy API's. */
void rt_cuda_linear_shape(int num_sms, int64_t n, int64_t block, int elems, unsigned g[3],
                          unsigned b[3]);
void rt_cuda_grid_shape(const kn_ctx *, int64_t block, int elems, unsigned g[3], unsigned b[3]);
/* Whether grid g x b has a thread for every index of the launch (elems in a
 * row along x), as a _one entry needs; grid: the kernel uses tid(d) (x along
 * the last launch dimension, y the one before, z the rest), else 1D. */
bool rt_cuda_grid_covers(const kn_ctx *, bool grid, int elems, const unsigned g[3],
                         const unsigned b[3]);

#endif
