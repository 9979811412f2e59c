/* builtins.c: the builtin overload table (see builtins.h).
 *
 * Requires the builtin type singletons (types.c). Produces the table on first
 * use, under pthread_once, sorted by name (overloads of one name are
 * contiguous, in the order they are added below); it is never freed. Every
 * cname must exist in stdlib/kern_builtins.h with exactly these parameter and
 * return types: tests/test_stdlib.c compiles a call to each entry with the C
 * compilers and NVRTC, so adding a row here without its function breaks it.
 * If memory runs out while building, the table is empty (every call to a
 * builtin then fails overload resolution, nothing crashes).
 */
#include "builtins.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Row {
  Builtin b;
  int seq;
} Row;

static Builtin *table;
static int ntable;
static Row *rows;
static int nrows, caprows;
static bool failed;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* ---- type groups ----------------------------------------------------------- */

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

static Type *const floats[] = {&ty_f32, &ty_f64};
static Type *const fvecs[] = {&ty_vec2, &ty_vec3, &ty_vec4, &ty_dvec2, &ty_dvec3, &ty_dvec4};
static Type *const vecs[] = {&ty_vec2,  &ty_vec3,  &ty_vec4,  &ty_dvec2, &ty_dvec3,
                             &ty_dvec4, &ty_ivec2, &ty_ivec3, &ty_ivec4};
static Type *const mats[] = {&ty_mat22, &ty_mat33, &ty_mat44};
/* Scalars with min/max/clamp (narrower integers widen to these). */
static Type *const ordered[] = {&ty_f32, &ty_f64, &ty_i32, &ty_i64, &ty_u32, &ty_u64};
static Type *const signed_scalars[] = {&ty_f32, &ty_f64, &ty_i32, &ty_i64};

static Type *vec_elem(const Type *v) {
  if (v == &ty_dvec2 || v == &ty_dvec3 || v == &ty_dvec4) return &ty_f64;
  if (v == &ty_ivec2 || v == &ty_ivec3 || v == &ty_ivec4) return &ty_i32;
  return &ty_f32;
}

/* The float vector with as many components as matrix m has rows. */
static Type *mat_vec(const Type *m) {
  return m == &ty_mat22 ? &ty_vec2 : m == &ty_mat33 ? &ty_vec3 : &ty_vec4;
}

/* ---- building ------------------------------------------------------------- */

static const char *cname_of(const char *stem, int n, Type *const *ps) {
  size_t len = strlen(stem) + 4;
  for (int i = 0; i < n; i++) len += strlen(builtin_type_code(ps[i])) + 1;
  char *s = malloc(len);
  if (!s) return NULL;
  int at = snprintf(s, len, "kn_%s", stem);
  for (int i = 0; i < n; i++)
    at += snprintf(s + at, len - (size_t)at, "_%s", builtin_type_code(ps[i]));
  return s;
}

static void add_row(const char *name, const char *stem, Type *ret, int n, Type *const *ps) {
  if (failed) return;
  if (nrows == caprows) {
    int cap = caprows ? caprows * 2 : 512;
    Row *r = realloc(rows, (size_t)cap * sizeof *r);
    if (!r) {
      failed = true;
      return;
    }
    rows = r, caprows = cap;
  }
  Row *r = &rows[nrows];
  memset(r, 0, sizeof *r);
  r->b.name = name;
  r->b.cname = cname_of(stem, n, ps);
  r->b.ret = ret;
  r->b.nparams = n;
  for (int i = 0; i < n; i++) r->b.params[i] = ps[i];
  r->seq = nrows;
  if (!r->b.cname) {
    failed = true;
    return;
  }
  nrows++;
}

static void add1(const char *name, const char *stem, Type *ret, Type *a) {
  Type *ps[] = {a};
  add_row(name, stem, ret, 1, ps);
}
static void add2(const char *name, const char *stem, Type *ret, Type *a, Type *b) {
  Type *ps[] = {a, b};
  add_row(name, stem, ret, 2, ps);
}
static void add3(const char *name, const char *stem, Type *ret, Type *a, Type *b, Type *c) {
  Type *ps[] = {a, b, c};
  add_row(name, stem, ret, 3, ps);
}

