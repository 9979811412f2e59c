/* buf.h: the one growable string buffer: messages, logs, diagnostics,
 * generated code.
 *
 * A Buf starts zeroed (Buf b = {0}); b.s stays NULL until the first append,
 * after which it is always NUL-terminated. Out of memory sets b.oom and turns
 * later appends into no-ops, so a builder checks once at the end.
 */
#ifndef KERN_BUF_H
#define KERN_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct Buf {
  char *s; /* the text, NUL-terminated; NULL before the first append */
  size_t len, cap;
  bool oom; /* an append ran out of memory (later appends do nothing) */
} Buf;

void buf_add(Buf *, const char *s, size_t n);
void buf_puts(Buf *, const char *s);
void buf_printf(Buf *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *, const char *fmt, va_list);
/* Inserts s at byte offset at (<= len), moving the rest up. */
void buf_insert(Buf *, size_t at, const char *s);
/* Frees the text and zeroes the buffer. */
void buf_free(Buf *);

#endif
