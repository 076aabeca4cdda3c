// Projected Gauss-Seidel (kernels/contact/contact_pgs.hpp), the baseline contact solver
// (ContactSettings::solver = Pgs): the same NCP as ADMM's, so the same step as the dense
// reference's where the solution is unique; resting and sliding closed forms; its reports; lanes
// against W = 1.
#include "contact_reference_helpers.hpp"
#include "kernels/contact/contact_pgs.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

template <class Engine>
void use_pgs(Engine& batch, double tolerance, int max_iterations) {
  ContactSettings settings = batch.contact_settings();
  settings.solver = ContactSolver::Pgs, settings.tolerance = tolerance, settings.max_iterations = max_iterations;
  batch.set_contact_settings(settings);
}
}  // namespace

TEST_CASE("PGS: a sliding contact ends on the friction disk's rim, opposite to its slip, as Coulomb's law asks") {
  // One contact, G = I (already unit-scaled), a tangential free velocity too large to stop with
  // mu = 0.5: the impulse is (1, -0.5, 0) (push the normal velocity to 0, friction at the limit).
  ContactSolverWorkspace<double> ws(1, 0);
  std::fill(ws.G.begin(), ws.G.end(), 0.0);
  for (int i = 0; i < 3; ++i) ws.G[static_cast<size_t>(i * 3 + i)] = 1.0;
  ws.g = {-1.0, 2.0, 0.0};
  ws.mu = {0.5};
  ws.in_contact = {1.0};
  ContactSettings settings;
  settings.solver = ContactSolver::Pgs, settings.tolerance = 1e-14;
  double lambda[3] = {0, 0, 0};
  const ContactSolverReport<double> report = contact_pgs(1, 0, 0, settings, ws, lambda);
  CHECK(report.converged == 1.0);
  CHECK(lambda[0] == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(lambda[1] == doctest::Approx(-0.5).epsilon(1e-12));
  CHECK(std::abs(lambda[2]) < 1e-14);
}

TEST_CASE("PGS: one landing step of the quadruped equals the dense reference's ADMM solution (a unique solution), joint limits included") {
  const Model m = quadruped();
  ScalarBatch<double> batch(m, 6, 1);
  use_pgs(batch, 1e-11, 100000);
  ContactSettings reference = batch.contact_settings();
  reference.solver = ContactSolver::Admm, reference.max_iterations = 20000, reference.tolerance = 1e-12;
  check_step_equals_dense_reference(batch, touchdown_states(m, 6, 7), 2e-3, reference);
}

TEST_CASE("PGS: a box resting on the plane carries m g on its corners and does not drift over 10^4 steps") {
  const Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 0.08 / 12);
  Batch<double> batch(box, 3, 1);
  use_pgs(batch, 1e-6, 500);
  check_box_rests_without_drift(batch, 1e-3);
}

TEST_CASE("PGS: a box on an incline sticks when tan(theta) < mu and slides with a = g (sin - mu cos) otherwise") {
  const Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 0.08 / 12);
  const double theta = 0.3;  // tan = 0.309
  const Vec3d normal{-std::sin(theta), 0.0, std::cos(theta)};  // the plane rises along +x: the box slides towards -x
  Batch<double> batch(box, 2, 1);
  use_pgs(batch, 1e-8, 5000);
  batch.set_friction(std::array<int, 1>{0}, 0.5);  // sticks
  batch.set_friction(std::array<int, 1>{1}, 0.1);  // slides
  for (int e = 0; e < 2; ++e) {
    batch.set_ground(std::array<int, 1>{e}, 0.0, normal);
    const double half = std::sin(theta / 2), w = std::cos(theta / 2);  // resting on its face: -theta about y
    double* q = batch.q() + e * box.nq;
    q[0] = 0.1 * normal.x, q[1] = 0.0, q[2] = 0.1 * normal.z;
    q[3] = 0.0, q[4] = -half, q[5] = 0.0, q[6] = w;
  }
  const double h = 1e-3;
  for (int s = 0; s < 500; ++s) batch.step(h);
  REQUIRE(batch.status()[0] == EnvStatus::Ok);
  REQUIRE(batch.status()[1] == EnvStatus::Ok);
  const double t = 500 * h;
  CHECK(std::abs(batch.q()[0] - 0.1 * normal.x) < 1e-5);
  const double a = kG * (std::sin(theta) - 0.1 * std::cos(theta));
  const double along = (batch.q()[box.nq] - 0.1 * normal.x) / -std::cos(theta);  // distance down the slope
  CHECK(along == doctest::Approx(0.5 * a * t * t).epsilon(0.02));
}

TEST_CASE("PGS: an environment that hits the iteration cap is stepped with its last iterate and reported") {
  const Model m = quadruped();
  const auto states = touchdown_states(m, 4, 11);
  Batch<double> batch(m, 4, 1);
  use_pgs(batch, 0.0, 1);
  for (int e = 0; e < 4; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  batch.step(1e-3);
  for (int e = 0; e < 4; ++e) {
    CAPTURE(e);
    CHECK(batch.status()[static_cast<size_t>(e)] == EnvStatus::ContactNotConverged);
    CHECK(batch.contact_iterations()[static_cast<size_t>(e)] == 1);
    CHECK(batch.contact_residual()[static_cast<size_t>(e)] > 0.0);
  }
}

TEST_CASE("PGS: SIMD lanes equal W = 1 over 100 landing steps of the quadruped (double 1e-12, float 1e-5)") {
  const Model m = quadruped();
  const int N = 11;
  const auto states = touchdown_states(m, N, 3);
  check_lanes_equal_w1(m, N, true, [&](auto& batch) {
    use_pgs(batch, batch.contact_settings().tolerance, 2000);
    for (int e = 0; e < N; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
    for (int s = 0; s < 100; ++s) batch.step(1e-3f);
  });
}
