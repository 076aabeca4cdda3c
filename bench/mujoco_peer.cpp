// The MuJoCo peer: the same robot, standing on the same ground under the same PD,
// stepped by MuJoCo 4 (the `mujoco` wheel's libmujoco; this file is built only when CMake finds
// it) and by batchdyn's step(), in one run: one core each (mj_step in a loop; batchdyn on one
// thread), and all cores each (MuJoCo's batch API, mjbatch.h; batchdyn on all threads). Two robots:
//   a1_standing        Unitree A1 (models/a1.urdf + a1_contacts.json: four 2 cm sphere feet and
//                      the trunk box), crouched, PD kp 20, kd 0.5 (legged_gym's), 33.5 N m;
//   humanoid_standing  the shipped humanoid (36 dof) on two 20 x 10 cm box feet
//                      (models/humanoid_box_feet.json), straight, PD kp 200, kd 5, armature
//                      0.05 kg m^2 per joint (explicit PD on its light links needs it at 2 ms).
//
// "The same": the MJCF is generated from batchdyn's Model (mjcf_of below): the same bodies
// (fixed links merged), joint placements and axes, masses, centres of mass and full inertias,
// armature, damping, joint limits, and the contact geometry against a plane, mu = 1 sliding
// friction (condim 3), elliptic cones as batchdyn's, time step 2 ms, semi-implicit Euler. The
// PD, clamped to the URDF's effort limits, is computed identically before every step and
// applied through motors. MuJoCo runs its default Newton solver (tolerance 1e-8, 100
// iterations) and soft contacts (its defaults); batchdyn its rigid ADMM (tolerance 1e-5 float /
// 1e-6 double).
//
// Every environment first settles for 1 s from the same pose, then the steady stance is timed.
// Counters: env-steps/s per core, the resting normal force per foot geometry (env 0) and their
// sum over the weight; the batchdyn cases also report vs_mujoco, their env-steps/s per core
// over MuJoCo's elliptic case of the same robot and thread count in the same run (run them
// together: --benchmark_filter=Peer).
//
// The batch API case (PeerMujocoBatch): mjb_makeBatch with its defaults (one thread per logical
// CPU, the caller's included; one mjData per thread, the state rows mjSTATE_INTEGRATION, the
// solver's warm start among them), every step an mjb_apply of the same PD-then-mj_step function
// on every simulation, on the batch's thread pool. That is MuJoCo's fastest way to the same
// physics: a controller between steps that reads and writes the state rows from the caller's
// thread (the Python `mujoco.batch` loop) would add a serial pass.
//
// Two more robots are MJCF files, loaded by each engine from the same XML:
//   go2_mjcf_standing  Unitree Go2 (tests/robots/mjcf/unitree_go2/scene.xml): batchdyn's
//                      load_mjcf_file, MuJoCo's own compiler (visual geoms discarded by both), at
//                      its "home" keyframe, PD kp 60, kd 5 (Unitree's stand_go2 example in
//                      unitree_mujoco) clamped to the motors' ctrlrange: it stands on its four
//                      feet (at kp 20, kd 0.5 it sank onto its rear thighs and calves, 14 contacts).
//                      Each engine with the file's settings and its own defaults: MuJoCo with the
//                      file's elliptic cones, impratio 100, condim 1 / 6 geoms, soft contacts and
//                      joint frictionloss 0.2 N m; batchdyn with rigid contacts, sliding friction
//                      only, and no frictionloss (docs/mjcf.md).
//   h1_mjcf_standing   Unitree H1 (tests/robots/mjcf/unitree_h1/scene.xml), the same way, on its
//                      mesh feet (convex hulls, 64 vertices each in batchdyn; MuJoCo's own hulls),
//                      at its "home" keyframe, PD per joint: kp = 10 x the motor's torque range,
//                      kd = 0.03 kp (h1_mjcf below). Feet: the ankle bodies.
//
// Also forward dynamics without contact (PeerForward*, at the end of this file): mj_forward vs
// batched ABA on the humanoid.
//
// Memory per environment (counter bytes_per_env, the one-thread cases): the heap bytes in use
// (glibc's mallinfo2: arenas and mmapped blocks) that the N environments add, over N, read
// around the same code for both engines, so that neither's own accounting is trusted. MuJoCo:
// the N - 1 mj_copyData of the settled first mjData (its buffer and arena; the mjModel is
// shared). batchdyn: the Batch from its construction through the settling and timed steps (its
// state rows, contact results, warm starts and the thread's lane-block workspace; the Model copy
// it holds is shared by the N), split into state_bytes_per_env (from construction, before the
// first step) and workspace_bytes (what the steps added: the thread's workspace, made on its
// first block, its contact problem grown to the largest block's).
// Most of an mjData is its arena (contacts, constraint rows, the stack), sized
// ahead: mjdata_in_use_bytes counts what env 0 used of it, sizeof(mjData) + nbuffer + the
// arena's and the stack's high-water marks after its settling and timed steps.
//
// Warm-up: each case passes once over its environments before the clock starts. A new mjData's
// stack (nstack 20000 numbers, 160 KB per environment) is first touched by its first step, and
// with one or two timed passes per second the first pass's page faults were the measurement:
// 77 % of PeerForwardMujoco's samples in the kernel's clear_page on a VM, MuJoCo
// 9-11x slower than in earlier runs.
#include <benchmark/benchmark.h>
#include <mujoco/mjbatch.h>
#include <mujoco/mujoco.h>

