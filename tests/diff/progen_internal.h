/* progen_internal.h: what the two parts of the program generator share:
 * progen.c (the plain programs, and the scalar code of every program) and
 * progen_tile.c (tiled programs).
 *
 * Requires: progen.h. Produces: the generator's model (types, what is in
 * scope, the output buffer and the random stream, in Gen) and the pg_*
 * functions each part gives the other. Everything here is for the generator
 * only; its users include progen.h.
 */
#ifndef KERN_PROGEN_INTERNAL_H
#define KERN_PROGEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "progen.h"

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
  T_TILE, /* a tile variable: its element type and shape in Var.tt */
  T_COUNT
} Ty;

typedef enum { K_BOOL, K_SINT, K_UINT, K_FLOAT, K_VEC, K_MAT, K_QUAT, K_STRUCT, K_TILE } Kind;

typedef struct TyInfo {
  const char *name, *alias; /* alias: another spelling of the same type, or NULL */
  Kind kind;
  int bits, len; /* len: vector components, matrix rows (= columns) */
  Ty comp;       /* the component type of a vector */
} TyInfo;

extern const TyInfo pg_tys[T_COUNT];

enum {
  MAX_VARS = 512,
  MAX_ARRS = 12,
  MAX_FNS = 24,
  MAX_PARAMS = 3,
  MAX_FIELDS = 4,
  MAX_CONSTS = 6,
  MAX_INDEX_NEST = 4, /* array reads in array reads */
  NAME = 16
};
enum { F_NC = 1, F_NZ = 2 }; /* expression flags: must not be constant; a literal must not be 0 */

/* A tile type: scalar elements, 1 or 2 extents (d[1] is 1 for a 1-D tile). */
typedef struct TTy {
  Ty elem;
  int rank, d[2];
} TTy;

typedef struct Var {
  char name[NAME];
  Ty t;
  bool ro, state; /* state: a random state (uint32) */
  TTy tt;         /* t == T_TILE: the tile's type */
  bool nansafe;   /* a tile holding no NaN made by arithmetic (its NaNs, if any, were loaded) */
} Var;
typedef struct Arr {
  char name[NAME];
  Ty t;
  int ndim;
  bool out;
} Arr;
typedef struct Fn {
  char name[NAME];
  Ty ret, params[MAX_PARAMS];
  int np;
  bool has_arr;  /* a first parameter `const T[] pa` of element type arr_t */
  bool has_warr; /* parameters `T[] pw, int at`: writes pw[at] (the caller's own element) */
  Ty arr_t, warr_t;
} Fn;
typedef struct Const {
  char name[NAME];
  Ty t;
} Const;

struct PgTile; /* progen_tile.c's state while it writes a tiled program */

typedef struct Gen {
  uint64_t rng;
  char *s;
  size_t len, cap;
  bool oom;
  int indent, ids;
  Var vars[MAX_VARS];
  int nvars;
  Arr arrs[MAX_ARRS];
  int narrs;
  Fn fns[MAX_FNS];
  int nfns, callable; /* fns[0 .. callable) may be called from here */
  Const consts[MAX_CONSTS];
  int nconsts;
  const char *prefix;    /* of every module-level name */
  char sname[NAME];      /* the struct's name (prefix + "S") */
  Ty fields[MAX_FIELDS]; /* the struct, when nfields > 0 */
  int nfields;
  int kdim;        /* 1 or 2 in a kernel (its arrays' rank), 0 in a function */
  const char *own; /* this thread's element of an out array: "[i]", "[r, c]", "[at]"; or NULL */
  int loops, nest, budget;
  int indexes;         /* array reads open around the expression being written */
  Ty ret;              /* the function's return type */
  const Arr *iter_arr; /* the array an enclosing loop walks, with iter_var */
  char iter_var[NAME];
  bool pure;            /* no side effect but what the caller writes itself (tiled programs) */
  struct PgTile *tile;  /* tiled programs: progen_tile.c's state; NULL for plain ones */
  ProgenLaunch *launch; /* the launches of the kernels written so far, when asked for */
  int nlaunch, maxlaunch;
} Gen;

/* ---- progen.c -------------------------------------------------------------------- */

static inline const TyInfo *pg_ti(Ty t) { return &pg_tys[t]; }
static inline bool pg_is_int(Ty t) { return pg_ti(t)->kind == K_SINT || pg_ti(t)->kind == K_UINT; }
static inline bool pg_is_float(Ty t) { return pg_ti(t)->kind == K_FLOAT; }
static inline bool pg_is_scalar(Ty t) { return t <= T_F64; }

void pg_put(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pg_indent(Gen *g);
int pg_rnd(Gen *g, int n); /* 0 .. n - 1 */
bool pg_chance(Gen *g, int percent);
const char *pg_tname(Gen *g, Ty t); /* a scalar type's name (or its alias) */
void pg_fresh(Gen *g, char *name, const char *prefix);
Var *pg_add_var(Gen *g, const char *name, Ty t, bool ro); /* NULL when the scope is full */
const Var *pg_find_var(Gen *g, Ty t, bool want_rw);
Ty pg_narrower(Gen *g, Ty t); /* t, or a type that widens to t implicitly */
Ty pg_int_type(Gen *g);
void pg_literal(Gen *g, Ty t, bool nonzero);
void pg_expr(Gen *g, Ty t, int d, int fl); /* an expression of type t, depth about d */
int pg_depth(Gen *g);
void pg_plain_stmt(Gen *g); /* a statement of the plain generator */
void pg_block(Gen *g, int n);
void pg_reset_scope(Gen *g, int kdim, int budget);
/* A new function of this signature (pure: no array parameter, no side effect), written out. */
const Fn *pg_function(Gen *g, Ty ret, const Ty *params, int np);
/* The next kernel's launch record, zeroed (NULL when no one asked for them). */
ProgenLaunch *pg_launch(Gen *g);

/* ---- progen_tile.c --------------------------------------------------------------- */

/* Writes a tiled program's functions and kernels (after the constants). */
void pg_tile_program(Gen *g);
/* A statement in tiled code: a tile statement or a plain one, within the kernel's tile storage. */
void pg_tile_stmt(Gen *g);
/* Sometimes writes a scalar of type t made from tiles (a reduction, an element) and returns
 * true; false, writing nothing, otherwise and wherever tiles cannot be used. */
bool pg_tile_scalar(Gen *g, Ty t, int d);

#endif
