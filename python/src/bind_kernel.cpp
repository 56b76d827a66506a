// sparseflow.Kernel: compile index notation to native code (JIT), run it, show what was made.
#include <pybind11/stl.h>

#include <map>
#include <string>

#include "bindings.h"
#include "sparseflow/kernel.h"

namespace sparseflow::python {
namespace {

Kernel compileKernel(const std::string& text, const std::map<std::string, std::string>& formats,
                     const std::map<std::string, std::string>& dtypes, bool parallel, bool useCache,
                     const std::string& schedule, bool handTuned) {
  KernelOptions options;
  options.formats = formats;
  for (const auto& [name, dtype] : dtypes) options.dtypes[name] = parseDType(dtype);
  options.parallel = parallel;
  options.useCache = useCache;
  options.schedule = schedule;
  options.handTuned = handTuned;
  py::gil_scoped_release release;  // the system compiler may run for a while
  return Kernel::compile(text, options);
}

Tensor runKernel(const Kernel& kernel, const std::map<std::string, const Tensor*>& inputs,
                 const std::map<std::string, double>& params) {
  // The tensors stay alive: the caller's dict holds them for the whole call.
  py::gil_scoped_release release;
  return kernel.run(inputs, params);
}

}  // namespace

void bindKernel(py::module_& m) {
  py::class_<Kernel>(m, "_Kernel", "A compiled kernel (use sparseflow.compile).")
      .def_static("compile", &compileKernel, py::arg("text"),
                  py::arg("formats") = std::map<std::string, std::string>{},
                  py::arg("dtypes") = std::map<std::string, std::string>{},
                  py::arg("parallel") = true, py::arg("use_cache") = true, py::arg("schedule") = "",
                  py::arg("hand_tuned") = true)
      .def("run", &runKernel, py::arg("inputs"),
           py::arg("params") = std::map<std::string, double>{})
      .def_property_readonly("text", &Kernel::text)
      .def_property_readonly("source", &Kernel::source, "The generated C++.")
      .def_property_readonly("ir", &Kernel::ir, "The loop IR, printed.")
      .def_property_readonly("from_cache", &Kernel::fromCache)
      .def("mlir", &Kernel::mlir,
           "The kernel as textual MLIR (raises NotSupported for formats "
           "MLIR cannot express).")
      .def("describe", &Kernel::describe,
           "Formats, loop order per nest, parallel loops, densified operands, cache use.");
}

}  // namespace sparseflow::python
