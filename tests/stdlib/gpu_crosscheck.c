/* gpu_crosscheck.c: runs stdlib/kern_builtins.h on a CUDA GPU and compares
 * with the CPU.
 *
 * Requires kern_builtins.h, kern_math.h and crosscheck_rows.h included before it (the
 * including file does that), libcuda and libnvrtc loadable at run time, and
 * the stdlib/ and tests/stdlib/ directories of the source tree (their text
 * becomes the NVRTC program). Produces kc_gpu_crosscheck(): every kc_exact,
 * kc_transc (transcendental functions) and kc_random output bit-identical on
 * both devices, GPU atomics exact under contention, debug errors recorded once.
 * Returns 1 when all agree, 0 on a mismatch, -1 when there is no GPU or NVRTC
 * (msg says why). Included by tests/test_stdlib.c; gpu_crosscheck_main.c
 * builds it alone for machines without Criterion.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parts.h"

#define KC_ROWS    (1 << 18) /* rows of kc_exact / kc_transc / kc_random */
#define KC_THREADS (1 << 18)

/* ---- inputs ----------------------------------------------------------------- */

static uint64_t kc_mix(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static const uint64_t kc_specials[] = {0,
                                       1,
                                       2,
                                       3,
                                       7,
                                       31,
                                       32,
                                       33,
                                       63,
                                       64,
                                       65,
                                       0x7f,
                                       0x80,
                                       0xff,
                                       0x7fff,
                                       0x8000,
                                       0xffff,
                                       0x7fffffff,
                                       0x80000000u,
                                       0xffffffffu,
                                       0x7fffffffffffffffull,
                                       0x8000000000000000ull,
                                       ~0ull,
                                       ~1ull,
                                       ~6ull,
                                       ~31ull,
                                       ~32ull,
                                       ~63ull,
                                       ~64ull,
                                       0x3f800000,
                                       0x7f800000,
                                       0xff800000u,
                                       0x7fc00000,
                                       0x7f800001,
                                       0x00000001,
                                       0x477ff000,
                                       0x477fefff,
                                       0x33000000,
                                       0x33000001,
                                       0x4f000000,
                                       0xcf000000u,
                                       0x5f000000,
                                       0x5f800000,
                                       0x4f800000,
                                       0x437f0000,
                                       0x43800000,
                                       0xbf800000u,
                                       0xbf000000u,
                                       0x38800000,
                                       0x387fe000,
                                       0x3ff0000000000000ull,
                                       0x7ff0000000000000ull,
                                       0xfff8000000000000ull,
                                       0x40effe0000000000ull,
                                       0x40effdffffffffffull,
                                       0x3e70000000000000ull,
                                       0x41e0000000000000ull,
                                       0xc1e0000000000000ull,
                                       0x43e0000000000000ull,
                                       0x43f0000000000000ull,
                                       0x7ff0000000000001ull,
                                       0x3e60000000000001ull};
#define KC_NSPECIAL ((int)(sizeof kc_specials / sizeof kc_specials[0]))

/* A word whose high half reads as a double near the float16/int ranges and
 * whose low half reads as such a float (both views are exercised at once). */
static uint64_t kc_structured(uint64_t *s) {
  uint64_t r = kc_mix(s), x = kc_mix(s);
  uint64_t hi = ((990 + r % 80) << 20 | (x & 0xfffff)) | (r & (1ull << 40) ? 0x80000000ull : 0);
  uint64_t lo = ((95 + (r >> 8) % 80) << 23 | (x >> 20 & 0x7fffff)) | ((r >> 20) & 0x80000000u);
  if (r & (1ull << 41)) lo &= ~0x1fffull; /* often exactly a float16 tie region */
  return hi << 32 | lo;
}

static void kc_inputs(uint64_t *in, int n) {
  uint64_t s = 12345;
  int i = 0;
  for (int a = 0; a < KC_NSPECIAL && i < n; a++)
    for (int b = 0; b < KC_NSPECIAL && i < n; b++, i++)
      in[2 * i] = kc_specials[a], in[2 * i + 1] = kc_specials[b];
  for (; i < n; i++) {
    uint64_t r = kc_mix(&s);
    in[2 * i] = r % 3 ? kc_structured(&s) : kc_mix(&s);
    in[2 * i + 1] = r % 5 == 0   ? (uint64_t)(int64_t)((int)(r >> 32) % 70)
                    : r % 5 == 1 ? kc_specials[(r >> 8) % KC_NSPECIAL]
                                 : kc_structured(&s);
  }
}

/* ---- checking atomics results (shared with the CPU test) ---------------------- */

static void kc_init_cells(kc_cells *c, int64_t n) {
  memset(c, 0, sizeof *c);
  c->i32_min = INT32_MAX, c->i32_max = INT32_MIN;
  c->u32_sub = (uint32_t)n, c->u32_and = 0xffffffffu, c->u32_min = UINT32_MAX;
  c->i64_min = INT64_MAX, c->i64_max = INT64_MIN;
  c->u64_min = UINT64_MAX, c->u64_and = ~0ull;
  c->f32_sub = (float)(2 * n), c->f32_min = 1e30f, c->f32_max = -1e30f;
  c->f64_sub = (double)n, c->f64_min = 1e300, c->f64_max = -1e300;
  c->iv4_max = kn_splat_iv4(INT32_MIN);
  c->dv2_min = kn_splat_dv2(1e300);
}

static int kc_fail(char *msg, size_t m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, m, fmt, ap);
  va_end(ap);
  return 0;
}

