// The integrate stage of step(): one semi-implicit (symplectic) Euler substep of length h on the
// configuration manifold, v += h qdd, q = q ⊕ h v (kernels/configuration.hpp: exp map for the
// free flyer and ball joints), on the lanes of a block.
#pragma once

#include <span>

#include "batch/block_workspace.hpp"
#include "kernels/configuration.hpp"

namespace batchdyn {

template <class L>
void integrate_substep(std::span<const BodyPlan> tree, BlockWorkspace<L>& ws, const L& h) {
  for (size_t k = 0; k < ws.v.size(); ++k) {
    ws.v[k] += h * ws.qdd[k];
    ws.displacement[k] = h * ws.v[k];
  }
  integrate_kernel(tree, ws.q.data(), ws.displacement.data(), ws.q.data());
}

}  // namespace batchdyn
