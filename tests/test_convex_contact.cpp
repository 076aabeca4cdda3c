// Contact between a convex hull or a cylinder and another geometry (CandidateKind::Convex,
// kernels/contact/convex_contact.hpp): GJK's distances and the proximal depth steps against
// closed forms (a sphere or a box against a box, a cylinder on a box) and against an independent
// numerical oracle (alternating projections between two boxes); the lanes against W = 1, bit for
// bit, whatever their block mates; and pairs with hulls and cylinders in a stepped scene.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <random>

#include "batch_helpers.hpp"
#include "kernels/contact/pair_contact.hpp"
#include "topology/contacts.hpp"
#include "topology/scene.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

ConvexCore box_core(const Vec3d& h) {
  ConvexCore c;
  c.shape = ConvexCoreShape::Box, c.half_extents = h;
  return c;
}

// The same box as a hull of its 8 corners (no face planes: only its support function is used).
ConvexCore box_hull_core(const Vec3d& h) {
  ConvexCore c;
  c.shape = ConvexCoreShape::Hull;
  HullSolid hull;
  for (double sx : {-1.0, 1.0})
    for (double sy : {-1.0, 1.0})
      for (double sz : {-1.0, 1.0}) hull.vertices.push_back({sx * h.x, sy * h.y, sz * h.z});
  c.hull = std::make_shared<const HullSolid>(std::move(hull));
  return c;
}

ConvexCore sphere_core(double r) {
  ConvexCore c;
  c.shape = ConvexCoreShape::Point, c.radius = r;
  return c;
}

ConvexCore cylinder_core(double r, double half_length) {
  ConvexCore c;
  c.shape = ConvexCoreShape::Cylinder, c.disc_radius = r, c.half_length = half_length;
  return c;
}

ContactCandidate convex_candidate(const ConvexCore& a, const ConvexCore& b) {
  ContactCandidate c;
  c.kind = CandidateKind::Convex, c.pair = 0, c.convex_a = a, c.convex_b = b;
  return c;
}

struct Touch {
  double gap;
  Vec3d normal, point;
};

template <class S = double>
Touch touch(const ContactCandidate& c, const Transformd& a, const Transformd& b) {
  S gap;
  Vec3<S> normal, point;
  pair_contact(c, cast_transform<S>(a), cast_transform<S>(b), gap, normal, point);
  return {static_cast<double>(gap), cast3<double>(normal), cast3<double>(point)};
}

double norm(const Vec3d& v) { return std::sqrt(dot(v, v)); }

Transformd placed(const Vec3d& p, const Eigen::Quaterniond& r = Eigen::Quaterniond::Identity()) {
  Transformd X;
  X.translation = p;
  const Eigen::Matrix3d R = r.normalized().toRotationMatrix();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) X.rotation.m[i][j] = R(i, j);
  return X;
}

// W placements as one placement in lanes (lane l: X[l]).
template <class L>
Transform<L> lanes_of(const std::vector<Transformd>& X) {
  using T = lane_scalar<L>;
  constexpr int W = lane_width<L>;
  const auto lane = [&](auto get) {
    alignas(64) T values[W];
    for (int l = 0; l < W; ++l) values[l] = static_cast<T>(get(X[static_cast<size_t>(l)]));
    return L::load_aligned(values);
  };
  Transform<L> out;
  for (int i = 0; i < 3; ++i) {
    out.translation[i] = lane([&](const Transformd& x) { return x.translation[i]; });
    for (int j = 0; j < 3; ++j) out.rotation.m[i][j] = lane([&](const Transformd& x) { return x.rotation.m[i][j]; });
  }
  return out;
}

Eigen::Quaterniond random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return Eigen::Quaterniond(g(rng), g(rng), g(rng), g(rng)).normalized();
}

