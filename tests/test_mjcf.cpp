// MJCF loading (topology/mjcf.hpp) checked against MuJoCo itself, on the same file: this
// executable links the `mujoco` wheel's libmujoco and asks it for qacc.
//
// The robots are Unitree's Go2, H1 and G1 (tests/robots/mjcf: the unitree_mujoco files, each
// collision mesh cut down to its convex hull). BATCHDYN_MJCF_ROBOTS set to another folder of the
// same layout (../shared/mjcf: the full files) runs the same checks on it.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include "batch/batched_eval.hpp"
#include "kernels/contact/cylinder_contact.hpp"
#include "kernels/contact/frictional_contact.hpp"
#include "helpers.hpp"
#include "mujoco_model.hpp"
#include "topology/contact_plan.hpp"

namespace batchdyn::test {
namespace {

std::string mjcf_robot(const std::string& file) {
  const char* dir = std::getenv("BATCHDYN_MJCF_ROBOTS");
  return std::string(dir && *dir ? dir : BATCHDYN_MJCF_ROBOTS_DIR) + "/" + file;
}

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

// |a - b| / max(|b|, 1) in the infinity norm: how far batchdyn's qacc is from MuJoCo's.
double relative_difference(const std::vector<double>& ours, const Eigen::VectorXd& theirs) {
  return (as_eigen(ours) - theirs).lpNorm<Eigen::Infinity>() / std::max(1.0, theirs.lpNorm<Eigen::Infinity>());
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
    worst = std::max(worst, relative_difference(ours, as_eigen(theirs)));
  }
  return worst;
}

// The largest relative difference between batchdyn's q̈ and MuJoCo's qacc with the actuators
// driven by random controls (often outside their ranges) on `count` random states, the engine
// in ControlMode::Actuators: MuJoCo's contact, limits and friction loss off as in qacc_error,
// actuation on.
double actuated_qacc_error(const Model& model, MujocoModel& mj, int count) {
  mjModel* m = mj.model;
  m->opt.disableflags = (m->opt.disableflags | mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS | mjDSBL_EQUALITY) & ~mjDSBL_ACTUATION;
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 2.0);
  Batch<double> batch(model, count, 1);
  batch.set_control_mode(ControlMode::Actuators);
  batch.set_friction_loss(false);  // MuJoCo's is off too: its frictionloss is a constraint row (tested on its own)
  REQUIRE(batch.num_actuators() == m->nu);
  std::vector<MujocoState> states;
  for (int e = 0; e < count; ++e) {
    MujocoState s = random_mujoco_state(m, rng);
    std::fill(s.qfrc.begin(), s.qfrc.end(), 0.0);
    const std::vector<double> q = q_from_mujoco(model, s.qpos), v = v_from_mujoco(model, q, s.qvel);
    std::copy(q.begin(), q.end(), batch.q() + e * model.nq), std::copy(v.begin(), v.end(), batch.v() + e * model.nv);
    std::fill_n(batch.tau() + e * model.nv, model.nv, 0.0);
    for (int a = 0; a < m->nu; ++a) batch.ctrl()[e * m->nu + a] = normal(rng);
    states.push_back(std::move(s));
  }
  batch.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  double worst = 0;
  for (int e = 0; e < count; ++e) {
    const MujocoState& s = states[static_cast<size_t>(e)];
    std::copy(s.qpos.begin(), s.qpos.end(), mj.data->qpos), std::copy(s.qvel.begin(), s.qvel.end(), mj.data->qvel);
    std::fill_n(mj.data->qfrc_applied, m->nv, 0.0);
    std::copy_n(batch.ctrl() + e * m->nu, m->nu, mj.data->ctrl);
    mj_forward(m, mj.data);
    const std::vector<double> q(batch.q() + e * model.nq, batch.q() + (e + 1) * model.nq), v(batch.v() + e * model.nv, batch.v() + (e + 1) * model.nv);
    const std::vector<double> ours = a_to_mujoco(model, q, v, std::vector<double>(batch.qdd() + e * model.nv, batch.qdd() + (e + 1) * model.nv));
    worst = std::max(worst, relative_difference(ours, Eigen::Map<const Eigen::VectorXd>(mj.data->qacc, m->nv)));
  }
  return worst;
}

// Standing under a joint PD controller, written the same way for both engines: each 1-dof
// joint's torque kp (q* - q) - kd qd, clamped to its motor's control range (the unitree files'
// actuators are torque motors, ctrl = the torque).
struct Standing {
  std::vector<double> q_start;  // MuJoCo's qpos
  std::vector<double> target;   // per 1-dof joint of the model (batchdyn's order = MuJoCo's), rad
  double kp_scale = 0, kd_ratio = 0;  // kp = kp_scale * the motor's torque range (N m / rad per N m), kd = kd_ratio kp
  double seconds = 3.0;
};

struct StandingResult {
  double base_height = 0;    // the free joint's z at the end (m)
  double speed = 0;          // largest |qvel| at the end
  double normal_force = 0;   // sum of the contact normal forces at the end (N)
  double deepest = 0;        // most negative gap over the last second (m; batchdyn only)
  int reports = 0;           // steps that reported something (a solver at its iteration cap)
  std::vector<double> qpos;  // the state at the end, in MuJoCo's coordinates
};

// The PD gain of a dof: proportional to its motor's torque range (a motor without one: 100 N m).
double pd_gain(const std::vector<double>& limit, int dof, double kp_scale) {
  const double range = limit[static_cast<size_t>(dof)];
  return kp_scale * (std::isfinite(range) ? range : 100.0);
}

StandingResult stand_batchdyn(const Model& model, const Standing& how) {
  Batch<double> batch(model, 1, 1);
  const std::vector<double> q = q_from_mujoco(model, how.q_start);
  std::copy(q.begin(), q.end(), batch.q());
  std::fill(batch.v(), batch.v() + model.nv, 0.0);
  std::fill(batch.tau(), batch.tau() + model.nv, 0.0);
  const std::vector<double> limit = motor_torque_limits(model.effort_limit, model.actuators);
  std::vector<double> kp(static_cast<size_t>(model.nv), 0.0), kd = kp;
  int joint = 0;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[static_cast<size_t>(i)];
    if (!is_single_dof(b.joint_type)) continue;
    const size_t k = static_cast<size_t>(b.idx_v);
    kp[k] = pd_gain(limit, b.idx_v, how.kp_scale), kd[k] = how.kd_ratio * kp[k];
    batch.target()[k] = how.target[static_cast<size_t>(joint++)];
  }
  batch.set_control_mode(ControlMode::PositionPD);
  batch.set_pd_gains(kp, kd);
  batch.set_effort_limits(limit);
  StandingResult out;
  const int steps = static_cast<int>(std::lround(how.seconds / model.timestep));
  const int C = batch.contact_candidates();
  for (int n = 0; n < steps; ++n) {
    batch.step(model.timestep);
    if (batch.status()[0] != EnvStatus::Ok) ++out.reports;
    REQUIRE((batch.status()[0] == EnvStatus::Ok || is_report(batch.status()[0])));
    if (n >= steps / 2)
      for (int c = 0; c < C; ++c) out.deepest = std::min(out.deepest, batch.contact_gaps()[c]);
  }
  out.base_height = batch.q()[2];
  out.qpos = q_to_mujoco(model, std::vector<double>(batch.q(), batch.q() + model.nq));
  for (int k = 0; k < model.nv; ++k) out.speed = std::max(out.speed, std::abs(batch.v()[k]));
  for (int c = 0; c < C; ++c) out.normal_force += batch.contact_forces()[3 * c + 2];
  return out;
}

