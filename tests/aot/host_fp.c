/* host_fp.c: a program linked with aot_fp, built by kernc build with
 * --verify-fp (argv[2] "checked") or without it ("unchecked"). Launches recip
 * on a zero, so one store is +inf: a checked build fails the launch with
 * KERN_ERR_BOUNDS naming the kernel, the value and the index; an unchecked one
 * stores it. Prints "fp ok on DEVICE" and exits 0, or names the mismatch and
 * exits 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "aot_fp.h"

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "cpu";
  bool checked = argc > 2 && !strcmp(argv[2], "checked");
  kern_device *dev = kern_device_get(name);
  if (!dev) return fprintf(stderr, "no device '%s': %s\n", name, kern_last_error()), 2;
  const float hx[4] = {1, 2, 0, 4};
  int64_t n = 4;
  kern_array *x = kern_array_empty(dev, KERN_FLOAT32, 1, &n);
  kern_array *y = kern_array_new(dev, KERN_FLOAT32, 1, &n); /* zeros */
  if (!x || !y || kern_array_write(x, hx, sizeof hx)) return fprintf(stderr, "arrays\n"), 1;
  kern_status st = aot_fp_recip_launch(dev, KERN_DIM1(4), y, x);
  if (st == KERN_OK) st = kern_device_synchronize(dev);
  const char *msg = st ? kern_last_error() : "";
  int bad = 0;
  if (kern_module_verify_fp(aot_fp_module()) != checked)
    bad = fprintf(stderr, "kern_module_verify_fp is %d\n", !checked);
  if (checked && (st != KERN_ERR_BOUNDS || !strstr(msg, "kernel 'recip'") ||
                  !strstr(msg, "+inf at index [2]")))
    bad = fprintf(stderr, "checked build: status %d: %s\n", (int)st, msg);
  if (!checked && st != KERN_OK) bad = fprintf(stderr, "unchecked build: %s\n", msg);
  float hy[4];
  if (!bad && kern_array_read(y, hy, sizeof hy))
    bad = fprintf(stderr, "read: %s\n", kern_last_error());
  if (!bad && (hy[0] != 1 || hy[3] != 0.25f))
    bad = fprintf(stderr, "y = %g %g %g %g\n", hy[0], hy[1], hy[2], hy[3]);
  kern_array_free(x);
  kern_array_free(y);
  kern_shutdown();
  if (bad) return 1;
  printf("fp ok on %s\n", name);
  return 0;
}
