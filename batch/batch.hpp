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
// This file is the facade: N, the buffers, the thread arena, run() and the order of the stages.
// step() reads like MuJoCo's mj_step, one file per stage:
//   check           batch/block_io.hpp            gather a lane block, validate each environment
//   actuate         batch/actuation.hpp           tau (+ PD), clamped to the effort limits
//   passive forces  batch/passive_forces.hpp      joint damping -d qd (implicit in step)
//   accelerations   batch/accelerations.hpp       ABA, or the constraint solver (batch/constraint_solving.hpp)
//   contact         batch/contact_solving.hpp     (step only) ground contact and joint limits: qdd that steps to the post-contact velocity
//   integrate       batch/integration.hpp         v += h qdd, q = q ⊕ h v (or RK4: actuate..accelerations four times)
//   scatter         batch/block_io.hpp            results back to the rows; a non-finite one marks its environment
// with the per-environment parameters (batch/env_parameters.hpp), resets (batch/resets.hpp),
// observations (batch/observations.hpp) and Delassus matrices (batch/delassus_matrices.hpp)
// beside them. Lane e % W of block e / W is environment e whatever N and the thread count, and
// lanes never mix, so results are bitwise identical for any thread count and any N. A bad
// environment is replaced by the neutral state inside its lane, its outputs are NaN, its state
// is not stepped, and the others are unaffected.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
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
#include "batch/integration.hpp"
#include "batch/observations.hpp"
#include "batch/loop_stabilisation.hpp"
#include "batch/passive_forces.hpp"
#include "batch/resets.hpp"
#include "kernels/algorithms.hpp"
#include "kernels/singular_joints.hpp"

namespace batchdyn {

// The solver choice of the constrained dynamics: an Algorithm of the registry that solves
// constraints (ConstraintSolver::Lcaba, ::ProxBbo, ::Constrained; ::Dense is the last one's former name).
using ConstraintSolver = Algorithm;

template <class L>
class BatchEngine {
 public:
  using Lane = L;
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;
  using DelassusAlgorithm = Algorithm;  // PvOsimr or PvOsim
  using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  // N environments of `model` (copied), owning their buffers: q at the model's reference
  // configuration (a constraint file's "reference_q", else neutral), zero v, tau, qdd.
  // threads = 0 uses every core oneTBB sees. Throws Error for N < 1 or a model with singular
  // joints (kernels/singular_joints.hpp).
  BatchEngine(const Model& model, int num_envs, int threads = 0)
      : model_(checked(model, num_envs)), n_(num_envs), constants_(model_), io_(model_, n_), actuation_(model_, n_),
        passive_(model_), stabilisation_(model_), constraints_(model_, n_), contacts_(model_, n_), parameters_(model_, constants_, n_), observations_(model_, n_),
        delassus_(model_, n_), resets_(model_, io_.neutral()), workspaces_([this] { return make_workspace(); }) {
    if (!model_.reference_configuration.empty()) {
      const std::vector<T> reference(model_.reference_configuration.begin(), model_.reference_configuration.end());
      resets_.set_reference_configuration(reference);
    }
    owned_q_.resize(static_cast<size_t>(n_) * model_.nq);
    const std::vector<T>& start = resets_.reference_configuration();
    for (int e = 0; e < n_; ++e) std::copy(start.begin(), start.end(), owned_q_.begin() + static_cast<long>(e) * model_.nq);
    owned_v_.assign(static_cast<size_t>(n_) * model_.nv, T(0));
    owned_tau_ = owned_qdd_ = owned_v_;
    q_ = owned_q_.data(), v_ = owned_v_.data(), tau_ = owned_tau_.data(), qdd_ = owned_qdd_.data();
    set_threads(threads);
  }
  BatchEngine(const BatchEngine&) = delete;  // the stages and per-thread workspaces refer to this engine
  BatchEngine& operator=(const BatchEngine&) = delete;

  int num_envs() const { return n_; }
  int num_blocks() const { return (n_ + W - 1) / W; }
  const Model& model() const { return model_; }

