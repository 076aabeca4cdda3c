// What a training loop needs from the batch engine: actuation (PD targets, effort limits,
// substeps), joint damping, per-environment parameters (domain randomisation), frame
// observations, reproducible random resets, and constrained models stepping with their
// constraints. Every result is checked against the scalar reference dynamics of the model the
// environment is meant to be.
#include <set>

#include "batch_helpers.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "topology/reduced_model.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
Model arm() { return load_urdf_file(model_path("arm7.urdf")); }

// tau + kp (target - q) - kd v on 1-dof joints, times the motor strength (none: 1), clamped to
// the limits: the applied torque.
Eigen::VectorXd pd_torque(const Model& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau,
                          const Eigen::VectorXd& target, const std::vector<double>& kp, const std::vector<double>& kd,
                          const std::vector<double>& limit, const std::vector<double>& strength = {}) {
  Eigen::VectorXd out = tau;
  for (int i = 1; i < m.num_bodies(); ++i) {
    const Body& b = m.bodies[i];
    if (b.joint_type == JointType::FreeFlyer) continue;
    out[b.idx_v] += kp[static_cast<size_t>(b.idx_v)] * (target[b.idx_v] - q[b.idx_q]) - kd[static_cast<size_t>(b.idx_v)] * v[b.idx_v];
  }
  for (size_t k = 0; k < strength.size(); ++k) out[static_cast<long>(k)] *= strength[k];
  for (int k = 0; k < m.nv; ++k) out[k] = std::clamp(out[k], -limit[static_cast<size_t>(k)], limit[static_cast<size_t>(k)]);
  return out;
}
}  // namespace

TEST_CASE("PD control: qdd is the reference ABA of tau + kp (target - q) - kd qd, clamped to the effort limits") {
  for (const Model& m : {arm(), humanoid()}) {
    CAPTURE(m.name);
    std::mt19937 rng(901);
    const int n = 2 * Batch<double>::W + 3, nv = m.nv;
    Batch<double> batch(m, n, 2);
    randomise(batch, rng);
    std::vector<double> kp(static_cast<size_t>(nv), 0.0), kd(kp), limit(static_cast<size_t>(nv), 1e300);
    for (int i = 1; i < m.num_bodies(); ++i)
      if (m.bodies[i].joint_type != JointType::FreeFlyer)
        kp[static_cast<size_t>(m.bodies[i].idx_v)] = 40.0 + i, kd[static_cast<size_t>(m.bodies[i].idx_v)] = 2.0 + 0.1 * i,
        limit[static_cast<size_t>(m.bodies[i].idx_v)] = 3.0 + 0.5 * i;  // small enough that some torques clamp
    batch.set_pd_gains(kp, kd);
    batch.set_effort_limits(limit);
    batch.set_control_mode(ControlMode::PositionPD);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int k = 0; k < n * nv; ++k) batch.target()[k] = normal(rng);
    batch.forward_dynamics();
    REQUIRE(batch.failed_count() == 0);
    Data<double> data(m);
    int clamped = 0;
    for (int e = 0; e < n; ++e) {
      const Eigen::VectorXd q = row(batch.q(), e, m.nq), v = row(batch.v(), e, nv), tau = row(batch.tau(), e, nv);
      const Eigen::VectorXd applied = pd_torque(m, q, v, tau, row(batch.target(), e, nv), kp, kd, limit);
      for (int k = 0; k < nv; ++k) clamped += std::abs(applied[k]) == limit[static_cast<size_t>(k)];
      CHECK(relative_error(row(batch.qdd(), e, nv), aba(m, data, q, v, applied)) <= 1e-12);
      CHECK(relative_error(row(batch.actuator_torques(), e, nv), applied) <= 1e-14);  // what the engine reports it applied
    }
    CHECK(clamped > 0);
  }
}

TEST_CASE("motor strength: each environment's actuation torque is scaled by its own strengths before the clamp, the others untouched") {
  const Model m = humanoid();
  std::mt19937 rng(911);
  const int n = 2 * Batch<double>::W + 1, nv = m.nv;
  Batch<double> batch(m, n, 2), plain(m, n, 1);
  for (Batch<double>* b : {&batch, &plain}) randomise(*b, rng), rng.seed(911);  // the same states in both
  std::vector<double> kp(static_cast<size_t>(nv), 0.0), kd(kp), limit(static_cast<size_t>(nv), 1e300);
  for (int k = 6; k < nv; ++k) kp[static_cast<size_t>(k)] = 30.0, kd[static_cast<size_t>(k)] = 1.5, limit[static_cast<size_t>(k)] = 20.0;
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> target(static_cast<size_t>(n * nv));
  for (double& t : target) t = normal(rng);
  for (Batch<double>* b : {&batch, &plain}) {
    b->set_pd_gains(kp, kd), b->set_effort_limits(limit), b->set_control_mode(ControlMode::PositionPD);
    std::copy(target.begin(), target.end(), b->target());
  }
  // Environment 1: weak motors (0.5, and a dead one, 0); environment n - 1 (another block): strong (1.7).
  const std::vector<int> envs = {1, n - 1};
  std::vector<double> strength(2 * static_cast<size_t>(nv));
  for (int k = 0; k < nv; ++k) strength[static_cast<size_t>(k)] = k == 8 ? 0.0 : 0.5, strength[static_cast<size_t>(nv + k)] = 1.7;
  batch.set_motor_strength(envs, strength);
  CHECK(batch.motor_strength(1, 7) == 0.5);
  CHECK(batch.motor_strength(n - 1, 7) == 1.7);
  CHECK(batch.motor_strength(0, 7) == 1.0);
  batch.forward_dynamics(), plain.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  Data<double> data(m);
  int clamped_only_when_strong = 0;
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    const Eigen::VectorXd q = row(batch.q(), e, m.nq), v = row(batch.v(), e, nv), tau = row(batch.tau(), e, nv);
    const auto k = std::find(envs.begin(), envs.end(), e);
    if (k == envs.end()) {  // not set: bitwise what an engine without strengths computes
      CHECK(row(batch.actuator_torques(), e, nv) == row(plain.actuator_torques(), e, nv));
      CHECK(row(batch.qdd(), e, nv) == row(plain.qdd(), e, nv));
      continue;
    }
    const size_t j = static_cast<size_t>(k - envs.begin());
    const std::vector<double> own(strength.begin() + static_cast<long>(j * static_cast<size_t>(nv)), strength.begin() + static_cast<long>((j + 1) * static_cast<size_t>(nv)));
    const Eigen::VectorXd applied = pd_torque(m, q, v, tau, row(batch.target(), e, nv), kp, kd, limit, own);
    CHECK(relative_error(row(batch.actuator_torques(), e, nv), applied) <= 1e-14);
    CHECK(relative_error(row(batch.qdd(), e, nv), aba(m, data, q, v, applied)) <= 1e-12);
    if (e == 1) CHECK(batch.actuator_torques()[static_cast<size_t>(e * nv + 8)] == 0.0);
    const Eigen::VectorXd unscaled = pd_torque(m, q, v, tau, row(batch.target(), e, nv), kp, kd, limit);
    for (int d = 6; d < nv; ++d) clamped_only_when_strong += e == n - 1 && std::abs(applied[d]) == 20.0 && std::abs(unscaled[d]) < 20.0;
  }
  CHECK(clamped_only_when_strong > 0);  // the strength acts before the clamp
  CHECK_ERROR_MENTIONS(batch.set_motor_strength(std::vector<int>{2}, std::vector<double>(static_cast<size_t>(nv), -0.5)), "set_motor_strength",
                       "environment 2", "dof 0");
  CHECK_ERROR_MENTIONS(batch.motor_strength(n, 0), "environment index " + std::to_string(n));
}

