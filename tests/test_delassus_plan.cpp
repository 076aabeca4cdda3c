// The PV-OSIMr plan (topology/delassus_plan.hpp) equals the paper's definitions evaluated by
// brute force on the graph: ES(i) by walking every end-effector up to the root, N by its
// definition on those sets, Nanc by walking up, cca by intersecting ancestor sets.
#include <algorithm>
#include <set>

#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
std::set<int> ancestors_and_self(const Model& m, int body) {
  std::set<int> out;
  for (int i = body; i >= 0; i = i > 0 ? m.bodies[i].parent : -1) out.insert(i);
  return out;
}

void check_against_brute_force(const Model& m, const DelassusPlan& plan) {
  const int n = m.num_bodies();
  std::set<int> E;
  for (const Constraint& c : m.constraints) {
    if (c.body1 > 0) E.insert(c.body1);
    if (c.body2 > 0) E.insert(c.body2);
  }
  CHECK(std::vector<int>(E.begin(), E.end()) == plan.end_effectors);
  // ES(i): end-effectors whose ancestors-or-self include i.
  std::vector<std::set<int>> ES(static_cast<size_t>(n));
  for (int e : E)
    for (int a : ancestors_and_self(m, e)) ES[static_cast<size_t>(a)].insert(e);
  for (int i = 0; i < n; ++i) {
    const std::set<int> got(plan.end_effectors.begin() + plan.es_begin[static_cast<size_t>(i)],
                            plan.end_effectors.begin() + plan.es_end[static_cast<size_t>(i)]);
    CHECK(got == ES[static_cast<size_t>(i)]);
  }
  // N by the paper's definition.
  std::vector<int> N;
  for (int i = 1; i < n; ++i) {
    size_t largest = 0;
    int supporting = 0;
    for (int c : m.bodies[i].children) {
      largest = std::max(largest, ES[static_cast<size_t>(c)].size());
      supporting += !ES[static_cast<size_t>(c)].empty();
    }
    if (supporting > 0 && ES[static_cast<size_t>(i)].size() > largest) N.push_back(i);
  }
  CHECK(N == plan.branching);
  for (int i = 1; i < n; ++i) {  // Nanc: the nearest proper ancestor in N
    int expected = 0;
    for (int a = m.bodies[i].parent; a > 0; a = m.bodies[a].parent)
      if (std::count(N.begin(), N.end(), a)) {
        expected = a;
        break;
      }
    CHECK(plan.branching_ancestor[static_cast<size_t>(i)] == expected);
  }
  // cca by ancestor sets; for distinct end-effectors it lies in N or is the world, and every
  // member of N is the cca of some pair (the paper's "the same as the list N").
  std::set<int> ccas;
  for (int a = 0; a < plan.num_end_effectors(); ++a)
    for (int b = 0; b < plan.num_end_effectors(); ++b) {
      const std::set<int> A = ancestors_and_self(m, plan.end_effectors[static_cast<size_t>(a)]);
      const std::set<int> B = ancestors_and_self(m, plan.end_effectors[static_cast<size_t>(b)]);
      int expected = 0;
      for (int x : A)
        if (B.count(x)) expected = std::max(expected, x);  // depth-first numbering: the deepest has the largest index
      CHECK(plan.cca(a, b) == expected);
      if (a != b) {
        CHECK((expected == 0 || std::count(N.begin(), N.end(), expected) == 1));
        if (expected > 0) ccas.insert(expected);
      }
    }
  CHECK(std::vector<int>(ccas.begin(), ccas.end()) == N);
  // Chains: heads are E ∪ N; every body supporting an end-effector has the head found by
  // walking down its unique supporting path; each head's chain ends below Nanc(head).
  std::vector<int> heads;
  for (int i = 1; i < n; ++i)
    if (E.count(i) || std::count(N.begin(), N.end(), i)) heads.push_back(i);
  CHECK(heads == plan.heads);
  for (int i = 1; i < n; ++i) {
    const int h = plan.chain_head[static_cast<size_t>(i)];
    CHECK((h >= 0) == !ES[static_cast<size_t>(i)].empty());
    if (h < 0) continue;
    const int head = plan.heads[static_cast<size_t>(h)];
    CHECK(ancestors_and_self(m, head).count(i) == 1);  // i lies between the head and ...
    CHECK(plan.branching_ancestor[static_cast<size_t>(head)] < i);  // ... below Nanc(head)
    CHECK(ES[static_cast<size_t>(i)] == ES[static_cast<size_t>(head)]);
  }
  // One output block per terminal pair a <= b whose bodies' cca is not the world.
  size_t coupled = 0;
  const auto& T = plan.terminals;
  for (size_t a = 0; a < T.size(); ++a)
    for (size_t b = a; b < T.size(); ++b) {
      int c = 0;
      for (int x : ancestors_and_self(m, T[a].body))
        if (ancestors_and_self(m, T[b].body).count(x)) c = std::max(c, x);
      coupled += c > 0;
    }
  CHECK(plan.pairs.size() == coupled);
  // Terminals: one per constraint side on a moving body, with its rows and sign.
  size_t sides = 0;
  for (const Constraint& c : m.constraints) sides += (c.body1 > 0) + (c.body2 > 0);
  CHECK(plan.terminals.size() == sides);
  for (int k = 0; k < plan.num_end_effectors(); ++k)
    for (int t = plan.terminal_begin[static_cast<size_t>(k)]; t < plan.terminal_begin[static_cast<size_t>(k + 1)]; ++t) {
      const DelassusPlan::Terminal& term = plan.terminals[static_cast<size_t>(t)];
      const Constraint& c = m.constraints[static_cast<size_t>(term.constraint)];
      CHECK(term.body == plan.end_effectors[static_cast<size_t>(k)]);
      CHECK(term.body == (term.sign > 0 ? c.body1 : c.body2));
      CHECK(term.row == c.row);
      CHECK(term.dim == c.dim);
    }
  // The assembly stores every entry of G exactly once before it adds to it: the unwritten
  // blocks are zeroed first, then each pair's block (and its mirror) is stored by the first pair
  // that reaches it and added by the later ones.
  const int rows = m.constraint_rows;
  std::vector<int> stored(static_cast<size_t>(rows * rows), 0);
  auto write = [&](int row, int col, int dr, int dc, bool assigns) {
    for (int r = 0; r < dr; ++r)
      for (int s = 0; s < dc; ++s) {
        int& e = stored[static_cast<size_t>((row + r) * rows + col + s)];
        CHECK(e == (assigns ? 0 : 1));
        e = 1;
      }
  };
  for (const DelassusPlan::ZeroBlock& z : plan.unwritten_blocks) write(z.row, z.col, z.rows, z.cols, true);
  for (const DelassusPlan::TerminalPair& p : plan.pairs) {
    const DelassusPlan::Terminal &a = plan.terminals[static_cast<size_t>(p.a)], &b = plan.terminals[static_cast<size_t>(p.b)];
    write(a.row, b.row, a.dim, b.dim, p.assigns);
    if (p.a != p.b) write(b.row, a.row, b.dim, a.dim, p.mirror_assigns);
  }
  CHECK(std::count(stored.begin(), stored.end(), 1) == rows * rows);
}
}  // namespace

