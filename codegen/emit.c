/* emit.c: the emitter core's statements and expressions: typed AST -> C-family
 * text, shared by both targets.
 *
 * Requires a Program that check_program accepted (every expression typed,
 * conversions explicit, calls resolved). Produces the text of function and
 * kernel bodies; emit_decl.c writes the translation unit around them (the
 * stdlib text, structs, function heads, per kernel an args struct, two body
 * functions (strided and dense array indexing) and the target's entry
 * points). Never fails except on OOM.
 *
 * Names never collide, with C or with each other: locals are v<id>_<name>,
 * functions kf_<name>_<overload> (the number after the last '_' is the
 * overload, so two names cannot meet), structs ks_<name> with fields f_<name>,
 * made by km_<name> (from fields) and kz_<name> (zeroed), kernels kk_<name>
 * with the fixed suffixes of emit.h, none of which ends in another. Each
 * prefix is used for one kind of thing, so `struct P` and `struct P_zero` are
 * ks_P and ks_P_zero, and their helpers km_P, kz_P, km_P_zero, kz_P_zero.
 * Names are at most AST_MAX_IDENT bytes; nothing is kept in a fixed buffer.
 * Every user function takes the launch context (kn_c) and linear index (kn_lin)
 * first, so debug checks inside functions can report where they fired.
 *
 * A bool in memory the user can write (array elements, struct fields, the
 * kernel's argument block) is stored as uint8_t and read as (bool)(byte), so
 * any nonzero byte is true and a C bool never holds anything but 0 or 1
 * (reading a _Bool holding 2 is undefined, and compilers then give !v == 3).
 *
 * No walk recurses on something the user can make long: which functions have
 * side effects is settled once, iteratively over the call graph; questions
 * asked of a body use ast_walk; an else-if chain is written as a flat
 * sequence of ifs (C front ends parse `else if` by recursion).
 */
#include "emit_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

void emit_indent(Emitter *e) {
  for (int i = 0; i < e->depth; i++) buf_puts(&e->out, "  ");
}

/* ---- types ----------------------------------------------------------------- */

const char *emit_ctype(Emitter *e, const Type *t) {
  if (t->kind == TY_STRUCT) {
    int i = t->sdecl ? t->sdecl->index : -1;
    return i >= 0 && i < e->prog->nstructs && e->snames && e->snames[i] ? e->snames[i] : "int";
  }
  if (t->kind == TY_ARRAY) return "kn_array";
  if (t->kind == TY_VOID) return "void";
  const char *c = builtin_ctype(t);
  return c ? c : "int";
}

/* The C type of t where the user's bytes are: a bool is a byte (see above). */
const char *emit_storage_ctype(Emitter *e, const Type *t) {
  return t->kind == TY_BOOL ? "uint8_t" : emit_ctype(e, t);
}

/* What a reference to a t points at: a bool reference may refer to an array
 * element or a field, which are bytes, so every bool reference is a byte's
 * pointer (a C bool local is one byte holding 0 or 1, so reading it as a
 * byte and writing 0 or 1 there is the same). */
const char *emit_ref_ctype(Emitter *e, const Type *t) { return emit_storage_ctype(e, t); }

/* ---- text written aside ------------------------------------------------------ */

/* What is emitted from emit_aside until emit_aside_end goes to a buffer of
 * its own (a piece of text used twice, or placed later). */
Buf emit_aside(Emitter *e) {
  Buf saved = e->out;
  e->out = (Buf){0};
  return saved;
}

/* The text written aside (malloc'd; NULL when empty or out of memory), with
 * e->out as it was before emit_aside. */
char *emit_aside_end(Emitter *e, Buf saved) {
  Buf aside = e->out;
  e->out = saved;
  e->out.oom |= aside.oom;
  if (aside.oom) free(aside.s);
  return aside.oom ? NULL : aside.s;
}

/* ---- source positions -------------------------------------------------------- */

/* Index of the module whose path is `file`, in Program.modules order. */
int emit_file_index(const Program *p, const char *file) {
  int i = 0;
  for (const Module *m = p->modules; m; m = m->next, i++)
    if (file && m->path && strcmp(m->path, file) == 0) return i;
  return 0;
}

void emit_line_directive(Emitter *e, SrcLoc loc) {
  if (!e->opts->line_directives || !loc.file || loc.line <= 0) return;
  OUT(e, "#line %d \"", loc.line);
  for (const char *s = loc.file; *s; s++)
    if (*s == '"' || *s == '\\')
      OUT(e, "\\%c", *s);
    else if ((unsigned char)*s < 32)
      OUT(e, "?");
    else
      OUT(e, "%c", *s);
  OUT(e, "\"\n");
}

/* ---- expressions --------------------------------------------------------------- */

static void expr(Emitter *e, const Node *n);
static void target(Emitter *e, const Node *n);

void emit_var_name(Emitter *e, const Var *v) { OUT(e, "v%d_%s", v->id, v->name); }

/* Arguments separated by commas; comma_first when something precedes them. */
static void args_list(Emitter *e, const Node *a, bool comma_first) {
  for (; a; a = a->next, comma_first = true) {
    if (comma_first) OUT(e, ", ");
    expr(e, a);
  }
}

static void int_const(Emitter *e, const Type *t, uint64_t bits) {
  const char *ct = emit_ctype(e, t);
  if (!type_is_signed(t)) {
    OUT(e, "((%s)%" PRIu64 "ull)", ct, bits);
    return;
  }
  int64_t v = (int64_t)bits;
  if (v == INT64_MIN)
    OUT(e, "((%s)(-9223372036854775807ll - 1))", ct);
  else
    OUT(e, "((%s)%" PRId64 "ll)", ct, v);
}

static void float_text(Emitter *e, double v, bool single) {
  if (isnan(v)) {
    OUT(e, single ? "(0.0f / 0.0f)" : "(0.0 / 0.0)");
    return;
  }
  if (isinf(v)) {
    OUT(e, "(%s1.0%s / 0.0%s)", v < 0 ? "-" : "", single ? "f" : "", single ? "f" : "");
    return;
  }
  char s[64];
  snprintf(s, sizeof s, single ? "%.9g" : "%.17g", v);
  OUT(e, "%s%s%s", s, strpbrk(s, ".e") ? "" : ".0", single ? "f" : "");
}

static void float_const(Emitter *e, const Type *t, double v) {
  if (type_is_half(t)) { /* v is already rounded to t: exact in float32 */
    OUT(e, "kn_cvt_f32_%s(", builtin_type_code(t));
    float_text(e, v, true);
    OUT(e, ")");
  } else if (t->kind == TY_F64)
    float_text(e, v, false);
  else
    float_text(e, v, true);
}

static void constant(Emitter *e, const Node *n) {
  if (n->kind == ND_BOOL || n->ty->kind == TY_BOOL)
    OUT(e, n->ival ? "true" : "false");
  else if (n->kind == ND_FLOAT)
    float_const(e, n->ty, n->fval);
  else if (type_is_float(n->ty))
    float_const(e, n->ty, type_is_signed(n->ty) ? (double)(int64_t)n->ival : (double)n->ival);
  else
    int_const(e, n->ty, n->ival);
}

/* Conversion of an already-emitted-as-callback value: from -> to (scalars, vectors). */
static void convert(Emitter *e, const Type *to, const Node *x);

