/* test_diff.c: differential testing of the compiler with random programs.
 *
 * Requires: tests/diff (progen, diffrun), a C compiler for the CPU device;
 * gcc and NVRTC for the checks that use them (skipped, saying so, without).
 * Produces: for diff_count() seeds from a fixed base, progen's plain programs
 * and tiled ones (DIFF_BATCH, DIFF_TILED_BATCH to a module) compiled for the
 * CPU at -O0 and at -O3 (KERN_CPU_OPT), and by gcc -O0 when there is a gcc,
 * run on the same random inputs, with bit-identical results required; at -O3
 * also on strided arrays, and the tiled ones with other threads per instance
 * (kern_kernel_set_tile_block, which the CPU ignores); every check of a tiled
 * program (a reduction or scan written out in its documented order) must
 * pass, and each tiled kernel must fit a GPU block's shared memory; every
 * module is compiled through NVRTC to PTX, so CUDA code generation is
 * checked without a GPU (the tiled ones to sm_90 machine code, whose
 * assembler enforces a block's shared memory; test_gpu_diff runs the
 * programs on one). A failure
 * prints the seed, the program and the first differences; `progen SEED`
 * (`progen --tiled SEED`) prints the program again. Each test process uses a
 * private cache directory, so every compile is real.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvrtc.h"
#include "toolchain.h"
#include "backend.h"
#include "diff_suite.h"
#include "emit.h"
#include "front.h"
#include "harness.h"

enum { PARTS = 4, MAX_REPORTS = 3 };

/* The CPU ignores a tiled kernel's threads per instance: these must change nothing. */
static const int cpu_tile_blocks[] = {32, 1024};

/* Under ASan, beside the other suites on two cores, one batch of tiled
 * programs took over 600 seconds (300 alone, 65 without ASan). */
TestSuite(diff, .init = diff_setup, .fini = diff_teardown, .timeout = TH_TIMEOUT(600));

/* ---- reports ------------------------------------------------------------------------------ */

typedef struct Tally {
  int count, failed, reports;
} Tally;

static void report(Tally *t, uint64_t seed, ProgenKind kind, const char *what, const char *detail) {
  t->failed++;
  const char *cmd = diff_progen_args(kind);
  if (t->reports++ >= MAX_REPORTS) {
    cr_log_error("%s %llu: %s (program not shown)\n%s", cmd, (unsigned long long)seed, what,
                 detail);
    return;
  }
  char *src = diff_program(seed, kind);
  cr_log_error("seed %llu: %s\n%s\nreproduce with: %s %llu > case.kern\n%s",
               (unsigned long long)seed, what, detail, cmd, (unsigned long long)seed,
               src ? src : "");
  free(src);
}

static bool run_with(const char *level, const DiffBatch *b, const DiffOptions *o, DiffResult *r,
                     char *err, size_t n) {
  setenv("KERN_CPU_OPT", level, 1);
  return diff_run(b, kern_device_get("cpu"), o, r, err, n);
}

static bool run_at(const char *level, const DiffBatch *b, DiffResult *r, char *err, size_t n) {
  return run_with(level, b, NULL, r, err, n);
}

/* A batch failed with batch_err: which of its programs fail alone? (If
 * none does, the batch's first seed takes the blame.) */
static void blame(Tally *t, const DiffBatch *b, const char *level, const char *what,
                  const char *batch_err) {
  char err[8192];
  int before = t->failed;
  for (int j = 0; j < b->n; j++) {
    DiffBatch one = diff_one(b, j);
    DiffResult r;
    if (!run_at(level, &one, &r, err, sizeof err)) report(t, one.seeds[0], b->kind, what, err);
    diff_free(&r);
  }
  if (t->failed == before)
    report(t, b->seeds[0], b->kind, "its batch of programs fails together", batch_err);
}

/* Reports each program of b whose arrays differ between x and y. */
static void compare(Tally *t, const DiffBatch *b, const DiffResult *x, const DiffResult *y,
                    const char *what) {
  char why[4096];
  for (int j = 0; j < b->n; j++)
    if (!diff_same(x, y, j, why, sizeof why)) report(t, b->seeds[j], b->kind, what, why);
}

/* The same module at -O3 run another way (o), against o3: each program that
 * fails alone is reported. */
static void run_other_way(Tally *t, const DiffBatch *b, const DiffOptions *o, const DiffResult *o3,
                          const char *what) {
  char err[8192], fails[160];
  DiffResult r = {0};
  snprintf(fails, sizeof fails, "does not run with %s", what);
  if (!run_with("3", b, o, &r, err, sizeof err)) {
    int before = t->failed;
    for (int j = 0; j < b->n; j++) {
      DiffBatch one = diff_one(b, j);
      DiffResult r1;
      if (!run_with("3", &one, o, &r1, err, sizeof err))
        report(t, one.seeds[0], b->kind, fails, err);
      diff_free(&r1);
    }
    if (t->failed == before) report(t, b->seeds[0], b->kind, "its batch fails together", fails);
  } else {
    char differ[160];
    snprintf(differ, sizeof differ, "-O3 with %s and the default differ", what);
    compare(t, b, o3, &r, differ);
  }
  diff_free(&r);
}

