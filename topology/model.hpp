// The robot model: bodies connected by joints in a spanning tree rooted at the world, the
// frames of every URDF link, and the loop-closure / contact constraints (cut joints).
//
// Plain, flat data (MuJoCo-style): index 0 is the world; body i > 0 is moved by joint i
// relative to body parent[i] < i. Bodies are numbered depth-first (DESIGN.md §2).
// A Model is built once (URDF loader, scene builder, generators) and then read-only.
#pragma once

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "layout/spatial.hpp"
#include "topology/actuator_model.hpp"
#include "topology/sensor_model.hpp"
#include "topology/contact_model.hpp"

namespace batchdyn {

// Every error the library reports. The message names the file / element / environment at
// fault; the library never aborts the host process.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Vec3d = Vec3<double>;
using Mat3d = Mat3<double>;
using Transformd = Transform<double>;
using RigidInertiad = RigidInertia<double>;

enum class JointType {
  Revolute,    // 1 dof, rotation about `axis`, position limits
  Continuous,  // 1 dof, unlimited revolute; q is the angle (not cos/sin, DESIGN.md §2)
  Prismatic,   // 1 dof, translation along `axis`
  FreeFlyer,   // root only: q = [x y z qx qy qz qw], v = [linear; angular] in the body frame
  Spherical,   // ball joint, 3 dofs: q = [qx qy qz qw] (unit quaternion), v = angular velocity in
               // the child frame (Pinocchio's JointModelSpherical); from SDF <joint type="ball">
};

enum class RootJoint { Fixed, FreeFlyer };

const char* joint_type_name(JointType t);
int joint_nq(JointType t);
int joint_nv(JointType t);
// Where a joint's unit quaternion starts in its q (3 for the free flyer, 0 for a ball joint),
// or -1 for joints without one.
int quaternion_offset(JointType t);
// One position and one velocity coordinate (revolute, continuous, prismatic): the joints that
// take PD gains, limits and per-joint damping.
inline bool is_single_dof(JointType t) { return t != JointType::FreeFlyer && t != JointType::Spherical; }

// Placement of a frame given the way URDF writes it.
struct Placement {
  Vec3d xyz = Vec3d::zero();
  Vec3d rpy = Vec3d::zero();
  Transformd transform() const;
};
// The xyz/rpy of a transform (rpy from R = Rz(yaw) Ry(pitch) Rx(roll); at gimbal lock the
// yaw/roll coupling goes into yaw).
Placement placement_of(const Transformd& transform);

struct Body {
  std::string name;        // the URDF link that owns the body (fixed children merged in)
  std::string joint_name;  // the joint that moves it
  int parent = -1;         // parent body (0 = world)
  int depth = 0;           // number of joints between the world and this body
  JointType joint_type = JointType::Revolute;
  Transformd joint_placement;  // parent body frame -> joint frame at q = 0
  Vec3d axis{0, 0, 1};         // unit axis in the joint frame (1-dof joints)
  int idx_q = 0, idx_v = 0;    // first coordinate in q and in v
  int nq = 0, nv = 0;
  RigidInertiad inertia;       // in the body frame, fixed children included
  std::vector<int> children;
  std::string mimic;           // URDF <mimic joint="..."/>: recorded, not enforced (the joint stays independent)
};

// What a frame marks. Link names and joint names are separate namespaces (URDF allows a link
// and a joint of the same name), so a frame is found by name *and* kind, as Pinocchio's BODY
// and JOINT frames are.
enum class FrameKind {
  Link,        // a URDF link (or a scene box); constraints attach to links
  Joint,       // a moving joint: its child body's frame
  FixedJoint,  // a fixed joint: the frame of its child link, which is merged into the parent body
  Site,        // an MJCF <site>: a named point and orientation on a body (sensors, targets)
};

const char* frame_kind_name(FrameKind k);

// A named frame attached to a body.
struct Frame {
  std::string name;
  int body = 0;                // 0 = world
  Transformd placement;        // in the body frame
  FrameKind kind = FrameKind::Link;
};

enum class ConstraintType {
  Connect,   // 3 rows: a point on link 1 coincides with a point on link 2 (spherical)
  Weld,      // 6 rows: frame 1 coincides with frame 2
  Revolute,  // 5 rows: frames coincide except rotation about `axis` (in frame 1)
};

const char* constraint_type_name(ConstraintType t);
int constraint_dimension(ConstraintType t);

// Constraint as the user writes it (link names and placements in each link's frame).
struct ConstraintSpec {
  std::string name;
  ConstraintType type = ConstraintType::Weld;
  std::string link1, link2;  // link2 may be "world"
  Placement placement1, placement2;
  Vec3d axis{0, 0, 1};        // Revolute only, in constraint frame 1
  // Baumgarte stabilisation: k = -kp * position_error - kd * velocity_error (default 0:
  // pure acceleration-level constraint, as Pinocchio's default).
  double kp = 0.0, kd = 0.0;
  // Whether kp and kd were given (a file's "kp" / "kd", even 0). step() stabilises a
  // constraint without given gains (kp = kd = 0, gains_given false) with gains scaled to its
  // time step (batch/loop_stabilisation.hpp); the reference functions use kp and kd as they are.
  bool gains_given = false;
};

// Constraint resolved against the model (the cut joint of a loop).
struct Constraint {
  std::string name;
  ConstraintType type = ConstraintType::Weld;
  int body1 = 0, body2 = 0;     // body2 == 0: external loop (constraint to the world)
  Transformd placement1;        // constraint frame 1 in body1's frame
  Transformd placement2;        // constraint frame 2 in body2's frame (world frame if body2 == 0)
  Vec3d axis{0, 0, 1};
  double kp = 0.0, kd = 0.0;
  // The rows on qdd alone, J qdd = k, without the drift J̇v: the velocity-level form that step()'s
  // loop stabilisation gives its constraints (batch/loop_stabilisation.hpp). false: J qdd + J̇v = k.
  bool velocity_level = false;
  int dim = 6;                  // rows
  int row = 0;                  // first row in the stacked constraint vector
  ConstraintSpec spec;          // as given, for reporting
};

struct Model {
  std::string name;
  std::vector<Body> bodies;           // bodies[0] is the world
  std::vector<Frame> frames;
  std::vector<Constraint> constraints;
  int nq = 0, nv = 0;
  int constraint_rows = 0;            // sum of constraint dims
  Vec3d gravity{0, 0, -9.81};         // applied as base acceleration a0 = -g
  // Per coordinate of q: limits (±inf when unlimited; free-flyer translation unlimited).
  std::vector<double> lower_position_limit, upper_position_limit;
  // Per coordinate of v.
  std::vector<double> velocity_limit, effort_limit;
  // Per coordinate of v: rotor inertia added to the joint-space inertia, M(q) + diag(armature)
  // (kg m^2 for revolute, kg for prismatic dofs). Set with set_armature (topology/reduce.hpp).
  std::vector<double> armature;
  // Per coordinate of v: viscous joint damping d >= 0, a passive force -d v on the joint
  // (N m s/rad, N s/m) that forward dynamics and RNEA include: M qdd + b + d v = tau.
  // From URDF <dynamics damping>, JSON "damping", set_damping (topology/reduced_model.hpp).
  std::vector<double> damping;
  // What loading accepted but a physics engine may not (one message each, naming the file, the
  // link and the values): rotational inertias that violate the triangle inequality, which no
  // mass distribution has, but which the dynamics (positive semi-definite inertia) computes
  // with as Pinocchio does. `batchdyn info` prints them; LoadOptions::strict_inertia refuses
  // them instead, balance_inertia repairs them.
  std::vector<std::string> inertia_warnings;
  // The configuration a constraint file or scene gives as "reference_q" (nq values, normalised;
  // empty: the neutral configuration). Its "hold" constraints are closed there, so the batch
  // engine starts and resets its environments there (Batch::reference_configuration).
  std::vector<double> reference_configuration;
  // Collision geometry, its contact candidates and the ground (topology/contacts.hpp). The
  // reference dynamics never read it; the engine's contact stage will.
  ContactModel contacts;
  // Per coordinate of v: MuJoCo's `frictionloss`, a dry friction on the joint (N m, N) that
  // opposes its motion up to this force. From MJCF; 0 elsewhere.
  std::vector<double> friction_loss;
  // Per coordinate of v: a joint spring's stiffness k >= 0 (N m/rad, N/m) and rest position
  // q_ref (rad, m): the passive force -k (q - q_ref) on a 1-dof joint (MJCF stiffness and
  // springref, SDF <spring_stiffness> and <spring_reference>); k = 0 where there is none.
  std::vector<double> spring_stiffness, spring_reference;
  // The robot file's time step (s; MJCF <option timestep>), 0 when it gives none.
  double timestep = 0.0;
  // The robot file's actuators and keyframes (MJCF; topology/actuator_model.hpp). Empty for URDF
  // and SDF, whose joints take torques or PD targets directly.
  std::vector<Actuator> actuators;
  // The robot file's sensors that the engine computes (MJCF; topology/sensor_model.hpp), in
  // sensordata order; the others are listed in load_notes.
  std::vector<Sensor> sensors;
  std::vector<Keyframe> keyframes;
  // What loading left out because it does not change the dynamics (sensors, lights) or
  // approximated (a mesh's hull cut down to its vertex budget), one message each; `batchdyn info`
  // prints them.
  std::vector<std::string> load_notes;

