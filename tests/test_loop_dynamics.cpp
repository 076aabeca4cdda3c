// The loop kernels, LCABA (kernels/loops/lcaba.hpp) and proxBBO (kernels/loops/proxbbo.hpp), and their
// plans, against the dense oracle of kernels/loops/constrained_dynamics.hpp (CRBA, RNEA, constraint
// Jacobians, proximal KKT solve): the shipped loop models, random trees with random internal
// and external constraints of all three types, redundant rows and singular poses.
#include "batch/batch.hpp"
#include "batch/batched_eval.hpp"
#include "batch/throughput.hpp"
#include "batch_helpers.hpp"
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

struct Outcome {
  Eigen::VectorXd qdd, lambda;
  int iterations = 0;
  double residual = 0;
};

Outcome dense_solution(const Model& m, const State& s, const ProximalSettings& settings = {}) {
  Data<double> data(m);
  ConstrainedData<double> cd(m);
  Outcome o;
  o.qdd = constrained_forward_dynamics(m, data, cd, s.q, s.v, s.tau, settings);
  o.lambda = cd.lambda;
  o.iterations = cd.iterations;
  o.residual = cd.residual_norm;
  return o;
}

// The penalty the comparisons use. LCABA's accuracy falls as mu grows (lcaba-proxbbo §VI-D:
// mu K^T K swamps light links' inertia in the recursion); 1e4 keeps every model but the
// light-fingered hand within 1e-8 in a few iterations (see the hand's own test below).
ProximalSettings lcaba_settings(double mu = 1e4) {
  ProximalSettings s;
  s.mu = mu;
  return s;
}

Outcome lcaba_solution(const Model& m, const State& s, const ProximalSettings& settings = lcaba_settings()) {
  LcabaData<double> data(m);
  Outcome o;
  o.qdd = lcaba(m, data, s.q, s.v, s.tau, settings);
  o.lambda = data.lambda;
  o.iterations = data.iterations;
  o.residual = data.residual;
  return o;
}

Outcome proxbbo_solution(const Model& m, const State& s, const ProximalSettings& settings = {}) {
  ProxBboData<double> data(m);
  Outcome o;
  o.qdd = proxbbo(m, data, s.q, s.v, s.tau, settings);
  o.lambda = data.lambda;
  o.iterations = data.iterations;
  o.residual = data.residual;
  return o;
}

// Unconstrained acceleration of the tree (ABA), to show the constraints act.
Eigen::VectorXd tree_acceleration(const Model& m, const State& s) {
  Data<double> data(m);
  return aba(m, data, s.q, s.v, s.tau);
}

}  // namespace

TEST_CASE("lcaba plan: without loops the elimination order is ABA's (n-1 down to 1) and nothing couples") {
  for (const NamedModel& nm : tree_models()) {
    CAPTURE(nm.name);
    const LcabaPlan plan = plan_lcaba(nm.model);
    std::vector<int> expected;
    for (int i = nm.model.num_bodies() - 1; i >= 1; --i) expected.push_back(i);
    CHECK(plan.elimination_order == expected);
    CHECK(plan.max_neighbours == 0);
    CHECK(plan.num_slots() == 0);
  }
}

