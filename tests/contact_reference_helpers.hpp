// The contact tests' check against the oracle: one step of a W = 1 engine from touchdown states
// equals the dense reference contact step (kernels/contact/contact_step.hpp) of every environment.
#pragma once

#include <utility>
#include <vector>

#include "batch_helpers.hpp"
#include "kernels/contact/contact_step.hpp"

namespace batchdyn::test {

// Tightens `batch`'s contact solver for a comparison with the dense reference (tolerance 1e-11,
// at most 2000 iterations; no penetration report: the states may start deep in the ground on
// purpose) and returns the reference's settings: the same, solved further (1e-12, 20000).
inline ContactSettings solve_tightly(ScalarBatch<double>& batch) {
  ContactSettings settings = batch.contact_settings();
  settings.tolerance = 1e-11, settings.max_iterations = 2000;
  settings.max_penetration = std::numeric_limits<double>::infinity();
  batch.set_contact_settings(settings);
  ContactSettings reference = settings;
  reference.max_iterations = 20000, reference.tolerance = 1e-12;
  return reference;
}

// Writes `states` into `batch` (passive forces off: the reference has no damping), steps it once
// by h with its own contact settings, and checks every environment against dense_contact_step at
// `reference` (status Ok, the reference converged, v to 1e-7, q to 1e-9). Returns the reference
// results, one per environment, for the caller's further checks.
inline std::vector<ContactStepResult> check_step_equals_dense_reference(ScalarBatch<double>& batch,
                                                                        const std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>>& states,
                                                                        double h, const ContactSettings& reference) {
  const Model& m = batch.model();
  batch.set_passive_forces(false);
  for (int e = 0; e < batch.num_envs(); ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  batch.step(h);
  Data<double> data(m);
  std::vector<ContactStepResult> results;
  for (int e = 0; e < batch.num_envs(); ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    results.push_back(dense_contact_step(m, data, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second,
                                         Eigen::VectorXd::Zero(m.nv), h, reference));
    const ContactStepResult& r = results.back();
    REQUIRE(r.converged);
    CHECK((row(batch.v(), e, m.nv) - r.v).cwiseAbs().maxCoeff() < 1e-7);
    CHECK((row(batch.q(), e, m.nq) - r.q).cwiseAbs().maxCoeff() < 1e-9);
  }
  return results;
}

// The state with the model's lowest ground candidate `depth` below the ground (the free root's z
// moved: the loops stay closed).
inline Eigen::VectorXd touching(const Model& m, Eigen::VectorXd q, double depth) {
  Data<double> data(m);
  forward_kinematics(m, data, q);
  const std::vector<CandidateState> states = candidate_states(m, data);
  double lowest = 1e9;
  for (const CandidateState& s : states) lowest = std::min(lowest, s.gap);
  q[2] -= lowest + depth;
  return q;
}

// The batch's model with the loop gains step() gives its constraints at substep h (those
// without gains of their own; velocity-level rows, as with semi-implicit Euler): the model the
// dense reference contact step must read to target the loops as the engine does.
template <class Engine>
Model with_step_loop_gains(const Engine& batch, double h) {
  Model m = batch.model();
  const auto [kp, kd] = batch.loop_stabilisation_gains(h);
  for (Constraint& k : m.constraints)
    if (!k.spec.gains_given && k.kp == 0 && k.kd == 0) k.kp = kp, k.kd = kd, k.velocity_level = batch.loop_stabilisation().velocity_level;
  return m;
}

}  // namespace batchdyn::test
