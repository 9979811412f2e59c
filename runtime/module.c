/* module.c: modules and kernels: compiling .kern source with the front end,
 * describing kernel parameters for launches, compiling per device on demand,
 * and wording what a debug launch's error record names.
 *
 * Requires: front.h (front_compile), emit.h (args layout), dtype.c,
 * modpath.c (a module file's path), the device's compile op. Produces: kern_module_*, kern_kernel_*,
 * rt_module_code, rt_debug_error, and rt_module_create / rt_module_destroy
 * for embedded.c (modules built by kernc build, which kern_module_free
 * leaves to the library).
 * Breaks: a module keeps its checked Program for its whole life (parameter
 * types point into it). Code for a device is built on the first launch there,
 * once, by the thread that claims the device's slot (others wait); later
 * launches read the slot without locking (an atomic pointer, set once). A
 * forked child refuses to wait for a slot a thread of its parent was
 * compiling at the fork (that thread does not exist in the child). The log hears of both: a module's
 * warnings when it loads, and a line per device it is made ready for (how
 * long it took, compiled or cached), sent after the lock is released.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "emit.h"
#include "front.h"
#include "fork.h"
#include "proc.h"

/* ---- describing kernels ------------------------------------------------------- */

static kern_status describe_params(kern_kernel *k) {
  const Decl *d = k->decl;
  k->nparams = d->nparams;
  k->params = calloc((size_t)d->nparams + 1, sizeof *k->params);
  size_t *offs = calloc((size_t)d->nparams + 1, sizeof *offs);
  if (!k->params || !offs) {
    free(offs);
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading kernel '%s'", k->name);
  }
  k->args_size = emit_args_layout(d, offs, &k->args_align);
  kern_status st = KERN_OK;
  for (int i = 0; i < d->nparams && !st; i++) {
    rt_param *p = &k->params[i];
    const Var *v = d->params[i];
    size_t align;
    p->name = v->name;
    p->type = type_name(v->ty);
    p->atomics = v->atomics;
    p->is_array = v->ty->kind == TY_ARRAY;
    p->ndim = p->is_array ? v->ty->ndim : 0;
    p->dtype = rt_dtype_of_type(p->is_array ? v->ty->elem : v->ty);
    p->size = emit_param_size(v->ty, &align);
    p->offset = offs[i];
    const Type *elem = p->is_array ? v->ty->elem : v->ty;
    if (p->dtype == KERN_DTYPE_INVALID && elem && elem->kind == TY_STRUCT)
      st =
          err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory registering struct '%s'", type_name(elem));
    else if (p->dtype == KERN_DTYPE_INVALID)
      st = err_set(KERN_ERR_COMPILE,
                   "kernel '%s' parameter '%s' has type %s, which a launch cannot pass", k->name,
                   p->name, type_name(v->ty));
  }
  free(offs);
  return st;
}

static kern_status describe_kernels(kern_module *m) {
  Program *p = m->prog;
  m->kernels = calloc((size_t)p->nkernels + 1, sizeof *m->kernels);
  if (!m->kernels)
    return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading module '%s'", m->name);
  m->nkernels = p->nkernels;
  for (int i = 0; i < p->nkernels; i++) {
    kern_kernel *k = &m->kernels[i];
    k->module = m;
    k->decl = p->kernels[i];
    k->name = p->kernels[i]->name;
    k->index = i;
    k->grid = emit_kernel_uses_tid_dims(k->decl);
    k->elems = emit_kernel_elems(k->decl);
    k->tiled = k->decl->tiled;
    k->tile_bytes = k->decl->tile_total;
    if (k->tiled && !(k->tile_text = tile_usage_text(k->decl)))
      return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading module '%s'", m->name);
    k->rank = emit_kernel_tid_rank(k->decl);
    kern_status st = describe_params(k);
    if (st) return st;
  }
  return KERN_OK;
}

/* ---- loading -------------------------------------------------------------------- */

static _Atomic uint64_t next_module_id = 1;

static kern_module *module_fail(kern_module *m) {
  rt_module_destroy(m);
  return NULL;
}

