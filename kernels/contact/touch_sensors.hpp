// Touch sensors on lanes, as MuJoCo defines them (engine_sensor.c, mjSENS_TOUCH): the sum of the
// normal contact forces on the site's link whose contact lies in the site's zone. A contact of a
// geometry on that link counts when its normal force is positive and the ray from its point
// along its normal, pointed from the link towards what it touches, meets the zone (a point inside
// the zone always does): MuJoCo's mju_rayGeom(site, contact.pos, ray) >= 0. The point is
// MuJoCo's, midway between the two surfaces (a ground contact's is its candidate's point moved
// by half the gap along -n).
//
// Read from the contact step's workspace after its solve (kernels/contact/frictional_contact.hpp):
// the detection's points, normals and flags and the solved impulses, with the bodies' placements
// of the same substep start, so that a touch reads the forces where they acted. Lane-generic, no
// allocation, no branches on values.
#pragma once

#include <limits>
#include <vector>

#include "kernels/contact/contact_workspace.hpp"
#include "topology/model.hpp"

namespace batchdyn {

// Which candidates each touch sensor feels, fixed by the model: per sensor, its site's body and
// placement, its zone, and its candidates (those of a geometry on its link, as a pair's A or B).
struct TouchPlan {
  struct Contact {
    int candidate = 0;
    bool on_b = false;    // the sensor's link is the pair's B: the ray is +n (n runs from B to A)
    bool ground = false;  // against the ground
  };
  struct Entry {
    int body = 0;
    Transformd placement;  // the site in its body's frame
    SensorZone zone;
    int first = 0, end = 0;  // its candidates: contacts[first, end)
  };
  std::vector<Entry> sensors;
  std::vector<Contact> contacts;
  int size() const { return static_cast<int>(sensors.size()); }
};

inline TouchPlan plan_touch(const Model& model) {
  TouchPlan plan;
  const ContactModel& contacts = model.contacts;
  for (const Sensor& sensor : model.sensors) {
    if (sensor.kind != SensorKind::Touch) continue;
    const Frame& site = model.frames[static_cast<size_t>(sensor.frame)];
    TouchPlan::Entry entry{site.body, site.placement, sensor.zone, static_cast<int>(plan.contacts.size()), 0};
    for (size_t k = 0; k < contacts.candidates.size(); ++k) {
      const ContactCandidate& cand = contacts.candidates[k];
      const bool on_a = contacts.geometries[static_cast<size_t>(cand.geometry)].link == sensor.link;
      const bool on_b = !cand.against_ground() && cand.geometry2 >= 0 && contacts.geometries[static_cast<size_t>(cand.geometry2)].link == sensor.link;
      if (on_a != on_b) plan.contacts.push_back({static_cast<int>(k), on_b, cand.against_ground()});
    }
    entry.end = static_cast<int>(plan.contacts.size());
    plan.sensors.push_back(entry);
  }
  return plan;
}

namespace detail {
// Where the line p + t d runs inside a solid: t in [enter, exit] (empty: enter > exit).
template <class S>
struct RaySpan {
  S enter, exit;
};

// |x|^2 <= 1 after scaling by 1/radii (a sphere, an ellipsoid) or over two coordinates (a
// cylinder's side): a t^2 + 2 b t + c <= 0. a = 0 (a ray along a cylinder's axis): all t where
// c <= 0, none otherwise.
template <class S>
RaySpan<S> quadratic_span(const S& a, const S& b, const S& c) {
  using std::sqrt, std::max;
  using T = lane_scalar<S>;
  const S big(std::numeric_limits<T>::max());
  const auto flat = a <= S(T(0));
  const S a_safe = select(flat, S(T(1)), a);
  const S discriminant = b * b - a_safe * c;
  const S root = sqrt(max(discriminant, S(T(0))));
  const auto meets = discriminant >= S(T(0));
  RaySpan<S> span{(-b - root) / a_safe, (-b + root) / a_safe};
  const auto inside = c <= S(T(0));
  span.enter = select(flat, select(inside, -big, big), select(meets, span.enter, big));
  span.exit = select(flat, select(inside, big, -big), select(meets, span.exit, -big));
  return span;
}

// |p_k + t d_k| <= h: the slab of half-width h along one axis.
template <class S>
RaySpan<S> slab_span(const S& p, const S& d, const S& h) {
  using std::abs, std::min, std::max;
  using T = lane_scalar<S>;
  const S big(std::numeric_limits<T>::max());
  const auto parallel = abs(d) < S(std::numeric_limits<T>::min());
  const S d_safe = select(parallel, S(T(1)), d);
  const S t1 = (-h - p) / d_safe, t2 = (h - p) / d_safe;
  const auto inside = abs(p) <= h;
  return {select(parallel, select(inside, -big, big), min(t1, t2)), select(parallel, select(inside, big, -big), max(t1, t2))};
}

template <class S>
RaySpan<S> intersect(const RaySpan<S>& a, const RaySpan<S>& b) {
  using std::min, std::max;
  return {max(a.enter, b.enter), min(a.exit, b.exit)};
}

// The span meets t >= 0.
template <class S>
auto ahead(const RaySpan<S>& span) {
  return (span.enter <= span.exit) && (span.exit >= S(lane_scalar<S>(0)));
}
}  // namespace detail

// Whether the ray p + t d, t >= 0 (in the zone's frame) meets the zone: MuJoCo's
// mju_rayGeom(...) >= 0 for the site's type. A lane mask.
template <class S>
auto ray_meets_zone(const SensorZone& zone, const Vec3<S>& p, const Vec3<S>& d) {
  using T = lane_scalar<S>;
  const S r(static_cast<T>(zone.size[0]));
  const auto sphere_at = [&](const S& z) {  // the sphere of radius r centred at (0, 0, z)
    const Vec3<S> q{p.x, p.y, p.z - z};
    return detail::quadratic_span(dot(d, d), dot(q, d), dot(q, q) - r * r);
  };
  switch (zone.shape) {  // the zone's shape: a model constant, not data
    case ZoneShape::Sphere: return detail::ahead(sphere_at(S(T(0))));
    case ZoneShape::Ellipsoid: {
      const Vec3<S> inverse{S(T(1) / static_cast<T>(zone.size[0])), S(T(1) / static_cast<T>(zone.size[1])), S(T(1) / static_cast<T>(zone.size[2]))};
      const Vec3<S> ps{p.x * inverse.x, p.y * inverse.y, p.z * inverse.z}, ds{d.x * inverse.x, d.y * inverse.y, d.z * inverse.z};
      return detail::ahead(detail::quadratic_span(dot(ds, ds), dot(ps, ds), dot(ps, ps) - S(T(1))));
    }
    case ZoneShape::Box:
      return detail::ahead(detail::intersect(detail::intersect(detail::slab_span(p.x, d.x, S(static_cast<T>(zone.size[0]))),
                                                               detail::slab_span(p.y, d.y, S(static_cast<T>(zone.size[1])))),
                                             detail::slab_span(p.z, d.z, S(static_cast<T>(zone.size[2])))));
    case ZoneShape::Cylinder:
    case ZoneShape::Capsule: {
      const S half(static_cast<T>(zone.size[1]));
      const detail::RaySpan<S> side =
          detail::quadratic_span(d.x * d.x + d.y * d.y, p.x * d.x + p.y * d.y, p.x * p.x + p.y * p.y - r * r);
      const auto cylinder = detail::ahead(detail::intersect(side, detail::slab_span(p.z, d.z, half)));
      if (zone.shape == ZoneShape::Cylinder) return cylinder;
      return cylinder || detail::ahead(sphere_at(half)) || detail::ahead(sphere_at(-half));
    }
  }
  return detail::ahead(sphere_at(S(T(0))));
}

// out[s] for each touch sensor s of the plan (N): its normal contact force, from the contact
// step's workspace after the solve of a substep of length h (impulses / h). `placement`: the
// plan's site placements cast to S. O(the plan's candidates).
template <class S>
void touch_kernel(const TouchPlan& plan, const Transform<S>* placement, const FrictionalContactWorkspace<S>& ws, const S& h, S* out) {
  using T = lane_scalar<S>;
  const S inverse_h = S(T(1)) / h;
  for (int s = 0; s < plan.size(); ++s) {
    const TouchPlan::Entry& entry = plan.sensors[static_cast<size_t>(s)];
    const Transform<S> site = ws.world_from_body[static_cast<size_t>(entry.body)] * placement[s];
    S sum(T(0));
    for (int k = entry.first; k < entry.end; ++k) {
      const TouchPlan::Contact& contact = plan.contacts[static_cast<size_t>(k)];
      const size_t c = static_cast<size_t>(contact.candidate);
      const Vec3<S>& n = ws.normal[c];
      const S force = ws.impulses[3 * c] * inverse_h;
      // MuJoCo's point, midway between the surfaces (a pair's already is; a ground candidate's
      // is on the robot's surface)
      const Vec3<S> point = contact.ground ? ws.contact_point[c] - n * (S(T(0.5)) * ws.gap[c]) : ws.contact_point[c];
      const Vec3<S> ray = contact.on_b ? n : -n;  // from the sensor's link towards what it touches
      const auto counted = (ws.in_contact[c] != S(T(0))) && (force > S(T(0))) &&
                           ray_meets_zone(entry.zone, site.rotation.transpose_times(point - site.translation), site.rotation.transpose_times(ray));
      sum += select(counted, force, S(T(0)));
    }
    out[s] = sum;
  }
}

}  // namespace batchdyn
