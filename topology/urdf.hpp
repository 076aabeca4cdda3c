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
// malformed XML, missing <robot>, duplicate link/joint names, a joint naming an unknown link,
// several root links, a cycle, a link with two parent joints, unsupported joint types
// (planar, floating), malformed <loop_joint>.
std::shared_ptr<const UrdfDocument> parse_urdf_file(const std::string& path);
std::shared_ptr<const UrdfDocument> parse_urdf_string(const std::string& xml, const std::string& source = "<urdf string>");

const std::string& urdf_robot_name(const UrdfDocument& doc);
// Every name the document would add to a model (links, joints, loop joints).
std::vector<std::string> urdf_names(const UrdfDocument& doc);

// Appends the robot to a model under construction, its root attached to the world by `root`
// at `placement` (world frame), every name prefixed by `prefix`. The document's loop joints
// are returned (already prefixed) to be added once the tree is finished.
std::vector<ConstraintSpec> append_urdf(ModelBuilder& builder, const UrdfDocument& doc, RootJoint root,
                                        const Transformd& placement, const std::string& prefix);

// One robot as a model: the tree plus the URDF's own <loop_joint> constraints.
Model load_urdf_file(const std::string& path, RootJoint root = RootJoint::Fixed);
Model load_urdf_string(const std::string& xml, RootJoint root = RootJoint::Fixed,
                       const std::string& source = "<urdf string>");

// Parses "fixed" / "free" (CLI and JSON spelling of RootJoint).
RootJoint parse_root_joint(const std::string& text);

}  // namespace batchdyn
