// What "fast" is measured against: the flop count of a kernel per environment (counted by
// running it on CountingLane) and the core's peak flop rate.
#pragma once

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/tree/aba.hpp"
#include "kernels/algorithms.hpp"
#include "kernels/tree/configuration.hpp"
#include "kernels/loops/lcaba.hpp"
#include "kernels/loops/proxbbo.hpp"
#include "kernels/delassus/pv_osim.hpp"
#include "kernels/delassus/pv_osimr.hpp"
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

// Floating-point operations of one constrained forward-dynamics evaluation of `model` by LCABA
// (or proxBBO when `proxbbo`) with `iterations` sweeps (1 = the first pass only), one
// environment. Counted on a random state (from `seed`) off the loops for up to three sweeps;
// further sweeps repeat the third's cost (counting them directly could stop early once the
// double-precision count converges). The count does not depend on the state (no
// data-dependent branches).
inline FlopCount loop_dynamics_flops(const Model& model, int iterations, bool proxbbo = false, unsigned seed = 1) {
  const ModelConstants<CountingLane> constants(model);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const Eigen::VectorXd q0 = random_configuration<double>(model, rng);
  std::vector<CountingLane> q(q0.data(), q0.data() + q0.size()), v(static_cast<size_t>(model.nv)), tau(v.size()), qdd(v.size()),
      lambda(static_cast<size_t>(model.constraint_rows)), violation(lambda.size());
  for (size_t k = 0; k < v.size(); ++k) v[k] = normal(rng), tau[k] = normal(rng);
  const auto sweeps = [&](const auto& plan, auto& workspace, auto kernel, int count) {
    ProximalSettings settings;
    settings.max_iterations = count;
    settings.tolerance = 0.0;
    std::fill(lambda.begin(), lambda.end(), CountingLane(0.0));
    flop_counter() = {};
    kernel(constants, plan, workspace, q.data(), v.data(), tau.data(), settings, qdd.data(), lambda.data(), violation.data());
    return flop_counter();
  };
  const auto extrapolate = [&](const auto& plan, auto& workspace, auto kernel) {
    if (iterations <= 3) return sweeps(plan, workspace, kernel, iterations);
    const FlopCount two = sweeps(plan, workspace, kernel, 2), three = sweeps(plan, workspace, kernel, 3);
    const long more = iterations - 3;
    return FlopCount{three.arithmetic + more * (three.arithmetic - two.arithmetic),
                     three.transcendental + more * (three.transcendental - two.transcendental)};
  };
  if (proxbbo) {
    const ProxBboPlan plan = plan_proxbbo(model);
    ProxBboWorkspace<CountingLane> workspace(model, plan);
    return extrapolate(plan, workspace, [](auto&&... args) { return proxbbo_kernel(args...); });
  }
  const LcabaPlan plan = plan_lcaba(model);
  LcabaWorkspace<CountingLane> workspace(model, plan);
  return extrapolate(plan, workspace, [](auto&&... args) { return lcaba_kernel(args...); });
}

// Floating-point operations per environment of one call of `algorithm` (the registry's): ABA,
// PV-OSIMr and PV-OSIM counted; LCABA and proxBBO at a fixed number of sweeps `iterations`
// (0: not counted, the converging solvers' count depends on the state); the dense ones not
// counted (0).
inline double algorithm_flops(const Model& model, Algorithm algorithm, int iterations = 0) {
  switch (algorithm) {
    case Algorithm::Aba: return static_cast<double>(aba_flops(model).total());
    case Algorithm::PvOsimr: return static_cast<double>(delassus_flops(model).total());
    case Algorithm::PvOsim: return static_cast<double>(delassus_flops(model, true).total());
    case Algorithm::Lcaba:
    case Algorithm::ProxBbo:
      return iterations > 0 ? static_cast<double>(loop_dynamics_flops(model, iterations, algorithm == Algorithm::ProxBbo).total()) : 0.0;
    case Algorithm::Constrained:
    case Algorithm::Delassus: return 0.0;
  }
  return 0.0;
}

// The value of the first "key : value" line of /proc/cpuinfo whose key starts with `key`
// (empty when there is none).
inline std::string cpuinfo_value(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (line.rfind(key, 0) == 0 && colon != std::string::npos) return line.substr(colon + 1);
  }
  return {};
}

