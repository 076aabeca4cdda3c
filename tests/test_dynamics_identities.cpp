// Unconstrained dynamics on every shipped model at random states, against the dense oracle:
// CRBA's M(q) and RNEA's b(q, v) define the joint-space equation M qdd + b = tau.
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

TEST_CASE("M(q) is symmetric positive definite on every shipped model") {
  std::mt19937 rng(10);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    for (int trial = 0; trial < 5; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::MatrixXd M = crba(m.model, data, s.q);
      CHECK(relative_error(M, M.transpose()) == 0.0);
      CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M).eigenvalues().minCoeff() > 0.0);
    }
  }
}

TEST_CASE("RNEA(q, v, ABA(q, v, tau)) = tau to 1e-10 on every shipped model") {
  std::mt19937 rng(11);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    for (int trial = 0; trial < 20; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::VectorXd qdd = aba(m.model, data, s.q, s.v, s.tau);
      const Eigen::VectorXd tau = rnea(m.model, data, s.q, s.v, qdd);
      CHECK(relative_error(tau, s.tau) < 1e-10);
    }
  }
}

TEST_CASE("ABA equals the dense solve M^{-1}(tau - b) of CRBA and RNEA") {
  std::mt19937 rng(12);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    for (int trial = 0; trial < 10; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::MatrixXd M = crba(m.model, data, s.q);
      const Eigen::VectorXd b = nonlinear_effects(m.model, data, s.q, s.v);
      const Eigen::VectorXd dense = M.llt().solve(s.tau - b);
      CHECK(relative_error(aba(m.model, data, s.q, s.v, s.tau), dense) < 1e-9);
    }
  }
}

TEST_CASE("CRBA columns equal RNEA differences: M e_k = rnea(q, 0, e_k) - rnea(q, 0, 0)") {
  std::mt19937 rng(13);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    const State s = random_state(m.model, rng);
    const Eigen::MatrixXd M = crba(m.model, data, s.q);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m.model.nv);
    const Eigen::VectorXd gravity = rnea(m.model, data, s.q, zero, zero);
    for (int k = 0; k < m.model.nv; ++k) {
      const Eigen::VectorXd column = rnea(m.model, data, s.q, zero, Eigen::VectorXd::Unit(m.model.nv, k).eval()) - gravity;
      CHECK(relative_error(column, M.col(k)) < 1e-12);
    }
  }
}

TEST_CASE("power balance: d/dt (v^T M v / 2) = v^T (tau - g(q)) along the ABA motion") {
  // Independent of how Coriolis terms are arranged: checks b(q, v) - g(q) does no work.
  std::mt19937 rng(14);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    const State s = random_state(m.model, rng);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m.model.nv);
    const Eigen::VectorXd qdd = aba(m.model, data, s.q, s.v, s.tau);
    const Eigen::VectorXd g = rnea(m.model, data, s.q, zero, zero);
    auto kinetic = [&](double t) {
      Eigen::VectorXd q(m.model.nq);
      integrate<double>(m.model, s.q, (s.v * t + 0.5 * qdd * t * t).eval(), q);
      const Eigen::VectorXd v = s.v + qdd * t;
      return 0.5 * v.dot(crba(m.model, data, q) * v);
    };
    // Fourth-order central stencil with a step scaled to the motion's time scale: random
    // torques on 30 g finger links give accelerations of 1e6 rad/s^2 and more.
    const double h = 1e-3 / std::sqrt(1.0 + qdd.cwiseAbs().maxCoeff());
    const double numeric = (kinetic(-2 * h) - 8 * kinetic(-h) + 8 * kinetic(h) - kinetic(2 * h)) / (12 * h);
    const double expected = s.v.dot(s.tau - g);
    CHECK(numeric == doctest::Approx(expected).epsilon(1e-6).scale(1.0));
  }
}

TEST_CASE("float instantiation of ABA agrees with double to float precision") {
  std::mt19937 rng(15);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    Data<float> fdata(m.model);
    const State s = random_state(m.model, rng);
    const Eigen::VectorXd qdd = aba(m.model, data, s.q, s.v, s.tau);
    const Eigen::VectorXf qddf =
        aba(m.model, fdata, s.q.cast<float>().eval(), s.v.cast<float>().eval(), s.tau.cast<float>().eval());
    CHECK(relative_error(qddf.cast<double>(), qdd) < 1e-3);
  }
}
