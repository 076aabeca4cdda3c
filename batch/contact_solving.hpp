// Contact solving, the step() stage after the accelerations: frictional contact of the model's
// contact candidates (topology/contact_model.hpp) with the ground and between the geometries of
// contact pairs, by the lane kernel
// kernels/contact/frictional_contact.hpp (PV-OSIMr Delassus over the contact bodies, proximal ADMM per
// lane, or projected Gauss-Seidel as the baseline (ContactSettings::solver), warm-started from
// each environment's impulses of the previous step). Contacts are rigid, or compliant where a
// contact file gives a stiffness (a spring-damper normal, ContactModel::stiffness). It turns each
// substep's free accelerations into the ones that step to the post-contact velocity.
//
// On by default for a model with candidates that can touch something (a ground: a
// free-floating robot gets the plane z = 0; or a contact pair) and no loop constraints,
// switchable. Not in forward_dynamics() (contact is a time-stepping model: it needs h).
//
// Off by default on a model with loop constraints, whose default state may be infeasible for
// contact: Cassie's neutral pose stands in the ground (and had four joints 0.61 rad beyond
// limits that its loops tie together, where the limit and loop rows cannot all hold: those
// limits are left out now, topology/contact_plan.hpp limited_joints).
//
// A model with loop constraints (and the constraints on): a contact impulse must move the loops
// with the robot, so the loops become bilateral rows of the contact problem whenever this stage
// solves contacts (LoopRows::Solve, kernels/contact/frictional_contact.hpp), and the accelerations stage
// then gives the tree's free accelerations (ABA) instead of the loop solver's. The loop
// multipliers (impulse / h, the constraint forces) go back to the constraint stage's rows, its
// warm start. Only an independent subset of the loop rows is kept
// (kernels/loops/independent_loop_rows.hpp; a dependent row's force is zero, the same forces J^T lambda
// are reached by the others).
//
// Without contacts to solve, the loops stay with the loop solver (LCABA / proxBBO), and the joint
// limits act after it (LoopRows::Hold): a limit's impulse moves the robot along its loops (the
// loop rows keep the loop solver's loop velocities), and the loop forces gain the limits'
// reactions. A lane block with no limit within its margin costs one pass over the limited
// joints' coordinates, and a lane without one keeps the loop solver's qdd bit for bit. So a
// passive robot whose feet are welded folds onto its joint limits instead of through them.
//
// The ground is the plane, or a terrain (a height field, kernels/contact/terrain.hpp) shared by every
// environment or with heights per environment on one grid (rough-terrain RL).
//
// Per environment it keeps the ground (height and normal: domain randomisation), a friction
// coefficient for every candidate when one is set (else the model's per candidate), and the last step's results: impulses (the warm start),
// world-frame forces, gaps, contact flags, the solver's iterations and residual. An environment
// whose solver hit its iteration cap is stepped with the last iterate (inside the cones) and reported
// (EnvStatus::ContactNotConverged); one with a contact deeper than max_penetration is stepped and
// reported (EnvStatus::DeepPenetration).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "batch/argument_checks.hpp"
#include "batch/block_io.hpp"
#include "batch/block_workspace.hpp"
#include "kernels/contact/frictional_contact.hpp"
#include "kernels/contact/touch_sensors.hpp"
#include "kernels/loops/independent_loop_rows.hpp"
#include "topology/contacts.hpp"

