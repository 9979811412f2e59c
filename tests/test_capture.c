/* test_capture.c: graph capture and replay on the CPU: what is recorded and
 * when it runs, argument values frozen at record time, arrays read at replay,
 * copies/fills/zeroing in order, conditional blocks, in-place update, every
 * misuse and refused operation (the capture must stay usable afterwards),
 * memory kept alive by graphs, debug errors in replays, concurrent replays,
 * and other threads' work during a capture (run at once, never recorded;
 * their unsafe calls refused in KERN_CAPTURE_GLOBAL mode).
 * Expected values are computed here from the operations, never by kern.
 * A second software device ("cpu2", the CPU backend's table under another
 * index) stands in for "another device" so cross-device misuse runs in CI.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expect.h"
#include "kern.h"
#include "core.h"
#include "cpu/cpu_backend.h"

static const char *src = "kernel void add(int[] x, int v) {\n"
                         "    int i = tid();\n"
                         "    x[i] = x[i] + v;\n"
                         "}\n"
                         "kernel void scale(float[] x, float s) {\n"
                         "    int i = tid();\n"
                         "    x[i] = x[i] * s;\n"
                         "}\n"
                         "kernel void count(int[] c) {\n"
                         "    atomic_add(&c[0], 1);\n"
                         "}\n"
                         "kernel void countdown(int[] flag, int[] iters) {\n"
                         "    flag[0] = flag[0] - 1;\n"
                         "    iters[0] = iters[0] + 1;\n"
                         "}\n"
                         "kernel void shift(vec3[] p, vec3 d) {\n"
                         "    int i = tid();\n"
                         "    p[i] = p[i] + d;\n"
                         "}\n"
                         "kernel void poke(int[] x, int at) {\n"
                         "    x[at] = 1;\n"
                         "}\n";

static kern_device *cpu;
static kern_module *mod;

static void setup(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  cpu = kern_device_get("cpu");
  mod = kern_module_from_source("capture.kern", src);
  cr_assert_not_null(mod, "%s", kern_last_error());
}

static void teardown(void) { kern_module_free(mod); }

TestSuite(capture, .init = setup, .fini = teardown);

static kern_kernel *K(const char *name) {
  kern_kernel *k = kern_module_kernel(mod, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

/* A second software-capture device: the CPU backend under another index. */
static kern_device *second_device(void) {
  kern_device *d = rt_device_add(RT_DEV_CPU, 7, &rt_cpu_ops, NULL);
  cr_assert_not_null(d);
  snprintf(d->name, sizeof d->name, "cpu2");
  return d;
}

/* ---- recording and replay ------------------------------------------------------------ */

Test(capture, launches_run_only_when_replayed) {
  int64_t n = 1000;
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK, "%s", kern_last_error());
  cr_expect(kern_capture_is_active(cpu));
  for (int i = 0; i < 3; i++)
    cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  cr_expect(!kern_capture_is_active(cpu));
  cr_expect_eq(kern_graph_device(g), cpu);
  th_expect_all(x, 0, "after capture, before any replay");
  for (int r = 1; r <= 5; r++) {
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
    th_expect_all(x, 3 * r, "after replays");
  }
  kern_graph_free(g);
  kern_array_free(x);
}

Test(capture, argument_values_are_frozen_at_record_time) {
  int64_t n = 64;
  kern_array *x = th_ints(cpu, n, 0);
  kern_array *p = kern_array_new(cpu, KERN_VEC3, 1, &n);
  int v = 7;
  float d[3] = {1.5f, -2.0f, 0.25f};
  kern_arg args[2] = {kern_arg_array(p), kern_arg_bytes(KERN_VEC3, d)};
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, v), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_launch(K("shift"), cpu, KERN_DIM1(n), 2, args), KERN_OK, "%s",
               kern_last_error());
  v = 1000; /* changing the C values afterwards changes nothing */
  d[0] = 99.0f;
  args[1] = kern_arg_bytes(KERN_VEC3, d);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 14, "two replays of add(x, 7)");
  float back[3 * 64];
  cr_assert_eq(kern_array_read(p, back, sizeof back), KERN_OK);
  cr_expect_float_eq(back[3 * 5 + 0], 3.0f, 1e-6, "x of a point after two shifts by 1.5");
  cr_expect_float_eq(back[3 * 5 + 1], -4.0f, 1e-6);
  cr_expect_float_eq(back[3 * 5 + 2], 0.5f, 1e-6);
  kern_graph_free(g);
  kern_array_free(x);
  kern_array_free(p);
}

