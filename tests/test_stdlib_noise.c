/* test_stdlib_noise.c: stdlib/kern_noise.h (noise, pnoise, curlnoise)
 * against a plain C reference written here.
 *
 * Requires the stdlib headers on the include path (compiled here as C, the
 * same text NVRTC compiles: tests/test_stdlib_table.c compiles every table entry
 * for both). The reference spells out Warp's formulas dimension by
 * dimension, as warp/native/noise.h does (noise_1d, noise_2d, noise_3d and
 * their gradients, corner by corner), over kern's random stream, with the
 * same float32 operations in the same order: it must agree bit for bit. The
 * properties of gradient noise are checked too: zero on the lattice,
 * continuity across cells, bounds, periods (negative coordinates included),
 * and curlnoise against finite differences of noise.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kern_builtins.h"
#include "kern_math.h"
#include "kern_spatial.h"
#include "kern_transform.h"
#include "kern_spatial_algebra.h"
#include "kern_linalg.h"
#include "kern_noise.h"

static uint64_t lcg = 0x6a09e667f3bcc909ull;
static float urand(float lo, float hi) {
  lcg ^= lcg << 13, lcg ^= lcg >> 7, lcg ^= lcg << 17;
  return lo + (hi - lo) * (float)((double)(lcg >> 11) / 9007199254740992.0);
}

/* ===== the reference ========================================================== */

static float ssm(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }
static float ssm_d(float t) { return 30.0f * t * t * (t * (t - 2.0f) + 1.0f); }
static float interp(float a0, float a1, float t) { return (a1 - a0) * ssm(t) + a0; }

#define P1 73856093u
#define P2 19349663u
#define P3 53471161u

static float grad1(uint32_t st, int ix) {
  uint32_t idx = (uint32_t)ix * P1 + st;
  return kn_randf_range(&idx, -1.0f, 1.0f);
}
static kn_vec2 grad2(uint32_t st, int ix, int iy) {
  uint32_t idx = (uint32_t)ix * P1 ^ ((uint32_t)iy * P2 + st); /* Warp's, as C parses it */
  return kn_normalize_v2(kn_rand_sample_unit_square_1(&idx));
}
static kn_vec3 grad3(uint32_t st, int ix, int iy, int iz) {
  uint32_t idx = (uint32_t)ix * P1 ^ (uint32_t)iy * P2 ^ ((uint32_t)iz * P3 + st);
  return kn_normalize_v3(kn_rand_sample_unit_cube_1(&idx));
}

static float ref1(uint32_t st, int x0, int x1, float dx) {
  return interp(dx * grad1(st, x0), (dx - 1.0f) * grad1(st, x1), dx);
}

static float dot2(uint32_t st, int ix, int iy, float dx, float dy) {
  kn_vec2 g = grad2(st, ix, iy);
  return dx * g.x + dy * g.y;
}
static float ref2(uint32_t st, int x0, int y0, int x1, int y1, float dx, float dy) {
  float xi0 = interp(dot2(st, x0, y0, dx, dy), dot2(st, x1, y0, dx - 1.0f, dy), dx);
  float xi1 = interp(dot2(st, x0, y1, dx, dy - 1.0f), dot2(st, x1, y1, dx - 1.0f, dy - 1.0f), dx);
  return interp(xi0, xi1, dy);
}

static float dot3(uint32_t st, int ix, int iy, int iz, float dx, float dy, float dz) {
  kn_vec3 g = grad3(st, ix, iy, iz);
  return dx * g.x + dy * g.y + dz * g.z;
}
static float ref3(uint32_t st, const int *lo, const int *hi, float dx, float dy, float dz) {
  float e = dx - 1.0f, f = dy - 1.0f, h = dz - 1.0f;
  float xi00 = interp(dot3(st, lo[0], lo[1], lo[2], dx, dy, dz),
                      dot3(st, hi[0], lo[1], lo[2], e, dy, dz), dx);
  float xi10 =
      interp(dot3(st, lo[0], hi[1], lo[2], dx, f, dz), dot3(st, hi[0], hi[1], lo[2], e, f, dz), dx);
  float xi01 =
      interp(dot3(st, lo[0], lo[1], hi[2], dx, dy, h), dot3(st, hi[0], lo[1], hi[2], e, dy, h), dx);
  float xi11 =
      interp(dot3(st, lo[0], hi[1], hi[2], dx, f, h), dot3(st, hi[0], hi[1], hi[2], e, f, h), dx);
  return interp(interp(xi00, xi10, dy), interp(xi01, xi11, dy), dz);
}

