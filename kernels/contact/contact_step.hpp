// One time step with frictional contact against the ground (its plane, or its terrain:
// kernels/contact/terrain.hpp, each candidate with the surface normal under it) and between the
// geometries of contact pairs (kernels/contact/pair_contact.hpp), dense and scalar: the reference
// (oracle) that the batched contact stage is checked against.
//
// Velocity-level time stepping (Carpentier, Le Lidec et al., "From Compliant to Rigid Contact
// Simulation: a Unified and Efficient Approach", RSS 2024, arXiv 2405.17020, §III-IV):
//   1. v_free = v + h M^-1 (tau - b)
//   2. for each candidate within its margin plus its approach over the step (gap < margin + h max(-v_N, 0), speculative), three rows J_c: the world-frame
//      velocity of its contact point (its lowest point against the ground; for a pair, body A's
//      point minus body B's) along the normal n and two tangents t1, t2;
//      G = J M^-1 J^T (the Delassus matrix), g = J v_free + gap terms (below)
//   3. the impulses lambda solve the Coulomb NCP with the De Saxce correction (§III-B):
//      lambda_c in K_mu = {||lambda_T|| <= mu lambda_N},
//      sigma_c = (G lambda + g)_c + (mu ||(G lambda + g)_T||, 0, 0) in K_mu*, lambda_c . sigma_c = 0,
//      by proximal ADMM on (G + rho I) (§IV, Alg. 1)
//   4. v+ = v_free + M^-1 J^T lambda, q+ = q (+) h v+
// The normal row's target allows a separated candidate to approach until it touches within the
// step (g_N += gap / h for gap >= 0) and pushes a penetrating one out at a Baumgarte rate
// (g_N += max(baumgarte gap / h, -max_push_out) for gap < 0): inelastic contact without sinking.
// A compliant candidate (a stiffness in its contact file) is a spring-damper instead: its normal
// row gets the target k gap / (k h + d) and the compliance R = 1 / (h (k h + d)) on G's diagonal
// (normal_row_terms, kernels/contact/contact_settings.hpp).
// Joint position limits are unilateral rows of the same problem (lambda >= 0, no friction), one
// per 1-dof joint within limit_margin of a limit (topology/contact_plan.hpp limited_joints: on a
// model with loops, not a joint its reference configuration places beyond a limit), as MuJoCo
// treats them; never in the reference dynamics (aba, eval), only in a step. The model's loop constraints are bilateral rows (no
// cone, lambda free), last, with the target of their gains (kp, kd: J_loop v+ = (1 - h kd) J v - h kp e, e their position
// error, kernels/loops/constraints.hpp): an independent subset of them at q (rank-revealing QR,
// kernels/loops/independent_loop_rows.hpp), since a dependent row's target is inconsistent.
//
// Dense: O(nv^3 + m^3) per step, with allocation (Eigen): for checking, not for speed.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "kernels/tree/configuration.hpp"
#include "kernels/loops/constraints.hpp"
#include "kernels/loops/independent_loop_rows.hpp"
#include "kernels/contact/contact_settings.hpp"
#include "kernels/tree/crba.hpp"
#include "kernels/tree/jacobian.hpp"
#include "kernels/tree/kinematics.hpp"
#include "kernels/contact/pair_contact.hpp"
#include "kernels/tree/rnea.hpp"
#include "kernels/contact/cylinder_contact.hpp"
#include "kernels/contact/terrain.hpp"
#include "kernels/loops/velocity_level_rows.hpp"
#include "topology/contact_plan.hpp"