static void scalar_convert(Emitter *e, const Type *to, const Type *from, const Node *x) {
  const char *fc = builtin_type_code(from), *tc = builtin_type_code(to);
  if (type_equal(to, from)) {
    expr(e, x);
    return;
  }
  if (to->kind == TY_BOOL) {
    if (type_is_half(from)) {
      OUT(e, "(kn_cvt_%s_f32(", fc);
      expr(e, x);
      OUT(e, ") != 0.0f)");
    } else {
      OUT(e, "((");
      expr(e, x);
      OUT(e, ") != 0)");
    }
    return;
  }
  if (type_is_half(from)) { /* integers and the other 16-bit float through float32 (exact) */
    if (to->kind == TY_F32 || to->kind == TY_F64) {
      OUT(e, "kn_cvt_%s_%s(", fc, tc);
      expr(e, x);
      OUT(e, ")");
      return;
    }
    OUT(e, "kn_cvt_f32_%s(kn_cvt_%s_f32(", tc, fc);
    expr(e, x);
    OUT(e, "))");
    return;
  }
  if (type_is_half(to)) {
    /* rounded once: float64 directly, and integers into bfloat16 too (float32
     * holds every integer float16 can, but not every one bfloat16 can) */
    if (from->kind == TY_F64 || (to->kind == TY_BF16 && type_is_int(from))) {
      OUT(e, "kn_cvt_%s_%s(", fc, tc);
      expr(e, x);
      OUT(e, ")");
      return;
    }
    OUT(e, "kn_cvt_f32_%s((float)(", tc);
    expr(e, x);
    OUT(e, "))");
    return;
  }
  if (type_is_float(from) && type_is_int(to)) { /* saturating, NaN -> 0 */
    OUT(e, "kn_cvt_%s_%s(", fc, tc);
    expr(e, x);
    OUT(e, ")");
    return;
  }
  OUT(e, "((%s)(", emit_ctype(e, to));
  expr(e, x);
  OUT(e, "))");
}

/* Vector family conversions, and those between matrices of one shape: the
 * stdlib's kn_cvt_<from>_<to>, per component with the scalar rules (float to
 * int saturates). */
static void vector_convert(Emitter *e, const Type *to, const Type *from, const Node *x) {
  OUT(e, "kn_cvt_%s_%s(", builtin_type_code(from), builtin_type_code(to));
  expr(e, x);
  OUT(e, ")");
}

static void convert(Emitter *e, const Type *to, const Node *x) {
  if (to->kind == TY_TILE) {
    scalar_convert(e, to->elem, x->ty->elem, x);
    return;
  }
  if (type_equal(to, x->ty))
    expr(e, x);
  else if ((to->kind == TY_VEC || to->kind == TY_MAT || to->kind == TY_QUAT) &&
           x->ty->kind == to->kind)
    vector_convert(e, to, x->ty, x);
  else if (to->kind == TY_VEC && type_is_scalar(x->ty)) {
    OUT(e, "kn_splat_%s(", builtin_type_code(to));
    scalar_convert(e, to->elem, x->ty, x);
    OUT(e, ")");
  } else
    scalar_convert(e, to, x->ty, x);
}

/* A tile's operators act on its elements (see emit_tile.c's element mode). */
static const Type *scalar_of(const Type *t) { return t->kind == TY_TILE ? t->elem : t; }

static bool is_small_int(const Type *t) { return type_is_int(t) && t->size < 4; }

/* The unsigned type of an integer's width: wrapping arithmetic without UB. */
static const char *uint_of(const Type *t) {
  switch (t->size) {
    case 8: return "uint64_t";
    default: return "uint32_t";
  }
}

/* How scalar_binop_text writes op on values of type t. */
typedef enum { BIN_HALF, BIN_DIVMOD, BIN_SHIFT, BIN_WRAP, BIN_PLAIN } BinForm;

static BinForm binop_form(int op, const Type *t) {
  bool arith = op == TK_PLUS || op == TK_MINUS || op == TK_STAR;
  bool bits = op == TK_AMP || op == TK_PIPE || op == TK_CARET;
  if (type_is_half(t)) return BIN_HALF;
  if (type_is_int(t) && (op == TK_SLASH || op == TK_PERCENT)) return BIN_DIVMOD;
  if (type_is_int(t) && (op == TK_SHL || op == TK_SHR)) return BIN_SHIFT;
  if (type_is_int(t) && (arith || (bits && is_small_int(t)))) return BIN_WRAP;
  return BIN_PLAIN;
}

/* A scalar binary operation on operands already of the operation's type
 * (shifts: any integer right operand). Integer + - * go through the unsigned
 * type so overflow wraps without UB; / % << >> call the stdlib's defined forms. */
static void binop_text2(Emitter *e, int op, const Type *t, const Node *l, const Node *r,
                        const char *ltext, const char *rtext) {
  const char *c = emit_ctype(e, t), *code = builtin_type_code(t);
#define L() (ltext ? (void)OUT(e, "%s", ltext) : expr(e, l))
#define R() (rtext ? (void)OUT(e, "%s", rtext) : expr(e, r))
  BinForm form = binop_form(op, t);
  if (form == BIN_HALF) {
    OUT(e, "kn_cvt_f32_%s(kn_cvt_%s_f32(", code, code);
    L();
    OUT(e, ") %s kn_cvt_%s_f32(", tok_spelling(op), code);
    R();
    OUT(e, "))");
  } else if (form == BIN_DIVMOD) {
    OUT(e, "kn_%s_%s(", op == TK_SLASH ? "div" : "mod", code);
    L();
    OUT(e, ", ");
    R();
    OUT(e, ")");
  } else if (form == BIN_SHIFT) {
    OUT(e, "kn_%s_%s(", op == TK_SHL ? "shl" : "shr", code);
    L();
    OUT(e, ", (int64_t)(");
    R();
    OUT(e, "))");
  } else if (form == BIN_WRAP) {
    const char *u = uint_of(t);
    OUT(e, "((%s)((%s)(", c, u);
    L();
    OUT(e, ") %s (%s)(", tok_spelling(op), u);
    R();
    OUT(e, ")))");
  } else {
    OUT(e, "((");
    L();
    OUT(e, ") %s (", tok_spelling(op));
    R();
    OUT(e, "))");
  }
#undef L
#undef R
}

static void scalar_binop_text(Emitter *e, int op, const Type *t, const Node *l, const Node *r,
                              const char *ltext) {
  binop_text2(e, op, t, l, r, ltext, NULL);
}

void emit_binop_text(Emitter *e, int op, const Type *t, const char *l, const char *r) {
  binop_text2(e, op, t, NULL, NULL, l, r);
}

static void comparison(Emitter *e, const Node *n) {
  const Type *t = scalar_of(n->lhs->ty);
  if (type_is_half(t)) {
    const char *code = builtin_type_code(t);
    OUT(e, "(kn_cvt_%s_f32(", code);
    expr(e, n->lhs);
    OUT(e, ") %s kn_cvt_%s_f32(", tok_spelling(n->op), code);
    expr(e, n->rhs);
    OUT(e, "))");
    return;
  }
  OUT(e, "((");
  expr(e, n->lhs);
  OUT(e, ") %s (", tok_spelling(n->op));
  expr(e, n->rhs);
  OUT(e, "))");
}

static bool is_comparison(int op) {
  return op == TK_LT || op == TK_GT || op == TK_LE || op == TK_GE || op == TK_EQEQ || op == TK_NE;
}