/* Takes ownership of the front end's result. */
static kern_module *module_create(const char *name, FrontResult r) {
  if (!r.prog) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory compiling '%s'", name);
    return NULL;
  }
  if (!r.ok) {
    char *text = diag_render(r.prog->diags, false);
    err_text(KERN_ERR_COMPILE, "",
             text ? text : "compilation failed (out of memory rendering diagnostics)");
    free(text);
    front_free(r.prog);
    return NULL;
  }
  kern_module *m = calloc(1, sizeof *m);
  if (!m) {
    front_free(r.prog);
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading '%s'", name);
    return NULL;
  }
  m->prog = r.prog;
  m->id = atomic_fetch_add(&next_module_id, 1);
  m->debug = kern_get_debug();
  m->verify_fp = rt_config_get()->verify_fp;
  pthread_mutex_init(&m->source_mu, NULL);
  m->name = str_dup(name);
  m->diagnostics = r.prog->diags->nwarnings ? diag_render(r.prog->diags, false) : str_dup("");
  if (!m->name || !m->diagnostics) {
    err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory loading '%s'", name);
    return module_fail(m);
  }
  if (describe_kernels(m)) return module_fail(m);
  return m;
}

/* A module's warnings go to the log, so a program sees them without asking. */
static kern_module *announce(kern_module *m) {
  if (m && m->diagnostics[0]) err_log(KERN_LOG_WARNING, "%s", m->diagnostics);
  return m;
}

kern_module *kern_module_load(const char *path) {
  if (rt_ensure_init()) return NULL;
  if (!path) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_load: path is NULL");
    return NULL;
  }
  size_t len;
  char *file, *src = rt_module_read(path, &file, &len);
  if (!src) return NULL;
  kern_module *m = module_create(file, front_compile(file, src, len));
  free(src);
  free(file);
  return announce(m);
}

kern_module *kern_module_from_source(const char *name, const char *src) {
  if (rt_ensure_init()) return NULL;
  if (!src) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_from_source: src is NULL");
    return NULL;
  }
  if (!name) name = "<string>";
  return announce(module_create(name, front_compile(name, src, strlen(src))));
}

/* Imports of kern_module_from_sources: a spelling's key is the path of the
 * first entry with the same text, so two spellings of a file are one file. */
typedef struct Sources {
  int n;
  const kern_source *f;
} Sources;

static const char *read_source(void *ud, const char *path, size_t *len, const char **key) {
  const Sources *s = ud;
  for (int i = 0; i < s->n; i++) {
    if (strcmp(s->f[i].path, path) != 0) continue;
    int first = 0;
    while (s->f[first].text != s->f[i].text) first++;
    *key = s->f[first].path;
    *len = strlen(s->f[i].text);
    return s->f[i].text;
  }
  errno = ENOENT;
  return NULL;
}

kern_module *kern_module_from_sources(int nfiles, const kern_source *files) {
  if (rt_ensure_init()) return NULL;
  bool ok = nfiles >= 1 && files;
  for (int i = 0; ok && i < nfiles; i++) ok = files[i].path && files[i].text;
  if (!ok) {
    err_set(KERN_ERR_INVALID_ARGUMENT,
            "kern_module_from_sources: needs at least one file, each with a path and a text");
    return NULL;
  }
  Sources s = {nfiles, files};
  FrontReader reader = {read_source, &s};
  const char *root = files[0].text;
  return announce(
      module_create(files[0].path, front_compile_with(files[0].path, root, strlen(root), &reader)));
}

kern_module *rt_module_create(const char *name, FrontResult r) { return module_create(name, r); }

/* Embedded modules belong to the library (embedded.c frees them). */
void kern_module_free(kern_module *m) {
  if (m && !m->embedded) rt_module_destroy(m);
}

