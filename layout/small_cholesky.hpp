// Inverse of a small symmetric positive definite n x n matrix (n <= 6) through its Cholesky
// factor, in fixed 6x6 row-major storage, written on the lane type S (no branches on values).
// Used for D_i^{-1} = (S_i^T I^A_i S_i)^{-1} in ABA: 1x1 for 1-dof joints, 6x6 for the
// free-flyer root.
#pragma once

#include <array>
#include <cmath>

namespace batchdyn {

template <class S>
using SmallMatrix = std::array<S, 36>;  // row-major, stride 6

// Returns D^{-1} for the leading n x n block of D.
template <class S>
SmallMatrix<S> invert_spd(const SmallMatrix<S>& D, int n) {
  using std::sqrt;
  if (n == 1) {  // the common case, a 1-dof joint
    SmallMatrix<S> r{};
    r[0] = S(1) / D[0];
    return r;
  }
  // D = L L^T
  SmallMatrix<S> L{};
  for (int j = 0; j < n; ++j) {
    S diag = D[j * 6 + j];
    for (int k = 0; k < j; ++k) diag -= L[j * 6 + k] * L[j * 6 + k];
    L[j * 6 + j] = sqrt(diag);
    const S inv = S(1) / L[j * 6 + j];
    for (int i = j + 1; i < n; ++i) {
      S s = D[i * 6 + j];
      for (int k = 0; k < j; ++k) s -= L[i * 6 + k] * L[j * 6 + k];
      L[i * 6 + j] = s * inv;
    }
  }
  // Columns of D^{-1}: solve L L^T x = e_c.
  SmallMatrix<S> inverse{};
  for (int c = 0; c < n; ++c) {
    S x[6];
    for (int i = 0; i < n; ++i) {
      x[i] = i == c ? S(1) : S(0);
      for (int k = 0; k < i; ++k) x[i] -= L[i * 6 + k] * x[k];
      x[i] = x[i] / L[i * 6 + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      for (int k = i + 1; k < n; ++k) x[i] -= L[k * 6 + i] * x[k];
      x[i] = x[i] / L[i * 6 + i];
    }
    for (int i = 0; i < n; ++i) inverse[i * 6 + c] = x[i];
  }
  return inverse;
}

}  // namespace batchdyn
