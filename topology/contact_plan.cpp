#include "topology/contact_plan.hpp"

#include <algorithm>
#include <cmath>

namespace batchdyn {

ContactPlan plan_contacts(const Model& model) {
  ContactPlan plan;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[static_cast<size_t>(i)];
    if (!is_single_dof(b.joint_type) || b.joint_type == JointType::Continuous) continue;
    const double lower = model.lower_position_limit[static_cast<size_t>(b.idx_q)];
    const double upper = model.upper_position_limit[static_cast<size_t>(b.idx_q)];
    if (std::isfinite(lower) || std::isfinite(upper)) plan.limited_joints.push_back({i, b.idx_v, b.idx_q, lower, upper});
  }
  for (const ContactCandidate& c : model.contacts.candidates) plan.bodies.push_back(c.body);
  std::sort(plan.bodies.begin(), plan.bodies.end());
  plan.bodies.erase(std::unique(plan.bodies.begin(), plan.bodies.end()), plan.bodies.end());
  for (const ContactCandidate& c : model.contacts.candidates)
    plan.candidate_slot.push_back(static_cast<int>(std::lower_bound(plan.bodies.begin(), plan.bodies.end(), c.body) - plan.bodies.begin()));

  // The Delassus plan of the same tree with a weld to the world on each contact body: its
  // terminals are the contact bodies, 6 rows each, in ascending body order (plan_delassus sorts
  // terminals by body). Only the graph and the row layout are read from these welds.
  Model welded = model;
  welded.constraints.clear();
  for (size_t k = 0; k < plan.bodies.size(); ++k) {
    Constraint weld;
    weld.name = "contact body " + std::to_string(plan.bodies[k]);
    weld.type = ConstraintType::Weld;
    weld.body1 = plan.bodies[k];
    weld.body2 = 0;
    weld.dim = 6;
    weld.row = 6 * static_cast<int>(k);
    welded.constraints.push_back(weld);
  }
  welded.constraint_rows = 6 * static_cast<int>(plan.bodies.size());
  plan.delassus = plan_delassus(welded);
  return plan;
}

}  // namespace batchdyn
