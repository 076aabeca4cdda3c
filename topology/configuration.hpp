// The configuration space of a model, Q = (R^3 x S^3)_root x (S^3)^s x R^k (DESIGN.md §2):
// its neutral and random points and the normalisation of its quaternions. Free-flyer q =
// [x y z qx qy qz qw]; spherical q = [qx qy qz qw]; 1-dof joints their angle or position.
// Moving on the manifold (q ⊕ v, q1 ⊖ q0) is kernels/tree/configuration.hpp.
#pragma once

#include <cmath>
#include <random>

#include "layout/dense.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// Scales a quaternion (x, y, z, w) to unit norm. Lane-generic.
template <class S> void normalize_quaternion(S* quat) {
  using std::sqrt;
  const S n = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
  for (int k = 0; k < 4; ++k) quat[k] = quat[k] / n;
}

// Normalises the quaternions (free flyer, spherical joints) in place.
template <class S>
void normalize(const Model& model, VectorX<S>& q) {
  for (int i = 1; i < model.num_bodies(); ++i) {
    const int offset = quaternion_offset(model.bodies[i].joint_type);
    if (offset >= 0) normalize_quaternion(q.data() + model.bodies[i].idx_q + offset);
  }
}

// Sets every quaternion of a raw configuration (nq values) to the identity (0, 0, 0, 1).
template <class S>
void set_identity_quaternions(const Model& model, S* q) {
  for (int i = 1; i < model.num_bodies(); ++i) {
    const int offset = quaternion_offset(model.bodies[i].joint_type);
    if (offset >= 0) q[model.bodies[i].idx_q + offset + 3] = S(1);
  }
}

// Zero joint positions, identity orientations (base and ball joints), base at the origin.
template <class S>
VectorX<S> neutral_configuration(const Model& model) {
  VectorX<S> q = VectorX<S>::Zero(model.nq);
  set_identity_quaternions(model, q.data());
  return q;
}

// Uniform within joint limits; continuous joints in [-pi, pi]; free-flyer translation uniform in
// [-translation_range, translation_range]^3; uniformly random unit quaternions.
template <class S, class Rng>
VectorX<S> random_configuration(const Model& model, Rng& rng, double translation_range = 1.0) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  VectorX<S> q(model.nq);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    const int offset = quaternion_offset(b.joint_type);
    if (offset >= 0) {
      for (int k = 0; k < offset; ++k) q[b.idx_q + k] = S((2 * unit(rng) - 1) * translation_range);
      double quat[4], n = 0;
      for (double& e : quat) { e = normal(rng); n += e * e; }
      for (int k = 0; k < 4; ++k) q[b.idx_q + offset + k] = S(quat[k] / std::sqrt(n));
    } else {
      double lo = model.lower_position_limit[b.idx_q], hi = model.upper_position_limit[b.idx_q];
      if (!std::isfinite(lo) || !std::isfinite(hi)) { lo = -M_PI; hi = M_PI; }
      q[b.idx_q] = S(lo + (hi - lo) * unit(rng));
    }
  }
  return q;
}

}  // namespace batchdyn
