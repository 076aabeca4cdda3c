// Frictional contact in one time step, on lanes: with the ground and between the geometries of
// contact pairs. The batched contact stage's kernel (batch/contact_solving.hpp), the lane
// counterpart of the dense reference kernels/contact_step.hpp. Velocity-level time stepping
// (arXiv 2405.17020, §III-IV):
//   1. v_free = v + h qdd_free                  (qdd_free: the accelerations stage's ABA)
//   2. every candidate's gap (to the ground: the plane or the terrain under it,
//      kernels/terrain.hpp; or to its pair's other geometry, kernels/pair_contact.hpp), its
//      three rows J_c (the normal there, two tangents, world directions, at the contact point)
//      as force columns on its body (and, for a pair, the opposite ones on the other body), and
//      J_c v_free (the relative velocity)
//   3. G_T over the contact bodies' terminals by PV-OSIMr (topology/contact_plan.hpp), then G
//      of the candidates in contact, G_ab = T_a G_T T_b^T, and g = J v_free + closing terms
//   4. the impulses by proximal ADMM (kernels/contact_admm.hpp), or by projected Gauss-Seidel
//      (kernels/contact_pgs.hpp, the baseline) when settings.solver says so. ADMM works on the
//      formed G, or (settings.admm_linear_solve = PvSoft) on the tree: its products with G and
//      its linear solves by force responses and PV-soft (kernels/admm_delassus.hpp), so that G
//      is never formed beyond its diagonal blocks (ground contacts and joint limits only)
//   5. v+ = v_free + M^-1 J^T lambda by one O(n) force response, returned as
//      qdd = qdd_free + M^-1 J^T lambda / h so that the integrate stage steps to v+.
// A candidate is in a lane's problem when its gap is below its margin (a mask); the block
// solves over the candidates in contact in any of its lanes (loop bounds, not per-lane
// branches), each lane with its own rows masked.
//
// A robot with kinematic loops (LoopRows::Solve): v_free is the tree's (ABA without the loops),
// and the loop constraints are bilateral rows of the same problem ("the loop rows enter the
// contact problem as bilateral rows", arXiv 2405.17020 §III-A treats bilateral and unilateral
// rows alike): their rows are the terminal rows of kernels/constraint_rows.hpp on each side, and
// their velocity target J_loop v+ = -(baumgarte / h) e removes that fraction of the position
// error e per step (kernels/loop_constraints.hpp). So a contact impulse moves the loops with
// the robot, and the loops hold at the velocity level.
//
// LoopRows::Hold (joint limits, no contacts): qdd comes in from the loop solver (LCABA, proxBBO),
// so v_free already keeps the loops as that solver stabilises them. The loop rows are bilateral
// rows with the target J_loop (v+ - v_free) = 0: the limits' impulses move the robot along its
// loops and leave the loops' own velocities as the loop solver left them. The loop rows are
// eliminated (kernels/held_loops.hpp), so the solver iterates on the limit rows alone; the loop
// impulses are increments of the loop solver's. A block with no limit within its margin returns
// before any sweep, and a lane with none gets exactly qdd back.
#pragma once

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "kernels/contact_admm.hpp"
#include "kernels/contact_pgs.hpp"
#include "kernels/delassus_operations.hpp"
#include "kernels/held_loops.hpp"
#include "kernels/loop_constraints.hpp"
#include "kernels/pair_contact.hpp"
#include "kernels/pv_osimr.hpp"
#include "kernels/terrain.hpp"
#include "topology/contact_plan.hpp"

