// The engine a training loop calls: N environments of one Model, their state buffers
// (env-major, N x nq / N x nv, row-major: what training code holds), and one call that runs
// forward dynamics (or a full step, or the Delassus matrices of the constraints) over all of
// them — W environments per SIMD lane block, lane blocks spread over oneTBB threads
// (DESIGN.md §1, §4).
//
//   batchdyn::Batch<float> batch(model, 4096);        // SIMD lanes, all cores
//   batch.set_threads(2);
//   ... write batch.q(), batch.v(), batch.tau() ...
//   batch.step(1e-3f);                                 // qdd, then v += dt qdd, q = q ⊕ dt v
//   batch.delassus();                                  // N x m x m J M^-1 J^T (PV-OSIMr)
//   for env with batch.status()[env] != EnvStatus::Ok: batch.status_message(env)
//
// Every call goes through run(): each thread gathers a lane block from the user arrays into
// its own aligned workspace (transposing env-major rows into lanes, checking each
// environment; q only for configuration kernels), runs the kernel, and scatters the results
// back (scatter(): a non-finite output marks its environment). Lane e % W of block e / W is environment e whatever
// N and the thread count, and lanes never mix, so results are bitwise identical for any
// thread count and any N. A bad environment (non-finite values, invalid quaternion) is
// replaced by the neutral state inside its lane, its outputs are NaN and its state is not
// stepped; the others are unaffected.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "batch/validation.hpp"
#include "kernels/aba.hpp"
#include "kernels/configuration.hpp"
#include "kernels/delassus_operations.hpp"
#include "kernels/pv_osim.hpp"
#include "kernels/pv_osimr.hpp"
#include "layout/lanes.hpp"
#include "layout/model_constants.hpp"

namespace batchdyn {

enum class EnvStatus : std::uint8_t {
  Ok = 0,
  NonFiniteState,     // NaN or infinity in q, v or tau
  InvalidQuaternion,  // free-flyer quaternion with | |q| - 1 | > kQuaternionNormTolerance (validation.hpp)
  NonFiniteResult,    // the dynamics produced NaN / infinity from a finite state
};

inline const char* env_status_name(EnvStatus s) {
  switch (s) {
    case EnvStatus::Ok: return "ok";
    case EnvStatus::NonFiniteState: return "NaN or infinity in q, v or tau";
    case EnvStatus::InvalidQuaternion: return "free-flyer quaternion is not of unit norm";
    case EnvStatus::NonFiniteResult: return "dynamics produced a non-finite result";
  }
  return "?";
}

// Aligned, lane-typed storage that std::vector provides for over-aligned types (C++17).
template <class L>
using LaneArray = std::vector<L>;

template <class L>
class BatchEngine {
 public:
  using Lane = L;
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  // N environments of `model` (copied), owning their buffers: neutral q, zero v, tau, qdd.
  // threads = 0 uses every core oneTBB sees. Throws Error for a model with singular joints.
  BatchEngine(const Model& model, int num_envs, int threads = 0)
      : model_(model), n_(num_envs), constants_(model), delassus_plan_(plan_delassus(model)),
        workspaces_([this] { return BlockWorkspace(model_, delassus_plan_); }) {
    if (num_envs < 1) throw Error("Batch: need at least one environment, got " + std::to_string(num_envs));
    model.require_regular("Batch");
    const VectorX<T> neutral = neutral_configuration<T>(model);
    neutral_.assign(neutral.data(), neutral.data() + neutral.size());
    owned_q_.resize(static_cast<size_t>(n_) * model.nq);
    for (int e = 0; e < n_; ++e) std::copy(neutral_.begin(), neutral_.end(), owned_q_.begin() + static_cast<long>(e) * model.nq);
    owned_v_.assign(static_cast<size_t>(n_) * model.nv, T(0));
    owned_tau_.assign(owned_v_.size(), T(0));
    owned_qdd_.assign(owned_v_.size(), T(0));
    q_ = owned_q_.data(), v_ = owned_v_.data(), tau_ = owned_tau_.data(), qdd_ = owned_qdd_.data();
    owned_delassus_.assign(static_cast<size_t>(n_) * delassus_size(), T(0));
    delassus_ = owned_delassus_.data();
    status_.assign(static_cast<size_t>(n_), EnvStatus::Ok);
    set_threads(threads);
  }
  // Not copyable: the per-thread workspaces refer to this engine.
  BatchEngine(const BatchEngine&) = delete;
  BatchEngine& operator=(const BatchEngine&) = delete;

