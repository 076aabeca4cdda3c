// Articulated Body Algorithm: forward dynamics qdd = M(q)^{-1} (tau - b(q, v)) of a tree in
// O(n), as Pinocchio defines it (armature on M's diagonal; tau the whole joint torque).
// Featherstone RBDA Table 7.1; the black lines of lcaba-proxbbo Alg. 1 (§IV).
//
// One kernel, templated on the lane type S: S = double / float is the scalar reference (one
// environment), S = xsimd::batch<T> evaluates W environments at once, lane by lane, with the
// same arithmetic. The kernel walks the model's bodies in index order (the plan: parents come
// before children); it branches only on joint types, never on state values, and never
// allocates. Its three sweeps are the building blocks of LCABA and proxBBO too: the first
// forward sweep below, the backward step and the roll-out of kernels/tree/joint_elimination.hpp.
#pragma once

#include "kernels/tree/data.hpp"
#include "kernels/tree/joint_elimination.hpp"
#include "kernels/tree/kinematics.hpp"

namespace batchdyn {

// Which bodies the first forward sweep sets H_i = I_i for: all of them (proxBBO adds its terms
// to H_i before its backward sweep), only those without children (ABA: its backward sweep's
// first carry into a parent writes I_λ plus the child's term, so an inner body's I_i is read
// once rather than copied into the workspace and read back), or none (LCABA copies the bodies
// its plan lists, LcabaPlan::inertia_copied, and starts the others at their first carry).
enum class BodyInertias { All, LeavesOnly, None };

// ABA's first forward sweep (Alg. 1 lines 1-5), also the first sweep of LCABA and proxBBO:
// placements ^{λ(i)}M_i, velocities v_i = ^iX_{λ(i)} v_{λ(i)} + S_i qd_i, bias accelerations
// c_i = v_i x S_i qd_i, H_i = I_i (see BodyInertias) and bias forces p_i = v_i x* I_i v_i; world
// placements ^0M_i too for a workspace that keeps them (the loop kernels'). O(n).
// The placements come first, in a loop of their own: each needs only its joint's coordinates,
// so the joints' sines and cosines overlap there instead of waiting on the parent's velocity.
template <class S, class Workspace>
void aba_first_forward_sweep(const ModelConstants<S>& c, Workspace& ws, const S* q, const S* v,
                             BodyInertias inertias = BodyInertias::All) {
  constexpr bool world_placements = requires { ws.world_from_body; };
  const int n = static_cast<int>(c.tree.size());
  placement_sweep(c, q, ws.parent_from_body.data());
  ws.velocity[0] = Motion<S>::zero();
  if constexpr (world_placements) ws.world_from_body[0] = Transform<S>::identity();
  for (int i = 1; i < n; ++i) {
    const Transform<S>& X = ws.parent_from_body[i];
    if constexpr (world_placements) ws.world_from_body[i] = world_placement(c, i, ws.world_from_body[c.tree[i].parent], X);
    Motion<S> vj;
    const Motion<S> vi = body_velocity(c, i, X, ws.velocity[c.tree[i].parent], v, vj);
    ws.velocity[i] = vi;
    ws.bias_acceleration[i] = cross_joint_velocity(c, i, vi, vj);  // c_i = v_i x v_J
    if (inertias == BodyInertias::All || (inertias == BodyInertias::LeavesOnly && !c.tree[i].has_children))
      ws.inertia[i] = c.body_spatial_inertia(i);
    ws.bias[i] = cross(vi, c.inertia[static_cast<size_t>(i)] * vi);
  }
}

// ABA on raw lane arrays: q (nq lanes), v, tau (nv lanes) in, qdd (nv lanes) out.
// Preconditions: unit quaternions. Cost O(n); see bench/ for the flop count per model.
template <class S>
void aba_kernel(const ModelConstants<S>& c, AbaWorkspace<S>& ws, const S* q, const S* v, const S* tau, S* qdd) {
  const int n = static_cast<int>(c.tree.size());
  aba_first_forward_sweep(c, ws, q, v, BodyInertias::LeavesOnly);

  // Backward sweep: U_i = I^A_i S_i, D_i = S_i^T U_i (+ armature), u_i = tau_i - S_i^T p^A_i;
  // I^a_i = I^A_i - U_i D_i^{-1} U_i^T, p^a_i = p^A_i + I^a_i c_i + U_i D_i^{-1} u_i,
  // both carried into the parent. The first carry into a parent starts its I^A from I_λ.
  for (int i = n - 1; i >= 1; --i) {
    const BodyPlan& body = c.tree[i];
    Force<S>* U = ws.U.data() + body.idx_v;
    S* u = ws.u.data() + body.idx_v;
    S* Dinv = ws.Dinv.data() + ws.Dinv_offset[i];
    eliminate_joint(c, i, ws.inertia[i], U, Dinv);
    for (int k = 0; k < body.nv; ++k) u[k] = tau[body.idx_v + k] - subspace_transpose_times(c, i, ws.bias[i], k);
    if (body.parent == 0) continue;  // the world absorbs nothing
    Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;  // columns of U_i D_i^{-1}
    times_Dinv(body.nv, U, Dinv, U_Dinv);
    // The first carry into a parent starts H^A_λ from I_λ (the first sweep copied leaves only).
    with_parent_body_inertia(c, i, [&](const ArticulatedInertia<S>* parent_body_inertia) BATCHDYN_LAMBDA_INLINE {
      carry_to_parent(c, i, U, U_Dinv, u, ws.bias_acceleration[i], ws.parent_from_body[i], ws.inertia[i], ws.bias[i],
                      ws.inertia[body.parent], ws.bias[body.parent], parent_body_inertia);
    });
  }

  // Second forward sweep, the roll-out: a'_i = ^iX_{λ(i)} a_{λ(i)} + c_i,
  // qdd_i = D_i^{-1}(u_i - U_i^T a'_i), a_i = a'_i + S_i qdd_i.
  ws.acceleration[0] = c.base_acceleration;
  for (int i = 1; i < n; ++i) {
    const BodyPlan& body = c.tree[i];
    const Motion<S> a = motion_to_body(c, i, ws.parent_from_body[i], ws.acceleration[body.parent]) + ws.bias_acceleration[i];
    ws.acceleration[i] = roll_out_joint(c, i, ws.U.data() + body.idx_v, ws.Dinv.data() + ws.Dinv_offset[i], a,
                                        ws.u.data() + body.idx_v, qdd + body.idx_v);
  }
}

// Reference entry point on Eigen vectors (scalar S): returns data.qdd. Throws Error for a
// model with singular joints (kernels/tree/singular_joints.hpp).
template <class S>
const VectorX<S>& aba(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                      const VectorX<S>& tau) {
  require_regular(model, data.singular_joints, "aba");
  aba_kernel(data.constants, data.aba, q.data(), v.data(), tau.data(), data.qdd.data());
  return data.qdd;
}

}  // namespace batchdyn