namespace batchdyn {

template <class L>
class ContactSolving {
 public:
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  ContactSolving(const Model& model, int num_envs)
      : model_(model), n_(num_envs), plan_(plan_contacts(model)), candidates_(plan_.num_candidates()),
        can_collide_(model.contacts.can_collide()), enabled_(model.constraint_rows == 0),
        ground_height_(static_cast<size_t>(num_envs), static_cast<T>(model.contacts.ground.height)),
        ground_normal_(3 * static_cast<size_t>(num_envs)), model_friction_(static_cast<size_t>(candidates_)),
        own_friction_(static_cast<size_t>(num_envs), std::numeric_limits<T>::quiet_NaN()),
        impulses_(3 * static_cast<size_t>(num_envs) * candidates_, T(0)), forces_(impulses_.size(), T(0)),
        gaps_(static_cast<size_t>(num_envs) * candidates_, std::numeric_limits<T>::infinity()), in_contact_(gaps_.size(), 0),
        held_(static_cast<size_t>((num_envs + W - 1) / W) * candidates_, Held::Any), limit_impulses_(static_cast<size_t>(num_envs) * plan_.num_limited_joints(), T(0)),
        iterations_(static_cast<size_t>(num_envs), 0), residual_(static_cast<size_t>(num_envs), T(0)),
        touch_plan_(plan_touch(model)), touch_(static_cast<size_t>(num_envs) * touch_plan_.size(), T(0)),
        zero_row_(static_cast<size_t>(std::max({3 * candidates_, plan_.num_limited_joints(), 3})), T(0)) {
    for (const TouchPlan::Entry& s : touch_plan_.sensors) touch_placement_.push_back(cast_transform<L>(s.placement));
    settings_.max_iterations = 500;
    settings_.tolerance = default_tolerance();
    for (int e = 0; e < n_; ++e)
      for (int k = 0; k < 3; ++k) ground_normal_[static_cast<size_t>(3 * e + k)] = static_cast<T>(model.contacts.ground.normal[k]);
    for (int c = 0; c < candidates_; ++c) model_friction_[static_cast<size_t>(c)] = L(static_cast<T>(candidate_friction(c)));
    if (model.contacts.terrain.present()) set_terrain(model.contacts.terrain);
    // The loops as bilateral rows of a contact problem need independent rows (Cassie: 24 of rank
    // 22). Held loops (limits without contacts) are eliminated with damping instead.
    if (model.constraint_rows > 0 && can_collide_) plan_.loop_row_kept = independent_loop_rows(model);
  }

  // Whether step() solves contacts: on, with candidates that can touch (available()).
  bool active() const { return enabled_ && available(); }
  // Whether the stage runs: contacts, or joint limits (settings().joint_limits, a model with
  // limited 1-dof joints).
  bool runs() const { return active() || (settings_.joint_limits && plan_.num_limited_joints() > 0); }
  // How the stage takes the loop constraints (`constraints_on`: whether the model's loop
  // constraints are on): as rows it solves when it solves contacts, else as rows that hold the
  // loop solver's loop velocities while the limits act.
  LoopRows loop_rows(bool constraints_on) const { return !constraints_on ? LoopRows::None : active() ? LoopRows::Solve : LoopRows::Hold; }
  // Candidates, and a ground or a contact pair for them to meet.
  bool available() const { return can_collide_; }
  void set_enabled(bool on) {
    enabled_ = on;
    if (!on) std::fill(touch_.begin(), touch_.end(), T(0));  // no contact force while off
  }
  bool enabled() const { return enabled_; }
  // The contact settings of the stage: ADMM, at most 500 iterations per substep (a landing takes
  // 3-30, a robot collapsing onto splayed sliding feet up to ~300), tolerance 1e-6
  // (double) or 1e-5 (float) relative, joint limits on (margin 0.01), Baumgarte 0.2.
  // PV-soft's x-step (settings.admm_linear_solve) takes rows on one body each: refused, with
  // the reason, on a model with contact pairs or loop constraints.
  void set_settings(const ContactSettings& settings) {
    check_contact_settings(settings, "Batch::set_contact_settings");
    if (settings.admm_linear_solve == AdmmLinearSolve::PvSoft) {
      if (!model_.contacts.pairs.empty())
        throw Error("Batch::set_contact_settings: the pv-soft linear solve needs contact rows on one body each, and contact pair '" +
                    model_.contacts.pairs.front().name + "' acts on two; use cholesky");
      if (model_.constraint_rows > 0)
        throw Error("Batch::set_contact_settings: the pv-soft linear solve does not take loop-constraint rows, and this model has " +
                    std::to_string(model_.constraint_rows) + "; use cholesky");
    }
    settings_ = settings;
  }
  const ContactSettings& settings() const { return settings_; }
  static constexpr double default_tolerance() { return std::is_same_v<T, float> ? 1e-5 : 1e-6; }

