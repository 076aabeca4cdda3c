// Internal to the loaders (not installed): parse JSON text into nlohmann::json, turning every
// nlohmann exception (syntax, numbers out of range such as 1e999) into a batchdyn::Error
// that names the source.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topology/model.hpp"

namespace batchdyn::detail {

inline nlohmann::json parse_json(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": malformed JSON: " + e.what());
  }
}

// Runs f(); a nlohmann exception from a value of the wrong kind becomes an Error naming the source.
template <class F>
auto with_json_errors(const std::string& source, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": " + e.what());
  }
}

}  // namespace batchdyn::detail
