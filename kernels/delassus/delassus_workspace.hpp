// Workspace of the Delassus kernels (kernels/delassus/pv_osimr.hpp, kernels/delassus/pv_osim.hpp,
// kernels/delassus/delassus_operations.hpp) for one lane block, sized once from the model and its
// DelassusPlan, and the first forward sweep both algorithms share.
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/tree/constraint_rows.hpp"
#include "kernels/tree/joint_elimination.hpp"
#include "kernels/tree/kinematics.hpp"
#include "topology/delassus_plan.hpp"

namespace batchdyn {

template <class S>
struct DelassusWorkspace {
  DelassusWorkspace(const Model& model, const DelassusPlan& plan)
      : parent_from_body(static_cast<size_t>(model.num_bodies())),
        world_from_body(plan.has_internal_loops ? static_cast<size_t>(model.num_bodies()) : 0),
        articulated_inertia(static_cast<size_t>(model.num_bodies())), U(static_cast<size_t>(model.nv)),
        U_Dinv(static_cast<size_t>(model.nv)),
        terminal_columns(static_cast<size_t>(plan.num_terminals()) * 6),
        chain_propagator(plan.heads.size() * 6), chain_inverse_inertia(plan.heads.size() * 36),
        inverse_inertia(plan.heads.size() * 36), level_columns(plan.level_head.size() * 6),
        level_accelerations(plan.level_head.size() * 6), head_needed(plan.heads.size()), moving_columns(static_cast<size_t>(plan.num_columns())),
        column_projection(static_cast<size_t>(plan.num_columns()) * 12),
        body_force(static_cast<size_t>(model.num_bodies())), body_acceleration(static_cast<size_t>(model.num_bodies())),
        joint_force(static_cast<size_t>(model.nv)) {
    Dinv.resize(static_cast<size_t>(pool_joint_blocks(model, Dinv_offset)));
  }

  // Tree sweep (both algorithms)
  std::vector<Transform<S>> parent_from_body;              // ^{λ(i)}M_i
  std::vector<Transform<S>> world_from_body;               // ^0M_i (only with internal loops)
  std::vector<ArticulatedInertia<S>> articulated_inertia;  // H^A_i
  std::vector<Force<S>> U, U_Dinv;                         // U_i = H^A_i S_i and U_i D_i^{-1}, per dof
  std::vector<S> Dinv;                                     // D_i^{-1}, pooled
  std::vector<int> Dinv_offset;
  std::vector<Force<S>> terminal_columns;                  // K_t^T, 6 slots per terminal (its body's frame)
  // PV-OSIMr, per chain head h (6 columns / 6 x 6 row-major each)
  std::vector<Force<S>> chain_propagator;     // ^{Nanc(h)}P_h while it is built: forces at h -> at the current body
  std::vector<S> chain_inverse_inertia;       // ^{Nanc(h)}Ω_h, in h's frame
  std::vector<S> inverse_inertia;             // ^0Ω_h, in h's frame
  // PV-OSIMr, per terminal level slot (6 each)
  std::vector<Force<S>> level_columns;        // ^cK_t^T at the level's head c
  std::vector<Motion<S>> level_accelerations; // ^0Ω_c ^cK_t^T
  // PV-OSIMr over some of the terminals (pv_osimr_sweeps' terminal_needed): per head, 1 when a
  // needed terminal's path passes it
  std::vector<char> head_needed;
  // PV-OSIM: every terminal column, carried up the tree in place
  std::vector<Force<S>> moving_columns;
  std::vector<S> column_projection;           // per column of ES(i): S_i^T K^T and D_i^{-1} S_i^T K^T
  // Delassus times a vector (delassus_operations.hpp)
  std::vector<Force<S>> body_force;
  std::vector<Motion<S>> body_acceleration;
  std::vector<S> joint_force;

