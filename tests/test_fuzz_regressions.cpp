// Every saved fuzz reproducer (tests/fuzz_regressions/<loader>/) goes through its fuzz target's
// function (fuzz/fuzz_inputs.hpp) and is loaded, or refused with batchdyn::Error: no other
// exception, no crash (and, in `./build.sh sanitize`, no sanitizer report).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/fuzz_inputs.hpp"

using namespace batchdyn;

namespace {
// The regression inputs of one loader, sorted (names say what each holds).
std::vector<std::filesystem::path> inputs(const std::string& loader) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(BATCHDYN_FUZZ_REGRESSIONS_DIR) + "/" + loader))
    files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <class Run>
void check_every_input(const std::string& loader, Run&& run) {
  const auto files = inputs(loader);
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    CAPTURE(file.string());
    std::string outcome;
    CHECK_NOTHROW(outcome = run(contents(file)));  // a batchdyn::Error is caught inside: its message is the outcome
    MESSAGE(file.filename().string() << ": " << (outcome.empty() ? "loads" : outcome));
  }
}
}  // namespace

TEST_CASE("every URDF fuzz reproducer loads or is refused with batchdyn::Error") {
  check_every_input("urdf", [](const std::string& text) { return fuzz::urdf_input(text); });
}

TEST_CASE("every SDF fuzz reproducer loads or is refused with batchdyn::Error") {
  check_every_input("sdf", [](const std::string& text) { return fuzz::sdf_input(text); });
}

TEST_CASE("every mesh-file fuzz reproducer is read into a hull within its bounds or refused with batchdyn::Error") {
  check_every_input("mesh", [](const std::string& bytes) { return fuzz::mesh_input(bytes); });
}

TEST_CASE("every constraint-JSON fuzz reproducer loads or is refused with batchdyn::Error") {
  check_every_input("constraints", [](const std::string& text) { return fuzz::constraints_input(text, BATCHDYN_MODELS_DIR); });
}

TEST_CASE("every contact-JSON fuzz reproducer loads or is refused with batchdyn::Error") {
  check_every_input("contacts", [](const std::string& text) { return fuzz::contacts_input(text, BATCHDYN_MODELS_DIR); });
}

TEST_CASE("every MJCF fuzz reproducer loads or is refused with batchdyn::Error") {
  check_every_input("mjcf", [](const std::string& text) { return fuzz::mjcf_input(text); });
}

TEST_CASE("every scene-JSON fuzz reproducer loads or is refused with batchdyn::Error") {
  check_every_input("scene", [](const std::string& text) { return fuzz::scene_input(text, BATCHDYN_MODELS_DIR); });
}