TEST_CASE("lcaba plan: the paper's Fig. 4 mechanism eliminates by minimum degree and couples at most two links") {
  // Eleven links: 1-2-3-4-5-6, 3-7-8, 1-9-10-11 (a tree), cut joints 6&8 and 8&11.
  const int parent_of[12] = {0, 0, 1, 2, 3, 4, 5, 3, 7, 1, 9, 10};
  std::ostringstream x;
  x << "<robot name=\"fig4\"><link name=\"base\"/>";
  for (int i = 1; i <= 11; ++i)
    x << "<link name=\"l" << i << "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.1\" "
      << "iyz=\"0\" izz=\"0.1\"/></inertial></link><joint name=\"j" << i << "\" type=\"continuous\"><parent link=\""
      << (parent_of[i] == 0 ? std::string("base") : "l" + std::to_string(parent_of[i])) << "\"/><child link=\"l" << i
      << "\"/><origin xyz=\"0.1 0 0\"/><axis xyz=\"0 0 1\"/></joint>";
  x << "</robot>";
  Model m = load_urdf_string(x.str(), RootJoint::Fixed, "fig4");
  add_constraint(m, ConstraintSpec{"c68", ConstraintType::Connect, "l6", "l8", {}, {}, {0, 0, 1}, 0, 0});
  add_constraint(m, ConstraintSpec{"c811", ConstraintType::Connect, "l8", "l11", {}, {}, {0, 0, 1}, 0, 0});
  auto body = [&](int link) { return m.body_index("l" + std::to_string(link)); };
  const LcabaPlan plan = plan_lcaba(m);
  // The first link eliminated is a leaf with one neighbour (6 or 11), never 8 (two).
  const int first = plan.elimination_order.front();
  CHECK((first == body(6) || first == body(11)));
  CHECK(plan.max_neighbours == 2);
  // Every link appears once, after all of its children.
  for (int i = 1; i <= 11; ++i)
    if (parent_of[i] != 0) CHECK(plan.step_of_body[static_cast<size_t>(body(i))] < plan.step_of_body[static_cast<size_t>(body(parent_of[i]))]);
  CHECK(plan.elimination_order.size() == 11);
}

TEST_CASE("lcaba plan: a constraint to the world couples nothing") {
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("quadruped_feet.json"));
  const LcabaPlan plan = plan_lcaba(m);
  CHECK(plan.max_neighbours == 0);
  CHECK(plan.num_slots() == 0);
}

TEST_CASE("lcaba plan: every link's H_ii starts once, copied before the sweep or formed by the first carry into it") {
  std::mt19937 rng(17);
  std::vector<NamedModel> models = constrained_models();
  for (int trial = 0; trial < 20; ++trial) {
    Model m = random_tree(rng, std::uniform_int_distribution<int>(3, 14)(rng), trial % 2 ? RootJoint::FreeFlyer : RootJoint::Fixed);
    add_random_constraints(m, rng, std::uniform_int_distribution<int>(1, 4)(rng));
    models.push_back({"random " + std::to_string(trial), m});
  }
  for (const NamedModel& nm : models) {
    CAPTURE(nm.name);
    const Model& m = nm.model;
    const LcabaPlan plan = plan_lcaba(m);
    std::vector<int> starts(static_cast<size_t>(m.num_bodies()), 0);
    for (int b : plan.inertia_copied) ++starts[static_cast<size_t>(b)];
    for (int i = 1; i < m.num_bodies(); ++i)
      if (plan.carry_starts_parent[static_cast<size_t>(i)]) {
        const int parent = m.bodies[i].parent;
        ++starts[static_cast<size_t>(parent)];
        // That child is the parent's first child in the elimination order.
        for (int j : m.bodies[parent].children) CHECK(plan.step_of_body[static_cast<size_t>(i)] <= plan.step_of_body[static_cast<size_t>(j)]);
      }
    for (int b = 1; b < m.num_bodies(); ++b) CHECK(starts[static_cast<size_t>(b)] == 1);
    // Whatever is written before any carry is copied: leaves and every constrained link.
    auto copied = [&](int b) { return std::binary_search(plan.inertia_copied.begin(), plan.inertia_copied.end(), b); };
    for (int b = 1; b < m.num_bodies(); ++b)
      if (m.bodies[b].children.empty()) CHECK(copied(b));
    for (const Constraint& c : m.constraints)
      for (int b : {c.body1, c.body2})
        if (b != 0) CHECK(copied(b));
  }
}

TEST_CASE("lcaba without constraints equals ABA") {
  std::mt19937 rng(3);
  for (const NamedModel& nm : tree_models()) {
    CAPTURE(nm.name);
    const State s = random_state(nm.model, rng);
    CHECK(relative_error(lcaba_solution(nm.model, s).qdd, tree_acceleration(nm.model, s)) <= 1e-12);
  }
}

