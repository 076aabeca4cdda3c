// The batch engine: SIMD lanes and threads must not change the physics. Each lane equals the
// scalar kernel on that environment; thread count and N do not change a bit; bad environments
// stay isolated.
#include "batch/batch.hpp"
#include <cstring>
#include <functional>

#include "batch_helpers.hpp"
#include "kernels/tree/energy.hpp"

using namespace batchdyn;
using namespace batchdyn::test;


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
  // Switching an engine's thread count with set_threads changes no bit either.
  Batch<double> switched(model, n, 1);
  std::mt19937 rng3(82);
  randomise(switched, rng3);
  switched.set_threads(2);
  switched.step(1e-3);
  CHECK(std::equal(switched.q(), switched.q() + n * model.nq, one.q()));
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

namespace {
// Snapshot of every buffer of a batch (to prove what a call did not touch).
struct Snapshot {
  std::vector<double> q, v, tau, qdd;
  std::vector<EnvStatus> status;
  explicit Snapshot(Batch<double>& b)
      : q(b.q(), b.q() + b.num_envs() * b.model().nq), v(b.v(), b.v() + b.num_envs() * b.model().nv),
        tau(b.tau(), b.tau() + b.num_envs() * b.model().nv), qdd(b.qdd(), b.qdd() + b.num_envs() * b.model().nv),
        status(b.status()) {}
  // Environment e's rows are bitwise equal in both snapshots.
  bool same_env(const Snapshot& o, int e, const Model& m) const {
    auto rows_equal = [&](const std::vector<double>& a, const std::vector<double>& b, int width) {
      return std::equal(a.begin() + e * width, a.begin() + (e + 1) * width, b.begin() + e * width,
                        [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; });
    };
    return rows_equal(q, o.q, m.nq) && rows_equal(v, o.v, m.nv) && rows_equal(tau, o.tau, m.nv) &&
           rows_equal(qdd, o.qdd, m.nv) && status[static_cast<size_t>(e)] == o.status[static_cast<size_t>(e)];
  }
};
}  // namespace

TEST_CASE("NaN or infinity in q, v or tau of one environment is reported for it alone, the others are unchanged") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  struct Poison { const char* buffer; int index; double value; };
  for (const Poison& p : {Poison{"q", 9, nan}, Poison{"q", 0, inf}, Poison{"v", 5, nan}, Poison{"v", 2, -inf},
                          Poison{"tau", 7, nan}, Poison{"tau", 11, inf}}) {
    CAPTURE(p.buffer);
    CAPTURE(p.value);
    std::mt19937 rng(83);
    const int n = 13, bad = 3;
    Batch<double> clean(model, n, 2), dirty(model, n, 2);
    randomise(clean, rng);
    copy_state(clean, dirty);
    double* target = std::string(p.buffer) == "q" ? dirty.q() + bad * model.nq
                     : std::string(p.buffer) == "v" ? dirty.v() + bad * model.nv : dirty.tau() + bad * model.nv;
    target[p.index] = p.value;
    clean.forward_dynamics();
    dirty.forward_dynamics();
    CHECK(dirty.status()[bad] == EnvStatus::NonFiniteState);
    CHECK(dirty.failed_count() == 1);
    for (int k = 0; k < model.nv; ++k) CHECK(std::isnan(dirty.qdd()[bad * model.nv + k]));
    for (int e = 0; e < n; ++e)
      if (e != bad) CHECK(std::equal(dirty.qdd() + e * model.nv, dirty.qdd() + (e + 1) * model.nv, clean.qdd() + e * model.nv));
  }
}

TEST_CASE("a quaternion that is not of unit norm is reported for its environment alone") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(83);
  const int n = 13;
  Batch<double> clean(model, n, 2), dirty(model, n, 2);
  randomise(clean, rng);
  copy_state(clean, dirty);
  dirty.q()[4 * model.nq + 3] = 0.0;  // quaternion (0, 0, 0, 0.3): not unit
  dirty.q()[4 * model.nq + 4] = 0.0;
  dirty.q()[4 * model.nq + 5] = 0.0;
  dirty.q()[4 * model.nq + 6] = 0.3;
  clean.forward_dynamics();
  dirty.forward_dynamics();
  CHECK(dirty.status()[4] == EnvStatus::InvalidQuaternion);
  CHECK(dirty.failed_count() == 1);
  CHECK(dirty.status_message(4).find("quaternion") != std::string::npos);
  for (int e = 0; e < n; ++e)
    if (e != 4) CHECK(std::equal(dirty.qdd() + e * model.nv, dirty.qdd() + (e + 1) * model.nv, clean.qdd() + e * model.nv));
}

