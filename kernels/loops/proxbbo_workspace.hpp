// Workspace of proxBBO (kernels/loops/proxbbo.hpp) for one lane block, sized once from the model and
// its ProxBboPlan: per-body spatial quantities (as LCABA's), the K, L and factor pools of the
// plan, the dual terms and multipliers per constraint row, and scratch for the eliminations of
// the multipliers at each loop root. The kernel never allocates.
#pragma once

#include <vector>

#include "kernels/loops/conjugate_residual.hpp"
#include "kernels/tree/joint_elimination.hpp"
#include "kernels/loops/loop_constraints.hpp"
#include "topology/proxbbo_plan.hpp"

namespace batchdyn {

template <class S>
struct ProxBboWorkspace {
  ProxBboWorkspace(const Model& model, const ProxBboPlan& plan)
      : parent_from_body(size(model.num_bodies())), world_from_body(parent_from_body.size()),
        velocity(parent_from_body.size()), bias_acceleration(parent_from_body.size()), acceleration(parent_from_body.size()),
        delta_acceleration(parent_from_body.size()), inertia(parent_from_body.size()), bias(parent_from_body.size()),
        delta_bias(parent_from_body.size()), U(size(model.nv)), U_Dinv(U.size()), u(U.size()), delta_u(U.size()),
        terms(model.constraints.size()), rhs(model.constraints.size() * 6), K(size(plan.k_pool)), L(size(plan.l_pool)),
        factor(size(plan.factor_pool)), e(size(model.constraint_rows)), delta_e(e.size()), lambda(e.size()),
        centre(e.size()), delta_lambda(e.size()), solve(size(plan.max_block_rows)),
        solved_rows(size(plan.max_block_rows * 6)), solved_coupling(size(plan.max_block_rows * plan.max_block_rows)),
        gathered(solved_coupling.size()), search(model.constraint_rows, model.num_bodies(), model.nv, /*with_multipliers=*/true) {
    Dinv.resize(size(pool_joint_blocks(model, Dinv_offset)));
  }
  static size_t size(int n) { return static_cast<size_t>(n); }

  std::vector<Transform<S>> parent_from_body, world_from_body;
  std::vector<Motion<S>> velocity, bias_acceleration, acceleration, delta_acceleration;
  std::vector<ArticulatedInertia<S>> inertia;  // H_{i,i}
  std::vector<Force<S>> bias, delta_bias;      // p_i = -f_i, Δp_i
  std::vector<Force<S>> U, U_Dinv;
  std::vector<S> u, delta_u, Dinv;
  std::vector<int> Dinv_offset;
  std::vector<LoopConstraintTerms<S>> terms;
  std::vector<S> rhs;  // kappa minus the world sides' K a_0, 6 per constraint

  std::vector<Force<S>> K;   // K_{j,i}: dim_j force columns per plan entry
  std::vector<S> L;          // L_{j,k}, j <= k, row-major blocks
  std::vector<S> factor;     // Cholesky factors of L_{R,R} per link, and of the world's set
  std::vector<S> e, delta_e;  // dual linear terms e_j (at the constraint rows), and their change
  std::vector<S> lambda, centre, delta_lambda;  // multipliers (the paper's sign: M qdd + b + J^T lambda = tau); centre: the proximal centre lambda^k
  // Scratch for one link's multiplier elimination.
  std::vector<S> solve;            // one right-hand side of L_{R,R}
  std::vector<S> solved_rows;      // L_{R,R}^{-1} K_{R,i}: r_rows x 6
  std::vector<S> solved_coupling;  // L_{R,R}^{-1} L_{R,U}: r_rows x u_rows
  std::vector<S> gathered;         // L_{R,R} or L_{R,U} gathered from the pool
  ConjugateResidualWorkspace<S> search;  // of the outer iterations (kernels/loops/conjugate_residual.hpp)

  size_t bytes() const {
    return (parent_from_body.size() + world_from_body.size()) * sizeof(Transform<S>) +
           (velocity.size() + bias_acceleration.size() + acceleration.size() + delta_acceleration.size()) * sizeof(Motion<S>) +
           inertia.size() * sizeof(ArticulatedInertia<S>) +
           (bias.size() + delta_bias.size() + U.size() + U_Dinv.size() + K.size()) * sizeof(Force<S>) +
           (u.size() + delta_u.size() + Dinv.size() + rhs.size() + L.size() + factor.size() + e.size() + delta_e.size() +
            lambda.size() + centre.size() + delta_lambda.size() + solve.size() + solved_rows.size() +
            solved_coupling.size() + gathered.size()) * sizeof(S) +
           terms.size() * sizeof(LoopConstraintTerms<S>) + search.bytes();
  }
};

}  // namespace batchdyn
