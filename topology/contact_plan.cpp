#include "topology/contact_plan.hpp"

#include <algorithm>
#include <cmath>

namespace batchdyn {

std::vector<LimitedJoint> limited_joints(const Model& model, std::vector<std::string>* left_out) {
  std::vector<LimitedJoint> joints;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[static_cast<size_t>(i)];
    if (!is_single_dof(b.joint_type) || b.joint_type == JointType::Continuous) continue;
    const double lower = model.lower_position_limit[static_cast<size_t>(b.idx_q)];
    const double upper = model.upper_position_limit[static_cast<size_t>(b.idx_q)];
    if (!std::isfinite(lower) && !std::isfinite(upper)) continue;
    const double reference = model.reference_configuration.empty() ? 0.0 : model.reference_configuration[static_cast<size_t>(b.idx_q)];
    if (model.constraint_rows > 0 && (reference < lower || reference > upper)) {
      if (left_out) left_out->push_back(b.joint_name);
      continue;
    }
    joints.push_back({i, b.idx_v, b.idx_q, lower, upper});
  }
  return joints;
}

std::vector<ReachGroup> plan_reach_groups(const Model& model) {
  const ContactModel& cm = model.contacts;
  std::vector<ReachGroup> groups;
  int last_obstacle = -1;
  for (size_t k = 0; k < cm.candidates.size(); ++k) {
    const ContactCandidate& c = cm.candidates[k];
    if (c.against_ground() || (c.body != 0 && c.body2 != 0)) {  // not with an obstacle
      last_obstacle = -1;
      continue;
    }
    const bool obstacle_is_b = c.body2 == 0;
    const int obstacle = obstacle_is_b ? c.geometry2 : c.geometry;
    const GeometryBounds& fixed = obstacle_is_b ? c.bounds2 : c.bounds;
    const GeometryBounds& moving = obstacle_is_b ? c.bounds : c.bounds2;
    // Up the chain while the joints rotate about their origins: each adds its offset.
    int root = obstacle_is_b ? c.body : c.body2;
    double radius = std::sqrt(dot(moving.centre, moving.centre)) + moving.radius;
    for (;;) {
      const Body& b = model.bodies[static_cast<size_t>(root)];
      if (root == 0 || !(b.joint_type == JointType::Revolute || b.joint_type == JointType::Continuous || b.joint_type == JointType::Spherical))
        break;
      radius += std::sqrt(dot(b.joint_placement.translation, b.joint_placement.translation));
      root = b.parent;
    }
    radius += 1e-3;
    const double margin = cm.margin(static_cast<int>(k));
    if (obstacle == last_obstacle && groups.back().root == root) {
      ReachGroup& g = groups.back();
      g.end = static_cast<int>(k) + 1, g.radius = std::max(g.radius, radius), g.margin = std::max(g.margin, margin);
      continue;
    }
    groups.push_back({static_cast<int>(k), static_cast<int>(k) + 1, root, radius, margin, fixed.box, fixed.half});
    last_obstacle = obstacle;
  }
  return groups;
}

ContactPlan plan_contacts(const Model& model) {
  ContactPlan plan;
  plan.limited_joints = limited_joints(model, &plan.limits_left_out);
  // The contact bodies: every moving body a candidate acts on (a pair's two sides), and every
  // moving body a loop constraint acts on.
  for (const ContactCandidate& c : model.contacts.candidates)
    for (int body : {c.body, c.body2})
      if (body > 0) plan.bodies.push_back(body);
  for (const Constraint& k : model.constraints)
    for (int body : {k.body1, k.body2})
      if (body > 0) plan.bodies.push_back(body);
  std::sort(plan.bodies.begin(), plan.bodies.end());
  plan.bodies.erase(std::unique(plan.bodies.begin(), plan.bodies.end()), plan.bodies.end());
  const auto slot_of = [&](int body) {
    return body > 0 ? static_cast<int>(std::lower_bound(plan.bodies.begin(), plan.bodies.end(), body) - plan.bodies.begin()) : -1;
  };
  for (const ContactCandidate& c : model.contacts.candidates) {
    plan.candidate_slot.push_back(slot_of(c.body));
    plan.candidate_slot2.push_back(slot_of(c.body2));
    double reach = 0.0;
    if (c.against_ground() && c.slot >= 0) {  // a point chosen on the geometry per step
      const GeometryBounds& b = model.contacts.geometries[static_cast<size_t>(c.geometry)].bounds;
      reach = std::sqrt(dot(b.centre, b.centre)) + b.radius;
    } else if (c.against_ground()) {
      reach = std::sqrt(dot(c.point, c.point)) + c.radius;
    }
    plan.ground_reach.push_back(reach);
  }
  for (const Constraint& k : model.constraints) {
    plan.loop_slot.push_back(slot_of(k.body1));
    plan.loop_slot2.push_back(slot_of(k.body2));
  }
  plan.loop_row_kept.assign(static_cast<size_t>(model.constraint_rows), 1);

  // A 3-row terminal for a body that one ground candidate acts on and nothing else (no other
  // candidate, no loop constraint).
  std::vector<int> count(plan.bodies.size(), 0);
  plan.own_candidate.assign(plan.bodies.size(), -1);
  for (size_t c = 0; c < plan.candidate_slot.size(); ++c)
    for (int slot : {plan.candidate_slot[c], plan.candidate_slot2[c]}) {
      if (slot < 0) continue;
      const bool own = ++count[static_cast<size_t>(slot)] == 1 && model.contacts.candidates[c].against_ground();
      plan.own_candidate[static_cast<size_t>(slot)] = own ? static_cast<int>(c) : -1;
    }
  for (size_t j = 0; j < plan.loop_slot.size(); ++j)
    for (int slot : {plan.loop_slot[j], plan.loop_slot2[j]})
      if (slot >= 0) plan.own_candidate[static_cast<size_t>(slot)] = -1;

  // The Delassus plan of the same tree with a constraint to the world on each contact body: a
  // connect (3 rows) on a body with one candidate, a weld (6 rows) on the others. Its terminals
  // are the contact bodies in ascending body order (plan_delassus sorts terminals by body).
  // Only the graph and the row layout are read from these constraints; the contact kernel
  // writes the terminals' columns.
  Model anchored = model;
  anchored.constraints.clear();
  plan.row_begin.assign(1, 0);
  for (size_t k = 0; k < plan.bodies.size(); ++k) {
    Constraint anchor;
    anchor.name = "contact body " + std::to_string(plan.bodies[k]);
    anchor.type = plan.own_candidate[k] >= 0 ? ConstraintType::Connect : ConstraintType::Weld;
    anchor.body1 = plan.bodies[k];
    anchor.body2 = 0;
    anchor.dim = constraint_dimension(anchor.type);
    anchor.row = plan.row_begin.back();
    plan.row_begin.push_back(anchor.row + anchor.dim);
    anchored.constraints.push_back(anchor);
  }
  anchored.constraint_rows = plan.row_begin.back();
  plan.delassus = plan_delassus(anchored);
  plan.reach_groups = plan_reach_groups(model);
  return plan;
}

}  // namespace batchdyn
