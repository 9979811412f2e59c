/* emit_verify.c: verify_fp, the opt-in check that a kernel stores no NaN and
 * no infinity to an array element (kern_module_set_verify_fp).
 *
 * Requires: emit.c's targets and expressions (emit_target, emit_expr) and its
 * array_element, which takes the indices from kn_fx[] while e->fx_index is
 * set. Produces the block around a checked store: the element's indices are
 * evaluated once into kn_fx (the report names them), the element's address
 * into kn_p, and after the store each float component of *kn_p is tested on
 * its bits (so fast math cannot fold the test away); the first failure of a
 * launch goes to kn_ctx.err as a KN_ERR_FP record, and the runtime words it.
 * Checked: `=`, compound assignments and ++/-- whose target is an array
 * parameter's element, or a field or component of one, with no side effect
 * in the target's indices, the elements a call written as a statement passes
 * to reference parameters (emit_fp_call_stmt: read back after the call),
 * tile_store's and tile_atomic_add's elements (emit_tile.c writes each
 * through kn_p, then emit_fp_tile_check), and atomics written as a
 * statement (emit_fp_atomic_stmt: the element is read back after the atomic,
 * so a non-finite value another thread's atomic left there is reported too,
 * as it would be at its own site) or inside an expression, its old value used
 * (emit_fp_atomic_expr: the same steps as a comma expression); the atomic
 * takes the element's address computed for the check. Not checked: an atomic
 * inside an expression whose arguments are evaluated into temporaries first (a
 * side effect among them), local arrays, a reference argument of a call inside
 * a larger expression.
 */

#include <stdio.h>

#include "builtins.h"
#include "emit_internal.h"

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

/* The array element a store to lhs writes (through fields and components), or NULL. */
static const Node *stored_element(const Node *lhs) {
  const Node *n = lhs;
  while (n->kind == ND_MEMBER) n = n->lhs;
  if (n->kind != ND_INDEX || !n->lhs->ty || n->lhs->ty->kind != TY_ARRAY) return NULL;
  return n;
}

static bool has_floats(const Type *t) {
  if (type_is_float(t)) return true;
  if (t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT || t->kind == TY_TRANSFORM)
    return t->elem && type_is_float(t->elem);
  if (t->kind != TY_STRUCT || !t->sdecl) return false;
  for (int i = 0; i < t->sdecl->nfields; i++)
    if (has_floats(t->sdecl->fields[i].ty)) return true;
  return false;
}

/* The element of a store verify_fp checks, or NULL. */
static const Node *checked_element(Emitter *e, const Node *lhs) {
  if (!e->opts->verify_fp || e->tile_i) return NULL;
  const Node *el = stored_element(lhs);
  if (!el || !lhs->ty || !has_floats(lhs->ty) || emit_effects(e, lhs)) return NULL;
  if (e->nbound && emit_bound(e, lhs)) return NULL;
  return el;
}

/* The indices of element el, each as int64_t, after `pre` (4 in all, zeros after
 * el's), separated by `sep`: an initializer's or a comma expression's. */
static void fx_indices(Emitter *e, const Node *el, const char *pre, int id, const char *sep) {
  int k = 0;
  for (const Node *ix = el->args; ix && k < 4; ix = ix->next, k++) {
    if (id)
      OUT(e, "%skn_fx%d[%d] = (int64_t)(", k ? sep : pre, id, k);
    else
      OUT(e, "%s(int64_t)(", k ? sep : pre);
    emit_expr(e, ix);
    OUT(e, ")");
  }
  for (; k < 4; k++)
    if (id)
      OUT(e, "%skn_fx%d[%d] = 0", sep, id, k);
    else
      OUT(e, "%s0", sep);
}

/* The address of the element lhs stores to, its indices read from kn_fx<id>. */
static void fx_target(Emitter *e, const Node *lhs, int id) {
  e->fx_index = true;
  e->fx_id = id;
  emit_target(e, lhs);
  e->fx_index = false;
  e->fx_id = 0;
}

bool emit_fp_open(Emitter *e, const Node *lhs) {
  const Node *el = checked_element(e, lhs);
  if (!el) return false;
  OUT(e, "{ int64_t kn_fx[4] = {");
  fx_indices(e, el, "", 0, ", ");
  OUT(e, "}; %s *kn_p = &", emit_ctype(e, lhs->ty));
  fx_target(e, lhs, 0);
  OUT(e, ";");
  return true;
}

/* kne_fp's kind: 0 float16, 1 bfloat16, 2 float32, 3 float64. */
static int float_kind(const Type *t) {
  switch (t->kind) {
    case TY_F16: return 0;
    case TY_BF16: return 1;
    case TY_F32: return 2;
    default: return 3;
  }
}

/* One kne_fp call per run of float components of t at byte offset off of the
 * element at pointer p, each followed by `end` (a statement's or a comma). */