TEST_CASE("lcaba equals the dense oracle on every shipped and generated loop model") {
  std::mt19937 rng(11);
  for (const NamedModel& nm : constrained_models()) {
    CAPTURE(nm.name);
    // The hand's 10-gram finger links reach 1e6 rad/s^2 under the random torques: see below.
    const double tolerance = nm.name == "scene hand_cube" ? 1e-5 : 1e-8;
    for (int k = 0; k < 3; ++k) {
      const State s = random_state(nm.model, rng);
      const Outcome dense = dense_solution(nm.model, s), recursive = lcaba_solution(nm.model, s);
      CHECK(relative_error(recursive.qdd, dense.qdd) <= tolerance);
      CHECK(recursive.residual <= 1e-9 * (1 + dense.qdd.cwiseAbs().maxCoeff()));
      CHECK(relative_error(recursive.qdd, tree_acceleration(nm.model, s)) > 1e-6);  // the constraints act
    }
  }
}

TEST_CASE("lcaba equals the dense oracle on random trees with random internal and external constraints") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int links = std::uniform_int_distribution<int>(3, 14)(rng);
    Model m = random_tree(rng, links, trial % 3 == 0 ? RootJoint::FreeFlyer : RootJoint::Fixed);
    add_random_constraints(m, rng, std::uniform_int_distribution<int>(1, 4)(rng));
    const State s = random_state(m, rng);
    const Outcome dense = dense_solution(m, s), recursive = lcaba_solution(m, s);
    CHECK(relative_error(recursive.qdd, dense.qdd) <= 1e-7);
  }
}

TEST_CASE("lcaba loses accuracy as the penalty grows on light links, and is exact for a moderate one (paper §VI-D)") {
  const Model m = load_scene_file(model_path("scenes/hand_cube.json"));
  std::mt19937 rng(2);
  const State s = random_state(m, rng);
  const Eigen::VectorXd expected = dense_solution(m, s).qdd;
  const double moderate = relative_error(lcaba_solution(m, s, lcaba_settings(1e2)).qdd, expected);
  const double stiff = relative_error(lcaba_solution(m, s, lcaba_settings(1e6)).qdd, expected);
  CHECK(moderate <= 1e-9);
  CHECK(stiff > 100 * moderate);
}

TEST_CASE("lcaba converges to the least-squares acceleration for redundant and inconsistent rows") {
  // The same weld twice (redundant rows), and the planar four-bar closed by a 6D weld (rows
  // without a solution away from the loop's manifold): the dense oracle's least-squares qdd.
  std::mt19937 rng(8);
  Model twice = build_generated(generate_from_spec("cycle:5"));
  ConstraintSpec copy = twice.constraints.front().spec;
  copy.name += "_again";
  add_constraint(twice, copy, "test");
  Model four_bar = load_urdf_file(model_path("four_bar.urdf"));
  // Both solvers reach the least-squares qdd only to ~1e-9..1e-7 on inconsistent rows (the
  // oracle's own accuracy there, kernels/loops/constrained_dynamics.hpp), hence 1e-7.
  for (const Model* m : {&twice, &four_bar}) {
    for (int k = 0; k < 3; ++k) {
      const State s = random_state(*m, rng);
      CHECK(relative_error(lcaba_solution(*m, s).qdd, dense_solution(*m, s, lcaba_settings()).qdd) <= 1e-7);
    }
  }
}

TEST_CASE("lcaba with Baumgarte gains matches the dense oracle's stabilised rows") {
  std::mt19937 rng(4);
  Model m = build_generated(generate_from_spec("loop_chain:3:4"));
  for (Constraint& c : m.constraints) c.kp = 100.0, c.kd = 20.0;
  for (int k = 0; k < 3; ++k) {
    const State s = random_state(m, rng);  // random q: the loops are open, the position errors large
    CHECK(relative_error(lcaba_solution(m, s).qdd, dense_solution(m, s).qdd) <= 1e-8);
  }
}

