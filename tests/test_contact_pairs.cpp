// Body-body contact: the pairs a contact file enables (topology/contact_model.hpp, ContactPair),
// their geometry (kernels/contact/pair_contact.hpp) against closed forms, their candidates and checks,
// and step() with pairs against the dense reference contact step, W = 1 lanes, and closed forms
// (a ball resting on a box carries its weight; an inelastic collision keeps the momentum).
#include "batch_helpers.hpp"
#include "kernels/contact/contact_step.hpp"
#include "topology/contacts.hpp"
#include "topology/scene.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

// A pair candidate whose B core is placed by `b` (world frame) and A's point by `a`.
ContactCandidate pair_candidate(CandidateKind kind, double ra, double rb, double half_length = 0.0, Vec3d half_extents = Vec3d::zero()) {
  ContactCandidate c;
  c.kind = kind, c.pair = 0, c.radius = ra, c.radius2 = rb, c.half_length2 = half_length, c.half_extents2 = half_extents;
  return c;
}

Transformd at(const Vec3d& p) { return Transformd{Mat3d::identity(), p}; }

struct PairResult {
  double gap;
  Vec3d normal, point;
};
PairResult evaluate(const ContactCandidate& c, const Transformd& a, const Transformd& b) {
  PairResult r;
  pair_contact(c, a, b, r.gap, r.normal, r.point);
  return r;
}

void check_vec(const Vec3d& x, const Vec3d& expected, double tolerance = 1e-12) {
  for (int k = 0; k < 3; ++k) CHECK(x[k] == doctest::Approx(expected[k]).epsilon(tolerance).scale(1.0));
}

// Free boxes (a scene) with collision geometry and pairs from a contact JSON text.
Model free_boxes(const std::vector<std::tuple<std::string, double, Vec3d>>& boxes, const std::string& contacts) {
  Scene scene("pairs");
  for (const auto& [name, mass, size] : boxes) scene.add_box(name, mass, size);
  Model m = scene.build();
  add_contacts_from_json(m, contacts, "test contacts");
  return m;
}

// A ball (0.5 kg, r 5 cm) on a table-top box (2 kg, 0.4 x 0.4 x 0.2 m) that stands on the ground.
Model ball_on_box() {
  return free_boxes({{"table", 2.0, {0.4, 0.4, 0.2}}, {"ball", 0.5, {0.1, 0.1, 0.1}}},
                    R"({"geometries": [{"name": "top", "link": "table", "box": {"size": [0.4, 0.4, 0.2]}},
                                       {"name": "ball", "link": "ball", "sphere": {"radius": 0.05}, "ground": false}],
                        "pairs": [{"geometries": ["ball", "top"], "friction": 0.5}]})");
}

// Free-flyer coordinates of body k (7 per body: x y z, quaternion x y z w).
void place(Eigen::VectorXd& q, int k, const Vec3d& p, const Eigen::Quaterniond& r = Eigen::Quaterniond::Identity()) {
  q.segment<3>(7 * k) = Eigen::Vector3d(p.x, p.y, p.z);
  q.segment<4>(7 * k + 3) = r.coeffs();
}

// Runs one step of `states` through `batch` (W lanes) and the dense reference, and compares
// velocities, positions, flags and world forces.
void check_step_against_reference(const Model& m, const std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>>& states, double h,
                                  int* pairs_touching) {
  const int N = static_cast<int>(states.size());
  ScalarBatch<double> batch(m, N, 1);
  batch.set_passive_forces(false);  // the reference has no damping
  ContactSettings settings = batch.contact_settings();
  settings.tolerance = 1e-11, settings.max_iterations = 3000;
  batch.set_contact_settings(settings);
  ContactSettings reference = settings;
  reference.max_iterations = 20000, reference.tolerance = 1e-12;
  for (int e = 0; e < N; ++e) set_row(batch, e, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second);
  batch.step(h);
  Data<double> data(m);
  const int C = batch.contact_candidates();
  for (int e = 0; e < N; ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    const ContactStepResult r = dense_contact_step(m, data, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second,
                                                   Eigen::VectorXd::Zero(m.nv), h, reference);
    REQUIRE(r.converged);
    CHECK((row(batch.v(), e, m.nv) - r.v).cwiseAbs().maxCoeff() < 1e-7);
    CHECK((row(batch.q(), e, m.nq) - r.q).cwiseAbs().maxCoeff() < 1e-9);
    for (size_t a = 0; a < r.active.size(); ++a) {
      const int k = r.active[a];
      CHECK(batch.contact_flags()[e * C + k] == 1.0);
      const Vec3d f = r.world_force(static_cast<int>(a), m, h);
      for (int i = 0; i < 3; ++i) CHECK(std::abs(batch.contact_forces()[(e * C + k) * 3 + i] - f[i]) < 1e-4 * (1 + 20 * kG));
      *pairs_touching += !m.contacts.candidates[static_cast<size_t>(k)].against_ground();
    }
    for (int k = 0; k < C; ++k) {
      const double gap = r.states[static_cast<size_t>(k)].gap;  // +inf against a ground that is not there
      CHECK((std::isinf(gap) ? batch.contact_gaps()[e * C + k] == gap : batch.contact_gaps()[e * C + k] == doctest::Approx(gap).epsilon(1e-12)));
    }
  }
}
}  // namespace

