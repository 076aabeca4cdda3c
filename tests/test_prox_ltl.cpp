// proxLTL (kernels/loops/prox_ltl.hpp, topology/prox_ltl_plan.hpp): the sparse U D U^T factorisation of
// the proximal KKT matrix, checked against a dense factorisation and against K itself, and the
// constrained dynamics it gives against the dense proximal solver.
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

// Every model the loop tests use, plus random trees with random loops and contacts (connect,
// weld and revolute rows, often redundant).
std::vector<NamedModel> models_with_constraints() {
  std::vector<NamedModel> models = constrained_models();
  Model hands = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(hands, model_path("humanoid_feet_hands.json"));
  models.push_back({"humanoid+feet+hands", hands});
  models.push_back({"scene two_hands_cube", load_scene_file(model_path("scenes/two_hands_cube.json"))});
  std::mt19937 rng(90);
  for (int k = 0; k < 6; ++k) {
    Model random = random_tree(rng, 6 + 3 * k, k % 2 ? RootJoint::FreeFlyer : RootJoint::Fixed);
    add_random_constraints(random, rng, 1 + k % 3);
    models.push_back({"random tree " + std::to_string(k), random});
  }
  return models;
}

// K_rho of eq. 18, dense: [-rho I, J; J^T, M].
Eigen::MatrixXd dense_kkt(const Eigen::MatrixXd& M, const Eigen::MatrixXd& J, double rho) {
  const Eigen::Index m = J.rows(), n = M.rows();
  Eigen::MatrixXd K(m + n, m + n);
  K << -rho * Eigen::MatrixXd::Identity(m, m), J, J.transpose(), M;
  return K;
}

// The textbook U D U^T of a symmetric matrix, last index first, every entry: an oracle that knows
// nothing of trees. The factorisation without pivoting is unique, so the sparse one must equal it.
void dense_udut(Eigen::MatrixXd K, Eigen::MatrixXd& U, Eigen::VectorXd& D) {
  const Eigen::Index N = K.rows();
  U = Eigen::MatrixXd::Identity(N, N);
  D = Eigen::VectorXd::Zero(N);
  for (Eigen::Index k = N - 1; k >= 0; --k) {
    D[k] = K(k, k);
    U.col(k).head(k) = K.col(k).head(k) / D[k];
    K.topLeftCorner(k, k) -= D[k] * U.col(k).head(k) * U.col(k).head(k).transpose();
  }
}

// Unit upper U and diagonal D read from the in-place factor.
void unpack(const Eigen::MatrixXd& factor, Eigen::MatrixXd& U, Eigen::VectorXd& D) {
  U = factor.triangularView<Eigen::StrictlyUpper>();
  U.diagonal().setOnes();
  D = factor.diagonal();
}

// The factor of K_rho at state s through the public steps.
Eigen::MatrixXd sparse_factor(const Model& model, const ProxLtlPlan& plan, const State& s, double rho, Eigen::MatrixXd* K = nullptr) {
  Data<double> data(model);
  ConstraintData<double> rows(model);
  constraint_kinematics(model, data, rows, s.q, s.v);
  const Eigen::MatrixXd M = crba(model, data, s.q);
  if (K) *K = dense_kkt(M, rows.J, rho);
  Eigen::MatrixXd factor = Eigen::MatrixXd::Zero(plan.size(), plan.size());
  prox_ltl_assemble(plan, M, rows.J, rho, factor);
  prox_ltl_factorize(plan, factor);
  return factor;
}

// proxLTL and the dense proximal solver, each with its own data, on one model: solve(s) runs
// both on state s (the default settings), leaving their results in pd / cd and the returned qdd.
struct ProxLtlAndDense {
  explicit ProxLtlAndDense(const Model& m) : model(m), plan(plan_prox_ltl(m)), data(m), dense_data(m), pd(m), cd(m) {}
  void solve(const State& s) {
    qdd = prox_ltl(model, plan, data, pd, s.q, s.v, s.tau);
    dense = constrained_forward_dynamics(model, dense_data, cd, s.q, s.v, s.tau);
  }
  const Model& model;
  ProxLtlPlan plan;
  Data<double> data, dense_data;
  ProxLtlData<double> pd;
  ConstrainedData<double> cd;
  Eigen::VectorXd qdd, dense;
};

}  // namespace

TEST_CASE("the proxLTL plan: each dof's parent is the dof before it on the path to the root") {
  const Model humanoid = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  const ProxLtlPlan plan = plan_prox_ltl(humanoid);
  REQUIRE(plan.nv == humanoid.nv);
  for (int k = 0; k < 6; ++k) CHECK(plan.dof_parent[static_cast<size_t>(k)] == k - 1);  // the free flyer's dofs form a chain
  for (int b = 2; b < humanoid.num_bodies(); ++b) {
    const Body& body = humanoid.bodies[static_cast<size_t>(b)];
    const Body& parent = humanoid.bodies[static_cast<size_t>(body.parent)];
    CHECK(plan.dof_parent[static_cast<size_t>(body.idx_v)] == parent.idx_v + parent.nv - 1);
  }
}

