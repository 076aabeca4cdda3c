#include "topology/contacts.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <utility>

#include "topology/json_parse.hpp"

namespace batchdyn {

const char* collision_shape_name(CollisionShape shape) {
  switch (shape) {
    case CollisionShape::Sphere: return "sphere";
    case CollisionShape::Capsule: return "capsule";
    case CollisionShape::Box: return "box";
    case CollisionShape::Cylinder: return "cylinder";
    case CollisionShape::Point: return "point";
    case CollisionShape::ConvexHull: return "convex_hull";
  }
  return "?";
}

const char* candidate_kind_name(CandidateKind kind) {
  switch (kind) {
    case CandidateKind::Ground: return "ground";
    case CandidateKind::PointPoint: return "point-point";
    case CandidateKind::PointSegment: return "point-segment";
    case CandidateKind::SegmentSegment: return "segment-segment";
    case CandidateKind::PointBox: return "point-box";
    case CandidateKind::Convex: return "convex";
  }
  return "?";
}

namespace {


std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// A size the shape uses: finite, > 0 and at most kMaxGeometrySize (a larger one is a unit or
// scale error: a 1e9 m box would put every robot 5e8 m deep in it).
void check_size(double value, const char* what, const std::string& where) {
  if (!(std::isfinite(value) && value > 0.0 && value <= kMaxGeometrySize))
    throw Error(where + ": " + what + " must be finite, > 0 and at most " + number_text(kMaxGeometrySize) + " m, got " + number_text(value));
}

// A geometry's or pair's contact parameters: mu and margin finite and >= 0; stiffness and
// damping finite and >= 0, a damping only with a stiffness (a damper alone holds nothing up).
void check_contact_parameters(double friction, double margin, double stiffness, double damping, const std::string& where) {
  if (!(std::isfinite(friction) && friction >= 0.0))
    throw Error(where + ": the friction coefficient must be finite and >= 0, got " + number_text(friction));
  if (!(std::isfinite(margin) && margin >= 0.0)) throw Error(where + ": the margin must be finite and >= 0, got " + number_text(margin));
  if (!(std::isfinite(stiffness) && stiffness >= 0.0))
    throw Error(where + ": the contact stiffness must be finite and >= 0 (N/m; 0: rigid), got " + number_text(stiffness));
  if (!(std::isfinite(damping) && damping >= 0.0))
    throw Error(where + ": the contact damping must be finite and >= 0 (N s/m), got " + number_text(damping));
  if (damping > 0.0 && stiffness == 0.0)
    throw Error(where + ": a contact damping needs a stiffness (a rigid contact has no damper), got damping " + number_text(damping) +
                " with stiffness 0");
}

void check_geometry(const CollisionGeometry& g, const std::string& where) {
  switch (g.shape) {
    case CollisionShape::Sphere: check_size(g.radius, "the radius", where); break;
    case CollisionShape::Capsule:
    case CollisionShape::Cylinder:
      check_size(g.radius, "the radius", where);
      check_size(g.length, "the length", where);
      break;
    case CollisionShape::Box:
      for (int k = 0; k < 3; ++k) check_size(2.0 * g.half_extents[k], "every box size", where);
      break;
    case CollisionShape::Point: break;
    case CollisionShape::ConvexHull:
      if (g.vertices.empty()) throw Error(where + ": a convex hull needs at least one vertex");
      if (static_cast<int>(g.vertices.size()) > kHullVertexBudget)
        throw Error(where + ": a convex hull keeps at most " + std::to_string(kHullVertexBudget) + " vertices, got " +
                    std::to_string(g.vertices.size()) + " (reduce it with decimate_hull)");
      for (const Vec3d& p : g.vertices)
        for (int k = 0; k < 3; ++k)
          if (!(std::isfinite(p[k]) && std::abs(p[k]) <= kMaxGeometrySize)) throw Error(where + ": a hull vertex is not finite or beyond 1 km");
      break;
  }
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(g.in_link.translation[k])) throw Error(where + ": the placement must be finite");
  check_contact_parameters(g.friction, g.margin, g.stiffness, g.damping, where);
}

// The candidates of geometry `index` (already resolved to its body), appended in body frame.
void append_candidates(const CollisionGeometry& g, int index, std::vector<ContactCandidate>& out) {
  if (g.body == 0 || !g.touches_ground) return;  // on the world: never moves, never in contact
  const auto add = [&](const Vec3d& local, double radius) {
    ContactCandidate c;
    c.geometry = index, c.body = g.body, c.point = g.in_body.act_point(local), c.radius = radius;
    out.push_back(c);
  };
  switch (g.shape) {
    case CollisionShape::Sphere: add(Vec3d::zero(), g.radius); break;
    case CollisionShape::Point: add(Vec3d::zero(), 0.0); break;
    case CollisionShape::Capsule:
      for (double end : {-0.5, 0.5}) add({0.0, 0.0, end * g.length}, g.radius);
      break;
    case CollisionShape::Box:
      for (double sx : {-1.0, 1.0})
        for (double sy : {-1.0, 1.0})
          for (double sz : {-1.0, 1.0}) add({sx * g.half_extents.x, sy * g.half_extents.y, sz * g.half_extents.z}, 0.0);
      break;
    case CollisionShape::Cylinder:    // slots: their points are placed on the rims per step
    case CollisionShape::ConvexHull:  // slots: their points are chosen among the vertices per step
      for (int slot = 0; slot < (g.shape == CollisionShape::Cylinder ? kCylinderContactsPerGeometry : kHullContactsPerGeometry); ++slot) {
        add(Vec3d::zero(), 0.0);
        out.back().slot = slot;
      }
      break;
  }
}

// How closely each shape's core is described: a point (sphere, point), a segment (capsule), a
// box. A pair's candidates put the simpler core on side A (CandidateKind).
int core_rank(CollisionShape shape) {
  switch (shape) {
    case CollisionShape::Sphere:
    case CollisionShape::Point: return 0;
    case CollisionShape::Capsule: return 1;
    case CollisionShape::Box: return 2;
    case CollisionShape::Cylinder:
    case CollisionShape::ConvexHull: return 3;
  }
  return 3;
}

// The face planes of the hull of `vertices` (up to kHullVertexBudget): every plane through three
// of them with all on its inner side (within 1e-9 of the hull's size), once. O(n^4), at load.
// None when the points are flat (no solid to measure against).
std::vector<HullPlane> hull_planes(const std::vector<Vec3d>& vertices) {
  double size = 0.0;
  for (const Vec3d& v : vertices) size = std::max(size, std::sqrt(dot(v - vertices[0], v - vertices[0])));
  const double tolerance = 1e-9 * std::max(size, 1e-9);
  std::vector<HullPlane> planes;
  const size_t n = vertices.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      for (size_t k = j + 1; k < n; ++k) {
        Vec3d normal = cross(vertices[j] - vertices[i], vertices[k] - vertices[i]);
        const double length = std::sqrt(dot(normal, normal));
        if (length <= 1e-12 * size * size) continue;  // collinear
        normal = normal * (1.0 / length);
        const double offset = dot(normal, vertices[i]);
        bool below = true, above = true;
        for (const Vec3d& v : vertices) {
          const double d = dot(normal, v) - offset;
          below = below && d <= tolerance;
          above = above && d >= -tolerance;
        }
        if (below && above) return {};  // every point on this plane: flat
        if (!below && !above) continue;
        const HullPlane plane = below ? HullPlane{normal, offset} : HullPlane{normal * -1.0, -offset};
        bool known = false;
        for (const HullPlane& p : planes) known = known || (dot(p.normal, plane.normal) > 1.0 - 1e-12 && std::abs(p.offset - plane.offset) <= tolerance);
        if (!known) planes.push_back(plane);
      }
  return planes;
}

// The mean of a hull's vertices: a point inside it.
Vec3d vertex_mean(const std::vector<Vec3d>& vertices) {
  Vec3d mean = Vec3d::zero();
  for (const Vec3d& v : vertices) mean = mean + v * (1.0 / static_cast<double>(vertices.size()));
  return mean;
}

// A geometry's core as a Convex candidate's side (ConvexCore), in its body's frame. A hull's
// solid is `hull` (built by resolve from the geometry's vertices).
ConvexCore convex_core(const CollisionGeometry& g, std::shared_ptr<const HullSolid> hull) {
  ConvexCore core;
  core.in_body = g.in_body;
  switch (g.shape) {
    case CollisionShape::Sphere: core.shape = ConvexCoreShape::Point, core.radius = g.radius; break;
    case CollisionShape::Point: core.shape = ConvexCoreShape::Point; break;
    case CollisionShape::Capsule: core.shape = ConvexCoreShape::Segment, core.radius = g.radius, core.half_length = 0.5 * g.length; break;
    case CollisionShape::Box: core.shape = ConvexCoreShape::Box, core.half_extents = g.half_extents; break;
    case CollisionShape::Cylinder:
      core.shape = ConvexCoreShape::Cylinder, core.disc_radius = g.radius, core.half_length = 0.5 * g.length;
      break;
    case CollisionShape::ConvexHull:
      core.shape = ConvexCoreShape::Hull, core.hull = std::move(hull);
      core.centre = vertex_mean(g.vertices);
      break;
  }
  return core;
}

// A geometry's bounds (kPairReach) in its body's frame: its bounding sphere, and its bounding box
// about its own frame (a hull's about its vertices' box).
GeometryBounds geometry_bounds(const CollisionGeometry& g) {
  GeometryBounds b;
  b.centre = g.in_body.translation, b.box = g.in_body;
  switch (g.shape) {
    case CollisionShape::Sphere: b.radius = g.radius, b.half = Vec3d{g.radius, g.radius, g.radius}; break;
    case CollisionShape::Point: break;
    case CollisionShape::Capsule: b.radius = 0.5 * g.length + g.radius, b.half = Vec3d{g.radius, g.radius, 0.5 * g.length + g.radius}; break;
    case CollisionShape::Box: b.radius = std::sqrt(dot(g.half_extents, g.half_extents)), b.half = g.half_extents; break;
    case CollisionShape::Cylinder: b.radius = std::hypot(g.radius, 0.5 * g.length), b.half = Vec3d{g.radius, g.radius, 0.5 * g.length}; break;
    case CollisionShape::ConvexHull: {
      const Vec3d centre = vertex_mean(g.vertices);
      for (const Vec3d& v : g.vertices) b.radius = std::max(b.radius, std::sqrt(dot(v - centre, v - centre)));
      b.centre = g.in_body.act_point(centre);
      Vec3d low = g.vertices[0], high = g.vertices[0];
      for (const Vec3d& v : g.vertices)
        for (int i = 0; i < 3; ++i) low[i] = std::min(low[i], v[i]), high[i] = std::max(high[i], v[i]);
      b.box = g.in_body * Transformd{Mat3d::identity(), (low + high) * 0.5}, b.half = (high - low) * 0.5;
      break;
    }
  }
  return b;
}

// The candidates of pair `index` (geometries resolved), appended: A's features against B's core.
void append_pair_candidates(const ContactModel& cm, int index, std::vector<ContactCandidate>& out) {
  const ContactPair& pair = cm.pairs[static_cast<size_t>(index)];
  int ia = pair.geometry1, ib = pair.geometry2;
  if (core_rank(cm.geometries[static_cast<size_t>(ia)].shape) > core_rank(cm.geometries[static_cast<size_t>(ib)].shape)) std::swap(ia, ib);
  const CollisionGeometry& a = cm.geometries[static_cast<size_t>(ia)];
  const CollisionGeometry& b = cm.geometries[static_cast<size_t>(ib)];
  if (a.body == b.body) return;  // they never move relative to each other
  // Convex: a cylinder or a hull (core_rank puts them on B), or two boxes.
  if (b.shape == CollisionShape::Cylinder || b.shape == CollisionShape::ConvexHull || a.shape == CollisionShape::Box) {
    ContactCandidate c;
    c.kind = CandidateKind::Convex, c.pair = index;
    c.geometry = ia, c.body = a.body, c.convex_a = a.core, c.bounds = a.bounds;
    c.geometry2 = ib, c.body2 = b.body, c.convex_b = b.core, c.bounds2 = b.bounds;
    // Slots beyond the deepest point: A's vertices (a capsule's ends) against B's solid.
    const int slots = c.convex_b.solid() && c.convex_a.has_vertices() ? kConvexContactsPerPair : 1;
    for (int slot = 0; slot < slots; ++slot) {
      out.push_back(c);
      out.back().slot = slot;
    }
    return;
  }
  // One feature of `from` (its own frame: point p, or segment p .. p_end) against `to`'s core.
  const auto add = [&](int from, int to, CandidateKind kind, const Vec3d& p, const Vec3d& p_end, double radius) {
    const CollisionGeometry& f = cm.geometries[static_cast<size_t>(from)];
    const CollisionGeometry& t = cm.geometries[static_cast<size_t>(to)];
    ContactCandidate c;
    c.kind = kind, c.pair = index;
    c.geometry = from, c.body = f.body, c.point = f.in_body.act_point(p), c.point_end = f.in_body.act_point(p_end), c.radius = radius;
    c.geometry2 = to, c.body2 = t.body, c.other_in_body2 = t.in_body;
    c.radius2 = t.shape == CollisionShape::Box || t.shape == CollisionShape::Point ? 0.0 : t.radius;
    c.half_length2 = t.shape == CollisionShape::Capsule ? 0.5 * t.length : 0.0;
    c.half_extents2 = t.shape == CollisionShape::Box ? t.half_extents : Vec3d::zero();
    c.bounds = f.bounds, c.bounds2 = t.bounds;
    out.push_back(c);
  };
  const double ra = a.shape == CollisionShape::Point ? 0.0 : a.radius;
  const Vec3d origin = Vec3d::zero(), low{0.0, 0.0, -0.5 * a.length}, high{0.0, 0.0, 0.5 * a.length};
  switch (b.shape) {
    case CollisionShape::Sphere:
    case CollisionShape::Point: add(ia, ib, CandidateKind::PointPoint, origin, origin, ra); break;
    case CollisionShape::Capsule:
      if (a.shape == CollisionShape::Capsule) add(ia, ib, CandidateKind::SegmentSegment, low, high, ra);
      else add(ia, ib, CandidateKind::PointSegment, origin, origin, ra);
      break;
    case CollisionShape::Box:
      if (a.shape == CollisionShape::Capsule) {
        for (const Vec3d& end : {low, high}) add(ia, ib, CandidateKind::PointBox, end, end, ra);
      } else {
        add(ia, ib, CandidateKind::PointBox, origin, origin, ra);
      }
      break;
    case CollisionShape::Cylinder:
    case CollisionShape::ConvexHull: break;  // Convex, above
  }
}

void resolve(const Model& model, CollisionGeometry& g) {
  const Frame& link = model.frames[static_cast<size_t>(model.frame_index(g.link, FrameKind::Link))];
  g.body = link.body;
  g.in_body = link.placement * g.in_link;
  g.body_vertices.clear();
  for (const Vec3d& v : g.vertices) g.body_vertices.push_back(g.in_body.act_point(v));
  // A hull's solid: its face planes are O(n^4) in the vertices, so they are built again only when
  // the vertices changed (resolve_contacts runs for every geometry added).
  std::shared_ptr<const HullSolid> hull = g.core.hull;
  const auto same_vertices = [&] {
    if (hull->vertices.size() != g.vertices.size()) return false;
    for (size_t k = 0; k < g.vertices.size(); ++k)
      for (int i = 0; i < 3; ++i)
        if (hull->vertices[k][i] != g.vertices[k][i]) return false;
    return true;
  };
  if (g.shape == CollisionShape::ConvexHull && (!hull || !same_vertices()))
    hull = std::make_shared<const HullSolid>(HullSolid{g.vertices, hull_planes(g.vertices)});
  g.core = convex_core(g, g.shape == CollisionShape::ConvexHull ? std::move(hull) : nullptr);
  g.bounds = geometry_bounds(g);
}

}  // namespace