/* ---- the entries ------------------------------------------------------------ */

static const char *const unary_math[] = {
    "sqrt", "rsqrt", "cbrt", "exp",  "exp2", "log",  "log2",  "log10", "sin",   "cos",  "tan",
    "asin", "acos",  "atan", "sinh", "cosh", "tanh", "floor", "ceil",  "round", "trunc"};
static const char *const binary_math[] = {"pow", "atan2", "fmod"};
static const char *const float_tests[] = {"isnan", "isinf", "isfinite"};

static void add_float_math(Type *t) {
  for (int i = 0; i < COUNT(unary_math); i++) add1(unary_math[i], unary_math[i], t, t);
  for (int i = 0; i < COUNT(binary_math); i++) add2(binary_math[i], binary_math[i], t, t, t);
}

/* abs sign min max clamp, and the interpolation family on floats. */
static void add_math(void) {
  for (int i = 0; i < COUNT(floats); i++) add_float_math(floats[i]);
  for (int i = 0; i < COUNT(fvecs); i++) add_float_math(fvecs[i]);
  for (int i = 0; i < COUNT(signed_scalars); i++) {
    add1("abs", "abs", signed_scalars[i], signed_scalars[i]);
    add1("sign", "sign", signed_scalars[i], signed_scalars[i]);
  }
  for (int i = 0; i < COUNT(vecs); i++) {
    add1("abs", "abs", vecs[i], vecs[i]);
    add1("sign", "sign", vecs[i], vecs[i]);
  }
  for (int i = 0; i < COUNT(ordered); i++) {
    Type *t = ordered[i];
    add2("min", "min", t, t, t);
    add2("max", "max", t, t, t);
    add3("clamp", "clamp", t, t, t, t);
  }
  for (int i = 0; i < COUNT(vecs); i++) {
    Type *v = vecs[i], *e = vec_elem(v);
    add2("min", "min", v, v, v);
    add2("max", "max", v, v, v);
    add3("clamp", "clamp", v, v, v, v);
    add3("clamp", "clamp", v, v, e, e);
  }
  for (int i = 0; i < COUNT(floats); i++) {
    Type *t = floats[i];
    add3("lerp", "lerp", t, t, t, t);
    add2("step", "step", t, t, t);
    add3("smoothstep", "smoothstep", t, t, t, t);
    for (int k = 0; k < COUNT(float_tests); k++) add1(float_tests[k], float_tests[k], &ty_bool, t);
  }
  for (int i = 0; i < COUNT(fvecs); i++) {
    Type *v = fvecs[i], *e = vec_elem(v);
    add3("lerp", "lerp", v, v, v, e);
    add3("lerp", "lerp", v, v, v, v);
    add2("step", "step", v, v, v);
    add2("step", "step", v, e, v);
    add3("smoothstep", "smoothstep", v, v, v, v);
    add3("smoothstep", "smoothstep", v, e, e, v);
  }
}

static void add_geometry(void) {
  for (int i = 0; i < COUNT(vecs); i++) add2("dot", "dot", vec_elem(vecs[i]), vecs[i], vecs[i]);
  add2("cross", "cross", &ty_vec3, &ty_vec3, &ty_vec3);
  add2("cross", "cross", &ty_dvec3, &ty_dvec3, &ty_dvec3);
  add2("cross", "cross", &ty_ivec3, &ty_ivec3, &ty_ivec3);
  for (int i = 0; i < COUNT(fvecs); i++) {
    Type *v = fvecs[i], *e = vec_elem(v);
    add1("length", "length", e, v);
    add1("length_sq", "length_sq", e, v);
    add1("normalize", "normalize", v, v);
    add2("distance", "distance", e, v, v);
  }
  for (int i = 0; i < COUNT(mats); i++) {
    Type *m = mats[i], *v = mat_vec(m);
    add2("outer", "outer", m, v, v);
    add1("transpose", "transpose", m, m);
    add1("determinant", "determinant", &ty_f32, m);
    add1("inverse", "inverse", m, m);
  }
  add2("quat_from_axis_angle", "quat_from_axis_angle", &ty_quat, &ty_vec3, &ty_f32);
  add2("quat_rotate", "quat_rotate", &ty_vec3, &ty_quat, &ty_vec3);
  add2("quat_mul", "quat_mul", &ty_quat, &ty_quat, &ty_quat);
}

