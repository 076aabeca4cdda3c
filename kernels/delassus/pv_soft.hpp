// PV-soft: the damped Delassus system (G + D) lambda = r, G = J M^-1 J^T, solved without forming
// G: O(n + m) to factor for a diagonal D > 0, O(n + m) per right-hand side. The x-step of the
// contact solver's ADMM (kernels/contact/contact_admm.hpp) has exactly this form, with D = rho + eta (+ a
// contact's compliance), so it can run on the tree instead of on a formed and factored G.
//
// Sathya, Carpentier et al., "Constrained dynamics algorithms: PV, PV-early, PV-soft, PV-OSIM"
// (../shared/papers/pv-solver-lqr-pv-early-pv-soft-pv-osim.txt), §VI "Soft Gauss' principle":
// the rows relaxed by quadratic penalties R_i = D (eq. 50a) are no motion constraints at all but
// extra inertia and force on their bodies (eq. 52),
//   H_i <- H_i + K_i^T R_i^-1 K_i,   f_i <- f_i + K_i^T R_i^-1 k_i,
// so the problem is ABA's with those terms (§VI-A: O(n + m)). Here, with a = M^-1 J^T lambda the
// joint-space velocity change of the impulses, the rows ask J a + D lambda = r, so
// lambda = D^-1 (r - J a) and M a = J^T D^-1 (r - J a), i.e.
//   (M + J^T D^-1 J) a = J^T D^-1 r,
// eq. 52 with k = r and no bias terms. So:
//   factor:  H^A_i = H_i + sum over the rows on body i of k k^T / d (k the row's force column in
//            i's frame), plus 1 / d on D_i for a row on a 1-dof joint (a joint limit: J = e_dof);
//            then ABA's backward inertia sweep (kernels/tree/joint_elimination.hpp);
//   solve:   the forces J^T D^-1 r on the bodies (and joint torques), one force response
//            (kernels/delassus/delassus_operations.hpp) gives a, then lambda = D^-1 (r - J a).
// A row with 1/d = 0 is out of the problem: it adds nothing and its lambda is 0. Rows act on one
// body each (ground contacts, joint limits); a row on two bodies (a pair contact, a loop
// constraint) would couple them and is not supported here.
// Lane-generic, no allocation, branches on the joint type and the row kind only.
#pragma once

#include <vector>

#include "kernels/delassus/delassus_operations.hpp"

