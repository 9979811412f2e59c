/* test_stdlib_table.c: the builtin table (frontend/builtins.c) against
 * stdlib/kern_builtins.h: type codes, C types and names follow the rules, the
 * families kern documents are present, and every entry and helper compiles
 * with the C compilers on PATH and with NVRTC (skipped with a message when
 * libnvrtc cannot be loaded).
 *
 * Requires KERN_SOURCE_DIR (the header texts, pasted into generated test
 * translation units). test_stdlib.c checks the functions' values.
 */
#include <criterion/criterion.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins.h"
#include "harness.h"
#include "stdlib/parts.h"
/* ===== the builtin table ================================================= */

static const char *stem_of(const char *name) {
  static const char *const ops[][2] = {{"op+", "add"}, {"op-", "sub"}, {"op*", "mul"},
                                       {"op/", "div"}, {"neg", "neg"}, {"op==", "eq"},
                                       {"op!=", "ne"}, {"op%", "mod"}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(name, ops[i][0]) == 0) return ops[i][1];
  return name;
}

Test(table, type_codes_and_ctypes) {
  struct {
    Type *t;
    const char *code, *ctype;
  } want[] = {{&ty_bool, "b", "bool"},
              {&ty_i8, "i8", "int8_t"},
              {&ty_i16, "i16", "int16_t"},
              {&ty_i32, "i32", "int32_t"},
              {&ty_i64, "i64", "int64_t"},
              {&ty_u8, "u8", "uint8_t"},
              {&ty_u16, "u16", "uint16_t"},
              {&ty_u32, "u32", "uint32_t"},
              {&ty_u64, "u64", "uint64_t"},
              {&ty_f16, "f16", "kn_f16"},
              {&ty_bf16, "bf16", "kn_bf16"},
              {&ty_f32, "f32", "float"},
              {&ty_f64, "f64", "double"},
              {&ty_vec2, "v2", "kn_vec2"},
              {&ty_vec3, "v3", "kn_vec3"},
              {&ty_vec4, "v4", "kn_vec4"},
              {&ty_dvec2, "dv2", "kn_dvec2"},
              {&ty_dvec3, "dv3", "kn_dvec3"},
              {&ty_dvec4, "dv4", "kn_dvec4"},
              {&ty_ivec2, "iv2", "kn_ivec2"},
              {&ty_ivec3, "iv3", "kn_ivec3"},
              {&ty_ivec4, "iv4", "kn_ivec4"},
              {&ty_mat22, "m22", "kn_mat22"},
              {&ty_mat33, "m33", "kn_mat33"},
              {&ty_mat44, "m44", "kn_mat44"},
              {&ty_quat, "q", "kn_quat"},
              {&ty_transform, "tf", "kn_transform"},
              {&ty_svec, "sv", "kn_spatial_vector"},
              {&ty_smat, "m66", "kn_spatial_matrix"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cr_assert_str_eq(builtin_type_code(want[i].t), want[i].code);
    cr_assert_str_eq(builtin_ctype(want[i].t), want[i].ctype);
  }
  Type *none[] = {&ty_void, &ty_untyped_int, &ty_untyped_float, &ty_string, &ty_error, NULL};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
    cr_assert_null(builtin_type_code(none[i]));
    cr_assert_null(builtin_ctype(none[i]));
  }
}

Test(table, names_grouped_and_cnames_follow_the_rule) {
  int n = builtin_count();
  cr_assert_gt(n, 450);
  cr_assert_null(builtin_get(-1));
  cr_assert_null(builtin_get(n));
  for (int i = 0; i < n; i++) {
    const Builtin *b = builtin_get(i);
    char want[256];
    int at = snprintf(want, sizeof want, "kn_%s", stem_of(b->name));
    cr_assert(b->nparams >= 0 && b->nparams <= BUILTIN_MAX_PARAMS && b->ret);
    for (int k = 0; k < b->nparams; k++)
      at += snprintf(want + at, sizeof want - at, "_%s", builtin_type_code(b->params[k]));
    cr_assert_str_eq(b->cname, want);
    int first = -2, cnt = builtin_overloads(b->name, &first);
    cr_assert(first <= i && i < first + cnt, "%s not in its group", b->name);
    for (int k = first; k < first + cnt; k++) {
      cr_assert_str_eq(builtin_get(k)->name, b->name);
      if (k != i) cr_assert_str_neq(builtin_get(k)->cname, b->cname, "duplicate %s", b->cname);
    }
    if (first > 0) cr_assert_str_neq(builtin_get(first - 1)->name, b->name);
    if (first + cnt < n) cr_assert_str_neq(builtin_get(first + cnt)->name, b->name);
  }
  int first = 5;
  cr_assert_eq(builtin_overloads("no_such_builtin", &first), 0);
  cr_assert_eq(first, -1);
  cr_assert_eq(builtin_overloads("tid", &first), 0);
}

