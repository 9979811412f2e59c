/* progen_check.c: the checks of tiled programs: reductions and scans against
 * the order docs/language.md documents.
 *
 * Requires: progen_tile.c (tile values, the kernel's state), progen.c (the
 * output and the random stream), through progen_internal.h. Produces:
 * pg_check_stmt. A check takes a small tile (up to CHECK_LEN elements along
 * what it reduces), reduces or scans it with a tile operation (tile_sum,
 * tile_min, tile_max, tile_argmin, tile_argmax, tile_reduce with a function,
 * min or max, whole or along an axis; tile_scan_inclusive and
 * tile_scan_exclusive, of sums or with a function and an initial value) and
 * writes the same out in scalar code: the pairwise tree over [0, 2^K) (a
 * node whose right half starts at or past n is its left half), and for a
 * scan element i the fold of the tree nodes of the blocks the binary digits
 * of i name. A difference in the bits (any NaN equals any NaN) adds one to
 * the kernel's chk[check], which the test requires to stay zero: an oracle
 * that does not depend on a second device or compiler.
 */
#include <stdio.h>

#include "progen_internal.h"

enum {
  MAX_CHECKS = PROGEN_CHECKS,
  CHECK_LEN = 16 /* the longest reduction a check writes out */
};

/* A check writes a reduction or a scan of a small tile out in scalar code, in the order
 * docs/language.md documents (the pairwise tree; a scan's blocks), and counts a difference in
 * the bits (NaN equals NaN) in chk[check]: an oracle that does not depend on a second device. */
typedef enum { C_SUM, C_MINB, C_MAXB, C_MINC, C_MAXC, C_FN, C_ARGMIN, C_ARGMAX } Comb;

typedef struct Ref {
  const char *tile; /* the variable reduced */
  TTy w;
  int axis, lane; /* -1: the whole tile (row-major); else along axis, lane o of the other */
  Comb comb;
  const char *fn; /* C_FN: the function (a generated one, or min or max) */
} Ref;

/* Element k of what R reduces, into out. */
static void ref_elem(const Ref *R, int k, char *out, size_t cap) {
  if (R->w.rank == 1)
    snprintf(out, cap, "%s[%d]", R->tile, k);
  else if (R->axis < 0)
    snprintf(out, cap, "%s[%d, %d]", R->tile, k / R->w.d[1], k % R->w.d[1]);
  else if (R->axis == 1)
    snprintf(out, cap, "%s[%d, %d]", R->tile, R->lane, k);
  else
    snprintf(out, cap, "%s[%d, %d]", R->tile, k, R->lane);
}

/* T qN = op(l, r); (and the index for an arg reduction): out gets qN. */
static void ref_combine(Gen *g, const Ref *R, const char *l, const char *li, const char *r,
                        const char *ri, char *out, char *iout) {
  static const char *const ops[] = {"", "min", "max", "<", ">", "", "<", ">"};
  char q[NAME];
  pg_fresh(g, q, "q");
  pg_indent(g);
  pg_put(g, "%s %s = ", pg_tname(g, R->w.elem), q);
  if (R->comb == C_SUM)
    pg_put(g, "(%s + %s);\n", l, r);
  else if (R->comb == C_MINB || R->comb == C_MAXB)
    pg_put(g, "%s(%s, %s);\n", ops[R->comb], l, r);
  else if (R->comb == C_FN)
    pg_put(g, "%s(%s, %s);\n", R->fn, l, r);
  else /* the right one when strictly less (greater) */
    pg_put(g, "((%s %s %s) ? %s : %s);\n", r, ops[R->comb], l, r, l);
  if (R->comb == C_ARGMIN || R->comb == C_ARGMAX) {
    snprintf(iout, NAME, "%si", q);
    pg_indent(g);
    pg_put(g, "int %s = ((%s %s %s) ? %s : %s);\n", iout, r, ops[R->comb], l, ri, li);
  }
  snprintf(out, NAME, "%s", q);
}

/* The tree node over [lo, lo + size) (size a power of two): a node whose right half starts at
 * or past n is its left half. out: its value (an element or a variable), iout its index. */
