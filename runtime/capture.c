/* capture.c: graph capture and replay, the same rules on every device: the
 * recorder behind rt_submit (core.h).
 *
 * Requires: a device's rt_graph_ops (CUDA: stream capture in
 * runtime/cuda/cuda_capture.c) or none (the CPU: recorded here); storage.c's
 * references; exec.c to run what is let through and to replay. Produces:
 * kern_capture_*, kern_graph_*, and rt_capture_submit, which decides for each
 * operation submitted while a capture is open whether it is recorded, let
 * through to the capturing stream, refused, or run as usual. A CUDA capture
 * takes every thread's work on the device (its current stream is shared); a
 * CPU capture only its owner's: other threads' work runs as usual, and a
 * KERN_CAPTURE_GLOBAL capture refuses their unsafe calls (rt_capture_records
 * and rt_capture_restricts in backend.h).
 * Breaks: a refused operation has no effect and leaves the capture open and
 * valid (it is refused before any driver call). A graph holds a reference to
 * the memory of every array it uses, so freeing an array after capture cannot
 * make a replay touch freed memory; CUDA pool memory allocated by the capture
 * itself belongs to the graph (allocation nodes) and is not held. Frees that
 * a capture cannot record wait in a list until no capture blocks them. One
 * mutex guards all capture state; the launch path only takes it while some
 * capture is open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "fork.h"

enum { MAX_DEPTH = 8 };

typedef enum { OP_LAUNCH, OP_COPY, OP_FILL, OP_IF, OP_WHILE, OP_END } op_kind;

/* One recorded operation of a software graph. */
typedef struct cap_op {
  op_kind kind;
  rt_launch L;          /* LAUNCH: L.args points at bytes; ctx.err is set per replay */
  bool debug;           /* LAUNCH: the module checks bounds */
  kern_array a, b;      /* COPY: dst, src; FILL: the array; IF, WHILE: the flag */
  unsigned char *bytes; /* LAUNCH: the args block; FILL: one element */
  size_t jump;          /* IF, WHILE: index of the END; END: index of the IF or WHILE */
} cap_op;

typedef struct hold_list {
  struct rt_storage **v;
  size_t n, cap;
} hold_list;

struct kern_graph {
  kern_device *device;
  cap_op *ops; /* software graphs */
  size_t nops, capops;
  hold_list holds; /* memory the graph uses */
  void *exec;      /* backend graphs */
  bool oom;        /* recording ran out of memory */
};

typedef struct capture {
  uint64_t id; /* 0: none open */
  pthread_t owner;
  kern_graph *g;          /* what is recorded so far */
  void *cap;              /* the backend's capture */
  size_t open[MAX_DEPTH]; /* software: index of each open IF / WHILE */
  bool open_while[MAX_DEPTH];
  int depth;
} capture;

typedef struct deferred {
  struct rt_storage *s;
  kern_device *dev;
  uint64_t alloc;
  kern_memory_kind kind;
} deferred;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&mu, NULL, FORK_RANK_CAPTURE)
/* caps[i].id is also device i's `capture` field, which others read without mu. */
static capture caps[RT_MAX_DEVICES];
_Atomic int rt_captures_open;
static _Atomic int ncuda_open; /* backend (CUDA) captures */
static uint64_t last_id;
static deferred *waiting; /* frees blocked by a capture */
static size_t nwaiting, capwaiting;

static const rt_graph_ops *graph_ops(const kern_device *d) { return d->ops->graph; }

/* ---- state queries -------------------------------------------------------------- */

bool kern_capture_is_active(const kern_device *d) { return rt_capture_active(d); }

static bool any_cuda_capture(void) { return atomic_load(&ncuda_open) > 0; }

/* ---- graphs ------------------------------------------------------------------------ */

/* Keeps the array's memory alive for the graph. Room comes first, so a
 * failure never has to drop a reference (a last release under mu would
 * deadlock in rt_capture_defer_free). `own`: the capture id whose own pool
 * allocations are not held (0: hold everything). Under mu. */
