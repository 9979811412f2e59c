/* bench_access: what each launch access mode costs per launch on the CPU.
 *
 * A one-thread launch of a kernel with four array parameters, repeated
 * 100,000 times under RELAXED, STRICT and CHECKED (kern's own arrays), and
 * under CHECKED with one wrapped array of unknown provenance (warned once,
 * then looked up in the warned list on every launch). Rounds are interleaved
 * and the median round is reported in ns per launch, with the difference to
 * RELAXED: the cost of the check itself, since the launch work is the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "kern.h"

enum { LAUNCHES = 100000, ROUNDS = 7 };

static const char *src = "kernel void touch(float[] a, float[] b, float[] c, int[] d) {\n"
                         "    int i = tid();\n"
                         "    a[i] = b[i] + c[i] + float(d[i]);\n"
                         "}\n";

static void quiet(const char *msg, void *ud) {
  (void)msg;
  ++*(int *)ud;
}

typedef struct variant {
  const char *name;
  kern_access_mode mode;
  kern_array *c; /* the third argument: kern's array, or a wrapped one */
  double ns[ROUNDS];
} variant;

/* ns per launch of one round; -1 if a launch failed. */
static double round_ns(kern_kernel *k, kern_device *cpu, kern_array **arr, const variant *v) {
  kern_set_launch_access_mode(v->mode);
  double t0 = bench_now();
  for (int i = 0; i < LAUNCHES; i++)
    if (KERN_LAUNCH(k, cpu, KERN_DIM1(1), arr[0], arr[1], v->c, arr[3]) != KERN_OK) return -1;
  return (bench_now() - t0) * 1e9 / LAUNCHES;
}

int main(void) {
  kern_device *cpu = kern_device_get("cpu");
  kern_module *m = kern_module_from_source("bench_access.kern", src);
  kern_kernel *k = m ? kern_module_kernel(m, "touch") : NULL;
  if (!cpu || !k) {
    fprintf(stderr, "bench_access: %s\n", kern_last_error());
    return 1;
  }
  int64_t n = 16;
  static float wrapped[16];
  kern_array *arr[4] = {
      kern_array_new(cpu, KERN_FLOAT32, 1, &n), kern_array_new(cpu, KERN_FLOAT32, 1, &n),
      kern_array_new(cpu, KERN_FLOAT32, 1, &n), kern_array_new(cpu, KERN_INT32, 1, &n)};
  kern_array *unknown = kern_array_wrap(wrapped, cpu, KERN_FLOAT32, 1, &n, NULL);
  int warnings = 0;
  kern_set_warning_handler(quiet, &warnings);
  variant vs[] = {{"RELAXED", KERN_ACCESS_RELAXED, arr[2], {0}},
                  {"STRICT", KERN_ACCESS_STRICT, arr[2], {0}},
                  {"CHECKED", KERN_ACCESS_CHECKED, arr[2], {0}},
                  {"CHECKED (one UNKNOWN array)", KERN_ACCESS_CHECKED, unknown, {0}}};
  int nv = (int)(sizeof vs / sizeof vs[0]);
  for (int v = 0; v < nv; v++) round_ns(k, cpu, arr, &vs[v]); /* compile, warm caches */
  for (int r = 0; r < ROUNDS; r++)
    for (int v = 0; v < nv; v++)
      if ((vs[v].ns[r] = round_ns(k, cpu, arr, &vs[v])) < 0) {
        fprintf(stderr, "bench_access: %s: %s\n", vs[v].name, kern_last_error());
        return 1;
      }
  printf(
      "access mode cost: 1-thread CPU launch, 4 array parameters, %d launches x %d rounds (median)\n",
      LAUNCHES, ROUNDS);
  double base = 0;
  for (int v = 0; v < nv; v++) {
    qsort(vs[v].ns, ROUNDS, sizeof vs[v].ns[0], bench_cmp);
    double med = vs[v].ns[ROUNDS / 2];
    if (v == 0) base = med;
    printf("  %-28s %8.1f ns/launch  (%+.1f ns vs RELAXED)\n", vs[v].name, med, med - base);
  }
  printf("  warnings sent: %d (one per parameter and device pair)\n", warnings);
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  kern_set_warning_handler(NULL, NULL);
  for (int i = 0; i < 4; i++) kern_array_free(arr[i]);
  kern_array_free(unknown);
  kern_module_free(m);
  return 0;
}
