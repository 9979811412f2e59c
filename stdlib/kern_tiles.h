/* kern_tiles.h: what tiled code (emit_tile.c) needs, for the CPU and for NVRTC.
 *
 * Requires kern_builtins.h before it (KN_FN, the bit casts). The emitter
 * writes one text for both targets; these macros are where they differ. On
 * the CPU an instance is one pool thread: a tile is a local array, a tile
 * loop is a plain loop, there is nothing to synchronise and the one thread
 * does the side effects. On a GPU an instance is a thread block: a tile is a
 * part of the block's dynamic shared memory (kn_smem, sized per kernel by the
 * runtime: Decl.tile_total; the emitter lays a function's tiles out from its
 * base kn_sb at the offsets it writes), a tile loop strides over the block's
 * threads, every tile operation is fenced by barriers, and side effects are
 * done by thread 0.
 * Nothing here depends on the block size: every element is computed by the
 * same expression whichever thread computes it.
 */
#ifndef KERN_TILES_H
#define KERN_TILES_H

#ifdef __CUDACC_RTC__
extern __shared__ __align__(16) unsigned char kn_smem[];
#define KN_TILE_ARRAY(T, n, off, name) T *const name = (T *)(kn_smem + kn_sb + (off))
#define KN_TILE_SCALAR(T, off, name)   T &name = *(T *)(kn_smem + kn_sb + (off))
#define KN_TILE_FOR(i, n)                                                                          \
  for (int32_t i = (int32_t)threadIdx.x; i < (int32_t)(n); i += (int32_t)blockDim.x)
#define KN_TILE_SYNC() __syncthreads()
#define KN_TILE_LEADER (threadIdx.x == 0)
/* v[q] = p[4g + q] for the elements before n; four 4-byte elements at once
 * when all are there and aligned (a tile's storage is aligned to 16 bytes). */
template <class T>
__device__ __forceinline__ void kn_tile_leaf4(T *v, const T *p, int32_t g, int32_t n) {
  const int32_t o = 4 * g;
  if (sizeof(T) == 4 && o + 3 < n && ((unsigned long long)(p + o) & 15) == 0) {
    union {
      uint4 u;
      T t[4];
    } w;
    w.u = *(const uint4 *)(p + o);
#pragma unroll
    for (int q = 0; q < 4; q++) v[q] = w.t[q];
    return;
  }
#pragma unroll
  for (int q = 0; q < 4; q++)
    if (o + q < n) v[q] = p[o + q];
}
/* Leaf g of a 1-D tile_load of n elements from a at lo, read from memory (a
 * reduction that needs the loaded tile only for its tree): 16 bytes at once
 * when the tile lies inside a contiguous array, else element by element with
 * fill past the ends, as the load would have stored them. */
template <class T>
__device__ __forceinline__ void kn_tile_leaf4_load(T *v, const kn_array &a, int64_t lo, int32_t g,
                                                   int32_t n, T fill, bool dense) {
  if (lo >= 0 && lo <= a.shape[0] - n && (dense || a.strides[0] == (int64_t)sizeof(T))) {
    kn_tile_leaf4(v, (const T *)a.data + lo, g, n);
    return;
  }
#pragma unroll
  for (int q = 0; q < 4; q++) {
    const int64_t i = (int64_t)((uint64_t)lo + (uint64_t)(4 * g + q));
    if (4 * g + q < n)
      v[q] = i >= 0 && i < a.shape[0] ? *(const T *)(a.data + i * a.strides[0]) : fill;
  }
}
/* Lane + s's (xor: lane ^ s's) value of v, any type, moved as 32-bit words,
 * for a warp's tree. */
template <class T>
__device__ __forceinline__ T kn_shfl(T v, int s, bool xor_lanes) {
  union {
    T v;
    unsigned w[(sizeof(T) + 3) / 4];
  } u;
#pragma unroll
  for (unsigned i = 0; i < (sizeof(T) + 3) / 4; i++) u.w[i] = 0;
  u.v = v;
#pragma unroll
  for (unsigned i = 0; i < (sizeof(T) + 3) / 4; i++)
    u.w[i] = xor_lanes ? __shfl_xor_sync(0xffffffffu, u.w[i], s)
                       : __shfl_down_sync(0xffffffffu, u.w[i], s);
  return u.v;
}
template <class T>
__device__ __forceinline__ T kn_shfl_down(T v, int s) {
  return kn_shfl(v, s, false);
}
template <class T>
__device__ __forceinline__ T kn_shfl_xor(T v, int s) {
  return kn_shfl(v, s, true);
}
/* The levels of a scan's tree over lanes (k < levels, at most 5): after step
 * k each lane holds its node of 2^(k+1) lanes, op(left half, right half), and
 * left[k] the node of 2^k lanes beside its own (the left one where lane's bit
 * k is set). Every lane of the warp takes part. */
