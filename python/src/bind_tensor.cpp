// sparseflow.Tensor: properties, zero-copy construction from numpy arrays and views back.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/format.h"
#include "sparseflow/validate.h"

namespace sparseflow::python {
namespace {

bool isPlainDense(const Tensor& t) {
  return !t.isHybrid() && t.format().isDenseRowMajor();
}

/// The value type for an array: its own, or `requested` (which may reinterpret 2-byte integers
/// as bf16, the one float type numpy lacks).
DType valueType(const py::array& array, const std::string& requested, const char* what) {
  if (!requested.empty() && parseDType(requested) == DType::kBF16) {
    const char kind = array.dtype().kind();
    if ((kind == 'i' || kind == 'u') && array.itemsize() == 2) return DType::kBF16;
    invalid(std::string(what) + ": bf16 values are given as int16 or uint16 arrays of raw bits");
  }
  const DType own = dtypeOfNumpy(array.dtype(), what);
  if (!requested.empty() && parseDType(requested) != own) {
    invalid(std::string(what) + " is " + dtypeName(own) + " but dtype '" + requested +
            "' was asked for; cast it first (no copy is made here)");
  }
  if (!isFloatType(own)) {
    invalid(std::string(what) + " is " + dtypeName(own) +
            "; tensor values must be float32, float64, float16 or bf16");
  }
  return own;
}

/// The dense format of `rank` dimensions (parsed once per rank up to 8: kernels view their dense
/// arguments on every call).
Format denseFormat(int32_t rank) {
  constexpr int32_t kCached = 8;
  static const std::vector<Format> cached = [] {
    std::vector<Format> formats;
    for (int32_t r = 0; r <= kCached; ++r) formats.push_back(Format::parse("dense", r));
    return formats;
  }();
  return rank <= kCached ? cached[static_cast<size_t>(rank)] : Format::parse("dense", rank);
}

Tensor fromNumpy(const py::array& array, const std::string& dtype) {
  const DType type = valueType(array, dtype, "array");
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  Buffer values = viewOfArray(array, type, "array");
  const auto rank = static_cast<int32_t>(shape.size());
  return Tensor(std::move(shape), type, denseFormat(rank),
                std::vector<LevelStorage>(static_cast<size_t>(rank)), std::move(values));
}

/// An index array (or an empty buffer for None) checked against the width the format gives it.
Buffer indexBuffer(const py::object& object, int32_t width, const std::string& what) {
  if (object.is_none()) return Buffer();
  const auto array = py::cast<py::array>(object);
  const DType type = dtypeOfNumpy(array.dtype(), what.c_str());
  const DType want = width == 64 ? DType::kI64 : DType::kI32;
  if (type != want) {
    invalid(what + " is " + dtypeName(type) + " but the format's width says " + dtypeName(want) +
            " (add or drop @i64 in the format)");
  }
  return viewOfArray(array, type, what.c_str());
}

Tensor fromArrays(const std::vector<int64_t>& shape, const std::string& formatText,
                  const std::vector<py::tuple>& levels, const py::array& values,
                  const std::string& dtype) {
  const Format format = Format::parse(formatText, static_cast<int32_t>(shape.size()));
  if (format.isHybrid()) {
    throw Error(ErrorCode::kNotSupported, "from_arrays builds plain formats, not the hybrid '" +
                                              formatText + "': build each part and convert");
  }
  if (static_cast<int32_t>(levels.size()) != format.numLevels()) {
    invalid("format '" + formatText + "' has " + std::to_string(format.numLevels()) +
            " levels but arrays for " + std::to_string(levels.size()) + " were given");
  }
  std::vector<LevelStorage> storage(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    if (levels[l].size() != 3) invalid("each level takes a tuple (pos, crd, meta)");
    const std::string name = "level " + std::to_string(l);
    storage[l].pos = indexBuffer(levels[l][0], format.posWidth(), name + " pos");
    storage[l].crd = indexBuffer(levels[l][1], format.crdWidth(), name + " crd");
    if (!levels[l][2].is_none()) {
      const auto meta = py::cast<py::array>(levels[l][2]);
      if (dtypeOfNumpy(meta.dtype(), "meta") != DType::kU8) invalid(name + " meta must be uint8");
      storage[l].meta = viewOfArray(meta, DType::kU8, (name + " meta").c_str());
    }
  }
  const DType type = valueType(values, dtype, "values");
  Tensor tensor(shape, type, format, std::move(storage), viewOfArray(values, type, "values"));
  // Caller arrays are checked before anything reads them; the same contents again (a scipy
  // matrix passed to every call) cost a hash instead of a validation (docs/python.md).
  validateOnce(tensor);
  return tensor;
}

/// The dense values as numpy: a view when the tensor is dense row-major (bf16: an f32 copy).
py::array toNumpy(const Tensor& t) {
  if (isPlainDense(t) && t.dtype() != DType::kBF16) return arrayOfBuffer(t.values(), t.shape());
  ConvertOptions options;
  options.changeDType = t.dtype() == DType::kBF16;
  options.dtype = DType::kF32;
  Tensor dense;
  {
    py::gil_scoped_release release;
    dense = convert(t, Format::parse("dense", t.rank()), options);
  }
  return arrayOfBuffer(dense.values(), dense.shape());
}

py::dict levelArrays(const Tensor& t, int32_t level) {
  if (t.isHybrid()) invalid("a hybrid tensor's arrays are in its parts (Tensor.parts)");
  if (level < 0 || level >= t.format().numLevels()) {
    throw Error(ErrorCode::kOutOfRange, "level " + std::to_string(level) + " of a tensor with " +
                                            std::to_string(t.format().numLevels()) + " levels");
  }
  const LevelStorage& s = t.level(level);
  // None exactly for the arrays this level kind does not store; an array it stores may be empty
  // (a matrix without entries) and is then an empty array of its index type.
  const LevelArrays stored = storedArrays(t.format().level(level).type.kind);
  py::dict out;
  out["pos"] = stored.pos ? py::object(arrayOfBuffer(s.pos)) : py::object(py::none());
  out["crd"] = stored.crd ? py::object(arrayOfBuffer(s.crd)) : py::object(py::none());
  out["meta"] = stored.meta ? py::object(arrayOfBuffer(s.meta)) : py::object(py::none());
  return out;
}

}  // namespace

void bindTensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", R"doc(
A tensor with sparsity: shape, value type (dtype), format and storage arrays.

Arrays may view memory owned elsewhere (a numpy array, a torch tensor, a mapped .sft file); the
owner is kept alive as long as the tensor (or any array viewing it) lives.)doc")
      .def_property_readonly(
          "shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); },
          "Dimension sizes.")
      .def_property_readonly("rank", &Tensor::rank, "Number of dimensions.")
      .def_property_readonly("ndim", &Tensor::rank, "Number of dimensions (as numpy says).")
      .def_property_readonly(
          "dtype", [](const Tensor& t) { return std::string(dtypeName(t.dtype())); },
          "Value type: 'f32', 'f64', 'f16' or 'bf16'.")
      .def_property_readonly(
          "format", [](const Tensor& t) { return t.format().toString(); },
          "The format as text ('csr', 'bsr:4x4', '2:4', 'dense'...).")
      .def_property_readonly("num_stored", &Tensor::numStored,
                             "Stored values, padding and explicit zeros included.")
      .def_property_readonly("storage_bytes", &Tensor::storageBytes,
                             "Bytes of all index and value arrays.")
      .def_property_readonly("is_hybrid", &Tensor::isHybrid)
      .def_property_readonly("is_dense", &isPlainDense,
                             "True for a dense row-major tensor (zero-copy to numpy).")
      .def_property_readonly("num_levels", [](const Tensor& t) { return t.format().numLevels(); })
      .def_property_readonly(
          "parts", [](const Tensor& t) { return std::vector<Tensor>(t.parts()); },
          "The parts of a hybrid tensor (they share its arrays).")
      .def_property_readonly(
          "values", [](const Tensor& t) { return arrayOfBuffer(t.values()); },
          "The values array in storage order, a view (bf16: int16 raw bits).")
      .def("level_arrays", &levelArrays, py::arg("level"),
           "The arrays of one storage level as views: {'pos', 'crd', 'meta'}, None where the "
           "level stores none.")
      .def("to_numpy", &toNumpy,
           "Dense values as a numpy array: a view for dense tensors (the tensor stays alive while "
           "it lives), else a dense copy; bf16 comes out as a float32 copy.")
      .def(
          "__array__",
          [](const Tensor& t, py::object dtype, py::object /*copy*/) {
            py::array a = toNumpy(t);
            if (dtype.is_none()) return a;
            return py::cast<py::array>(a.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("clone", &Tensor::clone, "A deep copy that owns all its arrays.")
      .def("summary", &Tensor::summary, "One line: 'f32 1024x1024 csr, 32768 stored, 393.2 KB'.")
      .def(
          "validate",
          [](const Tensor& t) {
            const ValidationReport r = validate(t);
            py::dict out;
            out["stored"] = r.stored;
            out["nan"] = r.nanCount;
            out["inf"] = r.infCount;
            out["zeros"] = r.zeroCount;
            return out;
          },
          "Checks the arrays against the format (raises InvalidFormat); counts NaN, Inf, zeros.")
      .def("__repr__", [](const Tensor& t) { return "sparseflow.Tensor(" + t.summary() + ")"; });

  m.def("_from_numpy", &fromNumpy, py::arg("array"), py::arg("dtype") = "",
        "A dense tensor viewing a C-contiguous, aligned, writeable array (no copy).");
  m.def("_from_arrays", &fromArrays, py::arg("shape"), py::arg("format"), py::arg("levels"),
        py::arg("values"), py::arg("dtype") = "",
        "A tensor of `format` viewing per-level (pos, crd, meta) arrays and values (no copy); "
        "validated before it is returned.");
  m.def(
      "parse_format",
      [](const std::string& text, int32_t rank) { return Format::parse(text, rank).toString(); },
      py::arg("text"), py::arg("rank") = 2, "The canonical text of a format (raises if invalid).");
  m.def("format_presets", &formatPresetNames, "The preset format names.");
  m.def(
      "dtype_name",
      [](const std::string& name) { return std::string(dtypeName(parseDType(name))); },
      py::arg("name"), "The short name of a dtype ('float32' -> 'f32').");
}

}  // namespace sparseflow::python
