// Mechanical energy of a state, the reference functions (scalar, any scalar type S): what an
// integrator should conserve on a passive, undamped model (tests/test_integrators.cpp), and what
// a user checks a rollout with. Pinocchio's computeKineticEnergy / computePotentialEnergy, with
// the rotor inertia (armature) counted in the kinetic energy: the engine's dynamics moves it
// too (M + diag(armature)), so only that sum is conserved.
#pragma once

#include "kernels/tree/crba.hpp"
#include "kernels/tree/kinematics.hpp"

namespace batchdyn {

// T = 1/2 v^T M(q) v, M with the armature on its diagonal (J; Pinocchio's when the armature
// is zero). Overwrites data.M and the placements. O(n d) (CRBA).
template <class S>
S kinetic_energy(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v) {
  return S(0.5) * v.dot(crba(model, data, q) * v);
}

// V = -sum_i m_i g . c_i, c_i body i's centre of mass in the world frame, g the gravity of
// data.constants (J; zero at the world origin). Overwrites the placements. O(n).
template <class S>
S potential_energy(const Model& model, Data<S>& data, const VectorX<S>& q) {
  forward_kinematics(model, data, q);
  const Vec3<S>& minus_g = data.constants.base_acceleration.linear;  // a_0 = -g (DESIGN.md §2)
  S potential(0);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const RigidInertia<S>& body = data.constants.inertia[static_cast<size_t>(i)];
    potential += body.mass * dot(minus_g, data.world_from_body[i].act_point(body.com));
  }
  return potential;
}

// T + V.
template <class S>
S mechanical_energy(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v) {
  return kinetic_energy(model, data, q, v) + potential_energy(model, data, q);
}

}  // namespace batchdyn