/* The entry (name, ret, params...) exists. */
static bool has(const char *name, Type *ret, int n, Type *p0, Type *p1, Type *p2) {
  int first, cnt = builtin_overloads(name, &first);
  Type *ps[3] = {p0, p1, p2};
  for (int i = first; i < first + cnt; i++) {
    const Builtin *b = builtin_get(i);
    bool same = b->ret == ret && b->nparams == n;
    for (int k = 0; k < n && same; k++) same = b->params[k] == ps[k];
    if (same) return true;
  }
  return false;
}

static Type *elem_of(Type *v) {
  if (v->kind != TY_VEC) return v;
  return v == &ty_dvec2 || v == &ty_dvec3 || v == &ty_dvec4   ? &ty_f64
         : v == &ty_ivec2 || v == &ty_ivec3 || v == &ty_ivec4 ? &ty_i32
                                                              : &ty_f32;
}

Test(table, required_families_present) {
  static const char *unary[] = {"sqrt", "rsqrt", "cbrt", "exp",   "exp2",  "log",  "log2", "log10",
                                "sin",  "cos",   "tan",  "asin",  "acos",  "atan", "sinh", "cosh",
                                "tanh", "floor", "ceil", "round", "trunc", "abs",  "sign"};
  Type *fl[] = {&ty_f32, &ty_f64, &ty_vec2, &ty_vec3, &ty_vec4, &ty_dvec2, &ty_dvec3, &ty_dvec4};
  Type *iv[] = {&ty_ivec2, &ty_ivec3, &ty_ivec4};
  for (size_t f = 0; f < sizeof fl / sizeof fl[0]; f++) {
    Type *t = fl[f], *e = elem_of(t);
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
      cr_assert(has(unary[i], t, 1, t, 0, 0), "%s %s", unary[i], t->name);
    cr_assert(has("pow", t, 2, t, t, 0) && has("atan2", t, 2, t, t, 0) &&
              has("fmod", t, 2, t, t, 0));
    cr_assert(has("min", t, 2, t, t, 0) && has("max", t, 2, t, t, 0) &&
              has("clamp", t, 3, t, t, t));
    cr_assert(has("lerp", t, 3, t, t, e) && has("step", t, 2, t, t, 0) &&
              has("smoothstep", t, 3, t, t, t));
    if (t->kind == TY_VEC) {
      cr_assert(has("clamp", t, 3, t, e, e) && has("dot", e, 2, t, t, 0) &&
                has("length", e, 1, t, 0, 0));
      cr_assert(has("length_sq", e, 1, t, 0, 0) && has("normalize", t, 1, t, 0, 0) &&
                has("distance", e, 2, t, t, 0));
      cr_assert(has("op*", t, 2, t, e, 0) && has("op*", t, 2, e, t, 0) &&
                has("op/", t, 2, t, e, 0));
    } else {
      cr_assert(has("isnan", &ty_bool, 1, t, 0, 0) && has("isinf", &ty_bool, 1, t, 0, 0) &&
                has("isfinite", &ty_bool, 1, t, 0, 0));
    }
  }
  for (size_t i = 0; i < 3; i++) {
    Type *t = iv[i];
    cr_assert(has("abs", t, 1, t, 0, 0) && has("sign", t, 1, t, 0, 0) && has("min", t, 2, t, t, 0));
    cr_assert(has("clamp", t, 3, t, &ty_i32, &ty_i32) && has("dot", &ty_i32, 2, t, t, 0));
    cr_assert(has("op/", t, 2, t, t, 0) && has("op*", t, 2, &ty_i32, t, 0) &&
              has("neg", t, 1, t, 0, 0));
    cr_assert(has("op==", &ty_bool, 2, t, t, 0) && has("op!=", &ty_bool, 2, t, t, 0));
    cr_assert(!has("sqrt", t, 1, t, 0, 0) && !has("length", &ty_i32, 1, t, 0, 0));
  }
  Type *ints[] = {&ty_i32, &ty_i64, &ty_u32, &ty_u64};
  for (int i = 0; i < 4; i++)
    cr_assert(has("min", ints[i], 2, ints[i], ints[i], 0) &&
              has("clamp", ints[i], 3, ints[i], ints[i], ints[i]));
  cr_assert(has("abs", &ty_i32, 1, &ty_i32, 0, 0) && !has("abs", &ty_u32, 1, &ty_u32, 0, 0));
  cr_assert(has("isnan", &ty_bool, 1, &ty_vec3, 0, 0) &&
            !has("isnan", &ty_bool, 1, &ty_ivec3, 0, 0));
  cr_assert(has("op%", &ty_ivec3, 2, &ty_ivec3, &ty_i32, 0) &&
            !has("op%", &ty_vec3, 2, &ty_vec3, &ty_vec3, 0));
  cr_assert(has("quat_identity", &ty_quat, 0, 0, 0, 0) &&
            has("erf", &ty_dvec2, 1, &ty_dvec2, 0, 0));
  Type *m[] = {&ty_mat22, &ty_mat33, &ty_mat44}, *mv[] = {&ty_vec2, &ty_vec3, &ty_vec4};
  for (int i = 0; i < 3; i++) {
    cr_assert(has("op*", m[i], 2, m[i], m[i], 0) && has("op*", mv[i], 2, m[i], mv[i], 0));
    cr_assert(has("op*", m[i], 2, m[i], &ty_f32, 0) && has("op*", m[i], 2, &ty_f32, m[i], 0));
    cr_assert(has("op+", m[i], 2, m[i], m[i], 0) && has("op-", m[i], 2, m[i], m[i], 0) &&
              has("neg", m[i], 1, m[i], 0, 0));
    cr_assert(has("transpose", m[i], 1, m[i], 0, 0) && has("inverse", m[i], 1, m[i], 0, 0));
    cr_assert(has("determinant", &ty_f32, 1, m[i], 0, 0) && has("outer", m[i], 2, mv[i], mv[i], 0));
    cr_assert(has("op==", &ty_bool, 2, m[i], m[i], 0));
  }
  cr_assert(has("cross", &ty_vec3, 2, &ty_vec3, &ty_vec3, 0) &&
            has("cross", &ty_ivec3, 2, &ty_ivec3, &ty_ivec3, 0));
  cr_assert(has("cross", &ty_dvec3, 2, &ty_dvec3, &ty_dvec3, 0));
  cr_assert(has("quat_from_axis_angle", &ty_quat, 2, &ty_vec3, &ty_f32, 0));
  cr_assert(has("quat_rotate", &ty_vec3, 2, &ty_quat, &ty_vec3, 0) &&
            has("quat_mul", &ty_quat, 2, &ty_quat, &ty_quat, 0));
  cr_assert(has("op==", &ty_bool, 2, &ty_quat, &ty_quat, 0) &&
            !has("op*", &ty_quat, 2, &ty_quat, &ty_quat, 0));
}

