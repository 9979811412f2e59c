/* progen_stmt.c: the random program generator's statements and
 * declarations (constants, the struct, functions, kernels), and progen()
 * itself; the expressions inside them come from progen.c.
 *
 * Requires: progen.c (progen_internal.h). Produces: progen(),
 * progen_prefixed(). Every statement keeps the model of what is in scope
 * (Gen) true for the expressions written after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progen_internal.h"

static void block(Gen *g, int n);
static void stmt(Gen *g);

/* ---- statements ------------------------------------------------------------------ */

static void decl_stmt(Gen *g) {
  Ty t = pg_any_type(g, true);
  char name[NAME];
  pg_fresh(g, name, "v");
  bool ro = pg_chance(g, 15);
  pg_indent(g);
  if (!ro && t != T_S && pg_chance(g, 15)) {
    pg_put(g, "auto %s = ", name);
    pg_expr(g, t, pg_depth(g), F_NC); /* of type t exactly: no untyped constant */
  } else {
    const char *tn = t == T_I32 && g->ename[0] && pg_chance(g, 30) ? g->ename : pg_tname(g, t);
    pg_put(g, "%s%s %s = ", ro ? "const " : "", tn, name);
    Ty from = pg_narrower(g, t);
    pg_expr(g, from, pg_depth(g), 0);
  }
  pg_put(g, ";\n");
  pg_add_var(g, name, t, ro);
}

/* A local array `T Ln[d0(, d1)]`, zeroed or from a list (the rest zero);
 * like f's `pl` when f is not NULL, so f can be given it. */
static void larr_decl(Gen *g, const Fn *f) {
  if (g->nlarrs == MAX_LARRS) {
    decl_stmt(g);
    return;
  }
  LArr *a = &g->larrs[g->nlarrs];
  a->t = f ? f->larr_t : pg_any_type(g, true);
  a->ndim = !f && pg_chance(g, 25) ? 2 : 1;
  a->dims[0] = f ? f->larr_n : 1 + pg_rnd(g, 6);
  a->dims[1] = a->ndim == 2 ? 1 + pg_rnd(g, 4) : 1;
  a->ro = (!f || f->larr_ro) && pg_chance(g, 15);
  pg_fresh(g, a->name, "L");
  pg_indent(g);
  pg_put(g, "%s%s %s[%d", a->ro ? "const " : "", pg_tname(g, a->t), a->name, a->dims[0]);
  if (a->ndim == 2) pg_put(g, ", %d", a->dims[1]);
  pg_put(g, "]");
  if (a->ro || pg_chance(g, 60)) {
    pg_put(g, " = {");
    for (int k = 0, n = pg_rnd(g, a->dims[0] * a->dims[1] + 1); k < n; k++) {
      if (k) pg_put(g, ", ");
      pg_expr(g, pg_narrower(g, a->t), pg_depth(g), 0);
    }
    pg_put(g, "}");
  }
  pg_put(g, ";\n");
  g->nlarrs++;
}

/* The target of an assignment: a variable, a component, a field or this
 * thread's element of an out array; *t gets its type. false: none. */
