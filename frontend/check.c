/* check.c: names, types, constants and overloads for a whole Program: the
 * driver, and the helpers every part of the checker uses.
 *
 * Requires: every module parsed (parser.c) and imports linked (front.c); the
 * builtin table (builtins.c) and the type singletons (types.c). Produces the
 * typed tree that ast.h describes, and the Program's decl tables. Breaks: the
 * tree is rewritten in place (folded constants, inserted ND_CONV nodes, calls
 * turned into casts), so anything that kept a pointer to an expression node
 * sees the rewritten node, never a dangling one. The parts live beside it
 * (check_internal.h lists them): declarations, statements, expressions,
 * conversions and overloads, special forms, constant folding, the map,
 * suggestions, and the records later stages read.
 *
 * Choices the spec leaves open (what codegen can rely on):
 *  - Every top-level name of every module lives in one namespace. Functions
 *    overload by parameter types; user functions may also overload builtins
 *    (but not repeat a builtin's exact signature); the special forms (tid,
 *    len, printf, atomics, rand ...) cannot be redefined. Local variables
 *    never hide functions: calls look only at functions.
 *  - Overload resolution sums a cost per argument and takes the single
 *    cheapest candidate: exact 0; untyped int -> int32 1, other ints 2,
 *    float32 3, float64 4, float16 5, bfloat16 6; untyped float -> float32 1,
 *    float64 2, float16 3, bfloat16 4, an integer type 5 (integral values
 *    only); widening 2 + log2 of
 *    the size ratio. A tie is "ambiguous". With one candidate of the right
 *    arity, its argument conversions report what is wrong.
 *  - A const array parameter cannot be passed to a non-const one.
 *  - Constants fold exactly like Go's: untyped integers are exact 128-bit
 *    values (anything beyond +-(2^64-1) is an error), untyped floats are
 *    doubles; an overflow, a truncation or a division by zero is an error.
 *    Typed constant arithmetic must stay within its type, except that shifts
 *    and bitwise operators wrap as in C. An explicit cast of a constant wraps
 *    integers (C) and truncates floats toward zero (an out-of-range float is
 *    an error). `~0` is -1, so an all-ones uint32 is `~0u`.
 *  - An untyped float constant never becomes an integer operand of an
 *    operator (`i / 2.0` is an error, not an integer division); stored
 *    values, arguments and returns still take an integral one.
 *  - A folded constant becomes an ND_INT / ND_FLOAT / ND_BOOL node of a
 *    concrete type with is_const set. A module const keeps its ND_IDENT
 *    (cdecl, is_const) unless it is folded into a larger constant or converted.
 *  - A call whose callee is a scalar type, `float(i)`, and a call of a vector
 *    type on one vector of the same length, `vec3(iv)`, become ND_CAST nodes
 *    (texpr kept, lhs = the operand): codegen sees one cast form. Every other
 *    builtin-type or struct call is CALL_CTOR with ty the constructed type and
 *    its arguments already converted: a vector or quat takes n scalars or one
 *    scalar (splat); a matrix n*n scalars, n row vectors or one scalar (the
 *    diagonal); a struct every field in order; each of them also nothing
 *    (zero, but a quat is the identity, as Warp's).
 *  - Operators on vectors, matrices and quats keep their ND_BINARY / ND_UNARY
 *    node with call_kind CALL_BUILTIN and builtin = the table entry ("op+",
 *    "neg", ...). A compound assignment on such operands (v += w) marks its
 *    ND_ASSIGN the same way; scalar operators keep CALL_UNRESOLVED.
 *  - Shifts: the result has the left operand's type; an untyped right operand
 *    becomes int32. The comparison of bools (== !=) is allowed; & | ^ are not.
 *  - printf arguments are converted to what C's printf reads: int32 for %d and
 *    %i, uint32 for %u %x %X (from any 32-bit-or-smaller integer), int64 /
 *    uint64 with an `l`, float64 for %f %e %g (float16, bfloat16 and float32 too).
 *  - rand_init takes any integers (converted to uint32); a random state is a
 *    non-const uint32 local or parameter. Atomics take &a[i...] of an array
 *    parameter; the ND_ADDR node has type TY_PTR to the element.
 *  - len(a) and shape(a, d) are int32 (as in the spec's examples), size(a) is
 *    int64. tid and dim are only allowed inside kernels.
 *  - Shadowing a variable of an enclosing block is allowed (as in C); a
 *    parameter and a variable of the function's outermost block share a scope.
 *  - Return analysis is conservative: a non-void function must end in a
 *    return, an if/else whose branches both return, or a loop whose condition
 *    is the constant true and which has no break.
 *  - Generic functions are checked only as instances, one per list of types
 *    a call needs, each a copy of the generic tree (check_generic.c): an
 *    instance is one more overload candidate, and loses a tie to a plain
 *    function. `static if` and `static for` leave plain blocks behind, and
 *    the type queries their constants.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- memory -------------------------------------------------------------- */

