// Lane types: a lane holds one scalar per environment of a lane block. `xsimd::batch<T>`
// (the widest instruction set the build targets: AVX2 double 4 / float 8, AVX-512 8 / 16) is
// the product; a plain `T` is the W = 1 lane, the readable reference and debugging path.
// Kernels are written once on a lane type L and use only arithmetic, sqrt/sin/cos and
// `select` (no branches on values).
#pragma once

#include <xsimd/xsimd.hpp>

#include "layout/inline.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

namespace batchdyn {

template <class T>
using SimdLane = xsimd::batch<T>;

template <class L>
struct LaneTraits {  // scalar lane
  using Scalar = L;
  static constexpr int width = 1;
  static Scalar get(const L& x, int) { return x; }
  static L load(const Scalar* p) { return *p; }
  static void store(const L& x, Scalar* p) { *p = x; }
};

template <class T, class A>
struct LaneTraits<xsimd::batch<T, A>> {
  using Scalar = T;
  static constexpr int width = static_cast<int>(xsimd::batch<T, A>::size);
  static Scalar get(const xsimd::batch<T, A>& x, int l) { return x.get(static_cast<std::size_t>(l)); }
  static xsimd::batch<T, A> load(const Scalar* p) { return xsimd::batch<T, A>::load_aligned(p); }
  static void store(const xsimd::batch<T, A>& x, Scalar* p) { x.store_aligned(p); }
};

template <class L>
inline constexpr int lane_width = LaneTraits<L>::width;
template <class L>
using lane_scalar = typename LaneTraits<L>::Scalar;

// select(condition, a, b): lane-wise a where condition holds, else b. For batches ADL finds
// xsimd::select; these are the scalar-lane versions.
inline double select(bool condition, double a, double b) { return condition ? a : b; }
inline float select(bool condition, float a, float b) { return condition ? a : b; }

// sin, cos, tan and atan2 of a scalar lane by the SIMD lanes' own algorithm (xsimd's
// polynomials, evaluated on a SimdLane and read back from lane 0) rather than the C library's:
// the W = 1 build then computes, bit for bit, what each SIMD lane computes, so a lane kernel
// equals its W = 1 run exactly and the scalar path reproduces one environment of a batch
// (the two libraries differ in the last bits, which LCABA's penalty amplifies ~1e4 times).
// sqrt, + - * / are IEEE-exact in both. For batches ADL finds xsimd's functions. Lane-generic
// code calls these unqualified, without `using std::sin`.
template <class T>
concept LaneFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <LaneFloat T> T sin(T x) { return xsimd::sin(SimdLane<T>(x)).get(0); }
template <LaneFloat T> T cos(T x) { return xsimd::cos(SimdLane<T>(x)).get(0); }
template <LaneFloat T> T tan(T x) { return xsimd::tan(SimdLane<T>(x)).get(0); }
template <LaneFloat T> T atan2(T y, T x) { return xsimd::atan2(SimdLane<T>(y), SimdLane<T>(x)).get(0); }
// (sin x, cos x) in one call: xsimd's sincos reduces the argument once for both, and gives the
// same bits as sin and cos apart. For batches ADL finds xsimd::sincos.
template <LaneFloat T> std::pair<T, T> sincos(T x) {
  const auto both = xsimd::sincos(SimdLane<T>(x));
  return {both.first.get(0), both.second.get(0)};
}

}  // namespace batchdyn

namespace batchdyn {
// Whether any lane of a mask holds (a scalar lane's mask is a bool).
inline bool any_lane(bool mask) { return mask; }
template <class T, class A>
bool any_lane(const xsimd::batch_bool<T, A>& mask) { return xsimd::any(mask); }
}  // namespace batchdyn
