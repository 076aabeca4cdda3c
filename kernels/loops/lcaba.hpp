// LCABA: constrained forward dynamics of a mechanism with kinematic loops (internal, between
// two links, and external, to the world) by the augmented-Lagrangian method, each primal
// problem solved by dynamic programming over the spanning tree (lcaba-proxbbo §IV, Alg. 1-3).
//
// The constraints K^1 a_{l1} + K^2 a_{l2} = kappa (kernels/loops/loop_constraints.hpp) enter the
// cost as  lambda^T (K a - kappa) + mu/2 |K a - kappa|^2. The penalty couples the two links of
// an internal loop (H_{l1,l2}, eq. 25); eliminating a link couples its neighbours N_i and its
// parent (eq. 30). The plan (topology/lcaba_plan.hpp) fixed the elimination order and where
// every coupling block lives.
//
// Conventions. Forces are ABA's bias forces p = -f (the paper's f), so the ABA lines read as in
// kernels/tree/aba.hpp; the cost-to-go of link i is
//     1/2 a_i^T H_{i,i} a_i + p_i^T a_i + sum_{j in N_i} a_i^T H_{i,j} a_j + (terms of N_i only).
// Eliminating qdd_i with a_i = ^iX_{π(i)} a_{π(i)} + c_i + S_i qdd_i (a-bar_i = c_i, plus
// ^iX_0 a_0 when π(i) is the world, whose acceleration is known) gives, with
// U_i = H_{i,i} S_i, u_i = tau_i - S_i^T p_i, P_i = I - U_i D_i^{-1} S_i^T and the
// coupling columns B_{j,i} = H_{j,i} S_i:
//     H_{π,π} += X*(H_{i,i} - U D^-1 U^T)X,  p_π += X*(p_i + H^a_i c_i + U D^-1 u)   (ABA)
//     H_{π,j} += X* P_i H_{i,j}                                                   (eq. 30c)
//     H_{j,k} -= B_{j,i} D_i^{-1} B_{k,i}^T                                        (eq. 30d)
//     p_j     += H_{j,i} a-bar_i + B_{j,i} D_i^{-1} (u_i - U_i^T a-bar_i)          (eq. 30e)
// and when π(i) ∈ N_i, H_{π,π} receives X* P_i H_{i,π} and its transpose (eq. 34). (The
// signs here are derived for p = -f; tests check them against the dense oracle.) The roll-out
//     qdd_i = D_i^{-1} (u_i - U_i^T a-bar_i - U_i^T ^iX_π a_π - sum_j B_{j,i}^T a_j)
// runs in reverse elimination order, so N_i and π(i) are known when i is reached (eq. 29).
//
// Lanes. Every lane runs the same sweeps. A lane that has converged is frozen (its multiplier
// update is masked to zero, which makes every later change in that lane exactly zero), and the
// block iterates until all its lanes have converged or the cap is hit, so a lane's result does
// not depend on which environments share its block. No allocation; branches only on the plan.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/tree/joint_elimination.hpp"
#include "kernels/loops/lcaba_workspace.hpp"
#include "kernels/loops/loop_constraints.hpp"
#include "kernels/loops/proximal_settings.hpp"

namespace batchdyn {

namespace lcaba_detail {

// H_{i,j} from a stored slot (H = slot, or its transpose).
template <class S>
BATCHDYN_INLINE Force<S> block_column(const CouplingBlock<S>& slot, bool transposed, int c) {
  return transposed ? slot.row(c) : slot.column[c];
}
// H_{j,i} m for the neighbour j of i, given the reference to H_{i,j}: the force on j.
template <class S>
BATCHDYN_INLINE Force<S> neighbour_force(const CouplingBlock<S>& slot, bool transposed, const Motion<S>& m) {
  return transposed ? slot.times(m) : slot.transpose_times(m);
}
// this += M (M given by columns) into the block referenced (transposed: the slot holds M^T).
template <class S>
BATCHDYN_INLINE void add_block(CouplingBlock<S>& slot, bool transposed, const Force<S>* columns) {
  for (int c = 0; c < 6; ++c)
    for (int r = 0; r < 6; ++r) {
      if (transposed) slot.column[r][c] += columns[c][r];
      else slot.column[c][r] += columns[c][r];
    }
}
// H += N + N^T for a symmetric H kept as an articulated inertia (N given by columns).
template <class S>
BATCHDYN_INLINE void add_symmetrised(ArticulatedInertia<S>& H, const Force<S>* N) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      H.A.m[r][c] += N[c].linear[r] + N[r].linear[c];
      H.B.m[r][c] += N[3 + c].linear[r] + N[r].angular[c];
      H.C.m[r][c] += N[3 + c].angular[r] + N[3 + r].angular[c];
    }
}

