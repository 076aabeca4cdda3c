// Spatial algebra against plain 6x6 matrices: the structured operations must equal the
// textbook matrix formulas.
#include <bit>
#include <cstdint>

#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec6 = Eigen::Matrix<double, 6, 1>;

Eigen::Matrix3d to_eigen(const Mat3d& m) {
  Eigen::Matrix3d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = m(i, j);
  return r;
}
Eigen::Matrix3d skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d s;
  s << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return s;
}
// Motion transform aXb as a 6x6 matrix in [linear; angular] order.
Mat6 motion_matrix(const Transformd& T) {
  const Eigen::Matrix3d R = to_eigen(T.rotation);
  const Eigen::Vector3d p(T.translation.x, T.translation.y, T.translation.z);
  Mat6 X = Mat6::Zero();
  X.topLeftCorner<3, 3>() = R;
  X.topRightCorner<3, 3>() = skew(p) * R;
  X.bottomRightCorner<3, 3>() = R;
  return X;
}
Mat6 to_eigen(const ArticulatedInertia<double>& I) {
  Mat6 m;
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) m(r, c) = I(r, c);
  return m;
}
Transformd random_transform(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  return {exp3(Vec3d{n(rng), n(rng), n(rng)}), {n(rng), n(rng), n(rng)}};
}
RigidInertiad random_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::normal_distribution<double> n(0, 1);
  RigidInertiad I;
  I.mass = u(rng);
  I.com = {n(rng), n(rng), n(rng)};
  const Mat3d R = exp3(Vec3d{n(rng), n(rng), n(rng)});
  I.inertia_com = R * Mat3d::diagonal(u(rng), u(rng), u(rng)) * R.transpose();
  return I;
}
Motion<double> random_motion(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  return {{n(rng), n(rng), n(rng)}, {n(rng), n(rng), n(rng)}};
}
}  // namespace

TEST_CASE("motion and force transforms equal the 6x6 Plücker matrices and invert each other") {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    const Transformd T = random_transform(rng);
    const Motion<double> m = random_motion(rng);
    const Mat6 X = motion_matrix(T);
    CHECK(relative_error(to_vector(T.act(m)), X * to_vector(m)) < 1e-13);
    CHECK(relative_error(to_vector(T.act_inv(T.act(m))), to_vector(m)) < 1e-13);
    // Force transform is X^{-T}.
    Force<double> f{m.linear, m.angular};
    const Force<double> g = T.act(f);
    Vec6 fv, gv;
    for (int k = 0; k < 6; ++k) fv[k] = f[k], gv[k] = g[k];
    CHECK(relative_error(gv, X.inverse().transpose() * fv) < 1e-12);
    // Power is frame invariant.
    CHECK(std::abs(dot(T.act(f), T.act(m)) - dot(f, m)) < 1e-12);
  }
}

TEST_CASE("rigid inertia times motion equals the 6x6 inertia matrix and transforms as X^-T I X^-1") {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    const RigidInertiad I = random_inertia(rng);
    const Mat6 I6 = to_eigen(ArticulatedInertia<double>::from_rigid(I));
    const Motion<double> m = random_motion(rng);
    const Force<double> f = I * m;
    Vec6 fv;
    for (int k = 0; k < 6; ++k) fv[k] = f[k];
    CHECK(relative_error(fv, I6 * to_vector(m)) < 1e-13);
    CHECK(relative_error(I6, I6.transpose()) < 1e-14);
    const Transformd T = random_transform(rng);
    const Mat6 Xinv = motion_matrix(T).inverse();
    const Mat6 expected = Xinv.transpose() * I6 * Xinv;
    CHECK(relative_error(to_eigen(ArticulatedInertia<double>::from_rigid(I.transformed(T))), expected) < 1e-12);
    CHECK(relative_error(to_eigen(ArticulatedInertia<double>::from_rigid(I).transformed(T)), expected) < 1e-12);
  }
}

