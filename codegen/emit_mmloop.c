/* emit_mmloop.c: a tiled matrix product's k loop, handed whole to the GPU.
 *
 * Requires a checked tiled function and emit_tile.c's storage layout (the
 * loop's tile variables take the next bytes of the variables' part, in the
 * order they are declared). Produces, before a loop of the form
 *
 *     for (int64 k = K0; k < K1; k += KT) {
 *         tile<T, M, KT> ta = tile_load<M, KT>(A, I, k[, pa]);
 *         tile<T, KT, N> tb = tile_load<KT, N>(B, k, J[, pb]);
 *         acc = tile_matmul(ta, tb, acc);         (or tile_matmul_fast)
 *     }
 *
 * the text `if (KN_MMLOOP(...)) {} else`, so the loop as written follows as
 * the else branch. stdlib/kern_mmloop.h says what the call does on a GPU (the
 * whole loop with acc in registers, or false) and makes it 0 on the CPU.
 * I, J, K0, K1, pa and pb must be plain values the loop does not change (no
 * calls of functions, no array reads, no side effects): the GPU routine reads
 * them once. Any other loop is left alone. Breaks nothing: the loop is still
 * written, and the result is the loop's, bit for bit (EXACT) or step for step
 * (FAST).
 */
#include "emit_internal.h"

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

typedef struct MmLoop {
  const Var *k, *ta, *tb, *acc;
  const Node *la, *lb, *mm, *k1;
  bool fast;
} MmLoop;

static bool ident_of(const Node *n, const Var *v) {
  return n && n->kind == ND_IDENT && n->var == v;
}

/* An integer constant, through the conversions the checker puts around it. */
static bool int_const(const Node *n, uint64_t v) {
  while (n && n->kind == ND_CONV) n = n->lhs;
  return n && n->kind == ND_INT && n->ival == v;
}

/* A value the routine may read once before the loop: see the opening comment. */
static bool plain_visit(const Node *n, void *ud) {
  const MmLoop *l = ud;
  if (n->kind == ND_IDENT)
    return !n->var || n->var == l->k || n->var == l->ta || n->var == l->tb || n->var == l->acc;
  if (n->ty && n->ty->kind == TY_TILE) return true;
  if (n->kind == ND_INDEX || n->kind == ND_ADDR || n->kind == ND_ASSIGN) return true;
  return n->kind == ND_CALL && n->call_kind != CALL_SPECIAL && n->call_kind != CALL_BUILTIN;
}
static bool plain(Emitter *e, const Node *n, const MmLoop *l) {
  return !n || (!ast_walk(n, plain_visit, (void *)l) && !emit_effects(e, n));
}

/* `tile<T, R, C> v = tile_load<R, C>(arr, o0, o1[, fill])` of a 2-D array parameter
 * of T itself: returns the load. */
static const Node *load_decl(const Node *s, const Var **v) {
  if (!s || s->kind != ND_VARDECL || !s->var || !s->var->init) return NULL;
  const Node *x = s->var->init;
  if (x->kind != ND_CALL || x->call_kind != CALL_TILE || x->tile_op != TOP_LOAD) return NULL;
  const Node *arr = x->args;
  if (!type_equal(x->ty, s->var->ty) || x->ty->ndim != 2 || arr->kind != ND_IDENT || !arr->var ||
      !arr->var->is_param || arr->ty->kind != TY_ARRAY || arr->ty->ndim != 2 ||
      !type_equal(arr->ty->elem, x->ty->elem))
    return NULL;
  *v = s->var;
  return x;
}

/* The loop's shape (see the opening comment), into l; false for any other loop. */
static bool match_shape(const Node *n, MmLoop *l) {
  const Node *in = n->init, *c = n->cond, *inc = n->inc, *b = n->body;
  if (!in || in->kind != ND_VARDECL || !in->var || in->var->ty->kind != TY_I64) return false;
  l->k = in->var;
  if (!c || c->kind != ND_BINARY || c->op != TK_LT || !ident_of(c->lhs, l->k)) return false;
  l->k1 = c->rhs;
  if (!b || b->kind != ND_BLOCK || !(l->la = load_decl(b->body, &l->ta))) return false;
  const Node *s2 = b->body->next, *s3 = s2 ? s2->next : NULL;
  if (!(l->lb = load_decl(s2, &l->tb)) || !s3 || s3->next) return false;
  if (s3->kind != ND_ASSIGN || s3->op != TK_ASSIGN || s3->lhs->kind != ND_IDENT) return false;
  l->mm = s3->rhs, l->acc = s3->lhs->var;
  if (!l->acc || l->mm->kind != ND_CALL || l->mm->call_kind != CALL_TILE) return false;
  l->fast = l->mm->tile_op == TOP_MATMUL_FAST;
  if (!l->fast && l->mm->tile_op != TOP_MATMUL) return false;
  const Node *ma = l->mm->args, *mb = ma->next, *mc = mb->next;
  if (!ident_of(ma, l->ta) || !ident_of(mb, l->tb) || !ident_of(mc, l->acc)) return false;
  /* the step is the tiles' k extent, and the loads take k where the product needs it */
  const int kt = l->la->ty->dims[1];
  return inc && inc->kind == ND_ASSIGN && inc->op == TK_PLUSEQ && ident_of(inc->lhs, l->k) &&
         int_const(inc->rhs, (uint64_t)kt) && l->lb->ty->dims[0] == kt &&
         ident_of(l->la->args->next->next, l->k) && ident_of(l->lb->args->next, l->k) &&
         type_equal(l->acc->ty, l->mm->ty);
}

