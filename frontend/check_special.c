/* check_special.c: the special forms: tid, dim, len, shape, size, printf,
 * assert, atomics, the random-number functions, identity and lower_bound.
 *
 * Requires: check_overload.c, check_const.c. Produces: ck_special_kind (also
 * for names that may not be redefined) and ck_special, which checks a call of
 * one and converts its arguments. Breaks: printf's arguments are converted to
 * what C's printf reads (check.c's overview); atomics take &a[i...] of an
 * array parameter.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- special forms ------------------------------------------------------------------- */

static const struct {
  const char *name;
  SpecialKind sp;
} specials[] = {
    {"tid", SP_TID},
    {"sizeof", SP_SIZEOF},
    {"is_same", SP_IS_SAME},
    {"is_float", SP_IS_FLOAT},
    {"is_int", SP_IS_INT},
    {"dim", SP_DIM},
    {"len", SP_LEN},
    {"shape", SP_SHAPE},
    {"size", SP_SIZE},
    {"printf", SP_PRINTF},
    {"assert", SP_ASSERT},
    {"atomic_add", SP_ATOMIC_ADD},
    {"atomic_sub", SP_ATOMIC_SUB},
    {"atomic_min", SP_ATOMIC_MIN},
    {"atomic_max", SP_ATOMIC_MAX},
    {"atomic_exch", SP_ATOMIC_EXCH},
    {"atomic_and", SP_ATOMIC_AND},
    {"atomic_or", SP_ATOMIC_OR},
    {"atomic_xor", SP_ATOMIC_XOR},
    {"atomic_cas", SP_ATOMIC_CAS},
    {"atomic_load", SP_ATOMIC_LOAD},
    {"rand_init", SP_RAND_INIT},
    {"randf", SP_RANDF},
    {"randi", SP_RANDI},
    {"randn", SP_RANDN},
    {"identity", SP_IDENTITY},
    {"lower_bound", SP_LOWER_BOUND},
    {"randu", SP_RAND_FN},
    {"poisson", SP_RAND_FN},
    {"sample_triangle", SP_RAND_FN},
    {"sample_unit_ring", SP_RAND_FN},
    {"sample_unit_disk", SP_RAND_FN},
    {"sample_unit_square", SP_RAND_FN},
    {"sample_unit_sphere_surface", SP_RAND_FN},
    {"sample_unit_sphere", SP_RAND_FN},
    {"sample_unit_hemisphere_surface", SP_RAND_FN},
    {"sample_unit_hemisphere", SP_RAND_FN},
    {"sample_unit_cube", SP_RAND_FN},
    {"sample_unit_hypercube", SP_RAND_FN},
    {"sample_cdf", SP_RAND_FN},
};

SpecialKind ck_special_kind(const char *name) {
  for (size_t i = 0; name && i < sizeof specials / sizeof specials[0]; i++)
    if (strcmp(specials[i].name, name) == 0) return specials[i].sp;
  return SP_NONE;
}

static Val special_done(Node *n, SpecialKind sp, Type *t) {
  n->call_kind = CALL_SPECIAL;
  n->special = sp;
  n->ty = t;
  return ck_val_of(t);
}

/* The arguments of n as an array (not yet checked). */
static int arg_nodes(Check *c, Node *n, Node ***out) {
  int na = ck_count_list(n->args);
  Node **a = ck_alloc(c, (size_t)(na + 1) * sizeof *a);
  int i = 0;
  for (Node *p = n->args; p; p = p->next) a[i++] = p;
  *out = a;
  return na;
}

static bool arity(Check *c, Node *n, const char *name, int na, int lo, int hi) {
  if (na >= lo && na <= hi) return true;
  if (lo == hi)
    diag_error(c->diags, n->loc, "'%s' expects %d argument%s, got %d", name, lo, lo == 1 ? "" : "s",
               na);
  else
    diag_error(c->diags, n->loc, "'%s' expects %d %s %d arguments, got %d", name, lo,
               hi == lo + 1 ? "or" : "to", hi, na);
  for (Node *a = n->args; a; a = a->next)
    if (a->kind != ND_ADDR && a->kind != ND_STRING) ck_expr(c, a);
  return false;
}

