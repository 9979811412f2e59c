/* strided_check.h: one sequence of fills, writes, reads and copies on
 * strided views (windows of 2-D and 3-D arrays, one-element-wide columns,
 * overlapping windows, CPU windows), run on arrays of two chosen devices and
 * on the CPU, for any dtype; the final contents of every array must be the
 * same bytes. test_memory.c runs it on stand-in GPUs (the core's copy plans,
 * no GPU needed), test_gpu_runtime.c on cuda:0, test_gpu_multi.c across two
 * GPUs.
 *
 * Requires: kern.h, Criterion. Produces: th_strided_run(a, b, dt, out),
 * th_strided_matches_cpu(a, b, dt). Breaks: every operation must return
 * KERN_OK (the assertion names it, the devices and the dtype).
 */
#ifndef KERN_TEST_STRIDED_CHECK_H
#define KERN_TEST_STRIDED_CHECK_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

enum { TH_S2 = 16, TH_S3 = 60, TH_STRIDED_ELEMS = 2 * TH_S2 + 2 * TH_S3 + TH_S2 };

typedef struct th_strided {
  kern_device *a, *b;
  kern_dtype dt;
  size_t es;
} th_strided;

/* Bytes that differ in every position of an element, and from array to array. */
static inline void th_strided_pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 37u + seed * 101u + 1u);
}

static inline void th_strided_ok(const th_strided *t, kern_status st, const char *what) {
  cr_assert_eq(st, KERN_OK, "%s (%s on %s/%s): %s: %s", what, kern_dtype_name(t->dt),
               kern_device_name(t->a), kern_device_name(t->b), kern_status_name(st),
               kern_last_error());
}

static inline kern_array *th_strided_new(const th_strided *t, kern_device *d, int nd,
                                         const int64_t *shape, unsigned seed) {
  kern_array *x = kern_array_new(d, t->dt, nd, shape);
  cr_assert_not_null(x, "%s on %s: %s", kern_dtype_name(t->dt), kern_device_name(d),
                     kern_last_error());
  size_t n = kern_array_nbytes(x);
  unsigned char *p = malloc(n);
  th_strided_pattern(p, n, seed);
  th_strided_ok(t, kern_array_write(x, p, n), "writing a whole array");
  free(p);
  return x;
}

/* A window of x (freed by the caller). */
static inline kern_array *th_win(kern_array *x, const int64_t *off, const int64_t *shape) {
  kern_array *v = kern_array_view(x, kern_array_ndim(x), off, shape);
  cr_assert_not_null(v, "%s", kern_last_error());
  return v;
}

static inline void th_strided_copy(const th_strided *t, kern_array *dst, const kern_array *src,
                                   const char *what) {
  th_strided_ok(t, kern_array_copy(dst, src), what);
}

/* Runs the sequence with 2-D and 3-D arrays on t->a and t->b and a CPU
 * array; out gets the final bytes of all of them and of one strided read
 * (TH_STRIDED_ELEMS + 6 elements). */
