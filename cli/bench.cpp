// `batchdyn bench`: a timed run of batched forward dynamics (or full steps) on one model, with
// the figures a user compares: env-evaluations/s, per core, ns per environment, flops per
// environment and the share of the cores' peak.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "batch/batch.hpp"
#include "batch/throughput.hpp"
#include "kernels/loops/constrained_dynamics.hpp"
#include "kernels/contact/contact_step.hpp"
#include "kernels/tree/kinematics.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"

namespace batchdyn::cli {

namespace {

// --envs: beyond this the state buffers alone reach gigabytes per precision.
constexpr int kMaxBenchEnvs = 1 << 24;

// The shipped humanoid: in the source tree, or where `cmake --install` put it.
std::string default_model_path() {
  if (std::ifstream(BATCHDYN_SOURCE_MODEL).good()) return BATCHDYN_SOURCE_MODEL;
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path installed = (exe.parent_path() / BATCHDYN_INSTALLED_MODEL_FROM_BINDIR).lexically_normal();
    if (std::ifstream(installed).good()) return installed.string();
  }
  return BATCHDYN_SOURCE_MODEL;  // its "cannot open" names where the model was looked for
}


struct BenchSettings {
  Algorithm algorithm = Algorithm::Aba;  // what a run times (kernels/algorithms.hpp)
  int envs = 4096;
  int threads = 0;
  double seconds = 3.0;
  bool step = false;
  double dt = 1e-3;
  int substeps = 1;        // --substeps K: each step in K substeps (decimation)
  Integrator integrator = Integrator::SemiImplicitEuler;  // --integrator euler|rk4 (--step)
  bool pd = false;         // --pd: PD position control (kp 100, kd 5 per actuated dof) inside every substep
  bool randomize = false;  // --randomize: per-environment parameters (every body's inertia, gravity, damping, armature)
  int iterations = 0;      // --iterations K: exactly K solver iterations (tolerance 0); 0 = the solver's defaults
  bool passive_forces = true;  // --passive-forces on|off: the model's joint damping in the dynamics
  ContactSolver contact_solver = ContactSolver::Admm;  // --contact-solver admm|pgs: the contact stage's solver (--step)
  AdmmLinearSolve admm_linear_solve = AdmmLinearSolve::Cholesky;  // --admm-linear-solve cholesky|pv-soft: ADMM's x-step
  bool admm_polish = true;  // --admm-polish on|off: ADMM polishes its iterate (ContactSettings::polish)
  bool joint_limits = true;  // --joint-limits on|off: the joints' position limits as rows of the contact stage (ContactSettings::joint_limits)
  bool progress = false;
};

struct BenchResult {
  int lanes = 1, threads = 1;
  long calls = 0;
  double seconds = 0, bytes_per_env = 0;
  size_t block_bytes = 0;
  int failed = 0;
  double peak_per_cycle = 0;
  double measured_peak = 0;  // flops/s of one core, measured (batch/throughput.hpp)
  // The contact stage of a --step run (0 candidates: none ran): its last step, mean over envs.
  int contact_candidates = 0;
  double mean_in_contact = 0, mean_contact_iterations = 0;
};

std::string mode_name(const BenchSettings& s) {
  const AlgorithmTraits& traits = algorithm_traits(s.algorithm);
  if (traits.computes_delassus) return std::string("Delassus by ") + traits.title;
  if (traits.solves_constraints)
    return std::string(s.step ? "constrained step" : "constrained forward dynamics") + " by " + traits.title +
           (s.iterations > 0 ? " (" + std::to_string(s.iterations) + " iterations)" : "");
  return std::string(s.step ? "step" : "forward dynamics") + (s.substeps > 1 ? " (" + std::to_string(s.substeps) + " substeps)" : "") +
         (s.step && s.integrator == Integrator::RungeKutta4 ? " by RK4" : "") +
         (s.pd ? " with PD" : "") + (s.randomize ? " with per-env parameters" : "");
}

void draw_progress(double fraction) {
  const int width = 40, done = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\r[%s%s] %3d%%", std::string(static_cast<size_t>(done), '#').c_str(),
               std::string(static_cast<size_t>(width - done), '.').c_str(), static_cast<int>(fraction * 100));
  std::fflush(stderr);
}

