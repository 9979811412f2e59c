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
#include "fork.h"

typedef struct dtype_info {
  const char *name;
  size_t size, align;
} dtype_info;

static const dtype_info builtin[KERN_DTYPE_BUILTIN_END] = {
    [KERN_BOOL] = {"bool", 1, 1},
    [KERN_INT8] = {"int8", 1, 1},
    [KERN_INT16] = {"int16", 2, 2},
    [KERN_INT32] = {"int32", 4, 4},
    [KERN_INT64] = {"int64", 8, 8},
    [KERN_UINT8] = {"uint8", 1, 1},
    [KERN_UINT16] = {"uint16", 2, 2},
    [KERN_UINT32] = {"uint32", 4, 4},
    [KERN_UINT64] = {"uint64", 8, 8},
    [KERN_FLOAT16] = {"float16", 2, 2},
    [KERN_FLOAT32] = {"float32", 4, 4},
    [KERN_FLOAT64] = {"float64", 8, 8},
    [KERN_VEC2] = {"vec2", 8, 4},
    [KERN_VEC3] = {"vec3", 12, 4},
    [KERN_VEC4] = {"vec4", 16, 4},
    [KERN_DVEC2] = {"dvec2", 16, 8},
    [KERN_DVEC3] = {"dvec3", 24, 8},
    [KERN_DVEC4] = {"dvec4", 32, 8},
    [KERN_IVEC2] = {"ivec2", 8, 4},
    [KERN_IVEC3] = {"ivec3", 12, 4},
    [KERN_IVEC4] = {"ivec4", 16, 4},
    [KERN_MAT22] = {"mat22", 16, 4},
    [KERN_MAT33] = {"mat33", 36, 4},
    [KERN_MAT44] = {"mat44", 64, 4},
    [KERN_QUAT] = {"quat", 16, 4},
    [KERN_TRANSFORM] = {"transform", 28, 4},
    [KERN_SPATIAL_VECTOR] = {"spatial_vector", 24, 4},
    [KERN_SPATIAL_MATRIX] = {"spatial_matrix", 144, 4},
    [KERN_BFLOAT16] = {"bfloat16", 2, 2},
    [KERN_QUATH] = {"quath", 8, 2},
    [KERN_QUATBF16] = {"quat<bfloat16>", 8, 2},
    [KERN_QUATD] = {"quatd", 32, 8},
};

/* Struct entries live in fixed chunks that never move, so a reader holding an
 * id can read its entry under the lock without copying. */
enum { CHUNK = 256, MAX_CHUNKS = 256 };
typedef struct struct_info {
  dtype_info info;
  char *signature;
} struct_info;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&reg_mu, NULL, FORK_RANK_DTYPE)
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

/* ---- struct signatures ------------------------------------------------------------
 * "Name{size,align;field:type@offset;...}": everything that makes two struct
 * types interchangeable in memory. A nested struct is written as its name and
 * the SHA-256 of its own signature ("Inner#<32 hex digits>"), so a signature
 * is as long as its own field list and each struct is hashed once: a struct
 * of two copies of the one before, 30 times over, is 2^30 bytes but 31 short
 * signatures (spelled out, it was 2^30 field lists). Equal hashes mean equal
 * nested signatures, so two structs share an id exactly when they did before.
 * The nesting is walked with an explicit stack (the checker allows it 2000
 * deep, and the caller's thread may have a small stack). */

typedef struct SigEntry {
  const Decl *d;
  bool seen;     /* on the walk's stack, or done */
  char hash[33]; /* its signature's hash, once done */
} SigEntry;

/* Structs met in one walk, by Decl pointer (open addressing, at most half full). */
typedef struct SigMap {
  SigEntry *v;
  size_t cap, n;
} SigMap;

static size_t sig_slot(const SigEntry *v, size_t cap, const Decl *d) {
  size_t j = ((uintptr_t)d >> 4) & (cap - 1);
  while (v[j].d && v[j].d != d) j = (j + 1) & (cap - 1);
  return j;
}

/* d's entry, added when absent; NULL when out of memory. */
static SigEntry *sig_entry(SigMap *m, const Decl *d) {
  if (m->n * 2 + 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    SigEntry *v = calloc(cap, sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < m->cap; i++)
      if (m->v[i].d) v[sig_slot(v, cap, m->v[i].d)] = m->v[i];
    free(m->v);
    m->v = v;
    m->cap = cap;
  }
  SigEntry *e = &m->v[sig_slot(m->v, m->cap, d)];
  if (!e->d) e->d = d, m->n++;
  return e;
}

/* d's signature; its nested structs are hashed already (hash_nested). */
static void write_signature(Buf *b, SigMap *m, const Decl *d) {
  buf_printf(b, "%s{%d,%d", d->name ? d->name : "?", d->sty->size, d->sty->align);
  for (int i = 0; i < d->nfields; i++) {
    const Type *t = d->fields[i].ty;
    buf_printf(b, ";%s:", d->fields[i].name);
    if (t->kind == TY_STRUCT && t->sdecl)
      buf_printf(b, "%s#%s", t->sdecl->name, m->v[sig_slot(m->v, m->cap, t->sdecl)].hash);
    else
      buf_printf(b, "%s", type_name(t));
    buf_printf(b, "@%d", d->fields[i].offset);
  }
  buf_add(b, "}", 1);
}

static bool hash_signature(SigMap *m, const Decl *d) {
  Buf b = {0};
  write_signature(&b, m, d);
  bool ok = !b.oom && b.s;
  if (ok) {
    rt_sha256 h;
    unsigned char digest[32];
    rt_sha256_init(&h);
    rt_sha256_add(&h, b.s, b.len);
    rt_sha256_done(&h, digest);
    rt_hex(digest, 16, m->v[sig_slot(m->v, m->cap, d)].hash);
  }
  buf_free(&b);
  return ok;
}

