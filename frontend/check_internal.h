/* check_internal.h: what the checker's files share (frontend/check*.c).
 *
 * The checker is one pass over a whole Program (check_program, declared in
 * ast.h), split along its seams: check.c drives it (declarations first, then
 * bodies, then the call graph and what later stages need) and holds the
 * helpers everything uses; each other file owns one part of the language, as
 * the sections below say. Everything a file shares is ck_-prefixed; the rest
 * is static. Out of memory anywhere unwinds to check_program (Check.oom).
 */
#ifndef KERN_CHECK_INTERNAL_H
#define KERN_CHECK_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "ast.h"
#include "builtins.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* Deeper expressions or statements than this are refused rather than risking
 * the C stack (the parser limits parentheses and stops operator chains there
 * too; an else-if chain is walked in a loop, not nested). */
enum { MAX_NEST = AST_MAX_DEPTH, MAX_CAND_NOTES = 8 };

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
  Decl **gens; /* generic functions of the name, in declaration order */
  int ngens, capgens;
  int ninsts; /* instances in Program.funcs: their overload numbers follow nfns */
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
  Decl **insts; /* generic functions: every instance made (signatures checked) */
  int ninsts, capinsts;
  bool listed; /* an instance: in Program.funcs, its body checked or to be */
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
  struct Lists *lists; /* the tables being filled: instances join funcs */
  Map statics;         /* Var -> Val: a `static for` variable's value in this iteration */
  Decl *inst;          /* the instance whose signature or body is being checked, or NULL */
  int unroll_at;       /* c->loops where the innermost `static for` body is, or -1 */
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

/* The Program's tables while they are being filled. */
typedef struct Lists Lists;
struct Lists {
  Decl **structs, **consts, **funcs, **kernels;
  int nstructs, nconsts, nfuncs, nkernels;
  int cstructs, cconsts, cfuncs, ckernels;
};

/* ---- small predicates and values, inline: the checker asks them everywhere ---- */

static inline bool ck_is_err(const Type *t) { return !t || t->kind == TY_ERROR; }
static inline bool ck_is_untyped(const Type *t) {
  return t && (t->kind == TY_UNTYPED_INT || t->kind == TY_UNTYPED_FLOAT);
}
/* Vectors, matrices, quats and transforms: their operators live in the builtin
 * table; they take an index, and len() of one is its component (row) count. */
static inline bool ck_is_vmq(const Type *t) {
  return t &&
         (t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT || t->kind == TY_TRANSFORM);
}
static inline bool ck_is_intlike(const Type *t) {
  return type_is_int(t) || (t && t->kind == TY_UNTYPED_INT);
}
static inline bool ck_is_numlike(const Type *t) { return type_is_numeric(t) || ck_is_untyped(t); }
static inline Val ck_val_err(void) { return (Val){.ty = &ty_error}; }
static inline Val ck_val_of(Type *t) { return (Val){.ty = t}; }
static inline const char *ck_tname(const Type *t) { return type_name(t); }
static inline bool ck_is_compare(int op) {
  return op == TK_LT || op == TK_GT || op == TK_LE || op == TK_GE || op == TK_EQEQ || op == TK_NE;
}
static inline bool ck_is_shift(int op) { return op == TK_SHL || op == TK_SHR; }
static inline bool ck_is_bitwise(int op) { return op == TK_AMP || op == TK_PIPE || op == TK_CARET; }

/* ---- check.c: the driver; memory, messages, scopes, types as written, rewriting ---- */

void *ck_alloc(Check *c, size_t size);
void *ck_grow(Check *c, void *old, int n, int *cap, size_t elem);
/* The "op+" ... names the builtin table uses for operators. */
const char *ck_op_builtin_name(int op);
const char *ck_ctx_text(Check *c, Ctx x);
/* "f(int32, float32)" */
const char *ck_sig_text(Check *c, const char *name, Type *const *types, int n);
bool ck_nest_enter(Check *c, SrcLoc loc);
void ck_scope_open(Check *c);
void ck_scope_close(Check *c);
void ck_declare(Check *c, Var *v);
Sym *ck_global(Check *c, const char *name);
/* Resolves a TypeExpr; `what` names the place for "cannot be an array" errors
 * (NULL where arrays are allowed). auto resolves to NULL: the caller decides. */
