// The Delassus kernels (kernels/delassus/pv_osimr.hpp, kernels/delassus/pv_osim.hpp,
// kernels/delassus/delassus_operations.hpp) against the dense oracle J M^{-1} J^T of
// kernels/loops/constrained_dynamics.hpp (CRBA, frame Jacobians, Cholesky), on random trees and
// constraint sets, the paper's mechanisms, and the batch engine's lanes.
#include <cstdint>
#include <limits>
#include <sstream>

#include "batch_helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::MatrixXd dense_delassus(const Model& m, const Eigen::VectorXd& q) {
  Data<double> data(m);
  ConstrainedData<double> cd(m);
  return delassus(m, data, cd, q);
}

// PV-OSIMr and PV-OSIM both equal the dense J M^{-1} J^T at `states` random configurations.
void check_against_dense(const Model& m, std::mt19937& rng, int states = 3, double tolerance = 1e-9) {
  Data<double> data(m);
  DelassusData<double> dd(m);
  for (int s = 0; s < states; ++s) {
    const Eigen::VectorXd q = random_state(m, rng).q;
    const Eigen::MatrixXd expected = dense_delassus(m, q);
    // G starts as NaN, so an entry a kernel leaves unwritten shows.
    dd.G.setConstant(std::numeric_limits<double>::quiet_NaN());
    const Eigen::MatrixXd r = pv_osimr_delassus(m, data, dd, q);
    CHECK(r.allFinite());
    CHECK(relative_error(r, expected) <= tolerance);
    dd.G.setConstant(std::numeric_limits<double>::quiet_NaN());
    const Eigen::MatrixXd o = pv_osim_delassus(m, data, dd, q);
    CHECK(o.allFinite());
    CHECK(relative_error(o, expected) <= tolerance);
    CHECK(relative_error(r, o) <= tolerance);
  }
}

}  // namespace

TEST_CASE("PV-OSIMr and PV-OSIM equal the dense J M^{-1} J^T on every shipped and generated constrained model") {
  std::mt19937 rng(90);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    check_against_dense(m.model, rng);
  }
}

TEST_CASE("PV-OSIMr over some terminals forms their blocks bit for bit as the full sweep does, and skips the others") {
  // The contact stage's use: terminals with disjoint rows (feet welded to the world), some of
  // them needed (the contact bodies touching in a block).
  const Model m = free_robot_with_constraints("humanoid.urdf", "humanoid_feet.json");
  Data<double> data(m);
  DelassusData<double> full(m), part(m);
  const DelassusPlan& plan = part.plan;
  const int terminals = plan.num_terminals();
  REQUIRE(terminals >= 2);
  for (int a = 0; a < terminals; ++a)
    for (int b = a + 1; b < terminals; ++b) REQUIRE(plan.terminals[static_cast<size_t>(a)].row != plan.terminals[static_cast<size_t>(b)].row);
  std::mt19937 rng(92);
  for (int needed_first = 0; needed_first < 2; ++needed_first) {
    const Eigen::VectorXd q = random_state(m, rng).q;
    pv_osimr_kernel(data.constants, full.plan, full.workspace, q.data(), full.G.data());
    std::vector<char> needed(static_cast<size_t>(terminals), 0);
    needed[static_cast<size_t>(needed_first ? 0 : terminals - 1)] = 1;
    part.G.setConstant(std::numeric_limits<double>::quiet_NaN());
    delassus_first_sweep(data.constants, plan, part.workspace, q.data());
    pv_osimr_sweeps(data.constants, plan, part.workspace, part.G.data(), static_cast<const TreeFactor<double>*>(nullptr), needed.data());
    for (int a = 0; a < terminals; ++a)
      for (int b = 0; b < terminals; ++b) {
        const DelassusPlan::Terminal& ta = plan.terminals[static_cast<size_t>(a)];
        const DelassusPlan::Terminal& tb = plan.terminals[static_cast<size_t>(b)];
        const auto block = [&](const RowMatrixXd& G) { return G.block(ta.row, tb.row, ta.dim, tb.dim).eval(); };
        if (needed[static_cast<size_t>(a)] && needed[static_cast<size_t>(b)])
          CHECK((block(part.G).array() == block(full.G).array()).all());  // bit for bit
        else if (a == b)
          CHECK(block(part.G).hasNaN());  // never formed
      }
  }
}

