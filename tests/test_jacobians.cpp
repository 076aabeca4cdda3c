// Jacobians and constraint kinematics against finite differences of forward kinematics.
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
Eigen::VectorXd displaced(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& dv) {
  Eigen::VectorXd out(model.nq);
  integrate<double>(model, q, dv, out);
  return out;
}
}  // namespace

TEST_CASE("frame Jacobians (LOCAL) match central differences of frame placements") {
  std::mt19937 rng(20);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    Eigen::MatrixXd J(6, m.model.nv);
    const State s = random_state(m.model, rng);
    const double h = 1e-6;
    for (int f = 1; f < static_cast<int>(m.model.frames.size()); ++f) {
      CAPTURE(m.model.frames[f].name);
      forward_kinematics(m.model, data, s.q);
      frame_jacobian(m.model, data, f, J);
      forward_kinematics(m.model, data, displaced(m.model, s.q, -h * s.v));
      const Transformd before = frame_placement(m.model, data, f);
      forward_kinematics(m.model, data, displaced(m.model, s.q, h * s.v));
      const Transformd after = frame_placement(m.model, data, f);
      const Eigen::VectorXd numeric = to_vector(log6(before.inverse() * after)) / (2 * h);
      CHECK(relative_error(J * s.v, numeric) < 1e-7);
    }
  }
}

TEST_CASE("frame Jacobian times v equals the frame velocity of forward kinematics") {
  std::mt19937 rng(21);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    Eigen::MatrixXd J(6, m.model.nv);
    const State s = random_state(m.model, rng);
    forward_kinematics(m.model, data, s.q, s.v, s.tau, Motion<double>::zero());
    for (int f = 1; f < static_cast<int>(m.model.frames.size()); ++f) {
      frame_jacobian(m.model, data, f, J);
      const Frame& frame = m.model.frames[f];
      CHECK(relative_error(J * s.v, to_vector(frame_velocity(data, frame.body, frame.placement))) < 1e-12);
    }
  }
}

TEST_CASE("constraint drift equals the time derivative of the constraint velocity along q(t) = q + t v") {
  std::mt19937 rng(22);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    Data<double> data(m.model);
    ConstraintData<double> cd(m.model);
    for (int trial = 0; trial < 3; ++trial) {
      const State s = random_state(m.model, rng);
      constraint_kinematics(m.model, data, cd, s.q, s.v);
      const Eigen::VectorXd drift = cd.drift;
      CHECK(relative_error(cd.J * s.v, cd.velocity_error) < 1e-12);
      // Constraint velocity at a displaced configuration, with connect rows rotated to world
      // axes (their rows are expressed in a frame that moves).
      const double h = 1e-6;
      auto velocity_in_fixed_axes = [&](double t, Eigen::VectorXd& rows) {
        const Eigen::VectorXd q = displaced(m.model, s.q, t * s.v);
        constraint_kinematics(m.model, data, cd, q, s.v);
        rows = cd.velocity_error;
        for (const Constraint& c : m.model.constraints) {
          if (c.type != ConstraintType::Connect) continue;
          const Transformd world_from_c1 = data.world_from_body[c.body1] * c.placement1;
          const Vec3d r{rows[c.row], rows[c.row + 1], rows[c.row + 2]};
          const Vec3d w = world_from_c1.rotation * r;
          for (int k = 0; k < 3; ++k) rows[c.row + k] = w[k];
        }
      };
      Eigen::VectorXd plus, minus;
      velocity_in_fixed_axes(h, plus);
      velocity_in_fixed_axes(-h, minus);
      Eigen::VectorXd numeric = (plus - minus) / (2 * h);
      constraint_kinematics(m.model, data, cd, s.q, s.v);
      for (const Constraint& c : m.model.constraints) {  // rotate connect rows back to frame 1
        if (c.type != ConstraintType::Connect) continue;
        const Transformd world_from_c1 = data.world_from_body[c.body1] * c.placement1;
        const Vec3d w{numeric[c.row], numeric[c.row + 1], numeric[c.row + 2]};
        const Vec3d r = world_from_c1.rotation.transpose_times(w);
        for (int k = 0; k < 3; ++k) numeric[c.row + k] = r[k];
      }
      CHECK(relative_error(drift, numeric) < 1e-6);
    }
  }
}

TEST_CASE("constraint rows are the derivative of the position error where the constraint holds") {
  // Generated and shipped closures hold at their reference configuration; there, d e / dt = J v.
  std::mt19937 rng(23);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    if (m.name.rfind("gen:", 0) != 0 && m.name != "four_bar") continue;  // reference q = neutral
    Data<double> data(m.model);
    ConstraintData<double> cd(m.model);
    const Eigen::VectorXd q0 = neutral_configuration<double>(m.model);
    const State s = random_state(m.model, rng);
    constraint_kinematics(m.model, data, cd, q0, s.v);
    CHECK(cd.position_error.cwiseAbs().maxCoeff() < 1e-10);
    const Eigen::VectorXd Jv = cd.J * s.v;
    const double h = 1e-6;
    constraint_kinematics(m.model, data, cd, displaced(m.model, q0, h * s.v), s.v);
    const Eigen::VectorXd plus = cd.position_error;
    constraint_kinematics(m.model, data, cd, displaced(m.model, q0, -h * s.v), s.v);
    const Eigen::VectorXd minus = cd.position_error;
    CHECK(relative_error((plus - minus) / (2 * h), Jv) < 1e-6);
  }
}
