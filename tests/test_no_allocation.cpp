// "No allocation per call after setup": every reference kernel and every batch-engine call,
// called again on a warmed-up workspace, must not touch the heap. Counted two ways: every
// allocation function (operator new in all forms, malloc and friends; allocation_counter.cpp)
// and Eigen's runtime malloc check. A separate executable, so the eigen_assert redefinition
// below applies to every Eigen instantiation in it.
#include <stdexcept>
#include <string>

long heap_allocation_count();  // allocation_counter.cpp

struct EigenHeapAllocation : std::logic_error {
  using std::logic_error::logic_error;
};
#define EIGEN_RUNTIME_NO_MALLOC
#define eigen_assert(x) \
  do {                  \
    if (!(x)) throw EigenHeapAllocation(#x); \
  } while (0)

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cstdlib>

#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
// Runs f once to warm up, then again with heap allocation forbidden; returns the number of
// allocations seen (an Eigen allocation throws).
template <class F>
long allocations_in(F&& f) {
  f();
  const long before = heap_allocation_count();
  Eigen::internal::set_is_malloc_allowed(false);
  try {
    f();
  } catch (...) {
    Eigen::internal::set_is_malloc_allowed(true);
    throw;
  }
  Eigen::internal::set_is_malloc_allowed(true);
  return heap_allocation_count() - before;
}
}  // namespace

TEST_CASE("reference kernels do not allocate once their workspace exists") {
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    std::mt19937 rng(70);
    const State s = random_state(m.model, rng);
    Data<double> data(m.model);
    ConstrainedData<double> cd(m.model);
    Eigen::VectorXd q_next(m.model.nq), dv(m.model.nv);
    CHECK(allocations_in([&] { aba(m.model, data, s.q, s.v, s.tau); }) == 0);
    CHECK(allocations_in([&] { rnea(m.model, data, s.q, s.v, s.tau); }) == 0);
    CHECK(allocations_in([&] { nonlinear_effects(m.model, data, s.q, s.v); }) == 0);
    CHECK(allocations_in([&] { crba(m.model, data, s.q); }) == 0);
    CHECK(allocations_in([&] { constraint_kinematics(m.model, data, cd.constraints, s.q, s.v); }) == 0);
    CHECK(allocations_in([&] { constrained_forward_dynamics(m.model, data, cd, s.q, s.v, s.tau); }) == 0);
    const ProxLtlPlan prox_ltl_plan = plan_prox_ltl(m.model);
    ProxLtlData<double> prox_ltl_data(m.model);
    CHECK(allocations_in([&] { prox_ltl(m.model, prox_ltl_plan, data, prox_ltl_data, s.q, s.v, s.tau); }) == 0);
    LcabaData<double> lcaba_data(m.model);
    ProxBboData<double> proxbbo_data(m.model);
    CHECK(allocations_in([&] { lcaba(m.model, lcaba_data, s.q, s.v, s.tau); }) == 0);
    CHECK(allocations_in([&] { proxbbo(m.model, proxbbo_data, s.q, s.v, s.tau); }) == 0);
    CHECK(allocations_in([&] { delassus(m.model, data, cd, s.q); }) == 0);
    DelassusData<double> dd(m.model);
    Eigen::VectorXd x = Eigen::VectorXd::Ones(m.model.constraint_rows), y(m.model.constraint_rows);
    Eigen::MatrixXd L(m.model.constraint_rows, m.model.constraint_rows);
    CHECK(allocations_in([&] { pv_osimr_delassus(m.model, data, dd, s.q); }) == 0);
    CHECK(allocations_in([&] { pv_osim_delassus(m.model, data, dd, s.q); }) == 0);
    CHECK(allocations_in([&] { apply_delassus(data.constants, dd.plan, dd.workspace, x.data(), y.data()); }) == 0);
    CHECK(allocations_in([&] { damped_cholesky(dd.G.data(), m.model.constraint_rows, 1e-6, L.data()); }) == 0);
    CHECK(allocations_in([&] { integrate<double>(m.model, s.q, s.v, q_next); }) == 0);
    CHECK(allocations_in([&] { difference<double>(m.model, s.q, q_next, dv); }) == 0);
    CHECK(allocations_in([&] { forward_kinematics(m.model, data, s.q); }) == 0);
    CHECK(allocations_in([&] { forward_kinematics(m.model, data, s.q, s.v, s.tau, data.constants.base_acceleration); }) == 0);
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, m.model.nv);
    for (int f = 0; f < static_cast<int>(m.model.frames.size()); ++f)
      CHECK(allocations_in([&] { frame_jacobian(m.model, data, f, J); }) == 0);
  }
}

