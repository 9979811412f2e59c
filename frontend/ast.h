/* ast.h: the data every compiler pass shares.
 *
 * Tokens (lexer.re), syntax trees (parser.c), types and the typed tree (check.c)
 * all live in one arena per compilation (arena.c), freed in one call. Nothing here
 * is public API: the runtime and kernc reach the compiler through compile.h.
 *
 * Pipeline: lex -> parse -> check -> emit (codegen/). After check_program() every
 * expression node has `ty` set, untyped constants are folded to typed ND_CONST
 * nodes, implicit conversions are explicit ND_CONV nodes, identifiers point at
 * their declaration and calls at their target. Codegen reads only that typed tree.
 */
#ifndef KERN_AST_H
#define KERN_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "token.h"

/* ---- tokens (kinds and spellings: support/token.h) ------------------------ */

/* Literal suffixes (TK_INT / TK_FLOAT). SUF_NONE means an untyped constant. */
typedef enum { SUF_NONE, SUF_U, SUF_L, SUF_UL, SUF_F, SUF_D } LitSuffix;

typedef struct Type Type;

typedef struct Token {
  TokKind kind;
  SrcLoc loc;       /* file, line, col, byte offset, length in bytes */
  const char *text; /* points into the source buffer (loc.len bytes) */
  uint64_t ival;
  double fval;
  LitSuffix suffix;
  const char *str; /* TK_STRING: decoded bytes, NUL-terminated, arena-owned */
  size_t str_len;
  Type *ty; /* TK_TYPENAME: the builtin type */
} Token;

typedef struct {
  Token *toks; /* toks[n-1].kind == TK_EOF always */
  int n;
} TokenList;

/* Limits every pass relies on. Identifiers are at most AST_MAX_IDENT bytes
 * (the lexer refuses longer ones), so generated names that add a prefix fit
 * in AST_MAX_IDENT + a few bytes. An expression or statement tree deeper than
 * AST_MAX_DEPTH is refused (the checker counts every level; the parser stops a
 * long operator chain there, before building more), so passes may recurse on
 * expressions. */
enum { AST_MAX_IDENT = 1024, AST_MAX_DEPTH = 2000 };

/* ---- types --------------------------------------------------------------- */

typedef enum {
  TY_VOID,
  TY_BOOL,
  TY_I8,
  TY_I16,
  TY_I32,
  TY_I64,
  TY_U8,
  TY_U16,
  TY_U32,
  TY_U64,
  TY_F16,
  TY_BF16, /* bfloat16: float32's top 16 bits */
  TY_F32,
  TY_F64,
  TY_VEC,           /* elem x n: vec2..4, dvec, ivec; spatial_vector: f32 x 6; vec<T, N>: any
                     * numeric elem, n in 1..16 (generic set unless a short name exists) */
  TY_MAT,           /* f32, n x n, row-major, n in 2..4; spatial_matrix: 6 x 6; mat<T, M, N>:
                     * any numeric elem, M x N (generic unless a short name exists) */
  TY_QUAT,          /* f32 x,y,z,w */
  TY_TRANSFORM,     /* f32: p (vec3) then q (quat), n = 7 components */
  TY_STRUCT,        /* sdecl */
  TY_ARRAY,         /* elem, ndim 1..4; parameters only */
  TY_PTR,           /* elem: the operand type of &x (atomics, rand state) */
  TY_TILE,          /* elem (a scalar) x dims[0] (x dims[1]), ndim 1..2: check_tile.c */
  TY_FIXED,         /* a local array: elem x dims[0] x ... x dims[ndim-1], ndim 1..4, row-major;
                     * a local variable, or a function parameter referring to the caller's */
  TY_UNTYPED_INT,   /* an unsuffixed integer constant expression */
  TY_UNTYPED_FLOAT, /* an unsuffixed float constant expression */
  TY_STRING,        /* printf's format */
  TY_ERROR          /* an error was already reported; suppresses cascades */
} TypeKind;

