// MJCF loading (topology/mjcf.hpp) checked against MuJoCo itself, on the same file: this
// executable links the `mujoco` wheel's libmujoco and asks it for qacc.
//
// The robots are Unitree's Go2, H1 and G1 (tests/robots/mjcf: the unitree_mujoco files, each
// collision mesh cut down to its convex hull). BATCHDYN_MJCF_ROBOTS set to another folder of the
// same layout (../shared/mjcf: the full files) runs the same checks on it.
#include <mujoco/mujoco.h>

#include <cstdlib>
#include <fstream>

#include "helpers.hpp"

namespace batchdyn::test {
namespace {

std::string mjcf_robot(const std::string& file) {
  const char* dir = std::getenv("BATCHDYN_MJCF_ROBOTS");
  return std::string(dir && *dir ? dir : BATCHDYN_MJCF_ROBOTS_DIR) + "/" + file;
}

// MuJoCo's own model of a file, compiled as batchdyn compiles it (visual geoms discarded).
struct MujocoModel {
  mjSpec* spec = nullptr;
  mjModel* model = nullptr;
  mjData* data = nullptr;
  explicit MujocoModel(const std::string& path_or_xml, bool is_xml = false) {
    char error[1024] = "";
    spec = is_xml ? mj_parseXMLString(path_or_xml.c_str(), nullptr, error, sizeof error)
                  : mj_parseXML(path_or_xml.c_str(), nullptr, error, sizeof error);
    REQUIRE_MESSAGE(spec, error);
    spec->compiler.discardvisual = 1;
    model = mj_compile(spec, nullptr);
    REQUIRE_MESSAGE(model, mjs_getError(spec));
    data = mj_makeData(model);
  }
  MujocoModel(const MujocoModel&) = delete;
  MujocoModel& operator=(const MujocoModel&) = delete;
  ~MujocoModel() {
    mj_deleteData(data);
    mj_deleteModel(model);
    mj_deleteSpec(spec);
  }
};

// A random state in MuJoCo's coordinates: hinge and slide positions within their range (or
// within +-1), unit quaternions, velocities and applied forces of order 1.
struct MujocoState {
  std::vector<double> qpos, qvel, qfrc;
};
MujocoState random_mujoco_state(const mjModel* m, std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  MujocoState s{std::vector<double>(m->qpos0, m->qpos0 + m->nq), std::vector<double>(static_cast<size_t>(m->nv)),
                std::vector<double>(static_cast<size_t>(m->nv))};
  for (int j = 0; j < m->njnt; ++j) {
    double* q = s.qpos.data() + m->jnt_qposadr[j];
    switch (m->jnt_type[j]) {
      case mjJNT_FREE:
        for (int k = 0; k < 3; ++k) q[k] = unit(rng);
        q += 3;
        [[fallthrough]];
      case mjJNT_BALL: {
        double n = 0;
        for (int k = 0; k < 4; ++k) q[k] = unit(rng), n += q[k] * q[k];
        for (int k = 0; k < 4; ++k) q[k] /= std::sqrt(n);
        break;
      }
      default: {
        const double lo = m->jnt_limited[j] ? m->jnt_range[2 * j] : -1.0, hi = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : 1.0;
        q[0] = lo + (hi - lo) * 0.5 * (unit(rng) + 1.0);
      }
    }
  }
  for (int k = 0; k < m->nv; ++k) s.qvel[static_cast<size_t>(k)] = unit(rng), s.qfrc[static_cast<size_t>(k)] = 5.0 * unit(rng);
  return s;
}

// MuJoCo's qacc of the rigid-body dynamics with damping: no contact, limit, friction loss or actuator.
std::vector<double> mujoco_qacc(MujocoModel& mj, const MujocoState& s) {
  mjModel* m = mj.model;
  m->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS | mjDSBL_ACTUATION | mjDSBL_EQUALITY;
  std::copy(s.qpos.begin(), s.qpos.end(), mj.data->qpos);
  std::copy(s.qvel.begin(), s.qvel.end(), mj.data->qvel);
  std::copy(s.qfrc.begin(), s.qfrc.end(), mj.data->qfrc_applied);
  mj_forward(m, mj.data);
  return {mj.data->qacc, mj.data->qacc + m->nv};
}

// A MuJoCo generalised force as batchdyn's tau: a free joint's linear part is a world-frame
// force, ours the same force in the base frame (R^T f, so that tau . v is the same power).
Eigen::VectorXd tau_from_mujoco(const Model& model, const Eigen::VectorXd& q, const std::vector<double>& qfrc) {
  Eigen::VectorXd tau = Eigen::Map<const Eigen::VectorXd>(qfrc.data(), static_cast<Eigen::Index>(qfrc.size()));
  for (const Body& b : model.bodies)
    if (b.nv > 0 && b.joint_type == JointType::FreeFlyer) {
      const Mat3d R = quaternion_rotation(q[b.idx_q + 3], q[b.idx_q + 4], q[b.idx_q + 5], q[b.idx_q + 6]);
      const Vec3d local = R.transpose() * Vec3d{tau[b.idx_v], tau[b.idx_v + 1], tau[b.idx_v + 2]};
      for (int k = 0; k < 3; ++k) tau[b.idx_v + k] = local[k];
    }
  return tau;
}

Eigen::VectorXd as_eigen(const std::vector<double>& x) {
  return Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
}

// The largest relative difference between batchdyn's q̈ (as MuJoCo's qacc) and MuJoCo's over
// `count` random states: |a - b| / max(|b|, 1), per state, in the infinity norm.
double qacc_error(const Model& model, MujocoModel& mj, int count) {
  std::mt19937 rng(7);
  Data<double> data(model);
  double worst = 0;
  for (int n = 0; n < count; ++n) {
    const MujocoState s = random_mujoco_state(mj.model, rng);
    const std::vector<double> q = q_from_mujoco(model, s.qpos), v = v_from_mujoco(model, q, s.qvel);
    // MuJoCo's damping is a passive force -d qvel: batchdyn's reference dynamics take it in tau.
    Eigen::VectorXd tau = tau_from_mujoco(model, as_eigen(q), s.qfrc);
    for (int k = 0; k < model.nv; ++k) tau[k] -= model.damping[static_cast<size_t>(k)] * v[static_cast<size_t>(k)];
    const Eigen::VectorXd qdd = aba(model, data, as_eigen(q), as_eigen(v), tau);
    const std::vector<double> ours = a_to_mujoco(model, q, v, std::vector<double>(qdd.data(), qdd.data() + qdd.size()));
    const std::vector<double> theirs = mujoco_qacc(mj, s);
    const Eigen::VectorXd b = as_eigen(theirs);
    worst = std::max(worst, (as_eigen(ours) - b).lpNorm<Eigen::Infinity>() / std::max(1.0, b.lpNorm<Eigen::Infinity>()));
  }
  return worst;
}

}  // namespace

TEST_CASE("Go2, H1 and G1 from MJCF: forward dynamics equal MuJoCo's qacc to 1e-9 on random states") {
  for (const std::string file : {"unitree_go2/scene.xml", "unitree_h1/scene.xml", "unitree_g1/scene_29dof.xml"}) {
    CAPTURE(file);
    const Model model = load_mjcf_file(mjcf_robot(file));
    MujocoModel mj(mjcf_robot(file));
    CHECK(model.nq == mj.model->nq);
    CHECK(model.nv == mj.model->nv);
    CHECK(qacc_error(model, mj, 20) < 1e-9);
  }
}

TEST_CASE("MJCF joints as MuJoCo moves them: several joints in a body, anchors, ref angles, slides, balls, welded bodies") {
  const std::string xml = R"(
<mujoco model="joints">
  <compiler angle="degree"/>
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <body name="base" pos="0.1 0.2 1" euler="10 20 30">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="3"/>
      <body name="two_joints" pos="0.2 0 0" quat="0.9 0.1 0.3 0.2">
        <joint name="a" type="hinge" axis="0 0 1" pos="0.05 0.02 0" ref="30" armature="0.02" damping="0.3"/>
        <joint name="b" type="hinge" axis="1 1 0" pos="0 0.1 0.03" range="-90 90"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.7"/>
        <body name="slider" pos="0.3 0 0">
          <joint name="s" type="slide" axis="0.3 0.4 1" ref="0.05" damping="0.5"/>
          <geom type="sphere" size="0.05" mass="0.4"/>
          <body name="welded" pos="0 0.1 0" euler="0 45 0">
            <inertial pos="0.01 0.02 0.03" mass="0.25" fullinertia="0.002 0.003 0.004 0.0001 0.0002 0.0003"/>
          </body>
          <body name="ball" pos="0 0 -0.1">
            <joint name="c" type="ball" pos="0 0 0.02" armature="0.01"/>
            <geom type="cylinder" size="0.02 0.1" pos="0 0 -0.1" mass="0.3"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>)";
  const Model model = load_mjcf_string(xml, "joints.xml");
  MujocoModel mj(xml, /*is_xml=*/true);
  CHECK(model.nq == mj.model->nq);
  CHECK(model.nv == mj.model->nv);
  CHECK(model.bodies.size() == 6);  // world, base, a, b, s, c: "welded" merged into the slider's body
  CHECK(model.bodies[static_cast<size_t>(model.joint_index("a"))].name == "two_joints/a");
  CHECK(model.bodies[static_cast<size_t>(model.joint_index("b"))].name == "two_joints");
  CHECK(model.body_index("welded") == model.joint_index("s"));
  CHECK(qacc_error(model, mj, 50) < 1e-9);
}

