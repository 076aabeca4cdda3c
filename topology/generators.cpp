#include "topology/generators.hpp"

#include <cmath>
#include <sstream>

#include "topology/constraints_io.hpp"
#include "topology/urdf.hpp"

namespace batchdyn {

namespace {

// Writes URDF text: links are solid aluminium-like bars of length `length` along x.
class UrdfWriter {
 public:
  explicit UrdfWriter(const std::string& name) { xml_ << "<?xml version=\"1.0\"?>\n<robot name=\"" << name << "\">\n"; }

  void base(const std::string& name) {
    xml_ << "  <link name=\"" << name << "\"/>\n";
  }
  // A bar link of mass m and length l along +x from its frame origin.
  void bar(const std::string& name, double length, double mass) {
    const double r = 0.02;
    const double ixx = 0.5 * mass * r * r;
    const double iyy = mass * (3 * r * r + length * length) / 12.0;
    xml_ << "  <link name=\"" << name << "\"><inertial><origin xyz=\"" << length / 2 << " 0 0\"/><mass value=\"" << mass
         << "\"/><inertia ixx=\"" << ixx << "\" ixy=\"0\" ixz=\"0\" iyy=\"" << iyy << "\" iyz=\"0\" izz=\"" << iyy
         << "\"/></inertial></link>\n";
  }
  void revolute(const std::string& name, const std::string& parent, const std::string& child, double x, double y,
                double yaw, const char* axis) {
    xml_ << "  <joint name=\"" << name << "\" type=\"revolute\"><parent link=\"" << parent << "\"/><child link=\""
         << child << "\"/><origin xyz=\"" << x << " " << y << " 0\" rpy=\"0 0 " << yaw << "\"/><axis xyz=\"" << axis
         << "\"/><limit lower=\"-3.14\" upper=\"3.14\" effort=\"100\" velocity=\"10\"/></joint>\n";
  }
  std::string finish() { return xml_.str() + "</robot>\n"; }

 private:
  std::ostringstream xml_;
};

class ConstraintWriter {
 public:
  void add(const std::string& name, const char* type, const std::string& link1, const std::string& link2,
           double x1 = 0, double y1 = 0) {
    if (!items_.empty()) items_ += ",\n";
    items_ += "    {\"name\": \"" + name + "\", \"type\": \"" + type + "\", \"link1\": \"" + link1 + "\", \"link2\": \"" +
              link2 + "\", \"placement1\": {\"xyz\": [" + std::to_string(x1) + ", " + std::to_string(y1) +
              ", 0]}, \"placement2\": \"hold\"}";
  }
  std::string finish() const { return "{\n  \"reference_q\": \"neutral\",\n  \"constraints\": [\n" + items_ + "\n  ]\n}\n"; }

