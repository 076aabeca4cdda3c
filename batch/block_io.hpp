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
#include <cstdint>
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
  const T* target = nullptr;  // nullptr: no PD targets (not PD control)
  const T* ctrl = nullptr;    // N x nu; nullptr: no actuator controls (not actuator control)
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
    zeros_.assign(static_cast<size_t>(std::max(model.nv, layout_.nu)), T(0));
    neutral_target_.assign(static_cast<size_t>(model.nv), T(0));
    for (const SingleDof& d : dofs_) neutral_target_[static_cast<size_t>(d.v)] = neutral_[static_cast<size_t>(d.q)];
  }

  // Gather: the rows of block `block`'s environments into ws.q (and ws.v, ws.tau, ws.target,
  // ws.ctrl when given), each environment checked; valid[l] says whether lane l holds a real, accepted
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
    NonFiniteSums sums;
    sums.add(lanes, count);
    alignas(64) T flags[W];
    Traits::store(sums.total(), flags);
    for (int l = 0; l < W && block * W + l < n_; ++l)
      if (valid[l] && flags[l] != T(0)) {
        valid[l] = false;
        status_[static_cast<size_t>(block * W + l)] = EnvStatus::NonFiniteResult;
      }
  }

  // `count` lanes into rows of the env-major `out`, for the valid environments of the block, as
  // they are: W x W tiles transposed in registers (layout/lane_transpose.hpp), each row's W
  // entries one store; the last count % W entries a partial tile (one masked store per row on
  // AVX-512, one at a time elsewhere).
  void write_rows(int block, const bool* valid, const L* lanes, int count, T* out) const { write_rows(block, valid, lanes, count, out, count); }
  // The same into `count` entries of rows `stride` apart (a column range of wider rows: `out`
  // points at the range's first column in environment 0's row).
  void write_rows(int block, const bool* valid, const L* lanes, int count, T* out, int stride) const {
    const int first = block * W, in_block = std::min(W, n_ - first);
    T* rows[W];
    bool write[W];
    for (int l = 0; l < W; ++l) {
      write[l] = l < in_block && valid[l];
      rows[l] = write[l] ? out + static_cast<long>(first + l) * stride : nullptr;
    }
    rows_from_lane_range<L>(lanes, count, rows, write);
  }
  // `count` 0/1 lanes into byte rows `stride` apart (a column range, as above), 1 where a lane
  // is non-zero: flags, one byte per environment and entry instead of a T.
  void write_flag_rows(int block, const bool* valid, const L* lanes, int count, std::uint8_t* out, int stride) const {
    const int first = block * W, in_block = std::min(W, n_ - first);
    alignas(64) T values[W];
    for (int k = 0; k < count; ++k) {
      LaneTraits<L>::store(lanes[k], values);
      for (int l = 0; l < in_block; ++l)
        if (valid[l]) out[static_cast<long>(first + l) * stride + k] = values[l] != T(0) ? 1 : 0;
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
  // x * 0 is 0 for finite x and NaN otherwise: a sum per lane of x * 0 over the entries flags a
  // non-finite one. Four independent sums, so that the entries (a Delassus block's m x m, a
  // humanoid's q, v and tau) are not one chain of additions each waiting for the last.
  struct NonFiniteSums {
    L part[4] = {L(T(0)), L(T(0)), L(T(0)), L(T(0))};
    void add(const L* lanes, int count) {
      const L zero(T(0));
      int k = 0;
      for (; k + 4 <= count; k += 4)
        for (int j = 0; j < 4; ++j) part[j] += lanes[k + j] * zero;
      for (; k < count; ++k) part[k % 4] += lanes[k] * zero;
    }
    void add(const L& x, int k) { part[k % 4] += x * L(T(0)); }  // the k-th entry of a sequence
    L total() const { return (part[0] + part[1]) + (part[2] + part[3]); }
  };

  // One environment's rows (q, v, tau, target, ctrl; all but q may be nullptr: not read).
  struct Rows {
    const T *q, *v, *tau, *target, *ctrl;
  };
  // The rows each lane of a block reads.
  struct LaneRows {
    const T *q[W], *v[W], *tau[W], *target[W], *ctrl[W];
    void point(int l, const Rows& r) { q[l] = r.q, v[l] = r.v, tau[l] = r.tau, target[l] = r.target, ctrl[l] = r.ctrl; }
  };
  Rows env_rows(const EnvRows<T>& rows, int e) const {
    const long q_at = static_cast<long>(e) * layout_.nq, v_at = static_cast<long>(e) * layout_.nv;
    return {rows.q + q_at, rows.v ? rows.v + v_at : nullptr, rows.tau ? rows.tau + v_at : nullptr,
            rows.target ? rows.target + v_at : nullptr, rows.ctrl ? rows.ctrl + static_cast<long>(e) * layout_.nu : nullptr};
  }
  // The neutral state: neutral q, zero v, tau and ctrl, the targets at the neutral positions.
  Rows neutral_rows() const { return {neutral_.data(), zeros_.data(), zeros_.data(), neutral_target_.data(), zeros_.data()}; }

  // The lanes' rows into the lanes the kernels read (ws.q, and ws.v, ws.tau, ws.target when the
  // call reads them): W x W tiles transposed in registers (layout/lane_transpose.hpp), the last
  // count % W entries a partial tile. Staging every entry through memory cost a store and a
  // reload per entry. The target rows are transposed whole, though only the 1-dof joints'
  // entries are read (the others hold whatever the user's rows hold): a humanoid's 30 targets
  // assembled entry by entry took W scalar loads each, its 36 entries are 5 tiles.
  void transpose(const LaneRows& sources, const EnvRows<T>& rows, BlockWorkspace<L>& ws) const {
    lanes_from_row_range<L>(sources.q, layout_.nq, ws.q.data());
    if (rows.v) lanes_from_row_range<L>(sources.v, layout_.nv, ws.v.data()), lanes_from_row_range<L>(sources.tau, layout_.nv, ws.tau.data());
    if (rows.target && !dofs_.empty()) lanes_from_row_range<L>(sources.target, layout_.nv, ws.target.data());
    if (rows.ctrl && layout_.nu > 0) lanes_from_row_range<L>(sources.ctrl, layout_.nu, ws.ctrl.data());
  }
  // Per lane, non-zero when what find_state_fault checks fails somewhere: a non-finite entry of
  // q, v, tau, the targets or the controls (x * 0 is 0 for finite x and NaN otherwise, so one sum flags them),
  // or a quaternion whose norm is off by more than kQuaternionNormTolerance (or not a number).
  L lanes_at_fault(const EnvRows<T>& rows, const BlockWorkspace<L>& ws) const {
    using std::abs;
    const L zero(T(0)), one(T(1)), tolerance(static_cast<T>(kQuaternionNormTolerance));
    NonFiniteSums sums;
    sums.add(ws.q.data(), layout_.nq);
    if (rows.v) sums.add(ws.v.data(), layout_.nv), sums.add(ws.tau.data(), layout_.nv);
    for (size_t k = 0; rows.target && k < dofs_.size(); ++k) sums.add(ws.target[static_cast<size_t>(dofs_[k].v)], static_cast<int>(k));
    if (rows.ctrl) sums.add(ws.ctrl.data(), layout_.nu);
    for (int at : layout_.quaternions) sums.part[0] += select(abs(quaternion_norm(ws.q.data(), at) - one) <= tolerance, zero, one);
    return sums.total();
  }
  // The first fault of an environment's rows, which lanes_at_fault found at fault.
  StateFault find_fault(const Rows& r) const { return find_state_fault(layout_, r.q, r.v, r.tau, dofs_, r.target, r.ctrl); }

  int n_;
  StateLayout layout_;
  std::vector<SingleDof> dofs_;  // the 1-dof joints: their PD targets are read
  std::vector<T> neutral_;
  std::vector<T> zeros_;           // max(nv, nu) zeros: the neutral state's v, tau and ctrl
  std::vector<T> neutral_target_;  // nv: the neutral positions of the 1-dof joints, 0 elsewhere
  std::vector<EnvStatus> status_;
  std::vector<StateFault> faults_;
};

}  // namespace batchdyn
