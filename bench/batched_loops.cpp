// Constrained forward dynamics of mechanisms with loops through the batch engine
// (lcaba-proxbbo §VI-B): batched LCABA and proxBBO with 1 and 3 outer iterations, the dense
// joint-space proximal solver (the baseline: CRBA, Jacobians, Cholesky, per environment), proxLTL
// (the paper's joint-space baseline, scalar: BM_ProxLtl, 1 and 3 iterations), and batched ABA on
// the same spanning tree, per model, float and double, N = 1024, one thread.
// LCABA also on W = 1 lanes (ScalarBatch), for the SIMD speed-up. "Converged" runs iterate to
// the tolerance inside step() (dt = 1 ms, from rest without torque, warm-started from the
// previous step's multipliers, as in a rollout); the others time forward_dynamics() with a fixed iteration count. Every solver
// uses the engine's default mu (1e4 double, 1e2 float). Counters as in bench/batched_aba.cpp
// (flops counted for ABA and the fixed-iteration LCABA / proxBBO runs; 0 for the dense solver
// and the converged steps), plus the largest iteration count of the last call.
//
//   ./build.sh bench --benchmark_filter='^Loops/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

#include "batch/batch.hpp"
#include "bench/bench_common.hpp"
#include "kernels/loops/constraint_projection.hpp"
#include "kernels/loops/prox_ltl.hpp"

namespace {
using namespace batchdyn;
using bench::Case;
using bench::loop_models;

// Where a case's environments start when on its loops (Case::start_on_loops, and every
// rollout): 16 poses near the neutral one, projected onto the loops, repeated. Computed once per
// case.
const std::vector<Eigen::VectorXd>& start_poses(const Case& c) {
  static std::map<const Case*, std::vector<Eigen::VectorXd>> cache;
  auto [it, inserted] = cache.try_emplace(&c);
  if (!inserted) return it->second;
  const Model& model = c.model;
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> small(-0.1, 0.1);
  for (int k = 0; k < 16; ++k) {
    Eigen::VectorXd dv = Eigen::VectorXd::NullaryExpr(model.nv, [&]() { return small(rng); }), q(model.nq);
    for (int i = 1; i < model.num_bodies(); ++i)  // floating bases stay where they are
      if (model.bodies[i].joint_type == JointType::FreeFlyer) dv.segment(model.bodies[i].idx_v, 6).setZero();
    integrate<double>(model, neutral_configuration<double>(model), dv, q);
    project_to_constraints(model, q);
    it->second.push_back(q);
  }
  return it->second;
}

// The N states a case's benchmarks start from, drawn in one order so that every solver of the
// case (BM_Loops, BM_ProxLtl) times the same ones: configurations from start_poses (repeated)
// for the rollouts and the cases that start on their loops, else random; random torques for the
// one-call timings, none for the rollouts (random torques on the hand's 10-gram finger links blow
// a 1 ms step up within a few steps). Rollouts start on the loops as Batch::reset puts them:
// from a random configuration, metres off, the stabilisation's exact correction through a
// near-singular leg or chain blows the step up (non-finite within 10-200 steps on the biped,
// the humanoids, the ladder), where the solver capped at 100 iterations used to return a
// bounded, unconverged answer.
struct StartingStates {
  std::vector<Eigen::VectorXd> q, tau;
};
StartingStates starting_states(const Case& c, int n, bool rollout) {
  const Model& model = c.model;
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 1);
  const bool with_torques = !rollout;
  static const std::vector<Eigen::VectorXd> none;
  const std::vector<Eigen::VectorXd>& poses = rollout || c.start_on_loops ? start_poses(c) : none;
  StartingStates s;
  for (int e = 0; e < n; ++e) {
    s.q.push_back(poses.empty() ? random_configuration<double>(model, rng) : poses[static_cast<size_t>(e) % poses.size()]);
    s.tau.push_back(with_torques ? Eigen::VectorXd::NullaryExpr(model.nv, [&] { return normal(rng); }).eval()
                                 : Eigen::VectorXd::Zero(model.nv).eval());
  }
  return s;
}

