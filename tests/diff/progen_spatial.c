/* progen_spatial.c: the random generator's forms for transforms and the
 * spatial algebra (see progen.h for what every program guarantees).
 *
 * Requires progen.c (progen_internal.h). Produces expressions only, of the
 * types progen.c asks for (float32, vec3), built from its own expressions:
 * transform(vec3, quat) acting on a vec3, products with an inverse, and
 * spatial vectors made of two vec3 through dot, cross products and
 * identity(6); and statements: the decompositions (svd3 ...) into new locals.
 * All of it is + - * / and sqrt: the same bits on every device.
 */
#include "progen_internal.h"

/* spatial_vector(w, v) of two vec3 expressions. */
static void spatial_vec(Gen *g, int d) {
  pg_put(g, "spatial_vector(");
  pg_expr(g, T_VEC3, d - 1, 0);
  pg_put(g, ", ");
  pg_expr(g, T_VEC3, d - 1, 0);
  pg_put(g, ")");
}

/* A float32 or vec3 out of the spatial algebra of two spatial vectors:
 * OUTER INNER sv SEP sv CLOSE, e.g. spatial_top(spatial_cross(a, b)). */
void pg_spatial_expr(Gen *g, Ty t, int d) {
  static const struct {
    const char *outer, *inner, *sep, *close;
  } forms[] = {
      /* float32 */
      {"spatial_dot(", "", ", ", ")"},
      {"dot(", "", ", ", ")"},
      {"length(", "spatial_cross_dual(", ", ", "))"},
      /* vec3 */
      {"spatial_top(", "spatial_cross(", ", ", "))"},
      {"spatial_bottom(", "(identity(6) * ", " + ", "))"},
      {"velocity_at_point(", "", ", ", ")"}, /* its second operand: a vec3 */
  };
  int f = 3 * (t == T_VEC3) + pg_rnd(g, 3);
  pg_put(g, "%s%s", forms[f].outer, forms[f].inner);
  spatial_vec(g, d);
  pg_put(g, "%s", forms[f].sep);
  if (f == 5)
    pg_expr(g, T_VEC3, d - 1, 0);
  else
    spatial_vec(g, d);
  pg_put(g, "%s", forms[f].close);
}

/* A vec3 through a transform made of a vec3 and a quat (not always a unit
 * one: the formulas are defined for any), or the spatial algebra. */
void pg_xform_vec3(Gen *g, int d) {
  static const char *const fns[] = {"transform_point(", "transform_vector(", "("};
  if (!g->tile && pg_chance(g, 40)) { /* tiled programs keep their stream */
    pg_spatial_expr(g, T_VEC3, d);
    return;
  }
  int f = pg_rnd(g, 3);
  pg_put(g, "%stransform(", fns[f]);
  pg_expr(g, T_VEC3, d - 1, 0);
  pg_put(g, ", ");
  pg_expr(g, T_QUAT, d - 1, 0);
  if (f == 2) {
    pg_put(g, ") * transform_inverse(transform(");
    pg_expr(g, T_VEC3, d - 1, 0);
    pg_put(g, ", ");
    pg_expr(g, T_QUAT, d - 1, 0);
    pg_put(g, "))).p");
    return;
  }
  pg_put(g, "), ");
  pg_expr(g, T_VEC3, d - 1, 0);
  pg_put(g, ")");
}

/* A decomposition of a new matrix into new locals. */
void pg_decomposition_stmt(Gen *g) {
  static const struct {
    const char *name;
    Ty in, out[3];
    int nout;
  } forms[] = {
      {"svd3", T_MAT33, {T_MAT33, T_VEC3, T_MAT33}, 3},
      {"svd2", T_MAT22, {T_MAT22, T_VEC2, T_MAT22}, 3},
      {"qr3", T_MAT33, {T_MAT33, T_MAT33}, 2},
      {"eig3", T_MAT33, {T_MAT33, T_VEC3}, 2},
  };
  int f = pg_rnd(g, 4);
  char names[3][NAME];
  for (int k = 0; k < forms[f].nout; k++) {
    Ty t = forms[f].out[k];
    pg_fresh(g, names[k], "v");
    pg_indent(g);
    pg_put(g, "%s %s = ", pg_ti(t)->name, names[k]);
    pg_expr(g, t, pg_depth(g), 0);
    pg_put(g, ";\n");
    pg_add_var(g, names[k], t, false);
  }
  pg_indent(g);
  pg_put(g, "%s(", forms[f].name);
  pg_expr(g, forms[f].in, pg_depth(g), 0);
  for (int k = 0; k < forms[f].nout; k++) pg_put(g, ", &%s", names[k]);
  pg_put(g, ");\n");
}