/* Warp's interpolate_gradient_2d: d(lerp)/d(point) from the corners' gradients. */
static kn_vec2 igrad2(float a0, float a1, float t, kn_vec2 d0, kn_vec2 d1, kn_vec2 dt) {
  kn_vec2 r;
  r.x = (d1.x - d0.x) * ssm(t) + (a1 - a0) * ssm_d(t) * dt.x + d0.x;
  r.y = (d1.y - d0.y) * ssm(t) + (a1 - a0) * ssm_d(t) * dt.y + d0.y;
  return r;
}
/* Warp's noise_2d_gradient. */
static kn_vec2 ref2_grad(uint32_t st, int x0, int y0, int x1, int y1, float dx, float dy) {
  kn_vec2 g00 = grad2(st, x0, y0), g10 = grad2(st, x1, y0);
  kn_vec2 g01 = grad2(st, x0, y1), g11 = grad2(st, x1, y1);
  float v00 = dx * g00.x + dy * g00.y, v10 = (dx - 1.0f) * g10.x + dy * g10.y;
  float v01 = dx * g01.x + (dy - 1.0f) * g01.y, v11 = (dx - 1.0f) * g11.x + (dy - 1.0f) * g11.y;
  kn_vec2 ex = {1, 0}, ey = {0, 1};
  float xi0 = interp(v00, v10, dx), xi1 = interp(v01, v11, dx);
  kn_vec2 gx0 = igrad2(v00, v10, dx, g00, g10, ex), gx1 = igrad2(v01, v11, dx, g01, g11, ex);
  return igrad2(xi0, xi1, dy, gx0, gx1, ey);
}

static int ifloor(float x) { return (int)floorf(x); }

/* Warp's interpolate_gradient_3d and noise_3d_gradient, corner by corner. */
static kn_vec3 igrad3(float a0, float a1, float t, kn_vec3 d0, kn_vec3 d1, kn_vec3 dt) {
  kn_vec3 r;
  r.x = (d1.x - d0.x) * ssm(t) + (a1 - a0) * ssm_d(t) * dt.x + d0.x;
  r.y = (d1.y - d0.y) * ssm(t) + (a1 - a0) * ssm_d(t) * dt.y + d0.y;
  r.z = (d1.z - d0.z) * ssm(t) + (a1 - a0) * ssm_d(t) * dt.z + d0.z;
  return r;
}
static kn_vec3 ref3_grad(uint32_t st, const int *lo, const int *hi, float dx, float dy, float dz) {
  kn_vec3 g[8];
  float v[8];
  for (int c = 0; c < 8; c++) { /* c = x + 2y + 4z, bit set: the upper corner */
    int x = c & 1, y = (c >> 1) & 1, z = c >> 2;
    g[c] = grad3(st, x ? hi[0] : lo[0], y ? hi[1] : lo[1], z ? hi[2] : lo[2]);
    float ox = x ? dx - 1.0f : dx, oy = y ? dy - 1.0f : dy, oz = z ? dz - 1.0f : dz;
    v[c] = ox * g[c].x + oy * g[c].y + oz * g[c].z;
  }
  kn_vec3 ex = {1, 0, 0}, ey = {0, 1, 0}, ez = {0, 0, 1};
  float xi00 = interp(v[0], v[1], dx), xi10 = interp(v[2], v[3], dx);
  float xi01 = interp(v[4], v[5], dx), xi11 = interp(v[6], v[7], dx);
  kn_vec3 gx00 = igrad3(v[0], v[1], dx, g[0], g[1], ex),
          gx10 = igrad3(v[2], v[3], dx, g[2], g[3], ex);
  kn_vec3 gx01 = igrad3(v[4], v[5], dx, g[4], g[5], ex),
          gx11 = igrad3(v[6], v[7], dx, g[6], g[7], ex);
  float yi0 = interp(xi00, xi10, dy), yi1 = interp(xi01, xi11, dy);
  kn_vec3 gy0 = igrad3(xi00, xi10, dy, gx00, gx10, ey),
          gy1 = igrad3(xi01, xi11, dy, gx01, gx11, ey);
  return igrad3(yi0, yi1, dz, gy0, gy1, ez);
}

