// Constraint kinematics: the stacked constraint Jacobian J, the drift J̇v, the position and
// velocity errors and the desired acceleration k, so that the acceleration-level rows read
//     J qdd + drift = k,     k = -kp * position_error - kd * velocity_error      (DESIGN.md §2)
// Rows of each constraint are expressed in its constraint frame 1 (on link1).
//
// With v1, v2 the spatial velocities of constraint frames 1 and 2 (each in its own frame),
// ^1X_2 the motion transform from frame 2 to frame 1 and a1, a2 the frames' accelerations at
// qdd = 0 without gravity:
//   weld (6 rows):     nu = v1 - ^1X_2 v2,          drift = a1 - ^1X_2 a2 + v1 x (^1X_2 v2)
//   revolute (5 rows): the 3 linear weld rows and the 2 angular rows orthogonal to the axis
//   connect (3 rows):  nu = v1.lin - ^1R_2 v2.lin   (difference of the two points' velocities),
//                      drift = (a1.lin + w1 x v1.lin) - ^1R_2 (a2.lin + w2 x v2.lin)
// For connect the drift makes J qdd + drift the difference of the points' classical
// accelerations in frame 1's axes. A constraint at the velocity level (Constraint::velocity_level,
// step()'s loop stabilisation) has drift = 0: its rows read J qdd = k, with k from the position
// error above its rounding floor (kernels/loops/velocity_level_rows.hpp).
#pragma once

#include <cmath>

#include "kernels/tree/jacobian.hpp"
#include "kernels/loops/velocity_level_rows.hpp"
#include "layout/lie_group.hpp"

