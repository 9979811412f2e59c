/* error.c: the thread-local error message, the warning handler and the log.
 *
 * Requires: pthreads. Produces: kern_last_error, kern_last_status,
 * kern_clear_error, kern_status_name, kern_set_warning_handler,
 * kern_set_log_handler, kern_get_log_level, and err_set, err_warn, err_log
 * and friends for every layer of the library.
 * Breaks: the message buffer is per thread, freed by a pthread key when the
 * thread exits; out of memory keeps what fits of a message (a truncated
 * message beats none). Nothing here prints except the default warning
 * handler and, when KERN_LOG asks for it, the default log handler. Handlers
 * are called with no lock held, so they may call kern.
 */
#include "error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env.h"
#include "str.h"
#include "fork.h"

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
FORK_GUARD(&warn_mu, NULL, FORK_RANK_WARN)
static void (*warn_fn)(const char *, void *);
static void *warn_ud;

void kern_set_warning_handler(void (*fn)(const char *msg, void *ud), void *ud) {
  pthread_mutex_lock(&warn_mu);
  warn_fn = fn;
  warn_ud = ud;
  pthread_mutex_unlock(&warn_mu);
}

/* ---- the log ---------------------------------------------------------------------------- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&log_mu, NULL, FORK_RANK_LOG)
static kern_log_fn log_fn;
static void *log_ud;
static kern_log_level log_fn_level;
static _Atomic int env_level = -1; /* KERN_LOG's level; -1: not read yet */

/* KERN_LOG: unset, empty, none or a no of env.h (0, false, no, off, any
 * case): nothing; warning (or warn): warnings; anything else (1, yes,
 * info ...): everything. No warning for an unknown word here: warnings go
 * through the log. */
static kern_log_level parse_level(const char *s) {
  if (env_bool_parse(s) == ENV_UNSET || env_bool_parse(s) == ENV_NO || !strcasecmp(s, "none"))
    return KERN_LOG_OFF;
  if (!strcasecmp(s, "warning") || !strcasecmp(s, "warn")) return KERN_LOG_WARNING;
  return KERN_LOG_INFO;
}

void err_log_read_env(void) { atomic_store(&env_level, (int)parse_level(getenv("KERN_LOG"))); }

void kern_set_log_handler(kern_log_fn fn, void *ud, kern_log_level level) {
  pthread_mutex_lock(&log_mu);
  log_fn = fn;
  log_ud = fn ? ud : NULL;
  log_fn_level = fn ? level : KERN_LOG_OFF;
  pthread_mutex_unlock(&log_mu);
}

/* The handler in effect and its level, copied under the lock. */
static kern_log_level log_target(kern_log_fn *fn, void **ud) {
  pthread_mutex_lock(&log_mu);
  *fn = log_fn;
  *ud = log_ud;
  kern_log_level level = log_fn_level;
  pthread_mutex_unlock(&log_mu);
  if (*fn) return level;
  if (atomic_load(&env_level) < 0) err_log_read_env();
  return (kern_log_level)atomic_load(&env_level);
}

kern_log_level kern_get_log_level(void) {
  kern_log_fn fn;
  void *ud;
  return log_target(&fn, &ud);
}

bool err_log_on(kern_log_level level) {
  return level != KERN_LOG_OFF && level <= kern_get_log_level();
}

void err_log(kern_log_level level, const char *fmt, ...) {
  kern_log_fn fn;
  void *ud;
  if (level == KERN_LOG_OFF || level > log_target(&fn, &ud)) return;
  va_list ap;
  va_start(ap, fmt);
  char *msg = str_vprintf(fmt, ap);
  va_end(ap);
  if (!msg) return; /* out of memory: a log line is not worth failing for */
  size_t n = strlen(msg);
  while (n && msg[n - 1] == '\n') msg[--n] = 0; /* one message, no trailing newline */
  if (fn)
    fn(level, msg, ud);
  else
    fprintf(stderr, "kern: %s\n", msg);
  free(msg);
}

/* CHECKED-mode warnings: the warning handler; without one, the log handler
 * when one is installed; else a line on stderr. */
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
  kern_log_fn lfn;
  void *lud;
  kern_log_level level = log_target(&lfn, &lud);
  if (fn)
    fn(msg, ud);
  else if (lfn && level >= KERN_LOG_WARNING)
    lfn(KERN_LOG_WARNING, msg, lud);
  else
    fprintf(stderr, "kern: warning: %s\n", msg);
}
