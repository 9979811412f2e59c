/* nbody: one step for 2048 bodies (structs with vec3 fields), checked against C. */
#include <math.h>

#include "example.h"

typedef struct {
  float pos[3], vel[3], mass;
} Body; /* the kern struct's layout: 28 bytes */

static void reference(const Body *in, Body *out, int n, float dt) {
  for (int i = 0; i < n; i++) {
    float a[3] = {0, 0, 0};
    for (int j = 0; j < n; j++) {
      float d[3], r2 = 0.01f * 0.01f;
      for (int k = 0; k < 3; k++) d[k] = in[j].pos[k] - in[i].pos[k];
      r2 += d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      float s = in[j].mass / sqrtf(r2 * r2 * r2);
      for (int k = 0; k < 3; k++) a[k] += d[k] * s;
    }
    out[i] = in[i];
    for (int k = 0; k < 3; k++) {
      out[i].vel[k] += a[k] * dt;
      out[i].pos[k] += out[i].vel[k] * dt;
    }
  }
}

int main(int argc, char **argv) {
  kern_device *dev = example_device(argc, argv);
  kern_module *mod = example_module("nbody.kern");
  kern_kernel *integrate = kern_module_kernel(mod, "integrate");
  CHECK_PTR(integrate);
  kern_dtype body_t = kern_module_dtype(mod, "Body");
  if (kern_dtype_size(body_t) != sizeof(Body)) {
    fprintf(stderr, "layout mismatch\n");
    return 1;
  }

  int64_t n = 2048;
  Body *in = malloc(n * sizeof *in), *got = malloc(n * sizeof *got),
       *want = malloc(n * sizeof *want);
  for (int64_t i = 0; i < n; i++)
    in[i] =
        (Body){{(float)(i % 13), (float)(i % 7), (float)(i % 5)}, {0, 0, 0}, 1.0f + (float)(i % 3)};
  kern_array *ain = kern_array_empty(dev, body_t, 1, &n),
             *aout = kern_array_new(dev, body_t, 1, &n);
  CHECK_PTR(ain);
  CHECK_PTR(aout);
  CHECK(kern_array_write(ain, in, n * sizeof *in));
  CHECK(KERN_LAUNCH(integrate, dev, KERN_DIM1(n), ain, aout, 0.001f));
  CHECK(kern_array_read(aout, got, n * sizeof *got));
  reference(in, want, (int)n, 0.001f);

  double worst = 0;
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      double err = fabs(got[i].pos[k] - want[i].pos[k]) / (fabs(want[i].pos[k]) + 1e-3);
      if (err > worst) worst = err;
    }
  printf("nbody on %s: %lld bodies, body 1 at (%g, %g, %g), worst relative error %.2e\n",
         kern_device_name(dev), (long long)n, got[1].pos[0], got[1].pos[1], got[1].pos[2], worst);
  kern_array_free(ain);
  kern_array_free(aout);
  kern_module_free(mod);
  free(in);
  free(got);
  free(want);
  kern_shutdown();
  return worst > 1e-3;
}
