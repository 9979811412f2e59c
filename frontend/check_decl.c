/* check_decl.c: declarations: the one namespace of top-level names,
 * structs and their layout, signatures and overload sets, bodies, module
 * constants, and the call graph (recursion, what kernels reach).
 *
 * Requires: check_stmt.c for bodies, check_const.c for constants.
 * Produces: the steps check.c's driver runs in order (ck_collect,
 * ck_check_structs, ck_signature, ck_check_overloads, ck_eval_const,
 * ck_check_body, ck_find_recursion, ck_mark_used). Breaks: struct layout
 * follows C; recursion is an error (GPUs have no call stack for it).
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

/* ---- declarations -------------------------------------------------------------------- */

static void push_decl(Check *c, Decl ***v, int *n, int *cap, Decl *d) {
  *v = ck_grow(c, *v, *n, cap, sizeof **v);
  (*v)[(*n)++] = d;
}

/* A generic function is not an overload of its own: its instances are. */
static void sym_add_fn(Check *c, Sym *s, Decl *d) {
  if (d->ntparams) {
    s->gens = ck_grow(c, s->gens, s->ngens, &s->capgens, sizeof *s->gens);
    s->gens[s->ngens++] = d;
    return;
  }
  s->fns = ck_grow(c, s->fns, s->nfns, &s->cap, sizeof *s->fns);
  s->fns[s->nfns++] = d;
}

static bool reserved(Check *c, Decl *d) {
  int first;
  if (ck_special_kind(d->name) != SP_NONE) {
    diag_error(c->diags, d->name_loc, "'%s' is a builtin and cannot be redefined", d->name);
    return true;
  }
  if (d->kind != DECL_FUNC && builtin_overloads(d->name, &first) > 0 && d->kind != DECL_CONST) {
    diag_error(c->diags, d->name_loc, "'%s' is the name of a builtin function", d->name);
    return true;
  }
  return false;
}

/* Enters one declaration into the namespace; false for a duplicate. */
static bool enter_decl(Check *c, Decl *d) {
  if (reserved(c, d)) return false;
  Sym *s = ck_map_get(&c->globals, d->name);
  if (d->ntparams) ck_generic_decl(c, d);
  if (s && d->kind == DECL_FUNC && s->decl->kind == DECL_FUNC) {
    sym_add_fn(c, s, d);
    return true;
  }
  if (s) {
    diag_error(c->diags, d->name_loc, "redefinition of '%s'", d->name);
    diag_note(c->diags, s->decl->name_loc, "'%s' was first declared here", d->name);
    return false;
  }
  s = ck_alloc(c, sizeof *s);
  s->decl = d;
  if (d->kind == DECL_FUNC) sym_add_fn(c, s, d);
  ck_map_put(c, &c->globals, d->name, s);
  return true;
}

void ck_collect(Check *c, Lists *L) {
  for (Module *m = c->prog->modules; m; m = m->next) {
    for (Decl *d = m->decls; d; d = d->next) {
      if (d->kind == DECL_IMPORT || !d->name || !enter_decl(c, d)) continue;
      switch (d->kind) {
        case DECL_STRUCT: push_decl(c, &L->structs, &L->nstructs, &L->cstructs, d); break;
        case DECL_CONST: push_decl(c, &L->consts, &L->nconsts, &L->cconsts, d); break;
        case DECL_FUNC: /* a generic one only through its instances */
          if (!d->ntparams) push_decl(c, &L->funcs, &L->nfuncs, &L->cfuncs, d);
          break;
        case DECL_ENUM: /* a name for int32; its enumerators are constants */
          if (d->nmembers == 0) diag_error(c->diags, d->name_loc, "enum '%s' is empty", d->name);
          break;
        default: push_decl(c, &L->kernels, &L->nkernels, &L->ckernels, d); break;
      }
    }
  }
}

/* ---- structs ------------------------------------------------------------------------- */

static Type *field_type(Check *c, Decl *s, Field *f) {
  Type *t = ck_resolve_type(c, f->texpr, "a struct field");
  if (!t) {
    diag_error(c->diags, f->loc, "a struct field cannot be auto");
    return &ty_error;
  }
  if (t->kind == TY_VOID) {
    diag_error(c->diags, f->loc, "field '%s' cannot be void", f->name);
    return &ty_error;
  }
  return t;
}