  // --- Per-environment parameters ---
  // The plane n . x = height for the listed environments (n normalised). Throws Error for a
  // non-finite height or a normal that is not finite and non-zero.
  void set_ground(std::span<const int> envs, double height, const Vec3d& normal) {
    const double length = std::sqrt(dot(normal, normal));
    if (!std::isfinite(height) || !(length > 1e-12) || !std::isfinite(length))
      throw Error("Batch::set_ground: the height must be finite and the normal finite and non-zero");
    for (int e : envs) check_env("Batch::set_ground", e, n_);
    for (int e : envs) {
      ground_height_[static_cast<size_t>(e)] = static_cast<T>(height);
      for (int k = 0; k < 3; ++k) ground_normal_[static_cast<size_t>(3 * e + k)] = static_cast<T>(normal[k] / length);
    }
  }
  // One friction coefficient for every candidate of the listed environments. Throws Error
  // unless mu is finite and >= 0.
  void set_friction(std::span<const int> envs, double mu) {
    if (!(mu >= 0 && std::isfinite(mu))) throw Error("Batch::set_friction: mu must be finite and >= 0, got " + std::to_string(mu));
    for (int e : envs) check_env("Batch::set_friction", e, n_);
    for (int e : envs) own_friction_[static_cast<size_t>(e)] = static_cast<T>(mu);
    any_own_friction_ = any_own_friction_ || !envs.empty();
  }
  // A terrain shared by every environment: replaces the plane (its height and normal are kept
  // for when the terrain is cleared). Throws Error for a field check_height_field refuses, or a
  // model without a ground.
  void set_terrain(const HeightField& field) {
    check_height_field(field, "Batch::set_terrain");
    if (!model_.contacts.ground.present)
      throw Error("Batch::set_terrain: model '" + model_.name + "' has no ground (a fixed base without a contact file's \"ground\")");
    terrain_ = field;
    terrain_.heights.clear();
    terrain_heights_.assign(field.heights.begin(), field.heights.end());
    terrain_per_env_ = false;
  }
  // The listed environments get their own heights on the terrain's grid (nx * ny values, row j
  // = y index, shared by the listed environments); the others keep theirs. Throws Error without
  // a terrain, for a wrong count or a height that is not finite.
  void set_terrain_heights(std::span<const int> envs, std::span<const double> heights) {
    if (!terrain_.present()) throw Error("Batch::set_terrain_heights: no terrain (call set_terrain first)");
    const size_t points = static_cast<size_t>(terrain_.nx) * static_cast<size_t>(terrain_.ny);
    if (heights.size() != points)
      throw Error("Batch::set_terrain_heights: expected nx * ny = " + std::to_string(points) + " heights, got " + std::to_string(heights.size()));
    for (size_t k = 0; k < points; ++k)
      if (!std::isfinite(heights[k])) throw Error("Batch::set_terrain_heights: height " + std::to_string(k) + " is not finite");
    for (int e : envs) check_env("Batch::set_terrain_heights", e, n_);
    if (!terrain_per_env_) {  // from one shared grid to one per environment
      std::vector<T> shared = std::move(terrain_heights_);
      terrain_heights_.resize(points * static_cast<size_t>(n_));
      for (int e = 0; e < n_; ++e) std::copy(shared.begin(), shared.end(), terrain_heights_.begin() + static_cast<long>(points) * e);
      terrain_per_env_ = true;
    }
    for (int e : envs)
      for (size_t k = 0; k < points; ++k) terrain_heights_[points * static_cast<size_t>(e) + k] = static_cast<T>(heights[k]);
  }
  // Back to the plane.
  void clear_terrain() {
    terrain_ = HeightField{};
    terrain_heights_.clear();
    terrain_per_env_ = false;
  }
  // The terrain's grid (nx = 0: none; its heights are not copied here) and environment e's heights.
  const HeightField& terrain() const { return terrain_; }
  const T* terrain_heights(int e) const {
    check_env("Batch::terrain_heights", e, n_);
    if (!terrain_.present()) return nullptr;
    return terrain_heights_.data() + (terrain_per_env_ ? static_cast<size_t>(terrain_.nx) * static_cast<size_t>(terrain_.ny) * static_cast<size_t>(e) : 0);
  }
  double ground_height(int e) const { return ground_height_.at(static_cast<size_t>(e)); }
  Vec3d ground_normal(int e) const {
    return {ground_normal_.at(3 * static_cast<size_t>(e)), ground_normal_[3 * static_cast<size_t>(e) + 1], ground_normal_[3 * static_cast<size_t>(e) + 2]};
  }
  double friction(int e, int candidate) const {
    if (candidate < 0 || candidate >= candidates_) throw Error("Batch::friction: candidate " + std::to_string(candidate) + " out of range");
    check_env("Batch::friction", e, n_);
    const T own = own_friction_[static_cast<size_t>(e)];
    return own == own ? own : get_lane(model_friction_[static_cast<size_t>(candidate)], 0);
  }

