/* fuzz_util.h: what the libFuzzer targets share: turning the fuzzer's bytes
 * into source text, keeping imports inside the fixture directory, and the
 * invariants every compilation must keep (checked with __builtin_trap, so a
 * broken one is a crash libFuzzer saves). */
#ifndef KERN_FUZZ_UTIL_H
#define KERN_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front.h"

/* A pre-parse of the root text alone (imports not followed). */
typedef struct FzScan {
  Arena *arena;
  Diags diags;
  Module *mod;
  bool imports_safe;   /* every import is a relative path without ".." */
} FzScan;

/* data as a malloc'd NUL-terminated buffer (embedded NULs stay); NULL on OOM. */
char *fz_source(const uint8_t *data, size_t size);
/* The root file's pretend path: imports resolve against tests/kern/ok, so
 * `import "lib/geom.kern";` finds a real file and nothing else is reachable. */
const char *fz_root_path(void);
/* false on OOM (then nothing needs freeing). */
bool fz_scan(FzScan *, const char *src, size_t len);
/* Whether src can be compiled with its imports followed: true at once when
 * the word "import" is nowhere in it (most inputs; saves a parse), else by
 * fz_scan. */
bool fz_imports_safe(const char *src, size_t len);
void fz_scan_free(FzScan *);
/* A failed compilation says why; every diagnostic that points into one of the
 * program's files lies inside it, with line and column matching the offset. */
void fz_check_front(FrontResult);

#endif
