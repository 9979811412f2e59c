/* progen.c: the random kern program generator (see progen.h).
 *
 * Requires: libc. Produces: progen(), progen_prefixed(). The generator
 * writes text directly while it walks a small model of what is in scope
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

const TyInfo pg_tys[T_COUNT] = {
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
    [T_BF16] = {"bfloat16", NULL, K_FLOAT, 16, 1, T_BF16},
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
    [T_TILE] = {"tile", NULL, K_TILE, 0, 1, T_TILE},
};

static void stmt(Gen *g);
static void loop_stmt(Gen *g);

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

const char *pg_tname(Gen *g, Ty t) {
  if (t == T_S) return g->sname;
  return pg_ti(t)->alias && pg_chance(g, 50) ? pg_ti(t)->alias : pg_ti(t)->name;
}

void pg_fresh(Gen *g, char *name, const char *prefix) {
  snprintf(name, NAME, "%s%d", prefix, g->ids++);
}

/* A type for a variable, parameter or array: mostly 32-bit scalars. */
static Ty any_type(Gen *g, bool with_struct) {
  static const Ty common[] = {T_I32, T_I32, T_I32, T_U32, T_U32, T_F32,
                              T_F32, T_F64, T_I64, T_U64, T_BOOL};
  int r = pg_rnd(g, 100);
  if (r < 60) return common[pg_rnd(g, (int)(sizeof common / sizeof common[0]))];
  if (r < 75) return (Ty)(T_I8 + pg_rnd(g, T_BF16 - T_I8 + 1)); /* the narrow ones, the halves */
  if (with_struct && g->nfields && r < 82) return T_S;
  if (r < 94) return (Ty)(T_VEC2 + pg_rnd(g, T_IVEC4 - T_VEC2 + 1));
  return (Ty)(T_MAT22 + pg_rnd(g, T_QUAT - T_MAT22 + 1));
}

/* A type that widens to t implicitly (int8 to int32, float32 to float64 ...),
 * or t itself. */
Ty pg_narrower(Gen *g, Ty t) {
  static const Ty s[] = {T_I8, T_I16, T_I32, T_I64}, u[] = {T_U8, T_U16, T_U32, T_U64},
                  f[] = {T_F16, T_BF16, T_F32, T_F64};
  if (pg_is_half(t)) return t; /* float16 and bfloat16 convert to each other only by a cast */
  const Ty *fam = pg_ti(t)->kind == K_SINT    ? s
                  : pg_ti(t)->kind == K_UINT  ? u
                  : pg_ti(t)->kind == K_FLOAT ? f
                                              : NULL;
  int pos = 0;
  while (fam && fam[pos] != t) pos++;
  return fam && pg_chance(g, 25) ? fam[pg_rnd(g, pos + 1)] : t;
}

static Ty scalar_type(Gen *g) {
  Ty t = any_type(g, false);
  return pg_is_scalar(t) ? t : pg_ti(t)->comp;
}

Ty pg_int_type(Gen *g) {
  Ty t = scalar_type(g);
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
static const Var *find_var_if(Gen *g, bool (*ok)(Ty), bool want_rw) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->nvars; k++)
    if (ok(g->vars[k].t) && (!want_rw || !g->vars[k].ro) && pg_rnd(g, ++n) == 0) pick = k;
  return pick < 0 ? NULL : &g->vars[pick];
}

/* An array of element type t; for a function argument (arg), a 1-D input. */
static const Arr *find_arr(Gen *g, Ty t, bool arg) {
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

/* An out array of element type t that a function may write at this thread's
 * index: 1-D, in a 1-D kernel or a function's pw. */
static const Arr *find_out(Gen *g, Ty t) {
  int n = 0, pick = -1;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].t == t && g->arrs[k].out && g->arrs[k].ndim == 1 && g->kdim != 2 &&
        pg_rnd(g, ++n) == 0)
      pick = k;
  return pick < 0 ? NULL : &g->arrs[pick];
}

