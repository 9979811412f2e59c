/* emit_c.c: the CPU target: C11 for clang or gcc, loaded with dlopen.
 *
 * Adds the C spellings of the core's qualifier macros and, per kernel, the
 * range entries the runtime's thread pool calls: kk_K_range(args, ctx, begin,
 * end) loops over linear indices so the C compiler can inline the body and
 * vectorise the innermost dimension. Multi-dimensional launches walk row by
 * row: one division per row, not per index. The counters are int32 (a launch
 * is below 2^31 indices): gcc vectorises `int i = tid()` only then. Range
 * loops are marked independent for gcc (KN_INDEPENDENT): a launch's indices
 * are threads with no order among them.
 */
#include "emit_internal.h"

static void c_prologue(Emitter *e) {
  buf_puts(&e->out,
           "#define KN_FUNC static inline\n"
           "#define KN_ZERO {0}\n"
           "#define KN_RESTRICT restrict\n"
           "#define KN_SASSERT(c, m) _Static_assert(c, m)\n"
           "/* where a debug access past the bounds goes instead: each thread's stack */\n"
           "#define KNE_SCRATCH_GLOBAL\n"
           "#define KNE_SCRATCH_LOCAL kne_scratch kn_scratch;\n"
           "#define KNE_SCRATCH (&kn_scratch)\n"
           "/* A launch's indices are unordered threads, so a range loop's iterations\n"
           " * are independent: gcc is told (its dependence analysis gives up on two\n"
           " * arrays with run-time strides); clang checks overlap at run time itself. */\n"
           "#if defined(__GNUC__) && !defined(__clang__)\n"
           "#define KN_INDEPENDENT _Pragma(\"GCC ivdep\")\n"
           "#else\n"
           "#define KN_INDEPENDENT\n"
           "#endif\n");
}

/* The rest of a body call: a dense body's restrict arrays, then ");". */
static void call_end(Emitter *e, const Decl *k, bool dense) {
  if (dense) emit_restrict_args(e, k, false);
  buf_puts(&e->out, ");\n");
}

static void flat_loop(Emitter *e, const Decl *k, bool dense) {
  buf_printf(&e->out,
             "  KN_INDEPENDENT for (int32_t i = (int32_t)begin; i < (int32_t)end; i++)\n"
             "    kk_%s_body%s(&a, C, i, 0, 0, 0, 0",
             k->name, dense ? "_dense" : "");
  call_end(e, k, dense);
}

/* Multi-dimensional launches walk row by row, one loop per launch rank so
 * every tid(d) is a plain variable (the column counter for the last
 * dimension) and the C compiler can vectorise along the row. */
static void row_loop(Emitter *e, const Decl *k, bool dense) {
  buf_puts(&e->out, "  const int32_t inner = (int32_t)C->dim[C->ndim - 1], last = (int32_t)end;\n"
                    "  switch (C->ndim) {\n");
  for (int nd = 1; nd <= 4; nd++) {
    buf_printf(&e->out,
               "  case %d:\n"
               "    for (int32_t i = (int32_t)begin; i < last;) {\n"
               "      int32_t o[4];\n"
               "      kne_unlinear(C, i, o);\n"
               "      int32_t col = o[%d], stop = i + (inner - col);\n"
               "      if (stop > last) stop = last;\n"
               "      KN_INDEPENDENT for (; i < stop; i++, col++) kk_%s_body%s(&a, C, i",
               nd, nd - 1, k->name, dense ? "_dense" : "");
    for (int d = 0; d < 4; d++)
      buf_printf(&e->out, d == nd - 1 ? ", col" : d < nd ? ", o[%d]" : ", 0", d);
    call_end(e, k, dense);
    buf_puts(&e->out, "    }\n    break;\n");
  }
  buf_puts(&e->out, "  }\n");
}

static void c_entries(Emitter *e, const Decl *k) {
  bool dims = emit_kernel_uses_tid_dims(k);
  for (int dense = 0; dense < 2; dense++) {
    const char *variant = dense ? "_dense" : "";
    buf_printf(
        &e->out,
        "void kk_%s_range%s(const kk_%s_args *A, const kn_ctx *C, int64_t begin, int64_t end) {\n"
        "  const kk_%s_args a = *A;\n",
        k->name, variant, k->name, k->name);
    if (dims)
      row_loop(e, k, dense);
    else
      flat_loop(e, k, dense);
    buf_puts(&e->out, "}\n");
  }
  buf_printf(&e->out, "const uint32_t kk_%s_args_size = (uint32_t)sizeof(kk_%s_args);\n", k->name,
             k->name);
}

const EmitTargetOps emit_target_c = {c_prologue, c_entries, NULL};
