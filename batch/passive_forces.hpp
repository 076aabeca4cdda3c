// Passive forces, the stage after actuation: the joint damping d of the model (URDF <dynamics
// damping>, SDF <damping>, JSON "damping", per-environment set_damping) as the force -d qd on
// each joint, MuJoCo's convention for simulation. On by default in forward_dynamics() and
// step(); off, the engine computes the rigid-body dynamics as Pinocchio defines it, as the
// reference functions do (kernels/tree/aba.hpp: tau is the whole joint torque).
//
// step() integrates the damping implicitly (as MuJoCo does): each substep solves
//     (M + h diag(d)) qdd = tau - b(q, v) - d v (+ J^T lambda),  i.e.  M (v+ - v) / h = tau - b - d v+,
// which is stable for any h; explicitly, a light damped link needs h < 2 I / d (Cassie's
// 1 N m s/rad on its 0.1 kg rods: h < 2e-4 s). The kernels see h d as extra armature: the
// constants handed to them are this thread's copy with armature + h d.
//
// Joint friction loss F (MJCF frictionloss: dry friction, a torque of at most F against the
// joint's motion) joins the damping as a velocity-dependent damping, re-evaluated at every
// evaluation of the dynamics from that evaluation's qd:
//     d_F = F / max(|qd|, v_F),   the force -d_F qd+ (implicit as above)
// At |qd| >= v_F this is the dry friction -F sign(qd); below, a stiff viscous friction that holds
// a joint against up to F while it creeps at |qd| <= v_F x (torque / F): a regularised
// Coulomb friction, as MuJoCo's frictionloss is a soft constraint that creeps too. In
// forward_dynamics() (no step length) it is the explicit force. v_F = kFrictionLossVelocity.
//
// Joint springs (MJCF stiffness / springref, SDF <spring_stiffness> / <spring_reference>) add
// -k (q - q_ref), explicit as in MuJoCo's integrators, evaluated at each evaluation's q (a
// continuous joint's q is its unwrapped angle, as MuJoCo's qpos).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

#include "batch/block_workspace.hpp"
#include "batch/env_parameters.hpp"

namespace batchdyn {

// The joint speed (rad/s, m/s) below which friction loss acts as a viscous friction (v_F above).
inline constexpr double kFrictionLossVelocity = 0.01;

// The stage's force on one state, explicit, in double: -(d qd) - d_F qd - k (q - q_ref). The
// reference evaluation's `passive_forces` option (evaluate_reference) and tests use it.
inline Eigen::VectorXd passive_torque(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  Eigen::VectorXd tau(model.nv);
  for (int k = 0; k < model.nv; ++k) {
    const size_t i = static_cast<size_t>(k);
    tau[k] = -(model.damping[i] + model.friction_loss[i] / std::max(std::abs(v[k]), kFrictionLossVelocity)) * v[k];
  }
  for (const Body& b : model.bodies) {
    const size_t i = static_cast<size_t>(b.idx_v);
    if (b.nv != 1 || model.spring_stiffness[i] == 0) continue;
    tau[b.idx_v] -= model.spring_stiffness[i] * (q[b.idx_q] - model.spring_reference[i]);
  }
  return tau;
}

template <class L>
class PassiveForces {
 public:
  using T = lane_scalar<L>;

  explicit PassiveForces(const Model& model)
      : model_damped_(std::any_of(model.damping.begin(), model.damping.end(), [](double d) { return d != 0; })) {
    for (size_t k = 0; k < model.friction_loss.size(); ++k)
      if (model.friction_loss[k] != 0) friction_.push_back({k, L(static_cast<T>(model.friction_loss[k]))});
    for (const Body& b : model.bodies) {
      if (b.nv != 1 || model.spring_stiffness[static_cast<size_t>(b.idx_v)] == 0) continue;
      springs_.push_back({static_cast<size_t>(b.idx_v), static_cast<size_t>(b.idx_q),
                          L(static_cast<T>(model.spring_stiffness[static_cast<size_t>(b.idx_v)])),
                          L(static_cast<T>(model.spring_reference[static_cast<size_t>(b.idx_v)]))});
    }
  }

  // The whole stage (damping, friction loss and springs): on by default.
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  // Friction loss alone (on by default; the model's Model::friction_loss, MJCF frictionloss).
  void set_friction_loss(bool on) { friction_on_ = on; }
  bool friction_loss() const { return friction_on_; }
  // Whether the stage has damping, friction loss or springs to apply (in the model, or set per environment).
  bool active(const EnvParameters<L>& parameters) const {
    return enabled_ && (model_damped_ || parameters.varies_damping() || (friction_on_ && !friction_.empty()) || !springs_.empty());
  }

  // The constants for an implicitly damped substep of length h: `c` with armature + h d (this
  // thread's copy in ws.constants, its armature pointing at ws.implicit_armature).
  const ModelConstants<L>& implicitly_damped(const ModelConstants<L>& c, BlockWorkspace<L>& ws, const L& h) const {
    for (size_t k = 0; k < ws.implicit_armature.size(); ++k) ws.implicit_armature[k] = c.armature[k] + h * c.damping[k];
    if (friction_on_)  // friction loss adds h d_F per evaluation (apply); this is the rest
      for (const Friction& f : friction_) ws.damped_armature[f.dof] = ws.implicit_armature[f.dof];
    ModelConstants<L>& out = ws.constants;
    if (&c != &out) out.view_parameters_of(c);
    out.armature = std::span<const L>(ws.implicit_armature.data(), ws.implicit_armature.size());
    return out;
  }

  // The stage: ws.tau_applied -= (d + d_F) qd + k (q - q_ref), on lanes (d the block's own when
  // set per environment). `h`: the substep of an implicit step, whose armature
  // (ws.implicit_armature, from implicitly_damped) gets h d_F at this evaluation's qd; nullptr:
  // explicit.
  void apply(const ModelConstants<L>& c, BlockWorkspace<L>& ws, const L* h) const {
    for (size_t k = 0; k < ws.tau_applied.size(); ++k) ws.tau_applied[k] -= c.damping[k] * ws.v[k];
    apply_springs(ws);
    if (!friction_on_) return;
    using std::abs, std::max;
    const L v_F(static_cast<T>(kFrictionLossVelocity));
    for (const Friction& f : friction_) {
      const L d = f.F / max(abs(ws.v[f.dof]), v_F);  // d_F
      ws.tau_applied[f.dof] -= d * ws.v[f.dof];
      if (h) ws.implicit_armature[f.dof] = ws.damped_armature[f.dof] + *h * d;
    }
  }

 private:
  void apply_springs(BlockWorkspace<L>& ws) const {
    for (const Spring& s : springs_) ws.tau_applied[s.dof] -= s.k * (ws.q[s.q] - s.reference);
  }

  struct Spring {
    size_t dof, q;
    L k, reference;  // broadcast to every lane
  };
  struct Friction {
    size_t dof;
    L F;  // the friction loss, broadcast to every lane
  };
  bool enabled_ = true, friction_on_ = true;
  bool model_damped_;              // some joint of the model has damping
  std::vector<Friction> friction_;  // the dofs with friction loss
  std::vector<Spring> springs_;     // the 1-dof joints with a spring
};

}  // namespace batchdyn
