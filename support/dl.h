/* dl.h: filling a table of function pointers from a library opened with dlopen.
 *
 * Used to reach the CUDA driver and NVRTC without linking against them.
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

/* Resolves every symbol into the table (missing optional ones become NULL);
 * the name of the first missing required one, or NULL when all were found. */
const char *dl_resolve(void *lib, void *table, const DlSym *syms, size_t n);

#endif
