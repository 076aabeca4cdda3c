// Joint edits and large models: locked joints (reduced models) match the full model held at
// the lock, armature enters M(q) exactly on the diagonal, <mimic> is recorded but not
// enforced, fixed joints stay addressable as frames, and long chains / wide stars load.
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
// A URDF chain (each link the parent of the next) or star (every link a child of the root).
std::string big_urdf(int links, bool star) {
  std::string xml = "<robot name=\"big\"><link name=\"l0\"/>";
  xml.reserve(static_cast<size_t>(links) * 330);
  const std::string inertial =
      "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial>";
  for (int i = 1; i <= links; ++i) {
    const std::string n = std::to_string(i), parent = std::to_string(star ? 0 : i - 1);
    xml += "<link name=\"l" + n + "\">" + inertial + "</link><joint name=\"j" + n + "\" type=\"revolute\"><parent link=\"l" +
           parent + "\"/><child link=\"l" + n +
           "\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
  }
  return xml + "</robot>";
}
}  // namespace

TEST_CASE("a 100,000-link chain loads (no recursion) in depth-first order") {
  const Model model = load_urdf_string(big_urdf(100000, false), RootJoint::Fixed, "chain.urdf");
  CHECK(model.nv == 100000);
  CHECK(model.max_depth() == 100000);
  CHECK(model.bodies[100000].parent == 99999);
  CHECK(model.joint_index("j77777") == 77777);
  CHECK(find_singular_joints(model).empty());
}

TEST_CASE("a 100,000-link star loads with children in urdfdom's order (by joint name)") {
  const Model model = load_urdf_string(big_urdf(100000, true), RootJoint::Fixed, "star.urdf");
  CHECK(model.nv == 100000);
  CHECK(model.max_depth() == 1);
  CHECK(model.bodies[1].joint_name == "j1");
  CHECK(model.bodies[2].joint_name == "j10");  // "j10" sorts before "j2"
}

TEST_CASE("a tiny but massive link at the end of a heavy chain is regular, not singular") {
  const std::string heavy = "<inertial><mass value=\"100\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>";
  const std::string tiny = "<inertial><origin xyz=\"0 0 0.001\"/><mass value=\"1e-9\"/><inertia ixx=\"1e-15\" ixy=\"0\" ixz=\"0\" iyy=\"1e-15\" iyz=\"0\" izz=\"1e-15\"/></inertial>";
  const std::string limit = "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>";
  const Model model = load_urdf_string(
      "<robot name=\"r\"><link name=\"base\"/><link name=\"arm\">" + heavy + "</link><link name=\"tip\">" + tiny +
      "</link><joint name=\"shoulder\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/><axis xyz=\"0 1 0\"/>" +
      limit + "</joint><joint name=\"finger\" type=\"revolute\"><parent link=\"arm\"/><child link=\"tip\"/><origin xyz=\"0 0 1\"/>" +
      "<axis xyz=\"1 0 0\"/>" + limit + "</joint></robot>");
  CHECK(find_singular_joints(model).empty());
}

TEST_CASE("a locked joint gives the full model's M and b with that joint held at its position") {
  const Model full = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  const std::string joint = full.bodies[9].joint_name;
  const int locked_v = full.bodies[9].idx_v;
  const double position = 0.3;
  const Model reduced = lock_joints(full, {{joint, position}});
  REQUIRE(reduced.nv == full.nv - 1);
  CHECK_FALSE(reduced.has_joint(joint));
  CHECK(reduced.has_frame(joint, FrameKind::Joint));
  CHECK(reduced.frames[reduced.frame_index(joint, FrameKind::Joint)].kind == FrameKind::FixedJoint);
  std::mt19937 rng(91);
  Data<double> full_data(full), reduced_data(reduced);
  for (int trial = 0; trial < 3; ++trial) {
    const State s = random_state(reduced, rng);
    // The full state: the reduced coordinates around the locked one, which is at `position`
    // and at rest.
    Eigen::VectorXd q(full.nq), v = Eigen::VectorXd::Zero(full.nv);
    const int locked_q = full.bodies[9].idx_q;
    q << s.q.head(locked_q), position, s.q.tail(reduced.nq - locked_q);
    v << s.v.head(locked_v), 0.0, s.v.tail(reduced.nv - locked_v);
    auto drop = [&](const Eigen::MatrixXd& m) {  // remove row and column locked_v
      Eigen::MatrixXd out(m.rows() - 1, m.cols() == 1 ? 1 : m.cols() - 1);
      std::vector<int> keep;
      for (int k = 0; k < m.rows(); ++k)
        if (k != locked_v) keep.push_back(k);
      for (int r = 0; r < out.rows(); ++r)
        for (int c = 0; c < out.cols(); ++c) out(r, c) = m(keep[r], m.cols() == 1 ? 0 : keep[c]);
      return out;
    };
    CHECK(relative_error(crba(reduced, reduced_data, s.q), drop(crba(full, full_data, q))) <= 1e-12);
    CHECK(relative_error(nonlinear_effects(reduced, reduced_data, s.q, s.v), drop(nonlinear_effects(full, full_data, q, v))) <= 1e-12);
  }
}