Test(capture, array_contents_are_read_at_replay) {
  int64_t n = 256;
  kern_array *x = kern_array_new(cpu, KERN_FLOAT32, 1, &n);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("scale"), cpu, KERN_DIM1(n), x, 2.0f), KERN_OK, "%s",
               kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  float h[256], back[256];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < n; i++) h[i] = (float)(i * (round + 1)) - 17.0f;
    cr_assert_eq(kern_array_write(x, h, sizeof h), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    cr_assert_eq(kern_array_read(x, back, sizeof back), KERN_OK);
    for (int i = 0; i < n; i++)
      cr_expect_float_eq(back[i], 2.0f * h[i], 1e-6, "round %d element %d", round, i);
  }
  kern_graph_free(g);
  kern_array_free(x);
}

Test(capture, copies_and_fills_are_recorded_in_order) {
  int64_t n = 100, shape2[2] = {10, 20}, off[2] = {2, 5}, win[2] = {4, 6};
  kern_array *a = th_ints(cpu, n, 0), *b = th_ints(cpu, n, 0);
  kern_array *big = kern_array_new(cpu, KERN_INT32, 2, shape2);
  kern_array *small = kern_array_new(cpu, KERN_INT32, 2, win);
  kern_array *view = kern_array_view(big, 2, off, win);
  cr_assert(big && small && view, "%s", kern_last_error());
  int32_t five = 5, nine = 9;
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(kern_array_fill(a, &five), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), a, 1), KERN_OK);
  cr_assert_eq(kern_array_copy(b, a), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), b, 10), KERN_OK);
  cr_assert_eq(kern_array_fill(small, &nine), KERN_OK);
  cr_assert_eq(kern_array_copy(view, small), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  th_expect_all(a, 0, "a before replay");
  th_expect_all(b, 0, "b before replay");
  th_expect_all(big, 0, "big before replay");
  for (int r = 0; r < 2; r++) {
    int32_t junk = -3;
    cr_assert_eq(kern_array_fill(a, &junk), KERN_OK); /* the recorded fill overwrites it */
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
    th_expect_all(a, 6, "a = fill 5, +1");
    th_expect_all(b, 16, "b = copy of a, +10");
  }
  int32_t h[200];
  cr_assert_eq(kern_array_read(big, h, sizeof h), KERN_OK);
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 20; j++) {
      int want = i >= 2 && i < 6 && j >= 5 && j < 11 ? 9 : 0;
      cr_expect_eq(h[i * 20 + j], want, "big[%d,%d]: a strided copy into a view", i, j);
    }
  kern_graph_free(g);
  kern_array_free(view), kern_array_free(small), kern_array_free(big), kern_array_free(a),
      kern_array_free(b);
}

/* kern_array_new inside a capture is re-zeroed by every replay, as CUDA's
 * allocation + memset nodes are. */
Test(capture, arrays_made_inside_a_capture_are_zeroed_by_each_replay) {
  int64_t n = 32;
  kern_array *out = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  kern_array *tmp = kern_array_new(cpu, KERN_INT32, 1, &n);
  cr_assert_not_null(tmp, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), tmp, 4), KERN_OK);
  cr_assert_eq(kern_array_copy(out, tmp), KERN_OK);
  kern_array_free(tmp); /* inside the capture: the graph keeps its memory */
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    th_expect_all(out, 4, "tmp starts from zero in each replay");
  }
  kern_graph_free(g);
  kern_array_free(out);
}

Test(capture, a_graph_keeps_freed_arrays_alive) {
  size_t base = rt_registry_count();
  int64_t n = 50;
  kern_array *x = th_ints(cpu, n, 0), *out = th_ints(cpu, n, 0);
  int64_t off = 10, len = 20;
  kern_array *v = kern_array_view(x, 1, &off, &len);
  cr_assert_eq(rt_registry_count(), base + 2);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(len), v, 3), KERN_OK);
  cr_assert_eq(kern_array_copy(out, x), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  kern_array_free(v);
  kern_array_free(x);
  cr_expect_eq(rt_registry_count(), base + 2, "x's memory must live while the graph uses it");
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_expect_eq(th_at(out, 9), 0);
  cr_expect_eq(th_at(out, 10), 6, "the view's elements, +3 twice, copied out");
  cr_expect_eq(th_at(out, 29), 6);
  cr_expect_eq(th_at(out, 30), 0);
  kern_graph_free(g);
  cr_expect_eq(rt_registry_count(), base + 1, "freeing the graph frees x's memory");
  kern_array_free(out);
  cr_expect_eq(rt_registry_count(), base);
}

