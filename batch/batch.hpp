// The engine a training loop calls: N environments of one Model, their state buffers
// (env-major, N x nq / N x nv, row-major: what training code holds), and one call that runs
// forward dynamics, a full step, or the Delassus matrices over all of them — W environments per
// SIMD lane block, lane blocks spread over oneTBB threads (DESIGN.md §1, §4).
//
//   batchdyn::Batch<float> batch(model, 4096);        // SIMD lanes, all cores
//   ... write batch.q(), batch.v(), batch.tau() ...
//   batch.step(1e-3f);                                 // the stages below, then v, q updated
//   for env with batch.status()[env] != EnvStatus::Ok: batch.status_message(env)
//
// This file is the facade: N, the buffers, the thread arena, run() and the order of the stages;
// each stage is a file of batch/ (docs/engine.md lists them), and step() reads like MuJoCo's
// mj_step: check, actuate, passive forces, accelerations, contact, integrate, scatter. Lane e % W
// of block e / W is environment e whatever N and the thread count, and lanes never mix, so
// results are bitwise identical for any thread count, any N and any block mates. A bad
// environment is replaced by the neutral state inside its lane, its outputs are NaN, its state
// is not stepped, and the others are unaffected.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <Eigen/Core>

#include "batch/accelerations.hpp"
#include "batch/actuation.hpp"
#include "batch/argument_checks.hpp"
#include "batch/block_io.hpp"
#include "batch/block_workspace.hpp"
#include "batch/constraint_solving.hpp"
#include "batch/contact_solving.hpp"
#include "batch/delassus_matrices.hpp"
#include "batch/env_parameters.hpp"
#include "batch/env_states.hpp"
#include "batch/integration.hpp"
#include "batch/observations.hpp"
#include "batch/sensors.hpp"
#include "batch/loop_stabilisation.hpp"
#include "batch/passive_forces.hpp"
#include "batch/owned_rows.hpp"
#include "batch/resets.hpp"
#include "batch/thread_arena.hpp"
#include "kernels/algorithms.hpp"
#include "kernels/tree/singular_joints.hpp"

namespace batchdyn {

template <class L>
class BatchEngine {
 public:
  using Lane = L;
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;
  using DelassusAlgorithm = Algorithm;  // PvOsimr or PvOsim
  using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  // N environments of `model` (copied), owning their buffers (owned_rows.hpp), on `threads` (0:
  // every core). Throws Error for N < 1 or a model with singular joints (kernels/tree/singular_joints.hpp).
  BatchEngine(const Model& model, int num_envs, int threads = 0)
      : model_(checked(model, num_envs)), n_(num_envs), constants_(model_), io_(model_, n_), actuation_(model_, n_),
        passive_(model_), stabilisation_(model_), constraints_(model_, n_), contacts_(model_, n_), parameters_(model_, constants_, n_), observations_(model_, n_), sensors_(model_, n_),
        delassus_(model_, n_), resets_(model_, io_.neutral()), owned_(model_, n_, resets_.reference_configuration()),
        workspaces_([this] { return make_workspace(); }) {
    q_ = owned_.q.data(), v_ = owned_.v.data(), tau_ = owned_.tau.data(), qdd_ = owned_.qdd.data();
    set_threads(threads);
  }
  BatchEngine(const BatchEngine&) = delete;  // the stages and per-thread workspaces refer to this engine
  BatchEngine& operator=(const BatchEngine&) = delete;

  int num_envs() const { return n_; }
  int num_blocks() const { return (n_ + W - 1) / W; }
  const Model& model() const { return model_; }

  // Worker threads (0 = all cores oneTBB sees, at most max_threads()) from the next call on; the
  // per-thread workspaces are released. Throws Error for a count out of range.
  void set_threads(int threads) { arena_.set(threads), workspaces_.clear(); }
  int threads() const { return arena_.threads(); }
  static int max_threads() { return ThreadArena::max_threads(); }  // max(256, 8 x the cores)
  // Threads that have run a lane block since the last set_threads: at most threads().
  int threads_used() const { return static_cast<int>(workspaces_.size()); }