  int num_envs() const { return n_; }
  int num_blocks() const { return (n_ + W - 1) / W; }
  int threads() const { return threads_; }
  const Model& model() const { return model_; }

  // Sets the number of worker threads (0 = all cores oneTBB sees); takes effect at the next
  // call. The oneTBB arena is rebuilt (an initialised arena ignores a new size), and the
  // per-thread workspaces are released, to be made again by the threads that run.
  void set_threads(int threads) {
    if (threads < 0) throw Error("Batch: thread count must be >= 0");
    threads_ = threads == 0 ? tbb::this_task_arena::max_concurrency() : threads;
    if (arena_.is_active()) arena_.terminate();
    arena_.initialize(threads_);
    workspaces_.clear();
  }
  // Threads that have run at least one lane block since the last set_threads (each made its
  // own workspace): at most threads().
  int threads_used() const { return static_cast<int>(workspaces_.size()); }

  // Env-major state buffers (row e is environment e): q is N x nq, v / tau / qdd are N x nv.
  T* q() { return q_; }
  T* v() { return v_; }
  T* tau() { return tau_; }
  const T* q() const { return q_; }
  const T* v() const { return v_; }
  const T* qdd() const { return qdd_; }

  // The same buffers as N x nq / N x nv row-major Eigen matrices (row e = environment e).
  using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMatrix> q_matrix() { return {q_, n_, model_.nq}; }
  Eigen::Map<RowMatrix> v_matrix() { return {v_, n_, model_.nv}; }
  Eigen::Map<RowMatrix> tau_matrix() { return {tau_, n_, model_.nv}; }
  Eigen::Map<const RowMatrix> qdd_matrix() const { return {qdd_, n_, model_.nv}; }

  // Uses the caller's arrays instead of the owned ones (no copy; they must outlive the calls).
  // Throws Error naming the buffer whose size is not N x nq / N x nv.
  void use_buffers(std::span<T> q, std::span<T> v, std::span<T> tau, std::span<T> qdd) {
    check_size("q", q.size(), model_.nq, "nq");
    check_size("v", v.size(), model_.nv, "nv");
    check_size("tau", tau.size(), model_.nv, "nv");
    check_size("qdd", qdd.size(), model_.nv, "nv");
    q_ = q.data(), v_ = v.data(), tau_ = tau.data(), qdd_ = qdd.data();
  }

  // qdd = ABA(q, v, tau) for every environment. Updates status().
  void forward_dynamics() { run_dynamics(false, T(0)); }

  // Semi-implicit Euler: qdd = ABA(q, v, tau), v += dt qdd, q = q ⊕ dt v (on the manifold).
  // Environments whose status is not Ok keep their state.
  void step(T dt) { run_dynamics(true, dt); }

  // --- Delassus matrices of the model's constraints (kernels/pv_osimr.hpp) ---
  enum class DelassusAlgorithm { PvOsimr, PvOsim };

