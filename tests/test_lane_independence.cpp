// Lanes are independent: an environment's results are bitwise the same whatever its block mates
// hold (none, others, shuffled), however many environments and threads there are, and whatever
// goes wrong in another lane. Checked with contact and ADMM's polishing on, where the solver's
// loops run as long as the slowest lane of a block.
#include <cstring>
#include <memory>
#include <numeric>

#include "contact_reference_helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

using StateRows = std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>>;

// What a step leaves of one environment: q, v, its contact impulses and the solver's iterations
// after every step, as raw bits.
struct Trace {
  std::vector<unsigned char> bits;
  std::vector<int> iterations;
  std::vector<EnvStatus> status;
  bool operator==(const Trace&) const = default;
};

template <class T>
void append_bits(std::vector<unsigned char>& bits, const T* values, int count) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(values);
  bits.insert(bits.end(), bytes, bytes + sizeof(T) * static_cast<size_t>(count));
}

// One engine's run: N environments, environment `at` starting from `target` and the others from
// `mates` (cycled from `offset`), `configure` applied, `steps` steps of dt. Returns `at`'s trace.
template <class T, class Configure>
Trace trace_of(const Model& m, int n, int threads, int at, const std::pair<Eigen::VectorXd, Eigen::VectorXd>& target,
               const StateRows& mates, int offset, int steps, double dt, Configure&& configure) {
  Batch<T> batch(m, n, threads);
  configure(batch);
  for (int e = 0, k = offset; e < n; ++e) {
    const auto& s = e == at ? target : mates[static_cast<size_t>(k++) % mates.size()];
    set_row(batch, e, s.first, s.second);
  }
  Trace trace;
  const int candidates = batch.contact_candidates();
  for (int s = 0; s < steps; ++s) {
    batch.step(static_cast<T>(dt));
    append_bits(trace.bits, batch.q() + static_cast<long>(at) * m.nq, m.nq);
    append_bits(trace.bits, batch.v() + static_cast<long>(at) * m.nv, m.nv);
    append_bits(trace.bits, batch.contact_impulses() + static_cast<long>(at) * 3 * candidates, 3 * candidates);
    trace.iterations.push_back(batch.contact_iterations()[static_cast<size_t>(at)]);
    trace.status.push_back(batch.status()[static_cast<size_t>(at)]);
  }
  return trace;
}

// The same environment traced alone in its block (N = W + 1, one thread), next to one mate
// (N = W + 2, two threads), and among shuffled mates at two places of a block (N = 2W + 3).
template <class T, class Configure>
void check_independent_of_block_mates(const Model& m, const std::pair<Eigen::VectorXd, Eigen::VectorXd>& target, const StateRows& mates,
                                      int steps, double dt, Configure&& configure) {
  constexpr int W = Batch<T>::W;
  const Trace alone = trace_of<T>(m, W + 1, 1, W, target, mates, 0, steps, dt, configure);
  CHECK(std::count_if(alone.status.begin(), alone.status.end(), [](EnvStatus s) { return s == EnvStatus::Ok || is_report(s); }) == steps);
  CHECK(*std::max_element(alone.iterations.begin(), alone.iterations.end()) > 0);  // it solved contacts
  CHECK(trace_of<T>(m, W + 2, 2, W, target, mates, 0, steps, dt, configure) == alone);
  CHECK(trace_of<T>(m, 2 * W + 3, 2, 3 % W, target, mates, 1, steps, dt, configure) == alone);
  CHECK(trace_of<T>(m, 2 * W + 3, 1, W + W / 2, target, mates, 2, steps, dt, configure) == alone);
}

// Cassie with contacts on (its loops as bilateral rows of the contact problem), 1 ms steps.
template <class T>
void cassie_contacts(Batch<T>& batch) {
  batch.set_contacts(true);
  ContactSettings settings = batch.contact_settings();
  settings.max_iterations = 100;  // 128 candidates landing: the cap bounds the test's time; polishing runs at 10, 20, 40, 80
  batch.set_contact_settings(settings);
}

