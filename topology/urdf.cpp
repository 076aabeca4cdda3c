#include "topology/urdf.hpp"

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "topology/contacts.hpp"
#include "topology/json_parse.hpp"
#include "topology/mesh_file.hpp"

namespace batchdyn {

struct UrdfDocument {
  std::string source;     // file path or "<urdf string>"
  std::string directory;  // the file's folder (relative mesh paths start there); "" for a string: the working directory
  urdf::ModelInterfaceSharedPtr urdf;
  std::vector<ConstraintSpec> loop_joints;
  std::vector<std::string> link_names, joint_names;  // as written, plus "root_joint" (loop joints are constraints)

  // urdfdom links hold their children by shared_ptr: releasing a long chain from its root
  // would recurse once per link. Cut those edges first so that each link is freed by the
  // model's own table, iteratively.
  ~UrdfDocument() {
    if (!urdf) return;
    for (auto& [name, link] : urdf->links_) link->child_links.clear(), link->child_joints.clear();
  }
};

namespace {

// urdfdom reports parse errors through console_bridge; collect them so the exception can
// carry the message instead of printing to stderr. console_bridge's handler is global, so
// parsing is serialised.
class CaptureHandler : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN) messages += (messages.empty() ? "" : "; ") + text;
  }
  std::string messages;
};
std::mutex urdfdom_mutex;

std::string line_of(const TiXmlElement* e) { return "line " + std::to_string(e->Row()); }

std::string required_attribute(const TiXmlElement* e, const char* attr, const std::string& where) {
  const char* value = e->Attribute(attr);
  if (!value || !*value)
    throw Error(where + ": <" + e->ValueStr() + "> at " + line_of(e) + " has no '" + attr + "' attribute");
  return value;
}

// Reads whitespace-separated finite numbers from `text` into out[0..n), requiring the whole
// text to be consumed; locale-independent (std::from_chars).
bool parse_numbers(const char* text, double* out, int n) {
  const char* p = text;
  const char* end = text + std::strlen(text);
  auto skip_space = [&] {
    while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p;
  };
  for (int k = 0; k < n; ++k) {
    skip_space();
    const auto [next, ec] = std::from_chars(p, end, out[k]);
    if (ec != std::errc() || !std::isfinite(out[k])) return false;
    p = next;
  }
  skip_space();
  return p == end;
}

Vec3d parse_vec3(const char* text, const std::string& where) {
  if (!text) return Vec3d::zero();
  double v[3];
  if (!parse_numbers(text, v, 3))
    throw Error(where + ": expected three finite numbers, got '" + std::string(text) + "'");
  return {v[0], v[1], v[2]};
}

ConstraintSpec parse_loop_joint(const TiXmlElement* e, const std::string& source) {
  ConstraintSpec spec;
  spec.name = required_attribute(e, "name", source);
  const std::string where = source + ": <loop_joint name=\"" + spec.name + "\"> at " + line_of(e);
  const std::string type = required_attribute(e, "type", where);
  if (type == "spherical" || type == "connect") spec.type = ConstraintType::Connect;
  else if (type == "fixed" || type == "weld") spec.type = ConstraintType::Weld;
  else if (type == "revolute") spec.type = ConstraintType::Revolute;
  else throw Error(where + ": unsupported loop joint type '" + type + "' (use spherical, fixed or revolute)");
  auto side = [&](const char* tag, std::string& link, Placement& p) {
    const TiXmlElement* s = e->FirstChildElement(tag);
    if (!s) throw Error(where + ": missing <" + tag + " link=\"...\"/>");
    link = required_attribute(s, "link", where);
    p.xyz = parse_vec3(s->Attribute("xyz"), where + " <" + tag + "> xyz");
    p.rpy = parse_vec3(s->Attribute("rpy"), where + " <" + tag + "> rpy");
  };
  side("link1", spec.link1, spec.placement1);
  side("link2", spec.link2, spec.placement2);
  if (const TiXmlElement* a = e->FirstChildElement("axis")) spec.axis = parse_vec3(a->Attribute("xyz"), where + " <axis>");
  return spec;
}

