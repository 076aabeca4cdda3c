// SDF loading (topology/sdf.hpp) on Cassie, whose legs close two loops each through links with
// two parent joints: the model Pinocchio 3.7 builds (duplicate links + welds), the cut-joint
// alternative, and the physics the two must share. Ball joints (JointType::Spherical) are also
// covered by every test that walks tree_models() / constrained_models().
#include <fstream>
#include <map>

#include "helpers.hpp"
#include "kernels/loops/independent_loop_rows.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

double distance(const Vec3d& a, const Vec3d& b) { return std::sqrt(dot(a - b, a - b)); }

Eigen::MatrixXd constraint_jacobian(const Model& m, const Eigen::VectorXd& q) {
  Data<double> data(m);
  ConstraintData<double> cd(m);
  constraint_kinematics(m, data, cd, q, Eigen::VectorXd::Zero(m.nv).eval());
  return cd.J;
}

Eigen::VectorXd position_error(const Model& m, const Eigen::VectorXd& q) {
  Data<double> data(m);
  ConstraintData<double> cd(m);
  constraint_kinematics(m, data, cd, q, Eigen::VectorXd::Zero(m.nv).eval());
  return cd.position_error;
}

std::vector<std::string> joint_order(const Model& m) {
  std::vector<std::string> names;
  for (int i = 1; i < m.num_bodies(); ++i) names.push_back(m.bodies[i].joint_name);
  return names;
}

// A scratch file for malformed input.
std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/batchdyn_test_" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("cassie_v2.sdf loads as Pinocchio 3.7 builds it: nq 45, nv 40, four welds of 24 rows and rank 22") {
  const Model m = cassie();
  CHECK(m.nq == 45);
  CHECK(m.nv == 40);
  REQUIRE(m.constraints.size() == 4);
  CHECK(m.constraint_rows == 24);
  for (const Constraint& c : m.constraints) CHECK(c.type == ConstraintType::Weld);
  Eigen::VectorXd q = neutral_configuration<double>(m);
  CHECK(numerical_rank(constraint_jacobian(m, q)) == 22);
  std::mt19937 rng(1);
  CHECK(numerical_rank(constraint_jacobian(m, state_on_loops(m, rng).q)) == 22);
}

TEST_CASE("cassie_v2.sdf: joints in Pinocchio's depth-first order, the second parent joints moving duplicates") {
  const Model m = cassie();
  std::vector<std::string> expected = {"root_joint"};
  for (const std::string side : {"left", "right"})
    for (const char* joint : {"-roll-op", "-yaw-op", "-pitch-op", "-knee-op", "-knee-shin-joint", "-shin-tarsus-joint",
                              "-tarsus-spring-joint", "-achilles-spring-joint", "-pitch-rod-joint", "-tarsus-crank-joint",
                              "-crank-rod-joint", "-plantar-foot-joint", "-foot-op"})
      expected.push_back(side + joint);
  CHECK(joint_order(m) == expected);
  const Body& duplicate = m.bodies[m.joint_index("left-pitch-rod-joint")];
  CHECK(duplicate.name == "left-hip-pitch_left-pitch-rod-joint");
  CHECK(duplicate.joint_type == JointType::Spherical);
  CHECK(m.bodies[m.joint_index("left-plantar-foot-joint")].name == "left-foot_left-plantar-foot-joint");
  CHECK(m.constraints[0].name == "left-pitch-rod-joint");
  CHECK(m.bodies[m.constraints[0].body1].name == "left-hip-pitch_left-pitch-rod-joint");
  CHECK(m.bodies[m.constraints[0].body2].name == "left-hip-pitch");
}