static void hold(kern_graph *g, const kern_array *a, uint64_t own) {
  hold_list *h = &g->holds;
  if (h->n == h->cap) {
    size_t cap = h->cap ? 2 * h->cap : 16;
    struct rt_storage **v = realloc(h->v, cap * sizeof *v);
    if (!v) {
      g->oom = true;
      return;
    }
    h->v = v, h->cap = cap;
  }
  struct rt_storage *s = rt_array_hold(a, own);
  if (s) h->v[h->n++] = s;
}

static void release_holds(hold_list *h) {
  for (size_t i = 0; i < h->n; i++) rt_storage_release(h->v[i]);
  free(h->v);
  memset(h, 0, sizeof *h);
}

static void free_ops(cap_op *ops, size_t n) {
  for (size_t i = 0; i < n; i++) free(ops[i].bytes);
  free(ops);
}

static void graph_destroy(kern_graph *g) {
  if (g->exec) graph_ops(g->device)->exec_free(g->device, g->exec);
  free_ops(g->ops, g->nops);
  release_holds(&g->holds);
  free(g);
}

/* A new zeroed op at the end, or NULL (the graph is marked out of memory). */
static cap_op *add_op(kern_graph *g, op_kind kind) {
  if (g->nops == g->capops) {
    size_t cap = g->capops ? 2 * g->capops : 32;
    cap_op *v = realloc(g->ops, cap * sizeof *v);
    if (!v) {
      g->oom = true;
      return NULL;
    }
    g->ops = v, g->capops = cap;
  }
  cap_op *op = &g->ops[g->nops++];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  return op;
}

/* ---- frees that wait for a capture ------------------------------------------------- */

/* A free during a CUDA capture can be recorded only for pool memory that
 * capture allocated (outside conditional bodies); cuMemFree and
 * cuMemFreeHost are unsafe while a capture is open. Called under mu. */
static bool free_blocked(kern_device *dev, uint64_t alloc, kern_memory_kind kind) {
  if (kind == KERN_MEM_PINNED_HOST && any_cuda_capture()) return true;
  const capture *c = &caps[dev->index];
  if (!c->id || !graph_ops(dev)) return false;
  return !(kind == KERN_MEM_CUDA_MEMPOOL && alloc == c->id && c->depth == 0);
}

bool rt_capture_defer_free(struct rt_storage *s, kern_device *dev, uint64_t alloc,
                           kern_memory_kind kind) {
  if (atomic_load(&rt_captures_open) == 0) return false;
  pthread_mutex_lock(&mu);
  bool defer = free_blocked(dev, alloc, kind);
  if (defer && nwaiting == capwaiting) {
    size_t cap = capwaiting ? 2 * capwaiting : 16;
    deferred *v = realloc(waiting, cap * sizeof *v);
    if (v)
      waiting = v, capwaiting = cap;
    else
      defer = false; /* cannot remember it: freeing now is the lesser evil */
  }
  if (defer) waiting[nwaiting++] = (deferred){s, dev, alloc, kind};
  pthread_mutex_unlock(&mu);
  return defer;
}

/* After a capture closes: frees no capture blocks any more. */
static void flush_waiting(void) {
  for (;;) {
    struct rt_storage *s = NULL;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nwaiting && !s; i++)
      if (!free_blocked(waiting[i].dev, waiting[i].alloc, waiting[i].kind)) {
        s = waiting[i].s;
        waiting[i] = waiting[--nwaiting];
      }
    pthread_mutex_unlock(&mu);
    if (!s) return;
    rt_storage_destroy(s);
  }
}

/* ---- begin / end -------------------------------------------------------------------- */

static const char *who(const capture *c) {
  return pthread_equal(c->owner, pthread_self()) ? "this thread" : "another thread";
}

/* The open capture of d for a structural call from its owner, or NULL + error. Under mu. */
static capture *owned(kern_device *d, const char *fn, kern_status *st) {
  capture *c = &caps[d->index];
  if (!c->id)
    *st = err_set(KERN_ERR_CAPTURE, "%s: no capture is open on %s (call kern_capture_begin first)",
                  fn, d->name);
  else if (!pthread_equal(c->owner, pthread_self()))
    *st = err_set(
        KERN_ERR_CAPTURE,
        "%s: the capture on %s was begun by another thread and must be ended there; nothing changed",
        fn, d->name);
  else
    return c;
  return NULL;
}

