// Evaluation of N environments with the scalar reference kernels (one Data per call, reused
// across environments). The CLI's `eval` and the oracle side of comparisons use it; the fast
// batched engine replaces it for throughput.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "batch/passive_forces.hpp"
#include "batch/validation.hpp"
#include "kernels/tree/aba.hpp"
#include "kernels/algorithms.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "kernels/loops/lcaba.hpp"
#include "kernels/loops/proxbbo.hpp"
#include "kernels/delassus/pv_osim.hpp"
#include "kernels/delassus/pv_osimr.hpp"

namespace batchdyn {

struct EnvironmentStates {
  std::vector<Eigen::VectorXd> q, v, tau;  // one entry per environment; v/tau may be empty lists
};

struct EnvironmentResult {
  std::string error;          // empty when the environment was evaluated
  Eigen::VectorXd qdd;        // Aba, Constrained
  Eigen::VectorXd lambda;     // Constrained, Lcaba: constraint forces in the constraint frames
  Eigen::MatrixXd delassus;   // Delassus
  int iterations = 0;         // Constrained: proximal iterations; Lcaba: sweeps (1 = the three-sweep pass)
  double residual = 0;        // Constrained, Lcaba: ||J qdd + drift - k||_inf
  bool converged = true;      // stopped by the tolerance, not the iteration cap
  bool ok() const { return error.empty(); }
};

// The solver settings of the reference evaluation (`batchdyn eval`) unless told otherwise, for
// the precision of Pinocchio's own solvers (q̈ to ~1e-12), not the loose one a simulation step
// affords: the relative tolerance 1e-13, an iteration cap of 5000, and the algorithm's penalty
// (kAlgorithms' default_mu), but LCABA's: its primal solves lose accuracy as mu grows
// (lcaba-proxbbo §VI-D), and on the hand holding a cube mu = 1e4 met the rows to 7e-12 with q̈
// 3e-7 off the exact solution, mu = 1e3 2e-8 off, mu = 10 5e-12 (in 6 iterations against 3).
inline constexpr int kReferenceMaxIterations = 5000;
inline constexpr double kReferenceLcabaPenalty = 10.0;
inline ProximalSettings reference_settings(Algorithm algorithm) {
  ProximalSettings settings;
  if (algorithm_traits(algorithm).solves_constraints) settings.mu = algorithm_traits(algorithm).default_mu;
  if (algorithm == Algorithm::Lcaba) settings.mu = kReferenceLcabaPenalty;
  settings.max_iterations = kReferenceMaxIterations;
  return settings;
}

// Evaluates every environment independently with the algorithm's reference entry point (the
// registry's, kernels/algorithms.hpp; the loop kernels cold-started). A bad environment gets its
// error message and the others are computed as usual. The dynamics are Pinocchio's (tau is the whole joint
// torque); with passive_forces the model's damping, friction loss and springs are applied as the
// engine applies them explicitly (passive_torque). Throws only if the list sizes disagree.
inline std::vector<EnvironmentResult> evaluate_reference(const Model& model, Algorithm algorithm,
                                                         EnvironmentStates states,
                                                         const ProximalSettings& settings = {}, bool passive_forces = false) {
  const size_t n = states.q.size();
  const bool needs_dynamics = !algorithm_traits(algorithm).computes_delassus;
  if (needs_dynamics && (states.v.size() != n || states.tau.size() != n))
    throw Error("evaluate_reference: " + std::to_string(n) + " rows of q but " + std::to_string(states.v.size()) +
                " of v and " + std::to_string(states.tau.size()) + " of tau");
  const StateLayout layout(model);
  Data<double> data(model);
  ConstrainedData<double> cdata(model);
  std::optional<DelassusData<double>> ddata;
  if (algorithm == Algorithm::PvOsimr || algorithm == Algorithm::PvOsim) ddata.emplace(model);
  // The loop kernels are cold-started: every environment from lambda = 0.
  const auto record_loop_solution = [](EnvironmentResult& r, const Eigen::VectorXd& qdd, auto& data) {
    r.qdd = qdd;
    r.lambda = data.lambda;
    r.iterations = data.iterations;
    r.residual = data.residual;
    r.converged = data.converged;
    data.lambda.setZero();
  };
  std::optional<LcabaData<double>> ldata;
  if (algorithm == Algorithm::Lcaba) ldata.emplace(model);
  std::optional<ProxBboData<double>> pdata;
  if (algorithm == Algorithm::ProxBbo) pdata.emplace(model);
  std::vector<EnvironmentResult> results(n);
  for (size_t e = 0; e < n; ++e) {
    EnvironmentResult& r = results[e];
    r.error = validate_state(model, layout, states.q[e], needs_dynamics ? &states.v[e] : nullptr,
                             needs_dynamics ? &states.tau[e] : nullptr);
    if (!r.ok()) continue;
    if (passive_forces && needs_dynamics) states.tau[e] += passive_torque(model, states.q[e], states.v[e]);
    try {
      switch (algorithm) {
        case Algorithm::Aba:
          r.qdd = aba(model, data, states.q[e], states.v[e], states.tau[e]);
          break;
        case Algorithm::Constrained:
          r.qdd = constrained_forward_dynamics(model, data, cdata, states.q[e], states.v[e], states.tau[e], settings);
          r.lambda = cdata.lambda;
          r.iterations = cdata.iterations;
          r.residual = cdata.residual_norm;
          r.converged = cdata.converged;
          break;
        case Algorithm::Lcaba:
          record_loop_solution(r, lcaba(model, *ldata, states.q[e], states.v[e], states.tau[e], settings), *ldata);
          break;
        case Algorithm::ProxBbo:
          record_loop_solution(r, proxbbo(model, *pdata, states.q[e], states.v[e], states.tau[e], settings), *pdata);
          break;
        case Algorithm::Delassus:
          r.delassus = delassus(model, data, cdata, states.q[e]);
          break;
        case Algorithm::PvOsimr:
          r.delassus = pv_osimr_delassus(model, data, *ddata, states.q[e]);
          break;
        case Algorithm::PvOsim:
          r.delassus = pv_osim_delassus(model, data, *ddata, states.q[e]);
          break;
      }
      if (!r.qdd.allFinite() || !r.lambda.allFinite() || !r.delassus.allFinite()) r.error = "result is not finite";
    } catch (const Error& ex) {
      r.error = ex.what();
    }
  }
  return results;
}

}  // namespace batchdyn
