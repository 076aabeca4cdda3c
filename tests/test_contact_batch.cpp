// The batched contact stage of step() (batch/contact_solving.hpp, kernels/contact/frictional_contact.hpp):
// against the dense reference contact step (kernels/contact/contact_step.hpp), lanes against W = 1,
// closed forms (resting forces = weight), isolation of bad environments, and its reports.
#include <numbers>
#include "contact_reference_helpers.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

double total_mass(const Model& m) {
  double mass = 0.0;
  for (const Body& b : m.bodies) mass += b.inertia.mass;
  return mass;
}

}  // namespace

TEST_CASE("step() with contacts: one step of the quadruped landing equals the dense reference contact step, joint limits included") {
  const Model m = quadruped();
  ScalarBatch<double> batch(m, 6, 1);
  REQUIRE(batch.contacts());
  const ContactSettings reference = solve_tightly(batch);
  const double h = 2e-3;
  const std::vector<ContactStepResult> results = check_step_equals_dense_reference(batch, touchdown_states(m, 6, 7), h, reference);
  int touching = 0;
  for (int e = 0; e < 6; ++e) {
    CAPTURE(e);
    const ContactStepResult& r = results[static_cast<size_t>(e)];
    touching += static_cast<int>(r.active.size());
    // The same candidates in contact, with the same world forces.
    for (int k = 0; k < batch.contact_candidates(); ++k) {
      const auto it = std::find(r.active.begin(), r.active.end(), k);
      CHECK((batch.contact_flags()[e * batch.contact_candidates() + k] == 1.0) == (it != r.active.end()));
      const Vec3d f = it == r.active.end() ? Vec3d::zero() : r.world_force(static_cast<int>(it - r.active.begin()), m, h);
      for (int i = 0; i < 3; ++i) CHECK(std::abs(batch.contact_forces()[(e * batch.contact_candidates() + k) * 3 + i] - f[i]) < 1e-4 * (1 + total_mass(m) * kG));
      CHECK(batch.contact_gaps()[e * batch.contact_candidates() + k] == doctest::Approx(r.states[static_cast<size_t>(k)].gap).epsilon(1e-12));
    }
  }
  CHECK(touching >= 12);  // the feet do touch down
}

TEST_CASE("a cylinder's four slots: the nearer cap's deepest rim point, the other cap's, the nearer rim at +-120 degrees, exact against the plane, the same on lanes") {
  const double r = 0.05, half = 0.1, z = 0.3;
  const Model m = free_body("<cylinder radius=\"0.05\" length=\"0.2\"/>");
  REQUIRE(m.contacts.candidates.size() == 4);
  const double tilts[] = {0.0, 0.3, -2.0, 0.5 * std::numbers::pi};  // upright, tilted, upside down and tilted, lying
  const int n = 4;
  Batch<double> batch(m, n, 1);
  Data<double> data(m);
  std::vector<std::vector<CandidateState>> expected;
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    const double t = tilts[e];
    Eigen::VectorXd q = neutral_configuration<double>(m);
    q[2] = z, q[3] = std::sin(0.5 * t), q[6] = std::cos(0.5 * t);  // about x (quaternion x y z w)
    set_row(batch, e, q, Eigen::VectorXd::Zero(m.nv));
    forward_kinematics(m, data, q);
    expected.push_back(candidate_states(m, data));
    const std::vector<CandidateState>& s = expected.back();
    const double c = std::abs(std::cos(t)), sn = std::abs(std::sin(t));
    CHECK(s[0].gap == doctest::Approx(z - half * c - r * sn).epsilon(1e-12));  // the lowest point of the cylinder
    CHECK(s[1].gap == doctest::Approx(z + half * c - r * sn).epsilon(1e-12));
    CHECK(s[2].gap == doctest::Approx(z - half * c + 0.5 * r * sn).epsilon(1e-12));
    CHECK(s[3].gap == doctest::Approx(z - half * c + 0.5 * r * sn).epsilon(1e-12));
    const Vec3d centre{0.0, 0.0, z};
    for (int k = 0; k < 4; ++k) {  // on a rim: half along the axis, r from it
      const Vec3d d = s[static_cast<size_t>(k)].lowest_point - centre;
      CHECK(dot(d, d) == doctest::Approx(half * half + r * r).epsilon(1e-12));
    }
    // slots 0, 2 and 3: an equilateral triangle on the nearer rim
    const Vec3d a = s[2].lowest_point - s[0].lowest_point, b = s[3].lowest_point - s[0].lowest_point;
    CHECK(dot(a, a) == doctest::Approx(3.0 * r * r).epsilon(1e-12));
    CHECK(dot(b, b) == doctest::Approx(3.0 * r * r).epsilon(1e-12));
  }
  batch.step(1e-3);
  for (int e = 0; e < n; ++e)
    for (int k = 0; k < 4; ++k)
      CHECK(batch.contact_gaps()[e * 4 + k] == doctest::Approx(expected[static_cast<size_t>(e)][static_cast<size_t>(k)].gap).epsilon(1e-12));
}