void *ck_alloc(Check *c, size_t size) {
  void *p = arena_alloc(c->arena, size ? size : 1);
  if (!p) longjmp(c->oom, 1);
  return p;
}

void *ck_grow(Check *c, void *old, int n, int *cap, size_t elem) {
  if (n < *cap) return old;
  int ncap = *cap ? *cap * 2 : 8;
  void *p = ck_alloc(c, (size_t)ncap * elem);
  if (old) memcpy(p, old, (size_t)n * elem);
  *cap = ncap;
  return p;
}

/* ---- small helpers -------------------------------------------------------- */

/* The "op+" ... names the builtin table uses for operators. */
const char *ck_op_builtin_name(int op) {
  switch (op) {
    case TK_PLUS: return "op+";
    case TK_MINUS: return "op-";
    case TK_STAR: return "op*";
    case TK_SLASH: return "op/";
    case TK_PERCENT: return "op%";
    case TK_EQEQ: return "op==";
    case TK_NE: return "op!=";
    default: return NULL;
  }
}

const char *ck_ctx_text(Check *c, Ctx x) {
  if (x.arg > 0 && x.name) return arena_printf(c->arena, "%s %d of '%s'", x.what, x.arg, x.name);
  if (x.name) return arena_printf(c->arena, "%s '%s'", x.what, x.name);
  return x.what;
}

/* "f(int32, float32)" */
const char *ck_sig_text(Check *c, const char *name, Type *const *types, int n) {
  size_t len = strlen(name) + 3;
  for (int i = 0; i < n; i++) len += strlen(ck_tname(types[i])) + 2;
  char *s = ck_alloc(c, len);
  char *p = s + sprintf(s, "%s(", name);
  for (int i = 0; i < n; i++) p += sprintf(p, "%s%s", i ? ", " : "", ck_tname(types[i]));
  strcpy(p, ")");
  return s;
}

bool ck_nest_enter(Check *c, SrcLoc loc) {
  if (++c->nest <= MAX_NEST) return true;
  if (!c->too_deep)
    diag_error(c->diags, loc, "nested too deeply (the limit is %d levels)", MAX_NEST);
  c->too_deep = true;
  return false;
}

/* ---- scopes ---------------------------------------------------------------- */

void ck_scope_open(Check *c) { c->depth++; }

void ck_scope_close(Check *c) {
  while (c->nundo && c->undo[c->nundo - 1]->depth == c->depth) {
    Bind *b = c->undo[--c->nundo];
    ck_map_put(c, &c->locals, b->var->name, b->shadowed);
  }
  c->depth--;
}

