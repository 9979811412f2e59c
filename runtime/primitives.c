/* primitives.c: kern_array_sum, _min, _max and _scan, written in kern with
 * tiles.
 *
 * Requires: kern_module_from_source and kern_launch (the public API: the
 * primitives are kern's own first users and run through the same checks,
 * capture and compile-and-cache path as any launch), rt_array_scratch.
 * Produces: the four entry points, and for every primitive written in kern
 * (prims.h; sort.c is the other) the templates' instantiation and module
 * slots. The kern text of each (primitive, input dtype, accumulator dtype)
 * is a template below, made into a module on its first use (under a lock;
 * found afterwards without it) and kept until kern_shutdown; each device
 * compiles it on its first launch there.
 * Breaks: every pass reduces aligned chunks of CHUNK elements (a power of
 * two: one subtree of the pairwise tree), and the chunk results are reduced
 * again by the same kernel, so the whole array follows one tree whatever the
 * device, block size or thread count. Elements past the end read as the
 * operation's identity, chosen so that combining with it changes no bit:
 * -0.0 for float sums (x + -0.0 is x, -0.0 included), NaN for min and max
 * (which ignore a NaN operand), the type's extreme for integers. A scan adds
 * to each chunk's in-chunk prefixes the exclusive scan of the chunk sums,
 * computed by the same scan one level up, which is exactly the documented
 * fold of the blocks of i's binary digits, largest first.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prims.h"
#include "buf.h"
#include "fork.h"

typedef enum { P_SUM, P_MIN, P_MAX, P_SCAN, P_COUNT } prim;

static const char *const prim_names[P_COUNT] = {"kern_array_sum", "kern_array_min",
                                                "kern_array_max", "kern_array_scan"};

/* @I@ input type, @A@ accumulator type, @C@ chunk, @OP@ sum/min/max, @CVT@
 * the conversion to @A@ (nothing when the types are the same: no copy). */
static const char reduce_src[] =
    "kernel void reduce(@I@[] x, @A@[] out, @I@ fill) {\n"
    "  int b = tid();\n"
    "  out[b] = tile_@OP@(@CVT@(tile_load<@C@>(x, int64(b) * @C@, fill)));\n"
    "}\n";

static const char scan_src[] =
    "@A@ add(@A@ a, @A@ b) { return @A@(a + b); }\n"
    "kernel void sums(@I@[] x, @A@[] p) {\n"
    "  int b = tid();\n"
    "  p[b] = tile_sum(@CVT@(tile_load<@C@>(x, int64(b) * @C@)));\n"
    "}\n"
    "kernel void down(@I@[] x, @A@[] y, @A@[] e, bool inclusive, @A@ ident) {\n"
    "  int b = tid();\n"
    "  tile<@A@, @C@> t = @CVT@(tile_load<@C@>(x, int64(b) * @C@));\n"
    "  @A@ init = b == 0 ? ident : e[b];\n"
    "  tile<@A@, @C@> s = tile_scan_exclusive(add, t, init);\n"
    "  if (inclusive) {\n"
    "    tile_store(y, int64(b) * @C@, s + t);\n"
    "  } else {\n"
    "    if (b == 0) s = tile_where(tile_arange<int, @C@>() == 0, @A@(0), s);\n"
    "    tile_store(y, int64(b) * @C@, s);\n"
    "  }\n"
    "}\n";

static _Atomic(kern_module *) modules[P_COUNT][KERN_FLOAT64 + 1][KERN_FLOAT64 + 1];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&mu, NULL, FORK_RANK_PRIMS)

/* ---- dtypes ------------------------------------------------------------------------- */

static bool is_float(kern_dtype t) { return t == KERN_FLOAT32 || t == KERN_FLOAT64; }
static bool is_signed(kern_dtype t) { return t >= KERN_INT8 && t <= KERN_INT64; }
static bool supported(kern_dtype t) { return (t >= KERN_INT8 && t <= KERN_UINT64) || is_float(t); }

/* The accumulator wider than t of the same kind. */
static kern_dtype wide(kern_dtype t) {
  return is_float(t) ? KERN_FLOAT64 : is_signed(t) ? KERN_INT64 : KERN_UINT64;
}

