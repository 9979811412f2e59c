/* progen_tile.c: tiled programs for progen (PROGEN_TILED).
 *
 * Requires: progen.c (the scalar generator, the output and the random
 * stream, through progen_internal.h). Produces: pg_tile_program, the
 * functions and kernels of a tiled program; pg_tile_stmt and pg_tile_scalar,
 * the hooks through which the scalar generator's statements and expressions
 * in tiled code get tile operations.
 *
 * Each kernel picks two element types (float32, float64 and int32 mostly)
 * and a family of related shapes: a 2-D (a, b), its transpose (b, a), the
 * extents (a) and (b) that axis reductions give and the flat (a * b),
 * from 1 to a few thousand elements, powers of two or not. Tile values are
 * written for a wanted type, as the scalar generator writes expressions:
 * loads (offsets inside, across either end or wholly outside the array, with
 * or without a fill), makers, operators between tiles and with scalars,
 * comparisons, tile_where, exact math builtins, conversions, tile_map with a
 * generated function, transposes, broadcasts, reshapes, reductions along an
 * axis, scans (sum, or a generated function) and calls of a tiled helper;
 * scalars come from whole reductions, arg reductions and element reads, and
 * feed later tile operations. Statements add tile_sort (keys that hold no
 * NaN made by arithmetic, whose sign would decide their place), stores and
 * atomic adds.
 *
 * Races: every instance computes, but each output array is written by one
 * instance (its owner, inside `if (i == owner)`), which alone may read it
 * back; integer outputs may instead take atomic adds from every instance
 * (wrapping sums: any order gives the same bits) and are never read.
 *
 * Size: the generator counts the tile storage as the checker does
 * (frontend/check_tile_rules.c: tile variables, values that get storage of
 * their own, scratch of reductions, scans and sorts, and the helpers a kernel
 * calls) and takes back a statement that would pass a GPU block's 48 KiB.
 */
#include <stdio.h>
#include <string.h>

#include "progen_internal.h"

enum {
  SHARED_LIMIT = 48 << 10, /* a GPU block's shared memory (runtime/backend.h) */
  HELPER_LIMIT = 6 << 10,
  MAX_NEST = 2, /* tile values inside scalars inside tile values ... */
  MAX_CHECKS = PROGEN_CHECKS
};

static bool texpr(Gen *g, TTy w, int d, bool whole);
static void tscalar(Gen *g, Ty t, int d);

/* ---- types ------------------------------------------------------------------------ */

static bool is_fp(Ty t) { return t == T_F32 || t == T_F64; } /* the float math builtins' types */
static bool atomic_ok(Ty t) { return pg_ordered(t); }        /* tile_atomic_add's element types */

static bool same_tty(TTy a, TTy b) {
  return a.elem == b.elem && a.rank == b.rank && a.d[0] == b.d[0] && a.d[1] == b.d[1];
}
static TTy with_elem(TTy w, Ty elem) {
  w.elem = elem;
  return w;
}

void pg_spend(Gen *g, long long b) { g->tile->cost += b; }

static void put_shape(Gen *g, TTy w) {
  if (w.rank == 1)
    pg_put(g, "%d", w.d[0]);
  else
    pg_put(g, "%d, %d", w.d[0], w.d[1]);
}

void pg_put_tty(Gen *g, TTy w) {
  pg_put(g, "tile<%s, ", pg_tname(g, w.elem));
  put_shape(g, w);
  pg_put(g, ">");
}

/* A shape of the kernel's family, its main one most often. */
TTy pg_family_shape(Gen *g, Ty elem) {
  PgTile *T = g->tile;
  return with_elem(T->shape[pg_chance(g, 35) ? 0 : pg_rnd(g, MAX_SHAPES)], elem);
}

static Ty pick_elem(Gen *g) {
  static const Ty other[] = {T_I32, T_F32, T_F64, T_I64, T_U32, T_BOOL, T_F16, T_I16};
  int r = pg_rnd(g, 100);
  return r < 50 ? g->tile->elem[0] : r < 78 ? g->tile->elem[1] : other[pg_rnd(g, 8)];
}

static TTy pick_type(Gen *g) { return pg_family_shape(g, pick_elem(g)); }

/* ---- what is in scope ---------------------------------------------------------------- */

const Var *pg_find_tile(Gen *g, TTy w) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++)
    if (g->vars[k].t == T_TILE && same_tty(g->vars[k].tt, w) && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->vars[pick];
}

/* A 1-D tile variable of length len other than not, for tile_sort's values. */
static const Var *find_tile_len(Gen *g, int len, const char * not ) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++) {
    const Var *v = &g->vars[k];
    if (v->t == T_TILE && v->tt.rank == 1 && v->tt.d[0] == len && strcmp(v->name, not ) &&
        pg_rnd(g, ++n) == 0)
      pick = k;
  }
  return pick < 0 ? NULL : &g->vars[pick];
}

static void add_tile(Gen *g, const char *name, TTy w) {
  Var *v = pg_add_var(g, name, T_TILE, false);
  if (v) v->tt = w;
}

/* An array tile_load may read here: an input, or an output of the instance inside its block. */
static bool readable(const PgTile *T, const TArr *a) {
  return a->role == ROLE_IN || (a->role == ROLE_OWNED && a->owner == T->owner);
}

static const TArr *find_arr(Gen *g, Ty t, int ndim, bool (*ok)(const PgTile *, const TArr *)) {
  int n = 0;
  const TArr *pick = NULL;
  for (int k = 0; k < g->tile->narr; k++) {
    const TArr *a = &g->tile->arr[k];
    if ((t == T_COUNT || a->t == t) && a->ndim == ndim && ok(g->tile, a) && pg_rnd(g, ++n) == 0)
      pick = a;
  }
  return pick;
}

static bool input_arr(const PgTile *T, const TArr *a) {
  (void)T;
  return a->role == ROLE_IN;
}
static bool owned_here(const PgTile *T, const TArr *a) {
  return a->role == ROLE_OWNED && a->owner == T->owner;
}
static bool atomic_arr(const PgTile *T, const TArr *a) {
  (void)T;
  return a->role == ROLE_ATOMIC;
}

/* ---- scalars for tile operations --------------------------------------------------------- */

/* A scalar that converts to elem implicitly: a literal of elem, or an expression of a type
 * that widens to it. */
void pg_scalar_for(Gen *g, Ty elem, int d, int fl) {
  if (pg_chance(g, 40))
    pg_literal(g, elem, fl & F_NZ);
  else
    pg_expr(g, pg_narrower(g, elem), d, fl & F_NZ);
}

/* A scalar of exactly type t (tile_map's and a call's scalar arguments). */
static void scalar_exact(Gen *g, Ty t, int d) { pg_expr(g, t, d, F_NC); }

