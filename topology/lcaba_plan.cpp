#include "topology/lcaba_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace batchdyn {

LcabaPlan plan_lcaba(const Model& model) {
  const int n = model.num_bodies();
  LcabaPlan plan;
  std::map<std::pair<int, int>, int> slot_of;  // (lo, hi) -> slot
  auto slot = [&](int a, int b) {
    const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
    auto [it, inserted] = slot_of.emplace(key, plan.num_slots());
    if (inserted) plan.slot_bodies.push_back(key);
    return it->second;
  };
  auto block = [&](int row_body, int column_body) { return LcabaPlan::BlockRef{slot(row_body, column_body), row_body > column_body}; };

  // Current neighbour sets: the coupling of the loops' penalty terms (eq. 25), world excluded.
  std::vector<std::set<int>> neighbours(static_cast<size_t>(n));
  for (const Constraint& c : model.constraints) {
    if (c.body1 == 0 || c.body2 == 0) {
      plan.constraint_coupling.push_back({});
      continue;
    }
    plan.constraint_coupling.push_back(block(c.body1, c.body2));
    neighbours[static_cast<size_t>(c.body1)].insert(c.body2);
    neighbours[static_cast<size_t>(c.body2)].insert(c.body1);
  }

  std::vector<int> children_left(static_cast<size_t>(n), 0);
  for (int i = 1; i < n; ++i) ++children_left[static_cast<size_t>(model.bodies[i].parent)];
  std::vector<char> eliminated(static_cast<size_t>(n), 0);
  plan.step_of_body.assign(static_cast<size_t>(n), -1);
  plan.neighbour_count.assign(static_cast<size_t>(n), 0);
  plan.parent_neighbour.assign(static_cast<size_t>(n), -1);
  std::vector<std::vector<LcabaPlan::Neighbour>> neighbours_of(static_cast<size_t>(n));
  std::vector<std::vector<int>> pairs_of(static_cast<size_t>(n));

  for (int step = 0; step < n - 1; ++step) {
    // Minimum degree among the leaves; ties to the largest index.
    int best = -1;
    for (int i = n - 1; i >= 1; --i) {
      if (eliminated[static_cast<size_t>(i)] || children_left[static_cast<size_t>(i)] > 0) continue;
      if (best < 0 || neighbours[static_cast<size_t>(i)].size() < neighbours[static_cast<size_t>(best)].size()) best = i;
    }
    const int i = best, parent = model.bodies[i].parent;
    plan.elimination_order.push_back(i);
    plan.step_of_body[static_cast<size_t>(i)] = step;
    eliminated[static_cast<size_t>(i)] = 1;
    --children_left[static_cast<size_t>(parent)];

    const std::vector<int> N(neighbours[static_cast<size_t>(i)].begin(), neighbours[static_cast<size_t>(i)].end());
    plan.neighbour_count[static_cast<size_t>(i)] = static_cast<int>(N.size());
    plan.max_neighbours = std::max(plan.max_neighbours, static_cast<int>(N.size()));
    // Eq. 31-32: i leaves its neighbours' sets; N_i ∪ {π(i)} become mutually coupled (the
    // world is no decision variable and couples nothing).
    for (int j : N) neighbours[static_cast<size_t>(j)].erase(i);
    std::vector<int> coupled = N;
    if (parent != 0 && !std::binary_search(N.begin(), N.end(), parent)) coupled.push_back(parent);
    for (int a : coupled)
      for (int b : coupled)
        if (a != b) neighbours[static_cast<size_t>(a)].insert(b);
    neighbours[static_cast<size_t>(i)].clear();

    for (size_t t = 0; t < N.size(); ++t) {
      const int j = N[t];
      LcabaPlan::Neighbour nb;
      nb.body = j;
      nb.coupling = block(i, j);
      if (parent != 0 && j != parent) nb.parent_coupling = block(parent, j);
      if (j == parent) plan.parent_neighbour[static_cast<size_t>(i)] = static_cast<int>(t);
      neighbours_of[static_cast<size_t>(i)].push_back(nb);
      for (size_t u = t; u < N.size(); ++u) pairs_of[static_cast<size_t>(i)].push_back(u == t ? -1 : slot(j, N[u]));
    }
  }

  // Flatten per body.
  plan.neighbour_begin.assign(static_cast<size_t>(n) + 1, 0);
  plan.pair_begin.assign(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    plan.neighbour_begin[static_cast<size_t>(i)] = static_cast<int>(plan.neighbours.size());
    plan.pair_begin[static_cast<size_t>(i)] = static_cast<int>(plan.pair_slot.size());
    for (LcabaPlan::Neighbour nb : neighbours_of[static_cast<size_t>(i)]) {
      nb.column_offset = plan.coupling_columns;
      plan.coupling_columns += model.bodies[i].nv;
      plan.neighbours.push_back(nb);
    }
    plan.pair_slot.insert(plan.pair_slot.end(), pairs_of[static_cast<size_t>(i)].begin(), pairs_of[static_cast<size_t>(i)].end());
  }
  plan.neighbour_begin[static_cast<size_t>(n)] = static_cast<int>(plan.neighbours.size());
  plan.pair_begin[static_cast<size_t>(n)] = static_cast<int>(plan.pair_slot.size());

  // The kernel's accesses to each H_{b,b} in its order (kernels/loops/lcaba.hpp): the penalty terms,
  // then per eliminated i: its own elimination reads H_{i,i}, eq. 30d adds to H_{j,j} of every
  // neighbour j, eq. 34 to H_{π,π} when π(i) ∈ N_i, and the carry to H_{π,π}. The first access
  // that is not a carry needs I_b copied beforehand; a carry that comes first starts from I_π.
  std::vector<char> started(static_cast<size_t>(n), 0);
  plan.carry_starts_parent.assign(static_cast<size_t>(n), 0);
  auto needs_start = [&](int b) {
    if (b == 0 || started[static_cast<size_t>(b)]) return;
    started[static_cast<size_t>(b)] = 1;
    plan.inertia_copied.push_back(b);
  };
  for (const Constraint& c : model.constraints) {
    needs_start(c.body1);
    needs_start(c.body2);
  }
  for (const int i : plan.elimination_order) {
    needs_start(i);
    for (int t = plan.neighbour_begin[static_cast<size_t>(i)]; t < plan.neighbour_begin[static_cast<size_t>(i) + 1]; ++t)
      needs_start(plan.neighbours[static_cast<size_t>(t)].body);
    const int parent = model.bodies[i].parent;
    if (parent == 0) continue;
    if (!started[static_cast<size_t>(parent)]) {
      started[static_cast<size_t>(parent)] = 1;
      plan.carry_starts_parent[static_cast<size_t>(i)] = 1;
    }
  }
  std::sort(plan.inertia_copied.begin(), plan.inertia_copied.end());
  return plan;
}

}  // namespace batchdyn