TEST_CASE("constraints and frames survive locking: a foot weld still names its link") {
  Model full = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(full, model_path("humanoid_feet.json"));
  const Model reduced = lock_joints(full, {{full.bodies[5].joint_name, std::nullopt}});
  CHECK(reduced.constraints.size() == full.constraints.size());
  CHECK(reduced.constraint_rows == full.constraint_rows);
  for (const Frame& f : full.frames) CHECK(reduced.has_frame(f.name, f.kind == FrameKind::Link ? FrameKind::Link : FrameKind::Joint));
}

TEST_CASE("armature is added to M(q)'s diagonal and ABA, RNEA and CRBA agree with it") {
  Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(92);
  const State s = random_state(model, rng);
  Data<double> plain_data(model);
  const Eigen::MatrixXd plain = crba(model, plain_data, s.q);
  set_armature(model, "FL_knee", 0.25);
  set_armature(model, "HR_hip_abduction", 0.5);
  Data<double> data(model);
  Eigen::MatrixXd expected = plain;
  expected(model.bodies[model.joint_index("FL_knee")].idx_v, model.bodies[model.joint_index("FL_knee")].idx_v) += 0.25;
  expected(model.bodies[model.joint_index("HR_hip_abduction")].idx_v,
           model.bodies[model.joint_index("HR_hip_abduction")].idx_v) += 0.5;
  CHECK(relative_error(crba(model, data, s.q), expected) <= 1e-14);
  const Eigen::VectorXd qdd = aba(model, data, s.q, s.v, s.tau);
  CHECK(relative_error(rnea(model, data, s.q, s.v, qdd), s.tau) <= 1e-10);
  const Eigen::VectorXd b = nonlinear_effects(model, data, s.q, s.v);
  CHECK(relative_error(qdd, expected.llt().solve(s.tau - b)) <= 1e-10);
}

TEST_CASE("armature on a singular joint makes the model regular") {
  Model model = load_urdf_file(std::string(BATCHDYN_ROBOTS_DIR) + "/falcon_bravo7_gripper.urdf");
  REQUIRE(find_singular_joints(model).size() == 2);
  apply_armature_spec(model, "bravo_finger1_joint=0.001,bravo_finger2_joint=0.001");
  CHECK(find_singular_joints(model).empty());
}

TEST_CASE("<mimic> is recorded on the joint, which stays an independent coordinate") {
  const Model model = load_urdf_file(std::string(BATCHDYN_ROBOTS_DIR) + "/baxter.urdf");
  int mimics = 0;
  for (const Body& b : model.bodies) mimics += !b.mimic.empty();
  CHECK(mimics == 2);
  const Body& finger = model.bodies[model.joint_index("l_gripper_r_finger_joint")];
  CHECK(finger.mimic == "l_gripper_l_finger_joint");
  CHECK(finger.nv == 1);
}

TEST_CASE("fixed joints are frames of kind FixedJoint on the body their child link is merged into") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  const Frame& foot_link = model.frames[model.frame_index("FL_FOOT", FrameKind::Link)];
  const int fixed = model.frame_index("FL_foot_fixed", FrameKind::Joint);
  CHECK(model.frames[fixed].kind == FrameKind::FixedJoint);
  CHECK(model.frames[fixed].body == foot_link.body);
  CHECK(relative_error(to_matrix(model.frames[fixed].placement), to_matrix(foot_link.placement)) == 0.0);
}

TEST_CASE("index_names rebuilds the O(1) lookups after frames are edited by hand") {
  Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  model.frames.push_back({"marker", 2, Transformd::identity(), FrameKind::Link});
  CHECK_FALSE(model.has_frame("marker"));
  model.index_names();
  CHECK(model.frames[model.frame_index("marker")].body == 2);
  CHECK(model.joint_index(model.bodies[2].joint_name) == 2);
}
