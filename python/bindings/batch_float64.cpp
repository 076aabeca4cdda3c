// batchdyn.BatchFloat64: the Python Batch in double (python/bindings/batch.hpp).
#include "bindings/batch.hpp"

namespace batchdyn::python {

void bind_batch_float64(py::module_& m) { bind_batch<double>(m, "BatchFloat64"); }

}  // namespace batchdyn::python
