/* test_gpu_capture.c: graph capture on cuda:0: replays, arrays changed between
 * replays, captured copies and fills (every memset shape), memory-pool
 * allocations and frees inside a capture, every refused operation (each must
 * leave the capture and the stream usable), misuse, freed arrays kept alive
 * by graphs, in-place update, conditional if/while nodes, debug bounds
 * errors in replays. Expected values are computed here. Without a GPU every
 * test skips with the reason.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "kern.h"
#include "core.h"

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
                         "kernel void poke(int[] x, int at) {\n"
                         "    x[at] = 1;\n"
                         "}\n";

static kern_device *gpu, *cpu;
static kern_module *mod;

static kern_device *gpu_or_skip(void) {
  cr_assert_eq(kern_init(), KERN_OK);
  gpu = kern_device_get("cuda:0");
  if (!gpu) cr_skip_test("no CUDA device (%s): GPU capture suite skipped", kern_last_error());
  cpu = kern_device_get("cpu");
  mod = kern_module_from_source("gpu_capture.kern", src);
  cr_assert_not_null(mod, "%s", kern_last_error());
  return gpu;
}

static kern_kernel *K(const char *name) {
  kern_kernel *k = kern_module_kernel(mod, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static bool has_pools(void) {
  kern_device_info info;
  cr_assert_eq(kern_device_info_get(gpu, &info), KERN_OK);
  return info.is_mempool_supported;
}

/* The device still runs ordinary work correctly. */
static void expect_device_usable(void) {
  kern_array *z = th_ints(gpu, 256, 0);
  cr_expect_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(256), z, 9), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(kern_device_synchronize(gpu), KERN_OK, "%s", kern_last_error());
  th_expect_all(z, 9, "an ordinary launch after the capture");
  kern_array_free(z);
}

/* ---- replay ----------------------------------------------------------------------------- */

Test(gpu_capture, replays_run_the_recorded_launches) {
  gpu_or_skip();
  int64_t n = 1 << 16;
  kern_array *x = th_ints(gpu, n, 0);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK, "%s", kern_last_error());
  for (int i = 0; i < 3; i++)
    cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, i + 1), KERN_OK, "%s",
                 kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  th_expect_all(x, 0, "nothing ran during the capture");
  for (int r = 1; r <= 4; r++) cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  th_expect_all(x, 4 * 6, "4 replays of +1 +2 +3");
  kern_graph_free(g);
  kern_array_free(x);
  expect_device_usable();
}

Test(gpu_capture, thousand_tiny_launches_in_one_graph) {
  gpu_or_skip();
  int64_t one = 1;
  kern_array *c = th_ints(gpu, one, 0);
  cr_assert_eq(kern_capture_begin_mode(gpu, KERN_CAPTURE_THREAD_LOCAL), KERN_OK, "%s",
               kern_last_error());
  for (int i = 0; i < 1000; i++)
    cr_assert_eq(kern_launch(K("count"), gpu, KERN_DIM1(3), 1, (kern_arg[]){kern_arg_array(c)}),
                 KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_expect_eq(th_at(c, 0), 2 * 1000 * 3);
  kern_graph_free(g);
  kern_array_free(c);
}

Test(gpu_capture, arrays_changed_between_replays_are_seen) {
  gpu_or_skip();
  int64_t n = 4096;
  kern_array *x = kern_array_new(gpu, KERN_FLOAT32, 1, &n);
  float s = 3.0f;
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("scale"), gpu, KERN_DIM1(n), x, s), KERN_OK);
  s = 1000.0f; /* argument values were taken at the call */
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK);
  float *h = malloc((size_t)n * sizeof *h), *back = malloc((size_t)n * sizeof *back);
  for (int round = 0; round < 3; round++) {
    for (int64_t i = 0; i < n; i++) h[i] = (float)(i % 97) * (float)(round + 1) - 5.0f;
    cr_assert_eq(kern_array_write(x, h, (size_t)n * sizeof *h), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
    cr_assert_eq(kern_array_read(x, back, (size_t)n * sizeof *back), KERN_OK);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += back[i] != 3.0f * h[i];
    cr_expect_eq(bad, 0, "round %d: x = 3 * the values written before the replay", round);
  }
  free(h), free(back);
  kern_graph_free(g);
  kern_array_free(x);
}

