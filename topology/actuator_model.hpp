// Actuators as a robot file declares them (MJCF <actuator>): what a control input `ctrl` does to
// a joint. Part of Model (Model::actuators); the engine's actuation stage applies them.
//
// Every supported actuator is MuJoCo's affine actuator on one joint (mjTRN_JOINT) without
// activation dynamics:
//   length = gear q,  velocity = gear qd                           (the joint's transmission)
//   force  = gain ctrl + bias[0] + bias[1] length + bias[2] velocity,  clamped to the force range
//   tau    = gear force                                            (added to the joint's torque)
// with ctrl clamped to the control range first. MuJoCo's shortcuts are this form:
//   motor:    gain 1,  bias (0, 0, 0)
//   position: gain kp, bias (0, -kp, -kv)      (a PD controller around ctrl)
//   velocity: gain kv, bias (0, 0, -kv)
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace batchdyn {

enum class ActuatorKind {
  Motor,     // force = ctrl
  Position,  // force = kp (ctrl - length) - kv velocity
  Velocity,  // force = kv (ctrl - velocity)
  General,   // any other fixed gain and affine bias
};


struct Actuator {
  std::string name;
  ActuatorKind kind = ActuatorKind::Motor;
  std::string joint;   // the joint it drives (a 1-dof joint)
  int dof = 0;         // that joint's coordinate in v
  double gear = 1.0;
  double gain = 1.0;
  double bias[3] = {0.0, 0.0, 0.0};
  // ctrl is clamped to [ctrl_lower, ctrl_upper], the force to [force_lower, force_upper]
  // (infinite: no clamp).
  double ctrl_lower = -std::numeric_limits<double>::infinity(), ctrl_upper = std::numeric_limits<double>::infinity();
  double force_lower = -std::numeric_limits<double>::infinity(), force_upper = std::numeric_limits<double>::infinity();
};

// "motor", "position", "velocity" or "general".
const char* actuator_kind_name(ActuatorKind kind);

// The torque per dof that a PD controller standing in for the motors may exert: the joint's effort
// limit (nv values), tightened to each motor's largest |gear force| under its control and force
// ranges (a motor's ctrlrange is the torque MuJoCo applies at most). Other kinds leave it as it is.
std::vector<double> motor_torque_limits(std::vector<double> effort_limit, const std::vector<Actuator>& actuators);

// A named state of the robot file (MJCF <keyframe><key>): a reset state for the engine, in
// batchdyn's coordinates (topology/mjcf.hpp: q_from_mujoco, v_from_mujoco).
struct Keyframe {
  std::string name;     // "key<k>" when the file gives none
  double time = 0.0;
  std::vector<double> q, v;  // nq and nv values
  std::vector<double> ctrl;  // one per actuator
};

}  // namespace batchdyn