// Random poses at rest, zero torque (a falling robot), the same for every algorithm.
template <class Engine>
void fill_random_poses(Engine& batch, const Model& model) {
  using T = typename Engine::T;
  std::mt19937 rng(1);
  for (int e = 0; e < batch.num_envs(); ++e) {
    const Eigen::VectorXd q = random_configuration<double>(model, rng);
    for (int k = 0; k < model.nq; ++k) batch.q()[e * model.nq + k] = static_cast<T>(q[k]);
  }
}

// With the contact stage in the step, each random pose is lifted along the ground's normal (a
// free-flyer root) until its lowest candidate touches the ground: robots dropped at rest onto
// the ground, not started deep inside it. A fixed-base model keeps its poses.
template <class Engine>
void rest_poses_on_ground(Engine& batch, const Model& model) {
  using T = typename Engine::T;
  if (model.num_bodies() < 2 || model.bodies[1].joint_type != JointType::FreeFlyer || model.contacts.candidates.empty()) return;
  Data<double> data(model);
  Eigen::VectorXd q(model.nq);
  const Vec3d& normal = model.contacts.ground.normal;
  for (int e = 0; e < batch.num_envs(); ++e) {
    T* qe = batch.q() + static_cast<long>(e) * model.nq;
    for (int k = 0; k < model.nq; ++k) q[k] = static_cast<double>(qe[k]);
    forward_kinematics(model, data, q);
    double lowest = std::numeric_limits<double>::infinity();
    for (const CandidateState& c : candidate_states(model, data)) lowest = std::min(lowest, c.gap);
    for (int k = 0; k < 3; ++k) qe[k] = static_cast<T>(q[k] - lowest * normal[k]);
  }
}

// Calls `call` (one pass over all environments) repeatedly for s.seconds after a warm-up.
template <class Engine, class Call>
BenchResult timed(Engine& batch, const BenchSettings& s, Call&& call) {
  using T = typename Engine::T;
  call();  // warm-up: thread pool, workspaces, caches
  BenchResult r;
  const auto start = std::chrono::steady_clock::now();
  auto last_draw = start;
  for (;;) {
    call();
    ++r.calls;
    const auto now = std::chrono::steady_clock::now();
    r.seconds = std::chrono::duration<double>(now - start).count();
    if (s.progress && now - last_draw > std::chrono::milliseconds(100)) {
      draw_progress(std::min(1.0, r.seconds / s.seconds));
      last_draw = now;
    }
    if (r.seconds >= s.seconds) break;
  }
  if (s.progress) std::fprintf(stderr, "\r%60s\r", "");
  r.lanes = Engine::W;
  r.threads = batch.threads();
  r.block_bytes = batch.block_workspace_bytes();
  r.bytes_per_env = batch.workspace_bytes_per_env();
  // Failures, not reports: --iterations K ends every solve at the cap, and random poses open loops.
  r.failed = static_cast<int>(std::count_if(batch.status().begin(), batch.status().end(),
                                            [](EnvStatus s) { return s != EnvStatus::Ok && !is_report(s); }));
  r.peak_per_cycle = peak_flops_per_cycle<T>();  // the core's SIMD peak, also for --scalar runs
  r.measured_peak = measured_peak_flops<T>();
  if constexpr (requires { batch.contact_iterations(); }) {
    if (s.step && batch.contact_stage_runs()) {  // contacts and / or joint limits
      const int c = batch.contacts() ? batch.contact_candidates() : 0, n = batch.num_envs();
      r.contact_candidates = c;
      for (int e = 0; e < n; ++e) {
        r.mean_contact_iterations += batch.contact_iterations()[static_cast<size_t>(e)] / static_cast<double>(n);
        for (int k = 0; k < c; ++k) r.mean_in_contact += static_cast<double>(batch.contact_flags()[static_cast<long>(e) * c + k]) / n;
      }
    }
  }
  return r;
}

