// Bad input never crashes: each case throws batchdyn::Error whose message names the file and
// the element at fault.
#include <filesystem>
#include <fstream>

#include "batch_helpers.hpp"
#include "topology/model_info.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
const char* kLink = R"(<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>)";

std::string link(const std::string& name) { return "<link name=\"" + name + "\">" + kLink + "</link>"; }
std::string urdf_joint(const std::string& name, const std::string& parent, const std::string& child,
                       const std::string& type = "revolute") {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent + "\"/><child link=\"" + child +
         "\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
}
std::string urdf_robot(const std::string& body) { return "<robot name=\"bad\">" + body + "</robot>"; }

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("batchdyn_test_" + name)).string();
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("missing or unreadable URDF file names the path") {
  CHECK_ERROR_MENTIONS(load_urdf_file("/nonexistent/robot.urdf"), "/nonexistent/robot.urdf", "cannot open");
}

TEST_CASE("malformed XML names the file and the line") {
  const std::string path = write_temp("malformed.urdf", "<robot name=\"x\">\n<link name=\"a\">\n</robot>");
  CHECK_ERROR_MENTIONS(load_urdf_file(path), "malformed.urdf", "malformed XML", "line");
}

TEST_CASE("a document without <robot> is rejected") {
  CHECK_ERROR_MENTIONS(load_urdf_string("<robto/>", RootJoint::Fixed, "typo.urdf"), "typo.urdf", "<robot>");
}

TEST_CASE("several root links are named") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + link("c") + urdf_joint("j", "a", "b")), RootJoint::Fixed, "two.urdf"),
                       "two.urdf", "several root links", "'a'", "'c'");
}

TEST_CASE("a cycle in the URDF is reported with a link on it") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("root") + link("a") + link("b") + urdf_joint("j1", "root", "a") +
                                              urdf_joint("j2", "a", "b") + urdf_joint("j3", "b", "a")),
                                        RootJoint::Fixed, "cycle.urdf"),
                       "cycle.urdf", "'a'", "only one parent");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + urdf_joint("j1", "a", "b") + urdf_joint("j2", "b", "a")),
                                        RootJoint::Fixed, "cycle2.urdf"),
                       "cycle2.urdf", "cycle");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("r") + link("a") + link("b") + urdf_joint("j1", "a", "b") + urdf_joint("j2", "b", "a")),
                                        RootJoint::Fixed, "island.urdf"),
                       "island.urdf");
}

namespace {
std::string inertial_link(const std::string& name, const std::string& mass, const std::string& inertia) {
  return "<link name=\"" + name + "\"><inertial><mass value=\"" + mass + "\"/><inertia " + inertia + "/></inertial></link>";
}
const char* kDiagonal = R"(ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1")";
}  // namespace

TEST_CASE("negative or non-finite mass names the file, the link and the value") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + inertial_link("arm", "-2", kDiagonal) + urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "neg.urdf"),
                       "neg.urdf", "link 'arm'", "negative mass -2");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + inertial_link("arm", "nan", kDiagonal) + urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "nan.urdf"),
                       "nan.urdf", "link 'arm'", "mass value=\"nan\"", "not a finite number");
}

TEST_CASE("a non-finite, malformed or missing inertia entry names the file, the link and the value") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + inertial_link("arm", "1", R"(ixx="inf" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1")") +
                                              urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "inf.urdf"),
                       "inf.urdf", "link 'arm'", "ixx=\"inf\"", "not a finite number");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + inertial_link("arm", "1", R"(ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1kg")") +
                                              urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "garbage.urdf"),
                       "garbage.urdf", "link 'arm'", "izz=\"0.1kg\"");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + R"(<link name="arm"><inertial><mass value="1"/></inertial></link>)" +
                                              urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "noinertia.urdf"),
                       "noinertia.urdf", "link 'arm'", "no <inertia");
}

TEST_CASE("a rotational inertia that is not positive semi-definite names the link and its principal moments") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + inertial_link("arm", "1", R"(ixx="0.1" ixy="0.5" ixz="0" iyy="0.1" iyz="0" izz="0.1")") +
                                              urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "pd.urdf"),
                       "pd.urdf", "link 'arm'", "not positive semi-definite", "principal moments (-0.4");
}