static void builtin_call(Emitter *e, int index, const Node *a0, const Node *a1) {
  OUT(e, "%s(", builtin_get(index)->cname);
  expr(e, a0);
  if (a1) {
    OUT(e, ", ");
    expr(e, a1);
  }
  OUT(e, ")");
}

/* ---- chains: ((a + b) - c) + d is written (a + b - c + d) ---------------------- */

/* Binary nodes written as C's own operator on one type: &&, ||, and the plain
 * and wrapping forms of scalar_binop_text (wrapping sums, products and bit
 * operations keep their low bits exact in 32 or 64 bits). A left operand of
 * the same type and precedence continues the chain, so a long sum nests no
 * brackets (clang refuses more than 256 levels). */
static bool chains(const Node *n) {
  if (n->kind != ND_BINARY || n->call_kind == CALL_BUILTIN || is_comparison(n->op)) return false;
  if (n->ty->kind == TY_TILE) return false;
  if (n->op == TK_ANDAND || n->op == TK_OROR) return true;
  BinForm f = binop_form(n->op, n->ty);
  return f == BIN_PLAIN || f == BIN_WRAP;
}

static int precedence(int op) {
  if (op == TK_MINUS) return TK_PLUS;
  if (op == TK_SLASH || op == TK_PERCENT) return TK_STAR;
  return op;
}

static bool effects(Emitter *e, const Node *n);

/* A left operand with a side effect goes through expr, which orders its operands. */
static void chain_operands(Emitter *e, const Node *top, const Node *n, const char *cast) {
  const Node *l = n->lhs;
  if (chains(l) && precedence(l->op) == precedence(top->op) && type_equal(l->ty, top->ty) &&
      !effects(e, l))
    chain_operands(e, top, l, cast);
  else {
    OUT(e, "%s(", cast);
    expr(e, l);
    OUT(e, ")");
  }
  OUT(e, " %s %s(", tok_spelling(n->op), cast);
  expr(e, n->rhs);
  OUT(e, ")");
}

/* ((L) op (R)), or ((T)((U)(L) op (U)(R))) in unsigned arithmetic, with L's chain inlined. */
static void chain(Emitter *e, const Node *n) {
  bool wrap = n->op != TK_ANDAND && n->op != TK_OROR && binop_form(n->op, n->ty) == BIN_WRAP;
  char cast[48] = "";
  if (wrap) {
    snprintf(cast, sizeof cast, "(%s)", uint_of(n->ty));
    OUT(e, "((%s)(", emit_ctype(e, n->ty));
  } else
    OUT(e, "(");
  chain_operands(e, n, n, cast);
  OUT(e, wrap ? "))" : ")");
}

static void binary(Emitter *e, const Node *n) {
  if (n->call_kind == CALL_BUILTIN)
    builtin_call(e, n->builtin, n->lhs, n->rhs);
  else if (is_comparison(n->op))
    comparison(e, n);
  else if (chains(n))
    chain(e, n);
  else
    scalar_binop_text(e, n->op, scalar_of(n->ty), n->lhs, n->rhs, NULL);
}

static void unary(Emitter *e, const Node *n) {
  const Type *t = scalar_of(n->ty);
  if (n->call_kind == CALL_BUILTIN) {
    builtin_call(e, n->builtin, n->lhs, NULL);
    return;
  }
  if (n->op == TK_PLUS) {
    expr(e, n->lhs);
    return;
  }
  if (n->op == TK_BANG) {
    OUT(e, "(!(");
    expr(e, n->lhs);
    OUT(e, "))");
    return;
  }
  if (type_is_half(t)) {
    OUT(e, "kn_cvt_f32_%s(-kn_cvt_%s_f32(", builtin_type_code(t), builtin_type_code(t));
    expr(e, n->lhs);
    OUT(e, "))");
  } else if (type_is_int(t)) {
    const char *u = uint_of(t);
    if (n->op == TK_MINUS)
      OUT(e, "((%s)(0u - (%s)(", emit_ctype(e, t), u);
    else
      OUT(e, "((%s)(~(%s)(", emit_ctype(e, t), u);
    expr(e, n->lhs);
    OUT(e, ")))");
  } else {
    OUT(e, "(-(");
    expr(e, n->lhs);
    OUT(e, "))");
  }
}

/* Is this an lvalue in the generated C (so & and [] on it are allowed)? */
static bool is_lvalue(const Node *n) {
  switch (n->kind) {
    case ND_IDENT: return n->var != NULL;
    case ND_INDEX:
      return n->lhs->ty->kind == TY_ARRAY || n->lhs->ty->kind == TY_FIXED || is_lvalue(n->lhs);
    case ND_MEMBER: return is_lvalue(n->lhs);
    default: return false;
  }
}

bool emit_is_lvalue(const Node *n) { return is_lvalue(n); }

static void index_value(Emitter *e, const Node *ix) {
  OUT(e, "(int64_t)(");
  expr(e, ix);
  OUT(e, ")");
}

/* Index k of an array element: its expression, or verify_fp's copy in kn_fx
 * (evaluated once, before the store, by emit_fp_open). */
static void element_index(Emitter *e, const Node *ix, int k, bool fx) {
  if (fx && e->fx_id)
    OUT(e, "kn_fx%d[%d]", e->fx_id, k);
  else if (fx)
    OUT(e, "kn_fx[%d]", k);
  else
    index_value(e, ix);
}

/* The parameter number of an array the dense body reaches through a restrict
 * pointer (kn_r<number>), or -1. */
static int restrict_param(const Emitter *e, const Node *array) {
  if (!e->dense || !e->access || array->kind != ND_IDENT || !array->var) return -1;
  for (int i = 0; i < e->fn->nparams; i++)
    if (e->fn->params[i] == array->var) return e->access[i] == EMIT_ACCESS_PLAIN ? -1 : i;
  return -1;
}

/* An array element as a C lvalue: (*KN_Pn(T, a, i, j...)), through a restrict
 * pointer (*KN_Rn(T, kn_r<p>, a, i, j...)), or checked in debug. */
static void array_element(Emitter *e, const Node *n) {
  const Type *at = n->lhs->ty;
  const char *ct = emit_storage_ctype(e, at->elem);
  bool fx = e->fx_index;
  e->fx_index = false;
  if (e->opts->debug) {
    /* The checker numbered array parameters program-wide (Var.array_id). */
    const Var *v = n->lhs->kind == ND_IDENT ? n->lhs->var : NULL;
    int param = v && v->is_param && v->ty->kind == TY_ARRAY ? v->array_id : -1;
    /* which indices are unsigned rides above the rank (kern_abi.h, kn_error.ndim) */
    int unsigned_mask = 0, d = 0;
    for (const Node *ix = n->args; ix; ix = ix->next, d++)
      if (type_is_int(ix->ty) && !type_is_signed(ix->ty)) unsigned_mask |= 1 << d;
    OUT(e, "(*(%s *)kne_chk(&(", ct);
    expr(e, n->lhs);
    OUT(e, "), kn_c, %d, %d, %d, %d", emit_file_index(e->prog, n->loc.file), n->loc.line, param,
        at->ndim | unsigned_mask << 8);
    int k = 0;
    for (const Node *ix = n->args; ix; ix = ix->next, k++) {
      OUT(e, ", ");
      element_index(e, ix, k, fx);
    }
    for (; k < 4; k++) OUT(e, ", 0");
    OUT(e, ", kn_lin, (int64_t)sizeof(%s), KN_DENSE, KNE_SCRATCH))", ct);
    return;
  }
  int r = restrict_param(e, n->lhs);
  if (r >= 0)
    OUT(e, "(*KN_R%d(%s%s, kn_r%d, ", at->ndim,
        e->access[r] == EMIT_ACCESS_READONLY ? "const " : "", ct, r);
  else
    OUT(e, "(*KN_%c%d(%s, ", e->dense ? 'D' : 'S', at->ndim, ct);
  expr(e, n->lhs);
  int k = 0;
  for (const Node *ix = n->args; ix; ix = ix->next, k++) {
    OUT(e, ", ");
    element_index(e, ix, k, fx);
  }
  OUT(e, "))");
}

