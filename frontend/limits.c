/* limits.c: what a checked program must also fit: a thread's stack and a
 * kernel's argument block.
 *
 * Requires: a Program check_program accepted (types known, calls resolved, no
 * recursion). Produces: errors for
 *  - a value past LIMIT_VALUE bytes: a local variable, a parameter or a return
 *    value lives on the stack of the thread running the kernel, which is small
 *    on a GPU and fixed for the CPU's pool threads (a 16 MiB struct local used
 *    to kill the process at launch);
 *  - a kernel that needs more than LIMIT_STACK bytes of stack by this count:
 *    along its deepest chain of calls, each function's parameters, locals and
 *    return value and CALL_BYTES for the call (a return address and a saved
 *    frame pointer). Many locals just under the first limit, or a chain of
 *    100,000 calls, would overflow the stack too. The C compiler's own
 *    temporaries come on top (at -O0 it may copy every struct once more), so
 *    the limit stays well inside the 2 MiB a thread running kernels needs;
 *  - a kernel whose parameters take more than LIMIT_ARGS bytes in its argument
 *    block (type_arg_size; an array is a 72-byte descriptor): CUDA passes at
 *    most 4 KiB to a kernel, and the launch context (kern_abi.h kn_ctx) takes
 *    part of it. Past that NVRTC would fail on code the checker accepted.
 * Breaks: nothing; it reads the tree. The stack sum stops at the first value
 * error (the value is then the mistake to fix).
 */
#include "ast.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  LIMIT_VALUE = 64 << 10,
  LIMIT_STACK = 512 << 10,
  CALL_BYTES = 16,
  LIMIT_ARGS = 4000,
  PATH_NAMES = 10
};

typedef struct Limits {
  const Program *prog;
  Diags *diags;
  int errors;
} Limits;

