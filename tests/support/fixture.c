/* fixture.c: parses and runs the run fixtures described in fixture.h. */
#include "fixture.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef enum { C_BOOL, C_I8, C_I16, C_I32, C_I64, C_U8, C_U16, C_U32, C_U64, C_F32, C_F64 } Comp;

typedef struct DtypeName {
  const char *name;
  kern_dtype dtype;
  int ncomp;
  Comp comp;
} DtypeName;

static const DtypeName dtypes[] = {
    {"bool", KERN_BOOL, 1, C_BOOL},
    {"int8", KERN_INT8, 1, C_I8},
    {"int16", KERN_INT16, 1, C_I16},
    {"int32", KERN_INT32, 1, C_I32},
    {"int", KERN_INT32, 1, C_I32},
    {"int64", KERN_INT64, 1, C_I64},
    {"uint8", KERN_UINT8, 1, C_U8},
    {"uint16", KERN_UINT16, 1, C_U16},
    {"uint32", KERN_UINT32, 1, C_U32},
    {"uint", KERN_UINT32, 1, C_U32},
    {"uint64", KERN_UINT64, 1, C_U64},
    {"float32", KERN_FLOAT32, 1, C_F32},
    {"float", KERN_FLOAT32, 1, C_F32},
    {"float64", KERN_FLOAT64, 1, C_F64},
    {"float16", KERN_FLOAT16, 1, C_U16}, /* values are the bits */
    {"bfloat16", KERN_BFLOAT16, 1, C_U16},
    {"double", KERN_FLOAT64, 1, C_F64},
    {"vec2", KERN_VEC2, 2, C_F32},
    {"vec3", KERN_VEC3, 3, C_F32},
    {"vec4", KERN_VEC4, 4, C_F32},
    {"dvec2", KERN_DVEC2, 2, C_F64},
    {"dvec3", KERN_DVEC3, 3, C_F64},
    {"dvec4", KERN_DVEC4, 4, C_F64},
    {"ivec2", KERN_IVEC2, 2, C_I32},
    {"ivec3", KERN_IVEC3, 3, C_I32},
    {"ivec4", KERN_IVEC4, 4, C_I32},
    {"mat22", KERN_MAT22, 4, C_F32},
    {"mat33", KERN_MAT33, 9, C_F32},
    {"mat44", KERN_MAT44, 16, C_F32},
    {"quat", KERN_QUAT, 4, C_F32},
    {"quath", KERN_QUATH, 4, C_U16}, /* values are the bits */
    {"quat<bfloat16>", KERN_QUATBF16, 4, C_U16},
    {"quatd", KERN_QUATD, 4, C_F64},
    {"transform", KERN_TRANSFORM, 7, C_F32},
    {"spatial_vector", KERN_SPATIAL_VECTOR, 6, C_F32},
    {"spatial_matrix", KERN_SPATIAL_MATRIX, 36, C_F32},
};

static const DtypeName *dtype_by_name(const char *s, size_t n);

/* A vec<T, N> dtype (kern_dtype_vec) answers with T's entry: its components. */
static const DtypeName *find_dtype(kern_dtype d) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].dtype == d) return &dtypes[i];
  const char *name = kern_dtype_name(d); /* "vec<T, N>" or "mat<T, M, N>" */
  if (strncmp(name, "vec<", 4) != 0 && strncmp(name, "mat<", 4) != 0) return NULL;
  return dtype_by_name(name + 4, strcspn(name + 4, ","));
}

/* "vec<T,N>" or "mat<T,M,N>" (no spaces) in a fixture line: its dtype and
 * component count, or false. */
static bool vecn_dtype(const char *t, size_t *len, kern_dtype *dt, int *n) {
  bool mat = strncmp(t, "mat<", 4) == 0;
  if (!mat && strncmp(t, "vec<", 4) != 0) return false;
  size_t en = strcspn(t + 4, ",>");
  const DtypeName *e = dtype_by_name(t + 4, en);
  if (!e || t[4 + en] != ',') return false;
  char *end;
  int rows = (int)strtol(t + 5 + en, &end, 10), cols = 1;
  if (mat && *end == ',') cols = (int)strtol(end + 1, &end, 10);
  if (*end != '>') return false;
  *dt = mat ? kern_dtype_mat(e->dtype, rows, cols) : kern_dtype_vec(e->dtype, rows);
  *n = rows * cols;
  *len = (size_t)(end + 1 - t);
  return *dt != KERN_DTYPE_INVALID;
}

static const DtypeName *dtype_by_name(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strlen(dtypes[i].name) == n && strncmp(dtypes[i].name, s, n) == 0) return &dtypes[i];
  return NULL;
}

