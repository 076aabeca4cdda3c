// Constraints from JSON files and the "hold where it stands" helper.
//
// JSON schema (docs/conventions.md, "Constraint files"):
// { "reference_q": "neutral" | [nq numbers],        (optional, for "hold")
//   "constraints": [ { "name": str, "type": "connect"|"weld"|"revolute",
//                      "link1": str, "link2": str | "world",
//                      "placement1": {"xyz": [3], "rpy": [3]},    (optional, identity)
//                      "placement2": {"xyz": [3], "rpy": [3]} | "hold",
//                      "axis": [3],                                (revolute, default [0,0,1])
//                      "kp": num, "kd": num } ],                   (optional Baumgarte gains)
//   "lock_joints": ["name", ...] | {"name": position | null, ...},   (optional, applied first)
//   "armature": number | {"name": value, ...} }                     (optional, rotor inertia)
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

// Returns `spec` with placement2 chosen so that the constraint holds exactly at configuration
// q (frame 2 coincides with frame 1): how a user welds feet where they stand.
ConstraintSpec hold_at_configuration(const Model& model, ConstraintSpec spec, const Eigen::VectorXd& q);

// Parses a constraint file's text, applies its joint locks (first: they rebuild the model)
// and armature, and adds its
// constraints to the model. `source` names the file in every error message (syntax, numbers
// out of range, missing field, wrong type, unknown link or joint, ...); errors are Error.
void add_constraints_from_json(Model& model, const std::string& json_text, const std::string& source);
void add_constraints_from_json_file(Model& model, const std::string& path);

}  // namespace batchdyn