typedef struct Decl Decl;

struct Type {
  TypeKind kind;
  int size, align;  /* bytes; the host-visible layout of the spec */
  Type *elem;       /* VEC, MAT, ARRAY, PTR: element type; QUAT: f16, bf16, f32 or f64;
                     * TRANSFORM: f32 */
  int n;            /* VEC: components; MAT: rows (= cols); QUAT 4, TRANSFORM 7 */
  int ndim;         /* ARRAY, FIXED; TILE: 1 or 2 */
  int dims[4];      /* TILE: the shape (dims[1] = 1 for one dimension); FIXED: the extents */
  Decl *sdecl;      /* STRUCT */
  const char *name; /* "float32", "vec3", "float[,]", the struct's name ... */
  bool generic;     /* VEC: a vec<T, N> with no short name (type_vecn); MAT: mat<T, M, N> likewise
                     * (type_matn: n = dims[0] = M rows, dims[1] = N columns) */
};

/* Builtin singletons (types.c); arrays and pointers are interned per arena. */
extern Type ty_void, ty_bool, ty_i8, ty_i16, ty_i32, ty_i64, ty_u8, ty_u16, ty_u32, ty_u64, ty_f16,
    ty_bf16, ty_f32, ty_f64, ty_vec2, ty_vec3, ty_vec4, ty_dvec2, ty_dvec3, ty_dvec4, ty_ivec2,
    ty_ivec3, ty_ivec4, ty_mat22, ty_mat33, ty_mat44, ty_quat, ty_quath, ty_quatbf, ty_quatd,
    ty_transform, ty_svec, ty_smat, ty_untyped_int, ty_untyped_float, ty_string, ty_error;

Type *type_builtin_by_name(const char *name, size_t len); /* NULL if not a type name */
Type *type_array(Arena *, Type *elem, int ndim);
Type *type_ptr(Arena *, Type *elem);
Type *type_vec(Type *elem, int n); /* NULL when no such vector type; f32 x 6: ty_svec */
/* vec<elem, n>: elem a numeric scalar, n in 1..VECN_MAX; the short-named
 * singleton where there is one (vec<float32, 3> is ty_vec3), else a process-wide
 * singleton of its own (generic set), so pointers compare; NULL otherwise. */
enum { VECN_MAX = 16, VECN_ELEMS = TY_F64 - TY_I8 + 1, VECN_COUNT = VECN_ELEMS * VECN_MAX };
Type *type_vecn(const Type *elem, int n);
int type_vecn_index(const Type *); /* a generic vector's number in 0..VECN_COUNT-1, else -1 */
Type *type_vecn_at(int index);     /* the inverse; NULL when out of range */
/* mat<elem, rows, cols> (rows, cols in 1..VECN_MAX), row-major: ty_mat22..44 for
 * float32 2x2..4x4, else a process-wide singleton (generic set); NULL otherwise. */
enum { MATN_COUNT = VECN_ELEMS * VECN_MAX * VECN_MAX };
Type *type_matn(const Type *elem, int rows, int cols);
int type_matn_index(const Type *); /* a generic matrix's number in 0..MATN_COUNT-1, else -1 */
Type *type_matn_at(int index);
/* quat<elem>: ty_quat (float32), ty_quath (float16), ty_quatbf (bfloat16) or
 * ty_quatd (float64); NULL for any other elem. */
Type *type_quatn(const Type *elem);
int type_mat_cols(const Type *);  /* a matrix's columns (n for the square ones) */
Type *type_mat_row(const Type *); /* the vector type of a matrix's row */
/* elem[dims[0], ...] (ndim 1..4, each extent >= 1, at most 2^30 bytes in all):
 * per arena, compare with type_equal; NULL when out of memory */