  // --- The buffers: env-major (row e is environment e), q N x nq, v / tau / qdd N x nv ---
  T* q() { return q_; }
  T* v() { return v_; }
  T* tau() { return tau_; }
  const T* q() const { return q_; }
  const T* v() const { return v_; }
  const T* qdd() const { return qdd_; }
  Eigen::Map<RowMatrix> q_matrix() { return {q_, n_, model_.nq}; }
  Eigen::Map<RowMatrix> v_matrix() { return {v_, n_, model_.nv}; }
  Eigen::Map<RowMatrix> tau_matrix() { return {tau_, n_, model_.nv}; }
  Eigen::Map<const RowMatrix> qdd_matrix() const { return {qdd_, n_, model_.nv}; }
  // Uses the caller's arrays (no copy; they must outlive the calls). Throws Error naming a wrong size.
  void use_buffers(std::span<T> q, std::span<T> v, std::span<T> tau, std::span<T> qdd) {
    check_buffer_size("q", q.size(), n_, model_.nq, "nq"), check_buffer_size("v", v.size(), n_, model_.nv, "nv");
    check_buffer_size("tau", tau.size(), n_, model_.nv, "nv"), check_buffer_size("qdd", qdd.size(), n_, model_.nv, "nv");
    q_ = q.data(), v_ = v.data(), tau_ = tau.data(), qdd_ = qdd.data();
  }

  // --- The calls ---
  // qdd = FD(q, v, tau_applied) for every environment: check, actuate, passive forces,
  // accelerations, scatter (see the top of the file). Updates status().
  void forward_dynamics() { run_dynamics(/*integrate=*/false, T(0), 1); }

  // One control step of length dt in `substeps` substeps of h = dt / substeps, each: actuate,
  // passive forces (implicit), accelerations, contact, integrate (set_integrator). qdd() holds
  // the last substep's. An environment that fails keeps its state. Throws Error for dt or
  // substeps that check_time_step refuses (dt > 0 finite, h <= 1 s).
  void step(T dt, int substeps = 1) {
    check_time_step("Batch::step", static_cast<double>(dt), substeps);
    stabilisation_.prepare(static_cast<double>(dt) / substeps, integrator_ == Integrator::SemiImplicitEuler);
    run_dynamics(/*integrate=*/true, dt, substeps);
  }

  // --- Integration (batch/integration.hpp): semi-implicit Euler (default) or RK4 ---
  void set_integrator(Integrator integrator) { integrator_ = integrator; }
  Integrator integrator() const { return integrator_; }

  // --- Passive forces (batch/passive_forces.hpp): joint damping -d qd, friction loss and springs, on by default ---
  void set_passive_forces(bool on) { passive_.set_enabled(on); }
  bool passive_forces() const { return passive_.enabled(); }
  // Friction loss alone (Model::friction_loss, MJCF frictionloss; on by default within the passive forces).
  void set_friction_loss(bool on) { passive_.set_friction_loss(on); }
  bool friction_loss() const { return passive_.friction_loss(); }

  // --- Actuation (batch/actuation.hpp) ---
  void set_control_mode(ControlMode mode) { actuation_.set_control_mode(mode); }
  ControlMode control_mode() const { return actuation_.control_mode(); }
  void set_pd_gains(std::span<const double> kp, std::span<const double> kd) { actuation_.set_pd_gains(kp, kd); }
  const std::vector<double>& kp() const { return actuation_.kp(); }
  const std::vector<double>& kd() const { return actuation_.kd(); }
  void set_effort_limits(std::span<const double> limits) { actuation_.set_effort_limits(limits); }
  void remove_effort_limits() { actuation_.remove_effort_limits(); }
  const std::vector<double>& effort_limits() const { return actuation_.effort_limits(); }
  // The clamp to the effort limits (on by default; off with passive forces off: Pinocchio's dynamics).
  void set_effort_clamp(bool on) { actuation_.set_effort_clamp(on); }
  bool effort_clamp() const { return actuation_.effort_clamp(); }
  T* target() { return actuation_.target(); }  // N x nv PD position targets
  // N x nv: the actuation stage's torque in the last substep (tau + PD, clamped), before damping.
  const T* actuator_torques() const { return actuation_.actuator_torques(); }
  void use_target_buffer(std::span<T> target) { actuation_.use_target_buffer(target); }
  // N x nu controls of the model's actuators (ControlMode::Actuators; model().actuators, in order).
  T* ctrl() { return actuation_.ctrl(); }
  void use_ctrl_buffer(std::span<T> ctrl) { actuation_.use_ctrl_buffer(ctrl); }
  int num_actuators() const { return actuation_.num_actuators(); }

