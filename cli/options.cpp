#include "cli/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "topology/generators.hpp"
#include "topology/constraints_io.hpp"
#include "topology/contacts.hpp"
#include "topology/mjcf.hpp"
#include "topology/reduced_model.hpp"
#include "topology/scene.hpp"
#include "topology/sdf.hpp"
#include "topology/urdf.hpp"

namespace batchdyn::cli {

bool Options::has_flag(const std::string& f) const { return std::find(flags.begin(), flags.end(), f) != flags.end(); }

std::optional<std::string> Options::get(const std::string& k) const {
  auto it = values.find(k);
  return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
}

Options parse_options(const std::vector<std::string>& args, const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      o.positional.push_back(a);
    } else if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
      o.flags.push_back(a);
    } else if (std::find(with_value.begin(), with_value.end(), a) != with_value.end()) {
      if (i + 1 >= args.size()) throw Error("option " + a + " needs a value");
      o.values[a] = args[++i];
    } else {
      throw Error("unknown option '" + a + "'");
    }
  }
  return o;
}

namespace {
// `text` parsed whole by std::from_chars (no leading '+', spaces, hex or trailing characters).
template <class Number>
bool parse_whole(const std::string& text, Number& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end && !text.empty();
}

template <class Number>
[[noreturn]] void refuse(const std::string& name, const std::string& expected, Number lo, Number hi, bool lo_exclusive,
                         const std::string& given) {
  std::ostringstream text;
  text << name << " expects " << expected << " in " << (lo_exclusive ? "(" : "[") << lo << ", " << hi << "], got '" << given << "'";
  throw Error(text.str());
}
}  // namespace

int integer_option(const Options& o, const std::string& name, int default_value, int lo, int hi) {
  const auto text = o.get(name);
  if (!text) return default_value;
  long long value = 0;
  if (!parse_whole(*text, value) || value < lo || value > hi) refuse(name, "an integer", lo, hi, false, *text);
  return static_cast<int>(value);
}

double number_option(const Options& o, const std::string& name, double default_value, double lo, double hi, bool lo_exclusive) {
  const auto text = o.get(name);
  if (!text) return default_value;
  double value = 0;
  if (!parse_whole(*text, value) || !std::isfinite(value) || value > hi || value < lo || (lo_exclusive && value == lo))
    refuse(name, "a number", lo, hi, lo_exclusive, *text);
  return value;
}

std::vector<std::string> with_model_options(std::vector<std::string> extra, const std::vector<std::string>& model_ones) {
  extra.insert(extra.end(), model_ones.begin(), model_ones.end());
  return extra;
}

Model load_model(const Options& o, const std::string& default_model) {
  std::string spec;
  std::string root_text = o.get("--root").value_or("fixed");
  if (o.positional.empty() && !default_model.empty()) {
    spec = default_model;
    root_text = o.get("--root").value_or("free");
  } else if (o.positional.size() == 1) {
    spec = o.positional[0];
  } else {
    throw Error("expected exactly one MODEL argument");
  }
  const RootJoint root = parse_root_joint(root_text);
  LoadOptions options;
  options.balance_inertia = o.has_flag("--balance-inertia");
  options.strict_inertia = o.has_flag("--strict-inertia");
  options.self_collision = o.has_flag("--self-collision");
  Model model;
  if (spec.rfind("gen:", 0) == 0) {
    if (o.get("--root")) throw Error("generated models choose their own root; drop --root");
    model = build_generated(generate_from_spec(spec.substr(4)));
  } else if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json") {
    if (o.get("--root")) throw Error("a scene file sets each robot's root; drop --root");
    model = load_scene_file(spec, options);
  } else if (is_mjcf_file(spec)) {
    if (o.get("--root")) throw Error("an MJCF file sets its own root (a <freejoint> on the base); drop --root");
    model = load_mjcf_file(spec, options);
  } else if (is_sdf_file(spec)) {
    model = load_sdf_file(spec, root, parse_loop_closure(o.get("--closure").value_or("duplicate")), options);
  } else {
    model = load_urdf_file(spec, root, options);
  }
  if (o.get("--closure") && !is_sdf_file(spec))
    throw Error("--closure applies to SDF files (links with several parent joints); drop it");
  // Locks first (they rebuild the model), then armature, then constraints.
  if (auto locks = o.get("--lock-joints")) model = lock_joints(model, parse_joint_locks(*locks));
  if (auto armature = o.get("--armature")) apply_armature_spec(model, *armature);
  if (auto file = o.get("--constraints")) add_constraints_from_json_file(model, *file);
  if (auto file = o.get("--contacts")) add_contacts_from_json_file(model, *file);
  return model;
}

bool on_off_option(const Options& o, const std::string& name, bool default_value) {
  const auto value = o.get(name);
  if (!value) return default_value;
  if (*value == "on") return true;
  if (*value == "off") return false;
  throw Error(name + " must be on or off (got '" + *value + "')");
}

bool passive_forces_option(const Options& o, bool default_value) { return on_off_option(o, "--passive-forces", default_value); }

}  // namespace batchdyn::cli
