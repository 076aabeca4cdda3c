#include "topology/delassus_plan.hpp"

#include <algorithm>

#include "topology/loops.hpp"

namespace batchdyn {

DelassusPlan plan_delassus(const Model& model) {
  const int n = model.num_bodies();
  DelassusPlan plan;

  // Terminals: every constraint side on a moving body.
  for (int c = 0; c < static_cast<int>(model.constraints.size()); ++c) {
    const Constraint& k = model.constraints[c];
    if (k.body1 > 0) plan.terminals.push_back({c, k.body1, +1, k.row, k.dim});
    if (k.body2 > 0) plan.terminals.push_back({c, k.body2, -1, k.row, k.dim});
  }
  std::stable_sort(plan.terminals.begin(), plan.terminals.end(),
                   [](const DelassusPlan::Terminal& a, const DelassusPlan::Terminal& b) { return a.body < b.body; });
  for (size_t t = 0; t < plan.terminals.size(); ++t) {
    if (plan.end_effectors.empty() || plan.end_effectors.back() != plan.terminals[t].body) {
      plan.end_effectors.push_back(plan.terminals[t].body);
      plan.terminal_begin.push_back(static_cast<int>(t));
    }
  }
  plan.terminal_begin.push_back(static_cast<int>(plan.terminals.size()));

  // Subtree of i = bodies [i, last_descendant[i]] (depth-first numbering, parent < child).
  std::vector<int> last_descendant(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) last_descendant[static_cast<size_t>(i)] = i;
  for (int i = n - 1; i >= 1; --i) {
    const int p = model.bodies[i].parent;
    last_descendant[static_cast<size_t>(p)] = std::max(last_descendant[static_cast<size_t>(p)], last_descendant[static_cast<size_t>(i)]);
  }
  plan.es_begin.resize(static_cast<size_t>(n));
  plan.es_end.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto first = std::lower_bound(plan.end_effectors.begin(), plan.end_effectors.end(), i);
    const auto last = std::upper_bound(plan.end_effectors.begin(), plan.end_effectors.end(), last_descendant[static_cast<size_t>(i)]);
    plan.es_begin[static_cast<size_t>(i)] = static_cast<int>(first - plan.end_effectors.begin());
    plan.es_end[static_cast<size_t>(i)] = static_cast<int>(last - plan.end_effectors.begin());
  }

  // N: more end-effectors than any child's subtree, and at least one supporting child.
  auto es_size = [&](int i) { return plan.es_end[static_cast<size_t>(i)] - plan.es_begin[static_cast<size_t>(i)]; };
  plan.is_branching.assign(static_cast<size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    int supporting_children = 0, largest_child = 0;
    for (int c : model.bodies[i].children) {
      supporting_children += es_size(c) > 0;
      largest_child = std::max(largest_child, es_size(c));
    }
    if (supporting_children > 0 && es_size(i) > largest_child) {
      plan.is_branching[static_cast<size_t>(i)] = 1;
      plan.branching.push_back(i);
    }
  }
  // Nanc(i), parents first.
  plan.branching_ancestor.assign(static_cast<size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    const int p = model.bodies[i].parent;
    plan.branching_ancestor[static_cast<size_t>(i)] =
        p > 0 && plan.is_branching[static_cast<size_t>(p)] ? p : plan.branching_ancestor[static_cast<size_t>(p)];
  }

  const int e = plan.num_end_effectors();
  plan.closest_common_ancestor.resize(static_cast<size_t>(e) * static_cast<size_t>(e));
  for (int a = 0; a < e; ++a)
    for (int b = a; b < e; ++b) {
      const int c = common_ancestor(model, plan.end_effectors[static_cast<size_t>(a)], plan.end_effectors[static_cast<size_t>(b)]);
      plan.closest_common_ancestor[static_cast<size_t>(a * e + b)] = c;
      plan.closest_common_ancestor[static_cast<size_t>(b * e + a)] = c;
    }
  return plan;
}

}  // namespace batchdyn
