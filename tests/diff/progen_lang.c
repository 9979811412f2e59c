/* progen_lang.c: the random generator's forms for generic functions,
 * reference parameters, local arrays, enums, and vectors and matrices of any
 * element type and size (see progen.h for what every program guarantees).
 *
 * Requires progen.c (progen_internal.h). Produces, for plain programs only:
 * the module-level declarations below (an enum and three generic functions,
 * named with the program's prefix), expressions that call the generic
 * functions with explicit types (any value type, the struct included) and
 * read the enumerators, and a statement that swaps two variables through
 * reference parameters. A generic function's instances are checked and
 * emitted once per type, so a program exercises several of them. Local
 * arrays are indexed at run time inside their bounds (k & 3, then % 3).
 * A scalar may come from a vec<T, N> (N up to 16, T any number type) or a
 * mat<T, M, N> of floats: componentwise arithmetic, min/max/argmax over the
 * components, slices, constant indices (negative ones too), dot, length and
 * matrix products, each read back as one component; or from a quat<T> of a
 * float T: sums, products with a scalar, quat_mul, quat_inverse, dot and
 * length.
 */
#include "progen_internal.h"

void pg_lang_decls(Gen *g) {
  const char *p = g->prefix;
  pg_put(g, "\nenum %sE { %sEA, %sEB = 5, %sEC, %sED = -3 };\n", p, p, p, p, p);
  pg_put(g, "T %sSel<T>(bool c, T a, T b) { return c ? a : b; }\n", p);
  pg_put(g,
         "T %sRot<T>(T a, T b, T c, int k) {\n"
         "    T l[3];\n"
         "    l[0] = a;\n"
         "    l[1] = b;\n"
         "    l[2] = c;\n"
         "    for (int s = 0; s < (k & 3); s++) {\n"
         "        T f = l[0];\n"
         "        l[0] = l[1];\n"
         "        l[1] = l[2];\n"
         "        l[2] = f;\n"
         "    }\n"
         "    return l[((k >> 2) & 3) %% 3];\n"
         "}\n",
         p);
  pg_put(g, "void %sSwap<T>(T &a, T &b) {\n    T t = a;\n    a = b;\n    b = t;\n}\n", p);
  g->lang = true;
}

/* An int32 from the enum: an enumerator, or a cast through the enum's name. */
static void enum_expr(Gen *g, int d) {
  if (pg_chance(g, 60)) {
    pg_put(g, "%sE%c", g->prefix, "ABCD"[pg_rnd(g, 4)]);
    return;
  }
  pg_put(g, "%sE(", g->prefix);
  pg_expr(g, T_I32, d - 1, 0);
  pg_put(g, ")");
}

/* vec<T, n>(...): a splat of one expression or n components. */
static void vecn(Gen *g, Ty t, int n, int d) {
  pg_put(g, "vec<%s, %d>(", pg_tname(g, t), n);
  int parts = pg_chance(g, 50) ? 1 : n;
  for (int k = 0; k < parts; k++) {
    if (k) pg_put(g, ", ");
    pg_expr(g, t, k ? 0 : d - 1, 0);
  }
  pg_put(g, ")");
}

/* mat<T, r, c>(...): a splat, or r * c components (constants after the first). */
static void matn(Gen *g, Ty t, int r, int c, int d) {
  pg_put(g, "mat<%s, %d, %d>(", pg_tname(g, t), r, c);
  int parts = pg_chance(g, 50) ? 1 : r * c;
  for (int k = 0; k < parts; k++) {
    if (k) pg_put(g, ", ");
    pg_expr(g, t, k ? 0 : d - 1, 0);
  }
  pg_put(g, ")");
}

/* A component of vec<T, n>: [k] with k in [0, n) or in [-n, 0). */
static void component(Gen *g, int n) {
  int k = pg_rnd(g, n);
  pg_put(g, "[%d]", pg_chance(g, 25) ? k - n : k);
}

/* quat<t>(x, y, z, w): one expression, then constants. */
static void quatn(Gen *g, Ty t, int d) {
  pg_put(g, "quat<%s>(", pg_tname(g, t));
  for (int k = 0; k < 4; k++) {
    if (k) pg_put(g, ", ");
    pg_expr(g, t, k ? 0 : d - 1, 0);
  }
  pg_put(g, ")");
}

/* A float of type t read from a quat<t> expression: a sum or difference, a
 * product with a scalar, quat_mul, the inverse, a dot product or a length. */