#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <utility>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch/batch.hpp"
#include "bench_common.hpp"
#include "kernels/contact/contact_step.hpp"
#include "topology/contacts.hpp"
#include "topology/mjcf.hpp"
#include "topology/reduced_model.hpp"
#include "topology/urdf.hpp"

namespace {
using namespace batchdyn;

constexpr double kStep = 2e-3;   // s
constexpr double kSettle = 1.0;  // s before timing

// A robot standing under PD: its model, the pose it starts from (batchdyn's q), the PD targets
// and gains (one per 1-dof joint, in joint order: after the free flyer, batchdyn's dofs and
// MuJoCo's joints in the same order), the feet whose normal forces are reported: each a
// geometry's name or a body's (all of that body's geometries).
struct PeerCase {
  std::string name;
  Model model;
  std::vector<double> q;
  std::vector<double> target;
  std::vector<double> kp, kd;
  std::vector<std::string> feet;
  std::string mjcf_path;  // MuJoCo loads this file; empty: the MJCF generated from `model`
};

// The same gains on every 1-dof joint.
void set_uniform_gains(PeerCase& p, double kp, double kd) {
  p.kp.assign(static_cast<size_t>(p.model.nv - 6), kp);
  p.kd.assign(p.kp.size(), kd);
}

double total_mass(const Model& m) {
  double mass = 0;
  for (const Body& b : m.bodies) mass += b.inertia.mass;
  return mass;
}

// Lifts q's free-flyer root until the lowest candidate is `clearance` above the plane z = 0.
void lift_to_ground(const Model& m, std::vector<double>& q, double clearance) {
  Data<double> data(m);
  forward_kinematics(m, data, Eigen::Map<const Eigen::VectorXd>(q.data(), m.nq).eval());
  double lowest = 1e9;
  for (const CandidateState& c : candidate_states(m, data)) lowest = std::min(lowest, c.gap);
  q[2] += clearance - lowest;
}

const PeerCase& a1() {
  static const PeerCase c = [] {
    PeerCase p{"a1_standing", load_urdf_file(bench::model_path("a1.urdf"), RootJoint::FreeFlyer), {}, {}, {}, {},
               {"FL_foot", "FR_foot", "RL_foot", "RR_foot"}, {}};
    set_uniform_gains(p, 20.0, 0.5);
    add_contacts_from_json_file(p.model, bench::model_path("a1_contacts.json"));
    p.target = {0.1, 0.8, -1.5, -0.1, 0.8, -1.5, 0.1, 1.0, -1.5, -0.1, 1.0, -1.5};  // legged_gym's crouch
    p.q.assign(static_cast<size_t>(p.model.nq), 0.0);
    p.q[6] = 1.0;  // identity quaternion (x y z w)
    std::copy(p.target.begin(), p.target.end(), p.q.begin() + 7);
    lift_to_ground(p.model, p.q, 0.03);
    return p;
  }();
  return c;
}

// A robot of tests/robots/mjcf/ (`file` under it), which both engines load, starting at its first
// keyframe with the PD targets at that pose; the gains are the caller's.
PeerCase mjcf_case(const std::string& name, const std::string& file, std::vector<std::string> feet) {
  const std::string path = std::string(BATCHDYN_TEST_ROBOTS_DIR) + "/mjcf/" + file;
  PeerCase p{name, load_mjcf_file(path), {}, {}, {}, {}, std::move(feet), path};
  p.q = p.model.keyframes.at(0).q;
  p.target.assign(p.q.begin() + 7, p.q.end());
  return p;
}

const PeerCase& go2_mjcf() {
  static const PeerCase c = [] {
    PeerCase p = mjcf_case("go2_mjcf_standing", "unitree_go2/scene.xml", {"FL", "FR", "RL", "RR"});
    set_uniform_gains(p, 60.0, 5.0);
    return p;
  }();
  return c;
}

// H1's joints range from 18 to 300 N m: one gain for all would be too soft for the knees or too
// stiff for the elbows. Each joint gets kp = 10 x its motor's torque range (N m / rad per N m)
// and kd = 0.03 kp, as tests/test_mjcf.cpp stands it; a motor without a range (H1's
// not_use_joint, an unlimited motor on a massless body) is given 100 N m.
const PeerCase& h1_mjcf() {
  static const PeerCase c = [] {
    PeerCase p = mjcf_case("h1_mjcf_standing", "unitree_h1/scene.xml", {"left_ankle_link", "right_ankle_link"});
    const std::vector<double> limit = motor_torque_limits(p.model.effort_limit, p.model.actuators);
    for (int k = 6; k < p.model.nv; ++k) {
      const double range = limit[static_cast<size_t>(k)];
      p.kp.push_back(10.0 * (std::isfinite(range) ? range : 100.0));
      p.kd.push_back(0.03 * p.kp.back());
    }
    return p;
  }();
  return c;
}

const PeerCase& humanoid() {
  static const PeerCase c = [] {
    PeerCase p{"humanoid_standing", load_urdf_file(bench::model_path("humanoid.urdf"), RootJoint::FreeFlyer), {}, {}, {}, {},
               {"left_sole_box", "right_sole_box"}, {}};
    set_uniform_gains(p, 200.0, 5.0);
    add_contacts_from_json_file(p.model, bench::model_path("humanoid_box_feet.json"));
    set_armature(p.model, 0.05);
    p.target.assign(static_cast<size_t>(p.model.nv - 6), 0.0);  // straight
    const Eigen::VectorXd neutral = neutral_configuration<double>(p.model);
    p.q.assign(neutral.data(), neutral.data() + neutral.size());
    lift_to_ground(p.model, p.q, 0.002);
    return p;
  }();
  return c;
}

// --- the MJCF of a batchdyn Model --------------------------------------------------------------

std::string numbers(std::initializer_list<double> values) {
  std::ostringstream s;
  s.precision(17);
  bool first = true;
  for (double v : values) s << (first ? "" : " ") << v, first = false;
  return s.str();
}

// pos and xyaxes (the child frame's x and y axes in the parent frame) of a placement.
std::string frame_attributes(const Transformd& t) {
  const Mat3<double>& r = t.rotation;
  return "pos=\"" + numbers({t.translation.x, t.translation.y, t.translation.z}) + "\" xyaxes=\"" +
         numbers({r(0, 0), r(1, 0), r(2, 0), r(0, 1), r(1, 1), r(2, 1)}) + "\"";
}

std::string geom_element(const CollisionGeometry& g) {
  std::string type, size;
  switch (g.shape) {
    case CollisionShape::Sphere: type = "sphere", size = numbers({g.radius}); break;
    case CollisionShape::Capsule: type = "capsule", size = numbers({g.radius, 0.5 * g.length}); break;
    case CollisionShape::Cylinder: type = "cylinder", size = numbers({g.radius, 0.5 * g.length}); break;
    case CollisionShape::Box: type = "box", size = numbers({g.half_extents.x, g.half_extents.y, g.half_extents.z}); break;
    case CollisionShape::Point: type = "sphere", size = "0.001"; break;
    case CollisionShape::ConvexHull:  // an MJCF robot's mesh: MuJoCo loads that file itself (PeerCase::mjcf_path)
      throw std::runtime_error("geom '" + g.name + "': a convex hull has no generated MJCF; load the robot's own file");
  }
  // contype 0 / conaffinity 1: the robot's geoms meet the floor (contype 1), never each other.
  return "<geom name=\"" + g.name + "\" type=\"" + type + "\" size=\"" + size + "\" " + frame_attributes(g.in_body) +
         " friction=\"" + numbers({g.friction, 0.005, 0.0001}) + "\" contype=\"0\" conaffinity=\"1\"/>";
}

void body_element(const Model& m, int b, std::ostringstream& xml) {
  const Body& body = m.bodies[static_cast<size_t>(b)];
  xml << "<body name=\"" << body.name << "\" " << frame_attributes(body.joint_placement) << ">";
  const RigidInertiad& I = body.inertia;
  const Mat3<double>& c = I.inertia_com;
  xml << "<inertial pos=\"" << numbers({I.com.x, I.com.y, I.com.z}) << "\" mass=\"" << numbers({I.mass}) << "\" fullinertia=\""
      << numbers({c(0, 0), c(1, 1), c(2, 2), c(0, 1), c(0, 2), c(1, 2)}) << "\"/>";
  const auto dof = static_cast<size_t>(body.idx_v);
  switch (body.joint_type) {
    case JointType::FreeFlyer: xml << "<freejoint name=\"" << body.joint_name << "\"/>"; break;
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: {
      const bool limited = body.joint_type != JointType::Continuous &&
                           std::isfinite(m.lower_position_limit[static_cast<size_t>(body.idx_q)]);
      xml << "<joint name=\"" << body.joint_name << "\" type=\"" << (body.joint_type == JointType::Prismatic ? "slide" : "hinge")
          << "\" axis=\"" << numbers({body.axis.x, body.axis.y, body.axis.z}) << "\" armature=\"" << numbers({m.armature[dof]})
          << "\" damping=\"" << numbers({m.damping[dof]}) << "\"";
      if (limited)
        xml << " limited=\"true\" range=\"" << numbers({m.lower_position_limit[static_cast<size_t>(body.idx_q)],
                                                       m.upper_position_limit[static_cast<size_t>(body.idx_q)]}) << "\"";
      xml << "/>";
      break;
    }
    case JointType::Spherical: xml << "<joint name=\"" << body.joint_name << "\" type=\"ball\"/>"; break;
  }
  for (const CollisionGeometry& g : m.contacts.geometries)
    if (g.body == b) xml << geom_element(g);
  for (int child : body.children) body_element(m, child, xml);
  xml << "</body>\n";
}

// The MJCF: option, the floor, the body tree, one motor per 1-dof joint (the PD goes through
// ctrl, clamped to the effort limit as batchdyn clamps it).
std::string mjcf_of(const Model& m, const char* cone) {
  std::ostringstream xml;
  xml << "<mujoco model=\"" << m.name << "\"><compiler angle=\"radian\" inertiafromgeom=\"false\"/>"
      << "<option timestep=\"" << kStep << "\" integrator=\"Euler\" cone=\"" << cone << "\" gravity=\""
      << numbers({m.gravity.x, m.gravity.y, m.gravity.z}) << "\"/>"
      << "<size nstack=\"20000\"/><worldbody><geom name=\"floor\" type=\"plane\" size=\"0 0 1\" contype=\"1\" conaffinity=\"0\"/>\n";
  for (int child : m.bodies[0].children) body_element(m, child, xml);
  xml << "</worldbody><actuator>";
  for (size_t b = 1; b < m.bodies.size(); ++b) {
    const Body& body = m.bodies[b];
    if (!is_single_dof(body.joint_type)) continue;
    const double effort = m.effort_limit[static_cast<size_t>(body.idx_v)];
    xml << "<motor joint=\"" << body.joint_name << "\"";
    if (std::isfinite(effort) && effort > 0) xml << " ctrllimited=\"true\" ctrlrange=\"" << numbers({-effort, effort}) << "\"";
    xml << "/>";
  }
  xml << "</actuator></mujoco>\n";
  return xml.str();
}

mjModel* load_mjcf(const std::string& text) {
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  if (mj_addBufferVFS(&vfs, "model.xml", text.data(), static_cast<int>(text.size())) != 0)
    throw std::runtime_error("MuJoCo's VFS refused the generated MJCF");
  char error[1000] = "";
  mjModel* model = mj_loadXML("model.xml", &vfs, error, sizeof error);
  mj_deleteVFS(&vfs);
  if (!model) throw std::runtime_error(std::string("MuJoCo rejected the generated MJCF: ") + error);
  return model;
}

// --- MuJoCo -------------------------------------------------------------------------------------

// PD on the 1-dof joints (one motor each: actuator k drives joint trnid, the joint j - 1 of the
// targets after the free joint), then one step: every MuJoCo case's control step.
void pd_step(const PeerCase& robot, const mjModel* m, mjData* d) {
  for (int k = 0; k < m->nu; ++k) {
    const int j = m->actuator_trnid[2 * k];
    const auto joint = static_cast<size_t>(j - 1);
    d->ctrl[k] = robot.kp[joint] * (robot.target[joint] - d->qpos[m->jnt_qposadr[j]]) - robot.kd[joint] * d->qvel[m->jnt_dofadr[j]];
  }
  mj_step(m, d);
}

// MuJoCo's own compile of an MJCF file, visual geoms discarded (as batchdyn loads it).
mjModel* load_mjcf_file_in_mujoco(const std::string& path) {
  char error[1000] = "";
  mjSpec* spec = mj_parseXML(path.c_str(), nullptr, error, sizeof error);
  if (!spec) throw std::runtime_error(path + ": " + error);
  spec->compiler.discardvisual = 1;
  mjModel* model = mj_compile(spec, nullptr);
  const std::string message = model ? "" : mjs_getError(spec);
  mj_deleteSpec(spec);
  if (!model) throw std::runtime_error(path + ": " + message);
  return model;
}

// Heap bytes in use (glibc): small blocks in the arenas and blocks mapped on their own.
double heap_bytes() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd);
}

