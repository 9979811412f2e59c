/* test_rt_oom.c: failing the N-th allocation. This executable replaces the
 * malloc family (forwarding to the next definition: libc's, or the
 * sanitizer's) so that allocation N of an operation fails, for every N the
 * operation makes. Each run must fail cleanly (a status and a message, no
 * crash), leak nothing (LeakSanitizer in sanitizer builds) and leave the
 * library working.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"
#include "core.h"

/* ---- the interposed allocator -------------------------------------------------- */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);

/* The replacements can run before a sanitizer runtime has initialized (its
 * own start-up allocates): they must not be instrumented. */
#define RAW __attribute__((no_sanitize("address", "undefined", "thread")))

/* dlsym may allocate while the real functions are being looked up. */
static _Alignas(16) char boot[1 << 16];
static size_t boot_used;
static _Thread_local int resolving;

RAW static bool in_boot(const void *p) {
  return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

RAW static void *boot_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (boot_used + n > sizeof boot) return NULL;
  void *p = boot + boot_used;
  boot_used += n;
  return p;
}

RAW static void lookup(void **fnptr, const char *name) { *fnptr = dlsym(RTLD_NEXT, name); }

RAW static void resolve(void) {
  resolving = 1;
  /* POSIX lets dlsym's object pointer stand for a function. */
  lookup((void **)&real_malloc, "malloc");
  lookup((void **)&real_calloc, "calloc");
  lookup((void **)&real_realloc, "realloc");
  lookup((void **)&real_free, "free");
  lookup((void **)&real_posix_memalign, "posix_memalign");
  lookup((void **)&real_aligned_alloc, "aligned_alloc");
  resolving = 0;
}

/* Armed on one thread only: allocation number `countdown` from now fails. */
static _Thread_local long countdown, counted;
static _Thread_local bool counting;

RAW static bool fail_now(void) {
  if (counting) counted++;
  return countdown > 0 && --countdown == 0;
}

RAW void *malloc(size_t n) {
  if (!real_malloc) {
    if (resolving) return boot_alloc(n);
    resolve();
  }
  return fail_now() ? NULL : real_malloc(n);
}

RAW void *calloc(size_t n, size_t m) {
  if (!real_calloc) {
    if (resolving) return boot_alloc(n * m);
    resolve();
  }
  return fail_now() ? NULL : real_calloc(n, m);
}

RAW void *realloc(void *p, size_t n) {
  if (!real_realloc) resolve();
  if (in_boot(p)) {
    char *q = malloc(n);
    for (size_t i = 0; q && i < n && (const char *)p + i < boot + sizeof boot; i++)
      q[i] = ((const char *)p)[i];
    return q;
  }
  return fail_now() ? NULL : real_realloc(p, n);
}

RAW void free(void *p) {
  if (!p || in_boot(p)) return;
  if (!real_free) resolve();
  real_free(p);
}

RAW int posix_memalign(void **out, size_t align, size_t n) {
  if (!real_posix_memalign) resolve();
  return fail_now() ? 12 /* ENOMEM */ : real_posix_memalign(out, align, n);
}

RAW void *aligned_alloc(size_t align, size_t n) {
  if (!real_aligned_alloc) resolve();
  return fail_now() ? NULL : real_aligned_alloc(align, n);
}

/* ---- operations ------------------------------------------------------------------ */

typedef kern_status (*op_fn)(void);

static kern_status status_of(const void *p) { return p ? KERN_OK : kern_last_status(); }