static bool lvalue(Gen *g, Ty *t) {
  static const char xyzw[] = "xyzw";
  const Arr *outs[MAX_ARRS];
  int nouts = 0;
  for (int k = 0; k < g->narrs; k++)
    if (g->arrs[k].out) outs[nouts++] = &g->arrs[k];
  if (nouts && pg_chance(g, 35)) {
    const Arr *a = outs[pg_rnd(g, nouts)];
    pg_put(g, "%s", a->name);
    pg_own_index(g);
    *t = a->t;
    if (pg_is_vec(a->t) && pg_chance(g, 40)) {
      pg_put(g, ".%c", xyzw[pg_rnd(g, pg_ti(a->t)->len)]);
      *t = pg_ti(a->t)->comp;
    }
    return true;
  }
  const LArr *l = g->nlarrs && pg_chance(g, 25) ? &g->larrs[pg_rnd(g, g->nlarrs)] : NULL;
  if (l && !l->ro) {
    pg_larr_elem(g, l);
    *t = l->t;
    return true;
  }
  const Var *v = pg_find_var_if(g, pg_is_scalar, true);
  if (!v || pg_chance(g, 40)) v = pg_find_var(g, pg_any_type(g, true), true);
  if (!v) return false;
  pg_put(g, "%s", v->name);
  *t = v->t;
  if ((pg_is_vec(v->t) || pg_ti(v->t)->kind == K_QUAT) && pg_chance(g, 40)) {
    *t = pg_ti(v->t)->comp;
    if (pg_chance(g, 50) || !pg_is_vec(v->t))
      pg_put(g, ".%c", xyzw[pg_rnd(g, pg_ti(v->t)->len)]);
    else {
      pg_put(g, "[");
      pg_expr(g, pg_int_type(g), 1, F_NC);
      pg_put(g, "]");
    }
  } else if (pg_ti(v->t)->kind == K_MAT && pg_chance(g, 50)) { /* a row or an element */
    pg_put(g, "[%d]", pg_rnd(g, pg_ti(v->t)->len));
    *t = (Ty)(T_VEC2 + pg_ti(v->t)->len - 2);
    if (pg_chance(g, 50)) {
      pg_put(g, "[%d]", pg_rnd(g, pg_ti(v->t)->len));
      *t = T_F32;
    }
  } else if (v->t == T_S) {
    int f = pg_rnd(g, g->nfields);
    pg_put(g, ".f%d", f);
    *t = g->fields[f];
  }
  return true;
}

static void assign_stmt(Gen *g) {
  static const char *const iops[] = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  static const char *const fops[] = {"+=", "-=", "*=", "/="};
  Ty t;
  size_t mark = g->len;
  pg_indent(g);
  if (!lvalue(g, &t)) {
    g->len = mark;
    return;
  }
  int op = -1;
  if (t != T_BOOL && t != T_S && pg_chance(g, 45)) op = pg_is_int(t) ? pg_rnd(g, 10) : pg_rnd(g, 4);
  if (op >= 0 && (pg_is_int(t) || pg_is_float(t)) && pg_chance(g, 20)) {
    pg_put(g, "%s;\n", pg_chance(g, 50) ? "++" : "--");
    return;
  }
  Kind k = pg_ti(t)->kind;
  if (k == K_QUAT && op == 3) op = 2; /* a quat has no / */
  pg_put(g, " %s ", op < 0 ? "=" : pg_is_int(t) ? iops[op] : fops[op]);
  int fl = op == 3 || (pg_is_int(t) && op == 4) ? F_NZ : 0;
  Ty rt =
      op >= 8 ? pg_int_type(g) : pg_narrower(g, t); /* the value's type; one draw per statement */
  if (op >= 8)
    fl = F_NC;
  else if ((k == K_MAT && op == 3) || (k == K_QUAT && op == 2))
    rt = T_F32;
  else if ((k == K_VEC || k == K_MAT) && op >= 2 && pg_chance(g, 40))
    rt = pg_ti(t)->comp;
  pg_expr(g, rt, pg_depth(g), fl);
  pg_put(g, ";\n");
}

static void cond(Gen *g) {
  pg_put(g, "(");
  pg_expr(g, T_BOOL, pg_depth(g), F_NC);
  pg_put(g, ")");
}

static void if_stmt(Gen *g) {
  pg_indent(g);
  pg_put(g, "if ");
  cond(g);
  pg_put(g, " ");
  block(g, 1 + pg_rnd(g, 3));
  if (pg_chance(g, 50)) {
    pg_put(g, " else ");
    if (pg_chance(g, 20)) {
      pg_put(g, "if ");
      cond(g);
      pg_put(g, " ");
    }
    block(g, 1 + pg_rnd(g, 3));
  }
  pg_put(g, "\n");
}

/* The body of a loop: the counter's increment first (while, do), so a
 * `continue` never skips it. */
