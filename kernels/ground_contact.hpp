// Frictional contact with the ground in one time step, on lanes: the batched contact stage's
// kernel (batch/contact_solving.hpp), the lane counterpart of the dense reference
// kernels/contact_step.hpp (with joint limits off). Velocity-level time stepping (arXiv
// 2405.17020, §III-IV):
//   1. v_free = v + h qdd_free                  (qdd_free: the accelerations stage's ABA)
//   2. every candidate's gap to the plane, its three rows J_c (normal, two tangents, world
//      directions, at its lowest point) as force columns on its body, and J_c v_free
//   3. G6 over the contact bodies by PV-OSIMr (topology/contact_plan.hpp), then G of the
//      candidates in contact, G_ab = T_a G6 T_b^T, and g = J v_free + closing terms
//   4. the impulses by proximal ADMM (kernels/contact_admm.hpp)
//   5. v+ = v_free + M^-1 J^T lambda by one O(n) force response, returned as
//      qdd = qdd_free + M^-1 J^T lambda / h so that the integrate stage steps to v+.
// A candidate is in a lane's problem when its gap is below its margin (a mask); the block
// solves over the candidates in contact in any of its lanes (loop bounds, not per-lane
// branches), each lane with its own rows masked.
#pragma once

#include <vector>

#include "kernels/contact_admm.hpp"
#include "kernels/delassus_operations.hpp"
#include "kernels/pv_osimr.hpp"
#include "topology/contact_plan.hpp"

