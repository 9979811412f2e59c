/* progen_gen.h: what the parts of the random program generator share.
 *
 * Requires libc. progen.c owns the generator (Gen: the output, the random
 * stream, the model of what is in scope) and the types it knows;
 * progen_spatial.c writes the expressions of the transform and spatial
 * builtins through the hooks below, with the same guarantees (progen.h).
 */
#ifndef KERN_PROGEN_GEN_H
#define KERN_PROGEN_GEN_H

#include <stdbool.h>

typedef enum {
  T_BOOL,
  T_I8,
  T_I16,
  T_I32,
  T_I64,
  T_U8,
  T_U16,
  T_U32,
  T_U64,
  T_F16,
  T_F32,
  T_F64,
  T_VEC2,
  T_VEC3,
  T_VEC4,
  T_DVEC2,
  T_DVEC3,
  T_DVEC4,
  T_IVEC2,
  T_IVEC3,
  T_IVEC4,
  T_MAT22,
  T_MAT33,
  T_MAT44,
  T_QUAT,
  T_S,
  T_COUNT
} Ty;

typedef struct Gen Gen;

/* progen.c: text out (printf style), randomness, and an expression of type t
 * at most d levels deep. */
void pg_put(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pg_rnd(Gen *g, int n);
bool pg_chance(Gen *g, int percent);
void pg_expr(Gen *g, Ty t, int d);
/* Statements: the indentation, a random expression depth, a fresh name for
 * a local, and the local (of type t) put in scope once declared. */
enum { PG_NAME = 16 };
void pg_indent(Gen *g);
int pg_depth(Gen *g);
void pg_fresh(Gen *g, char name[PG_NAME]);
void pg_add_local(Gen *g, const char *name, Ty t);

/* progen_spatial.c: a float32 or a vec3 from the spatial algebra; a vec3
 * through a transform (or the spatial algebra). */
void pg_spatial_expr(Gen *g, Ty t, int d);
void pg_xform_vec3(Gen *g, int d);
/* svd3, svd2, qr3 or eig3 of a matrix expression into new locals, declared
 * (initialized) first; later statements may read them. */
void pg_decomposition_stmt(Gen *g);

#endif