// The loops' penalty terms for multipliers lambda (dense convention, see lcaba_kernel) (eq. 25):
// H_{t,t} += mu K^t^T K^t, H_{1,2} += mu K^1^T K^2, p_t += K^t^T (-lambda - mu kappa). Side 1's
// K^1^T K^1 is a model constant (ConstraintConstants::body1_gram); side 2's rows move with q.
template <class S>
void add_penalty_terms(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws, const S& mu, const S* lambda) {
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    const LoopConstraintTerms<S>& t = ws.terms[j];
    const S* kappa = ws.rhs.data() + 6 * j;
    const int body[2] = {k.body1, k.body2};
    for (int side = 0; side < 2; ++side) {
      if (body[side] == 0) continue;
      ArticulatedInertia<S>& H = ws.inertia[static_cast<size_t>(body[side])];
      Force<S>& p = ws.bias[static_cast<size_t>(body[side])];
      if (side == 0) H.add_scaled(k.body1_gram, mu);
      for (int r = 0; r < k.dim; ++r) {
        const Force<S>& col = t.columns[side][r];
        if (side == 1) H.subtract_outer(col, col * (-mu));
        p += col * (-lambda[k.row + r] - mu * kappa[r]);
      }
    }
    const LcabaPlan::BlockRef& ref = plan.constraint_coupling[j];
    if (ref.slot < 0) continue;
    // H_{body1,body2} += mu sum_r K^1_r K^2_r^T (the slot holds H_{lo,hi}).
    CouplingBlock<S>& slot = ws.coupling[static_cast<size_t>(ref.slot)];
    const int rows_side = ref.transposed ? 1 : 0;
    for (int r = 0; r < k.dim; ++r) slot.add_outer(t.columns[rows_side][r], t.columns[1 - rows_side][r], mu);
  }
}

// rhs_k -= B_{j,i}^T a_j (column k of B_{j,i}) for the neighbours j of i: what the roll-outs
// subtract (eq. 29), with `a` the accelerations or their changes.
template <class S>
BATCHDYN_INLINE void subtract_neighbours(const LcabaPlan& plan, const LcabaWorkspace<S>& ws, int i, int nv, const Motion<S>* a, S* rhs) {
  const int first = plan.neighbour_begin[static_cast<size_t>(i)], last = plan.neighbour_begin[static_cast<size_t>(i) + 1];
  for (int t = first; t < last; ++t) {
    const LcabaPlan::Neighbour& nb = plan.neighbours[static_cast<size_t>(t)];
    const Force<S>* B = ws.coupling_columns.data() + nb.column_offset;
    for (int k = 0; k < nv; ++k) rhs[k] -= dot(B[k], a[static_cast<size_t>(nb.body)]);
  }
}

