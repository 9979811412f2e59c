/* str.h: strings made with malloc: a copy, and the one format-to-new-string.
 *
 * Both return NULL only when out of memory (or, for str_printf, when the
 * format fails); the caller reports it and frees the result.
 */
#ifndef KERN_STR_H
#define KERN_STR_H

#include <stdarg.h>

char *str_dup(const char *);
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_vprintf(const char *fmt, va_list);

#endif
