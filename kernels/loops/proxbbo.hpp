// proxBBO: constrained forward dynamics of a mechanism with kinematic loops by the dual
// proximal point method, each iteration solved by dynamic programming over the spanning tree
// in which the loops' multipliers are eliminated at their roots (lcaba-proxbbo §V, Alg. 4-6).
//
// Each iteration maximises over lambda, minimises over qdd
//     Gauss(qdd) + lambda^T (K a - kappa) - 1/(2 mu) |lambda - lambda^k|^2,
// so the cost-to-go of link i carries, next to ABA's H_{i,i} and p_i (p = -f, as in
// kernels/tree/aba.hpp), the rows K_{j,i} of the loops j it supports, their dual coupling L and
// dual linear terms e (eq. 40-42: L_{j,j} = I/mu, e_j = lambda^k_j / mu - kappa_j):
//     ... + sum_j lambda_j^T K_{j,i} a_i - 1/2 lambda^T L lambda + e^T lambda.
// Eliminating qdd_i (a_i = ^iX_π a_π + c_i + S_i qdd_i, a-bar_i = c_i, plus ^iX_0 a_0 under the
// world) adds, with w0 = D_i^{-1}(u_i - U_i^T a-bar_i) and P_i = I - U_i D_i^{-1} S_i^T,
//     K_{j,π} += K_{j,i} P_i^T X                    (as force columns: X* P_i K_{j,i}^T, eq. 46c)
//     L_{j,k} += K_{j,i} S_i D_i^{-1} S_i^T K_{k,i}^T                                  (eq. 46d)
//     e_j     += K_{j,i} (a-bar_i + S_i w0)                                          (eq. 46e)
// and ABA's H^a_i, p^a_i to the parent. At a loop root (R_i, before qdd_i) the multipliers
// are eliminated (eq. 51-53): lambda_R = L_RR^{-1} (K_{R,i} a_i - L_RU lambda_U + e_R), and
//     H_{i,i} += K_R^T L_RR^-1 K_R,   p_i += K_R^T L_RR^-1 e_R,
//     K_{U,i} -= L_UR L_RR^-1 K_R,    L_UU -= L_UR L_RR^-1 L_RU,    e_U -= L_UR L_RR^-1 e_R.
// L_RR is positive definite by construction (I/mu plus semi-definite terms): a Cholesky
// factorisation without pivoting, cached for the reduced sweeps. Loops rooted at the world are
// solved after the backward sweep, together. The roll-out then gives qdd, a and lambda root
// first (eq. 45, 51). Later iterations change only e (by Δlambda / mu): two reduced sweeps
// (Alg. 5). (The signs here are derived for p = -f; tests check them against the dense oracle.)
//
// Lanes: as LCABA (kernels/loops/lcaba.hpp): converged lanes are frozen, so a lane's result does not
// depend on its block mates. No allocation; branches only on the plan.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/tree/joint_elimination.hpp"
#include "kernels/loops/loop_constraints.hpp"
#include "kernels/loops/proximal_settings.hpp"
#include "kernels/loops/proxbbo_workspace.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

