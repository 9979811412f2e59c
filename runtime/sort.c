/* sort.c: kern_array_sort, a stable LSD radix sort written in kern.
 *
 * Requires: the kernels of runtime/kern/sort.kern.in (a template, built into
 * the library as the string rt_kern_sort by cmake/embed_stdlib.cmake; it says
 * how the passes work), the primitives' module slots and kern_array_scan
 * (prims.h), kern_launch, rt_array_scratch and rt_array_as.
 * Produces: kern_array_sort. A module per (key word, value word) is made on
 * first use and kept until kern_shutdown; each device compiles it on its
 * first use there.
 * Breaks: the keys are sorted as unsigned words of their size (signed and
 * float keys through an order-preserving map inside the kernels), so the
 * sort moves bits and nothing else: the same result on every device. GPUs
 * run the tiled passes (4-bit digits); the CPU runs passes of its own over
 * 8-bit digits, a chunk of keys per launch index (half the passes, each a
 * plain counting sort in one core's cache); tests run the tiled ones on the
 * CPU too (rt_sort_tiles_on_cpu). Values of 1, 2, 4 or 8 bytes move with the
 * keys in every pass, as words of their size; wider ones (or ones not
 * aligned to their size) are permuted once at the end, through the keys'
 * places in the input, which the passes carry instead. Everything is
 * allocated, and the modules compiled for the device, before the first
 * launch, so a failure there leaves the arrays as they were.
 */
#include <stdio.h>
#include <stdlib.h>

#include "prims.h"

extern const char rt_kern_sort[];

/* The kern side's chunk (C) of R rows of S keys, and its 4-bit digits; the
 * CPU's passes' smallest chunk. */
enum { ROWS = 512, ROW = 16, CHUNK = ROWS * ROW, DIGITS = 16, DIGIT_BITS = 4, CPU_CHUNK = 4096 };

/* For tests: the CPU runs the tiled passes too (rt_sort_tiles_on_cpu). */
static _Atomic bool tiles_on_cpu;

static const char fn[] = "kern_array_sort";

/* ---- modules ------------------------------------------------------------------------------- */

static _Atomic(kern_module *) slots[2][4]; /* [key word 4, 8][value word 1, 2, 4, 8] */

static void free_slots(void) {
  for (int k = 0; k < 2; k++)
    for (int w = 0; w < 4; w++) kern_module_free(atomic_exchange(&slots[k][w], NULL));
}

static int log2_of(int bytes) { return bytes == 8 ? 3 : bytes == 4 ? 2 : bytes == 2 ? 1 : 0; }

static const char *word_name(int bytes) {
  static const char *const names[] = {"uint8", "uint16", "uint32", "uint64"};
  return names[log2_of(bytes)];
}

typedef struct Words {
  int key, value; /* bytes */
} Words;

static char *source(const void *ctx) {
  const Words *w = ctx;
  const char *keys[] = {"@U@", "@W@", "@TOP@", "@BITS@"};
  const char *vals[] = {word_name(w->key), word_name(w->value),
                        w->key == 8 ? "0x8000000000000000ul" : "0x80000000u",
                        w->key == 8 ? "64" : "32"};
  return rt_prims_instantiate(rt_kern_sort, 4, keys, vals);
}

static kern_module *module_for(int key_bytes, int word_bytes) {
  char name[64];
  snprintf(name, sizeof name, "<%s %s %s>", fn, word_name(key_bytes), word_name(word_bytes));
  Words w = {key_bytes, word_bytes};
  return rt_prims_module(&slots[key_bytes == 8][log2_of(word_bytes)], name, source, &w, NULL,
                         free_slots);
}

/* ---- checks ----------------------------------------------------------------------------------- */

/* The order-preserving map the kernels apply to a key word: 0 unsigned, 1
 * signed, 2 IEEE float; -1 for dtypes that are not keys. */
static int key_mode(kern_dtype t) {
  switch (t) {
    case KERN_UINT32:
    case KERN_UINT64: return 0;
    case KERN_INT32:
    case KERN_INT64: return 1;
    case KERN_FLOAT32: return 2;
    default: return -1;
  }
}

/* Rows of 16 keys are the scatter's launch indices. */
static const int64_t MAX_KEYS = (int64_t)ROW * INT32_MAX;