/* A constant integer argument in lo..hi (a dimension, a matrix size). */
static int const_arg(Check *c, Node *a, int lo, int hi, const char *what, const char *fname) {
  Val v = ck_expr(c, a);
  if (ck_is_err(v.ty)) return -1;
  if (!v.is_const || !ck_is_intlike(v.ty)) {
    diag_error(c->diags, a->loc, "%s of '%s' must be a constant integer", what, fname);
    return -1;
  }
  if (v.i < lo || v.i > hi) {
    diag_error(c->diags, a->loc, "%s of '%s' is %s, but must be in %d..%d", what, fname,
               ck_val_text(c, &v), lo, hi);
    return -1;
  }
  v.ty = &ty_i32;
  ck_set_const(a, v);
  return (int)v.i;
}

/* Conversions the special forms allow beyond the implicit ones. */
static void force_type(Check *c, Node *n, Val *v, Type *t) {
  if (type_equal(v->ty, t)) return;
  if (v->is_const && ck_const_cast(c, n->loc, v, t))
    ck_set_const(n, *v);
  else
    ck_wrap_conv(c, n, t);
  v->ty = t;
}

static Val sp_launch(Check *c, Node *n, SpecialKind sp) {
  const char *name = sp == SP_TID ? "tid" : "dim";
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (!c->fn || c->fn->kind != DECL_KERNEL)
    diag_error(c->diags, n->loc, "%s() can only be used inside a kernel", name);
  if (arity(c, n, name, na, sp == SP_TID ? 0 : 1, 1) && na == 1)
    const_arg(c, a[0], 0, 3, "the dimension", name);
  return special_done(n, sp, &ty_i32);
}

static Type *array_type(Check *c, Node *a, Val v, const char *fname) {
  if (ck_is_err(v.ty)) return NULL;
  if (v.ty->kind != TY_ARRAY) {
    diag_error(c->diags, a->loc, "'%s' expects an array, not %s", fname, ck_tname(v.ty));
    return NULL;
  }
  return v.ty;
}

/* len of a vector, matrix or quat is its component (row) count, a constant;
 * the argument is checked but, like C's sizeof, not evaluated. */
static Val sp_array(Check *c, Node *n, SpecialKind sp) {
  const char *name = sp == SP_LEN ? "len" : sp == SP_SIZE ? "size" : "shape";
  int want = sp == SP_SHAPE ? 2 : 1;
  Node **a;
  int na = arg_nodes(c, n, &a);
  Type *rt = sp == SP_SIZE ? &ty_i64 : &ty_i32;
  if (!arity(c, n, name, na, want, want)) return special_done(n, sp, rt);
  Val v = ck_expr(c, a[0]);
  if (sp == SP_LEN && ck_is_vmq(v.ty)) {
    Val k = {.ty = &ty_i32, .is_const = true, .i = v.ty->n};
    ck_set_const(n, k);
    return k;
  }
  if (v.ty && v.ty->kind == TY_FIXED) { /* a local array's sizes are constants */
    int d = sp == SP_SHAPE ? const_arg(c, a[1], 0, v.ty->ndim - 1, "the dimension", name) : 0;
    if (d < 0) return ck_val_err();
    Val k = {
        .ty = rt, .is_const = true, .i = sp == SP_SIZE ? type_fixed_count(v.ty) : v.ty->dims[d]};
    ck_set_const(n, k);
    return k;
  }
  Type *at = array_type(c, a[0], v, name);
  if (sp == SP_SHAPE) const_arg(c, a[1], 0, at ? at->ndim - 1 : 3, "the dimension", name);
  return special_done(n, sp, rt);
}

/* lower_bound(a, v) or lower_bound(a, lo, hi, v) on a sorted 1-D array. */
static Val sp_lower_bound(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (na != 2 && na != 4) {
    diag_error(c->diags, n->loc, "'lower_bound' expects 2 or 4 arguments, got %d", na);
    for (int i = 0; i < na; i++) ck_expr(c, a[i]);
    return ck_val_err();
  }
  Type *at = array_type(c, a[0], ck_expr(c, a[0]), "lower_bound");
  Type *e = at ? at->elem : NULL;
  if (at && (at->ndim != 1 || !(type_is_numeric(e) && e->size >= 4))) {
    diag_error(c->diags, a[0]->loc,
               "'lower_bound' needs a 1-D array of int32, int64, uint32, uint64, float32 or "
               "float64, not %s",
               ck_tname(at));
    e = NULL;
  }
  for (int i = 1; i < na - 1; i++)
    ck_expect(c, a[i], &ty_i64, (Ctx){"argument", "lower_bound", i + 1});
  if (e)
    ck_expect(c, a[na - 1], e, (Ctx){"argument", "lower_bound", na});
  else
    ck_expr(c, a[na - 1]);
  return e ? special_done(n, SP_LOWER_BOUND, &ty_i32) : ck_val_err();
}