// The point of a box (half extents h, placement X) nearest p.
Vec3d project_to_box(const Transformd& X, const Vec3d& h, const Vec3d& p) {
  const Vec3d l = X.rotation.transpose_times(p - X.translation);
  return X.act_point({std::clamp(l.x, -h.x, h.x), std::clamp(l.y, -h.y, h.y), std::clamp(l.z, -h.z, h.z)});
}

// The distance between two disjoint boxes by alternating projections (each projection exact; the
// pair converges to a closest pair): an oracle that shares nothing with GJK.
double box_box_distance(const Transformd& A, const Vec3d& ha, const Transformd& B, const Vec3d& hb) {
  Vec3d a = A.translation, b = B.translation;
  for (int k = 0; k < 200000; ++k) {
    a = project_to_box(A, ha, b);
    b = project_to_box(B, hb, a);
  }
  return norm(a - b);
}

// Two free boxes "slab" and "crate" (a scene), with geometries `slab` and `crate` paired.
Model geometry_pair(CollisionGeometry slab, CollisionGeometry crate) {
  Scene scene("convex pair");
  scene.add_box("slab", 10.0, {0.6, 0.6, 0.1}).add_box("crate", 1.0, {0.2, 0.16, 0.1});
  Model m = scene.build();
  slab.name = "slab", slab.link = "slab";
  add_collision_geometry(m, slab, "test");
  crate.name = "crate", crate.link = "crate";
  add_collision_geometry(m, crate, "test");
  ContactPair pair;
  pair.geometry1 = find_collision_geometry(m.contacts, "crate"), pair.geometry2 = find_collision_geometry(m.contacts, "slab");
  add_contact_pair(m, pair, "test");
  return m;
}

// The same with a slab that is the hull of `slab_points`.
Model hull_pair(const std::vector<Vec3d>& slab_points, CollisionGeometry crate) {
  CollisionGeometry slab;
  set_convex_hull(slab, slab_points);
  return geometry_pair(slab, crate);
}

std::vector<Vec3d> corners(const Vec3d& h) {
  std::vector<Vec3d> out;
  for (double sx : {-1.0, 1.0})
    for (double sy : {-1.0, 1.0})
      for (double sz : {-1.0, 1.0}) out.push_back({sx * h.x, sy * h.y, sz * h.z});
  return out;
}

CollisionGeometry box_geometry(const Vec3d& h) {
  CollisionGeometry g;
  g.shape = CollisionShape::Box, g.half_extents = h;
  return g;
}

// The slots of the model's first Convex pair, the crate at `crate` and the slab at `slab`.
PairSlots<double> slots_of(const Model& m, const Transformd& crate, const Transformd& slab) {
  int first = 0;
  while (m.contacts.candidates[static_cast<size_t>(first)].kind != CandidateKind::Convex) ++first;
  const ContactCandidate& c = m.contacts.candidates[static_cast<size_t>(first)];
  const bool crate_is_a = m.contacts.geometries[static_cast<size_t>(c.geometry)].name == "crate";
  const Transformd& a = crate_is_a ? crate : slab;
  const Transformd& b = crate_is_a ? slab : crate;
  const double margin = m.contacts.margin(first);
  return convex_pair_slots(pair_within_reach(c, a, b, margin), c, a, b, margin, convex_slots(m.contacts.candidates, first));
}

}  // namespace

TEST_CASE("convex contact: a sphere against a box's hull has the closed form's gap, normal and point, apart and sunk in") {
  const Vec3d h{0.3, 0.2, 0.1};
  const ContactCandidate c = convex_candidate(sphere_core(0.05), box_hull_core(h));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  int apart = 0, sunk = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Transformd box = placed({u(rng), u(rng), u(rng)}, random_rotation(rng));
    const Vec3d centre{u(rng), u(rng), u(rng)};
    CAPTURE(trial);
    double gap;
    Vec3d normal, point;
    point_box_contact(centre, 0.05, box, h, gap, normal, point);  // exact (tests/test_contact_pairs.cpp)
    const Touch r = touch(c, placed(centre), box);
    CHECK(r.gap == doctest::Approx(gap).epsilon(0).scale(1).epsilon(1e-9));
    CHECK(norm(r.normal - normal) < 1e-6);
    CHECK(norm(r.point - point) < 1e-6);
    (gap > -0.05 ? apart : sunk) += 1;  // sunk: the centre inside the box, the proximal steps' case
  }
  CHECK(apart > 100);
  CHECK(sunk > 5);
}

