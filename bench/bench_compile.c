/* bench_compile: how long a module of 10 kernels takes to become runnable.
 *
 * Requires: the runtime's internals (core.h: rt_module_code, rt_config_reload;
 * support/toolchain.h: tc_cc_flags, NVRTC), a C compiler, and NVRTC for the
 * CUDA rows (skipped without it). Produces: a Markdown table on stdout and,
 * with `--csv FILE`, the same numbers as CSV. Breaks: nothing; its caches live
 * in a temporary directory that it removes.
 *
 * - CPU, cold cache: kern_module_from_source + compiling for the CPU (front
 *   end, emit C, the C compiler, dlopen, storing in the cache) with a fresh
 *   KERN_CACHE_DIR, against the floor: the same C compiler with the runtime's
 *   flags on the same generated source, run alone (what `kernc emit` + cc
 *   would cost). Target: < 1.5x the floor.
 * - CPU, warm cache: the same with the cache filled. Target: < 5 ms.
 * - CUDA source through NVRTC to PTX for sm_90 (no GPU needed): front end +
 *   emit CUDA + rt_nvrtc_compile, against NVRTC alone on the same source with
 *   the runtime's options. With a GPU, also the runtime's CUDA compile (CUBIN
 *   + module load) cold and warm.
 * - kern_init to the first launch finished, in a fresh process (this program
 *   run again with --first-launch DEVICE), cold and warm cache: what a
 *   program pays at start. Apart, with a warm cache: kern_init alone, and on a
 *   GPU the two steps of starting CUDA, finding the GPUs (kern_device_get:
 *   the driver loaded, cuInit, the devices counted) and the GPU's first use
 *   (its context and stream, made by the first allocation).
 * `bench_compile --startup` prints only the rows of a fresh process.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvrtc.h"
#include "toolchain.h"
#include "emit.h"
#include "front.h"
#include "bench.h"
#include "kern.h"
#include "core.h"

extern char **environ;

enum { COLD_REPS = 5, WARM_REPS = 21, PROC_REPS = 5 };

/* A module as people write them: a struct, constants, two functions, 10 kernels. */
static const char module_text[] =
    "// bench10.kern: ten kernels of the kinds the examples use\n"
    "struct Particle { vec3 pos; vec3 vel; float mass; };\n"
    "const float SOFTENING = 0.01;\n"
    "const int CHUNK = 256;\n"
    "float sq(float x) { return x * x; }\n"
    "vec3 limit(vec3 v, float m) {\n"
    "    float l = length(v);\n"
    "    return l > m ? v * (m / l) : v;\n"
    "}\n"
    "kernel void saxpy(float[] x, float[] y, float a) {\n"
    "    int i = tid();\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n"
    "kernel void blur(float[,] src, float[,] dst) {\n"
    "    int i = tid(0);\n"
    "    int j = tid(1);\n"
    "    int n = int(shape(src, 1));\n"
    "    dst[i, j] = 0.5 * src[i, j] + 0.25 * (src[i, max(j - 1, 0)] + src[i, min(j + 1, n - 1)]);\n"
    "}\n"
    "kernel void histogram(int[] values, int[] bins) {\n"
    "    int i = tid();\n"
    "    atomic_add(&bins[values[i] % len(bins)], 1);\n"
    "}\n"
    "kernel void matmul(float[,] a, float[,] b, float[,] c) {\n"
    "    int i = tid(0);\n"
    "    int j = tid(1);\n"
    "    float s = 0.0;\n"
    "    for (int k = 0; k < int(shape(a, 1)); k++) { s += a[i, k] * b[k, j]; }\n"
    "    c[i, j] = s;\n"
    "}\n"
    "kernel void nbody(Particle[] p, vec3[] acc) {\n"
    "    int i = tid();\n"
    "    vec3 a = vec3(0.0);\n"
    "    for (int j = 0; j < int(len(p)); j++) {\n"
    "        vec3 d = p[j].pos - p[i].pos;\n"
    "        float inv = rsqrt(dot(d, d) + sq(SOFTENING));\n"
    "        a += d * (p[j].mass * inv * inv * inv);\n"
    "    }\n"
    "    acc[i] = a;\n"
    "}\n"
    "kernel void integrate(Particle[] p, vec3[] acc, float dt, float vmax) {\n"
    "    int i = tid();\n"
    "    Particle q = p[i];\n"
    "    q.vel = limit(q.vel + acc[i] * dt, vmax);\n"
    "    q.pos = q.pos + q.vel * dt;\n"
    "    p[i] = q;\n"
    "}\n"
    "kernel void mandelbrot(int[,] out, int maxit) {\n"
    "    int i = tid(0);\n"
    "    int j = tid(1);\n"
    "    float x0 = -2.0 + 3.0 * float(j) / float(dim(1));\n"
    "    float y0 = -1.5 + 3.0 * float(i) / float(dim(0));\n"
    "    float x = 0.0;\n"
    "    float y = 0.0;\n"
    "    int it = 0;\n"
    "    while (x * x + y * y <= 4.0 && it < maxit) {\n"
    "        float xt = x * x - y * y + x0;\n"
    "        y = 2.0 * x * y + y0;\n"
    "        x = xt;\n"
    "        it++;\n"
    "    }\n"
    "    out[i, j] = it;\n"
    "}\n"
    "kernel void reduce_sum(float[] x, double[] total) {\n"
    "    int64 b = int64(tid()) * CHUNK;\n"
    "    float s = 0.0;\n"
    "    for (int64 k = b; k < min(b + CHUNK, size(x)); k++) { s += x[k]; }\n"
    "    atomic_add(&total[0], double(s));\n"
    "}\n"
    "kernel void init_random(float[] x, uint32 seed) {\n"
    "    int i = tid();\n"
    "    uint32 s = rand_init(seed, uint32(i));\n"
    "    x[i] = randn(&s);\n"
    "}\n"
    "kernel void rotate(vec3[] v, quat q, mat33 m) {\n"
    "    int i = tid();\n"
    "    v[i] = m * normalize(quat_rotate(q, v[i]));\n"
    "}\n";

