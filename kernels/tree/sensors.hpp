// Sensors on lanes: what a robot file's <sensor> elements read (Model::sensors), as MuJoCo
// defines them, from q, v, the accelerations qdd and the actuation stage's joint torques. One
// forward sweep over the bodies that carry (or lead to) a sensor: placements ^0M_i, velocities
// v_i and, when an accelerometer asks for them, accelerations a_i (body frames, RNEA's forward
// pass with a_0 = -g, so that a_i already holds "minus gravity"). Then per sensor, for its frame
// f on body i at ^iM_f = (R_f, p):
//     framepos       ^0p_f                              framequat  ^0R_f as w x y z, w >= 0
//     framelinvel    ^0R_i (v + w x p)                  frameangvel ^0R_i w
//     velocimeter    R_f^T (v + w x p)                  gyro        R_f^T w
//     accelerometer  R_f^T (a + alpha x p + w x (v + w x p))   (the origin's classical acceleration - g)
//     jointactuatorfrc  the joint's torque from the actuation stage: MuJoCo's qfrc_actuator there
//                       (batchdyn's tau joins it as a feed-forward, which MuJoCo keeps apart in
//                       qfrc_applied)
//     touch          written 0 here: the contact stage computes it where the contacts are
//                    (kernels/contact/touch_sensors.hpp), and the engine copies it in
// with (v, w) = v_i and (a, alpha) = a_i in body i's frame. A cutoff clamps a sensor's values
// (not a quaternion's), as MuJoCo's does. Lane-generic, no allocation, no branches on values.
#pragma once

#include <vector>

#include "kernels/tree/frame_observation.hpp"
#include "kernels/tree/kinematics.hpp"
#include "topology/sensor_model.hpp"