Type *type_fixed(Arena *, Type *elem, int ndim, const int *dims);
int64_t type_fixed_count(const Type *); /* a local array's elements; 0 for any other type */
/* tile<elem, dims[0](, dims[1])>: interned per arena, compare with type_equal */
Type *type_tile(Arena *, Type *elem, int ndim, const int *dims);
int64_t type_tile_count(const Type *); /* a tile's elements; 0 for any other type */
bool type_is_int(const Type *);        /* signed or unsigned integer scalar (not bool) */
bool type_is_signed(const Type *);
bool type_is_float(const Type *); /* f16, bf16, f32, f64 */
/* float16 or bfloat16: kept as bits, computed in float32, rounded back in software */
bool type_is_half(const Type *);
bool type_is_scalar(const Type *);  /* bool, ints, floats */
bool type_is_numeric(const Type *); /* ints and floats */
bool type_equal(const Type *, const Type *);
const char *type_name(const Type *);
/* The bytes a parameter of type t takes in a kernel's argument block (and on
 * a thread's stack): an array is its 72-byte descriptor (kern_abi.h kn_array). */
int type_arg_size(const Type *, int *align);

/* ---- syntax tree --------------------------------------------------------- */

/* A type as written: a builtin or struct name, and `[,,]` for arrays. */
typedef struct TypeExpr {
  SrcLoc loc;
  Type *builtin;    /* the builtin named, or NULL */
  const char *name; /* a struct name (builtin == NULL), or NULL for `auto` */
  int ndim;         /* 0, or 1..4 for an array type */
  bool is_auto;
  int tile_rank;              /* tile<builtin, shape...>: 1 or 2; 0 for any other type */
  struct Node *tile_shape[2]; /* the shape's constant expressions */
  int nfixed;                 /* a local array `T name[e, ...]`: 1..4 extents; 0 otherwise */
  struct Node *fixed[4];      /* their constant expressions */
  /* vec<T, N>, mat<T, M, N> or quat<T> whose element is a name, not a type name:
   * a generic function's type variable, resolved when its instance binds it
   * (builtin and name stay NULL until then). */
  const char *vecn_elem;
  char vecn_kind;   /* 'v', 'm' or 'q' */
  int vecn_rows;    /* vec: N; mat: M */
  int vecn_cols;    /* mat: N; 1 otherwise */
  Type *vecn_bound; /* what vecn_elem stands for in an instance, when that makes no vector */
} TypeExpr;

typedef enum {
  /* expressions */
  ND_INT,       /* ival; literal or folded constant */
  ND_FLOAT,     /* fval */
  ND_BOOL,      /* ival 0/1 */
  ND_STRING,    /* str, str_len */
  ND_IDENT,     /* name -> (after check) var, or cdecl for a module const */
  ND_UNARY,     /* op in {TK_MINUS, TK_PLUS, TK_BANG, TK_TILDE}, lhs */
  ND_ADDR,      /* &lhs: an atomic's or rand's first argument; after check, also every
              * argument of a reference parameter (the argument as written is lhs) */
  ND_BINARY,    /* op, lhs, rhs (arithmetic, bitwise, comparison, logical) */
  ND_COND,      /* cond ? then : els */
  ND_CALL,      /* callee name + args; after check: call_kind says what it is */
  ND_CAST,      /* (T)x or T(x): texpr, lhs */
  ND_INDEX,     /* lhs[args...] (nargs indices) */
  ND_MEMBER,    /* lhs.name; after check: member = field or component index */
  ND_CONV,      /* inserted by check: implicit conversion of lhs to ty */
  ND_INIT_LIST, /* `{ args... }`, a local array's initializer (nargs values, the rest zero);
                 * a declaration without one gets an empty list */
  /* statements (assignments are statements, never expressions) */
  ND_ASSIGN,    /* lhs op rhs, op = TK_ASSIGN or a compound TK_*EQ */
  ND_INCDEC,    /* lhs op, op = TK_INC or TK_DEC (pre and post are the same statement) */
  ND_VARDECL,   /* var (texpr, init in var) */
  ND_EXPR_STMT, /* lhs */
  ND_BLOCK,     /* body: list via next */
  ND_IF,        /* cond, then, els */
  ND_FOR,       /* init (stmt or NULL), cond (or NULL), inc (stmt or NULL), body */
  ND_WHILE,     /* cond, body */
  ND_DO,        /* body, cond */
  ND_BREAK,
  ND_CONTINUE,
  ND_RETURN, /* lhs or NULL */
  ND_EMPTY
} NodeKind;

