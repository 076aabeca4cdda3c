// URDF conventions on tiny hand-written models with hand-computed expected values
// (DESIGN.md §2: Pinocchio-compatible joint order, free-flyer layout, gravity, fixed joints).
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
// A link with mass m, centre of mass at `com`, principal inertia ixx/iyy/izz about the com.
std::string link(const std::string& name, double m, const std::string& com, double ixx, double iyy, double izz) {
  return "<link name=\"" + name + "\"><inertial><origin xyz=\"" + com + "\"/><mass value=\"" + std::to_string(m) +
         "\"/><inertia ixx=\"" + std::to_string(ixx) + "\" ixy=\"0\" ixz=\"0\" iyy=\"" + std::to_string(iyy) +
         "\" iyz=\"0\" izz=\"" + std::to_string(izz) + "\"/></inertial></link>";
}
std::string joint(const std::string& name, const std::string& type, const std::string& parent, const std::string& child,
                  const std::string& xyz = "0 0 0", const std::string& axis = "0 1 0") {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent + "\"/><child link=\"" + child +
         "\"/><origin xyz=\"" + xyz + "\"/><axis xyz=\"" + axis +
         "\"/><limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"10\"/></joint>";
}
std::string robot(const std::string& body) { return "<robot name=\"r\">" + body + "</robot>"; }

const double g = 9.81;
}  // namespace

TEST_CASE("single pendulum: M = I_yy + m l^2, gravity torque m g l sin(q), ABA matches") {
  const double m = 2.0, l = 0.7, iyy = 0.03;
  const Model model = load_urdf_string(
      robot("<link name=\"base\"/>" + link("arm", m, "0 0 -0.7", 0.02, iyy, 0.02) + joint("hinge", "revolute", "base", "arm")));
  REQUIRE(model.nq == 1);
  REQUIRE(model.nv == 1);
  Data<double> data(model);
  for (double q : {0.0, 0.3, -1.2, 2.5}) {
    Eigen::VectorXd qv(1), zero = Eigen::VectorXd::Zero(1);
    qv << q;
    CHECK(crba(model, data, qv)(0, 0) == doctest::Approx(iyy + m * l * l).epsilon(1e-12));
    CHECK(rnea(model, data, qv, zero, zero)[0] == doctest::Approx(m * g * l * std::sin(q)).epsilon(1e-12));
    CHECK(aba(model, data, qv, zero, zero)[0] == doctest::Approx(-m * g * l * std::sin(q) / (iyy + m * l * l)).epsilon(1e-12));
  }
}

TEST_CASE("prismatic joint along z: M = total mass and gravity force = m g") {
  const Model model = load_urdf_string(robot("<link name=\"base\"/>" + link("slider", 3.0, "0.1 0.2 0", 0.1, 0.1, 0.1) +
                                             joint("lift", "prismatic", "base", "slider", "0 0 0", "0 0 1")));
  Data<double> data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Constant(1, 0.4), zero = Eigen::VectorXd::Zero(1);
  CHECK(crba(model, data, q)(0, 0) == doctest::Approx(3.0));
  CHECK(rnea(model, data, q, zero, zero)[0] == doctest::Approx(3.0 * g));
  CHECK(aba(model, data, q, zero, zero)[0] == doctest::Approx(-g));
}

TEST_CASE("joint order is depth-first with children in urdfdom order (by joint name), as in Pinocchio") {
  // File order lists b_* before a_*; urdfdom (and so Pinocchio) visits a_* first.
  const Model model = load_urdf_string(robot(
      "<link name=\"base\"/>" + link("b1", 1, "0 0 0", 1, 1, 1) + link("b2", 1, "0 0 0", 1, 1, 1) +
      link("a1", 1, "0 0 0", 1, 1, 1) + link("a2", 1, "0 0 0", 1, 1, 1) + joint("b_joint1", "revolute", "base", "b1") +
      joint("b_joint2", "revolute", "b1", "b2") + joint("a_joint1", "revolute", "base", "a1") +
      joint("a_joint2", "revolute", "a1", "a2")));
  REQUIRE(model.num_bodies() == 5);
  CHECK(model.bodies[1].joint_name == "a_joint1");
  CHECK(model.bodies[2].joint_name == "a_joint2");
  CHECK(model.bodies[3].joint_name == "b_joint1");
  CHECK(model.bodies[4].joint_name == "b_joint2");
  CHECK(model.bodies[2].parent == 1);
  CHECK(model.bodies[4].parent == 3);
  CHECK(model.bodies[3].idx_q == 2);
  CHECK(model.max_depth() == 2);
}

