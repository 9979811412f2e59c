/* progen.h: a random kern program generator for differential testing.
 *
 * Requires: libc only (no kern headers), so the generator builds on its own.
 * Produces: progen(), a deterministic function of a seed that writes a
 * well-typed kern module whose kernels have one defined result on every
 * backend and optimisation level:
 *  - integer arithmetic of every width, including the operations kern defines
 *    for all inputs (x / 0, MIN / -1, shifts past the width, wrapping);
 *  - float add, sub, mul, div, sqrt, conversions and the exact builtins
 *    (min, max, clamp, abs, floor, rint, erf ...), never a platform
 *    transcendental function;
 *  - vectors, quats, transforms and spatial vectors, vec<T, N> of every
 *    number type and mat<T, M, N> of floats, the decompositions
 *    (svd3, svd2, qr3, eig3 into locals), a struct, helper functions (some
 *    overloaded), if/else,
 *    loops with constant bounds, break, continue, early returns;
 *  - array reads anywhere in bounds; writes only to the thread's own
 *    element of an out* array, so launches have no races.
 * A NaN made by arithmetic may differ in its bits between devices and
 * compilers; compare NaNs as NaNs. Tiled programs (PROGEN_TILED, written by
 * progen_tile.c) are described below.
 */
#ifndef KERN_PROGEN_H
#define KERN_PROGEN_H

#include <stddef.h>
#include <stdint.h>

/* The launch the kernels of a plain program expect: a kernel with 1-D array
 * parameters runs over PROGEN_N indices and every array has PROGEN_N
 * elements; a kernel with 2-D arrays runs over (PROGEN_ROWS, PROGEN_COLS),
 * the arrays' shape. Tiled programs choose their own (progen_launches). */
enum { PROGEN_N = 64, PROGEN_ROWS = 8, PROGEN_COLS = 8 };
enum { PROGEN_MAX_PARAMS = 16, PROGEN_MAX_KERNELS = 4, PROGEN_CHECKS = 16 };

/* PROGEN_PLAIN: one thread per index, as above. PROGEN_TILED: tiled kernels
 * (docs/language.md, "Tiles"): tile shapes of 1 to a few thousand elements,
 * 1-D and 2-D, chains of tile operations with scalar code between them,
 * within a GPU block's 48 KiB of shared memory per kernel; every instance
 * computes, and each output array is written by one instance only (or, for
 * integers, only through atomic adds), so a launch has no races. Each tiled
 * kernel's last parameter is `int32[] chk` (PROGEN_CHECKS elements, zero
 * before the launch): its checks write reductions and scans of small tiles
 * out in scalar code, in the documented order, and chk[c] counts the
 * instances where check c found other bits: it must stay zero. */
typedef enum { PROGEN_PLAIN, PROGEN_TILED } ProgenKind;

/* How a kernel is launched: its launch dims and each array parameter's shape. */
typedef struct ProgenLaunch {
  int ndim; /* of the launch, 1 or 2 */
  int64_t dims[2];
  int nparams;
  int64_t shape[PROGEN_MAX_PARAMS][2]; /* array parameter p: its extents; unused for a value */
} ProgenLaunch;

/* Writes the plain module for seed into buf as snprintf does (at most cap - 1
 * characters and a NUL; cap 0 writes nothing) and returns the length of the
 * whole text. Kernels are named k0, k1, ...; parameters named in* are read-only
 * arrays, out* arrays the kernel writes (each thread at its own index only),
 * a* by-value arguments. */
size_t progen(uint64_t seed, char *buf, size_t cap);
/* The same program with prefix (at most 8 characters) before every
 * module-level name (kernels, functions, constants, the struct), so that
 * several programs can share one module: with "p3_" the kernels are p3_k0 ... */
size_t progen_prefixed(uint64_t seed, const char *prefix, char *buf, size_t cap);
/* progen_prefixed for a program of either kind (a seed gives one program of each). */
size_t progen_write(uint64_t seed, ProgenKind kind, const char *prefix, char *buf, size_t cap);
/* The launches of the program's kernels k0, k1 ... into out[0 .. max); returns
 * how many kernels it has (0: out of memory). */
int progen_launches(uint64_t seed, ProgenKind kind, ProgenLaunch *out, int max);

#endif