TEST_CASE("MJCF gravity, time step, actuators, keyframes and sites load as the file gives them") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  CHECK(model.timestep == 0.002);
  CHECK(model.gravity.z == -9.81);
  REQUIRE(model.actuators.size() == 12);
  const Actuator& calf = model.actuators[2];
  CHECK(calf.name == "FR_calf");
  CHECK(calf.kind == ActuatorKind::Motor);
  CHECK(calf.joint == "FR_calf_joint");
  CHECK(calf.dof == model.bodies[static_cast<size_t>(model.joint_index("FR_calf_joint"))].idx_v);
  CHECK(calf.ctrl_lower == -45.43);
  CHECK(calf.ctrl_upper == 45.43);
  REQUIRE(model.keyframes.size() == 1);
  const Keyframe& home = model.keyframes[0];
  CHECK(home.name == "home");
  CHECK(home.q.size() == 19);
  CHECK(home.q[2] == 0.27);  // base height
  CHECK(home.q[6] == 1.0);   // qw last: MuJoCo's "1 0 0 0"
  CHECK(home.q[8] == 0.9);   // FL thigh
  CHECK(home.ctrl.size() == 12);
  CHECK(model.has_frame("imu", FrameKind::Site));
  // The reset state is MuJoCo's qpos0: the base where the file puts it.
  CHECK(model.reference_configuration[2] == 0.445);
  CHECK(model.friction_loss[static_cast<size_t>(model.bodies[static_cast<size_t>(model.joint_index("FL_hip_joint"))].idx_v)] == 0.2);
}