namespace batchdyn {


// Where one candidate is at q: its contact point in the world, its gap and normal: to the
// ground (the plane's, or the terrain's: kernels/contact/terrain.hpp), or to its pair's B (B to A).
struct CandidateState {
  Vec3d lowest_point = Vec3d::zero();  // the contact point: p - radius n against the ground
  double gap = 0.0;                    // < 0: penetration
  Vec3d normal{0.0, 0.0, 1.0};         // unit, world frame
};

// The candidates' positions and gaps at q (after forward_kinematics into data), against the
// model's terrain when it has one, else its plane (without a ground, a ground candidate's gap is
// +inf), and between pairs. O(candidates).
inline std::vector<CandidateState> candidate_states(const Model& model, const Data<double>& data) {
  const ContactModel& cm = model.contacts;
  GroundLanes<double> ground;
  ground.normal = cm.ground.normal;
  ground.height = cm.ground.height;
  if (cm.terrain.present()) {
    ground.terrain = TerrainView<double>{nullptr, cm.terrain.nx, cm.terrain.ny, cm.terrain.origin_x, cm.terrain.origin_y, cm.terrain.spacing};
    ground.terrain_heights[0] = cm.terrain.heights.data();
  }
  std::vector<CandidateState> out(cm.candidates.size());
  HullScratch<double> scratch;
  GroundSlots<double> slots{};
  PairSlots<double> pair_slots{};
  for (size_t k = 0; k < cm.candidates.size(); ++k) {
    const ContactCandidate& c = cm.candidates[k];
    if (c.kind == CandidateKind::Convex) {  // a Convex pair's slot, as the lane kernels measure it
      const Transformd &A = data.world_from_body[c.body], &B = data.world_from_body[c.body2];
      const double margin = cm.margin(static_cast<int>(k));
      if (c.slot == 0) pair_slots = convex_pair_slots(pair_within_reach(c, A, B, margin), c, A, B, margin, convex_slots(cm.candidates, static_cast<int>(k)));
      out[k].gap = pair_slots.gap[c.slot], out[k].normal = pair_slots.normal[c.slot], out[k].lowest_point = pair_slots.point[c.slot];
      continue;
    }
    if (c.slot >= 0) {  // a convex hull's or a cylinder's slot: its point chosen as the lane kernels choose it
      if (c.slot == 0)
        slots = ground_slots(cm.geometries[static_cast<size_t>(c.geometry)], data.world_from_body[c.body], ground, cm.margin(static_cast<int>(k)), scratch);
      out[k].gap = cm.ground.present ? slots.gap[c.slot] : std::numeric_limits<double>::infinity();
      out[k].normal = slots.normal[c.slot];
      out[k].lowest_point = slots.point[c.slot];
      continue;
    }
    if (!c.against_ground()) {
      const Transformd &A = data.world_from_body[c.body], &B = data.world_from_body[c.body2];
      pair_contact_within_reach(pair_within_reach(c, A, B, cm.margin(static_cast<int>(k))), c, A, B, out[k].gap, out[k].normal,
                                out[k].lowest_point);
      continue;
    }
    const Vec3d p = data.world_from_body[c.body].act_point(c.point);
    ground_under(ground, p, c.radius, out[k].gap, out[k].normal);
    out[k].lowest_point = p - out[k].normal * c.radius;
    if (!cm.ground.present) out[k].gap = std::numeric_limits<double>::infinity();  // nothing to touch
  }
  return out;
}

// Projection onto the cone {(n, t1, t2): ||t|| <= mu n} (Euclidean).
inline Eigen::Vector3d project_to_friction_cone(double mu, const Eigen::Vector3d& x) {
  const double n = x[0], t = std::hypot(x[1], x[2]);
  if (t <= mu * n) return x;                       // inside
  if (mu * t <= -n) return Eigen::Vector3d::Zero();  // inside the polar cone
  const double a = (n + mu * t) / (1.0 + mu * mu);
  return {a, mu * a * x[1] / t, mu * a * x[2] / t};
}

// A joint position limit in the problem: one row, lambda >= 0 pushing q back inside.
struct ActiveLimit {
  int dof = 0;            // index in v (and q: 1-dof joints)
  int side = +1;          // +1: the lower limit (the row is +qdot), -1: the upper one (-qdot)
  double distance = 0.0;  // q - lower or upper - q (< 0: beyond the limit)
};

struct ContactStepResult {
  Eigen::VectorXd q, v;                // after the step
  std::vector<int> active;             // candidate indices in the problem, in order
  std::vector<ActiveLimit> limits;     // joint limits in the problem, after the candidates
  std::vector<int> loop_rows;          // the loop constraints' rows in the problem (model rows), last
  std::vector<CandidateState> states;  // every candidate at the start of the step
  Eigen::VectorXd impulses;            // 3 per active candidate: (n, t1, t2) in N s, then 1 per limit (N m s or N s),
                                       // then one per row of loop_rows
  Eigen::MatrixXd G;                   // the Delassus matrix of the active rows
  Eigen::VectorXd g;                   // its free velocity term (gap terms included)
  int iterations = 0;
  double primal_residual = 0.0;  // ADMM's ||x - z||_inf (N s)
  double dual_residual = 0.0;    // the NCP's: sigma~ off K*, or lambda . sigma~ != 0 (m/s)
  bool converged = true;
  // Contact force of active candidate k in the world frame (impulse / h); on a pair's A.
  Vec3d world_force(int k, const Model& model, double h) const;
};


inline Vec3d ContactStepResult::world_force(int k, const Model&, double h) const {
  Vec3d t1, t2;
  const Vec3d& n = states[static_cast<size_t>(active[static_cast<size_t>(k)])].normal;
  perpendicular_basis(n, t1, t2);
  const double* l = impulses.data() + 3 * k;
  return (n * l[0] + t1 * l[1] + t2 * l[2]) * (1.0 / h);
}

// One step of length h from (q, v) under joint torques tau, with the ground contacts, (when
// settings.joint_limits) the 1-dof joints' position limits and (when `loops`) the model's loop
// constraints. Throws Error for h not finite and > 0 or settings out of range.
inline ContactStepResult dense_contact_step(const Model& model, Data<double>& data, const Eigen::VectorXd& q,
                                            const Eigen::VectorXd& v, const Eigen::VectorXd& tau, double h,
                                            const ContactSettings& settings = {}, bool loops = true) {
  if (!(std::isfinite(h) && h > 0)) throw Error("dense_contact_step: h must be finite and > 0");
  check_contact_settings(settings, "dense_contact_step");
  const ContactModel& cm = model.contacts;
  ContactStepResult r;

  // 1. Free motion.
  const Eigen::MatrixXd M = crba(model, data, q);
  const Eigen::LLT<Eigen::MatrixXd> M_factor(M);
  const Eigen::VectorXd b = nonlinear_effects(model, data, q, v);
  const Eigen::VectorXd v_free = v + h * M_factor.solve(tau - b);

  // 2. The active candidates' rows: n, t1, t2 . (velocity of the lowest point, world frame).
  forward_kinematics(model, data, q);
  r.states = candidate_states(model, data);
  // Each candidate's rows J_c (3 x nv: the normal and two tangents at its contact point, on A and
  // minus on a pair's B); it is active (speculative contact, as the batched kernel's) when its gap
  // is below the margin plus what the free motion closes within the step, -h J_n v_free.
  std::vector<Eigen::MatrixXd> candidate_rows(cm.candidates.size());
  Eigen::MatrixXd J_frame(6, model.nv);
  for (size_t k = 0; k < cm.candidates.size(); ++k) {
    const ContactCandidate& c = cm.candidates[k];
    const CandidateState& state = r.states[k];
    if (!std::isfinite(state.gap)) continue;  // no ground under it
    const Vec3d& n = state.normal;  // the ground's under the candidate, or the pair's
    Vec3d t1, t2;
    perpendicular_basis(n, t1, t2);
    Eigen::MatrixXd& rows = candidate_rows[k] = Eigen::MatrixXd::Zero(3, model.nv);
    // A frame at the contact point with world axes, on each body the rows act on (+ on A, - on
    // a pair's B): its LOCAL linear velocity is the world one.
    for (const auto& [body, sign] : {std::pair{c.body, 1.0}, std::pair{c.against_ground() ? 0 : c.body2, -1.0}}) {
      if (body == 0) continue;  // the world does not move
      const Mat3d world_to_body = data.world_from_body[body].rotation.transpose();
      const Vec3d point_in_body = data.world_from_body[body].inverse().act_point(state.lowest_point);
      body_frame_jacobian(model, data, body, Transformd{world_to_body, point_in_body}, J_frame);
      for (int col = 0; col < model.nv; ++col) {
        const Vec3d velocity = Vec3d{J_frame(0, col), J_frame(1, col), J_frame(2, col)} * sign;
        rows(0, col) += dot(n, velocity);
        rows(1, col) += dot(t1, velocity);
        rows(2, col) += dot(t2, velocity);
      }
    }
    const double approach = h * std::max(-rows.row(0).dot(v_free), 0.0);
    if ((cm.ground.present || !c.against_ground()) && state.gap < cm.margin(static_cast<int>(k)) + approach) r.active.push_back(static_cast<int>(k));
  }
  if (settings.joint_limits)
    for (const LimitedJoint& joint : limited_joints(model)) {
      const double position = q[joint.coordinate];
      if (std::isfinite(joint.lower) && position - joint.lower < settings.limit_margin) r.limits.push_back({joint.dof, +1, position - joint.lower});
      if (std::isfinite(joint.upper) && joint.upper - position < settings.limit_margin) r.limits.push_back({joint.dof, -1, joint.upper - position});
    }
  const int contacts = static_cast<int>(r.active.size()), limit_row = 3 * contacts;
  const int loop_row = limit_row + static_cast<int>(r.limits.size());
  ConstraintData<double> loop_data(model);
  if (loops && model.constraint_rows > 0) {
    constraint_kinematics(model, data, loop_data, q, v);
    const std::vector<char> kept = independent_rows(loop_data.J);
    for (int row = 0; row < model.constraint_rows; ++row)
      if (kept[static_cast<size_t>(row)]) r.loop_rows.push_back(row);
    forward_kinematics(model, data, q);  // constraint_kinematics moved data's kinematics
  }
  const int m = loop_row + static_cast<int>(r.loop_rows.size());
  std::vector<double> mus(r.active.size());  // friction coefficient per active candidate
  for (size_t a = 0; a < r.active.size(); ++a)
    mus[a] = cm.friction(r.active[a]);
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(m, model.nv);
  for (size_t a = 0; a < r.active.size(); ++a) J.middleRows<3>(3 * static_cast<int>(a)) = candidate_rows[static_cast<size_t>(r.active[a])];
  for (size_t l = 0; l < r.limits.size(); ++l) J(limit_row + static_cast<int>(l), r.limits[l].dof) = r.limits[l].side;
  for (size_t l = 0; l < r.loop_rows.size(); ++l) J.row(loop_row + static_cast<int>(l)) = loop_data.J.row(r.loop_rows[l]);
  // Eigen's triangular solve binds a reference to an empty matrix's null data: no rows, no solve.
  const Eigen::MatrixXd Minv_Jt = m > 0 ? Eigen::MatrixXd(M_factor.solve(J.transpose())) : Eigen::MatrixXd(model.nv, 0);
  r.G = m > 0 ? Eigen::MatrixXd(J * Minv_Jt) : Eigen::MatrixXd(0, 0);
  r.g = m > 0 ? Eigen::VectorXd(J * v_free) : Eigen::VectorXd(0);
  // A contact's normal row: rigid (its closing velocity) or compliant (a spring-damper: its target
  // term, and its compliance R added to G's diagonal for the solve; r.G stays J M^-1 J^T).
  Eigen::VectorXd compliance = Eigen::VectorXd::Zero(m);
  for (size_t a = 0; a < r.active.size(); ++a) {
    const int k = r.active[a];
    const NormalRowTerms<double> normal = normal_row_terms(r.states[static_cast<size_t>(k)].gap, h, settings, cm.stiffness(k), cm.damping(k));
    r.g[3 * static_cast<int>(a)] += normal.target;
    compliance[3 * static_cast<int>(a)] = normal.compliance;
  }
  for (size_t l = 0; l < r.limits.size(); ++l) r.g[limit_row + static_cast<int>(l)] += closing_velocity(r.limits[l].distance, h, settings);
  // The loop rows' targets, the model's constraint gains over one step (as the batched kernel's):
  // J v+ = (1 - h kd) J v - h kp e, or -h kp e' for a velocity-level row.
  if (!r.loop_rows.empty()) {
    const Eigen::VectorXd start = loop_data.J * v;
    for (size_t l = 0; l < r.loop_rows.size(); ++l) {
      const int row = r.loop_rows[l];
      const Constraint& k = *std::find_if(model.constraints.begin(), model.constraints.end(),
                                          [&](const Constraint& c) { return row >= c.row && row < c.row + c.dim; });
      const double e = loop_data.position_error[row];
      const double target = k.velocity_level ? -h * k.kp * velocity_level_position_error(e) : (1 - h * k.kd) * start[row] - h * k.kp * e;
      r.g[loop_row + static_cast<int>(l)] -= target;
    }
  }

  // 3. Proximal ADMM on the NCP (arXiv 2405.17020, Alg. 1): x-step with (G + (rho + eta) I),
  // z = projection on the cones, y += rho (x - z); at the solution y = -sigma.
  r.impulses = Eigen::VectorXd::Zero(m);
  if (m > 0) {
    // Diagonal preconditioning: lambda = D lambda', one scale per cone (the mean of its block's
    // diagonal) so the cones keep their shape, one per limit or loop row. The ADMM runs on
    // G' = D G D, g' = D g, where contact and joint-limit rows have comparable stiffness.
    Eigen::MatrixXd G_compliant = r.G;
    G_compliant.diagonal() += compliance;
    Eigen::VectorXd D(m);
    for (int a = 0; a < contacts; ++a)
      D.segment<3>(3 * a).setConstant(1.0 / std::sqrt(std::max(G_compliant.diagonal().segment<3>(3 * a).mean(), 1e-12)));
    for (int row = limit_row; row < m; ++row) D[row] = 1.0 / std::sqrt(std::max(G_compliant(row, row), 1e-12));
    const Eigen::MatrixXd G = D.asDiagonal() * G_compliant * D.asDiagonal();
    const Eigen::VectorXd g = D.asDiagonal() * r.g;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> spectrum(G, Eigen::EigenvaluesOnly);
    const double largest = std::max(spectrum.eigenvalues().maxCoeff(), 1e-12);
    const double smallest = std::max(spectrum.eigenvalues().minCoeff(), largest * 1e-8);
    double rho = std::sqrt(largest * smallest);  // the paper's spectral choice sqrt(L m)
    const double rho_increment = std::max(1.05, std::pow(largest / smallest, 0.05));
    const double eta = 1e-6 * largest;            // proximal term: G may be singular (redundant rows)
    Eigen::LLT<Eigen::MatrixXd> A_factor;
    const auto factor = [&] {
      Eigen::MatrixXd A = G;
      A.diagonal().array() += rho + eta;
      A_factor.compute(A);
    };
    factor();
    // The NCP's dual residual at impulses l: per contact, the distance of sigma~ = sigma +
    // (mu ||sigma_T||, 0, 0) to K_mu* (= K_1/mu) plus the complementarity |l . sigma~| / (1 + |l|).
    const auto ncp_dual_residual = [&](const Eigen::VectorXd& l) {
      const Eigen::VectorXd sigma = G * l + g;
      double worst = 0.0;
      for (int a = 0; a < contacts; ++a) {
        const int row = 3 * a;
        const double mu = mus[static_cast<size_t>(a)];
        Eigen::Vector3d shifted = sigma.segment<3>(row);
        shifted[0] += mu * std::hypot(shifted[1], shifted[2]);
        const Eigen::Vector3d in_dual = mu > 0 ? project_to_friction_cone(1.0 / mu, shifted)
                                               : Eigen::Vector3d(std::max(shifted[0], 0.0), shifted[1], shifted[2]);
        const Eigen::Vector3d lc = l.segment<3>(row);
        worst = std::max({worst, (shifted - in_dual).cwiseAbs().maxCoeff(), std::abs(lc.dot(shifted)) / (1.0 + lc.cwiseAbs().maxCoeff())});
      }
      for (int row = limit_row; row < loop_row; ++row)  // lambda >= 0, sigma >= 0, lambda sigma = 0
        worst = std::max({worst, -sigma[row], std::abs(l[row] * sigma[row]) / (1.0 + std::abs(l[row]))});
      for (int row = loop_row; row < m; ++row) worst = std::max(worst, std::abs(sigma[row]));  // bilateral: sigma = 0
      return worst;
    };
    Eigen::VectorXd x = Eigen::VectorXd::Zero(m), z = x, y = x, z_prev = x, s = x;
    r.converged = false;
    for (int it = 0; it < settings.max_iterations; ++it) {
      // De Saxce correction from the dual variable: y -> -(sigma + s) at the solution, and s
      // shifts only the normal component, so -y's tangential part is sigma_T.
      for (int a = 0; a < contacts; ++a) s[3 * a] = mus[static_cast<size_t>(a)] * std::hypot(y[3 * a + 1], y[3 * a + 2]);
      x = A_factor.solve(rho * z + eta * x - y - g - s);
      z_prev = z;
      for (int a = 0; a < contacts; ++a)
        z.segment<3>(3 * a) = project_to_friction_cone(mus[static_cast<size_t>(a)], x.segment<3>(3 * a) + y.segment<3>(3 * a) / rho);
      for (int row = limit_row; row < loop_row; ++row) z[row] = std::max(x[row] + y[row] / rho, 0.0);
      for (int row = loop_row; row < m; ++row) z[row] = x[row] + y[row] / rho;  // no cone
      y += rho * (x - z);
      r.iterations = it + 1;
      // ADMM's residuals steer rho; the NCP's own conditions decide convergence.
      const double admm_primal = (x - z).cwiseAbs().maxCoeff(), admm_dual = rho * (z - z_prev).cwiseAbs().maxCoeff();
      r.primal_residual = admm_primal;
      r.dual_residual = ncp_dual_residual(z);
      const double impulse_scale = 1.0 + z.cwiseAbs().maxCoeff(), velocity_scale = 1.0 + g.cwiseAbs().maxCoeff();
      if (r.primal_residual <= settings.tolerance * impulse_scale && r.dual_residual <= settings.tolerance * velocity_scale) {
        r.converged = true;
        break;
      }
      // Residual balancing (§IV-C): a primal residual far above the dual one asks for a stiffer
      // penalty, and the reverse for a softer one; y is unchanged (it is the unscaled dual).
      if (admm_primal > 10.0 * admm_dual || admm_dual > 10.0 * admm_primal) {
        rho *= admm_primal > admm_dual ? rho_increment : 1.0 / rho_increment;
        rho = std::clamp(rho, 1e-10 * largest, 1e10 * largest);
        factor();
      }
    }
    r.impulses = D.asDiagonal() * z;  // in the cones by construction
  }

  // 4. Velocity and position after the step.
  r.v = m > 0 ? Eigen::VectorXd(v_free + Minv_Jt * r.impulses) : v_free;
  r.q.resize(model.nq);
  integrate(model, q, Eigen::VectorXd(h * r.v), r.q);
  return r;
}

}  // namespace batchdyn