template <class Engine>
void BM_Loops(benchmark::State& state, const Case* c, Algorithm solver, int iterations, bool step) {
  const Model* model = &c->model;
  using T = typename Engine::T;
  const int n = static_cast<int>(state.range(0));
  Engine batch(*model, n, 1);
  batch.set_use_constraints(algorithm_traits(solver).solves_constraints);
  if (algorithm_traits(solver).solves_constraints) batch.set_constraint_solver(solver);
  ProximalSettings settings = batch.constraint_settings();
  if (iterations > 0) settings.max_iterations = iterations, settings.tolerance = 0.0;  // exactly `iterations` sweeps
  batch.set_constraint_settings(settings);
  const StartingStates start_states = starting_states(*c, n, /*rollout=*/step);
  for (int e = 0; e < n; ++e) {
    for (int k = 0; k < model->nq; ++k) batch.q()[e * model->nq + k] = static_cast<T>(start_states.q[static_cast<size_t>(e)][k]);
    for (int k = 0; k < model->nv; ++k) batch.tau()[e * model->nv + k] = static_cast<T>(start_states.tau[static_cast<size_t>(e)][k]);
  }
  const std::vector<T> q0(batch.q(), batch.q() + static_cast<long>(n) * model->nq);
  long calls = 0;
  double paused = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (step) {
      batch.step(T(1e-3));
      if (++calls % 200 == 0) {  // back to the start before the states drift far
        state.PauseTiming();
        const auto pause = std::chrono::steady_clock::now();
        std::copy(q0.begin(), q0.end(), batch.q());
        std::fill(batch.v(), batch.v() + static_cast<long>(n) * model->nv, T(0));
        paused += std::chrono::duration<double>(std::chrono::steady_clock::now() - pause).count();
        state.ResumeTiming();
      }
    } else {
      batch.forward_dynamics();
    }
    benchmark::DoNotOptimize(batch.qdd());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - paused;
  // A fixed iteration count hits its cap by design (EnvStatus::ConstraintNotConverged, a report),
  // and the converged steps report what they report: only a failure (nothing computed) voids the
  // timing; the reports are counted.
  const std::vector<EnvStatus>& status = batch.status();
  if (std::any_of(status.begin(), status.end(), [](EnvStatus s) { return s != EnvStatus::Ok && !is_report(s); }))
    state.SkipWithError("some environment failed");
  state.counters["reports"] = static_cast<double>(std::count_if(status.begin(), status.end(), [](EnvStatus s) { return is_report(s); }));
  // Flops as counted on CountingLane (batch/throughput.hpp): ABA, and the loop kernels at a fixed
  // iteration count (the converged runs' count varies per step and the dense solver's is not
  // counted: 0), one call without a step.
  const double flops = step ? 0.0 : algorithm_flops(*model, solver, iterations);
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, 1, Engine::W, flops);
  if (solver == Algorithm::Lcaba || solver == Algorithm::ProxBbo) {
    const std::vector<int>& it = batch.constraint_iterations();
    state.counters["iterations"] = *std::max_element(it.begin(), it.end());
  }
  state.counters["constraint_rows"] = model->constraint_rows;
}

