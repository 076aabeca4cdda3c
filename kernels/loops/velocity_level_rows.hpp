// What a velocity-level loop row (Constraint::velocity_level, step()'s loop stabilisation,
// batch/loop_stabilisation.hpp) corrects of its position error: J v+ = -e' / T with
//     e' = e - clamp(e, -floor, floor),   floor = kPositionErrorFloorEpsilons epsilon (m, rad),
// the error with its rounding floor taken out. The rows' kp = 1 / (h T) is 20x a Baumgarte kp at
// 1 ms, and what it multiplies below that floor is the rounding of the log6 and of the sweeps'
// placements, not drift. On rows that are nearly redundant (grips) that noise is inconsistent
// between the rows, and the loop solvers crept on it: over nearby starts the humanoid holding a
// cube took 6.0 iterations per step on average and 32 at most in float (floor 7.6e-6), 1.5 / 3
// with the floor; 8.0 / 36 in double (floor 1.4e-14), 2.2 / 13 with it. A drift above the
// floor is corrected all but the floor (7.6 µm in float).
// The dense oracle (kernels/loops/constraints.hpp) and the recursive kernels
// (kernels/loops/loop_constraints.hpp) use the same function, so they solve the same rows.
#pragma once

#include <algorithm>
#include <limits>

#include "layout/lanes.hpp"

namespace batchdyn {

// The floor in epsilons of the scalar (measured: floors from 8 to 90 epsilons gave the same
// iteration counts on the grips).
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
