/* main.c: a program with particles.kern's source built in (kern_embed_sources):
 * prints "embed ok on DEVICE: MODULE" after a launch whose result it checks. */
#include <stdio.h>

#include "particles_source.h"

int main(int argc, char **argv) {
  kern_device *dev = kern_device_get(argc > 1 ? argv[1] : "cpu");
  kern_module *mod = dev ? particles_source_load() : NULL;
  kern_dtype particle = mod ? kern_module_dtype(mod, "Particle") : KERN_DTYPE_INVALID;
  int64_t n = 8;
  kern_array *ps = particle ? kern_array_new(dev, particle, 1, &n) : NULL;
  kern_array *e = ps ? kern_array_new(dev, KERN_FLOAT32, 1, &n) : NULL;
  float energy[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  if (!e || KERN_LAUNCH(kern_module_kernel(mod, "advance"), dev, KERN_DIM1(n), ps, 0.5f) ||
      KERN_LAUNCH(kern_module_kernel(mod, "energy"), dev, KERN_DIM1(n), ps, e) ||
      kern_array_read(e, energy, sizeof energy)) {
    fprintf(stderr, "embedded: %s\n", kern_last_error());
    return 1;
  }
  for (int i = 0; i < 8; i++)
    if (energy[i] != 0) return fprintf(stderr, "embedded: energy[%d] = %g\n", i, energy[i]), 1;
  printf("embed ok on %s: %s\n", kern_device_name(dev), kern_module_name(mod));
  kern_array_free(e), kern_array_free(ps), kern_module_free(mod);
  return 0;
}