TEST_CASE("PV-OSIMr equals the dense Delassus matrix on random trees with random connect, weld and revolute constraints") {
  std::mt19937 rng(91);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    Model m = random_tree(rng, 2 + trial % 13, trial % 2 ? RootJoint::FreeFlyer : RootJoint::Fixed);
    add_random_constraints(m, rng, 1 + trial % 6);  // internal and external, on any link, the root too
    check_against_dense(m, rng, 2);
  }
}

TEST_CASE("two constraints on one link and a constraint on the root body add up like the dense matrix") {
  std::mt19937 rng(92);
  Model m = random_tree(rng, 8, RootJoint::FreeFlyer);
  const std::string root = m.bodies[1].name, leaf = m.bodies[7].name;
  add_constraint(m, ConstraintSpec{"root_weld", ConstraintType::Weld, root, "world", random_placement(rng), {}, {0, 0, 1}, 0, 0});
  add_constraint(m, ConstraintSpec{"leaf_a", ConstraintType::Connect, leaf, "world", random_placement(rng), {}, {0, 0, 1}, 0, 0});
  add_constraint(m, ConstraintSpec{"leaf_b", ConstraintType::Revolute, leaf, root, random_placement(rng), random_placement(rng), {1, 0, 0}, 0, 0});
  check_against_dense(m, rng);
}

TEST_CASE("the paper's stem-with-branches mechanism (Fig. 3a), welded tips, 1 to 4 branches per end") {
  std::mt19937 rng(93);
  for (int stem : {1, 2, 5, 12})
    for (int branches : {1, 2, 4}) {
      CAPTURE(stem);
      CAPTURE(branches);
      const Model m = build_generated(generate_welded_stem(stem, branches));
      CHECK(m.constraint_rows == 12 * branches);
      check_against_dense(m, rng, 2);
    }
}

TEST_CASE("Atlas-like feet: four 3D contact points on each foot of the free-floating humanoid") {
  std::mt19937 rng(94);
  Model m = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  for (const char* foot : {"left_sole", "right_sole"})
    for (int corner = 0; corner < 4; ++corner) {
      const Placement p{{corner % 2 ? 0.1 : -0.05, corner / 2 ? 0.04 : -0.04, 0}, {0, 0, 0}};
      add_constraint(m, ConstraintSpec{std::string(foot) + "_" + std::to_string(corner), ConstraintType::Connect, foot, "world", p, {}, {0, 0, 1}, 0, 0});
    }
  CHECK(m.constraint_rows == 24);
  check_against_dense(m, rng);
}

TEST_CASE("fingertips of the hand, each held at a point, and two fingertips joined to each other") {
  std::mt19937 rng(95);
  Model m = load_urdf_file(model_path("hand.urdf"));
  for (const char* tip : {"index_tip", "middle_tip", "ring_tip", "thumb_tip"})
    add_constraint(m, ConstraintSpec{std::string(tip) + "_hold", ConstraintType::Connect, tip, "world", {}, {}, {0, 0, 1}, 0, 0});
  add_constraint(m, ConstraintSpec{"pinch", ConstraintType::Weld, "index_tip", "thumb_tip", {}, {}, {0, 0, 1}, 0, 0});
  check_against_dense(m, rng);
}

TEST_CASE("Delassus times a vector without forming G equals G x") {
  std::mt19937 rng(96);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    DelassusData<double> dd(m.model);
    const Eigen::VectorXd q = random_state(m.model, rng).q;
    const Eigen::MatrixXd G = pv_osimr_delassus(m.model, data, dd, q);
    const Eigen::VectorXd x = Eigen::VectorXd::Random(m.model.constraint_rows);
    Eigen::VectorXd y(m.model.constraint_rows);
    apply_delassus(data.constants, dd.plan, dd.workspace, x.data(), y.data());
    CHECK(relative_error(y, G * x) <= 1e-10);
  }
}

