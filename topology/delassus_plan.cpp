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

  // Chains: heads are E ∪ N; a body on a chain inherits its head from its unique supporting
  // child (or is a head itself).
  std::vector<int> head_slot(static_cast<size_t>(n), -1);
  for (int i = 1; i < n; ++i) {
    const bool end_effector = std::binary_search(plan.end_effectors.begin(), plan.end_effectors.end(), i);
    if (end_effector || plan.is_branching[static_cast<size_t>(i)]) {
      head_slot[static_cast<size_t>(i)] = static_cast<int>(plan.heads.size());
      plan.heads.push_back(i);
    }
  }
  plan.chain_head.assign(static_cast<size_t>(n), -1);
  for (int i = n - 1; i >= 1; --i) {
    if (head_slot[static_cast<size_t>(i)] >= 0) plan.chain_head[static_cast<size_t>(i)] = head_slot[static_cast<size_t>(i)];
    else
      for (int c : model.bodies[i].children)
        if (plan.chain_head[static_cast<size_t>(c)] >= 0) plan.chain_head[static_cast<size_t>(i)] = plan.chain_head[static_cast<size_t>(c)];
  }
  for (int h : plan.heads) {
    const int a = plan.branching_ancestor[static_cast<size_t>(h)];
    plan.head_ancestor.push_back(a > 0 ? head_slot[static_cast<size_t>(a)] : -1);
  }
  std::vector<int> end_effector_of(static_cast<size_t>(n), -1);
  for (int k = 0; k < e; ++k) end_effector_of[static_cast<size_t>(plan.end_effectors[static_cast<size_t>(k)])] = k;
  plan.terminal_basis_offset.assign(plan.terminals.size(), -1);
  for (int h : plan.heads) {
    const int k = end_effector_of[static_cast<size_t>(h)];
    int rows = 0;
    if (k >= 0 && !plan.is_branching[static_cast<size_t>(h)])
      for (int t = plan.terminal_begin[static_cast<size_t>(k)]; t < plan.terminal_begin[static_cast<size_t>(k + 1)]; ++t)
        rows += plan.terminals[static_cast<size_t>(t)].dim;
    const bool uses_rows = rows > 0 && rows <= 6;
    plan.head_uses_rows.push_back(uses_rows);
    plan.head_width.push_back(uses_rows ? rows : 6);
    if (!uses_rows) continue;
    for (int t = plan.terminal_begin[static_cast<size_t>(k)], offset = 0; t < plan.terminal_begin[static_cast<size_t>(k + 1)]; ++t) {
      plan.terminal_basis_offset[static_cast<size_t>(t)] = offset;
      offset += plan.terminals[static_cast<size_t>(t)].dim;
    }
  }

  // Levels of each terminal, and the pairs to assemble.
  for (const DelassusPlan::Terminal& t : plan.terminals) {
    plan.level_begin.push_back(static_cast<int>(plan.level_head.size()));
    for (int h = head_slot[static_cast<size_t>(t.body)]; h >= 0; h = plan.head_ancestor[static_cast<size_t>(h)])
      plan.level_head.push_back(h);
  }
  plan.level_begin.push_back(static_cast<int>(plan.level_head.size()));
  auto level_at = [&](int t, int body) {
    for (int l = plan.level_begin[static_cast<size_t>(t)]; l < plan.level_begin[static_cast<size_t>(t + 1)]; ++l)
      if (plan.heads[static_cast<size_t>(plan.level_head[static_cast<size_t>(l)])] == body) return l;
    throw Error("plan_delassus: internal error, cca is not a level of its terminal");
  };
  const int T = plan.num_terminals();
  for (int a = 0; a < T; ++a)
    for (int b = a; b < T; ++b) {
      const int c = plan.cca(end_effector_of[static_cast<size_t>(plan.terminals[static_cast<size_t>(a)].body)],
                             end_effector_of[static_cast<size_t>(plan.terminals[static_cast<size_t>(b)].body)]);
      if (c == 0) continue;
      DelassusPlan::TerminalPair pair{a, b, level_at(a, c), level_at(b, c), -1};
      const int h = head_slot[static_cast<size_t>(c)];
      if (plan.head_uses_rows[static_cast<size_t>(h)]) {  // a and b sit on c itself: go one level up
        pair.chain_head = h;
        const bool above = pair.level_a + 1 < plan.level_begin[static_cast<size_t>(a + 1)];
        pair.level_a = above ? pair.level_a + 1 : -1;
        pair.level_b = above ? pair.level_b + 1 : -1;
      }
      plan.pairs.push_back(pair);
    }
  // Which writes of the assembly reach their block of G first, and which blocks none reaches
  // (a block is named by its constraints' first rows).
  const int m = model.constraint_rows;
  std::vector<char> written(static_cast<size_t>(m) * static_cast<size_t>(m), 0);
  auto first_write = [&](int row, int col) {
    char& w = written[static_cast<size_t>(row) * static_cast<size_t>(m) + static_cast<size_t>(col)];
    const bool first = !w;
    w = 1;
    return first;
  };
  for (DelassusPlan::TerminalPair& pair : plan.pairs) {
    const DelassusPlan::Terminal& ta = plan.terminals[static_cast<size_t>(pair.a)];
    const DelassusPlan::Terminal& tb = plan.terminals[static_cast<size_t>(pair.b)];
    pair.assigns = first_write(ta.row, tb.row);
    if (pair.a != pair.b) pair.mirror_assigns = first_write(tb.row, ta.row);
  }
  for (const Constraint& ci : model.constraints)
    for (const Constraint& cj : model.constraints)
      if (!written[static_cast<size_t>(ci.row) * static_cast<size_t>(m) + static_cast<size_t>(cj.row)])
        plan.unwritten_blocks.push_back({ci.row, cj.row, ci.dim, cj.dim});
  plan.level_needs_acceleration.assign(plan.level_head.size(), 0);
  for (const DelassusPlan::TerminalPair& p : plan.pairs)
    if (p.level_b >= 0) plan.level_needs_acceleration[static_cast<size_t>(p.level_b)] = 1;

  // Force columns in terminal order.
  for (const DelassusPlan::Terminal& t : plan.terminals) {
    plan.column_begin.push_back(plan.num_columns());
    for (int r = 0; r < t.dim; ++r) plan.column_row.push_back(t.row + r);
  }
  plan.column_begin.push_back(plan.num_columns());
  plan.es_column_begin.resize(static_cast<size_t>(n));
  plan.es_column_end.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    plan.es_column_begin[static_cast<size_t>(i)] =
        plan.column_begin[static_cast<size_t>(plan.terminal_begin[static_cast<size_t>(plan.es_begin[static_cast<size_t>(i)])])];
    plan.es_column_end[static_cast<size_t>(i)] =
        plan.column_begin[static_cast<size_t>(plan.terminal_begin[static_cast<size_t>(plan.es_end[static_cast<size_t>(i)])])];
  }
  for (const Constraint& k : model.constraints) plan.has_internal_loops |= k.body1 > 0 && k.body2 > 0;
  plan.rows = model.constraint_rows;
  return plan;
}

}  // namespace batchdyn
