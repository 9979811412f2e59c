/* kern_mmloop.h: a whole tile_matmul loop at once on a GPU.
 *
 * Requires kern_tiles.h before it (pasted after it into modules with tiles).
 * codegen/emit_mmloop.c finds the loop
 *
 *     for (int64 k = K0; k < K1; k += KT) {
 *         tile<T, M, KT> ta = tile_load<M, KT>(A, I, k[, pa]);
 *         tile<T, KT, N> tb = tile_load<KT, N>(B, k, J[, pb]);
 *         acc = tile_matmul(ta, tb, acc);          (or tile_matmul_fast)
 *     }
 *
 * and writes `if (KN_MMLOOP(...)) {} else <the loop>`. On a GPU, when the
 * block has the threads a routine below is written for, the routine runs the
 * whole loop: acc stays in registers from the first step to the last (the
 * loop as written reads and writes it in shared memory at every step), the
 * next step's slices of A and B are fetched while this one's are multiplied
 * (into the storage of ta and tb, in halves), and each slice is laid out in
 * shared memory for conflict-free reads. It returns false, and the loop runs
 * as written, for any other block shape, tile shape or arch. The CPU has
 * nothing here: KN_MMLOOP is 0.
 *
 * Each result is the loop's: the same slices with the same fill past A's and
 * B's edges, k ascending. EXACT: each element's fma chain over k in order, as
 * kn_tile_matmul_* computes it, so every bit is the same. FAST: the same
 * mma.sync steps in the same order as kn__mm_tc_* (one per 8 or 16 k), from
 * the same rounded inputs.
 */
#ifndef KERN_MMLOOP_H
#define KERN_MMLOOP_H

#ifndef __CUDACC_RTC__
#define KN_MMLOOP(C, M, N, KT, ...) 0
#else
#define KN_MMLOOP(C, M, N, KT, ...) kn_mml_##C<M, N, KT>(__VA_ARGS__)
#define KN_TILE_AT(T, off)          ((T *)(kn_smem + kn_sb + (off)))
#define KN__MFN                     __device__ __forceinline__ /* a member: not static */

/* The loop's step count, or false when its k would pass int64's ends. */
KN_FN bool kn__mml_steps(int64_t k0, int64_t k1, int32_t kt, int64_t *steps) {
  const int64_t lim = (int64_t)1 << 62;
  if (k0 < -lim || k0 > lim || k1 < -lim || k1 > lim) return false;
  *steps = k1 > k0 ? (k1 - k0 + kt - 1) / kt : 0;
  return true;
}
KN_FN bool kn__mml_block(int32_t threads) {
  return blockDim.x == (unsigned)threads && blockDim.y == 1 && blockDim.z == 1;
}
/* a[i, j], or fill outside the array (a tile_load's element). */
template <class T>
KN_FN T kn__mml_at(const kn_array &a, int64_t i, int64_t j, T fill) {
  return i >= 0 && i < a.shape[0] && j >= 0 && j < a.shape[1]
             ? *(const T *)(a.data + i * a.strides[0] + j * a.strides[1])
             : fill;
}
KN_FN int64_t kn__mml_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
/* The rows [r0, r0 + R) x columns [c0, c0 + C) of a inside it, contiguous
 * along rows and 16-byte aligned: a slice cp.async can copy. */
template <class T>
KN_FN bool kn__mml_inside(const kn_array &a, int64_t r0, int64_t c0, int64_t R, int64_t C) {
  return r0 >= 0 && c0 >= 0 && r0 <= a.shape[0] - R && c0 <= a.shape[1] - C &&
         a.strides[1] == (int64_t)sizeof(T) && a.strides[0] % 16 == 0 &&
         ((unsigned long long)a.data + (unsigned long long)(c0 * (int64_t)sizeof(T))) % 16 == 0;
}

template <class T, int VW>
KN_FN void kn__mml_vec(T *dst, const T *src) {
  union {
    uint4 u;
    T t[VW];
  } w;
  w.u = *(const uint4 *)src;
#pragma unroll
  for (int q = 0; q < VW; q++) dst[q] = w.t[q];
}

