/* consumer.c: the smallest program using an installed kern (compiled as C
 * and as C++): a by-value kern_ivec2 goes through KERN_LAUNCH as is. */
#include <kern.h>
#include <stdio.h>

int main(void) {
  if (kern_init() != KERN_OK) return 1;
  kern_device *cpu = kern_device_get("cpu");
  kern_module *m = kern_module_from_source(
      "twice.kern", "kernel void twice(int[] a, ivec2 s) { a[tid()] = s.x * tid() + s.y; }");
  if (!m) {
    fprintf(stderr, "%s", kern_last_error());
    return 1;
  }
  int64_t n = 4;
  kern_array *a = kern_array_new(cpu, KERN_INT32, 1, &n);
  kern_ivec2 s = {2, 0};
  int32_t v[4];
  if (KERN_LAUNCH(kern_module_kernel(m, "twice"), cpu, KERN_DIM1(n), a, s) != KERN_OK ||
      kern_array_read(a, v, sizeof v) != KERN_OK) {
    fprintf(stderr, "%s\n", kern_last_error());
    return 1;
  }
  printf("consumer: %d %d %d %d\n", v[0], v[1], v[2], v[3]);
  kern_array_free(a);
  kern_module_free(m);
  kern_shutdown();
  return v[3] != 6;
}
