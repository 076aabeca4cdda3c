// Shared fixtures for the tests: the shipped and generated models, random states, and small
// numerical helpers. The oracles themselves live in the test files next to what they check.
#pragma once

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <array>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batchdyn.hpp"
#include "kernels/contact/contact_problem.hpp"

namespace batchdyn::test {

inline std::string model_path(const std::string& file) { return std::string(BATCHDYN_MODELS_DIR) + "/" + file; }

// Standard gravity (m/s^2), as the models and the engine's default gravity use it.
inline constexpr double kG = 9.81;

// A contact problem of rows without a cone (limit or bilateral rows: the solver call says which),
// every row present, with G (m x m) and g as given.
inline ContactSolverWorkspace<double> rows_problem(const Eigen::MatrixXd& G, const Eigen::VectorXd& g) {
  const int m = static_cast<int>(g.size());
  ContactSolverWorkspace<double> ws(0, m);
  for (int i = 0; i < m; ++i) {
    ws.g[static_cast<size_t>(i)] = g[i];
    ws.in_contact[static_cast<size_t>(i)] = 1.0;
    for (int j = 0; j < m; ++j) ws.G[static_cast<size_t>(i * m + j)] = G(i, j);
  }
  return ws;
}

// The shipped robots most tests step, with a free-flyer root.
inline Model quadruped() { return load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer); }
inline Model humanoid() { return load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer); }
// Cassie (SDF, four-bar loops); by default as Pinocchio loads it (duplicate links, 24 weld rows).
inline Model cassie(LoopClosure closure = LoopClosure::DuplicateLink, RootJoint root = RootJoint::FreeFlyer) {
  return load_sdf_file(model_path("cassie_v2.sdf"), root, closure);
}

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
  // Ball joints (spherical, quaternion coordinates) deep in the tree.
  models.push_back({"cassie_v2.sdf(tree)", load_sdf_file(model_path("cassie_v2.sdf"), RootJoint::FreeFlyer)});
  for (NamedModel& m : models) m.model.constraints.clear(), m.model.constraint_rows = 0;
  return models;
}

// A shipped URDF on a free-flyer root with a shipped constraint file (models/).
inline Model free_robot_with_constraints(const std::string& urdf, const std::string& constraints) {
  Model m = load_urdf_file(model_path(urdf), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path(constraints));
  return m;
}