struct MujocoEnvs {
  const PeerCase* robot = nullptr;
  std::unique_ptr<mjModel, void (*)(mjModel*)> model{nullptr, mj_deleteModel};
  std::vector<std::unique_ptr<mjData, void (*)(mjData*)>> data;
  double bytes_per_env = 0;  // heap bytes of each mj_copyData (top of the file)

  void step(mjData* d) const { pd_step(*robot, model.get(), d); }
};

MujocoEnvs make_mujoco(const PeerCase& robot, int n, const char* cone) {
  MujocoEnvs envs;
  envs.robot = &robot;
  envs.model.reset(robot.mjcf_path.empty() ? load_mjcf(mjcf_of(robot.model, cone)) : load_mjcf_file_in_mujoco(robot.mjcf_path));
  mjData* first = mj_makeData(envs.model.get());
  const std::vector<double>& q = robot.q;
  // MuJoCo's free joint: position, then the quaternion w x y z.
  const double mj_q[7] = {q[0], q[1], q[2], q[6], q[3], q[4], q[5]};
  std::copy(mj_q, mj_q + 7, first->qpos);
  std::copy(q.begin() + 7, q.end(), first->qpos + 7);
  for (int s = 0; s < static_cast<int>(std::lround(kSettle / kStep)); ++s) envs.step(first);
  envs.data.emplace_back(first, mj_deleteData);
  envs.data.reserve(static_cast<size_t>(n));
  const double before = heap_bytes();
  for (int e = 1; e < n; ++e) envs.data.emplace_back(mj_copyData(nullptr, envs.model.get(), first), mj_deleteData);
  if (n > 1) envs.bytes_per_env = (heap_bytes() - before) / (n - 1);
  return envs;
}

