/* front.c: the compiler driver: lex -> parse -> imports -> check -> limits.
 *
 * Requires: a root file name (and optionally its text). Produces: a Program
 * whose modules are listed dependencies first, each file parsed once, checked.
 * Import paths are relative to the importing file's directory (absolute paths
 * and ".." are followed as written, as C's #include does); an empty path, a
 * NUL byte in it, a missing file, one that is not a regular file (a FIFO, a
 * device, a directory) or a cycle is an error at the import declaration.
 * Owns the arena and the diagnostics until front_free.
 */
#include "front.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file.h"

enum { MAX_SOURCE_BYTES = 256 << 20, MAX_IMPORT_DEPTH = 64 };

typedef enum { UNSEEN, VISITING, DONE } VisitState;

/* One file known to this compilation, keyed by its canonical path. */
typedef struct Unit {
  char *key; /* realpath, or the name for sources given as text */
  Module *mod;
  VisitState state;
  struct Unit *next;
} Unit;

typedef struct Loader {
  Program *prog;
  const FrontReader *reader; /* NULL: imports come from the file system */
  Unit *units;
  Module *last; /* tail of prog->modules */
} Loader;

char *front_read_file(const char *path, size_t *len) {
  return file_read(path, MAX_SOURCE_BYTES, len);
}

static Unit *unit_find(Loader *L, const char *key) {
  for (Unit *u = L->units; u; u = u->next)
    if (strcmp(u->key, key) == 0) return u;
  return NULL;
}

/* An import of a file already seen: its module, or NULL after a diagnostic
 * when the file is still being loaded (an import cycle). */
static Module *unit_module(Loader *L, Unit *u, Decl *imp) {
  if (u->state != VISITING) return u->mod;
  diag_error(L->prog->diags, imp->loc, "import cycle: '%s' imports itself (directly or indirectly)",
             imp->path);
  return NULL;
}

static Unit *unit_add(Loader *L, const char *key) {
  Unit *u = arena_alloc(L->prog->arena, sizeof *u);
  if (!u) return NULL;
  u->key = arena_strdup(L->prog->arena, key);
  u->next = L->units;
  L->units = u;
  return u;
}

static void append_module(Loader *L, Module *m) {
  if (L->last)
    L->last->next = m;
  else
    L->prog->modules = m;
  L->last = m;
}

/* "dir/of/importer.kern" + "x.kern" -> "dir/of/x.kern"; absolute paths stay. */
static char *join_relative(Arena *a, const char *from, const char *rel) {
  char *joined = front_import_path(from, rel);
  char *s = joined ? arena_strdup(a, joined) : NULL;
  free(joined);
  return s;
}

static void load_imports(Loader *L, Module *m, int depth);

/* Parses one file's text and follows its imports, then lists it (post-order). */
static Module *load_text(Loader *L, Unit *u, const char *path, const char *src, size_t len,
                         int depth) {
  Program *p = L->prog;
  Module *m = parse_module(p->arena, p->diags, path, src, len);
  if (!m) return NULL;
  u->mod = m;
  u->state = VISITING;
  load_imports(L, m, depth);
  u->state = DONE;
  append_module(L, m);
  return m;
}

/* Imports through the reader: it names the file's key along with its text. */
static Module *load_embedded(Loader *L, Decl *imp, const char *path, int depth) {
  Program *p = L->prog;
  size_t len = 0;
  const char *key = NULL;
  const char *text = L->reader->read(L->reader->ud, path, &len, &key);
  if (!text || !key) {
    diag_error(p->diags, imp->loc, "cannot read imported file '%s': %s", path, strerror(errno));
    return NULL;
  }
  Unit *u = unit_find(L, key);
  if (u) return unit_module(L, u, imp);
  char *src = arena_strndup(p->arena, text, len);
  u = unit_add(L, key);
  return src && u ? load_text(L, u, arena_strdup(p->arena, path), src, len, depth) : NULL;
}

/* The text of an imported file (malloc'd); NULL after a diagnostic. A FIFO
 * or a device could block or never end, so only regular files are read. */
