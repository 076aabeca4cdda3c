// A convex hull against the ground (CollisionShape::ConvexHull): which of its vertices its
// kHullContactsPerGeometry candidate slots take at this step, per lane, as MuJoCo's plane-convex
// collision picks its contacts (topology/contact_model.hpp). Every vertex's gap is exact against
// the plane (and a height field's surface below it); the slots keep
//   0: the deepest vertex (always: its gap decides whether the hull is in contact);
//   1: of the vertices within the margin, the one farthest from slot 0's;
//   2: the one farthest from the line through slots 0 and 1;
//   3: the one farthest on the other side of that line from slot 2,
// each choice an arg-max over the vertices in lanes (masks, no branch on the state). A slot with
// no vertex to take gets an infinite gap (not in contact). O(vertices) per slot. A hull with no
// vertex within the margin in any lane of the block skips slots 1-3: they would take no vertex
// in any lane, so the result is the same bit for bit, whatever the block mates.
// Against the plane, the vertices are measured in the body frame: gap_k = n_b . p_k + c with
// n_b = R^T n and c = n . t - h once per lane (3 multiply-adds per vertex where the world points
// cost 12), and the slots' distances and sides are the same there (a rigid motion keeps them);
// only the chosen vertices are carried to the world. Over a height field, whose normal varies,
// every vertex goes to the world.
#pragma once

#include <algorithm>
#include <limits>

#include "kernels/contact/terrain.hpp"
#include "topology/contact_model.hpp"

