// The Pinocchio peer: Pinocchio 4 (the `pin` wheel's headers; this file is built only when CMake
// finds them) and batchdyn on the same robots, in one run, one core each:
//   PeerPinocchio/aba/<robot>/N:1024                     pinocchio::aba, double, one state after another
//   PeerPinocchioBatchdyn/aba<double|float>/<robot>/N:1024
//                                                        Batch::forward_dynamics(), one thread, the same states
//   PeerPinocchio/constraintDynamics<k>/<case>/N:1024    pinocchio::constraintDynamics (proxLTL: the sparse
//                                                        KKT factorisation, then k proximal iterations)
//   PeerPinocchio/lcaba<k>/<case>/N:1024                 pinocchio::lcaba (Pinocchio's own LCABA, k iterations)
//   PeerPinocchio/computeDelassusMatrix/<case>/N:1024    and computePvDelassusMatrix: G = J M^-1 J^T (their own
//                                                        kinematics pass included), symmetrised: Pinocchio
//                                                        fills the upper triangle
// The batchdyn rows those compare with are in the same run: Loops/Lcaba<k><T>/<case>/N:1024
// (bench/batched_loops.cpp) and Delassus/pv-osimr/Simd/<T>/<case>/N:1024/threads:1
// (bench/batched_delassus.cpp). bench/benchmarks_page.py sets them side by side.
//
// "The same robot": Pinocchio's model is built here from batchdyn's Model (pinocchio_model below),
// joint by joint: the same bodies (fixed links merged), placements, axes and inertias, armature
// and gravity, so both libraries compute the same dynamics on the same numbers. Before timing, each
// case checks that on its first state Pinocchio's qdd (or G) equals batchdyn's, and reports an
// error instead of a timing if not. Two deliberate differences from Pinocchio's URDF parser:
// continuous joints are Pinocchio's revolute joints (batchdyn's angle coordinate; the parser's
// JointModelRUB* carries cos/sin, slightly more work), and every 1-dof joint gets 0.01 kg m^2 of
// armature in both libraries (the hands' massless finger links make M singular without it, as in
// python/tests/test_pinocchio_parity.py). Joint damping is zeroed (Pinocchio's aba has none).
//
// Pinocchio is compiled header-only here (its templates instantiated in this file with this
// build's flags, -march=native included), as an application that includes its headers is; the
// wheel's precompiled libpinocchio is not linked. aba runs with its default convention (LOCAL).
// constraintDynamics and lcaba run exactly k iterations (accuracy < 0 never converges early),
// with mu = 1e-6; the loop rows of batchdyn run exactly k sweeps too.
#define PINOCCHIO_DISABLE_UNSUPPORTED_WARNINGS  // constraintDynamics, lcaba, computeDelassusMatrix: "the API will change"
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/delassus.hpp>
#include <pinocchio/algorithm/loop-constrained-aba.hpp>
#include <pinocchio/multibody.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch/batch.hpp"
#include "bench/bench_common.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "kernels/tree/aba.hpp"
#include "topology/configuration.hpp"

namespace {
using namespace batchdyn;
using bench::Case;
using bench::States;
using bench::random_states;

constexpr int kStates = 1024;
using ConstraintModels = std::vector<pinocchio::RigidConstraintModel>;
using ConstraintDatas = std::vector<pinocchio::RigidConstraintData>;

pinocchio::SE3 se3(const Transformd& t) {
  Eigen::Matrix3d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = t.rotation(i, j);
  return {r, Eigen::Vector3d(t.translation.x, t.translation.y, t.translation.z)};
}

Eigen::Vector3d vec(const Vec3d& v) { return {v.x, v.y, v.z}; }

// A 1-dof joint about (or along) `axis`: Pinocchio's axis-aligned joint when the axis is +x, +y
// or +z (as its URDF parser chooses), else its unaligned one.
template <class X, class Y, class Z, class Unaligned>
pinocchio::JointModel one_dof_joint(const Vec3d& axis) {
  if (axis.x == 1 && axis.y == 0 && axis.z == 0) return X();
  if (axis.x == 0 && axis.y == 1 && axis.z == 0) return Y();
  if (axis.x == 0 && axis.y == 0 && axis.z == 1) return Z();
  return Unaligned(vec(axis));
}

pinocchio::JointModel joint_model(const Body& b) {
  switch (b.joint_type) {
    case JointType::FreeFlyer: return pinocchio::JointModelFreeFlyer();
    case JointType::Spherical: return pinocchio::JointModelSpherical();
    case JointType::Prismatic:
      return one_dof_joint<pinocchio::JointModelPX, pinocchio::JointModelPY, pinocchio::JointModelPZ,
                           pinocchio::JointModelPrismaticUnaligned>(b.axis);
    case JointType::Revolute:
    case JointType::Continuous:
      return one_dof_joint<pinocchio::JointModelRX, pinocchio::JointModelRY, pinocchio::JointModelRZ,
                           pinocchio::JointModelRevoluteUnaligned>(b.axis);
  }
  throw std::logic_error("unknown joint type");
}

// Pinocchio's model of batchdyn's Model: joint i of Pinocchio is batchdyn's body i (both number
// bodies depth-first from the world, 0), so q, v and tau need no permutation.
pinocchio::Model pinocchio_model(const Model& m) {
  pinocchio::Model p;
  p.name = m.name;
  p.gravity.linear(vec(m.gravity));
  for (int i = 1; i < m.num_bodies(); ++i) {
    const Body& b = m.bodies[static_cast<size_t>(i)];
    const auto id = p.addJoint(static_cast<pinocchio::JointIndex>(b.parent), joint_model(b), se3(b.joint_placement), b.joint_name);
    Eigen::Matrix3d inertia;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) inertia(r, c) = b.inertia.inertia_com(r, c);
    p.appendBodyToJoint(id, pinocchio::Inertia(b.inertia.mass, vec(b.inertia.com), inertia), pinocchio::SE3::Identity());
    if (p.idx_qs[id] != b.idx_q || p.idx_vs[id] != b.idx_v)
      throw std::runtime_error(m.name + ": joint " + b.joint_name + " has other coordinates in Pinocchio's model");
  }
  p.armature = Eigen::Map<const Eigen::VectorXd>(m.armature.data(), m.nv);
  return p;
}

