// What can touch the world: collision geometry on the robot's links, the points of it that can
// meet the ground (contact candidates), and the ground plane. Part of Model (Model::contacts);
// built once by the loaders (URDF <collision>, contact JSON files: topology/contacts.hpp).
//
// The contact solver (issue 19, later steps) works on a fixed-size set of candidates per model:
// a lane marks the active ones (gap < margin) with masks, so the candidate list is the plan.
// Against a plane, each primitive is reduced to points with a radius; the gap of candidate c is
//   gap_c = n . p_c - radius_c - height    (p_c: the candidate's point in the world frame)
// which is exact for spheres, capsules and boxes (a box touches a plane first with a corner;
// resting on a face, with four), and approximate for cylinders (see CollisionShape).
#pragma once

#include <string>
#include <vector>

#include "layout/spatial.hpp"

namespace batchdyn {

enum class CollisionShape {
  Sphere,    // radius: one candidate, its centre (exact against a plane)
  Capsule,   // radius, length (segment along the geometry's z): the two end centres (exact)
  Box,       // half extents: the 8 corners (exact)
  Cylinder,  // radius, length (axis along z): 8 points on each rim circle; a rim between two
             // points reaches r (1 - cos 22.5 deg) = 7.6 % of r less far than the true rim
  Point,     // one point, radius 0 (a contact JSON's "point": feet of a mesh-only robot)
};

const char* collision_shape_name(CollisionShape shape);

// Default friction coefficient (MuJoCo's) and margin: a candidate within the margin of the
// ground enters the contact problem (gap < margin), where the solver decides whether it pushes.
inline constexpr double kDefaultFriction = 1.0;
inline constexpr double kDefaultContactMargin = 0.01;  // m

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
  double friction = kDefaultFriction;  // mu of the Coulomb cone against the ground
  double margin = kDefaultContactMargin;
  std::string source;            // where it was declared, for messages
  // Resolved against the model:
  int body = 0;                  // the body the link belongs to (0: the world, never in contact)
  Transform<double> in_body = Transform<double>::identity();
};

// A point of a geometry that can meet the ground, in its body's frame.
struct ContactCandidate {
  int geometry = 0;              // index in ContactModel::geometries
  int body = 0;                  // > 0
  Vec3<double> point = Vec3<double>::zero();
  double radius = 0.0;           // the gap is measured from the point minus this radius
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
  std::vector<ContactCandidate> candidates;  // in geometry order; geometries on the world have none
  GroundPlane ground;
  HeightField terrain;                       // none by default; a contact file's "terrain"
  // URDF <collision> elements not turned into geometry (meshes), one message each: `info` prints them.
  std::vector<std::string> skipped;
};

}  // namespace batchdyn