/* What a checked ND_CALL is. */
typedef enum {
  CALL_UNRESOLVED,
  CALL_FUNC,    /* fn: a user function overload */
  CALL_BUILTIN, /* builtin: index into the builtin table (builtins.c) */
  CALL_CTOR,    /* constructor of ty (vector, matrix, quat, struct) from args */
  CALL_SPECIAL, /* special: tid, dim, len, shape, size, printf, assert, atomics, rand */
  CALL_TILE     /* tile_op: a tile operation (check_tile.c) */
} CallKind;

/* The tile operations (CALL_TILE), named tile_<...> in kern. */
typedef enum {
  TOP_NONE,
  TOP_ZEROS,
  TOP_ONES,
  TOP_FULL,
  TOP_ARANGE,
  TOP_LOAD,
  TOP_STORE,
  TOP_ATOMIC_ADD,
  TOP_MAP,
  TOP_WHERE,
  TOP_SUM,
  TOP_MIN,
  TOP_MAX,
  TOP_ARGMIN,
  TOP_ARGMAX,
  TOP_REDUCE,
  TOP_SCAN_INC,
  TOP_SCAN_EXC,
  TOP_TRANSPOSE,
  TOP_BROADCAST,
  TOP_RESHAPE,
  TOP_SORT,
  TOP_MATMUL,     /* EXACT: an fma chain over k ascending per element */
  TOP_MATMUL_FAST /* FAST: inputs rounded (float16, TF32), tensor cores on GPUs */
} TileOp;

typedef enum {
  SP_NONE,
  SP_TID,
  SP_DIM,
  SP_LEN,
  SP_SHAPE,
  SP_SIZE,
  SP_PRINTF,
  SP_ASSERT,
  SP_ATOMIC_ADD,
  SP_ATOMIC_SUB,
  SP_ATOMIC_MIN,
  SP_ATOMIC_MAX,
  SP_ATOMIC_EXCH,
  SP_ATOMIC_AND,
  SP_ATOMIC_OR,
  SP_ATOMIC_XOR,
  SP_ATOMIC_CAS,
  SP_ATOMIC_LOAD, /* a read, after the atomics that write (ranges test ADD..CAS) */
  SP_RAND_INIT,
  SP_RANDF,
  SP_RANDI,
  SP_RANDN,
  SP_IDENTITY,
  SP_LOWER_BOUND,
  SP_RAND_FN,    /* a random helper taking the state: kn_rand_<name>_<nargs> */
  SP_FLOAT_BITS, /* inf, nan: the float32 whose bits are ival */
  /* compile-time queries of types (check_generic.c): folded to constants,
   * never left in a checked tree */
  SP_SIZEOF,
  SP_IS_SAME,
  SP_IS_FLOAT,
  SP_IS_INT
} SpecialKind;

typedef struct Var Var;
typedef struct Node Node;

struct Node {
  NodeKind kind;
  SrcLoc loc; /* the node's whole source range (loc.len bytes from loc.offset) */
  Type *ty;   /* expressions, after check */
  Node *next; /* sibling in a list (block statements, call arguments) */

  int op; /* TokKind of the operator */
  Node *lhs, *rhs;
  Node *cond, *then, *els, *init, *inc, *body;
  Node *args; /* call arguments / indices, linked by next */
  int nargs;

