// Per-environment physical parameters for domain randomisation: each environment's body
// inertias (mass, centre of mass, rotational inertia), gravity, joint damping and armature.
//
// Stored lane-major per lane block — the layout the kernels read: block b's parameters are
// one RigidInertia<L> per body, one lane per dof for damping and armature, one Motion<L> for
// a_0 = -g. A kernel sees them through ModelConstants' parameter views (point_views), so ABA,
// the step and the Delassus kernels run unchanged. The spatial 6x6 inertia is not stored: the
// kernels form it from the 10 parameters (ModelConstants::body_spatial_inertia), which keeps
// the per-block stream at 13 lanes per body instead of 34.
//
// Until the first per-environment value is set nothing is allocated and the kernels read the
// model's shared constants.
#pragma once

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "layout/lanes.hpp"
#include "layout/model_constants.hpp"
#include "topology/model.hpp"

namespace batchdyn {

template <class L>
class EnvParameters {
 public:
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  bool enabled() const { return enabled_; }

  // Allocates the lane storage for `blocks` lane blocks, every lane holding the model's values.
  void enable(const ModelConstants<L>& shared, int blocks) {
    if (enabled_) return;
    bodies_ = static_cast<int>(shared.inertia.size());
    nv_ = static_cast<int>(shared.armature.size());
    inertia_.resize(static_cast<size_t>(blocks) * bodies_);
    armature_.resize(static_cast<size_t>(blocks) * nv_);
    damping_.resize(armature_.size());
    base_acceleration_.resize(static_cast<size_t>(blocks));
    for (int b = 0; b < blocks; ++b) {
      std::copy(shared.inertia.begin(), shared.inertia.end(), inertia_.begin() + static_cast<long>(b) * bodies_);
      std::copy(shared.armature.begin(), shared.armature.end(), armature_.begin() + static_cast<long>(b) * nv_);
      std::copy(shared.damping.begin(), shared.damping.end(), damping_.begin() + static_cast<long>(b) * nv_);
      base_acceleration_[static_cast<size_t>(b)] = shared.base_acceleration;
    }
    enabled_ = true;
  }
  void disable() {
    enabled_ = false;
    inertia_ = {}, armature_ = {}, damping_ = {}, base_acceleration_ = {};
  }

  // Points `c`'s parameter views at block b's lanes.
  void point_views(int b, ModelConstants<L>& c) const {
    c.inertia = std::span<const RigidInertia<L>>(inertia_.data() + static_cast<long>(b) * bodies_, static_cast<size_t>(bodies_));
    c.spatial_inertia = {};
    c.armature = std::span<const L>(armature_.data() + static_cast<long>(b) * nv_, static_cast<size_t>(nv_));
    c.damping = std::span<const L>(damping_.data() + static_cast<long>(b) * nv_, static_cast<size_t>(nv_));
    c.base_acceleration = base_acceleration_[static_cast<size_t>(b)];
  }

  // Environment e's values (lane e % W of block e / W).
  void set_inertia(int e, int body, const RigidInertiad& I) {
    RigidInertia<L>& lanes = inertia_[static_cast<size_t>(e / W) * bodies_ + static_cast<size_t>(body)];
    set_lane(lanes.mass, e % W, I.mass);
    for (int k = 0; k < 3; ++k) set_lane(lanes.com[k], e % W, I.com[k]);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) set_lane(lanes.inertia_com.m[r][k], e % W, I.inertia_com.m[r][k]);
  }
  RigidInertiad inertia(int e, int body) const {
    const RigidInertia<L>& lanes = inertia_[static_cast<size_t>(e / W) * bodies_ + static_cast<size_t>(body)];
    RigidInertiad I;
    I.mass = get_lane(lanes.mass, e % W);
    for (int k = 0; k < 3; ++k) I.com[k] = get_lane(lanes.com[k], e % W);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) I.inertia_com.m[r][k] = get_lane(lanes.inertia_com.m[r][k], e % W);
    return I;
  }
  void set_gravity(int e, const Vec3d& g) {
    Motion<L>& a0 = base_acceleration_[static_cast<size_t>(e / W)];
    for (int k = 0; k < 3; ++k) set_lane(a0.linear[k], e % W, -g[k]);
  }
  Vec3d gravity(int e) const {
    const Motion<L>& a0 = base_acceleration_[static_cast<size_t>(e / W)];
    return {-get_lane(a0.linear.x, e % W), -get_lane(a0.linear.y, e % W), -get_lane(a0.linear.z, e % W)};
  }
  void set_armature(int e, int dof, double value) { set_lane(armature_[index(e, dof)], e % W, value); }
  void set_damping(int e, int dof, double value) { set_lane(damping_[index(e, dof)], e % W, value); }
  double armature(int e, int dof) const { return get_lane(armature_[index(e, dof)], e % W); }
  double damping(int e, int dof) const { return get_lane(damping_[index(e, dof)], e % W); }

  size_t bytes() const {
    return inertia_.size() * sizeof(RigidInertia<L>) + (armature_.size() + damping_.size()) * sizeof(L) +
           base_acceleration_.size() * sizeof(Motion<L>);
  }

 private:
  size_t index(int e, int dof) const { return static_cast<size_t>(e / W) * nv_ + static_cast<size_t>(dof); }
  static void set_lane(L& x, int l, double value) {
    alignas(64) T values[W];
    LaneTraits<L>::store(x, values);
    values[l] = static_cast<T>(value);
    x = LaneTraits<L>::load(values);
  }
  static double get_lane(const L& x, int l) { return static_cast<double>(LaneTraits<L>::get(x, l)); }

  bool enabled_ = false;
  int bodies_ = 0, nv_ = 0;
  std::vector<RigidInertia<L>> inertia_;  // [block * bodies + body]
  std::vector<L> armature_, damping_;     // [block * nv + dof]
  std::vector<Motion<L>> base_acceleration_;  // [block]
};

}  // namespace batchdyn