TEST_CASE("convex contact: two apart boxes, one as a hull, are as far apart as alternating projections find") {
  const Vec3d ha{0.2, 0.1, 0.05}, hb{0.15, 0.15, 0.3};
  const ContactCandidate c = convex_candidate(box_core(ha), box_hull_core(hb));
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 200 && checked < 40; ++trial) {
    const Transformd A = placed({u(rng), u(rng), u(rng)}, random_rotation(rng)), B = placed({0, 0, 0}, random_rotation(rng));
    const Touch r = touch(c, A, B);
    if (r.gap < 0.02) continue;  // apart by enough for the oracle's convergence
    CAPTURE(trial);
    CHECK(r.gap == doctest::Approx(box_box_distance(A, ha, B, hb)).epsilon(1e-7));
    // The contact point lies midway between the surfaces: r.gap / 2 from each.
    const Vec3d on_b = project_to_box(B, hb, r.point), on_a = project_to_box(A, ha, r.point);
    CHECK(norm(r.point - on_b) == doctest::Approx(0.5 * r.gap).epsilon(1e-6));
    CHECK(norm(r.point - on_a) == doctest::Approx(0.5 * r.gap).epsilon(1e-6));
    ++checked;
  }
  CHECK(checked == 40);
}

TEST_CASE("convex contact: a box sunk face-down into a hull's top face has the exact depth and the face's normal") {
  const Vec3d h{0.5, 0.5, 0.1}, small{0.1, 0.05, 0.02};
  const ContactCandidate c = convex_candidate(box_core(small), box_hull_core(h));
  for (const double depth : {1e-4, 3e-3, 0.015}) {
    for (const double yaw : {0.0, 0.3, 1.2}) {
      CAPTURE(depth);
      CAPTURE(yaw);
      const Eigen::Quaterniond turn(Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ()));
      const Touch r = touch(c, placed({0.1, -0.2, 0.1 + 0.02 - depth}, turn), placed({0, 0, 0}));
      CHECK(r.gap == doctest::Approx(-depth).epsilon(1e-9));
      CHECK(norm(r.normal - Vec3d{0, 0, 1}) < 1e-9);
      CHECK(std::abs(r.point.z - (0.1 - 0.5 * depth)) < 1e-9);  // midway in the overlap
      CHECK(std::abs(r.point.x - 0.1) < 0.11);
      CHECK(std::abs(r.point.y + 0.2) < 0.11);
    }
  }
}

TEST_CASE("convex contact: a point pressed into a hull's corner is pushed out through the nearer face") {
  const Vec3d h{0.2, 0.2, 0.2};
  const ContactCandidate c = convex_candidate(sphere_core(0.0), box_hull_core(h));
  // A point 1 cm inside the +x face and 3 cm inside the +y face: the least depth is along +x.
  const Touch r = touch(c, placed({0.19, 0.17, 0.0}), placed({0, 0, 0}));
  CHECK(r.gap == doctest::Approx(-0.01));
  CHECK(norm(r.normal - Vec3d{1, 0, 0}) < 1e-9);
}

