/* run.c: `kernc run FILE KERNEL --arg NAME=VALUE ...`: one launch from the shell.
 *
 * Requires: libkern's API (load, arrays, launch), the front end for the
 * kernel's parameter types (the file is checked once more, as kernc check
 * does), npy.c for file: arguments and --out.
 * Produces: cli_run.
 * Breaks: every argument is parsed and every array made before the launch, so
 * a bad argument launches nothing. Values take the parameter's exact type: an
 * integer out of range or a malformed number is an error, never truncated.
 * Arrays live on the launch device and are read back after it synchronizes.
 * Safe by default, for exploring: debug mode (every index checked), launch
 * dims no array covers refused, a crash turned into a message; --release
 * turns the first two off. The module's warnings are printed on stderr (the
 * library's log, at least at its warning level; KERN_LOG=1 adds its lines).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "emit.h"
#include "front.h"
#include "kern.h"
#include "npy.h"
#include "str.h"

typedef struct Arg {
  const char *text;     /* VALUE of --arg NAME=VALUE */
  kern_array *array;    /* array parameters */
  unsigned char *value; /* by-value parameters: the bytes in the type's layout */
} Arg;

/* A parameter as the front end checked it: its type says how to parse and
 * print values; the launch needs only its dtype. */
typedef struct Param {
  const char *name;
  const Type *ty;
  bool is_array;
  int ndim;         /* arrays */
  kern_dtype dtype; /* value dtype, or element dtype for arrays */
  size_t size;      /* bytes of a value */
} Param;

/* The kernel: libkern's handle and the front end's view of its parameters. */
typedef struct Kernel {
  kern_kernel *handle;
  const char *name;
  int nparams;
  Param *params;
} Kernel;

typedef struct Run {
  const Options *o;
  kern_device *dev;
  kern_module *mod;
  Kernel *k;
  Arg *args;
} Run;

/* ---- types ---------------------------------------------------------------------------- */

static const Type *elem_type(const Param *p) { return p->is_array ? p->ty->elem : p->ty; }

/* A vector, quaternion or transform: a row of t->n components. */
static bool is_row(const Type *t) {
  return t->kind == TY_VEC || t->kind == TY_QUAT || t->kind == TY_TRANSFORM;
}

/* The scalar type of a vector, matrix, quaternion or transform's components. */
static const Type *scalar_of(const Type *t) {
  return is_row(t) || t->kind == TY_MAT ? (t->elem ? t->elem : &ty_f32) : t;
}

static int ncomp(const Type *t) { return is_row(t) ? t->n : t->kind == TY_MAT ? t->n * t->n : 1; }

/* Trailing .npy dims of one element: vec3 -> (3), mat33 -> (3, 3), transform -> (7). */
static int elem_dims(const Type *t, int64_t dims[2]) {
  if (t->kind == TY_MAT) return dims[0] = dims[1] = t->n, 2;
  if (is_row(t)) return dims[0] = ncomp(t), 1;
  return 0;
}

static const char *npy_scalar(TypeKind k) {
  static const char *const
      names[] = {[TY_BOOL] = "|b1", [TY_I8] = "|i1",  [TY_I16] = "<i2", [TY_I32] = "<i4",
                 [TY_I64] = "<i8",  [TY_U8] = "|u1",  [TY_U16] = "<u2", [TY_U32] = "<u4",
                 [TY_U64] = "<u8",  [TY_F16] = "<f2", [TY_F32] = "<f4", [TY_F64] = "<f8",
                 [TY_BF16] = "|V2"}; /* NumPy has no bfloat16: its bits, as ml_dtypes saves them */
  return k >= TY_BOOL && k <= TY_F64 ? names[k] : "|V0"; /* callers pass scalars only */
}

/* ---- float16 ------------------------------------------------------------------------------- */

static float half_to_float(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0    ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}

/* Round to nearest even, as the hardware conversions do. */
static uint16_t float_to_half(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (isnan(a)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < ldexpf(1, -14)) return sign | (uint16_t)nearbyintf(a * ldexpf(1, 24));
  int e;
  float m = frexpf(a, &e);                             /* a = m * 2^e, m in [0.5, 1) */
  uint32_t bits = (uint32_t)nearbyintf(ldexpf(m, 11)); /* 1024..2048 */
  if (bits == 2048) bits = 1024, e++;
  return sign | (uint16_t)((e + 14) << 10 | (bits & 1023));
}