static kern_status check_keys(const kern_array *keys) {
  if (!keys) return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: keys is NULL", fn);
  if (keys->ndim != 1)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: keys must be 1-D, got %d dims", fn, keys->ndim);
  if (key_mode(keys->dtype) < 0)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: keys has dtype %s; expected int32, uint32, int64, uint64 or float32", fn,
                   kern_dtype_name(keys->dtype));
  if (keys->shape[0] > MAX_KEYS)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "%s: keys has %lld elements; at most %lld can be sorted", fn,
                   (long long)keys->shape[0], (long long)MAX_KEYS);
  return KERN_OK;
}

static kern_status check_values(const kern_array *keys, const kern_array *values) {
  if (!values) return KERN_OK;
  if (values->ndim != 1)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: values must be 1-D, got %d dims", fn,
                   values->ndim);
  if (values->device != keys->device)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: values is on %s but keys is on %s", fn,
                   values->device->name, keys->device->name);
  if (values->shape[0] != keys->shape[0])
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: values has %lld elements but keys has %lld", fn,
                   (long long)values->shape[0], (long long)keys->shape[0]);
  if (rt_array_overlap(keys, values))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "%s: values overlaps keys", fn);
  return KERN_OK;
}

/* ---- the plan: arrays and kernels ------------------------------------------------------------- */

typedef enum { V_NONE, V_DIRECT, V_INDEX } vmode;

typedef struct Plan {
  kern_device *d;
  int64_t n, nch, rows;
  int key_bytes, mode;
  bool tiles;          /* the tiled passes; else the CPU's (8-bit digits, a chunk per index) */
  int digit_bits;      /* 4 or 8 */
  int64_t csize, nch8; /* the CPU's chunks */
  vmode vm;
  int word;  /* bytes of the words the passes move with the keys (V_INDEX: the places) */
  int gword; /* V_INDEX: bytes of the words the gather moves */
  kern_module *m, *gm;
  kern_array *a, *b, *acc, *counts, *counts2, *goff, *rowpre; /* keys as words, and scratch */
  kern_array *cnt, *tot;                                      /* the CPU's passes */
  kern_array *va, *vb;                                        /* values (or places) */
  kern_array *vwords, *vtmp;                                  /* V_INDEX: [n, words] */
} Plan;

static void plan_free(Plan *p) {
  kern_array *all[] = {p->a,   p->b,   p->acc, p->counts, p->counts2, p->goff, p->rowpre,
                       p->cnt, p->tot, p->va,  p->vb,     p->vwords,  p->vtmp};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) kern_array_free(all[i]);
}

/* The widest word (8, 4, 2, 1 bytes) that divides the values' size, address
 * and stride: the values move as words of it. */
static int word_of(const kern_array *v) {
  uintptr_t addr = (uintptr_t)v->data;
  for (int w = 8; w > 1; w /= 2)
    if (v->elem_size % (size_t)w == 0 && addr % (uintptr_t)w == 0 && v->strides[0] % w == 0)
      return w;
  return 1;
}

static kern_dtype word_dtype(int bytes) {
  return bytes == 8   ? KERN_UINT64
         : bytes == 4 ? KERN_UINT32
         : bytes == 2 ? KERN_UINT16
                      : KERN_UINT8;
}

/* values as the passes' words, or as [n, words] for the gather at the end. */
static kern_status plan_values(Plan *p, kern_array *values) {
  int w = word_of(values);
  int64_t n = p->n;
  if ((size_t)w == values->elem_size) {
    p->vm = V_DIRECT, p->word = w;
    p->va = rt_array_as(values, word_dtype(w), 1, &n, values->strides);
  } else {
    p->vm = V_INDEX, p->gword = w;
    p->word = (uint64_t)n <= (uint64_t)UINT32_MAX + 1 ? 4 : 8;
    int64_t shape[2] = {n, (int64_t)values->elem_size / w}, strides[2] = {values->strides[0], w};
    int64_t total = shape[0] * shape[1];
    kern_array *tmp = rt_array_scratch(p->d, word_dtype(w), total);
    p->vwords = rt_array_as(values, word_dtype(w), 2, shape, strides);
    p->vtmp = tmp ? rt_array_as(tmp, word_dtype(w), 2, shape, NULL) : NULL;
    kern_array_free(tmp);
    p->va = rt_array_scratch(p->d, word_dtype(p->word), n);
    if (!p->vwords || !p->vtmp) return kern_last_status();
  }
  p->vb = p->va ? rt_array_scratch(p->d, word_dtype(p->word), n) : NULL;
  return p->va && p->vb ? KERN_OK : kern_last_status();
}

/* The tiled passes' counts ([16, chunks] for rank, 1-D for the scan), places
 * and rows' counters; or the CPU's counters per chunk and digit places. */