namespace batchdyn {

// How the contact problem takes the model's loop constraints.
enum class LoopRows {
  None,   // not in the problem (no loops, or the loop constraints are off)
  Solve,  // bilateral rows with their Baumgarte target; qdd in is the tree's (ABA, without the loops)
  Hold,   // qdd in is the loop solver's: bilateral rows that keep its loop velocities (J_loop dv = 0)
};

// One side of a row group of the contact problem (a candidate's 3 rows, a loop constraint's
// dim rows): the terminal (slot) and body its rows act on, and its force columns there. `own`:
// a 3-row terminal whose columns are these rows (T = I).
template <class S>
struct ContactRowSide {
  int slot = 0, body = 0;
  const Force<S>* columns = nullptr;
  bool own = false;
};

// A block of rows of the problem: its first row, its rows and the (one or two) bodies they act on.
template <class S>
struct ContactRowGroup {
  int row = 0, dim = 0, sides = 0;
  ContactRowSide<S> side[2];
};

template <class S>
struct FrictionalContactWorkspace {
  FrictionalContactWorkspace(const Model& model, const ContactPlan& plan)
      : delassus(model, plan.delassus), world_from_body(static_cast<size_t>(model.num_bodies())),
        body_velocity(world_from_body.size()), v_free(static_cast<size_t>(model.nv)), response(v_free.size()), joint_torque(v_free.size()),
        GT(static_cast<size_t>(plan.terminal_rows() * plan.terminal_rows())), gap(static_cast<size_t>(plan.num_candidates())),
        in_contact(gap.size()), normal(gap.size()), tangent1(gap.size()), tangent2(gap.size()), columns(3 * gap.size()), columns2(columns.size()), velocity(3 * gap.size()), impulses(3 * gap.size()),
        limit_distance(static_cast<size_t>(plan.num_limited_joints())), limit_sign(limit_distance.size()),
        limit_active(limit_distance.size()), limit_impulses(limit_distance.size()),
        loops(model.constraints.size()), loop_impulses(static_cast<size_t>(model.constraint_rows)), loop_scale(loop_impulses.size()),
        list_impulses(3 * gap.size() + limit_distance.size() + loop_impulses.size()), contact_list(gap.size()),
        limit_list(limit_distance.size()), limit_chain_mark(static_cast<size_t>(model.num_bodies())), limit_chains(limit_chain_mark.size()),
        groups(gap.size() + loops.size()),
        problem(plan.num_candidates(), plan.num_limited_joints() + model.constraint_rows),
        soft(model, 3 * plan.num_candidates() + plan.num_limited_joints()) {}
  DelassusWorkspace<S> delassus;
  std::vector<Transform<S>> world_from_body;  // ^0M_i
  std::vector<Motion<S>> body_velocity;       // at v_free, body frames
  std::vector<S> v_free, response;            // nv: v + h qdd_free, M^-1 J^T lambda
  std::vector<S> joint_torque;                // nv: the limits' impulses as joint torques (step 5)
  std::vector<S> GT;                          // G_T over the terminals' rows, row-major
  // Per candidate
  std::vector<S> gap, in_contact;             // to the ground (kernels/terrain.hpp); 1 when gap < margin, else 0
  std::vector<Vec3<S>> normal;                // unit, world frame: the ground's under it, or its pair's (B to A)
  std::vector<Vec3<S>> tangent1, tangent2;    // world frame: perpendicular_basis(normal), the rows' t1 and t2
  std::vector<Force<S>> columns;              // 3 per candidate: its rows (n, t1, t2) as forces on its body, body frame
  std::vector<Force<S>> columns2;             // 3 per pair candidate: minus those on its pair's body2, body2 frame
  std::vector<S> velocity;                    // 3 per candidate: J_c v_free
  std::vector<S> impulses;                    // 3 per candidate (n, t1, t2), N s: warm start in, result out
  // Per limited joint (plan.limited_joints)
  std::vector<S> limit_distance, limit_sign;  // to the nearer limit (< 0: beyond it); +1 lower, -1 upper
  std::vector<S> limit_active, limit_impulses;  // 1 when within the margin; N m s or N s (warm start in, result out)
  // Per loop constraint: its rows on both sides, J_loop v_free and its position error
  std::vector<LoopConstraintTerms<S>> loops;
  std::vector<S> loop_impulses;               // model.constraint_rows, N s (warm start in, result out)
  std::vector<S> loop_scale;                  // model.constraint_rows: the held loop rows' scales (kernels/held_loops.hpp)
  std::vector<S> list_impulses;               // 3 per candidate of contact_list, 1 per limit of limit_list, the loop rows
  std::vector<int> contact_list;              // the block's candidates in contact (in any lane)
  std::vector<int> limit_list;                // the block's joints within a limit's margin (in any lane)
  std::vector<int> limit_chain_mark;          // per body: 1 on a listed limit's chain (itself or an ancestor)
  std::vector<int> limit_chains;              // those bodies, ascending: all a limit-rows-only problem reads
  std::vector<ContactRowGroup<S>> groups;     // the block's contacts, then its loop constraints
  ContactSolverWorkspace<S> problem;          // the block's contact problem and its solver's variables
  PvSoftDelassusWorkspace<S> soft;            // ADMM on the tree (PV-soft): the problem's rows, compliance, factor
  size_t bytes() const {
    return delassus.bytes() + world_from_body.size() * sizeof(Transform<S>) + body_velocity.size() * sizeof(Motion<S>) +
           (columns.size() + columns2.size()) * sizeof(Force<S>) + (normal.size() + tangent1.size() + tangent2.size()) * sizeof(Vec3<S>) +
           (v_free.size() + response.size() + joint_torque.size() + GT.size() + gap.size() + in_contact.size() + velocity.size() + impulses.size() +
            limit_distance.size() + limit_sign.size() + limit_active.size() + limit_impulses.size() + loop_impulses.size() + loop_scale.size() +
            list_impulses.size()) * sizeof(S) +
           loops.size() * sizeof(LoopConstraintTerms<S>) + groups.size() * sizeof(ContactRowGroup<S>) +
           (contact_list.size() + limit_list.size() + limit_chain_mark.size() + limit_chains.size()) * sizeof(int) + problem.bytes() + soft.bytes();
  }
};

// One contact step's impulses for a lane block at (q, v) with the free accelerations qdd (in:
// ABA's; out: plus M^-1 J^T lambda / h), with these rows:
//   - the contacts of the first `candidates` candidates (0: contacts off; ground candidates
//     only when ground.present);
//   - when settings.joint_limits, the 1-dof joints' position limits, unilateral (as the dense
//     reference's);
//   - the model's loop constraints, bilateral, as `loops` says (LoopRows; with Solve qdd in is
//     the tree's, without them; with Hold it is the loop solver's, the loop impulses out are
//     increments of that solver's, and `candidates` must be 0: a stage that solves contacts
//     solves the loops with them).
// `mu` is per candidate (lanes); ws.impulses, ws.limit_impulses and ws.loop_impulses are the
// warm start. Returns the solver's report (iterations 0 and converged in a lane whose problem has
// no row: nothing in contact, no limit within its margin, no loop row to solve). `c` must be the
// constants the accelerations stage used (the implicitly damped ones in a damped step), so that
// M is the same. `factorised`: M's factorisation at this q and c when the caller has one (the
// accelerations stage's ABA, tree_factor_of(aba workspace)), else nullptr: the kernel then takes
// M and the placements from it instead of eliminating every joint again (PV-OSIMr carries its
// chains only).
// Preconditions: plan from this model; unit quaternions. O(n + B^2 + (l + 1) n + iterations m^2 + m^3/6) on the
// formed G; with PV-soft O(n + B^2 + (l + 1) n + (iterations + refactorisations) (n + m)).
template <class S>
ContactSolverReport<S> frictional_contact_kernel(const ModelConstants<S>& c, const ContactPlan& plan, const Model& model,
                                           const ContactSettings& settings, int candidates, LoopRows loops, const GroundLanes<S>& ground,
                                           const S* mu, FrictionalContactWorkspace<S>& ws, const S* q, const S* v, const S& h, S* qdd,
                                           const TreeFactor<S>* factorised = nullptr) {
  const int n = static_cast<int>(c.tree.size());
  const int nv = model.nv;
  const int limited = settings.joint_limits ? plan.num_limited_joints() : 0;
  const int loop_rows = loops != LoopRows::None ? model.constraint_rows : 0;
  const int loop_constraints = loops != LoopRows::None ? static_cast<int>(c.constraints.size()) : 0;
  const std::vector<ContactCandidate>& list = model.contacts.candidates;
  ContactSolverReport<S> report{S(0), S(0), S(1)};

  // Each limited joint: the distance to its nearer limit, the row's sign (+qdot at the lower
  // limit, -qdot at the upper), and its mask (within limit_margin). From q alone, first: held
  // loops with no contact and no limit near in any lane need nothing else.
  int limits_in_block = 0;
  const S limit_margin(static_cast<lane_scalar<S>>(settings.limit_margin));
  S limit_near(0);  // 1 in a lane with a limit within its margin
  for (int j = 0; j < plan.num_limited_joints(); ++j) {
    const LimitedJoint& joint = plan.limited_joints[static_cast<size_t>(j)];
    const S position = q[joint.coordinate];
    const S to_lower = position - S(static_cast<lane_scalar<S>>(joint.lower));  // +inf when unlimited
    const S to_upper = S(static_cast<lane_scalar<S>>(joint.upper)) - position;
    const auto lower_side = to_lower <= to_upper;
    ws.limit_distance[static_cast<size_t>(j)] = select(lower_side, to_lower, to_upper);
    ws.limit_sign[static_cast<size_t>(j)] = select(lower_side, S(1), S(-1));
    const auto near = (ws.limit_distance[static_cast<size_t>(j)] < limit_margin) && (S(j < limited ? 1 : 0) != S(0));
    ws.limit_active[static_cast<size_t>(j)] = select(near, S(1), S(0));
    ws.limit_impulses[static_cast<size_t>(j)] = select(near, ws.limit_impulses[static_cast<size_t>(j)], S(0));
    limit_near = select(near, S(1), limit_near);
    if (any_lane(near)) ws.limit_list[static_cast<size_t>(limits_in_block++)] = j;
  }
  if (loops == LoopRows::Hold && candidates == 0 && limits_in_block == 0) return report;

  // M's factorisation at q: the caller's (ABA's, with its placements) when given, else this
  // kernel's own (PV-OSIMr's backward sweep, or the joints eliminated for limit rows alone).
  const TreeFactor<S> M = factorised ? *factorised : tree_factor_of(ws.delassus);

  // 1. The free velocity; for rows on bodies (contacts, loops), the placements (world too) and
  // the bodies' velocities at v_free. Joint-limit rows alone live in joint space.
  for (int k = 0; k < nv; ++k) ws.v_free[static_cast<size_t>(k)] = v[k] + h * qdd[k];
  const bool rows_on_bodies = candidates > 0 || loop_constraints > 0;
  if (rows_on_bodies && !factorised) delassus_tree_sweep(c, plan.delassus, ws.delassus, q);
  if (rows_on_bodies) {
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

  // 2. Each candidate: gap, mask, rows as forces at its contact point (its lowest point against
  // the ground), and J_c v_free. Without a ground, its candidates are never in contact.
  // On a plane every ground candidate has the plane's normal, so they share its tangents: one
  // basis per block (a square root and a division per candidate otherwise).
  const bool plane = !ground.has_terrain();
  Vec3<S> plane_t1, plane_t2;
  if (plane) perpendicular_basis(ground.normal, plane_t1, plane_t2);
  int in_block = 0;
  for (int k = 0; k < candidates; ++k) {
    const ContactCandidate& cand = list[static_cast<size_t>(k)];
    const Transform<S>& X = ws.world_from_body[static_cast<size_t>(cand.body)];
    const S margin(static_cast<lane_scalar<S>>(model.contacts.margin(k)));
    S gap;
    Vec3<S>& normal = ws.normal[static_cast<size_t>(k)];
    Vec3<S> contact_point;  // world frame
    if (cand.against_ground()) {
      const S radius(static_cast<lane_scalar<S>>(cand.radius));
      const Vec3<S> centre = X.act_point(cast3<S>(cand.point));
      ground_under(ground, centre, radius, gap, normal);
      contact_point = centre - normal * radius;
      if (!ground.present) gap = S(std::numeric_limits<lane_scalar<S>>::infinity());
    } else {
      pair_contact(cand, X, ws.world_from_body[static_cast<size_t>(cand.body2)], gap, normal, contact_point);
    }
    Vec3<S>& t1 = ws.tangent1[static_cast<size_t>(k)];
    Vec3<S>& t2 = ws.tangent2[static_cast<size_t>(k)];
    if (cand.against_ground() && plane) t1 = plane_t1, t2 = plane_t2;
    else perpendicular_basis(normal, t1, t2);  // the tangents, as the reference's
    const auto touching = gap < margin;
    ws.gap[static_cast<size_t>(k)] = gap;
    ws.in_contact[static_cast<size_t>(k)] = select(touching, S(1), S(0));
    const Vec3<S>* const directions[3] = {&normal, &t1, &t2};
    const Vec3<S> lever = X.rotation.transpose_times(contact_point - X.translation);  // body frame
    for (int r = 0; r < 3; ++r) {
      Force<S>& f = ws.columns[static_cast<size_t>(3 * k + r)];  // formed in place, as Transform::act
      f.linear = X.rotation.transpose_times(*directions[r]);
      f.angular = cross(lever, f.linear);
      ws.velocity[static_cast<size_t>(3 * k + r)] = dot(f, ws.body_velocity[static_cast<size_t>(cand.body)]);
    }
    if (!cand.against_ground()) {  // the opposite rows on the other body: J_c = J_a - J_b
      const Transform<S>& X2 = ws.world_from_body[static_cast<size_t>(cand.body2)];
      const Vec3<S> lever2 = X2.rotation.transpose_times(contact_point - X2.translation);
      for (int r = 0; r < 3; ++r) {
        Force<S>& f = ws.columns2[static_cast<size_t>(3 * k + r)];
        f.linear = X2.rotation.transpose_times(-*directions[r]);
        f.angular = cross(lever2, f.linear);
        ws.velocity[static_cast<size_t>(3 * k + r)] += dot(f, ws.body_velocity[static_cast<size_t>(cand.body2)]);
      }
    }
    if (any_lane(touching)) ws.contact_list[static_cast<size_t>(in_block++)] = k;
  }
  for (int k = 0; k < 3 * plan.num_candidates(); ++k) {  // no impulse where nothing touches (nor with contacts off)
    const S kept = k < 3 * candidates ? ws.impulses[static_cast<size_t>(k)] : S(0);
    ws.impulses[static_cast<size_t>(k)] = k < 3 * candidates ? select(ws.in_contact[static_cast<size_t>(k / 3)] != S(0), kept, S(0)) : S(0);
  }

  // Each loop constraint: its rows on both sides (force columns), J_loop v_free and its
  // position error.
  for (int j = 0; j < loop_constraints; ++j)
    loop_constraint_terms(c.constraints[static_cast<size_t>(j)], ws.world_from_body.data(), ws.body_velocity.data(),
                          ws.loops[static_cast<size_t>(j)], true);
  const int rows_to_solve = in_block + limits_in_block + (loops == LoopRows::Solve ? loop_rows : 0);
  if (rows_to_solve == 0) return report;  // the whole block is free

  // 3. G_T by PV-OSIMr over the contact bodies' terminals: a 6-row terminal's columns are the
  // unit forces at its body's origin, a 3-row terminal's its one candidate's rows (step 2). Then
  // the block's problem: G_ab = T_a G_T[a, b] T_b^T (T = I for a 3-row terminal), g = J v_free +
  // closing terms. Only joint-limit rows: no G_T (their columns come from responses below), and
  // without the caller's factorisation, the joints eliminated here (what PV-OSIMr's backward
  // sweep does otherwise).
  if (in_block + loop_rows > 0) {
    for (int t = 0; t < plan.delassus.num_terminals(); ++t) {
      const int own = plan.own_candidate[static_cast<size_t>(t)];
      for (int r = 0; r < plan.rows_of(t); ++r) {
        Force<S>& e = ws.delassus.terminal_columns[static_cast<size_t>(t * 6 + r)];
        if (own >= 0) {
          e = ws.columns[static_cast<size_t>(3 * own + r)];
        } else {
          e = Force<S>::zero();
          e[r] = S(1);
        }
      }
    }
    pv_osimr_sweeps(c, plan.delassus, ws.delassus, ws.GT.data(), factorised);
  } else if (!factorised) {
    if (!rows_on_bodies) delassus_tree_sweep(c, plan.delassus, ws.delassus, q);
    for (int i = n - 1; i >= 1; --i) delassus_eliminate_joint(c, ws.delassus, i);
  }
  const int rowsT = plan.terminal_rows();
  const int limit_row = 3 * in_block, loop_row = limit_row + limits_in_block;  // where the limit and loop rows start
  const int m = loop_row + loop_rows;
  S* G = ws.problem.G.data();
  // The row groups: each candidate in contact (3 rows, on its body and a pair's body2), then
  // each loop constraint (its rows, on its body1 and body2), with the terminals they act on.
  int groups = 0;
  for (int b = 0; b < in_block; ++b) {
    const int k = ws.contact_list[static_cast<size_t>(b)];
    ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(groups++)];
    const int slot = plan.candidate_slot[static_cast<size_t>(k)], slot2 = plan.candidate_slot2[static_cast<size_t>(k)];
    const ContactCandidate& cand = list[static_cast<size_t>(k)];
    group.row = 3 * b, group.dim = 3, group.sides = 0;
    if (slot >= 0)
      group.side[group.sides++] = {slot, cand.body, &ws.columns[static_cast<size_t>(3 * k)], plan.own_candidate[static_cast<size_t>(slot)] == k};
    if (slot2 >= 0) group.side[group.sides++] = {slot2, cand.body2, &ws.columns2[static_cast<size_t>(3 * k)], false};
  }
  for (int j = 0; j < loop_constraints; ++j) {
    const ConstraintConstants<S>& k = c.constraints[static_cast<size_t>(j)];
    ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(groups++)];
    const int slot = plan.loop_slot[static_cast<size_t>(j)], slot2 = plan.loop_slot2[static_cast<size_t>(j)];
    group.row = loop_row + k.row, group.dim = k.dim, group.sides = 0;
    if (slot >= 0) group.side[group.sides++] = {slot, k.body1, ws.loops[static_cast<size_t>(j)].columns[0], false};
    if (slot2 >= 0) group.side[group.sides++] = {slot2, k.body2, ws.loops[static_cast<size_t>(j)].columns[1], false};
  }
  // ADMM on the tree (PV-soft) takes rows on one body each: a block with a pair's contact or
  // loop rows keeps the formed G (Batch refuses PV-soft on such models). Then G is never formed:
  // only its diagonal blocks, for the preconditioning, and the rows as PV-soft sees them.
  bool pv_soft = settings.solver == ContactSolver::Admm && settings.admm_linear_solve == AdmmLinearSolve::PvSoft && loop_rows == 0;
  for (int b = 0; b < in_block; ++b) {
    const ContactRowGroup<S>& group = ws.groups[static_cast<size_t>(b)];
    pv_soft = pv_soft && group.sides == 1;
    if (group.sides == 1)
      for (int r = 0; r < 3; ++r) ws.soft.rows[static_cast<size_t>(3 * b + r)] = PvSoftRow<S>{group.side[0].body, &group.side[0].columns[r]};
  }
  // G between every two groups (PV-soft: each group with itself): the sum over their sides of
  // T_a G_T[slot_a, slot_b] T_b^T.
  for (int gb = 0; gb < groups; ++gb) {
    const ContactRowGroup<S>& B = ws.groups[static_cast<size_t>(gb)];
    for (int ga = pv_soft ? gb : 0; ga <= gb; ++ga) {
      const ContactRowGroup<S>& A = ws.groups[static_cast<size_t>(ga)];
      S value[6][6];
      for (int sb = 0; sb < B.sides; ++sb)
        for (int sa = 0; sa < A.sides; ++sa) {
          const ContactRowSide<S>& side_a = A.side[sa];
          const ContactRowSide<S>& side_b = B.side[sb];
          const S* block = ws.GT.data() + plan.row_begin[static_cast<size_t>(side_a.slot)] * rowsT + plan.row_begin[static_cast<size_t>(side_b.slot)];
          const bool first = sa == 0 && sb == 0;
          for (int s = 0; s < B.dim; ++s) {
            const Force<S>& fb = side_b.columns[s];
            S u[6];  // G_T[a, b] T_b^T e_s: terminal a's rows' velocity from a unit impulse of B's row s
            for (int i = 0; i < plan.rows_of(side_a.slot); ++i) {
              if (side_b.own) {
                u[i] = block[i * rowsT + s];
              } else {
                S sum = block[i * rowsT] * fb[0];
                for (int j = 1; j < 6; ++j) sum += block[i * rowsT + j] * fb[j];
                u[i] = sum;
              }
            }
            for (int r = 0; r < A.dim; ++r) {
              S entry = u[r];
              if (!side_a.own) {
                const Force<S>& fa = side_a.columns[r];
                entry = fa[0] * u[0];
                for (int i = 1; i < 6; ++i) entry += fa[i] * u[i];
              }
              value[r][s] = first ? entry : value[r][s] + entry;
            }
          }
        }
      for (int r = 0; r < A.dim; ++r)
        for (int s = 0; s < B.dim; ++s) {
          G[(A.row + r) * m + B.row + s] = value[r][s];
          G[(B.row + s) * m + A.row + r] = value[r][s];
        }
    }
  }
  // A contact's normal row: rigid (its closing velocity), or compliant (a spring-damper: its
  // target term and its compliance on G's diagonal, normal_row_terms).
  for (int b = 0; b < in_block; ++b) {
    const int kb = ws.contact_list[static_cast<size_t>(b)];
    const NormalRowTerms<S> normal =
        normal_row_terms(ws.gap[static_cast<size_t>(kb)], h, settings, model.contacts.stiffness(kb), model.contacts.damping(kb));
    G[(3 * b) * m + 3 * b] += normal.compliance;
    ws.soft.compliance[static_cast<size_t>(3 * b)] = normal.compliance;
    ws.soft.compliance[static_cast<size_t>(3 * b + 1)] = ws.soft.compliance[static_cast<size_t>(3 * b + 2)] = S(0);
    ws.problem.g[static_cast<size_t>(3 * b)] = ws.velocity[static_cast<size_t>(3 * kb)] + normal.target;
    ws.problem.g[static_cast<size_t>(3 * b + 1)] = ws.velocity[static_cast<size_t>(3 * kb + 1)];
    ws.problem.g[static_cast<size_t>(3 * b + 2)] = ws.velocity[static_cast<size_t>(3 * kb + 2)];
    ws.problem.mu[static_cast<size_t>(b)] = mu[kb];
    ws.problem.in_contact[static_cast<size_t>(b)] = ws.in_contact[static_cast<size_t>(kb)];
  }
  // The loop rows' targets: J_loop v+ = -(baumgarte / h) e; in every lane's problem when the
  // plan keeps the row (an independent subset: a dependent row's target is inconsistent). Held
  // loops take neither: their rows are eliminated with the target J_loop dv = 0 (step 4).
  const S loop_gain = S(static_cast<lane_scalar<S>>(settings.baumgarte)) / h;
  for (int j = 0; j < (loops == LoopRows::Solve ? loop_constraints : 0); ++j) {
    const ConstraintConstants<S>& k = c.constraints[static_cast<size_t>(j)];
    const LoopConstraintTerms<S>& terms = ws.loops[static_cast<size_t>(j)];
    for (int r = 0; r < k.dim; ++r) {
      ws.problem.g[static_cast<size_t>(loop_row + k.row + r)] = terms.velocity_error[r] + loop_gain * terms.position_error[r];
      ws.problem.in_contact[static_cast<size_t>(in_block + limits_in_block + k.row + r)] = S(plan.loop_row_kept[static_cast<size_t>(k.row + r)] ? 1 : 0);
    }
  }
  // The limit rows' columns, one O(n) response each: M^-1 e_d (a unit torque on the joint's dof d,
  // its backward sweep along the joint's ancestors only) read by the contact and loop rows
  // (through the bodies' accelerations) and by the other limit rows (PV-soft: its own diagonal
  // entry only). Limit rows alone read only their joints' dofs: the roll-out visits the listed
  // joints' chains (a few limits near in a block: a fraction of the tree).
  std::span<const int> rolled_out;
  if (groups == 0) {
    std::fill(ws.limit_chain_mark.begin(), ws.limit_chain_mark.end(), 0);
    for (int r = 0; r < limits_in_block; ++r)
      for (int i = plan.limited_joints[static_cast<size_t>(ws.limit_list[static_cast<size_t>(r)])].body; i > 0 && !ws.limit_chain_mark[static_cast<size_t>(i)];
           i = c.tree[i].parent)
        ws.limit_chain_mark[static_cast<size_t>(i)] = 1;
    int chain_bodies = 0;
    for (int i = 1; i < n; ++i)
      if (ws.limit_chain_mark[static_cast<size_t>(i)]) ws.limit_chains[static_cast<size_t>(chain_bodies++)] = i;
    rolled_out = std::span<const int>(ws.limit_chains.data(), static_cast<size_t>(chain_bodies));
  }
  for (int r = 0; r < limits_in_block; ++r) {
    const int jr = ws.limit_list[static_cast<size_t>(r)];
    const LimitedJoint& joint = plan.limited_joints[static_cast<size_t>(jr)];
    const S sign = ws.limit_sign[static_cast<size_t>(jr)];
    joint_torque_response(c, M, ws.delassus, joint.body, joint.dof, S(1), ws.response.data(), rolled_out);
    const int row = limit_row + r;
    for (int ga = 0; ga < (pv_soft ? 0 : groups); ++ga) {
      const ContactRowGroup<S>& A = ws.groups[static_cast<size_t>(ga)];
      for (int t = 0; t < A.dim; ++t) {
        S value = dot(A.side[0].columns[t], ws.delassus.body_acceleration[static_cast<size_t>(A.side[0].body)]);
        if (A.sides > 1) value += dot(A.side[1].columns[t], ws.delassus.body_acceleration[static_cast<size_t>(A.side[1].body)]);
        value *= sign;
        G[(A.row + t) * m + row] = value;
        G[row * m + A.row + t] = value;
      }
    }
    for (int r2 = pv_soft ? r : 0; r2 <= r; ++r2) {
      const int j2 = ws.limit_list[static_cast<size_t>(r2)];
      const S value = sign * ws.limit_sign[static_cast<size_t>(j2)] * ws.response[static_cast<size_t>(plan.limited_joints[static_cast<size_t>(j2)].dof)];
      G[row * m + limit_row + r2] = value;
      G[(limit_row + r2) * m + row] = value;
    }
    ws.problem.g[static_cast<size_t>(row)] =
        sign * ws.v_free[static_cast<size_t>(joint.dof)] + closing_velocity(ws.limit_distance[static_cast<size_t>(jr)], h, settings);
    ws.problem.in_contact[static_cast<size_t>(in_block + r)] = ws.limit_active[static_cast<size_t>(jr)];
    ws.soft.rows[static_cast<size_t>(row)] = PvSoftRow<S>{joint.body, nullptr, joint.dof, sign};
    ws.soft.compliance[static_cast<size_t>(row)] = S(0);
  }