namespace batchdyn {

// One row of the system: a force column on one body (body frame: a ground contact's normal or
// tangent), or a unit torque on a 1-dof joint's dof times `sign` (a joint-limit row: +1 at the
// lower limit, -1 at the upper; lanes) when column is null.
template <class S>
struct PvSoftRow {
  int body = 0;
  const Force<S>* column = nullptr;
  int dof = -1;  // joint rows: the dof (index in v)
  S sign = S(1);
};

// The factor (the tree's articulated inertias with the rows' soft inertia, and the joints
// eliminated) and the response sweep's scratch, for one lane block. Member names are the ones
// delassus_force_response reads.
template <class S>
struct PvSoftWorkspace {
  explicit PvSoftWorkspace(const Model& model)
      : parent_from_body(static_cast<size_t>(model.num_bodies())), articulated_inertia(parent_from_body.size()),
        U(static_cast<size_t>(model.nv)), U_Dinv(U.size()), joint_weight(U.size()), body_force(parent_from_body.size()),
        body_acceleration(parent_from_body.size()), joint_torque(U.size()), joint_force(U.size()), joint_acceleration(U.size()) {
    Dinv.resize(static_cast<size_t>(pool_joint_blocks(model, Dinv_offset)));
  }
  std::vector<Transform<S>> parent_from_body;              // ^{λ(i)}M_i, the caller's configuration
  std::vector<ArticulatedInertia<S>> articulated_inertia;  // H^A_i with the rows' k k^T / d
  std::vector<Force<S>> U, U_Dinv;                         // per dof
  std::vector<S> Dinv;                                     // D_i^{-1}, pooled, with the joint rows' 1 / d
  std::vector<int> Dinv_offset;
  std::vector<S> joint_weight;                             // per dof: the joint rows' 1 / d (0: none)
  std::vector<Force<S>> body_force;                        // the solve's J^T D^-1 r, then scratch
  std::vector<Motion<S>> body_acceleration;                // the solve's a, per body
  std::vector<S> joint_torque, joint_force, joint_acceleration;  // per dof: the joint rows' part of J^T D^-1 r, scratch, and a
  size_t bytes() const {
    return parent_from_body.size() * sizeof(Transform<S>) + articulated_inertia.size() * sizeof(ArticulatedInertia<S>) +
           (U.size() + U_Dinv.size() + body_force.size()) * sizeof(Force<S>) + body_acceleration.size() * sizeof(Motion<S>) +
           (Dinv.size() + joint_weight.size() + joint_torque.size() + joint_force.size() + joint_acceleration.size()) * sizeof(S);
  }
};

// Factors M + J^T W J for the m rows with weights W = D^-1 (`weight`, m lanes, >= 0: 1 / d_r, or
// 0 for a row out of the problem) at the placements `parent_from_body` (a Delassus or ABA
// sweep's ^{λ(i)}M_i, n entries). Afterwards ws holds what pv_soft_solve needs for these weights.
// Preconditions: rows act on moving bodies; joint rows on 1-dof joints. O(n + m).
template <class S>
void pv_soft_factor(const ModelConstants<S>& c, const Transform<S>* parent_from_body, int m, const PvSoftRow<S>* rows,
                    const S* weight, PvSoftWorkspace<S>& ws) {
  const int n = static_cast<int>(c.tree.size());
  for (int i = 1; i < n; ++i) {
    ws.parent_from_body[static_cast<size_t>(i)] = parent_from_body[i];
    ws.articulated_inertia[static_cast<size_t>(i)] = c.body_spatial_inertia(i);  // H_i
  }
  for (S& w : ws.joint_weight) w = S(0);
  // Eq. 52: H_i <- H_i + K_i^T R_i^-1 K_i, one rank-1 term k k^T / d per row on body i.
  for (int r = 0; r < m; ++r) {
    const PvSoftRow<S>& row = rows[r];
    if (row.column) {
      ws.articulated_inertia[static_cast<size_t>(row.body)].subtract_outer(*row.column * (-weight[r]), *row.column);
    } else {
      ws.joint_weight[static_cast<size_t>(row.dof)] += weight[r];  // sign^2 = 1
    }
  }
  // ABA's backward inertia sweep (RBDA Table 7.1), a joint row's 1 / d on D_i as extra armature.
  for (int i = n - 1; i >= 1; --i) {
    const BodyPlan& body = c.tree[i];
    Force<S>* U = ws.U.data() + body.idx_v;
    Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
    S* Dinv = ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)];
    eliminate_joint(c, i, ws.articulated_inertia[static_cast<size_t>(i)], U, Dinv, ws.joint_weight.data() + body.idx_v);
    times_Dinv(body.nv, U, Dinv, U_Dinv);
    if (body.parent == 0) continue;
    carry_inertia_to_parent(c, i, body.nv, U, U_Dinv, ws.parent_from_body[static_cast<size_t>(i)], ws.articulated_inertia[static_cast<size_t>(i)],
                            ws.articulated_inertia[static_cast<size_t>(body.parent)]);
  }
}

// lambda = (G + D)^-1 r (m lanes each; lambda and r may alias) for the rows and weights of the
// last pv_soft_factor on ws: f = J^T D^-1 r (eq. 52's force term), a = (M + J^T D^-1 J)^-1 f by one
// force response, lambda = D^-1 (r - J a). O(n + m).
template <class S>
void pv_soft_solve(const ModelConstants<S>& c, int m, const PvSoftRow<S>* rows, const S* weight, const S* r,
                   PvSoftWorkspace<S>& ws, S* lambda) {
  const int n = static_cast<int>(c.tree.size());
  for (int i = 0; i < n; ++i) ws.body_force[static_cast<size_t>(i)] = Force<S>::zero();
  for (S& tau : ws.joint_torque) tau = S(0);
  for (int j = 0; j < m; ++j) {
    const PvSoftRow<S>& row = rows[j];
    const S scaled = weight[j] * r[j];
    if (row.column) {
      ws.body_force[static_cast<size_t>(row.body)] += *row.column * scaled;
    } else {
      ws.joint_torque[static_cast<size_t>(row.dof)] += row.sign * scaled;
    }
  }
  delassus_force_response(c, ws, ws.joint_acceleration.data(), ws.joint_torque.data());
  for (int j = 0; j < m; ++j) {
    const PvSoftRow<S>& row = rows[j];
    const S velocity = row.column ? dot(*row.column, ws.body_acceleration[static_cast<size_t>(row.body)])
                                  : row.sign * ws.joint_acceleration[static_cast<size_t>(row.dof)];
    lambda[j] = weight[j] * (r[j] - velocity);
  }
}

}  // namespace batchdyn