Type *ck_resolve_type(Check *c, TypeExpr *te, const char *what);
/* The vec<T, N>, mat<T, M, N> or quat<T> of te (its vecn_elem deferred) for T =
 * elem; NULL when elem makes none. */
Type *ck_vecn_of(const TypeExpr *te, const Type *elem);
Type *ck_ptr_to(Check *c, Type *t);
/* Turns n into a literal holding v (of v's type, which may still be untyped). */
void ck_set_const(Node *n, Val v);
/* Wraps n in an ND_CONV to t (n keeps its place in any list). */
void ck_wrap_conv(Check *c, Node *n, Type *t);

/* ---- check_map.c: the hash map (names, declarations) ---- */

void *ck_map_get(const Map *m, const void *key);
void ck_map_put(Check *c, Map *m, const void *key, void *val);
Info *ck_info(Check *c, Decl *d);

/* ---- check_suggest.c: did-you-mean suggestions ---- */

/* values: locals in scope and consts; functions: user and builtin functions */
const char *ck_suggest(Check *c, const char *name, bool functions);
/* The field of struct s whose name is closest to name, or NULL. */
const char *ck_suggest_field(const Decl *s, const char *name);

/* ---- check_const.c: constant folding (exact 128-bit integers, doubles) ---- */

void ck_fmt_i128(char *buf, size_t cap, i128 v);
/* A constant as the user would write it, for messages. */
const char *ck_val_text(Check *c, const Val *v);
bool ck_int_fits(i128 v, const Type *t);
/* Is d an integer we can hold in an i128 without undefined behaviour? */
bool ck_float_integral(double d);
bool ck_report_overflow(Check *c, SrcLoc loc, const Val *v, const Type *t);
/* Rounds float v to t and checks for overflow. */
bool ck_check_float(Check *c, SrcLoc loc, Val *v, Type *t);
/* The value-preserving conversion of a constant to scalar type t: an untyped
 * constant taking its type, or a typed one widening. Reports and returns false
 * when the value does not fit. */
bool ck_const_convert(Check *c, SrcLoc loc, Val *v, Type *t);
/* An explicit cast of a constant: integers wrap as in C, floats truncate
 * toward zero, bools are 0/1 and anything nonzero is true. */
bool ck_const_cast(Check *c, SrcLoc loc, Val *v, Type *t);
/* The untyped-int-or-untyped-float value of an untyped constant as a float. */
Val ck_as_untyped_float(Val v);
/* a op b on constants of one operand type (checked already); the result
 * replaces a. false: an error was reported. */
bool ck_fold_binary(Check *c, SrcLoc loc, int op, Val *a, const Val *b);
bool ck_fold_unary(Check *c, SrcLoc loc, int op, Val *a);

/* ---- check_overload.c: implicit conversions and overload resolution ---- */

/* Widening within a family: signed, unsigned or float, to a larger size. */
bool ck_widens(const Type *from, const Type *to);
/* Converts n (whose value is *v) implicitly to t, in place: an untyped
 * constant takes the type (range-checked), a typed constant is refolded, any
 * other widening gets an ND_CONV. Reports and returns false otherwise. */
bool ck_convert(Check *c, Node *n, Val *v, Type *t, Ctx x);
/* Gives an untyped constant its default type: int32 or float32. */
void ck_default_type(Check *c, Node *n, Val *v);
/* expr() then default_type(): for places with no expected type. */
Val ck_rvalue(Check *c, Node *n);
Val ck_expect(Check *c, Node *n, Type *t, Ctx x);
/* Conditions of if/while/for/?:, and operands of ! && ||. */
Val ck_expect_bool(Check *c, Node *n, const char *what);
Type **ck_param_types(Check *c, Decl *d);
/* User overloads of name (declaration order), then builtin ones. */
int ck_candidates(Check *c, const char *name, Cand **out);

