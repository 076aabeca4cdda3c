// Model building: loops and their graph facts, scenes, constraint files, generators.
#include <fstream>

#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
std::vector<std::string> names(const Model& model, const std::vector<int>& bodies) {
  std::vector<std::string> out;
  for (int b : bodies) out.push_back(model.bodies[b].name);
  return out;
}
}  // namespace

TEST_CASE("four-bar: the <loop_joint> is an internal revolute loop rooted at the world body") {
  const Model model = load_urdf_file(model_path("four_bar.urdf"));
  REQUIRE(model.constraints.size() == 1);
  CHECK(model.constraints[0].type == ConstraintType::Revolute);
  CHECK(model.constraint_rows == 5);
  const LoopAnalysis loops = analyze_loops(model);
  // Crank and rocker hang from the fixed ground, so the loop's common ancestor is the world,
  // but both ends are robot links: an internal loop.
  CHECK(loops.loops[0].root == 0);
  CHECK_FALSE(loops.loops[0].external);
  CHECK(names(model, loops.loops[0].supporting) == std::vector<std::string>{"crank", "coupler", "rocker"});
}

TEST_CASE("biped knees: each four-bar loop is rooted at its thigh and supported by shin, crank and rod") {
  Model model = load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(model, model_path("biped_fourbar_feet.json"));
  REQUIRE(model.nv == 20);
  const LoopAnalysis loops = analyze_loops(model);
  REQUIRE(loops.loops.size() == 4);
  for (int k = 0; k < 2; ++k) {
    const Loop& loop = loops.loops[k];
    const std::string side = model.constraints[k].name.substr(0, model.constraints[k].name.find('_'));
    CHECK(model.bodies[loop.root].name == side + "_thigh");
    CHECK_FALSE(loop.external);
    CHECK(loop.supporting.size() == 3);
  }
  // Foot welds: external, rooted at the world, supported by the whole leg and the pelvis.
  CHECK(loops.loops[2].external);
  CHECK(loops.loops[2].root == 0);
  CHECK(loops.loops[2].supporting.size() == 6);  // pelvis, hip yaw, hip roll, thigh, shin, foot
  const int pelvis = model.body_index("pelvis");
  CHECK(loops.loops_of_body[pelvis] == std::vector<int>{2, 3});
}

TEST_CASE("shipped models have the advertised sizes") {
  CHECK(load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer).nv == 18);
  const Model humanoid = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  CHECK(humanoid.nv == 36);
  CHECK(humanoid.nq == 37);
  CHECK(load_urdf_file(model_path("double_pendulum.urdf")).nv == 2);
  CHECK(load_urdf_file(model_path("four_bar.urdf")).nv == 3);
}

TEST_CASE("tree plan: each parent's first carry in a backward sweep comes from its highest-numbered child") {
  for (const char* file : {"humanoid.urdf", "quadruped.urdf", "hand.urdf"}) {
    CAPTURE(file);
    const Model model = load_urdf_file(model_path(file), RootJoint::FreeFlyer);
    const std::vector<BodyPlan> tree = plan_tree(model);
    for (int p = 0; p < model.num_bodies(); ++p) {
      std::vector<int> children;
      for (int i = 1; i < model.num_bodies(); ++i)
        if (model.bodies[i].parent == p) children.push_back(i);
      CHECK(tree[p].has_children == !children.empty());
      for (int child : children) CHECK(tree[child].first_child_carried == (child == children.back()));
    }
  }
}

