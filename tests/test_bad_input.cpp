// Bad input never crashes: each case throws batchdyn::Error whose message names the file and
// the element at fault.
#include <filesystem>
#include <fstream>

#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
const char* kLink = R"(<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>)";

std::string link(const std::string& name) { return "<link name=\"" + name + "\">" + kLink + "</link>"; }
std::string joint(const std::string& name, const std::string& parent, const std::string& child,
                  const std::string& type = "revolute") {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent + "\"/><child link=\"" + child +
         "\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
}
std::string robot(const std::string& body) { return "<robot name=\"bad\">" + body + "</robot>"; }

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

#define CHECK_ERROR_MENTIONS(expr, ...)                                  \
  do {                                                                   \
    const std::string message = error_of([&] { (void)(expr); });         \
    CAPTURE(message);                                                    \
    REQUIRE_FALSE(message.empty());                                      \
    for (const char* part : {__VA_ARGS__}) CHECK(message.find(part) != std::string::npos); \
  } while (0)

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
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + link("c") + joint("j", "a", "b")), RootJoint::Fixed, "two.urdf"),
                       "two.urdf", "several root links", "'a'", "'c'");
}

TEST_CASE("a cycle in the URDF is reported with a link on it") {
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("root") + link("a") + link("b") + joint("j1", "root", "a") +
                                              joint("j2", "a", "b") + joint("j3", "b", "a")),
                                        RootJoint::Fixed, "cycle.urdf"),
                       "cycle.urdf", "'a'", "only one parent");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")),
                                        RootJoint::Fixed, "cycle2.urdf"),
                       "cycle2.urdf", "cycle");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("r") + link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")),
                                        RootJoint::Fixed, "island.urdf"),
                       "island.urdf");
}

TEST_CASE("zero, negative and non-positive-definite inertia on a moving body name the link") {
  const std::string zero_mass = R"(<link name="arm"><inertial><mass value="0"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>)";
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("base") + zero_mass + joint("j", "base", "arm")), RootJoint::Fixed, "m0.urdf"),
                       "m0.urdf", "'arm'", "mass");
  const std::string negative = R"(<link name="arm"><inertial><mass value="-2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>)";
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("base") + negative + joint("j", "base", "arm")), RootJoint::Fixed, "neg.urdf"),
                       "neg.urdf", "'arm'", "mass");
  const std::string not_pd = R"(<link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0.5" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>)";
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("base") + not_pd + joint("j", "base", "arm")), RootJoint::Fixed, "pd.urdf"),
                       "pd.urdf", "'arm'", "positive definite");
  const std::string no_inertial = R"(<link name="arm"/>)";
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("base") + no_inertial + joint("j", "base", "arm")), RootJoint::Fixed, "none.urdf"),
                       "none.urdf", "'arm'", "mass");
  // A massless link is fine when it is merged into a massive body by a fixed joint.
  CHECK_NOTHROW(load_urdf_string(robot(link("base") + link("arm") + no_inertial.substr(0, 0) + R"(<link name="tip"/>)" +
                                       joint("j", "base", "arm") + joint("f", "arm", "tip", "fixed"))));
}

TEST_CASE("unsupported joint types name the joint") {
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + joint("slide_plane", "a", "b", "planar")), RootJoint::Fixed, "p.urdf"),
                       "p.urdf", "slide_plane", "planar");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + joint("float", "a", "b", "floating")), RootJoint::Fixed, "f.urdf"),
                       "f.urdf", "'float'", "floating");
}

TEST_CASE("duplicate link and joint names, and joints naming unknown links, are reported") {
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("a")), RootJoint::Fixed, "dup.urdf"), "dup.urdf", "duplicate link name 'a'");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + link("c") + joint("j", "a", "b") + joint("j", "a", "c")),
                                        RootJoint::Fixed, "dupj.urdf"),
                       "dupj.urdf", "duplicate joint name 'j'");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + joint("j", "a", "ghost")), RootJoint::Fixed, "ghost.urdf"),
                       "ghost.urdf", "'j'", "unknown link 'ghost'");
}

TEST_CASE("a malformed <loop_joint> names the loop joint") {
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + joint("j", "a", "b") +
                                              R"(<loop_joint name="close" type="spherical"><link1 link="b"/></loop_joint>)"),
                                        RootJoint::Fixed, "loop.urdf"),
                       "loop.urdf", "close", "link2");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + joint("j", "a", "b") +
                                              R"(<loop_joint name="close" type="gear"><link1 link="b"/><link2 link="a"/></loop_joint>)"),
                                        RootJoint::Fixed, "loop.urdf"),
                       "loop.urdf", "gear");
  CHECK_ERROR_MENTIONS(load_urdf_string(robot(link("a") + link("b") + joint("j", "a", "b") +
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
  Eigen::VectorXd q = neutral_configuration<double>(model), v = Eigen::VectorXd::Zero(model.nv), tau = v;
  CHECK(validate_state(model, q, &v, &tau).empty());
  Eigen::VectorXd bad = q;
  bad[9] = std::nan("");
  CHECK(validate_state(model, bad, &v, &tau).find("q[9]") != std::string::npos);
  bad = q;
  bad.segment<4>(3).setZero();
  CHECK(validate_state(model, bad, &v, &tau).find("quaternion") != std::string::npos);
  Eigen::VectorXd short_v = Eigen::VectorXd::Zero(3);
  CHECK(validate_state(model, q, &short_v, &tau).find("expected nv = 18") != std::string::npos);
  Eigen::VectorXd nan_tau = tau;
  nan_tau[7] = std::numeric_limits<double>::infinity();
  CHECK(validate_state(model, q, &v, &nan_tau).find("FL_hip_flexion") != std::string::npos);
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
