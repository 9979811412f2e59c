/* str.c: malloc'd strings: a copy and formatting into a new string.
 *
 * Requires: nothing. Produces: str_dup, str_printf, str_vprintf.
 */
#include "str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *str_dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

char *str_vprintf(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *p = n < 0 ? NULL : malloc((size_t)n + 1);
  if (p) vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = str_vprintf(fmt, ap);
  va_end(ap);
  return p;
}
