// Composite Rigid Body Algorithm: the joint-space inertia matrix M(q). RBDA Table 6.2.
// O(n d) for tree depth d. The dense oracle for every recursive kernel.
#pragma once

#include "kernels/tree/kinematics.hpp"

namespace batchdyn {

// Returns data.M (full symmetric nv x nv), armature on the diagonal.
template <class S>
const MatrixX<S>& crba(const Model& model, Data<S>& data, const VectorX<S>& q) {
  const ModelConstants<S>& c = data.constants;
  forward_kinematics(model, data, q);
  for (int i = 1; i < model.num_bodies(); ++i) data.composite_inertia[i] = c.inertia[static_cast<size_t>(i)];
  // Backward sweep: I^C_parent += ^{λ(i)}X*_i I^C_i ^iX_{λ(i)}.
  for (int i = model.num_bodies() - 1; i >= 1; --i) {
    const int parent = c.tree[i].parent;
    if (parent > 0)
      data.composite_inertia[parent] =
          data.composite_inertia[parent] + data.composite_inertia[i].transformed(data.parent_from_body[i]);
  }
  // For each joint: F = I^C_i S_i, carried up to every ancestor j: M_ji = S_j^T F.
  for (int i = 1; i < model.num_bodies(); ++i) {
    const BodyPlan& body = c.tree[i];
    for (int k = 0; k < body.nv; ++k) {
      Force<S> F = data.composite_inertia[i] * subspace_column(c, i, k);
      const int col = body.idx_v + k;
      for (int j = i; j > 0; j = c.tree[j].parent) {
        const BodyPlan& ancestor = c.tree[j];
        for (int r = 0; r < ancestor.nv; ++r) {
          const S value = subspace_transpose_times(c, j, F, r);
          data.M(ancestor.idx_v + r, col) = value;
          data.M(col, ancestor.idx_v + r) = value;
        }
        F = force_to_parent(c, j, data.parent_from_body[j], F);
      }
    }
  }
  for (int k = 0; k < model.nv; ++k) data.M(k, k) += c.armature[static_cast<size_t>(k)];  // rotor inertia
  return data.M;
}

}  // namespace batchdyn