  // --- Constraint solving (batch/constraint_solving.hpp) ---
  void set_use_constraints(bool on) { constraints_.set_enabled(on); }
  bool constrained() const { return constraints_.active(); }
  // Throws Error for an algorithm that solves no constraints, or the dense one with per-environment parameters.
  void set_constraint_solver(ConstraintSolver solver) { constraints_.set_solver(solver, parameters_.enabled()); }
  ConstraintSolver constraint_solver() const { return constraints_.solver(); }
  void set_constraint_settings(const ProximalSettings& settings) { constraints_.set_settings(settings); }
  const ProximalSettings& constraint_settings() const { return constraints_.settings(); }
  static constexpr double default_constraint_penalty() { return ConstraintSolving<L>::default_penalty(); }
  // Per environment, the last call's loop solves: the most iterations one took, the largest residual.
  const std::vector<int>& constraint_iterations() const { return constraints_.iterations(); }
  const std::vector<T>& constraint_residual() const { return constraints_.residual(); }
  // Per environment: 1 where the stopping test ended every solve of the last call, 0 where the cap did.
  const std::vector<std::uint8_t>& constraint_converged() const { return constraints_.converged(); }
  // Loop stabilisation in step() of the constraints whose spec gives no gains, and the drift
  // tolerance (batch/loop_stabilisation.hpp). Throws Error for values check_loop_stabilisation refuses.
  void set_loop_stabilisation(const LoopStabilisationSettings& settings) { stabilisation_.set_settings(settings); }
  const LoopStabilisationSettings& loop_stabilisation() const { return stabilisation_.settings(); }
  // The gains (kp, kd) step() gives those constraints at substep h, with the integrator set now.
  std::pair<double, double> loop_stabilisation_gains(double h) const { return stabilisation_.gains(h, stabilisation_.velocity_level(integrator_ == Integrator::SemiImplicitEuler)); }
  // Per environment, the largest loop position error (m, rad) the last step solved at (0 when not measured).
  const std::vector<T>& loop_drift() const { return constraints_.drift(); }
  const T* constraint_forces() const { return constraints_.multipliers(); }  // N x m
  const LcabaPlan& lcaba_plan() const { return constraints_.lcaba_plan(); }
  const ProxBboPlan& proxbbo_plan() const { return constraints_.proxbbo_plan(); }
  int constraint_rows() const { return model_.constraint_rows; }

  // --- Contact (batch/contact_solving.hpp, docs/contact.md): in step() only; on by default for a model with
  // candidates and a ground (or pairs) and no loop constraints (with them, its loops are rows of the problem) ---
  void set_contacts(bool on) { contacts_.set_enabled(on); }
  bool contacts() const { return contacts_.active(); }
  // The stage's settings. Throws Error for settings check_contact_settings refuses.
  void set_contact_settings(const ContactSettings& settings) { contacts_.set_settings(settings); }
  const ContactSettings& contact_settings() const { return contacts_.settings(); }
  int contact_candidates() const { return contacts_.candidates(); }
  // Whether step() runs the contact stage: contacts and / or joint limits.
  bool contact_stage_runs() const { return contacts_.runs(); }
  // Room for `contacts` contacts in the contact problem of a lane block (the union of its W
  // environments' contacts; contact_candidates() or more: every case), in every thread's
  // workspace, now and as threads join. Without it the problem starts with room for a few and a
  // step that meets a larger one than any before allocates once (docs/contact.md, "Memory"): for
  // a real-time loop that must not allocate after its first step. Never shrinks the room.
  // Throws Error for contacts < 0.
  void reserve_contacts(int contacts) {
    if (contacts < 0) throw Error("Batch::reserve_contacts: contacts must be >= 0, got " + std::to_string(contacts));
    reserved_contacts_ = std::max(reserved_contacts_, contacts);
    for (BlockWorkspace<L>& ws : workspaces_)
      if (ws.contact_lanes) ws.contact_lanes->state.reserve_problem(reserved_contacts_);
  }
  // Per environment: the plane n . x = height, one friction coefficient. Throw Error for a bad index or value.
  void set_ground(std::span<const int> envs, double height, const Vec3d& normal) { contacts_.set_ground(envs, height, normal); }
  void set_friction(std::span<const int> envs, double mu) { contacts_.set_friction(envs, mu); }
  double ground_height(int env) const { return contacts_.ground_height(env_index("ground_height", env, n_)); }
  Vec3d ground_normal(int env) const { return contacts_.ground_normal(env_index("ground_normal", env, n_)); }
  // Terrain (kernels/contact/terrain.hpp): a height field replacing the plane, shared, then per environment on
  // its grid (nx * ny values, row j = y). Throw Error for a bad field, count or height, or no ground.
  void set_terrain(const HeightField& field) { contacts_.set_terrain(field); }
  void set_terrain_heights(std::span<const int> envs, std::span<const double> heights) { contacts_.set_terrain_heights(envs, heights); }
  void clear_terrain() { contacts_.clear_terrain(); }
  const HeightField& terrain() const { return contacts_.terrain(); }    // its grid; nx = 0: none
  const T* terrain_heights(int env) const { return contacts_.terrain_heights(env); }  // nx * ny, nullptr without a terrain
  double friction(int env, int candidate) const { return contacts_.friction(env_index("friction", env, n_), candidate); }
  // The last step's contact results (its last substep), env-major, C = contact_candidates():
  const T* contact_forces() const { return contacts_.forces(); }      // N x C x 3, world frame, N
  const T* contact_impulses() const { return contacts_.impulses(); }  // N x C x 3 (normal, tangent 1, tangent 2), N s
  const T* contact_gaps() const { return contacts_.gaps(); }          // N x C, m, at the last substep's start (+inf before a step)
  const std::uint8_t* contact_flags() const { return contacts_.in_contact(); }  // N x C bytes, 1 when the candidate was in the problem
  const std::vector<int>& contact_iterations() const { return contacts_.iterations(); }
  const std::vector<T>& contact_residual() const { return contacts_.residual(); }
  const ContactPlan& contact_plan() const { return contacts_.plan(); }

