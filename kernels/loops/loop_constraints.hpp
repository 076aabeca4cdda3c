// A loop constraint as the recursive kernels see it (lcaba-proxbbo eq. 1c): rows on the
// spatial accelerations of its two bodies,
//     K^1 a_{body1} + K^2 a_{body2} = kappa,
// with a_i the body accelerations of ABA's sweeps (body frames, the base acceleration a_0 = -g
// included; the world's own acceleration is a_0). The rows K^t are the terminal rows of
// kernels/tree/constraint_rows.hpp (kept as their force columns K^t^T e_r), so sum_t K^t J_t = J,
// and kappa is chosen so that the equation is exactly the dense oracle's J qdd + drift = k
// (kernels/loops/constraints.hpp): kappa = k - Kdot v, where Kdot v = drift - sum_t K^t a_t(qdd = 0)
// is the part of the drift the rows do not see:
//   weld:      v1 x (^1X_2 v2)                          (frame velocities v1, v2)
//   revolute:  the weld's 3 linear rows and its angular rows along the two normals
//   connect:   w1 x v1.lin - ^1R_2 (w2 x v2.lin)
// The a_0 terms cancel between the two sides (a rigid-body motion of the whole system meets
// every constraint), so a side on the world is written with a_0 like any body. Lane-generic,
// no branches on values; O(1) per constraint.
//
// A velocity-level constraint (ConstraintConstants::velocity_level: step()'s loop stabilisation,
// batch/loop_stabilisation.hpp) drops J̇v: its rows say J qdd = k. With a^vp_t the velocity-product
// accelerations of its bodies (a_t at qdd = 0 without gravity, so that a_t = J_t qdd + a^vp_t +
// the a_0 part), that is K^1 a_1 + K^2 a_2 = k + K^1 a^vp_1 + K^2 a^vp_2.
#pragma once

#include "kernels/tree/aba.hpp"
#include "kernels/tree/constraint_rows.hpp"
#include "kernels/tree/kinematics.hpp"
#include "kernels/loops/proximal_settings.hpp"
#include "kernels/tree/singular_joints.hpp"
#include "kernels/loops/velocity_level_rows.hpp"
#include "layout/lie_group.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace batchdyn {

template <class S>
struct LoopConstraintTerms {
  // K^t^T e_r for side t (0: body1, 1: body2), in that body's frame. A side on the world (body2
  // = 0) has none formed: every kernel skips the world's side, and the one product a kernel needs
  // of it, K^2 a_0, comes from world_from_frame1 (world_side_rows_times).
  Force<S> columns[2][6];
  Transform<S> world_from_frame1;  // ^0M_{c1}
  S rhs[6];                // kappa
  S velocity_error[6];     // nu = J v (the Baumgarte velocity term)
  S position_error[6];     // e, with de/dt = nu (kernels/loops/constraints.hpp); zero unless computed (below)
};

