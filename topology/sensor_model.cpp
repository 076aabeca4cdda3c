#include "topology/sensor_model.hpp"

#include "topology/name_table.hpp"

namespace batchdyn {

namespace {
// MuJoCo's names (mjtSensor's MJCF elements), shared by the loader, info and Python.
constexpr NameTable<SensorKind> kSensorKinds[] = {
    {SensorKind::JointPos, "jointpos"},       {SensorKind::JointVel, "jointvel"},
    {SensorKind::FramePos, "framepos"},       {SensorKind::FrameQuat, "framequat"},
    {SensorKind::FrameLinVel, "framelinvel"}, {SensorKind::FrameAngVel, "frameangvel"},
    {SensorKind::Gyro, "gyro"},               {SensorKind::Velocimeter, "velocimeter"},
    {SensorKind::Accelerometer, "accelerometer"}, {SensorKind::JointActuatorForce, "jointactuatorfrc"},
    {SensorKind::Touch, "touch"}};
}  // namespace

const char* sensor_kind_name(SensorKind kind) { return name_of(kSensorKinds, kind); }

int sensor_dimension(SensorKind kind) {
  switch (kind) {
    case SensorKind::JointPos:
    case SensorKind::JointVel:
    case SensorKind::JointActuatorForce:
    case SensorKind::Touch: return 1;
    case SensorKind::FrameQuat: return 4;
    default: return 3;
  }
}

int sensordata_size(const std::vector<Sensor>& sensors) {
  int size = 0;
  for (const Sensor& s : sensors) size += sensor_dimension(s.kind);
  return size;
}

}  // namespace batchdyn
