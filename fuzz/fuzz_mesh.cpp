// libFuzzer target: a mesh file (topology/mesh_file.cpp: STL binary or ASCII, OBJ) and its hull
// (decimate_hull), as a URDF <mesh> loads it.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace batchdyn;
  const std::string input(reinterpret_cast<const char*>(data), size);
  (void)fuzz::mesh_input(input);
  return 0;
}
