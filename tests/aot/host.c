/* host.c: a program linked with two kernc build outputs (aot_main, aot_other)
 * and libkern; valid C11 and C++17. Runs every kernel on the device named by
 * argv[1] (default cpu), checks the results against plain C, prints
 * "aot ok on DEVICE" and exits 0, or names each mismatch and exits 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_main.h"
#include "aot_other.h"

static int failures;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

#define CHECK(call) EXPECT((call) == KERN_OK, "%s failed: %s", #call, kern_last_error())

static kern_array *floats(kern_device *dev, int64_t n, float first, float step) {
  float *h = (float *)malloc((size_t)n * sizeof *h);
  for (int64_t i = 0; i < n; i++) h[i] = first + step * (float)i;
  kern_array *a = kern_array_empty(dev, KERN_FLOAT32, 1, &n);
  if (a) CHECK(kern_array_write(a, h, (size_t)n * sizeof *h));
  free(h);
  return a;
}

static void read_floats(kern_array *a, float *out, int64_t n) {
  CHECK(kern_array_read(a, out, (size_t)n * sizeof *out));
}

static void test_saxpy_and_scale(kern_device *dev) {
  enum { N = 1000 };
  kern_array *x = floats(dev, N, 0, 1), *y = floats(dev, N, 1, 0);
  float out[N];
  CHECK(aot_main_saxpy_launch(dev, KERN_DIM1(N), x, y, 2.5f));
  read_floats(y, out, N);
  for (int i = 0; i < N; i++)
    EXPECT(out[i] == 2.5f * (float)i + 1.0f, "saxpy y[%d] = %g", i, out[i]);
  /* aot_main's scale doubles then scales; aot_other's adds: two kernels named scale, one program. */
  CHECK(aot_main_scale_launch(dev, KERN_DIM1(N), x, 3.0f));
  CHECK(aot_other_scale_launch(dev, KERN_DIM1(N), x, 1.0f));
  read_floats(x, out, N);
  for (int i = 0; i < N; i++)
    EXPECT(out[i] == 6.0f * (float)i + 1.0f, "scale x[%d] = %g", i, out[i]);
  kern_array_free(x);
  kern_array_free(y);
}

static void test_structs(kern_device *dev) {
  enum { N = 64 };
  kern_module *m = aot_main_module();
  kern_dtype pt = kern_module_dtype(m, "Particle");
  EXPECT(kern_dtype_size(pt) == sizeof(aot_main_Particle), "Particle is %zu bytes",
         kern_dtype_size(pt));
  aot_main_Particle h[N];
  for (int i = 0; i < N; i++) {
    h[i].pos.x = (float)i, h[i].pos.y = 1, h[i].pos.z = -1;
    h[i].mass = (float)(i % 4);
    h[i].id = i;
  }
  int64_t n = N;
  kern_array *ps = kern_array_empty(dev, pt, 1, &n);
  CHECK(kern_array_write(ps, h, sizeof h));
  kern_vec3 delta = {1, 2, 3};
  aot_main_Wrapped w;
  memset(&w, 0, sizeof w);
  w.p.pos.x = 100, w.flag = true, w.w = 1000.0;
  CHECK(aot_main_move_launch(dev, KERN_DIM1(N), ps, delta, w));
  aot_main_Particle out[N];
  CHECK(kern_array_read(ps, out, sizeof out));
  for (int i = 0; i < N; i++) {
    float mass = (float)(i % 4);
    EXPECT(out[i].pos.x == (float)i + mass + 100 && out[i].pos.y == 1 + 2 * mass &&
               out[i].pos.z == -1 + 3 * mass,
           "move pos[%d] = (%g, %g, %g)", i, out[i].pos.x, out[i].pos.y, out[i].pos.z);
    EXPECT(out[i].id == i + 1000 && out[i].mass == mass, "move id[%d] = %d", i, out[i].id);
  }
  kern_array_free(ps);
}

static void test_grid(kern_device *dev) {
  enum { M = 7, N = 13 };
  int64_t shape[2] = {M, N};
  kern_array *g = kern_array_new(dev, KERN_INT32, 2, shape);
  int32_t out[M][N];
  CHECK(aot_main_grid_launch(dev, KERN_DIM2(M, N), g, (int64_t)5, (uint8_t)3, true));
  CHECK(kern_array_read(g, out, sizeof out));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      EXPECT(out[i][j] == -(5 + i * 100 + j * 3), "grid[%d][%d] = %d", i, j, out[i][j]);
  kern_array_free(g);
}

static void test_affine(kern_device *dev) {
  enum { N = 10 };
  int64_t n = N;
  kern_vec3 h[N], out[N];
  for (int i = 0; i < N; i++) h[i].x = (float)i, h[i].y = 1, h[i].z = 2;
  kern_array *v = kern_array_empty(dev, KERN_VEC3, 1, &n);
  CHECK(kern_array_write(v, h, sizeof h));
  kern_mat33 m = {{{1, 0, 0}, {0, 2, 0}, {1, 0, 3}}};
  kern_float16 half = {0x3c00}; /* 1.0 */
  CHECK(aot_main_affine_launch(dev, KERN_DIM1(N), v, m, half));
  CHECK(kern_array_read(v, out, sizeof out));
  for (int i = 0; i < N; i++)
    EXPECT(out[i].x == (float)i + 1 && out[i].y == 3 && out[i].z == (float)i + 7,
           "affine v[%d] = (%g, %g, %g)", i, out[i].x, out[i].y, out[i].z);
  kern_array_free(v);
}

static void test_dynamic_api(kern_device *dev) {
  kern_module *m = aot_main_module();
  EXPECT(m && m == aot_main_module(), "the module is made once");
  kern_module_free(m); /* ignored: the library owns it */
  kern_kernel *k = kern_module_kernel(m, "count");
  int64_t one = 1;
  kern_array *c = kern_array_new(dev, KERN_INT32, 1, &one);
  CHECK(KERN_LAUNCH(k, dev, KERN_DIM1(5000), c));
  CHECK(aot_main_count_launch(dev, KERN_DIM1(3000), c));
  int32_t got = 0;
  CHECK(kern_array_read(c, &got, sizeof got));
  EXPECT(got == 8000, "count = %d", got);
  CHECK(aot_main_nothing_launch(dev, KERN_DIM1(4)));
  /* Launch checks still apply. */
  EXPECT(aot_main_count_launch(dev, KERN_DIM1(1), NULL) == KERN_ERR_INVALID_ARGUMENT,
         "NULL array accepted");
  kern_array_free(c);
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "cpu";
  kern_device *dev = kern_device_get(name);
  if (!dev) {
    fprintf(stderr, "no device '%s': %s\n", name, kern_last_error());
    return 2;
  }
  test_saxpy_and_scale(dev);
  test_structs(dev);
  test_grid(dev);
  test_affine(dev);
  test_dynamic_api(dev);
  CHECK(kern_device_synchronize(dev));
  kern_shutdown();
  /* After a shutdown the modules are made again on first use. */
  kern_array *x = floats(dev, 3, 1, 1);
  CHECK(aot_other_scale_launch(dev, KERN_DIM1(3), x, 1.0f));
  float out[3];
  read_floats(x, out, 3);
  EXPECT(out[0] == 2 && out[2] == 4, "after shutdown: %g %g", out[0], out[2]);
  kern_array_free(x);
  kern_shutdown();
  if (failures) return 1;
  printf("aot ok on %s\n", name);
  return 0;
}
