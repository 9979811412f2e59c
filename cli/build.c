/* build.c: `kernc build FILE.kern -o PREFIX`: a module compiled ahead of time.
 *
 * Requires: the front end and emitter (C and CUDA source), the toolchain
 * (support/toolchain.h: the C compiler, run with an argument vector and no
 * shell, and NVRTC).
 * Produces: cli_build, which writes PREFIX.h (typed launch functions and the
 * module's structs as C structs) and PREFIX.o.
 * Breaks: PREFIX.o is one generated C file compiled with -c: the module's C
 * code, its three external symbols per kernel renamed after the prefix (and
 * hidden) so that two AOT modules link together; the CUBINs and PTX as byte
 * arrays; and the table of kern_abi.h (struct kern_embedded), which carries the
 * module's source so the runtime can check it again for the kernels'
 * signatures. Outputs go to temporary names beside the final ones and are
 * renamed at the end, the object only once it is one (a compiler that exits
 * 0 but writes nothing is an error): a failure, a fatal signal or a crash
 * (output.c's cleanup list) leaves no partial file and keeps old outputs.
 * Each compile has a time limit (--compile-timeout, KERN_COMPILE_TIMEOUT,
 * 300 s by default).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "builtins.h"
#include "cli.h"
#include "emit.h"
#include "error.h"
#include "file.h"
#include "front.h"
#include "kern.h"
#include "str.h"
#include "toolchain.h"

/* NAME_BUF holds a header name: the prefix, '_', a kern name and a suffix
 * (both at most AST_MAX_IDENT bytes: make_id's caller checks the prefix). */
enum { MAX_ARCHS = 16, NAME_BUF = 2 * AST_MAX_IDENT + 32 };
/* GPUs a default build runs on natively; PTX for the newest covers later ones. */
static const int default_archs[] = {75, 80, 90};

typedef struct Image {
  int arch;
  bool is_ptx;
  char *data;
  size_t len;
} Image;

typedef struct Build {
  const Options *o;
  const Program *prog;
  char *prefix; /* the output path without .h / .o */
  char *id;     /* the C identifier prefix */
  int archs[MAX_ARCHS], narchs;
  Image images[MAX_ARCHS + 1];
  int nimages;
  const Module **files; /* the table's files: the root first */
  int nfiles;
  char *tmp_h, *tmp_o, *tmp_d, *workdir, *c_path;
  int timeout_ms; /* of each compile (--compile-timeout, KERN_COMPILE_TIMEOUT); 0: none */
} Build;

/* ---- small helpers ------------------------------------------------------------------ */

/* Words a generated name must avoid in C and C++ (keywords, and macros of the
 * standard headers kern.h includes). */
static const char *const reserved[] = {"alignas",
                                       "alignof",
                                       "and",
                                       "and_eq",
                                       "asm",
                                       "auto",
                                       "bitand",
                                       "bitor",
                                       "bool",
                                       "break",
                                       "case",
                                       "catch",
                                       "char",
                                       "char16_t",
                                       "char32_t",
                                       "class",
                                       "compl",
                                       "const",
                                       "const_cast",
                                       "constexpr",
                                       "continue",
                                       "decltype",
                                       "default",
                                       "delete",
                                       "do",
                                       "double",
                                       "dynamic_cast",
                                       "else",
                                       "enum",
                                       "explicit",
                                       "export",
                                       "extern",
                                       "false",
                                       "float",
                                       "for",
                                       "friend",
                                       "goto",
                                       "if",
                                       "inline",
                                       "int",
                                       "long",
                                       "mutable",
                                       "namespace",
                                       "new",
                                       "noexcept",
                                       "not",
                                       "not_eq",
                                       "nullptr",
                                       "operator",
                                       "or",
                                       "or_eq",
                                       "private",
                                       "protected",
                                       "public",
                                       "register",
                                       "reinterpret_cast",
                                       "restrict",
                                       "return",
                                       "short",
                                       "signed",
                                       "sizeof",
                                       "static",
                                       "static_assert",
                                       "static_cast",
                                       "struct",
                                       "switch",
                                       "template",
                                       "this",
                                       "thread_local",
                                       "throw",
                                       "true",
                                       "try",
                                       "typedef",
                                       "typeid",
                                       "typename",
                                       "union",
                                       "unsigned",
                                       "using",
                                       "virtual",
                                       "void",
                                       "volatile",
                                       "wchar_t",
                                       "while",
                                       "xor",
                                       "xor_eq",
                                       "NULL",
                                       "offsetof",
                                       "errno",
                                       "device",
                                       "dims",
                                       NULL};

/* A kern name as a C/C++ identifier in the header: reserved words and names
 * in kern's own namespace get a trailing underscore. */
static const char *c_name(const char *name, char *buf, size_t n) {
  bool bad = name[0] == '_' || !strncmp(name, "kern", 4) || !strncmp(name, "KERN", 4);
  for (int i = 0; !bad && reserved[i]; i++) bad = strcmp(name, reserved[i]) == 0;
  if (!bad) return name;
  snprintf(buf, n, "%s_", name);
  return buf;
}