/* ---- EXACT: fma chains, 256 threads, each 2VW x 2VW elements of acc ---------------------- *
 * VW elements make 16 bytes. Thread (ty, tx) of a 16 x 16 grid owns rows
 * h M/2 + VW ty + v and columns h' N/2 + VW tx + w (h, h' in {0, 1}, v, w <
 * VW), so its reads of a slice are 16-byte vectors that a warp's threads
 * share. A slice of A is stored transposed (k-major), its rows' vectors
 * XOR-shuffled by k so the transposing stores spread over the banks. */
template <class T, int M, int N, int KT>
struct kn__mml_simt {
  static constexpr int VW = 16 / (int)sizeof(T), KC = KT / 2;
  static constexpr int RA = M * KC / 256, RB = KC * N / 256;
  static constexpr bool ok = M == 32 * VW && N == 32 * VW && KT % 2 == 0 && KC % VW == 0 &&
                             (M * KC) % (256 * VW) == 0 && (KC * N) % (256 * VW) == 0;
  T ra[RA > 0 ? RA : 1], rb[RB > 0 ? RB : 1];
  /* Piece p (VW elements along a row of the slice) of a slice R x C at (r0, c0)
   * into r: one 16-byte load when the slice lies inside a, else element by
   * element with the fill. */
  template <int R, int C, int NP>
  KN__MFN static void get(T *r, const kn_array &a, int64_t r0, int64_t c0, T fill) {
    const int tid = (int)threadIdx.x;
    if (kn__mml_inside<T>(a, r0, c0, R, C)) {
#pragma unroll
      for (int i = 0; i < NP; i++) {
        const int p = tid + 256 * i, row = p / (C / VW), c = p % (C / VW) * VW;
        kn__mml_vec<T, VW>(r + VW * i, (const T *)(a.data + (r0 + row) * a.strides[0] +
                                                   (c0 + c) * (int64_t)sizeof(T)));
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < NP; i++) {
      const int p = tid + 256 * i, row = p / (C / VW), c = p % (C / VW) * VW;
#pragma unroll
      for (int e = 0; e < VW; e++)
        r[VW * i + e] = kn__mml_at<T>(a, kn__mml_add(r0, row), kn__mml_add(c0, c + e), fill);
    }
  }
  KN__MFN void fetch(const kn_array &A, int64_t I, const kn_array &B, int64_t J, int64_t kq, T pa,
                     T pb) {
    get<M, KC, RA / VW>(ra, A, I, kq, pa);
    get<KC, N, RB / VW>(rb, B, kq, J, pb);
  }
  /* A's pieces transposed (k-major, rows XOR-shuffled by k), B's as they are. */
  KN__MFN void put(T *sa, T *sb) const {
    const int tid = (int)threadIdx.x;
#pragma unroll
    for (int i = 0; i < RA / VW; i++) {
      const int p = tid + 256 * i, row = p / (KC / VW), c = p % (KC / VW) * VW;
#pragma unroll
      for (int e = 0; e < VW; e++) {
        const int kk = c + e;
        sa[kk * M + (row ^ ((kk & 7) * VW))] = ra[VW * i + e];
      }
    }
#pragma unroll
    for (int i = 0; i < RB / VW; i++) {
      const int p = tid + 256 * i;
#pragma unroll
      for (int e = 0; e < VW; e++) sb[VW * p + e] = rb[VW * i + e];
    }
  }
};

template <class T, int M, int N, int KT>
KN_FN bool kn__mml_exact(T *acc_s, T *sa, T *sb, const kn_array &A, int64_t I, const kn_array &B,
                         int64_t J, int64_t k0, int64_t k1, T pa, T pb) {
  typedef kn__mml_simt<T, M, N, KT> S;
  constexpr int VW = S::VW, KC = S::KC, TM = 2 * VW;
  int64_t steps;
  if (!S::ok || !kn__mml_block(256) || !kn__mml_steps(k0, k1, KT, &steps)) return false;
  const int tx = (int)threadIdx.x % 16, ty = (int)threadIdx.x / 16;
  T acc[TM][TM];
#pragma unroll
  for (int r = 0; r < TM; r++)
#pragma unroll
    for (int c = 0; c < TM; c++)
      acc[r][c] = acc_s[((r / VW) * (M / 2) + VW * ty + r % VW) * N + (c / VW) * (N / 2) + VW * tx +
                        c % VW];
  S st;
  const int64_t chunks = 2 * steps;
  if (chunks > 0) {
    st.fetch(A, I, B, J, k0, pa, pb);
    st.put(sa, sb);
  }
  __syncthreads();
  for (int64_t q = 0; q < chunks; q++) {
    const int s = (int)(q & 1);
    if (q + 1 < chunks)
      st.fetch(A, I, B, J, kn__mml_add(k0, (q + 1) / 2 * KT + (q + 1) % 2 * KC), pa, pb);
    const T *as = sa + s * KC * M, *bs = sb + s * KC * N;
#pragma unroll 4
    for (int kk = 0; kk < KC; kk++) {
      T av[TM], bv[TM];
      const int sw = (kk & 7) * VW;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        kn__mml_vec<T, VW>(av + h * VW, as + kk * M + ((h * (M / 2) + VW * ty) ^ sw));
        kn__mml_vec<T, VW>(bv + h * VW, bs + kk * N + h * (N / 2) + VW * tx);
      }
#pragma unroll
      for (int r = 0; r < TM; r++)
#pragma unroll
        for (int c = 0; c < TM; c++) acc[r][c] = fma(av[r], bv[c], acc[r][c]);
    }
    if (q + 1 < chunks) st.put(sa + (1 - s) * KC * M, sb + (1 - s) * KC * N);
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; r++)
#pragma unroll
    for (int c = 0; c < TM; c++)
      acc_s[((r / VW) * (M / 2) + VW * ty + r % VW) * N + (c / VW) * (N / 2) + VW * tx + c % VW] =
          acc[r][c];
  __syncthreads();
  return true;
}