StateRows cassie_landing(const Model& m, int count) {
  Eigen::VectorXd q0 = m.reference_configuration.empty() ? neutral_configuration<double>(m) : Eigen::Map<const Eigen::VectorXd>(m.reference_configuration.data(), m.nq).eval();
  REQUIRE(project_to_constraints(m, q0).converged);
  StateRows states;
  for (int e = 0; e < count; ++e) {
    const Eigen::VectorXd q = touching(m, q0, 0.004 - 0.003 * e);
    Eigen::VectorXd v = Eigen::VectorXd::Zero(m.nv);
    v[0] = 0.1 * (e % 3), v[1] = 0.05 * (e % 2), v[2] = -0.3;
    states.emplace_back(q, v);
  }
  return states;
}

// A free rock whose collision geometry is a convex hull of 24 points on a lumpy ellipsoid, with a
// second hull 0.6 m above it on the same body: that one is never near the ground, the first
// lands. A hull whose vertices are all beyond the margin in every lane of a block skips its
// slots 1-3 (kernels/contact/hull_contact.hpp). A block's padding lanes hold the neutral state,
// the rock at the origin, within the margin: alone, the landing rock never skips; among
// airborne mates it does until it comes within the margin.
Model rock() {
  Model m = load_urdf_string("<robot name=\"rock\"><link name=\"rock\"><inertial><mass value=\"2\"/><inertia ixx=\"0.01\" ixy=\"0\" "
                             "ixz=\"0\" iyy=\"0.012\" iyz=\"0\" izz=\"0.015\"/></inertial></link></robot>",
                             RootJoint::FreeFlyer);
  for (const double up : {0.0, 0.6}) {
    CollisionGeometry hull;
    hull.name = up == 0.0 ? "rock" : "crest";
    hull.link = "rock";
    hull.shape = CollisionShape::ConvexHull;
    hull.in_link.translation = Vec3d{0.0, 0.0, up};
    for (int k = 0; k < 24; ++k) {  // a Fibonacci lattice on an ellipsoid, radii perturbed
      const double z = 1.0 - (2.0 * k + 1.0) / 24, r = std::sqrt(1.0 - z * z), a = 2.39996 * k, lump = 1.0 + 0.15 * std::sin(3.0 * k);
      hull.vertices.push_back(Vec3d{0.12 * lump * r * std::cos(a), 0.08 * lump * r * std::sin(a), 0.06 * lump * z});
    }
    add_collision_geometry(m, hull, "test");
  }
  return m;
}

// `count` states of the rock tumbling down, `airborne` a metre up (beyond the margin for the
// test's 80 ms), the others 2 to 14 mm above it, state 0 four centimetres higher.
StateRows rock_states(const Model& m, int count, bool airborne) {
  StateRows states;
  for (int e = 0; e < count; ++e) {
    Eigen::VectorXd q = neutral_configuration<double>(m), v = Eigen::VectorXd::Zero(m.nv);
    const Eigen::Vector3d axis = Eigen::Vector3d(0.3 + 0.1 * e, -0.2, 1.0).normalized();
    const Eigen::Quaterniond tilt(Eigen::AngleAxisd(0.4 + 0.3 * e, axis));
    q[3] = tilt.x(), q[4] = tilt.y(), q[5] = tilt.z(), q[6] = tilt.w();
    q[2] = (airborne ? 1.0 : 0.0) + (e == 0 ? 0.04 : 0.0) + 0.07 + 0.002 * e;
    v[2] = -0.8, v[3] = 0.5 * (e % 4) - 0.7, v[4] = 0.3;
    states.emplace_back(q, v);
  }
  return states;
}

}  // namespace

TEST_CASE("lanes: a landing quadruped's trajectory is bitwise the same whatever its block mates and thread count (double, polishing on)") {
  const Model m = quadruped();
  const StateRows states = touchdown_states(m, 40, 55);
  REQUIRE(ContactSettings{}.polish);
  check_independent_of_block_mates<double>(m, states[0], {states.begin() + 1, states.end()}, 60, 1e-3, [](auto&) {});
}

