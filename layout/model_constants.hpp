// The numbers of a Model converted once to a lane type S: joint placements, axes (and their
// cross-product matrices for Rodrigues' formula), spatial inertias, the base acceleration.
// Kernels read these instead of converting doubles per call. Inertias are kept per body and
// per lane type, so that per-environment inertial parameters (domain randomisation) only
// need a per-block copy of `inertia` / `spatial_inertia`, not a different kernel.
#pragma once

#include <cmath>
#include <vector>

#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// Model numbers (double) converted to the lane type S.
template <class S> Vec3<S> cast3(const Vec3d& v) { return {S(v.x), S(v.y), S(v.z)}; }
template <class S> Mat3<S> cast3(const Mat3d& m) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = S(m.m[i][j]);
  return r;
}
template <class S> Transform<S> cast_transform(const Transformd& T) { return {cast3<S>(T.rotation), cast3<S>(T.translation)}; }
template <class S> RigidInertia<S> cast_inertia(const RigidInertiad& I) {
  return {S(I.mass), cast3<S>(I.com), cast3<S>(I.inertia_com)};
}

// One row of the flat per-body table the kernels walk (parents before children): everything a
// sweep needs about body i's place in the tree and its joint, without the string-bearing Body.
struct BodyPlan {
  int parent = -1;  // λ(i), 0 = world
  JointType joint_type = JointType::Revolute;
  int idx_q = 0, idx_v = 0;  // first coordinate in q and in v
  int nq = 0, nv = 0;
};

// A constraint's numbers for the lane kernels: its two frames in their bodies, and for a
// revolute constraint the two directions orthogonal to its axis (frame 1) that its angular
// rows constrain (kernels/constraint_rows.hpp).
template <class S>
struct ConstraintConstants {
  ConstraintType type = ConstraintType::Weld;
  int body1 = 0, body2 = 0;
  int row = 0, dim = 0;
  Transform<S> placement1, placement2;  // ^{b1}M_{c1}, ^{b2}M_{c2}
  Vec3<S> normal1, normal2;             // revolute: orthonormal completion of the axis
};

// Two unit vectors completing `axis` to an orthonormal basis (deterministic).
inline void perpendicular_basis(const Vec3d& axis, Vec3d& b1, Vec3d& b2) {
  const Vec3d ref = std::abs(axis.x) < 0.9 ? Vec3d{1, 0, 0} : Vec3d{0, 1, 0};
  b1 = cross(axis, ref);
  b1 = b1 * (1.0 / std::sqrt(dot(b1, b1)));
  b2 = cross(axis, b1);
}

template <class S>
struct ModelConstants {
  explicit ModelConstants(const Model& model) {
    const int n = model.num_bodies();
    tree.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Body& b = model.bodies[i];
      tree[static_cast<size_t>(i)] = {b.parent, b.joint_type, b.idx_q, b.idx_v, b.nq, b.nv};
    }
    for (const Constraint& k : model.constraints) {
      ConstraintConstants<S> cc;
      cc.type = k.type, cc.body1 = k.body1, cc.body2 = k.body2, cc.row = k.row, cc.dim = k.dim;
      cc.placement1 = cast_transform<S>(k.placement1);
      cc.placement2 = cast_transform<S>(k.placement2);
      Vec3d b1, b2;
      perpendicular_basis(k.axis, b1, b2);
      cc.normal1 = cast3<S>(b1), cc.normal2 = cast3<S>(b2);
      constraints.push_back(cc);
    }
    joint_placement.resize(n);
    axis.resize(n);
    axis_skew.resize(n);
    axis_skew_squared.resize(n);
    inertia.resize(n);
    spatial_inertia.resize(n);
    for (int i = 0; i < n; ++i) {
      const Body& b = model.bodies[i];
      joint_placement[i] = cast_transform<S>(b.joint_placement);
      axis[i] = cast3<S>(b.axis);
      const Mat3d K = Mat3d::skew(b.axis);
      axis_skew[i] = cast3<S>(K);
      axis_skew_squared[i] = cast3<S>(K * K);
      inertia[i] = cast_inertia<S>(b.inertia);
      spatial_inertia[i] = ArticulatedInertia<S>::from_rigid(inertia[i]);
    }
    base_acceleration = {cast3<S>(model.gravity * -1.0), Vec3<S>::zero()};
    armature.assign(static_cast<size_t>(model.nv), S(0));
    for (size_t k = 0; k < armature.size() && k < model.armature.size(); ++k) armature[k] = S(model.armature[k]);
  }
  std::vector<BodyPlan> tree;                      // per body, parents first
  std::vector<ConstraintConstants<S>> constraints;  // model.constraints, in order
  std::vector<Transform<S>> joint_placement;       // ^{λ(i)}M_{J_i} at q = 0
  std::vector<Vec3<S>> axis;                       // 1-dof joint axis
  std::vector<Mat3<S>> axis_skew, axis_skew_squared;  // K = [axis]x, K^2
  std::vector<RigidInertia<S>> inertia;            // I_i (10 parameters)
  std::vector<ArticulatedInertia<S>> spatial_inertia;  // I_i as a symmetric 6x6
  Motion<S> base_acceleration;                     // a_0 = -g
  std::vector<S> armature;                         // per dof: rotor inertia added to M(q)'s diagonal
};

}  // namespace batchdyn
