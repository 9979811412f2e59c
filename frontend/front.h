/* front.h: the compiler's front door, used by the runtime and by kernc.
 *
 * front_compile runs lex -> parse (the root file and every import, each once,
 * paths relative to the importing file, cycles reported) -> check, in one arena.
 * The result owns that arena and the diagnostics; front_free releases both.
 */
#ifndef KERN_FRONT_H
#define KERN_FRONT_H

#include "ast.h"

typedef struct FrontResult {
  Program *prog; /* always non-NULL unless out of memory */
  bool ok;       /* no errors */
} FrontResult;

/* path: the root file's name for diagnostics and import resolution (may be a
 * pseudo name such as "<string>"); src: its text, or NULL to read it from path. */
FrontResult front_compile(const char *path, const char *src, size_t len);

/* Where imported files come from when not the file system (modules embedded
 * by kernc build). read returns the text of the file an import names (its
 * path joined to the importer's directory, as front_import_path spells it),
 * or NULL with errno set; *key identifies the file for duplicate and cycle
 * detection. The text must outlive the call. */
typedef struct FrontReader {
  const char *(*read)(void *ud, const char *path, size_t *len, const char **key);
  void *ud;
} FrontReader;
/* front_compile with imports read through reader (NULL: the file system). */
FrontResult front_compile_with(const char *path, const char *src, size_t len,
                               const FrontReader *reader);
/* The path front_compile reads for `import "rel"` in the file `from`
 * (malloc'd; NULL on OOM): relative to from's directory, absolute as is. */
char *front_import_path(const char *from, const char *rel);
void front_free(Program *);
/* Reads a whole regular file into a malloc'd NUL-terminated buffer; NULL +
 * errno on failure (FILE_ENOTREG of file.h for a directory, FIFO or device). */
char *front_read_file(const char *path, size_t *len);

#endif