TEST_CASE("the effort clamp is switchable: off, the limits are kept but the torque reaches ABA as given") {
  const Model m = arm();  // every joint: <limit effort="80">
  Batch<double> batch(m, 1, 1);
  for (int k = 0; k < m.nv; ++k) batch.tau()[k] = (k % 2 ? -1 : 1) * 500.0;
  batch.set_effort_clamp(false);
  batch.forward_dynamics();
  Data<double> data(m);
  const Eigen::VectorXd q = row(batch.q(), 0, m.nq), v = row(batch.v(), 0, m.nv), tau = row(batch.tau(), 0, m.nv);
  CHECK(relative_error(row(batch.qdd(), 0, m.nv), aba(m, data, q, v, tau)) <= 1e-12);
  CHECK(batch.effort_limits()[0] == 80.0);
  CHECK(row(batch.actuator_torques(), 0, m.nv) == tau);
  batch.set_effort_clamp(true);
  batch.forward_dynamics();
  CHECK(row(batch.actuator_torques(), 0, m.nv).cwiseAbs().maxCoeff() == 80.0);
}

TEST_CASE("the effort limits of the URDF clamp the torque by default, remove_effort_limits lifts them") {
  const Model m = arm();  // every joint: <limit effort="80">
  Batch<double> batch(m, 1, 1);
  REQUIRE(batch.effort_limits()[0] == 80.0);
  for (int k = 0; k < m.nv; ++k) batch.tau()[k] = (k % 2 ? -1 : 1) * 500.0;
  batch.forward_dynamics();
  Data<double> data(m);
  const Eigen::VectorXd q = row(batch.q(), 0, m.nq), v = row(batch.v(), 0, m.nv);
  const Eigen::VectorXd clamped = row(batch.tau(), 0, m.nv).cwiseMax(-80.0).cwiseMin(80.0);
  CHECK(relative_error(row(batch.qdd(), 0, m.nv), aba(m, data, q, v, clamped)) <= 1e-12);
  batch.remove_effort_limits();
  batch.forward_dynamics();
  CHECK(relative_error(row(batch.qdd(), 0, m.nv), aba(m, data, q, v, row(batch.tau(), 0, m.nv))) <= 1e-12);
}

// Equal to rounding, not bitwise: between separate steps the engine renormalises the
// free-flyer quaternion when it gathers the state; inside one call it does not need to.
TEST_CASE("a step with k substeps is k steps of dt / k, the PD torque recomputed in each") {
  const Model m = humanoid();
  std::mt19937 rng(902);
  const int n = 11;
  Batch<double> sub(m, n, 2), manual(m, n, 1), coarse(m, n, 1);
  randomise(sub, rng);
  copy_state(sub, manual);
  copy_state(sub, coarse);
  std::vector<double> kp(static_cast<size_t>(m.nv), 100.0), kd(static_cast<size_t>(m.nv), 5.0);
  for (int k = 0; k < 6; ++k) kp[static_cast<size_t>(k)] = kd[static_cast<size_t>(k)] = 0.0;  // the free-flyer
  for (Batch<double>* b : {&sub, &manual, &coarse}) {
    b->set_pd_gains(kp, kd);
    b->set_control_mode(ControlMode::PositionPD);
    for (int k = 0; k < n * m.nv; ++k) b->target()[k] = 0.3;
  }
  sub.step(4e-3, 4);
  for (int s = 0; s < 4; ++s) manual.step(1e-3);
  for (int e = 0; e < n; ++e) {
    CHECK(relative_error(row(sub.q(), e, m.nq), row(manual.q(), e, m.nq)) <= 1e-14);
    CHECK(relative_error(row(sub.v(), e, m.nv), row(manual.v(), e, m.nv)) <= 1e-12);
    CHECK(relative_error(row(sub.qdd(), e, m.nv), row(manual.qdd(), e, m.nv)) <= 1e-10);
  }
  // ... and not one step of 4 dt: the substeps are really taken.
  coarse.step(4e-3);
  CHECK(relative_error(row(sub.v(), 0, m.nv), row(coarse.v(), 0, m.nv)) > 1e-6);
  CHECK_THROWS_AS(sub.step(1e-3, 0), Error);
}