/* ---- copies and fills ---------------------------------------------------------------------- */

Test(gpu_capture, copies_and_fills_become_nodes) {
  gpu_or_skip();
  int64_t n = 1000;
  kern_array *a = th_ints(gpu, n, 0), *b = th_ints(gpu, n, 0);
  kern_array *d = kern_array_new(gpu, KERN_FLOAT64, 1, &n);
  kern_array *v = kern_array_new(gpu, KERN_VEC3, 1, &n);
  kern_array *s = kern_array_new(gpu, KERN_INT16, 1, &n);
  kern_array *u = kern_array_new(gpu, KERN_UINT8, 1, &n);
  cr_assert(d && v && s && u, "%s", kern_last_error());
  int32_t five = 5;
  double dv = 1.5;                    /* 8 bytes, halves differ: two 2D memsets */
  float vv[3] = {1.0f, -2.5f, 3.25f}; /* 12 bytes: three 2D memsets */
  int16_t sv = 0x1234;                /* 2 bytes, bytes differ: one 16-bit memset */
  uint8_t uv = 0xab;
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(kern_array_fill(a, &five), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), a, 1), KERN_OK);
  cr_assert_eq(kern_array_copy(b, a), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), b, 10), KERN_OK);
  cr_assert_eq(kern_array_fill(d, &dv), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_fill(v, vv), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_fill(s, &sv), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_fill(u, &uv), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  th_expect_all(a, 0, "a before replay");
  int32_t junk = -7;
  cr_assert_eq(kern_array_fill(a, &junk), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  th_expect_all(a, 6, "a = fill 5, + 1");
  th_expect_all(b, 16, "b = copy of a, + 10");
  double *hd = malloc((size_t)n * sizeof *hd);
  float *hv = malloc((size_t)n * 3 * sizeof *hv);
  int16_t *hs = malloc((size_t)n * sizeof *hs);
  uint8_t *hu = malloc((size_t)n);
  cr_assert_eq(kern_array_read(d, hd, (size_t)n * sizeof *hd), KERN_OK);
  cr_assert_eq(kern_array_read(v, hv, (size_t)n * 3 * sizeof *hv), KERN_OK);
  cr_assert_eq(kern_array_read(s, hs, (size_t)n * sizeof *hs), KERN_OK);
  cr_assert_eq(kern_array_read(u, hu, (size_t)n), KERN_OK);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++)
    bad += hd[i] != 1.5 || hv[3 * i] != 1.0f || hv[3 * i + 1] != -2.5f || hv[3 * i + 2] != 3.25f ||
           hs[i] != 0x1234 || hu[i] != 0xab;
  cr_expect_eq(bad, 0, "float64, vec3, int16 and uint8 fills");
  free(hd), free(hv), free(hs), free(hu);
  kern_graph_free(g);
  kern_array_free(a), kern_array_free(b), kern_array_free(d), kern_array_free(v),
      kern_array_free(s), kern_array_free(u);
}

/* ---- memory-pool allocations inside a capture ------------------------------------------------- */

Test(gpu_capture, pool_allocations_and_frees_become_nodes) {
  gpu_or_skip();
  if (!has_pools()) cr_skip_test("cuda:0 has no memory pools");
  int64_t n = 10000;
  kern_array *out = th_ints(gpu, n, 0);
  kern_allocator old = kern_device_set_allocator(gpu, KERN_ALLOC_CUDA_MEMPOOL);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  kern_array *tmp = kern_array_new(gpu, KERN_INT32, 1, &n);
  cr_assert_not_null(tmp, "a pool allocation inside a capture: %s", kern_last_error());
  cr_expect_eq(kern_array_memory_kind(tmp), KERN_MEM_CUDA_MEMPOOL);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), tmp, 4), KERN_OK);
  cr_assert_eq(kern_array_copy(out, tmp), KERN_OK, "%s", kern_last_error());
  kern_array_free(tmp);                                      /* a free node */
  kern_array *kept = kern_array_new(gpu, KERN_INT32, 1, &n); /* outlives the capture */
  cr_assert_not_null(kept, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), kept, 2), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  kern_device_set_allocator(gpu, old);
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "replay %d: %s", r, kern_last_error());
    th_expect_all(out, 4, "tmp is allocated and zeroed by each replay");
    th_expect_all(kept, 2, "kept is allocated and zeroed by each replay");
  }
  kern_array_free(kept);
  kern_graph_free(g);
  kern_array_free(out);
  expect_device_usable();
}

