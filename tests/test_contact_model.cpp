// The contact model (topology/contact_model.hpp, topology/contacts.hpp): collision geometry from
// URDF <collision> and contact JSON, its candidates, the ground plane. Candidate positions are
// checked in the world frame against forward kinematics of the link frames they belong to.
#include <filesystem>
#include <fstream>

#include "helpers.hpp"
#include "kernels/tree/kinematics.hpp"
#include "topology/contacts.hpp"
#include "topology/reduced_model.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
const std::string kRobots = BATCHDYN_ROBOTS_DIR;

// A two-link arm on a free base with no collision geometry of its own.
const char* kArm = R"(<robot name="arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="upper"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
  <joint name="tip_fixed" type="fixed"><parent link="upper"/><child link="tip"/><origin xyz="0 0 0.5" rpy="0 0.3 0"/></joint>
</robot>)";

// World position of candidate c at configuration q.
Vec3d candidate_in_world(const Model& model, Data<double>& data, const Eigen::VectorXd& q, const ContactCandidate& c) {
  forward_kinematics(model, data, q);
  return data.world_from_body[c.body].act_point(c.point);
}

Vec3d link_point_in_world(const Model& model, Data<double>& data, const Eigen::VectorXd& q, const std::string& link, const Vec3d& p) {
  forward_kinematics(model, data, q);
  return frame_placement(model, data, model.frame_index(link)).act_point(p);
}

void check_close(const Vec3d& a, const Vec3d& b, double tolerance = 1e-12) {
  for (int k = 0; k < 3; ++k) CHECK(a[k] == doctest::Approx(b[k]).epsilon(tolerance).scale(1.0));
}

std::vector<const ContactCandidate*> candidates_of(const Model& model, const std::string& geometry) {
  std::vector<const ContactCandidate*> out;
  for (const ContactCandidate& c : model.contacts.candidates)
    if (model.contacts.geometries[static_cast<size_t>(c.geometry)].name == geometry) out.push_back(&c);
  return out;
}
}  // namespace

TEST_CASE("URDF collision spheres, boxes and cylinders become geometry on their link's body, placed through fixed joints") {
  const Model model = load_urdf_file(kRobots + "/a1.urdf", RootJoint::FreeFlyer);
  REQUIRE(model.contacts.geometries.size() == 22);
  Data<double> data(model);
  std::mt19937 rng(3);
  const Eigen::VectorXd q = random_configuration<double>(model, rng);
  // FR_foot is merged into FR_calf by a fixed joint: its sphere's one candidate is the foot frame's origin.
  const auto foot = candidates_of(model, "FR_foot/collision0");
  REQUIRE(foot.size() == 1);
  CHECK(foot[0]->radius == doctest::Approx(0.02));
  CHECK(model.bodies[foot[0]->body].name == "FR_calf");
  check_close(candidate_in_world(model, data, q, *foot[0]), link_point_in_world(model, data, q, "FR_foot", Vec3d::zero()));
  CHECK(candidates_of(model, "trunk/collision0").size() == 8);   // a box: its corners
  CHECK(candidates_of(model, "FR_hip/collision0").size() == 4);  // a cylinder: 4 slots
  CHECK(model.contacts.candidates.size() == 116);  // 8 cylinders (4 slots each), 10 boxes (8 corners), 4 spheres
}