// A number written in an attribute: the whole text must be one finite number.
double finite_number(const TiXmlElement* e, const char* attr, const std::string& where) {
  const char* text = e->Attribute(attr);
  if (!text) throw Error(where + ": <" + e->ValueStr() + "> at " + line_of(e) + " has no '" + attr + "' attribute");
  double value = 0;
  if (!parse_numbers(text, &value, 1))
    throw Error(where + ": <" + e->ValueStr() + " " + attr + "=\"" + text + "\"> at " + line_of(e) +
                " is not a finite number");
  return value;
}

// urdfdom reads "nan", "inf", garbage and a missing <mass> as 0 without a word; check every
// <inertial> as written: <mass value>, all six <inertia> entries, the <origin>.
void check_inertial(const TiXmlElement* link, const std::string& link_name, const std::string& source) {
  const TiXmlElement* inertial = link->FirstChildElement("inertial");
  if (!inertial) return;  // a massless link
  const std::string where = source + ": link '" + link_name + "'";
  const TiXmlElement* mass = inertial->FirstChildElement("mass");
  if (!mass) throw Error(where + ": <inertial> at " + line_of(inertial) + " has no <mass value=\"...\"/>");
  finite_number(mass, "value", where);
  const TiXmlElement* inertia = inertial->FirstChildElement("inertia");
  if (!inertia) throw Error(where + ": <inertial> at " + line_of(inertial) + " has no <inertia .../>");
  for (const char* entry : {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}) finite_number(inertia, entry, where);
  if (const TiXmlElement* origin = inertial->FirstChildElement("origin")) {
    parse_vec3(origin->Attribute("xyz"), where + ": <inertial><origin xyz> at " + line_of(origin));
    parse_vec3(origin->Attribute("rpy"), where + ": <inertial><origin rpy> at " + line_of(origin));
  }
}

// Structural checks urdfdom either misses or reports vaguely; every message names the file
// and the element.
void check_structure(const TiXmlElement* robot, const std::string& source) {
  std::map<std::string, const TiXmlElement*> links;
  for (const TiXmlElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    const std::string name = required_attribute(l, "name", source);
    if (!links.emplace(name, l).second)
      throw Error(source + ": duplicate link name '" + name + "' at " + line_of(l));
    check_inertial(l, name, source);
  }
  if (links.empty()) throw Error(source + ": <robot> has no <link>");

  std::set<std::string> joint_names;
  std::map<std::string, std::string> parent_of;  // child link -> parent link
  std::map<std::string, std::string> joint_of;   // child link -> joint
  for (const TiXmlElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const std::string name = required_attribute(j, "name", source);
    const std::string where = source + ": joint '" + name + "' (" + line_of(j) + ")";
    if (!joint_names.insert(name).second) throw Error(source + ": duplicate joint name '" + name + "' at " + line_of(j));
    const std::string type = required_attribute(j, "type", where);
    if (type == "planar" || type == "floating")
      throw Error(where + ": joint type '" + type +
                  "' is not supported inside the tree (supported: revolute, continuous, prismatic, fixed; "
                  "use the free-flyer root option for a floating base)");
    if (type != "revolute" && type != "continuous" && type != "prismatic" && type != "fixed")
      throw Error(where + ": unknown joint type '" + type + "'");
    const TiXmlElement* p = j->FirstChildElement("parent");
    const TiXmlElement* c = j->FirstChildElement("child");
    if (!p) throw Error(where + ": missing <parent link=\"...\"/>");
    if (!c) throw Error(where + ": missing <child link=\"...\"/>");
    const std::string parent = required_attribute(p, "link", where);
    const std::string child = required_attribute(c, "link", where);
    if (!links.count(parent)) throw Error(where + ": parent names unknown link '" + parent + "'");
    if (!links.count(child)) throw Error(where + ": child names unknown link '" + child + "'");
    if (parent == child) throw Error(where + ": joint connects link '" + parent + "' to itself (a cycle)");
    if (joint_of.count(child))
      throw Error(where + ": link '" + child + "' already has parent joint '" + joint_of[child] +
                  "'; a link can have only one parent joint (closing a loop needs a <loop_joint>)");
    joint_of[child] = name;
    parent_of[child] = parent;
  }

  std::vector<std::string> roots;
  for (const auto& [name, element] : links)
    if (!parent_of.count(name)) roots.push_back(name);
  if (roots.size() > 1) {
    std::string list;
    for (const auto& r : roots) list += (list.empty() ? "'" : ", '") + r + "'";
    throw Error(source + ": several root links (" + list + "); a URDF must form a single tree");
  }
  if (roots.empty()) throw Error(source + ": no root link: the joints form a cycle");
  // Every link has at most one parent, so the links reachable from the root form a tree; any
  // other link lies on a cycle. One iterative walk, O(n log n) with the maps.
  std::map<std::string, std::vector<std::string>> children_of;
  for (const auto& [child, parent] : parent_of) children_of[parent].push_back(child);
  std::set<std::string> reached{roots.front()};
  std::vector<std::string> stack{roots.front()};
  while (!stack.empty()) {
    const std::string at = stack.back();
    stack.pop_back();
    const auto it = children_of.find(at);
    if (it == children_of.end()) continue;
    for (const std::string& c : it->second)
      if (reached.insert(c).second) stack.push_back(c);
  }
  for (const auto& [name, element] : links)
    if (!reached.count(name))
      throw Error(source + ": the joints form a cycle through link '" + name + "' (joint '" + joint_of[name] + "')");
}

