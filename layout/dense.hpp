// Dense linear algebra shared by every layer: the Eigen vector and matrix types of the
// reference functions, and the small damped Cholesky factorisation and matrix-vector product
// the Delassus solvers and proxBBO's multiplier blocks use on lanes (no pivoting: branch-free
// per lane).
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
// factor stays finite. When `inverse_pivot` (m) is given, it receives 1 / L_jj for the solve
// that multiplies instead of dividing. Lane-generic. O(m^3 / 6).
template <class S>
void damped_cholesky_strided(const S* G, int m, int stride, const S& rho, S* L, S* inverse_pivot = nullptr) {
  using std::max;
  using std::sqrt;
  for (int j = 0; j < m; ++j) {
    S diagonal = G[j * stride + j] + rho;
    for (int k = 0; k < j; ++k) diagonal -= L[j * stride + k] * L[j * stride + k];
    const S pivot = sqrt(max(diagonal, rho));
    L[j * stride + j] = pivot;
    const S inverse = S(1) / pivot;
    if (inverse_pivot) inverse_pivot[j] = inverse;
    // Column j below the pivot, R rows at a time: R independent chains of subtractions (each
    // row's in the order of a row-by-row loop), where one row's chain would wait on latency.
    const auto column_rows = [&]<int R>(int i) {
      S s[R];
      for (int r = 0; r < R; ++r) s[r] = G[(i + r) * stride + j];
      for (int k = 0; k < j; ++k) {
        const S ljk = L[j * stride + k];
        for (int r = 0; r < R; ++r) s[r] -= L[(i + r) * stride + k] * ljk;
      }
      for (int r = 0; r < R; ++r) L[(i + r) * stride + j] = s[r] * inverse, L[j * stride + i + r] = S(0);
    };
    int i = j + 1;
    for (; i + 4 <= m; i += 4) column_rows.template operator()<4>(i);
    for (; i < m; ++i) column_rows.template operator()<1>(i);
  }
}

// damped_cholesky_strided on an m x m matrix stored with row stride m.
template <class S>
void damped_cholesky(const S* G, int m, const S& rho, S* L, S* inverse_pivot = nullptr) {
  damped_cholesky_strided(G, m, m, rho, L, inverse_pivot);
}

// out = offset + A x (offset optional; out must not alias A or x), A (rows x cols) with row
// stride `stride`. Four rows at a time: four independent sums, each in the order of a
// row-by-row loop. Lane-generic. O(rows cols).
template <class S>
void matrix_times_vector(const S* A, int rows, int cols, int stride, const S* x, const S* offset, S* out) {
  const auto sum_rows = [&]<int R>(int i) {
    S s[R];
    for (int r = 0; r < R; ++r) s[r] = offset ? offset[i + r] : S(0);
    for (int j = 0; j < cols; ++j) {
      const S xj = x[j];
      for (int r = 0; r < R; ++r) s[r] += A[(i + r) * stride + j] * xj;
    }
    for (int r = 0; r < R; ++r) out[i + r] = s[r];
  };
  int i = 0;
  for (; i + 4 <= rows; i += 4) sum_rows.template operator()<4>(i);
  for (; i < rows; ++i) sum_rows.template operator()<1>(i);
}

namespace detail {
// The two triangular solves of cholesky_solve_strided, each reading L by rows (L and the
// matrix it factors outgrow the L1 cache on lanes from m ~ 20: by columns, every entry would be a
// line of its own). `unpivot(j, v)` is v / L_jj.
// The forward solve takes R rows at a time: R independent sums over the entries already known
// (a single row's sum is one dependent chain), then the block's own triangle. Each entry
// subtracts in the order of a row-by-row sum, so the result is the same bit for bit.
// The backward solve subtracts row j of L (column j of L^T) from the entries before it once x_j
// is known: their updates are independent of each other.
template <class S, class Unpivot>
void cholesky_substitute(const S* L, int m, int stride, S* x, Unpivot&& unpivot) {
  const auto forward_rows = [&]<int R>(int i) {  // L y = x on rows i .. i + R - 1
    S s[R];
    for (int r = 0; r < R; ++r) s[r] = x[i + r];
    for (int j = 0; j < i; ++j) {
      const S yj = x[j];
      for (int r = 0; r < R; ++r) s[r] -= L[(i + r) * stride + j] * yj;
    }
    for (int r = 0; r < R; ++r) {
      for (int q = 0; q < r; ++q) s[r] -= L[(i + r) * stride + i + q] * x[i + q];
      x[i + r] = unpivot(i + r, s[r]);
    }
  };
  int row = 0;
  for (; row + 4 <= m; row += 4) forward_rows.template operator()<4>(row);
  for (; row < m; ++row) forward_rows.template operator()<1>(row);
  for (int j = m - 1; j >= 0; --j) {  // L^T x = y: row j of L is column j of L^T
    const S xj = unpivot(j, x[j]);
    x[j] = xj;
    for (int i = 0; i < j; ++i) x[i] -= L[j * stride + i] * xj;
  }
}
}  // namespace detail

// x <- (L L^T)^{-1} x in place, for L from damped_cholesky_strided (row stride `stride`).
// Lane-generic. O(m^2).
template <class S>
void cholesky_solve_strided(const S* L, int m, int stride, S* x) {
  detail::cholesky_substitute(L, m, stride, x, [&](int j, const S& v) { return v / L[j * stride + j]; });
}

// The same with the reciprocal pivots damped_cholesky_strided stored (`inverse_pivot`, m): 2m
// multiplications in place of 2m divisions, which on wide lanes cost more than the rest.
template <class S>
void cholesky_solve_strided(const S* L, const S* inverse_pivot, int m, int stride, S* x) {
  detail::cholesky_substitute(L, m, stride, x, [&](int j, const S& v) { return v * inverse_pivot[j]; });
}

// x <- (L L^T)^{-1} x in place, for L from damped_cholesky. Lane-generic. O(m^2).
template <class S>
void cholesky_solve(const S* L, int m, S* x) {
  cholesky_solve_strided(L, m, m, x);
}

// x <- (L L^T)^{-1} x in place, for L and its reciprocal pivots from damped_cholesky. O(m^2).
template <class S>
void cholesky_solve(const S* L, const S* inverse_pivot, int m, S* x) {
  cholesky_solve_strided(L, inverse_pivot, m, m, x);
}

}  // namespace batchdyn