TEST_CASE("a box's candidates are its 8 corners, a capsule's its end centres with the radius, a cylinder's 4 slots") {
  Model model = load_urdf_string(kArm, RootJoint::FreeFlyer);
  add_contacts_from_json(model, R"({"geometries": [
      {"name": "box", "link": "tip", "box": {"size": [0.2, 0.4, 0.6]}, "placement": {"xyz": [0.1, 0, 0], "rpy": [0.2, 0, 0]}},
      {"name": "capsule", "link": "upper", "capsule": {"radius": 0.05, "length": 0.3}},
      {"name": "cylinder", "link": "upper", "cylinder": {"radius": 0.04, "length": 0.2}},
      {"name": "point", "link": "base", "point": {}, "placement": {"xyz": [0.3, 0, 0]}}]})", "test.json");
  Data<double> data(model);
  std::mt19937 rng(5);
  const Eigen::VectorXd q = random_configuration<double>(model, rng);
  const Transformd box_in_tip = Placement{{0.1, 0, 0}, {0.2, 0, 0}}.transform();
  const auto corners = candidates_of(model, "box");
  REQUIRE(corners.size() == 8);
  int k = 0;
  for (double sx : {-1.0, 1.0})
    for (double sy : {-1.0, 1.0})
      for (double sz : {-1.0, 1.0}) {
        CHECK(corners[static_cast<size_t>(k)]->radius == 0.0);
        check_close(candidate_in_world(model, data, q, *corners[static_cast<size_t>(k++)]),
                    link_point_in_world(model, data, q, "tip", box_in_tip.act_point({0.1 * sx, 0.2 * sy, 0.3 * sz})));
      }
  const auto ends = candidates_of(model, "capsule");
  REQUIRE(ends.size() == 2);
  for (size_t e = 0; e < 2; ++e) {
    CHECK(ends[e]->radius == 0.05);
    check_close(candidate_in_world(model, data, q, *ends[e]), link_point_in_world(model, data, q, "upper", {0, 0, e ? 0.15 : -0.15}));
  }
  const auto slots = candidates_of(model, "cylinder");  // placed per step: test_contact_batch.cpp
  REQUIRE(slots.size() == 4);
  for (int s = 0; s < 4; ++s) CHECK(slots[static_cast<size_t>(s)]->slot == s);
  const auto point = candidates_of(model, "point");
  REQUIRE(point.size() == 1);
  CHECK(point[0]->radius == 0.0);
  check_close(candidate_in_world(model, data, q, *point[0]), link_point_in_world(model, data, q, "base", {0.3, 0, 0}));
}

TEST_CASE("a free-root model gets a ground plane at z = 0 and a fixed-root one none, a contact file sets or removes it") {
  const Model free_arm = load_urdf_string(kArm, RootJoint::FreeFlyer);
  CHECK(free_arm.contacts.ground.present);
  CHECK(free_arm.contacts.ground.height == 0.0);
  CHECK(free_arm.contacts.ground.normal.z == 1.0);
  Model fixed_arm = load_urdf_string(kArm, RootJoint::Fixed);
  CHECK_FALSE(fixed_arm.contacts.ground.present);
  add_contacts_from_json(fixed_arm, R"({"ground": {"height": -0.5, "normal": [0, 3, 4]}})", "g.json");
  CHECK(fixed_arm.contacts.ground.present);
  CHECK(fixed_arm.contacts.ground.height == -0.5);
  CHECK(fixed_arm.contacts.ground.normal.y == doctest::Approx(0.6));
  CHECK(fixed_arm.contacts.ground.normal.z == doctest::Approx(0.8));
  Model no_ground = free_arm;
  add_contacts_from_json(no_ground, R"({"ground": null})", "g.json");
  CHECK_FALSE(no_ground.contacts.ground.present);
}

TEST_CASE("a contact file's geometry on the world is refused unless a pair uses it: alone it can never touch anything") {
  Model model = load_urdf_string(kArm, RootJoint::Fixed);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(model, R"({"geometries": [{"name": "pedestal", "link": "base", "sphere": {"radius": 0.1}}]})", "p.json"),
                       doctest::Contains("p.json: collision geometry 'pedestal' is on the world and in no pair"), Error);
  CHECK(model.contacts.geometries.empty());
  add_contacts_from_json(model, R"({"geometries": [{"name": "pedestal", "link": "base", "sphere": {"radius": 0.1}},
                                                   {"name": "tip", "link": "tip", "sphere": {"radius": 0.02}}],
                                    "pairs": [{"geometries": ["tip", "pedestal"]}]})", "p.json");
  REQUIRE(model.contacts.geometries.size() == 2);
  CHECK(model.contacts.geometries[0].body == 0);
  REQUIRE(model.contacts.candidates.size() == 2);  // the tip's ground candidate, then the pair's: the world's geometry has none of its own
  CHECK(model.contacts.candidates[0].against_ground());
  CHECK_FALSE(model.contacts.candidates[1].against_ground());
}

