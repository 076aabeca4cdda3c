// The joint model (topology/joint_model.hpp) on the kernels' per-body tables: body i's joint
// transform and motion subspace S_i from ModelConstants (its type in `tree`, its axis in
// `joint_axis`), for every kernel's sweeps. Branches only on the joint type, never on state.
#pragma once

#include "kernels/tree/model_constants.hpp"
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

// m += S_i x (one add per dof for a coordinate axis).
template <class S>
BATCHDYN_INLINE void add_subspace_times(const ModelConstants<S>& c, int i, const S* x, Motion<S>& m) {
  const JointType type = c.tree[i].joint_type;
  const int k = c.joint_axis[i].coordinate;
  if (k >= 0 && (type == JointType::Revolute || type == JointType::Continuous))
    with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE { m.angular[K.value] += x[0]; });
  else if (k >= 0 && type == JointType::Prismatic)
    with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE { m.linear[K.value] += x[0]; });
  else m += subspace_times(c, i, x);
}

// v x v_J for v_J = S_i qd_i (the joint velocity, from subspace_times): the bias acceleration
// c_i of ABA's first sweep. A 1-dof joint's v_J has one nonzero 3-vector, a coordinate axis one
// nonzero entry, and v x (x e_k) = x (v_b e_a - v_a e_b) with (k, a, b) cyclic.
template <class S>
BATCHDYN_INLINE Motion<S> cross_joint_velocity(const ModelConstants<S>& c, int i, const Motion<S>& v, const Motion<S>& vJ) {
  const JointType type = c.tree[i].joint_type;
  const int k = c.joint_axis[i].coordinate;
  const bool revolute = type == JointType::Revolute || type == JointType::Continuous;
  if (revolute && k >= 0)
    return with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE {
      constexpr int a = (K.value + 1) % 3, b = (K.value + 2) % 3;
      const S x = vJ.angular[K.value];
      Motion<S> r = Motion<S>::zero();
      r.linear[a] = v.linear[b] * x, r.linear[b] = -(v.linear[a] * x);
      r.angular[a] = v.angular[b] * x, r.angular[b] = -(v.angular[a] * x);
      return r;
    });
  if (revolute) return {cross(v.linear, vJ.angular), cross(v.angular, vJ.angular)};
  if (type == JointType::Prismatic) return {cross(v.angular, vJ.linear), Vec3<S>::zero()};
  return cross(v, vJ);
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

// Crossing joint i, X = ^{λ(i)}M_i (from body_placement): when the body's plan has a rotation
// axis k (BodyPlan::rotation_axis), X's rotation is exactly R_k(q_i), so its cosine and sine sit
// in X and a product with it is a plane rotation (layout/spatial.hpp). Otherwise the general
// transform. The branch is on the model, never on the state.
template <int K, class S>
BATCHDYN_INLINE void axis_rotation_of(const Transform<S>& X, S& cosine, S& sine) {
  constexpr int a = (K + 1) % 3, b = (K + 2) % 3;
  cosine = X.rotation.m[a][a], sine = X.rotation.m[b][a];
}

// ^0M_i = ^0M_{λ(i)} ^{λ(i)}M_i: body i's world placement from its parent's.
template <class S>
BATCHDYN_INLINE Transform<S> world_placement(const ModelConstants<S>& c, int i, const Transform<S>& parent_world,
                                             const Transform<S>& X) {
  const int k = c.tree[i].rotation_axis;
  if (k < 0) return parent_world * X;
  return with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE -> Transform<S> {
    S cs, sn;
    axis_rotation_of<K.value>(X, cs, sn);
    return {times_axis_rotation<K.value>(parent_world.rotation, cs, sn), parent_world.act_point(X.translation)};
  });
}

// ^iX_{λ(i)} m: a motion in the parent's frame expressed in body i's (X.act_inv).
template <class S>
BATCHDYN_INLINE Motion<S> motion_to_body(const ModelConstants<S>& c, int i, const Transform<S>& X, const Motion<S>& m) {
  const int k = c.tree[i].rotation_axis;
  if (k < 0) return X.act_inv(m);
  return with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE -> Motion<S> {
    S cs, sn;
    axis_rotation_of<K.value>(X, cs, sn);
    return {rotate_back_about_axis<K.value>(cs, sn, m.linear - cross(X.translation, m.angular)),
            rotate_back_about_axis<K.value>(cs, sn, m.angular)};
  });
}

// ^{λ(i)}X*_i f: a force on body i expressed in the parent's frame (X.act).
template <class S>
BATCHDYN_INLINE Force<S> force_to_parent(const ModelConstants<S>& c, int i, const Transform<S>& X, const Force<S>& f) {
  const int k = c.tree[i].rotation_axis;
  if (k < 0) return X.act(f);
  return with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE -> Force<S> {
    S cs, sn;
    axis_rotation_of<K.value>(X, cs, sn);
    // Formed in place, as Transform::act (layout/spatial.hpp) explains.
    Force<S> out;
    out.linear = rotate_about_axis<K.value>(cs, sn, f.linear);
    out.angular = rotate_about_axis<K.value>(cs, sn, f.angular) + cross(X.translation, out.linear);
    return out;
  });
}

// out = base + ^{λ(i)}X*_i H ^iX_{λ(i)}: an inertia of body i expressed in the parent's frame
// (H.transformed(X)), added to `base` (which may be `out`) as it is formed, never stored alone.
template <class S>
BATCHDYN_INLINE void add_inertia_to_parent(const ModelConstants<S>& c, int i, const Transform<S>& X,
                                           const ArticulatedInertia<S>& H, const ArticulatedInertia<S>& base,
                                           ArticulatedInertia<S>& out) {
  const int k = c.tree[i].rotation_axis;
  if (k < 0) {
    H.add_transformed(X, base, out);
    return;
  }
  with_axis(k, [&](auto K) BATCHDYN_LAMBDA_INLINE {
    S cs, sn;
    axis_rotation_of<K.value>(X, cs, sn);
    H.template add_transformed_about_axis<K.value>(cs, sn, X.translation, base, out);
  });
}

}  // namespace batchdyn
