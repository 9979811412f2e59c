/* check_tile_rules.c: what tiled code must respect, and the tile storage it needs.
 *
 * Requires: a Program whose bodies check_tile.c and the rest of the checker
 * typed, with its tables filled. Produces: ck_tile_program (Decl.tiled,
 * Decl.effects, the rules below, Decl.tile_temps/tile_vars/tile_storage/tile_total) and
 * tile_temp_bytes, tile_materializes, tile_is_storage: the one description of
 * which tile values get storage of their own, which the emitter follows and
 * the limits count (the CPU stack, a GPU block's shared memory).
 *
 * The rules come from how a GPU runs an instance: every thread of a block
 * runs the scalar code (it is uniform), and side effects are done by one
 * thread. So in tiled code a loop condition cannot hold a tile operation (it
 * is computed before the statement), a condition cannot have a side effect,
 * and one statement cannot mix a tile operation with a scalar side effect
 * (their order would not be the source's). Functions given to tile_map,
 * tile_reduce and the scans run once per element: no tiles, no side effects.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"

static bool tile_typed(const Node *n) { return n->ty && n->ty->kind == TY_TILE; }
static bool tile_typed_var(const Var *v) { return v->ty && v->ty->kind == TY_TILE; }

bool tile_materializes(const Node *n) {
  if (!tile_typed(n) || n->kind != ND_CALL) return false;
  if (n->call_kind == CALL_FUNC) return true;
  if (n->call_kind != CALL_TILE) return false;
  switch (n->tile_op) {
    case TOP_LOAD:
    case TOP_TRANSPOSE:
    case TOP_BROADCAST:
    case TOP_RESHAPE:
    case TOP_SCAN_INC:
    case TOP_SCAN_EXC:
    case TOP_MATMUL:
    case TOP_MATMUL_FAST: return true;
    case TOP_SUM:
    case TOP_MIN:
    case TOP_MAX:
    case TOP_ARGMIN:
    case TOP_ARGMAX:
    case TOP_REDUCE: return n->axis >= 0;
    default: return false;
  }
}

bool tile_is_storage(const Node *n) {
  return tile_typed(n) && ((n->kind == ND_IDENT && n->var) || tile_materializes(n));
}

/* Does n read its tile operands other than element by element? */
static bool reads_whole(const Node *n) {
  if (n->kind == ND_INDEX) return n->lhs->ty && n->lhs->ty->kind == TY_TILE;
  if (n->kind != ND_CALL) return false;
  if (n->call_kind == CALL_FUNC) return true;
  if (n->call_kind != CALL_TILE) return false;
  switch (n->tile_op) {
    case TOP_TRANSPOSE:
    case TOP_BROADCAST:
    case TOP_RESHAPE:
    case TOP_SCAN_INC:
    case TOP_SCAN_EXC:
    case TOP_SUM:
    case TOP_MIN:
    case TOP_MAX:
    case TOP_ARGMIN:
    case TOP_ARGMAX:
    case TOP_REDUCE:
    case TOP_MATMUL:
    case TOP_MATMUL_FAST: return true;
    default: return false;
  }
}

/* The tile operand of a reduction or scan (after the function, if any). */
static const Node *reduced_operand(const Node *n) {
  return n->tfn || n->tbuiltin >= 0 ? (n->tile_op == TOP_MIN || n->tile_op == TOP_MAX ||
                                               n->tile_op == TOP_ARGMIN || n->tile_op == TOP_ARGMAX
                                           ? n->args
                                           : n->args->next)
                                    : n->args;
}

int64_t tile_slot(int64_t bytes) { return (bytes + 15) / 16 * 16; }

/* codegen/emit_tile.c's reduce_warps: a first round of n / 128 nodes (leaves
 * of four, 32 a warp), then rounds of 32 to one, alternating between that
 * part and one of n / 4096 nodes (both rounded up). */
int64_t tile_reduce_scratch(int64_t n) {
  if (n < 2) return 0;
  int64_t first = ((n + 3) / 4 + 31) / 32;
  return first + (first + 31) / 32;
}

const Node *tile_fused_load(const Node *n) {
  if (n->kind != ND_CALL || n->call_kind != CALL_TILE || n->axis >= 0 || n->tfn ||
      (n->tile_op != TOP_SUM && n->tile_op != TOP_MIN && n->tile_op != TOP_MAX))
    return NULL;
  const Node *src = n->args;
  if (!src || src->kind != ND_CALL || src->call_kind != CALL_TILE || src->tile_op != TOP_LOAD ||
      src->ty->ndim != 1 || type_tile_count(src->ty) < 2) /* one element: the tile is read */
    return NULL;
  const Type *el = src->ty->elem, *stored = src->args->ty->elem;
  bool plain = el->kind >= TY_I8 && el->kind <= TY_F64 && el->kind != TY_F16 && el->size >= 4;
  return plain && type_equal(el, stored) ? src : NULL;
}

