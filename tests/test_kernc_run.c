/* test_kernc_run.c: `kernc run`: every example kernel launched from the shell
 * with its results checked against plain C; .npy files read and written
 * (checked byte by byte with a reader written here); bad arguments and files
 * refused with the right exit code.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "kern.h"

#define EX(name) KERN_SOURCE_DIR "/examples/" name

/* ---- helpers ------------------------------------------------------------------ */

static char *tmp_dir(void) {
  char *d = strdup("/tmp/kern-run-XXXXXX");
  cr_assert(mkdtemp(d));
  return d;
}

static void rm_rf(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  th_run(cmd, NULL);
}

/* Runs kernc with printf-formatted arguments; exit status, output in *out. */
static int kernc(char **out, const char *fmt, ...) {
  char cmd[8192];
  int n = snprintf(cmd, sizeof cmd, "%s ", KERNC_PATH);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
  va_end(ap);
  char *o;
  int rc = th_run(cmd, &o);
  if (out)
    *out = o;
  else
    free(o);
  return rc;
}

/* A .npy file as this test reads it: version 1.0, the header text, the data. */
typedef struct Npy {
  char *bytes;
  size_t len;
  char header[1024];
  const char *data;
  size_t nbytes;
} Npy;

static Npy load_npy(const char *dir, const char *name) {
  Npy n;
  memset(&n, 0, sizeof n);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  n.bytes = th_read_file(path, &n.len);
  cr_assert(n.bytes, "no %s", path);
  cr_assert(n.len >= 10 && memcmp(n.bytes, "\x93NUMPY\x01\x00", 8) == 0, "%s: bad magic or version",
            name);
  size_t hl = (unsigned char)n.bytes[8] | (size_t)(unsigned char)n.bytes[9] << 8;
  cr_assert(10 + hl <= n.len && hl < sizeof n.header);
  cr_expect_eq((10 + hl) % 64, 0, "data is 64-byte aligned");
  cr_expect_eq(n.bytes[10 + hl - 1], '\n');
  memcpy(n.header, n.bytes + 10, hl);
  n.data = n.bytes + 10 + hl;
  n.nbytes = n.len - 10 - hl;
  return n;
}

static void expect_header(const Npy *n, const char *descr, const char *shape) {
  char want[512];
  snprintf(want, sizeof want, "{'descr': %s, 'fortran_order': False, 'shape': %s, }", descr, shape);
  cr_expect(strncmp(n->header, want, strlen(want)) == 0, "header '%s', expected '%s'", n->header,
            want);
}

/* Writes a .npy file: version 1.0 (or 2.0) with the header padded to 64 bytes. */
static void save_npy(const char *dir, const char *name, const char *header, const void *data,
                     size_t nbytes, int major) {
  char path[4200], h[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t pre = major == 1 ? 10 : 12, hl = strlen(header) + 1;
  size_t padded = (pre + hl + 63) / 64 * 64 - pre;
  memset(h, ' ', sizeof h);
  memcpy(h, header, strlen(header));
  h[padded - 1] = '\n';
  FILE *f = fopen(path, "wb");
  cr_assert(f);
  unsigned char magic[12] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             (unsigned char)major,
                             0,
                             (unsigned char)(padded & 255),
                             (unsigned char)(padded >> 8),
                             0,
                             0};
  fwrite(magic, 1, pre, f);
  fwrite(h, 1, padded, f);
  fwrite(data, 1, nbytes, f);
  fclose(f);
}

/* ---- the examples ---------------------------------------------------------------- */

Test(kernc_run, saxpy_prints_a_summary_of_each_array) {
  char *out;
  int rc = kernc(&out, "run %s saxpy --arg x=range:1000 --arg y=ones:1000 --arg a=2.5",
                 EX("saxpy.kern"));
  cr_assert_eq(rc, 0, "%s", out);
  /* y = 2.5 * i + 1: min 1, max 2498.5, mean 2.5 * 499.5 + 1 */
  cr_expect(
      strstr(out,
             "x: float32[1000]\n  min 0  max 999  mean 499.5\n  [0, 1, 2, 3, 4, 5, 6, 7, ...]\n"),
      "%s", out);
  cr_expect(
      strstr(
          out,
          "y: float32[1000]\n  min 1  max 2498.5  mean 1249.75\n  [1, 3.5, 6, 8.5, 11, 13.5, 16, 18.5, ...]\n"),
      "%s", out);
  free(out);
}