/* stdlib/kern_math.h: special functions, rounding helpers, reductions. */
static const char *const float_unary_more[] = {"erf",  "erfc",    "erfinv", "rint",
                                               "frac", "degrees", "radians"};
static const char *const norms[] = {"norm_huber", "norm_pseudo_huber", "smooth_normalize"};

static void add_math_more(void) {
  for (int i = 0; i < COUNT(floats) + COUNT(fvecs); i++) {
    Type *t = i < COUNT(floats) ? floats[i] : fvecs[i - COUNT(floats)];
    for (int k = 0; k < COUNT(float_unary_more); k++)
      add1(float_unary_more[k], float_unary_more[k], t, t);
    add2("copysign", "copysign", t, t, t);
  }
  for (int i = 0; i < COUNT(ordered); i++) {
    add2("floordiv", "floordiv", ordered[i], ordered[i], ordered[i]);
    add1("nonzero", "nonzero", ordered[i], ordered[i]);
  }
  for (int i = 0; i < COUNT(vecs); i++) {
    Type *v = vecs[i], *e = vec_elem(v);
    add1("min", "min", e, v);
    add1("max", "max", e, v);
    add1("argmin", "argmin", &ty_i32, v);
    add1("argmax", "argmax", &ty_i32, v);
    add2("cw_mul", "cw_mul", v, v, v);
    add2("cw_div", "cw_div", v, v, v);
  }
  for (int i = 0; i < COUNT(fvecs); i++) {
    Type *v = fvecs[i], *e = vec_elem(v);
    add1("norm_l1", "norm_l1", e, v);
    add1("norm_l2", "norm_l2", e, v);
    for (int k = 0; k < COUNT(norms); k++) {
      Type *r = k == 2 ? v : e;
      add1(norms[k], norms[k], r, v);
      add2(norms[k], norms[k], r, v, e);
    }
    for (int k = 0; k < COUNT(float_tests); k++) add1(float_tests[k], float_tests[k], &ty_bool, v);
  }
  for (int i = 0; i < COUNT(mats); i++) {
    Type *m = mats[i], *v = mat_vec(m);
    add1("trace", "trace", &ty_f32, m);
    add1("diag", "diag", m, v);
    add1("get_diag", "get_diag", v, m);
    add2("ddot", "ddot", &ty_f32, m, m);
    add2("cw_mul", "cw_mul", m, m, m);
    add2("cw_div", "cw_div", m, m, m);
    for (int k = 0; k < COUNT(float_tests); k++) add1(float_tests[k], float_tests[k], &ty_bool, m);
  }
  add1("skew", "skew", &ty_mat33, &ty_vec3);
  for (int k = 0; k < COUNT(float_tests); k++)
    add1(float_tests[k], float_tests[k], &ty_bool, &ty_quat);
}

/* bitcast_T(x): x's bits as T, between floats and integers of one size. */
static void add_bitcasts(void) {
  static const struct {
    const char *name;
    Type *to, *from;
  } casts[] = {{"bitcast_float16", &ty_f16, &ty_i16},   {"bitcast_float16", &ty_f16, &ty_u16},
               {"bitcast_int16", &ty_i16, &ty_f16},     {"bitcast_uint16", &ty_u16, &ty_f16},
               {"bitcast_bfloat16", &ty_bf16, &ty_i16}, {"bitcast_bfloat16", &ty_bf16, &ty_u16},
               {"bitcast_int16", &ty_i16, &ty_bf16},    {"bitcast_uint16", &ty_u16, &ty_bf16},
               {"bitcast_float32", &ty_f32, &ty_i32},   {"bitcast_float32", &ty_f32, &ty_u32},
               {"bitcast_int32", &ty_i32, &ty_f32},     {"bitcast_uint32", &ty_u32, &ty_f32},
               {"bitcast_float64", &ty_f64, &ty_i64},   {"bitcast_float64", &ty_f64, &ty_u64},
               {"bitcast_int64", &ty_i64, &ty_f64},     {"bitcast_uint64", &ty_u64, &ty_f64}};
  for (int i = 0; i < COUNT(casts); i++)
    add1(casts[i].name, casts[i].name, casts[i].to, casts[i].from);
}