kern_status kern_capture_begin(kern_device *d) {
  return kern_capture_begin_mode(d, KERN_CAPTURE_GLOBAL);
}

kern_status kern_capture_begin_mode(kern_device *d, kern_capture_mode mode) {
  if (!d) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_capture_begin: device is NULL");
  if ((unsigned)mode > KERN_CAPTURE_RELAXED)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_capture_begin_mode: unknown mode %d",
                   (int)mode);
  kern_status st = rt_ensure_init();
  if (st) return st;
  pthread_mutex_lock(&mu);
  capture *c = &caps[d->index];
  kern_graph *g = NULL;
  if (c->id)
    st = err_set(KERN_ERR_CAPTURE,
                 "kern_capture_begin: a capture is already open on %s (begun by %s); "
                 "captures do not nest: end or abort it first",
                 d->name, who(c));
  else if (!(g = calloc(1, sizeof *g)))
    st = err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory starting a capture");
  void *cap = NULL;
  if (!st && graph_ops(d)) st = graph_ops(d)->begin(d, mode, &cap);
  if (!st) {
    g->device = d;
    *c = (capture){.id = ++last_id, .owner = pthread_self(), .g = g, .cap = cap};
    atomic_store(&d->capture_owner, rt_thread_token()); /* before the id: readers load it first */
    atomic_store(&d->capture_mode, (int)mode);
    atomic_store(&d->capture, c->id);
    atomic_fetch_add(&rt_captures_open, 1);
    if (graph_ops(d)) atomic_fetch_add(&ncuda_open, 1);
  } else {
    free(g);
  }
  pthread_mutex_unlock(&mu);
  return st;
}

/* Closes the capture record (under mu); the caller finishes the backend side. */
static capture detach(kern_device *d) {
  capture *c = &caps[d->index], old = *c;
  memset(c, 0, sizeof *c);
  atomic_store(&d->capture, 0);
  atomic_fetch_sub(&rt_captures_open, 1);
  if (graph_ops(d)) atomic_fetch_sub(&ncuda_open, 1);
  return old;
}

/* Structural checks shared by end, end_update and abort; detaches on success. */
static kern_status close_capture(kern_device *d, const char *fn, bool allow_open_blocks,
                                 capture *out) {
  kern_status st = KERN_OK;
  pthread_mutex_lock(&mu);
  capture *c = owned(d, fn, &st);
  if (c && c->depth > 0 && !allow_open_blocks)
    st = err_set(KERN_ERR_CAPTURE,
                 "%s: %d conditional block%s still open on %s (close %s with %s first)", fn,
                 c->depth, c->depth == 1 ? " is" : "s are", d->name, c->depth == 1 ? "it" : "them",
                 c->open_while[c->depth - 1] ? "kern_capture_end_while" : "kern_capture_end_if");
  if (c && !st) *out = detach(d);
  pthread_mutex_unlock(&mu);
  return st;
}

static kern_status check_recorded(const kern_graph *g, const char *fn) {
  if (g->oom)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "%s: out of memory while recording the capture", fn);
  return KERN_OK;
}

kern_status kern_capture_end(kern_device *d, kern_graph **out) {
  if (out) *out = NULL;
  if (!d || !out)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_capture_end: %s is NULL", d ? "out" : "device");
  capture c;
  kern_status st = close_capture(d, "kern_capture_end", false, &c);
  if (st) return st;
  if (graph_ops(d)) st = graph_ops(d)->end(d, c.cap, &c.g->exec, NULL);
  if (!st) st = check_recorded(c.g, "kern_capture_end");
  flush_waiting();
  if (st) {
    graph_destroy(c.g);
    return st;
  }
  *out = c.g;
  return KERN_OK;
}

