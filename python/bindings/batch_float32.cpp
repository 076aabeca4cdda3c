// batchdyn.BatchFloat32: the Python Batch in float (python/bindings/batch.hpp).
#include "bindings/batch.hpp"

namespace batchdyn::python {

void bind_batch_float32(py::module_& m) { bind_batch<float>(m, "BatchFloat32"); }

}  // namespace batchdyn::python