int64_t fx_count(const FxArg *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

static bool fail(Fixture *f, const char *msg, const char *line) {
  snprintf(f->error, sizeof f->error, "%s: %s in: %.80s", f->path, msg, line);
  return false;
}

/* Parses whitespace-separated numbers (ints exactly, floats, inf, nan). */
static long double *parse_values(const char *s, int64_t *n) {
  int64_t cap = 16;
  long double *v = malloc(cap * sizeof *v);
  *n = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s || *s == '\n') break;
    char *end;
    long double x = strtold(s, &end);
    if (end == s) {
      free(v);
      return NULL;
    }
    if (*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[(*n)++] = x;
    s = end;
  }
  return v;
}

/* "NAME: DTYPE[N,M] = values" or "NAME: DTYPE = values" */
static bool parse_arg(Fixture *f, int kind, const char *line) {
  if (f->nargs == FX_MAX_ARGS) return fail(f, "too many arguments", line);
  FxArg *a = &f->args[f->nargs++];
  a->kind = kind;
  const char *colon = strchr(line, ':');
  if (!colon || colon - line >= FX_MAX_NAME) return fail(f, "expected NAME:", line);
  memcpy(a->name, line, (size_t)(colon - line));
  const char *t = colon + 1;
  while (*t == ' ') t++;
  size_t tn = strcspn(t, "[ =\n");
  const DtypeName *dn = dtype_by_name(t, tn);
  if (vecn_dtype(t, &tn, &a->dtype, &a->ncomp)) {
    /* vec<T,N>: dtype and components set */
  } else if (dn) {
    a->dtype = dn->dtype;
    a->ncomp = dn->ncomp;
  } else {
    return fail(f, "unknown dtype", line);
  }
  t += tn;
  if (*t == '[') {
    for (t++; a->ndim < 4 && isdigit((unsigned char)*t);) {
      a->shape[a->ndim++] = strtoll(t, (char **)&t, 10);
      if (*t == ',') t++;
    }
    if (*t++ != ']') return fail(f, "bad shape", line);
  } else if (kind != 'a')
    return fail(f, "arrays need a shape", line);
  while (*t == ' ') t++;
  if (*t != '=') return kind == 'a' ? fail(f, "a value is required", line) : true;
  t++;
  while (*t == ' ') t++;
  if (strncmp(t, "iota", 4) == 0) {
    a->iota = true;
    return true;
  }
  a->init = parse_values(t, &a->ninit);
  int64_t want = (kind == 'a' ? 1 : fx_count(a)) * a->ncomp;
  if (!a->init || a->ninit != want) return fail(f, "wrong number of values", line);
  return true;
}

static bool parse_expect(Fixture *f, const char *line) {
  const char *colon = strchr(line, ':');
  if (!colon) return fail(f, "expected NAME:", line);
  for (int i = 0; i < f->nargs; i++) {
    FxArg *a = &f->args[i];
    if (strlen(a->name) != (size_t)(colon - line) || strncmp(a->name, line, (size_t)(colon - line)))
      continue;
    a->expect = parse_values(colon + 1, &a->nexpect);
    if (!a->expect || a->nexpect != fx_count(a) * a->ncomp)
      return fail(f, "wrong number of expected values", line);
    return true;
  }
  return fail(f, "expect for an unknown array", line);
}

static bool parse_launch(Fixture *f, const char *line) {
  size_t n = strcspn(line, " ");
  if (n == 0 || n >= FX_MAX_NAME) return fail(f, "bad launch", line);
  memcpy(f->kernel, line, n);
  const char *t = line + n;
  f->dims.ndim = 0;
  while (f->dims.ndim < 4) {
    while (*t == ' ' || *t == ',') t++;
    if (!isdigit((unsigned char)*t)) break;
    f->dims.shape[f->dims.ndim++] = strtoll(t, (char **)&t, 10);
  }
  for (int d = f->dims.ndim; d < 4; d++) f->dims.shape[d] = 1;
  return f->dims.ndim > 0 ? true : fail(f, "launch needs dims", line);
}

static kern_status status_by_name(const char *s) {
  for (int st = KERN_OK; st <= KERN_ERR_IO; st++)
    if (strncmp(s, kern_status_name((kern_status)st), strlen(kern_status_name((kern_status)st))) ==
        0)
      return (kern_status)st;
  return KERN_OK;
}

