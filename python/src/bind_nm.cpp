// n:m structured sparsity: prune, validate, compress, the impact report and the 2:4 layer.
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "nm_layer.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"

namespace sparseflow::python {
namespace {

std::vector<float> biasValues(const py::object& bias) {
  if (bias.is_none()) return {};
  const auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(bias);
  if (!array || array.ndim() != 1) invalid("bias must be a 1-d array of float32 values");
  return std::vector<float>(array.data(), array.data() + array.size());
}

/// The layer's activation from its name ("none", "relu", "gelu"...); "bias" is not one.
Activation activationOf(const std::string& name) {
  const Epilogue parsed = Epilogue::parse(name);
  if (parsed.bias)
    invalid("'" + name + "' is not an activation (none, relu, silu, gelu, gelu_tanh)");
  return parsed.activation;
}

std::shared_ptr<NMLayer> makeLayer(const Tensor& weights, const py::object& bias,
                                   const std::string& activation, int32_t threads) {
  std::vector<float> values = biasValues(bias);
  const Activation parsed = activationOf(activation);
  py::gil_scoped_release release;  // copying and packing read every weight
  return std::make_shared<NMLayer>(weights, std::move(values), !bias.is_none(), parsed, threads);
}

/// y = activation(x · Wᵀ + b) (or the pre-activation) on caller arrays: x batch × in, y batch ×
/// out, both of `dtype` (f32 or the weights' dtype; bf16 as 2-byte raw bits), C-contiguous.
void forwardInto(const NMLayer& layer, const py::array& x, const py::array& y,
                 const std::string& dtype, bool preActivation) {
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
  layer.forward(xb.data(), type, batch, yb.data(), preActivation);
}

/// dX = dZ · W: dz batch × out_features (float32), returned as a new batch × in_features array.
py::array_t<float> backwardInput(const NMLayer& layer, const py::array& dz) {
  const auto grad = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(dz);
  if (!grad || grad.ndim() != 2 || grad.shape(1) != layer.outFeatures()) {
    invalid("the output gradient must be batch × " + std::to_string(layer.outFeatures()) +
            " (out_features) float32 values");
  }
  const int64_t batch = grad.shape(0);
  py::array_t<float> dx({batch, layer.inFeatures()});
  const float* dzData = grad.data();
  float* dxData = dx.mutable_data();
  {
    py::gil_scoped_release release;
    layer.backwardInput(dzData, batch, dxData);
  }
  return dx;
}

/// A C-contiguous array's bytes (read-only is fine: nothing is written).
std::pair<const void*, int64_t> bytesOf(const py::array& array, const char* what) {
  if (!(array.flags() & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_)) {
    invalid(std::string(what) + " must be C-contiguous");
  }
  return {array.data(), static_cast<int64_t>(array.nbytes())};
}

bool sameState(const NMLayer& layer, const py::array& values, const py::array& meta,
               const py::object& bias) {
  const auto [valueData, valueBytes] = bytesOf(values, "values");
  const auto [metaData, metaBytes] = bytesOf(meta, "meta");
  const float* biasData = nullptr;
  int64_t biasCount = 0;
  py::array biasArray;
  if (!bias.is_none()) {
    biasArray = py::cast<py::array>(bias);
    if (dtypeOfNumpy(biasArray.dtype(), "bias") != DType::kF32) return false;
    biasData = static_cast<const float*>(bytesOf(biasArray, "bias").first);
    biasCount = static_cast<int64_t>(biasArray.size());
  }
  py::gil_scoped_release release;
  return layer.sameState(valueData, valueBytes, metaData, metaBytes, biasData, biasCount);
}

/// A numpy array that owns a copy of `buffer` (never a view of the layer's memory).
py::array copyOf(const Buffer& buffer, const std::vector<py::ssize_t>& shape) {
  py::array out(numpyDtypeOf(buffer.dtype()), shape);
  if (buffer.bytes() > 0) std::memcpy(out.mutable_data(), buffer.data(), buffer.bytes());
  return out;
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

  py::class_<NMLayer, std::shared_ptr<NMLayer>>(
      m, "_NMLayer",
      "y = activation(x · Wᵀ + b) with 2:4 weights owned by the layer (CPU); immutable.")
      .def(py::init(&makeLayer), py::arg("weights"), py::arg("bias") = py::none(),
           py::arg("activation") = "none", py::arg("threads") = 0)
      .def_property_readonly("in_features", &NMLayer::inFeatures)
      .def_property_readonly("out_features", &NMLayer::outFeatures)
      .def_property_readonly(
          "weight_dtype", [](const NMLayer& l) { return std::string(dtypeName(l.weightType())); })
      .def_property_readonly("has_bias", &NMLayer::hasBias)
      .def_property_readonly(
          "activation",
          [](const NMLayer& l) { return std::string(activationName(l.activation())); })
      .def_property_readonly("threads", &NMLayer::threads)
      .def_property_readonly("pattern",
                             [](const NMLayer& l) { return nm::patternOf(l.weights()).toString(); })
      .def_property_readonly("weight_bytes",
                             [](const NMLayer& l) { return l.fused().weightBytes(); })
      .def(
          "describe", [](const NMLayer& l, int64_t batch) { return l.fused().describe(batch); },
          py::arg("batch"))
      .def("forward_into", &forwardInto, py::arg("x"), py::arg("y"), py::arg("dtype"),
           py::arg("pre_activation") = false)
      .def("backward_input", &backwardInput, py::arg("dz"),
           "dX = dZ · W through the CSR SpMM (float32 in and out).")
      .def("same_state", &sameState, py::arg("values"), py::arg("meta"), py::arg("bias"),
           "True when the arrays hold exactly this layer's values, meta and bias (bit for bit).")
      .def(
          "weight_values",
          [](const NMLayer& l) {
            const Buffer& v = l.weights().values();
            return copyOf(
                v, {static_cast<py::ssize_t>(l.outFeatures()),
                    static_cast<py::ssize_t>(l.outFeatures() ? v.size() / l.outFeatures() : 0)});
          },
          "A copy of the stored values, out_features × slots per row (bf16 as int16 bits).")
      .def(
          "weight_meta",
          [](const NMLayer& l) {
            const Buffer& meta = l.weights().level(1).meta;
            return copyOf(meta, {static_cast<py::ssize_t>(meta.size())});
          },
          "A copy of the packed in-group offsets (uint8, 2 bits a slot, rows continuous).")
      .def(
          "bias",
          [](const NMLayer& l) -> py::object {
            if (!l.hasBias()) return py::none();
            py::array_t<float> out(static_cast<py::ssize_t>(l.bias().size()));
            std::copy(l.bias().begin(), l.bias().end(), out.mutable_data());
            return out;
          },
          "A float32 copy of the bias, or None.")
      .def(
          "weights", [](const NMLayer& l) { return l.weights().clone(); },
          "A copy of the 2:4 weights as a Tensor.")
      .def(
          "with_weight_dtype",
          [](const NMLayer& l, const std::string& dtype) {
            const DType type = parseDType(dtype);
            py::gil_scoped_release release;
            return l.withWeightType(type);
          },
          py::arg("dtype"), "The same layer with its weights converted to `dtype` (repacked).");
}

}  // namespace sparseflow::python
