// Terrain (kernels/contact/terrain.hpp): a height field that replaces the ground plane in step()'s
// contact stage and in the dense reference contact step. Against closed forms (a tilted grid is
// the tilted plane), the dense reference, W = 1 lanes, and its checks.
#include "contact_reference_helpers.hpp"
#include "topology/contacts.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

// A grid over [x0, x0 + (nx - 1) s] x [y0, y0 + (ny - 1) s] with heights h(x, y).
template <class Height>
HeightField grid(int nx, int ny, double x0, double y0, double spacing, Height&& h) {
  HeightField f{nx, ny, x0, y0, spacing, {}};
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) f.heights.push_back(h(x0 + i * spacing, y0 + j * spacing));
  return f;
}

// Rolling hills, 3-8 cm high, on a 5 cm grid around the origin.
HeightField bumpy(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double a = 0.03 + 0.05 * u(rng), kx = 4 + 4 * u(rng), ky = 4 + 4 * u(rng), phase = 6.28 * u(rng);
  return grid(41, 41, -1.0, -1.0, 0.05, [&](double x, double y) { return a * std::sin(kx * x + phase) * std::cos(ky * y); });
}
}  // namespace

TEST_CASE("terrain: a height field that is a tilted plane holds and slides a box exactly as the tilted plane does") {
  const Model box = free_body("<box size=\"0.2 0.2 0.2\"/>", 0.08 / 12);
  const double theta = 0.3;
  const Vec3d normal{-std::sin(theta), 0.0, std::cos(theta)};  // z = x tan(theta)
  const HeightField slope = grid(81, 21, -2.0, -0.5, 0.05, [&](double x, double) { return x * std::tan(theta); });
  Batch<double> plane(box, 2, 1), terrain(box, 2, 1);
  const std::array<int, 2> both{0, 1};
  plane.set_ground(both, 0.0, normal);
  terrain.set_terrain(slope);
  for (Batch<double>* batch : {&plane, &terrain}) {
    batch->set_friction(std::array<int, 1>{0}, 0.5);  // tan(theta) = 0.309 < 0.5: sticks
    batch->set_friction(std::array<int, 1>{1}, 0.1);  // slides
    for (int e = 0; e < 2; ++e) {
      double* q = batch->q() + e * box.nq;
      q[0] = 0.1 * normal.x, q[2] = 0.1 * normal.z;
      q[4] = -std::sin(theta / 2), q[6] = std::cos(theta / 2);  // resting on its face
    }
    for (int s = 0; s < 300; ++s) batch->step(1e-3);
  }
  for (int e = 0; e < 2; ++e) {
    CAPTURE(e);
    REQUIRE(terrain.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    CHECK((row(terrain.q(), e, box.nq) - row(plane.q(), e, box.nq)).cwiseAbs().maxCoeff() < 1e-9);
    CHECK((row(terrain.v(), e, box.nv) - row(plane.v(), e, box.nv)).cwiseAbs().maxCoeff() < 1e-9);
    // The net force: how it is shared among the four corners on the ground is not determined (any
    // split with the same net force and moment holds the box; the solver's polish takes one).
    for (int k = 0; k < 3; ++k)
      CHECK(total_contact_force(terrain, e)[k] == doctest::Approx(total_contact_force(plane, e)[k]).epsilon(1e-6).scale(1.0));
  }
  CHECK(total_contact_force(terrain, 0).z == doctest::Approx(kG).epsilon(1e-3));  // the stuck box: the support carries m g
  CHECK(std::abs(total_contact_force(terrain, 0).x) < 1e-3);
  CHECK(terrain.q()[box.nq] < 0.1 * normal.x - 0.05);  // the other slid down the slope (towards -x)
}

TEST_CASE("terrain: one landing step of the quadruped on rolling hills equals the dense reference contact step") {
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  m.contacts.terrain = bumpy(5);
  ScalarBatch<double> batch(m, 6, 1);  // takes the model's terrain
  REQUIRE(batch.terrain().present());
  batch.set_passive_forces(false);  // the reference has no damping
  const ContactSettings reference = solve_tightly(batch);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Data<double> data(m);
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> states;
  for (int e = 0; e < 6; ++e) {
    Eigen::VectorXd q = crouching_quadruped(m, 0.0), v = Eigen::VectorXd::Zero(m.nv);
    q[0] = 0.3 * u(rng), q[1] = 0.3 * u(rng);
    // Lowest foot 2 mm into the hills: a few feet touch, on slopes.
    forward_kinematics(m, data, q);
    double lowest = 1e9;
    for (const CandidateState& c : candidate_states(m, data)) lowest = std::min(lowest, c.gap);
    q[2] -= lowest + 0.002;
    v[0] = 0.2 * u(rng), v[2] = -0.3;
    states.emplace_back(q, v);
    for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = q[k];
    for (int k = 0; k < m.nv; ++k) batch.v()[e * m.nv + k] = v[k];
  }
  const double h = 2e-3;
  batch.step(h);
  int touching = 0, on_slopes = 0;
  for (int e = 0; e < 6; ++e) {
    CAPTURE(e);
    REQUIRE(batch.status()[static_cast<size_t>(e)] == EnvStatus::Ok);
    const ContactStepResult r = dense_contact_step(m, data, states[static_cast<size_t>(e)].first, states[static_cast<size_t>(e)].second,
                                                   Eigen::VectorXd::Zero(m.nv), h, reference);
    REQUIRE(r.converged);
    touching += static_cast<int>(r.active.size());
    CHECK((row(batch.v(), e, m.nv) - r.v).cwiseAbs().maxCoeff() < 1e-7);
    CHECK((row(batch.q(), e, m.nq) - r.q).cwiseAbs().maxCoeff() < 1e-9);
    const int C = batch.contact_candidates();
    for (size_t a = 0; a < r.active.size(); ++a) {
      const int k = r.active[a];
      CHECK(batch.contact_flags()[e * C + k] == 1.0);
      const Vec3d f = r.world_force(static_cast<int>(a), m, h);
      for (int i = 0; i < 3; ++i) CHECK(std::abs(batch.contact_forces()[(e * C + k) * 3 + i] - f[i]) < 1e-4 * (1 + 20 * kG));
      if (r.states[static_cast<size_t>(k)].normal.z < 0.999) ++on_slopes;
    }
    for (int k = 0; k < C; ++k) CHECK(batch.contact_gaps()[e * C + k] == doctest::Approx(r.states[static_cast<size_t>(k)].gap).epsilon(1e-12));
  }
  CHECK(touching >= 6);
  CHECK(on_slopes >= 3);  // the normals are the hills', not the plane's
}

TEST_CASE("terrain: SIMD lanes equal W = 1 on rolling hills with heights per environment (double 1e-12)") {
  Model m = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  const int N = 11;
  const HeightField shared = bumpy(1);
  const auto run = [&](auto& batch) {
    batch.set_terrain(shared);
    for (int e = 0; e < N; e += 3) batch.set_terrain_heights(std::array<int, 1>{e}, bumpy(100 + static_cast<unsigned>(e)).heights);
    for (int e = 0; e < N; ++e) {
      const Eigen::VectorXd q = crouching_quadruped(m, 0.05 + 0.01 * e);
      for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = q[k];
      batch.q()[e * m.nq] = 0.05 * e - 0.25;
    }
    for (int s = 0; s < 300; ++s) batch.step(1e-3);
  };
  Batch<double> lanes(m, N, 2);
  ScalarBatch<double> scalar(m, N, 1);
  run(lanes), run(scalar);
  for (int e = 0; e < N; ++e) {
    CAPTURE(e);
    // Stepped in both (a contact report such as ContactNotConverged may come and go with the
    // last bits of rounding, but it must come in both), and stepped alike.
    const EnvStatus status = lanes.status()[static_cast<size_t>(e)];
    CHECK((status == EnvStatus::Ok || is_report(status)));
    CHECK(status == scalar.status()[static_cast<size_t>(e)]);
    CHECK((row(lanes.q(), e, m.nq) - row(scalar.q(), e, m.nq)).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((row(lanes.v(), e, m.nv) - row(scalar.v(), e, m.nv)).cwiseAbs().maxCoeff() < 1e-12);
  }
  CHECK(lanes.terrain_heights(3)[7] == bumpy(103).heights[7]);
  CHECK(lanes.terrain_heights(1)[7] == shared.heights[7]);
}

TEST_CASE("terrain: a sphere rests on its own environment's heights, and beyond the grid on its edge height") {
  const Model ball = free_body("<sphere radius=\"0.1\"/>", 0.004);
  Batch<double> batch(ball, 3, 1);
  batch.set_terrain(grid(5, 5, -1.0, -1.0, 0.5, [](double, double) { return 0.0; }));
  batch.set_terrain_heights(std::array<int, 1>{1}, std::vector<double>(25, 0.25));
  // Environment 2: a step, 0.15 for x >= 0.5; its sphere starts beyond the grid's +x edge.
  batch.set_terrain_heights(std::array<int, 1>{2}, grid(5, 5, -1.0, -1.0, 0.5, [](double x, double) { return x >= 0.5 ? 0.15 : 0.0; }).heights);
  for (int e = 0; e < 3; ++e) batch.q()[e * ball.nq + 2] = 0.6;
  batch.q()[2 * ball.nq] = 3.0;
  for (int s = 0; s < 2000; ++s) batch.step(1e-3);
  CHECK(batch.q()[2] == doctest::Approx(0.1).epsilon(1e-3));
  CHECK(batch.q()[ball.nq + 2] == doctest::Approx(0.35).epsilon(1e-3));
  CHECK(batch.q()[2 * ball.nq + 2] == doctest::Approx(0.25).epsilon(1e-3));
  CHECK(batch.q()[2 * ball.nq] == doctest::Approx(3.0).epsilon(1e-6));  // flat beyond the edge: it does not roll
  for (int e = 0; e < 3; ++e) CHECK(total_contact_force(batch, e).z == doctest::Approx(kG).epsilon(1e-3));
  batch.clear_terrain();  // back to the plane z = 0: environment 1 falls to it
  for (int s = 0; s < 1000; ++s) batch.step(1e-3);
  CHECK(batch.q()[ball.nq + 2] == doctest::Approx(0.1).epsilon(1e-3));
}

TEST_CASE("terrain: a bad height field, a wrong count and a model without ground are refused with the value at fault") {
  const Model ball = free_body("<sphere radius=\"0.1\"/>", 0.004);
  Batch<double> batch(ball, 2, 1);
  const auto flat = [](double, double) { return 0.0; };
  CHECK_THROWS_WITH_AS(batch.set_terrain(grid(1, 4, 0, 0, 0.1, flat)), doctest::Contains("at least 2 x 2 points, got 1 x 4"), Error);
  CHECK_THROWS_WITH_AS(batch.set_terrain(grid(3, 3, 0, 0, 0.0, flat)), doctest::Contains("spacing must be finite and > 0"), Error);
  HeightField holed = grid(3, 3, 0, 0, 0.1, flat);
  holed.heights[4] = std::nan("");
  CHECK_THROWS_WITH_AS(batch.set_terrain(holed), doctest::Contains("height (1, 1) is not finite"), Error);
  holed.heights.pop_back();
  CHECK_THROWS_WITH_AS(batch.set_terrain(holed), doctest::Contains("expected nx * ny = 9 heights, got 8"), Error);
  CHECK_THROWS_WITH_AS(batch.set_terrain_heights(std::array<int, 1>{0}, std::vector<double>(9, 0.0)), doctest::Contains("call set_terrain first"), Error);
  batch.set_terrain(grid(3, 3, 0, 0, 0.1, flat));
  CHECK_THROWS_WITH_AS(batch.set_terrain_heights(std::array<int, 1>{0}, std::vector<double>(4, 0.0)), doctest::Contains("expected nx * ny = 9"), Error);
  CHECK_THROWS_WITH_AS(batch.set_terrain_heights(std::array<int, 1>{5}, std::vector<double>(9, 0.0)), doctest::Contains("5"), Error);
  const Model arm = load_urdf_file(model_path("double_pendulum.urdf"));  // a fixed base: no ground
  Batch<double> fixed(arm, 1, 1);
  CHECK_THROWS_WITH_AS(fixed.set_terrain(grid(3, 3, 0, 0, 0.1, flat)), doctest::Contains("has no ground"), Error);
}

TEST_CASE("terrain: a contact file's \"terrain\" loads into the model, and malformed ones are refused naming the entry") {
  Model ball = free_body("<sphere radius=\"0.1\"/>", 0.004);
  add_contacts_from_json(ball, R"({"terrain": {"origin": [-1, -2], "spacing": 0.5, "heights": [[0, 0.1, 0.2], [0.3, 0.4, 0.5]]}})", "hills.json");
  const HeightField& t = ball.contacts.terrain;
  REQUIRE(t.present());
  CHECK(t.nx == 3);
  CHECK(t.ny == 2);
  CHECK(t.origin_x == -1.0);
  CHECK(t.origin_y == -2.0);
  CHECK(t.heights[4] == 0.4);  // row 1 (y = -1.5), column 1 (x = -0.5)
  Batch<double> batch(ball, 1, 1);
  CHECK(batch.terrain().nx == 3);
  double h = 0, sx = 0, sy = 0;
  terrain_height(TerrainView<double>{t.heights.data(), 3, 2, -1.0, -2.0, 0.5}, -0.75, -1.75, h, sx, sy);
  CHECK(h == doctest::Approx(0.2));  // the cell's centre: the mean of 0, 0.1, 0.3, 0.4
  CHECK(sx == doctest::Approx(0.2));  // 0.1 per 0.5 m
  CHECK(sy == doctest::Approx(0.6));  // 0.3 per 0.5 m
  Model other = free_body("<sphere radius=\"0.1\"/>", 0.004);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(other, R"({"terrain": {"spacing": 0.5, "heights": [[0, 0], [0]]}})", "ragged.json"),
                       doctest::Contains("ragged.json: terrain.heights[1]: 1 heights, the first row has 2"), Error);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(other, R"({"terrain": {"heights": [[0, 0], [0, 0]]}})", "nospacing.json"),
                       doctest::Contains("missing 'spacing'"), Error);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(other, R"({"ground": null, "terrain": {"spacing": 1, "heights": [[0, 0], [0, 0]]}})", "noground.json"),
                       doctest::Contains("a terrain needs a ground"), Error);
  CHECK_FALSE(other.contacts.terrain.present());  // all or nothing
}