static void layout(Check *c, Decl *s, Lists *L);

/* Resolves a field's type, laying out a struct it contains first. */
static Type *field_struct(Check *c, Decl *s, Field *f, Lists *L) {
  Type *t = field_type(c, s, f);
  if (t->kind != TY_STRUCT) return t;
  Info *in = ck_info(c, t->sdecl);
  if (in->state == 1) {
    diag_error(c->diags, f->loc, "field '%s' makes struct '%s' contain itself", f->name,
               t->sdecl->name);
    return &ty_error;
  }
  layout(c, t->sdecl, L);
  return t;
}

static void dup_fields(Check *c, Decl *s) {
  for (int i = 0; i < s->nfields; i++)
    for (int j = 0; j < i; j++)
      if (s->fields[i].name && s->fields[j].name &&
          strcmp(s->fields[i].name, s->fields[j].name) == 0) {
        diag_error(c->diags, s->fields[i].loc, "duplicate field '%s' in struct '%s'",
                   s->fields[i].name, s->name);
        diag_note(c->diags, s->fields[j].loc, "'%s' was first declared here", s->fields[j].name);
        break;
      }
}

/* C layout: each field at its alignment, the size a multiple of the largest. */
static void layout(Check *c, Decl *s, Lists *L) {
  Info *in = ck_info(c, s);
  if (in->state != 0) return;
  in->state = 1;
  if (ck_nest_enter(c, s->name_loc)) {
    if (s->nfields == 0) diag_error(c->diags, s->name_loc, "struct '%s' has no fields", s->name);
    dup_fields(c, s);
    int64_t off = 0;
    int align = 1;
    for (int i = 0; i < s->nfields; i++) {
      Field *f = &s->fields[i];
      f->ty = field_struct(c, s, f, L);
      int a = f->ty->align > 0 ? f->ty->align : 1;
      off = (off + a - 1) / a * a;
      f->offset = (int)(off < INT_MAX ? off : 0);
      off += f->ty->size;
      align = a > align ? a : align;
      if (off > (1 << 30)) {
        diag_error(c->diags, s->name_loc, "struct '%s' is too large", s->name);
        off = 0;
        break;
      }
    }
    s->sty->size = (int)((off + align - 1) / align * align);
    s->sty->align = align;
  }
  c->nest--;
  in->state = 2;
  push_decl(c, &L->structs, &L->nstructs, &L->cstructs, s);
}

void ck_check_structs(Check *c, Lists *L) {
  Decl **all = L->structs;
  int n = L->nstructs;
  for (int i = 0; i < n; i++) {
    Type *t = ck_alloc(c, sizeof *t);
    t->kind = TY_STRUCT;
    t->sdecl = all[i];
    t->name = all[i]->name;
    t->align = 1;
    all[i]->sty = t;
  }
  /* Re-list in dependency order: a struct after the structs it contains. */
  L->structs = NULL;
  L->nstructs = L->cstructs = 0;
  for (int i = 0; i < n; i++) layout(c, all[i], L);
}

/* ---- functions ----------------------------------------------------------------------- */

/* One extent of a local array; 0 when it is not one (reported). */
static int fixed_extent(Check *c, Node *e, const char *name) {
  Val v = ck_expr(c, e);
  if (ck_is_err(v.ty)) return 0;
  if (!v.is_const || !ck_is_intlike(v.ty)) {
    diag_error(c->diags, e->loc, "the size of local array '%s' must be a constant integer", name);
    return 0;
  }
  if (v.i < 1 || v.i > (1 << 30)) {
    diag_error(c->diags, e->loc, "the size of local array '%s' is %s; it must be 1 to %d", name,
               ck_val_text(c, &v), 1 << 30);
    return 0;
  }
  return (int)v.i;
}