TEST_CASE("PD gains on the free-flyer, negative gains and wrong sizes are refused with the dof named") {
  const Model m = humanoid();
  Batch<double> batch(m, 2);
  std::vector<double> kp(static_cast<size_t>(m.nv), 1.0), kd(static_cast<size_t>(m.nv), 0.0);
  CHECK_ERROR_MENTIONS(batch.set_pd_gains(kp, kd), "free-flyer", "dof 0");
  for (int k = 0; k < 6; ++k) kp[static_cast<size_t>(k)] = 0.0;
  kp[7] = -1.0;
  CHECK_ERROR_MENTIONS(batch.set_pd_gains(kp, kd), "kp", "dof 7");
  CHECK_ERROR_MENTIONS(batch.set_pd_gains(std::vector<double>(3, 0.0), kd), "nv");
  CHECK_ERROR_MENTIONS(batch.set_effort_limits(std::vector<double>(static_cast<size_t>(m.nv), 0.0)), "dof 0", "> 0");
}

namespace {
// The humanoid with actuators of every kind on its 1-dof joints, as an MJCF <actuator> section
// declares them: motors with a control range, position servos with gear and a force range,
// velocity servos, a general affine one, and a second actuator on the first joint.
Model actuated_humanoid() {
  Model m = humanoid();
  int n = 0;
  for (int i = 1; i < m.num_bodies(); ++i) {
    const Body& b = m.bodies[i];
    if (!is_single_dof(b.joint_type)) continue;
    Actuator a;
    a.name = "act" + std::to_string(n), a.joint = b.joint_name, a.dof = b.idx_v;
    switch (n++ % 4) {
      case 0: a.kind = ActuatorKind::Motor, a.ctrl_lower = -2.0, a.ctrl_upper = 3.0; break;
      case 1: a.kind = ActuatorKind::Position, a.gain = 30.0, a.bias[1] = -30.0, a.bias[2] = -1.5, a.gear = 2.0,
              a.force_lower = -8.0, a.force_upper = 8.0; break;
      case 2: a.kind = ActuatorKind::Velocity, a.gain = 4.0, a.bias[2] = -4.0, a.ctrl_lower = -1.0, a.ctrl_upper = 1.0; break;
      default: a.kind = ActuatorKind::General, a.gain = 2.5, a.bias[0] = 0.7, a.bias[1] = -3.0, a.bias[2] = -0.2, a.gear = -1.5;
    }
    m.actuators.push_back(a);
  }
  Actuator second = m.actuators.front();
  second.name = "second", second.kind = ActuatorKind::Velocity, second.gain = 1.0, second.bias[2] = -1.0;
  m.actuators.push_back(second);
  return m;
}

// tau + sum of gear force(ctrl) of the actuators (topology/actuator_model.hpp), written out per
// actuator in double, then clamped to the effort limits.
Eigen::VectorXd actuator_torque(const Model& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau,
                                const double* ctrl, const std::vector<double>& limit) {
  Eigen::VectorXd out = tau;
  for (size_t a = 0; a < m.actuators.size(); ++a) {
    const Actuator& u = m.actuators[a];
    const Body& b = *std::find_if(m.bodies.begin(), m.bodies.end(), [&u](const Body& body) { return body.joint_name == u.joint; });
    const double c = std::clamp(ctrl[a], u.ctrl_lower, u.ctrl_upper);
    const double force = u.gain * c + u.bias[0] + u.bias[1] * u.gear * q[b.idx_q] + u.bias[2] * u.gear * v[b.idx_v];
    out[u.dof] += u.gear * std::clamp(force, u.force_lower, u.force_upper);
  }
  for (int k = 0; k < m.nv; ++k) out[k] = std::clamp(out[k], -limit[static_cast<size_t>(k)], limit[static_cast<size_t>(k)]);
  return out;
}
}  // namespace

TEST_CASE("actuator control: qdd is the reference ABA of tau + the actuators' gear force(ctrl), ranges and effort limits applied") {
  const Model m = actuated_humanoid();
  std::mt19937 rng(902);
  const int n = 2 * Batch<double>::W + 3, nv = m.nv, nu = static_cast<int>(m.actuators.size());
  Batch<double> batch(m, n, 2);
  randomise(batch, rng);
  std::vector<double> limit(static_cast<size_t>(nv), std::numeric_limits<double>::infinity());
  for (int k = 6; k < nv; k += 3) limit[static_cast<size_t>(k)] = 4.0;  // some joints' effort limit clamps the sum
  batch.set_effort_limits(limit);
  batch.set_control_mode(ControlMode::Actuators);
  REQUIRE(batch.num_actuators() == nu);
  std::normal_distribution<double> normal(0.0, 3.0);  // outside the control ranges often
  for (int k = 0; k < n * nu; ++k) batch.ctrl()[k] = normal(rng);
  batch.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  Data<double> data(m);
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    const Eigen::VectorXd q = row(batch.q(), e, m.nq), v = row(batch.v(), e, nv), tau = row(batch.tau(), e, nv);
    const Eigen::VectorXd applied = actuator_torque(m, q, v, tau, batch.ctrl() + e * nu, limit);
    CHECK(relative_error(row(batch.actuator_torques(), e, nv), applied) <= 1e-14);
    CHECK(relative_error(row(batch.qdd(), e, nv), aba(m, data, q, v, applied)) <= 1e-12);
  }
}

TEST_CASE("actuator control on lanes equals the same engine on scalars (W = 1), float and double") {
  const Model m = actuated_humanoid();
  const auto compare = [&m]<class T>(T tolerance) {
    std::mt19937 rng(903);
    const int n = 2 * Batch<T>::W + 1, nu = static_cast<int>(m.actuators.size());
    Batch<T> lanes(m, n, 1);
    ScalarBatch<T> scalar(m, n, 1);
    randomise(lanes, rng);
    std::copy_n(lanes.q(), n * m.nq, scalar.q()), std::copy_n(lanes.v(), n * m.nv, scalar.v()), std::copy_n(lanes.tau(), n * m.nv, scalar.tau());
    std::normal_distribution<double> normal(0.0, 3.0);
    for (int k = 0; k < n * nu; ++k) lanes.ctrl()[k] = scalar.ctrl()[k] = static_cast<T>(normal(rng));
    lanes.set_control_mode(ControlMode::Actuators), scalar.set_control_mode(ControlMode::Actuators);
    lanes.step(T(1e-3)), scalar.step(T(1e-3));
    REQUIRE(lanes.failed_count() == 0);
    for (int k = 0; k < n * m.nv; ++k) CHECK(std::abs(lanes.actuator_torques()[k] - scalar.actuator_torques()[k]) <= tolerance * (1 + std::abs(scalar.actuator_torques()[k])));
    for (int k = 0; k < n * m.nv; ++k) CHECK(std::abs(lanes.v()[k] - scalar.v()[k]) <= tolerance * (1 + std::abs(scalar.v()[k])));
  };
  compare(1e-12);
  compare(2e-4f);
}