StandingResult stand_mujoco(MujocoModel& mj, const Model& model, const Standing& how) {
  mjModel* m = mj.model;
  mjData* d = mj.data;
  mj_resetData(m, d);
  std::copy(how.q_start.begin(), how.q_start.end(), d->qpos);
  const std::vector<double> limit = motor_torque_limits(model.effort_limit, model.actuators);
  const int steps = static_cast<int>(std::lround(how.seconds / m->opt.timestep));
  for (int n = 0; n < steps; ++n) {
    for (int a = 0; a < m->nu; ++a) {
      const int j = m->actuator_trnid[2 * a], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
      const double kp = pd_gain(limit, da, how.kp_scale), kd = how.kd_ratio * kp;
      // the joint's index among the 1-dof joints: MuJoCo's joint j less the free joint
      d->ctrl[a] = kp * (how.target[static_cast<size_t>(j - 1)] - d->qpos[qa]) - kd * d->qvel[da];
    }
    mj_step(m, d);
  }
  StandingResult out;
  out.base_height = d->qpos[2];
  out.qpos.assign(d->qpos, d->qpos + m->nq);
  for (int k = 0; k < m->nv; ++k) out.speed = std::max(out.speed, std::abs(d->qvel[k]));
  for (int c = 0; c < d->ncon; ++c) {
    double wrench[6];
    mj_contactForce(m, d, c, wrench);
    out.normal_force += wrench[0] * d->contact[c].frame[2];  // the normal's z component: the ground's up
  }
  return out;
}

double total_mass(const Model& model) {
  double mass = 0;
  for (const Body& b : model.bodies) mass += b.inertia.mass;
  return mass;
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

TEST_CASE("ctrl drives the MJCF actuators as MuJoCo does: q̈ equals qacc with actuation on, ranges and actuatorfrcrange applied") {
  const std::string xml = R"(
<mujoco>
  <worldbody>
    <body name="a">
      <joint name="h1" axis="0 1 0" actuatorfrcrange="-6 6"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/>
      <body name="b" pos="0.3 0 0">
        <joint name="h2" axis="1 0 0" damping="0.3"/>
        <geom type="box" size="0.1 0.05 0.02" mass="0.5"/>
        <body name="c" pos="0 0 -0.2">
          <joint name="s" type="slide" axis="0 0 1" armature="0.01"/>
          <geom size="0.05" mass="0.3"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m" joint="h1" gear="2" ctrlrange="-1 1.5"/>
    <position name="p" joint="h2" kp="40" kv="3" gear="1.5" ctrlrange="-0.5 0.5" forcerange="-10 12"/>
    <velocity name="v" joint="s" kv="5" ctrlrange="-2 2"/>
    <general name="g" joint="h1" gainprm="3" biastype="affine" biasprm="0.4 -2 -0.3" gear="-1"/>
  </actuator>
</mujoco>)";
  const Model model = load_mjcf_string(xml);
  MujocoModel mj(xml, /*is_xml=*/true);
  CHECK(actuated_qacc_error(model, mj, 40) < 1e-9);
}

TEST_CASE("ctrl drives Go2's motors as MuJoCo does on random states (the control range clamps the torque)") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  MujocoModel mj(mjcf_robot("unitree_go2/scene.xml"));
  CHECK(actuated_qacc_error(model, mj, 20) < 1e-9);
}

TEST_CASE("MJCF joint springs pull towards springref as MuJoCo's do: q̈ equals qacc on hinges, unlimited hinges and slides") {
  const std::string xml = R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="a">
      <joint name="h1" axis="0 1 0" stiffness="12" springref="0.5"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/>
      <body name="b" pos="0.3 0 0">
        <joint name="h2" axis="1 0 0" range="-1 1" stiffness="4" springref="-0.2" ref="0.3" damping="0.2"/>
        <geom type="box" size="0.1 0.05 0.02" mass="0.5"/>
        <body name="c" pos="0 0 -0.2">
          <joint name="s" type="slide" axis="0 0 1" range="-0.5 0.5" stiffness="300" springref="0.05"/>
          <geom size="0.05" mass="0.3"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="h1" gear="1"/></actuator>
</mujoco>)";
  const Model model = load_mjcf_string(xml);
  CHECK(model.spring_stiffness == std::vector<double>{12, 4, 300});
  CHECK(model.spring_reference == std::vector<double>{0.5, -0.2, 0.05});
  CHECK(model.bodies[1].joint_type == JointType::Continuous);
  MujocoModel mj(xml, /*is_xml=*/true);
  CHECK(actuated_qacc_error(model, mj, 40) < 1e-9);
}

TEST_CASE("eval with passive forces: the reference and the batched engine apply the same damping, friction loss and springs") {
  const Model model = load_mjcf_string(R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body><joint axis="0 1 0" stiffness="12" springref="0.5" damping="0.3" frictionloss="0.4"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/>
      <body pos="0.3 0 0"><joint type="slide" axis="0 0 1" stiffness="300" springref="0.05" frictionloss="2"/><geom size="0.05" mass="0.3"/></body>
    </body>
  </worldbody>
</mujoco>)");
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  EnvironmentStates states;
  for (int e = 0; e < 20; ++e) {  // speeds on both sides of the friction loss's 0.01
    const double scale = e % 2 ? 1.0 : 0.005;
    states.q.push_back(Eigen::Vector2d(unit(rng), 0.2 * unit(rng)));
    states.v.push_back(Eigen::Vector2d(scale * unit(rng), scale * unit(rng)));
    states.tau.push_back(Eigen::Vector2d(unit(rng), unit(rng)));
  }
  const std::vector<EnvironmentResult> scalar = evaluate_reference(model, Algorithm::Aba, states, {}, true);
  const std::vector<EnvironmentResult> batched = evaluate_batched(model, Algorithm::Aba, states, {}, true);
  const std::vector<EnvironmentResult> rigid = evaluate_reference(model, Algorithm::Aba, states, {}, false);
  for (size_t e = 0; e < states.q.size(); ++e) {
    CAPTURE(e);
    REQUIRE(scalar[e].ok());
    REQUIRE(batched[e].ok());
    CHECK((scalar[e].qdd - batched[e].qdd).lpNorm<Eigen::Infinity>() < 1e-12 * std::max(1.0, scalar[e].qdd.lpNorm<Eigen::Infinity>()));
    CHECK((scalar[e].qdd - rigid[e].qdd).lpNorm<Eigen::Infinity>() > 1e-3);  // off, Pinocchio's dynamics: tau alone
  }
}