Type *ck_fixed_type(Check *c, TypeExpr *te, Type *elem, const char *name) {
  int dims[4];
  bool ok = true;
  for (int i = 0; i < te->nfixed; i++) ok = (dims[i] = fixed_extent(c, te->fixed[i], name)) && ok;
  if (!elem) {
    diag_error(c->diags, te->loc, "local array '%s' needs an element type, not auto", name);
    return &ty_error;
  }
  if (ck_is_err(elem) || !ok) return &ty_error;
  if (elem->kind == TY_VOID || elem->kind == TY_ARRAY || elem->kind == TY_TILE) {
    diag_error(c->diags, te->loc, "local array '%s' cannot hold %s elements", name,
               elem->kind == TY_VOID ? "void" : ck_tname(elem));
    return &ty_error;
  }
  int64_t bytes = elem->size;
  for (int i = 0; i < te->nfixed && bytes <= (1 << 30); i++) bytes *= dims[i];
  if (bytes > (1 << 30)) {
    diag_error(c->diags, te->loc, "local array '%s' is too large (more than %d bytes)", name,
               1 << 30);
    return &ty_error;
  }
  Type *t = type_fixed(c->arena, elem, te->nfixed, dims);
  if (!t) longjmp(c->oom, 1);
  return t;
}

/* `T &name`: what a reference parameter may not be. It stays a reference
 * after an error (calls then check their arguments as for one). */
static void ref_param(Check *c, Decl *d, Var *p) {
  if (ck_is_err(p->ty)) return;
  if (d->kind == DECL_KERNEL) {
    diag_error(c->diags, p->ref_loc, "kernel parameter '%s' cannot be a reference", p->name);
    diag_note(c->diags, p->ref_loc,
              "the host passes a kernel's arguments by value; pass a variable of the kernel to a "
              "function's reference parameter instead");
  } else if (p->ty->kind == TY_ARRAY || p->ty->kind == TY_FIXED) {
    diag_error(c->diags, p->ref_loc,
               "array parameter '%s' is already passed by reference; remove the '&'", p->name);
  } else if (p->ty->kind == TY_TILE) {
    diag_error(c->diags, p->ref_loc, "tile parameter '%s' cannot be a reference", p->name);
  } else if (p->is_const) {
    diag_error(c->diags, p->ref_loc, "reference parameter '%s' cannot be const", p->name);
    diag_note(c->diags, p->ref_loc, "pass it by value ('const %s %s') to read it only",
              ck_tname(p->ty), p->name);
  }
}

void ck_signature(Check *c, Decl *d) {
  bool kernel = d->kind == DECL_KERNEL;
  Type *rt = d->texpr ? ck_resolve_type(c, d->texpr, "a return type") : &ty_void;
  if (!rt) {
    diag_error(c->diags, d->texpr->loc, "a function cannot return auto");
    rt = &ty_error;
  }
  if (kernel && rt->kind != TY_VOID && !ck_is_err(rt))
    diag_error(c->diags, d->texpr->loc, "kernel '%s' must return void", d->name);
  d->ret = kernel ? &ty_void : rt;
  for (int i = 0; i < d->nparams; i++) {
    Var *p = d->params[i];
    p->is_param = true;
    Type *t = ck_resolve_type(c, p->texpr, NULL);
    if (!t) {
      diag_error(c->diags, p->loc, "parameter '%s' cannot be auto", p->name);
      t = &ty_error;
    } else if (t->kind == TY_VOID) {
      diag_error(c->diags, p->loc, "parameter '%s' cannot be void", p->name);
      t = &ty_error;
    }
    if (p->texpr && p->texpr->nfixed) t = ck_fixed_type(c, p->texpr, t, p->name);
    if (kernel && t->kind == TY_FIXED) {
      diag_error(c->diags, p->loc,
                 "kernel parameter '%s' cannot be a local array; pass an array (%s[]) instead",
                 p->name, ck_tname(t->elem));
      t = &ty_error;
    }
    p->ty = t;
    if (p->is_ref) ref_param(c, d, p);
  }
}

static bool same_params(Type *const *a, int na, Type *const *b, int nb) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!type_equal(a[i], b[i])) return false;
  return true;
}

/* Overloads must differ in their parameter types, from each other and from
 * builtins of the same name. A repeated signature is reported and leaves the
 * overload set, so calls do not cascade into "ambiguous call" errors. */