TEST_CASE("a NaN control marks only its own environment, naming the actuator") {
  const Model m = actuated_humanoid();
  Batch<double> batch(m, 5, 2);
  batch.set_control_mode(ControlMode::Actuators);
  batch.ctrl()[3 * static_cast<int>(m.actuators.size()) + 1] = std::numeric_limits<double>::quiet_NaN();
  batch.step(1e-3);
  CHECK(batch.status()[3] == EnvStatus::NonFiniteState);
  CHECK(batch.failed_count() == 1);
  CHECK(batch.status_message(3).find("ctrl[1] (actuator 'act1')") != std::string::npos);
}

TEST_CASE("actuator control needs actuators: a model without them refuses it, naming the model") {
  Batch<double> batch(arm(), 2, 1);
  CHECK_ERROR_MENTIONS(batch.set_control_mode(ControlMode::Actuators), "declares no actuators");
  CHECK(batch.control_mode() == ControlMode::Torque);
}

TEST_CASE("a NaN PD target marks only its own environment") {
  const Model m = arm();
  Batch<double> batch(m, 5, 2);
  std::vector<double> kp(static_cast<size_t>(m.nv), 10.0), kd(static_cast<size_t>(m.nv), 1.0);
  batch.set_pd_gains(kp, kd);
  batch.set_control_mode(ControlMode::PositionPD);
  batch.target()[2 * m.nv + 1] = std::numeric_limits<double>::quiet_NaN();
  batch.step(1e-3);
  CHECK(batch.status()[2] == EnvStatus::NonFiniteState);
  CHECK(batch.failed_count() == 1);
}

TEST_CASE("a PD target entry that no 1-dof joint reads (a free flyer's) is ignored, even when it is NaN") {
  // The gather transposes the target rows whole; only the 1-dof joints' entries are read.
  const Model m = quadruped();
  Batch<double> batch(m, 11, 1), reference(m, 11, 1);
  std::vector<double> kp(static_cast<size_t>(m.nv), 10.0), kd(static_cast<size_t>(m.nv), 1.0);
  std::fill_n(kp.begin(), 6, 0.0), std::fill_n(kd.begin(), 6, 0.0);  // the free flyer has no actuator
  for (Batch<double>* b : {&batch, &reference}) {
    b->set_pd_gains(kp, kd);
    b->set_control_mode(ControlMode::PositionPD);
    for (int k = 0; k < 11 * m.nv; ++k) b->target()[k] = 0.2;
  }
  for (int e = 0; e < 11; ++e)
    for (int k = 0; k < 6; ++k) batch.target()[e * m.nv + k] = e % 2 ? std::numeric_limits<double>::quiet_NaN() : 1e30;
  batch.step(1e-3), reference.step(1e-3);
  CHECK(batch.status() == reference.status());  // the neutral pose stands in the ground: the same reports, no failure
  CHECK(std::none_of(batch.status().begin(), batch.status().end(), [](EnvStatus s) { return s != EnvStatus::Ok && !is_report(s); }));
  for (int k = 0; k < 11 * m.nv; ++k) CHECK(batch.qdd()[k] == reference.qdd()[k]);
}

TEST_CASE("the reference functions compute Pinocchio's dynamics: a model's joint damping changes none of them") {
  Model m = humanoid();
  set_damping(m, 0.7);
  set_damping(m, m.bodies[3].joint_name, 2.5);
  Model undamped = m;
  std::fill(undamped.damping.begin(), undamped.damping.end(), 0.0);
  std::mt19937 rng(903);
  Data<double> data(m), plain(undamped);
  for (int t = 0; t < 5; ++t) {
    const State s = random_state(m, rng);
    const Eigen::VectorXd qdd = aba(m, data, s.q, s.v, s.tau);
    CHECK(qdd == aba(undamped, plain, s.q, s.v, s.tau));
    CHECK(rnea(m, data, s.q, s.v, qdd) == rnea(undamped, plain, s.q, s.v, qdd));
    CHECK(crba(m, data, s.q) == crba(undamped, plain, s.q));
  }
}

TEST_CASE("the engine applies joint damping as a passive force -d qd, on by default, and set_passive_forces(false) removes it") {
  Model m = humanoid();
  set_damping(m, 0.7);
  set_damping(m, m.bodies[3].joint_name, 2.5);
  std::mt19937 rng(906);
  Batch<double> batch(m, Batch<double>::W + 1, 2);
  randomise(batch, rng);
  CHECK(batch.passive_forces());
  batch.forward_dynamics();
  Data<double> data(m);
  const Eigen::VectorXd d = Eigen::Map<const Eigen::VectorXd>(m.damping.data(), m.nv);
  for (int e = 0; e < batch.num_envs(); ++e) {
    const Eigen::VectorXd q = row(batch.q(), e, m.nq), v = row(batch.v(), e, m.nv), tau = row(batch.tau(), e, m.nv);
    CHECK(relative_error(row(batch.qdd(), e, m.nv), aba(m, data, q, v, Eigen::VectorXd(tau - d.cwiseProduct(v)))) <= 1e-12);
  }
  batch.set_passive_forces(false);
  batch.forward_dynamics();
  for (int e = 0; e < batch.num_envs(); ++e)
    CHECK(relative_error(row(batch.qdd(), e, m.nv), aba(m, data, row(batch.q(), e, m.nq), row(batch.v(), e, m.nv),
                                                         row(batch.tau(), e, m.nv))) <= 1e-12);
}