  size_t bytes() const {
    return (parent_from_body.size() + world_from_body.size()) * sizeof(Transform<S>) +
           articulated_inertia.size() * sizeof(ArticulatedInertia<S>) +
           (U.size() + U_Dinv.size() + terminal_columns.size() + chain_propagator.size() + level_columns.size() +
            moving_columns.size() + body_force.size()) * sizeof(Force<S>) +
           (level_accelerations.size() + body_acceleration.size()) * sizeof(Motion<S>) +
           (Dinv.size() + chain_inverse_inertia.size() + inverse_inertia.size() + column_projection.size() + joint_force.size()) * sizeof(S) +
           head_needed.size();
  }
};

// The tree part of the first forward sweep of Alg. 1 and Alg. 3 (lines 1-2): placements (world
// placements too when some constraint closes an internal loop) and H^A_i = H_i, copied for the
// leaves only: delassus_eliminate_joint starts a parent's H^A_λ from I_λ at its first carry
// (with_parent_body_inertia), so every backward sweep after this must eliminate every body
// from n-1 down to 1 before reading H^A. The terminals'
// force columns are the caller's: from the constraints (delassus_first_sweep) or the contact
// bodies' unit forces (kernels/contact/frictional_contact.hpp).
template <class S>
void delassus_tree_sweep(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, const S* q) {
  const int n = static_cast<int>(c.tree.size());
  placement_sweep(c, q, ws.parent_from_body.data());
  if (plan.has_internal_loops) {
    ws.world_from_body[0] = Transform<S>::identity();
    for (int i = 1; i < n; ++i) ws.world_from_body[i] = world_placement(c, i, ws.world_from_body[c.tree[i].parent], ws.parent_from_body[i]);
  }
  for (int i = 1; i < n; ++i)
    if (!c.tree[i].has_children) ws.articulated_inertia[i] = c.body_spatial_inertia(i);
}

// The first forward sweep of Alg. 1 and Alg. 3 (lines 1-4): the tree sweep, and every
// terminal's force columns K_t^T in its body's frame from the model's constraints.
template <class S>
void delassus_first_sweep(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, const S* q) {
  delassus_tree_sweep(c, plan, ws, q);
  for (int t = 0; t < plan.num_terminals(); ++t) {
    const DelassusPlan::Terminal& term = plan.terminals[static_cast<size_t>(t)];
    const ConstraintConstants<S>& k = c.constraints[static_cast<size_t>(term.constraint)];
    Force<S>* columns = &ws.terminal_columns[static_cast<size_t>(t) * 6];
    if (term.sign > 0) std::copy(k.body1_columns, k.body1_columns + k.dim, columns);  // constant: frame 1 is fixed in body 1
    else terminal_force_columns(k, term.sign, body2_from_frame1(k, ws.world_from_body.data()), columns);
  }
}

// Joint i's elimination in a Delassus backward sweep: U_i, D_i^{-1}, U_i D_i^{-1}, and H^a_i
// carried into the parent (Alg. 3 lines 8-9, first half).
template <class S>
void delassus_eliminate_joint(const ModelConstants<S>& c, DelassusWorkspace<S>& ws, int i) {
  const BodyPlan& body = c.tree[i];
  Force<S>* U = ws.U.data() + body.idx_v;
  Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
  S* Dinv = ws.Dinv.data() + ws.Dinv_offset[i];
  eliminate_joint(c, i, ws.articulated_inertia[i], U, Dinv);
  times_Dinv(body.nv, U, Dinv, U_Dinv);
  if (body.parent == 0) return;
  with_parent_body_inertia(c, i, [&](const ArticulatedInertia<S>* parent_body_inertia) BATCHDYN_LAMBDA_INLINE {
    carry_inertia_to_parent(c, i, body.nv, U, U_Dinv, ws.parent_from_body[i], ws.articulated_inertia[i],
                            ws.articulated_inertia[body.parent], parent_body_inertia);
  });
}

}  // namespace batchdyn
