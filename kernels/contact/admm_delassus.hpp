// ADMM's Delassus operator (kernels/contact/contact_admm.hpp): what ADMM does with the scaled problem's
// G' = P (G + R) P (P the preconditioning's scales, R the compliant contacts' compliance on their
// normal rows), two ways (ContactSettings::admm_linear_solve):
//   times(z, offset, out)  out = offset + G' z (offset optional): the power iteration, and the
//                          velocities G' z + g' of the warm start and of every iteration's
//                          natural residual;
//   factor(delta), solve   the x-step, rhs <- (G' + delta I)^-1 rhs (delta = rho + eta, per lane).
//
// - CholeskyDelassus: on the formed G' (m x m, from PV-OSIMr): O(m^2) per product and per solve,
//   O(m^3 / 6) per factorisation (layout/dense.hpp).
// - PvSoftDelassus: G is never formed (only its diagonal, for the preconditioning):
//     G' z = P (J M^-1 J^T (P z) + R P z): one force response on M's factor (the configuration's
//     Delassus sweep, kernels/delassus/delassus_operations.hpp), O(n + m);
//     (G' + delta I) x = rhs  <=>  (G + D) (P x) = P^-1 rhs,  D = R + delta P^-2:
//     PV-soft (kernels/delassus/pv_soft.hpp), O(n + m) per factorisation and per solve.
//   Its rows must act on one body each (ground contacts, joint limits).
// An absent row (in_contact 0): a zeroed row and column of G' (Cholesky) or weight 0 and a
// masked product (PV-soft); ADMM zeroes its iterate either way.
#pragma once

#include "kernels/contact/contact_problem.hpp"
#include "kernels/delassus/pv_soft.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

template <class S>
struct CholeskyDelassus {
  static constexpr bool formed = true;  // ADMM preconditions G' in place
  ContactSolverWorkspace<S>& problem;
  int m;

  void times(const S* z, const S* offset, S* out) const { matrix_times_vector(problem.G.data(), m, m, m, z, offset, out); }
  void factor(const S& delta) { damped_cholesky(problem.G.data(), m, delta, problem.factor.data(), problem.inverse_pivot.data()); }
  void solve(S* rhs) { cholesky_solve(problem.factor.data(), problem.inverse_pivot.data(), m, rhs); }
};

// PvSoftDelassus's rows and buffers, sized for up to `max_rows` rows.
template <class S>
struct PvSoftDelassusWorkspace {
  PvSoftDelassusWorkspace(const Model& model, int max_rows)
      : tree(model), rows(static_cast<size_t>(max_rows)), compliance(rows.size()), weight(rows.size()), rhs(rows.size()) {}
  PvSoftWorkspace<S> tree;         // PV-soft's factor; its joint_torque / joint_acceleration are times()'s scratch too
  std::vector<PvSoftRow<S>> rows;  // filled by the caller, in the problem's row order
  std::vector<S> compliance;       // R per row (0: rigid), filled by the caller
  std::vector<S> weight, rhs;      // D^-1 per row; the solve's right-hand side, and times()'s P z
  size_t bytes() const { return tree.bytes() + rows.size() * sizeof(PvSoftRow<S>) + (compliance.size() + weight.size() + rhs.size()) * sizeof(S); }
};

template <class S>
struct PvSoftDelassus {
  static constexpr bool formed = false;  // only G's diagonal is there
  const ModelConstants<S>& c;
  DelassusWorkspace<S>& configuration;      // the response's scratch (body forces and accelerations)
  TreeFactor<S> M;                          // ^{λ(i)}M_i and M's factor at q (a Delassus sweep's, or ABA's)
  int k, m;                                 // contacts, rows
  const ContactSolverWorkspace<S>& problem;  // its scales and in_contact (after preconditioning)
  PvSoftDelassusWorkspace<S>& ws;

  S scale(int i) const { return problem.scale[static_cast<size_t>(contact_row_owner(k, i))]; }
  auto present(int i) const { return problem.in_contact[static_cast<size_t>(contact_row_owner(k, i))] != S(0); }

  void times(const S* z, const S* offset, S* out) {
    for (Force<S>& f : configuration.body_force) f = Force<S>::zero();
    for (S& tau : ws.tree.joint_torque) tau = S(0);
    for (int i = 0; i < m; ++i) {  // the forces J^T (P z) on the bodies and joints
      const S y = select(present(i), z[i] * scale(i), S(0));
      ws.rhs[static_cast<size_t>(i)] = y;
      const PvSoftRow<S>& row = ws.rows[static_cast<size_t>(i)];
      if (row.column) {
        configuration.body_force[static_cast<size_t>(row.body)] += *row.column * y;
      } else {
        ws.tree.joint_torque[static_cast<size_t>(row.dof)] += row.sign * y;
      }
    }
    force_response(c, M, configuration, ws.tree.joint_acceleration.data(), ws.tree.joint_torque.data());
    for (int i = 0; i < m; ++i) {  // P (J a + R P z)
      const PvSoftRow<S>& row = ws.rows[static_cast<size_t>(i)];
      const S velocity = row.column ? dot(*row.column, configuration.body_acceleration[static_cast<size_t>(row.body)])
                                    : row.sign * ws.tree.joint_acceleration[static_cast<size_t>(row.dof)];
      const S product = select(present(i), scale(i) * (velocity + ws.compliance[static_cast<size_t>(i)] * ws.rhs[static_cast<size_t>(i)]), S(0));
      out[i] = offset ? offset[i] + product : product;
    }
  }
  void factor(const S& delta) {
    for (int i = 0; i < m; ++i) {
      const S s = scale(i);
      ws.weight[static_cast<size_t>(i)] = select(present(i), S(1) / (ws.compliance[static_cast<size_t>(i)] + delta / (s * s)), S(0));  // D^-1
    }
    pv_soft_factor(c, M.parent_from_body, m, ws.rows.data(), ws.weight.data(), ws.tree);
  }
  void solve(S* rhs) {
    for (int i = 0; i < m; ++i) ws.rhs[static_cast<size_t>(i)] = rhs[i] / scale(i);  // P^-1 rhs
    pv_soft_solve(c, m, ws.rows.data(), ws.weight.data(), ws.rhs.data(), ws.tree, ws.rhs.data());
    for (int i = 0; i < m; ++i) rhs[i] = ws.rhs[static_cast<size_t>(i)] / scale(i);  // x = P^-1 lambda
  }
};

}  // namespace batchdyn