/* The instance's index along a dimension of the launch. */
static const char *instance_var(Gen *g, int dim) {
  if (g->tile->launch_rank == 2) return dim == 1 ? "c" : "r";
  return "i";
}

static void put_ll(Gen *g, long long v) { pg_put(g, v < 0 ? "(%lld)" : "%lld", v); }

/* An offset for a tile extent n along an array extent e: inside, across either end or wholly
 * outside, sometimes moving with the instance or another value. */
static void offset(Gen *g, int e, int n, int dim) {
  long long r;
  switch (pg_rnd(g, 6)) {
    case 0: r = n <= e ? pg_rnd(g, e - n + 1) : -pg_rnd(g, n - e + 1); break;
    case 1: r = -1 - pg_rnd(g, n); break;
    case 2: r = (long long)e - n + 1 + pg_rnd(g, n); break;
    case 3:
      r = pg_chance(g, 50) ? -(long long)n - pg_rnd(g, 4) : (long long)e + pg_rnd(g, 4);
      break;
    default: r = pg_rnd(g, e + 1) - pg_rnd(g, 3); break;
  }
  int form = pg_rnd(g, 100);
  if (form < 45)
    put_ll(g, r);
  else if (form < 70) {
    pg_put(g, "(%s * %d + ", instance_var(g, dim), pg_rnd(g, n + 1));
    put_ll(g, r);
    pg_put(g, ")");
  } else if (form < 88) {
    pg_put(g, "(int(uint32(");
    pg_expr(g, pg_int_type(g), 1, F_NC);
    pg_put(g, ") %% %du) + ", 1 + pg_rnd(g, n + 2));
    put_ll(g, r);
    pg_put(g, ")");
  } else if (form < 97) {
    pg_put(g, "int64(");
    put_ll(g, r);
    pg_put(g, ")");
  } else /* the ends of int64: the element offsets must not overflow */
    pg_put(g, pg_chance(g, 50) ? "9223372036854775807l" : "(-9223372036854775807l - 1l)");
}

/* ---- tile values ---------------------------------------------------------------------- */

/* tile_load of w from a; its fill, if any, a literal when exact_fill (a NaN computed as the
 * fill would have no defined sign). */
static bool tload_fill(Gen *g, TTy w, const TArr *a, bool exact_fill) {
  pg_put(g, "tile_load<");
  put_shape(g, w);
  pg_put(g, ">(%s", a->name);
  for (int k = 0; k < w.rank; k++) {
    pg_put(g, ", ");
    offset(g, a->ext[k], w.d[k], k);
  }
  if (pg_chance(g, 45)) {
    pg_put(g, ", ");
    if (exact_fill)
      pg_literal(g, w.elem, false);
    else
      pg_scalar_for(g, w.elem, 1, 0);
  }
  pg_put(g, ")");
  return true;
}

static bool tload_from(Gen *g, TTy w, const TArr *a) { return tload_fill(g, w, a, false); }

static const TArr *loadable(Gen *g, TTy w) { return find_arr(g, w.elem, w.rank, readable); }

static void maker(Gen *g, TTy w) {
  int r = pg_rnd(g, 100);
  if (pg_numeric(w.elem) && r < 45) {
    static const char *const mk[] = {"tile_zeros", "tile_ones", "tile_arange", "tile_arange"};
    pg_put(g, "%s<%s, ", mk[pg_rnd(g, 4)], pg_tname(g, w.elem));
    put_shape(g, w);
    pg_put(g, ">()");
    return;
  }
  if (r < 70) { /* the element type from the value */
    pg_put(g, "tile_full<");
    put_shape(g, w);
    pg_put(g, ">(");
    scalar_exact(g, w.elem, 1);
  } else {
    pg_put(g, "tile_full<%s, ", pg_tname(g, w.elem));
    put_shape(g, w);
    pg_put(g, ">(");
    pg_scalar_for(g, w.elem, 1, 0);
  }
  pg_put(g, ")");
}

/* A leaf: a variable, a load (storage of its own) or a maker. Returns whether it is storage. */
static bool tleaf(Gen *g, TTy w) {
  int r = pg_rnd(g, 100);
  const Var *v;
  const TArr *a;
  if (r < 45 && (v = pg_find_tile(g, w))) {
    pg_put(g, "%s", v->name);
    return true;
  }
  if (r < 80 && (a = loadable(g, w))) {
    pg_spend(g, pg_bytes(w));
    return tload_from(g, w, a);
  }
  maker(g, w);
  return false;
}

/* An operand of an elementwise operation: a tile of w, or sometimes a scalar. */
static void operand(Gen *g, TTy w, int d, bool scalar_ok, int fl) {
  if (scalar_ok && pg_chance(g, 30))
    pg_scalar_for(g, w.elem, d, fl);
  else
    texpr(g, w, d - 1, false);
}

