/* diag.h: source locations and the one place every compiler diagnostic goes.
 *
 * Diagnostics are collected, never printed directly and never fatal: every pass
 * keeps going and the caller asks diag_errors() at the end. diag_render() makes
 * the clang-style text: `file:line:col: error: message`, the source line, a caret
 * (with ~ under the rest of the range), and any notes.
 */
#ifndef KERN_DIAG_H
#define KERN_DIAG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct SrcLoc {
  const char *file; /* path as given; NULL for "no location" */
  const char *src;  /* the whole source buffer, for printing the line */
  int line, col;    /* 1-based; col counts bytes */
  unsigned offset;  /* byte offset of the first character */
  unsigned len;     /* bytes covered (>= 1 for carets) */
} SrcLoc;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
  DiagLevel level;
  SrcLoc loc;
  char *msg;
  struct Diag *next;
} Diag;

typedef struct Diags {
  Diag *head, *tail;
  int nerrors, nwarnings;
  int max_errors; /* stop recording (not checking) past this many; 0 = default 100 */
  bool truncated; /* more errors than max_errors were reported */
  /* Called after each error or warning is recorded, to add notes about where
   * it was found (the checker names the instance of a generic function). */
  void (*context)(void *ud);
  void *context_ud;
} Diags;

void diags_init(Diags *);
void diags_free(Diags *);
/* Records a diagnostic; a NOTE attaches to the diagnostic before it. */
void diag_at(Diags *, DiagLevel, SrcLoc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define diag_error(d, loc, ...)   diag_at((d), DIAG_ERROR, (loc), __VA_ARGS__)
#define diag_warning(d, loc, ...) diag_at((d), DIAG_WARNING, (loc), __VA_ARGS__)
#define diag_note(d, loc, ...)    diag_at((d), DIAG_NOTE, (loc), __VA_ARGS__)
int diag_errors(const Diags *);
/* The rendered text of every diagnostic; malloc'd, caller frees. color: ANSI colours. */
char *diag_render(const Diags *, bool color);
/* A location spanning from a to the end of b. */
SrcLoc loc_span(SrcLoc a, SrcLoc b);

#endif
