// The dense reference contact step (kernels/contact/contact_step.hpp) against closed forms and the
// Coulomb NCP's own optimality conditions: resting, dropping, sticking and sliding on an
// incline, impulses that never add energy, and lambda in K, sigma in K*, lambda . sigma = 0.
#include "helpers.hpp"
#include "kernels/tree/aba.hpp"
#include "kernels/contact/contact_step.hpp"
#include "topology/contacts.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

Eigen::VectorXd at_height(const Model& model, double z) {
  Eigen::VectorXd q = neutral_configuration<double>(model);
  q[2] = z;
  return q;
}

double total_normal_force(const ContactStepResult& r, double h) {
  double sum = 0.0;
  for (size_t a = 0; a < r.active.size(); ++a) sum += r.impulses[3 * static_cast<int>(a)] / h;
  return sum;
}
}  // namespace

TEST_CASE("a box resting on the plane: the normal forces sum to m g and it does not drift over 10^4 steps") {
  const Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 1.0 * 0.08 / 12);
  Data<double> data(box);
  Eigen::VectorXd q = at_height(box, 0.1), v = Eigen::VectorXd::Zero(box.nv);
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(box.nv);
  const double h = 1e-3;
  ContactStepResult r;
  for (int step = 0; step < 10000; ++step) {
    r = dense_contact_step(box, data, q, v, tau, h);
    REQUIRE(r.converged);
    q = r.q, v = r.v;
  }
  CHECK(r.active.size() == 4);  // the four bottom corners (the top ones are 0.2 m away)
  CHECK(total_normal_force(r, h) == doctest::Approx(kG).epsilon(1e-6));
  CHECK(std::abs(q[2] - 0.1) < 1e-6);
  CHECK(std::abs(q[0]) < 1e-9);
  CHECK(v.norm() < 1e-6);
}

TEST_CASE("a sphere dropped on the plane comes to rest without bouncing and without sinking beyond the margin") {
  const Model ball = free_body("<sphere radius=\"0.05\"/>", 0.001);
  Data<double> data(ball);
  Eigen::VectorXd q = at_height(ball, 0.2), v = Eigen::VectorXd::Zero(ball.nv);
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(ball.nv);
  const double h = 1e-3;
  bool landed = false;
  double lowest = q[2];
  for (int step = 0; step < 1000; ++step) {
    const ContactStepResult r = dense_contact_step(ball, data, q, v, tau, h);
    REQUIRE(r.converged);
    q = r.q, v = r.v;
    if (landed) CHECK(v[2] <= 1e-9);  // never moves up again: inelastic, no bounce
    landed = landed || (r.impulses.size() > 0 && r.impulses[0] > 0);
    lowest = std::min(lowest, q[2]);
  }
  CHECK(landed);
  CHECK(lowest >= 0.05 - 1e-9);  // the contact is made before penetration: the normal target allows gap / h
  CHECK(q[2] == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(std::abs(v[2]) < 1e-9);
}

TEST_CASE("a box on an incline sticks when tan(theta) < mu and slides with a = g (sin(theta) - mu cos(theta)) otherwise") {
  // The incline as tilted gravity on a level plane: the same contact problem.
  for (const double theta : {0.3, 0.7}) {
    CAPTURE(theta);
    Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 1.0 * 0.08 / 12);
    const double mu = 0.5;  // tan(0.3) = 0.31 < 0.5 < tan(0.7) = 0.84
    add_contacts_from_json(box, R"({"friction": 0.5})", "incline.json");
    box.gravity = Vec3d{kG * std::sin(theta), 0.0, -kG * std::cos(theta)};
    Data<double> data(box);
    Eigen::VectorXd q = at_height(box, 0.1), v = Eigen::VectorXd::Zero(box.nv);
    const Eigen::VectorXd tau = Eigen::VectorXd::Zero(box.nv);
    const double h = 1e-3;
    for (int step = 0; step < 100; ++step) {  // let it settle (or start sliding)
      const ContactStepResult r = dense_contact_step(box, data, q, v, tau, h);
      REQUIRE(r.converged);
      q = r.q, v = r.v;
    }
    const double v_before = v[0];
    for (int step = 0; step < 200; ++step) {
      const ContactStepResult r = dense_contact_step(box, data, q, v, tau, h);
      REQUIRE(r.converged);
      q = r.q, v = r.v;
    }
    const double acceleration = (v[0] - v_before) / (200 * h);
    if (std::tan(theta) < mu) {
      CHECK(std::abs(v[0]) < 1e-6);
    } else {
      CHECK(acceleration == doctest::Approx(kG * (std::sin(theta) - mu * std::cos(theta))).epsilon(1e-6));
    }
    CHECK(std::abs(q[2] - 0.1) < 1e-6);  // stays on the plane
  }
}