TEST_CASE("lcaba's multipliers are the dense oracle's for independent rows, and warm-starting from them takes one pass") {
  std::mt19937 rng(6);
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("quadruped_feet.json"));
  const State s = random_state(m, rng);
  const Outcome dense = dense_solution(m, s);
  LcabaData<double> data(m);
  lcaba(m, data, s.q, s.v, s.tau, lcaba_settings());
  CHECK(relative_error(data.lambda, dense.lambda) <= 1e-7);
  const int cold = data.iterations;
  lcaba(m, data, s.q, s.v, s.tau, lcaba_settings());  // warm start from the converged lambda
  CHECK(data.iterations < cold);
  CHECK(data.iterations <= 2);
}

TEST_CASE("proxbbo plan: every loop's multipliers are eliminated once, at its root (or with the world's)") {
  for (const NamedModel& nm : constrained_models()) {
    CAPTURE(nm.name);
    const Model& m = nm.model;
    const ProxBboPlan plan = plan_proxbbo(m);
    const LoopAnalysis loops = analyze_loops(m);
    std::vector<int> eliminated(m.constraints.size(), 0);
    for (int i = 1; i < m.num_bodies(); ++i)
      for (int t = plan.entry_begin[static_cast<size_t>(i)]; t < plan.entry_begin[static_cast<size_t>(i)] + plan.r_count[static_cast<size_t>(i)]; ++t) {
        const int j = plan.entries[static_cast<size_t>(t)].loop;
        CHECK(loops.loops[static_cast<size_t>(j)].root == i);
        ++eliminated[static_cast<size_t>(j)];
      }
    for (int j : plan.world_loops) {
      CHECK(loops.loops[static_cast<size_t>(j)].root == 0);
      ++eliminated[static_cast<size_t>(j)];
    }
    for (int count : eliminated) CHECK(count == 1);
    // A link carries exactly the loops it supports (LS(i)) past its own elimination.
    for (int i = 1; i < m.num_bodies(); ++i) {
      std::vector<int> passed;
      for (int t = plan.entry_begin[static_cast<size_t>(i)] + plan.r_count[static_cast<size_t>(i)]; t < plan.entry_begin[static_cast<size_t>(i) + 1]; ++t)
        passed.push_back(plan.entries[static_cast<size_t>(t)].loop);
      CHECK(passed == loops.loops_of_body[static_cast<size_t>(i)]);
    }
  }
}

TEST_CASE("proxbbo equals the dense oracle on every shipped and generated loop model, at the stiff default mu") {
  std::mt19937 rng(21);
  for (const NamedModel& nm : constrained_models()) {
    CAPTURE(nm.name);
    for (int k = 0; k < 3; ++k) {
      const State s = random_state(nm.model, rng);
      const Outcome dense = dense_solution(nm.model, s), recursive = proxbbo_solution(nm.model, s);
      CHECK(relative_error(recursive.qdd, dense.qdd) <= 1e-8);
      CHECK(recursive.residual <= 1e-8 * (1 + dense.qdd.cwiseAbs().maxCoeff()));
    }
  }
}

TEST_CASE("proxbbo equals the dense oracle on random trees with random internal and external constraints") {
  std::mt19937 rng(25);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int links = std::uniform_int_distribution<int>(3, 14)(rng);
    Model m = random_tree(rng, links, trial % 3 == 0 ? RootJoint::FreeFlyer : RootJoint::Fixed);
    add_random_constraints(m, rng, std::uniform_int_distribution<int>(1, 4)(rng));
    const State s = random_state(m, rng);
    CHECK(relative_error(proxbbo_solution(m, s).qdd, dense_solution(m, s).qdd) <= 1e-7);
  }
}

TEST_CASE("proxbbo keeps its accuracy where a stiff penalty ruins LCABA's (paper §VI-D)") {
  const Model m = load_scene_file(model_path("scenes/hand_cube.json"));
  std::mt19937 rng(2);
  const State s = random_state(m, rng);
  const Eigen::VectorXd expected = dense_solution(m, s).qdd;
  CHECK(relative_error(proxbbo_solution(m, s, lcaba_settings(1e6)).qdd, expected) <= 1e-8);
  CHECK(relative_error(lcaba_solution(m, s, lcaba_settings(1e6)).qdd, expected) > 1e-4);
}

