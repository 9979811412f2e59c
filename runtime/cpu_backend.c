/* cpu_backend.c: the "cpu" device: host memory, compiling modules with the C
 * compiler, and launches on the thread pool.
 *
 * Requires: cpu_compile.c (C source -> loaded object), pool.c, module.c (the
 * generated C source). Produces: rt_cpu_ops.
 * Breaks: host arrays are 64-byte aligned; big ones come from mmap (zeroed by
 * the kernel, so kern_array_new of a large array costs no memset, and a huge
 * request fails cleanly instead of being touched; one larger than the
 * machine's physical memory is refused before asking the kernel). The choice between malloc
 * and mmap depends only on the size, so free() can tell them apart.
 */
#include "rt.h"
#include "ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MMAP_MIN = 1 << 20 };

void *(*rt_pinned_alloc_hook)(size_t bytes);
void (*rt_pinned_free_hook)(void *ptr);

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
    if (!rt_pinned_alloc_hook) {
      rt_error(KERN_ERR_UNSUPPORTED,
               "pinned host memory needs the CUDA driver, and it is not available");
      return NULL;
    }
    p = rt_pinned_alloc_hook(bytes);
    if (p && zero) memset(p, 0, bytes);
  } else {
    *kind = KERN_MEM_HOST;
    p = host_alloc(bytes, zero);
  }
  if (!p)
    rt_error(KERN_ERR_OUT_OF_MEMORY, "out of memory: cannot allocate %zu bytes (%.1f GiB) on %s",
             bytes, (double)bytes / (1024.0 * 1024 * 1024), d->name);
  return p;
}

static void cpu_free(kern_device *d, void *p, size_t bytes, kern_memory_kind kind) {
  (void)d;
  if (kind == KERN_MEM_PINNED_HOST) {
    if (rt_pinned_free_hook) rt_pinned_free_hook(p);
  } else if (bytes >= MMAP_MIN) {
    munmap(p, bytes);
  } else {
    free(p);
  }
}

static kern_status cpu_copy(kern_device *d, void *dst, const void *src, size_t n, bool dh,
                            bool sh) {
  (void)d, (void)dh, (void)sh;
  memmove(dst, src, n);
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
  return a == KERN_ALLOC_DEFAULT || (a == KERN_ALLOC_PINNED && rt_pinned_alloc_hook);
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

static kern_status bind_kernel(cpu_code *c, const kern_kernel *k) {
  char name[AST_MAX_IDENT + 32]; /* kk_<kernel name>_range_dense */
  snprintf(name, sizeof name, "kk_%s_range", k->name);
  void *range = rt_cpu_lib_sym(&c->lib, name);
  snprintf(name, sizeof name, "kk_%s_range_dense", k->name);
  void *dense = rt_cpu_lib_sym(&c->lib, name);
  snprintf(name, sizeof name, "kk_%s_args_size", k->name);
  const uint32_t *size = rt_cpu_lib_sym(&c->lib, name);
  if (!range || !dense || !size)
    return rt_error(KERN_ERR_COMPILE,
                    "ABI mismatch: the compiled module lacks the entry points of kernel '%s'",
                    k->name);
  /* A kernel without parameters has a one-byte placeholder struct. */
  if (*size != k->args_size && !(k->nparams == 0 && *size <= 1))
    return rt_error(
        KERN_ERR_COMPILE,
        "ABI mismatch in kernel '%s': the compiled code's argument block is %u bytes, the runtime's %zu",
        k->name, (unsigned)*size, k->args_size);
  c->entries[k->index] = (cpu_entry){as_fn(range), as_fn(dense)};
  return KERN_OK;
}

static kern_status cpu_compile(kern_module *m, kern_device *d, rt_code **out) {
  (void)d;
  const char *src = NULL;
  kern_status st = m->embedded ? KERN_OK : rt_module_c_source(m, &src);
  if (st) return st;
  cpu_code *c = calloc(1, sizeof *c);
  if (c) c->entries = calloc((size_t)m->nkernels + 1, sizeof *c->entries);
  if (!c || !c->entries) {
    cpu_code_free((rt_code *)c);
    return rt_error(KERN_ERR_OUT_OF_MEMORY, "out of memory compiling module '%s'", m->name);
  }
  c->nkernels = m->nkernels;
  /* A module built by kernc build carries its entry points: no compiler runs. */
  if (m->embedded)
    for (int i = 0; st == KERN_OK && i < m->nkernels; i++)
      st = rt_embedded_cpu(m, i, &c->entries[i].range, &c->entries[i].dense);
  else
    st = rt_cpu_compile(src, strlen(src), m->debug, &c->lib);
  for (int i = 0; !m->embedded && st == KERN_OK && i < m->nkernels; i++)
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
  if (L->ctx.err) memset(L->ctx.err, 0, sizeof *L->ctx.err);
  rt_pool_run(L->dense ? e->dense : e->range, L->args, &L->ctx, L->ctx.n, &L->kernel->cpu_cost);
  if (L->ctx.err && L->ctx.err->flag) return rt_debug_error(L->kernel, L->ctx.err);
  return KERN_OK;
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