static char *read_import(Loader *L, Decl *imp, const char *path, size_t *len) {
  char *text = front_read_file(path, len);
  if (!text && errno == FILE_ENOTREG)
    diag_error(L->prog->diags, imp->loc, "imported file '%s' is not a regular file", path);
  else if (!text)
    diag_error(L->prog->diags, imp->loc, "cannot read imported file '%s': %s", path,
               strerror(errno));
  return text;
}

static Module *load_file(Loader *L, Decl *imp, const char *path, int depth) {
  Program *p = L->prog;
  if (L->reader) return load_embedded(L, imp, path, depth);
  char canon[PATH_MAX];
  const char *key = realpath(path, canon) ? canon : path;
  Unit *u = unit_find(L, key);
  if (u) return unit_module(L, u, imp);
  size_t len;
  char *text = read_import(L, imp, path, &len);
  if (!text) return NULL;
  char *src = arena_strndup(p->arena, text, len);
  free(text);
  u = unit_add(L, key);
  return src && u ? load_text(L, u, arena_strdup(p->arena, path), src, len, depth) : NULL;
}

static void load_import(Loader *L, Module *from, Decl *imp, int depth) {
  Program *p = L->prog;
  if (!imp->path || !imp->path[0]) {
    diag_error(p->diags, imp->loc, "import path is empty");
    return;
  }
  if (strlen(imp->path) != imp->path_len) {
    diag_error(p->diags, imp->loc, "import path contains a NUL byte");
    return;
  }
  if (depth >= MAX_IMPORT_DEPTH) {
    diag_error(p->diags, imp->loc, "imports nest too deeply (limit %d)", MAX_IMPORT_DEPTH);
    return;
  }
  imp->imported = load_file(L, imp, join_relative(p->arena, from->path, imp->path), depth + 1);
}

static void load_imports(Loader *L, Module *m, int depth) {
  for (Decl *d = m->decls; d; d = d->next)
    if (d->kind == DECL_IMPORT) load_import(L, m, d, depth);
}

static Program *program_new(void) {
  Arena *a = arena_new();
  if (!a) return NULL;
  Program *p = arena_alloc(a, sizeof *p);
  Diags *d = arena_alloc(a, sizeof *d);
  if (!p || !d) {
    arena_free(a);
    return NULL;
  }
  diags_init(d);
  p->arena = a;
  p->diags = d;
  return p;
}

/* Loads the root: the given text, or the file at path. */
static Module *load_root(Loader *L, const char *path, const char *src, size_t len) {
  Program *p = L->prog;
  char *owned = NULL;
  if (!src) {
    owned = front_read_file(path, &len);
    if (!owned) {
      SrcLoc none = {0};
      diag_error(p->diags, none, "cannot read '%s': %s", path, file_strerror(errno));
      return NULL;
    }
    src = owned;
  }
  char canon[PATH_MAX];
  const char *key = owned && realpath(path, canon) ? canon : path;
  char *copy = arena_strndup(p->arena, src, len);
  free(owned);
  Unit *u = unit_add(L, key);
  return copy && u ? load_text(L, u, arena_strdup(p->arena, path), copy, len, 0) : NULL;
}

FrontResult front_compile(const char *path, const char *src, size_t len) {
  return front_compile_with(path, src, len, NULL);
}

char *front_import_path(const char *from, const char *rel) {
  const char *slash = strrchr(from, '/');
  size_t n = rel[0] == '/' || !slash ? 0 : (size_t)(slash - from) + 1;
  char *s = malloc(n + strlen(rel) + 1);
  if (s) {
    memcpy(s, from, n);
    strcpy(s + n, rel);
  }
  return s;
}

FrontResult front_compile_with(const char *path, const char *src, size_t len,
                               const FrontReader *reader) {
  FrontResult r = {0};
  r.prog = program_new();
  if (!r.prog) return r;
  Loader L = {.prog = r.prog, .reader = reader};
  r.prog->root = load_root(&L, path ? path : "<string>", src, len);
  if (r.prog->root && diag_errors(r.prog->diags) == 0 && check_program(r.prog))
    check_limits(r.prog);
  r.ok = r.prog->root && diag_errors(r.prog->diags) == 0;
  return r;
}

void front_free(Program *p) {
  if (!p) return;
  diags_free(p->diags);
  arena_free(p->arena);
}