// PD control on every 1-dof joint (kp 100, kd 5), targets at the current positions.
template <class Engine>
void configure_pd(Engine& batch, const Model& model) {
  std::vector<double> kp(static_cast<size_t>(model.nv), 0.0), kd(kp);
  for (int i = 1; i < model.num_bodies(); ++i)
    if (is_single_dof(model.bodies[i].joint_type))
      kp[static_cast<size_t>(model.bodies[i].idx_v)] = 100.0, kd[static_cast<size_t>(model.bodies[i].idx_v)] = 5.0;
  batch.set_pd_gains(kp, kd);
  batch.set_control_mode(ControlMode::PositionPD);
  for (int e = 0; e < batch.num_envs(); ++e)
    for (int i = 1; i < model.num_bodies(); ++i)
      if (is_single_dof(model.bodies[i].joint_type))
        batch.target()[static_cast<long>(e) * model.nv + model.bodies[i].idx_v] = batch.q()[static_cast<long>(e) * model.nq + model.bodies[i].idx_q];
}

// Every environment its own parameters: each body's mass scaled by 0.8..1.2, gravity, damping
// and armature varied (what domain randomisation does), so the kernels read per-env lanes.
template <class Engine>
void randomize_parameters(Engine& batch, const Model& model) {
  const int n = batch.num_envs();
  std::vector<int> envs(static_cast<size_t>(n));
  for (int e = 0; e < n; ++e) envs[static_cast<size_t>(e)] = e;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const RigidInertiad& I = model.bodies[i].inertia;
    std::vector<double> mass, com, inertia;
    for (int e = 0; e < n; ++e) {
      const double scale = 0.8 + 0.4 * counter_uniform(1, static_cast<std::uint64_t>(e), static_cast<std::uint64_t>(i));
      mass.push_back(I.mass * scale);
      for (int k = 0; k < 3; ++k) com.push_back(I.com[k]);
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) inertia.push_back(I.inertia_com.m[r][k] * scale);
    }
    batch.set_body_inertia(envs, i, mass, com, inertia);
  }
  std::vector<double> gravity, joint_values;
  for (int e = 0; e < n; ++e) {
    gravity.insert(gravity.end(), {0.0, 0.0, -9.81 * (0.95 + 0.1 * counter_uniform(2, static_cast<std::uint64_t>(e), 0))});
    for (int k = 0; k < model.nv; ++k) joint_values.push_back(0.01 * counter_uniform(3, static_cast<std::uint64_t>(e), static_cast<std::uint64_t>(k)));
  }
  batch.set_gravity(envs, gravity);
  batch.set_damping(envs, joint_values);
  batch.set_armature(envs, joint_values);
}

template <class Engine>
BenchResult run(const Model& model, const BenchSettings& s) {
  using T = typename Engine::T;
  Engine batch(model, s.envs, s.threads);
  batch.set_passive_forces(s.passive_forces);
  const AlgorithmTraits& traits = algorithm_traits(s.algorithm);
  batch.set_use_constraints(traits.solves_constraints);
  if (traits.solves_constraints) batch.set_constraint_solver(s.algorithm);
  if (s.iterations > 0) {
    ProximalSettings settings = batch.constraint_settings();
    settings.max_iterations = s.iterations;
    settings.tolerance = 0.0;
    batch.set_constraint_settings(settings);
  }
  ContactSettings contact_settings = batch.contact_settings();
  contact_settings.solver = s.contact_solver;
  contact_settings.admm_linear_solve = s.admm_linear_solve;
  contact_settings.polish = s.admm_polish;
  contact_settings.joint_limits = s.joint_limits;
  batch.set_contact_settings(contact_settings);
  fill_random_poses(batch, model);
  if (s.step && batch.constrained()) {
    // A rollout starts on its loops, as a user's reset puts it: a random pose far off them is
    // snapped shut by the stabilisation (batch/loop_stabilisation.hpp) and can blow up.
    std::vector<int> all(static_cast<size_t>(batch.num_envs()));
    for (int e = 0; e < batch.num_envs(); ++e) all[static_cast<size_t>(e)] = e;
    batch.reset(all, 1, 0.1);
  }
  if (s.step && batch.contacts()) rest_poses_on_ground(batch, model);
  batch.set_integrator(s.integrator);
  if (s.pd) configure_pd(batch, model);
  if (s.randomize) randomize_parameters(batch, model);
  auto call = [&] {  // (the dense Delassus matrix is timed by run_dense)
    if (traits.computes_delassus) batch.delassus(s.algorithm);
    else if (s.step) batch.step(static_cast<T>(s.dt), s.substeps);
    else batch.forward_dynamics();
  };
  return timed(batch, s, call);
}