TEST_CASE("a collision geometry larger than a kilometre is refused as a unit or scale error") {
  Model model = load_urdf_string(kArm, RootJoint::FreeFlyer);
  CHECK_THROWS_WITH_AS(add_contacts_from_json(model, R"({"geometries": [{"name": "b", "link": "tip", "box": {"size": [1e9, 1, 1]}}]})", "big.json"),
                       doctest::Contains("at most 1000 m, got 1e+09"), Error);
  CHECK_NOTHROW(add_contacts_from_json(model, R"({"geometries": [{"name": "b", "link": "tip", "box": {"size": [999, 1, 1]}}]})", "ok.json"));
}

TEST_CASE("friction and margin: defaults, per file, per geometry, file_collisions false drops the robot file's geometry") {
  Model model = load_urdf_file(kRobots + "/a1.urdf", RootJoint::FreeFlyer);
  CHECK(model.contacts.geometries[0].friction == kDefaultFriction);
  CHECK(model.contacts.geometries[0].margin == kDefaultContactMargin);
  Model tuned = model;
  add_contacts_from_json(tuned, R"({"friction": 0.6, "margin": 0.02})", "f.json");
  for (const CollisionGeometry& g : tuned.contacts.geometries) CHECK((g.friction == 0.6 && g.margin == 0.02));
  Model feet_only = model;
  add_contacts_from_json(feet_only, R"({"file_collisions": false, "friction": 0.8, "geometries": [
      {"name": "FR", "link": "FR_foot", "sphere": {"radius": 0.02}},
      {"name": "FL", "link": "FL_foot", "sphere": {"radius": 0.02}, "friction": 1.2}]})", "feet.json");
  REQUIRE(feet_only.contacts.geometries.size() == 2);
  CHECK(feet_only.contacts.candidates.size() == 2);
  CHECK(feet_only.contacts.geometries[0].friction == 0.8);
  CHECK(feet_only.contacts.geometries[1].friction == 1.2);
}

TEST_CASE("bad contact JSON names the file, the entry and the value, and leaves the model as it was") {
  const Model model = load_urdf_string(kArm, RootJoint::FreeFlyer);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"geometries": [{"name": "s", "link": "nope", "sphere": {"radius": 0.1}}]})", "no such link"},
      {R"({"geometries": [{"name": "s", "link": "tip", "sphere": {"radius": -0.1}}]})", "radius must be finite, > 0 and at most 1000 m"},
      {R"({"geometries": [{"name": "s", "link": "tip", "box": {"size": [0.1, 0, 0.1]}}]})", "every box size"},
      {R"({"geometries": [{"name": "s", "link": "tip", "sphere": {"radius": 0.1}, "friction": -1}]})", "friction coefficient"},
      {R"({"geometries": [{"name": "s", "link": "tip", "sphere": {"radius": 0.1}, "margin": -1}]})", "margin"},
      {R"({"geometries": [{"name": "s", "link": "tip", "sphere": {"radius": 0.1}, "box": {"size": [1, 1, 1]}}]})", "exactly one of"},
      {R"({"geometries": [{"name": "s", "link": "tip", "sphere": {"radius": 0.1}}, {"name": "s", "link": "upper", "point": {}}]})",
       "a geometry of that name exists"},
      {R"({"ground": {"normal": [0, 0, 0]}})", "non-zero finite vector"},
      {R"({"ground": {"height": 0}, "grund": 1})", "unknown key 'grund'"},
      {R"({"geometries": [{"name": "s", "link": "tip", "sphere": {"radius": 0.1}, "frction": 0.5}]})", "unknown key 'frction'"},
      {R"({"friction": 0.5, "geometries": [{"name": "s", "link": "tip", "sphere": {"radius": 1e999}}]})", "malformed JSON"},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    Model copy = model;
    CHECK_THROWS_WITH_AS(add_contacts_from_json(copy, text, "bad.json"), doctest::Contains(expected.c_str()), Error);
    CHECK(copy.contacts.geometries.size() == model.contacts.geometries.size());
    CHECK(copy.contacts.ground.present == model.contacts.ground.present);
  }
  Model copy = model;
  CHECK_THROWS_WITH_AS(add_contacts_from_json(copy, R"({"geometries": [{"name": "s", "link": "nope", "sphere": {"radius": 0.1}}]})",
                                              "bad.json"),
                       doctest::Contains("bad.json: collision geometry 's' on link 'nope'"), Error);
}

