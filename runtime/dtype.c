/* dtype.c: element types: the builtin table and the process-wide registry of
 * struct dtypes.
 *
 * Requires: ast.h types (to map checked types to dtypes).
 * Produces: kern_dtype_size/align/name, rt_dtype_of_type, struct registration.
 * Breaks: struct ids are never reused or invalidated while the process runs
 * (arrays and kernels of freed modules may still name them); two structs with
 * the same name and layout signature share one id, so arrays made with one
 * module's Particle can be passed to another module's kernels.
 */
#include "base.h"

#include <stdlib.h>
#include <string.h>

#include "ast.h"

typedef struct dtype_info {
  const char *name;
  size_t size, align;
} dtype_info;

static const dtype_info builtin[KERN_DTYPE_BUILTIN_END] = {
    [KERN_BOOL] = {"bool", 1, 1},       [KERN_INT8] = {"int8", 1, 1},
    [KERN_INT16] = {"int16", 2, 2},     [KERN_INT32] = {"int32", 4, 4},
    [KERN_INT64] = {"int64", 8, 8},     [KERN_UINT8] = {"uint8", 1, 1},
    [KERN_UINT16] = {"uint16", 2, 2},   [KERN_UINT32] = {"uint32", 4, 4},
    [KERN_UINT64] = {"uint64", 8, 8},   [KERN_FLOAT16] = {"float16", 2, 2},
    [KERN_FLOAT32] = {"float32", 4, 4}, [KERN_FLOAT64] = {"float64", 8, 8},
    [KERN_VEC2] = {"vec2", 8, 4},       [KERN_VEC3] = {"vec3", 12, 4},
    [KERN_VEC4] = {"vec4", 16, 4},      [KERN_DVEC2] = {"dvec2", 16, 8},
    [KERN_DVEC3] = {"dvec3", 24, 8},    [KERN_DVEC4] = {"dvec4", 32, 8},
    [KERN_IVEC2] = {"ivec2", 8, 4},     [KERN_IVEC3] = {"ivec3", 12, 4},
    [KERN_IVEC4] = {"ivec4", 16, 4},    [KERN_MAT22] = {"mat22", 16, 4},
    [KERN_MAT33] = {"mat33", 36, 4},    [KERN_MAT44] = {"mat44", 64, 4},
    [KERN_QUAT] = {"quat", 16, 4},
};

/* Struct entries live in fixed chunks that never move, so a reader holding an
 * id can read its entry under the lock without copying. */
enum { CHUNK = 256, MAX_CHUNKS = 256 };
typedef struct struct_info {
  dtype_info info;
  char *signature;
} struct_info;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct_info *chunks[MAX_CHUNKS];
static int nstructs;

static const dtype_info *lookup(kern_dtype dt) {
  if (dt > KERN_DTYPE_INVALID && dt < KERN_DTYPE_BUILTIN_END) return &builtin[dt];
  if (dt < KERN_DTYPE_FIRST_STRUCT) return NULL;
  int i = dt - KERN_DTYPE_FIRST_STRUCT;
  pthread_mutex_lock(&reg_mu);
  const dtype_info *r = i < nstructs ? &chunks[i / CHUNK][i % CHUNK].info : NULL;
  pthread_mutex_unlock(&reg_mu);
  return r;
}

bool rt_dtype_valid(kern_dtype dt) { return lookup(dt) != NULL; }

size_t kern_dtype_size(kern_dtype dt) {
  const dtype_info *d = lookup(dt);
  return d ? d->size : 0;
}

size_t kern_dtype_align(kern_dtype dt) {
  const dtype_info *d = lookup(dt);
  return d ? d->align : 0;
}

const char *kern_dtype_name(kern_dtype dt) {
  const dtype_info *d = lookup(dt);
  return d ? d->name : "<invalid dtype>";
}

static kern_dtype find_struct(const char *signature) {
  for (int i = 0; i < nstructs; i++)
    if (strcmp(chunks[i / CHUNK][i % CHUNK].signature, signature) == 0)
      return KERN_DTYPE_FIRST_STRUCT + i;
  return KERN_DTYPE_INVALID;
}

