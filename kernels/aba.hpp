// Articulated Body Algorithm: forward dynamics qdd = M(q)^{-1} (tau - b(q, v)) of a tree in
// O(n). Featherstone RBDA Table 7.1; the black lines of lcaba-proxbbo Alg. 1 (§IV).
//
// One kernel, templated on the lane type S: S = double / float is the scalar reference (one
// environment), S = xsimd::batch<T> evaluates W environments at once, lane by lane, with the
// same arithmetic. The kernel walks the model's bodies in index order (the plan: parents come
// before children); it branches only on joint types, never on state values, and never
// allocates.
#pragma once

#include "kernels/data.hpp"
#include "kernels/joint_elimination.hpp"
#include "kernels/kinematics.hpp"

namespace batchdyn {

// ABA on raw lane arrays: q (nq lanes), v, tau (nv lanes) in, qdd (nv lanes) out.
// Preconditions: unit quaternions. Cost O(n); see bench/ for the flop count per model.
template <class S>
void aba_kernel(const ModelConstants<S>& c, AbaWorkspace<S>& ws, const S* q, const S* v, const S* tau, S* qdd) {
  const int n = static_cast<int>(c.tree.size());

  // First forward sweep: placements, v_i = ^iX_{λ(i)} v_{λ(i)} + S_i qd_i,
  // c_i = v_i x S_i qd_i, I^A_i = I_i, p^A_i = v_i x* I_i v_i.
  ws.velocity[0] = Motion<S>::zero();
  for (int i = 1; i < n; ++i) {
    const Transform<S> X = body_placement(c, i, q);
    ws.parent_from_body[i] = X;
    Motion<S> vj;
    const Motion<S> vi = body_velocity(c, i, X, ws.velocity[c.tree[i].parent], v, vj);
    ws.velocity[i] = vi;
    ws.bias_acceleration[i] = cross(vi, vj);
    ws.articulated_inertia[i] = c.body_spatial_inertia(i);
    ws.articulated_bias[i] = cross(vi, c.inertia[static_cast<size_t>(i)] * vi);
  }

  // Backward sweep: U_i = I^A_i S_i, D_i = S_i^T U_i (+ armature), u_i = tau_i - S_i^T p^A_i;
  // I^a_i = I^A_i - U_i D_i^{-1} U_i^T, p^a_i = p^A_i + I^a_i c_i + U_i D_i^{-1} u_i,
  // both carried into the parent.
  for (int i = n - 1; i >= 1; --i) {
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv;
    Force<S>* U = ws.U.data() + body.idx_v;
    S* u = ws.u.data() + body.idx_v;
    S* Dinv = ws.Dinv.data() + ws.Dinv_offset[i];
    eliminate_joint(c, i, ws.articulated_inertia[i], U, Dinv);
    for (int k = 0; k < nv; ++k) {
      const int dof = body.idx_v + k;
      u[k] = tau[dof] - subspace_transpose_times(c, i, ws.articulated_bias[i], k);
    }
    if (body.parent == 0) continue;  // the world absorbs nothing

    Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;  // columns of U_i D_i^{-1}
    times_Dinv(nv, U, Dinv, U_Dinv);
    ArticulatedInertia<S>& Ia = ws.articulated_inertia[i];  // becomes I^a_i in place (I^A_i is not needed again)
    project_out_joint(nv, U, U_Dinv, Ia);
    Force<S> pa = ws.articulated_bias[i];
    for (int k = 0; k < nv; ++k) pa += U_Dinv[k] * u[k];  // + U D^{-1} u
    pa += Ia * ws.bias_acceleration[i];
    const Transform<S>& X = ws.parent_from_body[i];
    ws.articulated_inertia[body.parent] += Ia.transformed(X);
    ws.articulated_bias[body.parent] += X.act(pa);
  }

  // Second forward sweep: a'_i = ^iX_{λ(i)} a_{λ(i)} + c_i, qdd_i = D_i^{-1}(u_i - U_i^T a'_i),
  // a_i = a'_i + S_i qdd_i.
  ws.acceleration[0] = c.base_acceleration;
  for (int i = 1; i < n; ++i) {
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv;
    const Motion<S> a = ws.parent_from_body[i].act_inv(ws.acceleration[body.parent]) + ws.bias_acceleration[i];
    const Force<S>* U = ws.U.data() + body.idx_v;
    const S* u = ws.u.data() + body.idx_v;
    const S* Dinv = ws.Dinv.data() + ws.Dinv_offset[i];
    S rhs[6], x[6];
    for (int k = 0; k < nv; ++k) rhs[k] = u[k] - dot(U[k], a);
    Dinv_times(nv, Dinv, rhs, x);
    for (int r = 0; r < nv; ++r) qdd[body.idx_v + r] = x[r];
    ws.acceleration[i] = a + subspace_times(c, i, x);
  }
}

// Reference entry point on Eigen vectors (scalar S): returns data.qdd. Throws Error for a
// model with singular joints (kernels/singular_joints.hpp).
template <class S>
const VectorX<S>& aba(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                      const VectorX<S>& tau) {
  require_regular(model, data.singular_joints, "aba");
  aba_kernel(data.constants, data.aba, q.data(), v.data(), tau.data(), data.qdd.data());
  return data.qdd;
}

}  // namespace batchdyn
