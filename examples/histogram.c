/* histogram: 4M values into 64 bins with atomic_add; totals must be exact. */
#include "example.h"

int main(int argc, char **argv) {
  kern_device *dev = example_device(argc, argv);
  kern_module *mod = example_module("histogram.kern");
  kern_kernel *hist = kern_module_kernel(mod, "histogram");
  CHECK_PTR(hist);

  int64_t n = 1 << 22, nbins = 64;
  int32_t *values = malloc(n * sizeof *values), bins[64], expect[64] = {0};
  for (int64_t i = 0; i < n; i++) {
    values[i] = (int32_t)((i * 2654435761u) % 1000);
    expect[values[i] % nbins]++;
  }
  kern_array *av = kern_array_empty(dev, KERN_INT32, 1, &n);
  kern_array *ab = kern_array_new(dev, KERN_INT32, 1, &nbins);
  CHECK_PTR(av);
  CHECK_PTR(ab);
  CHECK(kern_array_write(av, values, n * sizeof *values));
  CHECK(KERN_LAUNCH(hist, dev, KERN_DIM1(n), av, ab));
  CHECK(kern_array_read(ab, bins, sizeof bins));

  int wrong = 0;
  for (int b = 0; b < nbins; b++) wrong += bins[b] != expect[b];
  printf("histogram on %s: %lld values, bin[0] = %d (expected %d), %d bins wrong\n",
         kern_device_name(dev), (long long)n, bins[0], expect[0], wrong);
  kern_array_free(av);
  kern_array_free(ab);
  kern_module_free(mod);
  free(values);
  kern_shutdown();
  return wrong != 0;
}
