/* npy.h: NumPy .npy files for `kernc run`: read (format 1.0, 2.0, 3.0) and
 * write (1.0); little-endian data in C order only.
 */
#ifndef KERN_CLI_NPY_H
#define KERN_CLI_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { NPY_MAX_DIMS = 32 };

typedef struct NpyFile {
  char *descr;     /* a simple dtype normalized to little-endian ("<f4", "|b1", "|V28"),
                          or NULL for a structured one */
  size_t itemsize; /* bytes per item (structured: the sum of its fields) */
  int ndim;
  int64_t shape[NPY_MAX_DIMS];
  unsigned char *data; /* itemsize * prod(shape) bytes */
  size_t nbytes;
} NpyFile;

/* Reads path. false with a message in err (bad magic, big-endian or Fortran
 * order, truncated data ...). A bool array's bytes come back as 0 or 1
 * (NumPy can hold any byte in one: any nonzero byte is true). */
bool npy_read(const char *path, NpyFile *out, char *err, size_t errlen);
void npy_free(NpyFile *);

/* Writes a version 1.0 file with the given descr (a Python literal such as
 * '<f4' with its quotes, or a structured list) through a temporary file and a
 * rename. false with a message in err. */
bool npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
               const void *data, size_t nbytes, char *err, size_t errlen);

#endif