/* ---- bfloat16 ------------------------------------------------------------------------------ */

static float bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Rounded once to 8 significant bits, ties to even, as the kernels do; the
 * result is exact in float32, whose top half it is. */
static uint16_t double_to_bf16(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (isnan(a)) return sign | 0x7fc0;
  if (a >= 0x1.ffp127) return sign | 0x7f80;
  int e;
  frexp(a, &e);
  double q = ldexp(1.0, (e < -125 ? -125 : e) - 8);
  float f = (float)(nearbyint(a / q) * q);
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return sign | (uint16_t)(bits >> 16);
}

/* ---- scalars ----------------------------------------------------------------------------------- */

static bool parse_scalar(TypeKind k, const char *s, unsigned char *dst) {
  char *end;
  errno = 0;
  if (k == TY_BOOL) {
    bool t = !strcmp(s, "true") || !strcmp(s, "1"), f = !strcmp(s, "false") || !strcmp(s, "0");
    *dst = t;
    return t || f;
  }
  if (k == TY_F16 || k == TY_BF16 || k == TY_F32 || k == TY_F64) {
    double v = strtod(s, &end);
    if (end == s || *end) return false;
    if (k == TY_F64)
      memcpy(dst, &v, 8);
    else if (k == TY_F32) {
      float f = (float)v;
      memcpy(dst, &f, 4);
    } else {
      uint16_t h = k == TY_BF16 ? double_to_bf16(v) : float_to_half((float)v);
      memcpy(dst, &h, 2);
    }
    return true;
  }
  int size = k == TY_I8 || k == TY_U8     ? 1
             : k == TY_I16 || k == TY_U16 ? 2
             : k == TY_I32 || k == TY_U32 ? 4
                                          : 8;
  bool is_signed = k >= TY_I8 && k <= TY_I64;
  uint64_t bits;
  if (is_signed) {
    long long v = strtoll(s, &end, 0);
    long long lim = size == 8 ? INT64_MAX : (1LL << (8 * size - 1)) - 1;
    if (end == s || *end || errno || v > lim || v < -lim - 1) return false;
    bits = (uint64_t)v;
  } else {
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end || errno || strchr(s, '-') || (size < 8 && v >> (8 * size))) return false;
    bits = v;
  }
  memcpy(dst, &bits, (size_t)size); /* little-endian: the low bytes */
  return true;
}

static void store_scalar(TypeKind k, double v, unsigned char *dst) {
  switch (k) {
    case TY_BOOL: *dst = v != 0; break;
    case TY_I8:
    case TY_U8: *dst = (unsigned char)(int64_t)v; break;
    case TY_I16:
    case TY_U16: {
      uint16_t x = (uint16_t)(int64_t)v;
      memcpy(dst, &x, 2);
      break;
    }
    case TY_I32:
    case TY_U32: {
      uint32_t x = (uint32_t)(int64_t)v;
      memcpy(dst, &x, 4);
      break;
    }
    case TY_I64: {
      int64_t x = (int64_t)v;
      memcpy(dst, &x, 8);
      break;
    }
    case TY_U64: {
      uint64_t x = (uint64_t)v;
      memcpy(dst, &x, 8);
      break;
    }
    case TY_F16:
    case TY_BF16: {
      uint16_t x = k == TY_BF16 ? double_to_bf16(v) : float_to_half((float)v);
      memcpy(dst, &x, 2);
      break;
    }
    case TY_F32: {
      float x = (float)v;
      memcpy(dst, &x, 4);
      break;
    }
    default: memcpy(dst, &v, 8); break;
  }
}

static double load_scalar(TypeKind k, const unsigned char *p) {
  union {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
  } u;
  memcpy(&u, p,
         k == TY_F64 || k == TY_I64 || k == TY_U64                   ? 8
         : k == TY_F32 || k == TY_I32 || k == TY_U32                 ? 4
         : k == TY_F16 || k == TY_BF16 || k == TY_I16 || k == TY_U16 ? 2
                                                                     : 1);
  switch (k) {
    case TY_BOOL: return u.u8 != 0;
    case TY_I8: return u.i8;
    case TY_I16: return u.i16;
    case TY_I32: return u.i32;
    case TY_I64: return (double)u.i64;
    case TY_U8: return u.u8;
    case TY_U16: return u.u16;
    case TY_U32: return u.u32;
    case TY_U64: return (double)u.u64;
    case TY_F16: return half_to_float(u.u16);
    case TY_BF16: return bf16_to_float(u.u16);
    case TY_F32: return u.f;
    default: return u.d;
  }
}

