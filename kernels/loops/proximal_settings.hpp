// What the constrained-dynamics solvers share: their settings (the penalty mu, the iteration cap,
// the tolerance) and the per-lane report of the recursive loop kernels. The dense oracle
// (kernels/loops/constrained_dynamics.hpp), LCABA (kernels/loops/lcaba.hpp) and proxBBO (kernels/loops/proxbbo.hpp)
// read the same settings, so one set compares them.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <string_view>

#include "topology/model.hpp"

namespace batchdyn {

// mu follows the augmented-Lagrangian convention of lcaba-proxbbo Eq. (14): a penalty, large is
// stiff. The dense solver and proxBBO regularise their dual problem by rho = 1/mu (eq. 42b). Larger
// mu converges in fewer iterations but amplifies rounding along null(G) for redundant rows
// (measured on an over-constrained mechanism: least-squares error 1e-9 at mu = 1e4, 1e-7 at 1e6,
// 1e-5 at 1e8); the paper's recommended range is 1e5..1e7 (§VI-D). LCABA loses accuracy for large
// mu (mu K^T K swamps light links' inertia); use <= 1e3 in float.
struct ProximalSettings {
  double mu = 1e6;
  int max_iterations = 100;
  // Relative tolerance: stop when ||J qdd + drift - k||_inf is within tolerance of the size of its
  // terms, when ||qdd^{k+1} - qdd^k||_inf <= tolerance * (1 + ||qdd||_inf), or when the iterations
  // stall (inconsistent rows, rounding): the recursive kernels' LoopConvergence
  // (kernels/loops/loop_constraints.hpp) and the dense solver's test (kernels/loops/constrained_dynamics.hpp).
  double tolerance = 1e-13;
  // The recursive kernels only (LCABA, proxBBO): also stop a lane whose violation sits on a
  // plateau (a correction took less than a tenth off it) within plateau_tolerance of its terms
  // (LoopConvergence's floor test). 0, the default of the reference functions and of
  // Batch::forward_dynamics(): only within 10 x tolerance. Batch::step() solves with
  // LoopStabilisationSettings::plateau_tolerance (1e-9): near singular poses the rows pin q̈
  // no better than that, and the corrections past it cost 20-50 sweeps.
  double plateau_tolerance = 0;
};

// The range check_proximal_settings accepts: beyond it the penalty or its inverse rho = 1/mu
// overflows in float or swamps every inertia, and an iteration cap that large is a typo.
inline constexpr double kMinPenalty = 1e-12, kMaxPenalty = 1e20;
inline constexpr int kMaxSolverIterations = 1000000;

// Throws Error naming `where` (e.g. "lcaba", "Batch::set_constraint_settings", "--mu") unless mu
// is finite in [kMinPenalty, kMaxPenalty], 1 <= max_iterations <= kMaxSolverIterations and the
// tolerance (0: run every iteration) and the plateau tolerance are finite and >= 0. Every entry
// point that takes settings (C++, Python, the CLI) calls it, so they refuse the same things with
// the same words. It allocates only when it throws: the kernels call it on every solve.
inline void check_proximal_settings(const ProximalSettings& settings, std::string_view where) {
  const auto fail = [&](const std::string& what, double value) {
    std::ostringstream text;
    text << where << ": " << what << ", got " << value;
    throw Error(text.str());
  };
  if (!std::isfinite(settings.mu) || settings.mu < kMinPenalty || settings.mu > kMaxPenalty)
    fail("the penalty mu must be finite, in [1e-12, 1e20]", settings.mu);
  if (settings.max_iterations < 1 || settings.max_iterations > kMaxSolverIterations)
    fail("the iteration cap must be in [1, 1000000]", settings.max_iterations);
  if (!std::isfinite(settings.tolerance) || settings.tolerance < 0) fail("the tolerance must be finite and >= 0", settings.tolerance);
  if (!std::isfinite(settings.plateau_tolerance) || settings.plateau_tolerance < 0)
    fail("the plateau tolerance must be finite and >= 0", settings.plateau_tolerance);
}

// Per-lane outcome of the loop kernels (lcaba_kernel, proxbbo_kernel).
template <class S>
struct LoopDynamicsResult {
  S iterations;  // sweeps run (1 = the first pass only), per lane
  S residual;    // ||J qdd + drift - k||_inf at exit, per lane
  S converged;   // 1 where the stopping test ended the iterations, 0 where the cap did (LoopConvergence)
};

}  // namespace batchdyn
