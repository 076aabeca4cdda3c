// MJCF loading (MuJoCo's XML), through MuJoCo's own compiler: the file is parsed and compiled
// by libmujoco (the `mujoco` wheel's), and the compiled mjModel is turned into a Model. So
// defaults and classes, childclass, autolimits, angle units, fullinertia / diaginertia with
// quat, inertia inferred from geoms, includes and keyframes mean exactly what they mean in
// MuJoCo. libmujoco is opened at run time (topology/mujoco_runtime.cpp), so a batchdyn built
// without it loads URDF and SDF as before and refuses MJCF with an error that says how to get it.
//
// What the compiled model gives, and how it maps (docs/mjcf.md has the full table):
//   bodies      -> bodies in MuJoCo's order (depth-first, as ours): a body with k joints is a chain
//                  of k bodies (the first k - 1 massless); a body with none is merged into its
//                  parent (its frame stays addressable, as a URDF link is)
//   joints      -> hinge: revolute (continuous when unlimited), slide: prismatic, ball: spherical,
//                  free: free flyer (on a child of the world only). Axes, anchors (jnt_pos), the
//                  reference angle (`ref`: q is MuJoCo's qpos, not qpos - qpos0), ranges, armature,
//                  damping, actuator force ranges (effort limits when symmetric)
//   qpos0       -> Model::reference_configuration (where the engine starts and resets)
//   gravity, timestep, keyframes, actuators (motor, position, velocity, general with fixed gain
//                  and affine bias), sites (frames), geoms (sphere, capsule, box, cylinder on the
//                  robot; a plane or a height field on the world is the ground; the robot's geoms
//                  with each other only with LoadOptions::self_collision)
// Coordinates: q and v are MuJoCo's qpos and qvel joint by joint, except the quaternions
// (MuJoCo w x y z, ours x y z w) and the free joint's linear velocity (MuJoCo: world frame,
// ours: base frame, as Pinocchio). mjcf_configuration / mjcf_velocity convert.
//
// What does not map is listed in Model::load_notes (`batchdyn info` prints them) when it leaves
// the dynamics unchanged (visual geoms, sensors, lights), and refused with an Error naming the
// element and its line when it would change them (tendons, flex, plugins, joint springs, actuator
// dynamics, equality constraints other than active connect and weld, mocap bodies).
#pragma once

#include <string>
#include <vector>

#include "topology/model.hpp"
#include "topology/urdf.hpp"  // LoadOptions

namespace batchdyn {

// Whether this build can read MJCF: compiled with MuJoCo's headers (the `mujoco` wheel found at
// configure time). libmujoco itself is found when the first file is loaded.
bool mjcf_supported();

// The version of MuJoCo this build was compiled against ("4.0.1"), or "" without MJCF support.
std::string mujoco_header_version();

// Uses the libmujoco at `path` (a libmujoco.so.* of the same version as the headers) for MJCF.
// The Python package calls it with its `mujoco` wheel's library. Must be called before the first
// MJCF load; throws Error afterwards, or when the library cannot be opened. Without it, the
// loader looks in order at: $BATCHDYN_LIBMUJOCO, ../../mujoco/ next to libbatchdyn (a pip
// install), the wheel found when batchdyn was built, and the system's libmujoco.so.<version>.
void set_mujoco_library(const std::string& path);

// The libmujoco the loader has opened, or "" when none is open yet.
std::string mujoco_library_path();

// Whether a path names an MJCF file: its first element is <mujoco>. Reads the file's start;
// false for a file that cannot be read.
bool is_mjcf_file(const std::string& path);

// Loads an MJCF file (with its includes and assets, relative to the file) as a model. Visual-only
// geoms (contype = conaffinity = 0) are discarded before compiling, as MuJoCo's
// `discardvisual`: their meshes are not read and the dynamics are unchanged. Throws Error naming
// the file, the element and its line: MuJoCo's compiler errors, and what batchdyn refuses (above).
Model load_mjcf_file(const std::string& path, const LoadOptions& options = {});
// The same for an MJCF document in a string (its assets, if any, relative to the working
// directory, as MuJoCo reads them).
Model load_mjcf_string(const std::string& xml, const std::string& source = "<mjcf string>", const LoadOptions& options = {});

// A MuJoCo qpos (model.nq values) as batchdyn's q: the quaternions of free and ball joints
// reordered from w x y z to x y z w. Throws Error on a wrong size.
std::vector<double> q_from_mujoco(const Model& model, const std::vector<double>& qpos);
// batchdyn's q as a MuJoCo qpos (the inverse).
std::vector<double> q_to_mujoco(const Model& model, const std::vector<double>& q);
// A MuJoCo qvel (model.nv values) at qpos as batchdyn's v: a free joint's linear velocity rotated
// from the world frame into the base frame (v_lin = R^T qvel_lin). Needs q for R.
std::vector<double> v_from_mujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& qvel);
// batchdyn's v as a MuJoCo qvel (the inverse).
std::vector<double> v_to_mujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& v);
// batchdyn's joint acceleration qdd at (q, v) as MuJoCo's qacc: for a free joint,
// qacc_lin = R (dv_lin/dt + omega x v_lin), the acceleration of the base origin in the world frame.
std::vector<double> a_to_mujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& v,
                                const std::vector<double>& qdd);

}  // namespace batchdyn
