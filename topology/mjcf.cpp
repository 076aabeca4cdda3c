#include "topology/mjcf.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "topology/contacts.hpp"
#include "topology/joint_model.hpp"

#ifdef BATCHDYN_HAVE_MUJOCO
#include "topology/mujoco_runtime.hpp"
#endif

namespace batchdyn {

// ---- Coordinates: MuJoCo's qpos / qvel / qacc and ours (no libmujoco needed) -------------------

namespace {

void check_size(const std::vector<double>& x, int expected, const char* what) {
  if (static_cast<int>(x.size()) != expected)
    throw Error(std::string(what) + ": expected " + std::to_string(expected) + " values, got " + std::to_string(x.size()));
}

// The rotation of a free joint's base at q (ours: x y z qx qy qz qw).
Mat3d base_rotation(const Body& b, const std::vector<double>& q) {
  const double* p = q.data() + b.idx_q + 3;
  return quaternion_rotation(p[0], p[1], p[2], p[3]);
}


// x with every quaternion of q's layout permuted: out[k] = in[order[k]] (MuJoCo's w x y z against
// batchdyn's x y z w).
std::vector<double> permute_quaternions(const Model& model, std::vector<double> x, const int (&order)[4]) {
  for (const Body& b : model.bodies) {
    const int offset = quaternion_offset(b.joint_type);
    if (b.nq == 0 || offset < 0) continue;
    double* quat = x.data() + b.idx_q + offset;
    const double in[4] = {quat[0], quat[1], quat[2], quat[3]};
    for (int k = 0; k < 4; ++k) quat[k] = in[order[k]];
  }
  return x;
}
// x (nv entries) with each free flyer's linear part (its first 3 dofs) replaced by
// f(R, linear, angular), R the base rotation at q.
template <class F>
std::vector<double> map_free_flyers(const Model& model, const std::vector<double>& q, std::vector<double> x, F f) {
  for (const Body& b : model.bodies) {
    if (b.nv == 0 || b.joint_type != JointType::FreeFlyer) continue;
    const size_t i = static_cast<size_t>(b.idx_v);
    const Vec3d out = f(base_rotation(b, q), Vec3d{x[i], x[i + 1], x[i + 2]}, i);
    for (size_t k = 0; k < 3; ++k) x[i + k] = out[static_cast<int>(k)];
  }
  return x;
}
}  // namespace

std::vector<double> q_from_mujoco(const Model& model, const std::vector<double>& qpos) {
  check_size(qpos, model.nq, "q_from_mujoco: qpos");
  return permute_quaternions(model, qpos, {1, 2, 3, 0});  // w x y z -> x y z w
}

std::vector<double> q_to_mujoco(const Model& model, const std::vector<double>& q) {
  check_size(q, model.nq, "q_to_mujoco: q");
  return permute_quaternions(model, q, {3, 0, 1, 2});  // x y z w -> w x y z
}

std::vector<double> v_from_mujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& qvel) {
  check_size(q, model.nq, "v_from_mujoco: q");
  check_size(qvel, model.nv, "v_from_mujoco: qvel");
  // MuJoCo's free-joint linear velocity is in the world frame, ours in the base frame: v_lin = R^T qvel_lin
  return map_free_flyers(model, q, qvel, [](const Mat3d& R, const Vec3d& world, size_t) { return R.transpose() * world; });
}

std::vector<double> v_to_mujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& v) {
  check_size(q, model.nq, "v_to_mujoco: q");
  check_size(v, model.nv, "v_to_mujoco: v");
  return map_free_flyers(model, q, v, [](const Mat3d& R, const Vec3d& local, size_t) { return R * local; });
}

std::vector<double> a_to_mujoco(const Model& model, const std::vector<double>& q, const std::vector<double>& v,
                                const std::vector<double>& qdd) {
  check_size(q, model.nq, "a_to_mujoco: q");
  check_size(v, model.nv, "a_to_mujoco: v");
  check_size(qdd, model.nv, "a_to_mujoco: qdd");
  // d/dt (R v_lin) = R (dv_lin/dt + omega x v_lin)
  return map_free_flyers(model, q, qdd, [&v](const Mat3d& R, const Vec3d& dv, size_t i) {
    const Vec3d linear{v[i], v[i + 1], v[i + 2]}, angular{v[i + 3], v[i + 4], v[i + 5]};
    return R * (dv + cross(angular, linear));
  });
}

bool is_mjcf_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  // The first element, past the XML declaration and comments.
  for (size_t at = head.find('<'); at != std::string::npos; at = head.find('<', at + 1)) {
    if (head.compare(at, 2, "<?") == 0 || head.compare(at, 2, "<!") == 0) {
      const size_t end = head.find(head.compare(at, 4, "<!--") == 0 ? "-->" : ">", at);
      if (end == std::string::npos) return false;
      at = end;
      continue;
    }
    return head.compare(at, 7, "<mujoco") == 0 && (at + 7 >= head.size() || !std::isalnum(static_cast<unsigned char>(head[at + 7])));
  }
  return false;
}

#ifndef BATCHDYN_HAVE_MUJOCO

// ---- Built without MuJoCo's headers ------------------------------------------------------------

namespace {
[[noreturn]] void no_mjcf(const std::string& what) {
  throw Error(what + ": this batchdyn was built without MuJoCo, so it cannot read MJCF. Install the `mujoco` wheel "
                     "(pip install mujoco==4.0.1) into the Python that CMake is given (-DPython_EXECUTABLE=...) or point "
                     "-DMUJOCO_PACKAGE_DIR at its package folder, and rebuild; or load the robot as URDF or SDF");
}
}  // namespace

bool mjcf_supported() { return false; }
std::string mujoco_header_version() { return ""; }
void set_mujoco_library(const std::string&) { no_mjcf("set_mujoco_library"); }
std::string mujoco_library_path() { return ""; }
Model load_mjcf_file(const std::string& path, const LoadOptions&) { no_mjcf(path); }
Model load_mjcf_string(const std::string&, const std::string& source, const LoadOptions&) { no_mjcf(source); }

#else

// ---- mjModel -> Model ----------------------------------------------------------------------------