/* ---- check_vecn.c: vec<T, N> builtins, slices, indices from the end ---- */

/* Adds to *cs (nc candidates) the rows of name over the vec<T, N> types among
 * vals; returns the new count (*cs may be a new array). */
int ck_vecn_cands(Check *c, const char *name, const Val *vals, int na, Cand **cs, int nc);
/* determinant or inverse of a mat<T, M, N> that no row takes (not float, not
 * square, or a size other than 2..4): reported at `at`, true. */
bool ck_vecn_unsupported(Check *c, SrcLoc at, const char *name, const Val *vals, int na);

/* ---- check_quatn.c: quat<T> builtins for T other than float32 ---- */

/* Adds to *cs (nc candidates) the rows of name over the quat<T> types (and,
 * for quat_from_*, quat_rpy, the T-typed values) among vals; returns the new
 * count (*cs may be a new array). */
int ck_quatn_cands(Check *c, const char *name, const Val *vals, int na, Cand **cs, int nc);

/* A negative constant index k of vector, matrix, quat or transform t counts
 * from the end: idx is refolded to k + n; false (reported) below -n. */
bool ck_index_from_end(Check *c, Node *idx, const Val *k, const Type *t);
/* n is base[lo:hi] (ND_INDEX, op TK_COLON) and t base's checked type. */
Val ck_slice(Check *c, Node *n, Type *t);
void ck_report_no_match(Check *c, const char *name, const char *opsym, SrcLoc loc, const Cand *cs,
                        int nc, const Val *vals, int nargs);
/* Picks the single cheapest viable candidate; reports and returns -1 when
 * there is none or several. Arguments of error type stay silent. */
int ck_resolve(Check *c, const char *name, const char *opsym, SrcLoc loc, const Cand *cs, int nc,
               const Val *vals, int nargs);
/* Converts the arguments to the chosen candidate's parameters and marks n. */
Type *ck_apply_cand(Check *c, Node *n, const char *name, const Cand *k, Node **args, Val *vals);

/* ---- check_expr.c: operators, names, members, casts, constructors, calls ---- */

/* Checks lv op rv (also for compound assignments, where fixed is true),
 * converting operands in place; returns the result type or ty_error. */
Type *ck_operate(Check *c, Node *n, int op, Node *ln, Val *a, Node *rn, Val *b, bool fixed);
int ck_count_list(const Node *n);
Val ck_expr(Check *c, Node *n);

/* ---- check_special.c: tid, len, printf, assert, atomics, random numbers ---- */

SpecialKind ck_special_kind(const char *name);
/* inf and nan, when no local or module constant has the name: ident n
 * becomes the float32 value (not a constant: constant folding keeps to finite
 * numbers). False for any other name. */
bool ck_named_float(Node *n);
Val ck_special(Check *c, Node *n, SpecialKind sp);
/* bitcast<T>(x) (check_special.c): the call, or cast, it stands for. */
Val ck_bitcast(Check *c, Node *n);
/* &v passed to a builtin that writes its result there (svd3(A, &U, &s, &V)):
 * v must be a non-const local variable or parameter; types the ND_ADDR node. */
Val ck_out_arg(Check *c, Node *addr);

/* ---- check_tile.c, check_tile_rules.c: tiles ---- */