TEST_CASE("locking joints keeps the geometry where it was on its links") {
  const Model model = load_urdf_file(kRobots + "/a1.urdf", RootJoint::FreeFlyer);
  const Model locked = lock_joints(model, {{"FR_calf_joint", -1.5}});
  REQUIRE(locked.contacts.candidates.size() == model.contacts.candidates.size());
  Data<double> full_data(model), locked_data(locked);
  Eigen::VectorXd q_full = neutral_configuration<double>(model);
  q_full[model.bodies[model.joint_index("FR_calf_joint")].idx_q] = -1.5;
  Eigen::VectorXd q_locked = neutral_configuration<double>(locked);
  const auto foot_full = candidates_of(model, "FR_foot/collision0");
  const auto foot_locked = candidates_of(locked, "FR_foot/collision0");
  CHECK(locked.bodies[foot_locked[0]->body].name == "FR_thigh");  // the calf is now part of the thigh
  check_close(candidate_in_world(model, full_data, q_full, *foot_full[0]), candidate_in_world(locked, locked_data, q_locked, *foot_locked[0]),
              1e-12);
}

TEST_CASE("meshes whose files are not there (go2.urdf without its package) are skipped and listed, the shipped quadruped has a trunk box and four sphere feet") {
  const Model go2 = load_urdf_file(kRobots + "/go2.urdf", RootJoint::FreeFlyer);
  CHECK(go2.contacts.geometries.empty());
  CHECK_FALSE(go2.contacts.skipped.empty());
  CHECK(go2.contacts.skipped[0].find("mesh") != std::string::npos);
  const Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  CHECK(quadruped.contacts.geometries.size() == 5);
  CHECK(quadruped.contacts.candidates.size() == 12);
  // A foot sphere's centre at a standing pose, against the closed form of the leg: thigh and
  // calf 0.25 m, hip flexion 0.8 and knee -1.6 rad (the calf at -0.8 rad from the vertical).
  Eigen::VectorXd q = neutral_configuration<double>(quadruped);
  q[2] = 0.4;
  for (const char* leg : {"FL", "FR", "HL", "HR"}) {
    q[quadruped.bodies[quadruped.joint_index(std::string(leg) + "_hip_flexion")].idx_q] = 0.8;
    q[quadruped.bodies[quadruped.joint_index(std::string(leg) + "_knee")].idx_q] = -1.6;
  }
  Data<double> data(quadruped);
  const auto foot = candidates_of(quadruped, "FL_FOOT/collision0");
  REQUIRE(foot.size() == 1);
  CHECK(foot[0]->radius == 0.02);
  CHECK(candidate_in_world(quadruped, data, q, *foot[0]).z == doctest::Approx(0.4 - 0.5 * std::cos(0.8)).epsilon(1e-12));
}
