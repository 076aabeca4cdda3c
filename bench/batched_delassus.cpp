// Delassus matrices G = J M^{-1} J^T through the batch engine (Batch::delassus): PV-OSIMr
// (kernels/delassus/pv_osimr.hpp) and PV-OSIM (kernels/delassus/pv_osim.hpp) on SIMD lanes and on W = 1 lanes,
// against the dense baseline (CRBA, frame Jacobians, Cholesky: kernels/loops/constrained_dynamics.hpp),
// one thread (per core) and N = 1024 environments at random configurations. Models:
//   welded_stem:S:B   the paper's scaling mechanism (pv-osimr Fig. 3a), stem S = 1..20, B = 1, 2, 4
//                     two-link branches at each end of the stem, every tip welded (m = 12 B)
//   humanoid_feet_hands   free-floating humanoid, both soles and both palms welded (m = 24)
//   quadruped_feet        free-floating quadruped, four point feet (m = 12)
// Names: Delassus/<pv-osimr|pv-osim|dense>/<Simd|Scalar>/<double|float>/<model>/N:1024/threads:T.
// Counters as bench/batched_aba.cpp (ns_per_env, env_per_s_per_core, flops_per_env, pct_peak).
// bench/delassus_figure.py draws the scaling figure and prints the ratio table from the JSON.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include "batch/batch.hpp"
#include "batch/throughput.hpp"
#include "bench/bench_common.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "topology/generators.hpp"
#include "topology/constraints_io.hpp"
#include "topology/urdf.hpp"

namespace {
using namespace batchdyn;
using bench::Case;
using bench::model_path;

const std::vector<Case>& delassus_cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    Model humanoid = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(humanoid, model_path("humanoid_feet_hands.json"));
    c.push_back({"humanoid_feet_hands", humanoid});
    Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
    add_constraints_from_json_file(quadruped, model_path("quadruped_feet.json"));
    c.push_back({"quadruped_feet", quadruped});
    for (int branches : {1, 2, 4})
      for (int stem : {1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}) {
        const std::string spec = "welded_stem:" + std::to_string(stem) + ":" + std::to_string(branches);
        c.push_back({spec, build_generated(generate_from_spec(spec))});
      }
    return c;
  }();
  return all;
}

template <class T>
std::vector<VectorX<T>> random_configurations(const Model& m, int n) {
  std::mt19937 rng(5);
  std::vector<VectorX<T>> qs;
  for (int e = 0; e < n; ++e) qs.push_back(random_configuration<double>(m, rng).cast<T>());
  return qs;
}

template <class Engine>
void BM_Recursive(benchmark::State& state, const Model* model, bool pv_osim) {
  using T = typename Engine::T;
  const int n = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(1));
  Engine batch(*model, n, threads);
  const std::vector<VectorX<T>> qs = random_configurations<T>(*model, n);
  for (int e = 0; e < n; ++e) std::copy_n(qs[static_cast<size_t>(e)].data(), model->nq, batch.q() + static_cast<long>(e) * model->nq);
  const auto algorithm = pv_osim ? Engine::DelassusAlgorithm::PvOsim : Engine::DelassusAlgorithm::PvOsimr;
  batch.delassus(algorithm);  // warm-up
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    batch.delassus(algorithm);
    benchmark::DoNotOptimize(batch.delassus_matrices());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (batch.failed_count() > 0) state.SkipWithError("some environment failed");
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, threads, Engine::W,
                              static_cast<double>(delassus_flops(*model, pv_osim).total()));
}

// The dense baseline, one environment after another on one thread.
template <class T>
void BM_Dense(benchmark::State& state, const Model* model) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<VectorX<T>> qs = random_configurations<T>(*model, n);
  Data<T> data(*model);
  ConstrainedData<T> cd(*model);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const VectorX<T>& q : qs) benchmark::DoNotOptimize(delassus(*model, data, cd, q).data());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, 1, 1, 0.0);
}

void add(benchmark::internal::Benchmark* b, bool two_threads) {
  b->ArgNames({"N", "threads"})->UseRealTime()->MinTime(0.1)->Args({1024, 1});
  if (two_threads) b->Args({1024, 2});
}

template <class T>
void register_precision(const char* precision) {
  for (const Case& c : delassus_cases()) {
    const bool shipped = c.name.rfind("welded_stem", 0) != 0;  // 2 threads only on the shipped robots
    const std::string tail = std::string("/") + precision + "/" + c.name;
    add(benchmark::RegisterBenchmark(("Delassus/pv-osimr/Simd" + tail).c_str(), BM_Recursive<Batch<T>>, &c.model, false), shipped);
    add(benchmark::RegisterBenchmark(("Delassus/pv-osim/Simd" + tail).c_str(), BM_Recursive<Batch<T>>, &c.model, true), shipped);
    add(benchmark::RegisterBenchmark(("Delassus/pv-osimr/Scalar" + tail).c_str(), BM_Recursive<ScalarBatch<T>>, &c.model, false), false);
    add(benchmark::RegisterBenchmark(("Delassus/pv-osim/Scalar" + tail).c_str(), BM_Recursive<ScalarBatch<T>>, &c.model, true), false);
    benchmark::RegisterBenchmark(("Delassus/dense/Scalar" + tail).c_str(), BM_Dense<T>, &c.model)
        ->ArgNames({"N", "threads"})->UseRealTime()->MinTime(0.1)->Args({256, 1});
  }
}

const bool delassus_registered = [] {
  register_precision<double>("double");
  register_precision<float>("float");
  return true;
}();

}  // namespace
