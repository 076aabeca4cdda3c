// Where two convex geometries of a contact pair touch when one of them is a convex hull or a
// cylinder (CandidateKind::Convex, topology/contact_model.hpp): their signed distance, the unit
// normal from B to A and one contact point per lane, as MuJoCo's general convex collision gives
// one contact per pair by default (its multiccd option off).
//
// Each side is a core with a radius (ConvexCore): a point (sphere), a segment (capsule), a box,
// a cylinder or a hull's vertices, known here only through its support function s(d), the core's
// point furthest along d. With the separation of the cores along a unit u,
//   sep(u) = min_{a in A} u.a - max_{b in B} u.b = u.s_A(-u) - u.s_B(u),
// their signed distance is max over unit u of sep(u): their distance when apart, minus the
// penetration depth when they overlap. The radii are subtracted from it (gap = s - r_A - r_B), so a
// sphere or a capsule sinking into a hull is measured exactly as long as its core stays outside.
//
// Apart: GJK (Gilbert, Johnson, Keerthi 1988) finds the point v of the Minkowski difference
// A - B closest to the origin; s = |v|, the normal v / |v|, the closest points the same convex
// combination of A's and B's support points. The face of the simplex nearest the origin is
// chosen without branches on values: every face (15 of a tetrahedron) projects the origin onto
// its affine hull with signed-volume barycentric coordinates (Montanari, Petrinic, Barbieri 2017);
// of the projections that fall inside their face, the shortest is the nearest point (Johnson's
// criterion). GJK stops when |v| - v.w / |v| (the distance's upper bound minus its lower bound)
// is at most gjk_tolerance (1e-10 m in double, 1e-6 m in float) or after kGjkIterations (a
// cylinder, being round, may use them all; its distance is then an upper bound).
//
// Overlapping: the depth along n is p(n) = -sep(n), and the penetration depth is its minimum
// over n. It starts at the best of 13 directions (from B's centre to A's, and each core frame's
// axes both ways) and improves by proximal steps: A shifted by t n with t = p(n) + 1 mm is apart
// from B; GJK there returns the direction u maximising sep(u) + t n.u, for which
// sep(u) >= sep(n) + t (1 - n.u) >= sep(n): the depth never grows, and stops at a local
// minimum of p (n = u). kPenetrationSteps steps. Exact for what rests on a face (a face's normal
// is a fixed point and is reached from the frames' axes); between two edges crossing deep inside,
// or from a start in another face's basin, it is a local minimum: a depth along a direction that
// does separate the two, larger than the least.
//
// Lanes: every lane runs the same iterations; a lane that has converged is frozen by masks, and
// the loops stop when all have, so a lane's result does not depend on its block mates.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"
#include "topology/contact_model.hpp"

