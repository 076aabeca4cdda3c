// Sensors as a robot file declares them (MJCF <sensor>): what the engine's sense() computes per
// environment into sensordata, in the file's order, as MuJoCo defines each. Part of Model
// (Model::sensors); kernels/tree/sensors.hpp computes them on lanes.
#pragma once

#include <string>
#include <vector>

namespace batchdyn {

enum class SensorKind {
  JointPos,       // a 1-dof joint's q (1)
  JointVel,       // a 1-dof joint's qd (1)
  FramePos,       // the frame's origin, world frame (3)
  FrameQuat,      // the frame's orientation, w x y z with w >= 0 (4)
  FrameLinVel,    // the velocity of the frame's origin, world frame (3)
  FrameAngVel,    // the frame's angular velocity, world frame (3)
  Gyro,           // the angular velocity in the frame (3)
  Velocimeter,    // the velocity of the frame's origin in the frame (3)
  Accelerometer,  // the acceleration of the frame's origin minus gravity, in the frame (3)
  JointActuatorForce,  // the actuation stage's torque on a 1-dof joint (Batch::actuator_torques) (1)
  Touch,          // the normal contact force on the site's link within the site's zone, N (1)
};

// A touch sensor's zone: the site's solid, in the site's frame (MuJoCo's site type and size).
enum class ZoneShape {
  Sphere,     // size.x: radius
  Capsule,    // size.x: radius, size.y: half-length along z
  Ellipsoid,  // size: the three radii
  Cylinder,   // size.x: radius, size.y: half-length along z
  Box,        // size: the half extents
};
struct SensorZone {
  ZoneShape shape = ZoneShape::Sphere;
  double size[3] = {0.0, 0.0, 0.0};
};

struct Sensor {
  std::string name;
  SensorKind kind = SensorKind::JointPos;
  std::string object;  // the joint (JointPos, JointVel, JointActuatorForce) or frame (Model::frames) it reads
  int body = 0;        // the body of that joint or frame
  int frame = -1;      // the frame's index in Model::frames (frame sensors), else -1
  int address = 0;     // its first value in sensordata
  double cutoff = 0;   // > 0: each value is clamped to [-cutoff, cutoff] (not a quaternion's), as MuJoCo does
  // Touch: the link whose collision geometries it feels (MJCF: the site's body) and its zone.
  std::string link;
  SensorZone zone;
};

// MuJoCo's name of a kind ("jointpos", "gyro", ...).
const char* sensor_kind_name(SensorKind kind);
// How many values a kind gives (1, 3 or 4).
int sensor_dimension(SensorKind kind);
// Sum of the sensors' dimensions: sensordata's width.
int sensordata_size(const std::vector<Sensor>& sensors);

}  // namespace batchdyn
