// Frictional contact in one time step, on lanes: with the ground and between the geometries of
// contact pairs, with the joints' position limits and the model's loops as rows of the same
// problem. The batched contact stage's kernel (batch/contact_solving.hpp), the lane counterpart
// of the dense reference kernels/contact/contact_step.hpp. Velocity-level time stepping
// (Carpentier, Le Lidec et al., "From Compliant to Rigid Contact Simulation: a Unified and
// Efficient Approach", RSS 2024, arXiv 2405.17020, §III-IV), in five stages, one file each:
//   detect    (contact_detection.hpp) joint limits within their margin; v_free = v + h qdd_free;
//             each candidate's gap, normal and contact point, and its mask: speculative, in the
//             problem when its gap is below its margin plus its approach over the step
//   rows      (contact_rows.hpp) the rows J_c (normal and two tangents, world directions, at the
//             contact point) as force columns on their bodies, the loop rows, and every row's
//             target g: the problem is G lambda + g = the rows' velocity after the step
//   Delassus  (contact_delassus.hpp) G = J M^-1 J^T by PV-OSIMr over the contact bodies, the
//             limit rows' columns by joint responses; or only its diagonal (PV-soft)
//   solve     (contact_solve.hpp) the impulses by proximal ADMM (polished) or PGS, warm-started
//   apply     (contact_apply.hpp) v+ = v_free + M^-1 J^T lambda by one O(n) response, returned as
//             qdd = qdd_free + M^-1 J^T lambda / h; each candidate's world force
// The kernel is the two halves detect_contact_rows (detect, and the rows' directions) and
// solve_detected_contacts (the rest), so that the caller sizes the problem's workspace for the
// rows found in between (FrictionalContactWorkspace::fit_problem): the batch's stage does, its
// threads' problems grown to their largest block's.
// The impulses are N s from the solve to the output, in one order (ContactRowCounts): the
// candidates in contact in any lane of the block, then the limits near, then the loop rows; the
// block solves over those (loop bounds, not per-lane branches), each lane with its own rows
// masked, so a lane's result never depends on its block mates.
//
// A robot with kinematic loops (LoopRows::Solve): v_free is the tree's (ABA without the loops),
// and the loop constraints are bilateral rows of the same problem ("the loop rows enter the
// contact problem as bilateral rows", arXiv 2405.17020 §III-A treats bilateral and unilateral
// rows alike): their rows are the terminal rows of kernels/tree/constraint_rows.hpp on each side,
// and their velocity target is the loop stabilisation's (batch/loop_stabilisation.hpp; by
// default J_loop v+ = -e / T, e the position error, T its time constant), as the loop solver's
// rows would have it. So a contact impulse moves the loops with the robot, and the loops hold at
// the velocity level.
//
// LoopRows::Hold (joint limits, no contacts): qdd comes in from the loop solver (LCABA, proxBBO),
// so v_free already keeps the loops as that solver stabilises them. The loop rows are bilateral
// rows with the target J_loop (v+ - v_free) = 0: the limits' impulses move the robot along its
// loops and leave the loops' own velocities as the loop solver left them. The loop rows are
// eliminated (kernels/loops/held_loops.hpp), so the solver iterates on the limit rows alone; the
// loop forces gain the limits' reactions. A block with no limit within its margin returns before
// any sweep, and a lane with none gets exactly qdd back.
#pragma once

#include <type_traits>

#include "kernels/contact/contact_apply.hpp"
#include "kernels/contact/contact_delassus.hpp"
#include "kernels/contact/contact_detection.hpp"
#include "kernels/contact/contact_rows.hpp"
#include "kernels/contact/contact_solve.hpp"