template <class T, class Op>
__device__ __forceinline__ T kn_scan_lanes_up(T v, int lane, int levels, T *left, Op op) {
#pragma unroll
  for (int k = 0; k < 5; k++)
    if (k < levels) {
      const T o = kn_shfl_xor(v, 1 << k);
      left[k] = o;
      v = lane >> k & 1 ? op(o, v) : op(v, o);
    }
  return v;
}
/* p folded with the left nodes lane's binary digits name, largest first. */
template <class T, class Op>
__device__ __forceinline__ T kn_scan_lanes_down(T p, bool &have, int lane, int levels,
                                                const T *left, Op op) {
#pragma unroll
  for (int k = 4; k >= 0; k--)
    if (k < levels && (lane >> k & 1)) {
      p = have ? op(p, left[k]) : left[k];
      have = true;
    }
  return p;
}
/* Whether a 1-D scan of n elements takes kn_scan_regs: a power-of-two block
 * of at least a warp, and E = n / blockDim.x of at most 16 elements a thread. */
#define KN_SCAN_REGS_FIT(n)                                                                        \
  ((blockDim.x & (blockDim.x - 1)) == 0 && blockDim.x >= 32 && (n) % blockDim.x == 0 &&            \
   (n) / blockDim.x <= 16)
/* The scan of the tile src into dst (the same order as the level-by-level
 * form: only where each node is combined differs), with E consecutive
 * elements a thread in registers: the tree over a thread's elements, then
 * over the lanes of a warp with shuffles, then over the warps (wsum: one
 * element a warp in shared memory) by the first warp, and down again, each
 * element's prefix the fold of the nodes its index's binary digits name,
 * largest first, after init when there is one. dst may be src. */
template <int E, class T, class Op>
__device__ void kn_scan_regs(const T *src, T *dst, T *wsum, bool has_init, T init, bool excl,
                             T zero, Op op) {
  const int t = (int)threadIdx.x, lane = t & 31, w = t >> 5, nw = (int)blockDim.x >> 5;
  T nd[2 * E], pre[2 * E], left[5];
#pragma unroll
  for (int r = 0; r < E; r++) nd[E + r] = src[t * E + r];
#pragma unroll
  for (int i = E - 1; i >= 1; i--) nd[i] = op(nd[2 * i], nd[2 * i + 1]);
  const T total = kn_scan_lanes_up(nd[1], lane, 5, left, op);
  if (lane == 0) wsum[w] = total;
  __syncthreads();
  if (w == 0) {
    int levels = 0;
    while ((1 << levels) < nw) levels++;
    T wl[5];
    kn_scan_lanes_up(wsum[lane < nw ? lane : 0], lane, levels, wl, op);
    bool have = has_init;
    const T p = kn_scan_lanes_down(init, have, lane, levels, wl, op);
    __syncwarp();
    if (lane < nw) wsum[lane] = p;
  }
  __syncthreads();
  bool have = has_init || w > 0;
  pre[1] = kn_scan_lanes_down(wsum[w], have, lane, 5, left, op);
  const bool have0 = have;
#pragma unroll
  for (int i = 1; i < E; i++) {
    pre[2 * i] = pre[i];
    const bool h = have0 || (i & (i - 1)) != 0;
    pre[2 * i + 1] = h ? op(pre[i], nd[2 * i]) : nd[2 * i];
  }
#pragma unroll
  for (int r = 0; r < E; r++) {
    const bool h = have0 || r > 0;
    const T x = nd[E + r];
    dst[t * E + r] = excl ? (h ? pre[E + r] : zero) : (h ? op(pre[E + r], x) : x);
  }
}
/* kn_scan_regs for the E of this block (KN_SCAN_REGS_FIT(n) holds). */
template <class T, class Op>
__device__ void kn_scan_regs_any(int32_t n, const T *src, T *dst, T *wsum, bool has_init, T init,
                                 bool excl, T zero, Op op) {
  switch (n / (int32_t)blockDim.x) {
    case 1: kn_scan_regs<1>(src, dst, wsum, has_init, init, excl, zero, op); break;
    case 2: kn_scan_regs<2>(src, dst, wsum, has_init, init, excl, zero, op); break;
    case 4: kn_scan_regs<4>(src, dst, wsum, has_init, init, excl, zero, op); break;
    case 8: kn_scan_regs<8>(src, dst, wsum, has_init, init, excl, zero, op); break;
    default: kn_scan_regs<16>(src, dst, wsum, has_init, init, excl, zero, op); break;
  }
}
/* A 2-D tile_load: consecutive threads read consecutive elements of a row. */
#define KN_TILE_LOAD2(T, dst, arr, o0, o1, R, C, fill)                                             \
  do {                                                                                             \
    const int64_t kn_lo0 = (o0), kn_lo1 = (o1);                                                    \
    const T kn_lf = (fill);                                                                        \
    KN_TILE_FOR(kn_i, (R) * (C)) {                                                                 \
      /* wrapping sums (NVRTC has no -fwrapv): an offset near the end of int64 \
       * gives a negative index, outside, rather than undefined behaviour */                   \
      const int64_t kn_a0 = (int64_t)((uint64_t)kn_lo0 + (uint64_t)(kn_i / (C)));                  \
      const int64_t kn_a1 = (int64_t)((uint64_t)kn_lo1 + (uint64_t)(kn_i % (C)));                  \
      (dst)[kn_i] = kn_a0 >= 0 && kn_a0 < (arr).shape[0] && kn_a1 >= 0 && kn_a1 < (arr).shape[1]   \
                        ? *KN_P2(T, arr, kn_a0, kn_a1)                                             \
                        : kn_lf;                                                                   \
    }                                                                                              \
  } while (0)
