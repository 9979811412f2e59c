/* types.c: the builtin type singletons and the small type algebra.
 *
 * Requires: arena.c for array and pointer types. Produces: one Type object per
 * builtin (compare them by pointer or with type_equal), and per-arena array and
 * pointer types (compare those with type_equal only). Breaks: sizes and
 * alignments are the host-visible layout of the spec; changing one changes
 * the ABI of every kernel argument.
 */
#include "ast.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SCALAR(id, k, sz, nm) Type id = {.kind = k, .size = sz, .align = sz, .name = nm}
SCALAR(ty_bool, TY_BOOL, 1, "bool");
SCALAR(ty_i8, TY_I8, 1, "int8");
SCALAR(ty_i16, TY_I16, 2, "int16");
SCALAR(ty_i32, TY_I32, 4, "int32");
SCALAR(ty_i64, TY_I64, 8, "int64");
SCALAR(ty_u8, TY_U8, 1, "uint8");
SCALAR(ty_u16, TY_U16, 2, "uint16");
SCALAR(ty_u32, TY_U32, 4, "uint32");
SCALAR(ty_u64, TY_U64, 8, "uint64");
SCALAR(ty_f16, TY_F16, 2, "float16");
SCALAR(ty_bf16, TY_BF16, 2, "bfloat16");
SCALAR(ty_f32, TY_F32, 4, "float32");
SCALAR(ty_f64, TY_F64, 8, "float64");
#undef SCALAR

/* Vectors are packed components with the component's alignment. */
#define VEC(id, el, esz, cnt, nm)                                                                  \
  Type id = {.kind = TY_VEC, .size = (esz) * (cnt), .align = esz, .elem = &el, .n = cnt, .name = nm}
VEC(ty_vec2, ty_f32, 4, 2, "vec2");
VEC(ty_vec3, ty_f32, 4, 3, "vec3");
VEC(ty_vec4, ty_f32, 4, 4, "vec4");
VEC(ty_dvec2, ty_f64, 8, 2, "dvec2");
VEC(ty_dvec3, ty_f64, 8, 3, "dvec3");
VEC(ty_dvec4, ty_f64, 8, 4, "dvec4");
VEC(ty_ivec2, ty_i32, 4, 2, "ivec2");
VEC(ty_ivec3, ty_i32, 4, 3, "ivec3");
VEC(ty_ivec4, ty_i32, 4, 4, "ivec4");
#undef VEC

Type ty_mat22 = {.kind = TY_MAT, .size = 16, .align = 4, .elem = &ty_f32, .n = 2, .name = "mat22"};
Type ty_mat33 = {.kind = TY_MAT, .size = 36, .align = 4, .elem = &ty_f32, .n = 3, .name = "mat33"};
Type ty_mat44 = {.kind = TY_MAT, .size = 64, .align = 4, .elem = &ty_f32, .n = 4, .name = "mat44"};
Type ty_quat = {.kind = TY_QUAT, .size = 16, .align = 4, .elem = &ty_f32, .n = 4, .name = "quat"};
/* quat<T> of the other float types: Warp's quath and quatd, and bfloat16's. */
Type ty_quath = {.kind = TY_QUAT, .size = 8, .align = 2, .elem = &ty_f16, .n = 4, .name = "quath"};
Type ty_quatbf = {
    .kind = TY_QUAT, .size = 8, .align = 2, .elem = &ty_bf16, .n = 4, .name = "quat<bfloat16>"};
Type ty_quatd = {.kind = TY_QUAT, .size = 32, .align = 8, .elem = &ty_f64, .n = 4, .name = "quatd"};
/* Spatial (6D) vectors and matrices: angular part first, then linear. */
Type ty_svec = {
    .kind = TY_VEC, .size = 24, .align = 4, .elem = &ty_f32, .n = 6, .name = "spatial_vector"};
Type ty_smat = {
    .kind = TY_MAT, .size = 144, .align = 4, .elem = &ty_f32, .n = 6, .name = "spatial_matrix"};
/* A rigid transform: the translation p (vec3) then the rotation q (quat). */
Type ty_transform = {
    .kind = TY_TRANSFORM, .size = 28, .align = 4, .elem = &ty_f32, .n = 7, .name = "transform"};

