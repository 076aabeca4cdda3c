// Constraint solving: for a model with loops or contacts (and constraints on), the
// accelerations stage solves the constrained dynamics of each lane block with the Baumgarte
// gains of the constraint specs, by
//   LCABA (default):  the recursive LCABA on the lanes (kernels/loops/lcaba.hpp), O(n + m_c^2 n) per environment;
//   proxBBO:          the recursive proxBBO on the lanes (kernels/loops/proxbbo.hpp), O(n + m_b^2 n + m_b^3),
//                     accurate at stiff penalties where LCABA is not;
//   constrained:      the dense joint-space proximal solver (kernels/loops/constrained_dynamics.hpp), one
//                     environment at a time in double whatever the lane type: the oracle.
// The recursive solvers warm-start from each environment's multipliers of the previous call.
// In a step() that solves contacts, the contact stage solves the loops instead (as bilateral
// rows of its problem, batch/contact_solving.hpp) and reports here.
// This stage keeps the solver choice, its settings, the multipliers and each environment's
// solver report.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "batch/block_io.hpp"
#include "batch/block_workspace.hpp"
#include "kernels/algorithms.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "kernels/loops/lcaba.hpp"
#include "kernels/loops/proxbbo.hpp"

namespace batchdyn {

template <class L>
class ConstraintSolving {
 public:
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  ConstraintSolving(const Model& model, int num_envs)
      : model_(model), n_(num_envs), lcaba_plan_(plan_lcaba(model)), proxbbo_plan_(plan_proxbbo(model)),
        lambda_(static_cast<size_t>(num_envs) * model.constraint_rows, T(0)), iterations_(static_cast<size_t>(num_envs), 0),
        residual_(static_cast<size_t>(num_envs), T(0)), converged_(static_cast<size_t>(num_envs), 1),
        drift_(static_cast<size_t>(num_envs), T(0)) {
    settings_.mu = default_penalty();
  }

  // On (the default), a model with constraints steps with them; off, the tree alone (ABA).
  void set_enabled(bool on) { enabled_ = on; }
  bool active() const { return enabled_ && model_.constraint_rows > 0; }
  // A constraint solver of the registry (kernels/algorithms.hpp: LCABA, proxBBO, the dense
  // solver). The dense solver reads the model's parameters, so it refuses per-environment ones.
  void set_solver(Algorithm solver, bool per_env_parameters) {
    if (!algorithm_traits(solver).solves_constraints)
      throw Error(std::string("Batch::set_constraint_solver: ") + algorithm_name(solver) + " does not solve constraints; use " +
                  algorithm_names(is_constraint_solver));
    if (solver == Algorithm::Constrained && per_env_parameters)
      throw Error("Batch::set_constraint_solver: the dense solver reads the model's parameters, not the per-environment ones; "
                  "call reset_parameters() first");
    solver_ = solver;
  }
  Algorithm solver() const { return solver_; }
  // Whether per-environment parameters can be set (not with the dense solver in use).
  void require_per_env_parameters(const char* who) const {
    if (active() && solver_ == Algorithm::Constrained)
      throw Error(std::string(who) + ": per-environment parameters are not available with the dense constraint solver (it "
                  "reads the model's parameters); use ConstraintSolver::Lcaba, or set_use_constraints(false) to step the tree only");
  }

  // The penalty mu (ProximalSettings), iteration cap, tolerance. The default mu is 1e4 in double
  // and 1e2 in float lanes: LCABA's primal solves lose accuracy as mu grows (mu K^T K swamps light
  // links' inertia; lcaba-proxbbo §VI-D), and float has seven digits to lose from. Smaller mu costs
  // iterations. proxBBO keeps its accuracy at stiff penalties (1e6 and more).
  void set_settings(const ProximalSettings& settings) {
    check_proximal_settings(settings, "Batch::set_constraint_settings");
    settings_ = settings;
  }
  const ProximalSettings& settings() const { return settings_; }
  static constexpr double default_penalty() {
    return std::is_same_v<T, float> ? 1e2 : algorithm_traits(Algorithm::Lcaba).default_mu;
  }

