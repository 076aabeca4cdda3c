// Spatial algebra templated on the lane type S (a scalar today, an xsimd batch later).
//
// Conventions (DESIGN.md §2, Pinocchio-compatible):
//  * spatial vectors are [linear; angular];
//  * a Transform is the placement aMb of frame b in frame a: x_a = R x_b + p;
//  * act() maps a quantity expressed in b to a, act_inv() maps from a to b.
// Every operation is written on 3-vectors and 3x3 blocks so it reads like the formula and
// costs only what the structure needs (no generic 6x6 products). Every one is BATCHDYN_INLINE
// (layout/inline.hpp): in a translation unit that holds several kernels, GCC otherwise calls
// Mat3 * Vec3, dot or Force += out of line from inside the sweeps.
#pragma once

#include "layout/inline.hpp"
#include <cmath>
#include <type_traits>

namespace batchdyn {

template <class S>
struct Vec3 {
  S x{}, y{}, z{};

  BATCHDYN_INLINE static Vec3 zero() { return {S(0), S(0), S(0)}; }
  // Entry i through a table of member pointers: a runtime i (a joint axis from the model) costs
  // one indexed load, where a chain of comparisons cost two branches; a constant i folds away.
  BATCHDYN_INLINE const S& operator[](int i) const { return this->*members[i]; }
  BATCHDYN_INLINE S& operator[](int i) { return this->*members[i]; }

  BATCHDYN_INLINE Vec3 operator+(const Vec3& o) const { return {x + o.x, y + o.y, z + o.z}; }
  BATCHDYN_INLINE Vec3 operator-(const Vec3& o) const { return {x - o.x, y - o.y, z - o.z}; }
  BATCHDYN_INLINE Vec3 operator-() const { return {-x, -y, -z}; }
  BATCHDYN_INLINE Vec3 operator*(const S& s) const { return {x * s, y * s, z * s}; }
  BATCHDYN_INLINE Vec3& operator+=(const Vec3& o) { x += o.x; y += o.y; z += o.z; return *this; }
  BATCHDYN_INLINE Vec3& operator-=(const Vec3& o) { x -= o.x; y -= o.y; z -= o.z; return *this; }

 private:
  static constexpr S Vec3::*members[3] = {&Vec3::x, &Vec3::y, &Vec3::z};
};

template <class S> BATCHDYN_INLINE Vec3<S> operator*(const S& s, const Vec3<S>& v) { return v * s; }
template <class S> BATCHDYN_INLINE S dot(const Vec3<S>& a, const Vec3<S>& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <class S> BATCHDYN_INLINE Vec3<S> cross(const Vec3<S>& a, const Vec3<S>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// Row-major 3x3 matrix.
template <class S>
struct Mat3 {
  // Not zero-filled: every operation below writes all nine entries (zeroing 9 lanes per
  // temporary showed up as memset in the batched kernel's profile). Use zero() for zeros.
  S m[3][3];

  BATCHDYN_INLINE static Mat3 zero() { Mat3 r; for (auto& row : r.m) for (auto& e : row) e = S(0); return r; }
  BATCHDYN_INLINE static Mat3 identity() { Mat3 r = zero(); r.m[0][0] = r.m[1][1] = r.m[2][2] = S(1); return r; }
  BATCHDYN_INLINE static Mat3 diagonal(const S& a, const S& b, const S& c) {
    Mat3 r = zero(); r.m[0][0] = a; r.m[1][1] = b; r.m[2][2] = c; return r;
  }
  // [v]x, the cross-product matrix: skew(v) * w = v x w.
  BATCHDYN_INLINE static Mat3 skew(const Vec3<S>& v) {
    Mat3 r;
    r.m[0][0] = S(0); r.m[0][1] = -v.z; r.m[0][2] = v.y;
    r.m[1][0] = v.z;  r.m[1][1] = S(0); r.m[1][2] = -v.x;
    r.m[2][0] = -v.y; r.m[2][1] = v.x;  r.m[2][2] = S(0);
    return r;
  }
  BATCHDYN_INLINE S operator()(int r, int c) const { return m[r][c]; }
  BATCHDYN_INLINE S& operator()(int r, int c) { return m[r][c]; }

  BATCHDYN_INLINE Vec3<S> operator*(const Vec3<S>& v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
  // R^T v without forming R^T.
  BATCHDYN_INLINE Vec3<S> transpose_times(const Vec3<S>& v) const {
    return {m[0][0] * v.x + m[1][0] * v.y + m[2][0] * v.z,
            m[0][1] * v.x + m[1][1] * v.y + m[2][1] * v.z,
            m[0][2] * v.x + m[1][2] * v.y + m[2][2] * v.z};
  }
  BATCHDYN_INLINE Mat3 operator*(const Mat3& o) const {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][0] * o.m[0][j] + m[i][1] * o.m[1][j] + m[i][2] * o.m[2][j];
    return r;
  }
  BATCHDYN_INLINE Mat3 operator+(const Mat3& o) const { Mat3 r; for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] + o.m[i][j]; return r; }
  BATCHDYN_INLINE Mat3 operator-(const Mat3& o) const { Mat3 r; for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] - o.m[i][j]; return r; }
  BATCHDYN_INLINE Mat3 operator*(const S& s) const { Mat3 r; for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] * s; return r; }
  BATCHDYN_INLINE Mat3& operator+=(const Mat3& o) { return *this = *this + o; }
  BATCHDYN_INLINE Mat3 transpose() const { Mat3 r; for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r.m[i][j] = m[j][i]; return r; }
  BATCHDYN_INLINE Vec3<S> column(int j) const { return {m[0][j], m[1][j], m[2][j]}; }
};