// Width in bits of the core's vector arithmetic units: AMD's family 0x19 (Zen 3, without
// AVX-512, and Zen 4) runs a 512-bit operation as two 256-bit halves, so AVX-512 lanes there
// have the arithmetic throughput of AVX2 lanes; other x86-64 cores with AVX-512 are taken to
// have 512-bit units.
inline int vector_unit_bits() {
  const std::string family = cpuinfo_value("cpu family");
  const bool amd = cpuinfo_value("vendor_id").find("AuthenticAMD") != std::string::npos;
  return amd && !family.empty() && std::stoi(family) == 0x19 ? 256 : 512;
}

// Peak flops per cycle of one core for lanes of T with the instruction set this build targets:
// the lanes the vector units process per instruction (W, or fewer where they are narrower,
// see vector_unit_bits()) x 2 (a fused multiply-add) x 2 FMA pipes (AVX2 / AVX-512 server
// cores). The library is compiled without FMA contraction (CMakeLists.txt), so a kernel reaches
// this only where the core has separate add and multiply pipes (Zen) and the mix is even.
template <class T>
double peak_flops_per_cycle() {
  static const int unit_lanes = vector_unit_bits() / (8 * static_cast<int>(sizeof(T)));
  return std::min(lane_width<SimdLane<T>>, unit_lanes) * 2.0 * 2.0;
}

// The core clock in GHz as /proc/cpuinfo reports it (0 when unknown).
inline double cpu_ghz() {
  const std::string mhz = cpuinfo_value("cpu MHz");
  return mhz.empty() ? 0.0 : std::stod(mhz) / 1000.0;
}

// x a + b in one rounding on lanes L, as the core's FMA instruction computes it: xsimd 8's fma
// has no AVX-512 kernel and falls back to a multiply and an add (two instructions, since the
// library is compiled without contraction), which measured half the FMA rate on an Intel Xeon
// host (55 against 112 GFLOP/s of one core in double).
// Without FMA in the instruction set (SSE2 lanes) it is that multiply and add.
template <class L>
BATCHDYN_INLINE L fused_multiply_add(const L& x, const L& a, const L& b) {
#if defined(__AVX512F__)
  if constexpr (sizeof(L) == 64) {
    if constexpr (std::is_same_v<lane_scalar<L>, double>) return L(_mm512_fmadd_pd(x, a, b));
    else return L(_mm512_fmadd_ps(x, a, b));
  }
#endif
  return xsimd::fma(x, a, b);
}

// The peak of one core for lanes of T as measured here, in flops per second: independent
// fused multiply-adds on SimdLane<T> (16 chains: on the Zen 5 host the rate still rose from 12
// to 16, so 2 pipes x the FMA latency need more than 12), about 20 ms per try, the best of five;
// measured once per process, on the calling thread.
// The nominal peak (peak_flops_per_cycle() x cpu_ghz()) assumes the clock /proc/cpuinfo
// reports and a vector-unit width taken from the CPU family; this one runs at the clock the core
// really holds under vector load (boost on a VM host, lower AVX-512 clocks elsewhere) and at
// the units' real width. Several threads: x threads, assuming every core holds that clock.
template <class T>
double measured_peak_flops() {
  static const double peak = [] {
    using L = SimdLane<T>;
    constexpr int chains = 16;
    const L a(T(0.999999)), b(T(1e-7));
    double best = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
      L x[chains];
      for (int k = 0; k < chains; ++k) x[k] = L(T(1) + T(k) * T(1e-3));
      long rounds = 0;
      const auto start = std::chrono::steady_clock::now();
      double seconds = 0;
      do {
        for (int r = 0; r < 4096; ++r)
          for (int k = 0; k < chains; ++k) x[k] = fused_multiply_add(x[k], a, b);
        rounds += 4096;
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (seconds < 0.02);
      L sum(T(0));
      for (int k = 0; k < chains; ++k) sum += x[k];
      volatile T sink = sum.get(0);  // keeps the chains' arithmetic
      (void)sink;
      best = std::max(best, static_cast<double>(rounds) * chains * 2.0 * lane_width<L> / seconds);
    }
    return best;
  }();
  return peak;
}

inline const char* simd_instruction_set() { return xsimd::default_arch::name(); }

}  // namespace batchdyn