/* At -O3: strided arrays (the kernels' strided entry points); tiled programs also with other
 * threads per instance than the default, which the CPU ignores. */
static void other_ways(Tally *t, const DiffBatch *b, const DiffResult *o3) {
  DiffOptions strided = {.strided = true};
  run_other_way(t, b, &strided, o3, "strided arrays");
  for (size_t k = 0;
       b->kind == PROGEN_TILED && k < sizeof cpu_tile_blocks / sizeof *cpu_tile_blocks; k++) {
    DiffOptions o = {.tile_block = cpu_tile_blocks[k]};
    char what[64];
    snprintf(what, sizeof what, "%d threads per instance", o.tile_block);
    run_other_way(t, b, &o, o3, what);
  }
}

/* -O0 against -O3 (and -O3 run other ways); the -O0 result stays in *o0 (empty
 * when it failed). */
static void opt_levels(Tally *t, const DiffBatch *b, DiffResult *o0) {
  char err[8192];
  DiffResult o3 = {0};
  bool ok = run_at("0", b, o0, err, sizeof err);
  if (!ok) blame(t, b, "0", "does not run at -O0", err);
  if (ok && !run_at("3", b, &o3, err, sizeof err))
    blame(t, b, "3", "does not run at -O3", err);
  else if (ok) {
    compare(t, b, o0, &o3, "-O0 and -O3 differ");
    other_ways(t, b, &o3);
  }
  if (!ok) diff_free(o0);
  diff_free(&o3);
  t->count += b->n;
}

/* gcc -O0 against the default compiler (clang) at -O0: what C leaves
 * unspecified, such as the order of evaluation, differs between the two.
 * Unoptimised, so that gcc's own optimiser bugs stay out of it (gcc 12 -O2
 * fuses multiply-adds in vectorised code despite -ffp-contract=off). */
