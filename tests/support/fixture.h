/* fixture.h: self-describing run fixtures (the .kern files of tests/kern/run).
 *
 * A run fixture is a .kern file whose comments say how to launch it and what
 * must come out, so one harness runs it on the CPU and on CUDA:
 *
 *   // launch: KERNEL DIM[,DIM...]
 *   // in NAME: DTYPE[N(,M...)] = v0 v1 ...     an input array (values row-major,
 *   //                                           vector/matrix dtypes as flat components;
 *   //                                           "= iota" fills 0, 1, 2, ...;
 *   //                                           DTYPE vec<T,N> or mat<T,M,N> (no spaces,
 *   //                                           T an integer or float32/float64):
 *   //                                           kern_dtype_vec's or kern_dtype_mat's;
 *   //                                           a bool is the byte written: 0 to 255;
 *   //                                           a float16 or bfloat16 its bits, and
 *   //                                           so each component of a quath or
 *   //                                           quat<bfloat16>)
 *   // out NAME: DTYPE[N(,M...)] = v0 v1 ...    an array whose final values are checked
 *   //                                           (initial values; omitted = zeros)
 *   // arg NAME: DTYPE = v0 [v1 ...]             a by-value argument
 *   // expect NAME: v0 v1 ...                    expected final values of an `out` array
 *   // tol: 1e-6                                 float tolerance (|a-b| <= tol*max(1,|b|))
 *   // debug                                     compile in debug mode
 *   // verify_fp                                 kern_module_set_verify_fp(m, true)
 *   // expect-status: KERN_ERR_BOUNDS            the launch must fail with this status
 *   // expect-message: text                      ... and its message must contain text
 *
 * Arguments are passed in the order the in/out/arg lines appear.
 */
#ifndef KERN_TEST_FIXTURE_H
#define KERN_TEST_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "kern.h"

enum { FX_MAX_ARGS = 16, FX_MAX_NAME = 64 };

typedef struct FxArg {
  char name[FX_MAX_NAME];
  int kind; /* 'i' in, 'o' out, 'a' by-value */
  kern_dtype dtype;
  int ndim;
  int64_t shape[4];
  int ncomp;         /* scalar components per element */
  long double *init; /* ncount values (components) or NULL */
  int64_t ninit;
  bool iota;
  long double *expect; /* out arrays with an expect line */
  int64_t nexpect;
} FxArg;

typedef struct Fixture {
  char path[1024];
  char *src;
  char kernel[FX_MAX_NAME];
  kern_dims dims;
  FxArg args[FX_MAX_ARGS];
  int nargs;
  double tol;
  bool debug;
  bool verify_fp; /* kern_module_set_verify_fp */
  kern_status expect_status;
  char expect_message[256];
  char error[512]; /* a malformed fixture */
} Fixture;

/* Parses the directives; false with f->error set when the fixture is malformed. */
bool fx_parse(Fixture *f, const char *path);
void fx_free(Fixture *f);

/* Runs the fixture on dev: compiles, creates the arrays, launches, reads the
 * out arrays back into results[i] (ncomp*count doubles, malloc'd) for each out
 * argument i (NULL for others). Returns the launch status; *msg gets the error
 * text of a failure (static storage of the harness). */
kern_status fx_run(const Fixture *f, kern_device *dev, long double *results[FX_MAX_ARGS], char *msg,
                   size_t msgn);
/* Compares results with the expect lines; appends mismatches to report. */
bool fx_check(const Fixture *f, long double *results[FX_MAX_ARGS], char *report, size_t n);
/* Compares two devices' results (integers exact, floats within ulps). */
bool fx_compare(const Fixture *f, long double *a[FX_MAX_ARGS], long double *b[FX_MAX_ARGS],
                double tol, char *report, size_t n);
int64_t fx_count(const FxArg *a); /* elements */
/* Parses and runs the fixture at path on dev and checks the expected status,
 * message and values: NULL when all is well, else a report (malloc'd). */
char *fx_run_report(const char *path, kern_device *dev, long double *results[FX_MAX_ARGS]);

#endif
