// proxLTL: constrained forward dynamics by the sparse Cholesky factorisation of the proximal KKT
// matrix (Carpentier, Budhiraja, Mansard, RSS 2021: ../shared/papers/proxLTL-sparse-kkt-cholesky.txt),
// Pinocchio's constraintDynamics. The joint-space baseline the recursive LCABA and proxBBO are
// measured against (lcaba-proxbbo Table II, column LTL), scalar and one environment at a time.
//
// With the constraint rows J qdd + drift = k of kernels/loops/constraints.hpp and M qdd + b = tau + J^T lambda,
// each proximal iteration (eq. 17-18) solves
//     [ -rho I   J ] [ -lambda^{k+1} ]   [ k - drift + rho lambda^k ]
//     [  J^T     M ] [  qdd^{k+1}    ] = [ tau - b                  ]          K_rho x = y
// The paper's multipliers are ours negated (its M qdd = M qdd_free - J^T lambda), and its mu is our
// rho = 1 / ProximalSettings::mu (the dual proximal weight, as in the dense oracle and proxBBO).
// Eliminating qdd gives (G + rho I) lambda^{k+1} = c + rho lambda^k, G = J M^-1 J^T, exactly the
// dense oracle's iteration (kernels/loops/constrained_dynamics.hpp), which stops on the same test
// (kernels/loops/proximal_stopping.hpp): the two agree to rounding.
//
// K_rho is factored once per call as U D U^T (eq. 24: U unit upper triangular, D diagonal with
// the negative block -D_{Lambda^-1} first) by eliminating its last index first (Alg. 1), over the
// branch-induced pattern of topology/prox_ltl_plan.hpp; every iteration is then two triangular
// sweeps over that pattern. The factor's leading m x m block is the factor of the damped
// Delassus matrix: U_mm D_mm U_mm^T = -(G + rho I) (§IV-E).
//
// Cost per call: CRBA O(n d), the Jacobian rows O(m n d), the factorisation
// O(sum_j (d_j^2 + d_j m_j + m_j^2) + m^3) with d_j the depth of dof j and m_j the rows on it,
// then O(sum_j (d_j + m_j) + m^2) per iteration. The factor is stored dense ((m + n)^2 scalars,
// as Pinocchio's ContactCholeskyDecomposition stores U); only the pattern is read or written.
// Unlike Pinocchio, which fuses the kinematics, CRBA and RNEA passes into one, the baseline calls
// constraint_kinematics, crba and nonlinear_effects in turn (three forward passes).
#pragma once

#include "kernels/loops/constraints.hpp"
#include "kernels/tree/crba.hpp"
#include "kernels/loops/proximal_stopping.hpp"
#include "kernels/tree/rnea.hpp"
#include "topology/prox_ltl_plan.hpp"

