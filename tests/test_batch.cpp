// The batch engine: SIMD lanes and threads must not change the physics. Each lane equals the
// scalar kernel on that environment; thread count and N do not change a bit; bad environments
// stay isolated.
#include "batch/batch.hpp"
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
// Fills the batch's buffers with random states.
template <class Engine>
void randomise(Engine& batch, std::mt19937& rng) {
  using T = typename Engine::T;
  const Model& model = batch.model();
  for (int e = 0; e < batch.num_envs(); ++e) {
    const State s = random_state(model, rng);
    for (int k = 0; k < model.nq; ++k) batch.q()[e * model.nq + k] = static_cast<T>(s.q[k]);
    for (int k = 0; k < model.nv; ++k) {
      batch.v()[e * model.nv + k] = static_cast<T>(s.v[k]);
      batch.tau()[e * model.nv + k] = static_cast<T>(s.tau[k]);
    }
  }
}

template <class EngineA, class EngineB>
void copy_state(const EngineA& from, EngineB& to) {
  const Model& m = from.model();
  std::copy_n(from.q(), from.num_envs() * m.nq, to.q());
  std::copy_n(from.v(), from.num_envs() * m.nv, to.v());
  std::copy_n(const_cast<EngineA&>(from).tau(), from.num_envs() * m.nv, to.tau());
}

Eigen::VectorXd row(const double* data, int e, int width) { return Eigen::Map<const Eigen::VectorXd>(data + e * width, width); }
}  // namespace

TEST_CASE("each SIMD lane of batched double ABA equals the scalar ABA of its environment (1e-12)") {
  std::mt19937 rng(80);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    const int n = 3 * Batch<double>::W + 3;  // not a multiple of W: the last block is padded
    Batch<double> batch(m.model, n, 1);
    randomise(batch, rng);
    batch.forward_dynamics();
    CHECK(batch.failed_count() == 0);
    Data<double> data(m.model);
    for (int e = 0; e < n; ++e) {
      const Eigen::VectorXd q = row(batch.q(), e, m.model.nq);
      const Eigen::VectorXd expected = aba(m.model, data, q, row(batch.v(), e, m.model.nv), row(batch.tau(), e, m.model.nv));
      CHECK(relative_error(row(batch.qdd(), e, m.model.nv), expected) <= 1e-12);
    }
  }
}

TEST_CASE("batched float ABA equals the W = 1 float kernel to 1e-5 and the double reference to float accuracy") {
  std::mt19937 rng(81);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    const int n = 2 * Batch<float>::W + 1;
    Batch<float> batch(m.model, n, 1);
    ScalarBatch<float> scalar(m.model, n, 1);
    randomise(batch, rng);
    copy_state(batch, scalar);
    batch.forward_dynamics();
    scalar.forward_dynamics();
    Data<double> data(m.model);
    for (int e = 0; e < n; ++e) {
      const Eigen::VectorXf lanes = Eigen::Map<const Eigen::VectorXf>(batch.qdd() + e * m.model.nv, m.model.nv);
      const Eigen::VectorXf single = Eigen::Map<const Eigen::VectorXf>(scalar.qdd() + e * m.model.nv, m.model.nv);
      CHECK(relative_error(lanes.cast<double>(), single.cast<double>()) <= 1e-5);
      const Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXf>(batch.q() + e * m.model.nq, m.model.nq).cast<double>();
      const Eigen::VectorXd v = Eigen::Map<const Eigen::VectorXf>(batch.v() + e * m.model.nv, m.model.nv).cast<double>();
      const Eigen::VectorXd tau = Eigen::Map<const Eigen::VectorXf>(batch.tau() + e * m.model.nv, m.model.nv).cast<double>();
      CHECK(relative_error(lanes.cast<double>(), aba(m.model, data, q, v, tau)) <= 1e-3);
    }
  }
}