/* Column k of olds, minus shift, holds every value of [0, count) once
 * (extra, when >= 0, is one more value, the cell's final content). */
static int kc_perm_ok(const int64_t *olds, int k, int64_t n, int64_t shift, int64_t extra) {
  int64_t count = n + (extra >= 0);
  unsigned char *seen = calloc((size_t)count, 1);
  int ok = 1;
  for (int64_t i = 0; i <= n && ok; i++) {
    int64_t v = i < n ? olds[i * KC_OLDS + k] - shift : extra;
    if (i == n && extra < 0) break;
    ok = v >= 0 && v < count && !seen[v];
    if (ok) seen[v] = 1;
  }
  free(seen);
  return ok;
}

#define KC_EXPECT(cond)                                                                            \
  do {                                                                                             \
    if (!(cond)) return kc_fail(msg, m, "%s: %s", who, #cond);                                     \
  } while (0)

static int kc_verify_atomics(const kc_cells *c, const int64_t *olds, int64_t n, const char *who,
                             char *msg, size_t m) {
  KC_EXPECT(c->i32_add == n && kc_perm_ok(olds, KC_OLD_I32_ADD, n, 0, -1));
  KC_EXPECT(c->i32_min == -5 && c->i32_max == n - 6 && c->i32_xor == 0 && c->i32_cas == n);
  KC_EXPECT(kc_perm_ok(olds, KC_OLD_I32_EXCH, n, 0, c->i32_exch));
  KC_EXPECT(c->u32_sub == 0 && kc_perm_ok(olds, KC_OLD_U32_SUB, n, 1, -1));
  KC_EXPECT(c->u32_or == 0xffffffffu && c->u32_and == 0u);
  KC_EXPECT(c->u32_min == 0x80000000u && c->u32_max == 0x80000000u + (uint32_t)(n - 1));
  KC_EXPECT(c->i64_add == n << 33 && c->i64_min == -(n - 1) * ((int64_t)1 << 40) &&
            c->i64_max == 0);
  KC_EXPECT(c->i64_or == -1 && c->i64_cas == n &&
            kc_perm_ok(olds, KC_OLD_I64_EXCH, n, 0, c->i64_exch));
  KC_EXPECT(c->u64_add == (uint64_t)n && c->u64_max == (uint64_t)(n - 1) << 40 && c->u64_min == 1u);
  KC_EXPECT(c->u64_cas == (uint64_t)n && c->u64_and == 0u && c->u64_xor == 0u);
  KC_EXPECT(c->f32_add == (float)n && kc_perm_ok(olds, KC_OLD_F32_ADD, n, 0, -1));
  KC_EXPECT(c->f32_sub == 0.0f && c->f32_min == -0.5f && c->f32_max == (float)n - 1.5f);
  KC_EXPECT(c->f32_cas == (float)n &&
            kc_perm_ok(olds, KC_OLD_F32_EXCH, n, 0, (int64_t)c->f32_exch));
  KC_EXPECT(c->f64_add == (double)n / 4 && c->f64_sub == 0.0 && c->f64_min == -(double)(n - 1));
  KC_EXPECT(c->f64_max == 0.0 && c->f64_cas == (double)n);
  KC_EXPECT(kc_perm_ok(olds, KC_OLD_F64_EXCH, n, 0, (int64_t)c->f64_exch));
  KC_EXPECT(c->v3_add.x == (float)n && c->v3_add.y == (float)(2 * n) &&
            c->v3_add.z == (float)(3 * n));
  KC_EXPECT(c->iv4_max.x == n - 1 && c->iv4_max.y == 0 && c->iv4_max.z == (n - 1) / 2 &&
            c->iv4_max.w == 7);
  KC_EXPECT(c->dv2_min.x == 0.0 && c->dv2_min.y == -(double)(n - 1));
  return 1;
}

/* ---- CUDA driver and NVRTC, loaded at run time ------------------------------------ */

typedef unsigned long long kc_dptr;
typedef struct KcCuda {
  void *cu, *rtc, *ctx, *mod;
  int dev, cc_major, cc_minor;
  int (*init)(unsigned);
  int (*count)(int *);
  int (*get)(int *, int);
  int (*attr)(int *, int, int);
  int (*retain)(void **, int);
  int (*release)(int);
  int (*set)(void *);
  int (*load)(void **, const void *);
  int (*unload)(void *);
  int (*func)(void **, void *, const char *);
  int (*alloc)(kc_dptr *, size_t);
  int (*free_)(kc_dptr);
  int (*htod)(kc_dptr, const void *, size_t);
  int (*dtoh)(void *, kc_dptr, size_t);
  int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                void *, void **, void **);
  int (*sync)(void);
  int (*rtc_create)(void **, const char *, const char *, int, const char *const *,
                    const char *const *);
  int (*rtc_compile)(void *, int, const char *const *);
  int (*rtc_log_size)(void *, size_t *);
  int (*rtc_log)(void *, char *);
  int (*rtc_ptx_size)(void *, size_t *);
  int (*rtc_ptx)(void *, char *);
  int (*rtc_destroy)(void **);
} KcCuda;

