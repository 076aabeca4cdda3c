// A loop constraint as the recursive kernels see it (lcaba-proxbbo eq. 1c): rows on the
// spatial accelerations of its two bodies,
//     K^1 a_{body1} + K^2 a_{body2} = kappa,
// with a_i the body accelerations of ABA's sweeps (body frames, the base acceleration a_0 = -g
// included; the world's own acceleration is a_0). The rows K^t are the terminal rows of
// kernels/constraint_rows.hpp (kept as their force columns K^t^T e_r), so sum_t K^t J_t = J,
// and kappa is chosen so that the equation is exactly the dense oracle's J qdd + drift = k
// (kernels/constraints.hpp): kappa = k - Kdot v, where Kdot v = drift - sum_t K^t a_t(qdd = 0)
// is the part of the drift the rows do not see:
//   weld:      v1 x (^1X_2 v2)                          (frame velocities v1, v2)
//   revolute:  the weld's 3 linear rows and its angular rows along the two normals
//   connect:   w1 x v1.lin - ^1R_2 (w2 x v2.lin)
// The a_0 terms cancel between the two sides (a rigid-body motion of the whole system meets
// every constraint), so a side on the world is written with a_0 like any body. Lane-generic,
// no branches on values; O(1) per constraint.
#pragma once

#include "kernels/aba.hpp"
#include "kernels/constraint_rows.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/proximal_settings.hpp"
#include "kernels/singular_joints.hpp"
#include "layout/lie_group.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace batchdyn {

template <class S>
struct LoopConstraintTerms {
  Force<S> columns[2][6];  // K^t^T e_r for side t (0: body1, 1: body2), in that body's frame
  S rhs[6];                // kappa
  S velocity_error[6];     // nu = J v (the Baumgarte velocity term)
  S position_error[6];     // e, with de/dt = nu (kernels/constraints.hpp); zero unless computed (below)
};

// Terms of constraint k from the bodies' world placements and velocities (world_from_body[0]
// = identity, velocity[0] = 0). The position error of a weld or revolute constraint (a log6)
// is computed when its Baumgarte kp needs it or `position_error` asks for it.
template <class S>
void loop_constraint_terms(const ConstraintConstants<S>& k, const Transform<S>* world_from_body, const Motion<S>* velocity,
                           LoopConstraintTerms<S>& out, bool position_error = false) {
  const Transform<S> world_from_c1 = world_from_body[k.body1] * k.placement1;
  const Transform<S> world_from_c2 = world_from_body[k.body2] * k.placement2;
  const Transform<S> c1_from_c2 = world_from_c1.inverse() * world_from_c2;
  terminal_force_columns(k, +1, k.placement1, out.columns[0]);
  terminal_force_columns(k, -1, world_from_body[k.body2].inverse() * world_from_c1, out.columns[1]);
  const Motion<S> v1 = k.placement1.act_inv(velocity[k.body1]), v2 = k.placement2.act_inv(velocity[k.body2]);

  S velocity_product[6];
  S* error_rows = out.position_error;
  if (k.type == ConstraintType::Connect) {
    const Vec3<S> kdot = cross(v1.angular, v1.linear) - c1_from_c2.rotation * cross(v2.angular, v2.linear);
    for (int r = 0; r < 3; ++r) velocity_product[r] = kdot[r], error_rows[r] = -c1_from_c2.translation[r];
  } else {
    const Motion<S> kdot = cross(v1, c1_from_c2.act(v2));
    const Motion<S> error = k.uses_position_error || position_error ? -log6_lanes(c1_from_c2) : Motion<S>::zero();
    for (int r = 0; r < 3; ++r) velocity_product[r] = kdot.linear[r], error_rows[r] = error.linear[r];
    if (k.type == ConstraintType::Weld) {
      for (int r = 0; r < 3; ++r) velocity_product[3 + r] = kdot.angular[r], error_rows[3 + r] = error.angular[r];
    } else {  // revolute: the angular rows along the normals of the axis
      velocity_product[3] = dot(k.normal1, kdot.angular), error_rows[3] = dot(k.normal1, error.angular);
      velocity_product[4] = dot(k.normal2, kdot.angular), error_rows[4] = dot(k.normal2, error.angular);
    }
  }
  for (int r = 0; r < k.dim; ++r) {
    out.velocity_error[r] = dot(out.columns[0][r], velocity[k.body1]) + dot(out.columns[1][r], velocity[k.body2]);
    out.rhs[r] = -k.kp * error_rows[r] - k.kd * out.velocity_error[r] - velocity_product[r];
  }
}