  // --- Results of the last step (its last substep), per environment ---
  int candidates() const { return candidates_; }
  const T* impulses() const { return impulses_.data(); }   // N x C x 3: (normal, tangent 1, tangent 2), N s
  const T* forces() const { return forces_.data(); }       // N x C x 3: world frame, N (impulse / h); on a pair's A (B: the opposite)
  const T* gaps() const { return gaps_.data(); }           // N x C: to the ground (plane or terrain) or the pair's B at the last substep's start, m (+inf before a step)
  const std::uint8_t* in_contact() const { return in_contact_.data(); }  // N x C: 1 when the candidate was in the problem (its gap within the margin), else 0
  // N x (touch sensors): each touch sensor's reading at the last substep (N; 0 before a step and
  // while the stage is off), in Model::sensors' order of the touch sensors.
  const T* touch() const { return touch_.data(); }
  const std::vector<int>& iterations() const { return iterations_; }
  const std::vector<T>& residual() const { return residual_; }
  const ContactPlan& plan() const { return plan_; }
  // What a reset clears: no impulse to warm-start from, no force, gap or flag of a step the
  // environment has not taken (gaps read +infinity: nothing measured).
  void clear(int e) {
    std::fill_n(impulses_.begin() + 3L * e * candidates_, 3 * candidates_, T(0));
    std::fill_n(forces_.begin() + 3L * e * candidates_, 3 * candidates_, T(0));
    std::fill_n(gaps_.begin() + static_cast<long>(e) * candidates_, candidates_, std::numeric_limits<T>::infinity());
    std::fill_n(in_contact_.begin() + static_cast<long>(e) * candidates_, candidates_, std::uint8_t{0});
    std::fill_n(limit_impulses_.begin() + static_cast<long>(e) * plan_.num_limited_joints(), plan_.num_limited_joints(), T(0));
    std::fill_n(touch_.begin() + static_cast<long>(e) * touch_plan_.size(), touch_plan_.size(), T(0));
  }
  // Environment e's warm start, what Batch's get_state / set_state save and restore: its
  // contact impulses (3 C) and joint-limit impulses (one per limited joint), N s.
  int limited_joints() const { return plan_.num_limited_joints(); }
  T* warm_impulses(int e) {
    check_env("Batch::warm_impulses", e, n_);
    std::fill_n(held_.begin() + static_cast<long>(e / W) * candidates_, candidates_, Held::Any);  // may be written: store it all next
    return impulses_.data() + 3L * e * candidates_;
  }
  T* warm_limit_impulses(int e) { return limit_impulses_.data() + static_cast<long>(e) * plan_.num_limited_joints(); }