static int parse_archs(Build *b, const char *list) {
  if (!list) {
    for (size_t i = 0; i < sizeof default_archs / sizeof *default_archs; i++)
      b->archs[b->narchs++] = default_archs[i];
    return EXIT_OK;
  }
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    char item[32];
    snprintf(item, sizeof item, "%.*s", (int)(n < 31 ? n : 31), p);
    const char *v = item + (strncmp(item, "sm_", 3) == 0 ? 3 : 0);
    char *end;
    long arch = strtol(v, &end, 10);
    if (!*v || *end || arch < 30 || arch > 200 || n > 31)
      return cli_bad_usage("bad arch '%s' in --arch (expected e.g. sm_80,sm_90)", item);
    bool dup = false;
    for (int i = 0; i < b->narchs; i++) dup |= b->archs[i] == arch;
    if (!dup && b->narchs == MAX_ARCHS) return cli_bad_usage("%s", "too many archs in --arch");
    if (!dup) b->archs[b->narchs++] = (int)arch;
    p += n + (p[n] == ',');
  }
  return b->narchs ? EXIT_OK : cli_bad_usage("%s", "--arch needs at least one arch");
}

/* ---- the GPU images ---------------------------------------------------------------------- */

static int newest_arch(const Build *b) {
  int best = 0;
  for (int i = 0; i < b->narchs; i++)
    if (b->archs[i] > best) best = b->archs[i];
  return best;
}

static int nvrtc_image(Build *b, const char *src, int arch, bool ptx) {
  Image *im = &b->images[b->nimages];
  bool is_ptx = false;
  unsigned flags = (b->o->debug ? TC_NVRTC_DEBUG : 0) | (b->o->fast_math ? TC_NVRTC_FAST_MATH : 0);
  int st =
      tc_nvrtc_compile(src, b->prog->root->path, arch, !ptx, flags, &im->data, &im->len, &is_ptx);
  if (st == KERN_ERR_COMPILE) {
    fprintf(stderr, "kernc: internal error: %s\n", kern_last_error());
    return EXIT_INTERNAL;
  }
  if (st) return cli_fail("%s", kern_last_error());
  if (is_ptx != ptx) {
    free(im->data);
    return cli_fail(
        "NVRTC %d.%d cannot make a CUBIN for sm_%d: choose archs it supports with --arch",
        tc_nvrtc_version() / 1000, tc_nvrtc_version() % 1000 / 10, arch);
  }
  im->arch = arch;
  im->is_ptx = ptx;
  b->nimages++;
  return EXIT_OK;
}

/* CUBINs for every arch and PTX for the newest, so later GPUs JIT it. */
static int gpu_images(Build *b) {
  const char *why;
  if (b->o->no_cuda) return EXIT_OK;
  if (!tc_nvrtc_available(&why)) {
    fprintf(stderr, "kernc: note: %s; %s.o gets CPU code only\n", why, b->prefix);
    return EXIT_OK;
  }
  EmitOptions eo = {.debug = b->o->debug,
                    .line_directives = true,
                    .fast_math = b->o->fast_math,
                    .verify_fp = b->o->verify_fp};
  char *src = emit_program(b->prog, EMIT_CUDA, &eo);
  if (!src) return cli_fail("out of memory");
  int rc = EXIT_OK;
  for (int i = 0; rc == EXIT_OK && i < b->narchs; i++) rc = nvrtc_image(b, src, b->archs[i], false);
  if (rc == EXIT_OK) rc = nvrtc_image(b, src, newest_arch(b), true);
  free(src);
  return rc;
}

/* ---- the object's C source ------------------------------------------------------------------ */

static void collect_files(Build *b) {
  const Program *p = b->prog;
  int n = 0;
  for (const Module *m = p->modules; m; m = m->next) n++;
  b->files = calloc((size_t)n + 1, sizeof *b->files);
  if (!b->files) return;
  b->files[b->nfiles++] = p->root;
  for (const Module *m = p->modules; m; m = m->next)
    if (m != p->root) b->files[b->nfiles++] = m;
}

static int file_index(const Build *b, const Module *m) {
  for (int i = 0; i < b->nfiles; i++)
    if (b->files[i] == m) return i;
  return 0;
}

static void put_files(Buf *out, const Build *b) {
  for (int i = 0; i < b->nfiles; i++) {
    char name[32];
    snprintf(name, sizeof name, "kt_file%d", i);
    cli_c_bytes(out, name, (const unsigned char *)b->files[i]->src, b->files[i]->src_len);
  }
  buf_add(out, "static const kn_embed_file kt_files[] = {\n", 42);
  for (int i = 0; i < b->nfiles; i++) {
    buf_add(out, "  {", 3);
    cli_c_literal(out, b->files[i]->path);
    buf_printf(out, ", (const char *)kt_file%d, %zu},\n", i, b->files[i]->src_len);
  }
  buf_add(out, "};\n", 3);
}

/* Every spelling front.c will ask the runtime's reader for: each import's
 * joined path, mapped to the file it resolved to at build time. */