static bool parse_directive(Fixture *f, const char *d) {
  if (strncmp(d, "launch: ", 8) == 0) return parse_launch(f, d + 8);
  if (strncmp(d, "in ", 3) == 0) return parse_arg(f, 'i', d + 3);
  if (strncmp(d, "out ", 4) == 0) return parse_arg(f, 'o', d + 4);
  if (strncmp(d, "arg ", 4) == 0) return parse_arg(f, 'a', d + 4);
  if (strncmp(d, "expect ", 7) == 0) return parse_expect(f, d + 7);
  if (strncmp(d, "tol: ", 5) == 0) {
    f->tol = strtod(d + 5, NULL);
    return true;
  }
  if (strncmp(d, "debug", 5) == 0) {
    f->debug = true;
    return true;
  }
  if (strncmp(d, "verify_fp", 9) == 0) {
    f->verify_fp = true;
    return true;
  }
  if (strncmp(d, "expect-status: ", 15) == 0) {
    f->expect_status = status_by_name(d + 15);
    return true;
  }
  if (strncmp(d, "expect-message: ", 16) == 0) {
    snprintf(f->expect_message, sizeof f->expect_message, "%.*s", (int)strcspn(d + 16, "\n"),
             d + 16);
    return true;
  }
  return true; /* other comments are prose */
}

bool fx_parse(Fixture *f, const char *path) {
  memset(f, 0, sizeof *f);
  snprintf(f->path, sizeof f->path, "%s", path);
  f->tol = 1e-6;
  f->src = th_read_file(path, NULL);
  if (!f->src) return fail(f, "cannot read", path);
  for (const char *l = f->src; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *c = l;
    while (*c == ' ') c++;
    if (strncmp(c, "// ", 3) != 0) continue;
    char line[4096];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(c + 3, "\n"), c + 3);
    if (!parse_directive(f, line)) return false;
  }
  return f->kernel[0] ? true : fail(f, "no launch line", "");
}

void fx_free(Fixture *f) {
  for (int i = 0; i < f->nargs; i++) {
    free(f->args[i].init);
    free(f->args[i].expect);
  }
  free(f->src);
}

/* ---- values <-> bytes ----------------------------------------------------------- */

