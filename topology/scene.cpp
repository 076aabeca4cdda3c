#include "topology/scene.hpp"

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "topology/constraints_io.hpp"
#include "topology/contacts.hpp"
#include "topology/json_parse.hpp"
#include "topology/urdf.hpp"

namespace batchdyn {

Scene& Scene::add_urdf_file(const std::string& path, RootJoint root, const Placement& placement,
                            const std::string& robot_name) {
  items_.push_back({Item::UrdfFile, path, robot_name, root, placement, 0, {}, ""});
  return *this;
}

Scene& Scene::add_urdf_string(const std::string& xml, RootJoint root, const Placement& placement,
                              const std::string& robot_name) {
  items_.push_back({Item::UrdfString, xml, robot_name, root, placement, 0, {}, ""});
  return *this;
}

Scene& Scene::add_box(const std::string& name, double mass, const Vec3d& size, RootJoint root,
                      const Placement& placement) {
  items_.push_back({Item::Box, "", name, root, placement, mass, size, ""});
  return *this;
}

Scene& Scene::described_as(const std::string& source) {
  if (items_.empty()) throw Error("Scene::described_as: no item added yet");
  items_.back().source = source;
  return *this;
}

Scene& Scene::add_constraint(const ConstraintSpec& spec) {
  constraints_.push_back(spec);
  return *this;
}

namespace {
RigidInertiad box_inertia(double mass, const Vec3d& s) {
  RigidInertiad I;
  I.mass = mass;
  I.com = Vec3d::zero();
  I.inertia_com = Mat3d::diagonal(mass / 12.0 * (s.y * s.y + s.z * s.z), mass / 12.0 * (s.x * s.x + s.z * s.z),
                                  mass / 12.0 * (s.x * s.x + s.y * s.y));
  return I;
}
}  // namespace

Model Scene::build() const {
  ModelBuilder builder(name_);
  builder.set_triangle_inequality(triangle_inequality_policy(options_));
  std::vector<std::pair<ConstraintSpec, std::string>> loops;
  std::vector<std::string> robot_names;
  std::vector<std::pair<std::shared_ptr<const UrdfDocument>, std::string>> robots;  // document, name prefix
  auto unique_robot_name = [&](std::string base) {
    std::string n = base;
    for (int k = 2; std::find(robot_names.begin(), robot_names.end(), n) != robot_names.end(); ++k)
      n = base + "_" + std::to_string(k);
    robot_names.push_back(n);
    return n;
  };

  for (size_t index = 0; index < items_.size(); ++index) {
    const Item& item = items_[index];
    const std::string where = item.source.empty() ? "scene '" + name_ + "' item " + std::to_string(index) : item.source;
    if (item.kind == Item::Box) {
      if (!(item.mass > 0) || !std::isfinite(item.mass))
        throw Error(where + ": box '" + item.name + "' needs a positive finite mass");
      if (!(item.size.x > 0 && item.size.y > 0 && item.size.z > 0) || !std::isfinite(dot(item.size, item.size)))
        throw Error(where + ": box '" + item.name + "' needs positive finite edge lengths");
      check_link_inertial_values(box_inertia(item.mass, item.size), item.name, where);
      const Transformd placement = item.placement.transform();
      if (item.root == RootJoint::FreeFlyer) {
        const int body = builder.add_body(0, item.name, item.name + "_root_joint", JointType::FreeFlyer, placement,
                                          Vec3d::zero(), 0, 0, 0, 0, where);
        builder.add_inertia(body, box_inertia(item.mass, item.size), item.name);
      } else {
        builder.add_frame(item.name, FrameKind::Link, 0, placement, where);
      }
      continue;
    }
    std::shared_ptr<const UrdfDocument> doc;
    try {
      doc = item.kind == Item::UrdfFile ? parse_urdf_file(item.text) : parse_urdf_string(item.text, where);
    } catch (const Error& e) {
      throw Error(item.kind == Item::UrdfFile ? where + ": " + e.what() : std::string(e.what()));
    }
    const std::string robot = unique_robot_name(item.name.empty() ? urdf_robot_name(*doc) : item.name);
    std::string prefix;
    for (const std::string& n : urdf_link_names(*doc))
      if (builder.has_link(n)) prefix = robot + "/";
    for (const std::string& n : urdf_joint_names(*doc))
      if (builder.has_joint(n)) prefix = robot + "/";
    for (const ConstraintSpec& c : append_urdf(builder, *doc, item.root, item.placement.transform(), prefix))
      loops.emplace_back(c, where + " <loop_joint>");
    robots.emplace_back(doc, prefix);
  }
  Model model = builder.finish();
  for (const auto& [spec, source] : loops) batchdyn::add_constraint(model, spec, source);
  for (const ConstraintSpec& spec : constraints_) batchdyn::add_constraint(model, spec, "scene '" + name_ + "'");
  for (const auto& [doc, prefix] : robots) append_urdf_collisions(model, *doc, prefix);
  set_default_ground(model);
  return model;
}

namespace {
using nlohmann::json;

Placement scene_placement(const json& item, const std::string& where) {
  Placement p;
  if (!item.contains("placement")) return p;
  const json& j = item["placement"];
  auto vec = [&](const char* key, Vec3d& out) {
    if (!j.contains(key)) return;
    const json& a = j[key];
    if (!a.is_array() || a.size() != 3 || !a[0].is_number() || !a[1].is_number() || !a[2].is_number())
      throw Error(where + ".placement." + key + ": expected an array of 3 numbers");
    out = {a[0].get<double>(), a[1].get<double>(), a[2].get<double>()};
  };
  if (!j.is_object()) throw Error(where + ".placement: expected an object");
  vec("xyz", p.xyz);
  vec("rpy", p.rpy);
  return p;
}

std::string scene_string(const json& item, const char* key, const std::string& where, const std::string& fallback = "") {
  if (!item.contains(key)) {
    if (!fallback.empty()) return fallback;
    throw Error(where + ": missing field '" + key + "'");
  }
  if (!item[key].is_string()) throw Error(where + ": field '" + key + "' must be a string");
  return item[key].get<std::string>();
}
}  // namespace

namespace {
Model scene_from_json(const json& doc, const std::string& source, const std::string& base_directory,
                      const LoadOptions& options);
}  // namespace

Model load_scene_json(const std::string& text, const std::string& source, const std::string& base_directory,
                      const LoadOptions& options) {
  const json doc = detail::parse_json(text, source);
  return detail::with_json_errors(source, [&] { return scene_from_json(doc, source, base_directory, options); });
}

namespace {
Model scene_from_json(const json& doc, const std::string& source, const std::string& base_directory,
                      const LoadOptions& options) {
  if (!doc.is_object()) throw Error(source + ": expected a scene object");
  Scene scene(doc.contains("name") && doc["name"].is_string() ? doc["name"].get<std::string>() : "scene");
  scene.set_load_options(options);
  const json empty = json::array();
  const json& robots = doc.contains("robots") ? doc["robots"] : empty;
  const json& boxes = doc.contains("boxes") ? doc["boxes"] : empty;
  if (!robots.is_array() || !boxes.is_array()) throw Error(source + ": \"robots\" and \"boxes\" must be arrays");
  if (robots.empty() && boxes.empty()) throw Error(source + ": a scene needs at least one robot or box");
  for (size_t k = 0; k < robots.size(); ++k) {
    const std::string where = source + ": robots[" + std::to_string(k) + "]";
    const json& r = robots[k];
    if (!r.is_object()) throw Error(where + ": expected an object");
    std::filesystem::path urdf = scene_string(r, "urdf", where);
    if (urdf.is_relative()) urdf = std::filesystem::path(base_directory) / urdf;
    scene.add_urdf_file(urdf.string(), parse_root_joint(scene_string(r, "root", where, "fixed")),
                        scene_placement(r, where), r.contains("name") ? scene_string(r, "name", where) : "");
    scene.described_as(where);
  }
  for (size_t k = 0; k < boxes.size(); ++k) {
    const std::string where = source + ": boxes[" + std::to_string(k) + "]";
    const json& b = boxes[k];
    if (!b.is_object()) throw Error(where + ": expected an object");
    if (!b.contains("mass") || !b["mass"].is_number()) throw Error(where + ": missing numeric field 'mass'");
    if (!b.contains("size") || !b["size"].is_array() || b["size"].size() != 3)
      throw Error(where + ": missing field 'size' (array of 3 edge lengths)");
    for (const json& e : b["size"])
      if (!e.is_number()) throw Error(where + ": 'size' must hold numbers");
    scene.add_box(scene_string(b, "name", where), b["mass"].get<double>(),
                  {b["size"][0].get<double>(), b["size"][1].get<double>(), b["size"][2].get<double>()},
                  parse_root_joint(scene_string(b, "root", where, "free")), scene_placement(b, where));
    scene.described_as(where);
  }
  Model model = scene.build();
  json model_options = json::object();
  for (const char* key : {"constraints", "reference_q", "lock_joints", "armature", "damping"})
    if (doc.contains(key)) model_options[key] = doc[key];
  if (model_options.contains("constraints") || model_options.contains("lock_joints") || model_options.contains("armature") ||
      model_options.contains("damping"))
    add_constraints_from_json(model, model_options.dump(), source);
  // Collision geometry on the scene's links and the pairs between them (a contact document).
  if (doc.contains("contacts")) {
    if (!doc["contacts"].is_object()) throw Error(source + ": 'contacts' must be an object (a contact file's document)");
    add_contacts_from_json(model, doc["contacts"].dump(), source + ": contacts");
  }
  return model;
}
}  // namespace

Model load_scene_file(const std::string& path, const LoadOptions& options) {
  return load_scene_json(detail::read_text_file(path, "scene file"), path, std::filesystem::path(path).parent_path().string(), options);
}

}  // namespace batchdyn