// The robot as both libraries time it: 0.01 armature on every 1-dof joint, no damping, no
// Baumgarte gains on the constraints (Pinocchio's default corrector).
Model as_compared(Model m) {
  for (Constraint& c : m.constraints) c.kp = c.kd = 0.0;
  for (int i = 1; i < m.num_bodies(); ++i) {
    const Body& b = m.bodies[static_cast<size_t>(i)];
    for (int k = 0; k < b.nv; ++k) m.armature[static_cast<size_t>(b.idx_v + k)] = is_single_dof(b.joint_type) ? 0.01 : 0.0;
  }
  std::fill(m.damping.begin(), m.damping.end(), 0.0);
  return m;
}

ConstraintModels constraint_models(const Model& m, const pinocchio::Model& p) {
  ConstraintModels out;
  for (const Constraint& c : m.constraints) {
    if (c.type == ConstraintType::Revolute) throw std::runtime_error(m.name + ": Pinocchio has no revolute constraint (" + c.name + ")");
    const auto type = c.type == ConstraintType::Connect ? pinocchio::CONTACT_3D : pinocchio::CONTACT_6D;
    out.emplace_back(type, p, static_cast<pinocchio::JointIndex>(c.body1), se3(c.placement1),
                     static_cast<pinocchio::JointIndex>(c.body2), se3(c.placement2), pinocchio::LOCAL);
  }
  return out;
}

ConstraintDatas constraint_datas(const ConstraintModels& models) {
  ConstraintDatas out;
  for (const auto& c : models) out.emplace_back(c);
  return out;
}

double relative_error(const Eigen::MatrixXd& ours, const Eigen::MatrixXd& theirs) {
  return (ours - theirs).cwiseAbs().maxCoeff() / std::max(1.0, theirs.cwiseAbs().maxCoeff());
}

// batchdyn's reference qdd of one state (kernels/tree/aba.hpp, kernels/loops/constrained_dynamics.hpp
// converged), for the model check.
Eigen::VectorXd batchdyn_qdd(const Model& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau,
                             bool constraints) {
  Data<double> data(m);
  if (!constraints) return aba(m, data, q, v, tau);
  ConstrainedData<double> cd(m);
  return constrained_forward_dynamics(m, data, cd, q, v, tau);
}