// R A R^T for symmetric A: one full product and the upper triangle of the second (75 flops
// instead of 90), mirrored.
template <class S> BATCHDYN_INLINE Mat3<S> rotate_symmetric(const Mat3<S>& R, const Mat3<S>& A) {
  const Mat3<S> RA = R * A;
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j) {
      r.m[i][j] = RA.m[i][0] * R.m[j][0] + RA.m[i][1] * R.m[j][1] + RA.m[i][2] * R.m[j][2];
      r.m[j][i] = r.m[i][j];
    }
  return r;
}
// [p]x M, column by column: p x m_j.
template <class S> BATCHDYN_INLINE Mat3<S> skew_times(const Vec3<S>& p, const Mat3<S>& M) {
  Mat3<S> r;
  for (int j = 0; j < 3; ++j) {
    const Vec3<S> c = cross(p, M.column(j));
    r.m[0][j] = c.x; r.m[1][j] = c.y; r.m[2][j] = c.z;
  }
  return r;
}
// M [p]x, row by row: row_i(M [p]x) = row_i(M) x p.
template <class S> BATCHDYN_INLINE Mat3<S> times_skew(const Mat3<S>& M, const Vec3<S>& p) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i) {
    const Vec3<S> c = cross(Vec3<S>{M.m[i][0], M.m[i][1], M.m[i][2]}, p);
    r.m[i][0] = c.x; r.m[i][1] = c.y; r.m[i][2] = c.z;
  }
  return r;
}

// a b^T
template <class S> BATCHDYN_INLINE Mat3<S> outer(const Vec3<S>& a, const Vec3<S>& b) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a[i] * b[j];
  return r;
}

// Rotations about a coordinate axis e_K by an angle with cosine c and sine s (Pinocchio's RX, RY,
// RZ joints): with (K, a, b) cyclic, R_K maps e_a -> c e_a + s e_b and e_b -> -s e_a + c e_b. A
// product with R_K is a rotation in the (a, b) plane, 6 flops per vector, where a general 3x3
// costs 15. K is a template parameter so that every index below is a constant (a runtime
// index into a Vec3 of SIMD lanes costs a chain of branches and spills); with_axis(k, f) turns
// a model's k into one.
template <class F> BATCHDYN_INLINE decltype(auto) with_axis(int k, F&& f) {
  switch (k) {
    case 0: return f(std::integral_constant<int, 0>{});
    case 1: return f(std::integral_constant<int, 1>{});
    default: return f(std::integral_constant<int, 2>{});
  }
}