namespace batchdyn {

template <class S>
struct ProxLtlData {
  explicit ProxLtlData(const Model& model)
      : constraints(model), kkt(MatrixX<S>::Zero(model.constraint_rows + model.nv, model.constraint_rows + model.nv)),
        solution(VectorX<S>::Zero(model.constraint_rows + model.nv)), lambda(VectorX<S>::Zero(model.constraint_rows)),
        qdd(VectorX<S>::Zero(model.nv)), qdd_previous(VectorX<S>::Zero(model.nv)), residual(VectorX<S>::Zero(model.constraint_rows)) {}
  ConstraintData<S> constraints;  // J, drift, k at (q, v)
  // K_rho, then its factor in place: U strictly above the diagonal, D on it; below the diagonal
  // and outside the plan's pattern: zero, never touched.
  MatrixX<S> kkt;
  VectorX<S> solution;        // x = [-lambda; qdd] of the last iteration
  VectorX<S> lambda;          // m, in the constraint frames (M qdd + b = tau + J^T lambda)
  VectorX<S> qdd, qdd_previous;
  VectorX<S> residual;        // J qdd + drift - k
  int iterations = 0;
  S residual_norm = S(0);     // ||J qdd + drift - k||_inf at exit
  bool converged = false;
};

// Writes K_rho (eq. 18) into the upper triangle of `kkt` ((m + n) square, zero elsewhere): M on the
// plan's dof pattern, J on the rows each dof carries, -rho on the leading diagonal and zero above
// it. O(sum_j (d_j + m_j) + m^2).
template <class S>
void prox_ltl_assemble(const ProxLtlPlan& plan, const MatrixX<S>& M, const MatrixX<S>& J, S rho, MatrixX<S>& kkt) {
  const int m = plan.rows;
  for (int k = 0; k < m; ++k) {
    for (int i = 0; i < k; ++i) kkt(i, k) = S(0);
    kkt(k, k) = -rho;
  }
  for (int k = 0; k < plan.nv; ++k) {
    for (int i = k; i >= 0; i = plan.dof_parent[static_cast<size_t>(i)]) kkt(m + i, m + k) = M(i, k);
    for (int e = plan.row_begin[static_cast<size_t>(k)]; e < plan.row_begin[static_cast<size_t>(k) + 1]; ++e) {
      const int r = plan.rows_on_dof[static_cast<size_t>(e)];
      kkt(r, m + k) = J(r, k);
    }
  }
}

// Factors the K_rho that prox_ltl_assemble wrote, in place, as U D U^T (Alg. 1). Index by index
// from the last: the pivot D_k = A_kk; every pair (i, j) above it in column k takes the rank-1
// update A_ij -= A_ik A_jk / D_k; then U_ik = A_ik / D_k. Over the plan's pattern this is the
// paper's pass over the joints (ancestor dofs) and pass over the constraints (the rows on the
// dof), plus the rows' coupling through the dof, A_rs -= A_rk A_sk / D_k, which fills the
// dense m x m block; that block is then factored densely ("dense factorisation related to the
// OSIM"). Never pivots: D_k > 0 for the dofs (M is positive definite) and < 0 for the rows
// (-(G + rho I) is negative definite), whatever the rank of J.
template <class S>
void prox_ltl_factorize(const ProxLtlPlan& plan, MatrixX<S>& A) {
  const int m = plan.rows;
  const std::vector<int>& parent = plan.dof_parent;
  for (int k = plan.nv - 1; k >= 0; --k) {  // eliminate dof k
    const int kk = m + k;
    const S pivot = A(kk, kk);  // D_k
    const int* rows = plan.rows_on_dof.data() + plan.row_begin[static_cast<size_t>(k)];
    const int row_count = plan.row_count(k);
    for (int i = parent[static_cast<size_t>(k)]; i >= 0; i = parent[static_cast<size_t>(i)]) {
      const int ii = m + i;
      const S a = A(ii, kk) / pivot;
      for (int j = i; j >= 0; j = parent[static_cast<size_t>(j)]) A(m + j, ii) -= A(m + j, kk) * a;  // pass over the joints
      for (int e = 0; e < row_count; ++e) A(rows[e], ii) -= A(rows[e], kk) * a;                    // pass over the constraints
      A(ii, kk) = a;
    }
    // The rows on dof k couple through it. Last row first, so A_sk (s <= r) is still unscaled.
    for (int e = row_count - 1; e >= 0; --e) {
      const int r = rows[e];
      const S a = A(r, kk) / pivot;
      for (int f = 0; f <= e; ++f) A(rows[f], r) -= A(rows[f], kk) * a;
      A(r, kk) = a;
    }
  }
  // The damped Delassus block -(G + rho I) = U_mm D_mm U_mm^T, dense (§IV-E).
  for (int k = m - 1; k >= 0; --k) {
    const S pivot = A(k, k);
    for (int i = k - 1; i >= 0; --i) {
      const S a = A(i, k) / pivot;
      for (int j = 0; j <= i; ++j) A(j, i) -= A(j, k) * a;
      A(i, k) = a;
    }
  }
}

// x <- K_rho^-1 x = U^-T D^-1 U^-1 x with the factor of prox_ltl_factorize. U^-1 scatters each
// index into those above it in its column (last first), U^-T gathers them (first first); both
// walk the column pattern. O(sum_j (d_j + m_j) + m^2).
template <class S>
void prox_ltl_solve_in_place(const ProxLtlPlan& plan, const MatrixX<S>& A, VectorX<S>& x) {
  const int m = plan.rows;
  const std::vector<int>& parent = plan.dof_parent;
  for (int k = plan.nv - 1; k >= 0; --k) {  // U^-1, the dof columns
    const S xk = x[m + k];
    for (int i = parent[static_cast<size_t>(k)]; i >= 0; i = parent[static_cast<size_t>(i)]) x[m + i] -= A(m + i, m + k) * xk;
    for (int e = plan.row_begin[static_cast<size_t>(k)]; e < plan.row_begin[static_cast<size_t>(k) + 1]; ++e) {
      const int r = plan.rows_on_dof[static_cast<size_t>(e)];
      x[r] -= A(r, m + k) * xk;
    }
  }
  for (int k = m - 1; k >= 0; --k)  // U^-1, the row columns
    for (int i = 0; i < k; ++i) x[i] -= A(i, k) * x[k];
  for (int k = 0; k < m + plan.nv; ++k) x[k] /= A(k, k);  // D^-1
  for (int k = 0; k < m; ++k)  // U^-T, the row columns
    for (int i = 0; i < k; ++i) x[k] -= A(i, k) * x[i];
  for (int k = 0; k < plan.nv; ++k) {  // U^-T, the dof columns (ancestors come first)
    S xk = x[m + k];
    for (int i = parent[static_cast<size_t>(k)]; i >= 0; i = parent[static_cast<size_t>(i)]) xk -= A(m + i, m + k) * x[m + i];
    for (int e = plan.row_begin[static_cast<size_t>(k)]; e < plan.row_begin[static_cast<size_t>(k) + 1]; ++e) {
      const int r = plan.rows_on_dof[static_cast<size_t>(e)];
      xk -= A(r, m + k) * x[r];
    }
    x[m + k] = xk;
  }
}

// Constrained forward dynamics by proxLTL: returns qdd (also pd.qdd) and leaves the multipliers
// in pd.lambda (constraint frames), the iterations, residual and convergence in pd. lambda^0 = 0.
// `plan` is plan_prox_ltl(model). Throws Error for a singular model (a joint that moves no mass),
// a plan of another model, or settings that check_proximal_settings refuses. Without
// constraints (m = 0) this is the tree's forward dynamics by the sparse LDL^T of M, converged
// after 0 iterations. Allocates nothing after pd and data are built.
template <class S>
const VectorX<S>& prox_ltl(const Model& model, const ProxLtlPlan& plan, Data<S>& data, ProxLtlData<S>& pd, const VectorX<S>& q,
                           const VectorX<S>& v, const VectorX<S>& tau, const ProximalSettings& settings = {}) {
  check_proximal_settings(settings, "prox_ltl");
  require_regular(model, data.singular_joints, "prox_ltl");
  if (plan.nv != model.nv || plan.rows != model.constraint_rows || pd.kkt.rows() != plan.size())
    throw Error("prox_ltl: the plan or the workspace was made for another model (plan_prox_ltl(model), ProxLtlData(model))");
  const int m = plan.rows, n = plan.nv;
  const ConstraintData<S>& k = pd.constraints;
  constraint_kinematics(model, data, pd.constraints, q, v);
  crba(model, data, q);
  const VectorX<S>& b = nonlinear_effects(model, data, q, v);
  const S rho = S(1.0 / settings.mu);
  prox_ltl_assemble(plan, data.M, k.J, rho, pd.kkt);
  prox_ltl_factorize(plan, pd.kkt);

  pd.lambda.setZero();
  pd.converged = false;
  pd.iterations = 0;
  if (m == 0) {  // nothing to iterate on: one solve with M's factor
    pd.solution = tau - b;
    prox_ltl_solve_in_place(plan, pd.kkt, pd.solution);
    pd.qdd = pd.solution;
    pd.residual_norm = S(0);
    pd.converged = true;
    return pd.qdd;
  }
  ProximalStoppingTest<S> stop(settings, S(1) + (k.k - k.drift).cwiseAbs().maxCoeff());
  for (int it = 0; it < settings.max_iterations; ++it) {
    pd.solution.head(m) = k.k - k.drift + rho * pd.lambda;  // eq. 18, our sign of lambda
    pd.solution.tail(n) = tau - b;
    prox_ltl_solve_in_place(plan, pd.kkt, pd.solution);
    pd.lambda = -pd.solution.head(m);
    pd.qdd_previous = pd.qdd;
    pd.qdd = pd.solution.tail(n);
    // J qdd + drift - k over the plan's pattern (J is zero elsewhere).
    pd.residual = k.drift - k.k;
    for (int j = 0; j < n; ++j)
      for (int e = plan.row_begin[static_cast<size_t>(j)]; e < plan.row_begin[static_cast<size_t>(j) + 1]; ++e) {
        const int r = plan.rows_on_dof[static_cast<size_t>(e)];
        pd.residual[r] += k.J(r, j) * pd.qdd[j];
      }
    pd.iterations = it + 1;
    if (stop.done(it, pd.residual, pd.qdd, pd.qdd_previous)) {
      pd.converged = true;
      break;
    }
  }
  pd.residual_norm = stop.residual_norm();
  return pd.qdd;
}

}  // namespace batchdyn
