// Cholesky factorisation of a small symmetric positive definite n x n matrix (n <= 6), in
// place in a fixed 6x6 row-major array, written on the lane type S (no branches on values).
// Used for the joint-space D_i = S_i^T I^A_i S_i blocks of ABA (1x1 for 1-dof joints,
// 6x6 for the free-flyer root).
#pragma once

#include <array>
#include <cmath>

namespace batchdyn {

template <class S>
struct SmallCholesky {
  std::array<S, 36> L{};  // lower factor, row-major, D = L L^T
  int n = 0;

  // Factor the symmetric matrix given by its full row-major storage `D` (n x n, stride 6).
  void factor(const std::array<S, 36>& D, int size) {
    using std::sqrt;
    n = size;
    for (int j = 0; j < n; ++j) {
      S diag = D[j * 6 + j];
      for (int k = 0; k < j; ++k) diag -= L[j * 6 + k] * L[j * 6 + k];
      const S ljj = sqrt(diag);
      L[j * 6 + j] = ljj;
      const S inv = S(1) / ljj;
      for (int i = j + 1; i < n; ++i) {
        S s = D[i * 6 + j];
        for (int k = 0; k < j; ++k) s -= L[i * 6 + k] * L[j * 6 + k];
        L[i * 6 + j] = s * inv;
      }
    }
  }
  // x <- D^{-1} x
  void solve_in_place(S* x) const {
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < i; ++k) x[i] -= L[i * 6 + k] * x[k];
      x[i] = x[i] / L[i * 6 + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      for (int k = i + 1; k < n; ++k) x[i] -= L[k * 6 + i] * x[k];
      x[i] = x[i] / L[i * 6 + i];
    }
  }
};

}  // namespace batchdyn
