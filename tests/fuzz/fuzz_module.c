/* fuzz_module.c: libFuzzer target for the public module API without
 * launching: kern_module_from_source, then every kernel and struct of the
 * root file looked up by name, its parameters described, and the module freed.
 *
 * Requires: libkern built with -fsanitize=fuzzer-no-link (cmake/fuzz.cmake).
 * Produces: crashes on broken invariants: a module that loaded has every
 * kernel its root file declares; a module that failed left a message.
 * Code generation for a device happens at the first launch, so none runs here.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "kern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  if (!k || strcmp(kern_kernel_name(k), name) != 0) __builtin_trap();
  int n = kern_kernel_num_params(k);
  for (int i = 0; i < n; i++) {
    if (!kern_kernel_param_name(k, i) || kern_kernel_param_dtype(k, i) == KERN_DTYPE_INVALID)
      __builtin_trap();
    int nd = kern_kernel_param_ndim(k, i);
    if (nd < 0 || nd > 4) __builtin_trap();
  }
  if (kern_kernel_param_ndim(k, n) != -1 || kern_kernel_param_ndim(k, -1) != -1) __builtin_trap();
}

static void check_module(kern_module *m, const Module *root) {
  for (const Decl *d = root->decls; d; d = d->next) {
    if (d->kind == DECL_KERNEL)
      check_kernel(m, d->name);
    else if (d->kind == DECL_STRUCT)
      (void)kern_module_dtype(m, d->name);
  }
  if (kern_module_kernel(m, "") || !kern_module_diagnostics(m)) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = fz_source(data, size);
  FzScan scan;
  /* The API takes a C string: the text ends at the first NUL. */
  if (!src || !fz_scan(&scan, src, strlen(src))) {
    free(src);
    return 0;
  }
  if (scan.imports_safe) {
    kern_module *m = kern_module_from_source(fz_root_path(), src);
    if (m)
      check_module(m, scan.mod);
    else if (!kern_last_error()[0])
      __builtin_trap();
    kern_module_free(m);
  }
  fz_scan_free(&scan);
  free(src);
  return 0;
}