namespace {
const std::string kTriangleViolation = urdf_robot(link("base") + inertial_link("arm", "1", R"(ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.3")") +
                                             urdf_joint("j", "base", "arm"));
}

TEST_CASE("a rotational inertia violating the triangle inequality loads as written, with a warning naming the file and link") {
  const Model model = load_urdf_string(kTriangleViolation, RootJoint::Fixed, "tri.urdf");
  CHECK(model.bodies[1].inertia.inertia_com(2, 2) == 0.3);  // as written: the dynamics is Pinocchio's
  REQUIRE(model.inertia_warnings.size() == 1);
  for (const char* word : {"tri.urdf", "link 'arm'", "triangle inequality", "0.3", "balance_inertia"})
    CHECK(model.inertia_warnings[0].find(word) != std::string::npos);
}

TEST_CASE("strict_inertia refuses a triangle-inequality violation, naming the file, the link and the moments") {
  LoadOptions options;
  options.strict_inertia = true;
  CHECK_ERROR_MENTIONS(load_urdf_string(kTriangleViolation, RootJoint::Fixed, "tri.urdf", options), "tri.urdf", "link 'arm'",
                       "triangle inequality", "0.3", "balance_inertia");
  options.balance_inertia = true;
  CHECK_ERROR_MENTIONS(load_urdf_string(kTriangleViolation, RootJoint::Fixed, "tri.urdf", options), "exclude each other");
}

TEST_CASE("balance_inertia repairs a triangle-inequality violation: the deficit goes half to each smaller moment") {
  LoadOptions options;
  options.balance_inertia = true;
  const Model model = load_urdf_string(kTriangleViolation, RootJoint::Fixed, "tri.urdf", options);
  CHECK(model.inertia_warnings.empty());
  const Vec3d moments = principal_moments(model.bodies[1].inertia.inertia_com);
  CHECK(moments.x == doctest::Approx(0.15));  // the deficit 0.1 split over the two smaller moments
  CHECK(moments.y == doctest::Approx(0.15));
  CHECK(moments.z == doctest::Approx(0.3));
}

TEST_CASE("a missing <mass> in an <inertial> is an error naming the file") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("base") + R"(<link name="arm"><inertial><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>)" +
                                              urdf_joint("j", "base", "arm")),
                                        RootJoint::Fixed, "nomass.urdf"),
                       "nomass.urdf", "link 'arm'", "no <mass");
}

TEST_CASE("point masses (mass, zero rotational inertia) and massless links merged into a body load") {
  CHECK_NOTHROW(load_urdf_string(urdf_robot(link("base") + inertial_link("arm", "1", R"(ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0")") +
                                       "<link name=\"tip\"/>" + urdf_joint("j", "base", "arm") + urdf_joint("f", "arm", "tip", "fixed"))));
}

TEST_CASE("a joint that moves no mass makes the model singular: it loads, but dynamics names the joint and both remedies") {
  const Model model = load_urdf_string(urdf_robot(link("base") + link("arm") + "<link name=\"finger\"/>" + urdf_joint("j", "base", "arm") +
                                             urdf_joint("finger_joint", "arm", "finger")),
                                       RootJoint::Fixed, "finger.urdf");
  REQUIRE(find_singular_joints(model).size() == 1);
  CHECK(model.bodies[find_singular_joints(model)[0]].joint_name == "finger_joint");
  Data<double> data(model);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  CHECK_ERROR_MENTIONS(aba(model, data, zero, zero, zero), "'finger_joint'", "lock_joints", "--lock-joints finger_joint",
                       "--armature finger_joint=");
  CHECK_ERROR_MENTIONS(Batch<double>(model, 8), "Batch", "'finger_joint'");
}

TEST_CASE("a joint whose child turns about its own axis with its mass on the axis is singular too") {
  // A point mass on the joint axis has no inertia about it: D_i = 0 in every configuration.
  const Model model = load_urdf_string(urdf_robot(link("base") + inertial_link("bead", "1", R"(ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0")") +
                                             urdf_joint("spin", "base", "bead")),
                                       RootJoint::Fixed, "bead.urdf");
  REQUIRE(find_singular_joints(model).size() == 1);
}