// --- Geometry: closed forms ---

TEST_CASE("pair geometry: two spheres touch along the line of their centres, midway between their surfaces") {
  const ContactCandidate c = pair_candidate(CandidateKind::PointPoint, 0.1, 0.2);
  const PairResult r = evaluate(c, at({0.5, 0.4, 0.0}), at({0.5, 0.0, 0.0}));  // centres 0.4 apart
  CHECK(r.gap == doctest::Approx(0.1));
  check_vec(r.normal, {0.0, 1.0, 0.0});  // from B to A
  check_vec(r.point, {0.5, 0.25, 0.0});  // surfaces at y = 0.2 and 0.3
}

TEST_CASE("pair geometry: a sphere against a capsule meets its segment's nearest point, or its end cap beyond the segment") {
  const ContactCandidate c = pair_candidate(CandidateKind::PointSegment, 0.05, 0.1, 0.5);  // segment z in [-0.5, 0.5]
  const PairResult side = evaluate(c, at({0.3, 0.0, 0.2}), at(Vec3d::zero()));
  CHECK(side.gap == doctest::Approx(0.3 - 0.15));
  check_vec(side.normal, {1.0, 0.0, 0.0});
  const PairResult cap = evaluate(c, at({0.0, 0.0, 0.9}), at(Vec3d::zero()));
  CHECK(cap.gap == doctest::Approx(0.4 - 0.15));
  check_vec(cap.normal, {0.0, 0.0, 1.0});
}

TEST_CASE("pair geometry: two crossing capsules meet at their segments' common perpendicular, parallel ones side by side") {
  ContactCandidate c = pair_candidate(CandidateKind::SegmentSegment, 0.05, 0.05, 1.0);  // B: z in [-1, 1]
  c.point = {-1.0, 0.0, 0.0}, c.point_end = {1.0, 0.0, 0.0};                          // A: along x, in A's frame
  const PairResult crossing = evaluate(c, at({0.0, 0.3, 0.2}), at(Vec3d::zero()));
  CHECK(crossing.gap == doctest::Approx(0.3 - 0.1));
  check_vec(crossing.normal, {0.0, 1.0, 0.0});
  check_vec(crossing.point, {0.0, 0.15, 0.2});
  c.point = {0.0, 0.0, -0.5}, c.point_end = {0.0, 0.0, 0.5};  // parallel to B
  const PairResult parallel = evaluate(c, at({0.0, 0.0, 0.2}) * Transformd{Mat3d::identity(), {0.25, 0.0, 0.0}}, at(Vec3d::zero()));
  CHECK(parallel.gap == doctest::Approx(0.25 - 0.1));
  check_vec(parallel.normal, {1.0, 0.0, 0.0});
  check_vec(parallel.point, {0.125, 0.0, 0.2});  // the middle of the overlap z in [-0.3, 0.7], midway between the surfaces
}