static int put_aliases(Buf *out, const Build *b) {
  int n = 0;
  buf_add(out, "static const kn_embed_alias kt_aliases[] = {\n", 45);
  for (int i = 0; i < b->nfiles; i++)
    for (const Decl *d = b->files[i]->decls; d; d = d->next) {
      if (d->kind != DECL_IMPORT || !d->imported) continue;
      char *joined = front_import_path(b->files[i]->path, d->path);
      if (!joined) return -1;
      buf_add(out, "  {", 3);
      cli_c_literal(out, joined);
      buf_printf(out, ", %d},\n", file_index(b, d->imported));
      free(joined);
      n++;
    }
  buf_add(out, "  {0, 0}\n};\n", 12);
  return n;
}

static void put_kernels(Buf *out, const Build *b) {
  const Program *p = b->prog;
  buf_add(out, "static const kn_embed_kernel kt_kernels[] = {\n", 46);
  for (int i = 0; i < p->nkernels; i++) {
    const char *k = p->kernels[i]->name;
    buf_printf(
        out,
        "  {\"%s\", (kn_range_fn)kk_%s_range, (kn_range_fn)kk_%s_range_dense, sizeof(kk_%s_args)},\n",
        k, k, k, k);
  }
  buf_add(out, "  {0, 0, 0, 0}\n};\n", 18);
}

static void put_images(Buf *out, const Build *b) {
  for (int i = 0; i < b->nimages; i++) {
    char name[32];
    snprintf(name, sizeof name, "kt_image%d", i);
    cli_c_bytes(out, name, (const unsigned char *)b->images[i].data, b->images[i].len);
  }
  buf_add(out, "static const kn_embed_image kt_images[] = {\n", 44);
  for (int i = 0; i < b->nimages; i++)
    buf_printf(out, "  {%d, %d, kt_image%d, %zu},\n", b->images[i].arch, b->images[i].is_ptx, i,
               b->images[i].len);
  buf_add(out, "  {0, 0, 0, 0}\n};\n", 18);
}

static void put_table(Buf *out, const Build *b, int naliases) {
  const char *id = b->id;
  buf_printf(out,
             "__attribute__((visibility(\"default\"))) const struct kern_embedded %s_embedded = {\n"
             "  KN_EMBED_MAGIC, KN_ABI_VERSION, KN_EMBED_LAYOUT, %d, \"%s\", ",
             id, (b->o->debug ? 1 : 0) | (b->o->fast_math ? 2 : 0) | (b->o->verify_fp ? 4 : 0),
             /* KN_EMBED_DEBUG, _FAST_MATH, _VERIFY_FP */
             kern_version_string());
  cli_c_literal(out, b->prog->root->path);
  buf_printf(out, ",\n  %d, %d, %d, %d, kt_files, kt_aliases, kt_kernels, kt_images};\n", b->nfiles,
             naliases, b->prog->nkernels, b->nimages);
  buf_printf(out,
             "struct kern_module;\n"
             "struct kern_module *kern_module_embedded(const struct kern_embedded *);\n"
             "__attribute__((visibility(\"default\"))) struct kern_module *%s_module(void) {\n"
             "  return kern_module_embedded(&%s_embedded);\n}\n",
             id, id);
}

static char *object_source(Build *b) {
  Buf out = {0};
  buf_printf(
      &out,
      "/* Generated by kernc build %s from %s: the CPU code, GPU images and module table. */\n",
      kern_version_string(), b->prog->root->path);
  for (int i = 0; i < b->prog->nkernels; i++) {
    const char *k = b->prog->kernels[i]->name;
    buf_printf(
        &out,
        "#define kk_%s_range %s_kk_%s_range\n#define kk_%s_range_dense %s_kk_%s_range_dense\n", k,
        b->id, k, k, b->id, k);
    buf_printf(&out, "#define kk_%s_args_size %s_kk_%s_args_size\n", k, b->id, k);
  }
  EmitOptions eo = {.debug = b->o->debug,
                    .line_directives = true,
                    .fast_math = b->o->fast_math,
                    .verify_fp = b->o->verify_fp};
  char *code = emit_program(b->prog, EMIT_C, &eo);
  if (!code) {
    buf_free(&out);
    return NULL;
  }
  buf_add(&out, code, strlen(code));
  free(code);
  buf_add(&out, "\n/* ---- the module table (kern_abi.h) ---- */\n", 47);
  put_files(&out, b);
  int naliases = put_aliases(&out, b);
  put_kernels(&out, b);
  put_images(&out, b);
  put_table(&out, b, naliases);
  if (out.oom || naliases < 0) {
    buf_free(&out);
    return NULL;
  }
  return out.s;
}

/* ---- the header -------------------------------------------------------------------------------- */