/* Whether a 1-D tile of T can be loaded from or stored to p (its first
 * element in arr) 16 bytes a thread at a time: 4-byte elements, contiguous
 * and aligned. */
#define KN_TILE_VEC4_OK(T, arr, p)                                                                 \
  (sizeof(T) == 4 && (KN_DENSE || (arr).strides[0] == 4) && ((unsigned long long)(p)&15) == 0)
/* A 1-D tile_load wholly inside the array, without conversion: 16 bytes a
 * thread at a time when the elements are 4 bytes, contiguous and aligned. */
#define KN_TILE_LOAD1(T, dst, arr, o, N)                                                           \
  do {                                                                                             \
    const int64_t kn_lo = (o);                                                                     \
    const T *const kn_ls = KN_P1(T, arr, kn_lo);                                                   \
    if (KN_TILE_VEC4_OK(T, arr, kn_ls)) {                                                          \
      KN_TILE_FOR(kn_i, (N) / 4)((uint4 *)(dst))[kn_i] = ((const uint4 *)kn_ls)[kn_i];             \
      KN_TILE_FOR(kn_i, (N) % 4)(dst)[(N) / 4 * 4 + kn_i] = kn_ls[(N) / 4 * 4 + kn_i];             \
    } else                                                                                         \
      KN_TILE_FOR(kn_i, N)(dst)[kn_i] = *KN_P1(T, arr, kn_lo + kn_i);                              \
  } while (0)
/* p[0..3] = v[0..3] in one 16-byte store (4-byte T, p aligned). */
template <class T>
__device__ __forceinline__ void kn_store16(T *p, const T *v) {
  union {
    uint4 u;
    T t[4];
  } w;
#pragma unroll
  for (int q = 0; q < 4; q++) w.t[q] = v[q];
  *(uint4 *)p = w.u;
}
#define KN_STORE16(p, v) kn_store16(p, v)
#else
#define KN_TILE_VEC4_OK(T, arr, p) 0
#define KN_STORE16(p, v)                                                                           \
  for (int kn_w = 0; kn_w < 4; kn_w++) (p)[kn_w] = (v)[kn_w]
#define KN_TILE_ARRAY(T, n, off, name) T name[n]
#define KN_TILE_LOAD1(T, dst, arr, o, N)                                                           \
  do {                                                                                             \
    const int64_t kn_lo = (o);                                                                     \
    KN_TILE_FOR(kn_i, N)(dst)[kn_i] = *KN_P1(T, arr, kn_lo + kn_i);                                \
  } while (0)
#define KN_TILE_SCALAR(T, off, name) T name
#define KN_TILE_FOR(i, n)            for (int32_t i = 0; i < (int32_t)(n); i++)
#define KN_TILE_SYNC()               ((void)0)
#define KN_TILE_LEADER               1
/* A 2-D tile_load: row by row; a row inside the array with unit stride is
 * a plain copy the compiler vectorises, the rest element by element. (The
 * test of "inside" subtracts: offset + width would wrap for an offset near
 * the end of int64.) */
