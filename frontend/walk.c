/* walk.c: walks without recursion: every node of a tree, and the call graph.
 *
 * Requires: a tree from the parser (typed or not); for the call graph, a
 * Program check_program accepted. Produces: ast_walk, for passes that ask a
 * question of a whole function body or expression (does it call tid(d), write
 * an array, declare a local of this size?), and ast_call_graph: who calls
 * whom, and the functions in an order where callees come first, for passes
 * that add something up over calls. Breaks: nothing; ast_walk's visit order is
 * unspecified, so it suits questions, not rewriting.
 *
 * An explicit stack instead of recursion: statements nest at most 256 deep
 * and expressions AST_MAX_DEPTH, but an else-if chain hangs its ifs off each
 * other's else to any length, a call chain can be 20,000 functions long, and
 * the compiler runs on the threads its callers give it, whose stacks may be
 * small.
 */
#include "ast.h"

#include <stdlib.h>
#include <string.h>

typedef struct Stack {
  const Node **v;
  size_t n, cap;
  const Node *inline_v[64];
} Stack;

static bool push(Stack *s, const Node *n) {
  if (!n) return true;
  if (s->n == s->cap) {
    size_t cap = s->cap * 2;
    const Node **v = s->v == s->inline_v ? malloc(cap * sizeof *v) : realloc(s->v, cap * sizeof *v);
    if (!v) return false;
    if (s->v == s->inline_v) memcpy(v, s->inline_v, sizeof s->inline_v);
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = n;
  return true;
}

/* The children of n: single nodes, and every element of its two lists. */
static bool push_children(Stack *s, const Node *n) {
  const Node *one[] = {
      n->lhs, n->rhs,  n->cond, n->then,
      n->els, n->init, n->inc,  n->kind == ND_VARDECL && n->var ? n->var->init : NULL};
  bool ok = true;
  for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) ok = ok && push(s, one[i]);
  for (const Node *k = n->body; ok && k; k = k->next) ok = push(s, k);
  for (const Node *k = n->args; ok && k; k = k->next) ok = push(s, k);
  return ok;
}

int ast_walk(const Node *n, bool (*visit)(const Node *, void *), void *ud) {
  Stack s = {.cap = sizeof s.inline_v / sizeof s.inline_v[0]};
  s.v = s.inline_v;
  int found = 0;
  bool ok = push(&s, n);
  while (ok && !found && s.n) {
    const Node *x = s.v[--s.n];
    if (visit(x, ud))
      found = 1;
    else
      ok = push_children(&s, x);
  }
  if (s.v != s.inline_v) free(s.v);
  return ok ? found : -1;
}

/* ---- the call graph ------------------------------------------------------------------ */

typedef struct Callees {
  const Decl **v;
  int n, cap;
  bool oom;
} Callees;

static bool add_callee(const Node *n, void *arg) {
  Callees *c = arg;
  if (n->kind != ND_CALL || n->call_kind != CALL_FUNC || !n->fn) return false;
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 4;
    const Decl **v = realloc(c->v, (size_t)cap * sizeof *v);
    if (!v) return c->oom = true;
    c->v = v;
    c->cap = cap;
  }
  c->v[c->n++] = n->fn;
  return false;
}

/* Index of a callee in Program.funcs, or -1. */
static int func_index(const Program *p, const Decl *d) {
  return d && d->index >= 0 && d->index < p->nfuncs && p->funcs[d->index] == d ? d->index : -1;
}

/* Depth-first from every function, an explicit stack of (function, next
 * callee): each function is listed once its callees are. */
static bool post_order(const Program *p, AstCallGraph *g) {
  int nf = p->nfuncs, *stack = malloc(((size_t)nf + 1) * 2 * sizeof *stack), k = 0;
  signed char *state = calloc((size_t)nf + 1, 1); /* 0 new, 1 on the stack, 2 listed */
  for (int r = 0; stack && state && r < nf; r++) {
    if (state[r]) continue;
    int top = 0;
    stack[0] = r, stack[1] = 0, state[r] = 1;
    while (top >= 0) {
      int f = stack[2 * top], *next = &stack[2 * top + 1];
      if (*next < g->ncallees[f]) {
        int c = func_index(p, g->callees[f][(*next)++]);
        if (c >= 0 && state[c] == 0) {
          ++top;
          stack[2 * top] = c, stack[2 * top + 1] = 0, state[c] = 1;
        }
        continue;
      }
      state[f] = 2;
      g->order[k++] = f;
      top--;
    }
  }
  bool ok = stack && state;
  free(stack);
  free(state);
  return ok;
}

bool ast_call_graph(const Program *p, AstCallGraph *g) {
  int n = p->nfuncs + p->nkernels;
  *g = (AstCallGraph){.n = n};
  g->callees = calloc((size_t)n + 1, sizeof *g->callees);
  g->ncallees = calloc((size_t)n + 1, sizeof *g->ncallees);
  g->order = calloc((size_t)p->nfuncs + 1, sizeof *g->order);
  bool ok = g->callees && g->ncallees && g->order;
  for (int i = 0; ok && i < n; i++) {
    const Decl *d = i < p->nfuncs ? p->funcs[i] : p->kernels[i - p->nfuncs];
    Callees c = {0};
    ok = ast_walk(d->body, add_callee, &c) >= 0 && !c.oom;
    g->callees[i] = c.v;
    g->ncallees[i] = c.n;
  }
  ok = ok && post_order(p, g);
  if (!ok) ast_call_graph_free(g);
  return ok;
}

void ast_call_graph_free(AstCallGraph *g) {
  for (int i = 0; g->callees && i < g->n; i++) free(g->callees[i]);
  free(g->callees);
  free(g->ncallees);
  free(g->order);
  *g = (AstCallGraph){0};
}