// Every product below is written as a sum of products with -s where the formula subtracts
// (the same bits: negation is exact): GCC 12 vectorises a pair x*c - y*s / x*s + y*c of
// scalar code into vfmaddsub even under -ffp-contract=off, which would make the W = 1 kernel
// round differently from the lanes (tests/test_lanes.cpp).
template <int K, class S> BATCHDYN_INLINE Mat3<S> axis_rotation(const S& c, const S& s) {
  constexpr int a = (K + 1) % 3, b = (K + 2) % 3;
  Mat3<S> r = Mat3<S>::zero();
  r.m[K][K] = S(1);
  r.m[a][a] = c, r.m[b][a] = s;
  r.m[a][b] = -s, r.m[b][b] = c;
  return r;
}
// R_K v, and R_K^T v.
template <int K, class S> BATCHDYN_INLINE Vec3<S> rotate_about_axis(const S& c, const S& s, const Vec3<S>& v) {
  constexpr int a = (K + 1) % 3, b = (K + 2) % 3;
  const S ns = -s;
  Vec3<S> r;
  r[K] = v[K];
  r[a] = c * v[a] + ns * v[b];
  r[b] = s * v[a] + c * v[b];
  return r;
}
template <int K, class S> BATCHDYN_INLINE Vec3<S> rotate_back_about_axis(const S& c, const S& s, const Vec3<S>& v) {
  return rotate_about_axis<K>(c, S(-s), v);
}
// M R_K (18 flops: columns a and b mix, column K stays).
template <int K, class S> BATCHDYN_INLINE Mat3<S> times_axis_rotation(const Mat3<S>& M, const S& c, const S& s) {
  constexpr int a = (K + 1) % 3, b = (K + 2) % 3;
  const S ns = -s;
  Mat3<S> r;
  for (int i = 0; i < 3; ++i) {
    r.m[i][K] = M.m[i][K];
    r.m[i][a] = M.m[i][a] * c + M.m[i][b] * s;
    r.m[i][b] = M.m[i][b] * c + M.m[i][a] * ns;
  }
  return r;
}
// R_K A R_K^T for symmetric A (27 flops instead of 75): A_KK stays, (A_aK, A_bK) turns as a
// vector, the (a, b) block as a 2x2 symmetric matrix; mirrored.
template <int K, class S> BATCHDYN_INLINE Mat3<S> rotate_symmetric_about_axis(const S& c, const S& s, const Mat3<S>& A) {
  constexpr int a = (K + 1) % 3, b = (K + 2) % 3;
  const S ns = -s;
  Mat3<S> r;
  r.m[K][K] = A.m[K][K];
  r.m[a][K] = r.m[K][a] = c * A.m[a][K] + ns * A.m[b][K];
  r.m[b][K] = r.m[K][b] = s * A.m[a][K] + c * A.m[b][K];
  // T = R2 [[A_aa, A_ab], [A_ab, A_bb]], then T R2^T (upper triangle)
  const S t_aa = c * A.m[a][a] + ns * A.m[a][b], t_ab = c * A.m[a][b] + ns * A.m[b][b];
  const S t_ba = s * A.m[a][a] + c * A.m[a][b], t_bb = s * A.m[a][b] + c * A.m[b][b];
  r.m[a][a] = t_aa * c + t_ab * ns;
  r.m[a][b] = r.m[b][a] = t_aa * s + t_ab * c;
  r.m[b][b] = t_ba * s + t_bb * c;
  return r;
}
// R_K B R_K^T for a general B (36 flops instead of 90): its rows, then its columns, turn in
// the (a, b) plane.
template <int K, class S> BATCHDYN_INLINE Mat3<S> rotate_about_axis(const S& c, const S& s, const Mat3<S>& B) {
  constexpr int a = (K + 1) % 3, b = (K + 2) % 3;
  const S ns = -s;
  Mat3<S> RB;
  for (int j = 0; j < 3; ++j) {
    RB.m[K][j] = B.m[K][j];
    RB.m[a][j] = c * B.m[a][j] + ns * B.m[b][j];
    RB.m[b][j] = s * B.m[a][j] + c * B.m[b][j];
  }
  Mat3<S> r;
  for (int i = 0; i < 3; ++i) {
    r.m[i][K] = RB.m[i][K];
    r.m[i][a] = RB.m[i][a] * c + RB.m[i][b] * ns;
    r.m[i][b] = RB.m[i][a] * s + RB.m[i][b] * c;
  }
  return r;
}

