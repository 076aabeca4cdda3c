// Joint limits on robots with kinematic loops, in step() without contacts: the loop solver
// (LCABA) first, then the limits with the loops held (LoopRows::Hold,
// kernels/contact/frictional_contact.hpp; the loop rows eliminated, kernels/loops/held_loops.hpp). Against the
// Schur complement of the dense problem, the dense reference contact step (loops and limits as
// rows of one problem, kernels/contact/contact_step.hpp), the loop solver's own result where no limit is
// near, lanes against W = 1, and a passive Digit whose welded feet made it fold through its
// limits.
#include <numeric>

#include "batch_helpers.hpp"
#include "kernels/contact/contact_step.hpp"
#include "kernels/tree/crba.hpp"
#include "kernels/loops/held_loops.hpp"
#include "topology/contact_plan.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

Model digit_feet() { return free_robot_with_constraints("digit.urdf", "digit_feet.json"); }

// A random symmetric positive definite m x m matrix, row-major.
std::vector<double> random_spd(int m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::MatrixXd A = Eigen::MatrixXd::NullaryExpr(m, m, [&] { return u(rng); });
  const Eigen::MatrixXd G = A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(m, m);
  std::vector<double> out(static_cast<size_t>(m * m));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) out[static_cast<size_t>(i * m + j)] = G(i, j);
  return out;
}

Eigen::MatrixXd as_matrix(const std::vector<double>& G, int m) {
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(G.data(), m, m);
}

// The largest distance (rad or m) by which environment e's 1-dof joints lie beyond their limits.
template <class Engine>
double worst_limit_violation(const Engine& batch, int e) {
  const Model& m = batch.model();
  double worst = 0;
  for (const LimitedJoint& joint : limited_joints(m)) {
    const double q = static_cast<double>(batch.q()[static_cast<size_t>(e) * m.nq + joint.coordinate]);
    worst = std::max({worst, joint.lower - q, q - joint.upper});
  }
  return worst;
}

// A passive rollout of `steps` steps of 1 ms from the reference state, `limits` on or off: the
// largest limit violation, the loop solver's largest iterations, whether the state stayed finite.
struct PassiveRollout {
  double worst_violation = 0;
  int largest_iterations = 0;
  bool failed = false;
};
template <class T>
PassiveRollout passive_rollout(const Model& m, bool limits, int steps) {
  Batch<T> batch(m, 1, 1);
  ContactSettings settings = batch.contact_settings();
  settings.joint_limits = limits;
  batch.set_contact_settings(settings);
  PassiveRollout r;
  for (int k = 0; k < steps && !r.failed; ++k) {
    batch.step(T(1e-3));
    const EnvStatus status = batch.status()[0];
    r.failed = status != EnvStatus::Ok && !is_report(status);
    r.worst_violation = std::max(r.worst_violation, worst_limit_violation(batch, 0));
    r.largest_iterations = std::max(r.largest_iterations, batch.constraint_iterations()[0]);
  }
  return r;
}

// The exact velocity after one step of h from rest at q (zero torque, no damping) with the
// loops held (J_loop v+ = 0) and, when dof >= 0, that joint's velocity set to `target` (an
// active limit): v+ minimises (v - v_free)^T M (v - v_free) / 2 on those rows, by the null space
// of the rows (SVD: exactly redundant loop rows count once).
Eigen::VectorXd exact_velocity_from_rest(const Model& m, const Eigen::VectorXd& q, double h, int dof, double target) {
  Data<double> data(m);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m.nv);
  const Eigen::MatrixXd M = crba(m, data, q).selfadjointView<Eigen::Upper>();
  const Eigen::VectorXd v_free = -h * M.ldlt().solve(nonlinear_effects(m, data, q, zero));
  ConstraintData<double> rows(m);
  constraint_kinematics(m, data, rows, q, zero);
  Eigen::MatrixXd A = rows.J;
  Eigen::VectorXd a = Eigen::VectorXd::Zero(A.rows());
  if (dof >= 0) {
    A.conservativeResize(A.rows() + 1, Eigen::NoChange);
    A.row(A.rows() - 1).setZero();
    A(A.rows() - 1, dof) = 1.0;
    a.conservativeResize(a.size() + 1);
    a[a.size() - 1] = target;
  }
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
  svd.setThreshold(1e-10);
  const Eigen::VectorXd particular = svd.solve(a);
  const Eigen::MatrixXd Z = svd.matrixV().rightCols(m.nv - svd.rank());
  const Eigen::VectorXd y = (Z.transpose() * M * Z).ldlt().solve(Z.transpose() * M * (v_free - particular));
  return particular + Z * y;
}

}  // namespace

