// Code generators for the scaling topologies of the papers (lcaba-proxbbo §VI, pv-osimr §IV).
// Each returns a URDF (fixed base, revolute joints, plausible aluminium-link inertias) and a
// constraint file whose closures hold exactly at the neutral configuration ("placement2":
// "hold"), so the generated mechanisms are consistent and can be simulated from q = 0.
#pragma once

#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

struct GeneratedModel {
  std::string name;
  std::string urdf;
  std::string constraints_json;  // constraint-file schema of topology/constraints_io.hpp
  RootJoint root = RootJoint::Fixed;  // how the URDF's root link is attached to the world
};

// Serial chain of n links, joint axes cycling z, y, x (no loop).
GeneratedModel generate_chain(int n);
// Cycle of n links: a chain laid out as a regular polygon whose last link is welded (6D) to the
// first (Fig. 6a of lcaba-proxbbo).
GeneratedModel generate_cycle(int n);
// Chain of `loops` loops of `links_per_loop` links each (two branches per loop closed by a
// connect constraint; the next loop grows from the closing tip) (Fig. 7a).
GeneratedModel generate_loop_chain(int loops, int links_per_loop);
// Long stem of `stem` links with `branches` branches of `branch_length` links alternating on
// both sides; each branch tip is connected to the world (an external contact).
GeneratedModel generate_stem_with_branches(int stem, int branches, int branch_length);
// The scaling mechanism of pv-osimr Fig. 3a: a free-floating stem of `stem` links (the first
// one is the floating base) with `branches_per_end` two-link branches at each end of the
// stem, every branch tip welded (6D) to the world; m = 12 * branches_per_end rows. One branch
// per end is Fig. 3b's chain.
GeneratedModel generate_welded_stem(int stem, int branches_per_end);
// One node link with `branches` branches of `branch_length` links; tips of neighbouring
// branches welded to each other (Fig. 9a).
GeneratedModel generate_branching_node(int branches, int branch_length);
// Ladder: two rails of `rungs` links each; rail links at the same height joined by a connect
// rung.
GeneratedModel generate_ladder(int rungs);

// "chain:N", "cycle:N", "loop_chain:L:K", "stem:S:B:K", "branching:B:K", "ladder:N",
// "welded_stem:S:B".
GeneratedModel generate_from_spec(const std::string& spec);
// Loads a generated model (URDF + constraints) as a Model.
Model build_generated(const GeneratedModel& generated);

}  // namespace batchdyn