  // The block's warm start (its environments' impulses; zero in invalid lanes), ground and
  // own friction coefficients into ws. The impulses of a candidate whose rows the block
  // holds idle (store_contacts) are zero without being read: Go2 among its scene's stairs reads
  // a few of its 401 candidates.
  void load(int block, BlockWorkspace<L>& ws, const bool* valid) const {
    ContactLanes<L>& cl = *ws.contact_lanes;
    const Held* held = held_.data() + static_cast<long>(block) * candidates_;
    L* impulses = cl.state.impulses.data();
    char* known = cl.state.known.data();  // what the workspace's lanes hold already (none to write)
    for (int k = 0; k < candidates_;) {
      if (held[k] != Held::Any) {
        if (!(known[k] & kKnownZeroResults)) impulses[3 * k] = impulses[3 * k + 1] = impulses[3 * k + 2] = L(T(0));
        ++k;
        continue;
      }
      int end = k + 1;  // a run of candidates whose rows may hold impulses
      while (end < candidates_ && held[end] == Held::Any) ++end;
      load_rows(block, valid, impulses_.data() + 3 * k, 3 * (end - k), 3 * candidates_, impulses + 3 * k);
      for (int j = k; j < end; ++j) known[j] &= ~kKnownZeroResults;
      k = end;
    }
    load_rows(block, valid, limit_impulses_.data(), plan_.num_limited_joints(), cl.state.limit_impulses.data());
    L normal[3], height;
    load_rows(block, valid, ground_normal_.data(), 3, normal);
    load_rows(block, valid, ground_height_.data(), 1, &height);
    // An invalid lane gets the default ground (a zero normal would divide by zero) and no rows.
    alignas(64) T lanes[W];
    for (int l = 0; l < W; ++l) lanes[l] = block * W + l < n_ && valid[l] ? T(1) : T(0);
    cl.occupied = LaneTraits<L>::load(lanes);
    // The lanes' own friction coefficients (NaN: the model's; 0 in a lane without an environment,
    // which has no row to read it), when some environment has one.
    cl.own_friction = false;
    if (any_own_friction_) {
      load_rows(block, valid, own_friction_.data(), 1, &cl.friction_own);
      cl.has_own_friction = select(cl.friction_own == cl.friction_own, L(T(1)), L(T(0)));
      cl.own_friction = any_lane(cl.has_own_friction != L(T(0)));
    }
    cl.penetrated = L(T(0));
    for (int k = 0; k < 3; ++k) {
      LaneTraits<L>::store(normal[k], lanes);
      for (int l = 0; l < W; ++l)
        if (!(block * W + l < n_ && valid[l])) lanes[l] = k == 2 ? T(1) : T(0);
      normal[k] = LaneTraits<L>::load(lanes);
    }
    cl.ground.present = model_.contacts.ground.present;
    cl.ground.normal = Vec3<L>{normal[0], normal[1], normal[2]};
    cl.ground.height = height;
    cl.ground.terrain = TerrainView<T>{nullptr, terrain_.nx, terrain_.ny, static_cast<T>(terrain_.origin_x),
                                       static_cast<T>(terrain_.origin_y), static_cast<T>(terrain_.spacing)};
    for (int l = 0; l < W; ++l) {  // a lane without an environment reads environment 0's grid (any valid grid)
      const int e = block * W + l;
      cl.ground.terrain_heights[l] = terrain_.present() ? terrain_heights(e < n_ && valid[l] ? e : 0) : nullptr;
    }
  }

  // The stage for one substep of length h: ws.qdd from the accelerations stage's to the
  // post-contact (and post-limit) ones, with the constants `c` that stage used. ws.lambda holds
  // the loop forces. With LoopRows::Solve (loop_rows()), ws.qdd comes in without the loops, and
  // ws.lambda is the warm start in and the loop forces out. With Hold, ws.qdd and ws.lambda come
  // from the loop solver, and ws.lambda gains the limits' reactions. `aba_factorised`: the
  // accelerations stage ran ABA (ws.aba) at ws.q with `c`, so that the kernel takes M's
  // factorisation and the placements from it instead of computing them again (not after RK4's
  // stages, the last of which is at another state).
  void solve(const ModelConstants<L>& c, BlockWorkspace<L>& ws, const L& h, LoopRows loops, bool aba_factorised) {
    ContactLanes<L>& cl = *ws.contact_lanes;
    const int candidates = active() ? candidates_ : 0;
    const TreeFactor<L> aba = tree_factor_of(ws.aba);
    const TreeFactor<L>* factorised = aba_factorised ? &aba : nullptr;
    const ContactDetection<L> detection =
        detect_contact_rows(c, plan_, model_, settings_, candidates, loops, cl.ground, cl.occupied, cl.state, ws.q.data(), ws.v.data(), h, ws.qdd.data(), factorised);
    cl.state.fit_problem(detection.rows);  // the thread's problem grows to its largest block's (outside the kernels)
    cl.report = solve_detected_contacts(c, plan_, model_, settings_, detection, loops, friction_lanes(cl, detection.rows.contacts), cl.occupied, cl.state, ws.q.data(), ws.v.data(), h,
                                        ws.qdd.data(), loops != LoopRows::None ? ws.lambda.data() : nullptr, factorised);
    if (candidates > 0) touch_kernel(touch_plan_, touch_placement_.data(), cl.state, h, cl.touch.data());
    else std::fill(cl.touch.begin(), cl.touch.end(), L(T(0)));
    const L deepest(static_cast<T>(-settings_.max_penetration));
    for (int k = 0; k < candidates; ++k)  // a candidate with results known zero is in contact in no lane
      if (!(cl.state.known[static_cast<size_t>(k)] & kKnownZeroResults))
        cl.penetrated = select((cl.state.gap[static_cast<size_t>(k)] < deepest) && (cl.state.in_contact[static_cast<size_t>(k)] != L(T(0))), L(T(1)),
                             cl.penetrated);
  }

