// Python exception classes for sparseflow::Error codes, and the translator that raises them.
#include <array>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bindings.h"
#include "sparseflow/error.h"

namespace sparseflow::python {
namespace {

constexpr size_t kNumCodes = static_cast<size_t>(ErrorCode::kOutOfMemory) + 1;

/// One class per ErrorCode value (kOk unused), created once; the module keeps them alive.
std::array<PyObject*, kNumCodes> gClasses{};
PyObject* gBase = nullptr;

struct ClassSpec {
  ErrorCode code;
  const char* name;
  std::vector<PyObject*> builtins;  ///< the standard exceptions it also is
  const char* doc;
};

PyObject* makeClass(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("sparseflow.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));  // the module holds one reference; ours is never dropped
  return cls;
}

/// The message as a Python str. Messages quote file content; whatever bytes are not UTF-8 become
/// U+FFFD instead of a UnicodeDecodeError hiding the real error.
py::str messageText(const char* what) {
  const auto length = static_cast<Py_ssize_t>(std::strlen(what));
  PyObject* text = PyUnicode_DecodeUTF8(what, length, "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

void raiseAs(ErrorCode code, const char* what) {
  const auto index = static_cast<size_t>(code);
  PyObject* cls = index < kNumCodes && gClasses[index] != nullptr ? gClasses[index] : gBase;
  py::object instance = py::handle(cls)(messageText(what));
  instance.attr("code") = errorCodeName(code);
  PyErr_SetObject(cls, instance.ptr());
}

}  // namespace

void bindErrors(py::module_& m) {
  gBase = makeClass(m, "SparseFlowError", PyExc_Exception,
                    "Base class of every error sparseflow raises; `code` names the kind.");
  const std::vector<ClassSpec> specs = {
      {ErrorCode::kInvalidArgument,
       "InvalidArgument",
       {PyExc_ValueError},
       "A bad argument or input value (shape, format string, option)."},
      {ErrorCode::kParseError,
       "ParseError",
       {PyExc_ValueError},
       "Malformed text or file; the message names the file and line (or column)."},
      {ErrorCode::kIoError,
       "IoError",
       {PyExc_OSError},
       "A file could not be opened, read or written."},
      {ErrorCode::kNotSupported,
       "NotSupported",
       {PyExc_NotImplementedError},
       "A valid request that sparseflow does not support (yet)."},
      {ErrorCode::kOutOfRange,
       "OutOfRange",
       {PyExc_ValueError, PyExc_IndexError},
       "An index or coordinate outside its dimension."},
      {ErrorCode::kInvalidFormat,
       "InvalidFormat",
       {PyExc_ValueError},
       "Storage arrays that break their format's invariants."},
      {ErrorCode::kInternal,
       "InternalError",
       {PyExc_RuntimeError},
       "A broken internal invariant: a sparseflow bug; please report it."},
      {ErrorCode::kCompileError,
       "CompileError",
       {PyExc_RuntimeError},
       "The JIT compiler failed or is missing."},
      {ErrorCode::kOutOfMemory,
       "OutOfMemory",
       {PyExc_MemoryError},
       "An allocation failed or a size would overflow."},
  };
  for (const ClassSpec& spec : specs) {
    py::tuple bases(1 + spec.builtins.size());
    bases[0] = py::handle(gBase);
    for (size_t k = 0; k < spec.builtins.size(); ++k) bases[k + 1] = py::handle(spec.builtins[k]);
    gClasses[static_cast<size_t>(spec.code)] = makeClass(m, spec.name, bases.ptr(), spec.doc);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raiseAs(e.code(), e.what());
    } catch (const std::bad_alloc&) {
      // Still a MemoryError (OutOfMemory derives from it), now with what happened.
      raiseAs(ErrorCode::kOutOfMemory,
              "out of memory: an allocation inside a sparseflow call failed (std::bad_alloc); the "
              "input may be larger than this machine's memory");
    }
  });
  // For tests: raises the Error `code` with the raw bytes `message` (which need not be UTF-8).
  m.def(
      "_raise_error",
      [](int32_t code, const py::bytes& message) {
        throw Error(static_cast<ErrorCode>(code), std::string(message));
      },
      "Raises sparseflow's Error with this code and raw message bytes (tests only).");
  m.def(
      "_raise_bad_alloc", [] { throw std::bad_alloc(); },
      "Raises std::bad_alloc from C++ (tests only).");
  m.def(
      "error_code_name", [](int32_t code) { return errorCodeName(static_cast<ErrorCode>(code)); },
      "The stable name of an error code (\"invalid argument\"...).");
}

}  // namespace sparseflow::python