void ck_check_overloads(Check *c, Sym *s) {
  int kept = 0;
  for (int i = 0; i < s->nfns; i++) {
    Decl *d = s->fns[i];
    Type **pi = ck_param_types(c, d);
    bool dup = false;
    for (int j = 0; j < kept && !dup; j++) {
      if (same_params(pi, d->nparams, ck_param_types(c, s->fns[j]), s->fns[j]->nparams)) {
        diag_error(c->diags, d->name_loc, "redefinition of %s",
                   ck_sig_text(c, d->name, pi, d->nparams));
        diag_note(c->diags, s->fns[j]->name_loc, "first defined here");
        dup = true;
      }
    }
    int first, nb = builtin_overloads(d->name, &first);
    for (int j = 0; j < nb && !dup; j++) {
      const Builtin *b = builtin_get(first + j);
      if (same_params(pi, d->nparams, b->params, b->nparams)) {
        diag_error(c->diags, d->name_loc, "%s is already a builtin function",
                   ck_sig_text(c, d->name, pi, d->nparams));
        dup = true;
      }
    }
    if (!dup) {
      d->overload = kept;
      s->fns[kept++] = d;
    }
  }
  s->nfns = kept;
}

void ck_check_body(Check *c, Decl *d) {
  c->fn = d;
  c->fninfo = ck_info(c, d);
  c->nvars = 0;
  c->locals = (Map){0};
  c->nundo = 0;
  c->depth = 0;
  c->loops = 0;
  ck_scope_open(c);
  for (int i = 0; i < d->nparams; i++) {
    d->params[i]->id = c->nvars++;
    ck_declare(c, d->params[i]);
  }
  if (d->body)
    for (Node *s = d->body->kind == ND_BLOCK ? d->body->body : d->body; s; s = s->next)
      ck_stmt(c, s);
  ck_scope_close(c);
  d->nvars = c->nvars;
  bool needs = d->kind == DECL_FUNC && d->ret && d->ret->kind != TY_VOID && !ck_is_err(d->ret);
  if (needs && d->body && !c->too_deep && !ck_returns(d->body))
    diag_error(c->diags, ck_end_loc(d->body->loc),
               "function '%s' may reach its end without returning a value", d->name);
  c->fn = NULL;
  c->fninfo = NULL;
}

/* ---- constants --------------------------------------------------------------- */

static bool aggregate_type(const Type *t) {
  return t->kind == TY_VEC || t->kind == TY_MAT || t->kind == TY_QUAT || t->kind == TY_TRANSFORM ||
         t->kind == TY_STRUCT;
}

/* The part of an aggregate constant's initializer that is not constant, or
 * NULL: it is made of constants, constructors, operators, components and
 * builtin functions (pure, so the value is the same wherever it is inlined). */
static const Node *not_constant(const Node *n) {
  if (!n || n->is_const) return NULL;
  const Node *x = NULL;
  switch (n->kind) {
    case ND_IDENT: return n->cdecl ? NULL : n;
    case ND_CONV:
    case ND_CAST:
    case ND_MEMBER:
    case ND_UNARY: return not_constant(n->lhs);
    case ND_BINARY: return (x = not_constant(n->lhs)) ? x : not_constant(n->rhs);
    case ND_COND:
      if ((x = not_constant(n->cond)) || (x = not_constant(n->then))) return x;
      return not_constant(n->els);
    case ND_INDEX: /* a component or row of a vector or matrix */
      if (!n->lhs->ty || n->lhs->ty->kind == TY_ARRAY || n->lhs->ty->kind == TY_FIXED) return n;
      if ((x = not_constant(n->lhs))) return x;
      for (const Node *a = n->args; a && !x; a = a->next) x = not_constant(a);
      return x;
    case ND_CALL:
      if (n->call_kind != CALL_CTOR && n->call_kind != CALL_BUILTIN) return n;
      for (const Node *a = n->args; a && !x; a = a->next) x = not_constant(a);
      return x;
    default: return n;
  }
}

static void report_not_constant(Check *c, Decl *d, const Node *bad) {
  diag_error(c->diags, d->init->loc, "the value of %s '%s' is not a constant expression",
             d->of_enum ? "enumerator" : "constant", d->name);
  if (bad && bad != d->init)
    diag_note(c->diags, bad->loc,
              "this part is not constant: a vector, matrix, quat, transform or struct constant "
              "is built from constants, constructors, operators and builtin functions");
}

/* The declared type of constant d: NULL for auto, ty_error when it cannot be one. */
static Type *const_type(Check *c, Decl *d) {
  Type *t = ck_resolve_type(c, d->texpr, "a constant");
  if (t && !ck_is_err(t) && !type_is_scalar(t) && !aggregate_type(t)) {
    diag_error(c->diags, d->texpr->loc,
               "constant '%s' must have a scalar, vector, matrix, quat, transform or struct "
               "type, not %s",
               d->name, ck_tname(t));
    t = &ty_error;
  }
  return t;
}

