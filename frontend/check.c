/* check.c: names, types, constants and overloads for a whole Program.
 *
 * Requires: every module parsed (parser.c) and imports linked (front.c); the
 * builtin table (builtins.c) and the type singletons (types.c). Produces the
 * typed tree that ast.h describes, and the Program's decl tables. Breaks: the
 * tree is rewritten in place (folded constants, inserted ND_CONV nodes, calls
 * turned into casts), so anything that kept a pointer to an expression node
 * sees the rewritten node, never a dangling one.
 *
 * Choices the spec leaves open (what codegen can rely on):
 *  - Every top-level name of every module lives in one namespace. Functions
 *    overload by parameter types; user functions may also overload builtins
 *    (but not repeat a builtin's exact signature); the special forms (tid,
 *    len, printf, atomics, rand ...) cannot be redefined. Local variables
 *    never hide functions: calls look only at functions.
 *  - Overload resolution sums a cost per argument and takes the single
 *    cheapest candidate: exact 0; untyped int -> int32 1, other ints 2,
 *    float32 3, float64 4, float16 5; untyped float -> float32 1, float64 2,
 *    float16 3, an integer type 5 (integral values only); widening 2 + log2 of
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
 *  - A folded constant becomes an ND_INT / ND_FLOAT / ND_BOOL node of a
 *    concrete type with is_const set. A module const keeps its ND_IDENT
 *    (cdecl, is_const) unless it is folded into a larger constant or converted.
 *  - A call whose callee is a scalar type, `float(i)`, and a call of a vector
 *    type on one vector of the same length, `vec3(iv)`, become ND_CAST nodes
 *    (texpr kept, lhs = the operand): codegen sees one cast form. Every other
 *    builtin-type or struct call is CALL_CTOR with ty the constructed type and
 *    its arguments already converted: a vector or quat takes n scalars or one
 *    scalar (splat); a matrix n*n scalars, n row vectors or one scalar (the
 *    diagonal); a struct every field in order, or nothing (zeroed).
 *  - Operators on vectors, matrices and quats keep their ND_BINARY / ND_UNARY
 *    node with call_kind CALL_BUILTIN and builtin = the table entry ("op+",
 *    "neg", ...). A compound assignment on such operands (v += w) marks its
 *    ND_ASSIGN the same way; scalar operators keep CALL_UNRESOLVED.
 *  - Shifts: the result has the left operand's type; an untyped right operand
 *    becomes int32. The comparison of bools (== !=) is allowed; & | ^ are not.
 *  - printf arguments are converted to what C's printf reads: int32 for %d and
 *    %i, uint32 for %u %x %X (from any 32-bit-or-smaller integer), int64 /
 *    uint64 with an `l`, float64 for %f %e %g (float16 and float32 too).
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
 */
#include "ast.h"
#include "builtins.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* Deeper expressions or statements than this are refused rather than risking
 * the C stack (the parser limits parentheses and stops operator chains there
 * too; an else-if chain is walked in a loop, not nested). */
enum { MAX_NEST = AST_MAX_DEPTH, MAX_CAND_NOTES = 8, MAX_CYCLE_NAMES = 10, MAX_FMT_FIELD = 1000 };

/* ---- values ------------------------------------------------------------- */

/* What checking an expression yields. Untyped constants carry their exact
 * value here until a context gives them a type; i holds integers and bools. */
typedef struct Val {
  Type *ty;
  bool is_const;
  i128 i;
  double f;
} Val;

/* ---- maps ---------------------------------------------------------------- */

typedef struct Slot {
  const void *key;
  void *val;
} Slot;

/* Open addressing; keys are strings or pointers (by_ptr), never removed. */
typedef struct Map {
  Slot *slots;
  size_t cap, n;
  bool by_ptr;
} Map;

typedef struct Sym {
  Decl *decl; /* the first declaration of the name */
  Decl **fns; /* DECL_FUNC overloads, in declaration order */
  int nfns, cap;
} Sym;

/* A local name binding; `shadowed` is restored when its scope closes. */
typedef struct Bind {
  Var *var;
  int depth;
  struct Bind *shadowed;
} Bind;

typedef struct Edge {
  Decl *callee;
  SrcLoc loc;
} Edge;

/* Per-declaration state the checker keeps beside the tree. */
typedef struct Info {
  int state;   /* 0 new, 1 in progress, 2 done (consts, structs, DFS) */
  Val cval;    /* DECL_CONST: the folded value */
  Edge *edges; /* functions: calls to user functions */
  int nedges, cap;
  int stackpos;
} Info;

typedef struct Check {
  Program *prog;
  Arena *arena;
  Diags *diags;
  jmp_buf oom;
  Map globals; /* name -> Sym */
  Map locals;  /* name -> Bind (innermost) */
  Map infos;   /* Decl -> Info */
  Bind **undo; /* bindings of open scopes, innermost last */
  int nundo, capundo;
  int depth; /* scope depth */
  Decl *fn;  /* function or kernel being checked; NULL in a const */
  Info *fninfo;
  int loops;
  int nvars; /* Var ids handed out in the current function */
  int nest;
  bool too_deep;
} Check;

typedef struct Cand {
  Decl *fn; /* user function, or NULL for a builtin */
  int builtin;
  int nparams;
  Type *const *params;
  Type *ret;
} Cand;

/* Where a conversion happens, for messages: "argument 2 of 'f'". */
typedef struct Ctx {
  const char *what; /* "initialization", "argument", "field", ... */
  const char *name;
  int arg;
} Ctx;

static Val expr(Check *, Node *);
static void stmt(Check *, Node *);

/* ---- memory -------------------------------------------------------------- */

static void *alloc(Check *c, size_t size) {
  void *p = arena_alloc(c->arena, size ? size : 1);
  if (!p) longjmp(c->oom, 1);
  return p;
}

static void *grow(Check *c, void *old, int n, int *cap, size_t elem) {
  if (n < *cap) return old;
  int ncap = *cap ? *cap * 2 : 8;
  void *p = alloc(c, (size_t)ncap * elem);
  if (old) memcpy(p, old, (size_t)n * elem);
  *cap = ncap;
  return p;
}

static size_t hash_key(const Map *m, const void *key) {
  if (m->by_ptr) return (size_t)(((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull);
  size_t h = 14695981039346656037ull;
  for (const unsigned char *s = key; *s; s++) h = (h ^ *s) * 1099511628211ull;
  return h;
}

static bool key_eq(const Map *m, const void *a, const void *b) {
  return m->by_ptr ? a == b : strcmp(a, b) == 0;
}

static Slot *map_slot(const Map *m, const void *key) {
  size_t i = hash_key(m, key) & (m->cap - 1);
  while (m->slots[i].key && !key_eq(m, m->slots[i].key, key)) i = (i + 1) & (m->cap - 1);
  return &m->slots[i];
}

static void *map_get(const Map *m, const void *key) {
  return m->cap ? map_slot(m, key)->val : NULL;
}

static void map_put(Check *c, Map *m, const void *key, void *val) {
  if (2 * (m->n + 1) > m->cap) {
    Map big = {.cap = m->cap ? m->cap * 2 : 64, .by_ptr = m->by_ptr};
    big.slots = alloc(c, big.cap * sizeof(Slot));
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].key) *map_slot(&big, m->slots[i].key) = m->slots[i];
    big.n = m->n;
    *m = big;
  }
  Slot *s = map_slot(m, key);
  if (!s->key) m->n++;
  s->key = key;
  s->val = val;
}

static Info *info(Check *c, Decl *d) {
  Info *in = map_get(&c->infos, d);
  if (!in) {
    in = alloc(c, sizeof *in);
    map_put(c, &c->infos, d, in);
  }
  return in;
}

/* ---- small helpers -------------------------------------------------------- */

static bool is_err(const Type *t) { return !t || t->kind == TY_ERROR; }

static bool is_untyped(const Type *t) {
  return t && (t->kind == TY_UNTYPED_INT || t->kind == TY_UNTYPED_FLOAT);
}

/* Vectors, matrices and quats: their operators live in the builtin table. */
static bool is_vmq(const Type *t) {
  return t && (t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT);
}

static bool is_intlike(const Type *t) { return type_is_int(t) || (t && t->kind == TY_UNTYPED_INT); }

static bool is_numlike(const Type *t) { return type_is_numeric(t) || is_untyped(t); }

static Val val_err(void) { return (Val){.ty = &ty_error}; }

static Val val_of(Type *t) { return (Val){.ty = t}; }

static const char *tname(const Type *t) { return type_name(t); }

static const char *op_text(int op) {
  switch (op) {
    case TK_PLUS: return "+";
    case TK_PLUSEQ: return "+=";
    case TK_MINUS: return "-";
    case TK_MINUSEQ: return "-=";
    case TK_STAR: return "*";
    case TK_STAREQ: return "*=";
    case TK_SLASH: return "/";
    case TK_SLASHEQ: return "/=";
    case TK_PERCENT: return "%";
    case TK_PERCENTEQ: return "%=";
    case TK_AMP: return "&";
    case TK_AMPEQ: return "&=";
    case TK_PIPE: return "|";
    case TK_PIPEEQ: return "|=";
    case TK_CARET: return "^";
    case TK_CARETEQ: return "^=";
    case TK_SHL: return "<<";
    case TK_SHLEQ: return "<<=";
    case TK_SHR: return ">>";
    case TK_SHREQ: return ">>=";
    case TK_LT: return "<";
    case TK_GT: return ">";
    case TK_LE: return "<=";
    case TK_GE: return ">=";
    case TK_EQEQ: return "==";
    case TK_NE: return "!=";
    case TK_ANDAND: return "&&";
    case TK_OROR: return "||";
    case TK_BANG: return "!";
    case TK_TILDE: return "~";
    default: return "?";
  }
}

/* The binary operator a compound assignment applies (TK_PLUSEQ -> TK_PLUS). */
static int compound_op(int op) {
  switch (op) {
    case TK_PLUSEQ: return TK_PLUS;
    case TK_MINUSEQ: return TK_MINUS;
    case TK_STAREQ: return TK_STAR;
    case TK_SLASHEQ: return TK_SLASH;
    case TK_PERCENTEQ: return TK_PERCENT;
    case TK_AMPEQ: return TK_AMP;
    case TK_PIPEEQ: return TK_PIPE;
    case TK_CARETEQ: return TK_CARET;
    case TK_SHLEQ: return TK_SHL;
    case TK_SHREQ: return TK_SHR;
    default: return 0;
  }
}

static bool is_compare(int op) {
  return op == TK_LT || op == TK_GT || op == TK_LE || op == TK_GE || op == TK_EQEQ || op == TK_NE;
}

static bool is_shift(int op) { return op == TK_SHL || op == TK_SHR; }

static bool is_bitwise(int op) { return op == TK_AMP || op == TK_PIPE || op == TK_CARET; }

/* The "op+" ... names the builtin table uses for operators. */
static const char *op_builtin_name(int op) {
  switch (op) {
    case TK_PLUS: return "op+";
    case TK_MINUS: return "op-";
    case TK_STAR: return "op*";
    case TK_SLASH: return "op/";
    case TK_EQEQ: return "op==";
    case TK_NE: return "op!=";
    default: return NULL;
  }
}

static void fmt_i128(char *buf, size_t cap, i128 v) {
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
static const char *val_text(Check *c, const Val *v) {
  char buf[64];
  if (v->ty->kind == TY_BOOL) return v->i ? "true" : "false";
  if (is_intlike(v->ty)) {
    fmt_i128(buf, sizeof buf, v->i);
    return arena_strdup(c->arena, buf);
  }
  return arena_printf(c->arena, "%g", v->f);
}

static const char *ctx_text(Check *c, Ctx x) {
  if (x.arg > 0 && x.name) return arena_printf(c->arena, "%s %d of '%s'", x.what, x.arg, x.name);
  if (x.name) return arena_printf(c->arena, "%s '%s'", x.what, x.name);
  return x.what;
}

/* "f(int32, float32)" */
static const char *sig_text(Check *c, const char *name, Type *const *types, int n) {
  size_t len = strlen(name) + 3;
  for (int i = 0; i < n; i++) len += strlen(tname(types[i])) + 2;
  char *s = alloc(c, len);
  char *p = s + sprintf(s, "%s(", name);
  for (int i = 0; i < n; i++) p += sprintf(p, "%s%s", i ? ", " : "", tname(types[i]));
  strcpy(p, ")");
  return s;
}

static bool nest_enter(Check *c, SrcLoc loc) {
  if (++c->nest <= MAX_NEST) return true;
  if (!c->too_deep)
    diag_error(c->diags, loc, "nested too deeply (the limit is %d levels)", MAX_NEST);
  c->too_deep = true;
  return false;
}

/* ---- did you mean --------------------------------------------------------- */

static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 40 || lb > 40) return 99;
  int row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

