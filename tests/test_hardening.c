/* test_hardening.c: inputs a hostile user would try against the compiler and
 * the standard library, each with the limit or behaviour docs/robustness.md
 * promises: huge parameter lists, long call and else-if chains, huge struct
 * values, bool bytes other than 0 and 1, names that collide or run long,
 * matrix inverses, struct dtypes nested into exponential sizes, million-term
 * expressions, printf widths, a byte order mark, recursion cycles of 100,000
 * functions.
 *
 * Requires: a C compiler for CPU launches; NVRTC for the CUDA compile checks
 * (without it they say so in the log and check the rest). Sources are made
 * here, in C. Big inputs are compiled in a forked child (fresh library state,
 * peak memory measured there) or on a thread with a 2 MiB stack.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emit.h"
#include "front.h"
#include "harness.h"
#include "kern.h"
#include "nvrtc.h"
#include "toolchain.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HARDEN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HARDEN_SANITIZED 1
#endif
#endif

#ifdef HARDEN_SANITIZED
enum { SMALL_STACK = 8 << 20, SLOW = 4 }; /* sanitizers make every frame bigger and slower */
#else
enum { SMALL_STACK = 2 << 20, SLOW = 1 };
#endif

/* ---- text ---------------------------------------------------------------------------- */

typedef struct Str {
  char *s;
  size_t len, cap;
} Str;