#define KN_TILE_LOAD2(T, dst, arr, o0, o1, R, C, fill)                                             \
  do {                                                                                             \
    const int64_t kn_lo0 = (o0), kn_lo1 = (o1);                                                    \
    const T kn_lf = (fill);                                                                        \
    for (int32_t kn_r = 0; kn_r < (int32_t)(R); kn_r++) {                                          \
      const int64_t kn_a0 = kn_lo0 + kn_r;                                                         \
      T *const kn_d = (dst) + (int64_t)kn_r * (C);                                                 \
      if (kn_a0 < 0 || kn_a0 >= (arr).shape[0]) {                                                  \
        for (int32_t kn_q = 0; kn_q < (int32_t)(C); kn_q++) kn_d[kn_q] = kn_lf;                    \
      } else if (kn_lo1 >= 0 && kn_lo1 <= (arr).shape[1] - (C) &&                                  \
                 (KN_DENSE || (arr).strides[1] == (int64_t)sizeof(T))) {                           \
        const T *const kn_s = KN_P2(T, arr, kn_a0, kn_lo1);                                        \
        for (int32_t kn_q = 0; kn_q < (int32_t)(C); kn_q++) kn_d[kn_q] = kn_s[kn_q];               \
      } else {                                                                                     \
        for (int32_t kn_q = 0; kn_q < (int32_t)(C); kn_q++) {                                      \
          const int64_t kn_a1 = kn_lo1 + kn_q;                                                     \
          kn_d[kn_q] =                                                                             \
              kn_a1 >= 0 && kn_a1 < (arr).shape[1] ? *KN_P2(T, arr, kn_a0, kn_a1) : kn_lf;         \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  } while (0)
#endif

/* tile_sort's keys in IEEE total order (-NaN < -inf < ... < -0 < +0 < ... < NaN):
 * the bits, with the sign bit flipped for positives and all bits for negatives. */
KN_FN uint32_t kn_tile_key_f32(float x) {
  uint32_t b = kn__f32_bits(x);
  return b & 0x80000000u ? ~b : b | 0x80000000u;
}
KN_FN uint64_t kn_tile_key_f64(double x) {
  uint64_t b = kn__f64_bits(x);
  return b & 0x8000000000000000ull ? ~b : b | 0x8000000000000000ull;
}
KN_FN uint32_t kn_tile_key_f16(kn_f16 x) {
  uint32_t b = x.bits;
  return b & 0x8000u ? (~b & 0xffffu) : b | 0x8000u;
}
KN_FN uint32_t kn_tile_key_bf16(kn_bf16 x) {
  uint32_t b = x.bits;
  return b & 0x8000u ? (~b & 0xffffu) : b | 0x8000u;
}

/* ===== tile_matmul ===========================================================
 * d (M x N) = c + a (M x K) b (K x N), row-major tiles; c may be NULL (then
 * +0.0) and may be d itself (each element of c is read before the same
 * element of d is written), never a or b.
 * EXACT: d[i,j] is the chain acc = fma(a[i,k], b[k,j], acc) over k = 0, 1,
 * ..., K - 1 from acc = c[i,j] (or +0.0). fma is correctly rounded on both
 * devices, so how the work is split (register blocks, threads, block size)
 * changes no bit.
 * FAST: the inputs are rounded first (float32 to TF32: 10 fraction bits,
 * to nearest, ties away from zero; a NaN keeps its top 10 payload bits, so
 * one with only the low 13 becomes an infinity, as cvt.rna.tf32.f32 makes
 * it; kn_tf32 in software, kn__mm_tf32_in (cvt.rna) for the tensor cores'
 * fragments; float16 is exact in
 * float32, and so is bfloat16), then the CPU and the GPU fallback compute the
 * same fma chain in float32; tensor cores (sm_80 and newer, mma.sync) sum the
 * products of each step of 8 (TF32) or 16 (float16, bfloat16) k in an order
 * of their own. */

KN_FN uint32_t kn_tf32_bits(float x) {
  uint32_t u = kn__f32_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) /* inf stays; a NaN is cut as cvt.rna cuts it */
    return u & 0xffffe000u;
  return (u + 0x1000u) & 0xffffe000u; /* half a TF32 unit up, then cut: a tie goes away from 0 */
}
KN_FN float kn_tf32(float x) { return kn__bits_f32(kn_tf32_bits(x)); }
KN_FN float kn__mm_in_f32(float x) { return kn_tf32(x); }
KN_FN float kn__mm_in_f16(kn_f16 x) { return kn_cvt_f16_f32(x); }
KN_FN float kn__mm_in_bf16(kn_bf16 x) { return kn_cvt_bf16_f32(x); }

#ifndef __CUDACC_RTC__
/* A register block's body: 4 rows x NR columns of accumulators, k
 * ascending, each row of b read as vectors. Each compiler needs its own form
 * to vectorise along a row's columns rather than across the rows (n elements
 * apart). clang: a loop over the rows, kept from being vectorised (with
 * AVX-512 it gathered across them: 34 against 122 GFLOP/s at 512^3 on an AMD
 * EPYC); given the rows written out it keeps the accumulators on the stack
 * (106 to 115). gcc 12 vectorises a loop over the rows across them with
 * shuffles (44 GFLOP/s), and the rows written out in one loop over the
 * columns along them (138 to 151). */
#ifdef __clang__
#define KN__MM_BLOCK(T, FMA, NR)                                                                   \
  T acc[4][NR];                                                                                    \
  _Pragma("clang loop vectorize(disable)") for (int32_t r = 0; r < 4; r++) {                       \
    for (int32_t q = 0; q < NR; q++) acc[r][q] = c ? c[(i0 + r) * n + j0 + q] : (T)0;              \
  }                                                                                                \
  for (int32_t k = 0; k < kk; k++) {                                                               \
    const T *bk = b + k * n + j0;                                                                  \
    _Pragma("clang loop vectorize(disable)") for (int32_t r = 0; r < 4; r++) {                     \
      const T x = a[(i0 + r) * kk + k];                                                            \
      for (int32_t q = 0; q < NR; q++) acc[r][q] = FMA(x, bk[q], acc[r][q]);                       \
    }                                                                                              \
  }                                                                                                \
  _Pragma("clang loop vectorize(disable)") for (int32_t r = 0; r < 4; r++) {                       \
    for (int32_t q = 0; q < NR; q++) d[(i0 + r) * n + j0 + q] = acc[r][q];                         \
  }
#else
#define KN__MM_BLOCK(T, FMA, NR)                                                                   \
  T acc0[NR], acc1[NR], acc2[NR], acc3[NR];                                                        \
  const T *a0 = a + i0 * kk, *a1 = a0 + kk, *a2 = a1 + kk, *a3 = a2 + kk;                          \
  T *d0 = d + i0 * n + j0, *d1 = d0 + n, *d2 = d1 + n, *d3 = d2 + n;                               \
  const T *c0 = c ? c + i0 * n + j0 : (const T *)0;                                                \
  for (int32_t q = 0; q < NR; q++) {                                                               \
    acc0[q] = c0 ? c0[q] : (T)0;                                                                   \
    acc1[q] = c0 ? c0[n + q] : (T)0;                                                               \
    acc2[q] = c0 ? c0[2 * n + q] : (T)0;                                                           \
    acc3[q] = c0 ? c0[3 * n + q] : (T)0;                                                           \
  }                                                                                                \
  for (int32_t k = 0; k < kk; k++) {                                                               \
    const T *bk = b + k * n + j0;                                                                  \
    const T x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];                                        \
    for (int32_t q = 0; q < NR; q++) {                                                             \
      acc0[q] = FMA(x0, bk[q], acc0[q]);                                                           \
      acc1[q] = FMA(x1, bk[q], acc1[q]);                                                           \
      acc2[q] = FMA(x2, bk[q], acc2[q]);                                                           \
      acc3[q] = FMA(x3, bk[q], acc3[q]);                                                           \
    }                                                                                              \
  }                                                                                                \
  for (int32_t q = 0; q < NR; q++) {                                                               \
    d0[q] = acc0[q];                                                                               \
    d1[q] = acc1[q];                                                                               \
    d2[q] = acc2[q];                                                                               \
    d3[q] = acc3[q];                                                                               \
  }
#endif
/* The CPU: register blocks (KN__MM_BLOCK); the edges one element at a time. */
#define KN__MM_CPU(C, T, FMA, NR)                                                                  \
  KN_FN void kn__mm_block_##C(T *d, const T *a, const T *b, const T *c, int32_t n, int32_t kk,     \
                              int32_t i0, int32_t j0) {                                            \
    KN__MM_BLOCK(T, FMA, NR);                                                                      \
  }                                                                                                \
  KN_FN void kn__mm_one_##C(T *d, const T *a, const T *b, const T *c, int32_t n, int32_t kk,       \
                            int32_t i, int32_t j) {                                                \
    T acc = c ? c[i * n + j] : (T)0;                                                               \
    for (int32_t k = 0; k < kk; k++) acc = FMA(a[i * kk + k], b[k * n + j], acc);                  \
    d[i * n + j] = acc;                                                                            \
  }                                                                                                \
  KN_FN void kn_tile_matmul_##C(T *d, const T *a, const T *b, const T *c, int32_t m, int32_t n,    \
                                int32_t kk) {                                                      \
    const int32_t m4 = m - m % 4, nb = n - n % NR;                                                 \
    for (int32_t i = 0; i < m4; i += 4)                                                            \
      for (int32_t j = 0; j < nb; j += NR) kn__mm_block_##C(d, a, b, c, n, kk, i, j);              \
    for (int32_t i = 0; i < m; i++)                                                                \
      for (int32_t j = i < m4 ? nb : 0; j < n; j++) kn__mm_one_##C(d, a, b, c, n, kk, i, j);       \
  }
