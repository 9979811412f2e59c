/* embedded.c: modules that `kernc build` compiled ahead of time.
 *
 * Requires: the table layout of kern_abi.h (struct kern_embedded), module.c
 * (rt_module_create), front.h (the embedded source is checked again for the
 * kernels' signatures; that needs no C compiler and no NVRTC).
 * Produces: kern_module_embedded, kern_launch_embedded; compile.c hands the
 * table's entry points and GPU images to the backends, so neither compiles
 * anything nor touches the cache.
 * Breaks: a table's module is made on its first use (no global constructors)
 * under a mutex and found afterwards without locking: an append-only list with
 * an atomic head. kern_shutdown frees the modules; the next use makes them
 * again. A table built for another ABI is refused before anything but its
 * fixed head (magic ... name) is read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "front.h"
#include "fork.h"

typedef struct entry {
  const kern_embedded *table;
  kern_module *module;
  struct entry *next;
} entry;

static _Atomic(entry *) head;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&mu, NULL, FORK_RANK_EMBEDDED)

/* ---- checking a table ------------------------------------------------------------ */

static const char *str_or(const char *s, const char *dflt) { return s ? s : dflt; }

static kern_status check_head(const kern_embedded *e) {
  if (e->magic != KN_EMBED_MAGIC)
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_module_embedded: not a module table written by kernc build");
  if (e->abi_version != KN_ABI_VERSION)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "module '%s' was built by kernc %s for kern ABI version %u, but this libkern (%s) has ABI "
        "version %d: rebuild it with this kern's kernc build",
        str_or(e->name, "?"), str_or(e->kern_version, "?"), (unsigned)e->abi_version,
        kern_version_string(), KN_ABI_VERSION);
  if (e->layout != KN_EMBED_LAYOUT)
    return err_set(
        KERN_ERR_UNSUPPORTED,
        "module '%s' was built by kernc %s with table layout %u; this libkern (%s) reads layout %d: "
        "rebuild it with this kern's kernc build",
        str_or(e->name, "?"), str_or(e->kern_version, "?"), (unsigned)e->layout,
        kern_version_string(), KN_EMBED_LAYOUT);
  return KERN_OK;
}

static kern_status check_body(const kern_embedded *e) {
  bool ok = e->name && e->nfiles >= 1 && e->files && e->naliases >= 0 &&
            (e->aliases || !e->naliases) && e->nkernels >= 0 && (e->kernels || !e->nkernels) &&
            e->nimages >= 0 && (e->images || !e->nimages);
  for (int i = 0; ok && i < e->nfiles; i++) ok = e->files[i].path && e->files[i].text;
  for (int i = 0; ok && i < e->naliases; i++)
    ok = e->aliases[i].path && (unsigned)e->aliases[i].file < (unsigned)e->nfiles;
  for (int i = 0; ok && i < e->nkernels; i++)
    ok = e->kernels[i].name && e->kernels[i].range && e->kernels[i].range_dense;
  for (int i = 0; ok && i < e->nimages; i++) ok = e->images[i].data && e->images[i].size > 0;
  if (!ok)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "module table '%s' is malformed",
                   str_or(e->name, "?"));
  return KERN_OK;
}

/* The module the runtime rebuilt must have the kernels the table has code for. */
static kern_status check_kernels(const kern_embedded *e, const kern_module *m) {
  if (m->nkernels != e->nkernels)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "module '%s': the table has %d kernels but its source declares %d", e->name,
                   e->nkernels, m->nkernels);
  for (int i = 0; i < m->nkernels; i++) {
    const kern_kernel *k = &m->kernels[i];
    const kn_embed_kernel *t = &e->kernels[i];
    if (strcmp(k->name, t->name) != 0)
      return err_set(KERN_ERR_UNSUPPORTED,
                     "module '%s': kernel #%d is '%s' in the table but '%s' in its source", e->name,
                     i + 1, t->name, k->name);
    /* A kernel without parameters has a one-byte placeholder struct. */
    if (t->args_size != k->args_size && !(k->nparams == 0 && t->args_size <= 1))
      return err_set(
          KERN_ERR_UNSUPPORTED,
          "ABI mismatch in kernel '%s' of module '%s': the compiled argument block is %llu bytes, "
          "the runtime's %zu",
          k->name, e->name, (unsigned long long)t->args_size, k->args_size);
  }
  return KERN_OK;
}

/* ---- making the module --------------------------------------------------------------- */