  // 4. The impulses, warm-started from the previous step's.
  std::vector<S>& warm = ws.list_impulses;
  for (int b = 0; b < in_block; ++b)
    for (int r = 0; r < 3; ++r)
      warm[static_cast<size_t>(3 * b + r)] = ws.impulses[static_cast<size_t>(3 * ws.contact_list[static_cast<size_t>(b)] + r)];
  for (int r = 0; r < limits_in_block; ++r)
    warm[static_cast<size_t>(limit_row + r)] = ws.limit_impulses[static_cast<size_t>(ws.limit_list[static_cast<size_t>(r)])];
  for (int r = 0; r < loop_rows; ++r) warm[static_cast<size_t>(loop_row + r)] = ws.loop_impulses[static_cast<size_t>(r)];
  if (loops == LoopRows::Hold) {
    // The limit rows alone, on the mechanism with its loops closed (kernels/held_loops.hpp).
    eliminate_held_loop_rows(limits_in_block, loop_rows, m, G, ws.loop_scale.data(), ws.problem.factor.data(), ws.problem.rhs.data(),
                             ws.problem.sigma.data());
    report = settings.solver == ContactSolver::Pgs ? contact_pgs(0, limits_in_block, 0, settings, ws.problem, warm.data())
                                                   : contact_admm(0, limits_in_block, 0, settings, ws.problem, warm.data());
    held_loop_impulses(limits_in_block, loop_rows, m, G, ws.loop_scale.data(), warm.data());
  } else if (settings.solver == ContactSolver::Pgs) {
    report = contact_pgs(in_block, limits_in_block, loop_rows, settings, ws.problem, warm.data());
  } else if (pv_soft) {
    report = contact_admm(in_block, limits_in_block, loop_rows, settings, ws.problem, warm.data(),
                          PvSoftDelassus<S>{c, ws.delassus, M, in_block, m, ws.problem, ws.soft});
  } else {
    report = contact_admm(in_block, limits_in_block, loop_rows, settings, ws.problem, warm.data());
  }

