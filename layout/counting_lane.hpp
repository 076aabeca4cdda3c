// A lane type that counts floating-point operations: instantiate a kernel on CountingLane and
// it runs the same arithmetic once, on one lane, adding 1 per +, -, *, / and 1 per sqrt, sin,
// cos, tan, atan2 (which cost more in reality; they are counted separately as `transcendental`). The
// kernels have no data-dependent branches, so one evaluation gives the count for every state.
#pragma once

#include <cmath>
#include <utility>

#include "layout/lanes.hpp"

namespace batchdyn {

struct FlopCount {
  long arithmetic = 0;      // + - * /
  long transcendental = 0;  // sqrt sin cos
  long total() const { return arithmetic + transcendental; }
};

inline FlopCount& flop_counter() {
  thread_local FlopCount count;
  return count;
}

struct CountingLane {
  double value = 0;
  CountingLane() = default;
  CountingLane(double v) : value(v) {}  // NOLINT: implicit, like a scalar lane

  friend CountingLane operator+(CountingLane a, CountingLane b) { ++flop_counter().arithmetic; return a.value + b.value; }
  friend CountingLane operator-(CountingLane a, CountingLane b) { ++flop_counter().arithmetic; return a.value - b.value; }
  friend CountingLane operator*(CountingLane a, CountingLane b) { ++flop_counter().arithmetic; return a.value * b.value; }
  friend CountingLane operator/(CountingLane a, CountingLane b) { ++flop_counter().arithmetic; return a.value / b.value; }
  friend CountingLane operator-(CountingLane a) { return -a.value; }  // a sign flip is free
  CountingLane& operator+=(CountingLane b) { return *this = *this + b; }
  CountingLane& operator-=(CountingLane b) { return *this = *this - b; }
  CountingLane& operator*=(CountingLane b) { return *this = *this * b; }
  CountingLane& operator/=(CountingLane b) { return *this = *this / b; }
  friend bool operator<(CountingLane a, CountingLane b) { return a.value < b.value; }
  friend bool operator>(CountingLane a, CountingLane b) { return a.value > b.value; }
  friend bool operator<=(CountingLane a, CountingLane b) { return a.value <= b.value; }
  friend bool operator>=(CountingLane a, CountingLane b) { return a.value >= b.value; }
  friend bool operator==(CountingLane a, CountingLane b) { return a.value == b.value; }
};

// One lane of double (settings such as tolerances convert to this scalar).
template <>
struct LaneTraits<CountingLane> {
  using Scalar = double;
  static constexpr int width = 1;
};

inline CountingLane sqrt(CountingLane a) { ++flop_counter().transcendental; return std::sqrt(a.value); }
inline CountingLane sin(CountingLane a) { ++flop_counter().transcendental; return std::sin(a.value); }
inline CountingLane cos(CountingLane a) { ++flop_counter().transcendental; return std::cos(a.value); }
inline CountingLane tan(CountingLane a) { ++flop_counter().transcendental; return std::tan(a.value); }
inline CountingLane atan2(CountingLane y, CountingLane x) { ++flop_counter().transcendental; return std::atan2(y.value, x.value); }
// Counted as sin and cos apart (two transcendentals), as the kernels computed them before.
inline std::pair<CountingLane, CountingLane> sincos(CountingLane a) {
  flop_counter().transcendental += 2;
  return {std::sin(a.value), std::cos(a.value)};
}
inline std::pair<CountingLane, CountingLane> lane_sincos(CountingLane a) { return sincos(a); }
inline CountingLane lane_sin(CountingLane a) { return sin(a); }
inline CountingLane lane_cos(CountingLane a) { return cos(a); }
inline CountingLane abs(CountingLane a) { return std::abs(a.value); }  // a sign flip is free
inline CountingLane select(bool condition, CountingLane a, CountingLane b) { return condition ? a : b; }

}  // namespace batchdyn