// The normal force on each foot geometry (sum over its contacts), N.
std::vector<double> mujoco_foot_forces(const PeerCase& robot, const mjModel* m, const mjData* d) {
  std::vector<double> fz(robot.feet.size(), 0.0);
  for (int i = 0; i < d->ncon; ++i) {
    mjtNum f[6];
    mj_contactForce(m, d, i, f);
    for (size_t foot = 0; foot < robot.feet.size(); ++foot) {
      const int geom = mj_name2id(m, mjOBJ_GEOM, robot.feet[foot].c_str()), body = mj_name2id(m, mjOBJ_BODY, robot.feet[foot].c_str());
      for (int g : d->contact[i].geom)
        if (g >= 0 && (g == geom || m->geom_bodyid[g] == body)) fz[foot] += f[0] * std::abs(d->contact[i].frame[2]);  // vertical part
    }
  }
  return fz;
}

void report_feet(benchmark::State& state, const PeerCase& robot, const std::vector<double>& fz) {
  double sum = 0;
  for (size_t foot = 0; foot < robot.feet.size(); ++foot) state.counters["fz_" + robot.feet[foot]] = fz[foot], sum += fz[foot];
  state.counters["sum_fz_over_weight"] = sum / (total_mass(robot.model) * std::abs(robot.model.gravity.z));
}

