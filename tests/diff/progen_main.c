/* progen_main.c: the `progen` tool: prints the generated kern module for a
 * seed, to reproduce a failure of test_diff (`progen SEED > case.kern`, and
 * `progen --tiled SEED` for a tiled program).
 *
 * Requires: progen.c, progen_tile.c. Produces: the program text on stdout,
 * and with --launch the launches its kernels expect instead; exit status 2
 * on bad usage. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progen.h"

static int usage(void) {
  fprintf(stderr, "usage: progen [--tiled] [--launch] SEED   (decimal or 0x hex)\n");
  return 2;
}

/* Each kernel's launch dims and array shapes, one line per kernel. */
static int print_launches(unsigned long long seed, ProgenKind kind) {
  ProgenLaunch l[PROGEN_MAX_KERNELS];
  int n = progen_launches(seed, kind, l, PROGEN_MAX_KERNELS);
  for (int k = 0; k < n; k++) {
    printf("k%d: dims", k);
    for (int d = 0; d < l[k].ndim; d++) printf(" %lld", (long long)l[k].dims[d]);
    for (int p = 0; p < l[k].nparams; p++)
      if (l[k].shape[p][0])
        printf(", parameter %d %lldx%lld", p, (long long)l[k].shape[p][0],
               (long long)l[k].shape[p][1]);
    printf("\n");
  }
  return n ? 0 : 1;
}

int main(int argc, char **argv) {
  ProgenKind kind = PROGEN_PLAIN;
  bool launches = false;
  int a = 1;
  for (; a < argc - 1; a++) {
    if (!strcmp(argv[a], "--tiled"))
      kind = PROGEN_TILED;
    else if (!strcmp(argv[a], "--launch"))
      launches = true;
    else
      return usage();
  }
  char *end;
  errno = 0;
  unsigned long long seed = a == argc - 1 ? strtoull(argv[a], &end, 0) : 0;
  if (a != argc - 1 || errno || *end || end == argv[a]) return usage();
  if (launches) return print_launches(seed, kind);
  size_t n = progen_write(seed, kind, "", NULL, 0);
  char *buf = malloc(n + 1);
  if (!buf || !n) {
    fprintf(stderr, "progen: out of memory\n");
    return 1;
  }
  progen_write(seed, kind, "", buf, n + 1);
  fputs(buf, stdout);
  free(buf);
  return 0;
}