// Terms of constraint k from the bodies' world placements and velocities (world_from_body[0]
// = identity, velocity[0] = 0). The position error of a weld or revolute constraint (a log6)
// is computed when its Baumgarte kp needs it or `position_error` asks for it. A velocity-level
// constraint's kappa needs the bodies' velocity-product accelerations a^vp (`velocity_product`,
// a^vp_0 = 0; without it, kappa is the acceleration-level one).
template <class S>
void loop_constraint_terms(const ConstraintConstants<S>& k, const Transform<S>* world_from_body, const Motion<S>* velocity,
                           LoopConstraintTerms<S>& out, bool position_error = false, const Motion<S>* velocity_product = nullptr) {
  // A side 2 on the world (the plan's body2 = 0, where world_from_body is the identity and the
  // velocity zero) is read as such rather than composed with the identity, and its rows are not
  // formed (LoopConstraintTerms::columns).
  const bool on_world = k.body2 == 0;
  const Transform<S>& world_from_c1 = out.world_from_frame1 = world_from_body[k.body1] * k.placement1;
  const Transform<S> world_from_c2 = on_world ? k.placement2 : world_from_body[k.body2] * k.placement2;
  const Transform<S> c1_from_c2 = world_from_c1.inverse() * world_from_c2;
  std::copy(k.body1_columns, k.body1_columns + k.dim, out.columns[0]);  // constant: frame 1 is fixed in body 1
  if (!on_world) terminal_force_columns(k, -1, body2_from_frame1(k, world_from_body), out.columns[1]);
  const Motion<S> v1 = k.placement1.act_inv(velocity[k.body1]);
  const Motion<S> v2 = on_world ? Motion<S>::zero() : k.placement2.act_inv(velocity[k.body2]);

  S velocity_product_rows[6];  // Kdot v
  S* error_rows = out.position_error;
  if (k.type == ConstraintType::Connect) {
    const Vec3<S> kdot = cross(v1.angular, v1.linear) - c1_from_c2.rotation * cross(v2.angular, v2.linear);
    for (int r = 0; r < 3; ++r) velocity_product_rows[r] = kdot[r], error_rows[r] = -c1_from_c2.translation[r];
  } else {
    const Motion<S> kdot = cross(v1, c1_from_c2.act(v2));
    const Motion<S> error = k.uses_position_error || position_error ? -log6_lanes(c1_from_c2) : Motion<S>::zero();
    for (int r = 0; r < 3; ++r) velocity_product_rows[r] = kdot.linear[r], error_rows[r] = error.linear[r];
    if (k.type == ConstraintType::Weld) {
      for (int r = 0; r < 3; ++r) velocity_product_rows[3 + r] = kdot.angular[r], error_rows[3 + r] = error.angular[r];
    } else {  // revolute: the angular rows along the normals of the axis
      velocity_product_rows[3] = dot(k.normal1, kdot.angular), error_rows[3] = dot(k.normal1, error.angular);
      velocity_product_rows[4] = dot(k.normal2, kdot.angular), error_rows[4] = dot(k.normal2, error.angular);
    }
  }
  const bool without_drift = k.velocity_level && velocity_product;
  for (int r = 0; r < k.dim; ++r) {
    out.velocity_error[r] = dot(out.columns[0][r], velocity[k.body1]);
    if (!on_world) out.velocity_error[r] += dot(out.columns[1][r], velocity[k.body2]);
    // k; a velocity-level row corrects the error above its rounding floor (kernels/loops/velocity_level_rows.hpp)
    const S corrected_error = k.velocity_level ? velocity_level_position_error(error_rows[r]) : error_rows[r];
    const S desired = -k.kp * corrected_error - k.kd * out.velocity_error[r];
    if (without_drift) {
      S known = dot(out.columns[0][r], velocity_product[k.body1]);  // K a^vp (a^vp_0 = 0)
      if (!on_world) known += dot(out.columns[1][r], velocity_product[k.body2]);
      out.rhs[r] = desired + known;
    } else {
      out.rhs[r] = desired - velocity_product_rows[r];
    }
  }
}

// The first forward sweep of the loop kernels (LCABA Alg. 1 and proxBBO Alg. 4, lines 1-5):
// ABA's (kernels/tree/aba.hpp: placements, world placements, velocities v_i, bias accelerations c_i,
// H_{i,i} = I_i, bias forces p_i), then per constraint its rows and rhs[6 j + r] = kappa with a
// side on the world's known K a_0 moved to the right (eq. 35). `ws` is a kernel workspace with
// those members (kernels/loops/lcaba_workspace.hpp, kernels/loops/proxbbo_workspace.hpp); `inertias` as in
// aba_first_forward_sweep.
// With velocity-level constraints, the bodies' velocity-product accelerations a^vp_i =
// ^iX_λ a^vp_λ + c_i (a^vp_0 = 0) first, in ws.acceleration: the roll-out overwrites every a_i
// after its parent's, so the array is free until then. One more pass over the bodies, O(n).
template <class S, class Workspace>
void loop_first_forward_sweep(const ModelConstants<S>& c, Workspace& ws, const S* q, const S* v,
                              BodyInertias inertias = BodyInertias::All) {
  aba_first_forward_sweep(c, ws, q, v, inertias);
  const bool velocity_level = std::any_of(c.constraints.begin(), c.constraints.end(), [](const auto& k) { return k.velocity_level; });
  std::vector<Motion<S>>& velocity_product = ws.acceleration;  // a^vp_i, until the roll-out
  if (velocity_level) {
    velocity_product[0] = Motion<S>::zero();
    for (size_t i = 1; i < c.tree.size(); ++i)
      velocity_product[i] = motion_to_body(c, static_cast<int>(i), ws.parent_from_body[i], velocity_product[static_cast<size_t>(c.tree[i].parent)]) +
                            ws.bias_acceleration[i];
  }
  ws.delta_acceleration[0] = Motion<S>::zero();
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    LoopConstraintTerms<S>& t = ws.terms[j];
    loop_constraint_terms(k, ws.world_from_body.data(), ws.velocity.data(), t, false, velocity_level ? velocity_product.data() : nullptr);
    S world_side[6];  // K^2 a_0 when side 2 is the world
    for (S& value : world_side) value = S(0);
    if (k.body2 == 0) world_side_rows_times(k, t.world_from_frame1, c.base_acceleration, world_side);
    for (int r = 0; r < k.dim; ++r) {
      S kappa = t.rhs[r];
      if (k.body1 == 0) kappa -= dot(t.columns[0][r], c.base_acceleration);
      if (k.body2 == 0) kappa -= world_side[r];
      ws.rhs[6 * j + static_cast<size_t>(r)] = kappa;
    }
  }
  ws.acceleration[0] = c.base_acceleration;
}