#define KC_SYM(lib, field, name) (*(void **)&k->field = dlsym(lib, name)) != NULL

static int kc_load_cuda(KcCuda *k, char *msg, size_t m) {
  k->cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!k->cu) return kc_fail(msg, m, "no CUDA driver (libcuda.so.1)");
  int ok = KC_SYM(k->cu, init, "cuInit") && KC_SYM(k->cu, count, "cuDeviceGetCount") &&
           KC_SYM(k->cu, get, "cuDeviceGet") && KC_SYM(k->cu, attr, "cuDeviceGetAttribute") &&
           KC_SYM(k->cu, retain, "cuDevicePrimaryCtxRetain") &&
           KC_SYM(k->cu, release, "cuDevicePrimaryCtxRelease_v2") &&
           KC_SYM(k->cu, set, "cuCtxSetCurrent") && KC_SYM(k->cu, load, "cuModuleLoadData") &&
           KC_SYM(k->cu, unload, "cuModuleUnload") && KC_SYM(k->cu, func, "cuModuleGetFunction") &&
           KC_SYM(k->cu, alloc, "cuMemAlloc_v2") && KC_SYM(k->cu, free_, "cuMemFree_v2") &&
           KC_SYM(k->cu, htod, "cuMemcpyHtoD_v2") && KC_SYM(k->cu, dtoh, "cuMemcpyDtoH_v2") &&
           KC_SYM(k->cu, launch, "cuLaunchKernel") && KC_SYM(k->cu, sync, "cuCtxSynchronize");
  int n = 0;
  if (!ok || k->init(0) != 0 || k->count(&n) != 0 || n < 1)
    return kc_fail(msg, m, "no CUDA device");
  if (k->get(&k->dev, 0) || k->attr(&k->cc_major, 75, k->dev) || k->attr(&k->cc_minor, 76, k->dev))
    return kc_fail(msg, m, "cannot query the CUDA device");
  if (k->retain(&k->ctx, k->dev) || k->set(k->ctx)) return kc_fail(msg, m, "no CUDA context");
  return 1;
}

