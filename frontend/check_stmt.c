/* check_stmt.c: statements, and whether a body returns on every path.
 *
 * Requires: check_expr.c. Produces: ck_stmt, ck_returns, ck_end_loc. Breaks:
 * assignments and ++/-- are statements; local variables get their ids and
 * scopes here; the return analysis is conservative (check.c's overview).
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- statements ---------------------------------------------------------------------------- */

/* Reports why n cannot be assigned to; true when it can. */
static bool assignable(Check *c, Node *n) {
  switch (n->kind) {
    case ND_IDENT:
      if (n->cdecl) {
        diag_error(c->diags, n->loc, "cannot assign to const '%s'", n->name);
        diag_note(c->diags, n->cdecl->name_loc, "'%s' is declared here", n->name);
        return false;
      }
      if (!n->var) return false;
      if (n->var->is_const) {
        diag_error(c->diags, n->loc, "cannot assign to const '%s'", n->name);
        diag_note(c->diags, n->var->loc, "'%s' is declared here", n->name);
        return false;
      }
      if (n->var->ty && (n->var->ty->kind == TY_ARRAY || n->var->ty->kind == TY_FIXED)) {
        diag_error(c->diags, n->loc, "cannot assign to array '%s'; assign its elements instead",
                   n->name);
        return false;
      }
      return true;
    case ND_INDEX:
      if (n->lhs->ty && (n->lhs->ty->kind == TY_ARRAY || n->lhs->ty->kind == TY_FIXED)) {
        Var *v = n->lhs->kind == ND_IDENT ? n->lhs->var : NULL;
        if (v && v->is_const) {
          diag_error(c->diags, n->loc, "cannot assign to an element of const array '%s'", v->name);
          return false;
        }
        return true;
      }
      return assignable(c, n->lhs);
    case ND_MEMBER: return assignable(c, n->lhs);
    default: diag_error(c->diags, n->loc, "this expression cannot be assigned to"); return false;
  }
}

static void assign(Check *c, Node *n) {
  Val l = ck_expr(c, n->lhs);
  Val r = ck_expr(c, n->rhs);
  if (!ck_is_err(l.ty)) assignable(c, n->lhs);
  if (ck_is_err(l.ty) || ck_is_err(r.ty)) return;
  if (n->op == TK_ASSIGN) {
    ck_convert(c, n->rhs, &r, l.ty, (Ctx){"assignment", NULL, 0});
    return;
  }
  Type *t = ck_operate(c, n, tok_compound_op(n->op), n->lhs, &l, n->rhs, &r, true);
  if (!ck_is_err(t) && !type_equal(t, l.ty))
    diag_error(c->diags, n->loc, "the result of '%s' is %s, but its target is %s",
               tok_spelling(n->op), ck_tname(t), ck_tname(l.ty));
}

static void incdec(Check *c, Node *n) {
  Val l = ck_expr(c, n->lhs);
  if (ck_is_err(l.ty)) return;
  if (!type_is_numeric(l.ty)) {
    diag_error(c->diags, n->loc, "'%s' needs an integer or floating-point operand, not %s",
               n->op == TK_INC ? "++" : "--", ck_tname(l.ty));
    return;
  }
  assignable(c, n->lhs);
}

/* A local array's initializer: a list of at most its count of elements,
 * each converted to the element type (the rest are zero). */
static void init_list(Check *c, Var *v, Type *t) {
  Node *l = v->init;
  if (l->kind != ND_INIT_LIST) {
    Val iv = ck_rvalue(c, l);
    if (!ck_is_err(iv.ty) && !ck_is_err(t))
      diag_error(c->diags, l->loc,
                 "local array '%s' is initialized with a list of its elements, '= {...}' (arrays "
                 "are not copied)",
                 v->name);
    return;
  }
  int64_t count = ck_is_err(t) ? 0 : type_fixed_count(t), k = 0;
  for (Node *a = l->args; a; a = a->next, k++) {
    if (ck_is_err(t) || k >= count) {
      if (k == count && count > 0)
        diag_error(c->diags, a->loc, "too many values for local array '%s' of %lld element%s",
                   v->name, (long long)count, count == 1 ? "" : "s");
      ck_rvalue(c, a);
      continue;
    }
    ck_expect(c, a, t->elem, (Ctx){"element", v->name, (int)k + 1});
  }
  l->ty = t;
}

