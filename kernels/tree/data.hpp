// Workspace of the reference kernels for one model (Pinocchio's Model/Data split): sized once
// from the Model, so no kernel allocates per call. One Data per thread. It keeps the model's
// numbers in type S (constants): build a new Data after changing a model's bodies.
#pragma once

#include <vector>

#include "kernels/tree/aba_workspace.hpp"
#include "kernels/tree/model_constants.hpp"
#include "kernels/tree/singular_joints.hpp"
#include "layout/dense.hpp"
#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

template <class S>
struct Data {
  explicit Data(const Model& model)
      : parent_from_body(model.num_bodies()), world_from_body(model.num_bodies()),
        velocity(model.num_bodies()), acceleration(model.num_bodies()),
        force(model.num_bodies()), composite_inertia(model.num_bodies()), constants(model),
        singular_joints(find_singular_joints(model)), aba(model), tau(model.nv), qdd(model.nv), M(model.nv, model.nv), zero(VectorX<S>::Zero(model.nv)) {
    tau.setZero();
    qdd.setZero();
    M.setZero();
  }

  // Forward kinematics (kinematics.hpp)
  std::vector<Transform<S>> parent_from_body;  // ^{λ(i)}M_i: body i in its parent's frame
  std::vector<Transform<S>> world_from_body;   // ^0M_i
  std::vector<Motion<S>> velocity;             // v_i, body frame
  std::vector<Motion<S>> acceleration;         // a_i, body frame (spatial acceleration)
  // RNEA
  std::vector<Force<S>> force;                 // f_i transmitted by joint i
  // CRBA
  std::vector<RigidInertia<S>> composite_inertia;  // I^C_i, body frame
  // ABA
  ModelConstants<S> constants;  // the model's numbers in type S
  // Joints that move no mass (kernels/tree/singular_joints.hpp), found once: the entry points that
  // need M(q)^{-1} refuse a singular model.
  std::vector<int> singular_joints;
  AbaWorkspace<S> aba;

  VectorX<S> tau;  // RNEA output
  VectorX<S> qdd;  // ABA output
  MatrixX<S> M;    // CRBA output (full symmetric)
  VectorX<S> zero; // nv zeros (qdd = 0 / v = 0 arguments); never written
};

}  // namespace batchdyn
