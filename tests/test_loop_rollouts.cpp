// Rollouts of models with loops in step(): the loop solvers' stopping test
// (kernels/loops/loop_constraints.hpp: converged, settled or stalled), the reports it feeds
// (EnvStatus::ConstraintNotConverged, EnvStatus::LoopDrift), loop stabilisation
// (batch/loop_stabilisation.hpp) and random resets onto the loops (batch/resets.hpp).
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>
#include <type_traits>

#include "batch_helpers.hpp"
#include "helpers.hpp"
#include "kernels/tree/energy.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

Model humanoid_with_feet() { return free_robot_with_constraints("humanoid.urdf", "humanoid_feet.json"); }

// A scene file of models/scenes (robots holding objects).
Model scene(const char* name) { return load_scene_file(model_path(std::string("scenes/") + name + ".json")); }

// The loop stabilisation's Baumgarte rows instead of its velocity-level ones
// (LoopStabilisationSettings::velocity_level = false).
template <class Engine>
void use_acceleration_level(Engine& batch) {
  LoopStabilisationSettings settings = batch.loop_stabilisation();
  settings.velocity_level = false;
  batch.set_loop_stabilisation(settings);
}

// The gains (kp, kd) step() gives the constraints without gains at substep h.
void check_gains(const Batch<double>& batch, double h, double kp, double kd) {
  CAPTURE(h);
  const auto [actual_kp, actual_kd] = batch.loop_stabilisation_gains(h);
  CHECK(actual_kp == doctest::Approx(kp));
  CHECK(actual_kd == doctest::Approx(kd));
}

// The largest loop position error (m, rad) of q.
double loop_error(const Model& m, const Eigen::VectorXd& q) {
  ProjectionSettings once;
  once.max_iterations = 1;
  once.tolerance = 1e300;  // measures, does not move
  Eigen::VectorXd copy = q;
  return project_to_constraints(m, copy, once).residual;
}

// Iterations per step of `steps` steps of 1 ms at zero torque from W nearby starts: the
// reference state, and in environment e its last joint's velocity raised by e * 1e-9 rad/s.
// A passive robot falling from an unstable rest pose amplifies such a difference e-fold every
// few tens of ms, so the W lanes are W different rollouts by 0.5 s: the statistics below hold
// for the neighbourhood of the start, not for one lucky trajectory (the single-start version of
// this test passed on rounding luck). Their mean and largest, and the
// statuses seen. An environment's steps after it failed (a non-report status: nothing is
// computed for it any more) are not counted.
struct RolloutIterations {
  double mean = 0;
  int largest = 0;
  int not_ok = 0;
  int failed = 0;  // environments that failed
};
// `gains` false: the loop stabilisation's time constant 0 (velocity level: J v+ = 0).
template <class T>
RolloutIterations roll_out_from_rest(const Model& m, int steps, bool gains = true) {
  Batch<T> batch(m, Batch<T>::W, 1);  // the default solver and settings
  if (!gains) {
    LoopStabilisationSettings off = batch.loop_stabilisation();
    off.time_constant = 0;
    batch.set_loop_stabilisation(off);
  }
  std::vector<int> all(static_cast<size_t>(batch.num_envs()));
  std::iota(all.begin(), all.end(), 0);
  batch.reset(all);
  for (int e = 1; e < batch.num_envs(); ++e) batch.v()[static_cast<size_t>(e * m.nv + m.nv - 1)] += static_cast<T>(1e-9 * e);
  RolloutIterations r;
  long total = 0, counted = 0;
  std::vector<bool> failed(all.size(), false);
  for (int k = 0; k < steps; ++k) {
    batch.step(T(1e-3));
    for (int e = 0; e < batch.num_envs(); ++e) {
      const size_t i = static_cast<size_t>(e);
      if (failed[i]) continue;
      const EnvStatus status = batch.status()[i];
      if (status != EnvStatus::Ok && !is_report(status)) {
        failed[i] = true, ++r.failed;
        continue;
      }
      const int it = batch.constraint_iterations()[i];
      total += it, ++counted;
      r.largest = std::max(r.largest, it);
    }
    r.not_ok += batch.failed_count();
  }
  r.mean = static_cast<double>(total) / static_cast<double>(std::max(counted, 1L));
  return r;
}

}  // namespace