TEST_CASE("step integrates joint damping implicitly: M (v+ - v) / h = tau - b - d v+, stable at any h") {
  // One joint about the vertical through the link's centre of mass: M = I_zz + armature, b = 0.
  const std::string urdf = R"(<robot name="r"><link name="base"/><link name="l"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <joint name="j" type="continuous"><parent link="base"/><child link="l"/><axis xyz="0 0 1"/></joint></robot>)";
  Model m = load_urdf_string(urdf);
  set_damping(m, "j", 1.0);
  const double inertia = 0.01, h = 0.1;  // h d / I = 10: explicit Euler would multiply v by -9
  for (const int threads : {1, 2}) {
    Batch<double> batch(m, 3, threads);
    for (int e = 0; e < 3; ++e) batch.v()[e] = 1.0 + e;
    batch.forward_dynamics();  // forward dynamics itself keeps -d v
    CHECK(batch.qdd()[0] == doctest::Approx(-1.0 / inertia).epsilon(1e-12));
    batch.step(h);
    for (int e = 0; e < 3; ++e) CHECK(batch.v()[e] == doctest::Approx((1.0 + e) / (1.0 + h * 1.0 / inertia)).epsilon(1e-12));
    for (int s = 0; s < 100; ++s) batch.step(h);
    CHECK(std::abs(batch.v()[0]) < 1e-12);  // decays monotonically
  }
  // Without passive forces the joint keeps its speed (b = 0, no torque).
  Batch<double> free_spin(m, 1, 1);
  free_spin.set_passive_forces(false);
  free_spin.v()[0] = 1.0;
  for (int s = 0; s < 100; ++s) free_spin.step(h);
  CHECK(free_spin.v()[0] == 1.0);
  // Per-environment damping, and float lanes, follow the same law.
  Batch<float> batch(m, 2, 1);
  batch.set_damping(std::array{1}, std::array{3.0});
  batch.v()[0] = batch.v()[1] = 1.0f;
  batch.step(0.1f);
  CHECK(batch.v()[0] == doctest::Approx(1.0 / 11.0).epsilon(1e-6));
  CHECK(batch.v()[1] == doctest::Approx(1.0 / 31.0).epsilon(1e-6));
}

TEST_CASE("damping is read from URDF <dynamics damping> and from the JSON \"damping\" entry, and checked") {
  const std::string urdf = R"(<robot name="r"><link name="base"/><link name="l"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <joint name="j" type="revolute"><parent link="base"/><child link="l"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/><dynamics damping="0.25" friction="0"/></joint></robot>)";
  Model m = load_urdf_string(urdf);
  CHECK(m.damping[0] == 0.25);
  add_constraints_from_json(m, R"({"damping": {"j": 1.5}})", "inline.json");
  CHECK(m.damping[0] == 1.5);
  std::string negative = urdf;
  negative.replace(negative.find("0.25"), 4, "-1.0");
  CHECK_ERROR_MENTIONS(load_urdf_string(negative), "'j'", "damping");
  CHECK_ERROR_MENTIONS(set_damping(m, "j", -2.0), "'j'", ">= 0");
}

TEST_CASE("per-environment inertias set body after body, between steps, keep the earlier values, other bodies read the model's") {
  const Model m = humanoid();
  std::mt19937 rng(914);
  const int n = Batch<double>::W + 2, nv = m.nv;
  Batch<double> batch(m, n, 2);
  randomise(batch, rng);
  const std::vector<double> unit_com = {0, 0, 0}, inertia = {0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04};
  Model expected_1 = m, expected_3 = m;  // what environments 1 and 3 should be
  batch.set_body_inertia(std::vector<int>{1}, 5, std::vector<double>{4.0}, unit_com, inertia);
  expected_1.bodies[5].inertia = {4.0, {0, 0, 0}, Mat3d::diagonal(0.02, 0.03, 0.04)};
  batch.forward_dynamics();  // the threads' tables now hold the one-body layout
  batch.set_body_inertia(std::vector<int>{3}, 2, std::vector<double>{0.5}, unit_com, inertia);  // a second varying body
  expected_3.bodies[2].inertia = {0.5, {0, 0, 0}, Mat3d::diagonal(0.02, 0.03, 0.04)};
  batch.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  CHECK(batch.body_inertia(1, 5).mass == 4.0);
  CHECK(batch.body_inertia(3, 5).mass == m.bodies[5].inertia.mass);
  CHECK(batch.body_inertia(3, 2).mass == 0.5);
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    const Model& own = e == 1 ? expected_1 : e == 3 ? expected_3 : m;
    Data<double> data(own);
    const Eigen::VectorXd expected = aba(own, data, row(batch.q(), e, m.nq), row(batch.v(), e, nv), row(batch.tau(), e, nv));
    CHECK(relative_error(row(batch.qdd(), e, nv), expected) <= 1e-12);
  }
}

