#include "kernels/tree/singular_joints.hpp"

#include <Eigen/Eigenvalues>
#include <random>
#include <string>

#include "kernels/tree/configuration.hpp"
#include "kernels/tree/joint_elimination.hpp"
#include "kernels/tree/kinematics.hpp"

namespace batchdyn {

namespace {
// Eigenvalues (ascending) of a symmetric n x n matrix stored row-major.
Eigen::VectorXd symmetric_eigenvalues(const double* m, int n) {
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> M(m, n, n);
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(Eigen::MatrixXd(M), Eigen::EigenvaluesOnly).eigenvalues();
}

// One configuration: ABA's inertia sweep (RBDA Table 7.1, without velocities), marking each
// joint whose pivot D_i = S_i^T I^A_i S_i + armature vanishes next to the size of the terms it
// is made of: R_i = S_i^T (I_i + sum over children c of ^iX*_c I^A_c ^cX_i) S_i + armature,
// the same sum before the children's joint motion is eliminated (D_i <= R_i; rounding in D_i
// is relative to R_i). A massless subtree gives R_i = 0; a joint whose motion a child joint
// already provides (same axis, massless link between) gives D_i ~ 1e-16 R_i; a long chain's
// small but regular pivots keep D_i ~ R_i. A marked joint is treated as locked for its
// ancestors (I^a_i = I^A_i), so its zero pivot neither poisons nor hides theirs (a massless
// finger tip on a massless phalanx marks both).
void mark_singular_joints(const Model& model, const ModelConstants<double>& c, const double* q, std::vector<char>& singular) {
  const int n = model.num_bodies();
  std::vector<Transform<double>> parent_from_body(static_cast<size_t>(n));
  std::vector<ArticulatedInertia<double>> articulated(static_cast<size_t>(n)), uneliminated(static_cast<size_t>(n));
  for (int i = 1; i < n; ++i) {
    parent_from_body[static_cast<size_t>(i)] = body_placement(c, i, q);
    articulated[static_cast<size_t>(i)] = uneliminated[static_cast<size_t>(i)] = c.spatial_inertia[i];
  }
  for (int i = n - 1; i >= 1; --i) {
    const Body& body = model.bodies[i];
    const int nv = body.nv;
    Force<double> U[6];
    double D[36], R[36];
    for (int k = 0; k < nv; ++k) {
      U[k] = inertia_times_subspace(c, i, articulated[static_cast<size_t>(i)], k);
      const Force<double> F = inertia_times_subspace(c, i, uneliminated[static_cast<size_t>(i)], k);
      for (int r = 0; r < nv; ++r) {
        D[r * nv + k] = subspace_transpose_times(c, i, U[k], r);
        R[r * nv + k] = subspace_transpose_times(c, i, F, r);
      }
    }
    for (int k = 0; k < nv; ++k) {
      const double a = c.armature[static_cast<size_t>(body.idx_v + k)];
      D[k * nv + k] += a, R[k * nv + k] += a;
    }
    const double pivot = nv == 1 ? D[0] : symmetric_eigenvalues(D, nv)[0];
    const double scale = nv == 1 ? R[0] : symmetric_eigenvalues(R, nv)[nv - 1];
    const bool is_singular = !(pivot > 1e-10 * scale) || !(scale > 0);
    if (!is_singular) singular[static_cast<size_t>(i)] = 0;
    if (body.parent == 0) continue;
    const Transform<double>& X = parent_from_body[static_cast<size_t>(i)];
    uneliminated[static_cast<size_t>(body.parent)] += articulated[static_cast<size_t>(i)].transformed(X);  // I^A_i
    double Dinv[36];
    Force<double> U_Dinv[6];
    if (!is_singular) {
      invert_spd(D, nv, Dinv);
      times_Dinv(nv, U, Dinv, U_Dinv);
    }
    project_out_joint(is_singular ? 0 : nv, U, U_Dinv, articulated[static_cast<size_t>(i)]);
    articulated[static_cast<size_t>(body.parent)] += articulated[static_cast<size_t>(i)].transformed(X);
  }
}
}  // namespace

std::vector<int> find_singular_joints(const Model& model) {
  if (model.nv == 0) return {};
  const ModelConstants<double> constants(model);
  std::vector<char> singular(static_cast<size_t>(model.num_bodies()), 1);
  singular[0] = 0;
  // A structural zero is zero in every configuration; a configuration-dependent one is not
  // zero at all of these (neutral, then pseudo-random within the limits).
  std::mt19937 rng(20261122);
  for (int sample = 0; sample < 4; ++sample) {
    const Eigen::VectorXd q = sample == 0 ? neutral_configuration<double>(model) : random_configuration<double>(model, rng);
    mark_singular_joints(model, constants, q.data(), singular);
  }
  std::vector<int> joints;
  for (int i = 1; i < model.num_bodies(); ++i)
    if (singular[static_cast<size_t>(i)]) joints.push_back(i);
  return joints;
}

void require_regular(const Model& model, const std::vector<int>& singular_joints, const char* what) {
  if (singular_joints.empty()) return;
  std::string names, assignments, quoted;
  for (int i : singular_joints) {
    const std::string& joint = model.bodies[i].joint_name;
    names += (names.empty() ? "" : ",") + joint;
    assignments += (assignments.empty() ? "" : ",") + joint + "=0.01";
    quoted += (quoted.empty() ? "'" : ", '") + joint + "'";
  }
  throw Error(std::string(what) + ": model '" + model.name + "' is singular: joint" + (singular_joints.size() > 1 ? "s " : " ") + quoted +
              " move" + (singular_joints.size() > 1 ? "" : "s") +
              " no mass or inertia (massless links along the joint's motion), so M(q) has no inverse and forward "
              "dynamics is undefined. Remedies: lock them at a position (lock_joints(model, ...), CLI --lock-joints " +
              names + ", JSON \"lock_joints\"), or give them rotor inertia (set_armature(model, ...), CLI --armature " +
              assignments + ", JSON \"armature\")");
}

}  // namespace batchdyn
