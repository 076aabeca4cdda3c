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
// L L^T = G + ρ I. Preconditions: G symmetric positive semi-definite, ρ > 0 (or G positive
// definite and ρ = 0). Lane-generic. O(m^3 / 6).
template <class S>
void damped_cholesky(const S* G, int m, const S& rho, S* L) {
  using std::sqrt;
  for (int j = 0; j < m; ++j) {
    S diagonal = G[j * m + j] + rho;
    for (int k = 0; k < j; ++k) diagonal -= L[j * m + k] * L[j * m + k];
    const S pivot = sqrt(diagonal);
    L[j * m + j] = pivot;
    const S inverse = S(1) / pivot;
    for (int i = j + 1; i < m; ++i) {
      S s = G[i * m + j];
      for (int k = 0; k < j; ++k) s -= L[i * m + k] * L[j * m + k];
      L[i * m + j] = s * inverse;
      L[j * m + i] = S(0);
    }
  }
}

// x <- (L L^T)^{-1} x in place, for L from damped_cholesky. Lane-generic. O(m^2).
template <class S>
void cholesky_solve(const S* L, int m, S* x) {
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k < i; ++k) x[i] -= L[i * m + k] * x[k];
    x[i] = x[i] / L[i * m + i];
  }
  for (int i = m - 1; i >= 0; --i) {
    for (int k = i + 1; k < m; ++k) x[i] -= L[k * m + i] * x[k];
    x[i] = x[i] / L[i * m + i];
  }
}

}  // namespace batchdyn
