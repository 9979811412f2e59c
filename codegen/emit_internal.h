/* emit_internal.h: what the emitter core (emit.c) shares with its two targets.
 *
 * The core (emit.c: bodies; emit_decl.c: the unit around them) writes everything that is the same for C and CUDA: types, structs,
 * functions, kernel bodies. A target (emit_c.c, emit_cuda.c) writes only its
 * prologue (qualifier macros) and the kernel entry points around the body.
 */
#ifndef KERN_EMIT_INTERNAL_H
#define KERN_EMIT_INTERNAL_H

#include "buf.h"
#include "emit.h"

typedef struct Emitter Emitter;

/* An operand already evaluated into the temporary `name` (see emit.c's ordered). */
typedef struct EmitBound {
  const Node *node;
  char name[24];
} EmitBound;

typedef struct EmitTargetOps {
  /* macros KN_FUNC (user functions) and KN_ZERO ({0} / {}) and anything else */
  void (*prologue)(Emitter *);
  /* the entry points of kernel k; its body functions are already written */
  void (*entries)(Emitter *, const Decl *k);
  /* text after the core's helpers (kn_ctx is declared there), or NULL */
  const char *helpers;
} EmitTargetOps;

struct Emitter {
  Buf out;
  const Program *prog;
  const EmitOptions *opts;
  const EmitTargetOps *target;
  const Decl *fn; /* the function or kernel being written */
  bool in_kernel;
  int depth;      /* indentation */
  int cont_label; /* innermost loop is a `for`: its continue label, else 0 */
  int nlabels;
  Buf temps; /* declarations of the current statement's temporaries */
  int ntemps;
  EmitBound *bound; /* operands evaluated into temporaries, innermost last */
  int nbound, cap_bound;
  signed char *fn_effects; /* per prog->funcs[i]: 0 not known, 1 none, 2 side effects */
  char **snames;           /* per prog->structs[i]: its C name, "ks_<name>" */
  /* per parameter of the kernel being written: how its dense body reaches an
   * array (EmitAccess); NULL while writing anything else */
  signed char *access;
  bool dense; /* writing a dense body */
  /* tiles (emit_tile.c): the element index while writing a tile value
   * element by element, else NULL; the count of tile temporaries */
  const char *tile_i;
  int ntile;
  const Node *cpu_only; /* a tile load a GPU reduction reads from memory itself */
  /* the layout of the function's tile storage (emit_tile.c): the next free
   * byte of its variables' part and of its temporaries' stack; tile_over
   * when either passed what the checker counted (Decl.tile_vars, .tile_storage) */
  int64_t tile_var_sp, tile_sp;
  bool tile_over;
  /* verify_fp: the next array element written takes its indices from kn_fx[]
   * (fx_id 0), or from kn_fx<fx_id>[] (an atomic inside an expression) */
  bool fx_index;
  int fx_id;
};

/* How a kernel's dense body reaches an array parameter. The dense variant runs
 * only when every array is C-contiguous and no two overlap (the runtime checks
 * at launch), so an array the body alone touches (never passed to a function)
 * is a restrict pointer, const when nothing writes it. */
typedef enum { EMIT_ACCESS_PLAIN, EMIT_ACCESS_RESTRICT, EMIT_ACCESS_READONLY } EmitAccess;

extern const EmitTargetOps emit_target_c, emit_target_cuda;

/* The C spelling of a type that can be a variable: "float", "kn_vec3", "ks_Particle". */
const char *emit_ctype(Emitter *, const Type *);
/* Writes the arguments a dense body takes after the index: each restrict
 * array's data pointer from the args block `a` (see EmitAccess); aligned:
 * telling the compiler it is 16-byte aligned, as the dense variant's arrays
 * are (stdlib/kern_abi.h). */
void emit_restrict_args(Emitter *, const Decl *k, bool aligned);
/* ---- shared by emit.c (bodies) and emit_decl.c (the unit around them) ---- */

void emit_indent(Emitter *);
/* The C type of t where the user's bytes are: a bool is a byte. */
const char *emit_storage_ctype(Emitter *, const Type *);
/* The C type a reference to a t points at (a reference parameter is a pointer). */
const char *emit_ref_ctype(Emitter *, const Type *);
void emit_var_name(Emitter *, const Var *);
void emit_line_directive(Emitter *, SrcLoc);
/* The statements of a block, one level deeper. */
void emit_block_body(Emitter *, const Node *list);
/* Which functions have side effects (Emitter.fn_effects). */
void emit_find_effects(Emitter *);

void emit_expr(Emitter *, const Node *);
/* Does n have a side effect (a tiled function's call does not count)? */
bool emit_effects(Emitter *, const Node *);
/* Does n name storage (a variable, an array or local array element, a field or component of one)? */
bool emit_is_lvalue(const Node *n);
/* printf(format, args...) as kn_printf, %v and a bool's %s spelled out (emit_printf.c). */
void emit_printf(Emitter *, const Node *n);
/* The lvalue of an assignment's target (ordered where its operands need it). */
void emit_target(Emitter *, const Node *);
/* Text written aside: emit_aside starts it and returns what emit_aside_end
 * takes to stop it; the text is the caller's to free (NULL: none, or out of
 * memory, which e->out records). */