// The dense baseline J M^{-1} J^T (CRBA, frame Jacobians, Cholesky; kernels/loops/constrained_dynamics.hpp),
// one environment after another on each thread, over the same random configurations.
template <class T>
BenchResult run_dense(const Model& model, const BenchSettings& s) {
  ScalarBatch<T> batch(model, s.envs, s.threads);  // holds the states, the thread count and the status
  fill_random_poses(batch, model);
  struct Local {
    explicit Local(const Model& m) : data(m), cd(m), q(m.nq) {}
    Data<T> data;
    ConstrainedData<T> cd;
    VectorX<T> q;
  };
  tbb::enumerable_thread_specific<Local> locals([&] { return Local(model); });
  tbb::task_arena arena(batch.threads());
  std::vector<T> sink(static_cast<size_t>(s.envs));
  auto call = [&] {
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, s.envs, 16), [&](const tbb::blocked_range<int>& range) {
        Local& l = locals.local();
        for (int e = range.begin(); e != range.end(); ++e) {
          l.q = Eigen::Map<const VectorX<T>>(batch.q() + static_cast<long>(e) * model.nq, model.nq);
          sink[static_cast<size_t>(e)] = delassus(model, l.data, l.cd, l.q)(0, 0);
        }
      });
    });
  };
  return timed(batch, s, call);
}

}  // namespace

int bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    const Options o = parse_options(
        args, with_model_options({"--algo", "--envs", "--threads", "--precision", "--seconds", "--dt", "--substeps", "--iterations",
                                  "--passive-forces", "--contact-solver", "--admm-linear-solve", "--admm-polish", "--joint-limits", "--integrator"}, kModelOptions),
        with_model_options({"--json", "--step", "--scalar", "--pd", "--randomize"}, kModelFlags));
    const Model model = load_model(o, default_model_path());
    const std::string algo = o.get("--algo").value_or("aba");
    BenchSettings s;
    s.algorithm = parse_algorithm(algo, "--algo");
    const AlgorithmTraits& traits = algorithm_traits(s.algorithm);
    const bool delassus_algorithm = traits.computes_delassus;
    if (traits.solves_constraints || delassus_algorithm) require_constraints(model, "--algo " + algo);
    s.iterations = integer_option(o, "--iterations", 0, 1, kMaxSolverIterations);  // 0: to convergence
    if (s.iterations > 0 && !traits.solves_constraints) throw Error("--iterations K is for --algo lcaba, proxbbo and constrained");
    s.envs = integer_option(o, "--envs", 4096, 1, kMaxBenchEnvs);
    s.threads = integer_option(o, "--threads", 0, 0, Batch<double>::max_threads());
    s.seconds = number_option(o, "--seconds", 3.0, 0.0, 3600.0, /*lo_exclusive=*/true);
    s.dt = number_option(o, "--dt", 1e-3, 0.0, 1.0, /*lo_exclusive=*/true);
    s.step = o.has_flag("--step");
    if (s.step && delassus_algorithm) throw Error("--step is for --algo aba");
    s.substeps = integer_option(o, "--substeps", 1, 1, 1000000);
    s.pd = o.has_flag("--pd");
    s.passive_forces = passive_forces_option(o, true);
    s.randomize = o.has_flag("--randomize");
    if (s.substeps > 1 && !s.step) throw Error("--substeps needs --step");
    if (const auto integrator = o.get("--integrator")) {
      s.integrator = parse_name(kIntegrators, *integrator, "--integrator");
      if (!s.step) throw Error("--integrator needs --step");
    }
    if (const auto solver = o.get("--contact-solver")) {
      s.contact_solver = parse_name(kContactSolvers, *solver, "--contact-solver");
      if (!s.step) throw Error("--contact-solver needs --step");
    }
    if (const auto solve = o.get("--admm-linear-solve")) {
      s.admm_linear_solve = parse_name(kAdmmLinearSolves, *solve, "--admm-linear-solve");
      if (!s.step || s.contact_solver != ContactSolver::Admm) throw Error("--admm-linear-solve needs --step and the admm contact solver");
    }
    s.admm_polish = on_off_option(o, "--admm-polish", true);
    if (o.get("--admm-polish") && (!s.step || s.contact_solver != ContactSolver::Admm))
      throw Error("--admm-polish needs --step and the admm contact solver");
    s.joint_limits = on_off_option(o, "--joint-limits", true);
    if (o.get("--joint-limits") && !s.step) throw Error("--joint-limits needs --step");
    if ((s.pd || s.randomize) && delassus_algorithm) throw Error("--pd and --randomize are for --algo aba, lcaba and proxbbo");
    if (s.randomize && s.algorithm == Algorithm::Constrained)
      throw Error("--randomize is not available with --algo constrained (the dense solver reads the model's parameters)");
    const std::string precision = o.get("--precision").value_or("double");
    if (precision != "float" && precision != "double") throw Error("--precision must be float or double");
    const bool json_output = o.has_flag("--json");
    s.progress = isatty(STDERR_FILENO) && s.seconds > 2.0;
    const bool scalar = o.has_flag("--scalar");

    if (scalar && s.algorithm == Algorithm::Delassus) throw Error("--scalar does not apply to --algo delassus (it is scalar)");
    BenchResult r;
    if (s.algorithm == Algorithm::Delassus) r = precision == "double" ? run_dense<double>(model, s) : run_dense<float>(model, s);
    else if (precision == "double") r = scalar ? run<ScalarBatch<double>>(model, s) : run<Batch<double>>(model, s);
    else r = scalar ? run<ScalarBatch<float>>(model, s) : run<Batch<float>>(model, s);

    const double envs = static_cast<double>(r.calls) * s.envs;
    const double rate = envs / r.seconds;
    // Flops of the algorithm per call (batch/throughput.hpp: the loop solvers at a fixed
    // --iterations K and without steps; the dense solvers are not counted: 0).
    // A step with the contact stage is not counted either (its ADMM iterates to convergence).
    const double flops = s.step && (s.algorithm != Algorithm::Aba || r.contact_candidates > 0)
                             ? 0.0 : algorithm_flops(model, s.algorithm, s.iterations) * s.substeps *
                                         (s.step ? evaluations_per_substep(s.integrator) : 1);
    const bool dense = s.algorithm == Algorithm::Delassus;
    const double ghz = cpu_ghz();
    const double peak = r.peak_per_cycle * ghz * 1e9 * r.threads;
    const double measured_peak = r.measured_peak * r.threads;
    nlohmann::json j;
    j["model"] = model.name;
    j["nq"] = model.nq;
    j["nv"] = model.nv;
    j["algo"] = algo;
    j["mode"] = delassus_algorithm ? "delassus" : s.step ? "step" : "forward_dynamics";
    j["substeps"] = s.substeps;
    j["integrator"] = name_of(kIntegrators, s.integrator);
    j["pd"] = s.pd;
    j["passive_forces"] = s.passive_forces;
    j["randomized_parameters"] = s.randomize;
    j["constraint_rows"] = model.constraint_rows;
    j["precision"] = precision;
    j["lanes"] = r.lanes;
    j["instruction_set"] = scalar || dense ? "scalar" : simd_instruction_set();
    j["threads"] = r.threads;
    j["envs"] = s.envs;
    j["calls"] = r.calls;
    j["seconds"] = r.seconds;
    j["env_evals_per_second"] = rate;
    j["env_evals_per_second_per_core"] = rate / r.threads;
    j["ns_per_env"] = 1e9 / rate;
    j["flops_per_env"] = flops;
    j["gflops"] = rate * flops * 1e-9;
    j["cpu_ghz"] = ghz;
    j["peak_gflops"] = peak * 1e-9;
    j["percent_of_peak"] = peak > 0 ? rate * flops / peak * 100 : 0.0;
    j["measured_peak_gflops"] = measured_peak * 1e-9;
    j["percent_of_measured_peak"] = rate * flops / measured_peak * 100;
    j["workspace_bytes_per_env"] = r.bytes_per_env;
    j["lane_block_bytes"] = r.block_bytes;
    j["failed_envs"] = r.failed;
    j["contact_candidates"] = r.contact_candidates;  // 0: no contacts solved (joint limits may still run the stage)
    j["mean_candidates_in_contact"] = r.mean_in_contact;
    j["contact_solver"] = contact_solver_name(s.contact_solver);
    j["admm_linear_solve"] = admm_linear_solve_name(s.admm_linear_solve);
    j["admm_polish"] = s.admm_polish;
    j["joint_limits"] = s.joint_limits;
    j["mean_contact_iterations"] = r.mean_contact_iterations;
    if (json_output) {
      out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      char line[1024];
      std::snprintf(line, sizeof line,
                    "%s (nv = %d): %s %s, %d envs, %s lanes x %d, %d thread%s, %.2f s\n"
                    "  %.0f env-evaluations/s, %.0f per core, %.1f ns per env\n"
                    "  %.0f flops per env -> %.2f GFLOP/s = %.1f %% of peak (%.1f GFLOP/s: %d flops/cycle x %.2f GHz x %d)\n"
                    "    = %.1f %% of the measured peak (%.1f GFLOP/s: fused multiply-adds on this core, this run, x %d)\n"
                    "  workspace %.0f bytes per env, %zu bytes per lane block%s\n",
                    model.name.c_str(), model.nv, mode_name(s).c_str(), precision.c_str(), s.envs,
                    scalar || dense ? "scalar" : simd_instruction_set(), r.lanes, r.threads, r.threads == 1 ? "" : "s",
                    r.seconds, rate, rate / r.threads, 1e9 / rate, flops, rate * flops * 1e-9,
                    peak > 0 ? rate * flops / peak * 100 : 0.0, peak * 1e-9, static_cast<int>(r.peak_per_cycle), ghz,
                    r.threads, rate * flops / measured_peak * 100, measured_peak * 1e-9, r.threads, r.bytes_per_env, r.block_bytes,
                    r.failed ? (", " + std::to_string(r.failed) + " environments failed").c_str() : "");
      out << line;
      if (r.contact_candidates > 0) {
        std::snprintf(line, sizeof line,
                      "  contact stage: %d candidates, %.1f in contact and %.1f %s iterations per env (last step, mean)\n",
                      r.contact_candidates, r.mean_in_contact, r.mean_contact_iterations,
                      s.contact_solver == ContactSolver::Pgs ? "PGS" : s.admm_linear_solve == AdmmLinearSolve::PvSoft ? "ADMM (PV-soft)" : "ADMM");
        out << line;
      }
    }
    return r.failed ? 2 : 0;
  } catch (const std::exception& e) {
    err << "batchdyn bench: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace batchdyn::cli
