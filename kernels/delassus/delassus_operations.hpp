// What a contact or loop solver does with the Delassus matrix G = J M^{-1} J^T, on lanes:
// apply it to a vector without forming it (O(n + m), reusing a PV-OSIMr / PV-OSIM sweep), and
// factor its damped form G + ρI (layout/dense.hpp: Cholesky, no pivoting, positive definite
// for ρ > 0).
#pragma once

#include <algorithm>
#include <span>

#include "kernels/delassus/delassus_workspace.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

// M's factorisation at one configuration, as a backward sweep that eliminates every joint
// leaves it (ABA's, a Delassus sweep's, PV-soft's): the placements ^{λ(i)}M_i, U_i, U_i D_i^{-1}
// (not read for the root's children: ABA does not form it there) and D_i^{-1}, pooled as the
// workspaces pool them. What a response reads; tree_factor_of(ws) takes it from a workspace.
template <class S>
struct TreeFactor {
  const Transform<S>* parent_from_body;
  const Force<S>* U;
  const Force<S>* U_Dinv;
  const S* Dinv;
  const int* Dinv_offset;
};
template <class S, template <class> class Workspace>
TreeFactor<S> tree_factor_of(const Workspace<S>& ws) {
  return {ws.parent_from_body.data(), ws.U.data(), ws.U_Dinv.data(), ws.Dinv.data(), ws.Dinv_offset.data()};
}

// The second half of a response: a_i = ^iX_{λ(i)} a_{λ(i)} + S_i D_i^{-1} (u_i - U_i^T ^iX_{λ(i)}
// a_{λ(i)}) from the joint forces u = ws.joint_force (ABA's second forward sweep without bias
// accelerations), into ws.body_acceleration and, when dqdd is given, the joints (nv lanes). O(n).
template <class S, class Scratch>
BATCHDYN_INLINE void roll_out_body(const ModelConstants<S>& c, const TreeFactor<S>& M, Scratch& ws, int i, S* dqdd) {
  const BodyPlan& body = c.tree[i];
  const Motion<S> a = motion_to_body(c, i, M.parent_from_body[i], ws.body_acceleration[body.parent]);
  S qdd[6];
  ws.body_acceleration[i] = roll_out_joint(c, i, M.U + body.idx_v, M.Dinv + M.Dinv_offset[i], a, ws.joint_force.data() + body.idx_v,
                                           dqdd ? dqdd + body.idx_v : qdd);
}
template <class S, class Scratch>
void roll_out_response(const ModelConstants<S>& c, const TreeFactor<S>& M, Scratch& ws, S* dqdd) {
  const int n = static_cast<int>(c.tree.size());
  ws.body_acceleration[0] = Motion<S>::zero();
  for (int i = 1; i < n; ++i) roll_out_body(c, M, ws, i, dqdd);
}
// The roll-out over `bodies` alone (ascending, every ancestor of a listed body listed too): the
// only bodies whose accelerations and dofs it writes. O(|bodies|).
template <class S, class Scratch>
void roll_out_response(const ModelConstants<S>& c, const TreeFactor<S>& M, Scratch& ws, S* dqdd, std::span<const int> bodies) {
  ws.body_acceleration[0] = Motion<S>::zero();
  for (const int i : bodies) roll_out_body(c, M, ws, i, dqdd);
}