  // Per environment, from the last constrained call (the worst of its solves: substeps, Runge-Kutta
  // stages): the solver's iterations and residual ||J qdd + drift - k||_inf; the multipliers N x m (M qdd + b = tau + J^T lambda,
  // rows as the model's constraint rows, in constraint frames), the recursive solvers' next warm
  // start.
  const std::vector<int>& iterations() const { return iterations_; }
  const std::vector<T>& residual() const { return residual_; }
  // 1 where the stopping test ended the solve (converged, or stalled at the least-squares
  // solution of inconsistent rows: kernels/loops/loop_constraints.hpp), 0 where the iteration cap did.
  const std::vector<std::uint8_t>& converged() const { return converged_; }
  const T* multipliers() const { return lambda_.data(); }
  T* multipliers(int e) { return lambda_.data() + static_cast<long>(e) * model_.constraint_rows; }  // environment e's m: the warm start
  void clear_multipliers(int e) {
    std::fill_n(lambda_.data() + static_cast<long>(e) * model_.constraint_rows, model_.constraint_rows, T(0));
  }
  const LcabaPlan& lcaba_plan() const { return lcaba_plan_; }
  const ProxBboPlan& proxbbo_plan() const { return proxbbo_plan_; }

  // The block's multipliers into ws.lambda (zero in lanes without a valid environment): the warm start.
  void warm_start(int block, BlockWorkspace<L>& ws, const bool* valid) const {
    using Traits = LaneTraits<L>;
    const int m = model_.constraint_rows;
    for (int l = 0; l < W; ++l)
      for (int k = 0; k < m; ++k)
        ws.stage_lambda[static_cast<size_t>(k * W + l)] = valid[l] ? lambda_[static_cast<size_t>((block * W + l) * m + k)] : T(0);
    for (int k = 0; k < m; ++k) ws.lambda[static_cast<size_t>(k)] = Traits::load(&ws.stage_lambda[static_cast<size_t>(k * W)]);
  }
  // ws.lambda back into the valid environments' rows.
  void store_multipliers(int block, const BlockIO<L>& io, const BlockWorkspace<L>& ws, const bool* valid) {
    io.write_rows(block, valid, ws.lambda.data(), model_.constraint_rows, lambda_.data());
  }

  // The block's constrained accelerations ws.qdd and multipliers ws.lambda from ws.q, ws.v and the
  // applied torque ws.tau_applied, with the constants `c` (the block's parameters; the dense
  // solver reads `dense_model`, which has the same gains). With a finite drift tolerance
  // (set_drift_check), each environment's largest loop position error at ws.q is kept for
  // report() (the constants must then have every position error computed:
  // LoopStabilisation::apply).
  void solve(int block, const ModelConstants<L>& c, BlockWorkspace<L>& ws, const bool* valid, const Model& dense_model) {
    if (solver_ == Algorithm::Constrained) {
      solve_dense(block, c, ws, valid, dense_model);
      return;
    }
    ProximalSettings call_settings = settings_;  // with this call's plateau tolerance
    call_settings.plateau_tolerance = plateau_tolerance_;
    const LoopDynamicsResult<L> r =
        solver_ == Algorithm::Lcaba
            ? lcaba_kernel(c, lcaba_plan_, *ws.lcaba, ws.q.data(), ws.v.data(), ws.tau_applied.data(), call_settings, ws.qdd.data(),
                           ws.lambda.data(), ws.violation.data())
            : proxbbo_kernel(c, proxbbo_plan_, *ws.proxbbo, ws.q.data(), ws.v.data(), ws.tau_applied.data(), call_settings,
                             ws.qdd.data(), ws.lambda.data(), ws.violation.data());
    using Traits = LaneTraits<L>;
    alignas(64) T iterations[W], residual[W], converged[W];
    Traits::store(r.iterations, iterations);
    Traits::store(r.residual, residual);
    Traits::store(r.converged, converged);
    alignas(64) T drift[W] = {};
    if (std::isfinite(drift_tolerance_)) {
      using std::abs;
      using std::max;
      const auto& terms = solver_ == Algorithm::Lcaba ? ws.lcaba->terms : ws.proxbbo->terms;
      L largest(T(0));
      for (size_t j = 0; j < c.constraints.size(); ++j)
        for (int r = 0; r < c.constraints[j].dim; ++r) largest = max(largest, abs(terms[j].position_error[r]));
      Traits::store(largest, drift);
    }
    for (int l = 0; l < W && block * W + l < n_; ++l)
      if (valid[l]) record(static_cast<size_t>(block * W + l), static_cast<int>(iterations[l]), residual[l], converged[l] != T(0), drift[l]);
  }

