// The LCABA plan (lcaba-proxbbo §IV-A "Elimination ordering", Alg. 1): the order in which the
// backward sweep eliminates the spanning-tree links, and for every link the neighbours it is
// coupled to at that moment through the loops' penalty terms (eq. 23-25, 30-32). Plain index
// arrays computed once per model by a symbolic run of the elimination; the kernel
// (kernels/loops/lcaba.hpp) walks them and never searches the graph.
//
// Coupling blocks. H_{a,b} (a != b, both moving bodies) is a general 6 x 6 block of the
// cost-to-go, a_a^T H_{a,b} a_b, rows in body a's frame. Only one triangle is stored: slot s
// holds H_{lo,hi} for its pair lo < hi (slot_bodies[s]); H_{hi,lo} is its transpose.
//
// Elimination order S^E: minimum degree over the current leaves (links whose children are all
// eliminated): the leaf with the fewest current neighbours goes first; ties go to the largest
// body index. Without loops this is n-1, ..., 1, exactly ABA's backward sweep.
//
// Constraints to the world (external loops) couple nothing (eq. 35): the world's acceleration
// a_0 is known, so they only add to their body's own H_{i,i} and bias.
#pragma once

#include <utility>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

struct LcabaPlan {
  // H_{i,j} (or another block) as a stored slot: H = slot, or its transpose.
  struct BlockRef {
    int slot = -1;
    bool transposed = false;
  };
  // Neighbour j of link i at i's elimination.
  struct Neighbour {
    int body = 0;
    BlockRef coupling;         // H_{i,j}
    BlockRef parent_coupling;  // H_{π(i),j}, which the elimination adds to; slot -1 when π(i) is the world or j = π(i)
    int column_offset = 0;     // where H_{j,i} S_i (nv_i force columns, frame j) starts in the kernel's column pool
  };

  std::vector<int> elimination_order;  // S^E, bodies 1..n-1
  std::vector<int> step_of_body;       // position of each body in S^E (body 0: -1)

  // N_i at the moment link i is eliminated: neighbours[neighbour_begin[i] .. neighbour_begin[i + 1]),
  // ascending body index. Indexed by body (size n + 1).
  std::vector<int> neighbour_begin;
  std::vector<Neighbour> neighbours;
  // The π(i) ∈ N_i special case (eq. 34): index of π(i) within N_i, or -1. Per body.
  std::vector<int> parent_neighbour;
  // H_{j,k} for every pair of N_i, a <= b in N_i's order: pair_slot[pair_begin[i] + t] for the
  // t-th pair (row-major upper triangle incl. the diagonal); -1 on the diagonal (H_{j,j} is the
  // body's own articulated inertia). Stored as H_{N[a], N[b]} (never transposed: N is ascending).
  std::vector<int> pair_begin;
  std::vector<int> pair_slot;

  // Per constraint: the block H_{body1, body2} its penalty term (eq. 25) adds to; slot -1 for a
  // constraint to the world.
  std::vector<BlockRef> constraint_coupling;

  std::vector<std::pair<int, int>> slot_bodies;  // (lo, hi) of each slot
  int num_slots() const { return static_cast<int>(slot_bodies.size()); }
  int coupling_columns = 0;  // size of the H_{j,i} S_i column pool: sum over i of |N_i| nv_i
  int max_neighbours = 0;    // m_c: the largest |N_i| met during the elimination
  // Neighbour count of each body at its elimination (for reports). Per body.
  std::vector<int> neighbour_count;

  // Where H_{i,i} starts from I_i (as ABA's LeavesOnly sweep, kernels/tree/joint_elimination.hpp:
  // with_parent_body_inertia). inertia_copied: the bodies whose H_{i,i} the kernel sets to I_i
  // before the penalty terms, because something reads or adds to it before a child's carry
  // does (a leaf; a body with a constraint side; a neighbour or parent that an elimination
  // couples into first). carry_starts_parent[i]: i's carry is the first write into
  // H_{π(i),π(i)}, which it then forms as I_π + X* H^a_i X, the same sum bit for bit without
  // the copy. Per body.
  std::vector<int> inertia_copied;
  std::vector<char> carry_starts_parent;
};

// Runs the symbolic elimination. O(n^2 + n m_c^2) once per model.
LcabaPlan plan_lcaba(const Model& model);

}  // namespace batchdyn