TEST_CASE("the approach speed bound holds for any point within reach, any normal and any body velocity, in float 100 m from the origin") {
  // detect_contacts passes over a ground candidate whose gap exceeds the margin plus h times
  // this bound in every lane: the bound must hold for the approach velocity as its own
  // arithmetic rounds it (contact_column, the velocity's dot product).
  std::mt19937 rng(46);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto random_vec = [&](double scale) { return Vec3d{scale * u(rng), scale * u(rng), scale * u(rng)}; };
  double tightest = 0.0;  // the largest |approach| / bound
  for (int trial = 0; trial < 20000; ++trial) {
    const double reach = 0.5 * (1.0 + u(rng));
    Transformd X{exp3(random_vec(3.0)), random_vec(100.0)};
    const Vec3d axis = random_vec(1.0), offset = random_vec(1.0);
    Vec3d n = axis * (1.0 / std::sqrt(dot(axis, axis)));
    const Vec3d local = offset * (reach * (0.5 + 0.5 * std::abs(u(rng))) / std::sqrt(dot(offset, offset)));  // |local| <= reach
    const double scale = std::pow(10.0, 3.0 * u(rng));
    Motion<double> V{random_vec(scale), random_vec(scale * std::abs(u(rng)))};
    if (trial % 4 == 0) {  // the tight case: a translation along the normal, both along an axis
      const int axis = trial / 4 % 3;
      X.rotation = Mat3d::identity();
      n = Vec3d::zero(), n[axis] = 1.0;
      V = Motion<double>::zero(), V.linear[axis] = -scale;
    }
    const Transform<float> Xf = cast_transform<float>(X);
    const Motion<float> Vf{cast3<float>(V.linear), cast3<float>(V.angular)};
    const Vec3<float> point = Xf.act_point(cast3<float>(local));
    const float approach = dot(contact_column(Xf, cast3<float>(n), point), Vf);
    const float bound = approach_speed_bound(Vf, reach);
    CHECK(std::abs(approach) <= bound);
    tightest = std::max(tightest, static_cast<double>(std::abs(approach) / bound));
  }
  CHECK(tightest > 0.98);  // not so loose that it never passes a candidate over
}

TEST_CASE("step() with joint limits: near its knee limits, the quadruped's landing step equals the dense reference's limit rows") {
  const Model m = quadruped();
  ScalarBatch<double> batch(m, 4, 1);
  batch.set_passive_forces(false);
  const ContactSettings reference = solve_tightly(batch);
  auto states = touchdown_states(m, 4, 5);
  for (int e = 0; e < 4; ++e) {  // knees 5 mrad from their upper limit (-0.9), folding further
    for (const char* leg : {"FL", "FR", "HL", "HR"}) {
      const Body& knee = m.bodies[static_cast<size_t>(m.joint_index(std::string(leg) + "_knee"))];
      states[static_cast<size_t>(e)].first[knee.idx_q] = -0.905;
      states[static_cast<size_t>(e)].second[knee.idx_v] = 2.0 + e;
    }
    set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  }
  batch.step(2e-3);
  Data<double> data(m);
  for (int e = 0; e < 4; ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    const ContactStepResult r = dense_contact_step(m, data, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second,
                                                   Eigen::VectorXd::Zero(m.nv), 2e-3, reference);
    REQUIRE(r.converged);
    CHECK(r.limits.size() >= 4);
    CHECK((row(batch.v(), e, m.nv) - r.v).cwiseAbs().maxCoeff() < 1e-7);
    for (const char* leg : {"FL", "FR", "HL", "HR"})  // the knees stop at the limit, not beyond
      CHECK(batch.q()[e * m.nq + m.bodies[static_cast<size_t>(m.joint_index(std::string(leg) + "_knee"))].idx_q] <= -0.9 + 1e-9);
  }
}

