/* diffrun.c: see diffrun.h. Inputs come from a splitmix64 stream seeded by
 * the program's seed, drawn in parameter order, so every device and every
 * optimisation level sees the same bytes. */
#include "diffrun.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progen.h"

enum { MAX_KERNELS = 16, MAX_PARAMS = 16 };

/* ---- seeds and programs ---------------------------------------------------------- */

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  char *end;
  long v = s && *s ? strtol(s, &end, 0) : dflt;
  return s && *s && !*end ? v : dflt;
}

uint64_t diff_seed(int k) {
  const char *s = getenv("KERN_DIFF_SEED");
  uint64_t base = s && *s ? strtoull(s, NULL, 0) : DIFF_SEED_BASE;
  return base + (uint64_t)k;
}

int diff_count(ProgenKind kind) {
  long n = env_long("KERN_DIFF_COUNT", kind == PROGEN_TILED ? DIFF_TILED_COUNT : DIFF_COUNT);
  return n < 0 ? 0 : n > 1000000 ? 1000000 : (int)n;
}

static int batch_size(ProgenKind kind) {
  return kind == PROGEN_TILED ? DIFF_TILED_BATCH : DIFF_BATCH;
}

int diff_nbatches(ProgenKind kind) {
  return (diff_count(kind) + batch_size(kind) - 1) / batch_size(kind);
}

DiffBatch diff_batch(ProgenKind kind, int b) {
  DiffBatch r = {.n = 0, .kind = kind};
  for (int k = b * batch_size(kind); k < diff_count(kind) && r.n < batch_size(kind); k++)
    r.seeds[r.n++] = diff_seed(k);
  return r;
}

DiffBatch diff_one(const DiffBatch *b, int j) {
  return (DiffBatch){.seeds = {b->seeds[j]}, .n = 1, .kind = b->kind};
}

const char *diff_progen_args(ProgenKind kind) {
  return kind == PROGEN_TILED ? "progen --tiled" : "progen";
}

char *diff_program(uint64_t seed, ProgenKind kind) {
  size_t n = progen_write(seed, kind, "", NULL, 0);
  char *s = malloc(n + 1);
  if (s) progen_write(seed, kind, "", s, n + 1);
  return s;
}

char *diff_module(const DiffBatch *b) {
  size_t len = 0, cap = 1;
  char prefix[16], *s = NULL;
  for (int pass = 0; pass < 2; pass++, len = 0) {
    for (int j = 0; j < b->n; j++) {
      snprintf(prefix, sizeof prefix, "p%d_", j);
      len += progen_write(b->seeds[j], b->kind, prefix, s ? s + len : NULL, s ? cap - len : 0);
    }
    if (pass == 0 && !(s = malloc(cap = len + 1))) return NULL;
  }
  return s;
}

/* ---- element types ------------------------------------------------------------- */

/* kind: 'b' bool, 'i' integer, 'h' float16, 'g' bfloat16, 'f' float32/float64 components. */
typedef struct DtInfo {
  kern_dtype dtype;
  char kind;
  int size, ncomp;
} DtInfo;

static const DtInfo dtinfo[] = {
    {KERN_BOOL, 'b', 1, 1},
    {KERN_INT8, 'i', 1, 1},
    {KERN_INT16, 'i', 2, 1},
    {KERN_INT32, 'i', 4, 1},
    {KERN_INT64, 'i', 8, 1},
    {KERN_UINT8, 'i', 1, 1},
    {KERN_UINT16, 'i', 2, 1},
    {KERN_UINT32, 'i', 4, 1},
    {KERN_UINT64, 'i', 8, 1},
    {KERN_FLOAT16, 'h', 2, 1},
    {KERN_BFLOAT16, 'g', 2, 1},
    {KERN_FLOAT32, 'f', 4, 1},
    {KERN_FLOAT64, 'f', 8, 1},
    {KERN_VEC2, 'f', 4, 2},
    {KERN_VEC3, 'f', 4, 3},
    {KERN_VEC4, 'f', 4, 4},
    {KERN_DVEC2, 'f', 8, 2},
    {KERN_DVEC3, 'f', 8, 3},
    {KERN_DVEC4, 'f', 8, 4},
    {KERN_IVEC2, 'i', 4, 2},
    {KERN_IVEC3, 'i', 4, 3},
    {KERN_IVEC4, 'i', 4, 4},
    {KERN_MAT22, 'f', 4, 4},
    {KERN_MAT33, 'f', 4, 9},
    {KERN_MAT44, 'f', 4, 16},
    {KERN_QUAT, 'f', 4, 4},
    {KERN_TRANSFORM, 'f', 4, 7},
    {KERN_SPATIAL_VECTOR, 'f', 4, 6},
    {KERN_SPATIAL_MATRIX, 'f', 4, 36},
};

