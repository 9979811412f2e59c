/* fuzz_util.h: what the libFuzzer targets share: turning the fuzzer's bytes
 * into source text, keeping imports away from the file system, and the
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
  bool imports_safe; /* every import is a relative path without ".." */
} FzScan;

/* data as a malloc'd NUL-terminated buffer (embedded NULs stay); NULL on OOM. */
char *fz_source(const uint8_t *data, size_t size);
/* For the public API, which reads imports from disk: the root's pretend path
 * is in tests/kern/ok, so `import "lib/geom.kern";` finds a real file (and
 * fz_scan screens out imports that could reach anything else). */
const char *fz_root_path(void);
/* false on OOM (then nothing needs freeing). */
bool fz_scan(FzScan *, const char *src, size_t len);
/* front_compile of src as "fuzz.kern", with imports read from src itself,
 * never from the file system: a line `//@file NAME` starts the virtual file
 * NAME, which runs to the next such line or the end. To the root the markers
 * are comments, so one input is a whole program of several modules, and
 * imports, cycles and clashes between modules get fuzzed too. */
FrontResult fz_compile(const char *src, size_t len);
void fz_scan_free(FzScan *);
/* A failed compilation says why; every diagnostic that points into one of the
 * program's files lies inside it, with line and column matching the offset. */
void fz_check_front(FrontResult);

#endif