TEST_CASE("pair geometry: capsules crossing at a tilt float cannot resolve meet in their overlap, and float follows double at a clear angle") {
  // B along z, 1.6 m long; A beside it at x = 0.3, parallel, then turned by `tilt` about the
  // x axis through its middle (z = 0.1): they cross there.
  const auto contact = [](auto scalar, double tilt) {
    using S = decltype(scalar);
    ContactCandidate c = pair_candidate(CandidateKind::SegmentSegment, 0.05, 0.05, 0.8);
    c.point = {0.0, 0.0, -0.8}, c.point_end = {0.0, 0.0, 0.8};
    const Transformd a{axis_angle_rotation(Vec3d{1.0, 0.0, 0.0}, tilt), Vec3d{0.3, 0.0, 0.1}};
    S gap;
    Vec3<S> normal, point;
    pair_contact(c, cast_transform<S>(a), Transform<S>::identity(), gap, normal, point);
    return std::pair{static_cast<double>(gap), Vec3d{static_cast<double>(point.x), static_cast<double>(point.y), static_cast<double>(point.z)}};
  };
  for (double tilt : {1e-5, 1e-3}) {  // below float's parallel threshold (a tilt of ~3 mrad): the overlap's middle
    CAPTURE(tilt);
    const auto [gap_d, point_d] = contact(0.0, tilt);
    const auto [gap_f, point_f] = contact(0.0f, tilt);
    CHECK(gap_d == doctest::Approx(0.3 - 0.1).epsilon(1e-9));
    CHECK(point_d[2] == doctest::Approx(0.1).epsilon(1e-6));  // at A's middle, where they cross
    CHECK(std::abs(gap_f - gap_d) < 1e-6);
    CHECK(point_f[2] == doctest::Approx(0.05).epsilon(1e-6));  // the overlap z in [-0.7, 0.8], not an end 0.8 m away
    CHECK(std::abs(point_f[0] - point_d[0]) < 1e-6);
  }
  const auto [gap_d, point_d] = contact(0.0, 0.2);  // a clear angle: float follows double
  const auto [gap_f, point_f] = contact(0.0f, 0.2);
  CHECK(std::abs(gap_f - gap_d) < 1e-6);
  for (int k = 0; k < 3; ++k) CHECK(std::abs(point_f[k] - point_d[k]) < 1e-5);
}

// --- Model: candidates and checks ---

TEST_CASE("contact pairs: a contact file's pairs give their candidates after the ground's (sphere-box 1, box-box 4, capsule-box 2, capsule-capsule 1)") {
  const Model m = free_boxes({{"a", 1.0, {0.2, 0.2, 0.2}}, {"b", 1.0, {0.2, 0.2, 0.2}}},
                             R"({"geometries": [{"name": "ball", "link": "a", "sphere": {"radius": 0.05}, "ground": false},
                                                {"name": "rod", "link": "a", "capsule": {"radius": 0.02, "length": 0.2}, "ground": false},
                                                {"name": "block", "link": "a", "box": {"size": [0.2, 0.2, 0.2]}},
                                                {"name": "crate", "link": "b", "box": {"size": [0.2, 0.2, 0.2]}},
                                                {"name": "bar", "link": "b", "capsule": {"radius": 0.02, "length": 0.3}}],
                                 "pairs": [{"geometries": ["crate", "ball"]}, {"geometries": ["block", "crate"], "friction": 0.3},
                                           {"geometries": ["rod", "crate"], "margin": 0.02}, {"geometries": ["rod", "bar"]}]})");
  const ContactModel& cm = m.contacts;
  REQUIRE(cm.pairs.size() == 4);
  const int ground = 8 + 8 + 2;  // block, crate, bar; ball and rod only in pairs
  REQUIRE(cm.num_ground_candidates() == ground);
  REQUIRE(cm.candidates.size() == static_cast<size_t>(ground + 1 + kConvexContactsPerPair + 2 + 1));
  const ContactCandidate& ball = cm.candidates[static_cast<size_t>(ground)];
  CHECK(ball.kind == CandidateKind::PointBox);  // the simpler core is A: the ball, against the crate
  CHECK(cm.geometries[static_cast<size_t>(ball.geometry)].name == "ball");
  CHECK(cm.geometries[static_cast<size_t>(ball.geometry2)].name == "crate");
  CHECK(cm.pairs[0].name == "crate-ball");
  for (int k = ground + 1; k < ground + 5; ++k) {  // box-box: Convex slots (tests/test_convex_contact.cpp)
    CHECK(cm.candidates[static_cast<size_t>(k)].kind == CandidateKind::Convex);
    CHECK(cm.friction(k) == 0.3);
  }
  CHECK(cm.candidates[static_cast<size_t>(ground + 5)].kind == CandidateKind::PointBox);
  CHECK(cm.margin(ground + 5) == 0.02);
  CHECK(cm.candidates.back().kind == CandidateKind::SegmentSegment);
  // Every body the pairs touch is a contact body of the plan; both boxes carry several candidates.
  const ContactPlan plan = plan_contacts(m);
  CHECK(plan.num_bodies() == 2);
  CHECK(plan.terminal_rows() == 12);
}