/* Warp's noise_4d: 16 corners blended along x, y, z, then t. */
static float ref4(uint32_t st, const int *lo, const int *hi, const float *d) {
  float v[16];
  for (int c = 0; c < 16; c++) {
    int at[4];
    float off[4];
    for (int k = 0; k < 4; k++) {
      at[k] = (c >> k) & 1 ? hi[k] : lo[k];
      off[k] = (c >> k) & 1 ? d[k] - 1.0f : d[k];
    }
    uint32_t idx = (uint32_t)at[0] * P1 ^ (uint32_t)at[1] * P2 ^ (uint32_t)at[2] * P3 ^
                   ((uint32_t)at[3] * 10000019u + st);
    kn_vec4 g = kn_normalize_v4(kn_rand_sample_unit_hypercube_1(&idx));
    v[c] = off[0] * g.x + off[1] * g.y + off[2] * g.z + off[3] * g.w;
  }
  float x[8], y[4], z[2];
  for (int c = 0; c < 8; c++) x[c] = interp(v[2 * c], v[2 * c + 1], d[0]);
  for (int c = 0; c < 4; c++) y[c] = interp(x[2 * c], x[2 * c + 1], d[1]);
  for (int c = 0; c < 2; c++) z[c] = interp(y[2 * c], y[2 * c + 1], d[2]);
  return interp(z[0], z[1], d[3]);
}

/* ===== against the reference ================================================== */

Test(noise, noise_1d_2d_3d_match_the_reference_bit_for_bit) {
  for (int i = 0; i < 20000; i++) {
    uint32_t st = kn_rand_init((uint32_t)i, 99u);
    float x = urand(-50, 50), y = urand(-50, 50), z = urand(-50, 50);
    float dx = x - floorf(x), dy = y - floorf(y), dz = z - floorf(z);
    int lo[3] = {ifloor(x), ifloor(y), ifloor(z)}, hi[3] = {lo[0] + 1, lo[1] + 1, lo[2] + 1};
    float n1 = kn_noise_u32_f32(st, x), r1 = ref1(st, lo[0], hi[0], dx);
    cr_assert(memcmp(&n1, &r1, 4) == 0, "1D at %g: %a vs %a", x, n1, r1);
    float n2 = kn_noise_u32_v2(st, kn_make_v2(x, y));
    float r2 = ref2(st, lo[0], lo[1], hi[0], hi[1], dx, dy);
    cr_assert(memcmp(&n2, &r2, 4) == 0, "2D at (%g, %g): %a vs %a", x, y, n2, r2);
    float n3 = kn_noise_u32_v3(st, kn_make_v3(x, y, z)), r3 = ref3(st, lo, hi, dx, dy, dz);
    cr_assert(memcmp(&n3, &r3, 4) == 0, "3D: %a vs %a", n3, r3);
    /* pnoise: the lattice wrapped with a floored modulo */
    int px = 1 + i % 7, py = 2 + i % 5, wx = ((lo[0] % px) + px) % px,
        wy = ((lo[1] % py) + py) % py;
    float p2 = kn_pnoise_u32_v2_i32_i32(st, kn_make_v2(x, y), px, py);
    float q2 = ref2(st, wx, wy, (wx + 1) % px, (wy + 1) % py, dx, dy);
    cr_assert(memcmp(&p2, &q2, 4) == 0, "pnoise 2D: %a vs %a", p2, q2);
    float p1 = kn_pnoise_u32_f32_i32(st, x, px), q1 = ref1(st, wx, (wx + 1) % px, dx);
    cr_assert(memcmp(&p1, &q1, 4) == 0, "pnoise 1D: %a vs %a", p1, q1);
  }
}

