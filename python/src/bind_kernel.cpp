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
                     const Schedule& schedule, bool handTuned) {
  KernelOptions options = kernelOptions(formats, dtypes, parallel, useCache, handTuned);
  options.schedule = schedule;
  py::gil_scoped_release release;  // the system compiler may run for a while
  return Kernel::compile(text, options);
}

Tensor runKernel(const Kernel& kernel, const std::map<std::string, const Tensor*>& inputs,
                 const std::map<std::string, double>& params) {
  // The tensors stay alive: the caller's dict holds them for the whole call.
  py::gil_scoped_release release;
  return kernel.run(inputs, params);
}

void runKernelInto(const Kernel& kernel, const std::map<std::string, const Tensor*>& inputs,
                   Tensor& output, const std::map<std::string, double>& params) {
  py::gil_scoped_release release;
  kernel.run(inputs, output, params);
}

}  // namespace

KernelOptions kernelOptions(const std::map<std::string, std::string>& formats,
                            const std::map<std::string, std::string>& dtypes, bool parallel,
                            bool useCache, bool handTuned) {
  KernelOptions options;
  options.formats = formats;
  for (const auto& [name, dtype] : dtypes) options.dtypes[name] = parseDType(dtype);
  options.parallel = parallel;
  options.useCache = useCache;
  options.handTuned = handTuned;
  return options;
}

void bindSchedule(py::module_& m) {
  using S = Schedule;
  const auto self = py::return_value_policy::reference_internal;
  py::class_<S>(m, "Schedule",
                "Schedule builder: Schedule().split('i', 'i0', 'i1', 64).parallel('i0') is the "
                "text 'split(i, i0, i1, 64); parallel(i0)' (docs/compiler.md).")
      .def(py::init<>())
      .def(py::init<std::string>(), py::arg("text"))
      .def("reorder", &S::reorder, py::arg("loops"), self)
      .def("split", &S::split, py::arg("loop"), py::arg("outer"), py::arg("inner"),
           py::arg("factor"), self)
      .def("fuse", &S::fuse, py::arg("outer"), py::arg("inner"), py::arg("fused"), self)
      .def("parallel", &S::parallel, py::arg("loop"), py::arg("atomic") = false, self)
      .def("vectorize", &S::vectorize, py::arg("loop"), self)
      .def("unroll", &S::unroll, py::arg("loop"), py::arg("factor"), self)
      .def("precompute", &S::precompute, py::arg("tensor"), py::arg("loop"), self)
      .def("sparse_reorder", &S::sparseReorder, py::arg("tensor"), py::arg("indices"), self)
      .def("sparse_fuse", &S::sparseFuse, py::arg("tensor"), py::arg("indices"), self)
      .def("decompose", &S::decompose, py::arg("tensor"), py::arg("ell_width"), self)
      .def("bind", &S::bind, py::arg("loop"), py::arg("axis"), self)
      .def_property_readonly("text", &S::toString)
      .def("__str__", &S::toString)
      .def("__repr__", [](const S& s) {
        return "sparseflow.Schedule(" + py::repr(py::str(s.toString())).cast<std::string>() + ")";
      });
}

void bindKernel(py::module_& m) {
  bindSchedule(m);
  py::class_<Kernel>(m, "_Kernel", "A compiled kernel (use sparseflow.compile).")
      .def_static("compile", &compileKernel, py::arg("text"),
                  py::arg("formats") = std::map<std::string, std::string>{},
                  py::arg("dtypes") = std::map<std::string, std::string>{},
                  py::arg("parallel") = true, py::arg("use_cache") = true,
                  py::arg("schedule") = Schedule(), py::arg("hand_tuned") = true)
      .def("run", &runKernel, py::arg("inputs"),
           py::arg("params") = std::map<std::string, double>{})
      .def("run_into", &runKernelInto, py::arg("inputs"), py::arg("output"),
           py::arg("params") = std::map<std::string, double>{})
      .def_property_readonly("provider", &Kernel::provider,
                             "The provider that runs the kernel (csr_spmm, nm_linear, "
                             "dense_linear, generated...).")
      .def_property_readonly("text", &Kernel::text)
      .def_property_readonly("source", &Kernel::source,
                             "The generated C++ (or a comment naming the hand-tuned kernel).")
      .def_property_readonly("ir", &Kernel::ir, "The loop IR as compiled, printed.")
      .def_property_readonly("from_cache", &Kernel::fromCache)
      .def("mlir", &Kernel::mlir,
           "The kernel as textual MLIR (raises NotSupported for formats "
           "MLIR cannot express).")
      .def("describe", &Kernel::describe,
           "Formats, loop order per nest, parallel loops, densified operands, cache use.");
}

}  // namespace sparseflow::python