/* One index of a local array's element, clamped to its extent (an unsigned
 * 64-bit one as unsigned); a constant is in range already (the checker). */
static void fixed_index(Emitter *e, const Node *ix, int extent) {
  if (ix->is_const && (ix->kind == ND_INT)) {
    OUT(e, "%lld", (long long)ix->ival);
    return;
  }
  OUT(e, ix->ty->kind == TY_U64 ? "kne_uidx((uint64_t)(" : "kne_vidx((int64_t)(");
  expr(e, ix);
  OUT(e, "), %d)", extent);
}

/* A local array's element as a C lvalue: v[((i * d1 + j) * d2 + k)] with
 * each index clamped, or checked in debug (kne_lchk: a bad index is
 * reported and reaches the scratch slot instead). */
static void fixed_element(Emitter *e, const Node *n) {
  const Type *t = n->lhs->ty;
  const char *ct = emit_ctype(e, t->elem);
  if (e->opts->debug) {
    const Var *v = n->lhs->kind == ND_IDENT ? n->lhs->var : NULL;
    int unsigned_mask = 0, d = 0;
    for (const Node *ix = n->args; ix; ix = ix->next, d++)
      if (type_is_int(ix->ty) && !type_is_signed(ix->ty)) unsigned_mask |= 1 << d;
    OUT(e, "(*(%s *)kne_lchk((char *)(", ct);
    expr(e, n->lhs);
    OUT(e, "), kn_c, %d, %d, %d, %d", emit_file_index(e->prog, n->loc.file), n->loc.line,
        v ? v->array_id : -1, t->ndim | unsigned_mask << 8);
    int k = 0;
    for (const Node *ix = n->args; ix; ix = ix->next, k++) {
      OUT(e, ", ");
      index_value(e, ix);
    }
    for (; k < 4; k++) OUT(e, ", 0");
    for (k = 0; k < 4; k++) OUT(e, ", %d", k < t->ndim ? t->dims[k] : 1);
    OUT(e, ", kn_lin, (int64_t)sizeof(%s), KNE_SCRATCH))", ct);
    return;
  }
  OUT(e, "(");
  expr(e, n->lhs);
  OUT(e, ")[");
  for (int k = 1; k < t->ndim; k++) OUT(e, "(");
  const Node *ix = n->args;
  fixed_index(e, ix, t->dims[0]);
  for (int k = 1; k < t->ndim && (ix = ix->next); k++) {
    OUT(e, " * %d + ", t->dims[k]);
    fixed_index(e, ix, t->dims[k]);
    OUT(e, ")");
  }
  OUT(e, "]");
}

static void index_expr(Emitter *e, const Node *n) {
  const Type *bt = n->lhs->ty;
  if (bt->kind == TY_TILE) {
    emit_tile_read(e, n);
    return;
  }
  if (bt->kind == TY_FIXED) {
    fixed_element(e, n);
    return;
  }
  if (bt->kind == TY_ARRAY) {
    array_element(e, n);
    return;
  }
  const char *code = builtin_type_code(bt);
  if (!is_lvalue(n->lhs)) { /* rvalue vector/matrix/quat */
    OUT(e, bt->kind == TY_MAT ? "kn_get_%s_row(" : "kn_get_%s(", code);
    expr(e, n->lhs);
    OUT(e, ", (int64_t)(");
    expr(e, n->args);
    OUT(e, "))");
    return;
  }
  /* an lvalue component: through a pointer to the first component */
  const char *elem = bt->kind == TY_MAT ? emit_ctype(e, type_mat_row(bt))
                                        : emit_ctype(e, bt->elem ? bt->elem : &ty_f32);
  int count = bt->n; /* a transform's 7 floats are contiguous too: p then q */
  OUT(e, "(((%s *)&(", elem);
  expr(e, n->lhs);
  OUT(e, "))[kne_vidx((int64_t)(");
  expr(e, n->args);
  OUT(e, "), %d)])", count);
}

static void member(Emitter *e, const Node *n) {
  static const char comp[] = "xyzw";
  OUT(e, "(");
  expr(e, n->lhs);
  if (n->lhs->ty->kind == TY_STRUCT)
    OUT(e, ").f_%s", n->name);
  else if (n->lhs->ty->kind == TY_TRANSFORM)
    OUT(e, ").%c", n->member ? 'q' : 'p');
  else if (n->lhs->ty->generic)
    OUT(e, ").v[%d]", n->member);
  else
    OUT(e, ").%c", comp[n->member & 3]);
}

static void ident(Emitter *e, const Node *n) {
  if (n->var && n->var->ty->kind == TY_TILE && e->tile_i) {
    emit_var_name(e, n->var);
    OUT(e, "[%s]", e->tile_i);
  } else if (n->var && n->var->is_ref) { /* a pointer to the caller's lvalue */
    OUT(e, "(*");
    emit_var_name(e, n->var);
    OUT(e, ")");
  } else if (n->var)
    emit_var_name(e, n->var);
  else if (n->cdecl && n->cdecl->init)
    expr(e, n->cdecl->init); /* consts are inlined */
  else
    OUT(e, "0");
}

/* A C string literal with the same bytes (octal escapes for the rest). */
static void string_literal(Emitter *e, const Node *s) {
  OUT(e, "\"");
  for (size_t i = 0; i < s->str_len; i++) {
    unsigned char c = (unsigned char)s->str[i];
    if (c == '"' || c == '\\' || c == '?')
      OUT(e, "\\%c", c);
    else if (c < 32 || c >= 127)
      OUT(e, "\\%03o", c);
    else
      OUT(e, "%c", c);
  }
  OUT(e, "\"");
}

static const char *atomic_stem(SpecialKind k) {
  switch (k) {
    case SP_ATOMIC_ADD: return "add";
    case SP_ATOMIC_SUB: return "sub";
    case SP_ATOMIC_MIN: return "min";
    case SP_ATOMIC_MAX: return "max";
    case SP_ATOMIC_EXCH: return "exch";
    case SP_ATOMIC_AND: return "and";
    case SP_ATOMIC_OR: return "or";
    case SP_ATOMIC_XOR: return "xor";
    case SP_ATOMIC_CAS: return "cas";
    case SP_ATOMIC_LOAD: return "load";
    default: return "?";
  }
}

static const char *bound_name(Emitter *e, const Node *n);

/* &x as C: the operand is an lvalue (array element, variable, field or
 * component), or a pointer already evaluated into a temporary (see ordered).
 * A bool's pointer is a byte's (emit_ref_ctype). */
static void address_of(Emitter *e, const Node *addr) {
  const char *name = e->nbound ? bound_name(e, addr) : NULL;
  if (name) {
    OUT(e, "%s", name);
    return;
  }
  OUT(e, addr->lhs->ty->kind == TY_BOOL ? "(uint8_t *)&" : "&");
  target(e, addr->lhs);
}

