// The engine a training loop calls: N environments of one Model, their state buffers
// (env-major, N x nq / N x nv, row-major: what training code holds), and one call that runs
// forward dynamics (or a full step, or the Delassus matrices of the constraints) over all of
// them — W environments per SIMD lane block, lane blocks spread over oneTBB threads
// (DESIGN.md §1, §4).
//
//   batchdyn::Batch<float> batch(model, 4096);        // SIMD lanes, all cores
//   batch.set_threads(2);
//   ... write batch.q(), batch.v(), batch.tau() ...
//   batch.step(1e-3f);                                 // qdd, then v += dt qdd, q = q ⊕ dt v
//   batch.delassus();                                  // N x m x m J M^-1 J^T (PV-OSIMr)
//   for env with batch.status()[env] != EnvStatus::Ok: batch.status_message(env)
//
// Every call goes through run(): each thread gathers a lane block from the user arrays into
// its own aligned workspace (transposing env-major rows into lanes, checking each
// environment; q only for configuration kernels), runs the kernel, and scatters the results
// back (scatter(): a non-finite output marks its environment). Lane e % W of block e / W is environment e whatever
// N and the thread count, and lanes never mix, so results are bitwise identical for any
// thread count and any N. A bad environment (non-finite values, invalid quaternion) is
// replaced by the neutral state inside its lane, its outputs are NaN and its state is not
// stepped; the others are unaffected.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "batch/counter_rng.hpp"
#include "batch/env_parameters.hpp"
#include "batch/validation.hpp"
#include "kernels/aba.hpp"
#include "kernels/configuration.hpp"
#include "kernels/constrained_dynamics.hpp"
#include "kernels/frame_observation.hpp"
#include "kernels/lcaba.hpp"
#include "kernels/proxbbo.hpp"
#include "kernels/delassus_operations.hpp"
#include "kernels/pv_osim.hpp"
#include "kernels/pv_osimr.hpp"
#include "layout/lanes.hpp"
#include "kernels/model_constants.hpp"

namespace batchdyn {

enum class EnvStatus : std::uint8_t {
  Ok = 0,
  NonFiniteState,     // NaN or infinity in q, v, tau (or the PD target)
  InvalidQuaternion,  // free-flyer or ball-joint quaternion with | |q| - 1 | > kQuaternionNormTolerance (validation.hpp)
  NonFiniteResult,    // the dynamics produced NaN / infinity from a finite state
};

inline const char* env_status_name(EnvStatus s) {
  switch (s) {
    case EnvStatus::Ok: return "ok";
    case EnvStatus::NonFiniteState: return "NaN or infinity in q, v or tau";
    case EnvStatus::InvalidQuaternion: return "a quaternion (free flyer or ball joint) is not of unit norm";
    case EnvStatus::NonFiniteResult: return "dynamics produced a non-finite result";
  }
  return "?";
}

// How the torque that drives the dynamics is made from the inputs, per dof k:
//   Torque:      tau_k                                                   (the tau buffer)
//   PositionPD:  tau_k + kp_k (target_k - q_k) - kd_k qd_k               (1-dof joints; tau as feed-forward)
// then clamped to [-effort_k, effort_k] (the model's effort limits unless set otherwise).
// Computed on the lanes inside every substep, from that substep's q and qd.
enum class ControlMode : std::uint8_t { Torque, PositionPD };

// The solver of constrained forward dynamics in forward_dynamics() and step():
//   Lcaba:    the recursive LCABA on the lanes (kernels/lcaba.hpp), O(n + m_c^2 n) per
//             environment; warm-started from each environment's multipliers of the previous call
//   ProxBbo:  the recursive proxBBO on the lanes (kernels/proxbbo.hpp), O(n + m_b^2 n + m_b^3);
//             accurate at stiff penalties where LCABA is not; warm-started likewise
//   Dense:    the dense joint-space proximal solver (kernels/constrained_dynamics.hpp), one
//             environment at a time in double whatever the lane type: the oracle
enum class ConstraintSolver : std::uint8_t { Lcaba, ProxBbo, Dense };

inline const char* constraint_solver_name(ConstraintSolver s) {
  return s == ConstraintSolver::Lcaba ? "lcaba" : s == ConstraintSolver::ProxBbo ? "proxbbo" : "dense";
}

// Aligned, lane-typed storage that std::vector provides for over-aligned types (C++17).
template <class L>
using LaneArray = std::vector<L>;

template <class L>
class BatchEngine {
 public:
  using Lane = L;
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  // N environments of `model` (copied), owning their buffers: neutral q, zero v, tau, qdd.
  // threads = 0 uses every core oneTBB sees. Throws Error for a model with singular joints.
  BatchEngine(const Model& model, int num_envs, int threads = 0)
      : model_(model), n_(num_envs), constants_(model), delassus_plan_(plan_delassus(model)), lcaba_plan_(plan_lcaba(model)),
        proxbbo_plan_(plan_proxbbo(model)),
        workspaces_([this] { return BlockWorkspace(*this); }) {
    if (num_envs < 1) throw Error("Batch: need at least one environment, got " + std::to_string(num_envs));
    require_regular(model, find_singular_joints(model), "Batch");
    const VectorX<T> neutral = neutral_configuration<T>(model);
    neutral_.assign(neutral.data(), neutral.data() + neutral.size());
    owned_q_.resize(static_cast<size_t>(n_) * model.nq);
    for (int e = 0; e < n_; ++e) std::copy(neutral_.begin(), neutral_.end(), owned_q_.begin() + static_cast<long>(e) * model.nq);
    owned_v_.assign(static_cast<size_t>(n_) * model.nv, T(0));
    owned_tau_.assign(owned_v_.size(), T(0));
    owned_qdd_.assign(owned_v_.size(), T(0));
    q_ = owned_q_.data(), v_ = owned_v_.data(), tau_ = owned_tau_.data(), qdd_ = owned_qdd_.data();
    owned_delassus_.assign(static_cast<size_t>(n_) * delassus_size(), T(0));
    delassus_ = owned_delassus_.data();
    status_.assign(static_cast<size_t>(n_), EnvStatus::Ok);
    reference_q_ = neutral_;
    kp_.assign(static_cast<size_t>(model.nv), L(T(0)));
    kd_ = kp_;
    kp_values_.assign(static_cast<size_t>(model.nv), 0.0);
    kd_values_ = kp_values_;
    set_effort_limits(model.effort_limit);
    for (int i = 1; i < model.num_bodies(); ++i)
      if (is_single_dof(model.bodies[i].joint_type)) pd_dofs_.push_back({model.bodies[i].idx_v, model.bodies[i].idx_q});
    constraint_iterations_.assign(static_cast<size_t>(n_), 0);
    constraint_residual_.assign(static_cast<size_t>(n_), T(0));
    owned_lambda_.assign(static_cast<size_t>(n_) * model.constraint_rows, T(0));
    constraint_settings_.mu = default_constraint_penalty();
    model_damped_ = std::any_of(model.damping.begin(), model.damping.end(), [](double d) { return d != 0; });
    set_threads(threads);
  }
  // Not copyable: the per-thread workspaces refer to this engine.
  BatchEngine(const BatchEngine&) = delete;
  BatchEngine& operator=(const BatchEngine&) = delete;

  int num_envs() const { return n_; }
  int num_blocks() const { return (n_ + W - 1) / W; }
  int threads() const { return threads_; }
  const Model& model() const { return model_; }