TEST_CASE("lcaba, proxbbo and the dense oracle agree with each other, multipliers included, for independent rows") {
  std::mt19937 rng(26);
  Model m = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(m, model_path("humanoid_feet_hands.json"));
  for (int k = 0; k < 3; ++k) {
    const State s = random_state(m, rng);
    const Outcome dense = dense_solution(m, s), a = lcaba_solution(m, s), b = proxbbo_solution(m, s);
    CHECK(relative_error(a.qdd, b.qdd) <= 1e-8);
    CHECK(relative_error(b.qdd, dense.qdd) <= 1e-8);
    CHECK(relative_error(b.lambda, dense.lambda) <= 1e-6);
    CHECK(relative_error(a.lambda, b.lambda) <= 1e-6);
  }
}

TEST_CASE("project_to_constraints closes the loops of the shipped and generated models from random configurations") {
  // The biped's four-bar knees with welded feet converge only linearly (to ~1e-7 in 100
  // iterations), as do Cassie's loops from far-off random poses (to 1e-8..1e-10): those must
  // reduce the error a thousandfold. The generated welded branches and stem have isolated
  // solutions a random start may not reach (which one it heads for changes with the compiler's
  // rounding): there the backtracking must at least not increase the error (beyond its last,
  // 2^-29-long step).
  std::mt19937 rng(31);
  for (const NamedModel& nm : constrained_models()) {
    CAPTURE(nm.name);
    const bool must_close = nm.name != "biped_fourbar+feet" && nm.name != "gen:branching:3:4" && nm.name != "gen:stem:8:3:2" &&
                            nm.name.rfind("cassie", 0) != 0;
    for (int k = 0; k < 3; ++k) {
      Eigen::VectorXd q = random_state(nm.model, rng).q;
      const Eigen::VectorXd at_rest = Eigen::VectorXd::Zero(nm.model.nv);
      Data<double> data(nm.model);
      ConstraintData<double> rows(nm.model);
      constraint_kinematics(nm.model, data, rows, q, at_rest);
      const double before = rows.position_error.cwiseAbs().maxCoeff();
      const ProjectionReport report = project_to_constraints(nm.model, q);
      constraint_kinematics(nm.model, data, rows, q, at_rest);  // an independent look at the result
      const double after = rows.position_error.cwiseAbs().maxCoeff();
      CHECK(after == doctest::Approx(report.residual));
      if (must_close) {
        CHECK(report.converged);
        CHECK(after <= 1e-10);
      } else if (nm.name == "gen:branching:3:4" || nm.name == "gen:stem:8:3:2") {
        CHECK(after <= before * (1 + 1e-9));
      } else {
        CHECK(after <= 1e-3 * before);
      }
    }
  }
}

TEST_CASE("project_to_constraints leaves a configuration on the manifold where it is, and checks the size of q") {
  const Model m = load_urdf_file(model_path("four_bar.urdf"));
  std::mt19937 rng(32);
  Eigen::VectorXd q = random_state(m, rng).q;
  project_to_constraints(m, q);
  const Eigen::VectorXd closed = q;
  const ProjectionReport again = project_to_constraints(m, q);
  CHECK(again.iterations == 0);
  CHECK((q - closed).norm() == 0.0);
  Eigen::VectorXd wrong(m.nq + 1);
  CHECK_ERROR_MENTIONS(project_to_constraints(m, wrong), "nq");
}