/* These never reach memory: size 0 keeps any accidental layout use visible. */
Type ty_void = {.kind = TY_VOID, .size = 0, .align = 1, .name = "void"};
Type ty_untyped_int = {.kind = TY_UNTYPED_INT, .size = 0, .align = 1, .name = "untyped int"};
Type ty_untyped_float = {.kind = TY_UNTYPED_FLOAT, .size = 0, .align = 1, .name = "untyped float"};
Type ty_string = {.kind = TY_STRING, .size = 0, .align = 1, .name = "string"};
Type ty_error = {.kind = TY_ERROR, .size = 0, .align = 1, .name = "<error>"};

static const struct {
  const char *name;
  Type *ty;
} builtin_names[] = {
    {"bool", &ty_bool},
    {"int8", &ty_i8},
    {"int16", &ty_i16},
    {"int32", &ty_i32},
    {"int64", &ty_i64},
    {"uint8", &ty_u8},
    {"uint16", &ty_u16},
    {"uint32", &ty_u32},
    {"uint64", &ty_u64},
    {"float16", &ty_f16},
    {"bfloat16", &ty_bf16},
    {"float32", &ty_f32},
    {"float64", &ty_f64},
    {"int", &ty_i32},
    {"uint", &ty_u32},
    {"float", &ty_f32},
    {"double", &ty_f64},
    {"vec2", &ty_vec2},
    {"vec3", &ty_vec3},
    {"vec4", &ty_vec4},
    {"dvec2", &ty_dvec2},
    {"dvec3", &ty_dvec3},
    {"dvec4", &ty_dvec4},
    {"ivec2", &ty_ivec2},
    {"ivec3", &ty_ivec3},
    {"ivec4", &ty_ivec4},
    {"mat22", &ty_mat22},
    {"mat33", &ty_mat33},
    {"mat44", &ty_mat44},
    {"quat", &ty_quat},
    {"quath", &ty_quath},
    {"quatd", &ty_quatd},
    {"transform", &ty_transform},
    {"spatial_vector", &ty_svec},
    {"spatial_matrix", &ty_smat},
};

Type *type_builtin_by_name(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof builtin_names / sizeof builtin_names[0]; i++)
    if (strlen(builtin_names[i].name) == len && memcmp(builtin_names[i].name, name, len) == 0)
      return builtin_names[i].ty;
  return NULL;
}

Type *type_array(Arena *a, Type *elem, int ndim) {
  Type *t = arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = TY_ARRAY;
  t->elem = elem;
  t->ndim = ndim;
  /* An array parameter is a descriptor, never a value the program lays out. */
  t->size = 0;
  t->align = 1;
  char dims[8] = "";
  for (int i = 1; i < ndim && i < (int)sizeof dims; i++) dims[i - 1] = ',';
  t->name = arena_printf(a, "%s[%s]", type_name(elem), dims);
  return t->name ? t : NULL;
}

Type *type_ptr(Arena *a, Type *elem) {
  Type *t = arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = TY_PTR;
  t->elem = elem;
  t->size = 8;
  t->align = 8;
  t->name = arena_printf(a, "&%s", type_name(elem));
  return t->name ? t : NULL;
}

Type *type_tile(Arena *a, Type *elem, int ndim, const int *dims) {
  Type *t = arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = TY_TILE;
  t->elem = elem;
  t->ndim = ndim;
  t->dims[0] = dims[0];
  t->dims[1] = ndim == 2 ? dims[1] : 1;
  /* callers keep the count at most 2^20 elements of at most 8 bytes */
  t->size = (int)((int64_t)t->dims[0] * t->dims[1] * elem->size);
  t->align = elem->align;
  t->name = ndim == 2 ? arena_printf(a, "tile<%s, %d, %d>", type_name(elem), dims[0], dims[1])
                      : arena_printf(a, "tile<%s, %d>", type_name(elem), dims[0]);
  return t->name ? t : NULL;
}

