// Eliminating joint i from its articulated body: the step ABA's backward sweep and PV-OSIMr's
// backward sweep share (Featherstone RBDA Table 7.1; pv-osimr-delassus eq. 7-8):
//     U_i = H^A_i S_i,   D_i = S_i^T U_i (+ armature),   H^a_i = H^A_i - U_i D_i^{-1} U_i^T,
// and the force propagator P_i = I - U_i D_i^{-1} S_i^T applied to a force f as
//     P_i f = f - (U_i D_i^{-1}) (S_i^T f).
// Lane-generic, no allocation, branches on the joint type only.
#pragma once

#include <vector>

#include "kernels/joint.hpp"
#include "layout/small_spd_inverse.hpp"

namespace batchdyn {

// From body i's articulated inertia H^A_i: the columns U_i (nv_i forces) and D_i^{-1} (nv_i x
// nv_i, row-major).
template <class S>
BATCHDYN_INLINE void eliminate_joint(const ModelConstants<S>& c, int i, const ArticulatedInertia<S>& articulated_inertia, Force<S>* U,
                     S* Dinv) {
  const int nv = c.tree[i].nv, idx_v = c.tree[i].idx_v;
  S D[36];  // D_i = S_i^T U_i + diag(armature_i), nv x nv
  D[0] = S(0);  // every joint has a dof; tells GCC (-Wmaybe-uninitialized, SSE2 builds) that D is written
  for (int k = 0; k < nv; ++k) U[k] = inertia_times_subspace(c, i, articulated_inertia, k);
  for (int r = 0; r < nv; ++r)
    for (int k = 0; k < nv; ++k) D[r * nv + k] = subspace_transpose_times(c, i, U[k], r);
  for (int k = 0; k < nv; ++k) D[k * nv + k] += c.armature[static_cast<size_t>(idx_v + k)];  // rotor inertia on the joint axis
  invert_spd(D, nv, Dinv);
}

// The columns of U_i D_i^{-1} (nv forces), for projecting the joint out.
template <class S>
BATCHDYN_INLINE void times_Dinv(int nv, const Force<S>* U, const S* Dinv, Force<S>* U_Dinv) {
  for (int k = 0; k < nv; ++k) {
    U_Dinv[k] = U[0] * Dinv[k];
    for (int j = 1; j < nv; ++j) U_Dinv[k] += U[j] * Dinv[j * nv + k];
  }
}

// x = D_i^{-1} y for nv_i values (D_i^{-1} row-major nv x nv; x and y distinct).
template <class S>
BATCHDYN_INLINE void Dinv_times(int nv, const S* Dinv, const S* y, S* x) {
  for (int r = 0; r < nv; ++r) {
    x[r] = Dinv[r * nv] * y[0];
    for (int k = 1; k < nv; ++k) x[r] += Dinv[r * nv + k] * y[k];
  }
}

// Where body i's D_i^{-1} starts in a pool of all bodies' nv_i x nv_i blocks (offset[0] = 0);
// returns the pool's size. For the workspaces of every kernel that eliminates joints.
inline int pool_joint_blocks(const Model& model, std::vector<int>& offset) {
  offset.assign(static_cast<size_t>(model.num_bodies()), 0);
  int size = 0;
  for (int i = 1; i < model.num_bodies(); ++i) {
    offset[static_cast<size_t>(i)] = size;
    size += model.bodies[i].nv * model.bodies[i].nv;
  }
  return size;
}

// H^a_i = H^A_i - (U_i D_i^{-1}) U_i^T, in place: what the parent receives (before transforming).
template <class S>
BATCHDYN_INLINE void project_out_joint(int nv, const Force<S>* U, const Force<S>* U_Dinv, ArticulatedInertia<S>& articulated_inertia) {
  for (int k = 0; k < nv; ++k) articulated_inertia.subtract_outer(U_Dinv[k], U[k]);
}

// P_i f = f - (U_i D_i^{-1}) (S_i^T f): the part of a force on body i that reaches its parent
// once joint i has moved as it must (eq. 8). Also returns S_i^T f in St_f (nv_i values).
template <class S>
BATCHDYN_INLINE Force<S> propagate_force(const ModelConstants<S>& c, int i, const Force<S>* U_Dinv, const Force<S>& f, S* St_f) {
  Force<S> out = f;
  for (int k = 0; k < c.tree[i].nv; ++k) {
    St_f[k] = subspace_transpose_times(c, i, f, k);
    out -= U_Dinv[k] * St_f[k];
  }
  return out;
}

}  // namespace batchdyn
