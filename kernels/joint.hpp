// The joint model (topology/joint_model.hpp) on the kernels' per-body tables: body i's joint
// transform and motion subspace S_i from ModelConstants (its type in `tree`, its axis in
// `joint_axis`), for every kernel's sweeps. Branches only on the joint type, never on state.
#pragma once

#include "kernels/model_constants.hpp"
#include "topology/joint_model.hpp"

namespace batchdyn {

// Joint frame -> child body frame for body i's joint coordinates (q points at idx_q).
template <class S>
BATCHDYN_INLINE Transform<S> joint_transform(const ModelConstants<S>& c, int i, const S* q) {
  return joint_transform(c.tree[i].joint_type, c.joint_axis[i], q);
}

// S_i x for joint-space x (nv_i values), e.g. the joint velocity S_i qd_i.
template <class S>
BATCHDYN_INLINE Motion<S> subspace_times(const ModelConstants<S>& c, int i, const S* x) {
  return joint_subspace_times(c.tree[i].joint_type, c.joint_axis[i], x);
}

// Column k of S_i.
template <class S>
BATCHDYN_INLINE Motion<S> subspace_column(const ModelConstants<S>& c, int i, int k) {
  return joint_subspace_column(c.tree[i].joint_type, c.joint_axis[i], k);
}

// Row k of S_i^T f.
template <class S>
BATCHDYN_INLINE S subspace_transpose_times(const ModelConstants<S>& c, int i, const Force<S>& f, int k) {
  return joint_subspace_transpose_times(c.tree[i].joint_type, c.joint_axis[i], f, k);
}

// Column k of I S_i.
template <class S>
BATCHDYN_INLINE Force<S> inertia_times_subspace(const ModelConstants<S>& c, int i, const ArticulatedInertia<S>& I, int k) {
  return joint_inertia_times_subspace(c.tree[i].joint_type, c.joint_axis[i], I, k);
}

}  // namespace batchdyn
