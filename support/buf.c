/* buf.c: the growable string buffer.
 *
 * Requires: nothing. Produces: Buf and its appends. Breaks: nothing; the
 * buffer at least doubles when it grows, so appends cost amortized O(1).
 */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for need more bytes and the terminator; false (and oom) if there is none. */
static bool reserve(Buf *b, size_t need) {
  if (b->oom) return false;
  if (b->len + need < b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap <= b->len + need) cap *= 2;
  char *p = realloc(b->s, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->s = p;
  b->cap = cap;
  return true;
}

void buf_add(Buf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* Formats straight into the free space; only a result that does not fit is
 * formatted a second time, after growing. */
void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = b->cap - b->len;
  int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
  if (n >= 0 && (size_t)n >= room && reserve(b, (size_t)n))
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  if (n < 0 || b->oom) {
    if (b->s) b->s[b->len] = 0; /* a failed format leaves the text as it was */
    return;
  }
  b->len += (size_t)n;
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_insert(Buf *b, size_t at, const char *s) {
  size_t n = strlen(s);
  if (!reserve(b, n)) return;
  if (b->len == 0) b->s[0] = 0; /* a buffer never appended to has no terminator yet */
  memmove(b->s + at + n, b->s + at, b->len - at + 1);
  memcpy(b->s + at, s, n);
  b->len += n;
}

void buf_free(Buf *b) {
  free(b->s);
  *b = (Buf){0};
}
