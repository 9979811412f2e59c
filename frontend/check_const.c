/* check_const.c: constant folding, exact as Go's (check.c's overview says
 * the rules).
 *
 * Requires: nothing but the types. Produces: the range checks, conversions,
 * casts and folds of constant values (ck_const_convert, ck_const_cast,
 * ck_fold_binary, ck_fold_unary ...) and their text for messages. Breaks:
 * untyped integers are exact 128-bit values, untyped floats doubles; an
 * overflow, a truncation or a division by zero is reported, never wrapped
 * silently (except where C wraps: casts, shifts, bitwise operators).
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- as text, for messages -------------------------------------------------- */

/* v in decimal (printf has no format for 128 bits). */
void ck_fmt_i128(char *buf, size_t cap, i128 v) {
  char tmp[64];
  int n = 0;
  u128 u = v < 0 ? (u128)0 - (u128)v : (u128)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u && n < 60);
  size_t k = 0;
  if (v < 0 && k + 1 < cap) buf[k++] = '-';
  while (n && k + 1 < cap) buf[k++] = tmp[--n];
  buf[k] = 0;
}

/* A constant as the user would write it, for messages. */
const char *ck_val_text(Check *c, const Val *v) {
  char buf[64];
  if (v->ty->kind == TY_BOOL) return v->i ? "true" : "false";
  if (ck_is_intlike(v->ty)) {
    ck_fmt_i128(buf, sizeof buf, v->i);
    return arena_strdup(c->arena, buf);
  }
  return arena_printf(c->arena, "%g", v->f);
}

/* ---- constant values -------------------------------------------------------- */

static const i128 UNTYPED_MAX = ((i128)1 << 64) - 1;

static i128 int_min(const Type *t) {
  if (t->kind == TY_UNTYPED_INT) return -UNTYPED_MAX;
  return type_is_signed(t) ? -((i128)1 << (t->size * 8 - 1)) : 0;
}

static i128 int_max(const Type *t) {
  if (t->kind == TY_UNTYPED_INT) return UNTYPED_MAX;
  int bits = t->size * 8 - (type_is_signed(t) ? 1 : 0);
  return ((i128)1 << bits) - 1;
}

bool ck_int_fits(i128 v, const Type *t) { return v >= int_min(t) && v <= int_max(t); }

/* Two's complement wrap-around to t's width (casts, shifts, bitwise). */
static i128 int_wrap(i128 v, const Type *t) {
  if (t->kind == TY_UNTYPED_INT) return v;
  int bits = t->size * 8;
  u128 mask = ((u128)1 << bits) - 1;
  u128 u = (u128)v & mask;
  if (type_is_signed(t) && (u >> (bits - 1))) return -(i128)(((u ^ mask) + 1) & mask);
  return (i128)u;
}

/* Largest finite value plus half an ulp: anything at or above rounds to inf. */
static double float_limit(const Type *t) {
  switch (t->kind) {
    case TY_F16: return 65520.0;
    case TY_BF16: return 0x1.ffp127;
    case TY_F32: return 0x1.ffffffp127;
    default: return INFINITY;
  }
}

/* Rounds to p significant bits, ties to even; below the normal range (frexp
 * exponents under emin) to the subnormals' fixed step. float16: 11 bits, emin
 * -13; bfloat16: 8 bits, emin -125 (float32's range). */
static double round_prec(double d, int p, int emin) {
  if (d == 0 || !isfinite(d)) return d;
  int e;
  frexp(d, &e);
  double q = ldexp(1.0, (e < emin ? emin : e) - p);
  return nearbyint(d / q) * q;
}

static double round_float(double d, const Type *t) {
  if (t->kind == TY_F32) return (double)(float)d;
  if (t->kind == TY_F16) return round_prec(d, 11, -13);
  if (t->kind == TY_BF16) return round_prec(d, 8, -125);
  return d;
}

/* Significant bits of float type t (untyped floats are doubles). */
static int float_prec(const Type *t) {
  return t->kind == TY_F16 ? 11 : t->kind == TY_BF16 ? 8 : t->kind == TY_F32 ? 24 : 53;
}

/* Integer v as float type t, rounded once to t's precision, ties to even, as
 * the generated code converts: going through a double first would round
 * twice (2^60 + 2^52 + 1 would become 2^60 in bfloat16, not 2^60 + 2^53). */
static double int_to_float(i128 v, const Type *t) {
  u128 m = v < 0 ? (u128)0 - (u128)v : (u128)v;
  int p = float_prec(t), s = 0;
  while ((m >> s) >> p) s++;
  u128 r = m >> s, rem = m - (r << s), half = s ? (u128)1 << (s - 1) : 1;
  if (s && (rem > half || (rem == half && (r & 1)))) r++;
  double d = ldexp((double)r, s);
  return v < 0 ? -d : d;
}