TEST_CASE("lcaba and proxbbo stop within a few iterations on inconsistent redundant rows, at the least-squares qdd") {
  // A loop closed twice, the second time 1 mm off, both with Baumgarte gains: built to be
  // inconsistent. The rows have no solution, the multipliers creep along null(K^T) for ever,
  // and only the stall test ends the iterations. Before it, both solvers ran to the cap.
  Model m = build_generated(generate_from_spec("cycle:5"));
  ConstraintSpec shifted = m.constraints.front().spec;
  shifted.name += "_shifted";
  shifted.placement2.xyz[0] += 1e-3;
  add_constraint(m, shifted, "test");
  for (Constraint& k : m.constraints) k.kp = 100.0, k.kd = 20.0;
  std::mt19937 rng(31);
  ProximalSettings lcaba_settings;
  lcaba_settings.mu = 1e4;
  for (int k = 0; k < 5; ++k) {
    const State s = random_state(m, rng);
    Data<double> data(m);
    ConstrainedData<double> cd(m);
    const Eigen::VectorXd dense = constrained_forward_dynamics(m, data, cd, s.q, s.v, s.tau, lcaba_settings);
    REQUIRE(cd.residual_norm > 1e-3);  // really inconsistent
    LcabaData<double> lcaba_data(m);
    CHECK(relative_error(lcaba(m, lcaba_data, s.q, s.v, s.tau, lcaba_settings), dense) <= 1e-7);
    CHECK(lcaba_data.converged);
    CHECK(lcaba_data.iterations <= 15);
    ProxBboData<double> proxbbo_data(m);
    CHECK(relative_error(proxbbo(m, proxbbo_data, s.q, s.v, s.tau), dense) <= 1e-7);
    CHECK(proxbbo_data.converged);
    CHECK(proxbbo_data.iterations <= 15);
    // In float the same test ends at float's resolution of the same solution (the rows are met
    // to 128 epsilon, and least squares amplifies that).
    ProximalSettings float_settings = lcaba_settings;
    float_settings.mu = Batch<float>::default_constraint_penalty();
    LcabaData<float> float_data(m);
    const Eigen::VectorXd in_float =
        lcaba(m, float_data, s.q.cast<float>().eval(), s.v.cast<float>().eval(), s.tau.cast<float>().eval(), float_settings).cast<double>();
    CHECK(relative_error(in_float, dense) <= 5e-4);
    CHECK(float_data.converged);
    CHECK(float_data.iterations <= 20);
  }
}

TEST_CASE("a loop solve whose violation stays within its plateau tolerance of its terms for a correction that takes less than a tenth off it stops there, converged") {
  // The plateau of the conjugate residual corrections at a loop near a singular pose
  // (LoopConvergence's floor test, ProximalSettings::plateau_tolerance; step() solves with
  // 1e-9): two Digits holding a box in double spent 20-30 corrections on one, at 5e-10 of
  // terms of 20 m/s^2.
  ProximalSettings settings;  // tolerance 1e-13
  settings.plateau_tolerance = 1e-9;
  const double magnitude = 19;      // the terms: 1 + magnitude = 20
  const double qdd[2] = {1.0, -2.0};
  const double large_step = 1.0;    // qdd still moving: not settled
  // Whether the solve goes on after a fast fall to `relative_violation` of the terms and then a
  // correction that takes 1 % off its 2-norm (or, with `fall`, half); and whether it counts as
  // converged.
  const auto plateau_at = [&](double relative_violation, const ProximalSettings& with, double fall = 0.01) {
    LoopConvergence<double> convergence(with);
    const double violation = relative_violation * (1 + magnitude), next = (1 - fall) * violation;
    CHECK(convergence.go_on(1, 1e-2, 1e-4, magnitude, 0.0, qdd, 2));
    CHECK(convergence.go_on(2, violation, 4 * violation * violation, magnitude, large_step, qdd, 2));  // a fast fall
    const bool goes_on = convergence.go_on(3, next, 4 * next * next, magnitude, large_step, qdd, 2);
    return std::pair{goes_on, convergence.converged() == 1.0};
  };
  SUBCASE("within the plateau tolerance: the lane stops, converged") { CHECK(plateau_at(5e-10, settings) == std::pair{false, true}); }
  SUBCASE("above it the corrections go on: the plateau may still fall") { CHECK(plateau_at(2e-9, settings) == std::pair{true, false}); }
  SUBCASE("a fall of more than a tenth goes on, however close to the tolerance") {
    CHECK(plateau_at(5e-10, settings, 0.5) == std::pair{true, false});
  }
  SUBCASE("with plateau tolerance 0 (the reference functions' and forward_dynamics()' default) only 10 x the tolerance") {
    ProximalSettings reference;
    CHECK(plateau_at(5e-10, reference) == std::pair{true, false});
    CHECK(plateau_at(5e-13, reference) == std::pair{false, true});
  }
}