// Spatial motion vector (twist / spatial acceleration): [linear; angular].
template <class S>
struct Motion {
  Vec3<S> linear, angular;
  BATCHDYN_INLINE static Motion zero() { return {Vec3<S>::zero(), Vec3<S>::zero()}; }
  BATCHDYN_INLINE Motion operator+(const Motion& o) const { return {linear + o.linear, angular + o.angular}; }
  BATCHDYN_INLINE Motion operator-(const Motion& o) const { return {linear - o.linear, angular - o.angular}; }
  BATCHDYN_INLINE Motion operator-() const { return {-linear, -angular}; }
  BATCHDYN_INLINE Motion operator*(const S& s) const { return {linear * s, angular * s}; }
  BATCHDYN_INLINE Motion& operator+=(const Motion& o) { linear += o.linear; angular += o.angular; return *this; }
  BATCHDYN_INLINE S operator[](int k) const { return k < 3 ? linear[k] : angular[k - 3]; }
  BATCHDYN_INLINE S& operator[](int k) { return k < 3 ? linear[k] : angular[k - 3]; }
};

// Spatial force vector (wrench): [force; torque].
template <class S>
struct Force {
  Vec3<S> linear, angular;
  BATCHDYN_INLINE static Force zero() { return {Vec3<S>::zero(), Vec3<S>::zero()}; }
  BATCHDYN_INLINE Force operator+(const Force& o) const { return {linear + o.linear, angular + o.angular}; }
  BATCHDYN_INLINE Force operator-(const Force& o) const { return {linear - o.linear, angular - o.angular}; }
  BATCHDYN_INLINE Force operator*(const S& s) const { return {linear * s, angular * s}; }
  BATCHDYN_INLINE Force& operator+=(const Force& o) { linear += o.linear; angular += o.angular; return *this; }
  BATCHDYN_INLINE Force& operator-=(const Force& o) { linear -= o.linear; angular -= o.angular; return *this; }
  BATCHDYN_INLINE S operator[](int k) const { return k < 3 ? linear[k] : angular[k - 3]; }
  BATCHDYN_INLINE S& operator[](int k) { return k < 3 ? linear[k] : angular[k - 3]; }
};

// Power pairing f . m.
template <class S> BATCHDYN_INLINE S dot(const Force<S>& f, const Motion<S>& m) { return dot(f.linear, m.linear) + dot(f.angular, m.angular); }

// m1 x m2 (motion cross product, Featherstone's crm).
template <class S> BATCHDYN_INLINE Motion<S> cross(const Motion<S>& a, const Motion<S>& b) {
  return {cross(a.angular, b.linear) + cross(a.linear, b.angular), cross(a.angular, b.angular)};
}
// m x* f (force cross product, crf).
template <class S> BATCHDYN_INLINE Force<S> cross(const Motion<S>& m, const Force<S>& f) {
  return {cross(m.angular, f.linear), cross(m.angular, f.angular) + cross(m.linear, f.linear)};
}

// Placement aMb of frame b in frame a (rotation R = aRb, translation p = position of b's
// origin in a).
template <class S>
struct Transform {
  Mat3<S> rotation = Mat3<S>::identity();
  Vec3<S> translation = Vec3<S>::zero();

  static Transform identity() { return {Mat3<S>::identity(), Vec3<S>::zero()}; }

  BATCHDYN_INLINE Vec3<S> act_point(const Vec3<S>& x) const { return rotation * x + translation; }

  // aXb m: motion expressed in b -> expressed in a.
  BATCHDYN_INLINE Motion<S> act(const Motion<S>& m) const {
    Motion<S> out;  // formed in place: see act(const Force&)
    out.angular = rotation * m.angular;
    out.linear = rotation * m.linear + cross(translation, out.angular);
    return out;
  }
  // bXa m: motion expressed in a -> expressed in b.
  BATCHDYN_INLINE Motion<S> act_inv(const Motion<S>& m) const {
    return {rotation.transpose_times(m.linear - cross(translation, m.angular)), rotation.transpose_times(m.angular)};
  }
  // aXb* f: force expressed in b -> expressed in a.
  BATCHDYN_INLINE Force<S> act(const Force<S>& f) const {
    // Formed in place, here and below: from `{lin, ...}` with a named Vec3 of lanes, GCC 12
    // copied `lin` through the stack in 8-byte pieces (vpinsrq), a failed store forward per call.
    Force<S> out;
    out.linear = rotation * f.linear;
    out.angular = rotation * f.angular + cross(translation, out.linear);
    return out;
  }
  // force expressed in a -> expressed in b.
  BATCHDYN_INLINE Force<S> act_inv(const Force<S>& f) const {
    return {rotation.transpose_times(f.linear), rotation.transpose_times(f.angular - cross(translation, f.linear))};
  }
  // aMb * bMc = aMc
  BATCHDYN_INLINE Transform operator*(const Transform& o) const { return {rotation * o.rotation, rotation * o.translation + translation}; }
  BATCHDYN_INLINE Transform inverse() const {
    Transform out;  // formed in place: see act(const Force&)
    out.rotation = rotation.transpose();
    out.translation = -(out.rotation * translation);
    return out;
  }
};

