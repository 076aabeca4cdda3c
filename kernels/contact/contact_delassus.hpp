// The contact step's third stage, the Delassus matrix G = J M^-1 J^T of the block's rows
// (kernels/contact/frictional_contact.hpp): G_T over the contact bodies' terminals by PV-OSIMr
// (../shared/papers/pv-osimr-delassus.txt, Alg. 3; topology/contact_plan.hpp), then
// G_ab = T_a G_T[a, b] T_b^T between every two row groups, and the limit rows' columns as O(n)
// joint-torque responses. On the tree (PV-soft, kernels/contact/admm_delassus.hpp) only G's
// diagonal blocks are formed, for the preconditioning, and the rows as PV-soft sees them.
#pragma once

#include <algorithm>
#include <span>

#include "kernels/contact/contact_rows.hpp"
#include "kernels/delassus/pv_osimr.hpp"

namespace batchdyn {

// Whether ADMM runs on the tree for this block: asked for, and every row group on one body
// (ground contacts, joint limits; a pair's or a loop's rows need the formed G). PV-soft's view of
// the contact rows goes to ws.soft.rows.
template <class S>
bool contact_rows_on_the_tree(const ContactSettings& settings, const ContactRowCounts& rows, FrictionalContactWorkspace<S>& ws) {
  bool pv_soft = settings.solver == ContactSolver::Admm && settings.admm_linear_solve == AdmmLinearSolve::PvSoft && rows.loops == 0;
  for (int b = 0; b < rows.contacts; ++b) {
    const ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(b)];
    pv_soft = pv_soft && group.sides == 1;
    if (group.sides == 1)
      for (int r = 0; r < 3; ++r) ws.soft.rows[static_cast<size_t>(3 * b + r)] = PvSoftRow<S>{group.side[0].body, &group.side[0].columns[r]};
  }
  return pv_soft;
}

// G_T by PV-OSIMr over the terminals of the block's `groups` row groups (the contact bodies with
// a candidate in contact in any lane, the loops' bodies): a 6-row terminal's columns are the
// unit forces at its body's origin, a 3-row terminal's its one candidate's rows. The other
// terminals' blocks are not formed (group_delassus reads none of them): a Go2 standing on its
// four feet forms 4 of its 13 contact bodies' terminals. `factorised`: M's factorisation at q,
// else PV-OSIMr eliminates the joints itself.
template <class S>
void terminal_delassus(const ModelConstants<S>& c, const ContactPlan& plan, int groups, const TreeFactor<S>* factorised,
                       FrictionalContactWorkspace<S>& ws) {
  std::fill(ws.terminal_needed.begin(), ws.terminal_needed.end(), 0);
  for (int g = 0; g < groups; ++g) {
    const ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(g)];
    for (int side = 0; side < group.sides; ++side) ws.terminal_needed[static_cast<size_t>(group.side[side].slot)] = 1;
  }
  for (int t = 0; t < plan.delassus.num_terminals(); ++t) {
    if (!ws.terminal_needed[static_cast<size_t>(t)]) continue;
    const int own = plan.own_candidate[static_cast<size_t>(t)];
    for (int r = 0; r < plan.rows_of(t); ++r) {
      Force<S>& e = ws.delassus.terminal_columns[static_cast<size_t>(t * 6 + r)];
      if (own >= 0) {
        e = ws.columns[static_cast<size_t>(3 * own + r)];
      } else {
        e = Force<S>::zero();
        e[r] = S(1);
      }
    }
  }
  pv_osimr_sweeps(c, plan.delassus, ws.delassus, ws.GT.data(), factorised, ws.terminal_needed.data());
}

