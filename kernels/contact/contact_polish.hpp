// Solution polishing for the contact problem's ADMM (kernels/contact/contact_admm.hpp): once the iterate
// shows which rows act, solve for their impulses exactly instead of creeping towards them
// (OSQP's polishing: Stellato, Banjac et al., "OSQP: an operator splitting solver for quadratic
// programs", Math. Prog. Comp. 2020, §5.2).
//
// Why: ADMM converges linearly, at a rate set by how rho compares with the smallest eigenvalues
// of G' on the acting rows. Joint limits that push against each other through a closed loop
// (a knee at its stop and an ankle at its other stop on a welded leg) give G_eff rows correlated
// to -0.9986, an eigenvalue of 1.4e-3 against rho ~0.2: the residual then falls 2 % per iteration
// and a step hit the 500-iteration cap with its active set settled for hundreds of iterations.
//
// The guess: from the natural map of the NCP at z (p = proj(z - sigma~), as in
// contact_natural_residual), per row or contact:
//   - a limit row acts where p > 0 (lambda > 0, sigma = 0); else lambda = 0;
//   - a bilateral row always acts (sigma = 0);
//   - a contact sticks where p is strictly inside its cone (all three rows act: sigma = 0), is
//     open where p = 0 (lambda = 0); a sliding contact (p on the cone's boundary) makes its lane's
//     guess unusable (its rows are not linear), as does a frictionless contact that pushes.
// The equality-constrained problem on the guess, G'_AA lambda_A = -g'_A with lambda_I = 0, is
// solved as a proximal point anchored at z, as ADMM's own x-step is:
//     (G'_AA + delta I) x_1 = delta z_A - g'_A,   (G'_AA + delta I) x_{j+1} = delta x_j - g'_A,
// three solves with one factor. G'_AA can be singular (a foot's redundant corners, limits that
// repeat each other through a loop): along an eigenvalue e of G'_AA the error to the solution
// nearest z shrinks by delta / (e + delta) per solve, while along a null direction x moves by
// at most |g'_null| / delta per solve, where g' has no exact solution. An undamped refinement
// would send that part of g' (rounding, or the tolerance's slack) into impulses ~1/eps times
// larger, whose effect through G rounds to garbage velocities. The solution is accepted in a
// lane only where its own natural residual meets the tolerance: a wrong guess or an inaccurate
// solve is never taken, ADMM just goes on.
// A rejected solution gives the next guess, by the same natural map at it: a primal-dual
// active-set step (Hintermüller, Ito, Kunisch, SIAM J. Optim. 13(3), 2003), which drops a limit
// row whose impulse came out negative and adds one whose velocity did. Where the ADMM iterate's
// guess was off by a row or two (a limit letting go while its impulse creeps to zero), this is
// what converges; on limits that nearly repeat each other through the loops it can cycle, and
// ADMM goes on. On the collapsed humanoid holding a cube with welded feet (10 s, double, 4
// nearby starts), the held-loop limit solve's cap reports fell from 663-2116 to 3-74 per run
// with 10 passes (34-1013 with one, 4-99 with 6), its mean iterations from ~200 to 11-23.
// No allocation; no branch on data (masks), but the passes' exit when every lane's chain has ended.
#pragma once

#include <algorithm>
#include <type_traits>

#include "kernels/contact/contact_problem.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

// delta, the proximal weight of the polish, against G''s unit mean diagonal: small enough that
// three solves reach the solution on the acting rows (an eigenvalue of 1.4e-3, the stalled
// collapsed humanoid's, leaves (delta / 1.4e-3)^3 of the distance: 4e-16 in double, 4e-7 in
// float), large enough to dominate the rounding of G'_AA's eigenvalues (~ m eps: 3e-15 in double,
// 2e-6 in float for m = 30) so that a near-null direction cannot amplify g' beyond 1 / delta.
// In float, 1e-6 was below that rounding: a passive humanoid collapsing while it holds a cube
// with welded feet (4000 steps of 1 ms) overflowed from 5 of 16 nearby starts with it, and from
// none of 32 with 1e-5.
template <class S>
S contact_polish_damping() {
  return S(std::is_same_v<lane_scalar<S>, float> ? 1e-5 : 1e-8);
}

// The solves of one polish: the proximal point from z, then two more from its results.
inline constexpr int contact_polish_solves = 3;

// The guesses one polish tries (the first from ADMM's iterate, each next one from the previous
// solution).
inline constexpr int contact_polish_passes = 10;

// The guesses the polish of the warm start tries, before ADMM's first iteration
// (kernels/contact/contact_admm.hpp). Where the previous step's active set still holds (a robot
// standing, a grasp held) the first guess is the solution; a foot touching down or lifting off
// is one active-set step away. Each pass costs a factorisation and ADMM follows where none is
// taken, so the chain is kept short.
inline constexpr int contact_warm_polish_passes = 3;

// The iterations after which ADMM tries to polish: 10, 20, 40, 80, ... (each pass of a polish
// costs about one refactorisation, O(m^3 / 6), and ADMM refactors once more where none is taken:
// at most ~7 polishes within the cap of 500).
inline bool contact_polish_iteration(int iteration) {
  const int n = iteration + 1;
  return n >= 10 && n % 10 == 0 && ((n / 10) & (n / 10 - 1)) == 0;
}