/* ---- by-value arguments ------------------------------------------------------------------------ */

/* "1.5", "1,2,3" (components in order; matrices row by row), or "zeros". */
static int parse_value(const Param *p, const char *text, unsigned char *dst) {
  const Type *t = p->ty, *s = scalar_of(t);
  if (!strcmp(text, "zeros")) return EXIT_OK;
  if (t->kind == TY_STRUCT)
    return cli_bad_usage(
        "parameter '%s' is a struct: only 'zeros' can be given on the command line", p->name);
  int n = ncomp(t), i = 0;
  char *copy = strdup(text), *save = NULL;
  if (!copy) return cli_fail("out of memory");
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++)
    if (i >= n || !parse_scalar(s->kind, tok, dst + (size_t)i * (size_t)s->size)) {
      i = -1;
      break;
    }
  free(copy);
  if (i != n) {
    fprintf(stderr, "kernc: bad value '%s' for parameter '%s' (%s%s)\n", text, p->name,
            type_name(t), n > 1 ? ": give every component, separated by commas" : "");
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

/* ---- array arguments ----------------------------------------------------------------------------- */

static int parse_shape(const char *s, int ndim, int64_t *shape, const Param *p) {
  int n = 0;
  for (const char *c = s; *c; n++) {
    char *end;
    errno = 0;
    long long v = strtoll(c, &end, 10);
    if (end == c || (*end && *end != ',') || v < 0 || errno || n >= 4) n = 99;
    if (n == 99) break;
    shape[n] = v;
    c = *end ? end + 1 : end;
  }
  if (n != ndim) {
    fprintf(stderr,
            "kernc: bad shape '%s' for parameter '%s' (%s): give %d size%s, separated by commas\n",
            s, p->name, type_name(p->ty), ndim, ndim == 1 ? "" : "s");
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

/* ones: and range: fill every component with 1 or the element's linear index. */
static int fill_host(const Param *p, unsigned char *host, int64_t count, bool range) {
  const Type *t = elem_type(p), *s = scalar_of(t);
  if (t->kind == TY_STRUCT)
    return cli_bad_usage("parameter '%s' holds structs: use zeros: or file:", p->name);
  for (int64_t i = 0; i < count; i++)
    for (int c = 0; c < ncomp(t); c++)
      store_scalar(s->kind, range ? (double)i : 1.0,
                   host + (size_t)i * (size_t)t->size + (size_t)c * (size_t)s->size);
  return EXIT_OK;
}

static int make_array(Run *r, int i, int ndim, const int64_t *shape, const void *host) {
  const Param *p = &r->k->params[i];
  kern_array *a = kern_array_new(r->dev, p->dtype, ndim, shape);
  if (!a) return cli_fail("cannot make array '%s': %s", p->name, kern_last_error());
  r->args[i].array = a;
  if (host && kern_array_write(a, host, kern_array_nbytes(a)) != KERN_OK)
    return cli_fail("cannot fill array '%s': %s", p->name, kern_last_error());
  return EXIT_OK;
}

static int generated_array(Run *r, int i, const char *kind, const char *shape_text) {
  const Param *p = &r->k->params[i];
  int64_t shape[4], count = 1;
  int rc = parse_shape(shape_text, p->ndim, shape, p);
  if (rc) return rc;
  for (int d = 0; d < p->ndim; d++) count *= shape[d];
  if (!strcmp(kind, "zeros") || count == 0) return make_array(r, i, p->ndim, shape, NULL);
  size_t bytes = (size_t)count * (size_t)elem_type(p)->size;
  unsigned char *host = count > 0 && count < (1LL << 40) ? malloc(bytes) : NULL;
  if (!host) return cli_fail("array '%s' is too large", p->name);
  rc = fill_host(p, host, count, !strcmp(kind, "range"));
  if (rc == EXIT_OK) rc = make_array(r, i, p->ndim, shape, host);
  free(host);
  return rc;
}

/* Does the file's dtype and shape fit the parameter? The shape is the array's
 * plus the element's own dims (a vec3 array of n is (n, 3)). */
static bool file_fits(const Param *p, const NpyFile *f, char *why, size_t n) {
  const Type *t = elem_type(p);
  if (t->kind == TY_STRUCT) {
    char v[32];
    snprintf(v, sizeof v, "|V%d", t->size);
    if ((f->descr && strcmp(f->descr, v)) || f->itemsize != (size_t)t->size)
      return snprintf(why, n, "its dtype is not a %d-byte struct (%s)", t->size, type_name(t)),
             false;
    if (f->ndim != p->ndim)
      return snprintf(why, n, "it has %d dims, the parameter %d", f->ndim, p->ndim), false;
    return true;
  }
  int64_t ed[2];
  int ne = elem_dims(t, ed);
  const char *want = npy_scalar(scalar_of(t)->kind);
  if (!f->descr || strcmp(f->descr, want))
    return snprintf(why, n, "its dtype is %s, the parameter's elements need %s",
                    f->descr ? f->descr : "structured", want),
           false;
  bool ok = f->ndim == p->ndim + ne;
  for (int d = 0; ok && d < ne; d++) ok = f->shape[p->ndim + d] == ed[d];
  if (!ok)
    return snprintf(why, n, "its shape does not fit %s (%d array dims%s)", type_name(p->ty),
                    p->ndim, ne ? " plus the element's" : ""),
           false;
  return true;
}

static int file_array(Run *r, int i, const char *path) {
  const Param *p = &r->k->params[i];
  NpyFile f;
  char err[512];
  if (!npy_read(path, &f, err, sizeof err)) return cli_fail("%s: %s", path, err);
  int rc = EXIT_OK;
  if (!file_fits(p, &f, err, sizeof err))
    rc = cli_fail("%s does not fit parameter '%s' (%s): %s", path, p->name, type_name(p->ty), err);
  else
    rc = make_array(r, i, p->ndim, f.shape, f.nbytes ? f.data : NULL);
  npy_free(&f);
  return rc;
}

static int array_arg(Run *r, int i, const char *text) {
  const char *colon = strchr(text, ':');
  size_t n = colon ? (size_t)(colon - text) : 0;
  if (colon && n == 4 && !strncmp(text, "file", 4)) return file_array(r, i, colon + 1);
  if (colon && ((n == 5 && (!strncmp(text, "zeros", 5) || !strncmp(text, "range", 5))) ||
                (n == 4 && !strncmp(text, "ones", 4)))) {
    char kind[8];
    snprintf(kind, sizeof kind, "%.*s", (int)n, text);
    return generated_array(r, i, kind, colon + 1);
  }
  fprintf(
      stderr,
      "kernc: bad array '%s' for parameter '%s' (%s): use zeros:SHAPE, ones:SHAPE, range:SHAPE or file:PATH.npy\n",
      text, r->k->params[i].name, type_name(r->k->params[i].ty));
  return EXIT_USAGE;
}

/* ---- the arguments ------------------------------------------------------------------------------------- */

static int param_index(const Kernel *k, const char *name, size_t n) {
  for (int i = 0; i < k->nparams; i++)
    if (strlen(k->params[i].name) == n && !strncmp(k->params[i].name, name, n)) return i;
  return -1;
}

static int unknown_param(const Kernel *k, const char *arg) {
  fprintf(stderr,
          "kernc: kernel '%s' has no parameter named in --arg '%s'; its parameters:", k->name, arg);
  for (int i = 0; i < k->nparams; i++)
    fprintf(stderr, " %s %s%s", type_name(k->params[i].ty), k->params[i].name,
            i + 1 < k->nparams ? "," : "");
  fprintf(stderr, "%s\n", k->nparams ? "" : " none");
  return EXIT_USAGE;
}

static int assign_args(Run *r) {
  for (int j = 0; j < r->o->nargs; j++) {
    const char *a = r->o->args[j], *eq = strchr(a, '=');
    if (!eq) return cli_bad_usage("--arg needs NAME=VALUE, got '%s'", a);
    int i = param_index(r->k, a, (size_t)(eq - a));
    if (i < 0) return unknown_param(r->k, a);
    if (r->args[i].text) return cli_bad_usage("parameter given twice: '%s'", a);
    r->args[i].text = eq + 1;
  }
  for (int i = 0; i < r->k->nparams; i++)
    if (!r->args[i].text) {
      fprintf(stderr, "kernc: missing --arg %s=... for parameter '%s' (%s)\n", r->k->params[i].name,
              r->k->params[i].name, type_name(r->k->params[i].ty));
      return EXIT_USAGE;
    }
  return EXIT_OK;
}

static int make_args(Run *r, kern_arg *kargs) {
  for (int i = 0; i < r->k->nparams; i++) {
    const Param *p = &r->k->params[i];
    int rc;
    if (p->is_array) {
      rc = array_arg(r, i, r->args[i].text);
      kargs[i] = kern_arg_array(r->args[i].array);
    } else {
      r->args[i].value = calloc(1, p->size + 8);
      rc = r->args[i].value ? parse_value(p, r->args[i].text, r->args[i].value)
                            : cli_fail("out of memory");
      kargs[i] = kern_arg_bytes(p->dtype, r->args[i].value);
    }
    if (rc) return rc;
  }
  return EXIT_OK;
}

/* --dim, else the shape of the first array argument. */
static int launch_dims(const Run *r, kern_dims *dims) {
  memset(dims, 0, sizeof *dims);
  if (!r->o->dim) {
    for (int i = 0; i < r->k->nparams; i++)
      if (r->args[i].array) {
        dims->ndim = kern_array_ndim(r->args[i].array);
        for (int d = 0; d < dims->ndim; d++) dims->shape[d] = kern_array_shape(r->args[i].array, d);
        return EXIT_OK;
      }
    return cli_bad_usage("%s",
                         "kernel has no array parameter: give the launch dims with --dim=N[,M..]");
  }
  for (const char *c = r->o->dim; *c; dims->ndim++) {
    char *end;
    errno = 0;
    long long v = strtoll(c, &end, 10);
    if (end == c || (*end && *end != ',') || v < 0 || errno || dims->ndim == 4)
      return cli_bad_usage("bad --dim '%s' (expected 1 to 4 sizes such as 1024 or 64,64)",
                           r->o->dim);
    dims->shape[dims->ndim] = v;
    c = *end ? end + 1 : end;
  }
  return dims->ndim ? EXIT_OK : cli_bad_usage("%s", "--dim needs at least one size");
}

/* Does the array reach every index of the launch? Same rank: dim by dim;
 * another rank: by element count. */
static bool covers(const kern_array *a, const kern_dims *d, int64_t total) {
  if (kern_array_ndim(a) != d->ndim) return kern_array_size(a) >= total;
  for (int k = 0; k < d->ndim; k++)
    if (kern_array_shape(a, k) < d->shape[k]) return false;
  return true;
}

static void dims_text(char *buf, size_t n, int ndim, const int64_t *shape) {
  size_t at = 0;
  for (int k = 0; k < ndim && at < n; k++)
    at += (size_t)snprintf(buf + at, n - at, "%s%lld", k ? "," : "", (long long)shape[k]);
}

/* kernc run is for exploring: a launch that no array argument covers would
 * index past them all in a kernel that indexes by tid(), so it is refused
 * (--release launches anyway). Kernels without arrays are not checked. */
static int check_dims(const Run *r, const kern_dims *d) {
  int64_t total = 1;
  for (int k = 0; k < d->ndim; k++) total *= d->shape[k];
  int big = -1;
  for (int i = 0; i < r->k->nparams; i++) {
    const kern_array *a = r->args[i].array;
    if (!a) continue;
    if (r->o->release || total == 0 || covers(a, d, total)) return EXIT_OK;
    if (big < 0 || kern_array_size(a) > kern_array_size(r->args[big].array)) big = i;
  }
  if (big < 0) return EXIT_OK;
  const kern_array *a = r->args[big].array;
  int64_t shape[4];
  for (int k = 0; k < kern_array_ndim(a); k++) shape[k] = kern_array_shape(a, k);
  char want[96], have[96];
  dims_text(want, sizeof want, d->ndim, d->shape);
  dims_text(have, sizeof have, kern_array_ndim(a), shape);
  fprintf(stderr,
          "kernc: launch dims %s are larger than every array argument (the largest is '%s', "
          "shape %s):\na kernel indexing its arrays by tid() would go past their ends. Give "
          "--dim=%s or less, or --release to launch anyway.\n",
          want, r->k->params[big].name, have, have);
  return EXIT_USAGE;
}

/* ---- crashes --------------------------------------------------------------------------------- */

/* A kernel that crashes the process (--release turns the bounds checks off;
 * an integer division by zero traps either way) gets a message, not a bare
 * "Segmentation fault". Async-signal-safe: write and _exit only. */
static const char *crash_hint;

static void on_crash(int sig) {
  const char *what = sig == SIGSEGV  ? "a segmentation fault (SIGSEGV)"
                     : sig == SIGBUS ? "a bus error (SIGBUS)"
                     : sig == SIGFPE
                         ? "an arithmetic trap (SIGFPE), e.g. an integer division by zero"
                         : "an illegal instruction (SIGILL)";
  const char *parts[] = {"kernc: the kernel crashed the process: ", what, ".\n", crash_hint};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    if (write(2, parts[i], strlen(parts[i])) < 0) break;
  _exit(EXIT_USER);
}

static void catch_crashes(bool release) {
  crash_hint = release ? "It ran with --release: run it without --release (debug mode, the "
                         "default) to have every index checked and the bad one named.\n"
                       : "Debug mode was on; the bounds checks did not see this fault.\n";
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
}

/* ---- output ---------------------------------------------------------------------------------------------- */

static void fmt_value(Buf *b, const Type *t, const unsigned char *p) {
  if (t->kind == TY_STRUCT) {
    const Decl *s = t->sdecl;
    buf_add(b, "{", 1);
    for (int f = 0; f < s->nfields; f++) {
      buf_printf(b, "%s%s=", f ? ", " : "", s->fields[f].name);
      fmt_value(b, s->fields[f].ty, p + s->fields[f].offset);
    }
    buf_add(b, "}", 1);
  } else if (t->kind == TY_MAT) {
    for (int row = 0; row < t->n; row++) {
      buf_add(b, row ? ", (" : "((", 2 + (row > 0));
      for (int c = 0; c < t->n; c++)
        buf_printf(b, "%s%g", c ? ", " : "", load_scalar(TY_F32, p + 4 * (row * t->n + c)));
      buf_add(b, ")", 1);
    }
    buf_add(b, ")", 1);
  } else if (is_row(t)) {
    const Type *s = scalar_of(t);
    for (int c = 0; c < ncomp(t); c++)
      buf_printf(b, "%s%.9g", c ? ", " : "(",
                 load_scalar(s->kind, p + (size_t)c * (size_t)s->size));
    buf_add(b, ")", 1);
  } else if (t->kind == TY_BOOL)
    buf_printf(b, "%s", *p ? "true" : "false");
  else if (t->kind == TY_U64) {
    uint64_t v;
    memcpy(&v, p, 8);
    buf_printf(b, "%llu", (unsigned long long)v);
  } else if (t->kind == TY_I64) {
    int64_t v;
    memcpy(&v, p, 8);
    buf_printf(b, "%lld", (long long)v);
  } else
    buf_printf(b, "%.9g", load_scalar(t->kind, p));
}

static void print_stats(const Type *t, const unsigned char *host, int64_t count) {
  const Type *s = scalar_of(t);
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0, n = count * ncomp(t);
  for (int64_t i = 0; i < n; i++) {
    double v = load_scalar(s->kind, host + (size_t)i * (size_t)s->size);
    if (isnan(v)) {
      nans++;
      continue;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sum += v;
  }
  if (n > nans) printf("  min %.9g  max %.9g  mean %.9g", lo, hi, sum / (double)(n - nans));
  if (nans) printf("  (%lld NaN)", (long long)nans);
  printf("\n");
}

static void print_array(const Param *p, const kern_array *a, const unsigned char *host) {
  const Type *t = elem_type(p);
  int64_t count = kern_array_size(a);
  printf("%s: %s[", p->name, type_name(t));
  for (int d = 0; d < p->ndim; d++)
    printf("%s%lld", d ? "," : "", (long long)kern_array_shape(a, d));
  printf("]\n");
  if (count > 0 && t->kind != TY_STRUCT) print_stats(t, host, count);
  int show = t->kind == TY_STRUCT ? 3 : ncomp(t) > 1 ? 4 : 8;
  Buf b = {0};
  for (int64_t i = 0; i < count && i < show; i++) {
    buf_add(&b, i ? ", " : "  [", i ? 2 : 3);
    fmt_value(&b, t, host + (size_t)i * (size_t)t->size);
  }
  if (count > show) buf_add(&b, ", ...", 5);
  if (count > 0) printf("%s]\n", b.s ? b.s : "");
  buf_free(&b);
}

/* A structured NumPy dtype with the C layout: explicit padding fields. */
static void struct_descr(Buf *b, const Type *t) {
  const Decl *s = t->sdecl;
  int at = 0;
  buf_add(b, "[", 1);
  for (int f = 0; f < s->nfields; f++) {
    const Type *ft = s->fields[f].ty;
    if (s->fields[f].offset > at) buf_printf(b, "('', '|V%d'), ", s->fields[f].offset - at);
    buf_printf(b, "('%s', ", s->fields[f].name);
    int64_t ed[2] = {1, 1};
    int ne = elem_dims(ft, ed);
    if (ft->kind == TY_STRUCT)
      struct_descr(b, ft);
    else
      buf_printf(b, "'%s'", npy_scalar(scalar_of(ft)->kind));
    if (ne == 1) buf_printf(b, ", (%lld,)", (long long)ed[0]);
    if (ne == 2) buf_printf(b, ", (%lld, %lld)", (long long)ed[0], (long long)ed[1]);
    buf_add(b, "), ", 3);
    at = s->fields[f].offset + ft->size;
  }
  if (t->size > at) buf_printf(b, "('', '|V%d'), ", t->size - at);
  if (b->len >= 2 && b->s[b->len - 2] == ',') b->len -= 2; /* the last ", " */
  buf_add(b, "]", 1);
}

static int write_npy(const Run *r, int i, const unsigned char *host) {
  const Param *p = &r->k->params[i];
  const Type *t = elem_type(p);
  int64_t shape[6], ed[2] = {1, 1};
  int nd = p->ndim, ne = elem_dims(t, ed);
  for (int d = 0; d < nd; d++) shape[d] = kern_array_shape(r->args[i].array, d);
  for (int d = 0; d < ne; d++) shape[nd + d] = ed[d];
  Buf descr = {0};
  if (t->kind == TY_STRUCT)
    struct_descr(&descr, t);
  else
    buf_printf(&descr, "'%s'", npy_scalar(scalar_of(t)->kind));
  char *path = str_printf("%s/%s.npy", r->o->out_dir, p->name), err[512];
  int rc = EXIT_OK;
  if (!path || descr.oom)
    rc = cli_fail("out of memory");
  else if (!npy_write(path, descr.s, nd + ne, shape, host, kern_array_nbytes(r->args[i].array), err,
                      sizeof err))
    rc = cli_fail("%s: %s", path, err);
  else if (!r->o->quiet)
    printf("wrote %s\n", path);
  free(path);
  buf_free(&descr);
  return rc;
}

static int output(const Run *r) {
  if (r->o->out_dir && mkdir(r->o->out_dir, 0777) != 0 && errno != EEXIST)
    return cli_fail("cannot create '%s': %s", r->o->out_dir, strerror(errno));
  for (int i = 0; i < r->k->nparams; i++) {
    kern_array *a = r->args[i].array;
    if (!a) continue;
    size_t n = kern_array_nbytes(a);
    unsigned char *host = malloc(n + 1);
    if (!host) return cli_fail("out of memory reading '%s'", r->k->params[i].name);
    int rc = kern_array_read(a, host, n)
                 ? cli_fail("cannot read '%s': %s", r->k->params[i].name, kern_last_error())
             : r->o->out_dir ? write_npy(r, i, host)
                             : (print_array(&r->k->params[i], a, host), EXIT_OK);
    free(host);
    if (rc) return rc;
  }
  return EXIT_OK;
}

/* ---- the command ------------------------------------------------------------------------------------------------ */

static int launch(Run *r) {
  int n = r->k->nparams, rc;
  kern_arg *kargs = calloc((size_t)n + 1, sizeof *kargs);
  r->args = calloc((size_t)n + 1, sizeof *r->args);
  if (!kargs || !r->args)
    rc = cli_fail("out of memory");
  else
    rc = assign_args(r);
  if (rc == EXIT_OK) rc = make_args(r, kargs);
  kern_dims dims;
  if (rc == EXIT_OK) rc = launch_dims(r, &dims);
  if (rc == EXIT_OK) rc = check_dims(r, &dims);
  if (rc == EXIT_OK) catch_crashes(r->o->release);
  if (rc == EXIT_OK &&
      (kern_launch(r->k->handle, r->dev, dims, n, kargs) || kern_device_synchronize(r->dev)))
    rc = cli_fail("launch of kernel '%s' on %s failed: %s", r->k->name, kern_device_name(r->dev),
                  kern_last_error());
  if (rc == EXIT_OK) rc = output(r);
  for (int i = 0; r->args && i < n; i++) {
    kern_array_free(r->args[i].array);
    free(r->args[i].value);
  }
  free(r->args);
  free(kargs);
  return rc;
}

/* The kernel's parameters from the front end; the module was loaded from the
 * same file (the one kern_module_load found), so it checks. NULL (after a message) when it does not any more. */
static Program *describe(Kernel *k, const char *file) {
  FrontResult fr = front_compile(file, NULL, 0);
  if (!fr.prog) return cli_fail("out of memory"), NULL;
  const Decl *d = NULL;
  for (int i = 0; fr.ok && i < fr.prog->nkernels; i++)
    if (!strcmp(fr.prog->kernels[i]->name, k->name)) d = fr.prog->kernels[i];
  if (!d || !(k->params = calloc((size_t)d->nparams + 1, sizeof *k->params))) {
    d ? cli_fail("out of memory") : cli_fail("'%s' changed while kernc read it", file);
    front_free(fr.prog);
    return NULL;
  }
  k->nparams = d->nparams;
  for (int i = 0; i < d->nparams; i++) {
    const Var *v = d->params[i];
    size_t align;
    k->params[i] = (Param){.name = v->name,
                           .ty = v->ty,
                           .is_array = v->ty->kind == TY_ARRAY,
                           .ndim = kern_kernel_param_ndim(k->handle, i),
                           .dtype = kern_kernel_param_dtype(k->handle, i),
                           .size = emit_param_size(v->ty, &align)};
  }
  return fr.prog;
}

static int run_kernel(Run *r, kern_kernel *handle) {
  Kernel k = {.handle = handle, .name = kern_kernel_name(handle)};
  Program *prog = describe(&k, kern_module_name(r->mod)); /* the file found (KERN_PATH) */
  if (!prog) return EXIT_USER;
  r->k = &k;
  int rc = launch(r);
  free(k.params);
  front_free(prog);
  return rc;
}

/* --device: a name that is not a device name is bad usage, a device that
 * is not there a user error; both list the devices there are. */
static int pick_device(Run *r) {
  if ((r->dev = kern_device_get(r->o->device ? r->o->device : "cpu"))) return EXIT_OK;
  bool bad_name = kern_last_status() == KERN_ERR_INVALID_ARGUMENT;
  fprintf(stderr, "kernc: %s\nkernc: the devices here:", kern_last_error());
  for (int i = 0; i < kern_device_count(); i++)
    fprintf(stderr, "%s %s", i ? "," : "", kern_device_name(kern_device_at(i)));
  fprintf(stderr, "%s\n", bad_name ? " (run 'kernc run --help' for usage)" : "");
  return bad_name ? EXIT_USAGE : EXIT_USER;
}

/* The library's log: a module's warnings always (run is for exploring: the
 * warning may explain the result), the module lines when KERN_LOG asks. */
static void print_log(kern_log_level level, const char *msg, void *ud) {
  (void)ud;
  fprintf(stderr, "%s%s\n", level == KERN_LOG_INFO ? "kern: " : "", msg);
}

int cli_run(const Options *o) {
  if (o->nfiles != 2) return cli_bad_usage("%s", "run needs FILE.kern and a KERNEL name");
  if (o->release && o->debug) return cli_bad_usage("%s", "--release and --debug contradict");
  Run r = {.o = o};
  if (kern_init()) return cli_fail("%s", kern_last_error());
  kern_log_level level = kern_get_log_level();
  kern_set_log_handler(print_log, NULL, level > KERN_LOG_WARNING ? level : KERN_LOG_WARNING);
  kern_set_debug(!o->release); /* safe by default: every index checked */
  int rc = pick_device(&r);
  if (rc) return rc;
  if (!(r.mod = kern_module_load(o->files[0]))) {
    fprintf(stderr, "%s%s", kern_last_error(), kern_last_status() == KERN_ERR_COMPILE ? "" : "\n");
    return EXIT_USER;
  }
  kern_kernel *k = kern_module_kernel(r.mod, o->files[1]);
  rc = k ? run_kernel(&r, k) : cli_fail("%s", kern_last_error());
  kern_module_free(r.mod);
  kern_shutdown();
  return rc;
}