TEST_CASE("A joint spring oscillates with the period 2 pi sqrt(I / k) and is off with the passive forces") {
  // A wheel on a vertical axis: I = 0.1 kg m^2, k = 4 N m/rad, released 0.3 rad from springref 0.1.
  const Model model = load_mjcf_string(R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body><joint axis="0 0 1" range="-3 3" stiffness="4" springref="0.1"/><inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>
  </worldbody>
</mujoco>)");
  const double period = 2 * 3.14159265358979323846 * std::sqrt(0.1 / 4.0), h = period / 4000;
  Batch<double> batch(model, 2, 1);
  batch.set_integrator(Integrator::RungeKutta4);
  for (int e = 0; e < 2; ++e) batch.q()[e] = 0.4, batch.v()[e] = 0.0, batch.tau()[e] = 0.0;
  for (int n = 0; n < 1000; ++n) batch.step(h);  // a quarter period: at springref, at the top speed 0.3 sqrt(k / I)
  CHECK(batch.q()[0] == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(batch.v()[0] == doctest::Approx(-0.3 * std::sqrt(4.0 / 0.1)).epsilon(1e-6));
  for (int n = 0; n < 3000; ++n) batch.step(h);  // the rest of the period: back where it started
  CHECK(batch.q()[0] == doctest::Approx(0.4).epsilon(1e-6));
  batch.set_passive_forces(false);
  batch.v()[0] = 0.0;
  batch.step(h);
  CHECK(batch.v()[0] == 0.0);
}

// The largest difference between batchdyn's sensordata and MuJoCo's (matched by name) over
// `count` random states after forward dynamics (contacts, limits and friction loss off in both),
// the actuators driven by the same random ctrl. An actuated joint, and one a jointactuatorfrc
// reads, gets no applied torque: its torque is its actuators' alone, what jointactuatorfrc reads
// in both engines (batchdyn's tau would join it as a feed-forward; MuJoCo keeps qfrc_applied
// apart).
double sensor_error(const Model& model, MujocoModel& mj, int count) {
  mjModel* m = mj.model;
  m->opt.disableflags = (m->opt.disableflags | mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS) & ~mjDSBL_ACTUATION;
  std::mt19937 rng(13);
  std::normal_distribution<double> normal(0.0, 2.0);
  Batch<double> batch(model, count, 1);
  batch.set_friction_loss(false);
  if (m->nu > 0) batch.set_control_mode(ControlMode::Actuators);
  std::vector<MujocoState> states;
  for (int e = 0; e < count; ++e) {
    MujocoState s = random_mujoco_state(m, rng);
    for (int a = 0; a < m->nu; ++a) {
      s.qfrc[static_cast<size_t>(m->jnt_dofadr[m->actuator_trnid[2 * a]])] = 0.0;
      batch.ctrl()[e * m->nu + a] = normal(rng);
    }
    for (const Sensor& sensor : model.sensors)
      if (sensor.kind == SensorKind::JointActuatorForce)
        s.qfrc[static_cast<size_t>(m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, sensor.object.c_str())])] = 0.0;
    const std::vector<double> q = q_from_mujoco(model, s.qpos), v = v_from_mujoco(model, q, s.qvel);
    std::copy(q.begin(), q.end(), batch.q() + e * model.nq), std::copy(v.begin(), v.end(), batch.v() + e * model.nv);
    const Eigen::VectorXd tau = tau_from_mujoco(model, as_eigen(q), s.qfrc);
    std::copy(tau.data(), tau.data() + model.nv, batch.tau() + e * model.nv);
    states.push_back(std::move(s));
  }
  batch.forward_dynamics();
  batch.sense();
  REQUIRE(batch.failed_count() == 0);
  double worst = 0;
  for (int e = 0; e < count; ++e) {
    const MujocoState& s = states[static_cast<size_t>(e)];
    std::copy(s.qpos.begin(), s.qpos.end(), mj.data->qpos), std::copy(s.qvel.begin(), s.qvel.end(), mj.data->qvel);
    std::copy(s.qfrc.begin(), s.qfrc.end(), mj.data->qfrc_applied);
    std::copy_n(batch.ctrl() + e * m->nu, m->nu, mj.data->ctrl);
    mj_forward(m, mj.data);
    for (const Sensor& sensor : model.sensors) {
      const int i = mj_name2id(m, mjOBJ_SENSOR, sensor.name.c_str());
      REQUIRE(i >= 0);
      const double* theirs = mj.data->sensordata + m->sensor_adr[i];
      const double* ours = batch.sensordata() + e * batch.sensordata_size() + sensor.address;
      // A quaternion and its negative are the same rotation: ours has w >= 0.
      const double sign = sensor.kind == SensorKind::FrameQuat && theirs[0] < 0 ? -1.0 : 1.0;
      for (int j = 0; j < sensor_dimension(sensor.kind); ++j) worst = std::max(worst, std::abs(ours[j] - sign * theirs[j]));
    }
  }
  return worst;
}

TEST_CASE("MJCF sensors read what MuJoCo's read: joints, frames, gyro, velocimeter, accelerometer and actuator torques, with cutoffs") {
  const std::string xml = R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="h1" axis="0 1 0"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/>
      <site name="tip" pos="0.3 0.02 0" euler="0.3 -0.2 1.1"/>
      <body name="b" pos="0.3 0 0" quat="0.9 0.1 0.3 0.2">
        <joint name="s" type="slide" axis="0 0.6 0.8" damping="0.2"/>
        <geom type="box" size="0.1 0.05 0.02" mass="0.5"/>
        <site name="imu" pos="0.05 -0.01 0.02" euler="0.5 0.1 -0.4"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="h1" gear="2" ctrlrange="-1.5 1.5"/></actuator>
  <sensor>
    <jointpos name="h1_q" joint="h1"/> <jointvel name="s_v" joint="s"/>
    <framepos name="tip_p" objtype="site" objname="tip"/> <framequat name="tip_r" objtype="site" objname="tip"/>
    <framelinvel name="imu_v" objtype="site" objname="imu"/> <frameangvel name="imu_w" objtype="site" objname="imu"/>
    <framepos name="b_p" objtype="xbody" objname="b"/>
    <gyro name="gyro" site="imu"/> <velocimeter name="vel" site="imu"/> <accelerometer name="acc" site="imu"/>
    <accelerometer name="acc_cut" site="tip" cutoff="3"/>
    <jointactuatorfrc name="h1_f" joint="h1"/> <jointactuatorfrc name="s_f" joint="s"/>
  </sensor>
</mujoco>)";
  const Model model = load_mjcf_string(xml);
  REQUIRE(model.sensors.size() == 13);
  CHECK(model.sensors.back().kind == SensorKind::JointActuatorForce);
  CHECK(model.sensors.back().address == 1 + 1 + 3 + 4 + 3 + 3 + 3 + 3 + 3 + 3 + 3 + 1);
  CHECK(std::none_of(model.load_notes.begin(), model.load_notes.end(), [](const std::string& note) { return note.find("sensor") != std::string::npos; }));
  MujocoModel mj(xml, /*is_xml=*/true);
  CHECK(sensor_error(model, mj, 30) < 1e-12);
}

TEST_CASE("Go2's IMU and joint sensors read what MuJoCo's read on random states, its motors driven") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  CHECK(model.sensors.size() == 41);  // 12 jointpos, 12 jointvel, 12 jointactuatorfrc, imu quat, gyro, acc, frame pos and linvel
  MujocoModel mj(mjcf_robot("unitree_go2/scene.xml"));
  CHECK(sensor_error(model, mj, 20) < 1e-12);
}

TEST_CASE("An accelerometer at rest reads -g, in float and double, on lanes and on one lane") {
  const Model model = load_mjcf_string(R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody><body><joint type="slide" axis="1 0 0"/><geom size="0.1" mass="1"/><site name="s" euler="1.5707963267948966 0 0"/></body></worldbody>
  <sensor><accelerometer site="s"/></sensor>
</mujoco>)");
  Batch<double> lanes(model, 9);
  Batch<float> floats(model, 9);
  ScalarBatch<double> one(model, 9, 1);
  lanes.forward_dynamics(), lanes.sense(), one.forward_dynamics(), one.sense();
  floats.forward_dynamics(), floats.sense();
  // The site's y axis is the world's z: gravity's reaction reads +9.81 along y.
  for (int e = 0; e < 9; ++e) {
    CHECK(lanes.sensordata()[3 * e + 1] == doctest::Approx(9.81).epsilon(1e-12));
    CHECK(std::abs(lanes.sensordata()[3 * e + 2]) < 1e-12);
    CHECK(floats.sensordata()[3 * e + 1] == doctest::Approx(9.81).epsilon(1e-6));
    for (int j = 0; j < 3; ++j) CHECK(std::abs(lanes.sensordata()[3 * e + j] - one.sensordata()[3 * e + j]) < 1e-13);
  }
  CHECK_ERROR_MENTIONS(Batch<double>(load_mjcf_string("<mujoco><worldbody><body><joint/><geom size=\"0.1\"/></body></worldbody></mujoco>"), 2).sense(),
                       "no sensors");
}