static void tid_expr(Emitter *e, const Node *n) {
  if (!n->args) {
    OUT(e, "((int32_t)kn_lin)");
    return;
  }
  OUT(e, "kn_t%d", (int)(n->args->ival & 3));
}

static void special(Emitter *e, const Node *n) {
  const Node *a = n->args;
  switch (n->special) {
    case SP_TID: tid_expr(e, n); break;
    case SP_DIM: OUT(e, "((int32_t)kn_c->dim[%d])", (int)(a->ival & 3)); break;
    case SP_LEN:
      OUT(e, "((int32_t)(");
      expr(e, a);
      OUT(e, ").shape[0])");
      break;
    case SP_SHAPE:
      OUT(e, "((int32_t)(");
      expr(e, a);
      OUT(e, ").shape[%d])", (int)(a->next->ival & 3));
      break;
    case SP_SIZE:
      OUT(e, "kne_size(&(");
      expr(e, a);
      OUT(e, "))");
      break;
    case SP_PRINTF: emit_printf(e, n); break;
    case SP_ASSERT: /* ival: 1 + the message's number, 0 without one (check_record.c) */
      if (e->opts->debug) {
        OUT(e, "((");
        expr(e, a);
        OUT(e, ") ? (void)0 : kn_assert_fail_msg(kn_c, %d, %d, %d, kn_lin))",
            emit_file_index(e->prog, n->loc.file), n->loc.line, (int)n->ival - 1);
      } else
        OUT(e, "((void)0)");
      break;
    case SP_RAND_INIT:
      OUT(e, "kn_rand_init(");
      expr(e, a);
      OUT(e, ", ");
      expr(e, a->next);
      OUT(e, ")");
      break;
    case SP_RANDF:
      OUT(e, n->nargs == 3 ? "kn_randf_range(" : "kn_randf(");
      address_of(e, a);
      args_list(e, a->next, true);
      OUT(e, ")");
      break;
    case SP_RANDI:
      OUT(e, "kn_randi(");
      address_of(e, a);
      OUT(e, ")");
      break;
    case SP_RANDN:
      OUT(e, "kn_randn(");
      address_of(e, a);
      OUT(e, ")");
      break;
    case SP_IDENTITY: OUT(e, "kn_identity_%s()", builtin_type_code(n->ty)); break;
    case SP_LOWER_BOUND: emit_lower_bound(e, n, expr); break;
    case SP_RAND_FN: emit_rand_fn(e, n, expr, address_of); break;
    case SP_FLOAT_BITS: OUT(e, "kn__bits_f32(0x%08xu)", (unsigned)n->ival); break;
    default:
      if (emit_fp_atomic_expr(e, n)) break;
      OUT(e, "kn_atomic_%s_%s(", atomic_stem(n->special), builtin_type_code(a->lhs->ty));
      address_of(e, a);
      args_list(e, a->next, true);
      OUT(e, ")");
  }
}

/* The constructor helper of a vector/matrix/quat from the call's arguments. */
static void ctor(Emitter *e, const Node *n) {
  const Type *t = n->ty;
  if (t->kind == TY_STRUCT) {
    OUT(e, n->nargs ? "km_%s(" : "kz_%s(", t->sdecl->name);
    args_list(e, n->args, false);
    OUT(e, ")");
    return;
  }
  if (type_is_scalar(t)) {
    convert(e, t, n->args);
    return;
  } /* float(i) */
  const char *code = builtin_type_code(t);
  const Node *a = n->args;
  if (n->nargs == 0 && t->kind == TY_QUAT)
    OUT(e, "kn_identity_%s(", code); /* quat() is the identity, as Warp's */
  else if (n->nargs == 0 && t->kind == TY_TRANSFORM)
    OUT(e, "kn_transform_identity(");
  else if (n->nargs == 0)
    OUT(e, "kn_zero_%s(", code);
  else if (n->nargs == 1 && a->ty->kind == TY_VEC && t->kind == TY_VEC) {
    vector_convert(e, t, a->ty, a);
    return;
  } else if (n->nargs == 1 && t->kind == TY_MAT)
    OUT(e, "kn_diag_%s(", code);
  else if (n->nargs == 1)
    OUT(e, "kn_splat_%s(", code);
  else if (t->kind == TY_MAT && n->nargs == t->n && a->ty->kind == TY_VEC)
    OUT(e, "kn_make_%s_rows(", code);
  else if (t->kind == TY_TRANSFORM && n->nargs == 2)
    OUT(e, "kn_make_tf_pq(");
  else if (t == &ty_svec && n->nargs == 2)
    OUT(e, "kn_make_sv_wv(");
  else
    OUT(e, "kn_make_%s(", code);
  args_list(e, a, false);
  OUT(e, ")");
}

static void call(Emitter *e, const Node *n) {
  switch (n->call_kind) {
    case CALL_FUNC:
      if (n->fn->tiled) {
        emit_tile_call(e, n, NULL);
        break;
      }
      OUT(e, "kf_%s_%d(kn_c, kn_lin", n->fn->name, n->fn->overload);
      args_list(e, n->args, true);
      OUT(e, ")");
      break;
    case CALL_BUILTIN:
      OUT(e, "%s(", builtin_get(n->builtin)->cname);
      args_list(e, n->args, false);
      OUT(e, ")");
      break;
    case CALL_CTOR: ctor(e, n); break;
    case CALL_SPECIAL: special(e, n); break;
    case CALL_TILE: emit_tile_elem(e, n); break;
    default: OUT(e, "0");
  }
}

static void expr_node(Emitter *e, const Node *n) {
  if (n->is_const && (n->kind == ND_INT || n->kind == ND_FLOAT || n->kind == ND_BOOL)) {
    constant(e, n);
    return;
  }
  switch (n->kind) {
    case ND_INT:
    case ND_FLOAT:
    case ND_BOOL: constant(e, n); break;
    case ND_IDENT: ident(e, n); break;
    case ND_UNARY: unary(e, n); break;
    case ND_BINARY: binary(e, n); break;
    case ND_COND:
      OUT(e, "((");
      expr(e, n->cond);
      OUT(e, ") ? (");
      expr(e, n->then);
      OUT(e, ") : (");
      expr(e, n->els);
      OUT(e, "))");
      break;
    case ND_CALL: call(e, n); break;
    case ND_CAST:
    case ND_CONV: convert(e, n->ty, n->lhs); break;
    case ND_INDEX: index_expr(e, n); break;
    case ND_MEMBER: member(e, n); break;
    case ND_ADDR: address_of(e, n); break;
    case ND_STRING: string_literal(e, n); break;
    default: OUT(e, "0");
  }
}

/* ---- order of evaluation ------------------------------------------------------
 * Operands and arguments are evaluated left to right (C leaves that order
 * unspecified, and gcc and clang differ). It matters when an operand has a
 * side effect: a random draw, an atomic, printf, or a call of a function that
 * has one (writes an array element, ...). Then each operand is evaluated into
 * a temporary in order, with C's comma operator:
 *   (kn_o1 = (a), kn_o2 = (b), kn_o1 - kn_o2)
 * and the temporaries are declared just before the statement (see stmt). */

static bool effects(Emitter *e, const Node *n);

static bool writes_array(const Node *target) {
  while (target->kind == ND_MEMBER ||
         (target->kind == ND_INDEX && target->lhs->ty->kind != TY_ARRAY))
    target = target->lhs;
  return target->kind == ND_INDEX;
}

