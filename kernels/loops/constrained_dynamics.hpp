// Dense joint-space constrained forward dynamics: the oracle for LCABA / proxBBO.
//
// Gauss' principle with the constraint rows of constraints.hpp:
//     M qdd + b = tau + J^T lambda,     J qdd + drift = k.
// Eliminating qdd gives the dual problem G lambda = c with the Delassus matrix G = J M^{-1} J^T
// and c = k - drift - J qdd_free, qdd_free = M^{-1}(tau - b). Redundant or singular constraints
// make G singular, so it is solved by the proximal point method on the dual (lcaba-proxbbo §III,
// Eq. 10; Carpentier et al. RSS 2021):
//     (G + rho I) lambda^{k+1} = c + rho lambda^k,     rho = 1 / mu.
// Each iteration reuses one Cholesky factor of G + rho I. For consistent constraints qdd
// converges to the exact constrained acceleration and lambda to the multipliers closest to
// lambda^0 (= 0: the minimum-norm ones). For inconsistent rows (an over-constrained mechanism
// away from its constraint manifold) qdd converges to the least-squares compromise: the
// residual J qdd + drift - k is the part of the right-hand side outside range(J), and qdd is
// the M-closest acceleration achieving the rest. lambda then drifts along null(J^T), which
// does not change qdd; the iteration stops once the residual stagnates (the stopping test of
// kernels/loops/proximal_stopping.hpp, shared with proxLTL: kernels/loops/prox_ltl.hpp, the same iteration on
// the sparse factor of the KKT matrix).
#pragma once

#include <Eigen/Cholesky>
#include <algorithm>

#include "kernels/loops/constraints.hpp"
#include "kernels/tree/crba.hpp"
#include "kernels/loops/proximal_stopping.hpp"
#include "kernels/tree/rnea.hpp"

namespace batchdyn {

template <class S>
struct ConstrainedData {
  explicit ConstrainedData(const Model& model)
      : constraints(model), M_factor(model.nv), G(MatrixX<S>::Zero(model.constraint_rows, model.constraint_rows)),
        G_factor(model.constraint_rows), Minv_Jt(MatrixX<S>::Zero(model.nv, model.constraint_rows)),
        qdd_free(VectorX<S>::Zero(model.nv)), qdd(VectorX<S>::Zero(model.nv)), qdd_previous(VectorX<S>::Zero(model.nv)),
        c(VectorX<S>::Zero(model.constraint_rows)), lambda(VectorX<S>::Zero(model.constraint_rows)),
        rhs(VectorX<S>::Zero(model.constraint_rows)), residual(VectorX<S>::Zero(model.constraint_rows)) {}
  ConstraintData<S> constraints;
  Eigen::LLT<MatrixX<S>> M_factor;
  MatrixX<S> G;  // Delassus J M^{-1} J^T
  Eigen::LLT<MatrixX<S>> G_factor;  // of G + rho I
  MatrixX<S> Minv_Jt;
  VectorX<S> qdd_free, qdd, qdd_previous, c, lambda, rhs, residual;
  int iterations = 0;
  S residual_norm = S(0);  // ||J qdd + drift - k||_inf at exit
  bool converged = false;
};

// Computes M (data.M), J, drift, k and the Delassus matrix cd.G at (q, v). O(n d^2 + m n d + m^2 n).
template <class S>
void assemble_constrained_system(const Model& model, Data<S>& data, ConstrainedData<S>& cd, const VectorX<S>& q,
                                 const VectorX<S>& v) {
  require_regular(model, data.singular_joints, "constrained dynamics");
  constraint_kinematics(model, data, cd.constraints, q, v);
  crba(model, data, q);
  cd.M_factor.compute(data.M);
  if (cd.M_factor.info() != Eigen::Success) throw Error("constrained dynamics: M(q) is not positive definite");
  cd.Minv_Jt = cd.constraints.J.transpose();
  cd.M_factor.solveInPlace(cd.Minv_Jt);
  cd.G.noalias() = cd.constraints.J * cd.Minv_Jt;
}

// Solves for qdd (returned, also cd.qdd) and lambda (cd.lambda, in the constraint frames).
// lambda^0 = 0. Reports cd.iterations, cd.residual_norm, cd.converged. Without constraints
// (m = 0) qdd is the tree's, converged after 0 iterations. Throws Error for settings that
// check_proximal_settings refuses.
template <class S>
const VectorX<S>& constrained_forward_dynamics(const Model& model, Data<S>& data, ConstrainedData<S>& cd,
                                               const VectorX<S>& q, const VectorX<S>& v, const VectorX<S>& tau,
                                               const ProximalSettings& settings = {}) {
  using std::abs;
  check_proximal_settings(settings, "constrained_forward_dynamics");
  assemble_constrained_system(model, data, cd, q, v);
  const VectorX<S>& b = nonlinear_effects(model, data, q, v);
  cd.qdd_free = tau - b;
  cd.M_factor.solveInPlace(cd.qdd_free);
  if (model.constraint_rows == 0) {  // nothing to solve (and no max over an empty residual)
    cd.qdd = cd.qdd_free;
    cd.iterations = 0;
    cd.residual_norm = S(0);
    cd.converged = true;
    return cd.qdd;
  }
  const ConstraintData<S>& k = cd.constraints;
  cd.c = k.k - k.drift;
  cd.c.noalias() -= k.J * cd.qdd_free;

  const S rho = S(1.0 / settings.mu);
  cd.G.diagonal().array() += rho;  // factor G + rho I without a temporary
  cd.G_factor.compute(cd.G);
  cd.G.diagonal().array() -= rho;
  cd.lambda.setZero();
  cd.qdd = cd.qdd_free;
  cd.converged = false;
  cd.iterations = 0;
  ProximalStoppingTest<S> stop(settings, S(1) + (k.k - k.drift).cwiseAbs().maxCoeff());
  for (int it = 0; it < settings.max_iterations; ++it) {
    cd.rhs = cd.c + rho * cd.lambda;
    cd.G_factor.solveInPlace(cd.rhs);
    cd.lambda = cd.rhs;
    cd.qdd_previous = cd.qdd;
    cd.qdd = cd.qdd_free;
    cd.qdd.noalias() += cd.Minv_Jt * cd.lambda;
    cd.iterations = it + 1;
    cd.residual = k.drift - k.k;
    cd.residual.noalias() += k.J * cd.qdd;
    if (stop.done(it, cd.residual, cd.qdd, cd.qdd_previous)) {
      cd.converged = true;
      break;
    }
  }
  cd.residual_norm = stop.residual_norm();
  return cd.qdd;
}

// The dense Delassus matrix G = J M^{-1} J^T (m x m, rows in constraint frames). O(n d^2 + m^2 n).
template <class S>
const MatrixX<S>& delassus(const Model& model, Data<S>& data, ConstrainedData<S>& cd, const VectorX<S>& q) {
  assemble_constrained_system(model, data, cd, q, data.zero);
  return cd.G;
}

}  // namespace batchdyn
