/* npy.c: NumPy .npy files: the magic, a header that is a Python dict literal
 * ({'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }), then the data.
 *
 * Requires: nothing but libc. Produces: npy_read, npy_write.
 * Breaks: only little-endian data in C order (kern arrays are C-ordered on
 * little-endian hosts); big-endian dtypes and Fortran order are refused with
 * a message that says how to convert. The header is parsed as the small Python
 * literal subset NumPy writes (strings, ints, booleans, None, tuples, lists,
 * dicts), with a depth limit. Written files appear whole (temp + rename).
 */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the header's Python literal ------------------------------------------------ */

typedef enum { PY_STR, PY_INT, PY_BOOL, PY_NONE, PY_SEQ, PY_DICT } PyKind;

typedef struct PyVal {
  PyKind kind;
  char *s;     /* STR */
  long long i; /* INT, BOOL */
  int n;       /* SEQ: items; DICT: 2 * pairs (v holds key, value, key, value ...) */
  struct PyVal *v;
} PyVal;

typedef struct Parser {
  const char *p, *end;
  int depth;
  bool bad;
} Parser;

enum { MAX_DEPTH = 16 };

static void py_free(PyVal *v) {
  for (int i = 0; i < v->n; i++) py_free(&v->v[i]);
  free(v->v);
  free(v->s);
}

static void skip_ws(Parser *P) {
  while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r')) P->p++;
}

static bool eat(Parser *P, char c) {
  skip_ws(P);
  if (P->p < P->end && *P->p == c) {
    P->p++;
    return true;
  }
  return false;
}

static bool parse_value(Parser *P, PyVal *out);

static bool parse_string(Parser *P, PyVal *out) {
  char q = *P->p++;
  const char *start = P->p;
  while (P->p < P->end && *P->p != q) P->p += *P->p == '\\' && P->p + 1 < P->end ? 2 : 1;
  if (P->p >= P->end) return false;
  out->kind = PY_STR;
  out->s = malloc((size_t)(P->p - start) + 1);
  if (!out->s) return false;
  size_t n = 0;
  for (const char *c = start; c < P->p; c++) out->s[n++] = *c == '\\' ? *++c : *c;
  out->s[n] = 0;
  P->p++;
  return true;
}

/* Parses one more item into out->v (grown as needed). */
static bool add_item(Parser *P, PyVal *out, int *cap) {
  if (out->n == *cap) {
    int ncap = *cap ? *cap * 2 : 8;
    PyVal *v = realloc(out->v, (size_t)ncap * sizeof *v);
    if (!v) return false;
    out->v = v;
    *cap = ncap;
  }
  memset(&out->v[out->n], 0, sizeof *out->v);
  out->n++;
  return parse_value(P, &out->v[out->n - 1]);
}

/* ( ... ) and [ ... ], trailing comma allowed; {k: v, ...} as pairs. */
static bool parse_items(Parser *P, PyVal *out, char close, bool dict) {
  out->kind = dict ? PY_DICT : PY_SEQ;
  int cap = 0;
  while (!eat(P, close)) {
    if (!add_item(P, out, &cap)) return false;
    if (dict && (!eat(P, ':') || !add_item(P, out, &cap))) return false;
    if (!eat(P, ',')) return eat(P, close);
  }
  return true;
}

static bool parse_word(Parser *P, PyVal *out) {
  static const struct {
    const char *w;
    PyKind k;
    int v;
  } words[] = {{"True", PY_BOOL, 1}, {"False", PY_BOOL, 0}, {"None", PY_NONE, 0}};
  for (size_t i = 0; i < 3; i++) {
    size_t n = strlen(words[i].w);
    if ((size_t)(P->end - P->p) >= n && !strncmp(P->p, words[i].w, n)) {
      P->p += n;
      out->kind = words[i].k;
      out->i = words[i].v;
      return true;
    }
  }
  char *end;
  errno = 0;
  out->kind = PY_INT;
  out->i = strtoll(P->p, &end, 10);
  if (end == P->p || end > P->end || errno) return false;
  P->p = end;
  return true;
}

static bool parse_value(Parser *P, PyVal *out) {
  skip_ws(P);
  if (P->p >= P->end || ++P->depth > MAX_DEPTH) return false;
  char c = *P->p;
  bool ok;
  if (c == '\'' || c == '"')
    ok = parse_string(P, out);
  else if (c == '(' || c == '[' || c == '{') {
    P->p++;
    ok = parse_items(P, out, c == '(' ? ')' : c == '[' ? ']' : '}', c == '{');
  } else
    ok = parse_word(P, out);
  P->depth--;
  return ok;
}