TEST_CASE("held loops: the limit rows' problem is the Schur complement G_ll - G_lL G_LL^-1 G_Ll, and the loop impulses keep the loop rows still") {
  std::mt19937 rng(5);
  const int l = 3, b = 7, m = l + b;
  std::vector<double> G = random_spd(m, rng);
  const Eigen::MatrixXd dense = as_matrix(G, m);
  const Eigen::MatrixXd Gll = dense.topLeftCorner(l, l), GlL = dense.topRightCorner(l, b), GLL = dense.bottomRightCorner(b, b);
  const Eigen::MatrixXd expected = Gll - GlL * GLL.ldlt().solve(GlL.transpose());
  std::vector<double> scale(static_cast<size_t>(b)), factor(static_cast<size_t>(b * m)), column(static_cast<size_t>(b)), residual(column.size());
  eliminate_held_loop_rows(l, b, m, G.data(), scale.data(), factor.data(), column.data(), residual.data());
  for (int r = 0; r < l; ++r)
    for (int c = 0; c < l; ++c) CHECK(G[static_cast<size_t>(r * l + c)] == doctest::Approx(expected(r, c)).epsilon(1e-6));
  std::vector<double> impulses(static_cast<size_t>(m), 0.0);
  impulses[0] = 0.7, impulses[1] = -0.2, impulses[2] = 1.3;
  held_loop_impulses(l, b, m, G.data(), scale.data(), impulses.data());
  const Eigen::VectorXd lambda = Eigen::Map<const Eigen::VectorXd>(impulses.data(), m);
  const Eigen::VectorXd loop_velocity = dense.bottomRows(b) * lambda;  // J_loop dv of both impulses
  CHECK(loop_velocity.cwiseAbs().maxCoeff() < 1e-6 * lambda.cwiseAbs().maxCoeff() * dense.cwiseAbs().maxCoeff());
}