/* ---- refused operations leave the capture usable ---------------------------------------- */

Test(capture, refused_operations_change_nothing) {
  int64_t n = 16;
  kern_array *x = th_ints(cpu, n, 0);
  int32_t h[16] = {0};
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK);
  th_expect_error(kern_device_synchronize(cpu), KERN_ERR_CAPTURE, "kern_device_synchronize");
  th_expect_error(kern_array_read(x, h, sizeof h), KERN_ERR_CAPTURE, "kern_array_read");
  th_expect_error(kern_array_write(x, h, sizeof h), KERN_ERR_CAPTURE, "kern_array_write");
  th_expect_error(kern_capture_begin(cpu), KERN_ERR_CAPTURE, "already open");
  /* A bad launch (wrong dtype) fails validation and records nothing. */
  th_expect_error(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1.0f), KERN_ERR_INVALID_ARGUMENT,
                  "parameter 'v'");
  th_expect_error(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(-1), x, 1), KERN_ERR_INVALID_ARGUMENT,
                  "negative");
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 10), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(0), x, 100), KERN_OK,
               "a dim of 0 records nothing");
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 11, "the two good launches, once");
  cr_expect_eq(kern_device_synchronize(cpu), KERN_OK, "allowed again after the capture");
  kern_graph_free(g);
  kern_array_free(x);
}

Test(capture, an_access_check_failure_leaves_the_capture_usable) {
  kern_device *d2 = second_device();
  int64_t n = 8;
  kern_array *x = th_ints(cpu, n, 0), *y = th_ints(d2, n, 0);
  kern_access_mode old = kern_set_launch_access_mode(KERN_ACCESS_STRICT);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  th_expect_error(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), y, 1), KERN_ERR_ACCESS, "STRICT");
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 2), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  kern_set_launch_access_mode(old);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 2, "the launch after the refused one");
  th_expect_all(y, 0, "the refused launch never ran");
  kern_graph_free(g);
  kern_array_free(x);
  kern_array_free(y);
}

Test(capture, misuse_of_begin_and_end) {
  kern_graph *g = (kern_graph *)1;
  th_expect_error(kern_capture_end(cpu, &g), KERN_ERR_CAPTURE, "no capture is open on cpu");
  cr_expect_null(g, "*out is cleared on failure");
  th_expect_error(kern_capture_abort(cpu), KERN_ERR_CAPTURE, "no capture is open");
  th_expect_error(kern_capture_end_if(cpu), KERN_ERR_CAPTURE, "no capture is open");
  th_expect_error(kern_capture_begin(NULL), KERN_ERR_INVALID_ARGUMENT, "NULL");
  th_expect_error(kern_capture_begin_mode(cpu, (kern_capture_mode)9), KERN_ERR_INVALID_ARGUMENT,
                  "mode");
  th_expect_error(kern_graph_launch(NULL), KERN_ERR_INVALID_ARGUMENT, "NULL");
  kern_graph_free(NULL);
  cr_assert_eq(kern_capture_begin_mode(cpu, KERN_CAPTURE_THREAD_LOCAL), KERN_OK, "%s",
               kern_last_error());
  th_expect_error(kern_capture_begin(cpu), KERN_ERR_CAPTURE, "already open on cpu");
  th_expect_error(kern_capture_end(cpu, NULL), KERN_ERR_INVALID_ARGUMENT, "out");
  cr_expect(kern_capture_is_active(cpu), "failed calls leave the capture open");
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "an empty capture is a valid graph: %s",
               kern_last_error());
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  kern_graph_free(g);
}

Test(capture, begin_on_one_device_end_on_another) {
  kern_device *d2 = second_device();
  int64_t n = 4;
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 5), KERN_OK);
  kern_graph *g = NULL;
  th_expect_error(kern_capture_end(d2, &g), KERN_ERR_CAPTURE, "no capture is open on cpu2");
  cr_expect(kern_capture_is_active(cpu));
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  /* A graph of cpu cannot take a capture of cpu2. */
  cr_assert_eq(kern_capture_begin(d2), KERN_OK);
  bool up = true;
  th_expect_error(kern_capture_end_update(d2, g, &up), KERN_ERR_CAPTURE,
                  "captured on cpu, not cpu2");
  cr_expect(!up);
  cr_expect(kern_capture_is_active(d2), "the capture on cpu2 is still open");
  cr_assert_eq(kern_capture_abort(d2), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 5, "the cpu graph is intact");
  kern_graph_free(g);
  kern_array_free(x);
}

typedef struct end_args {
  kern_device *d;
  kern_status st;
  char msg[512];
} end_args;