TEST_CASE("MJCF connect and weld become loop constraints: q̈ satisfies MuJoCo's equality rows, closed at qpos0") {
  // A four-bar (crank a, coupler b, rocker c, b's tip connected to c's), a free body d welded to
  // the crank, and a pendulum e whose tip site is connected to a site on the world. The sharp
  // check: batchdyn's q̈ satisfies MuJoCo's equality rows, efc_J q̈ = 0 (at rest), so both
  // constrain the same motion. MuJoCo's equalities are soft: solimp is at its stiffest (MuJoCo
  // clamps it to 0.9999), yet its weld's rotation rows give way (efc_J q̈ reaches 0.15), so q̈
  // agrees to 20 % only.
  const std::string xml = R"(
<mujoco>
  <compiler angle="radian"/>
  <option><flag contact="disable"/></option>
  <default><equality solimp="0.99999 0.99999 0.001"/></default>
  <worldbody>
    <site name="pin" pos="1 0 0.3"/>
    <body name="a"><joint name="crank" axis="0 1 0"/><geom type="capsule" size="0.02" fromto="0 0 0 0 0 0.2" mass="1"/>
      <body name="b" pos="0 0 0.2"><joint axis="0 1 0"/><geom type="capsule" size="0.02" fromto="0 0 0 0.4 0 0" mass="0.5"/></body>
    </body>
    <body name="c" pos="0.4 0 0"><joint axis="0 1 0"/><geom type="capsule" size="0.02" fromto="0 0 0 0 0 0.2" mass="0.7"/></body>
    <body name="d" pos="0.1 0.1 0.3" euler="0.3 0.2 0.1"><freejoint/><geom type="box" size="0.1 0.08 0.06" mass="2"/></body>
    <body name="e" pos="1 0 0"><joint axis="1 0 0"/><geom type="capsule" size="0.02" fromto="0 0 0 0 0 0.3" mass="0.2"/>
      <site name="tip" pos="0 0 0.3"/></body>
  </worldbody>
  <equality>
    <connect name="close" body1="b" body2="c" anchor="0.4 0 0"/>
    <weld name="carry" body1="d" body2="a" anchor="0.02 0 0.1"/>
    <connect name="pin" site1="tip" site2="pin"/>
  </equality>
</mujoco>)";
  const Model model = load_mjcf_string(xml);
  REQUIRE(model.constraints.size() == 3);
  CHECK(model.constraints[0].type == ConstraintType::Connect);
  CHECK(model.constraints[1].type == ConstraintType::Weld);
  CHECK(model.constraints[1].name == "carry");
  MujocoModel mj(xml, /*is_xml=*/true);
  mj.model->opt.jacobian = mjJAC_DENSE;
  std::mt19937 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 8;
  Batch<double> batch(model, n, 1);
  std::vector<std::vector<double>> forces;
  for (int e = 0; e < n; ++e) {  // at qpos0, where MuJoCo's compiler closed the loops, at rest, random joint forces
    std::vector<double> qfrc(static_cast<size_t>(mj.model->nv));
    for (double& f : qfrc) f = normal(rng);
    const std::vector<double> q = q_from_mujoco(model, std::vector<double>(mj.model->qpos0, mj.model->qpos0 + mj.model->nq));
    const Eigen::VectorXd tau = tau_from_mujoco(model, as_eigen(q), qfrc);
    std::copy(q.begin(), q.end(), batch.q() + e * model.nq);
    std::fill_n(batch.v() + e * model.nv, model.nv, 0.0);
    std::copy(tau.data(), tau.data() + model.nv, batch.tau() + e * model.nv);
    forces.push_back(std::move(qfrc));
  }
  batch.forward_dynamics();
  REQUIRE(batch.failed_count() == 0);
  for (int e = 0; e < n; ++e) {
    CAPTURE(e);
    mj_resetData(mj.model, mj.data);
    std::copy(forces[static_cast<size_t>(e)].begin(), forces[static_cast<size_t>(e)].end(), mj.data->qfrc_applied);
    mj_forward(mj.model, mj.data);
    const std::vector<double> q(batch.q() + e * model.nq, batch.q() + (e + 1) * model.nq), v(static_cast<size_t>(model.nv), 0.0);
    const std::vector<double> ours = a_to_mujoco(model, q, v, std::vector<double>(batch.qdd() + e * model.nv, batch.qdd() + (e + 1) * model.nv));
    REQUIRE(mj.data->nefc == 3 + 6 + 3);
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> J(mj.data->efc_J, mj.data->nefc, mj.model->nv);
    CHECK(Eigen::Map<const Eigen::VectorXd>(mj.data->efc_pos, mj.data->nefc).lpNorm<Eigen::Infinity>() < 1e-12);  // closed at qpos0
    CHECK((J * as_eigen(ours)).lpNorm<Eigen::Infinity>() < 1e-9 * std::max(1.0, as_eigen(ours).lpNorm<Eigen::Infinity>()));
    CHECK(relative_difference(ours, Eigen::Map<const Eigen::VectorXd>(mj.data->qacc, mj.model->nv)) < 0.2);
    CHECK(std::abs(ours.back()) < 1e-9);  // the pinned pendulum does not move
  }
}

TEST_CASE("MJCF frictionloss: a joint pushed below F stays put, above F it accelerates at (tau - F) / I, and it stops, as in MuJoCo") {
  // A wheel on a vertical axis (gravity does no work): I = 0.1 kg m^2, F = 0.5 N m.
  const std::string xml = R"(
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body><joint name="wheel" axis="0 0 1" frictionloss="0.5"/><inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>
  </worldbody>
</mujoco>)";
  const Model model = load_mjcf_string(xml);
  REQUIRE(model.friction_loss[0] == 0.5);
  MujocoModel mj(xml, /*is_xml=*/true);
  const double I = 0.1, F = 0.5;
  struct Case {
    double tau, v0, seconds;
  };
  // held (0.3 < F), driven (1.5 > F), coasting to a stop from 2 rad/s (at 2 I / F = 0.4 s)
  const Case cases[] = {{0.3, 0.0, 1.0}, {1.5, 0.0, 1.0}, {0.0, 2.0, 1.0}};
  Batch<double> batch(model, 3, 1);
  for (int e = 0; e < 3; ++e) batch.q()[e] = 0.0, batch.v()[e] = cases[e].v0, batch.tau()[e] = cases[e].tau;
  for (int n = 0; n < 500; ++n) batch.step(0.002);
  for (int e = 0; e < 3; ++e) {
    CAPTURE(e);
    mj_resetData(mj.model, mj.data);
    mj.data->qvel[0] = cases[e].v0;
    for (int n = 0; n < 500; ++n) mj.data->qfrc_applied[0] = cases[e].tau, mj_step(mj.model, mj.data);
    const double ours = batch.v()[e], theirs = mj.data->qvel[0];
    if (e == 1) {
      const double exact = (cases[e].tau - F) / I * cases[e].seconds;  // 10 rad/s
      CHECK(ours == doctest::Approx(exact).epsilon(0.01));
      CHECK(ours == doctest::Approx(theirs).epsilon(0.02));
    } else {  // at rest, within the regularisation's creep (v_F x torque / F) and MuJoCo's
      CHECK(std::abs(ours) <= kFrictionLossVelocity);
      CHECK(std::abs(theirs) <= kFrictionLossVelocity);
    }
  }
  CHECK(batch.q()[2] == doctest::Approx(2.0 * 2.0 / (2.0 * F / I)).epsilon(0.02));  // v0^2 / (2 F / I): where it stopped
  batch.set_friction_loss(false);  // switched off: the driven wheel accelerates at tau / I
  batch.v()[1] = 0.0;
  batch.step(0.002);
  CHECK(batch.v()[1] == doctest::Approx(1.5 / I * 0.002).epsilon(1e-9));
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
  // The world's 8 boxes (stairs) are obstacles, each paired with every robot geom; the robot's
  // self-collision is off by default, and counted, not dropped silently.
  int on_robot = 0;
  for (const CollisionGeometry& geometry : model.contacts.geometries) on_robot += geometry.body != 0;
  CHECK(model.contacts.pairs.size() == static_cast<size_t>(8 * on_robot));
  REQUIRE(model.contacts.skipped.size() == 1);
  CHECK(model.contacts.skipped[0].rfind("210 pairs of robot geoms", 0) == 0);
  CHECK(model.contacts.skipped[0].find("self_collision=True") != std::string::npos);
}

