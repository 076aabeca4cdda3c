// What `batchdyn info --json` prints and Python's Model.info() returns: a model's sizes,
// joints, frames, loops and Delassus plan as one JSON document.
#pragma once

#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

// The JSON text (indent < 0: one line). `singular_joints` are the model's joints that move no
// mass (kernels/tree/singular_joints.hpp: find_singular_joints, which needs the dynamics, so the
// caller runs it). O(n + m^2) (the Delassus plan).
std::string model_info_json(const Model& model, const std::vector<int>& singular_joints, int indent = -1);

}  // namespace batchdyn