static void with_gcc(Tally *t, const DiffBatch *b, const DiffResult *o0) {
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

/* Batches part, part + PARTS, ... of a kind: -O0 against -O3, then against gcc. */
static void cpu_part(ProgenKind kind, int part) {
  Tally t = {0};
  DiffResult *o0 = calloc((size_t)diff_nbatches(kind) / PARTS + 1, sizeof *o0);
  int n = 0;
  for (int b = part; b < diff_nbatches(kind); b += PARTS, n++) {
    DiffBatch bt = diff_batch(kind, b);
    opt_levels(&t, &bt, &o0[n]);
  }
  bool gcc = on_path("gcc");
  if (gcc) {
    kern_shutdown();
    setenv("KERN_CC", "gcc", 1);
    cr_assert_eq(kern_init(), KERN_OK);
  }
  for (int b = part, j = 0; b < diff_nbatches(kind); b += PARTS, j++) {
    DiffBatch bt = diff_batch(kind, b);
    if (gcc && o0[j].narrays) with_gcc(&t, &bt, &o0[j]);
    diff_free(&o0[j]);
  }
  free(o0);
  unsetenv("KERN_CPU_OPT");
  if (!gcc) cr_log_info("no gcc on PATH: the comparison with gcc is skipped");
  cr_log_info("part %d: %d %sprograms at -O0 and -O3, with strided arrays%s%s, %d failed", part,
              t.count, kind == PROGEN_TILED ? "tiled " : "",
              kind == PROGEN_TILED ? ", over tile blocks" : "", gcc ? ", and by gcc" : "",
              t.failed);
  cr_expect_eq(t.failed, 0, "%d of %d programs failed", t.failed, t.count);
}

Test(diff, cpu_part0) { cpu_part(PROGEN_PLAIN, 0); }
Test(diff, cpu_part1) { cpu_part(PROGEN_PLAIN, 1); }
Test(diff, cpu_part2) { cpu_part(PROGEN_PLAIN, 2); }
Test(diff, cpu_part3) { cpu_part(PROGEN_PLAIN, 3); }
Test(diff, tiled_cpu_part0) { cpu_part(PROGEN_TILED, 0); }
Test(diff, tiled_cpu_part1) { cpu_part(PROGEN_TILED, 1); }
Test(diff, tiled_cpu_part2) { cpu_part(PROGEN_TILED, 2); }
Test(diff, tiled_cpu_part3) { cpu_part(PROGEN_TILED, 3); }

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
  DiffBatch one = {.seeds = {diff_seed(0)}, .n = 1, .kind = PROGEN_PLAIN};
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

/* ---- what a GPU needs, checked without one ------------------------------------------------ */

/* Every tiled kernel fits a GPU block's shared memory (else its first GPU launch fails):
 * progen counts the storage as the checker does; this is where that is kept true. */
static void fits_a_block(Tally *t, const DiffBatch *b) {
  char *src = diff_module(b);
  FrontResult r = front_compile("progen.kern", src, src ? strlen(src) : 0);
  char why[256];
  int before = t->failed;
  if (!r.ok) {
    for (int j = 0; j < b->n; j++) { /* which program? */
      DiffBatch one = diff_one(b, j);
      char *s1 = diff_module(&one);
      FrontResult r1 = front_compile("progen.kern", s1, s1 ? strlen(s1) : 0);
      if (!r1.ok) report(t, one.seeds[0], b->kind, "does not check", "");
      front_free(r1.prog);
      free(s1);
    }
    if (t->failed == before) report(t, b->seeds[0], b->kind, "its batch does not check", "");
  }
  for (int k = 0; r.ok && k < r.prog->nkernels; k++) {
    const Decl *d = r.prog->kernels[k];
    int j = atoi(d->name + 1); /* p<j>_k<n> */
    if (d->tile_total <= RT_TILE_SHARED_LIMIT && d->tiled) continue;
    snprintf(why, sizeof why, "  kernel %s: %s, %lld bytes of tiles (a GPU block has %d)\n",
             d->name, d->tiled ? "tiled" : "not tiled", (long long)d->tile_total,
             RT_TILE_SHARED_LIMIT);
    report(t, b->seeds[j], b->kind, "a kernel that no GPU block fits", why);
  }
  t->count += b->n;
  front_free(r.prog);
  free(src);
}

Test(diff, tiled_kernels_fit_a_gpu_block) {
  Tally t = {0};
  for (int b = 0; b < diff_nbatches(PROGEN_TILED); b++) {
    DiffBatch bt = diff_batch(PROGEN_TILED, b);
    fits_a_block(&t, &bt);
  }
  cr_log_info("%d tiled programs checked against a GPU block's shared memory, %d failed", t.count,
              t.failed);
  cr_expect_eq(t.failed, 0, "%d of %d tiled programs failed", t.failed, t.count);
}

/* ---- CUDA code generation, through NVRTC ------------------------------------------------ */

/* Plain programs to PTX; tiled ones to sm_90 machine code, whose assembler refuses a kernel
 * with more static shared memory than a block has: what the checker counted must fit. */
static bool nvrtc_compiles(const DiffBatch *b, char *err, size_t n) {
  char *src = diff_module(b);
  FrontResult r = front_compile("progen.kern", src, src ? strlen(src) : 0);
  EmitOptions o = {.debug = false, .line_directives = true};
  char *cuda = r.ok ? emit_program(r.prog, EMIT_CUDA, &o) : NULL, *out = NULL;
  size_t len;
  bool tiled = b->kind == PROGEN_TILED;
  bool is_ptx, ok = cuda && tc_nvrtc_compile(cuda, "progen.kern", 90, tiled, false, &out, &len,
                                             &is_ptx) == KERN_OK;
  snprintf(err, n, "%s", !r.ok ? "does not check" : !cuda ? "emit failed" : kern_last_error());
  ok = ok && (tiled ? !is_ptx : is_ptx && strstr(out, ".entry"));
  free(out);
  free(cuda);
  free(src);
  front_free(r.prog);
  return ok;
}

static void nvrtc_part(ProgenKind kind, int part) {
  const char *why;
  if (!tc_nvrtc_load(&why)) {
    diff_cache_remove(); /* a skipped test does not reach .fini */
    cr_skip_test("NVRTC not available (%s): CUDA compiles of random programs skipped", why);
  }
  Tally t = {0};
  char err[8192];
  for (int b = part; b < diff_nbatches(kind); b += PARTS) {
    DiffBatch bt = diff_batch(kind, b);
    t.count += bt.n;
    if (nvrtc_compiles(&bt, err, sizeof err)) continue;
    int before = t.failed;
    char one_err[8192];
    for (int j = 0; j < bt.n; j++) { /* which program? */
      DiffBatch one = diff_one(&bt, j);
      if (!nvrtc_compiles(&one, one_err, sizeof one_err))
        report(&t, one.seeds[0], kind, "NVRTC fails", one_err);
    }
    if (t.failed == before)
      report(&t, bt.seeds[0], kind, "NVRTC fails on its batch of programs", err);
  }
  cr_log_info("NVRTC %d, part %d: %d %sprograms, %d failed", tc_nvrtc_version(), part, t.count,
              kind == PROGEN_TILED ? "tiled " : "", t.failed);
  cr_expect_eq(t.failed, 0, "%d of %d programs failed to compile for CUDA", t.failed, t.count);
}

Test(diff, nvrtc_part0) { nvrtc_part(PROGEN_PLAIN, 0); }
Test(diff, nvrtc_part1) { nvrtc_part(PROGEN_PLAIN, 1); }
Test(diff, nvrtc_part2) { nvrtc_part(PROGEN_PLAIN, 2); }
Test(diff, nvrtc_part3) { nvrtc_part(PROGEN_PLAIN, 3); }
Test(diff, tiled_nvrtc_part0) { nvrtc_part(PROGEN_TILED, 0); }
Test(diff, tiled_nvrtc_part1) { nvrtc_part(PROGEN_TILED, 1); }
Test(diff, tiled_nvrtc_part2) { nvrtc_part(PROGEN_TILED, 2); }
Test(diff, tiled_nvrtc_part3) { nvrtc_part(PROGEN_TILED, 3); }
