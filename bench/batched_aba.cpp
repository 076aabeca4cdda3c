// Batched forward dynamics (ABA) and step() through the batch engine: env-evaluations per
// second for N environments, float and double, W = 1 (ScalarBatch, the same kernel on plain
// scalars) vs SIMD lanes (Batch), 1 vs 2 threads. Counters:
//   items_per_second     environment evaluations per second (all threads)
//   env_per_s_per_core   the same divided by the thread count
//   ns_per_env           wall time per environment (1 / items_per_second, in ns)
//   flops_per_env        from the counting lane type (layout/counting_lane.hpp)
//   GFLOPs, pct_peak     achieved rate and its share of threads x the core's peak
// Every shipped model over N in {1, 64, 1024, 4096, 16384}; step() on the humanoid; AbaKernel:
// the kernel alone on the same states (N = 1024, one thread), what the engine adds around it.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include "batch/batch.hpp"
#include "batch/throughput.hpp"
#include "bench/bench_common.hpp"
#include "topology/generators.hpp"
#include "topology/constraints_io.hpp"
#include "topology/urdf.hpp"

namespace {
using namespace batchdyn;
using bench::Case;
using bench::model_path;

const std::vector<Case>& models() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    c.push_back({"humanoid", load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer)});
    c.push_back({"quadruped", load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer)});
    c.push_back({"biped_fourbar", load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer)});
    c.push_back({"hand", load_urdf_file(model_path("hand.urdf"))});
    c.push_back({"double_pendulum", load_urdf_file(model_path("double_pendulum.urdf"))});
    c.push_back({"chain32", build_generated(generate_chain(32))});
    return c;
  }();
  return all;
}

template <class Engine>
void fill_random(Engine& batch) {
  using T = typename Engine::T;
  const Model& m = batch.model();
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 1);
  for (int e = 0; e < batch.num_envs(); ++e) {
    const Eigen::VectorXd q = random_configuration<double>(m, rng);
    for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = static_cast<T>(q[k]);
    for (int k = 0; k < m.nv; ++k) {
      batch.v()[e * m.nv + k] = static_cast<T>(n(rng));
      batch.tau()[e * m.nv + k] = static_cast<T>(n(rng));
    }
  }
}

template <class Engine>
void BM_Batch(benchmark::State& state, const Model* model, bool step) {
  using T = typename Engine::T;
  const int n = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  Engine batch(*model, n, threads);
  fill_random(batch);
  const std::vector<T> q0(batch.q(), batch.q() + static_cast<long>(n) * model->nq);
  const std::vector<T> v0(batch.v(), batch.v() + static_cast<long>(n) * model->nv);
  long calls = 0;
  double paused = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (step) {
      batch.step(T(1e-4));
      if (++calls % 1000 == 0) {  // keep states bounded over long runs
        state.PauseTiming();
        const auto pause = std::chrono::steady_clock::now();
        std::copy(q0.begin(), q0.end(), batch.q());
        std::copy(v0.begin(), v0.end(), batch.v());
        paused += std::chrono::duration<double>(std::chrono::steady_clock::now() - pause).count();
        state.ResumeTiming();
      }
    } else {
      batch.forward_dynamics();
    }
    benchmark::DoNotOptimize(batch.qdd());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - paused;
  if (batch.failed_count() > 0) state.SkipWithError("some environment failed");
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * n, threads, Engine::W,
                              static_cast<double>(aba_flops(*model).total()));
  state.counters["block_bytes"] = static_cast<double>(batch.block_workspace_bytes());
  state.counters["bytes_per_env"] = batch.workspace_bytes_per_env();
}

// The ABA kernel alone on SIMD lanes (kernels/tree/aba.hpp), without the engine around it: N
// environments as N / W lane blocks already in lane layout, one workspace, one thread; no gather,
// validation, actuation, damping or scatter. Set next to AbaSimd (same model, N, random states)
// it shows what the engine's stages cost per environment, and how close the kernel itself comes
// to the core's peak.
template <class T>
void BM_AbaKernel(benchmark::State& state, const Model* model, bool) {
  using L = SimdLane<T>;
  constexpr int W = lane_width<L>;
  const int n = static_cast<int>(state.range(0)), blocks = (n + W - 1) / W;
  const ModelConstants<L> constants(*model);
  AbaWorkspace<L> workspace(*model);
  Batch<T> batch(*model, blocks * W, 1);  // only to draw the states as AbaSimd does
  fill_random(batch);
  const int nq = model->nq, nv = model->nv;
  std::vector<L> q(static_cast<size_t>(blocks * nq)), v(static_cast<size_t>(blocks * nv)), tau(v.size()), qdd(v.size());
  alignas(64) T lanes[W];
  const auto to_lanes = [&](const T* rows, int width, std::vector<L>& out) {
    for (int b = 0; b < blocks; ++b)
      for (int k = 0; k < width; ++k) {
        for (int l = 0; l < W; ++l) lanes[l] = rows[static_cast<long>(b * W + l) * width + k];
        out[static_cast<size_t>(b * width + k)] = LaneTraits<L>::load(lanes);
      }
  };
  to_lanes(batch.q(), nq, q), to_lanes(batch.v(), nv, v), to_lanes(batch.tau(), nv, tau);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int b = 0; b < blocks; ++b)
      aba_kernel(constants, workspace, &q[static_cast<size_t>(b * nq)], &v[static_cast<size_t>(b * nv)],
                 &tau[static_cast<size_t>(b * nv)], &qdd[static_cast<size_t>(b * nv)]);
    benchmark::DoNotOptimize(qdd.data());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * blocks * W, 1, W,
                              static_cast<double>(aba_flops(*model).total()));
}

void register_engine(const std::string& prefix, const Case& c, bool step, auto bm) {
  auto* b = benchmark::RegisterBenchmark((prefix + "/" + c.name).c_str(), bm, &c.model, step);
  b->ArgNames({"N", "threads"})->UseRealTime()->MinTime(0.3);
  for (int n : {1, 64, 1024, 4096, 16384})
    for (int t : {1, 2}) b->Args({n, t});
}

const bool aba_registered = [] {
  for (const Case& c : models()) {
    register_engine("AbaSimd<double>", c, false, BM_Batch<Batch<double>>);
    register_engine("AbaScalar<double>", c, false, BM_Batch<ScalarBatch<double>>);
    register_engine("AbaSimd<float>", c, false, BM_Batch<Batch<float>>);
    register_engine("AbaScalar<float>", c, false, BM_Batch<ScalarBatch<float>>);
    for (const char* precision : {"double", "float"}) {
      auto* b = benchmark::RegisterBenchmark((std::string("AbaKernel<") + precision + ">/" + c.name).c_str(),
                                             precision[0] == 'd' ? BM_AbaKernel<double> : BM_AbaKernel<float>, &c.model, false);
      b->ArgNames({"N"})->UseRealTime()->MinTime(0.3)->Arg(1024);
    }
    if (c.name == "humanoid") {
      register_engine("StepSimd<double>", c, true, BM_Batch<Batch<double>>);
      register_engine("StepSimd<float>", c, true, BM_Batch<Batch<float>>);
      register_engine("StepScalar<double>", c, true, BM_Batch<ScalarBatch<double>>);
    }
  }
  return true;
}();

}  // namespace