TEST_CASE("a solve that the iteration cap ends is reported as ConstraintNotConverged, its results written") {
  const Model m = humanoid_with_feet();
  std::mt19937 rng(32);
  Batch<double> batch(m, Batch<double>::W + 1, 1);
  randomise(batch, rng);
  ProximalSettings one_pass = batch.constraint_settings();
  one_pass.max_iterations = 1;
  batch.set_constraint_settings(one_pass);
  batch.forward_dynamics();
  for (int e = 0; e < batch.num_envs(); ++e) {
    CAPTURE(e);
    CHECK(batch.status()[static_cast<size_t>(e)] == EnvStatus::ConstraintNotConverged);
    CHECK_FALSE(batch.constraint_converged()[static_cast<size_t>(e)]);
    CHECK(row(batch.qdd(), e, m.nv).allFinite());
  }
  batch.set_constraint_settings({});  // the default cap: converged, ok
  batch.forward_dynamics();
  CHECK(batch.failed_count() == 0);
}

TEST_CASE("with euler, step() holds loops without gains at the velocity level by default, J v+ = -e / T, T MuJoCo's time constant clamped to two steps") {
  const Model m = humanoid_with_feet();
  Batch<double> batch(m, 1, 1);
  CHECK(batch.loop_stabilisation().time_constant == 0.02);
  CHECK(batch.loop_stabilisation().velocity_level);
  CHECK(batch.integrator() == Integrator::SemiImplicitEuler);
  check_gains(batch, 1e-3, 5e4, 1e3);     // kp = 1 / (h T), kd = 1 / h, T = 0.02 s
  check_gains(batch, 0.05, 200.0, 20.0);  // T = 2 h = 0.1 s
  LoopStabilisationSettings off = batch.loop_stabilisation();
  off.time_constant = 0;
  batch.set_loop_stabilisation(off);
  CHECK(batch.loop_stabilisation_gains(1e-3) == std::pair<double, double>(0.0, 1e3));  // J v+ = 0
}

TEST_CASE("with velocity_level off, or with rk4, step() gives loops without gains Baumgarte gains: critically damped with time constant T") {
  const Model m = humanoid_with_feet();
  Batch<double> batch(m, 1, 1);
  CHECK(batch.loop_stabilisation().damping_ratio == 1.0);
  use_acceleration_level(batch);
  CHECK(batch.loop_stabilisation_gains(1e-3).first == doctest::Approx(2500.0));
  LoopStabilisationSettings velocity_level = batch.loop_stabilisation();
  velocity_level.velocity_level = true;
  batch.set_loop_stabilisation(velocity_level);
  batch.set_integrator(Integrator::RungeKutta4);  // RK4 keeps the Baumgarte rows
  check_gains(batch, 1e-3, 2500.0, 100.0);  // T = 0.02 s
  check_gains(batch, 0.05, 100.0, 20.0);    // T = 2 h = 0.1 s
  LoopStabilisationSettings off = batch.loop_stabilisation();
  off.time_constant = 0;
  batch.set_loop_stabilisation(off);
  CHECK(batch.loop_stabilisation_gains(1e-3) == std::pair<double, double>(0.0, 0.0));
  LoopStabilisationSettings bad = batch.loop_stabilisation();
  bad.damping_ratio = 0;
  CHECK(error_of([&] { batch.set_loop_stabilisation(bad); }).find("damping ratio") != std::string::npos);
  bad = batch.loop_stabilisation();
  bad.time_constant = std::nan("");
  CHECK(error_of([&] { batch.set_loop_stabilisation(bad); }).find("time constant") != std::string::npos);
}

