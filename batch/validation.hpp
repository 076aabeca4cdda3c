// Per-environment input checks: one bad environment is reported by index and never touches
// the others (DESIGN.md §4).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string>

#include "topology/model.hpp"

namespace batchdyn {

// Tolerance on |quaternion| - 1 above which a free-flyer orientation is rejected rather than
// normalised (float round-trips stay far below it; a zero or garbage quaternion does not).
inline constexpr double kQuaternionNormTolerance = 1e-3;

// Checks one environment's state. Returns an empty string when valid, otherwise a message
// naming the array, the entry and the joint at fault. Normalises quaternions within tolerance.
// v / tau may be empty (not needed by the algorithm).
inline std::string validate_state(const Model& model, Eigen::VectorXd& q, const Eigen::VectorXd* v,
                                  const Eigen::VectorXd* tau) {
  if (q.size() != model.nq)
    return "q has " + std::to_string(q.size()) + " entries, expected nq = " + std::to_string(model.nq);
  if (v && v->size() != model.nv)
    return "v has " + std::to_string(v->size()) + " entries, expected nv = " + std::to_string(model.nv);
  if (tau && tau->size() != model.nv)
    return "tau has " + std::to_string(tau->size()) + " entries, expected nv = " + std::to_string(model.nv);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    for (int k = 0; k < b.nq; ++k)
      if (!std::isfinite(q[b.idx_q + k]))
        return "q[" + std::to_string(b.idx_q + k) + "] (joint '" + b.joint_name + "') is not finite";
    for (int k = 0; k < b.nv; ++k) {
      if (v && !std::isfinite((*v)[b.idx_v + k]))
        return "v[" + std::to_string(b.idx_v + k) + "] (joint '" + b.joint_name + "') is not finite";
      if (tau && !std::isfinite((*tau)[b.idx_v + k]))
        return "tau[" + std::to_string(b.idx_v + k) + "] (joint '" + b.joint_name + "') is not finite";
    }
    if (const int offset = quaternion_offset(b.joint_type); offset >= 0) {
      auto quat = q.segment<4>(b.idx_q + offset);
      const double norm = quat.norm();
      if (std::abs(norm - 1.0) > kQuaternionNormTolerance)
        return "quaternion q[" + std::to_string(b.idx_q + offset) + ".." + std::to_string(b.idx_q + offset + 3) + "] (joint '" +
               b.joint_name + "') has norm " + std::to_string(norm) + ", expected 1";
      quat /= norm;
    }
  }
  return {};
}

}  // namespace batchdyn