static void sadd(Str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sadd(Str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->s = realloc(b->s, b->cap);
    cr_assert_not_null(b->s);
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* n copies of c (malloc'd). */
static char *letters(char c, size_t n) {
  char *s = malloc(n + 1);
  cr_assert_not_null(s);
  memset(s, c, n);
  s[n] = 0;
  return s;
}

/* ---- the compiler in-process ----------------------------------------------------------- */

/* Checks src; NULL with the rendered diagnostics in *why when it fails. */
static Program *check_src(const char *name, const char *src, char **why) {
  FrontResult r = front_compile(name, src, strlen(src));
  cr_assert_not_null(r.prog);
  if (!r.ok) {
    *why = diag_render(r.prog->diags, false);
    front_free(r.prog);
    return NULL;
  }
  *why = NULL;
  return r.prog;
}

/* The first error's message of compiling src ("" when it compiles). */
static char first_error[8192];
static const char *compile_error(const char *src) {
  FrontResult r = front_compile("h.kern", src, strlen(src));
  cr_assert_not_null(r.prog);
  first_error[0] = 0;
  for (Diag *d = r.prog->diags->head; d; d = d->next)
    if (d->level == DIAG_ERROR) {
      snprintf(first_error, sizeof first_error, "%s", d->msg);
      break;
    }
  front_free(r.prog);
  return first_error;
}

static void expect_compile_error(const char *src, const char *needle) {
  const char *msg = compile_error(src);
  cr_expect(strstr(msg, needle), "expected an error with \"%s\", got \"%.600s\"", needle, msg);
}

/* Emits both targets; compiles the CUDA with NVRTC when it is there. */
static void emit_both(const Program *p, const char *name, bool debug) {
  EmitOptions o = {.debug = debug, .line_directives = true};
  char *c = emit_program(p, EMIT_C, &o), *cuda = emit_program(p, EMIT_CUDA, &o);
  cr_assert_not_null(c);
  cr_assert_not_null(cuda);
  const char *why;
  if (tc_nvrtc_load(&why)) {
    char *out = NULL;
    size_t len;
    bool is_ptx;
    kern_status st = tc_nvrtc_compile(cuda, name, 90, false, debug, &out, &len, &is_ptx);
    cr_expect_eq(st, KERN_OK, "NVRTC on %s: %.3000s", name, kern_last_error());
    free(out);
  } else {
    cr_log_info("NVRTC not available (%s): the CUDA compile of %s is skipped", why, name);
  }
  free(c);
  free(cuda);
}

/* Checks src (it must compile) and emits it for both targets. */
static void check_and_emit(const char *name, const char *src, bool debug) {
  char *why;
  Program *p = check_src(name, src, &why);
  cr_assert_not_null(p, "%s", why);
  emit_both(p, name, debug);
  front_free(p);
}

/* ---- the library --------------------------------------------------------------------- */

static kern_device *cpu(void) { return kern_device_get("cpu"); }

static kern_module *load(const char *name, const char *src) {
  kern_module *m = kern_module_from_source(name, src);
  cr_assert_not_null(m, "%.3000s", kern_last_error());
  return m;
}

static kern_kernel *kernel(kern_module *m, const char *name) {
  kern_kernel *k = kern_module_kernel(m, name);
  cr_assert_not_null(k, "%s", kern_last_error());
  return k;
}

static kern_array *array_of(kern_dtype dt, int64_t n, const void *init, size_t bytes) {
  kern_array *a = kern_array_new(cpu(), dt, 1, &n);
  cr_assert_not_null(a, "%s", kern_last_error());
  if (init) cr_assert_eq(kern_array_write(a, init, bytes), KERN_OK, "%s", kern_last_error());
  return a;
}

/* Runs fn(arg) on a thread with SMALL_STACK bytes of stack. */
static void on_small_stack(void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_t t;
  cr_assert_eq(pthread_attr_init(&attr), 0);
  cr_assert_eq(pthread_attr_setstacksize(&attr, SMALL_STACK), 0);
  cr_assert_eq(pthread_create(&t, &attr, fn, arg), 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
}

/* ---- forked children with their peak memory ---------------------------------------- */

typedef struct Child {
  bool done;
  kern_status status;
  char message[4096];
  double seconds;
  long rss_before_kb, peak_kb; /* VmRSS before the work, VmHWM after */
  int64_t value;
} Child;

static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
  if (f) fclose(f);
  return v;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs fn in a forked child that must exit normally; the peak resident memory
 * is measured from a reset high-water mark (clear_refs 5), so what the parent
 * had does not count. */
static Child run_child(void (*fn)(Child *, const void *), const void *arg) {
  Child *shared =
      mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(shared, MAP_FAILED);
  memset(shared, 0, sizeof *shared);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) fputs("5", f), fclose(f);
    shared->rss_before_kb = status_kb("VmRSS");
    double t0 = now();
    fn(shared, arg);
    shared->seconds = now() - t0;
    shared->peak_kb = status_kb("VmHWM");
    shared->done = true;
    _exit(0);
  }
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  Child r = *shared;
  munmap(shared, sizeof *shared);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child died: %s %d",
            WIFSIGNALED(st) ? "signal" : "exit status",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  cr_assert(r.done);
  return r;
}

static void record(Child *c, kern_status st) {
  c->status = st;
  snprintf(c->message, sizeof c->message, "%s", st ? kern_last_error() : "");
}

/* ---- kernel parameters -------------------------------------------------------------- */

/* kernel void k(float[] out, float s0, ..., float s{n-1}): out[0] = the sum. */
static char *many_params(int n) {
  Str b = {0};
  sadd(&b, "kernel void k(float[] out");
  for (int i = 0; i < n; i++) sadd(&b, ", float s%d", i);
  sadd(&b, ") {\n  float t = 0.0;\n");
  for (int i = 0; i < n; i++) sadd(&b, "  t += s%d;\n", i);
  sadd(&b, "  out[0] = t;\n}\n");
  return b.s;
}

/* 257 parameters: past the 256 offsets the emitter once had room for. */
Test(params, kernel_with_257_parameters_checks_emits_and_launches) {
  enum { N = 257 };
  char *src = many_params(N);
  check_and_emit("params.kern", src, false);
  kern_module *m = load("params.kern", src);
  kern_array *out = array_of(KERN_FLOAT32, 1, NULL, 0);
  kern_arg args[N + 1];
  args[0] = kern_arg_array(out);
  for (int i = 0; i < N; i++) args[i + 1] = kern_arg_f32((float)i);
  cr_assert_eq(kern_launch(kernel(m, "k"), cpu(), KERN_DIM1(1), N + 1, args), KERN_OK, "%s",
               kern_last_error());
  float v;
  kern_array_read(out, &v, sizeof v);
  cr_expect_eq(v, (float)(N * (N - 1) / 2), "sum %g", v);
  kern_array_free(out);
  kern_module_free(m);
  free(src);
}

/* `kernc emit` of such a file, for both targets. */
Test(params, kernc_emits_a_kernel_with_257_parameters) {
  char dir[] = "/tmp/kern-harden-XXXXXX", path[64], cmd[256], *out = NULL;
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/p.kern", dir);
  char *src = many_params(257);
  FILE *f = fopen(path, "w");
  fputs(src, f);
  fclose(f);
  for (int t = 0; t < 2; t++) {
    snprintf(cmd, sizeof cmd, "%s emit --target=%s %s > /dev/null", KERNC_PATH, t ? "cuda" : "c",
             path);
    int rc = th_run(cmd, &out);
    cr_expect_eq(rc, 0, "%s: %s", cmd, out);
    free(out);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  th_run(cmd, NULL);
  free(src);
}

/* CUDA passes at most 4 KiB of arguments to a kernel: a bigger argument block
 * (padded to its alignment, as C lays it out) is refused by the checker,
 * naming the size and the limit. */
Test(params, argument_block_past_the_cuda_limit_is_an_error) {
  char *ok = many_params(982), *bad = many_params(983);
  char *why;
  Program *p = check_src("p.kern", ok, &why);
  cr_expect_not_null(p, "an array and 982 floats (4000 bytes) fit: %s", why);
  front_free(p);
  free(why);
  expect_compile_error(bad, "the parameters of kernel 'k' take 4008 bytes; the limit is 4000");
  Str arrays = {0};
  sadd(&arrays, "kernel void k(");
  for (int i = 0; i < 60; i++) sadd(&arrays, "%sfloat[] a%d", i ? ", " : "", i);
  sadd(&arrays, ") { a0[0] = 1.0; }\n");
  expect_compile_error(arrays.s, "the parameters of kernel 'k' take 4320 bytes; the limit is 4000");
  free(arrays.s);
  free(ok);
  free(bad);
}

/* ---- long chains: calls, structs, constants, else-if ------------------------------- */

/* f0 -> f1 -> ... -> f{n}, each adding 1 (no recursion). */
static char *call_chain(int n) {
  Str b = {0};
  for (int j = 0; j < n; j++) sadd(&b, "float f%d(float a) { return f%d(a) + 1.0; }\n", j, j + 1);
  sadd(&b, "float f%d(float a) { return a; }\n", n);
  sadd(&b, "kernel void k(float[] x) { int i = tid(); x[i] = f0(x[i]); }\n");
  return b.s;
}

typedef struct Work {
  const char *src;
  bool launch, cuda;
  float in, out;
  char error[4096];
} Work;

/* Check, emit (C and CUDA) and, when asked, a CPU launch of k on x = {in}. */
static void *check_emit_launch(void *arg) {
  Work *w = arg;
  FrontResult r = front_compile("chain.kern", w->src, strlen(w->src));
  if (!r.ok) {
    char *d = r.prog ? diag_render(r.prog->diags, false) : NULL;
    snprintf(w->error, sizeof w->error, "check: %s", d ? d : "out of memory");
    free(d);
    front_free(r.prog);
    return NULL;
  }
  EmitOptions o = {.line_directives = true};
  char *c = emit_program(r.prog, EMIT_C, &o), *cu = emit_program(r.prog, EMIT_CUDA, &o);
  if (!c || !cu) snprintf(w->error, sizeof w->error, "emit failed");
  free(c);
  free(cu);
  front_free(r.prog);
  if (!w->launch || w->error[0]) return NULL;
  kern_module *m = kern_module_from_source("chain.kern", w->src);
  kern_kernel *k = m ? kern_module_kernel(m, "k") : NULL;
  int64_t n = 1;
  kern_array *x = kern_array_new(kern_device_get("cpu"), KERN_FLOAT32, 1, &n);
  kern_status st = k && x ? kern_array_write(x, &w->in, sizeof w->in) : kern_last_status();
  if (!st) st = KERN_LAUNCH(k, kern_device_get("cpu"), KERN_DIM1(1), x);
  if (!st) st = kern_array_read(x, &w->out, sizeof w->out);
  if (st) snprintf(w->error, sizeof w->error, "%s: %s", kern_status_name(st), kern_last_error());
  kern_array_free(x);
  kern_module_free(m);
  return NULL;
}

/* Checking and emitting a 20,000-function call chain walks the call graph
 * without recursion: it works on a 2 MiB stack, and the kernel runs there.
 * (Compiled at -O0: clang's inliner takes a minute over such a chain at -O1;
 * without inlining the 20,000 calls are real, on the 2 MiB stack.) */
Test(chains, twenty_thousand_function_call_chain_on_a_small_stack, .timeout = 300) {
  setenv("KERN_CPU_OPT", "0", 1);
  char *src = call_chain(20000);
  Work w = {.src = src, .launch = true, .in = 0.5f};
  on_small_stack(check_emit_launch, &w);
  cr_expect_eq(w.error[0], 0, "%s", w.error);
  cr_expect_eq(w.out, 20000.5f, "x = %g", w.out);
  free(src);
}

/* The CUDA of a call chain compiles too (NVRTC inlines every call). */
Test(chains, a_call_chain_compiles_for_cuda) {
  char *src = call_chain(500);
  check_and_emit("chain.kern", src, false);
  free(src);
}

/* Structs nested n deep, each holding the one declared after it, and n
 * constants, each defined by the one declared after it: declared backwards,
 * so checking S0 (or c0) walks the whole chain at once. Forwards, each is
 * complete when the next one needs it. */
static void backward_chains(Str *b, int n, bool backward) {
  for (int k = 0; k < n; k++) {
    int i = backward ? k : n - 1 - k;
    if (i == n - 1)
      sadd(b, "struct S%d { float x; };\nconst int c%d = 1;\n", i, i);
    else
      sadd(b, "struct S%d { S%d inner; };\nconst int c%d = c%d + 1;\n", i, i + 1, i, i + 1);
  }
  sadd(b, "kernel void k(float[] x, S0[] s) { x[0] = float(c0); }\n");
}

typedef struct Chain {
  int n;
  bool backward;
  char error[4096];
} Chain;

/* Loads the chains and registers S0's dtype (its signature walks the nesting). */
static void *load_chains(void *arg) {
  Chain *c = arg;
  Str b = {0};
  backward_chains(&b, c->n, c->backward);
  kern_module *m = kern_module_from_source("nest.kern", b.s);
  kern_dtype dt = m ? kern_module_dtype(m, "S0") : KERN_DTYPE_INVALID;
  if (!m || dt == KERN_DTYPE_INVALID)
    snprintf(c->error, sizeof c->error, "%s", kern_last_error());
  else if (kern_dtype_size(dt) != 4)
    snprintf(c->error, sizeof c->error, "S0 is %zu bytes", kern_dtype_size(dt));
  kern_module_free(m);
  free(b.s);
  return NULL;
}

/* Chains as deep as the checker accepts (a constant takes two levels: its
 * name and the sum), and 100,000 declared forwards, load and register their
 * dtypes on a 2 MiB stack. */
Test(chains, long_struct_and_constant_chains_on_a_small_stack) {
  Chain deep = {.n = 990, .backward = true}, along = {.n = 100000};
  on_small_stack(load_chains, &deep);
  cr_expect_eq(deep.error[0], 0, "%s", deep.error);
  on_small_stack(load_chains, &along);
  cr_expect_eq(along.error[0], 0, "%s", along.error);
}

/* Deeper than the limit: an error, not a crash. */
Test(chains, struct_and_constant_chains_past_the_limit_are_errors) {
  Str b = {0};
  backward_chains(&b, 100000, true);
  expect_compile_error(b.s, "nested too deeply (the limit is 2000 levels)");
  free(b.s);
}

/* if (x == 0) {...} else if (x == 1) {...} ... : n branches and an else. */
static char *else_if_chain(int n) {
  Str b = {0};
  sadd(&b, "kernel void k(float[] x) {\n  int v = int(x[tid()]);\n  int r = -1;\n");
  for (int i = 0; i < n; i++)
    sadd(&b, "  %sif (v == %d) { r = %d; }\n", i ? "else " : "", i, 3 * i + 1);
  sadd(&b, "  else { r = -2; }\n  x[tid()] = float(r);\n}\n");
  return b.s;
}

/* An else-if chain is not nesting: 100,000 branches check and emit on a
 * 2 MiB stack; 2,000 compile and pick the right branch there. (C compilers
 * take minutes over 10,000 branches at -O3.) */
Test(chains, else_if_chains_of_100000_branches_on_a_small_stack, .timeout = 300) {
  char *src = else_if_chain(100000);
  Work w = {.src = src};
  on_small_stack(check_emit_launch, &w);
  cr_expect_eq(w.error[0], 0, "%s", w.error);
  free(src);
  src = else_if_chain(2000);
  Work hit = {.src = src, .launch = true, .in = 1987.0f};
  on_small_stack(check_emit_launch, &hit);
  cr_expect_eq(hit.error[0], 0, "%s", hit.error);
  cr_expect_eq(hit.out, 3 * 1987 + 1, "x = %g", hit.out);
  Work miss = {.src = src, .launch = true, .in = 2001.0f};
  on_small_stack(check_emit_launch, &miss);
  cr_expect_eq(miss.out, -2.0f, "x = %g", miss.out);
  free(src);
}

Test(chains, else_if_chain_compiles_for_cuda) {
  char *src = else_if_chain(1000);
  check_and_emit("elif.kern", src, true);
  free(src);
}

/* ---- values on a thread's stack --------------------------------------------------- */

/* struct A0 { int8 x; }; struct A{j} { A{j-1} a; A{j-1} b; } up to A{n}: 2^n bytes. */
static void sdag(Str *b, int n) {
  sadd(b, "struct A0 { int8 x; };\n");
  for (int j = 1; j <= n; j++) sadd(b, "struct A%d { A%d a; A%d b; };\n", j, j - 1, j - 1);
}

Test(frames, a_sixteen_megabyte_local_is_refused) {
  Str b = {0};
  sdag(&b, 24);
  sadd(&b, "kernel void k(int8[] x) { A24 big = A24(); x[tid()] = big.a.a.a.a.a.a.a.a.a.a.a.a."
           "a.a.a.a.a.a.a.a.a.a.a.a.x; }\n");
  expect_compile_error(b.s, "local variable 'big' takes 16777216 bytes (A24); a value on a "
                            "thread's stack is limited to 65536 bytes");
  free(b.s);
}

Test(frames, huge_parameters_and_return_values_are_refused) {
  Str b = {0};
  sdag(&b, 17);
  sadd(&b, "int8 first(A17 v) { return v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x; }\n"
           "kernel void k(int8[] x, A17[] s) { x[tid()] = first(s[0]); }\n");
  expect_compile_error(b.s, "parameter 'v' of function 'first' takes 131072 bytes (A17); a value "
                            "on a thread's stack is limited to 65536 bytes");
  b.len = 0;
  sdag(&b, 17);
  sadd(&b, "A17 make() { return A17(); }\n"
           "kernel void k(A17[] s) { s[tid()] = make(); }\n");
  expect_compile_error(b.s, "function 'make' returns 131072 bytes (A17); a value on a thread's "
                            "stack is limited to 65536 bytes");
  free(b.s);
}

/* Nine locals of 64 KiB in one kernel, or one in each function of a call
 * chain, are more than the 512 KiB of stack a kernel may need by kern's count
 * (locals, parameters (an array 72 bytes) and return values along the deepest
 * call path, and 16 bytes a call). */
Test(frames, a_kernel_stack_past_the_budget_is_refused) {
  Str b = {0};
  sdag(&b, 16);
  sadd(&b, "kernel void k(int8[] x) {\n");
  for (int i = 0; i < 9; i++) sadd(&b, "  A16 v%d = A16();\n", i);
  sadd(&b, "  x[0] = v8.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x;\n}\n");
  expect_compile_error(b.s, "kernel 'k' needs about 589912 bytes of stack (the limit is 524288)");
  b.len = 0; /* a chain k -> g8 -> g7 -> ... -> g0, one A16 in each */
  sdag(&b, 16);
  sadd(&b, "int8 g0(int8 y) { A16 v = A16(); v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x = y; "
           "return v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x; }\n");
  for (int i = 1; i < 9; i++)
    sadd(&b,
         "int8 g%d(int8 y) { A16 v = A16(); v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x = g%d(y); "
         "return v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x; }\n",
         i, i - 1);
  sadd(&b, "kernel void k(int8[] x) { x[0] = g8(x[0]); }\n");
  expect_compile_error(b.s, "kernel 'k' needs about 590074 bytes of stack (the limit is 524288)");
  cr_expect(strstr(first_error, "along k -> g8 -> g7 -> g6 -> g5 -> g4 -> g3 -> g2 -> g1 -> g0,"),
            "%s", first_error);
  free(b.s);
}

/* Calls cost stack even without values: a chain of 100,000 functions is
 * refused, and the message names the ends of the chain, not all of it. */
Test(frames, a_hundred_thousand_nested_calls_are_refused) {
  Str b = {0};
  for (int j = 0; j < 100000; j++) sadd(&b, "void f%d() { f%d(); }\n", j, j + 1);
  sadd(&b, "void f100000() { }\nkernel void k() { f0(); }\n");
  expect_compile_error(b.s, "kernel 'k' needs about 1600032 bytes of stack (the limit is 524288)");
  cr_expect(strstr(first_error, "along k -> f0 -> f1 -> f2 -> f3 -> f4 -> f5 -> f6 -> f7 -> f8 -> "
                                "... (99991 more) -> f100000,"),
            "%s", first_error);
  cr_expect_lt(strlen(first_error), 400);
  free(b.s);
}

/* The largest value accepted, in a kernel run by four threads at once. */
Test(frames, a_sixty_four_kilobyte_local_runs_on_four_threads) {
  Str b = {0};
  sdag(&b, 16);
  sadd(&b, "kernel void k(int8[] x) {\n  A16 v = A16();\n"
           "  v.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.x = int8(tid());\n"
           "  x[tid()] = v.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.x;\n}\n");
  kern_module *m = load("frame.kern", b.s);
  enum { N = 4096 };
  kern_array *x = array_of(KERN_INT8, N, NULL, 0);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "k"), cpu(), KERN_DIM1(N), x), KERN_OK, "%s",
               kern_last_error());
  int8_t v[N];
  kern_array_read(x, v, sizeof v);
  for (int i = 0; i < N; i++) cr_assert_eq(v[i], (int8_t)i, "x[%d] = %d", i, v[i]);
  kern_array_free(x);
  kern_module_free(m);
  free(b.s);
}