/* assert(cond) or assert(cond, "message"): the message is a string literal,
 * reported with the failure (check_record.c numbers the messages). */
static Val sp_assert(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (!arity(c, n, "assert", na, 1, 2)) return special_done(n, SP_ASSERT, &ty_void);
  ck_expect_bool(c, a[0], "the condition of 'assert'");
  if (na == 2 && a[1]->kind == ND_STRING) {
    a[1]->ty = &ty_string;
  } else if (na == 2 && !ck_is_err(ck_expr(c, a[1]).ty)) {
    diag_error(c->diags, a[1]->loc, "the message of 'assert' must be a string literal");
    diag_note(c->diags, a[1]->loc, "to see values, printf them before the assert");
  }
  return special_done(n, SP_ASSERT, &ty_void);
}

static Val sp_identity(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (!arity(c, n, "identity", na, 1, 1)) return ck_val_err();
  static Type *const mats[] = {&ty_mat22, &ty_mat33, &ty_mat44, NULL, &ty_smat};
  Val v = ck_expr(c, a[0]);
  if (ck_is_err(v.ty)) return ck_val_err();
  if (!v.is_const || !ck_is_intlike(v.ty)) {
    diag_error(c->diags, a[0]->loc, "the size of 'identity' must be a constant integer");
    return ck_val_err();
  }
  if (v.i < 2 || v.i > 6 || v.i == 5) {
    diag_error(c->diags, a[0]->loc, "the size of 'identity' is %s, but must be 2, 3, 4 or 6",
               ck_val_text(c, &v));
    return ck_val_err();
  }
  int k = (int)v.i;
  v.ty = &ty_i32;
  ck_set_const(a[0], v);
  return special_done(n, SP_IDENTITY, mats[k - 2]);
}

/* ---- printf ---------------------------------------------------------------------------- */

typedef enum { FMT_SINT, FMT_UINT, FMT_HEX, FMT_FLOAT, FMT_STR, FMT_VALUE } FmtClass;

/* MAX_FMT_VALUES: what one call passes after %v spells composites out (CUDA's
 * device printf takes at most 32 arguments, the format included). */
enum { MAX_FMT_FIELD = 1000, MAX_FMT_VALUES = 31 };

/* A width or precision of digits at p, at most MAX_FMT_FIELD (C's printf
 * fails, printing nothing, past INT_MAX; the CPU prints 1023 bytes a call). */
static void fmt_field(Check *c, SrcLoc loc, const char *start, const char **p, const char *what) {
  size_t n = strspn(*p, "0123456789");
  long long v = 0;
  for (size_t i = 0; i < n && v <= MAX_FMT_FIELD; i++) v = v * 10 + ((*p)[i] - '0');
  *p += n;
  if (v <= MAX_FMT_FIELD) return;
  const char *end = *p + strspn(*p, ".0123456789l");
  end += *end != 0;
  diag_error(c->diags, loc, "%s %.*s in '%.*s' is too large (the limit is %d)", what, (int)n,
             *p - n, (int)(end - start), start, MAX_FMT_FIELD);
}

/* Parses the conversion whose '%' is at start; *pp moves past it. -1: reported. */
static int fmt_spec(Check *c, SrcLoc loc, const char *start, const char **pp, bool *is_long) {
  const char *p = start + 1;
  p += strspn(p, "-+ #0");
  fmt_field(c, loc, start, &p, "field width");
  if (*p == '.') {
    p++;
    fmt_field(c, loc, start, &p, "precision");
  }
  int nl = (int)strspn(p, "l");
  *is_long = nl > 0;
  p += nl;
  char conv = *p;
  *pp = conv ? p + 1 : p;
  const char *cls = conv ? strchr("diuxXfFeEgGsv", conv) : NULL;
  if (!cls || nl > 2 || (nl && strchr("fFeEgGsv", conv))) {
    if (!conv)
      diag_error(c->diags, loc, "the format ends in the middle of a conversion");
    else
      diag_error(c->diags, loc, "unsupported printf conversion '%.*s'", (int)(*pp - start), start);
    diag_note(c->diags, loc,
              "supported: %%d %%i %%u %%x %%X %%ld %%lu %%lx %%f %%e %%g %%s %%v %%%%");
    return -1;
  }
  if (conv == 'v' && strcspn(start + 1, ".v") != 0) {
    diag_error(c->diags, loc, "'%.*s': %%v takes a precision only (%%v, %%.3v)", (int)(*pp - start),
               start);
    return -1;
  }
  switch (conv) {
    case 'd':
    case 'i': return FMT_SINT;
    case 'u': return FMT_UINT;
    case 'x':
    case 'X': return FMT_HEX;
    case 's': return FMT_STR;
    case 'v': return FMT_VALUE;
    default: return FMT_FLOAT;
  }
}