namespace batchdyn {

// What the slots of one slotted geometry (a convex hull, a cylinder: ContactCandidate::slot)
// measure at this step: each slot's gap to the ground, the ground's normal and the contact point.
static_assert(kCylinderContactsPerGeometry <= kHullContactsPerGeometry);
template <class S>
struct GroundSlots {
  S gap[kHullContactsPerGeometry];
  Vec3<S> normal[kHullContactsPerGeometry], point[kHullContactsPerGeometry];
};

// Scratch for one hull's vertices (kHullVertexBudget of each): their gaps, points (in the body
// frame against the plane, in the world over a height field) and the ground's normals below them
// (height field only).
template <class S>
struct HullScratch {
  std::vector<S> gap = std::vector<S>(static_cast<size_t>(kHullVertexBudget));
  std::vector<Vec3<S>> point = std::vector<Vec3<S>>(static_cast<size_t>(kHullVertexBudget));
  std::vector<Vec3<S>> normal = std::vector<Vec3<S>>(static_cast<size_t>(kHullVertexBudget));
};

// The slots of hull `g` on a body placed at X (world), with contact margin `margin`.
template <class S>
GroundSlots<S> hull_ground_slots(const CollisionGeometry& g, const Transform<S>& X, const GroundLanes<S>& ground, const S& margin,
                               HullScratch<S>& scratch) {
  using T = lane_scalar<S>;
  const int n = static_cast<int>(g.body_vertices.size());
  // The frame the slots choose in: the body's against the plane, the world's over a height field.
  const bool plane = !ground.has_terrain();
  Vec3<S> frame_normal = ground.normal;  // the plane's normal in that frame (height field: unused)
  if (plane) {
    frame_normal = X.rotation.transpose_times(ground.normal);  // n_b = R^T n
    const S offset = dot(ground.normal, X.translation) - ground.height;  // c = n . t - h
    for (int k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(k);
      scratch.point[i] = cast3<S>(g.body_vertices[i]);
      scratch.gap[i] = dot(frame_normal, scratch.point[i]) + offset;
    }
  } else {
    for (int k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(k);
      scratch.point[i] = X.act_point(cast3<S>(g.body_vertices[i]));
      ground_under(ground, scratch.point[i], S(0), scratch.gap[i], scratch.normal[i]);
    }
  }
  constexpr int W = lane_width<S>;
  const S none(T(-1));
  // The vertex whose score is largest among those `eligible`, per lane (none: -1).
  const auto arg_max = [&](auto eligible, auto score) {
    S best_index = none, best = S(-std::numeric_limits<T>::infinity());
    for (int k = 0; k < n; ++k) {
      const S value = score(k);
      const auto better = eligible(k) && value > best;
      best = select(better, value, best);
      best_index = select(better, S(static_cast<T>(k)), best_index);
    }
    return best_index;
  };
  GroundSlots<S> out;
  S chosen[kHullContactsPerGeometry];
  Vec3<S> chosen_point[kHullContactsPerGeometry];  // in the slots' frame
  // Slot s takes vertex chosen[s]: its gap, normal and point, gathered lane by lane (none: an
  // infinite gap, the ground's normal and the origin). out.point is in the world, chosen_point
  // in the slots' frame.
  const auto take = [&](int s) {
    alignas(64) T gap[W], normal[3][W], point[3][W];
    for (int l = 0; l < W; ++l) {
      const auto i = static_cast<size_t>(std::max(LaneTraits<S>::get(chosen[s], l), T(0)));  // none reads vertex 0, discarded
      gap[l] = LaneTraits<S>::get(scratch.gap[i], l);
      for (int r = 0; r < 3; ++r) {
        if (!plane) normal[r][l] = LaneTraits<S>::get(scratch.normal[i][r], l);
        point[r][l] = LaneTraits<S>::get(scratch.point[i][r], l);
      }
    }
    const auto found = chosen[s] >= S(0);
    out.gap[s] = select(found, LaneTraits<S>::load(gap), S(std::numeric_limits<T>::infinity()));
    for (int r = 0; r < 3; ++r) {
      out.normal[s][r] = plane ? ground.normal[r] : select(found, LaneTraits<S>::load(normal[r]), ground.normal[r]);
      chosen_point[s][r] = select(found, LaneTraits<S>::load(point[r]), S(0));
    }
    out.point[s] = plane ? X.act_point(chosen_point[s]) : chosen_point[s];
    for (int r = 0; r < 3; ++r) out.point[s][r] = select(found, out.point[s][r], S(0));
  };
  const auto any = [](int) { return S(0) == S(0); };  // every vertex, as a lane mask
  chosen[0] = arg_max(any, [&](int k) { return -scratch.gap[static_cast<size_t>(k)]; });
  take(0);
  if (!any_lane(out.gap[0] < margin)) {  // no vertex within the margin: slots 1-3 take none
    for (int s = 1; s < kHullContactsPerGeometry; ++s)
      out.gap[s] = S(std::numeric_limits<T>::infinity()), out.normal[s] = ground.normal, out.point[s] = Vec3<S>::zero();
    return out;
  }
  // The others among the vertices within the margin, each vertex taken once.
  const auto free_within = [&](int upto) {
    return [&, upto](int k) {
      auto ok = scratch.gap[static_cast<size_t>(k)] < margin;
      for (int s = 0; s < upto; ++s) ok = ok && chosen[s] != S(static_cast<T>(k));
      return ok;
    };
  };
  const Vec3<S> p0 = chosen_point[0];
  chosen[1] = arg_max(free_within(1), [&](int k) {
    const Vec3<S> d = scratch.point[static_cast<size_t>(k)] - p0;
    return dot(d, d);
  });
  take(1);
  const Vec3<S> edge = chosen_point[1] - p0, n0 = plane ? frame_normal : out.normal[0];
  const auto side = [&](const Vec3<S>& p) { return dot(cross(p - p0, edge), n0); };  // signed, about the normal
  chosen[2] = arg_max(free_within(2), [&](int k) {
    const S s = side(scratch.point[static_cast<size_t>(k)]);
    return s * s;
  });
  take(2);
  const S side2 = side(chosen_point[2]);
  chosen[3] = arg_max(free_within(3), [&](int k) { return select(side2 > S(0), -S(1), S(1)) * side(scratch.point[static_cast<size_t>(k)]); });
  take(3);
  // Only a vertex strictly on the other side adds to the support.
  const S other = select(side2 > S(0), -S(1), S(1)) * side(chosen_point[3]);
  out.gap[3] = select(other > S(0), out.gap[3], S(std::numeric_limits<T>::infinity()));
  return out;
}

}  // namespace batchdyn