typedef struct SigFrame {
  const Decl *d;
  int next; /* the next field to look at */
} SigFrame;

/* Hashes every struct nested in root (not root itself), innermost first. */
static bool hash_nested(SigMap *m, const Decl *root) {
  int cap = 64, top = 0;
  SigFrame *st = malloc((size_t)cap * sizeof *st);
  bool ok = st && sig_entry(m, root);
  if (ok) st[0] = (SigFrame){root, 0};
  while (ok && top >= 0) {
    SigFrame *f = &st[top];
    if (f->next == f->d->nfields) {
      ok = f->d == root || hash_signature(m, f->d);
      top--;
      continue;
    }
    const Type *t = f->d->fields[f->next++].ty;
    if (t->kind != TY_STRUCT || !t->sdecl) continue;
    SigEntry *e = sig_entry(m, t->sdecl);
    if (!e || e->seen) {
      ok = e != NULL;
      continue;
    }
    e->seen = true;
    if (top + 1 == cap) {
      SigFrame *bigger = realloc(st, 2 * (size_t)cap * sizeof *st);
      if (!(ok = bigger != NULL)) continue;
      st = bigger, cap *= 2;
    }
    st[++top] = (SigFrame){t->sdecl, 0};
  }
  free(st);
  return ok;
}

static kern_dtype struct_dtype(const Type *t) {
  SigMap m = {0};
  Buf b = {0};
  kern_dtype dt = KERN_DTYPE_INVALID;
  if (hash_nested(&m, t->sdecl)) write_signature(&b, &m, t->sdecl);
  if (!b.oom && b.s)
    dt = rt_dtype_register_struct(t->sdecl->name, b.s, (size_t)t->size, (size_t)t->align);
  buf_free(&b);
  free(m.v);
  return dt;
}

/* vec<T, N> and mat<T, M, N> without a short name: registered like a struct,
 * under a signature no struct has (a struct's has braces). */
static kern_dtype vecn_dtype(const Type *t) {
  return rt_dtype_register_struct(t->name, t->name, (size_t)t->size, (size_t)t->align);
}

static kern_dtype vec_dtype(const Type *t) {
  int k = t->elem ? t->elem->kind : TY_ERROR;
  if (t->generic) return vecn_dtype(t);
  if (k == TY_F32 && t->n == 6) return KERN_SPATIAL_VECTOR;
  if (t->n < 2 || t->n > 4) return KERN_DTYPE_INVALID;
  if (k == TY_F32) return KERN_VEC2 + (t->n - 2);
  if (k == TY_F64) return KERN_DVEC2 + (t->n - 2);
  if (k == TY_I32) return KERN_IVEC2 + (t->n - 2);
  return KERN_DTYPE_INVALID;
}

static kern_dtype quat_dtype(const Type *t) {
  switch (t->elem->kind) {
    case TY_F16: return KERN_QUATH;
    case TY_BF16: return KERN_QUATBF16;
    case TY_F64: return KERN_QUATD;
    default: return KERN_QUAT;
  }
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
    case TY_BF16: return KERN_BFLOAT16;
    case TY_F32: return KERN_FLOAT32;
    case TY_F64: return KERN_FLOAT64;
    case TY_VEC: return vec_dtype(t);
    case TY_MAT:
      if (t->generic) return vecn_dtype(t);
      return t->n == 6                ? KERN_SPATIAL_MATRIX
             : t->n >= 2 && t->n <= 4 ? KERN_MAT22 + (t->n - 2)
                                      : KERN_DTYPE_INVALID;
    case TY_QUAT: return quat_dtype(t);
    case TY_TRANSFORM: return KERN_TRANSFORM;
    case TY_STRUCT: return t->sdecl ? struct_dtype(t) : KERN_DTYPE_INVALID;
    default: return KERN_DTYPE_INVALID;
  }
}

static const Type *scalar_of_dtype(kern_dtype dt) {
  static const Type *const by_dtype[] = {
      [KERN_INT8] = &ty_i8,     [KERN_INT16] = &ty_i16,   [KERN_INT32] = &ty_i32,
      [KERN_INT64] = &ty_i64,   [KERN_UINT8] = &ty_u8,    [KERN_UINT16] = &ty_u16,
      [KERN_UINT32] = &ty_u32,  [KERN_UINT64] = &ty_u64,  [KERN_FLOAT16] = &ty_f16,
      [KERN_FLOAT32] = &ty_f32, [KERN_FLOAT64] = &ty_f64, [KERN_BFLOAT16] = &ty_bf16};
  if (dt <= KERN_DTYPE_INVALID || dt >= (kern_dtype)(sizeof by_dtype / sizeof by_dtype[0]))
    return NULL;
  return by_dtype[dt];
}

kern_dtype kern_dtype_vec(kern_dtype elem, int n) {
  const Type *t = type_vecn(scalar_of_dtype(elem), n);
  return t ? rt_dtype_of_type(t) : KERN_DTYPE_INVALID;
}

kern_dtype kern_dtype_quat(kern_dtype elem) {
  const Type *t = type_quatn(scalar_of_dtype(elem));
  return t ? rt_dtype_of_type(t) : KERN_DTYPE_INVALID;
}

kern_dtype kern_dtype_mat(kern_dtype elem, int rows, int cols) {
  const Type *t = type_matn(scalar_of_dtype(elem), rows, cols);
  return t ? rt_dtype_of_type(t) : KERN_DTYPE_INVALID;
}
