// libFuzzer target: an MJCF document (topology/mjcf.cpp through libmujoco's compiler).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace batchdyn;
  const std::string input(reinterpret_cast<const char*>(data), size);
  (void)fuzz::mjcf_input(input);
  return 0;
}
