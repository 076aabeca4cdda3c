// The joint model: what each joint type (topology/model.hpp) does to its child body, for every
// layer that moves bodies — the transform its coordinates add and its motion subspace S
// (columns expressed in the child body's frame). The subspace of each type is one angular axis
// (revolute, continuous), one linear axis (prismatic), the angular identity (spherical) or the
// identity (free flyer), so I S, S^T f and S x never need a 6 x nv product.
//
// Lane-generic (S a scalar or a SIMD lane): the kernels call these on lanes through their
// per-body tables (kernels/tree/joint.hpp), the model edits (lock_joints, hold_at_configuration) on
// doubles. Branches are on the joint *type*, a property of the model, never on state values.
#pragma once

#include <utility>

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// A 1-dof joint's axis and what Rodrigues' formula needs of it (unused by the other types).
// An axis that is exactly a coordinate axis e_k (Pinocchio's RX, RY, RZ, PX, PY, PZ joints; most
// URDF joints) records k in `coordinate`: its S is a unit column, so S x, S^T f and I S select
// entries instead of multiplying, and its rotation is a plane rotation.
template <class S>
struct JointAxis {
  Vec3<S> axis;                // unit axis in the joint frame
  Mat3<S> skew, skew_squared;  // K = [axis]x, K^2
  int coordinate = -1;         // k when axis == e_k, else -1
};

// k when `axis` is exactly e_k, else -1.
inline int coordinate_axis(const Vec3d& axis) {
  for (int k = 0; k < 3; ++k)
    if (axis[k] == 1.0 && axis[(k + 1) % 3] == 0.0 && axis[(k + 2) % 3] == 0.0) return k;
  return -1;
}

template <class S>
JointAxis<S> joint_axis(const Vec3d& axis) {
  const Mat3d K = Mat3d::skew(axis);
  return {cast3<S>(axis), cast3<S>(K), cast3<S>(K * K), coordinate_axis(axis)};
}

// Joint frame -> child body frame for the joint's coordinates q (nq of them).
template <class S>
BATCHDYN_INLINE Transform<S> joint_transform(JointType type, const JointAxis<S>& a, const S* q) {
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous:  // Rodrigues: R = I + sin(q) K + (1 - cos(q)) K^2
      if (a.coordinate >= 0) {
        // not a structured binding: Clang before 16 cannot capture one in a lambda (the fuzz build uses Clang 14)
        const std::pair<S, S> sin_cos = lane_sincos(q[0]);
        const S& sn = sin_cos.first, &cs = sin_cos.second;
        return with_axis(a.coordinate, [&](auto K) -> Transform<S> { return {axis_rotation<K.value>(cs, sn), Vec3<S>::zero()}; });
      }
      return {Mat3<S>::identity() + a.skew * lane_sin(q[0]) + a.skew_squared * (S(1) - lane_cos(q[0])), Vec3<S>::zero()};
    case JointType::Prismatic: {
      if (a.coordinate < 0) return {Mat3<S>::identity(), a.axis * q[0]};
      Transform<S> X = Transform<S>::identity();
      with_axis(a.coordinate, [&](auto K) { X.translation[K.value] = q[0]; });
      return X;
    }
    case JointType::FreeFlyer:
      return {quaternion_rotation(q[3], q[4], q[5], q[6]), {q[0], q[1], q[2]}};
    case JointType::Spherical:
      return {quaternion_rotation(q[0], q[1], q[2], q[3]), Vec3<S>::zero()};
  }
  return Transform<S>::identity();
}

// x e_k as a motion: e_k among the linear (`linear`) or the angular coordinates; no arithmetic.
template <class S>
BATCHDYN_INLINE Motion<S> unit_column_times(bool linear, int k, const S& x) {
  Motion<S> m = Motion<S>::zero();
  with_axis(k, [&](auto K) { (linear ? m.linear : m.angular)[K.value] = x; });
  return m;
}

// S x for joint-space x (nv values), e.g. the joint velocity S qd (the joint bias c_J is zero
// for every supported joint type).
template <class S>
BATCHDYN_INLINE Motion<S> joint_subspace_times(JointType type, const JointAxis<S>& a, const S* x) {
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous:
      if (a.coordinate >= 0) return unit_column_times(false, a.coordinate, x[0]);
      return {Vec3<S>::zero(), a.axis * x[0]};
    case JointType::Prismatic:
      if (a.coordinate >= 0) return unit_column_times(true, a.coordinate, x[0]);
      return {a.axis * x[0], Vec3<S>::zero()};
    case JointType::FreeFlyer: return {{x[0], x[1], x[2]}, {x[3], x[4], x[5]}};
    case JointType::Spherical: return {Vec3<S>::zero(), {x[0], x[1], x[2]}};
  }
  return Motion<S>::zero();
}

// Column k of S.
template <class S>
BATCHDYN_INLINE Motion<S> joint_subspace_column(JointType type, const JointAxis<S>& a, int k) {
  Motion<S> m = Motion<S>::zero();
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous: return {Vec3<S>::zero(), a.axis};
    case JointType::Prismatic: return {a.axis, Vec3<S>::zero()};
    case JointType::FreeFlyer: m[k] = S(1); return m;
    case JointType::Spherical: m[3 + k] = S(1); return m;
  }
  return m;
}

// Row k of S^T f.
template <class S>
BATCHDYN_INLINE S joint_subspace_transpose_times(JointType type, const JointAxis<S>& a, const Force<S>& f, int k) {
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous:
      if (a.coordinate >= 0) return with_axis(a.coordinate, [&](auto K) { return f.angular[K.value]; });
      return dot(a.axis, f.angular);
    case JointType::Prismatic:
      if (a.coordinate >= 0) return with_axis(a.coordinate, [&](auto K) { return f.linear[K.value]; });
      return dot(a.axis, f.linear);
    case JointType::FreeFlyer: return f[k];
    case JointType::Spherical: return f[3 + k];
  }
  return S(0);
}

// Column k of I S.
template <class S>
BATCHDYN_INLINE Force<S> joint_inertia_times_subspace(JointType type, const JointAxis<S>& a, const ArticulatedInertia<S>& I, int k) {
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous: return a.coordinate >= 0 ? I.angular_column(a.coordinate) : I.times_angular(a.axis);
    case JointType::Prismatic: return a.coordinate >= 0 ? I.column(a.coordinate) : I.times_linear(a.axis);
    case JointType::FreeFlyer: return I.column(k);
    case JointType::Spherical: return I.angular_column(k);
  }
  return Force<S>::zero();
}

// Body i's placement in its parent, ^{λ(i)}M_i, at the joint coordinates q (nq of them), in
// double: for the model edits that need a configuration's geometry. The kernels' version walks
// their lane tables (kernels/tree/kinematics.hpp: body_placement).
inline Transformd body_placement_at(const Body& body, const double* q) {
  return body.joint_placement * joint_transform(body.joint_type, joint_axis<double>(body.axis), q);
}

}  // namespace batchdyn
