// libFuzzer target: an SDF document (sdformat, then topology/sdf.cpp: graph and loop closure).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace batchdyn;
  const std::string input(reinterpret_cast<const char*>(data), size);
  (void)fuzz::sdf_input(input);
  return 0;
}