  // Before a call's solves on a block: its environments' report starts empty; each solve of the
  // call (substeps, Runge-Kutta stages) then adds to it, so the report is the call's worst.
  void begin_report(int block, const bool* valid) {
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      if (!valid[l]) continue;
      const size_t e = static_cast<size_t>(block * W + l);
      iterations_[e] = 0, residual_[e] = T(0), converged_[e] = 1, drift_[e] = T(0);
    }
  }

  // Before a call's blocks run: the drift tolerance of its report() (infinity: not measured).
  void set_drift_check(double tolerance) { drift_tolerance_ = tolerance; }
  // Before a call's blocks run: the plateau tolerance its LCABA and proxBBO solves stop at
  // (ProximalSettings::plateau_tolerance; step() passes LoopStabilisationSettings', and
  // forward_dynamics() the settings' own, 0 by default).
  void set_plateau_tolerance(double tolerance) { plateau_tolerance_ = tolerance; }
  // Per environment, the largest loop position error (m, rad) at the states the last step
  // solved at (each substep's start, Runge-Kutta's stage states); 0 when drift is not measured (forward_dynamics(), drift tolerance infinite).
  const std::vector<T>& drift() const { return drift_; }

  // The block's environments whose solve hit the iteration cap get
  // EnvStatus::ConstraintNotConverged, and those off their loops by more than the drift
  // tolerance EnvStatus::LoopDrift (reports: the results are written).
  void report(int block, BlockIO<L>& io, const bool* valid) const {
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      const size_t e = static_cast<size_t>(block * W + l);
      if (!valid[l]) continue;
      if (!converged_[e]) io.report(block * W + l, EnvStatus::ConstraintNotConverged);
      if (static_cast<double>(drift_[e]) > drift_tolerance_) io.report(block * W + l, EnvStatus::LoopDrift);
    }
  }

  // The block's report when the contact stage solved the loops (as rows of its problem): its
  // iterations and residual, per environment (contact_solving.hpp's, already stored there).
  void store_report(int block, const bool* valid, const std::vector<int>& iterations, const std::vector<T>& residual) {
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      if (!valid[l]) continue;
      const size_t e = static_cast<size_t>(block * W + l);
      iterations_[e] = iterations[e];
      residual_[e] = residual[e];
      converged_[e] = 1;  // the contact stage reports its own cap (EnvStatus::ContactNotConverged)
    }
  }

 private:
  // The dense oracle, lane by lane (valid lanes only; the others get qdd = 0), in double: the
  // block's lanes through the staging rows into Eigen vectors and back.
  void solve_dense(int block, const ModelConstants<L>& c, BlockWorkspace<L>& ws, const bool* valid, const Model& model) {
    using Traits = LaneTraits<L>;
    const int nq = model_.nq, nv = model_.nv, m = model_.constraint_rows;
    for (int k = 0; k < nv; ++k) {  // the armature of `c` (lane 0: per-environment parameters are refused here)
      alignas(64) T lanes[W];
      Traits::store(c.armature[static_cast<size_t>(k)], lanes);
      ws.dense_armature[static_cast<size_t>(k)] = lanes[0];
    }
    ws.dense->constants.armature = ws.dense_armature;
    for (int k = 0; k < nq; ++k) Traits::store(ws.q[static_cast<size_t>(k)], &ws.stage_q[static_cast<size_t>(k * W)]);
    for (int k = 0; k < nv; ++k) {
      Traits::store(ws.v[static_cast<size_t>(k)], &ws.stage_v[static_cast<size_t>(k * W)]);
      Traits::store(ws.tau_applied[static_cast<size_t>(k)], &ws.stage_tau[static_cast<size_t>(k * W)]);
    }
    for (int l = 0; l < W; ++l) {
      const size_t lane = static_cast<size_t>(l);
      if (!valid[l]) {
        for (int k = 0; k < nv; ++k) ws.stage_qdd[static_cast<size_t>(k * W) + lane] = T(0);
        continue;
      }
      for (int k = 0; k < nq; ++k) ws.dense_q[k] = ws.stage_q[static_cast<size_t>(k * W) + lane];
      for (int k = 0; k < nv; ++k) {
        ws.dense_v[k] = ws.stage_v[static_cast<size_t>(k * W) + lane];
        ws.dense_tau[k] = ws.stage_tau[static_cast<size_t>(k * W) + lane];
      }
      const Eigen::VectorXd& qdd =
          constrained_forward_dynamics(model, *ws.dense, *ws.dense_constrained, ws.dense_q, ws.dense_v, ws.dense_tau, settings_);
      for (int k = 0; k < nv; ++k) ws.stage_qdd[static_cast<size_t>(k * W) + lane] = static_cast<T>(qdd[k]);
      for (int k = 0; k < m; ++k) ws.stage_lambda[static_cast<size_t>(k * W) + lane] = static_cast<T>(ws.dense_constrained->lambda[k]);
      record(static_cast<size_t>(block * W + l), ws.dense_constrained->iterations, static_cast<T>(ws.dense_constrained->residual_norm),
             ws.dense_constrained->converged,
             std::isfinite(drift_tolerance_) ? static_cast<T>(ws.dense_constrained->constraints.position_error.cwiseAbs().maxCoeff()) : T(0));
    }
    for (int k = 0; k < nv; ++k) ws.qdd[static_cast<size_t>(k)] = Traits::load(&ws.stage_qdd[static_cast<size_t>(k * W)]);
    for (int k = 0; k < m; ++k) ws.lambda[static_cast<size_t>(k)] = Traits::load(&ws.stage_lambda[static_cast<size_t>(k * W)]);
  }

  // One solve's report for environment e, added to the call's (begin_report): the most
  // iterations, the largest residual and drift, converged only if every solve was.
  void record(size_t e, int iterations, T residual, bool converged, T drift) {
    iterations_[e] = std::max(iterations_[e], iterations);
    residual_[e] = std::max(residual_[e], residual);
    converged_[e] = converged_[e] && converged;
    drift_[e] = std::max(drift_[e], drift);
  }

  const Model& model_;
  int n_;
  bool enabled_ = true;
  Algorithm solver_ = Algorithm::Lcaba;
  ProximalSettings settings_;
  LcabaPlan lcaba_plan_;
  ProxBboPlan proxbbo_plan_;
  std::vector<T> lambda_;  // N x m
  std::vector<int> iterations_;
  std::vector<T> residual_;
  std::vector<std::uint8_t> converged_;
  std::vector<T> drift_;
  double drift_tolerance_ = std::numeric_limits<double>::infinity();  // of the current call
  double plateau_tolerance_ = 0;  // of the current call (set_plateau_tolerance)
};

}  // namespace batchdyn