// Rigid-body spatial inertia: mass, centre of mass c and rotational inertia about c, all in
// the body frame (10 numbers).
template <class S>
struct RigidInertia {
  S mass{};
  Vec3<S> com = Vec3<S>::zero();
  Mat3<S> inertia_com = Mat3<S>::zero();  // symmetric

  static RigidInertia zero() { return {S(0), Vec3<S>::zero(), Mat3<S>::zero()}; }

  // I m  (momentum of a body moving with twist m)
  BATCHDYN_INLINE Force<S> operator*(const Motion<S>& m) const {
    Force<S> out;  // formed in place: see Transform::act(const Force&)
    out.linear = (m.linear - cross(com, m.angular)) * mass;
    out.angular = inertia_com * m.angular + cross(com, out.linear);
    return out;
  }
  // Inertia expressed in frame a when this one is expressed in b (T = aMb).
  BATCHDYN_INLINE RigidInertia transformed(const Transform<S>& T) const {
    return {mass, T.act_point(com), rotate_symmetric(T.rotation, inertia_com)};
  }
  // Sum of two rigid bodies expressed in the same frame (parallel axis theorem).
  // A massless part (mass 0, possibly a pure rotational inertia) adds its rotational inertia
  // and does not move the centre of mass; two massless parts keep com = 0.
  RigidInertia operator+(const RigidInertia& o) const {
    const S m = mass + o.mass;
    const S inv_m = m > S(0) ? S(1) / m : S(0);
    const Vec3<S> c = (com * mass + o.com * o.mass) * inv_m;
    const Vec3<S> d1 = com - c, d2 = o.com - c;
    // Steiner: I_c += m (|d|^2 I - d d^T) for each part.
    const Mat3<S> shift1 = (Mat3<S>::identity() * dot(d1, d1) - outer(d1, d1)) * mass;
    const Mat3<S> shift2 = (Mat3<S>::identity() * dot(d2, d2) - outer(d2, d2)) * o.mass;
    return {m, c, inertia_com + o.inertia_com + shift1 + shift2};
  }
  // Rotational inertia about the frame origin: Ic - m [c]x[c]x.
  Mat3<S> inertia_origin() const {
    const Mat3<S> cx = Mat3<S>::skew(com);
    return inertia_com - cx * cx * mass;
  }
};

// Articulated-body inertia, a symmetric 6x6 matrix kept as 3x3 blocks
//   [ A   B ]   A = linear-linear (sym), B = linear-angular, C = angular-angular (sym).
//   [ B^T C ]
template <class S>
struct ArticulatedInertia {
  Mat3<S> A = Mat3<S>::zero(), B = Mat3<S>::zero(), C = Mat3<S>::zero();

