#include "topology/sdf.hpp"

#include <sdf/sdf.hh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "topology/contacts.hpp"
#include "topology/mjcf.hpp"

namespace batchdyn {

LoopClosure parse_loop_closure(const std::string& text) {
  if (text == "duplicate") return LoopClosure::DuplicateLink;
  if (text == "cut") return LoopClosure::CutJoint;
  throw Error("loop closure '" + text + "' is neither 'duplicate' (Pinocchio's: duplicate link + weld) nor 'cut' (cut joint)");
}

namespace {

Transformd to_transform(const ignition::math::Pose3d& pose) {
  const ignition::math::Quaterniond& q = pose.Rot();
  return {quaternion_rotation(q.X(), q.Y(), q.Z(), q.W()), {pose.Pos().X(), pose.Pos().Y(), pose.Pos().Z()}};
}

// The file, checked, with its graph: joints by parent and by child link, in file order.
struct SdfFile {
  std::string source;
  sdf::Root root;
  const sdf::Model* model = nullptr;
  std::map<std::string, std::vector<const sdf::Joint*>> parent_joints, child_joints;  // by link name

  explicit SdfFile(const std::string& path) : source(path) {
    std::string messages;
    for (const sdf::Error& e : root.Load(path)) {
      // Inertias are checked by ModelBuilder like URDF's (massless and point-mass links load).
      if (e.Code() == sdf::ErrorCode::LINK_INERTIA_INVALID) continue;
      messages += "\n  " + e.Message();
    }
    if (!messages.empty()) throw Error(path + ": not a valid SDF file:" + messages);
    model = root.Model();
    if (model == nullptr) throw Error(path + ": no <model> in the SDF file");
    if (model->ModelCount() > 0 || model->InterfaceModelCount() > 0)  // rather than silently dropping its links
      throw Error(path + ": model '" + model->Name() + "' nests the model '" +
                  (model->ModelCount() > 0 ? model->ModelByIndex(0)->Name() : model->InterfaceModelByIndex(0)->Name()) +
                  "'; nested models are not supported: flatten it into one <model>");
    for (uint64_t i = 0; i < model->LinkCount(); ++i) parent_joints[model->LinkByIndex(i)->Name()];
    for (uint64_t i = 0; i < model->JointCount(); ++i) {
      const sdf::Joint* joint = model->JointByIndex(i);
      const std::string where = source + ": joint '" + joint->Name() + "'";
      for (const std::string& link : {joint->ParentLinkName(), joint->ChildLinkName()})
        if (!model->LinkNameExists(link))
          throw Error(where + " names '" + link + "', which is not a link of model '" + model->Name() + "'" +
                      (link == "world" ? " (joints to the world are not supported: load with a fixed root instead)" : ""));
      parent_joints[joint->ChildLinkName()].push_back(joint);
      child_joints[joint->ParentLinkName()].push_back(joint);
    }
  }

  // Pose of a link or joint frame in the model frame (libsdformat resolves relative_to).
  template <class Element>
  Transformd model_pose(const Element& element) const {
    ignition::math::Pose3d pose;
    const sdf::Errors errors = element.SemanticPose().Resolve(pose, "__model__");
    if (!errors.empty()) throw Error(source + ": cannot resolve the pose of '" + element.Name() + "': " + errors.front().Message());
    return to_transform(pose);
  }

  // The link's inertia in its own frame, read as written (Pinocchio reads the same elements).
  RigidInertiad link_inertia(const sdf::Link& link) const {
    const sdf::ElementPtr element = link.Element();
    if (!element->HasElement("inertial")) return RigidInertiad::zero();
    const sdf::ElementPtr inertial = element->GetElement("inertial");
    const Transformd T = to_transform(inertial->Get<ignition::math::Pose3d>("pose"));
    const sdf::ElementPtr moments = inertial->GetElement("inertia");
    Mat3d I;
    I(0, 0) = moments->Get<double>("ixx"), I(0, 1) = moments->Get<double>("ixy"), I(0, 2) = moments->Get<double>("ixz");
    I(1, 1) = moments->Get<double>("iyy"), I(1, 2) = moments->Get<double>("iyz"), I(2, 2) = moments->Get<double>("izz");
    I(1, 0) = I(0, 1), I(2, 0) = I(0, 2), I(2, 1) = I(1, 2);
    RigidInertiad r;
    r.mass = inertial->Get<double>("mass");
    r.com = T.translation;
    r.inertia_com = I;
    check_link_inertial_values(r, link.Name(), source);
    r.inertia_com = T.rotation * I * T.rotation.transpose();
    return r;
  }

