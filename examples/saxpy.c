/* saxpy: y = a*x + y on 16M floats, checked against a plain C loop. */
#include "example.h"

int main(int argc, char **argv) {
  kern_device *dev = example_device(argc, argv);
  kern_module *mod = example_module("saxpy.kern");
  kern_kernel *saxpy = kern_module_kernel(mod, "saxpy");
  CHECK_PTR(saxpy);

  int64_t n = 1 << 24;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int64_t i = 0; i < n; i++) {
    x[i] = (float)(i % 1000);
    y[i] = 1.0f;
  }
  kern_array *ax = kern_array_empty(dev, KERN_FLOAT32, 1, &n);
  kern_array *ay = kern_array_empty(dev, KERN_FLOAT32, 1, &n);
  CHECK_PTR(ax);
  CHECK_PTR(ay);
  CHECK(kern_array_write(ax, x, n * sizeof *x));
  CHECK(kern_array_write(ay, y, n * sizeof *y));

  CHECK(KERN_LAUNCH(saxpy, dev, KERN_DIM1(n), ax, ay, 2.0f));
  CHECK(kern_array_read(ay, y, n * sizeof *y));

  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += y[i] != 2.0f * (float)(i % 1000) + 1.0f;
  printf("saxpy on %s: %lld elements, y[999] = %g, %lld wrong\n", kern_device_name(dev),
         (long long)n, y[999], (long long)bad);

  kern_array_free(ax);
  kern_array_free(ay);
  kern_module_free(mod);
  free(x);
  free(y);
  kern_shutdown();
  return bad != 0;
}
