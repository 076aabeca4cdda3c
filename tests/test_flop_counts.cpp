// The kernels' flop counts on the shipped humanoid and quadruped, pinned. Counted on CountingLane (layout/counting_lane.hpp, through
// batch/throughput.hpp): one evaluation runs a kernel's arithmetic once, and since the kernels
// never branch on the state, that count is the cost of every call. A change that adds arithmetic
// fails here and shows by how much; one that removes arithmetic updates these pins on purpose.
#include "helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

Model with_constraints(Model m, const std::string& file) {
  add_constraints_from_json_file(m, model_path(file));
  return m;
}

}  // namespace

TEST_CASE("ABA costs 16,554 flops on the 36-dof humanoid and 7,050 on the 18-dof quadruped") {
  const Model h = humanoid(), q = quadruped();
  REQUIRE(h.nv == 36);
  REQUIRE(q.nv == 18);
  // 460 per dof (807 before the coordinate-axis joints, 467 before the root's 6 x 6 D^-1 by
  // L^-T L^-1); the target is <= 500
  CHECK(aba_flops(h).total() == 16554);
  CHECK(aba_flops(q).total() == 7050);  // 392 per dof (678, then 407)
}

TEST_CASE("PV-OSIMr costs 24,657 flops on the humanoid with feet and hands and 7,896 on the quadruped with feet") {
  const Model h = with_constraints(humanoid(), "humanoid_feet_hands.json");
  const Model q = with_constraints(quadruped(), "quadruped_feet.json");
  REQUIRE(h.constraint_rows == 24);
  REQUIRE(q.constraint_rows == 12);
  // 40,237 before the coordinate-axis joints, then 27,193, then 26,922, then 26,346 (m^2 fewer
  // since each block of G is stored by its first pair instead of added to zeros); side 1's
  // columns are model constants since (ConstraintConstants::body1_columns), then 25,194; a chain
  // that ends at a child of the root no longer carries its propagator past P_i (432 fewer), then
  // 24,762; a chain's head joint assigns its term of ^{Nanc}Ω instead of adding it to zeros
  CHECK(delassus_flops(h).total() == 24657);
  CHECK(delassus_flops(q).total() == 7896);  // 13,843, then 9,343, then 9,072, then 8,928, then 8,352, then 7,920
}

TEST_CASE("LCABA's first pass costs 21,239 flops on the humanoid with feet and hands and 10,073 on the quadruped with feet") {
  // Including the rows' violation and its squared 2-norm (2 flops per row), which the stopping
  // test compares from the first correction on (kernels/loops/loop_constraints.hpp).
  // Since side 1's columns and their penalty term mu K^1^T K^1 are read from the model's
  // constants (ConstraintConstants::body1_columns, body1_gram) and a side on the world forms no
  // rows (LoopConstraintTerms::columns): 25,619 and 12,437 before; 23,447 and 10,985 with the
  // columns alone, 22,223 and 10,481 with the penalty term.
  CHECK(loop_dynamics_flops(with_constraints(humanoid(), "humanoid_feet_hands.json"), 1).total() == 21239);  // 38,910 before the coordinate-axis joints, then 25,890
  CHECK(loop_dynamics_flops(with_constraints(quadruped(), "quadruped_feet.json"), 1).total() == 10073);       // 17,916, then 12,708
}