  const char *name; /* ND_IDENT, ND_CALL callee, ND_MEMBER field */
  SrcLoc name_loc;  /* where that name is written */
  TypeExpr *texpr;  /* ND_CAST target */

  uint64_t ival; /* ND_INT (two's complement bits of the value), ND_BOOL; after check, an
                  * assert with a message: 1 + its number in Program.assert_msgs */
  double fval;   /* ND_FLOAT */
  LitSuffix suffix;
  const char *str; /* ND_STRING */
  size_t str_len;

  /* filled by check */
  Var *var;    /* ND_IDENT naming a local or parameter; ND_VARDECL's variable */
  Decl *cdecl; /* ND_IDENT naming a module const */
  CallKind call_kind;
  Decl *fn;            /* CALL_FUNC */
  int builtin;         /* CALL_BUILTIN */
  SpecialKind special; /* CALL_SPECIAL */
  int member;          /* ND_MEMBER: field index (struct) or component 0..3 */
  bool is_const;       /* expression is a compile-time constant (folded) */
  /* tile operations: tile_op<targ, tshape...>(args); after check (CALL_TILE) */
  TypeExpr *targ; /* the element type written among the <...>, or NULL */
  Node *tshape;   /* the shape written among the <...>, linked by next */
  int ntshape;
  TileOp tile_op;
  int axis;     /* reductions and scans: the axis, or -1 for the whole tile */
  Decl *tfn;    /* tile_map, tile_reduce, tile_scan_*: the user function, or NULL */
  int tbuiltin; /* ... or the builtin (min, max) index, or -1 */
  /* generics and compile-time evaluation (check_generic.c) */
  bool is_static;   /* ND_IF, ND_FOR: `static if`, `static for` (gone after check) */
  TypeExpr **targs; /* ND_CALL: the types of an explicit instantiation f<T, ...>(...); an
                     * ND_IDENT written as a type (sizeof(float)): targs[0] */
  int ntargs;
};

/* A local variable or parameter. */
struct Var {
  const char *name;
  SrcLoc loc;
  TypeExpr *texpr; /* as written (auto: is_auto) */
  Type *ty;        /* after check */
  Node *init;      /* locals: initializer */
  bool is_const;   /* `const` local or parameter declared const */
  bool is_param;
  bool is_ref;    /* a reference parameter, `T &name`: the caller's lvalue (after check,
                   * each argument for it is an ND_ADDR of TY_PTR to T) */
  SrcLoc ref_loc; /* where its `&` is written */
  int id;         /* unique within its function (codegen names) */
  /* array parameters and local arrays, after check: */
  int array_id; /* the program-wide number a debug record names it by */
  bool atomics; /* an atomic applies to it, here or in a function it is passed to */
};

typedef enum { DECL_IMPORT, DECL_CONST, DECL_STRUCT, DECL_FUNC, DECL_KERNEL, DECL_ENUM } DeclKind;

typedef struct Field {
  const char *name;
  SrcLoc loc;
  TypeExpr *texpr;
  Type *ty;   /* after check */
  int offset; /* after check: C layout */
} Field;

struct Decl {
  DeclKind kind;
  SrcLoc loc;       /* the whole declaration */
  const char *name; /* NULL for imports */
  SrcLoc name_loc;
  Decl *next; /* next declaration of the module, in source order */

  const char *path;        /* DECL_IMPORT: the decoded string */
  size_t path_len;         /* DECL_IMPORT: its length (an embedded NUL makes strlen shorter) */
  struct Module *imported; /* DECL_IMPORT, after resolution */

  TypeExpr *texpr; /* DECL_CONST: type; DECL_FUNC: return type (void for kernels) */
  Node *init;      /* DECL_CONST: value (folded to a constant node by check) */