namespace proxbbo_detail {

// Element (r, c) of L_{j,k} (rows of loop j, columns of loop k) in the pool.
template <class S>
BATCHDYN_INLINE S& dual_coupling(const ProxBboPlan& plan, std::vector<S>& pool, int j, int k, int r, int c) {
  const int slot = plan.l_slot(j, k);
  return j <= k ? pool[static_cast<size_t>(slot + r * plan.loop_dim[static_cast<size_t>(k)] + c)]
                : pool[static_cast<size_t>(slot + c * plan.loop_dim[static_cast<size_t>(j)] + r)];
}

// Visits the rows of entries [first, last) of the plan: f(row_in_set, entry, r).
template <class F>
BATCHDYN_INLINE void for_rows(const ProxBboPlan& plan, int first, int last, F&& f) {
  int row = 0;
  for (int t = first; t < last; ++t) {
    const ProxBboPlan::Entry& entry = plan.entries[static_cast<size_t>(t)];
    for (int r = 0; r < plan.loop_dim[static_cast<size_t>(entry.loop)]; ++r, ++row) f(row, entry, r);
  }
}

// The first row of an entry's loop in the stacked multipliers.
BATCHDYN_INLINE int loop_row(const ProxBboPlan& plan, const ProxBboPlan::Entry& entry) {
  return plan.loop_row[static_cast<size_t>(entry.loop)];
}

// Body i's entries in the plan: the loops rooted here, R_i = [first, split), and those passed
// on to the parent, U_i = [split, last), with their row counts.
struct LinkEntries {
  int first, split, last, r_rows, u_rows;
  LinkEntries(const ProxBboPlan& plan, int i)
      : first(plan.entry_begin[static_cast<size_t>(i)]), split(first + plan.r_count[static_cast<size_t>(i)]),
        last(plan.entry_begin[static_cast<size_t>(i) + 1]), r_rows(plan.r_rows[static_cast<size_t>(i)]),
        u_rows(plan.u_rows[static_cast<size_t>(i)]) {}
};

// ---- The dual terms (eq. 42): K_{j,side} = K^side_j, L_{j,j} = I/mu, e_j = lambda^k_j/mu - kappa_j,
// and the warm start in the Lagrangian's sign (ws.lambda = -lambda).
template <class S>
void set_dual_terms(const ModelConstants<S>& c, const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, const S& inverse_mu, const S* lambda) {
  const int m = static_cast<int>(ws.e.size());
  for (Force<S>& column : ws.K) column = Force<S>::zero();
  for (S& x : ws.L) x = S(0);
  for (int k = 0; k < m; ++k) ws.lambda[static_cast<size_t>(k)] = -lambda[k];
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    for (int r = 0; r < k.dim; ++r) {
      dual_coupling(plan, ws.L, static_cast<int>(j), static_cast<int>(j), r, r) = inverse_mu;
      ws.e[static_cast<size_t>(k.row + r)] = ws.lambda[static_cast<size_t>(k.row + r)] * inverse_mu - ws.rhs[6 * j + static_cast<size_t>(r)];
    }
  }
  for (size_t j = 0; j < c.constraints.size(); ++j)
    for (int side = 0; side < 2; ++side) {
      const int block = plan.side_k_block[2 * j + static_cast<size_t>(side)];
      if (block < 0) continue;  // the world's side
      for (int r = 0; r < c.constraints[j].dim; ++r) ws.K[static_cast<size_t>(block + r)] += ws.terms[j].columns[side][r];
    }
}

