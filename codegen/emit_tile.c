/* emit_tile.c: tiles: the statements of tiled functions, for both targets.
 *
 * Requires a checked Program (check_tile_rules.c marked Decl.tiled and says
 * which tile values materialize). Produces one text for the CPU and CUDA; the
 * macros of stdlib/kern_tiles.h (KN_TILE_ARRAY, KN_TILE_SCALAR, KN_TILE_FOR,
 * KN_TILE_SYNC, KN_TILE_LEADER) are where the two differ.
 *
 * A statement of a tiled function is written in three steps. First its tile
 * operations that need storage of their own are written before it, each into
 * a temporary (kn_tt<N>, a tile; kn_ts<N>, a scalar) bound to its node, so the
 * statement then reads the temporary; the scalars a tile loop reads are
 * computed once into temporaries too. Then a tile value is written element by
 * element (e->tile_i names the element) into its destination, in one loop for
 * a whole tree of operators, makers, tile_where, tile_map and math. Last, a
 * scalar statement with a side effect is done by one thread (KN_TILE_LEADER)
 * between barriers, and a value it makes is handed to the others through a
 * shared slot. Every loop that writes a tile is fenced by barriers on both
 * sides, so no thread reads a tile another is writing.
 *
 * Reductions combine in the tree the language documents: over [0, 2^K), at
 * each step s = 1, 2, 4 ... x[i] = op(x[i], x[i + s]) for i a multiple of 2s
 * with i + s < n, so a node whose right half is absent is its left half.
 * Scans build the levels of that tree (level j, node m: the elements
 * [m 2^j, (m + 1) 2^j)) and give element i the left-to-right fold of the
 * nodes that the binary digits of i name, largest first: what an up-sweep and
 * down-sweep computes. Each value is computed by one expression whichever
 * thread runs it, so the result does not depend on the block size.
 */
#include "emit_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"

#define OUT(e, ...) buf_printf(&(e)->out, __VA_ARGS__)