TEST_CASE("convex contact: an upright cylinder over a box has the closed-form gap, tilted its rim's lowest point") {
  const ContactCandidate c = convex_candidate(cylinder_core(0.1, 0.2), box_core({1.0, 1.0, 0.1}));
  const Touch upright = touch(c, placed({0.0, 0.0, 0.1 + 0.2 + 0.03}), placed({0, 0, 0}));
  CHECK(upright.gap == doctest::Approx(0.03).epsilon(1e-9));
  CHECK(norm(upright.normal - Vec3d{0, 0, 1}) < 1e-9);
  // Tilted by a about x: the lowest rim point is r sin a + L cos a below the centre.
  const double a = 0.4, z = 0.5;
  const Eigen::Quaterniond tilt(Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()));
  const Touch tilted = touch(c, placed({0.0, 0.0, z}, tilt), placed({0, 0, 0}));
  CHECK(tilted.gap == doctest::Approx(z - 0.1 * std::sin(a) - 0.2 * std::cos(a) - 0.1).epsilon(1e-6));
  CHECK(norm(tilted.normal - Vec3d{0, 0, 1}) < 1e-5);
  // Sunk 4 mm: the depth steps find the box's face.
  const Touch sunk = touch(c, placed({0.0, 0.0, 0.1 + 0.2 - 0.004}), placed({0, 0, 0}));
  CHECK(sunk.gap == doctest::Approx(-0.004).epsilon(1e-9));
  CHECK(norm(sunk.normal - Vec3d{0, 0, 1}) < 1e-9);
}

TEST_CASE("convex contact: a hull against a hull equals the hull against the same box") {
  const Vec3d ha{0.1, 0.2, 0.15}, hb{0.3, 0.1, 0.1};
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  for (int trial = 0; trial < 100; ++trial) {
    CAPTURE(trial);
    const Transformd A = placed({u(rng), u(rng), u(rng)}, random_rotation(rng)), B = placed({u(rng), u(rng), u(rng)}, random_rotation(rng));
    const Touch hulls = touch(convex_candidate(box_hull_core(ha), box_hull_core(hb)), A, B);
    const Touch boxes = touch(convex_candidate(box_hull_core(ha), box_core(hb)), A, B);
    CHECK(hulls.gap == doctest::Approx(boxes.gap).epsilon(1e-9));
    if (hulls.gap > 1e-6) CHECK(norm(hulls.normal - boxes.normal) < 1e-6);
  }
}

TEST_CASE("convex contact: a separating direction is found for every overlap, and its depth separates the two") {
  // Whatever the overlap, moving A by -gap along the normal leaves the two just touching.
  const Vec3d ha{0.1, 0.2, 0.15}, hb{0.3, 0.1, 0.1};
  const ContactCandidate c = convex_candidate(box_hull_core(ha), box_core(hb));
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  int overlaps = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    Transformd A = placed({u(rng), u(rng), u(rng)}, random_rotation(rng));
    const Transformd B = placed({0, 0, 0}, random_rotation(rng));
    const Touch r = touch(c, A, B);
    if (r.gap >= 0) continue;
    ++overlaps;
    A.translation = A.translation - r.normal * (r.gap - 1e-6);
    CHECK(touch(c, A, B).gap == doctest::Approx(1e-6).epsilon(0).scale(1).epsilon(1e-8));
  }
  CHECK(overlaps > 100);
}