/* "<what> takes N bytes (T); a value on a thread's stack is limited to ..." */
static void value_error(Limits *L, SrcLoc loc, const Type *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void value_error(Limits *L, SrcLoc loc, const Type *t, const char *fmt, ...) {
  char what[AST_MAX_IDENT * 2 + 64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  diag_error(L->diags, loc, "%s %d bytes (%s); a value on a thread's stack is limited to %d bytes",
             what, t->size, type_name(t), LIMIT_VALUE);
  diag_note(L->diags, loc, "pass large data in an array parameter instead");
  L->errors++;
}

/* ---- one function's values ---------------------------------------------------------- */

typedef struct Frame {
  Limits *L;
  int64_t bytes; /* parameters, locals and the return value */
} Frame;

static bool local(const Node *n, void *arg) {
  Frame *f = arg;
  if (n->kind != ND_VARDECL || !n->var || !n->var->ty) return false;
  const Type *t = n->var->ty;
  if (t->size > LIMIT_VALUE)
    value_error(f->L, n->var->loc, t, "local %s '%s' takes",
                t->kind == TY_FIXED ? "array" : "variable", n->var->name);
  f->bytes += t->size > 0 ? t->size : 0;
  return false;
}

static int64_t frame_bytes(Limits *L, const Decl *d) {
  bool kernel = d->kind == DECL_KERNEL;
  Frame f = {L, CALL_BYTES};
  for (int i = 0; i < d->nparams; i++) {
    const Var *p = d->params[i];
    int align, size = p->is_ref ? 8 : p->ty ? type_arg_size(p->ty, &align) : 0; /* & a pointer */
    if (size > LIMIT_VALUE)
      value_error(L, p->loc, p->ty, "parameter '%s' of %s '%s' takes", p->name,
                  kernel ? "kernel" : "function", d->name);
    f.bytes += size;
  }
  if (d->ret && d->ret->kind != TY_VOID) {
    if (d->ret->size > LIMIT_VALUE)
      value_error(L, d->texpr ? d->texpr->loc : d->name_loc, d->ret, "function '%s' returns",
                  d->name);
    f.bytes += d->ret->size;
  }
  if (ast_walk(d->body, local, &f) < 0) L->errors++; /* out of memory: no sums */
  f.bytes += d->tile_temps; /* tile temporaries and scratch (check_tile_rules.c) */
  return f.bytes;
}

/* ---- a kernel's argument block -------------------------------------------------------- */

static void args_block(Limits *L, const Decl *k) {
  int64_t off = 0;
  int maxalign = 1;
  for (int i = 0; i < k->nparams; i++) {
    int align, size = type_arg_size(k->params[i]->ty, &align);
    off = (off + align - 1) / align * align + size;
    if (align > maxalign) maxalign = align;
  }
  off = (off + maxalign - 1) / maxalign * maxalign;
  if (off <= LIMIT_ARGS) return;
  diag_error(L->diags, k->name_loc,
             "the parameters of kernel '%s' take %lld bytes; the limit is %d (CUDA passes at "
             "most 4 KiB of arguments to a kernel)",
             k->name, (long long)off, LIMIT_ARGS);
  diag_note(L->diags, k->name_loc, "an array parameter takes 72 bytes, a scalar its size");
  L->errors++;
}

/* ---- the stack along calls -------------------------------------------------------------- */

/* "k -> f -> g": the kernel and its deepest chain, the middle of a long one elided. */
static char *chain_text(const Program *p, const Decl *k, const int *next) {
  size_t cap = strlen(k->name) + 64, n = 0;
  int len = 0;
  for (int f = next[p->nfuncs + k->index]; f >= 0; f = next[f]) len++;
  for (int f = next[p->nfuncs + k->index], i = 0; f >= 0; f = next[f], i++)
    if (i < PATH_NAMES - 1 || i == len - 1) cap += strlen(p->funcs[f]->name) + 4;
  char *s = malloc(cap);
  if (!s) return NULL;
  n += (size_t)snprintf(s, cap, "%s", k->name);
  for (int f = next[p->nfuncs + k->index], i = 0; f >= 0; f = next[f], i++) {
    if (i < PATH_NAMES - 1 || i == len - 1)
      n += (size_t)snprintf(s + n, cap - n, " -> %s", p->funcs[f]->name);
    else if (i == PATH_NAMES - 1)
      n += (size_t)snprintf(s + n, cap - n, " -> ... (%d more)", len - PATH_NAMES);
  }
  return s;
}

/* deep[f]: f's values plus those of its deepest callee chain; next[f]: the
 * callee on that chain (-1 at its end). Callees first: ast_call_graph. */
static void stacks(Limits *L, const AstCallGraph *g, const int64_t *own) {
  const Program *p = L->prog;
  int n = p->nfuncs + p->nkernels;
  int64_t *deep = calloc((size_t)n + 1, sizeof *deep);
  int *next = malloc(((size_t)n + 1) * sizeof *next);
  for (int k = 0; deep && next && k < n; k++) {
    int f = k < p->nfuncs ? g->order[k] : k; /* every function, then the kernels */
    next[f] = -1;
    deep[f] = own[f];
    for (int j = 0; j < g->ncallees[f]; j++) {
      const Decl *c = g->callees[f][j];
      if (own[f] + deep[c->index] > deep[f]) deep[f] = own[f] + deep[c->index], next[f] = c->index;
    }
  }
  for (int i = 0; deep && next && i < p->nkernels; i++) {
    const Decl *k = p->kernels[i];
    if (deep[p->nfuncs + i] <= LIMIT_STACK) continue;
    char *chain = chain_text(p, k, next);
    diag_error(L->diags, k->name_loc,
               "kernel '%s' needs about %lld bytes of stack (the limit is %d): the locals, "
               "parameters and return values along %s, and %d bytes a call",
               k->name, (long long)deep[p->nfuncs + i], LIMIT_STACK, chain ? chain : k->name,
               CALL_BYTES);
    diag_note(L->diags, k->name_loc, "pass large data in array parameters instead");
    free(chain);
  }
  free(deep);
  free(next);
}

bool check_limits(Program *p) {
  Limits L = {p, p->diags, 0};
  int n = p->nfuncs + p->nkernels;
  int64_t *own = calloc((size_t)n + 1, sizeof *own);
  for (int i = 0; own && i < n; i++)
    own[i] = frame_bytes(&L, i < p->nfuncs ? p->funcs[i] : p->kernels[i - p->nfuncs]);
  for (int i = 0; i < p->nkernels; i++) args_block(&L, p->kernels[i]);
  AstCallGraph g;
  if (own && !L.errors && ast_call_graph(p, &g)) {
    stacks(&L, &g, own);
    ast_call_graph_free(&g);
  }
  free(own);
  return diag_errors(p->diags) == 0;
}
