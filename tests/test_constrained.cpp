// Dense constrained dynamics and the Delassus matrix: the oracle every LCABA / proxBBO /
// PV-OSIMr kernel will be checked against, itself checked against independent computations.
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
// Independent oracle: minimise (qdd - qdd_free)^T M (qdd - qdd_free) subject to J qdd = rhs by a
// null-space parametrisation from the SVD of J (no multipliers, no proximal iterations).
Eigen::VectorXd null_space_solution(const Eigen::MatrixXd& M, const Eigen::VectorXd& tau_minus_b,
                                    const Eigen::MatrixXd& J, const Eigen::VectorXd& rhs) {
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeFullU | Eigen::ComputeFullV);
  svd.setThreshold(1e-10);
  const Eigen::Index rank = svd.rank();
  const Eigen::VectorXd particular = svd.solve(rhs);
  const Eigen::MatrixXd N = svd.matrixV().rightCols(J.cols() - rank);
  if (N.cols() == 0) return particular;
  const Eigen::VectorXd z = (N.transpose() * M * N).llt().solve(N.transpose() * (tau_minus_b - M * particular));
  return particular + N * z;
}
}  // namespace

TEST_CASE("constrained solution satisfies M qdd + b = tau + J^T lambda and J qdd + drift = k") {
  std::mt19937 rng(30);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    ConstrainedData<double> cd(m.model);
    for (int trial = 0; trial < 5; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::VectorXd qdd = constrained_forward_dynamics(m.model, data, cd, s.q, s.v, s.tau);
      CHECK(cd.converged);
      const Eigen::MatrixXd M = crba(m.model, data, s.q);
      const Eigen::VectorXd b = nonlinear_effects(m.model, data, s.q, s.v);
      const ConstraintData<double>& c = cd.constraints;
      CHECK(relative_error(M * qdd + b, s.tau + c.J.transpose() * cd.lambda) < 1e-8);
      CHECK(relative_error(c.J * qdd + c.drift, c.k) < 1e-9);
    }
  }
}

TEST_CASE("constrained qdd equals the null-space oracle, including redundant and singular rows") {
  std::mt19937 rng(31);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    ConstrainedData<double> cd(m.model);
    for (int trial = 0; trial < 5; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::VectorXd qdd = constrained_forward_dynamics(m.model, data, cd, s.q, s.v, s.tau);
      const Eigen::MatrixXd M = crba(m.model, data, s.q);
      const Eigen::VectorXd b = nonlinear_effects(m.model, data, s.q, s.v);
      const ConstraintData<double>& c = cd.constraints;
      CHECK(relative_error(qdd, null_space_solution(M, s.tau - b, c.J, c.k - c.drift)) < 1e-8);
    }
  }
}

TEST_CASE("a duplicated weld converges to the same qdd, with the force split evenly (least squares)") {
  Model single = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(single, model_path("humanoid_feet.json"));
  Model doubled = single;
  ConstraintSpec again = doubled.constraints[0].spec;
  again.name = "left_foot_contact_again";
  add_constraint(doubled, again);
  REQUIRE(doubled.constraint_rows == single.constraint_rows + 6);

  std::mt19937 rng(32);
  Data<double> d1(single), d2(doubled);
  ConstrainedData<double> c1(single), c2(doubled);
  for (int trial = 0; trial < 5; ++trial) {
    const State s = random_state(single, rng);
    const Eigen::VectorXd a = constrained_forward_dynamics(single, d1, c1, s.q, s.v, s.tau);
    const Eigen::VectorXd b = constrained_forward_dynamics(doubled, d2, c2, s.q, s.v, s.tau);
    CHECK(c2.converged);
    CHECK(relative_error(b, a) < 1e-9);
    // Minimum-norm multipliers: the duplicated rows carry half of the original force each.
    // (lambda is less well determined than qdd: rounding along null(G) grows like eps / rho per
    // iteration.)
    CHECK(relative_error(c2.lambda.segment(0, 6), 0.5 * c1.lambda.segment(0, 6)) < 1e-5);
    CHECK(relative_error(c2.lambda.tail(6), 0.5 * c1.lambda.segment(0, 6)) < 1e-5);
  }
}

TEST_CASE("inconsistent rows (over-constrained loops off their manifold) give the least-squares solution") {
  // Three branches of two links welded tip to tip: 7 dof, 12 rows; at a random q the rows'
  // right-hand side is not in range(J).
  const Model model = build_generated(generate_branching_node(3, 2));
  std::mt19937 rng(36);
  Data<double> data(model);
  ConstrainedData<double> cd(model);
  for (int trial = 0; trial < 5; ++trial) {
    const State s = random_state(model, rng);
    const Eigen::VectorXd qdd = constrained_forward_dynamics(model, data, cd, s.q, s.v, s.tau);
    CHECK(cd.converged);
    const Eigen::MatrixXd M = crba(model, data, s.q);
    const Eigen::VectorXd b = nonlinear_effects(model, data, s.q, s.v);
    const ConstraintData<double>& c = cd.constraints;
    const Eigen::VectorXd rhs = c.k - c.drift;
    const Eigen::VectorXd oracle = null_space_solution(M, s.tau - b, c.J, rhs);
    CHECK(cd.residual_norm > 1e-3);  // really inconsistent
    CHECK(relative_error(qdd, oracle) < 1e-6);
    // The residual is orthogonal to range(J): nothing more can be met.
    CHECK((c.J.transpose() * (c.J * qdd - rhs)).norm() < 1e-6 * (1 + c.J.norm() * qdd.norm() + rhs.norm()));
  }
}