/* The elements of a scan's tree, every level of it (as codegen/emit_tile.c stores them): n,
 * then half of each level rounded up down to 1; up to 2n + log2(n), not 2n. */
static int64_t scan_levels(int64_t n) {
  int64_t total = n;
  for (int64_t m = n; m > 1; total += m) m = (m + 1) / 2;
  return total;
}

int64_t tile_temp_bytes(const Node *n, bool gpu) {
  int64_t b = tile_materializes(n) ? tile_slot(n->ty->size) : 0;
  if (reads_whole(n))
    for (const Node *a = n->kind == ND_INDEX ? n->lhs : n->args; a;
         a = n->kind == ND_INDEX ? NULL : a->next)
      if (tile_typed(a) && !tile_is_storage(a)) b += tile_slot(a->ty->size);
  if (n->kind != ND_CALL || n->call_kind != CALL_TILE) return b;
  switch (n->tile_op) {
    case TOP_SUM:
    case TOP_MIN:
    case TOP_MAX:
    case TOP_REDUCE: {
      const Node *x = reduced_operand(n);
      if (n->axis >= 0 || !gpu) return b + tile_slot(x->ty->size);
      /* a whole reduction on a GPU: the scratch its tree needs, less the
       * storage of a load whose leaves it reads from memory (that load is
       * materialized on the CPU only) */
      const Node *load = tile_fused_load(n);
      b += tile_slot(tile_reduce_scratch(type_tile_count(x->ty)) * x->ty->elem->size);
      return load ? b - tile_slot(load->ty->size) : b;
    }
    case TOP_ARGMIN:
    case TOP_ARGMAX:
      return b + tile_slot(n->args->ty->size) + tile_slot(4 * type_tile_count(n->args->ty));
    case TOP_SCAN_INC:
    case TOP_SCAN_EXC:
      return b + tile_slot(scan_levels(type_tile_count(n->ty)) * n->ty->elem->size);
    case TOP_SORT: {
      int64_t s = 0;
      for (const Node *a = n->args; a; a = a->next) s += tile_slot(a->ty->size);
      return b + s;
    }
    default: return b;
  }
}

const Node *tile_direct(const Node *stmt) {
  const Node *x;
  const Var *v;
  if (stmt->kind == ND_VARDECL && stmt->var && tile_typed_var(stmt->var) && stmt->var->init)
    v = stmt->var, x = stmt->var->init;
  else if (stmt->kind == ND_ASSIGN && stmt->op == TK_ASSIGN && stmt->lhs->kind == ND_IDENT &&
           stmt->lhs->var && tile_typed(stmt->lhs))
    v = stmt->lhs->var, x = stmt->rhs;
  else
    return NULL;
  if (!x || x->kind != ND_CALL || x->call_kind != CALL_TILE || !type_equal(x->ty, v->ty))
    return NULL;
  /* a scan reads every element before it writes one (kn_scan_regs; the
   * level-by-level forms copy the tile into their tree first and then read
   * element i only where they write it), so its operand may be v */
  if (x->tile_op == TOP_LOAD || x->tile_op == TOP_SCAN_INC || x->tile_op == TOP_SCAN_EXC) return x;
  if (x->tile_op != TOP_MATMUL && x->tile_op != TOP_MATMUL_FAST) return NULL;
  /* the matmul reads c's element before it writes the same element: c may be x, a and b not */
  for (const Node *a = x->args; a && a != x->args->next->next; a = a->next)
    if (a->kind == ND_IDENT && a->var == v) return NULL;
  return x;
}

/* ---- which functions are tiled, which have side effects ---------------------------------- */

static bool own_tile(const Node *n, void *unused) {
  (void)unused;
  return tile_typed(n) || (n->kind == ND_CALL && n->call_kind == CALL_TILE);
}

static bool writes_array(const Node *t) {
  while (t->kind == ND_MEMBER || (t->kind == ND_INDEX && t->lhs->ty->kind != TY_ARRAY)) t = t->lhs;
  return t->kind == ND_INDEX;
}

/* atomic_load reads, but counts here: one thread of a block reads and all
 * get its value, so scalar code stays the same in every thread. */
