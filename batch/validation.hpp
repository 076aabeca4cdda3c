// The one check of an environment's state, for the engine's gather (batch/block_io.hpp) and the
// reference evaluation (batch/reference_eval.hpp): the first non-finite entry of q, v, tau, the
// PD targets or the actuators' controls, or a quaternion whose norm is off. The fault names the array and the entry,
// so both paths report the same message ("q[5] (joint 'knee') is not finite").
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "batch/env_status.hpp"
#include "topology/model.hpp"
#include "topology/tree_plan.hpp"

namespace batchdyn {

// Tolerance on |quaternion| - 1 above which a free-flyer or ball-joint orientation is rejected
// rather than normalised (float round-trips stay far below it; a zero or garbage quaternion
// does not).
inline constexpr double kQuaternionNormTolerance = 1e-3;

// What is wrong with one environment's state, if anything.
struct StateFault {
  EnvStatus status = EnvStatus::Ok;
  const char* array = "";  // "q", "v", "tau", "target" or "ctrl"
  int index = -1;          // the entry (a quaternion's first coordinate)
  double norm = 0;         // InvalidQuaternion: the quaternion's norm
  bool ok() const { return status == EnvStatus::Ok; }
};

// The model's coordinates as the check reads them, fixed once per model.
struct StateLayout {
  explicit StateLayout(const Model& model) : nq(model.nq), nv(model.nv), nu(static_cast<int>(model.actuators.size())) {
    q_joint.resize(static_cast<size_t>(model.nq));
    v_joint.resize(static_cast<size_t>(model.nv));
    for (int i = 1; i < model.num_bodies(); ++i) {
      const Body& b = model.bodies[i];
      for (int k = 0; k < b.nq; ++k) q_joint[static_cast<size_t>(b.idx_q + k)] = i;
      for (int k = 0; k < b.nv; ++k) v_joint[static_cast<size_t>(b.idx_v + k)] = i;
      if (const int offset = quaternion_offset(b.joint_type); offset >= 0) quaternions.push_back(b.idx_q + offset);
    }
  }
  int nq, nv, nu;  // nu: the model's actuators (ctrl entries)
  std::vector<int> quaternions;       // where each unit quaternion (x y z w) starts in q
  std::vector<int> q_joint, v_joint;  // the body whose joint owns each coordinate
};

// The norm of the quaternion at q[at].
template <class T>
T quaternion_norm(const T* q, int at) {
  using std::sqrt;
  return sqrt(q[at] * q[at] + q[at + 1] * q[at + 1] + q[at + 2] * q[at + 2] + q[at + 3] * q[at + 3]);
}

// The first fault of one environment's rows: q (nq), v and tau (nv; nullptr: not read) and the
// PD targets (nv; nullptr: not read) of the actuated 1-dof joints `target_dofs`, and the
// actuators' controls (nu; nullptr: not read). O(nq + nv + nu).
template <class T>
StateFault find_state_fault(const StateLayout& layout, const T* q, const T* v, const T* tau, std::span<const SingleDof> target_dofs,
                            const T* target, const T* ctrl = nullptr) {
  for (int k = 0; k < layout.nq; ++k)
    if (!std::isfinite(q[k])) return {EnvStatus::NonFiniteState, "q", k};
  for (int k = 0; v && k < layout.nv; ++k)
    if (!std::isfinite(v[k])) return {EnvStatus::NonFiniteState, "v", k};
  for (int k = 0; tau && k < layout.nv; ++k)
    if (!std::isfinite(tau[k])) return {EnvStatus::NonFiniteState, "tau", k};
  for (size_t k = 0; target && k < target_dofs.size(); ++k)
    if (!std::isfinite(target[target_dofs[k].v])) return {EnvStatus::NonFiniteState, "target", target_dofs[k].v};
  for (int a = 0; ctrl && a < layout.nu; ++a)
    if (!std::isfinite(ctrl[a])) return {EnvStatus::NonFiniteState, "ctrl", a};
  for (int at : layout.quaternions) {
    const T norm = quaternion_norm(q, at);
    if (!(std::abs(norm - T(1)) <= T(kQuaternionNormTolerance))) return {EnvStatus::InvalidQuaternion, "q", at, static_cast<double>(norm)};
  }
  return {};
}

// The fault in words, naming the entry and its joint.
inline std::string state_fault_message(const Model& model, const StateLayout& layout, const StateFault& f) {
  if (f.status == EnvStatus::NonFiniteState) {
    if (std::string(f.array) == "ctrl")
      return "ctrl[" + std::to_string(f.index) + "] (actuator '" + model.actuators[static_cast<size_t>(f.index)].name + "') is not finite";
    const bool q = std::string(f.array) == "q";
    const int body = (q ? layout.q_joint : layout.v_joint)[static_cast<size_t>(f.index)];
    return std::string(f.array) + "[" + std::to_string(f.index) + "] (joint '" + model.bodies[body].joint_name + "') is not finite";
  }
  if (f.status == EnvStatus::InvalidQuaternion)
    return "quaternion q[" + std::to_string(f.index) + ".." + std::to_string(f.index + 3) + "] (joint '" +
           model.bodies[layout.q_joint[static_cast<size_t>(f.index)]].joint_name + "') has norm " + std::to_string(f.norm) +
           ", expected 1";
  return env_status_name(f.status);
}

// The reference evaluation's check of one environment: sizes, then find_state_fault; an empty
// string when valid, otherwise the message. Normalises the quaternions of a valid q in place.
// v / tau may be nullptr (not needed by the algorithm).
inline std::string validate_state(const Model& model, const StateLayout& layout, Eigen::VectorXd& q, const Eigen::VectorXd* v,
                                  const Eigen::VectorXd* tau) {
  if (q.size() != model.nq) return "q has " + std::to_string(q.size()) + " entries, expected nq = " + std::to_string(model.nq);
  if (v && v->size() != model.nv) return "v has " + std::to_string(v->size()) + " entries, expected nv = " + std::to_string(model.nv);
  if (tau && tau->size() != model.nv)
    return "tau has " + std::to_string(tau->size()) + " entries, expected nv = " + std::to_string(model.nv);
  const StateFault fault = find_state_fault<double>(layout, q.data(), v ? v->data() : nullptr, tau ? tau->data() : nullptr, {}, nullptr);
  if (!fault.ok()) return state_fault_message(model, layout, fault);
  for (int at : layout.quaternions) q.segment<4>(at) /= quaternion_norm(q.data(), at);
  return {};
}

// The same for one environment without a layout at hand (made here: O(n)).
inline std::string validate_state(const Model& model, Eigen::VectorXd& q, const Eigen::VectorXd* v, const Eigen::VectorXd* tau) {
  return validate_state(model, StateLayout(model), q, v, tau);
}

}  // namespace batchdyn
