// The contact step's second stage, the rows (kernels/contact/frictional_contact.hpp): for the
// block's listed contacts, the two tangent rows beside the normal one (their force columns and
// J v_free), the loop constraints' rows, the groups of rows by the bodies they act on, and every
// row's target term g (the problem's velocity offset: G lambda + g is the rows' velocity after
// the step) and, for a compliant contact, its compliance.
#pragma once

#include <algorithm>

#include "kernels/contact/contact_detection.hpp"

namespace batchdyn {

// Tangents (a shared basis per block on a plane, where every ground candidate has the plane's
// normal) and the tangent rows' columns and J v_free of the listed contacts.
template <class S>
void contact_tangent_rows(const Model& model, const GroundLanes<S>& ground, int contacts, FrictionalContactWorkspace<S>& ws) {
  const bool plane = !ground.has_terrain();
  Vec3<S> plane_t1, plane_t2;
  if (plane) perpendicular_basis(ground.normal, plane_t1, plane_t2);
  for (int b = 0; b < contacts; ++b) {
    const int k = ws.contact_list[static_cast<size_t>(b)];
    const ContactCandidate& cand = model.contacts.candidates[static_cast<size_t>(k)];
    Vec3<S>& t1 = ws.tangent1[static_cast<size_t>(k)];
    Vec3<S>& t2 = ws.tangent2[static_cast<size_t>(k)];
    if (cand.against_ground() && plane) t1 = plane_t1, t2 = plane_t2;
    else perpendicular_basis(ws.normal[static_cast<size_t>(k)], t1, t2);  // the tangents, as the reference's
    const Vec3<S>& point = ws.contact_point[static_cast<size_t>(k)];
    for (int r = 1; r < 3; ++r) {
      const Vec3<S>& direction = r == 1 ? t1 : t2;
      Force<S>& column = ws.columns[static_cast<size_t>(3 * k + r)];
      column = contact_column(ws.world_from_body[static_cast<size_t>(cand.body)], direction, point);
      S& velocity = ws.velocity[static_cast<size_t>(3 * k + r)];
      velocity = dot(column, ws.body_velocity[static_cast<size_t>(cand.body)]);
      if (!cand.against_ground()) {
        Force<S>& column2 = ws.columns2[static_cast<size_t>(3 * k + r)];
        column2 = contact_column(ws.world_from_body[static_cast<size_t>(cand.body2)], -direction, point);
        velocity += dot(column2, ws.body_velocity[static_cast<size_t>(cand.body2)]);
      }
    }
  }
}

// The row groups: each listed contact (3 rows, on its body and a pair's body2), then each loop
// constraint (its rows, on its body1 and body2), with the terminals they act on. Returns how many.
template <class S>
int contact_row_groups(const ModelConstants<S>& c, const ContactPlan& plan, const Model& model, const ContactRowCounts& rows,
                       int loop_constraints, FrictionalContactWorkspace<S>& ws) {
  int groups = 0;
  for (int b = 0; b < rows.contacts; ++b) {
    const int k = ws.contact_list[static_cast<size_t>(b)];
    ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(groups++)];
    const int slot = plan.candidate_slot[static_cast<size_t>(k)], slot2 = plan.candidate_slot2[static_cast<size_t>(k)];
    const ContactCandidate& cand = model.contacts.candidates[static_cast<size_t>(k)];
    group.row = 3 * b, group.dim = 3, group.sides = 0;
    if (slot >= 0)
      group.side[group.sides++] = {slot, cand.body, &ws.columns[static_cast<size_t>(3 * k)], plan.own_candidate[static_cast<size_t>(slot)] == k};
    if (slot2 >= 0) group.side[group.sides++] = {slot2, cand.body2, &ws.columns2[static_cast<size_t>(3 * k)], false};
  }
  for (int j = 0; j < loop_constraints; ++j) {
    const ConstraintConstants<S>& k = c.constraints[static_cast<size_t>(j)];
    ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(groups++)];
    const int slot = plan.loop_slot[static_cast<size_t>(j)], slot2 = plan.loop_slot2[static_cast<size_t>(j)];
    group.row = rows.loop_row() + k.row, group.dim = k.dim, group.sides = 0;
    if (slot >= 0) group.side[group.sides++] = {slot, k.body1, ws.loops[static_cast<size_t>(j)].columns[0], false};
    if (slot2 >= 0) group.side[group.sides++] = {slot2, k.body2, ws.loops[static_cast<size_t>(j)].columns[1], false};
  }
  return groups;
}