  // Sets the number of worker threads (0 = all cores oneTBB sees); takes effect at the next
  // call. The oneTBB arena is rebuilt (an initialised arena ignores a new size), and the
  // per-thread workspaces are released, to be made again by the threads that run.
  void set_threads(int threads) {
    if (threads < 0) throw Error("Batch: thread count must be >= 0");
    threads_ = threads == 0 ? tbb::this_task_arena::max_concurrency() : threads;
    if (arena_.is_active()) arena_.terminate();
    arena_.initialize(threads_);
    workspaces_.clear();
  }
  // Threads that have run at least one lane block since the last set_threads (each made its
  // own workspace): at most threads().
  int threads_used() const { return static_cast<int>(workspaces_.size()); }

  // Env-major state buffers (row e is environment e): q is N x nq, v / tau / qdd are N x nv.
  T* q() { return q_; }
  T* v() { return v_; }
  T* tau() { return tau_; }
  const T* q() const { return q_; }
  const T* v() const { return v_; }
  const T* qdd() const { return qdd_; }

  // The same buffers as N x nq / N x nv row-major Eigen matrices (row e = environment e).
  using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMatrix> q_matrix() { return {q_, n_, model_.nq}; }
  Eigen::Map<RowMatrix> v_matrix() { return {v_, n_, model_.nv}; }
  Eigen::Map<RowMatrix> tau_matrix() { return {tau_, n_, model_.nv}; }
  Eigen::Map<const RowMatrix> qdd_matrix() const { return {qdd_, n_, model_.nv}; }

  // Uses the caller's arrays instead of the owned ones (no copy; they must outlive the calls).
  // Throws Error naming the buffer whose size is not N x nq / N x nv.
  void use_buffers(std::span<T> q, std::span<T> v, std::span<T> tau, std::span<T> qdd) {
    check_size("q", q.size(), model_.nq, "nq");
    check_size("v", v.size(), model_.nv, "nv");
    check_size("tau", tau.size(), model_.nv, "nv");
    check_size("qdd", qdd.size(), model_.nv, "nv");
    q_ = q.data(), v_ = v.data(), tau_ = tau.data(), qdd_ = qdd.data();
  }

  // qdd = FD(q, v, tau_applied + tau_passive) for every environment: ABA, or with the model's
  // constraints (when it has any and constraints are on) the constraint solver. tau_applied is
  // the actuation of the current ControlMode (PD, effort clamp); tau_passive = -d v is the
  // joint damping when passive forces are on (the default; set_passive_forces). Updates status().
  void forward_dynamics() { run_dynamics(false, T(0), 1); }

  // One control step of length dt in `substeps` semi-implicit Euler substeps of h = dt /
  // substeps (decimation): each computes the actuation from its own q, qd (PD inside the
  // substep), qdd = FD(q, v, tau_applied), v += h qdd, q = q ⊕ h v (on the manifold). qdd()
  // holds the last substep's. Environments whose status is not Ok keep their state.
  // With passive forces on, joint damping d is integrated implicitly (as MuJoCo does): the
  // substep solves (M + h diag(d)) qdd = tau - b(q, v) - d v (+ J^T lambda), i.e.
  // M (v+ - v) / h = tau - b - d v+, which is stable for any h; explicitly, a light damped link
  // needs h < 2 I / d (Cassie's 1 N m s/rad on its rods: h < 2e-4 s). forward_dynamics() keeps
  // the plain -d v.
  // Throws Error unless substeps >= 1.
  void step(T dt, int substeps = 1) {
    if (substeps < 1) throw Error("Batch::step: substeps must be >= 1, got " + std::to_string(substeps));
    run_dynamics(true, dt, substeps);
  }

  // --- Passive forces ---
  // On (the default, as simulators apply a file's damping): forward_dynamics() and step() add
  // the joint damping -d v of the model (or of set_damping's per-environment values) to the
  // applied torque. Off: the rigid-body dynamics as Pinocchio defines it (what the reference
  // functions and `batchdyn eval` compute), tau being the whole joint torque.
  void set_passive_forces(bool on) { passive_forces_ = on; }
  bool passive_forces() const { return passive_forces_; }

  // --- Actuation (see ControlMode) ---
  void set_control_mode(ControlMode mode) { control_mode_ = mode; }
  ControlMode control_mode() const { return control_mode_; }
  // PD gains per dof (nv values each, >= 0; N m/rad and N m s/rad for revolute dofs). The
  // dofs of free-flyer and spherical joints are not actuated: their gains must be 0. Throws
  // Error otherwise.
  void set_pd_gains(std::span<const double> kp, std::span<const double> kd) {
    check_dof_values("set_pd_gains: kp", kp, /*allow_infinity=*/false);
    check_dof_values("set_pd_gains: kd", kd, false);
    for (int i = 1; i < model_.num_bodies(); ++i) {
      const Body& b = model_.bodies[i];
      if (is_single_dof(b.joint_type)) continue;
      for (int k = 0; k < b.nv; ++k)
        if (kp[static_cast<size_t>(b.idx_v + k)] != 0 || kd[static_cast<size_t>(b.idx_v + k)] != 0)
          throw Error("set_pd_gains: dof " + std::to_string(b.idx_v + k) + " belongs to the " +
                      (b.joint_type == JointType::FreeFlyer ? "free-flyer" : "ball") + " joint '" + b.joint_name +
                      "', which has no actuator: its gains must be 0");
    }
    for (int k = 0; k < model_.nv; ++k) {
      kp_[static_cast<size_t>(k)] = L(static_cast<T>(kp[static_cast<size_t>(k)]));
      kd_[static_cast<size_t>(k)] = L(static_cast<T>(kd[static_cast<size_t>(k)]));
    }
    kp_values_.assign(kp.begin(), kp.end());
    kd_values_.assign(kd.begin(), kd.end());
  }
  const std::vector<double>& kp() const { return kp_values_; }
  const std::vector<double>& kd() const { return kd_values_; }
  // Effort limits per dof (nv values, > 0; infinity = unlimited). The model's by default
  // (URDF <limit effort>; 0 or missing there means unlimited). Throws Error otherwise.
  void set_effort_limits(std::span<const double> limits) {
    if (limits.size() != static_cast<size_t>(model_.nv))
      throw Error("set_effort_limits: expected nv = " + std::to_string(model_.nv) + " values, got " + std::to_string(limits.size()));
    for (size_t k = 0; k < limits.size(); ++k)
      if (!(limits[k] > 0)) throw Error("set_effort_limits: dof " + std::to_string(k) + ": limit must be > 0 (infinity = none), got " + std::to_string(limits[k]));
    effort_values_.assign(limits.begin(), limits.end());
    effort_.resize(limits.size());
    for (size_t k = 0; k < limits.size(); ++k) effort_[k] = L(static_cast<T>(limits[k]));
  }
  // No clamping: every limit infinite.
  void remove_effort_limits() {
    set_effort_limits(std::vector<double>(static_cast<size_t>(model_.nv), std::numeric_limits<double>::infinity()));
  }
  const std::vector<double>& effort_limits() const { return effort_values_; }
  // PD position targets, N x nv env-major (entry idx_v of a 1-dof joint is its position
  // target; the free-flyer's entries are ignored). Zero until written.
  T* target() { ensure_target(); return target_; }
  // Uses the caller's N x nv array for the targets (no copy). Throws Error on a size mismatch.
  void use_target_buffer(std::span<T> target) {
    check_size("target", target.size(), model_.nv, "nv");
    target_ = target.data();
  }

