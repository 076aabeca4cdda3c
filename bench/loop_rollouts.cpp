// The rollout probe as a table: every loop model of bench/bench_models.hpp
// (those bench/batched_loops.cpp times) stepped from rest
// (Batch::reset without noise: the model's reference_q, or neutral pose projected onto the
// loops), zero torque, dt = 1 ms, 1000 steps, in double and float, with the default loop
// stabilisation gains and without them (time constant 0). Per row: the loop solver's iterations
// per step (mean, largest and the step it came at), the steps whose status was not Ok (reports:
// ConstraintNotConverged = the loop solver's cap, LoopDrift = more than 1 cm off the loops,
// ContactNotConverged = the joint-limit solve's cap; joint limits on, the default) and whether
// the rollout failed (a non-finite state; the row stops there). The targets: mean <= 5, largest
// <= 20, no failure. One environment per row: without noise every environment of a batch
// follows the same trajectory.
//
// --acceleration-level holds the loops by Baumgarte rows instead of at the velocity level (the
// default with euler; LoopStabilisationSettings::velocity_level). --plateau-tolerance X sets
// how far step()'s loop solves go on a plateau (LoopStabilisationSettings::plateau_tolerance,
// default 1e-9; 0: to the tolerance).
//
//   ./build/dev/bench/batchdyn_loop_rollouts [--steps N] [--solver lcaba|proxbbo] [--integrator euler|rk4]
//                                            [--acceleration-level] [--plateau-tolerance X] [MODEL ...]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "batch/batch.hpp"
#include "bench/bench_models.hpp"

namespace {
using namespace batchdyn;
using bench::Case;
using bench::loop_models;

struct Options {
  int steps = 1000;
  ConstraintSolver solver = ConstraintSolver::Lcaba;
  Integrator integrator = Integrator::SemiImplicitEuler;
  bool velocity_level = true;
  double plateau_tolerance = LoopStabilisationSettings{}.plateau_tolerance;
  std::vector<std::string> only;
};

template <class T>
void roll_out(const Case& c, const Options& o, bool gains) {
  Batch<T> batch(c.model, 1, 1);
  batch.set_constraint_solver(o.solver);
  batch.set_integrator(o.integrator);
  LoopStabilisationSettings s = batch.loop_stabilisation();
  if (!gains) s.time_constant = 0;
  s.velocity_level = o.velocity_level;
  s.plateau_tolerance = o.plateau_tolerance;
  batch.set_loop_stabilisation(s);
  batch.reset(std::vector<int>{0});
  long total = 0;
  int largest = 0, largest_at = -1, not_ok = 0, steps = 0;
  bool failed = false;
  for (; steps < o.steps && !failed; ++steps) {
    batch.step(T(1e-3));
    const int it = batch.constraint_iterations()[0];
    total += it;
    if (it > largest) largest = it, largest_at = steps;
    const EnvStatus s = batch.status()[0];
    not_ok += s != EnvStatus::Ok;
    failed = s != EnvStatus::Ok && !is_report(s);
  }
  std::printf("| %s | %s | %s | %.2f | %d (step %d) | %d | %s |\n", c.name.c_str(), sizeof(T) == 8 ? "double" : "float",
              gains ? "default" : "off", static_cast<double>(total) / steps, largest, largest_at, not_ok,
              failed ? ("at step " + std::to_string(steps - 1)).c_str() : "no");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const auto value = [&] { return a + 1 < argc ? std::string(argv[++a]) : std::string(); };
    if (!std::strcmp(argv[a], "--steps")) o.steps = std::max(1, std::atoi(value().c_str()));
    else if (!std::strcmp(argv[a], "--solver")) o.solver = parse_algorithm(value(), "--solver", is_constraint_solver);
    else if (!std::strcmp(argv[a], "--integrator")) o.integrator = parse_name(kIntegrators, value(), "--integrator");
    else if (!std::strcmp(argv[a], "--acceleration-level")) o.velocity_level = false;
    else if (!std::strcmp(argv[a], "--plateau-tolerance")) o.plateau_tolerance = std::atof(value().c_str());
    else o.only.emplace_back(argv[a]);
  }
  try {
    std::printf("| model | precision | gains | iterations per step, mean | largest | steps not ok | failed |\n|---|---|---|---|---|---|---|\n");
    for (const Case& c : loop_models()) {
      if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), c.name) == o.only.end()) continue;
      for (const bool gains : {true, false}) roll_out<double>(c, o, gains), roll_out<float>(c, o, gains);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "batchdyn_loop_rollouts: %s\n", e.what());
    return 1;
  }
  return 0;
}