static bool special_effect(SpecialKind sp) {
  return sp == SP_PRINTF || sp == SP_ASSERT || (sp >= SP_ATOMIC_ADD && sp <= SP_ATOMIC_LOAD) ||
         sp == SP_RANDF || sp == SP_RANDI || sp == SP_RANDN;
}

static bool own_effect(const Node *n, void *unused) {
  (void)unused;
  if (n->kind == ND_ASSIGN || n->kind == ND_INCDEC) return writes_array(n->lhs);
  if (n->kind != ND_CALL) return false;
  /* an array element passed to a reference parameter: the callee may write it */
  for (const Node *a = n->call_kind == CALL_FUNC ? n->args : NULL; a; a = a->next)
    if (a->kind == ND_ADDR && writes_array(a->lhs)) return true;
  if (n->call_kind == CALL_SPECIAL) return special_effect(n->special);
  return n->call_kind == CALL_TILE && (n->tile_op == TOP_STORE || n->tile_op == TOP_ATOMIC_ADD);
}

/* A tile operation here: a tile value, a tile_* call, a call of a tiled function. */
static bool tile_here(const Node *n, void *unused) {
  (void)unused;
  return own_tile(n, NULL) || (n->kind == ND_CALL && n->call_kind == CALL_FUNC && n->fn->tiled);
}

/* A side effect that one thread of a block does: not a tile operation's. */
static bool scalar_effect(const Node *n, void *unused) {
  (void)unused;
  if (n->kind == ND_CALL && n->call_kind == CALL_SPECIAL) return special_effect(n->special);
  return n->kind == ND_CALL && n->call_kind == CALL_FUNC && !n->fn->tiled && n->fn->effects;
}

static bool has(const Node *n, bool (*visit)(const Node *, void *)) {
  return n && ast_walk(n, visit, NULL) != 0;
}

static void mark(Program *p, const AstCallGraph *g) {
  for (int k = 0; k < p->nfuncs + p->nkernels; k++) {
    int f = k < p->nfuncs ? g->order[k] : k;
    Decl *d = f < p->nfuncs ? p->funcs[f] : p->kernels[f - p->nfuncs];
    d->tiled = has(d->body, own_tile) || (d->ret && d->ret->kind == TY_TILE);
    for (int i = 0; i < d->nparams; i++)
      d->tiled = d->tiled || (d->params[i]->ty && d->params[i]->ty->kind == TY_TILE);
    d->effects = has(d->body, own_effect);
    for (int j = 0; j < g->ncallees[f]; j++) {
      d->tiled = d->tiled || g->callees[f][j]->tiled;
      d->effects = d->effects || g->callees[f][j]->effects;
    }
  }
}

/* ---- the rules ----------------------------------------------------------------------------- */

typedef struct Rules {
  Check *c;
  const Decl *fn;
  int64_t bytes; /* tile temporaries and scratch of fn's own code */
  int64_t vars;  /* its tile locals */
} Rules;

static void mixed(Rules *r, const Node *e, SrcLoc loc) {
  if (!has(e, tile_here) || !has(e, scalar_effect)) return;
  diag_error(r->c->diags, loc,
             "this statement mixes a tile operation with a side effect (printf, assert, an "
             "atomic, a random draw or a call of a function that has one)");
  diag_note(r->c->diags, loc, "in tiled code, compute the tile value into a variable first");
}

static void loop_cond(Rules *r, const Node *cond, const char *what) {
  if (has(cond, tile_here)) {
    diag_error(r->c->diags, cond->loc, "the condition of %s cannot hold a tile operation", what);
    diag_note(r->c->diags, cond->loc,
              "compute it into a variable before the loop and again at the end of its body");
  } else if (has(cond, scalar_effect))
    diag_error(r->c->diags, cond->loc,
               "in tiled code the condition of %s cannot have a side effect", what);
}

static void fn_used(Rules *r, const Node *n) {
  const Decl *f = n->tfn;
  if (!f || (!f->tiled && !f->effects)) return;
  diag_error(r->c->diags, n->args->loc,
             "'%s' runs once per element in '%s': it cannot use tiles or have side effects",
             f->name, n->name);
  diag_note(r->c->diags, f->name_loc, "'%s' is declared here", f->name);
}

/* What statement n needs beyond its expressions' tile_temp_bytes: less the
 * value written straight into its variable, plus the slot through which a
 * scalar with a side effect, computed by one thread, reaches the others. */