// ---- At loop root i, before its joint: the multipliers of R_i eliminated (eq. 49-53),
// L_RR factored (kept for the reduced sweeps), and their terms moved into H_{i,i}, p_i and the
// U rows' K, L, e.
template <class S>
void eliminate_root_multipliers(const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, int i, const LinkEntries& at) {
  const int first = at.first, split = at.split, last = at.last, r_rows = at.r_rows, u_rows = at.u_rows;
  S* factor = ws.factor.data() + plan.factor_begin[static_cast<size_t>(i)];
  for_rows(plan, first, split, [&](int row, const ProxBboPlan::Entry& a, int r) {
    for_rows(plan, first, split, [&](int col, const ProxBboPlan::Entry& b, int cc) {
      ws.gathered[static_cast<size_t>(row * r_rows + col)] = dual_coupling(plan, ws.L, a.loop, b.loop, r, cc);
    });
  });
  damped_cholesky(ws.gathered.data(), r_rows, S(0), factor);
  // L_RR^-1 K_R (r_rows x 6), and L_RR^-1 e_R.
  for (int axis = 0; axis < 6; ++axis) {
    for_rows(plan, first, split, [&](int row, const ProxBboPlan::Entry& a, int r) {
      ws.solve[static_cast<size_t>(row)] = ws.K[static_cast<size_t>(a.k_block + r)][axis];
    });
    cholesky_solve(factor, r_rows, ws.solve.data());
    for (int row = 0; row < r_rows; ++row) ws.solved_rows[static_cast<size_t>(row * 6 + axis)] = ws.solve[static_cast<size_t>(row)];
  }
  for_rows(plan, first, split, [&](int row, const ProxBboPlan::Entry& a, int r) {
    ws.solve[static_cast<size_t>(row)] = ws.e[static_cast<size_t>(loop_row(plan, a) + r)];
  });
  cholesky_solve(factor, r_rows, ws.solve.data());  // ws.solve = L_RR^-1 e_R
  for_rows(plan, first, split, [&](int row, const ProxBboPlan::Entry& a, int r) {
    const Force<S>& k_row = ws.K[static_cast<size_t>(a.k_block + r)];
    Force<S> z;
    for (int axis = 0; axis < 6; ++axis) z[axis] = ws.solved_rows[static_cast<size_t>(row * 6 + axis)];
    ws.inertia[i].subtract_outer(k_row, z * S(-1));  // H += K_R^T L_RR^-1 K_R
    ws.bias[i] += k_row * ws.solve[static_cast<size_t>(row)];  // p += K_R^T L_RR^-1 e_R
  });
  if (u_rows == 0) return;
  // L_RU (r_rows x u_rows) and L_RR^-1 L_RU.
  for_rows(plan, first, split, [&](int row, const ProxBboPlan::Entry& a, int r) {
    for_rows(plan, split, last, [&](int col, const ProxBboPlan::Entry& b, int cc) {
      ws.gathered[static_cast<size_t>(row * u_rows + col)] = dual_coupling(plan, ws.L, a.loop, b.loop, r, cc);
    });
  });
  for (int col = 0; col < u_rows; ++col) {
    for (int row = 0; row < r_rows; ++row) ws.solve[static_cast<size_t>(row)] = ws.gathered[static_cast<size_t>(row * u_rows + col)];
    cholesky_solve(factor, r_rows, ws.solve.data());
    for (int row = 0; row < r_rows; ++row) ws.solved_coupling[static_cast<size_t>(row * u_rows + col)] = ws.solve[static_cast<size_t>(row)];
  }
  // K_U -= (L_RR^-1 L_RU)^T K_R; e_U -= (L_RR^-1 L_RU)^T e_R.
  for_rows(plan, split, last, [&](int col, const ProxBboPlan::Entry& b, int cc) {
    Force<S>& k_u = ws.K[static_cast<size_t>(b.k_block + cc)];
    S& e_u = ws.e[static_cast<size_t>(loop_row(plan, b) + cc)];
    for_rows(plan, first, split, [&](int row, const ProxBboPlan::Entry& a, int r) {
      const S y = ws.solved_coupling[static_cast<size_t>(row * u_rows + col)];
      k_u -= ws.K[static_cast<size_t>(a.k_block + r)] * y;
      e_u -= ws.e[static_cast<size_t>(loop_row(plan, a) + r)] * y;
    });
  });
  // L_UU -= L_UR (L_RR^-1 L_RU), both triangles of a diagonal block, one of the others.
  for_rows(plan, split, last, [&](int col_a, const ProxBboPlan::Entry& a, int ra) {
    for_rows(plan, split, last, [&](int col_b, const ProxBboPlan::Entry& b, int rb) {
      if (a.loop > b.loop) return;
      S sum(0);
      for (int row = 0; row < r_rows; ++row)
        sum += ws.gathered[static_cast<size_t>(row * u_rows + col_a)] * ws.solved_coupling[static_cast<size_t>(row * u_rows + col_b)];
      dual_coupling(plan, ws.L, a.loop, b.loop, ra, rb) -= sum;
    });
  });
}