namespace batchdyn {

// What the sweep needs, fixed by the model: the bodies to visit (parents first), whether the
// accelerations or the joint torques are needed, and per sensor its frame's body and placement or
// its joint's index.
struct SensorPlan {
  std::vector<int> bodies;
  bool accelerations = false;
  bool joint_torques = false;
  struct Entry {
    SensorKind kind;
    int body = 0;
    Transformd placement;  // ^{body}M_f (frame sensors)
    int index = 0;         // the joint's coordinate in q (JointPos) or v (JointVel, JointActuatorForce)
    int address = 0;       // first value in the output
    double cutoff = 0;     // > 0: clamp to [-cutoff, cutoff]
  };
  std::vector<Entry> sensors;
  int size = 0;  // values per environment
};

inline SensorPlan plan_sensors(const Model& model) {
  SensorPlan plan;
  std::vector<int> frame_bodies;
  for (const Sensor& s : model.sensors) {
    SensorPlan::Entry entry{s.kind, s.body, Transformd::identity(), 0, s.address, s.cutoff};
    const Body& body = model.bodies[static_cast<size_t>(s.body)];
    if (s.kind == SensorKind::JointPos) entry.index = body.idx_q;
    else if (s.kind == SensorKind::Touch) entry.index = 0;
    else if (s.kind == SensorKind::JointVel || s.kind == SensorKind::JointActuatorForce) entry.index = body.idx_v;
    else {
      entry.placement = model.frames[static_cast<size_t>(s.frame)].placement;
      frame_bodies.push_back(s.body);
    }
    plan.accelerations = plan.accelerations || s.kind == SensorKind::Accelerometer;
    plan.joint_torques = plan.joint_torques || s.kind == SensorKind::JointActuatorForce;
    plan.sensors.push_back(entry);
  }
  plan.bodies = bodies_supporting(model, frame_bodies);
  plan.size = sensordata_size(model.sensors);
  return plan;
}

// Workspace: one placement, velocity and acceleration per body.
template <class S>
struct SensorWorkspace {
  explicit SensorWorkspace(const Model& model)
      : world_from_body(static_cast<size_t>(model.num_bodies())), velocity(world_from_body.size()), acceleration(world_from_body.size()) {}
  std::vector<Transform<S>> world_from_body;  // ^0M_i
  std::vector<Motion<S>> velocity;            // v_i, body frame
  std::vector<Motion<S>> acceleration;        // a_i, body frame, with a_0 = -g
  size_t bytes() const {
    return world_from_body.size() * sizeof(Transform<S>) + (velocity.size() + acceleration.size()) * sizeof(Motion<S>);
  }
};

// out[address + j]: value j of each sensor (see the top of the file), for q (nq lanes), v, qdd
// and the joint torques (nv lanes; read only when plan.joint_torques). placement: the plan's
// placements cast to S. O(bodies visited + sensors).
template <class S>
void sensor_kernel(const ModelConstants<S>& c, const SensorPlan& plan, const Transform<S>* placement, SensorWorkspace<S>& ws,
                   const S* q, const S* v, const S* qdd, const S* joint_torque, S* out) {
  ws.world_from_body[0] = Transform<S>::identity();
  ws.velocity[0] = Motion<S>::zero();
  ws.acceleration[0] = c.base_acceleration;  // -g: accelerations are proper accelerations
  for (int i : plan.bodies) {
    Motion<S> joint_velocity;
    const Transform<S> X = sweep_pose_and_velocity(c, i, q, v, ws.world_from_body.data(), ws.velocity.data(), joint_velocity);
    if (plan.accelerations)  // a model constant, not data
      ws.acceleration[i] = motion_to_body(c, i, X, ws.acceleration[c.tree[static_cast<size_t>(i)].parent]) +
                           subspace_times(c, i, qdd + c.tree[i].idx_v) + cross(ws.velocity[i], joint_velocity);
  }
  const int count = static_cast<int>(plan.sensors.size());
  for (int k = 0; k < count; ++k) {
    const SensorPlan::Entry& s = plan.sensors[static_cast<size_t>(k)];
    S* o = out + s.address;
    if (s.kind == SensorKind::Touch) {
      o[0] = S(0);
      continue;
    }
    if (s.kind == SensorKind::JointPos || s.kind == SensorKind::JointVel || s.kind == SensorKind::JointActuatorForce) {
      o[0] = (s.kind == SensorKind::JointPos ? q : s.kind == SensorKind::JointVel ? v : joint_torque)[s.index];
    } else {
      const Transform<S>& body_pose = ws.world_from_body[s.body];
      const Transform<S>& f = placement[k];
      const Motion<S>& vb = ws.velocity[s.body];
      const Vec3<S> origin_velocity = vb.linear + cross(vb.angular, f.translation);  // body frame
      Vec3<S> value;
      switch (s.kind) {  // the sensor's kind: a model constant, not data
        case SensorKind::FramePos: value = body_pose.translation + body_pose.rotation * f.translation; break;
        case SensorKind::FrameLinVel: value = body_pose.rotation * origin_velocity; break;
        case SensorKind::FrameAngVel: value = body_pose.rotation * vb.angular; break;
        case SensorKind::Velocimeter: value = f.rotation.transpose() * origin_velocity; break;
        case SensorKind::Gyro: value = f.rotation.transpose() * vb.angular; break;
        case SensorKind::Accelerometer: {
          const Motion<S>& ab = ws.acceleration[s.body];
          value = f.rotation.transpose() *
                  (ab.linear + cross(ab.angular, f.translation) + cross(vb.angular, origin_velocity));
          break;
        }
        default: break;
      }
      if (s.kind == SensorKind::FrameQuat) {
        S xyzw[4];
        rotation_to_quaternion(body_pose.rotation * f.rotation, xyzw);  // ^0R_f
        o[0] = xyzw[3], o[1] = xyzw[0], o[2] = xyzw[1], o[3] = xyzw[2];  // MuJoCo's w x y z
        continue;
      }
      for (int j = 0; j < 3; ++j) o[j] = value[j];
    }
    if (s.cutoff > 0 && s.kind != SensorKind::FrameQuat) {
      using std::max, std::min;
      const S limit(static_cast<lane_scalar<S>>(s.cutoff));
      for (int j = 0; j < sensor_dimension(s.kind); ++j) o[j] = min(max(o[j], -limit), limit);
    }
  }
}

}  // namespace batchdyn