// ---- Backward sweep (Alg. 1 lines 13-28) in the elimination order S^E: each joint eliminated,
// its coupling passed to its neighbours and parent (eq. 30c-e, 34), ABA's part carried up.
template <class S>
void backward_sweep(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws, const S* tau) {
  for (const int i : plan.elimination_order) {
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv, parent = body.parent;
    Force<S>* U = ws.U.data() + body.idx_v;
    Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
    S* u = ws.u.data() + body.idx_v;
    S* Dinv = ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)];
    eliminate_joint(c, i, ws.inertia[i], U, Dinv);
    for (int k = 0; k < nv; ++k) u[k] = tau[body.idx_v + k] - subspace_transpose_times(c, i, ws.bias[i], k);
    times_Dinv(nv, U, Dinv, U_Dinv);
    const Transform<S>& X = ws.parent_from_body[i];

    // The neighbours (eq. 30c-e, 34).
    const int first = plan.neighbour_begin[static_cast<size_t>(i)], count = plan.neighbour_begin[static_cast<size_t>(i) + 1] - first;
    if (count > 0) {
      // a-bar_i: the acceleration of link i at qdd_i = 0 that is not a decision variable.
      Motion<S> known = ws.bias_acceleration[i];
      if (parent == 0) known += motion_to_body(c, i, X, c.base_acceleration);
      S rhs[6], w0[6];  // w0 = D^-1 (u - U^T a-bar)
      for (int k = 0; k < nv; ++k) rhs[k] = u[k] - dot(U[k], known);
      Dinv_times(nv, Dinv, rhs, w0);
      for (int t = 0; t < count; ++t) {
        const LcabaPlan::Neighbour& nb = plan.neighbours[static_cast<size_t>(first + t)];
        const CouplingBlock<S>& H_ij = ws.coupling[static_cast<size_t>(nb.coupling.slot)];
        Force<S>* B = ws.coupling_columns.data() + nb.column_offset;  // B_{j,i} = H_{j,i} S_i
        for (int k = 0; k < nv; ++k) B[k] = neighbour_force(H_ij, nb.coupling.transposed, subspace_column(c, i, k));
        Force<S> p = neighbour_force(H_ij, nb.coupling.transposed, known);
        for (int k = 0; k < nv; ++k) p += B[k] * w0[k];
        ws.bias[static_cast<size_t>(nb.body)] += p;
      }
      // H_{j,k} -= B_{j,i} D^-1 B_{k,i}^T for the pairs of N_i (eq. 30d).
      const int* pair = plan.pair_slot.data() + plan.pair_begin[static_cast<size_t>(i)];
      for (int a = 0; a < count; ++a) {
        const LcabaPlan::Neighbour& na = plan.neighbours[static_cast<size_t>(first + a)];
        const Force<S>* Ba = ws.coupling_columns.data() + na.column_offset;
        for (int b = a; b < count; ++b, ++pair) {
          const LcabaPlan::Neighbour& nb = plan.neighbours[static_cast<size_t>(first + b)];
          const Force<S>* Bb = ws.coupling_columns.data() + nb.column_offset;
          for (int r = 0; r < nv; ++r) {
            Force<S> z = Bb[0] * Dinv[r * nv];  // (D^-1 B_b^T)_r as a force on b
            for (int s = 1; s < nv; ++s) z += Bb[s] * Dinv[r * nv + s];
            if (*pair < 0) ws.inertia[static_cast<size_t>(na.body)].subtract_outer(Ba[r], z);
            else ws.coupling[static_cast<size_t>(*pair)].add_outer(Ba[r], z, S(-1));
          }
        }
      }
      // H_{π,j} += X* P_i H_{i,j} (eq. 30c); for j = π(i), H_{π,π} += that and its transpose (eq. 34).
      if (parent != 0)
        for (int t = 0; t < count; ++t) {
          const LcabaPlan::Neighbour& nb = plan.neighbours[static_cast<size_t>(first + t)];
          const CouplingBlock<S>& H_ij = ws.coupling[static_cast<size_t>(nb.coupling.slot)];
          const Force<S>* B = ws.coupling_columns.data() + nb.column_offset;
          Force<S> N[6];
          for (int col = 0; col < 6; ++col) {
            Force<S> m = block_column(H_ij, nb.coupling.transposed, col);  // column of H_{i,j}
            for (int k = 0; k < nv; ++k) m -= U_Dinv[k] * B[k][col];       // P_i: - U D^-1 (S^T H_{i,j})
            N[col] = force_to_parent(c, i, X, m);
          }
          if (nb.body == parent) add_symmetrised(ws.inertia[static_cast<size_t>(parent)], N);
          else add_block(ws.coupling[static_cast<size_t>(nb.parent_coupling.slot)], nb.parent_coupling.transposed, N);
        }
    }
    if (parent == 0) continue;  // the world absorbs nothing
    // The first write into H_{π,π} forms I_π plus this term (the plan copied I_π otherwise).
    with_parent_body_inertia(c, i, plan.carry_starts_parent[static_cast<size_t>(i)],
                             [&](const ArticulatedInertia<S>* parent_body_inertia) BATCHDYN_LAMBDA_INLINE {
                               carry_to_parent(c, i, U, U_Dinv, u, ws.bias_acceleration[i], X, ws.inertia[i], ws.bias[i],
                                               ws.inertia[parent], ws.bias[parent], parent_body_inertia);
                             });
  }
}

// ---- The roll-out (Alg. 1 lines 30-33) in reverse S^E, so N_i and π(i) are known when i is
// reached (eq. 29): qdd_i = D_i^{-1} (u_i - U_i^T a'_i - sum_j B_{j,i}^T a_j).
template <class S>
void roll_out(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws, S* qdd) {
  for (auto it = plan.elimination_order.rbegin(); it != plan.elimination_order.rend(); ++it) {
    const int i = *it;
    const BodyPlan& body = c.tree[i];
    const Motion<S> a = motion_to_body(c, i, ws.parent_from_body[i], ws.acceleration[body.parent]) + ws.bias_acceleration[i];
    ws.acceleration[i] = roll_out_joint(c, i, ws.U.data() + body.idx_v, ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)], a,
                                        ws.u.data() + body.idx_v, qdd + body.idx_v,
                                        [&](S* rhs) { subtract_neighbours(plan, ws, i, body.nv, ws.acceleration.data(), rhs); });
  }
}