// Models with loops and contacts: internal loops, external contacts, both, redundant rows.
inline std::vector<NamedModel> constrained_models() {
  std::vector<NamedModel> models;
  models.push_back({"four_bar", load_urdf_file(model_path("four_bar.urdf"))});
  models.push_back({"quadruped+feet", free_robot_with_constraints("quadruped.urdf", "quadruped_feet.json")});
  models.push_back({"humanoid+feet", free_robot_with_constraints("humanoid.urdf", "humanoid_feet.json")});
  models.push_back({"biped_fourbar+feet", free_robot_with_constraints("biped_fourbar.urdf", "biped_fourbar_feet.json")});
  models.push_back({"scene hand_cube", load_scene_file(model_path("scenes/hand_cube.json"))});
  models.push_back({"scene two_arms_box", load_scene_file(model_path("scenes/two_arms_box.json"))});
  for (const char* spec : {"cycle:7", "loop_chain:3:4", "stem:8:3:2", "branching:3:4", "ladder:4"})
    models.push_back({std::string("gen:") + spec, build_generated(generate_from_spec(spec))});
  // A real robot file with loops, closed by cut joints (connects). Its duplicate-link model
  // (Pinocchio's) has welds that are redundant only where the loops close, so random states
  // make its rows inconsistent: tests/test_sdf.cpp checks it at consistent states.
  models.push_back({"cassie_v2.sdf(cut)", load_sdf_file(model_path("cassie_v2.sdf"), RootJoint::FreeFlyer, LoopClosure::CutJoint)});
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

// A state on the model's loops: near the neutral pose (each coordinate displaced by up to
// `scale`, floating bases not), projected onto the constraints (to 1e-8: Gauss-Newton can end
// linearly near 1e-9 on nearly redundant rows), velocities in the null space of the constraint
// Jacobian, random torques. For models whose rows are consistent only where the loops close.
inline State state_on_loops(const Model& m, std::mt19937& rng, double scale = 0.1) {
  State s = random_state(m, rng);
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::VectorXd dv = Eigen::VectorXd::NullaryExpr(m.nv, [&]() { return u(rng); });
  for (int i = 1; i < m.num_bodies(); ++i)
    if (m.bodies[i].joint_type == JointType::FreeFlyer) dv.segment(m.bodies[i].idx_v, 6).setZero();
  integrate<double>(m, neutral_configuration<double>(m), dv, s.q);
  REQUIRE(project_to_constraints(m, s.q).residual < 1e-8);
  Data<double> data(m);
  ConstraintData<double> rows(m);
  constraint_kinematics(m, data, rows, s.q, s.v);
  s.v -= rows.J.completeOrthogonalDecomposition().solve(rows.J * s.v);
  return s;
}

// The constrained accelerations by the equality-constrained Gauss problem solved directly, an
// oracle independent of any proximal iteration: minimise 1/2 (qdd - qdd_free)^T M (qdd -
// qdd_free) subject to J qdd = k - drift, by the null space of J (SVD, singular values below
// 1e-10 of the largest count as zero: exactly redundant rows). For consistent rows this is the
// unique constrained qdd, however nearly redundant the rows; `residual` is |J qdd - (k -
// drift)|_inf (large: the rows are inconsistent, and qdd is the least-squares row fit's).
struct KktSolution {
  Eigen::VectorXd qdd;
  double residual = 0;
};
inline KktSolution kkt_solution(const Model& m, const State& s) {
  Data<double> data(m);
  ConstraintData<double> rows(m);
  constraint_kinematics(m, data, rows, s.q, s.v);
  const Eigen::VectorXd rhs = rows.k - rows.drift;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(rows.J, Eigen::ComputeFullU | Eigen::ComputeFullV);
  svd.setThreshold(1e-10);
  const Eigen::VectorXd particular = svd.solve(rhs);
  const Eigen::MatrixXd Z = svd.matrixV().rightCols(m.nv - svd.rank());
  const Eigen::VectorXd b = nonlinear_effects(m, data, s.q, s.v);
  const Eigen::MatrixXd M = crba(m, data, s.q).selfadjointView<Eigen::Upper>();
  const Eigen::VectorXd y = (Z.transpose() * M * Z).ldlt().solve(Z.transpose() * (s.tau - b - M * particular));
  KktSolution out;
  out.qdd = particular + Z * y;
  out.residual = (rows.J * out.qdd - rhs).cwiseAbs().maxCoeff();
  return out;
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

// A random tree: each link hangs from a uniformly chosen earlier link through a revolute,
// continuous or prismatic joint with a random axis and placement; random physical inertias.
inline Model random_tree(std::mt19937& rng, int links, RootJoint root) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), mass(0.2, 3.0), moment(0.01, 0.2);
  std::ostringstream x;
  x << "<robot name=\"random\"><link name=\"l0\"><inertial><origin xyz=\"" << 0.1 * u(rng) << " 0 0\"/><mass value=\"2\"/>"
    << "<inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.12\" iyz=\"0\" izz=\"0.15\"/></inertial></link>";
  const char* types[] = {"revolute", "continuous", "prismatic", "revolute"};
  for (int i = 1; i < links; ++i) {
    const double a = moment(rng), b = moment(rng), c = std::max(std::abs(a - b) + 0.01, moment(rng));
    x << "<link name=\"l" << i << "\"><inertial><origin xyz=\"" << 0.2 * u(rng) << " " << 0.2 * u(rng) << " "
      << 0.2 * u(rng) << "\" rpy=\"" << u(rng) << " " << u(rng) << " " << u(rng) << "\"/><mass value=\"" << mass(rng)
      << "\"/><inertia ixx=\"" << a << "\" ixy=\"0\" ixz=\"0\" iyy=\"" << b << "\" iyz=\"0\" izz=\"" << std::min(c, a + b - 0.001)
      << "\"/></inertial></link>";
    const int parent = std::uniform_int_distribution<int>(0, i - 1)(rng);
    x << "<joint name=\"j" << i << "\" type=\"" << types[std::uniform_int_distribution<int>(0, 3)(rng)] << "\"><parent link=\"l"
      << parent << "\"/><child link=\"l" << i << "\"/><origin xyz=\"" << 0.3 * u(rng) << " " << 0.3 * u(rng) << " "
      << 0.3 * u(rng) << "\" rpy=\"" << u(rng) << " " << u(rng) << " " << u(rng) << "\"/><axis xyz=\"" << u(rng) << " "
      << u(rng) << " " << u(rng) + 1.5 << "\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
  }
  x << "</robot>";
  return load_urdf_string(x.str(), root, "random tree");
}

