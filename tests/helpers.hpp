// Shared fixtures for the tests: the shipped and generated models, random states, and small
// numerical helpers. The oracles themselves live in the test files next to what they check.
#pragma once

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <random>
#include <string>
#include <vector>

#include "batchdyn.hpp"

namespace batchdyn::test {

inline std::string model_path(const std::string& file) { return std::string(BATCHDYN_MODELS_DIR) + "/" + file; }

// The error message of `f`, or "" if it did not throw batchdyn::Error.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// expr throws batchdyn::Error whose message contains every one of the given strings.
#define CHECK_ERROR_MENTIONS(expr, ...)                                                                       \
  do {                                                                                                        \
    const std::string message = batchdyn::test::error_of([&] { (void)(expr); });                             \
    CAPTURE(message);                                                                                         \
    REQUIRE_FALSE(message.empty());                                                                           \
    for (const std::string& part : std::initializer_list<std::string>{__VA_ARGS__})                         \
      CHECK(message.find(part) != std::string::npos);                                                         \
  } while (0)

struct NamedModel {
  std::string name;
  Model model;
};

// Every shipped model with its natural root, without constraints.
inline std::vector<NamedModel> tree_models() {
  std::vector<NamedModel> models;
  models.push_back({"double_pendulum", load_urdf_file(model_path("double_pendulum.urdf"))});
  models.push_back({"four_bar(tree)", load_urdf_file(model_path("four_bar.urdf"))});
  models.push_back({"quadruped", load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer)});
  models.push_back({"humanoid", load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer)});
  models.push_back({"biped_fourbar", load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer)});
  models.push_back({"chain:9", build_generated(generate_chain(9))});
  models.push_back({"hand", load_urdf_file(model_path("hand.urdf"))});
  for (NamedModel& m : models) m.model.constraints.clear(), m.model.constraint_rows = 0;
  return models;
}

// Models with loops and contacts: internal loops, external contacts, both, redundant rows.
inline std::vector<NamedModel> constrained_models() {
  std::vector<NamedModel> models;
  models.push_back({"four_bar", load_urdf_file(model_path("four_bar.urdf"))});
  Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(quadruped, model_path("quadruped_feet.json"));
  models.push_back({"quadruped+feet", quadruped});
  Model humanoid = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(humanoid, model_path("humanoid_feet.json"));
  models.push_back({"humanoid+feet", humanoid});
  Model biped = load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(biped, model_path("biped_fourbar_feet.json"));
  models.push_back({"biped_fourbar+feet", biped});
  models.push_back({"scene hand_cube", load_scene_file(model_path("scenes/hand_cube.json"))});
  models.push_back({"scene two_arms_box", load_scene_file(model_path("scenes/two_arms_box.json"))});
  for (const char* spec : {"cycle:7", "loop_chain:3:4", "stem:8:3:2", "branching:3:4", "ladder:4"})
    models.push_back({std::string("gen:") + spec, build_generated(generate_from_spec(spec))});
  return models;
}

struct State {
  Eigen::VectorXd q, v, tau;
};

inline State random_state(const Model& model, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  State s;
  s.q = random_configuration<double>(model, rng);
  s.v = Eigen::VectorXd::NullaryExpr(model.nv, [&]() { return normal(rng); });
  s.tau = Eigen::VectorXd::NullaryExpr(model.nv, [&]() { return 5.0 * normal(rng); });
  return s;
}

// max |a - b| / max(1, max |b|)
inline double relative_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = std::max(1.0, b.cwiseAbs().maxCoeff());
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

inline Eigen::MatrixXd to_matrix(const Transformd& T) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(4, 4);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m(i, j) = T.rotation(i, j);
    m(i, 3) = T.translation[i];
  }
  return m;
}

inline Eigen::VectorXd to_vector(const Motion<double>& m) {
  Eigen::VectorXd v(6);
  for (int k = 0; k < 6; ++k) v[k] = m[k];
  return v;
}

// Model with gravity switched off (for M^{-1} via ABA).
inline Model without_gravity(Model m) {
  m.gravity = Vec3d::zero();
  return m;
}

}  // namespace batchdyn::test
