// Forward kinematics: placements, spatial velocities and accelerations of every body, and the
// placement / velocity / acceleration of frames. Featherstone's first forward sweep.
#pragma once

#include <utility>

#include "kernels/tree/data.hpp"
#include "kernels/tree/joint.hpp"

namespace batchdyn {

// The kinematics step of body i, shared by every kernel's first forward sweep (ABA, PV-OSIMr,
// the reference kinematics): ^{λ(i)}M_i for the joint's coordinates. Lane-generic.
// A rotating joint (revolute, spherical) adds no translation, so the placement's translation is
// the joint placement's; a revolute joint about e_k costs a plane rotation of the joint
// placement's rotation, or nothing when that is the identity (BodyPlan::rotation_axis).
template <class S>
BATCHDYN_INLINE Transform<S> body_placement(const ModelConstants<S>& c, int i, const S* q) {
  const BodyPlan& body = c.tree[i];
  const Transform<S>& J = c.joint_placement[i];
  const JointAxis<S>& axis = c.joint_axis[i];
  const S* qi = q + body.idx_q;
  if (body.rotation_axis >= 0) {
    // not a structured binding: Clang before 16 cannot capture one in a lambda (the fuzz build uses Clang 14)
    const std::pair<S, S> sin_cos = lane_sincos(qi[0]);
    const S& sn = sin_cos.first, &cs = sin_cos.second;
    return with_axis(body.rotation_axis, [&](auto K) -> Transform<S> {
      return {axis_rotation<K.value>(cs, sn), J.translation};
    });
  }
  const bool revolute = body.joint_type == JointType::Revolute || body.joint_type == JointType::Continuous;
  if (revolute && axis.coordinate >= 0) {
    // not a structured binding: Clang before 16 cannot capture one in a lambda (the fuzz build uses Clang 14)
    const std::pair<S, S> sin_cos = lane_sincos(qi[0]);
    const S& sn = sin_cos.first, &cs = sin_cos.second;
    return with_axis(axis.coordinate, [&](auto K) -> Transform<S> {
      return {times_axis_rotation<K.value>(J.rotation, cs, sn), J.translation};
    });
  }
  if (revolute || body.joint_type == JointType::Spherical)
    return {J.rotation * joint_transform(c, i, qi).rotation, J.translation};
  return J * joint_transform(c, i, qi);
}

// The velocity half of the step: v_i = ^iX_{λ(i)} v_{λ(i)} + v_J with v_J = S_i qd_i (returned
// in joint_velocity, which ABA needs for c_i = v_i x v_J).
template <class S>
BATCHDYN_INLINE Motion<S> body_velocity(const ModelConstants<S>& c, int i, const Transform<S>& parent_from_body,
                        const Motion<S>& parent_velocity, const S* v, Motion<S>& joint_velocity) {
  joint_velocity = subspace_times(c, i, v + c.tree[i].idx_v);
  Motion<S> velocity = motion_to_body(c, i, parent_from_body, parent_velocity);
  add_subspace_times(c, i, v + c.tree[i].idx_v, velocity);
  return velocity;
}

// One body of a forward sweep on lanes: its world placement and body-frame velocity from its
// parent's (world_from_body, velocity indexed by body). Returns ^{λ(i)}M_i; joint_velocity gets
// v_J = S_i qd_i. The frame observations and the sensors sweep with it.
template <class S>
BATCHDYN_INLINE Transform<S> sweep_pose_and_velocity(const ModelConstants<S>& c, int i, const S* q, const S* v,
                                                     Transform<S>* world_from_body, Motion<S>* velocity, Motion<S>& joint_velocity) {
  const int parent = c.tree[static_cast<size_t>(i)].parent;
  const Transform<S> X = body_placement(c, i, q);
  velocity[i] = body_velocity(c, i, X, velocity[parent], v, joint_velocity);
  world_from_body[i] = world_placement(c, i, world_from_body[parent], X);
  return X;
}

// Placements of every body on raw lane arrays: parent_from_body[i] = ^{λ(i)}M_i (n entries,
// [0] untouched). O(n), no allocation.
template <class S>
void placement_sweep(const ModelConstants<S>& c, const S* q, Transform<S>* parent_from_body) {
  const int n = static_cast<int>(c.tree.size());
  for (int i = 1; i < n; ++i) parent_from_body[i] = body_placement(c, i, q);
}

// Placements only: data.parent_from_body and data.world_from_body. O(n).
template <class S>
void forward_kinematics(const Model& model, Data<S>& data, const VectorX<S>& q) {
  const ModelConstants<S>& c = data.constants;
  placement_sweep(c, q.data(), data.parent_from_body.data());
  data.world_from_body[0] = Transform<S>::identity();
  for (int i = 1; i < model.num_bodies(); ++i)
    data.world_from_body[i] = world_placement(c, i, data.world_from_body[c.tree[i].parent], data.parent_from_body[i]);
}

// Placements, velocities v_i and accelerations a_i (body frames) for given q, v, qdd.
// `base_acceleration` is a_0 in the world frame: -gravity for dynamics, zero for pure
// kinematics (e.g. the constraint drift); data.constants.base_acceleration is -g (DESIGN.md
// §2: gravity is a base acceleration). O(n).
template <class S>
void forward_kinematics(const Model& model, Data<S>& data, const VectorX<S>& q, const VectorX<S>& v,
                        const VectorX<S>& qdd, const Motion<S>& base_acceleration) {
  forward_kinematics(model, data, q);
  const ModelConstants<S>& c = data.constants;
  data.velocity[0] = Motion<S>::zero();
  data.acceleration[0] = base_acceleration;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const int parent = c.tree[i].parent;
    const Transform<S>& X = data.parent_from_body[i];
    Motion<S> vj;
    data.velocity[i] = body_velocity(c, i, X, data.velocity[parent], v.data(), vj);
    data.acceleration[i] = motion_to_body(c, i, X, data.acceleration[parent]) + subspace_times(c, i, qdd.data() + c.tree[i].idx_v) +
                           cross(data.velocity[i], vj);
  }
}

// ^0M_f of frame f (after forward_kinematics).
template <class S>
Transform<S> frame_placement(const Model& model, const Data<S>& data, int frame) {
  const Frame& f = model.frames[frame];
  return data.world_from_body[f.body] * cast_transform<S>(f.placement);
}

// Spatial velocity of a body-fixed frame, expressed in that frame.
template <class S>
Motion<S> frame_velocity(const Data<S>& data, int body, const Transform<S>& placement_in_body) {
  return placement_in_body.act_inv(data.velocity[body]);
}
// Spatial acceleration of a body-fixed frame, expressed in that frame.
template <class S>
Motion<S> frame_acceleration(const Data<S>& data, int body, const Transform<S>& placement_in_body) {
  return placement_in_body.act_inv(data.acceleration[body]);
}

}  // namespace batchdyn
