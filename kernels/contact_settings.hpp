// The settings of a contact step, shared by the dense reference (kernels/contact_step.hpp) and
// the batched contact stage (batch/contact_solving.hpp), and their one check.
#pragma once

#include <cmath>
#include <string>

#include "layout/lanes.hpp"
#include "topology/model.hpp"

namespace batchdyn {

struct ContactSettings {
  int max_iterations = 5000;   // ADMM iterations (the reference solves to the tolerance, whatever it costs)
  double tolerance = 1e-8;     // relative: ADMM's primal residual ||x - z||_inf <= tol (1 + ||z||_inf) (N s) and the
                               // NCP's dual residual (cone distance, complementarity) <= tol (1 + ||g||_inf) (m/s)
  double baumgarte = 0.2;      // fraction of a penetration removed per step, in [0, 1]
  double max_push_out = 0.5;   // m/s: the largest separating velocity the push-out asks for (a deep
                               // penetration, e.g. a state reset into the ground, is removed over
                               // several steps instead of launching the robot)
  bool joint_limits = true;    // URDF / SDF position limits as unilateral rows (no friction), as MuJoCo
  double limit_margin = 0.01;  // rad or m: a limit within this distance enters the problem
};

// Throws Error naming `who` unless max_iterations in [1, 1e6], tolerance finite and >= 0,
// baumgarte in [0, 1], max_push_out and limit_margin finite and >= 0.
inline void check_contact_settings(const ContactSettings& s, const char* who) {
  if (s.max_iterations < 1 || s.max_iterations > 1000000 || !(s.tolerance >= 0 && std::isfinite(s.tolerance)) ||
      !(s.baumgarte >= 0 && s.baumgarte <= 1) || !(s.max_push_out >= 0 && std::isfinite(s.max_push_out)) ||
      !(s.limit_margin >= 0 && std::isfinite(s.limit_margin)))
    throw Error(std::string(who) + ": contact settings need max_iterations in [1, 1e6], tolerance finite and >= 0, baumgarte in "
                "[0, 1], max_push_out and limit_margin finite and >= 0");
}

// The normal row's target velocity term for a distance d along it (gap, or distance to a joint
// limit) over a step h: approach until it closes within the step (d >= 0), or push out at the
// Baumgarte rate, at most max_push_out (d < 0). Lane-generic.
template <class S>
S closing_velocity(const S& d, const S& h, const ContactSettings& s) {
  using std::max;
  const S push_out = max(S(s.baumgarte) * d / h, S(-s.max_push_out));
  return select(d >= S(0), d / h, push_out);
}

}  // namespace batchdyn