static kern_status op_arrays(void) {
  kern_device *d = kern_device_get("cpu");
  int64_t s2[2] = {40, 30}, off[2] = {1, 2}, win[2] = {20, 10}, off2[2] = {2, 3};
  kern_array *a = kern_array_new(d, KERN_FLOAT32, 2, s2);
  kern_status st = status_of(a);
  kern_array *v = st ? NULL : kern_array_view(a, 2, off, win);
  if (!st) st = status_of(v);
  kern_array *v2 = st ? NULL : kern_array_view(a, 2, off2, win);
  if (!st) st = status_of(v2);
  float x = 2;
  if (!st) st = kern_array_fill(v, &x);
  if (!st) st = kern_array_copy(v2, v); /* overlapping strided views: staged through a buffer */
  kern_array *w = st ? NULL : kern_array_wrap(kern_array_data(a), d, KERN_FLOAT32, 2, s2, NULL);
  if (!st) st = status_of(w);
  kern_array_free(w);
  kern_array_free(v2);
  kern_array_free(v);
  kern_array_free(a);
  return st;
}

static const char *src = "struct P { vec3 pos; float m; };\n"
                         "kernel void k(P[] ps, float[] out, float s) {\n"
                         "    int i = tid();\n"
                         "    out[i] = ps[i].m * s + ps[i].pos.x;\n"
                         "}\n";

static kern_status op_module_and_launch(void) {
  kern_module *m = kern_module_from_source("oom.kern", src);
  kern_status st = status_of(m);
  kern_kernel *k = st ? NULL : kern_module_kernel(m, "k");
  if (!st) st = status_of(k);
  kern_dtype dt = st ? KERN_DTYPE_INVALID : kern_module_dtype(m, "P");
  if (!st && dt == KERN_DTYPE_INVALID) st = kern_last_status();
  int64_t n = 64;
  kern_array *ps = st ? NULL : kern_array_new(kern_device_get("cpu"), dt, 1, &n);
  if (!st) st = status_of(ps);
  kern_array *out = st ? NULL : kern_array_new(kern_device_get("cpu"), KERN_FLOAT32, 1, &n);
  if (!st) st = status_of(out);
  if (!st) st = KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(n), ps, out, 2.0f);
  if (!st) st = KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(n), ps, ps, 2.0f);
  if (st == KERN_ERR_INVALID_ARGUMENT && strstr(kern_last_error(), "expects float32[]"))
    st = KERN_OK;
  kern_array_free(ps);
  kern_array_free(out);
  kern_module_free(m);
  return st;
}

/* Counts the allocations of op, then fails each one in turn. */
static void fail_each(op_fn op, const char *name) {
  cr_assert_eq(op(), KERN_OK, "%s works: %s", name, kern_last_error());
  counting = true;
  counted = 0;
  cr_assert_eq(op(), KERN_OK);
  counting = false;
  long total = counted, failures = 0, oom = 0;
  cr_assert_gt(total, 0);
  for (long i = 1; i <= total; i++) {
    kern_clear_error();
    countdown = i;
    kern_status st = op();
    bool fired = countdown == 0;
    countdown = 0;
    if (!fired) continue;
    if (st != KERN_OK) {
      failures++;
      oom += st == KERN_ERR_OUT_OF_MEMORY;
      if (getenv("OOM_VERBOSE"))
        cr_log_info("%ld: %s %.200s", i, kern_status_name(st), kern_last_error());
      cr_assert_str_neq(kern_last_error(), "", "%s, allocation %ld: a failure needs a message",
                        name, i);
    }
    cr_assert_eq(op(), KERN_OK, "%s after failing allocation %ld: %s", name, i, kern_last_error());
  }
  cr_log_info("%s: %ld allocations, %ld failed the operation (%ld as out of memory)", name, total,
              failures, oom);
  cr_assert_gt(failures, 0);
}

static void setup(void) {
  if (!getenv("KERN_CACHE_DIR")) setenv("KERN_CACHE_DIR", "/tmp/kern-oom-test-cache", 1);
  setenv("KERN_NUM_THREADS", "1", 1);
  cr_assert_eq(kern_init(), KERN_OK);
}

Test(oom, array_operations, .init = setup) { fail_each(op_arrays, "arrays"); }

Test(oom, module_load_and_launch, .init = setup, .timeout = 600) {
  fail_each(op_module_and_launch, "module + launch");
}