Type *type_fixed(Arena *a, Type *elem, int ndim, const int *dims) {
  Type *t = arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = TY_FIXED;
  t->elem = elem;
  t->ndim = ndim;
  int64_t count = 1;
  char ext[64] = "";
  for (int i = 0; i < ndim; i++) {
    t->dims[i] = dims[i];
    count *= dims[i];
    size_t n = strlen(ext);
    snprintf(ext + n, sizeof ext - n, "%s%d", i ? ", " : "", dims[i]);
  }
  /* callers keep the whole at most 2^30 bytes */
  t->size = (int)(count * elem->size);
  t->align = elem->align;
  t->name = arena_printf(a, "%s[%s]", type_name(elem), ext);
  return t->name ? t : NULL;
}

int64_t type_fixed_count(const Type *t) {
  int64_t n = t && t->kind == TY_FIXED ? 1 : 0;
  for (int i = 0; n && i < t->ndim; i++) n *= t->dims[i];
  return n;
}

int64_t type_tile_count(const Type *t) {
  return t && t->kind == TY_TILE ? (int64_t)t->dims[0] * t->dims[1] : 0;
}

Type *type_vec(Type *elem, int n) {
  static Type *const f32[] = {&ty_vec2, &ty_vec3, &ty_vec4};
  static Type *const f64[] = {&ty_dvec2, &ty_dvec3, &ty_dvec4};
  static Type *const i32[] = {&ty_ivec2, &ty_ivec3, &ty_ivec4};
  if (elem && elem->kind == TY_F32 && n == 6) return &ty_svec;
  if (!elem || n < 2 || n > 4) return NULL;
  switch (elem->kind) {
    case TY_F32: return f32[n - 2];
    case TY_F64: return f64[n - 2];
    case TY_I32: return i32[n - 2];
    default: return NULL;
  }
}

/* vec<T, N> with no short name: one object each, made once for the process. */
static struct {
  Type t;
  char name[24];
} vecns[VECN_COUNT];
static pthread_once_t vecns_once = PTHREAD_ONCE_INIT;

static Type *const scalar_by_kind[VECN_ELEMS] = {&ty_i8,  &ty_i16,  &ty_i32, &ty_i64,
                                                 &ty_u8,  &ty_u16,  &ty_u32, &ty_u64,
                                                 &ty_f16, &ty_bf16, &ty_f32, &ty_f64};

static void make_vecns(void) {
  for (int i = 0; i < VECN_COUNT; i++) {
    Type *e = scalar_by_kind[i / VECN_MAX], *t = &vecns[i].t;
    int n = i % VECN_MAX + 1;
    snprintf(vecns[i].name, sizeof vecns[i].name, "vec<%s, %d>", e->name, n);
    *t = (Type){.kind = TY_VEC, .size = e->size * n, .align = e->align, .elem = e, .n = n};
    t->name = vecns[i].name;
    t->generic = true;
  }
}

Type *type_vecn(const Type *elem, int n) {
  if (!elem || !type_is_numeric(elem) || n < 1 || n > VECN_MAX) return NULL;
  TypeKind k = elem->kind;
  if ((k == TY_F32 || k == TY_F64 || k == TY_I32) && n >= 2 && n <= 4)
    return type_vec((Type *)elem, n);
  return type_vecn_at((int)(k - TY_I8) * VECN_MAX + n - 1);
}

Type *type_quatn(const Type *elem) {
  switch (elem ? elem->kind : TY_ERROR) {
    case TY_F16: return &ty_quath;
    case TY_BF16: return &ty_quatbf;
    case TY_F32: return &ty_quat;
    case TY_F64: return &ty_quatd;
    default: return NULL;
  }
}

Type *type_vecn_at(int index) {
  if (index < 0 || index >= VECN_COUNT) return NULL;
  pthread_once(&vecns_once, make_vecns);
  return &vecns[index].t;
}

int type_vecn_index(const Type *t) {
  if (!t || t->kind != TY_VEC || !t->generic) return -1;
  return (int)(t->elem->kind - TY_I8) * VECN_MAX + t->n - 1;
}

/* mat<T, M, N> with no short name, likewise. */
static struct {
  Type t;
  char name[32];
} matns[MATN_COUNT];
static pthread_once_t matns_once = PTHREAD_ONCE_INIT;