static bool fmt_accepts(FmtClass k, const Type *t, const Type *want) {
  if (t->kind == TY_BOOL && k != FMT_FLOAT) return true; /* 0 or 1, as C's bool */
  switch (k) {
    case FMT_SINT: return type_is_signed(t) && t->size <= want->size;
    case FMT_UINT: return type_is_int(t) && !type_is_signed(t) && t->size <= want->size;
    case FMT_HEX: return type_is_int(t) && t->size <= want->size;
    case FMT_FLOAT: return type_is_float(t);
    default: return false;
  }
}

/* How many printf values t is spelled out into by %v (0: t cannot be printed). */
static int fmt_values(const Type *t) {
  switch (t->kind) {
    case TY_VEC:
    case TY_QUAT:
    case TY_TRANSFORM: return t->n;
    case TY_MAT: return t->n * type_mat_cols(t);
    case TY_STRUCT: {
      int n = 0;
      for (int i = 0; i < t->sdecl->nfields; i++) {
        int f = fmt_values(t->sdecl->fields[i].ty);
        if (f == 0) return 0;
        n += f;
      }
      return n;
    }
    default: return type_is_scalar(t) ? 1 : 0;
  }
}

/* %v, or %s of a bool: any value, passed as it is; the emitter spells it out. */
static int fmt_value_arg(Check *c, Node *a, FmtClass k, const char *spec) {
  Val v = ck_expr(c, a);
  if (ck_is_err(v.ty)) return 0;
  if (ck_is_untyped(v.ty)) ck_default_type(c, a, &v);
  int n = fmt_values(v.ty);
  if (k == FMT_STR ? v.ty->kind != TY_BOOL : n == 0) {
    diag_error(c->diags, a->loc, "format '%s' expects %s, not %s", spec,
               k == FMT_STR ? "a string literal or a bool"
                            : "a value (a scalar, vector, matrix, quat, transform or struct)",
               ck_tname(v.ty));
    return 0;
  }
  return n;
}

/* Checks argument a of conversion spec; returns how many printf values it passes. */
static int fmt_arg(Check *c, Node *a, FmtClass k, bool is_long, const char *spec) {
  if (a->kind == ND_STRING) {
    a->ty = &ty_string;
    if (k != FMT_STR) diag_error(c->diags, a->loc, "format '%s' does not take a string", spec);
    return 1;
  }
  if (k == FMT_VALUE || k == FMT_STR) return fmt_value_arg(c, a, k, spec);
  static Type *const wants[2][4] = {{&ty_i32, &ty_u32, &ty_u32, &ty_f64},
                                    {&ty_i64, &ty_u64, &ty_u64, &ty_f64}};
  Type *want = wants[is_long][k];
  Val v = ck_expr(c, a);
  if (ck_is_err(v.ty)) return 1;
  if (ck_is_untyped(v.ty) && (k == FMT_FLOAT || v.ty->kind == TY_UNTYPED_INT)) {
    ck_convert(c, a, &v, want, (Ctx){"printf argument", NULL, 0});
    return 1;
  }
  if (!fmt_accepts(k, v.ty, want)) {
    diag_error(
        c->diags, a->loc, "format '%s' expects %s, not %s", spec,
        k == FMT_FLOAT ? "a floating-point number"
        : k == FMT_SINT
            ? (is_long ? "int64 or a smaller signed integer" : "int32 or a smaller signed integer")
        : k == FMT_UINT ? (is_long ? "an unsigned integer" : "uint32 or a smaller unsigned integer")
                        : (is_long ? "an integer" : "an integer of at most 32 bits"),
        ck_tname(v.ty));
    return 1;
  }
  force_type(c, a, &v, want);
  return 1;
}