void ck_declare(Check *c, Var *v) {
  if (!v->name) return;
  Bind *old = ck_map_get(&c->locals, v->name);
  if (old && old->depth == c->depth) {
    diag_error(c->diags, v->loc, "redeclaration of '%s'", v->name);
    diag_note(c->diags, old->var->loc, "'%s' was declared here", v->name);
    return;
  }
  Bind *b = ck_alloc(c, sizeof *b);
  b->var = v;
  b->depth = c->depth;
  b->shadowed = old;
  ck_map_put(c, &c->locals, v->name, b);
  c->undo = ck_grow(c, c->undo, c->nundo, &c->capundo, sizeof *c->undo);
  c->undo[c->nundo++] = b;
}

Sym *ck_global(Check *c, const char *name) { return name ? ck_map_get(&c->globals, name) : NULL; }

/* ---- types as written ------------------------------------------------------ */

Type *ck_vecn_of(const TypeExpr *te, const Type *elem) {
  if (te->vecn_kind == 'q') return type_quatn(elem);
  if (!type_is_numeric(elem)) return NULL;
  return te->vecn_kind == 'm' ? type_matn(elem, te->vecn_rows, te->vecn_cols)
                              : type_vecn(elem, te->vecn_rows);
}

/* A vec<T, N>, mat<T, M, N> or quat<T> whose element is a name no instance
 * turned into a vector's element: why, reported. */
static Type *unbound_vecn(Check *c, TypeExpr *te) {
  const char *what = te->vecn_kind == 'q'   ? "quat<T>"
                     : te->vecn_kind == 'm' ? "mat<T, M, N>"
                                            : "vec<T, N>";
  const char *holds = te->vecn_kind == 'q' ? "float16, bfloat16, float32 or float64" : "numbers";
  if (te->vecn_bound) {
    diag_error(c->diags, te->loc, "a %s holds %s, and '%s' is %s here", what, holds, te->vecn_elem,
               ck_tname(te->vecn_bound));
    return &ty_error;
  }
  Sym *s = ck_global(c, te->vecn_elem);
  if (s && s->decl->kind == DECL_STRUCT)
    diag_error(c->diags, te->loc, "a %s holds %s, not %s", what, holds, te->vecn_elem);
  else
    diag_error(c->diags, te->loc,
               "unknown element type '%s' of %s (a type name, or a type variable of the generic "
               "function)",
               te->vecn_elem, what);
  return &ty_error;
}

/* Resolves a TypeExpr; `what` names the place for "cannot be an array" errors
 * (NULL where arrays are allowed). auto resolves to NULL: the caller decides. */
Type *ck_resolve_type(Check *c, TypeExpr *te, const char *what) {
  if (!te) return &ty_error;
  if (te->is_auto) return NULL;
  if (te->tile_rank) return ck_tile_type(c, te, what);
  Type *t = te->builtin;
  if (!t && te->vecn_elem) t = unbound_vecn(c, te);
  if (!t) {
    Sym *s = ck_global(c, te->name);
    if (!s) {
      diag_error(c->diags, te->loc, "unknown type '%s'", te->name ? te->name : "?");
      return &ty_error;
    }
    if (s->decl->kind == DECL_ENUM) {
      t = &ty_i32; /* an enum's values are int32 constants */
    } else if (s->decl->kind != DECL_STRUCT) {
      diag_error(c->diags, te->loc, "'%s' is not a type", te->name);
      diag_note(c->diags, s->decl->name_loc, "'%s' is declared here", te->name);
      return &ty_error;
    } else {
      t = s->decl->sty;
    }
  }
  if (te->ndim == 0) return t;
  if (what) {
    diag_error(c->diags, te->loc, "%s cannot be an array (arrays are only parameters)", what);
    if (!strcmp(what, "a local variable"))
      diag_note(c->diags, te->loc, "a local array is declared with its size: '%s name[16]'",
                type_name(t));
    return &ty_error;
  }
  if (t->kind == TY_VOID) {
    diag_error(c->diags, te->loc, "array of void");
    return &ty_error;
  }
  Type *a = type_array(c->arena, t, te->ndim);
  if (!a) longjmp(c->oom, 1);
  return a;
}

Type *ck_ptr_to(Check *c, Type *t) {
  Type *p = type_ptr(c->arena, t);
  if (!p) longjmp(c->oom, 1);
  return p;
}