namespace batchdyn {

// What detection (the first of the contact step's stages) hands the others: the rows of the
// block's problem, and the lanes with a joint limit near.
template <class S>
struct ContactDetection {
  ContactRowCounts rows;
  int loop_constraints = 0;  // the loop constraints whose rows are in the problem (c.constraints)
  bool on_bodies = false;    // rows may act on bodies (candidates or loops): the bodies' motions were formed
  S limit_near;              // 1 in the lanes with a joint within its limit's margin
  bool solve = false;        // some lane of the block has a row to solve; if not, qdd stays as it came
};

// The contact step's first stage for a lane block at (q, v) with the free accelerations qdd: the
// limits near, v_free, the candidates in contact and their rows, the loops' rows
// (frictional_contact_kernel lists the arguments). Reads qdd; writes only ws.
template <class S>
ContactDetection<S> detect_contact_rows(const ModelConstants<S>& c, const ContactPlan& plan, const Model& model, const ContactSettings& settings,
                                        int candidates, LoopRows loops, const GroundLanes<S>& ground, const S& occupied,
                                        FrictionalContactWorkspace<S>& ws, const S* q, const S* v, const S& h, const S* qdd,
                                        const TreeFactor<S>* factorised) {
  ContactDetection<S> detection;
  ContactRowCounts& rows = detection.rows;
  detection.loop_constraints = loops != LoopRows::None ? static_cast<int>(c.constraints.size()) : 0;
  rows.loops = loops != LoopRows::None ? model.constraint_rows : 0;

  // The limits from q alone, first: held loops with no contact and no limit near in any lane
  // need nothing else.
  rows.limits = detect_limits(plan, settings, occupied, q, ws, detection.limit_near);
  if (loops == LoopRows::Hold && candidates == 0 && rows.limits == 0) return detection;
  // M's factorisation at q: the caller's (ABA's, with its placements) when given, else this
  // kernel's own (PV-OSIMr's backward sweep, or the joints eliminated for limit rows alone).
  detection.on_bodies = candidates > 0 || detection.loop_constraints > 0;
  if (detection.on_bodies && !factorised) delassus_tree_sweep(c, plan.delassus, ws.delassus, q);
  const TreeFactor<S> M = factorised ? *factorised : tree_factor_of(ws.delassus);
  contact_body_motions(c, M, detection.on_bodies, v, qdd, h, ws);
  rows.contacts = detect_contacts(model, plan, candidates, ground, occupied, h, ws);

  // The tangent rows of the listed contacts and the loops' rows.
  contact_tangent_rows(model, ground, rows.contacts, ws);
  for (int j = 0; j < detection.loop_constraints; ++j)
    loop_constraint_terms(c.constraints[static_cast<size_t>(j)], ws.world_from_body.data(), ws.body_velocity.data(),
                          ws.loops[static_cast<size_t>(j)], true);
  detection.solve = rows.contacts + rows.limits + (loops == LoopRows::Solve ? rows.loops : 0) > 0;  // else the whole block is free
  return detection;
}

// The contact step's other stages for the rows `detection` found, on a workspace whose problem
// fits them (FrictionalContactWorkspace::fit_problem): the targets, the Delassus matrix, the
// solve and the impulses applied (frictional_contact_kernel lists the arguments).
template <class S>
ContactSolverReport<S> solve_detected_contacts(const ModelConstants<S>& c, const ContactPlan& plan, const Model& model,
                                               const ContactSettings& settings, const ContactDetection<S>& detection, LoopRows loops, const S* mu,
                                               const S& occupied, FrictionalContactWorkspace<S>& ws, const S* q, const S* v, const S& h, S* qdd,
                                               std::type_identity_t<S>* loop_forces, const TreeFactor<S>* factorised) {
  ContactSolverReport<S> report{S(0), S(0), S(1)};
  if (!detection.solve) return report;
  const ContactRowCounts& rows = detection.rows;
  const TreeFactor<S> M = factorised ? *factorised : tree_factor_of(ws.delassus);

  // Rows: the row groups, then the targets.
  const int groups = contact_row_groups(c, plan, model, rows, detection.loop_constraints, ws);
  contact_targets(model, settings, mu, h, rows.contacts, ws);
  if (loops == LoopRows::Solve) loop_targets(c, plan, rows, M, v, h, occupied, ws);
  limit_targets(plan, settings, rows, h, ws);

  // Delassus: G_T over the terminals (not for limit rows alone: their columns are responses; the
  // joints eliminated here when the caller gave no factorisation), G between the row groups,
  // the limit rows' columns.
  if (rows.contacts + rows.loops > 0) {
    terminal_delassus(c, plan, groups, factorised, ws);
  } else if (!factorised) {
    if (!detection.on_bodies) delassus_tree_sweep(c, plan.delassus, ws.delassus, q);
    for (int i = static_cast<int>(c.tree.size()) - 1; i >= 1; --i) delassus_eliminate_joint(c, ws.delassus, i);
  }
  const bool pv_soft = contact_rows_on_the_tree(settings, rows, ws);
  group_delassus(plan, rows, groups, pv_soft, ws);
  limit_delassus(c, plan, M, rows, groups, pv_soft, ws);

  // Solve, warm-started from the last step's impulses.
  gather_warm_start(rows, loops, loop_forces, h, ws);
  report = solve_contact_rows(c, settings, rows, loops, pv_soft, M, ws);

  // Apply: v+ through qdd, the impulses and forces out.
  apply_contact_impulses(c, plan, M, rows, groups, loops, h, ws, qdd, loop_forces);
  // Held loops: a lane with no limit near solved an all-zero problem alongside its block mates;
  // it did no work (and its count must not depend on them).
  if (loops == LoopRows::Hold) report.iterations = select(detection.limit_near != S(0), report.iterations, S(0));
  return report;
}

// One contact step's impulses for a lane block at (q, v) with the free accelerations qdd (in:
// ABA's, or with LoopRows::Hold the loop solver's; out: plus M^-1 J^T lambda / h), with these rows:
//   - the contacts of the first `candidates` candidates (0: contacts off; ground candidates
//     only when ground.present);
//   - when settings.joint_limits, the 1-dof joints' position limits, unilateral (as the dense
//     reference's);
//   - the model's loop constraints, bilateral, as `loops` says (with Hold, `candidates` must be
//     0: a stage that solves contacts solves the loops with them).
// `mu` is per candidate (lanes); `occupied` is 1 in the lanes that hold an environment to step
// and 0 in the others (a block's padding, a state the check refused): those have no row, cost no
// iteration and leave qdd as it came. ws.impulses and ws.limit_impulses are the warm start in
// and the impulses out (N s); `loop_forces` (model.constraint_rows, N; nullptr with
// LoopRows::None) is the loop forces' warm start in (Solve) or the loop solver's forces (Hold),
// and the loop forces out (Hold: with the limits' reactions added). ws.world_force gets each
// candidate's force. Returns the solver's report (iterations 0 and converged in a lane whose
// problem has no row). `c` must be the constants the accelerations stage used (the implicitly
// damped ones in a damped step), so that M is the same. `factorised`: M's factorisation at this
// q and c when the caller has one (the accelerations stage's ABA, tree_factor_of(aba
// workspace)), else nullptr: the kernel then eliminates the joints itself (PV-OSIMr's backward
// sweep).
// Between detection and the rest, the workspace's problem is grown to fit the block's rows when
// it was made smaller (FrictionalContactWorkspace::fit_problem): the batch's contact stage calls
// the two halves itself and grows its workspaces there, outside the kernels; a workspace made for
// every candidate (the default) never grows.
// Preconditions: plan from this model; unit quaternions. O(n + B^2 + (l + 1) n + iterations m^2 + m^3/6) on the
// formed G; with PV-soft O(n + B^2 + (l + 1) n + (iterations + refactorisations) (n + m)).
template <class S>
ContactSolverReport<S> frictional_contact_kernel(const ModelConstants<S>& c, const ContactPlan& plan, const Model& model,
                                                 const ContactSettings& settings, int candidates, LoopRows loops, const GroundLanes<S>& ground,
                                                 const S* mu, const S& occupied, FrictionalContactWorkspace<S>& ws, const S* q, const S* v,
                                                 const S& h, S* qdd, std::type_identity_t<S>* loop_forces,
                                                 const TreeFactor<S>* factorised = nullptr) {
  const ContactDetection<S> detection = detect_contact_rows(c, plan, model, settings, candidates, loops, ground, occupied, ws, q, v, h, qdd, factorised);
  ws.fit_problem(detection.rows);
  return solve_detected_contacts(c, plan, model, settings, detection, loops, mu, occupied, ws, q, v, h, qdd, loop_forces, factorised);
}

}  // namespace batchdyn