static Val sp_printf(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (na == 0 || a[0]->kind != ND_STRING) {
    diag_error(c->diags, na ? a[0]->loc : n->loc,
               "printf's first argument must be a string literal");
    for (int i = na ? 1 : 0; i < na; i++)
      if (a[i]->kind != ND_STRING) ck_expr(c, a[i]);
    return special_done(n, SP_PRINTF, &ty_void);
  }
  Node *f = a[0];
  f->ty = &ty_string;
  const char *p = f->str ? f->str : "";
  const char *end = p + f->str_len;
  int used = 1, values = 0;
  while (p < end && (p = memchr(p, '%', (size_t)(end - p)))) {
    const char *start = p;
    if (p[1] == '%') {
      p += 2;
      continue;
    }
    bool is_long;
    int k = fmt_spec(c, f->loc, start, &p, &is_long);
    if (k < 0) break;
    const char *spec = arena_printf(c->arena, "%.*s", (int)(p - start), start);
    if (used >= na) {
      diag_error(c->diags, f->loc, "format '%s' has no matching argument", spec);
      break;
    }
    values += fmt_arg(c, a[used++], (FmtClass)k, is_long, spec);
  }
  if (values > MAX_FMT_VALUES)
    diag_error(c->diags, n->loc,
               "this printf passes %d values (composites spelled out); one call takes at most %d",
               values, MAX_FMT_VALUES);
  if (used < na && (!p || p >= end)) {
    diag_error(c->diags, a[used]->loc,
               "more printf arguments than the format uses (%d, expected %d)", na - 1, used - 1);
  }
  for (int i = used; i < na; i++)
    if (a[i]->kind != ND_STRING) ck_expr(c, a[i]);
  return special_done(n, SP_PRINTF, &ty_void);
}

/* ---- atomics and random numbers ---------------------------------------------------------- */

static const char *special_name(SpecialKind sp) {
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    if (specials[i].sp == sp) return specials[i].name;
  return "?";
}

/* Integers of any width and ivecs for the bitwise ones; every integer and float
 * for exch and cas; those, vectors and matrices (per component) for the rest. */
static bool atomic_supports(SpecialKind sp, const Type *t) {
  bool scalar = type_is_int(t) || type_is_float(t);
  bool ivec = t->kind == TY_VEC && t->elem && type_is_int(t->elem);
  switch (sp) {
    case SP_ATOMIC_AND:
    case SP_ATOMIC_OR:
    case SP_ATOMIC_XOR: return type_is_int(t) || ivec;
    case SP_ATOMIC_EXCH:
    case SP_ATOMIC_CAS:
    case SP_ATOMIC_LOAD: return scalar;
    default: return scalar || t->kind == TY_VEC || t->kind == TY_MAT;
  }
}

static const char *atomic_supported(SpecialKind sp) {
  switch (sp) {
    case SP_ATOMIC_AND:
    case SP_ATOMIC_OR:
    case SP_ATOMIC_XOR: return "integers and integer vectors";
    case SP_ATOMIC_EXCH:
    case SP_ATOMIC_CAS:
    case SP_ATOMIC_LOAD: return "integers and floats";
    default: return "integers, floats, vectors and matrices";
  }
}

/* The element type behind &a[i...] of an array parameter, or NULL (reported);
 * a const array only for an atomic that reads. */
static Type *atomic_target(Check *c, Node *p, const char *name, bool writes) {
  if (p->kind != ND_ADDR) {
    Val v = ck_expr(c, p);
    if (!ck_is_err(v.ty))
      diag_error(c->diags, p->loc,
                 "the first argument of '%s' must be the address of an array element, like &a[i]",
                 name);
    return NULL;
  }
  Node *e = p->lhs;
  bool indexed = e && e->kind == ND_INDEX;
  Val v = ck_expr(c, e);
  if (ck_is_err(v.ty)) return NULL;
  Type *base = indexed ? e->lhs->ty : NULL;
  if (base && base->kind == TY_FIXED) {
    diag_error(c->diags, p->loc,
               "'%s' works on the elements of array parameters; a local array belongs to this "
               "thread alone: update it with an assignment",
               name);
    return NULL;
  }
  if (!base || base->kind != TY_ARRAY) {
    diag_error(c->diags, p->loc, "'%s' works on array elements only, not on %s", name,
               e->kind == ND_IDENT ? "a local variable" : "this expression");
    return NULL;
  }
  Var *arr = e->lhs->kind == ND_IDENT ? e->lhs->var : NULL;
  if (writes && arr && arr->is_const) {
    diag_error(c->diags, p->loc, "'%s' cannot modify const array '%s'", name, arr->name);
    return NULL;
  }
  p->ty = ck_ptr_to(c, v.ty);
  return v.ty;
}