namespace {

// A state of the free humanoid (no contact candidates: the limits are the stage's only rows)
// with `count` limited joints 5 mrad beyond a limit (alternately the lower and the upper),
// moving further into it.
std::pair<Eigen::VectorXd, Eigen::VectorXd> humanoid_into_limits(const Model& m, const ContactPlan& plan, std::mt19937& rng, int count) {
  State s = random_state(m, rng);
  for (int j = 0; j < count; ++j) {
    const LimitedJoint& joint = plan.limited_joints[static_cast<size_t>((3 * j + static_cast<int>(rng() % 3)) % plan.num_limited_joints())];
    const bool lower = j % 2 == 0;
    s.q[joint.coordinate] = lower ? joint.lower - 5e-3 : joint.upper + 5e-3;
    s.v[joint.dof] = lower ? -1.5 : 1.5;
  }
  return {s.q, s.v};
}

}  // namespace

TEST_CASE("step() with joint limits alone: the free humanoid pushed into eight limits steps as the dense reference's limit rows") {
  const Model m = humanoid();
  ScalarBatch<double> batch(m, 4, 1);
  REQUIRE_FALSE(batch.contacts());  // no candidates: the stage runs for the limits alone
  REQUIRE(batch.contact_stage_runs());
  const ContactSettings reference = solve_tightly(batch);
  std::mt19937 rng(31);
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> states;
  for (int e = 0; e < 4; ++e) states.push_back(humanoid_into_limits(m, batch.contact_plan(), rng, 8));
  const std::vector<ContactStepResult> results = check_step_equals_dense_reference(batch, states, 2e-3, reference);
  for (const ContactStepResult& r : results) CHECK(r.limits.size() >= 6);
}

namespace {

// One contact step by the stage's kernel at (q, v) from ABA's free accelerations, twice: given
// ABA's factorisation of M and factorising M itself. Checks that both give the same impulses
// and qdd, the same iterations, and that the step changes qdd by more than `at_least`.
void check_factorisation_reused(const Model& m, const ContactSettings& settings, int candidates, const GroundLanes<double>& ground,
                                const double* mu, const Eigen::VectorXd& q, const Eigen::VectorXd& v, double at_least) {
  Data<double> data(m);
  const ContactPlan plan = plan_contacts(m);
  const double h = 1e-3;
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(m.nv);
  Eigen::VectorXd qdd(m.nv);
  aba_kernel(data.constants, data.aba, q.data(), v.data(), tau.data(), qdd.data());
  const TreeFactor<double> aba = tree_factor_of(data.aba);
  Eigen::VectorXd reused = qdd, own = qdd;
  FrictionalContactWorkspace<double> ws_reused(m, plan), ws_own(m, plan);
  const ContactSolverReport<double> report_reused = frictional_contact_kernel(
      data.constants, plan, m, settings, candidates, LoopRows::None, ground, mu, 1.0, ws_reused, q.data(), v.data(), h, reused.data(), nullptr, &aba);
  const ContactSolverReport<double> report_own = frictional_contact_kernel(
      data.constants, plan, m, settings, candidates, LoopRows::None, ground, mu, 1.0, ws_own, q.data(), v.data(), h, own.data(), nullptr);
  CHECK(report_reused.iterations > 0);
  CHECK(report_reused.iterations == report_own.iterations);
  CHECK((reused - qdd).cwiseAbs().maxCoeff() > at_least);  // the rows act
  CHECK((reused - own).cwiseAbs().maxCoeff() <= 1e-9 * (1 + own.cwiseAbs().maxCoeff()));
  for (int j = 0; j < plan.num_limited_joints(); ++j)
    CHECK(ws_reused.limit_impulses[static_cast<size_t>(j)] == doctest::Approx(ws_own.limit_impulses[static_cast<size_t>(j)]).epsilon(1e-9));
  for (size_t k = 0; k < ws_own.impulses.size(); ++k) CHECK(ws_reused.impulses[k] == doctest::Approx(ws_own.impulses[k]).epsilon(1e-9));
}

}  // namespace