void rt_module_destroy(kern_module *m) {
  if (!m) return;
  for (int i = 0; i < RT_MAX_DEVICES; i++) {
    rt_code *c = atomic_load(&m->slots[i].code);
    kern_device *d = c ? rt_device_at(i) : NULL;
    if (d && d->ops->code_free) d->ops->code_free(c);
  }
  for (int i = 0; m->kernels && i < m->nkernels; i++) {
    free(m->kernels[i].params);
    free(m->kernels[i].tile_text);
  }
  free(m->kernels);
  if (m->prog) front_free(m->prog);
  pthread_mutex_destroy(&m->source_mu);
  free(m->c_source);
  free(m->diagnostics);
  free(m->name);
  free(m);
}

/* ---- lookups -------------------------------------------------------------------------- */

kern_kernel *kern_module_kernel(kern_module *m, const char *name) {
  if (!m || !name) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_kernel: %s is NULL", m ? "name" : "module");
    return NULL;
  }
  for (int i = 0; i < m->nkernels; i++)
    if (strcmp(m->kernels[i].name, name) == 0) return &m->kernels[i];
  Buf b = {0};
  for (int i = 0; i < m->nkernels; i++) buf_printf(&b, "%s'%s'", i ? ", " : "", m->kernels[i].name);
  if (m->nkernels)
    err_set(KERN_ERR_NOT_FOUND, "module '%s' has no kernel '%s' (its kernels: %s)", m->name, name,
            b.s ? b.s : "?");
  else
    err_set(KERN_ERR_NOT_FOUND, "module '%s' has no kernel '%s' (it has no kernels)", m->name,
            name);
  buf_free(&b);
  return NULL;
}

kern_dtype kern_module_dtype(kern_module *m, const char *name) {
  if (!m || !name) {
    err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_dtype: %s is NULL", m ? "name" : "module");
    return KERN_DTYPE_INVALID;
  }
  const Program *p = m->prog;
  for (int i = 0; i < p->nstructs; i++)
    if (p->structs[i]->name && strcmp(p->structs[i]->name, name) == 0) {
      kern_dtype dt = rt_dtype_of_type(p->structs[i]->sty);
      if (dt == KERN_DTYPE_INVALID)
        err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory registering struct '%s'", name);
      return dt;
    }
  err_set(KERN_ERR_NOT_FOUND, "module '%s' has no struct '%s'", m->name, name);
  return KERN_DTYPE_INVALID;
}

const char *kern_module_diagnostics(const kern_module *m) {
  return m && m->diagnostics ? m->diagnostics : "";
}
const char *kern_module_name(const kern_module *m) { return m ? m->name : ""; }

/* Has any code of the module been made (C source, or a device's code)? */
static bool compiled(kern_module *m) {
  pthread_mutex_lock(&m->source_mu);
  bool made = m->c_source != NULL;
  pthread_mutex_unlock(&m->source_mu);
  for (int i = 0; i < RT_MAX_DEVICES && !made; i++) made = atomic_load(&m->slots[i].code) != NULL;
  return made;
}

kern_status kern_module_set_fast_math(kern_module *m, bool on) {
  if (!m) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_set_fast_math: module is NULL");
  if (m->embedded)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "module '%s' was built by kernc build: its code is fixed (kernc build "
                   "--fast-math decides)",
                   m->name);
  if (on != m->fast_math && compiled(m))
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_module_set_fast_math: module '%s' is already compiled; set fast math "
                   "before its first launch",
                   m->name);
  m->fast_math = on;
  return KERN_OK;
}

bool kern_module_fast_math(const kern_module *m) { return m && m->fast_math; }

kern_status kern_module_set_verify_fp(kern_module *m, bool on) {
  if (!m) return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_set_verify_fp: module is NULL");
  if (m->embedded)
    return err_set(KERN_ERR_UNSUPPORTED,
                   "module '%s' was built by kernc build: its code is fixed (kernc build "
                   "--verify-fp decides)",
                   m->name);
  if (on != m->verify_fp && compiled(m))
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_module_set_verify_fp: module '%s' is already compiled; set verify_fp "
                   "before its first launch",
                   m->name);
  m->verify_fp = on;
  return KERN_OK;
}

bool kern_module_verify_fp(const kern_module *m) { return m && m->verify_fp; }

