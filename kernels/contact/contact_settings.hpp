// The settings of a contact step, shared by the dense reference (kernels/contact/contact_step.hpp) and
// the batched contact stage (batch/contact_solving.hpp), and their one check.
#pragma once

#include <cmath>
#include <string>

#include "layout/lanes.hpp"
#include "topology/model.hpp"
#include "topology/name_table.hpp"

namespace batchdyn {

// How the contact problem of a step is solved (the batched stage; the dense reference always
// runs ADMM to its tolerance).
enum class ContactSolver {
  Admm,  // proximal ADMM on G + rho I (kernels/contact/contact_admm.hpp): the default
  Pgs,   // projected Gauss-Seidel (kernels/contact/contact_pgs.hpp): the baseline most engines use
};

inline constexpr NameTable<ContactSolver> kContactSolvers[] = {{ContactSolver::Admm, "admm"}, {ContactSolver::Pgs, "pgs"}};
inline const char* contact_solver_name(ContactSolver solver) { return name_of(kContactSolvers, solver); }

// How ADMM does its linear algebra: its x-step, the linear solve with G + (rho + eta) I, and its
// products with G (kernels/contact/admm_delassus.hpp).
enum class AdmmLinearSolve {
  Cholesky,  // on the formed G: a Cholesky factor per rho, O(m^3 / 6), then O(m^2) per iteration (the default)
  PvSoft,    // on the tree, G never formed (kernels/delassus/pv_soft.hpp): O(n + m) per rho and per iteration;
             // for rows on one body each: ground contacts and joint limits (not pairs, not loop rows)
};

inline constexpr NameTable<AdmmLinearSolve> kAdmmLinearSolves[] = {{AdmmLinearSolve::Cholesky, "cholesky"}, {AdmmLinearSolve::PvSoft, "pv-soft"}};
inline const char* admm_linear_solve_name(AdmmLinearSolve solve) { return name_of(kAdmmLinearSolves, solve); }

struct ContactSettings {
  ContactSolver solver = ContactSolver::Admm;
  AdmmLinearSolve admm_linear_solve = AdmmLinearSolve::Cholesky;
  int max_iterations = 5000;   // solver iterations (the reference solves to the tolerance, whatever it costs)
  double tolerance = 1e-8;     // relative: ADMM's primal residual ||x - z||_inf <= tol (1 + ||z||_inf) (N s) and the
                               // NCP's dual residual (cone distance, complementarity) <= tol (1 + ||g||_inf) (m/s);
                               // PGS's iterate is always primal feasible: the dual residual alone
  double baumgarte = 0.2;      // fraction of a penetration removed per step, in [0, 1]
  double max_push_out = 0.5;   // m/s: the largest separating velocity the push-out asks for (a deep
                               // penetration, e.g. a state reset into the ground, is removed over
                               // several steps instead of launching the robot)
  bool joint_limits = true;    // URDF / SDF position limits as unilateral rows (no friction), as MuJoCo
  double limit_margin = 0.01;  // rad or m: a limit within this distance enters the problem
  double max_penetration = 0.02;  // m: a contact deeper than this at a substep's start marks its environment
                                 // EnvStatus::DeepPenetration (a report; infinity: never)
  bool polish = true;          // ADMM on the formed G (Cholesky) polishes its warm start and its iterate:
                               // solves the rows it finds acting exactly, before the first iteration and
                               // after 10, 20, 40, ... (kernels/contact/contact_polish.hpp); a polish is
                               // taken only where it meets the tolerance. The dense reference does not polish.
};

// Throws Error naming `who` unless the solver is ADMM or PGS, ADMM's linear solve Cholesky or PV-soft, max_iterations in [1, 1e6],
// tolerance finite and >= 0, baumgarte in [0, 1], max_push_out and limit_margin finite and >= 0, max_penetration > 0.
inline void check_contact_settings(const ContactSettings& s, const char* who) {
  if ((s.solver != ContactSolver::Admm && s.solver != ContactSolver::Pgs) ||
      (s.admm_linear_solve != AdmmLinearSolve::Cholesky && s.admm_linear_solve != AdmmLinearSolve::PvSoft) || s.max_iterations < 1 || s.max_iterations > 1000000 ||
      !(s.tolerance >= 0 && std::isfinite(s.tolerance)) || !(s.baumgarte >= 0 && s.baumgarte <= 1) ||
      !(s.max_push_out >= 0 && std::isfinite(s.max_push_out)) || !(s.limit_margin >= 0 && std::isfinite(s.limit_margin)) ||
      !(s.max_penetration > 0))
    throw Error(std::string(who) + ": contact settings need a solver (admm or pgs), an ADMM linear solve (cholesky or pv-soft), max_iterations in [1, 1e6], tolerance finite "
                "and >= 0, baumgarte in [0, 1], max_push_out and limit_margin finite and >= 0, max_penetration > 0 (infinity: no check)");
}

// The normal row's target velocity term for a distance d along it (gap, or distance to a joint
// limit) over a step h: approach until it closes within the step (d >= 0), or push out at the
// Baumgarte rate, at most max_push_out (d < 0). Lane-generic.
template <class S>
S closing_velocity(const S& d, const S& h, const ContactSettings& s) {
  using std::max;
  const S push_out = max(S(s.baumgarte) * d / h, S(-s.max_push_out));
  return select(d >= S(0), d / h, push_out);
}

// A contact's normal row in the problem: its compliance R (added to G's diagonal) and its
// target term (added to J v_free). Rigid (stiffness 0): R = 0 and the closing velocity above.
// Compliant, a spring-damper of stiffness k > 0 (N/m) and damping d >= 0 (N s/m): the force
// f_N = max(0, -k gap+ - d v_N+) taken at the end of the step (gap+ = gap + h v_N+, implicit, so
// stable at any k h^2 / m) as the impulse lambda_N = h f_N is the complementarity
//   0 <= lambda_N  _|_  v_N+ + R lambda_N + k gap / (k h + d) >= 0,   R = 1 / (h (k h + d)):
// the rigid row's problem with G_NN + R (the "compliant to rigid" form of arXiv 2405.17020 §III,
// MuJoCo's soft constraints as a regularisation R of the Delassus). At rest, gap = -m g / k per
// supporting contact. Lane-generic.
template <class S>
struct NormalRowTerms {
  S compliance;  // R, m/s per N s
  S target;      // m/s
};

template <class S>
NormalRowTerms<S> normal_row_terms(const S& gap, const S& h, const ContactSettings& s, double stiffness, double damping) {
  if (stiffness <= 0.0) return {S(0), closing_velocity(gap, h, s)};  // a model constant, not data
  const S k(static_cast<lane_scalar<S>>(stiffness)), d(static_cast<lane_scalar<S>>(damping));
  const S resistance = k * h + d;  // N s/m
  return {S(1) / (h * resistance), k * gap / resistance};
}

}  // namespace batchdyn
