#include "cli/commands.hpp"
#include "cli/options.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "batch/batch.hpp"
#include "batch/batched_eval.hpp"
#include "batch/reference_eval.hpp"
#include "topology/generators.hpp"
#include "topology/constraints_io.hpp"
#include "topology/contact_plan.hpp"
#include "topology/contacts.hpp"
#include "topology/delassus_plan.hpp"
#include "topology/loops.hpp"
#include "topology/proxbbo_plan.hpp"
#include "topology/model_info.hpp"
#include "topology/scene.hpp"
#include "topology/sdf.hpp"
#include "topology/urdf.hpp"

namespace batchdyn::cli {

using nlohmann::json;

int usage(std::ostream& out) {
  out << "usage:\n"
         "  batchdyn info MODEL [MODEL OPTIONS] [--json]\n"
         "  batchdyn eval MODEL [MODEL OPTIONS] --algo aba|constrained|lcaba|proxbbo|delassus|pv-osimr|pv-osim\n"
         "                --in STATES.json [--out RESULT.json] [--batched] [--mu MU] [--max-iterations N] [--tolerance EPS]\n"
         "                [--passive-forces on|off]\n"
         "  batchdyn bench [MODEL] [MODEL OPTIONS] [--algo aba|lcaba|proxbbo|constrained|pv-osimr|pv-osim|delassus] [--envs N]\n"
         "                 [--threads T] [--precision float|double] [--seconds S] [--step] [--dt DT] [--substeps K] [--pd]\n"
         "                 [--randomize] [--iterations K] [--scalar] [--passive-forces on|off] [--contact-solver admm|pgs]\n"
         "                 [--admm-linear-solve cholesky|pv-soft] [--admm-polish on|off] [--joint-limits on|off]\n"
         "                 [--integrator euler|rk4] [--json]\n"
         "MODEL OPTIONS: --root fixed|free, --constraints FILE (JSON: constraints, lock_joints, armature),\n"
         "  --contacts FILE (JSON: ground plane, collision geometry on links, friction, margin, stiffness, damping; a URDF's <collision>\n"
         "  spheres, boxes and cylinders load by default, and a free-root model gets a ground plane at z = 0),\n"
         "  --closure duplicate|cut (SDF loops: Pinocchio's duplicate link + weld, default, or cut joints),\n"
         "  --lock-joints NAME[=POS],... (fix joints: a reduced model), --armature VALUE | NAME=VALUE,... (rotor inertia),\n"
         "  --balance-inertia (repair rotational inertias that violate the triangle inequality; by default they load with a\n"
         "  warning that info prints), --strict-inertia (refuse them instead), --self-collision (MJCF: the robot's geoms collide\n"
         "  with each other as in MuJoCo; off by default, counted by info).\n"
         "eval computes the dynamics as Pinocchio defines it: tau is the whole joint torque (no effort limit clamps it), a file's\n"
         "joint damping, friction loss and springs are not applied (--passive-forces on applies them), and the loop solvers iterate to a relative\n"
         "tolerance of 1e-13 (at most 5000 iterations). bench times the simulator's calls, damping on (--passive-forces off).\n"
         "MODEL is a URDF file, an SDF file (*.sdf), a scene file (*.json) or a generator: gen:chain:N, gen:cycle:N, gen:loop_chain:L:K, gen:stem:S:B:K,\n"
         "gen:branching:B:K, gen:ladder:N, gen:welded_stem:S:B. STATES.json: {\"q\": [[...], ...], \"v\": [[...]], \"tau\": [[...]]}\n"
         "(one row per environment; pv-osimr, pv-osim and delassus read q only). --batched evaluates with the SIMD batch\n"
         "engine (all but delassus). eval's default --mu is 10 for lcaba (accuracy), 1e6 for constrained and proxbbo; bench's\n"
         "lcaba 1e4. bench --algo aba times\n"
         "the tree alone (constraints ignored); lcaba, proxbbo and constrained solve with them. bench without MODEL uses\n"
         "the shipped humanoid (free-flyer root); --scalar runs the W = 1 lanes for comparison; bench --algo delassus times\n"
         "the dense J M^-1 J^T (CRBA + Cholesky). bench --step --contact-solver pgs solves contacts by projected Gauss-Seidel\n"
         "(the baseline) instead of ADMM; --admm-linear-solve pv-soft does ADMM's linear solves on the tree (PV-soft, O(n + m))\n"
         "instead of a Cholesky factor of the formed Delassus matrix (ground contacts and joint limits only); --admm-polish off\n"
         "turns off ADMM's polishing (solving the rows its iterate shows acting exactly; on by default); --joint-limits off\n"
         "steps without the joints' position limits (on by default).\n"
         "Exit code: 0 ok, 1 usage or model error, 2 some environment failed.\n";
  return 1;
}

namespace {

std::string body_name(const Model& m, int body) { return m.bodies[body].name; }

// ", stiffness k N/m, damping d N s/m" for a compliant contact, nothing for a rigid one.
std::string compliance_text(double stiffness, double damping) {
  if (stiffness == 0.0) return "";
  std::ostringstream text;
  text << ", stiffness " << stiffness << " N/m, damping " << damping << " N s/m";
  return text.str();
}

std::vector<int> mimic_joints(const Model& model) {
  std::vector<int> joints;
  for (int i = 1; i < model.num_bodies(); ++i)
    if (!model.bodies[i].mimic.empty()) joints.push_back(i);
  return joints;
}

void print_model_text(const Model& model, std::ostream& out) {
  const LoopAnalysis loops = analyze_loops(model);
  int links = 0;
  for (const Frame& f : model.frames) links += f.kind == FrameKind::Link;
  out << "model " << model.name << ": nq = " << model.nq << ", nv = " << model.nv << ", bodies = "
      << model.num_bodies() - 1 << ", links = " << links << ", frames = " << model.frames.size()
      << ", tree depth = " << loops.tree_depth << ", constraint rows = " << model.constraint_rows
      << "\n\njoints (depth-first order):\n";
  out << "  " << std::left << std::setw(28) << "joint" << std::setw(12) << "type" << std::setw(7) << "idx_q"
      << std::setw(7) << "idx_v" << std::setw(30) << "body" << "parent\n";
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    out << "  " << std::setw(28) << b.joint_name << std::setw(12) << joint_type_name(b.joint_type) << std::setw(7)
        << b.idx_q << std::setw(7) << b.idx_v << std::setw(30) << b.name << body_name(model, b.parent);
    if (model.armature[static_cast<size_t>(b.idx_v)] > 0) out << "  armature " << model.armature[static_cast<size_t>(b.idx_v)];
    if (model.damping[static_cast<size_t>(b.idx_v)] > 0) out << "  damping " << model.damping[static_cast<size_t>(b.idx_v)];
    if (model.friction_loss[static_cast<size_t>(b.idx_v)] > 0) out << "  frictionloss " << model.friction_loss[static_cast<size_t>(b.idx_v)];
    if (model.spring_stiffness[static_cast<size_t>(b.idx_v)] > 0)
      out << "  spring " << model.spring_stiffness[static_cast<size_t>(b.idx_v)] << " at " << model.spring_reference[static_cast<size_t>(b.idx_v)];
    out << "\n";
  }
  if (model.timestep > 0) out << "\ntime step (from the file): " << model.timestep << " s\n";
  if (!model.actuators.empty()) {
    out << "\nactuators (" << model.actuators.size() << "; ctrl is the action):\n";
    for (const Actuator& a : model.actuators) {
      out << "  " << std::setw(28) << a.name << std::setw(10) << actuator_kind_name(a.kind) << "joint " << a.joint;
      if (a.gear != 1) out << "  gear " << a.gear;
      if (a.kind == ActuatorKind::Position) out << "  kp " << a.gain << "  kv " << -a.bias[2];
      if (a.kind == ActuatorKind::Velocity) out << "  kv " << a.gain;
      if (std::isfinite(a.ctrl_lower) || std::isfinite(a.ctrl_upper)) out << "  ctrl [" << a.ctrl_lower << ", " << a.ctrl_upper << "]";
      if (std::isfinite(a.force_lower) || std::isfinite(a.force_upper)) out << "  force [" << a.force_lower << ", " << a.force_upper << "]";
      out << "\n";
    }
  }
  if (!model.sensors.empty()) {
    out << "\nsensors (" << model.sensors.size() << ", " << sensordata_size(model.sensors) << " values; Batch::sense):\n";
    for (const Sensor& s : model.sensors)
      out << "  " << std::setw(28) << s.name << "  " << std::setw(16) << sensor_kind_name(s.kind) << "  " << s.object
          << (s.cutoff > 0 ? "  cutoff " + std::to_string(s.cutoff) : "") << "\n";
  }
  if (!model.keyframes.empty()) {
    out << "\nkeyframes (reset states):";
    for (const Keyframe& k : model.keyframes) out << " " << k.name;
    out << "\n";
  }
  int sites = 0;
  for (const Frame& f : model.frames) sites += f.kind == FrameKind::Site;
  if (sites > 0) {
    out << "\nsites (" << sites << "):";
    for (const Frame& f : model.frames)
      if (f.kind == FrameKind::Site) out << " " << f.name;
    out << "\n";
  }
  if (!model.load_notes.empty()) {
    out << "\nleft out when loading (" << model.load_notes.size() << "):\n";
    for (const std::string& note : model.load_notes) out << "  " << note << "\n";
  }
  if (!model.inertia_warnings.empty()) {
    out << "\ninertia warnings (" << model.inertia_warnings.size() << "):\n";
    for (const std::string& w : model.inertia_warnings) out << "  " << w << "\n";
  }
  const std::vector<int> singular_joints = find_singular_joints(model);
  if (!singular_joints.empty()) {
    out << "\nsingular joints (" << singular_joints.size()
        << "): they move no mass or inertia, so M(q) is singular and forward dynamics is undefined;\n"
           "  lock them (--lock-joints) or give them armature (--armature):";
    for (int i : singular_joints) out << " " << model.bodies[i].joint_name;
    out << "\n";
  }
  const std::vector<int> mimics = mimic_joints(model);
  if (!mimics.empty()) {
    out << "\nmimic joints (" << mimics.size() << "): <mimic> tags are ignored; each joint is an independent coordinate:\n";
    for (int i : mimics) out << "  " << model.bodies[i].joint_name << " (mimics " << model.bodies[i].mimic << ")\n";
  }
  const ContactModel& contacts = model.contacts;
  if (const std::string warning = contact_warning(model); !warning.empty()) out << "\nwarning: " << warning << "\n";
  out << "\ncontacts: ";
  if (contacts.terrain.present()) {
    const HeightField& t = contacts.terrain;
    const auto [low, high] = std::minmax_element(t.heights.begin(), t.heights.end());
    out << "terrain " << t.nx << " x " << t.ny << " heights, spacing " << t.spacing << " m from (" << t.origin_x << ", " << t.origin_y
        << "), z in [" << *low << ", " << *high << "]";
  } else if (contacts.ground.present)
    out << "ground plane n . x = " << contacts.ground.height << ", n = (" << contacts.ground.normal.x << ", " << contacts.ground.normal.y
        << ", " << contacts.ground.normal.z << ")";
  else
    out << "no ground";
  out << "; " << contacts.geometries.size() << " collision geometries, " << contacts.candidates.size() << " candidates\n";
  std::vector<std::string> left_out;
  out << "joint limits: " << limited_joints(model, &left_out).size() << " limited joints";
  if (!left_out.empty()) {
    out << "; " << left_out.size() << " left out, their reference configuration lies beyond a limit the loops may not let them reach:";
    for (const std::string& name : left_out) out << " " << name;
  }
  out << "\n";
  for (size_t g = 0; g < contacts.geometries.size(); ++g) {
    const CollisionGeometry& geometry = contacts.geometries[g];
    int count = 0;
    for (const ContactCandidate& c : contacts.candidates) count += c.geometry == static_cast<int>(g) && c.against_ground();
    out << "  " << std::setw(36) << geometry.name << std::setw(12) << collision_shape_name(geometry.shape) << "body "
        << std::setw(24) << body_name(model, geometry.body) << count << " ground candidates, mu " << geometry.friction << ", margin "
        << geometry.margin << compliance_text(geometry.stiffness, geometry.damping) << "\n";
  }
  for (size_t p = 0; p < contacts.pairs.size(); ++p) {
    const ContactPair& pair = contacts.pairs[p];
    int count = 0;
    for (const ContactCandidate& c : contacts.candidates) count += c.pair == static_cast<int>(p);
    out << "  pair " << pair.name << ": " << contacts.geometries[static_cast<size_t>(pair.geometry1)].name << " - "
        << contacts.geometries[static_cast<size_t>(pair.geometry2)].name << ", " << count << " candidates, mu " << pair.friction
        << ", margin " << pair.margin << compliance_text(pair.stiffness, pair.damping) << "\n";
  }
  for (const std::string& skipped : contacts.skipped) out << "  skipped " << skipped << "\n";
  out << "\nloops (" << loops.loops.size() << "):\n";
  for (const Loop& loop : loops.loops) {
    const Constraint& c = model.constraints[loop.constraint];
    out << "  " << c.name << ": " << constraint_type_name(c.type) << " (" << c.dim << " rows) " << c.spec.link1
        << " -> " << c.spec.link2 << ", " << (loop.external ? "external" : "internal") << ", root "
        << body_name(model, loop.root) << ", supporting:";
    for (int b : loop.supporting) out << " " << body_name(model, b);
    out << "\n";
  }
  if (model.constraint_rows > 0) {
    const LcabaPlan lcaba_plan = plan_lcaba(model);
    out << "\nLCABA plan: elimination order S^E (minimum degree; body[neighbour count] where coupled):";
    for (int i : lcaba_plan.elimination_order) {
      out << " " << body_name(model, i);
      if (lcaba_plan.neighbour_count[static_cast<size_t>(i)] > 0) out << "[" << lcaba_plan.neighbour_count[static_cast<size_t>(i)] << "]";
    }
    out << "\n  m_c (largest neighbour count) = " << lcaba_plan.max_neighbours << ", coupling blocks = " << lcaba_plan.num_slots() << "\n";
    const ProxBboPlan prox = plan_proxbbo(model);
    out << "proxBBO plan: multipliers eliminated at their loop roots:";
    for (int i = 1; i < model.num_bodies(); ++i) {
      const int count = prox.r_count[static_cast<size_t>(i)];
      if (count == 0) continue;
      out << " " << body_name(model, i) << " (";
      for (int t = 0; t < count; ++t)
        out << (t ? ", " : "") << model.constraints[static_cast<size_t>(prox.entries[static_cast<size_t>(prox.entry_begin[static_cast<size_t>(i)] + t)].loop)].name;
      out << "; " << prox.r_rows[static_cast<size_t>(i)] << " rows)";
    }
    out << (prox.world_loops.empty() ? "" : " world (") ;
    for (size_t t = 0; t < prox.world_loops.size(); ++t) out << (t ? ", " : "") << model.constraints[static_cast<size_t>(prox.world_loops[t])].name;
    if (!prox.world_loops.empty()) out << "; " << prox.world_rows << " rows)";
    out << "\n  m_b (largest multiplier block) = " << prox.max_block_rows << " rows\n";
    const DelassusPlan plan = plan_delassus(model);
    out << "\nDelassus plan (PV-OSIMr): end-effectors (" << plan.num_end_effectors() << "):";
    for (int e : plan.end_effectors) out << " " << body_name(model, e);
    out << "\n  branching set N (" << plan.branching.size() << "), each with its nearest ancestor in N:";
    for (int i : plan.branching) out << " " << body_name(model, i) << " (" << body_name(model, plan.branching_ancestor[static_cast<size_t>(i)]) << ")";
    out << "\n  chains (head -> next head up, columns carried):";
    for (size_t h = 0; h < plan.heads.size(); ++h) {
      const int ancestor = plan.head_ancestor[h];
      out << " " << body_name(model, plan.heads[h]) << "->"
          << (ancestor < 0 ? std::string("world") : body_name(model, plan.heads[static_cast<size_t>(ancestor)])) << " ("
          << plan.head_width[h] << (plan.head_uses_rows[h] ? " rows" : "") << ")";
    }
    out << "\n  output blocks: " << plan.pairs.size() << " terminal pairs (a world cca couples nothing)\n";
  }
}

// Reads rows of numbers; a malformed row is recorded as an error for that environment.
std::vector<Eigen::VectorXd> read_rows(const json& doc, const char* key, std::vector<std::string>& errors,
                                       bool required, size_t expected_rows) {
  std::vector<Eigen::VectorXd> rows;
  if (!doc.contains(key)) {
    if (required) throw Error(std::string("states file has no \"") + key + "\" array");
    return std::vector<Eigen::VectorXd>(expected_rows);
  }
  const json& arr = doc[key];
  if (!arr.is_array()) throw Error(std::string("\"") + key + "\" must be an array of rows");
  for (size_t e = 0; e < arr.size(); ++e) {
    const json& row = arr[e];
    Eigen::VectorXd r;
    if (!row.is_array()) {
      if (e < errors.size() && errors[e].empty()) errors[e] = std::string(key) + " row is not an array";
      rows.push_back(r);
      continue;
    }
    r.resize(static_cast<Eigen::Index>(row.size()));
    for (size_t k = 0; k < row.size(); ++k) {
      if (row[k].is_number()) {
        r[static_cast<Eigen::Index>(k)] = row[k].get<double>();
      } else {
        r[static_cast<Eigen::Index>(k)] = std::numeric_limits<double>::quiet_NaN();
        if (e < errors.size() && errors[e].empty())
          errors[e] = std::string(key) + "[" + std::to_string(k) + "] is not a number";
      }
    }
    rows.push_back(r);
  }
  return rows;
}

json to_json(const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

}  // namespace

int info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    const Options o = parse_options(args, kModelOptions, with_model_options({"--json"}, kModelFlags));
    const Model model = load_model(o);
    const bool sdf = o.positional.size() == 1 && is_sdf_file(o.positional[0]);
    const std::vector<MultiParentLink> multi = sdf ? sdf_multi_parent_links(o.positional[0]) : std::vector<MultiParentLink>{};
    if (o.has_flag("--json")) {
      json doc = json::parse(model_info_json(model, find_singular_joints(model)));
      if (sdf) {
        doc["multi_parent_links"] = json::array();
        for (const MultiParentLink& l : multi) doc["multi_parent_links"].push_back({{"link", l.link}, {"parent_joints", l.parent_joints}});
      }
      out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";  // names as the file spells them, invalid UTF-8 replaced
      return 0;
    }
    print_model_text(model, out);
    if (sdf) {
      out << "\nlinks with several parent joints (" << multi.size() << "; the first joint is in the tree, the others close loops):\n";
      for (const MultiParentLink& l : multi) {
        out << "  " << l.link << ":";
        for (const std::string& j : l.parent_joints) out << " " << j;
        out << "\n";
      }
    }
    return 0;
  } catch (const std::exception& e) {
    err << "batchdyn info: " << e.what() << "\n";
    return 1;
  }
}

