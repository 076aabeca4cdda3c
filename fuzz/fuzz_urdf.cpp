// libFuzzer target: a URDF document (topology/urdf.cpp), fixed and free-flyer root.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace batchdyn;
  const std::string input(reinterpret_cast<const char*>(data), size);
  (void)fuzz::urdf_input(input);
  return 0;
}
