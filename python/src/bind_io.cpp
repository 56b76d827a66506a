// Files and conversions: read, write, convert (with its report), transpose.
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"

namespace sparseflow::python {
namespace {

FileKind fileKindOf(const std::string& name) {
  if (name.empty() || name == "auto") return FileKind::kAuto;
  for (int32_t k = 1; k <= static_cast<int32_t>(FileKind::kTriplet); ++k) {
    if (name == fileKindName(static_cast<FileKind>(k))) return static_cast<FileKind>(k);
  }
  throw Error(ErrorCode::kInvalidArgument,
              "unknown file kind '" + name +
                  "' (auto, matrix-market, harwell-boeing, frostt, dlmc, npy, sft, triplet)");
}

py::dict reportDict(const ConversionReport& r) {
  py::dict out;
  out["from"] = r.from;
  out["to"] = r.to;
  out["path"] = r.path;
  out["stored_before"] = r.storedBefore;
  out["stored_after"] = r.storedAfter;
  out["bytes_before"] = r.bytesBefore;
  out["bytes_after"] = r.bytesAfter;
  out["seconds"] = r.seconds;
  out["text"] = r.toString();
  return out;
}

}  // namespace

void bindIo(py::module_& m) {
  m.def(
      "_read",
      [](const std::string& path, const std::string& format, const std::string& dtype,
         const std::string& kind, bool verifyChecksum) {
        ReadOptions options;
        options.format = format;
        options.dtype = parseDType(dtype);
        options.kind = fileKindOf(kind);
        options.verifyChecksum = verifyChecksum;
        py::gil_scoped_release release;
        return read(path, options);
      },
      py::arg("path"), py::arg("format") = "", py::arg("dtype") = "f32", py::arg("kind") = "auto",
      py::arg("verify_checksum") = true);
  m.def(
      "_write",
      [](const std::string& path, const Tensor& tensor, const std::string& kind) {
        WriteOptions options;
        options.kind = fileKindOf(kind);
        py::gil_scoped_release release;
        write(path, tensor, options);
      },
      py::arg("path"), py::arg("tensor"), py::arg("kind") = "auto");
  m.def(
      "_convert",
      [](const Tensor& tensor, const std::string& format, const std::string& dtype,
         bool forceGeneral) {
        ConvertOptions options;
        options.changeDType = !dtype.empty();
        if (options.changeDType) options.dtype = parseDType(dtype);
        options.forceGeneral = forceGeneral;
        const Format target = Format::parse(format, tensor.rank());
        ConversionReport report;
        Tensor out;
        {
          py::gil_scoped_release release;
          out = convert(tensor, target, options, &report);
        }
        return py::make_tuple(std::move(out), reportDict(report));
      },
      py::arg("tensor"), py::arg("format"), py::arg("dtype") = "",
      py::arg("force_general") = false);
  m.def(
      "_transpose",
      [](const Tensor& tensor, const std::string& format) {
        const Format target = Format::parse(format, tensor.rank());
        py::gil_scoped_release release;
        return transpose(tensor, target);
      },
      py::arg("tensor"), py::arg("format"));
}

}  // namespace sparseflow::python