/* Imports come from the table: an alias names the file an import spelling reads. */
static const char *read_import(void *ud, const char *path, size_t *len, const char **key) {
  const kern_embedded *e = ud;
  for (int i = 0; i < e->naliases; i++)
    if (strcmp(e->aliases[i].path, path) == 0) {
      const kn_embed_file *f = &e->files[e->aliases[i].file];
      *len = (size_t)f->len;
      *key = f->path;
      return f->text;
    }
  errno = ENOENT;
  return NULL;
}

static kern_module *make_module(const kern_embedded *e) {
  FrontReader reader = {read_import, (void *)e};
  const kn_embed_file *root = &e->files[0];
  kern_module *m = rt_module_create(
      e->name, front_compile_with(root->path, root->text, (size_t)root->len, &reader));
  if (!m) return NULL;
  if (check_kernels(e, m)) {
    rt_module_destroy(m);
    return NULL;
  }
  m->embedded = e;
  m->debug = (e->debug & KN_EMBED_DEBUG) != 0; /* the code was generated with (or without) checks */
  m->fast_math = (e->debug & KN_EMBED_FAST_MATH) != 0;
  m->verify_fp =
      (e->debug & KN_EMBED_VERIFY_FP) != 0; /* kernc build --verify-fp, not KERN_VERIFY_FP */
  return m;
}

static kern_module *find(const kern_embedded *e) {
  for (entry *n = atomic_load_explicit(&head, memory_order_acquire); n; n = n->next)
    if (n->table == e) return n->module;
  return NULL;
}

static void free_modules(void);

static kern_module *add(const kern_embedded *e) {
  kern_module *m = find(e);
  if (m) return m;
  if (check_head(e) || check_body(e)) return NULL;
  entry *n = calloc(1, sizeof *n);
  if (!n) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading module '%s'", e->name);
    return NULL;
  }
  if (!(m = make_module(e))) {
    free(n);
    return NULL;
  }
  rt_at_shutdown(free_modules);
  n->table = e;
  n->module = m;
  n->next = atomic_load_explicit(&head, memory_order_relaxed);
  atomic_store_explicit(&head, n, memory_order_release);
  return m;
}

kern_module *kern_module_embedded(const kern_embedded *e) {
  if (rt_ensure_init()) return NULL;
  if (!e) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_embedded: the table is NULL");
    return NULL;
  }
  kern_module *m = find(e);
  if (m) return m;
  pthread_mutex_lock(&mu);
  m = add(e);
  pthread_mutex_unlock(&mu);
  return m;
}

/* At kern_shutdown (registered with the first module). */
static void free_modules(void) {
  pthread_mutex_lock(&mu);
  entry *n = atomic_exchange(&head, NULL);
  while (n) {
    entry *next = n->next;
    rt_module_destroy(n->module);
    free(n);
    n = next;
  }
  pthread_mutex_unlock(&mu);
}

/* ---- launching ------------------------------------------------------------------------ */

enum { INLINE_ARGS = 16 };

static kern_status build_args(const kern_kernel *k, const void *const *args, kern_arg *out) {
  for (int i = 0; i < k->nparams; i++) {
    const rt_param *p = &k->params[i];
    if (!args[i])
      return err_set(KERN_ERR_INVALID_ARGUMENT,
                     "kernel '%s' parameter '%s' (#%d): the argument pointer is NULL", k->name,
                     p->name, i + 1);
    out[i] = p->is_array ? kern_arg_array(*(kern_array *const *)args[i])
                         : kern_arg_bytes(p->dtype, args[i]);
  }
  return KERN_OK;
}

kern_status kern_launch_embedded(const kern_embedded *e, int kernel, kern_device *dev,
                                 kern_dims dims, int nargs, const void *const *args) {
  kern_module *m = kern_module_embedded(e);
  if (!m) return kern_last_status();
  if (kernel < 0 || kernel >= m->nkernels)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "module '%s' has no kernel #%d (it has %d)", m->name,
                   kernel, m->nkernels);
  kern_kernel *k = &m->kernels[kernel];
  if (nargs != k->nparams || (nargs > 0 && !args))
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kernel '%s' expects %d argument%s, got %d%s",
                   k->name, k->nparams, k->nparams == 1 ? "" : "s", nargs,
                   nargs > 0 && !args ? " in a NULL list" : "");
  kern_arg small[INLINE_ARGS], *a = small;
  if (nargs > INLINE_ARGS && !(a = malloc((size_t)nargs * sizeof *a)))
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory for the arguments of kernel '%s'",
                   k->name);
  kern_status st = build_args(k, args, a);
  if (!st) st = kern_launch(k, dev, dims, nargs, a);
  if (a != small) free(a);
  return st;
}