  // --- Per-environment parameters (batch/env_parameters.hpp): domain randomisation ---
  // Per body of the listed environments: masses (one each), centres of mass (3 each) and
  // rotational inertias (3 x 3 each), checked as a URDF's; gravity (3 each); damping, armature and
  // motor strength (nv each; the strength multiplies the actuation stage's torque before the clamp).
  // Throw Error for bad values, or with the dense constraint solver (it reads the model).
  void set_body_inertia(std::span<const int> envs, int body, std::span<const double> mass, std::span<const double> com,
                        std::span<const double> rotational_inertia) {
    constraints_.require_per_env_parameters("set_body_inertia"), parameters_.set_body_inertia(envs, body, mass, com, rotational_inertia);
  }
  void set_gravity(std::span<const int> envs, std::span<const double> g) { constraints_.require_per_env_parameters("set_gravity"), parameters_.set_gravity(envs, g); }
  void set_damping(std::span<const int> envs, std::span<const double> d) { constraints_.require_per_env_parameters("set_damping"), parameters_.set_damping(envs, d); }
  void set_armature(std::span<const int> envs, std::span<const double> a) { constraints_.require_per_env_parameters("set_armature"), parameters_.set_armature(envs, a); }
  void set_motor_strength(std::span<const int> envs, std::span<const double> s) {
    constraints_.require_per_env_parameters("set_motor_strength"), parameters_.set_motor_strength(envs, s);
  }
  void reset_parameters() { parameters_.disable(); }  // back to the model's for every environment
  bool per_env_parameters() const { return parameters_.enabled(); }
  // Environment e's current values (the model's when not set).
  RigidInertiad body_inertia(int env, int body) const { return parameters_.inertia(env_index("body_inertia", env, n_), body); }
  Vec3d gravity(int env) const { return parameters_.gravity(env_index("gravity", env, n_)); }
  double damping(int env, int dof) const { return parameters_.damping(env_index("damping", env, n_), dof); }
  double armature(int env, int dof) const { return parameters_.armature(env_index("armature", env, n_), dof); }
  double motor_strength(int env, int dof) const { return parameters_.motor_strength(env_index("motor_strength", env, n_), dof); }

