// The conjugate residual method for the outer iterations of LCABA and proxBBO (Saad, Iterative
// Methods for Sparse Linear Systems, 2nd ed., §6.8, Alg. 6.20).
//
// Both kernels' plain outer step adds r to the multipliers (LCABA: the augmented-Lagrangian
// update r = -mu (K a - kappa), eq. 33; proxBBO: the proximal step r = lambda^+ - lambda^k,
// eq. 42c). That is Richardson's iteration on A lambda = b with
//     A = G (G + I/mu)^{-1},    G = K M^{-1} K^T the Delassus matrix,
// symmetric positive semi-definite with eigenvalues sigma / (sigma + 1/mu) in [0, 1): each
// eigenmode of G converges by 1 / (1 + mu sigma) per iteration, so a nearly redundant pair of
// rows (a grip, a loop near a singular pose) takes hundreds of iterations while qdd is still far
// off (measured on hand_cube, LCABA at mu = 1e4: sigma = 2e-6, rate 0.98, q̈ 3.8 rad/s^2 off
// after the first pass, 0.5 after 100 iterations). The conjugate residual method runs on the
// same A, one reduced sweep pair (one product with A) per iteration, and chooses the step and
// the direction from r^T A r and |A p|^2. A's spectrum is clustered at 1 with a few small
// outliers, the nearly redundant modes, which it resolves in about one iteration each.
//
// Inconsistent rows (off the loops with redundant rows) give b a part in null(A) = null(K^T)
// that A never sees: alpha and beta depend on r only through A r, so the iteration converges to
// the least-squares qdd while the multipliers move along null(K^T), which changes no
// acceleration; the null-space rule below ends it there.
//
// Numerically null modes. A Krylov method resolves every eigenvalue it can see, however small;
// a plain proximal iteration resolves a mode only as fast as 1 / (1 + mu sigma) allows. So where
// r has a part along modes of G at rounding level (duplicate-link welds, rows redundant up to
// the 1e-8 a state is on its loops to), the method would fit it with multipliers of 1e4 and more
// and change qdd by O(1) (measured on Cassie's duplicate-link model: q̈ 100 % off the
// constrained solution, the plain iteration's fit). A mode whose eigenvalue in A is below
// kNullRatio is therefore null: once |A r| <= kNullRatio |r| (only_null_space_left), what is
// left of r is null but for a remainder of at most kNullRatio |r| in the resolvable modes; the
// lane takes one plain step (p = r, alpha = 1, which moves each mode by at most its share of r,
// like the proximal iteration) that removes that remainder, and stops at the least-squares
// solution. A's eigenvalue mu sigma / (1 + mu sigma) makes that sigma(G) < kNullRatio / mu: at
// LCABA's mu = 1e4 in double, 1e-10 (2e-13 of the largest on Cassie), where hand_cube's grip
// needs sigma = 2e-6 resolved.
//
// In floating point the residual also reaches a floor (rounding in the sweeps); below it the
// directions lose conjugacy. The stall rule (LoopConvergence) stops a lane the first time its
// violation does not fall; with the test off (tolerance 0), such a lane restarts from r
// (beta = 0) instead, so running on stays at the solution.
//
// What changes with the multipliers (a, qdd, proxBBO's lambda^+) is linear in them: each is
// carried along p (follow_direction) from its response to r, so a step along p costs no sweep.
// Per lane: the scalars are lane vectors, and a frozen lane (r = 0) gets alpha = 0 exactly.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "layout/lanes.hpp"
#include "layout/spatial.hpp"

namespace batchdyn {

// The vectors of the method, sized once: m rows, the bodies, nv.
template <class S>
struct ConjugateResidualWorkspace {
  ConjugateResidualWorkspace(int rows, int bodies, int nv, bool with_multipliers)
      : increment(static_cast<size_t>(rows)), increment_image(increment.size()), direction(increment.size()),
        direction_image(increment.size()), direction_multipliers(with_multipliers ? increment.size() : 0),
        direction_acceleration(static_cast<size_t>(bodies)), direction_qdd(static_cast<size_t>(nv)) {}

