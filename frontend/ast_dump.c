/* ast_dump.c: a syntax tree as text, one S-expression line per declaration.
 *
 * Requires: a parsed (optionally checked) Module. Produces: malloc'd text for
 * tests and `kernc emit --target=ast`. Breaks: tests compare this text
 * literally, so a format change means updating test expectations.
 *
 * Format: (import "p") (const NAME T e) (struct S (f T)...) (enum E N), then its
 *   N enumerators as (const NAME int32 e)
 *   (func NAME RET (params (x T) (y const T) (z T&)) block) (kernel NAME (params ...) block)
 *   a generic function: (func NAME<T, U> RET ...)
 * statements: (block s...) (var x [const] T e) (assign OP lhs rhs) (incdec OP lhs)
 *   (expr e) (if c s [s]) (for init|_ cond|_ inc|_ s) (while c s) (do s c)
 *   (static-if c s [s]) (static-for init cond inc s)
 *   (break) (continue) (return [e]) (empty)
 * expressions: (int V [suffix]) (float V [suffix]) (bool true) (string "s")
 *   (ident x) (unary OP e) (addr e) (binary OP a b) (cond c a b) (call f args...)
 *   (call f<T, ...> args...) (type T): a type written as an argument
 *   (cast T e) (index a i...) (member e name) (conv e) (list e...); typed adds `:T`
 *   after each. A local array's type is T[e...] (its extents' expressions).
 * Nesting is bounded by the parser's depth limit, so recursion here is too
 * (else-if chains, which are not nesting, are written in a loop).
 */
#include "ast.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

typedef struct {
  Buf text;
  bool typed;
} Out;

static void put(Out *o, const char *s, size_t n) { buf_add(&o->text, s, n); }

static void puts_(Out *o, const char *s) { buf_puts(&o->text, s); }

static void putf(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(Out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&o->text, fmt, ap);
  va_end(ap);
}

static void put_op(Out *o, int op) { puts_(o, tok_spelling((TokKind)op)); }

static void dump_expr(Out *o, const Node *e);

static void put_vecn_texpr(Out *o, const TypeExpr *t) {
  char shape[64];
  if (t->vecn_kind == 'm')
    snprintf(shape, sizeof shape, ", %d, %d>", t->vecn_rows, t->vecn_cols);
  else if (t->vecn_kind == 'v')
    snprintf(shape, sizeof shape, ", %d>", t->vecn_rows);
  else
    snprintf(shape, sizeof shape, ">");
  puts_(o, t->vecn_kind == 'q' ? "quat<" : t->vecn_kind == 'm' ? "mat<" : "vec<");
  puts_(o, t->vecn_elem);
  puts_(o, shape);
}

static void put_texpr(Out *o, const TypeExpr *t) {
  if (!t) {
    puts_(o, "_");
    return;
  }
  if (t->is_auto)
    puts_(o, "auto");
  else if (t->builtin)
    puts_(o, type_name(t->builtin));
  else if (t->vecn_elem) /* vec<T, N> ... of a generic function, T not yet bound */
    put_vecn_texpr(o, t);
  else
    puts_(o, t->name ? t->name : "<error>");
  if (t->ndim > 0) {
    puts_(o, "[");
    for (int i = 1; i < t->ndim; i++) puts_(o, ",");
    puts_(o, "]");
  }
  if (t->nfixed > 0) { /* a local array: float32[(int 16)] */
    puts_(o, "[");
    for (int i = 0; i < t->nfixed; i++) {
      if (i) puts_(o, " ");
      dump_expr(o, t->fixed[i]);
    }
    puts_(o, "]");
  }
}

/* Whole numbers as such (1000, not 1e+03); others in the shortest text
 * that reads back as the same double. */
static void put_double(Out *o, double v) {
  char buf[40];
  if (v > -1e15 && v < 1e15 && v == (double)(long long)v) {
    putf(o, "%lld", (long long)v);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  puts_(o, buf);
}

static void put_string(Out *o, const char *s, size_t n) {
  puts_(o, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
      case '\n': puts_(o, "\\n"); break;
      case '\t': puts_(o, "\\t"); break;
      case '\r': puts_(o, "\\r"); break;
      case '\\': puts_(o, "\\\\"); break;
      case '"': puts_(o, "\\\""); break;
      default:
        if (c < 0x20 || c == 0x7F)
          putf(o, "\\x%02x", c);
        else
          put(o, (const char *)&c, 1);
    }
  }
  puts_(o, "\"");
}

static void put_suffix(Out *o, LitSuffix s) {
  static const char *const names[] = {"", " u", " l", " ul", " f", " d"};
  if ((unsigned)s < sizeof names / sizeof names[0]) puts_(o, names[s]);
}