/* Is d an integer we can hold in an i128 without undefined behaviour? */
bool ck_float_integral(double d) { return isfinite(d) && fabs(d) < 0x1p100 && d == trunc(d); }

bool ck_report_overflow(Check *c, SrcLoc loc, const Val *v, const Type *t) {
  if (t->kind == TY_UNTYPED_INT)
    diag_error(c->diags, loc, "integer constant %s is too large", ck_val_text(c, v));
  else if (t->kind == TY_UNTYPED_FLOAT)
    diag_error(c->diags, loc, "floating-point constant overflows");
  else
    diag_error(c->diags, loc, "constant %s overflows %s", ck_val_text(c, v), ck_tname(t));
  return false;
}

/* Checks that integer v fits t (an int type or untyped int). */
static bool check_int(Check *c, SrcLoc loc, Val *v, Type *t) {
  if (ck_int_fits(v->i, t)) return true;
  return ck_report_overflow(c, loc, v, t);
}

/* Rounds float v to t and checks for overflow. */
bool ck_check_float(Check *c, SrcLoc loc, Val *v, Type *t) {
  if (!isfinite(v->f) || fabs(v->f) >= float_limit(t)) return ck_report_overflow(c, loc, v, t);
  v->f = round_float(v->f, t);
  return true;
}

/* The value-preserving conversion of a constant to scalar type t: an untyped
 * constant taking its type, or a typed one widening. Reports and returns false
 * when the value does not fit. */
bool ck_const_convert(Check *c, SrcLoc loc, Val *v, Type *t) {
  bool from_int = ck_is_intlike(v->ty);
  if (t->kind == TY_BOOL) /* only bool reaches bool: convert() checked the kinds */
    return v->ty->kind == TY_BOOL;
  if (type_is_int(t) || t->kind == TY_UNTYPED_INT) {
    if (!from_int) {
      if (!ck_float_integral(v->f)) {
        if (isfinite(v->f) && fabs(v->f) < 0x1p100)
          diag_error(c->diags, loc, "constant %s truncated to %s", ck_val_text(c, v), ck_tname(t));
        else
          ck_report_overflow(c, loc, v, t);
        return false;
      }
      v->i = (i128)v->f;
    }
    Val shown = *v;
    shown.ty = &ty_untyped_int;
    if (!ck_int_fits(v->i, t)) return ck_report_overflow(c, loc, &shown, t);
    v->ty = t;
    return true;
  }
  if (from_int) v->f = int_to_float(v->i, t);
  Val shown = *v;
  shown.ty = &ty_untyped_float;
  if (!ck_check_float(c, loc, &shown, t)) return false;
  v->f = shown.f;
  v->ty = t;
  return true;
}

/* An explicit cast of a constant: integers wrap as in C, floats truncate
 * toward zero, bools are 0/1 and anything nonzero is true. */
bool ck_const_cast(Check *c, SrcLoc loc, Val *v, Type *t) {
  bool from_int = ck_is_intlike(v->ty) || v->ty->kind == TY_BOOL;
  if (t->kind == TY_BOOL) {
    v->i = from_int ? v->i != 0 : v->f != 0;
  } else if (type_is_int(t)) {
    if (!from_int) {
      if (!isfinite(v->f) || fabs(v->f) >= 0x1p100 || !ck_int_fits((i128)v->f, t)) {
        diag_error(c->diags, loc, "constant %g is out of the range of %s", v->f, ck_tname(t));
        return false;
      }
      v->i = (i128)v->f;
    }
    v->i = int_wrap(v->i, t);
  } else {
    if (from_int) v->f = int_to_float(v->i, t);
    if (!isfinite(v->f) || fabs(v->f) >= float_limit(t)) {
      diag_error(c->diags, loc, "constant %g is out of the range of %s", v->f, ck_tname(t));
      return false;
    }
    v->f = round_float(v->f, t);
  }
  v->ty = t;
  return true;
}

/* The untyped-int-or-untyped-float value of an untyped constant as a float. */
Val ck_as_untyped_float(Val v) {
  if (v.ty->kind == TY_UNTYPED_INT) {
    v.f = (double)v.i;
    v.ty = &ty_untyped_float;
  }
  return v;
}

static i128 shift_right(i128 v, int n) {
  if (v >= 0) return v >> n;
  return -((-v - 1) >> n) - 1; /* floor, without shifting a negative number */
}