TEST_CASE("hold_at_configuration makes a constraint hold exactly at a given q") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(50);
  const Eigen::VectorXd q = random_configuration<double>(model, rng);
  ConstraintSpec foot{"foot", ConstraintType::Weld, "FL_FOOT", "world", {}, {}, {0, 0, 1}, 0, 0};
  foot.placement1.xyz = {0.01, 0.02, 0.0};
  add_constraint(model, hold_at_configuration(model, foot, q));
  ConstraintSpec knee{"knee_to_trunk", ConstraintType::Connect, "FR_calf", "trunk", {}, {}, {0, 0, 1}, 0, 0};
  add_constraint(model, hold_at_configuration(model, knee, q));
  Data<double> data(model);
  ConstraintData<double> cd(model);
  constraint_kinematics(model, data, cd, q, Eigen::VectorXd::Zero(model.nv).eval());
  CHECK(cd.position_error.cwiseAbs().maxCoeff() < 1e-9);
}

TEST_CASE("constraint JSON: fields, defaults, hold and reference_q are read as documented") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json(model, R"({"constraints": [
      {"name": "a", "type": "weld", "link1": "FL_FOOT", "link2": "world",
       "placement1": {"xyz": [0, 0, 0.1]}, "placement2": {"xyz": [1, 2, 3], "rpy": [0, 0, 1.5]}, "kp": 10, "kd": 2},
      {"name": "b", "type": "revolute", "link1": "FR_calf", "link2": "HR_calf", "axis": [0, 2, 0]},
      {"name": "c", "type": "connect", "link1": "HL_FOOT", "link2": "world", "placement2": "hold"}]})",
                            "inline.json");
  REQUIRE(model.constraints.size() == 3);
  CHECK(model.constraint_rows == 6 + 5 + 3);
  CHECK(model.constraints[0].kp == 10.0);
  CHECK(model.constraints[0].placement2.translation.z == 3.0);
  CHECK(model.constraints[0].placement1.translation.z == doctest::Approx(-0.25 + 0.1));  // FOOT frame offset
  CHECK(model.constraints[1].axis.y == 1.0);
  Data<double> data(model);
  ConstraintData<double> cd(model);
  constraint_kinematics(model, data, cd, neutral_configuration<double>(model), Eigen::VectorXd::Zero(model.nv).eval());
  CHECK(cd.position_error.segment<3>(11).norm() < 1e-12);  // "hold" at the neutral pose
}

TEST_CASE("scene: a free box and two copies of a robot get prefixed names and can be constrained together") {
  const std::string arm = model_path("double_pendulum.urdf");
  Scene scene("two_arms_box");
  Placement left, right, box_at;
  left.xyz = {0, 0.5, 1};
  right.xyz = {0, -0.5, 1};
  box_at.xyz = {0, 0, 0};
  scene.add_urdf_file(arm, RootJoint::Fixed, left, "left")
      .add_urdf_file(arm, RootJoint::Fixed, right, "right")
      .add_box("box", 1.5, {0.2, 0.2, 0.2}, RootJoint::FreeFlyer, box_at);
  ConstraintSpec grip{"left_grip", ConstraintType::Connect, "tip", "box", {}, {}, {0, 0, 1}, 0, 0};
  grip.placement2.xyz = {0, 0.1, 0};
  scene.add_constraint(grip);
  const Model model = scene.build();
  CHECK(model.nv == 2 + 2 + 6);
  CHECK(model.body_index("link1") == 1);              // first robot keeps its names
  CHECK(model.body_index("right/link1") == 3);        // the clashing one is prefixed
  CHECK(model.bodies[5].joint_type == JointType::FreeFlyer);
  CHECK(model.bodies[5].inertia.mass == 1.5);
  CHECK(model.bodies[5].inertia.inertia_com(0, 0) == doctest::Approx(1.5 * 0.08 / 12));
  CHECK(model.frames[model.frame_index("right/base")].placement.translation.y == -0.5);
  const LoopAnalysis loops = analyze_loops(model);
  CHECK(loops.loops[0].root == 0);
  CHECK(names(model, loops.loops[0].supporting) == std::vector<std::string>{"link1", "link2", "box"});
}