TEST_CASE("joint-limit rows alone: the stage's kernel given ABA's factorisation of M steps as it does eliminating the joints itself (ADMM, on G or PV-soft, and PGS)") {
  const Model m = humanoid();
  const ContactPlan plan = plan_contacts(m);
  REQUIRE(plan.num_limited_joints() > 10);
  std::mt19937 rng(32);
  for (int variant = 0; variant < 3; ++variant) {
    ContactSettings settings;
    if (variant == 1) settings.admm_linear_solve = AdmmLinearSolve::PvSoft;
    if (variant == 2) settings.solver = ContactSolver::Pgs;
    for (int trial = 0; trial < 4; ++trial) {
      CAPTURE(variant);
      CAPTURE(trial);
      const auto [q, v] = humanoid_into_limits(m, plan, rng, 4 + 3 * trial);
      check_factorisation_reused(m, settings, 0, GroundLanes<double>{}, nullptr, q, v, 1.0);
    }
  }
}

TEST_CASE("contacts: the stage's kernel given ABA's factorisation of M (PV-OSIMr carrying its chains only) steps the landing quadruped as it does factorising M itself") {
  const Model m = quadruped();
  const int candidates = plan_contacts(m).num_candidates();
  REQUIRE(candidates >= 4);
  GroundLanes<double> ground;
  ground.normal = Vec3<double>{0.0, 0.0, 1.0};
  ground.height = 0.0;
  const std::vector<double> mu(static_cast<size_t>(candidates), 0.8);
  for (int variant = 0; variant < 2; ++variant) {
    ContactSettings settings;
    if (variant == 1) settings.admm_linear_solve = AdmmLinearSolve::PvSoft;
    for (const auto& [q, v] : touchdown_states(m, 4, 33)) {
      CAPTURE(variant);
      check_factorisation_reused(m, settings, candidates, ground, mu.data(), q, v, 10.0);
    }
  }
}

TEST_CASE("step() with joint limits: a pendulum swung into its limit stops there and never passes it, switched off, it swings on") {
  const Model pendulum = load_urdf_string(R"(<robot name="pendulum"><link name="base"/>
    <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
    <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>
      <limit lower="-0.5" upper="0.5" effort="10" velocity="10"/></joint></robot>)");
  for (const bool limits : {true, false}) {
    CAPTURE(limits);
    Batch<double> batch(pendulum, 3, 1);
    CHECK_FALSE(batch.contacts());  // a fixed base: no ground
    ContactSettings settings = batch.contact_settings();
    settings.joint_limits = limits;
    batch.set_contact_settings(settings);
    for (int e = 0; e < 3; ++e) batch.v()[e] = 3.5 + 0.5 * e;  // enough to reach 0.83 rad and more freely
    double highest = 0.0;
    for (int s = 0; s < 1000; ++s) {
      batch.step(1e-3);
      for (int e = 0; e < 3; ++e) highest = std::max(highest, batch.q()[e]);
      REQUIRE(batch.failed_count() == 0);
    }
    if (limits) CHECK(highest <= 0.5 + 1e-9);
    else CHECK(highest > 0.8);
  }
}