static int kc_load_nvrtc(KcCuda *k, char *msg, size_t m) {
  char home[1024];
  const char *names[] = {home, "/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so", "libnvrtc.so.13",
                         "libnvrtc.so.12"};
  snprintf(home, sizeof home, "%s/lib64/libnvrtc.so",
           getenv("CUDA_HOME") ? getenv("CUDA_HOME") : ".");
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !k->rtc; i++)
    k->rtc = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!k->rtc) return kc_fail(msg, m, "NVRTC not found");
  int ok = KC_SYM(k->rtc, rtc_create, "nvrtcCreateProgram") &&
           KC_SYM(k->rtc, rtc_compile, "nvrtcCompileProgram") &&
           KC_SYM(k->rtc, rtc_log_size, "nvrtcGetProgramLogSize") &&
           KC_SYM(k->rtc, rtc_log, "nvrtcGetProgramLog") &&
           KC_SYM(k->rtc, rtc_ptx_size, "nvrtcGetPTXSize") &&
           KC_SYM(k->rtc, rtc_ptx, "nvrtcGetPTX") &&
           KC_SYM(k->rtc, rtc_destroy, "nvrtcDestroyProgram");
  return ok ? 1 : kc_fail(msg, m, "NVRTC lacks a symbol");
}

static const char kc_kernels[] =
    "extern \"C\" __global__ void kc_exact_k(const uint64_t *in, uint64_t *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) kc_exact(in[2 * i], in[2 * i + 1], out + (size_t)i * KC_EXACT);\n}\n"
    "extern \"C\" __global__ void kc_transc_k(const uint64_t *in, uint64_t *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) kc_transc(in[2 * i], in[2 * i + 1], out + (size_t)i * KC_TRANSC);\n}\n"
    "extern \"C\" __global__ void kc_random_k(uint32_t seed, uint64_t *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) kc_random(seed, (uint32_t)i, out + (size_t)i * KC_RANDOM);\n}\n"
    "extern \"C\" __global__ void kc_atomics_k(kc_cells *c, int64_t *olds, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) kc_atomics(c, olds, i, n);\n}\n"
    "extern \"C\" __global__ void kc_debug_k(kn_ctx c, int n, int assert_instead) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int64_t idx[4] = {i, 0, 0, 0}, shape[4] = {0, 1, 1, 1};\n"
    "  if (i >= n) return;\n"
    "  if (assert_instead) kn_assert_fail(&c, 9, i, i);\n"
    "  else if (kn_bounds_ok(&c, 7, i, 3, 1, idx, shape, i)) c.err->kind = 99;\n}\n"
    "extern \"C\" __global__ void kc_print_k(int x) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0)\n"
    "    kn_printf(\"device printf %d %u %ld %.2f %g %e %s %x %%\\n\", x, 2u, (long long)-3,\n"
    "              1.5, 0.25, 100.0, \"ok\", 255u);\n}\n";

/* Builds the NVRTC program from the source tree and loads it. */
static int kc_build(KcCuda *k, const char *src_dir, bool fmad, char *msg, size_t m) {
  size_t cap = sizeof kc_kernels + 1, len = 0;
  char *src = malloc(cap);
  for (int i = 0; i <= KT_STDLIB_NPARTS; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", src_dir,
             i < KT_STDLIB_NPARTS ? kt_stdlib_parts[i] : "tests/stdlib/crosscheck_rows.h");
    FILE *f = fopen(path, "rb");
    if (!f) {
      free(src);
      return kc_fail(msg, m, "cannot read %s", path);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    src = realloc(src, cap += (size_t)size + 2);
    len += fread(src + len, 1, (size_t)size, f);
    src[len++] = '\n';
    fclose(f);
  }
  memcpy(src + len, kc_kernels, sizeof kc_kernels);
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", k->cc_major, k->cc_minor);
  const char *opts[] = {arch, "-default-device", "--std=c++17",
                        fmad ? "--fmad=true" : "--fmad=false"};
  void *prog = NULL;
  k->rtc_create(&prog, src, "kern_crosscheck.cu", 0, NULL, NULL);
  int rc = k->rtc_compile(prog, 4, opts);
  free(src);
  size_t size = 0;
  if (rc != 0) {
    k->rtc_log_size(prog, &size);
    char *log = calloc(size + 1, 1);
    k->rtc_log(prog, log);
    kc_fail(msg, m, "NVRTC failed: %.3000s", log);
    free(log);
    k->rtc_destroy(&prog);
    return 0;
  }
  k->rtc_ptx_size(prog, &size);
  char *ptx = malloc(size);
  k->rtc_ptx(prog, ptx);
  k->rtc_destroy(&prog);
  if (!k->load) { /* NVRTC alone: the program compiles, nothing to load it on */
    free(ptx);
    return 1;
  }
  if (k->mod) k->unload(k->mod), k->mod = NULL;
  rc = k->load(&k->mod, ptx);
  free(ptx);
  return rc == 0 ? 1 : kc_fail(msg, m, "cuModuleLoadData failed (%d)", rc);
}