TEST_CASE("held loops: a loop row no motion moves (a diagonal at rounding level, even negative) leaves the elimination finite and the others exact") {
  // Digit's welded feet: rows whose G_ii is 1e-16 of the largest, with rounding noise around
  // them. Scaling such a row to a unit diagonal made the damped factor break down (inf, NaN).
  std::mt19937 rng(9);
  const int l = 2, b = 6, m = l + b;
  std::vector<double> G = random_spd(m, rng);
  const int dead = l + 3;  // a loop row: zero but for rounding noise
  std::uniform_real_distribution<double> noise(-1e-14, 1e-14);
  for (int j = 0; j < m; ++j) {
    const double value = j == dead ? -1e-15 : noise(rng);
    G[static_cast<size_t>(dead * m + j)] = G[static_cast<size_t>(j * m + dead)] = value;
  }
  Eigen::MatrixXd dense = as_matrix(G, m);
  std::vector<int> live;
  for (int i = l; i < m; ++i)
    if (i != dead) live.push_back(i);
  Eigen::MatrixXd GLL(live.size(), live.size()), GlL(l, live.size());
  for (size_t a = 0; a < live.size(); ++a) {
    for (size_t c = 0; c < live.size(); ++c) GLL(static_cast<long>(a), static_cast<long>(c)) = dense(live[a], live[c]);
    for (int r = 0; r < l; ++r) GlL(r, static_cast<long>(a)) = dense(r, live[a]);
  }
  const Eigen::MatrixXd expected = dense.topLeftCorner(l, l) - GlL * GLL.ldlt().solve(GlL.transpose());
  std::vector<double> scale(static_cast<size_t>(b)), factor(static_cast<size_t>(b * m)), column(static_cast<size_t>(b)), residual(column.size());
  eliminate_held_loop_rows(l, b, m, G.data(), scale.data(), factor.data(), column.data(), residual.data());
  for (double x : G) REQUIRE(std::isfinite(x));
  for (int r = 0; r < l; ++r)
    for (int c = 0; c < l; ++c) CHECK(G[static_cast<size_t>(r * l + c)] == doctest::Approx(expected(r, c)).epsilon(1e-6));
  std::vector<double> impulses(static_cast<size_t>(m), 0.0);
  impulses[0] = 1.0, impulses[1] = 0.5;
  held_loop_impulses(l, b, m, G.data(), scale.data(), impulses.data());
  for (double x : impulses) CHECK(std::isfinite(x));
  // Whatever the dead row carries moves nothing (its column is rounding noise): the loop rows stay still.
  const Eigen::VectorXd lambda = Eigen::Map<const Eigen::VectorXd>(impulses.data(), m);
  CHECK((dense.bottomRows(b) * lambda).cwiseAbs().maxCoeff() < 1e-6);
}

TEST_CASE("damped Cholesky: a pivot that rounding takes below rho is taken as rho, so the factor of a slightly indefinite matrix stays finite") {
  // [[1, 1 + 1e-9], [1 + 1e-9, 1]]: a singular G up to rounding, with eigenvalue -1e-9 < -rho.
  const double G[4] = {1.0, 1.0 + 1e-9, 1.0 + 1e-9, 1.0};
  double L[4];
  const double rho = 1e-12;
  damped_cholesky(G, 2, rho, L);
  for (double x : L) CHECK(std::isfinite(x));
  CHECK(L[3] == doctest::Approx(std::sqrt(rho)).epsilon(1e-12));
  // A positive definite G is factored as before.
  const double H[4] = {4.0, 2.0, 2.0, 3.0};
  damped_cholesky(H, 2, 0.0, L);
  CHECK(L[0] == doctest::Approx(2.0));
  CHECK(L[2] == doctest::Approx(1.0));
  CHECK(L[3] == doctest::Approx(std::sqrt(2.0)));
}

TEST_CASE("limited joints: a loop model leaves out the joints its reference configuration places beyond a limit (Cassie's feet and tarsus cranks), a tree none") {
  std::vector<std::string> left_out;
  const Model cassie = load_sdf_file(model_path("cassie_v2.sdf"), RootJoint::FreeFlyer);
  const std::vector<LimitedJoint> kept = limited_joints(cassie, &left_out);
  CHECK(left_out == std::vector<std::string>{"left-tarsus-crank-joint", "left-foot-op", "right-tarsus-crank-joint", "right-foot-op"});
  CHECK(kept.size() + left_out.size() == 16);  // Cassie's limited 1-dof joints
  CHECK(plan_contacts(cassie).limits_left_out == left_out);
  // Without loops a limit is never left out: a state beyond it is pushed back.
  Model tree = cassie;
  tree.constraints.clear(), tree.constraint_rows = 0;
  std::vector<std::string> none;
  CHECK(limited_joints(tree, &none).size() == 16);
  CHECK(none.empty());
}

TEST_CASE("step() with loops and joint limits: a passive Digit with welded feet stays within its limits, where without them it folds through them") {
  const Model m = digit_feet();
  for (const bool limits : {false, true}) {
    CAPTURE(limits);
    const PassiveRollout d = passive_rollout<double>(m, limits, 1000), f = passive_rollout<float>(m, limits, 1000);
    if (limits) {
      CHECK_FALSE(d.failed);
      CHECK_FALSE(f.failed);
      CHECK(d.worst_violation < 0.01);  // within the limit margin
      CHECK(f.worst_violation < 0.01);
      CHECK(d.largest_iterations <= 20);  // the loop solver's target
      CHECK(f.largest_iterations <= 20);
    } else {
      CHECK(std::max(d.worst_violation, f.worst_violation) > 1.0);  // knees and ankles through their stops, or a failure
    }
  }
}

