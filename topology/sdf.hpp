// SDF loading (Debian's libsdformat, the parser Pinocchio uses), closed loops included.
//
// SDF lets a link have several parent joints: that is how a robot file writes a kinematic loop
// (Cassie's achilles and plantar rods). The spanning tree keeps, for each such link, its first
// parent joint in file order; every other parent joint closes a loop, in one of two ways:
//   - DuplicateLink (default; Pinocchio 3.7's SDF parser): the joint is kept in the tree and
//     moves a duplicate of the link, named "<link>_<joint>"; original and duplicate each carry
//     1/k of the link's mass and rotational inertia (k parents), and a 6D weld named after the
//     joint holds the duplicate's link frame on the original's. Same q, v and joint order as
//     Pinocchio, so results compare joint by joint; the welds are redundant where the closing
//     joint is a ball or revolute (e.g. cassie_v2.sdf, free flyer: nq = 45, nv = 40, 4 welds =
//     24 rows of rank 22).
//   - CutJoint: the joint is left out of the tree and becomes the constraint it stands for,
//     named after it: ball -> connect (3 rows), revolute -> revolute (5), fixed -> weld (6).
//     Fewer coordinates, no redundant rows (cassie_v2.sdf: nv = 28, 12 rows).
//
// Conventions, as Pinocchio: bodies are numbered depth-first from the root link (the link
// without a parent joint), a link's child joints in file order. A body's frame is its joint's
// frame (the SDF joint pose); the link frame is a frame on the body. The root link sits at the
// world origin (its SDF pose is dropped), fixed or free-flying. Poses and axes are resolved by
// libsdformat (any SDF version, `relative_to` and `expressed_in` included). Joint types:
// revolute, continuous, prismatic, ball (spherical joint), fixed (merged into the parent body)
// and gearbox (a revolute joint; the gear coupling is not modelled, as in Pinocchio).
#pragma once

#include <string>
#include <vector>

#include "topology/model.hpp"
#include "topology/urdf.hpp"

namespace batchdyn {

enum class LoopClosure { DuplicateLink, CutJoint };

// Parses "duplicate" / "cut" (CLI and Python spelling of LoopClosure).
LoopClosure parse_loop_closure(const std::string& text);

// A link with more than one parent joint, as the file writes it.
struct MultiParentLink {
  std::string link;
  std::vector<std::string> parent_joints;  // file order; the first one is in the spanning tree
};

// Loads the first <model> of an SDF file. Throws Error naming the file and element at fault:
// unreadable or invalid SDF (libsdformat's messages), no model, no root link or several,
// unsupported joint types (universal, revolute2, screw...), a link the tree never reaches,
// a prismatic closing joint with CutJoint, non-physical inertia (as for URDF), a negative or
// non-finite <damping>, lower > upper or a NaN limit, a nested <model>.
Model load_sdf_file(const std::string& path, RootJoint root = RootJoint::Fixed,
                    LoopClosure closure = LoopClosure::DuplicateLink, const LoadOptions& options = {});

// The links of an SDF file's first model that have several parent joints.
std::vector<MultiParentLink> sdf_multi_parent_links(const std::string& path);

// Whether a path names an SDF file (ends with ".sdf").
bool is_sdf_file(const std::string& path);

// A robot file: MJCF by its first element, <mujoco> (load_mjcf_file; it sets its own root, so
// `root` must stay Fixed), SDF by its extension ".sdf" (load_sdf_file), URDF otherwise
// (load_urdf_file).
Model load_robot_file(const std::string& path, RootJoint root = RootJoint::Fixed,
                      LoopClosure closure = LoopClosure::DuplicateLink, const LoadOptions& options = {});

}  // namespace batchdyn