static void loop_body(Gen *g, const char *counter) {
  int saved = g->nvars, saved_l = g->nlarrs;
  pg_put(g, "{\n");
  g->indent++;
  g->nest++;
  g->loops++;
  if (counter) {
    pg_indent(g);
    pg_put(g, "%s++;\n", counter);
  }
  for (int k = 1 + pg_rnd(g, 3); k > 0; k--) stmt(g);
  g->loops--;
  g->nest--;
  g->indent--;
  pg_indent(g);
  pg_put(g, "}");
  g->nvars = saved;
  g->nlarrs = saved_l;
}

/* for, while or do-while with a constant trip count; the counter is read-only. */
static void loop_stmt(Gen *g) {
  char j[NAME];
  pg_fresh(g, j, "j");
  static const Ty counters[] = {T_I32, T_I32, T_I64, T_U32, T_I16, T_U8};
  Ty ct = counters[pg_rnd(g, 6)];
  int n = 1 + pg_rnd(g, 5), kind = pg_rnd(g, 4), saved = g->nvars;
  pg_indent(g);
  if (kind == 0)
    pg_put(g, "for (%s %s = 0; %s < %d; %s++) ", pg_tname(g, ct), j, j, n, j);
  else if (kind == 1) {
    const char *ctn = pg_tname(g, ct);
    pg_put(g, "for (%s %s = %d; %s > 0; %s -= %d) ", ctn, j, 2 * n, j, j, 1 + pg_rnd(g, 2));
  } else {
    pg_put(g, "int %s = 0;\n", j);
    pg_indent(g);
    if (kind == 2)
      pg_put(g, "while (%s < %d) ", j, n);
    else
      pg_put(g, "do ");
  }
  pg_add_var(g, j, kind < 2 ? ct : T_I32, true);
  loop_body(g, kind >= 2 ? j : NULL);
  if (kind == 3) pg_put(g, " while (%s < %d);", j, n);
  pg_put(g, "\n");
  g->nvars = kind >= 2 ? saved + 1 : saved; /* a while counter belongs to the enclosing block */
}

/* A loop over the last dimension of an input array (in a 2-D kernel, along
 * this thread's row). */
static void array_loop(Gen *g) {
  const Arr *in[MAX_ARRS];
  int n = 0;
  for (int k = 0; k < g->narrs; k++)
    if (!g->arrs[k].out) in[n++] = &g->arrs[k];
  if (!n || g->loops || g->iter_arr) {
    loop_stmt(g);
    return;
  }
  const Arr *a = in[pg_rnd(g, n)];
  char j[NAME];
  pg_fresh(g, j, "j");
  pg_indent(g);
  pg_put(g, "for (int %s = 0; %s < shape(%s, %d); %s++) ", j, j, a->name, a->ndim - 1, j);
  pg_add_var(g, j, T_I32, true);
  g->iter_arr = a;
  snprintf(g->iter_var, NAME, "%s", j);
  loop_body(g, NULL);
  pg_put(g, "\n");
  g->iter_arr = NULL;
  g->nvars--;
}

static void jump_stmt(Gen *g) {
  pg_indent(g);
  pg_put(g, "if ");
  cond(g);
  if (g->loops && pg_chance(g, 80))
    pg_put(g, " { %s; }\n", pg_chance(g, 50) ? "break" : "continue");
  else if (g->kdim)
    pg_put(g, " { return; }\n");
  else {
    pg_put(g, " { return ");
    pg_expr(g, g->ret, pg_depth(g), 0);
    pg_put(g, "; }\n");
  }
}

/* A random state: uint32 sN = rand_init(..., ...). */
static void state_decl(Gen *g) {
  char name[NAME];
  pg_fresh(g, name, "s");
  pg_indent(g);
  pg_put(g, "uint32 %s = rand_init(", name);
  pg_expr(g, pg_int_type(g), 1, F_NC);
  pg_put(g, ", ");
  pg_expr(g, pg_int_type(g), 2, F_NC); /* a literal would have to fit uint32 */
  pg_put(g, ");\n");
  Var *v = pg_add_var(g, name, T_U32, false);
  if (v) v->state = true;
}