kern_status kern_capture_abort(kern_device *d) {
  if (!d) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_capture_abort: device is NULL");
  capture c;
  kern_status st = close_capture(d, "kern_capture_abort", true, &c);
  if (st) return st;
  if (graph_ops(d)) graph_ops(d)->abort(d, c.cap);
  graph_destroy(c.g);
  flush_waiting();
  return KERN_OK;
}

/* ---- update ------------------------------------------------------------------------------ */

/* Same operations in the same order (software graphs): what CUDA can update. */
static bool same_shape(const kern_graph *a, const kern_graph *b) {
  if (a->nops != b->nops) return false;
  for (size_t i = 0; i < a->nops; i++) {
    const cap_op *x = &a->ops[i], *y = &b->ops[i];
    if (x->kind != y->kind || x->jump != y->jump) return false;
    if (x->kind == OP_LAUNCH && x->L.kernel != y->L.kernel) return false;
  }
  return true;
}

/* g takes n's contents; n's shell and g's old contents go. */
static void adopt(kern_graph *g, kern_graph *n) {
  cap_op *ops = g->ops;
  size_t nops = g->nops;
  hold_list old = g->holds;
  g->ops = n->ops, g->nops = n->nops, g->capops = n->capops;
  g->holds = n->holds;
  free_ops(ops, nops);
  release_holds(&old);
  free(n);
}

kern_status kern_capture_end_update(kern_device *d, kern_graph *g, bool *updated) {
  const char *fn = "kern_capture_end_update";
  if (updated) *updated = false;
  if (!d || !g)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, d ? "graph" : "device");
  if (g->device != d)
    return err_set(KERN_ERR_CAPTURE, "%s: the graph was captured on %s, not %s; nothing changed",
                   fn, g->device->name, d->name);
  capture c;
  kern_status st = close_capture(d, fn, false, &c);
  if (st) return st;
  bool up = false;
  if (graph_ops(d)) {
    void *exec = g->exec;
    st = check_recorded(c.g, fn);
    if (st)
      graph_ops(d)->abort(d, c.cap);
    else
      st = graph_ops(d)->end(d, c.cap, &exec, &up);
    if (!st) g->exec = exec;
  } else {
    st = check_recorded(c.g, fn);
    up = !st && same_shape(g, c.g);
  }
  flush_waiting();
  if (st) {
    graph_destroy(c.g);
    return st;
  }
  adopt(g, c.g);
  if (updated) *updated = up;
  return KERN_OK;
}

/* ---- conditional blocks ------------------------------------------------------------------ */

static kern_status check_flag(kern_device *d, const kern_array *f, const char *fn) {
  if (!d || !f)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, d ? "flag" : "device");
  int64_t size = f->elem_size ? (int64_t)(f->nbytes / f->elem_size) : 0;
  if (f->dtype != KERN_INT32 || size != 1)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: the flag must be an int32 array of one element, got %s with "
                   "%lld elements",
                   fn, kern_dtype_name(f->dtype), (long long)size);
  if (f->device != d)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: the flag is an array of %s; it must live on the capturing "
                   "device %s",
                   fn, f->device->name, d->name);
  if (!graph_ops(d) && !rt_array_host_ok(f)) /* a software replay reads it from the host */
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: the flag is not host memory", fn);
  return KERN_OK;
}