static void checks(Emitter *e, const Type *t, int off, const char *site, const char *p,
                   const char *end) {
  if (t->kind == TY_STRUCT) {
    for (int i = 0; i < t->sdecl->nfields; i++)
      if (has_floats(t->sdecl->fields[i].ty))
        checks(e, t->sdecl->fields[i].ty, off + t->sdecl->fields[i].offset, site, p, end);
    return;
  }
  const Type *el = type_is_float(t) ? t : t->elem;
  OUT(e, " kne_fp(kn_c, (const char *)%s + %d, %d, %d, %d, %s)%s", p, off, t->size / el->size,
      el->size, float_kind(el), site, end);
}

/* The checks of the element lhs stored to, at pointer kn_p<id> (kn_p for 0). */
static void fx_checks(Emitter *e, const Node *lhs, int id, const char *end) {
  const Node *el = stored_element(lhs);
  const Var *v = el->lhs->kind == ND_IDENT ? el->lhs->var : NULL;
  int param = v && v->is_param && v->ty->kind == TY_ARRAY ? v->array_id : -1;
  int unsigned_mask = 0, d = 0;
  for (const Node *ix = el->args; ix; ix = ix->next, d++)
    if (type_is_int(ix->ty) && !type_is_signed(ix->ty)) unsigned_mask |= 1 << d;
  char site[128], p[32], fx[32];
  snprintf(p, sizeof p, "kn_p");
  snprintf(fx, sizeof fx, "kn_fx");
  if (id) snprintf(p, sizeof p, "kn_p%d", id), snprintf(fx, sizeof fx, "kn_fx%d", id);
  snprintf(site, sizeof site, "%d, %d, %d, %d, %s, kn_lin", emit_file_index(e->prog, el->loc.file),
           el->loc.line, param, el->lhs->ty->ndim | unsigned_mask << 8, fx);
  checks(e, lhs->ty, 0, site, p, end);
}

void emit_fp_close(Emitter *e, const Node *lhs) {
  fx_checks(e, lhs, 0, ";");
  OUT(e, " }\n");
}

static bool is_atomic(const Node *call) {
  return call->kind == ND_CALL && call->call_kind == CALL_SPECIAL &&
         call->special >= SP_ATOMIC_ADD && call->special <= SP_ATOMIC_CAS && call->args &&
         call->args->kind == ND_ADDR;
}

/* `atomic_op(&a[i], ...);` with a checked element: the atomic inside the
 * block emit_fp_open opens, on its kn_p (the element's address, computed
 * once), then the element's floats are tested. */
bool emit_fp_atomic_stmt(Emitter *e, const Node *call) {
  if (!is_atomic(call) || emit_bound(e, call->args)) return false;
  const Node *el = call->args->lhs;
  if (!emit_fp_open(e, el)) return false;
  OUT(e, " ");
  int mark = e->nbound;
  emit_bind(e, call->args, "kn_p");
  emit_expr(e, call);
  e->nbound = mark;
  OUT(e, ";");
  emit_fp_close(e, el);
  return true;
}

/* Whether call argument a passes a checked element to a reference parameter. */
static bool checked_ref_arg(Emitter *e, const Node *a) {
  return a->kind == ND_ADDR && !emit_bound(e, a) && checked_element(e, a->lhs);
}

/* `f(..., a[i], ...);` passing checked elements to reference parameters: each
 * element's indices and address computed once before the call (the call
 * takes the address), then, once it returns, each element's floats tested:
 * whatever the callee stored through the reference, reported at the call. */
bool emit_fp_call_stmt(Emitter *e, const Node *call) {
  if (call->kind != ND_CALL || call->call_kind != CALL_FUNC || !call->fn) return false;
  int first = e->ntemps + 1, n = 0;
  for (const Node *a = call->args; a; a = a->next) n += checked_ref_arg(e, a);
  if (!n) return false;
  OUT(e, "{");
  int mark = e->nbound, id = first;
  for (const Node *a = call->args; a; a = a->next) {
    if (!checked_ref_arg(e, a)) continue;
    OUT(e, " int64_t kn_fx%d[4] = {", id);
    fx_indices(e, stored_element(a->lhs), "", 0, ", ");
    OUT(e, "}; %s *kn_p%d = &", emit_ctype(e, a->lhs->ty), id);
    fx_target(e, a->lhs, id);
    OUT(e, ";");
    char p[32];
    snprintf(p, sizeof p, "kn_p%d", id++);
    emit_bind(e, a, p);
  }
  e->ntemps = id - 1;
  OUT(e, " ");
  emit_expr(e, call);
  OUT(e, ";");
  e->nbound = mark; /* unbound again: the same arguments qualify */
  id = first;
  for (const Node *a = call->args; a; a = a->next)
    if (checked_ref_arg(e, a)) fx_checks(e, a->lhs, id++, ";");
  OUT(e, " }\n");
  return true;
}

/* Whether the elements a tile_store or tile_atomic_add of elem writes to array
 * arr are checked (emit_tile.c writes each through kn_p, then emit_fp_tile_check). */