  // --- Constraints in forward dynamics and step ---
  // With constraints on (the default) a model with constraints steps with its constraints,
  // solved by constraint_solver() (LCABA unless set); off, they are ignored (ABA on the tree).
  // Baumgarte gains come from the constraint specs.
  void set_use_constraints(bool on) { use_constraints_ = on; }
  bool constrained() const { return use_constraints_ && model_.constraint_rows > 0; }
  // Throws Error when switching to the dense solver while per-environment parameters are set.
  void set_constraint_solver(ConstraintSolver solver) {
    if (solver == ConstraintSolver::Dense && env_parameters_.enabled())
      throw Error("Batch::set_constraint_solver: the dense solver reads the model's parameters, not the per-environment ones; "
                  "call reset_parameters() first");
    constraint_solver_ = solver;
  }
  ConstraintSolver constraint_solver() const { return constraint_solver_; }
  // mu (the augmented-Lagrangian penalty; ProximalSettings), iteration cap, tolerance. The
  // engine's default mu is 1e4 in double and 1e2 in float lanes: LCABA's primal solves lose
  // accuracy as mu grows (mu K^T K swamps light links' inertia; lcaba-proxbbo §VI-D,
  // tests/test_loop_dynamics.cpp), and float has seven digits to lose from. Smaller mu costs
  // iterations. proxBBO keeps its accuracy at stiff penalties (1e6 and more).
  void set_constraint_settings(const ProximalSettings& settings) { constraint_settings_ = settings; }
  const ProximalSettings& constraint_settings() const { return constraint_settings_; }
  static constexpr double kDefaultLcabaPenalty = 1e4;
  static constexpr double default_constraint_penalty() { return std::is_same_v<T, float> ? 1e2 : kDefaultLcabaPenalty; }
  // Per environment, from the last constrained forward_dynamics / step (its last substep):
  // the solver's iterations (LCABA: sweeps, 1 = the three-sweep pass alone) and its residual
  // ||J qdd + drift - k||_inf.
  const std::vector<int>& constraint_iterations() const { return constraint_iterations_; }
  const std::vector<T>& constraint_residual() const { return constraint_residual_; }
  // The constraint multipliers, N x m env-major (M qdd + b = tau + J^T lambda; rows as the
  // model's constraint rows, in constraint frames): the last call's, and LCABA's warm start
  // for the next. Zeroed by reset().
  const T* constraint_forces() const { return owned_lambda_.data(); }
  const LcabaPlan& lcaba_plan() const { return lcaba_plan_; }
  const ProxBboPlan& proxbbo_plan() const { return proxbbo_plan_; }

  // --- Per-environment parameters (domain randomisation; batch/env_parameters.hpp) ---
  // Each call sets the listed environments, one value (row) per listed environment, and
  // switches the engine to per-environment parameters (the others keep the model's). Values
  // are checked like a URDF's (finite, mass >= 0, rotational inertia physical); an Error names
  // the environment and the body. Not available with constraints on a constrained model.
  //
  // Inertia of `body` (a body index, 1..num_bodies-1) in its own frame: masses (k), centres of
  // mass (k x 3) and rotational inertias about the centre of mass (k x 3 x 3, row-major).
  void set_body_inertia(std::span<const int> envs, int body, std::span<const double> mass, std::span<const double> com,
                        std::span<const double> rotational_inertia) {
    const char* who = "set_body_inertia";
    if (body < 1 || body >= model_.num_bodies())
      throw Error(std::string(who) + ": body index " + std::to_string(body) + " out of range [1, " + std::to_string(model_.num_bodies()) + ")");
    check_rows(who, "mass", envs, mass, 1);
    check_rows(who, "com", envs, com, 3);
    check_rows(who, "rotational_inertia", envs, rotational_inertia, 9);
    std::vector<RigidInertiad> values(envs.size());
    for (size_t k = 0; k < envs.size(); ++k) {
      check_env(who, envs[k]);
      RigidInertiad& I = values[k];
      I.mass = mass[k];
      for (int j = 0; j < 3; ++j) I.com[j] = com[3 * k + static_cast<size_t>(j)];
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 3; ++j) I.inertia_com.m[r][j] = rotational_inertia[9 * k + static_cast<size_t>(3 * r + j)];
      const std::string where = std::string(who) + ": environment " + std::to_string(envs[k]) + ", body '" + model_.bodies[body].name + "'";
      check_link_inertial_values(I, model_.bodies[body].name, where);
      check_rotational_inertia(I, where);
    }
    enable_env_parameters(who);
    for (size_t k = 0; k < envs.size(); ++k) env_parameters_.set_inertia(envs[k], body, values[k], model_);
  }
  // Gravity vectors (k x 3, m/s^2, world frame).
  void set_gravity(std::span<const int> envs, std::span<const double> gravity) {
    check_rows("set_gravity", "gravity", envs, gravity, 3);
    for (size_t k = 0; k < envs.size(); ++k) check_env("set_gravity", envs[k]);
    for (double g : gravity)
      if (!std::isfinite(g)) throw Error("set_gravity: gravity must be finite");
    enable_env_parameters("set_gravity");
    for (size_t k = 0; k < envs.size(); ++k)
      env_parameters_.set_gravity(envs[k], {gravity[3 * k], gravity[3 * k + 1], gravity[3 * k + 2]});
  }
  // Joint damping / armature per dof (k x nv, finite, >= 0).
  void set_damping(std::span<const int> envs, std::span<const double> damping) {
    set_dof_parameter("set_damping", envs, damping, [this](int e, int dof, double x) { env_parameters_.set_damping(e, dof, x, model_); });
  }
  void set_armature(std::span<const int> envs, std::span<const double> armature) {
    set_dof_parameter("set_armature", envs, armature, [this](int e, int dof, double x) { env_parameters_.set_armature(e, dof, x, model_); });
  }
  // Back to the model's parameters for every environment.
  void reset_parameters() { env_parameters_.disable(); }
  bool per_env_parameters() const { return env_parameters_.enabled(); }
  // Environment e's current values (the model's when not set).
  RigidInertiad body_inertia(int env, int body) const {
    check_env("body_inertia", env);
    return env_parameters_.enabled() ? env_parameters_.inertia(env, body, model_) : model_.bodies.at(static_cast<size_t>(body)).inertia;
  }
  Vec3d gravity(int env) const {
    check_env("gravity", env);
    return env_parameters_.enabled() ? env_parameters_.gravity(env) : model_.gravity;
  }
  double damping(int env, int dof) const {
    check_env("damping", env);
    return env_parameters_.enabled() ? env_parameters_.damping(env, dof, model_) : model_.damping.at(static_cast<size_t>(dof));
  }
  double armature(int env, int dof) const {
    check_env("armature", env);
    return env_parameters_.enabled() ? env_parameters_.armature(env, dof, model_) : model_.armature.at(static_cast<size_t>(dof));
  }