TEST_CASE("lcaba and proxbbo meet the rows and equal the null-space KKT solution on the Table II-shaped models at states on their loops") {
  // Hands, humanoid and Digits hold what they hold where it is at the neutral pose, so the
  // states start there (state_on_loops). The grips' rows are nearly redundant (two hands: G's
  // three smallest eigenvalues 9e-11, 2e-10, 9e-9 of the largest ~1), and the dense proximal
  // oracle crawls along them: after its 100 iterations at mu = 1e4 it leaves the rows violated
  // by 0.18 and q̈ 62 % off (two Digits: 3e-4 and 10 %), and even 1e5 iterations at mu = 1e10
  // do not converge. So the oracle here is the equality-constrained Gauss problem solved directly
  // (kkt_solution: the null space of J by SVD). The conjugate residual corrections reach it to
  // rounding, and stay there when every correction runs (tolerance 0).
  std::vector<NamedModel> models;
  for (const char* scene : {"two_hands_cube", "humanoid_hands_cube", "humanoid_hands_cube_feet", "two_digits_box"})
    models.push_back({scene, load_scene_file(model_path(std::string("scenes/") + scene + ".json"))});
  Model digit = load_urdf_file(model_path("digit.urdf"), RootJoint::FreeFlyer);
  add_constraints_from_json_file(digit, model_path("digit_feet.json"));
  models.push_back({"digit+feet", digit});
  ProximalSettings every_correction = lcaba_settings();
  every_correction.tolerance = 0;
  std::mt19937 rng(23);
  for (const NamedModel& nm : models) {
    CAPTURE(nm.name);
    const Model& m = nm.model;
    const State s = state_on_loops(m, rng);
    const KktSolution exact = kkt_solution(m, s);
    REQUIRE(exact.residual <= 1e-9);  // the rows are consistent
    for (const ProximalSettings& settings : {lcaba_settings(), every_correction}) {
      CAPTURE(settings.tolerance);
      const Outcome by_lcaba = lcaba_solution(m, s, settings), by_proxbbo = proxbbo_solution(m, s, settings);
      CHECK(relative_error(by_lcaba.qdd, exact.qdd) <= 1e-8);
      CHECK(relative_error(by_proxbbo.qdd, exact.qdd) <= 1e-8);
      CHECK(by_lcaba.residual <= 1e-10);
      CHECK(by_proxbbo.residual <= 1e-10);
      CHECK(by_lcaba.iterations <= (settings.tolerance > 0 ? 20 : 100));
    }
    // step()'s plateau tolerance (LoopStabilisationSettings: 1e-9 of the terms) trades the
    // corrections along the grips' nearly redundant directions for q̈ within 1e-6 of the exact
    // solution (measured: two hands 3e-8 with LCABA, 5e-7 with proxBBO, rows met to 1.4e-8 and
    // 2.5e-7 m/s^2), in no more corrections.
    ProximalSettings at_plateau = lcaba_settings();
    at_plateau.plateau_tolerance = 1e-9;
    const Outcome strict = lcaba_solution(m, s);
    for (const Outcome& o : {lcaba_solution(m, s, at_plateau), proxbbo_solution(m, s, at_plateau)}) {
      CHECK(relative_error(o.qdd, exact.qdd) <= 1e-6);
      CHECK(o.residual <= 1e-6);
    }
    CHECK(lcaba_solution(m, s, at_plateau).iterations <= strict.iterations);
    CHECK(relative_error(exact.qdd, tree_acceleration(m, s)) > 1e-6);  // the constraints act
  }
}

