/* kern_tiles.h: what tiled code (emit_tile.c) needs, for the CPU and for NVRTC.
 *
 * Requires kern_builtins.h before it (KN_FN, the bit casts). The emitter
 * writes one text for both targets; these macros are where they differ. On
 * the CPU an instance is one pool thread: a tile is a local array, a tile
 * loop is a plain loop, there is nothing to synchronise and the one thread
 * does the side effects. On a GPU an instance is a thread block: a tile is a
 * __shared__ array, a tile loop strides over the block's threads, every tile
 * operation is fenced by barriers, and side effects are done by thread 0.
 * Nothing here depends on the block size: every element is computed by the
 * same expression whichever thread computes it.
 */
#ifndef KERN_TILES_H
#define KERN_TILES_H

#ifdef __CUDACC_RTC__
#define KN_TILE_SHARED __shared__
#define KN_TILE_FOR(i, n)                                                                          \
  for (int32_t i = (int32_t)threadIdx.x; i < (int32_t)(n); i += (int32_t)blockDim.x)
#define KN_TILE_SYNC() __syncthreads()
#define KN_TILE_LEADER (threadIdx.x == 0)
#else
#define KN_TILE_SHARED
#define KN_TILE_FOR(i, n) for (int32_t i = 0; i < (int32_t)(n); i++)
#define KN_TILE_SYNC()    ((void)0)
#define KN_TILE_LEADER    1
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

#endif