  // 5. v+ = v_free + M^-1 J^T lambda: the impulses as forces on their bodies (a limit's as a
  // joint torque), one response sweep.
  for (int i = 0; i < n; ++i) ws.delassus.body_force[static_cast<size_t>(i)] = Force<S>::zero();
  for (S& tau : ws.joint_torque) tau = S(0);
  for (int b = 0; b < in_block; ++b) {
    const int kb = ws.contact_list[static_cast<size_t>(b)];
    for (int r = 0; r < 3; ++r) ws.impulses[static_cast<size_t>(3 * kb + r)] = warm[static_cast<size_t>(3 * b + r)];
  }
  for (int r = 0; r < loop_rows; ++r) ws.loop_impulses[static_cast<size_t>(r)] = warm[static_cast<size_t>(loop_row + r)];
  for (int ga = 0; ga < groups; ++ga) {
    const ContactRowGroup<S>& A = ws.groups[static_cast<size_t>(ga)];
    for (int r = 0; r < A.dim; ++r) {
      const S impulse = warm[static_cast<size_t>(A.row + r)];
      for (int side = 0; side < A.sides; ++side)
        ws.delassus.body_force[static_cast<size_t>(A.side[side].body)] += A.side[side].columns[r] * impulse;
    }
  }
  for (int r = 0; r < limits_in_block; ++r) {
    const int jr = ws.limit_list[static_cast<size_t>(r)];
    const S impulse = warm[static_cast<size_t>(limit_row + r)];
    ws.limit_impulses[static_cast<size_t>(jr)] = impulse;
    ws.joint_torque[static_cast<size_t>(plan.limited_joints[static_cast<size_t>(jr)].dof)] += ws.limit_sign[static_cast<size_t>(jr)] * impulse;
  }
  force_response(c, M, ws.delassus, ws.response.data(), ws.joint_torque.data());
  for (int k = 0; k < nv; ++k) qdd[k] += ws.response[static_cast<size_t>(k)] / h;
  // Held loops: a lane with no limit near solved an all-zero problem alongside its block mates;
  // it did no work (and its count must not depend on them).
  if (loops == LoopRows::Hold) report.iterations = select(limit_near != S(0), report.iterations, S(0));
  return report;
}

}  // namespace batchdyn
