// URDF loading (urdfdom), including `<loop_joint>` closure tags read in a separate XML pass.
//
// Joint order follows Pinocchio's URDF parser exactly: depth-first from the root link, the
// children of a link visited in the order urdfdom lists them (urdfdom sorts a link's child
// joints by joint name). Fixed joints are merged into the parent body; every link stays a frame.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

// A parsed, structurally validated URDF document (opaque).
struct UrdfDocument;

// Parse and validate. Throws Error naming the file and element at fault: unreadable file,
// malformed XML, missing <robot>, duplicate link names or duplicate joint names (a link and a
// joint may share a name), a joint naming an unknown link,
// several root links, a cycle, a link with two parent joints, unsupported joint types
// (planar, floating), malformed <loop_joint>.
std::shared_ptr<const UrdfDocument> parse_urdf_file(const std::string& path);
std::shared_ptr<const UrdfDocument> parse_urdf_string(const std::string& xml, const std::string& source = "<urdf string>");

const std::string& urdf_robot_name(const UrdfDocument& doc);
// The names the document would add to a model: its links, and its joints (plus the
// free-flyer's "root_joint"). Link and joint names are separate namespaces.
const std::vector<std::string>& urdf_link_names(const UrdfDocument& doc);
const std::vector<std::string>& urdf_joint_names(const UrdfDocument& doc);

// Appends the robot to a model under construction, its root attached to the world by `root`
// at `placement` (world frame), every name prefixed by `prefix`. The document's loop joints
// are returned (already prefixed) to be added once the tree is finished. Iterative: a chain
// of any length loads without recursion, in O(n log n).
//
// Inertial data: each link's numbers must be finite with mass >= 0 (Error naming the file,
// link and value); each moving body (a link plus the links merged into it by fixed joints)
// is checked for physical consistency by ModelBuilder::finish. <mimic> tags are recorded on
// the joint (Body::mimic) and not enforced: the joint stays independent, as in Pinocchio.
std::vector<ConstraintSpec> append_urdf(ModelBuilder& builder, const UrdfDocument& doc, RootJoint root,
                                        const Transformd& placement, const std::string& prefix);

// Adds the document's <collision> elements (sphere, box, cylinder) as collision geometry of
// the finished model (names "<prefix><link>/<collision name or collision<k>>", placements from
// the link frames); meshes are skipped and listed in Model::contacts.skipped. Throws Error
// naming the file, the link and the value at fault.
void append_urdf_collisions(Model& model, const UrdfDocument& doc, const std::string& prefix);

// How a robot file is turned into a model. A rotational inertia that violates the triangle
// inequality (no real body has one; Pinocchio loads it, MuJoCo refuses it) loads as written,
// with a warning in Model::inertia_warnings, unless one of these says otherwise.
struct LoadOptions {
  // Repair such inertias: raise the two smaller principal moments by half the deficit each
  // (this changes the dynamics).
  bool balance_inertia = false;
  // Refuse such inertias (MuJoCo's rule): Error naming the file, the link and the moments.
  bool strict_inertia = false;
  // MJCF: collide the robot's geoms with each other as MuJoCo's collision filter lets them meet
  // (self-collision). Off by default: on the Unitree robots it multiplies the step's cost
  // (docs/mjcf.md), and RL setups of them usually leave it off; the pairs left out are counted
  // in Model::contacts.skipped. URDF and SDF have no such pairs (a contact file lists its own).
  bool self_collision = false;
};

// The ModelBuilder policy the options ask for. Throws Error when both are set.
ModelBuilder::TriangleInequality triangle_inequality_policy(const LoadOptions& options);

// One robot as a model: the tree plus the URDF's own <loop_joint> constraints, its collision
// geometry and the default ground (topology/contacts.hpp: a plane at z = 0 for a free root).
Model load_urdf_file(const std::string& path, RootJoint root = RootJoint::Fixed, const LoadOptions& options = {});
Model load_urdf_string(const std::string& xml, RootJoint root = RootJoint::Fixed,
                       const std::string& source = "<urdf string>", const LoadOptions& options = {});

// Parses "fixed" / "free" (CLI and JSON spelling of RootJoint).
RootJoint parse_root_joint(const std::string& text);

}  // namespace batchdyn
