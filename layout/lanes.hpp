// Lane types: a lane holds one scalar per environment of a lane block. `xsimd::batch<T>`
// (the widest instruction set the build targets: AVX2 double 4 / float 8, AVX-512 8 / 16) is
// the product; a plain `T` is the W = 1 lane, the readable reference and debugging path.
// Kernels are written once on a lane type L and use only arithmetic, sqrt/sin/cos and
// `select` (no branches on values).
#pragma once

#include <xsimd/xsimd.hpp>

#include "layout/inline.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
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
// code calls these unqualified, without `using std::sin`; the kernels' sines and cosines go
// through lane_sin / lane_cos / lane_sincos below.
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

// Sine and cosine whose every lane depends on its own argument alone. xsimd reduces the
// argument by one of four formulas chosen by what ALL lanes of the batch hold (within pi/4,
// pi/2, 20 pi, "medium", else exactly), so one lane's large angle (a spinning wheel, a failing
// environment at 1e6 rad/s) changed its block mates' sines by an ulp, and float results by 1e-6
// m over a rollout. Here the formula is chosen per lane: xsimd's 20 pi formula for every lane
// (within pi/4 it returns x exactly, and it is what xsimd itself takes for the joint angles of
// a robot, so those keep xsimd's bits at xsimd's cost); its medium formula, blended in with a
// mask, for lanes beyond 20 pi; the exact reduction for lanes beyond the medium range. The two
// `any` tests skip work no lane needs and change no lane's bits. Then xsimd's polynomials and
// quadrant signs, as in xsimd::sincos.
namespace detail {
// x's residue modulo pi/2 of the lanes beyond xsimd's medium range, each reduced exactly; the
// rare path, kept out of line so the common one stays small.
template <class T, class A>
[[gnu::noinline, gnu::cold]] void reduce_right_angles_exactly(const xsimd::batch<T, A>& x, xsimd::batch<T, A>& xr,
                                                               xsimd::batch<T, A>& quadrant) {
  using B = xsimd::batch<T, A>;
  alignas(A::alignment()) T args[B::size], reduced[B::size], quadrants[B::size];
  x.store_aligned(args), xr.store_aligned(reduced), quadrant.store_aligned(quadrants);
  for (std::size_t l = 0; l < B::size; ++l) {
    if (!(args[l] > xsimd::constants::mediumpi<T>())) continue;
    if (!(args[l] < std::numeric_limits<T>::infinity())) {
      reduced[l] = std::numeric_limits<T>::quiet_NaN(), quadrants[l] = T(0);
      continue;
    }
    double y[2];
    const std::int32_t n = xsimd::detail::__ieee754_rem_pio2(static_cast<double>(args[l]), y);
    reduced[l] = static_cast<T>(y[0]), quadrants[l] = static_cast<T>(n & 3);
  }
  xr = B::load_aligned(reduced), quadrant = B::load_aligned(quadrants);
}

// x >= 0: xr = x - n pi/2 within pi/4 (+ rounding); returns n's quadrant, 0..3.
template <class T, class A>
BATCHDYN_INLINE xsimd::batch<T, A> reduce_right_angles(const xsimd::batch<T, A>& x, xsimd::batch<T, A>& xr) {
  using B = xsimd::batch<T, A>;
  namespace c = xsimd::constants;
  const B fn = xsimd::nearbyint(x * c::twoopi<B>());
  xr = xsimd::fnma(fn, c::pio2_1<B>(), x);  // xsimd's 20 pi formula: pi/2 in three parts
  xr -= fn * c::pio2_2<B>();
  xr -= fn * c::pio2_3<B>();
  B quadrant = xsimd::kernel::detail::quadrant(fn);
  const auto beyond_twenty_pi = x > c::twentypi<B>();
  if (xsimd::any(beyond_twenty_pi)) {  // xsimd's medium formula: each part's rounding carried by its tail
    const B t1 = x - fn * c::pio2_1<B>();
    const B t2 = t1 - fn * c::pio2_2<B>();
    const B w3 = fn * c::pio2_3<B>();
    const B t3 = t2 - w3;
    xr = xsimd::select(beyond_twenty_pi, t3 - (fn * c::pio2_3t<B>() - ((t2 - t3) - w3)), xr);
    if (xsimd::any(x > c::mediumpi<B>())) reduce_right_angles_exactly(x, xr, quadrant);
  }
  return quadrant;
}
}  // namespace detail

template <class T, class A>
BATCHDYN_INLINE std::pair<xsimd::batch<T, A>, xsimd::batch<T, A>> lane_sincos(const xsimd::batch<T, A>& x) {
  using B = xsimd::batch<T, A>;
  B xr;
  const B n = detail::reduce_right_angles(xsimd::abs(x), xr);
  // xsimd::sincos's evaluation: the polynomials at xr, swapped and negated by the quadrant
  // (xsimd 8's kernel::detail functions, which its own sincos calls; CMakeLists.txt asks for xsimd 8)
  const B upper_half = xsimd::select(n >= B(T(2)), B(T(1)), B(T(0)));
  const B swap = xsimd::fma(B(T(-2)), upper_half, n);  // 1 in quadrants 1 and 3
  const B z = xr * xr;
  const B se = xsimd::kernel::detail::sin_eval(z, xr);
  const B ce = xsimd::kernel::detail::cos_eval(z);
  const B sign = xsimd::constants::signmask<B>();
  const B sin_sign = xsimd::bitofsign(x) ^ xsimd::select(upper_half != B(T(0)), sign, B(T(0)));
  const B cos_sign = xsimd::select((swap ^ upper_half) != B(T(0)), sign, B(T(0)));
  return {xsimd::select(swap == B(T(0)), se, ce) ^ sin_sign, xsimd::select(swap != B(T(0)), se, ce) ^ cos_sign};
}
template <class T, class A>
xsimd::batch<T, A> lane_sin(const xsimd::batch<T, A>& x) { return lane_sincos(x).first; }
template <class T, class A>
xsimd::batch<T, A> lane_cos(const xsimd::batch<T, A>& x) { return lane_sincos(x).second; }
// A scalar lane: the same, on a SimdLane, read back from lane 0.
template <LaneFloat T> std::pair<T, T> lane_sincos(T x) {
  const auto both = lane_sincos(SimdLane<T>(x));
  return {both.first.get(0), both.second.get(0)};
}
template <LaneFloat T> T lane_sin(T x) { return lane_sincos(x).first; }
template <LaneFloat T> T lane_cos(T x) { return lane_sincos(x).second; }

}  // namespace batchdyn

namespace batchdyn {
// Whether any lane of a mask holds (a scalar lane's mask is a bool).
inline bool any_lane(bool mask) { return mask; }
template <class T, class A>
bool any_lane(const xsimd::batch_bool<T, A>& mask) { return xsimd::any(mask); }

// Lane l of x, as a double: how one environment's value is read out of its block's lanes.
template <class L>
double get_lane(const L& x, int l) { return static_cast<double>(LaneTraits<L>::get(x, l)); }
// Sets lane l of x to value (rounded to the lane's scalar) and leaves the other lanes' bits
// alone: how one environment's parameter is written without touching its block mates.
template <class L>
void set_lane(L& x, int l, double value) {
  alignas(64) lane_scalar<L> values[lane_width<L>];
  LaneTraits<L>::store(x, values);
  values[l] = static_cast<lane_scalar<L>>(value);
  x = LaneTraits<L>::load(values);
}
}  // namespace batchdyn