const char *rt_module_file(const kern_module *m, int index) {
  const Module *mod = m->prog->modules;
  for (int i = 0; mod && i < index; i++) mod = mod->next;
  return mod && mod->path ? mod->path : m->name;
}

/* ---- kernel introspection -------------------------------------------------------------- */

const char *kern_kernel_name(const kern_kernel *k) { return k ? k->name : ""; }
int kern_kernel_num_params(const kern_kernel *k) { return k ? k->nparams : 0; }

static const rt_param *param_at(const kern_kernel *k, int i) {
  return k && i >= 0 && i < k->nparams ? &k->params[i] : NULL;
}

const char *kern_kernel_param_name(const kern_kernel *k, int i) {
  const rt_param *p = param_at(k, i);
  return p ? p->name : NULL;
}

kern_dtype kern_kernel_param_dtype(const kern_kernel *k, int i) {
  const rt_param *p = param_at(k, i);
  return p ? p->dtype : KERN_DTYPE_INVALID;
}

int kern_kernel_param_ndim(const kern_kernel *k, int i) {
  const rt_param *p = param_at(k, i);
  return p ? p->ndim : -1;
}

bool kern_kernel_is_tiled(const kern_kernel *k) { return k && k->tiled; }

kern_status kern_kernel_set_tile_block(kern_kernel *k, int threads) {
  if (!k)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_kernel_set_tile_block: the kernel is NULL");
  if (threads != 0 && (threads < 32 || threads > 1024 || threads % 32))
    return err_set(KERN_ERR_INVALID_ARGUMENT,
                   "kern_kernel_set_tile_block: %d threads for kernel '%s'; use 0 (the default) "
                   "or a multiple of 32 from 32 to 1024",
                   threads, k->name);
  atomic_store(&k->tile_block, threads);
  return KERN_OK;
}

/* ---- per-device code ---------------------------------------------------------------------- */

/* Which slots are being compiled, and by which process. One lock for every
 * slot (first compiles are rare), held across fork(): in a child, a slot
 * still busy with another pid was being compiled by a thread of the parent
 * at the fork, which no longer exists to finish it. */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_cv = PTHREAD_COND_INITIALIZER;
FORK_GUARD(&slot_mu, &slot_cv, FORK_RANK_SLOTS)

/* Waits while another thread of this process compiles the slot; *mine when
 * the caller is now the one to compile it (no code yet). */
static kern_status slot_claim(const kern_module *m, const kern_device *d, rt_slot *s, bool *mine) {
  int me = (int)getpid();
  kern_status st = KERN_OK;
  pthread_mutex_lock(&slot_mu);
  while (s->busy == me) pthread_cond_wait(&slot_cv, &slot_mu);
  if (s->busy)
    st = err_set(KERN_ERR_UNSUPPORTED,
                 "module '%s' was being compiled for %s by another thread when this process was "
                 "forked, and that thread does not exist in the child: load the module again in "
                 "this process, or fork after its first launch on %s",
                 m->name, d->name, d->name);
  else if (!atomic_load_explicit(&s->code, memory_order_acquire))
    s->busy = me, *mine = true;
  pthread_mutex_unlock(&slot_mu);
  return st;
}

static void slot_release(rt_slot *s) {
  pthread_mutex_lock(&slot_mu);
  s->busy = 0;
  pthread_cond_broadcast(&slot_cv);
  pthread_mutex_unlock(&slot_mu);
}

/* The first launch's way: compiled once by the thread that claims the slot;
 * it logs it afterwards (the handler may call kern). */
static kern_status compile_once(kern_module *m, kern_device *d, rt_slot *s, rt_code **out) {
  static const char *const origin[] = {"compiled", "cached", "kernc build"};
  double t0 = proc_now_ms();
  rt_origin how = RT_ORIGIN_COMPILED;
  bool made = false, mine = false;
  kern_status st = slot_claim(m, d, s, &mine);
  rt_code *c = atomic_load_explicit(&s->code, memory_order_acquire);
  if (!st && mine) {
    if ((st = d->ops->compile(m, d, &c, &how)) == KERN_OK) {
      atomic_store_explicit(&s->code, c, memory_order_release);
      made = true;
    }
    slot_release(s);
  }
  *out = c;
  if (made)
    err_log(KERN_LOG_INFO, "module '%s' loaded on %s in %.2f ms (%s)", m->name, d->name,
            proc_now_ms() - t0, origin[how]);
  return st;
}

