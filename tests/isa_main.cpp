// Runner of the lane-equivalence tests for one lane ISA (BATCHDYN_ISA: sse2, avx2, avx512).
// The executable is compiled for that ISA whatever the host is; it runs the tests only when
// the host CPU has the instructions, and otherwise reports the ISA as skipped (exit code 77,
// which ctest shows as "Skipped").
//
// The check cannot wait for main: the static initializers (doctest's test registrations, the
// library's constants) are compiled for the ISA too, and on an AVX2 host the AVX-512 build died
// of SIGILL in one of them. It runs first, as a constructor of the highest priority compiled
// for baseline x86-64, and exits before any of them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "layout/lanes.hpp"

namespace {

#define BATCHDYN_BASELINE_X86 __attribute__((target("arch=x86-64")))

BATCHDYN_BASELINE_X86 bool host_supports(const char* isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (std::strcmp(isa, "avx2") == 0) return avx2;
  if (std::strcmp(isa, "avx512") == 0)
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return __builtin_cpu_supports("sse2");
}

// Priority 101: before every default-priority initializer of this executable.
__attribute__((constructor(101))) BATCHDYN_BASELINE_X86 void skip_unless_host_supports_isa() {
  if (host_supports(BATCHDYN_ISA)) return;
  std::printf("lane ISA %s: compiled warning-clean; SKIPPED running, this host CPU lacks it\n", BATCHDYN_ISA);
  std::fflush(stdout);
  _exit(77);  // no destructors, no atexit handlers: nothing compiled for the ISA runs
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("lane ISA %s: running lane-equivalence tests, W = %d doubles / %d floats per lane block\n", BATCHDYN_ISA,
              batchdyn::lane_width<batchdyn::SimdLane<double>>, batchdyn::lane_width<batchdyn::SimdLane<float>>);
  doctest::Context context(argc, argv);
  return context.run();
}