TEST_CASE("the proxLTL plan: J is zero off the rows it puts on each dof, and those rows are on every ancestor dof too") {
  std::mt19937 rng(91);
  for (const NamedModel& m : models_with_constraints()) {
    CAPTURE(m.name);
    const ProxLtlPlan plan = plan_prox_ltl(m.model);
    Eigen::MatrixXi on = Eigen::MatrixXi::Zero(m.model.constraint_rows, m.model.nv);
    for (int j = 0; j < m.model.nv; ++j)
      for (int e = plan.row_begin[static_cast<size_t>(j)]; e < plan.row_begin[static_cast<size_t>(j) + 1]; ++e)
        on(plan.rows_on_dof[static_cast<size_t>(e)], j) = 1;
    for (int j = 0; j < m.model.nv; ++j)  // sigma is closed under "ancestor of" (eq. 27: no fill-in)
      if (plan.dof_parent[static_cast<size_t>(j)] >= 0) CHECK((on.col(plan.dof_parent[static_cast<size_t>(j)]) - on.col(j)).minCoeff() >= 0);
    Data<double> data(m.model);
    ConstraintData<double> rows(m.model);
    for (int trial = 0; trial < 3; ++trial) {
      const State s = random_state(m.model, rng);
      constraint_kinematics(m.model, data, rows, s.q, s.v);
      CHECK((rows.J.array() * (1 - on.cast<double>().array())).cwiseAbs().maxCoeff() == 0.0);
    }
  }
}

TEST_CASE("the sparse factor of K_rho equals the dense U D U^T entry by entry, and U D U^T gives K_rho back") {
  std::mt19937 rng(92);
  for (const NamedModel& m : models_with_constraints()) {
    CAPTURE(m.name);
    const ProxLtlPlan plan = plan_prox_ltl(m.model);
    for (double rho : {1e-6, 1e-2}) {
      CAPTURE(rho);
      const State s = random_state(m.model, rng);
      Eigen::MatrixXd K;
      const Eigen::MatrixXd factor = sparse_factor(m.model, plan, s, rho, &K);
      CHECK(factor.triangularView<Eigen::StrictlyLower>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0);  // never written
      Eigen::MatrixXd U, U_dense;
      Eigen::VectorXd D, D_dense;
      unpack(factor, U, D);
      dense_udut(K, U_dense, D_dense);
      CHECK(relative_error(U, U_dense) < 1e-9);
      CHECK(relative_error(D, D_dense) < 1e-10);
      CHECK(relative_error(U * D.asDiagonal() * U.transpose(), K) < 1e-12);
      CHECK(D.tail(m.model.nv).minCoeff() > 0);                 // M's pivots
      if (m.model.constraint_rows > 0) CHECK(D.head(m.model.constraint_rows).maxCoeff() < 0);  // -(G + rho I)'s, whatever J's rank
    }
  }
}

TEST_CASE("the factor's leading block is the damped Delassus matrix: U_mm D_mm U_mm^T = -(J M^-1 J^T + rho I) (§IV-E)") {
  std::mt19937 rng(93);
  for (const NamedModel& m : models_with_constraints()) {
    CAPTURE(m.name);
    const ProxLtlPlan plan = plan_prox_ltl(m.model);
    const int rows = m.model.constraint_rows;
    const double rho = 1e-4;
    const State s = random_state(m.model, rng);
    Eigen::MatrixXd U;
    Eigen::VectorXd D;
    unpack(sparse_factor(m.model, plan, s, rho), U, D);
    const Eigen::MatrixXd U_mm = U.topLeftCorner(rows, rows);
    const Eigen::MatrixXd damped = -U_mm * D.head(rows).asDiagonal() * U_mm.transpose();
    Data<double> data(m.model);
    ConstrainedData<double> cd(m.model);
    Eigen::MatrixXd G = delassus(m.model, data, cd, s.q);
    G.diagonal().array() += rho;
    CHECK(relative_error(damped, G) < 1e-9);
  }
}

TEST_CASE("proxLTL gives the dense proximal solver's qdd, multipliers and iterations on every constrained model") {
  std::mt19937 rng(94);
  for (const NamedModel& m : models_with_constraints()) {
    CAPTURE(m.name);
    ProxLtlAndDense both(m.model);
    const ProxLtlData<double>& pd = both.pd;
    const ConstrainedData<double>& cd = both.cd;
    for (int trial = 0; trial < 4; ++trial) {
      const State s = random_state(m.model, rng);
      both.solve(s);
      CHECK(pd.converged == cd.converged);
      CHECK(std::abs(pd.iterations - cd.iterations) <= 1);  // the same iteration; rounding may move the stop by one
      CHECK(relative_error(both.qdd, both.dense) < 1e-8);
      CHECK(relative_error(pd.lambda, cd.lambda) < 1e-6 * std::max(1.0, cd.lambda.cwiseAbs().maxCoeff()));
      CHECK(std::abs(pd.residual_norm - cd.residual_norm) <= 1e-8 * (1 + cd.residual_norm));
      // The equations of motion hold with these multipliers.
      const Eigen::MatrixXd M = crba(m.model, both.dense_data, s.q);
      const Eigen::VectorXd b = nonlinear_effects(m.model, both.dense_data, s.q, s.v);
      CHECK(relative_error(M * both.qdd + b, s.tau + pd.constraints.J.transpose() * pd.lambda) < 1e-8);
    }
  }
}