// ---- Joint i eliminated with the loops it passes on (U_i, eq. 46c-e): their e, their dual
// coupling L, and their rows moved to the parent, ^πK = X* P_i K.
template <class S>
void pass_loops_to_parent(const ModelConstants<S>& c, const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, int i, const LinkEntries& at) {
  const BodyPlan& body = c.tree[i];
  const int nv = body.nv, parent = body.parent;
  const Force<S>* U = ws.U.data() + body.idx_v;
  const Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
  const S* u = ws.u.data() + body.idx_v;
  const S* Dinv = ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)];
  const Transform<S>& X = ws.parent_from_body[i];
  Motion<S> known = ws.bias_acceleration[i];  // a-bar_i
  if (parent == 0) known += motion_to_body(c, i, X, c.base_acceleration);
  S rhs[6], w0[6];
  for (int k = 0; k < nv; ++k) rhs[k] = u[k] - dot(U[k], known);
  Dinv_times(nv, Dinv, rhs, w0);
  // S_i^T K_{j,i}^T per U row (solved_rows: u_rows x nv), then e, L and the parent's K.
  for_rows(plan, at.split, at.last, [&](int row, const ProxBboPlan::Entry& b, int r) {
    const Force<S>& k_row = ws.K[static_cast<size_t>(b.k_block + r)];
    S* sk = ws.solved_rows.data() + row * 6;
    S e_change = dot(k_row, known);
    for (int k = 0; k < nv; ++k) {
      sk[k] = subspace_transpose_times(c, i, k_row, k);
      e_change += sk[k] * w0[k];
    }
    ws.e[static_cast<size_t>(loop_row(plan, b) + r)] += e_change;
    if (parent != 0) {
      Force<S> moved = k_row;
      for (int k = 0; k < nv; ++k) moved -= U_Dinv[k] * sk[k];
      ws.K[static_cast<size_t>(b.parent_k_block + r)] += force_to_parent(c, i, X, moved);
    }
  });
  for_rows(plan, at.split, at.last, [&](int row_a, const ProxBboPlan::Entry& a, int ra) {
    const S* sk_a = ws.solved_rows.data() + row_a * 6;
    for_rows(plan, at.split, at.last, [&](int row_b, const ProxBboPlan::Entry& b, int rb) {
      if (a.loop > b.loop) return;
      S dinv_sk_b[6]{};  // zeroed: GCC cannot see that nv >= 1 at -O3 in every lane ISA
      Dinv_times(nv, Dinv, ws.solved_rows.data() + row_b * 6, dinv_sk_b);
      S sum = sk_a[0] * dinv_sk_b[0];
      for (int k = 1; k < nv; ++k) sum += sk_a[k] * dinv_sk_b[k];
      dual_coupling(plan, ws.L, a.loop, b.loop, ra, rb) += sum;
    });
  });
}

// ---- Backward sweep (Alg. 4) in ABA's order: at each link the multipliers of the loops rooted
// there, then its joint with the loops it passes on, then ABA's H^a_i, p^a_i to the parent.
template <class S>
void backward_sweep(const ModelConstants<S>& c, const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, const S* tau) {
  for (const int i : plan.elimination_order) {
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv, parent = body.parent;
    const LinkEntries at(plan, i);
    if (at.r_rows > 0) eliminate_root_multipliers(plan, ws, i, at);
    Force<S>* U = ws.U.data() + body.idx_v;
    Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
    S* u = ws.u.data() + body.idx_v;
    S* Dinv = ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)];
    eliminate_joint(c, i, ws.inertia[i], U, Dinv);
    for (int k = 0; k < nv; ++k) u[k] = tau[body.idx_v + k] - subspace_transpose_times(c, i, ws.bias[i], k);
    times_Dinv(nv, U, Dinv, U_Dinv);
    if (at.u_rows > 0) pass_loops_to_parent(c, plan, ws, i, at);
    if (parent == 0) continue;
    carry_to_parent(c, i, U, U_Dinv, u, ws.bias_acceleration[i], ws.parent_from_body[i], ws.inertia[i], ws.bias[i], ws.inertia[parent],
                    ws.bias[parent]);
  }
}

// ---- The loops rooted at the world, together (after every link): their L gathered and factored.
template <class S>
void factor_world_loops(const ProxBboPlan& plan, ProxBboWorkspace<S>& ws) {
  if (plan.world_rows == 0) return;
  int row = 0;
  for (int a : plan.world_loops)
    for (int r = 0; r < plan.loop_dim[static_cast<size_t>(a)]; ++r, ++row) {
      int col = 0;
      for (int b : plan.world_loops)
        for (int cc = 0; cc < plan.loop_dim[static_cast<size_t>(b)]; ++cc, ++col)
          ws.gathered[static_cast<size_t>(row * plan.world_rows + col)] = dual_coupling(plan, ws.L, a, b, r, cc);
    }
  damped_cholesky(ws.gathered.data(), plan.world_rows, S(0), ws.factor.data() + plan.world_factor_begin);
}