static bool can_call(Gen *g, const Fn *f) {
  return (!f->has_arr || find_arr(g, f->arr_t, true)) && (!f->has_warr || find_out(g, f->warr_t));
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
  if (!pg_is_half(t) && pg_chance(g, 10)) s = wide[pg_rnd(g, (int)(sizeof wide / sizeof wide[0]))];
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

static void own_index(Gen *g) { pg_put(g, "%s", g->own); }

static void array_read(Gen *g, const Arr *a, int d) {
  pg_put(g, "%s", a->name);
  if (a->out || (g->kdim && g->own && pg_chance(g, 45))) {
    own_index(g);
    return;
  }
  if (a == g->iter_arr && pg_chance(g, 60)) {
    pg_put(g, a->ndim == 2 ? "[r, %s]" : "[%s]", g->iter_var);
    return;
  }
  pg_put(g, "[");
  g->indexes++;
  for (int k = 0; k < a->ndim; k++) {
    if (k) pg_put(g, ", ");
    index_expr(g, a, k, d);
  }
  g->indexes--;
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
  if (!v) v = find_var_if(g, scalar_var, false);
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
  switch (pg_rnd(g, 7)) {
    case 0:
    case 1:
      if (!(v = pg_find_var(g, t, false))) return false;
      pg_put(g, "%s", v->name);
      return true;
    case 2: /* a leaf's index is itself a leaf: bounded, or a chain of reads grows without end */
      if (g->indexes >= MAX_INDEX_NEST || !(a = find_arr(g, t, false))) return false;
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
  Ty from = scalar_type(g);
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

static bool call(Gen *g, Ty t, int d) {
  const Fn *f = find_fn(g, t);
  if (!f) return false;
  pg_put(g, "%s(", f->name);
  if (f->has_arr) pg_put(g, "%s, ", find_arr(g, f->arr_t, true)->name);
  if (f->has_warr) pg_put(g, "%s, %s, ", find_out(g, f->warr_t)->name, g->kdim ? "i" : "at");
  for (int k = 0; k < f->np; k++) {
    if (k) pg_put(g, ", ");
    pg_expr(g, f->params[k], d - 1, F_NC); /* typed arguments: overloads resolve exactly */
  }
  pg_put(g, ")");
  return true;
}

static bool is_vec(Ty t) { return pg_ti(t)->kind == K_VEC; }

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
static bool effect_expr(Gen *g, Ty t, int d) {
  static const char *const ops[] = {"add", "sub", "min", "max", "exch", "cas", "and", "or", "xor"};
  if (g->pure) return false;
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
  bool vec = is_vec(t), fl = pg_is_float(t) || (vec && pg_ti(t)->comp != T_I32);
  if (!a || pg_is_half(t) || (!vec && !pg_is_int(t) && !fl) ||
      (pg_is_int(t) && pg_ti(t)->bits < 32))
    return false;
  int op = vec ? pg_rnd(g, 4) : pg_rnd(g, fl ? 6 : 9);
  pg_put(g, "atomic_%s(&%s", ops[op], a->name);
  own_index(g);
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
      if (call(g, t, d)) return;
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
      if (effect_expr(g, t, d)) return;
      break;
  }
  binop(g, t, ops[op], d, op == 3 || op == 4 ? F_NZ : 0);
}

/* copysign reads its second argument's sign, which a NaN made by arithmetic does not define
 * (x86 makes -NaN, a GPU +NaN): tiled programs give it a literal. */
static void float_builtin(Gen *g, Ty t, int d) {
  /* erf and erfc are kern's own arithmetic (stdlib/kern_math.h): exact too */
  static const char *const un[] = {"floor", "ceil",  "trunc", "round", "sqrt", "abs",
                                   "sign",  "rsqrt", "rint",  "frac",  "erf",  "erfc"};
  static const char *const bin[] = {"min", "max", "fmod", "step", "copysign", "floordiv"};
  static const char *const tri[] = {"clamp", "lerp", "smoothstep"};
  if (!g->tile && t == T_F32 && pg_chance(g, 8)) { /* tiled programs keep their stream */
    pg_spatial_expr(g, t, d);
    return;
  }
  switch (pg_rnd(g, 3)) {
    case 0: builtin(g, un[pg_rnd(g, 12)], t, 1, d); break;
    case 1: {
      const char *name = bin[pg_rnd(g, 6)];
      if (g->pure && !strcmp(name, "copysign")) { /* tiled programs: see below */
        pg_put(g, "copysign(");
        pg_expr(g, t, d - 1, F_NC);
        pg_put(g, ", ");
        pg_literal(g, t, false);
        pg_put(g, ")");
      } else
        builtin(g, name, t, 2, d);
      break;
    }
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
      if (effect_expr(g, t, d)) return;
      break;
    case 4: cast(g, t, d); return;
    case 5: ternary(g, t, d); return;
    case 6:
    case 7:
      if (pg_is_half(t)) break;
      float_builtin(g, t, d);
      return;
    case 8:
      if (call(g, t, d)) return;
      break;
    default:
      if (pg_is_half(t)) break;
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
      Ty u = scalar_type(g);
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
      Ty u = pg_chance(g, 50) ? T_BOOL : any_type(g, false);
      binop(g, u, pg_chance(g, 50) ? "==" : "!=", d, 0);
      return;
    }
    case 6: {
      const char *name = cls[pg_rnd(g, 3)];
      builtin(g, name, pg_chance(g, 50) ? T_F32 : T_F64, 1, d);
      return;
    }
    case 7:
      if (call(g, T_BOOL, d)) return;
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
    case 6:
      if (t == T_VEC3 && pg_chance(g, 40))
        pg_xform_vec3(g, d);
      else
        vec_builtin(g, t, d);
      return;
    case 7: ternary(g, t, d); return;
    default:
      if (!effect_expr(g, t, d) && !call(g, t, d)) constructor(g, t, d - 1, 0);
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
      if (!call(g, t, d)) constructor(g, t, d - 1, 0);
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
      if (!call(g, t, d)) constructor(g, t, d - 1, 0);
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
  if (g->tile && pg_tile_scalar(g, t, d)) return;
  if (d <= 0 || pg_chance(g, 20)) {
    leaf(g, t, fl);
    return;
  }
  if (d > 1 && pg_chance(g, 4) && from_mat(g, t, d)) return;
  if (d > 1 && pg_chance(g, 10) && pg_lang_expr(g, t, d)) return;
  switch (pg_ti(t)->kind) {
    case K_BOOL: bool_expr(g, d); break;
    case K_SINT:
    case K_UINT: int_expr(g, t, d); break;
    case K_FLOAT: float_expr(g, t, d); break;
    case K_VEC: vec_expr(g, t, d); break;
    case K_MAT: mat_expr(g, t, d); break;
    case K_QUAT: quat_expr(g, t, d); break;
    case K_TILE: break; /* tile values are progen_tile.c's */
    case K_STRUCT:
      if (pg_chance(g, 30))
        ternary(g, t, d);
      else if (!call(g, t, d))
        constructor(g, t, d - 1, 0);
      break;
  }
}

int pg_depth(Gen *g) { return 1 + pg_rnd(g, 3); }

/* ---- statements ------------------------------------------------------------------ */

static void decl_stmt(Gen *g) {
  Ty t = any_type(g, true);
  char name[NAME];
  pg_fresh(g, name, "v");
  bool ro = pg_chance(g, 15);
  pg_indent(g);
  if (!ro && t != T_S && pg_chance(g, 15)) {
    pg_put(g, "auto %s = ", name);
    pg_expr(g, t, pg_depth(g), F_NC); /* of type t exactly: no untyped constant */
  } else {
    pg_put(g, "%s%s %s = ", ro ? "const " : "", pg_tname(g, t), name);
    Ty from = pg_narrower(g, t);
    pg_expr(g, from, pg_depth(g), 0);
  }
  pg_put(g, ";\n");
  pg_add_var(g, name, t, ro);
}

/* The target of an assignment: a variable, a component, a field or this
 * thread's element of an out array; *t gets its type. false: none. */
static bool lvalue(Gen *g, Ty *t) {
  static const char xyzw[] = "xyzw";
  const Arr *outs[MAX_ARRS];
  int nouts = 0;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].out) outs[nouts++] = &g->arrs[k];
  if (nouts && pg_chance(g, 35)) {
    const Arr *a = outs[pg_rnd(g, nouts)];
    pg_put(g, "%s", a->name);
    own_index(g);
    *t = a->t;
    if (is_vec(a->t) && pg_chance(g, 40)) {
      pg_put(g, ".%c", xyzw[pg_rnd(g, pg_ti(a->t)->len)]);
      *t = pg_ti(a->t)->comp;
    }
    return true;
  }
  const Var *v = find_var_if(g, scalar_var, true);
  if (!v || pg_chance(g, 40)) v = pg_find_var(g, any_type(g, true), true);
  if (!v) return false;
  pg_put(g, "%s", v->name);
  *t = v->t;
  if ((is_vec(v->t) || pg_ti(v->t)->kind == K_QUAT) && pg_chance(g, 40)) {
    *t = pg_ti(v->t)->comp;
    if (pg_chance(g, 50) || !is_vec(v->t))
      pg_put(g, ".%c", xyzw[pg_rnd(g, pg_ti(v->t)->len)]);
    else {
      pg_put(g, "[");
      pg_expr(g, pg_int_type(g), 1, F_NC);
      pg_put(g, "]");
    }
  } else if (pg_ti(v->t)->kind == K_MAT && pg_chance(g, 50)) { /* a row or an element */
    pg_put(g, "[%d]", pg_rnd(g, pg_ti(v->t)->len));
    *t = (Ty)(T_VEC2 + pg_ti(v->t)->len - 2);
    if (pg_chance(g, 50)) {
      pg_put(g, "[%d]", pg_rnd(g, pg_ti(v->t)->len));
      *t = T_F32;
    }
  } else if (v->t == T_S) {
    int f = pg_rnd(g, g->nfields);
    pg_put(g, ".f%d", f);
    *t = g->fields[f];
  }
  return true;
}

