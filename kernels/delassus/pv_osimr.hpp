// PV-OSIMr: the Delassus matrix (inverse operational-space inertia) Λ^{-1} = J M^{-1} J^T of
// a tree in O(n + m^2) (pv-osimr-delassus.txt §III, Alg. 3), in local frames.
//
// Instead of carrying every end-effector's constraint rows up the tree (PV-OSIM, O(n + m^2 d)),
// the backward sweep carries one fixed-size pair per chain: the extended force propagator
// ^{Nanc(h)}P_h (eq. 9) and the apparent inverse inertia ^{Nanc(h)}Ω_h (eq. 11, 16) from each
// chain head h ∈ E ∪ N to the next branching ancestor. A forward sweep over the heads alone
// gives ^0Ω_h (eq. 18); each terminal's rows are carried across heads only (eq. 19), and every
// block is ^cK_a ^0Ω_c ^cK_b^T with c = cca(a, b) (eq. 17).
//
// Local frames: a force at body i in i's frame reaches its parent as ^{λ(i)}X_i^* P_i f; an
// acceleration reaches i from its parent as P_i^T ^iX_{λ(i)} a. A chain starts from ^hP_h = I
// (6 columns, ^0Ω_h a 6 x 6 in h's frame) at every head, except at an end-effector outside N
// with at most 6 rows, where it starts from those rows as the paper's line 4 does
// (^eP_e = K_e^T: 3 columns for a point contact, ^0Ω_e then in constraint coordinates). A
// constraint's rows on a body are its terminal's force columns (kernels/tree/constraint_rows.hpp).
//
// Beyond the paper: a constraint between two moving links (an internal loop) has a terminal on
// each link (sign +1 / -1), and the pair sums over all terminal pairs add into its blocks.
#pragma once

#include <algorithm>

#include "kernels/tree/data.hpp"
#include "kernels/delassus/delassus_operations.hpp"
#include "kernels/delassus/delassus_workspace.hpp"

