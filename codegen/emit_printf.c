/* emit_printf.c: printf calls, their composite arguments spelled out.
 *
 * Requires the checker's printf rules (frontend/check_special.c): every
 * conversion matched to its argument, the arguments of the C conversions
 * converted to what C's printf reads, and %v (any value) and %s of a bool
 * passed as they are. Produces kn_printf(format, values...) for both targets:
 * each %v, and %s of a bool, becomes the conversions of its value's parts:
 * a bool true or false, an integer %d (%lld, %u, %llu), a float %g (%.Pg
 * for %.Pv), a vector, quat, transform or spatial vector [a, b, ...], a
 * matrix its rows [[a, b], [c, d]], a struct {field: value, ...}. A
 * composite is read through a pointer to its first component (the
 * components of every vector, matrix, quat and transform are contiguous),
 * so it is evaluated into a temporary first unless it is an lvalue without
 * side effects. Breaks: nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "emit_internal.h"

/* e's text for n, written aside. */
static char *expr_text(Emitter *e, const Node *n) {
  Buf saved = emit_aside(e);
  emit_expr(e, n);
  char *text = emit_aside_end(e, saved);
  return text ? text : strdup("0");
}

/* One scalar: its conversion (precision prec, or -1) to f, its value to args.
 * mem: v is storage (a field or component), whose bool is any byte. */
static void scalar(Buf *f, Buf *args, const Type *t, const char *v, int prec, bool mem) {
  if (t->kind == TY_BOOL) {
    buf_puts(f, "%s");
    buf_printf(args,
               mem ? ", *(const unsigned char *)&(%s) ? \"true\" : \"false\""
                   : ", (%s) ? \"true\" : \"false\"",
               v);
  } else if (type_is_float(t)) {
    if (prec >= 0)
      buf_printf(f, "%%.%dg", prec);
    else
      buf_puts(f, "%g");
    if (type_is_half(t))
      buf_printf(args, ", (double)kn_cvt_%s_f32(%s)", builtin_type_code(t), v);
    else
      buf_printf(args, ", (double)(%s)", v);
  } else if (t->size == 8) {
    buf_puts(f, type_is_signed(t) ? "%lld" : "%llu");
    buf_printf(args, ", (%s long long)(%s)", type_is_signed(t) ? "signed" : "unsigned", v);
  } else {
    buf_puts(f, type_is_signed(t) ? "%d" : "%u");
    buf_printf(args, ", (%s)(%s)", type_is_signed(t) ? "int" : "unsigned", v);
  }
}

static void value(Emitter *e, Buf *f, Buf *args, const Type *t, const char *v, int prec, bool mem);

/* n components of type c from the one v starts with, [a, b, ...]; a row
 * of cols (cols > 0) each. */
static void components(Emitter *e, Buf *f, Buf *args, const Type *c, const char *v, int n, int cols,
                       int prec) {
  char comp[AST_MAX_IDENT * 2];
  buf_puts(f, "[");
  for (int k = 0; k < n; k++) {
    if (k) buf_puts(f, ", ");
    if (cols && k % cols == 0) buf_puts(f, "[");
    snprintf(comp, sizeof comp, "((const %s *)&(%s))[%d]", emit_ctype(e, c), v, k);
    value(e, f, args, c, comp, prec, true);
    if (cols && k % cols == cols - 1) buf_puts(f, "]");
  }
  buf_puts(f, "]");
}

static void value(Emitter *e, Buf *f, Buf *args, const Type *t, const char *v, int prec, bool mem) {
  char field[AST_MAX_IDENT * 3];
  switch (t->kind) {
    case TY_VEC:
    case TY_QUAT: components(e, f, args, t->elem, v, t->n, 0, prec); return;
    case TY_TRANSFORM: components(e, f, args, &ty_f32, v, t->n, 0, prec); return;
    case TY_MAT:
      components(e, f, args, t->elem, v, t->n * type_mat_cols(t), type_mat_cols(t), prec);
      return;
    case TY_STRUCT:
      buf_puts(f, "{");
      for (int i = 0; i < t->sdecl->nfields; i++) {
        const Field *fd = &t->sdecl->fields[i];
        buf_printf(f, "%s%s: ", i ? ", " : "", fd->name);
        snprintf(field, sizeof field, "(%s).f_%s", v, fd->name);
        value(e, f, args, fd->ty, field, prec, true);
      }
      buf_puts(f, "}");
      return;
    default: scalar(f, args, t, v, prec, mem);
  }
}