static Val sp_atomic(Check *c, Node *n, SpecialKind sp) {
  const char *name = special_name(sp);
  Node **a;
  int na = arg_nodes(c, n, &a);
  int want = sp == SP_ATOMIC_CAS ? 3 : sp == SP_ATOMIC_LOAD ? 1 : 2;
  if (!arity(c, n, name, na, want, want)) return ck_val_err();
  Type *t = atomic_target(c, a[0], name, sp != SP_ATOMIC_LOAD);
  if (t && !atomic_supports(sp, t)) {
    diag_error(c->diags, a[0]->loc, "'%s' does not support %s elements", name, ck_tname(t));
    diag_note(c->diags, a[0]->loc, "supported: %s", atomic_supported(sp));
    t = NULL;
  }
  for (int i = 1; i < na; i++)
    if (t)
      ck_expect(c, a[i], t, (Ctx){"argument", name, i + 1});
    else
      ck_expr(c, a[i]);
  return t ? special_done(n, sp, t) : ck_val_err();
}

static Val sp_rand_init(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (arity(c, n, "rand_init", na, 1, 2)) {
    for (int i = 0; i < na; i++) {
      Val v = ck_expr(c, a[i]);
      if (ck_is_err(v.ty)) continue;
      if (!ck_is_intlike(v.ty))
        diag_error(c->diags, a[i]->loc, "'rand_init' expects integer arguments, not %s",
                   ck_tname(v.ty));
      else if (ck_is_untyped(v.ty))
        ck_convert(c, a[i], &v, &ty_u32, (Ctx){"argument", "rand_init", i + 1});
      else
        force_type(c, a[i], &v, &ty_u32);
    }
  }
  /* rand_init(seed) is the helper kn_rand_rand_init_1 */
  return special_done(n, na == 1 ? SP_RAND_FN : SP_RAND_INIT, &ty_u32);
}

/* &s with s a non-const uint32 local or parameter. */
static void rand_state(Check *c, Node *p, const char *name) {
  if (p->kind != ND_ADDR) {
    Val v = ck_expr(c, p);
    if (!ck_is_err(v.ty))
      diag_error(
          c->diags, p->loc,
          "the first argument of '%s' must be the address of a uint32 state variable, like &s",
          name);
    return;
  }
  Node *e = p->lhs;
  Val v = ck_expr(c, e);
  if (ck_is_err(v.ty)) return;
  Var *var = e->kind == ND_IDENT ? e->var : NULL;
  if (!var) {
    diag_error(c->diags, p->loc, "the state of '%s' must be a local variable", name);
  } else if (var->is_const) {
    diag_error(c->diags, p->loc, "the state of '%s' cannot be const '%s'", name, var->name);
  } else if (v.ty->kind != TY_U32) {
    diag_error(c->diags, p->loc, "the state of '%s' must be uint32, not %s", name, ck_tname(v.ty));
  } else {
    p->ty = ck_ptr_to(c, &ty_u32);
  }
}

Val ck_out_arg(Check *c, Node *p) {
  Node *e = p->lhs;
  Val v = ck_expr(c, e);
  if (ck_is_err(v.ty)) return ck_val_err();
  Var *var = e->kind == ND_IDENT ? e->var : NULL;
  if (!var) {
    diag_error(c->diags, p->loc, "'&' takes a local variable here, like &u");
    return ck_val_err();
  }
  if (var->is_const) {
    diag_error(c->diags, p->loc, "cannot take '&' of const '%s': the call writes to it", var->name);
    return ck_val_err();
  }
  p->ty = ck_ptr_to(c, v.ty);
  return ck_val_of(p->ty);
}

static Val sp_rand(Check *c, Node *n, SpecialKind sp) {
  const char *name = special_name(sp);
  Node **a;
  int na = arg_nodes(c, n, &a);
  Type *rt = sp == SP_RANDI ? &ty_u32 : &ty_f32;
  bool ok;
  if (sp == SP_RANDF && na != 1 && na != 3) {
    diag_error(c->diags, n->loc, "'randf' expects 1 or 3 arguments, got %d", na);
    for (int i = 0; i < na; i++)
      if (a[i]->kind != ND_ADDR) ck_expr(c, a[i]);
    ok = false;
  } else {
    ok = arity(c, n, name, na, 1, sp == SP_RANDF ? 3 : 1);
  }
  if (!ok) return special_done(n, sp, rt);
  rand_state(c, a[0], name);
  for (int i = 1; i < na; i++) ck_expect(c, a[i], &ty_f32, (Ctx){"argument", name, i + 1});
  return special_done(n, sp, rt);
}