Transformd to_transform(const urdf::Pose& pose) {
  double x, y, z, w;
  pose.rotation.getQuaternion(x, y, z, w);
  return {quaternion_rotation(x, y, z, w), {pose.position.x, pose.position.y, pose.position.z}};
}

// The link's inertia in its own frame, its numbers checked as written (finite, mass >= 0).
// A link without <inertial> is massless (Pinocchio's convention).
RigidInertiad link_inertia(const urdf::Link& link, const std::string& source) {
  if (!link.inertial) return RigidInertiad::zero();
  const urdf::Inertial& in = *link.inertial;
  const Transformd T = to_transform(in.origin);
  Mat3d I;
  I(0, 0) = in.ixx; I(0, 1) = in.ixy; I(0, 2) = in.ixz;
  I(1, 0) = in.ixy; I(1, 1) = in.iyy; I(1, 2) = in.iyz;
  I(2, 0) = in.ixz; I(2, 1) = in.iyz; I(2, 2) = in.izz;
  RigidInertiad r;
  r.mass = in.mass;
  r.com = T.translation;
  r.inertia_com = I;
  check_link_inertial_values(r, link.name, source);
  r.inertia_com = T.rotation * I * T.rotation.transpose();
  return r;
}

JointType joint_type_of(const urdf::Joint& joint) {
  if (joint.type == urdf::Joint::CONTINUOUS) return JointType::Continuous;
  if (joint.type == urdf::Joint::PRISMATIC) return JointType::Prismatic;
  return JointType::Revolute;
}

// Appends the subtree below `root_link` (attached to `root_body`, the link at `root_in_body`)
// depth-first, children in urdfdom's order, with an explicit stack (no recursion: a URDF
// chain may be 100,000 links long).
void append_subtree(ModelBuilder& builder, const UrdfDocument& doc, const std::string& prefix,
                    const urdf::Link& root_link, int root_body, const Transformd& root_in_body) {
  struct Pending {
    const urdf::Joint* joint;
    int body;                    // body the joint's parent link belongs to
    Transformd parent_in_body;   // the parent link's frame in that body
  };
  std::vector<Pending> stack;
  auto push_children = [&](const urdf::Link& link, int body, const Transformd& link_in_body) {
    for (auto it = link.child_joints.rbegin(); it != link.child_joints.rend(); ++it)
      stack.push_back({it->get(), body, link_in_body});
  };
  push_children(root_link, root_body, root_in_body);
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    const urdf::Joint& joint = *p.joint;
    const urdf::LinkConstSharedPtr child = doc.urdf->getLink(joint.child_link_name);
    const Transformd joint_in_body = p.parent_in_body * to_transform(joint.parent_to_joint_origin_transform);
    const std::string child_name = prefix + child->name;
    const RigidInertiad inertia = link_inertia(*child, doc.source);
    if (joint.type == urdf::Joint::FIXED) {
      builder.add_frame(child_name, FrameKind::Link, p.body, joint_in_body, doc.source);
      builder.add_frame(prefix + joint.name, FrameKind::FixedJoint, p.body, joint_in_body, doc.source);
      if (p.body > 0) builder.add_inertia(p.body, inertia.transformed(joint_in_body), child_name);
      push_children(*child, p.body, joint_in_body);
      continue;
    }
    const JointType type = joint_type_of(joint);
    double lower = 0, upper = 0, velocity = 0, effort = 0;
    if (joint.limits) {
      lower = joint.limits->lower, upper = joint.limits->upper;
      velocity = joint.limits->velocity, effort = joint.limits->effort;
    }
    if (type != JointType::Continuous && !joint.limits)
      throw Error(doc.source + ": joint '" + joint.name + "' (" + joint_type_name(type) + ") has no <limit>");
    const int body = builder.add_body(p.body, child_name, prefix + joint.name, type, joint_in_body,
                                      {joint.axis.x, joint.axis.y, joint.axis.z}, lower, upper, velocity, effort,
                                      doc.source);
    if (joint.mimic) builder.set_mimic(body, prefix + joint.mimic->joint_name);
    if (joint.dynamics) {  // <dynamics damping>: viscous joint damping (friction is not modelled)
      const double damping = joint.dynamics->damping;
      if (!std::isfinite(damping) || damping < 0)
        throw Error(doc.source + ": joint '" + joint.name + "': <dynamics damping> must be finite and >= 0, got " +
                    std::to_string(damping));
      builder.set_damping(body, 0, damping);
    }
    builder.add_inertia(body, inertia, child_name);
    push_children(*child, body, Transformd::identity());
  }
}

