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
#include "layout/lane_transpose.hpp"
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
    zeros_.assign(static_cast<size_t>(model.nv), T(0));
    neutral_target_ = zeros_;
    for (const SingleDof& d : dofs_) neutral_target_[static_cast<size_t>(d.v)] = neutral_[static_cast<size_t>(d.q)];
  }

  // Gather: the rows of block `block`'s environments into ws.q (and ws.v, ws.tau, ws.target when
  // given), each environment checked; valid[l] says whether lane l holds a real, accepted
  // environment, whose status becomes Ok (or its fault). The rows are transposed first and
  // checked in lanes, W environments per operation (lanes_at_fault); only an environment found
  // at fault there is searched for the entry to name (find_state_fault) and replaced by the
  // neutral state. Quaternions are then normalised in lanes.
  void gather(int block, const EnvRows<T>& rows, BlockWorkspace<L>& ws, bool* valid) {
    LaneRows sources;
    for (int l = 0; l < W; ++l) {
      const int e = block * W + l;
      valid[l] = e < n_;
      sources.point(l, valid[l] ? env_rows(rows, e) : neutral_rows());
    }
    transpose(sources, rows, ws);
    alignas(64) T at_fault[W];
    LaneTraits<L>::store(lanes_at_fault(rows, ws), at_fault);
    bool replaced = false;
    for (int l = 0; l < W; ++l) {
      if (!valid[l]) continue;
      const int e = block * W + l;
      StateFault& fault = faults_[static_cast<size_t>(e)];
      fault = at_fault[l] != T(0) ? find_fault(env_rows(rows, e)) : StateFault{};
      status_[static_cast<size_t>(e)] = fault.status;
      if (fault.ok()) continue;
      valid[l] = false;
      sources.point(l, neutral_rows());
      replaced = true;
    }
    if (replaced) transpose(sources, rows, ws);
    for (int at : layout_.quaternions) {
      const L norm = quaternion_norm(ws.q.data(), at);
      for (int k = 0; k < 4; ++k) ws.q[static_cast<size_t>(at + k)] = ws.q[static_cast<size_t>(at + k)] / norm;
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
    // x * 0 is 0 for finite x and NaN otherwise: a sum per lane flags a non-finite output. Four
    // independent sums, so that a Delassus block's m x m entries are not one chain of additions
    // each waiting for the last.
    const L zero(T(0));
    L sums[4] = {zero, zero, zero, zero};
    int k = 0;
    for (; k + 4 <= count; k += 4)
      for (int j = 0; j < 4; ++j) sums[j] += lanes[k + j] * zero;
    for (; k < count; ++k) sums[0] += lanes[k] * zero;
    const L non_finite = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    alignas(64) T flags[W];
    Traits::store(non_finite, flags);
    for (int l = 0; l < W && block * W + l < n_; ++l)
      if (valid[l] && flags[l] != T(0)) {
        valid[l] = false;
        status_[static_cast<size_t>(block * W + l)] = EnvStatus::NonFiniteResult;
      }
  }

  // `count` lanes into rows of the env-major `out`, for the valid environments of the block, as
  // they are: W x W tiles transposed in registers (layout/lane_transpose.hpp), each row's W
  // entries one store; the last count % W entries one at a time.
  void write_rows(int block, const bool* valid, const L* lanes, int count, T* out) const {
    const int first = block * W, in_block = std::min(W, n_ - first);
    T* rows[W];
    bool write[W];
    for (int l = 0; l < W; ++l) {
      write[l] = l < in_block && valid[l];
      rows[l] = write[l] ? out + static_cast<long>(first + l) * count : nullptr;
    }
    int k = 0;
    for (; k + W <= count; k += W) rows_from_lane_tile<L>(lanes + k, k, rows, write);
    for (; k < count; ++k) rows_from_lanes<L>(lanes[k], k, rows, write);
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
  // One environment's rows (q, v, tau, target; v, tau and target may be nullptr: not read).
  struct Rows {
    const T *q, *v, *tau, *target;
  };
  // The rows each lane of a block reads.
  struct LaneRows {
    const T *q[W], *v[W], *tau[W], *target[W];
    void point(int l, const Rows& r) { q[l] = r.q, v[l] = r.v, tau[l] = r.tau, target[l] = r.target; }
  };
  Rows env_rows(const EnvRows<T>& rows, int e) const {
    const long q_at = static_cast<long>(e) * layout_.nq, v_at = static_cast<long>(e) * layout_.nv;
    return {rows.q + q_at, rows.v ? rows.v + v_at : nullptr, rows.tau ? rows.tau + v_at : nullptr,
            rows.target ? rows.target + v_at : nullptr};
  }
  // The neutral state: neutral q, zero v and tau, the targets at the neutral positions.
  Rows neutral_rows() const { return {neutral_.data(), zeros_.data(), zeros_.data(), neutral_target_.data()}; }

  // The lanes' rows into the lanes the kernels read (ws.q, and ws.v, ws.tau, ws.target when the
  // call reads them): W x W tiles transposed in registers (layout/lane_transpose.hpp), the last
  // count % W entries and the targets (1-dof joints only) assembled entry by entry. Staging every
  // entry through memory cost a store and a reload per entry.
  void transpose(const LaneRows& sources, const EnvRows<T>& rows, BlockWorkspace<L>& ws) const {
    lanes_from_row_range<L>(sources.q, layout_.nq, ws.q.data());
    if (rows.v) lanes_from_row_range<L>(sources.v, layout_.nv, ws.v.data()), lanes_from_row_range<L>(sources.tau, layout_.nv, ws.tau.data());
    for (size_t k = 0; rows.target && k < dofs_.size(); ++k) {
      const int dof = dofs_[k].v;
      ws.target[static_cast<size_t>(dof)] = lanes_from_rows<L>(sources.target, dof);
    }
  }
  // Per lane, non-zero when what find_state_fault checks fails somewhere: a non-finite entry of
  // q, v, tau or the targets (x * 0 is 0 for finite x and NaN otherwise, so one sum flags them),
  // or a quaternion whose norm is off by more than kQuaternionNormTolerance (or not a number).
  L lanes_at_fault(const EnvRows<T>& rows, const BlockWorkspace<L>& ws) const {
    using std::abs;
    const L zero(T(0)), one(T(1)), tolerance(static_cast<T>(kQuaternionNormTolerance));
    L sum = zero;
    for (int k = 0; k < layout_.nq; ++k) sum += ws.q[static_cast<size_t>(k)] * zero;
    for (int k = 0; rows.v && k < layout_.nv; ++k) sum += ws.v[static_cast<size_t>(k)] * zero + ws.tau[static_cast<size_t>(k)] * zero;
    for (size_t k = 0; rows.target && k < dofs_.size(); ++k) sum += ws.target[static_cast<size_t>(dofs_[k].v)] * zero;
    for (int at : layout_.quaternions) sum += select(abs(quaternion_norm(ws.q.data(), at) - one) <= tolerance, zero, one);
    return sum;
  }
  // The first fault of an environment's rows, which lanes_at_fault found at fault.
  StateFault find_fault(const Rows& r) const { return find_state_fault(layout_, r.q, r.v, r.tau, dofs_, r.target); }

  int n_;
  StateLayout layout_;
  std::vector<SingleDof> dofs_;  // the 1-dof joints: their PD targets are read
  std::vector<T> neutral_;
  std::vector<T> zeros_;           // nv zeros: the neutral state's v and tau
  std::vector<T> neutral_target_;  // nv: the neutral positions of the 1-dof joints, 0 elsewhere
  std::vector<EnvStatus> status_;
  std::vector<StateFault> faults_;
};

}  // namespace batchdyn
