// Configuration-space helpers on the manifold Q = (R^3 x S^3)_root x R^k:
// integrate q ⊕ v, difference q1 ⊖ q0, normalise, neutral and random configurations.
// Free-flyer: q = [x y z qx qy qz qw], v = [linear; angular] in the base frame; integration
// follows the body twist for unit time: M(q ⊕ v) = M(q) exp6(v) (Pinocchio's convention).
#pragma once

#include <cmath>
#include <random>

#include "kernels/data.hpp"
#include "layout/lie_group.hpp"

namespace batchdyn {

namespace detail {
// Hamilton product of (x, y, z, w) quaternions.
template <class S> void quaternion_multiply(const S* a, const S* b, S* out) {
  const S x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
  const S y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
  const S z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
  const S w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
  out[0] = x; out[1] = y; out[2] = z; out[3] = w;
}
template <class S> void normalize_quaternion(S* quat) {
  using std::sqrt;
  const S n = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
  for (int k = 0; k < 4; ++k) quat[k] = quat[k] / n;
}
}  // namespace detail

// out = q ⊕ v (v is a displacement, e.g. velocity * dt). `out` may alias `q`.
template <class S>
void integrate(const Model& model, const VectorX<S>& q, const VectorX<S>& v, VectorX<S>& out) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  out.resize(model.nq);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    if (b.joint_type != JointType::FreeFlyer) {
      out[b.idx_q] = q[b.idx_q] + v[b.idx_v];
      continue;
    }
    const S* qi = q.data() + b.idx_q;
    const S* vi = v.data() + b.idx_v;
    const Vec3<S> lin{vi[0], vi[1], vi[2]}, ang{vi[3], vi[4], vi[5]};
    const Mat3<S> R = quaternion_rotation(qi[3], qi[4], qi[5], qi[6]);
    const Vec3<S> dp = R * (so3_left_jacobian(ang) * lin);
    // exp of the rotation increment as a quaternion: (sin(θ/2) w/θ, cos(θ/2)).
    const S theta = sqrt(dot(ang, ang));
    const S s = theta < S(1e-8) ? S(0.5) - theta * theta / S(48) : sin(theta * S(0.5)) / theta;
    const S dq[4] = {ang.x * s, ang.y * s, ang.z * s, cos(theta * S(0.5))};
    S quat[4];
    detail::quaternion_multiply(qi + 3, dq, quat);
    detail::normalize_quaternion(quat);
    S* o = out.data() + b.idx_q;
    o[0] = qi[0] + dp.x; o[1] = qi[1] + dp.y; o[2] = qi[2] + dp.z;
    for (int k = 0; k < 4; ++k) o[3 + k] = quat[k];
  }
}

// v = q1 ⊖ q0, the displacement with integrate(q0, v) = q1.
template <class S>
void difference(const Model& model, const VectorX<S>& q0, const VectorX<S>& q1, VectorX<S>& v) {
  v.resize(model.nv);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    if (b.joint_type != JointType::FreeFlyer) {
      v[b.idx_v] = q1[b.idx_q] - q0[b.idx_q];
      continue;
    }
    const S* a = q0.data() + b.idx_q;
    const S* c = q1.data() + b.idx_q;
    const Transform<S> M0{quaternion_rotation(a[3], a[4], a[5], a[6]), {a[0], a[1], a[2]}};
    const Transform<S> M1{quaternion_rotation(c[3], c[4], c[5], c[6]), {c[0], c[1], c[2]}};
    const Motion<S> m = log6(M0.inverse() * M1);
    for (int k = 0; k < 6; ++k) v[b.idx_v + k] = m[k];
  }
}

// Normalises the free-flyer quaternions in place.
template <class S>
void normalize(const Model& model, VectorX<S>& q) {
  for (int i = 1; i < model.num_bodies(); ++i)
    if (model.bodies[i].joint_type == JointType::FreeFlyer) detail::normalize_quaternion(q.data() + model.bodies[i].idx_q + 3);
}

// Zero joint positions, identity base orientation at the origin.
template <class S>
VectorX<S> neutral_configuration(const Model& model) {
  VectorX<S> q = VectorX<S>::Zero(model.nq);
  for (int i = 1; i < model.num_bodies(); ++i)
    if (model.bodies[i].joint_type == JointType::FreeFlyer) q[model.bodies[i].idx_q + 6] = S(1);
  return q;
}

// Uniform within joint limits; continuous joints in [-pi, pi]; free-flyer translation uniform in
// [-translation_range, translation_range]^3 and a uniformly random unit quaternion.
template <class S, class Rng>
VectorX<S> random_configuration(const Model& model, Rng& rng, double translation_range = 1.0) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  VectorX<S> q(model.nq);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    if (b.joint_type == JointType::FreeFlyer) {
      for (int k = 0; k < 3; ++k) q[b.idx_q + k] = S((2 * unit(rng) - 1) * translation_range);
      double quat[4], n = 0;
      for (double& e : quat) { e = normal(rng); n += e * e; }
      for (int k = 0; k < 4; ++k) q[b.idx_q + 3 + k] = S(quat[k] / std::sqrt(n));
    } else {
      double lo = model.lower_position_limit[b.idx_q], hi = model.upper_position_limit[b.idx_q];
      if (!std::isfinite(lo) || !std::isfinite(hi)) { lo = -M_PI; hi = M_PI; }
      q[b.idx_q] = S(lo + (hi - lo) * unit(rng));
    }
  }
  return q;
}

}  // namespace batchdyn