namespace batchdyn {

template <class S, class M>
Vec3<S> select3(const M& mask, const Vec3<S>& a, const Vec3<S>& b) {
  return {select(mask, a.x, b.x), select(mask, a.y, b.y), select(mask, a.z, b.z)};
}

inline constexpr int kGjkIterations = 32;
inline constexpr int kPenetrationSteps = 4;
inline constexpr double kPenetrationShift = 1e-3;  // m: how far apart a proximal step puts the cores

template <class T>
inline constexpr T gjk_tolerance = std::is_same_v<T, float> ? T(1e-6) : T(1e-10);

// Below this sin^2 of its angles a simplex face is flat (its projection is left to its edges).
template <class T>
inline constexpr T flat_face_tolerance = std::is_same_v<T, float> ? T(1e-6) : T(1e-14);

// One side of the pair placed for this step.
template <class S>
struct PlacedCore {
  const ConvexCore* core = nullptr;
  Transform<S> world_from_core;
  Vec3<S> centre;  // world: a point inside the core
  Vec3<S> shift;   // world: added to every support point (a proximal step's t n)
};

template <class S>
PlacedCore<S> place_core(const ConvexCore& core, const Transform<S>& world_from_body) {
  using T = lane_scalar<S>;
  PlacedCore<S> out;
  out.core = &core;
  out.world_from_core = world_from_body * cast_transform<S>(core.in_body);
  out.centre = out.world_from_core.act_point(cast3<S>(core.centre));
  out.shift = Vec3<S>{S(T(0)), S(T(0)), S(T(0))};
  return out;
}

// s(d): the core's point furthest along the world direction d (world frame), shifted.
template <class S>
Vec3<S> support(const PlacedCore<S>& side, const Vec3<S>& d) {
  using std::sqrt;
  using T = lane_scalar<S>;
  const ConvexCore& c = *side.core;
  const Vec3<S> l = side.world_from_core.rotation.transpose_times(d);
  const S zero(T(0)), one(T(1));
  const auto sign_of = [&](const S& x, T half) { return select(x >= zero, S(half), S(-half)); };
  Vec3<S> p{zero, zero, zero};
  switch (c.shape) {
    case ConvexCoreShape::Point: break;
    case ConvexCoreShape::Segment: p.z = sign_of(l.z, static_cast<T>(c.half_length)); break;
    case ConvexCoreShape::Box:
      p = {sign_of(l.x, static_cast<T>(c.half_extents.x)), sign_of(l.y, static_cast<T>(c.half_extents.y)),
           sign_of(l.z, static_cast<T>(c.half_extents.z))};
      break;
    case ConvexCoreShape::Cylinder: {  // the rim point of the cap along d (d along the axis: the cap's centre)
      const S across = sqrt(l.x * l.x + l.y * l.y);
      const auto tilted = across > S(T(1e-30));
      const S scale = S(static_cast<T>(c.disc_radius)) / select(tilted, across, one);
      p = {select(tilted, l.x * scale, zero), select(tilted, l.y * scale, zero), sign_of(l.z, static_cast<T>(c.half_length))};
      break;
    }
    case ConvexCoreShape::Hull: {  // the vertex of largest l.v (the first of equals)
      const std::vector<Vec3d>& vertices = c.hull->vertices;
      p = cast3<S>(vertices[0]);
      S best = dot(p, l);
      for (size_t k = 1; k < vertices.size(); ++k) {
        const Vec3<S> v = cast3<S>(vertices[k]);
        const S value = dot(v, l);
        const auto further = value > best;
        best = select(further, value, best);
        p = select3(further, v, p);
      }
      break;
    }
  }
  return side.world_from_core.act_point(p) + side.shift;
}

// The depth of A in B along the unit n (A pushed along n to separate): p(n) = -sep(n).
template <class S>
S depth_along(const PlacedCore<S>& a, const PlacedCore<S>& b, const Vec3<S>& n) {
  return dot(n, support(b, n)) - dot(n, support(a, -n));
}

template <class S>
struct GjkResult {
  Vec3<S> v;           // the point of A - B nearest the origin: on_a - on_b
  S distance;          // |v|: the cores' distance (up to gjk_tolerance), ~0 where they overlap
  Vec3<S> on_a, on_b;  // the closest points (world)
  decltype(S() < S()) overlap;  // the cores overlap, or touch within gjk_tolerance
};

namespace detail {

// The nearest point to the origin of the simplex W (vertices with `active` set), its barycentric
// coordinates `lambda` and its face (`active` becomes the face's vertices): Johnson's criterion
// over every face, see the file comment. `inside`: the origin lies in the tetrahedron.
template <class S, class M>
void nearest_face(const Vec3<S> (&W)[4], M (&active)[4], S (&lambda)[4], Vec3<S>& v, M& inside) {
  using T = lane_scalar<S>;
  const S zero(T(0)), one(T(1)), flat(flat_face_tolerance<T>), tiny(T(1e-30));
  S best = S(std::numeric_limits<T>::infinity());
  Vec3<S> best_v{zero, zero, zero};
  S best_l[4] = {zero, zero, zero, zero};
  M member[4] = {zero != zero, zero != zero, zero != zero, zero != zero};
  // Offers a face (vertex mask `bits`) whose projection is `point` with coordinates l[].
  const auto offer = [&](const M& valid, const Vec3<S>& point, const S (&l)[4], int bits) {
    const S norm2 = dot(point, point);
    const M better = valid && (norm2 < best);
    best = select(better, norm2, best);
    best_v = select3(better, point, best_v);
    for (int i = 0; i < 4; ++i) {
      best_l[i] = select(better, l[i], best_l[i]);
      member[i] = (bits >> i & 1) ? (member[i] || better) : (member[i] && !better);
    }
  };
  for (int i = 0; i < 4; ++i) {  // vertices
    S l[4] = {zero, zero, zero, zero};
    l[i] = one;
    offer(active[i], W[i], l, 1 << i);
  }
  for (int i = 0; i < 4; ++i)  // edges: t along W_i -> W_j
    for (int j = i + 1; j < 4; ++j) {
      const Vec3<S> e = W[j] - W[i];
      const S ee = dot(e, e);
      const auto long_enough = ee > tiny;
      const S t = -dot(W[i], e) / select(long_enough, ee, one);
      S l[4] = {zero, zero, zero, zero};
      l[i] = one - t, l[j] = t;
      offer(active[i] && active[j] && long_enough && t > zero && t < one, W[i] + e * t, l, 1 << i | 1 << j);
    }
  for (int skip = 3; skip >= 0; --skip) {  // triangles: all but W_skip
    int f[3], n = 0;
    for (int i = 0; i < 4; ++i)
      if (i != skip) f[n++] = i;
    const Vec3<S> e1 = W[f[1]] - W[f[0]], e2 = W[f[2]] - W[f[0]];
    const Vec3<S> normal = cross(e1, e2);
    const S nn = dot(normal, normal);
    const auto not_flat = nn > flat * dot(e1, e1) * dot(e2, e2) && nn > tiny;
    const S inverse = one / select(not_flat, nn, one);
    // Signed areas seen along the normal: n.(W_j x W_k) / |n|^2 for the vertex opposite j, k.
    S l[4] = {zero, zero, zero, zero};
    l[f[0]] = dot(normal, cross(W[f[1]], W[f[2]])) * inverse;
    l[f[1]] = dot(normal, cross(W[f[2]], W[f[0]])) * inverse;
    l[f[2]] = dot(normal, cross(W[f[0]], W[f[1]])) * inverse;
    const M valid = active[f[0]] && active[f[1]] && active[f[2]] && not_flat && l[f[0]] > zero && l[f[1]] > zero && l[f[2]] > zero;
    offer(valid, W[f[0]] * l[f[0]] + W[f[1]] * l[f[1]] + W[f[2]] * l[f[2]], l, 15 & ~(1 << skip));
  }
  {  // the tetrahedron: signed volumes with the origin in place of each vertex
    const Vec3<S> e1 = W[1] - W[0], e2 = W[2] - W[0], e3 = W[3] - W[0], o = W[0] * S(T(-1));
    const S volume = dot(e1, cross(e2, e3));
    const auto not_flat = volume * volume > flat * dot(e1, e1) * dot(e2, e2) * dot(e3, e3) && volume * volume > tiny;
    const S inverse = one / select(not_flat, volume, one);
    S l[4];
    l[1] = dot(o, cross(e2, e3)) * inverse;
    l[2] = dot(e1, cross(o, e3)) * inverse;
    l[3] = dot(e1, cross(e2, o)) * inverse;
    l[0] = one - l[1] - l[2] - l[3];
    const M valid = active[0] && active[1] && active[2] && active[3] && not_flat && l[0] >= zero && l[1] >= zero && l[2] >= zero &&
                    l[3] >= zero;
    offer(valid, Vec3<S>{zero, zero, zero}, l, 15);
    inside = valid && best == zero && member[0] && member[1] && member[2] && member[3];
  }
  v = best_v;
  for (int i = 0; i < 4; ++i) lambda[i] = best_l[i], active[i] = member[i];
}

}  // namespace detail

// The distance between the cores of a and b (their radii not subtracted), by GJK.
template <class S>
GjkResult<S> gjk_distance(const PlacedCore<S>& a, const PlacedCore<S>& b) {
  using std::sqrt;
  using T = lane_scalar<S>;
  using M = decltype(S() < S());
  const S zero(T(0)), one(T(1)), tolerance(gjk_tolerance<T>);
  const M none = zero != zero;
  Vec3<S> W[4], on_a[4], on_b[4];
  S lambda[4] = {one, zero, zero, zero};
  M active[4] = {zero == zero, none, none, none};
  // Start from A's point furthest towards B's centre.
  Vec3<S> d = b.centre - a.centre;
  d = select3(dot(d, d) > S(T(1e-30)), d, Vec3<S>{one, zero, zero});
  on_a[0] = support(a, d), on_b[0] = support(b, d * S(T(-1)));
  W[0] = on_a[0] - on_b[0];
  for (int i = 1; i < 4; ++i) W[i] = W[0], on_a[i] = on_a[0], on_b[i] = on_b[0];
  Vec3<S> v = W[0];
  M done = none, overlap = none;
  for (int iteration = 0; iteration < kGjkIterations; ++iteration) {
    const S vv = dot(v, v);
    const M touching = vv <= tolerance * tolerance;
    const Vec3<S> sa = support(a, v * S(T(-1))), sb = support(b, v), w = sa - sb;
    const M converged = vv - dot(v, w) <= tolerance * sqrt(vv);
    overlap = overlap || (!done && touching);
    done = done || touching || converged;
    if (!any_lane(!done)) break;
    // w into the first free vertex slot (a lane still running has one: four only when inside).
    M taken = none;
    M grown[4];
    for (int i = 0; i < 4; ++i) {
      const M put = !done && !active[i] && !taken;
      W[i] = select3(put, w, W[i]), on_a[i] = select3(put, sa, on_a[i]), on_b[i] = select3(put, sb, on_b[i]);
      grown[i] = active[i] || put;
      taken = taken || put;
    }
    S new_lambda[4];
    Vec3<S> new_v;
    M inside;
    detail::nearest_face(W, grown, new_lambda, new_v, inside);
    v = select3(done, v, new_v);
    for (int i = 0; i < 4; ++i) {
      lambda[i] = select(done, lambda[i], new_lambda[i]);
      active[i] = (done && active[i]) || (!done && grown[i]);
    }
    overlap = overlap || (!done && inside);
    done = done || inside;
  }
  GjkResult<S> r;
  r.v = v;
  r.distance = select(overlap, zero, sqrt(dot(v, v)));
  r.on_a = on_a[0] * lambda[0] + on_a[1] * lambda[1] + on_a[2] * lambda[2] + on_a[3] * lambda[3];
  r.on_b = on_b[0] * lambda[0] + on_b[1] * lambda[1] + on_b[2] * lambda[2] + on_b[3] * lambda[3];
  r.overlap = overlap;
  return r;
}

// The gap (signed distance minus both radii), normal (B to A) and contact point (midway between
// the two surfaces) of Convex candidate c, with world_from_a / world_from_b the placements of
// c.body and c.body2.
template <class S>
void convex_contact(const ContactCandidate& c, const Transform<S>& world_from_a, const Transform<S>& world_from_b, S& gap, Vec3<S>& normal,
                    Vec3<S>& point) {
  using std::sqrt;
  using T = lane_scalar<S>;
  const S zero(T(0)), one(T(1)), half(T(0.5));
  const PlacedCore<S> a = place_core(c.convex_a, world_from_a), b = place_core(c.convex_b, world_from_b);
  const GjkResult<S> apart = gjk_distance(a, b);
  S signed_distance = apart.distance;
  normal = apart.v * (one / select(apart.overlap, one, apart.distance));
  Vec3<S> on_a = apart.on_a, on_b = apart.on_b;
  if (any_lane(apart.overlap)) {
    // The start: the least depth over the centre line and the frames' axes.
    Vec3<S> n = a.centre - b.centre;
    const S length = sqrt(dot(n, n));
    n = select3(length > S(T(1e-30)), n * (one / select(length > S(T(1e-30)), length, one)), Vec3<S>{zero, zero, one});
    S depth = depth_along(a, b, n);
    for (const PlacedCore<S>* side : {&a, &b})
      for (int axis = 0; axis < 3; ++axis)
        for (const T sign : {T(1), T(-1)}) {
          const Vec3<S> u = side->world_from_core.rotation.column(axis) * S(sign);
          const S p = depth_along(a, b, u);
          const auto less = p < depth;
          depth = select(less, p, depth);
          n = select3(less, u, n);
        }
    Vec3<S> deep_a = a.centre, deep_b = b.centre;
    for (int step = 0; step < kPenetrationSteps; ++step) {
      PlacedCore<S> shifted = a;
      const S t = depth + S(T(kPenetrationShift));
      shifted.shift = n * t;
      const GjkResult<S> g = gjk_distance(shifted, b);
      const auto separated = g.distance > zero;
      const Vec3<S> u = g.v * (one / select(separated, g.distance, one));
      const S p = depth_along(a, b, u);
      const auto less = separated && p < depth;
      // The closest points at the shift are where the cores meet along n (A's shifted back).
      const auto witnessed = step == 0 ? separated : less;
      deep_a = select3(witnessed, g.on_a - n * t, deep_a);
      deep_b = select3(witnessed, g.on_b, deep_b);
      depth = select(less, p, depth);
      n = select3(less, u, n);
    }
    signed_distance = select(apart.overlap, -depth, signed_distance);
    normal = select3(apart.overlap, n, normal);
    on_a = select3(apart.overlap, deep_a, on_a);
    on_b = select3(apart.overlap, deep_b, on_b);
  }
  const S ra(static_cast<T>(c.convex_a.radius)), rb(static_cast<T>(c.convex_b.radius));
  gap = signed_distance - ra - rb;
  point = ((on_a - normal * ra) + (on_b + normal * rb)) * half;
}

}  // namespace batchdyn