/* stdlib/kern_spatial.h: quaternions. */
static void add_quats(void) {
  Type *q = &ty_quat, *f = &ty_f32, *v3 = &ty_vec3;
  add2("dot", "dot", f, q, q);
  add1("length", "length", f, q);
  add1("length_sq", "length_sq", f, q);
  add1("normalize", "normalize", q, q);
  add1("inverse", "inverse", q, q);
  add1("conjugate", "conjugate", q, q);
  add1("quat_inverse", "quat_inverse", q, q);
  add3("lerp", "lerp", q, q, q, f);
  add3("quat_slerp", "quat_slerp", q, q, q, f);
  add2("quat_rotate_inv", "quat_rotate_inv", v3, q, v3);
  add1("quat_to_matrix", "quat_to_matrix", &ty_mat33, q);
  add1("quat_from_matrix", "quat_from_matrix", q, &ty_mat33);
  add1("quat_from_matrix", "quat_from_matrix", q, &ty_mat44);
  add1("quat_to_axis_angle", "quat_to_axis_angle", &ty_vec4, q);
  add3("quat_rpy", "quat_rpy", q, f, f, f);
  add2("quat_twist", "quat_twist", q, v3, q);
  add_row("quat_identity", "quat_identity", q, 0, NULL);
}

/* + - == != between two operands of one non-scalar type, and unary minus. */
static void add_same_type_ops(Type *t) {
  add2("op+", "add", t, t, t);
  add2("op-", "sub", t, t, t);
  add1("neg", "neg", t, t);
  add2("op==", "eq", &ty_bool, t, t);
  add2("op!=", "ne", &ty_bool, t, t);
}

static void add_operators(void) {
  for (int i = 0; i < COUNT(vecs); i++) {
    Type *v = vecs[i], *e = vec_elem(v);
    add_same_type_ops(v);
    add2("op*", "mul", v, v, v);
    add2("op*", "mul", v, v, e);
    add2("op*", "mul", v, e, v);
    add2("op/", "div", v, v, v);
    add2("op/", "div", v, v, e);
    add2("op/", "div", v, e, v);
  }
  for (int i = COUNT(fvecs); i < COUNT(vecs); i++) { /* the integer vectors */
    add2("op%", "mod", vecs[i], vecs[i], vecs[i]);
    add2("op%", "mod", vecs[i], vecs[i], &ty_i32);
  }
  for (int i = 0; i < COUNT(mats); i++) {
    Type *m = mats[i];
    add_same_type_ops(m);
    add2("op*", "mul", m, m, m);
    add2("op*", "mul", mat_vec(m), m, mat_vec(m));
    add2("op*", "mul", m, m, &ty_f32);
    add2("op*", "mul", m, &ty_f32, m);
    add2("op/", "div", m, m, &ty_f32);
    add2("op/", "div", m, &ty_f32, m);
  }
  add_same_type_ops(&ty_quat);
  add2("op*", "mul", &ty_quat, &ty_quat, &ty_f32);
  add2("op*", "mul", &ty_quat, &ty_f32, &ty_quat);
  add2("op/", "div", &ty_quat, &ty_quat, &ty_f32);
}

/* The types of &v arguments (outputs: see builtins.h), one object each. */
#define PTR(id, el, nm)                                                                            \
  static Type id = {.kind = TY_PTR, .size = 8, .align = 8, .elem = &el, .name = nm}