TEST_CASE("step() uses the stabilising gains and forward_dynamics() the file's: each is the dense oracle's with those gains") {
  const Model m = humanoid_with_feet();
  std::mt19937 rng(33);
  State s = state_on_loops(m, rng);
  integrate<double>(m, Eigen::VectorXd(s.q), Eigen::VectorXd::Constant(m.nv, 0.01), s.q);  // off the loops by ~1 cm
  for (const auto& [velocity_level, stepping] : {std::pair{false, false}, std::pair{false, true}, std::pair{true, true}}) {
    CAPTURE(velocity_level);
    CAPTURE(stepping);
    Model stabilised = m;  // step() at h = 1 ms: Baumgarte rows, or with euler the velocity-level J qdd = -(1/h) J v - (1/(h T)) e
    for (Constraint& k : stabilised.constraints)
      k.kp = velocity_level ? 5e4 : 2500.0, k.kd = velocity_level ? 1e3 : 100.0, k.velocity_level = velocity_level;
    Batch<double> batch(m, 1, 1);
    LoopStabilisationSettings stabilisation = batch.loop_stabilisation();
    stabilisation.velocity_level = velocity_level;
    batch.set_loop_stabilisation(stabilisation);
    batch.set_passive_forces(false);
    batch.set_constraint_solver(ConstraintSolver::ProxBbo);
    set_row(batch, 0, s.q, s.v);
    std::copy(s.tau.data(), s.tau.data() + m.nv, batch.tau());
    if (stepping) batch.step(1e-3);
    else batch.forward_dynamics();
    Data<double> data(stepping ? stabilised : m);
    ConstrainedData<double> cd(stepping ? stabilised : m);
    ProximalSettings settings;
    settings.mu = 1e6;
    const Eigen::VectorXd dense = constrained_forward_dynamics(stepping ? stabilised : m, data, cd, s.q, s.v, s.tau, settings);
    CHECK(relative_error(row(batch.qdd(), 0, m.nv), dense) <= 1e-7);
  }
}

TEST_CASE("with euler, the velocity a step ends with meets the velocity-level rows at the step's start, J v+ = -e' / T, with every loop solver") {
  // The defining property of the velocity-level form, checked against the dense constraint
  // kinematics at the start state (J, e) off the loops by ~1 cm and moving; joint limits and
  // damping off so that v+ = v + h qdd is the loop solver's alone.
  const Model m = humanoid_with_feet();
  std::mt19937 rng(35);
  State s = state_on_loops(m, rng);
  integrate<double>(m, Eigen::VectorXd(s.q), Eigen::VectorXd::Constant(m.nv, 0.01), s.q);
  s.v = Eigen::VectorXd::NullaryExpr(m.nv, [&] { return std::normal_distribution<double>(0.0, 0.5)(rng); });
  Data<double> data(m);
  ConstraintData<double> rows(m);
  constraint_kinematics(m, data, rows, s.q, s.v);
  REQUIRE(rows.position_error.cwiseAbs().maxCoeff() > 5e-3);
  REQUIRE((rows.J * s.v).cwiseAbs().maxCoeff() > 0.1);
  for (const ConstraintSolver solver : {ConstraintSolver::Lcaba, ConstraintSolver::ProxBbo, ConstraintSolver::Dense}) {
    for (const double time_constant : {0.02, 0.0}) {
      CAPTURE(static_cast<int>(solver));
      CAPTURE(time_constant);
      Batch<double> batch(m, 1, 1);
      batch.set_passive_forces(false);
      ContactSettings no_limits = batch.contact_settings();
      no_limits.joint_limits = false;
      batch.set_contact_settings(no_limits);
      batch.set_constraint_solver(solver);
      LoopStabilisationSettings settings = batch.loop_stabilisation();
      settings.time_constant = time_constant;
      batch.set_loop_stabilisation(settings);
      set_row(batch, 0, s.q, s.v);
      batch.step(1e-3);
      REQUIRE((batch.status()[0] == EnvStatus::Ok || batch.status()[0] == EnvStatus::LoopDrift));  // stepped
      const Eigen::VectorXd corrected = rows.position_error.unaryExpr([](double e) { return velocity_level_position_error(e); });
      const Eigen::VectorXd target = time_constant > 0 ? Eigen::VectorXd(-corrected / time_constant) : Eigen::VectorXd::Zero(m.constraint_rows);
      CHECK((rows.J * row(batch.v(), 0, m.nv) - target).cwiseAbs().maxCoeff() <= 1e-7);
    }
  }
}