namespace batchdyn {

namespace detail {
// O f for a 6 x 6 row-major O (a map from forces to accelerations) and a force f.
template <class S>
BATCHDYN_INLINE Motion<S> inverse_inertia_times(const S* O, const Force<S>& f) {
  Motion<S> a;
  for (int r = 0; r < 6; ++r) {
    S s = O[r * 6] * f.linear.x;
    for (int k = 1; k < 6; ++k) s += O[r * 6 + k] * f[k];
    a[r] = s;
  }
  return a;
}
}  // namespace detail

// G (m x m lanes, row-major, rows as model.constraints' rows) = J M^{-1} J^T at q.
// Preconditions: unit quaternions; c and ws built for this model and plan. O(n + m^2).
// The sweeps after the first forward sweep: ws holds the placements, H^A_i = H_i and the
// terminals' force columns (delassus_first_sweep, or delassus_tree_sweep plus the caller's
// columns). With `factorised` (M's factorisation at this q, from a sweep the caller already
// ran: the accelerations stage's ABA), ws needs the terminals' columns only: the backward
// sweep reads U_i D_i^{-1}, D_i^{-1} and the placements from it and carries the chains alone,
// without eliminating the joints again. O(n + m^2).
// With `terminal_needed` (one flag per terminal), only the blocks of G between two needed
// terminals are formed, and only the chains their paths pass are carried: the contact stage's
// terminals without a contact in any lane of the block (a thigh in the air) cost nothing past
// the joints' elimination. Every block it forms is bit for bit the one the full sweep forms (a
// block reads only the chains on its two terminals' paths); the others are left as they were.
// Precondition for terminal_needed: no two terminals share rows (the contact plan's: one per
// contact body; an internal loop's two sides share theirs, and need both or neither).
template <class S>
void pv_osimr_sweeps(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, S* G,
                     const TreeFactor<S>* factorised = nullptr, const char* terminal_needed = nullptr);

template <class S>
void pv_osimr_kernel(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, const S* q, S* G) {
  delassus_first_sweep(c, plan, ws, q);  // lines 1-4
  pv_osimr_sweeps(c, plan, ws, G);
}

template <class S>
void pv_osimr_sweeps(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, S* G, const TreeFactor<S>* factorised,
                     const char* terminal_needed) {
  const int n = static_cast<int>(c.tree.size());
  const TreeFactor<S> M = factorised ? *factorised : tree_factor_of(ws);
  const int m = plan.rows;
  const int heads = static_cast<int>(plan.heads.size());
  const auto needed = [&](int t) { return terminal_needed == nullptr || terminal_needed[t] != 0; };
  // The chains a needed terminal's path passes (its levels' heads, up to the world): the only
  // ones its blocks read.
  std::fill(ws.head_needed.begin(), ws.head_needed.end(), static_cast<char>(terminal_needed == nullptr));
  if (terminal_needed != nullptr)
    for (int t = 0; t < plan.num_terminals(); ++t)
      if (needed(t))
        for (int l = plan.level_begin[static_cast<size_t>(t)]; l < plan.level_begin[static_cast<size_t>(t + 1)]; ++l)
          ws.head_needed[static_cast<size_t>(plan.level_head[static_cast<size_t>(l)])] = 1;
  const auto head_needed = [&](int h) { return ws.head_needed[static_cast<size_t>(h)] != 0; };

  // Every chain starts at its head: ^hP_h = I, or for an end-effector outside N with at most 6
  // rows ^eP_e = K_e^T (its force columns: the chain then carries head_width < 6 columns, line
  // 4). ^hΩ_h = 0 is not stored: the head's own joint, the first the backward sweep meets on
  // its chain, assigns its term instead of adding it (a pass of 36 zero lanes per head was
  // 12 % of this function's samples on AVX-512: stores that miss L1 in a block's working set).
  for (int h = 0; h < heads; ++h)
    if (!plan.head_uses_rows[static_cast<size_t>(h)] && head_needed(h))
      for (int k = 0; k < 6; ++k) {
        Force<S>& column = ws.chain_propagator[static_cast<size_t>(h * 6 + k)];
        column = Force<S>::zero();
        column[k] = S(1);
      }
  for (int t = 0; t < plan.num_terminals(); ++t) {
    const int offset = plan.terminal_basis_offset[static_cast<size_t>(t)];
    if (offset < 0 || !needed(t)) continue;
    const DelassusPlan::Terminal& term = plan.terminals[static_cast<size_t>(t)];
    const int h = plan.chain_head[static_cast<size_t>(term.body)];
    for (int r = 0; r < term.dim; ++r)
      ws.chain_propagator[static_cast<size_t>(h * 6 + offset + r)] = ws.terminal_columns[static_cast<size_t>(t * 6 + r)];
  }

  // Backward sweep (lines 5-11): H^A as in ABA (unless factorised); the chain through body i
  // gains joint i:
  //   ^{λ(i)}Ω_d = ^iΩ_d + (S_i^T ^iP_d)^T D_i^{-1} (S_i^T ^iP_d),   ^{λ(i)}P_d = ^{λ(i)}X_i^* P_i ^iP_d.
  // A chain ends at a child of the root: its P goes nowhere, only S_i^T P enters Ω.
  for (int i = n - 1; i >= 1; --i) {
    if (!factorised) delassus_eliminate_joint(c, ws, i);
    const int h = plan.chain_head[static_cast<size_t>(i)];
    if (h < 0 || !head_needed(h)) continue;  // supports no constraint (of those needed)
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv;
    const S* Dinv = M.Dinv + M.Dinv_offset[i];
    const Force<S>* U_Dinv = M.U_Dinv + body.idx_v;
    const int width = plan.head_width[static_cast<size_t>(h)];
    Force<S>* P = &ws.chain_propagator[static_cast<size_t>(h * 6)];
    S* Omega = &ws.chain_inverse_inertia[static_cast<size_t>(h * 36)];
    const bool chain_starts = plan.heads[static_cast<size_t>(h)] == i;  // ^hΩ_h = 0 before this joint
    S Y[6][6], Z[6][6];  // per column: Y[col] = S_i^T (column col of ^iP_d), Z[col] = D_i^{-1} Y[col]
    for (int col = 0; col < width; ++col) {
      if (body.parent > 0) P[col] = propagate_force(c, i, U_Dinv, P[col], Y[col]);
      else for (int k = 0; k < nv; ++k) Y[col][k] = subspace_transpose_times(c, i, P[col], k);
      Dinv_times(nv, Dinv, Y[col], Z[col]);
    }
    if (nv == 1) {  // most joints: a rank-1 update, Y and Z one value per column
      for (int a = 0; a < width; ++a) {  // upper triangle; the forward sweep mirrors it
        const S y = Y[a][0];
        if (chain_starts)
          for (int b = a; b < width; ++b) Omega[a * 6 + b] = y * Z[b][0];
        else
          for (int b = a; b < width; ++b) Omega[a * 6 + b] += y * Z[b][0];
      }
    } else {
      for (int a = 0; a < width; ++a)
        for (int b = a; b < width; ++b) {
          S sum = chain_starts ? S(0) : Omega[a * 6 + b];
          for (int k = 0; k < nv; ++k) sum += Y[a][k] * Z[b][k];
          Omega[a * 6 + b] = sum;
        }
    }
    if (body.parent > 0)
      for (int col = 0; col < width; ++col) P[col] = force_to_parent(c, i, M.parent_from_body[i], P[col]);
  }

  // Limited forward sweep over the heads (lines 12-13):
  //   ^0Ω_h = ^{Nanc(h)}Ω_h + ^{Nanc(h)}P_h^T ^0Ω_{Nanc(h)} ^{Nanc(h)}P_h,
  // width x width in h's basis, zero-padded to 6 x 6.
  for (int h = 0; h < heads; ++h) {
    if (!head_needed(h)) continue;
    const int width = plan.head_width[static_cast<size_t>(h)];
    S* O = &ws.inverse_inertia[static_cast<size_t>(h * 36)];
    const S* chain = &ws.chain_inverse_inertia[static_cast<size_t>(h * 36)];
    if (width < 6)  // the padding of a narrower basis; a full one is written entry by entry below
      for (int k = 0; k < 36; ++k) O[k] = S(0);
    for (int a = 0; a < width; ++a)
      for (int b = a; b < width; ++b) O[a * 6 + b] = O[b * 6 + a] = chain[a * 6 + b];
    const int ancestor = plan.head_ancestor[static_cast<size_t>(h)];
    if (ancestor < 0) continue;  // ^0Ω of the world is zero
    if (plan.head_uses_rows[static_cast<size_t>(h)]) continue;  // never formed: see the assembly
    const S* O_ancestor = &ws.inverse_inertia[static_cast<size_t>(ancestor * 36)];
    const Force<S>* P = &ws.chain_propagator[static_cast<size_t>(h * 6)];
    Motion<S> OP[6];
    for (int b = 0; b < width; ++b) OP[b] = detail::inverse_inertia_times(O_ancestor, P[b]);
    for (int a = 0; a < width; ++a)
      for (int b = a; b < width; ++b) {
        O[a * 6 + b] += dot(P[a], OP[b]);
        O[b * 6 + a] = O[a * 6 + b];
      }
  }

  // Limited backward sweep (lines 14-16): each terminal's columns at every head up its path,
  // ^{Nanc(i)}K^T = ^{Nanc(i)}P_i ^iK^T, and ^0Ω_c ^cK^T where a pair reads it. Columns are
  // coordinates in the head's basis: forces for an identity basis, unit vectors at the
  // terminal's own head when that head's basis is its rows.
  for (int t = 0; t < plan.num_terminals(); ++t) {
    if (!needed(t)) continue;
    const int dim = plan.terminals[static_cast<size_t>(t)].dim;
    const int first = plan.level_begin[static_cast<size_t>(t)], end = plan.level_begin[static_cast<size_t>(t + 1)];
    const int offset = plan.terminal_basis_offset[static_cast<size_t>(t)];
    for (int r = 0; r < dim; ++r) {
      Force<S>& column = ws.level_columns[static_cast<size_t>(first * 6 + r)];
      if (offset < 0) {
        column = ws.terminal_columns[static_cast<size_t>(t * 6 + r)];
      } else {
        column = Force<S>::zero();
        column[offset + r] = S(1);
      }
    }
    for (int l = first + 1; l < end; ++l) {
      const int below_head = plan.level_head[static_cast<size_t>(l - 1)];
      const int width = plan.head_width[static_cast<size_t>(below_head)];
      const Force<S>* P = &ws.chain_propagator[static_cast<size_t>(below_head * 6)];
      for (int r = 0; r < dim; ++r) {
        Force<S>& above = ws.level_columns[static_cast<size_t>(l * 6 + r)];
        if (l == first + 1 && offset >= 0) {  // a unit coordinate below: the propagator's column
          above = P[offset + r];
          continue;
        }
        const Force<S>& below = ws.level_columns[static_cast<size_t>((l - 1) * 6 + r)];
        above = P[0] * below.linear.x;
        for (int k = 1; k < width; ++k) above += P[k] * below[k];
      }
    }
    for (int l = first; l < end; ++l) {
      if (!plan.level_needs_acceleration[static_cast<size_t>(l)]) continue;
      const S* O = &ws.inverse_inertia[static_cast<size_t>(plan.level_head[static_cast<size_t>(l)] * 36)];
      for (int r = 0; r < dim; ++r)
        ws.level_accelerations[static_cast<size_t>(l * 6 + r)] =
            detail::inverse_inertia_times(O, ws.level_columns[static_cast<size_t>(l * 6 + r)]);
    }
  }

  // Assembly (lines 17-20): G_ab += ^cK_a ^0Ω_c ^cK_b^T for every terminal pair a <= b, and
  // its transpose for a != b. When c is an end-effector whose chain carries its own rows,
  // ^0Ω_c = ^{Nanc}Ω_c + ^{Nanc}P_c^T ^0Ω_{Nanc} ^{Nanc}P_c in row coordinates, so the block is
  // the chain's entry plus the same product one level up (eq. 18 folded into eq. 17).
  // Each block of G is stored by the first pair that reaches it (no pass zeroing m x m lanes
  // first); only the blocks no pair reaches are zeroed.
  for (const DelassusPlan::ZeroBlock& zero : plan.unwritten_blocks)
    for (int r = 0; r < zero.rows; ++r)
      for (int s = 0; s < zero.cols; ++s) G[(zero.row + r) * m + zero.col + s] = S(0);
  for (const DelassusPlan::TerminalPair& pair : plan.pairs) {
    if (!needed(pair.a) || !needed(pair.b)) continue;
    const DelassusPlan::Terminal& ta = plan.terminals[static_cast<size_t>(pair.a)];
    const DelassusPlan::Terminal& tb = plan.terminals[static_cast<size_t>(pair.b)];
    const bool mirrored = pair.a != pair.b;
    S block[6][6];  // ^cK_a ^0Ω_c ^cK_b^T, ta.dim x tb.dim
    if (pair.level_a >= 0) {
      const Force<S>* Ka = &ws.level_columns[static_cast<size_t>(pair.level_a * 6)];
      const Motion<S>* OKb = &ws.level_accelerations[static_cast<size_t>(pair.level_b * 6)];
      for (int r = 0; r < ta.dim; ++r) {
        const Force<S> k_r = Ka[r];  // held in registers across the row
        for (int s = 0; s < tb.dim; ++s) block[r][s] = dot(k_r, OKb[s]);
      }
    } else {
      for (int r = 0; r < ta.dim; ++r)
        for (int s = 0; s < tb.dim; ++s) block[r][s] = S(0);
    }
    if (pair.chain_head >= 0) {  // upper triangle of the chain's ^{Nanc}Ω
      const S* chain = &ws.chain_inverse_inertia[static_cast<size_t>(pair.chain_head * 36)];
      const int offset_a = plan.terminal_basis_offset[static_cast<size_t>(pair.a)];
      const int offset_b = plan.terminal_basis_offset[static_cast<size_t>(pair.b)];
      for (int r = 0; r < ta.dim; ++r)
        for (int s = 0; s < tb.dim; ++s) {
          const int i = offset_a + r, j = offset_b + s;
          block[r][s] += i <= j ? chain[i * 6 + j] : chain[j * 6 + i];
        }
    }
    for (int r = 0; r < ta.dim; ++r) {
      S* row = G + (ta.row + r) * m + tb.row;
      if (pair.assigns)
        for (int s = 0; s < tb.dim; ++s) row[s] = block[r][s];
      else
        for (int s = 0; s < tb.dim; ++s) row[s] += block[r][s];
    }
    if (mirrored)
      for (int s = 0; s < tb.dim; ++s) {
        S* row = G + (tb.row + s) * m + ta.row;
        if (pair.mirror_assigns)
          for (int r = 0; r < ta.dim; ++r) row[r] = block[r][s];
        else
          for (int r = 0; r < ta.dim; ++r) row[r] += block[r][s];
      }
  }
}

// Scalar reference entry point: the plan, workspace and output of one model.
template <class S>
struct DelassusData {
  explicit DelassusData(const Model& model) : plan(plan_delassus(model)), workspace(model, plan), G(model.constraint_rows, model.constraint_rows) {}
  DelassusPlan plan;
  DelassusWorkspace<S> workspace;
  Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> G;
};

// Λ^{-1} = J M^{-1} J^T at q by PV-OSIMr (m x m, rows in constraint frames as
// constraint_kinematics). Throws Error for a model with singular joints.
template <class S>
const auto& pv_osimr_delassus(const Model& model, const Data<S>& data, DelassusData<S>& dd, const VectorX<S>& q) {
  require_regular(model, data.singular_joints, "PV-OSIMr");
  pv_osimr_kernel(data.constants, dd.plan, dd.workspace, q.data(), dd.G.data());
  return dd.G;
}

}  // namespace batchdyn