TileOp ck_tile_op(const char *name); /* TOP_NONE for any other name */
Type *ck_tile_type(Check *c, TypeExpr *te, const char *what);
Val ck_tile_call(Check *c, Node *n, TileOp op);
Type *ck_tile_operate(Check *c, Node *n, int op, Node *ln, Val *a, Node *rn, Val *b, bool fixed);
Val ck_tile_unary(Check *c, Node *n, Val v);
Val ck_tile_index(Check *c, Node *n, Type *t, int nidx);
Val ck_tile_builtin(Check *c, Node *n, const char *name, Node **args, Val *vals, int na);
Val ck_tile_cast(Check *c, Node *n, Type *t, Val v);
/* After the bodies, with the Program's tables filled (see check_tile_rules.c). */
void ck_tile_program(Check *c, Program *p);

/* ---- check_stmt.c: statements and return paths ---- */

void ck_stmt(Check *c, Node *n);
bool ck_returns(const Node *s);
/* The location of the last byte of n (a body's closing brace). */
SrcLoc ck_end_loc(SrcLoc l);

/* ---- check_decl.c: names, structs, signatures, overloads, bodies, call graph ---- */

void ck_collect(Check *c, Lists *L);
/* elem[e0, ...] for te's extents (te->nfixed of them: constant integers of at
 * least 1, at most 2^30 bytes in all), or ty_error (reported); `name` the
 * local array's. elem NULL: auto (an error). */
Type *ck_fixed_type(Check *c, TypeExpr *te, Type *elem, const char *name);
void ck_check_structs(Check *c, Lists *L);
void ck_signature(Check *c, Decl *d);
/* Overloads must differ in their parameter types, from each other and from
 * builtins of the same name. A repeated signature is reported and leaves the
 * overload set, so calls do not cascade into "ambiguous call" errors. */
void ck_check_overloads(Check *c, Sym *s);
void ck_check_body(Check *c, Decl *d);
void ck_eval_const(Check *c, Decl *d);
/* Iterative DFS (call chains may be long); each back edge is one cycle. */
void ck_find_recursion(Check *c, Decl **fns, int n);
void ck_mark_used(Check *c, Decl **kernels, int nk, int nfuncs);

/* ---- check_clone.c: copies of unchecked trees, type variables replaced ---- */

/* names[i] stands for types[i] */
typedef struct CkSubst {
  const char *const *names;
  Type *const *types;
  int n;
} CkSubst;
Node *ck_clone_stmt(Check *c, const Node *n, const CkSubst *s); /* n and below, not siblings */
TypeExpr *ck_clone_texpr(Check *c, const TypeExpr *te, const CkSubst *s);
Var *ck_clone_var(Check *c, const Var *v, const CkSubst *s);

/* ---- check_generic.c: generic functions, static if / for, type queries ---- */

/* Does name have a generic function? */
bool ck_is_generic(Check *c, const char *name);
/* A generic declaration: its type variables differ and name no type. */
void ck_generic_decl(Check *c, Decl *d);
/* The instances of s's generic functions a call of na arguments (vals, and
 * the explicit type arguments of n) can use, added to *cs (nc so far); the
 * new count. When none of the call's candidates has its arity, the reason
 * why a generic did not fit is reported and -1 returned. */
int ck_generic_cands(Check *c, Sym *s, Node *n, const Val *vals, int na, Cand **cs, int nc);
/* An instance chosen by a call: listed in Program.funcs, its body checked later. */
void ck_instance_use(Check *c, Decl *inst);
/* Checks a function's body; an instance's diagnostics get notes naming it. */
void ck_check_fn(Check *c, Decl *d);
void ck_static_if(Check *c, Node *n);
void ck_static_for(Check *c, Node *n);
Val ck_type_query(Check *c, Node *n, SpecialKind sp);
/* A `static for` variable: n becomes its value (a typed constant). */
bool ck_static_ident(Check *c, Node *n, Var *v, Val *out);

/* ---- check_record.c: what later stages need ---- */

/* Numbers the array parameters and local arrays (functions, then kernels)
 * and the messages of asserts for debug records, and finds the arrays
 * atomics reach, through calls to a fixed point (calls never recurse, so it
 * comes after at most one round per call level). */
void ck_record_params(Check *c, Program *p);

#endif