TEST_CASE("generators build consistent mechanisms whose closures hold at q = 0") {
  for (const char* spec : {"chain:5", "cycle:6", "loop_chain:3:5", "stem:10:4:3", "branching:4:2", "ladder:5"}) {
    CAPTURE(spec);
    const Model model = build_generated(generate_from_spec(spec));
    Data<double> data(model);
    ConstraintData<double> cd(model);
    constraint_kinematics(model, data, cd, neutral_configuration<double>(model), Eigen::VectorXd::Zero(model.nv).eval());
    if (model.constraint_rows) CHECK(cd.position_error.cwiseAbs().maxCoeff() < 1e-9);
  }
  const Model cycle = build_generated(generate_cycle(8));
  CHECK(cycle.nv == 8);
  CHECK(analyze_loops(cycle).loops[0].root == 1);  // link8 welded to link1
  const Model ladder = build_generated(generate_ladder(4));
  CHECK(ladder.constraints.size() == 4);
  CHECK(analyze_loops(ladder).loops[3].supporting.size() == 8);
}

TEST_CASE("scene files: a hand holding a free cube by four fingertip contacts") {
  const Model model = load_scene_file(model_path("scenes/hand_cube.json"));
  CHECK(model.nv == 16 + 6);
  CHECK(model.constraint_rows == 4 * 3);
  const LoopAnalysis loops = analyze_loops(model);
  for (const Loop& loop : loops.loops) {
    CHECK(loop.root == 0);  // the palm is fixed: fingers and cube meet at the world
    CHECK_FALSE(loop.external);
  }
  Data<double> data(model);
  ConstraintData<double> cd(model);
  constraint_kinematics(model, data, cd, neutral_configuration<double>(model), Eigen::VectorXd::Zero(model.nv).eval());
  CHECK(cd.position_error.cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("scene files: two copies of an arm holding one box, names prefixed, URDF paths relative to the scene") {
  const Model model = load_scene_file(model_path("scenes/two_arms_box.json"));
  CHECK(model.nv == 7 + 7 + 6);
  CHECK(model.has_frame("palm"));
  CHECK(model.has_frame("right/palm"));
  CHECK(model.frames[model.frame_index("right/arm_base")].placement.translation.y == doctest::Approx(-0.35));
  CHECK(model.constraints[1].name == "right_grasp");
  CHECK(analyze_loops(model).loops[1].supporting.size() == 8);  // 7 arm joints + the box
}

TEST_CASE("scene files with missing or wrong fields name the file and the item") {
  auto error_of = [](const std::string& text) {
    try {
      load_scene_json(text, "scene.json", BATCHDYN_MODELS_DIR);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(R"({"robots": [{"root": "free"}]})").find("robots[0]: missing field 'urdf'") != std::string::npos);
  CHECK(error_of(R"({"boxes": [{"name": "b", "size": [1, 1, 1]}]})").find("boxes[0]: missing numeric field 'mass'") != std::string::npos);
  CHECK(error_of(R"({"boxes": [{"name": "b", "mass": -1, "size": [1, 1, 1]}]})").find("positive finite mass") != std::string::npos);
  CHECK(error_of(R"({"robots": [{"urdf": "nope.urdf"}]})").find("nope.urdf: cannot open") != std::string::npos);
  CHECK(error_of(R"({"robots": []})").find("at least one robot or box") != std::string::npos);
  CHECK(error_of(R"({"robots": [{"urdf": "arm7.urdf", "root": "sideways"}]})").find("'sideways'") != std::string::npos);
  CHECK(error_of("[1, 2").find("scene.json: malformed JSON") != std::string::npos);
}

TEST_CASE("body_index takes a link merged by a fixed joint and gives the body it was merged into (A1's trunk into base)") {
  const Model m = load_urdf_file(model_path("a1.urdf"), RootJoint::FreeFlyer);
  CHECK(m.body_index("trunk") == m.body_index("base"));
  CHECK(m.body_index("FR_foot") == m.body_index("FR_calf"));
  CHECK_ERROR_MENTIONS(m.body_index("no_such_link"), "no body or link named 'no_such_link'");
}