Test(noise, noise_4d_and_pnoise_3d_4d_match_the_reference_bit_for_bit) {
  for (int i = 0; i < 20000; i++) {
    uint32_t st = kn_rand_init((uint32_t)i, 42u);
    float x[4] = {urand(-30, 30), urand(-30, 30), urand(-30, 30), urand(-30, 30)}, d[4];
    int lo[4], hi[4], plo[4], phi[4], per[4] = {1 + i % 5, 2 + i % 3, 3, 1 + i % 11};
    for (int k = 0; k < 4; k++) {
      d[k] = x[k] - floorf(x[k]), lo[k] = ifloor(x[k]), hi[k] = lo[k] + 1;
      plo[k] = ((lo[k] % per[k]) + per[k]) % per[k], phi[k] = (plo[k] + 1) % per[k];
    }
    float n4 = kn_noise_u32_v4(st, kn_make_v4(x[0], x[1], x[2], x[3])), r4 = ref4(st, lo, hi, d);
    cr_assert(memcmp(&n4, &r4, 4) == 0, "4D: %a vs %a", n4, r4);
    float p4 = kn_pnoise_u32_v4_i32_i32_i32_i32(st, kn_make_v4(x[0], x[1], x[2], x[3]), per[0],
                                                per[1], per[2], per[3]);
    float q4 = ref4(st, plo, phi, d);
    cr_assert(memcmp(&p4, &q4, 4) == 0, "pnoise 4D: %a vs %a", p4, q4);
    float p3 =
        kn_pnoise_u32_v3_i32_i32_i32(st, kn_make_v3(x[0], x[1], x[2]), per[0], per[1], per[2]);
    float q3 = ref3(st, plo, phi, d[0], d[1], d[2]);
    cr_assert(memcmp(&p3, &q3, 4) == 0, "pnoise 3D: %a vs %a", p3, q3);
  }
}

/* Warp's three-field curlnoise in 3D: the state moves on twice per octave. */
Test(noise, curlnoise_3d_matches_the_reference_bit_for_bit) {
  for (int i = 0; i < 5000; i++) {
    uint32_t st = kn_rand_init((uint32_t)i, 17u), s0 = st;
    kn_vec3 p = kn_make_v3(urand(-20, 20), urand(-20, 20), urand(-20, 20));
    kn_vec3 c1 = {0, 0, 0}, c2 = {0, 0, 0}, c3 = {0, 0, 0};
    float freq = 1, amp = 1, lac = 1.75f, gain = 0.6f;
    for (int o = 0; o < 3; o++) {
      kn_vec3 q = kn_mul_f32_v3(freq, p);
      int lo[3] = {ifloor(q.x), ifloor(q.y), ifloor(q.z)},
          hi[3] = {lo[0] + 1, lo[1] + 1, lo[2] + 1};
      float dx = q.x - floorf(q.x), dy = q.y - floorf(q.y), dz = q.z - floorf(q.z);
      kn_vec3 g1 = ref3_grad(st, lo, hi, dx, dy, dz);
      st = kn_rand_init(st, 10019689u);
      kn_vec3 g2 = ref3_grad(st, lo, hi, dx, dy, dz);
      st = kn_rand_init(st, 13112221u);
      kn_vec3 g3 = ref3_grad(st, lo, hi, dx, dy, dz);
      c1 = kn_add_v3_v3(c1, kn_mul_f32_v3(amp, g1));
      c2 = kn_add_v3_v3(c2, kn_mul_f32_v3(amp, g2));
      c3 = kn_add_v3_v3(c3, kn_mul_f32_v3(amp, g3));
      amp *= gain;
      freq *= lac;
    }
    kn_vec3 want = kn_make_v3(c3.y - c2.z, c1.z - c3.x, c2.x - c1.y);
    kn_vec3 got = kn_curlnoise_u32_v3_u32_f32_f32(s0, p, 3u, lac, gain);
    cr_assert(memcmp(&got, &want, sizeof got) == 0, "(%a, %a, %a) vs (%a, %a, %a)", got.x, got.y,
              got.z, want.x, want.y, want.z);
  }
}

