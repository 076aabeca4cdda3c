#include "topology/constraints_io.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "topology/configuration.hpp"
#include "topology/joint_model.hpp"
#include "topology/json_parse.hpp"
#include "topology/reduced_model.hpp"

namespace batchdyn {

ConstraintSpec hold_at_configuration(const Model& model, ConstraintSpec spec, const Eigen::VectorXd& q) {
  if (q.size() != model.nq)
    throw Error("hold_at_configuration: q has " + std::to_string(q.size()) + " entries, model '" + model.name +
                "' has nq = " + std::to_string(model.nq));
  const Frame& f1 = model.frames[model.frame_index(spec.link1, FrameKind::Link)];
  const Frame& f2 = model.frames[model.frame_index(spec.link2, FrameKind::Link)];
  std::vector<Transformd> world_from_body(static_cast<size_t>(model.num_bodies()), Transformd::identity());
  for (int i = 1; i < model.num_bodies(); ++i)  // parents first
    world_from_body[static_cast<size_t>(i)] = world_from_body[static_cast<size_t>(model.bodies[i].parent)] *
                                              body_placement_at(model.bodies[i], q.data() + model.bodies[i].idx_q);
  const Transformd world_from_c1 = world_from_body[static_cast<size_t>(f1.body)] * f1.placement * spec.placement1.transform();
  const Transformd world_from_link2 = world_from_body[static_cast<size_t>(f2.body)] * f2.placement;
  const Transformd link2_from_c2 = world_from_link2.inverse() * world_from_c1;
  spec.placement2 = placement_of(link2_from_c2);
  return spec;
}

namespace {
using nlohmann::json;

using detail::read_placement;
using detail::read_vec3;

std::string read_string(const json& c, const char* key, const std::string& where) {
  if (!c.contains(key)) throw Error(where + ": missing field '" + key + "'");
  if (!c[key].is_string()) throw Error(where + ": field '" + key + "' must be a string");
  return c[key].get<std::string>();
}

// "lock_joints": ["name", ...] (0 clamped into the limits) or {"name": position | null, ...}.
std::vector<JointLock> read_joint_locks(const json& j, const std::string& where) {
  std::vector<JointLock> locks;
  if (j.is_array()) {
    for (size_t k = 0; k < j.size(); ++k) {
      if (!j[k].is_string()) throw Error(where + "[" + std::to_string(k) + "]: expected a joint name");
      locks.push_back({j[k].get<std::string>(), std::nullopt});
    }
  } else if (j.is_object()) {
    for (const auto& [name, value] : j.items()) {
      if (value.is_null()) locks.push_back({name, std::nullopt});
      else if (value.is_number()) locks.push_back({name, value.get<double>()});
      else throw Error(where + "." + name + ": expected a position (number) or null");
    }
  } else {
    throw Error(where + ": expected an array of joint names or an object {\"joint\": position}");
  }
  return locks;
}

// "armature" / "damping": number (every 1-dof joint) or {"name": value, ...}; `set` is
// set_armature or set_damping.
void read_joint_values(Model& model, const json& j, const std::string& where, void (*set_all)(Model&, double),
                       void (*set_one)(Model&, const std::string&, double)) {
  if (j.is_number()) {
    set_all(model, j.get<double>());
  } else if (j.is_object()) {
    for (const auto& [name, value] : j.items()) {
      if (!value.is_number()) throw Error(where + "." + name + ": expected a number");
      set_one(model, name, value.get<double>());
    }
  } else {
    throw Error(where + ": expected a number or an object {\"joint\": " + where + "}");
  }
}
}  // namespace

namespace {
void apply_model_json(Model& model, const json& doc, const std::string& source) {
  if (!doc.is_object() || (!doc.contains("constraints") && !doc.contains("lock_joints") && !doc.contains("armature") &&
                           !doc.contains("damping")))
    throw Error(source + ": expected an object with a \"constraints\" array (and/or \"lock_joints\", \"armature\", \"damping\")");
  if (doc.contains("constraints") && !doc["constraints"].is_array())
    throw Error(source + ": \"constraints\" must be an array");
  try {
    if (doc.contains("lock_joints")) model = lock_joints(model, read_joint_locks(doc["lock_joints"], "lock_joints"));
    if (doc.contains("armature"))
      read_joint_values(model, doc["armature"], "armature", [](Model& m, double a) { set_armature(m, a); },
                        [](Model& m, const std::string& joint, double a) { set_armature(m, joint, a); });
    if (doc.contains("damping"))
      read_joint_values(model, doc["damping"], "damping", [](Model& m, double d) { set_damping(m, d); },
                        [](Model& m, const std::string& joint, double d) { set_damping(m, joint, d); });
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
  if (!doc.contains("constraints")) return;

  Eigen::VectorXd reference_q = neutral_configuration<double>(model);
  if (doc.contains("reference_q")) {
    const json& r = doc["reference_q"];
    if (r.is_string() && r.get<std::string>() == "neutral") {
    } else if (r.is_array() && static_cast<int>(r.size()) == model.nq) {
      for (int k = 0; k < model.nq; ++k) {
        if (!r[k].is_number()) throw Error(source + ": reference_q[" + std::to_string(k) + "] is not a number");
        reference_q[k] = r[k].get<double>();
        if (!std::isfinite(reference_q[k])) throw Error(source + ": reference_q[" + std::to_string(k) + "] is not finite");
      }
      for (int i = 1; i < model.num_bodies(); ++i) {  // a quaternion must have a direction to normalise
        const int offset = quaternion_offset(model.bodies[i].joint_type);
        if (offset < 0) continue;
        const int at = model.bodies[i].idx_q + offset;
        if (!(reference_q.segment(at, 4).norm() > 1e-6))
          throw Error(source + ": reference_q[" + std::to_string(at) + ".." + std::to_string(at + 3) +
                      "], the quaternion of joint '" + model.bodies[i].joint_name + "', is zero; give a unit quaternion [x, y, z, w]");
      }
      normalize(model, reference_q);
      model.reference_configuration.assign(reference_q.data(), reference_q.data() + reference_q.size());
    } else {
      throw Error(source + ": reference_q must be \"neutral\" or an array of nq = " + std::to_string(model.nq) + " numbers");
    }
  }

  int index = 0;
  for (const json& c : doc["constraints"]) {
    const std::string where = source + ": constraints[" + std::to_string(index++) + "]";
    if (!c.is_object()) throw Error(where + ": expected an object");
    ConstraintSpec spec;
    spec.name = read_string(c, "name", where);
    const std::string w = where + " ('" + spec.name + "')";
    const std::string type = read_string(c, "type", w);
    if (type == "connect" || type == "spherical") spec.type = ConstraintType::Connect;
    else if (type == "weld" || type == "fixed") spec.type = ConstraintType::Weld;
    else if (type == "revolute") spec.type = ConstraintType::Revolute;
    else throw Error(w + ": unknown type '" + type + "' (connect, weld or revolute)");
    spec.link1 = read_string(c, "link1", w);
    spec.link2 = read_string(c, "link2", w);
    if (c.contains("placement1")) spec.placement1 = read_placement(c["placement1"], w + ".placement1");
    bool hold = false;
    if (c.contains("placement2")) {
      if (c["placement2"].is_string() && c["placement2"].get<std::string>() == "hold") hold = true;
      else spec.placement2 = read_placement(c["placement2"], w + ".placement2");
    }
    if (c.contains("axis")) spec.axis = read_vec3(c["axis"], w + ".axis");
    for (const char* gain : {"kp", "kd"}) {
      if (!c.contains(gain)) continue;
      if (!c[gain].is_number()) throw Error(w + ": '" + gain + "' must be a number");
      (gain[1] == 'p' ? spec.kp : spec.kd) = c[gain].get<double>();
      spec.gains_given = true;
    }
    if (hold) {
      for (const std::string* link : {&spec.link1, &spec.link2})
        if (!model.has_frame(*link, FrameKind::Link)) throw Error(w + ": unknown link '" + *link + "'");
      spec = hold_at_configuration(model, spec, reference_q);
    }
    add_constraint(model, spec, source);
  }
}

}  // namespace

void add_constraints_from_json(Model& model, const std::string& text, const std::string& source) {
  const json doc = detail::parse_json(text, source);
  detail::with_json_errors(source, [&] { apply_model_json(model, doc, source); });
}

void add_constraints_from_json_file(Model& model, const std::string& path) {
  add_constraints_from_json(model, detail::read_text_file(path, "constraint file"), path);
}

}  // namespace batchdyn
