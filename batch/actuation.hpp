// Actuation, the stage after the check: the joint torque that drives the dynamics, per dof k,
//   Torque:      tau_k                                                   (the tau buffer)
//   PositionPD:  tau_k + kp_k (target_k - q_k) - kd_k qd_k               (1-dof joints; tau as feed-forward)
//   Actuators:   tau_k + sum over the model's actuators a on dof k of gear_a force_a(ctrl_a, q_k, qd_k)
//                (topology/actuator_model.hpp: MuJoCo's affine actuators, ctrl and force clamped to
//                their ranges; ctrl is N x nu, what a policy trained on the MJCF's actuators outputs)
// times the dof's motor strength where it is set per environment (batch/env_parameters.hpp:
// domain randomisation of the motors, as legged_gym's), then clamped to [-effort_k, effort_k]
// (the model's effort limits unless set otherwise; the
// clamp is a simulator's feature, switchable: off, tau reaches the dynamics as given, as
// Pinocchio's forward dynamics takes it). Computed on the lanes inside every substep, from that
// substep's q and qd.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "batch/argument_checks.hpp"
#include "batch/block_workspace.hpp"
#include "topology/name_table.hpp"
#include "topology/tree_plan.hpp"

namespace batchdyn {

enum class ControlMode : std::uint8_t { Torque, PositionPD, Actuators };
inline constexpr NameTable<ControlMode> kControlModes[] = {
    {ControlMode::Torque, "torque"}, {ControlMode::PositionPD, "pd"}, {ControlMode::Actuators, "ctrl"}};

template <class L>
class Actuation {
 public:
  using T = lane_scalar<L>;

  Actuation(const Model& model, int num_envs)
      : model_(model), n_(num_envs), dofs_(single_dofs(model)), kp_(static_cast<size_t>(model.nv), L(T(0))), kd_(kp_),
        kp_values_(static_cast<size_t>(model.nv), 0.0), kd_values_(kp_values_),
        actuator_torques_(static_cast<size_t>(num_envs) * static_cast<size_t>(model.nv), T(0)) {
    set_effort_limits(model.effort_limit);
    for (const Actuator& a : model.actuators) actuators_.push_back(ActuatorLanes(a, dofs_));
  }

  // Throws Error for ControlMode::Actuators on a model without actuators.
  void set_control_mode(ControlMode mode) {
    if (mode == ControlMode::Actuators && actuators_.empty())
      throw Error("set_control_mode('ctrl'): the model '" + model_.name + "' declares no actuators (an MJCF <actuator> section); use 'torque' or 'pd'");
    mode_ = mode;
  }
  ControlMode control_mode() const { return mode_; }

  // PD gains per dof (nv values each, >= 0; N m/rad and N m s/rad for revolute dofs). The dofs
  // of free-flyer and spherical joints are not actuated: their gains must be 0. Throws Error
  // otherwise.
  void set_pd_gains(std::span<const double> kp, std::span<const double> kd) {
    check_dof_values("set_pd_gains: kp", kp, model_.nv, /*allow_infinity=*/false);
    check_dof_values("set_pd_gains: kd", kd, model_.nv, false);
    for (int i = 1; i < model_.num_bodies(); ++i) {
      const Body& b = model_.bodies[i];
      if (is_single_dof(b.joint_type)) continue;
      for (int k = 0; k < b.nv; ++k)
        if (kp[static_cast<size_t>(b.idx_v + k)] != 0 || kd[static_cast<size_t>(b.idx_v + k)] != 0)
          throw Error("set_pd_gains: dof " + std::to_string(b.idx_v + k) + " belongs to the " +
                      (b.joint_type == JointType::FreeFlyer ? "free-flyer" : "ball") + " joint '" + b.joint_name +
                      "', which has no actuator: its gains must be 0");
    }
    for (size_t k = 0; k < kp.size(); ++k) kp_[k] = L(static_cast<T>(kp[k])), kd_[k] = L(static_cast<T>(kd[k]));
    kp_values_.assign(kp.begin(), kp.end());
    kd_values_.assign(kd.begin(), kd.end());
  }
  const std::vector<double>& kp() const { return kp_values_; }
  const std::vector<double>& kd() const { return kd_values_; }

