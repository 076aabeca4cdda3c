// What a contact or loop solver does with the Delassus matrix G = J M^{-1} J^T, on lanes:
// apply it to a vector without forming it (O(n + m), reusing a PV-OSIMr / PV-OSIM sweep), and
// factor its damped form G + ρI (layout/dense.hpp: Cholesky, no pivoting, positive definite
// for ρ > 0).
#pragma once

#include "kernels/delassus_workspace.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

// The joint-space response dqdd = M^{-1} (J^T f + tau) to the spatial forces ws.body_force (one
// per body, in its own frame; consumed) and, when given, the joint torques `joint_torque` (nv
// lanes), at the configuration of the last factorisation on ws (a Delassus sweep; PV-soft's,
// kernels/pv_soft.hpp): the forces are carried down to the joints through the articulated
// inertias (ABA's force sweep with those inertias) and the resulting accelerations back out
// (ABA's second forward sweep) into ws.body_acceleration and, when dqdd is given, the joints
// (nv lanes). O(n).
template <class S, class Workspace>
void delassus_force_response(const ModelConstants<S>& c, Workspace& ws, S* dqdd, const S* joint_torque = nullptr) {
  const int n = static_cast<int>(c.tree.size());
  // Backward: the part of each body's force its joint does not absorb reaches the parent.
  for (int i = n - 1; i >= 1; --i) {
    const BodyPlan& body = c.tree[i];
    S* St_f = ws.joint_force.data() + body.idx_v;
    const Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
    Force<S> passed = propagate_force(c, i, U_Dinv, ws.body_force[i], St_f);
    if (joint_torque)  // u_i = S_i^T f_i + tau_i; the parent gets f_i - U_i D_i^-1 u_i
      for (int k = 0; k < body.nv; ++k) {
        St_f[k] += joint_torque[body.idx_v + k];
        passed -= U_Dinv[k] * joint_torque[body.idx_v + k];
      }
    if (body.parent > 0) ws.body_force[body.parent] += force_to_parent(c, i, ws.parent_from_body[i], passed);
  }
  // Forward: a_i = ^iX_{λ(i)} a_{λ(i)} + S_i D_i^{-1} (S_i^T f_i - U_i^T ^iX_{λ(i)} a_{λ(i)}).
  ws.body_acceleration[0] = Motion<S>::zero();
  for (int i = 1; i < n; ++i) {
    const BodyPlan& body = c.tree[i];
    const Motion<S> a = motion_to_body(c, i, ws.parent_from_body[i], ws.body_acceleration[body.parent]);
    S qdd[6];
    ws.body_acceleration[i] = roll_out_joint(c, i, ws.U.data() + body.idx_v, ws.Dinv.data() + ws.Dinv_offset[i], a,
                                             ws.joint_force.data() + body.idx_v, dqdd ? dqdd + body.idx_v : qdd);
  }
}

// y = G x (m lanes each) at the configuration of the last pv_osimr_kernel / pv_osim_kernel
// call on ws: the forces K^T x on the terminals' bodies, their response
// (delassus_force_response), and K reads the bodies' accelerations. O(n + m).
template <class S>
void apply_delassus(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, const S* x, S* y) {
  const int n = static_cast<int>(c.tree.size());
  for (int i = 0; i < n; ++i) ws.body_force[i] = Force<S>::zero();
  for (int t = 0; t < plan.num_terminals(); ++t) {
    const DelassusPlan::Terminal& term = plan.terminals[static_cast<size_t>(t)];
    const Force<S>* K = &ws.terminal_columns[static_cast<size_t>(t * 6)];
    for (int r = 0; r < term.dim; ++r) ws.body_force[term.body] += K[r] * x[term.row + r];
  }
  delassus_force_response(c, ws, static_cast<S*>(nullptr));
  for (int r = 0; r < plan.rows; ++r) y[r] = S(0);
  for (int t = 0; t < plan.num_terminals(); ++t) {
    const DelassusPlan::Terminal& term = plan.terminals[static_cast<size_t>(t)];
    const Force<S>* K = &ws.terminal_columns[static_cast<size_t>(t * 6)];
    for (int r = 0; r < term.dim; ++r) y[term.row + r] += dot(K[r], ws.body_acceleration[term.body]);
  }
}

}  // namespace batchdyn