TEST_CASE("contact pairs: refused with a message naming the pair: unknown geometry, itself, twice, two points, both on the world") {
  const auto load = [](const std::string& pairs) {
    Model m = load_urdf_file(model_path("hand.urdf"));
    add_contacts_from_json(m, R"({"geometries": [{"name": "tip", "link": "index_tip", "sphere": {"radius": 0.01}},
                                                 {"name": "dot", "link": "middle_tip", "point": {}},
                                                 {"name": "dot2", "link": "ring_tip", "point": {}},
                                                 {"name": "can", "link": "thumb_tip", "cylinder": {"radius": 0.01, "length": 0.02}},
                                                 {"name": "plate", "link": "palm", "box": {"size": [0.1, 0.1, 0.01]}},
                                                 {"name": "plate2", "link": "palm", "sphere": {"radius": 0.01}}],
                                "pairs": )" + pairs + "}",
                           "hand_pairs.json");
    return m;
  };
  // plate2 is on the world too: paired with a dot, or the file is refused (it could never touch anything).
  CHECK(load(R"([{"geometries": ["tip", "plate"]}, {"geometries": ["dot", "plate2"]}])").contacts.candidates.size() ==
        1 + 2 + 4 + 1 + 1);  // tip, dots, the can's slots; the pairs
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip", "plate"]}])"), doctest::Contains("'plate2' is on the world and in no pair"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip", "cube"]}])"), doctest::Contains("pairs[0]: no collision geometry named 'cube'"), Error);
  // A cylinder pairs (CandidateKind::Convex: tests/test_convex_contact.cpp): its deepest point.
  const Model can = load(R"([{"geometries": ["tip", "can"]}, {"geometries": ["tip", "plate"]}, {"geometries": ["dot", "plate2"]}])");
  int convex = 0;
  for (const ContactCandidate& c : can.contacts.candidates) convex += c.kind == CandidateKind::Convex;
  CHECK(convex == 1);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip", "tip"]}])"), doctest::Contains("cannot touch itself"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip", "plate"]}, {"geometries": ["plate", "tip"]}])"), doctest::Contains("paired already"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["dot", "dot2"]}])"), doctest::Contains("two points never touch"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["plate", "plate2"]}])"), doctest::Contains("both geometries are on the world"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip", "plate"], "friction": -1}])"), doctest::Contains("friction coefficient must be finite and >= 0"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip"]}])"), doctest::Contains("missing 'geometries'"), Error);
  CHECK_THROWS_WITH_AS(load(R"([{"geometries": ["tip", "plate"], "restitution": 1}])"), doctest::Contains("unknown key 'restitution'"), Error);
}

// --- step() with pairs ---

TEST_CASE("step() with pairs: a ball resting on a box carries its weight on the pair, the ground carries both, nothing drifts over 10^4 steps") {
  const Model m = ball_on_box();
  REQUIRE(m.contacts.candidates.size() == 9);  // the box's corners, then the ball on the box
  Batch<double> batch(m, 3, 1);
  for (int e = 0; e < 3; ++e) {
    Eigen::VectorXd q = neutral_configuration<double>(m), v = Eigen::VectorXd::Zero(m.nv);
    place(q, 0, {0.0, 0.0, 0.1});
    place(q, 1, {0.05 * e, -0.03 * e, 0.25});  // anywhere on the top face
    set_row(batch, e, q, v);
  }
  REQUIRE(batch.contacts());
  for (int s = 0; s < 10000; ++s) batch.step(1e-3);
  for (int e = 0; e < 3; ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    const double* f = batch.contact_forces() + (e * 9 + 8) * 3;  // on the ball, from the box
    CHECK(f[2] == doctest::Approx(0.5 * kG).epsilon(1e-3));
    CHECK(std::hypot(f[0], f[1]) < 1e-4 * f[2]);  // no friction needed (ADMM's tolerance)
    double ground = 0.0;  // the box's corners on the ground
    for (int k = 0; k < 8; ++k) ground += batch.contact_forces()[(e * 9 + k) * 3 + 2];
    CHECK(ground == doctest::Approx(2.5 * kG).epsilon(1e-3));
    CHECK(batch.q()[e * m.nq + 7 + 2] == doctest::Approx(0.25).epsilon(1e-4));  // the ball stays on top
    CHECK(batch.q()[e * m.nq + 7 + 0] == doctest::Approx(0.05 * e).epsilon(1e-6).scale(1.0));
  }
}