TEST_CASE("adding rigid inertias equals adding their 6x6 matrices") {
  std::mt19937 rng(3);
  const RigidInertiad a = random_inertia(rng), b = random_inertia(rng);
  const Mat6 sum = to_eigen(ArticulatedInertia<double>::from_rigid(a)) + to_eigen(ArticulatedInertia<double>::from_rigid(b));
  CHECK(relative_error(to_eigen(ArticulatedInertia<double>::from_rigid(a + b)), sum) < 1e-12);
}

TEST_CASE("motion and force cross products match Featherstone's crm and crf matrices") {
  std::mt19937 rng(4);
  const Motion<double> a = random_motion(rng), b = random_motion(rng);
  const Eigen::Vector3d v(a.linear.x, a.linear.y, a.linear.z), w(a.angular.x, a.angular.y, a.angular.z);
  Mat6 crm = Mat6::Zero();
  crm.topLeftCorner<3, 3>() = skew(w);
  crm.topRightCorner<3, 3>() = skew(v);
  crm.bottomRightCorner<3, 3>() = skew(w);
  CHECK(relative_error(to_vector(cross(a, b)), crm * to_vector(b)) < 1e-14);
  const Force<double> f{b.linear, b.angular};
  const Force<double> g = cross(a, f);
  Vec6 gv;
  for (int k = 0; k < 6; ++k) gv[k] = g[k];
  CHECK(relative_error(gv, -crm.transpose() * to_vector(b)) < 1e-14);
}

TEST_CASE("exp6 and log6 are inverse, including rotations near pi and near zero") {
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0, 1);
  for (double angle : {0.0, 1e-9, 1e-4, 0.5, 2.0, M_PI - 1e-4, M_PI - 1e-7}) {
    Vec3d axis{n(rng), n(rng), n(rng)};
    axis = axis * (1.0 / std::sqrt(dot(axis, axis)));
    const Motion<double> m{{n(rng), n(rng), n(rng)}, axis * angle};
    const Motion<double> back = log6(exp6(m));
    CHECK(relative_error(to_vector(back), to_vector(m)) < 1e-7);
    CHECK(relative_error(to_matrix(exp6(back)), to_matrix(exp6(m))) < 1e-12);
  }
}