void add_collision_geometry(Model& model, CollisionGeometry geometry, const std::string& source) {
  const std::string where = source + ": collision geometry '" + geometry.name + "' on link '" + geometry.link + "'";
  if (!model.has_frame(geometry.link, FrameKind::Link)) throw Error(where + ": the model has no such link");
  for (const CollisionGeometry& other : model.contacts.geometries)
    if (other.name == geometry.name) throw Error(where + ": a geometry of that name exists already (" + other.source + ")");
  check_geometry(geometry, where);
  geometry.source = source;
  resolve(model, geometry);
  model.contacts.geometries.push_back(std::move(geometry));
  resolve_contacts(model);
}

int find_collision_geometry(const ContactModel& contacts, const std::string& name) {
  for (size_t k = 0; k < contacts.geometries.size(); ++k)
    if (contacts.geometries[k].name == name) return static_cast<int>(k);
  return -1;
}

void add_contact_pair(Model& model, ContactPair pair, const std::string& source) {
  ContactModel& cm = model.contacts;
  const int count = static_cast<int>(cm.geometries.size());
  if (pair.geometry1 < 0 || pair.geometry1 >= count || pair.geometry2 < 0 || pair.geometry2 >= count)
    throw Error(source + ": contact pair '" + pair.name + "': geometry index out of range");
  const CollisionGeometry& a = cm.geometries[static_cast<size_t>(pair.geometry1)];
  const CollisionGeometry& b = cm.geometries[static_cast<size_t>(pair.geometry2)];
  if (pair.name.empty()) pair.name = a.name + "-" + b.name;
  const std::string where = source + ": contact pair '" + pair.name + "'";
  if (pair.geometry1 == pair.geometry2) throw Error(where + ": a geometry cannot touch itself");
  if (a.shape == CollisionShape::Point && b.shape == CollisionShape::Point) throw Error(where + ": two points never touch");
  if (a.body == 0 && b.body == 0) throw Error(where + ": both geometries are on the world and never move");
  check_contact_parameters(pair.friction, pair.margin, pair.stiffness, pair.damping, where);
  for (const ContactPair& other : cm.pairs) {
    if (other.name == pair.name) throw Error(where + ": a pair of that name exists already (" + other.source + ")");
    if ((other.geometry1 == pair.geometry1 && other.geometry2 == pair.geometry2) || (other.geometry1 == pair.geometry2 && other.geometry2 == pair.geometry1))
      throw Error(where + ": the same two geometries are paired already ('" + other.name + "')");
  }
  pair.source = source;
  cm.pairs.push_back(std::move(pair));
  // Its candidates come last, as resolve_contacts would place them (one pair at a time: a file
  // with hundreds of pairs loads in linear time).
  append_pair_candidates(cm, static_cast<int>(cm.pairs.size()) - 1, cm.candidates);
}

