// Frame Jacobians: the columns ^fX_j S_j mapping v to the spatial velocity of a body-fixed frame,
// expressed in that frame (Pinocchio's LOCAL reference frame). O(nv * depth).
#pragma once

#include "kernels/tree/kinematics.hpp"

namespace batchdyn {

// J (6 x nv, preallocated) of the frame at `placement_in_body` on `body`, after
// forward_kinematics. Columns of joints that do not support the body are zero.
template <class S, class Derived>
void body_frame_jacobian(const Model& model, const Data<S>& data, int body, const Transform<S>& placement_in_body,
                         Eigen::MatrixBase<Derived>& J) {
  J.setZero();
  if (body == 0) return;
  const Transform<S> frame_from_world = (data.world_from_body[body] * placement_in_body).inverse();
  for (int j = body; j > 0; j = model.bodies[j].parent) {
    const Body& b = model.bodies[j];
    const Transform<S> frame_from_joint = frame_from_world * data.world_from_body[j];
    for (int k = 0; k < b.nv; ++k) {
      const Motion<S> column = frame_from_joint.act(subspace_column(data.constants, j, k));
      for (int r = 0; r < 6; ++r) J(r, b.idx_v + k) = column[r];
    }
  }
}

// Jacobian of a named model frame (a URDF link), LOCAL.
template <class S, class Derived>
void frame_jacobian(const Model& model, const Data<S>& data, int frame, Eigen::MatrixBase<Derived>& J) {
  const Frame& f = model.frames[frame];
  body_frame_jacobian(model, data, f.body, cast_transform<S>(f.placement), J);
}

}  // namespace batchdyn
