// Zero-copy bridges between numpy arrays and sparseflow Buffers (see arrays.h).
#include "arrays.h"

#include <memory>
#include <string>
#include <utility>

#include "sparseflow/error.h"

namespace sparseflow::python {
namespace {

bool interpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

/// Holds a reference to `object` for as long as the returned pointer (or a copy) lives. The last
/// owner may be any thread, with or without the GIL (C++ code runs with the GIL released), so
/// the deleter takes it; once the interpreter is gone the reference is dropped without a word.
std::shared_ptr<void> holdReference(const py::object& object) {
  PyObject* raw = object.inc_ref().ptr();
  return std::shared_ptr<void>(raw, [](void* p) {
    if (!Py_IsInitialized() || (!PyGILState_Check() && interpreterFinalizing())) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}

}  // namespace

DType dtypeOfNumpy(const py::dtype& dtype, const char* what) {
  if (!dtype.attr("isnative").cast<bool>()) {
    invalid(std::string(what) + " has a non-native byte order; use .astype(its native dtype)");
  }
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 4) return DType::kF32;
  if (kind == 'f' && size == 8) return DType::kF64;
  if (kind == 'f' && size == 2) return DType::kF16;
  if (kind == 'i' && size == 4) return DType::kI32;
  if (kind == 'i' && size == 8) return DType::kI64;
  if (kind == 'u' && size == 1) return DType::kU8;
  invalid(std::string(what) + " has dtype " + py::cast<std::string>(dtype.attr("name")) +
          "; sparseflow takes float32, float64, float16 values and int32, int64 indices");
}

py::dtype numpyDtypeOf(DType type) {
  switch (type) {
    case DType::kF32: return py::dtype("float32");
    case DType::kF64: return py::dtype("float64");
    case DType::kF16: return py::dtype("float16");
    case DType::kBF16: return py::dtype("int16");
    case DType::kI32: return py::dtype("int32");
    case DType::kI64: return py::dtype("int64");
    case DType::kU8: return py::dtype("uint8");
  }
  throw Error(ErrorCode::kInternal, "unknown dtype " + std::to_string(static_cast<int>(type)));
}

Buffer viewOfArray(const py::array& array, DType type, const char* what) {
  using Api = py::detail::npy_api;
  const int flags = array.flags();
  if (!(flags & Api::NPY_ARRAY_C_CONTIGUOUS_) || !(flags & Api::NPY_ARRAY_ALIGNED_) ||
      !(flags & Api::NPY_ARRAY_WRITEABLE_)) {
    invalid(std::string(what) +
            " must be a C-contiguous, aligned, writeable array to be viewed without a copy");
  }
  if (array.itemsize() != dtypeSize(type)) {
    invalid(std::string(what) + " has " + std::to_string(array.itemsize()) +
            "-byte elements, but " + dtypeName(type) + " has " + std::to_string(dtypeSize(type)));
  }
  // Checked writeable above; data() is const only because the handle is.
  return Buffer::view(type, const_cast<void*>(array.data()), static_cast<int64_t>(array.size()),
                      holdReference(array));
}

namespace {

/// What a numpy view of a Buffer holds: the memory, and an external-writer token, since Python
/// code may write through the view at any time (caches check such buffers by content until the
/// view is gone; its release counts as a write).
struct ViewOwner {
  Buffer buffer;
  std::shared_ptr<void> writer;
};

}  // namespace

py::array arrayOfBuffer(const Buffer& buffer, const std::vector<int64_t>& shape) {
  auto* owner = new ViewOwner{buffer, buffer.openExternalWriter()};
  py::capsule base(owner, [](void* p) { delete static_cast<ViewOwner*>(p); });
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  // The const data(): the view is not a write by itself; the token accounts for later ones.
  void* data = const_cast<void*>(std::as_const(owner->buffer).data());
  return py::array(numpyDtypeOf(buffer.dtype()), dims, {}, data, base);
}

py::array arrayOfBuffer(const Buffer& buffer) {
  return arrayOfBuffer(buffer, std::vector<int64_t>{buffer.size()});
}

}  // namespace sparseflow::python
