// The frictional contact problem of one time step on lanes (kernels/contact/contact_problem.hpp), solved
// by projected Gauss-Seidel: the baseline that most engines use (ODE, Bullet, PhysX; Pinocchio's
// PGSContactSolverTpl), on the same interface, problem and stopping test as proximal ADMM
// (kernels/contact/contact_admm.hpp), so the two compare iteration for iteration
// (ContactSettings::solver).
//
// One sweep visits the contacts and rows in order, each with the others' latest impulses
// (Gauss-Seidel), on the preconditioned problem G' = D G D:
//   contact c:  sigma_c = (G' z + g')_c
//               z_N <- max(z_N - sigma_N / G'_NN, 0)                 (the normal row's exact solve)
//               sigma_T += G'_TN dz_N
//               z_T <- proj_{||z_T|| <= mu z_N}(z_T - sigma_T / L_T)  (L_T: the largest eigenvalue
//                                                                     of the 2x2 tangent block)
//   limit row:  z <- max(z - sigma / G'_rr, 0);   bilateral row: z <- z - sigma / G'_rr.
// A scalar tangent step (not the 2x2 block's inverse) keeps the fixed point Coulomb's: a sliding
// contact's z_T on the disk's rim is then opposite to its slip sigma_T (maximal dissipation), and
// the natural residual of the De Saxce NCP vanishes there; 1 / L_T makes the step a contraction.
// A sweep is O(m^2), as one ADMM iteration, with no factorisation.
//
// Lanes iterate together until every lane has converged (the natural residual, as ADMM's) or the
// cap is hit; a converged lane is frozen, so a lane's result never depends on its block mates. No
// allocation, no data-dependent branch but the loop's exit.
#pragma once

#include <algorithm>

#include "kernels/contact/contact_problem.hpp"

namespace batchdyn {

// Solves the problem of k contacts, l limit rows and b bilateral rows in ws (G, g, mu,
// in_contact) on every lane by projected Gauss-Seidel; lambda (3k + l + b lanes) is the warm
// start on entry and the impulses on exit (N s, in the cones; zero for an absent contact or row).
// G and g are overwritten (scaled); ws.rhs holds the sweep's inverse step sizes.
// Preconditions: G symmetric positive semi-definite. O(iterations m^2).
template <class S>
ContactSolverReport<S> contact_pgs(int k, int l, int b, const ContactSettings& settings, ContactSolverWorkspace<S>& ws, S* lambda) {
  using std::max;
  using std::min;
  using std::sqrt;
  const int m = 3 * k + l + b;
  ContactSolverReport<S> report{S(0), S(0), S(0)};
  if (m == 0) {
    report.converged = S(1);
    return report;
  }
  const S* G = ws.G.data();
  const S* g = ws.g.data();
  S* z = ws.z.data();
  const auto present = [&](int c) { return ws.in_contact[static_cast<size_t>(c)] != S(0); };

  precondition_contact_problem(k, l, b, ws);
  warm_start_contact_problem(k, l, b, ws, lambda);

  // The inverse step sizes (absent contacts and rows: 0, so they stay at zero): 1 / G'_NN and
  // 1 / L_T per contact, L_T = (a + c) / 2 + sqrt(((a - c) / 2)^2 + b^2) for the tangent block
  // [[a, b], [b, c]]; 1 / G'_rr per limit or bilateral row.
  S* step = ws.rhs.data();
  const auto inverse = [](const S& d) { return S(1) / max(d, S(1e-12)); };
  for (int c = 0; c < k; ++c) {
    const int n = 3 * c;
    const S a = G[(n + 1) * m + n + 1], off = G[(n + 1) * m + n + 2], d = G[(n + 2) * m + n + 2];
    const S half_difference = S(0.5) * (a - d);
    const S largest = S(0.5) * (a + d) + sqrt(half_difference * half_difference + off * off);
    step[n] = select(present(c), inverse(G[n * m + n]), S(0));
    step[n + 1] = step[n + 2] = select(present(c), inverse(largest), S(0));
  }
  for (int r = 0; r < l + b; ++r) {
    const int i = 3 * k + r;
    step[i] = select(present(k + r), inverse(G[i * m + i]), S(0));
  }
  const auto row_velocity = [&](int i) {  // (G' z + g')_i at the latest z
    S s = g[i];
    for (int j = 0; j < m; ++j) s += G[i * m + j] * z[j];
    return s;
  };

  const S g_norm = contact_velocity_scale(m, ws);
  const S tolerance(static_cast<lane_scalar<S>>(settings.tolerance));
  S running = lanes_with_rows(k, l, b, ws);  // 1 in lanes still iterating
  report.converged = S(1) - running;        // a lane without rows is solved
  for (int it = 0; it < settings.max_iterations && any_lane(running != S(0)); ++it) {
    const auto live = running != S(0);
    for (int c = 0; c < k; ++c) {  // the contacts: the normal, then the tangents on the friction disk
      const int n = 3 * c;
      const S sigma_n = row_velocity(n);
      S sigma_t1 = row_velocity(n + 1), sigma_t2 = row_velocity(n + 2);
      const S normal = max(z[n] - sigma_n * step[n], S(0));
      const S dn = normal - z[n];
      sigma_t1 += G[(n + 1) * m + n] * dn;
      sigma_t2 += G[(n + 2) * m + n] * dn;
      S t1 = z[n + 1] - sigma_t1 * step[n + 1], t2 = z[n + 2] - sigma_t2 * step[n + 2];
      const S radius = ws.mu[static_cast<size_t>(c)] * normal, length = sqrt(t1 * t1 + t2 * t2);
      const S shrink = min(S(1), radius / max(length, S(1e-30)));
      t1 *= shrink, t2 *= shrink;
      z[n] = select(live, normal, z[n]);
      z[n + 1] = select(live, t1, z[n + 1]);
      z[n + 2] = select(live, t2, z[n + 2]);
    }
    for (int i = 3 * k; i < m; ++i) {  // limit rows onto lambda >= 0, bilateral rows free
      const S updated = z[i] - row_velocity(i) * step[i];
      z[i] = select(live, i < 3 * k + l ? max(updated, S(0)) : updated, z[i]);
    }
    report.iterations += running;
    formed_contact_velocity(m, ws);
    const S residual = contact_natural_residual(k, l, b, ws) / (S(1) + g_norm);
    report.residual = select(live, residual, report.residual);
    const auto done = residual <= tolerance;
    report.converged = select(live && done, S(1), report.converged);
    running = select(done, S(0), running);
    if (!any_lane(running != S(0))) break;
  }
  unscale_contact_impulses(k, m, ws, lambda);
  return report;
}

}  // namespace batchdyn