  std::string root_link() const {
    std::vector<std::string> roots;
    for (uint64_t i = 0; i < model->LinkCount(); ++i)
      if (parent_joints.at(model->LinkByIndex(i)->Name()).empty()) roots.push_back(model->LinkByIndex(i)->Name());
    if (roots.size() == 1) return roots.front();
    std::string names;
    for (const std::string& r : roots) names += (names.empty() ? "'" : ", '") + r + "'";
    throw Error(source + ": model '" + model->Name() + "' has " + (roots.empty() ? "no root link (every link has a parent joint)"
                                                                                 : std::to_string(roots.size()) + " root links (" + names + "); expected one"));
  }
};

double limit_or_infinity(double value) {  // SDF writes "no limit" as +-1e16
  const double inf = std::numeric_limits<double>::infinity();
  return value <= -1e16 ? -inf : value >= 1e16 ? inf : value;
}

// Builds the tree depth-first from the root link and records the joints that close loops.
class SdfTreeBuilder {
 public:
  SdfTreeBuilder(const SdfFile& file, RootJoint root, LoopClosure closure, const LoadOptions& options)
      : file_(file), closure_(closure), builder_(file.model->Name()) {
    builder_.set_triangle_inequality(triangle_inequality_policy(options));
    const std::string root_link = file.root_link();
    // Every pose relative to the root link, which sits at the world origin (as in Pinocchio).
    root_from_model_ = file.model_pose(*file.model->LinkByName(root_link)).inverse();
    const RigidInertiad inertia = file.link_inertia(*file.model->LinkByName(root_link));
    if (root == RootJoint::FreeFlyer) {
      const int body = builder_.add_body(0, root_link, "root_joint", JointType::FreeFlyer, Transformd::identity(), Vec3d::zero(),
                                         0, 0, 0, 0, file.source);
      builder_.add_inertia(body, inertia, root_link);
      placed_[root_link] = {body, Transformd::identity()};
    } else {
      builder_.add_frame(root_link, FrameKind::Link, 0, Transformd::identity(), file.source);
      placed_[root_link] = {0, Transformd::identity()};
    }

    // Depth-first, a link's child joints in file order (explicit stack, reversed pushes).
    std::vector<const sdf::Joint*> stack;
    const auto push_children = [&](const std::string& link) {
      const auto it = file.child_joints.find(link);
      if (it == file.child_joints.end()) return;
      for (auto j = it->second.rbegin(); j != it->second.rend(); ++j) stack.push_back(*j);
    };
    push_children(root_link);
    while (!stack.empty()) {
      const sdf::Joint* joint = stack.back();
      stack.pop_back();
      const std::string& child = joint->ChildLinkName();
      const std::vector<const sdf::Joint*>& parents = file.parent_joints.at(child);
      const double share = closure == LoopClosure::DuplicateLink ? 1.0 / static_cast<double>(parents.size()) : 1.0;
      if (parents.front() != joint) {  // a second parent joint: it closes a loop
        closing_.push_back(joint);
        if (closure == LoopClosure::DuplicateLink) add_joint(*joint, child + "_" + joint->Name(), share);
        continue;
      }
      add_joint(*joint, child, share);
      push_children(child);
    }
    for (uint64_t i = 0; i < file.model->LinkCount(); ++i) {
      const std::string& link = file.model->LinkByIndex(i)->Name();
      if (!placed_.count(link))
        throw Error(file.source + ": link '" + link + "' is not reached from the root link '" + root_link +
                    "' through first parent joints (a link's first parent joint in the file must lead back to the root)");
    }
  }

  Model finish() {
    Model model = builder_.finish();
    for (const sdf::Joint* joint : closing_) add_constraint(model, closing_constraint(*joint), file_.source + ": closing joint");
    append_collisions(model);
    set_default_ground(model);
    return model;
  }

 private:
  struct Placed {
    int body = 0;
    Transformd body_pose;  // the body frame at q = 0, relative to the root link
  };

  Transformd pose(const sdf::Link& link) const { return root_from_model_ * file_.model_pose(link); }
  Transformd pose(const sdf::Joint& joint) const { return root_from_model_ * file_.model_pose(joint); }

  Vec3d axis_of(const sdf::Joint& joint) const {
    const sdf::JointAxis* axis = joint.Axis(0);
    if (axis == nullptr) throw Error(file_.source + ": joint '" + joint.Name() + "' has no <axis>");
    ignition::math::Vector3d xyz;
    const sdf::Errors errors = axis->ResolveXyz(xyz);  // in the joint frame
    if (!errors.empty()) throw Error(file_.source + ": joint '" + joint.Name() + "': " + errors.front().Message());
    return {xyz.X(), xyz.Y(), xyz.Z()};
  }