  // G = J M^{-1} J^T at every environment's q, m x m row-major per environment (rows as the
  // model's constraint rows, in constraint frames), into delassus_matrices(). Only q is read.
  // Updates status(): an environment with a non-finite or non-unit-quaternion q, or a
  // non-finite result, gets NaN and its status. PV-OSIMr is O(n + m^2) per environment;
  // PvOsim (O(n + m^2 d)) is the baseline.
  // Throws Error for a model without constraints.
  void delassus(DelassusAlgorithm algorithm = DelassusAlgorithm::PvOsimr) {
    require_constraints("Batch::delassus");
    run([&](int block, BlockWorkspace& ws, bool* valid) {
      delassus_block(ws, algorithm);
      scatter(block, valid, ws.G.data(), delassus_size(), delassus_);
    }, /*state=*/false);
  }
  // delassus(), and for a solver the lower Cholesky factor L of G + rho I per environment
  // (L L^T = G + rho I, strict upper triangle zero; no pivoting: rho > 0 makes it positive
  // definite even for redundant rows) into delassus_factors(). Throws Error unless rho > 0.
  void delassus_cholesky(T rho, DelassusAlgorithm algorithm = DelassusAlgorithm::PvOsimr) {
    if (!(rho > T(0))) throw Error("Batch::delassus_cholesky: the damping rho must be > 0, got " + std::to_string(rho));
    require_constraints("Batch::delassus_cholesky");
    const int m = model_.constraint_rows;
    if (owned_factors_.empty()) owned_factors_.assign(static_cast<size_t>(n_) * delassus_size(), T(0));
    run([&](int block, BlockWorkspace& ws, bool* valid) {
      delassus_block(ws, algorithm);
      damped_cholesky(ws.G.data(), m, L(rho), ws.factor.data());
      scatter(block, valid, ws.G.data(), m * m, delassus_);
      scatter(block, valid, ws.factor.data(), m * m, owned_factors_.data());
    }, /*state=*/false);
  }
  int constraint_rows() const { return model_.constraint_rows; }
  // The N x m x m output of delassus() (environment e's matrix starts at e * m * m).
  const T* delassus_matrices() const { return delassus_; }
  // The N x m x m Cholesky factors of delassus_cholesky() (empty before its first call).
  const T* delassus_factors() const { return owned_factors_.data(); }
  // Writes delassus() into the caller's N x m x m array instead (no copy; it must outlive the
  // calls). Throws Error when its size is not N x m x m.
  void use_delassus_buffer(std::span<T> G) {
    check_size("delassus", G.size(), delassus_size(), "m x m");
    delassus_ = G.data();
  }
  const DelassusPlan& delassus_plan() const { return delassus_plan_; }

  const std::vector<EnvStatus>& status() const { return status_; }
  int failed_count() const {
    int k = 0;
    for (EnvStatus s : status_) k += s != EnvStatus::Ok;
    return k;
  }
  std::string status_message(int env) const {
    return "environment " + std::to_string(env) + ": " + env_status_name(status_.at(static_cast<size_t>(env)));
  }

  // Resets the listed environments to the neutral configuration with zero velocity, torque and
  // acceleration, and clears their status. Others are untouched.
  void reset(std::span<const int> envs) {
    for (int e : envs) {
      check_env(e);
      std::copy(neutral_.begin(), neutral_.end(), q_ + static_cast<long>(e) * model_.nq);
      clear_row(v_, e), clear_row(tau_, e), clear_row(qdd_, e);
      status_[static_cast<size_t>(e)] = EnvStatus::Ok;
    }
  }
  // Resets the listed environments to given states: q_rows is envs.size() x nq, v_rows
  // envs.size() x nv (row k for envs[k]).
  void reset(std::span<const int> envs, std::span<const T> q_rows, std::span<const T> v_rows) {
    if (q_rows.size() != envs.size() * static_cast<size_t>(model_.nq))
      throw Error("Batch::reset: q_rows has " + std::to_string(q_rows.size()) + " values, expected " +
                  std::to_string(envs.size()) + " x nq = " + std::to_string(envs.size() * model_.nq));
    if (v_rows.size() != envs.size() * static_cast<size_t>(model_.nv))
      throw Error("Batch::reset: v_rows has " + std::to_string(v_rows.size()) + " values, expected " +
                  std::to_string(envs.size()) + " x nv = " + std::to_string(envs.size() * model_.nv));
    for (size_t k = 0; k < envs.size(); ++k) {
      const int e = envs[k];
      check_env(e);
      std::copy_n(q_rows.data() + k * model_.nq, model_.nq, q_ + static_cast<long>(e) * model_.nq);
      std::copy_n(v_rows.data() + k * model_.nv, model_.nv, v_ + static_cast<long>(e) * model_.nv);
      clear_row(tau_, e), clear_row(qdd_, e);
      status_[static_cast<size_t>(e)] = EnvStatus::Ok;
    }
  }