/* A call for its effect: an atomic or a function, result unused. */
static void effect_stmt(Gen *g) {
  size_t mark = g->len;
  pg_indent(g);
  Ty t = pg_chance(g, 50) ? T_I32 : pg_any_type(g, true);
  if (pg_effect_expr(g, t, pg_depth(g)) || pg_call(g, t, pg_depth(g)))
    pg_put(g, ";\n");
  else
    g->len = mark;
}

static void stmt(Gen *g) {
  bool deep = --g->budget > 0 && g->nest < 3;
  int r = pg_rnd(g, 100);
  if (r < 28)
    decl_stmt(g);
  else if (r < 58)
    assign_stmt(g);
  else if (r < 70 && deep)
    if_stmt(g);
  else if (r < 80 && deep && g->loops < 2)
    loop_stmt(g);
  else if (r < 85 && deep)
    array_loop(g);
  else if (r < 90)
    jump_stmt(g);
  else if (r < 95)
    effect_stmt(g);
  else if (r < 98)
    larr_decl(g, NULL);
  else
    decl_stmt(g);
}

static void block(Gen *g, int n) {
  int saved = g->nvars, saved_l = g->nlarrs;
  pg_put(g, "{\n");
  g->indent++;
  g->nest++;
  while (n-- > 0) stmt(g);
  g->nest--;
  g->indent--;
  pg_indent(g);
  pg_put(g, "}");
  g->nvars = saved;
  g->nlarrs = saved_l;
}

/* ---- declarations ------------------------------------------------------------------ */

static void reset_scope(Gen *g, int kdim, int budget) {
  g->nvars = g->narrs = g->nlarrs = 0;
  g->kdim = kdim;
  g->loops = g->nest = 0;
  g->budget = budget;
  g->iter_arr = NULL;
}

/* An enum: int32 constants, some with a value, the others one more than the
 * one before; a declaration of type int32 may then name the enum instead. */
static void enum_decl(Gen *g) {
  if (!pg_chance(g, 40) || g->nconsts == MAX_CONSTS) return;
  snprintf(g->ename, NAME, "%sE", g->prefix);
  pg_put(g, "enum %s {", g->ename);
  for (int k = 0, n = 1 + pg_rnd(g, 4); k < n && g->nconsts < MAX_CONSTS; k++) {
    Const *c = &g->consts[g->nconsts];
    c->t = T_I32;
    snprintf(c->name, NAME, "%sE%d", g->prefix, g->nconsts++);
    pg_put(g, "%s %s", k ? "," : "", c->name);
    if (pg_chance(g, 40)) pg_put(g, " = %d", pg_rnd(g, 200) - 100);
  }
  pg_put(g, " };\n");
}

static void consts(Gen *g) {
  for (int n = pg_rnd(g, 7); g->nconsts < n;) {
    Const *c = &g->consts[g->nconsts];
    c->t = pg_scalar_type(g);
    snprintf(c->name, NAME, "%sC%d", g->prefix, g->nconsts++);
    pg_put(g, "const %s %s = ", pg_tname(g, c->t), c->name);
    pg_literal(g, c->t, true);
    pg_put(g, ";\n");
  }
}

static void struct_decl(Gen *g) {
  if (pg_chance(g, 50)) return;
  g->nfields = 1 + pg_rnd(g, MAX_FIELDS);
  pg_put(g, "\nstruct %s {", g->sname);
  for (int k = 0; k < g->nfields; k++) {
    g->fields[k] = pg_any_type(g, false);
    pg_put(g, " %s f%d;", pg_tname(g, g->fields[k]), k);
  }
  pg_put(g, " };\n");
}

