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
 * parameter's element, or a field or component of one, outside tiled code,
 * with no side effect in the target's indices, and atomics written as a
 * statement (emit_fp_atomic_stmt: the element is read back after the atomic,
 * so a non-finite value another thread's atomic left there is reported too,
 * as it would be at its own site). Not checked: an atomic whose old value is
 * used, local arrays, stores through reference parameters.
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
  if (!e->opts->verify_fp || e->tile_i || (e->fn && e->fn->tiled)) return NULL;
  const Node *el = stored_element(lhs);
  if (!el || !lhs->ty || !has_floats(lhs->ty) || emit_effects(e, lhs)) return NULL;
  if (e->nbound && emit_bound(e, lhs)) return NULL;
  return el;
}

bool emit_fp_open(Emitter *e, const Node *lhs) {
  const Node *el = checked_element(e, lhs);
  if (!el) return false;
  OUT(e, "{ int64_t kn_fx[4] = {");
  int k = 0;
  for (const Node *ix = el->args; ix && k < 4; ix = ix->next, k++) {
    OUT(e, k ? ", (int64_t)(" : "(int64_t)(");
    emit_expr(e, ix);
    OUT(e, ")");
  }
  for (; k < 4; k++) OUT(e, ", 0");
  OUT(e, "}; %s *kn_p = &", emit_ctype(e, lhs->ty));
  e->fx_index = true;
  emit_target(e, lhs);
  e->fx_index = false;
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

/* One kne_fp call per run of float components of t at byte offset off. */
static void checks(Emitter *e, const Type *t, int off, const char *site) {
  if (t->kind == TY_STRUCT) {
    for (int i = 0; i < t->sdecl->nfields; i++)
      if (has_floats(t->sdecl->fields[i].ty))
        checks(e, t->sdecl->fields[i].ty, off + t->sdecl->fields[i].offset, site);
    return;
  }
  const Type *el = type_is_float(t) ? t : t->elem;
  OUT(e, " kne_fp(kn_c, (const char *)kn_p + %d, %d, %d, %d, %s);", off, t->size / el->size,
      el->size, float_kind(el), site);
}

void emit_fp_close(Emitter *e, const Node *lhs) {
  const Node *el = stored_element(lhs);
  const Var *v = el->lhs->kind == ND_IDENT ? el->lhs->var : NULL;
  int param = v && v->is_param && v->ty->kind == TY_ARRAY ? v->array_id : -1;
  int unsigned_mask = 0, d = 0;
  for (const Node *ix = el->args; ix; ix = ix->next, d++)
    if (type_is_int(ix->ty) && !type_is_signed(ix->ty)) unsigned_mask |= 1 << d;
  char site[96];
  snprintf(site, sizeof site, "%d, %d, %d, %d, kn_fx, kn_lin",
           emit_file_index(e->prog, el->loc.file), el->loc.line, param,
           el->lhs->ty->ndim | unsigned_mask << 8);
  checks(e, lhs->ty, 0, site);
  OUT(e, " }\n");
}

/* `atomic_op(&a[i], ...);` with a checked element: the atomic inside the
 * block emit_fp_open opens, then the element's floats are tested. */
bool emit_fp_atomic_stmt(Emitter *e, const Node *call) {
  if (call->kind != ND_CALL || call->call_kind != CALL_SPECIAL || call->special < SP_ATOMIC_ADD ||
      call->special > SP_ATOMIC_CAS || !call->args || call->args->kind != ND_ADDR)
    return false;
  const Node *el = call->args->lhs;
  if (!emit_fp_open(e, el)) return false;
  OUT(e, " ");
  emit_expr(e, call);
  OUT(e, ";");
  emit_fp_close(e, el);
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