namespace {

using mujoco_runtime::api;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// MuJoCo writes quaternions w x y z.
Mat3d rotation_of(const mjtNum* wxyz) { return quaternion_rotation(wxyz[1], wxyz[2], wxyz[3], wxyz[0]); }
Transformd transform_of(const mjtNum* pos, const mjtNum* wxyz) { return {rotation_of(wxyz), {pos[0], pos[1], pos[2]}}; }
Transformd translation(const Vec3d& p) { return {Mat3d::identity(), p}; }
Vec3d vec3(const mjtNum* p) { return {p[0], p[1], p[2]}; }

// The parsed and the compiled model, released however loading ends.
struct Compiled {
  mjSpec* spec = nullptr;
  mjModel* model = nullptr;
  Compiled() = default;
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() {
    if (model) api().delete_model(model);
    if (spec) api().delete_spec(spec);
  }
};

// Every element of a type as the file writes it, with its line, in the model's order:
// "<tendon name="t"> (line 8)". One walk over the spec's elements.
std::vector<std::string> describe_all(mjSpec* spec, mjtObj type, const char* tag) {
  std::vector<std::string> out;
  for (mjsElement* e = api().first_element(spec, type); e; e = api().next_element(spec, e)) {
    const mjString* name = api().element_name(e);
    const mjString* info = nullptr;
    switch (type) {
      case mjOBJ_TENDON: info = api().as_tendon(e)->info; break;
      case mjOBJ_ACTUATOR: info = api().as_actuator(e)->info; break;
      case mjOBJ_EQUALITY: info = api().as_equality(e)->info; break;
      case mjOBJ_JOINT: info = api().as_joint(e)->info; break;
      default: break;
    }
    const std::string name_text = name ? api().string(name) : "", info_text = info ? api().string(info) : "";
    std::string text = std::string("<") + tag + (name_text.empty() ? "" : " name=\"" + name_text + "\"") + ">";
    if (!info_text.empty()) text += " (" + info_text + ")";
    out.push_back(std::move(text));
  }
  return out;
}

// Element `index` of describe_all's list (its number when the spec has fewer).
std::string nth(const std::vector<std::string>& all, int index, const char* tag) {
  return index < static_cast<int>(all.size()) ? all[static_cast<size_t>(index)] : std::string("<") + tag + "> number " + std::to_string(index + 1);
}
std::string describe(mjSpec* spec, mjtObj type, int index, const char* tag) { return nth(describe_all(spec, type, tag), index, tag); }

class Converter {
 public:
  Converter(const mjModel* m, mjSpec* spec, std::string source, const LoadOptions& options)
      : m_(m), spec_(spec), source_(std::move(source)), self_collision_(options.self_collision), builder_(model_name()) {
    builder_.set_triangle_inequality(triangle_inequality_policy(options));
  }

  Model convert() {
    refuse_unsupported_elements();
    add_bodies();
    add_sites();
    Model model = builder_.finish();
    model.gravity = (m_->opt.disableflags & mjDSBL_GRAVITY) ? Vec3d::zero() : vec3(m_->opt.gravity);
    model.timestep = m_->opt.timestep;
    model.reference_configuration = q_from_mujoco(model, std::vector<double>(m_->qpos0, m_->qpos0 + m_->nq));
    add_actuators(model);
    add_keyframes(model);
    add_sensors(model);
    add_equalities(model);
    add_geoms(model);
    note_left_out(model);
    return model;
  }

 private:
  std::string name_of(const int* addresses, int index) const { return addresses ? std::string(m_->names + addresses[index]) : ""; }
  std::string model_name() const { return m_->names[0] ? std::string(m_->names) : "mjcf"; }
  std::string body_name(int b) const {
    const std::string n = name_of(m_->name_bodyadr, b);
    return n.empty() ? "body" + std::to_string(b) : n;
  }
  std::string joint_name(int j) const {
    const std::string n = name_of(m_->name_jntadr, j);
    return n.empty() ? body_name(m_->jnt_bodyid[j]) + "/joint" + std::to_string(j - m_->body_jntadr[m_->jnt_bodyid[j]]) : n;
  }
  [[noreturn]] void refuse(const std::string& what) const { throw Error(source_ + ": " + what); }

  // What would change the dynamics and has no counterpart here.
  void refuse_unsupported_elements() const {
    if (m_->ntendon > 0)
      refuse(describe(spec_, mjOBJ_TENDON, 0, "tendon") + ": tendons are not supported (the file has " +
             std::to_string(m_->ntendon) + ")");
    if (m_->nflex > 0) refuse("<flex> / <flexcomp>: deformable bodies are not supported (the file has " + std::to_string(m_->nflex) + ")");
    if (m_->nplugin > 0) refuse("<plugin>: engine plugins are not supported (the file has " + std::to_string(m_->nplugin) + ")");
    if (m_->nmocap > 0) refuse("mocap bodies (<body mocap=\"true\">) are not supported: they are moved by the user, not by the dynamics");
  }

