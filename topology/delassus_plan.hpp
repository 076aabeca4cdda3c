// The PV-OSIMr plan (pv-osimr-delassus.txt §I-C notation, §III, Alg. 3): everything the
// O(n + m^2) Delassus kernel needs that depends only on the kinematic graph and on which links
// carry constraint rows. Plain index arrays, computed once per model; a kernel walks them and
// never searches the graph.
//
// Loop constraints between two links (internal loops) generalise the paper's world-only
// constraints: each side on a moving body is a *terminal* (a row block on that body, sign +1
// for side 1 and -1 for side 2), and the Delassus block of two constraints is the sum over
// their terminals' pairs, sign_a sign_b K_a Omega_cca(a,b) K_b^T.
#pragma once

#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

struct DelassusPlan {
  // One constraint side on a moving body.
  struct Terminal {
    int constraint = 0;  // index into model.constraints
    int body = 0;        // the body carrying the side (never 0)
    int sign = 1;        // +1: side 1 (link1), -1: side 2 (link2)
    int row = 0;         // first row of the constraint in the stacked m rows (and in the m x m output)
    int dim = 0;         // rows of the constraint (3, 5 or 6)
  };
  std::vector<Terminal> terminals;  // ordered by body, then constraint, then side

  // The end-effector set E: bodies carrying at least one terminal, ascending. Terminals of
  // end_effectors[k] are terminals[terminal_begin[k] .. terminal_begin[k + 1]).
  std::vector<int> end_effectors;
  std::vector<int> terminal_begin;  // size |E| + 1

  // ES(i), the end-effectors supported by body i (in its subtree, itself included): the
  // contiguous range end_effectors[es_begin[i] .. es_end[i]) — depth-first numbering keeps
  // every subtree contiguous. Per body, world included (ES(0) = E).
  std::vector<int> es_begin, es_end;

  // The branching set N: bodies i whose ES(i) is larger than ES(j) of every child j and
  // that have at least one supporting child (two or more supporting children, or an
  // end-effector with a supporting child). Ascending index, so ancestors come first.
  std::vector<int> branching;
  std::vector<char> is_branching;  // per body
  // Nanc(i): the closest proper ancestor of body i in N, or 0 (the world) if none. Per body.
  std::vector<int> branching_ancestor;

  // cca(a, b) for end-effectors a, b (indices into end_effectors): the closest common
  // ancestor body (a body itself when it is an ancestor of the other, or a == b; 0 = world).
  // Row-major |E| x |E|, symmetric.
  std::vector<int> closest_common_ancestor;

  // --- What the kernels walk (kernels/delassus/pv_osimr.hpp, kernels/delassus/pv_osim.hpp) ---

  // Chains (Alg. 3 lines 3-11). The heads are E ∪ N, ascending (ancestors first); every body
  // that supports an end-effector lies on exactly one chain, which runs from its head d(i) up
  // to (excluding) Nanc(d(i)). chain_head[i] = d(i) as an index into `heads`, -1 when ES(i) is
  // empty. head_ancestor[h] = Nanc(heads[h]) as an index into `heads`, -1 for the world.
  std::vector<int> heads;
  std::vector<int> chain_head;
  std::vector<int> head_ancestor;
  // The basis a chain carries from its head (Alg. 3 line 4): an end-effector outside N whose
  // terminals have at most 6 rows in all starts from those rows themselves (^eP_e = K_e^T,
  // head_width = its rows: 3 for a point contact, 6 for a weld), every other head from I
  // (width 6). Fewer columns to carry, and the rows at the head need no product.
  std::vector<int> head_width;
  std::vector<char> head_uses_rows;  // per head: 1 when the basis is the end-effector's rows
  // For each terminal, its first basis column at its own head when that head uses rows, else -1.
  std::vector<int> terminal_basis_offset;

  // Levels of a terminal (Alg. 3 lines 14-16): the heads from its own body up through Nanc,
  // Nanc(Nanc), ... to the last one below the world. Terminal t's levels are slots
  // level_begin[t] .. level_begin[t + 1] - 1, in that order; level_head[slot] is the head.
  std::vector<int> level_begin;
  std::vector<int> level_head;

  // The blocks to assemble (Alg. 3 line 18): one per pair of terminals a <= b whose bodies'
  // cca is not the world (a world cca couples nothing), with the two terminals' level slots
  // at that cca. When the cca is an end-effector head whose basis is its own rows, its ^0Ω is
  // never formed: the block is that chain's ^{Nanc}Ω (rows offset_a.., offset_b..) plus the
  // block at the next level up (Nanc), so chain_head names the chain and the levels are
  // Nanc's (-1 when Nanc is the world).
  // assigns / mirror_assigns: the pair is the first to write its block of G (rows of a x rows
  // of b) / the transposed block (a != b), so it stores (=) instead of adding (+=); later
  // pairs on the same block (the terminals of an internal loop's two sides) add.
  struct TerminalPair {
    int a = 0, b = 0;
    int level_a = 0, level_b = 0;
    int chain_head = -1;
    bool assigns = false, mirror_assigns = false;
  };
  std::vector<TerminalPair> pairs;
  // The blocks of G that no pair writes: two constraints whose terminals' ccas are all the
  // world. The kernel zeroes these and no other entry of G.
  struct ZeroBlock {
    int row = 0, col = 0, rows = 0, cols = 0;
  };
  std::vector<ZeroBlock> unwritten_blocks;
  // Per level slot: whether some pair reads ^0Ω_c ^cK_t^T there (as its b side).
  std::vector<char> level_needs_acceleration;

  // For PV-OSIM (Alg. 1) and the terminals' force columns: terminal t's columns are
  // column_begin[t] .. column_begin[t] + dim - 1 (terminal order, so the columns of ES(i) are
  // one range: es_column_begin[i] .. es_column_end[i]), column_row[k] the row of column k.
  std::vector<int> column_begin;
  std::vector<int> column_row;
  std::vector<int> es_column_begin, es_column_end;

  bool has_internal_loops = false;  // some constraint has two moving sides: kernels need world placements
  int rows = 0;                     // m

  int num_end_effectors() const { return static_cast<int>(end_effectors.size()); }
  int num_terminals() const { return static_cast<int>(terminals.size()); }
  int num_columns() const { return static_cast<int>(column_row.size()); }
  int cca(int a, int b) const { return closest_common_ancestor[static_cast<size_t>(a * num_end_effectors() + b)]; }
};

// Builds the plan. O(n + m^2 d) once per model (the cca table by walking up from each pair's
// deeper member; d = tree depth).
DelassusPlan plan_delassus(const Model& model);

}  // namespace batchdyn
