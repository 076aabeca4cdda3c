#include "topology/model.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>


namespace batchdyn {

const char* joint_type_name(JointType t) {
  switch (t) {
    case JointType::Revolute: return "revolute";
    case JointType::Continuous: return "continuous";
    case JointType::Prismatic: return "prismatic";
    case JointType::FreeFlyer: return "free_flyer";
    case JointType::Spherical: return "spherical";
  }
  return "?";
}

int joint_nq(JointType t) { return t == JointType::FreeFlyer ? 7 : t == JointType::Spherical ? 4 : 1; }
int joint_nv(JointType t) { return t == JointType::FreeFlyer ? 6 : t == JointType::Spherical ? 3 : 1; }
int quaternion_offset(JointType t) { return t == JointType::FreeFlyer ? 3 : t == JointType::Spherical ? 0 : -1; }

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

Placement placement_of(const Transformd& transform) {
  const Mat3d& R = transform.rotation;
  Placement p;
  p.xyz = transform.translation;
  p.rpy.y = std::asin(std::clamp(-R(2, 0), -1.0, 1.0));
  if (std::abs(R(2, 0)) < 1.0 - 1e-12) {
    p.rpy.x = std::atan2(R(2, 1), R(2, 2));
    p.rpy.z = std::atan2(R(1, 0), R(0, 0));
  } else {  // gimbal lock: put the whole yaw/roll coupling into yaw
    p.rpy.x = 0.0;
    p.rpy.z = std::atan2(-R(0, 1), R(1, 1));
  }
  return p;
}

int Model::max_depth() const {
  int d = 0;
  for (const Body& b : bodies) d = std::max(d, b.depth);
  return d;
}

const char* frame_kind_name(FrameKind k) {
  switch (k) {
    case FrameKind::Link: return "link";
    case FrameKind::Joint: return "joint";
    case FrameKind::FixedJoint: return "fixed_joint";
    case FrameKind::Site: return "site";
  }
  return "?";
}

int Model::body_index(const std::string& n) const {
  if (const auto it = body_by_link_.find(n); it != body_by_link_.end()) return it->second;
  // A link merged into its parent by a fixed joint (A1's "trunk" into "base"): its frame's body.
  if (const auto it = link_frames_.find(n); it != link_frames_.end()) return frames[static_cast<size_t>(it->second)].body;
  throw Error("model '" + name + "': no body or link named '" + n + "'");
}

const std::unordered_map<std::string, int>& Model::frames_of(FrameKind kind) const {
  return kind == FrameKind::Link ? link_frames_ : kind == FrameKind::Site ? site_frames_ : joint_frames_;
}

bool Model::has_frame(const std::string& n, FrameKind kind) const { return frames_of(kind).count(n) > 0; }

int Model::frame_index(const std::string& n, FrameKind kind) const {
  const auto& table = frames_of(kind);
  const auto it = table.find(n);
  if (it == table.end())
    throw Error("model '" + name + "': no " + (kind == FrameKind::Link ? "link" : kind == FrameKind::Site ? "site" : "joint") +
                " named '" + n + "'");
  return it->second;
}

int Model::joint_index(const std::string& n) const {
  const auto it = body_by_joint_.find(n);
  if (it == body_by_joint_.end()) {
    if (joint_frames_.count(n)) throw Error("model '" + name + "': joint '" + n + "' is a fixed joint (no coordinate)");
    throw Error("model '" + name + "': no joint named '" + n + "'");
  }
  return it->second;
}

bool Model::has_joint(const std::string& n) const { return body_by_joint_.count(n) > 0; }

void Model::index_names() {
  link_frames_.clear(), joint_frames_.clear(), site_frames_.clear(), body_by_link_.clear(), body_by_joint_.clear();
  for (int i = 0; i < static_cast<int>(frames.size()); ++i)
    frames_of(frames[i].kind).emplace(frames[i].name, i);
  for (int i = 1; i < num_bodies(); ++i) {
    body_by_link_.emplace(bodies[i].name, i);
    body_by_joint_.emplace(bodies[i].joint_name, i);
  }
  body_by_link_.emplace("world", 0);
}

ModelBuilder::ModelBuilder(std::string model_name) {
  model_.name = std::move(model_name);
  Body world;
  world.name = "world";
  world.joint_name = "universe";
  world.parent = -1;
  model_.bodies.push_back(world);
  body_source_.push_back("world");
  merged_links_.emplace_back();
  model_.frames.push_back({"world", 0, Transformd::identity(), FrameKind::Link});
  model_.link_frames_.emplace("world", 0);
  model_.body_by_link_.emplace("world", 0);
}

bool ModelBuilder::has_link(const std::string& n) const { return model_.link_frames_.count(n) > 0; }
bool ModelBuilder::has_joint(const std::string& n) const { return model_.joint_frames_.count(n) > 0; }

int ModelBuilder::add_body(int parent, const std::string& link_name, const std::string& joint_name,
                           JointType type, const Transformd& joint_placement, const Vec3d& axis,
                           double lower, double upper, double velocity_limit, double effort_limit,
                           const std::string& source) {
  if (parent < 0 || parent >= model_.num_bodies())
    throw Error(source + ": parent body index " + std::to_string(parent) + " out of range");
  if (has_link(link_name)) {
    if (link_name == "world" && type == JointType::FreeFlyer)
      throw Error(source + ": the root link is called 'world', which is the world itself: there is no body to set "
                           "free. Load it with a fixed root, or remove the 'world' link so that its child is the root");
    throw Error(source + ": duplicate link name '" + link_name + "'");
  }
  if (has_joint(joint_name)) throw Error(source + ": duplicate joint name '" + joint_name + "'");
  Vec3d unit_axis = axis;
  if (is_single_dof(type)) {
    const double n = std::sqrt(dot(axis, axis));
    if (!(n > 1e-12) || !std::isfinite(n))
      throw Error(source + ": joint '" + joint_name + "' has a zero or non-finite axis");
    unit_axis = axis * (1.0 / n);
  }
  if ((type == JointType::Revolute || type == JointType::Prismatic) && !(lower <= upper))
    throw Error(source + ": joint '" + joint_name + "' has lower limit > upper limit, or a limit that is not a number (lower " +
                std::to_string(lower) + ", upper " + std::to_string(upper) + ")");

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
  } else if (type == JointType::Spherical) {  // unlimited and passive (SDF ball joints are)
    for (int k = 0; k < 4; ++k) { model_.lower_position_limit.push_back(-1.0); model_.upper_position_limit.push_back(1.0); }
    for (int k = 0; k < 3; ++k) { model_.velocity_limit.push_back(inf); model_.effort_limit.push_back(inf); }
  } else {
    const bool limited = type != JointType::Continuous;
    model_.lower_position_limit.push_back(limited ? lower : -inf);
    model_.upper_position_limit.push_back(limited ? upper : inf);
    model_.velocity_limit.push_back(velocity_limit > 0 ? velocity_limit : inf);
    model_.effort_limit.push_back(effort_limit > 0 ? effort_limit : inf);
  }
  for (int k = 0; k < b.nv; ++k) model_.armature.push_back(0.0), model_.damping.push_back(0.0), model_.friction_loss.push_back(0.0);
  for (int k = 0; k < b.nv; ++k) model_.spring_stiffness.push_back(0.0), model_.spring_reference.push_back(0.0);

