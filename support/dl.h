/* dl.h: opening libraries and filling a table of function pointers from one.
 *
 * Used to load compiled CPU kernels and to reach the CUDA driver and NVRTC
 * without linking against them. Every dlopen and dlclose of kern goes
 * through dl_open and dl_close, which fork() waits for (fork.h).
 */
#ifndef KERN_DL_H
#define KERN_DL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct DlSym {
  const char *name; /* the exported symbol */
  size_t offset;    /* of the pointer in the table (offsetof) */
  bool required;    /* a missing one fails the whole table */
} DlSym;

/* dlopen and dlclose (dlerror is the caller's to read afterwards). */
void *dl_open(const char *path, int flags);
void dl_close(void *lib);

/* Resolves every symbol into the table (missing optional ones become NULL);
 * the name of the first missing required one, or NULL when all were found. */
const char *dl_resolve(void *lib, void *table, const DlSym *syms, size_t n);

#endif