/* ---- compiling every entry with the C compilers and NVRTC -------------------- */

/* A growable string. */
typedef struct Buf {
  char *s;
  size_t n, cap;
} Buf;
static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Buf *b, const char *fmt, ...) {
  va_list ap;
  if (!b->s) b->s = malloc(b->cap = 1 << 16);
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k) * 2 + 4096;
    b->s = realloc(b->s, b->cap);
  }
}

static void put_headers(Buf *b) {
  for (int i = 0; i < KT_STDLIB_NPARTS; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KERN_SOURCE_DIR, kt_stdlib_parts[i]);
    char *text = th_read_file(path, NULL);
    cr_assert(text, "cannot read %s", path);
    put(b, "%s\n", text);
    free(text);
  }
}

/* Exact signature checks: _Generic in C, a tiny is_same in C++. */
static void put_sig_macro(Buf *b, bool cxx) {
  if (cxx)
    put(b, "template <class A, class B> struct kt_same { static const bool v = false; };\n"
           "template <class A> struct kt_same<A, A> { static const bool v = true; };\n"
           "#define KT_SIG(f, ...) static_assert(kt_same<decltype(&f), __VA_ARGS__>::v, #f);\n");
  else
    put(b,
        "#define KT_SIG(f, ...) _Static_assert(_Generic(&f, __VA_ARGS__: 1, default: 0), #f);\n");
}

