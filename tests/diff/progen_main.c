/* progen_main.c: the `progen` tool: prints the generated kern module for a
 * seed, to reproduce a failure of test_diff (`progen SEED > case.kern`).
 *
 * Requires: progen.c. Produces: the program text on stdout; exit status 2
 * on bad usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "progen.h"

int main(int argc, char **argv) {
  char *end;
  errno = 0;
  unsigned long long seed = argc == 2 ? strtoull(argv[1], &end, 0) : 0;
  if (argc != 2 || errno || *end || end == argv[1]) {
    fprintf(stderr, "usage: progen SEED   (decimal or 0x hex)\n");
    return 2;
  }
  size_t n = progen(seed, NULL, 0);
  char *buf = malloc(n + 1);
  if (!buf || !n) {
    fprintf(stderr, "progen: out of memory\n");
    return 1;
  }
  progen(seed, buf, n + 1);
  fputs(buf, stdout);
  free(buf);
  return 0;
}