KN__MM_CPU(f32, float, fmaf, 16)
KN__MM_CPU(f64, double, fma, 8)

/* FAST on the CPU: a's elements rounded as they are read, b rounded once
 * into scratch (K x N floats, local arrays: a GPU has none, and a GPU block's
 * shared memory, Decl.tile_total, does not count them), then the
 * float32 chain above on the rounded values. */
#define KN__MM_FAST_CPU(C, T)                                                                      \
  KN_FN void kn_tile_matmul_fast_##C(float *d, const T *a, const T *b, const float *c,             \
                                     float *scratch_a, float *scratch_b, int32_t m, int32_t n,     \
                                     int32_t kk) {                                                 \
    for (int32_t i = 0; i < m * kk; i++) scratch_a[i] = kn__mm_in_##C(a[i]);                       \
    for (int32_t i = 0; i < kk * n; i++) scratch_b[i] = kn__mm_in_##C(b[i]);                       \
    kn_tile_matmul_f32(d, scratch_a, scratch_b, c, m, n, kk);                                      \
  }
KN__MM_FAST_CPU(f32, float)
KN__MM_FAST_CPU(f16, kn_f16)
KN__MM_FAST_CPU(bf16, kn_bf16)
#define KN_TILE_MM_SCRATCH(name, n) float name[n]

