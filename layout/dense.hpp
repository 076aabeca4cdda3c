// Dense linear algebra shared by every layer: the Eigen vector and matrix types of the
// reference functions, and the small damped Cholesky factorisation the Delassus solvers and
// proxBBO's multiplier blocks use on lanes (no pivoting: branch-free per lane).
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace batchdyn {

template <class S> using VectorX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <class S> using MatrixX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

// L (m x m, row-major, lower triangle; the strict upper triangle is set to zero) with
// L L^T = G + ρ I, G and L with row stride `stride` (L may be G: only G's lower triangle is
// read, each entry before L's is written there). Preconditions: G symmetric positive
// semi-definite, ρ > 0 (or G positive definite and ρ = 0). Each pivot's square is at least ρ in
// exact arithmetic; on a singular G (redundant rows, a row no joint can move) rounding can take
// it below ρ, or below zero where the rows are scaled up, so it is taken as at least ρ: the
// factor stays finite. Lane-generic. O(m^3 / 6).
template <class S>
void damped_cholesky_strided(const S* G, int m, int stride, const S& rho, S* L) {
  using std::max;
  using std::sqrt;
  for (int j = 0; j < m; ++j) {
    S diagonal = G[j * stride + j] + rho;
    for (int k = 0; k < j; ++k) diagonal -= L[j * stride + k] * L[j * stride + k];
    const S pivot = sqrt(max(diagonal, rho));
    L[j * stride + j] = pivot;
    const S inverse = S(1) / pivot;
    for (int i = j + 1; i < m; ++i) {
      S s = G[i * stride + j];
      for (int k = 0; k < j; ++k) s -= L[i * stride + k] * L[j * stride + k];
      L[i * stride + j] = s * inverse;
      L[j * stride + i] = S(0);
    }
  }
}

// damped_cholesky_strided on an m x m matrix stored with row stride m.
template <class S>
void damped_cholesky(const S* G, int m, const S& rho, S* L) {
  damped_cholesky_strided(G, m, m, rho, L);
}

// x <- (L L^T)^{-1} x in place, for L from damped_cholesky_strided (row stride `stride`).
// Lane-generic. O(m^2).
template <class S>
void cholesky_solve_strided(const S* L, int m, int stride, S* x) {
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k < i; ++k) x[i] -= L[i * stride + k] * x[k];
    x[i] = x[i] / L[i * stride + i];
  }
  for (int i = m - 1; i >= 0; --i) {
    for (int k = i + 1; k < m; ++k) x[i] -= L[k * stride + i] * x[k];
    x[i] = x[i] / L[i * stride + i];
  }
}

// x <- (L L^T)^{-1} x in place, for L from damped_cholesky. Lane-generic. O(m^2).
template <class S>
void cholesky_solve(const S* L, int m, S* x) {
  cholesky_solve_strided(L, m, m, x);
}

}  // namespace batchdyn
