#include "topology/scene.hpp"

#include <algorithm>
#include <cmath>

#include "topology/urdf.hpp"

namespace batchdyn {

Scene& Scene::add_urdf_file(const std::string& path, RootJoint root, const Placement& placement,
                            const std::string& robot_name) {
  items_.push_back({Item::UrdfFile, path, robot_name, root, placement, 0, {}});
  return *this;
}

Scene& Scene::add_urdf_string(const std::string& xml, RootJoint root, const Placement& placement,
                              const std::string& robot_name) {
  items_.push_back({Item::UrdfString, xml, robot_name, root, placement, 0, {}});
  return *this;
}

Scene& Scene::add_box(const std::string& name, double mass, const Vec3d& size, RootJoint root,
                      const Placement& placement) {
  items_.push_back({Item::Box, "", name, root, placement, mass, size});
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
  std::vector<std::pair<ConstraintSpec, std::string>> loops;
  std::vector<std::string> robot_names;
  auto unique_robot_name = [&](std::string base) {
    std::string n = base;
    for (int k = 2; std::find(robot_names.begin(), robot_names.end(), n) != robot_names.end(); ++k)
      n = base + "_" + std::to_string(k);
    robot_names.push_back(n);
    return n;
  };

  for (size_t index = 0; index < items_.size(); ++index) {
    const Item& item = items_[index];
    const std::string where = "scene '" + name_ + "' item " + std::to_string(index);
    if (item.kind == Item::Box) {
      if (!(item.mass > 0) || !std::isfinite(item.mass))
        throw Error(where + ": box '" + item.name + "' needs a positive finite mass");
      if (!(item.size.x > 0 && item.size.y > 0 && item.size.z > 0))
        throw Error(where + ": box '" + item.name + "' needs positive edge lengths");
      const Transformd placement = item.placement.transform();
      if (item.root == RootJoint::FreeFlyer) {
        const int body = builder.add_body(0, item.name, item.name + "_root_joint", JointType::FreeFlyer, placement,
                                          Vec3d::zero(), 0, 0, 0, 0, where);
        builder.add_inertia(body, box_inertia(item.mass, item.size));
      } else {
        builder.add_frame(item.name, 0, placement, where);
      }
      continue;
    }
    auto doc = item.kind == Item::UrdfFile ? parse_urdf_file(item.text) : parse_urdf_string(item.text, where);
    const std::string robot = unique_robot_name(item.name.empty() ? urdf_robot_name(*doc) : item.name);
    std::string prefix;
    for (const std::string& n : urdf_names(*doc))
      if (builder.has_name(n)) prefix = robot + "/";
    for (const ConstraintSpec& c : append_urdf(builder, *doc, item.root, item.placement.transform(), prefix))
      loops.emplace_back(c, where + " <loop_joint>");
  }
  Model model = builder.finish();
  for (const auto& [spec, source] : loops) batchdyn::add_constraint(model, spec, source);
  for (const ConstraintSpec& spec : constraints_) batchdyn::add_constraint(model, spec, "scene '" + name_ + "'");
  return model;
}

}  // namespace batchdyn