/* A power of two. A scan's instance keeps its chunk, the tile scan's tree
 * and any conversion inside 48 KiB of a GPU block's shared memory. A
 * reduction of 4- or 8-byte elements into their own type reads its leaves
 * straight from memory on a GPU (no tile in shared memory, a batch of reads
 * in flight per thread): chunks of 64 KiB, so 256M floats take two passes
 * (three with chunks of 4096: 0.269 against 0.260 ms on an H200); the other
 * reductions keep their tile in shared memory, in chunks of 16 KiB. */
static int64_t chunk_of(prim p, kern_dtype in, kern_dtype acc) {
  int64_t a = (int64_t)kern_dtype_size(acc);
  if (p == P_SCAN) return a == 8 ? 1024 : 2048;
  return (in == acc && a >= 4 ? 65536 : 16384) / a;
}

/* The identity of p's combine for dtype t, as t's bytes. */
static void identity(prim p, kern_dtype t, void *out) {
  size_t size = kern_dtype_size(t);
  if (p == P_SUM || p == P_SCAN) {
    memset(out, 0, size);
    if (t == KERN_FLOAT32) *(float *)out = -0.0f;
    if (t == KERN_FLOAT64) *(double *)out = -0.0;
    return;
  }
  if (t == KERN_FLOAT32) {
    *(float *)out = NAN;
    return;
  }
  if (t == KERN_FLOAT64) {
    *(double *)out = NAN;
    return;
  }
  uint64_t bits = size == 8 ? ~0ull : (1ull << (8 * size)) - 1; /* unsigned max */
  if (is_signed(t)) bits >>= 1;                                 /* signed max */
  if (p == P_MAX) bits = is_signed(t) ? ~bits : 0;              /* signed min, 0 */
  memcpy(out, &bits, size);                                     /* little-endian: the low bytes */
}

/* ---- modules -------------------------------------------------------------------------- */

static void free_modules(void) {
  for (int p = 0; p < P_COUNT; p++)
    for (int i = 0; i <= KERN_FLOAT64; i++)
      for (int a = 0; a <= KERN_FLOAT64; a++)
        kern_module_free(atomic_exchange(&modules[p][i][a], NULL));
}

char *rt_prims_instantiate(const char *tmpl, int n, const char *const *keys,
                           const char *const *vals) {
  Buf b = {0};
  for (const char *s = tmpl; *s;) {
    int k = 0;
    while (k < n && strncmp(s, keys[k], strlen(keys[k]))) k++;
    if (k < n) {
      buf_puts(&b, vals[k]);
      s += strlen(keys[k]);
    } else {
      buf_add(&b, s++, 1);
    }
  }
  if (b.oom) {
    free(b.s);
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory writing a primitive's source");
    return NULL;
  }
  return b.s;
}

kern_module *rt_prims_module(_Atomic(kern_module *) *slot, const char *name,
                             char *(*src)(const void *ctx), const void *ctx,
                             void (*setup)(kern_module *), void (*release)(void)) {
  kern_module *m = atomic_load_explicit(slot, memory_order_acquire);
  if (m) return m;
  pthread_mutex_lock(&mu);
  m = atomic_load_explicit(slot, memory_order_relaxed);
  char *text = m ? NULL : src(ctx);
  if (text && (m = kern_module_from_source(name, text))) {
    if (setup) setup(m);
    rt_at_shutdown(release);
    atomic_store_explicit(slot, m, memory_order_release);
  }
  free(text);
  pthread_mutex_unlock(&mu);
  return m;
}

kern_status rt_prims_launch(kern_kernel *k, kern_device *d, int64_t n, int nargs,
                            const kern_arg *args) {
  return kern_launch(k, d, (kern_dims){1, {n, 1, 1, 1}}, nargs, args);
}