TEST_CASE("step() with pairs: two spheres colliding head-on stick together (inelastic) and keep their momentum") {
  Model m = free_boxes({{"light", 1.0, {0.2, 0.2, 0.2}}, {"heavy", 3.0, {0.2, 0.2, 0.2}}},
                       R"({"ground": null,
                           "geometries": [{"name": "light", "link": "light", "sphere": {"radius": 0.1}},
                                          {"name": "heavy", "link": "heavy", "sphere": {"radius": 0.1}}],
                           "pairs": [{"geometries": ["light", "heavy"]}]})");
  m.gravity = Vec3d::zero();
  Batch<double> batch(m, 1, 1);
  Eigen::VectorXd q = neutral_configuration<double>(m), v = Eigen::VectorXd::Zero(m.nv);
  place(q, 0, {-0.15, 0.0, 1.0});
  place(q, 1, {0.15, 0.0, 1.0});  // 0.1 m apart
  v[0] = 1.0, v[6] = -1.0;        // closing at 2 m/s: they meet after 50 ms
  set_row(batch, 0, q, v);
  REQUIRE(batch.contacts());
  for (int s = 0; s < 200; ++s) batch.step(1e-3);
  REQUIRE(batch.status()[0] == EnvStatus::Ok);
  const double momentum = 1.0 * batch.v()[0] + 3.0 * batch.v()[6];
  CHECK(momentum == doctest::Approx(1.0 * 1.0 - 3.0 * 1.0).epsilon(1e-9));
  CHECK(batch.v()[0] == doctest::Approx(-0.5).epsilon(1e-6));  // the common velocity (1 - 3) / 4
  CHECK(batch.v()[6] == doctest::Approx(-0.5).epsilon(1e-6));
  const double distance = batch.q()[7] - batch.q()[0];
  CHECK(distance > 0.2 - 1e-3);  // no deeper than the Baumgarte push-out allows
  CHECK(distance < 0.2 + 0.01);  // and touching (within the margin)
}

// Without the ground: a box sliding on the ground on four corners has many solutions (how its
// weight splits over the corners sets the friction torque), the reference's and the lanes'
// alike, so only the pair's one or two corners are in the problem.
TEST_CASE("step() with pairs: one step of a tilted box landing on another box equals the dense reference contact step") {
  const Model m = free_boxes({{"lower", 2.0, {0.4, 0.4, 0.2}}, {"upper", 0.5, {0.15, 0.1, 0.08}}},
                             R"({"ground": null,
                                 "geometries": [{"name": "lower", "link": "lower", "box": {"size": [0.4, 0.4, 0.2]}},
                                                {"name": "upper", "link": "upper", "box": {"size": [0.15, 0.1, 0.08]}}],
                                 "pairs": [{"geometries": ["upper", "lower"], "friction": 0.7}]})");
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> states;
  for (int e = 0; e < 6; ++e) {
    Eigen::VectorXd q = neutral_configuration<double>(m);
    place(q, 0, {0.0, 0.0, 0.1 - 0.001 * std::abs(u(rng))});
    const Eigen::Quaterniond tilt = Eigen::Quaterniond(Eigen::AngleAxisd(0.2 * u(rng), Eigen::Vector3d::UnitX()) *
                                                       Eigen::AngleAxisd(0.2 * u(rng), Eigen::Vector3d::UnitY()));
    place(q, 1, {0.1 * u(rng), 0.1 * u(rng), 0.2 + 0.04 - 0.002}, tilt);  // its lowest corner in the top face
    Data<double> data(m);
    forward_kinematics(m, data, q);
    const std::vector<CandidateState> gaps = candidate_states(m, data);
    double lowest = 1e9;  // lower the upper box until its lowest corner is 1 mm into the top
    for (size_t k = 0; k < m.contacts.candidates.size(); ++k)
      if (!m.contacts.candidates[k].against_ground() && m.contacts.candidates[k].body == 2) lowest = std::min(lowest, gaps[k].gap);
    q[9] -= lowest + 0.001;
    Eigen::VectorXd v = 0.3 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return u(rng); });
    v[8] = -0.5;  // the upper box falls (its local z is about world z)
    states.emplace_back(q, v);
  }
  int pairs_touching = 0;
  check_step_against_reference(m, states, 2e-3, &pairs_touching);
  CHECK(pairs_touching >= 6);
}