// Per robot: env-steps/s of its elliptic MuJoCo case of this run, on one thread and on all (the batch API).
std::map<std::string, double> mujoco_rate, mujoco_batch_rate;

// A robot, loaded on first use (not while the benchmarks register).
using RobotGetter = const PeerCase& (*)();

void BM_PeerMujoco(benchmark::State& state, RobotGetter get, const char* cone) {
  const PeerCase* robot = &get();
  const int n = static_cast<int>(state.range(0));
  MujocoEnvs envs = make_mujoco(*robot, n, cone);
  for (auto& d : envs.data) envs.step(d.get());  // warm-up (top of the file)
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (auto& d : envs.data) envs.step(d.get());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double steps = static_cast<double>(state.iterations()) * n;
  bench::report_throughput<double>(state, seconds, steps, 1, 1, 0.0);
  report_feet(state, *robot, mujoco_foot_forces(*robot, envs.model.get(), envs.data[0].get()));
  state.counters["contacts"] = envs.data[0]->ncon;
  state.counters["solver_iterations"] = envs.data[0]->solver_niter[0];
  state.counters["bytes_per_env"] = envs.bytes_per_env;
  const mjData* d = envs.data[0].get();
  state.counters["mjdata_in_use_bytes"] = static_cast<double>(sizeof(mjData) + d->nbuffer + d->maxuse_arena + d->maxuse_stack);
  if (std::string(cone) == "elliptic") mujoco_rate[robot->name] = steps / seconds;
}