/* ---- node rewriting -------------------------------------------------------- */

static void node_reset(Node *n, NodeKind kind) {
  Node *next = n->next;
  SrcLoc loc = n->loc;
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->next = next;
  n->loc = loc;
}

/* Turns n into a literal holding v (of v's type, which may still be untyped). */
void ck_set_const(Node *n, Val v) {
  NodeKind k = v.ty->kind == TY_BOOL ? ND_BOOL : ck_is_intlike(v.ty) ? ND_INT : ND_FLOAT;
  node_reset(n, k);
  n->ty = v.ty;
  n->is_const = true;
  n->ival = (uint64_t)(u128)v.i;
  n->fval = v.f;
}

/* Wraps n in an ND_CONV to t (n keeps its place in any list). */
void ck_wrap_conv(Check *c, Node *n, Type *t) {
  Node *inner = ck_alloc(c, sizeof *inner);
  *inner = *n;
  inner->next = NULL;
  node_reset(n, ND_CONV);
  n->lhs = inner;
  n->ty = t;
}

/* ---- the program ------------------------------------------------------------- */

static void run(Check *c, Lists *L) {
  ck_collect(c, L);
  ck_check_structs(c, L);
  for (int i = 0; i < L->nfuncs; i++) ck_signature(c, L->funcs[i]);
  for (int i = 0; i < L->nkernels; i++) ck_signature(c, L->kernels[i]);
  for (int i = 0; i < L->nfuncs; i++) {
    Sym *s = ck_global(c, L->funcs[i]->name);
    if (s->fns[0] == L->funcs[i]) /* once per name, in source order */
      ck_check_overloads(c, s);
  }
  for (int i = 0; i < L->nconsts; i++)
    if (ck_info(c, L->consts[i])->state == 0) ck_eval_const(c, L->consts[i]);
  /* instances join L->funcs as calls choose them: each is checked once */
  int done = 0;
  for (; done < L->nfuncs; done++) ck_check_fn(c, L->funcs[done]);
  for (int i = 0; i < L->nkernels; i++) ck_check_fn(c, L->kernels[i]);
  for (; done < L->nfuncs; done++) ck_check_fn(c, L->funcs[done]);
  ck_find_recursion(c, L->funcs, L->nfuncs);
  ck_mark_used(c, L->kernels, L->nkernels, L->nfuncs);
}

bool check_program(Program *prog) {
  Check *c = arena_alloc(prog->arena, sizeof *c);
  Lists *L = arena_alloc(prog->arena, sizeof *L);
  SrcLoc none = {0};
  if (!c || !L) {
    diag_error(prog->diags, none, "out of memory while type-checking");
    return false;
  }
  c->prog = prog;
  c->arena = prog->arena;
  c->diags = prog->diags;
  c->globals.by_ptr = false;
  c->infos.by_ptr = true;
  c->statics.by_ptr = true;
  c->lists = L;
  c->unroll_at = -1;
  int before = diag_errors(prog->diags);
  if (setjmp(c->oom)) {
    diag_error(prog->diags, none, "out of memory while type-checking");
    return false;
  }
  run(c, L);
  prog->structs = L->structs;
  prog->nstructs = L->nstructs;
  prog->consts = L->consts;
  prog->nconsts = L->nconsts;
  prog->funcs = L->funcs;
  prog->nfuncs = L->nfuncs;
  prog->kernels = L->kernels;
  prog->nkernels = L->nkernels;
  for (int i = 0; i < L->nstructs; i++) L->structs[i]->index = i;
  for (int i = 0; i < L->nfuncs; i++) L->funcs[i]->index = i;
  for (int i = 0; i < L->nkernels; i++) L->kernels[i]->index = i;
  if (diag_errors(prog->diags) == before) ck_tile_program(c, prog);
  bool ok = diag_errors(prog->diags) == before;
  if (ok) ck_record_params(c, prog);
  return ok;
}
