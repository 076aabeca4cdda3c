// Per-environment physical parameters for domain randomisation: each environment's body
// inertias (mass, centre of mass, rotational inertia), gravity, joint damping and armature, and
// its motors' strength (the factor on the actuation stage's torque, batch/actuation.hpp).
//
// Stored lane-major per lane block, and only what varies: the inertias of the bodies that were
// given per-environment values (10 lanes per body: mass, centre of mass, the 6 entries of the
// symmetric rotational inertia), damping, armature and motor strength once one was set (one lane per dof),
// and a_0 = -g (one Motion<L> per block). Bandwidth is the cost here: at N = 4096 the
// parameters do not fit in cache, so every byte per block is streamed from memory on every
// call (measured: the whole humanoid's inertias as full RigidInertia and 6x6 tables cost +40%
// per substep-1 step; docs/benchmarks.md).
//
// A kernel sees the parameters through ModelConstants' views. point_views() points a thread's
// copy of the constants at block b's values: gravity, damping and armature directly at the
// block's lanes; the inertias through the thread's own full tables (RigidInertia and the 6x6
// spatial inertia per body, in cache), in which only the varying bodies are rewritten per
// block. So ABA, the step and the other kernels run unchanged.
//
// Until the first per-environment value is set nothing is allocated and the kernels read the
// model's shared constants. The user's calls (set_body_inertia, set_gravity, set_damping,
// set_armature, set_motor_strength) are checked here as a loaded model's values are. The motor
// strength is no constant of the dynamics: the actuation stage reads it by block_motor_strength().
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "batch/argument_checks.hpp"
#include "kernels/tree/model_constants.hpp"
#include "layout/lanes.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// A rigid inertia in its 10 parameters, on lanes (the rotational inertia about the centre of
// mass is symmetric: xx, xy, xz, yy, yz, zz).
template <class L>
struct PackedInertia {
  L mass;
  L com[3];
  L inertia[6];
  static constexpr int row_col[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};

  static PackedInertia pack(const RigidInertia<L>& I) {
    PackedInertia p;
    p.mass = I.mass;
    for (int k = 0; k < 3; ++k) p.com[k] = I.com[k];
    for (int k = 0; k < 6; ++k) p.inertia[k] = I.inertia_com.m[row_col[k][0]][row_col[k][1]];
    return p;
  }
  RigidInertia<L> unpack() const {
    RigidInertia<L> I;
    I.mass = mass;
    for (int k = 0; k < 3; ++k) I.com[k] = com[k];
    for (int k = 0; k < 6; ++k) {
      I.inertia_com.m[row_col[k][0]][row_col[k][1]] = inertia[k];
      I.inertia_com.m[row_col[k][1]][row_col[k][0]] = inertia[k];
    }
    return I;
  }
};

// One thread's full inertia tables for the block it works on (see the top of the file).
template <class L>
struct EnvInertiaTables {
  std::vector<RigidInertia<L>> inertia;
  std::vector<ArticulatedInertia<L>> spatial_inertia;
  std::uint64_t generation = 0;  // of the EnvParameters layout the tables were filled for (0: never)
};

template <class L>
class EnvParameters {
 public:
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  // The engine's model, its shared constants and N (both outlive this object).
  EnvParameters(const Model& model, const ModelConstants<L>& shared, int num_envs)
      : model_(model), shared_(shared), n_(num_envs), full_strength_(static_cast<size_t>(model.nv), 1.0) {}

  // --- The user's calls: each sets the listed environments, one value (row) per listed
  // environment, and switches to per-environment parameters (the others keep the model's).
  // Values are checked like a loaded model's (finite, mass >= 0, rotational inertia positive
  // semi-definite); an Error names the call, the environment and the body.