  // --- Observations (batch/observations.hpp): N x k x 13 world poses and velocities of frames ---
  void set_observed_frames(const std::vector<std::string>& names) {
    observations_.set_frames(names);
    workspaces_.clear();  // their observation outputs are sized for the frames
  }
  const std::vector<std::string>& observed_frames() const { return observations_.frames(); }
  int observation_size() const { return observations_.size(); }
  // Fills observations() at the current q, v. A bad state gives NaN rows and its status.
  // Throws Error before set_observed_frames.
  void observe() {
    if (observations_.frames().empty()) throw Error("Batch::observe: no frames chosen (call set_observed_frames first)");
    run([&](int block, BlockWorkspace<L>& ws, bool* valid) {
      observations_.observe(parameters_.block_constants(block, ws.constants, ws.inertia_tables), ws);
      io_.scatter(block, valid, ws.observation_out.data(), observations_.size(), observations_.output());
    }, {q_, v_, tau_, nullptr});
  }
  const T* observations() const { return observations_.output(); }
  void use_observation_buffer(std::span<T> out) { observations_.use_buffer(out); }

  // --- Sensors (batch/sensors.hpp): the robot file's <sensor> readings, N x sensordata_size ---
  int sensordata_size() const { return sensors_.size(); }
  // Fills sensordata() at the current q, v, the last qdd() and actuator_torques() (MJCF sensors:
  // jointpos, jointvel, framepos, framequat, framelinvel, frameangvel, gyro, velocimeter,
  // accelerometer, jointactuatorfrc; touch: the last step's contact forces, 0 before a step, after
  // a reset and with contacts off). A bad state gives NaN rows and its status. Throws Error for
  // a model without sensors.
  void sense() {
    if (sensors_.size() == 0) throw Error("Batch::sense: model '" + model_.name + "' has no sensors the engine computes (MJCF <sensor>)");
    // The accelerations ride in the gather's tau slot, the joint torques in its target slot: the
    // accelerometer and jointactuatorfrc read them there.
    run([&](int block, BlockWorkspace<L>& ws, bool* valid) {
      sensors_.sense(parameters_.block_constants(block, ws.constants, ws.inertia_tables), ws);
      io_.scatter(block, valid, ws.sensor_out.data(), sensors_.size(), sensors_.output());
      if (sensors_.has_touch()) sensors_.write_touch(block, valid, contacts_.touch());  // the last step's contacts
    }, {q_, v_, qdd_, sensors_.plan().joint_torques ? actuation_.actuator_torques() : nullptr});
  }
  const T* sensordata() const { return sensors_.output(); }
  void use_sensor_buffer(std::span<T> out) { sensors_.use_buffer(out); }

  // --- Delassus matrices (batch/delassus_matrices.hpp) ---
  // G = J M^{-1} J^T at every environment's q (only q is read), with its own parameters, m x m
  // row-major per environment, into delassus_matrices(); with delassus_cholesky also the lower
  // factor L L^T = G + rho I into delassus_factors(). A bad q gets NaN and its status. Throw
  // Error for a model without constraints, or rho <= 0.
  void delassus(DelassusAlgorithm algorithm = Algorithm::PvOsimr) { compute_delassus("Batch::delassus", algorithm, std::nullopt); }
  void delassus_cholesky(T rho, DelassusAlgorithm algorithm = Algorithm::PvOsimr) {
    if (!(rho > T(0))) throw Error("Batch::delassus_cholesky: the damping rho must be > 0, got " + std::to_string(rho));
    compute_delassus("Batch::delassus_cholesky", algorithm, rho);
  }
  const T* delassus_matrices() const { return delassus_.matrices(); }  // N x m x m
  const T* delassus_factors() const { return delassus_.factors(); }    // empty before delassus_cholesky
  void use_delassus_buffer(std::span<T> G) { delassus_.use_buffer(G); }
  const DelassusPlan& delassus_plan() const { return delassus_.plan(); }

  // --- Status (batch/block_io.hpp) ---
  const std::vector<EnvStatus>& status() const { return io_.status(); }
  int failed_count() const { return static_cast<int>(std::count_if(status().begin(), status().end(), [](EnvStatus s) { return s != EnvStatus::Ok; })); }
  // "environment e: ..." naming the entry at fault.
  std::string status_message(int env) const { return io_.status_message(model_, env); }

