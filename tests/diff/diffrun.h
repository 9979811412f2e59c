/* diffrun.h: runs progen's programs on a device and compares the results,
 * for the differential tests (test_diff, test_gpu_diff).
 *
 * Requires: libkern (public API), progen.h. Produces: the seeds a run uses,
 * modules of several programs of one kind, plain or tiled (one C or NVRTC
 * compile for a batch of seeds, as compiles dominate the time), a run of
 * every kernel of a module on inputs drawn from each program's seed (the same
 * whether the program runs alone or in a batch), and a bit-for-bit comparison
 * of two runs.
 */
#ifndef KERN_TEST_DIFFRUN_H
#define KERN_TEST_DIFFRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kern.h"
#include "progen.h"

/* Seeds: KERN_DIFF_SEED (default DIFF_SEED_BASE) + 0 .. diff_count() - 1;
 * KERN_DIFF_COUNT overrides the count (default DIFF_COUNT plain programs,
 * DIFF_TILED_COUNT tiled ones). A module holds DIFF_BATCH plain programs or
 * DIFF_TILED_BATCH tiled ones (their C takes longer to compile: a compile
 * stays well inside the compiler's time limit on a busy machine). */
enum { DIFF_COUNT = 120, DIFF_TILED_COUNT = 40, DIFF_BATCH = 10, DIFF_TILED_BATCH = 5 };
#define DIFF_SEED_BASE 0x6b65726e00000000ull
uint64_t diff_seed(int k);
int diff_count(ProgenKind kind);

/* Programs of one kind that share a module (one C or NVRTC compile). */
typedef struct DiffBatch {
  uint64_t seeds[DIFF_BATCH];
  int n;
  ProgenKind kind;
} DiffBatch;

/* Batch b of diff_count(kind) seeds; diff_nbatches: how many there are. */
DiffBatch diff_batch(ProgenKind kind, int b);
int diff_nbatches(ProgenKind kind);
/* Program j of b alone. */
DiffBatch diff_one(const DiffBatch *b, int j);

/* The program of a seed, as `progen [--tiled] SEED` prints it (malloc'd). */
char *diff_program(uint64_t seed, ProgenKind kind);
/* One module of b's programs, program j's names prefixed "p<j>_" (malloc'd). */
char *diff_module(const DiffBatch *b);
/* "progen" or "progen --tiled": the command that prints a program again, given its seed. */
const char *diff_progen_args(ProgenKind kind);

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

/* How diff_run runs: tile_block > 0, the threads per instance of the tiled
 * kernels (kern_kernel_set_tile_block), else their default; strided (the CPU
 * only), every array a strided window of host memory (kern_array_wrap: 1-D
 * arrays every second or third element, 2-D ones with padded rows, some with
 * every second column), so the kernels' strided entry points run instead of
 * the dense ones, and a write outside an array's elements shows. */
typedef struct DiffOptions {
  int tile_block;
  bool strided;
} DiffOptions;

/* Loads the module of b, checks it has no diagnostics, and launches each
 * kernel of each program on dev with arguments drawn from the program's seed
 * (the launch and array shapes progen_launches gives), as o says (NULL: the
 * defaults). false, with the reason in err, when anything fails. */
bool diff_run(const DiffBatch *b, kern_device *dev, const DiffOptions *o, DiffResult *out,
              char *err, size_t errn);
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
