// The algorithm registry: one enum, one name and one set of traits per algorithm, read by the
// engine (batch/batch.hpp), the reference evaluation (batch/reference_eval.hpp), the CLI,
// Python and the benchmarks. A name is what the CLI's --algo, Python's strings and the
// benchmark labels say; the traits decide what a front end may ask of an algorithm. Adding a
// solver: an enumerator, its row in kAlgorithms, and its kernel call where the engine and the
// reference evaluation dispatch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "topology/model.hpp"

namespace batchdyn {

enum class Algorithm : std::uint8_t {
  Aba,          // forward dynamics of the tree (kernels/tree/aba.hpp), O(n)
  Lcaba,        // constrained forward dynamics by LCABA (kernels/loops/lcaba.hpp), augmented Lagrangian
  ProxBbo,      // constrained forward dynamics by proxBBO (kernels/loops/proxbbo.hpp), dual proximal point
  Constrained,  // constrained forward dynamics, dense and joint-space (kernels/loops/constrained_dynamics.hpp): the oracle
  PvOsimr,      // the Delassus matrix J M^-1 J^T by PV-OSIMr (kernels/delassus/pv_osimr.hpp), O(n + m^2)
  PvOsim,       // the Delassus matrix by PV-OSIM (kernels/delassus/pv_osim.hpp), O(n + m^2 d): the baseline
  Delassus,     // the Delassus matrix, dense (CRBA + Cholesky): the oracle
  Dense = Constrained,  // the dense solver's former name (ConstraintSolver::Dense, Python "dense")
};

struct AlgorithmTraits {
  Algorithm algorithm;
  const char* name;          // "aba", "lcaba", ...: CLI --algo, Python, benchmark labels
  const char* title;         // how reports name it
  bool solves_constraints;   // constrained forward dynamics: needs constraints, gives multipliers
  bool computes_delassus;    // reads q only and gives the m x m Delassus matrix
  bool runs_on_lanes;        // a kernel of the batch engine (SIMD lane blocks); else one environment at a time
  double default_mu;         // ProximalSettings::mu the front ends use for it (constraint solvers)
};

// Every algorithm, in enum order.
inline constexpr AlgorithmTraits kAlgorithms[] = {
    {Algorithm::Aba, "aba", "ABA", false, false, true, 0.0},
    // LCABA's primal solves lose accuracy as mu grows (lcaba-proxbbo §VI-D): 1e4 in double.
    {Algorithm::Lcaba, "lcaba", "LCABA", true, false, true, 1e4},
    {Algorithm::ProxBbo, "proxbbo", "proxBBO", true, false, true, 1e6},
    {Algorithm::Constrained, "constrained", "the dense proximal solver", true, false, false, 1e6},
    {Algorithm::PvOsimr, "pv-osimr", "PV-OSIMr", false, true, true, 0.0},
    {Algorithm::PvOsim, "pv-osim", "PV-OSIM", false, true, true, 0.0},
    {Algorithm::Delassus, "delassus", "the dense Delassus matrix (CRBA + Cholesky)", false, true, false, 0.0},
};

constexpr const AlgorithmTraits& algorithm_traits(Algorithm a) { return kAlgorithms[static_cast<int>(a)]; }

// The solver choice of the constrained dynamics (Batch::set_constraint_solver): an Algorithm that
// solves constraints (ConstraintSolver::Lcaba, ::ProxBbo, ::Constrained; ::Dense is the last one's former name).
using ConstraintSolver = Algorithm;
constexpr const char* algorithm_name(Algorithm a) { return algorithm_traits(a).name; }

// The names of the algorithms `accepts` keeps, "a, b or c".
template <class Predicate>
std::string algorithm_names(Predicate accepts) {
  std::string names, last;
  for (const AlgorithmTraits& t : kAlgorithms) {
    if (!accepts(t)) continue;
    if (!last.empty()) names += (names.empty() ? "" : ", ") + last;
    last = t.name;
  }
  return names.empty() ? last : names + " or " + last;
}

// The algorithm called `name` ("dense" is the dense solver's former name) among those `accepts`
// keeps. Throws Error starting with `who`, listing the names it would take.
template <class Predicate>
Algorithm parse_algorithm(std::string_view name, const std::string& who, Predicate accepts) {
  for (const AlgorithmTraits& t : kAlgorithms)
    if ((name == t.name || (name == "dense" && t.algorithm == Algorithm::Constrained)) && accepts(t)) return t.algorithm;
  throw Error(who + " must be " + algorithm_names(accepts) + " (got '" + std::string(name) + "')");
}
inline Algorithm parse_algorithm(std::string_view name, const std::string& who) {
  return parse_algorithm(name, who, [](const AlgorithmTraits&) { return true; });
}

// The predicates the front ends filter by.
inline bool is_constraint_solver(const AlgorithmTraits& t) { return t.solves_constraints; }
inline bool is_lane_delassus(const AlgorithmTraits& t) { return t.computes_delassus && t.runs_on_lanes; }

// Throws Error unless the model has constraint rows: what the constrained solvers (lcaba,
// proxbbo, constrained) and the Delassus kernels need. `what` names the entry point ("--algo
// lcaba", "batchdyn.delassus"). The scalar C++ kernels accept m = 0 (they return the tree's
// dynamics, or a 0 x 0 matrix); the front ends refuse it, since a user asking for constrained
// dynamics of an unconstrained model has almost surely forgotten the constraint file.
inline void require_constraints(const Model& model, const std::string& what) {
  if (model.constraint_rows == 0)
    throw Error(what + " needs constraints, and this model has none: give a constraint file (CLI --constraints FILE, Python "
                "load(path, constraints=FILE), C++ add_constraints_from_json_file) or a robot file with loops (<loop_joint>, SDF)");
}

}  // namespace batchdyn