Test(kernc_run, saxpy_writes_every_array_with_out) {
  char *dir = tmp_dir(), *out;
  int rc = kernc(&out, "run %s saxpy --arg x=range:1000 --arg y=ones:1000 --arg a=2.5 --out %s",
                 EX("saxpy.kern"), dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  Npy y = load_npy(dir, "y.npy"), x = load_npy(dir, "x.npy");
  expect_header(&y, "'<f4'", "(1000,)");
  cr_assert_eq(y.nbytes, 4000);
  const float *v = (const float *)y.data;
  for (int i = 0; i < 1000; i++) cr_expect_eq(v[i], 2.5f * (float)i + 1.0f, "y[%d] = %g", i, v[i]);
  cr_expect_eq(x.nbytes, 4000);
  cr_expect_eq(((const float *)x.data)[999], 999.0f);
  free(y.bytes);
  free(x.bytes);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, histogram_counts_every_value) {
  char *dir = tmp_dir(), *out;
  int rc = kernc(&out, "run %s histogram --arg values=range:1000 --arg bins=zeros:7 --out %s",
                 EX("histogram.kern"), dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  Npy b = load_npy(dir, "bins.npy");
  expect_header(&b, "'<i4'", "(7,)");
  cr_assert_eq(b.nbytes, 28);
  for (int k = 0; k < 7; k++)
    cr_expect_eq(((const int32_t *)b.data)[k], k < 6 ? 143 : 142, "bin %d", k);
  free(b.bytes);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, stencil_keeps_a_linear_field) {
  char *dir = tmp_dir(), *out;
  /* On a linear field the average of the four neighbours is the centre value. */
  int rc = kernc(&out, "run %s jacobi --arg src=range:9,11 --arg dst=zeros:9,11 --out %s",
                 EX("stencil.kern"), dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  Npy d = load_npy(dir, "dst.npy");
  expect_header(&d, "'<f4'", "(9, 11)");
  cr_assert_eq(d.nbytes, 99 * 4);
  for (int i = 0; i < 99; i++) cr_expect_eq(((const float *)d.data)[i], (float)i, "dst[%d]", i);
  free(d.bytes);
  rm_rf(dir);
  free(dir);
}

/* nbody.kern's Body: vec3 pos, vec3 vel, float mass (28 bytes). */
typedef struct Body {
  float pos[3], vel[3], mass;
} Body;

static void nbody_reference(const Body *in, Body *out, int n, float dt) {
  for (int i = 0; i < n; i++) {
    float a[3] = {0, 0, 0};
    for (int j = 0; j < n; j++) {
      float d[3], r2 = 0;
      for (int c = 0; c < 3; c++) d[c] = in[j].pos[c] - in[i].pos[c], r2 += d[c] * d[c];
      r2 += 0.01f * 0.01f;
      float s = in[j].mass * (1.0f / sqrtf(r2 * r2 * r2));
      for (int c = 0; c < 3; c++) a[c] += d[c] * s;
    }
    out[i] = in[i];
    for (int c = 0; c < 3; c++) out[i].vel[c] += a[c] * dt, out[i].pos[c] += out[i].vel[c] * dt;
  }
}

Test(kernc_run, nbody_reads_and_writes_struct_arrays) {
  enum { N = 5 };
  char *dir = tmp_dir(), *out;
  Body in[N], want[N];
  for (int i = 0; i < N; i++)
    in[i] =
        (Body){{(float)i, (float)(i * i % 3), -(float)i}, {0.1f * (float)i, 0, 0}, 1.0f + (float)i};
  save_npy(dir, "bodies.npy", "{'descr': '|V28', 'fortran_order': False, 'shape': (5,), }", in,
           sizeof in, 1);
  int rc = kernc(
      &out,
      "run %s integrate --arg bodies=file:%s/bodies.npy --arg out=zeros:5 --arg dt=0.01 --out %s",
      EX("nbody.kern"), dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  nbody_reference(in, want, N, 0.01f);
  Npy o = load_npy(dir, "out.npy"), b = load_npy(dir, "bodies.npy");
  expect_header(&o, "[('pos', '<f4', (3,)), ('vel', '<f4', (3,)), ('mass', '<f4')]", "(5,)");
  cr_assert_eq(o.nbytes, sizeof want);
  const float *got = (const float *)o.data, *ref = (const float *)want;
  for (int i = 0; i < N * 7; i++)
    cr_expect(fabsf(got[i] - ref[i]) <= 1e-5f * fmaxf(1.0f, fabsf(ref[i])),
              "component %d: %g vs %g", i, got[i], ref[i]);
  /* The input comes back unchanged, byte for byte. */
  cr_expect(b.nbytes == sizeof in && memcmp(b.data, in, sizeof in) == 0);
  free(o.bytes);
  free(b.bytes);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, examples_run_on_cuda_too) {
  kern_device *d = kern_device_get("cuda:0");
  if (!d) cr_skip_test("no CUDA device: %s", kern_last_error());
  char *out;
  int rc =
      kernc(&out, "run %s saxpy --device=cuda:0 --arg x=range:100000 --arg y=ones:100000 --arg a=2",
            EX("saxpy.kern"));
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, "y: float32[100000]\n  min 1  max 199999  mean 100000\n"), "%s", out);
  free(out);
  rc = kernc(&out, "run %s histogram --device=cuda:0 --arg values=range:1000 --arg bins=zeros:10",
             EX("histogram.kern"));
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, "bins: int32[10]\n  min 100  max 100  mean 100\n"), "%s", out);
  free(out);
}

