/* emit_decl.c: the emitter core's declarations: the translation unit around
 * the bodies emit.c writes.
 *
 * Requires a checked Program. Produces, in order: the target's prologue, the
 * stdlib text, the module's helpers, structs (with their makers), function
 * heads and bodies, and per kernel its args struct (the layout the runtime
 * fills: emit_args_layout), the strided and dense body functions and the
 * target's entry points. Also answers the questions the runtime asks of a
 * kernel at load (its args layout, whether it decomposes tid(d), how many
 * indices a CUDA thread runs per step).
 */
#include "emit_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rt_stdlib_abi_h[], rt_stdlib_builtins_h[], rt_stdlib_tiles_h[];

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

size_t emit_param_size(const Type *t, size_t *align) {
  int a, size = type_arg_size(t, &a);
  *align = (size_t)a;
  return (size_t)size;
}

size_t emit_args_layout(const Decl *k, size_t *offsets, size_t *align_out) {
  size_t off = 0, maxalign = 1;
  for (int i = 0; i < k->nparams; i++) {
    size_t al, sz = emit_param_size(k->params[i]->ty, &al);
    off = (off + al - 1) / al * al;
    if (offsets) offsets[i] = off;
    off += sz;
    if (al > maxalign) maxalign = al;
  }
  if (align_out) *align_out = maxalign;
  if (off == 0) return 0;
  return (off + maxalign - 1) / maxalign * maxalign;
}

/* ---- declarations ---------------------------------------------------------------- */

static bool is_tid_dim(const Node *n, void *unused) {
  (void)unused;
  return n->kind == ND_CALL && n->call_kind == CALL_SPECIAL && n->special == SP_TID && n->args;
}

/* Out of memory answers yes: the launch then only decomposes indices it need not. */
bool emit_kernel_uses_tid_dims(const Decl *k) { return ast_walk(k->body, is_tid_dim, NULL) != 0; }

static bool loops_or_calls(const Node *n, void *unused) {
  (void)unused;
  return n->kind == ND_FOR || n->kind == ND_WHILE || n->kind == ND_DO ||
         (n->kind == ND_CALL && n->call_kind == CALL_FUNC);
}

/* Out of memory answers yes: one element per thread is always right. A
 * tid()-only kernel takes four consecutive indices (16-byte loads and
 * stores); one on a grid shaped like the launch (tid(d)) two: a 2-D stencil
 * of four neighbours took 0.181 ms at two points a thread against 0.233 at
 * four and 0.253 at one on an H200 (8192^2, three alternating runs each). */
int emit_kernel_elems(const Decl *k) {
  if (ast_walk(k->body, loops_or_calls, NULL)) return 1;
  return emit_kernel_uses_tid_dims(k) ? 2 : 4;
}

/* The array parameter of kernel k whose element an lvalue is (x[i], x[i].f,
 * x[i][c] -> x's number), or -1. */
static int element_param(const Decl *k, const Node *n) {
  while (n->kind == ND_MEMBER || (n->kind == ND_INDEX && n->lhs->ty->kind != TY_ARRAY)) n = n->lhs;
  if (n->kind != ND_INDEX || n->lhs->kind != ND_IDENT) return -1;
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i] == n->lhs->var) return i;
  return -1;
}

/* What one node does to k's arrays (an ast_walk visitor that never stops the
 * walk): a write makes READONLY RESTRICT; passing the array to a function makes
 * it PLAIN (the function reaches it through its own kn_array). */
typedef struct {
  const Decl *k;
  signed char *access;
} AccessWalk;

static bool note_access(const Node *n, void *ud) {
  AccessWalk *w = ud;
  bool write = n->kind == ND_ASSIGN || n->kind == ND_INCDEC || n->kind == ND_ADDR;
  int p = write ? element_param(w->k, n->lhs) : -1;
  if (p >= 0 && w->access[p] == EMIT_ACCESS_READONLY) w->access[p] = EMIT_ACCESS_RESTRICT;
  bool passes = n->kind == ND_CALL && (n->call_kind == CALL_FUNC || n->special == SP_LOWER_BOUND ||
                                       n->special == SP_RAND_FN);
  for (const Node *a = passes ? n->args : NULL; a; a = a->next)
    for (int i = 0; i < w->k->nparams; i++)
      if (a->kind == ND_IDENT && a->var == w->k->params[i]) w->access[i] = EMIT_ACCESS_PLAIN;
  return false;
}

