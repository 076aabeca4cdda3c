// Block I/O, the engine's first and last stages: gather (the env-major rows of a lane block's
// environments transposed into lanes, each environment checked on the way: batch/validation.hpp)
// and scatter (lanes back into env-major rows, a non-finite result marking its environment).
// It keeps what those checks found per environment: status() and the entry at fault.
//
// Environment e is lane e % W of block e / W, whatever N and the thread count. A lane without a
// valid environment (padding past N, or a rejected state) holds the neutral state, so its
// kernel arithmetic stays finite; its results are never written.
#pragma once

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "batch/block_workspace.hpp"
#include "batch/env_status.hpp"
#include "batch/validation.hpp"
#include "topology/configuration.hpp"
#include "topology/tree_plan.hpp"

namespace batchdyn {

// The env-major arrays a call reads (row e = environment e): q is N x nq, the others N x nv.
template <class T>
struct EnvRows {
  const T* q = nullptr;
  const T* v = nullptr;       // nullptr: the call reads q only
  const T* tau = nullptr;
  const T* target = nullptr;  // nullptr: no PD targets (torque control)
};

template <class L>
class BlockIO {
 public:
  using T = lane_scalar<L>;
  static constexpr int W = lane_width<L>;

  BlockIO(const Model& model, int num_envs)
      : n_(num_envs), layout_(model), dofs_(batchdyn::single_dofs(model)), status_(static_cast<size_t>(num_envs), EnvStatus::Ok),
        faults_(status_.size()) {
    const VectorX<T> neutral = neutral_configuration<T>(model);
    neutral_.assign(neutral.data(), neutral.data() + neutral.size());
  }

  // Gather: the rows of block `block`'s environments into ws.q (and ws.v, ws.tau, ws.target when
  // given), each environment checked first; valid[l] says whether lane l holds a real, accepted
  // environment, whose status becomes Ok (or its fault).
  void gather(int block, const EnvRows<T>& rows, BlockWorkspace<L>& ws, bool* valid) {
    using Traits = LaneTraits<L>;
    const int nq = layout_.nq, nv = layout_.nv;
    for (int l = 0; l < W; ++l) {
      const int e = block * W + l;
      valid[l] = e < n_ && stage(e, l, rows, ws);
      if (!valid[l]) stage_neutral(l, ws);
    }
    for (int k = 0; k < nq; ++k) ws.q[static_cast<size_t>(k)] = Traits::load(&ws.stage_q[static_cast<size_t>(k * W)]);
    for (int k = 0; rows.v && k < nv; ++k) {
      ws.v[static_cast<size_t>(k)] = Traits::load(&ws.stage_v[static_cast<size_t>(k * W)]);
      ws.tau[static_cast<size_t>(k)] = Traits::load(&ws.stage_tau[static_cast<size_t>(k * W)]);
    }
    for (size_t k = 0; rows.target && k < dofs_.size(); ++k) {
      const int dof = dofs_[k].v;
      ws.target[static_cast<size_t>(dof)] = Traits::load(&ws.stage_target[static_cast<size_t>(dof * W)]);
    }
  }

  // Scatter: `count` lanes into row e of the env-major `out` (count values per environment), for
  // the valid environments of the block. A non-finite value marks its environment
  // (NonFiniteResult, valid[l] = false) and fills its row with NaN.
  void scatter(int block, bool* valid, const L* lanes, int count, T* out) {
    mark_non_finite(block, valid, lanes, count);
    for (int l = 0; l < W && block * W + l < n_; ++l)
      if (!valid[l]) std::fill_n(out + static_cast<long>(block * W + l) * count, count, std::numeric_limits<T>::quiet_NaN());
    write_rows(block, valid, lanes, count, out);
  }

  // Marks the valid environments of the block whose `count` lanes hold a non-finite value
  // (NonFiniteResult, valid[l] = false), so that a state which overflows during a step is
  // reported by that step, not the next.
  void mark_non_finite(int block, bool* valid, const L* lanes, int count) {
    using Traits = LaneTraits<L>;
    // x * 0 is 0 for finite x and NaN otherwise: one sum per lane flags a non-finite output.
    L non_finite(T(0));
    for (int k = 0; k < count; ++k) non_finite += lanes[k] * L(T(0));
    alignas(64) T flags[W];
    Traits::store(non_finite, flags);
    for (int l = 0; l < W && block * W + l < n_; ++l)
      if (valid[l] && flags[l] != T(0)) {
        valid[l] = false;
        status_[static_cast<size_t>(block * W + l)] = EnvStatus::NonFiniteResult;
      }
  }