void resolve_contacts(Model& model) {
  ContactModel& cm = model.contacts;
  cm.candidates.clear();
  for (size_t k = 0; k < cm.geometries.size(); ++k) {
    resolve(model, cm.geometries[k]);
    append_candidates(cm.geometries[k], static_cast<int>(k), cm.candidates);
  }
  for (size_t k = 0; k < cm.pairs.size(); ++k) append_pair_candidates(cm, static_cast<int>(k), cm.candidates);
}

std::string contact_warning(const Model& model) {
  const ContactModel& cm = model.contacts;
  bool free_floating = false;
  for (int i = 1; i < model.num_bodies(); ++i) free_floating |= model.bodies[i].joint_type == JointType::FreeFlyer;
  if (!free_floating || !cm.ground.present || !cm.candidates.empty()) return "";
  std::string text = "model '" + model.name + "' floats free over a ground but has no collision candidate: it will fall through the ground";
  if (!cm.skipped.empty())
    text += " (" + std::to_string(cm.skipped.size()) + " collision geometries skipped, e.g. " + cm.skipped.front() + ")";
  return text + "; give spheres, boxes or points on its feet in a contact file (--contacts FILE, load(..., contacts=FILE))";
}

void set_default_ground(Model& model) {
  model.contacts.ground = GroundPlane{};
  for (int i = 1; i < model.num_bodies(); ++i)
    if (model.bodies[i].joint_type == JointType::FreeFlyer) model.contacts.ground.present = true;
}