static int64_t stmt_extra(const Node *n) {
  int64_t b = 0;
  const Node *direct = n->kind == ND_VARDECL || n->kind == ND_ASSIGN ? tile_direct(n) : NULL;
  if (direct) b -= tile_slot(direct->ty->size); /* counted by tile_temp_bytes(direct) */
  if (n->kind == ND_VARDECL && n->var && n->var->ty && has(n->var->init, scalar_effect))
    b += tile_slot(n->var->ty->size > n->var->init->ty->size ? n->var->ty->size
                                                             : n->var->init->ty->size);
  if (n->kind == ND_ASSIGN && n->rhs && has(n->rhs, scalar_effect) && n->lhs->ty &&
      !writes_array(n->lhs))
    b += tile_slot(n->rhs->ty ? n->rhs->ty->size : n->lhs->ty->size);
  if (n->kind == ND_RETURN && n->lhs && has(n->lhs, scalar_effect))
    b += tile_slot(n->lhs->ty ? n->lhs->ty->size : 16);
  return b;
}

static bool rule_visit(const Node *n, void *ud) {
  Rules *r = ud;
  r->bytes += tile_temp_bytes(n, false) + stmt_extra(n);
  switch (n->kind) {
    case ND_VARDECL:
      if (n->var && n->var->ty && n->var->ty->kind == TY_TILE)
        r->vars += tile_slot(n->var->ty->size);
      if (n->var) mixed(r, n->var->init, n->loc);
      break;
    case ND_ASSIGN:
    case ND_INCDEC: {
      const Node *t = n->lhs;
      while (t->kind == ND_MEMBER) t = t->lhs;
      if (t->kind == ND_INDEX && t->lhs->ty && t->lhs->ty->kind == TY_TILE)
        diag_error(r->c->diags, n->loc,
                   "tile elements are read-only; make a new tile (tile_where, tile_map)");
      mixed(r, n->rhs, n->loc);
      break;
    }
    case ND_EXPR_STMT:
    case ND_RETURN: mixed(r, n->lhs, n->loc); break;
    case ND_IF:
      mixed(r, n->cond, n->cond->loc);
      if (has(n->cond, scalar_effect))
        diag_error(r->c->diags, n->cond->loc,
                   "in tiled code the condition of 'if' cannot have a side effect");
      break;
    case ND_WHILE: loop_cond(r, n->cond, "'while'"); break;
    case ND_DO: loop_cond(r, n->cond, "'do'"); break;
    case ND_FOR:
      if (n->cond) loop_cond(r, n->cond, "'for'");
      break;
    case ND_CALL:
      if (n->call_kind == CALL_TILE) fn_used(r, n);
      break;
    default: break;
  }
  return false;
}

/* ---- the most temporaries live at once ----------------------------------------------------- */

/* The emitter (codegen/emit_tile.c) gives a statement's temporaries storage
 * when the statement starts and takes it back when it ends; a statement
 * nested in another (a branch, a loop body) stacks its own above the outer
 * one's. These mirror that, as upper bounds. */

static bool add_temp_bytes(const Node *n, void *ud) {
  *(int64_t *)ud += tile_temp_bytes(n, true);
  return false;
}