TEST_CASE("cassie_v2.sdf: a link with two parents is split in halves of its mass and rotational inertia") {
  const Model m = cassie();
  const RigidInertiad& original = m.bodies[m.body_index("left-hip-pitch")].inertia;
  const RigidInertiad& duplicate = m.bodies[m.body_index("left-hip-pitch_left-pitch-rod-joint")].inertia;
  CHECK(original.mass == doctest::Approx(5.52 / 2));  // <mass> of link left-hip-pitch
  CHECK(duplicate.mass == doctest::Approx(5.52 / 2));
  // Total mass: the sum of the file's <mass> elements.
  std::ifstream in(model_path("cassie_v2.sdf"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  double file_mass = 0;
  for (size_t at = text.find("<mass>"); at != std::string::npos; at = text.find("<mass>", at + 1)) file_mass += std::stod(text.substr(at + 6));
  double model_mass = 0;
  for (const Body& b : m.bodies) model_mass += b.inertia.mass;
  CHECK(model_mass == doctest::Approx(file_mass).epsilon(1e-12));
}

TEST_CASE("cassie_v2.sdf: every loop is closed at the neutral configuration, with either closure") {
  for (const LoopClosure closure : {LoopClosure::DuplicateLink, LoopClosure::CutJoint}) {
    const Model m = cassie(closure);
    CHECK(position_error(m, neutral_configuration<double>(m)).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("cassie_v2.sdf: link frames sit where the file puts them at the neutral configuration") {
  // SDF 1.6 link poses are in the model frame; the pelvis (root) sits at the world origin.
  const Model m = cassie(LoopClosure::DuplicateLink, RootJoint::Fixed);
  Data<double> data(m);
  forward_kinematics(m, data, neutral_configuration<double>(m));
  const std::map<std::string, Placement> file_poses = {
      {"left-knee", {{-0.049, 0.1305, 0.8 - 1.01}, {-1.5708, 0.7854, 3.1416}}},
      {"left-tarsus", {{-0.35166, 0.1305, 0.402 - 1.01}, {1.5708, 1.3439, 0}}},
      {"right-foot", {{-0.29886, -0.1305, -0.0045361 - 1.01}, {1.5708, 1.364, 0}}},
      {"left-achilles-rod", {{-0.049, 0.09, 0.92 - 1.01}, {-1.7199, 0.91441, 3.0232}}},
  };
  for (const auto& [link, pose] : file_poses) {
    CAPTURE(link);
    const Frame& f = m.frames[m.frame_index(link)];
    const Transformd world = data.world_from_body[f.body] * f.placement;
    CHECK(relative_error(to_matrix(world), to_matrix(pose.transform())) < 1e-12);
  }
  for (const char* link : {"left-hip-pitch", "right-foot"}) {  // a duplicate coincides with its original
    CAPTURE(link);
    const Constraint& weld = m.constraints[static_cast<size_t>(std::string(link) == "right-foot" ? 3 : 0)];
    CHECK(relative_error(to_matrix(data.world_from_body[weld.body1] * weld.placement1),
                         to_matrix(data.world_from_body[weld.body2] * weld.placement2)) < 1e-12);
  }
}

TEST_CASE("cassie_v2.sdf with cut joints: ball joints become connects, nv 28, 12 rows of rank 10") {
  const Model m = cassie(LoopClosure::CutJoint);
  CHECK(m.nq == 29);
  CHECK(m.nv == 28);
  REQUIRE(m.constraints.size() == 4);
  CHECK(m.constraint_rows == 12);
  for (const Constraint& c : m.constraints) CHECK(c.type == ConstraintType::Connect);
  for (const Body& b : m.bodies) CHECK(b.joint_type != JointType::Spherical);
  CHECK(m.bodies[m.constraints[0].body1].name == "left-achilles-rod");
  CHECK(m.bodies[m.constraints[0].body2].name == "left-hip-pitch");
  CHECK(numerical_rank(constraint_jacobian(m, neutral_configuration<double>(m))) == 10);
}

TEST_CASE("cassie_v2.sdf: both closures give the same motion of the joints they share") {
  // The same robot in the same state: the cut model's q, v made consistent with its loops,
  // the duplicate model's ball joints set to close the welds. The constrained accelerations of
  // the shared joints must agree (the masses split between duplicates move as one body).
  const Model cut = cassie(LoopClosure::CutJoint), dup = cassie();
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3; ++trial) {
    CAPTURE(trial);
    const State s = state_on_loops(cut, rng);
    REQUIRE((constraint_jacobian(cut, s.q) * s.v).cwiseAbs().maxCoeff() < 1e-10);

    // The duplicate model's state: shared joints copied by name, balls closing the welds.
    State d{neutral_configuration<double>(dup), Eigen::VectorXd::Zero(dup.nv), Eigen::VectorXd::Zero(dup.nv)};
    std::vector<int> balls;
    for (int i = 1; i < dup.num_bodies(); ++i) {
      const Body& b = dup.bodies[i];
      if (b.joint_type == JointType::Spherical) { balls.push_back(i); continue; }
      const Body& c = cut.bodies[cut.joint_index(b.joint_name)];
      d.q.segment(b.idx_q, b.nq) = s.q.segment(c.idx_q, c.nq);
      d.v.segment(b.idx_v, b.nv) = s.v.segment(c.idx_v, c.nv);
      d.tau.segment(b.idx_v, b.nv) = s.tau.segment(c.idx_v, c.nv);
    }
    Data<double> data(dup);
    forward_kinematics(dup, data, d.q);  // balls at identity
    for (const Constraint& weld : dup.constraints) {  // body1 = the duplicate, moved by its ball
      const Body& ball = dup.bodies[weld.body1];
      const Transformd joint_rotation =
          data.world_from_body[weld.body1].inverse() * data.world_from_body[weld.body2] * weld.placement2 * weld.placement1.inverse();
      REQUIRE(std::sqrt(dot(joint_rotation.translation, joint_rotation.translation)) < 1e-8);  // the connect holds
      double quaternion[4];
      rotation_to_quaternion(joint_rotation.rotation, quaternion);
      for (int k = 0; k < 4; ++k) d.q[ball.idx_q + k] = quaternion[k];
    }
    CHECK(position_error(dup, d.q).cwiseAbs().maxCoeff() < 1e-8);
    // Ball velocities: least squares on the welds' velocity rows (exact for a consistent v).
    const Eigen::MatrixXd Jd = constraint_jacobian(dup, d.q);
    Eigen::MatrixXd J_balls(Jd.rows(), 3 * static_cast<long>(balls.size()));
    for (size_t k = 0; k < balls.size(); ++k) J_balls.middleCols(3 * static_cast<long>(k), 3) = Jd.middleCols(dup.bodies[balls[k]].idx_v, 3);
    const Eigen::VectorXd ball_v = J_balls.completeOrthogonalDecomposition().solve(-(Jd * d.v));
    for (size_t k = 0; k < balls.size(); ++k) d.v.segment(dup.bodies[balls[k]].idx_v, 3) = ball_v.segment(3 * static_cast<long>(k), 3);
    CHECK((Jd * d.v).cwiseAbs().maxCoeff() < 1e-7);  // the positions close to ~1e-9

    Data<double> cut_data(cut), dup_data(dup);
    ConstrainedData<double> cut_cd(cut), dup_cd(dup);
    const Eigen::VectorXd cut_qdd = constrained_forward_dynamics(cut, cut_data, cut_cd, s.q, s.v, s.tau);
    const Eigen::VectorXd dup_qdd = constrained_forward_dynamics(dup, dup_data, dup_cd, d.q, d.v, d.tau);
    Eigen::VectorXd shared(cut.nv);
    for (int i = 1; i < cut.num_bodies(); ++i) {
      const Body& c = cut.bodies[i];
      const Body& b = dup.bodies[dup.joint_index(c.joint_name)];
      shared.segment(c.idx_v, c.nv) = dup_qdd.segment(b.idx_v, b.nv);
    }
    CHECK(relative_error(shared, cut_qdd) < 1e-6);
  }
}

TEST_CASE("an SDF file is refused with the file and the fault named") {
  CHECK_ERROR_MENTIONS(load_sdf_file("/nonexistent/robot.sdf"), "robot.sdf");
  const std::string header = "<?xml version=\"1.0\"?><sdf version=\"1.6\"><model name=\"m\">";
  const std::string link = "<link name=\"a\"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz>"
                           "<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial></link>";
  const auto linked = [&](const std::string& type) {
    return header + link + "<link name=\"b\"/><joint name=\"j\" type=\"" + type + "\"><parent>a</parent><child>b</child>"
           "<axis><xyz>0 0 1</xyz></axis></joint></model></sdf>";
  };
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("universal.sdf", linked("universal"))), "universal");
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("no_model.sdf", "<?xml version=\"1.0\"?><sdf version=\"1.6\"></sdf>")), "model");
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("two_roots.sdf", header + link + "<link name=\"c\"/></model></sdf>")), "root links");
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("bad_mass.sdf", header + "<link name=\"a\"><inertial><mass>-1</mass></inertial></link></model></sdf>")),
                       "negative mass");
  CHECK_ERROR_MENTIONS(parse_loop_closure("weld"), "duplicate");
  CHECK(load_sdf_file(write_file("revolute.sdf", linked("revolute"))).nv == 1);
}