void check_height_field(const HeightField& f, const std::string& where) {
  if (f.nx < 2 || f.ny < 2) throw Error(where + ": a height field needs at least 2 x 2 points, got " + std::to_string(f.nx) + " x " + std::to_string(f.ny));
  if (f.heights.size() != static_cast<size_t>(f.nx) * static_cast<size_t>(f.ny))
    throw Error(where + ": expected nx * ny = " + std::to_string(f.nx * f.ny) + " heights, got " + std::to_string(f.heights.size()));
  if (!(std::isfinite(f.spacing) && f.spacing > 0)) throw Error(where + ": the spacing must be finite and > 0, got " + std::to_string(f.spacing));
  if (!std::isfinite(f.origin_x) || !std::isfinite(f.origin_y)) throw Error(where + ": the origin must be finite");
  for (size_t k = 0; k < f.heights.size(); ++k)
    if (!std::isfinite(f.heights[k]))
      throw Error(where + ": height (" + std::to_string(k % static_cast<size_t>(f.nx)) + ", " + std::to_string(k / static_cast<size_t>(f.nx)) + ") is not finite");
}

namespace {
using nlohmann::json;

double read_number(const json& j, const char* key, double fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) throw Error(where + ": '" + key + "' must be a number");
  return j[key].get<double>();
}

