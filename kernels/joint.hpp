// Joint models: the transform a joint adds for its coordinates and its motion subspace S_i
// (columns expressed in the child body frame). Branches here are on the joint *type*, a
// property of the model, never on state values.
#pragma once

#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

template <class S> Vec3<S> cast3(const Vec3d& v) { return {S(v.x), S(v.y), S(v.z)}; }
template <class S> Mat3<S> cast3(const Mat3d& m) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = S(m.m[i][j]);
  return r;
}
template <class S> Transform<S> cast_transform(const Transformd& T) { return {cast3<S>(T.rotation), cast3<S>(T.translation)}; }
template <class S> RigidInertia<S> cast_inertia(const RigidInertiad& I) {
  return {S(I.mass), cast3<S>(I.com), cast3<S>(I.inertia_com)};
}

// Joint frame -> child body frame transform for the joint's coordinates q_i (q points at idx_q).
template <class S>
Transform<S> joint_transform(const Body& body, const S* q) {
  switch (body.joint_type) {
    case JointType::Revolute:
    case JointType::Continuous:
      return {axis_angle_rotation(cast3<S>(body.axis), q[0]), Vec3<S>::zero()};
    case JointType::Prismatic:
      return {Mat3<S>::identity(), cast3<S>(body.axis) * q[0]};
    case JointType::FreeFlyer:
      return {quaternion_rotation(q[3], q[4], q[5], q[6]), {q[0], q[1], q[2]}};
  }
  return Transform<S>::identity();
}

// Column k of the motion subspace S_i.
template <class S>
Motion<S> motion_subspace(const Body& body, int k) {
  switch (body.joint_type) {
    case JointType::Revolute:
    case JointType::Continuous:
      return {Vec3<S>::zero(), cast3<S>(body.axis)};
    case JointType::Prismatic:
      return {cast3<S>(body.axis), Vec3<S>::zero()};
    case JointType::FreeFlyer: {
      Motion<S> m = Motion<S>::zero();
      m[k] = S(1);
      return m;
    }
  }
  return Motion<S>::zero();
}

// S_i qd_i, the joint velocity (joint bias c_J is zero for every supported joint type).
template <class S>
Motion<S> joint_velocity(const Body& body, const S* v) {
  Motion<S> m = Motion<S>::zero();
  for (int k = 0; k < body.nv; ++k) m += motion_subspace<S>(body, k) * v[k];
  return m;
}

}  // namespace batchdyn
