// Contact on robots with kinematic loops: the loop constraints as bilateral rows of the contact
// problem (kernels/contact/frictional_contact.hpp, kernels/contact/contact_admm.hpp, batch/contact_solving.hpp).
// Against closed forms (bilateral rows alone are a linear solve; a welded pair of boxes carries
// its whole weight on the ground and moves as one rigid body in flight), against the dense
// reference contact step (kernels/contact/contact_step.hpp), and lanes against W = 1, on the welded
// pair and on Cassie (SDF loops: four welds of 24 rows, rank 22, free root on the ground).
#include "batch_helpers.hpp"
#include "kernels/contact/contact_admm.hpp"
#include "kernels/contact/contact_step.hpp"
#include "kernels/loops/independent_loop_rows.hpp"
#include "topology/scene.hpp"
#include "topology/sdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

// A base box (2 kg) with a mast box (0.5 kg) welded on it off-centre: a loop between two free
// bodies. Only the base has collision geometry.
Model welded_pair() {
  return load_scene_json(R"({
    "name": "welded_pair",
    "boxes": [{"name": "base", "mass": 2.0, "size": [0.3, 0.2, 0.1], "root": "free", "placement": {"xyz": [0, 0, 0.05]}},
              {"name": "mast", "mass": 0.5, "size": [0.04, 0.04, 0.3], "root": "free", "placement": {"xyz": [0.1, 0.05, 0.25]}}],
    "reference_q": "neutral",
    "constraints": [{"name": "glue", "type": "weld", "link1": "mast", "link2": "base", "placement2": "hold"}],
    "contacts": {"friction": 0.8, "geometries": [{"name": "base", "link": "base", "box": {"size": [0.3, 0.2, 0.1]}}]}})",
                         "welded_pair.json", ".");
}


// Cassie's neutral configuration lies 0.61 rad beyond the upper limits of both tarsus cranks
// and both feet, joints its plantar-rod loops tie together: there the limit rows and the loop
// rows cannot all hold (an infeasible problem: the solver hit its cap). limited_joints
// (topology/contact_plan.hpp) now leaves those four out; its tests here still run without
// joint limits, as written.
void without_joint_limits(ContactSettings& settings) { settings.joint_limits = false; }

// Free-flyer k's world rotation (7 coordinates per free body: x y z, quaternion x y z w).
Eigen::Matrix3d rotation(const Eigen::VectorXd& q, int k) {
  return Eigen::Quaterniond(q[7 * k + 6], q[7 * k + 3], q[7 * k + 4], q[7 * k + 5]).toRotationMatrix();
}

// The world placement of body 2 (the mast) seen from body 1 (the base): constant while the weld holds.
Eigen::Matrix4d base_from_mast(const Model& m, const Eigen::VectorXd& q) {
  Data<double> data(m);
  forward_kinematics(m, data, q);
  const Transformd X = data.world_from_body[1].inverse() * data.world_from_body[2];
  Eigen::Matrix4d out = Eigen::Matrix4d::Identity();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) out(r, c) = X.rotation(r, c);
    out(r, 3) = X.translation[r];
  }
  return out;
}

}  // namespace

TEST_CASE("contact ADMM: bilateral rows alone are a linear solve, G lambda = -g") {
  const int m = 5;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::MatrixXd A = Eigen::MatrixXd::NullaryExpr(m, m, [&] { return u(rng); });
  const Eigen::MatrixXd G = A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(m, m);
  const Eigen::VectorXd g = Eigen::VectorXd::NullaryExpr(m, [&] { return u(rng); });
  ContactSolverWorkspace<double> ws = rows_problem(G, g);
  ContactSettings settings;
  settings.tolerance = 1e-12, settings.max_iterations = 10000;
  std::vector<double> lambda(m, 0.0);
  const ContactSolverReport<double> report = contact_admm(0, 0, m, settings, ws, lambda.data());
  CHECK(report.converged == 1.0);
  const Eigen::VectorXd expected = G.ldlt().solve(-g);
  for (int i = 0; i < m; ++i) CHECK(lambda[static_cast<size_t>(i)] == doctest::Approx(expected[i]).epsilon(1e-8));
}

