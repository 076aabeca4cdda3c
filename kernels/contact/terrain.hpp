// The ground under a contact candidate: its gap and the surface normal there, against the plane
// n . x = height or a height field z = h(x, y) (topology/contact_model.hpp, HeightField).
//
// Height field: bilinear in each grid cell; beyond the grid the edge heights extend flat (zero
// slope). A candidate (centre p, radius r) meets the tangent plane of the surface below its
// centre, through s = (p_x, p_y, h) with normal n = (-h_x, -h_y, 1) / |.|:
//   gap = n . (p - s) - r = n_z (p_z - h) - r,
// exact on a planar cell (a tilted grid equals the tilted plane) and a first-order
// approximation where the surface curves within r of the centre's footprint. Its contact point
// is p - r n, its rows are n and two tangents of n (perpendicular_basis), as for the plane.
#pragma once

#include <algorithm>
#include <cmath>

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"

namespace batchdyn {

// One environment's height field: heights[j * nx + i] at (origin_x + i spacing, origin_y + j spacing).
template <class T>
struct TerrainView {
  const T* heights = nullptr;
  int nx = 0, ny = 0;
  T origin_x = 0, origin_y = 0, spacing = 1;
};

// Height h and slopes (dh/dx, dh/dy) at (x, y). A NaN coordinate reads the grid's first cell
// (its gap stays NaN through p_z): no out-of-range index from a diverged environment.
// Preconditions: nx, ny >= 2, spacing > 0 (check_height_field). O(1).
template <class T>
void terrain_height(const TerrainView<T>& f, T x, T y, T& h, T& slope_x, T& slope_y) {
  const T u_raw = (x - f.origin_x) / f.spacing, w_raw = (y - f.origin_y) / f.spacing;
  const T u_max = static_cast<T>(f.nx - 1), w_max = static_cast<T>(f.ny - 1);
  // Written so that NaN compares false and lands on 0.
  const T u = u_raw > T(0) ? (u_raw < u_max ? u_raw : u_max) : T(0);
  const T w = w_raw > T(0) ? (w_raw < w_max ? w_raw : w_max) : T(0);
  const int i = std::min(static_cast<int>(u), f.nx - 2), j = std::min(static_cast<int>(w), f.ny - 2);
  const T a = u - static_cast<T>(i), b = w - static_cast<T>(j);
  const T* row0 = f.heights + static_cast<long>(j) * f.nx + i;
  const T* row1 = row0 + f.nx;
  const T h00 = row0[0], h10 = row0[1], h01 = row1[0], h11 = row1[1];
  h = (T(1) - b) * ((T(1) - a) * h00 + a * h10) + b * ((T(1) - a) * h01 + a * h11);
  const T inside_x = u_raw == u ? T(1) : T(0), inside_y = w_raw == w ? T(1) : T(0);  // flat beyond the edges
  slope_x = inside_x * ((T(1) - b) * (h10 - h00) + b * (h11 - h01)) / f.spacing;
  slope_y = inside_y * ((T(1) - a) * (h01 - h00) + a * (h11 - h10)) / f.spacing;
}

// The ground of a lane block: the plane n . x = height per lane, or (terrain.nx > 0) a height
// field per lane (heights[l]: lane l's environment's grid; the grid's shape is shared).
template <class S>
struct GroundLanes {
  bool present = true;  // false: no ground (its candidates are never in contact)
  Vec3<S> normal;
  S height;
  TerrainView<lane_scalar<S>> terrain;  // shape and origin (heights unused)
  const lane_scalar<S>* terrain_heights[lane_width<S>] = {};
  bool has_terrain() const { return terrain.nx > 0; }
};

// The gap of a candidate with world centre p and radius r, and the unit surface normal below
// it, per lane. O(1) per lane (a gather of 4 heights per lane with a terrain).
template <class S>
void ground_under(const GroundLanes<S>& ground, const Vec3<S>& p, const S& radius, S& gap, Vec3<S>& normal) {
  if (!ground.has_terrain()) {
    normal = ground.normal;
    gap = dot(ground.normal, p) - radius - ground.height;
    return;
  }
  using std::sqrt;
  using T = lane_scalar<S>;
  constexpr int W = lane_width<S>;
  alignas(64) T xs[W], ys[W], hs[W], sx[W], sy[W];
  for (int l = 0; l < W; ++l) {
    xs[l] = LaneTraits<S>::get(p.x, l), ys[l] = LaneTraits<S>::get(p.y, l);
    TerrainView<T> view = ground.terrain;
    view.heights = ground.terrain_heights[l];
    terrain_height(view, xs[l], ys[l], hs[l], sx[l], sy[l]);
  }
  const S h = LaneTraits<S>::load(hs), slope_x = LaneTraits<S>::load(sx), slope_y = LaneTraits<S>::load(sy);
  const S inverse_length = S(T(1)) / sqrt(slope_x * slope_x + slope_y * slope_y + S(T(1)));
  normal = Vec3<S>{-slope_x * inverse_length, -slope_y * inverse_length, inverse_length};
  gap = normal.z * (p.z - h) - radius;
}

}  // namespace batchdyn