  std::vector<S> increment, increment_image;  // r (the plain step) and A r
  std::vector<S> direction, direction_image;  // the search direction p and A p
  std::vector<S> direction_multipliers;       // proxBBO: the change of lambda^+ that p makes (empty for LCABA)
  std::vector<Motion<S>> direction_acceleration;  // the change of a that p makes
  std::vector<S> direction_qdd;                   // the change of qdd that p makes

  size_t bytes() const {
    return (4 * increment.size() + direction_multipliers.size() + direction_qdd.size()) * sizeof(S) +
           direction_acceleration.size() * sizeof(Motion<S>);
  }
};

// along = response + beta along, from element `begin` on: a quantity that follows the search
// direction by linearity.
template <class V, class S>
void follow_direction(std::vector<V>& along, const std::vector<V>& response, const S& beta, size_t begin = 0) {
  for (size_t k = begin; k < along.size(); ++k) along[k] = response[k] + along[k] * beta;
}

template <class S>
class ConjugateResidual {
 public:
  using Mask = decltype(S(0) == S(0));
  // The eigenvalue of A below which a mode is numerically null (see above): measured in double,
  // |A r| / |r| fell to 1e-7..2e-7 where only Cassie's rounding-level modes were left, while
  // hand_cube's grip needs 2e-2 resolved; float resolves three decades less.
  static constexpr double kNullRatio = std::is_same_v<lane_scalar<S>, float> ? 1e-3 : 1e-6;
  // Starts a solve: the directions are zeroed, so the first direction is r (beta = 0) and
  // every iteration runs the same arithmetic (the flop counts do not depend on the iteration).
  explicit ConjugateResidual(ConjugateResidualWorkspace<S>& w) {
    for (std::vector<S>* v : {&w.direction, &w.direction_image, &w.direction_multipliers, &w.direction_qdd})
      for (S& x : *v) x = S(0);
    for (Motion<S>& x : w.direction_acceleration) x = Motion<S>::zero();
  }

  // With r and A r of this iteration in w: p = r + beta p and A p = A r + beta A p, beta =
  // r^T A r / (the previous r^T A r); 0 on the first call, where that was 0, and in the lanes
  // of `restart` (LoopConvergence::stalled(): where rounding has taken over, conjugacy is lost
  // and a step along the old directions would amplify noise along nearly null modes). Returns
  // beta for follow_direction.
  S next_direction(ConjugateResidualWorkspace<S>& w, const Mask& restart) {
    const size_t m = w.increment.size();
    S energy(0);  // r^T A r
    for (size_t k = 0; k < m; ++k) energy += w.increment[k] * w.increment_image[k];
    const S beta = select(energy_ > S(0) && !restart, energy / energy_, S(0));
    follow_direction(w.direction, w.increment, beta);
    follow_direction(w.direction_image, w.increment_image, beta);
    energy_ = energy;
    return beta;
  }
  // The lanes where r lies in A's numerical null space: |A r| <= kNullRatio |r| (r in w, with A r).
  // Frozen lanes (r = 0) count too. O(m).
  Mask only_null_space_left(const ConjugateResidualWorkspace<S>& w) const {
    S norm(0), image_norm(0);
    for (size_t k = 0; k < w.increment.size(); ++k) {
      norm += w.increment[k] * w.increment[k];
      image_norm += w.increment_image[k] * w.increment_image[k];
    }
    constexpr double ratio = kNullRatio * kNullRatio;
    return image_norm <= S(static_cast<lane_scalar<S>>(ratio)) * norm;
  }
  // alpha = r^T A r / |A p|^2 for the direction of next_direction: the step along p that
  // minimises the next |r|; 0 where A p = 0 (a frozen lane).
  S step_length(const ConjugateResidualWorkspace<S>& w) const {
    S image_norm(0);
    for (const S& x : w.direction_image) image_norm += x * x;
    return select(image_norm > S(0), energy_ / image_norm, S(0));
  }

 private:
  S energy_ = S(0);
};

}  // namespace batchdyn