TEST_CASE("contact ADMM: a bilateral row takes a negative impulse where a limit row would stop at zero") {
  // One row, G = 2, g = 1: the bilateral row needs lambda = -0.5 (sigma = 0); a unilateral
  // row separates instead (lambda = 0, sigma = 1 >= 0).
  ContactSettings settings;
  settings.tolerance = 1e-12;
  for (const bool bilateral : {true, false}) {
    CAPTURE(bilateral);
    ContactSolverWorkspace<double> ws(0, 1);
    ws.G[0] = 2.0, ws.g[0] = 1.0, ws.in_contact[0] = 1.0;
    double lambda = 0.0;
    const ContactSolverReport<double> report = contact_admm(0, bilateral ? 0 : 1, bilateral ? 1 : 0, settings, ws, &lambda);
    CHECK(report.converged == 1.0);
    CHECK(lambda == doctest::Approx(bilateral ? -0.5 : 0.0).scale(1.0));
  }
}

TEST_CASE("independent loop rows: Cassie keeps 22 of its 24, the welded pair its 6, and a weld given twice is kept once") {
  const auto count = [](const std::vector<char>& kept) { return std::count(kept.begin(), kept.end(), 1); };
  CHECK(count(independent_loop_rows(cassie())) == 22);
  const Model pair = welded_pair();
  CHECK(count(independent_loop_rows(pair)) == 6);
  Model twice = pair;
  add_constraints_from_json(twice, R"({"constraints": [{"name": "again", "type": "weld", "link1": "mast", "link2": "base", "placement2": "hold"}]})",
                            "again.json");
  REQUIRE(twice.constraint_rows == 12);
  const std::vector<char> kept = independent_loop_rows(twice);
  CHECK(count(kept) == 6);
  for (int r = 0; r < 6; ++r) CHECK(kept[static_cast<size_t>(r)] + kept[static_cast<size_t>(r + 6)] == 1);  // each row once
}

