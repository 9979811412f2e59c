/* test_diff.c: differential testing of the compiler with random programs.
 *
 * Requires: tests/diff (progen, diffrun), a C compiler for the CPU device;
 * gcc and NVRTC for the checks that use them (skipped, saying so, without).
 * Produces: for diff_count() seeds from a fixed base, progen's programs
 * (DIFF_BATCH to a module) compiled for the CPU at -O0 and at -O3
 * (KERN_CPU_OPT), and by gcc -O0 when there is a gcc, run on the same random
 * inputs, with bit-identical results required; and every module compiled
 * through NVRTC to PTX, so CUDA code generation is checked without a GPU
 * (test_gpu_diff runs the programs on one). A failure prints the seed, the
 * program and the first differences; `progen SEED` prints the program again.
 * Each test process uses a private cache directory, so every compile is real.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvrtc.h"
#include "toolchain.h"
#include "diff_suite.h"
#include "emit.h"
#include "front.h"

enum { PARTS = 4, MAX_REPORTS = 3 };

TestSuite(diff, .init = diff_setup, .fini = diff_teardown, .timeout = 600);

/* ---- batches of seeds ---------------------------------------------------------------- */

typedef struct Batch {
  uint64_t seeds[DIFF_BATCH];
  int n;
} Batch;

static int nbatches(void) { return (diff_count() + DIFF_BATCH - 1) / DIFF_BATCH; }

static Batch batch(int b) {
  Batch r = {.n = 0};
  for (int k = b * DIFF_BATCH; k < diff_count() && r.n < DIFF_BATCH; k++)
    r.seeds[r.n++] = diff_seed(k);
  return r;
}

typedef struct Tally {
  int count, failed, reports;
} Tally;

static void report(Tally *t, uint64_t seed, const char *what, const char *detail) {
  t->failed++;
  if (t->reports++ >= MAX_REPORTS) {
    cr_log_error("seed %llu: %s (program not shown)\n%s", (unsigned long long)seed, what, detail);
    return;
  }
  char *src = diff_program(seed);
  cr_log_error("seed %llu: %s\n%s\nreproduce with: progen %llu > case.kern\n%s",
               (unsigned long long)seed, what, detail, (unsigned long long)seed, src ? src : "");
  free(src);
}

static bool run_at(const char *level, const Batch *b, DiffResult *r, char *err, size_t n) {
  setenv("KERN_CPU_OPT", level, 1);
  return diff_run(b->seeds, b->n, kern_device_get("cpu"), r, err, n);
}

/* A batch failed with batch_err: which of its programs fail alone? (If
 * none does, the batch's first seed takes the blame.) */
static void blame(Tally *t, const Batch *b, const char *level, const char *what,
                  const char *batch_err) {
  char err[8192];
  int before = t->failed;
  for (int j = 0; j < b->n; j++) {
    Batch one = {.seeds = {b->seeds[j]}, .n = 1};
    DiffResult r;
    if (!run_at(level, &one, &r, err, sizeof err)) report(t, one.seeds[0], what, err);
    diff_free(&r);
  }
  if (t->failed == before)
    report(t, b->seeds[0], "its batch of programs fails together", batch_err);
}

/* Reports each program of b whose arrays differ between x and y. */
static void compare(Tally *t, const Batch *b, const DiffResult *x, const DiffResult *y,
                    const char *what) {
  char why[4096];
  for (int j = 0; j < b->n; j++)
    if (!diff_same(x, y, j, why, sizeof why)) report(t, b->seeds[j], what, why);
}

/* -O0 against -O3; the -O0 result stays in *o0 (empty when it failed). */
static void opt_levels(Tally *t, const Batch *b, DiffResult *o0) {
  char err[8192];
  DiffResult o3 = {0};
  bool ok = run_at("0", b, o0, err, sizeof err);
  if (!ok) blame(t, b, "0", "does not run at -O0", err);
  if (ok && !run_at("3", b, &o3, err, sizeof err))
    blame(t, b, "3", "does not run at -O3", err);
  else if (ok)
    compare(t, b, o0, &o3, "-O0 and -O3 differ");
  if (!ok) diff_free(o0);
  diff_free(&o3);
  t->count += b->n;
}

/* gcc -O0 against the default compiler (clang) at -O0: what C leaves
 * unspecified, such as the order of evaluation, differs between the two.
 * Unoptimised, so that gcc's own optimiser bugs stay out of it (gcc 12 -O2
 * fuses multiply-adds in vectorised code despite -ffp-contract=off). */
static void with_gcc(Tally *t, const Batch *b, const DiffResult *o0) {
  char err[8192];
  DiffResult g = {0};
  if (!run_at("0", b, &g, err, sizeof err))
    blame(t, b, "0", "does not run when gcc builds it", err);
  else
    compare(t, b, o0, &g, "gcc and the default compiler differ at -O0");
  diff_free(&g);
}