static const char *zero_of(const Type *t, char *buf, size_t n) {
  if (t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT || t->kind == TY_TRANSFORM)
    snprintf(buf, n, "kn_zero_%s()", builtin_type_code(t));
  else if (t->kind == TY_F16) /* a struct of its bits (bitcast_int16's parameter) */
    snprintf(buf, n, "kn__f16(0u)");
  else if (t->kind == TY_BF16)
    snprintf(buf, n, "kn__bf16(0u)");
  else
    snprintf(buf, n, "(%s)0", builtin_ctype(t));
  return buf;
}

/* A call of entry e with zero arguments; an output (pointer) parameter gets
 * the address of a zeroed local. Outputs return void. */
static void put_entry(Buf *b, int i, const Builtin *e) {
  char z[64];
  bool is_void = e->ret->kind == TY_VOID;
  put(b, "void kt_%d(void) {\n", i);
  for (int k = 0; k < e->nparams; k++) {
    const Type *p = e->params[k];
    if (p->kind == TY_PTR) {
      put(b, "  %s o%d = %s;\n", builtin_ctype(p->elem), k, zero_of(p->elem, z, sizeof z));
      put(b, "  %s a%d = &o%d;\n", builtin_ctype(p), k, k);
    } else {
      put(b, "  %s a%d = %s;\n", builtin_ctype(p), k, zero_of(p, z, sizeof z));
    }
  }
  put(b, "  KT_SIG(%s, %s (*)(", e->cname, is_void ? "void" : builtin_ctype(e->ret));
  for (int k = 0; k < e->nparams; k++) put(b, "%s%s", k ? ", " : "", builtin_ctype(e->params[k]));
  if (is_void)
    put(b, "))\n  %s(", e->cname);
  else
    put(b, "))\n  %s r = %s(", builtin_ctype(e->ret), e->cname);
  for (int k = 0; k < e->nparams; k++) put(b, "%sa%d", k ? ", " : "", k);
  put(b, is_void ? ");\n}\n" : ");\n  (void)r;\n}\n");
}

static char *entries_unit(bool cxx) {
  Buf b = {0};
  put_headers(&b);
  put_sig_macro(&b, cxx);
  int n = builtin_count();
  for (int i = 0; i < n; i++) put_entry(&b, i, builtin_get(i));
  if (cxx) {
    put(&b, "extern \"C\" __global__ void kt_all(void) {\n");
    for (int i = 0; i < n; i++) put(&b, "  kt_%d();\n", i);
    put(&b, "}\n");
  }
  return b.s;
}