namespace {
// Whether Go2's pair `pair` joins the geoms of two bodies named `body1` and `body2`, either way.
bool pair_between(const Model& model, const ContactPair& pair, const std::string& body1, const std::string& body2) {
  const std::string& a = model.contacts.geometries[static_cast<size_t>(pair.geometry1)].link;
  const std::string& b = model.contacts.geometries[static_cast<size_t>(pair.geometry2)].link;
  return (a == body1 && b == body2) || (a == body2 && b == body1);
}
int pairs_between(const Model& model, const std::string& body1, const std::string& body2) {
  int count = 0;
  for (const ContactPair& pair : model.contacts.pairs) count += pair_between(model, pair, body1, body2);
  return count;
}
LoadOptions with_self_collision() {
  LoadOptions options;
  options.self_collision = true;
  return options;
}
}  // namespace

TEST_CASE("MJCF self-collision, asked for: robot geoms pair as MuJoCo's filter lets them meet, not a body with its parent") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"), with_self_collision());
  CHECK(model.contacts.skipped.empty());
  CHECK(model.contacts.pairs.size() == 8 * 23 + 210);  // the stairs' pairs (23 robot geoms), and 210 of its own
  CHECK(pairs_between(model, "FR_thigh", "RR_thigh") == 1);   // a box each
  CHECK(pairs_between(model, "FL_calf", "RL_calf") == 9);     // two cylinders and the foot's sphere each
  CHECK(pairs_between(model, "base_link", "FR_thigh") == 3);  // a grandparent: base box, cylinder, sphere
  CHECK(pairs_between(model, "base_link", "FR_hip") == 0);    // parent and child (filterparent)
  CHECK(pairs_between(model, "FR_thigh", "FR_calf") == 0);
  // <exclude> and filterparent="disable" as in MuJoCo.
  const std::string two_links = R"(<mujoco>%s
  <worldbody><geom type="plane" size="0 0 1"/>
    <body name="a" pos="0 0 1"><freejoint/><geom name="a" type="sphere" size=".1"/>
      <body name="b"><joint type="hinge"/><geom name="b" type="sphere" size=".1" pos=".3 0 0"/>
        <body name="c"><joint type="hinge"/><geom name="c" type="sphere" size=".1" pos=".6 0 0"/></body></body></body>
  </worldbody>%s</mujoco>)";
  const auto load = [&](const char* option, const char* contact) {
    std::string xml = two_links;
    xml.replace(xml.find("%s"), 2, option);
    xml.replace(xml.find("%s"), 2, contact);
    return load_mjcf_string(xml, "<mjcf string>", with_self_collision());
  };
  const Model plain = load("<option/>", "");
  CHECK(pairs_between(plain, "a", "c") == 1);
  CHECK(pairs_between(plain, "a", "b") + pairs_between(plain, "b", "c") == 0);
  const Model excluded = load("<option/>", R"(<contact><exclude body1="a" body2="c"/></contact>)");
  CHECK(excluded.contacts.pairs.empty());
  const Model unfiltered = load(R"(<option><flag filterparent="disable"/></option>)", "");
  CHECK(pairs_between(unfiltered, "a", "b") + pairs_between(unfiltered, "b", "c") + pairs_between(unfiltered, "a", "c") == 3);
}

TEST_CASE("Go2 afloat, driven to cross its front legs, stops them where they meet, at MuJoCo's hip angles") {
  // Without gravity, 1 m up: the front hips' PD targets (+-0.8 rad, inwards) would swing each
  // foot 0.2 m across the body's midline; the legs meet on the way and the PD holds them pressed
  // together.
  const std::string file = mjcf_robot("unitree_go2/scene.xml");
  Model model = load_mjcf_file(file, with_self_collision());
  model.gravity = Vec3d::zero();
  MujocoModel mj(file);
  for (int k = 0; k < 3; ++k) mj.model->opt.gravity[k] = 0.0;
  Standing how;
  how.q_start = q_to_mujoco(model, model.keyframes.at(0).q);
  how.q_start[2] = 1.0;
  how.target.assign(how.q_start.begin() + 7, how.q_start.end());
  how.target[0] = -0.8, how.target[3] = 0.8;  // FR_hip, FL_hip (MuJoCo's order: FR, FL, RR, RL)
  how.kp_scale = 2.0, how.kd_ratio = 0.05, how.seconds = 2.0;
  const StandingResult ours = stand_batchdyn(model, how), theirs = stand_mujoco(mj, model, how);
  const double hip = ours.qpos[7], hip_mujoco = theirs.qpos[7];
  MESSAGE("front hips ", ours.qpos[7], ", ", ours.qpos[10], " rad (MuJoCo ", theirs.qpos[7], ", ", theirs.qpos[10], "), deepest gap ",
          ours.deepest, " m");
  REQUIRE(hip_mujoco > -0.7);  // MuJoCo's calves stop each other short of the targets
  // MuJoCo's soft contact lets the calves 2.3 mm into each other: 4 mrad at the hips.
  CHECK(std::abs(hip - hip_mujoco) < 0.01);
  CHECK(std::abs(ours.qpos[10] - theirs.qpos[10]) < 0.01);
  CHECK(ours.deepest > -kDefaultContactMargin);
  // Without self-collision (the default) the legs pass through each other to their targets.
  Model apart = load_mjcf_file(file);
  apart.gravity = Vec3d::zero();
  const StandingResult through = stand_batchdyn(apart, how);
  MESSAGE("without self-collision: front hips ", through.qpos[7], ", ", through.qpos[10], " rad");
  CHECK(through.qpos[7] < hip - 0.1);
}

TEST_CASE("Go2's reach groups: one per stair box, and each one's sphere bounds its robot geometries in any configuration") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  const std::vector<ReachGroup> groups = plan_reach_groups(model);
  REQUIRE(groups.size() == 8);
  int obstacle_candidates = 0;  // pair candidates with a stair box (not the robot's self-collision pairs)
  for (const ContactCandidate& c : model.contacts.candidates) obstacle_candidates += !c.against_ground() && (c.body == 0 || c.body2 == 0);
  int grouped = 0;
  for (const ReachGroup& g : groups) {
    CHECK(model.bodies[static_cast<size_t>(g.root)].joint_type == JointType::FreeFlyer);  // the trunk
    grouped += g.end - g.first;
  }
  CHECK(grouped == obstacle_candidates);
  std::mt19937 rng(41);
  Data<double> data(model);
  double closest = 1e9;  // the least slack over the trials
  for (int trial = 0; trial < 200; ++trial) {
    forward_kinematics(model, data, random_configuration<double>(model, rng));
    for (const ReachGroup& g : groups)
      for (int k = g.first; k < g.end; ++k) {
        const ContactCandidate& c = model.contacts.candidates[static_cast<size_t>(k)];
        const bool obstacle_is_b = c.body2 == 0;
        const GeometryBounds& moving = obstacle_is_b ? c.bounds : c.bounds2;
        const Vec3d centre = data.world_from_body[static_cast<size_t>(obstacle_is_b ? c.body : c.body2)].act_point(moving.centre);
        const Vec3d offset = centre - data.world_from_body[static_cast<size_t>(g.root)].translation;
        const double slack = g.radius - (std::sqrt(dot(offset, offset)) + moving.radius);
        CHECK(slack >= 1e-3 - 1e-12);
        closest = std::min(closest, slack);
      }
  }
  // Not a sphere so large that it never culls: a foot comes within 0.15 m of the bound (the
  // chain's offsets never line up: the hip's is across the leg).
  CHECK(closest < 0.15);
}