/* ---- refused operations ----------------------------------------------------------------------- */

Test(gpu_capture, refused_operations_leave_the_capture_usable) {
  gpu_or_skip();
  int64_t n = 512;
  kern_array *x = th_ints(gpu, n, 0), *h = th_ints(cpu, n, 0);
  int32_t buf[512];
  kern_stream *st = kern_stream_new(gpu);
  cr_assert_not_null(st, "%s", kern_last_error());
  kern_device_info info;
  kern_device_info_get(gpu, &info);
  kern_array *managed = NULL;
  if (info.is_managed_memory_supported) {
    kern_device_set_allocator(gpu, KERN_ALLOC_CUDA_MANAGED);
    managed = th_ints(gpu, n, 0);
    kern_device_set_allocator(gpu, KERN_ALLOC_DEFAULT);
  }
  kern_array *unused = th_ints(gpu, n, 0);
  size_t before = rt_registry_count();
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 1), KERN_OK);
  kern_array_free(unused); /* cuMemFree cannot happen now: it waits for the end */
  cr_expect_eq(rt_registry_count(), before, "the free waits for the capture to end");
  th_expect_error(kern_device_synchronize(gpu), KERN_ERR_CAPTURE, "kern_device_synchronize");
  cr_expect_null(kern_array_new(gpu, KERN_INT32, 1, &n), "cuMemAlloc during capture");
  cr_expect_eq(kern_last_status(), KERN_ERR_CAPTURE);
  cr_expect(strstr(kern_last_error(), "KERN_ALLOC_CUDA_MEMPOOL"), "%s", kern_last_error());
  if (info.is_managed_memory_supported) {
    kern_device_set_allocator(gpu, KERN_ALLOC_CUDA_MANAGED);
    cr_expect_null(kern_array_new(gpu, KERN_INT32, 1, &n), "managed allocation during capture");
    cr_expect_eq(kern_last_status(), KERN_ERR_CAPTURE, "%s", kern_last_error());
    kern_device_set_allocator(gpu, KERN_ALLOC_DEFAULT);
    th_expect_error(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), managed, 1), KERN_ERR_CAPTURE,
                    "capturing a graph");
  }
  kern_device_set_allocator(cpu, KERN_ALLOC_PINNED);
  cr_expect_null(kern_array_new(cpu, KERN_INT32, 1, &n), "pinned allocation during a CUDA capture");
  cr_expect_eq(kern_last_status(), KERN_ERR_CAPTURE, "%s", kern_last_error());
  kern_device_set_allocator(cpu, KERN_ALLOC_DEFAULT);
  th_expect_error(kern_array_read(x, buf, sizeof buf), KERN_ERR_CAPTURE, "kern_array_read");
  th_expect_error(kern_array_write(x, buf, sizeof buf), KERN_ERR_CAPTURE, "kern_array_write");
  th_expect_error(kern_array_copy(x, h), KERN_ERR_CAPTURE, "host and device");
  th_expect_error(kern_array_copy(h, x), KERN_ERR_CAPTURE, "kern_array_copy");
  th_expect_error(kern_device_set_stream(gpu, st), KERN_ERR_CAPTURE, "kern_device_set_stream");
  th_expect_error(kern_capture_begin(gpu), KERN_ERR_CAPTURE, "already open");
  cr_assert_eq(KERN_LAUNCH(K("add"), cpu, KERN_DIM1(n), h, 5), KERN_OK, "the CPU is not capturing");
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 10), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "after every refusal: %s", kern_last_error());
  cr_expect_eq(rt_registry_count(), before - 1, "the delayed free happened at the end");
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_assert_eq(kern_device_synchronize(gpu), KERN_OK, "%s", kern_last_error());
  th_expect_all(x, 11, "the two launches of the capture");
  th_expect_all(h, 5, "the CPU launch ran at once");
  kern_graph_free(g);
  kern_array_free(x), kern_array_free(h), kern_array_free(managed);
  kern_stream_free(st);
  expect_device_usable();
}

