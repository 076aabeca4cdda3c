// What the benchmark files share: the models of bench/bench_models.hpp and the counters every
// batched benchmark reports (see bench/batched_aba.cpp for their meaning).
#pragma once

#include <benchmark/benchmark.h>

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

}  // namespace batchdyn::bench