static const PyVal *dict_get(const PyVal *d, const char *key) {
  for (int i = 0; d->kind == PY_DICT && i < d->n / 2; i++)
    if (d->v[2 * i].kind == PY_STR && !strcmp(d->v[2 * i].s, key)) return &d->v[2 * i + 1];
  return NULL;
}

/* ---- dtypes ------------------------------------------------------------------------ */

static bool fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return false;
}

/* '<f4' -> itemsize 4, normalized "<f4"; one-byte types become "|b1" etc. */
static bool simple_dtype(const char *d, char norm[16], size_t *size, char *err, size_t n) {
  bool has_order = d[0] && strchr("<>|=", d[0]); /* strchr finds the NUL too */
  char order = has_order ? d[0] : '=';
  const char *t = d + has_order;
  char *end = NULL;
  long sz = *t && strchr("biufcV", *t) ? strtol(t + 1, &end, 10) : 0;
  if (!end || *end || sz <= 0 || sz > (1 << 20))
    return fail(err, n, "unsupported dtype '%s' (kernc reads bool, integer, float and void dtypes)",
                d);
  if (order == '>' && sz > 1)
    return fail(
        err, n,
        "big-endian dtype '%s' is not supported: convert with a.astype(a.dtype.newbyteorder('<'))",
        d);
  snprintf(norm, 16, "%c%c%ld", sz == 1 || *t == 'V' ? '|' : '<', *t, sz);
  *size = (size_t)sz;
  return true;
}

static bool descr_size(const PyVal *d, size_t *size, char *err, size_t n);

/* A structured field: (name, descr) or (name, descr, shape). */
static bool field_size(const PyVal *f, size_t *size, char *err, size_t n) {
  if (f->kind != PY_SEQ || f->n < 2 || f->n > 3) return fail(err, n, "malformed structured dtype");
  if (!descr_size(&f->v[1], size, err, n)) return false;
  if (f->n == 3) {
    const PyVal *s = &f->v[2];
    int count = s->kind == PY_SEQ ? s->n : 1;
    for (int i = 0; i < count; i++) {
      const PyVal *d = s->kind == PY_SEQ ? &s->v[i] : s;
      if (d->kind != PY_INT || d->i < 0 || d->i > (1 << 24))
        return fail(err, n, "malformed sub-array shape");
      *size *= (size_t)d->i;
    }
  }
  return true;
}

static bool descr_size(const PyVal *d, size_t *size, char *err, size_t n) {
  char norm[16];
  if (d->kind == PY_STR) return simple_dtype(d->s, norm, size, err, n);
  if (d->kind != PY_SEQ) return fail(err, n, "unsupported dtype description");
  *size = 0;
  for (int i = 0; i < d->n; i++) {
    size_t fs;
    if (!field_size(&d->v[i], &fs, err, n)) return false;
    *size += fs;
  }
  return true;
}

/* ---- reading ---------------------------------------------------------------------------- */

static bool read_shape(const PyVal *s, NpyFile *out, char *err, size_t n) {
  if (!s || s->kind != PY_SEQ) return fail(err, n, "the header has no shape tuple");
  if (s->n > NPY_MAX_DIMS) return fail(err, n, "too many dimensions (%d)", s->n);
  out->ndim = s->n;
  for (int i = 0; i < s->n; i++) {
    if (s->v[i].kind != PY_INT || s->v[i].i < 0) return fail(err, n, "malformed shape");
    out->shape[i] = s->v[i].i;
  }
  return true;
}

static bool read_header_dict(const char *text, size_t len, NpyFile *out, char *err, size_t n) {
  Parser P = {text, text + len, 0, false};
  PyVal d = {0};
  bool ok = parse_value(&P, &d) && d.kind == PY_DICT;
  if (!ok) {
    py_free(&d);
    return fail(err, n, "malformed header");
  }
  const PyVal *descr = dict_get(&d, "descr"), *fo = dict_get(&d, "fortran_order");
  char norm[16];
  if (!descr || !fo)
    ok = fail(err, n, "the header lacks 'descr' or 'fortran_order'");
  else if (fo->kind != PY_BOOL || fo->i)
    ok =
        fail(err, n, "Fortran-ordered data is not supported: save np.ascontiguousarray(a) instead");
  else if (descr->kind == PY_STR)
    ok = simple_dtype(descr->s, norm, &out->itemsize, err, n) && (out->descr = strdup(norm));
  else
    ok = descr_size(descr, &out->itemsize, err, n);
  if (ok) ok = read_shape(dict_get(&d, "shape"), out, err, n);
  py_free(&d);
  return ok;
}

static unsigned char *read_rest(FILE *f, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    unsigned char *b = realloc(buf, cap *= 2);
    if (!b) free(buf);
    buf = b;
  }
  *len = n;
  return buf;
}

