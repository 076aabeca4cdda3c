// Moving on the configuration manifold Q = (R^3 x S^3)_root x (S^3)^s x R^k
// (topology/configuration.hpp: its neutral and random points): integrate q ⊕ v, difference
// q1 ⊖ q0. Free-flyer: q = [x y z qx qy qz qw], v = [linear; angular] in the base frame;
// integration follows the body twist for unit time: M(q ⊕ v) = M(q) exp6(v) (Pinocchio's
// convention). Spherical: q = [qx qy qz qw], v = angular velocity in the child frame:
// R(q ⊕ v) = R(q) exp3(v).
#pragma once

#include <cmath>
#include <span>

#include "layout/dense.hpp"
#include "layout/lanes.hpp"
#include "layout/lie_group.hpp"
#include "topology/configuration.hpp"
#include "topology/tree_plan.hpp"

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
// out = quat ⊗ exp(w) (rotation by w in the rotated frame), normalised; out may alias quat.
// Branch-free: below 1e-4 rad, sin(θ/2)/θ by its Taylor expansion.
template <class L> void rotate_quaternion(const L* quat, const Vec3<L>& w, L* out) {
  using std::sqrt;
  const L theta2 = dot(w, w);
  const L theta = sqrt(theta2);
  const auto small = theta < L(1e-4);
  const L safe_theta = select(small, L(1), theta);
  const L half_sinc = select(small, L(0.5) - theta2 / L(48), lane_sin(safe_theta * L(0.5)) / safe_theta);
  const L increment[4] = {w.x * half_sinc, w.y * half_sinc, w.z * half_sinc, lane_cos(theta * L(0.5))};
  L product[4];
  quaternion_multiply(quat, increment, product);
  normalize_quaternion(product);
  for (int k = 0; k < 4; ++k) out[k] = product[k];
}
}  // namespace detail

// o = q_i ⊕ dv_i for one joint of type `type` (q_i, dv_i, o at the joint's coordinates; o may
// alias q_i). Branch-free in the state (small angles handled with select), so it runs on SIMD
// lanes.
template <class L>
BATCHDYN_INLINE void integrate_joint(JointType type, const L* qi, const L* vi, L* o) {
  using std::sqrt;
  if (is_single_dof(type)) {
    o[0] = qi[0] + vi[0];
    return;
  }
  if (type == JointType::Spherical) {
    detail::rotate_quaternion(qi, Vec3<L>{vi[0], vi[1], vi[2]}, o);
    return;
  }
  // Free flyer: the translation moves along the body twist, p += R(q) V(w) lin, with the left
  // Jacobian V(w) = I + a [w]x + b [w]x^2 (Taylor expansions below 1e-4 rad).
  const Vec3<L> lin{vi[0], vi[1], vi[2]}, w{vi[3], vi[4], vi[5]};
  const L theta2 = dot(w, w);
  const L theta = sqrt(theta2);
  const auto small = theta < L(1e-4);
  const L safe_theta = select(small, L(1), theta);
  const L a = select(small, L(0.5) - theta2 / L(24), (L(1) - lane_cos(safe_theta)) / (safe_theta * safe_theta));
  const L bcoef = select(small, L(1) / L(6) - theta2 / L(120), (safe_theta - lane_sin(safe_theta)) / (safe_theta * safe_theta * safe_theta));
  const Mat3<L> K = Mat3<L>::skew(w);
  const Vec3<L> body_displacement = lin + K * lin * a + K * (K * lin) * bcoef;
  const Vec3<L> dp = quaternion_rotation(qi[3], qi[4], qi[5], qi[6]) * body_displacement;
  const L p[3] = {qi[0] + dp.x, qi[1] + dp.y, qi[2] + dp.z};  // before o (which may alias qi) is written
  detail::rotate_quaternion(qi + 3, w, o + 3);
  for (int k = 0; k < 3; ++k) o[k] = p[k];
}

// out = q ⊕ dv on raw lane arrays (dv is a displacement, e.g. velocity * dt); out may alias q.
// Walks the flat per-body table (topology/tree_plan.hpp: ModelConstants::tree).
template <class L>
void integrate_kernel(std::span<const BodyPlan> tree, const L* q, const L* dv, L* out) {
  for (size_t i = 1; i < tree.size(); ++i)
    integrate_joint(tree[i].joint_type, q + tree[i].idx_q, dv + tree[i].idx_v, out + tree[i].idx_q);
}

// out = q ⊕ v on Eigen vectors (v is a displacement, e.g. velocity * dt). `out` may alias `q`.
// No allocation once `out` has nq entries.
template <class S>
void integrate(const Model& model, const VectorX<S>& q, const VectorX<S>& v, VectorX<S>& out) {
  out.resize(model.nq);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    integrate_joint(b.joint_type, q.data() + b.idx_q, v.data() + b.idx_v, out.data() + b.idx_q);
  }
}

// v = q1 ⊖ q0, the displacement with integrate(q0, v) = q1.
template <class S>
void difference(const Model& model, const VectorX<S>& q0, const VectorX<S>& q1, VectorX<S>& v) {
  v.resize(model.nv);
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    if (is_single_dof(b.joint_type)) {
      v[b.idx_v] = q1[b.idx_q] - q0[b.idx_q];
      continue;
    }
    const S* a = q0.data() + b.idx_q;
    const S* c = q1.data() + b.idx_q;
    if (b.joint_type == JointType::Spherical) {
      const Vec3<S> w = log3(quaternion_rotation(a[0], a[1], a[2], a[3]).transpose() * quaternion_rotation(c[0], c[1], c[2], c[3]));
      for (int k = 0; k < 3; ++k) v[b.idx_v + k] = w[k];
      continue;
    }
    const Transform<S> M0{quaternion_rotation(a[3], a[4], a[5], a[6]), {a[0], a[1], a[2]}};
    const Transform<S> M1{quaternion_rotation(c[3], c[4], c[5], c[6]), {c[0], c[1], c[2]}};
    const Motion<S> m = log6(M0.inverse() * M1);
    for (int k = 0; k < 6; ++k) v[b.idx_v + k] = m[k];
  }
}

}  // namespace batchdyn
