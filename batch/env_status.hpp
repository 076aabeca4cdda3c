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
  ConstraintNotConverged,  // the loop solver (LCABA, proxBBO, dense) hit its iteration cap; the results are its last iterate (a report)
  LoopDrift,  // the state the step started from is off its loops by more than the drift tolerance (a report: the state is stepped)
};

// Whether s is a report: the environment was computed (and stepped), and the flag says what to
// watch. The other statuses are failures: nothing was computed for it.
inline bool is_report(EnvStatus s) {
  return s == EnvStatus::ContactNotConverged || s == EnvStatus::ConstraintNotConverged || s == EnvStatus::LoopDrift;
}

inline const char* env_status_name(EnvStatus s) {
  switch (s) {
    case EnvStatus::Ok: return "ok";
    case EnvStatus::NonFiniteState: return "NaN or infinity in q, v or tau";
    case EnvStatus::InvalidQuaternion: return "a quaternion (free flyer or ball joint) is not of unit norm";
    case EnvStatus::NonFiniteResult: return "dynamics produced a non-finite result";
    case EnvStatus::ContactNotConverged: return "the contact solver hit its iteration cap (the step used its last iterate)";
    case EnvStatus::ConstraintNotConverged: return "the loop constraint solver hit its iteration cap (the results are its last iterate)";
    case EnvStatus::LoopDrift: return "the state is off its loop constraints by more than the drift tolerance";
  }
  return "?";
}

}  // namespace batchdyn
