// Fixtures shared by the batch-engine tests: random states written into a batch's buffers,
// copies of state between engines of different lane types, rows of env-major buffers, the
// contact tests' touchdown states and summed contact forces, and the check that lanes step as
// W = 1 does.
#pragma once

#include "batch/batch.hpp"
#include "helpers.hpp"

namespace batchdyn::test {
// Fills the batch's buffers with random states, and lifts the effort limits so that the
// random torques drive the dynamics unclamped (what the reference kernels compute).
template <class Engine>
inline void randomise(Engine& batch, std::mt19937& rng) {
  using T = typename Engine::T;
  const Model& model = batch.model();
  batch.remove_effort_limits();
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
inline void copy_state(const EngineA& from, EngineB& to) {
  const Model& m = from.model();
  std::copy_n(from.q(), from.num_envs() * m.nq, to.q());
  std::copy_n(from.v(), from.num_envs() * m.nv, to.v());
  std::copy_n(const_cast<EngineA&>(from).tau(), from.num_envs() * m.nv, to.tau());
  to.set_effort_limits(from.effort_limits());
}

// The joint torque the engine's dynamics sees with passive forces on (its default): tau plus the
// damping, friction loss and springs of the model (passive_torque, batch/passive_forces.hpp).
inline Eigen::VectorXd with_passive_forces(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                           const Eigen::VectorXd& tau) {
  return tau + passive_torque(model, q, v);
}

// Forward dynamics as the engine simulates it with passive forces on: the reference ABA
// (Pinocchio's dynamics) at tau + the passive forces.
inline Eigen::VectorXd simulated_forward_dynamics(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                                  const Eigen::VectorXd& tau) {
  Data<double> data(model);
  return aba(model, data, q, v, with_passive_forces(model, q, v, tau));
}

inline Eigen::VectorXd row(const double* data, int e, int width) { return Eigen::Map<const Eigen::VectorXd>(data + e * width, width); }
// Row e of an env-major float buffer, widened to double.
inline Eigen::VectorXd row(const float* data, int e, int width) {
  return Eigen::Map<const Eigen::VectorXf>(data + e * width, width).cast<double>();
}
// Writes environment e's q and v (from double) and zeroes its tau.
template <class Engine>
void set_row(Engine& batch, int e, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  using T = typename Engine::T;
  const Model& m = batch.model();
  for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = static_cast<T>(q[k]);
  for (int k = 0; k < m.nv; ++k) batch.v()[e * m.nv + k] = static_cast<T>(v[k]), batch.tau()[e * m.nv + k] = T(0);
}

// Runs `run(batch)` (it sets the states and steps) on SIMD lanes (2 threads) and on W = 1, in
// double and in float, and checks that every environment ends with the same status and contact
// iterations (each Ok when `all_ok`) and the same q and v: 1e-12 in double, 1e-5 in float.
template <class Run>
void check_lanes_equal_w1(const Model& m, int num_envs, bool all_ok, Run&& run) {
  const auto compare = [&](auto& lanes, auto& scalar, double tolerance) {
    run(lanes), run(scalar);
    for (int e = 0; e < num_envs; ++e) {
      CAPTURE(e);
      const size_t i = static_cast<size_t>(e);
      if (all_ok) CHECK(lanes.status()[i] == EnvStatus::Ok);
      CHECK(lanes.status()[i] == scalar.status()[i]);
      CHECK(lanes.contact_iterations()[i] == scalar.contact_iterations()[i]);
      CHECK((row(lanes.q(), e, m.nq) - row(scalar.q(), e, m.nq)).cwiseAbs().maxCoeff() < tolerance);
      CHECK((row(lanes.v(), e, m.nv) - row(scalar.v(), e, m.nv)).cwiseAbs().maxCoeff() < tolerance);
    }
  };
  {
    Batch<double> lanes(m, num_envs, 2);
    ScalarBatch<double> scalar(m, num_envs, 1);
    compare(lanes, scalar, 1e-12);
  }
  {
    Batch<float> lanes(m, num_envs, 2);
    ScalarBatch<float> scalar(m, num_envs, 1);
    compare(lanes, scalar, 1e-5);
  }
}

// Quadruped states near the ground: crouching, a few mm above or into it, tilted and moving.
inline std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> touchdown_states(const Model& m, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> out;
  for (int e = 0; e < count; ++e) {
    Eigen::VectorXd q = crouching_quadruped(m, 0.004 * u(rng));
    q[3] = 0.03 * u(rng), q[4] = 0.03 * u(rng);  // a small tilt (quaternion x, y; w renormalised)
    q.segment<4>(3).normalize();
    Eigen::VectorXd v = 0.3 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return u(rng); });
    v[2] = -0.2 - 0.3 * std::abs(u(rng));  // falling onto the plane
    out.emplace_back(q, v);
  }
  return out;
}

// Sum over candidates of environment e's world-frame contact forces (N).
template <class Engine>
Vec3d total_contact_force(const Engine& batch, int e) {
  Vec3d sum = Vec3d::zero();
  const int C = batch.contact_candidates();
  for (int k = 0; k < C; ++k)
    for (int i = 0; i < 3; ++i) sum[i] += static_cast<double>(batch.contact_forces()[(e * C + k) * 3 + i]);
  return sum;
}

// The cube of free_body("<box size=\"0.2 0.2 0.2\"/>") in every environment of `batch` (its
// contact settings are the caller's), set on its face on the plane z = 0 and stepped 10^4 times
// by 1 ms: each environment stays Ok, its corners carry m g (relative `force_tolerance`), it
// neither sinks nor drifts (1e-4 m) and it is at rest (1e-5 m/s).
template <class Engine>
void check_box_rests_without_drift(Engine& batch, double force_tolerance) {
  const Model& box = batch.model();
  for (int e = 0; e < batch.num_envs(); ++e) batch.q()[e * box.nq + 2] = 0.1;
  for (int s = 0; s < 10000; ++s) batch.step(1e-3);
  for (int e = 0; e < batch.num_envs(); ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    CHECK(total_contact_force(batch, e).z == doctest::Approx(9.81).epsilon(force_tolerance));
    CHECK(std::abs(batch.q()[e * box.nq + 2] - 0.1) < 1e-4);
    CHECK(row(batch.v(), e, box.nv).cwiseAbs().maxCoeff() < 1e-5);
  }
}

}  // namespace batchdyn::test
