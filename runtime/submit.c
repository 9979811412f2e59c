/* submit.c: the one path every operation on arrays and devices takes.
 *
 * Requires: exec.c (run now), capture.c (the recorder). Produces: rt_submit.
 * Breaks: while no capture is open anywhere, an operation goes straight to
 * exec.c: one atomic load, no recorder code, no lock. While one is open,
 * the recorder sees every operation and decides: record it (a CPU graph),
 * let it run into the capturing stream (CUDA), refuse it, or run it when
 * it does not touch a capturing device.
 */
#include "core.h"

kern_status rt_submit(const rt_op *op) {
  if (atomic_load(&rt_captures_open) == 0) return rt_exec(op);
  return rt_capture_submit(op);
}