// G between every two row groups (PV-soft: each group with itself): the sum over their sides of
// T_a G_T[slot_a, slot_b] T_b^T; then a compliant normal row's compliance on the diagonal.
template <class S>
void group_delassus(const ContactPlan& plan, const ContactRowCounts& rows, int groups, bool pv_soft, FrictionalContactWorkspace<S>& ws) {
  const int m = rows.rows();
  const int rowsT = plan.terminal_rows();
  S* G = ws.problem.G.data();
  for (int gb = 0; gb < groups; ++gb) {
    const ContactRowGroup<S>& B = ws.groups[static_cast<size_t>(gb)];
    for (int ga = pv_soft ? gb : 0; ga <= gb; ++ga) {
      const ContactRowGroup<S>& A = ws.groups[static_cast<size_t>(ga)];
      S value[6][6];
      for (int sb = 0; sb < B.sides; ++sb)
        for (int sa = 0; sa < A.sides; ++sa) {
          const ContactRowSide<S>& side_a = A.side[sa];
          const ContactRowSide<S>& side_b = B.side[sb];
          const S* block = ws.GT.data() + plan.row_begin[static_cast<size_t>(side_a.slot)] * rowsT + plan.row_begin[static_cast<size_t>(side_b.slot)];
          const bool first = sa == 0 && sb == 0;
          for (int s = 0; s < B.dim; ++s) {
            const Force<S>& fb = side_b.columns[s];
            S u[6];  // G_T[a, b] T_b^T e_s: terminal a's rows' velocity from a unit impulse of B's row s
            for (int i = 0; i < plan.rows_of(side_a.slot); ++i) {
              if (side_b.own) {
                u[i] = block[i * rowsT + s];
              } else {
                S sum = block[i * rowsT] * fb[0];
                for (int j = 1; j < 6; ++j) sum += block[i * rowsT + j] * fb[j];
                u[i] = sum;
              }
            }
            for (int r = 0; r < A.dim; ++r) {
              S entry = u[r];
              if (!side_a.own) {
                const Force<S>& fa = side_a.columns[r];
                entry = fa[0] * u[0];
                for (int i = 1; i < 6; ++i) entry += fa[i] * u[i];
              }
              value[r][s] = first ? entry : value[r][s] + entry;
            }
          }
        }
      for (int r = 0; r < A.dim; ++r)
        for (int s = 0; s < B.dim; ++s) {
          G[(A.row + r) * m + B.row + s] = value[r][s];
          G[(B.row + s) * m + A.row + r] = value[r][s];
        }
    }
  }
  for (int b = 0; b < rows.contacts; ++b) G[(3 * b) * m + 3 * b] += ws.soft.compliance[static_cast<size_t>(3 * b)];
}

// The limit rows' columns of G, one O(n) response each: M^-1 e_d (a unit torque on the joint's
// dof d, its backward sweep along the joint's ancestors only) read by the contact and loop rows
// (through the bodies' accelerations) and by the other limit rows (PV-soft: its own diagonal
// entry only). Limit rows alone (no group) read only their joints' dofs: the roll-out visits the
// listed joints' chains (a few limits near in a block: a fraction of the tree).
template <class S>
void limit_delassus(const ModelConstants<S>& c, const ContactPlan& plan, const TreeFactor<S>& M, const ContactRowCounts& rows, int groups,
                    bool pv_soft, FrictionalContactWorkspace<S>& ws) {
  const int n = static_cast<int>(c.tree.size());
  const int m = rows.rows();
  S* G = ws.problem.G.data();
  std::span<const int> rolled_out;
  if (groups == 0) {
    std::fill(ws.limit_chain_mark.begin(), ws.limit_chain_mark.end(), 0);
    for (int r = 0; r < rows.limits; ++r)
      for (int i = plan.limited_joints[static_cast<size_t>(ws.limit_list[static_cast<size_t>(r)])].body; i > 0 && !ws.limit_chain_mark[static_cast<size_t>(i)];
           i = c.tree[i].parent)
        ws.limit_chain_mark[static_cast<size_t>(i)] = 1;
    int chain_bodies = 0;
    for (int i = 1; i < n; ++i)
      if (ws.limit_chain_mark[static_cast<size_t>(i)]) ws.limit_chains[static_cast<size_t>(chain_bodies++)] = i;
    rolled_out = std::span<const int>(ws.limit_chains.data(), static_cast<size_t>(chain_bodies));
  }
  for (int r = 0; r < rows.limits; ++r) {
    const int jr = ws.limit_list[static_cast<size_t>(r)];
    const LimitedJoint& joint = plan.limited_joints[static_cast<size_t>(jr)];
    const S sign = ws.limit_sign[static_cast<size_t>(jr)];
    joint_torque_response(c, M, ws.delassus, joint.body, joint.dof, S(1), ws.response.data(), rolled_out);
    const int row = rows.limit_row() + r;
    for (int ga = 0; ga < (pv_soft ? 0 : groups); ++ga) {
      const ContactRowGroup<S>& A = ws.groups[static_cast<size_t>(ga)];
      for (int t = 0; t < A.dim; ++t) {
        S value = dot(A.side[0].columns[t], ws.delassus.body_acceleration[static_cast<size_t>(A.side[0].body)]);
        if (A.sides > 1) value += dot(A.side[1].columns[t], ws.delassus.body_acceleration[static_cast<size_t>(A.side[1].body)]);
        value *= sign;
        G[(A.row + t) * m + row] = value;
        G[row * m + A.row + t] = value;
      }
    }
    for (int r2 = pv_soft ? r : 0; r2 <= r; ++r2) {
      const int j2 = ws.limit_list[static_cast<size_t>(r2)];
      const S value = sign * ws.limit_sign[static_cast<size_t>(j2)] * ws.response[static_cast<size_t>(plan.limited_joints[static_cast<size_t>(j2)].dof)];
      G[row * m + rows.limit_row() + r2] = value;
      G[(rows.limit_row() + r2) * m + row] = value;
    }
  }
}

}  // namespace batchdyn
