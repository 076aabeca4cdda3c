// One fuzz input of each loader, run as a user would meet it: load it and, when it loads, use
// the model (its info JSON, and ABA at the neutral configuration when the model is regular).
// Shared by the libFuzzer targets (fuzz/fuzz_*.cpp) and by the test suite, which runs every
// saved reproducer in tests/fuzz_regressions/ through the same function.
//
// Each returns "" when the input loaded and was used, or the batchdyn::Error message that
// refused it. Any other exception, a crash or a sanitizer report is a finding.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "kernels/tree/aba.hpp"
#include "kernels/tree/configuration.hpp"
#include "kernels/tree/singular_joints.hpp"
#include "topology/constraints_io.hpp"
#include "topology/contacts.hpp"
#include "topology/mesh_file.hpp"
#include "topology/mjcf.hpp"
#include "topology/model_info.hpp"
#include "topology/scene.hpp"
#include "topology/sdf.hpp"
#include "topology/urdf.hpp"

namespace batchdyn::fuzz {

inline void use(const Model& model) {
  const std::vector<int> singular = find_singular_joints(model);
  (void)model_info_json(model, singular);
  if (!singular.empty()) return;
  Data<double> data(model);
  const Eigen::VectorXd q = neutral_configuration<double>(model);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  (void)aba(model, data, q, zero, zero);
}

template <class Load>
std::string load_and_use(Load&& load) {
  try {
    use(load());
    return "";
  } catch (const Error& refused) {
    return refused.what();
  }
}

// A URDF document, with a fixed or (odd-sized input) free-flyer root.
inline std::string urdf_input(const std::string& xml) {
  const RootJoint root = xml.size() % 2 ? RootJoint::FreeFlyer : RootJoint::Fixed;
  return load_and_use([&] { return load_urdf_string(xml, root); });
}

// An SDF document, closed by duplicate links or (odd-sized input) cut joints. sdformat reads
// files: the input goes through a file of this process's own, removed when the process exits.
inline std::string sdf_input(const std::string& xml) {
  struct ScratchFile {
    std::string path;
    ~ScratchFile() { std::remove(path.c_str()); }
  };
  static const ScratchFile scratch{"/tmp/batchdyn_fuzz_sdf_" + std::to_string(getpid()) + ".sdf"};
  const std::string& path = scratch.path;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << xml;
  const LoopClosure closure = xml.size() % 2 ? LoopClosure::CutJoint : LoopClosure::DuplicateLink;
  return load_and_use([&] { return load_sdf_file(path, RootJoint::Fixed, closure); });
}

// An MJCF document, compiled by MuJoCo and turned into a model: the converter, and with inline
// meshes (<mesh vertex="...">) MuJoCo's hull and decimate_hull. In a build without MuJoCo every
// input is refused (the fuzz target is then not built).
inline std::string mjcf_input(const std::string& xml) {
  return load_and_use([&] { return load_mjcf_string(xml, "<fuzz input>"); });
}

// A mesh file's contents, read as an STL (even-sized input) or an OBJ (odd-sized), and its hull
// as a URDF <mesh> gets it (decimate_hull to the vertex budget). A hull out of its bounds (no
// vertex, more than the budget, a negative or NaN error) throws std::logic_error: a finding.
inline std::string mesh_input(const std::string& bytes) {
  try {
    const MeshFormat format = bytes.size() % 2 ? MeshFormat::Obj : MeshFormat::Stl;
    const DecimatedHull hull = decimate_hull(parse_mesh_vertices(bytes, format, "<fuzz input>"));
    if (hull.vertices.empty() || hull.vertices.size() > static_cast<size_t>(kHullVertexBudget) || !(hull.support_error >= 0))
      throw std::logic_error("decimate_hull: a hull out of its bounds");
    return "";
  } catch (const Error& refused) {
    return refused.what();
  }
}

// A constraint JSON document on the shipped humanoid (models_dir/humanoid.urdf, free root),
// whose link and joint names the seeds use.
inline std::string constraints_input(const std::string& json, const std::string& models_dir) {
  static const Model humanoid = load_urdf_file(models_dir + "/humanoid.urdf", RootJoint::FreeFlyer);
  return load_and_use([&] {
    Model model = humanoid;
    add_constraints_from_json(model, json, "<fuzz input>");
    return model;
  });
}

// A contact JSON document on the shipped quadruped (models_dir/quadruped.urdf, free root), whose
// links the seeds name.
inline std::string contacts_input(const std::string& json, const std::string& models_dir) {
  static const Model quadruped = load_urdf_file(models_dir + "/quadruped.urdf", RootJoint::FreeFlyer);
  return load_and_use([&] {
    Model model = quadruped;
    add_contacts_from_json(model, json, "<fuzz input>");
    return model;
  });
}

// A scene JSON document, its robot files found relative to models_dir/scenes as the shipped
// scenes expect.
inline std::string scene_input(const std::string& json, const std::string& models_dir) {
  return load_and_use([&] { return load_scene_json(json, "<fuzz input>", models_dir + "/scenes"); });
}

}  // namespace batchdyn::fuzz
