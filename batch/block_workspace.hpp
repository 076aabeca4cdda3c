// One thread's working set for one lane block: the block's state as lanes, the scalar staging
// rows its gather and scatter transpose through, and the workspace of every kernel the engine
// may run on the block. Made once per thread (oneTBB's enumerable_thread_specific in
// batch/batch.hpp), sized from the model and its plans; nothing is allocated per call, except
// that the contact problem grows to the largest the thread has met (ContactLanes).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "batch/env_parameters.hpp"
#include "kernels/tree/aba_workspace.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "kernels/delassus/delassus_workspace.hpp"
#include "kernels/tree/frame_observation.hpp"
#include "kernels/tree/sensors.hpp"
#include "kernels/contact/frictional_contact.hpp"
#include "kernels/loops/lcaba_workspace.hpp"
#include "kernels/loops/proxbbo_workspace.hpp"
#include "layout/lanes.hpp"

namespace batchdyn {

// Aligned, lane-typed storage (std::vector provides for over-aligned types since C++17).
template <class L>
using LaneArray = std::vector<L>;

// The contact stage's lanes of one block (batch/contact_solving.hpp): the kernel's workspace,
// the block's friction coefficients and ground, and the last ADMM report.
template <class L>
struct ContactLanes {
  // The problem starts with room for `problem_contacts` contacts (Batch::reserve_contacts; a
  // few by default) and grows with the thread's largest (FrictionalContactWorkspace::fit_problem).
  ContactLanes(const Model& m, const ContactPlan& plan, int problem_contacts)
      : state(m, plan, problem_contacts), friction(static_cast<size_t>(plan.num_candidates())),
        touch(static_cast<size_t>(std::count_if(m.sensors.begin(), m.sensors.end(), [](const Sensor& s) { return s.kind == SensorKind::Touch; }))) {}
  static constexpr int kFirstProblemContacts = 8;
  FrictionalContactWorkspace<L> state;
  // The block's friction coefficients where a lane has its own (ContactSolving::friction_lanes):
  // per candidate, written for those in contact; the lanes' own coefficient, and 1 in those lanes.
  LaneArray<L> friction;
  L friction_own, has_own_friction;
  bool own_friction = false;  // some lane of the block has its own
  LaneArray<L> touch;     // per touch sensor: the last substep's reading (kernels/contact/touch_sensors.hpp)
  GroundLanes<L> ground;
  L occupied;    // 1 in the lanes that hold a valid environment, 0 in padding and refused ones
  L penetrated;  // 1 in the lanes where a contact was deeper than max_penetration in this call's substeps
  ContactSolverReport<L> report;
  size_t bytes() const { return state.bytes() + (friction.size() + touch.size()) * sizeof(L); }
};

template <class L>
struct BlockWorkspace {
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  // `constants` are the engine's shared ones (this thread's copy is pointed at per-environment
  // parameters per block); the loop plans are needed for a model with constraints only, the
  // contact plan for a model with candidates and a ground;
  // observation_size = 13 x the observed frames; sensor_size = the model's sensordata per environment.
  // contact_problem_contacts: the room the contact problem starts with (ContactLanes).
  BlockWorkspace(const Model& m, const ModelConstants<L>& constants, const DelassusPlan& delassus_plan, const LcabaPlan& lcaba_plan,
                 const ProxBboPlan& proxbbo_plan, const ContactPlan& contact_plan, int observation_size, int sensor_size,
                 int contact_problem_contacts = ContactLanes<L>::kFirstProblemContacts)
      : constants(constants), implicit_armature(size(m.nv)), damped_armature(size(m.nv)), aba(m), q(size(m.nq)), v(size(m.nv)), tau(size(m.nv)),
        tau_applied(size(m.nv)), target(size(m.nv)), qdd(size(m.nv)), displacement(size(m.nv)), ctrl(m.actuators.size()), actuator_torque(size(m.nv)),
        rk4_q0(size(m.nq)), rk4_v0(size(m.nv)), rk4_velocity(size(m.nv)), rk4_acceleration(size(m.nv)),
        G(size(m.constraint_rows * m.constraint_rows)), factor(G.size()), lambda(size(m.constraint_rows)), violation(lambda.size()),
        observation_out(size(observation_size)), sensor_out(size(sensor_size)), stage_q(size(m.nq * W)), stage_v(size(m.nv * W)), stage_tau(stage_v.size()),
        stage_qdd(stage_v.size()), stage_lambda(size(m.constraint_rows * W)) {
    if (m.constraint_rows > 0) {  // a tree without constraints needs none of these
      delassus.emplace(m, delassus_plan);
      lcaba.emplace(m, lcaba_plan);
      proxbbo.emplace(m, proxbbo_plan);
      dense.emplace(m);
      dense_armature.assign(size(m.nv), 0.0);
      dense_constrained.emplace(m);
      dense_q.setZero(m.nq), dense_v.setZero(m.nv), dense_tau.setZero(m.nv);
    }
    if (observation_size > 0) observation.emplace(m);
    if (sensor_size > 0) sensors.emplace(m);
    if (m.contacts.can_collide() || contact_plan.num_limited_joints() > 0)
      contact_lanes.emplace(m, contact_plan, contact_problem_contacts);
  }
  static size_t size(int n) { return static_cast<size_t>(n); }

