// Between env-major rows (one environment's values contiguous, as users hold q, v, tau and the
// outputs) and lanes (one value of W environments, as the kernels read them): the gather's and
// the scatter's inner step (batch/block_io.hpp).
//
// A W x W tile (W entries of W rows) is transposed in registers. For 256-bit lanes (AVX2:
// double W = 4, float W = 8) that is the usual unpack / shuffle / 128-bit permute network: each
// row is one unaligned load or store, 8 shuffles per 4 x 4 double tile and 24 per 8 x 8 float
// tile. For 512-bit lanes (AVX-512: double W = 8, float W = 16) the same network gains a stage
// of 128-bit block shuffles: 24 shuffles per 8 x 8 double tile, 64 per 16 x 16 float tile,
// where assembling the lanes entry by entry took 64 / 256 scalar loads or stores. xsimd 8.1 has
// no transpose (its zip_lo / zip_hi interleave within 128-bit halves), so the other widths
// (SSE2, W = 1) assemble each lane vector from W scalar loads (lanes_from_rows) and write rows
// through a stored vector (rows_from_lanes): the same values, bit for bit.
//
// The last count % W entries of a range (a humanoid's nq = 37, nv = 36: 5 and 4 of them for
// every 512-bit lane type) are a partial tile on AVX-512: each row's rest is one masked load or
// store (entries past the row's end are neither read nor written), through the same network.
// Entry by entry they took W scalar loads, or W stores, per entry.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "layout/lanes.hpp"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace batchdyn {

// The lane vector (rows[0][k], ..., rows[W-1][k]): entry k of W env-major rows, one scalar load
// per lane, assembled in registers (for AVX2 double: two loads into halves, one insert).
template <class L, class T>
BATCHDYN_INLINE L lanes_from_rows(const T* const* rows, long k) {
  if constexpr (lane_width<L> == 1) {
    return L(rows[0][k]);
  } else {
    return [&]<std::size_t... l>(std::index_sequence<l...>) { return L{rows[l][k]...}; }(std::make_index_sequence<lane_width<L>>());
  }
}

// Lanes to rows, one entry: rows[l][k] = lane l of `lanes`, for the rows whose write[l] is true
// (the others are not touched).
template <class L, class T>
BATCHDYN_INLINE void rows_from_lanes(const L& lanes, long k, T* const* rows, const bool* write) {
  constexpr int W = lane_width<L>;
  alignas(64) T values[W];
  LaneTraits<L>::store(lanes, values);
  for (int l = 0; l < W; ++l)
    if (write[l]) rows[l][k] = values[l];
}

namespace lane_transpose_detail {

// transpose_registers(r): in place, r[j] holds row j of a tile, afterwards column j. Only the
// register types of TileRegister below have one.
template <class R>
void transpose_registers(R& r) = delete;

#if defined(__AVX__)
// 4 x 4 double.
BATCHDYN_INLINE void transpose_registers(__m256d (&r)[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]);  // r0_0 r1_0 r0_2 r1_2
  const __m256d t1 = _mm256_unpackhi_pd(r[0], r[1]);  // r0_1 r1_1 r0_3 r1_3
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]);  // r2_0 r3_0 r2_2 r3_2
  const __m256d t3 = _mm256_unpackhi_pd(r[2], r[3]);  // r2_1 r3_1 r2_3 r3_3
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
// 8 x 8 float.
BATCHDYN_INLINE void transpose_registers(__m256 (&r)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}
#endif