  const int index = model_.num_bodies();
  model_.bodies.push_back(b);
  model_.bodies[parent].children.push_back(index);
  body_source_.push_back(source);
  merged_links_.emplace_back();
  model_.body_by_link_.emplace(link_name, index);
  model_.body_by_joint_.emplace(joint_name, index);
  const int link_frame = static_cast<int>(model_.frames.size());
  model_.frames.push_back({link_name, index, Transformd::identity(), FrameKind::Link});
  model_.link_frames_.emplace(link_name, link_frame);
  model_.frames.push_back({joint_name, index, Transformd::identity(), FrameKind::Joint});
  model_.joint_frames_.emplace(joint_name, link_frame + 1);
  return index;
}

void ModelBuilder::add_inertia(int body, const RigidInertiad& inertia, const std::string& link_name) {
  bool empty = inertia.mass == 0.0;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) empty = empty && inertia.inertia_com(r, k) == 0.0;
  if (empty) return;  // a massless link without inertia (sensor or tool frame) adds nothing
  RigidInertiad& I = model_.bodies[body].inertia;
  I = I + inertia;
  if (!link_name.empty()) merged_links_[static_cast<size_t>(body)].push_back(link_name);
}

void ModelBuilder::add_frame(const std::string& n, FrameKind kind, int body, const Transformd& placement,
                             const std::string& source) {
  const bool link = kind == FrameKind::Link, site = kind == FrameKind::Site;
  if (link ? has_link(n) : site ? model_.has_frame(n, FrameKind::Site) : has_joint(n))
    throw Error(source + ": duplicate " + (link ? "link" : site ? "site" : "joint") + " name '" + n + "'");
  model_.frames_of(kind).emplace(n, static_cast<int>(model_.frames.size()));
  model_.frames.push_back({n, body, placement, kind});
}

