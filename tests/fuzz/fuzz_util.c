/* fuzz_util.c: what the libFuzzer targets share (see fuzz_util.h).
 *
 * Requires: the front end (front_compile_with, parser, diagnostics).
 * Produces: source buffers, virtual files for imports, import screening for
 * the API target, invariant checks. Breaks: a failed invariant traps, on
 * purpose, so the fuzzer keeps the input that broke it.
 */
#include "fuzz_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *fz_source(const uint8_t *data, size_t size) {
  char *src = malloc(size + 1);
  if (!src) return NULL;
  if (size) memcpy(src, data, size);
  src[size] = 0;
  return src;
}

const char *fz_root_path(void) { return KERN_TESTS_DIR "/kern/ok/fuzz.kern"; }

/* A fuzzed import must not reach /dev/zero, /proc or a FIFO: only plain
 * relative names below the fixture directory pass. */
static bool path_safe(const char *p, size_t len) {
  if (!p || len == 0 || len > 200 || strlen(p) != len || p[0] == '/' || strstr(p, ".."))
    return false;
  for (size_t i = 0; i < len; i++) {
    char c = p[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

bool fz_scan(FzScan *s, const char *src, size_t len) {
  memset(s, 0, sizeof *s);
  s->arena = arena_new();
  if (!s->arena) return false;
  diags_init(&s->diags);
  s->mod = parse_module(s->arena, &s->diags, "fuzz.kern", src, len);
  if (!s->mod) {
    fz_scan_free(s);
    return false;
  }
  s->imports_safe = true;
  for (Decl *d = s->mod->decls; d; d = d->next)
    if (d->kind == DECL_IMPORT && !path_safe(d->path, d->path_len)) s->imports_safe = false;
  return true;
}

typedef struct Input {
  const char *src;
  size_t len;
} Input;

static const char MARK[] = "//@file ";
enum { MARK_LEN = sizeof MARK - 1 };

/* The next marker line at or after `from`, or NULL. */
static const char *next_mark(const Input *in, const char *from) {
  const char *end = in->src + in->len;
  while (from < end) {
    const char *m = memmem(from, (size_t)(end - from), MARK, MARK_LEN);
    if (!m || m == in->src || m[-1] == '\n') return m;
    from = m + 1;
  }
  return NULL;
}

static const char *read_virtual(void *ud, const char *path, size_t *len, const char **key) {
  const Input *in = ud;
  size_t plen = strlen(path);
  const char *end = in->src + in->len;
  for (const char *m = next_mark(in, in->src); m; m = next_mark(in, m + 1)) {
    const char *name = m + MARK_LEN;
    if ((size_t)(end - name) <= plen || memcmp(name, path, plen) != 0 || name[plen] != '\n')
      continue;
    const char *text = name + plen + 1, *stop = next_mark(in, text);
    *len = (size_t)((stop ? stop : end) - text);
    *key = path;
    return text;
  }
  errno = ENOENT;
  return NULL;
}

FrontResult fz_compile(const char *src, size_t len) {
  Input in = {src, len};
  FrontReader reader = {read_virtual, &in};
  /* The root ends where the first virtual file starts (front_compile copies
   * the text it is given, so no NUL is needed there). */
  const char *first = next_mark(&in, src);
  return front_compile_with("fuzz.kern", src, first ? (size_t)(first - src) : len, &reader);
}

void fz_scan_free(FzScan *s) {
  diags_free(&s->diags);
  arena_free(s->arena);
  s->arena = NULL;
}

/* Offsets where each line of m starts (malloc'd; *n lines), so checking 100
 * diagnostics costs one pass over the text, not one per diagnostic. */
static size_t *line_starts(const Module *m, size_t *n) {
  size_t cap = 64;
  size_t *v = malloc(cap * sizeof *v);
  *n = 0;
  if (!v) return NULL;
  v[(*n)++] = 0;
  for (size_t i = 0; i < m->src_len; i++) {
    if (m->src[i] != '\n') continue;
    if (*n == cap) {
      size_t *w = realloc(v, (cap *= 2) * sizeof *v);
      if (!w) {
        free(v);
        return NULL;
      }
      v = w;
    }
    v[(*n)++] = i + 1;
  }
  return v;
}

/* Line and column are 1-based and count bytes, so both follow from the offset. */
static void check_loc(const Module *m, const size_t *starts, size_t nlines, SrcLoc loc) {
  if (loc.offset > m->src_len || loc.offset + (size_t)loc.len > m->src_len + 1) __builtin_trap();
  if (loc.line < 1 || (size_t)loc.line > nlines) __builtin_trap();
  size_t bol = starts[loc.line - 1];
  bool last = (size_t)loc.line == nlines;
  if (loc.offset < bol || (!last && loc.offset >= starts[loc.line])) __builtin_trap();
  if (loc.col != (int)(loc.offset - bol) + 1) __builtin_trap();
}

static void check_module_locs(const Diags *d, const Module *m) {
  size_t n = 0, *starts = NULL;
  for (const Diag *g = d->head; g; g = g->next) {
    if (!g->loc.src || g->loc.src != m->src) continue;
    if (!starts && !(starts = line_starts(m, &n))) return;
    check_loc(m, starts, n, g->loc);
  }
  free(starts);
}

void fz_check_front(FrontResult r) {
  if (!r.prog) return;
  const Diags *d = r.prog->diags;
  if (r.ok != (r.prog->root && diag_errors(d) == 0)) __builtin_trap();
  /* The root is given as text, so only running out of memory loses it. */
  if (!r.prog->root) __builtin_trap();
  for (const Module *m = r.prog->modules; m; m = m->next) check_module_locs(d, m);
}