std::shared_ptr<const UrdfDocument> parse_document(const std::string& xml, const std::string& source, const std::string& directory) {
  TiXmlDocument xml_doc;
  xml_doc.Parse(xml.c_str());
  if (xml_doc.Error())
    throw Error(source + ": malformed XML at line " + std::to_string(xml_doc.ErrorRow()) + ", column " +
                std::to_string(xml_doc.ErrorCol()) + ": " + xml_doc.ErrorDesc());
  const TiXmlElement* robot = xml_doc.FirstChildElement("robot");
  if (!robot) throw Error(source + ": no <robot> element");
  check_structure(robot, source);

  auto doc = std::make_shared<UrdfDocument>();
  doc->source = source, doc->directory = directory;
  for (const TiXmlElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link"))
    doc->link_names.push_back(l->Attribute("name"));
  for (const TiXmlElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint"))
    doc->joint_names.push_back(j->Attribute("name"));
  doc->joint_names.push_back("root_joint");
  for (const TiXmlElement* l = robot->FirstChildElement("loop_joint"); l; l = l->NextSiblingElement("loop_joint"))
    doc->loop_joints.push_back(parse_loop_joint(l, source));

  CaptureHandler capture;
  {
    std::lock_guard<std::mutex> lock(urdfdom_mutex);
    console_bridge::useOutputHandler(&capture);
    doc->urdf = urdf::parseURDF(xml);
    console_bridge::restorePreviousOutputHandler();
  }
  if (!doc->urdf)
    throw Error(source + ": urdfdom rejected the file: " + (capture.messages.empty() ? "no details" : capture.messages));
  return doc;
}

}  // namespace

std::shared_ptr<const UrdfDocument> parse_urdf_string(const std::string& xml, const std::string& source) {
  return parse_document(xml, source, "");
}

std::shared_ptr<const UrdfDocument> parse_urdf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open URDF file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_document(buffer.str(), path, std::filesystem::path(path).parent_path().string());
}

const std::string& urdf_robot_name(const UrdfDocument& doc) { return doc.urdf->name_; }

const std::vector<std::string>& urdf_link_names(const UrdfDocument& doc) { return doc.link_names; }
const std::vector<std::string>& urdf_joint_names(const UrdfDocument& doc) { return doc.joint_names; }