Test(noise, curlnoise_2d_matches_the_reference_gradient) {
  for (int i = 0; i < 5000; i++) {
    uint32_t st = kn_rand_init((uint32_t)i, 5u);
    kn_vec2 p = kn_make_v2(urand(-20, 20), urand(-20, 20));
    kn_vec2 sum = {0, 0}, q;
    float freq = 1, amp = 1;
    for (int o = 0; o < 3; o++) { /* Warp's curlnoise loop, three octaves */
      q = kn_mul_f32_v2(freq, p);
      float dx = q.x - floorf(q.x), dy = q.y - floorf(q.y);
      int x0 = ifloor(q.x), y0 = ifloor(q.y);
      sum = kn_add_v2_v2(sum, kn_mul_f32_v2(amp, ref2_grad(st, x0, y0, x0 + 1, y0 + 1, dx, dy)));
      amp *= 0.5f;
      freq *= 2.0f;
    }
    kn_vec2 want = kn_make_v2(-sum.y, sum.x);
    kn_vec2 got = kn_curlnoise_u32_v2_u32_f32_f32(st, p, 3u, 2.0f, 0.5f);
    cr_assert(memcmp(&got, &want, sizeof got) == 0, "(%a, %a) vs (%a, %a)", got.x, got.y, want.x,
              want.y);
    /* Warp's defaults are 1 octave, lacunarity 2, gain 0.5 */
    kn_vec2 d1 = kn_curlnoise_u32_v2(st, p),
            e1 = kn_curlnoise_u32_v2_u32_f32_f32(st, p, 1u, 2, 0.5f);
    cr_assert(memcmp(&d1, &e1, sizeof d1) == 0);
  }
}

/* ===== properties ============================================================== */

Test(noise, zero_on_the_lattice_bounded_and_continuous) {
  uint32_t st = kn_rand_init(7u, 3u);
  for (int i = 0; i < 20000; i++) {
    int a = (int)urand(-1000, 1000), b = (int)urand(-1000, 1000), c = (int)urand(-100, 100);
    cr_assert_eq(kn_noise_u32_v3(st, kn_make_v3((float)a, (float)b, (float)c)), 0.0f);
    cr_assert_eq(kn_noise_u32_v4(st, kn_make_v4((float)a, (float)b, (float)c, 1.0f)), 0.0f);
    kn_vec4 p = kn_make_v4(urand(-9, 9), urand(-9, 9), urand(-9, 9), urand(-9, 9));
    /* |noise| <= sqrt(n) / 2: each corner's dot is at most the offset's length */
    cr_assert_leq(fabsf(kn_noise_u32_v4(st, p)), 1.0f);
    cr_assert_leq(fabsf(kn_noise_u32_v3(st, kn_make_v3(p.x, p.y, p.z))), 0.8661f);
    cr_assert_leq(fabsf(kn_noise_u32_v2(st, kn_make_v2(p.x, p.y))), 0.7072f);
    cr_assert_leq(fabsf(kn_noise_u32_f32(st, p.x)), 0.5f);
    /* across a cell face: the two cells agree there */
    float f = floorf(p.x) + 1.0f, e = 1e-3f;
    float l = kn_noise_u32_v4(st, kn_make_v4(f - e, p.y, p.z, p.w));
    float r = kn_noise_u32_v4(st, kn_make_v4(f + e, p.y, p.z, p.w));
    cr_assert_lt(fabsf(l - r), 0.01f, "continuous across x = %g", f);
  }
}

