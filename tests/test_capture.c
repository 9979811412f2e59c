/* test_capture.c: graph capture and replay on the CPU: what is recorded and
 * when it runs, argument values frozen at record time, arrays read at replay,
 * copies/fills/zeroing in order, conditional blocks, in-place update, every
 * misuse and refused operation (the capture must stay usable afterwards),
 * memory kept alive by graphs, debug errors in replays, concurrent replays.
 * Expected values are computed here from the operations, never by kern.
 * A second software device ("cpu2", the CPU backend's table under another
 * index) stands in for "another device" so cross-device misuse runs in CI.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Capture is per device: another thread's launch on the capturing device is recorded too. */
Test(capture, other_threads_launches_on_the_device_are_recorded) {
  int64_t n = 10;
  kern_array *x = th_ints(cpu, n, 0);
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  launch_args a = {K("add"), x, KERN_ERR_IO};
  pthread_t t;
  pthread_create(&t, NULL, launch_elsewhere, &a);
  pthread_join(t, NULL);
  cr_assert_eq(a.st, KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(cpu, &g), KERN_OK);
  th_expect_all(x, 0, "recorded, not run");
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 20, "run by the replay");
  kern_graph_free(g);
  kern_array_free(x);
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
