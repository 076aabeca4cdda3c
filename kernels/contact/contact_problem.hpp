// The frictional contact problem of one time step on lanes, as its solvers see it
// (kernels/contact/contact_admm.hpp: proximal ADMM, the default; kernels/contact/contact_pgs.hpp: projected
// Gauss-Seidel, the baseline most engines use): the problem's data, its preconditioning, its
// natural residual (the one stopping test of both solvers), and the report.
//
// Given the Delassus matrix G (m rows) and the free velocity term g, find impulses lambda with,
// per contact c (3 rows: normal, two tangents),
//   lambda_c in K_mu = {||lambda_T|| <= mu lambda_N},
//   sigma~_c = (G lambda + g)_c + (mu ||(G lambda + g)_T||, 0, 0) in K_mu*,  lambda_c . sigma~_c = 0
// (Coulomb friction with the De Saxce correction, arXiv 2405.17020 §III-B). Then l joint-limit
// rows, unilateral without friction (lambda_r >= 0, sigma_r >= 0, lambda_r sigma_r = 0, as
// MuJoCo treats them), then b bilateral rows (a robot's loop constraints: lambda_r free,
// sigma_r = 0).
//
// Lanes: a contact or row may be in a lane's problem or not (`in_contact`, a 0/1 lane per
// contact, then per limit and bilateral row): an absent one's rows and columns of G and its g
// are zeroed and its impulses stay zero, so each lane solves exactly its own problem.
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/contact/contact_settings.hpp"
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

// The problem and the solvers' variables, for up to `max_contacts` contacts and `max_rows` rows
// without a cone (limit and bilateral rows), on lanes.
template <class S>
struct ContactSolverWorkspace {
  ContactSolverWorkspace(int max_contacts, int max_rows)
      : max_contacts(max_contacts), max_rows(max_rows), G(size((3 * max_contacts + max_rows) * (3 * max_contacts + max_rows))), factor(G.size()),
        g(size(3 * max_contacts + max_rows)), mu(size(max_contacts)), in_contact(size(max_contacts + max_rows)),
        scale(in_contact.size()), x(g.size()), z(g.size()), y(g.size()), rhs(g.size()), sigma(g.size()), inverse_pivot(g.size()), active(g.size()) {}
  static size_t size(int n) { return static_cast<size_t>(n); }
  // Whether it has room for k contacts and r rows without a cone.
  bool fits(int k, int r) const { return k <= max_contacts && r <= max_rows; }
  int max_contacts, max_rows;
  // Inputs, filled by the caller for k contacts, l limit rows and b bilateral rows (m = 3k + l +
  // b): G (m x m row-major), g (m), mu (k) and in_contact (k + l + b)
  std::vector<S> G, factor, g, mu, in_contact;
  // The preconditioning (one scale per contact or row), the iterate z (the impulses in the scaled
  // problem, in the cones: both solvers), sigma = G z + g; ADMM's factor of G + (rho + eta) I
  // (`factor`, with its reciprocal pivots `inverse_pivot`; the polishing's in between), its x
  // (the linear solve's iterate), scaled dual y and right-hand side.
  std::vector<S> scale, x, z, y, rhs, sigma, inverse_pivot;
  // ADMM's polishing (kernels/contact/contact_polish.hpp): the rows it takes as acting (1 or 0).
  std::vector<S> active;
  size_t bytes() const {
    return (G.size() + factor.size() + g.size() + mu.size() + in_contact.size() + scale.size() + x.size() + z.size() + y.size() + rhs.size() + sigma.size() + inverse_pivot.size() +
            active.size()) *
           sizeof(S);
  }
};

template <class S>
struct ContactSolverReport {
  S iterations;  // per lane, the iterations it ran before it converged (or the cap); 1 where ADMM's polish of
                 // the warm start solved it, 0 where the lane had no row
  S residual;    // per lane, the relative residual in the scaled problem: <= tolerance when converged
  S converged;   // per lane, 1 or 0
};

