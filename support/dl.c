/* dl.c: opening libraries, resolving tables of entry points.
 *
 * Requires: dlfcn, fork.c. Produces: dl_open, dl_close, dl_resolve.
 * Breaks: nothing; data pointers from dlsym are copied into function
 * pointers with memcpy (ISO C has no object-to-function pointer cast; POSIX
 * guarantees the value is usable). kern's dlopen and dlclose run under one
 * lock that fork() waits for: the C library does not hold its own loader
 * lock across fork(), so a child forked during another thread's dlopen
 * would wait for ever in its own first dlopen.
 */
#include "dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "fork.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&mu, NULL, FORK_RANK_DL)

void *dl_open(const char *path, int flags) {
  pthread_mutex_lock(&mu);
  void *h = dlopen(path, flags);
  pthread_mutex_unlock(&mu);
  return h;
}

void dl_close(void *lib) {
  if (!lib) return;
  pthread_mutex_lock(&mu);
  dlclose(lib);
  pthread_mutex_unlock(&mu);
}

const char *dl_resolve(void *lib, void *table, const DlSym *syms, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *f = dlsym(lib, syms[i].name);
    if (!f && syms[i].required) return syms[i].name;
    memcpy((char *)table + syms[i].offset, &f, sizeof f);
  }
  return NULL;
}