typedef struct Suggest {
  const char *name;
  const char *best;
  int dist;
} Suggest;

static void suggest_try(Suggest *s, const char *cand) {
  if (!cand || strcmp(cand, s->name) == 0) return;
  int d = edit_distance(s->name, cand);
  int limit = ((int)strlen(s->name) + 2) / 4; /* 1 for 2..5 bytes, 2 for 6..9 ... */
  if (d <= limit && d < s->dist) {
    s->dist = d;
    s->best = cand;
  }
}

/* values: locals in scope and consts; functions: user and builtin functions */
static const char *suggest(Check *c, const char *name, bool functions) {
  Suggest s = {.name = name, .dist = 99};
  if (diag_errors(c->diags) > 50) return NULL;
  if (!functions)
    for (int i = 0; i < c->nundo; i++) suggest_try(&s, c->undo[i]->var->name);
  for (size_t i = 0; i < c->globals.cap; i++) {
    Sym *sym = c->globals.slots[i].val;
    if (!sym) continue;
    DeclKind k = sym->decl->kind;
    if (functions ? k == DECL_FUNC || k == DECL_STRUCT : k == DECL_CONST)
      suggest_try(&s, sym->decl->name);
  }
  if (functions)
    for (int i = 0; i < builtin_count(); i++)
      if (strncmp(builtin_get(i)->name, "op", 2) != 0) suggest_try(&s, builtin_get(i)->name);
  return s.best;
}

/* ---- scopes ---------------------------------------------------------------- */

static void scope_open(Check *c) { c->depth++; }

static void scope_close(Check *c) {
  while (c->nundo && c->undo[c->nundo - 1]->depth == c->depth) {
    Bind *b = c->undo[--c->nundo];
    map_put(c, &c->locals, b->var->name, b->shadowed);
  }
  c->depth--;
}

static void declare(Check *c, Var *v) {
  if (!v->name) return;
  Bind *old = map_get(&c->locals, v->name);
  if (old && old->depth == c->depth) {
    diag_error(c->diags, v->loc, "redeclaration of '%s'", v->name);
    diag_note(c->diags, old->var->loc, "'%s' was declared here", v->name);
    return;
  }
  Bind *b = alloc(c, sizeof *b);
  b->var = v;
  b->depth = c->depth;
  b->shadowed = old;
  map_put(c, &c->locals, v->name, b);
  c->undo = grow(c, c->undo, c->nundo, &c->capundo, sizeof *c->undo);
  c->undo[c->nundo++] = b;
}

static Sym *global(Check *c, const char *name) { return name ? map_get(&c->globals, name) : NULL; }

/* ---- types as written ------------------------------------------------------ */

/* Resolves a TypeExpr; `what` names the place for "cannot be an array" errors
 * (NULL where arrays are allowed). auto resolves to NULL: the caller decides. */
