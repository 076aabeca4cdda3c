// The numbers of a Model converted once to a lane type S: joint placements, axes (and their
// cross-product matrices for Rodrigues' formula), spatial inertias, the base acceleration.
// Kernels read these instead of converting doubles per call. Inertias are kept per body and
// per lane type, so that per-environment inertial parameters (domain randomisation) only
// need a per-block copy of `inertia` / `spatial_inertia`, not a different kernel.
#pragma once

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

template <class S>
struct ModelConstants {
  explicit ModelConstants(const Model& model) {
    const int n = model.num_bodies();
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
  std::vector<Transform<S>> joint_placement;       // ^{λ(i)}M_{J_i} at q = 0
  std::vector<Vec3<S>> axis;                       // 1-dof joint axis
  std::vector<Mat3<S>> axis_skew, axis_skew_squared;  // K = [axis]x, K^2
  std::vector<RigidInertia<S>> inertia;            // I_i (10 parameters)
  std::vector<ArticulatedInertia<S>> spatial_inertia;  // I_i as a symmetric 6x6
  Motion<S> base_acceleration;                     // a_0 = -g
  std::vector<S> armature;                         // per dof: rotor inertia added to M(q)'s diagonal
};

}  // namespace batchdyn
