// Internal to the loaders (not installed): parse JSON text into nlohmann::json, turning every
// nlohmann exception (syntax, numbers out of range such as 1e999) into a batchdyn::Error
// that names the source.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "topology/model.hpp"

namespace batchdyn::detail {

// The whole file at `path`, or an Error "<path>: cannot open <what>".
inline std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open " + what);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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

// [x, y, z]: three numbers, or an Error naming `where`.
inline Vec3d read_vec3(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 3 || !j[0].is_number() || !j[1].is_number() || !j[2].is_number())
    throw Error(where + ": expected an array of 3 numbers");
  return {j[0].get<double>(), j[1].get<double>(), j[2].get<double>()};
}

// {"xyz": [...], "rpy": [...]} (each optional, zero by default), or an Error naming `where`.
inline Placement read_placement(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object {\"xyz\": [...], \"rpy\": [...]}");
  Placement p;
  if (j.contains("xyz")) p.xyz = read_vec3(j["xyz"], where + ".xyz");
  if (j.contains("rpy")) p.rpy = read_vec3(j["rpy"], where + ".rpy");
  return p;
}

}  // namespace batchdyn::detail
