/* progen.c: the random kern program generator (see progen.h): its types,
 * what is in scope, literals and expressions; progen_stmt.c writes the
 * statements and declarations around them.
 *
 * Requires: libc. Produces: the pg_ helpers of progen_internal.h. The
 * generator writes text directly while it walks a small model of what is in scope
 * (variables, arrays, functions, constants, the struct), choosing only forms
 * whose types it knows:
 * every expression is generated for a wanted type. Constant expressions are
 * avoided where the checker would fold them (an operator always has a
 * non-constant operand), so no overflow or division by zero is ever folded at
 * compile time; at run time those operations are defined by the language.
 */
#include "progen_internal.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const TyInfo tys[T_COUNT] = {
    [T_BOOL] = {"bool", NULL, K_BOOL, 8, 1, T_BOOL},
    [T_I8] = {"int8", NULL, K_SINT, 8, 1, T_I8},
    [T_I16] = {"int16", NULL, K_SINT, 16, 1, T_I16},
    [T_I32] = {"int32", "int", K_SINT, 32, 1, T_I32},
    [T_I64] = {"int64", NULL, K_SINT, 64, 1, T_I64},
    [T_U8] = {"uint8", NULL, K_UINT, 8, 1, T_U8},
    [T_U16] = {"uint16", NULL, K_UINT, 16, 1, T_U16},
    [T_U32] = {"uint32", "uint", K_UINT, 32, 1, T_U32},
    [T_U64] = {"uint64", NULL, K_UINT, 64, 1, T_U64},
    [T_F16] = {"float16", NULL, K_FLOAT, 16, 1, T_F16},
    [T_F32] = {"float32", "float", K_FLOAT, 32, 1, T_F32},
    [T_F64] = {"float64", "double", K_FLOAT, 64, 1, T_F64},
    [T_VEC2] = {"vec2", NULL, K_VEC, 32, 2, T_F32},
    [T_VEC3] = {"vec3", NULL, K_VEC, 32, 3, T_F32},
    [T_VEC4] = {"vec4", NULL, K_VEC, 32, 4, T_F32},
    [T_DVEC2] = {"dvec2", NULL, K_VEC, 64, 2, T_F64},
    [T_DVEC3] = {"dvec3", NULL, K_VEC, 64, 3, T_F64},
    [T_DVEC4] = {"dvec4", NULL, K_VEC, 64, 4, T_F64},
    [T_IVEC2] = {"ivec2", NULL, K_VEC, 32, 2, T_I32},
    [T_IVEC3] = {"ivec3", NULL, K_VEC, 32, 3, T_I32},
    [T_IVEC4] = {"ivec4", NULL, K_VEC, 32, 4, T_I32},
    [T_MAT22] = {"mat22", NULL, K_MAT, 32, 2, T_F32},
    [T_MAT33] = {"mat33", NULL, K_MAT, 32, 3, T_F32},
    [T_MAT44] = {"mat44", NULL, K_MAT, 32, 4, T_F32},
    [T_QUAT] = {"quat", NULL, K_QUAT, 32, 4, T_F32},
    [T_S] = {"S", NULL, K_STRUCT, 0, 1, T_S},
};
/* ---- output and randomness ------------------------------------------------------ */