// MuJoCo's batch API on all cores (the top of the file).
void BM_PeerMujocoBatch(benchmark::State& state, RobotGetter get) {
  const PeerCase* robot = &get();
  const int n = static_cast<int>(state.range(0));
  MujocoEnvs settled = make_mujoco(*robot, 1, "elliptic");
  mjBatchConfig config;
  mjb_defaultConfig(&config);
  char error[1000] = "";
  std::unique_ptr<mjBatch, void (*)(mjBatch*)> batch(mjb_makeBatch(settled.model.get(), n, &config, error, sizeof error),
                                                     mjb_deleteBatch);
  if (!batch) {
    state.SkipWithError((std::string("mjb_makeBatch: ") + error).c_str());
    return;
  }
  const int nstate = mjb_nstate(batch.get());
  std::vector<mjtNum> row(static_cast<size_t>(nstate));
  mj_getState(settled.model.get(), settled.data[0].get(), row.data(), mjSTATE_INTEGRATION);
  for (int e = 0; e < n; ++e) std::copy(row.begin(), row.end(), mjb_state(batch.get()) + static_cast<size_t>(e) * nstate);
  const mjfBatchFunc step = [](const mjModel* m, mjData* d, int, void* arg) { pd_step(*static_cast<const PeerCase*>(arg), m, d); };
  void* arg = const_cast<PeerCase*>(robot);
  bool failed = mjb_apply(batch.get(), nullptr, 0, step, arg, 1) != 0;  // warm-up
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) failed |= mjb_apply(batch.get(), nullptr, 0, step, arg, 1) != 0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed) state.SkipWithError((std::string("a simulation failed: ") + mjb_error(batch.get(), 0)).c_str());
  const double steps = static_cast<double>(state.iterations()) * n;
  bench::report_throughput<double>(state, seconds, steps, mjb_nthread(batch.get()), 1, 0.0);
  mujoco_batch_rate[robot->name] = steps / seconds;
}

// --- batchdyn -----------------------------------------------------------------------------------

// threads: 1, or 0 for all cores (the same count as MuJoCo's batch).
template <class T>
void BM_PeerBatchdyn(benchmark::State& state, RobotGetter get, int threads) {
  const PeerCase* robot = &get();
  const int n = static_cast<int>(state.range(0));
  const Model& m = robot->model;
  const double heap_before = heap_bytes();
  Batch<T> batch(m, n, threads);
  const double state_bytes_per_env = (heap_bytes() - heap_before) / n;  // before any step: no workspace yet
  std::vector<double> kp(static_cast<size_t>(m.nv), 0.0), kd(kp.size(), 0.0);
  for (int k = 6; k < m.nv; ++k) kp[static_cast<size_t>(k)] = robot->kp[static_cast<size_t>(k - 6)], kd[static_cast<size_t>(k)] = robot->kd[static_cast<size_t>(k - 6)];
  batch.set_control_mode(ControlMode::PositionPD);
  batch.set_pd_gains(kp, kd);
  batch.set_effort_limits(motor_torque_limits(m.effort_limit, m.actuators));
  for (int e = 0; e < n; ++e) {
    for (int k = 0; k < m.nq; ++k) batch.q()[e * m.nq + k] = static_cast<T>(robot->q[static_cast<size_t>(k)]);
    for (int k = 6; k < m.nv; ++k) batch.target()[e * m.nv + k] = static_cast<T>(robot->target[static_cast<size_t>(k - 6)]);
  }
  for (int s = 0; s < static_cast<int>(std::lround(kSettle / kStep)); ++s) batch.step(T(kStep));
  batch.step(T(kStep));  // MuJoCo's warm-up step, so that both time the same states
  double iterations = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    batch.step(T(kStep));
    iterations += static_cast<double>(batch.contact_iterations()[0]);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double bytes_per_env = (heap_bytes() - heap_before) / n;  // top of the file
  if (batch.failed_count() > 0) state.SkipWithError("some environment failed or did not converge");
  const double steps = static_cast<double>(state.iterations()) * n;
  bench::report_throughput<T>(state, seconds, steps, batch.threads(), Batch<T>::W, 0.0);
  // Env 0's normal forces per foot geometry: the sum over its candidates (world z).
  std::vector<double> fz(robot->feet.size(), 0.0);
  const int c = batch.contact_candidates();
  for (int k = 0; k < c; ++k) {
    const CollisionGeometry& geometry = m.contacts.geometries[static_cast<size_t>(m.contacts.candidates[static_cast<size_t>(k)].geometry)];
    for (size_t foot = 0; foot < robot->feet.size(); ++foot)
      if (geometry.name == robot->feet[foot] || m.bodies[static_cast<size_t>(geometry.body)].name == robot->feet[foot])
        fz[foot] += static_cast<double>(batch.contact_forces()[k * 3 + 2]);
  }
  report_feet(state, *robot, fz);
  state.counters["admm_iterations"] = iterations / static_cast<double>(state.iterations());
  state.counters["candidates"] = c;
  if (threads == 1) {
    state.counters["bytes_per_env"] = bytes_per_env;
    state.counters["state_bytes_per_env"] = state_bytes_per_env;
    state.counters["workspace_bytes"] = (bytes_per_env - state_bytes_per_env) * n;  // the one thread's
  }
  const auto& peer = threads == 1 ? mujoco_rate : mujoco_batch_rate;
  if (peer.count(robot->name)) state.counters["vs_mujoco"] = steps / seconds / peer.at(robot->name);
}