  // Per-environment parameters (batch/env_parameters.hpp) and passive forces (batch/passive_forces.hpp)
  ModelConstants<L> constants;         // this thread's views of the block's parameters
  EnvInertiaTables<L> inertia_tables;  // the block's inertias
  LaneArray<L> implicit_armature;      // armature + h d (+ h d_F) per dof (implicitly damped steps)
  LaneArray<L> damped_armature;        // armature + h d, before friction loss's h d_F
  // Kernel workspaces
  AbaWorkspace<L> aba;
  std::optional<DelassusWorkspace<L>> delassus;
  std::optional<LcabaWorkspace<L>> lcaba;
  std::optional<ProxBboWorkspace<L>> proxbbo;
  std::optional<FrameObservationWorkspace<L>> observation;
  std::optional<SensorWorkspace<L>> sensors;
  std::optional<ContactLanes<L>> contact_lanes;
  // The dense constrained solver, one environment at a time in double (batch/constraint_solving.hpp)
  std::optional<Data<double>> dense;
  std::optional<ConstrainedData<double>> dense_constrained;
  std::vector<double> dense_armature;  // its armature (lane 0: the shared parameters)
  Eigen::VectorXd dense_q, dense_v, dense_tau;
  // The block as lanes, one lane per environment
  LaneArray<L> q, v, tau, tau_applied, target, qdd, displacement;
  LaneArray<L> ctrl;             // the actuators' controls (nu), in ControlMode::Actuators
  LaneArray<L> actuator_torque;  // the actuation stage's output (tau + PD, clamped), before the passive forces
  LaneArray<L> rk4_q0, rk4_v0, rk4_velocity, rk4_acceleration;  // a Runge-Kutta substep's start and weighted sums (batch/integration.hpp)
  LaneArray<L> G, factor, lambda, violation, observation_out, sensor_out;
  // Lane-major scalar staging rows (stage[k * W + l]): the dense constrained solver reads and
  // writes one lane at a time through them, and the multipliers' warm start is assembled in them
  std::vector<T, xsimd::aligned_allocator<T, 64>> stage_q, stage_v, stage_tau, stage_qdd, stage_lambda;

  // Bytes of kernel workspace and gathered state.
  size_t bytes() const {
    return aba.bytes() + (delassus ? delassus->bytes() : 0) + (lcaba ? lcaba->bytes() : 0) + (proxbbo ? proxbbo->bytes() : 0) +
           (observation ? observation->bytes() : 0) + (sensors ? sensors->bytes() : 0) + (contact_lanes ? contact_lanes->bytes() : 0) +
           (implicit_armature.size() + damped_armature.size() + q.size() + v.size() + tau.size() + tau_applied.size() + actuator_torque.size() + target.size() + ctrl.size() + qdd.size() + displacement.size() + rk4_q0.size() +
            rk4_v0.size() + rk4_velocity.size() + rk4_acceleration.size() + G.size() +
            factor.size() + lambda.size() + violation.size() + observation_out.size() + sensor_out.size()) * sizeof(L) +
           (stage_q.size() + stage_v.size() + stage_tau.size() + stage_qdd.size() + stage_lambda.size()) * sizeof(T);
  }
};

}  // namespace batchdyn
