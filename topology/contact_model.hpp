// What can touch the world: collision geometry on the robot's links, the points of it that can
// meet the ground (contact candidates), and the ground plane. Part of Model (Model::contacts);
// built once by the loaders (URDF <collision>, contact JSON files: topology/contacts.hpp).
//
// The contact solver works on a fixed-size set of candidates per model:
// a lane marks the active ones (gap < margin) with masks, so the candidate list is the plan.
// Against a plane, each primitive is reduced to points with a radius; the gap of candidate c is
//   gap_c = n . p_c - radius_c - height    (p_c: the candidate's point in the world frame)
// which is exact for spheres, capsules and boxes (a box touches a plane first with a corner;
// resting on a face, with four). A cylinder's and a convex hull's candidates are slots whose
// points are chosen at every step (ContactCandidate::slot), exact against a plane too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "layout/spatial.hpp"

namespace batchdyn {

// The largest size (m) of a collision geometry the loaders take: a kilometre. Beyond it a size
// is a unit or scale error, not a robot part.
inline constexpr double kMaxGeometrySize = 1000.0;

enum class CollisionShape {
  Sphere,    // radius: one candidate, its centre (exact against a plane)
  Capsule,   // radius, length (segment along the geometry's z): the two end centres (exact)
  Box,       // half extents: the 8 corners (exact)
  Cylinder,  // radius, length (axis along z): kCylinderContactsPerGeometry candidates, slots whose
             // points are placed on its rims at every step (ContactCandidate::slot), exact
             // against a plane
  Point,     // one point, radius 0 (a contact JSON's "point": feet of a mesh-only robot)
  ConvexHull,  // a mesh's convex hull (MJCF mesh geoms: MuJoCo collides a mesh through its hull), as
               // its vertices, exact against a plane (a convex solid touches a plane first with a
               // vertex). It has kHullContactsPerGeometry candidates, slots whose points are chosen
               // among the vertices at every step (ContactCandidate::slot). At most
               // kHullVertexBudget vertices: a
               // hull with more keeps its support points along kHullVertexBudget directions spread
               // over the sphere (decimate_hull in topology/contacts.hpp); the loader notes how
               // far the kept hull falls inside the full one
};

// The most vertices a convex hull keeps (MuJoCo Warp's limit; MJX allows 200).
inline constexpr int kHullVertexBudget = 64;

// A convex hull's candidates against the ground: as many slots as MuJoCo's plane-convex collision
// returns contacts, each taking one vertex per step and lane (kernels/contact/hull_contact.hpp):
// the deepest vertex; of the vertices within the margin, the one farthest from it, the one
// farthest from the line through those two, and the one farthest on that line's other side. A flat
// sole on a plane touches with a whole face; four of its corners carry the same support, and the
// contact problem stays small (4 candidates where the hull has up to 64 vertices).
inline constexpr int kHullContactsPerGeometry = 4;

// A cylinder's candidates against the ground: as many slots as MuJoCo's plane-cylinder collision
// returns contacts, placed per step and lane (kernels/contact/cylinder_contact.hpp): the deepest
// point of the nearer cap's rim, the same point of the other cap, and the nearer rim at +-120
// degrees from the first: 4 candidates, exact, where 16 fixed rim points would fall 7.6 % of the
// radius short of the rim.
inline constexpr int kCylinderContactsPerGeometry = 4;

const char* collision_shape_name(CollisionShape shape);

// What a candidate measures. Against the ground: one point with a radius (every shape above).
// Between two geometries of a contact pair (ContactModel::pairs), the closest points of their
// cores (a sphere's centre, a capsule's segment, a box), the radii subtracted; the normal points
// from the second geometry (B) to the first (A), and A is pushed along it:
//   PointPoint      sphere - sphere (or a point): exact
//   PointSegment    sphere - capsule: exact
//   SegmentSegment  capsule - capsule: exact
//   PointBox        sphere - box: exact. Also a capsule's two end spheres against a box
//                   (capsule - box; a capsule lying across a box's edge with both ends off the
//                   box is missed).
//   Convex          a convex hull or a cylinder against any geometry, and a box against a box:
//                   the deepest point, by GJK and proximal depth steps on the two cores' support
//                   functions (kernels/contact/convex_contact.hpp; its tolerance is stated
//                   there). Between a box or a hull and a box or a hull with faces (and a capsule
//                   against a hull), kConvexContactsPerPair slots (slot): the deepest point and
//                   three chosen among the vertices (a capsule's ends) of each against the
//                   other's solid, as the hull's ground slots choose, so a box rests on a box or a
//                   hull's face as MuJoCo 4's convex collision rests it, on several contacts
//                   (4 candidates where the two boxes' corners were 16, and an edge crossing an
//                   edge is caught). A cylinder's pairs have the deepest point only.
// A pair candidate is measured only within reach: while its two geometries are more than its
// margin plus kPairReach apart by their bounds (each one's bounding sphere against the other's
// bounding box, both ways), its gap is +inf in that lane, and its narrow phase is skipped when
// that holds in every lane of a block. The bound costs two point-box distances per step, where a
// hull's GJK costs thousands of flops; what it misses is a body that closes more than kPairReach
// within one step (40 m/s at 5 ms).
enum class CandidateKind { Ground, PointPoint, PointSegment, SegmentSegment, PointBox, Convex };
inline constexpr double kPairReach = 0.2;  // m
inline constexpr int kConvexContactsPerPair = 4;

// A face plane of a hull: n . x <= offset inside (n outward, unit).
struct HullPlane {
  Vec3<double> normal = Vec3<double>::zero();
  double offset = 0.0;
};
// A convex hull's solid, built once per geometry (resolve_contacts) and shared by the Convex
// candidates of all of its pairs: its vertices and its faces' planes (none for a flat hull),
// both in the geometry's frame.
struct HullSolid {
  std::vector<Vec3<double>> vertices;
  std::vector<HullPlane> planes;
};
// One side of a Convex candidate: its geometry's core, which the kernel knows through its
// support function, and the radius around it.
enum class ConvexCoreShape { Point, Segment, Box, Cylinder, Hull };
struct ConvexCore {
  ConvexCoreShape shape = ConvexCoreShape::Point;
  Transform<double> in_body = Transform<double>::identity();  // the core's frame in its body's frame
  double radius = 0.0;                      // sphere, capsule: the gap is measured from the core minus this
  double half_length = 0.0;                 // segment, cylinder: along the core's z
  double disc_radius = 0.0;                 // cylinder
  Vec3<double> half_extents = Vec3<double>::zero();  // box
  std::shared_ptr<const HullSolid> hull;    // hull: its vertices and planes (the geometry's, shared)
  Vec3<double> centre = Vec3<double>::zero();  // a point inside the core (hull: its vertices' mean), core frame
  // The solid the vertices of the other side are measured against (slots): a box, or a hull with planes.
  bool solid() const { return shape == ConvexCoreShape::Box || (shape == ConvexCoreShape::Hull && !hull->planes.empty()); }
  // Whether it has vertices for the slots to choose among: a segment's ends, a box's corners, a hull's.
  bool has_vertices() const { return shape == ConvexCoreShape::Segment || shape == ConvexCoreShape::Box || shape == ConvexCoreShape::Hull; }
};

// A geometry's bounds for kPairReach, in its body's frame: its bounding sphere, and its bounding
// box (a box about its core's frame; a hull's about its vertices' box).
struct GeometryBounds {
  Vec3<double> centre = Vec3<double>::zero();
  double radius = 0.0;
  Transform<double> box = Transform<double>::identity();
  Vec3<double> half = Vec3<double>::zero();
};

const char* candidate_kind_name(CandidateKind kind);

// Default friction coefficient (MuJoCo's) and margin: a candidate within the margin of the
// ground enters the contact problem (gap < margin), where the solver decides whether it pushes.
inline constexpr double kDefaultFriction = 1.0;
inline constexpr double kDefaultContactMargin = 0.01;  // m

// Contacts are rigid by default (stiffness 0). A stiffness k > 0 (N/m) with damping d >= 0
// (N s/m) makes a candidate's normal a spring-damper, f_N = max(0, -k gap - d v_N), taken
// implicitly at the end of each step (normal_row_terms in kernels/contact/contact_settings.hpp): MuJoCo's
// soft contact as a compliance of the Delassus. Friction stays Coulomb's (rigid in the tangents).

// One primitive on a link, as loaded. The placement is kept relative to the link frame, so a
// model rebuilt around the link (lock_joints) re-resolves it (resolve_contacts).
struct CollisionGeometry {
  std::string name;              // "<link>/collision<k>" for URDF, as given in JSON
  std::string link;              // the link it is on
  CollisionShape shape = CollisionShape::Sphere;
  Transform<double> in_link = Transform<double>::identity();  // geometry frame in the link frame
  double radius = 0.0;           // sphere, capsule, cylinder
  double length = 0.0;           // capsule, cylinder (along the geometry's z)
  Vec3<double> half_extents = Vec3<double>::zero();  // box
  std::vector<Vec3<double>> vertices;  // convex hull: its (kept) vertices, in the geometry frame
  double friction = kDefaultFriction;  // mu of the Coulomb cone against the ground
  double margin = kDefaultContactMargin;
  double stiffness = 0.0;        // N/m, 0: rigid
  double damping = 0.0;          // N s/m, only with a stiffness
  bool touches_ground = true;    // false: only in its pairs (a fingertip that never meets the floor)
  std::string source;            // where it was declared, for messages
  // Resolved against the model:
  int body = 0;                  // the body the link belongs to (0: the world, never in contact)
  Transform<double> in_body = Transform<double>::identity();
  std::vector<Vec3<double>> body_vertices;  // convex hull: its vertices in the body frame (in_body applied)
  ConvexCore core;               // as a side of its Convex pairs (planes computed once per hull)
  GeometryBounds bounds;         // for its pairs' reach
};

// A point of a geometry that can meet the ground, in its body's frame; or (kind != Ground) a
// feature of a pair's geometry A (point or segment) against geometry B's core.
struct ContactCandidate {
  int geometry = 0;              // index in ContactModel::geometries (A for a pair)
  int body = 0;                  // > 0 against the ground; a pair's A may be on the world (0), B then moves
  Vec3<double> point = Vec3<double>::zero();
  double radius = 0.0;           // the gap is measured from the point minus this radius
  CandidateKind kind = CandidateKind::Ground;
  // Against another geometry (kind != Ground):
  int pair = -1;                 // index in ContactModel::pairs
  Vec3<double> point_end = Vec3<double>::zero();  // SegmentSegment: A's segment is point .. point_end (body frame)
  int geometry2 = -1;            // B
  int body2 = 0;                 // B's body (0: the world, B never moves)
  Transform<double> other_in_body2 = Transform<double>::identity();  // B's core frame in body2's frame
  double radius2 = 0.0;          // B's radius (sphere, capsule; 0 for a box)
  double half_length2 = 0.0;     // PointSegment, SegmentSegment: B's segment is +-half_length2 along its z
  Vec3<double> half_extents2 = Vec3<double>::zero();  // PointBox: B's box
  ConvexCore convex_a, convex_b;  // Convex: A's and B's cores (their geometries' `core`: a hull's solid is shared)
  GeometryBounds bounds, bounds2;  // a pair's: A's (body's frame) and B's (body2's), for kPairReach
  int slot = -1;                 // a Convex pair's slot (0: the deepest point; 1 .. 3 chosen among vertices), or
                                 // a convex hull's or a cylinder's ground slot (0 .. 3): its point is chosen among the
                                 // hull's vertices or placed on the cylinder's rims per step (`point`
                                 // unused); -1 otherwise
  bool against_ground() const { return kind == CandidateKind::Ground; }
};

// Two geometries that may touch each other (self-collision and body-body contact are off unless
// a contact file lists the pair). Its own friction and margin.
struct ContactPair {
  std::string name;              // "<A>-<B>" unless given
  int geometry1 = 0, geometry2 = 0;  // A, B (indices in ContactModel::geometries)
  double friction = kDefaultFriction;
  double margin = kDefaultContactMargin;
  double stiffness = 0.0;        // N/m, 0: rigid
  double damping = 0.0;          // N s/m
  std::string source;
};

// The plane n . x = height (world frame), n a unit vector.
struct GroundPlane {
  bool present = false;
  double height = 0.0;
  Vec3<double> normal{0.0, 0.0, 1.0};
};

// Terrain: heights z = h(x, y) on a regular grid of the world's xy-plane (z up), bilinear
// between the grid points; beyond the grid the edge heights extend flat. Point (i, j) is at
// (origin_x + i spacing, origin_y + j spacing) with height heights[j * nx + i]. When present it
// replaces the plane (the ground's height and normal are not used). Checked by
// check_height_field (topology/contacts.hpp).
struct HeightField {
  int nx = 0, ny = 0;                  // >= 2 points along x and y
  double origin_x = 0.0, origin_y = 0.0;
  double spacing = 0.0;                // m, > 0
  std::vector<double> heights;         // nx * ny, row j = y index, finite
  bool present() const { return nx > 0; }
};


struct ContactModel {
  std::vector<CollisionGeometry> geometries;
  std::vector<ContactPair> pairs;
  // The ground candidates in geometry order (geometries on the world, or with touches_ground
  // false, have none), then the pairs' in pair order (a pair on one body has none).
  std::vector<ContactCandidate> candidates;
  GroundPlane ground;
  HeightField terrain;                       // none by default; a contact file's "terrain"
  // URDF <collision> elements not turned into geometry (meshes), one message each: `info` prints them.
  std::vector<std::string> skipped;