static const DtInfo *dt_find(kern_dtype d) {
  for (size_t k = 0; k < sizeof dtinfo / sizeof dtinfo[0]; k++)
    if (dtinfo[k].dtype == d) return &dtinfo[k];
  return NULL;
}

/* ---- random inputs ----------------------------------------------------------------- */

static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Small values, the extremes, -1 and random bits, in size little-endian bytes. */
static void rand_int(uint64_t *s, int size, unsigned char *p) {
  uint64_t r = next(s), v;
  switch (r % 8) {
    case 0:
    case 1:
    case 2:
    case 3: v = (uint64_t)((int64_t)(r >> 8) % 9); break;
    case 4: v = 1ull << (8 * size - 1); break;       /* MIN */
    case 5: v = (1ull << (8 * size - 1)) - 1; break; /* MAX */
    case 6: v = ~0ull; break;
    default: v = next(s); break;
  }
  for (int k = 0; k < size; k++) p[k] = (unsigned char)(v >> (8 * k));
}

static double rand_double(uint64_t *s) {
  static const double special[] = {0.0,    -0.0,  INFINITY, -INFINITY, NAN,
                                   1e-310, 1e-40, 3.4e38,   1e300};
  uint64_t r = next(s);
  if (r % 100 < 80) return (double)((int64_t)(r >> 8) % 2001 - 1000) / 16.0;
  if (r % 100 < 96)
    return ldexp((double)((r >> 8) & 0xffffff) / 16777216.0 + 0.5, (int)((r >> 40) % 61) - 30) *
           ((r >> 50) & 1 ? -1 : 1);
  return special[(r >> 8) % (sizeof special / sizeof special[0])];
}

/* Tiled programs sum, scan and sort their floats: mostly magnitudes from 2^-40 to 2^40 (full
 * mantissas), so that the order of a sum shows in its bits, with small exact values, values
 * just past 2^24 and 2^53 that lose bits when added to, -0.0 and the specials. */
static double rand_double_tiled(uint64_t *s) {
  static const double special[] = {0.0, -0.0,   -0.0,  INFINITY, -INFINITY,
                                   NAN, 1e-310, 1e-40, 3.4e38,   1e300};
  uint64_t r = next(s), m = next(s);
  double sign = (r >> 50) & 1 ? -1 : 1;
  int c = (int)(r % 100);
  if (c < 30) return (double)((int64_t)(r >> 8) % 2001 - 1000) / 16.0;
  if (c < 85)
    return ldexp((double)(m >> 11) / 9007199254740992.0 + 0.5, (int)((r >> 40) % 81) - 40) * sign;
  if (c < 94) return (ldexp(1.0, (r >> 8) % 2 ? 24 : 53) + (double)((r >> 16) % 7)) * sign;
  return special[(r >> 8) % (sizeof special / sizeof special[0])];
}

static void rand_half(uint64_t *s, unsigned char *p) {
  static const uint16_t special[] = {0x0000, 0x8000, 0x7c00, 0xfc00,
                                     0x7e00, 0x0001, 0x7bff, 0x3c00};
  uint64_t r = next(s);
  uint16_t h =
      r % 100 < 92
          ? (uint16_t)(((r >> 8) & 0x8000) | ((10 + (r >> 16) % 11) << 10) | ((r >> 24) & 0x3f0))
          : special[(r >> 8) % (sizeof special / sizeof special[0])];
  memcpy(p, &h, 2);
}