static void assign_stmt(Gen *g) {
  static const char *const iops[] = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  static const char *const fops[] = {"+=", "-=", "*=", "/="};
  Ty t;
  size_t mark = g->len;
  pg_indent(g);
  if (!lvalue(g, &t)) {
    g->len = mark;
    return;
  }
  int op = -1;
  if (t != T_BOOL && t != T_S && pg_chance(g, 45)) op = pg_is_int(t) ? pg_rnd(g, 10) : pg_rnd(g, 4);
  if (op >= 0 && (pg_is_int(t) || pg_is_float(t)) && pg_chance(g, 20)) {
    pg_put(g, "%s;\n", pg_chance(g, 50) ? "++" : "--");
    return;
  }
  Kind k = pg_ti(t)->kind;
  if (k == K_QUAT && op == 3) op = 2; /* a quat has no / */
  pg_put(g, " %s ", op < 0 ? "=" : pg_is_int(t) ? iops[op] : fops[op]);
  int fl = op == 3 || (pg_is_int(t) && op == 4) ? F_NZ : 0;
  Ty rt =
      op >= 8 ? pg_int_type(g) : pg_narrower(g, t); /* the value's type; one draw per statement */
  if (op >= 8)
    fl = F_NC;
  else if ((k == K_MAT && op == 3) || (k == K_QUAT && op == 2))
    rt = T_F32;
  else if ((k == K_VEC || k == K_MAT) && op >= 2 && pg_chance(g, 40))
    rt = pg_ti(t)->comp;
  pg_expr(g, rt, pg_depth(g), fl);
  pg_put(g, ";\n");
}