TEST_CASE("locking an unknown, fixed or free-flyer joint, or outside the limits, is an error naming it") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  CHECK_ERROR_MENTIONS(lock_joints(model, {{"FL_knee_typo", std::nullopt}}), "no joint named 'FL_knee_typo'");
  CHECK_ERROR_MENTIONS(lock_joints(model, {{"root_joint", std::nullopt}}), "'root_joint'", "free-flyer");
  CHECK_ERROR_MENTIONS(lock_joints(model, {{"FL_knee", 100.0}}), "'FL_knee'", "outside its limits");
  CHECK_ERROR_MENTIONS(lock_joints(model, {{"FL_knee", std::nullopt}, {"FL_knee", std::nullopt}}), "'FL_knee'", "twice");
  CHECK_ERROR_MENTIONS(parse_joint_locks("FL_knee=abc"), "'FL_knee=abc'", "not a number");
}

TEST_CASE("negative, non-finite or misplaced armature is an error naming the joint") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  CHECK_ERROR_MENTIONS(set_armature(model, "FL_knee", -0.1), "'FL_knee'", ">= 0", "-0.1");
  CHECK_ERROR_MENTIONS(set_armature(model, "FL_knee", std::nan("")), "'FL_knee'", ">= 0");
  CHECK_ERROR_MENTIONS(set_armature(model, "nope", 0.1), "no joint named 'nope'");
  CHECK_ERROR_MENTIONS(set_armature(model, "root_joint", 0.1), "free-flyer");
  CHECK_ERROR_MENTIONS(set_armature(model, -1.0), ">= 0");
  CHECK_ERROR_MENTIONS(apply_armature_spec(model, "FL_knee"), "--armature", "not a number");
  for (double a : model.armature) CHECK(a == 0.0);
}

TEST_CASE("lock_joints and armature in a constraint file with an unknown joint name the file") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"lock_joints": ["ghost"]})", "lock.json"), "lock.json", "'ghost'");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"armature": {"FL_knee": -1}})", "arm.json"), "arm.json", "'FL_knee'");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"armature": "lots"})", "arm.json"), "arm.json", "armature");
}

TEST_CASE("numbers out of range in JSON are an Error naming the file") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"constraints": [{"name": "x", "type": "weld", "link1": "FL_FOOT", "link2": "world", "kp": 1e999}]})", "big.json"),
                       "big.json");
  CHECK_ERROR_MENTIONS(load_scene_json(R"({"boxes": [{"name": "b", "mass": 1e999, "size": [1, 1, 1]}]})", "scene.json", "."),
                       "scene.json");
}

TEST_CASE("scene errors name the scene file and the item, not an item number") {
  CHECK_ERROR_MENTIONS(load_scene_json(R"({"boxes": [{"name": "ok", "mass": 1, "size": [1, 1, 1]}, {"name": "b", "mass": -1, "size": [1, 1, 1]}]})",
                                       "scene.json", "."),
                       "scene.json: boxes[1]", "'b'", "mass");
  CHECK_ERROR_MENTIONS(load_scene_json(R"({"robots": [{"urdf": "missing.urdf"}]})", "scene.json", "/nowhere"),
                       "scene.json: robots[0]", "missing.urdf");
}

TEST_CASE("a zero quaternion in reference_q is refused before 'hold' divides by it") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::string zeros;
  for (int k = 0; k < model.nq; ++k) zeros += (k ? ", " : "") + std::string("0");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"reference_q": [)" + zeros +
                                                            R"(], "constraints": [{"name": "x", "type": "weld", "link1": "FL_FOOT", "link2": "world", "placement2": "hold"}]})",
                                                 "hold.json"),
                       "hold.json", "reference_q[3..6]", "quaternion", "zero");
  CHECK(model.constraints.empty());
}

TEST_CASE("unsupported joint types name the joint") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + urdf_joint("slide_plane", "a", "b", "planar")), RootJoint::Fixed, "p.urdf"),
                       "p.urdf", "slide_plane", "planar");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + urdf_joint("float", "a", "b", "floating")), RootJoint::Fixed, "f.urdf"),
                       "f.urdf", "'float'", "floating");
}

