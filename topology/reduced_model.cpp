#include "topology/reduced_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "topology/contacts.hpp"
#include "topology/joint_model.hpp"

namespace batchdyn {

namespace {
double parse_number(const std::string& text, const std::string& where) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw Error(where + ": '" + text + "' is not a number");
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// The body moved by a lockable / armature-carrying joint, or an Error saying why not.
int one_dof_joint(const Model& model, const std::string& joint, const char* what) {
  if (!model.has_joint(joint)) {
    if (model.has_frame(joint, FrameKind::Joint))
      throw Error(std::string(what) + ": joint '" + joint + "' of model '" + model.name + "' is a fixed joint");
    throw Error(std::string(what) + ": model '" + model.name + "' has no joint named '" + joint + "'");
  }
  const int body = model.joint_index(joint);
  if (model.bodies[body].joint_type == JointType::FreeFlyer)
    throw Error(std::string(what) + ": joint '" + joint + "' is the free-flyer root (load the model with a fixed root instead)");
  if (!is_single_dof(model.bodies[body].joint_type))
    throw Error(std::string(what) + ": joint '" + joint + "' is a " + joint_type_name(model.bodies[body].joint_type) +
                " joint with " + std::to_string(model.bodies[body].nv) + " dofs; only 1-dof joints take a single value");
  return body;
}
}  // namespace

Model lock_joints(const Model& model, const std::vector<JointLock>& locks) {
  const int n = model.num_bodies();
  std::vector<char> locked(static_cast<size_t>(n), 0);
  std::vector<double> position(static_cast<size_t>(model.nq), 0.0);
  for (const JointLock& lock : locks) {
    const int i = one_dof_joint(model, lock.joint, "lock_joints");
    if (locked[static_cast<size_t>(i)]) throw Error("lock_joints: joint '" + lock.joint + "' is listed twice");
    locked[static_cast<size_t>(i)] = 1;
    const int idx = model.bodies[i].idx_q;
    const double lo = model.lower_position_limit[static_cast<size_t>(idx)];
    const double hi = model.upper_position_limit[static_cast<size_t>(idx)];
    const double value = lock.position.value_or(std::clamp(0.0, lo, hi));
    if (!std::isfinite(value)) throw Error("lock_joints: joint '" + lock.joint + "': position is not finite");
    if (value < lo || value > hi) {
      std::ostringstream text;
      text << "lock_joints: joint '" << lock.joint << "': position " << value << " is outside its limits [" << lo << ", "
           << hi << "]";
      throw Error(text.str());
    }
    position[static_cast<size_t>(idx)] = value;
  }

  ModelBuilder builder(model.name);
  // Old body -> the new body that carries it, and its frame in that body.
  std::vector<int> new_body(static_cast<size_t>(n), 0);
  std::vector<Transformd> in_new_body(static_cast<size_t>(n), Transformd::identity());
  const std::string source = "lock_joints on model '" + model.name + "'";
  for (int i = 1; i < n; ++i) {
    const Body& b = model.bodies[i];
    const int parent = new_body[static_cast<size_t>(b.parent)];
    const Transformd joint_in_parent = in_new_body[static_cast<size_t>(b.parent)] * b.joint_placement;
    if (locked[static_cast<size_t>(i)]) {
      const Transformd placement = joint_in_parent * joint_transform(b.joint_type, joint_axis<double>(b.axis), position.data() + b.idx_q);
      new_body[static_cast<size_t>(i)] = parent;
      in_new_body[static_cast<size_t>(i)] = placement;
      if (parent > 0) builder.add_inertia(parent, b.inertia.transformed(placement), b.name);
      continue;
    }
    const size_t q = static_cast<size_t>(b.idx_q), v = static_cast<size_t>(b.idx_v);
    const int index = builder.add_body(
        parent, b.name, b.joint_name, b.joint_type, joint_in_parent, b.axis, model.lower_position_limit[q],
        model.upper_position_limit[q], !is_single_dof(b.joint_type) ? 0.0 : model.velocity_limit[v],
        !is_single_dof(b.joint_type) ? 0.0 : model.effort_limit[v], source);
    builder.add_inertia(index, b.inertia, b.name);
    builder.set_mimic(index, b.mimic);
    for (int k = 0; k < b.nv; ++k) {
      builder.set_armature(index, k, model.armature[static_cast<size_t>(b.idx_v + k)]);
      builder.set_damping(index, k, model.damping[static_cast<size_t>(b.idx_v + k)]);
      builder.set_friction_loss(index, k, model.friction_loss[static_cast<size_t>(b.idx_v + k)]);
    }
    if (model.spring_stiffness[v] != 0.0) builder.set_spring(index, model.spring_stiffness[v], model.spring_reference[v], source);
    new_body[static_cast<size_t>(i)] = index;
  }
  // Every other frame, re-attached; a locked joint's own frames become link / fixed-joint frames.
  for (const Frame& f : model.frames) {
    if (f.body == 0 && f.name == "world" && f.kind == FrameKind::Link) continue;
    const bool own_frame = f.body > 0 && ((f.kind == FrameKind::Link && f.name == model.bodies[f.body].name) ||
                                          (f.kind == FrameKind::Joint && f.name == model.bodies[f.body].joint_name));
    if (own_frame && !locked[static_cast<size_t>(f.body)]) continue;  // add_body made it
    const FrameKind kind = f.kind == FrameKind::Joint ? FrameKind::FixedJoint : f.kind;
    builder.add_frame(f.name, kind, new_body[static_cast<size_t>(f.body)],
                      in_new_body[static_cast<size_t>(f.body)] * f.placement, source);
  }

  Model reduced = builder.finish();
  reduced.gravity = model.gravity;
  reduced.timestep = model.timestep;
  reduced.load_notes = model.load_notes;
  // Actuators follow their joints; those of locked joints go, as do the keyframes (their q has
  // the locked coordinates).
  for (const Actuator& a : model.actuators) {
    if (!reduced.has_joint(a.joint)) {
      reduced.load_notes.push_back("actuator '" + a.name + "' removed: its joint '" + a.joint + "' is locked");
      continue;
    }
    Actuator moved = a;
    moved.dof = reduced.bodies[static_cast<size_t>(reduced.joint_index(a.joint))].idx_v;
    reduced.actuators.push_back(moved);
  }
  if (!model.keyframes.empty())
    reduced.load_notes.push_back(std::to_string(model.keyframes.size()) + " keyframe(s) removed: they set the locked joints");
  for (const Constraint& c : model.constraints) add_constraint(reduced, c.spec, source);
  reduced.contacts = model.contacts;  // the geometry stays on its links, whose bodies changed
  resolve_contacts(reduced);
  return reduced;
}

namespace {
// A per-dof joint parameter (armature, damping): finite and >= 0, for the named 1-dof joint
// (joint != nullptr) or every 1-dof joint.
void set_joint_parameter(Model& model, std::vector<double> Model::*values, const char* name, const std::string* joint,
                         double value) {
  const std::string who = std::string("set_") + name;
  const int named = joint ? one_dof_joint(model, *joint, who.c_str()) : 0;
  if (!std::isfinite(value) || value < 0.0) {
    std::ostringstream text;
    text << who << ": " << (joint ? "joint '" + *joint + "': " : "") << name << " must be finite and >= 0, got " << value;
    throw Error(text.str());
  }
  for (int i = 1; i < model.num_bodies(); ++i)
    if ((joint ? i == named : is_single_dof(model.bodies[i].joint_type)))
      (model.*values)[static_cast<size_t>(model.bodies[i].idx_v)] = value;
}
}  // namespace

void set_armature(Model& model, const std::string& joint, double armature) {
  set_joint_parameter(model, &Model::armature, "armature", &joint, armature);
}

void set_armature(Model& model, double armature) {
  set_joint_parameter(model, &Model::armature, "armature", nullptr, armature);
}

void set_damping(Model& model, const std::string& joint, double damping) {
  set_joint_parameter(model, &Model::damping, "damping", &joint, damping);
}

void set_damping(Model& model, double damping) { set_joint_parameter(model, &Model::damping, "damping", nullptr, damping); }

std::vector<JointLock> parse_joint_locks(const std::string& text) {
  std::vector<JointLock> locks;
  for (const std::string& item : split(text, ',')) {
    const size_t eq = item.find('=');
    JointLock lock{item.substr(0, eq), std::nullopt};
    if (eq != std::string::npos) lock.position = parse_number(item.substr(eq + 1), "--lock-joints '" + item + "'");
    if (lock.joint.empty()) throw Error("--lock-joints '" + item + "': missing joint name");
    locks.push_back(lock);
  }
  if (locks.empty()) throw Error("--lock-joints: expected name[=value],name[=value],...");
  return locks;
}

void apply_armature_spec(Model& model, const std::string& text) {
  if (text.find('=') == std::string::npos) {
    set_armature(model, parse_number(text, "--armature"));
    return;
  }
  for (const std::string& item : split(text, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--armature '" + item + "': expected name=value");
    set_armature(model, item.substr(0, eq), parse_number(item.substr(eq + 1), "--armature '" + item + "'"));
  }
}

}  // namespace batchdyn