/* A call that passes a reference or a local array: the callee may write the
 * caller's variable, array element or local array. */
static bool passes_ref(const Node *call) {
  for (const Node *a = call->args; a; a = a->next)
    if (a->kind == ND_ADDR || a->ty->kind == TY_FIXED) return true;
  return false;
}

static bool fn_effects(Emitter *e, const Decl *f) {
  int i = f->index;
  if (f->tiled) return false; /* its own code orders its effects (emit_tile.c) */
  if (i < 0 || i >= e->prog->nfuncs || e->prog->funcs[i] != f || !e->fn_effects) return true;
  return e->fn_effects[i] != 1;
}

static bool effect_here(Emitter *e, const Node *n) {
  if (n->kind == ND_ASSIGN || n->kind == ND_INCDEC) return writes_array(n->lhs);
  if (n->kind != ND_CALL) return false;
  if (n->call_kind == CALL_FUNC) return passes_ref(n) || fn_effects(e, n->fn);
  if (n->call_kind != CALL_SPECIAL) return false;
  switch (n->special) {
    case SP_TID:
    case SP_DIM:
    case SP_LEN:
    case SP_SHAPE:
    case SP_SIZE:
    case SP_RAND_INIT:
    case SP_IDENTITY:
    case SP_NONE: return false;
    default: return true; /* printf, assert, the atomics, the random draws */
  }
}

static bool effect_visit(const Node *n, void *e) { return effect_here(e, n); }

/* Does n (a statement or expression, with everything below it) have a side
 * effect? Out of memory answers yes: ordering is then only slower. */
static bool effects(Emitter *e, const Node *n) { return n && ast_walk(n, effect_visit, e) != 0; }

/* Which functions have side effects: a function has one when its own body
 * has one, or when a function it calls has one; callees are settled first
 * (ast_call_graph: no recursion however long the call chains). Out of memory
 * leaves them unknown, which counts as an effect. */
static bool own_effect(const Node *n, void *unused) {
  (void)unused;
  if (n->kind == ND_CALL && n->call_kind == CALL_FUNC) return passes_ref(n);
  return effect_here(NULL, n);
}

void emit_find_effects(Emitter *e) {
  AstCallGraph g;
  if (!e->fn_effects || !ast_call_graph(e->prog, &g)) return;
  for (int k = 0; k < e->prog->nfuncs; k++) {
    int f = g.order[k];
    bool any = ast_walk(e->prog->funcs[f]->body, own_effect, NULL) != 0;
    for (int j = 0; j < g.ncallees[f] && !any; j++) any = fn_effects(e, g.callees[f][j]);
    e->fn_effects[f] = any ? 2 : 1;
  }
  ast_call_graph_free(&g);
}

/* An operand that can be held in a temporary: a value (not an array, a
 * format or a constant), or &x as a pointer. */
static bool bindable(const Node *n) {
  TypeKind k = n->ty ? n->ty->kind : TY_ERROR;
  if (n->kind == ND_ADDR) return true;
  return !n->is_const && k != TY_ARRAY && k != TY_FIXED && k != TY_PTR && k != TY_STRING &&
         k != TY_VOID && k != TY_ERROR;
}

/* The first operand of n whose order C leaves open (binary operators but
 * && and ||, which C orders; calls; the indices of an array element), or
 * NULL; next_operand walks them. */
static const Node *first_operand(const Node *n) {
  if (n->kind == ND_BINARY && n->op != TK_ANDAND && n->op != TK_OROR) return n->lhs;
  if (n->kind == ND_INDEX && (n->lhs->ty->kind == TY_ARRAY || n->lhs->ty->kind == TY_FIXED))
    return n->args;
  return n->kind == ND_CALL ? n->args : NULL;
}

static const Node *next_operand(const Node *n, const Node *o) {
  if (n->kind == ND_BINARY) return o == n->lhs ? n->rhs : NULL;
  return o->next;
}

static bool needs_order(Emitter *e, const Node *n) {
  int held = 0;
  bool effect = false;
  for (const Node *o = first_operand(n); o; o = next_operand(n, o)) {
    held += bindable(o);
    effect = effect || effects(e, o);
  }
  return held >= 2 && effect;
}

static const char *bound_name(Emitter *e, const Node *n) {
  for (int i = e->nbound - 1; i >= 0; i--)
    if (e->bound[i].node == n) return e->bound[i].name;
  return NULL;
}

static void bind(Emitter *e, const Node *n, int id) {
  if (e->nbound == e->cap_bound) {
    int cap = e->cap_bound ? 2 * e->cap_bound : 16;
    EmitBound *b = realloc(e->bound, (size_t)cap * sizeof *b);
    if (!b) {
      e->out.oom = true;
      return;
    }
    e->bound = b;
    e->cap_bound = cap;
  }
  e->bound[e->nbound].node = n;
  snprintf(e->bound[e->nbound++].name, sizeof e->bound[0].name, "kn_o%d", id);
}

/* n with its operands evaluated into temporaries first, left to right. A
 * binary operator is written by scalar_binop_text, which reads its operands
 * through expr (so through the temporaries); an array element as
 * (*(..., &element)), which stays an lvalue. */
static void ordered(Emitter *e, const Node *n) {
  int mark = e->nbound;
  bool element = n->kind == ND_INDEX;
  OUT(e, element ? "(*(" : "(");
  for (const Node *o = first_operand(n); o; o = next_operand(n, o)) {
    if (!bindable(o)) continue;
    int id = ++e->ntemps;
    bool ptr = o->kind == ND_ADDR;
    buf_printf(&e->temps, "%s %skn_o%d; ",
               ptr ? emit_ref_ctype(e, o->lhs->ty) : emit_ctype(e, o->ty), ptr ? "*" : "", id);
    OUT(e, "kn_o%d = (", id);
    expr(e, o);
    OUT(e, "), ");
    bind(e, o, id);
  }
  if (element) OUT(e, "&");
  if (n->kind == ND_BINARY && n->call_kind != CALL_BUILTIN && !is_comparison(n->op))
    scalar_binop_text(e, n->op, n->ty, n->lhs, n->rhs, NULL);
  else
    expr_node(e, n);
  e->nbound = mark;
  OUT(e, element ? "))" : ")");
}

/* n as C, where it is the target of an assignment or of & (an lvalue). */
static void target(Emitter *e, const Node *n) {
  const char *name = e->nbound ? bound_name(e, n) : NULL;
  if (name && n->ty && n->ty->kind == TY_TILE && e->tile_i)
    OUT(e, "%s[%s]", name, e->tile_i);
  else if (name)
    OUT(e, "%s", name);
  else if (first_operand(n) && needs_order(e, n))
    ordered(e, n);
  else
    expr_node(e, n);
}

/* A bool the user's bytes back (an array element, a struct field): stored as
 * a byte, so its value is (bool)(byte), whatever the byte. */
static bool stored_bool(const Node *n) {
  if (!n->ty || n->ty->kind != TY_BOOL) return false;
  return (n->kind == ND_INDEX && n->lhs->ty->kind == TY_ARRAY) ||
         (n->kind == ND_MEMBER && n->lhs->ty->kind == TY_STRUCT) ||
         (n->kind == ND_IDENT && n->var && n->var->is_ref);
}