PTR(ptr_transform, ty_transform, "&transform");
PTR(ptr_vec2, ty_vec2, "&vec2");
PTR(ptr_vec3, ty_vec3, "&vec3");
PTR(ptr_mat22, ty_mat22, "&mat22");
PTR(ptr_mat33, ty_mat33, "&mat33");
#undef PTR

/* stdlib/kern_transform.h: rigid transforms (Warp's transform_* family). */
static void add_transforms(void) {
  Type *t = &ty_transform, *v3 = &ty_vec3, *q = &ty_quat, *m44 = &ty_mat44, *f = &ty_f32;
  add_row("transform_identity", "transform_identity", t, 0, NULL);
  add1("transform_get_translation", "transform_get_translation", v3, t);
  add1("transform_get_rotation", "transform_get_rotation", q, t);
  add2("transform_set_translation", "transform_set_translation", &ty_void, &ptr_transform, v3);
  add2("transform_set_rotation", "transform_set_rotation", &ty_void, &ptr_transform, q);
  add2("transform_multiply", "transform_multiply", t, t, t);
  add1("transform_inverse", "transform_inverse", t, t);
  add2("transform_point", "transform_point", v3, t, v3);
  add2("transform_point", "transform_point", v3, m44, v3);
  add2("transform_vector", "transform_vector", v3, t, v3);
  add2("transform_vector", "transform_vector", v3, m44, v3);
  add1("transform_from_matrix", "transform_from_matrix", t, m44);
  add1("transform_to_matrix", "transform_to_matrix", m44, t);
  add3("transform_compose", "transform_compose", m44, v3, q, v3);
  add3("lerp", "lerp", t, t, t, f);
  for (int k = 0; k < COUNT(float_tests); k++) add1(float_tests[k], float_tests[k], &ty_bool, t);
  add_same_type_ops(t);
  add2("op*", "mul", t, t, t);
  add2("op*", "mul", t, t, f);
  add2("op*", "mul", t, f, t);
}

/* stdlib/kern_spatial_algebra.h: spatial vectors and matrices. */
static void add_spatial(void) {
  Type *sv = &ty_svec, *sm = &ty_smat, *f = &ty_f32, *v3 = &ty_vec3, *t = &ty_transform;
  add_same_type_ops(sv);
  add2("op*", "mul", sv, sv, sv);
  add2("op*", "mul", sv, sv, f);
  add2("op*", "mul", sv, f, sv);
  add2("op/", "div", sv, sv, sv);
  add2("op/", "div", sv, sv, f);
  add_same_type_ops(sm);
  add2("op*", "mul", sm, sm, sm);
  add2("op*", "mul", sv, sm, sv);
  add2("op*", "mul", sm, sm, f);
  add2("op*", "mul", sm, f, sm);
  add2("op/", "div", sm, sm, f);
  add2("dot", "dot", f, sv, sv);
  add2("spatial_dot", "spatial_dot", f, sv, sv);
  add1("length", "length", f, sv);
  add1("length_sq", "length_sq", f, sv);
  add1("normalize", "normalize", sv, sv);
  add2("spatial_cross", "spatial_cross", sv, sv, sv);
  add2("spatial_cross_dual", "spatial_cross_dual", sv, sv, sv);
  add1("spatial_top", "spatial_top", v3, sv);
  add1("spatial_bottom", "spatial_bottom", v3, sv);
  add2("outer", "outer", sm, sv, sv);
  add1("transpose", "transpose", sm, sm);
  add2("spatial_adjoint", "spatial_adjoint", sm, &ty_mat33, &ty_mat33);
  add2("transform_twist", "transform_twist", sv, t, sv);
  add2("transform_wrench", "transform_wrench", sv, t, sv);
  add2("velocity_at_point", "velocity_at_point", v3, sv, v3);
  for (int k = 0; k < COUNT(float_tests); k++) {
    add1(float_tests[k], float_tests[k], &ty_bool, sv);
    add1(float_tests[k], float_tests[k], &ty_bool, sm);
  }
}