/* e->access for kernel k (see EmitAccess); none in debug builds, whose checked
 * accesses go through the kn_array. */
static void kernel_access(Emitter *e, const Decl *k) {
  free(e->access);
  e->access = NULL;
  /* a tiled kernel's arrays are read by tile loops too: plain */
  if (e->opts->debug || k->tiled || k->nparams == 0 || !(e->access = calloc((size_t)k->nparams, 1)))
    return;
  for (int i = 0; i < k->nparams; i++)
    e->access[i] = k->params[i]->ty->kind == TY_ARRAY ? EMIT_ACCESS_READONLY : EMIT_ACCESS_PLAIN;
  /* out of memory mid-walk: no restrict pointers at all */
  if (ast_walk(k->body, note_access, &(AccessWalk){k, e->access}))
    memset(e->access, EMIT_ACCESS_PLAIN, (size_t)k->nparams);
}

void emit_restrict_args(Emitter *e, const Decl *k, bool aligned) {
  for (int i = 0; e->access && i < k->nparams; i++)
    if (e->access[i] != EMIT_ACCESS_PLAIN)
      OUT(e, aligned ? ", (char *)__builtin_assume_aligned(a.p%d.data, 16)" : ", a.p%d.data", i);
}

static void struct_decl(Emitter *e, const Decl *d) {
  OUT(e, "typedef struct ks_%s {\n", d->name);
  for (int i = 0; i < d->nfields; i++)
    OUT(e, "  %s f_%s;\n", emit_storage_ctype(e, d->fields[i].ty), d->fields[i].name);
  if (d->nfields == 0) OUT(e, "  char kn_empty;\n");
  OUT(e, "} ks_%s;\n", d->name);
  OUT(e, "KN_SASSERT(sizeof(ks_%s) == %d, \"layout of a struct\");\n", d->name, d->sty->size);
  OUT(e, "KN_FN ks_%s kz_%s(void) { ks_%s r = KN_ZERO; return r; }\n", d->name, d->name, d->name);
  if (d->nfields == 0) return;
  OUT(e, "KN_FN ks_%s km_%s(", d->name, d->name);
  for (int i = 0; i < d->nfields; i++)
    OUT(e, "%s%s a%d", i ? ", " : "", emit_ctype(e, d->fields[i].ty), i);
  OUT(e, ") {\n  ks_%s r = KN_ZERO;\n", d->name);
  for (int i = 0; i < d->nfields; i++) OUT(e, "  r.f_%s = a%d;\n", d->fields[i].name, i);
  OUT(e, "  return r;\n}\n");
}

static void params_list(Emitter *e, const Decl *f) {
  OUT(e, "const kn_ctx *kn_c, int64_t kn_lin");
  if (f->tiled) {
    emit_tile_params(e, f);
    return;
  }
  for (int i = 0; i < f->nparams; i++) {
    const Var *p = f->params[i];
    if (p->is_ref)
      OUT(e, ", %s *", emit_ref_ctype(e, p->ty));
    else if (p->ty->kind == TY_FIXED) /* the caller's local array */
      OUT(e, ", %s *", emit_ctype(e, p->ty->elem));
    else
      OUT(e, ", %s ", emit_ctype(e, p->ty));
    emit_var_name(e, p);
  }
}

static void func_head(Emitter *e, const Decl *f) {
  const char *ret = f->ret->kind == TY_TILE ? "void" : emit_ctype(e, f->ret);
  OUT(e, "KN_FUNC %s kf_%s_%d(", ret, f->name, f->overload);
  params_list(e, f);
  OUT(e, ")");
}

static void scratch_decl(Emitter *e) {
  if (e->opts->debug) {
    emit_indent(e);
    OUT(e, "KNE_SCRATCH_LOCAL\n");
  }
}

static void func_body(Emitter *e, const Decl *f) {
  e->fn = f;
  func_head(e, f);
  OUT(e, " {\n");
  e->depth = 1;
  scratch_decl(e);
  emit_indent(e);
  OUT(e, "(void)kn_c; (void)kn_lin;\n");
  if (f->tiled) emit_tile_entry(e, f);
  emit_block_body(e, f->body->body);
  if (f->tiled) emit_tile_exit(e, f);
  e->depth = 0;
  OUT(e, "}\n\n");
}