  // `count` lanes into rows of the env-major `out`, for the valid environments of the block, as
  // they are. Each lane vector goes to W rows at once, so the rows are written sequentially.
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

  // A report on environment e that does not stop it from being stepped (its rows are written):
  // its status becomes `status` unless something worse was found.
  void report(int e, EnvStatus status) {
    if (status_[static_cast<size_t>(e)] == EnvStatus::Ok) status_[static_cast<size_t>(e)] = status;
  }

  const std::vector<EnvStatus>& status() const { return status_; }
  // Environment e's status in words, naming the entry at fault.
  std::string status_message(const Model& model, int e) const {
    const StateFault& f = faults_.at(static_cast<size_t>(e));
    const EnvStatus s = status_.at(static_cast<size_t>(e));
    return "environment " + std::to_string(e) + ": " + (s == f.status && !f.ok() ? state_fault_message(model, layout_, f) : env_status_name(s));
  }
  // Environment e's status from its new rows (a reset): Ok, or the first fault of q or v.
  void check_state(int e, const T* q, const T* v) {
    faults_[static_cast<size_t>(e)] = find_state_fault<T>(layout_, q, v, nullptr, {}, nullptr);
    status_[static_cast<size_t>(e)] = faults_[static_cast<size_t>(e)].status;
  }
  const std::vector<T>& neutral() const { return neutral_; }

 private:
  // Checks environment e and, when valid, writes its rows into lane l of the staging rows,
  // quaternions normalised.
  bool stage(int e, int l, const EnvRows<T>& rows, BlockWorkspace<L>& ws) {
    const int nq = layout_.nq, nv = layout_.nv;
    const T* q = rows.q + static_cast<long>(e) * nq;
    const T* v = rows.v ? rows.v + static_cast<long>(e) * nv : nullptr;
    const T* tau = rows.tau ? rows.tau + static_cast<long>(e) * nv : nullptr;
    const T* target = rows.target ? rows.target + static_cast<long>(e) * nv : nullptr;
    faults_[static_cast<size_t>(e)] = find_state_fault(layout_, q, v, tau, dofs_, target);
    status_[static_cast<size_t>(e)] = faults_[static_cast<size_t>(e)].status;
    if (!faults_[static_cast<size_t>(e)].ok()) return false;
    for (int k = 0; k < nq; ++k) ws.stage_q[static_cast<size_t>(k * W + l)] = q[k];
    for (int at : layout_.quaternions) {
      const T norm = quaternion_norm(q, at);
      for (int k = 0; k < 4; ++k) ws.stage_q[static_cast<size_t>((at + k) * W + l)] = q[at + k] / norm;
    }
    for (int k = 0; v && k < nv; ++k) {
      ws.stage_v[static_cast<size_t>(k * W + l)] = v[k];
      ws.stage_tau[static_cast<size_t>(k * W + l)] = tau[k];
    }
    for (size_t k = 0; target && k < dofs_.size(); ++k) ws.stage_target[static_cast<size_t>(dofs_[k].v * W + l)] = target[dofs_[k].v];
    return true;
  }
  // The neutral state in lane l: neutral q, zero v and tau, the targets at the neutral positions.
  void stage_neutral(int l, BlockWorkspace<L>& ws) const {
    for (int k = 0; k < layout_.nq; ++k) ws.stage_q[static_cast<size_t>(k * W + l)] = neutral_[static_cast<size_t>(k)];
    for (int k = 0; k < layout_.nv; ++k) {
      ws.stage_v[static_cast<size_t>(k * W + l)] = T(0);
      ws.stage_tau[static_cast<size_t>(k * W + l)] = T(0);
      ws.stage_target[static_cast<size_t>(k * W + l)] = T(0);
    }
    for (const SingleDof& d : dofs_) ws.stage_target[static_cast<size_t>(d.v * W + l)] = neutral_[static_cast<size_t>(d.q)];
  }

  int n_;
  StateLayout layout_;
  std::vector<SingleDof> dofs_;  // the 1-dof joints: their PD targets are read
  std::vector<T> neutral_;
  std::vector<EnvStatus> status_;
  std::vector<StateFault> faults_;
};

}  // namespace batchdyn
