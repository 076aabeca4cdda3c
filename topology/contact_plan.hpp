// The contact plan: what the batched contact stage (batch/contact_solving.hpp) needs that
// depends only on the model's contact candidates (topology/contact_model.hpp), computed once.
//
// The Delassus matrix of the candidates is built from one 6 x 6 block per pair of *contact
// bodies* (bodies carrying at least one candidate): PV-OSIMr (kernels/pv_osimr.hpp) over a
// 6-row terminal on each contact body, the spatial force basis at the body's origin in its own
// frame, gives G6 = J6 M^-1 J6^T (6B x 6B). A candidate's three rows (normal, two tangents at
// its lowest point, world directions) are fixed combinations of its body's six, T_c (3 x 6), so
//     G_ab = T_a G6[body(a), body(b)] T_b^T
// for any pair of candidates. The plan depends only on which bodies carry candidates, so the
// set of candidates in contact may change every step without touching it, and the problem
// size is 3 x (candidates in contact), assembled from G6.
#pragma once

#include <vector>

#include "topology/delassus_plan.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// A 1-dof joint with a finite position limit (URDF / SDF): a unilateral row of the contact
// problem when the joint is within the margin of a limit (one row per joint: the nearer side).
struct LimitedJoint {
  int body = 0;       // the body the joint moves
  int dof = 0;        // its index in v
  int coordinate = 0; // its index in q
  double lower = 0.0, upper = 0.0;  // -inf / +inf where unlimited
};

struct ContactPlan {
  std::vector<LimitedJoint> limited_joints;  // in body order
  std::vector<int> bodies;          // the contact bodies, ascending
  std::vector<int> candidate_slot;  // per candidate: its body's index in `bodies` (rows 6 slot .. 6 slot + 5 of G6)
  DelassusPlan delassus;            // PV-OSIMr over one 6-row terminal per contact body (terminal k: rows 6k..6k+5)

  int num_candidates() const { return static_cast<int>(candidate_slot.size()); }
  int num_limited_joints() const { return static_cast<int>(limited_joints.size()); }
  int num_bodies() const { return static_cast<int>(bodies.size()); }
  int body_rows() const { return 6 * num_bodies(); }  // rows of G6
};

// Builds the plan of model.contacts.candidates and of the 1-dof joints with position limits
// (revolute and prismatic; continuous joints have none). O(n + B^2 d) once (plan_delassus).
ContactPlan plan_contacts(const Model& model);

}  // namespace batchdyn
