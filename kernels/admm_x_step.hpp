// ADMM's x-step (kernels/contact_admm.hpp), the linear solve x = (G' + delta I)^-1 rhs of the
// scaled contact problem (G' = P (G + R) P: P the preconditioning's scales, R the compliant
// contacts' compliance on their normal rows; delta = rho + eta, per lane), two ways
// (ContactSettings::admm_linear_solve):
//   - CholeskyXStep: on the formed G', one Cholesky factor per delta (layout/dense.hpp):
//     O(m^3 / 6) per factorisation, O(m^2) per solve;
//   - PvSoftXStep: G is never factored. (G' + delta I) x = rhs is, with lambda = P x,
//       (G + D) lambda = P^-1 rhs,   D = R + delta P^-2,
//     the PV-soft system of kernels/pv_soft.hpp: O(n + m) per factorisation and per solve, on the
//     tree. Its rows must act on one body each (ground contacts, joint limits).
// An absent row (in_contact 0) gets weight 0 in PV-soft (x = 0) and a zeroed row of G' in
// Cholesky (x = rhs / delta); ADMM zeroes it either way.
#pragma once

#include "kernels/contact_problem.hpp"
#include "kernels/pv_soft.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

template <class S>
struct CholeskyXStep {
  ContactSolverWorkspace<S>& problem;
  int m;
  void factor(const S& delta) { damped_cholesky(problem.G.data(), m, delta, problem.factor.data()); }
  void solve(S* rhs) { cholesky_solve(problem.factor.data(), m, rhs); }
};

// The PV-soft x-step's rows and buffers, sized for up to `max_rows` rows.
template <class S>
struct PvSoftXStepWorkspace {
  PvSoftXStepWorkspace(const Model& model, int max_rows)
      : tree(model), rows(static_cast<size_t>(max_rows)), compliance(rows.size()), weight(rows.size()), rhs(rows.size()) {}
  PvSoftWorkspace<S> tree;
  std::vector<PvSoftRow<S>> rows;  // filled by the caller, in the problem's row order
  std::vector<S> compliance;       // R per row (0: rigid), filled by the caller
  std::vector<S> weight, rhs;      // D^-1 per row, and the solve's right-hand side
  size_t bytes() const { return tree.bytes() + rows.size() * sizeof(PvSoftRow<S>) + (compliance.size() + weight.size() + rhs.size()) * sizeof(S); }
};

template <class S>
struct PvSoftXStep {
  const ModelConstants<S>& c;
  const Transform<S>* parent_from_body;  // the configuration's ^{λ(i)}M_i
  int k, m;                              // contacts, rows
  const ContactSolverWorkspace<S>& problem;  // its scales and in_contact (after preconditioning)
  PvSoftXStepWorkspace<S>& ws;

  S scale(int i) const { return problem.scale[static_cast<size_t>(contact_row_owner(k, i))]; }
  void factor(const S& delta) {
    for (int i = 0; i < m; ++i) {
      const S s = scale(i);
      const auto present = problem.in_contact[static_cast<size_t>(contact_row_owner(k, i))] != S(0);
      ws.weight[static_cast<size_t>(i)] = select(present, S(1) / (ws.compliance[static_cast<size_t>(i)] + delta / (s * s)), S(0));  // D^-1
    }
    pv_soft_factor(c, parent_from_body, m, ws.rows.data(), ws.weight.data(), ws.tree);
  }
  void solve(S* rhs) {
    for (int i = 0; i < m; ++i) ws.rhs[static_cast<size_t>(i)] = rhs[i] / scale(i);  // P^-1 rhs
    pv_soft_solve(c, m, ws.rows.data(), ws.weight.data(), ws.rhs.data(), ws.tree, ws.rhs.data());
    for (int i = 0; i < m; ++i) rhs[i] = ws.rhs[static_cast<size_t>(i)] / scale(i);  // x = P^-1 lambda
  }
};

}  // namespace batchdyn
