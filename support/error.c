/* error.c: the thread-local error message and the warning handler.
 *
 * Requires: pthreads. Produces: kern_last_error, kern_last_status,
 * kern_clear_error, kern_status_name, kern_set_warning_handler, and err_set
 * and friends for every layer of the library.
 * Breaks: the message buffer is per thread, freed by a pthread key when the
 * thread exits; out of memory keeps what fits of a message (a truncated
 * message beats none). Nothing here prints except the default warning handler.
 */
#include "error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

static _Thread_local char *err_msg;
static _Thread_local size_t err_cap;
static _Thread_local kern_status err_status;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void err_free(void *p) { free(p); }
static void err_key_init(void) { pthread_key_create(&err_key, err_free); }

static void store(const char *prefix, const char *text) {
  size_t a = strlen(prefix), b = strlen(text), need = a + b + 1;
  pthread_once(&err_once, err_key_init);
  if (need > err_cap) {
    char *p = realloc(err_msg, need);
    if (!p) {
      /* Keep what fits: a truncated message beats none. */
      if (err_cap == 0) return;
      need = err_cap;
      if (a >= need) a = need - 1;
      b = need - 1 - a;
    } else {
      err_msg = p;
      err_cap = need;
      pthread_setspecific(err_key, p);
    }
  }
  memcpy(err_msg, prefix, a);
  memcpy(err_msg + a, text, b);
  err_msg[a + b] = 0;
}

kern_status err_vset(kern_status st, const char *fmt, va_list ap) {
  char small[1024];
  err_status = st;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small) {
    char *big = malloc((size_t)n + 1);
    if (big) {
      vsnprintf(big, (size_t)n + 1, fmt, ap2);
      store("", big);
      free(big);
      va_end(ap2);
      return st;
    }
  }
  va_end(ap2);
  store("", n < 0 ? "(unformattable message)" : small);
  return st;
}

kern_status err_set(kern_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  err_vset(st, fmt, ap);
  va_end(ap);
  return st;
}

kern_status err_text(kern_status st, const char *prefix, const char *text) {
  err_status = st;
  store(prefix ? prefix : "", text ? text : "");
  return st;
}

const char *kern_last_error(void) { return err_msg ? err_msg : ""; }

kern_status kern_last_status(void) { return err_status; }

void kern_clear_error(void) {
  if (err_msg) err_msg[0] = 0;
  err_status = KERN_OK;
}

const char *kern_status_name(kern_status st) {
  static const char *const names[] = {"KERN_OK",
                                      "KERN_ERR_INVALID_ARGUMENT",
                                      "KERN_ERR_COMPILE",
                                      "KERN_ERR_NOT_FOUND",
                                      "KERN_ERR_OUT_OF_MEMORY",
                                      "KERN_ERR_ACCESS",
                                      "KERN_ERR_BOUNDS",
                                      "KERN_ERR_CAPTURE",
                                      "KERN_ERR_CUDA",
                                      "KERN_ERR_UNSUPPORTED",
                                      "KERN_ERR_IO"};
  if ((unsigned)st >= sizeof names / sizeof names[0]) return "KERN_ERR_?";
  return names[st];
}

/* ---- warnings --------------------------------------------------------------------------- */

static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;
static void (*warn_fn)(const char *, void *);
static void *warn_ud;

void kern_set_warning_handler(void (*fn)(const char *msg, void *ud), void *ud) {
  pthread_mutex_lock(&warn_mu);
  warn_fn = fn;
  warn_ud = ud;
  pthread_mutex_unlock(&warn_mu);
}

void err_warn(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&warn_mu);
  void (*fn)(const char *, void *) = warn_fn;
  void *ud = warn_ud;
  pthread_mutex_unlock(&warn_mu);
  if (fn)
    fn(msg, ud);
  else
    fprintf(stderr, "kern: warning: %s\n", msg);
}
