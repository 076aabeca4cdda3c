// What `batchdyn info --json` prints and Python's Model.info() returns: a model's sizes,
// joints, frames, loops and Delassus plan as one JSON document.
#pragma once

#include <string>

#include "topology/model.hpp"

namespace batchdyn {

// The JSON text (indent < 0: one line). O(n + m^2) (the Delassus plan).
std::string model_info_json(const Model& model, int indent = -1);

}  // namespace batchdyn