// The rows' violation K a - kappa per constraint row (m values, at the constraint's row), and
// its largest magnitude per lane. With `magnitude`, also the largest |kappa| + |K^1 a_1| +
// |K^2 a_2| over the rows: the size of the terms the violation is the difference of, which sets
// the violation's rounding floor (LoopConvergence). With `squared_norm`, also |K a - kappa|_2^2.
template <class S, class Workspace>
S loop_constraint_violation(const ModelConstants<S>& c, const Workspace& ws, S* violation, S* magnitude = nullptr,
                            S* squared_norm = nullptr) {
  using std::abs;
  using std::max;
  S largest(0), terms(0), squares(0);
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    const LoopConstraintTerms<S>& t = ws.terms[j];
    for (int r = 0; r < k.dim; ++r) {
      const S kappa = ws.rhs[6 * j + static_cast<size_t>(r)];
      const S side1 = k.body1 != 0 ? dot(t.columns[0][r], ws.acceleration[static_cast<size_t>(k.body1)]) : S(0);
      const S side2 = k.body2 != 0 ? dot(t.columns[1][r], ws.acceleration[static_cast<size_t>(k.body2)]) : S(0);
      const S value = side1 + side2 - kappa;
      violation[k.row + r] = value;
      largest = max(largest, abs(value));
      if (magnitude) terms = max(terms, abs(kappa) + abs(side1) + abs(side2));
      if (squared_norm) squares += value * value;
    }
  }
  if (magnitude) *magnitude = terms;
  if (squared_norm) *squared_norm = squares;
  return largest;
}

// out = scale K Δa per constraint row (m values, at the constraint's row): the rows applied to
// changes of the accelerations `delta_acceleration` (the world's side is fixed: Δa_0 = 0). The
// conjugate residual method's products with A (kernels/loops/conjugate_residual.hpp).
template <class S, class Workspace>
void loop_rows_times(const ModelConstants<S>& c, const Workspace& ws, const std::vector<Motion<S>>& delta_acceleration, const S& scale,
                     S* out) {
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    const LoopConstraintTerms<S>& t = ws.terms[j];
    for (int r = 0; r < k.dim; ++r) {
      const S side1 = k.body1 != 0 ? dot(t.columns[0][r], delta_acceleration[static_cast<size_t>(k.body1)]) : S(0);
      const S side2 = k.body2 != 0 ? dot(t.columns[1][r], delta_acceleration[static_cast<size_t>(k.body2)]) : S(0);
      out[k.row + r] = scale * (side1 + side2);
    }
  }
}

// What the reference entry points of the loop kernels (lcaba(), proxbbo()) keep for one
// model: the plan, the constants, the workspace and the outputs. Construct once per model.
template <class S, class Plan, class Workspace>
struct LoopDynamicsData {
  LoopDynamicsData(const Model& model, Plan model_plan)
      : plan(std::move(model_plan)), constants(model), singular_joints(find_singular_joints(model)), workspace(model, plan),
        qdd(VectorX<S>::Zero(model.nv)),
        lambda(VectorX<S>::Zero(model.constraint_rows)), violation(VectorX<S>::Zero(model.constraint_rows)) {}
  Plan plan;
  ModelConstants<S> constants;
  std::vector<int> singular_joints;  // kernels/tree/singular_joints.hpp: the entry point refuses a singular model
  Workspace workspace;
  VectorX<S> qdd;
  VectorX<S> lambda;     // multipliers (M qdd + b = tau + J^T lambda); the next call's warm start
  VectorX<S> violation;  // J qdd + drift - k at exit
  int iterations = 0;
  S residual = S(0);     // ||violation||_inf
  bool converged = false;  // the stopping test ended the iterations, not the cap (LoopConvergence)
};