  // Bytes of kernel workspace and gathered state of one lane block, and per environment.
  size_t block_workspace_bytes() const { return BlockWorkspace(model_, delassus_plan_).bytes(); }
  double workspace_bytes_per_env() const { return static_cast<double>(block_workspace_bytes()) / W; }

 private:
  // One thread's working set for one lane block: the kernel workspace, the block's state as
  // lanes, and lane-major scalar staging rows for the transposition.
  struct BlockWorkspace {
    BlockWorkspace(const Model& m, const DelassusPlan& plan)
        : aba(m), q(static_cast<size_t>(m.nq)), v(static_cast<size_t>(m.nv)),
          tau(static_cast<size_t>(m.nv)), qdd(static_cast<size_t>(m.nv)), displacement(static_cast<size_t>(m.nv)),
          G(static_cast<size_t>(m.constraint_rows) * m.constraint_rows),
          factor(static_cast<size_t>(m.constraint_rows) * m.constraint_rows), stage_q(static_cast<size_t>(m.nq) * W),
          stage_v(static_cast<size_t>(m.nv) * W), stage_tau(static_cast<size_t>(m.nv) * W) {
      if (m.constraint_rows > 0) delassus.emplace(m, plan);  // a tree without constraints needs none
    }
    AbaWorkspace<L> aba;
    std::optional<DelassusWorkspace<L>> delassus;
    LaneArray<L> q, v, tau, qdd, displacement, G, factor;  // one lane per environment
    std::vector<T, xsimd::aligned_allocator<T, 64>> stage_q, stage_v, stage_tau;
    size_t bytes() const {
      return aba.bytes() + (delassus ? delassus->bytes() : 0) +
             (q.size() + v.size() + tau.size() + qdd.size() + displacement.size() + G.size() + factor.size()) * sizeof(L) +
             (stage_q.size() + stage_v.size() + stage_tau.size()) * sizeof(T);
    }
  };
  int delassus_size() const { return model_.constraint_rows * model_.constraint_rows; }
  void require_constraints(const char* who) const {
    if (model_.constraint_rows == 0)
      throw Error(std::string(who) + ": model '" + model_.name + "' has no constraints (add them with --constraints / add_constraint)");
  }
  // G of the block's environments (q already gathered) into ws.G.
  void delassus_block(BlockWorkspace& ws, DelassusAlgorithm algorithm) const {
    if (algorithm == DelassusAlgorithm::PvOsimr) pv_osimr_kernel(constants_, delassus_plan_, *ws.delassus, ws.q.data(), ws.G.data());
    else pv_osim_kernel(constants_, delassus_plan_, *ws.delassus, ws.q.data(), ws.G.data());
  }

  void check_size(const char* name, size_t got, int per_env, const char* per_env_name) const {
    const size_t expected = static_cast<size_t>(n_) * per_env;
    if (got != expected)
      throw Error(std::string("Batch: buffer '") + name + "' has " + std::to_string(got) + " values, expected N x " +
                  per_env_name + " = " + std::to_string(n_) + " x " + std::to_string(per_env) +
                  " = " + std::to_string(expected));
  }
  void check_env(int e) const {
    if (e < 0 || e >= n_) throw Error("Batch::reset: environment index " + std::to_string(e) + " out of range [0, " + std::to_string(n_) + ")");
  }
  void clear_row(T* data, int e) { std::fill_n(data + static_cast<long>(e) * model_.nv, model_.nv, T(0)); }