  // Effort limits per dof (nv values, > 0; infinity = unlimited). The model's by default (URDF
  // <limit effort>; 0 or missing there means unlimited). Throws Error otherwise.
  void set_effort_limits(std::span<const double> limits) {
    if (limits.size() != static_cast<size_t>(model_.nv))
      throw Error("set_effort_limits: expected nv = " + std::to_string(model_.nv) + " values, got " + std::to_string(limits.size()));
    for (size_t k = 0; k < limits.size(); ++k)
      if (!(limits[k] > 0))
        throw Error("set_effort_limits: dof " + std::to_string(k) + ": limit must be > 0 (infinity = none), got " + std::to_string(limits[k]));
    effort_values_.assign(limits.begin(), limits.end());
    effort_.resize(limits.size());
    for (size_t k = 0; k < limits.size(); ++k) effort_[k] = L(static_cast<T>(limits[k]));
  }
  // No clamping: every limit infinite.
  void remove_effort_limits() {
    set_effort_limits(std::vector<double>(static_cast<size_t>(model_.nv), std::numeric_limits<double>::infinity()));
  }
  const std::vector<double>& effort_limits() const { return effort_values_; }
  // Whether the stage clamps to the effort limits (on by default). The limits are kept either way.
  void set_effort_clamp(bool on) { clamp_ = on; }
  bool effort_clamp() const { return clamp_; }

  // PD position targets, N x nv env-major (entry idx_v of a 1-dof joint is its position target;
  // the others are not read). Zero until written; owned until use_target_buffer.
  T* target() {
    if (!target_) {
      owned_target_.assign(static_cast<size_t>(n_) * model_.nv, T(0));
      target_ = owned_target_.data();
    }
    return target_;
  }
  // Uses the caller's N x nv array for the targets (no copy). Throws Error on a size mismatch.
  void use_target_buffer(std::span<T> target) {
    check_buffer_size("target", target.size(), n_, model_.nv, "nv");
    target_ = target.data();
  }
  // The actuators' controls, N x nu env-major (nu = model.actuators.size(), in their order). Zero
  // until written; owned until use_ctrl_buffer.
  T* ctrl() {
    if (!ctrl_) {
      owned_ctrl_.assign(static_cast<size_t>(n_) * actuators_.size(), T(0));
      ctrl_ = owned_ctrl_.data();
    }
    return ctrl_;
  }
  // Uses the caller's N x nu array for the controls (no copy). Throws Error on a size mismatch.
  void use_ctrl_buffer(std::span<T> ctrl) {
    check_buffer_size("ctrl", ctrl.size(), n_, static_cast<int>(actuators_.size()), "nu");
    ctrl_ = ctrl.data();
  }
  int num_actuators() const { return static_cast<int>(actuators_.size()); }

  // N x nv: the torque the stage applied in each environment's last substep (RK4: its last
  // stage), tau + PD clamped, before the passive forces: what a torque penalty or a motor model
  // reads. Zero until a call.
  T* actuator_torques() { return actuator_torques_.data(); }
  const T* actuator_torques() const { return actuator_torques_.data(); }

  // What a call gathers: the targets in PD mode, the controls in actuator mode, nothing otherwise.
  const T* target_rows() { return mode_ == ControlMode::PositionPD ? target() : nullptr; }
  const T* ctrl_rows() { return mode_ == ControlMode::Actuators ? ctrl() : nullptr; }