static inline void th_strided_run(kern_device *a, kern_device *b, kern_dtype dt,
                                  unsigned char *out) {
  th_strided t = {a, b, dt, kern_dtype_size(dt)};
  const int64_t s2[2] = {4, 4}, s3[3] = {3, 4, 5}, d3[3] = {2, 3, 4};
  kern_array *A2 = th_strided_new(&t, a, 2, s2, 1), *B2 = th_strided_new(&t, b, 2, s2, 2);
  kern_array *A3 = th_strided_new(&t, a, 3, s3, 3), *B3 = th_strided_new(&t, b, 3, s3, 4);
  kern_array *C2 = th_strided_new(&t, kern_device_get("cpu"), 2, s2, 5);
  kern_array *D3 = th_strided_new(&t, a, 3, d3, 6);
  unsigned char value[256], q[6 * 256];
  th_strided_pattern(value, t.es, 7);
  th_strided_pattern(q, 6 * t.es, 8);

  /* 2-D: a 2x2 window filled, a 3x2 window written, window to window, columns. */
  kern_array *w = th_win(A2, (int64_t[]){1, 1}, (int64_t[]){2, 2});
  th_strided_ok(&t, kern_array_fill(w, value), "kern_array_fill of a 2x2 window of a 4x4 array");
  kern_array *wb = th_win(B2, (int64_t[]){0, 2}, (int64_t[]){3, 2});
  th_strided_ok(&t, kern_array_write(wb, q, 6 * t.es), "kern_array_write of a 3x2 window");
  kern_array *wb2 = th_win(B2, (int64_t[]){2, 0}, (int64_t[]){2, 2});
  th_strided_copy(&t, wb2, w, "kern_array_copy window -> window (2-D)");
  kern_array *col_a = th_win(A2, (int64_t[]){0, 0}, (int64_t[]){4, 1}),
             *col_b = th_win(B2, (int64_t[]){0, 3}, (int64_t[]){4, 1});
  th_strided_copy(&t, col_a, col_b, "kern_array_copy column -> column");
  kern_array *r = th_win(A2, (int64_t[]){1, 0}, (int64_t[]){2, 3});
  th_strided_ok(&t, kern_array_read(r, out + (size_t)TH_STRIDED_ELEMS * t.es, 6 * t.es),
                "kern_array_read of a 2x3 window");
  /* CPU windows both ways. */
  kern_array *wc = th_win(C2, (int64_t[]){0, 0}, (int64_t[]){2, 2}),
             *wa = th_win(A2, (int64_t[]){2, 2}, (int64_t[]){2, 2});
  th_strided_copy(&t, wa, wc, "kern_array_copy CPU window -> window");
  kern_array *wc3 = th_win(C2, (int64_t[]){1, 1}, (int64_t[]){3, 3}),
             *wb3 = th_win(B2, (int64_t[]){0, 0}, (int64_t[]){3, 3});
  th_strided_copy(&t, wc3, wb3, "kern_array_copy window -> CPU window");

  /* 3-D: several blocks per copy, a dense array between, overlapping windows. */
  kern_array *v3 = th_win(A3, (int64_t[]){1, 1, 1}, (int64_t[]){2, 2, 3});
  th_strided_ok(&t, kern_array_fill(v3, value), "kern_array_fill of a 2x2x3 window");
  kern_array *src3 = th_win(A3, (int64_t[]){1, 1, 1}, d3),
             *dst3 = th_win(B3, (int64_t[]){0, 0, 0}, d3);
  th_strided_copy(&t, dst3, src3, "kern_array_copy 3-D window -> window");
  kern_array *b3 = th_win(B3, (int64_t[]){1, 0, 1}, d3);
  th_strided_copy(&t, D3, b3, "kern_array_copy 3-D window -> dense");
  kern_array *a3 = th_win(A3, (int64_t[]){0, 1, 0}, d3);
  th_strided_copy(&t, a3, D3, "kern_array_copy dense -> 3-D window");
  kern_array *lap = th_win(A3, (int64_t[]){0, 0, 0}, d3);
  th_strided_copy(&t, lap, src3, "kern_array_copy between overlapping 3-D windows");

  kern_array *all[] = {A2, B2, A3, B3, C2};
  size_t at = 0;
  for (int i = 0; i < 5; i++) {
    size_t n = kern_array_nbytes(all[i]);
    th_strided_ok(&t, kern_array_read(all[i], out + at, n), "reading an array back");
    at += n;
  }
  kern_array *views[] = {w,   wb,  wb2, col_a, col_b, r,  wc, wa,
                         wc3, wb3, v3,  src3,  dst3,  b3, a3, lap};
  for (size_t i = 0; i < sizeof views / sizeof *views; i++) kern_array_free(views[i]);
  for (int i = 0; i < 5; i++) kern_array_free(all[i]);
  kern_array_free(D3);
}

/* The sequence on a and b gives the CPU's bytes. */
static inline void th_strided_matches_cpu(kern_device *a, kern_device *b, kern_dtype dt) {
  size_t n = (TH_STRIDED_ELEMS + 6) * kern_dtype_size(dt);
  unsigned char *want = calloc(1, n), *got = calloc(1, n);
  kern_device *cpu = kern_device_get("cpu");
  th_strided_run(cpu, cpu, dt, want);
  th_strided_run(a, b, dt, got);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(got[i], want[i],
                 "%s arrays on %s and %s: byte %zu (element %zu) is %u, the CPU gives %u",
                 kern_dtype_name(dt), kern_device_name(a), kern_device_name(b), i,
                 i / kern_dtype_size(dt), got[i], want[i]);
  free(want), free(got);
}

#endif