static void cond(Gen *g) {
  pg_put(g, "(");
  pg_expr(g, T_BOOL, pg_depth(g), F_NC);
  pg_put(g, ")");
}

static void if_stmt(Gen *g) {
  pg_indent(g);
  pg_put(g, "if ");
  cond(g);
  pg_put(g, " ");
  pg_block(g, 1 + pg_rnd(g, 3));
  if (pg_chance(g, 50)) {
    pg_put(g, " else ");
    if (pg_chance(g, 20)) {
      pg_put(g, "if ");
      cond(g);
      pg_put(g, " ");
    }
    pg_block(g, 1 + pg_rnd(g, 3));
  }
  pg_put(g, "\n");
}

/* The body of a loop: the counter's increment first (while, do), so a
 * `continue` never skips it. */
static void loop_body(Gen *g, const char *counter) {
  int saved = g->nvars;
  pg_put(g, "{\n");
  g->indent++;
  g->nest++;
  g->loops++;
  if (counter) {
    pg_indent(g);
    pg_put(g, "%s++;\n", counter);
  }
  for (int k = 1 + pg_rnd(g, 3); k > 0; k--) stmt(g);
  g->loops--;
  g->nest--;
  g->indent--;
  pg_indent(g);
  pg_put(g, "}");
  g->nvars = saved;
}