/* Local arrays count as values: one past 64 KiB is refused, naming its type;
 * nine of 64 KiB are past the kernel's stack budget; the largest runs. */
Test(frames, local_arrays_past_the_limits_are_refused) {
  expect_compile_error("kernel void k(float[] x) {\n  float big[16385];\n  x[0] = big[tid()];\n}\n",
                       "local array 'big' takes 65540 bytes (float32[16385]); a value on a "
                       "thread's stack is limited to 65536 bytes");
  expect_compile_error("kernel void k(vec4[] x) {\n  vec4 v[64, 65];\n  x[0] = v[1, 2];\n}\n",
                       "local array 'v' takes 66560 bytes (vec4[64, 65])");
  Str b = {0};
  sadd(&b, "float f(int k) {\n  float a[16384];\n  a[k] = 1.0;\n  return a[0];\n}\n");
  sadd(&b, "kernel void k(float[] x) {\n");
  for (int i = 0; i < 8; i++) sadd(&b, "  float v%d[16384];\n", i);
  sadd(&b, "  x[0] = v7[tid()] + f(tid());\n}\n");
  expect_compile_error(b.s, "kernel 'k' needs about 589936 bytes of stack (the limit is 524288)");
  free(b.s);
}

Test(frames, a_sixty_four_kilobyte_local_array_runs_on_four_threads) {
  const char *src =
      "kernel void k(int[] x) {\n  int v[16384];\n  int i = tid();\n"
      "  v[16383 - i] = i;\n  v[i] += 1;\n  x[i] = v[16383 - i] + v[i] + v[8000];\n}\n";
  kern_module *m = load("frame.kern", src);
  enum { N = 4096 };
  kern_array *x = array_of(KERN_INT32, N, NULL, 0);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "k"), cpu(), KERN_DIM1(N), x), KERN_OK, "%s",
               kern_last_error());
  int32_t v[N];
  kern_array_read(x, v, sizeof v);
  for (int i = 0; i < N; i++) cr_assert_eq(v[i], i + 1, "x[%d] = %d", i, v[i]);
  kern_array_free(x);
  kern_module_free(m);
}