// Runs `kernel` (lcaba_kernel, proxbbo_kernel) on Eigen vectors into `data`; returns data.qdd.
template <class S, class Data, class Kernel>
const VectorX<S>& run_loop_kernel(const char* name, const Model& model, Data& data, const VectorX<S>& q, const VectorX<S>& v,
                                  const VectorX<S>& tau, const ProximalSettings& settings, Kernel kernel) {
  check_proximal_settings(settings, name);
  require_regular(model, data.singular_joints, name);
  const auto r = kernel(data.constants, data.plan, data.workspace, q.data(), v.data(), tau.data(), settings, data.qdd.data(),
                        data.lambda.data(), data.violation.data());
  data.iterations = static_cast<int>(r.iterations);
  data.residual = r.residual;
  data.converged = r.converged != S(0);
  return data.qdd;
}

// The outer iterations' stopping test of LCABA and proxBBO, per lane. A lane stops when
//   met:      the rows' violation is within tolerance * (1 + the size of the terms it is the
//             difference of: |kappa| + |K^1 a_1| + |K^2 a_2|, see loop_constraint_violation).
//             Relative to those terms, not to kappa alone: a held object's rows subtract two
//             accelerations of 10 m/s^2 to get 0, and float cannot resolve that below ~1e-6;
//   settled:  after the first correction, the last change of qdd is within
//             tolerance * (1 + max |qdd|);
//   stalled:  the violation's 2-norm did not fall at the last correction. The corrections'
//             conjugate residual method (kernels/loops/conjugate_residual.hpp) minimises it
//             monotonically over its Krylov space. Where it rises, rounding has taken over: in
//             an ill-conditioned grip the floor sits above the tolerance (measured on hand_cube:
//             1e-11 against terms of 20 m/s^2), and for inconsistent rows (a rollout that
//             drifted off its loops with redundant rows) only the part outside range(K) is left
//             once the rest has converged; qdd is then the least-squares solution to rounding. Judged on any rise,
//             not on a relative fall over a window: the inconsistent part can dominate the norm
//             while the rest still converges (measured: a window rule stopped 4 % away from the
//             least-squares qdd on a loop closed twice, 1 mm apart), and on the change of qdd,
//             which does not shrink monotonically in the conjugate residual method (hand_cube:
//             5e-7, then 4e-5 and 1.6e-3 while q̈ was still 2e-3 off);
//   null:     judged by the corrections after their product with A: only A's numerical null
//             space is left in the residual (ConjugateResidual::only_null_space_left, stop()).
//   floor:    the violation is within kFloorFactor times the met test's bound and the last
//             correction took less than a tenth off its 2-norm: the rounding floor of an
//             ill-conditioned grip, which can sit just above the bound, where the conjugate
//             residual corrections creep down it without a rise for the stall test to see
//             (measured in passive rollouts: hand_cube in double 22-37 corrections at 2e-12
//             against a bound of 2.1e-12, the humanoid holding a cube with its feet welded in
//             float 34 at 3e-4, where 20 is the target). A solve converging at any useful rate
//             takes far more than a tenth off per correction and never stops on it.
//             The bound is at least ProximalSettings::plateau_tolerance of the terms, for
//             plateaus (step() sets 1e-9; the reference functions 0): near a singular pose (a
//             knee four-bar near its toggle) the rows are nearly redundant and the conjugate
//             residual iteration sits on a plateau, its violation constant to
//             three digits for 5-30 corrections at 1e-11..1e-9 of its terms, until it resolves
//             the near-singular mode (two Digits holding a box in double: 2-3 plateaus in a
//             step, 28-52 corrections in all). What those corrections buy is a violation below
//             1e-9 of the terms along a direction the rows barely pin: measured over their
//             1000-step rollouts, continuing past the plateau moved qdd by at most 1-5 % of
//             1 + |qdd|, while two solves of the same state run to the tolerance from different
//             warm starts differed by up to 57 rad/s^2 there. The paper's solves stop at 1e-6
//             (lcaba-proxbbo §VI-D).
// All of these count as converged. A lane still going at the iteration cap is not. A lane that
// stops stays stopped (frozen, so its result does not depend on its block mates). The
// tolerance is raised to kEpsilons epsilon of the lane's scalar. Tolerance 0 turns the test
// off: every iteration runs (flop counts, studies).
template <class S>
class LoopConvergence {
 public:
  using Mask = decltype(S(0) == S(0));
  // The smallest tolerance a lane's scalar resolves: the violation is a difference of
  // accelerations that went through the tree's sweeps, and in float its rounding reaches ~50
  // epsilon of the terms on a held cube (measured: 4e-5 against terms of 20 m/s^2).
  static constexpr double kEpsilons = 128;
  // How far above the met test's bound the floor test may stop a creeping lane (at least
  // settings.plateau_tolerance of the terms).
  static constexpr double kFloorFactor = 10;