  // --- Resets and saved states (batch/env_states.hpp): the listed environments get their new
  // state and the status of that state; the others are untouched. Throw Error, changing
  // nothing, for a bad index, count or size ---
  // The reference configuration (reference_configuration()) at rest.
  void reset(std::span<const int> envs) { states().reset(envs); }
  // A random draw per environment that depends only on (seed, e) (Resets::random_state; with
  // loop constraints on, moved onto the loops).
  void reset(std::span<const int> envs, std::uint64_t seed, std::optional<double> noise = std::nullopt, double velocity_noise = 0.0) { states().reset(envs, seed, noise, velocity_noise); }
  // A seed per listed environment (each listed once): the draw depends on that seed alone
  // (Gymnasium's seeds per sub-environment).
  void reset(std::span<const int> envs, std::span<const std::uint64_t> seeds, std::optional<double> noise = std::nullopt, double velocity_noise = 0.0) { states().reset(envs, seeds, noise, velocity_noise); }
  // Given states: q_rows is envs.size() x nq, v_rows envs.size() x nv (row k for envs[k]).
  void reset(std::span<const int> envs, std::span<const T> q_rows, std::span<const T> v_rows) { states().reset(envs, q_rows, v_rows); }
  // Saved states, envs.size() x state_size(): q, v and the solvers' warm starts, everything step()
  // reads besides tau, the targets and the parameters: a restored environment continues bitwise.
  int state_size() const { return const_cast<BatchEngine*>(this)->states().state_size(); }
  void get_state(std::span<const int> envs, std::span<T> rows) { states().get_state(envs, rows); }
  void set_state(std::span<const int> envs, std::span<const T> rows) { states().set_state(envs, rows); }
  void set_reference_configuration(std::span<const T> q) { resets_.set_reference_configuration(q); }
  const std::vector<T>& reference_configuration() const { return resets_.reference_configuration(); }

  // Bytes of kernel workspace and gathered state of one lane block, and per environment.
  size_t block_workspace_bytes() const { return make_workspace().bytes(); }
  double workspace_bytes_per_env() const { return static_cast<double>(block_workspace_bytes()) / W; }

 private:
  static const Model& checked(const Model& model, int num_envs) {
    if (num_envs < 1) throw Error("Batch: need at least one environment, got " + std::to_string(num_envs));
    require_regular(model, find_singular_joints(model), "Batch");
    return model;
  }
  BlockWorkspace<L> make_workspace() const {
    return {model_, constants_, delassus_.plan(), constraints_.lcaba_plan(), constraints_.proxbbo_plan(), contacts_.plan(), observations_.size(),
            sensors_.size(), reserved_contacts_};
  }
  EnvStates<L> states() { return {model_, n_, q_, v_, tau_, qdd_, resets_, actuation_, constraints_, contacts_, io_, arena_}; }
  void compute_delassus(const char* who, DelassusAlgorithm algorithm, std::optional<T> rho) {
    delassus_.require(who, algorithm);
    T* factors = rho ? delassus_.factors() : nullptr;
    run([&](int block, BlockWorkspace<L>& ws, bool* valid) {
      delassus_.compute(parameters_.block_constants(block, ws.constants, ws.inertia_tables), ws, algorithm);
      io_.scatter(block, valid, ws.G.data(), delassus_.size(), delassus_.matrices());
      if (rho) delassus_.factor(ws, *rho), io_.scatter(block, valid, ws.factor.data(), delassus_.size(), factors);
    }, {q_, nullptr, nullptr, nullptr});
  }

