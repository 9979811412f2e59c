/* matmul.c: kern_array_matmul, kern's matrix product for host programs.
 *
 * Requires: the kernels of runtime/kern/matmul.kern (built into the library
 * as the string rt_kern_matmul by cmake/embed_stdlib.cmake) and the public
 * module and launch API. Produces: kern_array_matmul. The module is made on
 * first use under a mutex and compiled per device on its first launch (the
 * compiled code is cached like any module's); kern_shutdown frees it.
 * Breaks: nothing; a launch is a launch (the device's stream, graph capture).
 */
#include <pthread.h>
#include <stdlib.h>

#include "core.h"

extern const char rt_kern_matmul[];

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static kern_module *module;

static void free_module(void) {
  pthread_mutex_lock(&mu);
  kern_module_free(module);
  module = NULL;
  pthread_mutex_unlock(&mu);
}

static kern_module *get_module(void) {
  pthread_mutex_lock(&mu);
  if (!module) {
    module = kern_module_from_source("kern/matmul.kern", rt_kern_matmul);
    if (module) rt_at_shutdown(free_module);
  }
  kern_module *m = module;
  pthread_mutex_unlock(&mu);
  return m;
}

static const char *dname(kern_dtype t) { return kern_dtype_name(t); }

/* The kernel for a's dtype and the mode, or NULL with the message. */
static const char *kernel_for(kern_dtype in, kern_dtype out, kern_matmul_mode mode) {
  if (mode == KERN_MATMUL_EXACT) {
    if (in == KERN_FLOAT32 && out == KERN_FLOAT32) return "exact_f32";
    if (in == KERN_FLOAT64 && out == KERN_FLOAT64) return "exact_f64";
    err_set(KERN_ERR_INVALID_ARGUMENT,
            "kern_array_matmul: KERN_MATMUL_EXACT multiplies float32 or float64 arrays into one "
            "of the same dtype, not %s into %s",
            dname(in), dname(out));
    return NULL;
  }
  if (mode != KERN_MATMUL_FAST) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_matmul: mode %d is not a kern_matmul_mode",
            (int)mode);
    return NULL;
  }
  if (in == KERN_FLOAT32 && out == KERN_FLOAT32) return "fast_tf32";
  if (in == KERN_FLOAT16 && out == KERN_FLOAT32) return "fast_f16";
  if (in == KERN_BFLOAT16 && out == KERN_FLOAT32) return "fast_bf16";
  err_set(KERN_ERR_INVALID_ARGUMENT,
          "kern_array_matmul: KERN_MATMUL_FAST multiplies float16, bfloat16 or float32 arrays "
          "into a float32 one, not %s into %s",
          dname(in), dname(out));
  return NULL;
}

static kern_status check(const kern_array *a, const kern_array *b, const kern_array *c) {
  if (!a || !b || !c)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_array_matmul: array %s is NULL",
                   !a   ? "a"
                   : !b ? "b"
                        : "c");
  if (a->ndim != 2 || b->ndim != 2 || c->ndim != 2)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_matmul: a, b and c must be 2-D, not %d-D, %d-D and %d-D", a->ndim,
                   b->ndim, c->ndim);
  if (a->dtype != b->dtype)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_matmul: a is %s but b is %s; they must be of one dtype",
                   dname(a->dtype), dname(b->dtype));
  if (a->shape[1] != b->shape[0])
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_matmul: the inner dimensions differ: a is %lld x %lld, b is %lld "
                   "x %lld",
                   (long long)a->shape[0], (long long)a->shape[1], (long long)b->shape[0],
                   (long long)b->shape[1]);
  if (c->shape[0] != a->shape[0] || c->shape[1] != b->shape[1])
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_matmul: c is %lld x %lld but a x b is %lld x %lld",
                   (long long)c->shape[0], (long long)c->shape[1], (long long)a->shape[0],
                   (long long)b->shape[1]);
  if (a->device != b->device || a->device != c->device)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_array_matmul: a, b and c are on different devices (%s, %s, %s)",
                   kern_device_name(a->device), kern_device_name(b->device),
                   kern_device_name(c->device));
  return KERN_OK;
}

kern_status kern_array_matmul(const kern_array *a, const kern_array *b, kern_array *c,
                              kern_matmul_mode mode) {
  kern_status st = rt_ensure_init();
  if (st || (st = check(a, b, c))) return st;
  const char *name = kernel_for(a->dtype, c->dtype, mode);
  if (!name) return KERN_ERR_INVALID_ARGUMENT;
  kern_module *m = get_module();
  kern_kernel *k = m ? kern_module_kernel(m, name) : NULL;
  if (!k) return kern_last_status();
  int block = a->dtype == KERN_FLOAT64 ? 64 : 128; /* the kernels' blocks of c */
  kern_dims dims = {2, {(c->shape[0] + block - 1) / block, (c->shape[1] + block - 1) / block}};
  if (dims.shape[0] == 0 || dims.shape[1] == 0) return KERN_OK;
  kern_arg args[3] = {kern_arg_array((kern_array *)a), kern_arg_array((kern_array *)b),
                      kern_arg_array(c)};
  return kern_launch(k, c->device, dims, 3, args);
}
