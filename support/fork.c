/* fork.c: kern's locks across fork() (fork.h).
 *
 * Requires: pthread_atfork. Produces: fork_guard.
 * Breaks: nothing; registration happens in load-time constructors, before
 * any thread of the process can use kern, so the table needs no lock.
 */
#include "fork.h"

#include <stddef.h>

static struct {
  pthread_mutex_t *mu;
  pthread_cond_t *cv;
} guarded[FORK_RANKS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void before(void) {
  for (int i = 0; i < FORK_RANKS; i++)
    if (guarded[i].mu) pthread_mutex_lock(guarded[i].mu);
}

static void after_parent(void) {
  for (int i = FORK_RANKS - 1; i >= 0; i--)
    if (guarded[i].mu) pthread_mutex_unlock(guarded[i].mu);
}

/* The child's only thread took every lock in before(): it releases them. */
static void after_child(void) {
  for (int i = FORK_RANKS - 1; i >= 0; i--) {
    if (guarded[i].cv) pthread_cond_init(guarded[i].cv, NULL);
    if (guarded[i].mu) pthread_mutex_unlock(guarded[i].mu);
  }
}

static void install(void) { pthread_atfork(before, after_parent, after_child); }

void fork_guard(pthread_mutex_t *mu, pthread_cond_t *cv, fork_rank rank) {
  pthread_once(&once, install);
  if ((unsigned)rank >= FORK_RANKS) return;
  guarded[rank].mu = mu;
  guarded[rank].cv = cv;
}