/* Magic "\x93NUMPY", version, header length (2 bytes in 1.0, 4 in 2.0 and 3.0). */
static char *read_header(FILE *f, size_t *hlen, char *err, size_t n) {
  unsigned char pre[12];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail(err, n, "not a NumPy .npy file (bad magic)"), NULL;
  if (pre[6] < 1 || pre[6] > 3)
    return fail(err, n, "unsupported .npy format version %d.%d", pre[6], pre[7]), NULL;
  size_t lb = pre[6] == 1 ? 2 : 4;
  if (fread(pre + 8, 1, lb, f) != lb) return fail(err, n, "truncated header"), NULL;
  *hlen =
      pre[8] | (size_t)pre[9] << 8 | (lb == 4 ? (size_t)pre[10] << 16 | (size_t)pre[11] << 24 : 0);
  if (*hlen > (1u << 24)) return fail(err, n, "header too large"), NULL;
  char *text = malloc(*hlen + 1);
  if (!text || fread(text, 1, *hlen, f) != *hlen) {
    free(text);
    return fail(err, n, "truncated header"), NULL;
  }
  text[*hlen] = 0;
  return text;
}

static bool check_size(const NpyFile *out, size_t got, char *err, size_t n) {
  uint64_t want = out->itemsize;
  for (int i = 0; i < out->ndim; i++) {
    if (out->shape[i] && want > UINT64_MAX / (uint64_t)out->shape[i])
      return fail(err, n, "shape too large");
    want *= (uint64_t)out->shape[i];
  }
  if (got != want)
    return fail(err, n, "has %zu data bytes, but its shape and dtype need %llu", got,
                (unsigned long long)want);
  return true;
}

bool npy_read(const char *path, NpyFile *out, char *err, size_t n) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, n, "cannot read: %s", strerror(errno));
  size_t hlen;
  char *text = read_header(f, &hlen, err, n);
  bool ok = text && read_header_dict(text, hlen, out, err, n);
  free(text);
  if (ok && !(out->data = read_rest(f, &out->nbytes))) ok = fail(err, n, "out of memory");
  if (ok) ok = check_size(out, out->nbytes, err, n);
  /* NumPy lets a bool array hold any byte; kern's bools are 0 or 1. */
  if (ok && out->descr && !strcmp(out->descr, "|b1"))
    for (size_t i = 0; i < out->nbytes; i++) out->data[i] = out->data[i] != 0;
  fclose(f);
  if (!ok) npy_free(out);
  return ok;
}

void npy_free(NpyFile *f) {
  free(f->descr);
  free(f->data);
  memset(f, 0, sizeof *f);
}

/* ---- writing ------------------------------------------------------------------------------------ */

static bool write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }

/* The header padded with spaces so the data starts at a multiple of 64. */
static char *make_header(const char *descr, int ndim, const int64_t *shape, size_t *len) {
  size_t cap = strlen(descr) + 64 + 24 * (size_t)ndim + 64;
  char *h = malloc(cap);
  if (!h) return NULL;
  int k = snprintf(h, cap, "{'descr': %s, 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < ndim; i++)
    k += snprintf(h + k, cap - (size_t)k, "%s%lld", i ? ", " : "", (long long)shape[i]);
  k += snprintf(h + k, cap - (size_t)k, "%s), }", ndim == 1 ? "," : "");
  size_t total = 10 + (size_t)k + 1;
  size_t pad = (64 - total % 64) % 64;
  memset(h + k, ' ', pad);
  h[k + pad] = '\n';
  *len = (size_t)k + pad + 1;
  return h;
}

bool npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
               const void *data, size_t nbytes, char *err, size_t n) {
  size_t hlen;
  char *h = make_header(descr, ndim, shape, &hlen);
  char *tmp = malloc(strlen(path) + 16);
  if (!h || !tmp || hlen > 65535) {
    free(h), free(tmp);
    return fail(err, n, "%s", h && tmp ? "header too large" : "out of memory");
  }
  snprintf(tmp, strlen(path) + 16, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  bool ok = f != NULL;
  unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255), (unsigned char)(hlen >> 8)};
  ok = ok && write_all(f, pre, 10) && write_all(f, h, hlen) && write_all(f, data, nbytes);
  if (f && fclose(f) != 0) ok = false;
  if (!f && fd >= 0) close(fd);
  if (ok) {
    chmod(tmp, 0644);
    ok = rename(tmp, path) == 0;
  }
  if (!ok) fail(err, n, "cannot write: %s", strerror(errno));
  if (!ok && fd >= 0) unlink(tmp);
  free(h);
  free(tmp);
  return ok;
}
