// Editing a loaded model's joints: locking joints (a reduced model, like Pinocchio's
// buildReducedModel) and rotor inertia (armature). Both are the remedies for singular joints
// (kernels/tree/singular_joints.hpp: joints whose motion moves no mass, e.g. massless finger links).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

// A joint to lock and where: `position` in the joint's coordinate (rad or m); without one,
// 0 clamped into the joint's limits.
struct JointLock {
  std::string joint;
  std::optional<double> position;
};

// The model with the listed 1-dof joints fixed at their positions: each locked joint's child
// body is merged into its parent (inertia composed at that position), its links and joint
// stay addressable as frames (the joint as a FixedJoint frame), coordinates of the remaining
// joints keep their depth-first order, armature and constraints carry over (constraints are
// resolved again by link name). Throws Error for an unknown, fixed or free-flyer joint, a
// joint listed twice, or a position that is non-finite or outside the joint's limits.
// O(n log n).
Model lock_joints(const Model& model, const std::vector<JointLock>& locks);

// Sets the armature (rotor inertia, >= 0: kg m^2 for revolute, kg for prismatic joints) of
// the named 1-dof joints, added to M(q)'s diagonal by every kernel. Throws Error for an unknown or free-flyer joint or a negative or
// non-finite value.
void set_armature(Model& model, const std::string& joint, double armature);
// The same value for every 1-dof joint.
void set_armature(Model& model, double armature);

// Sets the viscous damping (>= 0: N m s/rad for revolute, N s/m for prismatic joints) of the
// named 1-dof joint: a passive joint force -damping * v in the simulation (Batch's passive
// forces; the reference functions compute Pinocchio's dynamics without it). Throws
// Error for an unknown or free-flyer joint or a negative or non-finite value.
void set_damping(Model& model, const std::string& joint, double damping);
// The same value for every 1-dof joint.
void set_damping(Model& model, double damping);

// Parses "name[=value],name[=value],..." (the CLI's --lock-joints).
std::vector<JointLock> parse_joint_locks(const std::string& text);
// Applies "value" (every 1-dof joint) or "name=value,name=value,..." (the CLI's --armature).
void apply_armature_spec(Model& model, const std::string& text);

}  // namespace batchdyn