/* A bfloat16: a float32's top half, so the float32 values' spread (a random
 * low half dropped: any bits are a bfloat16), and the specials. */
static void rand_bhalf(uint64_t *s, bool tiled, unsigned char *p) {
  static const uint16_t special[] = {0x0000, 0x8000, 0x7f80, 0xff80,
                                     0x7fc0, 0x0001, 0x7f7f, 0x3f80};
  uint64_t r = next(s);
  float f = (float)(tiled ? rand_double_tiled(s) : rand_double(s));
  uint32_t w;
  memcpy(&w, &f, 4);
  uint16_t b = r % 100 < 92 ? (uint16_t)(w >> 16) : special[(r >> 8) % 8];
  memcpy(p, &b, 2);
}

static void rand_elem(uint64_t *s, const DtInfo *d, bool tiled, unsigned char *p) {
  for (int c = 0; c < d->ncomp; c++, p += d->size) {
    if (d->kind == 'b')
      *p = next(s) & 1;
    else if (d->kind == 'i')
      rand_int(s, d->size, p);
    else if (d->kind == 'h')
      rand_half(s, p);
    else if (d->kind == 'g')
      rand_bhalf(s, tiled, p);
    else if (d->size == 4) {
      float f = (float)(tiled ? rand_double_tiled(s) : rand_double(s));
      memcpy(p, &f, 4);
    } else {
      double f = tiled ? rand_double_tiled(s) : rand_double(s);
      memcpy(p, &f, 8);
    }
  }
}

/* ---- running ------------------------------------------------------------------------- */

static bool fail(char *err, size_t n, const char *what, const char *detail) {
  snprintf(err, n, "%s: %s", what, detail ? detail : "");
  return false;
}

static void add_array(DiffResult *r, int prog, int kernel, int param, kern_array *a) {
  DiffArray *na = realloc(r->arrays, (size_t)(r->narrays + 1) * sizeof *na);
  if (!na) return;
  r->arrays = na;
  DiffArray *d = &r->arrays[r->narrays++];
  d->prog = prog;
  d->kernel = kernel;
  d->param = param;
  d->dtype = kern_array_dtype(a);
  d->nbytes = kern_array_nbytes(a);
  d->bytes = malloc(d->nbytes);
  if (d->bytes && kern_array_read(a, d->bytes, d->nbytes) != KERN_OK)
    memset(d->bytes, 0xee, d->nbytes);
}

/* How a kernel runs: its launch, its arguments' shapes, the kind of its inputs. */
typedef struct Launch {
  const ProgenLaunch *l;
  bool tiled;
  DiffOptions o;
} Launch;

/* Host memory behind a strided array (DiffOptions.strided), and where its elements are. */
typedef struct Strided {
  unsigned char *mem;
  size_t bytes, esize;
  int ndim;
  int64_t shape[2], strides[2];
} Strided;

enum { PAD = 0xa5 }; /* the bytes between a strided array's elements */

/* Parameter p's layout: 1-D every second (third) element; 2-D rows padded by three
 * elements, every second column (or every one). */
static Strided strided_layout(int p, int nd, const int64_t *shape, size_t esize) {
  Strided s = {.esize = esize, .ndim = nd, .shape = {shape[0], nd == 2 ? shape[1] : 1}};
  int64_t inner = (int64_t)esize * (p % 2 ? 3 : 2);
  if (nd == 2) {
    inner = (int64_t)esize * (p % 2 ? 1 : 2);
    s.strides[1] = inner;
    s.strides[0] = inner * shape[1] + 3 * (int64_t)esize;
  } else
    s.strides[0] = inner;
  s.bytes = (size_t)(s.strides[0] * s.shape[0] + inner);
  return s;
}

/* An array of shape on dev, dense or (st != NULL) strided over new host memory. */
static kern_array *new_array(kern_device *dev, kern_dtype dt, int p, int nd, const int64_t *shape,
                             size_t esize, Strided *st) {
  if (!st) return kern_array_new(dev, dt, nd, shape);
  *st = strided_layout(p, nd, shape, esize);
  if (!(st->mem = malloc(st->bytes))) return NULL;
  memset(st->mem, PAD, st->bytes);
  return kern_array_wrap(st->mem, dev, dt, nd, shape, st->strides);
}