  void add_bodies() {
    ours_.assign(static_cast<size_t>(m_->nbody), 0);
    frame_in_ours_.assign(static_cast<size_t>(m_->nbody), Transformd::identity());
    const std::vector<std::string> joints = describe_all(spec_, mjOBJ_JOINT, "joint");  // once: O(n), not O(n) per joint
    for (int b = 1; b < m_->nbody; ++b) {
      const int p = m_->body_parentid[b];
      const std::string name = body_name(b);
      const std::string where = source_ + ": body '" + name + "'";
      // The body's frame relative to our body of its parent, before its joints move it.
      Transformd X = frame_in_ours_[static_cast<size_t>(p)] * transform_of(m_->body_pos + 3 * b, m_->body_quat + 4 * b);
      int parent = ours_[static_cast<size_t>(p)];
      const int first = m_->body_jntadr[b], count = m_->body_jntnum[b];
      for (int j = first; j < first + count; ++j) {
        const std::string jname = joint_name(j);
        const std::string jwhere = where + ", " + nth(joints, j, "joint");
        const Vec3d anchor = vec3(m_->jnt_pos + 3 * j), axis = vec3(m_->jnt_axis + 3 * j);
        const int qa = m_->jnt_qposadr[j], da = m_->jnt_dofadr[j];
        check_joint_supported(j, jwhere);
        JointType type = JointType::Revolute;
        Transformd placement = X * translation(anchor);
        double lower = -kInfinity, upper = kInfinity;
        const bool limited = m_->jnt_limited[j];
        switch (m_->jnt_type[j]) {
          case mjJNT_FREE:
            if (p != 0 || count != 1)
              refuse(jwhere + ": a free joint must be the only joint of a child of the world body");
            type = JointType::FreeFlyer;
            placement = Transformd::identity();  // qpos is the body frame's pose in the world
            break;
          case mjJNT_BALL:
            if (limited) refuse(jwhere + ": a ball joint's range (a cone limit) is not supported");
            type = JointType::Spherical;
            break;
          case mjJNT_HINGE:
          case mjJNT_SLIDE: {
            const bool hinge = m_->jnt_type[j] == mjJNT_HINGE;
            type = hinge ? (limited ? JointType::Revolute : JointType::Continuous) : JointType::Prismatic;
            if (limited) lower = m_->jnt_range[2 * j], upper = m_->jnt_range[2 * j + 1];
            // MuJoCo moves the joint by qpos - qpos0 (`ref`): the joint frame turned back by
            // qpos0 makes our q equal MuJoCo's qpos.
            const double ref = m_->qpos0[qa];
            if (ref != 0.0) {
              const double back = -ref;
              placement = placement * joint_transform(hinge ? JointType::Revolute : JointType::Prismatic, joint_axis<double>(axis), &back);
            }
            break;
          }
          default: refuse(jwhere + ": unknown joint type " + std::to_string(m_->jnt_type[j]));
        }
        double effort = 0.0;  // unlimited
        if (m_->jnt_actfrclimited[j]) {
          const double lo = m_->jnt_actfrcrange[2 * j], hi = m_->jnt_actfrcrange[2 * j + 1];
          if (lo != -hi) refuse(jwhere + ": an asymmetric actuatorfrcrange (" + std::to_string(lo) + ", " + std::to_string(hi) +
                                ") is not supported (effort limits are symmetric)");
          effort = hi > 0 ? hi : 0.0;
          if (!(hi > 0)) refuse(jwhere + ": actuatorfrcrange must be > 0 on both sides");
        }
        const bool last = j == first + count - 1;
        const std::string link = last ? name : name + "/" + jname;
        parent = builder_.add_body(parent, link, jname, type, placement, axis, lower, upper, 0.0, effort, jwhere);
        for (int k = 0; k < joint_nv(type); ++k) {
          builder_.set_armature(parent, k, m_->dof_armature[da + k]);
          builder_.set_damping(parent, k, m_->dof_damping[da + k]);
          builder_.set_friction_loss(parent, k, m_->dof_frictionloss[da + k]);
        }
        if (m_->jnt_stiffness[j] != 0.0)  // springref is MuJoCo's qpos_spring, which is our q (ref is undone above)
          builder_.set_spring(parent, m_->jnt_stiffness[j], m_->qpos_spring[qa], jwhere);
        // The next joint's frame, and finally the MuJoCo body frame, sit -anchor from this one.
        X = type == JointType::FreeFlyer ? Transformd::identity() : translation(anchor * -1.0);
      }
      if (count == 0) builder_.add_frame(name, FrameKind::Link, parent, X, where);  // welded to its parent
      else builder_.set_link_frame(name, X);
      ours_[static_cast<size_t>(b)] = parent;
      frame_in_ours_[static_cast<size_t>(b)] = X;
      // The body's inertia: mass, centre of mass (ipos) and principal moments along iquat.
      const Mat3d R = rotation_of(m_->body_iquat + 4 * b);
      const mjtNum* d = m_->body_inertia + 3 * b;
      Mat3d principal = Mat3d::zero();
      for (int k = 0; k < 3; ++k) principal(k, k) = d[k];
      const RigidInertiad inertia{m_->body_mass[b], vec3(m_->body_ipos + 3 * b), R * principal * R.transpose()};
      check_link_inertial_values(inertia, name, source_);
      if (parent > 0) builder_.add_inertia(parent, inertia.transformed(X), name);
    }
  }

  void check_joint_supported(int j, const std::string& where) const {
    if (m_->jnt_stiffness[j] != 0.0 && (m_->jnt_type[j] == mjJNT_FREE || m_->jnt_type[j] == mjJNT_BALL))
      refuse(where + ": a spring (stiffness " + std::to_string(m_->jnt_stiffness[j]) +
             ") on a free or ball joint is not supported (only on hinge and slide joints)");
    for (int k = 0; k < mjNPOLY; ++k)
      if (m_->jnt_stiffnesspoly[mjNPOLY * j + k] != 0.0) refuse(where + ": polynomial joint stiffness is not supported");
    const int da = m_->jnt_dofadr[j];
    const int nv = m_->jnt_type[j] == mjJNT_FREE ? 6 : m_->jnt_type[j] == mjJNT_BALL ? 3 : 1;
    for (int k = 0; k < nv; ++k)
      for (int p = 0; p < mjNPOLY; ++p)
        if (m_->dof_dampingpoly[mjNPOLY * (da + k) + p] != 0.0) refuse(where + ": polynomial joint damping is not supported");
  }

  void add_sites() {
    for (int s = 0; s < m_->nsite; ++s) {
      const int b = m_->site_bodyid[s];
      std::string name = name_of(m_->name_siteadr, s);
      if (name.empty()) name = body_name(b) + "/site" + std::to_string(s);
      builder_.add_frame(name, FrameKind::Site, ours_[static_cast<size_t>(b)],
                         frame_in_ours_[static_cast<size_t>(b)] * transform_of(m_->site_pos + 3 * s, m_->site_quat + 4 * s),
                         source_ + ": site '" + name + "'");
    }
  }