static bool binary(Gen *g, TTy w, int d) {
  static const char *const fops[] = {"+", "-", "*", "/"};
  static const char *const iops[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"};
  static const char *const bops[] = {"&&", "||", "==", "!="};
  const char *op;
  if (w.elem == T_BOOL)
    op = bops[pg_rnd(g, 4)];
  else if (pg_is_int(w.elem))
    op = iops[pg_rnd(g, 10)];
  else
    op = fops[pg_rnd(g, 4)];
  bool shift = op[0] == '<' || op[0] == '>', div = op[0] == '/' || op[0] == '%';
  int side = pg_rnd(g, 3); /* 0: tile op tile, 1: tile op scalar, 2: scalar op tile */
  pg_put(g, "(");
  if (side == 2)
    pg_scalar_for(g, w.elem, d - 1, 0);
  else
    texpr(g, w, d - 1, false);
  pg_put(g, " %s ", op);
  if (side == 1 && shift && pg_chance(g, 50))
    pg_put(g, "%d", pg_rnd(g, pg_ti(w.elem)->bits)); /* a count in range: no warning */
  else if (side == 1)
    pg_scalar_for(g, w.elem, d - 1, div && pg_is_int(w.elem) ? F_NZ : 0);
  else
    texpr(g, w, d - 1, false);
  pg_put(g, ")");
  return true;
}

static bool unary(Gen *g, TTy w, int d) {
  const char *op = w.elem == T_BOOL ? "!" : pg_is_int(w.elem) && pg_chance(g, 40) ? "~" : "-";
  pg_put(g, "(%s", op);
  texpr(g, w, d - 1, false);
  pg_put(g, ")");
  return true;
}

/* A comparison of two numeric tiles (or a tile and a scalar): a tile of bool. */
static bool compare(Gen *g, TTy w, int d) {
  static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
  if (w.elem != T_BOOL) return false;
  Ty e = pick_elem(g);
  if (e == T_BOOL) e = g->tile->elem[0];
  if (e == T_BOOL) return false;
  TTy u = with_elem(w, e);
  bool scalar_left = pg_chance(g, 15);
  pg_put(g, "(");
  if (scalar_left)
    pg_scalar_for(g, e, d - 1, 0);
  else
    texpr(g, u, d - 1, false);
  pg_put(g, " %s ", ops[pg_rnd(g, 6)]);
  operand(g, u, d, !scalar_left, 0);
  pg_put(g, ")");
  return true;
}

static bool where(Gen *g, TTy w, int d) {
  pg_put(g, "tile_where(");
  texpr(g, with_elem(w, T_BOOL), d - 1, false);
  int scalars = pg_rnd(g, 4); /* 0, 1: none; 2: the first; 3: the second */
  pg_put(g, ", ");
  if (scalars == 2)
    pg_scalar_for(g, w.elem, d - 1, 0);
  else
    texpr(g, w, d - 1, false);
  pg_put(g, ", ");
  if (scalars == 3)
    pg_scalar_for(g, w.elem, d - 1, 0);
  else
    texpr(g, w, d - 1, false);
  pg_put(g, ")");
  return true;
}

/* A builtin whose arguments are tiles of w (the first) or scalars: exact on every device. */
static bool math(Gen *g, TTy w, int d) {
  static const char *const fun[] = {"floor", "ceil", "trunc", "round", "sqrt", "abs",    "sign",
                                    "rsqrt", "rint", "frac",  "erf",   "erfc", "nonzero"};
  static const char *const fbin[] = {"min", "max", "fmod", "step", "floordiv"};
  static const char *const ftri[] = {"clamp", "lerp", "smoothstep"};
  static const char *const ibin[] = {"min", "max", "floordiv"};
  const char *name;
  int n;
  if (is_fp(w.elem)) {
    int r = pg_rnd(g, 10);
    if (r < 4)
      name = fun[pg_rnd(g, 13)], n = 1;
    else if (r < 7)
      name = fbin[pg_rnd(g, 5)], n = 2;
    else if (r < 9)
      name = ftri[pg_rnd(g, 3)], n = 3;
    else { /* the second sign from a literal: an arithmetic NaN has no defined sign */
      pg_put(g, "copysign(");
      texpr(g, w, d - 1, false);
      pg_put(g, ", ");
      pg_literal(g, w.elem, false);
      pg_put(g, ")");
      return true;
    }
  } else if (pg_ordered(w.elem)) {
    int r = pg_rnd(g, 10);
    bool sgn = w.elem == T_I32 || w.elem == T_I64;
    if (r < 2 && sgn)
      name = pg_chance(g, 50) ? "abs" : "sign", n = 1;
    else if (r < 3)
      name = "nonzero", n = 1;
    else if (r < 8)
      name = ibin[pg_rnd(g, 3)], n = 2;
    else
      name = "clamp", n = 3;
  } else
    return false;
  pg_put(g, "%s(", name);
  for (int k = 0; k < n; k++) {
    if (k) pg_put(g, ", ");
    operand(g, w, d, k > 0, 0);
  }
  pg_put(g, ")");
  return true;
}

static bool classify(Gen *g, TTy w, int d) {
  static const char *const cls[] = {"isnan", "isinf", "isfinite"};
  if (w.elem != T_BOOL) return false;
  pg_put(g, "%s(", cls[pg_rnd(g, 3)]);
  texpr(g, with_elem(w, pg_chance(g, 60) ? T_F32 : T_F64), d - 1, false);
  pg_put(g, ")");
  return true;
}

static bool convert(Gen *g, TTy w, int d) {
  Ty from = pick_elem(g);
  if (from == w.elem) from = from == T_I32 ? T_F64 : T_I32;
  pg_put(g, "%s(", pg_tname(g, w.elem));
  texpr(g, with_elem(w, from), d - 1, false);
  pg_put(g, ")");
  return true;
}

/* tile_map with a generated function (or a builtin) returning w's elements. */
static bool map(Gen *g, TTy w, int d) {
  PgTile *T = g->tile;
  const Fn *cands[4] = {T->map[0], T->map[1], T->comb[0], T->comb[1]}, *f = NULL;
  for (int k = 0, n = 0; k < 4; k++)
    if (cands[k] && cands[k]->ret == w.elem && pg_rnd(g, ++n) == 0) f = cands[k];
  if (!f || pg_chance(g, 15)) {
    if (pg_ordered(w.elem) && pg_chance(g, 50)) {
      pg_put(g, "tile_map(%s, ", pg_chance(g, 50) ? "min" : "max");
      texpr(g, w, d - 1, false);
      pg_put(g, ", ");
      if (pg_chance(g, 30)) /* a scalar argument keeps its type: exactly the elements' */
        scalar_exact(g, w.elem, d - 1);
      else
        texpr(g, w, d - 1, false);
      pg_put(g, ")");
      return true;
    }
    if (!is_fp(w.elem)) return false;
    static const char *const un[] = {"sqrt", "floor", "abs", "erf"};
    pg_put(g, "tile_map(%s, ", un[pg_rnd(g, 4)]);
    texpr(g, w, d - 1, false);
    pg_put(g, ")");
    return true;
  }
  int tile_arg = pg_rnd(g, f->np);
  pg_put(g, "tile_map(%s", f->name);
  for (int k = 0; k < f->np; k++) {
    pg_put(g, ", ");
    if (k != tile_arg && pg_chance(g, 35))
      scalar_exact(g, f->params[k], d - 1);
    else
      texpr(g, with_elem(w, f->params[k]), d - 1, false);
  }
  pg_put(g, ")");
  return true;
}

/* ---- values with storage of their own ----------------------------------------------------- */

static bool transpose(Gen *g, TTy w, int d) {
  if (w.rank != 2) return false;
  pg_spend(g, pg_bytes(w));
  pg_put(g, "tile_transpose(");
  texpr(g, pg_tty(w.elem, 2, w.d[1], w.d[0]), d - 1, true);
  pg_put(g, ")");
  return true;
}

static bool broadcast(Gen *g, TTy w, int d) {
  TTy s;
  int m = w.d[0], n = w.rank == 2 ? w.d[1] : w.d[0];
  if (w.rank == 1)
    s = pg_tty(w.elem, 1, pg_chance(g, 60) ? 1 : m, 1);
  else {
    switch (pg_rnd(g, 5)) {
      case 0: s = pg_tty(w.elem, 1, n, 1); break;
      case 1: s = pg_tty(w.elem, 2, 1, n); break;
      case 2: s = pg_tty(w.elem, 2, m, 1); break;
      case 3: s = pg_tty(w.elem, 1, 1, 1); break;
      default: s = pg_tty(w.elem, 2, 1, 1); break;
    }
  }
  pg_spend(g, pg_bytes(w));
  pg_put(g, "tile_broadcast<");
  put_shape(g, w);
  pg_put(g, ">(");
  texpr(g, s, d - 1, true);
  pg_put(g, ")");
  return true;
}

static bool reshape(Gen *g, TTy w, int d) {
  long long c = pg_count(w);
  TTy s;
  int f = 1;
  for (int k = 2 + pg_rnd(g, 6); k <= 64 && k * k <= c; k++) /* a factor of c, if any */
    if (c % k == 0) {
      f = k;
      break;
    }
  switch (pg_rnd(g, 4)) {
    case 0: s = pg_tty(w.elem, 1, (int)c, 1); break;
    case 1: s = pg_tty(w.elem, 2, 1, (int)c); break;
    case 2: s = pg_tty(w.elem, 2, (int)c, 1); break;
    default: s = pg_tty(w.elem, 2, f, (int)(c / f)); break;
  }
  if (same_tty(s, w)) s = w.rank == 1 ? pg_tty(w.elem, 2, 1, (int)c) : pg_tty(w.elem, 1, (int)c, 1);
  pg_spend(g, pg_bytes(w));
  pg_put(g, "tile_reshape<");
  put_shape(g, w);
  pg_put(g, ">(");
  texpr(g, s, d - 1, true);
  pg_put(g, ")");
  return true;
}

/* The combining function of a reduction or scan over t (f: a generated function, "min" or
 * "max"), or NULL. */
const char *pg_combiner(Gen *g, Ty t, bool builtin_ok) {
  PgTile *T = g->tile;
  for (int j = 0; j < 2; j++)
    if (T->comb[j] && T->comb[j]->ret == t && (!builtin_ok || !pg_ordered(t) || pg_chance(g, 70)))
      return T->comb[j]->name;
  if (builtin_ok && pg_ordered(t)) return pg_chance(g, 50) ? "min" : "max";
  return NULL;
}

/* A reduction along an axis of a 2-D tile, giving the 1-D w. */
static bool axis_reduce(Gen *g, TTy w, int d) {
  static const int ks[] = {1, 2, 3, 4, 5, 7, 8, 16, 31, 64};
  if (w.rank != 1) return false;
  int k = ks[pg_rnd(g, 10)], axis = pg_rnd(g, 2);
  bool arg = w.elem == T_I32 && pg_chance(g, 40);
  Ty e = arg ? pick_elem(g) : w.elem;
  if (arg && e == T_BOOL) e = T_F32;
  TTy s = axis == 1 ? pg_tty(e, 2, w.d[0], k) : pg_tty(e, 2, k, w.d[0]);
  const char *fn = arg || !pg_chance(g, 30) ? NULL : pg_combiner(g, e, true);
  if (!arg && !fn && !pg_numeric(e)) return false;
  pg_spend(g, pg_bytes(w) + pg_bytes(s) + (arg ? 4 * pg_count(s) : 0));
  if (arg)
    pg_put(g, "tile_arg%s(", pg_chance(g, 50) ? "min" : "max");
  else if (fn)
    pg_put(g, "tile_reduce(%s, ", fn);
  else {
    static const char *const ops[] = {"sum", "sum", "min", "max"};
    pg_put(g, "tile_%s(", ops[pg_rnd(g, 4)]);
  }
  texpr(g, s, d - 1, true);
  pg_put(g, ", %d)", axis);
  return true;
}

static bool scan(Gen *g, TTy w, int d) {
  if (w.rank != 1) return false;
  bool incl = pg_chance(g, 50);
  const char *fn = pg_chance(g, 40) || !pg_numeric(w.elem) ? pg_combiner(g, w.elem, false) : NULL;
  if (!fn && !pg_numeric(w.elem)) return false;
  pg_spend(g, pg_bytes(w) + pg_scan_scratch(w));
  pg_put(g, "tile_scan_%s(", incl ? "inclusive" : "exclusive");
  if (fn) pg_put(g, "%s, ", fn);
  texpr(g, w, d - 1, true);
  if (fn && !incl) {
    pg_put(g, ", ");
    pg_scalar_for(g, w.elem, d - 1, 0);
  }
  pg_put(g, ")");
  return true;
}

static bool helper_call(Gen *g, TTy w, int d) {
  PgTile *T = g->tile;
  int k = 0;
  while (k < T->nhelp && !same_tty(T->help[k].t, w)) k++;
  if (k == T->nhelp) return false;
  if (!(T->called & (1u << k))) pg_spend(g, T->help[k].cost);
  T->called |= 1u << k;
  pg_spend(g, pg_bytes(w));
  pg_put(g, "%s(", T->help[k].name);
  texpr(g, w, d - 1, true);
  pg_put(g, ", ");
  scalar_exact(g, w.elem, d - 1);
  pg_put(g, ")");
  return true;
}

/* An inner node for w; returns whether it is storage, or -1 when the form does not apply. */
static int tnode(Gen *g, TTy w, int d) {
  int r = pg_rnd(g, 100);
  if (r < 26) return binary(g, w, d) ? 0 : -1;
  if (r < 31) return unary(g, w, d) ? 0 : -1;
  if (r < 41) return compare(g, w, d) ? 0 : -1;
  if (r < 48) return where(g, w, d) ? 0 : -1;
  if (r < 58) return math(g, w, d) ? 0 : -1;
  if (r < 61) return classify(g, w, d) ? 0 : -1;
  if (r < 66) return convert(g, w, d) ? 0 : -1;
  if (r < 73) return map(g, w, d) ? 0 : -1;
  if (r < 77) return transpose(g, w, d) ? 1 : -1;
  if (r < 81) return broadcast(g, w, d) ? 1 : -1;
  if (r < 84) return reshape(g, w, d) ? 1 : -1;
  if (r < 91) return axis_reduce(g, w, d) ? 1 : -1;
  if (r < 97) return scan(g, w, d) ? 1 : -1;
  return helper_call(g, w, d) ? 1 : -1;
}

/* A tile value of type w. whole: what reads it needs it whole (a reduction, a shape
 * operation, an element read, a call), so it gets storage unless it is storage already (a
 * variable, or a value that always gets its own). Returns whether it is storage. */
static bool texpr(Gen *g, TTy w, int d, bool whole) {
  int st = -1;
  for (int tries = 0; st < 0 && d > 0 && !pg_chance(g, 22) && tries < 4; tries++)
    st = tnode(g, w, d);
  if (st < 0) st = tleaf(g, w);
  if (whole && !st) pg_spend(g, pg_bytes(w));
  return st;
}

/* ---- scalars from tiles --------------------------------------------------------------------- */

static void element_read(Gen *g, Ty t, int d) {
  TTy w = pg_family_shape(g, t);
  const Var *v = pg_chance(g, 70) ? pg_find_tile(g, w) : NULL;
  if (v)
    pg_put(g, "%s", v->name);
  else {
    pg_put(g, "(");
    texpr(g, w, d - 1, true);
    pg_put(g, ")");
  }
  pg_put(g, "[");
  for (int k = 0; k < w.rank; k++) {
    if (k) pg_put(g, ", ");
    if (pg_chance(g, 60))
      pg_put(g, "%d", pg_rnd(g, w.d[k]));
    else /* any index: clamped into the tile */
      pg_expr(g, pg_int_type(g), 1, F_NC);
  }
  pg_put(g, "]");
}

/* A scalar of type t from a reduction, an arg reduction or an element of a tile. */
static void tscalar(Gen *g, Ty t, int d) {
  int r = pg_rnd(g, 100);
  if (t == T_I32 && r < 20) {
    TTy w = pick_type(g);
    if (w.elem == T_BOOL) w.elem = T_F64;
    pg_spend(g, pg_bytes(w) + 4 * pg_count(w));
    pg_put(g, "tile_arg%s(", pg_chance(g, 50) ? "min" : "max");
    texpr(g, w, d - 1, true);
    pg_put(g, ")");
    return;
  }
  const char *fn = r < 70 ? pg_combiner(g, t, true) : NULL;
  if (r < 55 && pg_numeric(t)) {
    static const char *const ops[] = {"sum", "sum", "min", "max"};
    TTy w = pg_family_shape(g, t);
    pg_spend(g, pg_bytes(w));
    pg_put(g, "tile_%s(", ops[pg_rnd(g, 4)]);
    texpr(g, w, d - 1, true);
    pg_put(g, ")");
  } else if (fn) {
    TTy w = pg_family_shape(g, t);
    pg_spend(g, pg_bytes(w));
    pg_put(g, "tile_reduce(%s, ", fn);
    texpr(g, w, d - 1, true);
    pg_put(g, ")");
  } else
    element_read(g, t, d);
}

bool pg_tile_scalar(Gen *g, Ty t, int d) {
  PgTile *T = g->tile;
  if (!T->code || T->nest >= MAX_NEST || !pg_is_scalar(t) || !pg_chance(g, 7)) return false;
  T->nest++;
  tscalar(g, t, d < 1 ? 1 : d);
  T->nest--;
  return true;
}

/* ---- statements ----------------------------------------------------------------------------- */

static void tile_stmt(Gen *g);

/* A value assigned to a variable of its type: a load there is written straight into the
 * variable (tile_direct in frontend/check_tile_rules.c), with no storage of its own. */
static void tvalue(Gen *g, TTy w) {
  size_t at = g->len;
  texpr(g, w, pg_depth(g), false);
  if (!g->oom && !strncmp(g->s + at, "tile_load<", 10)) g->tile->cost -= pg_bytes(w);
}

/* tile<T, shape> tN = value; (a load straight into the variable, sometimes) */
void pg_tdecl(Gen *g, TTy w) {
  char name[NAME];
  pg_fresh(g, name, "t");
  pg_indent(g);
  if (pg_chance(g, 15))
    pg_put(g, "auto");
  else
    pg_put_tty(g, w);
  pg_put(g, " %s = ", name);
  const TArr *a = pg_chance(g, 35) ? loadable(g, w) : NULL;
  if (a) /* the load is written straight into the variable: no storage of its own */
    tload_from(g, w, a);
  else
    tvalue(g, w);
  pg_put(g, ";\n");
  pg_spend(g, pg_bytes(w));
  add_tile(g, name, w);
}

static void tassign(Gen *g) {
  const Var *v = pg_find_tile(g, pick_type(g));
  for (int k = 0; !v && k < g->nvars; k++)
    if (g->vars[k].t == T_TILE && pg_chance(g, 50)) v = &g->vars[k];
  if (!v) {
    pg_tdecl(g, pick_type(g));
    return;
  }
  TTy w = v->tt;
  pg_indent(g);
  pg_put(g, "%s ", v->name);
  if (w.elem != T_BOOL && pg_chance(g, 35)) { /* a compound assignment */
    static const char *const ops[] = {"+=", "-=", "*=", "/=", "%=", "^="};
    int op = pg_rnd(g, pg_is_int(w.elem) ? 6 : 4);
    pg_put(g, "%s ", ops[op]);
    operand(g, w, pg_depth(g), true, op >= 3 && pg_is_int(w.elem) ? F_NZ : 0);
  } else {
    const TArr *a = pg_chance(g, 25) ? loadable(g, w) : NULL;
    pg_put(g, "= ");
    if (a)
      tload_from(g, w, a);
    else
      tvalue(g, w);
  }
  pg_put(g, ";\n");
}

/* T sN = (a scalar from tiles); */
void pg_sdecl(Gen *g) {
  static const Ty ts[] = {T_I32, T_F32, T_F64, T_BOOL};
  Ty t = pg_chance(g, 60) ? pick_elem(g) : ts[pg_rnd(g, 4)];
  char name[NAME];
  pg_fresh(g, name, "s");
  pg_indent(g);
  pg_put(g, "%s %s = ", pg_tname(g, t), name);
  g->tile->nest++;
  tscalar(g, t, pg_depth(g));
  g->tile->nest--;
  pg_put(g, ";\n");
  pg_add_var(g, name, t, false);
}

/* tile_sort of fresh keys that hold no NaN made by arithmetic (a loaded NaN keeps its bits,
 * so its place is defined; an arithmetic one's sign is not), sometimes with values. */
static void sort_stmt(Gen *g) {
  static const Ty keys[] = {T_F32, T_F64, T_I32, T_I32, T_F32, T_U32, T_I64, T_F16, T_I16};
  TTy w = pg_family_shape(g, pg_chance(g, 60) ? g->tile->elem[pg_rnd(g, 2)] : keys[pg_rnd(g, 9)]);
  if (w.rank == 2) w = pg_tty(w.elem, 1, w.d[pg_rnd(g, 2)], 1);
  if (w.elem == T_BOOL) w.elem = T_I32;
  const TArr *a = find_arr(g, w.elem, 1, input_arr); /* loaded NaNs have their bits */
  if (pg_is_half(w.elem) && !a) w.elem = T_I16;      /* isnan takes no float16 */
  if (w.d[0] > (g->loops ? 256 : 2048)) w.d[0] = g->loops ? 100 : 1000; /* n^2 steps */
  bool load = a && a->t == w.elem && (pg_is_half(w.elem) || pg_chance(g, 40));
  const Var *v = NULL;
  if (!load && !pg_is_int(w.elem) && !(v = pg_find_tile(g, w))) { /* a value to test first */
    pg_tdecl(g, w);
    v = &g->vars[g->nvars - 1];
  }
  char key[NAME];
  pg_fresh(g, key, "k");
  pg_indent(g);
  pg_put_tty(g, w);
  pg_put(g, " %s = ", key);
  if (load)
    tload_fill(g, w, a, true);
  else if (!v)
    tvalue(g, w);
  else {
    pg_put(g, "tile_where(isnan(%s), ", v->name);
    pg_literal(g, w.elem, false);
    pg_put(g, ", %s)", v->name);
  }
  pg_put(g, ";\n");
  pg_spend(g, pg_bytes(w));
  add_tile(g, key, w);
  const Var *vals = pg_chance(g, 50) ? find_tile_len(g, w.d[0], key) : NULL;
  pg_indent(g);
  pg_spend(g, pg_bytes(w) + (vals ? pg_bytes(vals->tt) : 0));
  if (vals)
    pg_put(g, "tile_sort(%s, %s);\n", key, vals->name);
  else
    pg_put(g, "tile_sort(%s);\n", key);
}

/* An index into dimension dim of a: in bounds by construction. */
static void arr_index(Gen *g, const TArr *a, int dim) {
  if (pg_chance(g, 40)) {
    pg_put(g, "%d", pg_rnd(g, a->ext[dim]));
    return;
  }
  pg_put(g, "int(uint32(");
  pg_expr(g, pg_int_type(g), 1, F_NC);
  pg_put(g, ") %% uint32(shape(%s, %d)))", a->name, dim);
}

static void arr_element(Gen *g, const TArr *a) {
  pg_put(g, "%s[", a->name);
  for (int k = 0; k < a->ndim; k++) {
    if (k) pg_put(g, ", ");
    arr_index(g, a, k);
  }
  pg_put(g, "]");
}

/* tile_store or tile_atomic_add of a value into a (at offsets that may leave it). */
static void store(Gen *g, const TArr *a, bool atomic, int d) {
  TTy w = pg_family_shape(g, a->t);
  if (w.rank != a->ndim)
    w = a->ndim == 1 ? pg_tty(a->t, 1, (int)pg_count(w), 1) : pg_tty(a->t, 2, 1, w.d[0]);
  pg_indent(g);
  pg_put(g, "%s(%s", atomic ? "tile_atomic_add" : "tile_store", a->name);
  for (int k = 0; k < w.rank; k++) {
    pg_put(g, ", ");
    offset(g, a->ext[k], w.d[k], k);
  }
  pg_put(g, ", ");
  if (d < 0)
    maker(g, w);
  else
    texpr(g, w, d, false);
  pg_put(g, ");\n");
}

/* What the owner of the arrays does inside its block: stores, atomic adds and element writes
 * into them, loads of what it wrote, and other statements. */
static void owner_stmt(Gen *g) {
  const TArr *a = find_arr(g, T_COUNT, pg_chance(g, 60) ? 1 : 2, owned_here);
  if (!a) a = find_arr(g, T_COUNT, 1, owned_here);
  if (!a) a = find_arr(g, T_COUNT, 2, owned_here);
  int r = pg_rnd(g, 100);
  if (!a || r < 20) {
    tile_stmt(g);
  } else if (r < 55) {
    store(g, a, false, pg_depth(g));
  } else if (r < 65 && atomic_ok(a->t)) {
    store(g, a, true, pg_depth(g));
  } else if (r < 85) {
    pg_indent(g);
    arr_element(g, a);
    pg_put(g, " = ");
    pg_scalar_for(g, a->t, pg_depth(g), 0);
    pg_put(g, ";\n");
  } else { /* read back what the instance wrote (a barrier's job on a GPU) */
    TTy w = pg_family_shape(g, a->t);
    if (w.rank != a->ndim) w = pg_tty(a->t, a->ndim, a->ndim == 2 ? 1 : w.d[0], w.d[0]);
    char name[NAME];
    pg_fresh(g, name, "t");
    pg_indent(g);
    pg_put_tty(g, w);
    pg_put(g, " %s = ", name);
    tload_from(g, w, a);
    pg_put(g, ";\n");
    pg_spend(g, pg_bytes(w));
    add_tile(g, name, w);
  }
}

/* if (i == owner) { ... }: the one instance that writes an output array. */
static void owner_block(Gen *g) {
  PgTile *T = g->tile;
  int n = 0, owner = -1;
  for (int k = 0; k < T->narr; k++)
    if (T->arr[k].role == ROLE_OWNED && pg_rnd(g, ++n) == 0) owner = T->arr[k].owner;
  if (owner < 0) {
    pg_tdecl(g, pick_type(g));
    return;
  }
  if (T->owner >= 0) { /* already inside one */
    owner_stmt(g);
    return;
  }
  int saved = g->nvars;
  bool guard = T->ninst > 1 || pg_chance(g, 60);
  if (guard) {
    pg_indent(g);
    pg_put(g, "if (i == %d) {\n", owner);
    g->indent++;
    g->nest++;
  }
  T->owner = owner;
  for (int k = 1 + pg_rnd(g, 3); k > 0; k--) owner_stmt(g);
  T->owner = -1;
  if (guard) {
    g->nest--;
    g->indent--;
    pg_indent(g);
    pg_put(g, "}\n");
    g->nvars = saved;
  }
}

/* Atomic adds from every instance into an integer array only atomics touch. */
static void atomic_stmt(Gen *g) {
  const TArr *a = find_arr(g, T_COUNT, pg_chance(g, 60) ? 1 : 2, atomic_arr);
  if (!a) a = find_arr(g, T_COUNT, 1, atomic_arr);
  if (!a) a = find_arr(g, T_COUNT, 2, atomic_arr);
  if (!a) {
    owner_block(g);
    return;
  }
  if (pg_chance(g, 65)) {
    store(g, a, true, pg_depth(g));
    return;
  }
  /* a scalar atomic: a side effect, so no tile operation in its statement */
  g->tile->code = false;
  pg_indent(g);
  pg_put(g, "atomic_add(&");
  arr_element(g, a);
  pg_put(g, ", ");
  pg_scalar_for(g, a->t, pg_depth(g), 0);
  pg_put(g, ");\n");
  g->tile->code = true;
}

/* if (a scalar from tiles compared with a scalar) { ... } else { ... } */
static void tile_if(Gen *g) {
  static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
  Ty t = pick_elem(g);
  if (t == T_BOOL) t = T_I32;
  pg_indent(g);
  pg_put(g, "if (");
  g->tile->nest++;
  tscalar(g, t, 2);
  g->tile->nest--;
  pg_put(g, " %s ", cmp[pg_rnd(g, 6)]);
  pg_scalar_for(g, t, 1, 0);
  pg_put(g, ") ");
  pg_block(g, 1 + pg_rnd(g, 3));
  if (pg_chance(g, 40)) {
    pg_put(g, " else ");
    pg_block(g, 1 + pg_rnd(g, 2));
  }
  pg_put(g, "\n");
}

static void tile_stmt(Gen *g) {
  int r = pg_rnd(g, 100);
  bool deep = g->budget > 0 && g->nest < 3;
  if (r < 28)
    pg_tdecl(g, pick_type(g));
  else if (r < 42)
    tassign(g);
  else if (r < 56)
    pg_sdecl(g);
  else if (r < 63)
    sort_stmt(g);
  else if (r < 81)
    owner_block(g);
  else if (r < 84)
    atomic_stmt(g);
  else if (r < 93)
    pg_check_stmt(g);
  else if (deep)
    tile_if(g);
  else
    pg_sdecl(g);
}

/* A statement, taken back (text, names in scope, storage) when its tiles would not fit. */
void pg_tile_stmt(Gen *g) {
  PgTile *T = g->tile;
  if (!T->code) {
    pg_plain_stmt(g);
    return;
  }
  size_t mark = g->len;
  int nvars = g->nvars;
  long long cost = T->cost;
  unsigned called = T->called;
  int checks = T->checks;
  if (pg_chance(g, 55)) {
    g->budget--;
    tile_stmt(g);
  } else
    pg_plain_stmt(g);
  if (T->cost <= T->limit) return;
  g->len = mark;
  g->nvars = nvars;
  T->cost = cost;
  T->called = called;
  T->checks = checks;
}

/* ---- functions ----------------------------------------------------------------------------- */

/* The functions tile_map, tile_reduce and the scans take: pure scalar functions of the
 * kernel's element types. */
static void scalar_functions(Gen *g) {
  PgTile *T = g->tile;
  T->code = false;
  for (int j = 0; j < 2; j++) {
    Ty e = T->elem[j], o = T->elem[1 - j];
    Ty two[2] = {e, e}, mixed[2] = {e, o};
    T->comb[j] = pg_chance(g, 80) ? pg_function(g, e, two, 2) : NULL;
    T->map[j] = pg_chance(g, 70) ? pg_function(g, e, mixed, 1 + pg_rnd(g, 2)) : NULL;
  }
  T->code = true;
}

/* tile<T, shape> tfN(tile<T, shape> p0, T p1): a tiled function a kernel may call. */
static void helper(Gen *g) {
  PgTile *T = g->tile;
  TTy w = pg_family_shape(g, T->elem[pg_rnd(g, 2)]);
  if (w.elem == T_BOOL) return;
  Helper *h = &T->help[T->nhelp];
  snprintf(h->name, NAME, "%stf%d", g->prefix, T->helpers++);
  h->t = w;
  pg_reset_scope(g, 0, 3);
  g->callable = g->nfns;
  T->narr = 0;
  T->cost = pg_bytes(w); /* the copy of its tile parameter */
  T->limit = HELPER_LIMIT;
  if (T->cost > T->limit) return;
  pg_put(g, "\n");
  pg_put_tty(g, w);
  pg_put(g, " %s(", h->name);
  pg_put_tty(g, w);
  pg_put(g, " p0, %s p1) {\n", pg_tname(g, w.elem));
  add_tile(g, "p0", w);
  pg_add_var(g, "p1", w.elem, false);
  g->indent = 1;
  for (int k = pg_rnd(g, 3); k > 0; k--) {
    size_t mark = g->len;
    long long cost = T->cost;
    pg_tdecl(g, pick_type(g));
    if (T->cost > T->limit) g->len = mark, T->cost = cost, g->nvars--;
  }
  size_t mark = g->len;
  long long cost = T->cost;
  pg_put(g, "    return ");
  texpr(g, w, pg_depth(g), false);
  if (T->cost > T->limit) {
    g->len = mark, T->cost = cost;
    pg_put(g, "    return p0");
  }
  pg_put(g, ";\n}\n");
  g->indent = 0;
  h->cost = T->cost;
  T->nhelp++;
}

/* ---- kernels ------------------------------------------------------------------------------- */

static const int lens[] = {1,   2,   3,   4,   5,    7,    8,    12,   16,   17,   31,
                           32,  33,  48,  64,  100,  127,  128,  129,  200,  255,  256,
                           300, 500, 512, 640, 1000, 1024, 1500, 2000, 2048, 3000, 4096};
static const int exts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 64, 100};

