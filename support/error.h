/* error.h: how the library reports: this thread's error message and status
 * (kern_last_error, kern_last_status), warnings (kern_set_warning_handler)
 * and the log (kern_set_log_handler, KERN_LOG).
 *
 * Every layer that fails on the user's behalf (the runtime, its backends, the
 * toolchain) returns a kern_status and leaves the message here; nothing in
 * the library prints, except the default warning handler.
 */
#ifndef KERN_ERROR_H
#define KERN_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

#include "kern.h"

/* Sets this thread's message (formatted) and status; returns the status. */
kern_status err_set(kern_status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
kern_status err_vset(kern_status, const char *fmt, va_list);
/* The same with the text as is, after prefix (it may be long: compiler logs). */
kern_status err_text(kern_status, const char *prefix, const char *text);
/* Said when code generated from a source the checker accepted does not
 * compile (the C compiler or NVRTC): that is kern's fault, never the user's. */
#define ERR_BUG_REPORT "this is a bug in kern: please report it, with the .kern source"

/* Sends a warning to the user's handler (default: "kern: warning: ..." on stderr). */
void err_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sends a log message (trailing newlines dropped) to the log handler, or with
 * none to stderr when KERN_LOG asks for its level; nothing otherwise. */
void err_log(kern_log_level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether a message of this level goes anywhere (to skip preparing one). */
bool err_log_on(kern_log_level);
/* Reads KERN_LOG again (kern_init; before it, the first log message reads it). */
void err_log_read_env(void);

#endif
