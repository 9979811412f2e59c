/* progen_internal.h: what the parts of the program generator share: progen.c
 * (the plain programs, and the scalar code of every program), progen_tile.c
 * (tiled programs) and progen_check.c (their checks).
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
  T_BF16,
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
  bool lang;            /* progen_lang.c's declarations were written */
  struct PgTile *tile;  /* tiled programs: progen_tile.c's state; NULL for plain ones */
  ProgenLaunch *launch; /* the launches of the kernels written so far, when asked for */
  int nlaunch, maxlaunch;
} Gen;

/* ---- progen.c -------------------------------------------------------------------- */

static inline const TyInfo *pg_ti(Ty t) { return &pg_tys[t]; }
static inline bool pg_is_int(Ty t) { return pg_ti(t)->kind == K_SINT || pg_ti(t)->kind == K_UINT; }
static inline bool pg_is_float(Ty t) { return pg_ti(t)->kind == K_FLOAT; }
static inline bool pg_is_half(Ty t) { return t == T_F16 || t == T_BF16; }
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

/* ---- progen_spatial.c: transforms, spatial algebra, decompositions --------------- */

void pg_spatial_expr(Gen *g, Ty t, int d); /* t: T_F32 or T_VEC3 */
void pg_xform_vec3(Gen *g, int d);
void pg_decomposition_stmt(Gen *g);

/* ---- progen_lang.c: generic functions, references, local arrays, enums ----------- */

void pg_lang_decls(Gen *g);             /* at module level, once */
bool pg_lang_expr(Gen *g, Ty t, int d); /* false: nothing written */
bool pg_lang_stmt(Gen *g);              /* false: nothing written */

/* ---- tiled programs: progen_tile.c and progen_check.c ------------------------------------ */

enum { MAX_SHAPES = 6, MAX_TARRS = 10, MAX_HELPERS = 2 };

typedef enum { ROLE_IN, ROLE_OWNED, ROLE_ATOMIC } Role;

typedef struct TArr {
  char name[NAME];
  Ty t;
  int ndim, ext[2];
  Role role;
  int owner; /* ROLE_OWNED: the instance that writes (and may read) it */
} TArr;

typedef struct Helper { /* tile<T, shape> name(tile<T, shape> p0, T p1) */
  char name[NAME];
  TTy t;
  long long cost; /* its tile storage, counted once by every kernel that calls it */
} Helper;

typedef struct PgTile {
  Ty elem[2];            /* the kernel's element types */
  TTy shape[MAX_SHAPES]; /* its family of shapes (elem unused); shape[0] the main one */
  TArr arr[MAX_TARRS];   /* its array parameters */
  int narr;
  int ninst, launch_rank; /* instances of a launch; its rank (r, c declared when 2) */
  int owner;              /* inside `if (i == owner)`: that instance; -1 elsewhere */
  bool code;              /* tile operations may be written here */
  int nest;
  long long cost, limit;      /* the tile storage counted so far, and its limit */
  const Fn *map[2], *comb[2]; /* elem[j] f(elem[j], elem[1 - j]), elem[j] f(elem[j], elem[j]) */
  Helper help[MAX_HELPERS];
  int nhelp;
  unsigned called; /* the helpers this kernel calls */
  int helpers;     /* written in the program so far (their names) */
  int checks;      /* the kernel's checks so far: chk[check] counts its failures */
} PgTile;

static inline int pg_esize(Ty t) { return pg_ti(t)->bits / 8; }
static inline bool pg_numeric(Ty t) { return t != T_BOOL && pg_is_scalar(t); }
static inline bool pg_ordered(Ty t) { /* the types of min, max, clamp, floordiv */
  return t == T_F32 || t == T_F64 || t == T_I32 || t == T_I64 || t == T_U32 || t == T_U64;
}
static inline long long pg_count(TTy w) { return (long long)w.d[0] * w.d[1]; }
static inline long long pg_bytes(TTy w) { return pg_count(w) * pg_esize(w.elem); }
static inline TTy pg_tty(Ty elem, int rank, int d0, int d1) {
  return (TTy){elem, rank, {d0, rank == 2 ? d1 : 1}};
}
/* A scan's scratch: every level of its tree (n, then halves rounded up, down to 1). */
static inline long long pg_scan_scratch(TTy w) {
  long long total = pg_count(w);
  for (long long m = pg_count(w); m > 1; total += m) m = (m + 1) / 2;
  return total * pg_esize(w.elem);
}

/* Writes a tiled program's functions and kernels (after the constants). */
void pg_tile_program(Gen *g);
/* A statement in tiled code: a tile statement or a plain one, within the kernel's tile storage. */
void pg_tile_stmt(Gen *g);
/* Sometimes writes a scalar of type t made from tiles (a reduction, an element) and returns
 * true; false, writing nothing, otherwise and wherever tiles cannot be used. */
bool pg_tile_scalar(Gen *g, Ty t, int d);
void pg_spend(Gen *g, long long bytes); /* counts tile storage the checker will count */
void pg_put_tty(Gen *g, TTy w);         /* tile<T, shape> */
TTy pg_family_shape(Gen *g, Ty elem);   /* a shape of the kernel's family, of elem */
const Var *pg_find_tile(Gen *g, TTy w); /* a tile variable of type w, or NULL */
void pg_tdecl(Gen *g, TTy w);           /* tile<...> tN = a value; (the last variable) */
void pg_sdecl(Gen *g);                  /* T sN = a scalar from tiles; */
void pg_scalar_for(Gen *g, Ty elem, int d, int fl); /* a scalar that converts to elem */
/* The function a reduction or scan over t combines with (a generated one, or "min" or
 * "max" when builtin_ok), or NULL. */
const char *pg_combiner(Gen *g, Ty t, bool builtin_ok);

/* ---- progen_check.c --------------------------------------------------------------- */

/* A check: a reduction or scan of a small tile, written out in its documented order too. */
void pg_check_stmt(Gen *g);

#endif