/* Launches kernel `name` over n threads with the given argument pointers. */
static int kc_launch(KcCuda *k, const char *name, int n, void **args, char *msg, size_t m) {
  void *fn = NULL;
  if (k->func(&fn, k->mod, name)) return kc_fail(msg, m, "no kernel %s", name);
  int rc = k->launch(fn, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, args, NULL);
  if (!rc) rc = k->sync();
  return rc == 0 ? 1 : kc_fail(msg, m, "%s failed (%d)", name, rc);
}

/* ---- the checks ------------------------------------------------------------------ */

/* Copies host arrays in, runs, copies `out` back. Buffers: [0] in, [1] out. */
static int kc_run_rows(KcCuda *k, const char *name, const void *in, size_t in_size, void *out,
                       size_t out_size, int n, char *msg, size_t m) {
  kc_dptr din = 0, dout = 0;
  int ok = !k->alloc(&din, in_size) && !k->alloc(&dout, out_size) && !k->htod(din, in, in_size);
  if (!ok) return kc_fail(msg, m, "device allocation failed");
  void *args[] = {&din, &dout, &n};
  ok = kc_launch(k, name, n, args, msg, m) && !k->dtoh(out, dout, out_size);
  k->free_(din), k->free_(dout);
  return ok;
}

/* One row of outputs from two inputs (kc_exact, kc_transc); returns the count. */
typedef int (*kc_row_fn)(uint64_t, uint64_t, uint64_t *);

/* Runs `kernel` and compares every output of `row`, width outputs a row; msg
 * lists each differing output column with its count and first example, so
 * one run shows every disagreement. */
static int kc_check_rows(KcCuda *k, const char *kernel, kc_row_fn row, int width,
                         const uint64_t *in, int64_t *mismatches, char *msg, size_t m) {
  size_t size = sizeof(uint64_t) * (size_t)width * KC_ROWS, used = 0;
  uint64_t *cpu = calloc(1, size), *gpu = calloc(1, size);
  int64_t *count = calloc((size_t)width, sizeof(int64_t));
  int ok = kc_run_rows(k, kernel, in, sizeof(uint64_t) * 2 * KC_ROWS, gpu, size, KC_ROWS, msg, m);
  *mismatches = 0;
  if (ok) msg[0] = 0;
  for (int i = 0; i < KC_ROWS && ok; i++) {
    int n = row(in[2 * i], in[2 * i + 1], cpu + (size_t)i * width);
    for (int j = 0; j < n; j++) {
      size_t at = (size_t)i * width + j;
      if (cpu[at] == gpu[at] || count[j]++) continue;
      (*mismatches)++;
      if (used + 200 < m)
        used += (size_t)snprintf(
            msg + used, m - used,
            "%s output %d (row %d, in %016llx %016llx): cpu %016llx gpu %016llx\n", kernel, j, i,
            (unsigned long long)in[2 * i], (unsigned long long)in[2 * i + 1],
            (unsigned long long)cpu[at], (unsigned long long)gpu[at]);
    }
  }
  for (int j = 0; j < width && ok && *mismatches; j++)
    if (count[j] && used + 40 < m)
      used += (size_t)snprintf(msg + used, m - used, "[%d: %lld rows] ", j, (long long)count[j]);
  free(cpu), free(gpu), free(count);
  return ok;
}

static int kc_check_random(KcCuda *k, char *msg, size_t m) {
  size_t size = sizeof(uint64_t) * KC_RANDOM * KC_ROWS;
  uint64_t *cpu = calloc(1, size), *gpu = calloc(1, size);
  kc_dptr dout = 0;
  uint32_t seed = 2024u;
  int n = KC_ROWS, ok = !k->alloc(&dout, size);
  void *args[] = {&seed, &dout, &n};
  ok = ok && kc_launch(k, "kc_random_k", n, args, msg, m) && !k->dtoh(gpu, dout, size);
  for (int i = 0; i < n && ok; i++) {
    kc_random(seed, (uint32_t)i, cpu + (size_t)i * KC_RANDOM);
    if (memcmp(cpu + (size_t)i * KC_RANDOM, gpu + (size_t)i * KC_RANDOM,
               sizeof(uint64_t) * KC_RANDOM))
      ok = kc_fail(msg, m, "random stream %d differs between devices", i);
  }
  k->free_(dout);
  free(cpu), free(gpu);
  return ok;
}