  // The stage: ws.tau_applied (and its copy ws.actuator_torque) from ws.tau (+ PD from ws.q,
  // ws.v, ws.target, or the actuators from ws.q, ws.v, ws.ctrl), times `strength` (the block's
  // motor strengths, nv lanes; empty: 1), clamped, on lanes. The clamps are selects: an infinite
  // bound leaves the value as it is.
  void actuate(BlockWorkspace<L>& ws, std::span<const L> strength) const {
    for (size_t k = 0; k < ws.tau.size(); ++k) ws.tau_applied[k] = ws.tau[k];
    if (mode_ == ControlMode::PositionPD)
      for (const SingleDof& d : dofs_) {
        const size_t k = static_cast<size_t>(d.v);
        ws.tau_applied[k] += kp_[k] * (ws.target[k] - ws.q[static_cast<size_t>(d.q)]) - kd_[k] * ws.v[k];
      }
    if (mode_ == ControlMode::Actuators)
      for (size_t a = 0; a < actuators_.size(); ++a) {
        const ActuatorLanes& u = actuators_[a];
        const L ctrl = clamp(ws.ctrl[a], u.ctrl_lower, u.ctrl_upper);
        const L length = u.gear * ws.q[u.q], velocity = u.gear * ws.v[u.v];  // the joint transmission
        const L force = clamp(u.gain * ctrl + u.bias[0] + u.bias[1] * length + u.bias[2] * velocity, u.force_lower, u.force_upper);
        ws.tau_applied[u.v] += u.gear * force;
      }
    for (size_t k = 0; k < strength.size(); ++k) ws.tau_applied[k] *= strength[k];
    if (clamp_)
      for (size_t k = 0; k < ws.tau.size(); ++k) {  // an infinite limit leaves the torque as it is
        L& t = ws.tau_applied[k];
        const L& limit = effort_[k];
        t = clamp(t, -limit, limit);
      }
    for (size_t k = 0; k < ws.tau.size(); ++k) ws.actuator_torque[k] = ws.tau_applied[k];
  }

 private:
  // An actuator's constants broadcast to every lane, and its joint's coordinates.
  struct ActuatorLanes {
    ActuatorLanes(const Actuator& a, const std::vector<SingleDof>& dofs)
        : v(static_cast<size_t>(a.dof)), q(joint_coordinate(a, dofs)), gear(static_cast<T>(a.gear)), gain(static_cast<T>(a.gain)),
          bias{L(static_cast<T>(a.bias[0])), L(static_cast<T>(a.bias[1])), L(static_cast<T>(a.bias[2]))},
          ctrl_lower(static_cast<T>(a.ctrl_lower)), ctrl_upper(static_cast<T>(a.ctrl_upper)),
          force_lower(static_cast<T>(a.force_lower)), force_upper(static_cast<T>(a.force_upper)) {}
    static size_t joint_coordinate(const Actuator& a, const std::vector<SingleDof>& dofs) {
      for (const SingleDof& d : dofs)
        if (d.v == a.dof) return static_cast<size_t>(d.q);
      throw Error("actuator '" + a.name + "': dof " + std::to_string(a.dof) + " is not a 1-dof joint's");
    }
    size_t v, q;
    L gear, gain, bias[3], ctrl_lower, ctrl_upper, force_lower, force_upper;
  };
  // x clamped to [lower, upper] by selects (an infinite bound leaves x as it is).
  static L clamp(const L& x, const L& lower, const L& upper) { return select(x > upper, upper, select(x < lower, lower, x)); }

  const Model& model_;
  int n_;
  std::vector<SingleDof> dofs_;
  ControlMode mode_ = ControlMode::Torque;
  bool clamp_ = true;
  LaneArray<L> kp_, kd_, effort_;  // per dof, broadcast to every lane
  std::vector<double> kp_values_, kd_values_, effort_values_;
  std::vector<ActuatorLanes> actuators_;
  std::vector<T> owned_target_, owned_ctrl_;
  std::vector<T> actuator_torques_;  // N x nv
  T* target_ = nullptr;
  T* ctrl_ = nullptr;
};

}  // namespace batchdyn