void ModelBuilder::set_link_frame(const std::string& link, const Transformd& placement) {
  const auto it = model_.link_frames_.find(link);
  if (it == model_.link_frames_.end()) throw Error("set_link_frame: no link '" + link + "'");
  model_.frames[static_cast<size_t>(it->second)].placement = placement;
}

void ModelBuilder::set_source(int body, const std::string& source) { body_source_[body] = source; }

void ModelBuilder::set_spring(int body, double stiffness, double reference, const std::string& where) {
  const Body& b = model_.bodies[static_cast<size_t>(body)];
  if (!is_single_dof(b.joint_type))
    throw Error(where + ": a spring on a " + std::string(joint_type_name(b.joint_type)) +
                " joint is not supported (only on revolute, continuous and prismatic joints)");
  if (!std::isfinite(stiffness) || stiffness < 0) throw Error(where + ": a joint spring's stiffness must be finite and >= 0, got " + std::to_string(stiffness));
  if (!std::isfinite(reference)) throw Error(where + ": a joint spring's reference position must be finite");
  model_.spring_stiffness[static_cast<size_t>(b.idx_v)] = stiffness;
  model_.spring_reference[static_cast<size_t>(b.idx_v)] = reference;
}

void check_link_inertial_values(const RigidInertiad& I, const std::string& link, const std::string& source) {
  auto fail = [&](const std::string& what, double value) {
    std::ostringstream text;
    text << source << ": link '" << link << "': " << what << " " << std::setprecision(17) << value;
    throw Error(text.str());
  };
  // Beyond kInertialMagnitude no body is physical, and products of such numbers overflow; a
  // subnormal mass overflows 1/m when bodies are composed.
  const auto too_large = [](double x) { return std::abs(x) > kInertialMagnitude; };
  if (!std::isfinite(I.mass)) fail("non-finite mass", I.mass);
  if (I.mass < 0.0) fail("negative mass", I.mass);
  if (I.mass != 0.0 && I.mass < std::numeric_limits<double>::min())
    fail("mass below the smallest normal double (2.2e-308 kg; write 0 for a massless link):", I.mass);
  if (too_large(I.mass)) fail("mass above 1e100 kg, not a physical value:", I.mass);
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(I.com[k]) || too_large(I.com[k])) fail("non-finite or absurd (> 1e100 m) centre of mass coordinate", I.com[k]);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(I.inertia_com(r, k)) || too_large(I.inertia_com(r, k)))
        fail("non-finite or absurd (> 1e100 kg m^2) rotational inertia entry", I.inertia_com(r, k));
}

namespace {
// The symmetric part of a 3x3 matrix, for Eigen's self-adjoint eigensolver.
Eigen::Matrix3d symmetric_part(const Mat3d& m) {
  Eigen::Matrix3d out;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) out(r, k) = 0.5 * (m(r, k) + m(k, r));
  return out;
}
}  // namespace

Vec3d principal_moments(const Mat3d& inertia) {
  const Eigen::Vector3d e =
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(symmetric_part(inertia), Eigen::EigenvaluesOnly).eigenvalues();
  return {e[0], e[1], e[2]};
}