static Ty kernel_elem(Gen *g) {
  static const Ty w[] = {T_F32, T_F32, T_F32, T_F32, T_F32, T_F32, T_F64, T_F64, T_F64, T_F64,
                         T_I32, T_I32, T_I32, T_I32, T_I32, T_I64, T_U32, T_F16, T_I16, T_U8};
  return w[pg_rnd(g, 20)];
}

/* The kernel's shapes: a 2-D (a, b), its transpose, (a), (b) and (a * b), small enough that
 * a few values of the main one fit a GPU block. */
static void shapes(Gen *g) {
  PgTile *T = g->tile;
  int size =
      pg_esize(T->elem[0]) > pg_esize(T->elem[1]) ? pg_esize(T->elem[0]) : pg_esize(T->elem[1]);
  int r = pg_rnd(g, 100), cap = (r < 60 ? 4096 : r < 90 ? 12288 : 20480) / size;
  int a, b;
  do {
    if (pg_chance(g, 50)) { /* 1-D first: a 2-D view of it by a factor */
      int len = lens[pg_rnd(g, (int)(sizeof lens / sizeof lens[0]))];
      a = 1;
      for (int k = 2 + pg_rnd(g, 8); k <= 64 && k * k <= len; k++)
        if (len % k == 0) {
          a = k;
          break;
        }
      b = len / a;
    } else {
      a = exts[pg_rnd(g, (int)(sizeof exts / sizeof exts[0]))];
      b = exts[pg_rnd(g, (int)(sizeof exts / sizeof exts[0]))];
    }
  } while ((long long)a * b > cap || (long long)a * b > 4096);
  bool flat = a == 1 || pg_chance(g, 40);
  T->shape[0] = flat ? pg_tty(T_BOOL, 1, a * b, 1) : pg_tty(T_BOOL, 2, a, b);
  T->shape[1] = pg_tty(T_BOOL, 2, a, b);
  T->shape[2] = pg_tty(T_BOOL, 2, b, a);
  T->shape[3] = pg_tty(T_BOOL, 1, a, 1);
  T->shape[4] = pg_tty(T_BOOL, 1, b, 1);
  T->shape[5] = pg_tty(T_BOOL, 1, a * b, 1);
}