/* for, while or do-while with a constant trip count; the counter is read-only. */
static void loop_stmt(Gen *g) {
  char j[NAME];
  pg_fresh(g, j, "j");
  static const Ty counters[] = {T_I32, T_I32, T_I64, T_U32, T_I16, T_U8};
  Ty ct = counters[pg_rnd(g, 6)];
  int n = 1 + pg_rnd(g, 5), kind = pg_rnd(g, 4), saved = g->nvars;
  pg_indent(g);
  if (kind == 0)
    pg_put(g, "for (%s %s = 0; %s < %d; %s++) ", pg_tname(g, ct), j, j, n, j);
  else if (kind == 1) {
    const char *ctn = pg_tname(g, ct);
    pg_put(g, "for (%s %s = %d; %s > 0; %s -= %d) ", ctn, j, 2 * n, j, j, 1 + pg_rnd(g, 2));
  } else {
    pg_put(g, "int %s = 0;\n", j);
    pg_indent(g);
    if (kind == 2)
      pg_put(g, "while (%s < %d) ", j, n);
    else
      pg_put(g, "do ");
  }
  pg_add_var(g, j, kind < 2 ? ct : T_I32, true);
  loop_body(g, kind >= 2 ? j : NULL);
  if (kind == 3) pg_put(g, " while (%s < %d);", j, n);
  pg_put(g, "\n");
  g->nvars = kind >= 2 ? saved + 1 : saved; /* a while counter belongs to the enclosing block */
}

/* A loop over the last dimension of an input array (in a 2-D kernel, along
 * this thread's row). */
static void array_loop(Gen *g) {
  const Arr *in[MAX_ARRS];
  int n = 0;
  for (int k = 0; k < g->narrs; k++)
    if (!g->arrs[k].out) in[n++] = &g->arrs[k];
  if (!n || g->loops || g->iter_arr) {
    loop_stmt(g);
    return;
  }
  const Arr *a = in[pg_rnd(g, n)];
  char j[NAME];
  pg_fresh(g, j, "j");
  pg_indent(g);
  pg_put(g, "for (int %s = 0; %s < shape(%s, %d); %s++) ", j, j, a->name, a->ndim - 1, j);
  pg_add_var(g, j, T_I32, true);
  g->iter_arr = a;
  snprintf(g->iter_var, NAME, "%s", j);
  loop_body(g, NULL);
  pg_put(g, "\n");
  g->iter_arr = NULL;
  g->nvars--;
}

static void jump_stmt(Gen *g) {
  pg_indent(g);
  pg_put(g, "if ");
  cond(g);
  if (g->loops && pg_chance(g, 80))
    pg_put(g, " { %s; }\n", pg_chance(g, 50) ? "break" : "continue");
  else if (g->kdim)
    pg_put(g, " { return; }\n");
  else {
    pg_put(g, " { return ");
    pg_expr(g, g->ret, pg_depth(g), 0);
    pg_put(g, "; }\n");
  }
}

/* A random state: uint32 sN = rand_init(..., ...). */
static void state_decl(Gen *g) {
  char name[NAME];
  pg_fresh(g, name, "s");
  pg_indent(g);
  pg_put(g, "uint32 %s = rand_init(", name);
  pg_expr(g, pg_int_type(g), 1, F_NC);
  pg_put(g, ", ");
  pg_expr(g, pg_int_type(g), 2, F_NC); /* a literal would have to fit uint32 */
  pg_put(g, ");\n");
  Var *v = pg_add_var(g, name, T_U32, false);
  if (v) v->state = true;
}

/* A call for its effect: an atomic or a function, result unused. */
static void effect_stmt(Gen *g) {
  size_t mark = g->len;
  pg_indent(g);
  Ty t = pg_chance(g, 50) ? T_I32 : any_type(g, true);
  if (effect_expr(g, t, pg_depth(g)) || call(g, t, pg_depth(g)))
    pg_put(g, ";\n");
  else
    g->len = mark;
}