// Their multipliers from the dual terms `e`: out_W = L_WW^-1 e_W.
template <class S>
void solve_world_loops(const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, const std::vector<S>& e, std::vector<S>& out) {
  if (plan.world_rows == 0) return;
  int row = 0;
  for (int j : plan.world_loops)
    for (int r = 0; r < plan.loop_dim[static_cast<size_t>(j)]; ++r, ++row)
      ws.solve[static_cast<size_t>(row)] = e[static_cast<size_t>(plan.loop_row[static_cast<size_t>(j)] + r)];
  cholesky_solve(ws.factor.data() + plan.world_factor_begin, plan.world_rows, ws.solve.data());
  row = 0;
  for (int j : plan.world_loops)
    for (int r = 0; r < plan.loop_dim[static_cast<size_t>(j)]; ++r, ++row)
      out[static_cast<size_t>(plan.loop_row[static_cast<size_t>(j)] + r)] = ws.solve[static_cast<size_t>(row)];
}

// ---- Roll-out (eq. 45, 51), root first: the world's multipliers, then per link qdd_i, a_i and
// the multipliers of the loops rooted there. `e` the dual terms, `lambda_out` the multipliers,
// `a` the accelerations, `u_in` the joint forces, `x_out` the joint accelerations. The reduced
// sweeps pass the changes (accumulate: no bias acceleration, a zero base acceleration).
template <class S>
void roll_out(const ModelConstants<S>& c, const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, const std::vector<S>& e,
              std::vector<S>& lambda_out, std::vector<Motion<S>>& a, const std::vector<S>& u_in, S* x_out, bool accumulate) {
  solve_world_loops(plan, ws, e, lambda_out);
  for (auto it = plan.elimination_order.rbegin(); it != plan.elimination_order.rend(); ++it) {
    const int i = *it;
    const BodyPlan& body = c.tree[i];
    const LinkEntries at(plan, i);
    Motion<S> a_i = motion_to_body(c, i, ws.parent_from_body[i], a[body.parent]);
    if (!accumulate) a_i += ws.bias_acceleration[i];
    a_i = roll_out_joint(c, i, ws.U.data() + body.idx_v, ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)], a_i,
                         u_in.data() + body.idx_v, x_out + body.idx_v, [&](S* rhs) {
                           for_rows(plan, at.split, at.last, [&](int, const ProxBboPlan::Entry& b, int r) {
                             const Force<S>& k_row = ws.K[static_cast<size_t>(b.k_block + r)];
                             const S l = lambda_out[static_cast<size_t>(loop_row(plan, b) + r)];
                             for (int k = 0; k < body.nv; ++k) rhs[k] -= subspace_transpose_times(c, i, k_row, k) * l;
                           });
                         });
    a[i] = a_i;
    if (at.r_rows == 0) continue;
    for_rows(plan, at.first, at.split, [&](int row, const ProxBboPlan::Entry& a_entry, int r) {
      S value = dot(ws.K[static_cast<size_t>(a_entry.k_block + r)], a_i) + e[static_cast<size_t>(loop_row(plan, a_entry) + r)];
      for_rows(plan, at.split, at.last, [&](int, const ProxBboPlan::Entry& b, int cc) {
        value -= dual_coupling(plan, ws.L, a_entry.loop, b.loop, r, cc) * lambda_out[static_cast<size_t>(loop_row(plan, b) + cc)];
      });
      ws.solve[static_cast<size_t>(row)] = value;
    });
    cholesky_solve(ws.factor.data() + plan.factor_begin[static_cast<size_t>(i)], at.r_rows, ws.solve.data());
    for_rows(plan, at.first, at.split, [&](int row, const ProxBboPlan::Entry& a_entry, int r) {
      lambda_out[static_cast<size_t>(loop_row(plan, a_entry) + r)] = ws.solve[static_cast<size_t>(row)];
    });
  }
}

