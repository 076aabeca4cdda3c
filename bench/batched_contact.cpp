// The batched contact stage of step() (batch/contact_solving.hpp) on the shipped quadruped
// standing under PD on its four sphere feet (4 of 12 candidates in contact, 12 rows), against
// the same step with contacts off (ABA + integration: what the contact stage adds), in one run.
// Each environment is first settled for 2 s, so the timed steps are the steady stance with a
// warm-started solver. Counters: env-steps/s per core, ns per env-step, mean solver iterations.
// StepContactPgs: the same step with projected Gauss-Seidel (the baseline) instead of ADMM.
// AdmmIterations, PgsIterations: the same step at a fixed iteration count, for the cost of one
// iteration.
// StepManyContacts: ADMM's two linear solves (ContactSettings::admm_linear_solve: Cholesky on
// the formed G, or PV-soft on the tree) in one run as the number of contacts grows: the same
// stance on feet of 1 + p spheres each (p more side by side, 4 mm apart across the foot, all
// touching), so 4 (1 + p) contacts, m = 12 (1 + p) rows, redundant as a box's corners are.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <numeric>
#include <utility>

#include "batch/batch.hpp"
#include "bench_common.hpp"
#include "topology/contacts.hpp"
#include "topology/urdf.hpp"

namespace {
using namespace batchdyn;

const Model& quadruped() {
  static const Model m = load_urdf_file(bench::model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  return m;
}

// Crouched (hip flexion 0.8, knee -1.6 rad), feet on the plane, PD-held at that pose.
template <class Engine>
void stand(Engine& batch) {
  using T = typename Engine::T;
  const Model& m = batch.model();
  std::vector<double> kp(static_cast<size_t>(m.nv), 0.0), kd(kp.size(), 0.0);
  for (int k = 6; k < m.nv; ++k) kp[static_cast<size_t>(k)] = 80.0, kd[static_cast<size_t>(k)] = 2.0;
  batch.set_control_mode(ControlMode::PositionPD);
  batch.set_pd_gains(kp, kd);
  Eigen::VectorXd q = neutral_configuration<double>(m);
  for (const char* leg : {"FL", "FR", "HL", "HR"}) {
    q[m.bodies[m.joint_index(std::string(leg) + "_hip_flexion")].idx_q] = 0.8;
    q[m.bodies[m.joint_index(std::string(leg) + "_knee")].idx_q] = -1.6;
  }
  q[2] = 0.5 * std::cos(0.8) + 0.02;
  for (int e = 0; e < batch.num_envs(); ++e) {
    for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = static_cast<T>(q[k]);
    for (int k = 6; k < m.nv; ++k) batch.target()[e * m.nv + k] = static_cast<T>(q[k + 1]);
  }
}

// The quadruped with p more 2 cm spheres per foot beside its own, across the foot (along its y).
const Model& quadruped_wide_feet(int p) {
  static std::vector<std::unique_ptr<Model>> cache(64);
  std::unique_ptr<Model>& m = cache.at(static_cast<size_t>(p));
  if (!m) {
    m = std::make_unique<Model>(quadruped());
    std::string geometries;
    for (const char* leg : {"FL", "FR", "HL", "HR"})
      for (int j = 0; j < p; ++j) {
        const double y = 0.004 * (j + 1) * (j % 2 == 0 ? 1 : -1);
        geometries += std::string(geometries.empty() ? "" : ", ") + "{\"name\": \"" + leg + std::to_string(j) + "\", \"link\": \"" + leg +
                      "_FOOT\", \"sphere\": {\"radius\": 0.02}, \"placement\": {\"xyz\": [0, " + std::to_string(y) + ", 0]}}";
      }
    add_contacts_from_json(*m, "{\"geometries\": [" + geometries + "]}", "wide feet");
  }
  return *m;
}

template <class Engine>
void use_solver(Engine& batch, ContactSolver solver) {
  ContactSettings settings = batch.contact_settings();
  settings.solver = solver;
  batch.set_contact_settings(settings);
}

template <class Engine>
void BM_StepQuadruped(benchmark::State& state, bool contacts, ContactSolver solver) {
  using T = typename Engine::T;
  const int n = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  Engine batch(quadruped(), n, threads);
  stand(batch);
  batch.set_contacts(contacts);
  use_solver(batch, solver);
  const T h(2e-3);
  if (contacts)
    for (int s = 0; s < 1000; ++s) batch.step(h);  // settle (2 s)
  const std::vector<T> q0(batch.q(), batch.q() + static_cast<long>(n) * quadruped().nq);
  const std::vector<T> v0(batch.v(), batch.v() + static_cast<long>(n) * quadruped().nv);
  double iterations = 0;
  long calls = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    batch.step(h);
    if (contacts) iterations += std::accumulate(batch.contact_iterations().begin(), batch.contact_iterations().end(), 0.0) / n;
    if (!contacts && ++calls % 100 == 0) {  // free fall: back to the start before it goes far
      std::copy(q0.begin(), q0.end(), batch.q());
      std::copy(v0.begin(), v0.end(), batch.v());
    }
    benchmark::DoNotOptimize(batch.q());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (batch.failed_count() > 0) state.SkipWithError("some environment failed or did not converge");
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, threads, Engine::W, 0.0);
  state.counters["contact_iterations"] = iterations / static_cast<double>(state.iterations());
  state.counters["block_bytes"] = static_cast<double>(batch.block_workspace_bytes());
}

// The cost of one solver iteration: the standing step with exactly K iterations per substep
// (tolerance 0), K = 5 and 45 in one run; (ns(45) - ns(5)) / 40 is one iteration's cost per
// environment. The state goes back to the settled stance every 100 steps.
template <class Engine>
void BM_SolverIterations(benchmark::State& state, ContactSolver solver) {
  using T = typename Engine::T;
  const int n = static_cast<int>(state.range(0)), iterations = static_cast<int>(state.range(1));
  Engine batch(quadruped(), n, 1);
  stand(batch);
  use_solver(batch, solver);
  const T h(2e-3);
  for (int s = 0; s < 1000; ++s) batch.step(h);
  ContactSettings settings = batch.contact_settings();
  settings.tolerance = 0.0, settings.max_iterations = iterations;
  batch.set_contact_settings(settings);
  const std::vector<T> q0(batch.q(), batch.q() + static_cast<long>(n) * quadruped().nq);
  const std::vector<T> v0(batch.v(), batch.v() + static_cast<long>(n) * quadruped().nv);
  long calls = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    batch.step(h);
    if (++calls % 100 == 0) {
      std::copy(q0.begin(), q0.end(), batch.q());
      std::copy(v0.begin(), v0.end(), batch.v());
    }
    benchmark::DoNotOptimize(batch.q());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, 1, Engine::W, 0.0);
  state.counters["contact_iterations"] = batch.contact_iterations()[0];
}