void pg_put(Gen *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || g->oom) return;
  if (g->len + (size_t)n + 1 > g->cap) {
    size_t cap = (g->cap + (size_t)n + 1) * 2;
    char *s = realloc(g->s, cap);
    if (!s) {
      g->oom = true;
      return;
    }
    g->s = s;
    g->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(g->s + g->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  g->len += (size_t)n;
}

void pg_indent(Gen *g) { pg_put(g, "%*s", 4 * g->indent, ""); }

static uint64_t next(Gen *g) { /* splitmix64 */
  uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int pg_rnd(Gen *g, int n) { return (int)(next(g) % (uint64_t)n); }
bool pg_chance(Gen *g, int percent) { return pg_rnd(g, 100) < percent; }

const TyInfo *pg_ti(Ty t) { return &tys[t]; }
bool pg_is_int(Ty t) { return pg_ti(t)->kind == K_SINT || pg_ti(t)->kind == K_UINT; }
bool pg_is_float(Ty t) { return pg_ti(t)->kind == K_FLOAT; }
bool pg_is_scalar(Ty t) { return t <= T_F64; }

const char *pg_tname(Gen *g, Ty t) {
  if (t == T_S) return g->sname;
  return pg_ti(t)->alias && pg_chance(g, 50) ? pg_ti(t)->alias : pg_ti(t)->name;
}

void pg_fresh(Gen *g, char *name, const char *prefix) {
  snprintf(name, NAME, "%s%d", prefix, g->ids++);
}

/* A type for a variable, parameter or array: mostly 32-bit scalars. */
Ty pg_any_type(Gen *g, bool with_struct) {
  static const Ty common[] = {T_I32, T_I32, T_I32, T_U32, T_U32, T_F32,
                              T_F32, T_F64, T_I64, T_U64, T_BOOL};
  int r = pg_rnd(g, 100);
  if (r < 60) return common[pg_rnd(g, (int)(sizeof common / sizeof common[0]))];
  if (r < 75) return (Ty)(T_I8 + pg_rnd(g, T_F16 - T_I8 + 1)); /* the narrow ones and float16 */
  if (with_struct && g->nfields && r < 82) return T_S;
  if (r < 94) return (Ty)(T_VEC2 + pg_rnd(g, T_IVEC4 - T_VEC2 + 1));
  return (Ty)(T_MAT22 + pg_rnd(g, T_QUAT - T_MAT22 + 1));
}

/* A type that widens to t implicitly (int8 to int32, float32 to float64 ...),
 * or t itself. */
Ty pg_narrower(Gen *g, Ty t) {
  static const Ty s[] = {T_I8, T_I16, T_I32, T_I64}, u[] = {T_U8, T_U16, T_U32, T_U64},
                  f[] = {T_F16, T_F32, T_F64};
  const Ty *fam = pg_ti(t)->kind == K_SINT    ? s
                  : pg_ti(t)->kind == K_UINT  ? u
                  : pg_ti(t)->kind == K_FLOAT ? f
                                              : NULL;
  int pos = 0;
  while (fam && fam[pos] != t) pos++;
  return fam && pg_chance(g, 25) ? fam[pg_rnd(g, pos + 1)] : t;
}

Ty pg_scalar_type(Gen *g) {
  Ty t = pg_any_type(g, false);
  return pg_is_scalar(t) ? t : pg_ti(t)->comp;
}

Ty pg_int_type(Gen *g) {
  Ty t = pg_scalar_type(g);
  return pg_is_int(t) ? t : T_I32;
}

/* ---- scope ----------------------------------------------------------------------- */

Var *pg_add_var(Gen *g, const char *name, Ty t, bool ro) {
  if (g->nvars == MAX_VARS) return NULL;
  Var *v = &g->vars[g->nvars++];
  snprintf(v->name, NAME, "%s", name);
  v->t = t;
  v->ro = ro;
  v->state = false;
  return v;
}

/* A random variable of type t (mutable only if want_rw), or NULL. */
const Var *pg_find_var(Gen *g, Ty t, bool want_rw) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++)
    if (g->vars[k].t == t && (!want_rw || !g->vars[k].ro) && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->vars[pick];
}

/* A random variable satisfying ok, or NULL. */
const Var *pg_find_var_if(Gen *g, bool (*ok)(Ty), bool want_rw) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++)
    if (ok(g->vars[k].t) && (!want_rw || !g->vars[k].ro) && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->vars[pick];
}

/* An array of element type t; for a function argument (arg), a 1-D input. */
const Arr *pg_find_arr(Gen *g, Ty t, bool arg) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].t == t && !(arg && (g->arrs[k].out || g->arrs[k].ndim != 1)) &&
        pg_rnd(g, ++n) == 0)
      pick = k;
  return pick < 0 ? NULL : &g->arrs[pick];
}

static const Const *find_const(Gen *g, Ty t) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nconsts; k++)
    if (g->consts[k].t == t && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->consts[pick];
}

/* A local array of element type t (mutable only if want_rw; of n elements
 * in one dimension when n > 0), or NULL. */
const LArr *pg_find_larr(Gen *g, Ty t, bool want_rw, int n) {
  int m = 0, pick = -1;
  for (int k = 0; k < g->nlarrs; k++) {
    const LArr *a = &g->larrs[k];
    if (a->t == t && (!want_rw || !a->ro) && (!n || (a->ndim == 1 && a->dims[0] == n)) &&
        pg_rnd(g, ++m) == 0)
      pick = k;
  }
  return pick < 0 ? NULL : &g->larrs[pick];
}

/* An element of local array a: each index a constant in range or any
 * integer (a run-time index is clamped to the extent). */
void pg_larr_elem(Gen *g, const LArr *a) {
  pg_put(g, "%s[", a->name);
  for (int d = 0; d < a->ndim; d++) {
    if (d) pg_put(g, ", ");
    if (pg_chance(g, 40))
      pg_put(g, "%d", pg_rnd(g, a->dims[d]));
    else
      pg_expr(g, pg_int_type(g), 1, F_NC);
  }
  pg_put(g, "]");
}

/* An out array of element type t that a function may write at this thread's
 * index: 1-D, in a 1-D kernel or a function's pw. */
const Arr *pg_find_out(Gen *g, Ty t) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].t == t && g->arrs[k].out && g->arrs[k].ndim == 1 && g->kdim != 2 &&
        pg_rnd(g, ++n) == 0)
      pick = k;
  return pick < 0 ? NULL : &g->arrs[pick];
}

/* An out array of element type t whose element at this thread's index
 * (own) a reference may name, or NULL. */
static const Arr *find_own(Gen *g, Ty t) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].t == t && g->arrs[k].out && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->arrs[pick];
}

/* A mutable vector variable with components of type t, or NULL. */
static const Var *find_vec_of(Gen *g, Ty t) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++)
    if (!g->vars[k].ro && pg_ti(g->vars[k].t)->kind == K_VEC && pg_ti(g->vars[k].t)->comp == t &&
        pg_rnd(g, ++n) == 0)
      pick = k;
  return pick < 0 ? NULL : &g->vars[pick];
}