TEST_CASE("velocity-level rows correct the position error above its rounding floor of 64 epsilons, continuously") {
  // Below the floor the error is the rounding of the log6 and of the placements, and its
  // inconsistency between nearly redundant rows made the loop solvers creep
  // (kernels/loops/velocity_level_rows.hpp).
  const double floor = 64 * std::numeric_limits<double>::epsilon();
  CHECK(velocity_level_position_error(0.0) == 0.0);
  CHECK(velocity_level_position_error(0.5 * floor) == 0.0);
  CHECK(velocity_level_position_error(-floor) == 0.0);
  CHECK(velocity_level_position_error(1e-3) == doctest::Approx(1e-3 - floor).epsilon(1e-15));
  CHECK(velocity_level_position_error(-1e-3) == doctest::Approx(-1e-3 + floor).epsilon(1e-15));
  const float float_floor = 64 * std::numeric_limits<float>::epsilon();  // 7.6e-6 m or rad
  CHECK(velocity_level_position_error(0.9f * float_floor) == 0.0f);
  CHECK(velocity_level_position_error(2 * float_floor) == doctest::Approx(float_floor));
  // On lanes, each lane as on its own (the kernels' form: no branch on values).
  using Lanes = SimdLane<float>;
  alignas(64) float errors[lane_width<Lanes>], corrected[lane_width<Lanes>];
  for (int l = 0; l < lane_width<Lanes>; ++l) errors[l] = static_cast<float>(l - 2) * float_floor;
  LaneTraits<Lanes>::store(velocity_level_position_error(LaneTraits<Lanes>::load(errors)), corrected);
  for (int l = 0; l < lane_width<Lanes>; ++l) CHECK(corrected[l] == velocity_level_position_error(errors[l]));
}

TEST_CASE("with euler, passive robots whose closed chains pass through singular poses keep their energy at or below the start") {
  // A welded leg straightening or a four-bar at its toggle: J̇v / σ_min grows without bound
  // there, and the acceleration-level rows put it into v+ in one step. At the reference state,
  // zero torque, the defaults (LCABA, joint limits, damping), 1 ms: the acceleration-level rows
  // overflowed the two Digits holding a box at 2.18 s in double (2100 J gained in the step a
  // knee straightened), the humanoid holding a cube with welded feet at 3.49 s (double) and
  // 1.57 s (float), the four-bar biped at 2.56 s / 2.45 s. Velocity-level rows project the
  // free velocity onto the loops: the energy only falls (the robots collapse onto their stops).
  const std::vector<std::tuple<std::string, Model, int>> cases = {
      {"biped_fourbar_feet", free_robot_with_constraints("biped_fourbar.urdf", "biped_fourbar_feet.json"), 4000},
      {"humanoid_hands_cube_feet", scene("humanoid_hands_cube_feet"), 4000},
      {"two_digits_box", scene("two_digits_box"), 3000}};
  const auto energy_rise = [](const Model& m, auto& batch, int steps) {
    using T = typename std::decay_t<decltype(batch)>::T;
    Data<double> data(m);
    const auto energy = [&] { return mechanical_energy(m, data, row(batch.q(), 0, m.nq), row(batch.v(), 0, m.nv)); };
    const double start = energy();
    double rise = -std::numeric_limits<double>::infinity();
    for (int k = 1; k <= steps; ++k) {
      batch.step(T(1e-3));
      REQUIRE(!(batch.status()[0] != EnvStatus::Ok && !is_report(batch.status()[0])));  // never fails
      if (k % 10 == 0) rise = std::max(rise, energy() - start);
    }
    return rise;
  };
  for (const auto& [name, model, steps] : cases) {
    CAPTURE(name);
    Batch<double> in_double(model, 1, 1);
    in_double.reset(std::vector<int>{0});
    CHECK(energy_rise(model, in_double, steps) <= 1e-6);
    Batch<float> in_float(model, 1, 1);
    in_float.reset(std::vector<int>{0});
    CHECK(energy_rise(model, in_float, steps) <= 0.05);  // float's rounding of q at rest
  }
}