static void die(const char *what) {
  fprintf(stderr, "bench_compile: %s: %s\n", what, kern_last_error());
  exit(1);
}

/* ---- files and processes ------------------------------------------------------------------ */

static char root[4096];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void remove_root(void) {
  if (root[0]) nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* root/name (a directory, made); static storage until the next call. */
static const char *subdir(const char *name) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/%s", root, name);
  if (mkdir(path, 0700) != 0 && errno != EEXIST) {
    perror(path);
    exit(1);
  }
  return path;
}

static void use_cache(const char *dir) {
  setenv("KERN_CACHE_DIR", dir, 1);
  rt_config_reload();
}

/* Runs argv (searched on PATH) with stdout into out (may be NULL) and stderr
 * kept; returns the exit status, -1 when it did not run normally. */
static int run(char *const argv[], char *out, size_t cap) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  size_t len = 0;
  ssize_t n;
  char sink[256];
  while (!err && (n = read(fds[0], out && len + 1 < cap ? out + len : sink,
                           out && len + 1 < cap ? cap - len - 1 : sizeof sink)) > 0)
    if (out && len + 1 < cap) len += (size_t)n;
  if (out) out[len] = 0;
  close(fds[0]);
  int status;
  if (err || waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- CPU: the runtime vs the C compiler alone --------------------------------------------------- */

/* The module compiled for dev through the runtime: seconds. */
static double module_ready(kern_device *dev) {
  double t0 = bench_now();
  kern_module *m = kern_module_from_source("bench10.kern", module_text);
  if (!m) die("kern_module_from_source");
  rt_code *code;
  if (rt_module_code(m, dev, &code) != KERN_OK) die("compiling the module");
  double t = bench_now() - t0;
  kern_module_free(m);
  return t;
}

/* The compiler the runtime picks: KERN_CC, else clang, else cc. */
static const char *c_compiler(void) {
  const char *cc = getenv("KERN_CC");
  if (cc && *cc) return cc;
  char *argv[] = {"clang", "--version", NULL};
  return run(argv, NULL, 0) == 0 ? "clang" : "cc";
}

static char *generated(EmitTarget t, double *seconds) {
  double t0 = bench_now();
  FrontResult r = front_compile("bench10.kern", module_text, sizeof module_text - 1);
  if (!r.ok) {
    fprintf(stderr, "bench_compile: the module does not compile\n");
    exit(1);
  }
  EmitOptions o = {.debug = false, .line_directives = true};
  char *src = emit_program(r.prog, t, &o);
  *seconds = bench_now() - t0;
  front_free(r.prog);
  if (!src) {
    fprintf(stderr, "bench_compile: out of memory\n");
    exit(1);
  }
  return src;
}

/* The C compiler alone, as the runtime runs it, on src: seconds. */
static double cc_alone(const char *cc, const char *src, const char *dir) {
  char c_path[4300], so_path[4300];
  snprintf(c_path, sizeof c_path, "%s/kernel.c", dir);
  snprintf(so_path, sizeof so_path, "%s/kernel.so", dir);
  FILE *f = fopen(c_path, "w");
  if (!f || fputs(src, f) == EOF || fclose(f) != 0) {
    perror(c_path);
    exit(1);
  }
  const char *argv[32];
  int n = 0;
  argv[n++] = cc;
  for (const char *const *fl = tc_cc_flags(TC_SHARED_NATIVE, cc); *fl && n < 26; fl++)
    argv[n++] = *fl;
  argv[n++] = "-o", argv[n++] = so_path, argv[n++] = c_path, argv[n++] = "-lm", argv[n] = NULL;
  double t0 = bench_now();
  if (run((char *const *)argv, NULL, 0) != 0) {
    fprintf(stderr, "bench_compile: %s failed\n", cc);
    exit(1);
  }
  return bench_now() - t0;
}

/* ---- results ----------------------------------------------------------------------------------- */

typedef struct Row {
  char what[120];
  double kern, floor; /* seconds; floor < 0: none */
  const char *target;
  int met; /* -1: no target */
} Row;

static Row rows[24];
static int nrows;

static void add(const char *what, double kern, double floor, const char *target, int met) {
  Row *r = &rows[nrows++];
  snprintf(r->what, sizeof r->what, "%s", what);
  r->kern = kern, r->floor = floor, r->target = target, r->met = met;
}

static void bench_cpu(const char *cc) {
  kern_device *cpu = kern_device_get("cpu");
  double cold[COLD_REPS], warm[WARM_REPS], floor[COLD_REPS], fe[COLD_REPS];
  for (int r = 0; r < COLD_REPS; r++) { /* interleaved: runtime cold, then the floor */
    char name[32];
    snprintf(name, sizeof name, "cold-%d", r);
    use_cache(subdir(name));
    cold[r] = module_ready(cpu);
    char *src = generated(EMIT_C, &fe[r]);
    floor[r] = cc_alone(cc, src, subdir("floor"));
    free(src);
  }
  use_cache(subdir("cold-0")); /* filled by the first cold run */
  module_ready(cpu);
  for (int r = 0; r < WARM_REPS; r++) warm[r] = module_ready(cpu);
  double c = bench_median(cold, COLD_REPS), f = bench_median(floor, COLD_REPS),
         w = bench_median(warm, WARM_REPS);
  char what[120];
  snprintf(what, sizeof what, "CPU module, cold cache (vs %s alone)", cc);
  add(what, c, f, "< 1.5x floor", c < 1.5 * f);
  add("CPU module, warm cache", w, -1, "< 5 ms", w < 5e-3);
  add("  of which front end + emit C", bench_median(fe, COLD_REPS), -1, "", -1);
}

/* ---- CUDA: NVRTC through the runtime vs NVRTC alone ------------------------------------------------ */

static double nvrtc_alone(const tc_nvrtc_api *nv, const char *src) {
  const char *opts[] = {"--gpu-architecture=compute_90", "-default-device", "--std=c++17", "-w",
                        "--fmad=false"};
  double t0 = bench_now();
  nvrtcProgram p;
  size_t n = 0;
  if (nv->CreateProgram(&p, src, "bench10.kern", 0, NULL, NULL) != 0 ||
      nv->CompileProgram(p, 5, opts) != 0 || nv->GetPTXSize(p, &n) != 0) {
    fprintf(stderr, "bench_compile: NVRTC alone failed\n");
    exit(1);
  }
  char *ptx = malloc(n);
  if (!ptx || nv->GetPTX(p, ptx) != 0) exit(1);
  nv->DestroyProgram(&p);
  free(ptx);
  return bench_now() - t0;
}

/* Front end + emit + rt_nvrtc_compile to PTX for sm_90: seconds. */
static double nvrtc_kern(void) {
  double t0 = bench_now(), fe;
  char *src = generated(EMIT_CUDA, &fe), *ptx = NULL;
  size_t len;
  bool is_ptx;
  if (tc_nvrtc_compile(src, "bench10.kern", 90, false, false, &ptx, &len, &is_ptx) != KERN_OK)
    die("rt_nvrtc_compile");
  double t = bench_now() - t0;
  free(src);
  free(ptx);
  return t;
}

static void bench_nvrtc(void) {
  const char *why = NULL;
  double t0 = bench_now();
  const tc_nvrtc_api *nv = tc_nvrtc_load(&why);
  double load = bench_now() - t0;
  if (!nv) {
    fprintf(stderr, "bench_compile: NVRTC absent (%s): CUDA rows skipped\n", why ? why : "?");
    return;
  }
  double fe, k[COLD_REPS], f[COLD_REPS];
  char *src = generated(EMIT_CUDA, &fe);
  nvrtc_alone(nv, src); /* NVRTC's own first-call setup, out of both columns */
  for (int r = 0; r < COLD_REPS; r++) k[r] = nvrtc_kern(), f[r] = nvrtc_alone(nv, src);
  free(src);
  double km = bench_median(k, COLD_REPS), fm = bench_median(f, COLD_REPS);
  add("CUDA source -> PTX sm_90 through NVRTC (vs NVRTC alone)", km, fm, "< 1.5x floor",
      km < 1.5 * fm);
  add("  loading libnvrtc (first use in a process)", load, -1, "", -1);
}

static void bench_gpu(void) {
  kern_device *gpu = kern_device_get("cuda:0");
  if (!gpu) return;
  double cold[COLD_REPS], warm[WARM_REPS];
  for (int r = 0; r < COLD_REPS; r++) {
    char name[32];
    snprintf(name, sizeof name, "gpu-cold-%d", r);
    use_cache(subdir(name));
    cold[r] = module_ready(gpu);
  }
  module_ready(gpu);
  for (int r = 0; r < WARM_REPS; r++) warm[r] = module_ready(gpu);
  add("CUDA module (CUBIN + load), cold cache", bench_median(cold, COLD_REPS), -1, "", -1);
  double w = bench_median(warm, WARM_REPS);
  add("CUDA module (CUBIN + load), warm cache", w, -1, "< 5 ms", w < 5e-3);
}

/* ---- kern_init to the first launch, in a fresh process ------------------------------------------------ */

/* The steps of a first launch in a new process, seconds. */
typedef struct Startup {
  double total; /* kern_init to the launch finished (synchronized) */
  double init;  /* kern_init */
  double get;   /* kern_device_get: on a GPU, finding the GPUs */
  double first; /* the first allocation: on a GPU, its start (context, stream) */
} Startup;

/* The child: nothing of kern runs before the clock starts; prints the Startup. */
static int first_launch(const char *device) {
  double t0 = bench_now();
  if (kern_init() != KERN_OK) die("kern_init");
  double t1 = bench_now();
  kern_device *d = kern_device_get(device);
  if (!d) die("kern_device_get");
  double t2 = bench_now();
  int64_t n = 1024;
  kern_array *x = kern_array_new(d, KERN_FLOAT32, 1, &n);
  double t3 = bench_now();
  kern_array *y = kern_array_new(d, KERN_FLOAT32, 1, &n);
  kern_module *m = kern_module_from_source("bench10.kern", module_text);
  kern_kernel *k = m ? kern_module_kernel(m, "saxpy") : NULL;
  if (!k || !x || !y || KERN_LAUNCH(k, d, KERN_DIM1(n), x, y, 2.0f) != KERN_OK ||
      kern_device_synchronize(d) != KERN_OK)
    die("first launch");
  double t4 = bench_now();
  printf("%.9f %.9f %.9f %.9f\n", t4 - t0, t1 - t0, t2 - t1, t3 - t2);
  kern_array_free(x), kern_array_free(y), kern_module_free(m);
  kern_shutdown();
  return 0;
}

static Startup child(const char *self, const char *device, const char *cache) {
  setenv("KERN_CACHE_DIR", cache, 1);
  char out[256], *argv[] = {(char *)self, "--first-launch", (char *)device, NULL};
  Startup s;
  if (run(argv, out, sizeof out) != 0 ||
      sscanf(out, "%lf %lf %lf %lf", &s.total, &s.init, &s.get, &s.first) != 4) {
    fprintf(stderr, "bench_compile: the child failed\n");
    exit(1);
  }
  return s;
}

static void bench_first_launch(const char *self, const char *device) {
  double cold[PROC_REPS], warm[PROC_REPS], init[PROC_REPS], get[PROC_REPS], first[PROC_REPS];
  char name[48], warm_dir[4200], what[160];
  for (int r = 0; r < PROC_REPS; r++) {
    snprintf(name, sizeof name, "proc-%s-%d", device, r);
    cold[r] = child(self, device, subdir(name)).total;
  }
  snprintf(name, sizeof name, "proc-%s-0", device); /* filled by the first cold run */
  snprintf(warm_dir, sizeof warm_dir, "%s", subdir(name));
  for (int r = 0; r < PROC_REPS; r++) {
    Startup s = child(self, device, warm_dir);
    warm[r] = s.total, init[r] = s.init, get[r] = s.get, first[r] = s.first;
  }
  snprintf(what, sizeof what, "kern_init to the first %s launch finished, cold cache (new process)",
           device);
  add(what, bench_median(cold, PROC_REPS), -1, "", -1);
  snprintf(what, sizeof what, "kern_init to the first %s launch finished, warm cache (new process)",
           device);
  add(what, bench_median(warm, PROC_REPS), -1, "", -1);
  add("  of which kern_init", bench_median(init, PROC_REPS), -1, "", -1);
  if (!strcmp(device, "cpu")) return;
  snprintf(what, sizeof what,
           "  of which finding the GPUs: kern_device_get(\"%s\") (driver, cuInit, count)", device);
  add(what, bench_median(get, PROC_REPS), -1, "", -1);
  snprintf(what, sizeof what, "  of which %s's first use: its context and stream (first array)",
           device);
  add(what, bench_median(first, PROC_REPS), -1, "", -1);
}

/* ---- main ------------------------------------------------------------------------------------------------- */

static void print_table(void) {
  printf(
      "| what | kern (ms) | floor (ms) | kern / floor | target | met |\n|---|---:|---:|---:|---|---|\n");
  for (int i = 0; i < nrows; i++) {
    Row *r = &rows[i];
    char fl[32] = "", ratio[32] = "";
    if (r->floor >= 0) {
      snprintf(fl, sizeof fl, "%.1f", 1e3 * r->floor);
      snprintf(ratio, sizeof ratio, "%.2f", r->kern / r->floor);
    }
    printf("| %s | %.*f | %s | %s | %s | %s |\n", r->what, r->kern < 0.01 ? 2 : 1, 1e3 * r->kern,
           fl, ratio, r->target,
           r->met < 0 ? ""
           : r->met   ? "yes"
                      : "no");
  }
}

static int write_csv(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "what,kern_ms,floor_ms,kern_over_floor,target,met\n");
  for (int i = 0; i < nrows; i++) {
    Row *r = &rows[i];
    const char *w = r->what;
    while (*w == ' ') w++;
    fprintf(f, "\"%s\",%.4f,", w, 1e3 * r->kern);
    if (r->floor >= 0)
      fprintf(f, "%.4f,%.3f,", 1e3 * r->floor, r->kern / r->floor);
    else
      fprintf(f, ",,");
    fprintf(f, "\"%s\",%s\n", r->target, r->met < 0 ? "" : r->met ? "yes" : "no");
  }
  return fclose(f) != 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--first-launch")) return first_launch(argv[2]);
  const char *csv = argc == 3 && !strcmp(argv[1], "--csv") ? argv[2] : NULL;
  bool startup = argc == 2 && !strcmp(argv[1], "--startup");
  if (argc != 1 && !csv && !startup) {
    fprintf(stderr, "usage: bench_compile [--csv FILE | --startup]\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/kern-bench-compile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    perror(root);
    return 1;
  }
  atexit(remove_root);
  if (kern_init() != KERN_OK) die("kern_init");
  if (!startup) {
    bench_cpu(c_compiler());
    bench_nvrtc();
    bench_gpu();
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    perror("/proc/self/exe");
    return 1;
  }
  self[n] = 0;
  bench_first_launch(self, "cpu");
  if (kern_device_get("cuda:0")) bench_first_launch(self, "cuda:0");
  print_table();
  return csv ? write_csv(csv) : 0;
}
