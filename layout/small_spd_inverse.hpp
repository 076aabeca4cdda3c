// Inverse of a small symmetric positive definite n x n matrix (n <= 6) through its Cholesky
// factor, written on the lane type S (no branches on values).
// Used for D_i^{-1} = (S_i^T I^A_i S_i)^{-1} in ABA: 1x1 for 1-dof joints, 6x6 for the
// free-flyer root.
//
// As LAPACK's potrf + potri: D = L L^T, then M = L^{-1} (a triangular inverse), then
// D^{-1} = M^T M, its lower triangle formed and mirrored. The n reciprocals 1 / L_jj are the
// only divisions: the 6 x 6 of a free-flyer root costs 6 divisions and ~260 flops, where solving
// L L^T x = e_c column by column cost 78 divisions and ~530 flops, with a division in every
// step of each column's dependency chain (13 % of ABA's time on the humanoid, measured by perf
// in double and float). The size is a template parameter, so every loop unrolls and the
// factors stay in registers.
#pragma once

#include <cmath>

namespace batchdyn {

// inverse = D^{-1} for the symmetric positive definite N x N matrix D (both row-major, N x N).
// Not inlined: unrolled, it is large, and inlined into the joint elimination it took GCC's
// inlining budget from the inertia transforms next to it (`batchdyn bench`, float, release
// build: the inertia transform (then inertia_to_parent) 5 % -> 14 % of the samples, 196 -> 242 ns per environment; out of
// line 177-181 ns, and double 386-394 -> 349-350 ns).
template <int N, class S>
[[gnu::noinline]] void invert_spd_fixed(const S* D, S* inverse) {
  using std::sqrt;
  S L[N][N];         // D = L L^T, lower triangle
  S inverse_diag[N];  // 1 / L_jj
  for (int j = 0; j < N; ++j) {
    S diag = D[j * N + j];
    for (int k = 0; k < j; ++k) diag -= L[j][k] * L[j][k];
    L[j][j] = sqrt(diag);
    inverse_diag[j] = S(1) / L[j][j];
    for (int i = j + 1; i < N; ++i) {
      S s = D[i * N + j];
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      L[i][j] = s * inverse_diag[j];
    }
  }
  // M = L^{-1}, lower triangular: M_jj = 1 / L_jj, M_ij = -(sum_{j <= k < i} L_ik M_kj) / L_ii.
  S M[N][N];
  for (int j = 0; j < N; ++j) {
    M[j][j] = inverse_diag[j];
    for (int i = j + 1; i < N; ++i) {
      S s = L[i][j] * M[j][j];
      for (int k = j + 1; k < i; ++k) s += L[i][k] * M[k][j];
      M[i][j] = -s * inverse_diag[i];
    }
  }
  // D^{-1} = M^T M: entry (i, j), i >= j, is sum_{k >= i} M_ki M_kj.
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) {
      S s = M[i][i] * M[i][j];
      for (int k = i + 1; k < N; ++k) s += M[k][i] * M[k][j];
      inverse[i * N + j] = s;
      inverse[j * N + i] = s;
    }
}

// inverse = D^{-1} for the symmetric positive definite n x n matrix D (both row-major, n x n,
// 1 <= n <= 6; n comes from the plan, a joint's dof count). Only n * n entries are touched.
template <class S>
void invert_spd(const S* D, int n, S* inverse) {
  switch (n) {
    case 1: inverse[0] = S(1) / D[0]; return;  // the common case, a 1-dof joint
    case 2: return invert_spd_fixed<2>(D, inverse);
    case 3: return invert_spd_fixed<3>(D, inverse);
    case 4: return invert_spd_fixed<4>(D, inverse);
    case 5: return invert_spd_fixed<5>(D, inverse);
    default: return invert_spd_fixed<6>(D, inverse);
  }
}

}  // namespace batchdyn