static void *end_elsewhere(void *p) {
  end_args *a = p;
  kern_graph *g = NULL;
  a->st = kern_capture_end(a->d, &g);
  snprintf(a->msg, sizeof a->msg, "%s", kern_last_error());
  kern_graph_free(g);
  return NULL;
}

Test(capture, end_on_another_thread_is_refused) {
  int64_t n = 4;
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 3), KERN_OK);
  end_args a = {.d = cpu};
  pthread_t t;
  pthread_create(&t, NULL, end_elsewhere, &a);
  pthread_join(t, NULL);
  cr_expect_eq(a.st, KERN_ERR_CAPTURE, "%s", a.msg);
  cr_expect(strstr(a.msg, "another thread"), "%s", a.msg);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "the owner still ends it: %s",
               kern_last_error());
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 3, "the capture survived the foreign end");
  kern_graph_free(g);
  kern_array_free(x);
}

typedef struct launch_args {
  kern_kernel *k;
  kern_array *x;
  kern_status st;
} launch_args;

static void *launch_elsewhere(void *p) {
  launch_args *a = p;
  a->st = KERN_LAUNCH(a->k, cpu, KERN_DIM1(kern_array_size(a->x)), a->x, 20);
  return NULL;
}

/* Runs fn(arg) on a thread of its own and waits for it: "another thread". */
static void on_other_thread(void *(*fn)(void *), void *arg) {
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, fn, arg), 0);
  pthread_join(t, NULL);
}

/* A CPU capture records only its owner: the CPU's threads are its streams.
 * Another thread's launch runs at once in every mode, and is not replayed. */
Test(capture, other_threads_launches_on_the_cpu_run_at_once) {
  const kern_capture_mode modes[] = {KERN_CAPTURE_GLOBAL, KERN_CAPTURE_THREAD_LOCAL,
                                     KERN_CAPTURE_RELAXED};
  for (int m = 0; m < 3; m++) {
    int64_t n = 10;
    kern_array *x = th_ints(cpu, n, 0);
    cr_assert_eq(kern_capture_begin_mode(cpu, modes[m]), KERN_OK, "%s", kern_last_error());
    launch_args a = {K("add"), x, KERN_ERR_IO};
    on_other_thread(launch_elsewhere, &a);
    cr_assert_eq(a.st, KERN_OK, "mode %d", m);
    cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK, "recorded");
    kern_graph *g;
    cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
    th_expect_all(x, 20, "the other thread's launch ran at once");
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    th_expect_all(x, 22, "the graph holds only the owner's launch");
    kern_graph_free(g);
    kern_array_free(x);
  }
}

/* What thread B does while thread A captures (thread-local mode): it makes
 * an array, launches on it and reads it, all at once. */
typedef struct b_work {
  kern_kernel *add;
  kern_array *arr;
  kern_status st_new, st_launch, st_read, st_sync;
  int32_t seen[4];
  char msg[512];
} b_work;

static void *b_allocates_and_launches(void *p) {
  b_work *b = p;
  int64_t n = 4;
  b->arr = kern_array_new(cpu, KERN_INT32, 1, &n);
  b->st_new = b->arr ? KERN_OK : kern_last_status();
  snprintf(b->msg, sizeof b->msg, "%s", kern_last_error());
  if (!b->arr) return NULL;
  b->st_launch = KERN_LAUNCH(b->add, cpu, KERN_DIM1(n), b->arr, 5);
  b->st_read = kern_array_read(b->arr, b->seen, sizeof b->seen);
  b->st_sync = kern_device_synchronize(cpu);
  return NULL;
}

/* Another thread's array made during a thread-local capture is not part of
 * the graph: a replay neither zeroes it nor runs its launches again. */
Test(capture, another_threads_array_keeps_its_contents_after_a_replay) {
  int64_t n = 8;
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin_mode(cpu, KERN_CAPTURE_THREAD_LOCAL), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK);
  b_work b = {.add = K("add"), .st_new = KERN_ERR_IO};
  on_other_thread(b_allocates_and_launches, &b);
  cr_assert_eq(b.st_new, KERN_OK, "%s", b.msg);
  cr_expect_eq(b.st_launch, KERN_OK);
  cr_expect_eq(b.st_read, KERN_OK, "a thread-local capture does not restrict other threads");
  cr_expect_eq(b.st_sync, KERN_OK);
  for (int i = 0; i < 4; i++) cr_expect_eq(b.seen[i], 5, "B's launch ran at once");
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  const int32_t mine[4] = {11, 22, 33, 44};
  cr_assert_eq(kern_array_write(b.arr, mine, sizeof mine), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  int32_t back[4];
  cr_assert_eq(kern_array_read(b.arr, back, sizeof back), KERN_OK);
  for (int i = 0; i < 4; i++) cr_expect_eq(back[i], mine[i], "B's array [%d] after A's replay", i);
  th_expect_all(x, 1, "A's own launch was recorded and replayed once");
  kern_graph_free(g);
  kern_array_free(b.arr);
  kern_array_free(x);
}

