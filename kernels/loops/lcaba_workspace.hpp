// Workspace of LCABA (kernels/loops/lcaba.hpp) for one lane block, sized once from the model and its
// LcabaPlan: per-body spatial quantities, the coupling blocks H_{i,j} (one per plan slot), the
// joint-space blocks pooled by dof, the coupling columns H_{j,i} S_i pooled by the plan, and
// per constraint its rows and right-hand side. The kernel never allocates.
#pragma once

#include <vector>

#include "kernels/loops/conjugate_residual.hpp"
#include "kernels/tree/joint_elimination.hpp"
#include "kernels/loops/loop_constraints.hpp"
#include "layout/coupling_block.hpp"
#include "topology/lcaba_plan.hpp"

namespace batchdyn {

template <class S>
struct LcabaWorkspace {
  LcabaWorkspace(const Model& model, const LcabaPlan& plan)
      : parent_from_body(size(model.num_bodies())), world_from_body(parent_from_body.size()),
        velocity(parent_from_body.size()), bias_acceleration(parent_from_body.size()), acceleration(parent_from_body.size()),
        delta_acceleration(parent_from_body.size()), inertia(parent_from_body.size()), bias(parent_from_body.size()),
        delta_bias(parent_from_body.size()), coupling(size(plan.num_slots())), U(size(model.nv)), U_Dinv(U.size()),
        u(U.size()), delta_u(U.size()), coupling_columns(size(plan.coupling_columns)), terms(model.constraints.size()),
        rhs(model.constraints.size() * 6), delta_qdd(U.size()),
        search(model.constraint_rows, model.num_bodies(), model.nv, /*with_multipliers=*/false) {
    Dinv.resize(size(pool_joint_blocks(model, Dinv_offset)));
  }
  static size_t size(int n) { return static_cast<size_t>(n); }

  std::vector<Transform<S>> parent_from_body, world_from_body;  // ^{λ(i)}M_i, ^0M_i
  std::vector<Motion<S>> velocity;                               // v_i
  std::vector<Motion<S>> bias_acceleration;                      // c_i = v_i x S_i qd_i (a_{b,i})
  std::vector<Motion<S>> acceleration, delta_acceleration;       // a_i and its change in a reduced sweep
  std::vector<ArticulatedInertia<S>> inertia;                    // H_{i,i}
  std::vector<Force<S>> bias, delta_bias;                        // p_i = -f_i (ABA's bias force) and Δp_i
  std::vector<CouplingBlock<S>> coupling;                        // H_{lo,hi} per plan slot
  std::vector<Force<S>> U, U_Dinv;                               // U_i = H_{i,i} S_i, U_i D_i^{-1} (idx_v)
  std::vector<S> u, delta_u;                                     // u_i = tau_i - S_i^T p_i, Δu_i (idx_v)
  std::vector<S> Dinv;                                           // D_i^{-1}
  std::vector<int> Dinv_offset;
  std::vector<Force<S>> coupling_columns;                        // H_{j,i} S_i per (i, j in N_i) (plan)
  std::vector<LoopConstraintTerms<S>> terms;                     // per constraint
  std::vector<S> rhs;                                            // kappa minus the world sides' K a_0, 6 per constraint
  std::vector<S> delta_qdd;                                      // Δqdd of a reduced sweep (idx_v)
  ConjugateResidualWorkspace<S> search;                          // of the outer iterations (kernels/loops/conjugate_residual.hpp)

  size_t bytes() const {
    return (parent_from_body.size() + world_from_body.size()) * sizeof(Transform<S>) +
           (velocity.size() + bias_acceleration.size() + acceleration.size() + delta_acceleration.size()) * sizeof(Motion<S>) +
           inertia.size() * sizeof(ArticulatedInertia<S>) + coupling.size() * sizeof(CouplingBlock<S>) +
           (bias.size() + delta_bias.size() + U.size() + U_Dinv.size() + coupling_columns.size()) * sizeof(Force<S>) +
           (u.size() + delta_u.size() + Dinv.size() + rhs.size()) * sizeof(S) + terms.size() * sizeof(LoopConstraintTerms<S>) +
           delta_qdd.size() * sizeof(S) + search.bytes();
  }
};

}  // namespace batchdyn