/* An array's extent for a tile extent n: about n, smaller, larger, or tiny. */
static int extent_for(Gen *g, int n) {
  int e;
  switch (pg_rnd(g, 6)) {
    case 0: e = n; break;
    case 1: e = n + 1 + pg_rnd(g, 5); break;
    case 2: e = n / 2 + pg_rnd(g, 3); break;
    case 3: e = 1 + pg_rnd(g, 7); break;
    case 4: e = n * (1 + g->tile->ninst) + pg_rnd(g, 4); break;
    default: e = 2 * n + 3; break;
  }
  return e < 1 ? 1 : e > 6000 ? 6000 : e;
}

/* Declares kernel parameter k: an input array, a value or an output array. */
static void param(Gen *g, int kind, int k, ProgenLaunch *l) {
  PgTile *T = g->tile;
  static const Ty extra[] = {T_I32, T_F32, T_F64, T_BOOL, T_I64, T_U32};
  Ty t = pg_chance(g, 75) ? T->elem[pg_rnd(g, 2)] : extra[pg_rnd(g, 6)];
  char name[NAME];
  snprintf(name, NAME, "%s%d", kind == 0 ? "in" : kind == 1 ? "a" : "out", k);
  if (kind == 1) {
    pg_put(g, "%s %s", pg_tname(g, t), name);
    pg_add_var(g, name, t, false);
    return;
  }
  TArr *a = &T->arr[T->narr++];
  TTy s = T->shape[pg_rnd(g, MAX_SHAPES)];
  snprintf(a->name, NAME, "%s", name);
  a->t = t;
  a->ndim = s.rank;
  a->ext[0] = extent_for(g, s.d[0]);
  a->ext[1] = s.rank == 2 ? extent_for(g, s.d[1]) : 1;
  a->role = kind == 0                                                          ? ROLE_IN
            : pg_is_int(t) && atomic_ok(t) && T->ninst > 1 && pg_chance(g, 40) ? ROLE_ATOMIC
                                                                               : ROLE_OWNED;
  a->owner = pg_rnd(g, T->ninst);
  pg_put(g, "%s%s%s %s", kind == 0 ? "const " : "", pg_tname(g, t), s.rank == 2 ? "[,]" : "[]",
         name);
  if (l && k < PROGEN_MAX_PARAMS) l->shape[k][0] = a->ext[0], l->shape[k][1] = a->ext[1];
  if (kind == 0 && a->ndim == 1 && g->narrs < MAX_ARRS) { /* the scalar code reads it too */
    Arr *s = &g->arrs[g->narrs++];
    snprintf(s->name, NAME, "%s", name);
    s->t = t;
    s->ndim = 1;
    s->out = false;
  }
}