TEST_CASE("MJCF position and velocity actuators keep their gains, gear and ranges") {
  const Model model = load_mjcf_string(R"(
<mujoco>
  <worldbody><body><joint name="j" axis="0 1 0"/><geom size="0.1" mass="1"/></body></worldbody>
  <actuator>
    <position name="p" joint="j" kp="50" kv="2" gear="3" ctrlrange="-1 1" forcerange="-20 20"/>
    <velocity name="v" joint="j" kv="4"/>
    <motor name="m" joint="j"/>
  </actuator>
</mujoco>)");
  REQUIRE(model.actuators.size() == 3);
  const Actuator& p = model.actuators[0];
  CHECK(p.kind == ActuatorKind::Position);
  CHECK(p.gain == 50);
  CHECK(p.bias[1] == -50);
  CHECK(p.bias[2] == -2);
  CHECK(p.gear == 3);
  CHECK(p.ctrl_upper == 1);
  CHECK(p.force_lower == -20);
  CHECK(model.actuators[1].kind == ActuatorKind::Velocity);
  CHECK(model.actuators[1].gain == 4);
  CHECK(model.actuators[2].kind == ActuatorKind::Motor);
  CHECK(std::isinf(model.actuators[2].ctrl_upper));
}

TEST_CASE("MJCF collision geoms: primitives on the robot, the floor plane as the ground, visual geoms dropped") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  CHECK(model.contacts.ground.present);
  CHECK(model.contacts.ground.height == 0.0);
  const int foot = find_collision_geometry(model.contacts, "FL");
  REQUIRE(foot >= 0);
  const CollisionGeometry& g = model.contacts.geometries[static_cast<size_t>(foot)];
  CHECK(g.shape == CollisionShape::Sphere);
  CHECK(g.radius == 0.022);
  CHECK(g.friction == 0.4);
  CHECK(g.link == "FL_calf");
  // condim 1: frictionless (the Go2's leg and body geoms)
  CHECK(model.contacts.geometries[0].friction == 0.0);
  // The world's boxes (stairs) and the robot's self-collision are listed, not dropped silently.
  CHECK(model.contacts.skipped.size() == 9);
}