template <int M, int N, int KT>
KN_FN bool kn_mml_exact_f32(float *acc, float *sa, float *sb, const kn_array &A, int64_t I,
                            const kn_array &B, int64_t J, int64_t k0, int64_t k1, float pa,
                            float pb) {
  return kn__mml_exact<float, M, N, KT>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
}
template <int M, int N, int KT>
KN_FN bool kn_mml_exact_f64(double *acc, double *sa, double *sb, const kn_array &A, int64_t I,
                            const kn_array &B, int64_t J, int64_t k0, int64_t k1, double pa,
                            double pb) {
  return kn__mml_exact<double, M, N, KT>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/* ---- FAST: mma.sync, warps of 64 rows of acc each (kn__mml_fast) ----------------------------- *
 * A slice (KC of k) is copied with cp.async, 16 bytes at a time, when it
 * lies inside its array with rows 16-byte aligned, else element by element
 * with the fill. A's rows (64 bytes) and B's (N elements) are stored with
 * their 16-byte chunks XOR-shuffled by row, so the fragment reads (ldmatrix,
 * 8 rows of 16 bytes at once) touch every bank once. */
KN_FN uint32_t kn__mml_saddr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
KN_FN void kn__mml_cp16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(kn__mml_saddr(dst)), "l"(src));
}
KN_FN void kn__mml_cp16s(uint32_t dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
KN_FN void kn__mml_commit(void) { asm volatile("cp.async.commit_group;\n" ::); }
KN_FN void kn__mml_ldsm4(uint32_t *r, uint32_t addr, bool trans) {
  if (trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
/* Where element (r, c) of a row-major R x C slice with 16-byte chunks of
 * E elements lies: chunk c / E of row r moves to chunk (c / E) ^ sw(r). */
template <int C, int E>
KN_FN int kn__mml_swz(int r, int c, int sw) {
  return r * C + (((c / E) ^ sw) * E) + c % E;
}

/* A slice of R x C elements at (r0, c0) of a into s (rows' chunks shuffled
 * by SW(row)). Each of the TH threads moves its own 16-byte pieces, p = tid +
 * TH i: with cp.async when the slice lies inside, else element by element
 * with the fill; the block's barrier after its cp.async group has landed
 * shows every thread's pieces to all. */
template <class T, int R, int C, int TH, class SW>
KN_FN void kn__mml_slice(T *s, const kn_array &a, int64_t r0, int64_t c0, T fill, SW sw) {
  constexpr int E = 16 / (int)sizeof(T), PIECES = R * C / E;
  const bool in = kn__mml_inside<T>(a, r0, c0, R, C);
  for (int p = (int)threadIdx.x; p < PIECES; p += TH) {
    const int r = p / (C / E), c = p % (C / E) * E;
    T *d = s + kn__mml_swz<C, E>(r, c, sw(r));
    if (in)
      kn__mml_cp16(d, a.data + (r0 + r) * a.strides[0] + (c0 + c) * (int64_t)sizeof(T));
    else
#pragma unroll
      for (int e = 0; e < E; e++)
        d[e] = kn__mml_at<T>(a, kn__mml_add(r0, r), kn__mml_add(c0, c + e), fill);
  }
}
struct kn__mml_swa { /* A's 64-byte rows: rows 2j and 2j + 1 share a 128-byte line */
  KN__MFN int operator()(int r) const { return (r >> 1) & 3; }
};
struct kn__mml_swb8 { /* rows of 8 or more chunks: eight rows fill the banks */
  KN__MFN int operator()(int r) const { return r & 7; }
};
struct kn__mml_swb4 { /* TF32 B: the four rows t a fragment reads, on 8-bank groups */
  KN__MFN int operator()(int r) const { return (r & 3) * 2; }
};

template <int MODE>
struct kn__mml_swb {
  typedef kn__mml_swb8 type;
};
template <>
struct kn__mml_swb<0> {
  typedef kn__mml_swb4 type;
};

/* The mma steps of one slice: 16-bit inputs (m16n8k16) or TF32 (m16n8k8).
 * A warp's block of acc is 64 rows by WN columns: 4 x NY blocks of 16 x 8. A
 * thread's fragment offsets (elements from a stage's start) are worked out
 * once: the shuffles depend on its lane only, and the blocks x, y and steps
 * ks of a warp move them by constants. */
template <class T, int M, int N, int KC, int MODE, int WN>
struct kn__mml_frags {
  static constexpr int KS = MODE == 0 ? 8 : 16, E = 16 / (int)sizeof(T), NKS = KC / KS;
  static constexpr int NY = WN / 8;
  int aoff[NKS], boff[NY]; /* A at ks; B: 16-bit at y2 < NY / 2 (ldmatrix), TF32 at y < NY */
  KN__MFN kn__mml_frags(int wm, int wn, int lane) {
    const int g = lane / 4, t = lane % 4, q = lane / 8, r8 = lane % 8;
    const int row = wm * 64 + r8 + (q & 1) * 8;
#pragma unroll
    for (int ks = 0; ks < NKS; ks++)
      aoff[ks] = kn__mml_swz<KC, E>(row, ks * KS + (q >> 1) * E, (row >> 1) & 3);
    const int k = r8 + (q & 1) * 8;
#pragma unroll
    for (int y = 0; y < NY; y++)
      boff[y] = MODE == 0
                    ? kn__mml_swz<N, E>(t, wn * WN + 8 * y + g, 2 * t)
                    : kn__mml_swz<N, E>(k, wn * WN + 16 * (y % (NY / 2)) + (q >> 1) * 8, k & 7);
  }
  KN__MFN void run(float (*acc)[4], const T *as, const T *bs) const {
    const uint32_t sa = kn__mml_saddr(as), sb = kn__mml_saddr(bs);
#pragma unroll
    for (int ks = 0; ks < NKS; ks++) {
      uint32_t fa[4][4], fb[NY][2];
#pragma unroll
      for (int x = 0; x < 4; x++)
        kn__mml_ldsm4(fa[x], sa + (uint32_t)((aoff[ks] + 16 * x * KC) * (int)sizeof(T)), false);
      if (MODE == 0) {
        /* TF32: each fragment element rounded as the warp reads it. Two warps
         * round each element, yet with no pass over the stage in shared
         * memory and no barrier of its own this took 4096^3 from 1.691 to
         * 0.832 ms on an H200. */
#pragma unroll
        for (int y = 0; y < NY; y++) {
          fb[y][0] = kn__mm_tf32_in(__float_as_uint(*(const float *)(bs + boff[y] + ks * 8 * N)));
          fb[y][1] =
              kn__mm_tf32_in(__float_as_uint(*(const float *)(bs + boff[y] + (ks * 8 + 4) * N)));
        }
#pragma unroll
        for (int x = 0; x < 4; x++)
#pragma unroll
          for (int j = 0; j < 4; j++) fa[x][j] = kn__mm_tf32_in(fa[x][j]);
      } else {
#pragma unroll
        for (int y2 = 0; y2 < NY / 2; y2++) {
          uint32_t r[4];
          kn__mml_ldsm4(r, sb + (uint32_t)((boff[y2] + ks * 16 * N) * (int)sizeof(T)), true);
          fb[2 * y2][0] = r[0], fb[2 * y2][1] = r[1], fb[2 * y2 + 1][0] = r[2],
                 fb[2 * y2 + 1][1] = r[3];
        }
      }
#pragma unroll
      for (int x = 0; x < 4; x++)
#pragma unroll
        for (int y = 0; y < NY; y++) {
          if (MODE == 0) kn__mma_f32(acc[NY * x + y], fa[x], fb[y]);
          if (MODE == 1) kn__mma_f16(acc[NY * x + y], fa[x], fb[y]);
          if (MODE == 2) kn__mma_bf16(acc[NY * x + y], fa[x], fb[y]);
        }
    }
  }
};

/* When every slice of the loop lies inside its array: where this thread's
 * pieces come from and go, worked out once; the slice at kq is then kq - k0
 * elements further along A's rows and kq - k0 rows further down B. */
template <class T, int M, int N, int KC, int TH, class SWB>
struct kn__mml_pieces {
  static constexpr int E = 16 / (int)sizeof(T), PA = M * KC / E / TH, PB = KC * N / E / TH;
  const char *ga[PA], *gb[PB];
  uint32_t da[PA], db[PB];
  int64_t bstride;
  KN__MFN kn__mml_pieces(const kn_array &A, int64_t I, const kn_array &B, int64_t J, int64_t k0) {
    const int tid = (int)threadIdx.x;
#pragma unroll
    for (int i = 0; i < PA; i++) {
      const int p = tid + TH * i, r = p / (KC / E), c = p % (KC / E) * E;
      ga[i] = A.data + (I + r) * A.strides[0] + (k0 + c) * (int64_t)sizeof(T);
      da[i] = (uint32_t)(kn__mml_swz<KC, E>(r, c, kn__mml_swa()(r)) * (int)sizeof(T));
    }
#pragma unroll
    for (int i = 0; i < PB; i++) {
      const int p = tid + TH * i, r = p / (N / E), c = p % (N / E) * E;
      gb[i] = B.data + (k0 + r) * B.strides[0] + (J + c) * (int64_t)sizeof(T);
      db[i] = (uint32_t)(kn__mml_swz<N, E>(r, c, SWB()(r)) * (int)sizeof(T));
    }
    bstride = B.strides[0];
  }
  KN__MFN void issue(T *as, T *bs, int64_t dk) const {
    const uint32_t sa = kn__mml_saddr(as), sb = kn__mml_saddr(bs);
#pragma unroll
    for (int i = 0; i < PA; i++) kn__mml_cp16s(sa + da[i], ga[i] + dk * (int64_t)sizeof(T));
#pragma unroll
    for (int i = 0; i < PB; i++) kn__mml_cp16s(sb + db[i], gb[i] + dk * bstride);
  }
};

/* The slices of A and B at k = kq into one stage. */
template <class T, int MODE, int M, int N, int KC, int TH>
KN_FN void kn__mml_fetch(T *as, T *bs, const kn_array &A, int64_t I, const kn_array &B, int64_t J,
                         int64_t kq, T pa, T pb) {
  kn__mml_slice<T, M, KC, TH>(as, A, I, kq, pa, kn__mml_swa());
  if (MODE == 0)
    kn__mml_slice<T, KC, N, TH>(bs, B, kq, J, pb, kn__mml_swb4());
  else
    kn__mml_slice<T, KC, N, TH>(bs, B, kq, J, pb, kn__mml_swb8());
}

/* MODE 0: TF32 from float32, 1: float16, 2: bfloat16; acc is float32. */
/* How many of the loop's first slices lie inside both arrays (the rest reach
 * past an edge: k only grows, so they are a prefix). */
template <class T, int M, int N, int KC>
KN_FN int64_t kn__mml_nin(const kn_array &A, int64_t I, const kn_array &B, int64_t J, int64_t k0,
                          int64_t chunks) {
  if (chunks <= 0 || !kn__mml_inside<T>(A, I, k0, M, KC) || !kn__mml_inside<T>(B, k0, J, KC, N))
    return 0;
  const int64_t kend = A.shape[1] < B.shape[0] ? A.shape[1] : B.shape[0], n = (kend - k0) / KC;
  return n < chunks ? n : chunks;
}
template <int N>
KN_FN void kn__mml_wait(void) {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* MODE 0: TF32 from float32, 1: float16, 2: bfloat16; acc is float32. The
 * slices are KC = 64 bytes of k wide, KT / KC stages of them in the storage of
 * ta and tb: while a warp multiplies one, the next ones are on their way. TH
 * threads: 2 x TH / 64 warps, each a block of acc of 64 rows by WN columns
 * (256 threads: 64 x 32; 128 threads: 64 x 64, which reads half the shared
 * memory per mma and needs twice the registers). */
template <class T, int MODE, int M, int N, int KT, int TH>
KN_FN bool kn__mml_fast(float *acc_s, T *sa, T *sb, const kn_array &A, int64_t I, const kn_array &B,
                        int64_t J, int64_t k0, int64_t k1, T pa, T pb) {
  constexpr int KC = 64 / (int)sizeof(T), NS = KT / KC, KS = MODE == 0 ? 8 : 16;
  constexpr int WNS = TH / 64, WN = N / WNS, NY = WN / 8; /* warps along n, their columns */
  constexpr bool ok = M == 128 && N == 128 && KT % KC == 0 && NS >= 2 && NS <= 4 && KC % KS == 0;
  int64_t steps;
  if (!ok || !kn__mml_block(TH) || !kn__mml_steps(k0, k1, KT, &steps)) return false;
  const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
  const int wm = warp / WNS, wn = warp % WNS, g = lane / 4, t = lane % 4;
  float acc[4 * NY][4]; /* [NY x + y]: m16 block x, n8 block y; its 4 elements */
#pragma unroll
  for (int x = 0; x < 4; x++)
#pragma unroll
    for (int y = 0; y < NY; y++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const float *p = acc_s + (wm * 64 + 16 * x + g + 8 * h) * N + wn * WN + 8 * y + 2 * t;
        acc[NY * x + y][2 * h] = p[0];
        acc[NY * x + y][2 * h + 1] = p[1];
      }
  const kn__mml_frags<T, M, N, KC, MODE, WN> fr(wm, wn, lane);
  typedef typename kn__mml_swb<MODE>::type SWB;
  const int64_t chunks = steps * NS, nin = kn__mml_nin<T, M, N, KC>(A, I, B, J, k0, chunks);
  const kn__mml_pieces<T, M, N, KC, TH, SWB> pc(A, I, B, J, k0);
  /* slice c into stage st: inside, the cp.async pieces; past an edge, with the fill */
#define KN__MML_FETCH(c, st)                                                                       \
  do {                                                                                             \
    T *as_ = sa + (st)*M * KC, *bs_ = sb + (st)*KC * N;                                            \
    if ((c) < nin)                                                                                 \
      pc.issue(as_, bs_, (c)*KC);                                                                  \
    else                                                                                           \
      kn__mml_fetch<T, MODE, M, N, KC, TH>(as_, bs_, A, I, B, J, kn__mml_add(k0, (c)*KC), pa, pb); \
  } while (0)
#pragma unroll
  for (int c = 0; c < NS - 1; c++) {
    if (c < chunks) KN__MML_FETCH(c, c);
    kn__mml_commit();
  }
  /* one barrier a slice: after it, every warp is done with the stage it refills */
  int s = 0;
  for (int64_t q = 0; q < chunks; q++) {
    T *as = sa + s * M * KC, *bs = sb + s * KC * N;
    kn__mml_wait<NS - 2>();
    __syncthreads();
    if (q + NS - 1 < chunks) KN__MML_FETCH(q + NS - 1, s == 0 ? NS - 1 : s - 1);
    kn__mml_commit();
    fr.run(acc, as, bs);
    s = s + 1 == NS ? 0 : s + 1;
  }
#undef KN__MML_FETCH
#pragma unroll
  for (int x = 0; x < 4; x++)
#pragma unroll
    for (int y = 0; y < NY; y++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float *p = acc_s + (wm * 64 + 16 * x + g + 8 * h) * N + wn * WN + 8 * y + 2 * t;
        p[0] = acc[NY * x + y][2 * h];
        p[1] = acc[NY * x + y][2 * h + 1];
      }
  __syncthreads();
  return true;
}
/* The FAST loop of this block's size: four warps of 64 x 64 at 128 threads,
 * else eight of 64 x 32 (kn__mml_block refuses the other sizes). */
template <class T, int MODE, int M, int N, int KT>
KN_FN bool kn__mml_fast_any(float *acc, T *sa, T *sb, const kn_array &A, int64_t I,
                            const kn_array &B, int64_t J, int64_t k0, int64_t k1, T pa, T pb) {
  if (blockDim.x == 128)
    return kn__mml_fast<T, MODE, M, N, KT, 128>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
  return kn__mml_fast<T, MODE, M, N, KT, 256>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
}
template <int M, int N, int KT>
KN_FN bool kn_mml_fast_f32(float *acc, float *sa, float *sb, const kn_array &A, int64_t I,
                           const kn_array &B, int64_t J, int64_t k0, int64_t k1, float pa,
                           float pb) {
  return kn__mml_fast_any<float, 0, M, N, KT>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
}
template <int M, int N, int KT>
KN_FN bool kn_mml_fast_f16(float *acc, kn_f16 *sa, kn_f16 *sb, const kn_array &A, int64_t I,
                           const kn_array &B, int64_t J, int64_t k0, int64_t k1, kn_f16 pa,
                           kn_f16 pb) {
  return kn__mml_fast_any<kn_f16, 1, M, N, KT>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
}
template <int M, int N, int KT>
KN_FN bool kn_mml_fast_bf16(float *acc, kn_bf16 *sa, kn_bf16 *sb, const kn_array &A, int64_t I,
                            const kn_array &B, int64_t J, int64_t k0, int64_t k1, kn_bf16 pa,
                            kn_bf16 pb) {
  return kn__mml_fast_any<kn_bf16, 2, M, N, KT>(acc, sa, sb, A, I, B, J, k0, k1, pa, pb);
}
#else
/* before sm_80 (PTX for older GPUs): the loop as written */
template <int M, int N, int KT, class... X>
KN_FN bool kn_mml_fast_f32(X...) {
  return false;
}
template <int M, int N, int KT, class... X>
KN_FN bool kn_mml_fast_f16(X...) {
  return false;
}
template <int M, int N, int KT, class... X>
KN_FN bool kn_mml_fast_bf16(X...) {
  return false;
}
#endif

#endif /* __CUDACC_RTC__ */
#endif /* KERN_MMLOOP_H */
