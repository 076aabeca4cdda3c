// Runner of the lane-equivalence tests for one lane ISA (BATCHDYN_ISA: sse2, avx2, avx512).
// The executable is compiled for that ISA whatever the host is; it runs the tests only when
// the host CPU has the instructions, and otherwise reports the ISA as skipped (exit code 77,
// which ctest shows as "Skipped").
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "layout/lanes.hpp"

namespace {
bool host_supports(const char* isa) {
  __builtin_cpu_init();
  if (std::strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (std::strcmp(isa, "avx512") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && host_supports("avx2");
  return __builtin_cpu_supports("sse2");
}
}  // namespace

int main(int argc, char** argv) {
  const char* isa = BATCHDYN_ISA;
  if (!host_supports(isa)) {
    std::printf("lane ISA %s: compiled warning-clean; SKIPPED running, this host CPU lacks it\n", isa);
    return 77;
  }
  std::printf("lane ISA %s: running lane-equivalence tests, W = %d doubles / %d floats per lane block\n", isa,
              batchdyn::lane_width<batchdyn::SimdLane<double>>, batchdyn::lane_width<batchdyn::SimdLane<float>>);
  doctest::Context context(argc, argv);
  return context.run();
}