/* A reference costs a pointer, not the value: a 128 KiB struct that is
 * refused by value is worked on in place through a reference to its array
 * element, on a 2 MiB stack. */
static void *run_huge_reference(void *src) {
  kern_module *m = load("ref.kern", src);
  kern_array *x = array_of(KERN_INT8, 1, NULL, 0);
  kern_array *s = array_of(kern_module_dtype(m, "A17"), 1, NULL, 0);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "k"), cpu(), KERN_DIM1(1), x, s), KERN_OK, "%s",
               kern_last_error());
  int8_t v = 0, *bytes = calloc(1, 1 << 17);
  cr_assert_eq(kern_array_read(x, &v, 1), KERN_OK, "%s", kern_last_error());
  cr_expect_eq(v, 5, "x[0] = %d", v);
  cr_assert_eq(kern_array_read(s, bytes, 1 << 17), KERN_OK, "%s", kern_last_error());
  cr_expect(bytes[0] == 5 && bytes[1] == 9, "the struct's first bytes: %d %d", bytes[0], bytes[1]);
  free(bytes);
  kern_array_free(x);
  kern_array_free(s);
  kern_module_free(m);
  return NULL;
}

Test(frames, a_reference_to_a_huge_struct_costs_a_pointer) {
  Str b = {0};
  sdag(&b, 17);
  sadd(&b, "int8 first(A17 &v) {\n  v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.b.x = 9;\n"
           "  v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x += 5;\n"
           "  return v.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.x;\n}\n"
           "kernel void k(int8[] x, A17[] s) { x[tid()] = first(s[0]); }\n");
  on_small_stack(run_huge_reference, b.s);
  free(b.s);
}

/* ---- bool bytes other than 0 and 1 -------------------------------------------------- */

/* A bool reference to an array element or a field holding 2 or 255 reads
 * true and stores a proper byte (0 or 1); to a local, it is the local. */