  // <equality> connect and weld as loop constraints (hard, stabilised by the engine; MuJoCo's
  // solref / solimp and a weld's torquescale are not used). Between bodies, MuJoCo's compiled
  // eq_data holds, for connect, the anchor in body1 and in body2 and, for weld, the anchor in
  // body2 and the pose of body2 in body1 (relpose; from qpos0 unless the file gives it): the
  // weld's frame 1 is relpose * anchor on body1, frame 2 the anchor on body2. Between sites, the
  // sites' frames (connect: their origins) coincide.
  void add_equalities(Model& model) const {
    const std::vector<std::string> equalities = describe_all(spec_, mjOBJ_EQUALITY, "equality");
    for (int i = 0; i < m_->neq; ++i) {
      const std::string what = nth(equalities, i, "equality");
      const int type = m_->eq_type[i];
      if (type != mjEQ_CONNECT && type != mjEQ_WELD)
        refuse(what + ": only connect and weld equality constraints are supported (joint, tendon, distance and flex "
                      "equalities are not)");
      if (!m_->eq_active0[i]) refuse(what + ": an equality inactive at the start is not supported (the engine's constraints are always on)");
      const bool sites = m_->eq_objtype[i] == mjOBJ_SITE;
      if (!sites && m_->eq_objtype[i] != mjOBJ_BODY) refuse(what + ": only equalities between bodies or sites are supported");
      const int id1 = m_->eq_obj1id[i], id2 = m_->eq_obj2id[i];
      const int body1 = sites ? m_->site_bodyid[id1] : id1, body2 = sites ? m_->site_bodyid[id2] : id2;
      if (body1 == 0) refuse(what + ": body1 is the world; give the robot's body as body1");
      const mjtNum* data = m_->eq_data + mjNEQDATA * i;
      Transformd frame1, frame2;  // in MuJoCo's body1 and body2 frames
      if (sites) {
        frame1 = transform_of(m_->site_pos + 3 * id1, m_->site_quat + 4 * id1);
        frame2 = transform_of(m_->site_pos + 3 * id2, m_->site_quat + 4 * id2);
      } else if (type == mjEQ_CONNECT) {
        frame1 = translation(vec3(data)), frame2 = translation(vec3(data + 3));
      } else {
        frame2 = translation(vec3(data));
        frame1 = transform_of(data + 3, data + 6) * frame2;
      }
      if (type == mjEQ_CONNECT) frame1.rotation = frame2.rotation = Mat3d::identity();
      ConstraintSpec spec;
      spec.name = name_of(m_->name_eqadr, i);
      if (spec.name.empty()) spec.name = "equality" + std::to_string(i);
      spec.type = type == mjEQ_CONNECT ? ConstraintType::Connect : ConstraintType::Weld;
      spec.link1 = body_name(body1);
      spec.link2 = body2 == 0 ? "world" : body_name(body2);
      spec.placement1 = placement_of(frame1), spec.placement2 = placement_of(frame2);
      add_constraint(model, spec, source_ + ": " + what);
    }
  }

  // MuJoCo's element name of a sensor type the engine does not compute.
  static std::string other_sensor_name(int type) {
    switch (type) {
      case mjSENS_ACTUATORFRC: return "actuatorfrc";
      case mjSENS_ACTUATORPOS: return "actuatorpos";
      case mjSENS_ACTUATORVEL: return "actuatorvel";
      case mjSENS_FORCE: return "force";
      case mjSENS_TORQUE: return "torque";
      case mjSENS_SUBTREECOM: return "subtreecom";
      default: return "sensor type " + std::to_string(type);
    }
  }

  // A site's solid as a touch sensor's zone (MuJoCo's site types; a site is never a plane or mesh).
  static std::optional<ZoneShape> zone_shape(int type) {
    switch (type) {
      case mjGEOM_SPHERE: return ZoneShape::Sphere;
      case mjGEOM_CAPSULE: return ZoneShape::Capsule;
      case mjGEOM_ELLIPSOID: return ZoneShape::Ellipsoid;
      case mjGEOM_CYLINDER: return ZoneShape::Cylinder;
      case mjGEOM_BOX: return ZoneShape::Box;
      default: return std::nullopt;
    }
  }

  // The sensors the engine computes (topology/sensor_model.hpp), in the file's order; the others
  // (other types, a reference frame, a body's inertial frame) are counted in load_notes.
  void add_sensors(Model& model) const {
    std::map<std::string, int> left_out;  // "type (why)" -> count
    for (int s = 0; s < m_->nsensor; ++s) {
      std::optional<SensorKind> kind;
      switch (m_->sensor_type[s]) {
        case mjSENS_JOINTPOS: kind = SensorKind::JointPos; break;
        case mjSENS_JOINTVEL: kind = SensorKind::JointVel; break;
        case mjSENS_FRAMEPOS: kind = SensorKind::FramePos; break;
        case mjSENS_FRAMEQUAT: kind = SensorKind::FrameQuat; break;
        case mjSENS_FRAMELINVEL: kind = SensorKind::FrameLinVel; break;
        case mjSENS_FRAMEANGVEL: kind = SensorKind::FrameAngVel; break;
        case mjSENS_GYRO: kind = SensorKind::Gyro; break;
        case mjSENS_VELOCIMETER: kind = SensorKind::Velocimeter; break;
        case mjSENS_ACCELEROMETER: kind = SensorKind::Accelerometer; break;
        case mjSENS_JOINTACTFRC: kind = SensorKind::JointActuatorForce; break;
        case mjSENS_TOUCH: kind = SensorKind::Touch; break;
        default: break;
      }
      const int type = m_->sensor_objtype[s], id = m_->sensor_objid[s];
      std::string why;
      Sensor sensor;
      sensor.name = name_of(m_->name_sensoradr, s);
      if (!kind) why = "not computed by batchdyn";
      else if (m_->sensor_reftype[s] != mjOBJ_UNKNOWN && m_->sensor_refid[s] >= 0) why = "a reference frame (reftype)";
      else if (*kind == SensorKind::JointPos || *kind == SensorKind::JointVel || *kind == SensorKind::JointActuatorForce) {
        if (m_->jnt_type[id] != mjJNT_HINGE && m_->jnt_type[id] != mjJNT_SLIDE) why = "on a ball or free joint";
        else sensor.object = joint_name(id), sensor.body = model.frames[static_cast<size_t>(model.frame_index(sensor.object, FrameKind::Joint))].body;
      } else if (type == mjOBJ_SITE) {
        std::string site = name_of(m_->name_siteadr, id);
        sensor.object = site.empty() ? body_name(m_->site_bodyid[id]) + "/site" + std::to_string(id) : site;
        sensor.frame = model.frame_index(sensor.object, FrameKind::Site);
        if (*kind == SensorKind::Touch) {
          sensor.link = body_name(m_->site_bodyid[id]);
          const std::optional<ZoneShape> shape = zone_shape(m_->site_type[id]);
          if (!shape) why = "a site of type " + std::to_string(m_->site_type[id]) + " as its zone";
          else sensor.zone.shape = *shape;
          for (int k = 0; k < 3; ++k) sensor.zone.size[k] = m_->site_size[3 * id + k];
        }
      } else if (type == mjOBJ_XBODY && id > 0) {
        sensor.object = body_name(id);
        sensor.frame = model.frame_index(sensor.object, FrameKind::Link);
      } else {
        why = "on a body's inertial frame or a geom (use a site or objtype=\"xbody\")";
      }
      if (!why.empty()) {
        ++left_out[std::string(kind ? sensor_kind_name(*kind) : other_sensor_name(m_->sensor_type[s])) + " (" + why + ")"];
        continue;
      }
      sensor.kind = *kind;
      if (sensor.frame >= 0) sensor.body = model.frames[static_cast<size_t>(sensor.frame)].body;
      sensor.address = sensordata_size(model.sensors);
      sensor.cutoff = m_->sensor_cutoff[s];
      if (sensor.name.empty()) sensor.name = std::string(sensor_kind_name(*kind)) + std::to_string(s);
      model.sensors.push_back(std::move(sensor));
    }
    for (const auto& [what, count] : left_out)
      model.load_notes.push_back(std::to_string(count) + " sensor(s) not computed: " + what);
  }