// ---- The force change a change of the multipliers makes, Δp_t = -K^t^T Δlambda (Alg. 3 lines
// 4-7 with Δlambda given: p = -f, and lambda in the dense convention), into ws.delta_bias.
template <class S>
void load_multiplier_change(const ModelConstants<S>& c, LcabaWorkspace<S>& ws, const S* delta_lambda) {
  for (size_t i = 0; i < ws.delta_bias.size(); ++i) ws.delta_bias[i] = Force<S>::zero();
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    const LoopConstraintTerms<S>& t = ws.terms[j];
    for (int r = 0; r < k.dim; ++r) {
      const S change = -delta_lambda[k.row + r];
      if (k.body1 != 0) ws.delta_bias[static_cast<size_t>(k.body1)] += t.columns[0][r] * change;
      if (k.body2 != 0) ws.delta_bias[static_cast<size_t>(k.body2)] += t.columns[1][r] * change;
    }
  }
}

// ---- Reduced backward sweep (Alg. 2 lines 1-5): only the bias forces change.
template <class S>
void reduced_backward_sweep(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws) {
  for (const int i : plan.elimination_order) {
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv;
    S* du = ws.delta_u.data() + body.idx_v;
    for (int k = 0; k < nv; ++k) du[k] = -subspace_transpose_times(c, i, ws.delta_bias[i], k);
    const int first = plan.neighbour_begin[static_cast<size_t>(i)], last = plan.neighbour_begin[static_cast<size_t>(i) + 1];
    if (first < last) {
      S x[6];
      Dinv_times(nv, ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)], du, x);
      for (int t = first; t < last; ++t) {
        const LcabaPlan::Neighbour& nb = plan.neighbours[static_cast<size_t>(t)];
        const Force<S>* B = ws.coupling_columns.data() + nb.column_offset;
        Force<S> p = B[0] * x[0];
        for (int k = 1; k < nv; ++k) p += B[k] * x[k];
        ws.delta_bias[static_cast<size_t>(nb.body)] += p;
      }
    }
    if (body.parent == 0) continue;
    carry_force_to_parent(c, i, ws.U_Dinv.data() + body.idx_v, du, ws.parent_from_body[i], ws.delta_bias[i], ws.delta_bias[body.parent]);
  }
}

// ---- Reduced roll-out (Alg. 2 lines 7-12): the changes of a and qdd that ws.delta_bias makes,
// into ws.delta_acceleration and ws.delta_qdd.
template <class S>
void reduced_roll_out(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws) {
  for (auto it = plan.elimination_order.rbegin(); it != plan.elimination_order.rend(); ++it) {
    const int i = *it;
    const BodyPlan& body = c.tree[i];
    const Motion<S> da = motion_to_body(c, i, ws.parent_from_body[i], ws.delta_acceleration[body.parent]);
    ws.delta_acceleration[i] = roll_out_joint(c, i, ws.U.data() + body.idx_v, ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)],
                                              da, ws.delta_u.data() + body.idx_v, ws.delta_qdd.data() + body.idx_v, [&](S* rhs) {
                                                subtract_neighbours(plan, ws, i, body.nv, ws.delta_acceleration.data(), rhs);
                                              });
  }
}

// ---- One product with the multiplier map A (kernels/loops/conjugate_residual.hpp): the reduced sweeps
// (Alg. 2) for a change Δlambda, leaving Δa in ws.delta_acceleration, Δqdd in ws.delta_qdd and
// A Δlambda = mu K Δa in `image`.
template <class S>
void apply_multiplier_map(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws, const S& mu,
                          const S* delta_lambda, S* image) {
  load_multiplier_change(c, ws, delta_lambda);
  reduced_backward_sweep(c, plan, ws);
  reduced_roll_out(c, plan, ws);
  loop_rows_times(c, ws, ws.delta_acceleration, mu, image);
}

}  // namespace lcaba_detail