  // Worker threads (0 = all cores oneTBB sees), from the next call on, at most max_threads(). The
  // arena is rebuilt (an initialised arena ignores a new size) and the per-thread workspaces are
  // released. Throws Error for a count out of range.
  void set_threads(int threads) {
    check_thread_count("Batch", threads, max_threads());
    threads_ = threads == 0 ? tbb::this_task_arena::max_concurrency() : threads;
    if (arena_.is_active()) arena_.terminate();
    arena_.initialize(threads_);
    workspaces_.clear();
  }
  int threads() const { return threads_; }
  // The largest thread count set_threads accepts: max(256, 8 x the cores oneTBB sees).
  static int max_threads() { return std::max(256, 8 * tbb::this_task_arena::max_concurrency()); }
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
  // Uses the caller's arrays instead of the owned ones (no copy; they must outlive the calls).
  // Throws Error naming the buffer whose size is not N x nq / N x nv.
  void use_buffers(std::span<T> q, std::span<T> v, std::span<T> tau, std::span<T> qdd) {
    check_buffer_size("q", q.size(), n_, model_.nq, "nq");
    check_buffer_size("v", v.size(), n_, model_.nv, "nv");
    check_buffer_size("tau", tau.size(), n_, model_.nv, "nv");
    check_buffer_size("qdd", qdd.size(), n_, model_.nv, "nv");
    q_ = q.data(), v_ = v.data(), tau_ = tau.data(), qdd_ = qdd.data();
  }

  // --- The calls ---
  // qdd = FD(q, v, tau_applied) for every environment: check, actuate, passive forces,
  // accelerations, scatter (see the top of the file). Updates status().
  void forward_dynamics() { run_dynamics(/*integrate=*/false, T(0), 1); }

  // One control step of length dt in `substeps` substeps of h = dt / substeps (decimation),
  // each: actuate (PD from that substep's q, qd), passive forces (damping integrated
  // implicitly, batch/passive_forces.hpp), accelerations, contact, integrate — with the
  // integrator of set_integrator (semi-implicit Euler by default; RK4 evaluates the first three
  // stages four times). qdd() holds the last substep's (v+ = v + h qdd). Environments whose
  // status is not Ok keep their state.
  // Throws Error for dt or substeps that check_time_step refuses (dt > 0 finite, h <= 1 s).
  void step(T dt, int substeps = 1) {
    check_time_step("Batch::step", static_cast<double>(dt), substeps);
    stabilisation_.prepare(static_cast<double>(dt) / substeps, integrator_ == Integrator::SemiImplicitEuler);
    run_dynamics(/*integrate=*/true, dt, substeps);
  }

  // --- Integration (batch/integration.hpp): semi-implicit Euler (default, one evaluation of the
  // dynamics per substep) or RK4 (four; keeps a passive, undamped model's energy bounded where
  // Euler can blow up). forward_dynamics() does not integrate and is unaffected ---
  void set_integrator(Integrator integrator) { integrator_ = integrator; }
  Integrator integrator() const { return integrator_; }

  // --- Passive forces (batch/passive_forces.hpp): joint damping -d qd, on by default; off, the
  // dynamics as Pinocchio defines it (what the reference functions and `batchdyn eval` compute) ---
  void set_passive_forces(bool on) { passive_.set_enabled(on); }
  bool passive_forces() const { return passive_.enabled(); }

  // --- Actuation (batch/actuation.hpp) ---
  void set_control_mode(ControlMode mode) { actuation_.set_control_mode(mode); }
  ControlMode control_mode() const { return actuation_.control_mode(); }
  void set_pd_gains(std::span<const double> kp, std::span<const double> kd) { actuation_.set_pd_gains(kp, kd); }
  const std::vector<double>& kp() const { return actuation_.kp(); }
  const std::vector<double>& kd() const { return actuation_.kd(); }
  void set_effort_limits(std::span<const double> limits) { actuation_.set_effort_limits(limits); }
  void remove_effort_limits() { actuation_.remove_effort_limits(); }
  const std::vector<double>& effort_limits() const { return actuation_.effort_limits(); }
  T* target() { return actuation_.target(); }  // N x nv PD position targets
  void use_target_buffer(std::span<T> target) { actuation_.use_target_buffer(target); }