TEST_CASE("per-environment parameters: each environment gets the reference result of its own model") {
  const Model m = humanoid();
  std::mt19937 rng(904);
  const int n = 2 * Batch<double>::W + 1, nv = m.nv, body = 5;
  Batch<double> batch(m, n, 2);
  randomise(batch, rng);
  // Environments 1 and n - 1 (different lane blocks) get their own inertia of `body`, gravity,
  // damping and armature; environment 0 keeps the model's.
  const std::vector<int> envs = {1, n - 1};
  const std::vector<double> mass = {3.5, 0.25}, com = {0.01, 0.02, -0.03, 0.0, 0.1, 0.0};
  const std::vector<double> inertia = {0.03, 0.001, 0, 0.001, 0.02, 0, 0, 0, 0.04, /**/ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.015};
  const std::vector<double> gravity = {0, 0, -1.62, 0.5, 0, -9.81};
  std::vector<double> damping(2 * static_cast<size_t>(nv)), armature(damping.size());
  for (size_t k = 0; k < damping.size(); ++k) damping[k] = 0.1 * static_cast<double>(k % 5), armature[k] = 0.01 * static_cast<double>(k % 3);
  batch.set_body_inertia(envs, body, mass, com, inertia);
  batch.set_gravity(envs, gravity);
  batch.set_damping(envs, damping);
  batch.set_armature(envs, armature);
  REQUIRE(batch.per_env_parameters());
  batch.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    Model own = m;  // the model environment e is meant to be
    const auto k = std::find(envs.begin(), envs.end(), e);
    if (k != envs.end()) {
      const size_t j = static_cast<size_t>(k - envs.begin());
      RigidInertiad& I = own.bodies[body].inertia;
      I.mass = mass[j];
      for (int r = 0; r < 3; ++r) I.com[r] = com[3 * j + static_cast<size_t>(r)];
      for (int r = 0; r < 9; ++r) I.inertia_com.m[r / 3][r % 3] = inertia[9 * j + static_cast<size_t>(r)];
      own.gravity = {gravity[3 * j], gravity[3 * j + 1], gravity[3 * j + 2]};
      for (int d = 0; d < nv; ++d)
        own.damping[static_cast<size_t>(d)] = damping[j * static_cast<size_t>(nv) + static_cast<size_t>(d)],
        own.armature[static_cast<size_t>(d)] = armature[j * static_cast<size_t>(nv) + static_cast<size_t>(d)];
      CHECK(batch.body_inertia(e, body).mass == mass[j]);
      CHECK(batch.gravity(e).z == gravity[3 * j + 2]);
    }
    CHECK(relative_error(row(batch.qdd(), e, nv), simulated_forward_dynamics(own, row(batch.q(), e, m.nq), row(batch.v(), e, nv),
                                                                             row(batch.tau(), e, nv))) <= 1e-12);
  }
  // Back to shared parameters: environment 1 is the model again.
  batch.reset_parameters();
  batch.forward_dynamics();
  CHECK(relative_error(row(batch.qdd(), 1, nv), simulated_forward_dynamics(m, row(batch.q(), 1, m.nq), row(batch.v(), 1, nv),
                                                                           row(batch.tau(), 1, nv))) <= 1e-12);
}

TEST_CASE("delassus() honours per-environment parameters: each environment's matrix is its own model's") {
  Model m = humanoid();
  add_constraints_from_json_file(m, model_path("humanoid_feet.json"));
  std::mt19937 rng(907);
  const int n = Batch<double>::W + 2, nv = m.nv, rows = m.constraint_rows, base = 1;
  Batch<double> batch(m, n, 2);
  randomise(batch, rng);
  // Environment 0: a 50 kg base; environment n - 1: armature on every 1-dof joint.
  const std::vector<double> heavy = {50.0}, com = {0, 0, 0}, inertia = {1.0, 0, 0, 0, 1.5, 0, 0, 0, 2.0};
  batch.set_body_inertia(std::vector<int>{0}, base, heavy, com, inertia);
  std::vector<double> armature(static_cast<size_t>(nv), 0.05);
  for (int k = 0; k < 6; ++k) armature[static_cast<size_t>(k)] = 0.0;  // the free flyer's dofs
  batch.set_armature(std::vector<int>{n - 1}, armature);
  batch.delassus();
  REQUIRE(batch.failed_count() == 0);
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    Model own = m;
    if (e == 0) own.bodies[base].inertia = {50.0, {0, 0, 0}, Mat3d::diagonal(1.0, 1.5, 2.0)};
    if (e == n - 1) own.armature = armature;
    Data<double> data(own);
    DelassusData<double> dd(own);
    const Eigen::MatrixXd expected = pv_osimr_delassus(own, data, dd, row(batch.q(), e, m.nq));
    const Eigen::MatrixXd G = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        batch.delassus_matrices() + static_cast<long>(e) * rows * rows, rows, rows);
    CHECK(relative_error(G, expected) <= 1e-12);
    if (e == 0) {  // not the shared model's: the heavy base changes G
      Data<double> shared(m);
      DelassusData<double> shared_dd(m);
      CHECK(relative_error(G, pv_osimr_delassus(m, shared, shared_dd, row(batch.q(), e, m.nq))) > 1e-3);
    }
  }
}

TEST_CASE("per-environment parameters are checked, and the error names the environment and the body") {
  const Model m = humanoid();
  Batch<double> batch(m, 4);
  const std::vector<int> env = {2};
  const std::vector<double> com = {0, 0, 0}, unit = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK_ERROR_MENTIONS(batch.set_body_inertia(env, 5, std::vector<double>{-1.0}, com, unit), "environment 2",
                       "'" + m.bodies[5].name + "'");
  const std::vector<double> indefinite = {1, 0, 0, 0, 1, 0, 0, 0, -3};
  CHECK_ERROR_MENTIONS(batch.set_body_inertia(env, 5, std::vector<double>{1.0}, com, indefinite), "environment 2",
                       "not positive semi-definite");
  CHECK_ERROR_MENTIONS(batch.set_body_inertia(env, 0, std::vector<double>{1.0}, com, unit), "body index 0");
  CHECK_ERROR_MENTIONS(batch.set_body_inertia(std::vector<int>{7}, 5, std::vector<double>{1.0}, com, unit), "environment index 7");
  CHECK_ERROR_MENTIONS(batch.set_gravity(env, std::vector<double>{0, 0}), "gravity", "1 environments x 3");
  CHECK_ERROR_MENTIONS(batch.set_damping(env, std::vector<double>(static_cast<size_t>(m.nv), -1.0)), "environment 2", "dof 0");
  CHECK_FALSE(batch.per_env_parameters());  // nothing was set
  Model looped = load_urdf_file(model_path("four_bar.urdf"));
  Batch<double> constrained(looped, 2);
  constrained.set_constraint_solver(ConstraintSolver::Dense);
  CHECK_ERROR_MENTIONS(constrained.set_gravity(std::vector<int>{0}, std::vector<double>{0, 0, -1}), "dense", "Lcaba");
  constrained.set_constraint_solver(ConstraintSolver::Lcaba);  // LCABA reads the per-environment parameters
  constrained.set_gravity(std::vector<int>{0}, std::vector<double>{0, 0, -1});
  CHECK_ERROR_MENTIONS(constrained.set_constraint_solver(ConstraintSolver::Dense), "reset_parameters");
}