// The first forward sweep of the loop kernels (LCABA Alg. 1 and proxBBO Alg. 4, lines 1-5):
// ABA's (kernels/aba.hpp: placements, world placements, velocities v_i, bias accelerations c_i,
// H_{i,i} = I_i, bias forces p_i), then per constraint its rows and rhs[6 j + r] = kappa with a
// side on the world's known K a_0 moved to the right (eq. 35). `ws` is a kernel workspace with
// those members (kernels/lcaba_workspace.hpp, kernels/proxbbo_workspace.hpp).
template <class S, class Workspace>
void loop_first_forward_sweep(const ModelConstants<S>& c, Workspace& ws, const S* q, const S* v) {
  aba_first_forward_sweep(c, ws, q, v);
  ws.acceleration[0] = c.base_acceleration;
  ws.delta_acceleration[0] = Motion<S>::zero();
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    LoopConstraintTerms<S>& t = ws.terms[j];
    loop_constraint_terms(k, ws.world_from_body.data(), ws.velocity.data(), t);
    for (int r = 0; r < k.dim; ++r) {
      S kappa = t.rhs[r];
      if (k.body1 == 0) kappa -= dot(t.columns[0][r], c.base_acceleration);
      if (k.body2 == 0) kappa -= dot(t.columns[1][r], c.base_acceleration);
      ws.rhs[6 * j + static_cast<size_t>(r)] = kappa;
    }
  }
}

// The rows' violation K a - kappa per constraint row (m values, at the constraint's row), and
// its largest magnitude per lane.
template <class S, class Workspace>
S loop_constraint_violation(const ModelConstants<S>& c, const Workspace& ws, S* violation) {
  using std::abs;
  using std::max;
  S largest(0);
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    const LoopConstraintTerms<S>& t = ws.terms[j];
    for (int r = 0; r < k.dim; ++r) {
      S value = -ws.rhs[6 * j + static_cast<size_t>(r)];
      if (k.body1 != 0) value += dot(t.columns[0][r], ws.acceleration[static_cast<size_t>(k.body1)]);
      if (k.body2 != 0) value += dot(t.columns[1][r], ws.acceleration[static_cast<size_t>(k.body2)]);
      violation[k.row + r] = value;
      largest = max(largest, abs(value));
    }
  }
  return largest;
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
  std::vector<int> singular_joints;  // kernels/singular_joints.hpp: the entry point refuses a singular model
  Workspace workspace;
  VectorX<S> qdd;
  VectorX<S> lambda;     // multipliers (M qdd + b = tau + J^T lambda); the next call's warm start
  VectorX<S> violation;  // J qdd + drift - k at exit
  int iterations = 0;
  S residual = S(0);     // ||violation||_inf
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
  return data.qdd;
}

// The outer iterations' stopping test of LCABA and proxBBO, per lane: the rows' violation
// within tolerance * (1 + max |kappa|), or, after the first correction, the last change of qdd
// within tolerance * (1 + max |qdd|). A lane that stops stays stopped (frozen, so its result does
// not depend on its block mates). The tolerance is raised to 16 epsilon of the lane's scalar.
template <class S>
class LoopConvergence {
 public:
  using Mask = decltype(S(0) == S(0));

  template <class Workspace>
  LoopConvergence(const ModelConstants<S>& c, const Workspace& ws, const ProximalSettings& settings)
      : tolerance_(static_cast<lane_scalar<S>>(
            std::max(settings.tolerance, 16.0 * std::numeric_limits<lane_scalar<S>>::epsilon()))) {
    using std::abs;
    using std::max;
    for (size_t j = 0; j < c.constraints.size(); ++j)
      for (int r = 0; r < c.constraints[j].dim; ++r) rhs_scale_ = max(rhs_scale_, S(1) + abs(ws.rhs[6 * j + static_cast<size_t>(r)]));
  }

  // Before correction `it` (1, 2, ...): stops the lanes that have converged; counts the
  // correction in the others. Returns whether any lane goes on.
  bool go_on(int it, const S& residual, const S& step, const S* qdd, size_t nv) {
    using std::abs;
    using std::max;
    S qdd_scale(1);
    for (size_t k = 0; k < nv; ++k) qdd_scale = max(qdd_scale, S(1) + abs(qdd[k]));
    auto done = residual <= tolerance_ * rhs_scale_;
    if (it > 1) done = done || step <= tolerance_ * qdd_scale;
    active_ = active_ && !done;
    if (!any_lane(active_)) return false;
    iterations_ += select(active_, S(1), S(0));
    return true;
  }
  const Mask& active() const { return active_; }
  const S& iterations() const { return iterations_; }  // sweeps run: 1 + the corrections

 private:
  S tolerance_;
  S rhs_scale_ = S(1);
  Mask active_ = S(0) == S(0);
  S iterations_ = S(1);
};

}  // namespace batchdyn
