/* fuzz_codegen.c: libFuzzer target for the code generator: every program the
 * front end accepts must emit, for the CPU and for CUDA, with and without
 * debug checks, and every kernel must appear in the output under its ABI name.
 *
 * Requires: libkern built with -fsanitize=fuzzer-no-link (cmake/fuzz.cmake).
 * Produces: crashes on broken invariants. Whether the emitted C compiles is
 * too slow to ask here (a compiler run per input); tests/test_fuzz_smoke.c
 * asks it for a bounded number of mutants instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { CHECKED_KERNELS = 8 };

static void check_layout(const Decl *k) {
  size_t offs[64], align = 0;
  if (k->nparams > 64) return;
  size_t size = emit_args_layout(k, offs, &align);
  if (align == 0 || (align & (align - 1)) || size % align) __builtin_trap();
  for (int i = 0; i < k->nparams; i++) {
    size_t pal = 0, psz = emit_param_size(k->params[i]->ty, &pal);
    if (offs[i] + psz > size || (pal && offs[i] % pal) || (i && offs[i] < offs[i - 1]))
      __builtin_trap();
  }
  (void)emit_kernel_uses_tid_dims(k);
}

static void emit_one(const Program *p, EmitTarget t, bool debug) {
  EmitOptions o = {.debug = debug, .line_directives = !debug};
  char *out = emit_program(p, t, &o);
  if (!out) __builtin_trap();
  for (int i = 0; i < p->nkernels && i < CHECKED_KERNELS; i++) {
    char sym[300];
    snprintf(sym, sizeof sym, "kk_%s_%s", p->kernels[i]->name, t == EMIT_C ? "range" : "cuda");
    if (!strstr(out, sym)) __builtin_trap();
  }
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = fz_source(data, size);
  if (!src) return 0;
  FrontResult r = fz_compile(src, size);
  fz_check_front(r);
  if (r.ok) {
    for (int i = 0; i < r.prog->nkernels; i++) check_layout(r.prog->kernels[i]);
    emit_one(r.prog, EMIT_C, false);
    emit_one(r.prog, EMIT_C, true);
    emit_one(r.prog, EMIT_CUDA, false);
    emit_one(r.prog, EMIT_CUDA, true);
  }
  front_free(r.prog);
  free(src);
  return 0;
}
