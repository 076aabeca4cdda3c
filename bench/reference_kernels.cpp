// Throughput of the scalar reference kernels on the shipped models, one thread, one
// environment at a time. items_per_second = environment evaluations per second. The ratios
// that matter are within one run: ABA vs the dense joint-space solve (CRBA + RNEA + Cholesky),
// dense constrained solve vs ABA. The batched SIMD kernels of later issues are measured
// against BM_Aba here.
//
//   ./build/release/bench/batchdyn_bench --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <Eigen/Cholesky>
#include <memory>
#include <random>

#include "bench/bench_common.hpp"
#include "batchdyn.hpp"

namespace {
using namespace batchdyn;

using bench::Case;
using bench::model_path;

const std::vector<Case>& reference_cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    auto with = [](Model m, const std::string& json) {
      if (!json.empty()) add_constraints_from_json_file(m, model_path(json));
      return m;
    };
    c.push_back({"double_pendulum", load_urdf_file(model_path("double_pendulum.urdf"))});
    c.push_back({"four_bar", load_urdf_file(model_path("four_bar.urdf"))});
    c.push_back({"quadruped+feet", with(load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer), "quadruped_feet.json")});
    c.push_back({"humanoid+feet", with(load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer), "humanoid_feet.json")});
    c.push_back({"biped_fourbar+feet", with(load_urdf_file(model_path("biped_fourbar.urdf"), RootJoint::FreeFlyer), "biped_fourbar_feet.json")});
    c.push_back({"cycle:32", build_generated(generate_cycle(32))});
    return c;
  }();
  return all;
}

template <class Body>
void run(benchmark::State& state, const Model& model, Body&& body) {
  const bench::States s = bench::random_states(model, 64, 7);  // varied inputs for the branch predictor and caches
  size_t k = 0;
  for (auto _ : state) {
    body(s.q[k], s.v[k], s.tau[k]);
    k = (k + 1) & 63;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["nv"] = model.nv;
  state.counters["constraint_rows"] = model.constraint_rows;
}

void BM_Aba(benchmark::State& state, const Model* model) {
  Data<double> data(*model);
  run(state, *model, [&](auto& q, auto& v, auto& tau) { benchmark::DoNotOptimize(aba(*model, data, q, v, tau).data()); });
}

void BM_Rnea(benchmark::State& state, const Model* model) {
  Data<double> data(*model);
  run(state, *model, [&](auto& q, auto& v, auto& tau) { benchmark::DoNotOptimize(rnea(*model, data, q, v, tau).data()); });
}

void BM_Crba(benchmark::State& state, const Model* model) {
  Data<double> data(*model);
  run(state, *model, [&](auto& q, auto&, auto&) { benchmark::DoNotOptimize(crba(*model, data, q).data()); });
}

// The dense joint-space baseline for forward dynamics: M from CRBA, b from RNEA, Cholesky solve.
void BM_DenseForwardDynamics(benchmark::State& state, const Model* model) {
  Data<double> data(*model);
  Eigen::LLT<Eigen::MatrixXd> llt(model->nv);
  Eigen::VectorXd rhs(model->nv);
  run(state, *model, [&](auto& q, auto& v, auto& tau) {
    rhs = tau - nonlinear_effects(*model, data, q, v);
    llt.compute(crba(*model, data, q));
    llt.solveInPlace(rhs);
    benchmark::DoNotOptimize(rhs.data());
  });
}

void BM_ConstrainedDense(benchmark::State& state, const Model* model) {
  Data<double> data(*model);
  ConstrainedData<double> cd(*model);
  run(state, *model, [&](auto& q, auto& v, auto& tau) {
    benchmark::DoNotOptimize(constrained_forward_dynamics(*model, data, cd, q, v, tau).data());
  });
}

void BM_DelassusDense(benchmark::State& state, const Model* model) {
  Data<double> data(*model);
  ConstrainedData<double> cd(*model);
  run(state, *model, [&](auto& q, auto&, auto&) { benchmark::DoNotOptimize(delassus(*model, data, cd, q).data()); });
}

// The dense reference contact step (kernels/contact/contact_step.hpp) on the shipped quadruped standing
// crouched (hip flexion 0.8, knee -1.6 rad, inside the joint limits), its four sphere feet on the
// plane (4 active candidates, 12 rows), from the same state each time (cold-start ADMM). The
// batched contact stage will be measured against it.
void BM_DenseContactStep(benchmark::State& state) {
  static const Model quadruped = load_urdf_file(model_path("quadruped.urdf"), RootJoint::FreeFlyer);
  Data<double> data(quadruped);
  Eigen::VectorXd q = neutral_configuration<double>(quadruped);
  for (const char* leg : {"FL", "FR", "HL", "HR"}) {
    q[quadruped.bodies[quadruped.joint_index(std::string(leg) + "_hip_flexion")].idx_q] = 0.8;
    q[quadruped.bodies[quadruped.joint_index(std::string(leg) + "_knee")].idx_q] = -1.6;
  }
  q[2] = 0.5 * std::cos(0.8) + 0.02;
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(quadruped.nv), tau = v;
  int iterations = 0, active = 0, limits = 0;
  for (auto _ : state) {
    const ContactStepResult r = dense_contact_step(quadruped, data, q, v, tau, 1e-3);
    iterations = r.iterations, active = static_cast<int>(r.active.size()), limits = static_cast<int>(r.limits.size());
    benchmark::DoNotOptimize(r.v.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["admm_iterations"] = iterations;
  state.counters["active_candidates"] = active;
  state.counters["active_limits"] = limits;
}
BENCHMARK(BM_DenseContactStep)->Name("DenseContactStep/quadruped_crouching");

const bool reference_registered = [] {
  for (const Case& c : reference_cases()) {
    benchmark::RegisterBenchmark(("Aba/" + c.name).c_str(), BM_Aba, &c.model);
    benchmark::RegisterBenchmark(("Rnea/" + c.name).c_str(), BM_Rnea, &c.model);
    benchmark::RegisterBenchmark(("Crba/" + c.name).c_str(), BM_Crba, &c.model);
    benchmark::RegisterBenchmark(("DenseForwardDynamics/" + c.name).c_str(), BM_DenseForwardDynamics, &c.model);
    if (c.model.constraint_rows > 0) {
      benchmark::RegisterBenchmark(("ConstrainedDense/" + c.name).c_str(), BM_ConstrainedDense, &c.model);
      benchmark::RegisterBenchmark(("DelassusDense/" + c.name).c_str(), BM_DelassusDense, &c.model);
    }
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