static int kc_check_atomics(KcCuda *k, char *msg, size_t m) {
  kc_cells cells;
  int n = KC_THREADS;
  size_t osize = sizeof(int64_t) * KC_OLDS * (size_t)n;
  int64_t *olds = malloc(osize);
  kc_dptr dc = 0, dolds = 0;
  kc_init_cells(&cells, n);
  int ok = !k->alloc(&dc, sizeof cells) && !k->alloc(&dolds, osize) &&
           !k->htod(dc, &cells, sizeof cells);
  void *args[] = {&dc, &dolds, &n};
  ok = ok && kc_launch(k, "kc_atomics_k", n, args, msg, m) && !k->dtoh(&cells, dc, sizeof cells) &&
       !k->dtoh(olds, dolds, osize);
  ok = ok && kc_verify_atomics(&cells, olds, n, "GPU atomics", msg, m);
  k->free_(dc), k->free_(dolds);
  free(olds);
  return ok;
}

static int kc_check_debug(KcCuda *k, int assert_instead, char *msg, size_t m) {
  kn_error err;
  kc_dptr derr = 0;
  int n = 100000;
  memset(&err, 0, sizeof err);
  if (k->alloc(&derr, sizeof err) || k->htod(derr, &err, sizeof err))
    return kc_fail(msg, m, "alloc");
  kn_ctx c;
  memset(&c, 0, sizeof c);
  c.n = n, c.ndim = 1, c.dim[0] = n, c.dim[1] = c.dim[2] = c.dim[3] = 1;
  c.err = (kn_error *)(uintptr_t)derr;
  void *args[] = {&c, &n, &assert_instead};
  int ok = kc_launch(k, "kc_debug_k", n, args, msg, m) && !k->dtoh(&err, derr, sizeof err);
  k->free_(derr);
  if (!ok) return 0;
  if (assert_instead)
    return err.flag == 1 && err.kind == KN_ERR_ASSERT && err.file == 9 && err.line == err.tid &&
                   err.tid >= 0 && err.tid < n
               ? 1
               : kc_fail(msg, m, "GPU assert record wrong");
  return err.flag == 1 && err.kind == KN_ERR_BOUNDS && err.file == 7 && err.param == 3 &&
                 err.ndim == 1 && err.line == err.tid && err.index[0] == err.tid &&
                 err.shape[0] == 0 && err.tid >= 0 && err.tid < n
             ? 1
             : kc_fail(msg, m, "GPU bounds record wrong");
}

/* Runs every check; the report (what agreed) goes to `report`. */
static int kc_gpu_crosscheck(const char *src_dir, char *msg, size_t m, FILE *report) {
  KcCuda k;
  memset(&k, 0, sizeof k);
  if (!kc_load_cuda(&k, msg, m) || !kc_load_nvrtc(&k, msg, m)) return -1;
  uint64_t *in = malloc(sizeof(uint64_t) * 2 * KC_ROWS);
  kc_inputs(in, KC_ROWS);
  int64_t mism = 0, tmism = 0, fused = 0;
  int x = 42;
  void *pargs[] = {&x};
  int ok = kc_build(&k, src_dir, false, msg, m) &&
           kc_check_rows(&k, "kc_exact_k", kc_exact, KC_EXACT, in, &mism, msg, m) && mism == 0 &&
           kc_check_rows(&k, "kc_transc_k", kc_transc, KC_TRANSC, in, &tmism, msg, m) &&
           tmism == 0 && kc_check_random(&k, msg, m) && kc_check_atomics(&k, msg, m) &&
           kc_check_debug(&k, 0, msg, m) && kc_check_debug(&k, 1, msg, m) &&
           kc_launch(&k, "kc_print_k", 1, pargs, msg, m);
  if (ok && report) {
    char scratch[512];
    if (kc_build(&k, src_dir, true, scratch, sizeof scratch))
      kc_check_rows(&k, "kc_exact_k", kc_exact, KC_EXACT, in, &fused, scratch, sizeof scratch);
    fprintf(report,
            "GPU sm_%d%d: %d x %d exact and %d x %d transcendental outputs identical, random "
            "streams identical; with --fmad=true %lld of the exact output columns differ\n",
            k.cc_major, k.cc_minor, KC_ROWS, KC_EXACT, KC_ROWS, KC_TRANSC, (long long)fused);
  }
  if (k.mod) k.unload(k.mod);
  k.release(k.dev);
  free(in);
  return ok;
}