TEST_CASE("results are bitwise identical for 1 and 2 threads and for any N") {
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(82);
  const int n = 101;
  Batch<double> one(model, n, 1), two(model, n, 2);
  randomise(one, rng);
  copy_state(one, two);
  one.step(1e-3);
  two.step(1e-3);
  CHECK(std::equal(one.qdd(), one.qdd() + n * model.nv, two.qdd()));
  CHECK(std::equal(one.q(), one.q() + n * model.nq, two.q()));
  // The first 7 environments alone give the same bits as inside the batch of 101.
  Batch<double> few(model, 7, 2);
  std::mt19937 rng2(82);
  randomise(few, rng2);
  few.step(1e-3);
  CHECK(std::equal(few.qdd(), few.qdd() + 7 * model.nv, one.qdd()));
}

TEST_CASE("matrix views address the same env-major buffers") {
  const Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  Batch<double> batch(model, 3);
  batch.q_matrix().row(1) << 0.5, -0.25;
  batch.tau_matrix()(2, 0) = 1.0;
  CHECK(batch.q()[1 * model.nq + 1] == -0.25);
  CHECK(batch.tau()[2 * model.nv] == 1.0);
  batch.forward_dynamics();
  CHECK(batch.qdd_matrix().rows() == 3);
  CHECK(batch.qdd_matrix()(1, 0) == batch.qdd()[1 * model.nv]);
}

TEST_CASE("a single environment (N = 1) runs in a padded block") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Batch<double> batch(model, 1);
  batch.forward_dynamics();
  Data<double> data(model);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  CHECK(relative_error(row(batch.qdd(), 0, model.nv), aba(model, data, neutral_configuration<double>(model), zero, zero)) <= 1e-12);
}

TEST_CASE("a NaN or a bad quaternion in one environment is reported for it alone") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(83);
  const int n = 13;
  Batch<double> clean(model, n, 2), dirty(model, n, 2);
  randomise(clean, rng);
  copy_state(clean, dirty);
  dirty.v()[3 * model.nv + 5] = std::nan("");
  dirty.q()[4 * model.nq + 3] = 0.0;  // quaternion (0, y, z, w) no longer unit
  dirty.q()[4 * model.nq + 4] = 0.0;
  dirty.q()[4 * model.nq + 5] = 0.0;
  dirty.q()[4 * model.nq + 6] = 0.3;
  clean.forward_dynamics();
  dirty.forward_dynamics();
  CHECK(dirty.status()[3] == EnvStatus::NonFiniteState);
  CHECK(dirty.status()[4] == EnvStatus::InvalidQuaternion);
  CHECK(dirty.failed_count() == 2);
  CHECK(dirty.status_message(4).find("quaternion") != std::string::npos);
  CHECK(std::isnan(dirty.qdd()[3 * model.nv]));
  for (int e : {0, 1, 2, 5, 6, 7, 12}) {
    CAPTURE(e);
    CHECK(std::equal(dirty.qdd() + e * model.nv, dirty.qdd() + (e + 1) * model.nv, clean.qdd() + e * model.nv));
  }
  // Stepping leaves the bad environments' states as they were.
  const std::vector<double> q4(dirty.q() + 4 * model.nq, dirty.q() + 5 * model.nq);
  dirty.step(1e-3);
  CHECK(std::equal(q4.begin(), q4.end(), dirty.q() + 4 * model.nq));
}

TEST_CASE("reset touches only the listed environments") {
  const Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  std::mt19937 rng(84);
  Batch<double> batch(model, 10);
  randomise(batch, rng);
  const std::vector<double> before(batch.q(), batch.q() + 10 * model.nq);
  const std::vector<int> envs{2, 7};
  batch.reset(envs);
  for (int e = 0; e < 10; ++e) {
    const bool reset = e == 2 || e == 7;
    CHECK((batch.q()[e * 2] == (reset ? 0.0 : before[e * 2])));
    CHECK((batch.v()[e * 2 + 1] == 0.0) == (reset || batch.v()[e * 2 + 1] == 0.0));
  }
  const std::vector<double> q_rows{0.1, 0.2, 0.3, 0.4}, v_rows{1, 2, 3, 4};
  batch.reset(envs, q_rows, v_rows);
  CHECK(batch.q()[7 * 2 + 1] == 0.4);
  CHECK(batch.v()[2 * 2] == 1.0);
  CHECK(batch.q()[3 * 2] == before[3 * 2]);
}