  int num_bodies() const { return static_cast<int>(bodies.size()); }  // world included
  int max_depth() const;

  // Lookups in O(1); throw Error naming what was not found. "world" resolves to frame/body 0.
  int body_index(const std::string& link_name) const;    // the body whose own link this is, or that a merged link belongs to
  int frame_index(const std::string& name, FrameKind kind = FrameKind::Link) const;
  bool has_frame(const std::string& name, FrameKind kind = FrameKind::Link) const;
  int joint_index(const std::string& joint_name) const;  // body index moved by that joint
  bool has_joint(const std::string& joint_name) const;   // a moving joint of that name

  // Rebuilds the name lookup tables from bodies and frames (after editing them by hand).
  void index_names();

 private:
  friend class ModelBuilder;
  // name -> index; frames by kind (Link; Joint + FixedJoint share the joint namespace; Site).
  std::unordered_map<std::string, int> link_frames_, joint_frames_, site_frames_, body_by_link_, body_by_joint_;
  const std::unordered_map<std::string, int>& frames_of(FrameKind kind) const;
  std::unordered_map<std::string, int>& frames_of(FrameKind kind) {
    return kind == FrameKind::Link ? link_frames_ : kind == FrameKind::Site ? site_frames_ : joint_frames_;
  }
};

// Incremental construction of a Model in depth-first order. Used by the URDF loader, the
// scene builder and the generators; validates as it goes.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::string model_name);

