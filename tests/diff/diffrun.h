/* diffrun.h: runs progen's programs on a device and compares the results,
 * for the differential tests (test_diff, test_gpu_diff).
 *
 * Requires: libkern (public API), progen.h. Produces: the seeds a run uses,
 * modules of several programs (one C or NVRTC compile for a batch of seeds,
 * as compiles dominate the time), a run of every kernel of a module on
 * inputs drawn from each program's seed (the same whether the program runs
 * alone or in a batch), and a bit-for-bit comparison of two runs.
 */
#ifndef KERN_TEST_DIFFRUN_H
#define KERN_TEST_DIFFRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern.h"

/* Seeds: KERN_DIFF_SEED (default DIFF_SEED_BASE) + 0 .. diff_count() - 1;
 * KERN_DIFF_COUNT overrides the count (default DIFF_COUNT). */
enum { DIFF_COUNT = 120, DIFF_BATCH = 10 };
#define DIFF_SEED_BASE 0x6b65726e00000000ull
uint64_t diff_seed(int k);
int diff_count(void);

/* The program of a seed, as `progen SEED` prints it (malloc'd). */
char *diff_program(uint64_t seed);
/* One module of the programs of seeds[0 .. n), program j's names prefixed
 * "p<j>_" (malloc'd). */
char *diff_module(const uint64_t *seeds, int n);

/* Every array argument of every kernel after its launch, in launch order. */
typedef struct DiffArray {
  int prog, kernel, param; /* program j of the module, its kernel k<kernel> */
  kern_dtype dtype;
  size_t nbytes;
  unsigned char *bytes;
} DiffArray;

typedef struct DiffResult {
  DiffArray *arrays;
  int narrays;
} DiffResult;

/* Loads the module of seeds[0 .. n), checks it has no diagnostics, and
 * launches each kernel of each program on dev with arguments drawn from the
 * program's seed. false, with the reason in err, when anything fails. */
bool diff_run(const uint64_t *seeds, int n, kern_device *dev, DiffResult *out, char *err,
              size_t errn);
/* Same bits in every array of program prog (any NaN equals any NaN of its
 * type: a NaN made by arithmetic has no defined bits). false: the first
 * differences, in why. */
bool diff_same(const DiffResult *a, const DiffResult *b, int prog, char *why, size_t n);
void diff_free(DiffResult *);

/* Creates a private cache directory and points KERN_CACHE_DIR at it (before
 * kern_init); diff_cache_remove deletes it. */
const char *diff_cache_make(void);
void diff_cache_remove(void);

#endif