static void ref_node(Gen *g, const Ref *R, int n, int lo, int size, char *out, char *iout) {
  if (size == 1) {
    ref_elem(R, lo, out, 2 * NAME);
    snprintf(iout, NAME, "%d", lo);
    return;
  }
  char l[2 * NAME], li[NAME], r[2 * NAME], ri[NAME];
  ref_node(g, R, n, lo, size / 2, l, li);
  if (lo + size / 2 >= n) {
    snprintf(out, 2 * NAME, "%s", l);
    snprintf(iout, NAME, "%s", li);
    return;
  }
  ref_node(g, R, n, lo + size / 2, size / 2, r, ri);
  ref_combine(g, R, l, li, r, ri, out, iout);
}

static int ref_count(const Ref *R) { return R->axis < 0 ? (int)pg_count(R->w) : R->w.d[R->axis]; }

/* Element i of a scan of R's 1-D tile: the fold of the blocks i's binary digits name, from
 * init (or nothing); then, inclusive, that and element i. */
static void ref_scan(Gen *g, const Ref *R, int i, bool incl, const char *init, char *out) {
  char acc[2 * NAME] = "", node[2 * NAME], idx[NAME], e[2 * NAME];
  if (init) snprintf(acc, sizeof acc, "%s", init);
  for (int j = 4, start = 0; j >= 0; j--) {
    if (!(i >> j & 1)) continue;
    ref_node(g, R, ref_count(R), start, 1 << j, node, idx);
    if (acc[0])
      ref_combine(g, R, acc, "", node, "", acc, idx);
    else
      snprintf(acc, sizeof acc, "%s", node);
    start += 1 << j;
  }
  ref_elem(R, i, e, sizeof e);
  if (incl && acc[0])
    ref_combine(g, R, acc, "", e, "", out, idx);
  else if (incl)
    snprintf(out, 2 * NAME, "%s", e);
  else if (acc[0])
    snprintf(out, 2 * NAME, "%s", acc);
  else
    snprintf(out, 2 * NAME, "%s(0)", pg_ti(R->w.elem)->name);
}

/* if (value and reference differ) { atomic_add(&chk[check], 1); } */
static void ref_verdict(Gen *g, Ty t, const char *v, const char *ref) {
  pg_indent(g);
  if (pg_is_float(t)) {
    const char *bits = pg_is_half(t) ? "int16" : t == T_F32 ? "int32" : "int64";
    pg_put(g, "if (!(bitcast_%s(%s) == bitcast_%s(%s) || (%s != %s && %s != %s))) {\n", bits, v,
           bits, ref, v, v, ref, ref);
  } else
    pg_put(g, "if (%s != %s) {\n", v, ref);
  pg_indent(g);
  pg_put(g, "    atomic_add(&chk[%d], 1);\n", g->tile->checks++);
  pg_indent(g);
  pg_put(g, "}\n");
}

/* The combination a check reduces or scans with, for elements of type t. */
static Comb check_comb(Gen *g, Ty t, bool scan, const char **fn) {
  *fn = NULL;
  int r = pg_rnd(g, 100);
  if (r < 30 || (!scan && r < 35)) return C_SUM;
  if (r < 55 && (*fn = pg_combiner(g, t, true))) return C_FN;
  if (scan) return C_SUM;
  if (r < 70)
    return pg_ordered(t) ? (pg_chance(g, 50) ? C_MINB : C_MAXB)
                         : (pg_chance(g, 50) ? C_MINC : C_MAXC);
  return pg_chance(g, 50) ? C_ARGMIN : C_ARGMAX;
}

/* The call a check makes: tile_sum(t), tile_reduce(f, t, axis), tile_scan_exclusive(f, t, init). */
static void check_call(Gen *g, const Ref *R, int scan, const char *init) {
  static const char *const names[] = {"sum", "min",    "max",    "min",
                                      "max", "reduce", "argmin", "argmax"};
  if (scan)
    pg_put(g, "tile_scan_%s(", scan == 1 ? "inclusive" : "exclusive");
  else
    pg_put(g, "tile_%s(", names[R->comb]);
  if (R->comb == C_FN) pg_put(g, "%s, ", R->fn);
  pg_put(g, "%s", R->tile);
  if (init) pg_put(g, ", %s", init);
  if (R->axis >= 0) pg_put(g, ", %d", R->axis);
  pg_put(g, ")");
}

