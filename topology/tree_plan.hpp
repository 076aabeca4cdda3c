// The flat per-body table every sweep walks (parents before children): body i's place in the
// tree and its joint, without the string-bearing Body. Computed once from the Model; the
// kernels read it from ModelConstants::tree, the configuration helpers from here.
#pragma once

#include <vector>

#include "topology/joint_model.hpp"
#include "topology/model.hpp"

namespace batchdyn {

struct BodyPlan {
  int parent = -1;  // λ(i), 0 = world
  JointType joint_type = JointType::Revolute;
  int idx_q = 0, idx_v = 0;  // first coordinate in q and in v
  int nq = 0, nv = 0;
  // k when ^{λ(i)}M_i = (R_k(q_i), p): a revolute joint about e_k behind a joint placement
  // without rotation (as in most URDFs). Motions, forces and inertias then cross the joint by
  // a plane rotation and a translation (kernels/tree/joint.hpp); -1 otherwise.
  int rotation_axis = -1;
  // The order in which a backward sweep (i = n-1 ... 1) carries bodies into their parents:
  // whether some body has this one as its parent, and whether this body is the first of its
  // parent's children to be carried (the highest-numbered child). A sweep that starts the
  // parent's articulated inertia from that first carry (I_λ + the child's term) need not copy
  // I_λ in beforehand (kernels/tree/aba.hpp).
  bool has_children = false;
  bool first_child_carried = false;
};

// k when body b's placement in its parent is a rotation about e_k after a pure translation.
inline int rotation_axis(const Body& b) {
  if (b.joint_type != JointType::Revolute && b.joint_type != JointType::Continuous) return -1;
  const Mat3d& R = b.joint_placement.rotation;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      if (R(r, c) != (r == c ? 1.0 : 0.0)) return -1;
  return coordinate_axis(b.axis);
}

// One row per body, the world (row 0) included. O(n).
inline std::vector<BodyPlan> plan_tree(const Model& model) {
  std::vector<BodyPlan> tree(static_cast<size_t>(model.num_bodies()));
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    tree[static_cast<size_t>(i)] = {b.parent, b.joint_type, b.idx_q, b.idx_v, b.nq, b.nv, rotation_axis(b), false, false};
  }
  for (int i = model.num_bodies() - 1; i >= 1; --i) {
    BodyPlan& parent = tree[static_cast<size_t>(model.bodies[i].parent)];
    tree[static_cast<size_t>(i)].first_child_carried = !parent.has_children;
    parent.has_children = true;
  }
  return tree;
}

// A 1-dof joint's velocity and position coordinate: the dofs that take PD targets and gains.
struct SingleDof {
  int v, q;
};

// The 1-dof joints (revolute, continuous, prismatic) in body order. O(n).
inline std::vector<SingleDof> single_dofs(const Model& model) {
  std::vector<SingleDof> dofs;
  for (int i = 1; i < model.num_bodies(); ++i)
    if (is_single_dof(model.bodies[i].joint_type)) dofs.push_back({model.bodies[i].idx_v, model.bodies[i].idx_q});
  return dofs;
}

}  // namespace batchdyn
