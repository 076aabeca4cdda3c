// The contact step's last stage, apply (kernels/contact/frictional_contact.hpp): the solution's
// impulses back to their candidates, limits and loops; v+ = v_free + M^-1 J^T lambda by one O(n)
// force response, returned as qdd = qdd_free + M^-1 J^T lambda / h so that the integrate stage
// steps to v+; and each candidate's force in the world frame.
#pragma once

#include "kernels/contact/contact_workspace.hpp"
#include "kernels/delassus/delassus_operations.hpp"

namespace batchdyn {

// From ws.row_impulses (N s): the listed candidates' impulses and world forces (impulse / h, N,
// on a pair's A; detection zeroed the others'), the limits' impulses, and the loop forces (impulse / h:
// with LoopRows::Solve the loops' forces, with Hold added to the loop solver's); qdd gains
// M^-1 J^T lambda / h.
template <class S>
void apply_contact_impulses(const ModelConstants<S>& c, const ContactPlan& plan, const TreeFactor<S>& M, const ContactRowCounts& rows, int groups,
                            LoopRows loops, const S& h, FrictionalContactWorkspace<S>& ws, S* qdd, S* loop_forces) {
  const int n = static_cast<int>(c.tree.size());
  const S* impulses = ws.row_impulses.data();
  for (int i = 0; i < n; ++i) ws.delassus.body_force[static_cast<size_t>(i)] = Force<S>::zero();
  for (S& tau : ws.joint_torque) tau = S(0);
  for (int b = 0; b < rows.contacts; ++b) {
    const int kb = ws.contact_list[static_cast<size_t>(b)];
    for (int r = 0; r < 3; ++r) ws.impulses[static_cast<size_t>(3 * kb + r)] = impulses[3 * b + r];
  }
  for (int ga = 0; ga < groups; ++ga) {  // the rows' impulses as forces on their bodies
    const ContactRowGroup<S>& A = ws.groups[static_cast<size_t>(ga)];
    for (int r = 0; r < A.dim; ++r) {
      const S impulse = impulses[A.row + r];
      for (int side = 0; side < A.sides; ++side)
        ws.delassus.body_force[static_cast<size_t>(A.side[side].body)] += A.side[side].columns[r] * impulse;
    }
  }
  for (int r = 0; r < rows.limits; ++r) {  // a limit's as a joint torque
    const int jr = ws.limit_list[static_cast<size_t>(r)];
    const S impulse = impulses[rows.limit_row() + r];
    ws.limit_impulses[static_cast<size_t>(jr)] = impulse;
    ws.joint_torque[static_cast<size_t>(plan.limited_joints[static_cast<size_t>(jr)].dof)] += ws.limit_sign[static_cast<size_t>(jr)] * impulse;
  }
  force_response(c, M, ws.delassus, ws.response.data(), ws.joint_torque.data());
  for (size_t k = 0; k < ws.response.size(); ++k) qdd[k] += ws.response[k] / h;
  const S inverse_h = S(1) / h;
  for (int r = 0; r < rows.loops; ++r) {
    const S force = impulses[rows.loop_row() + r] / h;
    loop_forces[r] = loops == LoopRows::Solve ? force : loop_forces[r] + force;
  }
  for (int b = 0; b < rows.contacts; ++b) {
    const size_t k = static_cast<size_t>(ws.contact_list[static_cast<size_t>(b)]);
    const S* l = ws.impulses.data() + 3 * k;
    const Vec3<S> f = (ws.normal[k] * l[0] + ws.tangent1[k] * l[1] + ws.tangent2[k] * l[2]) * inverse_h;
    ws.world_force[3 * k] = f.x, ws.world_force[3 * k + 1] = f.y, ws.world_force[3 * k + 2] = f.z;
  }
}

}  // namespace batchdyn