/* ---- .npy round trips --------------------------------------------------------------------------- */

static const char copy_kern[] =
    "kernel void twice(int16[,] a, int16[,] b) {\n"
    "    int i = tid(0);\n    int j = tid(1);\n"
    "    b[i, j] = int16(int(a[i, j]) * 2);\n}\n"
    "kernel void shift(vec3[] v, vec3 d) {\n    int i = tid();\n    v[i] = v[i] + d;\n}\n"
    "kernel void values(int64[] o, int64 a, uint8 b, bool c, double d, int8 e) {\n"
    "    o[0] = a;\n    o[1] = int64(b);\n    o[2] = c ? 1l : 0l;\n    o[3] = int64(d * 4.0);\n    o[4] = int64(e);\n}\n";

static void write_kern(const char *dir) {
  char p[4200];
  snprintf(p, sizeof p, "%s/t.kern", dir);
  FILE *f = fopen(p, "w");
  cr_assert(f);
  fputs(copy_kern, f);
  fclose(f);
}

Test(kernc_run, npy_round_trip_of_a_2d_int16_array_v1_and_v2) {
  char *dir = tmp_dir(), *out;
  write_kern(dir);
  int16_t a[3][4];
  for (int i = 0; i < 12; i++) a[i / 4][i % 4] = (int16_t)(i * 1000 - 5000);
  save_npy(dir, "a.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (3, 4), }", a, sizeof a,
           1);
  save_npy(dir, "a2.npy", "{\"descr\": \"<i2\", \"shape\": (3,4), \"fortran_order\": False}", a,
           sizeof a, 2);
  for (int v = 0; v < 2; v++) {
    int rc = kernc(&out, "run %s/t.kern twice --arg a=file:%s/%s --arg b=zeros:3,4 --out %s/out%d",
                   dir, dir, v ? "a2.npy" : "a.npy", dir, v);
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/out%d", dir, v);
    Npy b = load_npy(sub, "b.npy"), back = load_npy(sub, "a.npy");
    expect_header(&b, "'<i2'", "(3, 4)");
    cr_assert_eq(b.nbytes, sizeof a);
    for (int i = 0; i < 12; i++)
      cr_expect_eq(((const int16_t *)b.data)[i], (int16_t)(2 * (i * 1000 - 5000)), "b[%d]", i);
    cr_expect(back.nbytes == sizeof a && memcmp(back.data, a, sizeof a) == 0, "a.npy round trip");
    free(b.bytes);
    free(back.bytes);
  }
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, vector_arrays_are_npy_arrays_with_a_last_dim) {
  char *dir = tmp_dir(), *out;
  write_kern(dir);
  float v[4][3];
  for (int i = 0; i < 12; i++) v[i / 3][i % 3] = (float)i;
  save_npy(dir, "v.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", v, sizeof v,
           1);
  int rc = kernc(&out, "run %s/t.kern shift --arg v=file:%s/v.npy --arg d=10,20,30 --out %s", dir,
                 dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  Npy r = load_npy(dir, "v.npy");
  expect_header(&r, "'<f4'", "(4, 3)");
  for (int i = 0; i < 12; i++)
    cr_expect_eq(((const float *)r.data)[i], (float)i + 10.0f * (float)(i % 3 + 1), "v %d", i);
  free(r.bytes);
  /* A vec3 array without the last dim of 3 does not fit. */
  save_npy(dir, "w.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (12,), }", v, sizeof v,
           1);
  cr_expect_eq(kernc(&out, "run %s/t.kern shift --arg v=file:%s/w.npy --arg d=1,2,3", dir, dir), 1,
               "%s", out);
  cr_expect(strstr(out, "does not fit parameter 'v'"), "%s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, scalar_literals_take_the_parameter_type) {
  char *dir = tmp_dir(), *out;
  write_kern(dir);
  int rc =
      kernc(&out,
            "run %s/t.kern values --arg o=zeros:5 --arg a=-9000000000 --arg b=0xff --arg c=true "
            "--arg d=2.25 --arg e=-128 --dim=1 --out %s",
            dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  Npy o = load_npy(dir, "o.npy");
  expect_header(&o, "'<i8'", "(5,)");
  const int64_t want[5] = {-9000000000LL, 255, 1, 9, -128};
  cr_expect(o.nbytes == sizeof want && memcmp(o.data, want, sizeof want) == 0);
  free(o.bytes);
  const char *bad[] = {"b=256", "b=-1", "e=128", "a=12x", "c=yes", "d=", "a=99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[512] = "";
    const char *names[] = {"a=1", "b=1", "c=true", "d=1", "e=1"};
    for (int k = 0; k < 5; k++)
      if (names[k][0] != bad[i][0])
        snprintf(args + strlen(args), sizeof args - strlen(args), " --arg %s", names[k]);
    rc = kernc(&out, "run %s/t.kern values --arg o=zeros:5 --arg %s%s --dim=1", dir, bad[i], args);
    cr_expect_eq(rc, 2, "%s: %s", bad[i], out);
    cr_expect(strstr(out, "bad value"), "%s: %s", bad[i], out);
    free(out);
  }
  rm_rf(dir);
  free(dir);
}

/* ---- refusals ------------------------------------------------------------------------------------------- */

Test(kernc_run, bad_files_are_user_errors) {
  char *dir = tmp_dir(), *out;
  write_kern(dir);
  int32_t a[6] = {0}; /* big enough for every case */
  struct {
    const char *name, *header, *want;
    size_t nbytes;
  } cases[] = {
      {"f.npy", "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", "Fortran-ordered",
       12},
      {"be.npy", "{'descr': '>i2', 'fortran_order': False, 'shape': (2, 3), }", "big-endian", 12},
      {"short.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }",
       "has 10 data bytes", 10},
      {"type.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "does not fit",
       24},
      {"dims.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (6,), }", "does not fit", 12},
      {"junk.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3", "malformed header",
       12},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    save_npy(dir, cases[i].name, cases[i].header, a, cases[i].nbytes, 1);
    int rc = kernc(&out, "run %s/t.kern twice --arg a=file:%s/%s --arg b=zeros:2,3", dir, dir,
                   cases[i].name);
    cr_expect_eq(rc, 1, "%s: %s", cases[i].name, out);
    cr_expect(strstr(out, cases[i].want), "%s: %s", cases[i].name, out);
    free(out);
  }
  char p[4200];
  snprintf(p, sizeof p, "%s/notnpy.npy", dir);
  FILE *f = fopen(p, "w");
  fputs("hello", f);
  fclose(f);
  cr_expect_eq(kernc(&out, "run %s/t.kern twice --arg a=file:%s --arg b=zeros:2,3", dir, p), 1,
               "%s", out);
  cr_expect(strstr(out, "bad magic"), "%s", out);
  free(out);
  cr_expect_eq(
      kernc(&out, "run %s/t.kern twice --arg a=file:%s/none.npy --arg b=zeros:2,3", dir, dir), 1,
      "%s", out);
  free(out);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, bad_arguments_are_usage_errors) {
  char *out;
  const char *bad[] = {
      "--arg x=range:10 --arg y=ones:10",                           /* a missing */
      "--arg x=range:10 --arg y=ones:10 --arg a=1 --arg z=1",       /* no such parameter */
      "--arg x=range:10 --arg y=ones:10 --arg a=1 --arg a=2",       /* twice */
      "--arg x=range:10,2 --arg y=ones:10 --arg a=1",               /* wrong ndim */
      "--arg x=fill:10 --arg y=ones:10 --arg a=1",                  /* unknown generator */
      "--arg x=range:10 --arg y=ones:10 --arg a=1 --dim=1,2,3,4,5", /* too many dims */
      "--arg x=range:10 --arg y=ones:10 --arg a",                   /* no = */
      "--arg x=range:10 --arg y=ones:10 --arg a=1 --frobnicate",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = kernc(&out, "run %s saxpy %s", EX("saxpy.kern"), bad[i]);
    cr_expect_eq(rc, 2, "%s: %s", bad[i], out);
    free(out);
  }
  cr_expect_eq(kernc(&out, "run %s", EX("saxpy.kern")), 2, "no kernel: %s", out);
  free(out);
  cr_expect_eq(kernc(&out, "run %s nosuch --arg x=1", EX("saxpy.kern")), 1, "%s", out);
  cr_expect(strstr(out, "no kernel 'nosuch'") && strstr(out, "'saxpy'"), "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, "run %s saxpy --device=cuda:7 --arg x=range:1 --arg y=ones:1 --arg a=1",
                     EX("saxpy.kern")),
               1, "%s", out);
  free(out);
}

Test(kernc_run, launch_and_output_failures_exit_1_without_partial_files) {
  char *dir = tmp_dir(), *out;
  /* y shorter than the launch: debug mode reports the bad index. */
  int rc = kernc(&out, "run %s saxpy --debug --arg x=range:10 --arg y=ones:5 --arg a=1 --out %s/o",
                 EX("saxpy.kern"), dir);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "out-of-bounds"), "%s", out);
  free(out);
  char p[4200];
  snprintf(p, sizeof p, "%s/file", dir);
  FILE *f = fopen(p, "w");
  fclose(f);
  rc = kernc(&out, "run %s saxpy --arg x=range:10 --arg y=ones:10 --arg a=1 --out %s/file/o",
             EX("saxpy.kern"), dir);
  cr_expect_eq(rc, 1, "%s", out);
  free(out);
  char *ls;
  snprintf(p, sizeof p, "ls -A %s | tr '\\n' ' '", dir);
  th_run(p, &ls);
  cr_expect_str_eq(ls, "file ", "%s", ls);
  free(ls);
  rm_rf(dir);
  free(dir);
}

