// Which loop-constraint rows are independent: a setup utility for solvers that treat the loops
// as bilateral rows of a velocity-level problem (the contact stage, batch/contact_solving.hpp).
//
// Closures built as Pinocchio builds them can be redundant by construction: Cassie's four welds
// have 24 rows of rank 22 on the loop manifold (SDF duplicate links, topology/sdf.hpp). A
// bilateral row that depends on the others has no solution of its own: its velocity target
// (a Baumgarte term of its position error) is generally inconsistent with theirs, and a proximal
// solver then drifts along null(J^T) without end (the impulses grow by the inconsistency every
// iteration, the residual never falls). Keeping only an independent subset of rows spans the
// same row space (the same motions are constrained, the same forces J^T lambda are reachable)
// and makes the bilateral part of the Delassus matrix non-singular.
//
// The rank is structural, so it is read off configurations on the manifold: `samples`
// configurations near the neutral one (each joint moved by up to 0.1) projected onto the loops
// (kernels/loops/constraint_projection.hpp). The rank is J's numerical rank (singular values above
// 1e-9 of the largest); the rows are the first pivots of a QR with column pivoting of J^T at
// the first sample, checked at the others. A setup utility, not a kernel: it allocates;
// O(samples (projection + m^2 nv)).
#pragma once

#include <random>
#include <vector>

#include <Eigen/QR>
#include <Eigen/SVD>

#include "kernels/loops/constraint_projection.hpp"
#include "kernels/loops/constraints.hpp"

namespace batchdyn {

// The numerical rank of J: its singular values above `threshold` times the largest.
inline int numerical_rank(const Eigen::MatrixXd& J, double threshold = 1e-9) {
  if (J.rows() == 0 || J.cols() == 0) return 0;
  const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues();
  int rank = 0;
  for (Eigen::Index k = 0; k < s.size(); ++k) rank += s[k] > threshold * s[0];
  return rank;
}

// An independent subset of J's rows (m x nv) spanning its row space, as a 0/1 flag per row:
// the first numerical_rank(J) pivots of a QR with column pivoting of J^T.
inline std::vector<char> independent_rows(const Eigen::MatrixXd& J, double threshold = 1e-9) {
  std::vector<char> kept(static_cast<size_t>(J.rows()), 0);
  if (J.rows() == 0) return kept;
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(J.transpose());
  const int rank = numerical_rank(J, threshold);
  for (int k = 0; k < rank; ++k) kept[static_cast<size_t>(qr.colsPermutation().indices()[k])] = 1;
  return kept;
}

// An independent subset of the model's loop-constraint rows (per constraint row, 1: kept), from
// `samples` configurations on the loops. All rows when the model's rows are independent, or
// when the samples disagree (the rank is not structural: nothing is dropped).
inline std::vector<char> independent_loop_rows(const Model& model, int samples = 3, unsigned seed = 1) {
  std::vector<char> all(static_cast<size_t>(model.constraint_rows), 1);
  if (model.constraint_rows == 0) return all;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  Data<double> data(model);
  ConstraintData<double> cdata(model);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  std::vector<char> kept;
  for (int s = 0; s < samples; ++s) {
    Eigen::VectorXd q(model.nq);
    integrate<double>(model, neutral_configuration<double>(model), Eigen::VectorXd::NullaryExpr(model.nv, [&] { return u(rng); }), q);
    if (!project_to_constraints(model, q).converged) return all;  // no manifold to read the rank on
    constraint_kinematics(model, data, cdata, q, zero);
    if (s == 0) {
      kept = independent_rows(cdata.J);
      continue;
    }
    // The kept rows must have the full rank here too.
    int count = 0;
    for (char k : kept) count += k;
    Eigen::MatrixXd subset(count, model.nv);
    for (int r = 0, row = 0; r < model.constraint_rows; ++r)
      if (kept[static_cast<size_t>(r)]) subset.row(row++) = cdata.J.row(r);
    const int rank = numerical_rank(cdata.J);
    if (numerical_rank(subset) != count || rank != count) return all;
  }
  return kept;
}

}  // namespace batchdyn