TEST_CASE("step() with contacts and loops: off by default, and once on the loops are rows of the contact problem") {
  const Model m = welded_pair();
  Batch<double> batch(m, 2, 1);
  CHECK(batch.constrained());
  CHECK_FALSE(batch.contacts());
  batch.set_contacts(true);
  CHECK(batch.contacts());
  batch.step(1e-3);
  for (int e = 0; e < 2; ++e) {
    CHECK(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    CHECK(batch.constraint_iterations()[static_cast<size_t>(e)] == batch.contact_iterations()[static_cast<size_t>(e)]);
    CHECK(batch.contact_iterations()[static_cast<size_t>(e)] > 0);
  }
  batch.set_contacts(false);  // the loop solver (LCABA) again, at the acceleration level
  CHECK_FALSE(batch.contacts());
  batch.step(1e-3);
  CHECK(batch.status()[0] == EnvStatus::Ok);
}

TEST_CASE("step() with contacts and loops: a welded pair resting on the ground carries its whole weight there, the weld holds over 10^4 steps") {
  const Model m = welded_pair();
  Batch<double> batch(m, 1, 1);
  batch.set_contacts(true);
  const Eigen::VectorXd q0 = row(batch.q(), 0, m.nq);
  const Eigen::Matrix4d glued = base_from_mast(m, q0);
  for (int s = 0; s < 10000; ++s) batch.step(1e-3);
  REQUIRE(batch.status()[0] == EnvStatus::Ok);
  const Eigen::VectorXd q = row(batch.q(), 0, m.nq);
  CHECK((base_from_mast(m, q) - glued).cwiseAbs().maxCoeff() < 1e-6);
  CHECK(std::abs(q[2] - q0[2]) < 1e-4);                        // the base neither sinks nor rises
  CHECK((row(batch.v(), 0, m.nv)).cwiseAbs().maxCoeff() < 1e-5);  // at rest (the solver's tolerance)
  double normal = 0.0;
  for (int k = 0; k < batch.contact_candidates(); ++k) normal += batch.contact_forces()[3 * k + 2];
  CHECK(normal == doctest::Approx(2.5 * kG).epsilon(1e-4));
  // The weld holds the mast up: its vertical force row (frame 1 is the mast's, axes world's
  // here) carries the mast's weight.
  CHECK(std::abs(batch.constraint_forces()[2]) == doctest::Approx(0.5 * kG).epsilon(1e-4));
}

TEST_CASE("step() with contacts and loops: in flight the weld's impulses are internal (momentum changes by gravity alone) and the weld holds") {
  // Semi-implicit Euler on local-frame free-flyer velocities: over one step at configuration q,
  // the world momentum sum_i m_i R_i(q) v_i changes by h (m g - sum_i m_i R_i (w_i x v_i)) and
  // by whatever the impulses do, which must be nothing (equal and opposite at the weld).
  const Model m = welded_pair();
  Batch<double> batch(m, 1, 1);
  batch.set_contacts(true);
  Eigen::VectorXd q = row(batch.q(), 0, m.nq), v(m.nv);
  q[2] += 2.0, q[9] += 2.0;  // both boxes 2 m up
  v << 0.3, -0.2, 0.5, 0.4, -0.1, 0.2, -0.3, 0.1, 0.2, 0.0, 0.3, -0.5;  // not a rigid motion of the pair: the first step makes it one
  set_row(batch, 0, q, v);
  const double masses[2] = {2.0, 0.5}, h = 1e-3;
  const auto momentum = [&](const Eigen::VectorXd& at, const Eigen::VectorXd& velocity) {  // world frame, rotations at `at`
    Eigen::Vector3d p = Eigen::Vector3d::Zero();
    for (int k = 0; k < 2; ++k) p += masses[k] * rotation(at, k) * velocity.segment<3>(6 * k);
    return p;
  };
  const Eigen::Matrix4d glued = base_from_mast(m, q);
  for (int s = 0; s < 300; ++s) {
    const Eigen::VectorXd q_before = row(batch.q(), 0, m.nq), v_before = row(batch.v(), 0, m.nv);
    batch.step(h);
    REQUIRE(batch.status()[0] == EnvStatus::Ok);
    Eigen::Vector3d expected = momentum(q_before, v_before) + Eigen::Vector3d(0, 0, -2.5 * kG * h);
    for (int k = 0; k < 2; ++k)
      expected -= h * masses[k] * rotation(q_before, k) * v_before.segment<3>(6 * k + 3).cross(v_before.segment<3>(6 * k));
    CHECK((momentum(q_before, row(batch.v(), 0, m.nv)) - expected).cwiseAbs().maxCoeff() < 1e-12);
  }
  CHECK((base_from_mast(m, row(batch.q(), 0, m.nq)) - glued).cwiseAbs().maxCoeff() < 1e-4);
}

TEST_CASE("step() with contacts and loops: one step equals the dense reference contact step (a welded pair and Cassie landing)") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Model& m : {welded_pair(), cassie()}) {
    CAPTURE(m.name);
    const int N = 4;
    ScalarBatch<double> batch(m, N, 1);
    batch.set_contacts(true);
    batch.set_passive_forces(false);  // the reference has no damping
    ContactSettings settings = batch.contact_settings();
    settings.tolerance = 1e-11, settings.max_iterations = 5000;
    if (m.name == "cassie") without_joint_limits(settings);
    batch.set_contact_settings(settings);
    ContactSettings reference = settings;
    reference.max_iterations = 50000, reference.tolerance = 1e-12;
    std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> states;
    for (int e = 0; e < N; ++e) {
      Eigen::VectorXd q = row(batch.q(), e, m.nq);
      const Eigen::Quaterniond tilt(Eigen::AngleAxisd(0.1 * u(rng), Eigen::Vector3d::UnitX()) * Eigen::AngleAxisd(0.1 * u(rng), Eigen::Vector3d::UnitY()));
      q.segment<4>(3) = tilt.coeffs();
      REQUIRE(project_to_constraints(m, q).converged);  // tilting the root opened the welded pair's loop
      q = touching(m, q, 0.002 * std::abs(u(rng)));
      Eigen::VectorXd v = 0.2 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return u(rng); });
      v[2] = -0.5;
      set_row(batch, e, q, v);
      states.emplace_back(q, v);
    }
    batch.step(2e-3);
    Data<double> data(m);
    for (int e = 0; e < N; ++e) {
      CAPTURE(e);
      REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
      const auto& [q, v] = states[static_cast<size_t>(e)];
      const ContactStepResult r = dense_contact_step(with_step_loop_gains(batch, 2e-3), data, q, v, Eigen::VectorXd::Zero(m.nv), 2e-3, reference);
      REQUIRE(r.converged);
      CHECK_FALSE(r.active.empty());
      CHECK(static_cast<int>(r.loop_rows.size()) == (m.name == "cassie" ? 22 : 6));  // an independent subset
      CHECK((row(batch.v(), e, m.nv) - r.v).cwiseAbs().maxCoeff() < 1e-7);
      CHECK((row(batch.q(), e, m.nq) - r.q).cwiseAbs().maxCoeff() < 1e-9);
    }
  }
}