/* Whether every byte of st's memory outside its elements is still PAD. */
static bool padding_intact(const Strided *st) {
  unsigned char *copy = malloc(st->bytes);
  if (!copy) return true;
  memcpy(copy, st->mem, st->bytes);
  for (int64_t i = 0; i < st->shape[0]; i++)
    for (int64_t j = 0; j < st->shape[1]; j++)
      memset(copy + i * st->strides[0] + (st->ndim == 2 ? j * st->strides[1] : 0), PAD, st->esize);
  bool ok = true;
  for (size_t k = 0; k < st->bytes; k++) ok = ok && copy[k] == PAD;
  free(copy);
  return ok;
}

/* A tiled kernel's last parameter, chk: chk[c] counts the instances where check c failed. */
static bool is_chk(kern_kernel *k, int p) {
  return p == kern_kernel_num_params(k) - 1 && kern_kernel_param_dtype(k, p) == KERN_INT32 &&
         !strcmp(kern_kernel_param_name(k, p), "chk");
}

/* Every check of k passed (chk all zero); else the first failures in err. */
static bool checks_pass(kern_kernel *k, kern_array *chk, char *err, size_t n) {
  int32_t c[PROGEN_CHECKS];
  if (kern_array_nbytes(chk) != sizeof c || kern_array_read(chk, c, sizeof c) != KERN_OK)
    return fail(err, n, "cannot read chk of", kern_kernel_name(k));
  for (int i = 0; i < PROGEN_CHECKS; i++)
    if (c[i]) {
      char what[160];
      snprintf(what, sizeof what, "%s's check %d (atomic_add(&chk[%d], 1)): %d instances",
               kern_kernel_name(k), i, i, (int)c[i]);
      return fail(err, n, "a reduction or scan differs from its documented order", what);
    }
  return true;
}

/* Makes argument p of kernel k: an array of the shape progen gave it, or a value. */
static bool make_arg(kern_kernel *k, int p, const Launch *ln, kern_device *dev, uint64_t *rng,
                     kern_arg *arg, kern_array **arr, Strided *st, char *err, size_t n) {
  const DtInfo *d = dt_find(kern_kernel_param_dtype(k, p));
  int nd = kern_kernel_param_ndim(k, p);
  if (!d) return fail(err, n, "a parameter of an unexpected dtype", kern_kernel_param_name(k, p));
  size_t esize = (size_t)(d->size * d->ncomp);
  if (nd == 0) {
    unsigned char v[64];
    rand_elem(rng, d, ln->tiled, v);
    *arg = kern_arg_bytes(d->dtype, v);
    return true;
  }
  int64_t shape[2] = {ln->l->shape[p][0], nd == 2 ? ln->l->shape[p][1] : 1},
          count = shape[0] * shape[1];
  if (count <= 0) return fail(err, n, "progen gave no shape for", kern_kernel_param_name(k, p));
  unsigned char *host = malloc((size_t)count * esize);
  *arr = new_array(dev, d->dtype, p, nd, shape, esize, ln->o.strided ? st : NULL);
  if (!host || !*arr) {
    free(host);
    return fail(err, n, "kern_array_new", kern_last_error());
  }
  if (is_chk(k, p)) /* the checks' failure counts start at zero */
    memset(host, 0, (size_t)count * esize);
  else
    for (int64_t e = 0; e < count; e++) rand_elem(rng, d, ln->tiled, host + (size_t)e * esize);
  kern_status ws = kern_array_write(*arr, host, (size_t)count * esize);
  free(host);
  *arg = kern_arg_array(*arr);
  return ws == KERN_OK || fail(err, n, "kern_array_write", kern_last_error());
}