 private:
  std::string items_;
};

const char* axis_cycle(int i) {
  static const char* axes[] = {"0 0 1", "0 1 0", "1 0 0"};
  return axes[i % 3];
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("model generator: " + what);
}

constexpr double kLength = 0.2, kMass = 0.5;

}  // namespace

GeneratedModel generate_chain(int n) {
  require(n >= 1, "chain needs n >= 1");
  UrdfWriter w("chain" + std::to_string(n));
  w.base("base");
  std::string parent = "base";
  for (int i = 1; i <= n; ++i) {
    const std::string link = "link" + std::to_string(i);
    w.bar(link, kLength, kMass);
    w.revolute("joint" + std::to_string(i), parent, link, i == 1 ? 0.0 : kLength, 0, 0, axis_cycle(i - 1));
    parent = link;
  }
  return {"chain" + std::to_string(n), w.finish(), "{\"constraints\": []}\n"};
}

GeneratedModel generate_cycle(int n) {
  require(n >= 3, "cycle needs n >= 3");
  UrdfWriter w("cycle" + std::to_string(n));
  ConstraintWriter c;
  w.base("base");
  const double turn = 2 * M_PI / n;
  std::string parent = "base";
  for (int i = 1; i <= n; ++i) {
    const std::string link = "link" + std::to_string(i);
    w.bar(link, kLength, kMass);
    // Polygon in the xy plane at q = 0; axes alternate so the closed loop keeps mobility.
    w.revolute("joint" + std::to_string(i), parent, link, i == 1 ? 0.0 : kLength, 0, i == 1 ? 0.0 : turn,
               i % 2 ? "0 0 1" : "1 0 0");
    parent = link;
  }
  c.add("cycle_weld", "weld", "link" + std::to_string(n), "link1", kLength, 0);
  return {"cycle" + std::to_string(n), w.finish(), c.finish()};
}

GeneratedModel generate_loop_chain(int loops, int links_per_loop) {
  require(loops >= 1 && links_per_loop >= 2, "loop_chain needs loops >= 1 and links_per_loop >= 2");
  const std::string name = "loop_chain" + std::to_string(loops) + "x" + std::to_string(links_per_loop);
  UrdfWriter w(name);
  ConstraintWriter c;
  w.base("base");
  std::string node = "base";
  double node_x = 0;
  int joint = 0;
  for (int l = 1; l <= loops; ++l) {
    const int left = links_per_loop / 2 + links_per_loop % 2, right = links_per_loop / 2;
    std::string tips[2];
    for (int side = 0; side < 2; ++side) {
      std::string parent = node;
      const int count = side == 0 ? left : right;
      for (int k = 1; k <= count; ++k) {
        const std::string link = "loop" + std::to_string(l) + (side ? "b" : "a") + std::to_string(k);
        w.bar(link, kLength, kMass);
        const bool first = k == 1;
        w.revolute("j" + std::to_string(++joint) + "_" + link, parent, link, first ? node_x : kLength,
                   first ? (side ? -0.05 : 0.05) : 0.0, 0, "0 0 1");
        parent = link;
      }
      tips[side] = parent;
    }
    // Tip of branch b reaches the same x as the tip of branch a when lengths differ: close the
    // loop with a connect at the tip of a, held at q = 0.
    c.add("loop" + std::to_string(l) + "_close", "connect", tips[0], tips[1], kLength, 0);
    node = tips[0];
    node_x = kLength;
  }
  return {name, w.finish(), c.finish()};
}

GeneratedModel generate_stem_with_branches(int stem, int branches, int branch_length) {
  require(stem >= 1 && branches >= 0 && branch_length >= 1 && branches <= stem, "stem needs 1 <= branches <= stem, branch_length >= 1");
  const std::string name = "stem" + std::to_string(stem) + "_" + std::to_string(branches) + "x" + std::to_string(branch_length);
  UrdfWriter w(name);
  ConstraintWriter c;
  w.base("base");
  std::string parent = "base";
  int joint = 0;
  for (int i = 1; i <= stem; ++i) {
    const std::string link = "stem" + std::to_string(i);
    w.bar(link, kLength, kMass);
    w.revolute("j" + std::to_string(++joint) + "_" + link, parent, link, i == 1 ? 0.0 : kLength, 0, 0, axis_cycle(i - 1));
    parent = link;
  }
  // Branches from evenly spaced stem links, alternately to the left and right.
  for (int b = 1; b <= branches; ++b) {
    const int at = std::max(1, b * stem / branches);
    std::string bparent = "stem" + std::to_string(at);
    const double side = b % 2 ? 1.0 : -1.0;
    for (int k = 1; k <= branch_length; ++k) {
      const std::string link = "branch" + std::to_string(b) + "_" + std::to_string(k);
      w.bar(link, kLength, kMass);
      w.revolute("j" + std::to_string(++joint) + "_" + link, bparent, link, k == 1 ? kLength / 2 : kLength, 0,
                 k == 1 ? side * M_PI / 2 : 0.0, axis_cycle(k));
      bparent = link;
    }
    c.add("branch" + std::to_string(b) + "_contact", "connect", bparent, "world", kLength, 0);
  }
  return {name, w.finish(), c.finish()};
}

GeneratedModel generate_welded_stem(int stem, int branches_per_end) {
  require(stem >= 1 && branches_per_end >= 1, "welded_stem needs stem >= 1 and branches >= 1");
  const std::string name = "welded_stem" + std::to_string(stem) + "_" + std::to_string(branches_per_end);
  UrdfWriter w(name);
  ConstraintWriter c;
  w.bar("stem1", kLength, kMass);  // the floating base
  std::string parent = "stem1";
  for (int i = 2; i <= stem; ++i) {
    const std::string link = "stem" + std::to_string(i);
    w.bar(link, kLength, kMass);
    w.revolute("j_" + link, parent, link, kLength, 0, 0, axis_cycle(i - 1));
    parent = link;
  }
  // branches_per_end two-link branches at each end of the stem, fanned out; tips welded.
  int branch = 0;
  for (int end = 0; end < 2; ++end) {
    const std::string at = end == 0 ? "stem1" : "stem" + std::to_string(stem);
    for (int b = 0; b < branches_per_end; ++b) {
      const double yaw = (end == 0 ? M_PI : 0.0) + (b + 1) * M_PI / (branches_per_end + 1) - M_PI / 2;
      std::string bparent = at;
      ++branch;
      for (int k = 1; k <= 2; ++k) {
        const std::string link = "branch" + std::to_string(branch) + "_" + std::to_string(k);
        w.bar(link, kLength, kMass);
        w.revolute("j_" + link, bparent, link, k == 1 ? (end == 0 ? 0.0 : kLength) : kLength, 0, k == 1 ? yaw : 0.0,
                   axis_cycle(k + b));
        bparent = link;
      }
      c.add("branch" + std::to_string(branch) + "_weld", "weld", bparent, "world", kLength, 0);
    }
  }
  return {name, w.finish(), c.finish(), RootJoint::FreeFlyer};
}

GeneratedModel generate_branching_node(int branches, int branch_length) {
  require(branches >= 2 && branch_length >= 1, "branching needs branches >= 2 and branch_length >= 1");
  const std::string name = "branching" + std::to_string(branches) + "x" + std::to_string(branch_length);
  UrdfWriter w(name);
  ConstraintWriter c;
  w.base("base");
  w.bar("node", kLength, kMass);
  w.revolute("j0_node", "base", "node", 0, 0, 0, "0 0 1");
  int joint = 0;
  std::vector<std::string> tips;
  for (int b = 1; b <= branches; ++b) {
    std::string parent = "node";
    for (int k = 1; k <= branch_length; ++k) {
      const std::string link = "branch" + std::to_string(b) + "_" + std::to_string(k);
      w.bar(link, kLength, kMass);
      w.revolute("j" + std::to_string(++joint) + "_" + link, parent, link, kLength, 0,
                 k == 1 ? 2 * M_PI * (b - 1) / branches : 0.0, axis_cycle(k + b));
      parent = link;
    }
    tips.push_back(parent);
  }
  for (int b = 0; b + 1 < branches; ++b)
    c.add("tips" + std::to_string(b + 1) + "_" + std::to_string(b + 2), "weld", tips[b], tips[b + 1], kLength, 0);
  return {name, w.finish(), c.finish()};
}

GeneratedModel generate_ladder(int rungs) {
  require(rungs >= 1, "ladder needs rungs >= 1");
  const std::string name = "ladder" + std::to_string(rungs);
  UrdfWriter w(name);
  ConstraintWriter c;
  w.base("base");
  int joint = 0;
  for (int side = 0; side < 2; ++side) {
    std::string parent = "base";
    for (int k = 1; k <= rungs; ++k) {
      const std::string link = std::string(side ? "right" : "left") + std::to_string(k);
      w.bar(link, kLength, kMass);
      w.revolute("j" + std::to_string(++joint) + "_" + link, parent, link, k == 1 ? 0.0 : kLength,
                 k == 1 ? (side ? -0.15 : 0.15) : 0.0, 0, "0 0 1");
      parent = link;
    }
  }
  for (int k = 1; k <= rungs; ++k)
    c.add("rung" + std::to_string(k), "connect", "left" + std::to_string(k), "right" + std::to_string(k), kLength, 0);
  return {name, w.finish(), c.finish()};
}

GeneratedModel generate_from_spec(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream in(spec);
  for (std::string p; std::getline(in, p, ':');) parts.push_back(p);
  auto arg = [&](size_t k) {
    if (k >= parts.size()) throw Error("model generator '" + spec + "': missing argument " + std::to_string(k));
    try {
      size_t used = 0;
      const int v = std::stoi(parts[k], &used);
      if (used != parts[k].size()) throw std::invalid_argument("trailing");
      return v;
    } catch (const std::exception&) {
      throw Error("model generator '" + spec + "': argument '" + parts[k] + "' is not an integer");
    }
  };
  const std::string kind = parts.empty() ? "" : parts[0];
  if (kind == "chain") return generate_chain(arg(1));
  if (kind == "cycle") return generate_cycle(arg(1));
  if (kind == "loop_chain") return generate_loop_chain(arg(1), arg(2));
  if (kind == "stem") return generate_stem_with_branches(arg(1), arg(2), arg(3));
  if (kind == "branching") return generate_branching_node(arg(1), arg(2));
  if (kind == "ladder") return generate_ladder(arg(1));
  if (kind == "welded_stem") return generate_welded_stem(arg(1), arg(2));
  throw Error("unknown model generator '" + spec +
              "' (chain:N, cycle:N, loop_chain:L:K, stem:S:B:K, branching:B:K, ladder:N, welded_stem:S:B)");
}

Model build_generated(const GeneratedModel& generated) {
  Model model = load_urdf_string(generated.urdf, generated.root, "generated " + generated.name);
  add_constraints_from_json(model, generated.constraints_json, "generated " + generated.name + " constraints");
  return model;
}

}  // namespace batchdyn