TEST_CASE("forward_dynamics() solves the loops to the tolerance, step() stops them on plateaus within the stabilisation's plateau tolerance") {
  // Two hands holding a cube, at a state on its loops: LCABA creeps along the grip's nearly
  // redundant rows, and a plateau tolerance of 1e-9 stops it with the rows met to ~1e-8 m/s^2
  // instead of 1e-10 (previous test case). forward_dynamics() is the reference's dynamics: it
  // takes the constraint settings' plateau tolerance (0 by default), never the stabilisation's.
  const Model m = load_scene_file(model_path("scenes/two_hands_cube.json"));
  std::mt19937 rng(23);
  const State s = state_on_loops(m, rng);
  Batch<double> batch(m, 1, 1);
  CHECK(batch.loop_stabilisation().plateau_tolerance == 1e-9);
  CHECK(batch.constraint_settings().plateau_tolerance == 0);
  // One cold solve (a new engine: no warm start) with these settings: its residual and iterations.
  const auto solve = [&](const LoopStabilisationSettings& stabilisation, const ProximalSettings& settings) {
    Batch<double> fresh(m, 1, 1);
    fresh.set_loop_stabilisation(stabilisation);
    fresh.set_constraint_settings(settings);
    set_row(fresh, 0, s.q, s.v);
    std::copy(s.tau.data(), s.tau.data() + m.nv, fresh.tau());
    fresh.forward_dynamics();
    return std::pair{static_cast<double>(fresh.constraint_residual()[0]), fresh.constraint_iterations()[0]};
  };
  const auto [residual, iterations] = solve(batch.loop_stabilisation(), batch.constraint_settings());
  CHECK(residual <= 1e-10);
  LoopStabilisationSettings coarse = batch.loop_stabilisation();
  coarse.plateau_tolerance = 1e-3;
  CHECK(solve(coarse, batch.constraint_settings()) == std::pair{residual, iterations});  // bit for bit: not read
  ProximalSettings at_plateau = batch.constraint_settings();
  at_plateau.plateau_tolerance = 1e-9;
  const auto [plateau_residual, plateau_iterations] = solve(batch.loop_stabilisation(), at_plateau);
  CHECK(plateau_residual > residual);
  CHECK(plateau_residual <= 1e-6);
  CHECK(plateau_iterations < iterations);
  LoopStabilisationSettings negative = batch.loop_stabilisation();
  negative.plateau_tolerance = -1;
  CHECK_ERROR_MENTIONS(batch.set_loop_stabilisation(negative), "plateau tolerance must be finite and >= 0");
  at_plateau.plateau_tolerance = std::nan("");
  CHECK_ERROR_MENTIONS(batch.set_constraint_settings(at_plateau), "plateau tolerance must be finite and >= 0");
}

TEST_CASE("lcaba and proxbbo converge in a few corrections on nearly redundant rows, where the proximal iteration crawls") {
  // Two points of a chain's tip 1 mm apart, each held by a connect: the six rows fix the tip and
  // its rotation about two axes through a 1 mm lever. G has an exactly redundant row and an
  // eigenvalue ~1e-5 of the largest; at rest the rows are consistent. The proximal point
  // iteration (the dense oracle at mu = 1e4) converges by 1 / (1 + mu sigma) ~ 0.9 per
  // iteration along it and is still 1e-5..1e-2 off after 100.
  Model m = build_generated(generate_from_spec("chain:6"));
  ConstraintSpec tip;
  tip.name = "tip";
  tip.type = ConstraintType::Connect;
  tip.link1 = "link6";
  tip.link2 = "world";
  add_constraint(m, tip, "test");
  ConstraintSpec beside = tip;
  beside.name = "tip_1mm_beside";
  beside.placement1.xyz[1] = 1e-3;
  add_constraint(m, beside, "test");
  std::mt19937 rng(41);
  for (int k = 0; k < 5; ++k) {
    CAPTURE(k);
    State s = random_state(m, rng);
    s.v.setZero();
    const KktSolution exact = kkt_solution(m, s);
    REQUIRE(exact.residual <= 1e-12);
    // The case is hard for the plain iteration: the dense oracle's 100 proximal iterations at
    // the same mu stop short (measured 2.5e-6..2.2e-2 off).
    CHECK(relative_error(dense_solution(m, s, lcaba_settings()).qdd, exact.qdd) > 1e-6);
    const Outcome by_lcaba = lcaba_solution(m, s), by_proxbbo = proxbbo_solution(m, s);
    CHECK(relative_error(by_lcaba.qdd, exact.qdd) <= 1e-9);
    CHECK(by_lcaba.iterations <= 8);
    CHECK(relative_error(by_proxbbo.qdd, exact.qdd) <= 1e-9);
    CHECK(by_proxbbo.iterations <= 8);
    // Float, at Batch<float>'s penalty: to float's resolution of this ill-conditioned problem.
    ProximalSettings float_settings;
    float_settings.mu = Batch<float>::default_constraint_penalty();
    LcabaData<float> in_float(m);
    const Eigen::VectorXd qdd_float =
        lcaba(m, in_float, s.q.cast<float>().eval(), s.v.cast<float>().eval(), s.tau.cast<float>().eval(), float_settings).cast<double>();
    CHECK(relative_error(qdd_float, exact.qdd) <= 1e-2);
    CHECK(in_float.iterations <= 10);
  }
}