namespace {
// One entry of environment `bad` poisoned in a PD-controlled batch of T: the status message the
// engine gives (its gather checks W environments at once) equals the per-environment check's
// (find_state_fault) on the same rows, and every other environment's qdd is unchanged.
template <class T, class Poison>
void check_block_finds_the_entry(const Model& model, const char* array, int index, Poison poison) {
  const std::string name = array;
  CAPTURE(name);
  CAPTURE(index);
  const int n = 2 * Batch<T>::W + 3, bad = Batch<T>::W + 1, nv = model.nv;
  std::mt19937 rng(91);
  Batch<T> clean(model, n, 1), dirty(model, n, 1);
  randomise(clean, rng);
  std::vector<double> kp(static_cast<size_t>(nv), 0.0), kd(kp);
  for (const SingleDof& d : single_dofs(model)) kp[static_cast<size_t>(d.v)] = 30.0, kd[static_cast<size_t>(d.v)] = 1.0;
  std::normal_distribution<double> normal(0.0, 0.3);
  for (Batch<T>* b : {&clean, &dirty}) {
    b->set_pd_gains(kp, kd);
    b->set_control_mode(ControlMode::PositionPD);
  }
  for (int k = 0; k < n * nv; ++k) clean.target()[k] = static_cast<T>(normal(rng));
  copy_state(clean, dirty);
  std::copy_n(clean.target(), n * nv, dirty.target());
  T* rows = name == "q" ? dirty.q() + bad * model.nq
            : name == "v" ? dirty.v() + bad * nv : name == "tau" ? dirty.tau() + bad * nv : dirty.target() + bad * nv;
  rows[index] = static_cast<T>(poison(rows[index]));
  clean.forward_dynamics();
  dirty.forward_dynamics();
  const StateLayout layout(model);
  const std::vector<SingleDof> dofs = single_dofs(model);
  const StateFault fault = find_state_fault<T>(layout, dirty.q() + bad * model.nq, dirty.v() + bad * nv, dirty.tau() + bad * nv, dofs,
                                               dirty.target() + bad * nv);
  CHECK(dirty.status()[bad] == fault.status);
  CHECK(dirty.status_message(bad) == "environment " + std::to_string(bad) + ": " +
                                         (fault.ok() ? std::string("ok") : state_fault_message(model, layout, fault)));
  for (int e = 0; e < n; ++e)
    if (e != bad) CHECK(std::equal(dirty.qdd() + e * nv, dirty.qdd() + (e + 1) * nv, clean.qdd() + e * nv));
  for (int k = 0; k < nv; ++k) CHECK(std::isfinite(dirty.qdd()[bad * nv + k]) == fault.ok());
}
}  // namespace

TEST_CASE("the engine's block check finds what the per-environment check finds: every entry of q, v, tau and the targets, float and double") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  const auto nan = [](double) { return std::nan(""); };
  const auto inf = [](double) { return -std::numeric_limits<double>::infinity(); };
  for (int k = 0; k < model.nq; ++k) check_block_finds_the_entry<double>(model, "q", k, nan), check_block_finds_the_entry<float>(model, "q", k, inf);
  for (const char* array : {"v", "tau", "target"})
    for (int k = 0; k < model.nv; ++k)  // a free-flyer dof's target is not read: its environment stays ok
      check_block_finds_the_entry<double>(model, array, k, inf), check_block_finds_the_entry<float>(model, array, k, nan);
  // The base quaternion's first coordinate moved: its norm within the tolerance (normalised, ok) or beyond it.
  for (const auto& move : {std::function<double(double)>([](double x) { return x * (1 + 1e-4); }),
                           std::function<double(double)>([](double x) { return x + 10.0; })}) {
    check_block_finds_the_entry<double>(model, "q", 3, move);
    check_block_finds_the_entry<float>(model, "q", 3, move);
  }
}

