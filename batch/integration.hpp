// The integrate stage of step(), on the lanes of a block, one substep of length h on the
// configuration manifold (q ⊕ dv: kernels/tree/configuration.hpp, the exp map for the free flyer and
// ball joints). Two integrators (Batch::set_integrator), as MuJoCo offers Euler and RK4:
//
// - Integrator::SemiImplicitEuler (the default): v += h qdd, q = q ⊕ h v. One evaluation of the
//   dynamics per substep, symplectic on a conservative system, first order. On violent passive
//   motion it can gain energy without bound: the undamped, unactuated fixed-root humanoid
//   (joint limits off) overflows after about 3 s at h = 1 ms, and still blows up at h = 0.25 ms.
// - Integrator::RungeKutta4: the classical fourth-order Runge-Kutta method on (q, v), the stage
//   states taken on the manifold from the substep's start (MuJoCo's mj_RungeKutta does the same):
//       k_1 = (v, a(q, v)),                   a: actuate, passive forces, accelerations
//       k_2 = f(q ⊕ h/2 v_1,  v + h/2 a_1),
//       k_3 = f(q ⊕ h/2 v_2,  v + h/2 a_2),
//       k_4 = f(q ⊕ h v_3,    v + h a_3),
//       v+ = v + h/6 (a_1 + 2 a_2 + 2 a_3 + a_4),   q+ = q ⊕ h/6 (v_1 + 2 v_2 + 2 v_3 + v_4).
//   Four evaluations per substep. The same humanoid gains < 0.01 J and loses <= 0.5 J (of
//   40-110 J) over 10 s at h = 1 ms: RK4's error on motion h does not resolve is dissipative
//   (tests/test_integrators.cpp pins the energy bound and the fourth order).
//   What is not smooth stays a velocity-level correction per substep: the contact stage
//   (contacts, joint limits, and the loops when they are contact rows) turns RK4's mean
//   acceleration into the post-contact one, v+ = v + h qdd_post as in the Euler step, and the
//   contact's share a_c = qdd_post - a_RK4 reaches q as a force constant over the substep
//   (dq += h^2/2 a_c): a resting contact stays exact; an impact moves q by the mean of the pre-
//   and post-impact velocities (half a substep of approach, which Baumgarte removes). Joint
//   damping stays implicit in every stage (the stage derivative solves (M + h D) a = ... ,
//   batch/passive_forces.hpp): stable for any d, first-order in the damping term only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "batch/block_workspace.hpp"
#include "kernels/tree/configuration.hpp"
#include "topology/name_table.hpp"

namespace batchdyn {

enum class Integrator : std::uint8_t { SemiImplicitEuler, RungeKutta4 };
inline constexpr NameTable<Integrator> kIntegrators[] = {{Integrator::SemiImplicitEuler, "euler"}, {Integrator::RungeKutta4, "rk4"}};

// How many times a substep evaluates the dynamics (actuate, passive forces, accelerations).
constexpr int evaluations_per_substep(Integrator integrator) { return integrator == Integrator::RungeKutta4 ? 4 : 1; }

// Semi-implicit Euler: v += h qdd, q = q ⊕ h v (ws.qdd: the substep's accelerations).
template <class L>
void integrate_substep(std::span<const BodyPlan> tree, BlockWorkspace<L>& ws, const L& h) {
  for (size_t k = 0; k < ws.v.size(); ++k) {
    ws.v[k] += h * ws.qdd[k];
    ws.displacement[k] = h * ws.v[k];
  }
  integrate_kernel(tree, ws.q.data(), ws.displacement.data(), ws.q.data());
}

// RK4's four evaluations for the substep from (ws.q, ws.v): `evaluate()` writes ws.qdd from ws.q
// and ws.v. Leaves ws.q, ws.v at the substep's start, ws.qdd = (a_1 + 2 a_2 + 2 a_3 + a_4) / 6
// (also kept in ws.rk4_acceleration) and ws.rk4_velocity = (v_1 + 2 v_2 + 2 v_3 + v_4) / 6.
template <class L, class Evaluate>
void runge_kutta_evaluations(std::span<const BodyPlan> tree, BlockWorkspace<L>& ws, const L& h, Evaluate&& evaluate) {
  using T = lane_scalar<L>;
  const size_t nv = ws.v.size();
  std::copy(ws.q.begin(), ws.q.end(), ws.rk4_q0.begin());
  std::copy(ws.v.begin(), ws.v.end(), ws.rk4_v0.begin());
  const T stage_time[3] = {T(0.5), T(0.5), T(1)};  // c_2, c_3, c_4: where k_2..k_4 are taken
  const T weight[4] = {T(1), T(2), T(2), T(1)};    // b_i, times 6
  for (int stage = 0; stage < 4; ++stage) {
    if (stage > 0) {  // k_{stage+1} at (q0 ⊕ c h v_stage, v0 + c h a_stage): ws.v, ws.qdd hold the last stage's
      const L ch = L(stage_time[stage - 1]) * h;
      for (size_t k = 0; k < nv; ++k) {
        ws.displacement[k] = ch * ws.v[k];
        ws.v[k] = ws.rk4_v0[k] + ch * ws.qdd[k];
      }
      integrate_kernel(tree, ws.rk4_q0.data(), ws.displacement.data(), ws.q.data());
    }
    evaluate();
    const L b(weight[stage]);
    for (size_t k = 0; k < nv; ++k) {
      ws.rk4_velocity[k] = stage == 0 ? ws.v[k] : ws.rk4_velocity[k] + b * ws.v[k];
      ws.rk4_acceleration[k] = stage == 0 ? ws.qdd[k] : ws.rk4_acceleration[k] + b * ws.qdd[k];
    }
  }
  const L sixth(T(1) / T(6));
  std::copy(ws.rk4_q0.begin(), ws.rk4_q0.end(), ws.q.begin());
  std::copy(ws.rk4_v0.begin(), ws.rk4_v0.end(), ws.v.begin());
  for (size_t k = 0; k < nv; ++k) {
    ws.rk4_velocity[k] *= sixth;
    ws.rk4_acceleration[k] *= sixth;
    ws.qdd[k] = ws.rk4_acceleration[k];
  }
}

// RK4's update after runge_kutta_evaluations and the contact stage, which may have changed
// ws.qdd by the contact acceleration a_c = qdd - a_RK4: v += h qdd,
// q = q ⊕ h (v_RK4 + h/2 a_c), the contact force constant over the substep (a box resting on
// the plane stays exactly where it is: a_c cancels RK4's free fall h/2 g).
template <class L>
void integrate_runge_kutta_substep(std::span<const BodyPlan> tree, BlockWorkspace<L>& ws, const L& h) {
  using T = lane_scalar<L>;
  const L half_h = L(T(0.5)) * h;
  for (size_t k = 0; k < ws.v.size(); ++k) {
    ws.displacement[k] = h * (ws.rk4_velocity[k] + half_h * (ws.qdd[k] - ws.rk4_acceleration[k]));
    ws.v[k] += h * ws.qdd[k];
  }
  integrate_kernel(tree, ws.q.data(), ws.displacement.data(), ws.q.data());
}

}  // namespace batchdyn
