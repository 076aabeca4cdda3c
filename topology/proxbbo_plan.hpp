// The proxBBO plan (lcaba-proxbbo §V, Alg. 4-6): which loops each link carries when the
// backward sweep reaches it, where each loop's multipliers are eliminated (at its root), and
// the layout of every block the kernel (kernels/loops/proxbbo.hpp) touches. Plain index arrays,
// computed once per model; the kernel never searches the graph.
//
// Links are eliminated in ABA's order (n-1 down to 1). When link i is reached, N_i is the set
// of loops with a side on i plus the loops its children passed up (eq. 47). It splits into
// R_i, the loops whose root 𝔯_j is i (their multipliers are eliminated now, eq. 49-53), and
// U_i = N_i - R_i = LS(i), which go on to the parent. Loops rooted at the world (external
// loops, and internal loops between different subtrees of the world) are solved last, all
// together.
//
// Blocks:
//   K_{j,i}  the rows of loop j seen from link i, dim_j force columns in i's frame
//            (k_block[..] offsets into a pool of force columns)
//   L_{j,k}  the dual coupling of loops j <= k, dim_j x dim_k, row-major (l_slot offsets into
//            a pool of scalars; one triangle stored)
//   e_j      the dual linear term of loop j, dim_j values (at the loop's constraint row)
#pragma once

#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

struct ProxBboPlan {
  // One loop of N_i.
  struct Entry {
    int loop = 0;          // index into model.constraints
    int k_block = 0;       // where K_{loop,i} starts in the K pool (dim force columns)
    int parent_k_block = -1;  // K_{loop,π(i)} for U-loops of a link whose parent is not the world, else -1
  };
  std::vector<int> elimination_order;  // n-1 .. 1

  // Per body (size n + 1, index = body): N_i = entries[entry_begin[i] .. entry_begin[i + 1]),
  // the R-loops first (r_count[i] of them), then the U-loops; each part by ascending loop index.
  std::vector<int> entry_begin;
  std::vector<int> r_count;
  std::vector<Entry> entries;
  std::vector<int> r_rows;       // per body: sum of dim over R_i (the size of L_{R,R})
  std::vector<int> u_rows;       // per body: sum of dim over U_i
  std::vector<int> factor_begin;  // per body: where the Cholesky factor of L_{R,R} starts (r_rows^2 scalars)

  // The world's set: loops rooted at the world, solved after the backward sweep.
  std::vector<int> world_loops;
  int world_rows = 0;
  int world_factor_begin = 0;

  // L_{j,k} for loops j <= k: slot offset into the L pool, or -1 when the two never couple.
  // Row-major num_loops x num_loops (read l_slot(j, k) with j <= k).
  std::vector<int> l_slot_table;
  int num_loops = 0;
  int l_slot(int j, int k) const { return j <= k ? l_slot_table[static_cast<size_t>(j * num_loops + k)] : l_slot_table[static_cast<size_t>(k * num_loops + j)]; }

  std::vector<int> loop_dim, loop_row, loop_root;  // per loop
  // Per loop and side (body1, body2): the K block its rows K^side start in (at the side's own
  // body), or -1 for a side on the world. [2 * loop + side]
  std::vector<int> side_k_block;
  int k_pool = 0;       // force columns
  int l_pool = 0;       // scalars
  int factor_pool = 0;  // scalars
  int max_block_rows = 0;  // m_b: the largest sum of dims in one N_i (or the world's set)
};

// O(n m + m^2) once per model.
ProxBboPlan plan_proxbbo(const Model& model);

}  // namespace batchdyn