TEST_CASE("rotation_to_quaternion gives the unit quaternion (w >= 0) of any rotation, near 180 degrees too") {
  std::mt19937 rng(905);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int t = 0; t < 400; ++t) {
    Vec3d axis{normal(rng), normal(rng), normal(rng)};
    axis = axis * (1.0 / std::sqrt(dot(axis, axis)));
    const double angle = t < 100 ? M_PI - 1e-9 * t : (t < 200 ? 1e-9 * (t - 100) : std::uniform_real_distribution<double>(0, M_PI)(rng));
    const Mat3d R = axis_angle_rotation(axis, angle);
    double quat[4];
    rotation_to_quaternion(R, quat);
    CHECK(quat[3] >= 0);
    CHECK(std::abs(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3] - 1) <= 1e-14);
    const Mat3d back = quaternion_rotation(quat[0], quat[1], quat[2], quat[3]);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) CHECK(std::abs(back(r, c) - R(r, c)) <= 1e-13);
  }
}

TEST_CASE("observations: frame poses are the reference placements, velocities the finite differences of the poses") {
  const Model m = humanoid();
  std::vector<std::string> names;
  for (const Frame& f : m.frames)
    if (f.body > 0 && names.size() < 6) names.push_back(f.name);
  names.push_back(m.frames.back().name);
  std::mt19937 rng(906);
  const int n = Batch<double>::W + 2;
  Batch<double> batch(m, n, 2);
  randomise(batch, rng);
  batch.set_observed_frames(names);
  batch.observe();
  REQUIRE(batch.failed_count() == 0);
  Data<double> data(m);
  const double eps = 1e-6;
  for (int e = 0; e < n; ++e) {
    const Eigen::VectorXd q = row(batch.q(), e, m.nq), v = row(batch.v(), e, m.nv);
    Eigen::VectorXd q_plus(m.nq), q_minus(m.nq);
    integrate(m, q, Eigen::VectorXd(v * eps), q_plus);
    integrate(m, q, Eigen::VectorXd(-v * eps), q_minus);
    for (size_t f = 0; f < names.size(); ++f) {
      const int frame = m.has_frame(names[f]) ? m.frame_index(names[f]) : m.frame_index(names[f], FrameKind::Joint);
      const auto pose_at = [&](const Eigen::VectorXd& x) {
        forward_kinematics(m, data, x);
        return data.world_from_body[m.frames[static_cast<size_t>(frame)].body] * m.frames[static_cast<size_t>(frame)].placement;
      };
      const Transformd pose = pose_at(q), plus = pose_at(q_plus), minus = pose_at(q_minus);
      const double* o = batch.observations() + (static_cast<size_t>(e) * names.size() + f) * 13;
      const Mat3d R = quaternion_rotation(o[3], o[4], o[5], o[6]);
      for (int r = 0; r < 3; ++r) {
        CHECK(std::abs(o[r] - pose.translation[r]) <= 1e-12);
        for (int c = 0; c < 3; ++c) CHECK(std::abs(R(r, c) - pose.rotation(r, c)) <= 1e-12);
        CHECK(std::abs(o[7 + r] - (plus.translation[r] - minus.translation[r]) / (2 * eps)) <= 1e-6);
      }
      const Vec3d w = log3(plus.rotation * minus.rotation.transpose()) * (1.0 / (2 * eps));  // world angular velocity
      for (int r = 0; r < 3; ++r) CHECK(std::abs(o[10 + r] - w[r]) <= 1e-6);
    }
  }
  CHECK_ERROR_MENTIONS(batch.set_observed_frames({"no_such_link"}), "'no_such_link'");
  Batch<double> none(m, 1);
  CHECK_ERROR_MENTIONS(none.observe(), "set_observed_frames");
}

TEST_CASE("random resets are reproducible: an environment's draw depends only on (seed, env)") {
  const Model m = humanoid();
  const int n = 37;
  Batch<double> one(m, n, 1), two(m, n, 2);
  std::vector<int> all(n), some = {30, 3, 17};
  std::iota(all.begin(), all.end(), 0);
  one.reset(all, 1234);
  two.reset(some, 1234);
  for (int e : some) CHECK(std::equal(one.q() + e * m.nq, one.q() + (e + 1) * m.nq, two.q() + e * m.nq));
  two.reset(all, 1235);
  CHECK_FALSE(std::equal(one.q(), one.q() + n * m.nq, two.q()));
  // Uniform within the limits; the free-flyer at the reference placement; v = 0.
  std::set<double> distinct;
  for (int e = 0; e < n; ++e)
    for (int i = 1; i < m.num_bodies(); ++i) {
      const Body& b = m.bodies[i];
      const double x = one.q()[e * m.nq + b.idx_q];
      if (b.joint_type == JointType::FreeFlyer) {
        CHECK(x == 0.0);
        continue;
      }
      CHECK(x >= m.lower_position_limit[static_cast<size_t>(b.idx_q)]);
      CHECK(x <= m.upper_position_limit[static_cast<size_t>(b.idx_q)]);
      distinct.insert(x);
    }
  CHECK(distinct.size() > static_cast<size_t>(n * (m.num_bodies() - 2)) / 2);
  CHECK(std::all_of(one.v(), one.v() + n * m.nv, [](double x) { return x == 0.0; }));
}

TEST_CASE("resets with a seed per environment draw from that seed alone, whatever the environment's index") {
  const Model m = humanoid();
  Batch<double> batch(m, 6, 2);
  const std::vector<int> envs = {0, 1, 2, 5};
  const std::vector<std::uint64_t> seeds = {7, 8, 7, 7};
  batch.reset(envs, seeds, 0.1, 0.2);
  const auto row = [&](int e) { return std::vector<double>(batch.q() + e * m.nq, batch.q() + (e + 1) * m.nq); };
  const auto vrow = [&](int e) { return std::vector<double>(batch.v() + e * m.nv, batch.v() + (e + 1) * m.nv); };
  CHECK(row(0) == row(2));
  CHECK(row(0) == row(5));
  CHECK(vrow(0) == vrow(5));
  CHECK(row(0) != row(1));
  CHECK(row(3) == batch.reference_configuration());  // not listed: untouched
  CHECK_ERROR_MENTIONS(batch.reset(std::vector<int>{1, 1}, std::vector<std::uint64_t>{1, 2}), "listed twice");
  CHECK_ERROR_MENTIONS(batch.reset(std::vector<int>{1, 2}, std::vector<std::uint64_t>{1}), "1 seeds for 2 environments");
}

