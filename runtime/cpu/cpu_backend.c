/* cpu_backend.c: the "cpu" device: host memory, loading a module's compiled
 * code, and launches on the thread pool.
 *
 * Requires: compile.c (a module's shared object, or kernc build's entry
 * points), pool.c, a GPU driver's host services for pinned memory.
 * Produces: rt_cpu_ops and rt_cpu_probe.
 * Breaks: host arrays are 64-byte aligned; big ones come from mmap (zeroed by
 * the kernel, so kern_array_new of a large array costs no memset, and a huge
 * request fails cleanly instead of being touched; one larger than the
 * machine's physical memory is refused before asking the kernel). The choice between malloc
 * and mmap depends only on the size, so free() can tell them apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu_backend.h"

enum { MMAP_MIN = 1 << 20 };

/* ---- memory ------------------------------------------------------------------- */

/* Physical memory: a bigger request is refused up front, because with memory
 * overcommit the kernel would grant it and kill the process when it is used. */
static size_t physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : SIZE_MAX;
}

static void *host_alloc(size_t bytes, bool zero) {
  if (bytes > physical_memory()) return NULL;
  if (bytes >= MMAP_MIN) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes) != 0) return NULL;
  if (zero) memset(p, 0, bytes);
  return p;
}

static void *cpu_alloc(kern_device *d, size_t bytes, kern_allocator al, bool zero,
                       kern_memory_kind *kind) {
  void *p;
  if (al == KERN_ALLOC_PINNED) {
    *kind = KERN_MEM_PINNED_HOST;
    if (!rt_host.pinned_alloc) {
      err_set(KERN_ERR_UNSUPPORTED,
              "pinned host memory needs the CUDA driver, and it is not available");
      return NULL;
    }
    p = rt_host.pinned_alloc(bytes);
    if (p && zero) memset(p, 0, bytes);
  } else {
    *kind = KERN_MEM_HOST;
    p = host_alloc(bytes, zero);
  }
  if (!p)
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory: cannot allocate %zu bytes (%.1f GiB) on %s",
            bytes, (double)bytes / (1024.0 * 1024 * 1024), d->name);
  return p;
}

static void cpu_free(kern_device *d, void *p, size_t bytes, kern_memory_kind kind) {
  (void)d;
  if (kind == KERN_MEM_PINNED_HOST) {
    if (rt_host.pinned_free) rt_host.pinned_free(p);
  } else if (bytes >= MMAP_MIN) {
    munmap(p, bytes);
  } else {
    free(p);
  }
}

/* CPU memory is host memory: the core copies it itself; this serves a
 * caller that names the CPU as the copying device. */
static kern_status cpu_copy(kern_device *d, const rt_copy *c) {
  (void)d;
  rt_copy_host(c);
  return KERN_OK;
}

static kern_status cpu_synchronize(kern_device *d) {
  (void)d;
  return KERN_OK; /* launches finish before kern_launch returns */
}

static kern_status cpu_info(const kern_device *d, kern_device_info *out) {
  (void)d;
  memset(out, 0, sizeof *out);
  out->ordinal = -1;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  out->total_memory = pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
  return KERN_OK;
}

static bool cpu_allocator_ok(const kern_device *d, kern_allocator a) {
  (void)d;
  return a == KERN_ALLOC_DEFAULT || (a == KERN_ALLOC_PINNED && rt_host.pinned_alloc);
}

/* ---- compiled code ----------------------------------------------------------------- */

typedef struct cpu_entry {
  rt_range_fn range, dense;
} cpu_entry;
typedef struct cpu_code {
  rt_cpu_lib lib;
  int nkernels;
  cpu_entry *entries;
} cpu_code;

static void cpu_code_free(rt_code *code) {
  cpu_code *c = (cpu_code *)code;
  if (!c) return;
  rt_cpu_lib_close(&c->lib);
  free(c->entries);
  free(c);
}

/* Data symbols are converted through memcpy: ISO C has no object<->function
 * pointer cast, POSIX guarantees dlsym's result is usable either way. */
static rt_range_fn as_fn(void *p) {
  rt_range_fn f;
  memcpy(&f, &p, sizeof f);
  return f;
}

/* The symbol kk_<kernel>_<suffix> (kernel names are up to 1024 bytes). */
static void *kernel_sym(cpu_code *c, const kern_kernel *k, const char *suffix) {
  char *name = str_printf("kk_%s_%s", k->name, suffix);
  void *p = name ? rt_cpu_lib_sym(&c->lib, name) : NULL;
  free(name);
  return p;
}

static kern_status bind_kernel(cpu_code *c, const kern_kernel *k) {
  void *range = kernel_sym(c, k, "range"), *dense = kernel_sym(c, k, "range_dense");
  const uint32_t *size = kernel_sym(c, k, "args_size");
  if (!range || !dense || !size)
    return err_set(KERN_ERR_COMPILE,
                   "ABI mismatch: the compiled module lacks the entry points of kernel '%s'",
                   k->name);
  /* A kernel without parameters has a one-byte placeholder struct. */
  if (*size != k->args_size && !(k->nparams == 0 && *size <= 1))
    return err_set(
        KERN_ERR_COMPILE,
        "ABI mismatch in kernel '%s': the compiled code's argument block is %u bytes, the runtime's %zu",
        k->name, (unsigned)*size, k->args_size);
  c->entries[k->index] = (cpu_entry){as_fn(range), as_fn(dense)};
  return KERN_OK;
}

static kern_status cpu_compile(kern_module *m, kern_device *d, rt_code **out, rt_origin *origin) {
  (void)d;
  rt_binary bin;
  kern_status st = rt_module_binary(m, RT_CODE_CPU, 0, &bin);
  if (st) return st;
  *origin = bin.origin;
  cpu_code *c = calloc(1, sizeof *c);
  if (c) c->entries = calloc((size_t)m->nkernels + 1, sizeof *c->entries);
  if (!c || !c->entries) {
    rt_cpu_lib_close(&bin.lib);
    cpu_code_free((rt_code *)c);
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory compiling module '%s'", m->name);
  }
  c->nkernels = m->nkernels;
  c->lib = bin.lib;
  /* A module built by kernc build carries its entry points: no compiler ran. */
  for (int i = 0; bin.aot && i < m->nkernels; i++)
    c->entries[i] = (cpu_entry){bin.aot[i].range, bin.aot[i].range_dense};
  for (int i = 0; !bin.aot && st == KERN_OK && i < m->nkernels; i++)
    st = bind_kernel(c, &m->kernels[i]);
  if (st) {
    cpu_code_free((rt_code *)c);
    return st;
  }
  *out = (rt_code *)c;
  return KERN_OK;
}

/* ---- launch ---------------------------------------------------------------------------- */

static kern_status cpu_launch(const rt_launch *L) {
  const cpu_code *c = (const cpu_code *)L->code;
  const cpu_entry *e = &c->entries[L->kernel->index];
  rt_pool_run(L->dense ? e->dense : e->range, L->args, &L->ctx, L->ctx.n, &L->kernel->cpu_cost);
  return KERN_OK; /* a debug record in L->ctx.err is the core's to word */
}

const rt_device_ops rt_cpu_ops = {
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
    .info = cpu_info,
    .allocator_ok = cpu_allocator_ok,
    .compile = cpu_compile,
    .code_free = cpu_code_free,
    .launch = cpu_launch,
};

kern_status rt_cpu_probe(void) {
  rt_device_add(RT_DEV_CPU, -1, &rt_cpu_ops, NULL);
  return KERN_OK;
}