static bool plan_counters(Plan *p) {
  if (!p->tiles) {
    p->cnt = rt_array_scratch(p->d, KERN_INT64, 256 * p->nch8);
    p->tot = rt_array_scratch(p->d, KERN_INT64, 256);
    return p->cnt && p->tot;
  }
  int64_t nc = DIGITS * p->nch, shape2[2] = {DIGITS, p->nch};
  p->counts = rt_array_scratch(p->d, KERN_INT32, nc);
  p->counts2 = p->counts ? rt_array_as(p->counts, KERN_INT32, 2, shape2, NULL) : NULL;
  p->goff = rt_array_scratch(p->d, KERN_INT64, nc);
  p->rowpre = rt_array_scratch(p->d, KERN_UINT64, 4 * ROWS * p->nch);
  return p->counts2 && p->goff && p->rowpre;
}

static kern_status plan_arrays(Plan *p, kern_array *keys, kern_array *values) {
  int64_t n = p->n;
  kern_dtype kw = word_dtype(p->key_bytes);
  p->a = rt_array_as(keys, kw, 1, &n, keys->strides);
  p->b = rt_array_scratch(p->d, kw, n);
  p->acc = rt_array_scratch(p->d, kw, 1);
  if (!p->a || !p->b || !p->acc || !plan_counters(p)) return kern_last_status();
  return values ? plan_values(p, values) : KERN_OK;
}

/* The modules, compiled for the device now: a compile error fails before
 * anything has moved. */
static kern_status plan_modules(Plan *p) {
  rt_code *code;
  int w = p->vm == V_NONE ? 4 : p->word;
  if (!(p->m = module_for(p->key_bytes, w))) return kern_last_status();
  kern_status st = rt_module_code(p->m, p->d, &code);
  if (st || p->vm != V_INDEX) return st;
  if (!(p->gm = module_for(p->word, p->gword))) return kern_last_status();
  return rt_module_code(p->gm, p->d, &code);
}

static kern_status plan_make(Plan *p, kern_array *keys, kern_array *values) {
  p->d = keys->device;
  p->n = keys->shape[0];
  p->nch = (p->n + CHUNK - 1) / CHUNK;
  p->rows = (p->n + ROW - 1) / ROW;
  p->key_bytes = (int)keys->elem_size;
  p->mode = key_mode(keys->dtype);
  p->tiles = p->d->kind != RT_DEV_CPU || atomic_load(&tiles_on_cpu);
  p->digit_bits = p->tiles ? DIGIT_BITS : 8;
  /* the CPU's chunks: at most 1024 (their counters stay small), at least CPU_CHUNK keys */
  p->csize = (p->n + 1023) / 1024 > CPU_CHUNK ? (p->n + 1023) / 1024 : CPU_CHUNK;
  p->nch8 = (p->n + p->csize - 1) / p->csize;
  kern_status st = plan_arrays(p, keys, values);
  return st ? st : plan_modules(p);
}

/* ---- running it ------------------------------------------------------------------------------------ */

static kern_status launch(kern_module *m, const char *name, kern_device *d, int64_t n, int nargs,
                          const kern_arg *args) {
  kern_kernel *k = kern_module_kernel(m, name);
  return k ? rt_prims_launch(k, d, n, nargs, args) : kern_last_status();
}

static kern_arg arr(kern_array *a) { return kern_arg_array(a); }

/* acc[0] = the bits in which some key's ordered bits differ from the first key's. */
static kern_status run_bits(const Plan *p) {
  uint64_t zero = 0;
  kern_status st = kern_array_fill(p->acc, &zero);
  if (!st && p->counts) st = kern_array_fill(p->counts, &zero);
  kern_arg args[] = {arr(p->a), arr(p->acc), kern_arg_i32(p->mode)};
  return st ? st : launch(p->m, "bits", p->d, p->nch, 3, args);
}

