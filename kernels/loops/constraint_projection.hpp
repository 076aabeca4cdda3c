// Projecting a configuration onto the constraint manifold: the nearest q (in the joint-space
// metric, to first order) at which every loop closes, by damped Gauss-Newton on the position
// errors e(q) of kernels/loops/constraints.hpp,
//     q <- q ⊕ t delta,   delta = -E^T (E E^T + damping I)^{-1} e(q),
// with E = de/d(q ⊕ .) by central differences on the manifold (the constraint Jacobian J is
// de/dt only at e = 0: a weld's log6 error bends away from it, and Gauss-Newton on J alone
// crawls), and t halved until the largest error decreases (backtracking). RL code needs this
// to build valid initial states for models with loops (random joint angles open the loops).
// Redundant rows are fine (the damping); inconsistent ones end at a local least-squares
// compromise with converged = false. A setup utility, not a kernel: it allocates, and costs
// O(nv) constraint evaluations per iteration.
#pragma once

#include <Eigen/Cholesky>

#include "kernels/tree/configuration.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "kernels/loops/constraints.hpp"
#include "kernels/loops/proximal_settings.hpp"

namespace batchdyn {

struct ProjectionSettings {
  int max_iterations = 100;
  double tolerance = 1e-10;  // on max |position error| (m, rad)
  double damping = 1e-10;    // Levenberg term: keeps J J^T invertible for redundant rows
};

struct ProjectionReport {
  int iterations = 0;
  double residual = 0;  // max |position error| at the returned q
  bool converged = false;
};

// Moves q (nq values, unit quaternions) onto the model's constraints. Joint limits are not
// enforced. Throws Error for a wrong size of q.
inline ProjectionReport project_to_constraints(const Model& model, Eigen::VectorXd& q, const ProjectionSettings& settings = {}) {
  if (q.size() != model.nq)
    throw Error("project_to_constraints: q has " + std::to_string(q.size()) + " values, expected nq = " + std::to_string(model.nq));
  if (settings.max_iterations < 1 || settings.max_iterations > kMaxSolverIterations || !std::isfinite(settings.tolerance) || settings.tolerance < 0 ||
      !std::isfinite(settings.damping) || settings.damping < 0)
    throw Error("project_to_constraints: max_iterations must be in [1, 1000000], tolerance and damping finite and >= 0 (got " +
                std::to_string(settings.max_iterations) + ", " + std::to_string(settings.tolerance) + ", " + std::to_string(settings.damping) + ")");
  ProjectionReport report;
  if (model.constraint_rows == 0) {
    report.converged = true;
    return report;
  }
  Data<double> data(model);
  ConstraintData<double> rows(model);
  const Eigen::VectorXd at_rest = Eigen::VectorXd::Zero(model.nv);
  auto error = [&](const Eigen::VectorXd& x) {
    constraint_kinematics(model, data, rows, x, at_rest);
    return Eigen::VectorXd(rows.position_error);
  };
  const double h = 1e-6;
  Eigen::VectorXd e = error(q), delta(model.nv), step(model.nv), plus(model.nq), minus(model.nq), trial(model.nq);
  Eigen::MatrixXd E(model.constraint_rows, model.nv), EEt(model.constraint_rows, model.constraint_rows);
  for (;;) {
    report.residual = e.cwiseAbs().maxCoeff();
    report.converged = report.residual <= settings.tolerance;
    if (report.converged || report.iterations == settings.max_iterations) return report;
    for (int k = 0; k < model.nv; ++k) {
      step.setZero();
      step[k] = h;
      integrate(model, q, step, plus);
      step[k] = -h;
      integrate(model, q, step, minus);
      E.col(k) = (error(plus) - error(minus)) / (2 * h);
    }
    EEt.noalias() = E * E.transpose();
    EEt.diagonal().array() += settings.damping;
    delta.noalias() = -E.transpose() * EEt.llt().solve(e);
    ++report.iterations;
    double t = 1.0;
    for (int halvings = 0; halvings < 30; ++halvings, t *= 0.5) {
      integrate(model, q, Eigen::VectorXd(t * delta), trial);
      const Eigen::VectorXd trial_error = error(trial);
      if (trial_error.cwiseAbs().maxCoeff() < report.residual || halvings == 29) {
        q = trial;
        e = trial_error;
        break;
      }
    }
  }
}

// Moves v (nv values) at configuration q to the velocity nearest it in the kinetic-energy
// metric at which every loop stays closed, J v = 0:
//     v <- v - M^{-1} J^T (J M^{-1} J^T + damping I)^{-1} J v,
// the velocity an inelastic impulse on the loops leaves. The damping (1e-12 of G's largest
// diagonal entry) keeps redundant rows solvable; two more passes take its bias off. Returns
// max |J v| after. A setup utility: it allocates; O(n d^2 + m n d + m^2 n + m^3).
inline double project_velocity_to_constraints(const Model& model, const Eigen::VectorXd& q, Eigen::VectorXd& v) {
  if (v.size() != model.nv)
    throw Error("project_velocity_to_constraints: v has " + std::to_string(v.size()) + " values, expected nv = " + std::to_string(model.nv));
  if (model.constraint_rows == 0) return 0.0;
  Data<double> data(model);
  ConstrainedData<double> cd(model);
  assemble_constrained_system(model, data, cd, q, v);
  cd.G.diagonal().array() += 1e-12 * (1.0 + cd.G.diagonal().maxCoeff());
  const Eigen::LLT<Eigen::MatrixXd> factor(cd.G);
  for (int pass = 0; pass < 3; ++pass) v.noalias() -= cd.Minv_Jt * factor.solve(cd.constraints.J * v);
  return (cd.constraints.J * v).cwiseAbs().maxCoeff();
}

}  // namespace batchdyn