static const char *c_type(const Build *b, const Type *t, char *buf, size_t n) {
  static const char *const scalars[] = {
      [TY_BOOL] = "bool",         [TY_I8] = "int8_t",    [TY_I16] = "int16_t",
      [TY_I32] = "int32_t",       [TY_I64] = "int64_t",  [TY_U8] = "uint8_t",
      [TY_U16] = "uint16_t",      [TY_U32] = "uint32_t", [TY_U64] = "uint64_t",
      [TY_F16] = "kern_float16",  [TY_F32] = "float",    [TY_F64] = "double",
      [TY_BF16] = "kern_bfloat16"};
  switch (t->kind) {
    case TY_BOOL:
    case TY_I8:
    case TY_I16:
    case TY_I32:
    case TY_I64:
    case TY_U8:
    case TY_U16:
    case TY_U32:
    case TY_U64:
    case TY_F16:
    case TY_BF16:
    case TY_F32:
    case TY_F64: return scalars[t->kind];
    case TY_VEC:
      if (t->generic) break;
      if (t->n == 6) return "kern_spatial_vector";
      snprintf(buf, n, "kern_%svec%d",
               t->elem->kind == TY_F64   ? "d"
               : t->elem->kind == TY_I32 ? "i"
                                         : "",
               t->n);
      return buf;
    case TY_MAT:
      if (t->generic) break;
      if (t->n == 6) return "kern_spatial_matrix";
      snprintf(buf, n, "kern_mat%d%d", t->n, t->n);
      return buf;
    case TY_QUAT:
      return t->elem->kind == TY_F16    ? "kern_quath"
             : t->elem->kind == TY_BF16 ? "kern_quatbf16"
             : t->elem->kind == TY_F64  ? "kern_quatd"
                                        : "kern_quat";
    case TY_TRANSFORM: return "kern_transform";
    case TY_STRUCT: {
      /* PREFIX_module and PREFIX_embedded are taken. */
      const char *name = t->sdecl->name;
      bool taken = !strcmp(name, "module") || !strcmp(name, "embedded");
      snprintf(buf, n, "%s_%s%s", b->id, name, taken ? "_" : "");
      return buf;
    }
    case TY_ARRAY: return "kern_array *";
    default: return NULL;
  }
  snprintf(buf, n, "%s_%s", b->id, builtin_type_code(t)); /* vec<T, N>, mat<T, M, N> */
  return buf;
}

/* The typedef of a vec<T, N> or mat<T, M, N> a parameter or field has, once each. */
static void put_vecn(Buf *out, const Build *b, const Type *t, const Type **seen, int *nseen) {
  char tb[NAME_BUF], eb[NAME_BUF];
  if (!t->generic || (t->kind != TY_VEC && t->kind != TY_MAT)) return;
  for (int i = 0; i < *nseen; i++)
    if (seen[i] == t) return;
  seen[(*nseen)++] = t;
  const char *name = c_type(b, t, tb, sizeof tb), *e = c_type(b, t->elem, eb, sizeof eb);
  if (t->kind == TY_VEC)
    buf_printf(out, "/* %s */\ntypedef struct { %s v[%d]; } %s;\n", type_name(t), e, t->n, name);
  else
    buf_printf(out, "/* %s */\ntypedef struct { %s m[%d][%d]; } %s;\n", type_name(t), e, t->n,
               t->dims[1], name);
  buf_printf(out, "KERN_AOT_SASSERT_(sizeof(%s) == %d, \"layout of kern %s\");\n\n", name, t->size,
             type_name(t));
}

static void put_vecns(Buf *out, const Build *b) {
  const Program *p = b->prog;
  int cap = 1, nseen = 0;
  for (int i = 0; i < p->nstructs; i++) cap += p->structs[i]->nfields;
  for (int i = 0; i < p->nkernels; i++) cap += p->kernels[i]->nparams;
  const Type **seen = calloc((size_t)cap, sizeof *seen);
  if (!seen) {
    out->oom = true;
    return;
  }
  for (int i = 0; i < p->nstructs; i++)
    for (int f = 0; f < p->structs[i]->nfields; f++)
      put_vecn(out, b, p->structs[i]->fields[f].ty, seen, &nseen);
  for (int i = 0; i < p->nkernels; i++)
    for (int k = 0; k < p->kernels[i]->nparams; k++)
      put_vecn(out, b, p->kernels[i]->params[k]->ty, seen, &nseen);
  free(seen);
}

static void put_struct(Buf *out, const Build *b, const Decl *s, bool *done, int index);

/* Structs before the structs that contain them. */
static void put_struct_deps(Buf *out, const Build *b, const Decl *s, bool *done) {
  for (int f = 0; f < s->nfields; f++) {
    const Type *t = s->fields[f].ty;
    if (t->kind != TY_STRUCT) continue;
    for (int i = 0; i < b->prog->nstructs; i++)
      if (b->prog->structs[i] == t->sdecl) put_struct(out, b, t->sdecl, done, i);
  }
}

static void put_struct(Buf *out, const Build *b, const Decl *s, bool *done, int index) {
  if (done[index]) return;
  done[index] = true;
  put_struct_deps(out, b, s, done);
  char tb[NAME_BUF], nb[NAME_BUF], sb[NAME_BUF];
  const char *sname = c_type(b, s->sty, sb, sizeof sb);
  buf_printf(out, "/* struct %s */\ntypedef struct %s {\n", s->name, sname);
  for (int f = 0; f < s->nfields; f++)
    buf_printf(out, "  %s %s;\n", c_type(b, s->fields[f].ty, tb, sizeof tb),
               c_name(s->fields[f].name, nb, sizeof nb));
  buf_printf(out, "} %s;\n", sname);
  buf_printf(
      out,
      "KERN_AOT_SASSERT_(sizeof(%s) == %d && KERN_AOT_ALIGNOF_(%s) == %d, \"layout of kern struct %s\");\n",
      sname, s->sty->size, sname, s->sty->align, s->name);
  for (int f = 0; f < s->nfields; f++)
    buf_printf(out, "KERN_AOT_SASSERT_(offsetof(%s, %s) == %d, \"offset of %s.%s\");\n", sname,
               c_name(s->fields[f].name, nb, sizeof nb), s->fields[f].offset, s->name,
               s->fields[f].name);
  buf_add(out, "\n", 1);
}

