// Articulated Body Algorithm: forward dynamics qdd = M(q)^{-1} (tau - b(q, v)) of a tree in
// O(n). Featherstone RBDA Table 7.1; the black lines of lcaba-proxbbo Alg. 1 (§IV). Three
// sweeps: velocities and bias terms (root to leaves), articulated inertias (leaves to root),
// accelerations (root to leaves).
#pragma once

#include "kernels/kinematics.hpp"

namespace batchdyn {

// Returns data.qdd. Preconditions: q (nq), v (nv), tau (nv); unit quaternions. Gravity
// enters as the base acceleration a_0 = -g.
template <class S>
const VectorX<S>& aba(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                      const VectorX<S>& tau) {
  const int n = model.num_bodies();

  // First forward sweep: placements, v_i, c_i = v_i x S_i qd_i, I^A_i = I_i,
  // p^A_i = v_i x* I_i v_i.
  forward_kinematics(model, data, q);
  data.velocity[0] = Motion<S>::zero();
  for (int i = 1; i < n; ++i) {
    const Body& body = model.bodies[i];
    const Motion<S> vj = joint_velocity<S>(body, v.data() + body.idx_v);
    data.velocity[i] = data.parent_from_body[i].act_inv(data.velocity[body.parent]) + vj;
    data.bias_acceleration[i] = cross(data.velocity[i], vj);
    const RigidInertia<S> I = cast_inertia<S>(body.inertia);
    data.articulated_inertia[i] = ArticulatedInertia<S>::from_rigid(I);
    data.articulated_bias[i] = cross(data.velocity[i], I * data.velocity[i]);
  }

  // Backward sweep: U_i = I^A_i S_i, D_i = S_i^T U_i, u_i = tau_i - S_i^T p^A_i;
  // I^a_i = I^A_i - U_i D_i^{-1} U_i^T, p^a_i = p^A_i + I^a_i c_i + U_i D_i^{-1} u_i,
  // both carried into the parent.
  for (int i = n - 1; i >= 1; --i) {
    const Body& body = model.bodies[i];
    const int nv = body.nv;
    auto& U = data.U[i];
    SmallMatrix<S> D{};
    for (int k = 0; k < nv; ++k) U[k] = data.articulated_inertia[i] * motion_subspace<S>(body, k);
    for (int r = 0; r < nv; ++r)
      for (int k = 0; k < nv; ++k) D[r * 6 + k] = dot(U[k], motion_subspace<S>(body, r));
    const SmallMatrix<S>& Dinv = data.Dinv[i] = invert_spd(D, nv);
    auto& u = data.u[i];
    for (int k = 0; k < nv; ++k) u[k] = tau[body.idx_v + k] - dot(data.articulated_bias[i], motion_subspace<S>(body, k));
    if (body.parent == 0) continue;  // the world absorbs nothing

    ArticulatedInertia<S> Ia = data.articulated_inertia[i];
    Force<S> pa = data.articulated_bias[i];
    for (int k = 0; k < nv; ++k) {
      Force<S> UDinv_k = Force<S>::zero();  // column k of U D^{-1}
      for (int j = 0; j < nv; ++j) UDinv_k += U[j] * Dinv[j * 6 + k];
      Ia.subtract_outer(UDinv_k, U[k]);  // I^A - (U D^{-1}) U^T
      pa += UDinv_k * u[k];               // + U D^{-1} u
    }
    pa += Ia * data.bias_acceleration[i];
    data.articulated_inertia[body.parent] += Ia.transformed(data.parent_from_body[i]);
    data.articulated_bias[body.parent] += data.parent_from_body[i].act(pa);
  }

  // Second forward sweep: a'_i = ^iX_{λ(i)} a_{λ(i)} + c_i, qdd_i = D_i^{-1}(u_i - U_i^T a'_i),
  // a_i = a'_i + S_i qdd_i.
  data.acceleration[0] = gravity_base_acceleration<S>(model);
  for (int i = 1; i < n; ++i) {
    const Body& body = model.bodies[i];
    const Motion<S> a = data.parent_from_body[i].act_inv(data.acceleration[body.parent]) + data.bias_acceleration[i];
    std::array<S, 6> rhs{};
    for (int k = 0; k < body.nv; ++k) rhs[k] = data.u[i][k] - dot(data.U[i][k], a);
    std::array<S, 6> qdd{};
    for (int r = 0; r < body.nv; ++r)
      for (int k = 0; k < body.nv; ++k) qdd[r] += data.Dinv[i][r * 6 + k] * rhs[k];
    for (int k = 0; k < body.nv; ++k) data.qdd[body.idx_v + k] = qdd[k];
    data.acceleration[i] = a + joint_velocity<S>(body, qdd.data());
  }
  return data.qdd;
}

}  // namespace batchdyn