TEST_CASE("fixed joints merge inertia into the parent body and keep the child link as a frame") {
  // Arm: 1 kg at 0.5 m; a 2 kg point-like tool fixed at 1.0 m along -z.
  const Model model = load_urdf_string(robot(
      "<link name=\"base\"/>" + link("arm", 1.0, "0 0 -0.5", 1e-3, 1e-3, 1e-3) + link("tool", 2.0, "0 0 0", 1e-3, 1e-3, 1e-3) +
      joint("hinge", "revolute", "base", "arm") + joint("tool_mount", "fixed", "arm", "tool", "0 0 -1.0")));
  REQUIRE(model.num_bodies() == 2);
  const RigidInertiad& I = model.bodies[1].inertia;
  CHECK(I.mass == doctest::Approx(3.0));
  CHECK(I.com.z == doctest::Approx((1.0 * -0.5 + 2.0 * -1.0) / 3.0));
  Data<double> data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(1);
  CHECK(crba(model, data, q)(0, 0) == doctest::Approx(2e-3 + 1.0 * 0.25 + 2.0 * 1.0).epsilon(1e-12));
  const int tool = model.frame_index("tool");
  CHECK(model.frames[tool].body == 1);
  CHECK(model.frames[tool].placement.translation.z == doctest::Approx(-1.0));
}

TEST_CASE("free-flyer root: q = [xyz, quaternion xyzw], v = [linear, angular] in the base frame") {
  const Model model = load_urdf_string(robot(link("box", 2.0, "0 0 0", 0.1, 0.2, 0.3)), RootJoint::FreeFlyer);
  REQUIRE(model.nq == 7);
  REQUIRE(model.nv == 6);
  const Eigen::VectorXd q0 = neutral_configuration<double>(model);
  CHECK(q0[6] == 1.0);
  Data<double> data(model);
  const Eigen::MatrixXd M = crba(model, data, q0);
  Eigen::VectorXd expected(6);
  expected << 2, 2, 2, 0.1, 0.2, 0.3;
  CHECK(relative_error(M, Eigen::MatrixXd(expected.asDiagonal())) < 1e-14);

  // Falling freely while rotated 90 degrees about x: gravity seen in the base frame is
  // R^T (0, 0, -g) = (0, -g, 0).
  Eigen::VectorXd q = q0;
  q.segment<4>(3) << std::sin(M_PI / 4), 0, 0, std::cos(M_PI / 4);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd a = aba(model, data, q, zero, zero);
  CHECK(a[0] == doctest::Approx(0.0));
  CHECK(a[1] == doctest::Approx(-g));
  CHECK(std::abs(a[2]) < 1e-12);
  CHECK(a.tail<3>().norm() < 1e-12);
}

TEST_CASE("continuous joints use one coordinate, the angle") {
  const Model model = load_urdf_string(robot("<link name=\"base\"/>" + link("wheel", 1.0, "0 0 0", 0.1, 0.1, 0.1) +
                                             "<joint name=\"spin\" type=\"continuous\"><parent link=\"base\"/><child "
                                             "link=\"wheel\"/><axis xyz=\"0 0 1\"/></joint>"));
  CHECK(model.nq == 1);
  CHECK(model.bodies[1].joint_type == JointType::Continuous);
  CHECK(std::isinf(model.upper_position_limit[0]));
}

TEST_CASE("a root link called 'world' is the world frame") {
  const Model model = load_urdf_string(robot("<link name=\"world\"/>" + link("arm", 1.0, "0 0 -0.5", 0.01, 0.01, 0.01) +
                                             joint("hinge", "revolute", "world", "arm")));
  CHECK(model.num_bodies() == 2);
  CHECK(model.bodies[1].parent == 0);
  CHECK(model.frame_index("world") == 0);
}

TEST_CASE("joint axes are normalised and joint origins compose with fixed parents") {
  const Model model = load_urdf_string(robot(
      "<link name=\"base\"/>" + link("mount", 0.0, "0 0 0", 0, 0, 0) + link("arm", 1.0, "0 0 0", 0.1, 0.1, 0.1) +
      joint("mount_fixed", "fixed", "base", "mount", "0 0 1") + joint("hinge", "revolute", "mount", "arm", "0.5 0 0", "0 0 2")));
  REQUIRE(model.num_bodies() == 2);
  CHECK(model.bodies[1].axis.z == doctest::Approx(1.0));
  CHECK(model.bodies[1].joint_placement.translation.x == doctest::Approx(0.5));
  CHECK(model.bodies[1].joint_placement.translation.z == doctest::Approx(1.0));
}