// The joint-space response dqdd = M^{-1} (J^T f + tau) to the spatial forces ws.body_force (one
// per body, in its own frame; consumed) and, when given, the joint torques `joint_torque` (nv
// lanes), with M factorised as `M` says: the forces are carried down to the joints through the
// articulated inertias (ABA's force sweep with those inertias) and the resulting accelerations
// back out (roll_out_response) into ws.body_acceleration and, when dqdd is given, the joints
// (nv lanes). `ws` is scratch with body_force, body_acceleration and joint_force. O(n).
template <class S, class Scratch>
void force_response(const ModelConstants<S>& c, const TreeFactor<S>& M, Scratch& ws, S* dqdd, const S* joint_torque = nullptr) {
  const int n = static_cast<int>(c.tree.size());
  // Backward: the part of each body's force its joint does not absorb reaches the parent.
  for (int i = n - 1; i >= 1; --i) {
    const BodyPlan& body = c.tree[i];
    S* St_f = ws.joint_force.data() + body.idx_v;
    if (body.parent == 0) {  // the world absorbs the rest: u_i = S_i^T f_i + tau_i only
      for (int k = 0; k < body.nv; ++k)
        St_f[k] = subspace_transpose_times(c, i, ws.body_force[i], k) + (joint_torque ? joint_torque[body.idx_v + k] : S(0));
      continue;
    }
    const Force<S>* U_Dinv = M.U_Dinv + body.idx_v;
    Force<S> passed = propagate_force(c, i, U_Dinv, ws.body_force[i], St_f);
    if (joint_torque)  // u_i = S_i^T f_i + tau_i; the parent gets f_i - U_i D_i^-1 u_i
      for (int k = 0; k < body.nv; ++k) {
        St_f[k] += joint_torque[body.idx_v + k];
        passed -= U_Dinv[k] * joint_torque[body.idx_v + k];
      }
    ws.body_force[body.parent] += force_to_parent(c, i, M.parent_from_body[i], passed);
  }
  roll_out_response(c, M, ws, dqdd);
}

// force_response at the factorisation of the last Delassus sweep on ws (PV-OSIMr / PV-OSIM's,
// or PV-soft's, kernels/delassus/pv_soft.hpp), with ws's own scratch.
template <class S, class Workspace>
void delassus_force_response(const ModelConstants<S>& c, Workspace& ws, S* dqdd, const S* joint_torque = nullptr) {
  force_response(c, tree_factor_of(ws), ws, dqdd, joint_torque);
}

// The response dqdd = M^{-1} e_d tau to a torque tau on the one dof d (of body `body`): a column
// of M^{-1}. A joint torque reaches only the joint's ancestors on the way down, so the backward
// sweep walks that chain (depth(body) steps) instead of every body; the roll-out is the whole
// tree's, or, when `rolled_out` lists bodies (ascending, closed under parents), theirs alone:
// a caller that reads a few dofs rolls out their chains. Writes ws.joint_force (every dof),
// ws.body_acceleration and dqdd (nv lanes; with `rolled_out`, the listed bodies' only). Equals
// force_response with that torque alone there. O(depth + n), or O(depth + |rolled_out|).
template <class S, class Scratch>
void joint_torque_response(const ModelConstants<S>& c, const TreeFactor<S>& M, Scratch& ws, int body, int dof, const S& tau, S* dqdd,
                           std::span<const int> rolled_out = {}) {
  std::fill(ws.joint_force.begin(), ws.joint_force.end(), S(0));
  ws.joint_force[static_cast<size_t>(dof)] = tau;
  int i = body;
  if (c.tree[i].parent > 0) {
    Force<S> passed = M.U_Dinv[dof] * (-tau);  // P_i (tau on the joint alone): -U_i D_i^-1 e_d tau reaches the parent
    while (c.tree[i].parent > 0) {
      const Force<S> f = force_to_parent(c, i, M.parent_from_body[i], passed);
      i = c.tree[i].parent;
      const BodyPlan& ancestor = c.tree[i];
      S* St_f = ws.joint_force.data() + ancestor.idx_v;
      if (ancestor.parent == 0) {
        for (int k = 0; k < ancestor.nv; ++k) St_f[k] = subspace_transpose_times(c, i, f, k);
        break;
      }
      passed = propagate_force(c, i, M.U_Dinv + ancestor.idx_v, f, St_f);
    }
  }
  if (rolled_out.empty()) roll_out_response(c, M, ws, dqdd);
  else roll_out_response(c, M, ws, dqdd, rolled_out);
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