TEST_CASE("step() with pairs: one step of a cube dropped onto the hand's fingertips equals the dense reference contact step") {
  Scene scene("hand_cube");
  scene.add_urdf_file(model_path("hand.urdf"), RootJoint::Fixed);
  scene.add_box("cube", 0.1, {0.06, 0.06, 0.06});
  Model m = scene.build();
  add_contacts_from_json(m, R"({"geometries": [{"name": "cube", "link": "cube", "box": {"size": [0.06, 0.06, 0.06]}},
                                               {"name": "index", "link": "index_tip", "sphere": {"radius": 0.01}, "ground": false},
                                               {"name": "middle", "link": "middle_tip", "sphere": {"radius": 0.01}, "ground": false},
                                               {"name": "thumb", "link": "thumb_tip", "capsule": {"radius": 0.01, "length": 0.02}, "ground": false}],
                               "pairs": [{"geometries": ["index", "cube"]}, {"geometries": ["middle", "cube"]},
                                         {"geometries": ["thumb", "cube"], "friction": 0.5}]})",
                         "hand_cube_contacts.json");
  const int cube = m.num_bodies() - 1;
  REQUIRE(m.bodies[static_cast<size_t>(cube)].joint_type == JointType::FreeFlyer);
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> states;
  Data<double> data(m);
  const Frame& tip = m.frames[static_cast<size_t>(m.frame_index("index_tip", FrameKind::Link))];
  for (int e = 0; e < 6; ++e) {
    Eigen::VectorXd q = neutral_configuration<double>(m);
    for (int k = 0; k < m.nq - 7; ++k) {  // inside the joints' limits
      const double lower = m.lower_position_limit[static_cast<size_t>(k)], upper = m.upper_position_limit[static_cast<size_t>(k)];
      q[k] = std::isfinite(lower) && std::isfinite(upper) ? 0.5 * (lower + upper) + 0.2 * (upper - lower) * u(rng) : 0.3 * u(rng);
    }
    forward_kinematics(m, data, q);
    // The cube's bottom face 1 mm into the index fingertip, shifted sideways a little.
    const Vec3d p = data.world_from_body[static_cast<size_t>(tip.body)].act_point(tip.placement.translation);
    const int base = m.nq - 7;
    q.segment<3>(base) = Eigen::Vector3d(p.x + 0.01 * u(rng), p.y + 0.01 * u(rng), p.z + 0.01 + 0.03 - 0.001);
    Eigen::VectorXd v = 0.2 * Eigen::VectorXd::NullaryExpr(m.nv, [&] { return u(rng); });
    v[m.nv - 6 + 2] = -0.3;  // the cube falls onto the finger
    states.emplace_back(q, v);
  }
  int pairs_touching = 0;
  check_step_against_reference(m, states, 2e-3, &pairs_touching);
  CHECK(pairs_touching >= 6);
}

TEST_CASE("step() with pairs: SIMD lanes equal W = 1 over 300 steps of a ball dropped on a box (double 1e-12, float 1e-5)") {
  const Model m = ball_on_box();
  const int N = 11;
  const auto run = [&](auto& batch) {
    for (int e = 0; e < N; ++e) {
      Eigen::VectorXd q = neutral_configuration<double>(m), v = Eigen::VectorXd::Zero(m.nv);
      place(q, 0, {0.0, 0.0, 0.1});
      place(q, 1, {0.02 * e - 0.1, 0.01 * e, 0.27 + 0.002 * e});
      v[6] = 0.1 * (e % 3), v[8] = -0.5;
      set_row(batch, e, q, v);
    }
    for (int s = 0; s < 300; ++s) batch.step(1e-3f);
  };
  check_lanes_equal_w1(m, N, true, run);
}