static void dump_list(Out *o, const Node *n) {
  for (; n; n = n->next) {
    puts_(o, " ");
    dump_expr(o, n);
  }
}

static void dump_expr_body(Out *o, const Node *e) {
  switch (e->kind) {
    case ND_INT:
      putf(o, "(int %llu", (unsigned long long)e->ival);
      put_suffix(o, e->suffix);
      puts_(o, ")");
      break;
    case ND_FLOAT:
      puts_(o, "(float ");
      put_double(o, e->fval);
      put_suffix(o, e->suffix);
      puts_(o, ")");
      break;
    case ND_BOOL: puts_(o, e->ival ? "(bool true)" : "(bool false)"); break;
    case ND_STRING:
      puts_(o, "(string ");
      put_string(o, e->str ? e->str : "", e->str_len);
      puts_(o, ")");
      break;
    case ND_IDENT:
      if (e->ntargs) {
        puts_(o, "(type ");
        put_texpr(o, e->targs[0]);
        puts_(o, ")");
      } else {
        putf(o, "(ident %s)", e->name ? e->name : "?");
      }
      break;
    case ND_UNARY:
      puts_(o, "(unary ");
      put_op(o, e->op);
      puts_(o, " ");
      dump_expr(o, e->lhs);
      puts_(o, ")");
      break;
    case ND_ADDR:
      puts_(o, "(addr ");
      dump_expr(o, e->lhs);
      puts_(o, ")");
      break;
    case ND_CONV:
      puts_(o, "(conv ");
      dump_expr(o, e->lhs);
      puts_(o, ")");
      break;
    case ND_INIT_LIST:
      puts_(o, "(list");
      dump_list(o, e->args);
      puts_(o, ")");
      break;
    case ND_BINARY:
      puts_(o, "(binary ");
      put_op(o, e->op);
      puts_(o, " ");
      dump_expr(o, e->lhs);
      puts_(o, " ");
      dump_expr(o, e->rhs);
      puts_(o, ")");
      break;
    case ND_COND:
      puts_(o, "(cond ");
      dump_expr(o, e->cond);
      puts_(o, " ");
      dump_expr(o, e->then);
      puts_(o, " ");
      dump_expr(o, e->els);
      puts_(o, ")");
      break;
    case ND_CALL:
      putf(o, "(call %s", e->name ? e->name : "?");
      for (int i = 0; i < e->ntargs; i++) {
        puts_(o, i ? ", " : "<");
        put_texpr(o, e->targs[i]);
      }
      if (e->ntargs) puts_(o, ">");
      dump_list(o, e->args);
      puts_(o, ")");
      break;
    case ND_CAST:
      puts_(o, "(cast ");
      put_texpr(o, e->texpr);
      puts_(o, " ");
      dump_expr(o, e->lhs);
      puts_(o, ")");
      break;
    case ND_INDEX:
      puts_(o, "(index ");
      dump_expr(o, e->lhs);
      dump_list(o, e->args);
      puts_(o, ")");
      break;
    case ND_MEMBER:
      puts_(o, "(member ");
      dump_expr(o, e->lhs);
      putf(o, " %s)", e->name ? e->name : "?");
      break;
    default: putf(o, "(?node %d)", (int)e->kind); break;
  }
}

static void dump_expr(Out *o, const Node *e) {
  if (!e) {
    puts_(o, "_");
    return;
  }
  dump_expr_body(o, e);
  if (o->typed && e->ty) putf(o, ":%s", type_name(e->ty));
}

static void dump_stmt(Out *o, const Node *s);

static void dump_var(Out *o, const Var *v) {
  putf(o, "(var %s ", v->name ? v->name : "?");
  if (v->is_const) puts_(o, "const ");
  put_texpr(o, v->texpr);
  puts_(o, " ");
  dump_expr(o, v->init);
  puts_(o, ")");
}

static void dump_opt_stmt(Out *o, const Node *s) {
  puts_(o, " ");
  if (s)
    dump_stmt(o, s);
  else
    puts_(o, "_");
}

