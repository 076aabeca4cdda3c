#include "topology/loops.hpp"

#include <algorithm>

namespace batchdyn {

int common_ancestor(const Model& model, int a, int b) {
  // Depth-first numbering: parent < child, so the larger index is never the ancestor.
  while (a != b) {
    if (a > b) a = model.bodies[a].parent;
    else b = model.bodies[b].parent;
  }
  return a;
}

LoopAnalysis analyze_loops(const Model& model) {
  LoopAnalysis analysis;
  analysis.tree_depth = model.max_depth();
  analysis.loops_of_body.resize(model.num_bodies());
  for (int index = 0; index < static_cast<int>(model.constraints.size()); ++index) {
    const Constraint& c = model.constraints[index];
    Loop loop;
    loop.constraint = index;
    loop.external = c.body2 == 0;
    loop.root = common_ancestor(model, c.body1, c.body2);
    for (int side : {c.body1, c.body2})
      for (int i = side; i != loop.root; i = model.bodies[i].parent) loop.supporting.push_back(i);
    std::sort(loop.supporting.begin(), loop.supporting.end());
    for (int i : loop.supporting) analysis.loops_of_body[i].push_back(index);
    analysis.loops.push_back(std::move(loop));
  }
  return analysis;
}

}  // namespace batchdyn
