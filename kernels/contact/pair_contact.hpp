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
// A convex hull or a cylinder against anything: kernels/contact/convex_contact.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>
#include <limits>
#include <type_traits>

#include "kernels/contact/convex_contact.hpp"
#include "kernels/contact/hull_contact.hpp"
#include "layout/lanes.hpp"
#include "layout/spatial.hpp"
#include "topology/contact_model.hpp"
#include "topology/contact_plan.hpp"

namespace batchdyn {

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
    case CandidateKind::Convex: convex_contact(c, world_from_a, world_from_b, gap, normal, point); break;
    case CandidateKind::Ground: break;
  }
}

// Whether the sphere (centre p, radius r) is within `reach` of the box (half extents `half`,
// placed at world_from_box): |p - box|^2 <= (reach + r)^2, per lane.
template <class S>
auto sphere_within_reach_of_box(const Vec3<S>& p, lane_scalar<S> r, const Transform<S>& world_from_box, const Vec3d& half, const S& reach) {
  using std::max;
  using std::min;
  const Vec3<S> l = world_from_box.rotation.transpose_times(p - world_from_box.translation);
  const Vec3<S> h = cast3<S>(half);
  const Vec3<S> outside{l.x - min(max(l.x, -h.x), h.x), l.y - min(max(l.y, -h.y), h.y), l.z - min(max(l.z, -h.z), h.z)};
  const S limit = reach + S(r);
  return dot(outside, outside) <= limit * limit;
}

// Where pair candidate c is within reach: each geometry's bounding sphere at most its margin plus
// kPairReach from the other's bounding box (topology/contact_model.hpp). The same for every
// candidate of a pair.
template <class S>
auto pair_within_reach(const ContactCandidate& c, const Transform<S>& world_from_a, const Transform<S>& world_from_b, const S& margin) {
  using T = lane_scalar<S>;
  const S reach = S(static_cast<T>(kPairReach)) + margin;
  return sphere_within_reach_of_box(world_from_a.act_point(cast3<S>(c.bounds.centre)), static_cast<T>(c.bounds.radius),
                                    world_from_b * cast_transform<S>(c.bounds2.box), c.bounds2.half, reach) &&
         sphere_within_reach_of_box(world_from_b.act_point(cast3<S>(c.bounds2.centre)), static_cast<T>(c.bounds2.radius),
                                    world_from_a * cast_transform<S>(c.bounds.box), c.bounds.half, reach);
}

// Whether reach group g (topology/contact_plan.hpp) may hold a pair within reach, per lane: its
// sphere about the root body (placed at world_from_root) within its margin plus kPairReach of
// the obstacle's box. Where not, pair_within_reach is false for each of its candidates.
template <class S>
auto group_within_reach(const ReachGroup& g, const Transform<S>& world_from_root) {
  using T = lane_scalar<S>;
  const S reach(static_cast<T>(kPairReach + g.margin));
  return sphere_within_reach_of_box(world_from_root.translation, static_cast<T>(g.radius), cast_transform<S>(g.box), g.half, reach);
}

// What a pair candidate beyond reach reads (pair_contact_within_reach): an infinite gap, the
// normal +z and A's bounding centre as the point.
template <class S>
void beyond_reach(const ContactCandidate& c, const Transform<S>& world_from_a, S& gap, Vec3<S>& normal, Vec3<S>& point) {
  using T = lane_scalar<S>;
  gap = S(std::numeric_limits<T>::infinity());
  normal = Vec3<S>{S(T(0)), S(T(0)), S(T(1))};
  point = world_from_a.act_point(cast3<S>(c.bounds.centre));
}