namespace {

// The scratch a response writes: the bodies' forces and accelerations, the joints' forces.
struct ResponseScratch {
  explicit ResponseScratch(const Model& m)
      : body_force(static_cast<size_t>(m.num_bodies())), body_acceleration(body_force.size()), joint_force(static_cast<size_t>(m.nv)) {}
  std::vector<Force<double>> body_force;
  std::vector<Motion<double>> body_acceleration;
  std::vector<double> joint_force;
};

// Every dof's joint_torque_response at the factorisation `M` is the column of M^{-1} (the dense
// inverse of CRBA's M) and the whole tree's force_response to that torque alone.
void check_columns_of_inverse_mass_matrix(const Model& m, const ModelConstants<double>& c, const TreeFactor<double>& M,
                                          const Eigen::MatrixXd& inverse_mass_matrix) {
  ResponseScratch scratch(m);
  Eigen::VectorXd column(m.nv), whole_tree(m.nv), torque = Eigen::VectorXd::Zero(m.nv);
  for (int i = 1; i < m.num_bodies(); ++i)
    for (int k = 0; k < m.bodies[static_cast<size_t>(i)].nv; ++k) {
      const int dof = m.bodies[static_cast<size_t>(i)].idx_v + k;
      CAPTURE(dof);
      column.setConstant(std::numeric_limits<double>::quiet_NaN());
      joint_torque_response(c, M, scratch, i, dof, 2.0, column.data());
      CHECK(relative_error(column, 2.0 * inverse_mass_matrix.col(dof)) <= 1e-10);
      for (Force<double>& f : scratch.body_force) f = Force<double>::zero();
      torque.setZero();
      torque[dof] = 2.0;
      force_response(c, M, scratch, whole_tree.data(), torque.data());
      CHECK(relative_error(column, whole_tree) <= 1e-12);
    }
}

}  // namespace

TEST_CASE("a joint torque's response, carried down its ancestors only, is the column of M^{-1}, from ABA's factorisation or a Delassus sweep's") {
  std::mt19937 rng(95);
  std::vector<NamedModel> models = constrained_models();
  for (int trial = 0; trial < 12; ++trial)  // trees with every joint type, no constraints: ABA's factorisation only
    models.push_back({"random tree " + std::to_string(trial), random_tree(rng, 2 + trial, trial % 2 ? RootJoint::FreeFlyer : RootJoint::Fixed)});
  for (const NamedModel& m : models) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    const State s = random_state(m.model, rng);
    const Eigen::MatrixXd inverse_mass_matrix = crba(m.model, data, s.q).inverse();
    aba(m.model, data, s.q, s.v, s.tau);  // leaves M's factorisation at q in data.aba
    check_columns_of_inverse_mass_matrix(m.model, data.constants, tree_factor_of(data.aba), inverse_mass_matrix);
    if (m.model.constraint_rows == 0) continue;
    DelassusData<double> dd(m.model);
    pv_osimr_delassus(m.model, data, dd, s.q);  // a Delassus sweep's factorisation at the same q
    check_columns_of_inverse_mass_matrix(m.model, data.constants, tree_factor_of(dd.workspace), inverse_mass_matrix);
  }
}

TEST_CASE("the damped Cholesky factor satisfies L L^T = G + rho I and solves, also for redundant rows") {
  std::mt19937 rng(97);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    DelassusData<double> dd(m.model);
    const Eigen::VectorXd q = random_state(m.model, rng).q;
    const RowMatrixXd G = pv_osimr_delassus(m.model, data, dd, q);
    const int rows = m.model.constraint_rows;
    const double rho = 1e-6;
    RowMatrixXd L(rows, rows);
    damped_cholesky(G.data(), rows, rho, L.data());
    const Eigen::MatrixXd damped = G + rho * Eigen::MatrixXd::Identity(rows, rows);
    CHECK(relative_error(L * L.transpose(), damped) <= 1e-10);
    CHECK(L.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0);
    const Eigen::VectorXd b = Eigen::VectorXd::Random(rows);
    Eigen::VectorXd x = b;
    cholesky_solve(L.data(), rows, x.data());
    CHECK((damped * x - b).norm() <= 1e-6 * (1 + damped.norm() * x.norm()));
  }
}

