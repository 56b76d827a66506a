// The _sparseflow extension module: one call per binding file; the package is python/sparseflow/.
#include "bindings.h"

PYBIND11_MODULE(_sparseflow, m) {
  m.doc() = "sparseflow's C++ core (use the `sparseflow` package, which wraps this module).";
  namespace sfp = sparseflow::python;
  sfp::bindErrors(m);
  sfp::bindTensor(m);
  sfp::bindIo(m);
  sfp::bindKernel(m);
  sfp::bindTune(m);
  sfp::bindNM(m);
  sfp::bindGraph(m);
#ifdef SPARSEFLOW_VERSION
  m.attr("__version__") = SPARSEFLOW_VERSION;
#endif
}