TEST_CASE("step() leaves a bad environment's q, v and tau exactly as they were and steps the others") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(85);
  const int n = 11, bad = 6;
  Batch<double> clean(model, n, 2), dirty(model, n, 2);
  randomise(clean, rng);
  copy_state(clean, dirty);
  dirty.tau()[bad * model.nv + 4] = std::numeric_limits<double>::infinity();
  const Snapshot before(dirty);
  clean.step(1e-3);
  dirty.step(1e-3);
  const Snapshot after(dirty);
  CHECK(std::equal(before.q.begin() + bad * model.nq, before.q.begin() + (bad + 1) * model.nq, after.q.begin() + bad * model.nq));
  CHECK(std::equal(before.v.begin() + bad * model.nv, before.v.begin() + (bad + 1) * model.nv, after.v.begin() + bad * model.nv));
  CHECK(std::isinf(dirty.tau()[bad * model.nv + 4]));
  CHECK(dirty.status()[bad] == EnvStatus::NonFiniteState);
  for (int e = 0; e < n; ++e) {
    if (e == bad) continue;
    CAPTURE(e);
    CHECK(std::equal(dirty.q() + e * model.nq, dirty.q() + (e + 1) * model.nq, clean.q() + e * model.nq));
    CHECK(!std::equal(dirty.q() + e * model.nq, dirty.q() + (e + 1) * model.nq, before.q.begin() + e * model.nq));
  }
}

TEST_CASE("reset(envs) restores the listed environments and leaves every buffer of the others untouched") {
  const Model model = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(84);
  const int n = 10;
  Batch<double> batch(model, n);
  randomise(batch, rng);
  batch.v()[5 * model.nv] = std::nan("");  // env 5 fails: its status must survive the reset of others
  batch.forward_dynamics();
  const Snapshot before(batch);
  const std::vector<int> envs{2, 7};
  batch.reset(envs);
  const Snapshot after(batch);
  const Eigen::VectorXd neutral = neutral_configuration<double>(model);
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    if (e == 2 || e == 7) {
      CHECK(relative_error(row(batch.q(), e, model.nq), neutral) == 0.0);
      for (const double* buffer : std::initializer_list<const double*>{batch.v(), batch.tau(), batch.qdd()})
        CHECK(row(buffer, e, model.nv).isZero(0.0));
      CHECK(batch.status()[e] == EnvStatus::Ok);
    } else {
      CHECK(before.same_env(after, e, model));
    }
  }
  CHECK(batch.status()[5] == EnvStatus::NonFiniteState);
}

TEST_CASE("reset(envs, q, v) writes the given rows, clears tau and qdd, and leaves the others untouched") {
  const Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  std::mt19937 rng(84);
  Batch<double> batch(model, 10);
  randomise(batch, rng);
  batch.forward_dynamics();
  const Snapshot before(batch);
  const std::vector<int> envs{2, 7};
  const std::vector<double> q_rows{0.1, 0.2, 0.3, 0.4}, v_rows{1, 2, 3, 4};
  batch.reset(envs, q_rows, v_rows);
  const Snapshot after(batch);
  CHECK(row(batch.q(), 2, 2) == Eigen::Vector2d(0.1, 0.2));
  CHECK(row(batch.q(), 7, 2) == Eigen::Vector2d(0.3, 0.4));
  CHECK(row(batch.v(), 2, 2) == Eigen::Vector2d(1, 2));
  CHECK(row(batch.v(), 7, 2) == Eigen::Vector2d(3, 4));
  for (int e : envs) CHECK((row(batch.tau(), e, 2).isZero(0.0) && row(batch.qdd(), e, 2).isZero(0.0)));
  for (int e = 0; e < 10; ++e)
    if (e != 2 && e != 7) CHECK(before.same_env(after, e, model));
}

TEST_CASE("set_threads after construction changes how many threads run the blocks") {
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  Batch<float> batch(model, 4096, 2);
  batch.set_threads(1);
  for (int k = 0; k < 5; ++k) batch.forward_dynamics();
  CHECK(batch.threads() == 1);
  CHECK(batch.threads_used() == 1);
  batch.set_threads(2);
  CHECK(batch.threads_used() == 0);
  // The second thread joins as soon as it wakes; a bounded number of calls is plenty.
  for (int k = 0; k < 200 && batch.threads_used() < 2; ++k) batch.forward_dynamics();
  CHECK(batch.threads_used() == 2);
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
double energy_drift(double dt, int steps) {
  const Model model = load_urdf_file(model_path("double_pendulum.urdf"));
  Batch<double> batch(model, 1);
  batch.q()[0] = 1.0;
  batch.q()[1] = -0.5;
  Data<double> data(model);
  const double e0 = mechanical_energy(model, data, row(batch.q(), 0, 2), row(batch.v(), 0, 2));
  double worst = 0;
  for (int k = 0; k < steps; ++k) {
    batch.step(dt);
    worst = std::max(worst, std::abs(mechanical_energy(model, data, row(batch.q(), 0, 2), row(batch.v(), 0, 2)) - e0));
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
  batch.set_contacts(false), fbatch.set_contacts(false);  // random states start anywhere, inside the ground too: free flight here
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
