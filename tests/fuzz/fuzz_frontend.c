/* fuzz_frontend.c: libFuzzer target for the lexer and parser.
 *
 * Requires: frontend/{arena,diag,types,parser,ast_dump}.c and the generated
 * lexer. Produces: nothing but crashes, sanitizer reports or leaks, which are
 * bugs: any input must give diagnostics, never a crash. Imports are not
 * followed (that would read files), so this covers lex + parse + dump + render.
 *
 * Build: clang -g -fsanitize=fuzzer,address,undefined -Ifrontend \
 *   tests/fuzz/fuzz_frontend.c frontend/{arena,diag,types,parser,ast_dump}.c <build>/gen/lexer.c -lm
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The frontend wants a NUL-terminated buffer; embedded NULs stay in. */
  char *src = malloc(size + 1);
  if (!src)
    return 0;
  if (size)
    memcpy(src, data, size);
  src[size] = 0;

  Arena *arena = arena_new();
  Diags diags;
  diags_init(&diags);
  if (arena) {
    Module *m = parse_module(arena, &diags, "fuzz.kern", src, size);
    free(ast_dump_module(m, false));
    free(diag_render(&diags, false));
    free(diag_render(&diags, true));
  }
  diags_free(&diags);
  arena_free(arena);
  free(src);
  return 0;
}