GroundPlane read_ground(const json& j, const std::string& where) {
  GroundPlane ground;
  if (j.is_null()) return ground;  // no ground
  if (!j.is_object()) throw Error(where + ": expected an object {\"height\": h, \"normal\": [x, y, z]} or null");
  ground.present = true;
  ground.height = read_number(j, "height", 0.0, where);
  if (j.contains("normal")) ground.normal = detail::read_vec3(j["normal"], where + ".normal");
  const double norm = std::sqrt(dot(ground.normal, ground.normal));
  if (!(std::isfinite(norm) && norm > 1e-9) || !std::isfinite(ground.height))
    throw Error(where + ": the normal must be a non-zero finite vector and the height finite");
  ground.normal = ground.normal * (1.0 / norm);
  return ground;
}

// {"origin": [x0, y0], "spacing": s, "heights": [[row y0], [row y0 + s], ...]}
HeightField read_terrain(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object {\"origin\": [x0, y0], \"spacing\": s, \"heights\": [[...], ...]}");
  for (const auto& [key, value] : j.items())
    if (key != "origin" && key != "spacing" && key != "heights") throw Error(where + ": unknown key '" + key + "' (origin, spacing, heights)");
  HeightField f;
  if (j.contains("origin")) {
    const json& o = j["origin"];
    if (!o.is_array() || o.size() != 2 || !o[0].is_number() || !o[1].is_number()) throw Error(where + ".origin: expected [x0, y0]");
    f.origin_x = o[0].get<double>(), f.origin_y = o[1].get<double>();
  }
  if (!j.contains("spacing")) throw Error(where + ": missing 'spacing' (m between grid points)");
  f.spacing = read_number(j, "spacing", 0.0, where);
  if (!j.contains("heights") || !j["heights"].is_array()) throw Error(where + ": missing 'heights', an array of rows (one per y)");
  const json& rows = j["heights"];
  f.ny = static_cast<int>(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string wr = where + ".heights[" + std::to_string(r) + "]";
    if (!rows[r].is_array()) throw Error(wr + ": expected an array of numbers");
    if (r == 0) f.nx = static_cast<int>(rows[r].size());
    if (static_cast<int>(rows[r].size()) != f.nx) throw Error(wr + ": " + std::to_string(rows[r].size()) + " heights, the first row has " + std::to_string(f.nx));
    for (const json& h : rows[r]) {
      if (!h.is_number()) throw Error(wr + ": expected numbers");
      f.heights.push_back(h.get<double>());
    }
  }
  check_height_field(f, where);
  return f;
}

