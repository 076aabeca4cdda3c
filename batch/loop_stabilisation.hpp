// Loop stabilisation, a stage of step(): Baumgarte gains for the loop constraints whose spec
// gives none (kp = kd = 0 and ConstraintSpec::gains_given false: every shipped constraint
// file), scaled to the substep h as MuJoCo scales its constraints' reference acceleration
// (solref = time constant, damping ratio):
//     T = max(time_constant, 2 h),   kd = 2 / T,   kp = 1 / (T zeta)^2,
// so a loop's position error e obeys e'' + kd e' + kp e = 0: critically damped at zeta = 1, it
// decays in about T instead of drifting. Without it, what the acceleration-level rows leave
// (integration error, a solver's tolerance, float rounding) accumulates: a float humanoid's
// welded soles moved 451 m in 20 s. The clamp to 2 h keeps the error dynamics resolvable by
// the step (MuJoCo's refsafe).
//
// On by default in step(), with MuJoCo's defaults (0.02 s, 1). forward_dynamics(), the
// reference functions and `batchdyn eval` use the spec's gains (0: the dynamics as Pinocchio
// defines it). A constraint with gains given keeps them.
//
// The stage also measures drift: in step(), every loop's position error (m, rad) at the step's
// start is computed, and an environment off its loops by more than drift_tolerance gets
// EnvStatus::LoopDrift (a report: it is stepped).
#pragma once

#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include "batch/block_workspace.hpp"

namespace batchdyn {

struct LoopStabilisationSettings {
  double time_constant = 0.02;  // s; 0 turns the default gains off
  double damping_ratio = 1.0;   // 1: critically damped
  double drift_tolerance = 0.01;  // largest |position error| (m, rad) before EnvStatus::LoopDrift; infinity: no check
};

// Throws Error naming `where` unless the time constant is finite and >= 0, the damping ratio
// finite and > 0, and the drift tolerance > 0 (infinity allowed) and not NaN.
inline void check_loop_stabilisation(const LoopStabilisationSettings& s, const char* where) {
  const auto fail = [&](const char* what, double value) {
    std::ostringstream text;
    text << where << ": " << what << ", got " << value;
    throw Error(text.str());
  };
  if (!std::isfinite(s.time_constant) || s.time_constant < 0) fail("the time constant must be finite and >= 0 (0: off)", s.time_constant);
  if (!std::isfinite(s.damping_ratio) || !(s.damping_ratio > 0)) fail("the damping ratio must be finite and > 0", s.damping_ratio);
  if (std::isnan(s.drift_tolerance) || !(s.drift_tolerance > 0)) fail("the drift tolerance must be > 0 (infinity: no check)", s.drift_tolerance);
}

template <class L>
class LoopStabilisation {
 public:
  using T = lane_scalar<L>;

  explicit LoopStabilisation(const Model& model) : model_(model), stabilised_model_(model) {
    for (size_t j = 0; j < model.constraints.size(); ++j) {
      const Constraint& k = model.constraints[j];
      if (!k.spec.gains_given && k.kp == 0 && k.kd == 0) defaulted_.push_back(static_cast<int>(j));
    }
  }

  void set_settings(const LoopStabilisationSettings& settings) {
    check_loop_stabilisation(settings, "Batch::set_loop_stabilisation");
    settings_ = settings;
    prepared_h_ = -1;
  }
  const LoopStabilisationSettings& settings() const { return settings_; }
  // The constraints that get the default gains (indices into model.constraints).
  const std::vector<int>& stabilised_constraints() const { return defaulted_; }
  bool measures_drift() const { return std::isfinite(settings_.drift_tolerance); }

  // The default gains (kp, kd) for a substep h; (0, 0) when off.
  std::pair<double, double> gains(double h) const {
    if (settings_.time_constant == 0) return {0.0, 0.0};
    const double time = std::max(settings_.time_constant, 2 * h);
    return {1 / (time * time * settings_.damping_ratio * settings_.damping_ratio), 2 / time};
  }

  // Before a step() of substep h (single-threaded, before the blocks run): the gains, and the
  // model the dense solver reads with them.
  void prepare(double h) {
    if (h == prepared_h_) return;
    prepared_h_ = h;
    std::tie(kp_, kd_) = gains(h);
    for (int j : defaulted_) stabilised_model_.constraints[static_cast<size_t>(j)].kp = kp_, stabilised_model_.constraints[static_cast<size_t>(j)].kd = kd_;
  }
  // The model the dense solver reads: with the stabilising gains in step(), as loaded otherwise.
  const Model& model(bool stepping) const { return stepping ? stabilised_model_ : model_; }

  // The constants a block's kernels read. In step() (`stepping`): `c` with the default gains of
  // prepare() and, when drift is measured, every loop's position error computed (this thread's
  // copy in ws.constants). Otherwise the spec's gains: ws.constants is put back if a step
  // edited it (it is the block's constants when parameters vary per environment).
  const ModelConstants<L>& apply(const ModelConstants<L>& c, BlockWorkspace<L>& ws, bool stepping) const {
    if (model_.constraints.empty()) return c;
    if (!stepping) {
      if (&c == &ws.constants) set_gains(ws.constants, /*stepping=*/false);
      return c;
    }
    ModelConstants<L>& out = ws.constants;
    if (&c != &out) out.view_parameters_of(c);
    set_gains(out, /*stepping=*/true);
    return out;
  }

 private:
  void set_gains(ModelConstants<L>& out, bool stepping) const {
    // The position error (a log6 for welds) is computed where a kp needs it or drift is measured.
    for (size_t j = 0; j < out.constraints.size(); ++j)
      out.constraints[j].uses_position_error = model_.constraints[j].kp != 0 || (stepping && measures_drift());
    for (int j : defaulted_) {
      ConstraintConstants<L>& k = out.constraints[static_cast<size_t>(j)];
      k.kp = L(static_cast<T>(stepping ? kp_ : 0.0)), k.kd = L(static_cast<T>(stepping ? kd_ : 0.0));
      if (stepping && kp_ != 0) k.uses_position_error = true;
    }
  }

  const Model& model_;
  Model stabilised_model_;  // model_ with the default gains: the dense solver's
  std::vector<int> defaulted_;
  LoopStabilisationSettings settings_;
  double prepared_h_ = -1, kp_ = 0, kd_ = 0;
};

}  // namespace batchdyn