TEST_CASE("Delassus plan by hand: an end-effector on a link whose descendant branches to two more") {
  // base -> a -> b -> {c, d}; constraints on a, c and d (to the world).
  const std::string inertial = R"(<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>)";
  auto link = [&](const std::string& n) { return "<link name=\"" + n + "\">" + inertial + "</link>"; };
  auto joint = [](const std::string& n, const std::string& p, const std::string& c) {
    return "<joint name=\"" + n + "\" type=\"revolute\"><parent link=\"" + p + "\"/><child link=\"" + c +
           "\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
  };
  Model m = load_urdf_string("<robot name=\"y\"><link name=\"base\"/>" + link("a") + link("b") + link("c") + link("d") +
                             joint("ja", "base", "a") + joint("jb", "a", "b") + joint("jc", "b", "c") + joint("jd", "b", "d") +
                             "</robot>");
  for (const char* l : {"a", "c", "d"})
    add_constraint(m, ConstraintSpec{std::string("pin_") + l, ConstraintType::Connect, l, "world", {}, {}, {0, 0, 1}, 0, 0});
  const DelassusPlan plan = plan_delassus(m);
  const int a = m.body_index("a"), b = m.body_index("b"), c = m.body_index("c"), d = m.body_index("d");
  CHECK(plan.end_effectors == std::vector<int>{a, c, d});
  CHECK(plan.branching == std::vector<int>{a, b});
  CHECK(plan.branching_ancestor[static_cast<size_t>(b)] == a);
  CHECK(plan.branching_ancestor[static_cast<size_t>(c)] == b);
  CHECK(plan.branching_ancestor[static_cast<size_t>(a)] == 0);
  CHECK(plan.cca(1, 2) == b);  // c, d
  CHECK(plan.cca(0, 1) == a);  // a, c
  check_against_brute_force(m, plan);
}

TEST_CASE("Delassus plan equals the paper's definitions on every shipped and generated constrained model") {
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    check_against_brute_force(m.model, plan_delassus(m.model));
  }
}

TEST_CASE("Delassus plan equals the paper's definitions for random constraint sets on random links") {
  std::mt19937 rng(31);
  const Model base = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    Model m = base;
    std::uniform_int_distribution<int> pick_link(0, static_cast<int>(m.frames.size()) - 1), count(1, 6), kind(0, 2);
    const int constraints = count(rng);
    for (int k = 0; k < constraints; ++k) {
      std::string l1, l2;
      do {
        l1 = m.frames[static_cast<size_t>(pick_link(rng))].name;
        l2 = kind(rng) == 0 ? "world" : m.frames[static_cast<size_t>(pick_link(rng))].name;
      } while (l1 == "world" || !m.has_frame(l1) || !m.has_frame(l2) ||
               m.frames[static_cast<size_t>(m.frame_index(l1))].body == m.frames[static_cast<size_t>(m.frame_index(l2))].body);
      const ConstraintType type = std::array{ConstraintType::Connect, ConstraintType::Weld, ConstraintType::Revolute}[static_cast<size_t>(kind(rng))];
      add_constraint(m, ConstraintSpec{"c" + std::to_string(k), type, l1, l2, {}, {}, {0, 0, 1}, 0, 0});
    }
    check_against_brute_force(m, plan_delassus(m));
  }
}
