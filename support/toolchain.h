/* toolchain.h: the compilers kern drives: the system C compiler (CPU code)
 * and NVRTC (CUDA code), for the runtime's JIT and for kernc build alike.
 *
 * One rule picks the C compiler: the one asked for (kernc's --cc, else
 * $KERN_CC), as a path or a name on PATH; else clang; else cc. It runs by its
 * absolute path, found before any change of directory. One list of flags
 * gives generated C its meaning (-fwrapv, -ffp-contract=off ...); the JIT adds
 * -march=native and -shared, kernc build's portable object does not.
 */
#ifndef KERN_TOOLCHAIN_H
#define KERN_TOOLCHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "proc.h"

/* ---- the C compiler ------------------------------------------------------------- */

typedef enum {
  TC_SHARED_NATIVE,  /* the JIT: a shared object for this machine's CPU */
  TC_OBJECT_PORTABLE /* kernc build: an object file for any CPU of the target */
} TcOutput;

/* The compiler by the rule above; requested NULL or "" means none asked for.
 * Its absolute path (malloc'd), or NULL (errno ENOENT) when it is not found;
 * *name (when name is not NULL) gets what was looked for ("clang", "cc" or
 * requested). */
char *tc_cc_find(const char *requested, const char **name);
/* Whether cc (a path or a name on PATH) is clang, which needs
 * -fbracket-depth=4096 for deeply nested generated code. */
bool tc_cc_is_clang(const char *cc);
/* The flags for the output (NULL-terminated) from compiler cc (a path, a
 * name or NULL): -std=c11, -O<KERN_CPU_OPT> (0 to 3, read at every call;
 * else 2 for clang and 3 for the others), the ones the generated code's
 * meaning depends on, and for TC_SHARED_NATIVE -march=native -fPIC -shared. */
const char *const *tc_cc_flags(TcOutput, const char *cc);
/* The first line of `cc --version` (cc a path), remembered per path; "" when
 * it prints nothing, fails or runs past timeout_ms (0: no limit). */
const char *tc_cc_identity(const char *cc, int timeout_ms);
/* How long one C compile may run unless told otherwise: generous, since a big
 * module takes minutes at -O3 on a slow machine. */
enum { TC_CC_TIMEOUT_DEFAULT_MS = 300 * 1000 };
/* A compile time limit given in seconds (KERN_COMPILE_TIMEOUT, kernc build's
 * --compile-timeout): a decimal number, "0" for no limit, e.g. "1.5", as
 * milliseconds (at most INT_MAX); NULL or "" is the default; -1 for anything
 * else. */
int tc_cc_timeout_ms(const char *seconds);

typedef struct TcCompile {
  const char *cc;            /* tc_cc_find's path */
  TcOutput output;           /* which flags */
  bool debug;                /* -g */
  const char *const *flags;  /* more flags after kern's (NULL-terminated; NULL: none) */
  const char *const *inputs; /* the rest of the command: files, -o, -c, libraries */
  const char *cwd;           /* where it runs (NULL: here) */
  Buf *log;                  /* its output, captured; NULL: inherited */
  int timeout_ms;            /* 0: no limit */
  _Atomic int *group;        /* ProcSpec's: the compiler's process group while it runs */
} TcCompile;
/* Runs cc, tc_cc_flags(output, cc), -fbracket-depth=4096 (clang), -g (debug),
 * flags, inputs. True when it exited with status 0; *r says how it ended. */
bool tc_cc_run(const TcCompile *, ProcResult *r);

/* ---- NVRTC ------------------------------------------------------------------------ */

/* Whether NVRTC can be loaded ($KERN_NVRTC, the CUDA toolkit's lib64, the
 * loader's path); *why says why not. */
bool tc_nvrtc_available(const char **why);
/* NVRTC's version as major*1000 + minor*10; 0 when absent. */
int tc_nvrtc_version(void);
/* The file NVRTC was loaded from (a path); NULL when absent or unknown. */
const char *tc_nvrtc_file(void);
/* tc_nvrtc_compile's flags (true as flags is TC_NVRTC_DEBUG). */
enum {
  TC_NVRTC_DEBUG = 1,    /* -lineinfo */
  TC_NVRTC_FAST_MATH = 2 /* --use_fast_math (FMA, approximate division, sqrt and
                          * transcendentals, denormals flushed) instead of --fmad=false */
};
/* Compiles CUDA source for sm_<arch> (e.g. 90): CUBIN when NVRTC knows the
 * arch and want_cubin, else PTX for the newest virtual arch it knows that is
 * <= arch. *out (malloc'd, *out_len bytes; PTX is NUL-terminated) and
 * *is_ptx. A kern_status: KERN_ERR_COMPILE with NVRTC's log, or
 * KERN_ERR_UNSUPPORTED when NVRTC is missing, with kern_last_error's message. */
int tc_nvrtc_compile(const char *source, const char *name, int arch, bool want_cubin,
                     unsigned flags, char **out, size_t *out_len, bool *is_ptx);
/* The C compiler's flags of a fast-math module (NULL-terminated), after
 * tc_cc_flags: FMA contraction and the reassociation and reciprocals that
 * break the same-bits promise; NaN and infinity keep their meaning. */
const char *const *tc_fast_math_flags(void);
/* The i-th place of the CUDA toolkit's file rel (e.g. "lib64/libnvrtc.so")
 * into out: under $CUDA_HOME, $CUDA_PATH, the toolkit kern was built with,
 * /usr/local/cuda, unset ones skipped. false once i is past the last. */
bool tc_cuda_toolkit_path(int i, const char *rel, char *out, size_t n);

#endif