static void put_signature_comment(Buf *out, const Decl *k) {
  buf_printf(out, "/* kernel void %s(", k->name);
  for (int i = 0; i < k->nparams; i++)
    buf_printf(out, "%s%s %s", i ? ", " : "", type_name(k->params[i]->ty), k->params[i]->name);
  buf_printf(out, ") */\n");
}

static void put_launch(Buf *out, const Build *b, const Decl *k, int index) {
  char tb[NAME_BUF], nb[NAME_BUF];
  put_signature_comment(out, k);
  buf_printf(out, "static inline kern_status %s_%s_launch(kern_device *device, kern_dims dims",
             b->id, k->name);
  for (int i = 0; i < k->nparams; i++) {
    const char *t = c_type(b, k->params[i]->ty, tb, sizeof tb);
    buf_printf(out, ",%s%s%s%s", i % 3 == 0 ? "\n    " : " ", t, t[strlen(t) - 1] == '*' ? "" : " ",
               c_name(k->params[i]->name, nb, sizeof nb));
  }
  buf_add(out, ") {\n", 4);
  if (k->nparams == 0) {
    buf_printf(out,
               "  return kern_launch_embedded(&%s_embedded, %d, device, dims, 0, NULL);\n}\n\n",
               b->id, index);
    return;
  }
  buf_add(out, "  const void *const kern_args_[] = {", 36);
  for (int i = 0; i < k->nparams; i++)
    buf_printf(out, "%s&%s", i ? ", " : "", c_name(k->params[i]->name, nb, sizeof nb));
  buf_printf(
      out,
      "};\n  return kern_launch_embedded(&%s_embedded, %d, device, dims, %d, kern_args_);\n}\n\n",
      b->id, index, k->nparams);
}

static const char header_prologue[] = "#include \"kern.h\"\n\n"
                                      "#ifndef KERN_AOT_SASSERT_\n"
                                      "#ifdef __cplusplus\n"
                                      "#define KERN_AOT_SASSERT_(c, m) static_assert(c, m)\n"
                                      "#define KERN_AOT_ALIGNOF_(t) alignof(t)\n"
                                      "#else\n"
                                      "#define KERN_AOT_SASSERT_(c, m) _Static_assert(c, m)\n"
                                      "#define KERN_AOT_ALIGNOF_(t) _Alignof(t)\n"
                                      "#endif\n"
                                      "#endif\n\n"
                                      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";