/* tmpl with @I@, @A@, @C@, @OP@ and @CVT@ replaced. */
static char *instantiate(const char *tmpl, prim p, kern_dtype in, kern_dtype acc) {
  static const char *const ops[] = {"sum", "min", "max", "sum"};
  char chunk[24];
  snprintf(chunk, sizeof chunk, "%lld", (long long)chunk_of(p, in, acc));
  const char *keys[] = {"@I@", "@A@", "@C@", "@OP@", "@CVT@"};
  const char *vals[] = {kern_dtype_name(in), kern_dtype_name(acc), chunk, ops[p],
                        in == acc ? "" : kern_dtype_name(acc)};
  return rt_prims_instantiate(tmpl, 5, keys, vals);
}

typedef struct Which {
  prim p;
  kern_dtype in, acc;
} Which;

static char *source(const void *ctx) {
  const Which *w = ctx;
  return instantiate(w->p == P_SCAN ? scan_src : reduce_src, w->p, w->in, w->acc);
}

/* A scan's kernels run 128 threads an instance on a GPU: 16 elements of a
 * 2048-element chunk a thread (8 of a 1024-element one) in registers; on an
 * H200 the scan took 0.97 ms at 128 against 1.10 at the default 256. */
static void scan_setup(kern_module *m) {
  kern_kernel_set_tile_block(kern_module_kernel(m, "sums"), 128);
  kern_kernel_set_tile_block(kern_module_kernel(m, "down"), 128);
}

/* The module of (p, in, acc), made on first use; NULL with the error set. */
static kern_module *module_for(prim p, kern_dtype in, kern_dtype acc) {
  char name[96];
  snprintf(name, sizeof name, "<%s %s %s>", prim_names[p], kern_dtype_name(in),
           kern_dtype_name(acc));
  Which w = {p, in, acc};
  return rt_prims_module(&modules[p][in][acc], name, source, &w, p == P_SCAN ? scan_setup : NULL,
                         free_modules);
}

static kern_kernel *kernel_for(prim p, kern_dtype in, kern_dtype acc, const char *name) {
  kern_module *m = module_for(p, in, acc);
  return m ? kern_module_kernel(m, name) : NULL;
}

/* ---- checks ------------------------------------------------------------------------------ */

static kern_status check_in(const char *fn, const kern_array *in) {
  if (rt_ensure_init()) return KERN_ERR_INVALID_ARGUMENT;
  if (!in) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: in is NULL", fn);
  if (in->ndim != 1)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: in must be 1-D, got %d dims", fn, in->ndim);
  if (!supported(in->dtype))
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: in has dtype %s; expected an integer type or float32 or float64", fn,
                   kern_dtype_name(in->dtype));
  return KERN_OK;
}

static kern_status check_out(const char *fn, const kern_array *in, const kern_array *out,
                             int64_t size) {
  if (!out) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  if (out->device != in->device)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: out is on %s but in is on %s", fn,
                   out->device->name, in->device->name);
  if (out->dtype != in->dtype && out->dtype != wide(in->dtype))
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: out has dtype %s; expected in's dtype %s or %s (the wider accumulator)", fn,
                   kern_dtype_name(out->dtype), kern_dtype_name(in->dtype),
                   kern_dtype_name(wide(in->dtype)));
  if (out->ndim != 1 || out->shape[0] != size)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: out must be 1-D with %lld element%s, got %d dims of size %lld", fn,
                   (long long)size, size == 1 ? "" : "s", out->ndim,
                   (long long)kern_array_size(out));
  return KERN_OK;
}

/* ---- reductions ---------------------------------------------------------------------------- */

static int64_t chunks(int64_t n, int64_t c) { return (n + c - 1) / c; }

/* out[0] = p over in's n elements (in dtype `in`, accumulated as `acc`). */
static kern_status reduce(prim p, const kern_array *in, kern_array *out, kern_dtype acc) {
  kern_device *d = in->device;
  int64_t n = in->shape[0], c = chunk_of(p, in->dtype, acc), nb = chunks(n, c);
  kern_kernel *k = kernel_for(p, in->dtype, acc, "reduce");
  if (!k) return kern_last_status();
  unsigned char fill[8];
  identity(p, in->dtype, fill);
  kern_array *part = nb > 1 ? rt_array_scratch(d, acc, nb) : out;
  if (!part) return kern_last_status();
  kern_arg args[] = {kern_arg_array((kern_array *)in), kern_arg_array(part),
                     kern_arg_bytes(in->dtype, fill)};
  kern_status st = rt_prims_launch(k, d, nb, 3, args);
  if (!st && nb > 1) st = reduce(p, part, out, acc);
  if (part != out) kern_array_free(part);
  return st;
}