// The flop counts of bench/ and `batchdyn bench` (batch/throughput.hpp), and the rule they rest
// on: the loop kernels branch only on the plan, never on the state.
TEST_CASE("lcaba and proxbbo count the same flops at any state, and every correction costs the same") {
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    for (const bool proxbbo : {false, true}) {
      CAPTURE(proxbbo);
      long count[4] = {};  // count[k]: k sweeps
      for (int k = 1; k <= 3; ++k) {
        count[k] = loop_dynamics_flops(m.model, k, proxbbo).total();
        CHECK(loop_dynamics_flops(m.model, k, proxbbo, 7).total() == count[k]);
      }
      // Every correction costs the same: the conjugate residual method runs the same arithmetic
      // from its first direction on (kernels/loops/conjugate_residual.hpp).
      CHECK(count[2] > count[1]);
      CHECK(count[3] - count[2] == count[2] - count[1]);
    }
    // The first pass is ABA plus the loops' terms and couplings: dearer than ABA, cheaper than
    // four ABAs on every model here (1.3x on the humanoid with its feet, 3.9x on the ladder; the
    // paper's 1.8-2.1x is in time). The coordinate-axis joints cut the tree's part of both by the
    // same flops and left the loops' terms as they were, so the ratio grew from 1.2-2.8x.
    const long aba = aba_flops(m.model).total(), lcaba = loop_dynamics_flops(m.model, 1).total();
    CHECK(lcaba > aba);
    CHECK(lcaba < 4 * aba);
  }
}

TEST_CASE("eval's reference settings: LCABA, proxBBO and the batched engine reach Pinocchio's precision on the hand holding a cube, scalar = batched") {
  // With the simulation's loose tolerance LCABA stopped 1e-6 off here; `batchdyn eval` solves to
  // a 1e-13 relative tolerance (reference_settings), as Pinocchio's solvers do.
  const Model m = load_scene_file(model_path("scenes/hand_cube.json"));
  std::mt19937 rng(55);
  EnvironmentStates states;
  std::vector<KktSolution> exact;
  for (int e = 0; e < Batch<double>::W + 1; ++e) {
    const State s = state_on_loops(m, rng);
    states.q.push_back(s.q), states.v.push_back(s.v), states.tau.push_back(s.tau);
    exact.push_back(kkt_solution(m, s));
    REQUIRE(exact.back().residual <= 1e-9);
  }
  for (Algorithm algorithm : {Algorithm::Lcaba, Algorithm::ProxBbo}) {
    CAPTURE(std::string(algorithm_name(algorithm)));
    const ProximalSettings settings = reference_settings(algorithm);
    const std::vector<EnvironmentResult> scalar = evaluate_reference(m, algorithm, states, settings);
    const std::vector<EnvironmentResult> batched = evaluate_batched(m, algorithm, states, settings, false);
    for (size_t e = 0; e < scalar.size(); ++e) {
      CAPTURE(e);
      REQUIRE(scalar[e].ok());
      REQUIRE(batched[e].ok());
      CHECK(scalar[e].converged);
      CHECK(scalar[e].residual <= 1e-9);  // m/s^2, on terms of ~1e2: the relative 1e-13 of the stopping test
      CHECK(relative_error(scalar[e].qdd, exact[e].qdd) <= 1e-9);
      CHECK(relative_error(batched[e].qdd, scalar[e].qdd) <= 1e-10);
    }
  }
}