  // --- Observations (kernels/frame_observation.hpp) ---
  // Chooses the frames observe() reports (names of links or joints, Model::frames), in order.
  // Throws Error naming an unknown frame.
  void set_observed_frames(const std::vector<std::string>& names) {
    std::vector<int> frames;
    for (const std::string& name : names) {
      const int f = model_.has_frame(name, FrameKind::Link) ? model_.frame_index(name, FrameKind::Link)
                    : model_.has_frame(name, FrameKind::Joint) ? model_.frame_index(name, FrameKind::Joint)
                    : -1;
      if (f < 0) throw Error("set_observed_frames: model '" + model_.name + "' has no link or joint frame named '" + name + "'");
      frames.push_back(f);
    }
    observation_plan_ = plan_frame_observation(model_, frames);
    observed_frame_placement_.clear();
    for (const Transformd& M : observation_plan_.frame_placement) observed_frame_placement_.push_back(cast_transform<L>(M));
    observed_frames_ = names;
    owned_observation_.assign(static_cast<size_t>(n_) * observation_size(), T(0));
    observation_ = owned_observation_.data();
    workspaces_.clear();  // their observation outputs are sized for the frames
  }
  const std::vector<std::string>& observed_frames() const { return observed_frames_; }
  int observation_size() const { return static_cast<int>(observed_frames_.size()) * kFrameObservationSize; }
  // Fills observations(), N x k x 13: per frame the world position, quaternion (x y z w,
  // w >= 0), linear velocity of the frame origin and angular velocity, both in world
  // coordinates, at the current q, v. A bad state gives NaN rows and its status.
  // Throws Error before set_observed_frames.
  void observe() {
    if (observed_frames_.empty()) throw Error("Batch::observe: no frames chosen (call set_observed_frames first)");
    run([&](int block, BlockWorkspace& ws, bool* valid) {
      frame_observation_kernel(block_constants(block, ws), observation_plan_, observed_frame_placement_.data(), *ws.observation,
                               ws.q.data(), ws.v.data(), ws.observation_out.data());
      scatter(block, valid, ws.observation_out.data(), observation_size(), observation_);
    }, /*state=*/true, /*target=*/false);
  }
  const T* observations() const { return observation_; }
  // Writes observe() into the caller's N x k x 13 array instead. Throws Error on a size mismatch.
  void use_observation_buffer(std::span<T> out) {
    check_size("observations", out.size(), observation_size(), "k x 13");
    observation_ = out.data();
  }

  // --- Delassus matrices of the model's constraints (kernels/pv_osimr.hpp) ---
  enum class DelassusAlgorithm { PvOsimr, PvOsim };

  // G = J M^{-1} J^T at every environment's q, m x m row-major per environment (rows as the
  // model's constraint rows, in constraint frames), into delassus_matrices(). Only q is read.
  // Updates status(): an environment with a non-finite or non-unit-quaternion q, or a
  // non-finite result, gets NaN and its status. PV-OSIMr is O(n + m^2) per environment;
  // PvOsim (O(n + m^2 d)) is the baseline.
  // Throws Error for a model without constraints.
  void delassus(DelassusAlgorithm algorithm = DelassusAlgorithm::PvOsimr) {
    require_constraints("Batch::delassus");
    run([&](int block, BlockWorkspace& ws, bool* valid) {
      delassus_block(block, ws, algorithm);
      scatter(block, valid, ws.G.data(), delassus_size(), delassus_);
    }, /*state=*/false);
  }
  // delassus(), and for a solver the lower Cholesky factor L of G + rho I per environment
  // (L L^T = G + rho I, strict upper triangle zero; no pivoting: rho > 0 makes it positive
  // definite even for redundant rows) into delassus_factors(). Throws Error unless rho > 0.
  void delassus_cholesky(T rho, DelassusAlgorithm algorithm = DelassusAlgorithm::PvOsimr) {
    if (!(rho > T(0))) throw Error("Batch::delassus_cholesky: the damping rho must be > 0, got " + std::to_string(rho));
    require_constraints("Batch::delassus_cholesky");
    const int m = model_.constraint_rows;
    if (owned_factors_.empty()) owned_factors_.assign(static_cast<size_t>(n_) * delassus_size(), T(0));
    run([&](int block, BlockWorkspace& ws, bool* valid) {
      delassus_block(block, ws, algorithm);
      damped_cholesky(ws.G.data(), m, L(rho), ws.factor.data());
      scatter(block, valid, ws.G.data(), m * m, delassus_);
      scatter(block, valid, ws.factor.data(), m * m, owned_factors_.data());
    }, /*state=*/false);
  }
  int constraint_rows() const { return model_.constraint_rows; }
  // The N x m x m output of delassus() (environment e's matrix starts at e * m * m).
  const T* delassus_matrices() const { return delassus_; }
  // The N x m x m Cholesky factors of delassus_cholesky() (empty before its first call).
  const T* delassus_factors() const { return owned_factors_.data(); }
  // Writes delassus() into the caller's N x m x m array instead (no copy; it must outlive the
  // calls). Throws Error when its size is not N x m x m.
  void use_delassus_buffer(std::span<T> G) {
    check_size("delassus", G.size(), delassus_size(), "m x m");
    delassus_ = G.data();
  }
  const DelassusPlan& delassus_plan() const { return delassus_plan_; }

  const std::vector<EnvStatus>& status() const { return status_; }
  int failed_count() const {
    int k = 0;
    for (EnvStatus s : status_) k += s != EnvStatus::Ok;
    return k;
  }
  std::string status_message(int env) const {
    return "environment " + std::to_string(env) + ": " + env_status_name(status_.at(static_cast<size_t>(env)));
  }

  // Resets the listed environments to the reference configuration (neutral unless set) with
  // zero velocity, torque and acceleration, and clears their status. Others are untouched.
  void reset(std::span<const int> envs) {
    for (int e : envs) {
      check_env("Batch::reset", e);
      std::copy(reference_q_.begin(), reference_q_.end(), q_ + static_cast<long>(e) * model_.nq);
      clear_row(v_, e), clear_row(tau_, e), clear_row(qdd_, e), clear_lambda(e);
      status_[static_cast<size_t>(e)] = EnvStatus::Ok;
    }
  }
  // Random resets, reproducible: environment e's draw depends only on (seed, e), not on the
  // thread count or on which environments share the call (batch/counter_rng.hpp).
  // Without noise: each 1-dof joint uniform within its position limits (continuous joints in
  // [-pi, pi)), the free-flyer at its reference placement; v = 0.
  // With noise >= 0: q = reference ⊕ delta, delta_k uniform in [-noise, noise] per dof (rad, m;
  // on the manifold for the free-flyer), clamped to the limits; v_k uniform in
  // [-velocity_noise, velocity_noise]. Torque and acceleration are zeroed, status cleared.
  void reset(std::span<const int> envs, std::uint64_t seed, std::optional<double> noise = std::nullopt,
             double velocity_noise = 0.0) {
    if (noise && !(*noise >= 0 && std::isfinite(*noise))) throw Error("Batch::reset: noise must be finite and >= 0");
    if (!(velocity_noise >= 0 && std::isfinite(velocity_noise))) throw Error("Batch::reset: velocity_noise must be finite and >= 0");
    for (int e : envs) check_env("Batch::reset", e);
    VectorX<double> q(model_.nq), delta(model_.nv);
    for (int e : envs) {
      const auto uniform = [&](int k) { return counter_uniform(seed, static_cast<std::uint64_t>(e), static_cast<std::uint64_t>(k)); };
      for (int k = 0; k < model_.nq; ++k) q[k] = static_cast<double>(reference_q_[static_cast<size_t>(k)]);
      if (noise) {
        for (int k = 0; k < model_.nv; ++k) delta[k] = (2 * uniform(k) - 1) * *noise;
        integrate(model_, VectorX<double>(q), delta, q);
      }
      for (int i = 1; i < model_.num_bodies(); ++i) {
        const Body& b = model_.bodies[i];
        if (!is_single_dof(b.joint_type)) continue;
        double lo = model_.lower_position_limit[static_cast<size_t>(b.idx_q)], hi = model_.upper_position_limit[static_cast<size_t>(b.idx_q)];
        if (!noise) {
          if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -M_PI, hi = M_PI;
          q[b.idx_q] = lo + (hi - lo) * uniform(b.idx_v);
        }
        q[b.idx_q] = std::clamp(q[b.idx_q], lo, hi);
      }
      T* q_row = q_ + static_cast<long>(e) * model_.nq;
      T* v_row = v_ + static_cast<long>(e) * model_.nv;
      for (int k = 0; k < model_.nq; ++k) q_row[k] = static_cast<T>(q[k]);
      for (int k = 0; k < model_.nv; ++k) v_row[k] = static_cast<T>((2 * uniform(model_.nv + k) - 1) * velocity_noise);
      clear_row(tau_, e), clear_row(qdd_, e), clear_lambda(e);
      status_[static_cast<size_t>(e)] = EnvStatus::Ok;
    }
  }
  // The configuration reset() returns to and draws noise around (nq values; neutral by
  // default). Quaternions are normalised. Throws Error for a wrong size or non-finite value.
  void set_reference_configuration(std::span<const T> q) {
    if (q.size() != static_cast<size_t>(model_.nq))
      throw Error("set_reference_configuration: expected nq = " + std::to_string(model_.nq) + " values, got " + std::to_string(q.size()));
    VectorX<T> r(model_.nq);
    for (int k = 0; k < model_.nq; ++k) {
      if (!std::isfinite(q[static_cast<size_t>(k)])) throw Error("set_reference_configuration: q[" + std::to_string(k) + "] is not finite");
      r[k] = q[static_cast<size_t>(k)];
    }
    normalize(model_, r);
    reference_q_.assign(r.data(), r.data() + r.size());
  }
  const std::vector<T>& reference_configuration() const { return reference_q_; }
  // Resets the listed environments to given states: q_rows is envs.size() x nq, v_rows
  // envs.size() x nv (row k for envs[k]).
  void reset(std::span<const int> envs, std::span<const T> q_rows, std::span<const T> v_rows) {
    if (q_rows.size() != envs.size() * static_cast<size_t>(model_.nq))
      throw Error("Batch::reset: q_rows has " + std::to_string(q_rows.size()) + " values, expected " +
                  std::to_string(envs.size()) + " x nq = " + std::to_string(envs.size() * model_.nq));
    if (v_rows.size() != envs.size() * static_cast<size_t>(model_.nv))
      throw Error("Batch::reset: v_rows has " + std::to_string(v_rows.size()) + " values, expected " +
                  std::to_string(envs.size()) + " x nv = " + std::to_string(envs.size() * model_.nv));
    for (size_t k = 0; k < envs.size(); ++k) {
      const int e = envs[k];
      check_env("Batch::reset", e);
      std::copy_n(q_rows.data() + k * model_.nq, model_.nq, q_ + static_cast<long>(e) * model_.nq);
      std::copy_n(v_rows.data() + k * model_.nv, model_.nv, v_ + static_cast<long>(e) * model_.nv);
      clear_row(tau_, e), clear_row(qdd_, e), clear_lambda(e);
      status_[static_cast<size_t>(e)] = EnvStatus::Ok;
    }
  }

