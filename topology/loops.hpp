// Graph facts of the loops every later plan needs: the spanning tree is the URDF tree, each
// constraint is a cut joint closing one loop. For each loop: its root (lowest common ancestor
// of the two constrained bodies; the world for an external loop) and its supporting bodies
// (the bodies on the two tree paths up to the root, root excluded); for each body, the loops
// it supports.
#pragma once

#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

struct Loop {
  int constraint = 0;
  int root = 0;                 // lowest common ancestor body (0 = world)
  bool external = false;        // constraint to the world
  std::vector<int> supporting;  // bodies whose joints move the loop, ascending index
};

struct LoopAnalysis {
  std::vector<Loop> loops;                   // one per constraint, same order
  std::vector<std::vector<int>> loops_of_body;  // per body: indices of the loops it supports
  int tree_depth = 0;
};

// O(m d): walks each loop's two paths to their common ancestor.
LoopAnalysis analyze_loops(const Model& model);

// Lowest common ancestor of two bodies (0 = world).
int common_ancestor(const Model& model, int a, int b);

}  // namespace batchdyn