const bool mujoco_registered = [] {
  benchmark::AddCustomContext("mujoco", mj_versionString());  // in the JSON's context: the page states it
  for (auto [name, robot] : {std::pair<std::string, RobotGetter>{"a1_standing", &a1}, {"humanoid_standing", &humanoid},
                             {"go2_mjcf_standing", &go2_mjcf}, {"h1_mjcf_standing", &h1_mjcf}}) {
    const bool from_file = name.find("_mjcf_") != std::string::npos;  // the file's own cone (elliptic)
    for (const char* cone : {"elliptic", "pyramidal"})
      if (!from_file || std::string(cone) == "elliptic")
      benchmark::RegisterBenchmark(("PeerMujoco<double>/" + name + "/cone:" + cone).c_str(), BM_PeerMujoco, robot, cone)
          ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
    benchmark::RegisterBenchmark(("PeerBatchdyn<double>/" + name).c_str(), BM_PeerBatchdyn<double>, robot, 1)
        ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
    benchmark::RegisterBenchmark(("PeerBatchdyn<float>/" + name).c_str(), BM_PeerBatchdyn<float>, robot, 1)
        ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
    // All cores: MuJoCo's batch API, then batchdyn on as many threads.
    benchmark::RegisterBenchmark(("PeerMujocoBatch<double>/" + name + "/cone:elliptic/threads:all").c_str(), BM_PeerMujocoBatch,
                                 robot)->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
    benchmark::RegisterBenchmark(("PeerBatchdyn<double>/" + name + "/threads:all").c_str(), BM_PeerBatchdyn<double>, robot, 0)
        ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
    benchmark::RegisterBenchmark(("PeerBatchdyn<float>/" + name + "/threads:all").c_str(), BM_PeerBatchdyn<float>, robot, 0)
        ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
  }
  return true;
}();

// --- forward dynamics without contact: mj_forward vs batched ABA --------------
// The shipped humanoid (free flyer + 30 revolute joints) without collision geometry, at 4096
// random states (joint positions within their limits, root at rest, random joint velocities and
// torques). MuJoCo's mj_forward (kinematics, CRB, the factorisation of M, RNE, qacc = M^-1 (qfrc -
// c); the constraint solver disabled, there is nothing for it) one environment after another,
// against batchdyn's forward_dynamics() (batched ABA, lanes of W, one thread) on the same states.
// Counters: env-evaluations/s per core; the batchdyn cases also vs_mujoco (their rate over
// MuJoCo's in the same run: --benchmark_filter=PeerForward) and max_joint_qdd_difference, the
// largest |qacc - qdd| over the joints' accelerations of env 0..15 relative to max(1, |qdd|)
// (the roots' accelerations are in different conventions: MuJoCo's linear part is in the world
// frame).

struct ForwardStates {
  Model model = load_urdf_file(bench::model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  std::vector<Eigen::VectorXd> q, v, tau;
};

const ForwardStates& forward_states(int n) {
  static std::map<int, ForwardStates> cache;
  auto [it, inserted] = cache.try_emplace(n);
  if (!inserted) return it->second;
  ForwardStates& s = it->second;
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0, 1);
  for (int e = 0; e < n; ++e) {
    s.q.push_back(random_configuration<double>(s.model, rng));
    Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(s.model.nv, [&] { return normal(rng); }), tau = v;
    v.head(6).setZero();
    for (int k = 0; k < s.model.nv; ++k) tau[k] = k < 6 ? 0.0 : 5.0 * normal(rng);
    s.v.push_back(v);
    s.tau.push_back(tau);
  }
  return s;
}

