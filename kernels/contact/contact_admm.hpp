// The frictional contact problem of one time step on lanes (kernels/contact/contact_problem.hpp), solved
// by proximal ADMM (Carpentier, Le Lidec et al., "From Compliant to Rigid Contact Simulation: a
// Unified and Efficient Approach", RSS 2024, arXiv 2405.17020, §III-IV, Alg. 1), each lane its
// own problem: the batched counterpart of the dense reference's step 3 (kernels/contact/contact_step.hpp).
// The default solver of the contact stage; kernels/contact/contact_pgs.hpp is the baseline.
//
// ADMM splits lambda into x (the linear solve with G + (rho + eta) I) and z (the projection onto
// the cones; limit rows onto lambda >= 0; bilateral rows onto all of R, so z = x + y / rho and y
// stays 0) with the scaled dual y; at the solution y = -sigma~. Its products with G and its linear
// solves are its Delassus operator's (kernels/contact/admm_delassus.hpp): on the formed G (a Cholesky
// factor per rho), or on the tree without forming G (PV-soft).
//
// Every lane has its own rho. Lanes iterate together until every lane has converged or the cap
// is hit; a converged lane is frozen, so a lane's result never depends on its block mates.
// On the formed G, the warm start is polished before the first iteration and the iterate after
// 10, 20, 40, ... iterations (kernels/contact/contact_polish.hpp, ContactSettings::polish): the
// rows it shows acting are solved exactly, and a lane where that meets the tolerance is done.
// No allocation, no data-dependent branch but the loop's exit (when all lanes are done) and the
// refactorisation when some lane's rho changed (which recomputes the same factor in the others).
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/contact/admm_delassus.hpp"
#include "kernels/contact/contact_polish.hpp"
#include "kernels/contact/contact_problem.hpp"

