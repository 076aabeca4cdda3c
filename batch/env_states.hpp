// Writing and reading whole environments of the engine (batch/batch.hpp): resets (the reference
// state, random draws, given rows) and saved states (everything step() reads of an environment
// besides its inputs and parameters). Each call checks its arguments first and changes nothing
// when it throws; the listed environments get their new state with zero torque, acceleration and
// applied torque, cleared contact outputs and warm starts, and the status of that state (Ok
// unless it is not finite or a quaternion is off); the others are untouched.
#pragma once

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "batch/actuation.hpp"
#include "batch/argument_checks.hpp"
#include "batch/block_io.hpp"
#include "batch/constraint_solving.hpp"
#include "batch/contact_solving.hpp"
#include "batch/resets.hpp"
#include "batch/thread_arena.hpp"

namespace batchdyn {

// The engine's rows and the stages that hold per-environment state, for one call.
template <class L>
struct EnvStates {
  using T = lane_scalar<L>;
  const Model& model;
  int n;
  T *q, *v, *tau, *qdd;
  Resets<T>& resets;
  Actuation<L>& actuation;
  ConstraintSolving<L>& constraints;
  ContactSolving<L>& contacts;
  BlockIO<L>& io;
  ThreadArena& arena;

  // The reference configuration at rest.
  void reset(std::span<const int> envs) {
    for (int e : envs) check_env("Batch::reset", e, n);
    for (int e : envs) resets.reference_state(q_row(e), v_row(e)), clear(e);
  }
  // A random draw per environment that depends only on (seed, e) (a repeated index is drawn once).
  void reset(std::span<const int> envs, std::uint64_t seed, std::optional<double> noise, double velocity_noise) {
    Resets<T>::check_noise(noise, velocity_noise);
    for (int e : envs) check_env("Batch::reset", e, n);
    std::vector<int> distinct(envs.begin(), envs.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    draw(distinct, [&](size_t k) { return std::pair{seed, static_cast<std::uint64_t>(distinct[k])}; }, noise, velocity_noise);
  }
  // A draw per listed environment from its own seed alone (each environment listed once).
  void reset(std::span<const int> envs, std::span<const std::uint64_t> seeds, std::optional<double> noise, double velocity_noise) {
    Resets<T>::check_noise(noise, velocity_noise);
    if (seeds.size() != envs.size())
      throw Error("Batch::reset: " + std::to_string(seeds.size()) + " seeds for " + std::to_string(envs.size()) + " environments (one each)");
    for (int e : envs) check_env("Batch::reset", e, n);
    std::vector<int> sorted(envs.begin(), envs.end());
    std::sort(sorted.begin(), sorted.end());
    if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      throw Error("Batch::reset: environment " + std::to_string(*twice) + " is listed twice with its own seeds");
    draw(envs, [&](size_t k) { return std::pair{seeds[k], std::uint64_t(0)}; }, noise, velocity_noise);
  }
  // Given states: q_rows envs.size() x nq, v_rows envs.size() x nv (row k for envs[k]).
  void reset(std::span<const int> envs, std::span<const T> q_rows, std::span<const T> v_rows) {
    check_rows("Batch::reset", "q_rows", envs, q_rows, model.nq);
    check_rows("Batch::reset", "v_rows", envs, v_rows, model.nv);
    for (int e : envs) check_env("Batch::reset", e, n);
    for (size_t k = 0; k < envs.size(); ++k) {
      std::copy_n(q_rows.data() + k * model.nq, model.nq, q_row(envs[k]));
      std::copy_n(v_rows.data() + k * model.nv, model.nv, v_row(envs[k]));
      clear(envs[k]);
    }
  }

  // A saved state's row: q (nq), v (nv), the contact impulses (3 C), the joint-limit impulses
  // (one per limited joint) and the loop multipliers (m): the solvers' warm starts, as
  // mj_getState keeps MuJoCo's.
  int state_size() const { return model.nq + model.nv + 3 * contacts.candidates() + contacts.limited_joints() + model.constraint_rows; }
  void get_state(std::span<const int> envs, std::span<T> rows) {
    check_rows("Batch::get_state", "rows", envs, std::span<const T>(rows), state_size());
    for (int e : envs) check_env("Batch::get_state", e, n);
    for (size_t k = 0; k < envs.size(); ++k) copy_state(envs[k], rows.data() + k * static_cast<size_t>(state_size()), /*save=*/true);
  }
  void set_state(std::span<const int> envs, std::span<const T> rows) {
    check_rows("Batch::set_state", "rows", envs, rows, state_size());
    for (int e : envs) check_env("Batch::set_state", e, n);
    for (size_t k = 0; k < envs.size(); ++k) {
      const int e = envs[k];
      clear_outputs(e);  // tau, qdd and the outputs, as a reset
      copy_state(e, const_cast<T*>(rows.data()) + k * static_cast<size_t>(state_size()), /*save=*/false);
      io.check_state(e, q_row(e), v_row(e));
    }
  }

 private:
  T* q_row(int e) { return q + static_cast<long>(e) * model.nq; }
  T* v_row(int e) { return v + static_cast<long>(e) * model.nv; }
  // Draws envs[k]'s state from seed_stream(k) = (seed, stream) (envs distinct), then clears what a
  // reset zeroes. Draws onto loops (Gauss-Newton, ~1 ms each) run in parallel over the arena's
  // threads; plain draws take about a microsecond, less than handing them to the arena.
  template <class SeedStream>
  void draw(std::span<const int> envs, SeedStream seed_stream, std::optional<double> noise, double velocity_noise) {
    const bool onto_loops = constraints.active();
    const auto one = [&](size_t k) {
      const auto [seed, stream] = seed_stream(k);
      resets.random_state(seed, stream, noise, velocity_noise, onto_loops, q_row(envs[k]), v_row(envs[k]));
    };
    if (onto_loops) arena.execute([&] { tbb::parallel_for(size_t(0), envs.size(), one); });
    else for (size_t k = 0; k < envs.size(); ++k) one(k);
    for (int e : envs) clear(e);
  }
  // What a reset zeroes besides q and v, then the state's check.
  void clear(int e) {
    clear_outputs(e);
    io.check_state(e, q_row(e), v_row(e));  // a non-finite draw or given state shows at once
  }
  void clear_outputs(int e) {
    std::fill_n(tau + static_cast<long>(e) * model.nv, model.nv, T(0));
    std::fill_n(qdd + static_cast<long>(e) * model.nv, model.nv, T(0));
    std::fill_n(actuation.actuator_torques() + static_cast<long>(e) * model.nv, model.nv, T(0));
    constraints.clear_multipliers(e);
    contacts.clear(e);
  }
  // Environment e's saved-state row to (save) or from `row`: the segments of state_size().
  void copy_state(int e, T* row, bool save) {
    const auto segment = [&](T* engine, int count) {
      if (save) std::copy_n(engine, count, row);
      else std::copy_n(row, count, engine);
      row += count;
    };
    segment(q_row(e), model.nq);
    segment(v_row(e), model.nv);
    segment(contacts.warm_impulses(e), 3 * contacts.candidates());
    segment(contacts.warm_limit_impulses(e), contacts.limited_joints());
    segment(constraints.multipliers(e), model.constraint_rows);
  }
};

}  // namespace batchdyn