// What URDF refuses, SDF refuses too (a fuzzing probe found these accepted).
TEST_CASE("an SDF joint with negative or NaN <damping>, lower > upper or a NaN limit is refused, naming the joint") {
  const std::string header = "<?xml version=\"1.0\"?><sdf version=\"1.6\"><model name=\"m\">";
  const std::string links = "<link name=\"a\"><inertial><mass>1</mass></inertial></link><link name=\"b\"><inertial><mass>1</mass></inertial></link>";
  const auto joint = [&](const std::string& type, const std::string& axis_extra) {
    return header + links + "<joint name=\"j\" type=\"" + type + "\"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz>" +
           axis_extra + "</axis></joint></model></sdf>";
  };
  CHECK(load_sdf_file(write_file("damped.sdf", joint("revolute", "<dynamics><damping>0.5</damping></dynamics>"))).damping[0] == 0.5);
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("negative_damping.sdf", joint("revolute", "<dynamics><damping>-5</damping></dynamics>"))),
                       "negative_damping.sdf", "'j'", "<damping>");
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("nan_damping.sdf", joint("revolute", "<dynamics><damping>nan</damping></dynamics>"))),
                       "nan_damping.sdf", "'j'", "<damping>");
  for (const char* type : {"revolute", "prismatic"}) {
    CAPTURE(type);
    CHECK_ERROR_MENTIONS(load_sdf_file(write_file("swapped.sdf", joint(type, "<limit><lower>1</lower><upper>-1</upper></limit>"))),
                         "swapped.sdf", "'j'", "lower limit > upper");
    CHECK_ERROR_MENTIONS(load_sdf_file(write_file("nan_limit.sdf", joint(type, "<limit><lower>nan</lower><upper>1</upper></limit>"))),
                         "nan_limit.sdf", "'j'");
  }
}