static void args_struct(Emitter *e, const Decl *k) {
  size_t align, size = emit_args_layout(k, NULL, &align);
  OUT(e, "typedef struct kk_%s_args {\n", k->name);
  for (int i = 0; i < k->nparams; i++)
    OUT(e, "  %s p%d;\n", emit_storage_ctype(e, k->params[i]->ty), i);
  if (k->nparams == 0) OUT(e, "  char kn_empty;\n");
  OUT(e, "} kk_%s_args;\n", k->name);
  if (k->nparams)
    OUT(e, "KN_SASSERT(sizeof(kk_%s_args) == %zu, \"args layout\");\n", k->name, size);
}

/* The kernel body as a function of the index; `dense` picks array indexing. */
static void kernel_body(Emitter *e, const Decl *k, bool dense) {
  e->fn = k;
  OUT(e, "#undef KN_DENSE\n#define KN_DENSE %d\n", dense);
  OUT(e,
      "KN_FN void kk_%s_body%s(const kk_%s_args *kn_a, const kn_ctx *kn_c, int32_t kn_lin, "
      "int32_t kn_t0, int32_t kn_t1, int32_t kn_t2, int32_t kn_t3",
      k->name, dense ? "_dense" : "", k->name);
  for (int i = 0; dense && e->access && i < k->nparams; i++)
    if (e->access[i] != EMIT_ACCESS_PLAIN)
      OUT(e, ", %schar *KN_RESTRICT kn_r%d", e->access[i] == EMIT_ACCESS_READONLY ? "const " : "",
          i);
  OUT(e, ") {\n");
  e->dense = dense;
  e->depth = 1;
  scratch_decl(e);
  OUT(e, "  (void)kn_t0; (void)kn_t1; (void)kn_t2; (void)kn_t3; (void)kn_c; (void)kn_lin;\n");
  for (int i = 0; i < k->nparams; i++) {
    OUT(e, "  %s ", emit_ctype(e, k->params[i]->ty));
    emit_var_name(e, k->params[i]);
    OUT(e, " = kn_a->p%d;\n", i);
  }
  if (k->tiled) emit_tile_entry(e, k);
  emit_block_body(e, k->body->body);
  if (k->tiled) emit_tile_exit(e, k);
  e->depth = 0;
  e->dense = false;
  OUT(e, "}\n");
}

/* ---- prologue -------------------------------------------------------------------- */

/* The largest element a debug access may stand in for (array parameters and
 * local arrays: Program.array_params), at least 16 bytes. */
static int max_elem_size(const Program *p) {
  int m = 16;
  for (int i = 0; i < p->narray_params; i++) {
    const Type *t = p->array_params[i].param->ty;
    if (t->elem->size > m) m = t->elem->size;
  }
  return m;
}

/* Element pointers. KN_D (dense, in a dense body) and KN_S (strided) name
 * each index once, so indexes nested in indexes stay linear in the generated
 * text (a ternary on KN_DENSE doubled each level, and a deep nest made the C
 * compiler run out of memory); the emitter picks by what it is emitting.
 * KN_P picks by KN_DENSE, for kern_tiles.h, whose arguments are plain names. */