  // The stages of forward_dynamics() and step() on one lane block (check is run's gather).
  void run_dynamics(bool integrate, T dt, int substeps) {
    constraints_.set_drift_check(integrate ? stabilisation_.settings().drift_tolerance : std::numeric_limits<double>::infinity());
    constraints_.set_plateau_tolerance(integrate ? stabilisation_.settings().plateau_tolerance : constraints_.settings().plateau_tolerance);
    run([&](int block, BlockWorkspace<L>& ws, bool* valid) {
      const L h(dt / static_cast<T>(substeps));
      const bool damped = passive_.active(parameters_);
      const ModelConstants<L>& own = parameters_.block_constants(block, ws.constants, ws.inertia_tables);
      const ModelConstants<L>& with_damping = integrate && damped ? passive_.implicitly_damped(own, ws, h) : own;
      const ModelConstants<L>& c = constraints_.active() ? stabilisation_.apply(with_damping, ws, integrate) : with_damping;  // stabilise
      const bool contact = integrate && contacts_.runs();  // contacts and / or joint limits
      const LoopRows loop_rows = contacts_.loop_rows(constraints_.active());
      const bool loops_in_contact = contact && loop_rows == LoopRows::Solve;  // the loops as contact rows, not the loop solver's
      if (constraints_.active()) constraints_.warm_start(block, ws, valid), constraints_.begin_report(block, valid);
      if (contact) contacts_.load(block, ws, valid);
      const auto evaluate = [&] {
        actuation_.actuate(ws, parameters_.block_motor_strength(block));  // actuate
        if (damped) passive_.apply(c, ws, integrate ? &h : nullptr);  // passive forces
        compute_accelerations(constraints_, block, c, ws, valid, loops_in_contact, stabilisation_.model(integrate));  // accelerations
      };
      const bool runge_kutta = integrate && integrator_ == Integrator::RungeKutta4;
      const bool aba_at_q = accelerations_by_aba(constraints_, loops_in_contact);
      for (int s = 0; s < substeps; ++s) {
        if (runge_kutta) runge_kutta_evaluations(constants_.tree, ws, h, evaluate);  // four stages of the above
        else evaluate();
        if (contact) contacts_.solve(c, ws, h, loop_rows, aba_at_q && !runge_kutta);  // contact
        if (runge_kutta) integrate_runge_kutta_substep(constants_.tree, ws, h);  // integrate
        else if (integrate) integrate_substep(constants_.tree, ws, h);
      }
      if (integrate) {  // a state that overflowed in this step is reported now and not written
        io_.mark_non_finite(block, valid, ws.q.data(), model_.nq);
        io_.mark_non_finite(block, valid, ws.v.data(), model_.nv);
      }
      io_.scatter(block, valid, ws.qdd.data(), model_.nv, qdd_);  // scatter
      io_.scatter(block, valid, ws.actuator_torque.data(), model_.nv, actuation_.actuator_torques());
      if (constraints_.active()) {
        constraints_.store_multipliers(block, io_, ws, valid);
        if (!loops_in_contact) constraints_.report(block, io_, valid);
      }
      if (!integrate) return;
      if (contact) contacts_.store(block, io_, ws, valid);
      if (loops_in_contact) constraints_.store_report(block, valid, contacts_.iterations(), contacts_.residual());
      io_.write_rows(block, valid, ws.q.data(), model_.nq, q_);
      io_.write_rows(block, valid, ws.v.data(), model_.nv, v_);
    }, {q_, v_, tau_, actuation_.target_rows(), actuation_.ctrl_rows()});
  }

  // Every lane block through `kernel(block, workspace, valid)` after gathering (and checking)
  // its rows, lane blocks spread over the arena's threads.
  template <class Kernel>
  void run(Kernel&& kernel, const EnvRows<T>& rows) {
    const int grain = std::max(1, 16 / W);  // a few lane blocks per task: scheduling stays small next to the kernel
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, num_blocks(), grain), [&](const tbb::blocked_range<int>& range) {
        BlockWorkspace<L>& ws = workspaces_.local();
        for (int b = range.begin(); b != range.end(); ++b) {
          bool valid[W];
          io_.gather(b, rows, ws, valid);
          kernel(b, ws, valid);
        }
      });
    });
  }

  const Model model_;
  int n_;
  ModelConstants<L> constants_;
  T *q_ = nullptr, *v_ = nullptr, *tau_ = nullptr, *qdd_ = nullptr;
  BlockIO<L> io_;
  Actuation<L> actuation_;
  PassiveForces<L> passive_;
  LoopStabilisation<L> stabilisation_;
  ConstraintSolving<L> constraints_;
  ContactSolving<L> contacts_;
  EnvParameters<L> parameters_;
  Observations<L> observations_;
  Sensors<L> sensors_;
  DelassusMatrices<L> delassus_;
  Resets<T> resets_;
  OwnedRows<T> owned_;  // the rows until use_buffers points q_, v_, tau_, qdd_ elsewhere
  Integrator integrator_ = Integrator::SemiImplicitEuler;
  ThreadArena arena_;
  int reserved_contacts_ = ContactLanes<L>::kFirstProblemContacts;  // the room a new workspace's contact problem starts with
  tbb::enumerable_thread_specific<BlockWorkspace<L>> workspaces_;
};

// The product: SIMD lanes of the widest instruction set the build targets.
template <class T>
using Batch = BatchEngine<SimdLane<T>>;
// W = 1: the same engine and kernel on plain scalars (reference / baseline).
template <class T>
using ScalarBatch = BatchEngine<T>;

}  // namespace batchdyn