namespace batchdyn {

// Solves the problem of k contacts, l limit rows and b bilateral rows in ws (G, g, mu,
// in_contact) on every lane; lambda (3k + l + b lanes) is
// the warm start on entry (the previous step's impulses; zero for none) and the impulses on exit
// (N s, in the cones; zero for an absent contact or row). G and g are overwritten (scaled).
// `delassus` does the products with G and the linear solves (kernels/contact/admm_delassus.hpp:
// CholeskyDelassus on ws.G by default; with PvSoftDelassus only G's diagonal is read).
// Preconditions: G symmetric positive semi-definite. O(iterations m^2 + refactorisations m^3 / 6)
// on the formed G; O((iterations + refactorisations) (n + m)) with PV-soft.
template <class S, class Delassus>
ContactSolverReport<S> contact_admm(int k, int l, int b, const ContactSettings& settings, ContactSolverWorkspace<S>& ws, S* lambda,
                                    Delassus&& delassus) {
  using std::abs;
  using std::max;
  using std::min;
  using std::sqrt;
  const int m = 3 * k + l + b;
  const int bilateral_row = 3 * k + l;  // the first bilateral row
  ContactSolverReport<S> report{S(0), S(0), S(0)};
  if (m == 0) {
    report.converged = S(1);
    return report;
  }
  S* g = ws.g.data();
  const auto present = [&](int c) { return ws.in_contact[static_cast<size_t>(c)] != S(0); };

  precondition_contact_problem(k, l, b, ws, std::remove_reference_t<Delassus>::formed);  // as the reference

  // Warm start: z = lambda' (projected, absent contacts zero), x = z, y = -(G' z + g' + s).
  warm_start_contact_problem(k, l, b, ws, lambda);
  delassus.times(ws.z.data(), g, ws.sigma.data());
  for (int i = 0; i < m; ++i) ws.x[static_cast<size_t>(i)] = ws.z[static_cast<size_t>(i)];
  for (int c = 0; c < k; ++c) {
    const S* sigma = ws.sigma.data() + 3 * c;
    S* y = ws.y.data() + 3 * c;
    const S shift = ws.mu[static_cast<size_t>(c)] * sqrt(sigma[1] * sigma[1] + sigma[2] * sigma[2]);
    y[0] = -(sigma[0] + shift), y[1] = -sigma[1], y[2] = -sigma[2];
  }
  for (int r = 0; r < l; ++r) ws.y[static_cast<size_t>(3 * k + r)] = select(present(k + r), -ws.sigma[static_cast<size_t>(3 * k + r)], S(0));
  for (int i = bilateral_row; i < m; ++i) ws.y[static_cast<size_t>(i)] = S(0);  // a free row's dual is zero at every iterate
  const S g_norm = contact_velocity_scale(m, ws);

  const S tolerance(static_cast<lane_scalar<S>>(settings.tolerance));
  S running = lanes_with_rows(k, l, b, ws);  // 1 in lanes still iterating
  report.converged = S(1) - running;        // a lane without rows is solved

  // Polishing the warm start (kernels/contact/contact_polish.hpp): the rows the previous step's
  // impulses show acting, solved exactly, with a short active-set chain. Where the active set
  // holds from step to step (a robot standing, a grasp held) that is the solution, and the lane
  // needs no ADMM iteration, nor rho's power iteration or a factor: on redundant contacts (a
  // foot's sole) ADMM alone creeps, and it would polish only after 10 iterations. A lane takes a
  // solution only where its natural residual meets the tolerance, whatever its block mates do; it
  // reports 1 iteration (0 stays the report of a lane with nothing to solve).
  if (std::remove_reference_t<Delassus>::formed && settings.polish) {
    const S polished = polish_contact_solution(k, l, b, running, tolerance, g_norm, ws, report.residual, contact_warm_polish_passes);
    report.iterations = select(polished != S(0), S(1), report.iterations);
    report.converged = select(polished != S(0), S(1), report.converged);
    running = select(polished != S(0), S(0), running);
    if (!any_lane(running != S(0))) {
      unscale_contact_impulses(k, m, ws, lambda);
      return report;
    }
  }

  // rho: the largest eigenvalue L of G' by power iteration (G' is PSD with a unit mean diagonal,
  // so L <= m), then rho = 1e-2 L, between the paper's spectral choice sqrt(L m_min) for a
  // well-conditioned and for a singular G (redundant contacts); residual balancing adapts it.
  S largest(1);
  {
    S* u = ws.rhs.data();
    S* w = ws.sigma.data();
    for (int i = 0; i < m; ++i) u[i] = select(present(contact_row_owner(k, i)), S(1), S(0));
    for (int it = 0; it < 8; ++it) {
      delassus.times(u, nullptr, w);
      S norm(0);
      for (int i = 0; i < m; ++i) norm += w[i] * w[i];
      norm = sqrt(norm);
      largest = max(norm, S(1e-12));
      const S inverse_largest = S(1) / largest;  // one division, not m: on wide lanes they dominate
      for (int i = 0; i < m; ++i) u[i] = w[i] * inverse_largest;
    }
  }
  S rho = S(1e-2) * largest;
  S inverse_rho = S(1) / rho;  // the z-step's y / rho as a product
  const S eta = S(1e-6) * largest;  // proximal term: G may be singular
  const S rho_increment(2.0);
  const auto refactor = [&] { delassus.factor(rho + eta); };
  refactor();

  for (int it = 0; it < settings.max_iterations && any_lane(running != S(0)); ++it) {
    const auto live = running != S(0);
    // x-step: (G' + (rho + eta) I) x = rho z + eta x - y - g' - s, s the De Saxce shift from y
    // (-y's tangential part is sigma_T at the solution).
    for (int c = 0; c < k; ++c) {
      const S* y = ws.y.data() + 3 * c;
      const S shift = ws.mu[static_cast<size_t>(c)] * sqrt(y[1] * y[1] + y[2] * y[2]);
      for (int r = 0; r < 3; ++r) {
        const size_t i = static_cast<size_t>(3 * c + r);
        ws.rhs[i] = rho * ws.z[i] + eta * ws.x[i] - ws.y[i] - g[i] - (r == 0 ? shift : S(0));
      }
    }
    for (int i = 3 * k; i < m; ++i) {
      const size_t u = static_cast<size_t>(i);
      ws.rhs[u] = rho * ws.z[u] + eta * ws.x[u] - ws.y[u] - g[i];
    }
    delassus.solve(ws.rhs.data());
    // z-step: the projection onto the cones; y-step: the scaled dual ascent. Frozen lanes keep theirs.
    S primal(0), change(0), z_norm(0);
    // Row i's new x and z (absent rows: zero): the dual ascent, the residuals' bookkeeping.
    const auto update_row = [&](size_t i, const S& x_new, const S& z_new) {
      const S y_new = ws.y[i] + rho * (x_new - z_new);
      primal = max(primal, abs(x_new - z_new));
      change = max(change, abs(z_new - ws.z[i]));
      z_norm = max(z_norm, abs(z_new));
      ws.x[i] = select(live, x_new, ws.x[i]);
      ws.z[i] = select(live, z_new, ws.z[i]);
      ws.y[i] = select(live, y_new, ws.y[i]);
    };
    for (int c = 0; c < k; ++c) {
      S z[3];
      for (int r = 0; r < 3; ++r) z[r] = ws.rhs[static_cast<size_t>(3 * c + r)] + ws.y[static_cast<size_t>(3 * c + r)] * inverse_rho;
      project_to_cone(ws.mu[static_cast<size_t>(c)], z[0], z[1], z[2]);
      for (int r = 0; r < 3; ++r) {
        const size_t i = static_cast<size_t>(3 * c + r);
        update_row(i, select(present(c), ws.rhs[i], S(0)), select(present(c), z[r], S(0)));
      }
    }
    for (int r = 0; r < l; ++r) {  // limit rows: the projection onto lambda >= 0
      const size_t i = static_cast<size_t>(3 * k + r);
      const S x_new = select(present(k + r), ws.rhs[i], S(0));
      update_row(i, x_new, select(present(k + r), max(x_new + ws.y[i] * inverse_rho, S(0)), S(0)));
    }
    for (int r = l; r < l + b; ++r) {  // bilateral rows: no projection
      const size_t i = static_cast<size_t>(3 * k + r);
      const S x_new = select(present(k + r), ws.rhs[i], S(0));
      update_row(i, x_new, select(present(k + r), x_new + ws.y[i] * inverse_rho, S(0)));
    }
    report.iterations += running;
    // The NCP's own conditions at z decide convergence, by its natural residual.
    delassus.times(ws.z.data(), g, ws.sigma.data());  // sigma = G' z + g'
    const S dual = contact_natural_residual(k, l, b, ws);
    const S residual = max(primal / (S(1) + z_norm), dual / (S(1) + g_norm));
    report.residual = select(live, residual, report.residual);
    const auto done = residual <= tolerance;
    report.converged = select(live && done, S(1), report.converged);
    running = select(done, S(0), running);
    if (!any_lane(running != S(0))) break;
    // Polishing (kernels/contact/contact_polish.hpp): the rows the iterate shows acting, solved exactly;
    // taken only in a lane where that meets the tolerance. It reuses the factor's storage.
    if (std::remove_reference_t<Delassus>::formed && settings.polish && contact_polish_iteration(it)) {
      const S polished = polish_contact_solution(k, l, b, running, tolerance, g_norm, ws, report.residual);
      report.converged = select(polished != S(0), S(1), report.converged);
      running = select(polished != S(0), S(0), running);
      if (!any_lane(running != S(0))) break;
      refactor();
    }
    // Residual balancing (§IV-C): a primal residual far above the dual one asks for a stiffer
    // penalty, the reverse for a softer one; y is the unscaled dual, unchanged.
    const S admm_dual = rho * change;
    const auto stiffer = primal > S(10) * admm_dual, softer = admm_dual > S(10) * primal;
    const S new_rho = min(max(select(stiffer, rho * rho_increment, select(softer, rho / rho_increment, rho)), S(1e-8) * largest), S(1e8) * largest);
    const auto changed = (new_rho != rho) && (running != S(0));
    if (any_lane(changed)) {
      rho = select(changed, new_rho, rho);
      inverse_rho = S(1) / rho;
      refactor();
    }
  }
  unscale_contact_impulses(k, m, ws, lambda);
  return report;
}

template <class S>
ContactSolverReport<S> contact_admm(int k, int l, int b, const ContactSettings& settings, ContactSolverWorkspace<S>& ws, S* lambda) {
  return contact_admm(k, l, b, settings, ws, lambda, CholeskyDelassus<S>{ws, 3 * k + l + b});
}

}  // namespace batchdyn