static void quatn_expr(Gen *g, Ty t, int d) {
  int r = pg_rnd(g, 6);
  if (r == 4 || r == 5) {
    pg_put(g, r == 4 ? "dot(" : "length(");
    quatn(g, t, d);
    if (r == 4) {
      pg_put(g, ", ");
      quatn(g, t, d);
    }
    pg_put(g, ")");
    return;
  }
  pg_put(g, r == 2 ? "quat_mul(" : r == 3 ? "quat_inverse(" : "(");
  quatn(g, t, d);
  if (r == 0) {
    pg_put(g, pg_chance(g, 50) ? " + " : " - ");
    quatn(g, t, d);
  } else if (r == 1) {
    pg_put(g, " * ");
    pg_expr(g, t, d - 1, 0);
  } else if (r == 2) {
    pg_put(g, ", ");
    quatn(g, t, d);
  }
  pg_put(g, ")");
  component(g, 4);
}

/* A scalar of type t read from a vec<t, N> or mat<t, M, N> expression. */
static bool vecn_expr(Gen *g, Ty t, int d) {
  if (!pg_numeric(t)) return false;
  if (pg_is_float(t) && pg_chance(g, 20)) {
    quatn_expr(g, t, d);
    return true;
  }
  int n = pg_chance(g, 20) ? 9 + pg_rnd(g, 8) : 1 + pg_rnd(g, 8);
  static const char ops[] = "+-*";
  switch (pg_rnd(g, pg_is_float(t) ? 6 : 4)) {
    case 0: /* componentwise arithmetic */
      pg_put(g, "(");
      vecn(g, t, n, d);
      pg_put(g, " %c ", ops[pg_rnd(g, 3)]);
      vecn(g, t, n, d);
      pg_put(g, ")");
      component(g, n);
      return true;
    case 1: pg_put(g, pg_chance(g, 50) ? "max(" : "min("); break;
    case 2: { /* a slice, then one of its components */
      int lo = pg_rnd(g, n), hi = lo + 1 + pg_rnd(g, n - lo);
      vecn(g, t, n, d);
      pg_put(g, "[%d:%d]", lo, hi);
      component(g, hi - lo);
      return true;
    }
    case 3: /* the index of the largest or smallest component */
      pg_put(g, "%s(%s(", pg_tname(g, t), pg_chance(g, 50) ? "argmax" : "argmin");
      vecn(g, t, n, d);
      pg_put(g, "))");
      return true;
    case 4:
      pg_put(g, "dot(");
      vecn(g, t, n, d);
      pg_put(g, ", ");
      vecn(g, t, n, d);
      pg_put(g, ")");
      return true;
    default: { /* (M x K) * (K x N), or a matrix times a vector */
      int r = 1 + pg_rnd(g, 4), k = 1 + pg_rnd(g, 4), c = 1 + pg_rnd(g, 4);
      pg_put(g, "(");
      matn(g, t, r, k, d);
      pg_put(g, " * ");
      if (pg_chance(g, 30)) {
        vecn(g, t, k, d);
        pg_put(g, ")");
        component(g, r);
        return true;
      }
      matn(g, t, k, c, d);
      pg_put(g, ")[%d][%d]", pg_rnd(g, r), pg_rnd(g, c));
      return true;
    }
  }
  vecn(g, t, n, d); /* min or max over the components */
  pg_put(g, ")");
  return true;
}

bool pg_lang_expr(Gen *g, Ty t, int d) {
  if (!g->lang || g->tile) return false;
  if (pg_chance(g, 50) && vecn_expr(g, t, d)) return true;
  if (t == T_I32 && pg_chance(g, 30)) {
    enum_expr(g, d);
    return true;
  }
  const char *tn = pg_tname(g, t);
  if (pg_chance(g, 50)) {
    pg_put(g, "%sSel<%s>(", g->prefix, tn);
    pg_expr(g, T_BOOL, d - 1, 0);
  } else {
    pg_put(g, "%sRot<%s>(", g->prefix, tn);
    for (int k = 0; k < 2; k++) {
      pg_expr(g, t, d - 1, 0);
      pg_put(g, ", ");
    }
    pg_expr(g, t, d - 1, 0);
    pg_put(g, ", ");
    pg_expr(g, T_I32, d - 1, 0);
    pg_put(g, ")");
    return true;
  }
  for (int k = 0; k < 2; k++) {
    pg_put(g, ", ");
    pg_expr(g, t, d - 1, 0);
  }
  pg_put(g, ")");
  return true;
}

bool pg_lang_stmt(Gen *g) {
  if (!g->lang || g->tile) return false;
  const Var *a = NULL, *b = NULL;
  for (int tries = 0; tries < 4 && !b; tries++) {
    a = g->nvars ? &g->vars[pg_rnd(g, g->nvars)] : NULL;
    if (!a || a->ro) continue;
    int n = 0;
    for (int k = 0; k < g->nvars; k++)
      if (&g->vars[k] != a && g->vars[k].t == a->t && !g->vars[k].ro && pg_rnd(g, ++n) == 0)
        b = &g->vars[k];
  }
  if (!b) return false;
  pg_indent(g);
  pg_put(g, "%sSwap(%s, %s);\n", g->prefix, a->name, b->name);
  return true;
}