  // The block's results into its valid environments' rows; a lane whose solver did not converge
  // is reported (its state is still written).
  void store(int block, BlockIO<L>& io, BlockWorkspace<L>& ws, const bool* valid) {
    ContactLanes<L>& cl = *ws.contact_lanes;
    FrictionalContactWorkspace<L>& s = cl.state;
    io.write_rows(block, valid, s.limit_impulses.data(), plan_.num_limited_joints(), limit_impulses_.data());
    if (active()) store_contacts(block, io, cl, valid);
    alignas(64) T iterations[W], residual[W], converged[W], penetrated[W];
    LaneTraits<L>::store(cl.report.iterations, iterations);
    LaneTraits<L>::store(cl.report.residual, residual);
    LaneTraits<L>::store(cl.report.converged, converged);
    LaneTraits<L>::store(cl.penetrated, penetrated);
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      if (!valid[l]) continue;
      const size_t e = static_cast<size_t>(block * W + l);
      iterations_[e] = static_cast<int>(iterations[l]);
      residual_[e] = residual[l];
      if (converged[l] == T(0)) io.report(static_cast<int>(e), EnvStatus::ContactNotConverged);
      if (penetrated[l] != T(0)) io.report(static_cast<int>(e), EnvStatus::DeepPenetration);
    }
  }

 private:
  // The contact results of the block into its valid environments' rows. What the rows already
  // hold is not written again: a candidate idle in every lane (no contact, so a zero impulse and
  // force: detect_contacts) whose rows are idle writes its gap alone, and one that is also quiet
  // (an infinite gap: a pair beyond reach) in rows that are quiet writes nothing. Go2 among its
  // scene's stairs writes the gaps of its 97 ground candidates, and the impulses, forces and
  // flags of the few in contact.
  void store_contacts(int block, BlockIO<L>& io, ContactLanes<L>& cl, const bool* valid) {
    FrictionalContactWorkspace<L>& s = cl.state;
    Held* held = held_.data() + static_cast<long>(block) * candidates_;
    bool all_valid = true;
    for (int l = 0; l < W && block * W + l < n_; ++l) all_valid = all_valid && valid[l];
    const L infinity(std::numeric_limits<T>::infinity()), zero(T(0));
    // Runs of candidates to write, first .. k - 1: their gaps, and the rest of their results.
    const auto write_gaps = [&](int first, int k) {
      if (k > first) io.write_rows(block, valid, s.gap.data() + first, k - first, gaps_.data() + first, candidates_);
    };
    const auto write_results = [&](int first, int k) {
      if (k == first) return;
      const int count = k - first;
      io.write_rows(block, valid, s.impulses.data() + 3 * first, 3 * count, impulses_.data() + 3 * first, 3 * candidates_);
      io.write_flag_rows(block, valid, s.in_contact.data() + first, count, in_contact_.data() + first, candidates_);
      io.write_rows(block, valid, s.world_force.data() + 3 * first, 3 * count, forces_.data() + 3 * first, 3 * candidates_);
    };
    int gap_run = 0, result_run = 0;
    for (int k = 0; k < candidates_; ++k) {
      const char known = s.known[static_cast<size_t>(k)];
      const bool idle = (known & kKnownZeroResults) || !any_lane(s.in_contact[static_cast<size_t>(k)] != zero);
      const bool quiet = idle && ((known & kKnownInfiniteGap) || !any_lane(s.gap[static_cast<size_t>(k)] != infinity));
      const Held now = quiet ? Held::Quiet : idle ? Held::Idle : Held::Any;
      if (quiet && held[k] == Held::Quiet) write_gaps(gap_run, k), gap_run = k + 1;
      if (idle && held[k] != Held::Any) write_results(result_run, k), result_run = k + 1;
      // Rows left unwritten (invalid lanes) keep what they held.
      held[k] = all_valid ? now : std::min(now, held[k]);
    }
    write_gaps(gap_run, candidates_);
    write_results(result_run, candidates_);
    io.write_rows(block, valid, cl.touch.data(), touch_plan_.size(), touch_.data());
  }
  double candidate_friction(int c) const { return model_.contacts.friction(c); }
  // `count` values per environment of the env-major `rows` into `out` lanes, zero in lanes
  // without a valid environment (they read zero_row_): W x W tiles transposed in registers, as
  // the gather's (entry by entry through a staging buffer, this was 29 % of the samples of the
  // stage's own code on the quadruped).
  void load_rows(int block, const bool* valid, const T* rows, int count, L* out) const { load_rows(block, valid, rows, count, count, out); }
  // The same from `count` entries of rows `stride` apart (a column range of wider rows: `rows`
  // points at the range's first column in environment 0's row).
  void load_rows(int block, const bool* valid, const T* rows, int count, int stride, L* out) const {
    const T* sources[W];
    for (int l = 0; l < W; ++l) {
      const int e = block * W + l;
      sources[l] = e < n_ && valid[l] ? rows + static_cast<size_t>(e) * stride : zero_row_.data();
    }
    lanes_from_row_range<L>(sources, count, out);
  }
  // The block's friction coefficients per candidate (lanes), as the kernel reads them: the
  // model's, unless a lane has its own (set_friction); then those of the `listed` candidates in
  // contact (ws.contact_list), the only ones the kernel reads.
  const L* friction_lanes(ContactLanes<L>& cl, int listed) const {
    if (!cl.own_friction) return model_friction_.data();
    for (int j = 0; j < listed; ++j) {
      const size_t k = static_cast<size_t>(cl.state.contact_list[static_cast<size_t>(j)]);
      cl.friction[k] = select(cl.has_own_friction != L(T(0)), cl.friction_own, model_friction_[k]);
    }
    return cl.friction.data();
  }