TEST_CASE("a link and a joint may share a name: links and joints are separate namespaces") {
  const Model model = load_urdf_string(urdf_robot(link("base") + link("LF_HAA") + urdf_joint("LF_HAA", "base", "LF_HAA")));
  CHECK(model.body_index("LF_HAA") == 1);
  CHECK(model.joint_index("LF_HAA") == 1);
  CHECK(model.frames[model.frame_index("LF_HAA", FrameKind::Link)].kind == FrameKind::Link);
  CHECK(model.frames[model.frame_index("LF_HAA", FrameKind::Joint)].kind == FrameKind::Joint);
  Model constrained = model;
  ConstraintSpec c{"pin", ConstraintType::Connect, "LF_HAA", "world", {}, {}, {0, 0, 1}, 0, 0};
  CHECK_NOTHROW(add_constraint(constrained, c, "api"));  // a constraint names a link
  c.link1 = "only_a_joint";
  Model with_joint = load_urdf_string(urdf_robot(link("base") + link("arm") + urdf_joint("only_a_joint", "base", "arm")));
  CHECK_ERROR_MENTIONS(add_constraint(with_joint, c, "api"), "unknown link 'only_a_joint'", "there is a joint of that name");
}

TEST_CASE("duplicate link and joint names, and joints naming unknown links, are reported") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("a")), RootJoint::Fixed, "dup.urdf"), "dup.urdf", "duplicate link name 'a'");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + link("c") + urdf_joint("j", "a", "b") + urdf_joint("j", "a", "c")),
                                        RootJoint::Fixed, "dupj.urdf"),
                       "dupj.urdf", "duplicate joint name 'j'");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + urdf_joint("j", "a", "ghost")), RootJoint::Fixed, "ghost.urdf"),
                       "ghost.urdf", "'j'", "unknown link 'ghost'");
}

TEST_CASE("a malformed <loop_joint> names the loop joint") {
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + urdf_joint("j", "a", "b") +
                                              R"(<loop_joint name="close" type="spherical"><link1 link="b"/></loop_joint>)"),
                                        RootJoint::Fixed, "loop.urdf"),
                       "loop.urdf", "close", "link2");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + urdf_joint("j", "a", "b") +
                                              R"(<loop_joint name="close" type="gear"><link1 link="b"/><link2 link="a"/></loop_joint>)"),
                                        RootJoint::Fixed, "loop.urdf"),
                       "loop.urdf", "gear");
  CHECK_ERROR_MENTIONS(load_urdf_string(urdf_robot(link("a") + link("b") + urdf_joint("j", "a", "b") +
                                              R"(<loop_joint name="close" type="fixed"><link1 link="b" xyz="1 x 2"/><link2 link="a"/></loop_joint>)"),
                                        RootJoint::Fixed, "loop.urdf"),
                       "loop.urdf", "close", "1 x 2");
}

TEST_CASE("constraints naming an unknown link, the same link twice, or a duplicate name are rejected") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  ConstraintSpec c{"foot", ConstraintType::Connect, "FL_FOOOT", "world", {}, {}, {0, 0, 1}, 0, 0};
  CHECK_ERROR_MENTIONS(add_constraint(model, c, "api"), "constraint 'foot'", "unknown link 'FL_FOOOT'");
  c.link1 = "FL_FOOT";
  c.link2 = "FL_FOOT";
  CHECK_ERROR_MENTIONS(add_constraint(model, c, "api"), "'foot'", "same link");
  c.link2 = "FL_calf";  // FL_FOOT is fixed to FL_calf: same body
  CHECK_ERROR_MENTIONS(add_constraint(model, c, "api"), "'foot'", "same body");
  c.link2 = "world";
  add_constraint(model, c, "api");
  CHECK_ERROR_MENTIONS(add_constraint(model, c, "api"), "'foot'", "duplicate constraint name");
  CHECK(model.constraints.size() == 1);
}