  // Adds a body moved by a joint; returns its index. `source` names where the data came from
  // for error messages (e.g. "robot.urdf: link 'thigh'").
  int add_body(int parent, const std::string& link_name, const std::string& joint_name,
               JointType type, const Transformd& joint_placement, const Vec3d& axis,
               double lower, double upper, double velocity_limit, double effort_limit,
               const std::string& source);
  // Merges the rigid inertia of link `link_name` (expressed in `body`'s frame) into a body.
  void add_inertia(int body, const RigidInertiad& inertia, const std::string& link_name = "");
  // Adds a named frame on a body; names are unique per namespace (links; joints).
  void add_frame(const std::string& name, FrameKind kind, int body, const Transformd& placement,
                 const std::string& source);
  // Moves a link's frame on its body (add_body puts it at the joint frame; an SDF link frame
  // may sit elsewhere). Throws Error for an unknown link.
  void set_link_frame(const std::string& link, const Transformd& placement);
  bool has_link(const std::string& name) const;   // link name already used (or "world")
  bool has_joint(const std::string& name) const;  // joint name (moving or fixed) already used
  void set_mimic(int body, const std::string& mimicked_joint) { model_.bodies[body].mimic = mimicked_joint; }
  // Rotor inertia of dof k of a body's joint.
  void set_armature(int body, int k, double armature) {
    model_.armature[static_cast<size_t>(model_.bodies[body].idx_v + k)] = armature;
  }
  // Viscous damping of dof k of a body's joint.
  void set_damping(int body, int k, double damping) {
    model_.damping[static_cast<size_t>(model_.bodies[body].idx_v + k)] = damping;
  }
  // Dry friction (MuJoCo's frictionloss) of dof k of a body's joint.
  void set_friction_loss(int body, int k, double friction) {
    model_.friction_loss[static_cast<size_t>(model_.bodies[body].idx_v + k)] = friction;
  }