void pg_plain_stmt(Gen *g) {
  bool deep = --g->budget > 0 && g->nest < 3;
  int r = pg_rnd(g, 100);
  if (r < 28)
    decl_stmt(g);
  else if (r < 58)
    assign_stmt(g);
  else if (r < 70 && deep)
    if_stmt(g);
  else if (r < 80 && deep && g->loops < 2)
    loop_stmt(g);
  else if (r < 85 && deep)
    g->tile ? loop_stmt(g) : array_loop(g); /* an array's length of tile work: too slow */
  else if (r < 90)
    jump_stmt(g);
  else if (r < 95)
    effect_stmt(g);
  else if (r < 97 && !g->tile)
    pg_decomposition_stmt(g);
  else if (pg_lang_stmt(g))
    return;
  else
    decl_stmt(g);
}

static void stmt(Gen *g) {
  if (g->tile)
    pg_tile_stmt(g);
  else
    pg_plain_stmt(g);
}

void pg_block(Gen *g, int n) {
  int saved = g->nvars;
  pg_put(g, "{\n");
  g->indent++;
  g->nest++;
  while (n-- > 0) stmt(g);
  g->nest--;
  g->indent--;
  pg_indent(g);
  pg_put(g, "}");
  g->nvars = saved;
}

/* ---- declarations ------------------------------------------------------------------ */

void pg_reset_scope(Gen *g, int kdim, int budget) {
  g->nvars = g->narrs = 0;
  g->kdim = kdim;
  g->loops = g->nest = 0;
  g->budget = budget;
  g->iter_arr = NULL;
}

static void consts(Gen *g) {
  for (int n = pg_rnd(g, MAX_CONSTS + 1); g->nconsts < n;) {
    Const *c = &g->consts[g->nconsts];
    c->t = scalar_type(g);
    snprintf(c->name, NAME, "%sC%d", g->prefix, g->nconsts++);
    pg_put(g, "const %s %s = ", pg_tname(g, c->t), c->name);
    pg_literal(g, c->t, true);
    pg_put(g, ";\n");
  }
}

static void struct_decl(Gen *g) {
  if (pg_chance(g, 50)) return;
  g->nfields = 1 + pg_rnd(g, MAX_FIELDS);
  pg_put(g, "\nstruct %s {", g->sname);
  for (int k = 0; k < g->nfields; k++) {
    g->fields[k] = any_type(g, false);
    pg_put(g, " %s f%d;", pg_tname(g, g->fields[k]), k);
  }
  pg_put(g, " };\n");
}

static bool same_signature(const Fn *a, const Fn *b) {
  if (a->np != b->np || a->has_arr != b->has_arr || (a->has_arr && a->arr_t != b->arr_t))
    return false;
  if (a->has_warr != b->has_warr || (a->has_warr && a->warr_t != b->warr_t)) return false;
  for (int k = 0; k < a->np; k++)
    if (a->params[k] != b->params[k]) return false;
  return true;
}

/* fns[k]'s name: sometimes an overload of an earlier function's. */
static void fn_name(Gen *g, int k) {
  Fn *f = &g->fns[k];
  snprintf(f->name, NAME, "%sf%d", g->prefix, k);
  if (k == 0 || pg_chance(g, 60)) return;
  const char *other = g->fns[pg_rnd(g, k)].name;
  for (int j = 0; j < k; j++)
    if (!strcmp(g->fns[j].name, other) && same_signature(&g->fns[j], f)) return;
  memmove(f->name, other, strlen(other) + 1); /* snprintf: a -Wrestrict error at gcc -O0 */
}

static void function_body(Gen *g, int k);

static void function(Gen *g, int k) {
  Fn *f = &g->fns[k];
  f->ret = any_type(g, true);
  f->np = 1 + pg_rnd(g, MAX_PARAMS);
  for (int p = 0; p < f->np; p++) f->params[p] = p == 0 ? scalar_type(g) : any_type(g, true);
  f->has_arr = pg_chance(g, 30);
  f->arr_t = any_type(g, false);
  f->has_warr = pg_chance(g, 25);
  f->warr_t = any_type(g, false);
  fn_name(g, k);
  function_body(g, k);
}