TEST_CASE("proxLTL meets consistent rows: J qdd + drift = k at states on the loops, to the tolerance") {
  std::mt19937 rng(95);
  for (const NamedModel& m : models_with_constraints()) {
    // Well-conditioned rows; near-singular ones (two_hands_cube, Cassie) converge as slowly as the dense
    // solver does (the equality above), which the conjugate residual corrections of LCABA and proxBBO address.
    if (m.name != "scene hand_cube" && m.name != "humanoid+feet+hands" && m.name != "quadruped+feet") continue;
    CAPTURE(m.name);
    const ProxLtlPlan plan = plan_prox_ltl(m.model);
    Data<double> data(m.model);
    ProxLtlData<double> pd(m.model);
    for (int trial = 0; trial < 3; ++trial) {
      const State s = state_on_loops(m.model, rng);
      prox_ltl(m.model, plan, data, pd, s.q, s.v, s.tau);
      CHECK(pd.converged);
      const ConstraintData<double>& c = pd.constraints;
      CHECK(relative_error(c.J * pd.qdd + c.drift, c.k) < 1e-9);
    }
  }
}

TEST_CASE("proxLTL on inconsistent rows ends at the dense solver's least-squares qdd") {
  // Three branches of two links welded tip to tip: at a random q the rows' right-hand side is
  // outside range(J) (tests/test_constrained.cpp proves the dense solver's answer is the least-squares one).
  const Model model = build_generated(generate_branching_node(3, 2));
  std::mt19937 rng(96);
  ProxLtlAndDense both(model);
  for (int trial = 0; trial < 4; ++trial) {
    both.solve(random_state(model, rng));
    CHECK(both.pd.converged);
    CHECK(both.pd.residual_norm > 1e-3);  // really inconsistent
    CHECK(relative_error(both.qdd, both.dense) < 1e-6);
  }
}

TEST_CASE("without constraints proxLTL is the tree's forward dynamics: one solve with the sparse LDL^T of M") {
  std::mt19937 rng(97);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    const ProxLtlPlan plan = plan_prox_ltl(m.model);
    Data<double> data(m.model), aba_data(m.model);
    ProxLtlData<double> pd(m.model);
    const State s = random_state(m.model, rng);
    const Eigen::VectorXd qdd = prox_ltl(m.model, plan, data, pd, s.q, s.v, s.tau);
    CHECK(pd.iterations == 0);
    CHECK(pd.converged);
    CHECK(relative_error(qdd, aba(m.model, aba_data, s.q, s.v, s.tau)) < 1e-10);
  }
}

TEST_CASE("proxLTL in float agrees with double to float accuracy at a float-sized penalty") {
  std::mt19937 rng(98);
  for (const NamedModel& m : constrained_models()) {
    if (m.name.rfind("gen:", 0) == 0) continue;  // the generated inconsistent mechanisms stall at rounding-dependent points
    CAPTURE(m.name);
    const ProxLtlPlan plan = plan_prox_ltl(m.model);
    ProximalSettings settings;
    settings.mu = 1e3;
    settings.tolerance = 1e-6;
    const State s = state_on_loops(m.model, rng);
    Data<double> data(m.model);
    ProxLtlData<double> pd(m.model);
    const Eigen::VectorXd reference = prox_ltl(m.model, plan, data, pd, s.q, s.v, s.tau, settings);
    Data<float> data_f(m.model);
    ProxLtlData<float> pd_f(m.model);
    const Eigen::VectorXf qdd =
        prox_ltl<float>(m.model, plan, data_f, pd_f, s.q.cast<float>(), s.v.cast<float>(), s.tau.cast<float>(), settings);
    CHECK(pd_f.converged);
    CHECK(relative_error(qdd.cast<double>(), reference) < 1e-3);
  }
}

TEST_CASE("proxLTL refuses a plan or workspace of another model, naming itself") {
  Model four_bar = load_urdf_file(model_path("four_bar.urdf"));
  Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(quadruped, model_path("quadruped_feet.json"));
  const ProxLtlPlan wrong = plan_prox_ltl(four_bar);
  Data<double> data(quadruped);
  ProxLtlData<double> pd(quadruped);
  std::mt19937 rng(99);
  const State s = random_state(quadruped, rng);
  CHECK_ERROR_MENTIONS(prox_ltl(quadruped, wrong, data, pd, s.q, s.v, s.tau), "prox_ltl", "another model");
  ProximalSettings bad;
  bad.mu = -1;
  CHECK_ERROR_MENTIONS(prox_ltl(quadruped, plan_prox_ltl(quadruped), data, pd, s.q, s.v, s.tau, bad), "prox_ltl", "mu");
}
