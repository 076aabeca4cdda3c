// Workspace of ABA (kernels/tree/aba.hpp) for one lane block: per-body spatial quantities and the
// joint-space blocks U_i, u_i, D_i^{-1}, pooled by dof so their size is the model's nv, not
// 6 per body. Sized once from the model; the kernel never allocates.
#pragma once

#include <vector>

#include "kernels/tree/joint_elimination.hpp"
#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// Per-call workspace of ABA for one lane block, sized from the model once.
template <class S>
struct AbaWorkspace {
  explicit AbaWorkspace(const Model& model)
      : parent_from_body(model.num_bodies()), velocity(model.num_bodies()), bias_acceleration(model.num_bodies()),
        acceleration(model.num_bodies()), inertia(model.num_bodies()),
        bias(model.num_bodies()), U(model.nv), U_Dinv(model.nv), u(model.nv) {
    Dinv.resize(static_cast<size_t>(pool_joint_blocks(model, Dinv_offset)));
  }
  std::vector<Transform<S>> parent_from_body;             // ^{λ(i)}M_i
  std::vector<Motion<S>> velocity;                        // v_i
  std::vector<Motion<S>> bias_acceleration;               // c_i = v_i x S_i qd_i
  std::vector<Motion<S>> acceleration;                    // a_i
  std::vector<ArticulatedInertia<S>> inertia;             // I^A_i, the articulated inertia (H_{i,i} in LCABA)
  std::vector<Force<S>> bias;                             // p^A_i, the articulated bias force
  std::vector<Force<S>> U;                                // U_i = I^A_i S_i, one column per dof (idx_v)
  std::vector<Force<S>> U_Dinv;                           // U_i D_i^{-1} (idx_v)
  std::vector<S> u;                                       // u_i = tau_i - S_i^T p^A_i (idx_v)
  std::vector<S> Dinv;                                    // D_i^{-1}, nv_i x nv_i, row-major
  std::vector<int> Dinv_offset;                           // where body i's D_i^{-1} starts

  // Bytes of workspace per lane block (sizeof(S) covers all W lanes).
  size_t bytes() const {
    return parent_from_body.size() * sizeof(Transform<S>) +
           (velocity.size() + bias_acceleration.size() + acceleration.size()) * sizeof(Motion<S>) +
           inertia.size() * sizeof(ArticulatedInertia<S>) +
           (bias.size() + U.size() + U_Dinv.size()) * sizeof(Force<S>) + (u.size() + Dinv.size()) * sizeof(S);
  }
};

}  // namespace batchdyn