TEST_CASE("Each ground candidate's contact point stays within plan.ground_reach of its body's origin (Go2's boxes and cylinders, H1's and G1's hulls)") {
  for (const std::string file : {"unitree_go2/scene.xml", "unitree_h1/scene.xml", "unitree_g1/scene_29dof.xml"}) {
    CAPTURE(file);
    const Model model = load_mjcf_file(mjcf_robot(file));
    const ContactPlan plan = plan_contacts(model);
    std::mt19937 rng(45);
    Data<double> data(model);
    HullScratch<double> scratch;
    GroundLanes<double> ground;
    ground.present = true, ground.normal = Vec3d{0.0, 0.0, 1.0}, ground.height = -5.0;
    double closest = 1e9;  // the least slack: the bound is tight for some point
    int slotted = 0;
    for (int trial = 0; trial < 50; ++trial) {
      forward_kinematics(model, data, random_configuration<double>(model, rng));
      for (int k = 0; k < plan.num_candidates(); ++k) {
        const ContactCandidate& c = model.contacts.candidates[static_cast<size_t>(k)];
        if (!c.against_ground()) {
          CHECK(plan.ground_reach[static_cast<size_t>(k)] == 0.0);
          continue;
        }
        const Transformd& X = data.world_from_body[static_cast<size_t>(c.body)];
        Vec3d point = X.act_point(c.point) - ground.normal * c.radius;  // a sphere's lowest point
        if (c.slot >= 0) {  // the ground raised to just above the deepest vertex, so that the slots take vertices
          const CollisionGeometry& g = model.contacts.geometries[static_cast<size_t>(c.geometry)];
          GroundLanes<double> raised = ground;
          raised.height += ground_slots(g, X, ground, 0.01, scratch).gap[0] + 0.005;
          const GroundSlots<double> slots = ground_slots(g, X, raised, 0.01, scratch);
          if (!std::isfinite(slots.gap[c.slot])) continue;  // no vertex taken: the point is not used
          point = slots.point[c.slot];
          ++slotted;
        }
        const Vec3d local = X.rotation.transpose_times(point - X.translation);
        const double slack = plan.ground_reach[static_cast<size_t>(k)] - std::sqrt(dot(local, local));
        CHECK(slack >= -1e-12);
        closest = std::min(closest, slack);
      }
    }
    CHECK(slotted > 0);
    CHECK(closest < 0.02);
  }
}

namespace {

// Go2 among its scene's stairs, for the contact kernel on one lane: the plane z = 0, mu = 0.8.
struct Go2AmongStairs {
  Model model = load_mjcf_file(mjcf_robot("unitree_go2/scene.xml"));
  ContactPlan plan = plan_contacts(model);
  Data<double> data{model};
  GroundLanes<double> ground = plane();
  std::vector<double> mu = std::vector<double>(static_cast<size_t>(plan.num_candidates()), 0.8);
  // The keyframe's pose moved to x and dz up. Over the first two stair boxes (tops 8 cm up,
  // x 1.1..1.3 and 1.5..1.7 m: the feet are 0.19 m before and after the trunk): x = 1.4.
  Eigen::VectorXd placed(double x, double dz) const {
    Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(model.keyframes.at(0).q.data(), model.nq);
    q[0] = x, q[2] += dz;
    return q;
  }
  // One contact step of the robot at rest in q, from ABA's free accelerations (no torque), on ws:
  // the solver's report, and qdd after the contacts.
  ContactSolverReport<double> step(FrictionalContactWorkspace<double>& ws, const Eigen::VectorXd& q, Eigen::VectorXd& qdd) {
    const Eigen::VectorXd rest = Eigen::VectorXd::Zero(model.nv);  // v and tau
    qdd.resize(model.nv);
    aba_kernel(data.constants, data.aba, q.data(), rest.data(), rest.data(), qdd.data());
    return frictional_contact_kernel(data.constants, plan, model, ContactSettings{}, plan.num_candidates(), LoopRows::None, ground, mu.data(), 1.0,
                                     ws, q.data(), rest.data(), 2e-3, qdd.data(), nullptr);
  }
  static GroundLanes<double> plane() {
    GroundLanes<double> ground;
    ground.present = true, ground.normal = Vec3d{0.0, 0.0, 1.0}, ground.height = 0.0;
    return ground;
  }
};

}  // namespace

TEST_CASE("A contact workspace reused across states writes every candidate's gap, flag, impulse and force as a fresh one does (Go2 on a stair, on the floor, in the air)") {
  // The kernel does not write again what it knows a candidate's lanes hold (ws.known: results
  // zero, a reach group's +inf gap): a workspace that carries those from another state must end
  // each call with what a fresh workspace ends with, bit for bit.
  Go2AmongStairs go2;
  const Model& model = go2.model;
  const ContactPlan& plan = go2.plan;
  const auto placed = [&](double x, double dz) { return go2.placed(x, dz); };
  // Over the first two stair boxes, 5 mm into them; on the floor, 5 mm in; 1 m up.
  const std::vector<Eigen::VectorXd> states = {placed(1.4, 0.075), placed(0.0, -0.005), placed(0.0, 1.0), placed(1.4, 0.075),
                                               placed(0.0, 1.0),   placed(0.0, -0.005), placed(1.4, 0.075)};
  FrictionalContactWorkspace<double> reused(model, plan);
  int in_contact_calls = 0, pairs_touching = 0;
  for (size_t s = 0; s < states.size(); ++s) {
    CAPTURE(s);
    FrictionalContactWorkspace<double> fresh(model, plan);
    std::fill(reused.impulses.begin(), reused.impulses.end(), 0.0);  // the same (cold) warm start in both
    Eigen::VectorXd qdd_reused, qdd_fresh;
    const ContactSolverReport<double> a = go2.step(reused, states[s], qdd_reused);
    const ContactSolverReport<double> b = go2.step(fresh, states[s], qdd_fresh);
    CHECK(a.iterations == b.iterations);
    CHECK(std::memcmp(qdd_reused.data(), qdd_fresh.data(), sizeof(double) * static_cast<size_t>(model.nv)) == 0);
    CHECK(std::memcmp(reused.gap.data(), fresh.gap.data(), sizeof(double) * fresh.gap.size()) == 0);
    CHECK(std::memcmp(reused.in_contact.data(), fresh.in_contact.data(), sizeof(double) * fresh.in_contact.size()) == 0);
    CHECK(std::memcmp(reused.impulses.data(), fresh.impulses.data(), sizeof(double) * fresh.impulses.size()) == 0);
    CHECK(std::memcmp(reused.world_force.data(), fresh.world_force.data(), sizeof(double) * fresh.world_force.size()) == 0);
    int touching = 0;
    for (int k = 0; k < plan.num_candidates(); ++k)
      if (fresh.in_contact[static_cast<size_t>(k)] != 0) {
        ++touching;
        pairs_touching += !model.contacts.candidates[static_cast<size_t>(k)].against_ground();
      }
    in_contact_calls += touching > 0;
  }
  CHECK(in_contact_calls == 5);  // on the stair and on the floor, not in the air
  CHECK(pairs_touching >= 12);   // the four feet on the stair boxes, three times
}

TEST_CASE("A contact workspace whose problem starts with room for one contact grows to the largest block's and steps as one made for every candidate, bit for bit (Go2 on a stair, on the floor)") {
  // The batch's threads start small (a problem for Go2's 401 candidates is 180 MiB of G and its
  // factor per thread in double) and grow between detection and the solve.
  Go2AmongStairs go2;
  const Model& model = go2.model;
  const ContactPlan& plan = go2.plan;
  const Eigen::VectorXd on_stair = go2.placed(1.4, 0.075), on_floor = go2.placed(0.0, -0.005);  // 5 mm into the stair boxes, the floor
  FrictionalContactWorkspace<double> grown(model, plan, 1), whole(model, plan);
  REQUIRE(grown.problem.max_contacts == 1);
  REQUIRE(whole.problem.max_contacts == plan.num_candidates());
  int most = 0;
  for (const Eigen::VectorXd& q : {on_floor, on_stair, on_floor}) {
    Eigen::VectorXd qdd_grown, qdd_whole;
    const ContactSolverReport<double> a = go2.step(grown, q, qdd_grown);
    const ContactSolverReport<double> b = go2.step(whole, q, qdd_whole);
    CHECK(a.iterations == b.iterations);
    CHECK(a.iterations > 0);
    CHECK(std::memcmp(qdd_grown.data(), qdd_whole.data(), sizeof(double) * static_cast<size_t>(model.nv)) == 0);
    CHECK(std::memcmp(grown.impulses.data(), whole.impulses.data(), sizeof(double) * whole.impulses.size()) == 0);
    CHECK(std::memcmp(grown.world_force.data(), whole.world_force.data(), sizeof(double) * whole.world_force.size()) == 0);
    int contacts = 0;
    for (double flag : whole.in_contact) contacts += flag != 0;
    most = std::max(most, contacts);
    CHECK(grown.problem.max_contacts >= contacts);  // room for this state's contacts
  }
  CHECK(most >= 4);
  CHECK(grown.problem.max_contacts < plan.num_candidates() / 4);  // and not for every candidate
}