TEST_CASE("convex contact: every lane equals its W = 1 run bit for bit, whatever its block mates") {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(-0.4, 0.4);
  const ContactCandidate cases[] = {convex_candidate(sphere_core(0.05), box_hull_core({0.2, 0.1, 0.1})),
                                    convex_candidate(box_core({0.1, 0.1, 0.05}), box_hull_core({0.2, 0.1, 0.1})),
                                    convex_candidate(cylinder_core(0.05, 0.1), box_hull_core({0.2, 0.1, 0.1}))};
  const auto check_lanes = [&]<class T>(T) {
    using L = SimdLane<T>;
    constexpr int W = lane_width<L>;
    for (const ContactCandidate& c : cases)
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<Transformd> A(W), B(W);
        for (int l = 0; l < W; ++l) A[l] = placed({u(rng), u(rng), u(rng)}, random_rotation(rng)), B[l] = placed({0, 0, 0}, random_rotation(rng));
        const Transform<L> a = lanes_of<L>(A), b = lanes_of<L>(B);
        L gap;
        Vec3<L> normal, point;
        pair_contact(c, a, b, gap, normal, point);
        for (int l = 0; l < W; ++l) {
          T gap1;
          Vec3<T> normal1, point1;
          pair_contact(c, cast_transform<T>(A[static_cast<size_t>(l)]), cast_transform<T>(B[static_cast<size_t>(l)]), gap1, normal1, point1);
          CHECK(gap.get(static_cast<size_t>(l)) == gap1);
          for (int i = 0; i < 3; ++i) {
            CHECK(normal[i].get(static_cast<size_t>(l)) == normal1[i]);
            CHECK(point[i].get(static_cast<size_t>(l)) == point1[i]);
          }
        }
      }
  };
  check_lanes(double{});
  check_lanes(float{});
}

TEST_CASE("convex slots: a box or a hull against a hull gets four slots, a cylinder's pair one") {
  const Model box_on_hull = hull_pair(corners({0.3, 0.3, 0.05}), box_geometry({0.1, 0.08, 0.05}));
  int convex = 0;
  for (const ContactCandidate& c : box_on_hull.contacts.candidates) convex += c.kind == CandidateKind::Convex;
  CHECK(convex == kConvexContactsPerPair);
  CHECK(box_on_hull.contacts.candidates.back().slot == kConvexContactsPerPair - 1);
  CollisionGeometry cylinder;
  cylinder.shape = CollisionShape::Cylinder, cylinder.radius = 0.05, cylinder.length = 0.1;
  const Model cylinder_on_hull = hull_pair(corners({0.3, 0.3, 0.05}), cylinder);
  convex = 0;
  for (const ContactCandidate& c : cylinder_on_hull.contacts.candidates) convex += c.kind == CandidateKind::Convex;
  CHECK(convex == 1);
}

TEST_CASE("convex slots: a box resting face-down on a hull's face or on a box is held at four points at the depth, three of them its corners") {
  const Vec3d h{0.1, 0.08, 0.05};
  for (const Model& m : {hull_pair(corners({0.3, 0.3, 0.05}), box_geometry(h)), geometry_pair(box_geometry({0.3, 0.3, 0.05}), box_geometry(h))}) {
    CAPTURE(m.contacts.geometries[0].shape == CollisionShape::Box);
    const double depth = 0.002, yaw = 0.3;
    const Transformd crate = placed({0.05, -0.02, 0.05 + h.z - depth}, Eigen::Quaterniond(Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ())));
    const PairSlots<double> slots = slots_of(m, crate, placed({0, 0, 0}));
    for (int s = 0; s < kConvexContactsPerPair; ++s) {
      CAPTURE(s);
      CHECK(slots.gap[s] == doctest::Approx(-depth).epsilon(1e-9));
      CHECK(norm(slots.normal[s] - Vec3d{0, 0, 1}) < 1e-9);
      CHECK(slots.point[s].z == doctest::Approx(0.05 - 0.5 * depth).epsilon(1e-9));
    }
    for (int s = 1; s < kConvexContactsPerPair; ++s) {  // a bottom corner of the crate, seen from above
      bool corner = false;
      for (const Vec3d& v : corners(h)) {
        const Vec3d p = crate.act_point(v);
        corner = corner || (v.z < 0 && std::hypot(p.x - slots.point[s].x, p.y - slots.point[s].y) < 1e-9);
      }
      CHECK(corner);
      for (int t = 0; t < s; ++t) CHECK(norm(slots.point[s] - slots.point[t]) > 0.01);
    }
  }
}