  // Candidate k's friction coefficient, margin, stiffness and damping: its pair's, or its geometry's.
  double friction(int k) const {
    const ContactCandidate& c = candidates[static_cast<size_t>(k)];
    return c.pair >= 0 ? pairs[static_cast<size_t>(c.pair)].friction : geometries[static_cast<size_t>(c.geometry)].friction;
  }
  double margin(int k) const {
    const ContactCandidate& c = candidates[static_cast<size_t>(k)];
    return c.pair >= 0 ? pairs[static_cast<size_t>(c.pair)].margin : geometries[static_cast<size_t>(c.geometry)].margin;
  }
  double stiffness(int k) const {
    const ContactCandidate& c = candidates[static_cast<size_t>(k)];
    return c.pair >= 0 ? pairs[static_cast<size_t>(c.pair)].stiffness : geometries[static_cast<size_t>(c.geometry)].stiffness;
  }
  double damping(int k) const {
    const ContactCandidate& c = candidates[static_cast<size_t>(k)];
    return c.pair >= 0 ? pairs[static_cast<size_t>(c.pair)].damping : geometries[static_cast<size_t>(c.geometry)].damping;
  }
  int num_ground_candidates() const {
    int count = 0;
    for (const ContactCandidate& c : candidates) count += c.against_ground();
    return count;
  }
  // Whether a candidate can touch anything: the ground (with ground candidates), or a pair's.
  bool can_collide() const {
    const int ground_candidates = num_ground_candidates();
    return (ground.present && ground_candidates > 0) || static_cast<int>(candidates.size()) > ground_candidates;
  }
};

}  // namespace batchdyn
