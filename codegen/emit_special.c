/* emit_special.c: the emitter's text for the newer special forms.
 *
 * Requires the typed tree (a call the checker marked CALL_SPECIAL) and the
 * core's expression writer, passed in. Produces the call of the stdlib helper
 * that implements the form (stdlib/kern_math.h): lower_bound and the random
 * helpers. Kept apart from emit.c so
 * the core stays the size of its own job.
 */
#include "builtins.h"
#include "emit_internal.h"

/* lower_bound(a, v) -> kn_lower_bound_<elem>(a, 0, INT64_MAX, v); the
 * four-argument form passes its range (the helper clamps it to the array). */
void emit_lower_bound(Emitter *e, const Node *n, EmitExprFn expr) {
  const Node *arr = n->args, *lo = arr->next, *hi = lo->next;
  buf_printf(&e->out, "kn_lower_bound_%s(", builtin_type_code(arr->ty->elem));
  expr(e, arr);
  if (n->nargs == 4) {
    buf_puts(&e->out, ", (int64_t)(");
    expr(e, lo);
    buf_puts(&e->out, "), (int64_t)(");
    expr(e, hi);
    buf_puts(&e->out, "), ");
    expr(e, hi->next);
  } else {
    buf_puts(&e->out, ", 0, (int64_t)9223372036854775807LL, ");
    expr(e, lo);
  }
  buf_puts(&e->out, ")");
}

void emit_rand_fn(Emitter *e, const Node *n, EmitExprFn expr, EmitExprFn addr) {
  buf_printf(&e->out, "kn_rand_%s_%d(", n->name, n->nargs);
  for (const Node *a = n->args; a; a = a->next) {
    if (a != n->args) buf_puts(&e->out, ", ");
    (a->kind == ND_ADDR ? addr : expr)(e, a);
  }
  buf_puts(&e->out, ")");
}
