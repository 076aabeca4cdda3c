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

namespace {
// Closed form of a constant body twist (v, w e_z) applied for time t from the identity: a
// helix about the body z axis. R = Rz(w t); p = [ (sin(wt) vx - (1 - cos(wt)) vy) / w,
// ((1 - cos(wt)) vx + sin(wt) vy) / w, vz t ]. Written out by hand, independent of exp6.
Transformd helix(double vx, double vy, double vz, double w, double t) {
  const double c = std::cos(w * t), s = std::sin(w * t);
  Mat3d R = Mat3d::identity();
  R(0, 0) = c, R(0, 1) = -s, R(1, 0) = s, R(1, 1) = c;
  return {R, {(s * vx - (1 - c) * vy) / w, ((1 - c) * vx + s * vy) / w, vz * t}};
}
}  // namespace

TEST_CASE("integrating a free-flyer along a constant body twist follows the helix of its closed form") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(41);
  const Eigen::VectorXd q0 = random_configuration<double>(model, rng);
  const Transformd M0{quaternion_rotation(q0[3], q0[4], q0[5], q0[6]), {q0[0], q0[1], q0[2]}};
  const double vx = 0.4, vy = -0.7, vz = 0.25, w = 1.3;
  Eigen::VectorXd twist = Eigen::VectorXd::Zero(model.nv);
  twist.head<6>() << vx, vy, vz, 0, 0, w;
  for (double t : {1e-6, 0.01, 0.5, 2.0, 7.0}) {
    CAPTURE(t);
    Eigen::VectorXd q(model.nq);
    integrate<double>(model, q0, (t * twist).eval(), q);  // one step of length t
    const Transformd expected = M0 * helix(vx, vy, vz, w, t);
    const Transformd got{quaternion_rotation(q[3], q[4], q[5], q[6]), {q[0], q[1], q[2]}};
    CHECK(relative_error(to_matrix(got), to_matrix(expected)) < 1e-12);
  }
  // 7000 steps of 1 ms compose to the same helix (exp of a constant twist is a one-parameter group).
  Eigen::VectorXd q = q0, next(model.nq);
  for (int step = 0; step < 7000; ++step) {
    integrate<double>(model, q, (1e-3 * twist).eval(), next);
    q = next;
  }
  const Transformd got{quaternion_rotation(q[3], q[4], q[5], q[6]), {q[0], q[1], q[2]}};
  CHECK(relative_error(to_matrix(got), to_matrix(M0 * helix(vx, vy, vz, w, 7.0))) < 1e-10);
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

TEST_CASE("random configurations respect joint limits, neutral is zero with identity orientation") {
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

TEST_CASE("integrate moves a free-flyer base by M(q) exp6(dv) and adds joint displacements") {
  std::mt19937 rng(86);
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  for (double scale : {0.0, 1e-7, 1e-3, 0.5, 3.0}) {
    CAPTURE(scale);
    const State s = random_state(model, rng);
    const Eigen::VectorXd dv = s.v * scale;
    Eigen::VectorXd out(model.nq);
    integrate<double>(model, s.q, dv, out);
    // Oracle: the base placement M(q) exp6(dv_base) from layout/lie_group.hpp; joints add.
    const Transformd M0{quaternion_rotation(s.q[3], s.q[4], s.q[5], s.q[6]), {s.q[0], s.q[1], s.q[2]}};
    const Transformd expected = M0 * exp6(Motion<double>{{dv[0], dv[1], dv[2]}, {dv[3], dv[4], dv[5]}});
    const Transformd got{quaternion_rotation(out[3], out[4], out[5], out[6]), {out[0], out[1], out[2]}};
    CHECK(relative_error(to_matrix(got), to_matrix(expected)) < 1e-12);
    CHECK(relative_error(out.tail(model.nq - 7), s.q.tail(model.nq - 7) + dv.tail(model.nv - 6)) < 1e-15);
  }
}