/* A small tile (a variable of the kernel's, or a new one), its reduction or scan, and the
 * same written out. */
void pg_check_stmt(Gen *g) {
  PgTile *T = g->tile;
  Ty t = T->elem[pg_rnd(g, 2)];
  if (T->checks >= MAX_CHECKS || !pg_numeric(t)) {
    pg_sdecl(g);
    return;
  }
  TTy w = pg_family_shape(g, t);
  int scan = w.rank == 1 && pg_chance(g, 40) ? 1 + pg_rnd(g, 2) : 0; /* inclusive, exclusive */
  Ref R = {.w = w, .axis = w.rank == 2 && !scan && pg_chance(g, 50) ? pg_rnd(g, 2) : -1};
  if ((R.axis < 0 ? pg_count(w) : w.d[R.axis]) > CHECK_LEN) { /* a small one instead */
    w = pg_chance(g, 60) ? pg_tty(t, 1, 1 + pg_rnd(g, CHECK_LEN), 1)
                         : pg_tty(t, 2, 1 + pg_rnd(g, 4), 1 + pg_rnd(g, 4));
    R.w = w;
    if (w.rank == 1) R.axis = -1;
  }
  if (scan && w.rank != 1) scan = 0;
  R.lane = R.axis < 0 ? 0 : pg_rnd(g, w.d[1 - R.axis]);
  R.comb = check_comb(g, t, scan, &R.fn);
  bool arg = R.comb == C_ARGMIN || R.comb == C_ARGMAX;
  const Var *v = pg_chance(g, 50) ? pg_find_tile(g, w) : NULL;
  char name[NAME], res[NAME], ref[2 * NAME], idx[NAME], init[NAME] = "";
  if (!v) {
    pg_tdecl(g, w);
    v = &g->vars[g->nvars - 1];
  }
  snprintf(name, NAME, "%s", v->name);
  R.tile = name;
  if (scan == 2 && R.comb == C_FN) { /* the initial value, once for both */
    pg_fresh(g, init, "q");
    pg_indent(g);
    pg_put(g, "%s %s = ", pg_tname(g, t), init);
    pg_scalar_for(g, t, 1, 0);
    pg_put(g, ";\n");
  }
  const char *iv = init[0] ? init : NULL;
  pg_fresh(g, res, "q");
  pg_indent(g);
  if (scan || R.axis >= 0) { /* a tile result: one element of it */
    TTy rt = scan ? w : pg_tty(arg ? T_I32 : t, 1, w.d[1 - R.axis], 1);
    int at = scan ? pg_rnd(g, w.d[0]) : R.lane;
    pg_put_tty(g, rt);
    pg_put(g, " %st = ", res);
    check_call(g, &R, scan, iv);
    pg_put(g, ";\n");
    pg_indent(g);
    pg_put(g, "%s %s = %st[%d];\n", pg_tname(g, rt.elem), res, res, at);
    pg_spend(g, scan ? 2 * pg_bytes(w) + pg_scan_scratch(w) : 2 * pg_bytes(rt) + pg_bytes(w));
    if (scan) ref_scan(g, &R, at, scan == 1, iv, ref);
  } else {
    pg_put(g, "%s %s = ", arg ? "int" : pg_tname(g, t), res);
    check_call(g, &R, 0, NULL);
    pg_put(g, ";\n");
    pg_spend(g, pg_bytes(w));
  }
  if (arg) pg_spend(g, 4 * pg_count(w));
  if (!scan) {
    int n = ref_count(&R), size = 1;
    while (size < n) size *= 2;
    ref_node(g, &R, n, 0, size, ref, idx);
    if (arg) snprintf(ref, sizeof ref, "%s", idx);
  }
  ref_verdict(g, arg ? T_I32 : t, res, ref);
}
