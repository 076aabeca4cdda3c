// The contact step's first stage, detection (kernels/contact/frictional_contact.hpp): which rows
// can act in this step, per lane. Joint limits from q; the free velocity and the bodies'
// placements and velocities; then each candidate's gap to the ground (the plane or the terrain
// under it, kernels/contact/terrain.hpp) or to its pair's other geometry
// (kernels/contact/pair_contact.hpp), its normal, contact point and normal velocity, and its mask.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/contact/contact_settings.hpp"
#include "kernels/contact/contact_workspace.hpp"
#include "kernels/contact/pair_contact.hpp"
#include "kernels/contact/cylinder_contact.hpp"
#include "kernels/contact/terrain.hpp"
#include "kernels/delassus/delassus_operations.hpp"
#include "kernels/tree/aba.hpp"

namespace batchdyn {

// Each limited joint: the distance to its nearer limit, the row's sign (+qdot at the lower
// limit, -qdot at the upper) and its mask, within limit_margin in a lane that holds an
// environment (`occupied`); the joints near a limit in any lane go to ws.limit_list. From q
// alone. `limit_near` gets 1 in the lanes with a limit near. Returns how many are listed.
template <class S>
int detect_limits(const ContactPlan& plan, const ContactSettings& settings, const S& occupied, const S* q, FrictionalContactWorkspace<S>& ws,
                  S& limit_near) {
  const int limited = settings.joint_limits ? plan.num_limited_joints() : 0;
  const S limit_margin(static_cast<lane_scalar<S>>(settings.limit_margin));
  int listed = 0;
  limit_near = S(0);
  for (int j = 0; j < plan.num_limited_joints(); ++j) {
    const LimitedJoint& joint = plan.limited_joints[static_cast<size_t>(j)];
    const S position = q[joint.coordinate];
    const S to_lower = position - S(static_cast<lane_scalar<S>>(joint.lower));  // +inf when unlimited
    const S to_upper = S(static_cast<lane_scalar<S>>(joint.upper)) - position;
    const auto lower_side = to_lower <= to_upper;
    ws.limit_distance[static_cast<size_t>(j)] = select(lower_side, to_lower, to_upper);
    ws.limit_sign[static_cast<size_t>(j)] = select(lower_side, S(1), S(-1));
    const auto near = (ws.limit_distance[static_cast<size_t>(j)] < limit_margin) && (S(j < limited ? 1 : 0) != S(0)) && (occupied != S(0));
    ws.limit_active[static_cast<size_t>(j)] = select(near, S(1), S(0));
    ws.limit_impulses[static_cast<size_t>(j)] = select(near, ws.limit_impulses[static_cast<size_t>(j)], S(0));
    limit_near = select(near, S(1), limit_near);
    if (any_lane(near)) ws.limit_list[static_cast<size_t>(listed++)] = j;
  }
  return listed;
}

// v_free = v + h qdd_free; with rows on bodies (`on_bodies`: contacts or loops), every body's
// world placement and its velocity at v_free (body frame), from M's factorisation's placements.
template <class S>
void contact_body_motions(const ModelConstants<S>& c, const TreeFactor<S>& M, bool on_bodies, const S* v, const S* qdd, const S& h,
                          FrictionalContactWorkspace<S>& ws) {
  const int n = static_cast<int>(c.tree.size());
  for (size_t k = 0; k < ws.v_free.size(); ++k) ws.v_free[k] = v[k] + h * qdd[k];
  if (!on_bodies) return;
  ws.world_from_body[0] = Transform<S>::identity();
  ws.body_velocity[0] = Motion<S>::zero();
  for (int i = 1; i < n; ++i) {
    const Transform<S>& X = M.parent_from_body[i];
    ws.world_from_body[static_cast<size_t>(i)] = ws.world_from_body[static_cast<size_t>(c.tree[i].parent)] * X;
    Motion<S> joint_velocity;
    ws.body_velocity[static_cast<size_t>(i)] =
        body_velocity(c, i, X, ws.body_velocity[static_cast<size_t>(c.tree[i].parent)], ws.v_free.data(), joint_velocity);
  }
}

// A force column of direction d (world) at world point p on a body placed at X, in its frame: the
// row's J_c as a force on the body (formed in place, as Transform::act).
template <class S>
Force<S> contact_column(const Transform<S>& X, const Vec3<S>& d, const Vec3<S>& p) {
  Force<S> f;
  f.linear = X.rotation.transpose_times(d);
  f.angular = cross(X.rotation.transpose_times(p - X.translation), f.linear);
  return f;
}

// A bound on how fast a point of a body, at most `reach` from its origin, approaches anything
// along a unit normal: |n . (v + w x r)| <= |v| + |w| |r| <= |v|_1 + |w|_1 |r|, with V the body's
// velocity (body frame). With 1 cm more reach and 1 % more in all, so that it bounds the
// approach velocity as its own arithmetic rounds it (contact_column, a dot product: relative
// errors of a few ulps; the point's offset from the body's origin is a difference of world
// coordinates, whose rounding stays below 1 cm in float up to 100 km out).
template <class S>
S approach_speed_bound(const Motion<S>& V, double reach) {
  using std::abs;
  using T = lane_scalar<S>;
  const S linear = abs(V.linear.x) + abs(V.linear.y) + abs(V.linear.z);
  const S angular = abs(V.angular.x) + abs(V.angular.y) + abs(V.angular.z);
  return (linear + angular * S(static_cast<T>(reach + 0.01))) * S(T(1.01));
}

// The first `candidates` candidates (ground candidates only when ground.present): each one's gap,
// normal, contact point (its lowest point against the ground), its normal row's force column (on
// a pair's B too, opposite) and normal velocity J_n v_free, and its mask. Speculative contact: a
// candidate is in a lane's problem when its gap is below its margin plus what the free motion
// closes within the step, gap < margin + h max(-J_n v_free, 0), so that a fast approach is
// caught before it passes through the surface (the normal row's target then lets it close the
// gap exactly, kernels/contact/contact_settings.hpp); and only in a lane that holds an
// environment. A convex hull's and a cylinder's slots take their points here
// (kernels/contact/hull_contact.hpp, kernels/contact/cylinder_contact.hpp).
// The candidates in contact in any lane go to ws.contact_list; returns how many. What cannot be
// in contact in any lane is passed over with what its tests would have given it, bit for bit (no
// contact, zero force and impulse):
//   - a reach group (plan.reach_groups) whose bound is beyond reach in every lane: its
//     candidates read an infinite gap (their normal and point, read only in contact, are not
//     formed);
//   - a ground candidate whose gap, in every lane, is at least the margin plus what a step of h
//     closes at the bound on its point's speed (approach_speed_bound, plan.ground_reach): its
//     force column and approach velocity are not formed (a trunk's corners well above the floor).
template <class S>
int detect_contacts(const Model& model, const ContactPlan& plan, int candidates, const GroundLanes<S>& ground, const S& occupied, const S& h,
                    FrictionalContactWorkspace<S>& ws) {
  using std::max;
  const std::vector<ContactCandidate>& list = model.contacts.candidates;
  int listed = 0;
  GroundSlots<S> slots;  // the slots of the hull or cylinder whose candidates the loop is at
  int reach_pair = -1;   // the pair whose candidates the loop is at, and where it is within reach
  auto near = S(0) != S(0);
  PairSlots<S> pair_slots;  // the slots of the Convex pair whose candidates the loop is at
  size_t group = 0;         // the next reach group
  const auto out_of_contact = [&](int k) {  // written unless known to be held already (ws.known)
    char& known = ws.known[static_cast<size_t>(k)];
    if (known & kKnownZeroResults) return;
    ws.in_contact[static_cast<size_t>(k)] = S(0);
    for (int r = 0; r < 3; ++r) ws.world_force[static_cast<size_t>(3 * k + r)] = ws.impulses[static_cast<size_t>(3 * k + r)] = S(0);
    known |= kKnownZeroResults;
  };
  for (int k = 0; k < candidates; ++k) {
    if (group < plan.reach_groups.size() && plan.reach_groups[group].first == k) {
      const ReachGroup& g = plan.reach_groups[group++];
      if (!any_lane(group_within_reach(g, ws.world_from_body[static_cast<size_t>(g.root)]))) {
        for (; k < std::min(g.end, candidates); ++k) {  // no normal or point: never read without contact
          char& known = ws.known[static_cast<size_t>(k)];
          if (!(known & kKnownInfiniteGap)) ws.gap[static_cast<size_t>(k)] = S(std::numeric_limits<lane_scalar<S>>::infinity());
          known |= kKnownInfiniteGap;
          out_of_contact(k);
        }
        reach_pair = -1;
        --k;  // the loop's ++k: the candidate after the group
        continue;
      }
    }
    const ContactCandidate& cand = list[static_cast<size_t>(k)];
    const Transform<S>& X = ws.world_from_body[static_cast<size_t>(cand.body)];
    S gap;
    Vec3<S>& normal = ws.normal[static_cast<size_t>(k)];
    Vec3<S>& point = ws.contact_point[static_cast<size_t>(k)];
    const S margin(static_cast<lane_scalar<S>>(model.contacts.margin(k)));
    if (cand.kind == CandidateKind::Convex) {
      const Transform<S>& X2 = ws.world_from_body[static_cast<size_t>(cand.body2)];
      if (cand.pair != reach_pair) reach_pair = cand.pair, near = pair_within_reach(cand, X, X2, margin);
      if (cand.slot == 0) pair_slots = convex_pair_slots(near, cand, X, X2, margin, convex_slots(list, k));
      gap = pair_slots.gap[cand.slot], normal = pair_slots.normal[cand.slot], point = pair_slots.point[cand.slot];
    } else if (cand.slot >= 0) {
      if (cand.slot == 0) slots = ground_slots(model.contacts.geometries[static_cast<size_t>(cand.geometry)], X, ground, margin, ws.hull);
      gap = slots.gap[cand.slot], normal = slots.normal[cand.slot], point = slots.point[cand.slot];
      if (!ground.present) gap = S(std::numeric_limits<lane_scalar<S>>::infinity());
    } else if (cand.against_ground()) {
      const S radius(static_cast<lane_scalar<S>>(cand.radius));
      const Vec3<S> centre = X.act_point(cast3<S>(cand.point));
      ground_under(ground, centre, radius, gap, normal);
      point = centre - normal * radius;
      if (!ground.present) gap = S(std::numeric_limits<lane_scalar<S>>::infinity());
    } else {
      const Transform<S>& X2 = ws.world_from_body[static_cast<size_t>(cand.body2)];
      if (cand.pair != reach_pair) reach_pair = cand.pair, near = pair_within_reach(cand, X, X2, margin);
      pair_contact_within_reach(near, cand, X, X2, gap, normal, point);
    }
    ws.gap[static_cast<size_t>(k)] = gap;
    ws.known[static_cast<size_t>(k)] &= ~kKnownInfiniteGap;
    if (!cand.against_ground() && !any_lane(near)) {  // beyond reach in every lane: not in contact, no column needed
      out_of_contact(k);
      continue;
    }
    if (cand.against_ground()) {  // too far to touch within the step in every lane (NaN: not passed over)
      const S closing = h * approach_speed_bound(ws.body_velocity[static_cast<size_t>(cand.body)], plan.ground_reach[static_cast<size_t>(k)]);
      if (!any_lane(!(gap >= margin + closing))) {
        out_of_contact(k);
        continue;
      }
    }
    Force<S>& column = ws.columns[static_cast<size_t>(3 * k)];
    column = contact_column(X, normal, point);
    S& approach_velocity = ws.velocity[static_cast<size_t>(3 * k)];
    approach_velocity = dot(column, ws.body_velocity[static_cast<size_t>(cand.body)]);
    if (!cand.against_ground()) {  // the opposite row on the other body: J_c = J_a - J_b
      const Transform<S>& X2 = ws.world_from_body[static_cast<size_t>(cand.body2)];
      Force<S>& column2 = ws.columns2[static_cast<size_t>(3 * k)];
      column2 = contact_column(X2, -normal, point);
      approach_velocity += dot(column2, ws.body_velocity[static_cast<size_t>(cand.body2)]);
    }
    const auto touching = (gap < margin + h * max(-approach_velocity, S(0))) && (occupied != S(0));
    ws.in_contact[static_cast<size_t>(k)] = select(touching, S(1), S(0));
    for (int r = 0; r < 3; ++r) {
      ws.world_force[static_cast<size_t>(3 * k + r)] = S(0);  // apply sets those in contact
      // No impulse where nothing touches: the warm start.
      ws.impulses[static_cast<size_t>(3 * k + r)] = select(touching, ws.impulses[static_cast<size_t>(3 * k + r)], S(0));
    }
    const bool listed_here = any_lane(touching);
    ws.known[static_cast<size_t>(k)] = listed_here ? 0 : kKnownZeroResults;  // apply writes the listed ones' impulses and forces
    if (listed_here) ws.contact_list[static_cast<size_t>(listed++)] = k;
  }
  // Nor beyond the candidates in the problem.
  std::fill(ws.impulses.begin() + 3L * candidates, ws.impulses.end(), S(0));
  return listed;
}

}  // namespace batchdyn
