/* stencil: 100 Jacobi steps on a 1024x1024 grid (2D launch), checked against C. */
#include <math.h>

#include "example.h"

static void reference(const float *src, float *dst, int m, int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      dst[i * n + j] = (i == 0 || j == 0 || i == m - 1 || j == n - 1)
                           ? src[i * n + j]
                           : 0.25f * (src[(i - 1) * n + j] + src[(i + 1) * n + j] +
                                      src[i * n + j - 1] + src[i * n + j + 1]);
}

int main(int argc, char **argv) {
  kern_device *dev = example_device(argc, argv);
  kern_module *mod = example_module("stencil.kern");
  kern_kernel *jacobi = kern_module_kernel(mod, "jacobi");
  CHECK_PTR(jacobi);

  int m = 1024, n = 1024, steps = 100;
  int64_t shape[2] = {m, n};
  float *a = calloc((size_t)m * n, sizeof *a), *b = calloc((size_t)m * n, sizeof *b);
  for (int j = 0; j < n; j++) a[j] = 100.0f; /* a hot top edge */
  memcpy(b, a, (size_t)m * n * sizeof *a);
  kern_array *ga = kern_array_empty(dev, KERN_FLOAT32, 2, shape),
             *gb = kern_array_empty(dev, KERN_FLOAT32, 2, shape);
  CHECK_PTR(ga);
  CHECK_PTR(gb);
  CHECK(kern_array_write(ga, a, (size_t)m * n * sizeof *a));
  for (int s = 0; s < steps; s++) {
    CHECK(KERN_LAUNCH(jacobi, dev, KERN_DIM2(m, n), ga, gb));
    kern_array *t = ga;
    ga = gb;
    gb = t;
    reference(a, b, m, n);
    float *u = a;
    a = b;
    b = u;
  }
  float *got = malloc((size_t)m * n * sizeof *got);
  CHECK(kern_array_read(ga, got, (size_t)m * n * sizeof *got));
  double worst = 0;
  for (int64_t i = 0; i < (int64_t)m * n; i++) worst = fmax(worst, fabs(got[i] - a[i]));
  printf("stencil on %s: %dx%d, %d steps, centre-top value %g, max difference from C %g\n",
         kern_device_name(dev), m, n, steps, got[1 * n + n / 2], worst);
  kern_array_free(ga);
  kern_array_free(gb);
  kern_module_free(mod);
  free(a);
  free(b);
  free(got);
  kern_shutdown();
  return worst > 1e-4;
}
