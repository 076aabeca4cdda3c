// Joint models: the transform a joint adds for its coordinates and its motion subspace S_i
// (columns expressed in the child body frame), for every kernel. The subspace of each joint
// type is one angular axis (revolute, continuous), one linear axis (prismatic), the angular
// identity (spherical) or the identity (free flyer), so I S_i, S_i^T f and S_i x never need a 6 x nv product. Branches here are on
// the joint *type*, a property of the model, never on state values.
#pragma once

#include <cmath>

#include "layout/lanes.hpp"
#include "layout/model_constants.hpp"
#include "layout/spatial.hpp"

namespace batchdyn {

// Joint frame -> child body frame for body i's joint coordinates (q points at idx_q).
template <class S>
BATCHDYN_INLINE Transform<S> joint_transform(const ModelConstants<S>& c, int i, const S* q) {
  switch (c.tree[i].joint_type) {
    case JointType::Revolute:
    case JointType::Continuous:  // Rodrigues: R = I + sin(q) K + (1 - cos(q)) K^2
      return {Mat3<S>::identity() + c.axis_skew[i] * sin(q[0]) + c.axis_skew_squared[i] * (S(1) - cos(q[0])),
              Vec3<S>::zero()};
    case JointType::Prismatic:
      return {Mat3<S>::identity(), c.axis[i] * q[0]};
    case JointType::FreeFlyer:
      return {quaternion_rotation(q[3], q[4], q[5], q[6]), {q[0], q[1], q[2]}};
    case JointType::Spherical:
      return {quaternion_rotation(q[0], q[1], q[2], q[3]), Vec3<S>::zero()};
  }
  return Transform<S>::identity();
}

// S_i x for joint-space x (nv_i values), e.g. the joint velocity S_i qd_i (the joint bias c_J
// is zero for every supported joint type).
template <class S>
BATCHDYN_INLINE Motion<S> subspace_times(const ModelConstants<S>& c, int i, const S* x) {
  switch (c.tree[i].joint_type) {
    case JointType::Revolute:
    case JointType::Continuous: return {Vec3<S>::zero(), c.axis[i] * x[0]};
    case JointType::Prismatic: return {c.axis[i] * x[0], Vec3<S>::zero()};
    case JointType::FreeFlyer: return {{x[0], x[1], x[2]}, {x[3], x[4], x[5]}};
    case JointType::Spherical: return {Vec3<S>::zero(), {x[0], x[1], x[2]}};
  }
  return Motion<S>::zero();
}

// Column k of S_i.
template <class S>
BATCHDYN_INLINE Motion<S> subspace_column(const ModelConstants<S>& c, int i, int k) {
  switch (c.tree[i].joint_type) {
    case JointType::Revolute:
    case JointType::Continuous: return {Vec3<S>::zero(), c.axis[i]};
    case JointType::Prismatic: return {c.axis[i], Vec3<S>::zero()};
    case JointType::FreeFlyer: {
      Motion<S> m = Motion<S>::zero();
      m[k] = S(1);
      return m;
    }
    case JointType::Spherical: {
      Motion<S> m = Motion<S>::zero();
      m[3 + k] = S(1);
      return m;
    }
  }
  return Motion<S>::zero();
}

// Row k of S_i^T f.
template <class S>
BATCHDYN_INLINE S subspace_transpose_times(const ModelConstants<S>& c, int i, const Force<S>& f, int k) {
  switch (c.tree[i].joint_type) {
    case JointType::Revolute:
    case JointType::Continuous: return dot(c.axis[i], f.angular);
    case JointType::Prismatic: return dot(c.axis[i], f.linear);
    case JointType::FreeFlyer: return f[k];
    case JointType::Spherical: return f[3 + k];
  }
  return S(0);
}

// Column k of I S_i.
template <class S>
BATCHDYN_INLINE Force<S> inertia_times_subspace(const ModelConstants<S>& c, int i, const ArticulatedInertia<S>& I, int k) {
  switch (c.tree[i].joint_type) {
    case JointType::Revolute:
    case JointType::Continuous: return I.times_angular(c.axis[i]);
    case JointType::Prismatic: return I.times_linear(c.axis[i]);
    case JointType::FreeFlyer: return I.column(k);
    case JointType::Spherical: return I.angular_column(k);
  }
  return Force<S>::zero();
}

}  // namespace batchdyn
