// Inverse of a small symmetric positive definite n x n matrix (n <= 6) through its Cholesky
// factor, written on the lane type S (no branches on values).
// Used for D_i^{-1} = (S_i^T I^A_i S_i)^{-1} in ABA: 1x1 for 1-dof joints, 6x6 for the
// free-flyer root.
#pragma once

#include <cmath>

namespace batchdyn {

// inverse = D^{-1} for the symmetric positive definite n x n matrix D (both row-major, n x n,
// n <= 6). Only n * n entries are touched: no zero-filled 6 x 6 scratch per call.
template <class S>
void invert_spd(const S* D, int n, S* inverse) {
  using std::sqrt;
  if (n == 1) {  // the common case, a 1-dof joint
    inverse[0] = S(1) / D[0];
    return;
  }
  S L[36];  // D = L L^T, lower triangle, stride n
  for (int j = 0; j < n; ++j) {
    S diag = D[j * n + j];
    for (int k = 0; k < j; ++k) diag -= L[j * n + k] * L[j * n + k];
    L[j * n + j] = sqrt(diag);
    const S inv = S(1) / L[j * n + j];
    for (int i = j + 1; i < n; ++i) {
      S s = D[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s * inv;
    }
  }
  // Columns of D^{-1}: solve L L^T x = e_c.
  for (int c = 0; c < n; ++c) {
    S x[6];
    for (int i = 0; i < n; ++i) {
      x[i] = i == c ? S(1) : S(0);
      for (int k = 0; k < i; ++k) x[i] -= L[i * n + k] * x[k];
      x[i] = x[i] / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      for (int k = i + 1; k < n; ++k) x[i] -= L[k * n + i] * x[k];
      x[i] = x[i] / L[i * n + i];
    }
    for (int i = 0; i < n; ++i) inverse[i * n + c] = x[i];
  }
}

}  // namespace batchdyn