// pair_contact in the lanes `near` (pair_within_reach); beyond reach a gap of +inf, the normal +z
// and A's bounding centre as the point. Skips pair_contact when no lane is near: the result is
// the same bit for bit, whatever the block mates.
template <class S, class M>
void pair_contact_within_reach(const M& near, const ContactCandidate& c, const Transform<S>& world_from_a, const Transform<S>& world_from_b,
                               S& gap, Vec3<S>& normal, Vec3<S>& point) {
  beyond_reach(c, world_from_a, gap, normal, point);
  if (!any_lane(near)) return;
  S pair_gap;
  Vec3<S> pair_normal, pair_point;
  pair_contact(c, world_from_a, world_from_b, pair_gap, pair_normal, pair_point);
  gap = select(near, pair_gap, gap);
  normal = select3(near, pair_normal, normal);
  point = select3(near, pair_point, point);
}


// A point with radius r against a hull's solid (its face planes, HullPlane): the largest of the
// point's heights over the planes, d = max_f (n_f . p - offset_f), and that plane's normal. Inside
// or over a face, d is the exact signed distance; outside beyond an edge or a vertex it is less than
// the distance (the contact is taken slightly early) and never of the wrong sign.
template <class S>
void point_hull_contact(const PlacedCore<S>& hull, const Vec3<S>& p, const S& radius, S& gap, Vec3<S>& normal, Vec3<S>& point) {
  using T = lane_scalar<S>;
  const Vec3<S> local = hull.world_from_core.rotation.transpose_times(p - hull.world_from_core.translation);
  S height(-std::numeric_limits<T>::infinity());
  Vec3<S> face{S(T(0)), S(T(0)), S(T(1))};
  for (const HullPlane& plane : hull.core->hull->planes) {
    const Vec3<S> n = cast3<S>(plane.normal);
    const S h = dot(n, local) - S(static_cast<T>(plane.offset));
    const auto higher = h > height;
    height = select(higher, h, height);
    face = select3(higher, n, face);
  }
  normal = hull.world_from_core.rotation * face;
  gap = height - radius;
  point = p - normal * (S(T(0.5)) * (radius + height));
}

// A point with radius r against side `solid` of a Convex pair: a box (exact) or a hull's planes.
template <class S>
void point_solid_contact(const PlacedCore<S>& solid, const Vec3<S>& p, const S& radius, S& gap, Vec3<S>& normal, Vec3<S>& point) {
  if (solid.core->shape == ConvexCoreShape::Box)
    point_box_contact(p, radius, solid.world_from_core, cast3<S>(solid.core->half_extents), gap, normal, point);
  else
    point_hull_contact(solid, p, radius, gap, normal, point);
}

// f(v) for each vertex of a core that the slots choose among (core frame): a segment's two ends,
// a box's 8 corners, a hull's vertices (ConvexCore::has_vertices); none for a point or a cylinder.
template <class F>
void for_each_core_vertex(const ConvexCore& core, F&& f) {
  switch (core.shape) {
    case ConvexCoreShape::Segment:
      for (const double end : {-1.0, 1.0}) f(Vec3d{0.0, 0.0, end * core.half_length});
      break;
    case ConvexCoreShape::Box:
      for (double sx : {-1.0, 1.0})
        for (double sy : {-1.0, 1.0})
          for (double sz : {-1.0, 1.0}) f(Vec3d{sx * core.half_extents.x, sy * core.half_extents.y, sz * core.half_extents.z});
      break;
    case ConvexCoreShape::Hull:
      for (const Vec3d& v : core.hull->vertices) f(v);
      break;
    case ConvexCoreShape::Point:
    case ConvexCoreShape::Cylinder: break;
  }
}

// How many slots the Convex pair whose slot 0 is candidate k has (1 or kConvexContactsPerPair).
inline int convex_slots(const std::vector<ContactCandidate>& candidates, int k) {
  const size_t next = static_cast<size_t>(k) + 1;
  return next < candidates.size() && candidates[next].pair == candidates[static_cast<size_t>(k)].pair && candidates[next].slot == 1
             ? kConvexContactsPerPair
             : 1;
}