/* What a reference parameter of type t may be given: a mutable variable,
 * this thread's element of an out array (never another thread's: no races),
 * or a component of a mutable vector. Writes one when emit; false: none. */
static bool ref_lvalue(Gen *g, Ty t, bool emit) {
  const Var *v = pg_find_var(g, t, true);
  const Arr *a = find_own(g, t);
  const Var *vec = find_vec_of(g, t);
  const LArr *l = pg_find_larr(g, t, true, 0);
  if (!emit) return v || a || vec || l;
  int r = pg_rnd(g, 4);
  if (l && (r == 3 || (!v && !a && !vec))) {
    pg_larr_elem(g, l);
  } else if (v && (r == 0 || (!a && !vec))) {
    pg_put(g, "%s", v->name);
  } else if (a && (r == 1 || !vec)) {
    pg_put(g, "%s", a->name);
    pg_own_index(g);
  } else if (vec) {
    pg_put(g, "%s.%c", vec->name, "xyzw"[pg_rnd(g, pg_ti(vec->t)->len)]);
  } else {
    return false;
  }
  return true;
}

static bool can_call(Gen *g, const Fn *f) {
  for (int k = 0; k < f->np; k++)
    if (f->ref[k] && !ref_lvalue(g, f->params[k], false)) return false;
  if (f->has_larr && !pg_find_larr(g, f->larr_t, !f->larr_ro, f->larr_n)) return false;
  return (!f->has_arr || pg_find_arr(g, f->arr_t, true)) &&
         (!f->has_warr || pg_find_out(g, f->warr_t));
}

static const Fn *find_fn(Gen *g, Ty ret) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->callable; k++)
    if (g->fns[k].ret == ret && can_call(g, &g->fns[k]) && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->fns[pick];
}

/* ---- literals -------------------------------------------------------------------- */

static void int_literal(Gen *g, Ty t, bool nonzero) {
  const TyInfo *i = pg_ti(t);
  bool sgn = i->kind == K_SINT;
  uint64_t umax = i->bits == 64 ? ~0ull : (1ull << i->bits) - 1, v;
  switch (pg_rnd(g, 6)) {
    case 0:
    case 1: v = 1 + (uint64_t)pg_rnd(g, 9); break;
    case 2:
      if (sgn) {
        pg_put(g, "(-%d)", 1 + pg_rnd(g, 9));
        return;
      }
      v = umax;
      break;
    case 3:
      if (sgn) {
        pg_put(g, "(-%llu)", (unsigned long long)(umax / 2 + 1));
        return;
      } /* MIN */
      v = umax >> 1;
      break;
    case 4: v = sgn ? umax / 2 : umax; break; /* MAX */
    default: v = next(g) & (sgn ? umax / 2 : umax); break;
  }
  if (v == 0 && nonzero) v = 3;
  if (!sgn && pg_chance(g, 30))
    pg_put(g, "0x%llX", (unsigned long long)v);
  else
    pg_put(g, "%llu", (unsigned long long)v);
  if (t == T_U32 && pg_chance(g, 30))
    pg_put(g, "u");
  else if (t == T_I64 && pg_chance(g, 30))
    pg_put(g, "l");
  else if (t == T_U64 && pg_chance(g, 30))
    pg_put(g, "ul");
}

static void float_literal(Gen *g, Ty t, bool nonzero) {
  static const char *const common[] = {"1.0",     "0.5", "2.0",  "(-1.5)", "0.25", "3.0", "10.0",
                                       "(-0.75)", "0.1", "1e-3", "(-2.0)", "1.5",  "0.0", "7.0"};
  static const char *const wide[] = {"1e30", "(-1e-30)", "16777217.0", "3.4e38", "1e-40"};
  int n = (int)(sizeof common / sizeof common[0]);
  const char *s = common[pg_rnd(g, nonzero ? n - 2 : n)];
  if (t != T_F16 && pg_chance(g, 10)) s = wide[pg_rnd(g, (int)(sizeof wide / sizeof wide[0]))];
  if (t == T_F64 && s == wide[3]) s = "1e300";
  pg_put(g, "%s", s);
  if (t == T_F32 && s[0] != '(' && pg_chance(g, 20)) pg_put(g, "f");
}

void pg_literal(Gen *g, Ty t, bool nonzero) {
  if (t == T_BOOL)
    pg_put(g, pg_chance(g, 50) ? "true" : "false");
  else if (pg_is_float(t))
    float_literal(g, t, nonzero);
  else
    int_literal(g, t, nonzero);
}

/* ---- leaves ---------------------------------------------------------------------- */

/* An index into dimension dim of a: within its shape by construction. */
static void index_expr(Gen *g, const Arr *a, int dim, int d) {
  if (a->ndim == 1 && pg_chance(g, 25)) { /* an int64 index */
    pg_put(g, "int64(uint64(");
    pg_expr(g, pg_int_type(g), d, F_NC);
    pg_put(g, ") %% uint64(size(%s)))", a->name);
    return;
  }
  pg_put(g, "int(uint32(");
  pg_expr(g, pg_int_type(g), d, F_NC);
  pg_put(g, ") %% uint32(shape(%s, %d)))", a->name, dim);
}