TEST_CASE("MJCF coordinates convert to and from MuJoCo's: quaternion order and the free joint's velocity frame") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  MujocoModel mj(mjcf_robot("unitree_go2/scene.xml"));
  std::mt19937 rng(3);
  const MujocoState s = random_mujoco_state(mj.model, rng);
  const std::vector<double> q = q_from_mujoco(model, s.qpos);
  CHECK(q[3] == s.qpos[4]);
  CHECK(q[6] == s.qpos[3]);
  CHECK(q_to_mujoco(model, q) == s.qpos);
  const std::vector<double> v = v_from_mujoco(model, q, s.qvel), back = v_to_mujoco(model, q, v);
  for (size_t k = 0; k < back.size(); ++k) CHECK(back[k] == doctest::Approx(s.qvel[k]).epsilon(1e-14));
  // The base's world-frame speed is kept by the rotation.
  CHECK(std::hypot(v[0], v[1], v[2]) == doctest::Approx(std::hypot(s.qvel[0], s.qvel[1], s.qvel[2])).epsilon(1e-14));
  CHECK_ERROR_MENTIONS(q_from_mujoco(model, std::vector<double>(3)), "q_from_mujoco", "expected 19 values, got 3");
}

TEST_CASE("MJCF elements that would change the dynamics are refused, naming the element and its line") {
  CHECK_ERROR_MENTIONS(load_mjcf_string(R"(<mujoco>
  <worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
  <tendon>
    <fixed name="t"><joint joint="j" coef="1"/></fixed>
  </tendon>
</mujoco>)", "tendon.xml"),
                       "tendon.xml", "<tendon name=\"t\">", "line 4", "not supported");
  CHECK_ERROR_MENTIONS(load_mjcf_string(R"(<mujoco>
  <worldbody><body><joint name="j" stiffness="10"/><geom size="0.1"/></body></worldbody>
</mujoco>)", "spring.xml"),
                       "spring.xml", "joint 'j'", "stiffness");
  CHECK_ERROR_MENTIONS(load_mjcf_string(R"(<mujoco>
  <worldbody><body name="a"><joint/><geom size="0.1"/></body><body name="b"><joint/><geom size="0.1"/></body></worldbody>
  <equality><connect body1="a" body2="b" anchor="0 0 0"/></equality>
</mujoco>)", "equality.xml"),
                       "equality.xml", "<equality>", "line 3");
  CHECK_ERROR_MENTIONS(load_mjcf_string(R"(<mujoco>
  <worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
  <actuator><general joint="j" dyntype="filter" dynprm="0.1"/></actuator>
</mujoco>)", "filter.xml"),
                       "filter.xml", "<actuator>", "line 3", "dynamics");
}

TEST_CASE("MuJoCo's compiler errors reach the caller with the file, the element and the line") {
  CHECK_ERROR_MENTIONS(load_mjcf_string("<mujoco>\n<worldbody>\n<body><geom bogus=\"1\"/></body>\n</worldbody>\n</mujoco>", "bad.xml"),
                       "bad.xml", "bogus", "geom", "line 3");
  CHECK_ERROR_MENTIONS(load_mjcf_file("/nonexistent/robot.xml"), "/nonexistent/robot.xml", "cannot open");
  // A mesh file that is missing: MuJoCo names it.
  CHECK_ERROR_MENTIONS(load_mjcf_string(R"(<mujoco><asset><mesh name="m" file="no_such.stl"/></asset>
  <worldbody><body><freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>)", "mesh.xml"),
                       "mesh.xml", "no_such.stl");
}

TEST_CASE("load_robot_file recognises MJCF by its <mujoco> element, whatever the extension") {
  CHECK(is_mjcf_file(mjcf_robot("unitree_go2/go2.xml")));
  CHECK_FALSE(is_mjcf_file(model_path("humanoid.urdf")));
  CHECK_FALSE(is_mjcf_file("/nonexistent.xml"));
  CHECK(load_robot_file(mjcf_robot("unitree_go2/go2.xml")).nv == 18);
  CHECK_ERROR_MENTIONS(load_robot_file(mjcf_robot("unitree_go2/go2.xml"), RootJoint::FreeFlyer), "sets its own root");
}

}  // namespace batchdyn::test