typedef struct b_calls {
  kern_array *x; /* an array of the capturing device, made before the capture */
  kern_status st_new, st_read, st_write, st_sync, st_fill;
  char msg[512];
} b_calls;

static void *b_unsafe_calls(void *p) {
  b_calls *b = p;
  int64_t n = 4;
  int32_t h[4] = {7, 7, 7, 7}, nine = 9;
  kern_array *a = kern_array_new(cpu, KERN_INT32, 1, &n);
  b->st_new = a ? KERN_OK : kern_last_status();
  snprintf(b->msg, sizeof b->msg, "%s", kern_last_error());
  kern_array_free(a);
  b->st_read = kern_array_read(b->x, h, sizeof h);
  b->st_write = kern_array_write(b->x, h, sizeof h);
  b->st_sync = kern_device_synchronize(cpu);
  b->st_fill = kern_array_fill(b->x, &nine);
  return NULL;
}

/* KERN_CAPTURE_GLOBAL (the default) refuses other threads' calls that are
 * unsafe during capture, with KERN_ERR_CAPTURE, and never records them; the
 * capture stays usable. Their stream work (a fill) runs at once. */
Test(capture, global_mode_refuses_other_threads_unsafe_calls) {
  int64_t n = 4;
  kern_array *x = th_ints(cpu, n, 3);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK);
  b_calls b = {.x = x};
  on_other_thread(b_unsafe_calls, &b);
  cr_expect_eq(b.st_new, KERN_ERR_CAPTURE, "%s", b.msg);
  cr_expect(strstr(b.msg, "KERN_CAPTURE_GLOBAL") && strstr(b.msg, "another thread"), "%s", b.msg);
  cr_expect_eq(b.st_read, KERN_ERR_CAPTURE);
  cr_expect_eq(b.st_write, KERN_ERR_CAPTURE);
  cr_expect_eq(b.st_sync, KERN_ERR_CAPTURE);
  cr_expect_eq(b.st_fill, KERN_OK, "a fill is stream work: it runs at once");
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  th_expect_all(x, 9, "the fill ran, the refused write did not");
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 10, "only the owner's launch is in the graph");
  kern_graph_free(g);
  /* The same calls under a thread-local capture all succeed. */
  cr_assert_eq(kern_capture_begin_mode(cpu, KERN_CAPTURE_THREAD_LOCAL), KERN_OK);
  b = (b_calls){.x = x};
  on_other_thread(b_unsafe_calls, &b);
  cr_expect_eq(b.st_new, KERN_OK, "%s", b.msg);
  cr_expect_eq(b.st_read, KERN_OK);
  cr_expect_eq(b.st_write, KERN_OK);
  cr_expect_eq(b.st_sync, KERN_OK);
  th_expect_error(kern_array_read(x, (int32_t[4]){0}, 16), KERN_ERR_CAPTURE, "kern_array_read");
  cr_assert_eq(kern_capture_abort(cpu), KERN_OK);
  th_expect_all(x, 9, "B's write and fill ran at once");
  kern_array_free(x);
}

/* Launcher threads count every launch that returned KERN_OK while a
 * capturing thread begins, records, ends (or aborts) and replays graphs in
 * every mode: each OK launch must have run exactly once. */
typedef struct stress_launcher {
  kern_kernel *count;
  kern_array *c;
  _Atomic bool *stop;
  long ok, refused, other;
  long bad_contents;
} stress_launcher;

/* An array of the launcher's own: made, written, read back (or refused in global mode). */
static void stress_own_array(stress_launcher *s) {
  int64_t four = 4;
  const int32_t want[4] = {11, 22, 33, 44};
  kern_array *a = kern_array_new(cpu, KERN_INT32, 1, &four);
  if (!a) {
    if (kern_last_status() == KERN_ERR_CAPTURE)
      s->refused++;
    else
      s->other++;
    return;
  }
  int32_t back[4];
  kern_status w = kern_array_write(a, want, sizeof want),
              r = w ? w : kern_array_read(a, back, sizeof back);
  if (w == KERN_ERR_CAPTURE || r == KERN_ERR_CAPTURE)
    s->refused++;
  else if (w || r)
    s->other++;
  else
    s->bad_contents += memcmp(back, want, sizeof want) != 0;
  kern_array_free(a);
}

