// The contact plan: what the batched contact stage (batch/contact_solving.hpp) needs that
// depends only on the model's contact candidates (topology/contact_model.hpp), computed once.
//
// The Delassus matrix of the candidates is built from one block per pair of *contact bodies*
// (the moving bodies a candidate acts on: its own, and for a pair's candidate the other
// geometry's body too, which gets the opposite force): PV-OSIMr (kernels/delassus/pv_osimr.hpp) over one terminal
// per contact body gives G_T = K M^-1 K^T over the terminals' rows. A body with several
// candidates (a box's corners) gets a 6-row terminal, the spatial force basis at its origin in
// its own frame; a candidate's three rows (normal, two tangents at its lowest point, world
// directions) are fixed combinations of those six, T_c (3 x 6). A body with one candidate (a
// sphere foot) gets a 3-row terminal whose columns are that candidate's rows themselves
// (T_c = I): half the rows, and PV-OSIMr's cost grows with their square. For any pair,
//     G_ab = T_a G_T[body(a), body(b)] T_b^T.
// A pair's candidate acts on two bodies: its rows are T_a on body a minus T_b on body b, and
// G_ab sums the four (or fewer) such terminal blocks.
// The model's loop constraints join the same problem as bilateral rows (contacts on a robot
// with kinematic loops, e.g. Cassie): each moving body a loop constraint acts on is a contact
// body too (6 rows), and a constraint's rows are its terminal rows
// (kernels/tree/constraint_rows.hpp) on body1 minus those on body2, exactly like a pair's.
// The plan depends only on which bodies carry candidates or loop constraints, so the set of
// candidates in contact may change every step without touching it, and the problem size is
// 3 x (candidates in contact) + joint limits at a limit + loop rows, assembled from G_T.
#pragma once

#include <string>
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

// The 1-dof joints whose position limits are rows of the contact problem: revolute and
// prismatic joints (continuous joints have none) with a finite limit, in body order. On a model
// with loop constraints, a joint that the model's reference configuration
// (Model::reference_configuration, else neutral: coordinate 0) places beyond a limit is left
// out, and its name goes to `left_out`: the loops hold the robot at that configuration, and the
// limit need not be reachable from it. Cassie's neutral pose has both feet and both tarsus cranks
// 0.61 rad beyond their upper limits at a singular configuration of its plantar-rod loops, where
// the limit and loop rows cannot all hold. Without loops a limit is never left out (a state
// beyond it is pushed back). O(n).
std::vector<LimitedJoint> limited_joints(const Model& model, std::vector<std::string>* left_out = nullptr);

// A run of pair candidates between one geometry on the world (an obstacle) and geometries on
// moving bodies under one root body, each joint between them rotating about its fixed origin
// (revolute, continuous, spherical): whatever the joint angles, a sphere about the root's
// origin bounds all of those geometries, its radius the sum of the joint offsets along the
// chain plus the geometry's bounding sphere's reach from its body's origin. While that sphere is
// beyond the largest margin plus kPairReach of the obstacle's bounding box in every lane of a
// block, so is each of the run's pairs (pair_within_reach), and the contact detection skips the
// run with one test: Go2 among 8 stair boxes makes 8 tests where its 184 pairs made 184.
struct ReachGroup {
  int first = 0, end = 0;  // candidates first .. end - 1
  int root = 0;            // the root body (0: the world, for a fixed base)
  double radius = 0.0;     // m, about the root's origin (1 mm added against rounding)
  double margin = 0.0;     // the largest margin of the run's pairs
  Transformd box = Transformd::identity();  // the obstacle's bounding box, world frame
  Vec3d half = Vec3d::zero();
};

struct ContactPlan {
  std::vector<LimitedJoint> limited_joints;  // limited_joints(model), in body order
  std::vector<std::string> limits_left_out;  // the joints limited_joints() left out (loop models)
  std::vector<int> bodies;          // the contact bodies, ascending
  std::vector<int> candidate_slot;  // per candidate: its body's index in `bodies` (its terminal); -1 on the world
  std::vector<int> candidate_slot2; // per candidate: its pair's body2's index in `bodies`; -1 (ground, world)
  std::vector<int> loop_slot, loop_slot2;  // per loop constraint: its body1's / body2's index in `bodies`; -1 on the world
  // Per loop-constraint row: 1 when the row is in the problem. All rows here; a solver that
  // needs independent rows sets an independent subset (kernels/loops/independent_loop_rows.hpp).
  std::vector<char> loop_row_kept;
  // Per contact body (terminal k = slot k): its rows in G_T, row_begin[k] .. row_begin[k + 1] - 1,
  // and the candidate whose rows the terminal is (a 3-row terminal), or -1 (6 rows: the body's
  // force basis).
  std::vector<int> row_begin;       // size bodies + 1
  std::vector<int> own_candidate;
  DelassusPlan delassus;            // PV-OSIMr over one terminal per contact body, in slot order
  std::vector<ReachGroup> reach_groups;  // in candidate order, disjoint (pairs with an obstacle only)
  // Per candidate against the ground: how far from its body's origin its contact point can be
  // (its sphere's or its geometry's bounding sphere's farthest point), m; 0 for a pair's. It
  // bounds the point's approach speed (detect_contacts passes over a candidate farther from the
  // ground than the step can close).
  std::vector<double> ground_reach;

  int num_candidates() const { return static_cast<int>(candidate_slot.size()); }
  int num_limited_joints() const { return static_cast<int>(limited_joints.size()); }
  int num_bodies() const { return static_cast<int>(bodies.size()); }
  int terminal_rows() const { return row_begin.empty() ? 0 : row_begin.back(); }  // rows of G_T
  int rows_of(int slot) const { return row_begin[static_cast<size_t>(slot + 1)] - row_begin[static_cast<size_t>(slot)]; }
};

// The reach groups of model.contacts.candidates (ReachGroup). O(candidates x depth).
std::vector<ReachGroup> plan_reach_groups(const Model& model);

// Builds the plan of model.contacts.candidates, of the model's loop constraints and of the 1-dof
// joints with position limits (revolute and prismatic; continuous joints have none).
// O(n + B^2 d) once (plan_delassus).
ContactPlan plan_contacts(const Model& model);

}  // namespace batchdyn
