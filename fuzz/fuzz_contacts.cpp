// libFuzzer target: a contact JSON file (topology/contacts.cpp) on the shipped quadruped.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace batchdyn;
  const std::string input(reinterpret_cast<const char*>(data), size);
  (void)fuzz::contacts_input(input, BATCHDYN_MODELS_DIR);
  return 0;
}