TEST_CASE("lanes: a landing quadruped's trajectory is bitwise the same whatever its block mates and thread count (float, polishing on)") {
  const Model m = quadruped();
  const StateRows states = touchdown_states(m, 40, 56);
  check_independent_of_block_mates<float>(m, states[0], {states.begin() + 1, states.end()}, 60, 1e-3, [](auto&) {});
}

TEST_CASE("lanes: Cassie landing with contacts on is bitwise the same whatever its block mates and thread count (double and float)") {
  const Model m = cassie();
  const StateRows states = cassie_landing(m, 5);
  check_independent_of_block_mates<double>(m, states[1], states, 8, 1e-3, [](auto& b) { cassie_contacts(b); });
  check_independent_of_block_mates<float>(m, states[1], states, 8, 1e-3, [](auto& b) { cassie_contacts(b); });
}

TEST_CASE("lanes: a convex hull landing is bitwise the same whatever its block mates hold, airborne or touching (double and float)") {
  const Model m = rock();
  REQUIRE(m.contacts.candidates.size() == 2 * kHullContactsPerGeometry);
  const StateRows landing = rock_states(m, 7, false), airborne = rock_states(m, 7, true);
  check_independent_of_block_mates<double>(m, landing[0], airborne, 80, 1e-3, [](auto&) {});
  check_independent_of_block_mates<float>(m, landing[0], airborne, 80, 1e-3, [](auto&) {});
  check_independent_of_block_mates<double>(m, landing[0], landing, 80, 1e-3, [](auto&) {});
  check_independent_of_block_mates<float>(m, landing[0], landing, 80, 1e-3, [](auto&) {});
}

namespace {

// Environment 0 landing among block mates that have their own friction coefficient or keep the
// model's: its trace is the same bits either way, theirs is not.
template <class T>
void check_own_friction_stays_in_its_lane(const Model& m, const StateRows& states) {
  constexpr int W = Batch<T>::W;
  const auto slippery_mates = [&](Batch<T>& batch) {
    std::vector<int> others(2 * W - 1);
    std::iota(others.begin(), others.end(), 1);
    batch.set_friction(others, 0.05);
    CHECK(batch.friction(1, 0) == doctest::Approx(0.05));
    for (int c = 0; c < batch.contact_candidates(); ++c) CHECK(batch.friction(0, c) == static_cast<double>(static_cast<T>(m.contacts.friction(c))));
  };
  const StateRows mates(states.begin() + 1, states.end());
  const Trace model_friction = trace_of<T>(m, 2 * W, 1, 0, states[0], mates, 0, 60, 1e-3, [](auto&) {});
  CHECK(trace_of<T>(m, 2 * W, 1, 0, states[0], mates, 0, 60, 1e-3, slippery_mates) == model_friction);
  // A mate's own coefficient is in effect: its landing differs from the same mate's at the model's.
  CHECK(trace_of<T>(m, 2 * W, 1, 1, mates[0], StateRows{states[0]}, 0, 60, 1e-3, [](auto&) {}) !=
        trace_of<T>(m, 2 * W, 1, 1, mates[0], StateRows{states[0]}, 0, 60, 1e-3, slippery_mates));
}

}  // namespace

TEST_CASE("lanes: block mates given their own friction coefficient (set_friction) change no bit of an environment that keeps the model's (double and float)") {
  const Model m = quadruped();
  const StateRows states = touchdown_states(m, 40, 57);
  check_own_friction_stays_in_its_lane<double>(m, states);
  check_own_friction_stays_in_its_lane<float>(m, states);
}

