#include "topology/proxbbo_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "topology/loops.hpp"

namespace batchdyn {

ProxBboPlan plan_proxbbo(const Model& model) {
  const int n = model.num_bodies();
  const int m = static_cast<int>(model.constraints.size());
  ProxBboPlan plan;
  plan.num_loops = m;
  for (const Constraint& c : model.constraints) {
    plan.loop_dim.push_back(c.dim);
    plan.loop_row.push_back(c.row);
    plan.loop_root.push_back(common_ancestor(model, c.body1, c.body2));
  }
  plan.l_slot_table.assign(static_cast<size_t>(m) * static_cast<size_t>(m), -1);
  auto ensure_slot = [&](int j, int k) {
    if (j > k) std::swap(j, k);
    int& slot = plan.l_slot_table[static_cast<size_t>(j * m + k)];
    if (slot < 0) {
      slot = plan.l_pool;
      plan.l_pool += plan.loop_dim[static_cast<size_t>(j)] * plan.loop_dim[static_cast<size_t>(k)];
    }
  };
  for (int j = 0; j < m; ++j) ensure_slot(j, j);  // L_{j,j} = I / mu to start with (eq. 42b)
  auto rows_of = [&](const std::vector<int>& loops) {
    int rows = 0;
    for (int j : loops) rows += plan.loop_dim[static_cast<size_t>(j)];
    return rows;
  };
  auto couple_all = [&](const std::vector<int>& loops) {
    for (size_t a = 0; a < loops.size(); ++a)
      for (size_t b = a; b < loops.size(); ++b) ensure_slot(loops[a], loops[b]);
  };

  std::vector<std::set<int>> carried(static_cast<size_t>(n));  // loops passed up by the children (eq. 47)
  for (int j = 0; j < m; ++j)
    for (int side : {model.constraints[static_cast<size_t>(j)].body1, model.constraints[static_cast<size_t>(j)].body2})
      carried[static_cast<size_t>(side)].insert(j);  // a side on the body itself
  std::vector<std::vector<ProxBboPlan::Entry>> entries_of(static_cast<size_t>(n));
  std::map<std::pair<int, int>, int> k_block_of;  // (body, loop) -> K pool offset
  plan.r_count.assign(static_cast<size_t>(n), 0);
  plan.r_rows.assign(static_cast<size_t>(n), 0);
  plan.u_rows.assign(static_cast<size_t>(n), 0);
  plan.factor_begin.assign(static_cast<size_t>(n), 0);

  for (int i = n - 1; i >= 1; --i) {
    plan.elimination_order.push_back(i);
    std::vector<int> R, U;
    for (int j : carried[static_cast<size_t>(i)]) (plan.loop_root[static_cast<size_t>(j)] == i ? R : U).push_back(j);
    std::vector<int> N = R;
    N.insert(N.end(), U.begin(), U.end());
    couple_all(N);
    plan.max_block_rows = std::max(plan.max_block_rows, rows_of(N));
    plan.r_count[static_cast<size_t>(i)] = static_cast<int>(R.size());
    plan.r_rows[static_cast<size_t>(i)] = rows_of(R);
    plan.u_rows[static_cast<size_t>(i)] = rows_of(U);
    plan.factor_begin[static_cast<size_t>(i)] = plan.factor_pool;
    plan.factor_pool += plan.r_rows[static_cast<size_t>(i)] * plan.r_rows[static_cast<size_t>(i)];
    for (int j : N) {
      ProxBboPlan::Entry e;
      e.loop = j;
      e.k_block = plan.k_pool;
      k_block_of[{i, j}] = plan.k_pool;
      plan.k_pool += plan.loop_dim[static_cast<size_t>(j)];
      entries_of[static_cast<size_t>(i)].push_back(e);
    }
    const int parent = model.bodies[i].parent;
    carried[static_cast<size_t>(parent)].insert(U.begin(), U.end());  // the world collects its own loops
  }
  plan.world_loops.assign(carried[0].begin(), carried[0].end());
  couple_all(plan.world_loops);
  plan.world_rows = rows_of(plan.world_loops);
  plan.world_factor_begin = plan.factor_pool;
  plan.factor_pool += plan.world_rows * plan.world_rows;
  plan.max_block_rows = std::max(plan.max_block_rows, plan.world_rows);

  // Flatten per body; each U-loop of a link with a moving parent knows the parent's K block.
  plan.entry_begin.assign(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    plan.entry_begin[static_cast<size_t>(i)] = static_cast<int>(plan.entries.size());
    const int parent = model.bodies[i].parent;
    std::vector<ProxBboPlan::Entry>& list = entries_of[static_cast<size_t>(i)];
    for (size_t t = static_cast<size_t>(plan.r_count[static_cast<size_t>(i)]); t < list.size(); ++t)
      if (parent > 0) list[t].parent_k_block = k_block_of.at({parent, list[t].loop});
    plan.entries.insert(plan.entries.end(), list.begin(), list.end());
  }
  plan.entry_begin[static_cast<size_t>(n)] = static_cast<int>(plan.entries.size());
  plan.side_k_block.assign(2 * static_cast<size_t>(m), -1);
  for (int j = 0; j < m; ++j) {
    const Constraint& c = model.constraints[static_cast<size_t>(j)];
    if (c.body1 != 0) plan.side_k_block[2 * static_cast<size_t>(j)] = k_block_of.at({c.body1, j});
    if (c.body2 != 0) plan.side_k_block[2 * static_cast<size_t>(j) + 1] = k_block_of.at({c.body2, j});
  }
  return plan;
}

}  // namespace batchdyn
