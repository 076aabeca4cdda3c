// Configuration-space helpers on the manifold (free-flyer quaternion + angles).
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

TEST_CASE("difference(q0, integrate(q0, v)) = v and integrate(q0, difference(q0, q1)) = q1") {
  std::mt19937 rng(40);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    for (int trial = 0; trial < 10; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::VectorXd q1 = random_configuration<double>(m.model, rng);
      Eigen::VectorXd moved(m.model.nq), dv(m.model.nv), back(m.model.nq);
      integrate<double>(m.model, s.q, s.v * 0.3, moved);
      difference<double>(m.model, s.q, moved, dv);
      CHECK(relative_error(dv, s.v * 0.3) < 1e-10);
      difference<double>(m.model, s.q, q1, dv);
      integrate<double>(m.model, s.q, dv, back);
      // Quaternions q and -q are the same rotation: compare placements via difference.
      difference<double>(m.model, q1, back, dv);
      CHECK(dv.cwiseAbs().maxCoeff() < 1e-10);
    }
  }
}

TEST_CASE("integrating a free-flyer follows the body twist: pure spin keeps the position, quaternion stays unit") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Eigen::VectorXd q = neutral_configuration<double>(model), next(model.nq);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv);
  v.segment<3>(3) << 0.3, -1.1, 2.0;
  for (int step = 0; step < 10000; ++step) {
    integrate<double>(model, q, (1e-3 * v).eval(), next);
    q = next;
  }
  CHECK(q.head<3>().norm() < 1e-12);
  CHECK(q.segment<4>(3).norm() == doctest::Approx(1.0).epsilon(1e-14));
  // Constant body spin for 10 s: rotation = exp(10 w).
  const Mat3d R = quaternion_rotation(q[3], q[4], q[5], q[6]);
  const Mat3d expected = exp3(Vec3d{3.0, -11.0, 20.0});
  CHECK(relative_error(to_matrix({R, Vec3d::zero()}), to_matrix({expected, Vec3d::zero()})) < 1e-9);
}

TEST_CASE("normalize makes free-flyer quaternions unit and leaves joint angles alone") {
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(41);
  Eigen::VectorXd q = random_configuration<double>(model, rng);
  const Eigen::VectorXd before = q;
  q.segment<4>(3) *= 3.0;
  normalize<double>(model, q);
  CHECK(relative_error(q, before) < 1e-15);
}

TEST_CASE("random configurations respect joint limits; neutral is zero with identity orientation") {
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(42);
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::VectorXd q = random_configuration<double>(model, rng);
    for (int k = 7; k < model.nq; ++k) {
      CHECK(q[k] >= model.lower_position_limit[k]);
      CHECK(q[k] <= model.upper_position_limit[k]);
    }
    CHECK(q.segment<4>(3).norm() == doctest::Approx(1.0));
  }
  const Eigen::VectorXd q0 = neutral_configuration<double>(model);
  CHECK(q0[6] == 1.0);
  CHECK(q0.sum() == 1.0);
}