// World geoms other than the floor are obstacles: each robot geom that MuJoCo's contype /
// conaffinity filter lets touch one gets a pair, and <contact><pair> makes one of its own.
const char* const kObstaclesXml = R"(<mujoco><option timestep="0.002"/>
  <asset>
    <mesh name="slab" vertex="-.3 -.3 0  .3 -.3 0  .3 .3 0  -.3 .3 0  -.3 -.3 .1  .3 -.3 .1  .3 .3 .1  -.3 .3 .1"/>
    <mesh name="frustum" vertex="-.1 -.08 -.05  .1 -.08 -.05  .1 .08 -.05  -.1 .08 -.05  -.05 -.04 .05  .05 -.04 .05  .05 .04 .05  -.05 .04 .05"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <geom name="slab" type="mesh" mesh="slab"/>
    <geom name="block" type="box" size=".2 .2 .05" pos="1 0 .05"/>
    <body name="crate" pos="0 0 .3"><freejoint/><geom name="crate" type="box" size=".1 .08 .05" mass="1"/></body>
    <body name="frustum" pos="1 0 .3"><freejoint/><geom name="frustum" type="mesh" mesh="frustum" mass="1"/></body>
    <body name="ghost" pos="1.1 0.1 .4"><freejoint/><geom name="ghost" type="sphere" size=".03" mass="1" contype="2" conaffinity="2"/></body>
  </worldbody>
  <contact><pair geom1="ghost" geom2="block" friction="0.3 0.3"/></contact>
</mujoco>)";

TEST_CASE("MJCF obstacles: world geoms pair with the robot geoms MuJoCo would collide them with, and <pair> adds its own") {
  const Model model = load_mjcf_string(kObstaclesXml);
  std::vector<std::string> names;
  for (const ContactPair& pair : model.contacts.pairs) names.push_back(pair.name);
  // The explicit pair first, then each obstacle with each geom its filter passes (not the ghost).
  CHECK(names == std::vector<std::string>{"block-ghost", "crate-slab", "frustum-slab", "crate-block", "frustum-block"});
  CHECK(model.contacts.pairs[0].friction == 0.3);
  CHECK_FALSE(model.contacts.geometries[static_cast<size_t>(find_collision_geometry(model.contacts, "ghost"))].touches_ground);
  // A box or a hull against a hull or a box: the deepest point and three vertex slots.
  int convex = 0, corners = 0;
  for (const ContactCandidate& c : model.contacts.candidates) convex += c.kind == CandidateKind::Convex, corners += c.kind == CandidateKind::PointBox;
  CHECK(convex == 4 * 4);
  CHECK(corners == 1);  // the ghost's centre against the block
}

TEST_CASE("MJCF obstacles: a world geom that no robot geom can touch is left out, with a note") {
  const Model model = load_mjcf_string(R"(<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <geom name="shelf" type="box" size=".2 .2 .05" pos="1 0 .5" contype="2" conaffinity="2"/>
    <geom name="step" type="box" size=".2 .2 .05" pos="-1 0 .05"/>
    <body name="crate" pos="0 0 .3"><freejoint/><geom name="crate" type="box" size=".1 .08 .05" mass="1"/></body>
  </worldbody>
</mujoco>)");
  CHECK(find_collision_geometry(model.contacts, "shelf") < 0);
  CHECK(find_collision_geometry(model.contacts, "step") >= 0);
  bool noted = false;
  for (const std::string& note : model.load_notes) noted = noted || (note.find("'shelf'") != std::string::npos && note.find("left out") != std::string::npos);
  CHECK(noted);
  REQUIRE(model.contacts.pairs.size() == 1);
  CHECK(model.contacts.pairs[0].name == "crate-step");
}

TEST_CASE("Contact results stored only where they changed equal results written in full every step, as balls fall and roll into an obstacle") {
  // Balls dropped or thrown up, rolling at an obstacle box from different places and speeds:
  // their ground candidate starts off the floor in every lane (idle: not loaded, and not stored
  // again but for its gap), lands, and some leave again,
  // and their pair is beyond reach (not stored again), then near, in contact, and at rest
  // against it. Batch `full` saves and restores every state before each step, which makes it
  // load and store every candidate.
  const Model model = load_mjcf_string(R"(<mujoco><option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <geom name="block" type="box" size=".1 .1 .1" pos="0 0 .1"/>
    <body name="ball" pos="-1 0 .05"><freejoint/><geom name="ball" type="sphere" size=".05" mass="1"/></body>
  </worldbody>
</mujoco>)");
  using L = SimdLane<float>;
  const int n = 2 * lane_width<L> + 3;
  Batch<float> partial(model, n, 1), full(model, n, 1);
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (Batch<float>* batch : {&partial, &full}) std::fill(batch->v(), batch->v() + n * model.nv, 0.0f);
  for (int e = 0; e < n; ++e) {
    const float x = -0.9f + 0.6f * u(rng), speed = 2.0f * u(rng), lift = 0.02f + 0.2f * u(rng), up = u(rng) < 0.5f ? 2.0f * u(rng) : 0.0f;
    for (Batch<float>* batch : {&partial, &full}) {
      batch->q()[e * model.nq + 0] = x;
      batch->q()[e * model.nq + 2] += lift;
      batch->v()[e * model.nv + 2] = up;
      batch->v()[e * model.nv + 0] = speed;
      batch->v()[e * model.nv + 4] = speed / 0.05f;  // rolling about y
    }
  }
  std::vector<int> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  std::vector<float> rows(static_cast<size_t>(n * full.state_size()));
  const size_t C = static_cast<size_t>(n * partial.contact_candidates());
  int near = 0, touching = 0, aloft = 0, landed = 0;
  for (int step = 0; step < 600; ++step) {
    full.get_state(all, rows), full.set_state(all, rows);
    partial.step(0.002), full.step(0.002);
    REQUIRE(std::equal(partial.q(), partial.q() + n * model.nq, full.q()));
    REQUIRE(std::equal(partial.contact_gaps(), partial.contact_gaps() + C, full.contact_gaps()));
    REQUIRE(std::equal(partial.contact_flags(), partial.contact_flags() + C, full.contact_flags()));
    REQUIRE(std::equal(partial.contact_impulses(), partial.contact_impulses() + 3 * C, full.contact_impulses()));
    REQUIRE(std::equal(partial.contact_forces(), partial.contact_forces() + 3 * C, full.contact_forces()));
    for (int e = 0; e < n; ++e) {
      const float gap = partial.contact_gaps()[e * partial.contact_candidates() + 1];  // the ball-block pair
      near += std::isfinite(gap), touching += partial.contact_flags()[e * partial.contact_candidates() + 1] != 0.0f;
      const bool on_floor = partial.contact_flags()[e * partial.contact_candidates()] != 0.0f;  // the ball's ground candidate
      aloft += !on_floor, landed += on_floor;
    }
  }
  CHECK(aloft > 0);  // balls left the floor
  CHECK(landed > 0);  // and came down on it
  CHECK(near > 0);      // pairs came within reach
  CHECK(touching > 0);  // and touched
  CHECK(near < 600 * n);  // and were beyond reach for a while
}

