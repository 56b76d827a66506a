// n:m structured sparsity: prune, validate, compress, the impact report and the 2:4 NMLinear.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"
#include "sparseflow/nm_linear.h"

namespace sparseflow::python {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(ErrorCode::kInvalidArgument, message);
}

std::vector<float> biasValues(const py::object& bias) {
  if (bias.is_none()) return {};
  const auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(bias);
  if (!array || array.ndim() != 1) invalid("bias must be a 1-d array of float32 values");
  return std::vector<float>(array.data(), array.data() + array.size());
}

NMLinear makeLinear(const Tensor& weights, const py::object& bias, const std::string& epilogue,
                    int32_t threads) {
  std::vector<float> values = biasValues(bias);
  NMLinearOptions options;
  options.threads = threads;
  const Epilogue parsed = Epilogue::parse(epilogue);
  py::gil_scoped_release release;  // packing reads every weight
  return NMLinear(weights, std::move(values), parsed, options);
}

/// y = epilogue(x · Wᵀ + b) on caller arrays: x batch × in, y batch × out, both of `dtype`
/// (f32 or the weights' dtype; bf16 as 2-byte raw bits), C-contiguous. No copies.
void forwardInto(const NMLinear& layer, const py::array& x, const py::array& y,
                 const std::string& dtype) {
  const DType type = parseDType(dtype);
  const Buffer xb = viewOfArray(x, type, "x");
  Buffer yb = viewOfArray(y, type, "y");
  if (x.ndim() != 2 || x.shape(1) != layer.inFeatures()) {
    invalid("x must be batch × " + std::to_string(layer.inFeatures()) + " (in_features)");
  }
  const int64_t batch = x.shape(0);
  if (y.ndim() != 2 || y.shape(0) != batch || y.shape(1) != layer.outFeatures()) {
    invalid("y must be " + std::to_string(batch) + " × " + std::to_string(layer.outFeatures()) +
            " (batch × out_features)");
  }
  if (batch == 0) return;
  py::gil_scoped_release release;
  layer.forward(xb.data(), type, batch, yb.data());
}

}  // namespace

void bindNM(py::module_& m) {
  py::class_<nm::Impact>(m, "Impact", "What pruning cost, in float64 over all elements.")
      .def_readonly("max_abs_error", &nm::Impact::maxAbsError)
      .def_readonly("mean_abs_error", &nm::Impact::meanAbsError)
      .def_readonly("relative_frobenius_error", &nm::Impact::relativeFrobeniusError)
      .def_readonly("kept_magnitude_fraction", &nm::Impact::keptMagnitudeFraction)
      .def_readonly("kept", &nm::Impact::kept)
      .def_readonly("total", &nm::Impact::total)
      .def("__str__", &nm::Impact::toString)
      .def("__repr__", [](const nm::Impact& i) { return "Impact(" + i.toString() + ")"; });

  m.def(
      "nm_pattern", [](const std::string& text) { return nm::NMPattern::parse(text).toString(); },
      py::arg("text"), "The canonical text of an n:m pattern (raises ParseError/InvalidArgument).");
  m.def(
      "nm_prune",
      [](const Tensor& t, const std::string& pattern) {
        const nm::NMPattern p = nm::NMPattern::parse(pattern);
        py::gil_scoped_release release;
        return nm::prune(t, p);
      },
      py::arg("tensor"), py::arg("pattern") = "2:4");
  m.def(
      "nm_validate",
      [](const Tensor& t, const std::string& pattern) {
        nm::validate(t, nm::NMPattern::parse(pattern));
      },
      py::arg("tensor"), py::arg("pattern") = "2:4");
  m.def(
      "nm_is_nm",
      [](const Tensor& t, const std::string& pattern) {
        return nm::isNM(t, nm::NMPattern::parse(pattern));
      },
      py::arg("tensor"), py::arg("pattern") = "2:4");
  m.def(
      "nm_compress",
      [](const Tensor& t, const std::string& pattern) {
        return nm::compress(t, nm::NMPattern::parse(pattern));
      },
      py::arg("tensor"), py::arg("pattern") = "2:4");
  m.def("nm_decompress", &nm::decompress, py::arg("tensor"));
  m.def(
      "nm_pattern_of", [](const Tensor& t) { return nm::patternOf(t).toString(); },
      py::arg("tensor"));
  m.def(
      "nm_measure_impact",
      [](const Tensor& original, const Tensor& pruned) {
        py::gil_scoped_release release;
        return nm::measureImpact(original, pruned);
      },
      py::arg("original"), py::arg("pruned"));
  m.def(
      "nm_sparsify",
      [](const Tensor& t, const std::string& pattern) {
        const nm::NMPattern p = nm::NMPattern::parse(pattern);
        nm::Sparsified s;
        {
          py::gil_scoped_release release;
          s = nm::sparsify(t, p);
        }
        return py::make_tuple(std::move(s.compressed), s.impact);
      },
      py::arg("tensor"), py::arg("pattern") = "2:4",
      "prune + compress + measure_impact: (the n:m tensor, its Impact).");

  m.def("activations", [] {
    std::vector<std::string> names;
    for (Activation a : allActivations()) names.emplace_back(activationName(a));
    return names;
  });
  m.def(
      "parse_epilogue", [](const std::string& text) { return Epilogue::parse(text).toString(); },
      py::arg("text"));

  py::class_<NMLinear>(m, "_NMLinear", "y = epilogue(x · Wᵀ + b) with 2:4 weights (CPU).")
      .def(py::init(&makeLinear), py::arg("weights"), py::arg("bias") = py::none(),
           py::arg("epilogue") = "none", py::arg("threads") = 0)
      .def_property_readonly("in_features", &NMLinear::inFeatures)
      .def_property_readonly("out_features", &NMLinear::outFeatures)
      .def_property_readonly(
          "weight_dtype", [](const NMLinear& l) { return std::string(dtypeName(l.weightType())); })
      .def_property_readonly("epilogue", [](const NMLinear& l) { return l.epilogue().toString(); })
      .def_property_readonly("weight_bytes", &NMLinear::weightBytes)
      .def(
          "describe", [](const NMLinear& l, int64_t batch) { return l.describe(batch); },
          py::arg("batch"))
      .def(
          "forward",
          [](const NMLinear& l, const Tensor& x) {
            py::gil_scoped_release release;
            return l.forward(x);
          },
          py::arg("x"))
      .def("forward_into", &forwardInto, py::arg("x"), py::arg("y"), py::arg("dtype"));
}

}  // namespace sparseflow::python
