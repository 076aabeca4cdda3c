// PV-OSIM: the Delassus matrix J M^{-1} J^T in O(n + m^2 d) (pv-osimr-delassus.txt §II-C,
// Alg. 1), the in-project baseline for PV-OSIMr (kernels/delassus/pv_osimr.hpp), in local frames.
//
// The backward sweep carries every terminal's force columns K_t^T up the tree (line 6) and at
// each joint adds the joint's share (S_i^T K^T)^T D_i^{-1} (S_i^T K^T) to the blocks of all
// constraints the body supports (line 7): O(m^2) work per body on the constrained paths.
#pragma once

#include "kernels/delassus/pv_osimr.hpp"

namespace batchdyn {

// G (m x m lanes, row-major) = J M^{-1} J^T at q, same interface and output as
// pv_osimr_kernel. O(n + m^2 d).
template <class S>
void pv_osim_kernel(const ModelConstants<S>& c, const DelassusPlan& plan, DelassusWorkspace<S>& ws, const S* q, S* G) {
  const int n = static_cast<int>(c.tree.size());
  const int m = plan.rows;
  delassus_first_sweep(c, plan, ws, q);
  for (int t = 0; t < plan.num_terminals(); ++t)
    for (int r = 0; r < plan.terminals[static_cast<size_t>(t)].dim; ++r)
      ws.moving_columns[static_cast<size_t>(plan.column_begin[static_cast<size_t>(t)] + r)] = ws.terminal_columns[static_cast<size_t>(t * 6 + r)];
  for (int k = 0; k < m * m; ++k) G[k] = S(0);

  // Backward sweep (lines 3-7).
  for (int i = n - 1; i >= 1; --i) {
    delassus_eliminate_joint(c, ws, i);
    const int first = plan.es_column_begin[static_cast<size_t>(i)], end = plan.es_column_end[static_cast<size_t>(i)];
    if (first == end) continue;  // supports no constraint
    const BodyPlan& body = c.tree[i];
    const int nv = body.nv;
    const S* Dinv = ws.Dinv.data() + ws.Dinv_offset[i];
    const Force<S>* U_Dinv = ws.U_Dinv.data() + body.idx_v;
    // Line 6 in two halves: S_i^T K^T and P_i K^T; then line 7, L += (S_i^T K^T)^T D_i^{-1} (S_i^T K^T)
    // over the supported columns; then ^{λ(i)}X_i^* into the parent's frame.
    S* projection = ws.column_projection.data();  // per supported column: y = S_i^T K^T (6), z = D_i^{-1} y (6)
    for (int a = first; a < end; ++a) {
      S* y = projection + (a - first) * 12;
      S* z = y + 6;
      ws.moving_columns[static_cast<size_t>(a)] = propagate_force(c, i, U_Dinv, ws.moving_columns[static_cast<size_t>(a)], y);
      Dinv_times(nv, Dinv, y, z);
    }
    for (int a = first; a < end; ++a) {
      const S* ya = projection + (a - first) * 12;
      const int row_a = plan.column_row[static_cast<size_t>(a)];
      for (int b = a; b < end; ++b) {
        const S* zb = projection + (b - first) * 12 + 6;
        S value = ya[0] * zb[0];
        for (int k = 1; k < nv; ++k) value += ya[k] * zb[k];
        const int row_b = plan.column_row[static_cast<size_t>(b)];
        G[row_a * m + row_b] += value;
        if (a != b) G[row_b * m + row_a] += value;
      }
    }
    if (body.parent > 0)
      for (int a = first; a < end; ++a)
        ws.moving_columns[static_cast<size_t>(a)] = force_to_parent(c, i, ws.parent_from_body[i], ws.moving_columns[static_cast<size_t>(a)]);
  }
}

// Λ^{-1} by PV-OSIM (the baseline), same conventions as pv_osimr_delassus.
template <class S>
const auto& pv_osim_delassus(const Model& model, const Data<S>& data, DelassusData<S>& dd, const VectorX<S>& q) {
  require_regular(model, data.singular_joints, "PV-OSIM");
  pv_osim_kernel(data.constants, dd.plan, dd.workspace, q.data(), dd.G.data());
  return dd.G;
}

}  // namespace batchdyn
