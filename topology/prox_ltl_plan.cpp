#include "topology/prox_ltl_plan.hpp"

#include <algorithm>

namespace batchdyn {

namespace {

// The last dof of body b's joint, or of its nearest ancestor with dofs; -1 when none has any.
int last_dof_at_or_above(const Model& model, int b) {
  while (b > 0 && model.bodies[static_cast<size_t>(b)].nv == 0) b = model.bodies[static_cast<size_t>(b)].parent;
  if (b <= 0) return -1;
  const Body& body = model.bodies[static_cast<size_t>(b)];
  return body.idx_v + body.nv - 1;
}

}  // namespace

ProxLtlPlan plan_prox_ltl(const Model& model) {
  ProxLtlPlan plan;
  plan.nv = model.nv;
  plan.rows = model.constraint_rows;
  plan.dof_parent.assign(static_cast<size_t>(model.nv), -1);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const Body& body = model.bodies[static_cast<size_t>(b)];
    for (int k = 0; k < body.nv; ++k)
      plan.dof_parent[static_cast<size_t>(body.idx_v + k)] = k > 0 ? body.idx_v + k - 1 : last_dof_at_or_above(model, body.parent);
  }

  // sigma per dof: mark the dofs on the root paths of each constraint's two bodies.
  std::vector<std::vector<int>> rows_of(static_cast<size_t>(model.nv));
  std::vector<int> marked(static_cast<size_t>(model.nv), -1);  // the constraint that last marked the dof
  for (size_t c = 0; c < model.constraints.size(); ++c) {
    const Constraint& constraint = model.constraints[c];
    for (int side : {constraint.body1, constraint.body2})
      for (int dof = last_dof_at_or_above(model, side); dof >= 0; dof = plan.dof_parent[static_cast<size_t>(dof)]) {
        if (marked[static_cast<size_t>(dof)] == static_cast<int>(c)) break;  // the rest of the path is marked already
        marked[static_cast<size_t>(dof)] = static_cast<int>(c);
        for (int r = 0; r < constraint.dim; ++r) rows_of[static_cast<size_t>(dof)].push_back(constraint.row + r);
      }
  }
  plan.row_begin.assign(static_cast<size_t>(model.nv) + 1, 0);
  for (int j = 0; j < model.nv; ++j) {
    std::vector<int>& rows = rows_of[static_cast<size_t>(j)];
    std::sort(rows.begin(), rows.end());
    plan.rows_on_dof.insert(plan.rows_on_dof.end(), rows.begin(), rows.end());
    plan.row_begin[static_cast<size_t>(j) + 1] = static_cast<int>(plan.rows_on_dof.size());
  }
  return plan;
}

}  // namespace batchdyn
