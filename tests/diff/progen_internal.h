/* progen_internal.h: what the two halves of the random program generator
 * share: progen.c (types, what is in scope, literals and expressions) and
 * progen_stmt.c (statements and declarations, and progen() itself).
 *
 * Requires: libc. Produces: the model of a program being written (Gen) and
 * the pg_ helpers both halves call; everything else stays static in its file.
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
  T_COUNT
} Ty;

typedef enum { K_BOOL, K_SINT, K_UINT, K_FLOAT, K_VEC, K_MAT, K_QUAT, K_STRUCT } Kind;

typedef struct TyInfo {
  const char *name, *alias; /* alias: another spelling of the same type, or NULL */
  Kind kind;
  int bits, len; /* len: vector components, matrix rows (= columns) */
  Ty comp;       /* the component type of a vector */
} TyInfo;

enum {
  MAX_VARS = 512,
  MAX_ARRS = 12,
  MAX_FNS = 6,
  MAX_PARAMS = 3,
  MAX_FIELDS = 4,
  MAX_CONSTS = 10,
  MAX_LARRS = 16,
  NAME = 16
};
enum { F_NC = 1, F_NZ = 2 }; /* expression flags: must not be constant; a literal must not be 0 */

typedef struct Var {
  char name[NAME];
  Ty t;
  bool ro, state;
} Var; /* state: a random state (uint32) */
typedef struct Arr {
  char name[NAME];
  Ty t;
  int ndim;
  bool out;
} Arr;
typedef struct Fn {
  char name[NAME];
  Ty ret, params[MAX_PARAMS];
  bool ref[MAX_PARAMS]; /* a reference parameter `T &pN` */
  int np;
  bool has_arr;  /* a first parameter `const T[] pa` of element type arr_t */
  bool has_warr; /* parameters `T[] pw, int at`: writes pw[at] (the caller's own element) */
  bool has_larr; /* a parameter `T pl[n]`: the caller's local array (const: larr_ro) */
  bool larr_ro;
  Ty arr_t, warr_t, larr_t;
  int larr_n;
} Fn;
typedef struct LArr {
  char name[NAME];
  Ty t;
  int ndim, dims[2];
  bool ro;
} LArr; /* a local array `T name[d0(, d1)]` */
typedef struct Const {
  char name[NAME];
  Ty t;
} Const;

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
  LArr larrs[MAX_LARRS];
  int nlarrs;
  const char *prefix;    /* of every module-level name */
  char sname[NAME];      /* the struct's name (prefix + "S") */
  char ename[NAME];      /* the enum's name (prefix + "E"), or "" without one */
  Ty fields[MAX_FIELDS]; /* the struct, when nfields > 0 */
  int nfields;
  int kdim;        /* 1 or 2 in a kernel (its arrays' rank), 0 in a function */
  const char *own; /* this thread's element of an out array: "[i]", "[r, c]" or "[at]" */
  int loops, nest, budget;
  Ty ret;              /* the function's return type */
  const Arr *iter_arr; /* the array an enclosing loop walks, with iter_var */
  char iter_var[NAME];
} Gen;

/* ---- progen.c: output and randomness, types, scope, literals, expressions (each
 * documented where it is defined) ---- */

void pg_put(Gen *g, const char *fmt, ...);
void pg_indent(Gen *g);
int pg_rnd(Gen *g, int n);
bool pg_chance(Gen *g, int percent);
const TyInfo *pg_ti(Ty t);
bool pg_is_int(Ty t);
bool pg_is_float(Ty t);
bool pg_is_scalar(Ty t);
bool pg_is_vec(Ty t);
const char *pg_tname(Gen *g, Ty t);
void pg_fresh(Gen *g, char *name, const char *prefix);
Ty pg_any_type(Gen *g, bool with_struct);
Ty pg_narrower(Gen *g, Ty t);
Ty pg_scalar_type(Gen *g);
Ty pg_int_type(Gen *g);
Var *pg_add_var(Gen *g, const char *name, Ty t, bool ro);
const Var *pg_find_var(Gen *g, Ty t, bool want_rw);
const Var *pg_find_var_if(Gen *g, bool (*ok)(Ty), bool want_rw);
const LArr *pg_find_larr(Gen *g, Ty t, bool want_rw, int n);
void pg_larr_elem(Gen *g, const LArr *a);
void pg_literal(Gen *g, Ty t, bool nonzero);
void pg_expr(Gen *g, Ty t, int d, int fl);
bool pg_effect_expr(Gen *g, Ty t, int d);
bool pg_call(Gen *g, Ty t, int d);
void pg_own_index(Gen *g);
int pg_depth(Gen *g);
const Arr *pg_find_out(Gen *g, Ty t);
const Arr *pg_find_arr(Gen *g, Ty t, bool arg);

#endif
