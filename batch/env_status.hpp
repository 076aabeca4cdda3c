// What the engine reports per environment after a call (Batch::status()): ok, or why that
// environment was not computed. One bad environment never touches the others (DESIGN.md §4).
#pragma once

#include <cstdint>

namespace batchdyn {

enum class EnvStatus : std::uint8_t {
  Ok = 0,
  NonFiniteState,     // NaN or infinity in q, v, tau (or the PD target)
  InvalidQuaternion,  // free-flyer or ball-joint quaternion with | |q| - 1 | > kQuaternionNormTolerance (validation.hpp)
  NonFiniteResult,    // the dynamics produced NaN / infinity from a finite state
  ContactNotConverged,  // the contact solver hit its iteration cap; the step used its last iterate (a report: the state is stepped)
};

inline const char* env_status_name(EnvStatus s) {
  switch (s) {
    case EnvStatus::Ok: return "ok";
    case EnvStatus::NonFiniteState: return "NaN or infinity in q, v or tau";
    case EnvStatus::InvalidQuaternion: return "a quaternion (free flyer or ball joint) is not of unit norm";
    case EnvStatus::NonFiniteResult: return "dynamics produced a non-finite result";
    case EnvStatus::ContactNotConverged: return "the contact solver hit its iteration cap (the step used its last iterate)";
  }
  return "?";
}

}  // namespace batchdyn