  void add_actuators(Model& model) const {
    const std::vector<std::string> actuators = describe_all(spec_, mjOBJ_ACTUATOR, "actuator");
    for (int a = 0; a < m_->nu; ++a) {
      const std::string what = nth(actuators, a, "actuator");
      if (m_->actuator_trntype[a] != mjTRN_JOINT) refuse(what + ": only joint transmissions are supported");
      if (m_->actuator_dyntype[a] != mjDYN_NONE) refuse(what + ": actuator dynamics (dyntype) are not supported");
      if (m_->actuator_gaintype[a] != mjGAIN_FIXED) refuse(what + ": only a fixed gain is supported");
      if (m_->actuator_biastype[a] != mjBIAS_NONE && m_->actuator_biastype[a] != mjBIAS_AFFINE)
        refuse(what + ": only no bias or an affine bias is supported");
      if (m_->actuator_ctrlnum[a] != 1 || m_->actuator_outnum[a] != 1)
        refuse(what + ": an actuator with several controls or outputs is not supported");
      if (m_->actuator_delay[a] != 0.0) refuse(what + ": actuator delay is not supported");
      if (m_->actuator_damping[a] != 0.0 || m_->actuator_armature[a] != 0.0)
        refuse(what + ": actuator damping / armature is not supported (give them on the joint)");
      const int j = m_->actuator_trnid[2 * a];
      if (m_->jnt_type[j] != mjJNT_HINGE && m_->jnt_type[j] != mjJNT_SLIDE)
        refuse(what + ": drives a free or ball joint; only hinge and slide joints are supported");
      Actuator out;
      out.name = name_of(m_->name_actuatoradr, a);
      if (out.name.empty()) out.name = "actuator" + std::to_string(a);
      out.joint = joint_name(j);
      out.dof = model.bodies[static_cast<size_t>(model.joint_index(out.joint))].idx_v;
      const mjtNum* gear = m_->actuator_gear + 6 * m_->actuator_outadr[a];
      out.gear = gear[0];
      out.gain = m_->actuator_gainprm[mjNGAIN * a];
      for (int k = 0; k < 3; ++k) out.bias[k] = m_->actuator_biastype[a] == mjBIAS_AFFINE ? m_->actuator_biasprm[mjNBIAS * a + k] : 0.0;
      const int c = m_->actuator_ctrladr[a];
      if (m_->actuator_ctrllimited[a]) out.ctrl_lower = m_->actuator_ctrlrange[2 * c], out.ctrl_upper = m_->actuator_ctrlrange[2 * c + 1];
      if (m_->actuator_forcelimited[a]) out.force_lower = m_->actuator_forcerange[2 * a], out.force_upper = m_->actuator_forcerange[2 * a + 1];
      // MuJoCo's shortcuts, recognised by their parameters.
      if (out.bias[0] == 0 && out.bias[1] == 0 && out.bias[2] == 0 && out.gain == 1) out.kind = ActuatorKind::Motor;
      else if (out.bias[0] == 0 && out.bias[1] == -out.gain && out.bias[2] <= 0) out.kind = ActuatorKind::Position;
      else if (out.bias[0] == 0 && out.bias[1] == 0 && out.bias[2] == -out.gain) out.kind = ActuatorKind::Velocity;
      else out.kind = ActuatorKind::General;
      model.actuators.push_back(out);
    }
  }

  void add_keyframes(Model& model) const {
    for (int k = 0; k < m_->nkey; ++k) {
      Keyframe key;
      key.name = name_of(m_->name_keyadr, k);
      if (key.name.empty()) key.name = "key" + std::to_string(k);
      key.time = m_->key_time[k];
      key.q = q_from_mujoco(model, std::vector<double>(m_->key_qpos + k * m_->nq, m_->key_qpos + (k + 1) * m_->nq));
      key.v = v_from_mujoco(model, key.q, std::vector<double>(m_->key_qvel + k * m_->nv, m_->key_qvel + (k + 1) * m_->nv));
      key.ctrl.assign(m_->key_ctrl + k * m_->nu, m_->key_ctrl + (k + 1) * m_->nu);
      model.keyframes.push_back(std::move(key));
    }
  }