  // --- Constraint solving (batch/constraint_solving.hpp) ---
  void set_use_constraints(bool on) { constraints_.set_enabled(on); }
  bool constrained() const { return constraints_.active(); }
  // Throws Error for an algorithm that solves no constraints, or the dense solver with
  // per-environment parameters set.
  void set_constraint_solver(ConstraintSolver solver) { constraints_.set_solver(solver, parameters_.enabled()); }
  ConstraintSolver constraint_solver() const { return constraints_.solver(); }
  void set_constraint_settings(const ProximalSettings& settings) { constraints_.set_settings(settings); }
  const ProximalSettings& constraint_settings() const { return constraints_.settings(); }
  static constexpr double kDefaultLcabaPenalty = algorithm_traits(Algorithm::Lcaba).default_mu;
  static constexpr double default_constraint_penalty() { return ConstraintSolving<L>::default_penalty(); }
  // Per environment, the last call's loop solves (each substep's, each Runge-Kutta stage's):
  // the most iterations one took and the largest residual.
  const std::vector<int>& constraint_iterations() const { return constraints_.iterations(); }
  const std::vector<T>& constraint_residual() const { return constraints_.residual(); }
  // Per environment: 1 where the stopping test ended every solve of the last call, 0 where the
  // iteration cap ended one (then status() says EnvStatus::ConstraintNotConverged).
  const std::vector<std::uint8_t>& constraint_converged() const { return constraints_.converged(); }
  // Loop stabilisation in step() (batch/loop_stabilisation.hpp), for the constraints whose spec
  // gives no gains: with semi-implicit Euler velocity-level rows J v+ = -e / T (the default),
  // with RK4 or velocity_level = false Baumgarte gains (damping ratio 1 by default); T = max(time
  // constant (0.02 s by default; 0: no position term / off), 2 h). And the drift tolerance of
  // EnvStatus::LoopDrift (0.01 m / rad; infinity: not checked). Throws Error for values
  // check_loop_stabilisation refuses.
  void set_loop_stabilisation(const LoopStabilisationSettings& settings) { stabilisation_.set_settings(settings); }
  const LoopStabilisationSettings& loop_stabilisation() const { return stabilisation_.settings(); }
  // The gains (kp, kd) step(dt, substeps) gives those constraints at substep h = dt / substeps,
  // with the integrator set now (velocity level: (1/(h T), 1/h)).
  std::pair<double, double> loop_stabilisation_gains(double h) const {
    return stabilisation_.gains(h, stabilisation_.velocity_level(integrator_ == Integrator::SemiImplicitEuler));
  }
  // Per environment, the largest loop position error (m, rad) at the states the last step solved
  // at (each substep's start; RK4's stage states too), with the recursive or dense loop solver
  // (0 when not measured).
  const std::vector<T>& loop_drift() const { return constraints_.drift(); }
  const T* constraint_forces() const { return constraints_.multipliers(); }  // N x m
  const LcabaPlan& lcaba_plan() const { return constraints_.lcaba_plan(); }
  const ProxBboPlan& proxbbo_plan() const { return constraints_.proxbbo_plan(); }
  int constraint_rows() const { return model_.constraint_rows; }

