#include "topology/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace batchdyn {

const char* joint_type_name(JointType t) {
  switch (t) {
    case JointType::Revolute: return "revolute";
    case JointType::Continuous: return "continuous";
    case JointType::Prismatic: return "prismatic";
    case JointType::FreeFlyer: return "free_flyer";
  }
  return "?";
}

int joint_nq(JointType t) { return t == JointType::FreeFlyer ? 7 : 1; }
int joint_nv(JointType t) { return t == JointType::FreeFlyer ? 6 : 1; }

const char* constraint_type_name(ConstraintType t) {
  switch (t) {
    case ConstraintType::Connect: return "connect";
    case ConstraintType::Weld: return "weld";
    case ConstraintType::Revolute: return "revolute";
  }
  return "?";
}

int constraint_dimension(ConstraintType t) {
  switch (t) {
    case ConstraintType::Connect: return 3;
    case ConstraintType::Weld: return 6;
    case ConstraintType::Revolute: return 5;
  }
  return 0;
}

Transformd Placement::transform() const { return {rpy_rotation(rpy.x, rpy.y, rpy.z), xyz}; }

int Model::max_depth() const {
  int d = 0;
  for (const Body& b : bodies) d = std::max(d, b.depth);
  return d;
}

int Model::body_index(const std::string& n) const {
  if (n == "world") return 0;
  for (int i = 1; i < num_bodies(); ++i)
    if (bodies[i].name == n) return i;
  throw Error("model '" + name + "': no body named '" + n + "'");
}

bool Model::has_frame(const std::string& n) const {
  return std::any_of(frames.begin(), frames.end(), [&](const Frame& f) { return f.name == n; });
}

int Model::frame_index(const std::string& n) const {
  for (int i = 0; i < static_cast<int>(frames.size()); ++i)
    if (frames[i].name == n) return i;
  throw Error("model '" + name + "': no link or frame named '" + n + "'");
}

int Model::joint_index(const std::string& n) const {
  for (int i = 1; i < num_bodies(); ++i)
    if (bodies[i].joint_name == n) return i;
  throw Error("model '" + name + "': no joint named '" + n + "'");
}

ModelBuilder::ModelBuilder(std::string model_name) {
  model_.name = std::move(model_name);
  Body world;
  world.name = "world";
  world.joint_name = "universe";
  world.parent = -1;
  model_.bodies.push_back(world);
  body_source_.push_back("world");
  model_.frames.push_back({"world", 0, Transformd::identity()});
}

bool ModelBuilder::has_name(const std::string& n) const {
  if (model_.has_frame(n)) return true;
  return std::any_of(model_.bodies.begin(), model_.bodies.end(),
                     [&](const Body& b) { return b.name == n || b.joint_name == n; });
}

int ModelBuilder::add_body(int parent, const std::string& link_name, const std::string& joint_name,
                           JointType type, const Transformd& joint_placement, const Vec3d& axis,
                           double lower, double upper, double velocity_limit, double effort_limit,
                           const std::string& source) {
  if (parent < 0 || parent >= model_.num_bodies())
    throw Error(source + ": parent body index " + std::to_string(parent) + " out of range");
  if (has_name(link_name)) throw Error(source + ": duplicate link name '" + link_name + "'");
  if (has_name(joint_name)) throw Error(source + ": duplicate joint name '" + joint_name + "'");
  Vec3d unit_axis = axis;
  if (type != JointType::FreeFlyer) {
    const double n = std::sqrt(dot(axis, axis));
    if (!(n > 1e-12) || !std::isfinite(n))
      throw Error(source + ": joint '" + joint_name + "' has a zero or non-finite axis");
    unit_axis = axis * (1.0 / n);
  }
  if (type == JointType::Revolute && !(lower <= upper))
    throw Error(source + ": joint '" + joint_name + "' has lower limit > upper limit");

  Body b;
  b.name = link_name;
  b.joint_name = joint_name;
  b.parent = parent;
  b.depth = model_.bodies[parent].depth + 1;
  b.joint_type = type;
  b.joint_placement = joint_placement;
  b.axis = unit_axis;
  b.idx_q = model_.nq;
  b.idx_v = model_.nv;
  b.nq = joint_nq(type);
  b.nv = joint_nv(type);
  b.inertia = RigidInertiad::zero();
  model_.nq += b.nq;
  model_.nv += b.nv;

  const double inf = std::numeric_limits<double>::infinity();
  if (type == JointType::FreeFlyer) {
    for (int k = 0; k < 3; ++k) { model_.lower_position_limit.push_back(-inf); model_.upper_position_limit.push_back(inf); }
    for (int k = 0; k < 4; ++k) { model_.lower_position_limit.push_back(-1.0); model_.upper_position_limit.push_back(1.0); }
    for (int k = 0; k < 6; ++k) { model_.velocity_limit.push_back(inf); model_.effort_limit.push_back(inf); }
  } else {
    const bool limited = type != JointType::Continuous;
    model_.lower_position_limit.push_back(limited ? lower : -inf);
    model_.upper_position_limit.push_back(limited ? upper : inf);
    model_.velocity_limit.push_back(velocity_limit > 0 ? velocity_limit : inf);
    model_.effort_limit.push_back(effort_limit > 0 ? effort_limit : inf);
  }

  const int index = model_.num_bodies();
  model_.bodies.push_back(b);
  model_.bodies[parent].children.push_back(index);
  body_source_.push_back(source);
  model_.frames.push_back({link_name, index, Transformd::identity()});
  return index;
}