/* Special-form helpers and the other names the emitter calls directly. */
static void put_helpers(Buf *b, bool cxx) {
  static const char *const scal[][2] = {{"i32", "int32_t"}, {"u32", "uint32_t"},
                                        {"i64", "int64_t"}, {"u64", "uint64_t"},
                                        {"f32", "float"},   {"f64", "double"}};
  static const char *const vecs[][3] = {
      {"v2", "kn_vec2", "float"},     {"v3", "kn_vec3", "float"},
      {"v4", "kn_vec4", "float"},     {"dv2", "kn_dvec2", "double"},
      {"dv3", "kn_dvec3", "double"},  {"dv4", "kn_dvec4", "double"},
      {"iv2", "kn_ivec2", "int32_t"}, {"iv3", "kn_ivec3", "int32_t"},
      {"iv4", "kn_ivec4", "int32_t"}};
  static const char *const ints[][2] = {
      {"i8", "int8_t"},  {"i16", "int16_t"},  {"i32", "int32_t"},  {"i64", "int64_t"},
      {"u8", "uint8_t"}, {"u16", "uint16_t"}, {"u32", "uint32_t"}, {"u64", "uint64_t"}};
  put(b, "void kh_atomics(void *mem) {\n");
  for (int i = 0; i < 6; i++) {
    const char *c = scal[i][0], *t = scal[i][1];
    put(b, "  { %s *p = (%s *)mem; %s v = 0;\n", t, t, t);
    for (int k = 0; k < 5; k++) {
      static const char *const ops[] = {"add", "sub", "min", "max", "exch"};
      put(b, "    KT_SIG(kn_atomic_%s_%s, %s (*)(%s *, %s)) v = kn_atomic_%s_%s(p, v);\n", ops[k],
          c, t, t, t, ops[k], c);
    }
    if (c[0] != 'f')
      for (int k = 0; k < 3; k++) {
        static const char *const ops[] = {"and", "or", "xor"};
        put(b, "    KT_SIG(kn_atomic_%s_%s, %s (*)(%s *, %s)) v = kn_atomic_%s_%s(p, v);\n", ops[k],
            c, t, t, t, ops[k], c);
      }
    put(b,
        "    KT_SIG(kn_atomic_cas_%s, %s (*)(%s *, %s, %s)) v = kn_atomic_cas_%s(p, v, v); "
        "(void)v; }\n",
        c, t, t, t, t, c);
  }
  for (int i = 0; i < 9; i++) {
    const char *c = vecs[i][0], *t = vecs[i][1];
    put(b, "  { %s *p = (%s *)mem; %s v = kn_zero_%s();\n", t, t, t, c);
    for (int k = 0; k < 4; k++) {
      static const char *const ops[] = {"add", "sub", "min", "max"};
      put(b, "    KT_SIG(kn_atomic_%s_%s, %s (*)(%s *, %s)) v = kn_atomic_%s_%s(p, v);\n", ops[k],
          c, t, t, t, ops[k], c);
    }
    put(b, "    (void)v; }\n");
  }
  put(b, "  { kn_spatial_vector *p = (kn_spatial_vector *)mem, v = kn_zero_sv();\n");
  for (int k = 0; k < 4; k++) {
    static const char *const ops[] = {"add", "sub", "min", "max"};
    put(b,
        "    KT_SIG(kn_atomic_%s_sv, kn_spatial_vector (*)(kn_spatial_vector *, kn_spatial_vector)) "
        "v = kn_atomic_%s_sv(p, v);\n",
        ops[k], ops[k]);
  }
  put(b, "    (void)v; }\n}\n");
  put(b, "void kh_random(float *out) {\n"
         "  KT_SIG(kn_rand_init, uint32_t (*)(uint32_t, uint32_t)) KT_SIG(kn_randf, float "
         "(*)(uint32_t *))\n"
         "  KT_SIG(kn_randf_range, float (*)(uint32_t *, float, float)) KT_SIG(kn_randi, uint32_t "
         "(*)(uint32_t *))\n"
         "  KT_SIG(kn_randn, float (*)(uint32_t *))\n"
         "  uint32_t s = kn_rand_init(1u, 2u);\n"
         "  out[0] = kn_randf(&s) + kn_randf_range(&s, -1.0f, 1.0f) + (float)kn_randi(&s) + "
         "kn_randn(&s);\n}\n");
  /* the newer special forms: random helpers and lower_bound (kern_math.h) */
  put(b,
      "void kh_random_more(float *out, kn_array a) {\n"
      "  KT_SIG(kn_rand_rand_init_1, uint32_t (*)(uint32_t))\n"
      "  KT_SIG(kn_rand_randu_3, uint32_t (*)(uint32_t *, uint32_t, uint32_t))\n"
      "  KT_SIG(kn_rand_randi_3, int32_t (*)(uint32_t *, int32_t, int32_t))\n"
      "  KT_SIG(kn_rand_poisson_2, uint32_t (*)(uint32_t *, float))\n"
      "  KT_SIG(kn_lower_bound_f64, int32_t (*)(kn_array, int64_t, int64_t, double))\n"
      "  KT_SIG(kn_rand_sample_cdf_2, int32_t (*)(uint32_t *, kn_array))\n"
      "  uint32_t s = kn_rand_rand_init_1(3u);\n"
      "  out[1] = (float)(kn_rand_randu_1(&s) + kn_rand_randu_3(&s, 1u, 5u) + "
      "kn_rand_poisson_2(&s, 20.0f)) + (float)kn_rand_randi_3(&s, -3, 3) + "
      "kn_rand_sample_triangle_1(&s).x + kn_rand_sample_unit_ring_1(&s).y + "
      "kn_rand_sample_unit_disk_1(&s).x + kn_rand_sample_unit_square_1(&s).y + "
      "kn_rand_sample_unit_sphere_surface_1(&s).z + kn_rand_sample_unit_sphere_1(&s).x + "
      "kn_rand_sample_unit_hemisphere_surface_1(&s).y + kn_rand_sample_unit_hemisphere_1(&s).z + "
      "kn_rand_sample_unit_cube_1(&s).x + kn_rand_sample_unit_hypercube_1(&s).w;\n"
      "  out[2] = (float)(kn_lower_bound_i32(a, 0, 9, 1) + kn_lower_bound_i64(a, 0, 9, 1) + "
      "kn_lower_bound_u32(a, 0, 9, 1u) + kn_lower_bound_u64(a, 0, 9, 1u) + "
      "kn_lower_bound_f32(a, 0, 9, 1.0f) + kn_lower_bound_f64(a, 0, 9, 1.0) + "
      "kn_rand_sample_cdf_2(&s, a));\n}\n");
  put(b, "void kh_print(int i) {\n  kn_printf(\"%%d %%u %%ld %%f %%g %%e %%s %%x %%%%\\n\", i, "
         "(unsigned)i, (long long)i, 1.0, 2.0, 3.0, \"s\", 4u);\n"
         "  kn_printf(\"plain\\n\");\n}\n");
  put(b, "bool kh_debug(const kn_ctx *c, const int64_t *idx, const int64_t *shape) {\n"
         "  KT_SIG(kn_bounds_ok, bool (*)(const kn_ctx *, int32_t, int32_t, int32_t, int32_t, "
         "const int64_t *, const int64_t *, int64_t))\n"
         "  KT_SIG(kn_assert_fail, void (*)(const kn_ctx *, int32_t, int32_t, int64_t))\n"
         "  KT_SIG(kn_assert_fail_msg, void (*)(const kn_ctx *, int32_t, int32_t, int32_t, "
         "int64_t))\n"
         "  bool ok = kn_bounds_ok(c, 0, 1, 2, 3, idx, shape, 4);\n  if (!ok) kn_assert_fail(c, 0, "
         "1, 2);\n  return ok;\n}\n");
  put(b, "void kh_values(float *o) {\n");
  for (int i = 0; i < 9; i++) {
    const char *c = vecs[i][0], *t = vecs[i][1], *e = vecs[i][2];
    int n = c[strlen(c) - 1] - '0';
    put(b,
        "  { KT_SIG(kn_splat_%s, %s (*)(%s)) KT_SIG(kn_get_%s, %s (*)(%s, int64_t)) "
        "KT_SIG(kn_getp_%s, %s *(*)(%s *, int64_t))\n",
        c, t, e, c, e, t, c, e, t);
    put(b,
        "    %s v = kn_make_%s(%s%s%s); *kn_getp_%s(&v, 1) = kn_get_%s(kn_splat_%s((%s)1), 0); "
        "o[0] += (float)v.x; }\n",
        t, c, "0, 1", n > 2 ? ", 2" : "", n > 3 ? ", 3" : "", c, c, c, e);
  }
  for (int n = 2; n <= 4; n++) {
    put(b,
        "  { kn_mat%d%d m = kn_identity_m%d%d(); m = kn_add_m%d%d_m%d%d(m, kn_diag_m%d%d(2.0f));\n",
        n, n, n, n, n, n, n, n, n, n);
    put(b,
        "    kn_vec%d r = kn_get_m%d%d_row(m, 1); kn_set_m%d%d_row(&m, 0, r); *kn_getp_m%d%d(&m, "
        "0, 1) = kn_get_m%d%d(m, 1, 1); o[0] += r.x; }\n",
        n, n, n, n, n, n, n, n, n);
    put(b,
        "  { kn_vec%d a = kn_zero_v%d(); kn_dvec%d b = kn_cvt_v%d_dv%d(a); kn_ivec%d c = "
        "kn_cvt_dv%d_iv%d(b);\n"
        "    a = kn_cvt_iv%d_v%d(c); b = kn_cvt_iv%d_dv%d(c); c = "
        "kn_cvt_v%d_iv%d(kn_cvt_dv%d_v%d(b)); o[0] += a.x + (float)c.x; }\n",
        n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n);
  }
  put(b, "  { kn_mat33 m = kn_make_m33(1, 2, 3, 4, 5, 6, 7, 8, 9); kn_mat22 m2 = kn_make_m22(1, 2, "
         "3, 4);\n"
         "    kn_mat44 m4 = kn_make_m44(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);\n"
         "    m = kn_make_m33_rows(kn_make_v3(1, 2, 3), kn_make_v3(1, 2, 3), kn_splat_v3(1));\n"
         "    m2 = kn_make_m22_rows(kn_make_v2(1, 2), kn_make_v2(3, 4)); m4 = "
         "kn_make_m44_rows(kn_zero_v4(), kn_zero_v4(), kn_zero_v4(), kn_zero_v4());\n"
         "    kn_quat q = kn_make_q(0, 0, 0, 1); q = kn_quat_mul_q_q(q, kn_identity_q()); "
         "*kn_getp_q(&q, 2) = kn_get_q(q, 3);\n"
         "    o[0] += m.m[0][0] + m2.m[1][1] + m4.m[3][3] + q.w + kn_zero_q().x; }\n");
  put(b, "  { kn_transform t = kn_make_tf_pq(kn_zero_v3(), kn_identity_q());\n"
         "    t = kn_mul_tf_tf(t, kn_make_tf(1, 2, 3, 0, 0, 0, 1)); *kn_getp_tf(&t, 6) = "
         "kn_get_tf(t, 2) + kn_zero_tf().q.w; o[0] += t.p.x; }\n");
  put(b,
      "  { kn_spatial_vector s = kn_make_sv(1, 2, 3, 4, 5, 6), w = kn_make_sv_wv(kn_zero_v3(), "
      "kn_splat_v3(1)); *kn_getp_sv(&s, 2) = kn_get_sv(kn_splat_sv(2), 9) + kn_zero_sv().v[0];\n"
      "    kn_spatial_matrix m = kn_make_m66_rows(s, w, s, w, s, w); m = kn_add_m66_m66(m, "
      "kn_identity_m66()); kn_set_m66_row(&m, 1, kn_get_m66_row(m, 0));\n"
      "    *kn_getp_m66(&m, 0, 5) = kn_get_m66(kn_diag_m66(2), 1, 1) + kn_zero_m66().m[0][0];\n"
      "    m = kn_make_m66(1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, "
      "1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6); o[0] += s.v[2] + m.m[0][5]; }\n");
  put(b, "  { kn_f16 h = kn_cvt_f32_f16(o[0]); h = kn_cvt_f64_f16(kn_cvt_f16_f64(h)); o[1] = "
         "kn_cvt_f16_f32(h);\n");
  for (int i = 0; i < 8; i++) {
    const char *c = ints[i][0], *t = ints[i][1];
    put(b,
        "    { KT_SIG(kn_div_%s, %s (*)(%s, %s)) KT_SIG(kn_shl_%s, %s (*)(%s, int64_t)) "
        "KT_SIG(kn_cvt_f32_%s, %s (*)(float))\n",
        c, t, t, t, c, t, t, c, t);
    put(b,
        "      %s x = kn_cvt_f32_%s(o[0]); x = kn_div_%s(x, kn_mod_%s(x, x)); x = kn_shl_%s(x, 3); "
        "x = kn_shr_%s(x, (int64_t)x);\n",
        t, c, c, c, c, c);
    put(b,
        "      x = kn_cvt_f64_%s((double)x); x = kn_cvt_f16_%s(kn_cvt_%s_f16(x)); o[2] += "
        "(float)x; }\n",
        c, c, c);
  }
  put(b, "  }\n}\n");
  if (cxx)
    put(b, "extern \"C\" __global__ void kh_all(void *mem, float *o, const kn_ctx c, const int64_t "
           "*i) {\n"
           "  kh_atomics(mem); kh_random(o); kh_print((int)o[0]); kh_debug(&c, i, i); "
           "kh_values(o);\n  kn_array a; a.data = (char *)mem; kh_random_more(o, a);\n}\n");
}

