// Where two collision geometries of a contact pair touch (topology/contact_model.hpp,
// CandidateKind): the signed distance between their cores (a point, a segment or a box), the
// unit normal from B to A, and the contact point, per lane, without branches on values.
//
// With the cores' closest points p_A, p_B, their signed distance s (< 0: a point inside a box)
// and the radii r_A, r_B (a box has none):
//   gap = s - r_A - r_B,  n = (p_A - p_B) / |p_A - p_B|  (or the box face's, inside a box),
//   contact point = midway between A's surface point p_A - r_A n and B's, p_A - (s - r_B) n.
// A gets +lambda_N n (pushed away from B), B the opposite; its rows are n and two tangents at the
// contact point (perpendicular_basis), as for the ground. Where the cores meet (s = 0 between
// two points or segments) n falls back to world +z; a deeper penetration of cores is not
// expected (the margin and the Baumgarte push keep them apart).
#pragma once

#include <cmath>
#include <type_traits>

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"
#include "topology/contact_model.hpp"

namespace batchdyn {

template <class S, class M>
Vec3<S> select3(const M& mask, const Vec3<S>& a, const Vec3<S>& b) {
  return {select(mask, a.x, b.x), select(mask, a.y, b.y), select(mask, a.z, b.z)};
}

// The contact of two points with radii (spheres), from their centres: exact.
template <class S>
void point_point_contact(const Vec3<S>& pa, const Vec3<S>& pb, const S& ra, const S& rb, S& gap, Vec3<S>& normal, Vec3<S>& point) {
  using std::sqrt;
  using T = lane_scalar<S>;
  const Vec3<S> d = pa - pb;
  const S distance2 = dot(d, d);
  const auto apart = distance2 > S(T(1e-30));
  const S distance = sqrt(distance2);
  const S inverse = S(T(1)) / select(apart, distance, S(T(1)));
  normal = select3(apart, d * inverse, Vec3<S>{S(T(0)), S(T(0)), S(T(1))});
  gap = distance - ra - rb;
  point = pa - normal * (S(T(0.5)) * (ra + distance - rb));
}

// The point of segment b0 .. b1 closest to p.
template <class S>
Vec3<S> closest_on_segment(const Vec3<S>& p, const Vec3<S>& b0, const Vec3<S>& b1) {
  using std::max;
  using std::min;
  using T = lane_scalar<S>;
  const Vec3<S> e = b1 - b0;
  const S t = min(max(dot(p - b0, e) / dot(e, e), S(T(0))), S(T(1)));  // |e| > 0: a capsule's length
  return b0 + e * t;
}

// Below this sin^2 of their angle, two segments are parallel: rounding in a e - b^2 and in the
// line-line solution's numerator is then of the size of the answer (float: about 1e-6 a e, so
// float's threshold is 1e-5, a tilt of ~3 mrad; double keeps 1e-12).
template <class T>
inline constexpr T parallel_segments_tolerance = std::is_same_v<T, float> ? T(1e-5) : T(1e-12);

// The closest points of segments p0 .. p1 and q0 .. q1 (both of non-zero length), as Ericson,
// "Real-Time Collision Detection", §5.1.9, with selects, and two changes for float: the
// denominator a e - b^2 is formed as |d1 x d2|^2 (no cancellation), and parallel segments
// (sin^2 of their angle below parallel_segments_tolerance) meet in the middle of their overlap
// (or at the nearer ends without one), not at s = 0 — so a tilt that float cannot resolve moves
// the contact point by no more than the tilt does.
template <class S>
void closest_between_segments(const Vec3<S>& p0, const Vec3<S>& p1, const Vec3<S>& q0, const Vec3<S>& q1, Vec3<S>& on_p, Vec3<S>& on_q) {
  using std::max;
  using std::min;
  using T = lane_scalar<S>;
  const S zero(T(0)), one(T(1)), half(T(0.5));
  const Vec3<S> d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const S a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r), c = dot(d1, r), b = dot(d1, d2);
  const Vec3<S> normal = cross(d1, d2);
  const S denominator = dot(normal, normal);  // = a e - b^2
  const auto skew = denominator > S(parallel_segments_tolerance<T>) * a * e;
  // Parallel: q0 and q1 projected onto p's segment at -c / a and (b - c) / a; the middle of
  // their overlap with [0, 1] (clamped: the nearer end without an overlap).
  const S s0 = -c / a, s1 = (b - c) / a;
  const S overlap_middle = min(max(half * (max(min(s0, s1), zero) + min(max(s0, s1), one)), zero), one);
  S s = select(skew, min(max((b * f - c * e) / select(skew, denominator, one), zero), one), overlap_middle);
  S t = (b * s + f) / e;
  // t outside [0, 1]: clamp it and recompute s for that end.
  const auto below = t < zero, above = t > one;
  s = select(below, min(max(-c / a, zero), one), select(above, min(max((b - c) / a, zero), one), s));
  t = min(max(t, zero), one);
  on_p = p0 + d1 * s;
  on_q = q0 + d2 * t;
}

