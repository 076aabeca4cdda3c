// Singular joints: joints whose motion moves no mass or inertia at all (massless finger links,
// a point mass on its own axis). M(q) is then singular for every q and forward dynamics is
// undefined until they are locked (topology/reduced_model.hpp: lock_joints) or given armature
// (set_armature). The check needs ABA's inertia sweep, so it runs here, above the model: the
// reference data (kernels/tree/data.hpp, kernels/loops/loop_constraints.hpp) and the batch engine find
// them once when they are built from a model, and every entry point that needs M(q)^{-1}
// refuses a singular model with an Error naming the joints and both remedies.
#pragma once

#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

// Body indices of the joints whose motion moves no mass or inertia for any q: ABA's pivot
// D_i = S_i^T I^A_i S_i (armature included) vanishes, relative to the terms it is made of,
// at the neutral and at several pseudo-random configurations (a structural zero is zero
// everywhere; a configuration-dependent one is not zero at all of them). O(n) per sample.
std::vector<int> find_singular_joints(const Model& model);

// Throws Error when `singular_joints` (find_singular_joints of `model`) is not empty: names the
// joints and the two remedies (lock them, or give them armature). `what` names the computation
// that needs M(q)^{-1}.
void require_regular(const Model& model, const std::vector<int>& singular_joints, const char* what);

}  // namespace batchdyn