/* ---- safe by default ------------------------------------------------------------- */

static char *kern_file(const char *dir, const char *src) {
  char *path = malloc(4200);
  snprintf(path, 4200, "%s/t.kern", dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs(src, f);
  fclose(f);
  return path;
}

Test(kernc_run, bounds_are_checked_without_asking) {
  char *out;
  int rc = kernc(&out, "run %s saxpy --arg x=range:10 --arg y=ones:5 --arg a=1", EX("saxpy.kern"));
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "out-of-bounds") && strstr(out, "parameter 'y'"), "%s", out);
  free(out);
  rc = kernc(&out, "run %s saxpy --release --debug --arg x=range:1 --arg y=ones:1 --arg a=1",
             EX("saxpy.kern"));
  cr_expect_eq(rc, 2, "%s", out);
  free(out);
}

Test(kernc_run, a_crash_with_release_becomes_a_message) {
  char *dir = tmp_dir(), *out;
  char *path = kern_file(dir, "kernel void far(int[] a) {\n    a[tid() + 1000000000] = 1;\n}\n");
  int rc = kernc(&out, "run %s far --release --arg a=zeros:4", path);
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "kernc: the kernel crashed the process: a segmentation fault") &&
                strstr(out, "without --release"),
            "%s", out);
  free(out);
  rc = kernc(&out, "run %s far --arg a=zeros:4", path); /* the default names the index */
  cr_expect_eq(rc, 1, "%s", out);
  cr_expect(strstr(out, "index [1000000000] is outside shape [4]"), "%s", out);
  free(out);
  free(path);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, dims_no_array_covers_are_refused) {
  char *dir = tmp_dir(), *out;
  char *path = kern_file(dir, "kernel void guarded(float[] x) {\n    int i = tid();\n"
                              "    if (i < len(x)) x[i] = 1;\n}\n"
                              "kernel void grid(int[,] g, int[] row) {\n"
                              "    int i = tid(0);\n    int j = tid(1);\n"
                              "    if (i < shape(g, 0) && j < shape(g, 1)) g[i, j] = 1;\n}\n");
  int rc = kernc(&out, "run %s guarded --arg x=zeros:8 --dim=100", path);
  cr_expect_eq(rc, 2, "%s", out);
  cr_expect(strstr(out, "launch dims 100 are larger than every array argument") &&
                strstr(out, "'x', shape 8") && strstr(out, "--release"),
            "%s", out);
  free(out);
  rc = kernc(&out, "run %s guarded --arg x=zeros:8 --dim=100 --release", path);
  cr_expect_eq(rc, 0, "--release launches anyway: %s", out);
  cr_expect(strstr(out, "min 1  max 1"), "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, "run %s guarded --arg x=zeros:8 --dim=8", path), 0, "%s", out);
  free(out);
  /* 2-D: dim by dim against the 2-D array; the 1-D one by its element count. */
  rc = kernc(&out, "run %s grid --arg g=zeros:4,4 --arg row=zeros:3 --dim=4,5", path);
  cr_expect_eq(rc, 2, "%s", out);
  cr_expect(strstr(out, "launch dims 4,5") && strstr(out, "'g', shape 4,4"), "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, "run %s grid --arg g=zeros:4,4 --arg row=zeros:20 --dim=4,5", path), 0,
               "%s", out);
  free(out);
  cr_expect_eq(kernc(&out, "run %s grid --arg g=zeros:4,4 --arg row=zeros:3 --dim=2,3", path), 0,
               "%s", out);
  free(out);
  free(path);
  rm_rf(dir);
  free(dir);
}

Test(kernc_run, an_unknown_device_is_bad_usage_with_the_list) {
  char *out;
  int rc = kernc(&out, "run %s saxpy --device=gpu --arg x=range:1 --arg y=ones:1 --arg a=1",
                 EX("saxpy.kern"));
  cr_expect_eq(rc, 2, "%s", out);
  cr_expect(strstr(out, "bad device name 'gpu'") && strstr(out, "the devices here: cpu"), "%s",
            out);
  free(out);
  rc = kernc(&out, "run %s saxpy --device=cuda:7 --arg x=range:1 --arg y=ones:1 --arg a=1",
             EX("saxpy.kern"));
  cr_expect_eq(rc, 1, "an absent device is not bad usage: %s", out);
  cr_expect(strstr(out, "the devices here: cpu"), "%s", out);
  free(out);
}

/* A NumPy bool array may hold any byte: kern reads 2 and 255 as true, and
 * writes the array back with proper 0/1 bools. */
Test(kernc_run, a_bool_npy_with_other_bytes_reads_as_true) {
  char *dir = tmp_dir(), *out, p[4200];
  snprintf(p, sizeof p, "%s/b.kern", dir);
  FILE *f = fopen(p, "w");
  cr_assert(f);
  fputs("kernel void k(bool[] b, int[] o) { int i = tid(); o[i] = b[i] ? 1 : 0; }\n", f);
  fclose(f);
  const unsigned char bytes[4] = {0, 1, 2, 255};
  save_npy(dir, "b.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", bytes, 4, 1);
  int rc = kernc(&out, "run %s/b.kern k --arg b=file:%s/b.npy --arg o=zeros:4 --out %s/out", dir,
                 dir, dir);
  cr_assert_eq(rc, 0, "%s", out);
  free(out);
  snprintf(p, sizeof p, "%s/out", dir);
  Npy b = load_npy(p, "b.npy"), o = load_npy(p, "o.npy");
  cr_assert_eq(b.nbytes, 4);
  for (int i = 0; i < 4; i++) {
    cr_expect_eq((unsigned char)b.data[i], bytes[i] != 0, "b[%d] = %d", i, b.data[i]);
    cr_expect_eq(((const int32_t *)o.data)[i], bytes[i] != 0, "o[%d]", i);
  }
  free(b.bytes);
  free(o.bytes);
  rm_rf(dir);
  free(dir);
}