TEST_CASE("convex slots: two boxes pair as Convex with four slots, where their corners were 16 candidates") {
  const Model m = geometry_pair(box_geometry({0.3, 0.3, 0.05}), box_geometry({0.1, 0.08, 0.05}));
  int convex = 0, other = 0;
  for (const ContactCandidate& c : m.contacts.candidates)
    if (c.pair >= 0) convex += c.kind == CandidateKind::Convex, other += c.kind != CandidateKind::Convex;
  CHECK(convex == kConvexContactsPerPair);
  CHECK(other == 0);
}

TEST_CASE("convex slots: a wide box on a small box's top is held at the small box's corners, pushed up") {
  // The slab (B) is the small one here: its top corners press into the crate's (A's) bottom face.
  const Vec3d small{0.05, 0.04, 0.05};
  const Model m = geometry_pair(box_geometry(small), box_geometry({0.2, 0.2, 0.05}));
  const double depth = 0.001;
  const PairSlots<double> slots = slots_of(m, placed({0.01, 0.0, 0.05 + 0.05 - depth}), placed({0, 0, 0}));
  int at_corners = 0;
  for (int s = 0; s < kConvexContactsPerPair; ++s) {
    CAPTURE(s);
    CHECK(slots.gap[s] == doctest::Approx(-depth).epsilon(1e-9));
    CHECK(norm(slots.normal[s] - Vec3d{0, 0, 1}) < 1e-9);  // from B to A: up, the crate pushed up
    for (const Vec3d& v : corners(small)) at_corners += v.z > 0 && std::hypot(v.x - slots.point[s].x, v.y - slots.point[s].y) < 1e-9;
  }
  CHECK(at_corners >= 3);
}

TEST_CASE("convex slots: two boxes whose edges cross, no corner of either inside the other, touch at the crossing") {
  // A's lowest edge along x, B's highest edge along y (each box turned 45 degrees about it), 1 mm deep.
  const Vec3d h{0.1, 0.1, 0.1};
  const Model m = geometry_pair(box_geometry(h), box_geometry(h));
  const double reach = 0.1 * std::sqrt(2.0), depth = 0.001;
  const Transformd crate = placed({0, 0, 2 * reach - depth}, Eigen::Quaterniond(Eigen::AngleAxisd(std::numbers::pi / 4, Eigen::Vector3d::UnitX())));
  const Transformd slab = placed({0, 0, 0}, Eigen::Quaterniond(Eigen::AngleAxisd(std::numbers::pi / 4, Eigen::Vector3d::UnitY())));
  for (const Vec3d& v : corners(h)) {  // no corner within 1 cm of the other box
    CHECK(norm(project_to_box(slab, h, crate.act_point(v)) - crate.act_point(v)) > 0.01);
    CHECK(norm(project_to_box(crate, h, slab.act_point(v)) - slab.act_point(v)) > 0.01);
  }
  const PairSlots<double> slots = slots_of(m, crate, slab);
  CHECK(slots.gap[0] == doctest::Approx(-depth).epsilon(1e-9));
  CHECK(norm(slots.normal[0] - Vec3d{0, 0, 1}) < 1e-9);
  CHECK(norm(slots.point[0] - Vec3d{0, 0, reach - 0.5 * depth}) < 1e-9);
}

TEST_CASE("convex slots: a hull sole half over a box's edge touches only where it is over the box") {
  // The sole (a hull) is the crate's geometry here: 0.2 x 0.1 x 0.04, its centre 5 cm past the
  // slab's edge at x = 0.3.
  CollisionGeometry sole;
  sole.shape = CollisionShape::ConvexHull;
  set_convex_hull(sole, corners({0.1, 0.05, 0.02}));
  const Model m = hull_pair(corners({0.3, 0.3, 0.05}), sole);
  const PairSlots<double> slots = slots_of(m, placed({0.35, 0.0, 0.05 + 0.02 - 0.001}), placed({0, 0, 0}));
  int touching = 0;
  for (int s = 0; s < kConvexContactsPerPair; ++s) {
    CAPTURE(s);
    if (!std::isfinite(slots.gap[s])) continue;
    ++touching;
    CHECK(slots.gap[s] == doctest::Approx(-0.001).epsilon(1e-9));
    CHECK(slots.point[s].x <= 0.3 + 1e-9);
  }
  CHECK(touching >= 3);
}

