// Loop stabilisation, a stage of step(): the form and the gains of the loop rows for the
// constraints whose spec gives no gains (kp = kd = 0 and ConstraintSpec::gains_given false: every
// shipped constraint file), with the time constant scaled to the substep h as MuJoCo scales its
// constraints' reference acceleration (solref): T = max(time_constant, 2 h).
//
// With semi-implicit Euler (the default integrator) the rows are velocity-level
// (Constraint::velocity_level): the velocity the step ends with meets
//     J v+ = -e' / T,   i.e.   J qdd = -(1/h) J v - (1/(h T)) e'   (kd = 1/h, kp = 1/(h T)),
// without the drift J̇v, as simulators (and this engine's contact rows) hold constraints: v+ is
// the free velocity projected onto the loops, so the rows never add kinetic energy. e' is the
// position error above its rounding floor (kernels/loops/velocity_level_rows.hpp). The error decays
// as e' = -e / T (first order; the damping ratio plays no part).
//
// Why the velocity level is the default: at a closed chain's singular pose (a welded leg
// straightening, a four-bar at its toggle) J̇v / σ_min grows without bound, and acceleration-level
// rows put it into v+ in one step. Passive, with those rows, the two Digits holding a box gained
// 2100 J in the step their knee straightened (q̈ = 8e4 rad/s², the dense null-space oracle
// agreeing) and overflowed at 2.18 s; the biped with welded feet failed at 2.56 s and the
// humanoid holding a cube with welded feet at 3.49 s (1.57 s in float). With velocity-level rows
// all three run 10 s with their energy at or below the start. They cost one more pass over the
// bodies (the velocity-product accelerations) and about as many solver iterations: 0-5 % more
// per step on the shipped loop models.
//
// With RK4, or with velocity_level = false, the rows are acceleration-level Baumgarte rows:
//     J qdd + J̇v = -kd J v - kp e,   kd = 2 / T,   kp = 1 / (T zeta)^2,
// so e'' + kd e' + kp e = 0: critically damped at zeta = 1, e decays in about T. RK4's stages
// need the continuous dynamics' qdd, which a velocity target is not.
//
// Without either, what the rows leave (integration error, a solver's tolerance, float
// rounding) accumulates: a float humanoid's welded soles moved 451 m in 20 s. The clamp to 2 h
// keeps the error dynamics resolvable by the step (MuJoCo's refsafe).
//
// On by default in step(), with MuJoCo's defaults (0.02 s, 1). forward_dynamics(), the
// reference functions and `batchdyn eval` use the spec's gains (0: the dynamics as Pinocchio
// defines it). A constraint with gains given keeps them.
//
// The stage also measures drift: in step(), every loop's position error (m, rad) at the step's
// start is computed, and an environment off its loops by more than drift_tolerance gets
// EnvStatus::LoopDrift (a report: it is stepped).
//
// And it sets how far step()'s loop solves go near singular poses (plateau_tolerance): the
// dynamics of a step, not the reference's, so it lives with the step's other loop settings.
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
  double time_constant = 0.02;  // s; 0 turns the default gains off (velocity level: J v+ = 0, no position term)
  double damping_ratio = 1.0;   // 1: critically damped (acceleration-level rows only)
  bool velocity_level = true;   // velocity-level rows with semi-implicit Euler (the default); false: Baumgarte rows
  double drift_tolerance = 0.01;  // largest |position error| (m, rad) before EnvStatus::LoopDrift; infinity: no check
  // step()'s LCABA and proxBBO solves also stop where the rows' violation sits on a plateau
  // within this of its terms (ProximalSettings::plateau_tolerance, whose forward_dynamics()
  // default is 0). Near a singular pose the rows pin q̈ no better than that, and the
  // corrections past it cost 20-50 sweeps (two Digits holding a box, double). 1e-9 of 20 m/s^2
  // terms is 2e-8 m/s^2, 2e-11 m/s of loop velocity over a 1 ms step. 0: solve to the tolerance.
  double plateau_tolerance = 1e-9;
};

// Throws Error naming `where` unless the time constant is finite and >= 0, the damping ratio
// finite and > 0, the drift tolerance > 0 (infinity allowed) and not NaN, and the plateau
// tolerance finite and >= 0.
inline void check_loop_stabilisation(const LoopStabilisationSettings& s, const char* where) {
  const auto fail = [&](const char* what, double value) {
    std::ostringstream text;
    text << where << ": " << what << ", got " << value;
    throw Error(text.str());
  };
  if (!std::isfinite(s.time_constant) || s.time_constant < 0) fail("the time constant must be finite and >= 0 (0: off)", s.time_constant);
  if (!std::isfinite(s.damping_ratio) || !(s.damping_ratio > 0)) fail("the damping ratio must be finite and > 0", s.damping_ratio);
  if (std::isnan(s.drift_tolerance) || !(s.drift_tolerance > 0)) fail("the drift tolerance must be > 0 (infinity: no check)", s.drift_tolerance);
  if (!std::isfinite(s.plateau_tolerance) || s.plateau_tolerance < 0) fail("the plateau tolerance must be finite and >= 0 (0: off)", s.plateau_tolerance);
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

  // Whether step() with this integrator gives the rows the velocity-level form.
  bool velocity_level(bool semi_implicit_euler) const { return settings_.velocity_level && semi_implicit_euler; }
  // The default gains (kp, kd) for a substep h, of the velocity-level form (1/(h T), 1/h; kp = 0
  // when the time constant is 0) or the acceleration-level one ((0, 0) when off).
  std::pair<double, double> gains(double h, bool velocity_level) const {
    const bool off = settings_.time_constant == 0;
    const double time = std::max(settings_.time_constant, 2 * h);
    if (velocity_level) return {off ? 0.0 : 1 / (h * time), 1 / h};
    if (off) return {0.0, 0.0};
    return {1 / (time * time * settings_.damping_ratio * settings_.damping_ratio), 2 / time};
  }

  // Before a step() of substep h (single-threaded, before the blocks run): the form and the
  // gains, and the model the dense solver reads with them.
  void prepare(double h, bool semi_implicit_euler) {
    const bool velocity = velocity_level(semi_implicit_euler);
    if (h == prepared_h_ && velocity == prepared_velocity_level_) return;
    prepared_h_ = h, prepared_velocity_level_ = velocity;
    std::tie(kp_, kd_) = gains(h, velocity);
    for (int j : defaulted_) {
      Constraint& k = stabilised_model_.constraints[static_cast<size_t>(j)];
      k.kp = kp_, k.kd = kd_, k.velocity_level = velocity;
    }
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
      k.velocity_level = stepping && prepared_velocity_level_;
      if (stepping && kp_ != 0) k.uses_position_error = true;
    }
  }

  const Model& model_;
  Model stabilised_model_;  // model_ with the default gains: the dense solver's
  std::vector<int> defaulted_;
  LoopStabilisationSettings settings_;
  double prepared_h_ = -1, kp_ = 0, kd_ = 0;
  bool prepared_velocity_level_ = false;
};

}  // namespace batchdyn
