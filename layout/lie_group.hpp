// Exponential and logarithm maps of SO(3) and SE(3) (scalar reference versions; they branch on
// the angle to stay accurate near 0 and pi). Motion vectors are [linear; angular].
#pragma once

#include <algorithm>
#include <cmath>

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"

namespace batchdyn {

// vee(R - R^T) = 2 sin(theta) axis
template <class S> Vec3<S> skew_part(const Mat3<S>& R) {
  return {R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1)};
}

// exp([w]x), rotation by |w| about w/|w|.
template <class S> Mat3<S> exp3(const Vec3<S>& w) {
  using std::sqrt;
  const S theta = sqrt(dot(w, w));
  if (theta < S(1e-8)) {
    const Mat3<S> K = Mat3<S>::skew(w);
    return Mat3<S>::identity() + K + K * K * S(0.5);
  }
  return axis_angle_rotation(w * (S(1) / theta), theta);
}

// w such that exp3(w) = R, |w| <= pi. The angle comes from atan2(sin, cos), accurate near 0
// and pi alike (acos loses half the digits near pi).
template <class S> Vec3<S> log3(const Mat3<S>& R) {
  using std::atan2;
  using std::sin;
  using std::sqrt;
  const Vec3<S> s = skew_part(R);  // 2 sin(theta) axis
  const S cos_theta = std::clamp((R(0, 0) + R(1, 1) + R(2, 2) - S(1)) * S(0.5), S(-1), S(1));
  const S sin_theta = S(0.5) * sqrt(dot(s, s));
  const S theta = atan2(sin_theta, cos_theta);
  if (theta < S(1e-5)) return s * (S(0.5) * (S(1) + theta * theta / S(6)));
  if (cos_theta > S(-0.5)) return s * (theta / (S(2) * sin_theta));
  // Beyond 120 degrees: the axis from the symmetric part, R_sym = cos I + (1 - cos) a a^T,
  // using its largest diagonal entry; the sign from the skew part.
  int k = 0;
  for (int i = 1; i < 3; ++i)
    if (R(i, i) > R(k, k)) k = i;
  Vec3<S> a;
  for (int i = 0; i < 3; ++i) a[i] = (S(0.5) * (R(i, k) + R(k, i)) - (i == k ? cos_theta : S(0))) / (S(1) - cos_theta);
  a = a * (S(1) / sqrt(dot(a, a)));
  if (dot(a, s) < S(0)) a = -a;
  return a * theta;
}

// V(w) = I + (1 - cos)/theta^2 [w] + (theta - sin)/theta^3 [w]^2 (left Jacobian of SO(3)).
template <class S> Mat3<S> so3_left_jacobian(const Vec3<S>& w) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S theta = sqrt(dot(w, w));
  const Mat3<S> K = Mat3<S>::skew(w);
  S a, b;
  if (theta < S(1e-5)) {
    a = S(0.5) - theta * theta / S(24);
    b = S(1) / S(6) - theta * theta / S(120);
  } else {
    a = (S(1) - lane_cos(theta)) / (theta * theta);
    b = (theta - lane_sin(theta)) / (theta * theta * theta);
  }
  return Mat3<S>::identity() + K * a + K * K * b;
}

// exp of a twist: the placement reached after one unit of time at constant body twist m.
template <class S> Transform<S> exp6(const Motion<S>& m) {
  return {exp3(m.angular), so3_left_jacobian(m.angular) * m.linear};
}

// log of a placement: the body twist m with exp6(m) = M.
template <class S> Motion<S> log6(const Transform<S>& M) {
  using std::sqrt;
  using std::tan;
  const Vec3<S> w = log3(M.rotation);
  const S theta = sqrt(dot(w, w));
  const Mat3<S> K = Mat3<S>::skew(w);
  // V^{-1} = I - [w]/2 + c [w]^2, c = 1/theta^2 - cot(theta/2) / (2 theta)
  const S c = theta < S(1e-5) ? S(1) / S(12) + theta * theta / S(720)
                              : S(1) / (theta * theta) - S(1) / (S(2) * theta * tan(theta * S(0.5)));
  const Mat3<S> Vinv = Mat3<S>::identity() - K * S(0.5) + K * K * c;
  return {Vinv * M.translation, w};
}

}  // namespace batchdyn

namespace batchdyn {

// log3 / log6 for lane types: the same maps without branches on values (`select` per lane),
// for the Baumgarte position error of the lane kernels (kernels/loops/loop_constraints.hpp). Every
// candidate is computed and the lane picks its own; a candidate that is not finite in a lane
// (e.g. 1/theta at theta = 0) is discarded there.
template <class S> Vec3<S> log3_lanes(const Mat3<S>& R) {
  using std::max;
  using std::min;
  using std::sqrt;
  const Vec3<S> s = skew_part(R);  // 2 sin(theta) axis
  const S cos_theta = min(max((R(0, 0) + R(1, 1) + R(2, 2) - S(1)) * S(0.5), S(-1)), S(1));
  const S sin_theta = S(0.5) * sqrt(dot(s, s));
  const S theta = atan2(sin_theta, cos_theta);
  const S small_factor = S(0.5) * (S(1) + theta * theta / S(6));
  const S regular_factor = theta / (S(2) * sin_theta);
  const Vec3<S> regular = s * select(theta < S(1e-5), small_factor, regular_factor);
  // Beyond 120 degrees: the axis from the column of R_sym = cos I + (1 - cos) a a^T with the
  // largest diagonal entry (see log3), chosen per lane.
  const S one_minus_cos = S(1) - cos_theta;
  Vec3<S> column[3];
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i)
      column[k][i] = (S(0.5) * (R(i, k) + R(k, i)) - (i == k ? cos_theta : S(0))) / one_minus_cos;
  const auto pick1 = R(1, 1) > R(0, 0);
  Vec3<S> a, best{select(pick1, column[1].x, column[0].x), select(pick1, column[1].y, column[0].y),
                   select(pick1, column[1].z, column[0].z)};
  const S best_diagonal = select(pick1, R(1, 1), R(0, 0));
  const auto pick2 = R(2, 2) > best_diagonal;
  for (int i = 0; i < 3; ++i) a[i] = select(pick2, column[2][i], best[i]);
  a = a * (S(1) / sqrt(dot(a, a)));
  const S sign = select(dot(a, s) < S(0), S(-1), S(1));
  const Vec3<S> wide = a * (sign * theta);
  const auto use_wide = cos_theta <= S(-0.5);
  return {select(use_wide, wide.x, regular.x), select(use_wide, wide.y, regular.y), select(use_wide, wide.z, regular.z)};
}

template <class S> Motion<S> log6_lanes(const Transform<S>& M) {
  using std::sqrt;
  const Vec3<S> w = log3_lanes(M.rotation);
  const S theta = sqrt(dot(w, w));
  const Mat3<S> K = Mat3<S>::skew(w);
  const S series = S(1) / S(12) + theta * theta / S(720);
  const S exact = S(1) / (theta * theta) - S(1) / (S(2) * theta * tan(theta * S(0.5)));
  const S c = select(theta < S(1e-5), series, exact);
  const Mat3<S> Vinv = Mat3<S>::identity() - K * S(0.5) + K * K * c;
  return {Vinv * M.translation, w};
}

}  // namespace batchdyn