static kern_status cond_begin(kern_device *d, kern_array *flag, bool is_while) {
  const char *fn = is_while ? "kern_capture_while" : "kern_capture_if";
  kern_status st = check_flag(d, flag, fn);
  if (st) return st;
  pthread_mutex_lock(&mu);
  capture *c = owned(d, fn, &st);
  if (c && c->depth == MAX_DEPTH)
    st = err_set(KERN_ERR_CAPTURE, "%s: conditional blocks nest at most %d deep", fn, MAX_DEPTH);
  if (c && !st && graph_ops(d)) {
    st = graph_ops(d)->cond_begin(d, c->cap, is_while, flag);
  } else if (c && !st) {
    cap_op *op = add_op(c->g, is_while ? OP_WHILE : OP_IF);
    if (!op)
      st = err_set(KERN_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    else
      op->a = *flag, c->open[c->depth] = c->g->nops - 1;
  }
  if (c && !st) {
    hold(c->g, flag, 0);
    c->open_while[c->depth++] = is_while;
  }
  pthread_mutex_unlock(&mu);
  return st;
}

static kern_status cond_end(kern_device *d, bool is_while) {
  const char *fn = is_while ? "kern_capture_end_while" : "kern_capture_end_if";
  if (!d) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: device is NULL", fn);
  kern_status st = KERN_OK;
  pthread_mutex_lock(&mu);
  capture *c = owned(d, fn, &st);
  if (c && c->depth == 0)
    st = err_set(KERN_ERR_CAPTURE, "%s: no conditional block is open on %s", fn, d->name);
  else if (c && c->open_while[c->depth - 1] != is_while)
    st = err_set(KERN_ERR_CAPTURE, "%s: the innermost open block on %s is a %s block", fn, d->name,
                 is_while ? "kern_capture_if" : "kern_capture_while");
  if (!c || st) {
    pthread_mutex_unlock(&mu);
    return st;
  }
  /* Past the checks the block closes even on failure (the capture then fails at end). */
  if (graph_ops(d)) {
    st = graph_ops(d)->cond_end(d, c->cap, is_while);
  } else {
    cap_op *op = add_op(c->g, OP_END);
    if (!op)
      st = err_set(KERN_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    else
      op->jump = c->open[c->depth - 1], c->g->ops[op->jump].jump = c->g->nops - 1;
  }
  c->depth--;
  pthread_mutex_unlock(&mu);
  return st;
}

kern_status kern_capture_if(kern_device *d, kern_array *flag) { return cond_begin(d, flag, false); }
kern_status kern_capture_while(kern_device *d, kern_array *flag) {
  return cond_begin(d, flag, true);
}
kern_status kern_capture_end_if(kern_device *d) { return cond_end(d, false); }
kern_status kern_capture_end_while(kern_device *d) { return cond_end(d, true); }

/* ---- launches ------------------------------------------------------------------------------- */

/* An uncaptured operation must not touch the memory of a capturing device:
 * it would run now, against memory the graph only changes when replayed. */
static kern_status check_foreign(const rt_launch *L, int nargs, const kern_arg *args) {
  for (int i = 0; i < nargs; i++) {
    const kern_array *a = args[i].kind == KERN_ARG_ARRAY ? args[i].array : NULL;
    if (a && a->device != L->device && rt_capture_records(a->device))
      return err_set(
          KERN_ERR_CAPTURE,
          "kern_launch of kernel '%s' on %s: parameter '%s' (#%d) is an array of %s, which is "
          "capturing a graph; the launch would run outside the capture (launch it on %s, or after "
          "kern_capture_end)",
          L->kernel->name, L->device->name, L->kernel->params[i].name, i + 1, a->device->name,
          a->device->name);
  }
  return KERN_OK;
}

static kern_status record_launch(kern_graph *g, const rt_launch *L) {
  cap_op *op = add_op(g, OP_LAUNCH);
  size_t n = (L->args_size + 15) & ~(size_t)15;
  if (op) op->bytes = aligned_alloc(16, n ? n : 16);
  if (!op || !op->bytes) {
    if (op) g->nops--;
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory recording a launch of kernel '%s'",
                   L->kernel->name);
  }
  memcpy(op->bytes, L->args, L->args_size);
  op->L = *L;
  op->L.args = op->bytes;
  op->L.ctx.err = NULL;
  op->debug = L->ctx.err != NULL;
  return KERN_OK;
}

static kern_status capture_launch(const rt_launch *L, int nargs, const kern_arg *args) {
  kern_device *d = L->device;
  kern_status st = check_foreign(L, nargs, args);
  if (st) return st;
  pthread_mutex_lock(&mu);
  capture *c = &caps[d->index];
  if (!c->id || !rt_capture_records(d)) { /* none, or another thread's CPU capture */
    pthread_mutex_unlock(&mu);
    return rt_exec_launch(L);
  }
  uint64_t own = graph_ops(d) ? c->id : 0;
  for (int i = 0; i < nargs; i++)
    if (args[i].kind == KERN_ARG_ARRAY) hold(c->g, args[i].array, own);
  if (!graph_ops(d)) st = record_launch(c->g, L);
  pthread_mutex_unlock(&mu);
  return graph_ops(d) ? rt_exec_launch(L) : st;
}

/* ---- array operations ----------------------------------------------------------------------------- */

/* cuMemAllocManaged is not stream-ordered: a graph cannot record it; and
 * only pool allocations outside conditional bodies can be captured. */
static kern_status check_alloc(kern_device *d, kern_allocator al) {
  if (al == KERN_ALLOC_CUDA_MANAGED && rt_capture_active(d))
    return err_set(
        KERN_ERR_CAPTURE,
        "cannot allocate CUDA managed memory on %s during graph capture: allocate managed arrays "
        "before kern_capture_begin",
        d->name);
  if (al == KERN_ALLOC_PINNED && any_cuda_capture())
    return err_set(
        KERN_ERR_CAPTURE,
        "cannot allocate pinned host memory while a CUDA device is capturing a "
        "graph (cuMemAllocHost is unsafe during capture): allocate it before kern_capture_begin");
  pthread_mutex_lock(&mu);
  const capture *c = &caps[d->index];
  kern_status st = KERN_OK;
  bool mine = c->id && rt_capture_records(d); /* else another thread's CPU capture, or none */
  if (c->id && !mine && rt_capture_restricts(d))
    st = rt_capture_refuse(d, "allocating an array");
  else if (mine && c->depth > 0)
    st = err_set(
        KERN_ERR_CAPTURE,
        "cannot allocate an array on %s inside a conditional block of a capture "
        "(CUDA conditional bodies cannot allocate): allocate it before kern_capture_if/while",
        d->name);
  else if (mine && graph_ops(d) && al != KERN_ALLOC_CUDA_MEMPOOL)
    st = err_set(
        KERN_ERR_CAPTURE,
        "cannot allocate %s memory on %s during graph capture: only memory-pool "
        "allocations can be captured; set KERN_ALLOC_CUDA_MEMPOOL with kern_device_set_allocator, or "
        "allocate before kern_capture_begin",
        al == KERN_ALLOC_CUDA_MANAGED ? "CUDA managed" : "CUDA device (cuMemAlloc)", d->name);
  pthread_mutex_unlock(&mu);
  return st;
}

/* The CPU zeroes a new array at allocation; a replay zeroes it again, as
 * the memset node CUDA records with a pool allocation does. */
static void capture_zeroed(kern_array *a) {
  if (!rt_capture_records(a->device) || graph_ops(a->device)) return;
  pthread_mutex_lock(&mu);
  capture *c = &caps[a->device->index];
  cap_op *op = c->id ? add_op(c->g, OP_FILL) : NULL;
  if (op && !(op->bytes = calloc(1, a->elem_size)))
    c->g->nops--, c->g->oom = true;
  else if (op)
    op->a = *a, hold(c->g, a, 0);
  pthread_mutex_unlock(&mu);
}

static kern_status host_access(const kern_array *a, const char *fn) {
  if (!rt_capture_restricts(a->device)) return KERN_OK;
  if (!rt_capture_records(a->device)) return rt_capture_refuse(a->device, fn);
  return err_set(
      KERN_ERR_CAPTURE,
      "%s of an array of %s during graph capture: the host cannot read or write "
      "the capturing device's arrays until kern_capture_end (nothing recorded has run yet); the "
      "capture is still open and usable",
      fn, a->device->name);
}

static kern_status copy_refused(const kern_array *dst, const kern_array *src, kern_device *d,
                                const char *why) {
  return err_set(KERN_ERR_CAPTURE,
                 "kern_array_copy from %s to %s during a graph capture on %s: %s; the capture "
                 "is still open and usable",
                 src->device->name, dst->device->name, d->name, why);
}

/* What a CUDA capture on d cannot record of a copy between device memory
 * (NULL: it can): the copy runs on d's stream and reaches the other side
 * directly, so d must have access to another GPU's memory; overlapping views
 * would go through host memory. */
static const char *cuda_copy_refusal(kern_device *d, kern_array *dst, const kern_array *src) {
  static _Thread_local char why[512];
  const kern_array *other = dst->device != d ? dst : src->device != d ? src : NULL;
  if (other && rt_capture_active(other->device))
    return "the other device is capturing a graph of its own, and a copy belongs to one capture";
  if (other && !kern_can_access(d, other)) {
    bool pool = other->kind == KERN_MEM_CUDA_MEMPOOL;
    snprintf(why, sizeof why,
             "the copy runs on %s and reaches %s memory of %s directly, which needs %s access: "
             "call %s(%s, %s, true) before kern_capture_begin",
             d->name, pool ? "memory-pool" : "the", other->device->name,
             pool ? "memory pool" : "peer",
             pool ? "kern_device_enable_mempool_access" : "kern_device_enable_peer_access",
             other->device->name, d->name);
    return why;
  }
  if (rt_array_overlap(dst, src))
    return "overlapping views are copied through host memory, which a capture cannot record";
  return NULL;
}

/* One side of the copy is on the capturing device d. Software capture: both
 * arrays host memory, and the destination d's, recorded. CUDA: a copy
 * between device memory (either side may be another GPU's) runs on d's
 * capturing stream, which records it; a host side would need a
 * synchronize. */
static kern_status capture_copy(capture *c, kern_device *d, kern_array *dst, const kern_array *src,
                                bool *taken) {
  bool dh = rt_array_host_ok(dst), sh = rt_array_host_ok(src);
  if (!graph_ops(d)) {
    *taken = true;
    if (dst->device != d)
      return copy_refused(dst, src, d,
                          "the destination's device would perform the copy outside the capture");
    if (!dh || !sh)
      return copy_refused(dst, src, d, "a CPU graph records copies between host memory only");
    cap_op *op = add_op(c->g, OP_COPY);
    if (!op) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory recording a copy");
    op->a = *dst, op->b = *src;
  } else if (dh || sh) {
    *taken = true;
    return copy_refused(dst, src, d,
                        "copies between host and device memory synchronize, which a capture cannot "
                        "record (copy before kern_capture_begin)");
  } else {
    const char *why = cuda_copy_refusal(d, dst, src);
    if (why) {
      *taken = true;
      return copy_refused(dst, src, d, why);
    }
  }
  uint64_t own = graph_ops(d) ? c->id : 0;
  hold(c->g, dst, own);
  hold(c->g, src, own);
  return KERN_OK;
}

/* True when the recorder took the copy (recorded or refused: *st says);
 * otherwise it runs now, on *via when a CUDA capture records it. */
static bool take_copy(kern_array *dst, const kern_array *src, kern_device **via, kern_status *st) {
  *st = KERN_OK;
  *via = NULL;
  bool taken = false;
  pthread_mutex_lock(&mu);
  kern_device *d = rt_capture_records(dst->device)   ? dst->device
                   : rt_capture_records(src->device) ? (kern_device *)src->device
                                                     : NULL;
  if (d) *st = capture_copy(&caps[d->index], d, dst, src, &taken);
  if (d && graph_ops(d)) *via = d;
  pthread_mutex_unlock(&mu);
  return taken || *st;
}

static kern_status submit_copy(const rt_op *op) {
  kern_status st;
  rt_op run = *op;
  if (take_copy(op->dst, op->src, &run.device, &st)) return st;
  return rt_exec(&run);
}

static kern_status capture_fill(capture *c, kern_device *d, kern_array *a, const void *value) {
  if (graph_ops(d)) {
    if (rt_array_host_ok(a) || !rt_array_dense(a))
      return err_set(KERN_ERR_CAPTURE,
                     "kern_array_fill during a graph capture on %s: only dense arrays in device "
                     "memory can be filled inside a capture",
                     d->name);
    kern_status st = graph_ops(d)->fill(d, c->cap, a, value);
    if (!st) hold(c->g, a, c->id);
    return st;
  }
  cap_op *op = add_op(c->g, OP_FILL);
  if (op && !(op->bytes = malloc(a->elem_size))) c->g->nops--, op = NULL;
  if (!op) return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory recording a fill");
  memcpy(op->bytes, value, a->elem_size);
  op->a = *a;
  hold(c->g, a, 0);
  return KERN_OK;
}

static bool take_fill(kern_array *a, const void *value, kern_status *st) {
  *st = KERN_OK;
  if (!rt_capture_records(a->device)) return false;
  pthread_mutex_lock(&mu);
  capture *c = &caps[a->device->index];
  bool taken = c->id != 0 && rt_capture_records(a->device);
  if (taken) *st = capture_fill(c, a->device, a, value);
  pthread_mutex_unlock(&mu);
  return taken;
}

kern_status rt_capture_submit(const rt_op *op) {
  kern_status st = KERN_OK;
  switch (op->kind) {
    case RT_OP_LAUNCH: return capture_launch(op->launch, op->nargs, op->args);
    case RT_OP_COPY: return submit_copy(op);
    case RT_OP_FILL: return take_fill(op->dst, op->value, &st) ? st : rt_exec(op);
    case RT_OP_ZEROED: capture_zeroed(op->dst); return KERN_OK;
    case RT_OP_ALLOC: return check_alloc(op->device, op->allocator);
    case RT_OP_READ: st = host_access(op->src, "kern_array_read"); break;
    case RT_OP_WRITE: st = host_access(op->dst, "kern_array_write"); break;
  }
  return st ? st : rt_exec(op);
}

/* ---- replay ---------------------------------------------------------------------------------- */

static kern_status replay_launch(const cap_op *op) {
  rt_launch L = op->L;
  kn_error rec;
  if (op->debug) L.ctx.err = &rec;
  return rt_exec_launch(&L);
}

static bool flag_set(const kern_array *f) {
  int32_t v;
  memcpy(&v, f->data, sizeof v);
  return v != 0;
}

/* Runs the ops in order; a failing one stops the replay with its status. */
static kern_status replay(const kern_graph *g) {
  size_t pc = 0;
  while (pc < g->nops) {
    const cap_op *op = &g->ops[pc];
    kern_array x = op->a, y = op->b;
    kern_status st = KERN_OK;
    switch (op->kind) {
      case OP_LAUNCH: st = replay_launch(op); break;
      case OP_COPY: st = rt_exec(&(rt_op){.kind = RT_OP_COPY, .dst = &x, .src = &y}); break;
      case OP_FILL:
        st = rt_exec(&(rt_op){.kind = RT_OP_FILL, .dst = &x, .value = op->bytes});
        break;
      case OP_IF:
      case OP_WHILE:
        if (!flag_set(&op->a)) pc = op->jump; /* past the END below */
        break;
      case OP_END:
        if (g->ops[op->jump].kind == OP_WHILE) {
          pc = op->jump; /* test the flag again */
          continue;
        }
        break;
    }
    if (st) return st;
    pc++;
  }
  return KERN_OK;
}

kern_status kern_graph_launch(kern_graph *g) {
  if (!g) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_graph_launch: graph is NULL");
  kern_device *d = g->device;
  if (rt_capture_records(d)) /* another thread's CPU capture does not record a replay */
    return err_set(KERN_ERR_CAPTURE,
                   "kern_graph_launch: %s is capturing a graph; replay this graph before "
                   "kern_capture_begin or after kern_capture_end",
                   d->name);
  if (!graph_ops(d)) return replay(g);
  const kern_kernel *failed = NULL;
  kn_error rec;
  kern_status st = graph_ops(d)->launch(d, g->exec, &failed, &rec);
  return !st && failed ? rt_debug_error(failed, &rec) : st;
}

kern_device *kern_graph_device(const kern_graph *g) { return g ? g->device : NULL; }

void kern_graph_free(kern_graph *g) {
  if (g) graph_destroy(g);
}