Test(gpu_capture, an_access_check_failure_leaves_the_stream_usable) {
  gpu_or_skip();
  int64_t n = 100;
  kern_array *x = th_ints(gpu, n, 0), *h = th_ints(cpu, n, 0);
  kern_access_mode old = kern_set_launch_access_mode(KERN_ACCESS_STRICT);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  th_expect_error(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), h, 1), KERN_ERR_ACCESS, "STRICT");
  th_expect_error(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 1.0), KERN_ERR_INVALID_ARGUMENT,
                  "parameter 'v'");
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 2), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  kern_set_launch_access_mode(old);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  th_expect_all(x, 2, "only the valid launch was captured");
  kern_graph_free(g);
  kern_array_free(x), kern_array_free(h);
  expect_device_usable();
}

/* ---- misuse ---------------------------------------------------------------------------------- */

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

Test(gpu_capture, misuse_is_refused_and_abort_cleans_up) {
  gpu_or_skip();
  int64_t n = 64;
  kern_array *x = th_ints(gpu, n, 0);
  kern_graph *g = NULL, *g2 = NULL;
  th_expect_error(kern_capture_end(gpu, &g), KERN_ERR_CAPTURE, "no capture is open on cuda:0");
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 1), KERN_OK);
  th_expect_error(kern_capture_end(cpu, &g), KERN_ERR_CAPTURE, "no capture is open on cpu");
  end_args a = {.d = gpu};
  pthread_t t;
  pthread_create(&t, NULL, end_elsewhere, &a);
  pthread_join(t, NULL);
  cr_expect_eq(a.st, KERN_ERR_CAPTURE, "%s", a.msg);
  cr_expect(strstr(a.msg, "another thread"), "%s", a.msg);
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 100), KERN_OK);
  th_expect_error(kern_graph_launch(g), KERN_ERR_CAPTURE, "capturing");
  cr_assert_eq(kern_capture_abort(gpu), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_capture_begin(cpu), KERN_OK);
  th_expect_error(kern_capture_end_update(cpu, g, NULL), KERN_ERR_CAPTURE,
                  "captured on cuda:0, not cpu");
  cr_assert_eq(kern_capture_end(cpu, &g2), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  th_expect_all(x, 1, "the aborted capture ran nothing; the graph ran once");
  kern_graph_free(g), kern_graph_free(g2);
  kern_array_free(x);
  expect_device_usable();
}

Test(gpu_capture, freed_arrays_stay_valid_for_their_graph) {
  gpu_or_skip();
  size_t base = rt_registry_count();
  int64_t n = 1 << 20;
  kern_array *x = th_ints(gpu, n, 0), *out = th_ints(gpu, n, 0);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 1), KERN_OK);
  cr_assert_eq(kern_array_copy(out, x), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK);
  kern_array_free(x);
  cr_expect_eq(rt_registry_count(), base + 2, "x's memory is held by the graph");
  for (int r = 0; r < 5; r++) cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  th_expect_all(out, 5, "the freed array's memory kept counting");
  kern_graph_free(g);
  cr_expect_eq(rt_registry_count(), base + 1);
  kern_array_free(out);
  expect_device_usable();
}

/* ---- update ------------------------------------------------------------------------------------ */