  /* An enum is a DECL_ENUM (its name, the type int32) followed in the module
   * by one DECL_CONST of type int32 per enumerator, whose init the parser
   * writes as `PREVIOUS + 1` (or 0) when the source gives no value. */
  Decl *of_enum; /* DECL_CONST: the enum it is an enumerator of, or NULL */
  int nmembers;  /* DECL_ENUM: its enumerators */

  Field *fields; /* DECL_STRUCT */
  int nfields;
  Type *sty; /* DECL_STRUCT: its type, after check */

  Var **params; /* DECL_FUNC, DECL_KERNEL */
  int nparams;
  Node *body;   /* ND_BLOCK */
  Type *ret;    /* after check */
  int overload; /* after check: index among same-named functions (codegen names) */
  int index;    /* after check: its place in Program.structs, .funcs or .kernels */
  int nvars;    /* after check: locals + params, for Var.id */
  bool used;    /* after check: reachable from a kernel (codegen may skip the rest) */
  /* after check (check_tile.c): */
  bool tiled;           /* uses a tile operation, here or in a function it calls */
  bool effects;         /* has a scalar side effect, here or in a non-tiled callee */
  int64_t tile_temps;   /* bytes of all the tile temporaries and scratch of its own code */
  int64_t tile_vars;    /* bytes of its tile locals and parameter copies */
  int64_t tile_storage; /* its block: tile_vars, then the most temporaries live at once */
  int64_t tile_total;   /* kernels: tile_storage of it and every function it reaches */
  /* generic functions, `T f<T, U>(...)`: the type variables; such a Decl is
   * never checked itself, only its instances (check_generic.c) */
  const char **tparams;
  SrcLoc *tparam_locs;
  int ntparams;
  /* an instance (a DECL_FUNC of Program.funcs): its generic, the types bound
   * to its type variables, "f<float32>" for messages, and where it was first
   * requested (the call, and the instance that made that call, or NULL) */
  Decl *generic;
  Type **tbind;
  const char *inst_name;
  SrcLoc inst_loc;
  Decl *inst_parent;
  int inst_depth;
};

/* One parsed file. */
typedef struct Module {
  const char *path; /* as given (for diagnostics) */
  const char *src;  /* NUL-terminated source, arena-owned */
  size_t src_len;
  Decl *decls;         /* in source order */
  struct Module *next; /* in the Program's list, imports first */
} Module;

/* An array parameter or a local array by its program-wide number (Var.array_id). */
typedef struct ArrayParam {
  const Var *param;  /* a parameter, or a local array (is_param false) */
  const Decl *owner; /* the function or kernel it belongs to */
} ArrayParam;

/* A compilation: the root module and everything it imports. */
typedef struct Program {
  Arena *arena;
  Diags *diags;
  Module *modules; /* every file once, dependencies before dependents */
  Module *root;
  /* after check: every declaration of every module, by kind, in a stable order */
  Decl **structs;
  int nstructs;
  Decl **consts;
  int nconsts;
  Decl **funcs;
  int nfuncs; /* user functions (not kernels) */
  Decl **kernels;
  int nkernels;
  /* after check: every array parameter and local array, functions'
   * (Program.funcs order) then kernels', numbered in that order: what debug
   * error records name */
  ArrayParam *array_params;
  int narray_params;
  /* after check: the messages of assert(cond, "message"), numbered in the
   * order of Program.funcs then kernels; a failure record names one */
  const char **assert_msgs;
  int nassert_msgs;
} Program;

/* ---- passes ---------------------------------------------------------------- */

/* lexer.re: src must be NUL-terminated (an embedded NUL is an error token).
 * lex_source lexes the whole file; lex_open / lex_token / lex_close lex on
 * demand: lex_token(lx, i) is the i-th token (the TK_EOF token past the end),
 * valid until lex_close. lex_open returns NULL when out of memory. */
TokenList lex_source(Arena *, Diags *, const char *path, const char *src, size_t len);
typedef struct Lexer Lexer;
Lexer *lex_open(Arena *, Diags *, const char *path, const char *src, size_t len);
Token *lex_token(Lexer *, int i);
void lex_close(Lexer *);