std::vector<ConstraintSpec> append_urdf(ModelBuilder& builder, const UrdfDocument& doc, RootJoint root,
                                        const Transformd& placement, const std::string& prefix) {
  const urdf::LinkConstSharedPtr root_link = doc.urdf->getRoot();
  const RigidInertiad root_inertia = link_inertia(*root_link, doc.source);
  if (root == RootJoint::FreeFlyer) {
    const int body = builder.add_body(0, prefix + root_link->name, prefix + "root_joint", JointType::FreeFlyer,
                                      placement, Vec3d::zero(), 0, 0, 0, 0, doc.source);
    builder.add_inertia(body, root_inertia, prefix + root_link->name);
    append_subtree(builder, doc, prefix, *root_link, body, Transformd::identity());
  } else {
    // A root link called "world" is the world itself (a common URDF idiom).
    if (!(root_link->name == "world" && prefix.empty()))
      builder.add_frame(prefix + root_link->name, FrameKind::Link, 0, placement, doc.source);
    append_subtree(builder, doc, prefix, *root_link, 0, placement);
  }
  std::vector<ConstraintSpec> loops = doc.loop_joints;
  for (ConstraintSpec& c : loops) {
    c.name = prefix + c.name;
    if (c.link1 != "world") c.link1 = prefix + c.link1;
    if (c.link2 != "world") c.link2 = prefix + c.link2;
  }
  return loops;
}

namespace {
// The files a <mesh filename="..."> may name, in the order they are tried:
//   "package://<package>/<path>": <dir>/<package>/<path> for each folder <dir> of
//     ROS_PACKAGE_PATH, then for the URDF's folder and each of its ancestors (where a ROS
//     package's urdf/ sits next to its meshes/), and <dir>/<path> for such a folder named <package>;
//   "file://<path>" and any other path: as given, relative to the URDF's folder.
std::vector<std::filesystem::path> mesh_candidates(const std::string& filename, const std::string& directory) {
  namespace fs = std::filesystem;
  const fs::path base = directory.empty() ? fs::path(".") : fs::path(directory);
  const std::string package_scheme = "package://", file_scheme = "file://";
  if (filename.rfind(package_scheme, 0) != 0) {
    const fs::path path = filename.rfind(file_scheme, 0) == 0 ? fs::path(filename.substr(file_scheme.size())) : fs::path(filename);
    return {path.is_absolute() ? path : base / path};
  }
  const std::string rest = filename.substr(package_scheme.size());
  const size_t slash = rest.find('/');
  const std::string package = rest.substr(0, slash);
  const fs::path inside = slash == std::string::npos ? fs::path() : fs::path(rest.substr(slash + 1));
  std::vector<fs::path> candidates;
  if (const char* ros = std::getenv("ROS_PACKAGE_PATH")) {
    std::stringstream dirs(ros);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) candidates.push_back(fs::path(dir) / package / inside);
  }
  std::error_code ignored;
  fs::path dir = fs::absolute(base, ignored).lexically_normal();
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    candidates.push_back(dir / package / inside);
    if (dir.filename() == package) candidates.push_back(dir / inside);
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return candidates;
}

// A URDF <mesh> as the convex hull of its file's vertices, scaled (MuJoCo collides a mesh
// through its hull; decimate_hull keeps at most kHullVertexBudget of them, noted when it drops
// some). False, with the reason in model.contacts.skipped, where the file is not found or not
// STL, OBJ or COLLADA: the model loads without that geometry. A file that is found and
// malformed is an Error naming it.
bool mesh_hull(Model& model, const urdf::Mesh& mesh, const UrdfDocument& doc, CollisionGeometry& g) {
  namespace fs = std::filesystem;
  const std::vector<fs::path> candidates = mesh_candidates(mesh.filename, doc.directory);
  const auto found = std::find_if(candidates.begin(), candidates.end(), [](const fs::path& p) {
    std::error_code ignored;
    return fs::is_regular_file(p, ignored);
  });
  if (found == candidates.end()) {
    const std::string folder = doc.directory.empty() ? std::string("the working directory") : "'" + doc.directory + "'";
    const std::string where = mesh.filename.rfind("package://", 0) == 0
                                  ? "looked for it in ROS_PACKAGE_PATH, and in " + folder + " and its parent folders"
                                  : "no file " + candidates.front().string();
    model.contacts.skipped.push_back(g.name + ": mesh " + mesh.filename + " skipped: not found (" + where + ")");
    return false;
  }
  MeshFormat format;
  try {
    format = mesh_format_of(found->string());
  } catch (const Error& e) {  // a format not read
    model.contacts.skipped.push_back(g.name + ": mesh skipped: " + e.what());
    return false;
  }
  const std::string where = doc.source + ": collision geometry '" + g.name + "': ";
  std::vector<Vec3d> vertices;
  try {
    vertices = parse_mesh_vertices(detail::read_text_file(found->string(), "mesh file"), format, found->string());
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  const Vec3d scale{mesh.scale.x, mesh.scale.y, mesh.scale.z};
  if (!(std::isfinite(scale.x) && std::isfinite(scale.y) && std::isfinite(scale.z)))
    throw Error(where + "mesh " + mesh.filename + ": its scale is not finite");
  for (Vec3d& p : vertices) p = {p.x * scale.x, p.y * scale.y, p.z * scale.z};
  const std::string cut = set_convex_hull(g, vertices);
  if (!cut.empty()) model.load_notes.push_back(g.name + ": mesh " + found->filename().string() + ": " + cut);
  return true;
}
}  // namespace

