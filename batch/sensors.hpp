// Sensors: what the robot file's <sensor> elements read (Model::sensors; MJCF), per environment,
// N x sensordata_size — the IMU and joint readings an RL policy observes, computed on lanes by
// kernels/tree/sensors.hpp at the current q, v, the last evaluation's qdd (after step(): the
// last substep's, contact included; after forward_dynamics(): its result) and its joint torques
// (Batch::actuator_torques: the actuation stage's output).
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "batch/argument_checks.hpp"
#include "batch/block_workspace.hpp"
#include "kernels/tree/sensors.hpp"

namespace batchdyn {

template <class L>
class Sensors {
 public:
  using T = lane_scalar<L>;

  Sensors(const Model& model, int num_envs) : plan_(plan_sensors(model)), n_(num_envs) {
    for (const SensorPlan::Entry& s : plan_.sensors) {
      placement_.push_back(cast_transform<L>(s.placement));
      if (s.kind == SensorKind::Touch) touch_.push_back(s);
    }
    owned_output_.assign(static_cast<size_t>(n_) * size(), T(0));
    output_ = owned_output_.data();
  }
  int size() const { return plan_.size; }  // per environment
  const SensorPlan& plan() const { return plan_; }
  T* output() const { return output_; }
  // Writes into the caller's N x sensordata_size array instead. Throws Error on a size mismatch.
  void use_buffer(std::span<T> out) {
    check_buffer_size("sensordata", out.size(), n_, size(), "sensordata_size");
    output_ = out.data();
  }

  // The block's sensors into ws.sensor_out (ws.q, ws.v gathered; the accelerations in ws.tau,
  // the joint torques in ws.target when the plan reads them).
  void sense(const ModelConstants<L>& c, BlockWorkspace<L>& ws) const {
    sensor_kernel(c, plan_, placement_.data(), *ws.sensors, ws.q.data(), ws.v.data(), ws.tau.data(), ws.target.data(),
                  ws.sensor_out.data());
  }

  // The touch sensors' readings (`touch`: N x touch sensors, the contact stage's, in the model's
  // order) into the block's valid environments' rows of the output, each clamped by its cutoff.
  void write_touch(int block, const bool* valid, const T* touch) const {
    constexpr int W = lane_width<L>;
    const int touches = static_cast<int>(touch_.size());
    for (int l = 0; l < W && block * W + l < n_; ++l) {
      if (!valid[l]) continue;
      const size_t e = static_cast<size_t>(block * W + l);
      for (int t = 0; t < touches; ++t) {
        const SensorPlan::Entry& s = touch_[static_cast<size_t>(t)];
        const T value = touch[e * static_cast<size_t>(touches) + static_cast<size_t>(t)];
        output_[e * static_cast<size_t>(size()) + static_cast<size_t>(s.address)] =
            s.cutoff > 0 ? std::min(value, static_cast<T>(s.cutoff)) : value;  // a touch is >= 0
      }
    }
  }
  bool has_touch() const { return !touch_.empty(); }

 private:
  SensorPlan plan_;
  int n_;
  std::vector<Transform<L>> placement_;  // the plan's frame placements as lanes
  std::vector<SensorPlan::Entry> touch_;  // the touch sensors, in the model's order
  std::vector<T> owned_output_;
  T* output_ = nullptr;
};

}  // namespace batchdyn