static void vardecl(Check *c, Node *n) {
  Var *v = n->var;
  if (!v) return;
  Type *t = ck_resolve_type(c, v->texpr, "a local variable");
  if (v->texpr && v->texpr->nfixed) {
    t = ck_fixed_type(c, v->texpr, t, v->name);
    if (v->init) init_list(c, v, t);
    v->ty = t;
    v->id = c->nvars++;
    ck_declare(c, v);
    return;
  }
  if (v->init && v->init->kind == ND_INIT_LIST) {
    diag_error(c->diags, v->init->loc,
               "'{...}' initializes a local array; '%s' is not one (declare 'T %s[n]')", v->name,
               v->name);
    for (Node *a = v->init->args; a; a = a->next) ck_rvalue(c, a);
    v->ty = &ty_error;
    v->id = c->nvars++;
    ck_declare(c, v);
    return;
  }
  if (t && t->kind == TY_VOID) {
    diag_error(c->diags, v->loc, "variable '%s' cannot be void", v->name);
    t = &ty_error;
  }
  if (!v->init) {
    diag_error(c->diags, v->loc, "variable '%s' needs an initializer", v->name);
    t = t ? t : &ty_error;
  } else if (!t) {
    Val iv = ck_rvalue(c, v->init);
    t = iv.ty;
    if (!ck_is_err(t) && !type_is_scalar(t) && !ck_is_vmq(t) && t->kind != TY_STRUCT &&
        t->kind != TY_TILE) {
      diag_error(c->diags, v->init->loc, "cannot declare variable '%s' of type %s", v->name,
                 ck_tname(t));
      t = &ty_error;
    }
  } else {
    ck_expect(c, v->init, t, (Ctx){"initialization of", v->name, 0});
  }
  v->ty = t;
  v->id = c->nvars++;
  ck_declare(c, v);
}

static void scoped_stmt(Check *c, Node *n) {
  ck_scope_open(c);
  ck_stmt(c, n);
  ck_scope_close(c);
}

static void loop_body(Check *c, Node *n) {
  c->loops++;
  scoped_stmt(c, n);
  c->loops--;
}

static void return_stmt(Check *c, Node *n) {
  Decl *f = c->fn;
  bool kernel = f->kind == DECL_KERNEL;
  Type *rt = f->ret ? f->ret : &ty_error;
  if (!n->lhs) {
    if (!kernel && rt->kind != TY_VOID && !ck_is_err(rt))
      diag_error(c->diags, n->loc, "non-void function '%s' must return a value", f->name);
    return;
  }
  Val v = ck_expr(c, n->lhs);
  if (kernel)
    diag_error(c->diags, n->loc, "kernel '%s' cannot return a value (kernels are void)", f->name);
  else if (rt->kind == TY_VOID)
    diag_error(c->diags, n->loc, "void function '%s' cannot return a value", f->name);
  else
    ck_convert(c, n->lhs, &v, rt, (Ctx){"the return value of", f->name, 0});
}