TEST_CASE("step() with loops and joint limits: the collapsed humanoid holding a cube with welded feet runs 10 s with its limit solves converged in nearly every step (ADMM's polishing)") {
  // Limits that push against each other through the loops (a knee and an ankle at opposite stops
  // of a welded leg) made ADMM creep: 663-2116 of 10^4 steps hit the cap of 500, ~130-200
  // iterations per step on average, without polishing (kernels/contact/contact_polish.hpp).
  const Model m = load_scene_file(model_path("scenes/humanoid_hands_cube_feet.json"));
  Batch<double> batch(m, 1, 1);
  batch.reset(std::vector<int>{0});
  int capped = 0;
  long iterations = 0;
  for (int k = 0; k < 10000; ++k) {
    batch.step(1e-3);
    const EnvStatus status = batch.status()[0];
    REQUIRE((status == EnvStatus::Ok || is_report(status)));
    capped += status == EnvStatus::ContactNotConverged;
    iterations += batch.contact_iterations()[0];
  }
  MESSAGE(capped, " steps at the cap, ", static_cast<double>(iterations) / 10000, " limit iterations per step");
  CHECK(capped <= 200);  // 74 with polishing on this trajectory (2116 without)
  CHECK(iterations <= 40 * 10000L);  // 22.6 per step (197 without)
}