static int64_t expr_temps(Check *c, const Node *x) {
  int64_t b = 0;
  if (x && ast_walk(x, add_temp_bytes, &b) < 0) longjmp(c->oom, 1);
  return b;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int64_t stmt_temps(Check *c, const Node *s);

static int64_t list_temps(Check *c, const Node *s) {
  int64_t most = 0;
  for (; s; s = s->next) most = max64(most, stmt_temps(c, s));
  return most;
}

static int64_t stmt_temps(Check *c, const Node *s) {
  if (!s) return 0;
  switch (s->kind) {
    case ND_BLOCK: return list_temps(c, s->body);
    case ND_IF: { /* an else-if chain's conditions are all computed before its first if */
      int64_t conds = 0, branches = 0;
      const Node *x = s;
      for (; x && x->kind == ND_IF; x = x->els) {
        conds += expr_temps(c, x->cond);
        branches = max64(branches, stmt_temps(c, x->then));
      }
      return conds + max64(branches, stmt_temps(c, x));
    }
    case ND_FOR:
      return expr_temps(c, s->cond) +
             max64(stmt_temps(c, s->init), max64(stmt_temps(c, s->inc), stmt_temps(c, s->body)));
    case ND_WHILE:
    case ND_DO: return expr_temps(c, s->cond) + stmt_temps(c, s->body);
    case ND_VARDECL: return expr_temps(c, s->var ? s->var->init : NULL) + stmt_extra(s);
    case ND_ASSIGN: return expr_temps(c, s->lhs) + expr_temps(c, s->rhs) + stmt_extra(s);
    default: return expr_temps(c, s->lhs) + stmt_extra(s);
  }
}

/* tile_map etc. may appear in code that is not tiled only through a tile
 * value, so every function is looked at; the rest of the rules are for tiled code. */
static void check_fn(Check *c, Decl *d) {
  Rules r = {c, d, 0, 0};
  if (d->tiled) {
    if (ast_walk(d->body, rule_visit, &r) < 0) longjmp(c->oom, 1);
    for (int i = 0; i < d->nparams; i++)
      if (d->params[i]->is_ref)
        diag_error(c->diags, d->params[i]->ref_loc,
                   "'%s' uses tiles, so its parameter '%s' cannot be a reference", d->name,
                   d->params[i]->name);
  }
  d->tile_temps = r.bytes;
  d->tile_vars = r.vars;
  for (int i = 0; i < d->nparams; i++)
    if (d->params[i]->ty && d->params[i]->ty->kind == TY_TILE)
      d->tile_vars += tile_slot(d->params[i]->ty->size);
  d->tile_storage = d->tiled ? d->tile_vars + stmt_temps(c, d->body) : 0;
  for (int i = 0; d->kind == DECL_KERNEL && i < d->nparams; i++)
    if (d->params[i]->ty && d->params[i]->ty->kind == TY_TILE)
      diag_error(c->diags, d->params[i]->loc,
                 "kernel parameter '%s' cannot be a tile; pass an array and tile_load it",
                 d->params[i]->name);
}

/* A kernel's storage: its own and that of every function it reaches, once each
 * (a function's tile storage is allocated once per kernel on a GPU). */
static void totals(Check *c, Program *p, const AstCallGraph *g) {
  int n = p->nfuncs + p->nkernels;
  char *seen = ck_alloc(c, (size_t)n + 1);
  int *stack = ck_alloc(c, ((size_t)n + 1) * sizeof *stack);
  for (int k = 0; k < p->nkernels; k++) {
    memset(seen, 0, (size_t)n);
    int top = 0;
    Decl *kd = p->kernels[k];
    kd->tile_total = kd->tile_storage;
    stack[top++] = p->nfuncs + k;
    seen[p->nfuncs + k] = 1;
    while (top > 0) {
      int f = stack[--top];
      for (int j = 0; j < g->ncallees[f]; j++) {
        const Decl *callee = g->callees[f][j];
        if (seen[callee->index]) continue;
        seen[callee->index] = 1;
        kd->tile_total += callee->tile_storage;
        stack[top++] = callee->index;
      }
    }
  }
}

void ck_tile_program(Check *c, Program *p) {
  AstCallGraph g;
  if (!ast_call_graph(p, &g)) longjmp(c->oom, 1);
  mark(p, &g);
  for (int i = 0; i < p->nfuncs; i++) check_fn(c, p->funcs[i]);
  for (int i = 0; i < p->nkernels; i++) check_fn(c, p->kernels[i]);
  totals(c, p, &g);
  ast_call_graph_free(&g);
}

/* ---- for messages: what a kernel's tiles are ------------------------------------------------ */

typedef struct Usage {
  char *s;
  size_t len, cap;
  int shown;
} Usage;

static void add_text(Usage *u, const char *t) {
  size_t n = strlen(t);
  if (!u->s && u->cap) return; /* out of memory earlier */
  if (u->len + n + 1 > u->cap) {
    size_t cap = (u->len + n + 1) * 2;
    char *s = realloc(u->s, cap);
    if (!s) {
      free(u->s);
      u->s = NULL;
      u->cap = 1;
      return;
    }
    u->s = s;
    u->cap = cap;
  }
  memcpy(u->s + u->len, t, n + 1);
  u->len += n;
}

static bool usage_visit(const Node *n, void *ud) {
  Usage *u = ud;
  if (n->kind != ND_VARDECL || !n->var || !n->var->ty || n->var->ty->kind != TY_TILE) return false;
  if (u->shown++ < 8) {
    char buf[AST_MAX_IDENT + 96];
    snprintf(buf, sizeof buf, "%s%s: %s (%d bytes)", u->len ? ", " : "", n->var->name,
             type_name(n->var->ty), n->var->ty->size);
    add_text(u, buf);
  }
  return false;
}

char *tile_usage_text(const Decl *k) {
  Usage u = {0};
  ast_walk(k->body, usage_visit, &u);
  char buf[160];
  if (u.shown > 8) {
    snprintf(buf, sizeof buf, ", and %d more", u.shown - 8);
    add_text(&u, buf);
  }
  add_text(&u, u.len ? "; and its temporaries, scratch and the functions it calls"
                     : "its temporaries, scratch and the functions it calls");
  return u.s;
}
