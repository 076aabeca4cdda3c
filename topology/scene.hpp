// Scenes: several URDF robots and free rigid bodies under one world root, so that a hand
// holding a cube or two arms holding a box are one Model with one set of constraints.
#pragma once

#include <string>
#include <vector>

#include "topology/model.hpp"
#include "topology/urdf.hpp"

namespace batchdyn {

class Scene {
 public:
  explicit Scene(std::string name = "scene") : name_(std::move(name)) {}

  // Adds a robot from a URDF file / string. `robot_name` defaults to the URDF's robot name.
  // When one of the robot's link/joint names is already taken by an earlier item, all of its
  // names are prefixed with "<robot_name>/" (robot names are made unique with "_2", "_3"...).
  Scene& add_urdf_file(const std::string& path, RootJoint root, const Placement& placement = {},
                       const std::string& robot_name = "");
  Scene& add_urdf_string(const std::string& xml, RootJoint root, const Placement& placement = {},
                         const std::string& robot_name = "");
  // Adds a solid box of uniform density (mass in kg, size = full edge lengths in m), one link
  // called `name`, attached to the world by `root` at `placement`.
  Scene& add_box(const std::string& name, double mass, const Vec3d& size, RootJoint root = RootJoint::FreeFlyer,
                 const Placement& placement = {});
  // Adds a constraint between any two links of the scene (after all bodies are added).
  Scene& add_constraint(const ConstraintSpec& spec);
  // Names the most recently added robot or box in error messages (e.g. "scene.json: boxes[0]";
  // default "scene '<name>' item <k>").
  Scene& described_as(const std::string& source);
  // How the robots' files are read (LoadOptions::balance_inertia applies to every body).
  Scene& set_load_options(const LoadOptions& options) {
    options_ = options;
    return *this;
  }

  // Builds the model: items in the order added, each depth-first; then loop joints from the
  // URDFs, then the scene's constraints. Throws Error on any invalid item.
  Model build() const;

 private:
  struct Item {
    enum Kind { UrdfFile, UrdfString, Box } kind;
    std::string text;  // path or XML
    std::string name;
    RootJoint root;
    Placement placement;
    double mass = 0;
    Vec3d size;
    std::string source;  // for error messages; empty: "scene '<name>' item <k>"
  };
  std::string name_;
  LoadOptions options_;
  std::vector<Item> items_;
  std::vector<ConstraintSpec> constraints_;
};

// Scene files (docs/conventions.md, "Scene files"): robots by URDF path (relative to the scene file), boxes,
// and constraints in the constraint-file schema, with "placement2": "hold" resolved at the
// scene's neutral configuration or its "reference_q".
//   { "name": str,
//     "robots": [ {"urdf": path, "root": "fixed"|"free", "name": str, "placement": {"xyz","rpy"}} ],
//     "boxes":  [ {"name": str, "mass": kg, "size": [3], "root": "fixed"|"free", "placement": {...}} ],
//     "reference_q": "neutral" | [nq], "constraints": [ ... ],
//     "lock_joints": ..., "armature": ..., "damping": ... (as in constraint files, topology/constraints_io.hpp),
//     "contacts": { ... } (a contact file's document, topology/contacts.hpp: geometry on the
//                 scene's links, pairs, ground) }
Model load_scene_file(const std::string& path, const LoadOptions& options = {});
Model load_scene_json(const std::string& json_text, const std::string& source, const std::string& base_directory,
                      const LoadOptions& options = {});

}  // namespace batchdyn