/* A check at the end of the kernel (taken back if it does not fit). */
static void last_check(Gen *g) {
  PgTile *T = g->tile;
  size_t mark = g->len;
  int nvars = g->nvars, checks = T->checks;
  long long cost = T->cost;
  pg_check_stmt(g);
  if (T->cost <= T->limit) return;
  g->len = mark, g->nvars = nvars, T->checks = checks, T->cost = cost;
}

/* One final store into each output array, so that every one is written. */
static void final_stores(Gen *g) {
  PgTile *T = g->tile;
  for (int k = 0; k < T->narr; k++) {
    const TArr *a = &T->arr[k];
    if (a->role == ROLE_IN) continue;
    size_t mark = g->len;
    long long cost = T->cost;
    unsigned called = T->called;
    for (int tries = 0; tries < 2; tries++) {
      bool guard = a->role == ROLE_OWNED && T->ninst > 1;
      if (guard) {
        pg_indent(g);
        pg_put(g, "if (i == %d) {\n", a->owner);
        g->indent++;
      }
      T->owner = a->role == ROLE_OWNED ? a->owner : -1;
      store(g, a, a->role == ROLE_ATOMIC, tries ? -1 : pg_depth(g));
      T->owner = -1;
      if (guard) {
        g->indent--;
        pg_indent(g);
        pg_put(g, "}\n");
      }
      if (T->cost <= T->limit) break;
      g->len = mark, T->cost = cost, T->called = called;
    }
  }
}

