/* check_suggest.c: "did you mean" for unknown names and fields.
 *
 * Requires: the checker's scopes and globals, the builtin table. Produces:
 * ck_suggest, ck_suggest_field. Breaks: nothing; a suggestion is the closest
 * name by edit distance within a quarter of the name's length, and none is
 * made once an input has many errors.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- did you mean --------------------------------------------------------- */

static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 40 || lb > 40) return 99;
  int row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

typedef struct Suggest {
  const char *name;
  const char *best;
  int dist;
} Suggest;

static void suggest_try(Suggest *s, const char *cand) {
  if (!cand || strcmp(cand, s->name) == 0) return;
  int d = edit_distance(s->name, cand);
  int limit = ((int)strlen(s->name) + 2) / 4; /* 1 for 2..5 bytes, 2 for 6..9 ... */
  if (d <= limit && d < s->dist) {
    s->dist = d;
    s->best = cand;
  }
}

/* values: locals in scope and consts; functions: user and builtin functions */
const char *ck_suggest(Check *c, const char *name, bool functions) {
  Suggest s = {.name = name, .dist = 99};
  if (diag_errors(c->diags) > 50) return NULL;
  if (!functions)
    for (int i = 0; i < c->nundo; i++) suggest_try(&s, c->undo[i]->var->name);
  for (size_t i = 0; i < c->globals.cap; i++) {
    Sym *sym = c->globals.slots[i].val;
    if (!sym) continue;
    DeclKind k = sym->decl->kind;
    if (functions ? k == DECL_FUNC || k == DECL_STRUCT : k == DECL_CONST)
      suggest_try(&s, sym->decl->name);
  }
  if (functions)
    for (int i = 0; i < builtin_count(); i++)
      if (strncmp(builtin_get(i)->name, "op", 2) != 0) suggest_try(&s, builtin_get(i)->name);
  return s.best;
}

/* The field of struct s closest to name. */
const char *ck_suggest_field(const Decl *s, const char *name) {
  Suggest sg = {.name = name, .dist = 99};
  for (int i = 0; i < s->nfields; i++) suggest_try(&sg, s->fields[i].name);
  return sg.best;
}