Test(noise, pnoise_repeats_with_its_periods_also_below_zero) {
  for (int i = 0; i < 20000; i++) {
    uint32_t st = kn_rand_init((uint32_t)i, 1u);
    int px = 1 + i % 9, py = 1 + i % 4, pz = 2 + i % 3, pt = 3;
    /* coordinates with few bits, so x + k px is exact */
    kn_vec4 p = kn_make_v4(urand(-8, 8), urand(-8, 8), urand(-8, 8), urand(-8, 8));
    p.x = roundf(p.x * 64) / 64, p.y = roundf(p.y * 64) / 64;
    p.z = roundf(p.z * 64) / 64, p.w = roundf(p.w * 64) / 64;
    int k = (int)urand(-5, 5);
    kn_vec4 q = kn_make_v4(p.x + (float)(k * px), p.y - (float)(2 * k * py), p.z + (float)(pz * 3),
                           p.w - (float)pt);
    float a = kn_pnoise_u32_v4_i32_i32_i32_i32(st, p, px, py, pz, pt);
    float b = kn_pnoise_u32_v4_i32_i32_i32_i32(st, q, px, py, pz, pt);
    cr_assert_eq(a, b, "4D period (%d %d %d %d) at (%g %g %g %g)", px, py, pz, pt, p.x, p.y, p.z,
                 p.w);
    float c = kn_pnoise_u32_v3_i32_i32_i32(st, kn_make_v3(p.x, p.y, p.z), px, py, pz);
    float d = kn_pnoise_u32_v3_i32_i32_i32(st, kn_make_v3(q.x, q.y, q.z), px, py, pz);
    cr_assert_eq(c, d, "3D period");
  }
  /* a period of 0 wraps nothing: the plain noise */
  uint32_t st = kn_rand_init(1u, 2u);
  kn_vec2 v = kn_make_v2(-3.3f, 4.6f);
  cr_assert_eq(kn_pnoise_u32_v2_i32_i32(st, v, 0, 0), kn_noise_u32_v2(st, v));
}

/* curlnoise is the curl of noise fields: compare with central differences of
 * noise (one octave), and its divergence is ~0. */
Test(noise, curlnoise_is_the_curl_of_noise) {
  const float h = 1e-3f;
  for (int i = 0; i < 3000; i++) {
    uint32_t s1 = kn_rand_init((uint32_t)i, 11u), s2 = kn_rand_init(s1, 10019689u),
             s3 = kn_rand_init(s2, 13112221u), st[3] = {s1, s2, s3};
    kn_vec3 p = kn_make_v3(urand(-9, 9), urand(-9, 9), urand(-9, 9));
    double g[3][3]; /* g[f][k]: field f's derivative along k */
    for (int f = 0; f < 3; f++)
      for (int k = 0; k < 3; k++) {
        kn_vec3 a = p, b = p;
        *kn_getp_v3(&a, k) -= h, *kn_getp_v3(&b, k) += h;
        g[f][k] = ((double)kn_noise_u32_v3(st[f], b) - kn_noise_u32_v3(st[f], a)) /
                  ((double)kn_get_v3(b, k) - kn_get_v3(a, k));
      }
    kn_vec3 c = kn_curlnoise_u32_v3(s1, p);
    double want[3] = {g[2][1] - g[1][2], g[0][2] - g[2][0], g[1][0] - g[0][1]};
    for (int k = 0; k < 3; k++)
      cr_assert_lt(fabs(kn_get_v3(c, k) - want[k]), 0.02, "component %d: %g vs %g", k,
                   kn_get_v3(c, k), want[k]);
    kn_vec2 c2 = kn_curlnoise_u32_v2(s1, kn_make_v2(p.x, p.y));
    double gx = ((double)kn_noise_u32_v2(s1, kn_make_v2(p.x + h, p.y)) -
                 kn_noise_u32_v2(s1, kn_make_v2(p.x - h, p.y))) /
                (2 * h),
           gy = ((double)kn_noise_u32_v2(s1, kn_make_v2(p.x, p.y + h)) -
                 kn_noise_u32_v2(s1, kn_make_v2(p.x, p.y - h))) /
                (2 * h);
    cr_assert_lt(fabs(c2.x + gy) + fabs(c2.y - gx), 0.02, "2D curl");
  }
  /* 4D: the same curl from 4D fields (t fixed), and the defaults */
  uint32_t s = kn_rand_init(5u, 6u);
  kn_vec4 q = kn_make_v4(0.3f, -1.2f, 2.5f, 0.7f);
  kn_vec3 a = kn_curlnoise_u32_v4(s, q), b = kn_curlnoise_u32_v4_u32_f32_f32(s, q, 1u, 2, 0.5f);
  cr_assert(memcmp(&a, &b, sizeof a) == 0 && kn_isfinite_v3(a));
}