int eval(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Model model;
  Algorithm algorithm = Algorithm::Aba;
  ProximalSettings settings;
  EnvironmentStates states;
  std::vector<std::string> input_errors;
  std::optional<std::string> out_path;
  bool batched = false, passive_forces = false;
  try {
    const Options o = parse_options(
        args, with_model_options({"--algo", "--in", "--out", "--mu", "--max-iterations", "--tolerance", "--passive-forces"}, kModelOptions),
        with_model_options({"--batched"}, kModelFlags));
    batched = o.has_flag("--batched");
    passive_forces = passive_forces_option(o, false);
    model = load_model(o);
    const std::string algo = o.get("--algo").value_or("");
    algorithm = parse_algorithm(algo, "--algo");
    const AlgorithmTraits& traits = algorithm_traits(algorithm);
    // The batch engine runs the lane kernels, and the dense constraint solver lane by lane.
    const auto batchable = [](const AlgorithmTraits& t) { return t.runs_on_lanes || t.solves_constraints; };
    if (batched && !batchable(traits)) throw Error("--batched is available for --algo " + algorithm_names(batchable));
    settings = reference_settings(algorithm);  // unless --mu, --max-iterations, --tolerance
    if (algorithm != Algorithm::Aba) require_constraints(model, "--algo " + algo);
    settings.mu = number_option(o, "--mu", settings.mu, kMinPenalty, kMaxPenalty);
    settings.max_iterations = integer_option(o, "--max-iterations", settings.max_iterations, 1, kMaxSolverIterations);
    settings.tolerance = number_option(o, "--tolerance", settings.tolerance, 0.0, std::numeric_limits<double>::max());
    check_proximal_settings(settings, "--mu, --max-iterations, --tolerance");
    require_regular(model, find_singular_joints(model), "batchdyn eval");
    out_path = o.get("--out");
    const auto in_path = o.get("--in");
    if (!in_path) throw Error("missing --in STATES.json");
    std::ifstream in(*in_path);
    if (!in) throw Error(*in_path + ": cannot open states file");
    json doc;
    try {
      doc = json::parse(in);
    } catch (const json::exception& e) {  // syntax, and numbers beyond double (1e999)
      throw Error(*in_path + ": malformed JSON: " + e.what());
    }
    if (!doc.is_object()) throw Error(*in_path + ": expected an object with \"q\", \"v\", \"tau\" arrays");
    if (!doc.contains("q") || !doc["q"].is_array()) throw Error(*in_path + ": missing \"q\" array");
    const size_t n = doc["q"].size();
    input_errors.assign(n, "");
    const bool dynamics = !algorithm_traits(algorithm).computes_delassus;
    states.q = read_rows(doc, "q", input_errors, true, n);
    states.v = read_rows(doc, "v", input_errors, dynamics, n);
    states.tau = read_rows(doc, "tau", input_errors, dynamics, n);
    if (states.v.size() != n || states.tau.size() != n)
      throw Error(*in_path + ": \"q\" has " + std::to_string(n) + " rows but \"v\" has " +
                  std::to_string(states.v.size()) + " and \"tau\" has " + std::to_string(states.tau.size()));
  } catch (const std::exception& e) {
    err << "batchdyn eval: " << e.what() << "\n";
    return 1;
  }

  std::vector<EnvironmentResult> results;
  try {
    if (!states.q.empty())  // an empty states file gives empty results
      results = batched ? evaluate_batched(model, algorithm, states, settings, passive_forces)
                        : evaluate_reference(model, algorithm, states, settings, passive_forces);
  } catch (const std::exception& e) {
    err << "batchdyn eval: " << e.what() << "\n";
    return 1;
  }
  json result = json::object();
  const std::vector<const char*> fields =
      algorithm == Algorithm::Aba ? std::vector<const char*>{"qdd"}
      : algorithm_traits(algorithm).solves_constraints ? std::vector<const char*>{"qdd", "lambda", "iterations", "residual", "converged"}
                                            : std::vector<const char*>{"delassus"};
  for (const char* field : fields) result[field] = json::array();
  json errors = json::array();
  int failed = 0;
  for (size_t e = 0; e < results.size(); ++e) {
    EnvironmentResult& r = results[e];
    if (!input_errors[e].empty()) r.error = input_errors[e];
    if (!r.ok()) {
      ++failed;
      errors.push_back({{"env", e}, {"message", r.error}});
      err << "batchdyn eval: environment " << e << ": " << r.error << "\n";
    }
    switch (algorithm) {
      case Algorithm::Aba:
        result["qdd"].push_back(r.ok() ? to_json(r.qdd) : json());
        break;
      case Algorithm::Constrained:
      case Algorithm::Lcaba:
      case Algorithm::ProxBbo:
        result["qdd"].push_back(r.ok() ? to_json(r.qdd) : json());
        result["lambda"].push_back(r.ok() ? to_json(r.lambda) : json());
        result["iterations"].push_back(r.iterations);
        result["residual"].push_back(r.residual);
        result["converged"].push_back(r.ok() && r.converged);
        break;
      case Algorithm::Delassus:
      case Algorithm::PvOsimr:
      case Algorithm::PvOsim: {
        json m = json::array();
        for (Eigen::Index i = 0; i < r.delassus.rows(); ++i) m.push_back(to_json(r.delassus.row(i).transpose()));
        result["delassus"].push_back(r.ok() ? m : json());
        break;
      }
    }
  }
  result["errors"] = errors;
  const std::string text = result.dump(2, ' ', false, json::error_handler_t::replace) + "\n";  // error messages quote names
  if (out_path) {
    std::ofstream f(*out_path);
    if (!f) {
      err << "batchdyn eval: cannot write " << *out_path << "\n";
      return 1;
    }
    f << text;
    f.flush();
    if (!f) {  // a full disk or /dev/full: the result was not written
      err << "batchdyn eval: writing " << *out_path << " failed\n";
      return 1;
    }
  } else {
    out << text << std::flush;
    if (!out) {
      err << "batchdyn eval: writing the result to standard output failed\n";
      return 1;
    }
  }
  return failed ? 2 : 0;
}

}  // namespace batchdyn::cli
