// Joint limits on a robot whose loops the loop solver holds (LoopRows::Hold,
// kernels/contact/frictional_contact.hpp): the limit rows' problem with the loop rows eliminated.
//
// The contact problem of l limit rows and b loop rows has the Delassus matrix
//     G = [ G_ll  G_lL ]      and the loop rows' target J_loop dv = 0 (g_L = 0: the loop
//         [ G_Ll  G_LL ]      solver already gave the loops their velocities).
// The loop rows are bilateral, so their impulses follow from the limits' ones,
//     lambda_L = -G_LL^-1 G_Ll lambda_l,
// and the limits see the Schur complement, the Delassus matrix of the limit rows on the
// mechanism with its loops closed (the constrained inverse inertia seen by the limited joints):
//     G_eff = G_ll - G_lL G_LL^-1 G_Ll,   g_eff = g_l.
// The solver then iterates on l rows (a few) instead of l + b (Digit's loops: 34 rows, two
// Digits holding a box: 92), and never on the loop rows, which are often redundant or
// degenerate (a row no joint can move has G_ii = 0): the proximal iterations crept on them and,
// where the rows were scaled up, the factor of the whole problem broke down.
//
// G_LL is singular for redundant rows, so it is damped: the rows are scaled towards a unit
// diagonal (G' = D G_LL D, D = diag(G_LL)^-1/2), G' + delta I is factored, and each solve with
// G' is refined twice against G' itself (iterative refinement), so that
//     G_LL^-1 B ~ D G'^+ D B
// with an error of (delta / (sigma + delta))^3 along an eigenvector of G' with eigenvalue
// sigma: nothing where the rows are independent (sigma >= 1e-3 in double), and nothing along a
// direction no motion reaches (sigma = 0), where B = G_Ll has no part either. A row no motion
// moves has a diagonal at rounding level (Digit's feet: 1e-16 of the largest), so D must not
// scale it up: a diagonal is floored at a fraction of the largest, so that the rounding of G
// (about 1e-14 of its largest entry in double, 1e-6 in float) stays below delta after the
// scaling; otherwise the damped factor breaks down on the noise (negative pivots, entries
// amplified by 1 / delta).
#pragma once

#include <algorithm>
#include <limits>
#include <type_traits>

#include "layout/dense.hpp"
#include "layout/lanes.hpp"

namespace batchdyn {

// The damping of the scaled loop block, far below its unit diagonal, and the floor of its
// diagonals relative to the largest, so that the scaled rounding (u_G / floor, u_G the rounding
// of G relative to its largest entry) stays 100x below the damping (double) or 10x (float).
template <class S>
S held_loop_damping() {
  return S(std::is_same_v<lane_scalar<S>, float> ? 1e-3 : 1e-8);
}
template <class S>
S held_loop_diagonal_floor() {
  return S(std::is_same_v<lane_scalar<S>, float> ? 1e-2 : 1e-4);
}

// In place on G (m x m, row stride m, m = l + b; the limit rows first, then the loop rows): the
// loop block G_LL becomes G' = D G_LL D, the loops-by-limits block G_Ll becomes X = G'^+ D G_Ll
// (the loop impulses per unit limit impulse, before -D), and G's first l * l entries become
// G_eff = G_ll - G_lL D X (row stride l: the limit rows' problem as the solvers take it).
// `loop_scale` (b) gets D. Workspace: `factor` (b * m), `column` and `residual` (b each).
// Lane-generic; no branch on data. O(b^3 / 6 + 9 b^2 l + b l^2).
template <class S>
void eliminate_held_loop_rows(int l, int b, int m, S* G, S* loop_scale, S* factor, S* column, S* residual) {
  using std::max;
  using std::sqrt;
  S* GLL = G + l * m + l;  // the loop block, row stride m
  S* GLl = G + l * m;      // the loops-by-limits block, row stride m
  // D: a row's scale from its diagonal, floored below the largest (a degenerate row stays small:
  // the damping keeps it out of the factor).
  S largest(0);
  for (int i = 0; i < b; ++i) largest = max(largest, GLL[i * m + i]);
  const S floor = held_loop_diagonal_floor<S>() * largest + S(std::numeric_limits<lane_scalar<S>>::min());
  for (int i = 0; i < b; ++i) loop_scale[i] = S(1) / sqrt(max(GLL[i * m + i], floor));
  for (int i = 0; i < b; ++i) {
    for (int j = 0; j <= i; ++j) GLL[i * m + j] *= loop_scale[i] * loop_scale[j];
    for (int j = 0; j < l; ++j) GLl[i * m + j] *= loop_scale[i];
  }
  for (int i = 0; i < b; ++i)  // G' whole: the factor reads its lower triangle, the refinement all of it
    for (int j = i + 1; j < b; ++j) GLL[i * m + j] = GLL[j * m + i];
  damped_cholesky_strided(GLL, b, m, held_loop_damping<S>(), factor);  // F F^T = G' + delta I, row stride m
  // Each column B_j of B = D G_Ll: x = (G' + delta I)^-1 B_j, refined twice by
  // x += (G' + delta I)^-1 (B_j - G' x); then X_j = x in its place.
  for (int j = 0; j < l; ++j) {
    for (int i = 0; i < b; ++i) column[i] = GLl[i * m + j];
    for (int i = 0; i < b; ++i) residual[i] = column[i];
    cholesky_solve_strided(factor, b, m, residual);
    for (int i = 0; i < b; ++i) GLl[i * m + j] = residual[i];
    for (int refinement = 0; refinement < 2; ++refinement) {
      for (int i = 0; i < b; ++i) {
        S v = column[i];
        for (int k = 0; k < b; ++k) v -= GLL[i * m + k] * GLl[k * m + j];
        residual[i] = v;
      }
      cholesky_solve_strided(factor, b, m, residual);
      for (int i = 0; i < b; ++i) GLl[i * m + j] += residual[i];
    }
  }
  // G_eff = G_ll - B^T X, symmetrised (B^T = G_lL D: the upper block, unscaled, times D).
  for (int r = 0; r < l; ++r)
    for (int c = 0; c <= r; ++c) {
      S rc(0), cr(0);
      for (int i = 0; i < b; ++i) {
        rc += G[r * m + l + i] * loop_scale[i] * GLl[i * m + c];
        cr += G[c * m + l + i] * loop_scale[i] * GLl[i * m + r];
      }
      const S value = G[r * m + c] - S(0.5) * (rc + cr);
      G[r * m + c] = value;
      G[c * m + r] = value;
    }
  // Stored with row stride l (each entry moves to a lower index, after the entries it overwrites
  // were read; X and G' lie beyond).
  for (int r = 0; r < l; ++r)
    for (int c = 0; c < l; ++c) G[r * l + c] = G[r * m + c];
}

// The loop rows' impulses from the limit rows' ones, lambda_L = -D X lambda_l, into
// impulses[l .. l + b) (impulses[0 .. l): lambda_l), with G and loop_scale as
// eliminate_held_loop_rows left them. Lane-generic. O(b l).
template <class S>
void held_loop_impulses(int l, int b, int m, const S* G, const S* loop_scale, S* impulses) {
  const S* X = G + l * m;
  for (int i = 0; i < b; ++i) {
    S s(0);
    for (int j = 0; j < l; ++j) s += X[i * m + j] * impulses[j];
    impulses[l + i] = -(loop_scale[i] * s);
  }
}

}  // namespace batchdyn