static kern_status reduction(prim p, const kern_array *in, kern_array *out) {
  const char *fn = prim_names[p];
  kern_status st = check_in(fn, in);
  if (st || (st = check_out(fn, in, out, 1))) return st;
  if (in->shape[0] > 0) return reduce(p, in, out, out->dtype);
  if (p != P_SUM)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: in is empty (it has no %s)", fn,
                   p == P_MIN ? "least element" : "greatest element");
  uint64_t zero = 0;
  return kern_array_fill(out, &zero);
}

kern_status kern_array_sum(const kern_array *in, kern_array *out) {
  return reduction(P_SUM, in, out);
}
kern_status kern_array_min(const kern_array *in, kern_array *out) {
  return reduction(P_MIN, in, out);
}
kern_status kern_array_max(const kern_array *in, kern_array *out) {
  return reduction(P_MAX, in, out);
}

/* ---- scans ------------------------------------------------------------------------------------ */

/* out = the scan of in (n > 0 elements), accumulated as out's dtype. */
static kern_status scan(const kern_array *in, kern_array *out, bool inclusive) {
  kern_device *d = in->device;
  kern_dtype acc = out->dtype;
  int64_t n = in->shape[0], c = chunk_of(P_SCAN, in->dtype, acc), nb = chunks(n, c);
  kern_kernel *sums = kernel_for(P_SCAN, in->dtype, acc, "sums");
  kern_kernel *down = sums ? kernel_for(P_SCAN, in->dtype, acc, "down") : NULL;
  if (!down) return kern_last_status();
  kern_array *part = NULL, *pre = NULL;
  kern_status st = KERN_OK;
  if (nb > 1) {
    if (!(part = rt_array_scratch(d, acc, nb)) || !(pre = rt_array_scratch(d, acc, nb))) {
      kern_array_free(part);
      return kern_last_status();
    }
    kern_arg a[] = {kern_arg_array((kern_array *)in), kern_arg_array(part)};
    st = rt_prims_launch(sums, d, nb, 2, a);
    if (!st) st = scan(part, pre, false);
  }
  unsigned char ident[8];
  identity(P_SCAN, acc, ident);
  kern_arg a[] = {kern_arg_array((kern_array *)in), kern_arg_array(out),
                  kern_arg_array(pre ? pre : out), kern_arg_bool(inclusive),
                  kern_arg_bytes(acc, ident)};
  if (!st) st = rt_prims_launch(down, d, nb, 5, a);
  kern_array_free(part);
  kern_array_free(pre);
  return st;
}

kern_status kern_array_scan(const kern_array *in, kern_array *out, bool inclusive) {
  const char *fn = "kern_array_scan";
  kern_status st = check_in(fn, in);
  if (st || (st = check_out(fn, in, out, in->shape[0]))) return st;
  if (out->dtype != in->dtype && rt_array_overlap(in, out))
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: out overlaps in with another dtype (%s, %s); in place, out must be in", fn,
                   kern_dtype_name(out->dtype), kern_dtype_name(in->dtype));
  if (out->dtype == in->dtype && rt_array_overlap(in, out) &&
      (out->data != in->data || out->strides[0] != in->strides[0]))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: out overlaps in without being the same elements",
                   fn);
  return in->shape[0] ? scan(in, out, inclusive) : KERN_OK;
}

/* ---- for tests ---------------------------------------------------------------------------------- */

char *rt_prims_source(int p, kern_dtype in, kern_dtype acc) {
  return instantiate(p == P_SCAN ? scan_src : reduce_src, (prim)p, in, acc);
}

kern_kernel *rt_prims_kernel(int p, kern_dtype in, kern_dtype acc, const char *name) {
  return kernel_for((prim)p, in, acc, name);
}