static void dump_stmt(Out *o, const Node *s) {
  switch (s->kind) {
    case ND_BLOCK:
      puts_(o, "(block");
      for (const Node *n = s->body; n; n = n->next) {
        puts_(o, " ");
        dump_stmt(o, n);
      }
      puts_(o, ")");
      break;
    case ND_VARDECL: dump_var(o, s->var); break;
    case ND_ASSIGN:
      puts_(o, "(assign ");
      put_op(o, s->op);
      puts_(o, " ");
      dump_expr(o, s->lhs);
      puts_(o, " ");
      dump_expr(o, s->rhs);
      puts_(o, ")");
      break;
    case ND_INCDEC:
      puts_(o, "(incdec ");
      put_op(o, s->op);
      puts_(o, " ");
      dump_expr(o, s->lhs);
      puts_(o, ")");
      break;
    case ND_EXPR_STMT:
      puts_(o, "(expr ");
      dump_expr(o, s->lhs);
      puts_(o, ")");
      break;
    case ND_IF: { /* an else-if chain in a loop: it can be longer than any nesting */
      int open = 0;
      for (;; s = s->els) {
        puts_(o, open++ ? " (" : "(");
        puts_(o, s->is_static ? "static-if " : "if ");
        dump_expr(o, s->cond);
        dump_opt_stmt(o, s->then);
        if (!s->els || s->els->kind != ND_IF) break;
      }
      if (s->els) dump_opt_stmt(o, s->els);
      while (open--) puts_(o, ")");
      break;
    }
    case ND_FOR:
      puts_(o, s->is_static ? "(static-for" : "(for");
      dump_opt_stmt(o, s->init);
      puts_(o, " ");
      dump_expr(o, s->cond);
      dump_opt_stmt(o, s->inc);
      dump_opt_stmt(o, s->body);
      puts_(o, ")");
      break;
    case ND_WHILE:
      puts_(o, "(while ");
      dump_expr(o, s->cond);
      dump_opt_stmt(o, s->body);
      puts_(o, ")");
      break;
    case ND_DO:
      puts_(o, "(do");
      dump_opt_stmt(o, s->body);
      puts_(o, " ");
      dump_expr(o, s->cond);
      puts_(o, ")");
      break;
    case ND_BREAK: puts_(o, "(break)"); break;
    case ND_CONTINUE: puts_(o, "(continue)"); break;
    case ND_RETURN:
      puts_(o, "(return");
      if (s->lhs) {
        puts_(o, " ");
        dump_expr(o, s->lhs);
      }
      puts_(o, ")");
      break;
    case ND_EMPTY: puts_(o, "(empty)"); break;
    default: dump_expr(o, s); break;
  }
}

static void dump_params(Out *o, const Decl *d) {
  puts_(o, " (params");
  for (int i = 0; i < d->nparams; i++) {
    const Var *v = d->params[i];
    putf(o, " (%s ", v->name ? v->name : "?");
    if (v->is_const) puts_(o, "const ");
    put_texpr(o, v->texpr);
    if (v->is_ref) puts_(o, "&");
    puts_(o, ")");
  }
  puts_(o, ")");
}

static void dump_func(Out *o, const Decl *d) {
  bool kernel = d->kind == DECL_KERNEL;
  putf(o, "(%s %s", kernel ? "kernel" : "func", d->name ? d->name : "?");
  for (int i = 0; i < d->ntparams; i++) putf(o, "%s%s", i ? ", " : "<", d->tparams[i]);
  if (d->ntparams) puts_(o, ">");
  bool is_void = d->texpr && d->texpr->builtin == &ty_void && d->texpr->ndim == 0;
  if (!kernel || !is_void) {
    puts_(o, " ");
    put_texpr(o, d->texpr);
  }
  dump_params(o, d);
  dump_opt_stmt(o, d->body);
  puts_(o, ")");
}

static void dump_decl(Out *o, const Decl *d) {
  switch (d->kind) {
    case DECL_IMPORT:
      puts_(o, "(import ");
      put_string(o, d->path ? d->path : "", d->path ? strlen(d->path) : 0);
      puts_(o, ")");
      break;
    case DECL_CONST:
      putf(o, "(const %s ", d->name ? d->name : "?");
      put_texpr(o, d->texpr);
      puts_(o, " ");
      dump_expr(o, d->init);
      puts_(o, ")");
      break;
    case DECL_STRUCT:
      putf(o, "(struct %s", d->name ? d->name : "?");
      for (int i = 0; i < d->nfields; i++) {
        putf(o, " (%s ", d->fields[i].name ? d->fields[i].name : "?");
        put_texpr(o, d->fields[i].texpr);
        puts_(o, ")");
      }
      puts_(o, ")");
      break;
    case DECL_FUNC:
    case DECL_KERNEL: dump_func(o, d); break;
    case DECL_ENUM: putf(o, "(enum %s %d)", d->name ? d->name : "_", d->nmembers); break;
  }
}

char *ast_dump_module(const Module *m, bool typed) {
  Out o = {.typed = typed};
  puts_(&o, "");
  for (const Decl *d = m ? m->decls : NULL; d; d = d->next) {
    dump_decl(&o, d);
    puts_(&o, "\n");
  }
  if (o.text.oom) {
    free(o.text.s);
    return NULL;
  }
  return o.text.s;
}
