#include "topology/actuator_model.hpp"

#include <algorithm>
#include <cmath>

namespace batchdyn {

const char* actuator_kind_name(ActuatorKind kind) {
  switch (kind) {
    case ActuatorKind::Motor: return "motor";
    case ActuatorKind::Position: return "position";
    case ActuatorKind::Velocity: return "velocity";
    case ActuatorKind::General: return "general";
  }
  return "?";
}

std::vector<double> motor_torque_limits(std::vector<double> effort_limit, const std::vector<Actuator>& actuators) {
  for (const Actuator& a : actuators) {
    if (a.kind != ActuatorKind::Motor) continue;
    const double ctrl = std::max(std::abs(a.ctrl_lower), std::abs(a.ctrl_upper));
    const double force = std::max(std::abs(a.force_lower), std::abs(a.force_upper));
    double& limit = effort_limit.at(static_cast<size_t>(a.dof));
    limit = std::min(limit, std::abs(a.gear) * std::min(ctrl, force));
  }
  return effort_limit;
}

}  // namespace batchdyn