// ---- Reduced backward sweep (Alg. 5): only e changes (Δe in ws.delta_e); the forces it makes
// are carried down as ABA's bias forces, with the factors of the first pass. Leaves Δu_i in
// ws.delta_u.
template <class S>
void reduced_backward_sweep(const ModelConstants<S>& c, const ProxBboPlan& plan, ProxBboWorkspace<S>& ws) {
  for (Force<S>& p : ws.delta_bias) p = Force<S>::zero();
  for (const int i : plan.elimination_order) {
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv;
    const LinkEntries at(plan, i);
    if (at.r_rows > 0) {
      for_rows(plan, at.first, at.split, [&](int row, const ProxBboPlan::Entry& a, int r) {
        ws.solve[static_cast<size_t>(row)] = ws.delta_e[static_cast<size_t>(loop_row(plan, a) + r)];
      });
      cholesky_solve(ws.factor.data() + plan.factor_begin[static_cast<size_t>(i)], at.r_rows, ws.solve.data());
      for_rows(plan, at.first, at.split, [&](int row, const ProxBboPlan::Entry& a, int r) {
        const S z = ws.solve[static_cast<size_t>(row)];
        ws.delta_bias[i] += ws.K[static_cast<size_t>(a.k_block + r)] * z;
        for_rows(plan, at.split, at.last, [&](int, const ProxBboPlan::Entry& b, int cc) {
          ws.delta_e[static_cast<size_t>(loop_row(plan, b) + cc)] -= dual_coupling(plan, ws.L, a.loop, b.loop, r, cc) * z;
        });
      });
    }
    S* du = ws.delta_u.data() + body.idx_v;
    S x[6];
    for (int k = 0; k < nv; ++k) du[k] = -subspace_transpose_times(c, i, ws.delta_bias[i], k);
    Dinv_times(nv, ws.Dinv.data() + ws.Dinv_offset[static_cast<size_t>(i)], du, x);
    for_rows(plan, at.split, at.last, [&](int, const ProxBboPlan::Entry& b, int r) {
      const Force<S>& k_row = ws.K[static_cast<size_t>(b.k_block + r)];
      S change(0);
      for (int k = 0; k < nv; ++k) change += subspace_transpose_times(c, i, k_row, k) * x[k];
      ws.delta_e[static_cast<size_t>(loop_row(plan, b) + r)] += change;
    });
    if (body.parent == 0) continue;
    carry_force_to_parent(c, i, ws.U_Dinv.data() + body.idx_v, du, ws.parent_from_body[i], ws.delta_bias[i], ws.delta_bias[body.parent]);
  }
}

}  // namespace proxbbo_detail