void pg_own_index(Gen *g) { pg_put(g, "%s", g->own); }

static void array_read(Gen *g, const Arr *a, int d) {
  pg_put(g, "%s", a->name);
  if (a->out || (g->kdim && pg_chance(g, 45))) {
    pg_own_index(g);
    return;
  }
  if (a == g->iter_arr && pg_chance(g, 60)) {
    pg_put(g, a->ndim == 2 ? "[r, %s]" : "[%s]", g->iter_var);
    return;
  }
  pg_put(g, "[");
  for (int k = 0; k < a->ndim; k++) {
    if (k) pg_put(g, ", ");
    index_expr(g, a, k, d);
  }
  pg_put(g, "]");
}

/* A component of a vector variable whose components have type t. */
static bool component(Gen *g, Ty t) {
  static const char xyzw[] = "xyzw";
  int n = 0;
  const Var *pick = NULL;
  for (int k = 0; k < g->nvars; k++)
    if (pg_ti(g->vars[k].t)->kind == K_VEC && pg_ti(g->vars[k].t)->comp == t && pg_rnd(g, ++n) == 0)
      pick = &g->vars[k];
  if (!pick) return false;
  int len = pg_ti(pick->t)->len;
  if (pg_chance(g, 60))
    pg_put(g, "%s.%c", pick->name, xyzw[pg_rnd(g, len)]);
  else if (pg_chance(g, 50))
    pg_put(g, "%s[%d]", pick->name, pg_rnd(g, len));
  else {
    pg_put(g, "%s[", pick->name);
    pg_expr(g, pg_int_type(g), 1, F_NC); /* a run-time index is clamped */
    pg_put(g, "]");
  }
  return true;
}

static bool field(Gen *g, Ty t) {
  const Var *s = pg_find_var(g, T_S, false);
  int n = 0, pick = -1;
  for (int k = 0; s && k < g->nfields; k++)
    if (g->fields[k] == t && pg_rnd(g, ++n) == 0) pick = k;
  if (pick < 0) return false;
  pg_put(g, "%s.f%d", s->name, pick);
  return true;
}

static bool kernel_int(Gen *g) {
  switch (pg_rnd(g, 4)) {
    case 0: pg_put(g, "tid()"); return true;
    case 1: pg_put(g, "dim(0)"); return true;
    case 2: pg_put(g, "i"); return true;
    default:
      if (!g->narrs) return false;
      pg_put(g, "len(%s)", g->arrs[pg_rnd(g, g->narrs)].name);
      return true;
  }
}

static bool scalar_var(Ty t) { return pg_is_scalar(t); }

/* Some non-constant value of scalar type t made from any scalar variable. */
static void scalar_fallback(Gen *g, Ty t) {
  const Var *v = pg_find_var(g, t, false);
  if (!v) v = pg_find_var_if(g, scalar_var, false);
  if (!v) {
    pg_put(g, "%s(%d)", pg_ti(t)->name, 1);
    return;
  } /* not reached: a scalar is always in scope */
  if (v->t == t)
    pg_put(g, "%s", v->name);
  else
    pg_put(g, "%s(%s)", pg_ti(t)->name, v->name);
}

static void constructor(Gen *g, Ty t, int d, int fl) {
  pg_put(g, "%s(", t == T_S ? g->sname : pg_ti(t)->name);
  if (pg_chance(g, 6)) { /* zero; a quat's is the identity */
  } else if (t == T_S) {
    for (int k = 0; k < g->nfields; k++) {
      if (k) pg_put(g, ", ");
      pg_expr(g, g->fields[k], d, k == 0 ? fl : 0);
    }
  } else if (pg_chance(g, 25)) {
    pg_expr(g, pg_narrower(g, pg_ti(t)->comp), d, fl);
  } else if (pg_ti(t)->kind == K_MAT && pg_chance(g, 50)) { /* from rows */
    for (int k = 0; k < pg_ti(t)->len; k++) {
      if (k) pg_put(g, ", ");
      pg_expr(g, (Ty)(T_VEC2 + pg_ti(t)->len - 2), d, 0);
    }
  } else {
    int n = pg_ti(t)->kind == K_MAT ? pg_ti(t)->len * pg_ti(t)->len : pg_ti(t)->len;
    for (int k = 0; k < n; k++) {
      if (k) pg_put(g, ", ");
      pg_expr(g, pg_narrower(g, pg_ti(t)->comp), d, k == 0 ? fl : 0);
    }
  }
  pg_put(g, ")");
}

static bool leaf_try(Gen *g, Ty t, int fl) {
  const Var *v;
  const Arr *a;
  const Const *c;
  const LArr *l;
  switch (pg_rnd(g, 8)) {
    case 7:
      if (!(l = pg_find_larr(g, t, false, 0))) return false;
      pg_larr_elem(g, l);
      return true;
    case 0:
    case 1:
      if (!(v = pg_find_var(g, t, false))) return false;
      pg_put(g, "%s", v->name);
      return true;
    case 2:
      if (!(a = pg_find_arr(g, t, false))) return false;
      array_read(g, a, 1);
      return true;
    case 3:
      if ((fl & F_NC) || !pg_is_scalar(t)) return false;
      pg_literal(g, t, fl & F_NZ);
      return true;
    case 4:
      if ((fl & (F_NC | F_NZ)) || !(c = find_const(g, t))) return false;
      pg_put(g, "%s", c->name);
      return true;
    case 5: return t == T_I32 && g->kdim && kernel_int(g);
    default: return pg_is_scalar(t) && (pg_chance(g, 50) ? component(g, t) : field(g, t));
  }
}

