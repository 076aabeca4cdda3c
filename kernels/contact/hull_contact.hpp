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

// The index k < n of the largest score(k) among those eligible(k) (a lane mask), per lane; -1
// where none is eligible. The first of equals.
template <class S, class Eligible, class Score>
S arg_max_lanes(int n, const Eligible& eligible, const Score& score) {
  using T = lane_scalar<S>;
  S best_index(T(-1)), best(-std::numeric_limits<T>::infinity());
  for (int k = 0; k < n; ++k) {
    const S value = score(k);
    const auto better = eligible(k) && value > best;
    best = select(better, value, best);
    best_index = select(better, S(static_cast<T>(k)), best_index);
  }
  return best_index;
}

// Slots 1-3's choice among n points (a hull's vertices against the ground; a Convex pair's vertices
// against the other side's solid, kernels/contact/pair_contact.hpp): the index each slot takes
// per lane (-1: none), and what decides whether it adds to the support.
template <class S>
struct SlotChoice {
  S index[kHullContactsPerGeometry];  // 1 .. 3 (index[0] unused)
  S edge2;  // |p1 - p0|^2: slot 1's distance from slot 0
  S side2;  // slot 2's signed side of the line p0 p1 (about the normal)
  S side3;  // slot 3's, positive on the other side from slot 2
};

// The slot rule shared by the hulls' ground slots and the Convex pairs' slots, as MuJoCo's
// plane-convex collision picks its contacts: among the points point[k] (any one frame) with gap[k]
// within the margin, in the lanes `lanes`, other than `first` (slot 0's own point, or -1) and
// those taken by an earlier slot,
//   1: the one farthest from p0 (slot 0's point);
//   2: the one farthest from the line through p0 and slot 1's point, about the normal n0;
//   3: the one farthest on that line's other side.
// Each an arg-max over the points in lanes; the caller takes the points and decides, from the
// distances returned, which add to the support.
template <class S, class M>
SlotChoice<S> choose_slots(int n, const S* gap, const Vec3<S>* point, const S& margin, const M& lanes, const S& first, const Vec3<S>& p0,
                           const Vec3<S>& n0) {
  using T = lane_scalar<S>;
  SlotChoice<S> out;
  out.index[0] = first;
  const auto free_within = [&](int upto) {
    return [&, upto](int k) {
      const S index(static_cast<T>(k));
      auto ok = gap[k] < margin && lanes && first != index;
      for (int s = 1; s < upto; ++s) ok = ok && out.index[s] != index;
      return ok;
    };
  };
  const auto point_of = [&](const S& index, const Vec3<S>& none) {
    Vec3<S> p = none;
    for (int k = 0; k < n; ++k) p = select3(index == S(static_cast<T>(k)), point[k], p);
    return p;
  };
  out.index[1] = arg_max_lanes<S>(n, free_within(1), [&](int k) { return dot(point[k] - p0, point[k] - p0); });
  const Vec3<S> edge = point_of(out.index[1], p0) - p0;
  out.edge2 = dot(edge, edge);
  const auto side = [&](const Vec3<S>& p) { return dot(cross(p - p0, edge), n0); };  // signed, about the normal
  out.index[2] = arg_max_lanes<S>(n, free_within(2), [&](int k) {
    const S s = side(point[k]);
    return s * s;
  });
  out.side2 = side(point_of(out.index[2], p0));
  const S flip = select(out.side2 > S(T(0)), S(T(-1)), S(T(1)));
  out.index[3] = arg_max_lanes<S>(n, free_within(3), [&](int k) { return flip * side(point[k]); });
  out.side3 = flip * side(point_of(out.index[3], p0));
  return out;
}

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
  const auto every = S(0) == S(0);  // every vertex, as a lane mask
  chosen[0] = arg_max_lanes<S>(n, [&](int) { return every; }, [&](int k) { return -scratch.gap[static_cast<size_t>(k)]; });
  take(0);
  if (!any_lane(out.gap[0] < margin)) {  // no vertex within the margin: slots 1-3 take none
    for (int s = 1; s < kHullContactsPerGeometry; ++s)
      out.gap[s] = S(std::numeric_limits<T>::infinity()), out.normal[s] = ground.normal, out.point[s] = Vec3<S>::zero();
    return out;
  }
  // The others among the vertices within the margin, each vertex taken once.
  const SlotChoice<S> choice =
      choose_slots(n, scratch.gap.data(), scratch.point.data(), margin, every, chosen[0], chosen_point[0], plane ? frame_normal : out.normal[0]);
  for (int s = 1; s < kHullContactsPerGeometry; ++s) chosen[s] = choice.index[s], take(s);
  // Only a vertex strictly on the other side adds to the support.
  out.gap[3] = select(choice.side3 > S(0), out.gap[3], S(std::numeric_limits<T>::infinity()));
  return out;
}

}  // namespace batchdyn