static char *helpers_unit(bool cxx) {
  Buf b = {0};
  put_headers(&b);
  put_sig_macro(&b, cxx);
  put_helpers(&b, cxx);
  return b.s;
}

static char *write_temp(const char *text, const char *suffix) {
  char *path;
  int fd = th_make_temp("kn_stdlib", suffix, &path);
  cr_assert(fd >= 0, "cannot create %s", path);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

/* Compiles text with each C compiler found on PATH; returns how many ran. */
static int compile_with_c_compilers(const char *text, const char *flags) {
  static const char *const ccs[] = {"cc", "gcc", "clang"};
  char *path = write_temp(text, ".c");
  int ran = 0;
  for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++) {
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null", ccs[i]);
    if (th_run(cmd, NULL) != 0) continue;
    snprintf(cmd, sizeof cmd, "%s %s %s", ccs[i], flags, path);
    int rc = th_run(cmd, &out);
    cr_assert_eq(rc, 0, "%s failed:\n%.4000s", cmd, out);
    cr_assert(strstr(out, "warning") == NULL, "%s warned:\n%.4000s", cmd, out);
    free(out);
    ran++;
  }
  unlink(path);
  free(path);
  return ran;
}

#define C_FLAGS_STRICT "-std=c11 -O1 -Wall -Wextra -Werror -fsyntax-only"
#define C_FLAGS_KERNEL "-std=c11 -O3 -fwrapv -Wall -Werror -c -o /dev/null"