TEST_CASE("step() with contacts and loops: SIMD lanes equal W = 1 over 40 steps of Cassie dropped on the ground (double 1e-12, float 1e-5)") {
  const Model m = cassie();
  const int N = 4;
  const auto run = [&](auto& batch) {
    batch.set_contacts(true);
    ContactSettings settings = batch.contact_settings();
    without_joint_limits(settings);
    settings.max_iterations = 100;  // a landing on 8 cylinders' 128 candidates: the cap bounds the test's time, not the equivalence
    batch.set_contact_settings(settings);
    Eigen::VectorXd q0 = row(batch.q(), 0, m.nq);
    REQUIRE(project_to_constraints(m, q0).converged);
    for (int e = 0; e < N; ++e) {
      const Eigen::VectorXd q = touching(m, q0, -0.004 * e);  // from 0 to 1.6 cm above the ground
      Eigen::VectorXd v = Eigen::VectorXd::Zero(m.nv);
      v[0] = 0.1 * (e % 3), v[2] = -0.3;
      set_row(batch, e, q, v);
    }
    for (int s = 0; s < 40; ++s) batch.step(1e-3f);
  };
  check_lanes_equal_w1(m, N, false, run);
}

TEST_CASE("step() with contacts and loops: the loop rows take the loop stabilisation's time constant, J v+ = -e / T") {
  const Model m = welded_pair();
  for (double T : {0.02, 0.1}) {
    CAPTURE(T);
    ScalarBatch<double> batch(m, 1, 1);
    batch.set_contacts(true);
    LoopStabilisationSettings stabilisation = batch.loop_stabilisation();
    stabilisation.time_constant = T;
    batch.set_loop_stabilisation(stabilisation);
    ContactSettings settings = batch.contact_settings();
    settings.tolerance = 1e-12, settings.max_iterations = 5000;
    batch.set_contact_settings(settings);
    Eigen::VectorXd q = row(batch.q(), 0, m.nq);
    q[7] += 0.001;  // the mast 1 mm along x: the weld is off by that
    set_row(batch, 0, q, Eigen::VectorXd::Zero(m.nv));
    batch.step(1e-3);
    REQUIRE(batch.status()[0] == EnvStatus::Ok);
    Data<double> data(m);
    ConstraintData<double> loop(m);
    const Eigen::VectorXd v = row(batch.v(), 0, m.nv);
    constraint_kinematics(m, data, loop, q, v);
    REQUIRE(loop.position_error.cwiseAbs().maxCoeff() > 5e-4);
    CHECK((loop.J * v + loop.position_error / T).cwiseAbs().maxCoeff() < 1e-8);
  }
}