TEST_CASE("buffer-size mismatches and bad indices are errors naming the buffer") {
  const Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  Batch<double> batch(model, 4);
  std::vector<double> q(8), v(8), tau(8), qdd(7);
  try {
    batch.use_buffers(q, v, tau, qdd);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'qdd' has 7 values, expected N x nv = 4 x 2 = 8") != std::string::npos);
  }
  qdd.resize(8);
  batch.use_buffers(q, v, tau, qdd);
  q[1] = 0.5;
  batch.forward_dynamics();
  CHECK(qdd[0] != 0.0);  // results land in the caller's array
  const std::vector<int> bad{4};
  CHECK_THROWS_AS(batch.reset(bad), Error);
  const std::vector<int> one{0};
  const std::vector<double> short_q{0.0};
  CHECK_THROWS_AS(batch.reset(one, short_q, std::vector<double>{0, 0}), Error);
  CHECK_THROWS_AS(Batch<double>(model, 0), Error);
}

namespace {
// Total energy of a fixed-base model: kinetic + gravitational potential.
double energy(const Model& model, Data<double>& data, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const double kinetic = 0.5 * v.dot(crba(model, data, q) * v);
  forward_kinematics(model, data, q);
  double potential = 0;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Vec3d c = data.world_from_body[i].act_point(model.bodies[i].inertia.com);
    potential -= model.bodies[i].inertia.mass * dot(model.gravity, c);
  }
  return kinetic + potential;
}

double energy_drift(double dt, int steps) {
  const Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  Batch<double> batch(model, 1);
  batch.q()[0] = 1.0;
  batch.q()[1] = -0.5;
  Data<double> data(model);
  const double e0 = energy(model, data, row(batch.q(), 0, 2), row(batch.v(), 0, 2));
  double worst = 0;
  for (int k = 0; k < steps; ++k) {
    batch.step(dt);
    worst = std::max(worst, std::abs(energy(model, data, row(batch.q(), 0, 2), row(batch.v(), 0, 2)) - e0));
  }
  return worst / std::abs(e0);
}
}  // namespace

TEST_CASE("step() conserves a pendulum's energy to first order in dt (semi-implicit Euler)") {
  const double coarse = energy_drift(2e-3, 2000), fine = energy_drift(1e-3, 4000);  // same 4 s
  CHECK(coarse < 2e-2);
  CHECK(fine < 1e-2);
  CHECK(coarse / fine == doctest::Approx(2.0).epsilon(0.25));  // error halves with dt
}

TEST_CASE("step() keeps free-flyer quaternions unit-norm over 10^4 steps") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(85);
  Batch<double> batch(model, 5);
  Batch<float> fbatch(model, 5);
  randomise(batch, rng);
  for (int k = 0; k < 5 * model.nv; ++k) batch.tau()[k] *= 0.1;
  for (int e = 0; e < 5; ++e) batch.v()[e * model.nv + 4] = 3.0;  // a fast spin
  for (int k = 0; k < 5 * model.nq; ++k) fbatch.q()[k] = static_cast<float>(batch.q()[k]);
  for (int k = 0; k < 5 * model.nv; ++k) fbatch.v()[k] = static_cast<float>(batch.v()[k]), fbatch.tau()[k] = static_cast<float>(batch.tau()[k]);
  for (int k = 0; k < 10000; ++k) {
    batch.step(1e-4);
    fbatch.step(1e-4f);
  }
  CHECK(batch.failed_count() == 0);
  CHECK(fbatch.failed_count() == 0);
  for (int e = 0; e < 5; ++e) {
    CHECK(std::abs(Eigen::Map<const Eigen::Vector4d>(batch.q() + e * model.nq + 3).norm() - 1.0) < 1e-14);
    CHECK(std::abs(Eigen::Map<const Eigen::Vector4f>(fbatch.q() + e * model.nq + 3).norm() - 1.0f) < 1e-6f);
  }
}

TEST_CASE("lane-generic integrate equals the manifold integrate of the reference") {
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
