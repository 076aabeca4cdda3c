// layout/dense.hpp: the small damped Cholesky factorisation, its two solves (dividing by the
// pivots, or multiplying by the reciprocals the factorisation stored) and the matrix-vector
// product that ADMM and the polishing run on lanes, against Eigen's dense algebra, for every
// size around the four-row blocks, and each SIMD lane against the W = 1 path bit for bit.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <random>
#include <vector>

#include "layout/dense.hpp"
#include "layout/lanes.hpp"

using namespace batchdyn;

namespace {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A symmetric positive semi-definite m x m matrix of rank `rank` (redundant rows when rank < m).
RowMatrixXd random_psd(int m, int rank, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd A(m, rank);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < rank; ++j) A(i, j) = normal(rng);
  return A * A.transpose();
}

// The m x m matrix M stored with row stride `stride` (the columns past m hold garbage).
std::vector<double> strided(const RowMatrixXd& M, int stride) {
  std::vector<double> out(static_cast<size_t>(M.rows() * stride), 1e300);
  for (int i = 0; i < M.rows(); ++i)
    for (int j = 0; j < M.cols(); ++j) out[static_cast<size_t>(i * stride + j)] = M(i, j);
  return out;
}

}  // namespace

TEST_CASE("the damped Cholesky factor's reciprocal pivots are 1 / L_jj, and the solve by them solves (G + rho I) x = b as the dividing one does") {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  for (int m = 1; m <= 13; ++m)
    for (const int rank : {m, (m + 1) / 2}) {  // full rank, and redundant rows
      CAPTURE(m);
      CAPTURE(rank);
      const RowMatrixXd G = random_psd(m, rank, rng);
      const double rho = 1e-6;
      const int stride = m + 3;
      std::vector<double> L = strided(G, stride), inverse_pivot(static_cast<size_t>(m));
      damped_cholesky_strided(L.data(), m, stride, rho, L.data(), inverse_pivot.data());  // in place
      for (int j = 0; j < m; ++j) CHECK(inverse_pivot[static_cast<size_t>(j)] == 1.0 / L[static_cast<size_t>(j * stride + j)]);
      RowMatrixXd factor(m, m);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) factor(i, j) = L[static_cast<size_t>(i * stride + j)];
      const Eigen::MatrixXd damped = G + rho * Eigen::MatrixXd::Identity(m, m);
      CHECK((factor * factor.transpose() - damped).norm() <= 1e-12 * (1 + damped.norm()));
      CHECK(factor.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0);

      Eigen::VectorXd b(m);
      for (int i = 0; i < m; ++i) b[i] = normal(rng);
      const Eigen::VectorXd oracle = damped.ldlt().solve(b);
      Eigen::VectorXd divided = b, multiplied = b;
      cholesky_solve_strided(L.data(), m, stride, divided.data());
      cholesky_solve_strided(L.data(), inverse_pivot.data(), m, stride, multiplied.data());
      const double scale = 1 + oracle.norm();
      CHECK((divided - oracle).norm() <= 1e-6 * scale);  // rho = 1e-6 on a singular G: cond ~ 1e7
      CHECK((multiplied - oracle).norm() <= 1e-6 * scale);
      CHECK((multiplied - divided).norm() <= 1e-7 * scale);
      CHECK((damped * multiplied - b).norm() <= 1e-12 * (b.norm() + damped.norm() * multiplied.norm()));  // backward stable
    }
}