/* The text the parts of a read: a itself (a scalar, a bound temporary, an
 * lvalue without side effects) or a new temporary, assigned in pre. */
static char *value_base(Emitter *e, const Node *a, Buf *pre) {
  const char *bound = emit_bound(e, a);
  if (bound) return strdup(bound);
  if (type_is_scalar(a->ty) || (emit_is_lvalue(a) && !emit_effects(e, a))) return expr_text(e, a);
  int id = ++e->ntemps;
  buf_printf(&e->temps, "%s kn_o%d; ", emit_ctype(e, a->ty), id);
  char *text = expr_text(e, a);
  buf_printf(pre, "kn_o%d = (%s), ", id, text);
  free(text);
  char *name = malloc(24);
  if (name) snprintf(name, 24, "kn_o%d", id);
  return name;
}

/* A C conversion's argument, cast to what C's printf reads (the checker has
 * converted it to one of those types already). */
static void plain_arg(Emitter *e, Buf *args, const Node *a) {
  char *text = expr_text(e, a);
  if (a->ty->kind == TY_STRING) {
    buf_printf(args, ", %s", text);
  } else {
    Buf unused = {0};
    scalar(&unused, args, a->ty->kind == TY_BOOL ? &ty_i32 : a->ty, text, -1, false);
    buf_free(&unused);
  }
  free(text);
}

/* Appends byte c of the format to f as it is in a C string literal. */
static void format_byte(Buf *f, unsigned char c) {
  if (c == '"' || c == '\\' || c == '?')
    buf_printf(f, "\\%c", c);
  else if (c < 32 || c >= 127)
    buf_printf(f, "\\%03o", c);
  else
    buf_printf(f, "%c", c);
}

/* The conversion at s[i] ('%', not "%%"): its length; *conv its letter, *prec its precision. */
static size_t conversion(const char *s, size_t len, size_t i, char *conv, int *prec) {
  size_t j = i + 1;
  while (j < len && strchr("-+ #0123456789.l", s[j])) j++;
  *conv = j < len ? s[j] : 0;
  const char *dot = memchr(s + i, '.', j - i);
  *prec = dot ? atoi(dot + 1) : -1;
  return j - i + 1;
}

void emit_printf(Emitter *e, const Node *n) {
  const Node *fmt = n->args, *a = fmt->next;
  Buf f = {0}, args = {0}, pre = {0};
  const char *s = fmt->str ? fmt->str : "";
  for (size_t i = 0; i < fmt->str_len; i++) {
    if (s[i] != '%' || (i + 1 < fmt->str_len && s[i + 1] == '%')) {
      format_byte(&f, (unsigned char)s[i]);
      if (s[i] == '%') format_byte(&f, (unsigned char)s[++i]);
      continue;
    }
    char conv;
    int prec;
    size_t k = conversion(s, fmt->str_len, i, &conv, &prec);
    if (a && (conv == 'v' || (conv == 's' && a->kind != ND_STRING))) {
      char *base = value_base(e, a, &pre);
      value(e, &f, &args, a->ty, base ? base : "0", prec, false);
      free(base);
    } else {
      for (size_t q = 0; q < k; q++) format_byte(&f, (unsigned char)s[i + q]);
      if (a) plain_arg(e, &args, a);
    }
    i += k - 1;
    a = a ? a->next : NULL;
  }
  if (pre.len) buf_printf(&e->out, "(%s", pre.s);
  buf_printf(&e->out, "kn_printf(\"%s\"%s)", f.s ? f.s : "", args.s ? args.s : "");
  if (pre.len) buf_puts(&e->out, ")");
  e->out.oom |= f.oom || args.oom || pre.oom;
  buf_free(&f), buf_free(&args), buf_free(&pre);
}