static void tile_kernel(Gen *g, int k) {
  PgTile *T = g->tile;
  T->elem[0] = kernel_elem(g);
  T->elem[1] = pg_chance(g, 30) ? T->elem[0] : kernel_elem(g);
  T->launch_rank = pg_chance(g, 25) ? 2 : 1;
  int dims[2] = {1 + pg_rnd(g, T->launch_rank == 2 ? 2 : 5),
                 T->launch_rank == 2 ? 1 + pg_rnd(g, 3) : 1};
  T->ninst = dims[0] * dims[1];
  shapes(g);
  scalar_functions(g);
  T->nhelp = 0;
  for (int h = pg_chance(g, 35); h > 0 && T->nhelp < MAX_HELPERS; h--) helper(g);
  pg_reset_scope(g, 1, 10 + pg_rnd(g, 14));
  g->own = NULL;
  g->callable = g->nfns;
  T->narr = 0;
  T->owner = -1;
  T->cost = 0;
  T->limit = SHARED_LIMIT;
  T->called = 0;
  ProgenLaunch *l = pg_launch(g);
  int kinds[MAX_TARRS], n = 0;
  for (int m = 1 + pg_rnd(g, 3); m > 0; m--) kinds[n++] = 0;
  for (int m = pg_rnd(g, 3); m > 0; m--) kinds[n++] = 1;
  for (int m = 1 + pg_rnd(g, 3); m > 0; m--) kinds[n++] = 2;
  for (int m = n - 1; m > 0; m--) { /* shuffle */
    int o = pg_rnd(g, m + 1), tmp = kinds[m];
    kinds[m] = kinds[o];
    kinds[o] = tmp;
  }
  if (l) {
    l->ndim = T->launch_rank;
    l->dims[0] = dims[0];
    l->dims[1] = dims[1];
    l->nparams = n;
  }
  pg_put(g, "\nkernel void %sk%d(", g->prefix, k);
  for (int m = 0; m < n; m++) {
    if (m) pg_put(g, ", ");
    param(g, kinds[m], m, l);
  }
  pg_put(g, ", int32[] chk) {\n    int i = tid();\n"); /* the checks' failures */
  if (l && n < PROGEN_MAX_PARAMS)
    l->nparams = n + 1, l->shape[n][0] = MAX_CHECKS, l->shape[n][1] = 1;
  T->checks = 0;
  pg_add_var(g, "i", T_I32, true);
  if (T->launch_rank == 2) {
    pg_put(g, "    int r = tid(0);\n    int c = tid(1);\n");
    pg_add_var(g, "r", T_I32, true);
    pg_add_var(g, "c", T_I32, true);
  }
  g->indent = 1;
  for (int m = 3 + pg_rnd(g, 6); m > 0; m--) pg_tile_stmt(g);
  for (int m = 1 + pg_rnd(g, 2); m > 0; m--) last_check(g);
  final_stores(g);
  pg_put(g, "}\n");
  g->indent = 0;
}

void pg_tile_program(Gen *g) {
  PgTile T = {.owner = -1};
  g->tile = &T;
  g->pure = true;
  for (int k = 0, n = 1 + pg_rnd(g, 2); k < n; k++) tile_kernel(g, k);
  g->tile = NULL;
}