static const char *const index_macros =
    "#define KN_D1(T, a, i) ((T *)(a).data + (i))\n"
    "#define KN_D2(T, a, i, j) ((T *)(a).data + ((i) * (a).shape[1] + (j)))\n"
    "#define KN_D3(T, a, i, j, k) ((T *)(a).data + (((i) * (a).shape[1] + (j)) * (a).shape[2] + (k)))\n"
    "#define KN_D4(T, a, i, j, k, l) \\\n"
    "  ((T *)(a).data + ((((i) * (a).shape[1] + (j)) * (a).shape[2] + (k)) * (a).shape[3] + (l)))\n"
    "#define KN_S1(T, a, i) ((T *)((a).data + (i) * (a).strides[0]))\n"
    "#define KN_S2(T, a, i, j) ((T *)((a).data + (i) * (a).strides[0] + (j) * (a).strides[1]))\n"
    "#define KN_S3(T, a, i, j, k) \\\n"
    "  ((T *)((a).data + (i) * (a).strides[0] + (j) * (a).strides[1] + (k) * (a).strides[2]))\n"
    "#define KN_S4(T, a, i, j, k, l) \\\n"
    "  ((T *)((a).data + (i) * (a).strides[0] + (j) * (a).strides[1] + (k) * (a).strides[2] + \\\n"
    "         (l) * (a).strides[3]))\n"
    "#define KN_P1(T, a, i) (KN_DENSE ? KN_D1(T, a, i) : KN_S1(T, a, i))\n"
    "#define KN_P2(T, a, i, j) (KN_DENSE ? KN_D2(T, a, i, j) : KN_S2(T, a, i, j))\n"
    "#define KN_DENSE 0\n"
    "/* the dense body's restrict arrays: p is the data pointer, a the kn_array */\n"
    "#define KN_R1(T, p, a, i) ((T *)(p) + (i))\n"
    "#define KN_R2(T, p, a, i, j) ((T *)(p) + ((i) * (a).shape[1] + (j)))\n"
    "#define KN_R3(T, p, a, i, j, k) ((T *)(p) + (((i) * (a).shape[1] + (j)) * (a).shape[2] + (k)))\n"
    "#define KN_R4(T, p, a, i, j, k, l) \\\n"
    "  ((T *)(p) + ((((i) * (a).shape[1] + (j)) * (a).shape[2] + (k)) * (a).shape[3] + (l)))\n";

static const char *const helpers =
    "/* A component index out of range is clamped, as kn_get_* does for rvalues. */\n"
    "KN_FN int64_t kne_vidx(int64_t k, int64_t n) { return k < 0 ? 0 : k >= n ? n - 1 : k; }\n"
    "/* ... a local array's uint64 index the same way (k >= 2^63 is past the end, not below 0) */\n"
    "KN_FN int64_t kne_uidx(uint64_t k, int64_t n) { return k >= (uint64_t)n ? n - 1 : (int64_t)k; }\n"
    "KN_FN int64_t kne_size(const kn_array *a) {\n"
    "  return a->shape[0] * a->shape[1] * a->shape[2] * a->shape[3];\n"
    "}\n"
    "/* Linear launch index -> per-dimension indices (row-major, dims unused = 1). */\n"
    "KN_FN void kne_unlinear(const kn_ctx *c, int64_t lin, int32_t t[4]) {\n"
    "  /* 32-bit division (n < 2^31): on a GPU a 64-bit divide is a long\n"
    "   * software routine, paid per index */\n"
    "  uint32_t l = (uint32_t)lin;\n"
    "  for (int d = 3; d >= 0; d--) {\n"
    "    if (d >= c->ndim) { t[d] = 0; continue; }\n"
    "    t[d] = (int32_t)(l % (uint32_t)c->dim[d]);\n"
    "    l /= (uint32_t)c->dim[d];\n"
    "  }\n"
    "}\n";

static const char *const debug_helpers =
    "/* Debug indexing: a bad index records the error and yields a scratch slot.\n"
    " * nds is the rank, with bit 8 + k set when index k is unsigned (it goes into\n"
    " * the error record whole; unused dims have index 0 and extent 1). */\n"
    "KN_FN char *kne_chk(const kn_array *a, const kn_ctx *c, int32_t file, int32_t line, int32_t param,\n"
    "                    int32_t nds, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t tid,\n"
    "                    int64_t esize, int dense, kne_scratch *scratch) {\n"
    "  int64_t idx[4] = {i0, i1, i2, i3};\n"
    "  int64_t shape[4] = {a->shape[0], a->shape[1], a->shape[2], a->shape[3]};\n"
    "  int32_t nd = nds & 0xff;\n"
    "  if (!kn_bounds_ok(c, file, line, param, nds, idx, shape, tid)) return scratch->b;\n"
    "  int64_t off = 0;\n"
    "  for (int d = 0; d < nd; d++) off += idx[d] * (dense ? 0 : a->strides[d]);\n"
    "  if (dense) {\n"
    "    int64_t lin = 0;\n"
    "    for (int d = 0; d < nd; d++) lin = lin * shape[d] + idx[d];\n"
    "    off = lin * esize;\n"
    "  }\n"
    "  return a->data + off;\n"
    "}\n"
    "/* ... and a local array's element: base is its first, s0..s3 its extents. */\n"
    "KN_FN char *kne_lchk(char *base, const kn_ctx *c, int32_t file, int32_t line, int32_t id,\n"
    "                     int32_t nds, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t s0,\n"
    "                     int64_t s1, int64_t s2, int64_t s3, int64_t tid, int64_t esize,\n"
    "                     kne_scratch *scratch) {\n"
    "  int64_t idx[4] = {i0, i1, i2, i3};\n"
    "  int64_t shape[4] = {s0, s1, s2, s3};\n"
    "  if (!kn_bounds_ok(c, file, line, id, nds, idx, shape, tid)) return scratch->b;\n"
    "  int64_t lin = 0;\n"
    "  for (int d = 0; d < (nds & 0xff); d++) lin = lin * shape[d] + idx[d];\n"
    "  return base + lin * esize;\n"
    "}\n";

