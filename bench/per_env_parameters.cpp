// What per-environment parameters cost (batch/env_parameters.hpp): ns per env-step of the
// humanoid, PD control with 4 substeps, 1 thread, N = 4096, for three set-ups measured
// alternately (medians of 7 runs of 1 s):
//   shared       the model's parameters (nothing set)
//   base         the base's inertia, gravity, damping and armature per environment
//   every body   every body's inertia too
// A plain program (timing alternating set-ups does not fit Google Benchmark's one-at-a-time
// runs): build/bench/bench/batchdyn_per_env_parameters.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "batchdyn.hpp"

using namespace batchdyn;

namespace {

enum Setup { Shared, Base, EveryBody };

template <class T>
double ns_per_env_step(const Model& m, Setup setup) {
  const int n = 4096;
  Batch<T> batch(m, n, 1);
  std::vector<double> kp(static_cast<size_t>(m.nv), 100.0), kd(static_cast<size_t>(m.nv), 5.0);
  for (int k = 0; k < 6; ++k) kp[static_cast<size_t>(k)] = kd[static_cast<size_t>(k)] = 0;  // the free-flyer
  batch.set_pd_gains(kp, kd);
  batch.set_control_mode(ControlMode::PositionPD);
  std::vector<int> all(static_cast<size_t>(n));
  for (int e = 0; e < n; ++e) all[static_cast<size_t>(e)] = e;
  if (setup != Shared) {
    std::vector<double> gravity(3 * static_cast<size_t>(n)), joint(static_cast<size_t>(n) * m.nv, 0.01);
    for (int e = 0; e < n; ++e) gravity[3 * static_cast<size_t>(e) + 2] = -9.81 * (0.95 + 0.1 * e / n);
    batch.set_gravity(all, gravity);
    batch.set_damping(all, joint);
    batch.set_armature(all, joint);
  }
  const int last = setup == Base ? 1 : setup == EveryBody ? m.num_bodies() - 1 : 0;
  for (int i = 1; i <= last; ++i) {
    const RigidInertiad& I = m.bodies[static_cast<size_t>(i)].inertia;
    std::vector<double> mass, com, inertia;
    for (int e = 0; e < n; ++e) {
      mass.push_back(I.mass * (0.8 + 0.4 * e / n));
      for (int k = 0; k < 3; ++k) com.push_back(I.com[k]);
      for (int r = 0; r < 9; ++r) inertia.push_back(I.inertia_com.m[r / 3][r % 3]);
    }
    batch.set_body_inertia(all, i, mass, com, inertia);
  }
  batch.step(T(1e-3), 4);  // warm-up
  const auto start = std::chrono::steady_clock::now();
  int calls = 0;
  double seconds = 0;
  while (seconds < 1.0) {
    batch.step(T(1e-3), 4);
    ++calls;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return seconds / calls / n * 1e9;
}

template <class T>
void measure(const Model& m, const char* precision) {
  std::vector<double> times[3];
  for (int run = 0; run < 7; ++run)
    for (Setup s : {Shared, Base, EveryBody}) times[s].push_back(ns_per_env_step<T>(m, s));
  for (std::vector<double>& t : times) std::sort(t.begin(), t.end());
  const double shared = times[Shared][3], base = times[Base][3], every = times[EveryBody][3];
  std::printf("%s: shared %.0f ns/env-step; base %.0f (x%.3f); every body %.0f (x%.3f)\n", precision, shared, base,
              base / shared, every, every / shared);
}

}  // namespace

int main() {
  const Model m = load_urdf_file(BATCHDYN_MODELS_DIR "/humanoid.urdf", RootJoint::FreeFlyer);
  measure<double>(m, "double");
  measure<float>(m, "float");
}