/* stdlib/kern_linalg.h: Warp's decompositions, results through &outputs. */
static void add_decompositions(void) {
  Type *m33 = &ty_mat33, *m22 = &ty_mat22;
  Type *svd3[] = {m33, &ptr_mat33, &ptr_vec3, &ptr_mat33};
  Type *svd2[] = {m22, &ptr_mat22, &ptr_vec2, &ptr_mat22};
  add_row("svd3", "svd3", &ty_void, 4, svd3);
  add_row("svd2", "svd2", &ty_void, 4, svd2);
  add3("qr3", "qr3", &ty_void, m33, &ptr_mat33, &ptr_mat33);
  add3("eig3", "eig3", &ty_void, m33, &ptr_mat33, &ptr_vec3);
}

/* stdlib/kern_noise.h: Warp's Perlin noise; the state is a uint32 seed. */
static void add_noise(void) {
  Type *u = &ty_u32, *i = &ty_i32, *f = &ty_f32;
  Type *const pts[] = {&ty_f32, &ty_vec2, &ty_vec3, &ty_vec4};
  for (int d = 0; d < 4; d++) {
    Type *ps[6] = {u, pts[d], i, i, i, i};
    add2("noise", "noise", f, u, pts[d]);
    add_row("pnoise", "pnoise", f, 3 + d, ps);
  }
  for (int d = 1; d < 4; d++) { /* curlnoise(state, x[, octaves[, lacunarity[, gain]]]) */
    Type *ps[5] = {u, pts[d], u, f, f}, *r = d == 1 ? &ty_vec2 : &ty_vec3;
    for (int n = 2; n <= 5; n++) add_row("curlnoise", "curlnoise", r, n, ps);
  }
}

/* ---- sorting and lookup ------------------------------------------------------ */

