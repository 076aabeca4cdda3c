// Forward kinematics: placements, spatial velocities and accelerations of every body, and the
// placement / velocity / acceleration of frames. Featherstone's first forward sweep.
#pragma once

#include "kernels/data.hpp"
#include "kernels/joint.hpp"

namespace batchdyn {

// Placements only: data.parent_from_body and data.world_from_body. O(n).
template <class S>
void forward_kinematics(const Model& model, Data<S>& data, const VectorX<S>& q) {
  const ModelConstants<S>& c = data.constants;
  data.world_from_body[0] = Transform<S>::identity();
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& body = model.bodies[i];
    data.parent_from_body[i] = c.joint_placement[i] * joint_transform(body, c, i, q.data() + body.idx_q);
    data.world_from_body[i] = data.world_from_body[body.parent] * data.parent_from_body[i];
  }
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
    const Body& body = model.bodies[i];
    const Transform<S>& X = data.parent_from_body[i];
    const Motion<S> vj = subspace_times(body, c, i, v.data() + body.idx_v);
    data.velocity[i] = X.act_inv(data.velocity[body.parent]) + vj;
    data.acceleration[i] = X.act_inv(data.acceleration[body.parent]) + subspace_times(body, c, i, qdd.data() + body.idx_v) +
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
