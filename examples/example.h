/* example.h: what every example shares: picking the device and failing loudly. */
#ifndef KERN_EXAMPLE_H
#define KERN_EXAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

/* How a failed CHECK ends the program (an MPI program aborts all its ranks). */
#ifndef EXAMPLE_FAIL
#define EXAMPLE_FAIL() exit(1)
#endif

/* Exits with kern's message when a call failed. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != KERN_OK) {                                                                       \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, kern_last_error());     \
      EXAMPLE_FAIL();                                                                              \
    }                                                                                              \
  } while (0)

#define CHECK_PTR(p)                                                                               \
  do {                                                                                             \
    if (!(p)) {                                                                                    \
      fprintf(stderr, "%s:%d: %s is NULL: %s\n", __FILE__, __LINE__, #p, kern_last_error());       \
      EXAMPLE_FAIL();                                                                              \
    }                                                                                              \
  } while (0)

/* The device named on the command line, else the first GPU, else the CPU. */
static inline kern_device *example_device(int argc, char **argv) {
  CHECK(kern_init());
  kern_device *dev = argc > 1 ? kern_device_get(argv[1]) : kern_device_get("cuda:0");
  if (!dev && argc > 1) {
    fprintf(stderr, "no device '%s': %s\n", argv[1], kern_last_error());
    exit(1);
  }
  if (!dev) dev = kern_device_get("cpu");
  CHECK_PTR(dev);
  return dev;
}

/* examples/NAME.kern, found beside the example's sources. */
static inline kern_module *example_module(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", KERN_EXAMPLES_DIR, name);
  kern_module *m = kern_module_load(path);
  if (!m) {
    fprintf(stderr, "%s", kern_last_error());
    exit(1);
  }
  return m;
}

#endif