  // Each link's <collision> spheres, boxes, cylinders and capsules as collision geometry
  // "<link>/<collision name>" on the link (a duplicated link's stay on the original); other
  // shapes (meshes, planes, height maps, ellipsoids) are skipped and listed by `info`.
  void append_collisions(Model& model) const {
    for (uint64_t i = 0; i < file_.model->LinkCount(); ++i) {
      const sdf::Link& link = *file_.model->LinkByIndex(i);
      for (uint64_t k = 0; k < link.CollisionCount(); ++k) {
        const sdf::Collision& collision = *link.CollisionByIndex(k);
        CollisionGeometry g;
        g.name = link.Name() + "/" + (collision.Name().empty() ? "collision" + std::to_string(k) : collision.Name());
        g.link = link.Name();
        ignition::math::Pose3d pose;
        const sdf::Errors errors = collision.SemanticPose().Resolve(pose, link.Name());
        if (!errors.empty()) throw Error(file_.source + ": collision '" + g.name + "': " + errors.front().Message());
        g.in_link = to_transform(pose);
        const sdf::Geometry& geometry = *collision.Geom();
        switch (geometry.Type()) {
          case sdf::GeometryType::SPHERE:
            g.shape = CollisionShape::Sphere, g.radius = geometry.SphereShape()->Radius();
            break;
          case sdf::GeometryType::BOX: {
            const ignition::math::Vector3d size = geometry.BoxShape()->Size();
            g.shape = CollisionShape::Box, g.half_extents = Vec3d{size.X(), size.Y(), size.Z()} * 0.5;
            break;
          }
          case sdf::GeometryType::CYLINDER:
            g.shape = CollisionShape::Cylinder, g.radius = geometry.CylinderShape()->Radius(), g.length = geometry.CylinderShape()->Length();
            break;
          case sdf::GeometryType::CAPSULE:
            g.shape = CollisionShape::Capsule, g.radius = geometry.CapsuleShape()->Radius(), g.length = geometry.CapsuleShape()->Length();
            break;
          default:
            model.contacts.skipped.push_back(g.name + ": " + sdf_shape_name(geometry.Type()) + " skipped: give primitives in a contact file");
            continue;
        }
        add_collision_geometry(model, std::move(g), file_.source);
      }
    }
  }

  static std::string sdf_shape_name(sdf::GeometryType type) {
    switch (type) {
      case sdf::GeometryType::MESH: return "mesh";
      case sdf::GeometryType::PLANE: return "plane";
      case sdf::GeometryType::HEIGHTMAP: return "height map";
      case sdf::GeometryType::ELLIPSOID: return "ellipsoid";
      case sdf::GeometryType::EMPTY: return "empty geometry";
      default: return "shape";
    }
  }

  // Adds the joint and the body of `link_name` (the child link, or its duplicate), which
  // carries `share` of the child link's inertia.
  void add_joint(const sdf::Joint& joint, const std::string& link_name, double share) {
    const std::string where = file_.source + ": joint '" + joint.Name() + "'";
    const sdf::Link& child = *file_.model->LinkByName(joint.ChildLinkName());
    const Placed parent = placed_.at(joint.ParentLinkName());
    const Transformd joint_pose = pose(joint);
    RigidInertiad inertia = file_.link_inertia(child);
    inertia.mass *= share;
    inertia.inertia_com = inertia.inertia_com * share;

    if (joint.Type() == sdf::JointType::FIXED) {  // merged into the parent body
      const Transformd in_body = parent.body_pose.inverse() * pose(child);
      builder_.add_frame(link_name, FrameKind::Link, parent.body, in_body, where);
      builder_.add_frame(joint.Name(), FrameKind::FixedJoint, parent.body, parent.body_pose.inverse() * joint_pose, where);
      if (parent.body > 0) builder_.add_inertia(parent.body, inertia.transformed(in_body), link_name);
      placed_[link_name] = {parent.body, parent.body_pose};
      return;
    }
    JointType type = JointType::Revolute;
    switch (joint.Type()) {
      case sdf::JointType::REVOLUTE:
      case sdf::JointType::GEARBOX: type = JointType::Revolute; break;
      case sdf::JointType::CONTINUOUS: type = JointType::Continuous; break;
      case sdf::JointType::PRISMATIC: type = JointType::Prismatic; break;
      case sdf::JointType::BALL: type = JointType::Spherical; break;
      default:
        throw Error(where + ": joint type '" + joint.Element()->Get<std::string>("type") +
                    "' is not supported (revolute, continuous, prismatic, ball, fixed, gearbox are)");
    }
    Vec3d axis{0, 0, 1};
    double lower = 0, upper = 0, velocity = 0, effort = 0, damping = 0, stiffness = 0, spring_reference = 0;
    if (is_single_dof(type)) {
      axis = axis_of(joint);
      const sdf::JointAxis& a = *joint.Axis(0);
      lower = limit_or_infinity(a.Lower()), upper = limit_or_infinity(a.Upper());
      velocity = a.MaxVelocity(), effort = a.Effort(), damping = a.Damping();
      stiffness = a.SpringStiffness(), spring_reference = a.SpringReference();
      if (!std::isfinite(damping) || damping < 0)
        throw Error(where + ": <damping> must be finite and >= 0, got " + std::to_string(damping));
    }
    const int body = builder_.add_body(parent.body, link_name, joint.Name(), type, parent.body_pose.inverse() * joint_pose, axis,
                                       lower, upper, velocity, effort, where);
    if (damping != 0) builder_.set_damping(body, 0, damping);
    if (stiffness != 0) builder_.set_spring(body, stiffness, spring_reference, where);
    const Transformd link_in_body = joint_pose.inverse() * pose(child);
    builder_.set_link_frame(link_name, link_in_body);
    builder_.add_inertia(body, inertia.transformed(link_in_body), link_name);
    placed_[link_name] = {body, joint_pose};
  }

