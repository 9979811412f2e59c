/* criterion_tsan.c: lets Criterion start under ThreadSanitizer (linked into the
 * test programs of -DKERN_SANITIZE=thread builds only).
 *
 * BoxFort, the sandbox inside libcriterion, maps its shared arenas at a
 * random fixed address: 0x200000000000 + (rand_r() & 0x3fffff) * 16 MiB, and
 * gives up after 10 tries that hit a mapped page ("Could not initialize
 * inheritable arena: Resource temporarily unavailable"). ThreadSanitizer
 * reserves all of that range for its shadow memory except
 * [0x550000000000, 0x568000000000), where it maps programs, so nearly every
 * start fails. This rand_r answers libcriterion's calls with offsets inside
 * that window (BoxFort still checks each page is free before it maps); every
 * other caller gets the C library's rand_r.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

enum { WINDOW_FIRST = 0x350000, WINDOW_COUNT = 0x18000 }; /* (0x5500.. - 0x2000..) / 16 MiB */

static int from_criterion(const void *caller) {
  Dl_info info;
  return dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "libcriterion");
}

int rand_r(unsigned *seed) {
  if (from_criterion(__builtin_return_address(0))) {
    *seed = *seed * 1103515245u + 12345u;
    return (int)(WINDOW_FIRST + (*seed >> 8) % WINDOW_COUNT);
  }
  int (*libc_rand_r)(unsigned *) = (int (*)(unsigned *))dlsym(RTLD_NEXT, "rand_r");
  return libc_rand_r ? libc_rand_r(seed) : 0;
}