  BATCHDYN_INLINE static ArticulatedInertia zero() { return {}; }
  BATCHDYN_INLINE static ArticulatedInertia from_rigid(const RigidInertia<S>& I) {
    const Mat3<S> cx = Mat3<S>::skew(I.com);
    return {Mat3<S>::identity() * I.mass, cx * (-I.mass) /* -m [c]x */, I.inertia_origin()};
  }
  BATCHDYN_INLINE Force<S> operator*(const Motion<S>& m) const {
    return {A * m.linear + B * m.angular, B.transpose_times(m.linear) + C * m.angular};
  }
  BATCHDYN_INLINE ArticulatedInertia& operator+=(const ArticulatedInertia& o) { A += o.A; B += o.B; C += o.C; return *this; }
  // this += o * s (54 flops).
  BATCHDYN_INLINE void add_scaled(const ArticulatedInertia& o, const S& s) { A += o.A * s; B += o.B * s; C += o.C * s; }
  // I * (0; w): the force produced by a purely angular motion (revolute joint column).
  BATCHDYN_INLINE Force<S> times_angular(const Vec3<S>& w) const { return {B * w, C * w}; }
  // I * (v; 0): the force produced by a purely linear motion (prismatic joint column).
  BATCHDYN_INLINE Force<S> times_linear(const Vec3<S>& v) const { return {A * v, B.transpose_times(v)}; }
  // Column 3 + k of the 6x6 matrix (I * (0; e_k), k < 3): a ball joint's column.
  BATCHDYN_INLINE Force<S> angular_column(int k) const { return {B.column(k), C.column(k)}; }
  // Column k of the 6x6 matrix, as a force (I * e_k).
  BATCHDYN_INLINE Force<S> column(int k) const {
    Force<S> f;
    for (int r = 0; r < 6; ++r) f[r] = (*this)(r, k);
    return f;
  }
  // this -= (u u^T) * s for a force-like column u (rank-1 update of ABA, D^{-1} = s).
  BATCHDYN_INLINE void subtract_outer(const Force<S>& u, const Force<S>& w) {
    // this -= u w^T where u, w are 6-vectors [lin; ang]
    A = A - outer(u.linear, w.linear);
    B = B - outer(u.linear, w.angular);
    C = C - outer(u.angular, w.angular);
  }
  // this -= u w^T when u w^T is known to be symmetric (U_i D_i^{-1} U_i^T, summed over a joint's
  // columns): the upper triangles of A and C only, mirrored, so the result stays exactly
  // symmetric (42 flops instead of 54).
  BATCHDYN_INLINE void subtract_symmetric_outer(const Force<S>& u, const Force<S>& w) {
    B = B - outer(u.linear, w.angular);
    for (int i = 0; i < 3; ++i)
      for (int j = i; j < 3; ++j) {
        A.m[i][j] = A.m[i][j] - u.linear[i] * w.linear[j];
        C.m[i][j] = C.m[i][j] - u.angular[i] * w.angular[j];
        A.m[j][i] = A.m[i][j];
        C.m[j][i] = C.m[i][j];
      }
  }
  // X* I X^{-1} for X = (I, p), a pure translation: with P = [p]x,
  //   A'' = A,  B'' = B - A P,  C'' = C - P A P + P B + (P B)^T,
  // the products with P as cross products and P A P by its upper triangle (99 flops).
  BATCHDYN_INLINE ArticulatedInertia translated(const Vec3<S>& p) const {
    ArticulatedInertia r;
    translated_entries(p, [&](Mat3<S> ArticulatedInertia::*block, int i, int j, const S& value) BATCHDYN_LAMBDA_INLINE {
      (r.*block).m[i][j] = value;
    });
    return r;
  }
  // out = base + X* I X^{-1} for X = (I, p) (as translated(p), then +=, bit for bit), written
  // entry by entry: the transformed inertia is never stored. `base` may be `out`.
  BATCHDYN_INLINE void add_translated(const Vec3<S>& p, const ArticulatedInertia& base, ArticulatedInertia& out) const {
    translated_entries(p, [&](Mat3<S> ArticulatedInertia::*block, int i, int j, const S& value) BATCHDYN_LAMBDA_INLINE {
      (out.*block).m[i][j] = (base.*block).m[i][j] + value;
    });
  }
  // X* I X^{-1}: inertia expressed in frame a when this one is expressed in b (T = aMb): the
  // blocks rotated (A' = R A R^T, B' = R B R^T, C' = R C R^T; symmetric ones by their upper
  // triangle), then translated by p. ~340 flops instead of ~700 for plain 3x3 products.
  BATCHDYN_INLINE ArticulatedInertia transformed(const Transform<S>& T) const { return rotated(T.rotation).translated(T.translation); }
  // out = base + X* I X^{-1} (add_translated after the rotation).
  BATCHDYN_INLINE void add_transformed(const Transform<S>& T, const ArticulatedInertia& base, ArticulatedInertia& out) const {
    rotated(T.rotation).add_translated(T.translation, base, out);
  }
  // The same for T = (R_k, p), R_k a rotation about e_k with cosine c and sine s (a revolute
  // joint about a coordinate axis behind a translation-only joint placement): the rotations cost
  // 90 flops instead of 240.
  template <int K>
  BATCHDYN_INLINE ArticulatedInertia transformed_about_axis(const S& c, const S& s, const Vec3<S>& p) const {
    return rotated_about_axis<K>(c, s).translated(p);
  }
  template <int K>
  BATCHDYN_INLINE void add_transformed_about_axis(const S& c, const S& s, const Vec3<S>& p, const ArticulatedInertia& base,
                                                  ArticulatedInertia& out) const {
    rotated_about_axis<K>(c, s).add_translated(p, base, out);
  }
  BATCHDYN_INLINE S operator()(int r, int c) const {
    if (r < 3) return c < 3 ? A(r, c) : B(r, c - 3);
    return c < 3 ? B(c, r - 3) : C(r - 3, c - 3);
  }