Test(bools, references_to_bool_bytes) {
  const char *src = "struct Flag { int32 n; bool on; };\n"
                    "bool flip(bool &b) { bool was = b; b = !b; return was; }\n"
                    "kernel void k(bool[] a, Flag[] f, int[] out) {\n"
                    "  int i = tid();\n"
                    "  bool local = a[i];\n"
                    "  out[3 * i] = int(flip(a[i]));\n"
                    "  out[3 * i + 1] = int(flip(f[i].on)) + 2 * int(f[i].on);\n"
                    "  out[3 * i + 2] = int(flip(local)) + 2 * int(local);\n"
                    "}\n";
  kern_module *m = load("flags.kern", src);
  unsigned char bytes[4] = {0, 1, 2, 255}, fb[4][8] = {{0}};
  for (int i = 0; i < 4; i++) fb[i][4] = bytes[i];
  kern_array *a = array_of(KERN_BOOL, 4, bytes, sizeof bytes);
  kern_array *f = array_of(kern_module_dtype(m, "Flag"), 4, fb, sizeof fb);
  kern_array *out = array_of(KERN_INT32, 12, NULL, 0);
  cr_assert_eq(KERN_LAUNCH(kernel(m, "k"), cpu(), KERN_DIM1(4), a, f, out), KERN_OK, "%s",
               kern_last_error());
  int32_t v[12];
  unsigned char after[4], fafter[4][8];
  kern_array_read(out, v, sizeof v);
  kern_array_read(a, after, sizeof after);
  kern_array_read(f, fafter, sizeof fafter);
  for (int i = 0; i < 4; i++) {
    int t = bytes[i] != 0;
    cr_expect_eq(v[3 * i], t, "flip(a[%d]) of byte %d: %d", i, bytes[i], v[3 * i]);
    cr_expect_eq(v[3 * i + 1], t + 2 * !t, "flip(f[%d].on) of byte %d: %d", i, bytes[i],
                 v[3 * i + 1]);
    cr_expect_eq(v[3 * i + 2], t + 2 * !t, "flip(local) of byte %d: %d", bytes[i], v[3 * i + 2]);
    cr_expect_eq(after[i], !t, "a[%d] holds byte %d after the flip of %d", i, after[i], bytes[i]);
    cr_expect_eq(fafter[i][4], !t, "f[%d].on holds byte %d", i, fafter[i][4]);
  }
  kern_array_free(a);
  kern_array_free(f);
  kern_array_free(out);
  kern_module_free(m);
}

/* A struct field, a by-value parameter and array elements holding 2 and 255
 * are true everywhere: in ?:, !, conversions, comparisons with true. */
Test(bools, struct_fields_and_parameters_holding_other_bytes_are_true) {
  const char *src = "struct Flag { int32 n; bool on; };\n"
                    "kernel void k(Flag[] f, bool b, int[] out) {\n"
                    "  int i = tid();\n"
                    "  Flag g = f[i];\n"
                    "  out[6 * i] = f[i].on ? 1 : 0;\n"
                    "  out[6 * i + 1] = !g.on ? 1 : 0;\n"
                    "  out[6 * i + 2] = int(g.on);\n"
                    "  out[6 * i + 3] = g.on == true ? 1 : 0;\n"
                    "  out[6 * i + 4] = b ? 7 : 8;\n"
                    "  out[6 * i + 5] = int(b) + (b != true ? 100 : 0);\n"
                    "}\n";
  kern_module *m = load("flags.kern", src);
  kern_dtype dt = kern_module_dtype(m, "Flag");
  cr_assert_eq(kern_dtype_size(dt), 8);
  unsigned char bytes[4][8] = {{0}};
  const unsigned char on[4] = {0, 1, 2, 255};
  for (int i = 0; i < 4; i++) bytes[i][4] = on[i];
  int64_t n = 4, no = 24;
  kern_array *f = kern_array_new(cpu(), dt, 1, &n),
             *out = kern_array_new(cpu(), KERN_INT32, 1, &no);
  cr_assert_eq(kern_array_write(f, bytes, sizeof bytes), KERN_OK, "%s", kern_last_error());
  unsigned char two = 2;
  cr_assert_eq(
      KERN_LAUNCH(kernel(m, "k"), cpu(), KERN_DIM1(4), f, kern_arg_bytes(KERN_BOOL, &two), out),
      KERN_OK, "%s", kern_last_error());
  int32_t v[24];
  kern_array_read(out, v, sizeof v);
  for (int i = 0; i < 4; i++) {
    int t = on[i] != 0;
    int want[6] = {t, !t, t, t, 7, 1};
    for (int j = 0; j < 6; j++)
      cr_expect_eq(v[6 * i + j], want[j], "byte %d, value %d: %d (want %d)", on[i], j, v[6 * i + j],
                   want[j]);
  }
  kern_array_free(f);
  kern_array_free(out);
  kern_module_free(m);
}

/* ---- generated names ------------------------------------------------------------------ */

static const char *colliding =
    "struct P { float a; };\n"
    "struct P_zero { float b; };\n"
    "struct P_make { float c; };\n"
    "struct P_make_zero { float d; };\n"
    "float f(float x) { return x + 1.0; }\n"
    "float f_0(float x) { return x + 2.0; }\n"
    "kernel void k(float[] x) {\n"
    "  P p = P(1.0); P_zero q = P_zero(); P_make r = P_make(3.0); P_make_zero s = P_make_zero(4.0);\n"
    "  P z = P();\n"
    "  x[0] = p.a + q.b + r.c + s.d + z.a + f(0.0) + f_0(0.0);\n"
    "}\n"
    "kernel void k_range(float[] x) { x[1] = 5.0; }\n"
    "kernel void k_args(float[] x) { x[2] = 6.0; }\n"
    "kernel void k_body(float[] x) { x[3] = 7.0; }\n";

Test(names, generated_names_never_collide) {
  check_and_emit("names.kern", colliding, true);
  kern_module *m = load("names.kern", colliding);
  kern_array *x = array_of(KERN_FLOAT32, 4, NULL, 0);
  const char *ks[] = {"k", "k_range", "k_args", "k_body"};
  for (int i = 0; i < 4; i++)
    cr_assert_eq(KERN_LAUNCH(kernel(m, ks[i]), cpu(), KERN_DIM1(1), x), KERN_OK, "%s: %.3000s",
                 ks[i], kern_last_error());
  float v[4];
  kern_array_read(x, v, sizeof v);
  cr_expect_eq(v[0], 1.0f + 0.0f + 3.0f + 4.0f + 0.0f + 1.0f + 2.0f);
  cr_expect(v[1] == 5.0f && v[2] == 6.0f && v[3] == 7.0f, "%g %g %g", v[1], v[2], v[3]);
  kern_array_free(x);
  kern_module_free(m);
}

static char *tmp_dir(void) {
  char *d = strdup("/tmp/kern-harden-XXXXXX");
  cr_assert_not_null(mkdtemp(d));
  return d;
}