  // Checks one environment's state and writes it, quaternions normalised, into lane `l` of
  // the lane-major staging rows (stage[k * W + l]).
  // With state = false only q is read (kernels of the configuration alone).
  EnvStatus stage_state(int e, int l, BlockWorkspace& ws, bool state) const {
    const T* q_row = q_ + static_cast<long>(e) * model_.nq;
    const T* v_row = v_ + static_cast<long>(e) * model_.nv;
    const T* tau_row = tau_ + static_cast<long>(e) * model_.nv;
    for (int k = 0; k < model_.nq; ++k) {
      if (!std::isfinite(q_row[k])) return EnvStatus::NonFiniteState;
      ws.stage_q[static_cast<size_t>(k * W + l)] = q_row[k];
    }
    for (int k = 0; state && k < model_.nv; ++k) {
      if (!std::isfinite(v_row[k]) || !std::isfinite(tau_row[k])) return EnvStatus::NonFiniteState;
      ws.stage_v[static_cast<size_t>(k * W + l)] = v_row[k];
      ws.stage_tau[static_cast<size_t>(k * W + l)] = tau_row[k];
    }
    for (int i = 1; i < model_.num_bodies(); ++i) {
      if (model_.bodies[i].joint_type != JointType::FreeFlyer) continue;
      T* quat[4];
      for (int k = 0; k < 4; ++k) quat[k] = &ws.stage_q[static_cast<size_t>((model_.bodies[i].idx_q + 3 + k) * W + l)];
      const T norm = std::sqrt(*quat[0] * *quat[0] + *quat[1] * *quat[1] + *quat[2] * *quat[2] + *quat[3] * *quat[3]);
      if (!(std::abs(norm - T(1)) <= T(kQuaternionNormTolerance))) return EnvStatus::InvalidQuaternion;
      for (T* c : quat) *c /= norm;
    }
    return EnvStatus::Ok;
  }

  // Neutral state in lane l (padding past N, or a rejected environment).
  void stage_neutral(int l, BlockWorkspace& ws) const {
    for (int k = 0; k < model_.nq; ++k) ws.stage_q[static_cast<size_t>(k * W + l)] = neutral_[static_cast<size_t>(k)];
    for (int k = 0; k < model_.nv; ++k) {
      ws.stage_v[static_cast<size_t>(k * W + l)] = T(0);
      ws.stage_tau[static_cast<size_t>(k * W + l)] = T(0);
    }
  }

  // Gather: env-major rows -> lanes of block `block`, each environment checked on the way;
  // valid[l] says whether lane l holds a real, accepted environment.
  void gather(int block, BlockWorkspace& ws, bool state, bool* valid) {
    using Traits = LaneTraits<L>;
    for (int l = 0; l < W; ++l) {
      const int e = block * W + l;
      valid[l] = false;
      if (e < n_) {
        const EnvStatus s = stage_state(e, l, ws, state);
        status_[static_cast<size_t>(e)] = s;
        valid[l] = s == EnvStatus::Ok;
      }
      if (!valid[l]) stage_neutral(l, ws);
    }
    for (int k = 0; k < model_.nq; ++k) ws.q[static_cast<size_t>(k)] = Traits::load(&ws.stage_q[static_cast<size_t>(k * W)]);
    for (int k = 0; state && k < model_.nv; ++k) {
      ws.v[static_cast<size_t>(k)] = Traits::load(&ws.stage_v[static_cast<size_t>(k * W)]);
      ws.tau[static_cast<size_t>(k)] = Traits::load(&ws.stage_tau[static_cast<size_t>(k * W)]);
    }
  }

  // Writes `count` lanes into rows of the env-major `out` (count values per environment), for
  // the environments of the block with valid[l]. Each lane vector goes to W rows at once, so
  // the rows are written sequentially (no strided pass over a lane-major staging copy).
  void write_rows(int block, const bool* valid, const L* lanes, int count, T* out) const {
    using Traits = LaneTraits<L>;
    const int first = block * W, in_block = std::min(W, n_ - first);
    alignas(64) T values[W];
    for (int k = 0; k < count; ++k) {
      Traits::store(lanes[k], values);
      for (int l = 0; l < in_block; ++l)
        if (valid[l]) out[static_cast<long>(first + l) * count + k] = values[l];
    }
  }

