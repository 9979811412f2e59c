/* kern_noise.h: Perlin noise of generated kernel code.
 *
 * Requires kern_linalg.h before it (cmake/embed_stdlib.cmake pastes the parts
 * in order; a host C file may include this header alone). Compiled by the
 * host C compiler and by NVRTC under the rules of kern_builtins.h. Produces
 * the kn_ functions frontend/builtins.c names for Warp's noise, pnoise and
 * curlnoise in 1 to 4 dimensions.
 *
 * Warp's gradient noise (warp/native/noise.h): the lattice point (ix, iy, ...)
 * hashes with the seed into a random state, idx = ix * 73856093 ^ iy *
 * 19349663 ^ iz * 53471161 ^ it * 10000019 + state (uint32, wrapping; C's
 * precedence, so + binds first); the state's draws give the gradient:
 * randf(&idx, -1, 1) in one dimension, normalize(sample_unit_square /
 * cube / hypercube(&idx)) in more. Each corner contributes dot(gradient,
 * offset); corners are blended along x, then y, z, t with the quintic
 * smootherstep 6t^5 - 15t^4 + 10t^3. curlnoise sums the analytic gradient
 * over octaves (frequency times lacunarity, amplitude times gain) and takes
 * its curl: (-dy, dx) in 2D, and in 3D and 4D the curl of three fields whose
 * states are rand_init(state, 10019689) and rand_init(that, 13112221), the
 * state advancing every octave as Warp's does. The draws are kern's random
 * stream (kern_builtins.h), so values differ from Warp's; the structure does
 * not. Only integer arithmetic, + - * /, floor and sqrt: the same bits on
 * every device.
 *
 * pnoise wraps the lattice with a floored modulo, so it is periodic for
 * negative coordinates too (Warp's C remainder is not); a period of 0
 * leaves that axis unwrapped (kern's x % 0 == x).
 */
#ifndef KN_NOISE_H
#define KN_NOISE_H

#ifndef KN_LINALG_H
#include "kern_linalg.h"
#endif

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177
#endif

/* 6t^5 - 15t^4 + 10t^3 and its derivative, as Warp writes them. */
KN_FN float kn__smoother(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }
KN_FN float kn__smoother_d(float t) { return 30.0f * t * t * (t * (t - 2.0f) + 1.0f); }

/* The lattice hash of n coordinates with the seed state (a function, not a
 * static table: device code keeps no static data). */
KN_FN uint32_t kn__lattice_prime(int k) {
  return k == 0 ? 73856093u : k == 1 ? 19349663u : k == 2 ? 53471161u : 10000019u;
}
KN_FN uint32_t kn__lattice(uint32_t state, const int32_t *c, int n) {
  uint32_t h = (uint32_t)c[n - 1] * kn__lattice_prime(n - 1) + state;
  for (int k = n - 2; k >= 0; k--) h = ((uint32_t)c[k] * kn__lattice_prime(k)) ^ h;
  return h;
}

/* The unit gradient at a lattice point (1D: a slope in [-1, 1)). */
KN_FN void kn__gradient(uint32_t state, const int32_t *c, int n, float g[4]) {
  uint32_t s = kn__lattice(state, c, n);
  if (n == 1) {
    g[0] = kn_randf_range(&s, -1.0f, 1.0f);
  } else if (n == 2) {
    kn_vec2 v = kn_normalize_v2(kn_rand_sample_unit_square_1(&s));
    g[0] = v.x, g[1] = v.y;
  } else if (n == 3) {
    kn_vec3 v = kn_normalize_v3(kn_rand_sample_unit_cube_1(&s));
    g[0] = v.x, g[1] = v.y, g[2] = v.z;
  } else {
    kn_vec4 v = kn_normalize_v4(kn_rand_sample_unit_hypercube_1(&s));
    g[0] = v.x, g[1] = v.y, g[2] = v.z, g[3] = v.w;
  }
}

/* The noise at offsets d (in [0, 1)) from the cell's lower corner lo, upper
 * corner hi; with grad, also its gradient (Warp's interpolate_gradient). The
 * 2^n corners, bit k of a corner choosing hi in dimension k, are blended
 * along dimension 0 first. */