TEST_CASE("noisy resets stay within the noise around the reference configuration and the joint limits") {
  const Model m = arm();
  const int n = 50;
  Batch<double> batch(m, n, 2);
  std::vector<double> reference(static_cast<size_t>(m.nq), 0.5);
  batch.set_reference_configuration(reference);
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  batch.reset(all, 7, 0.1, 0.2);
  double max_dq = 0, max_v = 0;
  for (int k = 0; k < n * m.nq; ++k) max_dq = std::max(max_dq, std::abs(batch.q()[k] - 0.5));
  for (int k = 0; k < n * m.nv; ++k) max_v = std::max(max_v, std::abs(batch.v()[k]));
  CHECK(max_dq <= 0.1);
  CHECK(max_dq > 0.05);
  CHECK(max_v <= 0.2);
  CHECK(max_v > 0.1);
  batch.reset(all);  // back to the reference exactly
  CHECK(std::all_of(batch.q(), batch.q() + n * m.nq, [](double x) { return x == 0.5; }));
  CHECK_ERROR_MENTIONS(batch.reset(all, 7, -1.0), "noise");
}

TEST_CASE("a constrained model steps with its constraints: the dense solver gives the oracle's solution, per environment") {
  Model m = load_urdf_file(model_path("four_bar.urdf"));
  REQUIRE(m.constraint_rows > 0);
  std::mt19937 rng(907);
  const int n = Batch<double>::W + 1;
  Batch<double> batch(m, n, 2);
  batch.set_constraint_solver(ConstraintSolver::Dense);
  randomise(batch, rng);
  batch.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  Data<double> data(m);
  ConstrainedData<double> cdata(m);
  for (int e = 0; e < n; ++e) {
    const Eigen::VectorXd qdd = constrained_forward_dynamics(m, data, cdata, row(batch.q(), e, m.nq), row(batch.v(), e, m.nv),
                                                             row(batch.tau(), e, m.nv), batch.constraint_settings());
    CHECK(relative_error(row(batch.qdd(), e, m.nv), qdd) <= 1e-12);
    CHECK(relative_error(row(batch.constraint_forces(), e, m.constraint_rows), cdata.lambda) <= 1e-12);
    CHECK(batch.constraint_iterations()[static_cast<size_t>(e)] == cdata.iterations);
    CHECK(batch.constraint_residual()[static_cast<size_t>(e)] == cdata.residual_norm);
  }
  batch.set_use_constraints(false);  // the tree alone
  batch.forward_dynamics();
  CHECK(relative_error(row(batch.qdd(), 0, m.nv), aba(m, data, row(batch.q(), 0, m.nq), row(batch.v(), 0, m.nv), row(batch.tau(), 0, m.nv))) <= 1e-12);
}

TEST_CASE("a constrained model steps with LCABA by default: each environment's qdd is the dense oracle's") {
  std::mt19937 rng(908);
  for (const NamedModel& nm : constrained_models()) {
    if (nm.name == "scene hand_cube") continue;  // its accuracy at this penalty: tests/test_lcaba.cpp
    CAPTURE(nm.name);
    const Model& m = nm.model;
    const int n = Batch<double>::W + 3;
    Batch<double> batch(m, n, 2);
    CHECK(batch.constraint_solver() == ConstraintSolver::Lcaba);
    randomise(batch, rng);
    batch.forward_dynamics();
    Data<double> data(m);
    ConstrainedData<double> cdata(m);
    for (int e = 0; e < n; ++e) {
      // Computed; at a random state (the loops open) a slow mode may leave the 1e-13 test unmet
      // at the cap, which is reported, not a failure.
      const EnvStatus status = batch.status()[static_cast<size_t>(e)];
      REQUIRE((status == EnvStatus::Ok || status == EnvStatus::ConstraintNotConverged));
      CHECK((status == EnvStatus::ConstraintNotConverged) == !batch.constraint_converged()[static_cast<size_t>(e)]);
      const Eigen::VectorXd v = row(batch.v(), e, m.nv);
      const Eigen::VectorXd qdd = constrained_forward_dynamics(m, data, cdata, row(batch.q(), e, m.nq), v,
                                                               with_passive_forces(m, row(batch.q(), e, m.nq), v, row(batch.tau(), e, m.nv)),
                                                               batch.constraint_settings());
      CHECK(relative_error(row(batch.qdd(), e, m.nv), qdd) <= 1e-8);
      CHECK(batch.constraint_iterations()[static_cast<size_t>(e)] >= 1);
      CHECK(batch.constraint_residual()[static_cast<size_t>(e)] <= 1e-8 * (1 + qdd.cwiseAbs().maxCoeff()));
    }
  }
}

TEST_CASE("LCABA in the batch engine warm-starts from the last multipliers, and reset clears them") {
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("quadruped_feet.json"));
  std::mt19937 rng(909);
  Batch<double> batch(m, 3, 1);
  randomise(batch, rng);
  batch.forward_dynamics();
  const int cold = batch.constraint_iterations()[1];
  const Eigen::VectorXd qdd = row(batch.qdd(), 1, m.nv);
  batch.forward_dynamics();  // same state, warm start from the converged multipliers
  CHECK(batch.constraint_iterations()[1] < cold);
  CHECK(relative_error(row(batch.qdd(), 1, m.nv), qdd) <= 1e-9);
  CHECK(row(batch.constraint_forces(), 1, m.constraint_rows).norm() > 0);
  batch.reset(std::vector<int>{1});
  CHECK(row(batch.constraint_forces(), 1, m.constraint_rows).norm() == 0);
  CHECK(row(batch.constraint_forces(), 0, m.constraint_rows).norm() > 0);  // the others keep theirs
}