TEST_CASE_TEMPLATE("batch forward_dynamics and step do not allocate once the engine has run", Engine, Batch<double>,
                   Batch<float>, ScalarBatch<double>) {
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      Engine batch(m.model, 257, threads);
      using T = typename Engine::T;
      // The default state (the neutral configuration, the base at the origin) puts robots with
      // geometry (Cassie's 129 candidates) deep in the ground, where the contact solver runs to its cap: a small cap keeps this test fast (what
      // allocates does not depend on the iteration count).
      ContactSettings capped = batch.contact_settings();
      capped.max_iterations = 3;
      batch.set_contact_settings(capped);
      // Warm up every thread's workspace (and oneTBB's task pools), then count. Under load a
      // worker may join the arena late and make its workspace then: warm up until all have,
      // with the cheap call (a step of a robot resting in the ground, as random models do here,
      // costs up to the contact solver's cap), then step each thread's workspace.
      for (int k = 0; k < 20 || (batch.threads_used() < threads && k < 100000); ++k) batch.forward_dynamics();
      for (int k = 0; k < 20; ++k) batch.step(T(1e-3));
      REQUIRE(batch.threads_used() == threads);
      CHECK(allocations_in([&] { batch.forward_dynamics(); }) == 0);
      CHECK(allocations_in([&] { batch.step(T(1e-3)); }) == 0);
    }
  }
}

TEST_CASE_TEMPLATE("contact steps by PGS and by ADMM on the tree (PV-soft) do not allocate once the engine has run", Engine,
                   Batch<double>, Batch<float>) {
  using T = typename Engine::T;
  const Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  for (const auto& [solver, solve] : {std::pair{ContactSolver::Pgs, AdmmLinearSolve::Cholesky}, std::pair{ContactSolver::Admm, AdmmLinearSolve::PvSoft}}) {
    CAPTURE(contact_solver_name(solver));
    Engine batch(m, 33, 1);
    ContactSettings settings = batch.contact_settings();
    settings.solver = solver, settings.admm_linear_solve = solve, settings.max_iterations = 20;
    batch.set_contact_settings(settings);
    const Eigen::VectorXd q = crouching_quadruped(m, 0.0);
    for (int e = 0; e < batch.num_envs(); ++e)
      for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = static_cast<T>(q[k]);
    for (int k = 0; k < 20; ++k) batch.step(T(1e-3));
    CHECK(allocations_in([&] { batch.step(T(1e-3)); }) == 0);
  }
}

TEST_CASE_TEMPLATE("PD steps with substeps, per-environment parameters and observations do not allocate", Engine,
                   Batch<double>, Batch<float>, ScalarBatch<double>) {
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  using T = typename Engine::T;
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Engine batch(model, 257, threads);
    std::vector<double> kp(static_cast<size_t>(model.nv), 50.0), kd(static_cast<size_t>(model.nv), 2.0);
    for (int k = 0; k < 6; ++k) kp[static_cast<size_t>(k)] = kd[static_cast<size_t>(k)] = 0.0;
    batch.set_pd_gains(kp, kd);
    batch.set_control_mode(ControlMode::PositionPD);
    batch.set_gravity(std::vector<int>{3}, std::vector<double>{0, 0, -3});
    batch.set_observed_frames({model.bodies[2].name, model.bodies.back().name});
    for (int k = 0; k < 20 || (batch.threads_used() < threads && k < 100000); ++k) batch.forward_dynamics();  // all threads in
    for (int k = 0; k < 20; ++k) batch.step(T(1e-3), 4), batch.observe();
    REQUIRE(batch.threads_used() == threads);
    CHECK(allocations_in([&] { batch.step(T(1e-3), 4); }) == 0);
    CHECK(allocations_in([&] { batch.observe(); }) == 0);
  }
}

