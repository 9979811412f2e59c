/* dl.c: resolving tables of entry points.
 *
 * Requires: dlfcn. Produces: dl_resolve. Breaks: nothing; data pointers from
 * dlsym are copied into function pointers with memcpy (ISO C has no
 * object-to-function pointer cast; POSIX guarantees the value is usable).
 */
#include "dl.h"

#include <dlfcn.h>
#include <string.h>

const char *dl_resolve(void *lib, void *table, const DlSym *syms, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *f = dlsym(lib, syms[i].name);
    if (!f && syms[i].required) return syms[i].name;
    memcpy((char *)table + syms[i].offset, &f, sizeof f);
  }
  return NULL;
}
