// Compliant contact (a contact file's stiffness and damping: a spring-damper normal, taken
// implicitly at the end of the step, normal_row_terms in kernels/contact/contact_settings.hpp): the
// loader, closed forms (the static deflection m g / k, the scalar spring-damper recursion step
// for step), the dense reference, and lanes against W = 1.
#include "contact_reference_helpers.hpp"
#include "topology/contacts.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

// A 1 kg ball of radius 0.1 m whose contact with the ground is a spring-damper (k, d).
Model compliant_ball(double stiffness, double damping) {
  Model ball = free_body("<sphere radius=\"0.1\"/>", 0.004);
  add_contacts_from_json(ball, "{\"stiffness\": " + std::to_string(stiffness) + ", \"damping\": " + std::to_string(damping) + "}",
                         "ball.json");
  return ball;
}

Model compliant_quadruped() {
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  add_contacts_from_json(m, R"({"stiffness": 20000, "damping": 400})", "feet.json");
  return m;
}
}  // namespace

TEST_CASE("compliant contact: a file's stiffness and damping reach the candidates, per geometry and pair, rigid by default") {
  Model m = free_body("<sphere radius=\"0.1\"/>");
  CHECK(m.contacts.stiffness(0) == 0.0);  // rigid unless a file says otherwise
  CHECK(m.contacts.damping(0) == 0.0);
  add_contacts_from_json(m, R"({"stiffness": 1000, "damping": 5,
      "geometries": [{"name": "toe", "link": "body", "point": {}, "stiffness": 3000},
                     {"name": "cap", "link": "body", "sphere": {"radius": 0.05}, "ground": false}],
      "pairs": [{"geometries": ["toe", "cap"], "stiffness": 7000, "damping": 9}]})",
                         "c.json");
  const ContactModel& cm = m.contacts;
  REQUIRE(cm.candidates.size() >= 2);  // the ground candidates first: the robot file's sphere, the toe
  CHECK(cm.stiffness(0) == 1000.0);    // the file's top level applies to the robot file's geometry too
  CHECK(cm.damping(0) == 5.0);
  CHECK(cm.stiffness(1) == 3000.0);    // its own stiffness, the top level's damping
  CHECK(cm.damping(1) == 5.0);
  CHECK(cm.pairs[0].stiffness == 7000.0);
  CHECK(cm.pairs[0].damping == 9.0);
}

TEST_CASE("compliant contact: a negative stiffness or damping, or a damping without a stiffness, is refused naming the geometry") {
  Model m = free_body("<sphere radius=\"0.1\"/>");
  CHECK_THROWS_WITH_AS(add_contacts_from_json(m, R"({"geometries": [{"name": "toe", "link": "body", "point": {}, "stiffness": -1}]})", "c.json"),
                       doctest::Contains("'toe'"), Error);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(m, R"({"damping": -2, "stiffness": 10})", "c.json"), doctest::Contains("contact damping must be finite and >= 0"),
                       Error);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(m, R"({"damping": 3})", "c.json"), doctest::Contains("a contact damping needs a stiffness"), Error);
  CHECK(m.contacts.stiffness(0) == 0.0);  // all or nothing: the model is unchanged
}

TEST_CASE("compliant contact: a ball resting on a spring-damper ground sinks to the static deflection m g / k and carries m g") {
  const double k = 2e4, d = 200;  // damping ratio d / (2 sqrt(k m)) = 0.71: settles within 0.1 s
  const Model ball = compliant_ball(k, d);
  Batch<double> batch(ball, 3, 1);
  ContactSettings settings = batch.contact_settings();
  settings.tolerance = 1e-12;
  batch.set_contact_settings(settings);
  for (int e = 0; e < 3; ++e) batch.q()[e * ball.nq + 2] = 0.1 + 0.01 * e;
  for (int s = 0; s < 3000; ++s) batch.step(1e-3);
  for (int e = 0; e < 3; ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    CHECK(batch.q()[e * ball.nq + 2] == doctest::Approx(0.1 - kG / k).epsilon(1e-9));
    CHECK(batch.contact_gaps()[e] == doctest::Approx(-kG / k).epsilon(1e-6));
    CHECK(total_contact_force(batch, e).z == doctest::Approx(kG).epsilon(1e-9));
  }
}

TEST_CASE("compliant contact: a dropped ball follows the implicit spring-damper recursion step for step, and bounces") {
  // The oracle, written out for one vertical degree of freedom: within the margin,
  //   lambda = max(0, (-h k gap - h (k h + d) v_free) / (1 + h (k h + d) / m)),  v+ = v_free + lambda / m.
  const double k = 1e4, d = 20, h = 1e-3, margin = kDefaultContactMargin;  // damping ratio 0.1: it bounces
  const Model ball = compliant_ball(k, d);
  ScalarBatch<double> batch(ball, 1, 1);
  ContactSettings settings = batch.contact_settings();
  settings.tolerance = 1e-13;
  batch.set_contact_settings(settings);
  batch.q()[2] = 0.2;
  double z = 0.2, v = 0.0, highest_after_touch = 0.0, lowest = z;
  bool touched = false, left_again = false;
  for (int s = 0; s < 1500; ++s) {
    const double gap = z - 0.1, v_free = v - h * kG;
    double lambda = 0.0;
    if (gap < margin) lambda = std::max(0.0, (-h * k * gap - h * (k * h + d) * v_free) / (1.0 + h * (k * h + d)));
    v = v_free + lambda, z += h * v;
    batch.step(h);
    CAPTURE(s);
    REQUIRE(batch.status()[0] == EnvStatus::Ok);
    CHECK(batch.q()[2] == doctest::Approx(z).epsilon(1e-10));
    CHECK(std::abs(batch.v()[2] - v) < 1e-8);
    touched = touched || lambda > 0.0;
    if (touched) left_again = left_again || z - 0.1 > margin, highest_after_touch = std::max(highest_after_touch, z);
    lowest = std::min(lowest, z);
  }
  CHECK(left_again);                  // a soft, lightly damped contact bounces (a rigid one is inelastic)
  CHECK(lowest < 0.1 - 2 * kG / k);   // and sinks beyond its static deflection while it stops the fall
}

TEST_CASE("compliant contact: one landing step of the quadruped on compliant feet equals the dense reference, joint limits included") {
  const Model m = compliant_quadruped();
  ScalarBatch<double> batch(m, 6, 1);
  const ContactSettings reference = solve_tightly(batch);
  const double h = 2e-3;
  const auto states = touchdown_states(m, 6, 7);
  int touching = 0;
  for (const ContactStepResult& r : check_step_equals_dense_reference(batch, states, h, reference)) touching += static_cast<int>(r.active.size());
  CHECK(touching >= 12);
  // The compliance changes the step: the rigid quadruped's landing is another one.
  const Model rigid = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Data<double> data(rigid);
  const ContactStepResult r = dense_contact_step(rigid, data, states[0].first, states[0].second, Eigen::VectorXd::Zero(m.nv), h, reference);
  CHECK((row(batch.v(), 0, m.nv) - r.v).cwiseAbs().maxCoeff() > 1e-3);
}

TEST_CASE("compliant contact: SIMD lanes equal W = 1 over 100 steps of the quadruped landing on compliant feet") {
  const Model m = compliant_quadruped();
  const int N = 11;
  const auto states = touchdown_states(m, N, 5);
  check_lanes_equal_w1(m, N, true, [&](auto& batch) {
    for (int e = 0; e < N; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
    for (int s = 0; s < 100; ++s) batch.step(1e-3f);
  });
}