void ModelBuilder::add_inertia(int body, const RigidInertiad& inertia) {
  if (inertia.mass <= 0.0) return;  // massless parts (e.g. sensor frames) add nothing
  RigidInertiad& I = model_.bodies[body].inertia;
  I = I.mass > 0.0 ? I + inertia : inertia;
}

void ModelBuilder::add_frame(const std::string& n, int body, const Transformd& placement, const std::string& source) {
  if (has_name(n)) throw Error(source + ": duplicate link or frame name '" + n + "'");
  model_.frames.push_back({n, body, placement});
}

void ModelBuilder::set_source(int body, const std::string& source) { body_source_[body] = source; }

namespace {
// Positive definite by Sylvester's criterion on the (symmetrised) 3x3 matrix.
bool positive_definite(const Mat3d& I) {
  const double a = I(0, 0), b = 0.5 * (I(0, 1) + I(1, 0)), c = 0.5 * (I(0, 2) + I(2, 0));
  const double d = I(1, 1), e = 0.5 * (I(1, 2) + I(2, 1)), f = I(2, 2);
  const double m1 = a, m2 = a * d - b * b;
  const double m3 = a * (d * f - e * e) - b * (b * f - e * c) + c * (b * e - d * c);
  return m1 > 0 && m2 > 0 && m3 > 0;
}
}  // namespace

Model ModelBuilder::finish() {
  for (int i = 1; i < model_.num_bodies(); ++i) {
    const Body& b = model_.bodies[i];
    const std::string& where = body_source_[i];
    if (!(b.inertia.mass > 0.0) || !std::isfinite(b.inertia.mass))
      throw Error(where + ": moving body '" + b.name + "' (joint '" + b.joint_name +
                  "') has zero, negative or non-finite mass; every moving body needs mass > 0");
    if (!positive_definite(b.inertia.inertia_com))
      throw Error(where + ": moving body '" + b.name + "' (joint '" + b.joint_name +
                  "') has a rotational inertia that is not positive definite");
  }
  return model_;
}

int add_constraint(Model& model, const ConstraintSpec& spec, const std::string& source) {
  const std::string where = source + ": constraint '" + spec.name + "'";
  if (spec.name.empty()) throw Error(source + ": a constraint has no name");
  for (const Constraint& c : model.constraints)
    if (c.name == spec.name) throw Error(where + ": duplicate constraint name");
  if (spec.link1 == spec.link2)
    throw Error(where + ": link1 and link2 are the same link '" + spec.link1 + "'");
  if (spec.link1 == "world")
    throw Error(where + ": link1 must be a link of the robot; put 'world' in link2");
  auto find = [&](const std::string& link, const char* role) {
    if (!model.has_frame(link))
      throw Error(where + ": " + role + " names unknown link '" + link + "'");
    return model.frames[model.frame_index(link)];
  };
  const Frame f1 = find(spec.link1, "link1");
  const Frame f2 = find(spec.link2, "link2");
  if (f1.body == f2.body)
    throw Error(where + ": links '" + spec.link1 + "' and '" + spec.link2 +
                "' are rigidly attached to the same body; the constraint would do nothing");
  Constraint c;
  c.name = spec.name;
  c.type = spec.type;
  c.body1 = f1.body;
  c.body2 = f2.body;
  c.placement1 = f1.placement * spec.placement1.transform();
  c.placement2 = f2.placement * spec.placement2.transform();
  c.kp = spec.kp;
  c.kd = spec.kd;
  if (spec.type == ConstraintType::Revolute) {
    const double n = std::sqrt(dot(spec.axis, spec.axis));
    if (!(n > 1e-12) || !std::isfinite(n)) throw Error(where + ": revolute constraint needs a non-zero axis");
    c.axis = spec.axis * (1.0 / n);
  }
  c.dim = constraint_dimension(spec.type);
  c.row = model.constraint_rows;
  c.spec = spec;
  model.constraint_rows += c.dim;
  model.constraints.push_back(c);
  return static_cast<int>(model.constraints.size()) - 1;
}

}  // namespace batchdyn