/* The CPU's pass over the 8-bit digit at sh. */
static kern_status run_pass8(const Plan *p, int sh) {
  kern_arg ca[] = {arr(p->a),
                   arr(p->b),
                   arr(p->acc),
                   arr(p->cnt),
                   kern_arg_i32(p->mode),
                   kern_arg_i32(sh),
                   kern_arg_i64(p->csize)};
  kern_status st = launch(p->m, "count8", p->d, p->nch8, 7, ca);
  kern_arg pa[] = {arr(p->cnt), arr(p->tot), arr(p->acc), kern_arg_i32(sh)};
  if (!st) st = launch(p->m, "prefix8", p->d, 256, 4, pa);
  kern_arg ba[] = {arr(p->tot), arr(p->acc), kern_arg_i32(sh)};
  if (!st) st = launch(p->m, "base8", p->d, 1, 3, ba);
  if (st) return st;
  if (p->vm == V_NONE) {
    kern_arg sa[] = {arr(p->a),        arr(p->b),
                     arr(p->acc),      arr(p->cnt),
                     arr(p->tot),      kern_arg_i32(p->mode),
                     kern_arg_i32(sh), kern_arg_i64(p->csize)};
    return launch(p->m, "scatter8", p->d, p->nch8, 8, sa);
  }
  kern_arg sa[] = {arr(p->a),
                   arr(p->b),
                   arr(p->va),
                   arr(p->vb),
                   arr(p->acc),
                   arr(p->cnt),
                   arr(p->tot),
                   kern_arg_i32(p->mode),
                   kern_arg_i32(sh),
                   kern_arg_i64(p->csize),
                   kern_arg_bool(p->vm == V_INDEX)};
  return launch(p->m, "scatter8_kv", p->d, p->nch8, 11, sa);
}

/* The tiled pass over the 4-bit digit at sh. */
static kern_status run_pass(const Plan *p, int sh) {
  kern_arg ra[] = {arr(p->a),       arr(p->b),      arr(p->acc),
                   arr(p->counts2), arr(p->rowpre), kern_arg_i32(p->mode),
                   kern_arg_i32(sh)};
  kern_status st = launch(p->m, "rank", p->d, p->nch, 7, ra);
  if (!st) st = kern_array_scan(p->counts, p->goff, false);
  if (st) return st;
  if (p->vm == V_NONE) {
    kern_arg sa[] = {arr(p->a),       arr(p->b),      arr(p->acc),
                     arr(p->goff),    arr(p->rowpre), kern_arg_i32(p->mode),
                     kern_arg_i32(sh)};
    return launch(p->m, "scatter", p->d, p->rows, 7, sa);
  }
  kern_arg sa[] = {arr(p->a),        arr(p->b),
                   arr(p->va),       arr(p->vb),
                   arr(p->acc),      arr(p->goff),
                   arr(p->rowpre),   kern_arg_i32(p->mode),
                   kern_arg_i32(sh), kern_arg_bool(p->vm == V_INDEX)};
  return launch(p->m, "scatter_kv", p->d, p->rows, 10, sa);
}

static kern_status run_finish(const Plan *p) {
  if (p->vm == V_NONE) {
    kern_arg fa[] = {arr(p->a), arr(p->b), arr(p->acc), kern_arg_i32(p->digit_bits)};
    return launch(p->m, "finish", p->d, p->rows, 4, fa);
  }
  kern_arg fa[] = {arr(p->a),
                   arr(p->b),
                   arr(p->va),
                   arr(p->vb),
                   arr(p->acc),
                   kern_arg_bool(p->vm == V_INDEX),
                   kern_arg_i32(p->digit_bits)};
  kern_status st = launch(p->m, "finish_kv", p->d, p->rows, 7, fa);
  if (st || p->vm != V_INDEX) return st;
  kern_arg ga[] = {arr(p->vwords), arr(p->vtmp), arr(p->va)};
  st = launch(p->gm, "gather", p->d, p->rows, 3, ga);
  return st ? st : kern_array_copy(p->vwords, p->vtmp);
}

static kern_status run(const Plan *p) {
  kern_status st = run_bits(p);
  for (int sh = 0; !st && sh < 8 * p->key_bytes; sh += p->digit_bits)
    st = p->tiles ? run_pass(p, sh) : run_pass8(p, sh);
  return st ? st : run_finish(p);
}

kern_status kern_array_sort(kern_array *keys, kern_array *values) {
  kern_status st = rt_ensure_init();
  if (st || (st = check_keys(keys)) || (st = check_values(keys, values))) return st;
  if (keys->shape[0] < 2) return KERN_OK;
  Plan p = {0};
  st = plan_make(&p, keys, values);
  if (!st) st = run(&p);
  plan_free(&p);
  return st;
}

/* ---- for tests ---------------------------------------------------------------------------------------- */

char *rt_sort_source(int key_bytes, int word_bytes) {
  Words w = {key_bytes, word_bytes};
  return source(&w);
}

void rt_sort_tiles_on_cpu(bool on) { atomic_store(&tiles_on_cpu, on); }

kern_kernel *rt_sort_kernel(int key_bytes, int word_bytes, const char *name) {
  kern_module *m = module_for(key_bytes, word_bytes);
  return m ? kern_module_kernel(m, name) : NULL;
}