static void make_matns(void) {
  for (int i = 0; i < MATN_COUNT; i++) {
    Type *e = scalar_by_kind[i / (VECN_MAX * VECN_MAX)], *t = &matns[i].t;
    int r = i / VECN_MAX % VECN_MAX + 1, c = i % VECN_MAX + 1;
    snprintf(matns[i].name, sizeof matns[i].name, "mat<%s, %d, %d>", e->name, r, c);
    *t = (Type){.kind = TY_MAT, .size = e->size * r * c, .align = e->align, .elem = e, .n = r};
    t->dims[0] = r;
    t->dims[1] = c;
    t->name = matns[i].name;
    t->generic = true;
  }
}

Type *type_matn(const Type *elem, int rows, int cols) {
  static Type *const f32[] = {&ty_mat22, &ty_mat33, &ty_mat44};
  if (!elem || !type_is_numeric(elem) || rows < 1 || rows > VECN_MAX || cols < 1 || cols > VECN_MAX)
    return NULL;
  if (elem->kind == TY_F32 && rows == cols && rows >= 2 && rows <= 4) return f32[rows - 2];
  return type_matn_at(((int)(elem->kind - TY_I8) * VECN_MAX + rows - 1) * VECN_MAX + cols - 1);
}

Type *type_matn_at(int index) {
  if (index < 0 || index >= MATN_COUNT) return NULL;
  pthread_once(&matns_once, make_matns);
  return &matns[index].t;
}

int type_matn_index(const Type *t) {
  if (!t || t->kind != TY_MAT || !t->generic) return -1;
  return ((int)(t->elem->kind - TY_I8) * VECN_MAX + t->dims[0] - 1) * VECN_MAX + t->dims[1] - 1;
}

int type_mat_cols(const Type *t) { return t->generic ? t->dims[1] : t->n; }

Type *type_mat_row(const Type *t) {
  return t->generic ? type_vecn(t->elem, t->dims[1]) : type_vec(t->elem, t->n);
}

bool type_is_int(const Type *t) { return t && t->kind >= TY_I8 && t->kind <= TY_U64; }

bool type_is_signed(const Type *t) { return t && t->kind >= TY_I8 && t->kind <= TY_I64; }

bool type_is_float(const Type *t) { return t && t->kind >= TY_F16 && t->kind <= TY_F64; }

bool type_is_half(const Type *t) { return t && (t->kind == TY_F16 || t->kind == TY_BF16); }

bool type_is_scalar(const Type *t) { return t && (t->kind == TY_BOOL || type_is_numeric(t)); }

bool type_is_numeric(const Type *t) { return type_is_int(t) || type_is_float(t); }

bool type_equal(const Type *a, const Type *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case TY_ARRAY: return a->ndim == b->ndim && type_equal(a->elem, b->elem);
    case TY_PTR: return type_equal(a->elem, b->elem);
    case TY_STRUCT: return a->sdecl == b->sdecl;
    case TY_VEC: return a->n == b->n && a->generic == b->generic && type_equal(a->elem, b->elem);
    case TY_QUAT: return type_equal(a->elem, b->elem);
    case TY_MAT: return a->n == b->n && !a->generic && !b->generic;
    case TY_TILE:
      return a->ndim == b->ndim && a->dims[0] == b->dims[0] && a->dims[1] == b->dims[1] &&
             type_equal(a->elem, b->elem);
    case TY_FIXED:
      for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
      return a->ndim == b->ndim && type_equal(a->elem, b->elem);
    default: return true; /* every other kind has a single type */
  }
}

const char *type_name(const Type *t) {
  if (!t) return "<null>";
  return t->name ? t->name : "<unnamed>";
}

int type_arg_size(const Type *t, int *align) {
  if (t->kind == TY_ARRAY) { /* kn_array: a data pointer, 4 extents, 4 strides */
    *align = 8;
    return 8 * 9;
  }
  if (t->kind == TY_FIXED) { /* a parameter: a pointer to the caller's local array */
    *align = 8;
    return 8;
  }
  *align = t->align > 0 ? t->align : 1;
  return t->size;
}
