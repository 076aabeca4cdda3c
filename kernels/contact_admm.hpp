// The frictional contact problem of one time step on lanes, solved by proximal ADMM (Carpentier,
// Le Lidec et al., "From Compliant to Rigid Contact Simulation: a Unified and Efficient
// Approach", RSS 2024, arXiv 2405.17020, §III-IV, Alg. 1), each lane its own problem: the
// batched counterpart of the dense reference's step 3 (kernels/contact_step.hpp).
//
// Given the Delassus matrix G (m = 3 k rows: normal, two tangents per contact) and the free
// velocity term g of k contacts, find impulses lambda with, per contact c,
//   lambda_c in K_mu = {||lambda_T|| <= mu lambda_N},
//   sigma~_c = (G lambda + g)_c + (mu ||(G lambda + g)_T||, 0, 0) in K_mu*,  lambda_c . sigma~_c = 0
// (Coulomb friction with the De Saxce correction, §III-B). ADMM splits lambda into x (the
// linear solve with G + (rho + eta) I, one Cholesky factor per rho) and z (the projection onto
// the cones) with the scaled dual y; at the solution y = -sigma~.
//
// Joint position limits join the same problem as unilateral rows after the 3k cone rows (l of
// them): lambda_r >= 0, sigma_r >= 0, lambda_r sigma_r = 0, no friction (as MuJoCo treats them).
// Bilateral rows (b of them, last: a robot's loop constraints) have no cone: lambda_r free and
// sigma_r = 0. Their z-step projects onto all of R (z = x + y / rho, so y stays 0), and their
// natural residual is |sigma_r|.
//
// Lanes: a contact or limit may be in a lane's problem or not (`in_contact`, a 0/1 lane per
// contact, then per limit row): an absent one's rows and columns of G and its g are zeroed, and
// its x, z, y stay zero, so
// each lane solves exactly its own problem and the zero rows change no other value (x + 0 = x).
// Every lane has its own rho. Lanes iterate together until every lane has converged or the cap
// is hit; a converged lane is frozen, so a lane's result never depends on its block mates.
// No allocation, no data-dependent branch but the loop's exit (when all lanes are done) and the
// refactorisation when some lane's rho changed (which recomputes the same factor in the others).
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/contact_settings.hpp"
#include "layout/dense.hpp"
#include "layout/lanes.hpp"

