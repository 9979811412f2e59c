/* test_nvrtc.c: every kernel of the test suite compiles through NVRTC.
 *
 * Runs on machines without a GPU (CI has the CUDA toolkit): each fixture of
 * tests/kern/ok and tests/kern/run is emitted as CUDA and compiled to PTX for
 * sm_90, in release and debug mode. Without NVRTC it skips, saying so. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc.h"
#include "toolchain.h"
#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"

static int compile_dir(const char *dir, bool debug, int *count) {
  char **files;
  int n = th_list(dir, ".kern", &files), failed = 0;
  for (int i = 0; i < n; i++) {
    FrontResult r = front_compile(files[i], NULL, 0);
    cr_expect(r.ok, "%s does not check", files[i]);
    EmitOptions o = {.debug = debug, .line_directives = true};
    char *src = r.ok ? emit_program(r.prog, EMIT_CUDA, &o) : NULL, *out = NULL;
    size_t len;
    bool is_ptx;
    if (src && tc_nvrtc_compile(src, files[i], 90, false, debug, &out, &len, &is_ptx) != KERN_OK) {
      failed++;
      cr_log_error("%s (debug=%d): %s", files[i], debug, kern_last_error());
    }
    if (out) cr_expect(is_ptx && strstr(out, ".entry"), "%s: no PTX entry", files[i]);
    free(out);
    free(src);
    front_free(r.prog);
    free(files[i]);
  }
  free(files);
  *count += n;
  return failed;
}

Test(nvrtc, every_fixture_compiles_to_ptx, .timeout = 900) {
  const char *why;
  if (!tc_nvrtc_load(&why))
    cr_skip_test("NVRTC not available (%s): CUDA compile checks skipped", why);
  int count = 0, failed = 0;
  for (int debug = 0; debug < 2; debug++) {
    failed += compile_dir(KERN_TESTS_DIR "/kern/ok", debug, &count);
    failed += compile_dir(KERN_TESTS_DIR "/kern/run", debug, &count);
  }
  cr_log_info("NVRTC %d: %d compiles, %d failed", tc_nvrtc_version(), count, failed);
  cr_expect_eq(failed, 0, "%d of %d NVRTC compiles failed", failed, count);
  cr_expect_gt(count, 0);
}