void emit_expr(Emitter *e, const Node *n) { expr(e, n); }
void emit_target(Emitter *e, const Node *n) { target(e, n); }
bool emit_effects(Emitter *e, const Node *n) { return effects(e, n); }
void emit_bind(Emitter *e, const Node *n, const char *name) {
  bind(e, n, 0);
  if (e->nbound && e->bound[e->nbound - 1].node == n)
    snprintf(e->bound[e->nbound - 1].name, sizeof e->bound[0].name, "%s", name);
}
const char *emit_bound(Emitter *e, const Node *n) { return bound_name(e, n); }
void emit_number(Emitter *e, const Type *t, double v) {
  if (type_is_float(t))
    float_const(e, t, v);
  else if (t->kind == TY_BOOL)
    OUT(e, v != 0 ? "true" : "false");
  else
    int_const(e, t, (uint64_t)(int64_t)v);
}

static void expr(Emitter *e, const Node *n) {
  bool byte = stored_bool(n);
  if (byte) OUT(e, "((bool)");
  target(e, n);
  if (byte) OUT(e, ")");
}

/* ---- statements --------------------------------------------------------------- */

static void stmt(Emitter *e, const Node *n);

void emit_block_body(Emitter *e, const Node *list) {
  e->depth++;
  for (const Node *s = list; s; s = s->next) stmt(e, s);
  e->depth--;
}

/* The body of if/while/do, always braced. */
static void sub_stmt(Emitter *e, const Node *s) {
  OUT(e, " {\n");
  if (s->kind == ND_BLOCK)
    emit_block_body(e, s->body);
  else {
    e->depth++;
    stmt(e, s);
    e->depth--;
  }
  emit_indent(e);
  OUT(e, "}");
}

/* A loop body with `continue` meaning the C loop's own continue. */
static void loop_body(Emitter *e, const Node *s) {
  int saved = e->cont_label;
  e->cont_label = 0;
  sub_stmt(e, s);
  e->cont_label = saved;
}

/* x op= v as x = x op v, with the target's address taken once. */
static void compound_assign(Emitter *e, const Node *n) {
  const Type *t = n->lhs->ty;
  int op = tok_compound_op(n->op);
  bool first = effects(e, n->rhs); /* then the target's value is read before the value */
  const char *cur = first ? "kn_v" : "*kn_p";
  bool fp = emit_fp_open(e, n->lhs);
  if (!fp) {
    OUT(e, "{ %s *kn_p = &", emit_ctype(e, t));
    target(e, n->lhs);
    OUT(e, ";");
  }
  if (first) OUT(e, " %s kn_v = *kn_p;", emit_ctype(e, t));
  OUT(e, " *kn_p = ");
  if (n->call_kind == CALL_BUILTIN) {
    OUT(e, "%s(%s, ", builtin_get(n->builtin)->cname, cur);
    expr(e, n->rhs);
    OUT(e, ")");
  } else
    scalar_binop_text(e, op, t, NULL, n->rhs, cur);
  OUT(e, ";");
  if (fp)
    emit_fp_close(e, n->lhs);
  else
    OUT(e, " }\n");
}

/* A target that names a variable, or a field or component of one: it has no
 * index to evaluate. */
static bool plain_target(const Node *n) {
  while (n->kind == ND_MEMBER) n = n->lhs;
  return n->kind == ND_IDENT;
}

static void assign(Emitter *e, const Node *n) {
  emit_indent(e);
  if (n->op != TK_ASSIGN) {
    compound_assign(e, n);
    return;
  }
  if (emit_fp_open(e, n->lhs)) {
    OUT(e, " *kn_p = ");
    expr(e, n->rhs);
    OUT(e, ";");
    emit_fp_close(e, n->lhs);
    return;
  }
  bool first =
      !plain_target(n->lhs) && (effects(e, n->rhs) || effects(e, n->lhs)); /* the target first */
  if (first) OUT(e, "{ %s *kn_p = &", stored_bool(n->lhs) ? "uint8_t" : emit_ctype(e, n->lhs->ty));
  target(e, n->lhs);
  OUT(e, first ? "; *kn_p = " : " = ");
  expr(e, n->rhs);
  OUT(e, first ? "; }\n" : ";\n");
}

static void incdec(Emitter *e, const Node *n) {
  const Type *t = n->lhs->ty;
  emit_indent(e);
  bool fp = emit_fp_open(e, n->lhs);
  if (!fp) {
    OUT(e, "{ %s *kn_p = &", emit_ctype(e, t));
    target(e, n->lhs);
  }
  Node one = {.kind = type_is_float(t) ? ND_FLOAT : ND_INT,
              .ty = (Type *)t,
              .ival = 1,
              .fval = 1.0,
              .is_const = true};
  OUT(e, fp ? " *kn_p = " : "; *kn_p = ");
  scalar_binop_text(e, n->op == TK_INC ? TK_PLUS : TK_MINUS, t, NULL, &one, "*kn_p");
  if (fp) {
    OUT(e, ";");
    emit_fp_close(e, n->lhs);
  } else
    OUT(e, "; }\n");
}

/* The zero of t: a local array's elements the initializer leaves out. */
static void zero_value(Emitter *e, const Type *t) {
  if (t->kind == TY_STRUCT)
    OUT(e, "kz_%s()", t->sdecl->name);
  else if (t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT)
    OUT(e, "kn_zero_%s()", builtin_type_code(t));
  else
    emit_number(e, t, 0);
}

/* T v[count]; then the initializer's elements in order, one statement each
 * (C leaves the order of an initializer list's evaluations open), and zeros. */
static void local_array(Emitter *e, const Node *n) {
  const Var *v = n->var;
  int64_t count = type_fixed_count(v->ty), k = 0;
  emit_indent(e);
  OUT(e, "%s ", emit_ctype(e, v->ty->elem));
  emit_var_name(e, v);
  OUT(e, "[%lld];\n", (long long)count);
  for (const Node *a = v->init ? v->init->args : NULL; a; a = a->next, k++) {
    emit_indent(e);
    emit_var_name(e, v);
    OUT(e, "[%lld] = ", (long long)k);
    expr(e, a);
    OUT(e, ";\n");
  }
  if (k == count) return;
  emit_indent(e);
  OUT(e, "for (int64_t kn_k = %lld; kn_k < %lld; kn_k++) ", (long long)k, (long long)count);
  emit_var_name(e, v);
  OUT(e, "[kn_k] = ");
  zero_value(e, v->ty->elem);
  OUT(e, ";\n");
}

static void vardecl(Emitter *e, const Node *n) {
  if (n->var->ty->kind == TY_FIXED) {
    local_array(e, n);
    return;
  }
  emit_indent(e);
  OUT(e, "%s ", emit_ctype(e, n->var->ty));
  emit_var_name(e, n->var);
  OUT(e, " = ");
  expr(e, n->var->init);
  OUT(e, ";\n");
}

/* The body of one branch of an else-if chain, leaving the chain at its end. */
static void branch_body(Emitter *e, const Node *s, int label) {
  OUT(e, " {\n");
  e->depth++;
  if (s->kind == ND_BLOCK)
    for (const Node *k = s->body; k; k = k->next) stmt(e, k);
  else
    stmt(e, s);
  if (label) {
    emit_indent(e);
    OUT(e, "goto kn_fi_%d;\n", label);
  }
  e->depth--;
  emit_indent(e);
  OUT(e, "}\n");
}