static size_t comp_size(Comp c) {
  static const size_t s[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
  return s[c];
}

static void put(Comp c, void *p, long double v) {
  switch (c) {
    case C_BOOL: *(uint8_t *)p = (uint8_t)v; break; /* the byte as written: 2 stays 2 */
    case C_I8: *(int8_t *)p = (int8_t)v; break;
    case C_I16: *(int16_t *)p = (int16_t)v; break;
    case C_I32: *(int32_t *)p = (int32_t)v; break;
    case C_I64: *(int64_t *)p = (int64_t)v; break;
    case C_U8: *(uint8_t *)p = (uint8_t)v; break;
    case C_U16: *(uint16_t *)p = (uint16_t)v; break;
    case C_U32: *(uint32_t *)p = (uint32_t)v; break;
    case C_U64: *(uint64_t *)p = (uint64_t)v; break;
    case C_F32: *(float *)p = (float)v; break;
    case C_F64: *(double *)p = (double)v; break;
  }
}

static long double get(Comp c, const void *p) {
  switch (c) {
    case C_BOOL: return *(const uint8_t *)p;
    case C_I8: return *(const int8_t *)p;
    case C_I16: return *(const int16_t *)p;
    case C_I32: return *(const int32_t *)p;
    case C_I64: return *(const int64_t *)p;
    case C_U8: return *(const uint8_t *)p;
    case C_U16: return *(const uint16_t *)p;
    case C_U32: return *(const uint32_t *)p;
    case C_U64: return *(const uint64_t *)p;
    case C_F32: return *(const float *)p;
    case C_F64: return *(const double *)p;
  }
  return 0;
}

/* The bytes of an argument's initial contents (components in order). */
static unsigned char *initial_bytes(const FxArg *a, int64_t count, size_t *nbytes) {
  const DtypeName *dn = find_dtype(a->dtype);
  size_t cs = comp_size(dn->comp);
  *nbytes = (size_t)(count * a->ncomp) * cs;
  unsigned char *b = calloc(1, *nbytes + 1);
  for (int64_t i = 0; i < count * a->ncomp; i++)
    put(dn->comp, b + (size_t)i * cs, a->iota ? (long double)i : a->init ? a->init[i] : 0);
  return b;
}

static kern_status make_arg(const FxArg *a, kern_device *dev, kern_arg *out, kern_array **arr) {
  size_t nbytes;
  if (a->kind == 'a') {
    unsigned char *b = initial_bytes(a, 1, &nbytes);
    *out = kern_arg_bytes(a->dtype, b);
    free(b);
    return KERN_OK;
  }
  *arr = kern_array_new(dev, a->dtype, a->ndim, a->shape);
  if (!*arr) return KERN_ERR_OUT_OF_MEMORY;
  unsigned char *b = initial_bytes(a, fx_count(a), &nbytes);
  kern_status s = kern_array_write(*arr, b, nbytes);
  free(b);
  *out = kern_arg_array(*arr);
  return s;
}

static long double *read_back(const FxArg *a, kern_array *arr) {
  const DtypeName *dn = find_dtype(a->dtype);
  size_t cs = comp_size(dn->comp), n = (size_t)(fx_count(a) * a->ncomp);
  unsigned char *b = malloc(n * cs + 1);
  long double *v = malloc((n + 1) * sizeof *v);
  if (kern_array_read(arr, b, n * cs) != KERN_OK) {
    free(b);
    free(v);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) v[i] = get(dn->comp, b + i * cs);
  free(b);
  return v;
}

kern_status fx_run(const Fixture *f, kern_device *dev, long double *results[FX_MAX_ARGS], char *msg,
                   size_t msgn) {
  kern_arg args[FX_MAX_ARGS];
  kern_array *arrs[FX_MAX_ARGS] = {0};
  kern_set_debug(f->debug);
  kern_module *m = kern_module_from_source(f->path, f->src);
  kern_set_debug(false);
  kern_status s = m ? KERN_OK : KERN_ERR_COMPILE;
  if (m && f->verify_fp) s = kern_module_set_verify_fp(m, true);
  kern_kernel *k = m ? kern_module_kernel(m, f->kernel) : NULL;
  if (m && !k) s = KERN_ERR_NOT_FOUND;
  for (int i = 0; s == KERN_OK && i < f->nargs; i++)
    s = make_arg(&f->args[i], dev, &args[i], &arrs[i]);
  if (s == KERN_OK) s = kern_launch(k, dev, f->dims, f->nargs, args);
  if (s == KERN_OK) s = kern_device_synchronize(dev);
  snprintf(msg, msgn, "%s", s ? kern_last_error() : "");
  for (int i = 0; i < f->nargs; i++) {
    results[i] = s == KERN_OK && f->args[i].kind == 'o' ? read_back(&f->args[i], arrs[i]) : NULL;
    kern_array_free(arrs[i]);
  }
  kern_module_free(m);
  return s;
}

static bool is_float_arg(const FxArg *a) {
  Comp c = find_dtype(a->dtype)->comp;
  return c == C_F32 || c == C_F64;
}

static bool close_enough(long double got, long double want, double tol) {
  if (isnan((double)want)) return isnan((double)got);
  if (isinf((double)want)) return got == want;
  long double scale = fabsl(want) > 1 ? fabsl(want) : 1;
  return fabsl(got - want) <= tol * scale;
}

static bool compare(const FxArg *a, const long double *got, const long double *want, double tol,
                    const char *what, char *report, size_t n) {
  int64_t count = fx_count(a) * a->ncomp, bad = 0;
  for (int64_t i = 0; i < count; i++) {
    bool ok = is_float_arg(a) ? close_enough(got[i], want[i], tol) : got[i] == want[i];
    if (ok || bad++ >= 3) continue;
    size_t len = strlen(report);
    snprintf(report + len, n - len, "  %s[%lld]: got %.17Lg, %s %.17Lg\n", a->name, (long long)i,
             got[i], what, want[i]);
  }
  return bad == 0;
}

bool fx_check(const Fixture *f, long double *results[FX_MAX_ARGS], char *report, size_t n) {
  bool ok = true;
  for (int i = 0; i < f->nargs; i++)
    if (f->args[i].expect && results[i])
      ok &= compare(&f->args[i], results[i], f->args[i].expect, f->tol, "expected", report, n);
  return ok;
}

bool fx_compare(const Fixture *f, long double *a[FX_MAX_ARGS], long double *b[FX_MAX_ARGS],
                double tol, char *report, size_t n) {
  bool ok = true;
  for (int i = 0; i < f->nargs; i++)
    if (a[i] && b[i])
      ok &= compare(&f->args[i], a[i], b[i], tol, "the other device gave", report, n);
  return ok;
}

/* Runs one fixture on dev; returns a failure report or NULL (malloc'd). */
char *fx_run_report(const char *path, kern_device *dev, long double *results[FX_MAX_ARGS]) {
  Fixture f;
  char *report = calloc(1, 8192), msg[4096];
  if (!fx_parse(&f, path)) {
    snprintf(report, 8192, "%s\n", f.error);
    fx_free(&f);
    return report;
  }
  kern_status s = fx_run(&f, dev, results, msg, sizeof msg);
  if (s != f.expect_status)
    snprintf(report, 8192, "%s on %s: status %s, expected %s\n%s\n", path, kern_device_name(dev),
             kern_status_name(s), kern_status_name(f.expect_status), msg);
  else if (f.expect_message[0] && !strstr(msg, f.expect_message))
    snprintf(report, 8192, "%s: message lacks '%s':\n%s\n", path, f.expect_message, msg);
  else if (s == KERN_OK) {
    snprintf(report, 8192, "%s on %s: wrong values\n", path, kern_device_name(dev));
    if (fx_check(&f, results, report, 8192)) report[0] = 0;
  }
  fx_free(&f);
  if (!report[0]) {
    free(report);
    return NULL;
  }
  return report;
}
