// What "fast" is measured against: the flop count of a kernel per environment (counted by
// running it on CountingLane) and the core's peak flop rate.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "kernels/aba.hpp"
#include "kernels/configuration.hpp"
#include "kernels/pv_osim.hpp"
#include "kernels/pv_osimr.hpp"
#include "layout/counting_lane.hpp"
#include "layout/lanes.hpp"

namespace batchdyn {

// Floating-point operations of one ABA evaluation of `model` (one environment).
inline FlopCount aba_flops(const Model& model) {
  const ModelConstants<CountingLane> constants(model);
  AbaWorkspace<CountingLane> workspace(model);
  std::vector<CountingLane> q(static_cast<size_t>(model.nq)), v(static_cast<size_t>(model.nv)),
      tau(static_cast<size_t>(model.nv)), qdd(static_cast<size_t>(model.nv));
  set_identity_quaternions(model, q.data());
  flop_counter() = {};
  aba_kernel(constants, workspace, q.data(), v.data(), tau.data(), qdd.data());
  return flop_counter();
}

// Floating-point operations of one Delassus evaluation (PV-OSIMr, or PV-OSIM when `pv_osim`)
// of `model` and its constraints (one environment).
inline FlopCount delassus_flops(const Model& model, bool pv_osim = false) {
  const ModelConstants<CountingLane> constants(model);
  const DelassusPlan plan = plan_delassus(model);
  DelassusWorkspace<CountingLane> workspace(model, plan);
  std::vector<CountingLane> q(static_cast<size_t>(model.nq)),
      G(static_cast<size_t>(model.constraint_rows) * model.constraint_rows);
  set_identity_quaternions(model, q.data());
  flop_counter() = {};
  if (pv_osim) pv_osim_kernel(constants, plan, workspace, q.data(), G.data());
  else pv_osimr_kernel(constants, plan, workspace, q.data(), G.data());
  return flop_counter();
}

// Peak flops per cycle of one core for lanes of T with the instruction set this build
// targets: W lanes x 2 (fused multiply-add) x 2 FMA pipes (AVX2 / AVX-512 server cores).
// The kernels are compiled without FMA contraction (ISO C++ mode), so they can reach at most
// half of this.
template <class T>
constexpr double peak_flops_per_cycle() {
  return lane_width<SimdLane<T>> * 2.0 * 2.0;
}

// The core clock in GHz as /proc/cpuinfo reports it (0 when unknown).
inline double cpu_ghz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return std::stod(line.substr(colon + 1)) / 1000.0;
  }
  return 0.0;
}

inline const char* simd_instruction_set() { return xsimd::default_arch::name(); }

}  // namespace batchdyn
