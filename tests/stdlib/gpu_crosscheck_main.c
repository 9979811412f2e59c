/* gpu_crosscheck_main.c: gpu_crosscheck.c as a program, for GPU machines
 * without Criterion. Usage: gpu_crosscheck SOURCE_DIR. Exit status 0 when
 * both devices agree, 1 on a mismatch, 77 when there is no GPU or NVRTC. */
#include "kern_builtins.h"
#include "kern_libm.h"
#include "kern_math.h"
#include "kern_spatial.h"
#include "kern_transform.h"
#include "kern_spatial_algebra.h"
#include "kern_linalg.h"
#include "kern_noise.h"
#include "crosscheck_rows.h"
#include "gpu_crosscheck.c"

int main(int argc, char **argv) {
  char msg[4096] = "";
  int r = kc_gpu_crosscheck(argc > 1 ? argv[1] : ".", msg, sizeof msg, stdout);
  if (r < 0)
    printf("skipped: %s\n", msg);
  else if (r == 0)
    printf("MISMATCH: %s\n", msg);
  else
    printf("ok\n");
  return r < 0 ? 77 : r == 0;
}