/* fns[k], its signature and name chosen: the text. */
static void function_body(Gen *g, int k) {
  Fn *f = &g->fns[k];
  pg_reset_scope(g, 0, 4 + pg_rnd(g, 8));
  g->ret = f->ret;
  g->callable = k;
  g->own = "[at]";
  pg_put(g, "\n%s %s(", pg_tname(g, f->ret), f->name);
  if (f->has_arr) {
    pg_put(g, "const %s[] pa, ", pg_tname(g, f->arr_t));
    g->arrs[g->narrs++] = (Arr){"pa", f->arr_t, 1, false};
  }
  if (f->has_warr) {
    pg_put(g, "%s[] pw, int at, ", pg_tname(g, f->warr_t));
    g->arrs[g->narrs++] = (Arr){"pw", f->warr_t, 1, true};
    pg_add_var(g, "at", T_I32, true);
  }
  for (int p = 0; p < f->np; p++) {
    char name[NAME];
    snprintf(name, NAME, "p%d", p);
    bool ro = pg_chance(g, 20);
    pg_put(g, "%s%s%s %s", p ? ", " : "", ro ? "const " : "", pg_tname(g, f->params[p]), name);
    pg_add_var(g, name, f->params[p], ro);
  }
  pg_put(g, ") {\n");
  g->indent = 1;
  if (!g->pure && pg_chance(g, 30)) state_decl(g);
  for (int n = 1 + pg_rnd(g, 4); n > 0; n--) stmt(g);
  pg_indent(g);
  pg_put(g, "return ");
  pg_expr(g, f->ret, pg_depth(g), 0);
  pg_put(g, ";\n}\n");
  g->indent = 0;
}

const Fn *pg_function(Gen *g, Ty ret, const Ty *params, int np) {
  if (g->nfns == MAX_FNS) return NULL;
  int k = g->nfns++;
  Fn *f = &g->fns[k];
  *f = (Fn){.ret = ret, .np = np};
  memcpy(f->params, params, (size_t)np * sizeof *params);
  fn_name(g, k);
  function_body(g, k);
  return f;
}

/* Declares kernel parameter k: an input array, a by-value argument or an output. */
static void kernel_param(Gen *g, int kind, int k) {
  static const char *const dims[] = {"", "[]", "[,]"};
  Ty t = any_type(g, false);
  char name[NAME];
  snprintf(name, NAME, "%s%d", kind == 0 ? "in" : kind == 1 ? "a" : "out", k);
  if (kind == 1) {
    pg_put(g, "%s %s", pg_tname(g, t), name);
    pg_add_var(g, name, t, false);
    return;
  }
  pg_put(g, "%s%s%s %s", kind == 0 ? "const " : "", pg_tname(g, t), dims[g->kdim], name);
  Arr *a = &g->arrs[g->narrs++];
  snprintf(a->name, NAME, "%s", name);
  a->t = t;
  a->ndim = g->kdim;
  a->out = kind == 2;
}

ProgenLaunch *pg_launch(Gen *g) {
  if (!g->launch || g->nlaunch == g->maxlaunch) return NULL;
  ProgenLaunch *l = &g->launch[g->nlaunch++];
  memset(l, 0, sizeof *l);
  return l;
}

/* A plain kernel's launch: PROGEN_N indices, or PROGEN_ROWS x PROGEN_COLS (progen.h). */
static void record_launch(Gen *g, const int *kinds, int n) {
  ProgenLaunch *l = pg_launch(g);
  if (!l) return;
  l->ndim = g->kdim;
  l->dims[0] = g->kdim == 2 ? PROGEN_ROWS : PROGEN_N;
  l->dims[1] = g->kdim == 2 ? PROGEN_COLS : 1;
  l->nparams = n;
  for (int p = 0; p < n && p < PROGEN_MAX_PARAMS; p++)
    if (kinds[p] != 1) l->shape[p][0] = l->dims[0], l->shape[p][1] = l->dims[1];
}