#if defined(__AVX512F__)
// 8 x 8 double: pairs of rows interleaved (unpack), then 128-bit blocks gathered twice
// (shuffle_f64x2 with 0x88 takes blocks 0, 2 of each source, 0xdd blocks 1, 3).
BATCHDYN_INLINE void transpose_registers(__m512d (&r)[8]) {
  __m512d t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);      // per block b: r_{2i}[2b]   r_{2i+1}[2b]
    t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);  //              r_{2i}[2b+1] r_{2i+1}[2b+1]
  }
  for (int h = 0; h < 2; ++h)      // rows 4h .. 4h + 3
    for (int s = 0; s < 2; ++s) {  // u[4h + s]: columns s, 4 + s; u[4h + 2 + s]: columns 2 + s, 6 + s
      u[4 * h + s] = _mm512_shuffle_f64x2(t[4 * h + s], t[4 * h + 2 + s], 0x88);
      u[4 * h + 2 + s] = _mm512_shuffle_f64x2(t[4 * h + s], t[4 * h + 2 + s], 0xdd);
    }
  for (int c = 0; c < 4; ++c) {  // column c and 4 + c, rows 0 .. 7
    r[c] = _mm512_shuffle_f64x2(u[c], u[4 + c], 0x88);
    r[4 + c] = _mm512_shuffle_f64x2(u[c], u[4 + c], 0xdd);
  }
}
// 16 x 16 float: the 8 x 8 network of 256-bit lanes within each 128-bit block (unpack, then
// shuffle), then 128-bit blocks gathered twice (shuffle_f32x4).
BATCHDYN_INLINE void transpose_registers(__m512 (&r)[16]) {
  __m512 t[16], u[16], v[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);      // per block b: r_{2i}[4b] r_{2i+1}[4b] r_{2i}[4b+1] r_{2i+1}[4b+1]
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);  //              the same of entries 4b+2, 4b+3
  }
  for (int j = 0; j < 4; ++j) {  // u[4j + s], block b: rows 4j .. 4j + 3 of column 4b + s
    u[4 * j] = _mm512_shuffle_ps(t[4 * j], t[4 * j + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * j + 1] = _mm512_shuffle_ps(t[4 * j], t[4 * j + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * j + 2] = _mm512_shuffle_ps(t[4 * j + 1], t[4 * j + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * j + 3] = _mm512_shuffle_ps(t[4 * j + 1], t[4 * j + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int h = 0; h < 2; ++h)      // rows 8h .. 8h + 7
    for (int s = 0; s < 4; ++s) {  // v[8h + s]: columns s, 8 + s; v[8h + 4 + s]: columns 4 + s, 12 + s
      v[8 * h + s] = _mm512_shuffle_f32x4(u[8 * h + s], u[8 * h + 4 + s], 0x88);
      v[8 * h + 4 + s] = _mm512_shuffle_f32x4(u[8 * h + s], u[8 * h + 4 + s], 0xdd);
    }
  for (int s = 0; s < 4; ++s) {  // columns s, 8 + s, 4 + s, 12 + s, rows 0 .. 15
    r[s] = _mm512_shuffle_f32x4(v[s], v[8 + s], 0x88);
    r[8 + s] = _mm512_shuffle_f32x4(v[s], v[8 + s], 0xdd);
    r[4 + s] = _mm512_shuffle_f32x4(v[4 + s], v[12 + s], 0x88);
    r[12 + s] = _mm512_shuffle_f32x4(v[4 + s], v[12 + s], 0xdd);
  }
}
#endif

// The register type of lane type L that a network above transposes: xsimd's own register
// type for 256- and 512-bit lanes (void for scalars and SSE2 lanes: no network).
template <class L>
struct TileRegister {
  using type = void;
};
template <class T, class A>
  requires(sizeof(xsimd::batch<T, A>) == 32 || sizeof(xsimd::batch<T, A>) == 64)
struct TileRegister<xsimd::batch<T, A>> {
  using type = typename xsimd::batch<T, A>::register_type;
};

}  // namespace lane_transpose_detail

// True where tiles go through a register network (AVX2 and AVX-512 lanes), false where they
// are assembled entry by entry (SSE2, W = 1); both give the same values.
template <class L>
inline constexpr bool has_register_transpose = !std::is_void_v<typename lane_transpose_detail::TileRegister<L>::type>;

namespace lane_transpose_detail {

// Masked row access for partial tiles: the first `count` entries of a row, the others of the
// register zero (load) or the memory untouched (store). Only the 512-bit registers have them.
template <class T, class R>
void load_first(const T* row, int count, R& r) = delete;
template <class R, class T>
void store_first(const R& r, int count, T* row) = delete;
#if defined(__AVX512F__)
BATCHDYN_INLINE void load_first(const double* row, int count, __m512d& r) { r = _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << count) - 1), row); }
BATCHDYN_INLINE void load_first(const float* row, int count, __m512& r) { r = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), row); }
BATCHDYN_INLINE void store_first(const __m512d& r, int count, double* row) { _mm512_mask_storeu_pd(row, static_cast<__mmask8>((1u << count) - 1), r); }
BATCHDYN_INLINE void store_first(const __m512& r, int count, float* row) { _mm512_mask_storeu_ps(row, static_cast<__mmask16>((1u << count) - 1), r); }
#endif

}  // namespace lane_transpose_detail

// True where the last count % W entries of a range go through the register network as a
// partial tile, false where they are assembled entry by entry: 512-bit lanes only, whose
// masked moves cost what plain ones do (AVX2's masked stores are slow on some cores).
template <class L>
#if defined(__AVX512F__)
inline constexpr bool has_partial_tiles = has_register_transpose<L> && sizeof(L) == 64;
#else
inline constexpr bool has_partial_tiles = false;
#endif