// A contact file's contact parameters at its top level: the defaults of its geometries and pairs.
struct ContactParameters {
  double friction = kDefaultFriction, margin = kDefaultContactMargin, stiffness = 0.0, damping = 0.0;
};

ContactParameters read_contact_parameters(const json& j, const ContactParameters& fallback, const std::string& where) {
  return {read_number(j, "friction", fallback.friction, where), read_number(j, "margin", fallback.margin, where),
          read_number(j, "stiffness", fallback.stiffness, where), read_number(j, "damping", fallback.damping, where)};
}

CollisionGeometry read_geometry(const json& j, const ContactParameters& defaults, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object");
  CollisionGeometry g;
  for (const char* key : {"name", "link"}) {
    if (!j.contains(key) || !j[key].is_string()) throw Error(where + ": missing string field '" + key + "'");
  }
  g.name = j["name"].get<std::string>();
  g.link = j["link"].get<std::string>();
  const std::string w = where + " ('" + g.name + "')";
  static const std::vector<std::string> known = {"name",  "link",     "sphere", "capsule",   "box",     "cylinder", "point",
                                                 "placement", "friction", "margin", "stiffness", "damping", "ground"};
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw Error(w + ": unknown key '" + key +
                  "' (name, link, sphere | capsule | box | cylinder | point, placement, friction, margin, stiffness, damping, ground)");
  if (j.contains("ground")) {
    if (!j["ground"].is_boolean()) throw Error(w + ": 'ground' must be true or false (whether it touches the ground)");
    g.touches_ground = j["ground"].get<bool>();
  }
  int shapes = 0;
  for (const char* shape : {"sphere", "capsule", "box", "cylinder", "point"}) {
    if (!j.contains(shape)) continue;
    ++shapes;
    const json& s = j[shape];
    if (!s.is_object()) throw Error(w + ": '" + shape + "' must be an object");
    const std::string ws = w + "." + shape;
    const std::string name = shape;
    if (name == "sphere") g.shape = CollisionShape::Sphere;
    else if (name == "capsule") g.shape = CollisionShape::Capsule;
    else if (name == "box") g.shape = CollisionShape::Box;
    else if (name == "cylinder") g.shape = CollisionShape::Cylinder;
    else g.shape = CollisionShape::Point;
    if (g.shape != CollisionShape::Box && g.shape != CollisionShape::Point) g.radius = read_number(s, "radius", 0.0, ws);
    if (g.shape == CollisionShape::Capsule || g.shape == CollisionShape::Cylinder) g.length = read_number(s, "length", 0.0, ws);
    if (g.shape == CollisionShape::Box) {
      if (!s.contains("size")) throw Error(ws + ": missing 'size' [x, y, z]");
      g.half_extents = detail::read_vec3(s["size"], ws + ".size") * 0.5;
    }
  }
  if (shapes != 1) throw Error(w + ": give exactly one of sphere, capsule, box, cylinder, point");
  if (j.contains("placement")) g.in_link = detail::read_placement(j["placement"], w + ".placement").transform();
  const ContactParameters p = read_contact_parameters(j, defaults, w);
  g.friction = p.friction, g.margin = p.margin, g.stiffness = p.stiffness, g.damping = p.damping;
  return g;
}