  ConstraintSpec closing_constraint(const sdf::Joint& joint) const {
    ConstraintSpec spec;
    spec.name = joint.Name();
    const std::string& child = joint.ChildLinkName();
    if (closure_ == LoopClosure::DuplicateLink) {  // the duplicate's link frame on the original's
      spec.type = ConstraintType::Weld;
      spec.link1 = child + "_" + joint.Name();
      spec.link2 = child;
      return spec;
    }
    // Cut: the joint frame seen from both links.
    const Transformd joint_pose = pose(joint);
    spec.link1 = joint.ParentLinkName();
    spec.link2 = child;
    spec.placement1 = placement_of(pose(*file_.model->LinkByName(spec.link1)).inverse() * joint_pose);
    spec.placement2 = placement_of(pose(*file_.model->LinkByName(spec.link2)).inverse() * joint_pose);
    switch (joint.Type()) {
      case sdf::JointType::BALL: spec.type = ConstraintType::Connect; break;
      case sdf::JointType::REVOLUTE:
      case sdf::JointType::CONTINUOUS:
      case sdf::JointType::GEARBOX:
        spec.type = ConstraintType::Revolute;
        spec.axis = axis_of(joint);
        break;
      case sdf::JointType::FIXED: spec.type = ConstraintType::Weld; break;
      default:
        throw Error(file_.source + ": joint '" + joint.Name() + "' closes a loop and is of type '" +
                    joint.Element()->Get<std::string>("type") +
                    "', which has no cut-joint constraint (ball, revolute, fixed); load with the duplicate-link closure instead");
    }
    return spec;
  }

  const SdfFile& file_;
  LoopClosure closure_;
  ModelBuilder builder_;
  Transformd root_from_model_;
  std::map<std::string, Placed> placed_;  // by link name (duplicates included)
  std::vector<const sdf::Joint*> closing_;
};

}  // namespace

Model load_sdf_file(const std::string& path, RootJoint root, LoopClosure closure, const LoadOptions& options) {
  const SdfFile file(path);
  return SdfTreeBuilder(file, root, closure, options).finish();
}

std::vector<MultiParentLink> sdf_multi_parent_links(const std::string& path) {
  const SdfFile file(path);
  std::vector<MultiParentLink> links;
  for (uint64_t i = 0; i < file.model->LinkCount(); ++i) {
    const std::string& name = file.model->LinkByIndex(i)->Name();
    const std::vector<const sdf::Joint*>& parents = file.parent_joints.at(name);
    if (parents.size() < 2) continue;
    MultiParentLink link{name, {}};
    for (const sdf::Joint* joint : parents) link.parent_joints.push_back(joint->Name());
    links.push_back(link);
  }
  return links;
}

bool is_sdf_file(const std::string& path) { return path.size() >= 4 && path.compare(path.size() - 4, 4, ".sdf") == 0; }

Model load_robot_file(const std::string& path, RootJoint root, LoopClosure closure, const LoadOptions& options) {
  if (is_mjcf_file(path)) {
    if (root != RootJoint::Fixed)
      throw Error(path + ": an MJCF file sets its own root (a <freejoint> on the base); load it with the default root");
    return load_mjcf_file(path, options);
  }
  return is_sdf_file(path) ? load_sdf_file(path, root, closure, options) : load_urdf_file(path, root, options);
}

}  // namespace batchdyn