static void stmt_kind(Check *c, Node *n) {
  switch (n->kind) {
    case ND_VARDECL: vardecl(c, n); break;
    case ND_ASSIGN: assign(c, n); break;
    case ND_INCDEC: incdec(c, n); break;
    case ND_EXPR_STMT: {
      Val v = ck_rvalue(c, n->lhs);
      if (!ck_is_err(v.ty) && n->lhs && n->lhs->kind != ND_CALL)
        diag_warning(c->diags, n->lhs->loc, "expression result unused");
      break;
    }
    case ND_BLOCK:
      ck_scope_open(c);
      for (Node *s = n->body; s; s = s->next) ck_stmt(c, s);
      ck_scope_close(c);
      break;
    case ND_IF: /* an else-if chain in a loop: it is not nesting */
      if (n->is_static) {
        ck_static_if(c, n);
        break;
      }
      for (;; n = n->els) {
        ck_expect_bool(c, n->cond, "the condition of 'if'");
        scoped_stmt(c, n->then);
        if (!n->els || n->els->kind != ND_IF || n->els->is_static) break;
      }
      scoped_stmt(c, n->els);
      break;
    case ND_WHILE:
      ck_expect_bool(c, n->cond, "the condition of 'while'");
      loop_body(c, n->body);
      break;
    case ND_DO:
      loop_body(c, n->body);
      ck_expect_bool(c, n->cond, "the condition of 'do ... while'");
      break;
    case ND_FOR:
      if (n->is_static) {
        ck_static_for(c, n);
        break;
      }
      ck_scope_open(c);
      ck_stmt(c, n->init);
      if (n->cond) ck_expect_bool(c, n->cond, "the condition of 'for'");
      ck_stmt(c, n->inc);
      loop_body(c, n->body);
      ck_scope_close(c);
      break;
    case ND_BREAK:
    case ND_CONTINUE:
      if (c->unroll_at >= 0 && c->loops == c->unroll_at)
        diag_error(c->diags, n->loc,
                   "'%s' cannot leave a 'static for': its iterations are unrolled while compiling",
                   n->kind == ND_BREAK ? "break" : "continue");
      else if (!c->loops)
        diag_error(c->diags, n->loc, "'%s' outside a loop",
                   n->kind == ND_BREAK ? "break" : "continue");
      break;
    case ND_RETURN: return_stmt(c, n); break;
    case ND_EMPTY: break;
    default: ck_rvalue(c, n); break;
  }
}

void ck_stmt(Check *c, Node *n) {
  if (!n) return;
  if (ck_nest_enter(c, n->loc)) stmt_kind(c, n);
  c->nest--;
}

/* ---- return paths ---------------------------------------------------------------------------- */

static bool const_true(const Node *cond) { return !cond || (cond->kind == ND_BOOL && cond->ival); }

/* Does s contain a break that leaves the loop s is the body of? */
static bool breaks(const Node *s) {
  if (!s) return false;
  switch (s->kind) {
    case ND_BREAK: return true;
    case ND_IF:
      for (; s && s->kind == ND_IF; s = s->els) /* else-if chains: a loop */
        if (breaks(s->then)) return true;
      return breaks(s);
    case ND_BLOCK:
      for (const Node *k = s->body; k; k = k->next)
        if (breaks(k)) return true;
      return false;
    default: return false; /* nested loops own their breaks */
  }
}

bool ck_returns(const Node *s) {
  if (!s) return false;
  switch (s->kind) {
    case ND_RETURN: return true;
    case ND_BLOCK:
      for (const Node *k = s->body; k; k = k->next)
        if (ck_returns(k)) return true;
      return false;
    case ND_IF:
      for (; s && s->kind == ND_IF; s = s->els) /* else-if chains: a loop */
        if (!ck_returns(s->then)) return false;
      return ck_returns(s);
    case ND_WHILE:
    case ND_FOR: return const_true(s->cond) && !breaks(s->body);
    case ND_DO: return ck_returns(s->body) || (const_true(s->cond) && !breaks(s->body));
    default: return false;
  }
}

/* The location of the last byte of n (a body's closing brace). */
SrcLoc ck_end_loc(SrcLoc l) {
  if (!l.src || l.len == 0) return l;
  unsigned last = l.offset + l.len - 1;
  for (unsigned i = l.offset; i < last; i++) {
    if (l.src[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  l.offset = last;
  l.len = 1;
  return l;
}