static void kernel(Gen *g, int k) {
  int kdim = pg_chance(g, 25) ? 2 : 1;
  pg_reset_scope(g, kdim, 10 + pg_rnd(g, 16));
  g->callable = g->nfns;
  g->own = g->kdim == 2 ? "[r, c]" : "[i]";
  int kinds[MAX_ARRS], n = 0;
  for (int m = 1 + pg_rnd(g, 3); m > 0; m--) kinds[n++] = 0;
  for (int m = pg_rnd(g, 3); m > 0; m--) kinds[n++] = 1;
  for (int m = 1 + pg_rnd(g, 3); m > 0; m--) kinds[n++] = 2;
  for (int m = n - 1; m > 0; m--) { /* shuffle */
    int o = pg_rnd(g, m + 1), tmp = kinds[m];
    kinds[m] = kinds[o];
    kinds[o] = tmp;
  }
  pg_put(g, "\nkernel void %sk%d(", g->prefix, k);
  for (int m = 0; m < n; m++) {
    if (m) pg_put(g, ", ");
    kernel_param(g, kinds[m], m);
  }
  pg_put(g, ") {\n    int i = tid();\n");
  pg_add_var(g, "i", T_I32, true);
  record_launch(g, kinds, n);
  if (g->kdim == 2) {
    pg_put(g, "    int r = tid(0);\n    int c = tid(1);\n");
    pg_add_var(g, "r", T_I32, true);
    pg_add_var(g, "c", T_I32, true);
  }
  g->indent = 1;
  if (pg_chance(g, 60)) state_decl(g);
  for (int m = 2 + pg_rnd(g, 6); m > 0; m--) stmt(g);
  for (int m = 0; m < g->narrs; m++) {
    if (!g->arrs[m].out) continue;
    pg_put(g, "    %s", g->arrs[m].name);
    own_index(g);
    pg_put(g, " = ");
    pg_expr(g, g->arrs[m].t, pg_depth(g), 0);
    pg_put(g, ";\n");
  }
  pg_put(g, "}\n");
  g->indent = 0;
}

/* Writes the program of seed (and records its launches into launch[0 .. max)). */
static size_t generate(uint64_t seed, ProgenKind kind, const char *prefix, char *buf, size_t cap,
                       ProgenLaunch *launch, int max) {
  Gen *g = calloc(1, sizeof *g);
  if (!g || strlen(prefix) > 8) {
    free(g);
    return 0;
  }
  g->rng = seed;
  g->prefix = prefix;
  g->launch = launch;
  g->maxlaunch = max;
  snprintf(g->sname, NAME, "%sS", prefix);
  if (kind == PROGEN_TILED) {
    pg_put(g, "// progen --tiled seed %llu\n", (unsigned long long)seed);
    pg_tile_program(g);
  } else {
    pg_put(g, "// progen seed %llu\n", (unsigned long long)seed);
    consts(g);
    struct_decl(g);
    if (pg_chance(g, 70)) pg_lang_decls(g);
    g->nfns = pg_rnd(g, 5);
    for (int k = 0; k < g->nfns; k++) function(g, k);
    for (int k = 0, n = 1 + pg_rnd(g, 3); k < n; k++) kernel(g, k);
  }
  size_t len = g->oom ? 0 : g->len, n = len < cap ? len : cap ? cap - 1 : 0;
  if (n) memcpy(buf, g->s, n);
  if (cap) buf[n] = 0;
  if (launch && !g->oom) len = (size_t)g->nlaunch;
  free(g->s);
  free(g);
  return len;
}

size_t progen(uint64_t seed, char *buf, size_t cap) { return progen_prefixed(seed, "", buf, cap); }

size_t progen_prefixed(uint64_t seed, const char *prefix, char *buf, size_t cap) {
  return generate(seed, PROGEN_PLAIN, prefix, buf, cap, NULL, 0);
}

size_t progen_write(uint64_t seed, ProgenKind kind, const char *prefix, char *buf, size_t cap) {
  return generate(seed, kind, prefix, buf, cap, NULL, 0);
}

int progen_launches(uint64_t seed, ProgenKind kind, ProgenLaunch *out, int max) {
  return (int)generate(seed, kind, "", NULL, 0, out, max);
}