static bool on_path(const char *name) {
  const char *path = getenv("PATH");
  char full[4096];
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    snprintf(full, sizeof full, "%.*s/%s", (int)n, p, name);
    if (access(full, X_OK) == 0) return true;
    p += n + (p[n] == ':');
  }
  return false;
}

/* Batches part, part + PARTS, ...: -O0 against -O3, then against gcc. */
static void cpu_part(int part) {
  Tally t = {0};
  DiffResult *o0 = calloc((size_t)nbatches() / PARTS + 1, sizeof *o0);
  int n = 0;
  for (int b = part; b < nbatches(); b += PARTS, n++) {
    Batch bt = batch(b);
    opt_levels(&t, &bt, &o0[n]);
  }
  bool gcc = on_path("gcc");
  if (gcc) {
    kern_shutdown();
    setenv("KERN_CC", "gcc", 1);
    cr_assert_eq(kern_init(), KERN_OK);
  }
  for (int b = part, j = 0; b < nbatches(); b += PARTS, j++) {
    Batch bt = batch(b);
    if (gcc && o0[j].narrays) with_gcc(&t, &bt, &o0[j]);
    diff_free(&o0[j]);
  }
  free(o0);
  unsetenv("KERN_CPU_OPT");
  if (!gcc) cr_log_info("no gcc on PATH: the comparison with gcc is skipped");
  cr_log_info("part %d: %d programs at -O0 and -O3%s, %d failed", part, t.count,
              gcc ? ", and by gcc" : "", t.failed);
  cr_expect_eq(t.failed, 0, "%d of %d programs failed", t.failed, t.count);
}

Test(diff, cpu_part0) { cpu_part(0); }
Test(diff, cpu_part1) { cpu_part(1); }
Test(diff, cpu_part2) { cpu_part(2); }
Test(diff, cpu_part3) { cpu_part(3); }

static int count_objects(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    n += l > 3 && !strcmp(e->d_name + l - 3, ".so");
  }
  if (d) closedir(d);
  return n;
}

/* Without its own cache entry per level, -O0 against -O3 would compare one build with itself. */
Test(diff, opt_levels_are_cached_apart) {
  const char *dir = getenv("KERN_CACHE_DIR");
  Batch one = {.seeds = {diff_seed(0)}, .n = 1};
  char err[8192] = "";
  DiffResult r;
  const char *levels[] = {"0", "3", "0", "2"};
  const int objects[] = {1, 2, 2, 3};
  for (int k = 0; k < 4; k++) {
    cr_assert(run_at(levels[k], &one, &r, err, sizeof err), "%s", err);
    diff_free(&r);
    cr_expect_eq(count_objects(dir), objects[k], "after -O%s: %d cached objects", levels[k],
                 count_objects(dir));
  }
  unsetenv("KERN_CPU_OPT");
}

/* ---- CUDA code generation, through NVRTC ------------------------------------------------ */

static bool nvrtc_compiles(const Batch *b, char *err, size_t n) {
  char *src = diff_module(b->seeds, b->n);
  FrontResult r = front_compile("progen.kern", src, src ? strlen(src) : 0);
  EmitOptions o = {.debug = false, .line_directives = true};
  char *cuda = r.ok ? emit_program(r.prog, EMIT_CUDA, &o) : NULL, *out = NULL;
  size_t len;
  bool is_ptx, ok = cuda && tc_nvrtc_compile(cuda, "progen.kern", 90, false, false, &out, &len,
                                             &is_ptx) == KERN_OK;
  snprintf(err, n, "%s", !r.ok ? "does not check" : !cuda ? "emit failed" : kern_last_error());
  ok = ok && is_ptx && strstr(out, ".entry");
  free(out);
  free(cuda);
  free(src);
  front_free(r.prog);
  return ok;
}

static void nvrtc_part(int part) {
  const char *why;
  if (!tc_nvrtc_load(&why)) {
    diff_cache_remove(); /* a skipped test does not reach .fini */
    cr_skip_test("NVRTC not available (%s): CUDA compiles of random programs skipped", why);
  }
  Tally t = {0};
  char err[8192];
  for (int b = part; b < nbatches(); b += 2) {
    Batch bt = batch(b);
    t.count += bt.n;
    if (nvrtc_compiles(&bt, err, sizeof err)) continue;
    int before = t.failed;
    char one_err[8192];
    for (int j = 0; j < bt.n; j++) { /* which program? */
      Batch one = {.seeds = {bt.seeds[j]}, .n = 1};
      if (!nvrtc_compiles(&one, one_err, sizeof one_err))
        report(&t, one.seeds[0], "NVRTC fails", one_err);
    }
    if (t.failed == before) report(&t, bt.seeds[0], "NVRTC fails on its batch of programs", err);
  }
  cr_log_info("NVRTC %d, part %d: %d programs, %d failed", tc_nvrtc_version(), part, t.count,
              t.failed);
  cr_expect_eq(t.failed, 0, "%d of %d programs failed to compile for CUDA", t.failed, t.count);
}

Test(diff, nvrtc_part0) { nvrtc_part(0); }
Test(diff, nvrtc_part1) { nvrtc_part(1); }