static bool launch(kern_kernel *k, const Launch *ln, kern_device *dev, int np, const kern_arg *args,
                   char *err, size_t n) {
  const ProgenLaunch *l = ln->l;
  if (ln->tiled && !kern_kernel_is_tiled(k))
    return fail(err, n, "a kernel of a tiled program is not tiled", kern_kernel_name(k));
  if (ln->o.tile_block > 0 && kern_kernel_is_tiled(k) &&
      kern_kernel_set_tile_block(k, ln->o.tile_block) != KERN_OK)
    return fail(err, n, "kern_kernel_set_tile_block", kern_last_error());
  kern_dims dims = l->ndim == 2 ? KERN_DIM2(l->dims[0], l->dims[1]) : KERN_DIM1(l->dims[0]);
  if (kern_launch(k, dev, dims, np, args) != KERN_OK)
    return fail(err, n, "launch", kern_last_error());
  if (kern_device_synchronize(dev) != KERN_OK)
    return fail(err, n, "synchronize", kern_last_error());
  return true;
}

static bool run_kernel(kern_kernel *k, int prog, int index, const Launch *ln, kern_device *dev,
                       uint64_t seed, DiffResult *out, char *err, size_t n) {
  int np = kern_kernel_num_params(k);
  kern_arg args[MAX_PARAMS];
  kern_array *arrs[MAX_PARAMS] = {0};
  Strided st[MAX_PARAMS] = {{0}};
  uint64_t rng = seed * 31 + (uint64_t)index;
  bool ok = np <= MAX_PARAMS || fail(err, n, "too many parameters", kern_kernel_name(k));
  ok = ok && (np == ln->l->nparams ||
              fail(err, n, "progen's launch has other parameters than", kern_kernel_name(k)));
  for (int p = 0; ok && p < np; p++)
    ok = make_arg(k, p, ln, dev, &rng, &args[p], &arrs[p], &st[p], err, n);
  ok = ok && launch(k, ln, dev, np, args, err, n);
  if (ok && ln->tiled && np && arrs[np - 1] && is_chk(k, np - 1))
    ok = checks_pass(k, arrs[np - 1], err, n);
  for (int p = 0; p < np; p++) {
    if (ok && arrs[p]) add_array(out, prog, index, p, arrs[p]);
    if (ok && st[p].mem && !padding_intact(&st[p]))
      ok = fail(err, n, "a write between the elements of a strided array, parameter",
                kern_kernel_param_name(k, p));
    kern_array_free(arrs[p]);
    free(st[p].mem);
  }
  return ok;
}

/* Runs p<j>_k0, p<j>_k1 ... of m. */
static bool run_program(kern_module *m, const DiffBatch *b, int j, kern_device *dev,
                        const DiffOptions *o, DiffResult *out, char *err, size_t n) {
  char name[64];
  ProgenLaunch l[MAX_KERNELS];
  int nl = progen_launches(b->seeds[j], b->kind, l, MAX_KERNELS);
  bool ok = true;
  int k = 0;
  for (; ok && k < MAX_KERNELS; k++) {
    snprintf(name, sizeof name, "p%d_k%d", j, k);
    kern_kernel *kk = kern_module_kernel(m, name);
    if (!kk) break;
    Launch ln = {&l[k], b->kind == PROGEN_TILED, *o};
    ok = (k < nl || fail(err, n, "progen gave no launch for", name)) &&
         run_kernel(kk, j, k, &ln, dev, b->seeds[j], out, err, n);
  }
  kern_clear_error();
  return ok && (k > 0 || fail(err, n, "a program without kernels", ""));
}

bool diff_run(const DiffBatch *b, kern_device *dev, const DiffOptions *o, DiffResult *out,
              char *err, size_t n) {
  static const DiffOptions defaults = {0, false};
  char name[64];
  o = o ? o : &defaults;
  snprintf(name, sizeof name, "progen_%s%llu.kern", b->kind == PROGEN_TILED ? "tiled_" : "",
           (unsigned long long)b->seeds[0]);
  memset(out, 0, sizeof *out);
  char *src = diff_module(b);
  kern_module *m = src ? kern_module_from_source(name, src) : NULL;
  free(src);
  if (!m) return fail(err, n, "the module does not compile", kern_last_error());
  bool ok = !*kern_module_diagnostics(m) ||
            fail(err, n, "the module draws warnings", kern_module_diagnostics(m));
  for (int j = 0; ok && j < b->n; j++) ok = run_program(m, b, j, dev, o, out, err, n);
  kern_module_free(m);
  return ok;
}