static void leaf(Gen *g, Ty t, int fl) {
  for (int tries = 0; tries < 12; tries++)
    if (leaf_try(g, t, fl)) return;
  if (pg_is_scalar(t))
    scalar_fallback(g, t);
  else
    constructor(g, t, 0, F_NC);
}

/* ---- expressions ----------------------------------------------------------------- */

/* Two operands of type t around op; at least one is not constant. */
/* Two operands of type t around op; at least one is not constant and has
 * type t, the other may be of a narrower type (an untyped constant there
 * takes the type of the first, so it must fit both). */
static void binop(Gen *g, Ty t, const char *op, int d, int fl_right) {
  int nc = pg_rnd(g, 2);
  pg_put(g, "(");
  pg_expr(g, nc == 0 ? t : pg_narrower(g, t), d - 1, nc == 0 ? F_NC : 0);
  pg_put(g, " %s ", op);
  pg_expr(g, nc == 1 ? t : pg_narrower(g, t), d - 1, (nc == 1 ? F_NC : 0) | fl_right);
  pg_put(g, ")");
}

static void ternary(Gen *g, Ty t, int d) {
  int nc = pg_rnd(g, 2);
  pg_put(g, "(");
  pg_expr(g, T_BOOL, d - 1, F_NC);
  pg_put(g, " ? ");
  pg_expr(g, nc == 0 ? t : pg_narrower(g, t), d - 1, nc == 0 ? F_NC : 0);
  pg_put(g, " : ");
  pg_expr(g, nc == 1 ? t : pg_narrower(g, t), d - 1, nc == 1 ? F_NC : 0);
  pg_put(g, ")");
}

static void cast(Gen *g, Ty t, int d) {
  Ty from = pg_scalar_type(g);
  if (pg_chance(g, 50)) {
    pg_put(g, "%s(", pg_tname(g, t));
    pg_expr(g, from, d - 1, F_NC);
    pg_put(g, ")");
  } else {
    pg_put(g, "((%s)", pg_tname(g, t));
    pg_expr(g, from, d - 1, F_NC);
    pg_put(g, ")");
  }
}

/* A call of builtin name with n arguments of type t (the first not constant). */
static void builtin(Gen *g, const char *name, Ty t, int n, int d) {
  pg_put(g, "%s(", name);
  for (int k = 0; k < n; k++) {
    if (k) pg_put(g, ", ");
    pg_expr(g, t, d - 1, k == 0 ? F_NC : 0);
  }
  pg_put(g, ")");
}

bool pg_call(Gen *g, Ty t, int d) {
  const Fn *f = find_fn(g, t);
  if (!f) return false;
  pg_put(g, "%s(", f->name);
  if (f->has_arr) pg_put(g, "%s, ", pg_find_arr(g, f->arr_t, true)->name);
  if (f->has_warr) pg_put(g, "%s, %s, ", pg_find_out(g, f->warr_t)->name, g->kdim ? "i" : "at");
  if (f->has_larr) pg_put(g, "%s, ", pg_find_larr(g, f->larr_t, !f->larr_ro, f->larr_n)->name);
  for (int k = 0; k < f->np; k++) {
    if (k) pg_put(g, ", ");
    if (!f->ref[k] || !ref_lvalue(g, f->params[k], true))
      pg_expr(g, f->params[k], d - 1, F_NC); /* typed arguments: overloads resolve exactly */
  }
  pg_put(g, ")");
  return true;
}

bool pg_is_vec(Ty t) { return pg_ti(t)->kind == K_VEC; }

/* A vector of any type whose components are t, of length len (0: any). */
static Ty vec_of(Gen *g, Ty comp, int len) {
  Ty base = comp == T_F32 ? T_VEC2 : comp == T_F64 ? T_DVEC2 : T_IVEC2;
  return (Ty)(base + (len ? len - 2 : pg_rnd(g, 3)));
}

/* A scalar of type t taken out of a vector expression. */
static void vec_scalar(Gen *g, Ty t, int d) {
  static const char xyzw[] = "xyzw";
  Ty v = vec_of(g, t, 0);
  switch (pg_rnd(g, 4)) {
    case 0:
      pg_put(g, "(");
      pg_expr(g, v, d - 1, 0);
      pg_put(g, ").%c", xyzw[pg_rnd(g, pg_ti(v)->len)]);
      break;
    case 1: builtin(g, "dot", v, 2, d); break;
    case 2: builtin(g, pg_chance(g, 50) ? "min" : "max", v, 1, d); break; /* over the vector */
    default:
      if (t == T_I32)
        builtin(g, "dot", v, 2, d);
      else
        builtin(g, pg_chance(g, 50) ? "length_sq" : "length", v, 1, d);
  }
}

static const Var *find_state(Gen *g) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++)
    if (g->vars[k].state && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->vars[pick];
}