TEST_CASE("a constraint whose file gives gains, even 0, keeps them in step()") {
  Model m = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json(m, R"({"constraints": [
      {"name": "left", "type": "weld", "link1": "left_sole", "link2": "world", "placement2": "hold", "kp": 0, "kd": 0},
      {"name": "right", "type": "weld", "link1": "right_sole", "link2": "world", "placement2": "hold"}]})",
                            "test");
  CHECK(m.constraints[0].spec.gains_given);
  CHECK_FALSE(m.constraints[1].spec.gains_given);
  LoopStabilisation<double> stage(m);
  CHECK(stage.stabilised_constraints() == std::vector<int>{1});
}

TEST_CASE("stabilisation closes a loop opened by 1 cm within a few time constants, and without it the error stays") {
  const Model m = humanoid_with_feet();
  std::mt19937 rng(34);
  State s = state_on_loops(m, rng);
  s.v.setZero();
  s.q[2] += 0.01;  // the base 1 cm up: both soles 1 cm off their welds
  for (const bool stabilised : {true, false}) {
    CAPTURE(stabilised);
    Batch<double> batch(m, 1, 1);
    if (!stabilised) {
      LoopStabilisationSettings off = batch.loop_stabilisation();
      off.time_constant = 0;
      batch.set_loop_stabilisation(off);
    }
    set_row(batch, 0, s.q, s.v);
    for (int k = 0; k < 200; ++k) batch.step(1e-3);  // 10 time constants
    const double error = loop_error(m, row(batch.q(), 0, m.nq));
    if (stabilised) CHECK(error < 1e-3);  // closed to what the collapsing humanoid's motion reopens each step
    else CHECK(error > 0.009);
  }
}

TEST_CASE("an environment off its loops by more than the drift tolerance is reported as LoopDrift, alone") {
  const Model m = humanoid_with_feet();
  Batch<double> batch(m, 3, 1);
  std::vector<int> all{0, 1, 2};
  batch.reset(all);
  batch.q()[1 * m.nq + 2] += 0.05;  // environment 1's base 5 cm up
  batch.step(1e-3);
  CHECK(batch.status()[0] == EnvStatus::Ok);
  CHECK(batch.status()[1] == EnvStatus::LoopDrift);
  CHECK(batch.status()[2] == EnvStatus::Ok);
  CHECK(batch.loop_drift()[1] == doctest::Approx(0.05).epsilon(1e-3));
  CHECK(batch.loop_drift()[0] < 1e-9);
  LoopStabilisationSettings looser = batch.loop_stabilisation();
  looser.drift_tolerance = 0.1;
  batch.set_loop_stabilisation(looser);
  batch.step(1e-3);
  CHECK(batch.failed_count() == 0);
  looser.drift_tolerance = std::numeric_limits<double>::infinity();  // not measured
  batch.set_loop_stabilisation(looser);
  batch.step(1e-3);
  CHECK(batch.loop_drift()[1] == 0.0);
}

TEST_CASE("random resets put the states of a model with loops on its loops, positions and velocities") {
  const Model m = humanoid_with_feet();
  Batch<double> batch(m, 4, 2);
  std::vector<int> all{0, 1, 2, 3};
  batch.reset(all, 7, 0.1, 1.0);
  for (int e = 0; e < 4; ++e) {
    CAPTURE(e);
    const Eigen::VectorXd q = row(batch.q(), e, m.nq), v = row(batch.v(), e, m.nv);
    CHECK(loop_error(m, q) < 1e-9);
    Data<double> data(m);
    ConstraintData<double> rows(m);
    constraint_kinematics(m, data, rows, q, v);
    CHECK((rows.J * v).cwiseAbs().maxCoeff() < 1e-9);
    CHECK(v.cwiseAbs().maxCoeff() > 0.1);  // the velocity noise is still there, along the loops
  }
  // The draw depends only on (seed, environment): a second batch with one thread agrees.
  Batch<double> other(m, 4, 1);
  other.reset(all, 7, 0.1, 1.0);
  CHECK(std::equal(batch.q(), batch.q() + 4 * m.nq, other.q()));
  CHECK(std::equal(batch.v(), batch.v() + 4 * m.nv, other.v()));
}

