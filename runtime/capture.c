/* capture.c: graph capture and replay, and DLPack exchange.
 *
 * Requires: nothing yet. Produces: the public entry points, which report
 * KERN_ERR_UNSUPPORTED until capture (CUDA stream capture, CPU record and
 * replay) and DLPack land.
 * Breaks: nothing; callers get a status and a message, never a crash.
 */
#include "rt.h"

kern_status kern_capture_begin(kern_device *d) {
  if (!d) return rt_error(KERN_ERR_INVALID_ARGUMENT, "kern_capture_begin: device is NULL");
  return rt_error(KERN_ERR_UNSUPPORTED, "graph capture is not implemented yet (device %s)", d->name);
}

kern_status kern_capture_end(kern_device *d, kern_graph **out) {
  if (out) *out = NULL;
  if (!d) return rt_error(KERN_ERR_INVALID_ARGUMENT, "kern_capture_end: device is NULL");
  return rt_error(KERN_ERR_UNSUPPORTED, "graph capture is not implemented yet (device %s)", d->name);
}

kern_status kern_graph_launch(kern_graph *g) {
  if (!g) return rt_error(KERN_ERR_INVALID_ARGUMENT, "kern_graph_launch: graph is NULL");
  return rt_error(KERN_ERR_UNSUPPORTED, "graph replay is not implemented yet");
}

void kern_graph_free(kern_graph *g) { (void)g; }

kern_array *kern_array_from_dlpack(struct DLManagedTensor *t) {
  rt_error(t ? KERN_ERR_UNSUPPORTED : KERN_ERR_INVALID_ARGUMENT,
           t ? "kern_array_from_dlpack is not implemented yet" : "kern_array_from_dlpack: tensor is NULL");
  return NULL;
}

struct DLManagedTensor *kern_array_to_dlpack(kern_array *a) {
  rt_error(a ? KERN_ERR_UNSUPPORTED : KERN_ERR_INVALID_ARGUMENT,
           a ? "kern_array_to_dlpack is not implemented yet" : "kern_array_to_dlpack: array is NULL");
  return NULL;
}