  const Model& model_;
  int n_;
  ContactPlan plan_;
  int candidates_;
  bool can_collide_;  // ContactModel::can_collide(), once: the model does not change
  bool enabled_;
  ContactSettings settings_;
  std::vector<T> ground_height_, ground_normal_;             // N, N x 3
  // The friction coefficients: the model's per candidate, broadcast to lanes (read by the kernel
  // where they are), and per environment its own one for every candidate (set_friction), NaN
  // while it has none. Not per environment and candidate: in lanes, that would add 3.2 KB to
  // Go2's 24 KB of state per environment, for a parameter set one per environment.
  std::vector<L> model_friction_;
  std::vector<T> own_friction_;
  bool any_own_friction_ = false;  // some environment has its own
  HeightField terrain_;                                      // the grid (nx = 0: none); heights below
  std::vector<T> terrain_heights_;                           // nx * ny, or N x nx * ny when per environment
  bool terrain_per_env_ = false;
  std::vector<T> impulses_, forces_, gaps_;                  // N x C x 3, N x C x 3, N x C
  // N x C, a byte each: in a T, Go2 among its stairs would spend 2.7 KiB more per environment in double
  std::vector<std::uint8_t> in_contact_;
  // What a candidate's rows hold in every environment of a lane block (store_contacts), in
  // increasing order of what is known: anything (at first and after warm_impulses); idle, a
  // candidate not in contact (zero impulse, force and flag); quiet, idle and an infinite gap.
  enum class Held : char { Any, Idle, Quiet };
  std::vector<Held> held_;  // per lane block and candidate
  std::vector<T> limit_impulses_;                            // N x (limited joints): the warm start
  std::vector<int> iterations_;
  std::vector<T> residual_;
  TouchPlan touch_plan_;
  std::vector<Transform<L>> touch_placement_;  // the touch sites' placements as lanes
  std::vector<T> touch_;                       // N x (touch sensors)
  // What lanes without an environment load (load_rows): as long as the widest rows loaded (3 C
  // impulses, the limits' impulses, the normal); read-only, shared by every block and thread.
  std::vector<T> zero_row_;
};

}  // namespace batchdyn