std::map<std::string, double> mujoco_forward_rate;           // env-evaluations/s of MuJoCo's case
std::vector<std::vector<double>> mujoco_forward_joint_qacc;  // env 0..15, the joints' qacc

void BM_PeerMujocoForward(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const ForwardStates& s = forward_states(n);
  std::unique_ptr<mjModel, void (*)(mjModel*)> model(load_mjcf(mjcf_of(s.model, "elliptic")), mj_deleteModel);
  model->opt.disableflags |= mjDSBL_CONSTRAINT;
  std::vector<std::unique_ptr<mjData, void (*)(mjData*)>> data;
  for (int e = 0; e < n; ++e) {
    mjData* d = mj_makeData(model.get());
    const Eigen::VectorXd& q = s.q[static_cast<size_t>(e)];
    const double root[7] = {q[0], q[1], q[2], q[6], q[3], q[4], q[5]};  // MuJoCo: quaternion w x y z
    std::copy(root, root + 7, d->qpos);
    std::copy(q.data() + 7, q.data() + q.size(), d->qpos + 7);
    std::copy(s.v[static_cast<size_t>(e)].data(), s.v[static_cast<size_t>(e)].data() + s.model.nv, d->qvel);
    std::copy(s.tau[static_cast<size_t>(e)].data(), s.tau[static_cast<size_t>(e)].data() + s.model.nv, d->qfrc_applied);
    data.emplace_back(d, mj_deleteData);
  }
  for (auto& d : data) mj_forward(model.get(), d.get());  // warm-up (top of the file)
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (auto& d : data) mj_forward(model.get(), d.get());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double evaluations = static_cast<double>(state.iterations()) * n;
  bench::report_throughput<double>(state, seconds, evaluations, 1, 1, 0.0);
  mujoco_forward_rate["humanoid"] = evaluations / seconds;
  mujoco_forward_joint_qacc.clear();
  for (int e = 0; e < std::min(n, 16); ++e)
    mujoco_forward_joint_qacc.emplace_back(data[static_cast<size_t>(e)]->qacc + 6, data[static_cast<size_t>(e)]->qacc + s.model.nv);
}

template <class T>
void BM_PeerBatchdynForward(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const ForwardStates& s = forward_states(n);
  const Model& m = s.model;
  Batch<T> batch(m, n, 1);
  for (int e = 0; e < n; ++e) {
    const auto i = static_cast<size_t>(e);
    bench::set_environment(batch, e, s.q[i], s.v[i], s.tau[i]);
  }
  const double seconds = bench::time_forward_dynamics(state, batch);  // with a warm-up call, as MuJoCo's
  const double evaluations = static_cast<double>(state.iterations()) * n;
  bench::report_throughput<T>(state, seconds, evaluations, 1, Batch<T>::W, algorithm_flops(m, Algorithm::Aba, 0));
  if (mujoco_forward_rate.count("humanoid")) state.counters["vs_mujoco"] = evaluations / seconds / mujoco_forward_rate["humanoid"];
  double difference = 0;
  for (size_t e = 0; e < mujoco_forward_joint_qacc.size(); ++e)
    for (int k = 6; k < m.nv; ++k) {
      const double qdd = static_cast<double>(batch.qdd()[static_cast<long>(e) * m.nv + k]);
      difference = std::max(difference, std::abs(mujoco_forward_joint_qacc[e][static_cast<size_t>(k - 6)] - qdd) / std::max(1.0, std::abs(qdd)));
    }
  if (!mujoco_forward_joint_qacc.empty()) state.counters["max_joint_qdd_difference"] = difference;
}

const bool mujoco_forward_registered = [] {
  benchmark::RegisterBenchmark("PeerForwardMujoco<double>/humanoid", BM_PeerMujocoForward)
      ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
  benchmark::RegisterBenchmark("PeerForwardBatchdyn<double>/humanoid", BM_PeerBatchdynForward<double>)
      ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
  benchmark::RegisterBenchmark("PeerForwardBatchdyn<float>/humanoid", BM_PeerBatchdynForward<float>)
      ->ArgNames({"N"})->Arg(4096)->UseRealTime()->MinTime(1.0);
  return true;
}();

}  // namespace
