// The checks of the engine's arguments, one wording for every call: buffer sizes, environment
// indices, per-environment rows and per-dof values. Each throws Error naming the call and the
// argument at fault.
#pragma once

#include <cmath>
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

}  // namespace batchdyn