template <class F>
double time_states(benchmark::State& state, F&& f) {
  for (int e = 0; e < kStates; ++e) f(e);  // warm-up: first touches of Pinocchio's Data
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (int e = 0; e < kStates; ++e) f(e);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_PinocchioAba(benchmark::State& state, const Model* model) {
  const pinocchio::Model p = pinocchio_model(*model);
  pinocchio::Data d(p);
  const States s = random_states(*model, kStates, 11);
  const double error = relative_error(batchdyn_qdd(*model, s.q[0], s.v[0], s.tau[0], false), pinocchio::aba(p, d, s.q[0], s.v[0], s.tau[0]));
  if (!(error < 1e-9)) return state.SkipWithError(("aba differs from batchdyn's by " + std::to_string(error)).c_str());
  const double seconds = time_states(state, [&](int e) {
    benchmark::DoNotOptimize(pinocchio::aba(p, d, s.q[static_cast<size_t>(e)], s.v[static_cast<size_t>(e)], s.tau[static_cast<size_t>(e)]).data());
  });
  bench::report_throughput<double>(state, seconds, static_cast<double>(state.iterations()) * kStates, 1, 1, 0.0);
}

template <class T>
void BM_BatchdynAba(benchmark::State& state, const Model* model) {
  Batch<T> batch(*model, kStates, 1);
  batch.set_use_constraints(false), batch.set_effort_clamp(false);  // the tree's ABA on tau as given, as pinocchio::aba
  const States s = random_states(*model, kStates, 11);
  for (int e = 0; e < kStates; ++e) {
    const auto i = static_cast<size_t>(e);
    bench::set_environment(batch, e, s.q[i], s.v[i], s.tau[i]);
  }
  const double seconds = bench::time_forward_dynamics(state, batch);
  bench::report_throughput<T>(state, seconds, static_cast<double>(state.iterations()) * kStates, 1, Batch<T>::W,
                              static_cast<double>(aba_flops(*model).total()));
}

enum class Constrained { ConstraintDynamics, Lcaba };

void BM_PinocchioConstrained(benchmark::State& state, const Case* c, Constrained algorithm, int iterations) {
  const Model& model = c->model;
  const pinocchio::Model p = pinocchio_model(model);
  pinocchio::Data d(p);
  const auto models = constraint_models(model, p);
  auto datas = constraint_datas(models);
  pinocchio::initConstraintDynamics(p, d, models, datas);
  if (algorithm == Constrained::Lcaba) pinocchio::computeJointMinimalOrdering(p, d, models);  // lcaba's elimination order
  pinocchio::ProximalSettings settings(0.0, 1e-6, iterations);
  settings.absolute_accuracy = settings.relative_accuracy = -1.0;  // exactly `iterations` iterations
  const States s = random_states(model, kStates, 11);
  const auto solve = [&](int e) -> const Eigen::VectorXd& {
    const auto i = static_cast<size_t>(e);
    return algorithm == Constrained::Lcaba ? pinocchio::lcaba(p, d, s.q[i], s.v[i], s.tau[i], models, datas, settings)
                                           : pinocchio::constraintDynamics(p, d, s.q[i], s.v[i], s.tau[i], models, datas, settings);
  };
  // The model check, converged: 50 iterations, mu small, against batchdyn's converged solver.
  pinocchio::ProximalSettings converged(1e-12, 1e-8, 50);
  const auto& check = algorithm == Constrained::Lcaba ? pinocchio::lcaba(p, d, s.q[0], s.v[0], s.tau[0], models, datas, converged)
                                                      : pinocchio::constraintDynamics(p, d, s.q[0], s.v[0], s.tau[0], models, datas, converged);
  const double error = relative_error(batchdyn_qdd(model, s.q[0], s.v[0], s.tau[0], true), check);
  if (!(error < 1e-4)) return state.SkipWithError(("qdd differs from batchdyn's by " + std::to_string(error)).c_str());
  const double seconds = time_states(state, [&](int e) { benchmark::DoNotOptimize(solve(e).data()); });
  bench::report_throughput<double>(state, seconds, static_cast<double>(state.iterations()) * kStates, 1, 1, 0.0);
  state.counters["constraint_rows"] = model.constraint_rows;
}

void BM_PinocchioDelassus(benchmark::State& state, const Case* c, bool pv) {
  const Model& model = c->model;
  const pinocchio::Model p = pinocchio_model(model);
  pinocchio::Data d(p);
  const auto models = constraint_models(model, p);
  auto datas = constraint_datas(models);
  const int m = model.constraint_rows;
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(m, m);
  if (pv) pinocchio::initPvDelassus(p, d, models);
  const States s = random_states(model, kStates, 11);
  const auto compute = [&](int e) {
    const auto& q = s.q[static_cast<size_t>(e)];
    if (pv) pinocchio::computePvDelassusMatrix(p, d, q, models, datas, g, 0.0);
    else pinocchio::computeDelassusMatrix(p, d, q, models, datas, g, 0.0);
    g.triangularView<Eigen::StrictlyLower>() = g.transpose();  // Pinocchio fills the upper triangle
  };
  compute(0);
  Data<double> data(model);
  ConstrainedData<double> cd(model);
  // Against batchdyn's dense J M^-1 J^T (kernels/loops/constrained_dynamics.hpp; PV-OSIMr equals
  // it to 1e-15 on these cases). Pinocchio 4.1's matrix agrees to 1e-14 when every constraint
  // holds a link to the world; with a constraint between two moving links it does not (it
  // propagates joint 1's side only; python/tests/test_pinocchio_parity.py), and the page says so.
  state.counters["differs_from_batchdyn"] = relative_error(delassus(model, data, cd, s.q[0]), g);
  const double seconds = time_states(state, [&](int e) {
    compute(e);
    benchmark::DoNotOptimize(g.data());
  });
  bench::report_throughput<double>(state, seconds, static_cast<double>(state.iterations()) * kStates, 1, 1, 0.0);
  state.counters["constraint_rows"] = m;
}

// The robots of tests/robots/ (and the shipped humanoid): floating-base robots on a free flyer,
// arms, hands and torsos fixed.
const std::vector<Case>& aba_robots() {
  static const std::vector<Case> all = [] {
    const std::vector<std::pair<std::string, RootJoint>> files = {
        {"a1.urdf", RootJoint::FreeFlyer},       {"anymal_b.urdf", RootJoint::FreeFlyer},  {"go2.urdf", RootJoint::FreeFlyer},
        {"solo.urdf", RootJoint::FreeFlyer},     {"b1-z1.urdf", RootJoint::FreeFlyer},     {"anymal_b_kinova.urdf", RootJoint::FreeFlyer},
        {"bolt.urdf", RootJoint::FreeFlyer},     {"icub.urdf", RootJoint::FreeFlyer},      {"romeo.urdf", RootJoint::FreeFlyer},
        {"cassie.sdf", RootJoint::FreeFlyer},    {"talos_left_arm.urdf", RootJoint::Fixed}, {"ur10_robot.urdf", RootJoint::Fixed},
        {"kinova.urdf", RootJoint::Fixed},       {"z1.urdf", RootJoint::Fixed},            {"baxter.urdf", RootJoint::Fixed},
        {"allegro_left_hand.urdf", RootJoint::Fixed}, {"tiago_dual.urdf", RootJoint::Fixed}, {"pr2.urdf", RootJoint::Fixed},
    };
    std::vector<Case> c;
    c.push_back({"humanoid", as_compared(load_urdf_file(bench::model_path("humanoid.urdf"), RootJoint::FreeFlyer))});
    for (const auto& [file, root] : files)
      c.push_back({file.substr(0, file.rfind('.')), as_compared(load_robot_file(std::string(BATCHDYN_TEST_ROBOTS_DIR) + "/" + file, root))});
    return c;
  }();
  return all;
}

// The loop cases both libraries can state: connect and weld constraints only.
const std::vector<Case>& constrained_cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    for (const Case& l : bench::loop_models())
      if (std::none_of(l.model.constraints.begin(), l.model.constraints.end(), [](const Constraint& k) { return k.type == ConstraintType::Revolute; }))
        c.push_back({l.name, as_compared(l.model), l.start_on_loops});
    return c;
  }();
  return all;
}