Test(gpu_capture, recapture_updates_the_executable_in_place) {
  gpu_or_skip();
  int64_t n = 1000;
  kern_array *x = th_ints(gpu, n, 0), *y = th_ints(gpu, n, 0);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 1), KERN_OK);
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK);
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  for (int step = 2; step <= 5; step++) {
    cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
    cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n / step), step % 2 ? x : y, step), KERN_OK);
    bool up = false;
    cr_assert_eq(kern_capture_end_update(gpu, g, &up), KERN_OK, "%s", kern_last_error());
    cr_expect(up, "step %d: same topology, new values, dims and arrays: updated in place", step);
    cr_assert_eq(kern_graph_launch(g), KERN_OK);
  }
  cr_expect_eq(th_at(x, 0), 1 + 3 + 5);
  cr_expect_eq(th_at(x, n / 5 - 1), 1 + 3 + 5);
  cr_expect_eq(th_at(x, n / 5), 1 + 3, "step 5 covered only n/5 elements");
  cr_expect_eq(th_at(y, 0), 2 + 4);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), y, 1), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), y, 1), KERN_OK);
  bool up = true;
  cr_assert_eq(kern_capture_end_update(gpu, g, &up), KERN_OK, "%s", kern_last_error());
  cr_expect(!up, "a new topology is rebuilt");
  cr_assert_eq(kern_graph_launch(g), KERN_OK);
  cr_expect_eq(th_at(y, n - 1), 2);
  kern_graph_free(g);
  kern_array_free(x), kern_array_free(y);
}

/* ---- conditional nodes ------------------------------------------------------------------------- */

static void skip_if_unsupported(kern_status st) {
  if (st == KERN_ERR_UNSUPPORTED) {
    kern_capture_abort(gpu);
    cr_skip_test("conditional nodes unavailable: %s", kern_last_error());
  }
}

Test(gpu_capture, while_and_if_nodes) {
  gpu_or_skip();
  int64_t one = 1, n = 256;
  kern_array *flag = th_ints(gpu, one, 0), *iters = th_ints(gpu, one, 0),
             *cond = th_ints(gpu, one, 0);
  kern_array *x = th_ints(gpu, n, 0);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 1), KERN_OK);
  kern_status st = kern_capture_while(gpu, flag);
  skip_if_unsupported(st);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_capture_if(gpu, cond), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("add"), gpu, KERN_DIM1(n), x, 100), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_capture_end_if(gpu), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("countdown"), gpu, KERN_DIM1(1), flag, iters), KERN_OK);
  cr_assert_eq(kern_capture_end_while(gpu), KERN_OK, "%s", kern_last_error());
  int32_t ten = 10;
  cr_assert_eq(kern_array_fill(iters, &ten), KERN_OK, "a fill after the conditional block");
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  int32_t starts[] = {4, 0, 7}, conds[] = {0, 1, 1};
  int32_t want_x = 0;
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(kern_array_write(flag, &starts[r], 4), KERN_OK);
    cr_assert_eq(kern_array_write(cond, &conds[r], 4), KERN_OK);
    int32_t zero = 0;
    cr_assert_eq(kern_array_write(iters, &zero, 4), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
    want_x += 1 + (conds[r] ? 100 * starts[r] : 0);
    cr_expect_eq(th_at(flag, 0), 0, "replay %d: the loop ran down to 0", r);
    cr_expect_eq(th_at(iters, 0), 10, "replay %d: the fill after the loop ran last", r);
    th_expect_all(x, want_x, "the if body ran once per iteration when cond != 0");
  }
  kern_graph_free(g);
  kern_array_free(flag), kern_array_free(iters), kern_array_free(cond), kern_array_free(x);
  expect_device_usable();
}