  // --- Contact (batch/contact_solving.hpp): the model's contact candidates against the ground
  // and each other, in step() only; on by default for a model with candidates and a ground (or
  // pairs) and no loop constraints (set_contacts(true) turns them on there). With loop
  // constraints on, the loops are then bilateral rows of the contact problem
  // (constraint_forces() are then its loop impulses / h; constraint_iterations() and
  // constraint_residual() the contact solver's) ---
  void set_contacts(bool on) { contacts_.set_enabled(on); }
  bool contacts() const { return contacts_.active(); }
  // The stage's settings; joint_limits (on by default) makes the 1-dof joints' position limits
  // unilateral rows of the same problem, with or without contacts (with loop constraints on and
  // no contacts to solve: after the loop solver, with rows that keep its loops; their reactions
  // are added to constraint_forces(), their iterations are contact_iterations()).
  // Throws Error for settings check_contact_settings refuses.
  void set_contact_settings(const ContactSettings& settings) { contacts_.set_settings(settings); }
  const ContactSettings& contact_settings() const { return contacts_.settings(); }
  int contact_candidates() const { return contacts_.candidates(); }
  // Whether step() runs the contact stage: contacts (contacts()) and / or joint limits
  // (contact_settings().joint_limits on a model with limited joints).
  bool contact_stage_runs() const { return contacts_.runs(); }
  // Per environment: the ground plane n . x = height (n normalised) and one friction coefficient
  // for all candidates. Throw Error for an environment out of range or a bad value.
  void set_ground(std::span<const int> envs, double height, const Vec3d& normal) { contacts_.set_ground(envs, height, normal); }
  void set_friction(std::span<const int> envs, double mu) { contacts_.set_friction(envs, mu); }
  double ground_height(int env) const {
    check_env("ground_height", env, n_);
    return contacts_.ground_height(env);
  }
  Vec3d ground_normal(int env) const {
    check_env("ground_normal", env, n_);
    return contacts_.ground_normal(env);
  }
  // Terrain (kernels/terrain.hpp): a height field z = h(x, y) that replaces the plane, shared
  // by every environment (set_terrain; a contact file's "terrain" sets it at construction), then
  // optionally with heights per environment on the same grid (set_terrain_heights: nx * ny
  // values, row j = y index). clear_terrain returns to the plane. Throw Error for a bad field,
  // a wrong count, a non-finite height or a model without a ground.
  void set_terrain(const HeightField& field) { contacts_.set_terrain(field); }
  void set_terrain_heights(std::span<const int> envs, std::span<const double> heights) { contacts_.set_terrain_heights(envs, heights); }
  void clear_terrain() { contacts_.clear_terrain(); }
  const HeightField& terrain() const { return contacts_.terrain(); }    // its grid; nx = 0: none
  const T* terrain_heights(int env) const { return contacts_.terrain_heights(env); }  // nx * ny, nullptr without a terrain
  double friction(int env, int candidate) const {
    check_env("friction", env, n_);
    if (candidate < 0 || candidate >= contacts_.candidates()) throw Error("Batch::friction: candidate " + std::to_string(candidate) + " out of range");
    return contacts_.friction(env, candidate);
  }
  // The last step's contact results (its last substep), env-major, C = contact_candidates():
  const T* contact_forces() const { return contacts_.forces(); }      // N x C x 3, world frame, N
  const T* contact_impulses() const { return contacts_.impulses(); }  // N x C x 3 (normal, tangent 1, tangent 2), N s
  const T* contact_gaps() const { return contacts_.gaps(); }          // N x C, m, at the step's start
  const T* contact_flags() const { return contacts_.in_contact(); }   // N x C, 1 when within the margin
  const std::vector<int>& contact_iterations() const { return contacts_.iterations(); }
  const std::vector<T>& contact_residual() const { return contacts_.residual(); }
  const ContactPlan& contact_plan() const { return contacts_.plan(); }

  // --- Per-environment parameters (batch/env_parameters.hpp): domain randomisation ---
  void set_body_inertia(std::span<const int> envs, int body, std::span<const double> mass, std::span<const double> com,
                        std::span<const double> rotational_inertia) {
    constraints_.require_per_env_parameters("set_body_inertia");
    parameters_.set_body_inertia(envs, body, mass, com, rotational_inertia);
  }
  void set_gravity(std::span<const int> envs, std::span<const double> gravity) {
    constraints_.require_per_env_parameters("set_gravity");
    parameters_.set_gravity(envs, gravity);
  }
  void set_damping(std::span<const int> envs, std::span<const double> damping) {
    constraints_.require_per_env_parameters("set_damping");
    parameters_.set_damping(envs, damping);
  }
  void set_armature(std::span<const int> envs, std::span<const double> armature) {
    constraints_.require_per_env_parameters("set_armature");
    parameters_.set_armature(envs, armature);
  }
  void reset_parameters() { parameters_.disable(); }  // back to the model's for every environment
  bool per_env_parameters() const { return parameters_.enabled(); }
  // Environment e's current values (the model's when not set).
  RigidInertiad body_inertia(int env, int body) const {
    check_env("body_inertia", env, n_);
    return parameters_.inertia(env, body);
  }
  Vec3d gravity(int env) const {
    check_env("gravity", env, n_);
    return parameters_.gravity(env);
  }
  double damping(int env, int dof) const {
    check_env("damping", env, n_);
    return parameters_.damping(env, dof);
  }
  double armature(int env, int dof) const {
    check_env("armature", env, n_);
    return parameters_.armature(env, dof);
  }

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