static bool same_signature(const Fn *a, const Fn *b) {
  if (a->np != b->np || a->has_arr != b->has_arr || (a->has_arr && a->arr_t != b->arr_t))
    return false;
  if (a->has_warr != b->has_warr || (a->has_warr && a->warr_t != b->warr_t)) return false;
  if (a->has_larr != b->has_larr ||
      (a->has_larr && (a->larr_t != b->larr_t || a->larr_n != b->larr_n)))
    return false;
  for (int k = 0; k < a->np; k++)
    if (a->params[k] != b->params[k]) return false;
  return true;
}

/* fns[k]'s name: sometimes an overload of an earlier function's. */
static void fn_name(Gen *g, int k) {
  Fn *f = &g->fns[k];
  snprintf(f->name, NAME, "%sf%d", g->prefix, k);
  if (k == 0 || pg_chance(g, 60)) return;
  const char *other = g->fns[pg_rnd(g, k)].name;
  for (int j = 0; j < k; j++)
    if (!strcmp(g->fns[j].name, other) && same_signature(&g->fns[j], f)) return;
  memmove(f->name, other, strlen(other) + 1); /* snprintf: a -Wrestrict error at gcc -O0 */
}

static void function(Gen *g, int k) {
  Fn *f = &g->fns[k];
  f->ret = pg_any_type(g, true);
  f->np = 1 + pg_rnd(g, MAX_PARAMS);
  for (int p = 0; p < f->np; p++) f->params[p] = p == 0 ? pg_scalar_type(g) : pg_any_type(g, true);
  f->has_arr = pg_chance(g, 30);
  f->arr_t = pg_any_type(g, false);
  f->has_warr = pg_chance(g, 25);
  f->warr_t = pg_any_type(g, false);
  f->has_larr = pg_chance(g, 25);
  f->larr_t = pg_any_type(g, true);
  f->larr_n = 1 + pg_rnd(g, 6);
  f->larr_ro = pg_chance(g, 30);
  fn_name(g, k);
  reset_scope(g, 0, 4 + pg_rnd(g, 8));
  g->ret = f->ret;
  g->callable = k;
  g->own = "[at]";
  pg_put(g, "\n%s %s(", pg_tname(g, f->ret), f->name);
  if (f->has_arr) {
    pg_put(g, "const %s[] pa, ", pg_tname(g, f->arr_t));
    g->arrs[g->narrs++] = (Arr){"pa", f->arr_t, 1, false};
  }
  if (f->has_warr) {
    pg_put(g, "%s[] pw, int at, ", pg_tname(g, f->warr_t));
    g->arrs[g->narrs++] = (Arr){"pw", f->warr_t, 1, true};
    pg_add_var(g, "at", T_I32, true);
  }
  if (f->has_larr) { /* the caller's local array: writes here are the caller's */
    pg_put(g, "%s%s pl[%d], ", f->larr_ro ? "const " : "", pg_tname(g, f->larr_t), f->larr_n);
    g->larrs[g->nlarrs++] = (LArr){"pl", f->larr_t, 1, {f->larr_n, 1}, f->larr_ro};
  }
  for (int p = 0; p < f->np; p++) {
    char name[NAME];
    snprintf(name, NAME, "p%d", p);
    f->ref[p] = pg_chance(g, 25); /* the caller's variable: writes here change it */
    bool ro = !f->ref[p] && pg_chance(g, 20);
    pg_put(g, "%s%s%s %s%s", p ? ", " : "", ro ? "const " : "", pg_tname(g, f->params[p]),
           f->ref[p] ? "&" : "", name);
    pg_add_var(g, name, f->params[p], ro);
  }
  pg_put(g, ") {\n");
  g->indent = 1;
  if (pg_chance(g, 30)) state_decl(g);
  for (int n = 1 + pg_rnd(g, 4); n > 0; n--) stmt(g);
  pg_indent(g);
  pg_put(g, "return ");
  pg_expr(g, f->ret, pg_depth(g), 0);
  pg_put(g, ";\n}\n");
  g->indent = 0;
}