Test(gpu_capture, while_counts_iterations) {
  gpu_or_skip();
  int64_t one = 1;
  kern_array *flag = th_ints(gpu, one, 0), *iters = th_ints(gpu, one, 0);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  kern_status st = kern_capture_while(gpu, flag);
  skip_if_unsupported(st);
  cr_assert_eq(st, KERN_OK, "%s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(K("countdown"), gpu, KERN_DIM1(1), flag, iters), KERN_OK);
  cr_assert_eq(kern_capture_end_while(gpu), KERN_OK, "%s", kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  int32_t total = 0, starts[] = {1000, 3, 0};
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(kern_array_write(flag, &starts[r], 4), KERN_OK);
    cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
    total += starts[r];
    cr_expect_eq(th_at(iters, 0), total, "replay %d", r);
  }
  kern_graph_free(g);
  kern_array_free(flag), kern_array_free(iters);
}

/* ---- debug mode, first compile inside a capture ------------------------------------------------- */

Test(gpu_capture, debug_replays_report_bounds_errors) {
  gpu_or_skip();
  kern_set_debug(true);
  kern_module *m = kern_module_from_source("gpu_capture_debug.kern", src);
  cr_assert_not_null(m, "%s", kern_last_error());
  int64_t n = 4;
  kern_array *x = th_ints(gpu, n, 0);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "add"), gpu, KERN_DIM1(n), x, 1), KERN_OK,
               "the module's first launch compiles inside the capture: %s", kern_last_error());
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "poke"), gpu, KERN_DIM1(1), x, 6), KERN_OK, "%s",
               kern_last_error());
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  th_expect_error(kern_graph_launch(g), KERN_ERR_BOUNDS, "kernel 'poke'");
  cr_expect(strstr(kern_last_error(), "[6]"), "%s", kern_last_error());
  th_expect_all(x, 1, "the launch before the failing one ran");
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(KERN_LAUNCH(kern_module_kernel(m, "add"), gpu, KERN_DIM1(n), x, 1), KERN_OK);
  bool up = false;
  cr_assert_eq(kern_capture_end_update(gpu, g, &up), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "the updated graph has no failing launch: %s",
               kern_last_error());
  th_expect_all(x, 2, "the debug replay of the updated graph");
  kern_graph_free(g);
  kern_array_free(x);
  kern_module_free(m);
  kern_set_debug(false);
  expect_device_usable();
}

/* A copy between windows of device arrays is a 2-D copy on the stream, so a
 * capture records it; a strided fill (a host staging buffer) and a copy
 * between overlapping views are refused, and the capture stays usable. */
Test(gpu_capture, strided_copies_are_recorded) {
  gpu_or_skip();
  int64_t shape[2] = {8, 8}, w[2] = {3, 4};
  int32_t h[64];
  for (int i = 0; i < 64; i++) h[i] = i;
  kern_array *a = kern_array_new(gpu, KERN_INT32, 2, shape),
             *b = kern_array_new(gpu, KERN_INT32, 2, shape);
  cr_assert(a && b, "%s", kern_last_error());
  cr_assert_eq(kern_array_write(a, h, sizeof h), KERN_OK, "%s", kern_last_error());
  kern_array *src = kern_array_view(a, 2, (int64_t[]){1, 2}, w),
             *dst = kern_array_view(b, 2, (int64_t[]){4, 3}, w),
             *lap = kern_array_view(a, 2, (int64_t[]){2, 3}, w);
  cr_assert_eq(kern_capture_begin(gpu), KERN_OK);
  cr_assert_eq(kern_array_copy(dst, src), KERN_OK, "%s", kern_last_error());
  int32_t seven = 7;
  th_expect_error(kern_array_fill(src, &seven), KERN_ERR_CAPTURE, "dense arrays");
  th_expect_error(kern_array_copy(lap, src), KERN_ERR_CAPTURE, "overlapping views");
  kern_graph *g;
  cr_assert_eq(kern_capture_end(gpu, &g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(b, h, sizeof h), KERN_OK);
  for (int i = 0; i < 64; i++) cr_assert_eq(h[i], 0, "nothing ran before the replay");
  cr_assert_eq(kern_graph_launch(g), KERN_OK, "%s", kern_last_error());
  cr_assert_eq(kern_array_read(b, h, sizeof h), KERN_OK);
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) {
      bool in = r >= 4 && r < 7 && c >= 3 && c < 7;
      int32_t want = in ? (r - 3) * 8 + (c - 1) : 0;
      cr_assert_eq(h[r * 8 + c], want, "b[%d,%d] = %d, expected %d", r, c, h[r * 8 + c], want);
    }
  kern_graph_free(g);
  kern_array_free(src), kern_array_free(dst), kern_array_free(lap);
  kern_array_free(a), kern_array_free(b);
  expect_device_usable();
}