TEST_CASE("an SDF joint's <spring_stiffness> and <spring_reference> become its spring, and a negative stiffness is refused") {
  const std::string header = "<?xml version=\"1.0\"?><sdf version=\"1.6\"><model name=\"m\">";
  const std::string links = "<link name=\"a\"><inertial><mass>1</mass></inertial></link><link name=\"b\"><inertial><mass>1</mass></inertial></link>";
  const auto joint = [&](const std::string& dynamics) {
    return header + links + "<joint name=\"j\" type=\"prismatic\"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz>"
           "<dynamics>" + dynamics + "</dynamics></axis></joint></model></sdf>";
  };
  const Model model = load_sdf_file(write_file("spring.sdf", joint("<spring_stiffness>250</spring_stiffness><spring_reference>0.1</spring_reference>")));
  CHECK(model.spring_stiffness == std::vector<double>{250});
  CHECK(model.spring_reference == std::vector<double>{0.1});
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("negative_spring.sdf", joint("<spring_stiffness>-1</spring_stiffness>"))),
                       "negative_spring.sdf", "'j'", "stiffness");
}

TEST_CASE("an SDF model nesting another model is refused rather than its links dropped") {
  const std::string text = "<?xml version=\"1.0\"?><sdf version=\"1.7\"><model name=\"outer\"><link name=\"a\"><inertial><mass>1</mass>"
                           "</inertial></link><model name=\"inner\"><link name=\"b\"><inertial><mass>1</mass></inertial></link></model>"
                           "</model></sdf>";
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("nested.sdf", text)), "nested.sdf", "'outer'", "'inner'", "nested");
}