static void write_text(const char *dir, const char *name, const char *text, mode_t mode) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  chmod(p, mode);
}

static void rm_rf(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  th_run(cmd, NULL);
}

/* A compiler that fails on the code kern generates (and only there: it
 * compiles anything else) stands for a bug in the emitter. */
static const char *picky_cc =
    "#!/bin/sh\n"
    "for a in \"$@\"; do\n"
    "  case \"$a\" in *.c) if grep -q kn_ctx \"$a\"; then\n"
    "    echo \"$a:1:1: error: pretend the emitter wrote bad C\" >&2; exit 1; fi;;\n"
    "  esac\n"
    "done\n"
    "exec cc \"$@\"\n";

Test(names, a_compiler_error_on_checked_code_is_an_internal_error) {
  char *dir = tmp_dir(), cmd[1400], *out = NULL;
  write_text(dir, "cc.sh", picky_cc, 0755);
  write_text(dir, "m.kern", "kernel void k(float[] x) { x[tid()] = 1.0; }\n", 0644);
  snprintf(cmd, sizeof cmd, "%s build %s/m.kern -o %s/m --no-cuda --cc=%s/cc.sh", KERNC_PATH, dir,
           dir, dir);
  int rc = th_run(cmd, &out);
  cr_expect_eq(rc, 3, "%s", out);
  cr_expect(strstr(out, "this is a bug in kern"), "%s", out);
  free(out);
  /* A compiler that fails on everything is the user's: exit 1, as before. */
  snprintf(cmd, sizeof cmd, "%s build %s/m.kern -o %s/m --no-cuda --cc=false", KERNC_PATH, dir,
           dir);
  rc = th_run(cmd, &out);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(!strstr(out, "bug in kern"), "%s", out);
  free(out);
  /* The runtime says the same. */
  char cc[600];
  snprintf(cc, sizeof cc, "%s/cc.sh", dir);
  setenv("KERN_CC", cc, 1);
  setenv("KERN_CACHE_DIR", dir, 1);
  kern_module *m = load("picky.kern", "kernel void k(float[] x) { x[tid()] = 2.0; }\n");
  kern_array *x = array_of(KERN_FLOAT32, 1, NULL, 0);
  kern_status st = KERN_LAUNCH(kernel(m, "k"), cpu(), KERN_DIM1(1), x);
  cr_expect_eq(st, KERN_ERR_COMPILE);
  cr_expect(strstr(kern_last_error(), "this is a bug in kern"), "%s", kern_last_error());
  kern_array_free(x);
  kern_module_free(m);
  unsetenv("KERN_CC");
  rm_rf(dir);
  free(dir);
}

/* The header kernc build writes names structs PREFIX_Name and launch
 * functions PREFIX_kernel_launch, escaping C's reserved words with a '_':
 * user names that would meet there are an error naming both, not a header
 * that does not compile. */
Test(names, kernc_build_refuses_names_that_would_meet_in_the_header) {
  static const struct {
    const char *src, *message;
  } cases[] = {
      {"struct x_launch { float a; };\nkernel void x(float[] v) { v[0] = 1.0; }\n",
       "struct 'x_launch' and the launch function of kernel 'x' are both named 'm_x_launch' in"},
      {"struct module { float a; };\nstruct module_ { float b; };\n"
       "kernel void k(module[] v, module_[] w) { w[0].b = v[0].a; }\n",
       "are both named 'm_module_' in"},
      {"struct S { float class; float class_; };\nkernel void k(S[] v) { v[0].class = 1.0; }\n",
       "field 'class' of struct 'S' and field 'class_' of struct 'S' are both named 'class_' in"},
      {"kernel void k(float[] device, float[] device_) { device[0] = 1.0; }\n",
       "are both named 'device_' in"},
  };
  char *dir = tmp_dir(), cmd[1400], *out = NULL;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_text(dir, "m.kern", cases[i].src, 0644);
    snprintf(cmd, sizeof cmd, "%s build %s/m.kern -o %s/m --no-cuda", KERNC_PATH, dir, dir);
    int rc = th_run(cmd, &out);
    cr_expect_eq(rc, 1, "%s\n%s", cases[i].src, out);
    cr_expect(strstr(out, cases[i].message), "%s\n%s", cases[i].src, out);
    free(out);
  }
  rm_rf(dir);
  free(dir);
}

/* ---- long names ----------------------------------------------------------------------- */

/* A struct, field, function, parameter and kernel of 1024-byte names. */
static char *long_names(size_t n) {
  char *s = letters('s', n), *f = letters('f', n), *g = letters('g', n), *p = letters('p', n),
       *k = letters('k', n);
  Str b = {0};
  sadd(&b, "struct %s { float %s; };\n", s, f);
  sadd(&b, "float %s(%s %s) { return %s.%s * 2.0; }\n", g, s, p, p, f);
  sadd(&b, "kernel void %s(float[] x, %s[] %s) { x[tid()] = %s(%s[tid()]); }\n", k, s, p, g, p);
  free(s), free(f), free(g), free(p), free(k);
  return b.s;
}

Test(names, names_of_1024_bytes_work_everywhere) {
  char *src = long_names(1024);
  check_and_emit("long.kern", src, true);
  kern_module *m = load("long.kern", src);
  char *kname = letters('k', 1024), *sname = letters('s', 1024);
  kern_dtype dt = kern_module_dtype(m, sname);
  cr_assert_eq(kern_dtype_size(dt), 4, "%s", kern_last_error());
  float in[2] = {1.5f, 4.0f}, v[2];
  int64_t n = 2;
  kern_array *s = kern_array_new(cpu(), dt, 1, &n), *x = array_of(KERN_FLOAT32, 2, NULL, 0);
  kern_array_write(s, in, sizeof in);
  cr_assert_eq(KERN_LAUNCH(kernel(m, kname), cpu(), KERN_DIM1(2), x, s), KERN_OK, "%.2000s",
               kern_last_error());
  kern_array_read(x, v, sizeof v);
  cr_expect(v[0] == 3.0f && v[1] == 8.0f, "%g %g", v[0], v[1]);
  kern_array_free(s);
  kern_array_free(x);
  kern_module_free(m);
  free(kname), free(sname), free(src);
  src = long_names(1025);
  expect_compile_error(src, "identifier is too long (1025 bytes; the limit is 1024)");
  free(src);
  /* Messages carry such names whole. */
  char *vname = letters('v', 1024);
  Str bad = {0}, msg = {0};
  sadd(&bad, "kernel void k(int[] x) { int %s; }\n", vname);
  sadd(&msg, "variable '%s' needs an initializer", vname);
  expect_compile_error(bad.s, msg.s);
  free(vname);
  free(bad.s);
  free(msg.s);
}