namespace batchdyn {

template <class S>
struct ConstraintData {
  explicit ConstraintData(const Model& model)
      : J(MatrixX<S>::Zero(model.constraint_rows, model.nv)), drift(VectorX<S>::Zero(model.constraint_rows)),
        position_error(VectorX<S>::Zero(model.constraint_rows)), velocity_error(VectorX<S>::Zero(model.constraint_rows)),
        k(VectorX<S>::Zero(model.constraint_rows)), J1(MatrixX<S>::Zero(6, model.nv)), J2(MatrixX<S>::Zero(6, model.nv)) {}
  MatrixX<S> J;               // m x nv
  VectorX<S> drift;           // J̇v (see above; 0 for a velocity-level constraint), m
  VectorX<S> position_error;  // m (weld: -log6(^1M_2); connect: position of point 1 - point 2 in frame 1)
  VectorX<S> velocity_error;  // nu = J v, m
  VectorX<S> k;               // desired constraint acceleration, m
  MatrixX<S> J1, J2;          // scratch: 6 x nv frame Jacobians
};

// Fills cdata from q and v. Overwrites data's kinematics (velocities and accelerations at
// qdd = 0, zero base acceleration). O(m * nv * depth).
template <class S>
void constraint_kinematics(const Model& model, Data<S>& data, ConstraintData<S>& cdata, const VectorX<S>& q,
                           const VectorX<S>& v) {
  forward_kinematics(model, data, q, v, data.zero, Motion<S>::zero());
  for (const Constraint& c : model.constraints) {
    const Transform<S> P1 = cast_transform<S>(c.placement1), P2 = cast_transform<S>(c.placement2);
    const Transform<S> world_from_c1 = data.world_from_body[c.body1] * P1;
    const Transform<S> world_from_c2 = data.world_from_body[c.body2] * P2;
    const Transform<S> c1_from_c2 = world_from_c1.inverse() * world_from_c2;
    body_frame_jacobian(model, data, c.body1, P1, cdata.J1);
    body_frame_jacobian(model, data, c.body2, P2, cdata.J2);
    const Motion<S> v1 = frame_velocity(data, c.body1, P1), v2 = frame_velocity(data, c.body2, P2);
    const Motion<S> a1 = frame_acceleration(data, c.body1, P1), a2 = frame_acceleration(data, c.body2, P2);

    // The six weld rows; connect and revolute select from / adapt them.
    Motion<S> drift6, nu6, err6;
    const Motion<S> v2_in_1 = c1_from_c2.act(v2);
    nu6 = v1 - v2_in_1;
    drift6 = a1 - c1_from_c2.act(a2) + cross(v1, v2_in_1);
    err6 = -log6(c1_from_c2);
    // Jacobian rows J1 - ^1X_2 J2 (column by column).
    auto weld_column = [&](int col) {
      Motion<S> m1, m2;
      for (int r = 0; r < 6; ++r) { m1[r] = cdata.J1(r, col); m2[r] = cdata.J2(r, col); }
      return m1 - c1_from_c2.act(m2);
    };

    const int row = c.row;
    if (c.type == ConstraintType::Weld) {
      for (int col = 0; col < model.nv; ++col) {
        const Motion<S> m = weld_column(col);
        for (int r = 0; r < 6; ++r) cdata.J(row + r, col) = m[r];
      }
      for (int r = 0; r < 6; ++r) {
        cdata.drift[row + r] = drift6[r];
        cdata.velocity_error[row + r] = nu6[r];
        cdata.position_error[row + r] = err6[r];
      }
    } else if (c.type == ConstraintType::Revolute) {
      Vec3d b1d, b2d;
      perpendicular_basis(c.axis, b1d, b2d);
      const Vec3<S> b[2] = {cast3<S>(b1d), cast3<S>(b2d)};
      for (int col = 0; col < model.nv; ++col) {
        const Motion<S> m = weld_column(col);
        for (int r = 0; r < 3; ++r) cdata.J(row + r, col) = m.linear[r];
        for (int r = 0; r < 2; ++r) cdata.J(row + 3 + r, col) = dot(b[r], m.angular);
      }
      for (int r = 0; r < 3; ++r) {
        cdata.drift[row + r] = drift6.linear[r];
        cdata.velocity_error[row + r] = nu6.linear[r];
        cdata.position_error[row + r] = err6.linear[r];
      }
      for (int r = 0; r < 2; ++r) {
        cdata.drift[row + 3 + r] = dot(b[r], drift6.angular);
        cdata.velocity_error[row + 3 + r] = dot(b[r], nu6.angular);
        cdata.position_error[row + 3 + r] = dot(b[r], err6.angular);
      }
    } else {  // Connect
      const Mat3<S>& R12 = c1_from_c2.rotation;
      for (int col = 0; col < model.nv; ++col) {
        const Vec3<S> l1{cdata.J1(0, col), cdata.J1(1, col), cdata.J1(2, col)};
        const Vec3<S> l2{cdata.J2(0, col), cdata.J2(1, col), cdata.J2(2, col)};
        const Vec3<S> m = l1 - R12 * l2;
        for (int r = 0; r < 3; ++r) cdata.J(row + r, col) = m[r];
      }
      const Vec3<S> acc1 = a1.linear + cross(v1.angular, v1.linear);
      const Vec3<S> acc2 = a2.linear + cross(v2.angular, v2.linear);
      const Vec3<S> d = acc1 - R12 * acc2;
      const Vec3<S> nu = v1.linear - R12 * v2.linear;
      const Vec3<S> e = -c1_from_c2.translation;
      for (int r = 0; r < 3; ++r) {
        cdata.drift[row + r] = d[r];
        cdata.velocity_error[row + r] = nu[r];
        cdata.position_error[row + r] = e[r];
      }
    }
    for (int r = 0; r < c.dim; ++r) {
      // A velocity-level row: J qdd = k (no drift), k from the error above its rounding floor.
      const S error = c.velocity_level ? velocity_level_position_error(cdata.position_error[row + r]) : cdata.position_error[row + r];
      cdata.k[row + r] = -S(c.kp) * error - S(c.kd) * cdata.velocity_error[row + r];
      if (c.velocity_level) cdata.drift[row + r] = S(0);
    }
  }
}

}  // namespace batchdyn