 private:
  BATCHDYN_INLINE ArticulatedInertia rotated(const Mat3<S>& R) const {
    return {rotate_symmetric(R, A), R * B * R.transpose(), rotate_symmetric(R, C)};
  }
  template <int K>
  BATCHDYN_INLINE ArticulatedInertia rotated_about_axis(const S& c, const S& s) const {
    return {rotate_symmetric_about_axis<K>(c, s, A), rotate_about_axis<K>(c, s, B), rotate_symmetric_about_axis<K>(c, s, C)};
  }
  // Every entry of translated(p), handed to put(block, i, j, value) once (the symmetric
  // blocks' lower triangles as mirrors of the upper ones).
  template <class Put>
  BATCHDYN_INLINE void translated_entries(const Vec3<S>& p, Put&& put) const {
    const Mat3<S> AP = times_skew(A, p);
    const Mat3<S> PB = skew_times(p, B);
    const S pv[3] = {p.x, p.y, p.z};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        put(&ArticulatedInertia::A, i, j, A.m[i][j]);
        put(&ArticulatedInertia::B, i, j, B.m[i][j] - AP.m[i][j]);
      }
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i <= j; ++i) {
        const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        const S PAP_ij = pv[i1] * AP.m[i2][j] - pv[i2] * AP.m[i1][j];  // (P A P)_{ij} = (p x (A P)_j)_i
        const S C_ij = C.m[i][j] - PAP_ij + PB.m[i][j] + PB.m[j][i];
        put(&ArticulatedInertia::C, i, j, C_ij);
        if (i != j) put(&ArticulatedInertia::C, j, i, C_ij);
      }
  }
};

// Rotation about a unit axis by angle (Rodrigues).
template <class S> Mat3<S> axis_angle_rotation(const Vec3<S>& axis, const S& angle) {
  using std::cos;
  using std::sin;
  const S c = cos(angle), s = sin(angle);
  const Mat3<S> K = Mat3<S>::skew(axis);
  return Mat3<S>::identity() + K * s + K * K * (S(1) - c);
}

// URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll).
template <class S> Mat3<S> rpy_rotation(const S& roll, const S& pitch, const S& yaw) {
  const Vec3<S> ex{S(1), S(0), S(0)}, ey{S(0), S(1), S(0)}, ez{S(0), S(0), S(1)};
  return axis_angle_rotation(ez, yaw) * axis_angle_rotation(ey, pitch) * axis_angle_rotation(ex, roll);
}

// Unit quaternion (x, y, z, w) -> rotation matrix.
template <class S> Mat3<S> quaternion_rotation(const S& x, const S& y, const S& z, const S& w) {
  Mat3<S> R;
  R.m[0][0] = S(1) - S(2) * (y * y + z * z); R.m[0][1] = S(2) * (x * y - z * w); R.m[0][2] = S(2) * (x * z + y * w);
  R.m[1][0] = S(2) * (x * y + z * w); R.m[1][1] = S(1) - S(2) * (x * x + z * z); R.m[1][2] = S(2) * (y * z - x * w);
  R.m[2][0] = S(2) * (x * z - y * w); R.m[2][1] = S(2) * (y * z + x * w); R.m[2][2] = S(1) - S(2) * (x * x + y * y);
  return R;
}

// Numbers of one scalar type converted to another lane type S (the model's doubles to the
// lanes a kernel runs on): cast3<S>(v), cast3<S>(m), cast_transform<S>(M), cast_inertia<S>(I).
template <class S, class D> Vec3<S> cast3(const Vec3<D>& v) { return {S(v.x), S(v.y), S(v.z)}; }
template <class S, class D> Mat3<S> cast3(const Mat3<D>& m) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = S(m.m[i][j]);
  return r;
}
template <class S, class D> Transform<S> cast_transform(const Transform<D>& T) {
  return {cast3<S>(T.rotation), cast3<S>(T.translation)};
}
template <class S, class D> RigidInertia<S> cast_inertia(const RigidInertia<D>& I) {
  return {S(I.mass), cast3<S>(I.com), cast3<S>(I.inertia_com)};
}

}  // namespace batchdyn