// proxBBO on raw lane arrays, with the interface of lcaba_kernel (kernels/loops/lcaba.hpp): q, v,
// tau in; qdd out; lambda (m lanes, M qdd + b = tau + J^T lambda) the warm start in and the
// multipliers out; `violation` m lanes of scratch. mu is ProximalSettings' penalty (the dual
// regularisation is 1/mu, eq. 42b). Cost: O(n + m_b^2 n + m_b^3) for the first pass.
template <class S>
LoopDynamicsResult<S> proxbbo_kernel(const ModelConstants<S>& c, const ProxBboPlan& plan, ProxBboWorkspace<S>& ws, const S* q,
                                     const S* v, const S* tau, const ProximalSettings& settings, S* qdd, S* lambda, S* violation) {
  using namespace proxbbo_detail;
  using std::abs;
  using std::max;
  const S inverse_mu(static_cast<lane_scalar<S>>(1.0 / settings.mu)), mu(static_cast<lane_scalar<S>>(settings.mu));
  const int m = static_cast<int>(ws.e.size());

  // The first pass (Alg. 4): the first forward sweep with the loops' rows, the dual terms, the
  // backward sweep, the loops rooted at the world, the roll-out.
  loop_first_forward_sweep(c, ws, q, v);
  set_dual_terms(c, plan, ws, inverse_mu, lambda);
  backward_sweep(c, plan, ws, tau);
  factor_world_loops(plan, ws);
  for (int k = 0; k < m; ++k) ws.centre[static_cast<size_t>(k)] = ws.lambda[static_cast<size_t>(k)];
  roll_out(c, plan, ws, ws.e, ws.lambda, ws.acceleration, ws.u, qdd, false);

  // Proximal iterations (Alg. 6) with the reduced sweeps (Alg. 5): only e changes. The centre
  // lambda^k (ws.centre) moves by the conjugate residual method
  // (kernels/loops/conjugate_residual.hpp), and lambda^+ (ws.lambda), a and qdd follow it.
  LoopConvergence<S> convergence(settings);
  ConjugateResidualWorkspace<S>& w = ws.search;
  ConjugateResidual<S> search(w);
  S step(0), magnitude(0), squared_norm(0);
  for (int it = 1;; ++it) {
    const S residual = loop_constraint_violation(c, ws, violation, &magnitude, &squared_norm);
    if (!convergence.go_on(it, residual, squared_norm, magnitude, step, qdd, ws.u.size())) break;
    // r = lambda^+ - lambda^k = mu (K a - kappa): the plain proximal step (the subproblem's
    // optimality), zero in frozen lanes. A change r of the centre is Δe = r / mu (eq. 42c); it
    // changes lambda^+ by r - A r, so A r = -mu K Δa, taken from Δa rather than as that
    // difference, which cancels where r is large along null(K^T) (inconsistent rows).
    for (int k = 0; k < m; ++k) {
      const size_t row = static_cast<size_t>(k);
      w.increment[row] = select(convergence.active(), mu * violation[row], S(0));
      ws.delta_e[row] = w.increment[row] * inverse_mu;
    }
    reduced_backward_sweep(c, plan, ws);
    // Reduced roll-out: the changes of lambda^+, a and qdd. It reads body i's Δu before writing
    // its Δqdd over it, so one array serves both.
    ws.delta_acceleration[0] = Motion<S>::zero();
    roll_out(c, plan, ws, ws.delta_e, ws.delta_lambda, ws.delta_acceleration, ws.delta_u, ws.delta_u.data(), true);
    loop_rows_times(c, ws, ws.delta_acceleration, -mu, w.increment_image.data());
    // Where only A's numerical null space is left in r, one plain step (p = r, alpha = 1: it
    // cannot amplify those modes) ends the lane at its least-squares solution
    // (kernels/loops/conjugate_residual.hpp).
    const auto null_left = search.only_null_space_left(w);
    convergence.stop(null_left);
    const S beta = search.next_direction(w, convergence.stalled() || null_left);
    follow_direction(w.direction_multipliers, ws.delta_lambda, beta);
    follow_direction(w.direction_acceleration, ws.delta_acceleration, beta, 1);
    follow_direction(w.direction_qdd, ws.delta_u, beta);
    // The centre, lambda^+, a and qdd step along p.
    const S alpha = select(null_left, S(1), search.step_length(w));
    for (int k = 0; k < m; ++k) {
      const size_t row = static_cast<size_t>(k);
      ws.centre[row] += alpha * w.direction[row];
      ws.lambda[row] += alpha * w.direction_multipliers[row];
    }
    for (size_t i = 1; i < ws.acceleration.size(); ++i) ws.acceleration[i] += w.direction_acceleration[i] * alpha;
    step = S(0);
    for (size_t k = 0; k < ws.u.size(); ++k) {
      const S change = alpha * w.direction_qdd[k];
      qdd[k] += change;
      step = max(step, abs(change));
    }
  }
  for (int k = 0; k < m; ++k) lambda[k] = -ws.lambda[static_cast<size_t>(k)];
  return {convergence.iterations(), loop_constraint_violation(c, ws, violation), convergence.converged()};
}

// The reference entry point's data (kernels/loops/loop_constraints.hpp): construct once per model.
template <class S>
struct ProxBboData : LoopDynamicsData<S, ProxBboPlan, ProxBboWorkspace<S>> {
  explicit ProxBboData(const Model& model) : LoopDynamicsData<S, ProxBboPlan, ProxBboWorkspace<S>>(model, plan_proxbbo(model)) {}
};

// Reference entry point on Eigen vectors (scalar S): constrained forward dynamics by proxBBO,
// returns data.qdd; data.lambda is the warm start. Throws Error for singular joints.
template <class S>
const VectorX<S>& proxbbo(const Model& model, ProxBboData<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                          const VectorX<S>& tau, const ProximalSettings& settings = {}) {
  return run_loop_kernel("proxbbo", model, data, q, v, tau, settings, [](auto&&... args) { return proxbbo_kernel(args...); });
}

}  // namespace batchdyn