/* ---- comparing ----------------------------------------------------------------------- */

static bool is_nan(char kind, int size, const unsigned char *p) {
  if (kind == 'h') {
    uint16_t h;
    memcpy(&h, p, 2);
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
  }
  if (kind == 'g') { /* bfloat16: float32's exponent, 7 fraction bits */
    uint16_t h;
    memcpy(&h, p, 2);
    return (h & 0x7f80) == 0x7f80 && (h & 0x7f);
  }
  if (kind != 'f') return false;
  if (size == 4) {
    float f;
    memcpy(&f, p, 4);
    return isnan(f);
  }
  double f;
  memcpy(&f, p, 8);
  return isnan(f);
}

/* A component as its bits, and its value when it is a float. */
static void show(char *out, size_t n, char kind, int size, const unsigned char *p) {
  uint64_t bits = 0;
  for (int k = 0; k < size; k++) bits |= (uint64_t)p[k] << (8 * k);
  unsigned long long b = (unsigned long long)bits;
  if (kind == 'f' && size == 4) {
    float f;
    memcpy(&f, p, 4);
    snprintf(out, n, "%.9g (0x%08llx)", f, b);
  } else if (kind == 'f') {
    double f;
    memcpy(&f, p, 8);
    snprintf(out, n, "%.17g (0x%016llx)", f, b);
  } else
    snprintf(out, n, "0x%llx", b);
}

/* Appends up to `room` differences of one array pair; returns how many it found. */
static int compare_array(const DiffArray *a, const DiffArray *b, char *why, size_t n, int room) {
  const DtInfo *d = dt_find(a->dtype);
  int bad = 0, cs = d ? d->size : 1;
  char kind = d ? d->kind : 'i';
  for (size_t off = 0; off + (size_t)cs <= a->nbytes; off += (size_t)cs) {
    const unsigned char *x = a->bytes + off, *y = b->bytes + off;
    if (!memcmp(x, y, (size_t)cs) || (is_nan(kind, cs, x) && is_nan(kind, cs, y))) continue;
    if (bad++ >= room) continue;
    char sx[64], sy[64];
    show(sx, sizeof sx, kind, cs, x);
    show(sy, sizeof sy, kind, cs, y);
    size_t len = strlen(why);
    int comp = d ? d->ncomp : 1;
    size_t c = off / (size_t)cs;
    snprintf(why + len, n - len, "  k%d parameter %d (%s), element %zu component %zu: %s vs %s\n",
             a->kernel, a->param, kern_dtype_name(a->dtype), c / (size_t)comp, c % (size_t)comp, sx,
             sy);
  }
  return bad;
}

bool diff_same(const DiffResult *a, const DiffResult *b, int prog, char *why, size_t n) {
  why[0] = 0;
  if (a->narrays != b->narrays) {
    snprintf(why, n, "  %d arrays vs %d\n", a->narrays, b->narrays);
    return false;
  }
  int bad = 0;
  for (int k = 0; k < a->narrays; k++) {
    const DiffArray *x = &a->arrays[k], *y = &b->arrays[k];
    if (x->prog != prog) continue;
    if (x->dtype != y->dtype || x->nbytes != y->nbytes || !x->bytes || !y->bytes) {
      size_t len = strlen(why);
      snprintf(why + len, n - len, "  array %d: different types or sizes\n", k);
      bad++;
      continue;
    }
    bad += compare_array(x, y, why, n, bad < 6 ? 6 - bad : 0);
  }
  return bad == 0;
}

void diff_free(DiffResult *r) {
  for (int k = 0; k < r->narrays; k++) free(r->arrays[k].bytes);
  free(r->arrays);
  memset(r, 0, sizeof *r);
}

/* ---- the private cache --------------------------------------------------------------- */

static char cache_dir[512];

const char *diff_cache_make(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(cache_dir, sizeof cache_dir, "%s/kern-diff-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(cache_dir)) return NULL;
  setenv("KERN_CACHE_DIR", cache_dir, 1);
  return cache_dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

void diff_cache_remove(void) {
  if (cache_dir[0]) nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  cache_dir[0] = 0;
}
