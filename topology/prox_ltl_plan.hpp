// The proxLTL plan (proxLTL-sparse-kkt-cholesky §IV-C, eq. 25-27): the branch-induced sparsity of
// the proximal KKT matrix
//     K_rho = [ -rho I_m   J ]      (eq. 18: constraint rows first, then the dofs)
//             [  J^T       M ]
// and of its factor U_K D_K U_K^T (eq. 24). Plain index arrays computed once per model from the
// graph; the factorisation and the solves (kernels/loops/prox_ltl.hpp) walk them and never search it.
//
// Index k of K is constraint row k for k < m and dof k - m for k >= m. For one-dof joints the
// dof parent is the joint's parent joint; for a multi-dof joint (ball, free flyer) its dofs form
// a chain (Featherstone 2005's expanded parent array, ref. [14] of the paper), so "ancestor dof"
// covers every coupling the tree creates:
//   - M(i, j) != 0 only for i an ancestor of j or the reverse (eq. 22); U keeps that pattern (eq. 23, 26).
//   - Row r of J is nonzero only on the dofs sigma_r of the bodies that move constraint r's
//     frames: the ancestors of body1 and of body2 (eq. 25). sigma_r is closed under "ancestor
//     of", so the rows on a dof are also on all its ancestors and eliminating a dof fills in
//     nothing outside the pattern (eq. 27).
//   - The m x m block of the constraint rows is dense (the damped Delassus matrix' factor, §IV-E).
#pragma once

#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

struct ProxLtlPlan {
  int nv = 0;    // n: dofs
  int rows = 0;  // m: constraint rows (model.constraint_rows)
  int size() const { return rows + nv; }  // K_rho is size() x size()

  // Per dof j: the dof before it on the path to the root (the previous dof of the same joint,
  // else the last dof of the nearest ancestor joint that has dofs), -1 at the root.
  std::vector<int> dof_parent;
  // Per dof j: the constraint rows whose Jacobian column j can be nonzero (sigma, eq. 25), by
  // ascending row: rows_on_dof[row_begin[j] .. row_begin[j + 1]).
  std::vector<int> row_begin;
  std::vector<int> rows_on_dof;

  int row_count(int dof) const { return row_begin[static_cast<size_t>(dof) + 1] - row_begin[static_cast<size_t>(dof)]; }
};

// The plan of `model`'s constraints (every constraint, loop or contact, as model.constraints
// lists them). O(m * depth + n). The plan holds no pointer into the model.
ProxLtlPlan plan_prox_ltl(const Model& model);

}  // namespace batchdyn