#else
/* A GPU: each thread computes 4 x 4 outputs in registers, rows ti + gm r and
 * columns tj + gn q (strided, so neighbouring threads read neighbouring
 * elements of b), k ascending. */
#define KN__MM_GPU_BODY(T, OUT, FMA, IN)                                                           \
  {                                                                                                \
    const int32_t gm = (m + 3) / 4, gn = (n + 3) / 4;                                              \
    for (int32_t t = (int32_t)threadIdx.x; t < gm * gn; t += (int32_t)blockDim.x) {                \
      const int32_t ti = t / gn, tj = t % gn;                                                      \
      int32_t ri[4], cj[4];                                                                        \
      OUT acc[4][4];                                                                               \
      _Pragma("unroll") for (int32_t r = 0; r < 4; r++) ri[r] =                                    \
          ti + gm * r < m ? ti + gm * r : m - 1;                                                   \
      _Pragma("unroll") for (int32_t q = 0; q < 4; q++) cj[q] =                                    \
          tj + gn * q < n ? tj + gn * q : n - 1;                                                   \
      _Pragma("unroll") for (int32_t r = 0; r < 4; r++)                                            \
          _Pragma("unroll") for (int32_t q = 0; q < 4; q++) acc[r][q] =                            \
              c ? c[ri[r] * n + cj[q]] : (OUT)0;                                                   \
      for (int32_t k = 0; k < kk; k++) {                                                           \
        OUT x[4], y[4];                                                                            \
        _Pragma("unroll") for (int32_t r = 0; r < 4; r++) x[r] = IN(a[ri[r] * kk + k]);            \
        _Pragma("unroll") for (int32_t q = 0; q < 4; q++) y[q] = IN(b[k * n + cj[q]]);             \
        _Pragma("unroll") for (int32_t r = 0; r < 4; r++)                                          \
            _Pragma("unroll") for (int32_t q = 0; q < 4; q++) acc[r][q] =                          \
                FMA(x[r], y[q], acc[r][q]);                                                        \
      }                                                                                            \
      _Pragma("unroll") for (int32_t r = 0; r < 4; r++) _Pragma(                                   \
          "unroll") for (int32_t q = 0; q < 4; q++) if (ti + gm * r < m && tj + gn * q < n)        \
          d[(ti + gm * r) * n + tj + gn * q] = acc[r][q];                                          \
    }                                                                                              \
  }