TEST_CASE("step() with loops and joint limits: where no limit is within its margin, the step is the loop solver's, bit for bit") {
  // Digit's first 300 ms from rest: its joints fold towards their limits without reaching one.
  const Model m = digit_feet();
  Batch<double> with(m, 4, 1), without(m, 4, 1);
  ContactSettings off = without.contact_settings();
  off.joint_limits = false;
  without.set_contact_settings(off);
  for (int k = 0; k < 300; ++k) {
    with.step(1e-3), without.step(1e-3);
    for (int e = 0; e < 4; ++e) REQUIRE(with.contact_iterations()[static_cast<size_t>(e)] == 0);
  }
  for (int e = 0; e < 4; ++e) {
    CHECK((row(with.q(), e, m.nq) - row(without.q(), e, m.nq)).cwiseAbs().maxCoeff() == 0.0);
    CHECK((row(with.v(), e, m.nv) - row(without.v(), e, m.nv)).cwiseAbs().maxCoeff() == 0.0);
    CHECK((row(with.constraint_forces(), e, m.constraint_rows) - row(without.constraint_forces(), e, m.constraint_rows)).cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("step() with loops and joint limits: at rest on the loops with a joint beyond its limit, one step equals the exact solution (loops held, the limit pushing back)") {
  // At v = 0 on the loops, the loop solver's accelerations keep the loops (J qdd = 0, J v+ = 0),
  // and the limit row is active: v+ is the M-nearest velocity to v_free with J_loop v+ = 0 and
  // the joint pushed back at the Baumgarte rate, which exact_velocity_from_rest computes. The
  // dense reference step (loops and limits as rows of one ADMM problem) agrees to its own
  // tolerance on these light, ill-conditioned grips (2e-5 on hand_cube).
  for (const std::string& name : {std::string("digit_feet"), std::string("hand_cube")}) {
    CAPTURE(name);
    Model m = name == "digit_feet" ? digit_feet() : load_scene_file(model_path("scenes/hand_cube.json"));
    const Eigen::VectorXd reference = m.reference_configuration.empty()
                                          ? neutral_configuration<double>(m)
                                          : Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(m.reference_configuration.data(), m.nq));
    // A limited joint on the loops: turned 0.05 rad and projected back onto the loops, it keeps
    // part of the turn and the others move with it.
    LimitedJoint joint;
    Eigen::VectorXd q;
    bool found = false;
    for (const LimitedJoint& candidate : limited_joints(m)) {
      Eigen::VectorXd turned = reference;
      turned[candidate.coordinate] += 0.05;
      q = turned;
      if (!project_to_constraints(m, q).converged) continue;
      const double kept = q[candidate.coordinate] - reference[candidate.coordinate];
      Eigen::VectorXd others = q - turned;
      others[candidate.coordinate] = 0;
      if (kept > 0.005 && others.cwiseAbs().maxCoeff() > 1e-3) {
        joint = candidate, found = true;
        break;
      }
    }
    REQUIRE(found);
    CAPTURE(m.bodies[static_cast<size_t>(joint.body)].joint_name);
    // Its upper limit 2 mrad below where it went (and above the reference configuration, so
    // that the limit is the model's).
    m.upper_position_limit[static_cast<size_t>(joint.coordinate)] = q[joint.coordinate] - 0.002;
    ScalarBatch<double> batch(m, 1, 1);
    batch.set_passive_forces(false);  // the oracle has no damping
    LoopStabilisationSettings stabilisation = batch.loop_stabilisation();
    stabilisation.time_constant = 0;  // on the loops: nothing to stabilise
    batch.set_loop_stabilisation(stabilisation);
    ContactSettings settings = batch.contact_settings();
    settings.tolerance = 1e-12, settings.max_iterations = 5000;
    batch.set_contact_settings(settings);
    set_row(batch, 0, q, Eigen::VectorXd::Zero(m.nv));
    const double h = 1e-3, pushed_back = -0.2 * 0.002 / h;  // the Baumgarte rate (0.2 of the 2 mrad per step)
    batch.step(h);
    REQUIRE(batch.status()[0] == EnvStatus::Ok);
    CHECK(batch.contact_iterations()[0] > 0);
    const Eigen::VectorXd v = row(batch.v(), 0, m.nv);
    const Eigen::VectorXd exact = exact_velocity_from_rest(m, q, h, joint.dof, pushed_back);
    CHECK(v[joint.dof] == doctest::Approx(pushed_back).epsilon(1e-6));
    CHECK((v - exact).cwiseAbs().maxCoeff() < 1e-6);  // LCABA's own accuracy on hand_cube: 2.5e-7
    Data<double> data(m);
    ContactSettings reference_settings;
    reference_settings.tolerance = 1e-13, reference_settings.max_iterations = 50000;
    const ContactStepResult r = dense_contact_step(m, data, q, Eigen::VectorXd::Zero(m.nv), Eigen::VectorXd::Zero(m.nv), h, reference_settings);
    REQUIRE(r.converged);
    REQUIRE(r.limits.size() == 1);
    CHECK(r.impulses[static_cast<long>(3 * r.active.size())] > 0);  // the limit pushes
    CHECK((v - r.v).cwiseAbs().maxCoeff() < 1e-4);
  }
}

TEST_CASE("step() with loops and joint limits: SIMD lanes equal W = 1 over 600 steps of a passive Digit folding onto its limits") {
  const Model m = digit_feet();
  const int N = 4;
  const auto run = [&](auto& batch) {
    using T = typename std::decay_t<decltype(batch)>::T;
    std::vector<int> all(N);
    std::iota(all.begin(), all.end(), 0);
    batch.reset(all);
    for (int e = 1; e < N; ++e) batch.v()[static_cast<size_t>(e * m.nv + m.nv - 1)] += static_cast<T>(1e-6 * e);
    int limit_solves = 0;
    for (int s = 0; s < 600; ++s) {
      batch.step(T(1e-3));
      limit_solves += *std::max_element(batch.contact_iterations().begin(), batch.contact_iterations().end()) > 0;
    }
    CHECK(limit_solves > 0);  // the limits acted
  };
  check_lanes_equal_w1(m, N, true, run);
}
