// Observations: the world pose and velocity of chosen frames, per environment, N x k x 13 — the
// state an RL policy observes (kernels/tree/frame_observation.hpp: position, quaternion x y z w with
// w >= 0, linear velocity of the frame origin, angular velocity, world axes).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "batch/argument_checks.hpp"
#include "batch/block_workspace.hpp"
#include "kernels/tree/frame_observation.hpp"

namespace batchdyn {

template <class L>
class Observations {
 public:
  using T = lane_scalar<L>;

  Observations(const Model& model, int num_envs) : model_(model), n_(num_envs) {}

  // Chooses the frames (names of links or joints, Model::frames), in order; the owned output is
  // sized for them. Throws Error naming an unknown frame.
  void set_frames(const std::vector<std::string>& names) {
    std::vector<int> frames;
    for (const std::string& name : names) {
      const int f = model_.has_frame(name, FrameKind::Link)    ? model_.frame_index(name, FrameKind::Link)
                    : model_.has_frame(name, FrameKind::Joint) ? model_.frame_index(name, FrameKind::Joint)
                                                               : -1;
      if (f < 0) throw Error("set_observed_frames: model '" + model_.name + "' has no link or joint frame named '" + name + "'");
      frames.push_back(f);
    }
    plan_ = plan_frame_observation(model_, frames);
    placement_.clear();
    for (const Transformd& M : plan_.frame_placement) placement_.push_back(cast_transform<L>(M));
    names_ = names;
    owned_output_.assign(static_cast<size_t>(n_) * size(), T(0));
    output_ = owned_output_.data();
  }
  const std::vector<std::string>& frames() const { return names_; }
  int size() const { return static_cast<int>(names_.size()) * kFrameObservationSize; }  // per environment
  T* output() const { return output_; }
  // Writes into the caller's N x k x 13 array instead. Throws Error on a size mismatch.
  void use_buffer(std::span<T> out) {
    check_buffer_size("observations", out.size(), n_, size(), "k x 13");
    output_ = out.data();
  }

  // The block's observations into ws.observation_out (ws.q, ws.v gathered).
  void observe(const ModelConstants<L>& c, BlockWorkspace<L>& ws) const {
    frame_observation_kernel(c, plan_, placement_.data(), *ws.observation, ws.q.data(), ws.v.data(), ws.observation_out.data());
  }

 private:
  const Model& model_;
  int n_;
  FrameObservationPlan plan_;
  std::vector<Transform<L>> placement_;  // the plan's frame placements as lanes
  std::vector<std::string> names_;
  std::vector<T> owned_output_;
  T* output_ = nullptr;
};

}  // namespace batchdyn