// Rows to lanes, a W x W tile: lanes[j] = (rows[0][k + j], ..., rows[W-1][k + j]) for j < W.
// Each row must hold entries k .. k + W - 1.
template <class L, class T>
BATCHDYN_INLINE void lanes_from_row_tile(const T* const* rows, long k, L* lanes) {
  constexpr int W = lane_width<L>;
  if constexpr (has_register_transpose<L>) {
    using R = typename lane_transpose_detail::TileRegister<L>::type;
    R r[W];
    for (int l = 0; l < W; ++l) r[l] = L::load_unaligned(rows[l] + k);
    lane_transpose_detail::transpose_registers(r);
    for (int j = 0; j < W; ++j) lanes[j] = L(r[j]);
  } else {
    for (int j = 0; j < W; ++j) lanes[j] = lanes_from_rows<L>(rows, k + j);
  }
}

// Rows to lanes, a partial tile: lanes[j] = (rows[0][k + j], ..., rows[W-1][k + j]) for
// j < count < W. Each row must hold entries k .. k + count - 1; none past them is read.
template <class L, class T>
BATCHDYN_INLINE void lanes_from_row_partial_tile(const T* const* rows, long k, int count, L* lanes) {
  constexpr int W = lane_width<L>;
  if constexpr (has_partial_tiles<L>) {
    using R = typename lane_transpose_detail::TileRegister<L>::type;
    R r[W];
    for (int l = 0; l < W; ++l) lane_transpose_detail::load_first(rows[l] + k, count, r[l]);
    lane_transpose_detail::transpose_registers(r);
    for (int j = 0; j < count; ++j) lanes[j] = L(r[j]);
  } else {
    for (int j = 0; j < count; ++j) lanes[j] = lanes_from_rows<L>(rows, k + j);
  }
}

// Rows to lanes, `count` entries: lanes[k] = (rows[0][k], ..., rows[W-1][k]) for k < count, as
// W x W tiles (lanes_from_row_tile) and the last count % W entries as a partial tile. Each row
// must hold `count` entries.
template <class L, class T>
BATCHDYN_INLINE void lanes_from_row_range(const T* const* rows, int count, L* lanes) {
  constexpr int W = lane_width<L>;
  int k = 0;
  for (; k + W <= count; k += W) lanes_from_row_tile<L>(rows, k, lanes + k);
  if (k < count) lanes_from_row_partial_tile<L>(rows, k, count - k, lanes + k);
}

// Lanes to rows, a W x W tile: rows[l][k + j] = lane l of lanes[j] for j < W, for the rows whose
// write[l] is true (the others are not touched). Each written row must hold entries k .. k + W - 1.
template <class L, class T>
BATCHDYN_INLINE void rows_from_lane_tile(const L* lanes, long k, T* const* rows, const bool* write) {
  constexpr int W = lane_width<L>;
  if constexpr (has_register_transpose<L>) {
    using R = typename lane_transpose_detail::TileRegister<L>::type;
    R r[W];
    for (int j = 0; j < W; ++j) r[j] = lanes[j];
    lane_transpose_detail::transpose_registers(r);
    for (int l = 0; l < W; ++l)
      if (write[l]) L(r[l]).store_unaligned(rows[l] + k);
  } else {
    for (int j = 0; j < W; ++j) rows_from_lanes<L>(lanes[j], k + j, rows, write);
  }
}

// Lanes to rows, a partial tile: rows[l][k + j] = lane l of lanes[j] for j < count < W, for the
// rows whose write[l] is true (the others are not touched). Each written row must hold entries
// k .. k + count - 1; none past them is written.
template <class L, class T>
BATCHDYN_INLINE void rows_from_lane_partial_tile(const L* lanes, long k, int count, T* const* rows, const bool* write) {
  constexpr int W = lane_width<L>;
  if constexpr (has_partial_tiles<L>) {
    using R = typename lane_transpose_detail::TileRegister<L>::type;
    R r[W];
    for (int j = 0; j < W; ++j) r[j] = j < count ? lanes[j] : L(lane_scalar<L>(0));
    lane_transpose_detail::transpose_registers(r);
    for (int l = 0; l < W; ++l)
      if (write[l]) lane_transpose_detail::store_first(r[l], count, rows[l] + k);
  } else {
    for (int j = 0; j < count; ++j) rows_from_lanes<L>(lanes[j], k + j, rows, write);
  }
}

// Lanes to rows, `count` entries: rows[l][k] = lane l of lanes[k] for k < count, for the rows
// whose write[l] is true, as W x W tiles (rows_from_lane_tile) and the last count % W entries as
// a partial tile. Each written row must hold `count` entries.
template <class L, class T>
BATCHDYN_INLINE void rows_from_lane_range(const L* lanes, int count, T* const* rows, const bool* write) {
  constexpr int W = lane_width<L>;
  int k = 0;
  for (; k + W <= count; k += W) rows_from_lane_tile<L>(lanes + k, k, rows, write);
  if (k < count) rows_from_lane_partial_tile<L>(lanes + k, k, count - k, rows, write);
}

}  // namespace batchdyn