  // A spring on a body's 1-dof joint: the passive force -stiffness (q - reference). Throws
  // Error (naming `where`) for a multi-dof joint or a stiffness that is not finite and >= 0.
  void set_spring(int body, double stiffness, double reference, const std::string& where);

  // What finish() does with a rotational inertia that violates the triangle inequality.
  enum class TriangleInequality {
    Warn,    // keep it, and note it in Model::inertia_warnings (the default: Pinocchio loads it)
    Repair,  // raise the two smaller principal moments by half the deficit each (balance_inertia)
    Refuse,  // throw Error (strict_inertia: MuJoCo's rule)
  };
  void set_triangle_inequality(TriangleInequality policy) { triangle_policy_ = policy; }

  // Checks the inertia of every moving body (the sum of its merged links: mass >= 0,
  // rotational inertia about the centre of mass positive semi-definite, within a tolerance;
  // the triangle inequality as set_triangle_inequality says) and returns the model. (Joints
  // that move no mass are found by the dynamics' data: kernels/tree/singular_joints.hpp.) Throws Error naming the source, the link(s) and the values at fault.
  Model finish();
  const Model& model() const { return model_; }
  void set_source(int body, const std::string& source);

 private:
  Model model_;
  std::vector<std::string> body_source_;
  std::vector<std::vector<std::string>> merged_links_;  // per body: links whose inertia it holds
  TriangleInequality triangle_policy_ = TriangleInequality::Warn;
};

// The largest magnitude an inertial number may have (kg, m, kg m^2): far beyond any body, and
// small enough that the products the dynamics forms stay finite.
inline constexpr double kInertialMagnitude = 1e100;

// Checks one link's inertial numbers as written (finite, at most kInertialMagnitude, mass >= 0
// and 0 or a normal double); throws Error naming `source`, the link and the value.
void check_link_inertial_values(const RigidInertiad& inertia, const std::string& link, const std::string& source);

// Checks what the dynamics needs of a rigid inertia: mass finite and >= 0, rotational inertia
// about the centre of mass positive semi-definite (within a tolerance). Throws Error starting
// with `where`. Returns the message for a triangle-inequality violation (which no real body
// has, but the dynamics computes with), empty when there is none.
std::string check_rigid_body_inertia(const RigidInertiad& inertia, const std::string& where);

// Principal moments of a symmetric 3x3 matrix, ascending.
Vec3d principal_moments(const Mat3d& inertia);

// Resolves a spec against the model and appends it (checks link names, same link twice,
// duplicate constraint names, axis). Returns the constraint index.
int add_constraint(Model& model, const ConstraintSpec& spec, const std::string& source = "constraint");

}  // namespace batchdyn