/* kernc build writes a header whose launch function and struct carry the long
 * names, and a C program including it compiles. */
Test(names, kernc_build_with_names_of_1024_bytes) {
  char *dir = tmp_dir(), cmd[1400], *out = NULL, *src = long_names(1024);
  write_text(dir, "long.kern", src, 0644);
  snprintf(cmd, sizeof cmd,
           "%s build %s/long.kern -o %s/long --no-cuda && cd %s && "
           "printf '#include \"long.h\"\\nint main(void) { return 0; }\\n' > use.c && "
           "cc -fsyntax-only -I%s/include -I. use.c",
           KERNC_PATH, dir, dir, dir, KERN_SOURCE_DIR);
  int rc = th_run(cmd, &out);
  cr_expect_eq(rc, 0, "%.3000s", out);
  free(out);
  rm_rf(dir);
  free(dir);
  free(src);
}

/* ---- matrix inverse and determinant --------------------------------------------------- */

static const char *inverse_src =
    "kernel void inv44(mat44[] m, mat44[] r, float[] d) { int i = tid(); r[i] = inverse(m[i]); "
    "d[i] = determinant(m[i]); }\n"
    "kernel void inv33(mat33[] m, mat33[] r, float[] d) { int i = tid(); r[i] = inverse(m[i]); "
    "d[i] = determinant(m[i]); }\n"
    "kernel void inv22(mat22[] m, mat22[] r, float[] d) { int i = tid(); r[i] = inverse(m[i]); "
    "d[i] = determinant(m[i]); }\n"
    "kernel void prod(mat44[] m, mat44[] r) { int i = tid(); r[i] = m[i] * inverse(m[i]); }\n";

/* Inverse and determinant of the n x n matrix a (row-major), in long double
 * with partial pivoting. */
static long double reference(int n, const float *a, long double *inv) {
  long double m[4][8];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n; j++) m[i][j] = j < n ? a[i * n + j] : (j - n == i);
  long double det = 1;
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabsl(m[r][c]) > fabsl(m[p][c])) p = r;
    if (p != c) {
      det = -det;
      for (int j = 0; j < 2 * n; j++) {
        long double t = m[c][j];
        m[c][j] = m[p][j];
        m[p][j] = t;
      }
    }
    det *= m[c][c];
    for (int r = 0; r < n; r++) {
      if (r == c) continue;
      long double f = m[r][c] / m[c][c];
      for (int j = 0; j < 2 * n; j++) m[r][j] -= f * m[c][j];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) inv[i * n + j] = m[i][n + j] / m[i][i];
  return det;
}

/* The distance in float32 units in the last place from the correctly rounded value. */
static double ulps(float got, long double want) {
  float w = (float)want;
  float step = nextafterf(fabsf(w), INFINITY) - fabsf(w);
  return fabs((double)got - (double)w) / step;
}

/* A badly conditioned matrix (determinant 0.0018): m * inverse(m) is the
 * identity to within 6.2e-4, as with a correctly rounded inverse (float32
 * cofactors gave 1.1e-3), and the inverse and determinant are within one unit
 * in the last place. */
Test(matrix, inverse_of_a_badly_conditioned_matrix_is_accurate) {
  static const float m[16] = {
      1.9636950492858887f, 2.0566694736480713f, 2.0870320796966553f, 2.86993408203125f,
      0.9662846326828003f, 1.6638679504394531f, 1.9079729318618774f, 1.1275984048843384f,
      2.9180214405059814f, 1.8142046928405762f, 1.5528831481933594f, 2.0629770755767822f,
      2.486266613006592f,  2.5069143772125244f, 2.5599567890167236f, 2.6600050926208496f};
  kern_module *mod = load("inverse.kern", inverse_src);
  int64_t n = 1;
  kern_array *a = kern_array_new(cpu(), KERN_MAT44, 1, &n),
             *r = kern_array_new(cpu(), KERN_MAT44, 1, &n);
  kern_array *d = array_of(KERN_FLOAT32, 1, NULL, 0);
  kern_array_write(a, m, sizeof m);
  cr_assert_eq(KERN_LAUNCH(kernel(mod, "prod"), cpu(), KERN_DIM1(1), a, r), KERN_OK, "%s",
               kern_last_error());
  float v[16];
  kern_array_read(r, v, sizeof v);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      cr_expect_leq(fabsf(v[i * 4 + j] - (i == j)), 6.2e-4f, "r[%d][%d] = %.9g", i, j,
                    v[i * 4 + j]);
  /* The inverse itself, correctly rounded (exact rational arithmetic). */
  static const double want[16] = {-224.69075,  -282.724609, -187.201904, 507.457916,
                                  1140.23645,  1437.56714,  955.369446,  -2580.56152,
                                  -857.050232, -1079.26184, -717.983459, 1939.03198,
                                  -39.7828293, -51.9041023, -34.4319191, 92.004837};
  cr_assert_eq(KERN_LAUNCH(kernel(mod, "inv44"), cpu(), KERN_DIM1(1), a, r, d), KERN_OK, "%s",
               kern_last_error());
  kern_array_read(r, v, sizeof v);
  for (int e = 0; e < 16; e++)
    cr_expect_leq(ulps(v[e], want[e]), 1.0, "inverse[%d] = %.9g, want %.9g", e, v[e], want[e]);
  float det;
  kern_array_read(d, &det, sizeof det);
  cr_expect_leq(ulps(det, 0.00181138748), 1.0, "determinant %.9g", det);
  kern_array_free(d);
  kern_array_free(a);
  kern_array_free(r);
  kern_module_free(mod);
}