// The standing step on feet of 1 + p spheres, with ADMM's linear solve `solve`; 256 environments,
// 1 thread, settled for 1 s first.
template <class Engine>
void BM_StepManyContacts(benchmark::State& state, AdmmLinearSolve solve) {
  using T = typename Engine::T;
  const int p = static_cast<int>(state.range(0)), n = 256;
  const Model& model = quadruped_wide_feet(p);
  Engine batch(model, n, 1);
  stand(batch);
  ContactSettings settings = batch.contact_settings();
  settings.admm_linear_solve = solve;
  batch.set_contact_settings(settings);
  const T h(2e-3);
  for (int s = 0; s < 500; ++s) batch.step(h);
  double iterations = 0, in_contact = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    batch.step(h);
    iterations += std::accumulate(batch.contact_iterations().begin(), batch.contact_iterations().end(), 0.0) / n;
    benchmark::DoNotOptimize(batch.q());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int e = 0; e < n; ++e)
    for (int c = 0; c < batch.contact_candidates(); ++c) in_contact += batch.contact_flags()[e * batch.contact_candidates() + c];
  if (batch.failed_count() > 0) state.SkipWithError("some environment failed or did not converge");
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, 1, Engine::W, 0.0);
  state.counters["contact_iterations"] = iterations / static_cast<double>(state.iterations());
  state.counters["in_contact"] = in_contact / n;
}

void register_step(const std::string& name, bool contacts, auto bm, ContactSolver solver = ContactSolver::Admm) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), bm, contacts, solver);
  b->ArgNames({"N", "threads"})->UseRealTime()->MinTime(0.3);
  for (int nenv : {64, 4096})
    for (int t : {1, 2}) b->Args({nenv, t});
}

const bool contact_registered = [] {
  register_step("StepContact<double>/quadruped_standing", true, BM_StepQuadruped<Batch<double>>);
  register_step("StepNoContact<double>/quadruped_standing", false, BM_StepQuadruped<Batch<double>>);
  register_step("StepContact<float>/quadruped_standing", true, BM_StepQuadruped<Batch<float>>);
  register_step("StepNoContact<float>/quadruped_standing", false, BM_StepQuadruped<Batch<float>>);
  register_step("StepContactScalar<double>/quadruped_standing", true, BM_StepQuadruped<ScalarBatch<double>>);
  register_step("StepContactPgs<double>/quadruped_standing", true, BM_StepQuadruped<Batch<double>>, ContactSolver::Pgs);
  register_step("StepContactPgs<float>/quadruped_standing", true, BM_StepQuadruped<Batch<float>>, ContactSolver::Pgs);
  for (const auto& [prefix, solver] : {std::pair{std::string("Admm"), ContactSolver::Admm}, std::pair{std::string("Pgs"), ContactSolver::Pgs}}) {
    for (auto [precision, bm] : {std::pair{"<double>", &BM_SolverIterations<Batch<double>>}, std::pair{"<float>", &BM_SolverIterations<Batch<float>>}})
      benchmark::RegisterBenchmark((prefix + "Iterations" + precision + "/quadruped_standing").c_str(), bm, solver)
          ->ArgNames({"N", "iterations"})->Args({4096, 5})->Args({4096, 45})->UseRealTime()->MinTime(0.3);
  }
  for (const auto& [name, solve] : {std::pair{std::string("Cholesky"), AdmmLinearSolve::Cholesky}, std::pair{std::string("PvSoft"), AdmmLinearSolve::PvSoft}})
    for (auto [precision, bm] : {std::pair{"<double>", &BM_StepManyContacts<Batch<double>>}, std::pair{"<float>", &BM_StepManyContacts<Batch<float>>}})
      benchmark::RegisterBenchmark(("StepManyContacts" + name + precision + "/quadruped_wide_feet").c_str(), bm, solve)
          ->ArgNames({"p"})->Args({0})->Args({1})->Args({3})->Args({5})->Args({12})->UseRealTime()->MinTime(0.3);
  return true;
}();

}  // namespace