static void *stress_launch(void *p) {
  stress_launcher *s = p;
  int64_t n = 37;
  for (long i = 0; !atomic_load(s->stop); i++) {
    kern_status st =
        kern_launch(s->count, cpu, KERN_DIM1(n), 1, (kern_arg[]){kern_arg_array(s->c)});
    if (st == KERN_OK)
      s->ok++;
    else
      s->other++;
    if (i % 16 == 0) stress_own_array(s);
  }
  return NULL;
}

static long elapsed_ms(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

Test(capture, other_threads_launches_always_run_under_concurrent_captures) {
  enum { L = 3 };
  int64_t one = 1, n = 37, m = 64;
  _Atomic bool stop = false;
  stress_launcher s[L];
  pthread_t t[L];
  kern_kernel *count = K("count");
  kern_array *mine = th_ints(cpu, one, 0), *scratch = th_ints(cpu, m, 0);
  /* Compiled before the threads start. */
  cr_assert_eq(kern_launch(count, cpu, KERN_DIM1(1), 1, (kern_arg[]){kern_arg_array(mine)}),
               KERN_OK);
  for (int i = 0; i < L; i++) {
    s[i] = (stress_launcher){.count = count, .c = th_ints(cpu, one, 0), .stop = &stop};
    cr_assert_eq(pthread_create(&t[i], NULL, stress_launch, &s[i]), 0);
  }
  const kern_capture_mode modes[] = {KERN_CAPTURE_GLOBAL, KERN_CAPTURE_THREAD_LOCAL,
                                     KERN_CAPTURE_RELAXED};
  long replays = 1, rounds = 0, failures = 0; /* 1: the launch above */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    failures += kern_capture_begin_mode(cpu, modes[rounds % 3]) != KERN_OK;
    failures +=
        kern_launch(count, cpu, KERN_DIM1(1), 1, (kern_arg[]){kern_arg_array(mine)}) != KERN_OK;
    failures += KERN_LAUNCH(K("add"), cpu, KERN_DIM1(m), scratch, 1) != KERN_OK;
    if (rounds % 4 == 3) {
      failures += kern_capture_abort(cpu) != KERN_OK;
    } else {
      kern_graph *g = NULL;
      failures += kern_capture_end(cpu, &g) != KERN_OK;
      for (long r = 0; r < 1 + rounds % 2; r++, replays++)
        failures += kern_graph_launch(g) != KERN_OK;
      kern_graph_free(g);
    }
    rounds++;
  } while (elapsed_ms(&t0) < 1000);
  atomic_store(&stop, true);
  for (int i = 0; i < L; i++) pthread_join(t[i], NULL);
  cr_expect_eq(failures, 0, "the capturing thread's calls");
  cr_expect_eq(th_at(mine, 0), replays, "the capturing thread's launch ran once per replay");
  for (int i = 0; i < L; i++) {
    cr_expect_gt(s[i].ok, 0);
    cr_expect_eq(s[i].other, 0, "launcher %d: failures other than KERN_ERR_CAPTURE", i);
    cr_expect_eq(s[i].bad_contents, 0, "launcher %d: its own array changed", i);
    cr_expect_eq((long)th_at(s[i].c, 0), s[i].ok * n,
                 "launcher %d: %ld launches returned KERN_OK, each of %lld threads", i, s[i].ok,
                 (long long)n);
    kern_array_free(s[i].c);
  }
  cr_log_info("%ld capture rounds, %ld replays", rounds, replays);
  kern_array_free(mine);
  kern_array_free(scratch);
}

Test(capture, other_devices_run_at_once_but_cannot_touch_the_capturing_one) {
  kern_device *d2 = second_device();
  int64_t n = 12;
  kern_array *x = th_ints(cpu, n, 0), *y = th_ints(d2, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), d2, KERN_DIM1(n), y, 4), KERN_OK, "%s", kern_last_error());
  th_expect_error(KERN_LAUNCH(K("add"), d2, KERN_DIM1(n), x, 4), KERN_ERR_CAPTURE,
                  "parameter 'x' (#1) is an array of cpu");
  th_expect_error(kern_array_copy(y, x), KERN_ERR_CAPTURE, "kern_array_copy");
  int32_t back[12];
  cr_assert_eq(kern_array_read(y, back, sizeof back), KERN_OK, "cpu2 is not capturing: %s",
               kern_last_error());
  cr_expect_eq(back[3], 4, "the launch on cpu2 ran at once");
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(y, 4, "cpu2's launch is not part of the graph");
  th_expect_all(x, 0, "nothing was recorded for x");
  kern_graph_free(g);
  kern_array_free(x);
  kern_array_free(y);
}

