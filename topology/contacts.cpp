#include "topology/contacts.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "topology/json_parse.hpp"

namespace batchdyn {

const char* collision_shape_name(CollisionShape shape) {
  switch (shape) {
    case CollisionShape::Sphere: return "sphere";
    case CollisionShape::Capsule: return "capsule";
    case CollisionShape::Box: return "box";
    case CollisionShape::Cylinder: return "cylinder";
    case CollisionShape::Point: return "point";
  }
  return "?";
}

namespace {

constexpr int kCylinderRimPoints = 8;  // per rim circle (CollisionShape::Cylinder)

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// A size the shape uses: finite and > 0 (and at most kInertialMagnitude, as inertial numbers).
void check_size(double value, const char* what, const std::string& where) {
  if (!(std::isfinite(value) && value > 0.0 && value <= kInertialMagnitude))
    throw Error(where + ": " + what + " must be finite and > 0, got " + number_text(value));
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
  }
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(g.in_link.translation[k])) throw Error(where + ": the placement must be finite");
  if (!(std::isfinite(g.friction) && g.friction >= 0.0))
    throw Error(where + ": the friction coefficient must be finite and >= 0, got " + number_text(g.friction));
  if (!(std::isfinite(g.margin) && g.margin >= 0.0))
    throw Error(where + ": the margin must be finite and >= 0, got " + number_text(g.margin));
}

// The candidates of geometry `index` (already resolved to its body), appended in body frame.
void append_candidates(const CollisionGeometry& g, int index, std::vector<ContactCandidate>& out) {
  if (g.body == 0) return;  // on the world: never moves, never in contact
  const auto add = [&](const Vec3d& local, double radius) { out.push_back({index, g.body, g.in_body.act_point(local), radius}); };
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
    case CollisionShape::Cylinder:
      for (double end : {-0.5, 0.5})
        for (int k = 0; k < kCylinderRimPoints; ++k) {
          const double angle = 2.0 * std::numbers::pi * k / kCylinderRimPoints;
          add({g.radius * std::cos(angle), g.radius * std::sin(angle), end * g.length}, 0.0);
        }
      break;
  }
}

void resolve(const Model& model, CollisionGeometry& g) {
  const Frame& link = model.frames[static_cast<size_t>(model.frame_index(g.link, FrameKind::Link))];
  g.body = link.body;
  g.in_body = link.placement * g.in_link;
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
  const int index = static_cast<int>(model.contacts.geometries.size());
  append_candidates(geometry, index, model.contacts.candidates);
  model.contacts.geometries.push_back(std::move(geometry));
}

void resolve_contacts(Model& model) {
  model.contacts.candidates.clear();
  for (size_t k = 0; k < model.contacts.geometries.size(); ++k) {
    resolve(model, model.contacts.geometries[k]);
    append_candidates(model.contacts.geometries[k], static_cast<int>(k), model.contacts.candidates);
  }
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

CollisionGeometry read_geometry(const json& j, double friction, double margin, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object");
  CollisionGeometry g;
  for (const char* key : {"name", "link"}) {
    if (!j.contains(key) || !j[key].is_string()) throw Error(where + ": missing string field '" + key + "'");
  }
  g.name = j["name"].get<std::string>();
  g.link = j["link"].get<std::string>();
  const std::string w = where + " ('" + g.name + "')";
  static const std::vector<std::string> known = {"name", "link", "sphere", "capsule", "box", "cylinder", "point", "placement", "friction", "margin"};
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw Error(w + ": unknown key '" + key + "' (name, link, sphere | capsule | box | cylinder | point, placement, friction, margin)");
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
  g.friction = read_number(j, "friction", friction, w);
  g.margin = read_number(j, "margin", margin, w);
  return g;
}

void apply_contacts_json(Model& model, const json& doc, const std::string& source) {
  if (!doc.is_object()) throw Error(source + ": expected an object with \"ground\" and/or \"geometries\"");
  for (const auto& [key, value] : doc.items())
    if (key != "ground" && key != "terrain" && key != "friction" && key != "margin" && key != "file_collisions" && key != "geometries")
      throw Error(source + ": unknown key '" + key + "' (ground, terrain, friction, margin, file_collisions, geometries)");
  if (doc.contains("ground")) model.contacts.ground = read_ground(doc["ground"], source + ": ground");
  if (doc.contains("terrain")) {
    model.contacts.terrain = doc["terrain"].is_null() ? HeightField{} : read_terrain(doc["terrain"], source + ": terrain");
    if (model.contacts.terrain.present() && !model.contacts.ground.present)
      throw Error(source + ": a terrain needs a ground (\"ground\": null removes it, and a fixed-base model has none unless the file gives one)");
  }
  const double friction = read_number(doc, "friction", kDefaultFriction, source);
  const double margin = read_number(doc, "margin", kDefaultContactMargin, source);
  if (doc.contains("file_collisions")) {
    if (!doc["file_collisions"].is_boolean()) throw Error(source + ": 'file_collisions' must be true or false");
    if (!doc["file_collisions"].get<bool>()) {
      model.contacts.geometries.clear();
      model.contacts.candidates.clear();
    }
  }
  // The defaults also apply to the robot file's geometry, which has no friction or margin of its own.
  for (CollisionGeometry& g : model.contacts.geometries) {
    if (doc.contains("friction")) g.friction = friction;
    if (doc.contains("margin")) g.margin = margin;
    check_geometry(g, source + ": collision geometry '" + g.name + "'");
  }
  if (!doc.contains("geometries")) return;
  const json& list = doc["geometries"];
  if (!list.is_array()) throw Error(source + ": 'geometries' must be an array");
  for (size_t k = 0; k < list.size(); ++k)
    add_collision_geometry(model, read_geometry(list[k], friction, margin, source + ": geometries[" + std::to_string(k) + "]"), source);
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

}  // namespace batchdyn
