// What a velocity-level loop row (Constraint::velocity_level, step()'s loop stabilisation,
// batch/loop_stabilisation.hpp) corrects of its position error: J v+ = -e' / T with
//     e' = e - clamp(e, -floor, floor),   floor = kPositionErrorFloorEpsilons epsilon (m, rad),
// the error with its rounding floor taken out. The rows' kp = 1 / (h T) is 20x a Baumgarte kp at
// 1 ms, and what it multiplies below that floor is the rounding of the log6 and of the sweeps'
// placements, not drift. On rows that are nearly redundant (grips) that noise is inconsistent
// between the rows, and the loop solvers crept on it: in float (floor 7.6e-6) the humanoid
// holding a cube took 6.0 iterations per step on average and 32 at most over nearby starts,
// without the noise 1.5 / 3; the same in double (floor 1.4e-14) on two Digits holding a box.
// A drift above the floor is corrected less by the floor only (a 10 µm offset in float).
// The dense oracle (kernels/constraints.hpp) and the recursive kernels
// (kernels/loop_constraints.hpp) use the same function, so they solve the same rows.
#pragma once

#include <algorithm>
#include <limits>

#include "layout/lanes.hpp"

namespace batchdyn {

// The floor in epsilons of the scalar (measured: 8-90 epsilons all gave the iterations without
// the noise; the float humanoid at rest drifts by 1e-5, two Digits in double by 1e-12).
inline constexpr double kPositionErrorFloorEpsilons = 64;

// e' = e - clamp(e, -floor, floor): zero within the floor, e shifted towards zero by the floor
// beyond it (continuous, so the rows do not jump). Lane-generic, no branch on values.
template <class S>
S velocity_level_position_error(const S& e) {
  using std::max;
  using std::min;
  using Scalar = lane_scalar<S>;
  const S floor(static_cast<Scalar>(kPositionErrorFloorEpsilons) * std::numeric_limits<Scalar>::epsilon());
  return e - max(-floor, min(floor, e));
}

}  // namespace batchdyn
