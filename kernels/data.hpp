// Workspace of the reference kernels for one model (Pinocchio's Model/Data split): sized once
// from the Model, so no kernel allocates per call. One Data per thread.
#pragma once

#include <Eigen/Core>
#include <array>
#include <vector>

#include "layout/small_cholesky.hpp"
#include "layout/spatial.hpp"
#include "topology/model.hpp"

namespace batchdyn {

template <class S> using VectorX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <class S> using MatrixX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

template <class S>
struct Data {
  explicit Data(const Model& model)
      : parent_from_body(model.num_bodies()), world_from_body(model.num_bodies()),
        velocity(model.num_bodies()), acceleration(model.num_bodies()), bias_acceleration(model.num_bodies()),
        force(model.num_bodies()), composite_inertia(model.num_bodies()), articulated_inertia(model.num_bodies()),
        articulated_bias(model.num_bodies()), U(model.num_bodies()), Dinv(model.num_bodies()),
        u(model.num_bodies()), tau(model.nv), qdd(model.nv), M(model.nv, model.nv), zero(VectorX<S>::Zero(model.nv)) {
    tau.setZero();
    qdd.setZero();
    M.setZero();
  }

  // Forward kinematics (kinematics.hpp)
  std::vector<Transform<S>> parent_from_body;  // ^{λ(i)}M_i: body i in its parent's frame
  std::vector<Transform<S>> world_from_body;   // ^0M_i
  std::vector<Motion<S>> velocity;             // v_i, body frame
  std::vector<Motion<S>> acceleration;         // a_i, body frame (spatial acceleration)
  std::vector<Motion<S>> bias_acceleration;    // c_i = v_i x S_i qd_i (ABA)
  // RNEA
  std::vector<Force<S>> force;                 // f_i transmitted by joint i
  // CRBA
  std::vector<RigidInertia<S>> composite_inertia;  // I^C_i, body frame
  // ABA
  std::vector<ArticulatedInertia<S>> articulated_inertia;  // I^A_i
  std::vector<Force<S>> articulated_bias;                  // p^A_i
  std::vector<std::array<Force<S>, 6>> U;                  // U_i = I^A_i S_i (one column per dof)
  std::vector<SmallMatrix<S>> Dinv;                        // D_i^{-1} = (S_i^T U_i)^{-1}
  std::vector<std::array<S, 6>> u;                         // u_i = tau_i - S_i^T p^A_i

  VectorX<S> tau;  // RNEA output
  VectorX<S> qdd;  // ABA output
  MatrixX<S> M;    // CRBA output (full symmetric)
  VectorX<S> zero; // nv zeros (qdd = 0 / v = 0 arguments); never written
};

}  // namespace batchdyn
