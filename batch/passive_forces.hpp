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
#pragma once

#include <algorithm>

#include "batch/block_workspace.hpp"
#include "batch/env_parameters.hpp"

namespace batchdyn {

template <class L>
class PassiveForces {
 public:
  explicit PassiveForces(const Model& model)
      : model_damped_(std::any_of(model.damping.begin(), model.damping.end(), [](double d) { return d != 0; })) {}

  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  // Whether the stage has damping to apply (in the model, or set per environment).
  bool active(const EnvParameters<L>& parameters) const { return enabled_ && (model_damped_ || parameters.varies_damping()); }

  // The constants for an implicitly damped substep of length h: `c` with armature + h d (this
  // thread's copy in ws.constants, its armature pointing at ws.implicit_armature).
  const ModelConstants<L>& implicitly_damped(const ModelConstants<L>& c, BlockWorkspace<L>& ws, const L& h) const {
    for (size_t k = 0; k < ws.implicit_armature.size(); ++k) ws.implicit_armature[k] = c.armature[k] + h * c.damping[k];
    ModelConstants<L>& out = ws.constants;
    if (&c != &out) out.view_parameters_of(c);
    out.armature = std::span<const L>(ws.implicit_armature.data(), ws.implicit_armature.size());
    return out;
  }

  // The stage: ws.tau_applied -= d qd, on lanes (d the block's own when set per environment).
  void apply(const ModelConstants<L>& c, BlockWorkspace<L>& ws) const {
    for (size_t k = 0; k < ws.tau_applied.size(); ++k) ws.tau_applied[k] -= c.damping[k] * ws.v[k];
  }

 private:
  bool enabled_ = true;
  bool model_damped_;  // some joint of the model has damping
};

}  // namespace batchdyn
