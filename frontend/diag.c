/* diag.c: collects compiler diagnostics and renders them clang-style.
 *
 * Requires: SrcLoc.src to be the NUL-terminated buffer the offsets point
 * into (or NULL, then no source line is shown). Produces: a list of
 * diagnostics in report order, and their text on request. Breaks: after
 * max_errors errors nothing more is recorded (like clang's -ferror-limit),
 * so a cascade stays bounded; the error count keeps counting.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "str.h"

enum { DIAG_DEFAULT_MAX_ERRORS = 100 };

void diags_init(Diags *d) { memset(d, 0, sizeof *d); }

void diags_free(Diags *d) {
  if (!d) return;
  for (Diag *g = d->head, *next; g; g = next) {
    next = g->next;
    free(g->msg);
    free(g);
  }
  d->head = d->tail = NULL;
}

static int max_errors(const Diags *d) {
  return d->max_errors > 0 ? d->max_errors : DIAG_DEFAULT_MAX_ERRORS;
}

void diag_at(Diags *d, DiagLevel level, SrcLoc loc, const char *fmt, ...) {
  if (level == DIAG_ERROR)
    d->nerrors++;
  else if (level == DIAG_WARNING)
    d->nwarnings++;
  if (d->truncated) return;
  if (level == DIAG_ERROR && d->nerrors > max_errors(d)) {
    d->truncated = true;
    return;
  }
  Diag *g = calloc(1, sizeof *g);
  if (!g) return;
  va_list ap;
  va_start(ap, fmt);
  g->msg = str_vprintf(fmt, ap);
  va_end(ap);
  g->level = level;
  g->loc = loc;
  if (d->tail)
    d->tail->next = g;
  else
    d->head = g;
  d->tail = g;
  if (level != DIAG_NOTE && d->context) { /* its notes are not errors: no loop */
    void (*context)(void *) = d->context;
    d->context = NULL;
    context(d->context_ud);
    d->context = context;
  }
}

int diag_errors(const Diags *d) { return d->nerrors; }

SrcLoc loc_span(SrcLoc a, SrcLoc b) {
  if (!a.file && !a.src) return b;
  if (!b.file && !b.src) return a;
  unsigned end = b.offset + b.len;
  if (a.offset + a.len > end) end = a.offset + a.len;
  if (end > a.offset) a.len = end - a.offset;
  return a;
}

/* ---- rendering ----------------------------------------------------------- */

#define C_RESET   "\033[0m"
#define C_BOLD    "\033[1m"
#define C_RED     "\033[1;31m"
#define C_MAGENTA "\033[1;35m"
#define C_CYAN    "\033[1;36m"
#define C_GREEN   "\033[1;32m"

static void render_level(Buf *b, DiagLevel level, bool color) {
  static const char *names[] = {"error: ", "warning: ", "note: "};
  static const char *colors[] = {C_RED, C_MAGENTA, C_CYAN};
  if (color) buf_puts(b, colors[level]);
  buf_puts(b, names[level]);
  if (color) buf_puts(b, C_RESET C_BOLD);
}

/* UTF-8 continuation bytes take no column of their own on a terminal. */
static bool is_cont(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

enum { DIAG_LINE_MAX = 512, DIAG_CONTEXT = 64 };

/* The source line holding loc, then a caret line: tabs are kept so the
 * caret lines up with the source whatever the tab width. A very long line
 * (a 1 MB identifier, minified input) is shown as a window around loc. */
static void render_source(Buf *b, SrcLoc loc, bool color) {
  const char *pos = loc.src + loc.offset;
  const char *start = pos, *end = pos;
  while (start > loc.src && start[-1] != '\n') start--;
  while (*end && *end != '\n') end++;
  if (end > start && end[-1] == '\r') end--;
  bool cut_left = false, cut_right = false;
  if (pos - start > DIAG_CONTEXT && end - start > DIAG_LINE_MAX) {
    start = pos - DIAG_CONTEXT;
    while (start < pos && is_cont(*start)) start++;
    cut_left = true;
  }
  if (end - start > DIAG_LINE_MAX) {
    end = start + DIAG_LINE_MAX;
    while (end > pos + 1 && is_cont(*end)) end--;
    cut_right = true;
  }
  if (end < pos) end = pos;
  buf_puts(b, cut_left ? "..." : "");
  buf_add(b, start, (size_t)(end - start));
  buf_puts(b, cut_right ? "...\n" : "\n");
  buf_puts(b, cut_left ? "   " : "");
  for (const char *p = start; p < pos; p++)
    if (!is_cont(*p)) buf_add(b, *p == '\t' ? "\t" : " ", 1);
  if (color) buf_puts(b, C_GREEN);
  buf_puts(b, "^");
  for (const char *p = pos + 1; p < pos + loc.len && p < end; p++)
    if (!is_cont(*p)) buf_puts(b, "~");
  if (color) buf_puts(b, C_RESET);
  buf_puts(b, "\n");
}

static void render_one(Buf *b, const Diag *g, bool color) {
  if (color) buf_puts(b, C_BOLD);
  if (g->loc.file)
    buf_printf(b, "%s:%d:%d: ", g->loc.file, g->loc.line, g->loc.col);
  else
    buf_puts(b, "kern: ");
  render_level(b, g->level, color);
  buf_puts(b, g->msg ? g->msg : "(out of memory)");
  if (color) buf_puts(b, C_RESET);
  buf_puts(b, "\n");
  if (g->loc.file && g->loc.src) render_source(b, g->loc, color);
}

char *diag_render(const Diags *d, bool color) {
  Buf b = {0};
  buf_puts(&b, "");
  for (const Diag *g = d->head; g; g = g->next) render_one(&b, g, color);
  if (d->truncated) {
    if (color) buf_puts(&b, C_RED);
    buf_puts(&b, "error: ");
    if (color) buf_puts(&b, C_RESET C_BOLD);
    buf_printf(&b, "too many errors; stopping after %d", max_errors(d));
    if (color) buf_puts(&b, C_RESET);
    buf_puts(&b, "\n");
  }
  if (b.oom) {
    free(b.s);
    return NULL;
  }
  return b.s;
}