// {"geometries": [A, B], "name": "...", "friction": mu, "margin": m, "stiffness": k, "damping": d}
ContactPair read_pair(const Model& model, const json& j, const ContactParameters& defaults, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object {\"geometries\": [A, B], ...}");
  for (const auto& [key, value] : j.items())
    if (key != "geometries" && key != "name" && key != "friction" && key != "margin" && key != "stiffness" && key != "damping")
      throw Error(where + ": unknown key '" + key + "' (geometries, name, friction, margin, stiffness, damping)");
  if (!j.contains("geometries") || !j["geometries"].is_array() || j["geometries"].size() != 2 || !j["geometries"][0].is_string() ||
      !j["geometries"][1].is_string())
    throw Error(where + ": missing 'geometries', the names of the two geometries [A, B]");
  ContactPair pair;
  for (int side = 0; side < 2; ++side) {
    const std::string name = j["geometries"][static_cast<size_t>(side)].get<std::string>();
    const int index = find_collision_geometry(model.contacts, name);
    if (index < 0) throw Error(where + ": no collision geometry named '" + name + "'");
    (side == 0 ? pair.geometry1 : pair.geometry2) = index;
  }
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw Error(where + ": 'name' must be a string");
    pair.name = j["name"].get<std::string>();
  }
  const ContactParameters p = read_contact_parameters(j, defaults, where);
  pair.friction = p.friction, pair.margin = p.margin, pair.stiffness = p.stiffness, pair.damping = p.damping;
  return pair;
}

void apply_contacts_json(Model& model, const json& doc, const std::string& source) {
  if (!doc.is_object()) throw Error(source + ": expected an object with \"ground\" and/or \"geometries\"");
  for (const auto& [key, value] : doc.items())
    if (key != "ground" && key != "terrain" && key != "friction" && key != "margin" && key != "stiffness" && key != "damping" &&
        key != "file_collisions" && key != "geometries" && key != "pairs")
      throw Error(source + ": unknown key '" + key +
                  "' (ground, terrain, friction, margin, stiffness, damping, file_collisions, geometries, pairs)");
  if (doc.contains("ground")) model.contacts.ground = read_ground(doc["ground"], source + ": ground");
  if (doc.contains("terrain")) {
    model.contacts.terrain = doc["terrain"].is_null() ? HeightField{} : read_terrain(doc["terrain"], source + ": terrain");
    if (model.contacts.terrain.present() && !model.contacts.ground.present)
      throw Error(source + ": a terrain needs a ground (\"ground\": null removes it, and a fixed-base model has none unless the file gives one)");
  }
  const ContactParameters defaults = read_contact_parameters(doc, ContactParameters{}, source);
  if (doc.contains("file_collisions")) {
    if (!doc["file_collisions"].is_boolean()) throw Error(source + ": 'file_collisions' must be true or false");
    if (!doc["file_collisions"].get<bool>()) {
      model.contacts.geometries.clear();
      model.contacts.pairs.clear();
      model.contacts.candidates.clear();
    }
  }
  // The defaults also apply to the robot file's geometry, which has no contact parameters of its own.
  for (CollisionGeometry& g : model.contacts.geometries) {
    if (doc.contains("friction")) g.friction = defaults.friction;
    if (doc.contains("margin")) g.margin = defaults.margin;
    if (doc.contains("stiffness")) g.stiffness = defaults.stiffness;
    if (doc.contains("damping")) g.damping = defaults.damping;
    check_geometry(g, source + ": collision geometry '" + g.name + "'");
  }
  if (doc.contains("geometries")) {
    const json& list = doc["geometries"];
    if (!list.is_array()) throw Error(source + ": 'geometries' must be an array");
    for (size_t k = 0; k < list.size(); ++k)
      add_collision_geometry(model, read_geometry(list[k], defaults, source + ": geometries[" + std::to_string(k) + "]"), source);
  }
  if (doc.contains("pairs")) {
    const json& list = doc["pairs"];
    if (!list.is_array()) throw Error(source + ": 'pairs' must be an array");
    for (size_t k = 0; k < list.size(); ++k) {
      const std::string where = source + ": pairs[" + std::to_string(k) + "]";
      add_contact_pair(model, read_pair(model, list[k], defaults, where), where);
    }
  }
  // This file's geometry on the world in no pair can never touch anything: a mistake, not a
  // no-op. (A robot file's <collision> on a fixed base's root link is common and harmless.)
  const size_t own_geometries = doc.contains("geometries") ? doc["geometries"].size() : 0;
  for (size_t k = model.contacts.geometries.size() - own_geometries; k < model.contacts.geometries.size(); ++k) {
    const CollisionGeometry& g = model.contacts.geometries[k];
    if (g.body != 0) continue;
    const int index = static_cast<int>(k);
    const bool paired = std::any_of(model.contacts.pairs.begin(), model.contacts.pairs.end(),
                                    [&](const ContactPair& p) { return p.geometry1 == index || p.geometry2 == index; });
    if (!paired)
      throw Error(source + ": collision geometry '" + g.name + "' is on the world and in no pair: it can never touch anything "
                  "(the ground is \"ground\"; pair it with a robot's geometry to make it an obstacle)");
  }
  resolve_contacts(model);
}
}  // namespace