/* The routine's name suffix, or NULL for element types it has none for. */
static const char *routine(const MmLoop *l) {
  TypeKind a = l->la->ty->elem->kind, c = l->acc->ty->elem->kind;
  if (c != (l->fast ? TY_F32 : a)) return NULL;
  if (!l->fast) return a == TY_F32 ? "exact_f32" : a == TY_F64 ? "exact_f64" : NULL;
  return a == TY_F32 ? "fast_f32" : a == TY_F16 ? "fast_f16" : a == TY_BF16 ? "fast_bf16" : NULL;
}

static void int_arg(Emitter *e, const Node *n) {
  OUT(e, ", (int64_t)(");
  emit_expr(e, n);
  OUT(e, ")");
}

static void fill_arg(Emitter *e, const Node *load, const Node *fill) {
  OUT(e, ", ");
  if (fill)
    emit_expr(e, fill);
  else
    emit_number(e, load->ty->elem, 0);
}

/* A slot of the tile variables' part, `bytes` past its next free byte. */
static void slot_arg(Emitter *e, const Type *elem, int64_t bytes) {
  OUT(e, ", KN_TILE_AT(%s, %lld)", emit_ctype(e, elem), (long long)(e->tile_var_sp + bytes));
}

/* n is a loop the routines take, into l. */
static bool mmloop(Emitter *e, const Node *n, MmLoop *l) {
  if (n->kind != ND_FOR || !match_shape(n, l) || !routine(l)) return false;
  const Node *i = l->la->args->next, *j = l->lb->args->next->next;
  return plain(e, n->init->var->init, l) && plain(e, l->k1, l) && plain(e, i, l) &&
         plain(e, j, l) && plain(e, i->next->next, l) && plain(e, j->next, l);
}

/* The block a kernel's loops run whole at: 256 threads for EXACT, 128 for
 * FAST (warps of 64 x 64 elements of acc), 256 when it has both. */
typedef struct Threads {
  Emitter *e;
  int threads;
} Threads;

static bool threads_visit(const Node *n, void *ud) {
  Threads *t = ud;
  MmLoop l = {0};
  if (mmloop(t->e, n, &l)) t->threads = l.fast && t->threads != 256 ? 128 : 256;
  return false;
}
int emit_mmloop_threads(Emitter *e, const Decl *k) {
  Threads t = {e, 0};
  ast_walk(k->body, threads_visit, &t);
  return t.threads;
}

void emit_mmloop_guard(Emitter *e, const Node *n) {
  MmLoop l = {0};
  if (!mmloop(e, n, &l)) return;
  const Node *a = l.la->args, *i = a->next, *fa = i->next->next;
  const Node *b = l.lb->args, *j = b->next->next, *fb = j->next;
  const Type *ta = l.la->ty, *tb = l.lb->ty;
  emit_indent(e);
  OUT(e, "if (KN_MMLOOP(%s, %d, %d, %d, ", routine(&l), ta->dims[0], tb->dims[1], ta->dims[1]);
  emit_var_name(e, l.acc);
  slot_arg(e, ta->elem, 0);
  slot_arg(e, tb->elem, tile_slot((int64_t)ta->size));
  OUT(e, ", ");
  emit_expr(e, a);
  int_arg(e, i);
  OUT(e, ", ");
  emit_expr(e, b);
  int_arg(e, j);
  int_arg(e, n->init->var->init);
  int_arg(e, l.k1);
  fill_arg(e, l.la, fa);
  fill_arg(e, l.lb, fb);
  OUT(e, ")) {\n");
  emit_indent(e);
  OUT(e, "} else\n");
}
