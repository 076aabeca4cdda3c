// Eliminating joint i from its articulated body, the steps every recursive kernel (ABA, LCABA,
// proxBBO, PV-OSIMr, G x, the singular-joint check) is made of (Featherstone RBDA Table 7.1;
// lcaba-proxbbo Alg. 1; pv-osimr-delassus eq. 7-8):
//   backward:  U_i = H^A_i S_i,   D_i = S_i^T U_i (+ armature),   H^a_i = H^A_i - U_i D_i^{-1} U_i^T,
//              p^a_i = p^A_i + H^a_i c_i + U_i D_i^{-1} u_i, both carried into the parent;
//              the force propagator P_i = I - U_i D_i^{-1} S_i^T applied as
//              P_i f = f - (U_i D_i^{-1}) (S_i^T f);
//   roll-out:  qdd_i = D_i^{-1} (u_i - U_i^T a'_i),   a_i = a'_i + S_i qdd_i.
// Lane-generic, no allocation, branches on the joint type only.
#pragma once

#include <vector>

#include "kernels/tree/joint.hpp"
#include "layout/small_spd_inverse.hpp"

namespace batchdyn {

// From body i's articulated inertia H^A_i: the columns U_i (nv_i forces) and D_i^{-1} (nv_i x
// nv_i, row-major). `extra_diagonal` (nv_i lanes, optional) is added to D_i's diagonal with the
// armature: PV-soft's joint rows (kernels/delassus/pv_soft.hpp).
template <class S>
BATCHDYN_INLINE void eliminate_joint(const ModelConstants<S>& c, int i, const ArticulatedInertia<S>& articulated_inertia, Force<S>* U,
                     S* Dinv, const S* extra_diagonal = nullptr) {
  const int nv = c.tree[i].nv, idx_v = c.tree[i].idx_v;
  if (nv == 1) {  // most joints: D_i is a number (the same operations as below, without the loops)
    U[0] = inertia_times_subspace(c, i, articulated_inertia, 0);
    S D = subspace_transpose_times(c, i, U[0], 0);
    D += c.armature[static_cast<size_t>(idx_v)];
    if (extra_diagonal) D += extra_diagonal[0];
    Dinv[0] = S(1) / D;
    return;
  }
  S D[36];  // D_i = S_i^T U_i + diag(armature_i), nv x nv
  D[0] = S(0);  // every joint has a dof; tells GCC (-Wmaybe-uninitialized, SSE2 builds) that D is written
  for (int k = 0; k < nv; ++k) U[k] = inertia_times_subspace(c, i, articulated_inertia, k);
  for (int r = 0; r < nv; ++r)
    for (int k = 0; k < nv; ++k) D[r * nv + k] = subspace_transpose_times(c, i, U[k], r);
  for (int k = 0; k < nv; ++k) D[k * nv + k] += c.armature[static_cast<size_t>(idx_v + k)];  // rotor inertia on the joint axis
  if (extra_diagonal)
    for (int k = 0; k < nv; ++k) D[k * nv + k] += extra_diagonal[k];
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
  for (int k = 0; k < nv; ++k) articulated_inertia.subtract_symmetric_outer(U_Dinv[k], U[k]);
}

// The inertia half of carrying body i into its parent: H^a_i in place (project_out_joint), then
// H^A_λ += ^λX*_i H^a_i ^iX_λ with X = ^λM_i (kernels/tree/joint.hpp: add_inertia_to_parent). nv = 0
// carries H^A_i as it is (a locked joint). With `parent_body_inertia` (I_λ, the first carry into
// λ: see with_parent_body_inertia), H^A_λ = I_λ + ^λX*_i H^a_i ^iX_λ instead.
template <class S>
BATCHDYN_INLINE void carry_inertia_to_parent(const ModelConstants<S>& c, int i, int nv, const Force<S>* U,
                                             const Force<S>* U_Dinv, const Transform<S>& X,
                                             ArticulatedInertia<S>& inertia, ArticulatedInertia<S>& parent_inertia,
                                             const ArticulatedInertia<S>* parent_body_inertia = nullptr) {
  project_out_joint(nv, U, U_Dinv, inertia);
  add_inertia_to_parent(c, i, X, inertia, parent_body_inertia ? *parent_body_inertia : parent_inertia, parent_inertia);
}

// A backward sweep that copies I_i into H^A_i only for the leaves starts every other H^A_λ at
// the first carry into it (BodyPlan::first_child_carried): carry(&I_λ) for that child, read from
// the model's table or formed here (per-environment inertias keep no table), carry(nullptr) for
// the others. The sum is the copy-then-add's bit for bit, without the copy: 27 lanes per body.
// Three call sites, so that each inlined carry knows whether it adds I_λ.
// `starts_parent` says whether this carry is the first into λ: the tree's
// (BodyPlan::first_child_carried) for the sweeps from n-1 down to 1, the plan's for LCABA's
// elimination order (LcabaPlan::carry_starts_parent).
template <class S, class Carry>
BATCHDYN_INLINE void with_parent_body_inertia(const ModelConstants<S>& c, int i, bool starts_parent, Carry&& carry) {
  const int parent = c.tree[i].parent;
  if (!starts_parent) {
    carry(nullptr);
  } else if (!c.spatial_inertia.empty()) {
    carry(&c.spatial_inertia[static_cast<size_t>(parent)]);  // I_λ
  } else {
    const ArticulatedInertia<S> formed = c.body_spatial_inertia(parent);  // I_λ
    carry(&formed);
  }
}
template <class S, class Carry>
BATCHDYN_INLINE void with_parent_body_inertia(const ModelConstants<S>& c, int i, Carry&& carry) {
  with_parent_body_inertia(c, i, c.tree[i].first_child_carried, carry);
}

// ABA's backward step for body i (RBDA Table 7.1): H^a_i and p^a_i = p^A_i + U_i D_i^{-1} u_i +
// H^a_i c_i carried into the parent (H^A_λ += X* H^a_i X^-1, p^A_λ += X* p^a_i). `inertia` becomes
// H^a_i in place. With `parent_body_inertia` (I_λ: the first carry into λ of a sweep that did
// not copy I_λ into H^A_λ beforehand, BodyPlan::first_child_carried), H^A_λ = I_λ + X* H^a_i X^-1
// instead, the same sum bit for bit.
template <class S>
BATCHDYN_INLINE void carry_to_parent(const ModelConstants<S>& c, int i, const Force<S>* U, const Force<S>* U_Dinv,
                                     const S* u, const Motion<S>& bias_acceleration, const Transform<S>& X,
                                     ArticulatedInertia<S>& inertia, const Force<S>& bias,
                                     ArticulatedInertia<S>& parent_inertia, Force<S>& parent_bias,
                                     const ArticulatedInertia<S>* parent_body_inertia = nullptr) {
  const int nv = c.tree[i].nv;
  project_out_joint(nv, U, U_Dinv, inertia);
  Force<S> pa = bias;
  for (int k = 0; k < nv; ++k) pa += U_Dinv[k] * u[k];
  pa += inertia * bias_acceleration;
  add_inertia_to_parent(c, i, X, inertia, parent_body_inertia ? *parent_body_inertia : parent_inertia, parent_inertia);
  parent_bias += force_to_parent(c, i, X, pa);
}

// The force half alone, as the loop kernels' reduced sweeps carry a change of the bias forces
// (lcaba-proxbbo Alg. 2, 5): p_λ += ^λX*_i (p_i + U_i D_i^{-1} u_i).
template <class S>
BATCHDYN_INLINE void carry_force_to_parent(const ModelConstants<S>& c, int i, const Force<S>* U_Dinv, const S* u,
                                           const Transform<S>& X, Force<S> force, Force<S>& parent_force) {
  for (int k = 0; k < c.tree[i].nv; ++k) force += U_Dinv[k] * u[k];
  parent_force += force_to_parent(c, i, X, force);
}

// Joint i's step of a roll-out (lcaba-proxbbo Alg. 1 lines 30-33): with a' the acceleration of
// body i at qdd_i = 0 (^iX_λ a_λ, plus c_i) and u the joint's force, qdd_i = D_i^{-1} (u - U_i^T a'
// - coupling) into `qdd` and a_i = a' + S_i qdd_i returned. `coupling(rhs)` subtracts what a
// kernel adds to the right-hand side (LCABA's neighbours, proxBBO's multipliers), after U_i^T a'.
template <class S, class Coupling>
BATCHDYN_INLINE Motion<S> roll_out_joint(const ModelConstants<S>& c, int i, const Force<S>* U, const S* Dinv, const Motion<S>& a,
                                         const S* u, S* qdd, Coupling&& coupling) {
  const int nv = c.tree[i].nv;
  S rhs[6];
  for (int k = 0; k < nv; ++k) rhs[k] = u[k] - dot(U[k], a);
  coupling(rhs);
  Dinv_times(nv, Dinv, rhs, qdd);
  Motion<S> acceleration = a;
  add_subspace_times(c, i, qdd, acceleration);
  return acceleration;
}
template <class S>
BATCHDYN_INLINE Motion<S> roll_out_joint(const ModelConstants<S>& c, int i, const Force<S>* U, const S* Dinv, const Motion<S>& a,
                                         const S* u, S* qdd) {
  return roll_out_joint(c, i, U, Dinv, a, u, qdd, [](S*) {});
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