Test(capture, replay_during_a_capture_and_abort) {
  int64_t n = 6;
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 100), KERN_OK);
  th_expect_error(kern_graph_launch(g), KERN_ERR_CAPTURE, "capturing");
  cr_assert_eq(kern_capture_abort(cpu), KERN_OK, "%s", kern_last_error());
  cr_expect(!kern_capture_is_active(cpu));
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 1, "the aborted capture ran nothing");
  kern_graph_free(g);
  kern_array_free(x);
}

/* ---- update ------------------------------------------------------------------------------ */

Test(capture, end_update_replaces_the_contents) {
  int64_t n = 20;
  kern_array *x = th_ints(cpu, n, 0), *y = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  int total = 0;
  for (int step = 2; step <= 4; step++) { /* same shape: new values and arrays */
    cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
    cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), step % 2 ? x : y, step), KERN_OK);
    bool up = false;
    cr_assert_eq(kern_capture_end_update(cpu, g, &up), KERN_OK, "%s", kern_last_error());
    cr_expect(up, "same shape: updated in place");
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    total += step % 2 ? 0 : step;
  }
  th_expect_all(x, 3, "x gets step 3 only");
  th_expect_all(y, total, "y gets steps 2 and 4");
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK); /* a new shape: rebuilt */
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 10), KERN_OK);
  kern_array *f = kern_array_new(cpu, KERN_FLOAT32, 1, &n);
  cr_assert_eq(KERN_LAUNCH(K("scale"), cpu, KERN_DIM1(1), f, 2.0f), KERN_OK);
  bool up = true;
  cr_assert_eq(kern_capture_end_update(cpu, g, &up), KERN_OK, "%s", kern_last_error());
  cr_expect(!up, "a different shape is rebuilt");
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 13, "the rebuilt graph runs the new launches");
  cr_assert_eq(kern_capture_end_update(cpu, g, NULL), KERN_ERR_CAPTURE, "no capture open");
  kern_graph_free(g);
  kern_array_free(f);
  kern_array_free(x);
  kern_array_free(y);
}

/* ---- conditional blocks ----------------------------------------------------------------------- */

Test(capture, while_loops_until_the_flag_is_zero) {
  int64_t one = 1;
  kern_array *flag = th_ints(cpu, one, 0), *iters = th_ints(cpu, one, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(kern_capture_while(cpu, flag), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("countdown"), cpu, KERN_DIM1(1), flag, iters), KERN_OK);
  cr_assert_eq(kern_capture_end_while(cpu), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  int32_t starts[] = {5, 0, 1, 17}, total = 0;
  for (int r = 0; r < 4; r++) {
    cr_assert_eq(kern_array_write(flag, &starts[r], 4), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    total += starts[r];
    cr_expect_eq(th_at(iters, 0), total, "replay %d: the body ran once per count", r);
    cr_expect_eq(th_at(flag, 0), 0);
  }
  kern_graph_free(g);
  kern_array_free(flag);
  kern_array_free(iters);
}

Test(capture, if_blocks_and_nesting) {
  int64_t one = 1, n = 8;
  kern_array *cond = th_ints(cpu, one, 0), *flag = th_ints(cpu, one, 0),
             *iters = th_ints(cpu, one, 0);
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 1), KERN_OK);
  cr_assert_eq(kern_capture_while(cpu, flag), KERN_OK);
  cr_assert_eq(kern_capture_if(cpu, cond), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), x, 100), KERN_OK);
  cr_assert_eq(kern_capture_end_if(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("countdown"), cpu, KERN_DIM1(1), flag, iters), KERN_OK);
  cr_assert_eq(kern_capture_end_while(cpu), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  int32_t three = 3, on = 1;
  cr_assert_eq(kern_array_write(flag, &three, 4), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 1, "cond 0: the if body never ran");
  cr_expect_eq(th_at(iters, 0), 3);
  cr_assert_eq(kern_array_write(flag, &three, 4), KERN_OK);
  cr_assert_eq(kern_array_write(cond, &on, 4), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 302, "cond 1: the if body ran in each of 3 iterations");
  kern_graph_free(g);
  kern_array_free(cond), kern_array_free(flag), kern_array_free(iters), kern_array_free(x);
}