  // Geoms that collide: primitives and meshes (their convex hulls) on the robot's bodies; the
  // first plane or height field on the world is the ground; the world's other geoms are
  // obstacles, paired with each robot geom that MuJoCo would collide with them (contype /
  // conaffinity, <exclude>); <contact><pair> elements are pairs, and so are the robot's geoms
  // with each other that MuJoCo would collide (self-collision, when asked for). What cannot be
  // mapped yet, or is left out, is listed (Model::contacts.skipped).
  void add_geoms(Model& model) const {
    model.contacts.ground.present = false;
    int ground_geom = -1;
    std::vector<char> in_pair(static_cast<size_t>(m_->ngeom), 0);
    for (int p = 0; p < m_->npair; ++p) in_pair[static_cast<size_t>(m_->pair_geom1[p])] = in_pair[static_cast<size_t>(m_->pair_geom2[p])] = 1;
    std::vector<int> robot_geoms, world_geoms;
    for (int g = 0; g < m_->ngeom; ++g) {
      const bool collides = m_->geom_contype[g] != 0 || m_->geom_conaffinity[g] != 0;
      if (!collides && !in_pair[static_cast<size_t>(g)]) continue;  // visual
      const int b = m_->geom_bodyid[g];
      if (ours_[static_cast<size_t>(b)] != 0) {
        robot_geoms.push_back(g);
        continue;
      }
      const int type = m_->geom_type[g];
      if ((type == mjGEOM_PLANE || type == mjGEOM_HFIELD) && collides && !model.contacts.ground.present) {
        const Transformd X = frame_in_ours_[static_cast<size_t>(b)] * transform_of(m_->geom_pos + 3 * g, m_->geom_quat + 4 * g);
        model.contacts.ground.present = true;
        model.contacts.ground.normal = X.rotation * Vec3d{0, 0, 1};
        model.contacts.ground.height = dot(model.contacts.ground.normal, X.translation);
        ground_geom = g;
        if (type == mjGEOM_HFIELD) add_height_field(model, g, X, geom_label(g));
        continue;
      }
      world_geoms.push_back(g);
    }
    // An obstacle no robot geom can touch (contype / conaffinity, <exclude>, no <pair>) is left
    // out: it would be geometry on the world in no pair.
    std::erase_if(world_geoms, [&](int w) {
      bool touchable = in_pair[static_cast<size_t>(w)] != 0;
      for (const int r : robot_geoms) touchable = touchable || (collide(r, w) && !excluded(r, w));
      if (!touchable)
        model.load_notes.push_back(geom_label(w) + ": no robot geom can touch it (contype / conaffinity, <exclude>, no <pair>): left out");
      return !touchable;
    });
    std::vector<int> geometry_of(static_cast<size_t>(m_->ngeom), -1);  // MuJoCo geom -> ours
    for (const int g : robot_geoms) geometry_of[static_cast<size_t>(g)] = add_geometry(model, g, ground_geom);
    for (const int g : world_geoms) geometry_of[static_cast<size_t>(g)] = add_geometry(model, g, -1);
    add_explicit_pairs(model, geometry_of, ground_geom);
    add_obstacle_pairs(model, geometry_of, robot_geoms, world_geoms);
    add_self_pairs(model, geometry_of, robot_geoms);
  }

  // Geom g as a collision geometry (on the world's link when on the world); its index, or -1
  // when its type does not collide yet (listed).
  int add_geometry(Model& model, int g, int ground_geom) const {
    const std::string what = geom_label(g);
    const int b = m_->geom_bodyid[g];
    CollisionGeometry geometry;
    geometry.name = name_of(m_->name_geomadr, g);
    if (geometry.name.empty()) geometry.name = body_name(b) + "/geom" + std::to_string(g - m_->body_geomadr[b]);
    geometry.link = b == 0 ? std::string("world") : body_name(b);
    geometry.in_link = transform_of(m_->geom_pos + 3 * g, m_->geom_quat + 4 * g);
    const mjtNum* size = m_->geom_size + 3 * g;
    switch (m_->geom_type[g]) {
      case mjGEOM_SPHERE: geometry.shape = CollisionShape::Sphere, geometry.radius = size[0]; break;
      case mjGEOM_CAPSULE: geometry.shape = CollisionShape::Capsule, geometry.radius = size[0], geometry.length = 2 * size[1]; break;
      case mjGEOM_CYLINDER: geometry.shape = CollisionShape::Cylinder, geometry.radius = size[0], geometry.length = 2 * size[1]; break;
      case mjGEOM_BOX: geometry.shape = CollisionShape::Box, geometry.half_extents = vec3(size); break;
      case mjGEOM_MESH: add_hull(model, g, geometry); break;
      default:
        model.contacts.skipped.push_back(what + ": " + geom_type_name(m_->geom_type[g]) +
                                         (b == 0 || ours_[static_cast<size_t>(b)] == 0 ? " geoms on the world other than the ground" : " geoms") +
                                         " do not collide yet");
        return -1;
    }
    // condim 1 is frictionless; 3, 4 and 6 take the sliding friction (torsional and rolling
    // friction are not modelled).
    geometry.friction = m_->geom_condim[g] == 1 ? 0.0 : m_->geom_friction[3 * g];
    // MuJoCo's margin is a detection distance, as ours; ours stays at least the default, so
    // that a fast foot is detected a step before it reaches the ground.
    geometry.margin = std::max(m_->geom_margin[g], kDefaultContactMargin);
    geometry.touches_ground = ground_geom >= 0 && collide(g, ground_geom);
    geometry.source = source_;
    add_collision_geometry(model, geometry, source_);
    return static_cast<int>(model.contacts.geometries.size()) - 1;
  }

  // Whether MuJoCo's contype / conaffinity filter lets geoms g1 and g2 collide.
  bool collide(int g1, int g2) const {
    return (m_->geom_contype[g1] & m_->geom_conaffinity[g2]) || (m_->geom_contype[g2] & m_->geom_conaffinity[g1]);
  }

  // Whether an <exclude> names the bodies of geoms g1 and g2.
  bool excluded(int g1, int g2) const {
    const int b1 = m_->geom_bodyid[g1], b2 = m_->geom_bodyid[g2];
    for (int k = 0; k < m_->nexclude; ++k)
      if (m_->exclude_signature[k] == (b1 << 16) + b2 || m_->exclude_signature[k] == (b2 << 16) + b1) return true;
    return false;
  }

