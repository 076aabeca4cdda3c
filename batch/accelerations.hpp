// The accelerations stage: qdd of a lane block's environments from ws.q, ws.v and the applied
// torque ws.tau_applied (actuation and passive forces included): ABA on the tree (DESIGN.md §3),
// or, for a model whose constraints are on, the constraint solver (batch/constraint_solving.hpp)
// — unless the contact stage solves the loops (`loops_in_contact`: they are rows of its
// problem), which starts from the tree's accelerations.
#pragma once

#include "batch/block_workspace.hpp"
#include "batch/constraint_solving.hpp"
#include "kernels/tree/aba.hpp"

namespace batchdyn {

// Whether the stage runs ABA (its workspace then holds M's factorisation at ws.q), not a loop solver.
template <class L>
bool accelerations_by_aba(const ConstraintSolving<L>& constraints, bool loops_in_contact) {
  return !constraints.active() || loops_in_contact;
}

template <class L>
void compute_accelerations(ConstraintSolving<L>& constraints, int block, const ModelConstants<L>& c, BlockWorkspace<L>& ws,
                           const bool* valid, bool loops_in_contact, const Model& dense_model) {
  if (accelerations_by_aba(constraints, loops_in_contact)) aba_kernel(c, ws.aba, ws.q.data(), ws.v.data(), ws.tau_applied.data(), ws.qdd.data());
  else constraints.solve(block, c, ws, valid, dense_model);
}

}  // namespace batchdyn