static char *header_source(const Build *b) {
  Buf out = {0};
  const Program *p = b->prog;
  buf_printf(
      &out,
      "/* %s.h: generated by kernc build %s from %s; do not edit.\n"
      " * Launch functions for its kernels: link %s.o and libkern (-lkern -lpthread -ldl -lm).\n"
      " * Running them needs no C compiler, no NVRTC and no cache. */\n"
      "#ifndef KERN_AOT_%s_H\n#define KERN_AOT_%s_H\n\n",
      b->id, kern_version_string(), p->root->path, b->id, b->id, b->id);
  buf_add(&out, header_prologue, sizeof header_prologue - 1);
  bool *done = calloc((size_t)p->nstructs + 1, 1);
  if (!done) {
    buf_free(&out);
    return NULL;
  }
  put_vecns(&out, b);
  for (int i = 0; i < p->nstructs; i++) put_struct(&out, b, p->structs[i], done, i);
  free(done);
  buf_printf(
      &out,
      "/* The module table in %s.o. */\nextern const kern_embedded %s_embedded;\n"
      "/* The module, for the dynamic API (kern_module_kernel, kern_module_dtype ...): made on the\n"
      " * first call, owned by the library. */\nkern_module *%s_module(void);\n\n",
      b->id, b->id, b->id);
  for (int i = 0; i < p->nkernels; i++) put_launch(&out, b, p->kernels[i], i);
  buf_add(&out, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n", 36);
  if (out.oom) {
    buf_free(&out);
    return NULL;
  }
  return out.s;
}

/* ---- names in the header ------------------------------------------------------------------------ */

/* A name the header declares, and what it stands for (for the message). */
typedef struct HName {
  char *name, *what;
} HName;

static int hname_cmp(const void *a, const void *b) {
  return strcmp(((const HName *)a)->name, ((const HName *)b)->name);
}

/* Sorts the n names; "kernc: X and Y are both NAME in P.h ..." for the first
 * repeat, or EXIT_OK. Frees the names. */
static int distinct(const Build *b, HName *v, int n) {
  int rc = EXIT_OK;
  for (int i = 0; i < n && rc == EXIT_OK; i++)
    if (!v[i].name || !v[i].what) rc = cli_fail("out of memory");
  if (rc == EXIT_OK) qsort(v, (size_t)n, sizeof *v, hname_cmp);
  for (int i = 1; i < n && rc == EXIT_OK; i++)
    if (!strcmp(v[i - 1].name, v[i].name))
      rc = cli_fail("%s and %s are both named '%s' in %s.h (reserved words and names starting "
                    "with 'kern' get a '_' there): rename one",
                    v[i - 1].what, v[i].what, v[i].name, b->prefix);
  for (int i = 0; i < n; i++) free(v[i].name), free(v[i].what);
  free(v);
  return rc;
}

static void add_name(HName *v, int *n, char *name, char *what) {
  v[*n].name = name;
  v[*n].what = what;
  ++*n;
}

/* The header's own names must differ: the structs' typedefs, the launch
 * functions, PREFIX_module and PREFIX_embedded; within a struct its fields;
 * within a launch function its parameters. A user name escaped for C can
 * meet another one (struct 'x_launch' and kernel 'x'; fields 'class' and
 * 'class_'): kern reports it rather than write a header that cannot compile. */
static int header_names(const Build *b) {
  const Program *p = b->prog;
  char buf[NAME_BUF];
  HName *v = calloc((size_t)(p->nstructs + p->nkernels + 2), sizeof *v);
  int n = 0, rc;
  if (!v) return cli_fail("out of memory");
  add_name(v, &n, str_printf("%s_module", b->id), str_printf("the module function"));
  add_name(v, &n, str_printf("%s_embedded", b->id), str_printf("the module table"));
  for (int i = 0; i < p->nstructs; i++)
    add_name(v, &n, str_printf("%s", c_type(b, p->structs[i]->sty, buf, sizeof buf)),
             str_printf("struct '%s'", p->structs[i]->name));
  for (int i = 0; i < p->nkernels; i++)
    add_name(v, &n, str_printf("%s_%s_launch", b->id, p->kernels[i]->name),
             str_printf("the launch function of kernel '%s'", p->kernels[i]->name));
  if ((rc = distinct(b, v, n))) return rc;
  for (int i = 0; rc == EXIT_OK && i < p->nstructs + p->nkernels; i++) {
    const Decl *d = i < p->nstructs ? p->structs[i] : p->kernels[i - p->nstructs];
    int m = i < p->nstructs ? d->nfields : d->nparams;
    HName *w = calloc((size_t)m + 1, sizeof *w);
    if (!w) return cli_fail("out of memory");
    for (int j = 0, k = 0; j < m; j++) {
      const char *name = i < p->nstructs ? d->fields[j].name : d->params[j]->name;
      add_name(w, &k, str_printf("%s", c_name(name, buf, sizeof buf)),
               str_printf("%s '%s' of %s '%s'", i < p->nstructs ? "field" : "parameter", name,
                          i < p->nstructs ? "struct" : "kernel", d->name));
    }
    rc = distinct(b, w, m);
  }
  return rc;
}

/* ---- files and the compiler -------------------------------------------------------------------- */

static bool write_file(const char *path, const char *data) {
  return file_write(path, O_TRUNC, data, strlen(data));
}

static int make_temps(Build *b) {
  char *h = str_printf("%s.h", b->prefix), *o = str_printf("%s.o", b->prefix);
  int rc = EXIT_OK;
  if (!h || !o)
    rc = cli_fail("out of memory");
  else if (!(b->tmp_h = cli_temp_beside(h)))
    rc = cli_fail("cannot write '%s': %s", h, strerror(errno));
  else if (!(b->tmp_o = cli_temp_beside(o)))
    rc = cli_fail("cannot write '%s': %s", o, strerror(errno));
  else if (b->o->depfile && !(b->tmp_d = cli_temp_beside(b->o->depfile)))
    rc = cli_fail("cannot write '%s': %s", b->o->depfile, strerror(errno));
  free(h);
  free(o);
  if (rc) return rc;
  const char *env = getenv("TMPDIR"), *tmp = env && *env ? env : "/tmp";
  b->workdir = str_printf("%s/kernc-build-XXXXXX", tmp);
  if (!b->workdir) return cli_fail("out of memory");
  if (!mkdtemp(b->workdir)) {
    free(b->workdir);
    b->workdir = NULL;
    return cli_fail("cannot create a temporary directory in '%s'%s: %s", tmp,
                    env && *env ? " (TMPDIR)" : "", strerror(errno));
  }
  cli_cleanup_add(b->workdir, true);
  b->c_path = str_printf("%s/%s.c", b->workdir, b->id);
  cli_cleanup_add(b->c_path, false);
  return b->c_path ? EXIT_OK : cli_fail("out of memory");
}

static void remove_temps(Build *b) {
  cli_temp_remove(&b->tmp_h, false);
  cli_temp_remove(&b->tmp_o, false);
  cli_temp_remove(&b->tmp_d, false);
  cli_temp_remove(&b->c_path, false);
  cli_temp_remove(&b->workdir, true);
}

/* The user's --cpu-flags split at blanks, appended to argv (room checked by
 * the caller). Returns the new count. */
static int add_user_flags(const Options *o, char *copy, const char **argv, int n) {
  for (int i = 0; i < o->ncpu_flags; i++) {
    strcpy(copy, o->cpu_flags[i]);
    char *save = NULL;
    for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
      argv[n++] = tok;
    copy += strlen(o->cpu_flags[i]) + 1;
  }
  return n;
}

/* After the compiler failed on the generated code: does it compile a trivial
 * file with the same command line? Then the generated code is at fault, and
 * that is kern's bug (the checker accepted the source); else the compiler or
 * its flags are (--cc, --cpu-flags, KERN_CC): the user's to fix. */
static bool compiler_works(const Build *b, const TcCompile *job) {
  char *c = str_printf("%s/probe.c", b->workdir), *o = str_printf("%s/probe.o", b->workdir);
  cli_cleanup_add(c, false);
  cli_cleanup_add(o, false);
  bool ok = c && o && file_write(c, O_CREAT | O_EXCL, "int kern_probe_;\n", 17);
  if (ok) {
    Buf log = {0}; /* the probe's messages are not the user's business */
    const char *inputs[] = {"-c", c, "-o", o, NULL};
    TcCompile probe = *job;
    probe.inputs = inputs;
    probe.log = &log;
    ProcResult r;
    ok = tc_cc_run(&probe, &r);
    buf_free(&log);
  }
  cli_temp_remove(&c, false);
  cli_temp_remove(&o, false);
  return ok;
}

/* What a compile that exited 0 must have written: an object file (ELF, or
 * LLVM bitcode from clang's -flto), not nothing (/bin/true, -fsyntax-only). */
static int check_object(const Build *b, const char *name) {
  int fd = open(b->tmp_o, O_RDONLY | O_CLOEXEC);
  unsigned char h[18] = {0};
  ssize_t n = fd >= 0 ? read(fd, h, sizeof h) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0)
    return cli_fail("the C compiler '%s' exited 0 but wrote nothing to %s.o: do --cc and "
                    "--cpu-flags make an object file?",
                    name, b->prefix);
  bool elf = n == 18 && !memcmp(h,
                                "\x7f"
                                "ELF",
                                4);
  int type = !elf ? 0 : h[5] == 2 ? h[16] << 8 | h[17] : h[17] << 8 | h[16]; /* EI_DATA */
  bool bitcode = n >= 4 && (!memcmp(h, "BC\xc0\xde", 4) || !memcmp(h, "\xde\xc0\x17\x0b", 4));
  if (type == 1 /* ET_REL */ || bitcode) return EXIT_OK;
  return cli_fail("the C compiler '%s' exited 0 but %s.o is not an object file (ELF relocatable "
                  "or LLVM bitcode): do --cc and --cpu-flags make one?",
                  name, b->prefix);
}