static void prologue(Emitter *e) {
  OUT(e, "/* generated by kern from %s: do not edit */\n",
      e->prog->root ? e->prog->root->path : "?");
  if (e->opts->fast_math)
    OUT(e, "/* fast math: results may differ between devices and from IEEE rounding */\n"
           "#define KN_FAST_MATH 1\n");
  if (e->opts->verify_fp)
    OUT(e, "/* verify_fp: a NaN or infinity stored to an array element fails the launch */\n"
           "#define KN_VERIFY_FP 1\n");
  e->target->prologue(e);
  buf_puts(&e->out, rt_stdlib_abi_h);
  buf_puts(&e->out, rt_stdlib_builtins_h);
  buf_puts(&e->out, rt_stdlib_tiles_h);
  OUT(e, "\n/* ---- module ---- */\n");
  buf_puts(&e->out, index_macros);
  buf_puts(&e->out, helpers);
  if (e->target->helpers) buf_puts(&e->out, e->target->helpers);
  if (e->opts->debug) {
    OUT(e, "typedef union kne_scratch { char b[%d]; int64_t i; double d; } kne_scratch;\n",
        max_elem_size(e->prog));
    OUT(e, "KNE_SCRATCH_GLOBAL\n");
    buf_puts(&e->out, debug_helpers);
  }
  if (e->opts->verify_fp) buf_puts(&e->out, emit_fp_helpers);
}

char *emit_program(const Program *p, EmitTarget target, const EmitOptions *opts) {
  EmitOptions defaults = {.line_directives = true};
  Emitter e = {.prog = p,
               .opts = opts ? opts : &defaults,
               .target = target == EMIT_CUDA ? &emit_target_cuda : &emit_target_c,
               .fn_effects = calloc((size_t)p->nfuncs + 1, 1),
               .snames = calloc((size_t)p->nstructs + 1, sizeof(char *))};
  for (int i = 0; e.snames && i < p->nstructs; i++) {
    e.snames[i] = malloc(strlen(p->structs[i]->name) + 4);
    if (e.snames[i])
      sprintf(e.snames[i], "ks_%s", p->structs[i]->name);
    else
      e.out.oom = true;
  }
  if (!e.snames) e.out.oom = true;
  emit_find_effects(&e);
  prologue(&e);
  emit_vecn_defs(&e);
  for (int i = 0; i < p->nstructs; i++) struct_decl(&e, p->structs[i]);
  for (int i = 0; i < p->nfuncs; i++) {
    func_head(&e, p->funcs[i]);
    OUT(&e, ";\n");
  }
  OUT(&e, "\n");
  for (int i = 0; i < p->nfuncs; i++) func_body(&e, p->funcs[i]);
  for (int i = 0; i < p->nkernels; i++) {
    const Decl *k = p->kernels[i];
    args_struct(&e, k);
    kernel_access(&e, k);
    kernel_body(&e, k, false);
    kernel_body(&e, k, true);
    OUT(&e, "#line %d \"<generated>\"\n", 1);
    e.target->entries(&e, k);
    OUT(&e, "\n");
  }
  free(e.fn_effects);
  for (int i = 0; e.snames && i < p->nstructs; i++) free(e.snames[i]);
  free(e.snames);
  free(e.bound);
  free(e.access);
  if (e.out.oom) {
    free(e.out.s);
    return NULL;
  }
  return e.out.s;
}