TEST_CASE("the proximal solution does not depend on mu over a wide range") {
  const NamedModel m{"biped", [] {
                       Model b = load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer);
                       add_constraints_from_json_file(b, model_path("biped_fourbar_feet.json"));
                       return b;
                     }()};
  std::mt19937 rng(33);
  Data<double> data(m.model);
  ConstrainedData<double> cd(m.model);
  const State s = random_state(m.model, rng);
  const Eigen::VectorXd reference = constrained_forward_dynamics(m.model, data, cd, s.q, s.v, s.tau);
  for (double mu : {1e3, 1e5, 1e7, 1e10}) {
    CAPTURE(mu);
    ProximalSettings settings;
    settings.mu = mu;
    settings.max_iterations = 500;
    const Eigen::VectorXd qdd = constrained_forward_dynamics(m.model, data, cd, s.q, s.v, s.tau, settings);
    CHECK(cd.converged);
    CHECK(relative_error(qdd, reference) < 1e-7);
  }
}

TEST_CASE("Baumgarte gains enter k = -kp e - kd J v and the solution meets them") {
  Model model = load_urdf_file(model_path("four_bar.urdf"));
  model.constraints[0].kp = 100.0;
  model.constraints[0].kd = 20.0;
  std::mt19937 rng(34);
  Data<double> data(model);
  ConstrainedData<double> cd(model);
  const State s = random_state(model, rng);  // random q violates the closure
  const Eigen::VectorXd qdd = constrained_forward_dynamics(model, data, cd, s.q, s.v, s.tau);
  const ConstraintData<double>& c = cd.constraints;
  CHECK(c.position_error.norm() > 1e-3);
  CHECK(relative_error(c.k, -100.0 * c.position_error - 20.0 * c.J * s.v) < 1e-14);
  // Rows that are not redundant are met exactly; with a violated planar loop the
  // out-of-plane rows stay consistent, so the whole system is met.
  CHECK(relative_error(c.J * qdd + c.drift, c.k) < 1e-8);
}

TEST_CASE("Delassus matrix equals J M^{-1} J^T with M^{-1} columns from ABA, and is symmetric PSD") {
  std::mt19937 rng(35);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    ConstrainedData<double> cd(m.model);
    const Model free_fall = without_gravity(m.model);
    Data<double> aba_data(free_fall);
    const State s = random_state(m.model, rng);
    const Eigen::MatrixXd G = delassus(m.model, data, cd, s.q);
    const Eigen::MatrixXd J = cd.constraints.J;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m.model.nv);
    Eigen::MatrixXd Minv_Jt(m.model.nv, J.rows());
    for (int k = 0; k < J.rows(); ++k) Minv_Jt.col(k) = aba(free_fall, aba_data, s.q, zero, J.row(k).transpose().eval());
    CHECK(relative_error(G, J * Minv_Jt) < 1e-9);
    CHECK(relative_error(G, G.transpose()) < 1e-12);
    CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G).eigenvalues().minCoeff() > -1e-9 * G.norm());
  }
}

TEST_CASE("a constrained rollout with Baumgarte stabilisation keeps the loop closed") {
  Model model = load_urdf_file(model_path("biped_fourbar.urdf"));  // fixed pelvis, two knee loops
  for (Constraint& c : model.constraints) c.kp = 400.0, c.kd = 40.0;
  Data<double> data(model);
  ConstrainedData<double> cd(model);
  Eigen::VectorXd q = neutral_configuration<double>(model), v = Eigen::VectorXd::Zero(model.nv), next(model.nq);
  const Eigen::VectorXd tau = Eigen::VectorXd::Constant(model.nv, 0.5);
  const double dt = 1e-3;
  double worst = 0;
  for (int step = 0; step < 2000; ++step) {
    const Eigen::VectorXd qdd = constrained_forward_dynamics(model, data, cd, q, v, tau);
    v += dt * qdd;
    integrate<double>(model, q, (dt * v).eval(), next);
    q = next;
    worst = std::max(worst, cd.constraints.position_error.cwiseAbs().maxCoeff());
  }
  // Semi-implicit Euler leaves O(dt^2) position error per step, which the gains (natural
  // frequency 20 rad/s) pull back within ~50 steps: a bounded error of order 1e-3 m.
  CHECK(worst < 2e-3);
  CHECK(v.allFinite());
}