KN_FN float kn__mm_id_f32(float x) { return x; }
KN_FN double kn__mm_id_f64(double x) { return x; }
KN_FN void kn_tile_matmul_f32(float *d, const float *a, const float *b, const float *c, int32_t m,
                              int32_t n, int32_t kk)
    KN__MM_GPU_BODY(float, float, fmaf, kn__mm_id_f32) KN_FN
    void kn_tile_matmul_f64(double *d, const double *a, const double *b, const double *c, int32_t m,
                            int32_t n, int32_t kk)
        KN__MM_GPU_BODY(double, double, fma, kn__mm_id_f64) KN_FN
    void kn__mm_scalar_f32(float *d, const float *a, const float *b, const float *c, int32_t m,
                           int32_t n, int32_t kk)
        KN__MM_GPU_BODY(float, float, fmaf, kn__mm_in_f32) KN_FN
    void kn__mm_scalar_f16(float *d, const kn_f16 *a, const kn_f16 *b, const float *c, int32_t m,
                           int32_t n, int32_t kk)
        KN__MM_GPU_BODY(kn_f16, float, fmaf, kn__mm_in_f16) KN_FN
    void kn__mm_scalar_bf16(float *d, const kn_bf16 *a, const kn_bf16 *b, const float *c, int32_t m,
                            int32_t n, int32_t kk)
        KN__MM_GPU_BODY(kn_bf16, float, fmaf, kn__mm_in_bf16)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    /* Tensor cores. Each warp computes 16 x 8 blocks of d with mma.sync; the
 * fragment layouts are PTX's (g = lane / 4, t = lane % 4): A's registers hold
 * (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) for TF32 and the pairs at
 * columns 2t and 2t + 8 for the 16-bit floats; B's (t, g), (t + 4, g) for TF32
 * and the pairs at rows 2t and 2t + 8 for the 16-bit floats; the accumulators
 * (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1). float16 and bfloat16
 * fragments are laid out alike (H: kn_f16 or kn_bf16, two to a register). */
    /* A float32 as a TF32 fragment element: cvt.rna, kn_tf32_bits's value in
 * three instructions. Faster forms were measured and not kept (4096^3 on an
 * H200, against 0.836 ms): half a unit added, the low bits left for the
 * tensor cores to ignore, 0.822 ms, but it carries a NaN of a full payload
 * into the sign; that with a NaN test and select, 0.918 ms. */
    KN_FN uint32_t kn__mm_tf32_in(uint32_t x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}
template <class H>
KN_FN uint32_t kn__mm_pack_half(H lo, H hi) {
  return (uint32_t)lo.bits | ((uint32_t)hi.bits << 16);
}
KN_FN void kn__mm_fa_f32(uint32_t *fa, const float *a, int32_t kk, int32_t i0, int32_t k0,
                         int32_t g, int32_t t) {
  const float *r0 = a + (i0 + g) * kk + k0 + t, *r8 = r0 + 8 * kk;
  fa[0] = kn__mm_tf32_in(__float_as_uint(r0[0]));
  fa[1] = kn__mm_tf32_in(__float_as_uint(r8[0]));
  fa[2] = kn__mm_tf32_in(__float_as_uint(r0[4]));
  fa[3] = kn__mm_tf32_in(__float_as_uint(r8[4]));
}
KN_FN void kn__mm_fb_f32(uint32_t *fb, const float *b, int32_t n, int32_t j0, int32_t k0, int32_t g,
                         int32_t t) {
  fb[0] = kn__mm_tf32_in(__float_as_uint(b[(k0 + t) * n + j0 + g]));
  fb[1] = kn__mm_tf32_in(__float_as_uint(b[(k0 + t + 4) * n + j0 + g]));
}
template <class H>
KN_FN void kn__mm_fa_half(uint32_t *fa, const H *a, int32_t kk, int32_t i0, int32_t k0, int32_t g,
                          int32_t t) {
  const H *r0 = a + (i0 + g) * kk + k0 + 2 * t, *r8 = r0 + 8 * kk;
  fa[0] = kn__mm_pack_half(r0[0], r0[1]);
  fa[1] = kn__mm_pack_half(r8[0], r8[1]);
  fa[2] = kn__mm_pack_half(r0[8], r0[9]);
  fa[3] = kn__mm_pack_half(r8[8], r8[9]);
}
template <class H>
KN_FN void kn__mm_fb_half(uint32_t *fb, const H *b, int32_t n, int32_t j0, int32_t k0, int32_t g,
                          int32_t t) {
  const H *c0 = b + (k0 + 2 * t) * n + j0 + g;
  fb[0] = kn__mm_pack_half(c0[0], c0[n]);
  fb[1] = kn__mm_pack_half(c0[8 * n], c0[9 * n]);
}
KN_FN void kn__mma_f32(float *acc, const uint32_t *fa, const uint32_t *fb) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
}
KN_FN void kn__mma_f16(float *acc, const uint32_t *fa, const uint32_t *fb) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
}
KN_FN void kn__mma_bf16(float *acc, const uint32_t *fa, const uint32_t *fb) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
}
/* Each warp takes 2 x 4 blocks of 16 x 8 (32 x 32 of d) at a time when the
 * shape allows, reusing its fragments of a and b, else one block. */