namespace batchdyn {

template <class S>
struct GroundContactWorkspace {
  GroundContactWorkspace(const Model& model, const ContactPlan& plan)
      : delassus(model, plan.delassus), world_from_body(static_cast<size_t>(model.num_bodies())),
        body_velocity(world_from_body.size()), v_free(static_cast<size_t>(model.nv)), response(v_free.size()),
        G6(static_cast<size_t>(plan.body_rows() * plan.body_rows())), gap(static_cast<size_t>(plan.num_candidates())),
        in_contact(gap.size()), columns(3 * gap.size()), velocity(3 * gap.size()), impulses(3 * gap.size()),
        list_impulses(3 * gap.size()), contact_list(gap.size()), admm(plan.num_candidates()) {}
  DelassusWorkspace<S> delassus;
  std::vector<Transform<S>> world_from_body;  // ^0M_i
  std::vector<Motion<S>> body_velocity;       // at v_free, body frames
  std::vector<S> v_free, response;            // nv: v + h qdd_free, M^-1 J^T lambda
  std::vector<S> G6;                          // 6B x 6B, row-major
  // Per candidate
  std::vector<S> gap, in_contact;             // n . p - radius - height; 1 when gap < margin, else 0
  std::vector<Force<S>> columns;              // 3 per candidate: its rows (n, t1, t2) as forces on its body, body frame
  std::vector<S> velocity;                    // 3 per candidate: J_c v_free
  std::vector<S> impulses;                    // 3 per candidate (n, t1, t2), N s: warm start in, result out
  std::vector<S> list_impulses;               // 3 per candidate of contact_list, in its order
  std::vector<int> contact_list;              // the block's candidates in contact (in any lane)
  ContactAdmmWorkspace<S> admm;
  size_t bytes() const {
    return delassus.bytes() + world_from_body.size() * sizeof(Transform<S>) + body_velocity.size() * sizeof(Motion<S>) +
           columns.size() * sizeof(Force<S>) +
           (v_free.size() + response.size() + G6.size() + gap.size() + in_contact.size() + velocity.size() + impulses.size() +
            list_impulses.size()) * sizeof(S) +
           contact_list.size() * sizeof(int) + admm.bytes();
  }
};

// The ground of a lane block: the plane n . x = height (n unit), per lane.
template <class S>
struct GroundLanes {
  Vec3<S> normal;
  S height;
};

// Two unit tangents completing n to a right-handed frame, per lane (as the reference's
// detail::tangents: the first from n x e_x, or n x e_y when n is close to e_x).
template <class S>
void ground_tangents(const Vec3<S>& n, Vec3<S>& t1, Vec3<S>& t2) {
  using std::abs;
  using std::sqrt;
  const auto near_x = abs(n.x) >= S(0.9);
  const Vec3<S> a{select(near_x, S(0), S(1)), select(near_x, S(1), S(0)), S(0)};
  t1 = cross(n, a);
  t1 = t1 * (S(1) / sqrt(dot(t1, t1)));
  t2 = cross(n, t1);
}

// One contact step's impulses for a lane block at (q, v) with the free accelerations qdd (in:
// ABA's; out: plus M^-1 J^T lambda / h). `mu` and `margin` are per candidate (lanes and
// scalars), ws.impulses the warm start (3 per candidate). Returns the ADMM report (iterations 0
// and converged when no candidate is in contact). `c` must be the constants the accelerations
// stage used (the implicitly damped ones in a damped step), so that M is the same.
// Preconditions: plan from this model; unit quaternions. O(n + B^2 + iterations m^2 + m^3/6).
template <class S>
ContactAdmmReport<S> ground_contact_kernel(const ModelConstants<S>& c, const ContactPlan& plan, const Model& model,
                                           const ContactSettings& settings, const GroundLanes<S>& ground, const S* mu,
                                           GroundContactWorkspace<S>& ws, const S* q, const S* v, const S& h, S* qdd) {
  const int n = static_cast<int>(c.tree.size());
  const int nv = model.nv;
  const int candidates = plan.num_candidates();
  const std::vector<ContactCandidate>& list = model.contacts.candidates;

  // 1. The free velocity, the placements (world too) and the bodies' velocities at v_free.
  for (int k = 0; k < nv; ++k) ws.v_free[static_cast<size_t>(k)] = v[k] + h * qdd[k];
  delassus_tree_sweep(c, plan.delassus, ws.delassus, q);
  ws.world_from_body[0] = Transform<S>::identity();
  ws.body_velocity[0] = Motion<S>::zero();
  for (int i = 1; i < n; ++i) {
    const Transform<S>& X = ws.delassus.parent_from_body[static_cast<size_t>(i)];
    ws.world_from_body[static_cast<size_t>(i)] = ws.world_from_body[static_cast<size_t>(c.tree[i].parent)] * X;
    Motion<S> joint_velocity;
    ws.body_velocity[static_cast<size_t>(i)] =
        body_velocity(c, i, X, ws.body_velocity[static_cast<size_t>(c.tree[i].parent)], ws.v_free.data(), joint_velocity);
  }

  // 2. Each candidate: gap, mask, rows as forces at its lowest point, and J_c v_free.
  Vec3<S> t1, t2;
  ground_tangents(ground.normal, t1, t2);
  int in_block = 0;
  for (int k = 0; k < candidates; ++k) {
    const ContactCandidate& cand = list[static_cast<size_t>(k)];
    const Transform<S>& X = ws.world_from_body[static_cast<size_t>(cand.body)];
    const Vec3<S> point = cast3<S>(cand.point);
    const S radius(static_cast<lane_scalar<S>>(cand.radius));
    const S margin(static_cast<lane_scalar<S>>(model.contacts.geometries[static_cast<size_t>(cand.geometry)].margin));
    const S gap = dot(ground.normal, X.rotation * point + X.translation) - radius - ground.height;
    const auto touching = gap < margin;
    ws.gap[static_cast<size_t>(k)] = gap;
    ws.in_contact[static_cast<size_t>(k)] = select(touching, S(1), S(0));
    const Vec3<S> directions[3] = {X.rotation.transpose_times(ground.normal), X.rotation.transpose_times(t1), X.rotation.transpose_times(t2)};
    const Vec3<S> lowest = point - directions[0] * radius;  // body frame
    for (int r = 0; r < 3; ++r) {
      Force<S>& f = ws.columns[static_cast<size_t>(3 * k + r)];
      f = Force<S>{directions[r], cross(lowest, directions[r])};
      ws.velocity[static_cast<size_t>(3 * k + r)] = dot(f, ws.body_velocity[static_cast<size_t>(cand.body)]);
    }
    if (any_lane(touching)) ws.contact_list[static_cast<size_t>(in_block++)] = k;
  }
  for (int k = 0; k < 3 * candidates; ++k) {  // no impulse where nothing touches (after the ADMM: only the block's list)
    const auto touching = ws.in_contact[static_cast<size_t>(k / 3)] != S(0);
    ws.impulses[static_cast<size_t>(k)] = select(touching, ws.impulses[static_cast<size_t>(k)], S(0));
  }
  ContactAdmmReport<S> report{S(0), S(0), S(1)};
  if (in_block == 0) return report;  // the whole block is in the air

  // 3. G6 by PV-OSIMr over the contact bodies' 6-row terminals (the unit forces at each body's
  // origin), then the block's problem: G_ab = T_a G6[a, b] T_b^T, g = J v_free + closing terms.
  for (int t = 0; t < plan.delassus.num_terminals(); ++t)
    for (int r = 0; r < 6; ++r) {
      Force<S>& e = ws.delassus.terminal_columns[static_cast<size_t>(t * 6 + r)];
      e = Force<S>::zero();
      e[r] = S(1);
    }
  pv_osimr_sweeps(c, plan.delassus, ws.delassus, ws.G6.data());
  const int rows6 = plan.body_rows();
  const int m = 3 * in_block;
  S* G = ws.admm.G.data();
  for (int b = 0; b < in_block; ++b) {
    const int kb = ws.contact_list[static_cast<size_t>(b)];
    const int slot_b = plan.candidate_slot[static_cast<size_t>(kb)];
    for (int a = 0; a <= b; ++a) {
      const int ka = ws.contact_list[static_cast<size_t>(a)];
      const S* block = ws.G6.data() + (6 * plan.candidate_slot[static_cast<size_t>(ka)]) * rows6 + 6 * slot_b;  // G6[a, b]
      for (int s = 0; s < 3; ++s) {
        const Force<S>& fb = ws.columns[static_cast<size_t>(3 * kb + s)];
        S u[6];  // G6[a, b] f_b,s: body a's velocity from a unit impulse of row s at candidate b
        for (int i = 0; i < 6; ++i) {
          S sum = block[i * rows6] * fb[0];
          for (int j = 1; j < 6; ++j) sum += block[i * rows6 + j] * fb[j];
          u[i] = sum;
        }
        for (int r = 0; r < 3; ++r) {
          const Force<S>& fa = ws.columns[static_cast<size_t>(3 * ka + r)];
          S value = fa[0] * u[0];
          for (int i = 1; i < 6; ++i) value += fa[i] * u[i];
          G[(3 * a + r) * m + 3 * b + s] = value;
          G[(3 * b + s) * m + 3 * a + r] = value;
        }
      }
    }
    ws.admm.g[static_cast<size_t>(3 * b)] = ws.velocity[static_cast<size_t>(3 * kb)] + closing_velocity(ws.gap[static_cast<size_t>(kb)], h, settings);
    ws.admm.g[static_cast<size_t>(3 * b + 1)] = ws.velocity[static_cast<size_t>(3 * kb + 1)];
    ws.admm.g[static_cast<size_t>(3 * b + 2)] = ws.velocity[static_cast<size_t>(3 * kb + 2)];
    ws.admm.mu[static_cast<size_t>(b)] = mu[kb];
    ws.admm.in_contact[static_cast<size_t>(b)] = ws.in_contact[static_cast<size_t>(kb)];
  }

  // 4. The impulses, warm-started from the previous step's.
  std::vector<S>& warm = ws.list_impulses;
  for (int b = 0; b < in_block; ++b)
    for (int r = 0; r < 3; ++r)
      warm[static_cast<size_t>(3 * b + r)] = ws.impulses[static_cast<size_t>(3 * ws.contact_list[static_cast<size_t>(b)] + r)];
  report = contact_admm(in_block, settings, ws.admm, warm.data());

  // 5. v+ = v_free + M^-1 J^T lambda: the impulses as forces on their bodies, one response sweep.
  for (int i = 0; i < n; ++i) ws.delassus.body_force[static_cast<size_t>(i)] = Force<S>::zero();
  for (int b = 0; b < in_block; ++b) {
    const int kb = ws.contact_list[static_cast<size_t>(b)];
    const int body = list[static_cast<size_t>(kb)].body;
    for (int r = 0; r < 3; ++r) {
      const S impulse = warm[static_cast<size_t>(3 * b + r)];
      ws.impulses[static_cast<size_t>(3 * kb + r)] = impulse;
      ws.delassus.body_force[static_cast<size_t>(body)] += ws.columns[static_cast<size_t>(3 * kb + r)] * impulse;
    }
  }
  delassus_force_response(c, ws.delassus, ws.response.data());
  for (int k = 0; k < nv; ++k) qdd[k] += ws.response[static_cast<size_t>(k)] / h;
  return report;
}

}  // namespace batchdyn
