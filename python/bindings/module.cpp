// The Python module `batchdyn` (compiled part: batchdyn._batchdyn): its error type, and the
// parts bound by python/bindings/*.cpp. batchdyn.Error is a ValueError.
#include "bindings/common.hpp"

using namespace batchdyn;
using namespace batchdyn::python;

PYBIND11_MODULE(_batchdyn, m) {
  m.doc() = "batchdyn: batched rigid-body dynamics (compiled core)";
  static py::exception<Error> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

  bind_model(m);
  bind_reference_functions(m);
  bind_batch_float32(m);
  bind_batch_float64(m);

  // batch/env_status.hpp's table: (code, name, whether it is a report on a stepped state).
  py::list statuses;
  for (const EnvStatusTraits& t : kEnvStatuses) statuses.append(py::make_tuple(static_cast<int>(t.status), t.name, t.report));
  m.attr("_status_table") = statuses;
  m.attr("simd_width_float32") = Batch<float>::W;
  m.attr("simd_width_float64") = Batch<double>::W;
}