static kern_dtype add_struct(const char *name, const char *signature, size_t size, size_t align) {
  int i = nstructs;
  if (i >= CHUNK * MAX_CHUNKS) return KERN_DTYPE_INVALID;
  if (!chunks[i / CHUNK] && !(chunks[i / CHUNK] = calloc(CHUNK, sizeof(struct_info))))
    return KERN_DTYPE_INVALID;
  struct_info *e = &chunks[i / CHUNK][i % CHUNK];
  e->info.name = str_dup(name);
  e->signature = str_dup(signature);
  if (!e->info.name || !e->signature) {
    free((char *)e->info.name);
    free(e->signature);
    *e = (struct_info){0};
    return KERN_DTYPE_INVALID;
  }
  e->info.size = size;
  e->info.align = align;
  nstructs++;
  return KERN_DTYPE_FIRST_STRUCT + i;
}

kern_dtype rt_dtype_register_struct(const char *name, const char *signature, size_t size,
                                    size_t align) {
  pthread_mutex_lock(&reg_mu);
  kern_dtype dt = find_struct(signature);
  if (dt == KERN_DTYPE_INVALID) dt = add_struct(name, signature, size, align);
  pthread_mutex_unlock(&reg_mu);
  return dt;
}

/* "Name{size,align;field:type@offset;...}": everything that makes two struct
 * types interchangeable in memory, nested structs spelled out. */
static void signature(Buf *b, const Type *t) {
  if (t->kind != TY_STRUCT || !t->sdecl) {
    buf_printf(b, "%s", type_name(t));
    return;
  }
  const Decl *d = t->sdecl;
  buf_printf(b, "%s{%d,%d", d->name ? d->name : "?", t->size, t->align);
  for (int i = 0; i < d->nfields; i++) {
    buf_printf(b, ";%s:", d->fields[i].name);
    signature(b, d->fields[i].ty);
    buf_printf(b, "@%d", d->fields[i].offset);
  }
  buf_add(b, "}", 1);
}

static kern_dtype struct_dtype(const Type *t) {
  Buf b = {0};
  signature(&b, t);
  kern_dtype dt = KERN_DTYPE_INVALID;
  if (!b.oom && b.s)
    dt = rt_dtype_register_struct(t->sdecl->name, b.s, (size_t)t->size, (size_t)t->align);
  buf_free(&b);
  return dt;
}

static kern_dtype vec_dtype(const Type *t) {
  int k = t->elem ? t->elem->kind : TY_ERROR;
  if (t->n < 2 || t->n > 4) return KERN_DTYPE_INVALID;
  if (k == TY_F32) return KERN_VEC2 + (t->n - 2);
  if (k == TY_F64) return KERN_DVEC2 + (t->n - 2);
  if (k == TY_I32) return KERN_IVEC2 + (t->n - 2);
  return KERN_DTYPE_INVALID;
}

kern_dtype rt_dtype_of_type(const Type *t) {
  if (!t) return KERN_DTYPE_INVALID;
  switch (t->kind) {
    case TY_BOOL: return KERN_BOOL;
    case TY_I8: return KERN_INT8;
    case TY_I16: return KERN_INT16;
    case TY_I32: return KERN_INT32;
    case TY_I64: return KERN_INT64;
    case TY_U8: return KERN_UINT8;
    case TY_U16: return KERN_UINT16;
    case TY_U32: return KERN_UINT32;
    case TY_U64: return KERN_UINT64;
    case TY_F16: return KERN_FLOAT16;
    case TY_F32: return KERN_FLOAT32;
    case TY_F64: return KERN_FLOAT64;
    case TY_VEC: return vec_dtype(t);
    case TY_MAT: return t->n >= 2 && t->n <= 4 ? KERN_MAT22 + (t->n - 2) : KERN_DTYPE_INVALID;
    case TY_QUAT: return KERN_QUAT;
    case TY_STRUCT: return t->sdecl ? struct_dtype(t) : KERN_DTYPE_INVALID;
    default: return KERN_DTYPE_INVALID;
  }
}