void ck_eval_const(Check *c, Decl *d) {
  Info *in = ck_info(c, d);
  Decl *fn = c->fn;
  Info *fi = c->fninfo;
  c->fn = NULL;
  c->fninfo = NULL;
  in->state = 1;
  Type *t = const_type(c, d);
  int errors = diag_errors(c->diags);
  Val v = ck_expr(c, d->init);
  bool aggregate = t ? !ck_is_err(t) && aggregate_type(t) : aggregate_type(v.ty);
  bool typed_ok = !t || !ck_is_err(t); /* auto (NULL) takes the value's type */
  bool clean = !ck_is_err(v.ty) && diag_errors(c->diags) == errors && typed_ok;
  const Node *bad = aggregate && clean ? not_constant(d->init) : NULL;
  if (clean && (aggregate ? bad != NULL : !v.is_const)) {
    report_not_constant(c, d, bad);
    v = ck_val_err();
  }
  if (!t)
    ck_default_type(c, d->init, &v);
  else if (!ck_is_err(t))
    ck_convert(c, d->init, &v, t, (Ctx){"initialization of", d->name, 0});
  if (!typed_ok) v = ck_val_err();
  if (!ck_is_err(v.ty) && !aggregate) ck_set_const(d->init, v);
  in->cval = v;
  in->state = 2;
  c->fn = fn;
  c->fninfo = fi;
}

/* ---- the call graph ---------------------------------------------------------- */

typedef struct Frame {
  Decl *d;
  int next;
} Frame;

enum { CYCLE_NAMES = 10 };

/* The cycle as "a -> b -> ... -> a"; a long one shows its first functions
 * and its last, and counts the rest. */
static void report_cycle(Check *c, Frame *st, int top, Info *callee, Edge e) {
  int first = callee->stackpos, n = top - first + 1;
  int head = n > CYCLE_NAMES ? CYCLE_NAMES - 1 : n;
  size_t len = strlen(e.callee->name) + 64 + strlen(st[top].d->name);
  for (int i = first; i < first + head; i++) len += strlen(st[i].d->name) + 4;
  char *path = ck_alloc(c, len);
  char *p = path;
  for (int i = first; i < first + head; i++) p += sprintf(p, "%s -> ", st[i].d->name);
  if (head < n) p += sprintf(p, "... (%d more) -> %s -> ", n - head - 1, st[top].d->name);
  strcpy(p, e.callee->name);
  diag_error(c->diags, e.loc, "recursion is not allowed: %s", path);
  diag_note(c->diags, (SrcLoc){0}, "GPUs have no call stack for recursive calls; use a loop");
}

/* Iterative DFS (call chains may be long); each back edge is one cycle. */
void ck_find_recursion(Check *c, Decl **fns, int n) {
  Frame *st = ck_alloc(c, (size_t)(n + 1) * sizeof *st);
  for (int r = 0; r < n; r++) {
    Info *ri = ck_info(c, fns[r]);
    if (ri->state != 0) continue;
    int top = 0;
    st[0] = (Frame){fns[r], 0};
    ri->state = 1;
    ri->stackpos = 0;
    while (top >= 0) {
      Info *in = ck_info(c, st[top].d);
      if (st[top].next >= in->nedges) {
        in->state = 2;
        top--;
        continue;
      }
      Edge e = in->edges[st[top].next++];
      Info *ci = ck_info(c, e.callee);
      if (ci->state == 1) {
        report_cycle(c, st, top, ci, e);
      } else if (ci->state == 0 && top < n) {
        ci->state = 1;
        ci->stackpos = ++top;
        st[top] = (Frame){e.callee, 0};
      }
    }
  }
}

void ck_mark_used(Check *c, Decl **kernels, int nk, int nfuncs) {
  Decl **queue = ck_alloc(c, (size_t)(nk + nfuncs + 1) * sizeof *queue);
  int head = 0, tail = 0;
  for (int i = 0; i < nk; i++) {
    kernels[i]->used = true;
    queue[tail++] = kernels[i];
  }
  while (head < tail) {
    Info *in = ck_info(c, queue[head++]);
    for (int i = 0; i < in->nedges; i++) {
      Decl *d = in->edges[i].callee;
      if (!d->used && tail < nk + nfuncs) {
        d->used = true;
        queue[tail++] = d;
      }
    }
  }
}