/* if (a) A else if (b) B ... else Z, without nesting (C front ends parse an
 * else-if chain by recursion, so flat C does not depend on how deep the C
 * compiler or NVRTC can go):
 *   if (a) { A goto kn_fi_N; }  if (b) { B goto kn_fi_N; }  ...  { Z }  kn_fi_N:;
 * The conditions' temporaries are declared before the first if (see stmt), so
 * no goto jumps over a declaration (C++ forbids that). */
static void if_chain(Emitter *e, const Node *n) {
  int label = ++e->nlabels;
  for (bool first = true;; n = n->els, first = false) {
    if (!first) emit_line_directive(e, n->loc);
    emit_indent(e);
    OUT(e, "if (");
    expr(e, n->cond);
    OUT(e, ")");
    branch_body(e, n->then, label);
    if (!n->els || n->els->kind != ND_IF) break;
  }
  if (n->els) {
    emit_indent(e);
    branch_body(e, n->els, 0);
  }
  emit_indent(e);
  OUT(e, "kn_fi_%d:;\n", label);
}

static void if_stmt(Emitter *e, const Node *n) {
  if (n->els && n->els->kind == ND_IF) {
    if_chain(e, n);
    return;
  }
  emit_indent(e);
  OUT(e, "if (");
  expr(e, n->cond);
  OUT(e, ")");
  sub_stmt(e, n->then);
  if (n->els) {
    OUT(e, " else");
    sub_stmt(e, n->els);
  }
  OUT(e, "\n");
}

/* Does n (and everything below it) write variable v or take its address? */
static bool writes_var(const Node *n, const Var *v) {
  for (; n; n = n->next) {
    const Node *t =
        n->kind == ND_ASSIGN || n->kind == ND_INCDEC || n->kind == ND_ADDR ? n->lhs : NULL;
    while (t && (t->kind == ND_MEMBER || t->kind == ND_INDEX)) t = t->lhs;
    if (t && t->kind == ND_IDENT && t->var == v) return true;
    const Node *kids[] = {
        n->lhs,  n->rhs, n->cond, n->then, n->els,
        n->init, n->inc, n->body, n->args, n->kind == ND_VARDECL && n->var ? n->var->init : NULL};
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
      if (kids[i] && writes_var(kids[i], v)) return true;
  }
  return false;
}

/* The counter of `for (...; v < e; v++)` where v is a signed 32- or 64-bit
 * variable that only the increment writes, or NULL. The increment runs only
 * after v < e held with v unchanged, so v + 1 <= e cannot overflow: it is
 * written as C's signed +, which the GPU compiler (no -fwrapv there) may
 * assume does not wrap, and so widen v and step addresses instead of
 * recomputing them from a wrapping counter. The result is the same. */
static const Var *counted_loop(const Node *n) {
  const Node *c = n->cond, *inc = n->inc;
  if (!c || !inc || c->kind != ND_BINARY || c->op != TK_LT || c->lhs->kind != ND_IDENT) return NULL;
  const Var *v = c->lhs->var;
  if (!v || (v->ty->kind != TY_I32 && v->ty->kind != TY_I64) || !type_equal(c->rhs->ty, v->ty))
    return NULL;
  if (inc->kind != ND_INCDEC || inc->op != TK_INC || inc->lhs->kind != ND_IDENT ||
      inc->lhs->var != v)
    return NULL;
  return writes_var(n->body, v) || writes_var(c->rhs, v) ? NULL : v;
}

/* for (init; cond; inc) body becomes
 *   { init; for (;;) { if (!cond) break; { body } kn_cont_N:; inc } }
 * because inc is a statement; `continue` in body jumps to kn_cont_N. */
static void for_stmt(Emitter *e, const Node *n) {
  int saved = e->cont_label, label = ++e->nlabels;
  emit_indent(e);
  OUT(e, "{\n");
  e->depth++;
  if (n->init) stmt(e, n->init);
  emit_indent(e);
  OUT(e, "for (;;) {\n");
  e->depth++;
  if (n->cond) {
    emit_indent(e);
    OUT(e, "if (!(");
    expr(e, n->cond);
    OUT(e, ")) break;\n");
  }
  e->cont_label = label;
  emit_indent(e);
  sub_stmt(e, n->body);
  e->cont_label = saved;
  OUT(e, "\n");
  emit_indent(e);
  OUT(e, "kn_cont_%d:;\n", label);
  const Var *counter = counted_loop(n);
  if (counter) {
    emit_indent(e);
    emit_var_name(e, counter);
    OUT(e, " = ");
    emit_var_name(e, counter);
    OUT(e, " + 1;\n");
  } else if (n->inc)
    stmt(e, n->inc);
  e->depth--;
  emit_indent(e);
  OUT(e, "}\n");
  e->depth--;
  emit_indent(e);
  OUT(e, "}\n");
}

static void stmt_text(Emitter *e, const Node *n) {
  switch (n->kind) {
    case ND_VARDECL: vardecl(e, n); break;
    case ND_ASSIGN: assign(e, n); break;
    case ND_INCDEC: incdec(e, n); break;
    case ND_EXPR_STMT:
      emit_indent(e);
      if (emit_fp_atomic_stmt(e, n->lhs) || emit_fp_call_stmt(e, n->lhs)) break;
      expr(e, n->lhs);
      OUT(e, ";\n");
      break;
    case ND_BLOCK:
      emit_indent(e);
      OUT(e, "{\n");
      emit_block_body(e, n->body);
      emit_indent(e);
      OUT(e, "}\n");
      break;
    case ND_IF: if_stmt(e, n); break;
    case ND_FOR: for_stmt(e, n); break;
    case ND_WHILE:
      emit_indent(e);
      OUT(e, "while (");
      expr(e, n->cond);
      OUT(e, ")");
      loop_body(e, n->body);
      OUT(e, "\n");
      break;
    case ND_DO:
      emit_indent(e);
      OUT(e, "do");
      loop_body(e, n->body);
      OUT(e, " while (");
      expr(e, n->cond);
      OUT(e, ");\n");
      break;
    case ND_BREAK:
      emit_indent(e);
      OUT(e, "break;\n");
      break;
    case ND_CONTINUE:
      emit_indent(e);
      if (e->cont_label)
        OUT(e, "goto kn_cont_%d;\n", e->cont_label);
      else
        OUT(e, "continue;\n");
      break;
    case ND_RETURN:
      emit_indent(e);
      if (n->lhs) {
        OUT(e, "return ");
        expr(e, n->lhs);
        OUT(e, ";\n");
      } else
        OUT(e, "return;\n");
      break;
    default: break;
  }
}

void emit_statement(Emitter *e, const Node *n) { stmt_text(e, n); }

/* A statement, preceded by the declarations of the temporaries its
 * expressions need (see ordered). */
static void stmt(Emitter *e, const Node *n) {
  Buf outer = e->temps;
  size_t at = e->out.len;
  e->temps = (Buf){0};
  for (int i = 0; i < e->depth; i++) buf_puts(&e->temps, "  ");
  size_t indent_len = e->temps.len;
  if (n->kind != ND_BLOCK && n->kind != ND_EMPTY) emit_line_directive(e, n->loc);
  if (!e->fn || !e->fn->tiled || !emit_tile_stmt(e, n)) stmt_text(e, n);
  if (e->temps.len > indent_len) {
    buf_puts(&e->temps, "\n");
    buf_insert(&e->out, at, e->temps.s);
  }
  e->out.oom |= e->temps.oom;
  free(e->temps.s);
  e->temps = outer;
}
