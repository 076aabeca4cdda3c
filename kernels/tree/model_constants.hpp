// The numbers of a Model converted once to a lane type S: the flat per-body table
// (topology/tree_plan.hpp), joint placements and axes (with their cross-product matrices for
// Rodrigues' formula, topology/joint_model.hpp), the constraints' frames and side 1's constant
// rows (kernels/tree/constraint_rows.hpp), spatial inertias and the base acceleration. Kernels read
// these instead of converting doubles, or forming what does not change, per call.
//
// The physical parameters (inertias, armature, damping, gravity) are read through views
// (`inertia`, `spatial_inertia`, `armature`, `damping`, `base_acceleration`). They show the
// model's own values; the batch engine points them, per lane block, at per-environment lanes
// for domain randomisation (batch/env_parameters.hpp) — the same kernels, nothing copied.
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "kernels/tree/constraint_rows.hpp"
#include "layout/lanes.hpp"
#include "layout/spatial.hpp"
#include "topology/joint_model.hpp"
#include "topology/model.hpp"
#include "topology/tree_plan.hpp"

namespace batchdyn {

// Two unit vectors completing `axis` (unit) to a right-handed orthonormal basis, deterministic:
// b1 = axis x e_x normalised (axis x e_y when axis is close to e_x), b2 = axis x b1. Lane-generic
// (revolute constraints' normals, contact tangents).
template <class S>
void perpendicular_basis(const Vec3<S>& axis, Vec3<S>& b1, Vec3<S>& b2) {
  using std::abs;
  using std::sqrt;
  const auto near_x = abs(axis.x) >= S(0.9);
  const Vec3<S> ref{select(near_x, S(0), S(1)), select(near_x, S(1), S(0)), S(0)};
  b1 = cross(axis, ref);
  b1 = b1 * (S(1) / sqrt(dot(b1, b1)));
  b2 = cross(axis, b1);
}

template <class S>
struct ModelConstants {
  explicit ModelConstants(const Model& model) : tree(plan_tree(model)) {
    const int n = model.num_bodies();
    for (const Constraint& k : model.constraints) {
      ConstraintConstants<S> cc;
      cc.type = k.type, cc.body1 = k.body1, cc.body2 = k.body2, cc.row = k.row, cc.dim = k.dim;
      cc.placement1 = cast_transform<S>(k.placement1);
      cc.placement2 = cast_transform<S>(k.placement2);
      Vec3d b1, b2;
      perpendicular_basis(k.axis, b1, b2);
      cc.normal1 = cast3<S>(b1), cc.normal2 = cast3<S>(b2);
      cc.kp = S(k.kp), cc.kd = S(k.kd), cc.uses_position_error = k.kp != 0.0, cc.velocity_level = k.velocity_level;
      for (Force<S>& column : cc.body1_columns) column = Force<S>::zero();
      terminal_force_columns(cc, +1, cc.placement1, cc.body1_columns);
      for (int r = 0; r < cc.dim; ++r) cc.body1_gram.subtract_outer(cc.body1_columns[r], cc.body1_columns[r] * S(-1));
      constraints.push_back(cc);
    }
    joint_placement.resize(n);
    joint_axis.resize(n);
    own_inertia_.resize(n);
    own_spatial_inertia_.resize(n);
    for (int i = 0; i < n; ++i) {
      const Body& b = model.bodies[i];
      joint_placement[i] = cast_transform<S>(b.joint_placement);
      joint_axis[i] = batchdyn::joint_axis<S>(b.axis);
      own_inertia_[i] = cast_inertia<S>(b.inertia);
      own_spatial_inertia_[i] = ArticulatedInertia<S>::from_rigid(own_inertia_[i]);
    }
    base_acceleration = {cast3<S>(model.gravity * -1.0), Vec3<S>::zero()};
    own_armature_.assign(static_cast<size_t>(model.nv), S(0));
    own_damping_.assign(static_cast<size_t>(model.nv), S(0));
    for (size_t k = 0; k < own_armature_.size() && k < model.armature.size(); ++k) own_armature_[k] = S(model.armature[k]);
    for (size_t k = 0; k < own_damping_.size() && k < model.damping.size(); ++k) own_damping_[k] = S(model.damping[k]);
    show_model_parameters();
  }
  // A copy shows its own copy of the model's parameters (not the views of `other`).
  ModelConstants(const ModelConstants& other) { *this = other; }
  ModelConstants& operator=(const ModelConstants& other) {
    if (this == &other) return *this;
    tree = other.tree, constraints = other.constraints, joint_placement = other.joint_placement;
    joint_axis = other.joint_axis;
    own_inertia_ = other.own_inertia_, own_spatial_inertia_ = other.own_spatial_inertia_;
    own_armature_ = other.own_armature_, own_damping_ = other.own_damping_;
    base_acceleration = other.base_acceleration;
    show_model_parameters();
    return *this;
  }
  // Moving keeps the heap buffers, so the views stay valid.
  ModelConstants(ModelConstants&&) noexcept = default;
  ModelConstants& operator=(ModelConstants&&) noexcept = default;

  // Shows the parameters `c` shows (its views, and its gravity): a thread's copy that a stage
  // then edits (implicit damping's armature, loop stabilisation's gains) stays at the block's
  // parameters.
  void view_parameters_of(const ModelConstants& c) {
    inertia = c.inertia, spatial_inertia = c.spatial_inertia, armature = c.armature, damping = c.damping;
    base_acceleration = c.base_acceleration;
  }
  // Points the parameter views back at the model's own values.
  void show_model_parameters() {
    inertia = own_inertia_;
    spatial_inertia = own_spatial_inertia_;
    armature = own_armature_;
    damping = own_damping_;
  }

  std::vector<BodyPlan> tree;                      // per body, parents first
  std::vector<ConstraintConstants<S>> constraints;  // model.constraints, in order
  std::vector<Transform<S>> joint_placement;       // ^{λ(i)}M_{J_i} at q = 0
  std::vector<JointAxis<S>> joint_axis;            // 1-dof joint axis, K = [axis]x, K^2

  // Physical parameters (views; see the top of the file).
  std::span<const RigidInertia<S>> inertia;        // I_i (10 parameters), per body
  // I_i as a symmetric 6x6, per body; empty when the kernels are to form it from `inertia`
  // (per-environment inertias: one table fewer to stream per block).
  std::span<const ArticulatedInertia<S>> spatial_inertia;
  std::span<const S> armature;                     // per dof: rotor inertia added to M(q)'s diagonal
  std::span<const S> damping;                      // per dof: viscous damping d; no kernel reads it (Pinocchio's
                                                   // dynamics): the engine's passive forces apply -d v
  Motion<S> base_acceleration;                     // a_0 = -g

  // I_i as a 6x6, from the table or formed from I_i (see spatial_inertia).
  BATCHDYN_INLINE ArticulatedInertia<S> body_spatial_inertia(int i) const {
    return spatial_inertia.empty() ? ArticulatedInertia<S>::from_rigid(inertia[static_cast<size_t>(i)])
                                   : spatial_inertia[static_cast<size_t>(i)];
  }

 private:
  std::vector<RigidInertia<S>> own_inertia_;
  std::vector<ArticulatedInertia<S>> own_spatial_inertia_;
  std::vector<S> own_armature_, own_damping_;
};

}  // namespace batchdyn
