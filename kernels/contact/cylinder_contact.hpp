// A cylinder against the ground (CollisionShape::Cylinder): the points its
// kCylinderContactsPerGeometry candidate slots take at this step, per lane, as MuJoCo's
// plane-cylinder collision places its contacts (engine_collision_primitive.c, mjc_PlaneCylinder):
//   0: the deepest point of the cap nearer the ground, on its rim (exact against a plane);
//   1: the same rim point of the other cap (a cylinder lying on its side touches along a line:
//      slots 0 and 1 are its ends);
//   2, 3: the near cap's rim at +-120 degrees from slot 0 (a cylinder standing on a cap rests on
//      the triangle of slots 0, 2 and 3).
// Each point's gap is measured to the ground below it (the plane, or a height field's surface);
// the direction of "deepest" is the ground's normal under the cylinder's centre. Closed forms and
// selects, no branch on the state. An upright cylinder (axis along the normal, where the deepest
// rim point is not unique) takes its rim's point along the geometry's x axis.
#pragma once

#include <cmath>

#include "kernels/contact/hull_contact.hpp"

namespace batchdyn {

// The slots of cylinder `g` on a body placed at X (world).
template <class S>
GroundSlots<S> cylinder_ground_slots(const CollisionGeometry& g, const Transform<S>& X, const GroundLanes<S>& ground) {
  using std::sqrt;
  using T = lane_scalar<S>;
  const Vec3<S> centre = X.act_point(cast3<S>(g.in_body.translation));
  const Vec3<S> z_axis = X.rotation * cast3<S>(g.in_body.rotation * Vec3d{0.0, 0.0, 1.0});
  const Vec3<S> x_axis = X.rotation * cast3<S>(g.in_body.rotation * Vec3d{1.0, 0.0, 0.0});
  S centre_gap;
  Vec3<S> n;
  ground_under(ground, centre, S(0), centre_gap, n);
  // The axis turned toward the ground: a = s z with a . n <= 0; the near cap is at centre + a L/2.
  const S along = dot(z_axis, n);
  const S sign = select(along > S(0), S(-1), S(1));
  const Vec3<S> a = z_axis * sign;
  // In the cap's plane, the direction that goes down most: -n without its part along a.
  const Vec3<S> down = a * (sign * along) - n;  // a (a . n) - n
  const S length = sqrt(dot(down, down));
  const auto upright = length < S(static_cast<T>(1e-9));
  const S inverse = S(1) / select(upright, S(1), length);
  const Vec3<S> u{select(upright, x_axis.x, down.x * inverse), select(upright, x_axis.y, down.y * inverse),
                  select(upright, x_axis.z, down.z * inverse)};
  const Vec3<S> w = cross(a, u);  // the cap's plane's other direction
  const S r(static_cast<T>(g.radius)), half(static_cast<T>(0.5 * g.length));
  const S c120(static_cast<T>(-0.5)), s120(static_cast<T>(0.5 * std::sqrt(3.0)));
  const Vec3<S> near_cap = centre + a * half, far_cap = centre - a * half;
  const Vec3<S> points[kCylinderContactsPerGeometry] = {near_cap + u * r, far_cap + u * r, near_cap + (u * c120 + w * s120) * r,
                                                        near_cap + (u * c120 - w * s120) * r};
  GroundSlots<S> out;
  for (int s = 0; s < kCylinderContactsPerGeometry; ++s) {
    out.point[s] = points[s];
    ground_under(ground, points[s], S(0), out.gap[s], out.normal[s]);
  }
  return out;
}

// The slots of a slotted geometry (a convex hull or a cylinder) at this step: what its candidates
// with ContactCandidate::slot 0, 1, ... measure.
template <class S>
GroundSlots<S> ground_slots(const CollisionGeometry& g, const Transform<S>& X, const GroundLanes<S>& ground, const S& margin,
                            HullScratch<S>& scratch) {
  return g.shape == CollisionShape::Cylinder ? cylinder_ground_slots(g, X, ground) : hull_ground_slots(g, X, ground, margin, scratch);
}

}  // namespace batchdyn
