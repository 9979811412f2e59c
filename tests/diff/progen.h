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
 *  - vectors, quats, transforms and spatial vectors, the decompositions
 *    (svd3, svd2, qr3, eig3 into locals), a struct, helper functions (some
 *    overloaded), if/else,
 *    loops with constant bounds, break, continue, early returns;
 *  - array reads anywhere in bounds; writes only to the thread's own
 *    element of an out* array, so launches have no races.
 * A NaN made by arithmetic may differ in its bits between devices and
 * compilers; compare NaNs as NaNs.
 */
#ifndef KERN_PROGEN_H
#define KERN_PROGEN_H

#include <stddef.h>
#include <stdint.h>

/* The launch the kernels expect: a kernel with 1-D array parameters runs
 * over PROGEN_N indices and every array has PROGEN_N elements; a kernel with
 * 2-D arrays runs over (PROGEN_ROWS, PROGEN_COLS), the arrays' shape. */
enum { PROGEN_N = 64, PROGEN_ROWS = 8, PROGEN_COLS = 8 };

/* Writes the module for seed into buf as snprintf does (at most cap - 1
 * characters and a NUL; cap 0 writes nothing) and returns the length of the
 * whole text. Kernels are named k0, k1, ...; parameters named in* are read-only
 * arrays, out* arrays the kernel writes (each thread at its own index only),
 * a* by-value arguments. */
size_t progen(uint64_t seed, char *buf, size_t cap);
/* The same program with prefix (at most 8 characters) before every
 * module-level name (kernels, functions, constants, the struct), so that
 * several programs can share one module: with "p3_" the kernels are p3_k0 ... */
size_t progen_prefixed(uint64_t seed, const char *prefix, char *buf, size_t cap);

#endif