/* A random draw (uint32, float32) or an atomic on this thread's element of an
 * out array, returning its old value: expressions with side effects, whose
 * order of evaluation the language defines. false: none fits t. */
bool pg_effect_expr(Gen *g, Ty t, int d) {
  static const char *const ops[] = {"add", "sub", "min", "max", "exch", "cas", "and", "or", "xor"};
  const Var *s = find_state(g);
  if (s && (t == T_U32 || t == T_F32) && pg_chance(g, 50)) {
    if (t == T_U32)
      pg_put(g, "randi(&%s)", s->name);
    else if (pg_chance(g, 50))
      pg_put(g, "randf(&%s)", s->name);
    else {
      pg_put(g, "randf(&%s, ", s->name);
      pg_expr(g, T_F32, d - 1, 0);
      pg_put(g, ", ");
      pg_expr(g, T_F32, d - 1, 0);
      pg_put(g, ")");
    }
    return true;
  }
  int n = 0;
  const Arr *a = NULL;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].out && g->arrs[k].t == t && pg_rnd(g, ++n) == 0) a = &g->arrs[k];
  bool vec = pg_is_vec(t), fl = pg_is_float(t) || (vec && pg_ti(t)->comp != T_I32);
  if (!a || t == T_F16 || (!vec && !pg_is_int(t) && !fl) || (pg_is_int(t) && pg_ti(t)->bits < 32))
    return false;
  int op = vec ? pg_rnd(g, 4) : pg_rnd(g, fl ? 6 : 9);
  pg_put(g, "atomic_%s(&%s", ops[op], a->name);
  pg_own_index(g);
  for (int k = op == 5 ? 2 : 1; k > 0; k--) {
    pg_put(g, ", ");
    pg_expr(g, t, d - 1, 0);
  }
  pg_put(g, ")");
  return true;
}

static void int_expr(Gen *g, Ty t, int d) {
  static const char *const ops[] = {"+", "-", "*", "/", "%", "&", "|", "^"};
  bool wide = t == T_I32 || t == T_I64 || t == T_U32 || t == T_U64, sgn = pg_ti(t)->kind == K_SINT;
  int op = pg_rnd(g, 8);
  switch (pg_rnd(g, 12)) {
    case 0:
    case 1:
    case 2: binop(g, t, ops[op], d, op == 3 || op == 4 ? F_NZ : 0); return;
    case 3: /* a shift: any count, masked by the language; sometimes a literal in range */
      pg_put(g, "(");
      pg_expr(g, t, d - 1, F_NC);
      pg_put(g, pg_chance(g, 50) ? " << " : " >> ");
      if (pg_chance(g, 40))
        pg_put(g, "%d", pg_rnd(g, pg_ti(t)->bits));
      else
        pg_expr(g, pg_int_type(g), d - 1, F_NC);
      pg_put(g, ")");
      return;
    case 4:
      pg_put(g, pg_chance(g, 50) ? "(-" : "(~");
      pg_expr(g, t, d - 1, F_NC);
      pg_put(g, ")");
      return;
    case 5: cast(g, t, d); return;
    case 6: ternary(g, t, d); return;
    case 7:
      if (!wide) break;
      if (sgn && pg_chance(g, 40))
        builtin(g, pg_chance(g, 50) ? "abs" : "sign", t, 1, d);
      else if (pg_chance(g, 30))
        builtin(g, "clamp", t, 3, d);
      else
        builtin(g, pg_chance(g, 50) ? "min" : "max", t, 2, d);
      return;
    case 8:
      if (pg_call(g, t, d)) return;
      break;
    case 9: /* a guarded division, as C programmers write it */
      pg_put(g, "(");
      pg_expr(g, t, d - 1, F_NC);
      pg_put(g, pg_chance(g, 50) ? " / (" : " %% (");
      pg_expr(g, t, d - 1, F_NC);
      pg_put(g, " | 1))");
      return;
    case 10:
      if (t != T_I32) break;
      vec_scalar(g, t, d);
      return;
    default:
      if (pg_effect_expr(g, t, d)) return;
      break;
  }
  binop(g, t, ops[op], d, op == 3 || op == 4 ? F_NZ : 0);
}

static void float_builtin(Gen *g, Ty t, int d) {
  /* erf and erfc are kern's own arithmetic (stdlib/kern_math.h): exact too */
  static const char *const un[] = {"floor", "ceil",  "trunc", "round", "sqrt", "abs",
                                   "sign",  "rsqrt", "rint",  "frac",  "erf",  "erfc"};
  static const char *const bin[] = {"min", "max", "fmod", "step", "copysign", "floordiv"};
  static const char *const tri[] = {"clamp", "lerp", "smoothstep"};
  switch (pg_rnd(g, 3)) {
    case 0: builtin(g, un[pg_rnd(g, 12)], t, 1, d); break;
    case 1: builtin(g, bin[pg_rnd(g, 6)], t, 2, d); break;
    default: builtin(g, tri[pg_rnd(g, 3)], t, 3, d); break;
  }
}