// The rows the natural map at impulses z (with ws.sigma = G' z + g') shows acting, into
// ws.active (1 or 0); returns 0 in lanes with a contact that slides (no linear guess there).
template <class S>
S guess_acting_rows(int k, int l, int b, const S* z_all, ContactSolverWorkspace<S>& ws) {
  using std::sqrt;
  S* active = ws.active.data();
  const auto present = [&](int c) { return ws.in_contact[static_cast<size_t>(c)] != S(0); };
  S usable(1);
  for (int c = 0; c < k; ++c) {
    const S* sigma = ws.sigma.data() + 3 * c;
    const S* z = z_all + 3 * c;
    const S mu = ws.mu[static_cast<size_t>(c)];
    S n, t1, t2;
    natural_map_projection(mu, z, sigma, n, t1, t2);
    const auto open = n <= S(0);
    const auto sticks = sqrt(t1 * t1 + t2 * t2) < S(0.999) * mu * n;  // strictly inside: the cone's boundary is sliding
    usable = select(present(c) && !open && !sticks, S(0), usable);
    const S acts = select(present(c) && sticks && !open, S(1), S(0));
    for (int r = 0; r < 3; ++r) active[3 * c + r] = acts;
  }
  for (int r = 0; r < l; ++r) {
    const int i = 3 * k + r;
    active[i] = select(present(k + r) && (z_all[i] - ws.sigma[static_cast<size_t>(i)] > S(0)), S(1), S(0));
  }
  for (int r = l; r < l + b; ++r) active[3 * k + r] = select(present(k + r), S(1), S(0));
  return usable;
}

// x (m) <- the impulses with the rows of ws.active acting exactly and the others zero, by the
// proximal point anchored at `anchor` (see the top of the file), then ws.sigma <- G' x + g'.
// O(m^3 / 6).
template <class S>
void solve_acting_rows(int m, const S* anchor, ContactSolverWorkspace<S>& ws, S* x) {
  const S* G = ws.G.data();
  const S* g = ws.g.data();
  const S* active = ws.active.data();
  const S delta = contact_polish_damping<S>();
  // P G' P + (I - P) (P = diag(active)), plus delta I: its lower triangle, factored in place in
  // ws.factor. An inactive row is its own 1 + delta pivot, uncoupled, with a zero right side.
  S* F = ws.factor.data();
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < i; ++j) F[i * m + j] = active[i] * active[j] * G[i * m + j];
    F[i * m + i] = active[i] * G[i * m + i] + (S(1) - active[i]);
  }
  S* inverse_pivot = ws.inverse_pivot.data();
  damped_cholesky(F, m, delta, F, inverse_pivot);
  for (int i = 0; i < m; ++i) x[i] = active[i] * (delta * anchor[i] - g[i]);
  cholesky_solve(F, inverse_pivot, m, x);
  for (int solve = 1; solve < contact_polish_solves; ++solve) {
    for (int i = 0; i < m; ++i) x[i] = active[i] * (delta * x[i] - g[i]);
    cholesky_solve(F, inverse_pivot, m, x);
  }
  // A row that does not act carries no impulse: exactly +0, as ADMM leaves an absent row (its
  // solve gives +-0 by the signs of its zero products; an impulse's bits must not depend on the
  // lane's block).
  for (int i = 0; i < m; ++i) x[i] = select(active[i] != S(0), x[i], S(0));
  matrix_times_vector(G, m, m, m, x, g, ws.sigma.data());
}

// Polishes ADMM's iterate on the formed problem in ws (G', g' scaled; ws.z the iterate and
// ws.sigma = G' z + g'): the guess from the natural map at z, solved; then up to
// `passes` - 1 more guesses, each from the natural map at the previous solution
// (a primal-dual active-set step: a limit row whose impulse came out negative leaves, one whose
// velocity came out negative joins). Each lane where `live` is set follows its own chain of
// guesses, as it would alone: it stops at its first solution whose natural residual, relative
// as ADMM's (/(1 + g_norm)), is at most `tolerance` (that solution replaces ws.z and ws.x, and
// `residual` gets its residual; the lane returns 1), or at its first unusable guess (a sliding
// contact; it returns 0 and is never taken at a later pass that its block mates keep running).
// So a lane's result never depends on its block mates. Overwrites ws.factor (ADMM must
// refactor), ws.rhs, ws.sigma and ws.active. O(passes m^3 / 6).
template <class S>
S polish_contact_solution(int k, int l, int b, const S& live, const S& tolerance, const S& g_norm, ContactSolverWorkspace<S>& ws,
                          S& residual, int passes = contact_polish_passes) {
  const int m = 3 * k + l + b;
  S* x = ws.rhs.data();
  S taken(0);
  S going = select(live != S(0), S(1), S(0));  // lanes whose chain of guesses goes on
  for (int pass = 0; pass < passes; ++pass) {
    const S usable = guess_acting_rows(k, l, b, pass == 0 ? ws.z.data() : x, ws);
    going = select(usable != S(0), going, S(0));  // sliding contacts: this lane's chain ends
    if (!any_lane(going != S(0))) break;
    solve_acting_rows(m, ws.z.data(), ws, x);
    const S polished = contact_natural_residual(k, l, b, x, ws) / (S(1) + g_norm);  // x = z: no primal residual
    const auto take = (going != S(0)) && (polished <= tolerance);
    for (int i = 0; i < m; ++i) {
      ws.z[static_cast<size_t>(i)] = select(take, x[i], ws.z[static_cast<size_t>(i)]);
      ws.x[static_cast<size_t>(i)] = select(take, x[i], ws.x[static_cast<size_t>(i)]);
    }
    residual = select(take, polished, residual);
    taken = select(take, S(1), taken);
    going = select(take, S(0), going);
  }
  return taken;
}

}  // namespace batchdyn