TEST_CASE_TEMPLATE("batch delassus does not allocate once the engine has run", Engine, Batch<double>, Batch<float>,
                   ScalarBatch<double>) {
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Engine batch(m.model, 67, 2);
    for (int k = 0; k < 20 || (batch.threads_used() < 2 && k < 100000); ++k)
      batch.delassus(), batch.delassus(Engine::DelassusAlgorithm::PvOsim);
    REQUIRE(batch.threads_used() == 2);
    CHECK(allocations_in([&] { batch.delassus(); }) == 0);
    CHECK(allocations_in([&] { batch.delassus(Engine::DelassusAlgorithm::PvOsim); }) == 0);
  }
}

TEST_CASE_TEMPLATE("constrained steps by LCABA and proxBBO do not allocate once the engine has run", Engine, Batch<double>,
                   Batch<float>, ScalarBatch<double>) {
  using T = typename Engine::T;
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    for (ConstraintSolver solver : {ConstraintSolver::Lcaba, ConstraintSolver::ProxBbo}) {
      Engine batch(m.model, 67, 2);
      batch.set_constraint_solver(solver);
      for (int k = 0; k < 20 || (batch.threads_used() < 2 && k < 100000); ++k) batch.forward_dynamics();
      REQUIRE(batch.threads_used() == 2);
      CHECK(allocations_in([&] { batch.forward_dynamics(); }) == 0);
      CHECK(allocations_in([&] { batch.step(T(1e-3), 2); }) == 0);
    }
  }
}

TEST_CASE_TEMPLATE("after reserve_contacts, a step that meets more contacts than any before does not allocate", Engine,
                   Batch<double>, Batch<float>) {
  using T = typename Engine::T;
  const Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  // The allocations of the step that first puts the trunk's candidates in contact with the feet's
  // (every candidate: more than the room a contact problem starts with), after steps on the feet.
  const auto allocations_when_the_trunk_lands = [&](bool reserve) {
    Engine batch(m, 8, 1);
    if (reserve) batch.reserve_contacts(batch.contact_candidates());
    const auto place = [&](double base_height) {
      Eigen::VectorXd q = crouching_quadruped(m, 0.0);
      q[2] = base_height;
      for (int e = 0; e < batch.num_envs(); ++e)
        for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = static_cast<T>(q[k]);
      std::fill_n(batch.v(), batch.num_envs() * m.nv, T(0));
    };
    place(0.5 * std::cos(0.8) + 0.02);
    for (int k = 0; k < 5; ++k) batch.step(T(1e-3));
    REQUIRE(std::count(batch.contact_flags(), batch.contact_flags() + batch.contact_candidates(), 1) == 4);  // the feet
    place(-0.07);  // the trunk's box (0.15 m high) in the ground up to 5 mm below its top corners
    const long before = heap_allocation_count();
    batch.step(T(1e-3));
    const long allocations = heap_allocation_count() - before;
    REQUIRE(std::count(batch.contact_flags(), batch.contact_flags() + batch.contact_candidates(), 1) == batch.contact_candidates());
    return allocations;
  };
  CHECK(allocations_when_the_trunk_lands(false) > 0);  // the problem grows: what the reservation is for
  CHECK(allocations_when_the_trunk_lands(true) == 0);
}

TEST_CASE("the allocation counter itself sees allocations") {
  CHECK(allocations_in([] { std::string big(1000, 'x'); }) > 0);
  struct alignas(64) Wide { double x[8]; };
  CHECK(allocations_in([] {
          Wide* volatile w = new Wide;  // over-aligned operator new; volatile: not elided
          delete w;
        }) > 0);
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(allocations_in([] {
          void* volatile p = std::malloc(64);  // volatile: the pair must not be optimised away
          std::free(p);
        }) > 0);
#endif
  CHECK_THROWS_AS(allocations_in([] { Eigen::VectorXd v(100); }), EigenHeapAllocation);
}
