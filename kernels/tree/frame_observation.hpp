// Frame observations on lanes: the world pose and velocity of chosen frames, the state an RL
// policy observes. One forward kinematics sweep over the bodies that carry (or lead to) an
// observed frame, then per frame 13 numbers:
//     [ position (3) | quaternion x y z w (4) | linear velocity (3) | angular velocity (3) ]
// all in world coordinates: the position of the frame origin, its orientation ^0R_f as a unit
// quaternion with w >= 0, the velocity of the frame origin and the angular velocity
// (Pinocchio's LOCAL_WORLD_ALIGNED velocity). Lane-generic, no allocation, no branches on values.
#pragma once

#include <vector>

#include "kernels/tree/kinematics.hpp"
#include "layout/lanes.hpp"

namespace batchdyn {

inline constexpr int kFrameObservationSize = 13;

// What the sweep needs, fixed when the frames are chosen: the bodies to visit (ancestors of
// the frames' bodies, parents first) and each frame's body and placement.
struct FrameObservationPlan {
  std::vector<int> bodies;          // ascending; parents before children
  std::vector<int> frame_body;      // per observed frame
  std::vector<Transformd> frame_placement;  // ^{body}M_f
};

// The bodies a forward sweep must visit to place `bodies`: they and their ancestors, ascending
// (parents before children), the world excluded.
inline std::vector<int> bodies_supporting(const Model& model, const std::vector<int>& bodies) {
  std::vector<char> needed(static_cast<size_t>(model.num_bodies()), 0);
  for (int b : bodies)
    for (int i = b; i > 0; i = model.bodies[i].parent) needed[static_cast<size_t>(i)] = 1;
  std::vector<int> out;
  for (int i = 1; i < model.num_bodies(); ++i)
    if (needed[static_cast<size_t>(i)]) out.push_back(i);
  return out;
}

// Plans the sweep for the given frame indices (Model::frames). Throws Error for an index out
// of range.
inline FrameObservationPlan plan_frame_observation(const Model& model, const std::vector<int>& frames) {
  FrameObservationPlan plan;
  for (int f : frames) {
    if (f < 0 || f >= static_cast<int>(model.frames.size()))
      throw Error("observed frame index " + std::to_string(f) + " out of range [0, " + std::to_string(model.frames.size()) + ")");
    const Frame& frame = model.frames[static_cast<size_t>(f)];
    plan.frame_body.push_back(frame.body);
    plan.frame_placement.push_back(frame.placement);
  }
  plan.bodies = bodies_supporting(model, plan.frame_body);
  return plan;
}

// Unit quaternion (x, y, z, w), w >= 0, of a rotation matrix, without branches: the four
// classic formulas (Shepperd's method), each accurate when its component is the largest, are
// all evaluated and the best one selected per lane.
template <class S>
void rotation_to_quaternion(const Mat3<S>& R, S* quat) {
  using std::sqrt;
  const auto& r = R.m;
  const S t[4] = {S(1) + r[0][0] - r[1][1] - r[2][2],   // 4 x^2
                  S(1) - r[0][0] + r[1][1] - r[2][2],   // 4 y^2
                  S(1) - r[0][0] - r[1][1] + r[2][2],   // 4 z^2
                  S(1) + r[0][0] + r[1][1] + r[2][2]};  // 4 w^2
  const S sum_xy = r[0][1] + r[1][0], sum_xz = r[0][2] + r[2][0], sum_yz = r[1][2] + r[2][1];
  const S diff_x = r[2][1] - r[1][2], diff_y = r[0][2] - r[2][0], diff_z = r[1][0] - r[0][1];
  // Candidate k (the k-th component largest), times 4 * component_k:
  const S candidate[4][4] = {{t[0], sum_xy, sum_xz, diff_x},
                             {sum_xy, t[1], sum_yz, diff_y},
                             {sum_xz, sum_yz, t[2], diff_z},
                             {diff_x, diff_y, diff_z, t[3]}};
  S best_t = t[3], scaled[4] = {candidate[3][0], candidate[3][1], candidate[3][2], candidate[3][3]};
  for (int k = 0; k < 3; ++k) {
    const auto larger = t[k] > best_t;
    best_t = select(larger, t[k], best_t);
    for (int j = 0; j < 4; ++j) scaled[j] = select(larger, candidate[k][j], scaled[j]);
  }
  // best_t >= 1 (the four t sum to 4), so the scale is well conditioned.
  S scale = S(0.5) / sqrt(best_t);
  scale = select(scaled[3] < S(0), -scale, scale);  // w >= 0
  for (int j = 0; j < 4; ++j) quat[j] = scaled[j] * scale;
}

// Workspace: one placement and velocity per body.
template <class S>
struct FrameObservationWorkspace {
  explicit FrameObservationWorkspace(const Model& model)
      : world_from_body(static_cast<size_t>(model.num_bodies())), velocity(static_cast<size_t>(model.num_bodies())) {}
  std::vector<Transform<S>> world_from_body;  // ^0M_i
  std::vector<Motion<S>> velocity;            // v_i in body i's frame
  size_t bytes() const { return world_from_body.size() * sizeof(Transform<S>) + velocity.size() * sizeof(Motion<S>); }
};

// out[f * 13 + j]: observation j of frame f (see the top of the file), for q (nq lanes) and
// v (nv lanes). frame_placement: the plan's placements cast to S. O(bodies visited + frames).
template <class S>
void frame_observation_kernel(const ModelConstants<S>& c, const FrameObservationPlan& plan,
                              const Transform<S>* frame_placement, FrameObservationWorkspace<S>& ws, const S* q,
                              const S* v, S* out) {
  ws.world_from_body[0] = Transform<S>::identity();
  ws.velocity[0] = Motion<S>::zero();
  for (int i : plan.bodies) {
    Motion<S> joint_velocity;
    sweep_pose_and_velocity(c, i, q, v, ws.world_from_body.data(), ws.velocity.data(), joint_velocity);
  }
  const int frames = static_cast<int>(plan.frame_body.size());
  for (int f = 0; f < frames; ++f) {
    const int b = plan.frame_body[static_cast<size_t>(f)];
    const Transform<S>& body_pose = ws.world_from_body[b];
    const Transform<S> pose = body_pose * frame_placement[f];
    const Motion<S>& vb = ws.velocity[b];
    // Velocity of the frame origin p (body coordinates): v + w x p; both rotated to the world.
    const Vec3<S> linear = body_pose.rotation * (vb.linear + cross(vb.angular, frame_placement[f].translation));
    const Vec3<S> angular = body_pose.rotation * vb.angular;
    S* o = out + f * kFrameObservationSize;
    for (int k = 0; k < 3; ++k) o[k] = pose.translation[k];
    rotation_to_quaternion(pose.rotation, o + 3);
    for (int k = 0; k < 3; ++k) o[7 + k] = linear[k], o[10 + k] = angular[k];
  }
}

}  // namespace batchdyn
