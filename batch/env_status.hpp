// What the engine reports per environment after a call (Batch::status()): ok, or why that
// environment was not computed, or what to watch in one that was. One bad environment never
// touches the others (DESIGN.md §4). kEnvStatuses is the one table of the codes: C++, the CLI
// and Python (batchdyn.STATUS_NAMES, the vector environments' terminations) read it.
#pragma once

#include <cstdint>

namespace batchdyn {

enum class EnvStatus : std::uint8_t {
  Ok = 0,
  NonFiniteState,          // NaN or infinity in q, v, tau (or the PD target)
  InvalidQuaternion,       // free-flyer or ball-joint quaternion with | |q| - 1 | > kQuaternionNormTolerance (validation.hpp)
  NonFiniteResult,         // the dynamics produced NaN / infinity from a finite state
  ContactNotConverged,     // the contact solver hit its iteration cap; the step used its last iterate (a report: the state is stepped)
  ConstraintNotConverged,  // the loop solver (LCABA, proxBBO, dense) hit its iteration cap; the results are its last iterate (a report)
  LoopDrift,               // the state the step started from is off its loops by more than the drift tolerance (a report: the state is stepped)
  DeepPenetration,         // a contact was deeper than ContactSettings::max_penetration at a substep's start (a report: the state is stepped)
};

struct EnvStatusTraits {
  EnvStatus status;
  const char* name;     // short: Python's STATUS_NAMES
  const char* message;  // what status_message() and `batchdyn eval` say
  bool report;          // the environment was computed (and stepped): the flag says what to watch; else nothing was computed
};

// Every status, in enum order.
inline constexpr EnvStatusTraits kEnvStatuses[] = {
    {EnvStatus::Ok, "ok", "ok", false},
    {EnvStatus::NonFiniteState, "non-finite state", "NaN or infinity in q, v or tau", false},
    {EnvStatus::InvalidQuaternion, "invalid quaternion", "a quaternion (free flyer or ball joint) is not of unit norm", false},
    {EnvStatus::NonFiniteResult, "non-finite result", "dynamics produced a non-finite result", false},
    {EnvStatus::ContactNotConverged, "contact solver not converged (stepped with its last iterate)",
     "the contact solver hit its iteration cap (the step used its last iterate)", true},
    {EnvStatus::ConstraintNotConverged, "loop constraint solver not converged (its last iterate is used)",
     "the loop constraint solver hit its iteration cap (the results are its last iterate)", true},
    {EnvStatus::LoopDrift, "off its loop constraints by more than the drift tolerance",
     "the state is off its loop constraints by more than the drift tolerance", true},
    {EnvStatus::DeepPenetration, "contact deeper than max_penetration (stepped)",
     "a contact was deeper than the contact settings' max_penetration (the step pushed it out at the Baumgarte rate)", true},
};
inline constexpr int kEnvStatusCount = static_cast<int>(sizeof(kEnvStatuses) / sizeof(kEnvStatuses[0]));

constexpr const EnvStatusTraits& env_status_traits(EnvStatus s) { return kEnvStatuses[static_cast<int>(s)]; }

// Whether s is a report: the environment was computed (and stepped), and the flag says what to
// watch. The other statuses but Ok are failures: nothing was computed for it.
constexpr bool is_report(EnvStatus s) { return env_status_traits(s).report; }

constexpr const char* env_status_name(EnvStatus s) { return static_cast<int>(s) < kEnvStatusCount ? env_status_traits(s).message : "?"; }

}  // namespace batchdyn