TEST_CASE("the damped Cholesky factorisation and both solves compute in each SIMD lane what they compute on scalars, bit for bit") {
  using Lane = SimdLane<double>;
  constexpr int W = lane_width<Lane>;
  std::mt19937 rng(12);
  std::normal_distribution<double> normal;
  for (int m = 1; m <= 13; ++m) {
    CAPTURE(m);
    std::vector<RowMatrixXd> G(W);
    std::vector<Eigen::VectorXd> b(W);
    for (int w = 0; w < W; ++w) {
      G[static_cast<size_t>(w)] = random_psd(m, w % 2 ? m : (m + 1) / 2, rng);
      b[static_cast<size_t>(w)] = Eigen::VectorXd::NullaryExpr(m, [&] { return normal(rng); });
    }
    std::vector<Lane> lanes_G(static_cast<size_t>(m * m)), lanes_factor(lanes_G.size()), lanes_inverse(static_cast<size_t>(m)),
        lanes_divided(static_cast<size_t>(m)), lanes_multiplied(static_cast<size_t>(m));
    alignas(64) double buffer[W];
    for (int i = 0; i < m * m; ++i) {
      for (int w = 0; w < W; ++w) buffer[w] = G[static_cast<size_t>(w)].data()[i];
      lanes_G[static_cast<size_t>(i)] = Lane::load_aligned(buffer);
    }
    for (int i = 0; i < m; ++i) {
      for (int w = 0; w < W; ++w) buffer[w] = b[static_cast<size_t>(w)][i];
      lanes_divided[static_cast<size_t>(i)] = lanes_multiplied[static_cast<size_t>(i)] = Lane::load_aligned(buffer);
    }
    damped_cholesky(lanes_G.data(), m, Lane(1e-6), lanes_factor.data(), lanes_inverse.data());
    cholesky_solve(lanes_factor.data(), m, lanes_divided.data());
    cholesky_solve(lanes_factor.data(), lanes_inverse.data(), m, lanes_multiplied.data());
    for (int w = 0; w < W; ++w) {
      CAPTURE(w);
      std::vector<double> factor(static_cast<size_t>(m * m)), inverse(static_cast<size_t>(m));
      damped_cholesky(G[static_cast<size_t>(w)].data(), m, 1e-6, factor.data(), inverse.data());
      Eigen::VectorXd divided = b[static_cast<size_t>(w)], multiplied = divided;
      cholesky_solve(factor.data(), m, divided.data());
      cholesky_solve(factor.data(), inverse.data(), m, multiplied.data());
      int differing = 0;
      for (int i = 0; i < m * m; ++i) differing += lanes_factor[static_cast<size_t>(i)].get(w) != factor[static_cast<size_t>(i)];
      for (int i = 0; i < m; ++i) {
        differing += lanes_inverse[static_cast<size_t>(i)].get(w) != inverse[static_cast<size_t>(i)];
        differing += lanes_divided[static_cast<size_t>(i)].get(w) != divided[i];
        differing += lanes_multiplied[static_cast<size_t>(i)].get(w) != multiplied[i];
      }
      CHECK(differing == 0);
    }
  }
}

TEST_CASE("matrix_times_vector is the dense product A x (+ offset) for every row count around its four-row blocks, with a row stride") {
  std::mt19937 rng(13);
  std::normal_distribution<double> normal;
  for (int rows = 1; rows <= 13; ++rows)
    for (const int cols : {1, 5, 12}) {
      CAPTURE(rows);
      CAPTURE(cols);
      RowMatrixXd A(rows, cols);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) A(i, j) = normal(rng);
      Eigen::VectorXd x(cols), offset(rows);
      for (int j = 0; j < cols; ++j) x[j] = normal(rng);
      for (int i = 0; i < rows; ++i) offset[i] = normal(rng);
      const int stride = cols + 2;
      const std::vector<double> stored = strided(A, stride);
      Eigen::VectorXd product(rows), shifted(rows);
      matrix_times_vector(stored.data(), rows, cols, stride, x.data(), static_cast<const double*>(nullptr), product.data());
      matrix_times_vector(stored.data(), rows, cols, stride, x.data(), offset.data(), shifted.data());
      for (int i = 0; i < rows; ++i) {  // each row summed in column order, as a row-by-row loop
        double sum = 0, sum_offset = offset[i];
        for (int j = 0; j < cols; ++j) sum += A(i, j) * x[j], sum_offset += A(i, j) * x[j];
        CHECK(product[i] == sum);
        CHECK(shifted[i] == sum_offset);
      }
      CHECK((product - A * x).norm() <= 1e-14 * (1 + A.norm() * x.norm()));
    }
}