static uint64_t rng = 88172645463325252ull;
static float uniform(void) { /* xorshift64 in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

/* Random well-conditioned matrices (diagonally dominant): every element of the
 * inverse, and the determinant, is within one unit in the last place of the
 * correctly rounded value. */
static void check_random(kern_module *mod, int n, const char *kname, kern_dtype dt) {
  enum { COUNT = 500 };
  float *a = malloc(sizeof(float) * 16 * COUNT), *r = malloc(sizeof(float) * 16 * COUNT);
  float d[COUNT];
  for (int k = 0; k < COUNT; k++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) a[k * n * n + i * n + j] = uniform() + (i == j ? 2.5f * n : 0);
  int64_t c = COUNT;
  kern_array *ma = kern_array_new(cpu(), dt, 1, &c), *mr = kern_array_new(cpu(), dt, 1, &c);
  kern_array *md = array_of(KERN_FLOAT32, COUNT, NULL, 0);
  kern_array_write(ma, a, sizeof(float) * n * n * COUNT);
  cr_assert_eq(KERN_LAUNCH(kernel(mod, kname), cpu(), KERN_DIM1(COUNT), ma, mr, md), KERN_OK, "%s",
               kern_last_error());
  kern_array_read(mr, r, sizeof(float) * n * n * COUNT);
  kern_array_read(md, d, sizeof d);
  double worst = 0, worst_det = 0;
  for (int k = 0; k < COUNT; k++) {
    long double inv[16];
    long double det = reference(n, a + k * n * n, inv);
    for (int e = 0; e < n * n; e++) worst = fmax(worst, ulps(r[k * n * n + e], inv[e]));
    worst_det = fmax(worst_det, ulps(d[k], det));
  }
  cr_log_info("%s: worst inverse element %.2f ulp, worst determinant %.2f ulp", kname, worst,
              worst_det);
  cr_expect_leq(worst, 1.0, "%s: an inverse element is %.2f ulp off", kname, worst);
  cr_expect_leq(worst_det, 1.0, "%s: a determinant is %.2f ulp off", kname, worst_det);
  kern_array_free(ma), kern_array_free(mr), kern_array_free(md);
  free(a), free(r);
}

Test(matrix, inverse_and_determinant_match_a_float64_reference) {
  kern_module *mod = load("inverse.kern", inverse_src);
  check_random(mod, 2, "inv22", KERN_MAT22);
  check_random(mod, 3, "inv33", KERN_MAT33);
  check_random(mod, 4, "inv44", KERN_MAT44);
  kern_module_free(mod);
}

/* ---- struct dtypes nested into exponential sizes ----------------------------------- */

static void load_sdag(Child *c, const void *arg) {
  const char *src = arg;
  kern_init();
  kern_module *m = kern_module_from_source("sdag.kern", src);
  kern_kernel *k = m ? kern_module_kernel(m, "k") : NULL;
  kern_dtype dt = m ? kern_module_dtype(m, "A30") : KERN_DTYPE_INVALID;
  record(c, k && dt != KERN_DTYPE_INVALID ? KERN_OK : kern_last_status());
  c->value = (int64_t)kern_dtype_size(dt);
  kern_module_free(m);
}

/* struct A30 is 2^30 bytes made of 31 declarations: loading it (its kernel's
 * parameter dtypes) costs what 31 declarations cost, not what 2^30 leaves do. */
Test(structs, thirty_levels_of_doubling_structs_load_fast_in_little_memory) {
  Str b = {0};
  sdag(&b, 30);
  sadd(&b, "kernel void k(float[] x, A30[] p) { x[tid()] = 1.0; }\n");
  Child c = run_child(load_sdag, b.s);
  cr_expect_eq(c.status, KERN_OK, "%s", c.message);
  cr_expect_eq(c.value, (int64_t)1 << 30);
  long grew = c.peak_kb - c.rss_before_kb;
  cr_log_info("sdag 30: %.3f s, peak resident memory +%ld KiB", c.seconds, grew);
  cr_expect_lt(c.seconds, 1.0 * SLOW, "%.2f s", c.seconds);
  cr_expect_lt(grew, 64 << 10, "peak resident memory grew by %ld KiB", grew);
  free(b.s);
}

/* ---- parser memory on a million-term chain ------------------------------------------- */

static void parse_chain(Child *c, const void *arg) {
  const char *src = arg;
  FrontResult r = front_compile("chain.kern", src, strlen(src));
  c->status = r.ok ? KERN_OK : KERN_ERR_COMPILE;
  snprintf(c->message, sizeof c->message, "%s",
           r.prog && r.prog->diags->head ? r.prog->diags->head->msg : "");
  c->value = r.prog ? diag_errors(r.prog->diags) : -1;
  front_free(r.prog);
}

/* x[i] + x[i] + ... with 1,000,000 terms (7 MB): one error at the expression
 * limit, and peak memory within ten times the source (it was 1.6 GB). */
Test(parser, million_term_chain_stops_at_the_limit_in_bounded_memory) {
  enum { N = 1000000 };
  Str b = {0};
  sadd(&b, "kernel void k(float[] x) { int i = tid(); x[i] = x[i]");
  for (int i = 1; i < N; i++) sadd(&b, " + x[i]");
  sadd(&b, "; }\n");
  Child c = run_child(parse_chain, b.s);
  long grew = c.peak_kb - c.rss_before_kb, bound = (long)(10 * b.len / 1024) + (16 << 10);
  cr_log_info("%zu bytes of source: %.2f s, peak resident memory +%ld KiB", b.len, c.seconds, grew);
  cr_expect_eq(c.status, KERN_ERR_COMPILE);
  cr_expect_str_eq(c.message, "nested too deeply (the limit is 2000 levels)");
  cr_expect_eq(c.value, 1, "%lld errors", (long long)c.value);
  cr_expect_lt(grew, bound, "peak memory grew by %ld KiB (bound %ld KiB)", grew, bound);
  free(b.s);
}

/* ---- messages and small limits ---------------------------------------------------------- */

/* A cycle through 100,000 functions: the message names the first few and
 * counts the rest, instead of being a megabyte long. */
Test(messages, a_recursion_cycle_of_100000_functions_gives_a_short_message) {
  enum { N = 100000 };
  Str b = {0};
  for (int i = 0; i < N; i++) sadd(&b, "int f%d(int a) { return f%d(a); }\n", i, (i + 1) % N);
  sadd(&b, "kernel void k(int[] x) { x[0] = f0(x[0]); }\n");
  const char *msg = compile_error(b.s);
  cr_expect(strncmp(msg, "recursion is not allowed: f0 -> f1 -> f2 -> ", 44) == 0, "%.300s", msg);
  cr_expect(strstr(msg, "... (99990 more) -> f99999 -> f0"), "%.600s", msg);
  cr_expect_lt(strlen(msg), 400, "%zu bytes", strlen(msg));
  free(b.s);
}

Test(messages, printf_width_and_precision_are_limited) {
  expect_compile_error("kernel void k(int[] x) { printf(\"%2147483647d\\n\", x[0]); }\n",
                       "field width 2147483647 in '%2147483647d' is too large (the limit is 1000)");
  expect_compile_error("kernel void k(float[] x) { printf(\"%.1001f\\n\", x[0]); }\n",
                       "precision 1001 in '%.1001f' is too large (the limit is 1000)");
  cr_expect_str_eq(
      compile_error("kernel void k(float[] x) { printf(\"%1000.1000f\\n\", x[0]); }\n"), "");
}

/* A UTF-8 byte order mark opens a file as editors write it; anywhere else it
 * is a stray character. */
Test(messages, a_byte_order_mark_at_the_start_is_accepted) {
  cr_expect_str_eq(compile_error("\xEF\xBB\xBFkernel void k(int[] x) { x[0] = 1; }\n"), "");
  expect_compile_error("kernel void k(int[] x) { x[0] = 1; }\n\xEF\xBB\xBF",
                       "unexpected character U+FEFF");
}