Test(table, every_entry_compiles_with_c_compilers, .timeout = 300) {
  char *text = entries_unit(false);
  cr_assert_gt(compile_with_c_compilers(text, C_FLAGS_STRICT), 0, "no C compiler found");
  free(text);
}

Test(table, helpers_compile_with_c_compilers, .timeout = 300) {
  char *text = helpers_unit(false);
  cr_assert_gt(compile_with_c_compilers(text, C_FLAGS_STRICT), 0);
  cr_assert_gt(compile_with_c_compilers(text, C_FLAGS_KERNEL), 0);
  cr_assert_gt(
      compile_with_c_compilers(
          text, "-std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -D_GNU_SOURCE"),
      0);
  free(text);
}

/* ---- NVRTC, loaded at run time ---------------------------------------------- */

typedef struct Nvrtc {
  void *lib;
  int (*create)(void **, const char *, const char *, int, const char *const *, const char *const *);
  int (*compile)(void *, int, const char *const *);
  int (*log_size)(void *, size_t *);
  int (*log)(void *, char *);
  int (*destroy)(void **);
} Nvrtc;

static bool nvrtc_open(Nvrtc *n) {
  char home[1024];
  const char *names[] = {home, "/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so", "libnvrtc.so.13",
                         "libnvrtc.so.12"};
  snprintf(home, sizeof home, "%s/lib64/libnvrtc.so",
           getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/nonexistent");
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !n->lib; i++)
    n->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!n->lib) return false;
  *(void **)&n->create = dlsym(n->lib, "nvrtcCreateProgram");
  *(void **)&n->compile = dlsym(n->lib, "nvrtcCompileProgram");
  *(void **)&n->log_size = dlsym(n->lib, "nvrtcGetProgramLogSize");
  *(void **)&n->log = dlsym(n->lib, "nvrtcGetProgramLog");
  *(void **)&n->destroy = dlsym(n->lib, "nvrtcDestroyProgram");
  return n->create && n->compile && n->log_size && n->log && n->destroy;
}