Buf emit_aside(Emitter *);
char *emit_aside_end(Emitter *, Buf saved);
/* The module file's number in the program (debug records). */
int emit_file_index(const Program *, const char *file);
/* ---- emit_verify.c: verify_fp's checks of stored floats ---- */
/* Opens `{ int64_t kn_fx[4] = {indices}; T *kn_p = &target;` when the store
 * to lhs is checked; false (nothing written) when it is not. */
bool emit_fp_open(Emitter *, const Node *lhs);
/* The checks of *kn_p after the store, and the closing brace. */
void emit_fp_close(Emitter *, const Node *lhs);
/* An atomic call written as a statement, with its element checked; false
 * (nothing written) when it is not checked. */
bool emit_fp_atomic_stmt(Emitter *, const Node *call);
/* An atomic call inside an expression (its old value used), with its element
 * checked: a comma expression over temporaries declared before the statement;
 * false (nothing written) when it is not checked. */
bool emit_fp_atomic_expr(Emitter *, const Node *call);
/* A call written as a statement that passes checked elements to reference
 * parameters: the elements tested after it returns; false (nothing written)
 * when it passes none. */
bool emit_fp_call_stmt(Emitter *, const Node *call);
/* tile_store and tile_atomic_add: whether the elements written to array arr are
 * checked, and the test of one just written through kn_p (indices kn_a0, kn_a1). */
bool emit_fp_tile_checked(Emitter *, const Node *arr, const Type *elem);
void emit_fp_tile_check(Emitter *, const Node *at, const Node *arr, const Type *elem);
/* The helpers the checks call (the prologue, in verify_fp mode). */
extern const char *const emit_fp_helpers;
/* From now on n is written as `name` (innermost binding first). */
void emit_bind(Emitter *, const Node *n, const char *name);
const char *emit_bound(Emitter *, const Node *n); /* NULL when n is not bound */
void emit_number(Emitter *, const Type *t, double v);
/* l op r on scalars of type t, with the language's rules (wrapping, f16 ...) */
void emit_binop_text(Emitter *, int op, const Type *t, const char *l, const char *r);
void emit_statement(Emitter *, const Node *n);

/* ---- emit_vecn.c: the vec<T, N> types, conversions and slices the program uses ---- */
void emit_vecn_defs(Emitter *);

/* ---- emit_quatn.c: the quat<T> rows the stdlib cannot define ---- */
struct Builtin;
bool emit_quatn_wants(const struct Builtin *); /* a row emit_quatn_row writes */
void emit_quatn_row(Emitter *, int index);

/* ---- emit_tile.c: tiles ---- */

/* A tile value element by element (e->tile_i set): makers, tile_where, tile_map. */
void emit_tile_elem(Emitter *, const Node *n);
/* t[i] / t[i, j]: a scalar read of a tile in storage. */
void emit_tile_read(Emitter *, const Node *n);
/* A call of a tiled function; ret: the storage its tile result goes to. */
void emit_tile_call(Emitter *, const Node *n, const char *ret);
/* A statement of a tiled function, with its tile operations and guarded side
 * effects; false: an ordinary statement the caller writes. */
bool emit_tile_stmt(Emitter *, const Node *n);
/* emit_mmloop.c: `if (KN_MMLOOP(...)) {} else ` before a tiled matrix product's k loop
 * that a GPU routine can run whole; nothing before any other statement. */
void emit_mmloop_guard(Emitter *, const Node *n);
/* The threads a block runs such loops of kernel k's own body with: 0 when
 * it has none, else the block of its entries kk_K_cuda[_dense]_mm. */
int emit_mmloop_threads(Emitter *, const Decl *k);
/* A tiled function's parameter list after kn_lin (its storage's base kn_sb
 * first); at the entry of a tiled function or kernel, the layout of its tile
 * storage begun (a kernel's base kn_sb is 0) and the copies of its tile
 * parameters; at its end, an #error if the layout outgrew what the checker
 * counted (a compiler bug: better no module than a wrong one). */
void emit_tile_params(Emitter *, const Decl *f);
void emit_tile_entry(Emitter *, const Decl *f);
void emit_tile_exit(Emitter *, const Decl *f);

/* The core's expression writer, for the files that write parts of expressions. */
typedef void (*EmitExprFn)(Emitter *, const Node *);
/* lower_bound(...) (emit_special.c). */
void emit_lower_bound(Emitter *, const Node *call, EmitExprFn expr);
/* A random helper, kn_rand_<name>_<nargs>(&state, ...) (emit_special.c);
 * addr writes the state's &. */
void emit_rand_fn(Emitter *, const Node *call, EmitExprFn expr, EmitExprFn addr);
/* Writes the decomposition of linear index `lin` into kn_t0..kn_t3 (used tids only). */
void emit_tid_decl(Emitter *, const char *lin);

#endif