const bool pinocchio_registered = [] {
  benchmark::AddCustomContext("pinocchio", PINOCCHIO_VERSION);  // in the JSON's context: the page states it
  const auto add = [](benchmark::internal::Benchmark* b) { b->ArgNames({"N"})->Arg(kStates)->UseRealTime()->MinTime(0.2); };
  for (const Case& c : aba_robots()) {
    add(benchmark::RegisterBenchmark(("PeerPinocchio/aba/" + c.name).c_str(), BM_PinocchioAba, &c.model));
    add(benchmark::RegisterBenchmark(("PeerPinocchioBatchdyn/aba<double>/" + c.name).c_str(), BM_BatchdynAba<double>, &c.model));
    add(benchmark::RegisterBenchmark(("PeerPinocchioBatchdyn/aba<float>/" + c.name).c_str(), BM_BatchdynAba<float>, &c.model));
  }
  for (const Case& c : constrained_cases()) {
    for (int k : {1, 3}) {
      add(benchmark::RegisterBenchmark(("PeerPinocchio/constraintDynamics" + std::to_string(k) + "/" + c.name).c_str(),
                                       BM_PinocchioConstrained, &c, Constrained::ConstraintDynamics, k));
      add(benchmark::RegisterBenchmark(("PeerPinocchio/lcaba" + std::to_string(k) + "/" + c.name).c_str(), BM_PinocchioConstrained, &c,
                                       Constrained::Lcaba, k));
    }
    add(benchmark::RegisterBenchmark(("PeerPinocchio/computeDelassusMatrix/" + c.name).c_str(), BM_PinocchioDelassus, &c, false));
    add(benchmark::RegisterBenchmark(("PeerPinocchio/computePvDelassusMatrix/" + c.name).c_str(), BM_PinocchioDelassus, &c, true));
  }
  return true;
}();

}  // namespace