// LCABA on raw lane arrays: q (nq lanes), v, tau (nv) in; qdd (nv) out; lambda (m lanes, the
// dense oracle's convention M qdd + b = tau + J^T lambda) in as the warm start, out as the
// multipliers. `violation` is m lanes of scratch. Settings as the dense oracle's
// (ProximalSettings: mu is the augmented-Lagrangian penalty); the tolerance is raised to
// LoopConvergence::kEpsilons epsilon of the lane's scalar when smaller. Precondition: unit quaternions.
// Cost: O(n + m + m_c^2 n) for the first pass, O(n + m_c n) per further iteration.
template <class S>
LoopDynamicsResult<S> lcaba_kernel(const ModelConstants<S>& c, const LcabaPlan& plan, LcabaWorkspace<S>& ws, const S* q,
                                   const S* v, const S* tau, const ProximalSettings& settings, S* qdd, S* lambda, S* violation) {
  using namespace lcaba_detail;
  using std::abs;
  using std::max;
  const S mu(static_cast<lane_scalar<S>>(settings.mu));

  // The first pass (Alg. 1): the first forward sweep with the loops' rows and right-hand sides
  // (a side on the world moves its known K a_0 to the right, eq. 35), their penalty terms
  // (lines 6-12, eq. 25), the backward sweep and the roll-out.
  // H_{i,i} = I_i only where the plan needs the copy; the backward sweep's first carry into
  // every other body starts it from I_i (LcabaPlan::inertia_copied, carry_starts_parent).
  loop_first_forward_sweep(c, ws, q, v, BodyInertias::None);
  for (const int b : plan.inertia_copied) ws.inertia[static_cast<size_t>(b)] = c.body_spatial_inertia(b);
  for (CouplingBlock<S>& block : ws.coupling) block = CouplingBlock<S>::zero();
  add_penalty_terms(c, plan, ws, mu, lambda);
  backward_sweep(c, plan, ws, tau);
  roll_out(c, plan, ws, qdd);

  // The outer iterations (Alg. 3), each one application of the reduced sweeps (Alg. 2), the
  // multiplier steps chosen by the conjugate residual method (kernels/loops/conjugate_residual.hpp).
  LoopConvergence<S> convergence(settings);
  ConjugateResidualWorkspace<S>& w = ws.search;
  ConjugateResidual<S> search(w);
  const size_t m = w.increment.size(), nv = ws.u.size();
  S step(0), magnitude(0), squared_norm(0);
  for (int it = 1;; ++it) {
    const S residual = loop_constraint_violation(c, ws, violation, &magnitude, &squared_norm);
    if (!convergence.go_on(it, residual, squared_norm, magnitude, step, qdd, nv)) break;
    // r = -mu (K a - kappa): the plain ALM step (eq. 33), zero in frozen lanes; then A r and
    // the changes of a and qdd it makes.
    for (size_t k = 0; k < m; ++k) w.increment[k] = select(convergence.active(), -mu * violation[k], S(0));
    apply_multiplier_map(c, plan, ws, mu, w.increment.data(), w.increment_image.data());
    // Where only A's numerical null space is left in r, one plain step (p = r, alpha = 1: it
    // cannot amplify those modes) ends the lane at its least-squares solution
    // (kernels/loops/conjugate_residual.hpp).
    const auto null_left = search.only_null_space_left(w);
    convergence.stop(null_left);
    const S beta = search.next_direction(w, convergence.stalled() || null_left);
    follow_direction(w.direction_acceleration, ws.delta_acceleration, beta, 1);
    follow_direction(w.direction_qdd, ws.delta_qdd, beta);
    // lambda, a and qdd step along p.
    const S alpha = select(null_left, S(1), search.step_length(w));
    for (size_t k = 0; k < m; ++k) lambda[k] += alpha * w.direction[k];
    for (size_t i = 1; i < ws.acceleration.size(); ++i) ws.acceleration[i] += w.direction_acceleration[i] * alpha;
    step = S(0);
    for (size_t k = 0; k < nv; ++k) {
      const S change = alpha * w.direction_qdd[k];
      qdd[k] += change;
      step = max(step, abs(change));
    }
  }
  return {convergence.iterations(), loop_constraint_violation(c, ws, violation), convergence.converged()};
}

// The reference entry point's data (kernels/loops/loop_constraints.hpp): construct once per model.
template <class S>
struct LcabaData : LoopDynamicsData<S, LcabaPlan, LcabaWorkspace<S>> {
  explicit LcabaData(const Model& model) : LoopDynamicsData<S, LcabaPlan, LcabaWorkspace<S>>(model, plan_lcaba(model)) {}
};

// Reference entry point on Eigen vectors (scalar S): constrained forward dynamics by LCABA,
// returns data.qdd. data.lambda is used as the warm start (zero it for a cold start). Throws
// Error for a model with singular joints.
template <class S>
const VectorX<S>& lcaba(const Model& model, LcabaData<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                        const VectorX<S>& tau, const ProximalSettings& settings = {}) {
  return run_loop_kernel("lcaba", model, data, q, v, tau, settings, [](auto&&... args) { return lcaba_kernel(args...); });
}

}  // namespace batchdyn
