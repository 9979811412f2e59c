/* fuzz_frontend.c: libFuzzer target for the whole front end: lex, parse,
 * imports and check through front_compile, from the fuzzer's bytes.
 *
 * Requires: libkern built with -fsanitize=fuzzer-no-link (cmake/fuzz.cmake).
 * Produces: nothing but crashes, sanitizer reports, leaks or broken
 * invariants (fuzz_util.h), which are bugs: any input must give diagnostics.
 * Imports come from `//@file NAME` sections of the input itself (fz_compile),
 * never from the file system.
 * Run: make fuzz (tests/fuzz/run.sh), or build-fuzz/fuzz_frontend DIR.
 */
#include <stdlib.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Both dumps and both renderings must cope with a partly typed tree. */
static void render_all(const Program *p) {
  for (const Module *m = p->modules; m; m = m->next) {
    free(ast_dump_module(m, false));
    free(ast_dump_module(m, true));
  }
  free(diag_render(p->diags, false));
  free(diag_render(p->diags, true));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = fz_source(data, size);
  if (!src) return 0;
  FrontResult r = fz_compile(src, size);
  fz_check_front(r);
  if (r.prog) render_all(r.prog);
  front_free(r.prog);
  free(src);
  return 0;
}