// What the slots of a Convex pair measure at this step (kConvexContactsPerPair,
// topology/contact_model.hpp): each slot's gap, normal (B to A) and contact point.
template <class S>
struct PairSlots {
  S gap[kConvexContactsPerPair];
  Vec3<S> normal[kConvexContactsPerPair], point[kConvexContactsPerPair];
};

// The slots of Convex pair candidate c (`slots` of them: 1, or kConvexContactsPerPair), in the
// lanes `near` (pair_within_reach; beyond it every gap is +inf):
//   0: the deepest point (convex_contact);
//   1: of the vertices within the margin (A's against B's solid, B's against A's when A is a box or
//      a hull; a capsule's two ends), the one farthest from slot 0's point;
//   2: the one farthest from the line through slots 0 and 1 (about slot 0's normal);
//   3: the one farthest on that line's other side,
// as the hull's ground slots choose (kernels/contact/hull_contact.hpp), each an arg-max over the
// vertices in lanes; a slot with no vertex (or one within 1 mm of those taken) gets an infinite
// gap. Slots 1-3 are skipped when slot 0 is beyond the margin in every lane (bit for bit the same).
template <class S, class M>
PairSlots<S> convex_pair_slots(const M& near, const ContactCandidate& c, const Transform<S>& world_from_a, const Transform<S>& world_from_b,
                               const S& margin, int slots) {
  using T = lane_scalar<S>;
  const S infinity(std::numeric_limits<T>::infinity()), zero(T(0));
  PairSlots<S> out;
  pair_contact_within_reach(near, c, world_from_a, world_from_b, out.gap[0], out.normal[0], out.point[0]);
  for (int s = 1; s < kConvexContactsPerPair; ++s) out.gap[s] = infinity, out.normal[s] = out.normal[0], out.point[s] = out.point[0];
  if (slots == 1 || !any_lane(out.gap[0] < margin)) return out;
  const PlacedCore<S> a = place_core(c.convex_a, world_from_a), b = place_core(c.convex_b, world_from_b);
  // The vertices' gaps, normals and points.
  constexpr int kMost = 2 * kHullVertexBudget;
  S gap[kMost];
  Vec3<S> normal[kMost], point[kMost];
  int n = 0;
  const S ra(static_cast<T>(c.convex_a.radius));
  for_each_core_vertex(c.convex_a, [&](const Vec3d& v) {  // A's against B's solid
    point_solid_contact(b, a.world_from_core.act_point(cast3<S>(v)), ra, gap[n], normal[n], point[n]);
    ++n;
  });
  if (c.convex_a.solid())
    for_each_core_vertex(c.convex_b, [&](const Vec3d& v) {  // B's against A's solid: that normal points from A to B
      point_solid_contact(a, b.world_from_core.act_point(cast3<S>(v)), zero, gap[n], normal[n], point[n]);
      normal[n] = normal[n] * S(T(-1));
      ++n;
    });
  const SlotChoice<S> choice = choose_slots(n, gap, point, margin, near, S(T(-1)), out.point[0], out.normal[0]);
  // Slot s takes vertex choice.index[s] where `valid`.
  const auto take = [&](int s, const auto& valid) {
    for (int k = 0; k < n; ++k) {
      const auto hit = valid && choice.index[s] == S(static_cast<T>(k));
      out.gap[s] = select(hit, gap[k], out.gap[s]);
      out.normal[s] = select3(hit, normal[k], out.normal[s]);
      out.point[s] = select3(hit, point[k], out.point[s]);
    }
  };
  // A slot within 1 mm of a taken one (or of the line through two) adds nothing.
  const S apart2(T(1e-6)), edge2 = choice.edge2;
  take(1, edge2 > apart2);
  take(2, edge2 > apart2 && choice.side2 * choice.side2 > apart2 * edge2);
  take(3, edge2 > apart2 && choice.side2 * choice.side2 > apart2 * edge2 && choice.side3 * choice.side3 > apart2 * edge2 && choice.side3 > zero);
  return out;
}

}  // namespace batchdyn