static int row_cmp(const void *a, const void *b) {
  const Row *x = a, *y = b;
  int c = strcmp(x->b.name, y->b.name);
  return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static void build(void) {
  add_math();
  add_geometry();
  add_operators();
  add_math_more();
  add_quats();
  add_bitcasts();
  add_transforms();
  add_spatial();
  add_decompositions();
  add_noise();
  if (!failed) table = malloc((size_t)(nrows ? nrows : 1) * sizeof *table);
  if (failed || !table) {
    for (int i = 0; i < nrows; i++) free((char *)rows[i].b.cname);
    free(rows);
    rows = NULL, nrows = 0;
    return;
  }
  qsort(rows, (size_t)nrows, sizeof *rows, row_cmp);
  for (int i = 0; i < nrows; i++) table[i] = rows[i].b;
  ntable = nrows;
  free(rows);
  rows = NULL;
}

static void ensure(void) { pthread_once(&table_once, build); }

int builtin_count(void) {
  ensure();
  return ntable;
}

/* Rows for vec<T, N> (builtin_intern): after the table, in chunks that never
 * move, so a Builtin pointer stays valid for the process. */
enum { XCHUNK = 256, XCHUNKS = 256 };
static Builtin *xrows[XCHUNKS];
static int nxrows;
static pthread_mutex_t xmu = PTHREAD_MUTEX_INITIALIZER;

const Builtin *builtin_get(int index) {
  ensure();
  if (index >= 0 && index < ntable) return &table[index];
  int i = index - ntable;
  pthread_mutex_lock(&xmu);
  const Builtin *b = index >= ntable && i < nxrows ? &xrows[i / XCHUNK][i % XCHUNK] : NULL;
  pthread_mutex_unlock(&xmu);
  return b;
}

static int find_xrow(const char *cname, const Type *ret) {
  for (int i = 0; i < nxrows; i++) {
    const Builtin *b = &xrows[i / XCHUNK][i % XCHUNK];
    if (b->ret == ret && strcmp(b->cname, cname) == 0) return ntable + i;
  }
  return -1;
}

static char *dup_text(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  return d ? memcpy(d, s, n) : NULL;
}

static int add_xrow(const char *name, const char *cname, Type *ret, int n, Type *const *ps) {
  int i = nxrows;
  if (i >= XCHUNK * XCHUNKS) return -1;
  if (!xrows[i / XCHUNK] && !(xrows[i / XCHUNK] = calloc(XCHUNK, sizeof(Builtin)))) return -1;
  Builtin *b = &xrows[i / XCHUNK][i % XCHUNK];
  b->name = dup_text(name);
  b->cname = dup_text(cname);
  if (!b->name || !b->cname) {
    free((char *)b->name);
    free((char *)b->cname);
    return -1;
  }
  b->ret = ret;
  b->nparams = n;
  for (int k = 0; k < n; k++) b->params[k] = ps[k];
  nxrows++;
  return ntable + i;
}

int builtin_intern(const char *name, const char *stem, Type *ret, int n, Type *const *ps) {
  ensure();
  if (n > BUILTIN_MAX_PARAMS) return -1;
  char *cname = (char *)cname_of(stem, n, ps);
  if (!cname) return -1;
  pthread_mutex_lock(&xmu);
  int i = find_xrow(cname, ret);
  if (i < 0) i = add_xrow(name, cname, ret, n, ps);
  pthread_mutex_unlock(&xmu);
  free(cname);
  return i;
}

/* Returns 0 and sets *first to -1 when no builtin has that name. */
int builtin_overloads(const char *name, int *first) {
  ensure();
  int lo = 0, hi = ntable;
  while (lo < hi) { /* the first entry whose name is >= name */
    int mid = lo + (hi - lo) / 2;
    if (strcmp(table[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  int end = lo;
  while (end < ntable && strcmp(table[end].name, name) == 0) end++;
  if (first) *first = end > lo ? lo : -1;
  return end - lo;
}

/* ---- type names ------------------------------------------------------------- */

/* vec<T, N>: "V" + T's code + "x" + N (Vf16x5), the C type kn_ before it. */
static char vecn_codes[VECN_COUNT][16];
static pthread_once_t vecn_once = PTHREAD_ONCE_INIT;

static void make_vecn_codes(void) {
  for (int i = 0; i < VECN_COUNT; i++) {
    Type *t = type_vecn_at(i);
    snprintf(vecn_codes[i], sizeof vecn_codes[i], "kn_V%sx%d", builtin_type_code(t->elem), t->n);
  }
}

static const char *vecn_name(const Type *t, bool ctype) {
  int i = type_vecn_index(t);
  if (i < 0) return NULL;
  pthread_once(&vecn_once, make_vecn_codes);
  return ctype ? vecn_codes[i] : vecn_codes[i] + 3;
}

/* mat<T, M, N>: "M" + T's code + "x" + M + "x" + N (Mf16x2x3), likewise. */
static char matn_codes[MATN_COUNT][20];
static pthread_once_t matn_once = PTHREAD_ONCE_INIT;

static void make_matn_codes(void) {
  for (int i = 0; i < MATN_COUNT; i++) {
    Type *t = type_matn_at(i);
    snprintf(matn_codes[i], sizeof matn_codes[i], "kn_M%sx%dx%d", builtin_type_code(t->elem),
             t->dims[0], t->dims[1]);
  }
}

static const char *matn_name(const Type *t, bool ctype) {
  int i = type_matn_index(t);
  if (i < 0) return NULL;
  pthread_once(&matn_once, make_matn_codes);
  return ctype ? matn_codes[i] : matn_codes[i] + 3;
}

static const char *vec_code(const Type *t) {
  static const char *const codes[3][3] = {
      {"v2", "v3", "v4"}, {"dv2", "dv3", "dv4"}, {"iv2", "iv3", "iv4"}};
  if (t == &ty_svec) return "sv";
  if (t->generic) return vecn_name(t, false);
  if (!t->elem || t->n < 2 || t->n > 4) return NULL;
  TypeKind k = t->elem->kind;
  int fam = k == TY_F32 ? 0 : k == TY_F64 ? 1 : k == TY_I32 ? 2 : -1;
  return fam < 0 ? NULL : codes[fam][t->n - 2];
}

static const char *vec_ctype(const Type *t) {
  static const char *const names[3][3] = {{"kn_vec2", "kn_vec3", "kn_vec4"},
                                          {"kn_dvec2", "kn_dvec3", "kn_dvec4"},
                                          {"kn_ivec2", "kn_ivec3", "kn_ivec4"}};
  const char *code = vec_code(t);
  if (t == &ty_svec) return "kn_spatial_vector";
  if (t->generic) return vecn_name(t, true);
  if (!code) return NULL;
  return names[code[0] == 'v' ? 0 : code[0] == 'd' ? 1 : 2][t->n - 2];
}

/* quat<T>: "q" (float32), "qh", "qbf", "qd"; the C type kn_quat, kn_quath ... */
static const char *quat_name(const Type *t, bool ctype) {
  static const char *const names[4][2] = {
      {"q", "kn_quat"}, {"qh", "kn_quath"}, {"qbf", "kn_quatbf"}, {"qd", "kn_quatd"}};
  TypeKind k = t->elem ? t->elem->kind : TY_F32;
  int i = k == TY_F16 ? 1 : k == TY_BF16 ? 2 : k == TY_F64 ? 3 : 0;
  return names[i][ctype];
}

/* &v argument types: "p" and the code of v's type; with ctype, the C pointer. */
static const char *ptr_code(const Type *t, bool ctype) {
  static const struct {
    const Type *elem;
    const char *code, *ctype;
  } ptrs[] = {{&ty_transform, "ptf", "kn_transform *"},
              {&ty_vec2, "pv2", "kn_vec2 *"},
              {&ty_vec3, "pv3", "kn_vec3 *"},
              {&ty_mat22, "pm22", "kn_mat22 *"},
              {&ty_mat33, "pm33", "kn_mat33 *"}};
  for (int i = 0; i < COUNT(ptrs); i++)
    if (t->elem == ptrs[i].elem) return ctype ? ptrs[i].ctype : ptrs[i].code;
  return NULL;
}

const char *builtin_type_code(const Type *t) {
  static const char *const mat_codes[3] = {"m22", "m33", "m44"};
  if (!t) return NULL;
  switch (t->kind) {
    case TY_BOOL: return "b";
    case TY_I8: return "i8";
    case TY_I16: return "i16";
    case TY_I32: return "i32";
    case TY_I64: return "i64";
    case TY_U8: return "u8";
    case TY_U16: return "u16";
    case TY_U32: return "u32";
    case TY_U64: return "u64";
    case TY_F16: return "f16";
    case TY_BF16: return "bf16";
    case TY_F32: return "f32";
    case TY_F64: return "f64";
    case TY_VEC: return vec_code(t);
    case TY_MAT:
      if (t->generic) return matn_name(t, false);
      return t->n == 6 ? "m66" : t->n >= 2 && t->n <= 4 ? mat_codes[t->n - 2] : NULL;
    case TY_QUAT: return quat_name(t, false);
    case TY_TRANSFORM: return "tf";
    case TY_PTR: return ptr_code(t, false);
    default: return NULL;
  }
}

const char *builtin_ctype(const Type *t) {
  static const char *const mat_names[3] = {"kn_mat22", "kn_mat33", "kn_mat44"};
  if (!t) return NULL;
  switch (t->kind) {
    case TY_BOOL: return "bool";
    case TY_I8: return "int8_t";
    case TY_I16: return "int16_t";
    case TY_I32: return "int32_t";
    case TY_I64: return "int64_t";
    case TY_U8: return "uint8_t";
    case TY_U16: return "uint16_t";
    case TY_U32: return "uint32_t";
    case TY_U64: return "uint64_t";
    case TY_F16: return "kn_f16";
    case TY_BF16: return "kn_bf16";
    case TY_F32: return "float";
    case TY_F64: return "double";
    case TY_VEC: return vec_ctype(t);
    case TY_MAT:
      if (t->generic) return matn_name(t, true);
      return t->n == 6 ? "kn_spatial_matrix" : t->n >= 2 && t->n <= 4 ? mat_names[t->n - 2] : NULL;
    case TY_QUAT: return quat_name(t, true);
    case TY_TRANSFORM: return "kn_transform";
    case TY_PTR: return ptr_code(t, true);
    default: return NULL;
  }
}