  // Bytes of kernel workspace and gathered state of one lane block, and per environment.
  size_t block_workspace_bytes() const { return BlockWorkspace(*this).bytes(); }
  double workspace_bytes_per_env() const { return static_cast<double>(block_workspace_bytes()) / W; }

 private:
  // One thread's working set for one lane block: the kernel workspace, the block's state as
  // lanes, and lane-major scalar staging rows for the transposition.
  struct BlockWorkspace {
    BlockWorkspace(const BatchEngine& engine)
        : constants(engine.constants_), aba(engine.model_), q(size(engine.model_.nq)), v(size(engine.model_.nv)),
          tau(size(engine.model_.nv)), tau_applied(size(engine.model_.nv)), target(size(engine.model_.nv)),
          qdd(size(engine.model_.nv)), displacement(size(engine.model_.nv)),
          G(size(engine.model_.constraint_rows * engine.model_.constraint_rows)), factor(G.size()),
          lambda(size(engine.model_.constraint_rows)), violation(lambda.size()),
          observation_out(size(engine.observation_size())), stage_q(size(engine.model_.nq * W)),
          stage_v(size(engine.model_.nv * W)), stage_tau(stage_v.size()), stage_target(stage_v.size()),
          stage_qdd(stage_v.size()), stage_lambda(size(engine.model_.constraint_rows * W)) {
      const Model& m = engine.model_;
      implicit_armature.resize(size(m.nv));
      if (m.constraint_rows > 0) {  // a tree without constraints needs none of these
        delassus.emplace(m, engine.delassus_plan_);
        lcaba.emplace(m, engine.lcaba_plan_);
        proxbbo.emplace(m, engine.proxbbo_plan_);
        dense.emplace(m);
        dense_armature.assign(size(m.nv), 0.0);
        dense_constrained.emplace(m);
        dense_q.setZero(m.nq), dense_v.setZero(m.nv), dense_tau.setZero(m.nv);
      }
      if (!engine.observed_frames_.empty()) observation.emplace(m);
    }
    static size_t size(int n) { return static_cast<size_t>(n); }
    ModelConstants<L> constants;  // this thread's views of per-environment parameters
    LaneArray<L> implicit_armature;     // armature + h d, per dof (implicitly damped steps)
    std::vector<double> dense_armature;  // the same for the dense solver (lane 0: shared parameters)
    EnvInertiaTables<L> inertia_tables;  // the block's inertias (per-environment parameters)
    AbaWorkspace<L> aba;
    std::optional<DelassusWorkspace<L>> delassus;
    std::optional<LcabaWorkspace<L>> lcaba;
    std::optional<ProxBboWorkspace<L>> proxbbo;
    std::optional<FrameObservationWorkspace<L>> observation;
    std::optional<Data<double>> dense;  // the dense constrained solver, one environment at a time
    std::optional<ConstrainedData<double>> dense_constrained;
    Eigen::VectorXd dense_q, dense_v, dense_tau;
    LaneArray<L> q, v, tau, tau_applied, target, qdd, displacement, G, factor, lambda, violation, observation_out;  // one lane per environment
    std::vector<T, xsimd::aligned_allocator<T, 64>> stage_q, stage_v, stage_tau, stage_target, stage_qdd, stage_lambda;
    size_t bytes() const {
      return aba.bytes() + (delassus ? delassus->bytes() : 0) + (lcaba ? lcaba->bytes() : 0) + (proxbbo ? proxbbo->bytes() : 0) + (observation ? observation->bytes() : 0) +
             (q.size() + v.size() + tau.size() + tau_applied.size() + target.size() + qdd.size() + displacement.size() +
              G.size() + factor.size() + lambda.size() + violation.size() + observation_out.size()) * sizeof(L) +
             (stage_q.size() + stage_v.size() + stage_tau.size() + stage_target.size() + stage_qdd.size() + stage_lambda.size()) * sizeof(T);
    }
  };
  // The constants block b's kernels read: the shared ones, or this thread's copy viewing the
  // block's per-environment parameters.
  const ModelConstants<L>& block_constants(int block, BlockWorkspace& ws) const {
    if (!env_parameters_.enabled()) return constants_;
    env_parameters_.point_views(block, constants_, ws.constants, ws.inertia_tables);
    env_parameters_.prefetch(block + 1);  // a thread's blocks are consecutive (blocked_range)
    return ws.constants;
  }
  int delassus_size() const { return model_.constraint_rows * model_.constraint_rows; }
  void require_constraints(const char* who) const {
    if (model_.constraint_rows == 0)
      throw Error(std::string(who) + ": model '" + model_.name + "' has no constraints (add them with --constraints / add_constraint)");
  }
  // G of the block's environments (q already gathered), with their own parameters, into ws.G.
  void delassus_block(int block, BlockWorkspace& ws, DelassusAlgorithm algorithm) const {
    const ModelConstants<L>& c = block_constants(block, ws);
    if (algorithm == DelassusAlgorithm::PvOsimr) pv_osimr_kernel(c, delassus_plan_, *ws.delassus, ws.q.data(), ws.G.data());
    else pv_osim_kernel(c, delassus_plan_, *ws.delassus, ws.q.data(), ws.G.data());
  }