bool ck_named_float(Node *n) {
  if (!n->name || (strcmp(n->name, "inf") != 0 && strcmp(n->name, "nan") != 0)) return false;
  uint64_t bits = n->name[0] == 'i' ? 0x7f800000u : 0x7fc00000u;
  Node keep = *n;
  memset(n, 0, sizeof *n);
  n->kind = ND_CALL;
  n->next = keep.next;
  n->loc = keep.loc;
  n->name = keep.name;
  n->name_loc = keep.name_loc;
  n->ival = bits;
  n->call_kind = CALL_SPECIAL;
  n->special = SP_FLOAT_BITS;
  n->ty = &ty_f32;
  return true;
}

/* The random helpers after the state: how many arguments, of what type, and
 * the result (Warp's names and signatures; randi's range form is here). */
static const struct {
  const char *name;
  int nargs;
  Type *arg, *ret;
} rand_fns[] = {
    {"randu", 1, NULL, &ty_u32},
    {"randu", 3, &ty_u32, &ty_u32},
    {"randi", 3, &ty_i32, &ty_i32},
    {"poisson", 2, &ty_f32, &ty_u32},
    {"sample_triangle", 1, NULL, &ty_vec2},
    {"sample_unit_ring", 1, NULL, &ty_vec2},
    {"sample_unit_disk", 1, NULL, &ty_vec2},
    {"sample_unit_square", 1, NULL, &ty_vec2},
    {"sample_unit_sphere_surface", 1, NULL, &ty_vec3},
    {"sample_unit_sphere", 1, NULL, &ty_vec3},
    {"sample_unit_hemisphere_surface", 1, NULL, &ty_vec3},
    {"sample_unit_hemisphere", 1, NULL, &ty_vec3},
    {"sample_unit_cube", 1, NULL, &ty_vec3},
    {"sample_unit_hypercube", 1, NULL, &ty_vec4},
    {"sample_cdf", 2, NULL, &ty_i32}, /* its argument is a float32[] (cdf_array) */
};

/* sample_cdf's table: a 1-D float32 array, searched as lower_bound does. */
static bool cdf_array(Check *c, Node *a) {
  Type *at = array_type(c, a, ck_expr(c, a), "sample_cdf");
  if (at && (at->ndim != 1 || at->elem != &ty_f32)) {
    diag_error(c->diags, a->loc, "'sample_cdf' needs a 1-D float32 array, not %s", ck_tname(at));
    return false;
  }
  return at != NULL;
}

static Val sp_rand_fn(Check *c, Node *n, const char *name) {
  Node **a;
  int na = arg_nodes(c, n, &a), lo = 99, hi = 0, k = -1;
  for (size_t i = 0; i < sizeof rand_fns / sizeof rand_fns[0]; i++) {
    if (strcmp(rand_fns[i].name, name) != 0) continue;
    lo = rand_fns[i].nargs < lo ? rand_fns[i].nargs : lo;
    hi = rand_fns[i].nargs > hi ? rand_fns[i].nargs : hi;
    if (rand_fns[i].nargs == na) k = (int)i;
  }
  if (k < 0) {
    if (lo == hi)
      arity(c, n, name, na, lo, hi);
    else {
      diag_error(c->diags, n->loc, "'%s' expects %d or %d arguments, got %d", name, lo, hi, na);
      for (int i = 0; i < na; i++)
        if (a[i]->kind != ND_ADDR) ck_expr(c, a[i]);
    }
    return ck_val_err();
  }
  rand_state(c, a[0], name);
  if (strcmp(name, "sample_cdf") == 0 && !cdf_array(c, a[1])) return ck_val_err();
  for (int i = 1; i < na && rand_fns[k].arg; i++)
    ck_expect(c, a[i], rand_fns[k].arg, (Ctx){"argument", name, i + 1});
  return special_done(n, SP_RAND_FN, rand_fns[k].ret);
}