  // <contact><pair>: its own friction (condim 1: none) and margin. A pair with the ground plane
  // is the geom's ground contact (with the geom's friction).
  void add_explicit_pairs(Model& model, const std::vector<int>& geometry_of, int ground_geom) const {
    const std::vector<std::string> pairs = describe_all(spec_, mjOBJ_PAIR, "pair");
    for (int p = 0; p < m_->npair; ++p) {
      const int g1 = m_->pair_geom1[p], g2 = m_->pair_geom2[p];
      const std::string what = nth(pairs, p, "pair");
      if (g1 == ground_geom || g2 == ground_geom) {
        const int other = geometry_of[static_cast<size_t>(g1 == ground_geom ? g2 : g1)];
        if (other < 0) continue;  // listed with its geom
        CollisionGeometry& geometry = model.contacts.geometries[static_cast<size_t>(other)];
        if (!geometry.touches_ground) {
          geometry.touches_ground = true;
          resolve_contacts(model);
        }
        model.load_notes.push_back(what + ": with the ground, taken as the geom's ground contact (its own friction and margin)");
        continue;
      }
      const int a = geometry_of[static_cast<size_t>(g1)], b = geometry_of[static_cast<size_t>(g2)];
      if (a < 0 || b < 0) {
        model.contacts.skipped.push_back(what + ": a geom of it does not collide yet");
        continue;
      }
      if (model.contacts.geometries[static_cast<size_t>(a)].body == 0 && model.contacts.geometries[static_cast<size_t>(b)].body == 0) continue;
      ContactPair pair;
      pair.name = name_of(m_->name_pairadr, p);
      pair.geometry1 = a, pair.geometry2 = b;
      pair.friction = m_->pair_dim[p] == 1 ? 0.0 : m_->pair_friction[5 * p];
      pair.margin = std::max(m_->pair_margin[p], kDefaultContactMargin);
      add_contact_pair(model, pair, source_ + ": " + what);
    }
  }

  // Each obstacle (a world geom other than the ground) with each robot geom MuJoCo collides it
  // with (add_dynamic_pair).
  void add_obstacle_pairs(Model& model, const std::vector<int>& geometry_of, const std::vector<int>& robot_geoms,
                          const std::vector<int>& world_geoms) const {
    for (const int w : world_geoms)
      for (const int r : robot_geoms) add_dynamic_pair(model, geometry_of, r, w);
  }

  // Self-collision: the robot's geoms with each other, as MuJoCo's collision filter lets them
  // meet (add_dynamic_pair), except two on one rigid body (welded) and, unless the file turns
  // filterparent off, two on a body and its parent. Go2's front calves meet when it crosses its
  // legs. Off unless LoadOptions::self_collision: the pairs are then counted in
  // Model::contacts.skipped.
  void add_self_pairs(Model& model, const std::vector<int>& geometry_of, const std::vector<int>& geoms) const {
    const bool filter_parent = !(m_->opt.disableflags & mjDSBL_FILTERPARENT);
    int left_out = 0;
    for (size_t x = 0; x < geoms.size(); ++x)
      for (size_t y = x + 1; y < geoms.size(); ++y) {
        const int g1 = geoms[x], g2 = geoms[y];
        const int w1 = m_->body_weldid[m_->geom_bodyid[g1]], w2 = m_->body_weldid[m_->geom_bodyid[g2]];
        if (w1 == w2) continue;
        if (filter_parent && (m_->body_weldid[m_->body_parentid[w1]] == w2 || m_->body_weldid[m_->body_parentid[w2]] == w1)) continue;
        if (self_collision_) add_dynamic_pair(model, geometry_of, g1, g2);
        else left_out += dynamic_pair_admitted(model, geometry_of, g1, g2);
      }
    if (left_out > 0)
      model.contacts.skipped.push_back(std::to_string(left_out) +
                                       " pairs of robot geoms that MuJoCo would collide with each other (self-collision) are off: "
                                       "load with self_collision=True (--self-collision) to collide them");
  }

  // Whether MuJoCo geoms g1 and g2 make a "dynamic" pair (MuJoCo's name for the pairs its
  // collision filter admits): the filter admits them (contype / conaffinity, no <exclude>), both
  // collide here, and no <pair> names them already.
  bool dynamic_pair_admitted(const Model& model, const std::vector<int>& geometry_of, int g1, int g2) const {
    const int a = geometry_of[static_cast<size_t>(g1)], b = geometry_of[static_cast<size_t>(g2)];
    if (a < 0 || b < 0 || !collide(g1, g2) || excluded(g1, g2)) return false;
    for (const ContactPair& pair : model.contacts.pairs)
      if ((pair.geometry1 == a && pair.geometry2 == b) || (pair.geometry1 == b && pair.geometry2 == a)) return false;
    return true;
  }

  // MuJoCo geoms g1 and g2 as a pair of their own, when dynamic_pair_admitted. MuJoCo's mixing:
  // the higher geom priority's condim and friction, else the larger of each; the larger margin.
  void add_dynamic_pair(Model& model, const std::vector<int>& geometry_of, int g1, int g2) const {
    if (!dynamic_pair_admitted(model, geometry_of, g1, g2)) return;
    const int a = geometry_of[static_cast<size_t>(g1)], b = geometry_of[static_cast<size_t>(g2)];
    const int p1 = m_->geom_priority[g1], p2 = m_->geom_priority[g2];
    const int condim = p1 != p2 ? m_->geom_condim[p1 > p2 ? g1 : g2] : std::max(m_->geom_condim[g1], m_->geom_condim[g2]);
    const double friction = p1 != p2 ? m_->geom_friction[3 * (p1 > p2 ? g1 : g2)] : std::max(m_->geom_friction[3 * g1], m_->geom_friction[3 * g2]);
    ContactPair pair;
    pair.geometry1 = a, pair.geometry2 = b;
    pair.friction = condim == 1 ? 0.0 : friction;
    pair.margin = std::max({m_->geom_margin[g1], m_->geom_margin[g2], kDefaultContactMargin});
    add_contact_pair(model, pair, source_);
  }