// The contact rows' targets: a rigid normal row's closing velocity, or a compliant one's
// spring-damper term and compliance (normal_row_terms); friction coefficients and masks.
template <class S>
void contact_targets(const Model& model, const ContactSettings& settings, const S* mu, const S& h, int contacts, FrictionalContactWorkspace<S>& ws) {
  for (int b = 0; b < contacts; ++b) {
    const int k = ws.contact_list[static_cast<size_t>(b)];
    const NormalRowTerms<S> normal =
        normal_row_terms(ws.gap[static_cast<size_t>(k)], h, settings, model.contacts.stiffness(k), model.contacts.damping(k));
    ws.soft.compliance[static_cast<size_t>(3 * b)] = normal.compliance;
    ws.soft.compliance[static_cast<size_t>(3 * b + 1)] = ws.soft.compliance[static_cast<size_t>(3 * b + 2)] = S(0);
    ws.problem.g[static_cast<size_t>(3 * b)] = ws.velocity[static_cast<size_t>(3 * k)] + normal.target;
    ws.problem.g[static_cast<size_t>(3 * b + 1)] = ws.velocity[static_cast<size_t>(3 * k + 1)];
    ws.problem.g[static_cast<size_t>(3 * b + 2)] = ws.velocity[static_cast<size_t>(3 * k + 2)];
    ws.problem.mu[static_cast<size_t>(b)] = mu[k];
    ws.problem.in_contact[static_cast<size_t>(b)] = ws.in_contact[static_cast<size_t>(k)];
  }
}

// The loop rows' targets (LoopRows::Solve), the loop stabilisation's gains (the constraint's kp,
// kd in `c`, batch/loop_stabilisation.hpp) over one step, as MuJoCo steps its reference
// acceleration: J_loop v+ = (1 - h kd) J_loop v - h kp e, J_loop v at the step's velocity v. A
// velocity-level row (kd = 1/h: step()'s default with semi-implicit Euler) is J_loop v+ = -h kp
// e' = -e' / T, e' the error above its rounding floor, as the loop solver's rows. In every
// occupied lane's problem when the plan keeps the row (an independent subset: a dependent row's
// target is inconsistent).
template <class S>
void loop_targets(const ModelConstants<S>& c, const ContactPlan& plan, const ContactRowCounts& rows, const TreeFactor<S>& M, const S* v,
                  const S& h, const S& occupied, FrictionalContactWorkspace<S>& ws) {
  const int n = static_cast<int>(c.tree.size());
  bool need_velocity_at_v = false;  // an acceleration-level row needs J_loop v: the bodies' velocities at v
  for (const ConstraintConstants<S>& k : c.constraints) need_velocity_at_v |= !k.velocity_level;
  if (need_velocity_at_v) {
    ws.body_velocity_at_v[0] = Motion<S>::zero();
    for (int i = 1; i < n; ++i) {
      Motion<S> joint_velocity;
      ws.body_velocity_at_v[static_cast<size_t>(i)] =
          body_velocity(c, i, M.parent_from_body[i], ws.body_velocity_at_v[static_cast<size_t>(c.tree[i].parent)], v, joint_velocity);
    }
  }
  for (size_t j = 0; j < c.constraints.size(); ++j) {
    const ConstraintConstants<S>& k = c.constraints[j];
    const LoopConstraintTerms<S>& terms = ws.loops[j];
    for (int r = 0; r < k.dim; ++r) {
      S target = -h * k.kp * velocity_level_position_error(terms.position_error[r]);
      if (!k.velocity_level) {
        S start = dot(terms.columns[0][r], ws.body_velocity_at_v[static_cast<size_t>(k.body1)]);  // J_loop v
        if (k.body2 != 0) start += dot(terms.columns[1][r], ws.body_velocity_at_v[static_cast<size_t>(k.body2)]);
        target = (S(1) - h * k.kd) * start - h * k.kp * terms.position_error[r];
      }
      ws.problem.g[static_cast<size_t>(rows.loop_row() + k.row + r)] = terms.velocity_error[r] - target;
      ws.problem.in_contact[static_cast<size_t>(rows.contacts + rows.limits + k.row + r)] =
          plan.loop_row_kept[static_cast<size_t>(k.row + r)] ? occupied : S(0);
    }
  }
}

// The limit rows' targets: +-qdot of the joint (its row's sign) plus the closing velocity of its
// distance to the limit, and their masks; PV-soft's view of them.
template <class S>
void limit_targets(const ContactPlan& plan, const ContactSettings& settings, const ContactRowCounts& rows, const S& h,
                   FrictionalContactWorkspace<S>& ws) {
  for (int r = 0; r < rows.limits; ++r) {
    const int jr = ws.limit_list[static_cast<size_t>(r)];
    const LimitedJoint& joint = plan.limited_joints[static_cast<size_t>(jr)];
    const S sign = ws.limit_sign[static_cast<size_t>(jr)];
    const int row = rows.limit_row() + r;
    ws.problem.g[static_cast<size_t>(row)] =
        sign * ws.v_free[static_cast<size_t>(joint.dof)] + closing_velocity(ws.limit_distance[static_cast<size_t>(jr)], h, settings);
    ws.problem.in_contact[static_cast<size_t>(rows.contacts + r)] = ws.limit_active[static_cast<size_t>(jr)];
    ws.soft.rows[static_cast<size_t>(row)] = PvSoftRow<S>{joint.body, nullptr, joint.dof, sign};
    ws.soft.compliance[static_cast<size_t>(row)] = S(0);
  }
}

}  // namespace batchdyn