Val ck_special(Check *c, Node *n, SpecialKind sp) {
  switch (sp) {
    case SP_TID:
    case SP_DIM: return sp_launch(c, n, sp);
    case SP_LEN:
    case SP_SHAPE:
    case SP_SIZE: return sp_array(c, n, sp);
    case SP_PRINTF: return sp_printf(c, n);
    case SP_ASSERT: return sp_assert(c, n);
    case SP_RAND_INIT: return sp_rand_init(c, n);
    case SP_RANDI:
      if (ck_count_list(n->args) == 3) return sp_rand_fn(c, n, "randi");
      return sp_rand(c, n, sp);
    case SP_RANDF:
    case SP_RANDN: return sp_rand(c, n, sp);
    case SP_IDENTITY: return sp_identity(c, n);
    case SP_LOWER_BOUND: return sp_lower_bound(c, n);
    case SP_RAND_FN: return sp_rand_fn(c, n, n->name);
    case SP_SIZEOF:
    case SP_IS_SAME:
    case SP_IS_FLOAT:
    case SP_IS_INT: return ck_type_query(c, n, sp);
    default: return sp_atomic(c, n, sp);
  }
}

/* ---- bitcast<T>(x) ------------------------------------------------------------------------- */

/* Makes n the call of the builtin `name` that takes `from`, whose argument is already checked. */
static Val as_builtin(Check *c, Node *n, const char *name, const Type *from) {
  Cand *cs;
  int nc = ck_candidates(c, name, &cs);
  for (int j = 0; j < nc; j++)
    if (cs[j].nparams == 1 && type_equal(cs[j].params[0], from)) {
      n->call_kind = CALL_BUILTIN;
      n->builtin = cs[j].builtin;
      n->ty = cs[j].ret;
      return ck_val_of(cs[j].ret);
    }
  return ck_val_err(); /* every pair of sizes below has its builtin */
}

/* The bitcast_* builtin from a float to the integer of its size, or back. */
static const char *bit_builtin(const Type *to) {
  switch (to->kind) {
    case TY_F16: return "bitcast_float16";
    case TY_BF16: return "bitcast_bfloat16";
    case TY_F32: return "bitcast_float32";
    case TY_F64: return "bitcast_float64";
    case TY_I16: return "bitcast_int16";
    case TY_U16: return "bitcast_uint16";
    case TY_I32: return "bitcast_int32";
    case TY_U32: return "bitcast_uint32";
    case TY_I64: return "bitcast_int64";
    default: return "bitcast_uint64";
  }
}

/* bitcast<T>(x): the bits of x, a number, as T, a number of x's size. Between
 * integers it is the cast (which keeps the bits), between a float and an
 * integer the bitcast_* builtin, between float16 and bfloat16 two of them. */
Val ck_bitcast(Check *c, Node *n) {
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  Node *x = n->args;
  if (n->ntargs != 1 || !x || x->next) {
    diag_error(c->diags, at, "bitcast<T>(x) takes one type and one value");
    for (Node *a = x; a; a = a->next) ck_expr(c, a);
    return ck_val_err();
  }
  Type *t = ck_resolve_type(c, n->targs[0], "a type argument");
  Val v = ck_expr(c, x);
  if (!t || ck_is_err(t) || ck_is_err(v.ty)) return ck_val_err();
  if (ck_is_untyped(v.ty)) ck_default_type(c, x, &v);
  bool num_t = type_is_scalar(t) && t->kind != TY_BOOL,
       num_x = type_is_scalar(v.ty) && v.ty->kind != TY_BOOL;
  if (!num_t || !num_x || t->size != v.ty->size) {
    diag_error(c->diags, x->loc, "bitcast<%s> takes a number of %d byte%s, not %s", ck_tname(t),
               t->size, t->size == 1 ? "" : "s", ck_tname(v.ty));
    return ck_val_err();
  }
  n->ntargs = 0;
  if (type_is_float(t) == type_is_float(v.ty) && (type_equal(t, v.ty) || !type_is_float(t))) {
    n->kind = ND_CAST, n->lhs = x, n->ty = t; /* converting keeps an integer's bits */
    n->texpr = n->targs[0], n->args = NULL, n->nargs = 0;
    return ck_val_of(t);
  }
  if (type_is_float(t) && type_is_float(v.ty)) { /* float16 <-> bfloat16 through int16 */
    Node *in = ck_alloc(c, sizeof *in);
    *in = *n;
    in->next = NULL;
    as_builtin(c, in, "bitcast_int16", v.ty);
    n->args = in;
    return as_builtin(c, n, bit_builtin(t), &ty_i16);
  }
  return as_builtin(c, n, bit_builtin(t), v.ty);
}