// proxLTL (kernels/loops/prox_ltl.hpp), the joint-space baseline of lcaba-proxbbo Table II (column
// LTL; Pinocchio's constraintDynamics): scalar, one environment after another over the same N
// starting states and torques as BM_Loops, exactly `iterations` proximal iterations, the engine's
// default mu for T. Each call runs the kinematics, CRBA, RNEA, the sparse KKT factorisation and
// the iterations' solves. No flops counted (0). Registered through add(), whose solver argument it
// does not read (proxLTL is a reference function, not an engine solver of the registry).
template <class T>
void BM_ProxLtl(benchmark::State& state, const Case* c, Algorithm, int iterations, bool) {
  const Model& model = c->model;
  const int n = static_cast<int>(state.range(0));
  const ProxLtlPlan plan = plan_prox_ltl(model);
  Data<T> data(model);
  ProxLtlData<T> pd(model);
  ProximalSettings settings = Batch<T>(model, 1, 1).constraint_settings();
  settings.max_iterations = iterations, settings.tolerance = 0.0;
  const StartingStates start_states = starting_states(*c, n, /*rollout=*/false);
  std::vector<VectorX<T>> q, tau;
  for (int e = 0; e < n; ++e) {
    q.push_back(start_states.q[static_cast<size_t>(e)].cast<T>());
    tau.push_back(start_states.tau[static_cast<size_t>(e)].cast<T>());
  }
  const VectorX<T> v = VectorX<T>::Zero(model.nv);
  int largest = 0;
  const auto start = std::chrono::steady_clock::now();
  try {
    for (auto _ : state)
      for (int e = 0; e < n; ++e) {
        benchmark::DoNotOptimize(prox_ltl(model, plan, data, pd, q[static_cast<size_t>(e)], v, tau[static_cast<size_t>(e)], settings).data());
        largest = std::max(largest, pd.iterations);
      }
  } catch (const Error& error) {
    state.SkipWithError(error.what());
    return;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, 1, 1, 0.0);
  state.counters["iterations"] = largest;
  state.counters["constraint_rows"] = model.constraint_rows;
}

void add(const std::string& name, const Case& c, Algorithm solver, int iterations, auto bm, bool step = false) {
  benchmark::RegisterBenchmark(("Loops/" + name + "/" + c.name).c_str(), bm, &c, solver, iterations, step)
      ->ArgNames({"N"})
      ->Arg(1024)
      ->UseRealTime()
      ->MinTime(0.2);
}

template <class T>
void register_precision(const std::string& p, const Case& c) {
  add("Aba" + p, c, Algorithm::Aba, 0, BM_Loops<Batch<T>>);
  for (int k : {1, 3}) {
    add("Lcaba" + std::to_string(k) + p, c, Algorithm::Lcaba, k, BM_Loops<Batch<T>>);
    add("ProxBbo" + std::to_string(k) + p, c, Algorithm::ProxBbo, k, BM_Loops<Batch<T>>);
  }
  add("Lcaba1Scalar" + p, c, Algorithm::Lcaba, 1, BM_Loops<ScalarBatch<T>>);
  for (int k : {1, 3}) add("ProxLtl" + std::to_string(k) + p, c, Algorithm::Constrained, k, BM_ProxLtl<T>);
#if XSIMD_WITH_AVX512F
  // Half-width lanes on an AVX-512 build: cores that split 512-bit operations in two (AMD
  // Zen 4) have the same arithmetic throughput at W/2, with half the workspace per block.
  add("Aba" + p + "Avx2", c, Algorithm::Aba, 0, BM_Loops<BatchEngine<xsimd::batch<T, xsimd::avx2>>>);
  add("Lcaba1" + p + "Avx2", c, Algorithm::Lcaba, 1, BM_Loops<BatchEngine<xsimd::batch<T, xsimd::avx2>>>);
#endif
  add("LcabaConvergedStep" + p, c, Algorithm::Lcaba, 0, BM_Loops<Batch<T>>, true);
  add("ProxBboConvergedStep" + p, c, Algorithm::ProxBbo, 0, BM_Loops<Batch<T>>, true);
}

const bool loops_registered = [] {
  for (const Case& c : loop_models()) {
    register_precision<double>("<double>", c);
    register_precision<float>("<float>", c);
    add("Dense<double>", c, Algorithm::Constrained, 0, BM_Loops<Batch<double>>);
  }
  return true;
}();

}  // namespace