  // A mesh collides through its convex hull (MuJoCo's mesh_graph: the hull's vertex ids), cut
  // down to the vertex budget.
  void add_hull(Model& model, int g, CollisionGeometry& geometry) const {
    const int mesh = m_->geom_dataid[g];
    const float* vert = m_->mesh_vert + 3 * m_->mesh_vertadr[mesh];
    std::vector<Vec3d> hull;
    const auto vertex = [&](int k) { return Vec3d{vert[3 * k], vert[3 * k + 1], vert[3 * k + 2]}; };
    if (m_->mesh_graphadr[mesh] >= 0) {
      // mesh_graph: numvert, numface, vert_edgeadr[numvert], vert_globalid[numvert], ...
      const int* graph = m_->mesh_graph + m_->mesh_graphadr[mesh];
      for (int k = 0; k < graph[0]; ++k) hull.push_back(vertex(graph[2 + graph[0] + k]));
    } else {
      for (int k = 0; k < m_->mesh_vertnum[mesh]; ++k) hull.push_back(vertex(k));  // a superset of the hull's vertices
    }
    const std::string cut = set_convex_hull(geometry, hull);
    if (!cut.empty()) model.load_notes.push_back(geom_label(g) + ": " + cut);
  }

  void add_height_field(Model& model, int g, const Transformd& X, const std::string& what) const {
    const int h = m_->geom_dataid[g];
    const mjtNum* size = m_->hfield_size + 4 * h;
    const int rows = m_->hfield_nrow[h], cols = m_->hfield_ncol[h];
    const double dx = 2 * size[0] / (cols - 1), dy = 2 * size[1] / (rows - 1);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        if (X.rotation(r, c) != (r == c ? 1.0 : 0.0)) refuse(what + ": a rotated height field is not supported");
    if (std::abs(dx - dy) > 1e-9 * std::max(dx, dy))
      refuse(what + ": the height field's grid spacing differs along x (" + std::to_string(dx) + ") and y (" + std::to_string(dy) +
             "); batchdyn's terrain has square cells");
    HeightField& field = model.contacts.terrain;
    field.nx = cols, field.ny = rows;
    field.origin_x = X.translation[0] - size[0], field.origin_y = X.translation[1] - size[1];
    field.spacing = dx;
    field.heights.resize(static_cast<size_t>(rows) * static_cast<size_t>(cols));
    // MuJoCo's row r lies at y = -size_y + r dy, column c at x = -size_x + c dx: row-major as ours.
    const float* data = m_->hfield_data + m_->hfield_adr[h];
    for (size_t k = 0; k < field.heights.size(); ++k) field.heights[k] = X.translation[2] + size[2] * static_cast<double>(data[k]);
    check_height_field(field, what);
  }

  static const char* geom_type_name(int type) {
    switch (type) {
      case mjGEOM_PLANE: return "plane";
      case mjGEOM_HFIELD: return "height field";
      case mjGEOM_SPHERE: return "sphere";
      case mjGEOM_CAPSULE: return "capsule";
      case mjGEOM_ELLIPSOID: return "ellipsoid";
      case mjGEOM_CYLINDER: return "cylinder";
      case mjGEOM_BOX: return "box";
      case mjGEOM_MESH: return "mesh";
      case mjGEOM_SDF: return "signed distance field";
      default: return "unknown";
    }
  }

  std::string geom_label(int g) const {
    const std::string name = name_of(m_->name_geomadr, g);
    return std::string(geom_type_name(m_->geom_type[g])) + " geom " + (name.empty() ? "" : "'" + name + "' ") + "on body '" +
           body_name(m_->geom_bodyid[g]) + "'";
  }

  // What the model has that does not change the dynamics (and what it approximates).
  void note_left_out(Model& model) const {
    for (int j = 0; j < m_->njnt; ++j)
      if (m_->jnt_limited[j] && (m_->jnt_type[j] == mjJNT_HINGE || m_->jnt_type[j] == mjJNT_SLIDE)) {
        model.load_notes.push_back("joint limits are the engine's limit stage (on by default in step()); MuJoCo's limit solref / solimp are not used");
        break;
      }
  }

  const mjModel* m_;
  mjSpec* spec_;
  std::string source_;
  bool self_collision_;  // LoadOptions::self_collision
  ModelBuilder builder_;
  std::vector<int> ours_;                  // per MuJoCo body: our body (its last joint's, or its welded ancestor's)
  std::vector<Transformd> frame_in_ours_;  // per MuJoCo body: its frame in that body's frame
};

struct LoadRequest {
  const std::string* path = nullptr;  // a file, or
  const std::string* xml = nullptr;   // a document
  Compiled* compiled = nullptr;
  std::string error;
};

void parse_and_compile(void* context) {
  auto& request = *static_cast<LoadRequest*>(context);
  char error[1024] = "";
  request.compiled->spec = request.path ? api().parse_xml(request.path->c_str(), nullptr, error, sizeof error)
                                        : api().parse_xml_string(request.xml->c_str(), nullptr, error, sizeof error);
  if (!request.compiled->spec) {
    request.error = error;
    return;
  }
  // Visual-only geoms do not take part in the dynamics: not compiled, their meshes not read.
  request.compiled->spec->compiler.discardvisual = 1;
  request.compiled->model = api().compile(request.compiled->spec, nullptr);
  if (!request.compiled->model) request.error = api().spec_error(request.compiled->spec);
}

Model load(LoadRequest request, const std::string& source, const LoadOptions& options) {
  Compiled compiled;
  request.compiled = &compiled;
  std::vector<std::string> warnings;
  mujoco_runtime::call_guarded(source + ": ", warnings, &parse_and_compile, &request);
  if (!compiled.model) throw Error(source + ": " + request.error);
  Model model = Converter(compiled.model, compiled.spec, source, options).convert();
  for (const std::string& w : warnings) model.load_notes.push_back("MuJoCo's compiler: " + w);
  return model;
}

}  // namespace

Model load_mjcf_file(const std::string& path, const LoadOptions& options) {
  if (!std::ifstream(path)) throw Error(path + ": cannot open the file");
  LoadRequest request;
  request.path = &path;
  return load(request, path, options);
}

Model load_mjcf_string(const std::string& xml, const std::string& source, const LoadOptions& options) {
  LoadRequest request;
  request.xml = &xml;
  return load(request, source, options);
}

#endif

}  // namespace batchdyn
