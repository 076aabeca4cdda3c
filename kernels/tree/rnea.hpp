// Recursive Newton-Euler: inverse dynamics tau = M(q) qdd + b(q, v), gravity included, as
// Pinocchio defines it (armature on M's diagonal; no joint damping: that is a passive force of
// the simulation, batch/passive_forces.hpp).
// Featherstone, RBDA Table 5.1, in Pinocchio's conventions. O(n).
#pragma once

#include "kernels/tree/kinematics.hpp"

namespace batchdyn {

// Returns data.tau. Preconditions: q, v, qdd sized nq, nv, nv; unit quaternions.
template <class S>
const VectorX<S>& rnea(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                       const VectorX<S>& qdd) {
  // Forward sweep: velocities, accelerations, f_i = I_i a_i + v_i x* I_i v_i.
  const ModelConstants<S>& c = data.constants;
  forward_kinematics(model, data, q, v, qdd, c.base_acceleration);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const RigidInertia<S>& I = c.inertia[static_cast<size_t>(i)];
    data.force[i] = I * data.acceleration[i] + cross(data.velocity[i], I * data.velocity[i]);
  }
  // Backward sweep: tau_i = S_i^T f_i (+ armature_i qdd_i), f_parent += ^{λ(i)}X*_i f_i.
  for (int i = model.num_bodies() - 1; i >= 1; --i) {
    const BodyPlan& body = c.tree[i];
    for (int k = 0; k < body.nv; ++k) {
      const size_t dof = static_cast<size_t>(body.idx_v + k);
      data.tau[body.idx_v + k] = subspace_transpose_times(c, i, data.force[i], k) + c.armature[dof] * qdd[body.idx_v + k];
    }
    if (body.parent > 0) data.force[body.parent] += force_to_parent(c, i, data.parent_from_body[i], data.force[i]);
  }
  return data.tau;
}

// Nonlinear effects b(q, v) = rnea(q, v, 0) (Coriolis, centrifugal, gravity).
template <class S>
const VectorX<S>& nonlinear_effects(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v) {
  return rnea(model, data, q, v, data.zero);
}

}  // namespace batchdyn