inline Placement random_placement(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return {{0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng)}, {u(rng), u(rng), u(rng)}};
}

// `count` random constraints of random types between random links or to the world.
inline void add_random_constraints(Model& m, std::mt19937& rng, int count) {
  std::uniform_int_distribution<int> pick(0, m.num_bodies() - 1), kind(0, 2);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < count; ++k) {
    const int b1 = std::max(1, pick(rng));
    int b2 = kind(rng) == 0 ? 0 : pick(rng);
    if (b2 == b1) b2 = 0;
    const ConstraintType type = std::array{ConstraintType::Connect, ConstraintType::Weld, ConstraintType::Revolute}[static_cast<size_t>(kind(rng))];
    add_constraint(m, ConstraintSpec{"c" + std::to_string(k), type, m.bodies[b1].name, b2 == 0 ? "world" : m.bodies[b2].name,
                                     random_placement(rng), random_placement(rng), {u(rng), u(rng), u(rng) + 1.5}, 0, 0});
  }
}

// Model with gravity switched off (for M^{-1} via ABA).
inline Model without_gravity(Model m) {
  m.gravity = Vec3d::zero();
  return m;
}

// A free-floating body of mass 1 kg with one collision primitive (URDF geometry text) and the
// rotational inertia diag(ixx): the contact tests' boxes and spheres.
inline Model free_body(const std::string& geometry, double ixx = 0.02) {
  const std::string i = std::to_string(ixx);
  return load_urdf_string("<robot name=\"body\"><link name=\"body\"><inertial><mass value=\"1\"/><inertia ixx=\"" + i +
                              "\" ixy=\"0\" ixz=\"0\" iyy=\"" + i + "\" iyz=\"0\" izz=\"" + i + "\"/></inertial><collision><geometry>" +
                              geometry + "</geometry></collision></link></robot>",
                          RootJoint::FreeFlyer);
}

// The shipped quadruped (models/quadruped.urdf, free flyer) with bent legs (hip flexion 0.8,
// knee -1.6 rad), its sphere feet `clearance` above the plane z = 0.
inline Eigen::VectorXd crouching_quadruped(const Model& m, double clearance) {
  Eigen::VectorXd q = neutral_configuration<double>(m);
  for (const char* leg : {"FL", "FR", "HL", "HR"}) {
    q[m.bodies[m.joint_index(std::string(leg) + "_hip_flexion")].idx_q] = 0.8;
    q[m.bodies[m.joint_index(std::string(leg) + "_knee")].idx_q] = -1.6;
  }
  q[2] = 0.5 * std::cos(0.8) + 0.02 + clearance;
  return q;
}

}  // namespace batchdyn::test
