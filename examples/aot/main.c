/* main.c: a program whose kernels were compiled ahead of time by kern_add_kernels
 * (see CMakeLists.txt): particles.h declares particles_advance_launch and
 * particles_energy_launch. Runs 200 steps on the device named by argv[1]
 * (default cpu), checks them against the same physics in plain C and prints the
 * energy before and after. Needs no C compiler and no NVRTC at run time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "particles.h"

enum { N = 4096, STEPS = 200 };

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != KERN_OK) {                                                                       \
      fprintf(stderr, "%s failed: %s\n", #call, kern_last_error());                                \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* The kernel's physics in C, for the check. */
static void advance(particles_Particle *p, float dt) {
  p->vel.y = p->vel.y - 9.81f * dt;
  p->pos.x += dt * p->vel.x, p->pos.y += dt * p->vel.y, p->pos.z += dt * p->vel.z;
  if (p->pos.y < 0.0f) p->pos.y = -p->pos.y, p->vel.y = -p->vel.y * 0.5f;
}

static double total_energy(kern_device *dev, kern_array *ps) {
  int64_t n = N;
  kern_array *e = kern_array_empty(dev, KERN_FLOAT32, 1, &n);
  float *h = malloc(N * sizeof *h);
  if (!e || !h) exit(1);
  CHECK(particles_energy_launch(dev, KERN_DIM1(N), ps, e));
  CHECK(kern_array_read(e, h, N * sizeof *h));
  double sum = 0;
  for (int i = 0; i < N; i++) sum += h[i];
  kern_array_free(e);
  free(h);
  return sum;
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "cpu";
  kern_device *dev = kern_device_get(name);
  if (!dev) {
    fprintf(stderr, "no device '%s': %s\n", name, kern_last_error());
    return 2;
  }
  particles_Particle *host = malloc(N * sizeof *host), *ref = malloc(N * sizeof *ref);
  if (!host || !ref) return 1;
  for (int i = 0; i < N; i++) {
    particles_Particle p = {{(float)(i % 64), 1.0f + (float)(i % 97) * 0.1f, (float)(i / 64)},
                            {0.5f, 0, -0.25f},
                            1.0f + (float)(i % 3)};
    host[i] = ref[i] = p;
  }
  /* A kern struct's array dtype comes from the module. */
  kern_dtype particle = kern_module_dtype(particles_module(), "Particle");
  int64_t n = N;
  kern_array *ps = kern_array_empty(dev, particle, 1, &n);
  if (!ps) {
    fprintf(stderr, "%s\n", kern_last_error());
    return 1;
  }
  CHECK(kern_array_write(ps, host, N * sizeof *host));
  double before = total_energy(dev, ps);
  for (int s = 0; s < STEPS; s++) {
    CHECK(particles_advance_launch(dev, KERN_DIM1(N), ps, 0.01f));
    for (int i = 0; i < N; i++) advance(&ref[i], 0.01f);
  }
  double after = total_energy(dev, ps);
  CHECK(kern_array_read(ps, host, N * sizeof *host));
  double worst = 0;
  for (int i = 0; i < N; i++)
    worst = fmax(worst, fabs((double)host[i].pos.y - (double)ref[i].pos.y));
  printf("particles on %s: energy %.1f -> %.1f after %d steps, largest difference from C %.2g\n",
         kern_device_name(dev), before, after, STEPS, worst);
  kern_array_free(ps);
  free(host);
  free(ref);
  kern_shutdown();
  return worst < 1e-3 && after < before ? 0 : 1;
}