namespace {

// The models of the rollout probe (bench/loop_rollouts.cpp).
std::vector<std::pair<std::string, Model>> rollout_models() {
  return {{"humanoid_feet_hands", free_robot_with_constraints("humanoid.urdf", "humanoid_feet_hands.json")},
          {"quadruped_feet", free_robot_with_constraints("quadruped.urdf", "quadruped_feet.json")},
          {"biped_fourbar_feet", free_robot_with_constraints("biped_fourbar.urdf", "biped_fourbar_feet.json")},
          {"cassie_v2", load_sdf_file(model_path("cassie_v2.sdf"), RootJoint::FreeFlyer)},
          {"digit_feet", free_robot_with_constraints("digit.urdf", "digit_feet.json")},
          {"two_digits_box", scene("two_digits_box")},
          {"hand_cube", scene("hand_cube")},
          {"two_hands_cube", scene("two_hands_cube")},
          {"humanoid_hands_cube", scene("humanoid_hands_cube")},
          {"humanoid_hands_cube_feet", scene("humanoid_hands_cube_feet")}};
}

}  // namespace

TEST_CASE("rollouts from rest of welded robots, Cassie, Digit and held objects converge in a few iterations per step for 1000 steps, with and without gains, in double and float") {
  // The rollout probe: zero torque, 1000 steps of 1 ms, every environment from near rest (the
  // model's reference_q, or its neutral pose projected onto the loops), joint limits on (the
  // default: after the loop solver, with the loops held), the loops at the velocity level (the
  // default), with the default time constant and with 0 (no position term). Before the stall
  // test and stabilisation, the float humanoid with feet and hands averaged 12.8 iterations;
  // before the conjugate residual corrections, the quadruped spiked to the cap; before the joint
  // limits ran with the loop solver, passive Digit, the two Digits holding a box and two hands
  // holding a cube folded through their joint stops and failed at 0.5-0.9 s; before the floor
  // test (LoopConvergence), the grips spiked to 22-37 iterations creeping along their rounding
  // floor; before the velocity-level rows left the position error's rounding floor alone
  // (kernels/loops/velocity_level_rows.hpp), the float humanoid holding a cube took 6.0 on average and
  // 32 at most; before step() stopped plateaus within 1e-9 of the terms
  // (LoopStabilisationSettings::plateau_tolerance), the two Digits holding a box in double reached 28-52
  // near their knees' singular pose. The targets: mean <= 5, never above 20, no reports.
  for (const auto& [name, model] : rollout_models()) {
    CAPTURE(name);
    for (const bool gains : {true, false}) {
      CAPTURE(gains);
      for (const RolloutIterations& r : {roll_out_from_rest<float>(model, 1000, gains), roll_out_from_rest<double>(model, 1000, gains)}) {
        CAPTURE(r.mean);
        CAPTURE(r.largest);
        CHECK(r.mean <= 5);
        CHECK(r.largest <= 20);
        CHECK(r.not_ok == 0);  // no cap hit, no drift
        CHECK(r.failed == 0);
      }
    }
  }
}

TEST_CASE("a batch starts and resets at its constraint file's reference_q, where the file's held loops are closed") {
  // quadruped_feet.json welds the feet where they are at its reference_q (the base 0.32 m up,
  // legs bent); the neutral pose is 0.5 m off those welds.
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("quadruped_feet.json"));
  REQUIRE(m.reference_configuration.size() == static_cast<size_t>(m.nq));
  CHECK(m.reference_configuration[2] == 0.32);
  Batch<double> batch(m, 3, 1);
  for (int e = 0; e < 3; ++e) CHECK(loop_error(m, row(batch.q(), e, m.nq)) < 1e-12);  // the constructor's state
  batch.q()[2] += 0.1;
  batch.reset(std::vector<int>{0});
  CHECK(loop_error(m, row(batch.q(), 0, m.nq)) < 1e-12);
  for (int k = 0; k < 100; ++k) batch.step(1e-3);
  CHECK(batch.failed_count() == 0);  // no LoopDrift report: the rollout starts on the loops
  CHECK(humanoid_with_feet().reference_configuration.empty());  // "reference_q": "neutral"
}
