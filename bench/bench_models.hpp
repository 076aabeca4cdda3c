// The models the benchmark programs share, without Google Benchmark (bench/loop_rollouts.cpp is
// a plain program): the shipped models' folder, a named model, and the loop models that
// bench/batched_loops.cpp times and bench/loop_rollouts.cpp rolls out.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "topology/configuration.hpp"
#include "topology/constraints_io.hpp"
#include "topology/generators.hpp"
#include "topology/model.hpp"
#include "topology/scene.hpp"
#include "topology/sdf.hpp"
#include "topology/urdf.hpp"

namespace batchdyn::bench {

inline std::string model_path(const std::string& f) { return std::string(BATCHDYN_MODELS_DIR) + "/" + f; }

// `count` random states of a model, drawn from `seed`: configurations within the joint limits
// (random_configuration), velocities and torques standard normal.
struct States {
  std::vector<Eigen::VectorXd> q, v, tau;
};

inline States random_states(const Model& model, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  States s;
  for (int k = 0; k < count; ++k) {
    s.q.push_back(random_configuration<double>(model, rng));
    s.v.push_back(Eigen::VectorXd::NullaryExpr(model.nv, [&] { return normal(rng); }));
    s.tau.push_back(Eigen::VectorXd::NullaryExpr(model.nv, [&] { return normal(rng); }));
  }
  return s;
}

struct Case {
  std::string name;
  Model model;
  // Start the one-call timings' environments on the model's loops (near the neutral pose,
  // projected) rather than at random configurations: for rows consistent only where the loops
  // close, or objects held where they are at the neutral pose. Rollouts always start on the loops
  // (bench/batched_loops.cpp).
  bool start_on_loops = false;
};

// The mechanisms with loops: shipped robots with welded or connected feet and hands, held
// objects, Cassie's real loops, two generated ones; loaded once.
inline const std::vector<Case>& loop_models() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    c.push_back({"hand_cube", load_scene_file(model_path("scenes/hand_cube.json")), true});
    c.push_back({"two_arms_box", load_scene_file(model_path("scenes/two_arms_box.json"))});
    Model humanoid = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(humanoid, model_path("humanoid_feet.json"));
    c.push_back({"humanoid_feet", humanoid});
    Model humanoid_hands = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(humanoid_hands, model_path("humanoid_feet_hands.json"));
    c.push_back({"humanoid_feet_hands", humanoid_hands});
    Model biped = load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(biped, model_path("biped_fourbar_feet.json"));
    c.push_back({"biped_fourbar_feet", biped});
    Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(quadruped, model_path("quadruped_feet.json"));
    // On its loops: at a random configuration its welded feet are far from where they are held
    // (the neutral pose alone is 0.5 m off), and the converged-step rollouts failed within 200 steps.
    c.push_back({"quadruped_feet", quadruped, true});
    c.push_back({"loop_chain_4x4", build_generated(generate_from_spec("loop_chain:4:4"))});
    c.push_back({"ladder_8", build_generated(generate_from_spec("ladder:8"))});
    // A real robot file: Pinocchio's model (ball joints, duplicate links, 24 redundant weld
    // rows) and the cut-joint model (12 connect rows).
    c.push_back({"cassie_v2", load_sdf_file(model_path("cassie_v2.sdf"), RootJoint::FreeFlyer), true});
    c.push_back({"cassie_v2_cut", load_sdf_file(model_path("cassie_v2.sdf"), RootJoint::FreeFlyer, LoopClosure::CutJoint), true});
    // Shaped like lcaba-proxbbo Table II (models/make_models.py).
    c.push_back({"two_hands_cube", load_scene_file(model_path("scenes/two_hands_cube.json")), true});
    c.push_back({"humanoid_hands_cube", load_scene_file(model_path("scenes/humanoid_hands_cube.json")), true});
    c.push_back({"humanoid_hands_cube_feet", load_scene_file(model_path("scenes/humanoid_hands_cube_feet.json")), true});
    Model digit = load_urdf_file(model_path("digit.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(digit, model_path("digit_feet.json"));
    c.push_back({"digit_feet", digit, true});
    c.push_back({"two_digits_box", load_scene_file(model_path("scenes/two_digits_box.json")), true});
    return c;
  }();
  return all;
}

}  // namespace batchdyn::bench