TEST_CASE("constraint JSON with missing fields, wrong types or bad syntax names the file and entry") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"constraints": [{"name": "x", "type": "weld", "link1": "FL_FOOT"}]})", "c.json"),
                       "c.json", "constraints[0]", "link2");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"constraints": [{"type": "weld"}]})", "c.json"), "c.json", "'name'");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"constraints": [{"name": "x", "type": "glue", "link1": "a", "link2": "b"}]})", "c.json"),
                       "c.json", "glue");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"constraints": [{"name": "x", "type": "weld", "link1": "FL_FOOT", "link2": "world", "placement1": {"xyz": [1, 2]}}]})", "c.json"),
                       "c.json", "placement1.xyz", "3 numbers");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, "{\"constraints\": [", "c.json"), "c.json", "malformed JSON");
  CHECK_ERROR_MENTIONS(add_constraints_from_json(model, R"({"contacts": []})", "c.json"), "c.json", "\"constraints\"");
  CHECK_ERROR_MENTIONS(add_constraints_from_json_file(model, "/nonexistent/c.json"), "/nonexistent/c.json", "cannot open");
  CHECK(model.constraints.empty());
}

TEST_CASE("per-environment state checks name the array, the entry and the joint") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  const StateLayout layout(model);
  Eigen::VectorXd q = neutral_configuration<double>(model), v = Eigen::VectorXd::Zero(model.nv), tau = v;
  CHECK(validate_state(model, layout, q, &v, &tau).empty());
  Eigen::VectorXd bad = q;
  bad[9] = std::nan("");
  CHECK(validate_state(model, layout, bad, &v, &tau).find("q[9]") != std::string::npos);
  bad = q;
  bad.segment<4>(3).setZero();
  CHECK(validate_state(model, layout, bad, &v, &tau).find("quaternion") != std::string::npos);
  Eigen::VectorXd short_v = Eigen::VectorXd::Zero(3);
  CHECK(validate_state(model, layout, q, &short_v, &tau).find("expected nv = 18") != std::string::npos);
  Eigen::VectorXd nan_tau = tau;
  nan_tau[7] = std::numeric_limits<double>::infinity();
  CHECK(validate_state(model, layout, q, &v, &nan_tau).find("FL_hip_flexion") != std::string::npos);
}

TEST_CASE("the engine's status message and the reference evaluation name the same entry at fault") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Batch<double> batch(model, 3, 1);
  batch.tau()[1 * model.nv + 7] = std::numeric_limits<double>::infinity();
  batch.q()[2 * model.nq + 3] = 0.5;  // the base quaternion's norm is off
  batch.forward_dynamics();
  EnvironmentStates states;
  for (int e = 0; e < 3; ++e) {
    states.q.push_back(Eigen::Map<const Eigen::VectorXd>(batch.q() + e * model.nq, model.nq));
    states.v.push_back(Eigen::Map<const Eigen::VectorXd>(batch.v() + e * model.nv, model.nv));
    states.tau.push_back(Eigen::Map<const Eigen::VectorXd>(batch.tau() + e * model.nv, model.nv));
  }
  const std::vector<EnvironmentResult> reference = evaluate_reference(model, Algorithm::Aba, states);
  CHECK(batch.status_message(0) == "environment 0: ok");
  for (int e : {1, 2}) {
    CAPTURE(e);
    CHECK(batch.status_message(e) == "environment " + std::to_string(e) + ": " + reference[static_cast<size_t>(e)].error);
  }
  CHECK(batch.status_message(1).find("tau[7] (joint 'FL_hip_flexion') is not finite") != std::string::npos);
  CHECK(batch.status_message(2).find("quaternion q[3..6] (joint 'root_joint')") != std::string::npos);
}

TEST_CASE("one bad environment does not affect the others in a reference evaluation") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(60);
  EnvironmentStates states;
  for (int e = 0; e < 3; ++e) {
    const State s = random_state(model, rng);
    states.q.push_back(s.q), states.v.push_back(s.v), states.tau.push_back(s.tau);
  }
  const auto clean = evaluate_reference(model, Algorithm::Aba, states);
  states.v[1][4] = std::nan("");
  const auto results = evaluate_reference(model, Algorithm::Aba, states);
  CHECK(results[0].ok());
  CHECK_FALSE(results[1].ok());
  CHECK(results[2].ok());
  CHECK(results[0].qdd == clean[0].qdd);
  CHECK(results[2].qdd == clean[2].qdd);
}

TEST_CASE("unknown model generators and bad arguments are reported") {
  CHECK_ERROR_MENTIONS(generate_from_spec("spiral:3"), "spiral:3");
  CHECK_ERROR_MENTIONS(generate_from_spec("chain:x"), "'x'");
  CHECK_ERROR_MENTIONS(generate_from_spec("cycle:2"), "n >= 3");
}