// A point with radius ra against a box (half extents h, placement world_from_box): exact for
// a sphere, outside or inside the box (inside: the face of least depth).
template <class S>
void point_box_contact(const Vec3<S>& pa, const S& ra, const Transform<S>& world_from_box, const Vec3<S>& h, S& gap, Vec3<S>& normal,
                       Vec3<S>& point) {
  using std::abs;
  using std::max;
  using std::min;
  using std::sqrt;
  using T = lane_scalar<S>;
  const S zero(T(0)), one(T(1));
  const Vec3<S> p = world_from_box.rotation.transpose_times(pa - world_from_box.translation);
  const Vec3<S> q{min(max(p.x, -h.x), h.x), min(max(p.y, -h.y), h.y), min(max(p.z, -h.z), h.z)};
  const Vec3<S> d = p - q;
  const S outside_distance2 = dot(d, d);
  const auto outside = outside_distance2 > S(T(1e-30));
  const S outside_distance = sqrt(outside_distance2);
  // Inside: the depth below each face pair, the least one's outward normal.
  const S depth_x = h.x - abs(p.x), depth_y = h.y - abs(p.y), depth_z = h.z - abs(p.z);
  const auto along_x = depth_x <= depth_y && depth_x <= depth_z;
  const auto along_y = !along_x && depth_y <= depth_z;
  const auto along_z = !along_x && !along_y;
  const Vec3<S> face{select(along_x, select(p.x >= zero, one, -one), zero), select(along_y, select(p.y >= zero, one, -one), zero),
                     select(along_z, select(p.z >= zero, one, -one), zero)};
  const S inside_depth = min(depth_x, min(depth_y, depth_z));
  const Vec3<S> local_normal = select3(outside, d * (one / select(outside, outside_distance, one)), face);
  const S distance = select(outside, outside_distance, -inside_depth);
  normal = world_from_box.rotation * local_normal;
  gap = distance - ra;
  point = pa - normal * (S(T(0.5)) * (ra + distance));
}

// The gap, normal (B to A) and contact point of pair candidate `c` (c.kind != Ground), with
// world_from_a / world_from_b the placements of c.body and c.body2. O(1).
template <class S>
void pair_contact(const ContactCandidate& c, const Transform<S>& world_from_a, const Transform<S>& world_from_b, S& gap, Vec3<S>& normal,
                  Vec3<S>& point) {
  using T = lane_scalar<S>;
  const Vec3<S> pa = world_from_a.act_point(cast3<S>(c.point));
  const S ra(static_cast<T>(c.radius)), rb(static_cast<T>(c.radius2));
  const Transform<S> world_from_core = world_from_b * cast_transform<S>(c.other_in_body2);
  const Vec3<S> axis = world_from_core.rotation * Vec3<S>{S(T(0)), S(T(0)), S(static_cast<T>(c.half_length2))};
  switch (c.kind) {
    case CandidateKind::PointPoint: point_point_contact(pa, world_from_core.translation, ra, rb, gap, normal, point); break;
    case CandidateKind::PointSegment: {
      const Vec3<S> pb = closest_on_segment(pa, world_from_core.translation - axis, world_from_core.translation + axis);
      point_point_contact(pa, pb, ra, rb, gap, normal, point);
      break;
    }
    case CandidateKind::SegmentSegment: {
      Vec3<S> on_a, on_b;
      closest_between_segments(pa, world_from_a.act_point(cast3<S>(c.point_end)), world_from_core.translation - axis,
                               world_from_core.translation + axis, on_a, on_b);
      point_point_contact(on_a, on_b, ra, rb, gap, normal, point);
      break;
    }
    case CandidateKind::PointBox:
      point_box_contact(pa, ra, world_from_core, cast3<S>(c.half_extents2), gap, normal, point);
      break;
    case CandidateKind::Ground: break;
  }
}

}  // namespace batchdyn
