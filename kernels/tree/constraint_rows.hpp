// Constraint rows on lanes, one body at a time: the rows K_t (dim x 6) a constraint puts on
// one of its bodies (a *terminal*, topology/delassus_plan.hpp), kept as their transposes, the
// dim spatial forces K_t^T e_r in the body's frame. Row r maps the body's spatial acceleration
// a (body frame) to the constraint-space acceleration dot(K_t^T e_r, a); column r is the force
// a unit multiplier of row r applies to the body. The stacked J of kernels/loops/constraints.hpp is
// the sum of its terminals' rows times each body's frame Jacobian:
//   weld (6):     basis forces e_0..e_5 at the origin of constraint frame 1
//   revolute (5): linear e_0..e_2 and the moments about the two normals of the axis
//   connect (3):  linear e_0..e_2, applied at each side's own point (the origin of its frame)
// Side 1 carries them with sign +1, side 2 with sign -1, expressed in that side's body.
#pragma once

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// A constraint's numbers for the lane kernels: its two frames in their bodies, and for a
// revolute constraint the two directions orthogonal to its axis (frame 1) that its angular
// rows constrain (below).
template <class S>
struct ConstraintConstants {
  ConstraintType type = ConstraintType::Weld;
  int body1 = 0, body2 = 0;
  int row = 0, dim = 0;
  Transform<S> placement1, placement2;  // ^{b1}M_{c1}, ^{b2}M_{c2}
  Vec3<S> normal1, normal2;             // revolute: orthonormal completion of the axis
  S kp = S(0), kd = S(0);               // Baumgarte gains: k = -kp * position_error - kd * velocity_error
  bool uses_position_error = false;     // kp != 0 (the position error costs a log6)
  bool velocity_level = false;          // rows on qdd alone, without J̇v (Constraint::velocity_level)
  // Side 1's force columns K^1^T e_r in body1's frame (terminal_force_columns with placement1),
  // the first `dim` of them: constant, since frame 1 is fixed in body 1. ModelConstants forms
  // them once; the kernels copy them instead of forming them per call.
  Force<S> body1_columns[6];
  // sum_r K^1_r^T K^1_r over those columns (symmetric 6x6): LCABA's penalty term on body 1 is mu
  // times it (lcaba-proxbbo eq. 25), one scaled add instead of dim rank-1 updates per call.
  ArticulatedInertia<S> body1_gram;
};

// Basis force r of the constraint, in constraint frame 1 (before moving it to a body).
template <class S>
Force<S> constraint_basis_force(const ConstraintConstants<S>& k, int r) {
  Force<S> f = Force<S>::zero();
  if (r < 3) f.linear[r] = S(1);
  else if (k.type == ConstraintType::Weld) f.angular[r - 3] = S(1);
  else f.angular = r == 3 ? k.normal1 : k.normal2;  // revolute
  return f;
}

// The k.dim force columns of one terminal. `body_from_frame1` is ^{b}M_{c1}: the constraint's
// frame 1 seen from the terminal's body (placement1 on side 1; ^{b2}M_0 ^0M_{b1} placement1 on
// side 2). sign = +1 for side 1, -1 for side 2.
template <class S>
void terminal_force_columns(const ConstraintConstants<S>& k, int sign, const Transform<S>& body_from_frame1,
                            Force<S>* columns) {
  const S s(static_cast<double>(sign));
  // A connect acts at each side's own point; the other types at frame 1's origin.
  const Vec3<S>& point = k.type == ConstraintType::Connect && sign < 0 ? k.placement2.translation : body_from_frame1.translation;
  for (int r = 0; r < k.dim; ++r) {
    const Force<S> f = constraint_basis_force(k, r);
    const Vec3<S> lin = body_from_frame1.rotation * f.linear;
    columns[r] = Force<S>{lin, body_from_frame1.rotation * f.angular + cross(point, lin)} * s;
  }
}

// K^2 a for a side 2 on the world (body2 = 0) without its force columns: with T = ^0M_{c1}
// (a connect's at its own point, placement2), column r is -T* e_r, so K^2_r a = -e_r . T^-1 a
// (a force and a motion pair the same in every frame). dim values into `out`.
template <class S>
void world_side_rows_times(const ConstraintConstants<S>& k, const Transform<S>& world_from_frame1, const Motion<S>& a, S* out) {
  const Transform<S> at_point{world_from_frame1.rotation,
                              k.type == ConstraintType::Connect ? k.placement2.translation : world_from_frame1.translation};
  const Motion<S> in_frame = at_point.act_inv(a);
  for (int r = 0; r < k.dim; ++r) out[r] = -dot(constraint_basis_force(k, r), in_frame);
}

// ^{b2}M_{c1} for side 2 of an internal loop, from the world placements of both bodies.
template <class S>
Transform<S> body2_from_frame1(const ConstraintConstants<S>& k, const Transform<S>* world_from_body) {
  return world_from_body[k.body2].inverse() * (world_from_body[k.body1] * k.placement1);
}

}  // namespace batchdyn