void add_contacts_from_json(Model& model, const std::string& json_text, const std::string& source) {
  const json doc = detail::parse_json(json_text, source);
  const ContactModel before = model.contacts;  // all or nothing: a bad entry leaves the model as it was
  try {
    detail::with_json_errors(source, [&] { apply_contacts_json(model, doc, source); });
  } catch (...) {
    model.contacts = before;
    throw;
  }
}

void add_contacts_from_json_file(Model& model, const std::string& path) {
  add_contacts_from_json(model, detail::read_text_file(path, "contact file"), path);
}

DecimatedHull decimate_hull(const std::vector<Vec3d>& vertices, int budget) {
  if (budget < 1) throw Error("decimate_hull: the budget must be >= 1, got " + std::to_string(budget));
  if (static_cast<int>(vertices.size()) <= budget) return {vertices, 0.0};
  // Test directions spread evenly over the sphere (a Fibonacci lattice), and the full hull's
  // support vertex along each.
  constexpr int kDirections = 4096;
  std::vector<Vec3d> directions;
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int k = 0; k < kDirections; ++k) {
    const double z = 1.0 - (2.0 * k + 1.0) / kDirections, r = std::sqrt(1.0 - z * z);
    directions.push_back({r * std::cos(golden * k), r * std::sin(golden * k), z});
  }
  std::vector<size_t> full_support(kDirections);
  std::vector<double> full(kDirections), kept(kDirections, -std::numeric_limits<double>::infinity());
  // B directions per pass over the vertices, their updates as selects: the compiler keeps them
  // in one vector register (a raw mesh file has thousands of vertices). The first vertex of
  // the largest value wins, as in a scan by direction.
  constexpr int B = 8;
  static_assert(kDirections % B == 0);
  for (int d0 = 0; d0 < kDirections; d0 += B) {
    double dx[B], dy[B], dz[B], best[B];
    size_t index[B];
    for (int b = 0; b < B; ++b) {
      const Vec3d& d = directions[static_cast<size_t>(d0 + b)];
      dx[b] = d.x, dy[b] = d.y, dz[b] = d.z, best[b] = dot(vertices[0], d), index[b] = 0;
    }
    for (size_t k = 1; k < vertices.size(); ++k) {
      const Vec3d& p = vertices[k];
      for (int b = 0; b < B; ++b) {
        const double value = p.x * dx[b] + p.y * dy[b] + p.z * dz[b];  // dot(p, d), in its order
        const bool better = value > best[b];
        best[b] = better ? value : best[b];
        index[b] = better ? k : index[b];
      }
    }
    for (int b = 0; b < B; ++b) full_support[static_cast<size_t>(d0 + b)] = index[b], full[static_cast<size_t>(d0 + b)] = best[b];
  }
  // Greedy: keep the full hull's support vertex along the direction where the kept hull falls
  // furthest inside, until the budget is spent or nothing falls inside.
  DecimatedHull out;
  while (static_cast<int>(out.vertices.size()) < budget) {
    int worst = 0;
    for (int d = 1; d < kDirections; ++d)
      if (full[d] - kept[d] > full[worst] - kept[worst]) worst = d;
    if (full[worst] - kept[worst] <= 0.0) break;
    const size_t k = full_support[static_cast<size_t>(worst)];
    out.vertices.push_back(vertices[k]);  // once: along its own directions the kept hull now reaches the full one
    for (int d = 0; d < kDirections; ++d) kept[d] = std::max(kept[d], dot(vertices[k], directions[d]));
  }
  for (int d = 0; d < kDirections; ++d) out.support_error = std::max(out.support_error, full[d] - kept[d]);
  return out;
}

std::string set_convex_hull(CollisionGeometry& geometry, const std::vector<Vec3d>& points) {
  DecimatedHull kept = decimate_hull(points);
  geometry.shape = CollisionShape::ConvexHull;
  geometry.vertices = std::move(kept.vertices);
  if (geometry.vertices.size() == points.size()) return "";
  std::ostringstream note;
  note << "convex hull of " << points.size() << " vertices kept at " << geometry.vertices.size() << " (lies inside the full hull by at most "
       << kept.support_error * 1000 << " mm)";
  return note.str();
}

}  // namespace batchdyn
