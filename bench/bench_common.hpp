// What the benchmark files share: the models of bench/bench_models.hpp and the counters every
// batched benchmark reports (see bench/batched_aba.cpp for their meaning).
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "batch/throughput.hpp"
#include "bench/bench_models.hpp"

namespace batchdyn::bench {

// items_per_second, W, threads, env_per_s_per_core, ns_per_env, flops_per_env, GFLOPs,
// pct_peak (of threads x the core's nominal peak for lanes of T; 0 when flops are not counted)
// and pct_measured_peak (of threads x the peak measured on this core, measured_peak_flops).
template <class T>
void report_throughput(benchmark::State& state, double seconds, double envs, int threads, int lanes, double flops) {
  state.SetItemsProcessed(static_cast<int64_t>(envs));
  state.counters["W"] = lanes;
  state.counters["threads"] = threads;
  state.counters["env_per_s_per_core"] = envs / seconds / threads;
  state.counters["ns_per_env"] = seconds * 1e9 / envs;
  state.counters["flops_per_env"] = flops;
  state.counters["GFLOPs"] = envs * flops / seconds * 1e-9;
  const double peak = peak_flops_per_cycle<T>() * cpu_ghz() * 1e9 * threads;
  state.counters["pct_peak"] = peak > 0 && flops > 0 ? envs * flops / seconds * 100.0 / peak : 0.0;
  const double measured = measured_peak_flops<T>() * threads;
  state.counters["pct_measured_peak"] = flops > 0 ? envs * flops / seconds * 100.0 / measured : 0.0;
}

// Writes environment e's q, v and tau (vectors of double, as the peers and oracles draw them)
// into a batch's rows, in the batch's precision.
template <class Engine, class Vector>
void set_environment(Engine& batch, int e, const Vector& q, const Vector& v, const Vector& tau) {
  using T = typename Engine::T;
  const int nq = batch.model().nq, nv = batch.model().nv;
  for (int k = 0; k < nq; ++k) batch.q()[static_cast<long>(e) * nq + k] = static_cast<T>(q[k]);
  for (int k = 0; k < nv; ++k) {
    batch.v()[static_cast<long>(e) * nv + k] = static_cast<T>(v[k]);
    batch.tau()[static_cast<long>(e) * nv + k] = static_cast<T>(tau[k]);
  }
}

// Times forward_dynamics() over the benchmark's iterations after one untimed warm-up call: the
// seconds spent. The benchmark reports an error instead when an environment failed.
template <class Engine>
double time_forward_dynamics(benchmark::State& state, Engine& batch) {
  batch.forward_dynamics();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    batch.forward_dynamics();
    benchmark::DoNotOptimize(batch.qdd());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (batch.failed_count() > 0) state.SkipWithError("some environment failed");
  return seconds;
}

}  // namespace batchdyn::bench