TEST_CASE("contact impulses add no energy beyond the Baumgarte push-out: kinetic energy after the impulse vs the free motion") {
  // A sphere thrown sideways and spinning onto the plane (it bounces along, slides, then rolls),
  // and the quadruped dropped on its feet and trunk. The comparison is at the same q and M(q), so
  // what the integrator does to a spinning free flyer does not enter.
  const Model ball = free_body("<sphere radius=\"0.05\"/>", 0.001);
  const Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  for (const Model* model : {&ball, &quadruped}) {
    CAPTURE(model->name);
    Data<double> data(*model);
    Eigen::VectorXd q = model == &ball ? at_height(ball, 0.15) : crouching_quadruped(quadruped, 0.05), v = Eigen::VectorXd::Zero(model->nv);
    v[0] = 2.0, v[2] = -1.0, v[4] = 5.0;
    const Eigen::VectorXd tau = Eigen::VectorXd::Zero(model->nv);
    const double h = 1e-3;
    int in_contact = 0;
    for (int step = 0; step < 1000; ++step) {
      const ContactStepResult r = dense_contact_step(*model, data, q, v, tau, h);
      REQUIRE(r.converged);
      const Eigen::VectorXd v_free = v + h * aba(*model, data, q, v, tau);
      const Eigen::MatrixXd M = crba(*model, data, q);
      const double free_energy = 0.5 * v_free.dot(M * v_free), after = 0.5 * r.v.dot(M * r.v);
      // From the NCP: after - free = -lambda'G lambda / 2 - sum mu lambda_N ||sigma_T|| - sum lambda_N b_N,
      // so only the Baumgarte push-out of a penetrating candidate (b_N < 0) may add energy.
      double push_out = 0.0;
      for (size_t a = 0; a < r.active.size(); ++a) {
        const double gap = r.states[static_cast<size_t>(r.active[a])].gap;
        if (gap < 0)
          push_out += r.impulses[3 * static_cast<int>(a)] * std::min(-ContactSettings{}.baumgarte * gap / h, ContactSettings{}.max_push_out);
      }
      for (size_t l = 0; l < r.limits.size(); ++l)  // the same for a joint beyond its limit
        if (r.limits[l].distance < 0)
          push_out += r.impulses[3 * static_cast<int>(r.active.size()) + static_cast<int>(l)] *
                      std::min(-ContactSettings{}.baumgarte * r.limits[l].distance / h, ContactSettings{}.max_push_out);
      CHECK(after <= free_energy + push_out + 1e-9 * (1 + free_energy));
      in_contact += !r.active.empty();
      q = r.q, v = r.v;
    }
    CHECK(in_contact > 100);
  }
}

TEST_CASE("the ADMM impulses satisfy the Coulomb NCP: lambda in K, sigma in K* (De Saxce), lambda . sigma = 0") {
  // The shipped quadruped dropped crouching with a push, unactuated: its legs fold into their
  // joint limits and the trunk lands too; contacts stick, slide and separate (12 candidates,
  // redundant box corners, joint-limit rows).
  Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Data<double> data(quadruped);
  Eigen::VectorXd q = crouching_quadruped(quadruped, 0.01), v = Eigen::VectorXd::Zero(quadruped.nv);
  v[0] = 0.5, v[2] = -0.3, v[5] = 0.4;
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(quadruped.nv);
  int checked = 0, iterations = 0, steps_with_contact = 0, most = 0;
  const ContactSettings settings;
  for (int step = 0; step < 400; ++step) {
    const ContactStepResult r = dense_contact_step(quadruped, data, q, v, tau, 1e-3, settings);
    REQUIRE(r.converged);
    if (r.active.empty()) {  // still falling
      q = r.q, v = r.v;
      continue;
    }
    iterations += r.iterations, ++steps_with_contact, most = std::max(most, r.iterations);
    const Eigen::VectorXd sigma = r.G * r.impulses + r.g;
    // The solver's tolerance is relative to the impulses and to the velocities g (speculative rows
    // of fast approaching candidates make g large): complementarity to that product.
    const double scale = (1.0 + r.impulses.cwiseAbs().maxCoeff()) * (1.0 + r.g.cwiseAbs().maxCoeff());
    for (size_t a = 0; a < r.active.size(); ++a) {
      const int row = 3 * static_cast<int>(a);
      const double mu = quadruped.contacts.geometries[static_cast<size_t>(quadruped.contacts.candidates[static_cast<size_t>(r.active[a])].geometry)].friction;
      const Eigen::Vector3d l = r.impulses.segment<3>(row);
      Eigen::Vector3d s = sigma.segment<3>(row);
      s[0] += mu * std::hypot(s[1], s[2]);                     // De Saxce: sigma_N + mu ||sigma_T||
      CHECK(std::hypot(l[1], l[2]) <= mu * l[0] + 1e-9);        // lambda in K_mu
      CHECK(mu * std::hypot(s[1], s[2]) <= s[0] + 1e-6 * 1.0);  // sigma in K_mu* = K_{1/mu}
      CHECK(std::abs(l.dot(s)) <= 1e-7 * scale);               // complementarity
      ++checked;
    }
    q = r.q, v = r.v;
  }
  CHECK(checked > 50);
  MESSAGE("ADMM iterations over the drop: mean " << static_cast<double>(iterations) / steps_with_contact << ", max " << most);
}