TEST_CASE("step() with contacts: SIMD lanes equal W = 1 over 200 landing steps (double 1e-12, float 1e-5)") {
  const Model m = quadruped();
  const int N = 11;  // not a multiple of the lane width: padding lanes too
  const auto states = touchdown_states(m, N, 3);
  const auto run = [&](auto& batch) {
    for (int e = 0; e < N; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
    for (int s = 0; s < 200; ++s) batch.step(1e-3f);
  };
  {
    Batch<double> lanes(m, N, 2);
    ScalarBatch<double> scalar(m, N, 1);
    run(lanes), run(scalar);
    for (int e = 0; e < N; ++e) {
      CAPTURE(e);
      CHECK(lanes.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
      CHECK((row(lanes.q(), e, m.nq) - row(scalar.q(), e, m.nq)).cwiseAbs().maxCoeff() < 1e-12);
      CHECK((row(lanes.v(), e, m.nv) - row(scalar.v(), e, m.nv)).cwiseAbs().maxCoeff() < 1e-12);
      CHECK(lanes.contact_iterations()[static_cast<size_t>(e)] == scalar.contact_iterations()[static_cast<size_t>(e)]);
    }
  }
  {
    Batch<float> lanes(m, N, 2);
    ScalarBatch<float> scalar(m, N, 1);
    run(lanes), run(scalar);
    for (int e = 0; e < N; ++e) {
      CAPTURE(e);
      CHECK(lanes.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
      CHECK((row(lanes.q(), e, m.nq) - row(scalar.q(), e, m.nq)).cwiseAbs().maxCoeff() < 1e-5);
      CHECK((row(lanes.v(), e, m.nv) - row(scalar.v(), e, m.nv)).cwiseAbs().maxCoeff() < 1e-5 * (1 + row(scalar.v(), e, m.nv).cwiseAbs().maxCoeff()));
    }
  }
}

TEST_CASE("step() with contacts: a box resting on the plane carries m g on its corners and does not drift over 10^4 steps") {
  const Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 0.08 / 12);
  Batch<double> batch(box, 3, 1);
  for (int e = 0; e < 3; ++e) batch.q()[e * box.nq + 2] = 0.1;
  for (int s = 0; s < 10000; ++s) batch.step(1e-3);
  for (int e = 0; e < 3; ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    const Vec3d f = total_contact_force(batch, e);
    // The solver's tolerance is 1e-6 on velocities: 1e-6 m/s over h = 1e-3 s is 1e-3 N.
    CHECK(f.z == doctest::Approx(kG).epsilon(1e-3));
    CHECK(std::abs(f.x) < 1e-3);
    CHECK(std::abs(f.y) < 1e-3);
    const Eigen::VectorXd q = row(batch.q(), e, box.nq);
    CHECK(std::abs(q[0]) < 1e-9);
    CHECK(std::abs(q[1]) < 1e-9);
    CHECK(std::abs(q[2] - 0.1) < 1e-4);  // rests on its face, within the Baumgarte-closed gap
    CHECK(row(batch.v(), e, box.nv).cwiseAbs().maxCoeff() < 1e-5);
    CHECK(batch.contact_iterations()[static_cast<size_t>(e)] <= 5);  // at rest, warm-started
  }
}

TEST_CASE("step() with contacts: a sphere dropped on the plane comes to rest without bouncing or sinking beyond the margin") {
  const Model ball = free_body("<sphere radius=\"0.1\"/>", 0.004);
  Batch<double> batch(ball, 1, 1);
  batch.q()[2] = 0.5;
  double lowest = 1.0, highest_after_touch = 0.0;
  bool touched = false;
  for (int s = 0; s < 2000; ++s) {
    batch.step(1e-3);
    const double z = batch.q()[2];
    lowest = std::min(lowest, z);
    if (batch.contact_flags()[0] == 1.0) touched = true;
    if (touched) highest_after_touch = std::max(highest_after_touch, z);
  }
  CHECK(touched);
  CHECK(lowest > 0.1 - 0.01);                   // never deeper than the margin
  CHECK(highest_after_touch < 0.1 + 0.01);      // no bounce: inelastic
  CHECK(std::abs(batch.v()[2]) < 1e-5);
  CHECK(total_contact_force(batch, 0).z == doctest::Approx(kG).epsilon(1e-3));
}

TEST_CASE("step() with contacts: a box on an incline sticks when tan(theta) < mu and slides with a = g (sin - mu cos) otherwise") {
  const Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 0.08 / 12);
  const double theta = 0.3;  // tan = 0.309
  const Vec3d normal{-std::sin(theta), 0.0, std::cos(theta)};  // the plane rises along +x: the box slides towards -x
  Batch<double> batch(box, 2, 1);
  const std::array<int, 1> sticking{0}, sliding{1};
  batch.set_friction(sticking, 0.5);
  batch.set_friction(sliding, 0.1);
  for (int e = 0; e < 2; ++e) {
    batch.set_ground(std::array<int, 1>{e}, 0.0, normal);
    // Resting on its face: the box rotated by theta about y, its centre 0.1 above the plane.
    const double half = std::sin(theta / 2), w = std::cos(theta / 2);
    double* q = batch.q() + e * box.nq;
    q[0] = 0.1 * normal.x, q[1] = 0.0, q[2] = 0.1 * normal.z;
    q[3] = 0.0, q[4] = -half, q[5] = 0.0, q[6] = w;  // rotation -theta about y tilts the box's z onto the normal
  }
  const double h = 1e-3;
  for (int s = 0; s < 500; ++s) batch.step(h);
  const double t = 500 * h;
  const Eigen::VectorXd stuck = row(batch.q(), 0, box.nq), slid = row(batch.q(), 1, box.nq);
  CHECK(std::abs(stuck[0] - 0.1 * normal.x) < 1e-5);
  const double a = kG * (std::sin(theta) - 0.1 * std::cos(theta));
  const double along = (slid[0] - 0.1 * normal.x) / -std::cos(theta);  // distance down the slope
  CHECK(along == doctest::Approx(0.5 * a * t * t).epsilon(0.02));
}

TEST_CASE("step() with contacts: the quadruped standing under PD for 10^4 steps keeps its height and its feet carry its weight") {
  const Model m = quadruped();
  Batch<double> batch(m, 2, 1);
  std::vector<double> kp(static_cast<size_t>(m.nv), 0.0), kd(kp.size(), 0.0);
  for (int k = 6; k < m.nv; ++k) kp[static_cast<size_t>(k)] = 80.0, kd[static_cast<size_t>(k)] = 2.0;
  batch.set_control_mode(ControlMode::PositionPD);
  batch.set_pd_gains(kp, kd);
  const Eigen::VectorXd q0 = crouching_quadruped(m, 0.0);
  for (int e = 0; e < 2; ++e) {
    set_row(batch, e, q0, Eigen::VectorXd::Zero(m.nv));
    for (int k = 6; k < m.nv; ++k) batch.target()[e * m.nv + k] = q0[k + 1];
  }
  double low = 1.0, high = 0.0;
  long iterations = 0;
  for (int s = 0; s < 10000; ++s) {
    batch.step(2e-3);
    if (s >= 5000) low = std::min(low, batch.q()[2]), high = std::max(high, batch.q()[2]);  // after the PD sag settles (~8 s)
    iterations += batch.contact_iterations()[0];
    REQUIRE(batch.contact_iterations()[0] <= 20);
  }
  for (int e = 0; e < 2; ++e) REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
  MESSAGE("base height in [", low, ", ", high, "] m, ", static_cast<double>(iterations) / 10000, " ADMM iterations per step");
  CHECK(high - low < 1e-4);
  CHECK(low > 0.3);  // standing, not collapsed
  CHECK(total_contact_force(batch, 0).z == doctest::Approx(total_mass(m) * kG).epsilon(1e-4));
  CHECK(std::abs(total_contact_force(batch, 0).x) < 1e-3 * total_mass(m) * kG);
}

TEST_CASE("step() with contacts: an environment with NaN is isolated and one that hits the iteration cap is stepped and reported") {
  const Model m = quadruped();
  const auto states = touchdown_states(m, 8, 11);
  Batch<double> batch(m, 8, 1), reference(m, 8, 1);
  for (int e = 0; e < 8; ++e) {
    set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
    set_row(reference, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  }
  batch.v()[3 * m.nv + 7] = std::numeric_limits<double>::quiet_NaN();
  batch.step(1e-3), reference.step(1e-3);
  CHECK(batch.status()[3] == EnvStatus::NonFiniteState);
  for (int e = 0; e < 8; ++e) {
    if (e == 3) continue;
    CAPTURE(e);
    CHECK(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    CHECK(row(batch.q(), e, m.nq) == row(reference.q(), e, m.nq));  // bitwise: the bad lane touched nothing
  }
  // A fresh engine: cold-started (the engine above would warm-start from the exact impulses of
  // this very state, which one iteration confirms), and without the polish (which solves a
  // touchdown from the cold start's natural map before any iteration).
  Batch<double> capped(m, 8, 1);
  ContactSettings one_iteration = capped.contact_settings();
  one_iteration.max_iterations = 1;
  one_iteration.polish = false;
  capped.set_contact_settings(one_iteration);
  for (int e = 0; e < 8; ++e) set_row(capped, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  const Eigen::VectorXd before = row(capped.q(), 0, m.nq);
  capped.step(1e-3);
  CHECK(capped.status()[0] == EnvStatus::ContactNotConverged);
  CHECK(capped.contact_iterations()[0] == 1);
  CHECK(row(capped.q(), 0, m.nq) != before);  // stepped with its last iterate
  CHECK(capped.status_message(0).find("iteration cap") != std::string::npos);
}

TEST_CASE("step() with contacts: switchable, off by default with loop constraints, and its settings and parameters are checked") {
  Model welded = quadruped();
  add_constraints_from_json_file(welded, model_path("quadruped_feet.json"));
  Batch<double> loops(welded, 2, 1);
  CHECK_FALSE(loops.contacts());
  loops.set_contacts(true);  // the welds become bilateral rows of the contact problem (test_contact_loops.cpp)
  CHECK(loops.contacts());
  // The batch starts at the file's reference_q, which welds the feet 4.8 cm into the ground:
  // the contact rows push them out, the welds hold them, and no impulse meets both. ADMM ends
  // at its cap there (a report, the environment is stepped) instead of failing it.
  loops.step(1e-3);
  CHECK(loops.contact_gaps()[8] < -0.04);  // the first foot's sphere, into the ground
  CHECK(loops.status()[0] == EnvStatus::ContactNotConverged);
  CHECK(loops.failed_count() == 2);  // failed_count counts reports too: both environments are reported
  CHECK(std::isfinite(loops.q()[2]));

  Batch<double> batch(quadruped(), 2, 1);
  CHECK(batch.contacts());
  batch.set_contacts(false);
  batch.step(1e-2);  // falls freely: no contact results
  CHECK_FALSE(batch.contacts());
  ContactSettings bad = batch.contact_settings();
  bad.max_iterations = 0;
  CHECK_THROWS_AS(batch.set_contact_settings(bad), Error);
  bad = batch.contact_settings();
  bad.limit_margin = -1.0;
  CHECK_THROWS_WITH_AS(batch.set_contact_settings(bad), doctest::Contains("limit_margin"), Error);
  CHECK_THROWS_AS(batch.set_friction(std::array<int, 1>{0}, -1.0), Error);
  CHECK_THROWS_AS(batch.set_friction(std::array<int, 1>{2}, 1.0), Error);
  CHECK_THROWS_AS(batch.set_ground(std::array<int, 1>{0}, 0.0, Vec3d::zero()), Error);
  CHECK_THROWS_AS(batch.set_ground(std::array<int, 1>{0}, std::nan(""), Vec3d{0, 0, 1}), Error);
  batch.set_ground(std::array<int, 1>{1}, 0.25, Vec3d{0, 0, 2});
  CHECK(batch.ground_height(1) == 0.25);
  CHECK(batch.ground_normal(1).z == 1.0);
  CHECK(batch.ground_height(0) == 0.0);
}

TEST_CASE("step() with contacts: a raised ground per environment holds that environment higher") {
  const Model ball = free_body("<sphere radius=\"0.1\"/>", 0.004);
  Batch<double> batch(ball, 2, 1);
  batch.set_ground(std::array<int, 1>{1}, 0.3, Vec3d{0, 0, 1});
  batch.q()[2] = 0.5, batch.q()[ball.nq + 2] = 0.5;
  for (int s = 0; s < 2000; ++s) batch.step(1e-3);
  CHECK(batch.q()[2] == doctest::Approx(0.1).epsilon(1e-3));
  CHECK(batch.q()[ball.nq + 2] == doctest::Approx(0.4).epsilon(1e-3));
}

TEST_CASE("step() with contacts: A1s dropped from 2 m at 5 ms steps land on the ground, not 3 cm into it (speculative contacts)") {
  Model m = load_urdf_file(model_path("a1.urdf"), RootJoint::FreeFlyer);
  add_contacts_from_json_file(m, model_path("a1_contacts.json"));  // four sphere feet and the trunk box, as vector_env.Quadruped
  Batch<double> batch(m, 4, 1);
  for (int e = 0; e < 4; ++e) batch.q()[e * m.nq + 2] = 2.0 + 0.1 * e;
  double lowest = std::numeric_limits<double>::infinity();
  for (int s = 0; s < 200; ++s) {
    batch.step(5e-3);
    for (int e = 0; e < 4; ++e) {  // unactuated, it collapses onto its trunk and limits after landing: a capped solve may be reported
      const EnvStatus status = batch.status()[static_cast<size_t>(e)];
      CHECK((status == EnvStatus::Ok || status == EnvStatus::ContactNotConverged));
    }
    for (int k = 0; k < 4 * batch.contact_candidates(); ++k) lowest = std::min(lowest, batch.contact_gaps()[k]);
  }
  CHECK(lowest > -0.005);  // the margin is 1 cm; unseen at 6 m/s, the feet went 30 mm deep
  for (int e = 0; e < 4; ++e) CHECK(batch.q()[e * m.nq + 2] > 0.05);
}

TEST_CASE("step() with contacts: at dt = 1 s a falling quadruped stops on the ground instead of ending metres below it") {
  const Model m = quadruped();
  Batch<double> batch(m, 2, 1);
  for (int s = 0; s < 10; ++s) batch.step(1.0);
  for (int e = 0; e < 2; ++e) {
    CHECK(batch.status()[static_cast<size_t>(e)] != EnvStatus::NonFiniteResult);
    CHECK(batch.q()[e * m.nq + 2] > 0.0);
  }
}

TEST_CASE("step() with contacts: a contact deeper than max_penetration is stepped and reported (DeepPenetration), the others are not") {
  const Model m = quadruped();
  Batch<double> batch(m, 2, 1);
  const Eigen::VectorXd q = crouching_quadruped(m, 0.0);
  set_row(batch, 0, q, Eigen::VectorXd::Zero(m.nv));
  Eigen::VectorXd deep = q;
  deep[2] -= 0.05;  // 5 cm into the ground
  set_row(batch, 1, deep, Eigen::VectorXd::Zero(m.nv));
  const int c = batch.contact_candidates();
  const auto deepest = [&](int e) { return *std::min_element(batch.contact_gaps() + e * c, batch.contact_gaps() + (e + 1) * c); };
  batch.step(1e-3);
  CHECK(batch.status()[0] == EnvStatus::Ok);
  CHECK(batch.status()[1] == EnvStatus::DeepPenetration);
  CHECK(is_report(EnvStatus::DeepPenetration));
  CHECK(row(batch.q(), 1, m.nq) != deep);  // stepped
  const double first = deepest(1);
  CHECK(first < -0.04);
  batch.step(1e-3);
  CHECK(deepest(1) > first);  // pushed out
  ContactSettings settings = batch.contact_settings();
  settings.max_penetration = std::numeric_limits<double>::infinity();
  batch.set_contact_settings(settings);
  batch.step(1e-3);
  CHECK(batch.status()[1] == EnvStatus::Ok);
}