// Inputs a fuzzing probe found accepted without a word: each is now a clear error.
TEST_CASE("a prismatic joint with lower > upper or a NaN limit is refused, naming the joint") {
  const auto slider = [](const std::string& lower, const std::string& upper) {
    return urdf_robot(link("base") + link("slide") + "<joint name=\"j\" type=\"prismatic\"><parent link=\"base\"/><child link=\"slide\"/>"
                 "<axis xyz=\"1 0 0\"/><limit lower=\"" + lower + "\" upper=\"" + upper + "\" effort=\"1\" velocity=\"1\"/></joint>");
  };
  CHECK(load_urdf_string(slider("-1", "1"), RootJoint::Fixed, "ok.urdf").nv == 1);
  CHECK_ERROR_MENTIONS(load_urdf_string(slider("1", "-1"), RootJoint::Fixed, "swapped.urdf"), "swapped.urdf", "'j'", "lower limit > upper");
  CHECK_ERROR_MENTIONS(load_urdf_string(slider("nan", "1"), RootJoint::Fixed, "nan.urdf"), "nan.urdf", "lower", "[j]");  // urdfdom's words
}

TEST_CASE("a subnormal or absurdly large mass or inertia is refused: 1/m and products would overflow") {
  const auto arm = [](const std::string& mass, const std::string& inertia) {
    return urdf_robot(link("base") + inertial_link("arm", mass, inertia) + urdf_joint("j", "base", "arm"));
  };
  CHECK_ERROR_MENTIONS(load_urdf_string(arm("1e-310", kDiagonal), RootJoint::Fixed, "tiny.urdf"), "tiny.urdf", "link 'arm'",
                       "smallest normal double");
  CHECK_ERROR_MENTIONS(load_urdf_string(arm("1e101", kDiagonal), RootJoint::Fixed, "huge.urdf"), "huge.urdf", "link 'arm'", "1e100");
  CHECK_ERROR_MENTIONS(load_urdf_string(arm("1", R"(ixx="1e308" ixy="0" ixz="0" iyy="1e308" iyz="0" izz="1e308")"), RootJoint::Fixed,
                                        "huge_inertia.urdf"),
                       "huge_inertia.urdf", "link 'arm'", "rotational inertia");
  CHECK(load_urdf_string(arm("0", R"(ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0")") + "", RootJoint::Fixed, "massless.urdf").nv == 1);
  CHECK_ERROR_MENTIONS(load_scene_json(R"({"boxes": [{"name": "dust", "mass": 1e-320, "size": [1, 1, 1]}]})", "scene.json", "."),
                       "scene.json: boxes[0]", "'dust'", "smallest normal double");
  CHECK_ERROR_MENTIONS(load_scene_json(R"({"boxes": [{"name": "slab", "mass": 1, "size": [1e200, 1, 1]}]})", "scene.json", "."),
                       "scene.json: boxes[0]", "'slab'");
}

TEST_CASE("a scene file's damping is applied to its robots' joints, and a malformed one is refused") {
  const std::string robots = std::string(R"({"robots": [{"urdf": ")") + model_path("quadruped.urdf") + R"(", "root": "free"}], )";
  const Model damped = load_scene_json(robots + R"("damping": 0.5})", "scene.json", ".");
  CHECK(damped.damping[static_cast<size_t>(damped.bodies[damped.joint_index("FL_knee")].idx_v)] == 0.5);
  CHECK_ERROR_MENTIONS(load_scene_json(robots + R"("damping": "garbage"})", "garbage.json", "."), "garbage.json", "damping");
  CHECK_ERROR_MENTIONS(load_scene_json(robots + R"("damping": {"FL_knee": -1}})", "negative.json", "."), "negative.json", "'FL_knee'");
}

TEST_CASE("step refuses a dt that is not finite and > 0, a substep longer than 1 s, and substeps outside [1, 1e6]") {
  Batch<double> batch(load_urdf_file(model_path("arm7.urdf")), 4, 1);
  for (const auto& [dt, substeps] : std::vector<std::pair<double, int>>{
           {0.0, 1}, {-1e-3, 1}, {std::nan(""), 1}, {std::numeric_limits<double>::infinity(), 1}, {1000.0, 1}, {1e-3, 0}, {1e-3, 2000000}}) {
    CAPTURE(dt);
    CAPTURE(substeps);
    CHECK_THROWS_WITH_AS(batch.step(dt, substeps), doctest::Contains("Batch::step"), Error);
  }
  batch.step(2.0, 4);  // 0.5 s substeps are a (coarse) time step
  for (int e = 0; e < 4; ++e) CHECK(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
}

TEST_CASE("set_threads refuses a negative count or one beyond max_threads, and keeps the old one") {
  Batch<double> batch(load_urdf_file(model_path("arm7.urdf")), 4, 1);
  CHECK(Batch<double>::max_threads() >= 256);
  for (int bad : {-1, Batch<double>::max_threads() + 1, 100000})
    CHECK_THROWS_WITH_AS(batch.set_threads(bad), doctest::Contains("thread count"), Error);
  CHECK(batch.threads() == 1);
  batch.step(1e-3);
}

TEST_CASE("reserve_contacts refuses a negative count") {
  Batch<double> batch(load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer), 1, 1);
  CHECK_THROWS_WITH_AS(batch.reserve_contacts(-1), "Batch::reserve_contacts: contacts must be >= 0, got -1", Error);
}

TEST_CASE("a reference configuration with a zero quaternion is refused, naming the joint") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Batch<double> batch(model, 2, 1);
  Eigen::VectorXd q = neutral_configuration<double>(model);
  q.segment<4>(3).setZero();
  CHECK_THROWS_WITH_AS(batch.set_reference_configuration(std::span<const double>(q.data(), q.size())),
                       doctest::Contains("quaternion of joint 'root_joint', is zero"), Error);
  batch.reset(std::vector<int>{0, 1}, 7, 0.05);  // the neutral reference is kept
  for (int e = 0; e < 2; ++e) CHECK(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
}

TEST_CASE("a state that overflows during a step is reported by that step, and keeps its last finite values") {
  // A 1 kg slider: no velocity product in its dynamics, so qdd = tau / m - g stays finite while
  // v + h qdd overflows.
  const Model model = load_urdf_file(write_temp("slider.urdf", urdf_robot(link("base") + link("slider") + urdf_joint("slide", "base", "slider", "prismatic"))));
  Batch<double> batch(model, 3, 1);
  batch.remove_effort_limits();  // the file's effort="1"
  for (int e = 0; e < 3; ++e) batch.v()[e] = 1e308;
  batch.tau()[1] = 1e308;
  batch.step(1.0);
  CHECK(batch.status()[0] == EnvStatus::Ok);
  CHECK(batch.status()[1] == EnvStatus::NonFiniteResult);
  CHECK(batch.status()[2] == EnvStatus::Ok);
  CHECK(batch.v()[1] == 1e308);  // the state before the step
  CHECK(batch.q()[1] == 0.0);
  CHECK(std::isnan(batch.qdd()[1]));
  CHECK(std::isfinite(batch.q()[0]));
}

TEST_CASE("a reset to a non-finite state sets the status at once, a reset to a valid state clears it") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Batch<double> batch(model, 2, 1);
  std::vector<double> q(batch.q(), batch.q() + model.nq), v(static_cast<size_t>(model.nv), 0.0);
  v[4] = std::numeric_limits<double>::infinity();
  batch.reset(std::vector<int>{1}, q, v);
  CHECK(batch.status()[0] == EnvStatus::Ok);
  CHECK(batch.status()[1] == EnvStatus::NonFiniteState);
  CHECK(batch.status_message(1).find("v[4]") != std::string::npos);
  batch.reset(std::vector<int>{1});
  CHECK(batch.status()[1] == EnvStatus::Ok);
}

TEST_CASE("a name that is not UTF-8 loads, and the info JSON replaces its bytes instead of throwing") {
  // Found by the URDF fuzzer (tests/fuzz_regressions/urdf/invalid_utf8_link_name.urdf).
  const Model model = load_urdf_string(urdf_robot(link("base") + link("arm\xff") + urdf_joint("j\xfe", "base", "arm\xff")));
  std::string info;
  CHECK_NOTHROW(info = model_info_json(model, {}));
  CHECK(info.find("arm\xef\xbf\xbd") != std::string::npos);  // U+FFFD
}