  explicit LoopConvergence(const ProximalSettings& settings)
      : LoopConvergence(settings, std::max(settings.tolerance, kEpsilons * std::numeric_limits<lane_scalar<S>>::epsilon())) {}

  // Before correction `it` (1, 2, ...), with the rows' violation (largest and squared 2-norm)
  // and the size of its terms (loop_constraint_violation) and the last correction's largest
  // change of qdd: stops the lanes that have converged; counts the correction in the others.
  // Returns whether any lane goes on: false once all have stopped, or at it = max_iterations
  // (after the test, so the last correction is judged too).
  bool go_on(int it, const S& residual, const S& squared_norm, const S& magnitude, const S& step, const S* qdd, size_t nv) {
    using std::abs;
    using std::max;
    S qdd_scale(1);
    for (size_t k = 0; k < nv; ++k) qdd_scale = max(qdd_scale, S(1) + abs(qdd[k]));
    // Each test is evaluated whole (no short-circuit on a scalar lane): the flops do not depend
    // on the state.
    auto done = residual <= tolerance_ * (S(1) + magnitude);
    if (it > 1) {
      const auto settled = step <= tolerance_ * qdd_scale;
      done = done || settled;
    }
    if (it > 1) {
      stalled_ = squared_norm >= previous_squared_norm_;
      const S floor_bound = floor_tolerance_ * (S(1) + magnitude);
      const S slow_fall = S(0.81) * previous_squared_norm_;  // a tenth off the 2-norm: 0.9^2 off its square
      const auto at_floor = (residual <= floor_bound) && (squared_norm >= slow_fall);
      done = done || stalled_ || at_floor;
    }
    previous_squared_norm_ = squared_norm;
    if (stops_) active_ = active_ && !done;
    if (!any_lane(active_) || it >= max_iterations_) return false;
    iterations_ += select(active_, S(1), S(0));
    return true;
  }
  const Mask& active() const { return active_; }
  // Stops the lanes of `done` (converged: the multiplier iteration found nothing left it can
  // resolve, ConjugateResidual::only_null_space_left) unless the test is off.
  void stop(const Mask& done) {
    if (stops_) active_ = active_ && !done;
  }
  // The lanes whose violation did not fall at the last test (ConjugateResidual restarts them
  // when the test is off).
  const Mask& stalled() const { return stalled_; }
  const S& iterations() const { return iterations_; }  // sweeps run: 1 + the corrections
  // 1 where the lane stopped on the test, 0 where it is still going (the cap ended it).
  S converged() const { return select(active_, S(0), S(1)); }

 private:
  LoopConvergence(const ProximalSettings& settings, double tolerance)
      : tolerance_(static_cast<lane_scalar<S>>(tolerance)),
        floor_tolerance_(static_cast<lane_scalar<S>>(std::max(kFloorFactor * tolerance, settings.plateau_tolerance))),
        max_iterations_(settings.max_iterations),
        stops_(settings.tolerance > 0) {}

  S tolerance_;
  S floor_tolerance_;  // the floor test's bound relative to the terms
  int max_iterations_;
  bool stops_;  // tolerance > 0
  S previous_squared_norm_ = S(0);  // |K a - kappa|_2^2 at the last test
  Mask stalled_ = S(0) != S(0);
  Mask active_ = S(0) == S(0);
  S iterations_ = S(1);
};

}  // namespace batchdyn