TEST_CASE("convex slots: every lane equals its W = 1 run bit for bit") {
  const Model m = hull_pair(corners({0.3, 0.3, 0.05}), box_geometry({0.1, 0.08, 0.05}));
  int first = 0;
  while (m.contacts.candidates[static_cast<size_t>(first)].kind != CandidateKind::Convex) ++first;
  const ContactCandidate& c = m.contacts.candidates[static_cast<size_t>(first)];
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-0.02, 0.02);
  const auto check_lanes = [&]<class T>(T) {
    using L = SimdLane<T>;
    constexpr int W = lane_width<L>;
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<Transformd> A(W);  // the crate near rest on the slab, tilted a little
      for (int l = 0; l < W; ++l) {
        const Eigen::Quaterniond tilt = Eigen::Quaterniond(1.0, u(rng), u(rng), 10 * u(rng)).normalized();
        A[static_cast<size_t>(l)] = placed({10 * u(rng), 10 * u(rng), 0.1 + u(rng)}, tilt);
      }
      const Transform<L> a = lanes_of<L>(A);
      const Transform<L> b = Transform<L>::identity();
      const L margin(static_cast<T>(m.contacts.margin(first)));
      const PairSlots<L> lanes = convex_pair_slots(pair_within_reach(c, a, b, margin), c, a, b, margin, kConvexContactsPerPair);
      for (int l = 0; l < W; ++l) {
        const Transform<T> a1 = cast_transform<T>(A[static_cast<size_t>(l)]), b1 = Transform<T>::identity();
        const T margin1 = static_cast<T>(m.contacts.margin(first));
        const PairSlots<T> one = convex_pair_slots(pair_within_reach(c, a1, b1, margin1), c, a1, b1, margin1, kConvexContactsPerPair);
        for (int s = 0; s < kConvexContactsPerPair; ++s) {
          CHECK(lanes.gap[s].get(static_cast<size_t>(l)) == one.gap[s]);
          for (int i = 0; i < 3; ++i) CHECK(lanes.point[s][i].get(static_cast<size_t>(l)) == one.point[s][i]);
        }
      }
    }
  };
  check_lanes(double{});
  check_lanes(float{});
}

TEST_CASE("pair reach: a long obstacle bounds by its box, and a pair beyond reach reads an infinite gap") {
  // A 4 m long step (its bounding sphere's radius is 2 m) and a crate beside it.
  const Model m = hull_pair(corners({0.1, 2.0, 0.04}), box_geometry({0.1, 0.08, 0.05}));
  int first = 0;
  while (m.contacts.candidates[static_cast<size_t>(first)].kind != CandidateKind::Convex) ++first;
  const ContactCandidate& c = m.contacts.candidates[static_cast<size_t>(first)];
  const double margin = m.contacts.margin(first);
  const Transformd step = placed({0, 0, 0});
  // Over the step's far end: within reach, measured.
  CHECK(pair_within_reach(c, placed({0.0, 1.9, 0.2}), step, margin));
  CHECK(touch(c, placed({0.0, 1.9, 0.2}), step).gap == doctest::Approx(0.2 - 0.05 - 0.04).epsilon(1e-9));
  // 0.36 m beside it (inside its bounding sphere): beyond the margin plus kPairReach.
  const Transformd beside = placed({0.6, 0.0, 0.1});
  CHECK_FALSE(pair_within_reach(c, beside, step, margin));
  double gap;
  Vec3d normal, point;
  pair_contact_within_reach(pair_within_reach(c, beside, step, margin), c, beside, step, gap, normal, point);
  CHECK(std::isinf(gap));
}