/* a << b or a >> b on integer constants; a's type is the result type. */
static bool fold_shift(Check *c, SrcLoc loc, int op, Val *a, i128 b) {
  Type *t = a->ty;
  int width = t->kind == TY_UNTYPED_INT ? 128 : t->size * 8;
  if (b < 0 || b >= width || (t->kind == TY_UNTYPED_INT && b > 64 && a->i != 0 && op == TK_SHL)) {
    char buf[64];
    ck_fmt_i128(buf, sizeof buf, b);
    diag_error(c->diags, loc, "shift count %s is out of range for %s", buf, ck_tname(t));
    return false;
  }
  if (op == TK_SHR) {
    a->i = shift_right(a->i, (int)b);
    return true;
  }
  if (t->kind == TY_UNTYPED_INT) {
    if (a->i == 0) return true; /* 0 << 127 would need 1 << 127, past i128's range */
    if (__builtin_mul_overflow(a->i, (i128)1 << b, &a->i)) return ck_report_overflow(c, loc, a, t);
    return check_int(c, loc, a, t);
  }
  a->i = int_wrap((i128)((u128)a->i << b), t);
  return true;
}

static bool div_zero(Check *c, SrcLoc loc) {
  diag_error(c->diags, loc, "division by zero in a constant expression");
  return false;
}

/* Integer arithmetic; a and b have the same type (an int or untyped int). */
static bool fold_int(Check *c, SrcLoc loc, int op, Val *a, const Val *b) {
  i128 x = a->i, y = b->i, r = 0;
  bool ovf = false;
  switch (op) {
    case TK_PLUS: ovf = __builtin_add_overflow(x, y, &r); break;
    case TK_MINUS: ovf = __builtin_sub_overflow(x, y, &r); break;
    case TK_STAR: ovf = __builtin_mul_overflow(x, y, &r); break;
    case TK_SLASH:
    case TK_PERCENT:
      if (y == 0) return div_zero(c, loc);
      r = op == TK_SLASH ? x / y : x % y;
      break;
    case TK_AMP: r = x & y; break;
    case TK_PIPE: r = x | y; break;
    case TK_CARET: r = x ^ y; break;
    default: return false;
  }
  a->i = ck_is_bitwise(op) ? int_wrap(r, a->ty) : r;
  if (ovf) {
    diag_error(c->diags, loc, "integer constant overflow in '%s'", tok_spelling(op));
    return false;
  }
  return check_int(c, loc, a, a->ty);
}

static bool fold_float(Check *c, SrcLoc loc, int op, Val *a, const Val *b) {
  switch (op) {
    case TK_PLUS: a->f += b->f; break;
    case TK_MINUS: a->f -= b->f; break;
    case TK_STAR: a->f *= b->f; break;
    case TK_SLASH:
      if (b->f == 0) return div_zero(c, loc);
      a->f /= b->f;
      break;
    default: return false;
  }
  return ck_check_float(c, loc, a, a->ty);
}

static bool compare(int op, int sign) {
  switch (op) {
    case TK_LT: return sign < 0;
    case TK_GT: return sign > 0;
    case TK_LE: return sign <= 0;
    case TK_GE: return sign >= 0;
    case TK_EQEQ: return sign == 0;
    default: return sign != 0;
  }
}

/* a op b on constants of one operand type (checked already); the result
 * replaces a. false: an error was reported. */
bool ck_fold_binary(Check *c, SrcLoc loc, int op, Val *a, const Val *b) {
  if (ck_is_compare(op)) {
    bool r;
    if (ck_is_intlike(a->ty) || a->ty->kind == TY_BOOL)
      r = compare(op, (a->i > b->i) - (a->i < b->i));
    else if (op == TK_NE)
      r = a->f != b->f; /* NaN compares unequal, as in C */
    else
      r = compare(op, (a->f > b->f) - (a->f < b->f)) && !(isnan(a->f) || isnan(b->f));
    *a = (Val){.ty = &ty_bool, .is_const = true, .i = r};
    return true;
  }
  if (op == TK_ANDAND || op == TK_OROR) {
    a->i = op == TK_ANDAND ? (a->i && b->i) : (a->i || b->i);
    return true;
  }
  if (ck_is_shift(op)) return fold_shift(c, loc, op, a, b->i);
  if (ck_is_intlike(a->ty)) return fold_int(c, loc, op, a, b);
  return fold_float(c, loc, op, a, b);
}

bool ck_fold_unary(Check *c, SrcLoc loc, int op, Val *a) {
  switch (op) {
    case TK_PLUS: return true;
    case TK_BANG: a->i = !a->i; return true;
    case TK_TILDE: a->i = int_wrap(~a->i, a->ty); return true;
    default: break;
  }
  if (!ck_is_intlike(a->ty)) {
    a->f = -a->f;
    return true;
  }
  a->i = -a->i;
  return check_int(c, loc, a, a->ty);
}