namespace batchdyn {

// Euclidean projection of (n, t1, t2) onto K_mu, written in place. Lane-generic, branch-free.
template <class S>
BATCHDYN_INLINE void project_to_cone(const S& mu, S& n, S& t1, S& t2) {
  using std::max;
  using std::sqrt;
  const S t = sqrt(t1 * t1 + t2 * t2);
  const auto inside = t <= mu * n;
  const auto polar = mu * t <= -n;
  const S a = (n + mu * t) / (S(1) + mu * mu);  // the normal part of the projection onto the cone's surface
  const S scale = mu * a / max(t, S(1e-30));
  n = select(inside, n, select(polar, S(0), a));
  t1 = select(inside, t1, select(polar, S(0), scale * t1));
  t2 = select(inside, t2, select(polar, S(0), scale * t2));
}

// Workspace for problems of up to `max_contacts` contacts and `max_rows` rows without a cone
// (limit and bilateral rows), on lanes.
template <class S>
struct ContactAdmmWorkspace {
  ContactAdmmWorkspace(int max_contacts, int max_rows)
      : G(size((3 * max_contacts + max_rows) * (3 * max_contacts + max_rows))), factor(G.size()),
        g(size(3 * max_contacts + max_rows)), mu(size(max_contacts)), in_contact(size(max_contacts + max_rows)),
        scale(in_contact.size()), x(g.size()), z(g.size()), y(g.size()), rhs(g.size()), sigma(g.size()) {}
  static size_t size(int n) { return static_cast<size_t>(n); }
  // Inputs, filled by the caller for k contacts, l limit rows and b bilateral rows (m = 3k + l +
  // b): G (m x m row-major), g (m), mu (k) and in_contact (k + l + b)
  std::vector<S> G, factor, g, mu, in_contact;
  // ADMM's variables, in the scaled problem
  std::vector<S> scale, x, z, y, rhs, sigma;
  size_t bytes() const {
    return (G.size() + factor.size() + g.size() + mu.size() + in_contact.size() + scale.size() + x.size() + z.size() + y.size() + rhs.size() + sigma.size()) * sizeof(S);
  }
};

template <class S>
struct ContactAdmmReport {
  S iterations;  // per lane, the iterations it ran before it converged (or the cap)
  S residual;    // per lane, max(primal / (1 + ||z||), natural / (1 + ||g||)) in the scaled problem: <= tolerance when converged
  S converged;   // per lane, 1 or 0
};

// Solves the problem of k contacts, l limit rows and b bilateral rows in ws (G, g, mu,
// in_contact) on every lane; lambda (3k + l + b lanes) is
// the warm start on entry (the previous step's impulses; zero for none) and the impulses on exit
// (N s, in the cones; zero for an absent contact or row). G and g are overwritten (scaled).
// Preconditions: G symmetric positive semi-definite. O(iterations m^2 + refactorisations m^3 / 6).
template <class S>
ContactAdmmReport<S> contact_admm(int k, int l, int b, const ContactSettings& settings, ContactAdmmWorkspace<S>& ws, S* lambda) {
  using std::abs;
  using std::max;
  using std::min;
  using std::sqrt;
  const int m = 3 * k + l + b;
  const int bilateral_row = 3 * k + l;  // the first bilateral row
  ContactAdmmReport<S> report{S(0), S(0), S(0)};
  if (m == 0) {
    report.converged = S(1);
    return report;
  }
  S* G = ws.G.data();
  S* g = ws.g.data();
  const auto present = [&](int c) { return ws.in_contact[static_cast<size_t>(c)] != S(0); };
  const auto owner = [&](int row) { return row < 3 * k ? row / 3 : k + row - 3 * k; };  // the contact, limit or bilateral row of a row

  // Preconditioning (as the reference): lambda = D lambda', one scale per cone, the inverse
  // square root of the mean of its block's diagonal, so that G' = D G D has a unit diagonal on
  // average and the cones keep their shape, one per limit or bilateral row. Absent ones: D = 1, rows zeroed.
  for (int c = 0; c < k; ++c) {
    const S mean = (G[(3 * c) * m + 3 * c] + G[(3 * c + 1) * m + 3 * c + 1] + G[(3 * c + 2) * m + 3 * c + 2]) * S(1.0 / 3.0);
    ws.scale[static_cast<size_t>(c)] = select(present(c), S(1) / sqrt(max(mean, S(1e-12))), S(1));
  }
  for (int r = 0; r < l + b; ++r) {
    const int row = 3 * k + r;
    ws.scale[static_cast<size_t>(k + r)] = select(present(k + r), S(1) / sqrt(max(G[row * m + row], S(1e-12))), S(1));
  }
  for (int i = 0; i < m; ++i) {
    const int ci = owner(i);
    for (int j = 0; j < m; ++j) {
      const int cj = owner(j);
      G[i * m + j] = select(present(ci) && present(cj), G[i * m + j] * ws.scale[static_cast<size_t>(ci)] * ws.scale[static_cast<size_t>(cj)], S(0));
    }
    g[i] = select(present(ci), g[i] * ws.scale[static_cast<size_t>(ci)], S(0));
  }

  // rho: the largest eigenvalue L of G' by power iteration (G' is PSD with a unit mean diagonal,
  // so L <= m), then rho = 1e-2 L, between the paper's spectral choice sqrt(L m_min) for a
  // well-conditioned and for a singular G (redundant contacts); residual balancing adapts it.
  S largest(1);
  {
    S* u = ws.rhs.data();
    S* w = ws.sigma.data();
    for (int i = 0; i < m; ++i) u[i] = select(present(owner(i)), S(1), S(0));
    for (int it = 0; it < 8; ++it) {
      S norm(0);
      for (int i = 0; i < m; ++i) {
        S s(0);
        for (int j = 0; j < m; ++j) s += G[i * m + j] * u[j];
        w[i] = s;
        norm += s * s;
      }
      norm = sqrt(norm);
      largest = max(norm, S(1e-12));
      for (int i = 0; i < m; ++i) u[i] = w[i] / largest;
    }
  }
  S rho = S(1e-2) * largest;
  const S eta = S(1e-6) * largest;  // proximal term: G may be singular
  const S rho_increment(2.0);
  const auto refactor = [&] { damped_cholesky(G, m, rho + eta, ws.factor.data()); };
  refactor();

  // Warm start: z = lambda' (projected, absent contacts zero), x = z, y = -(G' z + g' + s).
  for (int c = 0; c < k; ++c) {
    S* z = ws.z.data() + 3 * c;
    const S d = ws.scale[static_cast<size_t>(c)];
    for (int r = 0; r < 3; ++r) z[r] = select(present(c), lambda[3 * c + r] / d, S(0));
    project_to_cone(ws.mu[static_cast<size_t>(c)], z[0], z[1], z[2]);
  }
  for (int r = 0; r < l + b; ++r) {  // limit rows: lambda >= 0; bilateral rows: any lambda
    const size_t i = static_cast<size_t>(3 * k + r);
    const S warm = lambda[i] / ws.scale[static_cast<size_t>(k + r)];
    ws.z[i] = select(present(k + r), static_cast<int>(i) < bilateral_row ? max(warm, S(0)) : warm, S(0));
  }
  for (int i = 0; i < m; ++i) {
    S s = g[i];
    for (int j = 0; j < m; ++j) s += G[i * m + j] * ws.z[static_cast<size_t>(j)];
    ws.sigma[static_cast<size_t>(i)] = s;
    ws.x[static_cast<size_t>(i)] = ws.z[static_cast<size_t>(i)];
  }
  for (int c = 0; c < k; ++c) {
    const S* sigma = ws.sigma.data() + 3 * c;
    S* y = ws.y.data() + 3 * c;
    const S shift = ws.mu[static_cast<size_t>(c)] * sqrt(sigma[1] * sigma[1] + sigma[2] * sigma[2]);
    y[0] = -(sigma[0] + shift), y[1] = -sigma[1], y[2] = -sigma[2];
  }
  for (int r = 0; r < l; ++r) ws.y[static_cast<size_t>(3 * k + r)] = select(present(k + r), -ws.sigma[static_cast<size_t>(3 * k + r)], S(0));
  for (int i = bilateral_row; i < m; ++i) ws.y[static_cast<size_t>(i)] = S(0);  // a free row's dual is zero at every iterate
  S g_norm(0);
  for (int i = 0; i < m; ++i) g_norm = max(g_norm, abs(g[i]));

  const S tolerance(static_cast<lane_scalar<S>>(settings.tolerance));
  S running(1);  // 1 in lanes still iterating
  for (int it = 0; it < settings.max_iterations; ++it) {
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
    cholesky_solve(ws.factor.data(), m, ws.rhs.data());
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
      for (int r = 0; r < 3; ++r) z[r] = ws.rhs[static_cast<size_t>(3 * c + r)] + ws.y[static_cast<size_t>(3 * c + r)] / rho;
      project_to_cone(ws.mu[static_cast<size_t>(c)], z[0], z[1], z[2]);
      for (int r = 0; r < 3; ++r) {
        const size_t i = static_cast<size_t>(3 * c + r);
        update_row(i, select(present(c), ws.rhs[i], S(0)), select(present(c), z[r], S(0)));
      }
    }
    for (int r = 0; r < l; ++r) {  // limit rows: the projection onto lambda >= 0
      const size_t i = static_cast<size_t>(3 * k + r);
      const S x_new = select(present(k + r), ws.rhs[i], S(0));
      update_row(i, x_new, select(present(k + r), max(x_new + ws.y[i] / rho, S(0)), S(0)));
    }
    for (int r = l; r < l + b; ++r) {  // bilateral rows: no projection
      const size_t i = static_cast<size_t>(3 * k + r);
      const S x_new = select(present(k + r), ws.rhs[i], S(0));
      update_row(i, x_new, select(present(k + r), x_new + ws.y[i] / rho, S(0)));
    }
    report.iterations += running;
    // The NCP's own conditions at z decide convergence, by its natural residual per cone:
    // z - proj_K(z - sigma~), zero exactly when z in K, sigma~ in K* and z . sigma~ = 0, and of
    // the size of the smaller of the two where complementarity fails (G' has a unit diagonal, so
    // impulses and velocities are on one scale here).
    S dual(0);
    for (int i = 0; i < m; ++i) {
      S s = g[i];
      for (int j = 0; j < m; ++j) s += G[i * m + j] * ws.z[static_cast<size_t>(j)];
      ws.sigma[static_cast<size_t>(i)] = s;
    }
    for (int c = 0; c < k; ++c) {
      const S* sigma = ws.sigma.data() + 3 * c;
      const S* z = ws.z.data() + 3 * c;
      const S mu = ws.mu[static_cast<size_t>(c)];
      const S shifted_n = sigma[0] + mu * sqrt(sigma[1] * sigma[1] + sigma[2] * sigma[2]);
      S n = z[0] - shifted_n, t1 = z[1] - sigma[1], t2 = z[2] - sigma[2];
      project_to_cone(mu, n, t1, t2);
      dual = max(dual, max(abs(z[0] - n), max(abs(z[1] - t1), abs(z[2] - t2))));
    }
    for (int i = 3 * k; i < bilateral_row; ++i) {
      const S z = ws.z[static_cast<size_t>(i)];
      dual = max(dual, abs(z - max(z - ws.sigma[static_cast<size_t>(i)], S(0))));
    }
    for (int i = bilateral_row; i < m; ++i) dual = max(dual, abs(ws.sigma[static_cast<size_t>(i)]));
    const S residual = max(primal / (S(1) + z_norm), dual / (S(1) + g_norm));
    report.residual = select(live, residual, report.residual);
    const auto done = residual <= tolerance;
    report.converged = select(live && done, S(1), report.converged);
    running = select(done, S(0), running);
    if (!any_lane(running != S(0))) break;
    // Residual balancing (§IV-C): a primal residual far above the dual one asks for a stiffer
    // penalty, the reverse for a softer one; y is the unscaled dual, unchanged.
    const S admm_dual = rho * change;
    const auto stiffer = primal > S(10) * admm_dual, softer = admm_dual > S(10) * primal;
    const S new_rho = min(max(select(stiffer, rho * rho_increment, select(softer, rho / rho_increment, rho)), S(1e-8) * largest), S(1e8) * largest);
    const auto changed = (new_rho != rho) && (running != S(0));
    if (any_lane(changed)) {
      rho = select(changed, new_rho, rho);
      refactor();
    }
  }
  for (int i = 0; i < m; ++i) lambda[i] = ws.z[static_cast<size_t>(i)] * ws.scale[static_cast<size_t>(owner(i))];
  return report;
}

}  // namespace batchdyn
