// Building a model's contact data (topology/contact_model.hpp): collision geometry from a robot
// file or a contact JSON file, its contact candidates, and the ground plane.
#pragma once

#include <string>

#include "topology/model.hpp"

namespace batchdyn {

// Adds one geometry on `geometry.link` and its candidates. Checks: the link exists, sizes are
// finite and > 0 (what the shape uses), friction finite and >= 0, margin finite and >= 0, the
// name unique. Geometry on a link of the world body (a fixed base) gets no candidates: it never
// moves. Throws Error naming `source`, the geometry and the value at fault. O(1) per candidate.
void add_collision_geometry(Model& model, CollisionGeometry geometry, const std::string& source);

// Adds a pair of geometries that may touch (ContactPair; body-body contact is off otherwise)
// and its candidates (CandidateKind). Checks: both indices valid and different, neither a
// cylinder, not two points, not both on the world, friction and margin finite and >= 0, the
// name unique (default "<A>-<B>"), the two not paired already. Two geometries on one body get
// no candidates. Throws Error naming `source`. O(candidates).
void add_contact_pair(Model& model, ContactPair pair, const std::string& source);

// The index of the collision geometry called `name`, or -1.
int find_collision_geometry(const ContactModel& contacts, const std::string& name);

// A convex hull cut down to a vertex budget (CollisionShape::ConvexHull), greedily: over 4096
// directions spread evenly over the sphere (a Fibonacci lattice), keep the full hull's support
// vertex along the direction where the kept hull falls furthest inside, until the budget is spent.
// Every kept vertex is a vertex of the full hull, so the kept hull lies inside it; support_error
// (m) is how far inside at most over those directions (0 when nothing was dropped).
// O(4096 (n + budget^2)).
struct DecimatedHull {
  std::vector<Vec3d> vertices;
  double support_error = 0.0;
};
DecimatedHull decimate_hull(const std::vector<Vec3d>& vertices, int budget = kHullVertexBudget);

// Makes `geometry` the convex hull of `points` (a hull's vertices, or a superset of them), cut
// down by decimate_hull. Returns "" when every point was kept, else what the cut did, for the
// loader's note: "convex hull of <n> vertices kept at <budget> (lies inside the full hull by at
// most <e> mm)".
std::string set_convex_hull(CollisionGeometry& geometry, const std::vector<Vec3d>& points);

// Recomputes every geometry's body and placement from its link frame, and the candidates
// (after the bodies changed, e.g. by lock_joints). O(geometries + candidates).
void resolve_contacts(Model& model);

// The ground a model gets when it is loaded: a plane at z = 0 (normal +z) when a body has a
// free-flyer joint (a floating robot or object), none otherwise (an arm is bolted to something).
// A contact file sets or removes it.
void set_default_ground(Model& model);

// A warning for a model that will fall through its ground, or "": a free-floating robot over a
// ground with no contact candidate (a robot file whose collisions are all meshes, which are
// skipped, or none). Names the skipped geometry and the remedy. `batchdyn info`, Python's load()
// and Model.info() show it.
std::string contact_warning(const Model& model);

// Throws Error naming `where` unless nx, ny >= 2, nx * ny heights, all finite, the origin
// finite and the spacing finite and > 0.
void check_height_field(const HeightField& field, const std::string& where);

// Reads a contact JSON document into the model:
//   { "ground": {"height": 0, "normal": [0, 0, 1]} | null,       (null: no ground)
//     "terrain": {"origin": [x0, y0], "spacing": s,              (a height field: replaces the
//                 "heights": [[h(x0, y0), h(x0 + s, y0), ...],     plane, needs a ground)
//                             [h(x0, y0 + s), ...], ...]},       (one row per y)
//     "friction": mu, "margin": m,                               (defaults for what follows)
//     "file_collisions": true | false,                            (false: drop the robot file's)
//     "geometries": [ {"name": "...", "link": "...",
//                      "sphere": {"radius": r} | "capsule": {"radius": r, "length": l}
//                      | "box": {"size": [x, y, z]} | "cylinder": {"radius": r, "length": l}
//                      | "point": {},
//                      "placement": {"xyz": [...], "rpy": [...]},      (in the link frame)
//                      "friction": mu, "margin": m,
//                      "ground": true | false }, ... ],           (false: only in its pairs)
//     "pairs": [ {"geometries": ["A", "B"], "name": "...",        (body-body contact between
//                 "friction": mu, "margin": m}, ... ] }           geometries, by name)
// Throws Error naming `source`, the entry and the value at fault.
void add_contacts_from_json(Model& model, const std::string& json_text, const std::string& source);
void add_contacts_from_json_file(Model& model, const std::string& path);

}  // namespace batchdyn
