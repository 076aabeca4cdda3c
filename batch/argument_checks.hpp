// The checks of the engine's arguments, one wording for every call: buffer sizes, environment
// indices, per-environment rows and per-dof values. Each throws Error naming the call and the
// argument at fault.
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <span>
#include <string>

#include "topology/model.hpp"

namespace batchdyn {

// A buffer of N x per_env values.
inline void check_buffer_size(const char* name, size_t got, int num_envs, int per_env, const char* per_env_name) {
  const size_t expected = static_cast<size_t>(num_envs) * static_cast<size_t>(per_env);
  if (got != expected)
    throw Error(std::string("Batch: buffer '") + name + "' has " + std::to_string(got) + " values, expected N x " + per_env_name +
                " = " + std::to_string(num_envs) + " x " + std::to_string(per_env) + " = " + std::to_string(expected));
}

// An environment index in [0, N).
inline void check_env(const char* who, int e, int num_envs) {
  if (e < 0 || e >= num_envs)
    throw Error(std::string(who) + ": environment index " + std::to_string(e) + " out of range [0, " + std::to_string(num_envs) + ")");
}
// e, after check_env: for a getter's argument.
inline int env_index(const char* who, int e, int num_envs) {
  check_env(who, e, num_envs);
  return e;
}

// `values` holds `per_env` numbers for each listed environment.
template <class V>
void check_rows(const char* who, const char* name, std::span<const int> envs, std::span<const V> values, int per_env) {
  if (values.size() != envs.size() * static_cast<size_t>(per_env))
    throw Error(std::string(who) + ": '" + name + "' has " + std::to_string(values.size()) + " values, expected " +
                std::to_string(envs.size()) + " environments x " + std::to_string(per_env));
}

// nv values, each >= 0 and finite (or +infinity where allowed).
inline void check_dof_values(const std::string& who, std::span<const double> values, int nv, bool allow_infinity) {
  if (values.size() != static_cast<size_t>(nv))
    throw Error(who + ": expected nv = " + std::to_string(nv) + " values, got " + std::to_string(values.size()));
  for (size_t k = 0; k < values.size(); ++k)
    if (!(values[k] >= 0) || (!allow_infinity && !std::isfinite(values[k])))
      throw Error(who + ": dof " + std::to_string(k) + " must be finite and >= 0, got " + std::to_string(values[k]));
}

// A control step: dt finite and > 0, 1 <= substeps <= 1e6, and a substep h = dt / substeps of at
// most 1 s (longer ones are no time step of a rigid-body simulation; a typo such as dt = 1000
// for 1 ms would otherwise run and overflow quietly).
inline void check_time_step(const char* who, double dt, int substeps) {
  std::ostringstream text;
  text << who << ": ";
  if (substeps < 1 || substeps > 1000000)
    text << "substeps must be in [1, 1000000], got " << substeps;
  else if (!std::isfinite(dt) || !(dt > 0))
    text << "dt must be finite and > 0, got " << dt;
  else if (dt / substeps > 1.0)
    text << "a substep dt / substeps of " << dt / substeps << " s is longer than 1 s (dt is in seconds: 1e-3 for 1 ms)";
  else
    return;
  throw Error(text.str());
}

// Worker threads: 0 (every core) up to max_threads (a generous multiple of the cores; more
// threads than that only oversubscribe, and beyond oneTBB's limits its arena cannot be torn down).
inline void check_thread_count(const char* who, int threads, int max_threads) {
  if (threads < 0 || threads > max_threads)
    throw Error(std::string(who) + ": thread count must be 0 (every core) or in [1, " + std::to_string(max_threads) + "], got " +
                std::to_string(threads));
}

}  // namespace batchdyn