// The contact, limit or bilateral row (index into in_contact and scale) that row `row` belongs to.
inline int contact_row_owner(int k, int row) { return row < 3 * k ? row / 3 : k + row - 3 * k; }

// Scales the problem in ws in place: lambda = D lambda', one scale per cone (the inverse square
// root of the mean of its block's diagonal, so that the cones keep their shape), one per limit
// or bilateral row, so that G' = D G D has a unit diagonal on average and contact, limit and
// loop rows have comparable stiffness. Absent contacts and rows: D = 1, their g zeroed. When
// `formed`, G's rows and columns are scaled too (absent ones zeroed), O(m^2); otherwise only G's
// diagonal is there and read (PV-soft, kernels/contact/admm_delassus.hpp, scales its products itself).
template <class S>
void precondition_contact_problem(int k, int l, int b, ContactSolverWorkspace<S>& ws, bool formed = true) {
  using std::max;
  using std::sqrt;
  const int m = 3 * k + l + b;
  S* G = ws.G.data();
  const auto present = [&](int c) { return ws.in_contact[static_cast<size_t>(c)] != S(0); };
  for (int c = 0; c < k; ++c) {
    const S mean = (G[(3 * c) * m + 3 * c] + G[(3 * c + 1) * m + 3 * c + 1] + G[(3 * c + 2) * m + 3 * c + 2]) * S(1.0 / 3.0);
    ws.scale[static_cast<size_t>(c)] = select(present(c), S(1) / sqrt(max(mean, S(1e-12))), S(1));
  }
  for (int r = 0; r < l + b; ++r) {
    const int row = 3 * k + r;
    ws.scale[static_cast<size_t>(k + r)] = select(present(k + r), S(1) / sqrt(max(G[row * m + row], S(1e-12))), S(1));
  }
  for (int i = 0; i < m; ++i) {
    const int ci = contact_row_owner(k, i);
    if (formed)
      for (int j = 0; j < m; ++j) {
        const int cj = contact_row_owner(k, j);
        G[i * m + j] = select(present(ci) && present(cj), G[i * m + j] * ws.scale[static_cast<size_t>(ci)] * ws.scale[static_cast<size_t>(cj)], S(0));
      }
    ws.g[static_cast<size_t>(i)] = select(present(ci), ws.g[static_cast<size_t>(i)] * ws.scale[static_cast<size_t>(ci)], S(0));
  }
}

// The warm start in the scaled problem: z = D^-1 lambda, projected (cones, lambda >= 0 for a
// limit row, bilateral rows as they are), zero for absent contacts and rows.
template <class S>
void warm_start_contact_problem(int k, int l, int b, ContactSolverWorkspace<S>& ws, const S* lambda) {
  using std::max;
  const auto present = [&](int c) { return ws.in_contact[static_cast<size_t>(c)] != S(0); };
  for (int c = 0; c < k; ++c) {
    S* z = ws.z.data() + 3 * c;
    const S d = ws.scale[static_cast<size_t>(c)];
    for (int r = 0; r < 3; ++r) z[r] = select(present(c), lambda[3 * c + r] / d, S(0));
    project_to_cone(ws.mu[static_cast<size_t>(c)], z[0], z[1], z[2]);
  }
  for (int r = 0; r < l + b; ++r) {  // limit rows: lambda >= 0; bilateral rows: any lambda
    const size_t i = static_cast<size_t>(3 * k + r);
    const S warm = lambda[i] / ws.scale[static_cast<size_t>(k + r)];
    ws.z[i] = select(present(k + r), r < l ? max(warm, S(0)) : warm, S(0));
  }
}

// The impulses of the scaled iterate z: lambda = D z (N s; in the cones).
template <class S>
void unscale_contact_impulses(int k, int m, const ContactSolverWorkspace<S>& ws, S* lambda) {
  for (int i = 0; i < m; ++i) lambda[i] = ws.z[static_cast<size_t>(i)] * ws.scale[static_cast<size_t>(contact_row_owner(k, i))];
}