TEST_CASE("A box on an MJCF mesh slab and a mesh on a box come to rest on their faces at MuJoCo's heights, carrying m g") {
  const Model model = load_mjcf_string(kObstaclesXml);
  MujocoModel mj(kObstaclesXml, true);
  for (int n = 0; n < 1500; ++n) mj_step(mj.model, mj.data);
  Batch<double> batch(model, 1, 1);
  std::fill(batch.v(), batch.v() + model.nv, 0.0);
  for (int n = 0; n < 1500; ++n) batch.step(0.002);
  REQUIRE(batch.status()[0] == EnvStatus::Ok);
  const std::vector<double> qpos = q_to_mujoco(model, std::vector<double>(batch.q(), batch.q() + model.nq));
  for (const int z : {2, 9, 16}) {  // crate on the slab (0.15), frustum on the block (0.15), ghost on the block (0.13)
    CAPTURE(z);
    CHECK(std::abs(qpos[static_cast<size_t>(z)] - mj.data->qpos[z]) < 1e-3);
  }
  for (int k = 0; k < model.nv; ++k) CHECK(std::abs(batch.v()[k]) < 1e-4);
  // Each body's pair carries its weight (the forces on each candidate's first geometry, world frame).
  const int C = batch.contact_candidates();
  std::map<std::string, double> carried;
  for (int c = 0; c < C; ++c) {
    const ContactCandidate& cand = model.contacts.candidates[static_cast<size_t>(c)];
    const double up = batch.contact_forces()[3 * c + 2];
    if (cand.pair >= 0) carried[model.contacts.pairs[static_cast<size_t>(cand.pair)].name] += std::abs(up);
  }
  CHECK(carried["crate-slab"] == doctest::Approx(kG).epsilon(1e-3));
  CHECK(carried["frustum-block"] == doctest::Approx(kG).epsilon(1e-3));
  CHECK(carried["block-ghost"] == doctest::Approx(kG).epsilon(1e-3));
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
  <worldbody><body><joint name="j" type="ball" stiffness="10"/><geom size="0.1"/></body></worldbody>
</mujoco>)", "spring.xml"),
                       "spring.xml", "<joint name=\"j\"> (line 2)", "stiffness", "ball");
  CHECK_ERROR_MENTIONS(load_mjcf_string(R"(<mujoco>
  <worldbody><body name="a"><joint name="j1"/><geom size="0.1"/></body><body name="b"><joint name="j2"/><geom size="0.1"/></body></worldbody>
  <equality><joint joint1="j1" joint2="j2"/></equality>
</mujoco>)", "equality.xml"),
                       "equality.xml", "<equality>", "line 3", "connect and weld");
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

// Standing: the robot at its keyframe (G1: where the file puts it, dropped from there), its
// joints held by the same PD in both engines (each with its own contact model and defaults:
// batchdyn's rigid contacts, MuJoCo's soft ones). It must come to rest on its feet, carried by
// the ground (normal forces sum to m g within 1 %), at MuJoCo's base height within 5 mm, and no
// candidate may sink deeper than its margin.
// The tolerances of a standing check: at rest (largest |v| at the end), and m g carried.
struct StandingTolerances {
  double speed = 1e-2, force = 0.01;
};

void check_standing(const std::string& file, const std::string& keyframe, double kp_scale, double kd_ratio, double seconds,
                    StandingTolerances tolerances = {}) {
  CAPTURE(file);
  const Model model = load_mjcf_file(mjcf_robot(file));
  MujocoModel mj(mjcf_robot(file));
  Standing how;
  how.kp_scale = kp_scale, how.kd_ratio = kd_ratio, how.seconds = seconds;
  const std::vector<double> qpos = keyframe.empty() ? std::vector<double>(mj.model->qpos0, mj.model->qpos0 + mj.model->nq)
                                                    : q_to_mujoco(model, model.keyframes.at(0).q);
  how.q_start = qpos;
  how.target.assign(qpos.begin() + 7, qpos.end());
  const StandingResult ours = stand_batchdyn(model, how), theirs = stand_mujoco(mj, model, how);
  const double weight = total_mass(model) * kG;
  MESSAGE(file, ": base height ", ours.base_height, " m (MuJoCo ", theirs.base_height, " m), normal forces ", ours.normal_force,
          " N (MuJoCo ", theirs.normal_force, " N, m g = ", weight, " N), speed ", ours.speed, " (MuJoCo ", theirs.speed,
          "), deepest gap ", ours.deepest, " m, steps that reported ", ours.reports);
  CHECK(ours.speed < tolerances.speed);
  CHECK(std::abs(ours.normal_force - weight) < tolerances.force * weight);
  CHECK(std::abs(ours.base_height - theirs.base_height) < 5e-3);
  CHECK(ours.deepest > -kDefaultContactMargin);
}

TEST_CASE("Go2 from MJCF stands under PD at its keyframe: at rest, carrying m g, at MuJoCo's height within 5 mm") {
  check_standing("unitree_go2/scene.xml", "home", 2.0, 0.05, 3.0);
}

// H1's soles are convex hulls with dozens of coplanar vertices; its four slots per sole hold it at
// MuJoCo's height, but it keeps a small tremor (|v| ~0.3 rad/s at 3 s, MuJoCo 0.05) and the
// normal forces swing by a few per cent around m g: checked to 5 %, not to rest.
TEST_CASE("H1 from MJCF stands on its mesh feet (convex hulls) under PD at its keyframe, at MuJoCo's height within 5 mm") {
  check_standing("unitree_h1/scene.xml", "home", 10.0, 0.03, 3.0, {1.0, 0.05});
}

TEST_CASE("G1 from MJCF, dropped where the file puts it, comes to rest on its feet without sinking, as in MuJoCo") {
  check_standing("unitree_g1/scene_29dof.xml", "", 10.0, 0.02, 5.0);
}

TEST_CASE("decimate_hull keeps vertices of the hull, within the budget, and reports how far inside it falls") {
  std::vector<Vec3d> sphere;  // 1000 points on the unit sphere: every one a hull vertex
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int k = 0; k < 1000; ++k) {
    const double z = 1.0 - (2.0 * k + 1.0) / 1000, r = std::sqrt(1.0 - z * z);
    sphere.push_back({r * std::cos(golden * k), r * std::sin(golden * k), z});
  }
  const DecimatedHull kept = decimate_hull(sphere, 64);
  CHECK(kept.vertices.size() == 64);
  for (const Vec3d& p : kept.vertices)
    CHECK(std::any_of(sphere.begin(), sphere.end(), [&](const Vec3d& s) { return s.x == p.x && s.y == p.y && s.z == p.z; }));
  // The error it reports is the gap of the support functions, measured here independently.
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  double measured = 0;
  for (int n = 0; n < 2000; ++n) {
    Vec3d d{normal(rng), normal(rng), normal(rng)};
    d = d * (1.0 / std::sqrt(dot(d, d)));
    double full = -1e9, part = -1e9;
    for (const Vec3d& p : sphere) full = std::max(full, dot(p, d));
    for (const Vec3d& p : kept.vertices) part = std::max(part, dot(p, d));
    measured = std::max(measured, full - part);
  }
  CHECK(kept.support_error > 0);
  CHECK(kept.support_error < 0.1);  // 64 points on a unit sphere: a cap of ~0.3 rad between them
  CHECK(measured <= kept.support_error * 1.2);  // random directions fall between the 4096 test directions
  // Within the budget: nothing dropped.
  const DecimatedHull all = decimate_hull(std::vector<Vec3d>(sphere.begin(), sphere.begin() + 10), 64);
  CHECK(all.vertices.size() == 10);
  CHECK(all.support_error == 0);
}

TEST_CASE("MJCF mesh geoms collide through their convex hulls, at most 64 vertices each, noted when cut down") {
  const Model model = load_mjcf_file(mjcf_robot("unitree_h1/scene.xml"));
  const int foot = find_collision_geometry(model.contacts, "left_ankle_link/geom0");
  REQUIRE(foot >= 0);
  const CollisionGeometry& g = model.contacts.geometries[static_cast<size_t>(foot)];
  CHECK(g.shape == CollisionShape::ConvexHull);
  CHECK(g.vertices.size() == static_cast<size_t>(kHullVertexBudget));
  bool noted = false;
  for (const std::string& note : model.load_notes) noted = noted || note.find("'left_ankle_link': convex hull of") != std::string::npos;
  CHECK(noted);
}

}  // namespace batchdyn::test