static void float_expr(Gen *g, Ty t, int d) {
  static const char *const ops[] = {"+", "-", "*", "/"};
  switch (pg_rnd(g, 11)) {
    case 0:
    case 1:
    case 2: binop(g, t, ops[pg_rnd(g, 4)], d, 0); return;
    case 3:
      pg_put(g, "(-");
      pg_expr(g, t, d - 1, F_NC);
      pg_put(g, ")");
      return;
    case 10:
      if (pg_effect_expr(g, t, d)) return;
      break;
    case 4: cast(g, t, d); return;
    case 5: ternary(g, t, d); return;
    case 6:
    case 7:
      if (t == T_F16) break;
      float_builtin(g, t, d);
      return;
    case 8:
      if (pg_call(g, t, d)) return;
      break;
    default:
      if (t == T_F16) break;
      vec_scalar(g, t, d);
      return;
  }
  binop(g, t, ops[pg_rnd(g, 4)], d, 0);
}

static void bool_expr(Gen *g, int d) {
  static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
  static const char *const cls[] = {"isnan", "isinf", "isfinite"};
  switch (pg_rnd(g, 9)) {
    case 0:
    case 1:
    case 2: {
      Ty u = pg_scalar_type(g);
      binop(g, u == T_BOOL ? T_I32 : u, cmp[pg_rnd(g, 6)], d, 0);
      return;
    }
    case 3: binop(g, T_BOOL, pg_chance(g, 50) ? "&&" : "||", d, 0); return;
    case 4:
      pg_put(g, "(!");
      pg_expr(g, T_BOOL, d - 1, F_NC);
      pg_put(g, ")");
      return;
    case 5: {
      Ty u = pg_chance(g, 50) ? T_BOOL : pg_any_type(g, false);
      binop(g, u, pg_chance(g, 50) ? "==" : "!=", d, 0);
      return;
    }
    case 6: {
      const char *name = cls[pg_rnd(g, 3)];
      builtin(g, name, pg_chance(g, 50) ? T_F32 : T_F64, 1, d);
      return;
    }
    case 7:
      if (pg_call(g, T_BOOL, d)) return;
      /* fall through */
    default:
      pg_put(g, "bool(");
      pg_expr(g, pg_int_type(g), d - 1, F_NC);
      pg_put(g, ")");
  }
}

static void vec_builtin(Gen *g, Ty t, int d) {
  bool fv = pg_ti(t)->comp != T_I32;
  switch (pg_rnd(g, 6)) {
    case 0: builtin(g, pg_chance(g, 50) ? "min" : "max", t, 2, d); return;
    case 1:
      if (pg_chance(g, 50)) {
        builtin(g, "clamp", t, 3, d);
        return;
      }
      pg_put(g, "clamp(");
      pg_expr(g, t, d - 1, 0);
      pg_put(g, ", ");
      pg_expr(g, pg_ti(t)->comp, d - 1, 0);
      pg_put(g, ", ");
      pg_expr(g, pg_ti(t)->comp, d - 1, 0);
      pg_put(g, ")");
      return;
    case 2: builtin(g, pg_chance(g, 50) ? "abs" : "sign", t, 1, d); return;
    case 3:
      if (pg_ti(t)->len == 3) {
        builtin(g, "cross", t, 2, d);
        return;
      }
      /* fall through */
    default:
      if (!fv) {
        builtin(g, "abs", t, 1, d);
        return;
      }
      if (pg_chance(g, 25)) {
        pg_put(g, "lerp(");
        pg_expr(g, t, d - 1, 0);
        pg_put(g, ", ");
        pg_expr(g, t, d - 1, 0);
        pg_put(g, ", ");
        pg_expr(g, pg_ti(t)->comp, d - 1, 0);
        pg_put(g, ")");
        return;
      }
      static const char *const un[] = {"floor", "ceil", "trunc", "round", "sqrt", "normalize"};
      builtin(g, un[pg_rnd(g, 6)], t, 1, d);
  }
}

static void vec_expr(Gen *g, Ty t, int d) {
  static const char *const ops[] = {"+", "-", "*", "/"};
  Ty c = pg_ti(t)->comp;
  switch (pg_rnd(g, 9)) {
    case 0:
    case 1: binop(g, t, ops[pg_rnd(g, 4)], d, 0); return;
    case 2: { /* a vector and a scalar */
      int op = pg_rnd(g, 3);
      pg_put(g, "(");
      if (op == 1) {
        pg_expr(g, c, d - 1, 0);
        pg_put(g, " * ");
        pg_expr(g, t, d - 1, 0);
      } else {
        pg_expr(g, t, d - 1, 0);
        pg_put(g, op ? " / " : " * ");
        pg_expr(g, c, d - 1, op ? F_NZ : 0);
      }
      pg_put(g, ")");
      return;
    }
    case 3:
      pg_put(g, "(-");
      pg_expr(g, t, d - 1, 0);
      pg_put(g, ")");
      return;
    case 4: constructor(g, t, d - 1, 0); return;
    case 5: { /* from a vector of the same length and another component type */
      Ty from = vec_of(g, pg_rnd(g, 3) == 0 ? T_I32 : pg_rnd(g, 2) ? T_F32 : T_F64, pg_ti(t)->len);
      pg_put(g, "%s(", pg_ti(t)->name);
      pg_expr(g, from, d - 1, 0);
      pg_put(g, ")");
      return;
    }
    case 6: vec_builtin(g, t, d); return;
    case 7: ternary(g, t, d); return;
    default:
      if (!pg_effect_expr(g, t, d) && !pg_call(g, t, d)) constructor(g, t, d - 1, 0);
  }
}