/* Declares kernel parameter k: an input array, a by-value argument or an output. */
static void kernel_param(Gen *g, int kind, int k) {
  static const char *const dims[] = {"", "[]", "[,]"};
  Ty t = pg_any_type(g, false);
  char name[NAME];
  snprintf(name, NAME, "%s%d", kind == 0 ? "in" : kind == 1 ? "a" : "out", k);
  if (kind == 1) {
    pg_put(g, "%s %s", pg_tname(g, t), name);
    pg_add_var(g, name, t, false);
    return;
  }
  pg_put(g, "%s%s%s %s", kind == 0 ? "const " : "", pg_tname(g, t), dims[g->kdim], name);
  Arr *a = &g->arrs[g->narrs++];
  snprintf(a->name, NAME, "%s", name);
  a->t = t;
  a->ndim = g->kdim;
  a->out = kind == 2;
}

static void kernel(Gen *g, int k) {
  int kdim = pg_chance(g, 25) ? 2 : 1;
  reset_scope(g, kdim, 10 + pg_rnd(g, 16));
  g->callable = g->nfns;
  g->own = g->kdim == 2 ? "[r, c]" : "[i]";
  int kinds[MAX_ARRS], n = 0;
  for (int m = 1 + pg_rnd(g, 3); m > 0; m--) kinds[n++] = 0;
  for (int m = pg_rnd(g, 3); m > 0; m--) kinds[n++] = 1;
  for (int m = 1 + pg_rnd(g, 3); m > 0; m--) kinds[n++] = 2;
  for (int m = n - 1; m > 0; m--) { /* shuffle */
    int o = pg_rnd(g, m + 1), tmp = kinds[m];
    kinds[m] = kinds[o];
    kinds[o] = tmp;
  }
  pg_put(g, "\nkernel void %sk%d(", g->prefix, k);
  for (int m = 0; m < n; m++) {
    if (m) pg_put(g, ", ");
    kernel_param(g, kinds[m], m);
  }
  pg_put(g, ") {\n    int i = tid();\n");
  pg_add_var(g, "i", T_I32, true);
  if (g->kdim == 2) {
    pg_put(g, "    int r = tid(0);\n    int c = tid(1);\n");
    pg_add_var(g, "r", T_I32, true);
    pg_add_var(g, "c", T_I32, true);
  }
  g->indent = 1;
  if (pg_chance(g, 60)) state_decl(g);
  for (int m = 0; m < g->nfns; m++) /* local arrays the functions can be given */
    if (g->fns[m].has_larr && pg_chance(g, 50)) larr_decl(g, &g->fns[m]);
  for (int m = 2 + pg_rnd(g, 6); m > 0; m--) stmt(g);
  for (int m = 0; m < g->narrs; m++) {
    if (!g->arrs[m].out) continue;
    pg_put(g, "    %s", g->arrs[m].name);
    pg_own_index(g);
    pg_put(g, " = ");
    pg_expr(g, g->arrs[m].t, pg_depth(g), 0);
    pg_put(g, ";\n");
  }
  pg_put(g, "}\n");
  g->indent = 0;
}

size_t progen(uint64_t seed, char *buf, size_t cap) { return progen_prefixed(seed, "", buf, cap); }

size_t progen_prefixed(uint64_t seed, const char *prefix, char *buf, size_t cap) {
  Gen *g = calloc(1, sizeof *g);
  if (!g || strlen(prefix) > 8) {
    free(g);
    return 0;
  }
  g->rng = seed;
  g->prefix = prefix;
  snprintf(g->sname, NAME, "%sS", prefix);
  pg_put(g, "// progen seed %llu\n", (unsigned long long)seed);
  consts(g);
  enum_decl(g);
  struct_decl(g);
  g->nfns = pg_rnd(g, 5);
  for (int k = 0; k < g->nfns; k++) function(g, k);
  for (int k = 0, n = 1 + pg_rnd(g, 3); k < n; k++) kernel(g, k);
  size_t len = g->oom ? 0 : g->len, n = len < cap ? len : cap ? cap - 1 : 0;
  if (n) memcpy(buf, g->s, n);
  if (cap) buf[n] = 0;
  free(g->s);
  free(g);
  return len;
}
