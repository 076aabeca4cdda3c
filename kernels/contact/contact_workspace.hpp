// What the stages of a contact step (kernels/contact/frictional_contact.hpp) hand each other, on
// lanes: one lane block's working set, sized once from the model and its contact plan.
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/contact/admm_delassus.hpp"
#include "kernels/contact/contact_problem.hpp"
#include "kernels/contact/hull_contact.hpp"
#include "kernels/delassus/delassus_workspace.hpp"
#include "kernels/loops/loop_constraints.hpp"
#include "topology/contact_plan.hpp"

namespace batchdyn {

// How the contact problem takes the model's loop constraints.
enum class LoopRows {
  None,   // not in the problem (no loops, or the loop constraints are off)
  Solve,  // bilateral rows with the loop stabilisation's target; qdd in is the tree's (ABA, without the loops)
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

// The problem's rows in the block, as the stages list them: the candidates in contact in any lane
// (3 rows each), then the joints within a limit's margin in any lane (1 row each), then the loop
// rows. The solver's impulses come in this order (N s).
struct ContactRowCounts {
  int contacts = 0, limits = 0, loops = 0;
  int limit_row() const { return 3 * contacts; }
  int loop_row() const { return 3 * contacts + limits; }
  int rows() const { return 3 * contacts + limits + loops; }
};

// The bits of FrictionalContactWorkspace::known.
inline constexpr char kKnownZeroResults = 1;  // in_contact, impulses and world_force hold zero
inline constexpr char kKnownInfiniteGap = 2;  // gap holds +inf (a reach group passed over)

template <class S>
struct FrictionalContactWorkspace {
  // `problem_contacts`: how many contacts the problem has room for at first (fit_problem grows
  // it); -1: every candidate, so that it never grows.
  FrictionalContactWorkspace(const Model& model, const ContactPlan& plan, int problem_contacts = -1)
      : delassus(model, plan.delassus), world_from_body(static_cast<size_t>(model.num_bodies())),
        body_velocity(world_from_body.size()), body_velocity_at_v(world_from_body.size()), v_free(static_cast<size_t>(model.nv)),
        response(v_free.size()), joint_torque(v_free.size()), GT(static_cast<size_t>(plan.terminal_rows() * plan.terminal_rows())),
        gap(static_cast<size_t>(plan.num_candidates())), in_contact(gap.size()), normal(gap.size()), tangent1(gap.size()),
        tangent2(gap.size()), contact_point(gap.size()), columns(3 * gap.size()), columns2(columns.size()), velocity(3 * gap.size()),
        impulses(3 * gap.size()), world_force(3 * gap.size()), known(gap.size(), 0), limit_distance(static_cast<size_t>(plan.num_limited_joints())),
        limit_sign(limit_distance.size()), limit_active(limit_distance.size()), limit_impulses(limit_distance.size()),
        loops(model.constraints.size()), loop_scale(static_cast<size_t>(model.constraint_rows)),
        row_impulses(3 * gap.size() + limit_distance.size() + loop_scale.size()), contact_list(gap.size()), limit_list(limit_distance.size()),
        limit_chain_mark(static_cast<size_t>(model.num_bodies())), limit_chains(limit_chain_mark.size()), groups(gap.size() + loops.size()),
        terminal_needed(static_cast<size_t>(plan.delassus.num_terminals())),
        problem(problem_contacts < 0 ? plan.num_candidates() : std::min(problem_contacts, plan.num_candidates()),
                plan.num_limited_joints() + model.constraint_rows),
        soft(model, 3 * plan.num_candidates() + plan.num_limited_joints()) {}
  DelassusWorkspace<S> delassus;
  std::vector<Transform<S>> world_from_body;  // ^0M_i
  std::vector<Motion<S>> body_velocity;       // at v_free, body frames
  std::vector<Motion<S>> body_velocity_at_v;  // at v, body frames: acceleration-level loop rows only
  std::vector<S> v_free, response;            // nv: v + h qdd_free, M^-1 J^T lambda
  std::vector<S> joint_torque;                // nv: the limits' impulses as joint torques (apply)
  std::vector<S> GT;                          // G_T over the terminals' rows, row-major
  // Per candidate
  std::vector<S> gap, in_contact;             // to the ground or the pair's B; 1 when gap < margin + h max(-v_N, 0), else 0
  // The normal and contact point are left as they were for the candidates of a reach group passed
  // over (detect_contacts: an infinite gap and no contact in every lane); read them masked by
  // in_contact.
  std::vector<Vec3<S>> normal;                // unit, world frame: the ground's under it, or its pair's (B to A)
  std::vector<Vec3<S>> tangent1, tangent2;    // world frame: perpendicular_basis(normal), the rows' t1 and t2
  std::vector<Vec3<S>> contact_point;         // world frame
  std::vector<Force<S>> columns;              // 3 per candidate: its rows (n, t1, t2) as forces on its body, body frame
  std::vector<Force<S>> columns2;             // 3 per pair candidate: minus those on its pair's body2, body2 frame
  std::vector<S> velocity;                    // 3 per candidate: J_c v_free (m/s)
  HullScratch<S> hull;                        // a convex hull's vertices, while its slots choose (hull_contact.hpp)
  std::vector<S> impulses;                    // 3 per candidate (n, t1, t2), N s: warm start in, result out
  std::vector<S> world_force;                 // 3 per candidate: its impulse / h in the world frame (N, x y z), on a pair's A
  // Per candidate, what its lanes are known to hold in every lane (bits: kKnownZeroResults,
  // kKnownInfiniteGap; 0: nothing known). detect_contacts does not write again what a candidate
  // it passes over already holds: Go2 among its stairs passes over most of its 401 candidates in
  // every block, and their 8 lane stores each were a third of that stage. Whoever writes a
  // non-zero warm start into a candidate's impulses clears its kKnownZeroResults (zeros keep it
  // true). The batch's Held (batch/contact_solving.hpp) is the same idea for the env-major rows.
  std::vector<char> known;
  // Per limited joint (plan.limited_joints)
  std::vector<S> limit_distance, limit_sign;  // to the nearer limit (< 0: beyond it); +1 lower, -1 upper
  std::vector<S> limit_active, limit_impulses;  // 1 when within the margin; N m s or N s (warm start in, result out)
  // Per loop constraint: its rows on both sides, J_loop v_free and its position error
  std::vector<LoopConstraintTerms<S>> loops;
  std::vector<S> loop_scale;                  // model.constraint_rows: the held loop rows' scales (kernels/loops/held_loops.hpp)
  std::vector<S> row_impulses;                // the problem's rows in ContactRowCounts order, N s: warm start, then the solution
  std::vector<int> contact_list;              // the block's candidates in contact (in any lane)
  std::vector<int> limit_list;                // the block's joints within a limit's margin (in any lane)
  std::vector<int> limit_chain_mark;          // per body: 1 on a listed limit's chain (itself or an ancestor)
  std::vector<int> limit_chains;              // those bodies, ascending: all a limit-rows-only problem reads
  std::vector<ContactRowGroup<S>> groups;     // the block's contacts, then its loop constraints
  std::vector<char> terminal_needed;          // per contact body (terminal): 1 when a group acts on it
  ContactSolverWorkspace<S> problem;          // the block's contact problem and its solver's variables
  PvSoftDelassusWorkspace<S> soft;            // ADMM on the tree (PV-soft): the problem's rows, compliance, factor
  // Room in `problem` for a block's rows (ContactRowCounts), made before the solve: grows it,
  // never shrinks it, by half again at least, up to every candidate. Its G and factor are
  // (3 k + l + b)^2 lanes each, k the contacts: Go2 among its stairs has 401 candidates, a few
  // dozen of them in contact in a block, and a problem made for all of them would hold 180 MiB
  // per thread in double. Its contents are scratch, made again by every solve; the problem's layout
  // (m x m, rows m apart) does not depend on the room, so neither do the results.
  void fit_problem(const ContactRowCounts& rows) {
    if (problem.fits(rows.contacts, rows.limits + rows.loops)) return;
    const int room = std::min(static_cast<int>(gap.size()), std::max(rows.contacts, problem.max_contacts + problem.max_contacts / 2));
    problem = ContactSolverWorkspace<S>(room, problem.max_rows);
  }
  // Room in `problem` for `contacts` contacts (at most every candidate) with the rows it has:
  // what fit_problem would grow to, made ahead of the steps that need it.
  void reserve_problem(int contacts) {
    contacts = std::min(static_cast<int>(gap.size()), contacts);
    if (!problem.fits(contacts, problem.max_rows)) problem = ContactSolverWorkspace<S>(contacts, problem.max_rows);
  }
  size_t bytes() const {
    return delassus.bytes() + world_from_body.size() * sizeof(Transform<S>) +
           (body_velocity.size() + body_velocity_at_v.size()) * sizeof(Motion<S>) + (columns.size() + columns2.size()) * sizeof(Force<S>) +
           (normal.size() + tangent1.size() + tangent2.size() + contact_point.size()) * sizeof(Vec3<S>) +
           (v_free.size() + response.size() + joint_torque.size() + GT.size() + gap.size() + in_contact.size() + velocity.size() + impulses.size() +
            world_force.size() +
            limit_distance.size() + limit_sign.size() + limit_active.size() + limit_impulses.size() + loop_scale.size() + row_impulses.size()) *
               sizeof(S) +
           loops.size() * sizeof(LoopConstraintTerms<S>) + groups.size() * sizeof(ContactRowGroup<S>) +
           (contact_list.size() + limit_list.size() + limit_chain_mark.size() + limit_chains.size()) * sizeof(int) + terminal_needed.size() +
           known.size() +
           problem.bytes() + soft.bytes();
  }
};

}  // namespace batchdyn