  void check_size(const char* name, size_t got, int per_env, const char* per_env_name) const {
    const size_t expected = static_cast<size_t>(n_) * per_env;
    if (got != expected)
      throw Error(std::string("Batch: buffer '") + name + "' has " + std::to_string(got) + " values, expected N x " +
                  per_env_name + " = " + std::to_string(n_) + " x " + std::to_string(per_env) +
                  " = " + std::to_string(expected));
  }
  void check_env(const char* who, int e) const {
    if (e < 0 || e >= n_) throw Error(std::string(who) + ": environment index " + std::to_string(e) + " out of range [0, " + std::to_string(n_) + ")");
  }
  // `values` must hold `per_env` numbers for each listed environment.
  static void check_rows(const char* who, const char* name, std::span<const int> envs, std::span<const double> values, int per_env) {
    if (values.size() != envs.size() * static_cast<size_t>(per_env))
      throw Error(std::string(who) + ": '" + name + "' has " + std::to_string(values.size()) + " values, expected " +
                  std::to_string(envs.size()) + " environments x " + std::to_string(per_env));
  }
  // nv values, finite (or infinite where allowed) and >= 0.
  void check_dof_values(const std::string& who, std::span<const double> values, bool allow_infinity) const {
    if (values.size() != static_cast<size_t>(model_.nv))
      throw Error(who + ": expected nv = " + std::to_string(model_.nv) + " values, got " + std::to_string(values.size()));
    for (size_t k = 0; k < values.size(); ++k)
      if (!(values[k] >= 0) || (!allow_infinity && !std::isfinite(values[k])))
        throw Error(who + ": dof " + std::to_string(k) + " must be finite and >= 0, got " + std::to_string(values[k]));
  }
  // What the dynamics needs of a rigid body (check_rigid_body_inertia: positive semi-definite;
  // the triangle inequality is not required, as at loading), given as a full, symmetric matrix.
  static void check_rotational_inertia(const RigidInertiad& I, const std::string& where) {
    const Mat3d& J = I.inertia_com;
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < r; ++k)
        if (std::abs(J.m[r][k] - J.m[k][r]) > 1e-9 * (1 + std::abs(J.m[r][k])))
          throw Error(where + ": rotational inertia is not symmetric");
    check_rigid_body_inertia(I, where);
  }
  void enable_env_parameters(const char* who) {
    if (model_.constraint_rows > 0 && use_constraints_ && constraint_solver_ == ConstraintSolver::Dense)
      throw Error(std::string(who) + ": per-environment parameters are not available with the dense constraint solver (it "
                  "reads the model's parameters); use ConstraintSolver::Lcaba, or set_use_constraints(false) to step the tree only");
    env_parameters_.enable(constants_, num_blocks());
  }
  // k x nv values per listed environment into `set(e, dof, value)`; free-flyer dofs must be 0.
  template <class Set>
  void set_dof_parameter(const char* who, std::span<const int> envs, std::span<const double> values, Set set) {
    check_rows(who, "values", envs, values, model_.nv);
    for (size_t k = 0; k < envs.size(); ++k) {
      check_env(who, envs[k]);
      check_dof_values(std::string(who) + ": environment " + std::to_string(envs[k]),
                       values.subspan(k * static_cast<size_t>(model_.nv), static_cast<size_t>(model_.nv)), false);
    }
    enable_env_parameters(who);
    for (size_t k = 0; k < envs.size(); ++k)
      for (int dof = 0; dof < model_.nv; ++dof) set(envs[k], dof, values[k * static_cast<size_t>(model_.nv) + static_cast<size_t>(dof)]);
  }
  void ensure_target() {
    if (target_) return;
    owned_target_.assign(static_cast<size_t>(n_) * model_.nv, T(0));
    target_ = owned_target_.data();
  }
  void clear_row(T* data, int e) { std::fill_n(data + static_cast<long>(e) * model_.nv, model_.nv, T(0)); }
  void clear_lambda(int e) {
    std::fill_n(owned_lambda_.data() + static_cast<long>(e) * model_.constraint_rows, model_.constraint_rows, T(0));
  }

  // Checks one environment's state and writes it, quaternions normalised, into lane `l` of
  // the lane-major staging rows (stage[k * W + l]).
  // With state = false only q is read (kernels of the configuration alone).
  EnvStatus stage_state(int e, int l, BlockWorkspace& ws, bool state, bool target) const {
    const T* q_row = q_ + static_cast<long>(e) * model_.nq;
    const T* v_row = v_ + static_cast<long>(e) * model_.nv;
    const T* tau_row = tau_ + static_cast<long>(e) * model_.nv;
    for (int k = 0; k < model_.nq; ++k) {
      if (!std::isfinite(q_row[k])) return EnvStatus::NonFiniteState;
      ws.stage_q[static_cast<size_t>(k * W + l)] = q_row[k];
    }
    for (int k = 0; state && k < model_.nv; ++k) {
      if (!std::isfinite(v_row[k]) || !std::isfinite(tau_row[k])) return EnvStatus::NonFiniteState;
      ws.stage_v[static_cast<size_t>(k * W + l)] = v_row[k];
      ws.stage_tau[static_cast<size_t>(k * W + l)] = tau_row[k];
    }
    const T* target_row = target ? target_ + static_cast<long>(e) * model_.nv : nullptr;
    for (size_t k = 0; target && k < pd_dofs_.size(); ++k) {  // the free-flyer's entries are not read
      const int dof = pd_dofs_[k].v;
      if (!std::isfinite(target_row[dof])) return EnvStatus::NonFiniteState;
      ws.stage_target[static_cast<size_t>(dof * W + l)] = target_row[dof];
    }
    for (int i = 1; i < model_.num_bodies(); ++i) {
      const int offset = quaternion_offset(model_.bodies[i].joint_type);
      if (offset < 0) continue;
      T* quat[4];
      for (int k = 0; k < 4; ++k) quat[k] = &ws.stage_q[static_cast<size_t>((model_.bodies[i].idx_q + offset + k) * W + l)];
      const T norm = std::sqrt(*quat[0] * *quat[0] + *quat[1] * *quat[1] + *quat[2] * *quat[2] + *quat[3] * *quat[3]);
      if (!(std::abs(norm - T(1)) <= T(kQuaternionNormTolerance))) return EnvStatus::InvalidQuaternion;
      for (T* c : quat) *c /= norm;
    }
    return EnvStatus::Ok;
  }

  // Neutral state in lane l (padding past N, or a rejected environment).
  void stage_neutral(int l, BlockWorkspace& ws) const {
    for (int k = 0; k < model_.nq; ++k) ws.stage_q[static_cast<size_t>(k * W + l)] = neutral_[static_cast<size_t>(k)];
    for (int k = 0; k < model_.nv; ++k) {
      ws.stage_v[static_cast<size_t>(k * W + l)] = T(0);
      ws.stage_tau[static_cast<size_t>(k * W + l)] = T(0);
      ws.stage_target[static_cast<size_t>(k * W + l)] = T(0);
    }
    for (const PdDof& d : pd_dofs_) ws.stage_target[static_cast<size_t>(d.v * W + l)] = neutral_[static_cast<size_t>(d.q)];
  }

  // Gather: env-major rows -> lanes of block `block`, each environment checked on the way;
  // valid[l] says whether lane l holds a real, accepted environment.
  void gather(int block, BlockWorkspace& ws, bool state, bool target, bool* valid) {
    using Traits = LaneTraits<L>;
    for (int l = 0; l < W; ++l) {
      const int e = block * W + l;
      valid[l] = false;
      if (e < n_) {
        const EnvStatus s = stage_state(e, l, ws, state, target);
        status_[static_cast<size_t>(e)] = s;
        valid[l] = s == EnvStatus::Ok;
      }
      if (!valid[l]) stage_neutral(l, ws);
    }
    for (int k = 0; k < model_.nq; ++k) ws.q[static_cast<size_t>(k)] = Traits::load(&ws.stage_q[static_cast<size_t>(k * W)]);
    for (int k = 0; state && k < model_.nv; ++k) {
      ws.v[static_cast<size_t>(k)] = Traits::load(&ws.stage_v[static_cast<size_t>(k * W)]);
      ws.tau[static_cast<size_t>(k)] = Traits::load(&ws.stage_tau[static_cast<size_t>(k * W)]);
    }
    for (size_t k = 0; target && k < pd_dofs_.size(); ++k) {
      const int dof = pd_dofs_[k].v;
      ws.target[static_cast<size_t>(dof)] = Traits::load(&ws.stage_target[static_cast<size_t>(dof * W)]);
    }
  }

  // Writes `count` lanes into rows of the env-major `out` (count values per environment), for
  // the environments of the block with valid[l]. Each lane vector goes to W rows at once, so
  // the rows are written sequentially (no strided pass over a lane-major staging copy).
  void write_rows(int block, const bool* valid, const L* lanes, int count, T* out) const {
    using Traits = LaneTraits<L>;
    const int first = block * W, in_block = std::min(W, n_ - first);
    alignas(64) T values[W];
    for (int k = 0; k < count; ++k) {
      Traits::store(lanes[k], values);
      for (int l = 0; l < in_block; ++l)
        if (valid[l]) out[static_cast<long>(first + l) * count + k] = values[l];
    }
  }

  // Scatter: `count` output lanes -> row e of the env-major `out`, valid environments only.
  // A non-finite value marks its environment (NonFiniteResult, valid[l] = false) and its row
  // is filled with NaN.
  void scatter(int block, bool* valid, const L* lanes, int count, T* out) {
    using Traits = LaneTraits<L>;
    // x * 0 is 0 for finite x and NaN otherwise: one sum per lane flags a non-finite output.
    L non_finite(T(0));
    for (int k = 0; k < count; ++k) non_finite += lanes[k] * L(T(0));
    alignas(64) T flags[W];
    Traits::store(non_finite, flags);
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      const int e = block * W + l;
      if (valid[l] && flags[l] != T(0)) {
        valid[l] = false;
        status_[static_cast<size_t>(e)] = EnvStatus::NonFiniteResult;
      }
      if (!valid[l]) std::fill_n(out + static_cast<long>(e) * count, count, std::numeric_limits<T>::quiet_NaN());
    }
    write_rows(block, valid, lanes, count, out);
  }

  // The torque that drives the dynamics (see ControlMode), on lanes: tau (+ PD), clamped.
  void actuate(BlockWorkspace& ws) const {
    for (int k = 0; k < model_.nv; ++k) ws.tau_applied[static_cast<size_t>(k)] = ws.tau[static_cast<size_t>(k)];
    if (control_mode_ == ControlMode::PositionPD)
      for (const PdDof& d : pd_dofs_) {
        const size_t k = static_cast<size_t>(d.v);
        ws.tau_applied[k] += kp_[k] * (ws.target[k] - ws.q[static_cast<size_t>(d.q)]) - kd_[k] * ws.v[k];
      }
    for (int k = 0; k < model_.nv; ++k) {  // an infinite limit leaves the torque as it is
      L& t = ws.tau_applied[static_cast<size_t>(k)];
      const L& limit = effort_[static_cast<size_t>(k)];
      t = select(t > limit, limit, select(t < -limit, -limit, t));
    }
  }

  // qdd of the block's environments from ws.q, ws.v, ws.tau_applied: ABA on the lanes, or the
  // dense constrained solver lane by lane (valid lanes only; the others get qdd = 0).
  void accelerations(int block, const ModelConstants<L>& c, BlockWorkspace& ws, const bool* valid) {
    if (!constrained()) {
      aba_kernel(c, ws.aba, ws.q.data(), ws.v.data(), ws.tau_applied.data(), ws.qdd.data());
      return;
    }
    if (constraint_solver_ != ConstraintSolver::Dense) {
      const LoopDynamicsResult<L> r =
          constraint_solver_ == ConstraintSolver::Lcaba
              ? lcaba_kernel(c, lcaba_plan_, *ws.lcaba, ws.q.data(), ws.v.data(), ws.tau_applied.data(), constraint_settings_,
                             ws.qdd.data(), ws.lambda.data(), ws.violation.data())
              : proxbbo_kernel(c, proxbbo_plan_, *ws.proxbbo, ws.q.data(), ws.v.data(), ws.tau_applied.data(), constraint_settings_,
                               ws.qdd.data(), ws.lambda.data(), ws.violation.data());
      using Traits = LaneTraits<L>;
      alignas(64) T iterations[W], residual[W];
      Traits::store(r.iterations, iterations);
      Traits::store(r.residual, residual);
      for (int l = 0; l < W && block * W + l < n_; ++l) {
        if (!valid[l]) continue;
        const size_t e = static_cast<size_t>(block * W + l);
        constraint_iterations_[e] = static_cast<int>(iterations[l]);
        constraint_residual_[e] = residual[l];
      }
      return;
    }
    using Traits = LaneTraits<L>;
    const int nq = model_.nq, nv = model_.nv;
    for (int k = 0; k < nv; ++k) {  // the dense solver's armature: c's (per-environment parameters are refused here)
      alignas(64) T lanes[W];
      Traits::store(c.armature[static_cast<size_t>(k)], lanes);
      ws.dense_armature[static_cast<size_t>(k)] = lanes[0];
    }
    ws.dense->constants.armature = ws.dense_armature;
    for (int k = 0; k < nq; ++k) Traits::store(ws.q[static_cast<size_t>(k)], &ws.stage_q[static_cast<size_t>(k * W)]);
    for (int k = 0; k < nv; ++k) {
      Traits::store(ws.v[static_cast<size_t>(k)], &ws.stage_v[static_cast<size_t>(k * W)]);
      Traits::store(ws.tau_applied[static_cast<size_t>(k)], &ws.stage_tau[static_cast<size_t>(k * W)]);
    }
    for (int l = 0; l < W; ++l) {
      const size_t lane = static_cast<size_t>(l);
      if (!valid[l]) {
        for (int k = 0; k < nv; ++k) ws.stage_qdd[static_cast<size_t>(k * W) + lane] = T(0);
        continue;
      }
      for (int k = 0; k < nq; ++k) ws.dense_q[k] = ws.stage_q[static_cast<size_t>(k * W) + lane];
      for (int k = 0; k < nv; ++k) {
        ws.dense_v[k] = ws.stage_v[static_cast<size_t>(k * W) + lane];
        ws.dense_tau[k] = ws.stage_tau[static_cast<size_t>(k * W) + lane];
      }
      const Eigen::VectorXd& qdd =
          constrained_forward_dynamics(model_, *ws.dense, *ws.dense_constrained, ws.dense_q, ws.dense_v, ws.dense_tau, constraint_settings_);
      for (int k = 0; k < nv; ++k) ws.stage_qdd[static_cast<size_t>(k * W) + lane] = static_cast<T>(qdd[k]);
      for (int k = 0; k < model_.constraint_rows; ++k)
        ws.stage_lambda[static_cast<size_t>(k * W) + lane] = static_cast<T>(ws.dense_constrained->lambda[k]);
      const size_t e = static_cast<size_t>(block * W + l);
      constraint_iterations_[e] = ws.dense_constrained->iterations;
      constraint_residual_[e] = static_cast<T>(ws.dense_constrained->residual_norm);
    }
    for (int k = 0; k < nv; ++k) ws.qdd[static_cast<size_t>(k)] = Traits::load(&ws.stage_qdd[static_cast<size_t>(k * W)]);
    for (int k = 0; k < model_.constraint_rows; ++k)
      ws.lambda[static_cast<size_t>(k)] = Traits::load(&ws.stage_lambda[static_cast<size_t>(k * W)]);
  }

  // Whether the passive forces stage has damping to apply (in the model or set per environment).
  bool damped() const { return passive_forces_ && (model_damped_ || env_parameters_.varies_damping()); }
  // Passive joint forces: tau_applied -= d v (lanes; d per environment when set).
  void apply_damping(const ModelConstants<L>& c, BlockWorkspace& ws) const {
    for (int k = 0; k < model_.nv; ++k)
      ws.tau_applied[static_cast<size_t>(k)] -= c.damping[static_cast<size_t>(k)] * ws.v[static_cast<size_t>(k)];
  }
  // The constants with armature + h d in place of the armature (see step()): this thread's copy
  // of `c`'s views, its armature pointing at ws.implicit_armature.
  const ModelConstants<L>& implicitly_damped(const ModelConstants<L>& c, BlockWorkspace& ws, const L& h) const {
    for (size_t k = 0; k < ws.implicit_armature.size(); ++k) ws.implicit_armature[k] = c.armature[k] + h * c.damping[k];
    ModelConstants<L>& out = ws.constants;
    if (&c != &out) {
      out.inertia = c.inertia, out.spatial_inertia = c.spatial_inertia, out.damping = c.damping;
      out.base_acceleration = c.base_acceleration;
    }
    out.armature = std::span<const L>(ws.implicit_armature.data(), ws.implicit_armature.size());
    return out;
  }

  // The block's multipliers into lanes (zero in lanes without a valid environment): LCABA's
  // warm start.
  void gather_lambda(int block, BlockWorkspace& ws, const bool* valid) const {
    using Traits = LaneTraits<L>;
    const int m = model_.constraint_rows;
    for (int l = 0; l < W; ++l)
      for (int k = 0; k < m; ++k)
        ws.stage_lambda[static_cast<size_t>(k * W + l)] = valid[l] ? owned_lambda_[static_cast<size_t>((block * W + l) * m + k)] : T(0);
    for (int k = 0; k < m; ++k) ws.lambda[static_cast<size_t>(k)] = Traits::load(&ws.stage_lambda[static_cast<size_t>(k * W)]);
  }

  // Forward dynamics on one block, and (integrate_state) `substeps` semi-implicit Euler
  // substeps on the lanes; q and v are written back for the environments whose qdd stayed
  // finite (a non-finite value in a substep reaches the last substep's qdd through v).
  void dynamics_block(int block, BlockWorkspace& ws, bool* valid, bool integrate_state, T dt, int substeps) {
    const int nq = model_.nq, nv = model_.nv;
    const L h(dt / static_cast<T>(substeps));
    const bool damp = damped();
    const ModelConstants<L>& c = integrate_state && damp ? implicitly_damped(block_constants(block, ws), ws, h)
                                                         : block_constants(block, ws);
    if (constrained()) gather_lambda(block, ws, valid);
    for (int s = 0; s < substeps; ++s) {
      actuate(ws);
      if (damp) apply_damping(c, ws);
      accelerations(block, c, ws, valid);
      if (!integrate_state) break;
      for (int k = 0; k < nv; ++k) {  // v += h qdd, q = q ⊕ h v
        ws.v[static_cast<size_t>(k)] += h * ws.qdd[static_cast<size_t>(k)];
        ws.displacement[static_cast<size_t>(k)] = h * ws.v[static_cast<size_t>(k)];
      }
      integrate_kernel(constants_.tree, ws.q.data(), ws.displacement.data(), ws.q.data());
    }
    scatter(block, valid, ws.qdd.data(), nv, qdd_);
    if (constrained()) write_rows(block, valid, ws.lambda.data(), model_.constraint_rows, owned_lambda_.data());
    if (!integrate_state) return;
    write_rows(block, valid, ws.q.data(), nq, q_);
    write_rows(block, valid, ws.v.data(), nv, v_);
  }

  void run_dynamics(bool integrate_state, T dt, int substeps) {
    const bool target = control_mode_ == ControlMode::PositionPD;
    if (target) ensure_target();
    run([&](int block, BlockWorkspace& ws, bool* valid) { dynamics_block(block, ws, valid, integrate_state, dt, substeps); },
        /*state=*/true, target);
  }

  // Every lane block through `kernel(block, workspace, valid)` after gathering its inputs (q,
  // and v, tau when `state`, the PD targets when `target`), lane blocks spread over the
  // arena's threads.
  template <class Kernel>
  void run(Kernel&& kernel, bool state, bool target = false) {
    // A few lane blocks per task keep scheduling overhead small next to the kernel.
    const int grain = std::max(1, 16 / W);
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, num_blocks(), grain), [&](const tbb::blocked_range<int>& range) {
        BlockWorkspace& ws = workspaces_.local();
        for (int b = range.begin(); b != range.end(); ++b) {
          bool valid[W];
          gather(b, ws, state, target, valid);
          kernel(b, ws, valid);
        }
      });
    });
  }

  const Model model_;
  int n_;
  ModelConstants<L> constants_;
  bool model_damped_ = false;  // some joint of the model has damping (step() then damps implicitly)
  bool passive_forces_ = true;
  DelassusPlan delassus_plan_;
  LcabaPlan lcaba_plan_;
  ProxBboPlan proxbbo_plan_;
  std::vector<T> neutral_, reference_q_;
  // Actuation
  struct PdDof { int v, q; };  // a 1-dof joint's dof and coordinate
  std::vector<PdDof> pd_dofs_;
  ControlMode control_mode_ = ControlMode::Torque;
  LaneArray<L> kp_, kd_, effort_;  // per dof, broadcast to every lane
  std::vector<double> kp_values_, kd_values_, effort_values_;
  std::vector<T> owned_target_;
  T* target_ = nullptr;
  // Constraints in the dynamics
  bool use_constraints_ = true;
  ConstraintSolver constraint_solver_ = ConstraintSolver::Lcaba;
  ProximalSettings constraint_settings_;
  std::vector<T> owned_lambda_;
  std::vector<int> constraint_iterations_;
  std::vector<T> constraint_residual_;
  // Per-environment parameters, observations
  EnvParameters<L> env_parameters_;
  FrameObservationPlan observation_plan_;
  std::vector<Transform<L>> observed_frame_placement_;
  std::vector<std::string> observed_frames_;
  std::vector<T> owned_observation_;
  T* observation_ = nullptr;
  std::vector<T> owned_q_, owned_v_, owned_tau_, owned_qdd_, owned_delassus_, owned_factors_;
  T *q_ = nullptr, *v_ = nullptr, *tau_ = nullptr, *qdd_ = nullptr, *delassus_ = nullptr;
  std::vector<EnvStatus> status_;
  int threads_ = 1;
  tbb::task_arena arena_;
  tbb::enumerable_thread_specific<BlockWorkspace> workspaces_;
};

}  // namespace batchdyn

namespace batchdyn {
// The product: SIMD lanes of the widest instruction set the build targets.
template <class T>
using Batch = BatchEngine<SimdLane<T>>;
// W = 1: the same engine and kernel on plain scalars (reference / baseline).
template <class T>
using ScalarBatch = BatchEngine<T>;
}  // namespace batchdyn