Test(capture, conditional_misuse) {
  kern_device *d2 = second_device();
  int64_t one = 1, two = 2;
  kern_array *flag = th_ints(cpu, one, 0), *wide = th_ints(cpu, two, 0),
             *other = th_ints(d2, one, 0);
  kern_array *f32 = kern_array_new(cpu, KERN_FLOAT32, 1, &one);
  th_expect_error(kern_capture_while(cpu, flag), KERN_ERR_CAPTURE, "no capture is open");
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  th_expect_error(kern_capture_while(cpu, wide), KERN_ERR_INVALID_ARGUMENT, "one element");
  th_expect_error(kern_capture_if(cpu, f32), KERN_ERR_INVALID_ARGUMENT, "int32");
  th_expect_error(kern_capture_if(cpu, other), KERN_ERR_INVALID_ARGUMENT, "capturing device cpu");
  th_expect_error(kern_capture_if(cpu, NULL), KERN_ERR_INVALID_ARGUMENT, "NULL");
  th_expect_error(kern_capture_end_while(cpu), KERN_ERR_CAPTURE, "no conditional block is open");
  cr_assert_eq(kern_capture_while(cpu, flag), KERN_OK);
  th_expect_error(kern_capture_end_if(cpu), KERN_ERR_CAPTURE, "kern_capture_while block");
  kern_graph *g = NULL;
  th_expect_error(kern_capture_end(cpu, &g), KERN_ERR_CAPTURE, "still open");
  cr_expect(kern_capture_is_active(cpu));
  cr_expect_null(kern_array_new(cpu, KERN_INT32, 1, &one), "no allocation inside a block");
  cr_expect_eq(kern_last_status(), KERN_ERR_CAPTURE, "%s", kern_last_error());
  cr_expect(strstr(kern_last_error(), "conditional block"), "%s", kern_last_error());
  for (int i = 1; i < 8; i++) cr_assert_eq(kern_capture_if(cpu, flag), KERN_OK, "depth %d", i + 1);
  th_expect_error(kern_capture_if(cpu, flag), KERN_ERR_CAPTURE, "at most 8");
  for (int i = 1; i < 8; i++) cr_assert_eq(kern_capture_end_if(cpu), KERN_OK);
  cr_assert_eq(kern_capture_end_while(cpu), KERN_OK);
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "flag 0: nothing runs");
  kern_graph_free(g);
  kern_array_free(flag), kern_array_free(wide), kern_array_free(other), kern_array_free(f32);
}

/* ---- debug mode, concurrency ---------------------------------------------------------------------- */

Test(capture, a_bounds_error_stops_the_replay) {
  kern_set_debug(true);
  kern_module *m = kern_module_from_source("capture_debug.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  int64_t n = 4;
  kern_array *x = th_ints(cpu, n, 0), *y = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "poke"), cpu, KERN_DIM1(1), x, 2), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "poke"), cpu, KERN_DIM1(1), x, 9), KERN_OK,
               "recorded, not run: no error yet");
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "add"), cpu, KERN_DIM1(n), y, 1), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  th_expect_error(kern_graph_launch(g), KERN_ERR_BOUNDS, "kernel 'poke'");
  cr_expect(strstr(kern_last_error(), "[9]"), "%s", kern_last_error());
  cr_expect_eq(th_at(x, 2), 1, "the launch before the failure ran");
  th_expect_all(y, 0, "the launch after the failure did not");
  kern_graph_free(g);
  kern_array_free(x), kern_array_free(y);
  kern_module_free(m);
  kern_set_debug(false);
}

typedef struct replay_args {
  kern_graph *g;
  int reps;
  kern_status st;
} replay_args;

static void *replay_many(void *p) {
  replay_args *a = p;
  for (int i = 0; i < a->reps && !a->st; i++) a->st = kern_graph_launch(a->g);
  return NULL;
}

Test(capture, concurrent_replays_of_one_graph) {
  int64_t one = 1, n = 1000;
  kern_array *c = th_ints(cpu, one, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  cr_assert_eq(kern_launch(K("count"), cpu, KERN_DIM1(n), 1, (kern_arg[]){kern_arg_array(c)}),
               KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  enum { T = 4, R = 25 };
  pthread_t t[T];
  replay_args a[T];
  for (int i = 0; i < T; i++) {
    a[i] = (replay_args){g, R, KERN_OK};
    pthread_create(&t[i], NULL, replay_many, &a[i]);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(t[i], NULL);
    cr_expect_eq(a[i].st, KERN_OK);
  }
  cr_expect_eq(th_at(c, 0), T * R * n, "every replay's every thread counted once");
  kern_graph_free(g);
  kern_array_free(c);
}