static void line(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(Emitter *e, const char *fmt, ...) {
  emit_indent(e);
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof small)
    buf_puts(&e->out, small);
  else {
    char *big = malloc((size_t)n + 1);
    if (!big) {
      e->out.oom = true;
      return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_puts(&e->out, big);
    free(big);
  }
  buf_puts(&e->out, "\n");
}

static bool is_tile(const Type *t) { return t && t->kind == TY_TILE; }
static long long count(const Type *t) { return (long long)type_tile_count(t); }
static const char *ct(Emitter *e, const Type *t) { return emit_ctype(e, t); }

/* The storage a tile node names: its bound temporary, or its variable. */
static void sname(Emitter *e, const Node *x) {
  const char *b = emit_bound(e, x);
  if (b)
    OUT(e, "%s", b);
  else if (x->kind == ND_IDENT && x->var)
    emit_var_name(e, x->var);
  else
    OUT(e, "0");
}

/* sname's text into out. */
static void sname_text(Emitter *e, const Node *x, char *out, size_t cap) {
  Buf saved = emit_aside(e);
  sname(e, x);
  char *text = emit_aside_end(e, saved);
  snprintf(out, cap, "%s", text ? text : "0");
  free(text);
}

/* x element by element at index idx. */
static void elem(Emitter *e, const Node *x, const char *idx) {
  const char *saved = e->tile_i;
  e->tile_i = idx;
  emit_expr(e, x);
  e->tile_i = saved;
}

static void sync(Emitter *e) { line(e, "KN_TILE_SYNC();"); }

/* ---- the tile storage ------------------------------------------------------------------ *
 * A function's tiles live in one block (on a GPU, the block's dynamic shared
 * memory from kn_sb on; on the CPU, local arrays): first its tile variables
 * and parameter copies, each for the whole function, then a stack of
 * temporaries, a statement's taken back when it ends. Every tile loop is
 * fenced by barriers, so a statement's writes never race the last reads of
 * the one before; a tiled function it calls gets its block past the
 * caller's part in use. check_tile_rules.c counts the same, as upper bounds. */

/* The offset of n elements of size `size` in the variables' part or the stack. */
static int64_t tile_alloc(Emitter *e, bool var, long long n, int size) {
  int64_t *sp = var ? &e->tile_var_sp : &e->tile_sp, at = *sp;
  *sp += tile_slot((int64_t)n * size);
  if (*sp > (var ? e->fn->tile_vars : e->fn->tile_storage)) e->tile_over = true;
  return at;
}

/* The start of an array declaration of n elements, of which a GPU uses the
 * first gpu_n (the CPU's arrays are locals of n); the caller writes its name
 * and ");\n". */
static void open_array(Emitter *e, bool var, const Type *elem, long long n, long long gpu_n) {
  emit_indent(e);
  OUT(e, "KN_TILE_ARRAY(%s, %lld, %lld, ", ct(e, elem), n,
      (long long)tile_alloc(e, var, gpu_n, elem->size));
}

/* A temporary array "kn_<kind><id>" of n elements of elem (gpu_n on a GPU). */
static void temp_array(Emitter *e, const Type *elem, long long n, long long gpu_n, const char *kind,
                       int id) {
  open_array(e, false, elem, n, gpu_n);
  OUT(e, "kn_%s%d);\n", kind, id);
}

/* A new temporary: "kn_<kind><N>" in buf, declared as a tile of t (tile) or
 * a scalar; cpu: a tile only the CPU's code uses. */
static void new_temp(Emitter *e, char *buf, size_t cap, const char *kind, const Type *t, bool cpu) {
  snprintf(buf, cap, "kn_%s%d", kind, ++e->ntile);
  if (is_tile(t))
    temp_array(e, t->elem, count(t), cpu ? 0 : count(t), kind, e->ntile);
  else
    line(e, "%s %s;", ct(e, t), buf);
}

/* dst[i] = x[i] (op: TK_ASSIGN, or the operator of a compound assignment). */
static void assign_loop(Emitter *e, const Type *t, int op, const Node *x,
                        void (*dst)(Emitter *, const void *), const void *d) {
  sync(e);
  emit_indent(e);
  OUT(e, "KN_TILE_FOR(kn_i, %lld) ", count(t));
  dst(e, d);
  OUT(e, "[kn_i] = ");
  if (op == TK_ASSIGN)
    elem(e, x, "kn_i");
  else {
    Buf saved = emit_aside(e);
    elem(e, x, "kn_i");
    char *rhs = emit_aside_end(e, saved);
    saved = emit_aside(e);
    dst(e, d);
    OUT(e, "[kn_i]");
    char *lhs = emit_aside_end(e, saved);
    if (rhs && lhs) emit_binop_text(e, op, t->elem, lhs, rhs);
    free(rhs);
    free(lhs);
  }
  OUT(e, ";\n");
  sync(e);
}

static void dst_node(Emitter *e, const void *n) { sname(e, n); }
static void dst_var(Emitter *e, const void *v) { emit_var_name(e, v); }
static void dst_text(Emitter *e, const void *s) { OUT(e, "%s", (const char *)s); }

static void prepare(Emitter *e, const Node *n, bool in_tile);

/* x as storage: a temporary holding it element by element when it is not one. */
static void ensure_storage(Emitter *e, const Node *x) {
  if (!is_tile(x->ty) || emit_bound(e, x) || (x->kind == ND_IDENT && x->var)) return;
  char name[32];
  new_temp(e, name, sizeof name, "tt", x->ty, false);
  assign_loop(e, x->ty, TK_ASSIGN, x, dst_text, name);
  emit_bind(e, x, name);
}

/* ---- combining two values ------------------------------------------------------------- */

static void compare(Emitter *e, const Type *t, bool less, const char *l, const char *r);

/* op(l, r) of a reduction or scan node n on elements of type t. */
static void combine(Emitter *e, const Node *n, const Type *t, const char *l, const char *r) {
  if (n->tfn)
    OUT(e, "kf_%s_%d(kn_c, kn_lin, %s, %s)", n->tfn->name, n->tfn->overload, l, r);
  else if (n->tbuiltin >= 0)
    OUT(e, "%s(%s, %s)", builtin_get(n->tbuiltin)->cname, l, r);
  else if (n->tile_op == TOP_MIN || n->tile_op == TOP_MAX) {
    /* element types the min/max builtins do not take (8- and 16-bit
     * integers, float16, bfloat16): the right one when strictly less (greater) */
    OUT(e, "(");
    compare(e, t, n->tile_op == TOP_MIN, r, l);
    OUT(e, " ? (%s) : (%s))", r, l);
  } else
    emit_binop_text(e, TK_PLUS, t, l, r);
}

/* l < r (less) or l > r on scalars of type t. */
static void compare(Emitter *e, const Type *t, bool less, const char *l, const char *r) {
  const char *op = less ? "<" : ">";
  if (type_is_half(t)) {
    const char *c = builtin_type_code(t);
    OUT(e, "(kn_cvt_%s_f32(%s) %s kn_cvt_%s_f32(%s))", c, l, op, c, r);
  } else
    OUT(e, "((%s) %s (%s))", l, op, r);
}

/* ---- reductions ----------------------------------------------------------------------- */

/* Rows C of length L: element (o, k) of src is src[o * os + k * ks]. */
typedef struct Lanes {
  long long c, l, os, ks;
} Lanes;

static Lanes lanes_of(const Type *t, int axis) {
  long long m = t->dims[0], n = t->ndim == 2 ? t->dims[1] : 1;
  if (axis < 0) return (Lanes){1, m * n, 0, 1};
  if (axis == 0) return (Lanes){n, m, 1, n};
  return (Lanes){m, n, n, 1};
}

/* A whole-tile reduction of L elements on the CPU, level by level out of
 * place: level one combines the tile's pairs (2j, 2j + 1) into the first half
 * of the scratch, each next level the previous one's pairs into the other
 * half, an odd last element carried unchanged. The same tree as the in-place
 * form, with unit-stride writes the compiler vectorises. */
static void reduce_levels(Emitter *e, const Node *n, const char *from0, const Type *t,
                          long long len, int id, const char *dst) {
  long long half = (len + 1) / 2;
  char from[AST_MAX_IDENT + 64], l[AST_MAX_IDENT + 96], r[AST_MAX_IDENT + 96];
  snprintf(from, sizeof from, "%s", from0);
  long long m = len, at = -1;
  for (int lv = 0; m > 1; lv++) {
    long long pairs = m / 2, out = lv % 2 ? half : 0;
    snprintf(l, sizeof l, "%s[2 * kn_j]", from);
    snprintf(r, sizeof r, "%s[2 * kn_j + 1]", from);
    emit_indent(e);
    OUT(e, "KN_TILE_FOR(kn_j, %lld) kn_r%d[%lld + kn_j] = ", pairs, id, out);
    combine(e, n, t, l, r);
    OUT(e, ";\n");
    if (m % 2)
      line(e, "KN_TILE_FOR(kn_j, 1) kn_r%d[%lld] = %s[%lld];", id, out + pairs, from, m - 1);
    line(e, "KN_TILE_SYNC();");
    snprintf(from, sizeof from, "(kn_r%d + %lld)", id, out);
    m = pairs + m % 2, at = out;
  }
  if (at < 0)
    line(e, "%s = %s[0];", dst, from);
  else
    line(e, "%s = kn_r%d[%lld];", dst, id, at);
}

/* if (right present) acc = op(acc, right), the step every GPU level takes. */
static void combine_into(Emitter *e, const Node *n, const Type *t, const char *cond,
                         const char *acc, const char *right) {
  emit_indent(e);
  OUT(e, "if (%s) %s = ", cond, acc);
  combine(e, n, t, acc, right);
  OUT(e, ";\n");
}

/* One warp step of reduce_warps over nodes kn_g < kn_n held in kn_x: five
 * levels by shuffles (lane g takes lane g + s's node when g is a multiple of
 * 2s and that node is present), the node they make to kn_out. */
static void warp_levels(Emitter *e, const Node *n, const Type *t) {
  const char *T = ct(e, t);
  line(e, "_Pragma(\"unroll\") for (int32_t kn_s = 1; kn_s < 32; kn_s *= 2) {");
  e->depth++;
  line(e, "const %s kn_y = kn_shfl_down(kn_x, kn_s);", T);
  combine_into(e, n, t, "(kn_g & (2 * kn_s - 1)) == 0 && kn_g + kn_s < kn_n", "kn_x", "kn_y");
  e->depth--;
  line(e, "}");
  line(e, "if ((kn_g & 31) == 0 && kn_g < kn_n) kn_out[kn_g / 32] = kn_x;");
}

/* How many leaves a lane reads before it combines any: all of a chunk's at
 * the default 256 threads per instance, up to eight, so a block has that
 * many 16-byte reads in flight before its first shuffle. */
static int leaf_batch(long long n4) {
  int u = 1;
  while (u < 8 && (long long)u * 256 < n4) u *= 2;
  return u;
}

/* The same tree on a GPU block, one barrier per seven levels, then per five:
 * first each lane folds leaves of four neighbouring elements in registers
 * (read at once when whole: kn_tile_leaf4; a batch of leaf_batch leaves,
 * blockDim apart, read before the first is folded) and each warp combines 32
 * leaves with shuffles (a node starting at or past the end is absent),
 * writing the node of 128 elements they make to the scratch; then each round
 * does the same with 32 nodes of the level below, until one is left. Every
 * node is the pair the tree names, so the result does not depend on the
 * block size. The rounds alternate between two parts of the scratch (L / 128
 * and L / 4096 nodes, rounded up: at most L for L >= 2). */
static void reduce_warps(Emitter *e, const Node *n, const char *leaf, const Type *t, long long len,
                         int id, const char *dst) {
  const char *T = ct(e, t);
  long long n4 = (len + 3) / 4, half = (n4 + 31) / 32;
  int u = leaf_batch(n4);
  line(e, "%s *kn_out = kn_r%d;", T, id);
  line(e,
       "for (int32_t kn_b = (int32_t)(threadIdx.x & ~31u); kn_b < %lld; kn_b += "
       "%d * (int32_t)blockDim.x) {",
       n4, u);
  e->depth++;
  line(e, "%s kn_w[%d][4];", T, u);
  /* kn_b + kn_u * blockDim is the same in a warp: whole warps read and fold */
  line(e, "_Pragma(\"unroll\") for (int32_t kn_u = 0; kn_u < %d; kn_u++) {", u);
  e->depth++;
  line(e, "const int32_t kn_g = kn_b + kn_u * (int32_t)blockDim.x + (int32_t)(threadIdx.x & 31u);");
  line(e, "%s *const kn_v = kn_w[kn_u];", T);
  line(e, "if (kn_b + kn_u * (int32_t)blockDim.x < %lld) { %s }", n4, leaf);
  e->depth--;
  line(e, "}");
  line(e, "_Pragma(\"unroll\") for (int32_t kn_u = 0; kn_u < %d; kn_u++) {", u);
  e->depth++;
  line(e, "const int32_t kn_g = kn_b + kn_u * (int32_t)blockDim.x + (int32_t)(threadIdx.x & 31u);");
  line(e, "const int32_t kn_n = %lld;", n4);
  line(e, "if (kn_b + kn_u * (int32_t)blockDim.x >= kn_n) break;");
  line(e, "%s *const kn_v = kn_w[kn_u];", T);
  char cond[64];
  snprintf(cond, sizeof cond, "4 * kn_g + 1 < %lld", len);
  combine_into(e, n, t, cond, "kn_v[0]", "kn_v[1]");
  snprintf(cond, sizeof cond, "4 * kn_g + 3 < %lld", len);
  combine_into(e, n, t, cond, "kn_v[2]", "kn_v[3]");
  snprintf(cond, sizeof cond, "4 * kn_g + 2 < %lld", len);
  combine_into(e, n, t, cond, "kn_v[0]", "kn_v[2]");
  line(e, "%s kn_x = kn_v[0];", T);
  warp_levels(e, n, t);
  e->depth--;
  line(e, "}");
  e->depth--;
  line(e, "}");
  line(e, "KN_TILE_SYNC();");
  line(e, "const %s *kn_in = kn_r%d;", T, id);
  line(e, "kn_out = kn_r%d + %lld;", id, half);
  line(e, "for (int32_t kn_n = %lld, kn_k = 0; kn_n > 1; kn_n = (kn_n + 31) / 32, kn_k++) {", half);
  e->depth++;
  line(e, "for (int32_t kn_b = (int32_t)(threadIdx.x & ~31u); kn_b < kn_n; kn_b += "
          "(int32_t)blockDim.x) {");
  e->depth++;
  line(e, "const int32_t kn_g = kn_b + (int32_t)(threadIdx.x & 31u);");
  line(e, "%s kn_x = kn_in[kn_g < kn_n ? kn_g : 0];", T);
  warp_levels(e, n, t);
  e->depth--;
  line(e, "}");
  line(e, "KN_TILE_SYNC();");
  line(e, "kn_in = kn_out;");
  line(e, "kn_out = kn_r%d + (kn_k %% 2 ? %lld : 0);", id, half);
  e->depth--;
  line(e, "}");
  line(e, "%s = kn_in[0];", dst);
}

/* The GPU's first round of n's tree reading the leaves from load's array. */
static void reduce_from_memory(Emitter *e, const Node *n, const Node *load, const Type *t,
                               long long len, int id, const char *dst) {
  const Node *arr = load->args, *fill = arr->next->next;
  emit_indent(e);
  OUT(e, "const kn_array kn_la = ");
  emit_expr(e, arr);
  OUT(e, ";\n");
  emit_indent(e);
  OUT(e, "const int64_t kn_lo = ");
  emit_expr(e, arr->next);
  OUT(e, ";\n");
  emit_indent(e);
  OUT(e, "const %s kn_lf = ", ct(e, t));
  if (fill)
    emit_expr(e, fill);
  else
    emit_number(e, t, 0);
  OUT(e, ";\n");
  char leaf[128];
  snprintf(leaf, sizeof leaf,
           "kn_tile_leaf4_load(kn_v, kn_la, kn_lo, kn_g, %lld, kn_lf, KN_DENSE);", len);
  reduce_warps(e, n, leaf, t, len, id, dst);
}

/* A whole-tile reduction of L elements into dst (a scalar), in the tree the
 * language documents, written for both targets. */
static void reduce_whole(Emitter *e, const Node *n, const Node *src, const Type *t, long long len,
                         const char *dst) {
  const Node *load = tile_fused_load(n);
  char from[AST_MAX_IDENT + 64], leaf[AST_MAX_IDENT + 96];
  sname_text(e, src, from, sizeof from);
  if (len == 1) {
    line(e, "%s = %s[0];", dst, from);
    return;
  }
  int id = ++e->ntile;
  line(e, "{");
  e->depth++;
  temp_array(e, t, len, tile_reduce_scratch(len), "r", id);
  OUT(e, "#ifdef __CUDACC_RTC__\n");
  if (load) {
    reduce_from_memory(e, n, load, t, len, id, dst);
  } else {
    snprintf(leaf, sizeof leaf, "kn_tile_leaf4(kn_v, %s, kn_g, %lld);", from, len);
    reduce_warps(e, n, leaf, t, len, id, dst);
  }
  OUT(e, "#else\n");
  reduce_levels(e, n, from, t, len, id, dst);
  OUT(e, "#endif\n");
  e->depth--;
  line(e, "}");
}

static void reduce(Emitter *e, const Node *n, const char *dst) {
  bool arg = n->tile_op == TOP_ARGMIN || n->tile_op == TOP_ARGMAX;
  if (!arg && n->axis < 0) {
    const Node *s1 =
        n->tfn || (n->tile_op == TOP_REDUCE && n->tbuiltin >= 0) ? n->args->next : n->args;
    sync(e);
    reduce_whole(e, n, s1, s1->ty->elem, count(s1->ty), dst);
    sync(e);
    return;
  }
  const Node *src =
      n->tfn || (n->tile_op == TOP_REDUCE && n->tbuiltin >= 0) ? n->args->next : n->args;
  const Type *t = src->ty->elem;
  Lanes g = lanes_of(src->ty, n->axis);
  int id = ++e->ntile;
  sync(e);
  line(e, "{");
  e->depth++;
  temp_array(e, t, g.c * g.l, g.c * g.l, "r", id);
  if (arg) temp_array(e, &ty_i32, g.c * g.l, g.c * g.l, "x", id);
  line(e, "KN_TILE_FOR(kn_i, %lld) {", g.c * g.l);
  line(e, "  const int32_t kn_o = kn_i / %lld, kn_k = kn_i %% %lld;", g.l, g.l);
  emit_indent(e);
  OUT(e, "  kn_r%d[kn_i] = ", id);
  sname(e, src);
  OUT(e, "[kn_o * %lld + kn_k * %lld];\n", g.os, g.ks);
  if (arg) line(e, "  kn_x%d[kn_i] = kn_k;", id);
  line(e, "}");
  sync(e);
  line(e, "for (int32_t kn_w = 1; kn_w < %lld; kn_w *= 2) {", g.l);
  line(e, "  const int32_t kn_p = (%lld + 2 * kn_w - 1) / (2 * kn_w);", g.l);
  line(e, "  KN_TILE_FOR(kn_j, %lld * kn_p) {", g.c);
  line(e, "    const int32_t kn_k = (kn_j %% kn_p) * 2 * kn_w, kn_a = (kn_j / kn_p) * %lld + kn_k;",
       g.l);
  char l[48], r[48];
  snprintf(l, sizeof l, "kn_r%d[kn_a]", id);
  snprintf(r, sizeof r, "kn_r%d[kn_a + kn_w]", id);
  emit_indent(e);
  if (arg) {
    OUT(e, "    if (kn_k + kn_w < %lld && ", g.l);
    compare(e, t, n->tile_op == TOP_ARGMIN, r, l);
    OUT(e, ") { %s = %s; kn_x%d[kn_a] = kn_x%d[kn_a + kn_w]; }\n", l, r, id, id);
  } else {
    OUT(e, "    if (kn_k + kn_w < %lld) %s = ", g.l, l);
    combine(e, n, t, l, r);
    OUT(e, ";\n");
  }
  line(e, "  }");
  line(e, "  KN_TILE_SYNC();");
  line(e, "}");
  if (n->axis < 0)
    line(e, "%s = kn_%s%d[0];", dst, arg ? "x" : "r", id);
  else {
    line(e, "KN_TILE_FOR(kn_i, %lld) %s[kn_i] = kn_%s%d[kn_i * %lld];", g.c, dst, arg ? "x" : "r",
         id, g.l);
    sync(e);
  }
  e->depth--;
  line(e, "}");
}

/* ---- scans ------------------------------------------------------------------------------- */

/* On a GPU, levels j0 + 1 .. j0 + 5 of a scan's tree from level j0 with
 * one barrier: each warp takes 32 neighbouring nodes of level j0 and builds
 * the five levels above them with shuffles, as reduce_warps does, writing
 * each node it makes where the level-by-level form puts it. */
static void scan_warp_levels(Emitter *e, const Node *n, const Type *t, int id, int j0, int levels,
                             const long long *base, const long long *m) {
  const char *T = ct(e, t);
  line(e,
       "for (int32_t kn_b = (int32_t)(threadIdx.x & ~31u); kn_b < %lld; kn_b += "
       "(int32_t)blockDim.x) {",
       m[j0]);
  e->depth++;
  line(e, "const int32_t kn_g = kn_b + (int32_t)(threadIdx.x & 31u);");
  line(e, "%s kn_x = kn_l%d[%lld + (kn_g < %lld ? kn_g : 0)];", T, id, base[j0], m[j0]);
  for (int k = 1; k <= 5 && j0 + k < levels; k++) {
    long long s = 1ll << (k - 1);
    line(e, "{");
    e->depth++;
    line(e, "const %s kn_y = kn_shfl_down(kn_x, %lld);", T, s);
    char cond[96];
    snprintf(cond, sizeof cond, "(kn_g & %lld) == 0 && kn_g + %lld < %lld", 2 * s - 1, s, m[j0]);
    combine_into(e, n, t, cond, "kn_x", "kn_y");
    line(e, "if ((kn_g & %lld) == 0 && kn_g < %lld) kn_l%d[%lld + kn_g / %lld] = kn_x;", 2 * s - 1,
         m[j0], id, base[j0 + k], 2 * s);
    e->depth--;
    line(e, "}");
  }
  e->depth--;
  line(e, "}");
  sync(e);
}

/* On a GPU, the down-sweep: the prefix before each node, from the root down
 * one level per barrier, in place of the tree (a node's left child is read
 * before it is written). The prefix of node m of level j is the fold, largest
 * first, of the nodes the binary digits of m 2^j name, so its left child
 * inherits it and its right child appends the left child: each element gets
 * the very expression the per-element form (the CPU's) evaluates. The
 * prefix of the first node is empty, unless there is an initial value. */
static void scan_down_gpu(Emitter *e, const Node *n, const Node *src, const char *dst, int id,
                          int levels, const long long *base, const long long *m) {
  bool excl = n->tile_op == TOP_SCAN_EXC, init = n->nargs == 3 && excl;
  const Type *t = src->ty->elem;
  char l[64], r[64];
  if (init) line(e, "if (KN_TILE_LEADER) kn_l%d[%lld] = kn_init;", id, base[levels - 1]);
  if (init) sync(e);
  for (int j = levels - 1; j >= 1; j--) {
    line(e, "KN_TILE_FOR(kn_m, %lld) {", m[j]);
    e->depth++;
    line(e, "const %s kn_p = kn_l%d[%lld + kn_m];", ct(e, t), id, base[j]);
    line(e, "const %s kn_left = kn_l%d[%lld + 2 * kn_m];", ct(e, t), id, base[j - 1]);
    line(e, "kn_l%d[%lld + 2 * kn_m] = kn_p;", id, base[j - 1]);
    emit_indent(e);
    OUT(e, "if (2 * kn_m + 1 < %lld) kn_l%d[%lld + 2 * kn_m + 1] = %s ? ", m[j - 1], id,
        base[j - 1], init ? "true" : "kn_m > 0");
    combine(e, n, t, "kn_p", "kn_left");
    OUT(e, " : kn_left;\n");
    e->depth--;
    line(e, "}");
    sync(e);
  }
  snprintf(l, sizeof l, "kn_l%d[kn_i]", id);
  line(e, "KN_TILE_FOR(kn_i, %lld) {", m[0]);
  e->depth++;
  emit_indent(e);
  OUT(e, "%s[kn_i] = %s ? ", dst, init ? "true" : "kn_i > 0");
  if (excl) {
    OUT(e, "%s : ", l);
    emit_number(e, t, 0);
  } else {
    sname_text(e, src, r, sizeof r);
    strncat(r, "[kn_i]", sizeof r - strlen(r) - 1);
    combine(e, n, t, l, r);
    OUT(e, " : %s", r);
  }
  OUT(e, ";\n");
  e->depth--;
  line(e, "}");
}

/* kn_l = the scanned tile, its tree's first level. */
static void scan_copy_in(Emitter *e, const Node *src, int id, long long len) {
  emit_indent(e);
  OUT(e, "KN_TILE_FOR(kn_i, %lld) kn_l%d[kn_i] = ", len, id);
  sname(e, src);
  OUT(e, "[kn_i];\n");
  sync(e);
}

/* On a GPU whose block fits KN_SCAN_REGS_FIT, the scan in registers
 * (kn_scan_regs, kern_tiles.h), wsum in the first elements of kn_l; opens
 * the `else` the level-by-level form follows. */
static void scan_regs_gpu(Emitter *e, const Node *n, const Node *src, const char *dst, int id,
                          long long len) {
  bool excl = n->tile_op == TOP_SCAN_EXC, init = n->nargs == 3 && excl;
  const Type *t = src->ty->elem;
  const char *T = ct(e, t);
  line(e, "if (KN_SCAN_REGS_FIT(%lld)) {", len);
  e->depth++;
  emit_indent(e);
  OUT(e, "auto kn_op = [&](const %s kn_x, const %s kn_y) -> %s { return ", T, T, T);
  combine(e, n, t, "kn_x", "kn_y");
  OUT(e, "; };\n");
  emit_indent(e);
  OUT(e, "kn_scan_regs_any(%lld, ", len);
  sname(e, src);
  OUT(e, ", %s, kn_l%d, %s, ", dst, id, init ? "true" : "false");
  if (init)
    OUT(e, "kn_init");
  else
    emit_number(e, t, 0);
  OUT(e, ", %s, ", excl ? "true" : "false");
  emit_number(e, t, 0);
  OUT(e, ", kn_op);\n");
  e->depth--;
  line(e, "} else {");
}

static void scan(Emitter *e, const Node *n, const char *dst) {
  bool fn = n->nargs >= 2, excl = n->tile_op == TOP_SCAN_EXC;
  const Node *src = fn ? n->args->next : n->args;
  const Node *init = fn && excl ? n->args->next->next : NULL;
  const Type *t = src->ty->elem;
  long long len = count(src->ty), base[32], m[32];
  int levels = 1;
  base[0] = 0, m[0] = len;
  while (m[levels - 1] > 1 && levels < 31) {
    m[levels] = (m[levels - 1] + 1) / 2;
    base[levels] = base[levels - 1] + m[levels - 1];
    levels++;
  }
  int id = ++e->ntile;
  sync(e);
  line(e, "{");
  e->depth++;
  temp_array(e, t, base[levels - 1] + m[levels - 1], base[levels - 1] + m[levels - 1], "l", id);
  char l[64], r[64];
  OUT(e, "#ifdef __CUDACC_RTC__\n");
  if (len >= 32) scan_regs_gpu(e, n, src, dst, id, len), e->depth++;
  scan_copy_in(e, src, id, len);
  for (int j = 0; j + 1 < levels; j += 5) scan_warp_levels(e, n, t, id, j, levels, base, m);
  scan_down_gpu(e, n, src, dst, id, levels, base, m);
  if (len >= 32) e->depth--, line(e, "}");
  OUT(e, "#else\n");
  scan_copy_in(e, src, id, len);
  for (int j = 1; j < levels; j++) {
    snprintf(l, sizeof l, "kn_l%d[%lld + 2 * kn_j]", id, base[j - 1]);
    snprintf(r, sizeof r, "kn_l%d[%lld + 2 * kn_j + 1]", id, base[j - 1]);
    emit_indent(e);
    OUT(e, "KN_TILE_FOR(kn_j, %lld) kn_l%d[%lld + kn_j] = 2 * kn_j + 1 < %lld ? ", m[j], id,
        base[j], m[j - 1]);
    combine(e, n, t, l, r);
    OUT(e, " : %s;\n", l);
    sync(e);
  }
  line(e, "KN_TILE_FOR(kn_i, %lld) {", len);
  e->depth++;
  snprintf(r, sizeof r, "kn_l%d[kn_i]", id);
  line(e, "%s kn_acc = %s;", ct(e, t), init ? "kn_init" : r);
  line(e, "bool kn_have = %s;", init ? "true" : "false");
  for (int j = levels - 2; j >= 0; j--) {
    snprintf(r, sizeof r, "kn_l%d[%lld + ((kn_i >> %d) << 1)]", id, base[j], j + 1);
    line(e, "if (kn_i & %lld) {", 1ll << j);
    emit_indent(e);
    OUT(e, "  kn_acc = kn_have ? ");
    combine(e, n, t, "kn_acc", r);
    OUT(e, " : %s;\n", r);
    line(e, "  kn_have = true;");
    line(e, "}");
  }
  emit_indent(e);
  OUT(e, "%s[kn_i] = ", dst);
  if (excl) {
    OUT(e, "kn_have ? kn_acc : ");
    emit_number(e, t, 0);
  } else {
    snprintf(r, sizeof r, "kn_l%d[kn_i]", id);
    OUT(e, "kn_have ? ");
    combine(e, n, t, "kn_acc", r);
    OUT(e, " : %s", r);
  }
  OUT(e, ";\n");
  e->depth--;
  line(e, "}");
  OUT(e, "#endif\n");
  sync(e);
  e->depth--;
  line(e, "}");
}

/* The scan n into dst, its initial value (if any) computed first. */
static void scan_into(Emitter *e, const Node *n, const char *dst) {
  const Node *init = n->nargs == 3 ? n->args->next->next : NULL;
  if (init) {
    line(e, "{");
    emit_indent(e);
    OUT(e, "  const %s kn_init = ", ct(e, n->ty->elem));
    emit_expr(e, init);
    OUT(e, ";\n");
  }
  scan(e, n, dst);
  if (init) line(e, "}");
}

/* ---- loads, stores, shapes, sort ---------------------------------------------------------- */

/* The element's array offsets o0 (o1) for tile index kn_i, and whether it is inside. */
static void array_index(Emitter *e, const Node *n, const Type *t, const Node *arr) {
  const Node *o0 = arr->next, *o1 = t->ndim == 2 ? o0->next : NULL;
  emit_indent(e);
  if (t->ndim == 1) {
    /* wrapping (the GPU compiler has no -fwrapv): past the end of int64 is outside */
    OUT(e, "  const int64_t kn_a0 = (int64_t)((uint64_t)(");
    emit_expr(e, o0);
    OUT(e, ") + (uint64_t)kn_i);\n");
    emit_indent(e);
    OUT(e, "  const bool kn_in = kn_a0 >= 0 && kn_a0 < (");
    emit_expr(e, arr);
    OUT(e, ").shape[0];\n");
    return;
  }
  OUT(e, "  const int64_t kn_a0 = (int64_t)((uint64_t)(");
  emit_expr(e, o0);
  OUT(e, ") + (uint64_t)(kn_i / %d)), kn_a1 = (int64_t)((uint64_t)(", t->dims[1]);
  emit_expr(e, o1);
  OUT(e, ") + (uint64_t)(kn_i %% %d));\n", t->dims[1]);
  emit_indent(e);
  OUT(e, "  const bool kn_in = kn_a0 >= 0 && kn_a0 < (");
  emit_expr(e, arr);
  OUT(e, ").shape[0] && kn_a1 >= 0 && kn_a1 < (");
  emit_expr(e, arr);
  OUT(e, ").shape[1];\n");
  (void)n;
}

static void element_ptr(Emitter *e, const Node *arr, const Type *t) {
  const Type *el = arr->ty->elem;
  OUT(e, "KN_%c%d(%s, ", e->dense ? 'D' : 'S', t->ndim, emit_storage_ctype(e, el));
  emit_expr(e, arr);
  OUT(e, t->ndim == 1 ? ", kn_a0)" : ", kn_a0, kn_a1)");
}

/* A 2-D load of elements stored as they are computed: KN_TILE_LOAD2 (kern_tiles.h). */
static void load2(Emitter *e, const Node *n, const char *dst) {
  const Type *t = n->ty;
  const Node *arr = n->args, *o0 = arr->next, *o1 = o0->next, *fill = o1->next;
  sync(e);
  emit_indent(e);
  OUT(e, "KN_TILE_LOAD2(%s, %s, ", ct(e, t->elem), dst);
  emit_expr(e, arr);
  OUT(e, ", ");
  emit_expr(e, o0);
  OUT(e, ", ");
  emit_expr(e, o1);
  OUT(e, ", %d, %d, ", t->dims[0], t->dims[1]);
  if (fill)
    emit_expr(e, fill);
  else
    emit_number(e, t->elem, 0);
  OUT(e, ");\n");
  sync(e);
}

/* `if (` the len elements from arr's offset (arr->next) lie inside the
 * 1-D array `) {`: a tile wholly inside needs no per-element test, so the
 * CPU's loop vectorises (the condition is the same for every GPU thread). */
static void open_inside(Emitter *e, const Node *arr, long long len) {
  emit_indent(e);
  OUT(e, "if ((");
  emit_expr(e, arr->next);
  OUT(e, ") >= 0 && (");
  emit_expr(e, arr->next);
  OUT(e, ") <= (");
  emit_expr(e, arr);
  OUT(e, ").shape[0] - %lld) {\n", len);
}

static void load(Emitter *e, const Node *n, const char *dst) {
  const Type *t = n->ty;
  const Node *arr = n->args, *fill = t->ndim == 1 ? arr->next->next : arr->next->next->next;
  if (t->ndim == 2 && !strcmp(ct(e, t->elem), emit_storage_ctype(e, arr->ty->elem))) {
    load2(e, n, dst);
    return;
  }
  sync(e);
  if (t->ndim == 1) {
    open_inside(e, arr, count(t));
    if (t->elem->kind != TY_BOOL && !strcmp(ct(e, t->elem), emit_storage_ctype(e, arr->ty->elem))) {
      /* the same type: a copy, 16 bytes at a time on a GPU where it can be */
      emit_indent(e);
      OUT(e, "  KN_TILE_LOAD1(%s, %s, ", ct(e, t->elem), dst);
      emit_expr(e, arr);
      OUT(e, ", ");
      emit_expr(e, arr->next);
      OUT(e, ", %lld);\n", count(t));
    } else {
      line(e, "KN_TILE_FOR(kn_i, %lld) {", count(t));
      emit_indent(e);
      OUT(e, "  const int64_t kn_a0 = (");
      emit_expr(e, arr->next);
      OUT(e, ") + kn_i;\n");
      emit_indent(e);
      OUT(e, "  %s[kn_i] = (%s)*", dst, t->elem->kind == TY_BOOL ? "bool" : ct(e, t->elem));
      element_ptr(e, arr, t);
      OUT(e, ";\n");
      line(e, "}");
    }
    line(e, "} else");
  }
  line(e, "KN_TILE_FOR(kn_i, %lld) {", count(t));
  array_index(e, n, t, arr);
  emit_indent(e);
  OUT(e, "  %s[kn_i] = kn_in ? (%s)*", dst, t->elem->kind == TY_BOOL ? "bool" : ct(e, t->elem));
  element_ptr(e, arr, t);
  OUT(e, " : ");
  if (fill)
    emit_expr(e, fill);
  else
    emit_number(e, t->elem, 0);
  OUT(e, ";\n");
  line(e, "}");
  sync(e);
}

/* tile_store's `*p = v;` or tile_atomic_add's `kn_atomic_add_C(p, v);` of
 * element kn_i of tile t: p is the array element's pointer, or kn_p. */
static void write_element(Emitter *e, const Node *n, const Node *t, bool via_kn_p) {
  bool plain = n->tile_op == TOP_STORE;
  if (plain)
    OUT(e, "*");
  else
    OUT(e, "kn_atomic_add_%s(", builtin_type_code(t->ty->elem));
  if (via_kn_p)
    OUT(e, "kn_p");
  else
    element_ptr(e, n->args, t->ty);
  OUT(e, plain ? " = " : ", ");
  elem(e, t, "kn_i");
  OUT(e, plain ? ";" : ");");
}

/* The elements of the 1-D tile t to kn_sp four consecutive ones a thread,
 * 16 bytes at a time, each the expression it always is. */
static void store_vec4(Emitter *e, const Node *t, const char *T, long long len) {
  line(e, "KN_TILE_FOR(kn_q, %lld) {", len / 4);
  line(e, "  %s kn_v[4];", T);
  line(e, "  for (int32_t kn_u = 0; kn_u < 4; kn_u++) {");
  line(e, "    const int32_t kn_i = 4 * kn_q + kn_u;");
  emit_indent(e);
  OUT(e, "    kn_v[kn_u] = ");
  elem(e, t, "kn_i");
  OUT(e, ";\n");
  line(e, "  }");
  line(e, "  KN_STORE16(kn_sp + 4 * kn_q, kn_v);");
  line(e, "}");
  if (len % 4 == 0) return;
  line(e, "KN_TILE_FOR(kn_r, %lld) {", len % 4);
  line(e, "  const int32_t kn_i = %lld + kn_r;", len / 4 * 4);
  emit_indent(e);
  OUT(e, "  kn_sp[kn_i] = ");
  elem(e, t, "kn_i");
  OUT(e, ";\n");
  line(e, "}");
}

/* A 1-D tile_store wholly inside the array (open_inside), without
 * conversion: on a GPU 16 bytes a thread where the elements are 4 bytes,
 * contiguous and aligned. Opens the `else` of the checked form. */
static void store_inside(Emitter *e, const Node *n, const Node *t) {
  const Node *arr = n->args, *off = arr->next;
  const char *T = ct(e, t->ty->elem);
  long long len = count(t->ty);
  open_inside(e, arr, len);
  e->depth++;
  emit_indent(e);
  OUT(e, "%s *const kn_sp = KN_P1(%s, ", T, T);
  emit_expr(e, arr);
  OUT(e, ", ");
  emit_expr(e, off);
  OUT(e, ");\n");
  emit_indent(e);
  OUT(e, "if (KN_TILE_VEC4_OK(%s, ", T);
  emit_expr(e, arr);
  OUT(e, ", kn_sp)) {\n");
  e->depth++;
  store_vec4(e, t, T, len);
  e->depth--;
  line(e, "} else {");
  line(e, "  KN_TILE_FOR(kn_i, %lld) {", len);
  emit_indent(e);
  OUT(e, "    *KN_P1(%s, ", T);
  emit_expr(e, arr);
  OUT(e, ", (");
  emit_expr(e, off);
  OUT(e, ") + kn_i) = ");
  elem(e, t, "kn_i");
  OUT(e, ";\n");
  line(e, "  }");
  line(e, "}");
  e->depth--;
  line(e, "} else");
}

/* Under verify_fp a checked element is written through kn_p and tested. */
static void store(Emitter *e, const Node *n) {
  const Node *t = n->args;
  while (t->next) t = t->next;
  sync(e);
  if (n->tile_op == TOP_STORE && t->ty->ndim == 1 && t->ty->elem->kind != TY_BOOL &&
      !emit_fp_tile_checked(e, n->args, t->ty->elem) &&
      !strcmp(ct(e, t->ty->elem), emit_storage_ctype(e, n->args->ty->elem)))
    store_inside(e, n, t);
  line(e, "KN_TILE_FOR(kn_i, %lld) {", count(t->ty));
  array_index(e, n, t->ty, n->args);
  emit_indent(e);
  if (emit_fp_tile_checked(e, n->args, t->ty->elem)) {
    OUT(e, "  if (kn_in) { %s *kn_p = ", emit_storage_ctype(e, n->args->ty->elem));
    element_ptr(e, n->args, t->ty);
    OUT(e, "; ");
    write_element(e, n, t, true);
    emit_fp_tile_check(e, n, n->args, t->ty->elem);
    OUT(e, " }\n");
  } else {
    OUT(e, "  if (kn_in) ");
    write_element(e, n, t, false);
    OUT(e, "\n");
  }
  line(e, "}");
  sync(e);
}

/* transpose, broadcast, reshape: dst[i] = src[index of i]. */
static void shape_op(Emitter *e, const Node *n, const char *dst) {
  const Type *t = n->ty, *s = n->args->ty;
  long long c = t->ndim == 2 ? t->dims[1] : 1, r = t->dims[0];
  sync(e);
  emit_indent(e);
  OUT(e, "KN_TILE_FOR(kn_i, %lld) %s[kn_i] = ", count(t), dst);
  sname(e, n->args);
  if (n->tile_op == TOP_TRANSPOSE)
    OUT(e, "[(kn_i %% %lld) * %lld + kn_i / %lld];\n", c, r, c);
  else if (n->tile_op == TOP_RESHAPE)
    OUT(e, "[kn_i];\n");
  else {
    /* extents aligned from the right; a source extent of 1 repeats */
    long long s0 = s->ndim == 2 ? s->dims[0] : 1, s1 = s->ndim == 2 ? s->dims[1] : s->dims[0];
    char ri[48], ci[48];
    snprintf(ri, sizeof ri, t->ndim == 2 ? "kn_i / %lld" : "0", c);
    snprintf(ci, sizeof ci, t->ndim == 2 ? "kn_i %% %lld" : "kn_i", c);
    OUT(e, "[(%s) * %lld + (%s)];\n", s0 == 1 ? "0" : ri, s1, s1 == 1 ? "0" : ci);
  }
  sync(e);
}

/* tile_sort's rounds swap source and destination (kn_s*, kn_d*). */
static void sort_swap(Emitter *e, int id, const Type *kt, const Type *vt) {
  line(e, "  %s *kn_tk = kn_sk%d;", ct(e, kt), id);
  line(e, "  kn_sk%d = kn_dk%d, kn_dk%d = kn_tk;", id, id, id);
  if (vt) {
    line(e, "  %s *kn_tv = kn_sv%d;", ct(e, vt), id);
    line(e, "  kn_sv%d = kn_dv%d, kn_dv%d = kn_tv;", id, id, id);
  }
}

/* A round's pair of runs, [kn_lo, kn_mid) and [kn_mid, kn_hi), cut at the tile's end. */
static void sort_runs(Emitter *e, long long len) {
  line(e, "    int32_t kn_mid = kn_lo + kn_w < %lld ? kn_lo + kn_w : %lld;", len, len);
  line(e, "    int32_t kn_hi = kn_mid + kn_w < %lld ? kn_mid + kn_w : %lld;", len, len);
}

/* A GPU round: every element at once, its place in the merged run its place
 * in its own run plus the count, found by binary search, of the other run's
 * keys that go before it (smaller ones; for a right-run key, equal ones too). */
static void sort_rounds_gpu(Emitter *e, int id, long long len, const char *key, const Type *kt,
                            const Type *vt) {
  line(e, "for (int32_t kn_w = 1; kn_w < %lld; kn_w *= 2) {", len);
  line(e, "  KN_TILE_FOR(kn_i, %lld) {", len);
  line(e, "    int32_t kn_lo = kn_i / (2 * kn_w) * (2 * kn_w);");
  sort_runs(e, len);
  line(e, "    bool kn_left = kn_i < kn_mid;");
  line(e, "    int32_t kn_a = kn_left ? kn_mid : kn_lo, kn_b = kn_left ? kn_hi : kn_mid;");
  line(e, "    int32_t kn_to = kn_lo + (kn_left ? kn_i - kn_lo : kn_i - kn_mid) - kn_a;");
  line(e, "    while (kn_a < kn_b) {");
  line(e, "      int32_t kn_m = kn_a + (kn_b - kn_a) / 2;");
  line(e, "      if (kn_left ? %s(kn_sk%d[kn_m]) < %s(kn_sk%d[kn_i])", key, id, key, id);
  line(e, "                  : %s(kn_sk%d[kn_m]) <= %s(kn_sk%d[kn_i]))", key, id, key, id);
  line(e, "        kn_a = kn_m + 1;");
  line(e, "      else");
  line(e, "        kn_b = kn_m;");
  line(e, "    }");
  line(e, "    kn_dk%d[kn_to + kn_a] = kn_sk%d[kn_i];", id, id);
  if (vt) line(e, "    kn_dv%d[kn_to + kn_a] = kn_sv%d[kn_i];", id, id);
  line(e, "  }");
  line(e, "  KN_TILE_SYNC();");
  sort_swap(e, id, kt, vt);
  line(e, "}");
}

/* A CPU round: the runs merged one pair after another, a right-run key
 * first only when it is smaller. */
static void sort_rounds_cpu(Emitter *e, int id, long long len, const char *key, const Type *kt,
                            const Type *vt) {
  line(e, "for (int32_t kn_w = 1; kn_w < %lld; kn_w *= 2) {", len);
  line(e, "  for (int32_t kn_lo = 0; kn_lo < %lld; kn_lo += 2 * kn_w) {", len);
  sort_runs(e, len);
  line(e, "    int32_t kn_a = kn_lo, kn_b = kn_mid, kn_o = kn_lo;");
  line(e, "    while (kn_a < kn_mid || kn_b < kn_hi) {");
  line(e, "      int32_t kn_f = kn_b < kn_hi && (kn_a == kn_mid ||");
  line(e, "                     %s(kn_sk%d[kn_b]) < %s(kn_sk%d[kn_a])) ? kn_b++ : kn_a++;", key, id,
       key, id);
  emit_indent(e);
  OUT(e, "      kn_dk%d[kn_o] = kn_sk%d[kn_f];", id, id);
  if (vt) OUT(e, " kn_dv%d[kn_o] = kn_sv%d[kn_f];", id, id);
  OUT(e, " kn_o++;\n");
  line(e, "    }");
  line(e, "  }");
  sort_swap(e, id, kt, vt);
  line(e, "}");
}

/* tile_sort: a stable merge sort, ceil(log2 n) rounds merging runs of w into
 * runs of 2w (a stable sort has one result, so both devices and every thread
 * count give the same bits). Rounds alternate between the tile and a
 * temporary; after an odd count the result is copied home. On a GPU about
 * n log2(n)^2 / 2 key reads spread over the block, a barrier a round; on the
 * CPU n log2(n). The rank sort this replaces made n^2. */
static void sort(Emitter *e, const Node *n) {
  const Node *k = n->args, *v = k->next;
  const Type *kt = k->ty->elem, *vt = v ? v->ty->elem : NULL;
  long long len = count(k->ty);
  if (len < 2) return;
  int id = ++e->ntile, rounds = 0;
  while ((1LL << rounds) < len) rounds++;
  const char *key = kt->kind == TY_F32    ? "kn_tile_key_f32"
                    : kt->kind == TY_F64  ? "kn_tile_key_f64"
                    : kt->kind == TY_F16  ? "kn_tile_key_f16"
                    : kt->kind == TY_BF16 ? "kn_tile_key_bf16"
                                          : "";
  char kn[96], vn[96] = "";
  sname_text(e, k, kn, sizeof kn);
  if (v) sname_text(e, v, vn, sizeof vn);
  sync(e);
  line(e, "{");
  e->depth++;
  temp_array(e, kt, len, len, "k", id);
  if (v) temp_array(e, vt, len, len, "v", id);
  line(e, "%s *kn_sk%d = %s, *kn_dk%d = kn_k%d;", ct(e, kt), id, kn, id, id);
  if (v) line(e, "%s *kn_sv%d = %s, *kn_dv%d = kn_v%d;", ct(e, vt), id, vn, id, id);
  OUT(e, "#ifdef __CUDACC_RTC__\n");
  sort_rounds_gpu(e, id, len, key, kt, vt);
  OUT(e, "#else\n");
  sort_rounds_cpu(e, id, len, key, kt, vt);
  OUT(e, "#endif\n");
  if (rounds % 2) { /* the result is in the temporaries */
    emit_indent(e);
    OUT(e, "KN_TILE_FOR(kn_i, %lld) { %s[kn_i] = kn_k%d[kn_i];", len, kn, id);
    if (v) OUT(e, " %s[kn_i] = kn_v%d[kn_i];", vn, id);
    OUT(e, " }\n");
    sync(e);
  }
  e->depth--;
  line(e, "}");
}

/* tile_matmul(a, b[, c]) into dst: kn_tile_matmul_* of stdlib/kern_tiles.h. */
static void matmul(Emitter *e, const Node *n, const char *dst) {
  const Node *a = n->args, *b = a->next, *c = b->next;
  bool fast = n->tile_op == TOP_MATMUL_FAST;
  int id = ++e->ntile;
  sync(e);
  line(e, "{");
  e->depth++;
  if (fast) {
    line(e, "KN_TILE_MM_SCRATCH(kn_ma%d, %lld);", id, count(a->ty));
    line(e, "KN_TILE_MM_SCRATCH(kn_mb%d, %lld);", id, count(b->ty));
  }
  emit_indent(e);
  OUT(e, "kn_tile_matmul_%s%s(%s, ", fast ? "fast_" : "", builtin_type_code(a->ty->elem), dst);
  sname(e, a);
  OUT(e, ", ");
  sname(e, b);
  OUT(e, ", ");
  if (c)
    sname(e, c);
  else
    OUT(e, "(const %s *)0", ct(e, n->ty->elem));
  if (fast) OUT(e, ", kn_ma%d, kn_mb%d", id, id);
  OUT(e, ", %d, %d, %d);\n", n->ty->dims[0], n->ty->dims[1], a->ty->dims[1]);
  e->depth--;
  line(e, "}");
  sync(e);
}

/* ---- materializing values ----------------------------------------------------------------- */

static bool is_reduction(const Node *n) {
  if (n->kind != ND_CALL || n->call_kind != CALL_TILE) return false;
  TileOp op = n->tile_op;
  return op == TOP_SUM || op == TOP_MIN || op == TOP_MAX || op == TOP_ARGMIN || op == TOP_ARGMAX ||
         op == TOP_REDUCE;
}

void emit_tile_call(Emitter *e, const Node *n, const char *ret) {
  OUT(e, "kf_%s_%d(kn_c, kn_lin, kn_sb + %lldu", n->fn->name, n->fn->overload,
      (long long)e->tile_sp);
  if (ret) OUT(e, ", %s", ret);
  for (const Node *a = n->args; a; a = a->next) {
    OUT(e, ", ");
    if (is_tile(a->ty))
      sname(e, a);
    else
      emit_expr(e, a);
  }
  OUT(e, ")");
}

/* n's value into a new temporary bound to n (cpu: for the CPU's code only). */
static void materialize(Emitter *e, const Node *n, bool cpu) {
  char name[32];
  new_temp(e, name, sizeof name, is_tile(n->ty) ? "tt" : "ts", n->ty, cpu);
  if (n->kind == ND_CALL && n->call_kind == CALL_FUNC) {
    if (is_tile(n->ty)) sync(e);
    emit_indent(e);
    if (!is_tile(n->ty)) OUT(e, "%s = ", name);
    emit_tile_call(e, n, is_tile(n->ty) ? name : NULL);
    OUT(e, ";\n");
  } else if (is_reduction(n))
    reduce(e, n, name);
  else if (n->tile_op == TOP_LOAD)
    load(e, n, name);
  else if (n->tile_op == TOP_MATMUL || n->tile_op == TOP_MATMUL_FAST)
    matmul(e, n, name);
  else if (n->tile_op == TOP_SCAN_INC || n->tile_op == TOP_SCAN_EXC)
    scan_into(e, n, name);
  else
    shape_op(e, n, name);
  emit_bind(e, n, name);
}

/* A scalar a tile loop reads: computed once, before the loop. */
static void hoist_scalar(Emitter *e, const Node *n) {
  if (n->is_const || (n->kind == ND_IDENT) || !n->ty || n->ty->kind == TY_ARRAY ||
      n->ty->kind == TY_VOID || n->ty->kind == TY_TILE || emit_bound(e, n))
    return;
  char name[32];
  new_temp(e, name, sizeof name, "ts", n->ty, false);
  emit_indent(e);
  OUT(e, "%s = ", name);
  emit_expr(e, n);
  OUT(e, ";\n");
  emit_bind(e, n, name);
}

/* Does n read its tile operands whole (so each must be storage)? */
static bool reads_whole(const Node *n) {
  if (n->kind == ND_INDEX) return is_tile(n->lhs->ty);
  if (n->kind != ND_CALL) return false;
  if (n->call_kind == CALL_FUNC) return n->fn->tiled;
  return n->call_kind == CALL_TILE &&
         (tile_materializes(n) || is_reduction(n) || n->tile_op == TOP_SORT);
}

static void prepare_list(Emitter *e, const Node *n, const Node *list, bool in_tile) {
  for (const Node *a = list; a; a = a->next) {
    if (a->ty && a->ty->kind == TY_VOID && a->kind == ND_IDENT) continue; /* tile_map's f */
    if (a == tile_fused_load(n) && !emit_bound(e, a)) e->cpu_only = a;
    prepare(e, a, in_tile);
    if (reads_whole(n)) ensure_storage(e, a);
  }
}

/* Writes, before the statement, what n's tile operations need (see the top). */
static void prepare(Emitter *e, const Node *n, bool in_tile) {
  if (!n || emit_bound(e, n)) return;
  bool tile_node = is_tile(n->ty) || (n->kind == ND_CALL && n->call_kind == CALL_TILE);
  if (in_tile && !tile_node && !n->is_const && n->kind != ND_IDENT && n->ty &&
      n->ty->kind != TY_VOID) {
    prepare(e, n->lhs, false);
    prepare(e, n->rhs, false);
    prepare(e, n->cond, false);
    prepare(e, n->then, false);
    prepare(e, n->els, false);
    if (n->kind == ND_CALL || n->kind == ND_INDEX) prepare_list(e, n, n->args, false);
    if (n->kind == ND_INDEX) ensure_storage(e, n->lhs);
    hoist_scalar(e, n);
    return;
  }
  bool kids_tile = tile_node;
  prepare(e, n->lhs, kids_tile);
  if (n->kind == ND_INDEX && is_tile(n->lhs->ty)) ensure_storage(e, n->lhs);
  prepare(e, n->rhs, kids_tile);
  prepare(e, n->cond, kids_tile);
  prepare(e, n->then, kids_tile);
  prepare(e, n->els, kids_tile);
  if (n->kind == ND_CALL || n->kind == ND_INDEX) prepare_list(e, n, n->args, kids_tile);
  if (tile_materializes(n) || is_reduction(n) ||
      (n->kind == ND_CALL && n->call_kind == CALL_FUNC && n->fn->tiled && n->ty->kind != TY_VOID)) {
    if (n != e->cpu_only) {
      materialize(e, n, false);
    } else { /* a GPU reads it in its reduction (tile_fused_load) */
      OUT(e, "#ifndef __CUDACC_RTC__\n");
      materialize(e, n, true);
      OUT(e, "#endif\n");
      e->cpu_only = NULL;
    }
  }
}

/* ---- element mode and reads ----------------------------------------------------------------- */

void emit_tile_elem(Emitter *e, const Node *n) {
  const Type *t = n->ty && is_tile(n->ty) ? n->ty->elem : NULL;
  const Node *a = n->args;
  switch (n->tile_op) {
    case TOP_ZEROS: emit_number(e, t, 0); break;
    case TOP_ONES: emit_number(e, t, 1); break;
    case TOP_FULL: emit_expr(e, a); break;
    case TOP_ARANGE:
      if (type_is_half(t))
        OUT(e, "kn_cvt_f32_%s((float)(%s))", builtin_type_code(t), e->tile_i ? e->tile_i : "0");
      else
        OUT(e, "((%s)(%s))", ct(e, t), e->tile_i ? e->tile_i : "0");
      break;
    case TOP_WHERE:
      OUT(e, "((");
      emit_expr(e, a);
      OUT(e, ") ? (");
      emit_expr(e, a->next);
      OUT(e, ") : (");
      emit_expr(e, a->next->next);
      OUT(e, "))");
      break;
    case TOP_MAP:
      if (n->tfn)
        OUT(e, "kf_%s_%d(kn_c, kn_lin", n->tfn->name, n->tfn->overload);
      else
        OUT(e, "%s(", builtin_get(n->tbuiltin)->cname);
      for (const Node *x = a->next; x; x = x->next) {
        OUT(e, n->tfn || x != a->next ? ", " : "");
        emit_expr(e, x);
      }
      OUT(e, ")");
      break;
    default: OUT(e, "0"); /* bound before the statement (prepare) */
  }
}

void emit_tile_read(Emitter *e, const Node *n) {
  const Type *t = n->lhs->ty;
  const char *saved = e->tile_i;
  e->tile_i = NULL;
  sname(e, n->lhs);
  OUT(e, "[kne_vidx((int64_t)(");
  emit_expr(e, n->args);
  OUT(e, "), %d)", t->dims[0]);
  if (t->ndim == 2) {
    OUT(e, " * %d + kne_vidx((int64_t)(", t->dims[1]);
    emit_expr(e, n->args->next);
    OUT(e, "), %d)", t->dims[1]);
  }
  OUT(e, "]");
  e->tile_i = saved;
}

/* ---- statements ------------------------------------------------------------------------------ */

/* The scalar statement n, done by one thread between barriers. */
static void guarded(Emitter *e, const Node *n) {
  sync(e);
  line(e, "if (KN_TILE_LEADER) {");
  e->depth++;
  emit_statement(e, n);
  e->depth--;
  line(e, "}");
  sync(e);
}

/* x (a scalar with a side effect) computed by one thread and handed to all. */
static void broadcast(Emitter *e, const Node *x) {
  char name[32];
  snprintf(name, sizeof name, "kn_b%d", ++e->ntile);
  line(e, "KN_TILE_SCALAR(%s, %lld, %s);", ct(e, x->ty),
       (long long)tile_alloc(e, false, 1, x->ty->size), name);
  sync(e);
  emit_indent(e);
  OUT(e, "if (KN_TILE_LEADER) %s = ", name);
  emit_expr(e, x);
  OUT(e, ";\n");
  sync(e);
  emit_bind(e, x, name);
}

static bool writes_array(const Node *t) {
  while (t->kind == ND_MEMBER || (t->kind == ND_INDEX && t->lhs->ty->kind != TY_ARRAY)) t = t->lhs;
  return t->kind == ND_INDEX;
}

static void tile_void(Emitter *e, const Node *x) {
  if (x->kind == ND_CALL && x->call_kind == CALL_TILE && x->tile_op == TOP_SORT)
    sort(e, x);
  else if (x->kind == ND_CALL && x->call_kind == CALL_TILE)
    store(e, x);
  else {
    emit_indent(e);
    emit_tile_call(e, x, NULL);
    OUT(e, ";\n");
  }
}

static bool scalar_stmt(Emitter *e, const Node *n) {
  switch (n->kind) {
    case ND_VARDECL:
      if (emit_effects(e, n->var->init)) broadcast(e, n->var->init);
      emit_statement(e, n);
      return true;
    case ND_ASSIGN:
      if (writes_array(n->lhs))
        guarded(e, n);
      else {
        if (emit_effects(e, n->rhs)) broadcast(e, n->rhs);
        emit_statement(e, n);
      }
      return true;
    case ND_INCDEC:
      if (writes_array(n->lhs))
        guarded(e, n);
      else
        emit_statement(e, n);
      return true;
    case ND_EXPR_STMT:
      if (emit_effects(e, n->lhs))
        guarded(e, n);
      else
        emit_statement(e, n);
      return true;
    case ND_RETURN:
      if (n->lhs && emit_effects(e, n->lhs)) broadcast(e, n->lhs);
      emit_statement(e, n);
      return true;
    default: return false;
  }
}

static bool tile_stmt(Emitter *e, const Node *n) {
  switch (n->kind) {
    case ND_VARDECL:
      if (!is_tile(n->var->ty)) return false;
      open_array(e, true, n->var->ty->elem, count(n->var->ty), count(n->var->ty));
      emit_var_name(e, n->var);
      OUT(e, ");\n");
      assign_loop(e, n->var->ty, TK_ASSIGN, n->var->init, dst_var, n->var);
      return true;
    case ND_ASSIGN:
      if (!is_tile(n->lhs->ty)) return false;
      assign_loop(e, n->lhs->ty, n->op == TK_ASSIGN ? TK_ASSIGN : tok_compound_op(n->op), n->rhs,
                  dst_node, n->lhs);
      return true;
    case ND_EXPR_STMT:
      if (n->lhs->ty->kind != TY_VOID ||
          !((n->lhs->kind == ND_CALL && n->lhs->call_kind == CALL_TILE) ||
            (n->lhs->kind == ND_CALL && n->lhs->call_kind == CALL_FUNC && n->lhs->fn->tiled)))
        return false;
      tile_void(e, n->lhs);
      return true;
    case ND_RETURN:
      if (!n->lhs || !is_tile(n->lhs->ty)) return false;
      assign_loop(e, n->lhs->ty, TK_ASSIGN, n->lhs, dst_text, "kn_ret");
      line(e, "return;");
      return true;
    default: return false;
  }
}

/* A load, scan or matmul written straight into the statement's variable (tile_direct). */
static bool direct(Emitter *e, const Node *n) {
  const Node *x = n->kind == ND_VARDECL || n->kind == ND_ASSIGN ? tile_direct(n) : NULL;
  if (!x) return false;
  const Var *v = n->kind == ND_VARDECL ? n->var : n->lhs->var;
  prepare_list(e, x, x->args, true);
  if (n->kind == ND_VARDECL) {
    open_array(e, true, v->ty->elem, count(v->ty), count(v->ty));
    emit_var_name(e, v);
    OUT(e, ");\n");
  }
  Buf saved = emit_aside(e);
  emit_var_name(e, v);
  char *name = emit_aside_end(e, saved);
  if (!name) return true;
  if (x->tile_op == TOP_LOAD)
    load(e, x, name);
  else if (x->tile_op == TOP_SCAN_INC || x->tile_op == TOP_SCAN_EXC)
    scan_into(e, x, name);
  else
    matmul(e, x, name);
  free(name);
  return true;
}

bool emit_tile_stmt(Emitter *e, const Node *n) {
  int mark = e->nbound;
  int64_t sp = e->tile_sp;
  if (direct(e, n)) {
    e->nbound = mark, e->tile_sp = sp;
    return true;
  }
  bool done = true;
  switch (n->kind) {
    case ND_VARDECL: prepare(e, n->var ? n->var->init : NULL, is_tile(n->var->ty)); break;
    case ND_ASSIGN:
      prepare(e, n->rhs, is_tile(n->lhs->ty));
      if (!is_tile(n->lhs->ty)) prepare(e, n->lhs, false);
      break;
    case ND_INCDEC:
    case ND_EXPR_STMT:
    case ND_RETURN: prepare(e, n->lhs, false); break;
    case ND_IF:
      /* an else-if chain's conditions before its first if: tile operations are pure */
      for (const Node *c = n; c && c->kind == ND_IF; c = c->els) prepare(e, c->cond, false);
      done = false;
      break;
    case ND_FOR: emit_mmloop_guard(e, n); return false;
    default: return false;
  }
  if (done && !tile_stmt(e, n) && !scalar_stmt(e, n)) emit_statement(e, n);
  if (!done) emit_statement(e, n);
  e->nbound = mark, e->tile_sp = sp;
  return true;
}

/* ---- tiled functions --------------------------------------------------------------------------- */

void emit_tile_params(Emitter *e, const Decl *f) {
  OUT(e, ", uint32_t kn_sb");
  if (f->ret && is_tile(f->ret)) OUT(e, ", %s *kn_ret", ct(e, f->ret->elem));
  for (int i = 0; i < f->nparams; i++) {
    const Var *p = f->params[i];
    if (is_tile(p->ty))
      OUT(e, ", const %s *kn_p%d", ct(e, p->ty->elem), p->id);
    else {
      OUT(e, ", %s ", ct(e, p->ty));
      emit_var_name(e, p);
    }
  }
}

void emit_tile_entry(Emitter *e, const Decl *f) {
  e->tile_var_sp = 0, e->tile_sp = f->tile_vars, e->tile_over = false;
  if (f->kind == DECL_KERNEL) line(e, "const uint32_t kn_sb = 0;");
  line(e, "(void)kn_sb;");
  for (int i = 0; i < f->nparams; i++) {
    const Var *p = f->params[i];
    if (!is_tile(p->ty)) continue;
    open_array(e, true, p->ty->elem, count(p->ty), count(p->ty));
    emit_var_name(e, p);
    OUT(e, ");\n");
    sync(e);
    emit_indent(e);
    OUT(e, "KN_TILE_FOR(kn_i, %lld) ", count(p->ty));
    emit_var_name(e, p);
    OUT(e, "[kn_i] = kn_p%d[kn_i];\n", p->id);
    sync(e);
  }
}

void emit_tile_exit(Emitter *e, const Decl *f) {
  if (e->tile_over)
    OUT(e, "#error \"kern: the tile storage of '%s' outgrew its count (a compiler bug)\"\n",
        f->name);
}
