// The reference evaluation (batch/reference_eval.hpp) through the SIMD batch engine: the same
// states in, the same results out, so that `batchdyn eval --batched` and the tests compare the
// lane kernels with the scalar reference environment by environment.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <vector>

#include "batch/batch.hpp"
#include "batch/reference_eval.hpp"

namespace batchdyn {

// evaluate_reference's results through the SIMD batch engine: ABA, a loop solver (LCABA,
// proxBBO, the dense one lane by lane), or the Delassus matrix by PV-OSIMr / PV-OSIM. The
// dynamics are the reference's: the engine's simulator stages are off (no effort clamp; the
// model's damping, friction loss and springs only with passive_forces, as evaluate_reference
// applies them). Rows of the
// wrong length are reported here, everything else by the engine's per-environment status.
// Throws only if the list sizes disagree.
inline std::vector<EnvironmentResult> evaluate_batched(const Model& model, Algorithm algorithm, const EnvironmentStates& states,
                                                       const ProximalSettings& settings, bool passive_forces) {
  const int n = static_cast<int>(states.q.size());
  const AlgorithmTraits& traits = algorithm_traits(algorithm);
  const bool dynamics = !traits.computes_delassus;
  if (dynamics && (states.v.size() != states.q.size() || states.tau.size() != states.q.size()))
    throw Error("evaluate_batched: " + std::to_string(n) + " rows of q but " + std::to_string(states.v.size()) + " of v and " +
                std::to_string(states.tau.size()) + " of tau");
  std::vector<EnvironmentResult> results(static_cast<size_t>(n));
  Batch<double> batch(model, n);
  batch.set_passive_forces(passive_forces);
  batch.set_effort_clamp(false);  // tau is the whole joint torque
  batch.set_use_constraints(traits.solves_constraints);
  if (traits.solves_constraints) batch.set_constraint_solver(algorithm);
  batch.set_constraint_settings(settings);
  auto check_length = [](const char* name, const Eigen::VectorXd& x, int expected, const char* what) {
    return x.size() == expected ? std::string()
                                : std::string(name) + " has " + std::to_string(x.size()) + " entries, expected " + what +
                                      " = " + std::to_string(expected);
  };
  for (int e = 0; e < n; ++e) {
    EnvironmentResult& r = results[static_cast<size_t>(e)];
    r.error = check_length("q", states.q[e], model.nq, "nq");
    if (r.ok() && dynamics) r.error = check_length("v", states.v[e], model.nv, "nv");
    if (r.ok() && dynamics) r.error = check_length("tau", states.tau[e], model.nv, "nv");
    if (!r.ok()) continue;  // the engine keeps its neutral row for this environment
    std::copy_n(states.q[e].data(), model.nq, batch.q() + static_cast<long>(e) * model.nq);
    if (!dynamics) continue;
    std::copy_n(states.v[e].data(), model.nv, batch.v() + static_cast<long>(e) * model.nv);
    std::copy_n(states.tau[e].data(), model.nv, batch.tau() + static_cast<long>(e) * model.nv);
  }
  if (dynamics) batch.forward_dynamics();
  else batch.delassus(algorithm);
  const int m = model.constraint_rows;
  for (int e = 0; e < n; ++e) {
    EnvironmentResult& r = results[static_cast<size_t>(e)];
    if (!r.ok()) continue;
    if (batch.status()[static_cast<size_t>(e)] != EnvStatus::Ok) {
      r.error = env_status_name(batch.status()[static_cast<size_t>(e)]);
      continue;
    }
    if (dynamics) r.qdd = Eigen::Map<const Eigen::VectorXd>(batch.qdd() + static_cast<long>(e) * model.nv, model.nv);
    if (traits.solves_constraints) {
      r.lambda = Eigen::Map<const Eigen::VectorXd>(batch.constraint_forces() + static_cast<long>(e) * m, m);
      r.iterations = batch.constraint_iterations()[static_cast<size_t>(e)];
      r.residual = batch.constraint_residual()[static_cast<size_t>(e)];
      r.converged = batch.constraint_converged()[static_cast<size_t>(e)] != 0;
    }
    if (!dynamics)
      r.delassus = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
          batch.delassus_matrices() + static_cast<long>(e) * m * m, m, m);
  }
  return results;
}

}  // namespace batchdyn