TEST_CASE("lanes: an environment with nothing in contact reports 0 solver iterations while its block mates solve") {
  const Model m = quadruped();
  const StateRows states = touchdown_states(m, 3, 57);
  Batch<double> batch(m, 3, 1);
  for (int e = 0; e < 3; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  batch.q()[m.nq + 2] += 1.0;  // environment 1 a metre up: no candidate within the margin
  batch.step(1e-3);
  CHECK(batch.contact_iterations()[0] > 0);
  CHECK(batch.contact_iterations()[1] == 0);
  CHECK(batch.contact_iterations()[2] > 0);
}

TEST_CASE("lanes: the contact kernel gives a lane without an environment no row and no iteration, and leaves its qdd as it came") {
  const Model m = quadruped();
  const ContactPlan plan = plan_contacts(m);
  Data<double> data(m);
  const Eigen::VectorXd q = crouching_quadruped(m, -0.01);  // 1 cm into the ground: every foot would push
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(m.nv), tau = v;
  Eigen::VectorXd qdd(m.nv);
  aba_kernel(data.constants, data.aba, q.data(), v.data(), tau.data(), qdd.data());
  GroundLanes<double> ground;
  ground.normal = Vec3<double>{0.0, 0.0, 1.0};
  ground.height = 0.0;
  const std::vector<double> mu(static_cast<size_t>(plan.num_candidates()), 0.8);
  FrictionalContactWorkspace<double> ws(m, plan);
  Eigen::VectorXd occupied = qdd, empty = qdd;
  const ContactSolverReport<double> solved = frictional_contact_kernel(data.constants, plan, m, ContactSettings{}, plan.num_candidates(),
                                                                       LoopRows::None, ground, mu.data(), 1.0, ws, q.data(), v.data(), 1e-3,
                                                                       occupied.data(), nullptr);
  REQUIRE(solved.iterations > 0);
  REQUIRE((occupied - qdd).cwiseAbs().maxCoeff() > 1.0);
  const ContactSolverReport<double> skipped = frictional_contact_kernel(data.constants, plan, m, ContactSettings{}, plan.num_candidates(),
                                                                        LoopRows::None, ground, mu.data(), 0.0, ws, q.data(), v.data(), 1e-3,
                                                                        empty.data(), nullptr);
  CHECK(skipped.iterations == 0);
  CHECK(skipped.converged == 1);
  CHECK(std::memcmp(empty.data(), qdd.data(), sizeof(double) * static_cast<size_t>(m.nv)) == 0);
  for (double in : ws.in_contact) CHECK(in == 0);
}

namespace {

// A standing quadruped block (N = 2W, PD holding the crouch, contacts on) stepped 30 times, once
// clean and once with environment `bad` given `fault`: the bad one is reported, every other
// environment's q, v and contact impulses are bitwise the clean run's.
template <class T, class Fault>
void check_fault_stays_in_its_lane(Fault&& fault) {
  const Model m = quadruped();
  constexpr int W = Batch<T>::W;
  const int n = 2 * W, bad = W + 2;
  const StateRows states = touchdown_states(m, n, 58);
  const auto run = [&](bool faulty) {
    auto batch = std::make_unique<Batch<T>>(m, n, 2);
    batch->remove_effort_limits();
    for (int e = 0; e < n; ++e) set_row(*batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
    for (int s = 0; s < 30; ++s) {
      if (faulty) fault(*batch, bad);
      batch->step(static_cast<T>(1e-3));
    }
    return batch;
  };
  const auto clean = run(false), faulty = run(true);
  CHECK(faulty->status()[static_cast<size_t>(bad)] != EnvStatus::Ok);
  const int c3 = 3 * clean->contact_candidates();
  for (int e = 0; e < n; ++e) {
    if (e == bad) continue;
    CAPTURE(e);
    CHECK(faulty->status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    CHECK(std::memcmp(faulty->q() + static_cast<long>(e) * m.nq, clean->q() + static_cast<long>(e) * m.nq, sizeof(T) * m.nq) == 0);
    CHECK(std::memcmp(faulty->v() + static_cast<long>(e) * m.nv, clean->v() + static_cast<long>(e) * m.nv, sizeof(T) * m.nv) == 0);
    CHECK(std::memcmp(faulty->contact_impulses() + static_cast<long>(e) * c3, clean->contact_impulses() + static_cast<long>(e) * c3,
                      sizeof(T) * static_cast<size_t>(c3)) == 0);
    CHECK(faulty->contact_iterations()[static_cast<size_t>(e)] == clean->contact_iterations()[static_cast<size_t>(e)]);
  }
}

template <class T>
void huge_torque(Batch<T>& batch, int e) {
  batch.tau()[static_cast<long>(e) * batch.model().nv] = static_cast<T>(1e30);  // a force along the base's x
}

template <class T>
void huge_velocity(Batch<T>& batch, int e) {
  batch.v()[static_cast<long>(e) * batch.model().nv + 3] = static_cast<T>(1e6);  // rad/s about the base's x
}

}  // namespace

TEST_CASE("faults: a torque of 1e30 on one environment changes no bit of its block mates (double and float)") {
  check_fault_stays_in_its_lane<double>(huge_torque<double>);
  check_fault_stays_in_its_lane<float>(huge_torque<float>);
}

TEST_CASE("faults: a velocity of 1e6 rad/s in one environment changes no bit of its block mates (double and float)") {
  check_fault_stays_in_its_lane<double>(huge_velocity<double>);
  check_fault_stays_in_its_lane<float>(huge_velocity<float>);
}

TEST_CASE("saved states: set_state(get_state()) continues bitwise as the original did, in the same engine and in another (quadruped landing, float)") {
  const Model m = quadruped();
  const StateRows states = touchdown_states(m, 3, 59);
  Batch<float> batch(m, 3, 1);
  for (int e = 0; e < 3; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  for (int s = 0; s < 20; ++s) batch.step(1e-3f);  // landed: impulses to warm-start from
  const std::vector<int> env = {1};
  std::vector<float> saved(static_cast<size_t>(batch.state_size()));
  batch.get_state(env, saved);
  REQUIRE(batch.state_size() == m.nq + m.nv + 3 * batch.contact_candidates() + batch.contact_plan().num_limited_joints());
  const auto continuation = [&](Batch<float>& b, int e) {
    std::vector<unsigned char> bits;
    for (int s = 0; s < 100; ++s) {
      b.step(1e-3f);
      append_bits(bits, b.q() + static_cast<long>(e) * m.nq, m.nq);
      append_bits(bits, b.v() + static_cast<long>(e) * m.nv, m.nv);
    }
    return bits;
  };
  const std::vector<unsigned char> original = continuation(batch, 1);
  batch.set_state(env, saved);
  CHECK(batch.status()[1] == EnvStatus::Ok);
  CHECK(continuation(batch, 1) == original);
  Batch<float> other(m, 1, 1);
  other.set_state(std::vector<int>{0}, saved);
  CHECK(continuation(other, 0) == original);
}

TEST_CASE("saved states: a row of the wrong length or a bad index is an error naming the call") {
  const Model m = quadruped();
  Batch<double> batch(m, 2, 1);
  std::vector<double> short_row(static_cast<size_t>(batch.state_size() - 1));
  CHECK_ERROR_MENTIONS(batch.get_state(std::vector<int>{0}, short_row), "Batch::get_state");
  std::vector<double> row_ok(static_cast<size_t>(batch.state_size()));
  CHECK_ERROR_MENTIONS(batch.set_state(std::vector<int>{2}, row_ok), "Batch::set_state");
}

TEST_CASE("resets clear the contact outputs: no flag, no force, gaps +infinity until the next step") {
  const Model m = quadruped();
  const StateRows states = touchdown_states(m, 1, 60);
  Batch<double> batch(m, 1, 1);
  set_row(batch, 0, states[0].first, states[0].second);
  batch.step(1e-3);
  const int c = batch.contact_candidates();
  REQUIRE(std::count(batch.contact_flags(), batch.contact_flags() + c, 1.0) > 0);
  batch.reset(std::vector<int>{0});
  CHECK(std::count(batch.contact_flags(), batch.contact_flags() + c, 0.0) == c);
  CHECK(std::count(batch.contact_forces(), batch.contact_forces() + 3 * c, 0.0) == 3 * c);
  CHECK(std::count(batch.contact_gaps(), batch.contact_gaps() + c, std::numeric_limits<double>::infinity()) == c);
}