TEST_CASE("an SDF inertia of 1e308 is refused before the eigen-solver overflows") {
  const std::string text = "<?xml version=\"1.0\"?><sdf version=\"1.6\"><model name=\"m\"><link name=\"a\"><inertial><mass>1</mass>"
                           "<inertia><ixx>1e308</ixx><iyy>1e308</iyy><izz>1e308</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>"
                           "</inertial></link></model></sdf>";
  CHECK_ERROR_MENTIONS(load_sdf_file(write_file("huge.sdf", text), RootJoint::FreeFlyer), "huge.sdf", "'a'", "rotational inertia");
}

TEST_CASE("load_robot_file picks the parser by extension") {
  CHECK(load_robot_file(model_path("cassie_v2.sdf")).constraints.size() == 4);
  CHECK(load_robot_file(model_path("humanoid.urdf")).constraints.empty());
}

TEST_CASE("cassie_v2.sdf (duplicate links, redundant welds): LCABA, proxBBO and the dense oracle agree at consistent states") {
  const Model m = cassie();
  std::mt19937 rng(9);
  for (int trial = 0; trial < 3; ++trial) {
    CAPTURE(trial);
    const State s = state_on_loops(m, rng);
    Data<double> data(m);
    ConstrainedData<double> cd(m);
    const Eigen::VectorXd dense = constrained_forward_dynamics(m, data, cd, s.q, s.v, s.tau);
    ProximalSettings settings;
    settings.mu = 1e4;
    LcabaData<double> lcaba_data(m);
    ProxBboData<double> proxbbo_data(m);
    CHECK(relative_error(lcaba(m, lcaba_data, s.q, s.v, s.tau, settings), dense) < 1e-7);
    CHECK(relative_error(proxbbo(m, proxbbo_data, s.q, s.v, s.tau), dense) < 1e-7);
    Data<double> tree(m);
    CHECK(relative_error(aba(m, tree, s.q, s.v, s.tau), dense) > 1e-3);  // the welds act
  }
}

TEST_CASE("cassie.sdf (gearbox joints, a prismatic spring, 16 loops) loads as duplicate links, a prismatic cut is refused") {
  const std::string path = std::string(BATCHDYN_ROBOTS_DIR) + "/cassie.sdf";
  const Model m = load_sdf_file(path, RootJoint::FreeFlyer, LoopClosure::DuplicateLink);
  CHECK(m.nq == 69);
  CHECK(m.nv == 64);
  CHECK(m.constraints.size() == 16);
  CHECK(numerical_rank(constraint_jacobian(m, neutral_configuration<double>(m))) == 38);
  CHECK(position_error(m, neutral_configuration<double>(m)).cwiseAbs().maxCoeff() < 1e-12);
  CHECK_ERROR_MENTIONS(load_sdf_file(path, RootJoint::FreeFlyer, LoopClosure::CutJoint), "left-shin-spring-joint", "prismatic");
  // Its foot-reference links violate the triangle inequality (tests/robots/README.md): a warning.
  REQUIRE(m.inertia_warnings.size() == 2);
  CHECK(m.inertia_warnings[0].find("left-foot-reference") != std::string::npos);
  LoadOptions strict;
  strict.strict_inertia = true;
  CHECK_ERROR_MENTIONS(load_sdf_file(path, RootJoint::FreeFlyer, LoopClosure::DuplicateLink, strict), "left-foot-reference",
                       "triangle inequality");
}

TEST_CASE("Cassie falls freely at 1 ms steps with its joints at rest, by every solver and both closures") {
  // Uniform gravity moves no joint of a free-falling robot released at rest. Explicitly damped
  // (1 N m s/rad on 0.1 kg rods) the joints blow up within 0.3 s at this step; step() damps
  // implicitly. Contacts off: the loop solvers alone (its neutral pose stands in the ground).
  for (const LoopClosure closure : {LoopClosure::DuplicateLink, LoopClosure::CutJoint}) {
    const Model m = cassie(closure);
    for (const ConstraintSolver solver : {ConstraintSolver::Lcaba, ConstraintSolver::ProxBbo, ConstraintSolver::Dense}) {
      CAPTURE(static_cast<int>(closure));
      CAPTURE(static_cast<int>(solver));
      Batch<double> batch(m, 2, 1);
      batch.set_constraint_solver(solver);
      batch.set_contacts(false);
      for (int s = 0; s < 300; ++s) batch.step(1e-3);
      REQUIRE(batch.failed_count() == 0);
      double joint_speed = 0;
      for (int k = 6; k < m.nv; ++k) joint_speed = std::max(joint_speed, std::abs(batch.v()[k]));
      CHECK(joint_speed < 1e-6);
      CHECK(batch.v()[2] == doctest::Approx(-9.81 * 0.3).epsilon(1e-6));  // the pelvis falls at g (body z is world z)
    }
    Batch<float> single(m, 1, 1);
    single.set_contacts(false);
    for (int s = 0; s < 300; ++s) single.step(1e-3f);
    CHECK(single.failed_count() == 0);
  }
}