  // Scatter: `count` output lanes -> row e of the env-major `out`, valid environments only.
  // A non-finite value marks its environment (NonFiniteResult, valid[l] = false) and its row
  // is filled with NaN.
  void scatter(int block, bool* valid, const L* lanes, int count, T* out) {
    using Traits = LaneTraits<L>;
    // x * 0 is 0 for finite x and NaN otherwise: one sum per lane flags a non-finite output.
    L non_finite(T(0));
    for (int k = 0; k < count; ++k) non_finite += lanes[k] * L(T(0));
    alignas(64) T flags[W];
    Traits::store(non_finite, flags);
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      const int e = block * W + l;
      if (valid[l] && flags[l] != T(0)) {
        valid[l] = false;
        status_[static_cast<size_t>(e)] = EnvStatus::NonFiniteResult;
      }
      if (!valid[l]) std::fill_n(out + static_cast<long>(e) * count, count, std::numeric_limits<T>::quiet_NaN());
    }
    write_rows(block, valid, lanes, count, out);
  }

  // ABA on one block, then (step) semi-implicit Euler on lanes; q and v are written back for
  // the environments whose qdd was finite.
  void dynamics_block(int block, BlockWorkspace& ws, bool* valid, bool integrate_state, T dt) {
    const int nq = model_.nq, nv = model_.nv;
    aba_kernel(constants_, ws.aba, ws.q.data(), ws.v.data(), ws.tau.data(), ws.qdd.data());
    scatter(block, valid, ws.qdd.data(), nv, qdd_);
    if (!integrate_state) return;
    const L step(dt);  // v += dt qdd, q = q ⊕ dt v
    for (int k = 0; k < nv; ++k) {
      ws.v[static_cast<size_t>(k)] += step * ws.qdd[static_cast<size_t>(k)];
      ws.displacement[static_cast<size_t>(k)] = step * ws.v[static_cast<size_t>(k)];
    }
    integrate_kernel(model_, ws.q.data(), ws.displacement.data(), ws.q.data());
    write_rows(block, valid, ws.q.data(), nq, q_);
    write_rows(block, valid, ws.v.data(), nv, v_);
  }

  void run_dynamics(bool integrate_state, T dt) {
    run([&](int block, BlockWorkspace& ws, bool* valid) { dynamics_block(block, ws, valid, integrate_state, dt); },
        /*state=*/true);
  }

  // Every lane block through `kernel(block, workspace, valid)` after gathering its inputs (q,
  // and v, tau when `state`), lane blocks spread over the arena's threads.
  template <class Kernel>
  void run(Kernel&& kernel, bool state) {
    // A few lane blocks per task keep scheduling overhead small next to the kernel.
    const int grain = std::max(1, 16 / W);
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, num_blocks(), grain), [&](const tbb::blocked_range<int>& range) {
        BlockWorkspace& ws = workspaces_.local();
        for (int b = range.begin(); b != range.end(); ++b) {
          bool valid[W];
          gather(b, ws, state, valid);
          kernel(b, ws, valid);
        }
      });
    });
  }

  const Model model_;
  int n_;
  ModelConstants<L> constants_;
  DelassusPlan delassus_plan_;
  std::vector<T> neutral_;
  std::vector<T> owned_q_, owned_v_, owned_tau_, owned_qdd_, owned_delassus_, owned_factors_;
  T *q_ = nullptr, *v_ = nullptr, *tau_ = nullptr, *qdd_ = nullptr, *delassus_ = nullptr;
  std::vector<EnvStatus> status_;
  int threads_ = 1;
  tbb::task_arena arena_;
  tbb::enumerable_thread_specific<BlockWorkspace> workspaces_;
};

}  // namespace batchdyn

namespace batchdyn {
// The product: SIMD lanes of the widest instruction set the build targets.
template <class T>
using Batch = BatchEngine<SimdLane<T>>;
// W = 1: the same engine and kernel on plain scalars (reference / baseline).
template <class T>
using ScalarBatch = BatchEngine<T>;
}  // namespace batchdyn
