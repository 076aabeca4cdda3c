// A counter-based random number generator: the k-th number of environment e under a seed is a
// pure function of (seed, e, k), so a reset draws the same state whatever the thread count,
// the order of the environments in the call, or which other environments are reset with it.
// SplitMix64's finaliser (Steele, Lea, Flood 2014) applied to a mix of the three counters.
#pragma once

#include <cstdint>

namespace batchdyn {

inline std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 64 random bits for (seed, stream, counter).
inline std::uint64_t counter_random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  const std::uint64_t golden = 0x9e3779b97f4a7c15ULL;
  return splitmix64_mix(splitmix64_mix(splitmix64_mix(seed + golden) ^ (stream * golden + 1)) ^ (counter * golden + 2));
}

// Uniform in [0, 1) with 53 random bits.
inline double counter_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  return static_cast<double>(counter_random_bits(seed, stream, counter) >> 11) * 0x1.0p-53;
}

}  // namespace batchdyn