TEST_CASE("cassie_v2.sdf: its <collision> sphere and cylinders load as collision geometry where the file puts them") {
  const Model m = cassie();
  const ContactModel& cm = m.contacts;
  REQUIRE(cm.geometries.size() == 9);  // the pelvis sphere and a cylinder on each leg's hip, shin, tarsus and foot
  CHECK(cm.skipped.empty());           // its meshes are all <visual>
  CHECK(cm.candidates.size() == 1 + 8 * 4);  // the sphere; each cylinder's 4 slots
  const CollisionGeometry& pelvis = cm.geometries[0];
  CHECK(pelvis.name == "pelvis/pelvis_collision");
  CHECK(pelvis.shape == CollisionShape::Sphere);
  CHECK(pelvis.radius == 0.14);
  CHECK(distance(pelvis.in_link.translation, Vec3d{0.02, 0.0, 0.04}) < 1e-12);
  const auto shin = std::find_if(cm.geometries.begin(), cm.geometries.end(), [](const CollisionGeometry& g) { return g.name == "left-shin/left-shin_collision"; });
  REQUIRE(shin != cm.geometries.end());
  CHECK(shin->shape == CollisionShape::Cylinder);
  CHECK((shin->radius == 0.04 && shin->length == 0.44));
  const Vec3d axis = shin->in_link.rotation * Vec3d{0.0, 0.0, 1.0};  // pitched 1.57 rad about y: along x
  CHECK(axis.x == doctest::Approx(std::sin(1.57)));
  CHECK(m.contacts.ground.present);  // a free-flyer root gets the plane z = 0
}

TEST_CASE("an SDF <collision> box and capsule load with their link and pose, a mesh is skipped and listed") {
  const std::string text =
      "<?xml version=\"1.0\"?><sdf version=\"1.8\"><model name=\"m\"><link name=\"a\"><inertial><mass>1</mass></inertial>"
      "<collision name=\"crate\"><pose>0.1 0 0 0 0 0</pose><geometry><box><size>0.2 0.4 0.6</size></box></geometry></collision>"
      "<collision name=\"rod\"><geometry><capsule><radius>0.05</radius><length>0.3</length></capsule></geometry></collision>"
      "<collision name=\"shell\"><geometry><mesh><uri>shell.stl</uri></mesh></geometry></collision></link></model></sdf>";
  const Model m = load_sdf_file(write_file("collisions.sdf", text), RootJoint::FreeFlyer);
  const ContactModel& cm = m.contacts;
  REQUIRE(cm.geometries.size() == 2);
  CHECK(cm.geometries[0].name == "a/crate");
  CHECK(cm.geometries[0].shape == CollisionShape::Box);
  CHECK(distance(cm.geometries[0].half_extents, Vec3d{0.1, 0.2, 0.3}) < 1e-12);
  CHECK(distance(cm.geometries[0].in_link.translation, Vec3d{0.1, 0.0, 0.0}) < 1e-12);
  CHECK(cm.geometries[1].shape == CollisionShape::Capsule);
  CHECK((cm.geometries[1].radius == 0.05 && cm.geometries[1].length == 0.3));
  CHECK(cm.candidates.size() == 8 + 2);
  REQUIRE(cm.skipped.size() == 1);
  CHECK(cm.skipped[0].find("a/shell: mesh skipped") != std::string::npos);
}