static Type *resolve_type(Check *c, TypeExpr *te, const char *what) {
  if (!te) return &ty_error;
  if (te->is_auto) return NULL;
  Type *t = te->builtin;
  if (!t) {
    Sym *s = global(c, te->name);
    if (!s) {
      diag_error(c->diags, te->loc, "unknown type '%s'", te->name ? te->name : "?");
      return &ty_error;
    }
    if (s->decl->kind != DECL_STRUCT) {
      diag_error(c->diags, te->loc, "'%s' is not a type", te->name);
      diag_note(c->diags, s->decl->name_loc, "'%s' is declared here", te->name);
      return &ty_error;
    }
    t = s->decl->sty;
  }
  if (te->ndim == 0) return t;
  if (what) {
    diag_error(c->diags, te->loc, "%s cannot be an array (arrays are only parameters)", what);
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

static Type *ptr_to(Check *c, Type *t) {
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
static void set_const(Node *n, Val v) {
  NodeKind k = v.ty->kind == TY_BOOL ? ND_BOOL : is_intlike(v.ty) ? ND_INT : ND_FLOAT;
  node_reset(n, k);
  n->ty = v.ty;
  n->is_const = true;
  n->ival = (uint64_t)(u128)v.i;
  n->fval = v.f;
}

/* Wraps n in an ND_CONV to t (n keeps its place in any list). */
static void wrap_conv(Check *c, Node *n, Type *t) {
  Node *inner = alloc(c, sizeof *inner);
  *inner = *n;
  inner->next = NULL;
  node_reset(n, ND_CONV);
  n->lhs = inner;
  n->ty = t;
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

static bool int_fits(i128 v, const Type *t) { return v >= int_min(t) && v <= int_max(t); }

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
    case TY_F32: return 0x1.ffffffp127;
    default: return INFINITY;
  }
}

/* Rounds to float16 precision, ties to even (11 significant bits). */
static double round_f16(double d) {
  if (d == 0 || !isfinite(d)) return d;
  int e;
  frexp(d, &e);
  double q = ldexp(1.0, e < -13 ? -24 : e - 11);
  return nearbyint(d / q) * q;
}

static double round_float(double d, const Type *t) {
  if (t->kind == TY_F32) return (double)(float)d;
  if (t->kind == TY_F16) return round_f16(d);
  return d;
}

/* Is d an integer we can hold in an i128 without undefined behaviour? */
static bool float_integral(double d) { return isfinite(d) && fabs(d) < 0x1p100 && d == trunc(d); }

static bool report_overflow(Check *c, SrcLoc loc, const Val *v, const Type *t) {
  if (t->kind == TY_UNTYPED_INT)
    diag_error(c->diags, loc, "integer constant %s is too large", val_text(c, v));
  else if (t->kind == TY_UNTYPED_FLOAT)
    diag_error(c->diags, loc, "floating-point constant overflows");
  else
    diag_error(c->diags, loc, "constant %s overflows %s", val_text(c, v), tname(t));
  return false;
}

/* Checks that integer v fits t (an int type or untyped int). */
static bool check_int(Check *c, SrcLoc loc, Val *v, Type *t) {
  if (int_fits(v->i, t)) return true;
  return report_overflow(c, loc, v, t);
}

/* Rounds float v to t and checks for overflow. */
static bool check_float(Check *c, SrcLoc loc, Val *v, Type *t) {
  if (!isfinite(v->f) || fabs(v->f) >= float_limit(t)) return report_overflow(c, loc, v, t);
  v->f = round_float(v->f, t);
  return true;
}

/* The value-preserving conversion of a constant to scalar type t: an untyped
 * constant taking its type, or a typed one widening. Reports and returns false
 * when the value does not fit. */
static bool const_convert(Check *c, SrcLoc loc, Val *v, Type *t) {
  bool from_int = is_intlike(v->ty);
  if (t->kind == TY_BOOL) /* only bool reaches bool: convert() checked the kinds */
    return v->ty->kind == TY_BOOL;
  if (type_is_int(t) || t->kind == TY_UNTYPED_INT) {
    if (!from_int) {
      if (!float_integral(v->f)) {
        if (isfinite(v->f) && fabs(v->f) < 0x1p100)
          diag_error(c->diags, loc, "constant %s truncated to %s", val_text(c, v), tname(t));
        else
          report_overflow(c, loc, v, t);
        return false;
      }
      v->i = (i128)v->f;
    }
    Val shown = *v;
    shown.ty = &ty_untyped_int;
    if (!int_fits(v->i, t)) return report_overflow(c, loc, &shown, t);
    v->ty = t;
    return true;
  }
  if (from_int) v->f = (double)v->i;
  Val shown = *v;
  shown.ty = &ty_untyped_float;
  if (!check_float(c, loc, &shown, t)) return false;
  v->f = shown.f;
  v->ty = t;
  return true;
}

/* An explicit cast of a constant: integers wrap as in C, floats truncate
 * toward zero, bools are 0/1 and anything nonzero is true. */
static bool const_cast(Check *c, SrcLoc loc, Val *v, Type *t) {
  bool from_int = is_intlike(v->ty) || v->ty->kind == TY_BOOL;
  if (t->kind == TY_BOOL) {
    v->i = from_int ? v->i != 0 : v->f != 0;
  } else if (type_is_int(t)) {
    if (!from_int) {
      if (!isfinite(v->f) || fabs(v->f) >= 0x1p100 || !int_fits((i128)v->f, t)) {
        diag_error(c->diags, loc, "constant %g is out of the range of %s", v->f, tname(t));
        return false;
      }
      v->i = (i128)v->f;
    }
    v->i = int_wrap(v->i, t);
  } else {
    if (from_int) v->f = (double)v->i;
    if (!isfinite(v->f) || fabs(v->f) >= float_limit(t)) {
      diag_error(c->diags, loc, "constant %g is out of the range of %s", v->f, tname(t));
      return false;
    }
    v->f = round_float(v->f, t);
  }
  v->ty = t;
  return true;
}

/* The untyped-int-or-untyped-float value of an untyped constant as a float. */
static Val as_untyped_float(Val v) {
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
    fmt_i128(buf, sizeof buf, b);
    diag_error(c->diags, loc, "shift count %s is out of range for %s", buf, tname(t));
    return false;
  }
  if (op == TK_SHR) {
    a->i = shift_right(a->i, (int)b);
    return true;
  }
  if (t->kind == TY_UNTYPED_INT) {
    if (a->i == 0) return true; /* 0 << 127 would need 1 << 127, past i128's range */
    if (__builtin_mul_overflow(a->i, (i128)1 << b, &a->i)) return report_overflow(c, loc, a, t);
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
  a->i = is_bitwise(op) ? int_wrap(r, a->ty) : r;
  if (ovf) {
    diag_error(c->diags, loc, "integer constant overflow in '%s'", op_text(op));
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
  return check_float(c, loc, a, a->ty);
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
static bool fold_binary(Check *c, SrcLoc loc, int op, Val *a, const Val *b) {
  if (is_compare(op)) {
    bool r;
    if (is_intlike(a->ty) || a->ty->kind == TY_BOOL)
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
  if (is_shift(op)) return fold_shift(c, loc, op, a, b->i);
  if (is_intlike(a->ty)) return fold_int(c, loc, op, a, b);
  return fold_float(c, loc, op, a, b);
}

static bool fold_unary(Check *c, SrcLoc loc, int op, Val *a) {
  switch (op) {
    case TK_PLUS: return true;
    case TK_BANG: a->i = !a->i; return true;
    case TK_TILDE: a->i = int_wrap(~a->i, a->ty); return true;
    default: break;
  }
  if (!is_intlike(a->ty)) {
    a->f = -a->f;
    return true;
  }
  a->i = -a->i;
  return check_int(c, loc, a, a->ty);
}

/* ---- implicit conversions ------------------------------------------------- */

static int log2i(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    r++;
  }
  return r;
}

/* Widening within a family: signed, unsigned or float, to a larger size. */
static bool widens(const Type *from, const Type *to) {
  if (!type_is_numeric(from) || !type_is_numeric(to) || to->size <= from->size) return false;
  if (type_is_float(from) || type_is_float(to)) return type_is_float(from) && type_is_float(to);
  return type_is_signed(from) == type_is_signed(to);
}

/* The cost of passing v where t is expected, for overload resolution; -1
 * when it does not convert implicitly. An integer constant prefers int32,
 * then any integer type it fits, then float32; a float constant prefers
 * float32; a widening costs more the further it widens. */
static int conv_cost(const Val *v, Type *t) {
  Type *f = v->ty;
  if (is_err(f) || is_err(t) || type_equal(f, t)) return 0;
  if (f->kind == TY_UNTYPED_INT) {
    if (type_is_int(t)) return int_fits(v->i, t) ? (t->kind == TY_I32 ? 1 : 2) : -1;
    if (type_is_float(t)) return t->kind == TY_F32 ? 3 : t->kind == TY_F64 ? 4 : 5;
    return -1;
  }
  if (f->kind == TY_UNTYPED_FLOAT) {
    if (type_is_float(t)) return t->kind == TY_F32 ? 1 : t->kind == TY_F64 ? 2 : 3;
    if (type_is_int(t)) return float_integral(v->f) && int_fits((i128)v->f, t) ? 5 : -1;
    return -1;
  }
  if (widens(f, t)) return 2 + log2i(t->size / f->size);
  return -1;
}

static void suggest_cast(Check *c, SrcLoc loc, const Type *from, const Type *to) {
  if (type_is_scalar(from) && type_is_scalar(to))
    diag_note(c->diags, loc, "convert explicitly with a cast: %s(...)", tname(to));
  else if (from->kind == TY_VEC && to->kind == TY_VEC && from->n == to->n)
    diag_note(c->diags, loc, "convert explicitly with a cast: %s(...)", tname(to));
}

/* Converts n (whose value is *v) implicitly to t, in place: an untyped
 * constant takes the type (range-checked), a typed constant is refolded, any
 * other widening gets an ND_CONV. Reports and returns false otherwise. */
static bool convert(Check *c, Node *n, Val *v, Type *t, Ctx x) {
  if (is_err(v->ty) || is_err(t) || type_equal(v->ty, t)) return true;
  bool untyped = is_untyped(v->ty);
  if (untyped && type_is_numeric(t)) {
    if (!const_convert(c, n->loc, v, t)) {
      *v = val_err();
      n->ty = &ty_error;
      return false;
    }
    set_const(n, *v);
    return true;
  }
  if (widens(v->ty, t)) {
    if (v->is_const && const_convert(c, n->loc, v, t))
      set_const(n, *v);
    else
      wrap_conv(c, n, t);
    v->ty = t;
    return true;
  }
  if (untyped)
    diag_error(c->diags, n->loc, "cannot use constant %s as %s in %s", val_text(c, v), tname(t),
               ctx_text(c, x));
  else
    diag_error(c->diags, n->loc, "cannot convert %s to %s in %s", tname(v->ty), tname(t),
               ctx_text(c, x));
  suggest_cast(c, n->loc, v->ty, t);
  *v = val_err();
  return false;
}

/* Gives an untyped constant its default type: int32 or float32. */
static void default_type(Check *c, Node *n, Val *v) {
  if (!is_untyped(v->ty)) return;
  Type *t = v->ty->kind == TY_UNTYPED_INT ? &ty_i32 : &ty_f32;
  convert(c, n, v, t, (Ctx){"this expression", NULL, 0});
}

/* expr() then default_type(): for places with no expected type. */
static Val rvalue(Check *c, Node *n) {
  Val v = expr(c, n);
  default_type(c, n, &v);
  return v;
}

static Val expect(Check *c, Node *n, Type *t, Ctx x) {
  Val v = expr(c, n);
  convert(c, n, &v, t, x);
  return v;
}

/* Conditions of if/while/for/?:, and operands of ! && ||. */
static Val expect_bool(Check *c, Node *n, const char *what) {
  Val v = expr(c, n);
  if (is_err(v.ty) || v.ty->kind == TY_BOOL) return v;
  diag_error(c->diags, n->loc, "%s must be bool, not %s", what, tname(v.ty));
  if (is_numlike(v.ty))
    diag_note(c->diags, n->loc, "bool is not an integer: compare explicitly, e.g. 'x != 0'");
  return val_err();
}

/* ---- overload resolution ------------------------------------------------------- */

static Type **param_types(Check *c, Decl *d) {
  Type **ts = alloc(c, (size_t)(d->nparams + 1) * sizeof *ts);
  for (int i = 0; i < d->nparams; i++) ts[i] = d->params[i]->ty ? d->params[i]->ty : &ty_error;
  return ts;
}

/* User overloads of name (declaration order), then builtin ones. */
static int candidates(Check *c, const char *name, Cand **out) {
  Sym *s = global(c, name);
  int nu = s && s->decl->kind == DECL_FUNC ? s->nfns : 0;
  int first = 0, nb = builtin_overloads(name, &first);
  Cand *cs = alloc(c, (size_t)(nu + nb + 1) * sizeof *cs);
  for (int i = 0; i < nu; i++) {
    Decl *d = s->fns[i];
    cs[i] = (Cand){d, -1, d->nparams, param_types(c, d), d->ret ? d->ret : &ty_error};
  }
  for (int j = 0; j < nb; j++) {
    const Builtin *b = builtin_get(first + j);
    cs[nu + j] = (Cand){NULL, first + j, b->nparams, b->params, b->ret};
  }
  *out = cs;
  return nu + nb;
}

static int cand_cost(const Cand *k, const Val *vals, int nargs) {
  if (k->nparams != nargs) return -1;
  int total = 0;
  for (int j = 0; j < nargs; j++) {
    int cost = conv_cost(&vals[j], k->params[j]);
    if (cost < 0) return -1;
    total += cost;
  }
  return total;
}

static void cand_note(Check *c, const char *name, const Cand *k) {
  const char *sig = sig_text(c, name, k->params, k->nparams);
  if (k->fn)
    diag_note(c->diags, k->fn->name_loc, "candidate: %s", sig);
  else
    diag_note(c->diags, (SrcLoc){0}, "candidate: %s (builtin)", sig);
}

static void cand_notes(Check *c, const char *name, const Cand *cs, int nc, int only_cost,
                       const Val *vals, int nargs) {
  int shown = 0, more = 0;
  for (int i = 0; i < nc; i++) {
    if (only_cost >= 0 && cand_cost(&cs[i], vals, nargs) != only_cost) continue;
    if (shown < MAX_CAND_NOTES) {
      cand_note(c, name, &cs[i]);
      shown++;
    } else {
      more++;
    }
  }
  if (more) diag_note(c->diags, (SrcLoc){0}, "and %d more candidate%s", more, more == 1 ? "" : "s");
}

static void report_no_match(Check *c, const char *name, const char *opsym, SrcLoc loc,
                            const Cand *cs, int nc, const Val *vals, int nargs) {
  if (!name) name = "?";
  Type **ts = alloc(c, (size_t)(nargs + 1) * sizeof *ts);
  for (int i = 0; i < nargs; i++) ts[i] = vals[i].ty;
  if (opsym) {
    if (nargs == 2)
      diag_error(c->diags, loc, "invalid operands to '%s': %s and %s", opsym, tname(ts[0]),
                 tname(ts[1]));
    else
      diag_error(c->diags, loc, "invalid operand to unary '%s': %s", opsym, tname(ts[0]));
    return;
  }
  int arity = -1;
  bool one_arity = true, any = false;
  for (int i = 0; i < nc; i++) {
    any |= cs[i].nparams == nargs;
    one_arity &= arity < 0 || cs[i].nparams == arity;
    arity = cs[i].nparams;
  }
  if (nc > 0 && !any && one_arity) {
    diag_error(c->diags, loc, "'%s' expects %d argument%s, got %d", name, arity,
               arity == 1 ? "" : "s", nargs);
    if (nc == 1) cand_note(c, name, &cs[0]);
    return;
  }
  if (!any)
    diag_error(c->diags, loc, "no overload of '%s' takes %d argument%s", name, nargs,
               nargs == 1 ? "" : "s");
  else
    diag_error(c->diags, loc, "no matching overload for call to %s", sig_text(c, name, ts, nargs));
  cand_notes(c, name, cs, nc, -1, vals, nargs);
}

/* Picks the single cheapest viable candidate; reports and returns -1 when
 * there is none or several. Arguments of error type stay silent. */
static int resolve(Check *c, const char *name, const char *opsym, SrcLoc loc, const Cand *cs,
                   int nc, const Val *vals, int nargs) {
  bool any_err = false;
  for (int j = 0; j < nargs; j++) any_err |= is_err(vals[j].ty);
  int best = -1, best_cost = INT_MAX, ties = 0, narity = 0, arity_idx = -1;
  for (int i = 0; i < nc; i++) {
    if (cs[i].nparams == nargs) {
      narity++;
      arity_idx = i;
    }
    int cost = cand_cost(&cs[i], vals, nargs);
    if (cost < 0) continue;
    if (cost < best_cost) {
      best = i;
      best_cost = cost;
      ties = 1;
    } else if (cost == best_cost) {
      ties++;
    }
  }
  if (best >= 0 && ties == 1) return best;
  /* One candidate of the right arity: its argument conversions say best
   * what is wrong ("constant 200 overflows int8"). */
  if ((any_err || best < 0) && narity == 1 && !opsym) return arity_idx;
  if (any_err) return -1;
  if (best >= 0) {
    if (opsym)
      diag_error(c->diags, loc, "ambiguous operands to '%s'", opsym);
    else
      diag_error(c->diags, loc, "ambiguous call to '%s'", name);
    cand_notes(c, name, cs, nc, best_cost, vals, nargs);
    return -1;
  }
  report_no_match(c, name, opsym, loc, cs, nc, vals, nargs);
  return -1;
}

static void record_call(Check *c, Decl *callee, SrcLoc loc) {
  Info *in = c->fninfo;
  if (!in) return;
  in->edges = grow(c, in->edges, in->nedges, &in->cap, sizeof *in->edges);
  in->edges[in->nedges++] = (Edge){callee, loc};
}

/* A const array passed on as a writable parameter would lose its const. */
static void check_const_arg(Check *c, Node *arg, Var *param, const char *fname) {
  Var *v = arg->kind == ND_IDENT ? arg->var : NULL;
  if (v && v->is_const && v->ty && v->ty->kind == TY_ARRAY && !param->is_const) {
    diag_error(c->diags, arg->loc,
               "const array '%s' passed to parameter '%s' of '%s', which is not const", v->name,
               param->name, fname);
    diag_note(c->diags, param->loc, "declare the parameter 'const %s' if '%s' does not write to it",
              tname(param->ty), fname);
  }
}

/* Converts the arguments to the chosen candidate's parameters and marks n. */
static Type *apply_cand(Check *c, Node *n, const char *name, const Cand *k, Node **args,
                        Val *vals) {
  for (int j = 0; j < k->nparams; j++) {
    convert(c, args[j], &vals[j], k->params[j], (Ctx){"argument", name, j + 1});
    if (k->fn) check_const_arg(c, args[j], k->fn->params[j], name);
  }
  if (k->fn) {
    n->call_kind = CALL_FUNC;
    n->fn = k->fn;
    record_call(c, k->fn, n->name_loc.file ? n->name_loc : n->loc);
  } else {
    n->call_kind = CALL_BUILTIN;
    n->builtin = k->builtin;
  }
  return k->ret;
}

/* ---- operators ------------------------------------------------------------------ */

static Type *op_mismatch(Check *c, SrcLoc loc, const char *opname, const Type *a, const Type *b) {
  diag_error(c->diags, loc, "mismatched types %s and %s in '%s'", tname(a), tname(b), opname);
  const Type *to = type_is_float(b) && !type_is_float(a) ? b : a;
  if (type_is_numeric(a) && type_is_numeric(b))
    diag_note(c->diags, loc, "convert one operand explicitly, e.g. %s(...)", tname(to));
  return &ty_error;
}

/* Brings both operands to one type: untyped constants take the other side's
 * type, and the narrower side of a family widens. fixed: a is an assignment
 * target and must not change. Returns the common type, or ty_error. */
static Type *unify(Check *c, SrcLoc loc, const char *opname, Node *ln, Val *a, Node *rn, Val *b,
                   bool fixed) {
  Type *ta = a->ty, *tb = b->ty;
  if (is_untyped(ta) && is_untyped(tb)) {
    if (ta->kind != tb->kind) {
      *a = as_untyped_float(*a);
      *b = as_untyped_float(*b);
    }
    return a->ty;
  }
  if (type_equal(ta, tb)) return ta;
  if (is_untyped(tb) && type_is_numeric(ta))
    return convert(c, rn, b, ta, (Ctx){"this operation", NULL, 0}) ? ta : &ty_error;
  if (is_untyped(ta) && type_is_numeric(tb) && !fixed)
    return convert(c, ln, a, tb, (Ctx){"this operation", NULL, 0}) ? tb : &ty_error;
  if (widens(tb, ta)) {
    convert(c, rn, b, ta, (Ctx){"this operation", NULL, 0});
    return ta;
  }
  if (widens(ta, tb) && !fixed) {
    convert(c, ln, a, tb, (Ctx){"this operation", NULL, 0});
    return tb;
  }
  return op_mismatch(c, loc, opname, ta, tb);
}

/* An operator on vectors, matrices or quats: a call of the table's "op*". */
static Type *op_call(Check *c, Node *n, const char *bname, const char *sym, Node **args, Val *vals,
                     int nargs) {
  Cand *cs;
  int nc = bname ? candidates(c, bname, &cs) : 0;
  if (nc == 0) {
    report_no_match(c, sym, sym, n->loc, NULL, 0, vals, nargs);
    return &ty_error;
  }
  int k = resolve(c, bname, sym, n->loc, cs, nc, vals, nargs);
  if (k < 0) return &ty_error;
  Type *t = apply_cand(c, n, bname, &cs[k], args, vals);
  return t;
}

static Type *shift_types(Check *c, Node *n, Node *ln, Val *a, Node *rn, Val *b) {
  if (!is_intlike(a->ty) || !is_intlike(b->ty)) {
    diag_error(c->diags, n->loc, "'%s' needs integer operands, not %s and %s", op_text(n->op),
               tname(a->ty), tname(b->ty));
    return &ty_error;
  }
  if (is_untyped(a->ty) && !b->is_const) default_type(c, ln, a);
  if (is_untyped(b->ty) && !is_untyped(a->ty)) default_type(c, rn, b);
  if (!a->is_const && b->is_const && !is_err(b->ty) && !is_err(a->ty) &&
      (b->i < 0 || b->i >= a->ty->size * 8)) {
    char buf[64];
    fmt_i128(buf, sizeof buf, b->i);
    diag_warning(c->diags, rn->loc, "shift count %s is out of range for %s", buf, tname(a->ty));
  }
  return is_err(b->ty) ? &ty_error : a->ty;
}

static bool operand_ok(const Type *t) { return type_is_scalar(t) || is_untyped(t); }

/* Checks lv op rv (also for compound assignments, where fixed is true),
 * converting operands in place; returns the result type or ty_error. */
static Type *operate(Check *c, Node *n, int op, Node *ln, Val *a, Node *rn, Val *b, bool fixed) {
  if (is_vmq(a->ty) || is_vmq(b->ty)) {
    Node *args[2] = {ln, rn};
    Val vals[2] = {*a, *b};
    Type *t = op_call(c, n, op_builtin_name(op), op_text(n->op), args, vals, 2);
    *a = vals[0];
    *b = vals[1];
    return t;
  }
  if (!operand_ok(a->ty) || !operand_ok(b->ty)) {
    diag_error(c->diags, n->loc, "invalid operands to '%s': %s and %s", op_text(n->op),
               tname(a->ty), tname(b->ty));
    return &ty_error;
  }
  if (is_shift(op)) return shift_types(c, n, ln, a, rn, b);
  Type *t = unify(c, n->loc, op_text(n->op), ln, a, rn, b, fixed);
  if (is_err(t)) return t;
  bool ok;
  const char *need;
  if (op == TK_PERCENT || is_bitwise(op)) {
    ok = is_intlike(t);
    need = "integer";
  } else if (op == TK_EQEQ || op == TK_NE) {
    ok = true;
    need = "";
  } else {
    ok = is_numlike(t);
    need = "numeric";
  }
  if (!ok) {
    diag_error(c->diags, n->loc, "'%s' needs %s operands, not %s", op_text(n->op), need, tname(t));
    if (op == TK_PERCENT && (type_is_float(t) || t->kind == TY_UNTYPED_FLOAT))
      diag_note(c->diags, n->loc, "use fmod(a, b) for floating-point remainders");
    return &ty_error;
  }
  return is_compare(op) ? &ty_bool : t;
}

static Val binary(Check *c, Node *n) {
  int op = n->op;
  bool logic = op == TK_ANDAND || op == TK_OROR;
  const char *what = op == TK_ANDAND ? "the operand of '&&'" : "the operand of '||'";
  Val a = logic ? expect_bool(c, n->lhs, what) : expr(c, n->lhs);
  Val b = logic ? expect_bool(c, n->rhs, what) : expr(c, n->rhs);
  if (is_err(a.ty) || is_err(b.ty)) return val_err();
  Type *t = logic ? &ty_bool : operate(c, n, op, n->lhs, &a, n->rhs, &b, false);
  if (is_err(t)) return val_err();
  n->ty = t;
  if (!a.is_const || !b.is_const || n->call_kind == CALL_BUILTIN) return val_of(t);
  if (!fold_binary(c, n->loc, op, &a, &b)) return val_err();
  a.is_const = true;
  set_const(n, a);
  return a;
}

static Val unary(Check *c, Node *n) {
  int op = n->op;
  Val v = op == TK_BANG ? expect_bool(c, n->lhs, "the operand of '!'") : expr(c, n->lhs);
  if (is_err(v.ty)) return val_err();
  if (op == TK_MINUS && is_vmq(v.ty)) {
    Node *args[1] = {n->lhs};
    Type *t = op_call(c, n, "neg", "-", args, &v, 1);
    n->ty = t;
    return is_err(t) ? val_err() : val_of(t);
  }
  bool ok = op == TK_BANG || (op == TK_TILDE ? is_intlike(v.ty) : is_numlike(v.ty));
  if (!ok) {
    diag_error(c->diags, n->loc, "invalid operand to unary '%s': %s",
               op == TK_PLUS    ? "+"
               : op == TK_MINUS ? "-"
                                : op_text(op),
               tname(v.ty));
    return val_err();
  }
  n->ty = v.ty;
  if (!v.is_const) return v;
  if (!fold_unary(c, n->loc, op, &v)) return val_err();
  set_const(n, v);
  return v;
}

static Val cond_expr(Check *c, Node *n) {
  Val cv = expect_bool(c, n->cond, "the condition of '?:'");
  Val a = expr(c, n->then), b = expr(c, n->els);
  if (is_err(cv.ty) || is_err(a.ty) || is_err(b.ty)) return val_err();
  Type *t;
  if (operand_ok(a.ty) && operand_ok(b.ty))
    t = unify(c, n->loc, "?:", n->then, &a, n->els, &b, false);
  else if (type_equal(a.ty, b.ty))
    t = a.ty;
  else
    t = op_mismatch(c, n->loc, "?:", a.ty, b.ty);
  if (is_err(t)) return val_err();
  if (cv.is_const && a.is_const && b.is_const) {
    Val r = cv.i ? a : b;
    set_const(n, r);
    return r;
  }
  if (is_untyped(t)) {
    default_type(c, n->then, &a);
    default_type(c, n->els, &b);
    t = a.ty;
  }
  n->ty = t;
  return val_of(t);
}

/* ---- names, literals, members ------------------------------------------------------ */

static void eval_const(Check *c, Decl *d);

static Val const_ref(Check *c, Decl *d, SrcLoc loc) {
  Info *in = info(c, d);
  if (in->state == 1) {
    diag_error(c->diags, loc, "constant '%s' is defined in terms of itself", d->name);
    diag_note(c->diags, d->name_loc, "'%s' is declared here", d->name);
    return val_err();
  }
  if (in->state == 0) eval_const(c, d);
  return in->cval;
}

static const char *decl_what(const Decl *d) {
  switch (d->kind) {
    case DECL_STRUCT: return "a struct type";
    case DECL_FUNC: return "a function";
    case DECL_KERNEL: return "a kernel";
    default: return "a constant";
  }
}

static Val ident(Check *c, Node *n) {
  Bind *b = n->name ? map_get(&c->locals, n->name) : NULL;
  if (b) {
    n->var = b->var;
    n->ty = b->var->ty ? b->var->ty : &ty_error;
    return val_of(n->ty);
  }
  Sym *s = global(c, n->name);
  if (s && s->decl->kind == DECL_CONST) {
    Val v = const_ref(c, s->decl, n->loc);
    n->cdecl = s->decl;
    n->ty = v.ty;
    n->is_const = v.is_const;
    return v;
  }
  if (s) {
    diag_error(c->diags, n->loc, "'%s' is %s, not a value", n->name, decl_what(s->decl));
    return val_err();
  }
  diag_error(c->diags, n->loc, "unknown name '%s'", n->name ? n->name : "?");
  const char *near = n->name ? suggest(c, n->name, false) : NULL;
  if (near) diag_note(c->diags, n->loc, "did you mean '%s'?", near);
  return val_err();
}

static Val int_literal(Check *c, Node *n) {
  static Type *const by_suffix[] = {
      [SUF_NONE] = &ty_untyped_int, [SUF_U] = &ty_u32, [SUF_L] = &ty_i64, [SUF_UL] = &ty_u64};
  Type *t = n->suffix <= SUF_UL ? by_suffix[n->suffix] : &ty_untyped_int;
  Val v = {.ty = t, .is_const = true, .i = (i128)n->ival};
  if (!int_fits(v.i, t)) {
    report_overflow(c, n->loc, &(Val){.ty = &ty_untyped_int, .i = v.i}, t);
    return val_err();
  }
  n->ty = t;
  n->is_const = true;
  return v;
}

static Val float_literal(Check *c, Node *n) {
  Type *t = n->suffix == SUF_F ? &ty_f32 : n->suffix == SUF_D ? &ty_f64 : &ty_untyped_float;
  Val v = {.ty = t, .is_const = true, .f = n->fval};
  if (t == &ty_f32 && !check_float(c, n->loc, &v, t)) return val_err();
  n->ty = t;
  n->fval = v.f;
  n->is_const = true;
  return v;
}

/* An index of an array, vector, matrix or quat: any integer type. */
static Val index_val(Check *c, Node *idx) {
  Val v = expr(c, idx);
  if (is_err(v.ty)) return v;
  if (!is_intlike(v.ty)) {
    diag_error(c->diags, idx->loc, "index must be an integer, not %s", tname(v.ty));
    return val_err();
  }
  if (is_untyped(v.ty))
    convert(c, idx, &v, int_fits(v.i, &ty_i32) ? &ty_i32 : &ty_i64, (Ctx){"index", NULL, 0});
  if (v.is_const && v.i < 0) {
    diag_error(c->diags, idx->loc, "index %s is negative", val_text(c, &v));
    return val_err();
  }
  return v;
}

static int count_list(const Node *n) {
  int k = 0;
  for (; n; n = n->next) k++;
  return k;
}

static Val index_expr(Check *c, Node *n) {
  Val base = expr(c, n->lhs);
  int nidx = count_list(n->args);
  Val last = val_err();
  for (Node *a = n->args; a; a = a->next) last = index_val(c, a);
  Type *t = base.ty;
  if (is_err(t)) return val_err();
  if (t->kind == TY_ARRAY) {
    if (nidx != t->ndim) {
      const char *name = n->lhs->kind == ND_IDENT && n->lhs->name ? n->lhs->name : "?";
      diag_error(c->diags, n->loc, "array '%s' has %d dimension%s but %d ind%s given", name,
                 t->ndim, t->ndim == 1 ? "" : "s", nidx, nidx == 1 ? "ex was" : "ices were");
      return val_err();
    }
    n->ty = t->elem;
    return val_of(t->elem);
  }
  if (!is_vmq(t)) {
    diag_error(c->diags, n->loc, "cannot index a value of type %s", tname(t));
    return val_err();
  }
  if (nidx != 1) {
    diag_error(c->diags, n->loc, "%s takes 1 index, but %d were given", tname(t), nidx);
    return val_err();
  }
  if (last.is_const && !is_err(last.ty) && last.i >= t->n) {
    diag_error(c->diags, n->args->loc, "index %s is out of range for %s (0..%d)",
               val_text(c, &last), tname(t), t->n - 1);
    return val_err();
  }
  n->ty = t->kind == TY_MAT ? type_vec(t->elem, t->n) : t->elem;
  return val_of(n->ty);
}

static int component(const char *name) {
  if (!name || !name[0] || name[1]) return -1;
  const char *p = strchr("xyzw", name[0]);
  return p ? (int)(p - "xyzw") : -1;
}

static Val struct_member(Check *c, Node *n, Decl *s, const char *name) {
  for (int i = 0; i < s->nfields; i++) {
    if (s->fields[i].name && strcmp(s->fields[i].name, name) == 0) {
      n->member = i;
      n->ty = s->fields[i].ty ? s->fields[i].ty : &ty_error;
      return val_of(n->ty);
    }
  }
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  diag_error(c->diags, at, "struct '%s' has no field '%s'", s->name, name);
  Suggest sg = {.name = name, .dist = 99};
  for (int i = 0; i < s->nfields; i++) suggest_try(&sg, s->fields[i].name);
  if (sg.best) diag_note(c->diags, at, "did you mean '%s'?", sg.best);
  return val_err();
}

/* .x .y .z .w of a vector or quat (no swizzles). */
static Val component_member(Check *c, Node *n, Type *t, const char *name) {
  int k = component(name);
  if (k >= 0 && k < t->n) {
    n->member = k;
    n->ty = t->elem;
    return val_of(t->elem);
  }
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  diag_error(c->diags, at, "%s has no component '%s'", tname(t), name);
  size_t len = strlen(name);
  if (len > 1 && len <= 4 && strspn(name, "xyzw") == len)
    diag_note(c->diags, at, "swizzles are not supported; use a constructor such as %s(...)",
              tname(type_vec(t->elem, (int)len)));
  return val_err();
}

static Val member(Check *c, Node *n) {
  Val b = expr(c, n->lhs);
  Type *t = b.ty;
  if (is_err(t)) return val_err();
  const char *name = n->name ? n->name : "?";
  if (t->kind == TY_STRUCT) return struct_member(c, n, t->sdecl, name);
  if (t->kind == TY_VEC || t->kind == TY_QUAT) return component_member(c, n, t, name);
  diag_error(c->diags, n->loc, "cannot access member '%s' of a value of type %s", name, tname(t));
  return val_err();
}

/* ---- casts and constructors ----------------------------------------------------------- */

/* (T)x with x already checked (value v). */
static Val cast_checked(Check *c, Node *n, Type *t, Val v) {
  if (is_err(t) || is_err(v.ty)) return val_err();
  bool ok = (type_is_scalar(t) && operand_ok(v.ty)) ||
            (t->kind == TY_VEC && v.ty->kind == TY_VEC && t->n == v.ty->n) || type_equal(t, v.ty);
  if (!ok) {
    diag_error(c->diags, n->loc, "cannot cast %s to %s", tname(v.ty), tname(t));
    return val_err();
  }
  if (v.is_const && type_is_scalar(t)) {
    if (!const_cast(c, n->loc, &v, t)) return val_err();
    v.is_const = true;
    set_const(n, v);
    return v;
  }
  n->ty = t;
  return val_of(t);
}

static Val cast(Check *c, Node *n) {
  Type *t = resolve_type(c, n->texpr, "a cast's type");
  Val v = expr(c, n->lhs);
  if (!t) {
    diag_error(c->diags, n->loc, "cannot cast to auto");
    return val_err();
  }
  return cast_checked(c, n, t, v);
}

/* Turns the call T(x) into the cast (T)x. */
static void call_to_cast(Node *n) {
  Node *arg = n->args;
  n->kind = ND_CAST;
  n->lhs = arg;
  arg->next = NULL;
  n->args = NULL;
  n->nargs = 0;
}

/* Checks every argument of n; returns their count, nodes and values. */
static int check_args(Check *c, Node *n, Node ***nodes, Val **vals) {
  int na = count_list(n->args);
  *nodes = alloc(c, (size_t)(na + 1) * sizeof **nodes);
  *vals = alloc(c, (size_t)(na + 1) * sizeof **vals);
  int i = 0;
  for (Node *a = n->args; a; a = a->next, i++) {
    (*nodes)[i] = a;
    (*vals)[i] = expr(c, a);
  }
  return na;
}

static bool any_err(const Val *vals, int n) {
  for (int i = 0; i < n; i++)
    if (is_err(vals[i].ty)) return true;
  return false;
}

static Val ctor_done(Node *n, Type *t) {
  n->call_kind = CALL_CTOR;
  n->ty = t;
  return val_of(t);
}

static void convert_all(Check *c, Node **args, Val *vals, int na, Type *t, const char *name) {
  for (int i = 0; i < na; i++) convert(c, args[i], &vals[i], t, (Ctx){"argument", name, i + 1});
}

/* vecN / quat / matN from scalars, rows or a splat (see the top comment). */
static Val vector_ctor(Check *c, Node *n, Type *t, Node **args, Val *vals, int na) {
  const char *name = tname(t);
  int n1 = t->n, n2 = t->kind == TY_MAT ? t->n * t->n : t->n;
  if (na == 1 || na == n2) {
    convert_all(c, args, vals, na, t->elem, name);
  } else if (t->kind == TY_MAT && na == n1) {
    convert_all(c, args, vals, na, type_vec(t->elem, t->n), name);
  } else {
    if (t->kind == TY_MAT)
      diag_error(c->diags, n->loc, "%s takes 1, %d or %d arguments, got %d", name, n1, n2, na);
    else
      diag_error(c->diags, n->loc, "%s takes 1 or %d arguments, got %d", name, n2, na);
    return val_err();
  }
  return any_err(vals, na) ? val_err() : ctor_done(n, t);
}

/* A call whose callee is a builtin type name: a cast or a constructor. */
static Val type_call(Check *c, Node *n, Type *t) {
  int na = count_list(n->args);
  if (type_is_scalar(t)) {
    if (na != 1) {
      diag_error(c->diags, n->loc, "a cast to %s takes 1 argument, got %d", tname(t), na);
      for (Node *a = n->args; a; a = a->next) expr(c, a);
      return val_err();
    }
    call_to_cast(n);
    return cast_checked(c, n, t, expr(c, n->lhs));
  }
  Node **args;
  Val *vals;
  na = check_args(c, n, &args, &vals);
  if (na == 1 && t->kind == TY_VEC && vals[0].ty->kind == TY_VEC) {
    call_to_cast(n);
    return cast_checked(c, n, t, vals[0]);
  }
  if (is_vmq(t)) return vector_ctor(c, n, t, args, vals, na);
  diag_error(c->diags, n->loc, "cannot construct a value of type %s", tname(t));
  return val_err();
}

static Val struct_ctor(Check *c, Node *n, Decl *s) {
  Node **args;
  Val *vals;
  int na = check_args(c, n, &args, &vals);
  if (na != 0 && na != s->nfields) {
    diag_error(c->diags, n->loc,
               "'%s' has %d field%s: its constructor takes 0 or %d arguments, got %d", s->name,
               s->nfields, s->nfields == 1 ? "" : "s", s->nfields, na);
    diag_note(c->diags, s->name_loc, "'%s' is declared here", s->name);
    return val_err();
  }
  for (int i = 0; i < na; i++)
    convert(c, args[i], &vals[i], s->fields[i].ty, (Ctx){"argument", s->name, i + 1});
  return ctor_done(n, s->sty ? s->sty : &ty_error);
}

/* ---- special forms ------------------------------------------------------------------- */

static const struct {
  const char *name;
  SpecialKind sp;
} specials[] = {
    {"tid", SP_TID},
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
    {"rand_init", SP_RAND_INIT},
    {"randf", SP_RANDF},
    {"randi", SP_RANDI},
    {"randn", SP_RANDN},
    {"identity", SP_IDENTITY},
};

static SpecialKind special_kind(const char *name) {
  for (size_t i = 0; name && i < sizeof specials / sizeof specials[0]; i++)
    if (strcmp(specials[i].name, name) == 0) return specials[i].sp;
  return SP_NONE;
}

static Val special_done(Node *n, SpecialKind sp, Type *t) {
  n->call_kind = CALL_SPECIAL;
  n->special = sp;
  n->ty = t;
  return val_of(t);
}

/* The arguments of n as an array (not yet checked). */
static int arg_nodes(Check *c, Node *n, Node ***out) {
  int na = count_list(n->args);
  Node **a = alloc(c, (size_t)(na + 1) * sizeof *a);
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
    if (a->kind != ND_ADDR) expr(c, a);
  return false;
}

/* A constant integer argument in lo..hi (a dimension, a matrix size). */
static int const_arg(Check *c, Node *a, int lo, int hi, const char *what, const char *fname) {
  Val v = expr(c, a);
  if (is_err(v.ty)) return -1;
  if (!v.is_const || !is_intlike(v.ty)) {
    diag_error(c->diags, a->loc, "%s of '%s' must be a constant integer", what, fname);
    return -1;
  }
  if (v.i < lo || v.i > hi) {
    diag_error(c->diags, a->loc, "%s of '%s' is %s, but must be in %d..%d", what, fname,
               val_text(c, &v), lo, hi);
    return -1;
  }
  v.ty = &ty_i32;
  set_const(a, v);
  return (int)v.i;
}

/* Conversions the special forms allow beyond the implicit ones. */
static void force_type(Check *c, Node *n, Val *v, Type *t) {
  if (type_equal(v->ty, t)) return;
  if (v->is_const && const_cast(c, n->loc, v, t))
    set_const(n, *v);
  else
    wrap_conv(c, n, t);
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

static Type *array_arg(Check *c, Node *a, const char *fname) {
  Val v = expr(c, a);
  if (is_err(v.ty)) return NULL;
  if (v.ty->kind != TY_ARRAY) {
    diag_error(c->diags, a->loc, "'%s' expects an array, not %s", fname, tname(v.ty));
    return NULL;
  }
  return v.ty;
}

static Val sp_array(Check *c, Node *n, SpecialKind sp) {
  const char *name = sp == SP_LEN ? "len" : sp == SP_SIZE ? "size" : "shape";
  int want = sp == SP_SHAPE ? 2 : 1;
  Node **a;
  int na = arg_nodes(c, n, &a);
  Type *rt = sp == SP_SIZE ? &ty_i64 : &ty_i32;
  if (!arity(c, n, name, na, want, want)) return special_done(n, sp, rt);
  Type *at = array_arg(c, a[0], name);
  if (sp == SP_SHAPE) const_arg(c, a[1], 0, at ? at->ndim - 1 : 3, "the dimension", name);
  return special_done(n, sp, rt);
}

static Val sp_assert(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (arity(c, n, "assert", na, 1, 1)) expect_bool(c, a[0], "the condition of 'assert'");
  return special_done(n, SP_ASSERT, &ty_void);
}

static Val sp_identity(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (!arity(c, n, "identity", na, 1, 1)) return val_err();
  static Type *const mats[] = {&ty_mat22, &ty_mat33, &ty_mat44};
  int k = const_arg(c, a[0], 2, 4, "the size", "identity");
  return k < 0 ? val_err() : special_done(n, SP_IDENTITY, mats[k - 2]);
}

/* ---- printf ---------------------------------------------------------------------------- */

typedef enum { FMT_SINT, FMT_UINT, FMT_HEX, FMT_FLOAT, FMT_STR } FmtClass;

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
  const char *cls = conv ? strchr("diuxXfFeEgGs", conv) : NULL;
  if (!cls || nl > 2 || (nl && strchr("fFeEgGs", conv))) {
    if (!conv)
      diag_error(c->diags, loc, "the format ends in the middle of a conversion");
    else
      diag_error(c->diags, loc, "unsupported printf conversion '%.*s'", (int)(*pp - start), start);
    diag_note(c->diags, loc, "supported: %%d %%i %%u %%x %%X %%ld %%lu %%lx %%f %%e %%g %%s %%%%");
    return -1;
  }
  switch (conv) {
    case 'd':
    case 'i': return FMT_SINT;
    case 'u': return FMT_UINT;
    case 'x':
    case 'X': return FMT_HEX;
    case 's': return FMT_STR;
    default: return FMT_FLOAT;
  }
}

static bool fmt_accepts(FmtClass k, const Type *t, const Type *want) {
  switch (k) {
    case FMT_SINT: return type_is_signed(t) && t->size <= want->size;
    case FMT_UINT: return type_is_int(t) && !type_is_signed(t) && t->size <= want->size;
    case FMT_HEX: return type_is_int(t) && t->size <= want->size;
    case FMT_FLOAT: return type_is_float(t);
    default: return false;
  }
}

static void fmt_arg(Check *c, Node *a, FmtClass k, bool is_long, const char *spec) {
  if (k == FMT_STR || a->kind == ND_STRING) {
    if (k == FMT_STR && a->kind == ND_STRING)
      a->ty = &ty_string;
    else if (k == FMT_STR)
      diag_error(c->diags, a->loc, "format '%s' expects a string literal", spec);
    else
      diag_error(c->diags, a->loc, "format '%s' does not take a string", spec);
    if (k == FMT_STR && a->kind != ND_STRING) expr(c, a);
    return;
  }
  static Type *const wants[2][4] = {{&ty_i32, &ty_u32, &ty_u32, &ty_f64},
                                    {&ty_i64, &ty_u64, &ty_u64, &ty_f64}};
  Type *want = wants[is_long][k];
  Val v = expr(c, a);
  if (is_err(v.ty)) return;
  if (is_untyped(v.ty) && (k == FMT_FLOAT || v.ty->kind == TY_UNTYPED_INT)) {
    convert(c, a, &v, want, (Ctx){"printf argument", NULL, 0});
    return;
  }
  if (!fmt_accepts(k, v.ty, want)) {
    diag_error(
        c->diags, a->loc, "format '%s' expects %s, not %s", spec,
        k == FMT_FLOAT ? "a floating-point number"
        : k == FMT_SINT
            ? (is_long ? "int64 or a smaller signed integer" : "int32 or a smaller signed integer")
        : k == FMT_UINT ? (is_long ? "an unsigned integer" : "uint32 or a smaller unsigned integer")
                        : (is_long ? "an integer" : "an integer of at most 32 bits"),
        tname(v.ty));
    return;
  }
  force_type(c, a, &v, want);
}

static Val sp_printf(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (na == 0 || a[0]->kind != ND_STRING) {
    diag_error(c->diags, na ? a[0]->loc : n->loc,
               "printf's first argument must be a string literal");
    for (int i = na ? 1 : 0; i < na; i++)
      if (a[i]->kind != ND_STRING) expr(c, a[i]);
    return special_done(n, SP_PRINTF, &ty_void);
  }
  Node *f = a[0];
  f->ty = &ty_string;
  const char *p = f->str ? f->str : "";
  const char *end = p + f->str_len;
  int used = 1;
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
    fmt_arg(c, a[used++], (FmtClass)k, is_long, spec);
  }
  if (used < na && (!p || p >= end)) {
    diag_error(c->diags, a[used]->loc,
               "more printf arguments than the format uses (%d, expected %d)", na - 1, used - 1);
  }
  for (int i = used; i < na; i++)
    if (a[i]->kind != ND_STRING) expr(c, a[i]);
  return special_done(n, SP_PRINTF, &ty_void);
}

/* ---- atomics and random numbers ---------------------------------------------------------- */

static const char *special_name(SpecialKind sp) {
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    if (specials[i].sp == sp) return specials[i].name;
  return "?";
}

static bool atomic_supports(SpecialKind sp, const Type *t) {
  bool int4_8 = type_is_int(t) && t->size >= 4;
  bool scalar = int4_8 || t->kind == TY_F32 || t->kind == TY_F64;
  switch (sp) {
    case SP_ATOMIC_AND:
    case SP_ATOMIC_OR:
    case SP_ATOMIC_XOR: return int4_8;
    case SP_ATOMIC_EXCH:
    case SP_ATOMIC_CAS: return scalar;
    default: return scalar || t->kind == TY_VEC;
  }
}

/* The element type behind &a[i...] of an array parameter, or NULL (reported). */
static Type *atomic_target(Check *c, Node *p, const char *name) {
  if (p->kind != ND_ADDR) {
    Val v = expr(c, p);
    if (!is_err(v.ty))
      diag_error(c->diags, p->loc,
                 "the first argument of '%s' must be the address of an array element, like &a[i]",
                 name);
    return NULL;
  }
  Node *e = p->lhs;
  bool indexed = e && e->kind == ND_INDEX;
  Val v = expr(c, e);
  if (is_err(v.ty)) return NULL;
  Type *base = indexed ? e->lhs->ty : NULL;
  if (!base || base->kind != TY_ARRAY) {
    diag_error(c->diags, p->loc, "'%s' works on array elements only, not on %s", name,
               e->kind == ND_IDENT ? "a local variable" : "this expression");
    return NULL;
  }
  Var *arr = e->lhs->kind == ND_IDENT ? e->lhs->var : NULL;
  if (arr && arr->is_const) {
    diag_error(c->diags, p->loc, "'%s' cannot modify const array '%s'", name, arr->name);
    return NULL;
  }
  p->ty = ptr_to(c, v.ty);
  return v.ty;
}

static Val sp_atomic(Check *c, Node *n, SpecialKind sp) {
  const char *name = special_name(sp);
  Node **a;
  int na = arg_nodes(c, n, &a);
  int want = sp == SP_ATOMIC_CAS ? 3 : 2;
  if (!arity(c, n, name, na, want, want)) return val_err();
  Type *t = atomic_target(c, a[0], name);
  if (t && !atomic_supports(sp, t)) {
    diag_error(c->diags, a[0]->loc, "'%s' does not support %s elements", name, tname(t));
    diag_note(c->diags, a[0]->loc, "supported: int32 uint32 int64 uint64%s%s",
              sp == SP_ATOMIC_AND || sp == SP_ATOMIC_OR || sp == SP_ATOMIC_XOR ? ""
                                                                               : " float32 float64",
              atomic_supports(sp, &ty_vec3) ? " and vectors" : "");
    t = NULL;
  }
  for (int i = 1; i < na; i++)
    if (t)
      expect(c, a[i], t, (Ctx){"argument", name, i + 1});
    else
      expr(c, a[i]);
  return t ? special_done(n, sp, t) : val_err();
}

static Val sp_rand_init(Check *c, Node *n) {
  Node **a;
  int na = arg_nodes(c, n, &a);
  if (arity(c, n, "rand_init", na, 2, 2)) {
    for (int i = 0; i < 2; i++) {
      Val v = expr(c, a[i]);
      if (is_err(v.ty)) continue;
      if (!is_intlike(v.ty))
        diag_error(c->diags, a[i]->loc, "'rand_init' expects integer arguments, not %s",
                   tname(v.ty));
      else if (is_untyped(v.ty))
        convert(c, a[i], &v, &ty_u32, (Ctx){"argument", "rand_init", i + 1});
      else
        force_type(c, a[i], &v, &ty_u32);
    }
  }
  return special_done(n, SP_RAND_INIT, &ty_u32);
}

/* &s with s a non-const uint32 local or parameter. */
static void rand_state(Check *c, Node *p, const char *name) {
  if (p->kind != ND_ADDR) {
    Val v = expr(c, p);
    if (!is_err(v.ty))
      diag_error(
          c->diags, p->loc,
          "the first argument of '%s' must be the address of a uint32 state variable, like &s",
          name);
    return;
  }
  Node *e = p->lhs;
  Val v = expr(c, e);
  if (is_err(v.ty)) return;
  Var *var = e->kind == ND_IDENT ? e->var : NULL;
  if (!var) {
    diag_error(c->diags, p->loc, "the state of '%s' must be a local variable", name);
  } else if (var->is_const) {
    diag_error(c->diags, p->loc, "the state of '%s' cannot be const '%s'", name, var->name);
  } else if (v.ty->kind != TY_U32) {
    diag_error(c->diags, p->loc, "the state of '%s' must be uint32, not %s", name, tname(v.ty));
  } else {
    p->ty = ptr_to(c, &ty_u32);
  }
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
      if (a[i]->kind != ND_ADDR) expr(c, a[i]);
    ok = false;
  } else {
    ok = arity(c, n, name, na, 1, sp == SP_RANDF ? 3 : 1);
  }
  if (!ok) return special_done(n, sp, rt);
  rand_state(c, a[0], name);
  for (int i = 1; i < na; i++) expect(c, a[i], &ty_f32, (Ctx){"argument", name, i + 1});
  return special_done(n, sp, rt);
}

static Val special(Check *c, Node *n, SpecialKind sp) {
  switch (sp) {
    case SP_TID:
    case SP_DIM: return sp_launch(c, n, sp);
    case SP_LEN:
    case SP_SHAPE:
    case SP_SIZE: return sp_array(c, n, sp);
    case SP_PRINTF: return sp_printf(c, n);
    case SP_ASSERT: return sp_assert(c, n);
    case SP_RAND_INIT: return sp_rand_init(c, n);
    case SP_RANDF:
    case SP_RANDI:
    case SP_RANDN: return sp_rand(c, n, sp);
    case SP_IDENTITY: return sp_identity(c, n);
    default: return sp_atomic(c, n, sp);
  }
}

/* ---- calls ------------------------------------------------------------------------------ */

static Val call(Check *c, Node *n) {
  if (n->texpr && n->texpr->builtin && n->texpr->ndim == 0)
    return type_call(c, n, n->texpr->builtin);
  const char *name = n->name ? n->name : n->texpr ? n->texpr->name : NULL;
  SrcLoc at = n->name_loc.file ? n->name_loc : n->loc;
  SpecialKind sp = special_kind(name);
  if (sp != SP_NONE) return special(c, n, sp);
  Sym *s = global(c, name);
  if (s && s->decl->kind == DECL_STRUCT) return struct_ctor(c, n, s->decl);
  Node **args;
  Val *vals;
  int na = check_args(c, n, &args, &vals);
  if (s && s->decl->kind == DECL_KERNEL) {
    diag_error(c->diags, at, "kernel '%s' cannot be called; kernels are launched from the host",
               name);
    return val_err();
  }
  Cand *cs;
  int nc = candidates(c, name ? name : "", &cs);
  if (nc == 0) {
    if (name && (map_get(&c->locals, name) || s))
      diag_error(c->diags, at, "'%s' is not a function", name);
    else
      diag_error(c->diags, at, "unknown function '%s'", name ? name : "?");
    const char *near = name ? suggest(c, name, true) : NULL;
    if (near) diag_note(c->diags, at, "did you mean '%s'?", near);
    return val_err();
  }
  int k = resolve(c, name, NULL, at, cs, nc, vals, na);
  if (k < 0) return val_err();
  Type *t = apply_cand(c, n, name, &cs[k], args, vals);
  n->ty = t;
  return val_of(t);
}

static Val expr_kind(Check *c, Node *n) {
  if (n->ty && is_err(n->ty))
    return val_err(); /* the parser's placeholder for a malformed expression */
  switch (n->kind) {
    case ND_INT: return int_literal(c, n);
    case ND_FLOAT: return float_literal(c, n);
    case ND_BOOL:
      n->ty = &ty_bool;
      n->is_const = true;
      return (Val){.ty = &ty_bool, .is_const = true, .i = n->ival != 0};
    case ND_STRING:
      diag_error(c->diags, n->loc, "string literals are only allowed in printf");
      return val_err();
    case ND_IDENT: return ident(c, n);
    case ND_UNARY: return unary(c, n);
    case ND_ADDR:
      diag_error(c->diags, n->loc,
                 "'&' is only allowed on the first argument of an atomic or random function");
      expr(c, n->lhs);
      return val_err();
    case ND_BINARY: return binary(c, n);
    case ND_COND: return cond_expr(c, n);
    case ND_CALL: return call(c, n);
    case ND_CAST: return cast(c, n);
    case ND_INDEX: return index_expr(c, n);
    case ND_MEMBER: return member(c, n);
    case ND_CONV: return val_of(n->ty);
    default: diag_error(c->diags, n->loc, "expected an expression"); return val_err();
  }
}

static Val expr(Check *c, Node *n) {
  if (!n) return val_err();
  if (!nest_enter(c, n->loc)) {
    c->nest--;
    n->ty = &ty_error;
    return val_err();
  }
  Val v = expr_kind(c, n);
  c->nest--;
  if (is_err(v.ty) || !n->ty) n->ty = v.ty;
  return v;
}

/* ---- statements ---------------------------------------------------------------------------- */

/* Reports why n cannot be assigned to; true when it can. */
static bool assignable(Check *c, Node *n) {
  switch (n->kind) {
    case ND_IDENT:
      if (n->cdecl) {
        diag_error(c->diags, n->loc, "cannot assign to const '%s'", n->name);
        diag_note(c->diags, n->cdecl->name_loc, "'%s' is declared here", n->name);
        return false;
      }
      if (!n->var) return false;
      if (n->var->is_const) {
        diag_error(c->diags, n->loc, "cannot assign to const '%s'", n->name);
        diag_note(c->diags, n->var->loc, "'%s' is declared here", n->name);
        return false;
      }
      if (n->var->ty && n->var->ty->kind == TY_ARRAY) {
        diag_error(c->diags, n->loc, "cannot assign to array '%s'; assign its elements instead",
                   n->name);
        return false;
      }
      return true;
    case ND_INDEX:
      if (n->lhs->ty && n->lhs->ty->kind == TY_ARRAY) {
        Var *v = n->lhs->kind == ND_IDENT ? n->lhs->var : NULL;
        if (v && v->is_const) {
          diag_error(c->diags, n->loc, "cannot assign to an element of const array '%s'", v->name);
          return false;
        }
        return true;
      }
      return assignable(c, n->lhs);
    case ND_MEMBER: return assignable(c, n->lhs);
    default: diag_error(c->diags, n->loc, "this expression cannot be assigned to"); return false;
  }
}

static void assign(Check *c, Node *n) {
  Val l = expr(c, n->lhs);
  Val r = expr(c, n->rhs);
  if (!is_err(l.ty)) assignable(c, n->lhs);
  if (is_err(l.ty) || is_err(r.ty)) return;
  if (n->op == TK_ASSIGN) {
    convert(c, n->rhs, &r, l.ty, (Ctx){"assignment", NULL, 0});
    return;
  }
  Type *t = operate(c, n, compound_op(n->op), n->lhs, &l, n->rhs, &r, true);
  if (!is_err(t) && !type_equal(t, l.ty))
    diag_error(c->diags, n->loc, "the result of '%s' is %s, but its target is %s", op_text(n->op),
               tname(t), tname(l.ty));
}

static void incdec(Check *c, Node *n) {
  Val l = expr(c, n->lhs);
  if (is_err(l.ty)) return;
  if (!type_is_numeric(l.ty)) {
    diag_error(c->diags, n->loc, "'%s' needs an integer or floating-point operand, not %s",
               n->op == TK_INC ? "++" : "--", tname(l.ty));
    return;
  }
  assignable(c, n->lhs);
}

static void vardecl(Check *c, Node *n) {
  Var *v = n->var;
  if (!v) return;
  Type *t = resolve_type(c, v->texpr, "a local variable");
  if (t && t->kind == TY_VOID) {
    diag_error(c->diags, v->loc, "variable '%s' cannot be void", v->name);
    t = &ty_error;
  }
  if (!v->init) {
    diag_error(c->diags, v->loc, "variable '%s' needs an initializer", v->name);
    t = t ? t : &ty_error;
  } else if (!t) {
    Val iv = rvalue(c, v->init);
    t = iv.ty;
    if (!is_err(t) && !type_is_scalar(t) && !is_vmq(t) && t->kind != TY_STRUCT) {
      diag_error(c->diags, v->init->loc, "cannot declare variable '%s' of type %s", v->name,
                 tname(t));
      t = &ty_error;
    }
  } else {
    expect(c, v->init, t, (Ctx){"initialization of", v->name, 0});
  }
  v->ty = t;
  v->id = c->nvars++;
  declare(c, v);
}

static void scoped_stmt(Check *c, Node *n) {
  scope_open(c);
  stmt(c, n);
  scope_close(c);
}

static void loop_body(Check *c, Node *n) {
  c->loops++;
  scoped_stmt(c, n);
  c->loops--;
}

static void return_stmt(Check *c, Node *n) {
  Decl *f = c->fn;
  bool kernel = f->kind == DECL_KERNEL;
  Type *rt = f->ret ? f->ret : &ty_error;
  if (!n->lhs) {
    if (!kernel && rt->kind != TY_VOID && !is_err(rt))
      diag_error(c->diags, n->loc, "non-void function '%s' must return a value", f->name);
    return;
  }
  Val v = expr(c, n->lhs);
  if (kernel)
    diag_error(c->diags, n->loc, "kernel '%s' cannot return a value (kernels are void)", f->name);
  else if (rt->kind == TY_VOID)
    diag_error(c->diags, n->loc, "void function '%s' cannot return a value", f->name);
  else
    convert(c, n->lhs, &v, rt, (Ctx){"the return value of", f->name, 0});
}

static void stmt_kind(Check *c, Node *n) {
  switch (n->kind) {
    case ND_VARDECL: vardecl(c, n); break;
    case ND_ASSIGN: assign(c, n); break;
    case ND_INCDEC: incdec(c, n); break;
    case ND_EXPR_STMT: {
      Val v = rvalue(c, n->lhs);
      if (!is_err(v.ty) && n->lhs && n->lhs->kind != ND_CALL)
        diag_warning(c->diags, n->lhs->loc, "expression result unused");
      break;
    }
    case ND_BLOCK:
      scope_open(c);
      for (Node *s = n->body; s; s = s->next) stmt(c, s);
      scope_close(c);
      break;
    case ND_IF: /* an else-if chain in a loop: it is not nesting */
      for (;; n = n->els) {
        expect_bool(c, n->cond, "the condition of 'if'");
        scoped_stmt(c, n->then);
        if (!n->els || n->els->kind != ND_IF) break;
      }
      scoped_stmt(c, n->els);
      break;
    case ND_WHILE:
      expect_bool(c, n->cond, "the condition of 'while'");
      loop_body(c, n->body);
      break;
    case ND_DO:
      loop_body(c, n->body);
      expect_bool(c, n->cond, "the condition of 'do ... while'");
      break;
    case ND_FOR:
      scope_open(c);
      stmt(c, n->init);
      if (n->cond) expect_bool(c, n->cond, "the condition of 'for'");
      stmt(c, n->inc);
      loop_body(c, n->body);
      scope_close(c);
      break;
    case ND_BREAK:
    case ND_CONTINUE:
      if (!c->loops)
        diag_error(c->diags, n->loc, "'%s' outside a loop",
                   n->kind == ND_BREAK ? "break" : "continue");
      break;
    case ND_RETURN: return_stmt(c, n); break;
    case ND_EMPTY: break;
    default: rvalue(c, n); break;
  }
}

static void stmt(Check *c, Node *n) {
  if (!n) return;
  if (nest_enter(c, n->loc)) stmt_kind(c, n);
  c->nest--;
}

/* ---- return paths ---------------------------------------------------------------------------- */

static bool const_true(const Node *cond) { return !cond || (cond->kind == ND_BOOL && cond->ival); }

/* Does s contain a break that leaves the loop s is the body of? */
static bool breaks(const Node *s) {
  if (!s) return false;
  switch (s->kind) {
    case ND_BREAK: return true;
    case ND_IF:
      for (; s && s->kind == ND_IF; s = s->els) /* else-if chains: a loop */
        if (breaks(s->then)) return true;
      return breaks(s);
    case ND_BLOCK:
      for (const Node *k = s->body; k; k = k->next)
        if (breaks(k)) return true;
      return false;
    default: return false; /* nested loops own their breaks */
  }
}

static bool returns(const Node *s) {
  if (!s) return false;
  switch (s->kind) {
    case ND_RETURN: return true;
    case ND_BLOCK:
      for (const Node *k = s->body; k; k = k->next)
        if (returns(k)) return true;
      return false;
    case ND_IF:
      for (; s && s->kind == ND_IF; s = s->els) /* else-if chains: a loop */
        if (!returns(s->then)) return false;
      return returns(s);
    case ND_WHILE:
    case ND_FOR: return const_true(s->cond) && !breaks(s->body);
    case ND_DO: return returns(s->body) || (const_true(s->cond) && !breaks(s->body));
    default: return false;
  }
}

/* The location of the last byte of n (a body's closing brace). */
static SrcLoc end_loc(SrcLoc l) {
  if (!l.src || l.len == 0) return l;
  unsigned last = l.offset + l.len - 1;
  for (unsigned i = l.offset; i < last; i++) {
    if (l.src[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  l.offset = last;
  l.len = 1;
  return l;
}

/* ---- declarations ------------------------------------------------------------------------------
 */

/* The Program's tables while they are being filled. */
typedef struct Lists {
  Decl **structs, **consts, **funcs, **kernels;
  int nstructs, nconsts, nfuncs, nkernels;
  int cstructs, cconsts, cfuncs, ckernels;
} Lists;

static void push_decl(Check *c, Decl ***v, int *n, int *cap, Decl *d) {
  *v = grow(c, *v, *n, cap, sizeof **v);
  (*v)[(*n)++] = d;
}

static void sym_add_fn(Check *c, Sym *s, Decl *d) {
  s->fns = grow(c, s->fns, s->nfns, &s->cap, sizeof *s->fns);
  s->fns[s->nfns++] = d;
}

static bool reserved(Check *c, Decl *d) {
  int first;
  if (special_kind(d->name) != SP_NONE) {
    diag_error(c->diags, d->name_loc, "'%s' is a builtin and cannot be redefined", d->name);
    return true;
  }
  if (d->kind != DECL_FUNC && builtin_overloads(d->name, &first) > 0 && d->kind != DECL_CONST) {
    diag_error(c->diags, d->name_loc, "'%s' is the name of a builtin function", d->name);
    return true;
  }
  return false;
}

/* Enters one declaration into the namespace; false for a duplicate. */
static bool enter_decl(Check *c, Decl *d) {
  if (reserved(c, d)) return false;
  Sym *s = map_get(&c->globals, d->name);
  if (s && d->kind == DECL_FUNC && s->decl->kind == DECL_FUNC) {
    sym_add_fn(c, s, d);
    return true;
  }
  if (s) {
    diag_error(c->diags, d->name_loc, "redefinition of '%s'", d->name);
    diag_note(c->diags, s->decl->name_loc, "'%s' was first declared here", d->name);
    return false;
  }
  s = alloc(c, sizeof *s);
  s->decl = d;
  if (d->kind == DECL_FUNC) sym_add_fn(c, s, d);
  map_put(c, &c->globals, d->name, s);
  return true;
}

static void collect(Check *c, Lists *L) {
  for (Module *m = c->prog->modules; m; m = m->next) {
    for (Decl *d = m->decls; d; d = d->next) {
      if (d->kind == DECL_IMPORT || !d->name || !enter_decl(c, d)) continue;
      switch (d->kind) {
        case DECL_STRUCT: push_decl(c, &L->structs, &L->nstructs, &L->cstructs, d); break;
        case DECL_CONST: push_decl(c, &L->consts, &L->nconsts, &L->cconsts, d); break;
        case DECL_FUNC: push_decl(c, &L->funcs, &L->nfuncs, &L->cfuncs, d); break;
        default: push_decl(c, &L->kernels, &L->nkernels, &L->ckernels, d); break;
      }
    }
  }
}

/* ---- structs ----------------------------------------------------------------------------------
 */

static Type *field_type(Check *c, Decl *s, Field *f) {
  Type *t = resolve_type(c, f->texpr, "a struct field");
  if (!t) {
    diag_error(c->diags, f->loc, "a struct field cannot be auto");
    return &ty_error;
  }
  if (t->kind == TY_VOID) {
    diag_error(c->diags, f->loc, "field '%s' cannot be void", f->name);
    return &ty_error;
  }
  return t;
}

static void layout(Check *c, Decl *s, Lists *L);

/* Resolves a field's type, laying out a struct it contains first. */
static Type *field_struct(Check *c, Decl *s, Field *f, Lists *L) {
  Type *t = field_type(c, s, f);
  if (t->kind != TY_STRUCT) return t;
  Info *in = info(c, t->sdecl);
  if (in->state == 1) {
    diag_error(c->diags, f->loc, "field '%s' makes struct '%s' contain itself", f->name,
               t->sdecl->name);
    return &ty_error;
  }
  layout(c, t->sdecl, L);
  return t;
}

static void dup_fields(Check *c, Decl *s) {
  for (int i = 0; i < s->nfields; i++)
    for (int j = 0; j < i; j++)
      if (s->fields[i].name && s->fields[j].name &&
          strcmp(s->fields[i].name, s->fields[j].name) == 0) {
        diag_error(c->diags, s->fields[i].loc, "duplicate field '%s' in struct '%s'",
                   s->fields[i].name, s->name);
        diag_note(c->diags, s->fields[j].loc, "'%s' was first declared here", s->fields[j].name);
        break;
      }
}

/* C layout: each field at its alignment, the size a multiple of the largest. */
static void layout(Check *c, Decl *s, Lists *L) {
  Info *in = info(c, s);
  if (in->state != 0) return;
  in->state = 1;
  if (nest_enter(c, s->name_loc)) {
    if (s->nfields == 0) diag_error(c->diags, s->name_loc, "struct '%s' has no fields", s->name);
    dup_fields(c, s);
    int64_t off = 0;
    int align = 1;
    for (int i = 0; i < s->nfields; i++) {
      Field *f = &s->fields[i];
      f->ty = field_struct(c, s, f, L);
      int a = f->ty->align > 0 ? f->ty->align : 1;
      off = (off + a - 1) / a * a;
      f->offset = (int)(off < INT_MAX ? off : 0);
      off += f->ty->size;
      align = a > align ? a : align;
      if (off > (1 << 30)) {
        diag_error(c->diags, s->name_loc, "struct '%s' is too large", s->name);
        off = 0;
        break;
      }
    }
    s->sty->size = (int)((off + align - 1) / align * align);
    s->sty->align = align;
  }
  c->nest--;
  in->state = 2;
  push_decl(c, &L->structs, &L->nstructs, &L->cstructs, s);
}

static void check_structs(Check *c, Lists *L) {
  Decl **all = L->structs;
  int n = L->nstructs;
  for (int i = 0; i < n; i++) {
    Type *t = alloc(c, sizeof *t);
    t->kind = TY_STRUCT;
    t->sdecl = all[i];
    t->name = all[i]->name;
    t->align = 1;
    all[i]->sty = t;
  }
  /* Re-list in dependency order: a struct after the structs it contains. */
  L->structs = NULL;
  L->nstructs = L->cstructs = 0;
  for (int i = 0; i < n; i++) layout(c, all[i], L);
}

/* ---- functions ----------------------------------------------------------------------------------
 */

static void signature(Check *c, Decl *d) {
  bool kernel = d->kind == DECL_KERNEL;
  Type *rt = d->texpr ? resolve_type(c, d->texpr, "a return type") : &ty_void;
  if (!rt) {
    diag_error(c->diags, d->texpr->loc, "a function cannot return auto");
    rt = &ty_error;
  }
  if (kernel && rt->kind != TY_VOID && !is_err(rt))
    diag_error(c->diags, d->texpr->loc, "kernel '%s' must return void", d->name);
  d->ret = kernel ? &ty_void : rt;
  for (int i = 0; i < d->nparams; i++) {
    Var *p = d->params[i];
    p->is_param = true;
    Type *t = resolve_type(c, p->texpr, NULL);
    if (!t) {
      diag_error(c->diags, p->loc, "parameter '%s' cannot be auto", p->name);
      t = &ty_error;
    } else if (t->kind == TY_VOID) {
      diag_error(c->diags, p->loc, "parameter '%s' cannot be void", p->name);
      t = &ty_error;
    }
    p->ty = t;
  }
}

static bool same_params(Type *const *a, int na, Type *const *b, int nb) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!type_equal(a[i], b[i])) return false;
  return true;
}

/* Overloads must differ in their parameter types, from each other and from
 * builtins of the same name. A repeated signature is reported and leaves the
 * overload set, so calls do not cascade into "ambiguous call" errors. */
static void check_overloads(Check *c, Sym *s) {
  int kept = 0;
  for (int i = 0; i < s->nfns; i++) {
    Decl *d = s->fns[i];
    Type **pi = param_types(c, d);
    bool dup = false;
    for (int j = 0; j < kept && !dup; j++) {
      if (same_params(pi, d->nparams, param_types(c, s->fns[j]), s->fns[j]->nparams)) {
        diag_error(c->diags, d->name_loc, "redefinition of %s",
                   sig_text(c, d->name, pi, d->nparams));
        diag_note(c->diags, s->fns[j]->name_loc, "first defined here");
        dup = true;
      }
    }
    int first, nb = builtin_overloads(d->name, &first);
    for (int j = 0; j < nb && !dup; j++) {
      const Builtin *b = builtin_get(first + j);
      if (same_params(pi, d->nparams, b->params, b->nparams)) {
        diag_error(c->diags, d->name_loc, "%s is already a builtin function",
                   sig_text(c, d->name, pi, d->nparams));
        dup = true;
      }
    }
    if (!dup) {
      d->overload = kept;
      s->fns[kept++] = d;
    }
  }
  s->nfns = kept;
}

static void check_body(Check *c, Decl *d) {
  c->fn = d;
  c->fninfo = info(c, d);
  c->nvars = 0;
  c->locals = (Map){0};
  c->nundo = 0;
  c->depth = 0;
  c->loops = 0;
  scope_open(c);
  for (int i = 0; i < d->nparams; i++) {
    d->params[i]->id = c->nvars++;
    declare(c, d->params[i]);
  }
  if (d->body)
    for (Node *s = d->body->kind == ND_BLOCK ? d->body->body : d->body; s; s = s->next) stmt(c, s);
  scope_close(c);
  d->nvars = c->nvars;
  bool needs = d->kind == DECL_FUNC && d->ret && d->ret->kind != TY_VOID && !is_err(d->ret);
  if (needs && d->body && !c->too_deep && !returns(d->body))
    diag_error(c->diags, end_loc(d->body->loc),
               "function '%s' may reach its end without returning a value", d->name);
  c->fn = NULL;
  c->fninfo = NULL;
}

/* ---- constants
 * ------------------------------------------------------------------------------------ */

static void eval_const(Check *c, Decl *d) {
  Info *in = info(c, d);
  Decl *fn = c->fn;
  Info *fi = c->fninfo;
  c->fn = NULL;
  c->fninfo = NULL;
  in->state = 1;
  Type *t = resolve_type(c, d->texpr, "a constant");
  if (t && !is_err(t) && !type_is_scalar(t)) {
    diag_error(c->diags, d->texpr->loc, "constant '%s' must have a scalar type, not %s", d->name,
               tname(t));
    t = &ty_error;
  }
  int errors = diag_errors(c->diags);
  Val v = expr(c, d->init);
  if (!is_err(v.ty) && !v.is_const && diag_errors(c->diags) == errors && !is_err(t)) {
    diag_error(c->diags, d->init->loc, "the value of constant '%s' is not a constant expression",
               d->name);
    v = val_err();
  }
  if (!t)
    default_type(c, d->init, &v);
  else if (!is_err(t))
    convert(c, d->init, &v, t, (Ctx){"initialization of", d->name, 0});
  if (is_err(t)) v = val_err();
  if (!is_err(v.ty)) set_const(d->init, v);
  in->cval = v;
  in->state = 2;
  c->fn = fn;
  c->fninfo = fi;
}

/* ---- the call graph
 * ---------------------------------------------------------------------------------- */

typedef struct Frame {
  Decl *d;
  int next;
} Frame;

/* The cycle as "a -> b -> ... -> a"; a long one shows its first functions
 * and its last, and counts the rest. */
static void report_cycle(Check *c, Frame *st, int top, Info *callee, Edge e) {
  int first = callee->stackpos, n = top - first + 1;
  int head = n > MAX_CYCLE_NAMES ? MAX_CYCLE_NAMES - 1 : n;
  size_t len = strlen(e.callee->name) + 64 + strlen(st[top].d->name);
  for (int i = first; i < first + head; i++) len += strlen(st[i].d->name) + 4;
  char *path = alloc(c, len);
  char *p = path;
  for (int i = first; i < first + head; i++) p += sprintf(p, "%s -> ", st[i].d->name);
  if (head < n) p += sprintf(p, "... (%d more) -> %s -> ", n - head - 1, st[top].d->name);
  strcpy(p, e.callee->name);
  diag_error(c->diags, e.loc, "recursion is not allowed: %s", path);
  diag_note(c->diags, (SrcLoc){0}, "GPUs have no call stack for recursive calls; use a loop");
}

/* Iterative DFS (call chains may be long); each back edge is one cycle. */
static void find_recursion(Check *c, Decl **fns, int n) {
  Frame *st = alloc(c, (size_t)(n + 1) * sizeof *st);
  for (int r = 0; r < n; r++) {
    Info *ri = info(c, fns[r]);
    if (ri->state != 0) continue;
    int top = 0;
    st[0] = (Frame){fns[r], 0};
    ri->state = 1;
    ri->stackpos = 0;
    while (top >= 0) {
      Info *in = info(c, st[top].d);
      if (st[top].next >= in->nedges) {
        in->state = 2;
        top--;
        continue;
      }
      Edge e = in->edges[st[top].next++];
      Info *ci = info(c, e.callee);
      if (ci->state == 1) {
        report_cycle(c, st, top, ci, e);
      } else if (ci->state == 0 && top < n) {
        ci->state = 1;
        ci->stackpos = ++top;
        st[top] = (Frame){e.callee, 0};
      }
    }
  }
}

static void mark_used(Check *c, Decl **kernels, int nk, int nfuncs) {
  Decl **queue = alloc(c, (size_t)(nk + nfuncs + 1) * sizeof *queue);
  int head = 0, tail = 0;
  for (int i = 0; i < nk; i++) {
    kernels[i]->used = true;
    queue[tail++] = kernels[i];
  }
  while (head < tail) {
    Info *in = info(c, queue[head++]);
    for (int i = 0; i < in->nedges; i++) {
      Decl *d = in->edges[i].callee;
      if (!d->used && tail < nk + nfuncs) {
        d->used = true;
        queue[tail++] = d;
      }
    }
  }
}

/* ---- the program
 * ---------------------------------------------------------------------------------------- */

static void run(Check *c, Lists *L) {
  collect(c, L);
  check_structs(c, L);
  for (int i = 0; i < L->nfuncs; i++) signature(c, L->funcs[i]);
  for (int i = 0; i < L->nkernels; i++) signature(c, L->kernels[i]);
  for (int i = 0; i < L->nfuncs; i++) {
    Sym *s = global(c, L->funcs[i]->name);
    if (s->fns[0] == L->funcs[i]) /* once per name, in source order */
      check_overloads(c, s);
  }
  for (int i = 0; i < L->nconsts; i++)
    if (info(c, L->consts[i])->state == 0) eval_const(c, L->consts[i]);
  for (int i = 0; i < L->nfuncs; i++) check_body(c, L->funcs[i]);
  for (int i = 0; i < L->nkernels; i++) check_body(c, L->kernels[i]);
  find_recursion(c, L->funcs, L->nfuncs);
  mark_used(c, L->kernels, L->nkernels, L->nfuncs);
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
  return diag_errors(prog->diags) == before;
}