#define KN__MM_TC(C, T, KS, F)                                                                     \
  KN_FN void kn__mm_tc_##C(float *d, const T *a, const T *b, const float *c, int32_t m, int32_t n, \
                           int32_t kk) {                                                           \
    const int32_t lane = (int32_t)threadIdx.x % 32, g = lane / 4, t = lane % 4;                    \
    const int32_t wm = m % 32 == 0 ? 2 : 1, wn = n % 32 == 0 ? 4 : 1;                              \
    const int32_t bm = m / (16 * wm), bn = n / (8 * wn);                                           \
    for (int32_t w = (int32_t)threadIdx.x / 32; w < bm * bn; w += (int32_t)blockDim.x / 32) {      \
      const int32_t i0 = (w / bn) * 16 * wm, j0 = (w % bn) * 8 * wn;                               \
      float acc[2][4][4];                                                                          \
      _Pragma("unroll") for (int32_t x = 0; x < 2; x++)                                            \
          _Pragma("unroll") for (int32_t y = 0; y < 4; y++) {                                      \
        const int32_t i = i0 + 16 * x + g, j = j0 + 8 * y + 2 * t;                                 \
        const bool on = x < wm && y < wn;                                                          \
        acc[x][y][0] = on && c ? c[i * n + j] : 0.0f;                                              \
        acc[x][y][1] = on && c ? c[i * n + j + 1] : 0.0f;                                          \
        acc[x][y][2] = on && c ? c[(i + 8) * n + j] : 0.0f;                                        \
        acc[x][y][3] = on && c ? c[(i + 8) * n + j + 1] : 0.0f;                                    \
      }                                                                                            \
      for (int32_t k0 = 0; k0 < kk; k0 += KS) {                                                    \
        uint32_t fa[2][4], fb[4][2];                                                               \
        _Pragma("unroll") for (int32_t x = 0; x < 2; x++) if (x < wm)                              \
            kn__mm_fa_##F(fa[x], a, kk, i0 + 16 * x, k0, g, t);                                    \
        _Pragma("unroll") for (int32_t y = 0; y < 4; y++) if (y < wn)                              \
            kn__mm_fb_##F(fb[y], b, n, j0 + 8 * y, k0, g, t);                                      \
        _Pragma("unroll") for (int32_t x = 0; x < 2; x++)                                          \
            _Pragma("unroll") for (int32_t y = 0; y < 4; y++) if (x < wm && y < wn)                \
                kn__mma_##C(acc[x][y], fa[x], fb[y]);                                              \
      }                                                                                            \
      _Pragma("unroll") for (int32_t x = 0; x < 2; x++)                                            \
          _Pragma("unroll") for (int32_t y = 0; y < 4; y++) if (x < wm && y < wn) {                \
        const int32_t i = i0 + 16 * x + g, j = j0 + 8 * y + 2 * t;                                 \
        d[i * n + j] = acc[x][y][0];                                                               \
        d[i * n + j + 1] = acc[x][y][1];                                                           \
        d[(i + 8) * n + j] = acc[x][y][2];                                                         \
        d[(i + 8) * n + j + 1] = acc[x][y][3];                                                     \
      }                                                                                            \
    }                                                                                              \
  }
KN__MM_TC(f32, float, 8, f32)
KN__MM_TC(f16, kn_f16, 16, half)
KN__MM_TC(bf16, kn_bf16, 16, half)
#define KN__MM_TC_OK(m, n, kk, KS) ((m) % 16 == 0 && (n) % 8 == 0 && (kk) % (KS) == 0)
#else
#define KN__MM_TC_OK(m, n, kk, KS) 0
#define kn__mm_tc_f32              kn__mm_scalar_f32
#define kn__mm_tc_f16              kn__mm_scalar_f16
#define kn__mm_tc_bf16             kn__mm_scalar_bf16
#endif

KN_FN void kn_tile_matmul_fast_f32(float *d, const float *a, const float *b, const float *c,
                                   float *scratch_a, float *scratch_b, int32_t m, int32_t n,
                                   int32_t kk) {
  if (KN__MM_TC_OK(m, n, kk, 8))
    kn__mm_tc_f32(d, a, b, c, m, n, kk);
  else
    kn__mm_scalar_f32(d, a, b, c, m, n, kk);
}
KN_FN void kn_tile_matmul_fast_f16(float *d, const kn_f16 *a, const kn_f16 *b, const float *c,
                                   float *scratch_a, float *scratch_b, int32_t m, int32_t n,
                                   int32_t kk) {
  if (KN__MM_TC_OK(m, n, kk, 16))
    kn__mm_tc_f16(d, a, b, c, m, n, kk);
  else
    kn__mm_scalar_f16(d, a, b, c, m, n, kk);
}
KN_FN void kn_tile_matmul_fast_bf16(float *d, const kn_bf16 *a, const kn_bf16 *b, const float *c,
                                    float *scratch_a, float *scratch_b, int32_t m, int32_t n,
                                    int32_t kk) {
  if (KN__MM_TC_OK(m, n, kk, 16))
    kn__mm_tc_bf16(d, a, b, c, m, n, kk);
  else
    kn__mm_scalar_bf16(d, a, b, c, m, n, kk);
}
#define KN_TILE_MM_SCRATCH(name, n) float *name = 0
#endif

#endif