kern_status rt_module_code(kern_module *m, kern_device *d, rt_code **out) {
  rt_slot *s = &m->slots[d->index];
  rt_code *c = atomic_load_explicit(&s->code, memory_order_acquire);
  if (!c) return compile_once(m, d, s, out);
  *out = c;
  return KERN_OK;
}

/* ---- debug errors: what a record names ----------------------------------------------------------------------------- */

/* Bit k of unsigned_mask: v[k] is a uint64 index (2^64-1, not -1). */
static void list_i64(Buf *b, const int64_t *v, int n, int unsigned_mask) {
  buf_add(b, "[", 1);
  for (int i = 0; i < n; i++)
    if (unsigned_mask >> i & 1)
      buf_printf(b, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    else
      buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  buf_add(b, "]", 1);
}

/* The array a bounds record names (by the checker's number): a kernel's
 * parameter or local array, or a function's. */
static void describe_param(Buf *b, const kern_kernel *k, int id) {
  const Program *p = k->module->prog;
  const ArrayParam *ap = id >= 0 && id < p->narray_params ? &p->array_params[id] : NULL;
  const Var *v = ap ? ap->param : NULL;
  const Decl *owner = ap ? ap->owner : NULL;
  const char *what = v && !v->is_param ? "local array" : "parameter";
  if (!v)
    buf_printf(b, "an array");
  else if (owner == k->decl)
    buf_printf(b, "%s '%s'", what, v->name);
  else
    buf_printf(b, "%s '%s' of function '%s'", what, v->name,
               owner && owner->name ? owner->name : "?");
}

kern_status rt_debug_error(const kern_kernel *k, const kn_error *e) {
  const char *file = rt_module_file(k->module, e->file);
  const Program *p = k->module->prog;
  if (e->kind == KN_ERR_ASSERT && e->param >= 0 && e->param < p->nassert_msgs)
    return err_set(KERN_ERR_BOUNDS, "assertion failed in kernel '%s' at %s:%d (thread %lld): %s",
                   k->name, file, e->line, (long long)e->tid, p->assert_msgs[e->param]);
  if (e->kind == KN_ERR_ASSERT)
    return err_set(KERN_ERR_BOUNDS, "assertion failed in kernel '%s' at %s:%d (thread %lld)",
                   k->name, file, e->line, (long long)e->tid);
  int nd = e->ndim & 0xff, unsigned_mask = e->ndim >> 8 & 0xf; /* kern_abi.h */
  nd = nd < 1 ? 1 : nd > 4 ? 4 : nd;
  Buf b = {0};
  if (e->kind == KN_ERR_FP) {
    static const char *const what[4] = {"a non-finite value", "+inf", "-inf", "NaN"};
    buf_printf(&b, "non-finite value stored in kernel '%s' at %s:%d: %s at index ", k->name, file,
               e->line, what[e->shape[0] >= 1 && e->shape[0] <= 3 ? e->shape[0] : 0]);
    list_i64(&b, e->index, nd, unsigned_mask);
  } else {
    buf_printf(&b, "out-of-bounds access in kernel '%s' at %s:%d: index ", k->name, file, e->line);
    list_i64(&b, e->index, nd, unsigned_mask);
    buf_add(&b, " is outside shape ", 18);
    list_i64(&b, e->shape, nd, 0);
  }
  buf_add(&b, " (", 2);
  describe_param(&b, k, e->param);
  buf_printf(&b, ", thread %lld)", (long long)e->tid);
  kern_status st = err_text(KERN_ERR_BOUNDS, "", b.s ? b.s : "out-of-bounds access");
  buf_free(&b);
  return st;
}