  // --- Delassus matrices (batch/delassus_matrices.hpp) ---
  // G = J M^{-1} J^T at every environment's q, with its own parameters, m x m row-major per
  // environment (rows as the model's constraint rows), into delassus_matrices(). Only q is read;
  // a bad q gets NaN and its status. Throws Error for a model without constraints.
  void delassus(DelassusAlgorithm algorithm = Algorithm::PvOsimr) {
    delassus_.require("Batch::delassus", algorithm);
    run([&](int block, BlockWorkspace<L>& ws, bool* valid) {
      delassus_.compute(parameters_.block_constants(block, ws.constants, ws.inertia_tables), ws, algorithm);
      io_.scatter(block, valid, ws.G.data(), delassus_.size(), delassus_.matrices());
    }, {q_, nullptr, nullptr, nullptr});
  }
  // delassus(), and the lower Cholesky factor L L^T = G + rho I per environment into
  // delassus_factors() (no pivoting: rho > 0 makes it positive definite even for redundant
  // rows). Throws Error unless rho > 0.
  void delassus_cholesky(T rho, DelassusAlgorithm algorithm = Algorithm::PvOsimr) {
    if (!(rho > T(0))) throw Error("Batch::delassus_cholesky: the damping rho must be > 0, got " + std::to_string(rho));
    delassus_.require("Batch::delassus_cholesky", algorithm);
    T* factors = delassus_.factors();
    run([&](int block, BlockWorkspace<L>& ws, bool* valid) {
      delassus_.compute(parameters_.block_constants(block, ws.constants, ws.inertia_tables), ws, algorithm);
      delassus_.factor(ws, rho);
      io_.scatter(block, valid, ws.G.data(), delassus_.size(), delassus_.matrices());
      io_.scatter(block, valid, ws.factor.data(), delassus_.size(), factors);
    }, {q_, nullptr, nullptr, nullptr});
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

  // --- Resets (batch/resets.hpp): the listed environments get their new state with zero torque,
  // acceleration and multipliers, and the status of that state (Ok unless it is not finite or a
  // quaternion is off); the others are untouched ---
  // The reference configuration (the model's reference_configuration, neutral unless the model
  // or set_reference_configuration gives one), at rest.
  void reset(std::span<const int> envs) {
    for (int e : envs) check_env("Batch::reset", e, n_);
    for (int e : envs) resets_.reference_state(q_row(e), v_row(e)), clear(e);
  }
  // A random draw per environment that depends only on (seed, e): see Resets::random_state
  // (with loop constraints on, moved onto the loops). Draws onto loops cost Gauss-Newton
  // iterations (about a millisecond for a humanoid), so they are spread over the threads.
  void reset(std::span<const int> envs, std::uint64_t seed, std::optional<double> noise = std::nullopt, double velocity_noise = 0.0) {
    Resets<T>::check_noise(noise, velocity_noise);
    for (int e : envs) check_env("Batch::reset", e, n_);
    std::vector<int> distinct(envs.begin(), envs.end());  // a repeated index is drawn once (same draw)
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    draw_states(distinct, [&](size_t k) { return std::pair{seed, static_cast<std::uint64_t>(distinct[k])}; }, noise, velocity_noise);
  }
  // A seed per listed environment (seeds[k] for envs[k], each environment listed once): the draw
  // depends on that seed alone, not on the environment's index, so environments given the same
  // seed start alike (Gymnasium's seeds per sub-environment). Otherwise as reset(envs, seed).
  void reset(std::span<const int> envs, std::span<const std::uint64_t> seeds, std::optional<double> noise = std::nullopt,
             double velocity_noise = 0.0) {
    Resets<T>::check_noise(noise, velocity_noise);
    if (seeds.size() != envs.size())
      throw Error("Batch::reset: " + std::to_string(seeds.size()) + " seeds for " + std::to_string(envs.size()) + " environments (one each)");
    for (int e : envs) check_env("Batch::reset", e, n_);
    std::vector<int> sorted(envs.begin(), envs.end());
    std::sort(sorted.begin(), sorted.end());
    if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      throw Error("Batch::reset: environment " + std::to_string(*twice) + " is listed twice with its own seeds");
    draw_states(envs, [&](size_t k) { return std::pair{seeds[k], std::uint64_t(0)}; }, noise, velocity_noise);
  }
  // Given states: q_rows is envs.size() x nq, v_rows envs.size() x nv (row k for envs[k]).
  void reset(std::span<const int> envs, std::span<const T> q_rows, std::span<const T> v_rows) {
    check_rows("Batch::reset", "q_rows", envs, q_rows, model_.nq);
    check_rows("Batch::reset", "v_rows", envs, v_rows, model_.nv);
    for (int e : envs) check_env("Batch::reset", e, n_);
    for (size_t k = 0; k < envs.size(); ++k) {
      std::copy_n(q_rows.data() + k * model_.nq, model_.nq, q_row(envs[k]));
      std::copy_n(v_rows.data() + k * model_.nv, model_.nv, v_row(envs[k]));
      clear(envs[k]);
    }
  }
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
    return {model_, constants_, delassus_.plan(), constraints_.lcaba_plan(), constraints_.proxbbo_plan(), contacts_.plan(), observations_.size()};
  }
  T* q_row(int e) { return q_ + static_cast<long>(e) * model_.nq; }
  T* v_row(int e) { return v_ + static_cast<long>(e) * model_.nv; }
  // Draws envs[k]'s state from seed_stream(k) = (seed, stream) (envs distinct), then clears what
  // a reset zeroes. Draws onto loops (Gauss-Newton, ~1 ms each) run in parallel over the arena's
  // threads; plain draws take about a microsecond, less than handing them to the arena.
  template <class SeedStream>
  void draw_states(std::span<const int> envs, SeedStream seed_stream, std::optional<double> noise, double velocity_noise) {
    const bool onto_loops = constraints_.active();
    const auto draw = [&](size_t k) {
      const auto [seed, stream] = seed_stream(k);
      resets_.random_state(seed, stream, noise, velocity_noise, onto_loops, q_row(envs[k]), v_row(envs[k]));
    };
    if (onto_loops) arena_.execute([&] { tbb::parallel_for(size_t(0), envs.size(), draw); });
    else for (size_t k = 0; k < envs.size(); ++k) draw(k);
    for (int e : envs) clear(e);
  }
  void clear(int e) {  // what a reset zeroes besides q and v
    std::fill_n(tau_ + static_cast<long>(e) * model_.nv, model_.nv, T(0));
    std::fill_n(qdd_ + static_cast<long>(e) * model_.nv, model_.nv, T(0));
    constraints_.clear_multipliers(e);
    contacts_.clear(e);
    io_.check_state(e, q_row(e), v_row(e));  // a non-finite draw or given state shows at once
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
        actuation_.actuate(ws);                                  // actuate
        if (damped) passive_.apply(c, ws);                       // passive forces
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
      if (constraints_.active()) {
        constraints_.store_multipliers(block, io_, ws, valid);
        if (!loops_in_contact) constraints_.report(block, io_, valid);
      }
      if (!integrate) return;
      if (contact) contacts_.store(block, io_, ws, valid, h);
      if (loops_in_contact) constraints_.store_report(block, valid, contacts_.iterations(), contacts_.residual());
      io_.write_rows(block, valid, ws.q.data(), model_.nq, q_);
      io_.write_rows(block, valid, ws.v.data(), model_.nv, v_);
    }, {q_, v_, tau_, actuation_.target_rows()});
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
  std::vector<T> owned_q_, owned_v_, owned_tau_, owned_qdd_;
  T *q_ = nullptr, *v_ = nullptr, *tau_ = nullptr, *qdd_ = nullptr;
  BlockIO<L> io_;
  Actuation<L> actuation_;
  PassiveForces<L> passive_;
  LoopStabilisation<L> stabilisation_;
  ConstraintSolving<L> constraints_;
  ContactSolving<L> contacts_;
  EnvParameters<L> parameters_;
  Observations<L> observations_;
  DelassusMatrices<L> delassus_;
  Resets<T> resets_;
  Integrator integrator_ = Integrator::SemiImplicitEuler;
  int threads_ = 1;
  tbb::task_arena arena_;
  tbb::enumerable_thread_specific<BlockWorkspace<L>> workspaces_;
};

// The product: SIMD lanes of the widest instruction set the build targets.
template <class T>
using Batch = BatchEngine<SimdLane<T>>;
// W = 1: the same engine and kernel on plain scalars (reference / baseline).
template <class T>
using ScalarBatch = BatchEngine<T>;

}  // namespace batchdyn