  // Inertia of `body` (1..num_bodies-1) in its own frame: masses (k), centres of mass (k x 3)
  // and rotational inertias about the centre of mass (k x 3 x 3, row-major).
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
      check_env(who, envs[k], n_);
      RigidInertiad& I = values[k];
      I.mass = mass[k];
      for (int j = 0; j < 3; ++j) I.com[j] = com[3 * k + static_cast<size_t>(j)];
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 3; ++j) I.inertia_com.m[r][j] = rotational_inertia[9 * k + static_cast<size_t>(3 * r + j)];
      const std::string where = std::string(who) + ": environment " + std::to_string(envs[k]) + ", body '" + model_.bodies[body].name + "'";
      check_link_inertial_values(I, model_.bodies[body].name, where);
      check_rotational_inertia(I, where);
    }
    enable();
    for (size_t k = 0; k < envs.size(); ++k) set_inertia(envs[k], body, values[k]);
  }
  // Gravity vectors (k x 3, m/s^2, world frame).
  void set_gravity(std::span<const int> envs, std::span<const double> gravity) {
    check_rows("set_gravity", "gravity", envs, gravity, 3);
    for (size_t k = 0; k < envs.size(); ++k) check_env("set_gravity", envs[k], n_);
    for (double g : gravity)
      if (!std::isfinite(g)) throw Error("set_gravity: gravity must be finite");
    enable();
    for (size_t k = 0; k < envs.size(); ++k) set_gravity(envs[k], {gravity[3 * k], gravity[3 * k + 1], gravity[3 * k + 2]});
  }
  // Joint damping / armature per dof (k x nv, finite, >= 0).
  void set_damping(std::span<const int> envs, std::span<const double> damping) {
    set_dof_values("set_damping", envs, damping, damping_, model_.damping);
  }
  void set_armature(std::span<const int> envs, std::span<const double> armature) {
    set_dof_values("set_armature", envs, armature, armature_, model_.armature);
  }
  // Motor strength per dof (k x nv, finite, >= 0; 1 = the torque as computed): the factor on
  // what the actuation stage computes for the dof, before the clamp to the effort limits.
  void set_motor_strength(std::span<const int> envs, std::span<const double> strength) {
    set_dof_values("set_motor_strength", envs, strength, motor_strength_, full_strength_);
  }
  // Block b's motor strengths (nv lanes), or an empty span while every environment's is 1.
  std::span<const L> block_motor_strength(int b) const {
    if (motor_strength_.empty()) return {};
    return std::span<const L>(motor_strength_.data() + static_cast<long>(b) * nv_, static_cast<size_t>(nv_));
  }

  // The constants block b's kernels read: the shared ones, or `thread_copy` (the calling
  // thread's) viewing the block's values through its own inertia tables.
  const ModelConstants<L>& block_constants(int b, ModelConstants<L>& thread_copy, EnvInertiaTables<L>& tables) const {
    if (!enabled_) return shared_;
    point_views(b, thread_copy, tables);
    prefetch(b + 1);  // a thread's blocks are consecutive (blocked_range)
    return thread_copy;
  }

  bool enabled() const { return enabled_; }

  // Switches to per-environment parameters: gravity per lane block, every lane holding the
  // model's value. Inertias, damping, armature and motor strength are added when first set.
  void enable() {
    if (enabled_) return;
    blocks_ = (n_ + W - 1) / W;
    bodies_ = static_cast<int>(shared_.inertia.size());
    nv_ = static_cast<int>(shared_.armature.size());
    base_acceleration_.assign(static_cast<size_t>(blocks_), shared_.base_acceleration);
    varying_slot_.assign(static_cast<size_t>(bodies_), -1);
    varying_bodies_.clear();
    inertia_.clear(), armature_.clear(), damping_.clear(), motor_strength_.clear();
    enabled_ = true;
    ++generation_;
  }
  void disable() {
    enabled_ = false;
    inertia_ = {}, armature_ = {}, damping_ = {}, motor_strength_ = {}, base_acceleration_ = {}, varying_slot_ = {}, varying_bodies_ = {};
    ++generation_;
  }

  // Points `c`'s parameter views at block b's values; `tables` are the calling thread's.
  void point_views(int b, ModelConstants<L>& c, EnvInertiaTables<L>& tables) const {
    const ModelConstants<L>& shared = shared_;
    c.base_acceleration = base_acceleration_[static_cast<size_t>(b)];
    c.armature = armature_.empty() ? shared.armature : std::span<const L>(armature_.data() + static_cast<long>(b) * nv_, static_cast<size_t>(nv_));
    c.damping = damping_.empty() ? shared.damping : std::span<const L>(damping_.data() + static_cast<long>(b) * nv_, static_cast<size_t>(nv_));
    if (varying_bodies_.empty()) {
      c.inertia = shared.inertia;
      c.spatial_inertia = shared.spatial_inertia;
      return;
    }
    if (tables.generation != generation_) {  // the layout changed: start again from the shared values
      tables.inertia.assign(shared.inertia.begin(), shared.inertia.end());
      tables.spatial_inertia.assign(shared.spatial_inertia.begin(), shared.spatial_inertia.end());
      tables.generation = generation_;
    }
    const PackedInertia<L>* block = inertia_.data() + static_cast<long>(b) * static_cast<long>(varying_bodies_.size());
    for (size_t k = 0; k < varying_bodies_.size(); ++k) {
      const size_t body = static_cast<size_t>(varying_bodies_[k]);
      tables.inertia[body] = block[k].unpack();
      tables.spatial_inertia[body] = ArticulatedInertia<L>::from_rigid(tables.inertia[body]);
    }
    c.inertia = tables.inertia;
    c.spatial_inertia = tables.spatial_inertia;
  }

  // Asks the memory system for block b's values ahead of use (called for the next block while
  // the current one runs: the stream's latency then hides behind the kernel).
  void prefetch(int b) const {
    if (b >= blocks_) return;
    const auto fetch = [](const void* begin, size_t bytes) {
      const char* p = static_cast<const char*>(begin);
      for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(p + offset);
    };
    const size_t varying = varying_bodies_.size();
    if (varying) fetch(inertia_.data() + static_cast<long>(b) * static_cast<long>(varying), varying * sizeof(PackedInertia<L>));
    if (!armature_.empty()) fetch(armature_.data() + static_cast<long>(b) * nv_, nv_ * sizeof(L));
    if (!damping_.empty()) fetch(damping_.data() + static_cast<long>(b) * nv_, nv_ * sizeof(L));
    if (!motor_strength_.empty()) fetch(motor_strength_.data() + static_cast<long>(b) * nv_, nv_ * sizeof(L));
  }

  // Environment e's values (lane e % W of block e / W). `model` holds the values of what does
  // not vary.
  void set_inertia(int e, int body, const RigidInertiad& I) {
    make_varying(body);
    PackedInertia<L>& lanes = inertia_[static_cast<size_t>(e / W) * varying_bodies_.size() + static_cast<size_t>(varying_slot_[static_cast<size_t>(body)])];
    set_lane(lanes.mass, e % W, I.mass);
    for (int k = 0; k < 3; ++k) set_lane(lanes.com[k], e % W, I.com[k]);
    for (int k = 0; k < 6; ++k) set_lane(lanes.inertia[k], e % W, I.inertia_com.m[PackedInertia<L>::row_col[k][0]][PackedInertia<L>::row_col[k][1]]);
  }
  RigidInertiad inertia(int e, int body) const {
    const int slot = enabled_ ? varying_slot_[static_cast<size_t>(body)] : -1;
    if (slot < 0) return model_.bodies.at(static_cast<size_t>(body)).inertia;
    const PackedInertia<L>& lanes = inertia_[static_cast<size_t>(e / W) * varying_bodies_.size() + static_cast<size_t>(slot)];
    RigidInertiad I;
    I.mass = get_lane(lanes.mass, e % W);
    for (int k = 0; k < 3; ++k) I.com[k] = get_lane(lanes.com[k], e % W);
    for (int k = 0; k < 6; ++k) {
      const auto [r, c] = PackedInertia<L>::row_col[k];
      I.inertia_com.m[r][c] = I.inertia_com.m[c][r] = get_lane(lanes.inertia[k], e % W);
    }
    return I;
  }
  void set_gravity(int e, const Vec3d& g) {
    Motion<L>& a0 = base_acceleration_[static_cast<size_t>(e / W)];
    for (int k = 0; k < 3; ++k) set_lane(a0.linear[k], e % W, -g[k]);
  }
  Vec3d gravity(int e) const {
    if (!enabled_) return model_.gravity;
    const Motion<L>& a0 = base_acceleration_[static_cast<size_t>(e / W)];
    return {-get_lane(a0.linear.x, e % W), -get_lane(a0.linear.y, e % W), -get_lane(a0.linear.z, e % W)};
  }
  double armature(int e, int dof) const {
    return armature_.empty() ? model_.armature.at(static_cast<size_t>(dof)) : get_lane(armature_[index(e, dof)], e % W);
  }
  bool varies_damping() const { return !damping_.empty(); }
  double damping(int e, int dof) const {
    return damping_.empty() ? model_.damping.at(static_cast<size_t>(dof)) : get_lane(damping_[index(e, dof)], e % W);
  }
  double motor_strength(int e, int dof) const {
    return motor_strength_.empty() ? full_strength_.at(static_cast<size_t>(dof)) : get_lane(motor_strength_[index(e, dof)], e % W);
  }

  // Bytes streamed per lane block and call (what per-environment parameters cost).
  size_t bytes_per_block() const {
    return varying_bodies_.size() * sizeof(PackedInertia<L>) + (armature_.empty() ? 0 : nv_ * sizeof(L)) +
           (damping_.empty() ? 0 : nv_ * sizeof(L)) + (motor_strength_.empty() ? 0 : nv_ * sizeof(L)) + sizeof(Motion<L>);
  }

 private:
  // What the dynamics needs of a rigid body (check_rigid_body_inertia: positive semi-definite;
  // the triangle inequality is not required, as at loading), given as a full, symmetric matrix.
  static void check_rotational_inertia(const RigidInertiad& I, const std::string& where) {
    const Mat3d& J = I.inertia_com;
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < r; ++k)
        if (std::abs(J.m[r][k] - J.m[k][r]) > 1e-9 * (1 + std::abs(J.m[r][k]))) throw Error(where + ": rotational inertia is not symmetric");
    check_rigid_body_inertia(I, where);
  }
  // k x nv values per listed environment into the per-dof lanes `lanes` (made on first use from
  // `model_values`).
  void set_dof_values(const char* who, std::span<const int> envs, std::span<const double> values, std::vector<L>& lanes,
                      const std::vector<double>& model_values) {
    const size_t nv = static_cast<size_t>(model_.nv);
    check_rows(who, "values", envs, values, model_.nv);
    for (size_t k = 0; k < envs.size(); ++k) {
      check_env(who, envs[k], n_);
      check_dof_values(std::string(who) + ": environment " + std::to_string(envs[k]), values.subspan(k * nv, nv), model_.nv, false);
    }
    enable();
    for (size_t k = 0; k < envs.size(); ++k)
      for (int dof = 0; dof < model_.nv; ++dof)
        set_lane(per_dof(lanes, model_values)[index(envs[k], dof)], envs[k] % W, values[k * nv + static_cast<size_t>(dof)]);
  }

  size_t index(int e, int dof) const { return static_cast<size_t>(e / W) * nv_ + static_cast<size_t>(dof); }

  // The per-block dof lanes, made on first use with every lane at the model's values.
  std::vector<L>& per_dof(std::vector<L>& lanes, const std::vector<double>& model_values) {
    if (lanes.empty()) {
      lanes.resize(static_cast<size_t>(blocks_) * nv_);
      for (int b = 0; b < blocks_; ++b)
        for (int k = 0; k < nv_; ++k) lanes[static_cast<size_t>(b * nv_ + k)] = L(static_cast<T>(model_values[static_cast<size_t>(k)]));
    }
    return lanes;
  }
  // Gives `body` its own lanes (every lane at the model's inertia), relaying out the storage.
  void make_varying(int body) {
    if (varying_slot_[static_cast<size_t>(body)] >= 0) return;
    const size_t old_count = varying_bodies_.size(), count = old_count + 1;
    std::vector<PackedInertia<L>> relaid(static_cast<size_t>(blocks_) * count);
    const RigidInertiad& I = model_.bodies[static_cast<size_t>(body)].inertia;
    const PackedInertia<L> model_value = PackedInertia<L>::pack(cast_inertia<L>(I));
    for (int b = 0; b < blocks_; ++b) {
      for (size_t k = 0; k < old_count; ++k) relaid[static_cast<size_t>(b) * count + k] = inertia_[static_cast<size_t>(b) * old_count + k];
      relaid[static_cast<size_t>(b) * count + old_count] = model_value;
    }
    inertia_ = std::move(relaid);
    varying_slot_[static_cast<size_t>(body)] = static_cast<int>(old_count);
    varying_bodies_.push_back(body);
    ++generation_;
  }

  const Model& model_;
  const ModelConstants<L>& shared_;
  int n_;
  bool enabled_ = false;
  int blocks_ = 0, bodies_ = 0, nv_ = 0;
  std::uint64_t generation_ = 1;
  std::vector<int> varying_slot_;         // per body: its slot among the varying bodies, or -1
  std::vector<int> varying_bodies_;       // the bodies with per-environment inertias, by slot
  std::vector<PackedInertia<L>> inertia_;  // [block * varying + slot]
  std::vector<L> armature_, damping_, motor_strength_;  // [block * nv + dof], empty until set
  std::vector<double> full_strength_;                  // nv ones: the motor strength of an environment not set
  std::vector<Motion<L>> base_acceleration_;  // [block]
};

}  // namespace batchdyn