static Ty row_of(Ty m) { return (Ty)(T_VEC2 + pg_ti(m)->len - 2); }

/* (a op s), (s op a) or (a / s) for a matrix or quat a and a float32 s. */
static void scaled(Gen *g, Ty t, int d) {
  int op = pg_rnd(g, pg_ti(t)->kind == K_MAT ? 3 : 2);
  pg_put(g, "(");
  if (op == 1) {
    pg_expr(g, T_F32, d - 1, 0);
    pg_put(g, " * ");
    pg_expr(g, t, d - 1, 0);
  } else {
    pg_expr(g, t, d - 1, 0);
    pg_put(g, op ? " / " : " * ");
    pg_expr(g, T_F32, d - 1, op ? F_NZ : 0);
  }
  pg_put(g, ")");
}

static void mat_expr(Gen *g, Ty t, int d) {
  switch (pg_rnd(g, 9)) {
    case 0: binop(g, t, pg_chance(g, 50) ? "+" : "-", d, 0); return;
    case 1: binop(g, t, "*", d, 0); return;
    case 2: scaled(g, t, d); return;
    case 3:
      pg_put(g, "(-");
      pg_expr(g, t, d - 1, 0);
      pg_put(g, ")");
      return;
    case 4: builtin(g, pg_chance(g, 50) ? "transpose" : "inverse", t, 1, d); return;
    case 5: builtin(g, "outer", row_of(t), 2, d); return;
    case 6: pg_put(g, "identity(%d)", pg_ti(t)->len); return;
    case 7: ternary(g, t, d); return;
    default:
      if (!pg_call(g, t, d)) constructor(g, t, d - 1, 0);
  }
}

static void quat_expr(Gen *g, Ty t, int d) {
  switch (pg_rnd(g, 6)) {
    case 0: binop(g, t, pg_chance(g, 50) ? "+" : "-", d, 0); return;
    case 1: scaled(g, t, d); return;
    case 2:
      pg_put(g, "(-");
      pg_expr(g, t, d - 1, 0);
      pg_put(g, ")");
      return;
    case 3: builtin(g, "quat_mul", t, 2, d); return;
    case 4: ternary(g, t, d); return;
    default:
      if (!pg_call(g, t, d)) constructor(g, t, d - 1, 0);
  }
}

/* A float32 or a float32 vector out of a matrix or a quat. */
static bool from_mat(Gen *g, Ty t, int d) {
  if (t != T_F32 && (t < T_VEC2 || t > T_VEC4)) return false;
  int size = t == T_F32 ? pg_rnd(g, 3) : (int)t - T_VEC2; /* 0: 2x2 ... */
  Ty m = (Ty)(T_MAT22 + size);
  int r = pg_rnd(g, 3);
  if (t == T_VEC3 && r == 2) {
    pg_put(g, "quat_rotate(");
    pg_expr(g, T_QUAT, d - 1, 0);
    pg_put(g, ", ");
    pg_expr(g, T_VEC3, d - 1, 0);
    pg_put(g, ")");
  } else if (t == T_F32 && r == 0) {
    builtin(g, "determinant", m, 1, d);
  } else if (t == T_F32 && r == 1) {
    pg_put(g, "(");
    pg_expr(g, T_QUAT, d - 1, 0);
    pg_put(g, ").%c", "xyzw"[pg_rnd(g, 4)]);
  } else if (t == T_F32 || r == 0) { /* a row, or an element */
    pg_put(g, "(");
    pg_expr(g, m, d - 1, 0);
    pg_put(g, ")[%d]", pg_rnd(g, pg_ti(m)->len));
    if (t == T_F32) pg_put(g, "[%d]", pg_rnd(g, pg_ti(m)->len));
  } else {
    pg_put(g, "(");
    pg_expr(g, m, d - 1, 0);
    pg_put(g, " * ");
    pg_expr(g, t, d - 1, 0);
    pg_put(g, ")");
  }
  return true;
}

void pg_expr(Gen *g, Ty t, int d, int fl) {
  if (d <= 0 || pg_chance(g, 20)) {
    leaf(g, t, fl);
    return;
  }
  if (d > 1 && pg_chance(g, 4) && from_mat(g, t, d)) return;
  switch (pg_ti(t)->kind) {
    case K_BOOL: bool_expr(g, d); break;
    case K_SINT:
    case K_UINT: int_expr(g, t, d); break;
    case K_FLOAT: float_expr(g, t, d); break;
    case K_VEC: vec_expr(g, t, d); break;
    case K_MAT: mat_expr(g, t, d); break;
    case K_QUAT: quat_expr(g, t, d); break;
    case K_STRUCT:
      if (pg_chance(g, 30))
        ternary(g, t, d);
      else if (!pg_call(g, t, d))
        constructor(g, t, d - 1, 0);
      break;
  }
}

int pg_depth(Gen *g) { return 1 + pg_rnd(g, 3); }