TEST_CASE("a rotation about a coordinate axis behind a translation moves vectors, motions, forces and articulated inertias as the 6x6 Plucker matrices do") {
  // The coordinate-axis joints' path (layout/spatial.hpp, kernels/tree/joint.hpp): plane rotations
  // and a translation instead of a general 3x3 rotation, for each axis K.
  std::mt19937 rng(17);
  std::normal_distribution<double> n(0, 1);
  const auto check_axis = [&](auto K) {
    constexpr int k = decltype(K)::value;
    CAPTURE(k);
    const double angle = n(rng), c = std::cos(angle), s = std::sin(angle);
    const Mat3d R = axis_rotation<k>(c, s);
    Vec3d axis = Vec3d::zero();
    axis[k] = 1.0;
    CHECK((to_eigen(R) - to_eigen(axis_angle_rotation(axis, angle))).cwiseAbs().maxCoeff() < 1e-15);
    const Transformd T{R, {n(rng), n(rng), n(rng)}};
    const Vec3d v{n(rng), n(rng), n(rng)};
    const Vec3d Rv = rotate_about_axis<k>(c, s, v), RTv = rotate_back_about_axis<k>(c, s, v);
    const Vec3d expected_Rv = R * v, expected_RTv = R.transpose_times(v);
    for (int i = 0; i < 3; ++i) {
      CHECK(Rv[i] == doctest::Approx(expected_Rv[i]).epsilon(1e-14));
      CHECK(RTv[i] == doctest::Approx(expected_RTv[i]).epsilon(1e-14));
    }
    const Mat3d M = exp3(Vec3d{n(rng), n(rng), n(rng)});
    CHECK((to_eigen(times_axis_rotation<k>(M, c, s)) - to_eigen(M * R)).cwiseAbs().maxCoeff() < 1e-14);
    // An articulated (not rigid) inertia: a rigid one minus a symmetric rank-1 term.
    ArticulatedInertia<double> H = ArticulatedInertia<double>::from_rigid(random_inertia(rng));
    const Motion<double> m = random_motion(rng);
    const Force<double> u{m.linear * 0.3, m.angular * 0.3};
    H.subtract_symmetric_outer(u, u);
    const Mat6 X = motion_matrix(T), X_inverse = X.inverse();
    const Mat6 expected = X_inverse.transpose() * to_eigen(H) * X_inverse;
    CHECK((to_eigen(H.transformed_about_axis<k>(c, s, T.translation)) - expected).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((to_eigen(H.transformed(T)) - expected).cwiseAbs().maxCoeff() < 1e-12);
  };
  check_axis(std::integral_constant<int, 0>{});
  check_axis(std::integral_constant<int, 1>{});
  check_axis(std::integral_constant<int, 2>{});
}

TEST_CASE("adding a transformed articulated inertia to a base as it is formed equals transforming, then adding, bit for bit") {
  // add_transformed / add_transformed_about_axis (the backward sweeps' carry into the parent,
  // kernels/tree/joint.hpp) never store the transformed inertia; the sum must not change for it,
  // also when the base is the output itself (H^A_λ += ...).
  std::mt19937 rng(23);
  std::normal_distribution<double> n(0, 1);
  const auto same_bits = [](const ArticulatedInertia<double>& a, const ArticulatedInertia<double>& b) {
    for (int r = 0; r < 6; ++r)
      for (int k = 0; k < 6; ++k)
        if (std::bit_cast<std::uint64_t>(a(r, k)) != std::bit_cast<std::uint64_t>(b(r, k))) return false;
    return true;
  };
  const auto check_axis = [&](auto K) {
    constexpr int k = decltype(K)::value;
    CAPTURE(k);
    const double angle = n(rng), c = std::cos(angle), s = std::sin(angle);
    const Transformd T{axis_rotation<k>(c, s), {n(rng), n(rng), n(rng)}};
    const Transformd general{exp3(Vec3d{n(rng), n(rng), n(rng)}), {n(rng), n(rng), n(rng)}};
    const ArticulatedInertia<double> H = ArticulatedInertia<double>::from_rigid(random_inertia(rng));
    const ArticulatedInertia<double> base = ArticulatedInertia<double>::from_rigid(random_inertia(rng));
    ArticulatedInertia<double> expected = base, out;
    expected += H.transformed_about_axis<k>(c, s, T.translation);
    H.add_transformed_about_axis<k>(c, s, T.translation, base, out);
    CHECK(same_bits(out, expected));
    ArticulatedInertia<double> in_place = base;
    H.add_transformed_about_axis<k>(c, s, T.translation, in_place, in_place);
    CHECK(same_bits(in_place, expected));
    expected = base;
    expected += H.transformed(general);
    in_place = base;
    H.add_transformed(general, in_place, in_place);
    CHECK(same_bits(in_place, expected));
  };
  check_axis(std::integral_constant<int, 0>{});
  check_axis(std::integral_constant<int, 1>{});
  check_axis(std::integral_constant<int, 2>{});
}

TEST_CASE("projecting a joint out by the upper triangles keeps the articulated inertia exactly symmetric and equals the full rank-1 update") {
  std::mt19937 rng(23);
  const ArticulatedInertia<double> H = ArticulatedInertia<double>::from_rigid(random_inertia(rng));
  const Motion<double> m = random_motion(rng);
  const Force<double> U{m.linear, m.angular};
  const Force<double> U_Dinv = U * (1.0 / 3.7);  // U D^-1 for a 1-dof joint
  ArticulatedInertia<double> symmetric = H, full = H;
  symmetric.subtract_symmetric_outer(U_Dinv, U);
  full.subtract_outer(U_Dinv, U);
  const Mat6 S = to_eigen(symmetric);
  CHECK((S - S.transpose()).cwiseAbs().maxCoeff() == 0.0);
  CHECK((S - to_eigen(full)).cwiseAbs().maxCoeff() < 1e-14);
}