void append_urdf_collisions(Model& model, const UrdfDocument& doc, const std::string& prefix) {
  for (const std::string& link_name : doc.link_names) {
    const urdf::LinkConstSharedPtr link = doc.urdf->getLink(link_name);
    if (!link) continue;
    int k = 0;
    for (const urdf::CollisionSharedPtr& collision : link->collision_array) {
      const std::string label = collision->name.empty() ? "collision" + std::to_string(k) : collision->name;
      ++k;
      if (!collision->geometry) continue;
      CollisionGeometry g;
      g.name = prefix + link_name + "/" + label;
      g.link = prefix + link_name;
      g.in_link = to_transform(collision->origin);
      switch (collision->geometry->type) {
        case urdf::Geometry::SPHERE:
          g.shape = CollisionShape::Sphere;
          g.radius = static_cast<const urdf::Sphere&>(*collision->geometry).radius;
          break;
        case urdf::Geometry::BOX: {
          const urdf::Vector3& size = static_cast<const urdf::Box&>(*collision->geometry).dim;
          g.shape = CollisionShape::Box;
          g.half_extents = Vec3d{size.x, size.y, size.z} * 0.5;
          break;
        }
        case urdf::Geometry::CYLINDER: {
          const auto& cylinder = static_cast<const urdf::Cylinder&>(*collision->geometry);
          g.shape = CollisionShape::Cylinder;
          g.radius = cylinder.radius, g.length = cylinder.length;
          break;
        }
        case urdf::Geometry::MESH:
          if (!mesh_hull(model, static_cast<const urdf::Mesh&>(*collision->geometry), doc, g)) continue;
          break;
        default:
          continue;
      }
      add_collision_geometry(model, std::move(g), doc.source);
    }
  }
}

namespace {
Model model_from_document(const UrdfDocument& doc, RootJoint root, const LoadOptions& options) {
  ModelBuilder builder(urdf_robot_name(doc));
  builder.set_triangle_inequality(triangle_inequality_policy(options));
  const std::vector<ConstraintSpec> loops = append_urdf(builder, doc, root, Transformd::identity(), "");
  Model model = builder.finish();
  for (const ConstraintSpec& c : loops) add_constraint(model, c, doc.source + ": <loop_joint>");
  append_urdf_collisions(model, doc, "");
  set_default_ground(model);
  return model;
}
}  // namespace

Model load_urdf_file(const std::string& path, RootJoint root, const LoadOptions& options) {
  return model_from_document(*parse_urdf_file(path), root, options);
}

Model load_urdf_string(const std::string& xml, RootJoint root, const std::string& source, const LoadOptions& options) {
  return model_from_document(*parse_urdf_string(xml, source), root, options);
}

RootJoint parse_root_joint(const std::string& text) {
  if (text == "fixed") return RootJoint::Fixed;
  if (text == "free" || text == "free_flyer" || text == "freeflyer") return RootJoint::FreeFlyer;
  throw Error("root joint '" + text + "' is neither 'fixed' nor 'free'");
}

ModelBuilder::TriangleInequality triangle_inequality_policy(const LoadOptions& options) {
  if (options.balance_inertia && options.strict_inertia)
    throw Error("load options: balance_inertia (repair) and strict_inertia (refuse) exclude each other; choose one");
  if (options.balance_inertia) return ModelBuilder::TriangleInequality::Repair;
  if (options.strict_inertia) return ModelBuilder::TriangleInequality::Refuse;
  return ModelBuilder::TriangleInequality::Warn;
}

}  // namespace batchdyn
