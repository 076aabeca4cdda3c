// The accelerations stage: qdd of a lane block's environments from ws.q, ws.v and the applied
// torque ws.tau_applied (actuation and passive forces included): ABA on the tree (DESIGN.md §3),
// or, for a model whose constraints are on, the constraint solver (batch/constraint_solving.hpp)
// — unless the contact stage solves the loops (`loops_in_contact`: they are rows of its
// problem), which starts from the tree's accelerations.
#pragma once

#include "batch/block_workspace.hpp"
#include "batch/constraint_solving.hpp"
#include "kernels/aba.hpp"

namespace batchdyn {

template <class L>
void compute_accelerations(ConstraintSolving<L>& constraints, int block, const ModelConstants<L>& c, BlockWorkspace<L>& ws,
                           const bool* valid, bool loops_in_contact, const Model& dense_model) {
  if (constraints.active() && !loops_in_contact) constraints.solve(block, c, ws, valid, dense_model);
  else aba_kernel(c, ws.aba, ws.q.data(), ws.v.data(), ws.tau_applied.data(), ws.qdd.data());
}

}  // namespace batchdyn