bool emit_fp_tile_checked(Emitter *e, const Node *arr, const Type *elem) {
  return e->opts->verify_fp && type_is_float(elem) && arr->kind == ND_IDENT && arr->var &&
         arr->var->is_param && arr->ty->kind == TY_ARRAY;
}

/* The test of the tile element just written at kn_p, at array indices kn_a0 (kn_a1). */
void emit_fp_tile_check(Emitter *e, const Node *at, const Node *arr, const Type *elem) {
  char site[128];
  snprintf(site, sizeof site, "%d, %d, %d, %d, kn_fx, kn_lin",
           emit_file_index(e->prog, at->loc.file), at->loc.line, arr->var->array_id, arr->ty->ndim);
  OUT(e, " const int64_t kn_fx[4] = {kn_a0, %s, 0, 0};", arr->ty->ndim == 2 ? "kn_a1" : "0");
  checks(e, elem, 0, site, "kn_p", ";");
}

/* `... atomic_op(&a[i], ...) ...`, its old value used: the same steps as a
 * comma expression, its value the atomic's,
 *   (kn_fxN[0] = i, ..., kn_pN = &a[kn_fxN[0]], kn_oN = atomic(kn_pN, ...),
 *    kne_fp(... kn_pN ...), kn_oN)
 * over temporaries declared before the statement (as the ordered operands'). */
bool emit_fp_atomic_expr(Emitter *e, const Node *call) {
  if (!is_atomic(call) || emit_bound(e, call->args)) return false;
  const Node *el = call->args->lhs;
  if (!checked_element(e, el)) return false;
  int id = ++e->ntemps;
  buf_printf(&e->temps, "int64_t kn_fx%d[4]; %s *kn_p%d; %s kn_o%d; ", id, emit_ctype(e, el->ty),
             id, emit_ctype(e, call->ty), id);
  fx_indices(e, stored_element(el), "(", id, ", ");
  OUT(e, ", kn_p%d = &", id);
  fx_target(e, el, id);
  char p[32];
  snprintf(p, sizeof p, "kn_p%d", id);
  int mark = e->nbound;
  emit_bind(e, call->args, p);
  OUT(e, ", kn_o%d = ", id);
  emit_expr(e, call);
  e->nbound = mark;
  OUT(e, ",");
  fx_checks(e, el, id, ",");
  OUT(e, " kn_o%d)", id);
  return true;
}

const char *const emit_fp_helpers =
    "/* verify_fp: 0 for a finite float at p, else 1 +inf, 2 -inf, 3 NaN; kind\n"
    " * 0 float16, 1 bfloat16, 2 float32, 3 float64 (tested on the bits). */\n"
    "KN_FN int32_t kne_fp_class(const char *p, int32_t kind) {\n"
    "  uint64_t b, x, f, s;\n"
    "  if (kind == 3) {\n"
    "    b = kn__f64_bits(*(const double *)p);\n"
    "    x = 0x7ff0000000000000ull, f = 0x000fffffffffffffull, s = 1ull << 63;\n"
    "  } else if (kind == 2) {\n"
    "    b = kn__f32_bits(*(const float *)p), x = 0x7f800000u, f = 0x7fffffu, s = 1ull << 31;\n"
    "  } else {\n"
    "    b = *(const uint16_t *)p, s = 0x8000u;\n"
    "    x = kind ? 0x7f80u : 0x7c00u, f = kind ? 0x7fu : 0x3ffu;\n"
    "  }\n"
    "  if ((b & x) != x) return 0;\n"
    "  return (b & f) ? 3 : (b & s) ? 2 : 1;\n"
    "}\n"
    "KN_COLD void kne_fp_fail(const kn_ctx *c, int32_t what, int32_t file, int32_t line,\n"
    "                         int32_t param, int32_t nds, const int64_t *idx, int64_t tid) {\n"
    "  kn_error *r = kn__err_claim(c);\n"
    "  if (!r) return;\n"
    "  r->kind = KN_ERR_FP, r->file = file, r->line = line, r->param = param;\n"
    "  r->ndim = nds, r->tid = tid;\n"
    "  for (int k = 0; k < 4; k++) r->index[k] = idx[k], r->shape[k] = 0;\n"
    "  r->shape[0] = what;\n"
    "}\n"
    "/* n floats of size bytes from p, the element at idx of array param. */\n"
    "KN_FN void kne_fp(const kn_ctx *c, const char *p, int32_t n, int32_t size, int32_t kind,\n"
    "                  int32_t file, int32_t line, int32_t param, int32_t nds, const int64_t *idx,\n"
    "                  int64_t tid) {\n"
    "  for (int32_t k = 0; k < n; k++) {\n"
    "    int32_t what = kne_fp_class(p + k * size, kind);\n"
    "    if (what) {\n"
    "      kne_fp_fail(c, what, file, line, param, nds, idx, tid);\n"
    "      return;\n"
    "    }\n"
    "  }\n"
    "}\n";
