/* emit_internal.h: what the emitter core (emit.c) shares with its two targets.
 *
 * The core writes everything that is the same for C and CUDA: types, structs,
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
