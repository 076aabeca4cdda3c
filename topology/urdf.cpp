#include "topology/urdf.hpp"

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>

#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace batchdyn {

struct UrdfDocument {
  std::string source;  // file path or "<urdf string>"
  urdf::ModelInterfaceSharedPtr urdf;
  std::vector<ConstraintSpec> loop_joints;
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

Vec3d parse_vec3(const char* text, const std::string& where) {
  if (!text) return Vec3d::zero();
  std::istringstream in(text);
  Vec3d v;
  if (!(in >> v.x >> v.y >> v.z) || !std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z))
    throw Error(where + ": expected three finite numbers, got '" + std::string(text) + "'");
  return v;
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

// Structural checks urdfdom either misses or reports vaguely; every message names the file
// and the element.
void check_structure(const TiXmlElement* robot, const std::string& source) {
  std::map<std::string, const TiXmlElement*> links;
  for (const TiXmlElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    const std::string name = required_attribute(l, "name", source);
    if (!links.emplace(name, l).second)
      throw Error(source + ": duplicate link name '" + name + "' at " + line_of(l));
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
  // Every link must reach the root by following parents; one that does not is on a cycle.
  for (const auto& [name, element] : links) {
    std::string at = name;
    for (size_t steps = 0; parent_of.count(at); ++steps) {
      if (steps > links.size()) throw Error(source + ": the joints form a cycle through link '" + name + "' (joint '" + joint_of[name] + "')");
      at = parent_of[at];
    }
  }
  if (roots.empty()) throw Error(source + ": no root link: the joints form a cycle");
}

Transformd to_transform(const urdf::Pose& pose) {
  double x, y, z, w;
  pose.rotation.getQuaternion(x, y, z, w);
  return {quaternion_rotation(x, y, z, w), {pose.position.x, pose.position.y, pose.position.z}};
}

RigidInertiad link_inertia(const urdf::Link& link) {
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
  r.inertia_com = T.rotation * I * T.rotation.transpose();
  return r;
}

// Non-positive mass on any link with an <inertial> is wrong even if the link ends up merged.
void check_link_inertia(const urdf::Link& link, const std::string& source) {
  if (!link.inertial) return;
  const double m = link.inertial->mass;
  if (!std::isfinite(m) || m < 0.0)
    throw Error(source + ": link '" + link.name + "' has negative or non-finite mass " + std::to_string(m));
}

struct AppendContext {
  ModelBuilder& builder;
  const UrdfDocument& doc;
  const std::string& prefix;
};

void append_children(AppendContext& ctx, const urdf::Link& link, int body, const Transformd& link_in_body) {
  for (const urdf::JointSharedPtr& joint : link.child_joints) {
    const urdf::LinkConstSharedPtr child = ctx.doc.urdf->getLink(joint->child_link_name);
    check_link_inertia(*child, ctx.doc.source);
    const Transformd joint_in_body = link_in_body * to_transform(joint->parent_to_joint_origin_transform);
    const std::string child_name = ctx.prefix + child->name;
    if (joint->type == urdf::Joint::FIXED) {
      ctx.builder.add_frame(child_name, body, joint_in_body, ctx.doc.source);
      if (body > 0) ctx.builder.add_inertia(body, link_inertia(*child).transformed(joint_in_body));
      append_children(ctx, *child, body, joint_in_body);
      continue;
    }
    JointType type = JointType::Revolute;
    if (joint->type == urdf::Joint::CONTINUOUS) type = JointType::Continuous;
    else if (joint->type == urdf::Joint::PRISMATIC) type = JointType::Prismatic;
    double lower = 0, upper = 0, velocity = 0, effort = 0;
    if (joint->limits) {
      lower = joint->limits->lower; upper = joint->limits->upper;
      velocity = joint->limits->velocity; effort = joint->limits->effort;
    }
    if (type != JointType::Continuous && !joint->limits)
      throw Error(ctx.doc.source + ": joint '" + joint->name + "' (" + joint_type_name(type) + ") has no <limit>");
    const std::string where = ctx.doc.source;
    const int child_body = ctx.builder.add_body(body, child_name, ctx.prefix + joint->name, type, joint_in_body,
                                                {joint->axis.x, joint->axis.y, joint->axis.z}, lower, upper,
                                                velocity, effort, where);
    ctx.builder.add_inertia(child_body, link_inertia(*child));
    append_children(ctx, *child, child_body, Transformd::identity());
  }
}

std::shared_ptr<const UrdfDocument> parse_document(const std::string& xml, const std::string& source) {
  TiXmlDocument xml_doc;
  xml_doc.Parse(xml.c_str());
  if (xml_doc.Error())
    throw Error(source + ": malformed XML at line " + std::to_string(xml_doc.ErrorRow()) + ", column " +
                std::to_string(xml_doc.ErrorCol()) + ": " + xml_doc.ErrorDesc());
  const TiXmlElement* robot = xml_doc.FirstChildElement("robot");
  if (!robot) throw Error(source + ": no <robot> element");
  check_structure(robot, source);

  auto doc = std::make_shared<UrdfDocument>();
  doc->source = source;
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
  return parse_document(xml, source);
}

std::shared_ptr<const UrdfDocument> parse_urdf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open URDF file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_document(buffer.str(), path);
}

const std::string& urdf_robot_name(const UrdfDocument& doc) { return doc.urdf->name_; }

std::vector<std::string> urdf_names(const UrdfDocument& doc) {
  std::vector<std::string> names;
  for (const auto& [n, l] : doc.urdf->links_) names.push_back(n);
  for (const auto& [n, j] : doc.urdf->joints_) names.push_back(n);
  for (const auto& c : doc.loop_joints) names.push_back(c.name);
  names.push_back("root_joint");
  return names;
}

std::vector<ConstraintSpec> append_urdf(ModelBuilder& builder, const UrdfDocument& doc, RootJoint root,
                                        const Transformd& placement, const std::string& prefix) {
  const urdf::LinkConstSharedPtr root_link = doc.urdf->getRoot();
  check_link_inertia(*root_link, doc.source);
  AppendContext ctx{builder, doc, prefix};
  if (root == RootJoint::FreeFlyer) {
    const int body = builder.add_body(0, prefix + root_link->name, prefix + "root_joint", JointType::FreeFlyer,
                                      placement, Vec3d::zero(), 0, 0, 0, 0, doc.source);
    builder.add_inertia(body, link_inertia(*root_link));
    append_children(ctx, *root_link, body, Transformd::identity());
  } else {
    // A root link called "world" is the world itself (a common URDF idiom).
    if (!(root_link->name == "world" && prefix.empty()))
      builder.add_frame(prefix + root_link->name, 0, placement, doc.source);
    append_children(ctx, *root_link, 0, placement);
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
Model model_from_document(const UrdfDocument& doc, RootJoint root) {
  ModelBuilder builder(urdf_robot_name(doc));
  const std::vector<ConstraintSpec> loops = append_urdf(builder, doc, root, Transformd::identity(), "");
  Model model = builder.finish();
  for (const ConstraintSpec& c : loops) add_constraint(model, c, doc.source + ": <loop_joint>");
  return model;
}
}  // namespace

Model load_urdf_file(const std::string& path, RootJoint root) { return model_from_document(*parse_urdf_file(path), root); }

Model load_urdf_string(const std::string& xml, RootJoint root, const std::string& source) {
  return model_from_document(*parse_urdf_string(xml, source), root);
}

RootJoint parse_root_joint(const std::string& text) {
  if (text == "fixed") return RootJoint::Fixed;
  if (text == "free" || text == "free_flyer" || text == "freeflyer") return RootJoint::FreeFlyer;
  throw Error("root joint '" + text + "' is neither 'fixed' nor 'free'");
}

}  // namespace batchdyn