/* Compiles src; returns the result code and the log (malloc'd) in *log. */
static int nvrtc_compile(Nvrtc *n, const char *src, char **log) {
  static const char *const opts[] = {"--gpu-architecture=compute_90", "-default-device",
                                     "--std=c++17", "--fmad=false"};
  void *prog = NULL;
  cr_assert_eq(n->create(&prog, src, "kern_stdlib_test.cu", 0, NULL, NULL), 0);
  int rc = n->compile(prog, 4, opts);
  size_t size = 0;
  n->log_size(prog, &size);
  *log = calloc(size + 1, 1);
  n->log(prog, *log);
  n->destroy(&prog);
  return rc;
}

static void check_nvrtc(char *(*unit)(bool)) {
  Nvrtc n = {0};
  if (!nvrtc_open(&n))
    cr_skip_test("NVRTC not found: skipping (set CUDA_HOME to test the CUDA build of the stdlib)");
  char *src = unit(true), *log = NULL;
  int rc = nvrtc_compile(&n, src, &log);
  cr_assert_eq(rc, 0, "NVRTC failed:\n%.6000s", log);
  cr_assert(strstr(log, "warning") == NULL, "NVRTC warned:\n%.6000s", log);
  free(src), free(log);
}

Test(table, every_entry_compiles_with_nvrtc, .timeout = 600) { check_nvrtc(entries_unit); }
Test(table, helpers_compile_with_nvrtc, .timeout = 300) { check_nvrtc(helpers_unit); }
