#include "topology/model_info.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

#include "topology/contact_plan.hpp"
#include "topology/contacts.hpp"
#include "topology/delassus_plan.hpp"
#include "topology/lcaba_plan.hpp"
#include "topology/proxbbo_plan.hpp"
#include "topology/loops.hpp"

namespace batchdyn {

namespace {
using nlohmann::json;

std::string body_name(const Model& m, int body) { return m.bodies[body].name; }

json joint_list(const Model& model, const std::vector<int>& bodies) {
  json list = json::array();
  for (int i : bodies) list.push_back(model.bodies[i].joint_name);
  return list;
}

std::vector<int> mimic_joints(const Model& model) {
  std::vector<int> joints;
  for (int i = 1; i < model.num_bodies(); ++i)
    if (!model.bodies[i].mimic.empty()) joints.push_back(i);
  return joints;
}

json model_json(const Model& model, const std::vector<int>& singular_joints) {
  const LoopAnalysis loops = analyze_loops(model);
  json j;
  j["name"] = model.name;
  j["nq"] = model.nq;
  j["nv"] = model.nv;
  j["num_bodies"] = model.num_bodies() - 1;
  j["tree_depth"] = loops.tree_depth;
  j["constraint_rows"] = model.constraint_rows;
  j["gravity"] = {model.gravity.x, model.gravity.y, model.gravity.z};
  j["joints"] = json::array();
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    json joint = {{"name", b.joint_name}, {"type", joint_type_name(b.joint_type)}, {"idx_q", b.idx_q},
                  {"idx_v", b.idx_v}, {"nq", b.nq}, {"nv", b.nv}, {"body", b.name},
                  {"parent_body", body_name(model, b.parent)}, {"depth", b.depth}, {"mass", b.inertia.mass},
                  {"armature", model.armature[static_cast<size_t>(b.idx_v)]},
                  {"damping", model.damping[static_cast<size_t>(b.idx_v)]},
                  {"friction_loss", model.friction_loss[static_cast<size_t>(b.idx_v)]},
                  {"stiffness", model.spring_stiffness[static_cast<size_t>(b.idx_v)]},
                  {"spring_reference", model.spring_reference[static_cast<size_t>(b.idx_v)]}};
    if (!b.mimic.empty()) joint["mimic"] = b.mimic;
    j["joints"].push_back(joint);
  }
  j["frames"] = json::array();
  for (const Frame& f : model.frames)
    j["frames"].push_back({{"name", f.name}, {"kind", frame_kind_name(f.kind)}, {"body", body_name(model, f.body)}});
  j["singular_joints"] = joint_list(model, singular_joints);
  j["inertia_warnings"] = model.inertia_warnings;
  j["timestep"] = model.timestep > 0 ? json(model.timestep) : json();
  j["actuators"] = json::array();
  for (const Actuator& a : model.actuators) {
    auto bound = [](double x) { return std::isfinite(x) ? json(x) : json(); };  // null: unlimited
    j["actuators"].push_back({{"name", a.name}, {"kind", actuator_kind_name(a.kind)}, {"joint", a.joint}, {"dof", a.dof},
                              {"gear", a.gear}, {"gain", a.gain}, {"bias", {a.bias[0], a.bias[1], a.bias[2]}},
                              {"ctrl_range", {bound(a.ctrl_lower), bound(a.ctrl_upper)}},
                              {"force_range", {bound(a.force_lower), bound(a.force_upper)}}});
  }
  j["sensors"] = json::array();
  for (const Sensor& s : model.sensors)
    j["sensors"].push_back({{"name", s.name}, {"kind", sensor_kind_name(s.kind)}, {"object", s.object}, {"address", s.address},
                            {"size", sensor_dimension(s.kind)}, {"cutoff", s.cutoff}});
  j["keyframes"] = json::array();
  for (const Keyframe& k : model.keyframes) j["keyframes"].push_back({{"name", k.name}, {"time", k.time}, {"q", k.q}, {"v", k.v}, {"ctrl", k.ctrl}});
  j["load_notes"] = model.load_notes;
  j["mimic_joints_ignored"] = joint_list(model, mimic_joints(model));
  json contacts;
  const ContactModel& cm = model.contacts;
  contacts["ground"] = cm.ground.present ? json{{"height", cm.ground.height},
                                                {"normal", {cm.ground.normal.x, cm.ground.normal.y, cm.ground.normal.z}}}
                                         : json();
  contacts["terrain"] = cm.terrain.present() ? json{{"nx", cm.terrain.nx}, {"ny", cm.terrain.ny}, {"spacing", cm.terrain.spacing},
                                                     {"origin", {cm.terrain.origin_x, cm.terrain.origin_y}}}
                                               : json();
  contacts["geometries"] = json::array();
  for (const CollisionGeometry& g : cm.geometries) {
    json x = {{"name", g.name}, {"link", g.link}, {"body", body_name(model, g.body)}, {"shape", collision_shape_name(g.shape)},
              {"friction", g.friction}, {"margin", g.margin}, {"stiffness", g.stiffness}, {"damping", g.damping},
              {"touches_ground", g.touches_ground}};
    if (g.shape != CollisionShape::Box && g.shape != CollisionShape::Point && g.shape != CollisionShape::ConvexHull) x["radius"] = g.radius;
    if (g.shape == CollisionShape::ConvexHull) x["vertices"] = static_cast<int>(g.vertices.size());
    if (g.shape == CollisionShape::Capsule || g.shape == CollisionShape::Cylinder) x["length"] = g.length;
    if (g.shape == CollisionShape::Box) x["size"] = {2 * g.half_extents.x, 2 * g.half_extents.y, 2 * g.half_extents.z};
    contacts["geometries"].push_back(x);
  }
  contacts["pairs"] = json::array();
  for (const ContactPair& p : cm.pairs)
    contacts["pairs"].push_back({{"name", p.name}, {"geometries", {cm.geometries[static_cast<size_t>(p.geometry1)].name,
                                                                   cm.geometries[static_cast<size_t>(p.geometry2)].name}},
                                 {"friction", p.friction}, {"margin", p.margin}, {"stiffness", p.stiffness}, {"damping", p.damping}});
  contacts["candidates"] = json::array();
  for (const ContactCandidate& c : cm.candidates) {
    json x = {{"geometry", cm.geometries[static_cast<size_t>(c.geometry)].name}, {"body", body_name(model, c.body)},
              {"point", {c.point.x, c.point.y, c.point.z}}, {"radius", c.radius}, {"kind", candidate_kind_name(c.kind)}};
    if (!c.against_ground()) {
      x["pair"] = cm.pairs[static_cast<size_t>(c.pair)].name;
      x["against"] = cm.geometries[static_cast<size_t>(c.geometry2)].name;
    }
    contacts["candidates"].push_back(x);
  }
  contacts["skipped"] = cm.skipped;
  contacts["warning"] = contact_warning(model);  // "" when the robot can stand on its ground
  std::vector<std::string> left_out;
  contacts["limited_joints"] = static_cast<int>(limited_joints(model, &left_out).size());
  contacts["limits_left_out"] = left_out;  // loop models: joints their reference configuration places beyond a limit
  j["contacts"] = contacts;
  j["loops"] = json::array();
  for (const Loop& loop : loops.loops) {
    const Constraint& c = model.constraints[loop.constraint];
    json supporting = json::array();
    for (int b : loop.supporting) supporting.push_back(body_name(model, b));
    j["loops"].push_back({{"name", c.name}, {"type", constraint_type_name(c.type)}, {"dim", c.dim}, {"row", c.row},
                          {"link1", c.spec.link1}, {"link2", c.spec.link2}, {"root", body_name(model, loop.root)},
                          {"external", loop.external}, {"supporting_bodies", supporting}});
  }
  if (model.constraint_rows > 0) {
    const LcabaPlan lcaba_plan = plan_lcaba(model);
    json l;
    l["elimination_order"] = json::array();
    for (int i : lcaba_plan.elimination_order) {
      json neighbours = json::array();
      for (int k = lcaba_plan.neighbour_begin[static_cast<size_t>(i)]; k < lcaba_plan.neighbour_begin[static_cast<size_t>(i) + 1]; ++k)
        neighbours.push_back(body_name(model, lcaba_plan.neighbours[static_cast<size_t>(k)].body));
      l["elimination_order"].push_back({{"body", body_name(model, i)}, {"neighbours", neighbours},
                                        {"parent_is_neighbour", lcaba_plan.parent_neighbour[static_cast<size_t>(i)] >= 0}});
    }
    l["max_neighbours"] = lcaba_plan.max_neighbours;
    l["coupling_blocks"] = lcaba_plan.num_slots();
    j["lcaba_plan"] = l;
    const ProxBboPlan prox = plan_proxbbo(model);
    json x;
    x["roots"] = json::array();
    for (int i = 1; i < model.num_bodies(); ++i) {
      if (prox.r_count[static_cast<size_t>(i)] == 0) continue;
      json names = json::array();
      for (int t = 0; t < prox.r_count[static_cast<size_t>(i)]; ++t)
        names.push_back(model.constraints[static_cast<size_t>(prox.entries[static_cast<size_t>(prox.entry_begin[static_cast<size_t>(i)] + t)].loop)].name);
      x["roots"].push_back({{"body", body_name(model, i)}, {"loops", names}, {"rows", prox.r_rows[static_cast<size_t>(i)]}});
    }
    json world = json::array();
    for (int j : prox.world_loops) world.push_back(model.constraints[static_cast<size_t>(j)].name);
    x["world_loops"] = world;
    x["world_rows"] = prox.world_rows;
    x["max_block_rows"] = prox.max_block_rows;
    j["proxbbo_plan"] = x;
    const DelassusPlan plan = plan_delassus(model);
    json p;
    p["end_effectors"] = json::array();
    for (int e : plan.end_effectors) p["end_effectors"].push_back(body_name(model, e));
    p["branching"] = json::array();
    for (int i : plan.branching)
      p["branching"].push_back({{"body", body_name(model, i)},
                                {"ancestor", body_name(model, plan.branching_ancestor[static_cast<size_t>(i)])}});
    p["terminals"] = json::array();
    for (const DelassusPlan::Terminal& t : plan.terminals)
      p["terminals"].push_back({{"constraint", model.constraints[static_cast<size_t>(t.constraint)].name},
                                {"body", body_name(model, t.body)}, {"sign", t.sign}, {"row", t.row}, {"dim", t.dim}});
    p["closest_common_ancestor"] = json::array();
    for (int a = 0; a < plan.num_end_effectors(); ++a) {
      json row = json::array();
      for (int b = 0; b < plan.num_end_effectors(); ++b) row.push_back(body_name(model, plan.cca(a, b)));
      p["closest_common_ancestor"].push_back(row);
    }
    // What the kernels walk: chains from each head, each terminal's levels, the output blocks.
    p["chains"] = json::array();
    for (size_t h = 0; h < plan.heads.size(); ++h) {
      const int ancestor = plan.head_ancestor[h];
      p["chains"].push_back({{"head", body_name(model, plan.heads[h])},
                             {"up_to", ancestor < 0 ? std::string("world") : body_name(model, plan.heads[static_cast<size_t>(ancestor)])},
                             {"width", plan.head_width[h]}, {"starts_from_rows", plan.head_uses_rows[h] != 0}});
    }
    p["blocks"] = json::array();
    for (const DelassusPlan::TerminalPair& pair : plan.pairs) {
      const DelassusPlan::Terminal &a = plan.terminals[static_cast<size_t>(pair.a)], &b = plan.terminals[static_cast<size_t>(pair.b)];
      const int level = pair.level_a >= 0 ? plan.level_head[static_cast<size_t>(pair.level_a)] : -1;
      p["blocks"].push_back({{"rows", {a.row, a.row + a.dim}}, {"cols", {b.row, b.row + b.dim}},
                             {"terminals", {pair.a, pair.b}},
                             {"at", level < 0 ? std::string("-") : body_name(model, plan.heads[static_cast<size_t>(level)])},
                             {"plus_chain_of", pair.chain_head < 0 ? std::string("-") : body_name(model, plan.heads[static_cast<size_t>(pair.chain_head)])}});
    }
    j["delassus_plan"] = p;
  }
  return j;
}

}  // namespace

std::string model_info_json(const Model& model, const std::vector<int>& singular_joints, int indent) {
  // Names are bytes from the robot file: invalid UTF-8 is replaced (U+FFFD), not an exception.
  return model_json(model, singular_joints).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace batchdyn