/* How the compile ended, as kernc's message and exit status; log is what the
 * compiler printed. */
static int compile_result(Build *b, const TcCompile *job, const ProcResult *r, const char *name) {
  if (!r->started)
    return cli_fail("cannot run the C compiler '%s': %s (set --cc or KERN_CC)", name,
                    strerror(r->err));
  if (r->timed_out)
    return cli_fail("the C compiler '%s' did not finish building %s.o within %g s and was "
                    "stopped (--compile-timeout or KERN_COMPILE_TIMEOUT set the limit in seconds, "
                    "0 for none)",
                    name, b->prefix, b->timeout_ms / 1000.0);
  int status = r->signal ? 128 + r->signal : r->status;
  if (status && compiler_works(b, job)) {
    fprintf(stderr,
            "kernc: internal error: the C compiler '%s' failed (exit status %d) on the code "
            "kern generated for %s, though it compiles other C code with the same flags; %s\n",
            name, status, b->prog->root->path, ERR_BUG_REPORT);
    return EXIT_INTERNAL;
  }
  if (status)
    return cli_fail("the C compiler '%s' failed (exit status %d) building %s.o", name, status,
                    b->prefix);
  return check_object(b, name);
}

/* The compiler by the toolchain's rule (--cc, else $KERN_CC, else clang,
 * else cc) with kern's flags for a portable object (the generated code's
 * meaning depends on some, e.g. -fwrapv; no -march=native), hidden symbols,
 * then the user's flags, within the time limit. Its messages are passed on to
 * stderr once it exits (what it leaves running in the background is not
 * waited for). */
static int compile_object(Build *b) {
  const Options *o = b->o;
  const char *name, *asked = o->cc ? o->cc : getenv("KERN_CC");
  char *cc = tc_cc_find(asked, &name);
  if (!cc)
    return cli_fail("cannot run the C compiler '%s': %s (set --cc or KERN_CC)", name,
                    strerror(errno));
  size_t room = 8, chars = 1;
  for (int i = 0; i < o->ncpu_flags; i++)
    room += strlen(o->cpu_flags[i]) / 2 + 1, chars += strlen(o->cpu_flags[i]) + 1;
  const char **flags = calloc(room, sizeof *flags);
  char *copy = calloc(chars, 1);
  int rc = EXIT_OK;
  if (!flags || !copy) rc = cli_fail("out of memory");
  if (rc == EXIT_OK) {
    int n = 0;
    flags[n++] = "-fvisibility=hidden";
    for (const char *const *f = o->fast_math ? tc_fast_math_flags() : NULL; f && *f; f++)
      flags[n++] = *f;
    add_user_flags(o, copy, flags, n);
    const char *inputs[] = {"-c", b->c_path, "-o", b->tmp_o, NULL};
    Buf log = {0};
    TcCompile job = {.cc = cc,
                     .output = TC_OBJECT_PORTABLE,
                     .debug = o->debug,
                     .flags = flags,
                     .inputs = inputs,
                     .log = &log,
                     /* always a limit: the compiler then has a process group of its
                      * own, which the signal handler stops (output.c) */
                     .timeout_ms = b->timeout_ms ? b->timeout_ms : INT_MAX,
                     .group = &cli_child_group};
    ProcResult r;
    tc_cc_run(&job, &r);
    if (log.s) fputs(log.s, stderr);
    buf_free(&log);
    rc = compile_result(b, &job, &r, name);
  }
  free(cc);
  free(flags);
  free(copy);
  return rc;
}