TEST_CASE("Batch::delassus: a NaN or a bad quaternion marks only its environment and fills its matrix with NaN") {
  std::mt19937 rng(100);
  Model m = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("humanoid_feet.json"));
  const int n = 2 * Batch<double>::W, mm = m.constraint_rows * m.constraint_rows;
  Batch<double> batch(m, n, 2);
  randomise(batch, rng);
  batch.delassus();
  const Eigen::VectorXd before = row(batch.delassus_matrices(), 2, mm);
  batch.q()[1 * m.nq + 8] = std::numeric_limits<double>::quiet_NaN();
  batch.q()[3 * m.nq + 3] = 2.0;  // quaternion x: norm far from 1
  batch.v()[2 * m.nv] = std::numeric_limits<double>::quiet_NaN();  // v is not an input of delassus()
  batch.delassus();
  CHECK(batch.status()[1] == EnvStatus::NonFiniteState);
  CHECK(batch.status()[3] == EnvStatus::InvalidQuaternion);
  CHECK(batch.status()[2] == EnvStatus::Ok);
  CHECK(batch.failed_count() == 2);
  CHECK(std::isnan(batch.delassus_matrices()[1 * mm]));
  CHECK(std::isnan(batch.delassus_matrices()[3 * mm + mm - 1]));
  CHECK(row(batch.delassus_matrices(), 2, mm) == before);
}

TEST_CASE("Batch::delassus writes into a user buffer of N x m x m and refuses a buffer of another size") {
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("quadruped_feet.json"));
  const int n = 5, mm = m.constraint_rows * m.constraint_rows;
  Batch<float> batch(m, n, 1);
  std::vector<float> mine(static_cast<size_t>(n * mm), -1.0f);
  batch.use_delassus_buffer(mine);
  batch.delassus();
  CHECK(batch.delassus_matrices() == mine.data());
  CHECK(mine[0] > 0.0f);  // a diagonal entry of a PSD matrix of a constrained foot
  std::vector<float> wrong(static_cast<size_t>(n * mm - 1));
  CHECK_THROWS_WITH_AS(batch.use_delassus_buffer(wrong), doctest::Contains("'delassus'"), Error);
}

TEST_CASE("Batch's own Delassus matrices and factors start on a 64-byte cache line") {
  // With m^2 a multiple of W (m = 24 here) every environment's matrix then starts on a cache
  // line too, so the scatter's full-width row stores never straddle two lines.
  Model m = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("humanoid_feet_hands.json"));
  Batch<double> batch(m, 3, 1);
  batch.delassus_cholesky(1e-8);
  CHECK(reinterpret_cast<std::uintptr_t>(batch.delassus_matrices()) % 64 == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(batch.delassus_factors()) % 64 == 0);
}

TEST_CASE("Batch::delassus_cholesky gives each environment's factor of G + rho I, and refuses rho <= 0") {
  std::mt19937 rng(101);
  Model m = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("humanoid_feet_hands.json"));
  const int n = Batch<double>::W + 2, rows = m.constraint_rows;
  Batch<double> batch(m, n, 1);
  randomise(batch, rng);
  const double rho = 1e-8;
  batch.delassus_cholesky(rho);
  CHECK(batch.failed_count() == 0);
  for (int e = 0; e < n; ++e) {
    const RowMatrixXd G = Eigen::Map<const RowMatrixXd>(batch.delassus_matrices() + e * rows * rows, rows, rows);
    const RowMatrixXd L = Eigen::Map<const RowMatrixXd>(batch.delassus_factors() + e * rows * rows, rows, rows);
    CHECK(relative_error(L * L.transpose(), G + rho * Eigen::MatrixXd::Identity(rows, rows)) <= 1e-10);
    CHECK(relative_error(G, dense_delassus(m, row(batch.q(), e, m.nq))) <= 1e-9);
  }
  CHECK_THROWS_WITH_AS(batch.delassus_cholesky(0.0), doctest::Contains("rho must be > 0"), Error);
}