// sigma = G' z + g' into ws.sigma on the formed G' (m x m). O(m^2).
template <class S>
void formed_contact_velocity(int m, ContactSolverWorkspace<S>& ws) {
  matrix_times_vector(ws.G.data(), m, m, m, ws.z.data(), ws.g.data(), ws.sigma.data());
}

// One contact's rows of the natural map's projection, proj_K(z - sigma~) with the De Saxce shift
// sigma~ = sigma + (mu ||sigma_t||, 0, 0): (n, t1, t2) for the impulses z and velocities sigma
// (3 values each). The natural residual and the polishing's guess (kernels/contact/contact_polish.hpp)
// both read it.
template <class S>
BATCHDYN_INLINE void natural_map_projection(const S& mu, const S* z, const S* sigma, S& n, S& t1, S& t2) {
  using std::sqrt;
  const S shifted_n = sigma[0] + mu * sqrt(sigma[1] * sigma[1] + sigma[2] * sigma[2]);
  n = z[0] - shifted_n, t1 = z[1] - sigma[1], t2 = z[2] - sigma[2];
  project_to_cone(mu, n, t1, t2);
}

// The NCP's natural residual at impulses z (m, scaled), with ws.sigma = G' z + g' (the caller's:
// formed_contact_velocity, or ADMM's Delassus operator), the largest over the problem of: per
// cone, z - proj_K(z - sigma~) (zero exactly when z in K, sigma~ in K* and z . sigma~ = 0, and of
// the size of the smaller of the two where complementarity fails); per limit row,
// z - max(z - sigma, 0); per bilateral row, |sigma|. G' has a unit diagonal, so impulses and
// velocities are on one scale here. O(m).
template <class S>
S contact_natural_residual(int k, int l, int b, const S* z_all, const ContactSolverWorkspace<S>& ws) {
  using std::abs;
  using std::max;
  const int m = 3 * k + l + b;
  S residual(0);
  for (int c = 0; c < k; ++c) {
    const S* sigma = ws.sigma.data() + 3 * c;
    const S* z = z_all + 3 * c;
    S n, t1, t2;
    natural_map_projection(ws.mu[static_cast<size_t>(c)], z, sigma, n, t1, t2);
    residual = max(residual, max(abs(z[0] - n), max(abs(z[1] - t1), abs(z[2] - t2))));
  }
  for (int i = 3 * k; i < 3 * k + l; ++i) {
    const S z = z_all[i];
    residual = max(residual, abs(z - max(z - ws.sigma[static_cast<size_t>(i)], S(0))));
  }
  for (int i = 3 * k + l; i < m; ++i) residual = max(residual, abs(ws.sigma[static_cast<size_t>(i)]));
  return residual;
}

// The natural residual at the iterate ws.z.
template <class S>
S contact_natural_residual(int k, int l, int b, const ContactSolverWorkspace<S>& ws) {
  return contact_natural_residual(k, l, b, ws.z.data(), ws);
}

// 1 in the lanes whose problem has a row (a contact, limit or bilateral row present), else 0:
// the lanes a solver iterates on. A lane without one is solved as it stands (zero impulses)
// and reports 0 iterations, whatever its block mates solve.
template <class S>
S lanes_with_rows(int k, int l, int b, const ContactSolverWorkspace<S>& ws) {
  S any(0);
  for (int c = 0; c < k + l + b; ++c) any = select(ws.in_contact[static_cast<size_t>(c)] != S(0), S(1), any);
  return any;
}

// ||g'||_inf, the velocity scale of the relative tolerance.
template <class S>
S contact_velocity_scale(int m, const ContactSolverWorkspace<S>& ws) {
  using std::abs;
  using std::max;
  S norm(0);
  for (int i = 0; i < m; ++i) norm = max(norm, abs(ws.g[static_cast<size_t>(i)]));
  return norm;
}

}  // namespace batchdyn