/* parser.c: builds one Module's AST; reports syntax errors and recovers. */
Module *parse_module(Arena *, Diags *, const char *path, const char *src, size_t len);

/* check.c: resolves names, types and overloads across all the Program's
 * modules (imports are already parsed and linked by front.c); folds constants;
 * fills the Program's decl tables. Returns false when any error was reported. */
bool check_program(Program *);

/* limits.c: after check_program, the sizes a checked program must also fit:
 * a value on a thread's stack (64 KiB), a kernel's values along its calls
 * (512 KiB), a kernel's argument block (4000 bytes). False when any error. */
bool check_limits(Program *);

/* check_tile_rules.c: which tile values get storage of their own, for the
 * emitter and the limits. A tile value materializes when it is written into
 * storage of its own (loads, shape operations, scans, axis reductions, calls
 * of functions returning tiles); the rest (operators, makers, tile_map,
 * tile_where, conversions, math) are computed element by element where they
 * are used. tile_temp_bytes: the bytes of tile storage the code of n itself
 * needs (its result when it materializes, a copy of each tile operand it
 * reads whole that is not storage, its scratch). */
bool tile_materializes(const Node *n);
/* Every piece of tile storage takes whole 16-byte units, so each is aligned
 * for every element type in a block of (GPU shared) memory. */
int64_t tile_slot(int64_t bytes);
bool tile_is_storage(const Node *n);              /* a tile variable or a materializing value */
int64_t tile_temp_bytes(const Node *n, bool gpu); /* gpu: in a GPU block, else on the CPU */
/* The elements of scratch a GPU block's tree takes for a whole reduction of
 * n elements (the CPU's is a local array of n). */
int64_t tile_reduce_scratch(int64_t n);
/* The 1-D tile_load a whole tile_sum, tile_min or tile_max n reads, when a
 * GPU reads its leaves straight from the array (elements of 4 or 8 bytes,
 * loaded as they are stored): it then takes no tile storage on a GPU. NULL
 * for any other n. */
const Node *tile_fused_load(const Node *n);
/* The value of statement stmt that is written straight into its tile variable
 * (`tile<...> x = v;` or `x = v;` with v a tile_load, a scan, or a
 * tile_matmul whose a and b are not x), so it needs no storage of its own;
 * NULL for any other. */
const Node *tile_direct(const Node *stmt);
/* "t: tile<float32, 256> (1024 bytes), ...; and its temporaries ...": a
 * kernel's tiles for messages (malloc'd; NULL when out of memory). */
char *tile_usage_text(const Decl *k);

/* walk.c: calls visit on n and on every node below it (statements,
 * expressions, a local's initializer; not n's siblings), without recursion
 * and in no particular order, until a visit returns true. Returns 1 when one
 * did, 0 when none did, -1 when out of memory. */
int ast_walk(const Node *n, bool (*visit)(const Node *, void *), void *ud);
/* The calls of a checked Program: callees[i] (ncallees[i] of them, repeats
 * kept) are the user functions that Program.funcs[i] calls, or for i >= nfuncs
 * Program.kernels[i - nfuncs]; order lists every function index once, each
 * after the functions it calls. False when out of memory. */
typedef struct AstCallGraph {
  int n; /* nfuncs + nkernels */
  const Decl ***callees;
  int *ncallees;
  int *order; /* nfuncs entries */
} AstCallGraph;
bool ast_call_graph(const Program *, AstCallGraph *);
void ast_call_graph_free(AstCallGraph *);

/* ast_dump.c: one S-expression line per declaration, e.g.
 * `(kernel k (params (x float32[])) (block (var i auto (call tid))))`; with
 * typed, each expression with a type is followed by `:type`. malloc'd; NULL on OOM. */
char *ast_dump_module(const Module *m, bool typed);

#endif