static int write_depfile(const Build *b) {
  if (!b->tmp_d) return EXIT_OK;
  Buf out = {0};
  char *targets = str_printf("%s.o %s.h", b->prefix, b->prefix);
  if (targets) cli_dep_rule(&out, targets, b->prog);
  bool ok = targets && !out.oom && write_file(b->tmp_d, out.s);
  free(targets);
  buf_free(&out);
  return ok ? EXIT_OK : cli_fail("cannot write '%s': %s", b->o->depfile, strerror(errno));
}

/* The renames make the outputs appear whole; the header after the object, as
 * it is what a build looks at first. */
static int commit(Build *b) {
  char *h = str_printf("%s.h", b->prefix), *o = str_printf("%s.o", b->prefix);
  int rc = h && o ? EXIT_OK : cli_fail("out of memory");
  if (rc == EXIT_OK) rc = cli_commit_temp(&b->tmp_o, o);
  if (rc == EXIT_OK && (rc = cli_commit_temp(&b->tmp_h, h))) unlink(o);
  if (rc == EXIT_OK) rc = cli_commit_temp(&b->tmp_d, b->o->depfile);
  free(h);
  free(o);
  return rc;
}

/* ---- the command ----------------------------------------------------------------------------------- */

static int write_sources(Build *b) {
  char *c = object_source(b), *h = c ? header_source(b) : NULL;
  int rc = EXIT_OK;
  if (!c || !h)
    rc = cli_fail("out of memory");
  else if (!write_file(b->tmp_h, h))
    rc = cli_fail("cannot write '%s.h': %s", b->prefix, strerror(errno));
  else if (!file_write(b->c_path, O_CREAT | O_EXCL, c, strlen(c)))
    rc = cli_fail("cannot write '%s': %s", b->c_path, strerror(errno));
  free(c);
  free(h);
  return rc;
}

static int build_outputs(Build *b) {
  int rc = header_names(b);
  if (rc == EXIT_OK) rc = make_temps(b);
  if (rc == EXIT_OK) rc = gpu_images(b);
  if (rc == EXIT_OK) rc = write_sources(b);
  if (rc == EXIT_OK) rc = compile_object(b);
  if (rc == EXIT_OK) rc = write_depfile(b);
  if (rc == EXIT_OK) rc = commit(b);
  remove_temps(b);
  return rc;
}

static void free_build(Build *b) {
  for (int i = 0; i < b->nimages; i++) free(b->images[i].data);
  free(b->files);
  free(b->prefix);
  free(b->id);
  free(b->tmp_h);
  free(b->tmp_o);
  free(b->tmp_d);
  free(b->workdir);
  free(b->c_path);
}

int cli_build(const Options *o) {
  if (o->nfiles != 1) return cli_bad_usage("%s", "build needs exactly one FILE.kern");
  if (!o->output || !*o->output) return cli_bad_usage("%s", "build needs -o PREFIX");
  Build b = {.o = o};
  int rc = parse_archs(&b, o->arch);
  if (rc) return rc;
  b.timeout_ms = tc_cc_timeout_ms(o->compile_timeout);
  if (b.timeout_ms < 0)
    return cli_bad_usage("bad --compile-timeout '%s' (seconds, e.g. 600 or 2.5; 0 for no limit)",
                         o->compile_timeout);
  if (!o->compile_timeout) b.timeout_ms = tc_cc_timeout_ms(getenv("KERN_COMPILE_TIMEOUT"));
  if (b.timeout_ms < 0) b.timeout_ms = TC_CC_TIMEOUT_DEFAULT_MS;
  cli_cleanup_on_signals();
  b.prefix = cli_output_prefix(o->output);
  b.id = b.prefix ? cli_ident(o->name, b.prefix) : NULL;
  if (!b.id) return cli_fail("out of memory");
  if (!b.id[0] || (o->name && strcmp(b.id, o->name) != 0) || strlen(b.id) > AST_MAX_IDENT) {
    free_build(&b);
    return cli_bad_usage("--name or the base name of -o must be a C identifier of at most 1024 "
                         "bytes: '%.1100s'",
                         o->name ? o->name : o->output);
  }
  FrontResult r = front_compile(o->files[0], NULL, 0);
  if (!r.prog)
    rc = EXIT_INTERNAL;
  else
    rc = cli_report(r.prog, o->color);
  if (rc == EXIT_OK) {
    b.prog = r.prog;
    collect_files(&b);
    rc = b.files ? build_outputs(&b) : cli_fail("out of memory");
  }
  front_free(r.prog);
  free_build(&b);
  return rc;
}