namespace {
// Tolerance of the inertia checks, relative to the body's largest principal moment: URDF
// files print inertias with ~6 significant digits, and a composed body adds rounding.
constexpr double kInertiaTolerance = 1e-6;
// Absolute floor (kg m^2) for point masses, whose moments are zero up to rounding.
constexpr double kInertiaFloor = 1e-12;

std::string body_description(const Model& model, int i, const std::vector<std::string>& merged) {
  const Body& b = model.bodies[i];
  std::string text = "link '" + b.name + "' (body of joint '" + b.joint_name + "'";
  std::vector<std::string> others;
  for (const std::string& l : merged)
    if (l != b.name) others.push_back(l);
  if (!others.empty()) {
    text += ", merged with fixed link";
    text += others.size() > 1 ? "s" : "";
    for (size_t k = 0; k < others.size(); ++k) text += (k ? ", '" : " '") + others[k] + "'";
  }
  return text + ")";
}

// Closest rotational inertia satisfying the triangle inequality with the same principal axes
// and no smaller moment: the deficit d = I3 - I1 - I2 is added half to I1 and half to I2.
Mat3d balanced_inertia(const Mat3d& inertia) {
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(symmetric_part(inertia));
  Eigen::Vector3d e = solver.eigenvalues();
  const double deficit = e[2] - e[0] - e[1];
  if (deficit > 0) e[0] += 0.5 * deficit, e[1] += 0.5 * deficit;
  const Eigen::Matrix3d balanced = solver.eigenvectors() * e.asDiagonal() * solver.eigenvectors().transpose();
  Mat3d out;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) out(r, k) = balanced(r, k);
  return out;
}
}  // namespace

std::string check_rigid_body_inertia(const RigidInertiad& inertia, const std::string& where) {
  const Vec3d e = principal_moments(inertia.inertia_com);
  const double tolerance = kInertiaTolerance * std::abs(e.z) + kInertiaFloor;
  std::ostringstream moments;
  moments << std::setprecision(6) << "principal moments (" << e.x << ", " << e.y << ", " << e.z << ") kg m^2";
  if (!(inertia.mass >= 0.0) || !std::isfinite(inertia.mass))
    throw Error(where + ": negative or non-finite mass " + std::to_string(inertia.mass));
  if (e.x < -tolerance)
    throw Error(where + ": rotational inertia about the centre of mass is not positive semi-definite, " + moments.str() +
                "; a real body has no negative moment");
  if (e.z - e.x - e.y <= tolerance) return {};
  return where + ": rotational inertia about the centre of mass violates the triangle inequality, " + moments.str() + ": " +
         std::to_string(e.z) + " > " + std::to_string(e.x) + " + " + std::to_string(e.y) +
         ", which no mass distribution has";
}

Model ModelBuilder::finish() {
  for (int i = 1; i < model_.num_bodies(); ++i) {
    Body& b = model_.bodies[i];
    const std::string where = body_source_[i] + ": " + body_description(model_, i, merged_links_[static_cast<size_t>(i)]);
    const std::string violation = check_rigid_body_inertia(b.inertia, where);
    if (violation.empty()) continue;
    switch (triangle_policy_) {
      case TriangleInequality::Warn:
        model_.inertia_warnings.push_back(violation + " (kept, as Pinocchio does; balance_inertia / --balance-inertia repairs it)");
        break;
      case TriangleInequality::Repair: b.inertia.inertia_com = balanced_inertia(b.inertia.inertia_com); break;
      case TriangleInequality::Refuse:
        throw Error(violation + ". Correct the <inertia>, load without strict_inertia (the dynamics only needs a positive "
                                "semi-definite inertia), or with balance_inertia (CLI --balance-inertia) to raise the two "
                                "smaller moments by half the deficit each");
    }
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
    if (!model.has_frame(link, FrameKind::Link))
      throw Error(where + ": " + role + " names unknown link '" + link + "'" +
                  (model.has_frame(link, FrameKind::Joint) ? " (there is a joint of that name; constraints attach to links)" : ""));
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
