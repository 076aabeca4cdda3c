// Resets: the states environments return to, reproducibly. The reference configuration
// (neutral unless set) with zero velocity, or a random draw that depends only on (seed,
// environment) — counter-based (batch/counter_rng.hpp), so neither the thread count nor which
// environments share a call changes it. For a model with loops (constraints on) a draw is moved
// onto them, positions and velocities (kernels/loops/constraint_projection.hpp): random joint angles
// and velocities open the loops, and a rollout from an open loop starts by snapping it shut. The
// engine clears the rest of a reset environment (torque, acceleration, multipliers, status).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "batch/counter_rng.hpp"
#include "kernels/tree/configuration.hpp"
#include "kernels/loops/constraint_projection.hpp"

namespace batchdyn {

template <class T>
class Resets {
 public:
  // The reference configuration starts as the model's (a constraint file's "reference_q"), else `neutral`.
  Resets(const Model& model, std::vector<T> neutral) : model_(model), reference_q_(std::move(neutral)) {
    if (!model.reference_configuration.empty()) reference_q_.assign(model.reference_configuration.begin(), model.reference_configuration.end());
  }

  // The configuration reset() returns to and draws noise around (nq values; neutral by
  // default). Quaternions are normalised. Throws Error for a wrong size, a non-finite value or a
  // zero quaternion (norm <= 1e-6: no direction to normalise).
  void set_reference_configuration(std::span<const T> q) {
    if (q.size() != static_cast<size_t>(model_.nq))
      throw Error("set_reference_configuration: expected nq = " + std::to_string(model_.nq) + " values, got " + std::to_string(q.size()));
    VectorX<T> r(model_.nq);
    for (int k = 0; k < model_.nq; ++k) {
      if (!std::isfinite(q[static_cast<size_t>(k)])) throw Error("set_reference_configuration: q[" + std::to_string(k) + "] is not finite");
      r[k] = q[static_cast<size_t>(k)];
    }
    for (int i = 1; i < model_.num_bodies(); ++i) {  // a quaternion must have a direction to normalise
      const int offset = quaternion_offset(model_.bodies[i].joint_type);
      if (offset < 0) continue;
      const int at = model_.bodies[i].idx_q + offset;
      if (!(r.segment(at, 4).template cast<double>().norm() > 1e-6))
        throw Error("set_reference_configuration: q[" + std::to_string(at) + ".." + std::to_string(at + 3) + "], the quaternion of joint '" +
                    model_.bodies[i].joint_name + "', is zero; give a unit quaternion [x, y, z, w]");
    }
    normalize(model_, r);
    reference_q_.assign(r.data(), r.data() + r.size());
  }
  const std::vector<T>& reference_configuration() const { return reference_q_; }

  // The reference state into one environment's rows: q = the reference configuration, v = 0.
  void reference_state(T* q_row, T* v_row) const {
    std::copy(reference_q_.begin(), reference_q_.end(), q_row);
    std::fill_n(v_row, model_.nv, T(0));
  }

  // Throws Error unless noise (when given) and velocity_noise are finite and >= 0.
  static void check_noise(std::optional<double> noise, double velocity_noise) {
    if (noise && !(*noise >= 0 && std::isfinite(*noise))) throw Error("Batch::reset: noise must be finite and >= 0");
    if (!(velocity_noise >= 0 && std::isfinite(velocity_noise))) throw Error("Batch::reset: velocity_noise must be finite and >= 0");
  }

  // The draw of (seed, stream) into one environment's rows (stream: the environment's index for
  // Batch::reset(envs, seed), 0 for a seed per environment). Without noise: each 1-dof joint uniform
  // within its position limits (continuous joints in [-pi, pi)), the free flyer at its reference
  // placement. With noise >= 0: q = reference ⊕ delta, delta_k uniform in [-noise, noise] per dof
  // (rad, m; on the manifold for the free flyer), clamped to the limits. v_k uniform in
  // [-velocity_noise, velocity_noise]. With `onto_loops` (a model with constraints, on), q then
  // moves to the nearest configuration where every loop closes (project_to_constraints: Gauss-
  // Newton, limits not enforced; where it does not converge the state stays as close as it got,
  // and the first step reports EnvStatus::LoopDrift) and v to the nearest velocity that keeps
  // them closed (project_velocity_to_constraints). Allocates: a setup call, not a kernel.
  void random_state(std::uint64_t seed, std::uint64_t stream, std::optional<double> noise, double velocity_noise, bool onto_loops, T* q_row,
                    T* v_row) const {
    const auto uniform = [&](int k) { return counter_uniform(seed, stream, static_cast<std::uint64_t>(k)); };
    VectorX<double> q(model_.nq), delta(model_.nv);
    for (int k = 0; k < model_.nq; ++k) q[k] = static_cast<double>(reference_q_[static_cast<size_t>(k)]);
    if (noise) {
      for (int k = 0; k < model_.nv; ++k) delta[k] = (2 * uniform(k) - 1) * *noise;
      integrate(model_, VectorX<double>(q), delta, q);
    }
    for (int i = 1; i < model_.num_bodies(); ++i) {
      const Body& b = model_.bodies[i];
      if (!is_single_dof(b.joint_type)) continue;
      double lo = model_.lower_position_limit[static_cast<size_t>(b.idx_q)], hi = model_.upper_position_limit[static_cast<size_t>(b.idx_q)];
      if (!noise) {
        if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -M_PI, hi = M_PI;
        q[b.idx_q] = lo + (hi - lo) * uniform(b.idx_v);
      }
      q[b.idx_q] = std::clamp(q[b.idx_q], lo, hi);
    }
    VectorX<double> v(model_.nv);
    for (int k = 0; k < model_.nv; ++k) v[k] = (2 * uniform(model_.nv + k) - 1) * velocity_noise;
    if (onto_loops && model_.constraint_rows > 0) {
      project_to_constraints(model_, q);
      project_velocity_to_constraints(model_, q, v);
    }
    for (int k = 0; k < model_.nq; ++k) q_row[k] = static_cast<T>(q[k]);
    for (int k = 0; k < model_.nv; ++k) v_row[k] = static_cast<T>(v[k]);
  }

 private:
  const Model& model_;
  std::vector<T> reference_q_;
};

}  // namespace batchdyn