KN_FN float kn__perlin(uint32_t state, const int32_t *lo, const int32_t *hi, const float *d, int n,
                       float *grad) {
  float v[16], g[16][4];
  int corners = 1 << n;
  for (int c = 0; c < corners; c++) {
    int32_t at[4];
    float off[4];
    for (int k = 0; k < n; k++) {
      bool up = (c >> k) & 1;
      at[k] = up ? hi[k] : lo[k];
      off[k] = up ? d[k] - 1.0f : d[k];
    }
    kn__gradient(state, at, n, g[c]);
    float s = off[0] * g[c][0];
    for (int k = 1; k < n; k++) s += off[k] * g[c][k];
    v[c] = s;
  }
  for (int k = 0; k < n; k++) { /* blend along dimension k: pairs (c, c + half) */
    int half = corners >> (k + 1);
    float t = d[k], sm = kn__smoother(t), sd = kn__smoother_d(t);
    for (int c = 0; c < half; c++) {
      float a0 = v[2 * c], a1 = v[2 * c + 1];
      for (int j = 0; j < n && grad; j++) {
        float dt = j == k ? 1.0f : 0.0f;
        g[c][j] = (g[2 * c + 1][j] - g[2 * c][j]) * sm + (a1 - a0) * sd * dt + g[2 * c][j];
      }
      v[c] = (a1 - a0) * sm + a0;
    }
  }
  for (int j = 0; j < n && grad; j++) grad[j] = g[0][j];
  return v[0];
}

/* x's cell: d the offset in it, lo its lower corner, hi the next (each
 * wrapped into [0, period) when period is given). */
KN_FN int32_t kn__floormod(int32_t a, int32_t p) {
  int32_t r = kn_mod_i32(a, p);
  return r != 0 && ((r < 0) != (p < 0)) ? kn__add_i32(r, p) : r;
}
KN_FN void kn__cell(const float *x, int n, const int32_t *period, float *d, int32_t *lo,
                    int32_t *hi) {
  for (int k = 0; k < n; k++) {
    float f = kn_floor_f32(x[k]);
    d[k] = x[k] - f;
    lo[k] = kn_cvt_f32_i32(f);
    hi[k] = kn__add_i32(lo[k], 1);
    if (period) {
      lo[k] = kn__floormod(lo[k], period[k]);
      hi[k] = kn__floormod(kn__add_i32(lo[k], 1), period[k]);
    }
  }
}

KN_FN float kn__noise(uint32_t state, const float *x, int n, const int32_t *period) {
  float d[4];
  int32_t lo[4], hi[4];
  kn__cell(x, n, period, d, lo, hi);
  return kn__perlin(state, lo, hi, d, n, 0);
}

KN_FN float kn_noise_u32_f32(uint32_t s, float x) { return kn__noise(s, &x, 1, 0); }
KN_FN float kn_noise_u32_v2(uint32_t s, kn_vec2 v) {
  float x[2] = {v.x, v.y};
  return kn__noise(s, x, 2, 0);
}
KN_FN float kn_noise_u32_v3(uint32_t s, kn_vec3 v) {
  float x[3] = {v.x, v.y, v.z};
  return kn__noise(s, x, 3, 0);
}
KN_FN float kn_noise_u32_v4(uint32_t s, kn_vec4 v) {
  float x[4] = {v.x, v.y, v.z, v.w};
  return kn__noise(s, x, 4, 0);
}
KN_FN float kn_pnoise_u32_f32_i32(uint32_t s, float x, int32_t px) {
  return kn__noise(s, &x, 1, &px);
}
KN_FN float kn_pnoise_u32_v2_i32_i32(uint32_t s, kn_vec2 v, int32_t px, int32_t py) {
  float x[2] = {v.x, v.y};
  int32_t p[2] = {px, py};
  return kn__noise(s, x, 2, p);
}
KN_FN float kn_pnoise_u32_v3_i32_i32_i32(uint32_t s, kn_vec3 v, int32_t px, int32_t py,
                                         int32_t pz) {
  float x[3] = {v.x, v.y, v.z};
  int32_t p[3] = {px, py, pz};
  return kn__noise(s, x, 3, p);
}
KN_FN float kn_pnoise_u32_v4_i32_i32_i32_i32(uint32_t s, kn_vec4 v, int32_t px, int32_t py,
                                             int32_t pz, int32_t pt) {
  float x[4] = {v.x, v.y, v.z, v.w};
  int32_t p[4] = {px, py, pz, pt};
  return kn__noise(s, x, 4, p);
}

