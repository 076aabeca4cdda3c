// The contact step's fourth stage, the solve (kernels/contact/frictional_contact.hpp): the
// block's impulses, warm-started from the environments' last ones, by proximal ADMM on the
// formed G or on the tree (kernels/contact/contact_admm.hpp, with its polishing), or by
// projected Gauss-Seidel (kernels/contact/contact_pgs.hpp); with held loops, on the limit rows
// of the mechanism with its loops closed (kernels/loops/held_loops.hpp).
#pragma once

#include "kernels/contact/contact_admm.hpp"
#include "kernels/contact/contact_pgs.hpp"
#include "kernels/contact/contact_workspace.hpp"
#include "kernels/loops/held_loops.hpp"

namespace batchdyn {

// The warm start in the problem's row order, ws.row_impulses (N s): the listed contacts'
// impulses, the listed limits', and the loop rows' (loop forces times h; zero for held loops,
// whose rows carry increments of the loop solver's).
template <class S>
void gather_warm_start(const ContactRowCounts& rows, LoopRows loops, const S* loop_forces, const S& h, FrictionalContactWorkspace<S>& ws) {
  S* warm = ws.row_impulses.data();
  for (int b = 0; b < rows.contacts; ++b)
    for (int r = 0; r < 3; ++r) warm[3 * b + r] = ws.impulses[static_cast<size_t>(3 * ws.contact_list[static_cast<size_t>(b)] + r)];
  for (int r = 0; r < rows.limits; ++r) warm[rows.limit_row() + r] = ws.limit_impulses[static_cast<size_t>(ws.limit_list[static_cast<size_t>(r)])];
  for (int r = 0; r < rows.loops; ++r) warm[rows.loop_row() + r] = loops == LoopRows::Solve ? loop_forces[r] * h : S(0);
}

// ws.row_impulses from the warm start to the solution (N s). `delassus`: PV-soft's operator on
// the tree when `pv_soft`, else the formed G in ws.problem.
template <class S>
ContactSolverReport<S> solve_contact_rows(const ModelConstants<S>& c, const ContactSettings& settings, const ContactRowCounts& rows,
                                          LoopRows loops, bool pv_soft, const TreeFactor<S>& M, FrictionalContactWorkspace<S>& ws) {
  S* impulses = ws.row_impulses.data();
  const int m = rows.rows();
  if (loops == LoopRows::Hold) {
    // The limit rows alone, on the mechanism with its loops closed.
    S* G = ws.problem.G.data();
    eliminate_held_loop_rows(rows.limits, rows.loops, m, G, ws.loop_scale.data(), ws.problem.factor.data(), ws.problem.rhs.data(),
                             ws.problem.sigma.data());
    const ContactSolverReport<S> report = settings.solver == ContactSolver::Pgs ? contact_pgs(0, rows.limits, 0, settings, ws.problem, impulses)
                                                                                : contact_admm(0, rows.limits, 0, settings, ws.problem, impulses);
    held_loop_impulses(rows.limits, rows.loops, m, G, ws.loop_scale.data(), impulses);
    return report;
  }
  if (settings.solver == ContactSolver::Pgs) return contact_pgs(rows.contacts, rows.limits, rows.loops, settings, ws.problem, impulses);
  if (pv_soft)
    return contact_admm(rows.contacts, rows.limits, rows.loops, settings, ws.problem, impulses,
                        PvSoftDelassus<S>{c, ws.delassus, M, rows.contacts, m, ws.problem, ws.soft});
  return contact_admm(rows.contacts, rows.limits, rows.loops, settings, ws.problem, impulses);
}

}  // namespace batchdyn