TEST_CASE("without a ground plane or geometry the step is the free motion") {
  Model ball = free_body("<sphere radius=\"0.05\"/>", 0.001);
  add_contacts_from_json(ball, R"({"ground": null})", "none.json");
  Data<double> data(ball);
  const Eigen::VectorXd q = at_height(ball, 0.0), v = Eigen::VectorXd::Zero(ball.nv), tau = v;
  const ContactStepResult r = dense_contact_step(ball, data, q, v, tau, 1e-2);
  CHECK(r.active.empty());
  CHECK(r.v[2] == doctest::Approx(-kG * 1e-2));
}

TEST_CASE("the contact step refuses a step that is not finite and > 0 and settings out of range") {
  const Model ball = free_body("<sphere radius=\"0.05\"/>", 0.001);
  Data<double> data(ball);
  const Eigen::VectorXd q = at_height(ball, 0.2), v = Eigen::VectorXd::Zero(ball.nv), tau = v;
  for (double h : {0.0, -1e-3, std::nan("")}) CHECK_THROWS_AS(dense_contact_step(ball, data, q, v, tau, h), Error);
  ContactSettings bad;
  bad.baumgarte = 2.0;
  CHECK_THROWS_WITH_AS(dense_contact_step(ball, data, q, v, tau, 1e-3, bad), doctest::Contains("baumgarte in [0, 1]"), Error);
  bad = ContactSettings{};
  bad.limit_margin = -0.01;
  CHECK_THROWS_WITH_AS(dense_contact_step(ball, data, q, v, tau, 1e-3, bad), doctest::Contains("limit_margin"), Error);
}

TEST_CASE("a pendulum swung into its joint limit stops there and does not pass it, without limits it swings on") {
  const Model pendulum = load_urdf_string(R"(<robot name="pendulum"><link name="base"/>
    <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
    <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>
      <limit lower="-0.5" upper="0.5" effort="10" velocity="10"/></joint></robot>)");
  Data<double> data(pendulum);
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(1);
  for (const bool limits : {true, false}) {
    CAPTURE(limits);
    ContactSettings settings;
    settings.joint_limits = limits;
    Eigen::VectorXd q = Eigen::VectorXd::Zero(1), v = Eigen::VectorXd::Constant(1, 3.5);  // enough to reach 0.83 rad freely
    double highest = 0.0;
    bool stopped_at_limit = false;
    for (int step = 0; step < 1000; ++step) {
      const ContactStepResult r = dense_contact_step(pendulum, data, q, v, tau, 1e-3, settings);
      REQUIRE(r.converged);
      CHECK(r.active.empty());  // no ground for a fixed base
      q = r.q, v = r.v;
      highest = std::max(highest, q[0]);
      stopped_at_limit = stopped_at_limit || (limits && !r.limits.empty() && std::abs(q[0] - 0.5) < 1e-8 && std::abs(v[0]) < 1e-5);
    }
    if (limits) {
      CHECK(highest <= 0.5 + 1e-9);  // reaches the limit within the step it closes, never beyond (to the solver's tolerance)
      CHECK(stopped_at_limit);        // inelastic: it stops there, then falls back
    } else {
      CHECK(highest > 0.8);  // I w^2 / 2 = m g l (1 - cos(theta)), I = 0.26 kg m^2: theta = 0.83 rad
    }
  }
}