/* The sum over octaves of amplitude * the noise's gradient at freq * x, for
 * `fields` fields (1, or 3 with states derived as Warp derives them);
 * sum[f][k] is field f's derivative along k. */
KN_FN void kn__curl_sums(uint32_t state, const float *x, int n, uint32_t octaves, float lacunarity,
                         float gain, int fields, float sum[3][4]) {
  float freq = 1.0f, amp = 1.0f;
  for (int f = 0; f < 3; f++)
    for (int k = 0; k < 4; k++) sum[f][k] = 0.0f;
  for (uint32_t o = 0; o < octaves; o++) {
    float pt[4], d[4], g[4];
    int32_t lo[4], hi[4];
    for (int k = 0; k < n; k++) pt[k] = freq * x[k];
    kn__cell(pt, n, 0, d, lo, hi);
    for (int f = 0; f < fields; f++) {
      if (f == 1) state = kn_rand_init(state, 10019689u);
      if (f == 2) state = kn_rand_init(state, 13112221u);
      kn__perlin(state, lo, hi, d, n, g);
      for (int k = 0; k < n; k++) sum[f][k] += amp * g[k];
    }
    amp *= gain;
    freq *= lacunarity;
  }
}

KN_FN kn_vec2 kn_curlnoise_u32_v2_u32_f32_f32(uint32_t s, kn_vec2 v, uint32_t octaves,
                                              float lacunarity, float gain) {
  float x[2] = {v.x, v.y}, sum[3][4];
  kn__curl_sums(s, x, 2, octaves, lacunarity, gain, 1, sum);
  return kn_make_v2(-sum[0][1], sum[0][0]);
}
/* curl of the three fields' gradients: (F3_y - F2_z, F1_z - F3_x, F2_x - F1_y). */
KN_FN kn_vec3 kn__curl3(uint32_t s, const float *x, int n, uint32_t octaves, float lacunarity,
                        float gain) {
  float sum[3][4];
  kn__curl_sums(s, x, n, octaves, lacunarity, gain, 3, sum);
  return kn_make_v3(sum[2][1] - sum[1][2], sum[0][2] - sum[2][0], sum[1][0] - sum[0][1]);
}
KN_FN kn_vec3 kn_curlnoise_u32_v3_u32_f32_f32(uint32_t s, kn_vec3 v, uint32_t octaves,
                                              float lacunarity, float gain) {
  float x[3] = {v.x, v.y, v.z};
  return kn__curl3(s, x, 3, octaves, lacunarity, gain);
}
KN_FN kn_vec3 kn_curlnoise_u32_v4_u32_f32_f32(uint32_t s, kn_vec4 v, uint32_t octaves,
                                              float lacunarity, float gain) {
  float x[4] = {v.x, v.y, v.z, v.w};
  return kn__curl3(s, x, 4, octaves, lacunarity, gain);
}

/* Warp's defaults: one octave, lacunarity 2, gain 0.5. */
#define KN__CURL_DEFAULTS(V, C, R)                                                                 \
  KN_FN R kn_curlnoise_u32_##C(uint32_t s, V v) {                                                  \
    return kn_curlnoise_u32_##C##_u32_f32_f32(s, v, 1u, 2.0f, 0.5f);                               \
  }                                                                                                \
  KN_FN R kn_curlnoise_u32_##C##_u32(uint32_t s, V v, uint32_t octaves) {                          \
    return kn_curlnoise_u32_##C##_u32_f32_f32(s, v, octaves, 2.0f, 0.5f);                          \
  }                                                                                                \
  KN_FN R kn_curlnoise_u32_##C##_u32_f32(uint32_t s, V v, uint32_t octaves, float lacunarity) {    \
    return kn_curlnoise_u32_##C##_u32_f32_f32(s, v, octaves, lacunarity, 0.5f);                    \
  }
KN__CURL_DEFAULTS(kn_vec2, v2, kn_vec2)
KN__CURL_DEFAULTS(kn_vec3, v3, kn_vec3)
KN__CURL_DEFAULTS(kn_vec4, v4, kn_vec3)

#ifdef __CUDACC_RTC__
#pragma nv_diagnostic pop
#endif

#endif
